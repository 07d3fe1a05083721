"""The sweeps chapter's study: the break-even surface of AFD against EP over expert width and sparsity,
one sweep (:mod:`afdlib.sweep.grid`) of the best EP and the best AFD deployment per point, and the
catalogue's own models on the same bandwidth axis.

The surface's points are members of one model's family at the same total routed parameters (the
paper's method, the sweet-spot maps' too: ``expert_width`` and ``sparsity``); each catalogue model
is also swept as it is, so the chapter can say where a model's own crossing differs from the
surface's reading at its (M, E / K).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from afdlib.decision.verdict import verdict
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.sweep.evaluate import hardware_with, model_with, settings
from afdlib.sweep.grid import dataset
from afdlib.sweep.readings import FROM_BOTTOM, NEVER, Crossing, crossing
from afdlib.sweep.spec import parse

NOT_READ = "cannot be read (AFD never ahead at one end)"
"""A crossing trend along an axis where an end has no crossing to compare (:meth:`Surface.trend`)."""


def surface_spec(model: str, hardware: str, bandwidth: dict, widths, sparsities, fixed: dict,
                 hw_profile: str = "datasheet", axis: str = "scale_out_gb_per_s") -> dict:
    """The spec (as `afd sweep` reads it) of the break-even surface along the bandwidth ``axis``
    (:func:`bandwidth_axis`)."""
    return {"model": model, "hardware": hardware, "design": "both", "hw_profile": hw_profile,
            "vary": {"expert_width": [float(w) for w in widths], "sparsity": [float(s) for s in sparsities],
                     axis: dict(bandwidth)}, "fixed": dict(fixed)}


def bandwidth_axis(hw) -> str:
    """The bandwidth that carries both designs' expert traffic between nodes: the NIC's scale-out
    (``scale_out_gb_per_s``), or on a Superpod, whose scale-out is its scale-up fabric, that fabric
    (``scale_up_gb_per_s``: `afd sweep` refuses scale-out there)."""
    return "scale_up_gb_per_s" if hw.superpod else "scale_out_gb_per_s"


def bandwidth_range(hw, axis: str, num: int = 25) -> dict:
    """The bandwidth axis' range by default: the device's own figure (the datasheet profile's, as the
    spec counts it) / 4 to x 16, ``num`` points evenly in log (H800's NIC: 12.5 to 800 GB/s; 25 points
    are 2^(1/4) apart, the spacing of `afd advise`'s break-even grid)."""
    own = Surface({"vary": {axis: None}}, None, None, {}).own_gb_per_s(hw)
    return {"from": own / 4, "to": own * 16, "num": int(num), "log": True}


def family_axes(model, widths=None, sparsities=None) -> tuple[list[float], list[float]]:
    """The surface's expert widths and sparsities: those given, else the model's own M times 1/4 ..
    4 and its own E / K times 1/4 .. 2 (DeepSeek-V3: M 512 .. 8192, E / K 8 .. 64), so a model's
    own cell is on the surface, inside it."""
    m, s = float(model.moe_intermediate_size), float(model.sparsity)
    return ([float(w) for w in widths] if widths else [m * f for f in (0.25, 0.5, 1, 2, 4)],
            [float(x) for x in sparsities] if sparsities else [s * f for f in (0.25, 0.5, 1, 2)])


@dataclass(frozen=True)
class Surface:
    spec: dict
    ds: object                  # the computed xarray Dataset
    crossing: Crossing          # over (expert_width, sparsity)
    models: dict                # catalogue model name -> (M, E / K, its own Crossing over one cell)

    @property
    def axis(self) -> str:
        """The bandwidth axis (the spec's axis that is not a family axis)."""
        return next(k for k in self.spec["vary"] if k not in ("expert_width", "sparsity"))

    @property
    def points(self) -> int:
        return int(self.ds.afd_over_ep.size)

    def cell(self, width: float, sparsity: float) -> tuple[int, int]:
        """Indices of the surface's cell nearest (log scale) ``width`` and ``sparsity``."""
        w, s = (np.asarray(self.ds[k].values, float) for k in ("expert_width", "sparsity"))
        return int(np.argmin(np.abs(np.log(w / width)))), int(np.argmin(np.abs(np.log(s / sparsity))))

    def rows(self) -> list[dict]:
        """Per catalogue model: its M and E / K, the surface's reading at the nearest cell, its own crossing."""
        out = []
        for name, (m, s, own) in self.models.items():
            i, j = self.cell(m, s)
            own = Crossing(*(np.reshape(a, -1) for a in (own.overtake, own.retake, own.where)))
            out.append({"model": name, "M": m, "E/K": s,
                        "surface overtake": _words(self.crossing.overtake[i, j], self.crossing.where[i, j]),
                        "own overtake": _words(own.overtake[0], own.where[0]),
                        "surface retake": _words(self.crossing.retake[i, j], "" if np.isfinite(self.crossing.overtake[i, j]) else NEVER),
                        "own retake": _words(own.retake[0], "" if np.isfinite(own.overtake[0]) else NEVER)})
        return out

    def readings(self) -> dict:
        """The chapter's numbers in words: cells where AFD leads somewhere in the range, never, from the
        bottom, to the top; the spans of the overtake and retake bandwidths; their trends along each
        axis and what they say of the paper's Table 3 conditions; the models' differences."""
        c, bw = self.crossing, self.ds[self.axis].values
        ahead = np.isfinite(c.overtake)
        w, s = (self.ds[k].values for k in ("expert_width", "sparsity"))

        def span(v):
            v = v[np.isfinite(v)]
            if not v.size:
                return "nowhere in the range"
            lo, hi = (f"{x:,.0f}" if x >= 100 else f"{x:.3g}" for x in (v.min(), v.max()))   # 2,190, not 2.19e+03
            return lo if lo == hi else f"{lo} to {hi}"
        over, back = span(c.overtake), span(c.retake)
        if not ahead.any():
            band = "AFD does not lead in any cell of the range."
        elif np.isfinite(c.retake).any():
            band = (f"Where it leads, it does so over a band: it overtakes EP at {over} GB/s and EP leads again "
                    f"above {back} GB/s, so a single threshold \"AFD above X GB/s\" does not describe the model.")
        else:
            band = f"Where it leads, it overtakes EP at {over} GB/s and keeps the lead to the top of the range."
        n_bottom = int((c.where == FROM_BOTTOM).sum())
        return {"band": band, "n_bottom_cells": f"{n_bottom} cell" + "s" * (n_bottom != 1),
                "points": f"{self.points:,}", "bw_range": f"{bw[0]:g} to {bw[-1]:g}", "n_cells": int(ahead.size),
                "n_ahead": int(ahead.sum()), "n_never": int((c.where == NEVER).sum()),
                "n_bottom": int((c.where == FROM_BOTTOM).sum()), "n_to_top": int((ahead & ~np.isfinite(c.retake)).sum()),
                "overtake_range": span(c.overtake), "retake_range": span(c.retake),
                "trend_m": self.trend(0), "trend_s": self.trend(1), "trend_m_retake": self.trend(0, "retake"),
                "trend_s_retake": self.trend(1, "retake"), "side_m": self.paper_side(0), "side_s": self.paper_side(1),
                "axis_m": self.axis_words(0), "axis_s": self.axis_words(1),
                "n_differ": self.differ(), "n_models": len(self.models), "m_low": f"{w[0]:g}", "m_high": f"{w[-1]:g}",
                "s_low": f"{s[0]:g}", "s_high": f"{s[-1]:g}", "bw_num": int(bw.size),
                "n_on_bound": int(self.ds.on_search_bound.any("design").sum()),
                "n_gapped": int((c.stretches > 1).sum()),
                "model_numbers": ", ".join(f"{k + 1} {n}" for k, n in enumerate(self.models))}

    def own_gb_per_s(self, hw) -> float:
        """The device's bandwidth along the surface's axis as the spec counts it (the profile's figure,
        before its efficiency)."""
        tier = "scale_up" if self.axis == "scale_up_gb_per_s" else "scale_out"
        eff = getattr(hw.efficiency, tier) if hw.efficiency is not None else 1.0
        return getattr(hw, f"{tier}_bytes_per_s") / eff / 1e9

    def reference_readings(self) -> dict:
        """At the spec's own model's cell: its M and E / K, the ratio's peak and its bandwidth with P(AFD
        better) there (``ref_peak_words``: worded for a peak above or at most 1), and how much EP's and
        AFD's tokens/s per GPU grow from the peak to the top of the range."""
        ref = load_model(self.spec["model"], profile="reference")
        i, j = self.cell(ref.moe_intermediate_size, ref.sparsity)
        cell = self.ds.isel(expert_width=i, sparsity=j)
        r = cell.afd_over_ep.values
        k = int(np.nanargmax(r))
        t = cell.tokens_per_s_per_gpu
        gain = {d: float(t.sel(design=d).values[-1] / t.sel(design=d).values[k] - 1) for d in ("ep", "afd")}
        bw = float(cell[self.axis].values[k])
        p = self.p_afd(float(cell.expert_width), float(cell.sparsity), bw)
        return {"ref_m": f"{float(cell.expert_width):.0f}", "ref_s": f"{float(cell.sparsity):.0f}",
                "ref_peak": f"{r[k]:.2f}", "ref_peak_bw": f"{bw:.0f}", "ref_peak_p": f"{p:.2f}",
                "ref_peak_words": peak_words(float(r[k]), p),
                "ref_ep_gain": f"{gain['ep']:.0%}", "ref_afd_gain": f"{gain['afd']:.0%}",
                "ref_helps": ("neither design (both have stopped gaining from it)" if max(gain.values()) < 0.005
                              else "EP more than AFD" if gain["ep"] > gain["afd"] else "AFD at least as much as EP")}

    def p_afd(self, width: float, sparsity: float, gb_per_s: float) -> float:
        """P(AFD better) (:func:`afdlib.decision.verdict.verdict`) of the family member at ``width``
        and ``sparsity`` on the spec's device at ``gb_per_s`` along the surface's bandwidth axis, at the spec's
        fixed settings: how far a lead on the surface is from decided."""
        values = {**self.spec["fixed"], "expert_width": width, "sparsity": sparsity, self.axis: gb_per_s}
        hw = hardware_with(load_hardware(self.spec["hardware"], profile=self.spec.get("hw_profile", "datasheet")), values)
        model = model_with(load_model(self.spec["model"], profile="reference"), values)
        context, budget, precision, a = settings(model, values)
        return float(verdict(model, hw, budget, context, precision, a, tornado=False).p_afd)

    def ratio_trend(self, axis: int, gb_per_s: float) -> tuple[str, float, float]:
        """How the AFD / EP ratio itself moves along ``axis`` (0: width, 1: sparsity) at the swept
        bandwidth nearest ``gb_per_s``: ("falls" | "rises" | "does not move" (within 2% in log, as
        :meth:`axis_words`), the median ratio over the other axis at the axis' first and at its last value)."""
        bw = self.ds[self.axis].values
        k = int(np.argmin(np.abs(np.log(bw / gb_per_s))))
        r = np.moveaxis(self.ds.afd_over_ep.transpose("expert_width", "sparsity", self.axis).values[..., k],
                        axis, 0)
        lo, hi = float(np.nanmedian(r[0])), float(np.nanmedian(r[-1]))
        return _moves(lo, hi), lo, hi

    def ratio_readings(self, low_gb_per_s: float, high_gb_per_s: float) -> dict:
        """The ratio's own trend along expert width at a low and a high bandwidth (the paper's condition
        is about the ratio on a given system): glue names ``rt_*``."""
        out = {}
        for key, at in (("low", low_gb_per_s), ("high", high_gb_per_s)):
            word, lo, hi = self.ratio_trend(0, at)
            bw = self.ds[self.axis].values
            out.update({f"rt_{key}_bw": f"{bw[int(np.argmin(np.abs(np.log(bw / at))))]:.0f}", f"rt_{key}": word,
                        f"rt_{key}_from": f"{lo:.2f}", f"rt_{key}_to": f"{hi:.2f}"})
        return out

    def paper_side(self, axis: int) -> str:
        """Whether the surface bears out the paper's Table 3 condition along ``axis`` (0: coarse experts,
        the high end of M, favour AFD; 1: low sparsity, the low end of E / K, favours AFD): AFD favoured
        means it overtakes at a lower bandwidth and keeps its lead to a higher one at that end."""
        want = ("falls", "rises") if axis == 0 else ("rises", "falls")
        got = (self.trend(axis), self.trend(axis, "retake"))
        if got == want:
            return "bearing out"
        if got == tuple({"falls": "rises", "rises": "falls"}[w] for w in want):
            return "against"
        return "neither for nor against"

    def differ(self) -> int:
        """Catalogue models whose own overtake differs from the surface's reading at their cell."""
        return sum(r["surface overtake"] != r["own overtake"] for r in self.rows())

    def axis_words(self, axis: int) -> str:
        """What the surface says along ``axis`` (0: expert width M, 1: sparsity E / K), for the paper's
        condition there (coarse experts, low sparsity favour AFD): the crossings' trends where both ends of
        the axis have them (:meth:`trend`, :meth:`paper_side`); else the AFD / EP ratio itself, its median
        over the other axis and every bandwidth at each end, since the crossings cannot be compared."""
        w, s = self.ds.expert_width.values, self.ds.sparsity.values
        name, lo, hi = ("M", f"{w[0]:g}", f"{w[-1]:g}") if axis == 0 else ("E / K", f"{s[0]:g}", f"{s[-1]:g}")
        cond = "that coarse experts favour AFD" if axis == 0 else "that low sparsity favours AFD"
        over, back = self.trend(axis), self.trend(axis, "retake")
        if NOT_READ not in (over, back):
            return (f"the overtaking bandwidth {over} from {name} = {lo} to {name} = {hi} and the bandwidth where EP "
                    f"leads again {back} (read as the band where AFD leads, {self.paper_side(axis)} the paper's "
                    f"condition {cond})")
        if over != NOT_READ:          # EP never leads again at an end: AFD keeps its lead to the top there
            want = "falls" if axis == 0 else "rises"
            side = ("bearing out" if over == want else "neither for nor against" if over == "does not move"
                    else "against")
            return (f"the overtaking bandwidth {over} from {name} = {lo} to {name} = {hi}, AFD keeping its lead to the "
                    f"top of the range at an end ({side} the paper's condition {cond})")
        r = np.moveaxis(self.ds.afd_over_ep.transpose("expert_width", "sparsity", self.axis).values, axis, 0)
        first, last = float(np.nanmedian(r[0])), float(np.nanmedian(r[-1]))
        moves = _moves(first, last)
        toward = {"rises": "bearing out", "falls": "against"} if axis == 0 else {"falls": "bearing out", "rises": "against"}
        return (f"the crossings cannot be compared from {name} = {lo} to {name} = {hi} (AFD is never ahead at one "
                f"end); the ratio itself, its median over the other axis and every bandwidth, {moves} from "
                f"{first:.2f} to {last:.2f}, {toward.get(moves, 'neither for nor against')} the paper's condition {cond}")

    def trend(self, axis: int, reading: str = "overtake") -> str:
        """How the ``reading`` (overtake or retake) bandwidth moves from the first to the last value of
        ``axis`` (0: width, 1: sparsity), over the cells where both ends have one: "falls", "rises" or
        "does not move" (a mean change in log under 5%)."""
        v = np.log(np.moveaxis(getattr(self.crossing, reading), axis, 0))
        both = np.isfinite(v[0]) & np.isfinite(v[-1])
        if not both.any():
            return NOT_READ
        d = float(np.mean(v[-1][both] - v[0][both]))
        return "falls" if d < -0.05 else "rises" if d > 0.05 else "does not move"


def _moves(first: float, last: float) -> str:
    """How the AFD / EP ratio moves from ``first`` to ``last``: "rises", "falls" or "does not move" (within
    2% in log), the one rule of :meth:`Surface.ratio_trend` and :meth:`Surface.axis_words`."""
    d = np.log(last / first)
    return "rises" if d > 0.02 else "falls" if d < -0.02 else "does not move"


def _words(value: float, where: str) -> str:
    if where == NEVER:
        return "never"
    if not np.isfinite(value):
        return "beyond the range"
    return f"<= {value:.0f}" if where == FROM_BOTTOM else f"{value:.0f}"


def break_even_surface(spec: dict, models: list[str], scheduler: str = "synchronous") -> Surface:
    """Compute the surface of ``spec`` (:func:`surface_spec`) and each of ``models`` as it is along the
    same bandwidth axis (``scheduler``: Dask's, the whole sweep in this process by default)."""
    ds = dataset(parse(spec)).compute(scheduler=scheduler)
    axis = Surface(spec, None, None, {}).axis
    cross = crossing(ds.afd_over_ep.transpose("expert_width", "sparsity", axis), axis)
    own = {}
    for slug in models:
        m = load_model(slug, profile="reference")
        one = {**spec, "model": slug, "vary": {axis: spec["vary"][axis]}}
        r = dataset(parse(one)).compute(scheduler=scheduler).afd_over_ep
        own[m.name] = (float(m.moe_intermediate_size), float(m.sparsity), crossing(r, axis))
    return Surface(spec, ds, cross, own)


def peak_words(peak: float, p_afd: float) -> str:
    """The surface's peak ratio AFD / EP at the model's own cell and P(AFD better) there, worded for a
    lead (above 1) or none."""
    if peak > 1:
        return f"A lead of {peak - 1:.0%} is not a decision: at that peak P(AFD better) is {p_afd:.2f}"
    return f"Even at its peak AFD does not lead (AFD / EP {peak:.2f}): there P(AFD better) is {p_afd:.2f}"
