"""The EP side: HFU of one GPU's grouped GEMMs against tokens per expert (paper Fig. 3).

Each local expert's two GEMMs take their roofline time: reading its weights (3 H M bytes at FP8,
:func:`expert_weight_bytes`) or computing 6 n H M FLOPs, whichever is longer. The FLOPs run at the
rate of the weights' type (:func:`afdlib.evaluator.dense.matmul_work`): NVFP4 weights (0.5625 bytes
each) run W4A4 at the device's FP4 rate, as Blackwell's FP4 grouped-GEMM kernels do (they quantize the
activations to NVFP4); Hopper's weight-only FP4 kernels (W4A8, W4A16) are not modelled, and NVFP4
weights on a device without FP4 tensor cores are refused. A grouped GEMM runs
the experts one after another, so its time is the sum. Below the ridge
(n* = FLOPS / (2 BW_mem) tokens per expert, FP8) an expert is memory bound and its weight read is
paid in full however few tokens it has; skew therefore lowers HFU at the same average load.
H and M cancel out of the HFU; activation bytes are neglected, as in the paper.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from afdlib.errors import AfdError
from afdlib.evaluator.alltoall import token_wire_bytes
from afdlib.evaluator.dense import ffn_params, matmul_work
from afdlib.evaluator.roofline import Work, tier_times
from afdlib.inputs.specs import Precision
from afdlib.routing.popularity import zipf_popularity


def grouped_gemm_flops(tokens: ArrayLike, hidden_size: ArrayLike, moe_intermediate_size: ArrayLike,
                       matrices: int = 3) -> np.ndarray:
    """FLOPs of the two grouped GEMMs for ``tokens`` token-expert pairs: 6 * B * H * M (2 FLOPs per
    token and parameter, :func:`afdlib.evaluator.dense.ffn_params`; 4 B H M for two-matrix experts)."""
    # the constant factor first: on grids H and M are small arrays, the tokens the large one
    return np.asarray(tokens, dtype=float) * (2.0 * ffn_params(np.asarray(hidden_size), np.asarray(moe_intermediate_size),
                                                               1, matrices))


def expert_weight_bytes(n_experts: ArrayLike, hidden_size: ArrayLike, moe_intermediate_size: ArrayLike,
                        precision: Precision = Precision(), matrices: int = 3) -> np.ndarray:
    """Bytes of the weights of ``n_experts`` experts of one layer: n * 3 H M * b_w.

    Each expert is a SwiGLU FFN of 3 H M parameters (:func:`afdlib.evaluator.dense.ffn_params`)
    stored at b_w = ``precision.bytes("weights")`` bytes each (1 at the paper's FP8: one DeepSeek-V3
    expert, H = 7168, M = 2048, holds 44,040,192 bytes). ``n_experts`` may be fractional (the
    expected active experts) and any argument an array; pass ``shared_size`` as M for shared experts.
    Where the count is a large grid, pass 1 and multiply: one pass over the grid. ``matrices``: 2
    for two-matrix (relu2) experts.
    """
    return (ffn_params(hidden_size, moe_intermediate_size, np.asarray(n_experts, dtype=float), matrices)
            * precision.bytes("weights"))


def ridge_tokens_per_expert(peak_flops: ArrayLike, hbm_bandwidth: ArrayLike,
                            precision: Precision = Precision()) -> np.ndarray:
    """Tokens per expert where the weight read and the compute take equal time: FLOPS * b_w / (2 BW)."""
    return (np.asarray(peak_flops, dtype=float) * precision.bytes("weights")
            / (2.0 * np.asarray(hbm_bandwidth, dtype=float)))


def expert_work(tokens_per_expert: ArrayLike, hidden_size: ArrayLike, moe_intermediate_size: ArrayLike,
                precision: Precision = Precision()) -> Work:
    """Work of each expert's two GEMMs: 6 n H M FLOPs, :func:`expert_weight_bytes` of one expert
    (none for an idle expert)."""
    n = np.asarray(tokens_per_expert, dtype=float)
    return matmul_work(grouped_gemm_flops(n, hidden_size, moe_intermediate_size), precision.weights,
                       hbm_bytes=np.where(n > 0, expert_weight_bytes(1, hidden_size, moe_intermediate_size, precision),
                                          0.0))


def grouped_gemm_hfu(tokens_per_expert: ArrayLike, hardware, precision: Precision = Precision(),
                     ofu: float = 1.0) -> np.ndarray:
    """HFU of a grouped GEMM over the last axis (one entry per local expert, any token counts).

    Each expert is one operator of the evaluator (:func:`afdlib.evaluator.roofline.tier_times`: the longer of
    its weight read and its compute at ``ofu`` of peak); the experts run one after another. An
    expert with no tokens is skipped (its weights are not read). H and M cancel (set to 1). The
    HFU is against ``hardware.flops`` (the paper's peak, FP8): the GEMMs run at the rate of the
    weights' type, so the compute-bound plateau is that rate over ``flops`` (BF16: 0.5; NVFP4 on a
    B200: 9 / 4.5 = 2).
    """
    n = np.asarray(tokens_per_expert, dtype=float)
    if np.any(n < 0):
        raise AfdError("token counts must be non-negative")
    work = expert_work(n, 1.0, 1.0, precision)
    total = tier_times(work, hardware, ofu).max(axis=0).sum(axis=-1)
    flops = np.asarray(work.flops).sum(axis=-1)
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
    """Expected local experts that receive at least one of ``pairs`` token-expert pairs when a router
    sends each pair to a local expert at random (uniform routing: G (1 - exp(-pairs / G))); only these
    read their weights. The decode model's count for a deployment's routed experts (both designs).

    The kernel measurements the calibrated profile is fitted to route otherwise: see
    :func:`balanced_active_experts`. Both counts feed the one kernel curve the same way (the weights of
    the active experts, rows = pairs / active experts), each with the routing its tokens had."""
    g = np.asarray(local_experts, dtype=float)
    return g * -np.expm1(-np.asarray(pairs, dtype=float) / g)


def balanced_active_experts(pairs: ArrayLike, local_experts: ArrayLike) -> np.ndarray:
    """Local experts that receive ``pairs`` token-expert pairs dealt in turn, every expert one pair
    before any gets a second: min(G, pairs). The count of the routing that aiconfigurator's MoE kernel
    tables were measured with ("balanced", "uniform"), which ``scripts/fit_kernels.py`` fits the
    grouped-GEMM curve to. Its collector is not shipped; the tables' shape says it: their times grow
    with the pairs up to G and are flat from there (H100, SGLang's DeepEP MoE, DeepSeek-V3, EP 8, G =
    32: 165, 283, 529, 531, 530 us at 8, 16, 32, 64, 128 pairs), so every local expert reads its
    weights once the pairs reach G. Under :func:`active_experts` the weights read would still grow
    1.55 times from G to 4 G pairs (0.63 G to 0.98 G experts)."""
    return np.minimum(np.asarray(local_experts, dtype=float), np.asarray(pairs, dtype=float))


def routed_experts_work(model, precision, pairs: ArrayLike, local_experts: ArrayLike, active=active_experts) -> Work:
    """Work of one GPU's routed experts in one MoE layer at decode: ``pairs`` token-expert pairs
    over ``local_experts`` experts (6 pairs H M FLOPs; the weights of the active experts; the
    activations in and out at the wire's data types). ``active``: how many experts the pairs reach
    (:func:`active_experts`, a router's; :func:`balanced_active_experts`, pairs dealt in turn). A
    latent MoE's experts work in its latent width (``model.routed_width``), with its matrix count."""
    p = np.asarray(pairs, dtype=float)
    h, m, mats = model.routed_width, model.moe_intermediate_size, model.ffn_matrices
    return matmul_work(grouped_gemm_flops(p, h, m, mats), precision.weights,
                       hbm_bytes=expert_weight_bytes(active(p, local_experts), h, m, precision, mats)
                       + token_wire_bytes(p, h, precision))
