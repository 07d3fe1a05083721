"""Expert popularity models: how routed tokens spread over experts.

Deterministic shapes live here; sampling and balancedness are in :mod:`afdlib.routing.balance`.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from afdlib.errors import AfdError


def zipf_popularity(n_experts: int, exponent: ArrayLike) -> np.ndarray:
    """Shares p_i proportional to i^-s (i = 1..n), summing to 1 along the last axis.

    ``exponent`` s = 0 is uniform; larger s is more skewed. Broadcasts over an array of
    exponents (result shape ``exponent.shape + (n_experts,)``).
    """
    if n_experts < 1:
        raise AfdError(f"need at least one expert, got {n_experts}")
    s = np.asarray(exponent, dtype=float)
    if np.any(s < 0):
        raise AfdError(f"Zipf exponent must be >= 0, got {exponent}")
    w = np.arange(1, n_experts + 1, dtype=float) ** -s[..., None]
    return w / w.sum(axis=-1, keepdims=True)
