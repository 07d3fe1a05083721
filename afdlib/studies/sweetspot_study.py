"""The sweet-spot study (paper Section 4, Tables 2 and 3): what the chapter reads off the advice table,
the property maps and the bandwidth threshold.

:mod:`afdlib.decision.sweetspot` computes one map, the pools and the overlap methods; this module runs
the chapter's set of them and reduces each to the numbers its prose quotes. Rows are plain dicts (the
notebook turns them into tables); ratios are AFD / EP output tokens per second per GPU (above 1 favours
AFD), bandwidths bytes/s per GPU (sustained).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from afdlib.decision.threshold import FLIP_FACTORS, break_even_scale_out
from afdlib.decode.step import Assumptions
from afdlib.decode.search import best_afd
from afdlib.decision.sweetspot import RatioMap, ratio_map
from afdlib.errors import AfdError
from afdlib.inputs.specs import Budget, Efficiency, Hardware, Model, Precision


# --- the advice table ------------------------------------------------------------------------------

@dataclass(frozen=True)
class AdviceSummary:
    """Counts over an advice table (:func:`afdlib.decision.advise.advice_table` rows)."""

    pairs: int
    afd: int                       # pairs recommending AFD
    ep: int
    decisive: int                  # pairs beyond the model's error band
    ratio_min: float               # over the pairs with a ratio
    ratio_max: float
    median_ep_over_afd: float      # median of EP / AFD = 1 / ratio (nan if any pair has none)


def advice_summary(rows: list[dict]) -> AdviceSummary:
    """Pairs, recommendations and the span of the ratios of :func:`afdlib.decision.advise.advice_table` rows."""
    ratio = np.array([r["ratio"] for r in rows], dtype=float)
    has = ratio[~np.isnan(ratio)]
    return AdviceSummary(len(rows), sum(r["recommendation"] == "AFD" for r in rows),
                         sum(r["recommendation"] == "EP" for r in rows), int(sum(bool(r["decisive"]) for r in rows)),
                         float(has.min()) if has.size else np.nan, float(has.max()) if has.size else np.nan,
                         float(np.median(1 / ratio)))


def verdict_table(rows: list[dict], models: list, hardware: list) -> pd.DataFrame:
    """The verdicts of :func:`afdlib.decision.advise.advice_table` rows as a model x device table: each
    cell the more likely design, AFD / EP at the model's defaults and the probability of the design it
    names in parentheses (P(AFD better) for AFD, 1 minus it for EP), '?' where undecided ("EP 0.87 (0.66?)",
    "AFD 1.42 (0.93)"; "-" where the pair has no answer). ``models`` and ``hardware``: slugs, or catalogue
    objects (then the table is labelled with their names)."""
    def slug_name(x):
        return (x, x) if isinstance(x, str) else (x.slug, x.name)
    (models, model_names), (hardware, hw_names) = (tuple(zip(*map(slug_name, xs))) for xs in (models, hardware))
    cell = {(r["model"], r["hardware"]): r for r in rows}

    def text(r):
        if r is None or r["recommendation"] == "-" or not np.isfinite(r.get("p_afd", np.nan)):
            return "-" if r is None or r["recommendation"] == "-" else r["recommendation"]
        p = r["p_afd"] if r["recommendation"] == "AFD" else 1.0 - r["p_afd"]
        ratio = f"{r['ratio']:.2f} " if np.isfinite(r.get("ratio", np.nan)) else ""
        return f"{r['recommendation']} {ratio}({p:.2f}" + ("" if r["decisive"] else "?") + ")"
    return pd.DataFrame([[text(cell.get((m, h))) for h in hardware] for m in models], index=list(model_names),
                        columns=list(hw_names))


def ratio_of(rows: list[dict], model: str, hardware: str) -> float:
    """The ratio of one (model slug, hardware slug) pair of an advice table."""
    for r in rows:
        if r["model"] == model and r["hardware"] == hardware:
            return r["ratio"]
    raise AfdError(f"no advice for model '{model}' on '{hardware}' in the table")


def _by_hardware(rows: list[dict]) -> dict[str, np.ndarray]:
    """Ratio per device over the table's models (in the order they first appear)."""
    models = list(dict.fromkeys(r["model"] for r in rows))
    cell = {(r["model"], r["hardware"]): r["ratio"] for r in rows}
    return {h: np.array([cell.get((m, h), np.nan) for m in models], dtype=float)
            for h in dict.fromkeys(r["hardware"] for r in rows)}


def ratio_span(rows: list[dict], models: list[str], hardware: list[str]) -> tuple[float, float]:
    """Smallest and largest ratio over the pairs of ``models`` x ``hardware`` in the table (nan, nan if none)."""
    r = np.array([x["ratio"] for x in rows if x["model"] in models and x["hardware"] in hardware], dtype=float)
    r = r[~np.isnan(r)]
    return (float(r.min()), float(r.max())) if r.size else (np.nan, np.nan)


def median_ratio_between(rows: list[dict], hardware: str, reference: str) -> float:
    """Median over the models of ratio(``hardware``) / ratio(``reference``): how much a device
    favours AFD over another one."""
    by = _by_hardware(rows)
    for h in (hardware, reference):
        if h not in by:
            raise AfdError(f"device '{h}' is not in the advice table")
    return float(np.median(by[hardware] / by[reference]))


def twins(rows: list[dict]) -> list[tuple[str, str]]:
    """Pairs of devices that give the same ratio (numpy ``allclose``) for every model: their
    differences do not bind. Named by the rows' ``hardware_name`` where they carry it, else by slug."""
    by = _by_hardware(rows)
    name = {r["hardware"]: r.get("hardware_name", r["hardware"]) for r in rows}
    slugs = list(by)
    return [(name[a], name[b]) for i, a in enumerate(slugs) for b in slugs[i + 1:] if np.allclose(by[a], by[b])]


@dataclass(frozen=True)
class ErrorSpread:
    """The decode model's relative errors against published deployments (predicted / published - 1)."""

    low: float
    high: float
    afd: tuple                     # the AFD cases' errors
    ep_low: float
    ep_high: float
    afd_lean: tuple                # (least, most): how far a ratio would lean to AFD were AFD's predictions
                                   # as high as its largest error against EP's highest, and lowest, error


def error_spread(validation: list[dict]) -> ErrorSpread:
    """From :func:`afdlib.decode.validation.validation_rows`: lean = (1 + max e_AFD) / (1 + e_EP) - 1."""
    afd = tuple(r["error"] for r in validation if r["design"] == "afd")
    ep = [r["error"] for r in validation if r["design"] == "ep"]
    if not afd or not ep:
        raise AfdError("the validation rows need at least one AFD and one EP case")
    lean = tuple((1 + max(afd)) / (1 + e) - 1 for e in (max(ep), min(ep)))
    errors = [r["error"] for r in validation]
    return ErrorSpread(min(errors), max(errors), afd, min(ep), max(ep), lean)


def break_even_side(bandwidth: float | None, ratio: np.ndarray, grid: np.ndarray) -> str:
    """Which side of the break-even AFD leads on, from the ratio at each bandwidth of ``grid``:
    'never' / 'always' (no crossing: AFD never / always ahead), else 'above' or 'below' (the ratio
    exceeds 1 just above the crossing, at the next bandwidth searched, or it does not)."""
    if bandwidth is None:
        return "never" if (np.asarray(ratio) <= 1).all() else "always"
    next_up = np.asarray(ratio)[np.asarray(grid) > bandwidth]
    return "above" if next_up.size and next_up[0] > 1 else "below"


def break_even(model: Model, hardware: Hardware, budget: Budget, context: float,
               precision: Precision = Precision(), assumptions: Assumptions = Assumptions()
               ) -> tuple[float | None, str]:
    """The scale-out bandwidth (bytes/s per GPU) nearest the device's own at which AFD and EP break
    even (:func:`afdlib.decision.threshold.break_even_scale_out`), and :func:`break_even_side` of it."""
    bw, ratio = break_even_scale_out(model, hardware, budget, context, precision, assumptions)
    return bw, break_even_side(bw, ratio, hardware.scale_out_bytes_per_s * FLIP_FACTORS)


# --- the property maps -----------------------------------------------------------------------------

def _grids(size: int) -> dict[str, np.ndarray]:
    """The maps' axes: NIC 10-640 GB/s (8-GPU nodes), fabric 80-2880 GB/s (Superpod), sustained (80% of
    the nominal 12.5-800 and 100-3600 GB/s); M 512-16384; E/K 4-128; ``size`` points each, log spaced."""
    sustained = Efficiency().scale_out
    return {"ordinary": np.geomspace(12.5e9, 800e9, size) * sustained,
            "superpod": np.geomspace(100e9, 3600e9, size) * sustained,
            "moe_intermediate_size": np.geomspace(512, 16384, size), "sparsity": np.geomspace(4, 128, size)}


@dataclass(frozen=True)
class PropertyMaps:
    """The reference model's shape with one property (M or E / K) changed, over the network bandwidth,
    on an ordinary device (its nodes' NIC) and on a Superpod (the whole fabric)."""

    model: Model
    ordinary: Hardware
    superpod: Hardware
    m_ordinary: RatioMap
    sparsity_ordinary: RatioMap
    m_superpod: RatioMap
    sparsity_superpod: RatioMap

    def _panels(self):
        o, s = self.ordinary, self.superpod
        return ((f"{network_title(o)} x M", o, self.m_ordinary), (f"{network_title(o)} x E/K", o, self.sparsity_ordinary),
                (f"{network_title(s)} x M", s, self.m_superpod), (f"{network_title(s)} x E/K", s, self.sparsity_superpod))

    def titled(self) -> dict[str, RatioMap]:
        """The four maps by panel title, in drawing order."""
        return {t: rm for t, _, rm in self._panels()}

    def placements(self, models: list[Model]) -> dict[str, dict[str, tuple[float, float]]]:
        """Per panel, each model at its own M (or E / K) and the panel device's bandwidth."""
        return {t: {m.name: (m.moe_intermediate_size if rm.axis == "moe_intermediate_size" else m.sparsity,
                             hw.scale_out_bytes_per_s) for m in models} for t, hw, rm in self._panels()}

    def columns(self) -> list[dict]:
        """Per map, its cells as columns: map title, bandwidth (GB/s), M or E / K, ratio, EP and AFD
        tokens/s per GPU (bandwidth-major)."""
        return [{"map": t, "bandwidth_gb_per_s": np.repeat(rm.bandwidth / 1e9, rm.values.size),
                 rm.axis: np.tile(rm.values, rm.bandwidth.size), "ratio": rm.ratio.ravel(), "ep": rm.ep.ravel(),
                 "afd": rm.afd.ravel()} for t, _, rm in self._panels()]

    def on_bound(self) -> str:
        """How many cells of the maps have a best on a bound of the search (its cap): "3 of 576"."""
        maps = [rm for _, _, rm in self._panels()]
        return f"{sum(rm.on_bound for rm in maps)} of {sum(rm.ratio.size for rm in maps)}"

    @property
    def points(self) -> int:
        """Candidate-cells of the largest map."""
        return max(rm.points for _, _, rm in self._panels())

    def readings(self) -> MapReadings:
        return map_readings(self)


def property_maps(model: Model, ordinary: Hardware, superpod: Hardware, budget: Budget, context: float,
                  size: int) -> PropertyMaps:
    """The four maps of ``size`` x ``size`` cells (axes: :func:`_grids`)."""
    g = _grids(size)
    return PropertyMaps(model, ordinary, superpod, *(
        ratio_map(model, hw, budget, context, g[net], g[axis], axis)
        for hw, axis in ((ordinary, "moe_intermediate_size"), (ordinary, "sparsity"),
                         (superpod, "moe_intermediate_size"), (superpod, "sparsity"))
        for net in (_network_kind(hw),)))


def _network_kind(hw: Hardware) -> str:
    """Which bandwidth grid a device's maps sweep: a Superpod its fabric's, other devices their NIC's (an
    own Superpod in the ordinary slot keeps its fabric, not a NIC range below its own bandwidth)."""
    return "superpod" if bool(np.all(hw.superpod)) else "ordinary"


def network_words(hw: Hardware) -> str:
    """A device's swept network in prose: "NVIDIA H800 SXM's 8-GPU nodes" (their NIC), "NVIDIA GB200 NVL72's fabric"."""
    return f"{hw.name}'s fabric" if _network_kind(hw) == "superpod" else f"{hw.name}'s {hw.gpus_per_node}-GPU nodes"


def maps_networks(ordinary: Hardware) -> str:
    """The maps caption's networks: the ordinary device's NIC and the Superpod's fabric, or, where the
    "ordinary" device is itself a Superpod (an own-pair book's), each one's fabric."""
    if _network_kind(ordinary) == "superpod":
        return "each Superpod: its whole fabric"
    return f"{network_words(ordinary)}: the NIC; Superpod: the whole fabric"


def network_title(hw: Hardware) -> str:
    """How a map or a caption names a device's swept network: "H800, 8-GPU nodes: scale-out", "GB200: fabric"."""
    return f"{hw.name}: fabric" if _network_kind(hw) == "superpod" else f"{hw.name}, {hw.gpus_per_node}-GPU nodes: scale-out"


@dataclass(frozen=True)
class MapReadings:
    """The maps read at the reference model's own point (ratios; bandwidths bytes/s per GPU).

    Rows at a device's own bandwidth (the grid's nearest): ``m_row_*`` the M map on the ordinary
    device (``m_row_bw`` that row's bandwidth; small/large: the smallest/largest M; peak over M and
    the M there), ``m_top_*`` its top bandwidth row; ``ms_row_*`` the M map on the Superpod at its
    fabric, ``ss_row_*`` its E / K map there; ``s_row_*`` the E / K map on the ordinary device.
    Columns at the grid's M nearest the model's (``ref_m_grid``): ``fabric_*`` the Superpod's M map
    (lowest / highest fabric bandwidth), ``o_*`` the ordinary device's M map (low / high bandwidth,
    the peak over bandwidth and where; ``afd_gain``, ``ep_gain``: each design's relative gain in
    tokens/s per GPU from that peak to the top of the range)."""

    m_small: float
    m_large: float
    s_low: float
    s_high: float
    m_row_bw: float
    m_row_small: float
    m_row_large: float
    m_row_peak: float
    m_row_peak_m: float
    m_top_bw: float
    m_top_small: float
    m_top_large: float
    ms_row_bw: float
    ms_row_small: float
    ms_row_large: float
    ss_row_low: float
    ss_row_high: float
    s_row_low: float
    s_row_high: float
    ref_m_grid: float
    fabric_low: float
    fabric_high: float
    fabric_low_bw: float
    fabric_high_bw: float
    o_low: float
    o_high: float
    o_low_bw: float
    o_high_bw: float
    o_peak: float
    o_peak_bw: float
    afd_gain: float
    ep_gain: float


def map_readings(maps: PropertyMaps) -> MapReadings:
    mo, so, ms, ss = maps.m_ordinary, maps.sparsity_ordinary, maps.m_superpod, maps.sparsity_superpod
    i, i_s = mo.row(maps.ordinary.scale_out_bytes_per_s), ms.row(maps.superpod.scale_out_bytes_per_s)
    j = ms.column(maps.model.moe_intermediate_size)
    row, col = mo.ratio[i], mo.ratio[:, j]
    peak = int(np.nanargmax(col))
    return MapReadings(
        m_small=mo.values[0], m_large=mo.values[-1], s_low=so.values[0], s_high=so.values[-1],
        m_row_bw=mo.bandwidth[i], m_row_small=row[0], m_row_large=row[-1], m_row_peak=np.nanmax(row),
        m_row_peak_m=mo.values[int(np.nanargmax(row))], m_top_bw=mo.bandwidth[-1], m_top_small=mo.ratio[-1, 0],
        m_top_large=mo.ratio[-1, -1], ms_row_bw=ms.bandwidth[i_s], ms_row_small=ms.ratio[i_s, 0],
        ms_row_large=ms.ratio[i_s, -1], ss_row_low=ss.ratio[i_s, 0], ss_row_high=ss.ratio[i_s, -1],
        s_row_low=so.ratio[i, 0], s_row_high=so.ratio[i, -1], ref_m_grid=mo.values[j],
        fabric_low=ms.ratio[0, j], fabric_high=ms.ratio[-1, j], fabric_low_bw=ms.bandwidth[0],
        fabric_high_bw=ms.bandwidth[-1], o_low=col[0], o_high=col[-1], o_low_bw=mo.bandwidth[0],
        o_high_bw=mo.bandwidth[-1], o_peak=np.nanmax(col), o_peak_bw=mo.bandwidth[peak],
        afd_gain=mo.afd[-1, j] / mo.afd[peak, j] - 1, ep_gain=mo.ep[-1, j] / mo.ep[peak, j] - 1)


# --- the threshold, the pools, the overlap methods --------------------------------------------------

def pools_rows(pools: list[dict], slugs: list[str], priced: bool) -> list[dict]:
    """:func:`afdlib.decision.sweetspot.pools_table` rows flattened for a table: GPU-hours per million
    output tokens on each device of ``slugs`` (0 where a design uses none), their total, and the cost
    when ``priced``."""
    return [{"design": r["design"], "tokens/s per GPU": r["tokens_per_s_per_gpu"],
             **{f"{s} GPU-h/Mtok": r["gpu_hours_per_mtok"].get(s, 0.0) for s in slugs},
             "GPU-h/Mtok": r["total_gpu_hours_per_mtok"], **({"USD/Mtok": r["usd_per_mtok"]} if priced else {})}
            for r in pools]


def design_named(design: str, devices) -> str:
    """A :func:`afdlib.decision.sweetspot.pools_table` design ("EP on h20", "AFD 4A (h20) 1F (h800)") with each
    device's slug, its internal key, replaced by its ``name`` from its data; ``devices``: the Hardware."""
    for hw in devices:
        design = re.sub(rf"^EP on {re.escape(hw.slug)}$", f"EP on {hw.name}", design)
        design = design.replace(f"({hw.slug})", f"({hw.name})")
    return design


def pools_named(rows: list[dict], devices) -> list[dict]:
    """:func:`pools_rows` rows labelled for a reader: designs by :func:`design_named`, each device's GPU-hour
    column "GPU-h/Mtok on <name>" instead of "<slug> GPU-h/Mtok"; ``devices``: the Hardware of the slugs."""
    names = {f"{hw.slug} GPU-h/Mtok": f"GPU-h/Mtok on {hw.name}" for hw in devices}
    return [{names.get(k, k): design_named(v, devices) if k == "design" else v for k, v in r.items()} for r in rows]


def heterogeneous_design(pools: list[dict], attention: str, ffn: str) -> str:
    """The first AFD design with ``attention`` (slug) attention nodes and ``ffn`` FFN nodes, or 'none'."""
    pattern = re.compile(rf"\({re.escape(attention)}\).*\({re.escape(ffn)}\)")
    return next((r["design"] for r in pools if pattern.search(r["design"])), "none")


def heterogeneous_prices(pools: list[dict], attention: str, ffn: str) -> tuple[float, float]:
    """The price ratios p_attention / p_ffn (USD per GPU-hour of the ``attention`` device over the
    ``ffn`` device's, slugs) at which the heterogeneous AFD design of :func:`pools_rows` rows costs less
    per output token than EP on either device alone: (low, high), cheaper than EP on ``attention``
    above low and than EP on ``ffn`` below high (no price does both when low >= high; inf / 0 where
    no price does one; (nan, nan) without a heterogeneous design or without either EP row)."""
    design = heterogeneous_design(pools, attention, ffn)
    row = {r["design"]: r for r in pools}
    if design == "none" or f"EP on {attention}" not in row or f"EP on {ffn}" not in row:
        return np.nan, np.nan
    a, f = row[design][f"{attention} GPU-h/Mtok"], row[design][f"{ffn} GPU-h/Mtok"]
    ep_a, ep_f = row[f"EP on {attention}"][f"{attention} GPU-h/Mtok"], row[f"EP on {ffn}"][f"{ffn} GPU-h/Mtok"]
    return (f / (ep_a - a) if ep_a > a else np.inf), max(ep_f - f, 0.0) / a


def heterogeneous_price_reading(pools: list[dict], attention: Hardware, ffn: Hardware) -> str:
    """:func:`heterogeneous_prices` in words (names of the devices; ratios to two significant digits)."""
    low, high = heterogeneous_prices(pools, attention.slug, ffn.slug)
    if np.isnan(low):
        return f"not comparable here: the table lacks a feasible design with {attention.name} attention"
    price, per = f"one {attention.name} GPU-hour costs", f"one {ffn.name} GPU-hour"    # no article to guess
    if low < high:
        return f"cheaper than EP on either device alone when {price} between {low:.2g} and {high:.2g} times {per}"
    against_ffn = (f"never cheaper than EP on {ffn.name}, at any price" if high <= 0 else
                   f"cheaper than EP on {ffn.name} only if {price} under {high:.2g} times {per}")
    against_attention = (f"never cheaper than EP on {attention.name}, at any price" if np.isinf(low) else
                         f"than EP on {attention.name} only above {low:.2g} times")
    return f"{against_ffn}, and {against_attention}: at no price cheaper than both"


@dataclass(frozen=True)
class OverlapReadings:
    """Table 2 read: AFD's 3BO over 2BO and over 4BO (ratios of tokens/s per GPU); EP's 2BO against
    one plain batch (NBO): the signed change at the schedule's (or the override's) hidden share, and
    the gain with all of it hidden; ``ep_sbo_change``: SBO against NBO (signed); ``ep_best``: the
    fastest EP method other than the all-hidden what-if ('NBO', 'SBO' or '2BO')."""

    afd_3_over_2: float
    afd_3_over_4: float
    ep_2bo_change: float           # 2BO / NBO - 1: above zero, two micro-batches gain
    ep_2bo_gain: float
    ep_best: str
    ep_sbo_change: float           # SBO / NBO - 1: above zero, the shared experts' overlap gains
    ep_best_beats_what_if: bool = False   # ep_best at least as fast as the all-hidden what-if too

    def ep_best_words(self) -> str:
        """The fastest EP row in words, against the all-hidden what-if where it matters."""
        if self.ep_best_beats_what_if:
            return f"the fastest EP row, that what-if included, is {self.ep_best}"
        return f"short of that what-if the fastest EP row is {self.ep_best}"


def overlap_readings(methods: list[dict]) -> OverlapReadings:
    """From :func:`afdlib.decision.sweetspot.overlap_methods` rows (its EP 2BO rows: the schedule's, or
    the override's, first; all hidden second)."""
    rate = {r["method"]: r["tokens_per_s_per_gpu"] for r in methods if r["design"] == "AFD"}
    ep = [r for r in methods if r["design"] == "EP"]
    ep_nbo = next(r["tokens_per_s_per_gpu"] for r in ep if r["method"] == "NBO")
    ep_2bo = [r["tokens_per_s_per_gpu"] for r in ep if r["method"] == "2BO"]
    real = [r for r in ep if r["method"] != "2BO"] + [next(r for r in ep if r["method"] == "2BO")]
    top = max(real, key=lambda r: r["tokens_per_s_per_gpu"])
    ep_sbo = next(r["tokens_per_s_per_gpu"] for r in ep if r["method"] == "SBO")
    return OverlapReadings(rate["3BO"] / rate["2BO"], rate["3BO"] / rate["4BO"], ep_2bo[0] / ep_nbo - 1,
                           ep_2bo[1] / ep_nbo - 1, top["method"], ep_sbo / ep_nbo - 1,
                           top["tokens_per_s_per_gpu"] >= ep_2bo[1])


def top_form(rows: list[dict], design: str) -> tuple[str, int, bool]:
    """The form (``ep_form`` or ``afd_form`` of :func:`afdlib.decision.advise.advice_table` rows) that the
    search picks most often for ``design`` ('ep' or 'afd'), in how many pairs, and whether a published
    deployment validates it."""
    picked = [r for r in rows if r.get(f"{design}_form", "-") != "-"]
    if not picked:
        raise AfdError(f"no pair of the table has a best {design.upper()} form")
    forms = [r[f"{design}_form"] for r in picked]
    top = max(dict.fromkeys(forms), key=forms.count)   # ties: the first picked
    return top, forms.count(top), bool(next(r[f"{design}_validated"] for r in picked if r[f"{design}_form"] == top))


def duplex_gain(model: Model, hardware: Hardware, budget: Budget, context: float,
                precision: Precision = Precision(), assumptions: Assumptions = Assumptions()) -> float:
    """How much AFD's best throughput per GPU would gain were its dispatch (FP8, 1 byte per element)
    and combine (BF16, 2 bytes) carried in opposite directions at once rather than on one lane (the
    paper's Eq. 2): the transfer then takes max(1, 2) / (1 + 2) = 2/3 of the time, which is AFD's
    network (scale-out and scale-up, the two legs of its two-stage transfer) at 1.5 times its
    bandwidth, message latencies unchanged. EP is not re-searched."""
    base = float(np.asarray(best_afd(model, hardware, hardware, budget, context, precision,
                                     assumptions).tokens_per_s_per_gpu))
    inter = hardware.inter_domain_bytes_per_s
    fast = replace(hardware, scale_out_bytes_per_s=hardware.scale_out_bytes_per_s * 1.5,
                   scale_up_bytes_per_s=hardware.scale_up_bytes_per_s * 1.5,
                   inter_domain_bytes_per_s=None if inter is None else inter * 1.5)
    return float(np.asarray(best_afd(model, fast, fast, budget, context, precision,
                                     assumptions).tokens_per_s_per_gpu)) / base - 1
