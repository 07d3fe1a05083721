"""The token mixers, latent MoE, weight format and name of a Hugging Face ``config.json``.

:mod:`afdlib.inputs.hf_config` reads the MoE part; this module reads what makes a layer's token
mixer (:mod:`afdlib.inputs.layers`), as each family's own code reads it:

* ``hybrid_override_pattern`` / ``layers_block_type`` (Nemotron-H, Nemotron-3): ``M`` Mamba-2
  (``mamba_num_heads``, ``mamba_head_dim``, ``ssm_state_size``, ``n_groups``, ``conv_kernel``), ``*``
  attention, ``E`` / ``-`` blocks without a mixer;
* ``layer_types`` with ``linear_attention``, or without it ``full_attention_interval`` k (every k-th
  layer full, as Qwen3-Next's code expands it) (Qwen3-Next, Qwen3.5: Gated DeltaNet, ``linear_num_key_heads``,
  ``linear_num_value_heads``, ``linear_key_head_dim``, ``linear_value_head_dim``, ``linear_conv_kernel_dim``;
  the full layers' ``attn_output_gate`` doubles their query projection);
* ``linear_attn_config`` (Kimi Linear, Kimi-K3: Kimi Delta Attention on ``kda_layers``, MLA on
  ``full_attn_layers``, both 1-based);
* ``hybrid_layer_pattern`` (MiMo-V2: 1 sliding window with its own ``swa_*`` heads, 0 full);
* ``layer_types`` with ``sliding_attention`` where the full layers have their own heads (Gemma-4:
  ``num_global_key_value_heads``, ``global_head_dim``, ``attention_k_eq_v``);
* ``index_topk`` beside MLA (DeepSeek-V3.2, GLM-5: sparse attention, an indexer of ``index_n_heads``
  heads of ``index_head_dim`` selecting the ``index_topk`` entries each query attends to);
* ``compress_ratios`` (DeepSeek-V4: per layer, 0 a sliding window alone, r one compressed entry per r
  tokens beside the window; the layers with an indexer, ``index_topk``, ``index_n_heads``,
  ``index_head_dim``, are the ratio-4 ones, as its code builds them; keys and values one 512-wide head;
  ``o_lora_rank`` / ``o_groups`` its output projection).

Other configs keep the one :class:`~afdlib.inputs.specs.Attention` (sliding or chunked layers as
its ``local_layers``). A per-layer field this module does not know (:func:`refuse_unknown_layout`)
is refused naming it, never ignored; so is a config whose fields describe linear, Mamba or interleaved
layers (``linear_*``, ``mamba_*``, ``ssm_*``, ``attn_layer_period``, ``attn_type_list``, ...) that no
layout above places (:func:`refuse_unplaced_mixers`: read as all full attention it would be wrong
without a word). Recurrent states are kept at the config's
``mamba_ssm_dtype`` / ``mamba_ssm_cache_dtype``, else FP32 (the type those fields give in the
published files).

Latent MoE: ``moe_latent_size`` (Nemotron-3) or ``routed_expert_hidden_size`` (Kimi-K3); the FFNs'
matrix count from the activation (``mlp_hidden_act`` / ``hidden_act`` ``relu2``: 2, gated: 3).
Weight format (:func:`declared_weights`): NVFP4, MXFP4 or FP8 from ``quantization_config`` (or
DeepSeek-V4's ``expert_dtype``). Name (:func:`config_name`): the config's own ``_name_or_path`` or
``name``, else the file's name (``org--model_config.json`` as aiconfigurator stores them: org/model),
else the folder of a Hugging Face cache (``models--org--model``), else the folder when it holds the
model (weights or tokenizer beside the config), else ``model_type`` and sizes; never the name of a
folder that merely collects configs.
"""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from afdlib.errors import AfdError
from afdlib.inputs import checks
from afdlib.inputs.layers import Mixer
from afdlib.inputs.specs import Attention

# per-layer fields (lists or strings) that this module or hf_config reads
KNOWN_LAYOUT = {"hybrid_override_pattern", "layers_block_type", "layer_types", "mlp_layer_types", "moe_layer_freq",
                "moe_layers", "moe_layers_enum", "mlp_only_layers", "hybrid_layer_pattern", "compress_ratios",
                "no_rope_layers", "mtp_hybrid_override_pattern", "full_attn_layers", "kda_layers",
                "swa_layers"}
_LAYOUT_NAME = re.compile(r"(pattern|layer_types|_layers|layer_indices|layer_ids|_ratios)$")
_GATED = ("silu", "swiglu", "swigluoai", "gelu", "gelu_pytorch_tanh", "gelu_new", "situ", "geglu", "swish")
_FLOAT_DTYPES = {"float32": "fp32", "fp32": "fp32", "bfloat16": "bf16", "bf16": "bf16", "float16": "fp16"}
_MODEL_FILES = ("*.safetensors", "*.safetensors.index.json", "tokenizer*.json", "generation_config.json",
                "*.bin", "*.gguf")


def _int(cfg: dict, key: str, path: Path, default: int | None = None, lo: int = 0) -> int:
    v = cfg.get(key)
    if v is None:
        if default is None:
            raise AfdError(f"{path}: field '{key}' is needed for this layout and missing")
        return default
    return checks.integer(v, f"field '{key}'", str(path), lo=lo, integral_float=True)


def refuse_unknown_layout(cfg: dict, path: Path) -> None:
    """Refuse a per-layer field (a list or pattern string named like one) that no reader handles."""
    for key, v in cfg.items():
        if key in KNOWN_LAYOUT or not _LAYOUT_NAME.search(key) or not isinstance(v, (list, str)):
            continue
        if isinstance(v, list) and not v:
            continue
        raise AfdError(f"{path}: field '{key}' describes the layers in a way this reader does not handle")
    if (cfg.get("num_kv_shared_layers") or 0) > 0:
        raise AfdError(f"{path}: field 'num_kv_shared_layers' (layers sharing another layer's cache) is not handled")


def state_dtype(cfg: dict) -> str:
    v = cfg.get("mamba_ssm_cache_dtype") or cfg.get("mamba_ssm_dtype") or "float32"
    return _FLOAT_DTYPES.get(str(v).lower(), "fp32")


def ffn_matrices(cfg: dict, path: Path) -> int:
    """3 for a gated FFN (SwiGLU, GeGLU, ...), 2 for relu2; refused for an activation not known."""
    act = cfg.get("mlp_hidden_act") or cfg.get("hidden_act") or cfg.get("hidden_activation") or "silu"
    if act == "relu2":
        return 2
    if act in _GATED:
        return 3
    raise AfdError(f"{path}: field 'hidden_act' is {act!r}: its FFN matrix count is not known "
                   f"(known: relu2, {', '.join(_GATED)})")


def latent_size(cfg: dict, path: Path) -> int:
    for key in ("moe_latent_size", "routed_expert_hidden_size"):
        if cfg.get(key) is not None:
            return _int(cfg, key, path, lo=1)
    return 0


def _one_of_layers(kinds: list[str], n: int, field: str, path: Path) -> list[str]:
    if len(kinds) != n:
        raise AfdError(f"{path}: field '{field}' gives {len(kinds)} layers for {n}")
    return kinds


def _grouped(kinds: list[str], build: dict) -> tuple[Mixer, ...]:
    """One :class:`Mixer` per kind key, in the order of first appearance."""
    out = []
    for key in dict.fromkeys(kinds):
        out.append(build[key](kinds.count(key)))
    return tuple(out)


def _linear(cfg: dict, path: Path, layers: int) -> Mixer:
    return Mixer("linear", layers, heads=_int(cfg, "linear_num_value_heads", path, lo=1),
                 key_heads=_int(cfg, "linear_num_key_heads", path, lo=1),
                 head_dim=_int(cfg, "linear_value_head_dim", path, lo=1),
                 key_head_dim=_int(cfg, "linear_key_head_dim", path, lo=1),
                 conv_kernel=_int(cfg, "linear_conv_kernel_dim", path, 4), state_dtype=state_dtype(cfg))


def _mamba(cfg: dict, path: Path, layers: int, hidden: int) -> Mixer:
    heads = _int(cfg, "mamba_num_heads", path, lo=1)   # the width is heads x head_dim ('expand' unused, as in
    head_dim = _int(cfg, "mamba_head_dim", path, lo=1)  # Nemotron-H's code: Nemotron-3-Nano's disagrees with it)
    return Mixer("mamba", layers, heads=heads, head_dim=head_dim, state_size=_int(cfg, "ssm_state_size", path, lo=1),
                 groups=_int(cfg, "n_groups", path, 1, lo=1), conv_kernel=_int(cfg, "conv_kernel", path, 4),
                 state_dtype=state_dtype(cfg))


def _gate(cfg: dict, att: Attention, hidden: int) -> int:
    """Extra projection weights of a gated full attention: ``attn_output_gate`` (Qwen3-Next: the query
    projection doubled, one gate per query element) or ``mla_use_output_gate`` (Kimi-K3: a sigmoid gate
    on each head's value output, hidden x heads x value width)."""
    if cfg.get("attn_output_gate"):
        return hidden * att.num_heads * att.head_dim
    if cfg.get("mla_use_output_gate"):
        return hidden * att.num_heads * (att.v_head_dim or att.head_dim)
    return 0


def mixers(cfg: dict, path: Path, n: int, mtp: int, hidden: int, att: Attention | None,
           blocks: tuple | None) -> tuple[tuple[Mixer, ...], Attention | None]:
    """(the layers by mixer, the full attention) of a config; ``()`` where every layer is ``att``'s
    (then ``att`` stands as read). ``blocks``: (field, kinds) of a Nemotron-H layout (hf_config's reading)."""
    refuse_unknown_layout(cfg, path)
    full = lambda k: Mixer("attention", k, att, gate_params=_gate(cfg, att, hidden))  # noqa: E731
    if blocks is not None:
        pattern = cfg[blocks[0]]
        names = list(pattern) if isinstance(pattern, str) else pattern
        kinds = ["mamba" if b in ("M", "mamba") else "attention" if b in ("*", "attention") else "none" for b in names]
        if "attention" in kinds and att is None:
            raise AfdError(f"{path}: attention blocks but no 'num_attention_heads'")
        return _grouped(kinds, {"mamba": lambda k: _mamba(cfg, path, k, hidden), "attention": full,
                                "linear": lambda k: _linear(cfg, path, k), "none": lambda k: Mixer("none", k)}), att
    types = cfg.get("layer_types")
    every = cfg.get("full_attention_interval")
    if every is not None:   # Qwen3-Next's config: every k-th layer full, as its code expands it
        every = _int(cfg, "full_attention_interval", path, lo=1)
        expanded = ["full_attention" if (i + 1) % every == 0 else "linear_attention" for i in range(n)]
        if isinstance(types, list) and "linear_attention" in types and types[:n] != expanded:
            raise AfdError(f"{path}: fields 'layer_types' and 'full_attention_interval' ({every}) place the "
                           "full-attention layers differently")
        types = expanded if types is None else types
    if isinstance(types, list) and "linear_attention" in types:  # linear beside full attention (Qwen3-Next, 3.5)
        kinds = _one_of_layers(["linear" if t == "linear_attention" else t for t in types[:n]], n, "layer_types", path)
        bad = set(kinds) - {"linear", "full_attention"}
        if bad:
            raise AfdError(f"{path}: field 'layer_types' has {sorted(bad)[0]!r} beside linear_attention, not handled")
        return _grouped(kinds, {"linear": lambda k: _linear(cfg, path, k), "full_attention": full}), att
    lin = cfg.get("linear_attn_config")
    if isinstance(lin, dict):
        return _kimi_linear(cfg, lin, path, n, hidden, att), att
    if cfg.get("hybrid_layer_pattern") is not None:
        return _mimo(cfg, path, n, hidden, att)
    if cfg.get("compress_ratios") is not None:
        return _compressed(cfg, path, n, mtp, att)
    if isinstance(types, list) and "sliding_attention" in types and cfg.get("global_head_dim"):
        return _gemma(cfg, path, n, att)
    if cfg.get("index_topk") and att is not None and att.family == "mla":   # DeepSeek-V3.2, GLM-5: DSA
        return _dsa(cfg, path, n, mtp, att), att
    refuse_unplaced_mixers(cfg, path)
    return (), att


def _dsa(cfg: dict, path: Path, n: int, mtp: int, att: Attention) -> tuple[Mixer, ...]:
    """DeepSeek sparse attention: an indexer of ``index_n_heads`` x ``index_head_dim`` selects the
    ``index_topk`` entries each query attends to. GLM-5.2's ``indexer_types`` marks layers ``shared``
    that reuse the selection of the last ``full`` one: no indexer, no index keys of their own."""
    topk = _int(cfg, "index_topk", path, lo=1)
    full = Mixer("compressed", n, att, compress_ratio=1, index_topk=topk, index_heads=_int(cfg, "index_n_heads", path, lo=1),
                 index_head_dim=_int(cfg, "index_head_dim", path, lo=1))
    types = cfg.get("indexer_types")
    if types is None:
        return (full,)
    if not isinstance(types, list) or len(types) not in (n, n + mtp) or any(t not in ("full", "shared") for t in types) \
            or types[0] != "full":
        raise AfdError(f"{path}: field 'indexer_types' must list 'full' or 'shared' for each of the {n} layers, "
                       "the first 'full'")
    k = types[:n].count("full")
    shared = Mixer("compressed", n - k, att, compress_ratio=1, index_topk=topk)
    return tuple(m for m in (replace(full, layers=k), shared) if m.layers)


# fields that describe layers other than full attention, or where they sit: read as all-full-attention,
# such a config would be modelled wrongly without a word (Jamba, MiniMax-01, a hybrid whose layout field
# is missing), so it is refused, naming the field
_HYBRID_FIELDS = ("attn_layer_period", "attn_layer_offset", "attn_type_list", "full_attention_interval",
                  "linear_attn_config", "layer_group_size")
_HYBRID_PREFIXES = ("linear_num_", "linear_key_", "linear_value_", "linear_conv_", "mamba_", "ssm_", "kda_")


def _all_softmax(cfg: dict, key: str) -> bool:
    """MiniMax's ``attn_type_list`` that places softmax (full) attention on every layer: one entry per
    layer, each 1 (MiniMax-Text-01's convention: 0 lightning attention, 1 softmax; MiniMax-M2's
    published configs list 1 for all their layers). Such a field places nothing but full attention."""
    if key != "attn_type_list":          # looked up only when it is: every other field stays unread
        return False
    types, n = cfg.get(key), cfg.get("num_hidden_layers")
    return (isinstance(types, list) and isinstance(types, list) and isinstance(n, int) and len(types) == n
            and all(t == 1 and not isinstance(t, bool) for t in types))


def refuse_unplaced_mixers(cfg: dict, path: Path) -> None:
    """Refuse a config whose fields describe linear-attention, Mamba or interleaved layers that no
    layout this reader understands places (the model would otherwise be read as all full attention);
    an ``attn_type_list`` of full attention only is read as what it says (:func:`_all_softmax`)."""
    for key in cfg:
        if _all_softmax(cfg, key):
            continue
        if key in _HYBRID_FIELDS or key.startswith(_HYBRID_PREFIXES):
            raise AfdError(f"{path}: field '{key}' describes layers other than full attention, but no layout "
                           "this reader handles says which layers they are")


def _kimi_linear(cfg: dict, lin: dict, path: Path, n: int, hidden: int, att: Attention | None) -> tuple[Mixer, ...]:
    full = lin.get("full_attn_layers") or []
    kda = lin.get("kda_layers") or []
    if sorted([*full, *kda]) != list(range(1, n + 1)):
        raise AfdError(f"{path}: fields 'linear_attn_config.full_attn_layers' and 'kda_layers' must cover layers "
                       f"1..{n} once each")
    heads, hd = _int(lin, "num_heads", path, lo=1), _int(lin, "head_dim", path, lo=1)
    gate = hidden * heads * hd if lin.get("use_full_rank_gate") else 0
    out = [Mixer("linear", len(kda), heads=heads, key_heads=heads, head_dim=hd, key_head_dim=hd,
                 conv_kernel=_int(lin, "short_conv_kernel_size", path, 4), gate_params=gate,
                 state_dtype=state_dtype(cfg))] if kda else []
    if full:
        out.append(Mixer("attention", len(full), att, gate_params=_gate(cfg, att, hidden)))
    return tuple(out)


def _mimo(cfg: dict, path: Path, n: int, hidden: int, att: Attention | None) -> tuple[tuple[Mixer, ...], Attention]:
    pattern = cfg["hybrid_layer_pattern"]
    if not isinstance(pattern, list) or any(x not in (0, 1) for x in pattern):
        raise AfdError(f"{path}: field 'hybrid_layer_pattern' must be a list of 0 (full) and 1 (sliding window)")
    _one_of_layers(pattern, n, "hybrid_layer_pattern", path)
    heads = _int(cfg, "swa_num_attention_heads", path, att.num_heads, lo=1)
    kv = _int(cfg, "swa_num_key_value_heads", path, att.num_kv_heads, lo=1)
    hd = _int(cfg, "swa_head_dim", path, att.head_dim, lo=1)
    swa = Attention(att.family if kv < heads else "mha", heads, kv, hd, v_head_dim=_int(cfg, "swa_v_head_dim", path,
                                                                                        att.v_head_dim))
    window = _int(cfg, "sliding_window", path, lo=1)
    att = Attention(att.family, att.num_heads, att.num_kv_heads, att.head_dim, v_head_dim=att.v_head_dim)  # no window
    kinds = ["window" if x else "attention" for x in pattern]
    return _grouped(kinds, {"window": lambda k: Mixer("window", k, swa, window=window),
                            "attention": lambda k: Mixer("attention", k, att)}), att


def _compressed(cfg: dict, path: Path, n: int, mtp: int, att: Attention | None) -> tuple[tuple[Mixer, ...], Attention]:
    ratios = cfg["compress_ratios"]
    if not isinstance(ratios, list) or len(ratios) not in (n, n + mtp):
        raise AfdError(f"{path}: field 'compress_ratios' must list one ratio per layer ({n})")
    ratios = [checks.integer(r, "field 'compress_ratios'", str(path), lo=0) for r in ratios[:n]]
    window = _int(cfg, "sliding_window", path, lo=1)
    att = Attention(att.family, att.num_heads, att.num_kv_heads, att.head_dim,
                    q_lora_rank=_int(cfg, "q_lora_rank", path, 0), qk_rope_head_dim=_int(cfg, "qk_rope_head_dim", path, 0))
    o = {"o_lora_rank": _int(cfg, "o_lora_rank", path, 0), "o_groups": _int(cfg, "o_groups", path, 1)}
    index = {"index_topk": _int(cfg, "index_topk", path, 0), "index_heads": _int(cfg, "index_n_heads", path, 0),
             "index_head_dim": _int(cfg, "index_head_dim", path, 0)}
    out = []
    for r in dict.fromkeys(ratios):
        kind, extra = ("window", {}) if r == 0 else ("compressed", index if r == 4 else {})
        out.append(Mixer(kind, ratios.count(r), att, window=window, compress_ratio=r, shared_kv=True, **o, **extra))
    return tuple(out), att


def _gemma(cfg: dict, path: Path, n: int, att: Attention | None) -> tuple[tuple[Mixer, ...], Attention]:
    kinds = _one_of_layers(list(cfg["layer_types"][:n]), n, "layer_types", path)
    bad = set(kinds) - {"sliding_attention", "full_attention"}
    if bad:
        raise AfdError(f"{path}: field 'layer_types' has {sorted(bad)[0]!r}, not handled")
    local = Attention(att.family, att.num_heads, att.num_kv_heads, att.head_dim, v_head_dim=att.v_head_dim)
    kv = _int(cfg, "num_global_key_value_heads", path, att.num_kv_heads, lo=1)
    glob = Attention("gqa" if kv < att.num_heads else "mha", att.num_heads, kv, _int(cfg, "global_head_dim", path))
    shared = bool(cfg.get("attention_k_eq_v"))
    window = _int(cfg, "sliding_window", path, lo=1)
    return _grouped(kinds, {"sliding_attention": lambda k: Mixer("window", k, local, window=window),
                            "full_attention": lambda k: Mixer("attention", k, glob, shared_kv=shared)}), glob


# ----------------------------------------------------------------------------- weight format, name

def declared_weights(cfg: dict, path: Path) -> str | None:
    """``nvfp4``, ``mxfp4`` or ``fp8`` where ``quantization_config`` (or DeepSeek-V4's
    ``expert_dtype``) declares the experts' weights so, else None (the default applies).

    NVFP4: NVIDIA Model Optimizer's ``quant_algo: NVFP4``, compressed-tensors' ``nvfp4-pack-quantized``
    or 4-bit float groups of 16; MXFP4: ``mxfp4-pack-quantized``, ``quant_method: mxfp4`` or 4-bit float
    groups of 32; INT4 (weight-only, W4A16): 4-bit integer groups (compressed-tensors, Kimi-K2.5's
    experts) or ``quant_method`` AWQ or GPTQ with 4 bits (their group scales counted as Kimi's, one per
    32: :data:`afdlib.inputs.dtypes.INT4_BYTES`); FP8: ``quant_method: fp8`` (block-scaled, DeepSeek's)
    or ``quant_algo: FP8``.
    """
    q = cfg.get("quantization_config")
    expert = str(cfg.get("expert_dtype", "")).lower()
    if q is None:
        return "mxfp4" if expert == "fp4" else None
    if not isinstance(q, dict):
        raise AfdError(f"{path}: field 'quantization_config' must be an object, got {q!r}")
    algo = str(q.get("quant_algo", "")).upper()
    if algo == "NVFP4":
        return "nvfp4"
    if str(q.get("quant_method", "")).lower() == "mxfp4":
        return "mxfp4"
    groups = q.get("config_groups")
    groups = list(groups.values()) if isinstance(groups, dict) else []
    for block in [q, *groups]:
        if not isinstance(block, dict):
            continue
        fmt = str(block.get("format", "")).lower()
        if fmt.startswith(("nvfp4", "mxfp4")):
            return fmt[:5]
        w = block.get("weights")
        if isinstance(w, dict) and w.get("num_bits") == 4 and w.get("type") == "float":
            if w.get("group_size") in (16, 32):
                return "nvfp4" if w.get("group_size") == 16 else "mxfp4"
        if isinstance(w, dict) and w.get("num_bits") == 4 and w.get("type") == "int":
            return "int4"
    if str(q.get("quant_method", "")).lower() in ("awq", "gptq") and q.get("bits", q.get("w_bit")) == 4:
        return "int4"
    if expert == "fp4":   # DeepSeek-V4: FP4 experts beside FP8 block-scaled other weights
        return "mxfp4"
    if str(q.get("quant_method", "")).lower() == "fp8" or algo == "FP8":
        return "fp8"
    return None


def unread_quantization(q: dict) -> str:
    """Words for a ``quantization_config`` :func:`declared_weights` does not read (the default type then
    applies, which the user should know): its method, algorithm and bits as given."""
    said = ", ".join(f"{k} {q[k]!r}" for k in ("quant_method", "quant_algo", "bits", "w_bit") if k in q)
    return f"quantization_config ({said or 'no method named'}) declares a format afd does not read"


def sibling_quantization(path: Path) -> dict | None:
    """The ``quantization`` block of the ``hf_quant_config.json`` beside a config (NVIDIA's checkpoints
    declare their format there; aiconfigurator stores it as ``org--model_hf_quant_config.json``)."""
    from afdlib.inputs.files import read_json
    stem = re.sub(r"config$", "", path.stem)
    for name in (f"{stem}hf_quant_config.json", "hf_quant_config.json"):
        f = path.with_name(name)
        if f.is_file():
            doc = read_json(f)
            q = doc.get("quantization") if isinstance(doc, dict) else None
            return q if isinstance(q, dict) else None
    return None


def _cache_folder(path: Path) -> str | None:
    for parent in path.parents:
        if parent.name.startswith("models--"):
            return parent.name[len("models--"):].replace("--", "/")
    return None


def config_name(cfg: dict, path: Path, sizes: str) -> str:
    """The model's name (module docstring); ``sizes``: the last resort's sizes."""
    for key in ("_name_or_path", "name"):
        v = cfg.get(key)
        if isinstance(v, str) and v.strip():
            v = v.strip().rstrip("/")
            return v.split("/")[-1] if v.startswith(("/", ".")) else v
    stem = re.sub(r"[_-]config$", "", path.stem, flags=re.I)
    if stem and stem.lower() not in ("config", "hf_config", "model"):
        return stem.replace("--", "/")
    cached = _cache_folder(path.resolve())
    if cached:
        return cached
    folder = path.resolve().parent
    if folder.name and any(next(folder.glob(p), None) for p in _MODEL_FILES):
        return folder.name
    return f"{cfg.get('model_type') or 'model'} {sizes}"


def label(name: Any, path: Path) -> str:
    return checks.label(name, "field '_name_or_path'", str(path))
