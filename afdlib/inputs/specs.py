"""The vocabulary of the library: the types the catalogue loads and every formula takes.

* :class:`Hardware`: one accelerator, per GPU and per direction, SI units (FLOP/s, bytes, bytes/s, s);
* :class:`Model`: a MoE model: its MoE part (the paper's Table 4), its :class:`Attention`, dense
  layers, shared experts, vocabulary and MTP layers;
* :class:`Precision`: data types of the weights, the activations on the wire and the KV cache;
* :class:`Budget`: the per-token SLO, accepted tokens per step, the fixed gap and the micro-batches
  (paper Eq. 1), with the one set of defaults the whole library uses;
* :class:`Efficiency`: sustained fractions of datasheet peaks.

Numeric fields may hold numpy arrays: :func:`stack` lays a list of devices or models along one axis,
so a whole grid (devices x models x N_F) is one call of the same formulas, with the same names.
Validation lives in :func:`check_hardware` and :func:`check_model` (called by the loaders).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Mapping, Sequence

import numpy as np

from afdlib.errors import AfdError
from afdlib.inputs import checks
from afdlib.inputs.dtypes import (ATTENTION_COMPUTE, DTYPE_BYTES, FP4_DTYPES, MATMUL_TIERS, MXFP4_BYTES,  # noqa: F401
                                  NVFP4_BYTES, dtype_bytes, matmul_tier)

ATTENTION_FAMILIES = ("mla", "gqa", "mha", "mfa")


@dataclass(frozen=True)
class Efficiency:
    """Sustained fraction of datasheet peaks, applied by the ``datasheet`` hardware profile only.

    Defaults are empirical, each from a cited measurement:
    hbm 0.8 (AIConfigurator's "HBM BW x 0.8" correction), scale_up 0.8 (NCCL on NVLink reaches
    80-82% of nominal, MLE; the paper itself uses 160 of H800's 200 GB/s), scale_out 0.8
    (DeepEP low-latency kernels reach 78-80% of 50 GB/s at large EP; StepFun uses 40 of 50),
    compute 1.0 (the paper assumes OFU = 100%; matmul efficiency is the decode model's own
    parameter, :class:`afdlib.decode.step.Assumptions`).
    """

    compute: float = 1.0
    hbm: float = 0.8
    scale_up: float = 0.8
    scale_out: float = 0.8

    def __post_init__(self):
        for k, v in asdict(self).items():
            checks.fraction(v, f"efficiency {k}")


@dataclass(frozen=True)
class Hardware:
    """One accelerator, SI units, per GPU, per direction.

    ``flops`` is the peak dense rate the paper's analysis uses (FP8, else BF16 where the device has
    no FP8 units: ``flops_dtype``); :meth:`peak` gives the rate for a data type. ``fp4_flops`` is the
    dense FP4 (NVFP4) rate of devices with FP4 tensor cores (Blackwell), None elsewhere.
    ``scale_up_domain`` GPUs share the scale-up fabric (8 for an HGX node, 72 for NVL72, 384 for
    CloudMatrix384); ``gpus_per_node`` is the size of an AFD node (N_A, N_F count nodes).
    ``superpod``: the scale-up fabric spans the AFD nodes, so scale-out = scale-up bandwidth.
    """

    slug: str
    name: str
    profile: str
    flops: float
    flops_dtype: str
    hbm_bytes_per_s: float
    hbm_bytes: float
    scale_up_bytes_per_s: float
    scale_out_bytes_per_s: float
    gpus_per_node: int = 8
    scale_up_domain: int = 8
    superpod: bool = False
    bf16_flops: float | None = None
    fp4_flops: float | None = None
    int8_flops: float | None = None                 # a device without FP8 units: its INT8 (W8A8) rate
    inter_domain_bytes_per_s: float | None = None  # between scale-up domains (racks) when superpod
    scale_out_latency_s: float | None = None       # fixed cost of one message over scale-out
    scale_up_latency_s: float | None = None
    efficiency: Efficiency | None = None   # factors already in the rates (datasheet profile); None: as given
    sources: Mapping[str, str] = field(default_factory=dict)
    uncertain: Mapping[str, str] = field(default_factory=dict)
    notes: str = ""

    @property
    def bandwidth_ratio(self):
        """r = BW_up / BW_out (NOTES section 3)."""
        return self.scale_up_bytes_per_s / self.scale_out_bytes_per_s

    def peak(self, dtype: str = "fp8"):
        """Peak dense FLOP/s for matmuls in ``dtype``: NVFP4 at ``fp4_flops`` (refused on a device
        without FP4 tensor cores), FP8/INT8 at ``flops`` (a device without FP8 units serves 8-bit
        weights as INT8, W8A8, at ``int8_flops`` where its file gives one, else at its BF16 rate),
        BF16/FP16 at ``bf16_flops``."""
        tier = matmul_tier(dtype)
        if tier == "fp4":
            if self.fp4_flops is None:
                raise AfdError(f"hardware '{self.slug}' has no FP4 tensor cores (no fp4_tflops): FP4 matmuls (FP4 "
                               "weights, --weights nvfp4/mxfp4 or declared by the model, or --attention-dtype fp4) "
                               "run at an FP4 rate only on Blackwell-class devices; use --weights fp8 for FP4 "
                               "weights, --attention-dtype fp8 for an FP4 attention (Hopper's weight-only W4A8/W4A16 "
                               "kernels are not modelled)")
            return self.fp4_flops
        if tier == "fp8":
            return self.int8_flops if self.flops_dtype != "fp8" and self.int8_flops is not None else self.flops
        if self.bf16_flops is not None:
            return self.bf16_flops
        if self.flops_dtype == "bf16":
            return self.flops
        raise AfdError(f"hardware '{self.slug}' has no BF16 rate: add bf16_tflops to its file (attention over a "
                       "BF16 cache and BF16 weights run at it)")

    def with_overrides(self, **kw) -> "Hardware":
        """A copy with some fields replaced (validated)."""
        hw = replace(self, **kw)
        check_hardware(hw)
        return hw


@dataclass(frozen=True)
class Attention:
    """The attention of one decoder layer, as the decode step sees it.

    * ``mla``: multi-head latent attention (DeepSeek-V3, Kimi-K2), run in the absorbed decode form:
      the cache holds ``kv_lora_rank + qk_rope_head_dim`` elements per token; queries of
      ``num_heads`` heads attend over it. ``head_dim`` = qk_nope_head_dim + qk_rope_head_dim.
    * ``gqa`` / ``mha``: ``num_kv_heads`` key and value heads of ``head_dim`` each (MHA: as many as
      query heads); ``q_lora_rank`` 0.
    * ``mfa``: Step-3's multi-matrix factorisation attention: a low-rank query (``q_lora_rank``)
      and one shared key/value head (``num_kv_heads`` = 1).

    ``local_window`` > 0: ``local_layers`` of the layers keep only the last ``local_window`` tokens
    (sliding-window or chunked attention).
    """

    family: str
    num_heads: int
    num_kv_heads: int
    head_dim: int
    v_head_dim: int = 0
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    local_window: int = 0
    local_layers: int = 0

    @property
    def kv_elements_per_token(self) -> int:
        """Cache elements per token and layer: MLA latent + rope key, else 2 x KV heads x head dim."""
        if self.family == "mla":
            return self.kv_lora_rank + self.qk_rope_head_dim
        return self.num_kv_heads * (self.head_dim + (self.v_head_dim or self.head_dim))


@dataclass(frozen=True)
class Model:
    """One MoE model: the paper's MoE fields plus what a decode step needs.

    ``shared_expert_intermediate_size`` is the size of one shared expert (0: same as M);
    ``dense_intermediate_size`` that of the dense layers' FFN; ``attention`` None where the
    catalogue has not described it (the end-to-end decode model then refuses the model).
    ``weights_dtype``: the weights' type the checkpoint declares (``nvfp4`` where a Hugging Face
    config's ``quantization_config`` says NVFP4), None where it declares none we model; the command
    takes it as ``--weights`` when that is not given (the library's functions take a
    :class:`Precision` and never read it).
    ``mixers``: the layers by token mixer (:class:`afdlib.inputs.layers.Mixer`, one per kind, their
    layers summing to ``num_layers``) where the layers are not all of ``attention``'s kind (hybrid
    models); empty: every layer is ``attention`` (its ``local_layers`` windowed).
    ``moe_latent_size`` > 0: the routed experts work in that latent width (down and up projections
    H x latent around them in every MoE layer; the all-to-all carries the latent); ``ffn_matrices``:
    weight matrices of each FFN, experts and dense (3: gated, SwiGLU; 2: a plain activation such as
    Nemotron's relu2).
    """

    slug: str
    name: str
    hidden_size: int
    moe_intermediate_size: int
    num_layers: int
    dense_layers: int
    moe_layers: int
    routed_experts: int
    experts_per_token: int
    shared_experts: int = 0
    shared_expert_intermediate_size: int = 0
    dense_intermediate_size: int = 0
    vocab_size: int = 0
    mtp_layers: int = 0
    attention: Attention | None = None
    weights_dtype: str | None = None
    mixers: tuple = ()               # of afdlib.inputs.layers.Mixer (that module builds on this one)
    moe_latent_size: int = 0
    ffn_matrices: int = 3
    tied_embeddings: bool = False    # the LM head is the input embedding (parameter counts)
    profile: str = "reference"
    hf_id: str = ""
    sources: Mapping[str, str] = field(default_factory=dict)
    uncertain: Mapping[str, str] = field(default_factory=dict)
    notes: str = ""

    @property
    def granularity(self):
        """H / M: small means coarse experts (favours AFD, paper Section 4)."""
        return self.hidden_size / self.moe_intermediate_size

    @property
    def sparsity(self):
        """E / K: routed experts per activated expert."""
        return self.routed_experts / self.experts_per_token

    @property
    def routed_width(self):
        """Width the routed experts work in (and the all-to-all carries): the latent, else H."""
        if isinstance(self.moe_latent_size, np.ndarray):   # stacked models
            return np.where(self.moe_latent_size > 0, self.moe_latent_size, self.hidden_size)
        return self.moe_latent_size or self.hidden_size

    @property
    def shared_size(self):
        """Intermediate size of one shared expert (M where the catalogue gives none)."""
        return self.shared_expert_intermediate_size or self.moe_intermediate_size

    def with_overrides(self, **kw) -> "Model":
        m = replace(self, **kw)
        check_model(m)
        return m


@dataclass(frozen=True)
class Precision:
    """Data types of one deployment: weights, attention weights, the wire and the KV cache.

    Defaults are the paper's (and DeepSeek-V3's serving) choice: FP8 weights, FP8 dispatch,
    BF16 combine (3 bytes per token and hidden element on the wire), BF16 KV cache, BF16 LM head,
    core attention computed in BF16 (``attention_compute``: the kernel's compute type, apart from
    the cache's storage type; ``fp8``: FP8 FlashMLA on Hopper, FP8 attention on Blackwell,
    :func:`afdlib.evaluator.kernels.attention_speedup`).
    ``weights`` (routed and shared experts, dense FFN layers), ``attention`` (its projections) and
    ``lm_head`` are GEMM weights: each GEMM runs at the rate of its weights' type
    (:func:`matmul_tier`; ``nvfp4``/``fp4``: 0.5625 bytes per weight, W4A4 at the FP4 rate). For the
    KV cache and the wire a type gives bytes only.
    """

    weights: str = "fp8"
    attention: str = "fp8"
    dispatch: str = "fp8"
    combine: str = "bf16"
    kv_cache: str = "bf16"
    lm_head: str = "bf16"
    attention_compute: str = "bf16"

    def __post_init__(self):
        for f in fields(self):
            dtype_bytes(getattr(self, f.name))
            if str(getattr(self, f.name)).lower() in FP4_DTYPES:   # fp4 is NVFP4: one name
                object.__setattr__(self, f.name, "nvfp4")
        if str(self.attention_compute).lower() not in ATTENTION_COMPUTE:
            raise AfdError(f"attention compute must be {' or '.join(ATTENTION_COMPUTE)}, got '{self.attention_compute}'")
        object.__setattr__(self, "attention_compute", str(self.attention_compute).lower())

    @classmethod
    def for_weights(cls, weights: str, attention: str | None = None, kv_cache: str = "bf16") -> Precision:
        """The precision of a deployment whose weights are ``weights``: the attention projections in
        ``attention``, else the weights' type, except NVFP4 (or MXFP4) weights, which cover the
        experts and dense FFN layers only: their attention stays FP8; and INT4 weight-only ones, whose
        checkpoints keep attention in BF16 (Kimi-K2.5: ``ignore: re:.*self_attn.*``)."""
        if attention is None:
            attention = ("fp8" if matmul_tier(weights) == "fp4" else "bf16" if str(weights).lower() == "int4"
                         else weights)
        return cls(weights=weights, attention=attention, kv_cache=kv_cache)

    def bytes(self, what: str) -> float:
        """Bytes per element of ``what`` (a field name: ``weights``, ``kv_cache``, ...)."""
        return dtype_bytes(getattr(self, what))

    @property
    def wire_bytes(self) -> float:
        """Bytes on the wire per token and hidden element, dispatch + combine (3 by default)."""
        return self.bytes("dispatch") + self.bytes("combine")


@dataclass(frozen=True)
class Budget:
    """The step budget of paper Eq. 1: ``SLO * L_accept = t_g + N_layers * N_BO * t_B``.

    The library's one set of defaults: SLO 50 ms per token, L_accept 1.7 (MTP), fixed gap
    t_g 15 ms, three micro-batches (3BO), as in the paper's Figure 4.
    """

    slo_s: float = 0.050
    l_accept: float = 1.7
    t_gap_s: float = 0.015
    micro_batches: int = 3

    def __post_init__(self):
        checks.positive(self.slo_s, "budget slo_s")
        checks.positive(self.l_accept, "budget l_accept")
        checks.nonnegative(self.t_gap_s, "budget t_gap_s")
        checks.integer(self.micro_batches, "budget micro_batches", lo=1)


# ----------------------------------------------------------------------------- validation

def _positive(where: str, name: str, value: Any) -> float:
    """A positive number from a catalogue file, as float; a number that YAML read as text gets a hint."""
    try:
        return float(checks.positive(value, name, where))
    except checks.Refused as e:
        if isinstance(value, str) and checks.reads_as_number(value):
            raise AfdError(f"{e} (YAML reads {value} as text: {checks.yaml_number(value)})") from None
        raise


MAX_GPUS_PER_NODE = 4096
"""Most GPUs in one node (an AFD node; the catalogue's have 4 or 8)."""
MAX_SCALE_UP_DOMAIN = 1_000_000
"""Most GPUs sharing one scale-up fabric (the catalogue's largest, a TPU pod, has 8,960)."""


def check_hardware(hw: Hardware) -> None:
    """Raise :class:`AfdError` unless every rate and size is a positive number."""
    where = f"hardware '{hw.slug}'"
    for f_ in ("flops", "hbm_bytes_per_s", "hbm_bytes", "scale_up_bytes_per_s", "scale_out_bytes_per_s"):
        _positive(where, f_, getattr(hw, f_))
    for f_ in ("bf16_flops", "fp4_flops", "int8_flops", "inter_domain_bytes_per_s"):
        if getattr(hw, f_) is not None:
            _positive(where, f_, getattr(hw, f_))
    for f_ in ("scale_out_latency_s", "scale_up_latency_s"):
        if getattr(hw, f_) is not None:
            checks.nonnegative(getattr(hw, f_), f_, where)
    if getattr(hw, "flops_dtype", "fp8") == "fp8" and hw.bf16_flops is not None and np.any(
            np.asarray(hw.bf16_flops) > np.asarray(hw.flops)):   # every FP8 tensor core is at least as fast in FP8
        raise AfdError(f"{where}: its BF16 rate exceeds its FP8 rate; FP8 tensor cores run FP8 at least as fast")
    checks.integer(hw.gpus_per_node, "gpus_per_node", where, lo=1, hi=MAX_GPUS_PER_NODE)
    checks.integer(hw.scale_up_domain, "scale_up_domain", where, lo=1, hi=MAX_SCALE_UP_DOMAIN)
    if np.ndim(hw.scale_up_domain) == 0 and np.ndim(hw.gpus_per_node) == 0 and \
            hw.scale_up_domain % hw.gpus_per_node and hw.gpus_per_node % hw.scale_up_domain:
        raise AfdError(f"{where}: a scale-up domain of {hw.scale_up_domain} GPUs neither holds whole "
                       f"{hw.gpus_per_node}-GPU nodes nor splits one evenly")


MODEL_INT_FIELDS = ("hidden_size", "moe_intermediate_size", "num_layers", "dense_layers", "moe_layers",
                    "routed_experts", "experts_per_token", "shared_experts")
MODEL_OPTIONAL_INT_FIELDS = ("shared_expert_intermediate_size", "dense_intermediate_size", "vocab_size",
                             "mtp_layers", "moe_latent_size")
ATTENTION_INT_FIELDS = ("num_heads", "num_kv_heads", "head_dim", "v_head_dim", "q_lora_rank", "kv_lora_rank",
                        "qk_rope_head_dim", "local_window", "local_layers")


def check_attention(att: Attention, where: str, num_layers: int) -> None:
    """Raise :class:`AfdError` for an unknown family or impossible dimensions."""
    if att.family not in ATTENTION_FAMILIES:
        raise AfdError(f"{where}: attention family '{att.family}' unknown; valid: {', '.join(ATTENTION_FAMILIES)}")
    for name in ATTENTION_INT_FIELDS:
        checks.integer(getattr(att, name), f"attention.{name}", where,
                       lo=1 if name in ("num_heads", "num_kv_heads", "head_dim") else 0)
    if att.num_kv_heads > att.num_heads:
        raise AfdError(f"{where}: attention.num_kv_heads ({att.num_kv_heads}) exceeds num_heads ({att.num_heads})")
    if att.num_heads % att.num_kv_heads:
        raise AfdError(f"{where}: attention.num_heads ({att.num_heads}) must be a multiple of num_kv_heads "
                       f"({att.num_kv_heads}): each key-value head serves a whole group of query heads")
    if att.family == "mla" and (att.kv_lora_rank < 1 or att.qk_rope_head_dim < 1):
        raise AfdError(f"{where}: MLA attention needs kv_lora_rank and qk_rope_head_dim")
    if att.family == "mla" and att.qk_rope_head_dim >= att.head_dim:   # head_dim = qk_nope + qk_rope
        raise AfdError(f"{where}: attention.qk_rope_head_dim ({att.qk_rope_head_dim}) must be less than head_dim "
                       f"({att.head_dim}), which is qk_nope_head_dim + qk_rope_head_dim")
    for name in ("kv_lora_rank",):
        if att.family != "mla" and getattr(att, name):   # MLA's latent fields: a family given wrong
            raise AfdError(f"{where}: attention.{name} is a field of MLA's latent attention; family '{att.family}' "
                           "does not use it (family: mla for latent attention)")
    if att.family == "mha" and att.num_kv_heads != att.num_heads:
        raise AfdError(f"{where}: MHA attention has as many key-value heads as query heads, got num_kv_heads "
                       f"{att.num_kv_heads} of {att.num_heads} (family: gqa for fewer)")
    if att.local_layers > num_layers:
        raise AfdError(f"{where}: attention.local_layers ({att.local_layers}) exceeds num_layers ({num_layers})")
    if att.local_layers and not att.local_window:
        raise AfdError(f"{where}: attention.local_layers needs a local_window")


MAX_MODEL_SIZE = 2 ** 24
"""Largest size or count of a model field (16,777,216: 64x the largest published hidden size, vocabulary
or expert count); a larger one overflows the 64-bit integer products of the parameter counts."""


def check_model(m: Model, layer_sum: bool = True) -> None:
    """Raise :class:`AfdError` for non-integer counts, TopK > E, or more MoE and dense layers than
    layers (``layer_sum=False`` checks each alone: the paper's Table 4 prints GLM-4.7 with 92 MoE
    layers beside 3 dense ones of 92, which its profile keeps). (1) A model of one attention kind charges a
    layer's attention with its FFN block, so fewer blocks than layers would lose attention time."""
    where = f"model '{m.slug}'"
    for f_ in MODEL_INT_FIELDS:
        checks.integer(getattr(m, f_), f_, where, lo=0 if f_ in ("dense_layers", "shared_experts") else 1)
    for f_ in MODEL_OPTIONAL_INT_FIELDS:
        checks.integer(getattr(m, f_), f_, where, lo=0)
    for f_ in (*MODEL_INT_FIELDS, *MODEL_OPTIONAL_INT_FIELDS):   # products of two stay exact in 64 bits
        if getattr(m, f_) > MAX_MODEL_SIZE:
            raise checks.Refused(f"at most {MAX_MODEL_SIZE:,}", getattr(m, f_), f_, where)
    if m.experts_per_token > m.routed_experts:
        raise AfdError(f"{where}: TopK ({m.experts_per_token}) exceeds the routed experts "
                       f"({m.routed_experts})")
    if m.moe_layers > m.num_layers or m.dense_layers > m.num_layers:
        raise AfdError(f"{where}: moe_layers ({m.moe_layers}) and dense_layers ({m.dense_layers}) "
                       f"cannot exceed num_layers ({m.num_layers})")
    short = m.moe_layers + m.dense_layers < m.num_layers and not m.mixers and not m.moe_latent_size  # (1)
    if layer_sum and (m.moe_layers + m.dense_layers > m.num_layers or short):
        raise AfdError(f"{where}: moe_layers ({m.moe_layers}) + dense_layers ({m.dense_layers}) {'fall short of' if short else 'exceed'} "
                       f"num_layers ({m.num_layers})" + (": each layer of a model with one attention kind has an FFN block" if short else ""))
    if m.attention is not None:
        check_attention(m.attention, where, m.num_layers)
    for name, rank in (("attention.q_lora_rank", m.attention and m.attention.q_lora_rank),
                       ("attention.kv_lora_rank", m.attention and m.attention.kv_lora_rank),
                       ("moe_latent_size", m.moe_latent_size)):
        if rank and rank > m.hidden_size:   # a low-rank projection wider than what it compresses
            raise AfdError(f"{where}: {name} ({rank}) exceeds hidden_size ({m.hidden_size}): a latent is narrower")
    checks.integer(m.ffn_matrices, "ffn_matrices", where, lo=2, hi=3)
    if m.mixers and sum(g.layers for g in m.mixers) != m.num_layers:
        raise AfdError(f"{where}: the mixers' layers ({sum(g.layers for g in m.mixers)}) must add up to "
                       f"num_layers ({m.num_layers})")
    if m.weights_dtype is not None:
        try:
            dtype_bytes(m.weights_dtype)
        except AfdError as e:
            raise AfdError(f"{where}: weights_dtype: {e}") from None


# ----------------------------------------------------------------------------- grids

def stack(items: Sequence, axis: int, ndim: int, names: Sequence[str]):
    """The first item with each field of ``names`` replaced by an array over ``items``.

    The array lies along ``axis`` of ``ndim`` dimensions (size 1 elsewhere), so stacked devices
    and stacked models broadcast against each other in the formulas that take them.
    """
    items = list(items)
    shape = [1] * ndim
    shape[axis] = len(items)
    arrays = {n: np.array([getattr(x, n) for x in items], dtype=float).reshape(shape) for n in names}
    return replace(items[0], **arrays)
