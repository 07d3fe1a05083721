"""The 3-batch-overlap time budget and bubble conditions (paper Eqs. 1-5), and FFN metrics.

Times are seconds. The pipeline overlaps ``n_bo`` micro-batches (3BO: attention of one, FFN of
another, communication of a third); each stage of each layer gets the budget ``t_B``.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from afdlib.errors import AfdError
from afdlib.inputs.specs import Budget

N_BO = Budget.micro_batches
"""Micro-batches in flight (three-batch overlap); the defaults are :class:`afdlib.inputs.specs.Budget`'s."""


def stage_budget(slo_s: ArrayLike, num_layers: ArrayLike, l_accept: ArrayLike = Budget.l_accept,
                 t_gap_s: ArrayLike = Budget.t_gap_s, n_bo: int = N_BO) -> np.ndarray:
    """Per-layer, per-micro-batch stage budget t_B in seconds (Eq. 1).

    ``SLO * L_accept = t_g + N_layers * N_BO * t_B``: a step producing ``L_accept`` tokens
    (MTP) must fit ``L_accept`` per-token SLOs; the fixed gap ``t_g`` (batch preparation,
    gaps) comes off the top and the rest is split over layers and the ``n_bo`` stages.
    Raises :class:`AfdError` where the gap alone uses the whole step.
    """
    slo, layers, acc, gap = (np.asarray(x, dtype=float) for x in (slo_s, num_layers, l_accept, t_gap_s))
    if np.any(slo <= 0) or np.any(acc <= 0) or np.any(gap < 0) or np.any(layers <= 0) or n_bo < 1:
        raise AfdError("SLO, L_accept and layers must be positive, the gap non-negative")
    t_b = (slo * acc - gap) / (layers * n_bo)
    if np.any(t_b <= 0):
        raise AfdError(f"no time left per stage: SLO x L_accept ({float(np.min(slo * acc)) * 1e3:.1f} ms) "
                       f"does not exceed the fixed gap t_g ({float(np.max(gap)) * 1e3:.1f} ms)")
    return t_b


def fits_budget(t_a: ArrayLike, t_f: ArrayLike, t_c: ArrayLike, t_b: ArrayLike) -> np.ndarray:
    """Eq. 2: every stage fits the budget, ``max(t_a, t_f, t_c) <= t_B``."""
    return np.maximum(np.maximum(t_a, t_f), t_c) <= np.asarray(t_b)


def no_attention_bubble(t_a: ArrayLike, t_f: ArrayLike, t_c: ArrayLike) -> np.ndarray:
    """Eq. 3: attention never waits, ``2 t_a >= t_f + t_c``."""
    return 2 * np.asarray(t_a) >= np.asarray(t_f) + np.asarray(t_c)


def no_ffn_bubble(t_a: ArrayLike, t_f: ArrayLike, t_c: ArrayLike) -> np.ndarray:
    """Eq. 4: the FFN never waits, ``2 t_f >= t_a + t_c``."""
    return 2 * np.asarray(t_f) >= np.asarray(t_a) + np.asarray(t_c)


def is_ideal(t_a: ArrayLike, t_f: ArrayLike, t_c: ArrayLike, t_b: ArrayLike, rtol: float = 1e-9) -> np.ndarray:
    """Eq. 5: the ideal pipeline, ``t_a = t_f = t_B >= t_c``."""
    t_a, t_f, t_c, t_b = (np.asarray(x, dtype=float) for x in (t_a, t_f, t_c, t_b))
    return np.isclose(t_a, t_b, rtol=rtol) & np.isclose(t_f, t_b, rtol=rtol) & (t_c <= t_b * (1 + rtol))


def temporal_sparsity(t_gemm_s: ArrayLike, t_b: ArrayLike) -> np.ndarray:
    """S_t = t_G / t_B: the share of the FFN stage the grouped GEMMs are busy."""
    return np.asarray(t_gemm_s, dtype=float) / np.asarray(t_b, dtype=float)


def ofu(flops: ArrayLike, peak_flops: ArrayLike, t_gemm_s: ArrayLike) -> np.ndarray:
    """Operator FLOPS utilisation, FLOPs / (FLOPS * t_G)."""
    return np.asarray(flops, dtype=float) / (np.asarray(peak_flops) * np.asarray(t_gemm_s))


def hfu(flops: ArrayLike, peak_flops: ArrayLike, t_b: ArrayLike) -> np.ndarray:
    """Hardware FLOPS utilisation over the stage, FLOPs / (FLOPS * t_B) = OFU * S_t."""
    return np.asarray(flops, dtype=float) / (np.asarray(peak_flops) * np.asarray(t_b))
