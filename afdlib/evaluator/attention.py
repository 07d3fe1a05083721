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
    if _hybrid(model):
        return _mixers_work(model, precision, requests, context, tokens_per_request)
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


def attention_kernels(model: Model) -> float:
    """Kernels one attention layer launches (projection GEMMs, norm/rope/cache write, core); hybrid
    models: the mixers' kernels per FFN block (module docstring)."""
    if _hybrid(model):
        per_layer = sum(g.layers * (layers.mixer_params(g, model.hidden_size)[1] + KERNELS_AROUND + KERNELS_CORE)
                        for g in mixers(model) if g.kind != "none")
        return per_layer / ffn_blocks(model) + (2 if model.moe_latent_size else 0)
    return projection_params(require_attention(model), model.hidden_size)[1] + KERNELS_AROUND + KERNELS_CORE


def attention_weight_bytes(model: Model, precision: Precision) -> float:
    """Bytes of one layer's attention projection weights."""
    return projection_params(require_attention(model), model.hidden_size)[0] * precision.bytes("attention")


def mixer_weight_bytes(model: Model, precision: Precision) -> float:
    """Bytes of every layer's token-mixer weights (attention projections; hybrid models: each
    kind's own, :func:`afdlib.inputs.layers.mixer_params`, and the latent MoE's projections)."""
    if _hybrid(model):
        params = sum(g.layers * layers.mixer_params(g, model.hidden_size)[0] for g in mixers(model))
        return (params + model.moe_layers * latent_params(model)) * precision.bytes("attention")
    return model.num_layers * attention_weight_bytes(model, precision)


def kv_cache_bytes(model: Model, precision: Precision, context: ArrayLike) -> np.ndarray:
    """Bytes of cache one request of ``context`` tokens holds over all layers (local layers keep
    at most their window; hybrid models: each kind's cache, plus the constant states)."""
    if _hybrid(model):
        c = np.asarray(context, dtype=float)
        cache = sum(g.layers * layers.cache_elements(g, c) for g in mixers(model)) * precision.bytes("kv_cache")
        return cache + state_bytes_per_request(model)
    att = require_attention(model)
    ctx = effective_context(att, model.num_layers, context)
    return att.kv_elements_per_token * model.num_layers * precision.bytes("kv_cache") * ctx


def state_bytes_per_request(model: Model) -> float:
    """Bytes of constant recurrent and convolution state one request holds over all layers."""
    return float(sum(g.layers * layers.state_bytes(g) for g in mixers(model)))


def mixers(model: Model) -> tuple:
    """The model's layers by mixer: its ``mixers``, else those of its one attention."""
    return model.mixers or layers.legacy_mixers(model.attention, model.num_layers)


def _hybrid(model: Model) -> bool:
    """Whether the model takes the per-kind path (hybrid mixers or a latent MoE); the others keep
    the one-attention formulas above (the same numbers for the same layers)."""
    return bool(model.mixers) or bool(model.moe_latent_size)


def ffn_blocks(model: Model) -> int:
    """FFN blocks (MoE and dense) of the model: the attention stages a step charges."""
    return max(model.moe_layers + model.dense_layers, 1)


def latent_params(model: Model) -> int:
    """Weights of one MoE layer's latent projections (H x latent down and up; 0 without)."""
    return 2 * model.hidden_size * model.moe_latent_size


def _mixers_work(model: Model, precision: Precision, requests, context, tokens_per_request) -> tuple[Work, Work]:
    """(projections, core) work of a hybrid model's mixers per FFN block (module docstring)."""
    req = np.asarray(requests, dtype=float)
    tokens = req * np.asarray(tokens_per_request, dtype=float)
    h, blocks = model.hidden_size, ffn_blocks(model)
    params = sum(g.layers * layers.mixer_params(g, h)[0] for g in mixers(model)) / blocks
    params += latent_params(model) * model.moe_layers / blocks
    proj = matmul_work(2.0 * params * tokens, precision.attention, hbm_bytes=params * precision.bytes("attention")
                       + tokens * h * 2 * precision.bytes("combine"))
    flops, nbytes = 0.0, 0.0
    for g in mixers(model):
        d_qk, d_v = (0, 0) if g.attention is None else layers.core_dims(g)
        flops = flops + g.layers * layers.core_flops_per_token(g, context, d_qk, d_v)
        nbytes = nbytes + g.layers * layers.core_bytes(g, context, precision.bytes("kv_cache"))
    core = Work(flops_bf16=flops / blocks * tokens, hbm_bytes=nbytes / blocks * req)
    return proj, core
