"""The EP side: HFU of one GPU's grouped GEMMs against tokens per expert (paper Fig. 3).

Each local expert's two GEMMs take their roofline time: reading its FP8 weights
(3 H M bytes) or computing 6 n H M FLOPs, whichever is longer. A grouped GEMM runs the
experts one after another, so its time is the sum. Below the ridge
(n* = FLOPS / (2 BW_mem) tokens per expert, FP8) an expert is memory bound and its weight read is
paid in full however few tokens it has; skew therefore lowers HFU at the same average load.
H and M cancel out of the HFU; activation bytes are neglected, as in the paper.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from afdlib.errors import AfdError
from afdlib.evaluator.roofline import Work, tier_times
from afdlib.routing.popularity import zipf_popularity

WEIGHT_BYTES_PER_PARAM = 1.0  # FP8 routed experts


def grouped_gemm_flops(tokens: ArrayLike, hidden_size: ArrayLike, moe_intermediate_size: ArrayLike) -> np.ndarray:
    """FLOPs of the two grouped GEMMs for ``tokens`` token-expert pairs: 6 * B * H * M."""
    # the constant factor first: on grids H and M are small arrays, the tokens the large one
    return np.asarray(tokens, dtype=float) * (6.0 * np.asarray(hidden_size) * np.asarray(moe_intermediate_size))


def expert_weight_bytes(n_local_experts: ArrayLike, hidden_size: ArrayLike, moe_intermediate_size: ArrayLike,
                        bytes_per_param: float = WEIGHT_BYTES_PER_PARAM) -> np.ndarray:
    """Bytes of one layer's routed-expert weights on one GPU: 3 * G * H * M * bytes/param."""
    return np.asarray(n_local_experts, dtype=float) * (3.0 * bytes_per_param * np.asarray(hidden_size)
                                                        * np.asarray(moe_intermediate_size))


def ridge_tokens_per_expert(peak_flops: ArrayLike, hbm_bandwidth: ArrayLike,
                            bytes_per_param: float = 1.0) -> np.ndarray:
    """Tokens per expert where the weight read and the compute take equal time: FLOPS * b / (2 BW)."""
    return np.asarray(peak_flops, dtype=float) * bytes_per_param / (2.0 * np.asarray(hbm_bandwidth, dtype=float))


def expert_work(tokens_per_expert: ArrayLike, hidden_size: ArrayLike, moe_intermediate_size: ArrayLike,
                bytes_per_param: float = 1.0) -> Work:
    """Work of each expert's two GEMMs: 6 n H M FLOPs, 3 H M weight bytes (none for an idle expert)."""
    n = np.asarray(tokens_per_expert, dtype=float)
    weights = 3.0 * np.asarray(hidden_size, dtype=float) * np.asarray(moe_intermediate_size, dtype=float)
    return Work(flops_fp8=grouped_gemm_flops(n, hidden_size, moe_intermediate_size),
                hbm_bytes=np.where(n > 0, weights * bytes_per_param, 0.0))


def grouped_gemm_hfu(tokens_per_expert: ArrayLike, hardware, bytes_per_param: float = 1.0,
                     ofu: float = 1.0) -> np.ndarray:
    """HFU of a grouped GEMM over the last axis (one entry per local expert, any token counts).

    Each expert is one operator of the evaluator (:func:`afdlib.evaluator.roofline.tier_times`: the longer of
    its weight read and its compute at ``ofu`` of peak); the experts run one after another. An
    expert with no tokens is skipped (its weights are not read). H and M cancel (set to 1).
    """
    n = np.asarray(tokens_per_expert, dtype=float)
    if np.any(n < 0):
        raise AfdError("token counts must be non-negative")
    work = expert_work(n, 1.0, 1.0, bytes_per_param)
    total = tier_times(work, hardware, ofu).max(axis=0).sum(axis=-1)
    flops = np.asarray(work.flops_fp8).sum(axis=-1)
    return np.divide(flops, hardware.flops * total, out=np.zeros_like(total), where=total > 0)


def skewed_tokens(mean_tokens: ArrayLike, n_local_experts: int, zipf_exponent: ArrayLike = 0.0) -> np.ndarray:
    """Per-expert token counts with a given mean and Zipf skew; shape (..., n_local_experts).

    ``mean_tokens`` and ``zipf_exponent`` broadcast against each other.
    """
    mean, s = np.broadcast_arrays(np.asarray(mean_tokens, dtype=float), np.asarray(zipf_exponent, dtype=float))
    return mean[..., None] * n_local_experts * zipf_popularity(n_local_experts, s)


def ep_tokens_per_expert(tokens_per_gpu_s: float, tokens_per_user_s: float, tokens_per_request_step: float,
                         n_gpus: int, experts_per_token: int, physical_experts: int) -> float:
    """Average tokens each (physical) expert sees per decode step in an EP deployment.

    requests per GPU = throughput per GPU / rate per user; each request feeds
    ``tokens_per_request_step`` tokens per step (2 with one MTP draft); every token visits K
    experts spread over the deployment's physical (routed + redundant) experts.
    """
    requests = tokens_per_gpu_s / tokens_per_user_s
    return requests * tokens_per_request_step * n_gpus * experts_per_token / physical_experts


KERNELS_ROUTED = 5
"""Kernels of the routed experts at decode: gate (router GEMM + top-k), two grouped GEMMs, activation,
(de)quantisation of the activations."""


def active_experts(pairs: ArrayLike, local_experts: ArrayLike) -> np.ndarray:
    """Expected local experts that receive at least one of ``pairs`` token-expert pairs (uniform
    routing: G (1 - exp(-pairs / G))); only these read their weights."""
    g = np.asarray(local_experts, dtype=float)
    return g * -np.expm1(-np.asarray(pairs, dtype=float) / g)


def routed_experts_work(model, precision, pairs: ArrayLike, local_experts: ArrayLike) -> Work:
    """Work of one GPU's routed experts in one MoE layer at decode: ``pairs`` token-expert pairs
    over ``local_experts`` experts (6 pairs H M FLOPs; the weights of the active experts; the
    activations in and out at the wire's data types)."""
    p = np.asarray(pairs, dtype=float)
    h, m = model.hidden_size, model.moe_intermediate_size
    return Work(flops_fp8=grouped_gemm_flops(p, h, m),
                hbm_bytes=active_experts(p, local_experts) * 3.0 * h * m * precision.bytes("weights")
                + p * h * precision.wire_bytes)
