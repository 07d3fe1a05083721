"""Layers by token mixer: what each kind of layer holds and costs, per layer.

A model is a sequence of layers, each with a token mixer; :class:`Mixer` is one group of
``layers`` layers of the same kind (a :class:`~afdlib.inputs.specs.Model`'s ``mixers``):

* ``attention``: full attention of an :class:`~afdlib.inputs.specs.Attention` family (MLA, GQA,
  MHA, MFA): its cache grows by ``kv_elements_per_token`` per token;
* ``window``: sliding-window (or chunked) attention with its own heads: the cache keeps the last
  ``window`` tokens;
* ``compressed``: DeepSeek-V4's compressed attention: a sliding window of ``window`` tokens plus one
  cache entry per ``compress_ratio`` tokens (``compress_ratio`` 0: the window alone); where the
  layer has an indexer (``index_topk`` > 0: compressed *sparse* attention) it keeps
  ``index_head_dim`` indexer-key elements per entry, scores every entry with ``index_heads`` heads
  and attends to the ``index_topk`` it selects. DeepSeek-V3.2's sparse attention (DSA) is the case
  ``compress_ratio`` 1 without a window: every token an entry, top 2,048 attended;
* ``linear``: linear attention (Gated DeltaNet: Qwen3-Next, Qwen3.5; Kimi Delta Attention): a
  recurrent state of ``value_heads x key_head_dim x value_head_dim`` per request, no cache;
* ``mamba``: Mamba-2 (Nemotron-H, Nemotron-3): a state of ``heads x head_dim x state_size``;
* ``none``: no mixer (the MoE and MLP blocks of a Nemotron-H layout).

Linear and Mamba layers also keep a short-convolution state ((``conv_kernel`` - 1) inputs of their
convolved channels); both states are per request and constant in the context. The recurrent state is
kept at ``state_dtype`` (the config's ``mamba_ssm_dtype`` / ``mamba_ssm_cache_dtype``, FP32 in the
published Qwen3.5 and Nemotron-3 files), the convolution state at BF16 (the activations' type).

Per layer and request, every kind gives (functions below, plain numbers, no hardware):
:func:`cache_elements` (cache at a context: grows with it, a window caps it), :func:`state_bytes`
(constant), :func:`mixer_params` (weights), :func:`core_flops_per_token` and :func:`core_bytes` (the
mixer's own work beyond its projection GEMMs). The decode model (:mod:`afdlib.evaluator.attention`)
turns them into work.

Approximations (each small against the projections or the cache, stated so a reader can weigh
them): a linear layer's recurrent update costs 8 FLOPs per state element and token (decay, key
read-out, rank-1 update, query read-out), a Mamba-2 layer's 6 (decay, input, read-out); each state
is read and written once per step. The decode model times these cores as it times attention's
(BF16 rate, the attention kernels' fitted fractions): at about one FLOP per state byte they are
bound by HBM on every device, so neither the rate nor the FP32 arithmetic changes their time. DeepSeek-V4's compressor is two H x head_dim projections per
compressed layer (one more pair for the overlapping ratio-4 compressor); its pending tokens (fewer
than a ratio) are left out of the state.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from afdlib.errors import AfdError
from afdlib.inputs import checks
from afdlib.inputs.specs import Attention, dtype_bytes

MIXER_KINDS = ("attention", "window", "compressed", "linear", "mamba", "none")
CONV_STATE_BYTES = 2.0
"""Bytes per element of the short-convolution state: the activations' type, BF16."""
LINEAR_FLOPS_PER_STATE = 8
MAMBA_FLOPS_PER_STATE = 6


@dataclass(frozen=True)
class Mixer:
    """``layers`` layers whose token mixer is of one ``kind`` (:data:`MIXER_KINDS`, module docstring).

    Attention kinds carry their ``attention`` (heads, dimensions: a window's own KV heads); linear
    and Mamba kinds their heads and dimensions: ``heads`` (Mamba heads; linear: value heads),
    ``key_heads`` (linear), ``head_dim`` (Mamba head; linear: value head dim), ``key_head_dim``
    (linear), ``state_size`` (Mamba), ``groups`` (Mamba B/C groups), ``conv_kernel``;
    ``gate_params`` extra projection weights per layer beyond the kind's own (Kimi Delta
    Attention's full-rank gates). ``shared_kv``: keys and values are one cached tensor
    (DeepSeek-V4; Gemma-4's ``attention_k_eq_v`` full layers): ``num_kv_heads x head_dim`` per
    entry. ``o_lora_rank``, ``o_groups``: a grouped low-rank output projection (DeepSeek-V4).
    """

    kind: str
    layers: int
    attention: Attention | None = None
    window: int = 0
    compress_ratio: int = 0
    index_topk: int = 0
    index_heads: int = 0
    index_head_dim: int = 0
    heads: int = 0
    key_heads: int = 0
    head_dim: int = 0
    key_head_dim: int = 0
    state_size: int = 0
    groups: int = 0
    conv_kernel: int = 0
    gate_params: int = 0
    shared_kv: bool = False
    o_lora_rank: int = 0
    o_groups: int = 0
    state_dtype: str = "bf16"

    def __post_init__(self):
        checks.one_of(self.kind, MIXER_KINDS, "mixer kind")
        for name in ("layers", "window", "compress_ratio", "index_topk", "index_heads", "index_head_dim", "heads",
                     "key_heads", "head_dim", "key_head_dim", "state_size", "groups", "conv_kernel", "gate_params",
                     "o_lora_rank", "o_groups"):
            checks.integer(getattr(self, name), f"mixer {self.kind} {name}", lo=0)
        dtype_bytes(self.state_dtype)
        if self.kind in ("attention", "window", "compressed") and self.attention is None:
            raise AfdError(f"a {self.kind} mixer needs its attention (heads, dimensions)")
        if self.kind == "window" and self.window < 1:
            raise AfdError("a window mixer needs its window (tokens kept)")
        if self.kind == "compressed" and self.window < 1 and self.compress_ratio < 1:
            raise AfdError("a compressed mixer needs a window or a compression ratio")
        if self.kind == "linear" and not (self.heads and self.key_heads and self.head_dim and self.key_head_dim):
            raise AfdError("a linear-attention mixer needs its key and value heads and head dimensions")
        if self.kind == "mamba" and not (self.heads and self.head_dim and self.state_size and self.groups):
            raise AfdError("a Mamba-2 mixer needs its heads, head dimension, state size and groups")

    @property
    def kv_elements_per_entry(self) -> int:
        """Cache elements per cached token (attention kinds; 0 for the others)."""
        if self.attention is None:
            return 0
        if self.shared_kv:
            return self.attention.num_kv_heads * self.attention.head_dim
        return self.attention.kv_elements_per_token

    @property
    def conv_channels(self) -> int:
        """Channels of the short convolution: linear q, k, v; Mamba x, B, C."""
        if self.kind == "linear":
            return 2 * self.key_heads * self.key_head_dim + self.heads * self.head_dim
        if self.kind == "mamba":
            return self.heads * self.head_dim + 2 * self.groups * self.state_size
        return 0

    @property
    def state_elements(self) -> int:
        """Recurrent-state elements per request (linear, Mamba; 0 for the others)."""
        if self.kind == "linear":
            return self.heads * self.key_head_dim * self.head_dim
        if self.kind == "mamba":
            return self.heads * self.head_dim * self.state_size
        return 0


def compressed_entries(mixer: Mixer, context: ArrayLike) -> np.ndarray:
    """Cache entries of one compressed layer at ``context`` (window plus one entry per ratio)."""
    c = np.asarray(context, dtype=float)
    window = np.minimum(c, mixer.window)
    return window + (c / mixer.compress_ratio if mixer.compress_ratio else 0.0)


def cache_elements(mixer: Mixer, context: ArrayLike) -> np.ndarray:
    """Cache elements one layer of ``mixer`` holds for one request of ``context`` tokens (the
    constant states excluded: :func:`state_bytes`)."""
    c = np.asarray(context, dtype=float)
    kv = mixer.kv_elements_per_entry
    if mixer.kind == "attention":
        return kv * c
    if mixer.kind == "window":
        return kv * np.minimum(c, mixer.window)
    if mixer.kind == "compressed":
        compressed = c / mixer.compress_ratio if mixer.compress_ratio else 0.0
        return kv * compressed_entries(mixer, c) + indexer_key_elements(mixer) * compressed
    return 0.0 * c


def indexer_key_elements(mixer: Mixer) -> int:
    """Indexer-key elements a compressed layer keeps per compressed entry (0 without an indexer)."""
    return mixer.index_head_dim if mixer.index_topk else 0


def kv_elements_per_token(mixer: Mixer) -> float:
    """Cache elements one layer adds per token at long context (a window adds none)."""
    if mixer.kind == "attention":
        return float(mixer.kv_elements_per_entry)
    if mixer.kind == "compressed" and mixer.compress_ratio:
        return (mixer.kv_elements_per_entry + indexer_key_elements(mixer)) / mixer.compress_ratio
    return 0.0


def window_elements(mixer: Mixer) -> float:
    """Cache elements a full window holds per layer and request (window and compressed kinds)."""
    return float(mixer.kv_elements_per_entry * mixer.window) if mixer.kind in ("window", "compressed") else 0.0


def state_bytes(mixer: Mixer) -> float:
    """Bytes of constant state per layer and request: the recurrent state at ``state_dtype`` and
    the convolution state at BF16 (linear and Mamba kinds)."""
    return (mixer.state_elements * dtype_bytes(mixer.state_dtype)
            + mixer.conv_channels * max(mixer.conv_kernel - 1, 0) * CONV_STATE_BYTES)


def attention_params(att: Attention, hidden: int) -> tuple[int, int]:
    """(weights, GEMM kernels) of one attention layer's projections (MLA absorbed, GQA/MHA, MFA)."""
    h, n, hd = hidden, att.num_heads, att.head_dim
    v = att.v_head_dim or hd
    q = h * att.q_lora_rank + att.q_lora_rank * n * hd if att.q_lora_rank else h * n * hd
    if att.family == "mla":
        nope = hd - att.qk_rope_head_dim
        kv = h * (att.kv_lora_rank + att.qk_rope_head_dim)
        absorbed = n * nope * att.kv_lora_rank + n * att.kv_lora_rank * v
        return q + kv + absorbed + n * v * h, (2 if att.q_lora_rank else 1) + 4
    kv = h * att.num_kv_heads * (hd + v)
    return q + kv + n * v * h, (2 if att.q_lora_rank else 1) + 2


def mixer_params(mixer: Mixer, hidden: int) -> tuple[int, int]:
    """(weights, GEMM kernels) of one layer's mixer.

    Linear (Gated DeltaNet): q, k, v and output gate z projections (2 x key + 2 x value width),
    decay and beta (2 per value head), the convolution, the output projection. Mamba-2: the in
    projection (z, x, B, C, dt), the convolution, the output projection. Compressed: the
    attention's projections, the compressor (module docstring) and the indexer (its queries from
    the query latent, one key head, one weight per head).
    """
    h = hidden
    if mixer.kind == "none":
        return 0, 0
    if mixer.kind == "linear":
        key, value = mixer.key_heads * mixer.key_head_dim, mixer.heads * mixer.head_dim
        inner = h * (2 * key + 2 * value) + h * 2 * mixer.heads
        conv = mixer.conv_channels * mixer.conv_kernel
        return inner + conv + value * h + mixer.gate_params + 3 * mixer.heads + mixer.head_dim, 3
    if mixer.kind == "mamba":
        inner = mixer.heads * mixer.head_dim
        in_proj = h * (2 * inner + 2 * mixer.groups * mixer.state_size + mixer.heads)
        conv = mixer.conv_channels * mixer.conv_kernel
        return in_proj + conv + inner * h + 3 * mixer.heads + inner, 2
    att = mixer.attention
    params, gemms = attention_params(att, h)
    if mixer.shared_kv or mixer.o_lora_rank:
        v = att.v_head_dim or att.head_dim
        q = h * att.q_lora_rank + att.q_lora_rank * att.num_heads * att.head_dim if att.q_lora_rank else \
            h * att.num_heads * att.head_dim
        kv = h * att.num_kv_heads * (att.head_dim if mixer.shared_kv else att.head_dim + v)
        out = (att.num_heads * v * mixer.o_lora_rank + max(mixer.o_groups, 1) * mixer.o_lora_rank * h
               if mixer.o_lora_rank else att.num_heads * v * h)
        params = q + kv + out
    params += mixer.gate_params          # an output gate (fused into the query projection: no GEMM of its own)
    if mixer.kind == "compressed" and mixer.compress_ratio:
        d = mixer.attention.head_dim
        if mixer.compress_ratio > 1:     # the compressor (ratio 1: every token its own entry, DSA)
            params += 2 * h * d * (2 if mixer.index_topk else 1)
        if mixer.index_topk:
            q_width = mixer.attention.q_lora_rank or h
            params += q_width * mixer.index_heads * mixer.index_head_dim + h * mixer.index_head_dim + h * mixer.index_heads
            gemms += 3
    return params, gemms


def core_dims(att: Attention) -> tuple[int, int]:
    """(score dimension, value dimension) of one head against the cache (MLA: absorbed, the latent)."""
    if att.family == "mla":
        return att.kv_lora_rank + att.qk_rope_head_dim, att.kv_lora_rank
    return att.head_dim, att.v_head_dim or att.head_dim


def attended(mixer: Mixer, context: ArrayLike) -> np.ndarray:
    """Cache entries one query attends to at ``context`` (an indexer's top-k caps the compressed ones)."""
    c = np.asarray(context, dtype=float)
    if mixer.kind == "attention":
        return c
    if mixer.kind == "window":
        return np.minimum(c, mixer.window)
    if mixer.kind == "compressed":
        compressed = c / mixer.compress_ratio if mixer.compress_ratio else 0.0 * c
        if mixer.index_topk:
            compressed = np.minimum(compressed, mixer.index_topk)
        return np.minimum(c, mixer.window) + compressed
    return 0.0 * c


def core_flops_per_token(mixer: Mixer, context: ArrayLike, d_qk: int = 0, d_v: int = 0) -> np.ndarray:
    """FLOPs of one layer's mixer core per token at ``context``, beyond its projections.

    Attention kinds: ``2 heads (d_qk + d_v)`` per attended entry (``d_qk``, ``d_v``: the head's
    dimensions against the cache), plus the indexer's ``2 index_heads index_head_dim`` per compressed
    entry scored. Linear and Mamba: their FLOPs per state element (module docstring).
    """
    c = np.asarray(context, dtype=float)
    if mixer.kind == "linear":
        return LINEAR_FLOPS_PER_STATE * mixer.state_elements + 0.0 * c
    if mixer.kind == "mamba":
        return MAMBA_FLOPS_PER_STATE * mixer.state_elements + 0.0 * c
    if mixer.kind == "none":
        return 0.0 * c
    flops = 2.0 * mixer.attention.num_heads * (d_qk + d_v) * attended(mixer, c)
    if mixer.kind == "compressed" and mixer.index_topk and mixer.compress_ratio:
        flops = flops + 2.0 * mixer.index_heads * mixer.index_head_dim * c / mixer.compress_ratio
    return flops


def core_bytes(mixer: Mixer, context: ArrayLike, kv_bytes: float) -> np.ndarray:
    """HBM bytes of one layer's mixer core per request and step: the cache entries attended (and
    the indexer keys scored) at ``kv_bytes`` per element; the state read and written once."""
    c = np.asarray(context, dtype=float)
    if mixer.kind in ("linear", "mamba"):
        return 2.0 * state_bytes(mixer) + 0.0 * c
    if mixer.kind == "none":
        return 0.0 * c
    read = mixer.kv_elements_per_entry * attended(mixer, c)
    if mixer.kind == "compressed" and mixer.index_topk and mixer.compress_ratio:
        read = read + mixer.index_head_dim * c / mixer.compress_ratio
    return read * kv_bytes


def legacy_mixers(att: Attention | None, num_layers: int) -> tuple[Mixer, ...]:
    """The mixers of a model described by one :class:`Attention` (a catalogue entry): its full
    layers, and its ``local_layers`` as windows of ``local_window`` tokens with the same heads
    (built once per attention and layer count: every step evaluation reads them)."""
    try:
        return _legacy_mixers(att, num_layers)
    except TypeError:          # an attention or layer count holding arrays (a map's cells): not hashable
        return _legacy_mixers.__wrapped__(att, num_layers)


@lru_cache(maxsize=256)
def _legacy_mixers(att: Attention | None, num_layers: int) -> tuple[Mixer, ...]:
    if att is None:
        return ()
    local = att.local_layers if att.local_window else 0
    out = [Mixer("attention", num_layers - local, att)] if num_layers - local else []
    if local:
        out.append(Mixer("window", local, att, window=att.local_window))
    return tuple(out)


def model_mixers(model) -> tuple[Mixer, ...]:
    """A :class:`~afdlib.inputs.specs.Model`'s layers by mixer: its ``mixers``, else those of its one
    attention (:func:`legacy_mixers`). Every reading of a model's layers goes through here."""
    return model.mixers or legacy_mixers(model.attention, model.num_layers)


def parameter_counts(model) -> tuple[float, float]:
    """(total, active per token) parameters of a :class:`~afdlib.inputs.specs.Model`: embeddings
    (input and LM head, once where tied), every layer's mixer, dense FFNs, and per MoE layer the
    routed experts (all, or the K a token visits; in the latent width where there is one), the
    shared experts, the router and the latent projections. MTP layers, norms and biases left out.
    The active count leaves out the input embedding, a row lookup per token rather than a matmul (the
    LM head stays; a tied matrix counts once, as the head): DeepSeek-V3's 37B active is its 36.6B with
    the 0.9B head and without the 0.9B embedding."""
    h, mats = model.hidden_size, model.ffn_matrices
    groups = model_mixers(model)
    common = model.vocab_size * h * (1 if model.tied_embeddings else 2)
    common += sum(g.layers * mixer_params(g, h)[0] for g in groups)
    dense_size = model.dense_intermediate_size or (model.experts_per_token * model.moe_intermediate_size
                                                   + model.shared_experts * model.shared_size)
    common += model.dense_layers * mats * h * dense_size
    per_layer = (model.shared_experts * mats * h * model.shared_size + h * model.routed_experts
                 + 2 * h * model.moe_latent_size)
    expert = mats * model.routed_width * model.moe_intermediate_size
    total = common + model.moe_layers * (per_layer + model.routed_experts * expert)
    lookup = 0 if model.tied_embeddings else model.vocab_size * h
    active = common - lookup + model.moe_layers * (per_layer + model.experts_per_token * expert)
    return float(total), float(active)
