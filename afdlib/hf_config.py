"""Read a :class:`Model` from a Hugging Face ``config.json`` (any of the common MoE families).

Field names differ across families; each quantity is looked up along a list of candidate
keys, in the top-level config and in a nested ``text_config`` (Llama 4, Qwen3.5) or
``ffn_config`` / ``attn_config`` (DBRX). A missing MoE quantity raises :class:`AfdError` naming the
keys tried; the rest (attention, vocabulary, dense and shared FFN sizes, MTP layers) is filled where
the config gives it. A value of the wrong type raises :class:`AfdError` naming its field.

The attention family is MLA where the config has ``kv_lora_rank``, else GQA when there are fewer
key/value heads than query heads, else MHA (Step-3's MFA has no field that identifies it).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .specs import Attention, Model, check_model
from .errors import AfdError
from .files import read_json

# quantity -> candidate keys, in order (dotted = nested)
_KEYS = {
    "hidden_size": ("hidden_size", "d_model", "n_embd"),
    "num_layers": ("num_hidden_layers", "n_layers", "num_layers"),
    "routed_experts": ("n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts",
                       "ffn_config.moe_num_experts"),
    "experts_per_token": ("num_experts_per_tok", "moe_k", "experts_per_token", "moe_top_k",
                          "ffn_config.moe_top_k"),
    "moe_intermediate_size": ("moe_intermediate_size", "ffn_config.ffn_hidden_size",
                              "intermediate_size"),
}


def _get(cfg: dict, dotted: str) -> Any:
    cur: Any = cfg
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _int(cfg: dict, keys: tuple[str, ...], path: Path) -> int | None:
    """The first of ``keys`` present (and not null) as an integer; None if none is."""
    for key in keys:
        v = _get(cfg, key)
        if isinstance(v, list):  # ERNIE-VL style [text, vision]: the text value first
            v = v[0] if v else None
        if v is not None:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v:
                raise AfdError(f"{path}: field '{key}' must be an integer, got {v!r}")
            return int(v)
    return None


def _first(cfg: dict, quantity: str, path: Path) -> int:
    v = _int(cfg, _KEYS[quantity], path)
    if v is None:
        raise AfdError(f"{path}: no field for {quantity} (looked for {', '.join(_KEYS[quantity])}); "
                       "is this a mixture-of-experts config?")
    return v


def _list(cfg: dict, key: str, path: Path) -> list:
    v = cfg.get(key)
    if v is not None and not isinstance(v, list):
        raise AfdError(f"{path}: field '{key}' must be a list, got {v!r}")
    return v or []


def _dense_layers(cfg: dict, num_layers: int, path: Path) -> int:
    if "first_k_dense_replace" in cfg:  # DeepSeek, Kimi, GLM
        return _int(cfg, ("first_k_dense_replace",), path) or 0
    if "moe_layer_start_index" in cfg:  # ERNIE
        return _int(cfg, ("moe_layer_start_index",), path) or 0
    if cfg.get("mlp_only_layers"):  # Qwen MoE
        return len(_list(cfg, "mlp_only_layers", path))
    step = _int(cfg, ("interleave_moe_layer_step", "decoder_sparse_step"), path) or 1
    return num_layers - num_layers // step


def _shared_experts(cfg: dict, path: Path) -> int:
    n = _int(cfg, ("n_shared_experts", "num_shared_experts", "moe_num_shared_experts"), path)
    if n is not None:
        return n
    if cfg.get("shared_expert_intermediate_size"):
        return 1
    if cfg.get("intermediate_size_mlp") and cfg.get("num_local_experts"):  # Llama 4 shared expert
        return 1
    return 0


def _local(cfg: dict, num_layers: int, path: Path) -> tuple[int, int]:
    """(window, layers) of sliding-window or chunked attention; (0, 0) where every layer is global."""
    types = _list(cfg, "layer_types", path)
    window = _int(cfg, ("sliding_window",), path)
    if window and cfg.get("use_sliding_window") is not False:  # Qwen configs carry a disabled window
        return window, (types.count("sliding_attention") if types else num_layers)
    chunk = _int(cfg, ("attention_chunk_size",), path)
    if chunk:  # Llama 4: the RoPE layers are chunked, the NoPE ones (every 4th by default) global
        if types:
            return chunk, types.count("chunked_attention")
        rope = _list(cfg, "no_rope_layers", path)
        if rope:
            return chunk, sum(1 for x in rope[:num_layers] if x)
        every = _int(cfg, ("no_rope_layer_interval",), path) or 4
        return chunk, num_layers - num_layers // every
    return 0, 0


def _attention(cfg: dict, hidden: int, num_layers: int, path: Path) -> Attention | None:
    """The attention block, or None where the config gives no head count."""
    heads = _int(cfg, ("num_attention_heads", "n_heads", "n_head"), path)
    if heads is None:
        return None
    if heads < 1:
        raise AfdError(f"{path}: field 'num_attention_heads' must be positive, got {heads}")
    kv_heads = _int(cfg, ("num_key_value_heads", "attn_config.kv_n_heads", "num_kv_heads"), path)
    kv_heads = heads if kv_heads is None else kv_heads
    window, local = _local(cfg, num_layers, path)
    kv_lora = _int(cfg, ("kv_lora_rank",), path)
    if kv_lora:  # MLA
        nope, rope = (_int(cfg, (k,), path) or 0 for k in ("qk_nope_head_dim", "qk_rope_head_dim"))
        return Attention("mla", heads, kv_heads, nope + rope, v_head_dim=_int(cfg, ("v_head_dim",), path) or 0,
                         q_lora_rank=_int(cfg, ("q_lora_rank",), path) or 0, kv_lora_rank=kv_lora,
                         qk_rope_head_dim=rope, local_window=window, local_layers=local)
    head_dim = _int(cfg, ("head_dim",), path)
    if head_dim is None:
        if hidden % heads:
            raise AfdError(f"{path}: no head_dim, and hidden_size {hidden} is not a multiple of "
                           f"num_attention_heads {heads}")
        head_dim = hidden // heads
    return Attention("gqa" if kv_heads < heads else "mha", heads, kv_heads, head_dim,
                     v_head_dim=_int(cfg, ("v_head_dim",), path) or 0, local_window=window, local_layers=local)


def model_from_hf_config(path: str | Path, slug: str | None = None) -> Model:
    """A :class:`Model` from a Hugging Face ``config.json`` file."""
    path = Path(path)
    raw = read_json(path)
    if not isinstance(raw, dict):
        raise AfdError(f"{path}: expected a JSON object")
    cfg = dict(raw)
    if isinstance(raw.get("text_config"), dict):  # multimodal wrappers: the language model
        cfg = {**raw, **raw["text_config"]}
    values = {q: _first(cfg, q, path) for q in _KEYS}
    dense = _dense_layers(cfg, values["num_layers"], path)
    extra = {
        "vocab_size": _int(cfg, ("vocab_size",), path),
        "mtp_layers": _int(cfg, ("num_nextn_predict_layers",), path),
        "shared_expert_intermediate_size": _int(cfg, ("shared_expert_intermediate_size",), path),
        # the dense layers' FFN (Llama 4 names it intermediate_size_mlp; its intermediate_size is the expert's)
        "dense_intermediate_size": _int(cfg, ("intermediate_size_mlp", "intermediate_size"), path) if dense else None,
    }
    extra = {k: v for k, v in extra.items() if v is not None}
    attention = _attention(cfg, values["hidden_size"], values["num_layers"], path)
    sources = {k: str(path) for k in [*values, *extra] + (["attention"] if attention else [])}
    name = slug or str(cfg.get("_name_or_path") or path.parent.name or path.stem)
    m = Model(slug=name.lower().replace("/", "--"), name=name, dense_layers=dense,
              moe_layers=values["num_layers"] - dense, shared_experts=_shared_experts(cfg, path),
              attention=attention, profile="reference", sources=sources, **values, **extra)
    check_model(m)
    return m
