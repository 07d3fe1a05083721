"""Where the answer flips along an axis: one grid and one rule for every threshold the book and the
command state (issue 29 part 7). The network bandwidth is searched over :data:`FLIP_FACTORS` x the
device's own, both pools scaled alike (:func:`break_even_scale_out`), and every place the ratio crosses
1 is interpolated linearly in log bandwidth between grid points (:func:`flips`): ``afd advise``'s
break-even (the crossing nearest the device's own), the landing page's windows and the sweet-spot
chapter's threshold figure read the same crossings.
"""
from __future__ import annotations

import numpy as np

from afdlib.decision.sweetspot import with_network
from afdlib.decode.search import compare
from afdlib.inputs.specs import Hardware

FLIP_FACTORS = np.geomspace(1 / 16, 64, 41)
"""Scale-out bandwidth multipliers searched for the break-even point (1/16x .. 64x, 41 a factor 1.19
apart): the one grid of every break-even the book and the command report (the landing page's
windows and thresholds search the same, :mod:`afdlib.report.landing`), so they agree."""


def flips(values: np.ndarray, ratios: np.ndarray, level: float = 1.0) -> np.ndarray:
    """Every place where ``ratios`` (over increasing ``values``; a probability, with ``level``) crosses
    ``level``: linear in the ratio between the two grid points around it; where a ratio is infinite (EP
    infeasible) or NaN (counted as below) the crossing is the grid point on the other, finite side. The
    one rule of every threshold the book and the command state (with ``values`` the log bandwidth: the
    break-even, the landing page's windows, the threshold figure, the sweeps' overtake and retake)."""
    v, r = np.asarray(values, dtype=float), np.asarray(ratios, dtype=float)
    above = r > level
    change = np.flatnonzero(above[1:] != above[:-1])
    r0, r1 = r[change], r[change + 1]
    with np.errstate(invalid="ignore"):
        x = v[change] + (level - r0) * (v[change + 1] - v[change]) / (r1 - r0)
    return np.where(~np.isfinite(r0), v[change + 1], np.where(~np.isfinite(r1), v[change], x))


def _flip(values: np.ndarray, ratios: np.ndarray, near: float | None = None) -> float | None:
    """The crossing of 1 (:func:`flips`) nearest to ``near`` (the first without); None if none."""
    x = flips(values, ratios)
    if x.size == 0:
        return None
    return float(x[np.argmin(np.abs(x - near))] if near is not None else x[0])


def break_even_scale_out(model, hardware, budget, context, precision, assumptions, attn_hardware=None,
                         factors: np.ndarray = FLIP_FACTORS, validated_only: bool = False
                         ) -> tuple[float | None, np.ndarray]:
    """Scale-out bandwidth (bytes/s per GPU) at which AFD and EP give the same throughput per GPU,
    searched over ``factors`` x the device's (both pools scaled alike); and the ratio at each factor.
    On a Superpod-class device the whole fabric is scaled (scale-up in proportion, and the
    inter-domain network), since its traffic rides the fabric."""
    hw, attn = (None if x is None else _scaled_network(x, factors) for x in (hardware, attn_hardware))
    ep, afd = compare(model, hw, budget, context, precision, assumptions, attn, cell_shape=(len(factors),),
                      validated_only=validated_only)
    ratio = ratio_or_inf(ep.tokens_per_s_per_gpu, afd.tokens_per_s_per_gpu)
    return break_even_of(hardware, factors, ratio), ratio


def ratio_or_inf(ep_rate, afd_rate) -> np.ndarray:
    """AFD / EP tokens/s per GPU, infinite where EP has no feasible deployment."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ep_rate > 0, afd_rate / ep_rate, np.inf)


def break_even_of(hardware: Hardware, factors: np.ndarray, ratio: np.ndarray) -> float | None:
    """The break-even scale-out bandwidth (bytes/s per GPU) of the ratios ``ratio`` at ``factors`` x the
    device's: the crossing of 1 (:func:`flips`, in log bandwidth) nearest the device's own; None if none."""
    x = _flip(np.log(hardware.scale_out_bytes_per_s * factors), ratio, near=float(np.log(hardware.scale_out_bytes_per_s)))
    return None if x is None else float(np.exp(x))


def _scaled_network(hw: Hardware, factors: np.ndarray) -> Hardware:
    """The device with its network scaled by ``factors`` (:func:`afdlib.decision.sweetspot.with_network`)."""
    return with_network(hw, hw.scale_out_bytes_per_s * np.asarray(factors, dtype=float))
