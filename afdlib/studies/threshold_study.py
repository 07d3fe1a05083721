"""The sweet-spot chapter's threshold figure: the AFD / EP ratio of one model against the network
bandwidth per GPU on several devices, on the grid and by the rule of every threshold
(:mod:`afdlib.decision.threshold`), and its words."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from afdlib.decision.advise import advice_table
from afdlib.decision.threshold import FLIP_FACTORS, break_even_scale_out, flips
from afdlib.decode.step import Assumptions
from afdlib.inputs.specs import Budget, Hardware, Model, Precision


@dataclass(frozen=True)
class ThresholdCurve:
    """One device's AFD / EP ratio over the NIC bandwidth, with the device as it is."""

    name: str
    slug: str
    bandwidth: np.ndarray
    ratio: np.ndarray
    own_bandwidth: float
    own_ratio: float
    crossings: np.ndarray          # where the ratio crosses 1 (:func:`afdlib.decision.threshold.flips`)


def bandwidth_curves(model: Model, devices: list[Hardware], budget: Budget, context: float) -> list[ThresholdCurve]:
    """The ratio of ``model`` against the network bandwidth per GPU on each device, on the grid and by
    the rule of ``afd advise``'s break-even (:func:`afdlib.decision.threshold.break_even_scale_out`:
    :data:`~afdlib.decision.threshold.FLIP_FACTORS` x the device's own, sustained; crossings interpolated
    by :func:`afdlib.decision.threshold.flips`), and at the device's own bandwidth (its advice)."""
    out = []
    for hw in devices:
        _, ratio = break_even_scale_out(model, hw, budget, context, Precision(), Assumptions())
        bw = hw.scale_out_bytes_per_s * FLIP_FACTORS
        own = advice_table([model], [hw], budget, context, uncertain=False)[0]["ratio"]
        out.append(ThresholdCurve(hw.name, hw.slug, bw, np.asarray(ratio, dtype=float), hw.scale_out_bytes_per_s,
                                  own, np.exp(flips(np.log(bw), np.asarray(ratio, dtype=float)))))
    return out


def threshold_words(curves: list[ThresholdCurve], devices: list[Hardware], slug: str) -> dict[str, str]:
    """The threshold figure's words: every device's crossings (``crossings``), the devices with their
    node sizes (``curve_devices``) and how often the ratio crosses 1 on device ``slug`` (``cross_note``)."""
    n = next(c.crossings.size for c in curves if c.slug == slug)
    times = "twice" if n == 2 else f"{n} times"
    return {"cross_note": f"on that grid the ratio crosses 1 {times}, so no single bandwidth separates the designs"
            if n > 1 else "on that grid this is the only crossing" if n else "its curve stays on one side of 1",
            "curve_devices": f"{len(devices)} devices (" + ", ".join(f"{d.name}: {d.gpus_per_node} GPUs per node"
                                                                 for d in devices) + ")",
            "crossings": "; ".join(f"{c.name}: " + (", ".join(f"{x / 1e9:.0f}" for x in c.crossings) + " GB/s"
                                                     if c.crossings.size else "never") for c in curves)}
