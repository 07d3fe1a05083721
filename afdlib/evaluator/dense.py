"""Plain GEMM operators of a decode step: dense FFN layers, shared experts, the router, the LM head.

Each is ``tokens`` rows through a weight matrix read once: ``2 * params * tokens`` FLOPs and
``params * bytes`` of weights. A SwiGLU FFN of intermediate size I has ``3 H I`` parameters
(:func:`ffn_params`, the one home of that count).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from afdlib.evaluator.roofline import Work
from afdlib.inputs.specs import Model, Precision

KERNELS_FFN = 3
"""Kernels of a SwiGLU FFN at decode: gate-up GEMM, activation, down GEMM."""
KERNELS_HEAD = 3
"""Kernels of the output: final norm, LM-head GEMM, sampling."""


def ffn_params(hidden_size: ArrayLike, intermediate_size: ArrayLike, count: ArrayLike = 1) -> ArrayLike:
    """Parameters of ``count`` SwiGLU FFNs (dense layers', shared or routed experts): count * 3 H I
    (gate and up projections H x I each, down projection I x H)."""
    # left to right from the count: a fractional count (expected active experts) rounds as it always has
    return count * 3 * hidden_size * intermediate_size


def gemm_work(params: ArrayLike, tokens: ArrayLike, weight_bytes: float, fp8: bool) -> Work:
    """``tokens`` rows through ``params`` weights (read once), at FP8 or BF16."""
    flops = 2.0 * np.asarray(params, dtype=float) * np.asarray(tokens, dtype=float)
    return Work(flops_fp8=flops if fp8 else 0.0, flops_bf16=0.0 if fp8 else flops,
                hbm_bytes=np.asarray(params, dtype=float) * weight_bytes)


def dense_intermediate_size(model: Model) -> int:
    """FFN size of the dense layers; where the catalogue has none, the activated MoE width
    (K M plus the shared experts), an assumption the decode model reports."""
    return model.dense_intermediate_size or (model.experts_per_token * model.moe_intermediate_size
                                             + model.shared_experts * model.shared_size)


def dense_ffn_work(model: Model, precision: Precision, tokens: ArrayLike) -> Work:
    """One dense layer's FFN for ``tokens`` tokens (weights replicated on the GPU)."""
    return gemm_work(ffn_params(model.hidden_size, dense_intermediate_size(model)), tokens, precision.bytes("weights"),
                     precision.bytes("weights") <= 1)


def shared_experts_work(model: Model, precision: Precision, tokens: ArrayLike) -> Work:
    """One MoE layer's shared experts for ``tokens`` tokens (zero work for a model without)."""
    params = ffn_params(model.hidden_size, model.shared_size, model.shared_experts)
    return gemm_work(params, tokens, precision.bytes("weights"), precision.bytes("weights") <= 1)


def router_work(model: Model, tokens: ArrayLike) -> Work:
    """The gate: ``tokens`` x H x E in BF16 (small, kept for completeness)."""
    return gemm_work(model.hidden_size * model.routed_experts, tokens, 2.0, False)


def lm_head_work(model: Model, precision: Precision, tokens: ArrayLike) -> Work:
    """The LM head: ``tokens`` x H x vocabulary."""
    return gemm_work(model.hidden_size * model.vocab_size, tokens, precision.bytes("lm_head"),
                     precision.bytes("lm_head") <= 1)
