"""The batch search: the largest requests per GPU whose decode step meets the per-token SLO and
fits in memory (TPOT and memory grow with the batch, so the feasible batches are 1..n), vectorised
over any number of deployments at once."""
from __future__ import annotations

import numpy as np

from afdlib.decode.result import Step
from afdlib.errors import AfdError

MAX_REQUESTS = 2 ** 16
"""Largest batch per GPU the searches consider."""

GRID_SEARCH_MAX = 1 << 14
"""Largest (cells x grid points) for which :func:`largest_batch` narrows with grids first."""


def largest_batch(step_of, slo_s: float, shape: tuple = (), hi: int = MAX_REQUESTS, grid: int = 16) -> np.ndarray:
    """Per element of ``shape``, the largest integer number of requests (0..hi) whose step fits in
    memory and meets ``slo_s``; 0 where even one request does not. TPOT and memory grow with the
    batch, so the feasible batches are 1..n: two vectorised grids of ``grid`` batches each (one
    geometric over 1..hi, one linear inside the bracket it finds) narrow the search, then
    bisection finishes it (on large arrays, more than :data:`GRID_SEARCH_MAX` points, bisection
    alone). ``step_of(requests_array)`` returns a :class:`Step`; the requests may
    carry a leading grid axis in front of ``shape``."""
    lo = np.zeros(shape)
    top = np.full(shape, float(hi))

    def ok_of(requests):
        st = step_of(requests)
        return np.broadcast_to(st.fits_memory & (st.tpot_s <= slo_s), requests.shape)

    f = np.linspace(0.0, 1.0, grid).reshape((grid,) + (1,) * len(shape))
    # the grids pay when each evaluation is dominated by its fixed cost (small arrays); on large
    # arrays (maps of candidates) plain bisection does less work
    passes = (True, False) if int(np.prod(shape)) * grid <= GRID_SEARCH_MAX else ()
    for geometric in passes:
        if not np.any(top > lo):
            break
        first = lo + 1
        if geometric:
            pts = np.ceil(np.exp(np.log(first) + f * (np.log(np.maximum(top, first)) - np.log(first))) - 1e-9)
        else:
            pts = np.ceil(first + f * (np.maximum(top, first) - first) - 1e-9)
        pts = np.minimum(pts, top)
        ok = ok_of(pts) & (top > lo)
        last = grid - 1 - np.argmax(ok[::-1], axis=0)                   # index of the last feasible point
        any_ok = ok.any(axis=0)
        best = np.take_along_axis(pts, last[None], axis=0)[0]
        nxt = np.take_along_axis(pts, np.minimum(last + 1, grid - 1)[None], axis=0)[0]
        new_top = np.where(any_ok, np.where(last == grid - 1, top, nxt - 1), pts[0] - 1)
        lo, top = np.where(any_ok, best, lo), np.where(top > lo, np.maximum(new_top, np.where(any_ok, best, lo)), top)
    while np.any(top > lo):
        mid = np.ceil((lo + top) / 2)
        ok = ok_of(mid)
        lo, top = np.where(ok, mid, lo), np.where(ok, top, mid - 1)
    return lo


def best_batch(step_of, slo_s: float, max_requests: int = MAX_REQUESTS) -> tuple[int, Step]:
    """The largest requests per GPU (1..max_requests) whose step fits in memory and meets the
    per-token SLO (:func:`largest_batch`), and its step; AfdError saying what fails where none does."""
    best = float(largest_batch(step_of, slo_s, (), max_requests))
    if best < 1:
        first = step_of(np.array(1.0))
        if bool(first.fits_memory):
            why = f"one request per GPU takes TPOT {float(first.tpot_s) * 1e3:.1f} ms, over the SLO {slo_s * 1e3:g} ms"
        else:
            full = [f"the {m.pool}'s weights need {float(np.max(m.weights_bytes)) / 1e9:.1f} GB of the "
                    f"{float(np.max(m.capacity_bytes)) / 1e9:.1f} GB usable"
                    for m in first.memory if np.any(m.weights_bytes > m.capacity_bytes)]
            why = "; ".join(full) or "one request per GPU does not fit in memory (KV cache)"
        raise AfdError(f"no batch meets the SLO and fits in memory: {why}")
    return int(best), step_of(np.array(best))
