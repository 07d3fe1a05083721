"""What the side by side with aiconfigurator says: the numbers the chapter quotes and its tables.

Every function reads the comparison table (one row per setting, :func:`afdlib.peers.aiconfigurator.comparison_rows`
as a DataFrame; ``ratio_*`` = ours / its), the one-at-a-time variants
(:func:`afdlib.peers.aiconfigurator.variant_rows`) or the tool's rows, and returns either a table or
a dict of the values the prose quotes, keyed by the chapter's glue names and formatted as quoted
(strings; counts stay ``int``). Two predictions "agree" when the ratio is within
:data:`TOLERANCE` of one.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from afdlib.decode.validation import load_deployments, validation_rows
from afdlib.errors import AfdError
from afdlib.evaluator.alltoall import afd_destinations
from afdlib.inputs.catalog import data_dir, load_model
from afdlib.peers.aiconfigurator import DISTRIBUTIONS, comparison_rows, deployment_settings, imbalance_factor

TOLERANCE = 0.2
"""|ours / its - 1| at most this: the two tools agree (the figures' grey band)."""

DESIGNS = ("ep", "afd")

CASE_MODEL = "deepseek-v3"
"""The model of the cases the prose singles out: its AFD FFN pool across two H100 nodes, and
H200's attention per micro-batch against per batch."""


def within(ratios: pd.Series, tolerance: float = TOLERANCE) -> int:
    """How many ratios are within ``tolerance`` of one."""
    return int(((ratios - 1).abs() <= tolerance).sum())


def apart(ratios: pd.Series, tolerance: float = TOLERANCE) -> int:
    """How many ratios are more than ``tolerance`` away from one."""
    return int(((ratios - 1).abs() > tolerance).sum())


def refused_settings(rows: list[dict]) -> list[dict]:
    """The tool's rows that refused a setting (default tables: one per setting)."""
    return [r for r in rows if r["status"] != "ok" and r["distribution"] == DISTRIBUTIONS[0]]


RECORDED_REASON = 200
"""scripts/aiconfigurator_grid.py recorded the first line of a refusal's message up to this many characters."""


def refused_reason(status: str) -> str:
    """A refusal's reason as the book shows it: whole where the record kept it whole; where the record cut
    the message at :data:`RECORDED_REASON` characters (mid-word, mid-sentence), its whole sentences and
    then the rest up to its last whole word, marked "…" and said to be cut in the record."""
    text = status.removeprefix("refused: ")
    kind, _, why = text.partition(": ")
    if len(why) < RECORDED_REASON:
        return text
    whole, _, rest = why.rpartition(". ")
    rest = rest.rsplit(" ", 1)[0] if " " in rest else ""
    return (f"{kind}: {whole}." + (f" {rest} …" if rest else "")
            + f" (the record keeps the message's first {RECORDED_REASON} characters)")


def refused_table(rows: list[dict]) -> pd.DataFrame:
    """The settings the tool refused, with its reason (:func:`refused_reason`)."""
    return pd.DataFrame([{"setting": r["id"], "reason": refused_reason(r["status"])}
                         for r in refused_settings(rows)])


def overall_readings(rows: list[dict], comp: pd.DataFrame) -> dict:
    """The tool's version, how many settings it answered and refused, and per design the median,
    count, agreeing count, range and largest of the TPOT ratios, and how many settings disagree."""
    out = {"aic_version": rows[0]["tool_version"], "n_settings": len(comp),
           "n_refused": len(refused_settings(rows))}
    for design in DESIGNS:
        r = comp[comp.design == design].ratio_tpot_ms
        out.update({f"{design}_median": f"{r.median():.2f}", f"{design}_n": len(r), f"{design}_within": within(r),
                    f"{design}_range": f"{r.min():.2f}-{r.max():.2f}", f"{design}_max": f"{r.max():.2f}",
                    f"{design}_apart": apart(r), f"{design}_above_one": int((r > 1).sum())})
    return out


CHECK_BAND = (0.8, 1.25)
"""Issue 18's check (not a fit target): each design's median TPOT ratio within this band ..."""
CHECK_GAP = 1.15
"""... and the larger of the two designs' medians less than this many times the smaller."""


def check_readings(comp: pd.DataFrame) -> dict:
    """Issue 18's check on the medians of :func:`overall_readings`: whether each design's median
    ratio is inside :data:`CHECK_BAND`, the larger median over the smaller (must stay below
    :data:`CHECK_GAP`) and whether the whole check holds, as words the prose quotes."""
    med = {d: float(comp[comp.design == d].ratio_tpot_ms.median()) for d in DESIGNS}
    lo, hi = CHECK_BAND
    inside = {d: lo <= m <= hi for d, m in med.items()}
    gap = max(med.values()) / min(med.values())
    holds = all(inside.values()) and gap < CHECK_GAP
    failing = [f"the {d.upper()} median" for d in DESIGNS if not inside[d]] + (
        ["the ratio of the medians"] if gap >= CHECK_GAP else [])
    return {"check_band": f"{lo}-{hi}", "check_gap_max": f"{CHECK_GAP:.2f}", "check_gap": f"{gap:.2f}",
            **{f"check_{d}": "inside" if inside[d] else "outside" for d in DESIGNS},
            "check_gap_side": "below" if gap < CHECK_GAP else "above",
            "check_holds": "holds" if holds else "does not hold (" + " and ".join(failing) + " miss it)"}


def lean_readings(comp: pd.DataFrame | None = None) -> dict:
    """How far our model leans toward one design against the tool: each design's median TPOT ratio
    (ours / its) and the factor by which ours favours AFD relative to the tool, median EP ratio over
    median AFD ratio (above 1: our AFD is the more optimistic of the two; worded both ways).
    ``comp``: the comparison table (default: :func:`afdlib.peers.aiconfigurator.comparison_rows` at
    our defaults)."""
    comp = pd.DataFrame(comparison_rows()) if comp is None else comp
    med = {d: float(comp[comp.design == d].ratio_tpot_ms.median()) for d in DESIGNS}
    lean = med["ep"] / med["afd"]
    toward, factor = ("AFD", lean) if lean >= 1 else ("EP", 1 / lean)
    return {"aic_ep_median": f"{med['ep']:.2f}", "aic_afd_median": f"{med['afd']:.2f}",
            "aic_lean": f"toward {toward} by a factor {factor:.2f}"}


def _grid(comp: pd.DataFrame, design: str, hardware: str | None = None, model: str | None = None) -> pd.DataFrame:
    g = comp[(comp.kind == "grid") & (comp.design == design)]
    if hardware is not None:
        g = g[g.hardware == hardware]
    return g if model is None else g[g.model == model]


def batch_readings(comp: pd.DataFrame) -> dict:
    """The ratio along the batch: EP's median at 8-16 and at 128-256 requests per GPU, at 256
    alone, how many agree at 128; AFD for DeepSeek-V3 on H100 (its FFN pool spans two nodes):
    our smallest ratio, the tool's largest TPOT (ms) and its FFN stage at 128 requests per GPU
    against H200's one-node pool (us)."""
    ep = _grid(comp, "ep")
    at128 = ep[ep.batch_per_gpu == 128].ratio_tpot_ms
    h100, h200 = _grid(comp, "afd", "h100", CASE_MODEL), _grid(comp, "afd", "h200", CASE_MODEL)
    return {"ep_small": f"{ep[ep.batch_per_gpu <= 16].ratio_tpot_ms.median():.2f}",
            "ep_large": f"{ep[ep.batch_per_gpu >= 128].ratio_tpot_ms.median():.2f}",
            "ep_128_within": f"{within(at128)} of {len(at128)}",
            "ep_256": f"{ep[ep.batch_per_gpu == 256].ratio_tpot_ms.median():.2f}",
            "afd_h100_min": f"{h100.ratio_tpot_ms.min():.2f}",
            "afd_h100_aic_tpot": f"{h100.aic_tpot_ms.max():.0f}",
            "afd_h100_tf": f"{float(h100[h100.batch_per_gpu == 128].aic_t_ffn_us.iloc[0]):,.0f}",
            "afd_h200_tf": f"{float(h200[h200.batch_per_gpu == 128].aic_t_ffn_us.iloc[0]):,.0f}"}


STAGE_RATIOS = ("ratio_attn_ms", "ratio_ffn_ms", "ratio_t_attn_us", "ratio_t_ffn_us", "ratio_t_comm_us")


def stage_readings(comp: pd.DataFrame, batch: int = 128) -> dict:
    """Per stage the median ratio over the grid, the range of the transfer's, and on H200
    (DeepSeek-V3, ``batch`` requests per GPU) each tool's attention for one AFD micro-batch (us
    per layer) as a share of its EP attention for the whole batch (one step's sum over the
    model's layers, per layer)."""
    grid = comp[comp.kind == "grid"]
    out = {c: f"{grid[c].median():.2f}" for c in STAGE_RATIOS}
    out["tc_range"] = f"{grid.ratio_t_comm_us.min():.2f} to {grid.ratio_t_comm_us.max():.2f}"
    layers = load_model(CASE_MODEL, profile="reference").num_layers
    at = _grid(comp, "afd", "h200", CASE_MODEL).set_index("batch_per_gpu")
    et = _grid(comp, "ep", "h200", CASE_MODEL).set_index("batch_per_gpu")
    aic_ep, our_ep = et.aic_attn_ms[batch] / layers * 1e3, et.our_attn_ms[batch] / layers * 1e3
    out.update({f"aic_attn_afd_{batch}": f"{at.aic_t_attn_us[batch]:.0f}", f"aic_attn_ep_{batch}": f"{aic_ep:.0f}",
                "aic_attn_share": f"{at.aic_t_attn_us[batch] / aic_ep:.0%}",
                "our_attn_share": f"{at.our_t_attn_us[batch] / our_ep:.0%}"})
    return out


AFD_STAGES = ("t_attn_us", "t_ffn_us", "t_comm_us")


def afd_stage_readings(rows: list[dict], comp: pd.DataFrame, batch: int = 128) -> dict:
    """Why AFD's TPOT ratio is its FFN stage's: on how many grid settings each tool's slowest
    stage is t_f, the median TPOT ratio over the t_f ratio, each tool's TPOT over layers x
    micro-batches x its slowest stage (1: everything else hidden); and DeepSeek-V3 on H200 at
    ``batch`` requests per GPU: tokens per expert, our t_f and the tool's with its balanced and its
    power-law tables (us)."""
    g = _grid(comp, "afd").copy()
    raw = {(r["id"], r["distribution"]): r for r in rows if r["status"] == "ok"}
    mb = g.id.map(lambda i: float(raw[(i, DISTRIBUTIONS[0])]["micro_batches"]))
    layers = g.model.map(lambda s: load_model(s, profile="reference").num_layers)
    out = {"afd_grid_n": len(g)}
    slowest = {}
    for tool in ("our", "aic"):
        stages = g[[f"{tool}_{c}" for c in AFD_STAGES]]
        slowest[tool] = stages.idxmax(axis=1) == f"{tool}_t_ffn_us"
        per = g[f"{tool}_tpot_ms"] * 1e3 / (layers * mb * stages.max(axis=1))
        out[f"{tool}_tpot_per_slowest"] = f"{per.median():.2f}"
    out["afd_ffn_bound"] = int((slowest["our"] & slowest["aic"]).sum())
    out["afd_tpot_per_tf"] = f"{(g.ratio_tpot_ms / g.ratio_t_ffn_us).median():.2f}"
    case = g[(g.hardware == "h200") & (g.model == CASE_MODEL) & (g.batch_per_gpu == batch)].iloc[0]
    m, k = load_model(CASE_MODEL, profile="reference"), int(case.name)
    bal = float(raw[(case.id, DISTRIBUTIONS[1])]["t_ffn_us"])
    out.update({"case_tokens_per_expert": f"{batch * case.attn_gpus / mb[k] * m.experts_per_token / m.routed_experts:.0f}",
                "case_our_tf": f"{case.our_t_ffn_us:.0f}",
                "case_aic_tf_bal": f"{bal:.0f}", "case_aic_tf": f"{case.aic_t_ffn_us:.0f}"})
    return out


def ep_stage_readings(comp: pd.DataFrame) -> dict:
    """EP's two parts along the batch: the median attention and FFN-side ratios at 8-16 and at the
    largest batch, how much each tool's FFN side grows from the smallest batch to the largest
    (median over model and system), and at which batch(es) most settings agree."""
    ep = _grid(comp, "ep")
    small, top = ep[ep.batch_per_gpu <= 16], ep[ep.batch_per_gpu == ep.batch_per_gpu.max()]
    lo, hi = ep.batch_per_gpu.min(), ep.batch_per_gpu.max()
    by = ep.set_index(["model", "hardware", "batch_per_gpu"])
    out = {f"ep_{part}_{tag}": f"{d[f'ratio_{part}_ms'].median():.2f}"
           for part in ("attn", "ffn") for tag, d in (("small", small), ("top", top))}
    for tool in ("our", "aic"):
        f = by[f"{tool}_ffn_ms"].unstack("batch_per_gpu")
        out[f"ep_ffn_growth_{tool}"] = f"{(f[hi] / f[lo]).median():.1f}"
    agree = ep.groupby("batch_per_gpu").ratio_tpot_ms.apply(within)
    best = agree[agree == agree.max()].index
    out.update({"ep_batch_lo": int(lo), "ep_batch_hi": int(hi), "ep_best_batches": " and ".join(str(b) for b in best),
                "ep_best_within": f"{agree.max()} of {int((ep.batch_per_gpu == best[0]).sum())}"})
    return out


def _pair(its, ours, fmt: str) -> list[str]:
    return [fmt.format(a, o) for a, o in zip(its, ours)]


def stage_table(comp: pd.DataFrame, batch: int = 128) -> pd.DataFrame:
    """Table 1: both tools' TPOT and stage times at ``batch`` requests per GPU (EP: ms per step
    over all layers; AFD: us per layer and micro-batch), "its / ours"."""
    t = comp[(comp.kind == "grid") & (comp.batch_per_gpu == batch)].sort_values(["design", "model", "hardware"])
    ep = (t.design == "ep").to_numpy()
    return pd.DataFrame({
        "design": t.design.str.upper(), "model": t.model, "system": t.hardware.str.upper(),
        "TPOT ms (its / ours)": _pair(t.aic_tpot_ms, t.our_tpot_ms, "{:.1f} / {:.1f}"),
        "attention (its / ours)": np.where(ep, _pair(t.aic_attn_ms, t.our_attn_ms, "{:.1f} / {:.1f} ms"),
                                           _pair(t.aic_t_attn_us, t.our_t_attn_us, "{:.0f} / {:.0f} µs")),
        "FFN side (its / ours)": np.where(ep, _pair(t.aic_ffn_ms, t.our_ffn_ms, "{:.1f} / {:.1f} ms"),
                                          _pair(t.aic_t_ffn_us, t.our_t_ffn_us, "{:.0f} / {:.0f} µs")),
        "transfer t_c (its / ours)": np.where(ep, "in FFN side",
                                              _pair(t.aic_t_comm_us, t.our_t_comm_us, "{:.0f} / {:.0f} µs"))})


# --- which assumption explains a gap ---------------------------------------------------------

DEFAULTS = "our defaults"
KERNEL_10 = "kernel overhead 10 us"
KERNEL_0 = "kernel overhead 0 us"
BALANCED = "its balanced MoE tables (no power-law load)"
QUOTED = {"afd": {"k10": KERNEL_10, "hbm": "HBM at 55% of datasheet (datasheet kernels)",
                  "ov0": "AFD transfers not hidden (overlap 0)"},
          "ep": {"k0": KERNEL_0, "k10": KERNEL_10, "hbm": "HBM at 55% of datasheet (datasheet kernels)",
                 "two": "EP: two micro-batches (DeepSeek's overlap; the tool models one)"}}
"""The variants (labels of :data:`afdlib.peers.aiconfigurator.VARIANTS`) the prose quotes with
their median and agreeing count, by design and glue tag."""


def variants_apart(var: pd.DataFrame, tolerance: float = TOLERANCE) -> pd.DataFrame:
    """The variant rows of the settings more than ``tolerance`` apart under our defaults, each
    design against the changes that concern it (an AFD-only change leaves EP as it is)."""
    base = var[var.variant == DEFAULTS].set_index("id").ratio_tpot_ms
    off = var[var.id.isin(base[(base - 1).abs() > tolerance].index)]
    return off[~((off.design == "ep") & off.variant.str.startswith("AFD"))
               & ~((off.design == "afd") & off.variant.str.startswith("EP"))]


def variant_summary(var: pd.DataFrame) -> pd.DataFrame:
    """Per design (EP first) and variant, over the settings apart under our defaults: the median
    TPOT ratio, how many agree and how many there are."""
    summary = variants_apart(var).groupby(["design", "variant"], sort=False).ratio_tpot_ms.agg(
        median="median", within=within, n="count").reset_index()
    return summary.sort_values("design", kind="stable", key=lambda d: d.map({"ep": 0, "afd": 1}))


def _pick(summary: pd.DataFrame, design: str, variant: str, column: str = "median"):
    hit = summary[(summary.design == design) & (summary.variant == variant)][column]
    if hit.empty:
        raise AfdError(f"no {design} setting apart under the variant '{variant}'")
    return hit.iloc[0]


def variant_readings(var: pd.DataFrame) -> dict:
    """The variants the prose quotes: median ratio and agreeing count (:data:`QUOTED`), the
    medians under our defaults, the send probability and the balanced tables; at 10 us per kernel
    how many AFD settings stay apart (and how many of those are DeepSeek-V3 on H100); without the
    kernel cost how many EP settings stay apart (and how many of those are above 1 + tolerance)."""
    summary, off = variant_summary(var), variants_apart(var)
    out = {}
    for design, quoted in QUOTED.items():
        for tag, variant in quoted.items():
            out[f"{design}_{tag}_median"] = f"{_pick(summary, design, variant):.2f}"
            out[f"{design}_{tag}_within"] = int(_pick(summary, design, variant, "within"))
    k10 = off[(off.variant == KERNEL_10) & (off.design == "afd")]
    k10_left = k10[(k10.ratio_tpot_ms - 1).abs() > TOLERANCE]
    k0 = off[(off.variant == KERNEL_0) & (off.design == "ep")]
    out.update({"afd_k10_left": len(k10_left),
                "afd_k10_left_h100": int(((k10_left.hardware == "h100") & (k10_left.model == CASE_MODEL)).sum()),
                "ep_k0_left": apart(k0.ratio_tpot_ms), "ep_k0_left_high": int((k0.ratio_tpot_ms > 1 + TOLERANCE).sum()),
                "afd_send_median": f"{_pick(summary, 'afd', 'AFD: its send probability'):.2f}"})
    for design in DESIGNS:
        out[f"{design}_base_apart_median"] = f"{_pick(summary, design, DEFAULTS):.2f}"
        out[f"{design}_balanced_median"] = f"{_pick(summary, design, BALANCED):.2f}"
    return out


def ep_fixed_cost_readings(var: pd.DataFrame) -> dict:
    """EP without our fixed cost per kernel (:data:`KERNEL_0`): the median TPOT ratio over every EP
    setting (as :func:`overall_readings`) and the attention and FFN-side ratios over the grid (as
    :func:`stage_readings`); with DeepSeek's two micro-batches instead of the tool's one, the median
    TPOT ratio over every EP setting, how many EP settings apart under our defaults stay apart, and
    how many of those are above 1 + tolerance."""
    k0 = var[(var.design == "ep") & (var.variant == KERNEL_0)]
    grid = k0[k0.kind == "grid"]
    two_all = var[(var.design == "ep") & (var.variant == QUOTED["ep"]["two"])].ratio_tpot_ms
    two = variants_apart(var)
    two = two[(two.design == "ep") & (two.variant == QUOTED["ep"]["two"])].ratio_tpot_ms
    return {"ep_k0_tpot": f"{k0.ratio_tpot_ms.median():.2f}", "ep_k0_attn": f"{grid.ratio_attn_ms.median():.2f}",
            "ep_k0_ffn": f"{grid.ratio_ffn_ms.median():.2f}", "ep_two_tpot": f"{two_all.median():.2f}",
            "ep_two_left": apart(two), "ep_two_left_high": int((two > 1 + TOLERANCE).sum())}


def variant_table(var: pd.DataFrame) -> pd.DataFrame:
    """Table 2: :func:`variant_summary` as printed."""
    summary = variant_summary(var)
    table = summary.assign(design=summary.design.str.upper(), median=summary["median"].map("{:.2f}".format),
                           within=[f"{w} of {n}" for w, n in zip(summary.within, summary.n)]).drop(columns="n")
    table.columns = ["design", "change (one at a time)", "median ours / its", "within 20%"]
    return table


# --- the send probability ----------------------------------------------------------------------

RULES = (("ours (uniform, with replacement)", "expected"), ("aiconfigurator (K distinct experts)", "exact"),
         ("paper: every node, up to K", "paper"))


def destination_table(model: str = CASE_MODEL, n_ffn=(1, 2, 4, 8, 16, 32)) -> pd.DataFrame:
    """Table 3: FFN nodes one token crosses to under two-stage AFD against the FFN nodes N_F, by
    each rule (:func:`afdlib.evaluator.alltoall.afd_destinations`)."""
    m, n_f = load_model(model), np.asarray(n_ffn)
    return pd.DataFrame({"N_F (FFN nodes)": n_f, **{
        label: [f"{v:.2f}" for v in afd_destinations(rule, m.experts_per_token, m.routed_experts, n_f)]
        for label, rule in RULES}})


def destination_readings(model: str = CASE_MODEL, n_ffn=(1, 2, 4, 8, 16, 32), at: int = 8) -> dict:
    """The largest relative gap of the tool's exact count over ours across ``n_ffn``, and how much
    the paper's reading overstates the exact count at N_F = ``at``."""
    m, n_f = load_model(model), np.asarray(n_ffn)
    k, e = m.experts_per_token, m.routed_experts
    gap = float(np.max(afd_destinations("exact", k, e, n_f) / afd_destinations("expected", k, e, n_f))) - 1
    over = float(afd_destinations("paper", k, e, at) / afd_destinations("exact", k, e, at)) - 1
    return {f"paper_over_{at}": f"{over:.0%}", "rules_max_gap": f"{gap:.1%}"}


# --- the published deployments -------------------------------------------------------------

def deployment_comparison(rows: list[dict], comp: pd.DataFrame, cases: dict | None = None
                          ) -> tuple[pd.DataFrame, dict[str, str]]:
    """Per published deployment the tool can express: published tokens/s per GPU, ours at the
    published setting (the validation chapter's), ours and the tool's at its setting, the tool's
    power-law cost (its TPOT over its balanced tables' - 1) and the three errors. Also the
    deployments it cannot express, with the reason."""
    cases = cases if cases is not None else load_deployments()
    ours = {r["case"]: r for r in validation_rows(cases)}
    settings, not_expressible = deployment_settings(cases)
    imb = imbalance_factor(rows)
    dep = comp[comp.kind == "deployment"].set_index("deployment")
    three = pd.DataFrame([{"deployment": ours[s.deployment]["label"], "published": ours[s.deployment]["published"],
                           "ours": ours[s.deployment]["predicted"],
                           "ours at its setting": dep.loc[s.deployment].our_tokens_per_s_per_gpu,
                           "aiconfigurator": dep.loc[s.deployment].aic_tokens_per_s_per_gpu,
                           "its setting": s.note, "its power-law cost": imb[s.id] - 1}
                          for s in settings if s.deployment in dep.index])
    three["our error"] = three.ours / three.published - 1
    three["its error"] = three.aiconfigurator / three.published - 1
    three["its error, balanced tables"] = three.aiconfigurator * (1 + three["its power-law cost"]) / three.published - 1
    return three, not_expressible


def _span(x: pd.Series) -> str:
    return f"{x.min():+.0%} to {x.max():+.0%}"


def deployment_readings(three: pd.DataFrame, not_expressible: dict[str, str]) -> dict:
    """Median and largest absolute error of ours and the tool's (and in how many cases ours is the
    larger), ours at its setting, the tool's
    with its balanced tables (and their range on DeepSeek's cases), its power-law cost's range, and
    the deployments it cannot express."""
    there = three["ours at its setting"] / three.published - 1
    balanced = three["its error, balanced tables"]
    deepseek = balanced[three.deployment.str.startswith("DeepSeek")]
    return {"n_deployments": len(three), "our_dep_median": f"{three['our error'].abs().median():.1%}",
            "dep_ours_worse": int((three["our error"].abs() > three["its error"].abs()).sum()),
            "aic_dep_median": f"{three['its error'].abs().median():.1%}",
            "our_dep_max": f"{three['our error'].abs().max():.1%}",
            "our_there_median": f"{there.abs().median():.1%}", "our_there_range": _span(there),
            "aic_dep_max": f"{three['its error'].abs().max():.1%}", "aic_bal_median": f"{balanced.abs().median():.1%}",
            "ds_bal_range": _span(deepseek), "imb_range": _span(three["its power-law cost"]),
            "not_expressible": "; ".join(f"{k} ({v})" for k, v in not_expressible.items())}


def deployment_table(three: pd.DataFrame) -> pd.DataFrame:
    """Table 4: :func:`deployment_comparison` as printed in six columns, so that it fits the page: each
    prediction with its error ("2,320 (+25.4%)"), the tool's setting with ours at it (tokens/s with
    thousands separators, errors as signed percentages)."""
    def with_error(value, error):
        return [f"{v:,.0f} ({e:+.1%})" for v, e in zip(three[value], three[error])]
    return pd.DataFrame({
        "deployment": three["deployment"], "published": three["published"].map("{:,.0f}".format),
        "ours (error)": with_error("ours", "our error"), "aiconfigurator (error)": with_error("aiconfigurator",
                                                                                           "its error"),
        "its error, balanced tables": three["its error, balanced tables"].map("{:+.1%}".format),
        "its setting (ours at it)": [f"{s} ({v:,.0f})" for s, v in zip(three["its setting"],
                                                                       three["ours at its setting"])]})


# --- speed -----------------------------------------------------------------------------------

SWEEP = "100-point sweep, one call per point"


def speed_readings(path: str | Path | None = None) -> dict:
    """The side-by-side timing (``data/aiconfigurator_speed.csv``): cores, one prediction (the
    tool's s, ours ms), the sweep one call per point (s each) and their ratio, ours vectorised (ms)."""
    speed = pd.read_csv(Path(path) if path else data_dir() / "aiconfigurator_speed.csv").set_index("what")
    theirs, ours = speed.aiconfigurator_s, speed.ours_s
    return {"speed_cores": int(speed.cores.iloc[0]), "speed_theirs_one": f"{theirs['one prediction']:.2f}",
            "speed_ours_one": f"{ours['one prediction'] * 1e3:.1f}", "speed_theirs_sweep": f"{theirs[SWEEP]:.0f}",
            "speed_ours_loop": f"{ours[SWEEP]:.2f}", "speed_ratio_loop": f"{theirs[SWEEP] / ours[SWEEP]:,.0f}",
            "speed_ours_vector": f"{ours['100-point sweep, ours as one vectorised call'] * 1e3:.1f}"}
