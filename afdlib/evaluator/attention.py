"""Attention at decode: the work of one layer for a batch of requests (one operator family).

Per layer and GPU, for ``requests`` requests each verifying ``tokens_per_request`` tokens (1, or
1 + MTP drafts) against ``context`` cached tokens:

* **projections**: ``2 * params * tokens`` FLOPs at the rate of the attention weights' data type
  (:func:`afdlib.evaluator.dense.matmul_work`), the weights read once (:func:`projection_params`);
* **core** (scores and values against the cache): the cache read once per request; FLOPs
  ``2 * heads * (d_qk + d_v) * context`` per token. MLA runs in the absorbed form: queries are
  mapped into the latent space, so each head scores against the ``kv_lora_rank + rope`` latent
  and reads values of ``kv_lora_rank`` (DeepSeek-V3: 2 x 128 x (576 + 512) = 278,528 FLOPs per
  token and cached position). The core runs at the BF16 rate whatever the cache's data type: the
  decode kernels (FlashMLA) read an FP8 cache, dequantize it to BF16 and compute in BF16
  (shared/reference/kernels.md section 2); an FP8 cache halves the bytes, not the FLOP time.

Layers with a local window (sliding or chunked attention) see ``min(context, window)`` tokens;
the result is the average layer. Everything broadcasts over numpy arrays.

**Hybrid models** (a model with ``mixers``: :mod:`afdlib.inputs.layers`): each kind of layer
costs its own work: its projections (:func:`afdlib.inputs.layers.mixer_params`) and its core
(attention kinds: the entries they attend to, a window's capped cache, an indexer's scoring; linear
and Mamba layers: their recurrent update, their state read and written once per step). The
attention stage before each FFN block (MoE or dense) carries the mixers' total over the model
divided by the FFN blocks (Nemotron-H has 40 Mamba and 8 attention blocks for 40 MoE blocks); the
cache per request sums the layers' caches, plus their constant states. Latent MoE: the down and up
projections to the latent width run here, on the tokens' own GPUs, beside the router.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from afdlib.errors import AfdError
from afdlib.evaluator.dense import matmul_work
from afdlib.evaluator.roofline import Work
from afdlib.inputs import layers
from afdlib.inputs.specs import Attention, Model, Precision

KERNELS_CORE = 2
"""Kernels of the core: the attention kernel and its split-KV combine (FlashMLA/FlashDecoding)."""
KERNELS_AROUND = 3
"""Kernels around the projections: input norm, rotary embedding, cache write."""


def projection_params(att: Attention, hidden_size: int) -> tuple[int, int]:
    """(weight elements, GEMM kernels) of one layer's attention projections.

    * MLA (absorbed): q down/up (or one q projection without ``q_lora_rank``), the joint KV down
      projection (latent + rope key), the absorbed key and value up-projections (per head,
      ``qk_nope x kv_lora`` and ``kv_lora x v``), the output projection;
    * GQA / MHA: q, k, v and output;
    * MFA: low-rank q (down, up), one shared k and v head, output.
    """
    return layers.attention_params(att, hidden_size)


def require_attention(model: Model) -> Attention:
    if model.attention is None:
        raise AfdError(f"model '{model.slug}' has no attention description (family, heads, dimensions); "
                       "add an attention: block to its catalogue entry")
    return model.attention


def effective_context(att: Attention, num_layers: int, context: ArrayLike) -> np.ndarray:
    """Cached tokens the average layer of a one-attention model attends to: local layers see at most
    their window (:func:`attention_work`'s core for those models)."""
    c = np.asarray(context, dtype=float)
    if not att.local_layers:
        return c
    local = att.local_layers / num_layers
    return (1 - local) * c + local * np.minimum(c, att.local_window)


def attention_work(model: Model, precision: Precision, requests: ArrayLike, context: ArrayLike,
                   tokens_per_request: ArrayLike = 1) -> tuple[Work, Work]:
    """(projections, core) work of one attention stage on one GPU: the mixers' projections and cores
    over the model divided by its :func:`stages` (module docstring).

    The core of a one-attention catalogue model (no ``mixers``, no latent MoE) keeps its own
    arithmetic (:func:`effective_context`): the requests times the average layer's context, where the
    per-kind sum multiplies the requests last; the two agree to the last bit or so, not exactly
    (MLA's 576 cached elements at a fractional request count; a local window's averaging), and the
    published numbers are the one-attention reading's."""
    req = np.asarray(requests, dtype=float)
    tokens = req * np.asarray(tokens_per_request, dtype=float)
    h, n = model.hidden_size, stages(model)
    params = sum(g.layers * layers.mixer_params(g, h)[0] for g in mixers(model)) / n
    params += latent_params(model) * model.moe_layers / n
    proj = matmul_work(2.0 * params * tokens, precision.attention, hbm_bytes=params * precision.bytes("attention")
                       + tokens * h * 2 * precision.bytes("combine"))
    kv = precision.bytes("kv_cache")
    if not _per_kind(model):
        att = model.attention
        d_qk, d_v = layers.core_dims(att)
        ctx = effective_context(att, model.num_layers, context)
        return proj, _core(2.0 * att.num_heads * (d_qk + d_v) * ctx * tokens,
                           req * ctx * att.kv_elements_per_token * kv, precision)
    flops = 0.0
    for g in mixers(model):
        d_qk, d_v = (0, 0) if g.attention is None else layers.core_dims(g.attention)
        flops = flops + g.layers * layers.core_flops_per_token(g, context, d_qk, d_v)
    return proj, _core(flops / n * tokens, core_bytes_per_request(model, precision, context) / n * req, precision)


def _core(flops, nbytes, precision: Precision) -> Work:
    """The core's work: its FLOPs at the kernel's compute type (``precision.attention_compute``:
    BF16 even over an FP8 cache, as FlashMLA dequantizes it; FP8 for an FP8 kernel), its bytes at
    the cache's."""
    if precision.attention_compute == "fp8":
        return Work(flops_fp8=flops, hbm_bytes=nbytes)
    return Work(flops_bf16=flops, hbm_bytes=nbytes)


def core_bytes_per_request(model: Model, precision: Precision, context: ArrayLike) -> np.ndarray:
    """HBM bytes every layer's mixer core reads (and, for states, writes) per request and decode step
    at ``context`` (:func:`afdlib.inputs.layers.core_bytes`; projections' weights aside)."""
    return sum(g.layers * layers.core_bytes(g, context, precision.bytes("kv_cache")) for g in mixers(model))


def attention_kernels(model: Model) -> float:
    """Kernels one attention stage launches: the mixers' projection GEMMs, norm/rope/cache write and
    core, over the model per :func:`stages` (module docstring)."""
    per_layer = sum(g.layers * (layers.mixer_params(g, model.hidden_size)[1] + KERNELS_AROUND + KERNELS_CORE)
                    for g in mixers(model) if g.kind != "none")
    return per_layer / stages(model) + (2 if model.moe_latent_size else 0)


def mixer_weight_bytes(model: Model, precision: Precision) -> float:
    """Bytes of every layer's token-mixer weights (each kind's own,
    :func:`afdlib.inputs.layers.mixer_params`, and the latent MoE's projections)."""
    params = sum(g.layers * layers.mixer_params(g, model.hidden_size)[0] for g in mixers(model))
    return (params + model.moe_layers * latent_params(model)) * precision.bytes("attention")


def kv_cache_bytes(model: Model, precision: Precision, context: ArrayLike) -> np.ndarray:
    """Bytes of cache one request of ``context`` tokens holds over all layers: each kind's cache
    (a window keeps at most its tokens), plus the constant states."""
    c = np.asarray(context, dtype=float)
    cache = sum(g.layers * layers.cache_elements(g, c) for g in mixers(model)) * precision.bytes("kv_cache")
    return cache + state_bytes_per_request(model)


def state_bytes_per_request(model: Model) -> float:
    """Bytes of constant recurrent and convolution state one request holds over all layers."""
    return float(sum(g.layers * layers.state_bytes(g) for g in mixers(model)))


def mixers(model: Model) -> tuple:
    """The model's layers by mixer (:func:`afdlib.inputs.layers.model_mixers`); a model with neither
    ``mixers`` nor an attention description is refused."""
    if not model.mixers:
        require_attention(model)
    return layers.model_mixers(model)


def ffn_blocks(model: Model) -> int:
    """FFN blocks (MoE and dense) of the model."""
    return max(model.moe_layers + model.dense_layers, 1)


def stages(model: Model) -> int:
    """Attention stages a step charges, over which the mixers' totals are spread: the FFN blocks for a
    model read by kind (``mixers`` or a latent MoE), one per layer for a one-attention catalogue model
    (whose FFN blocks may number otherwise: its own per-layer reading is kept)."""
    return ffn_blocks(model) if _per_kind(model) else model.num_layers


def _per_kind(model: Model) -> bool:
    return bool(model.mixers) or bool(model.moe_latent_size)


def latent_params(model: Model) -> int:
    """Weights of one MoE layer's latent projections (H x latent down and up; 0 without)."""
    return 2 * model.hidden_size * model.moe_latent_size
