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
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from afdlib.errors import AfdError
from afdlib.evaluator.dense import matmul_work
from afdlib.evaluator.roofline import Work
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
    h, n, hd = hidden_size, att.num_heads, att.head_dim
    v = att.v_head_dim or hd
    if att.family == "mla":
        nope = hd - att.qk_rope_head_dim
        q = h * att.q_lora_rank + att.q_lora_rank * n * hd if att.q_lora_rank else h * n * hd
        kv = h * (att.kv_lora_rank + att.qk_rope_head_dim)
        absorbed = n * nope * att.kv_lora_rank + n * att.kv_lora_rank * v
        return q + kv + absorbed + n * v * h, (2 if att.q_lora_rank else 1) + 4
    q = h * att.q_lora_rank + att.q_lora_rank * n * hd if att.q_lora_rank else h * n * hd
    kv = h * att.num_kv_heads * (hd + v)
    return q + kv + n * v * h, (2 if att.q_lora_rank else 1) + 2


def core_dims(att: Attention) -> tuple[int, int]:
    """(score dimension, value dimension) of one head against the cache."""
    if att.family == "mla":
        return att.kv_lora_rank + att.qk_rope_head_dim, att.kv_lora_rank
    return att.head_dim, att.v_head_dim or att.head_dim


def effective_context(att: Attention, num_layers: int, context: ArrayLike) -> np.ndarray:
    """Cached tokens the average layer attends to: local layers see at most their window."""
    c = np.asarray(context, dtype=float)
    if not att.local_layers:
        return c
    local = att.local_layers / num_layers
    return (1 - local) * c + local * np.minimum(c, att.local_window)


def require_attention(model: Model) -> Attention:
    if model.attention is None:
        raise AfdError(f"model '{model.slug}' has no attention description (family, heads, dimensions); "
                       "add an attention: block to its catalogue entry")
    return model.attention


def attention_work(model: Model, precision: Precision, requests: ArrayLike, context: ArrayLike,
                   tokens_per_request: ArrayLike = 1) -> tuple[Work, Work]:
    """(projections, core) work of one attention layer on one GPU (see the module docstring)."""
    att = require_attention(model)
    req = np.asarray(requests, dtype=float)
    tokens = req * np.asarray(tokens_per_request, dtype=float)
    params, gemms = projection_params(att, model.hidden_size)
    proj_flops = 2.0 * params * tokens
    proj = matmul_work(proj_flops, precision.attention, hbm_bytes=params * precision.bytes("attention")
                       + tokens * model.hidden_size * 2 * precision.bytes("combine"))
    d_qk, d_v = core_dims(att)
    ctx = effective_context(att, model.num_layers, context)
    core_flops = 2.0 * att.num_heads * (d_qk + d_v) * ctx * tokens
    core = Work(flops_bf16=core_flops,    # BF16 compute even over an FP8 cache (module docstring)
                hbm_bytes=req * ctx * att.kv_elements_per_token * precision.bytes("kv_cache"))
    return proj, core


def attention_kernels(model: Model) -> int:
    """Kernels one attention layer launches (projection GEMMs, norm/rope/cache write, core)."""
    return projection_params(require_attention(model), model.hidden_size)[1] + KERNELS_AROUND + KERNELS_CORE


def attention_weight_bytes(model: Model, precision: Precision) -> float:
    """Bytes of one layer's attention projection weights."""
    return projection_params(require_attention(model), model.hidden_size)[0] * precision.bytes("attention")


def kv_cache_bytes(model: Model, precision: Precision, context: ArrayLike) -> np.ndarray:
    """Bytes of cache one request of ``context`` tokens holds over all layers (local layers keep
    at most their window)."""
    att = require_attention(model)
    ctx = effective_context(att, model.num_layers, context)
    return att.kv_elements_per_token * model.num_layers * precision.bytes("kv_cache") * ctx
