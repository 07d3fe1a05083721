"""Plain GEMM operators of a decode step: dense FFN layers, shared experts, the router, the LM head.

Each is ``tokens`` rows through a weight matrix read once: ``2 * params * tokens`` FLOPs at the
rate of the weights' type and ``params * bytes`` of weights. With NVFP4 weights (``--weights fp4``)
the dense FFN and the shared experts run W4A4 at the FP4 rate, as the routed experts do
(:mod:`afdlib.evaluator.grouped_gemm`); the router (BF16) and the LM head (``lm_head``, BF16 by
default) keep their own types. A SwiGLU FFN of intermediate size I has ``3 H I`` parameters
(:func:`ffn_params`, the one home of that count).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from afdlib.evaluator.roofline import Work
from afdlib.inputs.specs import Model, Precision, dtype_bytes, matmul_tier

KERNELS_FFN = 3
"""Kernels of a SwiGLU FFN at decode: gate-up GEMM, activation, down GEMM."""
KERNELS_HEAD = 3
"""Kernels of the output: final norm, LM-head GEMM, sampling."""


def ffn_params(hidden_size: ArrayLike, intermediate_size: ArrayLike, count: ArrayLike = 1,
               matrices: int = 3) -> ArrayLike:
    """Parameters of ``count`` SwiGLU FFNs (dense layers', shared or routed experts): count * 3 H I
    (gate and up projections H x I each, down projection I x H); ``matrices`` 2 for an FFN without
    a gate (relu2: up and down, the model's ``ffn_matrices``)."""
    # left to right from the count: a fractional count (expected active experts) rounds as it always has
    return count * matrices * hidden_size * intermediate_size


def matmul_work(flops: ArrayLike, dtype: str, **rest) -> Work:
    """:class:`Work` of GEMMs whose weights are ``dtype``: ``flops`` in the tier that type runs at
    (:func:`afdlib.inputs.specs.matmul_tier`: NVFP4 at the FP4 rate, 1-byte types at FP8, else BF16),
    ``rest`` (bytes, fixed costs) as given."""
    return Work(**{f"flops_{matmul_tier(dtype)}": flops}, **rest)


def gemm_work(params: ArrayLike, tokens: ArrayLike, dtype: str) -> Work:
    """``tokens`` rows through ``params`` weights of type ``dtype`` (read once, at its bytes), at
    the rate of that type (:func:`matmul_work`)."""
    flops = 2.0 * np.asarray(params, dtype=float) * np.asarray(tokens, dtype=float)
    return matmul_work(flops, dtype, hbm_bytes=np.asarray(params, dtype=float) * dtype_bytes(dtype))


def dense_intermediate_size(model: Model) -> int:
    """FFN size of the dense layers; where the catalogue has none, the activated MoE width
    (K M plus the shared experts), an assumption the decode model reports."""
    return model.dense_intermediate_size or (model.experts_per_token * model.moe_intermediate_size
                                             + model.shared_experts * model.shared_size)


def dense_ffn_work(model: Model, precision: Precision, tokens: ArrayLike) -> Work:
    """One dense layer's FFN for ``tokens`` tokens (weights replicated on the GPU)."""
    return gemm_work(ffn_params(model.hidden_size, dense_intermediate_size(model), 1, model.ffn_matrices), tokens,
                     precision.weights)


def shared_experts_work(model: Model, precision: Precision, tokens: ArrayLike) -> Work:
    """One MoE layer's shared experts for ``tokens`` tokens (zero work for a model without)."""
    params = ffn_params(model.hidden_size, model.shared_size, model.shared_experts, model.ffn_matrices)
    return gemm_work(params, tokens, precision.weights)


def router_work(model: Model, tokens: ArrayLike) -> Work:
    """The gate: ``tokens`` x H x E in BF16 (small, kept for completeness)."""
    return gemm_work(model.hidden_size * model.routed_experts, tokens, "bf16")


def lm_head_work(model: Model, precision: Precision, tokens: ArrayLike) -> Work:
    """The LM head: ``tokens`` x H x vocabulary."""
    return gemm_work(model.hidden_size * model.vocab_size, tokens, precision.lm_head)
