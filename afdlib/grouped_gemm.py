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

from .errors import AfdError
from .routing import zipf_popularity


def ridge_tokens_per_expert(peak_flops: ArrayLike, hbm_bandwidth: ArrayLike,
                            bytes_per_param: float = 1.0) -> np.ndarray:
    """Tokens per expert where the weight read and the compute take equal time: FLOPS * b / (2 BW)."""
    return np.asarray(peak_flops, dtype=float) * bytes_per_param / (2.0 * np.asarray(hbm_bandwidth, dtype=float))


def grouped_gemm_hfu(tokens_per_expert: ArrayLike, peak_flops: float, hbm_bandwidth: float,
                     bytes_per_param: float = 1.0, ofu: float = 1.0) -> np.ndarray:
    """HFU of a grouped GEMM over the last axis (one entry per local expert, any token counts).

    An expert with no tokens is skipped (its weights are not read). ``ofu`` scales the compute
    roof (1.0: the roofline; a measured matmul efficiency gives a practical ceiling).
    """
    n = np.asarray(tokens_per_expert, dtype=float)
    if np.any(n < 0):
        raise AfdError("token counts must be non-negative")
    ridge = ridge_tokens_per_expert(peak_flops, hbm_bandwidth, bytes_per_param)
    # time of each expert in units of one memory-bound weight read
    t = np.where(n > 0, np.maximum(n / (ridge * ofu), 1.0), 0.0)
    total = t.sum(axis=-1)
    return np.divide(n.sum(axis=-1) / ridge, total, out=np.zeros_like(total), where=total > 0)


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
