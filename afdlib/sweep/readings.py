"""Readings of a sweep's Dataset: where along a bandwidth axis AFD overtakes EP, and where EP takes
the lead back.

The AFD / EP ratio need not be monotonic in bandwidth (AFD's transfer is one lane while EP's
all-to-all is hidden behind compute, so each design gains from the network over its own range), so
a point of the other axes has up to two readings: the bandwidth at which the ratio first rises to 1
(AFD overtakes) and the one past which it stays below 1 (EP leads again). Each is found by the one
rule of every threshold the book and the command state, :func:`afdlib.decision.threshold.flips`: AFD
ahead where the ratio is above 1, the crossing linear in the ratio and in log(bandwidth) between the
two swept points around it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from afdlib.decision.threshold import flips

NEVER, FROM_BOTTOM, TO_TOP = "never", "from the bottom", "to the top"


@dataclass(frozen=True)
class Crossing:
    """Per point of the other axes: ``overtake`` (bandwidth, the axis' unit; NaN where AFD never
    leads, the axis' first value where it leads from the bottom of the range), ``retake`` (NaN where
    AFD still leads at the top), ``where`` in words (:data:`NEVER`, :data:`FROM_BOTTOM`, or ""), and
    ``stretches``: how many separate runs of swept points AFD leads over (more than 1: EP leads again
    at a swept point between ``overtake`` and ``retake``)."""

    overtake: np.ndarray
    retake: np.ndarray
    where: np.ndarray
    stretches: np.ndarray | None = None


def _cross(x0, x1, r0, r1) -> float:
    """The bandwidth where the ratio passes 1 between (x0, r0) and (x1, r1), by :func:`flips` in log bandwidth."""
    got = flips(np.log([x0, x1]), np.array([r0, r1], dtype=float))
    return float(np.exp(got[0])) if got.size else float(x1)


def crossing(ratio, dim: str) -> Crossing:
    """The overtake and retake bandwidths of ``ratio`` (an xarray DataArray, AFD / EP) along ``dim``,
    for every point of its other dimensions (in their order). NaN ratios (EP infeasible) count as
    AFD ahead where AFD has a rate, so pass ``ratio.fillna(inf)`` for that reading; by default a NaN
    is not ahead."""
    r = ratio.transpose(..., dim)
    x = np.asarray(r[dim].values, dtype=float)
    values = np.asarray(r.values, dtype=float).reshape(-1, x.size)
    over, back = np.full(values.shape[0], np.nan), np.full(values.shape[0], np.nan)
    where = np.full(values.shape[0], "", object)
    ahead_all = np.nan_to_num(values, nan=0.0) > 1.0         # flips' rule: above 1 is ahead
    runs = ahead_all[:, 0].astype(int) + (ahead_all[:, 1:] & ~ahead_all[:, :-1]).sum(axis=1)
    for i, row in enumerate(values):
        ahead = ahead_all[i]
        if not ahead.any():
            where[i] = NEVER
            continue
        first, last = int(np.argmax(ahead)), int(x.size - 1 - np.argmax(ahead[::-1]))
        if first == 0:
            over[i], where[i] = x[0], FROM_BOTTOM
        else:
            over[i] = _cross(x[first - 1], x[first], row[first - 1], row[first])
        if last < x.size - 1:
            back[i] = _cross(x[last], x[last + 1], row[last], row[last + 1])
    shape = r.shape[:-1]
    return Crossing(over.reshape(shape), back.reshape(shape), where.reshape(shape), runs.reshape(shape))
