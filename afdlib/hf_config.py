"""Read the MoE fields of a Hugging Face ``config.json`` (any of the common families).

Field names differ across families; each quantity is looked up along a list of candidate
keys, in the top-level config and in a nested ``text_config`` (Llama 4, Qwen3.5) or
``ffn_config`` (DBRX). A missing quantity raises :class:`AfdError` naming the keys tried.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .catalog import Model, _check_model
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


def _first(cfg: dict, quantity: str, path: Path) -> int:
    for key in _KEYS[quantity]:
        v = _get(cfg, key)
        if isinstance(v, list):  # ERNIE-VL style [text, vision]: the text value first
            v = v[0] if v else None
        if v is not None:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v:
                raise AfdError(f"{path}: field '{key}' must be an integer, got {v!r}")
            return int(v)
    raise AfdError(f"{path}: no field for {quantity} (looked for {', '.join(_KEYS[quantity])}); "
                   "is this a mixture-of-experts config?")


def _dense_layers(cfg: dict, num_layers: int) -> int:
    if "first_k_dense_replace" in cfg:  # DeepSeek, Kimi, GLM
        return int(cfg["first_k_dense_replace"])
    if "moe_layer_start_index" in cfg:  # ERNIE
        v = cfg["moe_layer_start_index"]
        return int(v[0] if isinstance(v, list) else v)
    if cfg.get("mlp_only_layers"):  # Qwen MoE
        return len(cfg["mlp_only_layers"])
    step = cfg.get("interleave_moe_layer_step") or cfg.get("decoder_sparse_step") or 1
    return num_layers - num_layers // int(step)


def _shared_experts(cfg: dict) -> int:
    for key in ("n_shared_experts", "num_shared_experts", "moe_num_shared_experts"):
        if cfg.get(key) is not None:
            return int(cfg[key])
    if cfg.get("shared_expert_intermediate_size"):
        return 1
    if cfg.get("intermediate_size_mlp") and cfg.get("num_local_experts"):  # Llama 4 shared expert
        return 1
    return 0


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
    dense = _dense_layers(cfg, values["num_layers"])
    name = slug or str(cfg.get("_name_or_path") or path.parent.name or path.stem)
    m = Model(slug=name.lower().replace("/", "--"), name=name, dense_layers=dense,
              moe_layers=values["num_layers"] - dense, shared_experts=_shared_experts(cfg),
              profile="reference", sources={k: str(path) for k in values}, **values)
    _check_model(m)
    return m
