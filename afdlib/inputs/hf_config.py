"""Read a :class:`Model` from a Hugging Face ``config.json`` (any of the common MoE families).

Field names differ across families; each quantity is looked up along a list of candidate
keys, in the top-level config and in a nested ``text_config`` (Llama 4, Qwen3.5) or
``ffn_config`` / ``attn_config`` (DBRX). A missing MoE quantity raises :class:`AfdError` naming the
keys tried; the rest (attention, vocabulary, dense and shared FFN sizes, MTP layers) is filled where
the config gives it. A value of the wrong type raises :class:`AfdError` naming its field.

The attention family is MLA where the config has ``kv_lora_rank``, else GQA when there are fewer
key/value heads than query heads, else MHA (Step-3's MFA has no field that identifies it).

Which layers are MoE (see :func:`_layout`) follows the per-layer fields, read as the families' own
code reads them. Some list the MoE layers outright: ``hybrid_override_pattern`` (Nemotron-H, one
character per layer: M Mamba, E MoE, * attention, - MLP) or its list form ``layers_block_type``,
``mlp_layer_types``, ``moe_layer_freq`` as a 0/1 list (MiMo, MiniMax-M3), ``moe_layers`` (Llama 4),
``moe_layers_enum`` (Step-3). Others only rule layers out: ``first_k_dense_replace``,
``num_dense_layers``, ``moe_layer_start_index`` / ``_end_index``, ``moe_layer_freq`` as an integer
(layer i % k == 0), ``decoder_sparse_step`` / ``interleave_moe_layer_step`` / ``moe_layer_interval``
((i + 1) % k == 0), ``expert_layer_period`` / ``_offset`` (Jamba), ``mlp_only_layers``. A rule that
rules out a layer which an explicit list makes MoE, two lists that differ, a list of the wrong
length or an entry not understood is refused with both fields named, never guessed. Non-MoE layers
are dense, except the Mamba and attention blocks of a Nemotron-H layout, which have no FFN.
Per-layer lists may carry the MTP layers at their end (``num_nextn_predict_layers``, as Step-3.7's).

The token mixers (hybrid attention, linear attention, Mamba-2, compressed attention), the latent
MoE, the FFNs' matrix count, the declared weight format (``quantization_config``: NVFP4, MXFP4,
FP8) and the model's name are read by :mod:`afdlib.inputs.hf_mixers`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from afdlib.inputs.specs import Attention, Model, check_model
from afdlib.errors import AfdError
from afdlib.inputs import checks, hf_mixers
from afdlib.inputs.files import read_json
from afdlib.inputs.hf_fields import Recorder, refuse_unread, scalar

# quantity -> candidate keys, in order (dotted = nested)
_KEYS = {
    "hidden_size": ("hidden_size", "d_model", "n_embd"),
    "num_layers": ("num_hidden_layers", "n_layers", "num_layers"),
    "routed_experts": ("n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts",
                       "ffn_config.moe_num_experts"),
    "experts_per_token": ("num_experts_per_tok", "moe_k", "experts_per_token", "moe_top_k",
                          "ffn_config.moe_top_k", "num_experts_per_token", "top_k_experts"),
    "moe_intermediate_size": ("moe_intermediate_size", "ffn_config.ffn_hidden_size",
                              "intermediate_size"),
}
# kind of block per layer of a Nemotron-H layout: "moe", "mlp" (dense) or "none" (no FFN)
_PATTERN = {"E": "moe", "-": "mlp", "M": "none", "*": "none"}
_BLOCK_TYPES = {"moe": "moe", "mlp": "mlp", "mamba": "none", "linear_attention": "none",
                "attention": "none", "full_attention": "none"}
_MLP_TYPES = ("dense", "sparse", "moe", "hash_moe")  # mlp_layer_types (DeepSeek-V4: moe, hash_moe)
_MAX_LAYERS = 100_000  # far above any published model; bounds the per-layer work


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
        v = scalar(cfg, key, v, path)   # ERNIE-VL style [text, vision]: the text value first, said by afd model
        if v is not None:
            return checks.integer(v, f"field '{key}'", str(path), integral_float=True)
    return None


def _first(cfg: dict, quantity: str, path: Path) -> int:
    """The first of the quantity's keys present; two of its names with different values refused
    (``intermediate_size`` aside: beside ``moe_intermediate_size`` it is the dense FFN's)."""
    given = {k: _int(cfg, (k,), path) for k in _KEYS[quantity] if k != "intermediate_size"}
    given = {k: v for k, v in given.items() if v is not None}
    clash = [(a, x, b, y) for a, x in given.items() for b, y in given.items() if x != y]
    if clash:
        a, x, b, y = clash[0]
        raise AfdError(f"{path}: fields '{a}' ({x}) and '{b}' ({y}) both give the {quantity.replace('_', ' ')}, "
                       "and disagree")
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


# ----------------------------------------------------------------------------- per-layer layout

def _layout_int(cfg: dict, key: str, path: Path, minimum: int) -> int | None:
    """Integer layout field ``key`` (None if absent); null, a non-integer or a value below ``minimum`` refused."""
    if key not in cfg:
        return None
    v = scalar(cfg, key, cfg[key], path)      # [text, vision]: as _int
    return checks.integer(v, f"field '{key}'", str(path), lo=minimum, integral_float=True)


def _per_layer(cfg: dict, key: str, n: int, mtp: int, path: Path, allowed: tuple | None) -> list | None:
    """List ``key`` with one entry per layer (trailing MTP entries dropped); None if absent or null.
    Entries must be in ``allowed`` (None: any string)."""
    v = cfg.get(key)
    if v is None:
        return None
    if not isinstance(v, list):
        raise AfdError(f"{path}: field '{key}' must be a list with one entry per layer, got {v!r}")
    if len(v) not in (n, n + mtp):
        raise AfdError(f"{path}: field '{key}' has {len(v)} entries for {n} layers")
    for x in v:
        if not (isinstance(x, str) if allowed is None else x in allowed):
            expected = "strings" if allowed is None else " or ".join(map(repr, allowed))
            raise AfdError(f"{path}: field '{key}' has entry {x!r}, not understood (expected {expected})")
    return v[:n]


def _indices(cfg: dict, key: str, n: int, mtp: int, path: Path) -> set[int] | None:
    """Set of layer indices listed in ``key`` (Step-3 writes them "4,5,6"); None if absent or null."""
    v = cfg.get(key)
    if v is None:
        return None
    if isinstance(v, str) and key == "moe_layers_enum":
        v = [int(s) if s.strip().isdecimal() else s for s in v.split(",") if s.strip()]
    if not isinstance(v, list):
        raise AfdError(f"{path}: field '{key}' must be a list of layer indices, got {v!r}")
    for i in v:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n + mtp:
            raise AfdError(f"{path}: field '{key}' has {i!r}, not a layer index (0 to {n + mtp - 1})")
    return {i for i in v if i < n}


def _blocks(cfg: dict, path: Path) -> tuple[str, list[str]] | None:
    """(field, kind of block per layer) of a Nemotron-H layout (one block per layer); None if absent."""
    found = []
    if "hybrid_override_pattern" in cfg:
        p = cfg["hybrid_override_pattern"]
        if not isinstance(p, str) or not p:
            raise AfdError(f"{path}: field 'hybrid_override_pattern' must be a non-empty string, got {p!r}")
        bad = sorted(set(p) - set(_PATTERN))
        if bad:
            raise AfdError(f"{path}: field 'hybrid_override_pattern' has layer marker {bad[0]!r}, not understood "
                           "(known: M Mamba, E MoE, * attention, - MLP)")
        found.append(("hybrid_override_pattern", [_PATTERN[c] for c in p]))
    for key in ("layers_block_type", "layer_types"):
        v = cfg.get(key)
        if key == "layers_block_type" and v is not None and not (isinstance(v, list) and v):
            raise AfdError(f"{path}: field 'layers_block_type' must be a non-empty list, got {v!r}")
        # layer_types lists attention kinds, except in Nemotron-H, where it holds these blocks
        if isinstance(v, list) and (key == "layers_block_type" or "moe" in v or "mlp" in v):
            bad = [x for x in v if not isinstance(x, str) or x not in _BLOCK_TYPES]
            if bad:
                raise AfdError(f"{path}: field '{key}' has entry {bad[0]!r}, not understood "
                               f"(expected {', '.join(_BLOCK_TYPES)})")
            found.append((key, [_BLOCK_TYPES[x] for x in v]))
    for key, kinds in found[1:]:
        if kinds != found[0][1]:
            raise AfdError(f"{path}: fields '{found[0][0]}' and '{key}' describe different layer layouts")
    return found[0] if found else None


def _layout(cfg: dict, path: Path) -> tuple[int, int, int]:
    """(num_layers, MoE layers, dense layers) from the per-layer fields (module docstring)."""
    blocks = _blocks(cfg, path)
    n_key = next((k for k in _KEYS["num_layers"] if _get(cfg, k) is not None), None)
    n = _int(cfg, _KEYS["num_layers"], path)
    if blocks and n is None:
        n = len(blocks[1])
    elif blocks and n != len(blocks[1]):
        raise AfdError(f"{path}: fields '{n_key}' ({n}) and '{blocks[0]}' ({len(blocks[1])} layers) "
                       "disagree on the layer count")
    elif n is None:
        n = _first(cfg, "num_layers", path)
    checks.integer(n, f"field '{n_key}'" if n_key else f"the layer count of field '{blocks[0]}'", str(path),
                   lo=1, hi=_MAX_LAYERS)
    mtp = max(_int(cfg, ("num_nextn_predict_layers",), path) or 0, 0)
    if not (blocks and blocks[0] == "layer_types"):
        _per_layer(cfg, "layer_types", n, mtp, path, None)  # attention kinds: only checked here

    explicit: dict[str, set[int]] = {}  # field -> the MoE layers it lists
    if blocks:
        explicit[blocks[0]] = {i for i, kind in enumerate(blocks[1]) if kind == "moe"}
    types = _per_layer(cfg, "mlp_layer_types", n, mtp, path, _MLP_TYPES)
    if types is not None:
        explicit["mlp_layer_types"] = {i for i, t in enumerate(types) if t != "dense"}
    freq = cfg.get("moe_layer_freq")
    if isinstance(freq, list):
        explicit["moe_layer_freq"] = {i for i, f in enumerate(_per_layer(cfg, "moe_layer_freq", n, mtp, path,
                                                                         (0, 1))) if f}
    for key in ("moe_layers", "moe_layers_enum"):
        listed = _indices(cfg, key, n, mtp, path)
        if listed is not None:
            explicit[key] = listed

    rules = []  # (field, whether layer i may be MoE)
    for key in ("first_k_dense_replace", "num_dense_layers", "moe_layer_start_index"):
        k = _layout_int(cfg, key, path, 0)
        if k is not None:
            rules.append((key, lambda i, k=k: i >= k))
    end = _layout_int(cfg, "moe_layer_end_index", path, -1)  # ERNIE: -1 is the last layer
    if end is not None:
        rules.append(("moe_layer_end_index", lambda i, e=(n - 1 if end == -1 else end): i <= e))
    if freq is not None and not isinstance(freq, list):  # DeepSeek-V2: every k-th layer from layer 0
        f = _layout_int(cfg, "moe_layer_freq", path, 1)
        rules.append(("moe_layer_freq", lambda i, f=f: i % f == 0))
    for key in ("decoder_sparse_step", "interleave_moe_layer_step", "moe_layer_interval"):
        s = _layout_int(cfg, key, path, 1)
        if s is not None:
            rules.append((key, lambda i, s=s: (i + 1) % s == 0))
    if "expert_layer_period" in cfg or "expert_layer_offset" in cfg:  # Jamba, its defaults 2 and 1
        period = _layout_int(cfg, "expert_layer_period", path, 1)
        offset = _layout_int(cfg, "expert_layer_offset", path, 0)
        period, offset = 2 if period is None else period, 1 if offset is None else offset
        if offset >= period:
            raise AfdError(f"{path}: field 'expert_layer_offset' ({offset}) must be below "
                           f"'expert_layer_period' ({period})")
        rules.append(("expert_layer_period", lambda i: i % period == offset))
    dense_only = _indices(cfg, "mlp_only_layers", n, mtp, path)
    if dense_only:
        rules.append(("mlp_only_layers", lambda i: i not in dense_only))

    moe, named = set(range(n)), None
    for key, listed in explicit.items():
        if named and listed != moe:
            i = min(listed ^ moe)
            a, b = (named, key) if i in moe else (key, named)
            raise AfdError(f"{path}: fields '{named}' and '{key}' disagree: '{a}' makes layer {i} MoE, "
                           f"'{b}' does not")
        moe, named = listed, key
    for key, may_be_moe in rules:
        out = {i for i in moe if not may_be_moe(i)}
        if out and named:
            raise AfdError(f"{path}: fields '{named}' and '{key}' disagree: '{named}' makes layer {min(out)} MoE, "
                           f"'{key}' does not")
        moe -= out
    if not moe:
        names = ", ".join(f"'{k}'" for k in [*explicit, *(k for k, _ in rules)])
        raise AfdError(f"{path}: the layout given by {names} leaves no MoE layer of {n}")
    no_ffn = blocks[1].count("none") if blocks else 0
    return n, len(moe), n - len(moe) - no_ffn


def _mtp_layers(cfg: dict, path: Path) -> int | None:
    """MTP layers: ``num_nextn_predict_layers`` (DeepSeek), ``mtp_num_hidden_layers``, or MiniMax-M2's
    ``num_mtp_modules`` of ``mtp_transformer_layers`` each (where ``use_mtp`` is not false)."""
    n = _int(cfg, ("num_nextn_predict_layers", "mtp_num_hidden_layers"), path)
    if n is not None or cfg.get("use_mtp") is False:
        return n
    modules = _int(cfg, ("num_mtp_modules",), path)
    return None if modules is None else modules * (_int(cfg, ("mtp_transformer_layers",), path) or 1)


def _shared_experts(cfg: dict, path: Path) -> int:
    n = _int(cfg, ("n_shared_experts", "num_shared_experts", "moe_num_shared_experts"), path)
    if n is not None:
        return n
    if cfg.get("enable_moe_block") and cfg.get("intermediate_size"):  # Gemma-4: a dense MLP beside the experts
        return 1
    if any(cfg.get(k) for k in ("shared_expert_intermediate_size", "share_expert_dim", "shared_intermediate_size")):
        return 1
    if cfg.get("intermediate_size_mlp") and cfg.get("num_local_experts"):  # Llama 4 shared expert
        return 1
    return 0


def _local(cfg: dict, num_layers: int, path: Path) -> tuple[int, int]:
    """(window, layers) of sliding-window or chunked attention; (0, 0) where every layer is global."""
    types = _list(cfg, "layer_types", path)[:num_layers]
    window = _int(cfg, ("sliding_window",), path)
    alias = _int(cfg, ("sliding_window_size",), path)     # MiMo-V2 carries both, equal
    if window and alias and alias != window:
        raise AfdError(f"{path}: fields 'sliding_window' ({window}) and 'sliding_window_size' ({alias}) disagree")
    window = window or alias
    chunk = _int(cfg, ("attention_chunk_size",), path)
    if window and cfg.get("use_sliding_window") is not False:  # Qwen configs carry a disabled window
        if chunk and chunk != window:
            raise AfdError(f"{path}: fields 'sliding_window' ({window}) and 'attention_chunk_size' ({chunk}) both "
                           "bound the attention's span, with different sizes: give one")
        if types:
            return window, types.count("sliding_attention")
        every = _layout_int(cfg, "sliding_window_pattern", path, 1)   # Gemma 3: every k-th layer global
        if every:
            return window, num_layers - num_layers // every
        full = _layout_int(cfg, "max_window_layers", path, 0) if cfg.get("use_sliding_window") else None
        return window, (num_layers - min(full, num_layers) if full is not None else num_layers)  # Qwen2: full first
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
    checks.integer(heads, "field 'num_attention_heads'", str(path), lo=1)
    kv_heads = _int(cfg, ("num_key_value_heads", "attn_config.kv_n_heads", "num_kv_heads"), path)
    kv_heads = heads if kv_heads is None else kv_heads
    window, local = _local(cfg, num_layers, path)
    kv_lora = _int(cfg, ("kv_lora_rank",), path)
    if kv_lora is not None and kv_lora < 1:    # 0 would read an MLA config as plain multi-head attention
        raise AfdError(f"{path}: field 'kv_lora_rank' must be a positive latent rank (MLA), got {kv_lora}; "
                       "leave it out (or null) for a model without MLA")
    latent = [k for k in ("qk_nope_head_dim", "q_lora_rank") if _get(cfg, k) not in (None, 0)]
    if kv_lora is None and "kv_lora_rank" in cfg and latent:   # null beside MLA's other fields: plain MHA unsaid
        raise AfdError(f"{path}: field 'kv_lora_rank' is null beside MLA's {', '.join(repr(k) for k in latent)}; "
                       "give the latent rank (MLA), or leave the MLA fields out")
    if _get(cfg, "v_head_dim") == 0:
        raise AfdError(f"{path}: field 'v_head_dim' must be a positive head size, got 0; leave it out (or null) "
                       "for values as wide as the keys")
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
    if isinstance(raw.get("quantization"), dict) and not any(k in raw for k in _KEYS["hidden_size"]):
        raise AfdError(f"{path}: this is a quantization file (ModelOpt's hf_quant_config.json): give the model's "
                       "config.json, beside which it is read")
    if "text_config" in raw and not isinstance(raw["text_config"], dict):
        raise AfdError(f"{path}: field 'text_config' must be an object (the language model's fields), "
                       f"got {type(raw['text_config']).__name__}")
    if isinstance(raw.get("text_config"), dict):  # multimodal wrappers: the language model
        inner = raw["text_config"]
        clash = [k for q in _KEYS.values() for k in q if "." not in k and k in raw and k in inner
                 and raw[k] is not None and inner[k] is not None and raw[k] != inner[k]]
        if clash:      # one of the two would be dropped without a word
            k = clash[0]
            raise AfdError(f"{path}: field '{k}' is {raw[k]!r} at the top level and {inner[k]!r} in text_config; "
                           "give the language model's once")
        cfg = {**raw, **inner}
    cfg = Recorder(cfg, path=path)
    values = {q: _first(cfg, q, path) for q in _KEYS if q != "num_layers"}
    values["num_layers"], moe, dense = _layout(cfg, path)
    shared = _shared_experts(cfg, path)
    extra = {
        "vocab_size": _int(cfg, ("vocab_size",), path),
        "mtp_layers": _mtp_layers(cfg, path),
        "shared_expert_intermediate_size": _int(cfg, ("shared_expert_intermediate_size", "moe_shared_expert_intermediate_size",
                                                      "share_expert_dim", "shared_intermediate_size"), path) or None,
        # the dense layers' FFN (MiniMax-M3 names it dense_intermediate_size, Llama 4 intermediate_size_mlp;
        # their intermediate_size is the expert's)
        "dense_intermediate_size": _int(cfg, ("dense_intermediate_size", "intermediate_size_mlp", "intermediate_size"),
                                        path) if dense else None,
    }
    if cfg.get("enable_moe_block") and shared == 1 and extra["shared_expert_intermediate_size"] is None:
        extra["shared_expert_intermediate_size"] = _int(cfg, ("intermediate_size",), path)
    extra = {k: v for k, v in extra.items() if v is not None}
    if "vocab_size" in extra:
        checks.integer(extra["vocab_size"], "field 'vocab_size'", str(path), lo=1)
    n, h = values["num_layers"], values["hidden_size"]
    attention = _attention(cfg, h, n, path)
    blocks = _blocks(cfg, path)
    mtp = max(extra.get("mtp_layers", 0), 0)
    mixers, attention = hf_mixers.mixers(cfg, path, n, mtp, h, attention, blocks)
    fields = [*values, "moe_layers", "dense_layers", *extra] + (["attention"] if attention else [])
    sources = {k: str(path) for k in fields}
    if mixers:
        sources["mixers"] = str(path)
    latent, mats = hf_mixers.latent_size(cfg, path), hf_mixers.ffn_matrices(cfg, path)
    outer = Recorder(raw, path=path)   # a multimodal wrapper may declare the weights outside text_config
    weights, where = hf_mixers.declared_weights(outer, path) or hf_mixers.declared_weights(cfg, path), path
    cfg.read |= outer.read
    if weights is None and "quantization_config" not in cfg and hf_mixers.sibling_quantization(path):
        where = path.with_name(path.name.replace("config.json", "hf_quant_config.json"))
        weights = hf_mixers.declared_weights({"quantization_config": hf_mixers.sibling_quantization(path)}, path)
    if weights:
        sources["weights_dtype"] = f"{where} (quantization_config)"
    elif isinstance(dict.get(cfg, "quantization_config"), dict):    # declared, in a format not read here
        sources["weights_unread"] = hf_mixers.unread_quantization(dict.get(cfg, "quantization_config"))
    sizes = f"L{n} H{h} E{values['routed_experts']} K{values['experts_per_token']}"
    name = hf_mixers.label(slug or hf_mixers.config_name(cfg, path, sizes), path)
    tied = bool(cfg.get("tie_word_embeddings"))
    refuse_unread(cfg, path)
    sources["config_fields"] = ", ".join(sorted(k for k in cfg.read if dict.__contains__(cfg, k)))
    if cfg.first_of:   # lists where one number is read ([text, vision]): their first entries, said by afd model
        sources["config_lists"] = "; ".join(f"{k} {checks.show(v)}" for k, v in sorted(cfg.first_of.items()))
    # the config's other fields (a multimodal wrapper's and its text_config's), which the reader never looked
    # at: listed by ``afd model``, so a field that would change the model and is not read is seen, not dropped
    sources["config_ignored"] = ", ".join(sorted(k for k in dict.keys(cfg) if k not in cfg.read and k != "text_config"))
    m = Model(slug=name.lower().replace("/", "--").replace(" ", "-"), name=name, dense_layers=dense,
              moe_layers=moe, shared_experts=shared, attention=attention, weights_dtype=weights, mixers=mixers,
              moe_latent_size=latent, ffn_matrices=mats, tied_embeddings=tied,
              profile="reference", sources=sources, **values, **extra)
    check_model(m)
    return m
