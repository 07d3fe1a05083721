"""The figures of the decode model: validation, breakdown, sensitivity, batch curves, DeepEP
kernels, the advice heat map and the sweet-spot ratio maps."""
from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import PercentFormatter

from afdlib.report.figures.common import PAGE_WIDTH_IN, legend_below, plain_log_ticks, wrapped


def validation_figure(table: pd.DataFrame):
    """Predicted against published tokens/s per GPU (bar: the overlap what-if band, nothing hidden ..
    all hidden, for EP and AFD alike), with +-20% and +-35% bands; points numbered as the table's rows."""
    from matplotlib.ticker import FuncFormatter
    fig, ax = plt.subplots(figsize=(7.2, 5.4))
    lo, hi = table[["published", "band_low"]].min().min() * 0.7, table[["published", "band_high"]].max().max() * 1.3
    x = np.geomspace(lo, hi, 10)
    ax.plot(x, x, color="black", lw=1)
    for f, style in ((0.20, "--"), (0.35, ":")):
        ax.fill_between(x, x * (1 - f), x * (1 + f), color="grey", alpha=0.12 if f == 0.20 else 0.06, lw=0)
        for sign in (1, -1):
            ax.plot(x, x * (1 + sign * f), style, color="grey", lw=0.8)
    for k, r in enumerate(table.itertuples()):
        colour = "#2c7fb8" if r.design == "ep" else "#d95f02"
        marker = {"published": "o", "derived": "o", "assumed": "s"}.get(r.batch_from, "D")
        # (a band that is a point, one serial batch, may sit a rounding error off its prediction)
        ax.errorbar(r.published, r.predicted, yerr=[[max(r.predicted - r.band_low, 0.0)],
                                                    [max(r.band_high - r.predicted, 0.0)]],
                    fmt=marker, color=colour, ms=7, capsize=4, lw=1.2)
        # a case sharing its published figure with an earlier one (a head-to-head's two sides) is
        # numbered on the left, so the two numbers do not overprint
        shared = any(abs(q.published / r.published - 1) < 0.03 for q in list(table.itertuples())[:k])
        ax.annotate(str(k + 1), (r.published, r.predicted), xytext=(-16 if shared else 7, -4),
                    textcoords="offset points", fontsize=9)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ticks = [t for t in (300, 500, 1000, 2000, 3000, 5000, 7000, 10000, 15000) if lo <= t <= hi]
    fmt = FuncFormatter(lambda v, _: f"{v:,.0f}")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(plt.FixedLocator(ticks))
        axis.set_major_formatter(fmt)
        axis.set_minor_formatter(plt.NullFormatter())
    ax.set_xlabel("published output tokens/s per GPU")
    ax.set_ylabel("predicted output tokens/s per GPU")
    ax.set_title("blue EP, orange AFD (bar: communication hidden none .. all); circles: published (or derived) batch,\n"
                 "squares: assumed batch, diamonds: batch from SLO and memory; bands ±20% and ±35%", fontsize=8)
    return fig


def breakdown_figure(table: pd.DataFrame):
    """Each case's attention, FFN and all-to-all time per MoE layer over all its micro-batches, one
    unit for both designs (the table's AFD stage times are one micro-batch's: multiplied by the
    micro-batches; cases numbered as the table's rows)."""
    fig, ax = plt.subplots(figsize=(7.2, 0.55 * len(table) + 1.2))
    y = np.arange(len(table))
    parts = (("t_attn_us", "attention", "#2c7fb8"), ("t_ffn_us", "FFN (experts)", "#1a9641"),
             ("t_comm_us", "dispatch + combine", "#d7191c"))
    per_layer = np.where(table.design == "afd", table.micro_batches, 1)
    for j, (col, name, colour) in enumerate(parts):
        ax.barh(y + (j - 1) * 0.26, table[col] * per_layer, height=0.26, color=colour, label=name)
    ax.set_yticks(y, [f"{k + 1}. {c}" for k, c in enumerate(table.label)], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("µs per MoE layer, all micro-batches (each stage's busy time)")
    fig.tight_layout()
    legend_below(ax, fontsize=8)                   # under the axis: it covered the last case's bars
    return fig


def sensitivity_figure(sens: pd.DataFrame, base: pd.DataFrame):
    """Relative error of every case under one-at-a-time variations (the default first)."""
    import seaborn as sns
    table = sens.pivot(index="variation", columns="case", values="error")
    order = list(dict.fromkeys(sens.variation))
    table = pd.concat([base.set_index("case")["error"].rename("defaults").to_frame().T, table.loc[order]])
    table = table[list(base.case)].astype(float)
    fig, ax = plt.subplots(figsize=(8, 0.38 * len(table) + 1.6))
    sns.heatmap(table, ax=ax, cmap="RdBu_r", vmin=-0.6, vmax=0.6, annot=True, fmt="+.0%", annot_kws={"fontsize": 9},
                xticklabels=[f"{k + 1}" for k in range(table.shape[1])],
                cbar_kws={"format": PercentFormatter(1.0), "label": "predicted / published - 1"})
    ax.tick_params(axis="y", labelsize=9)
    ax.set_xlabel("case # (the table of cases' first column)")
    ax.set_ylabel("")
    fig.tight_layout()
    return fig


def batch_curves_figure(curves: dict, published: dict):
    """Throughput per GPU against requests per GPU for some cases, the published figure as a line."""
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for name, (reqs, rate, colour) in curves.items():
        ax.plot(reqs, rate, color=colour, label=name)
        ax.axhline(published[name], color=colour, ls=":", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("requests per GPU")
    ax.set_ylabel("predicted output tokens/s per GPU")
    ax.set_title("dotted: published figure", fontsize=9)
    fig.tight_layout()
    legend_below(ax, fontsize=8)                   # under the axis: it covered the curves
    return fig


def deepep_figure(rows: pd.DataFrame):
    """The all-to-all operator against DeepEP's measured low-latency times, by EP size."""
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for col, model_col, name, colour in (("dispatch_us", "model_dispatch_us", "dispatch", "#fdae61"),
                                         ("both_us", "model_both_us", "dispatch + combine", "#d7191c")):
        ax.plot(rows.ep_size, rows[col], "o", color=colour, label=f"{name}, DeepEP measured")
        ax.plot(rows.ep_size, rows[model_col], "-", color=colour, label=f"{name}, model")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("EP size")
    ax.set_ylabel("µs (128 tokens, top-8, H800)")
    ax.legend(fontsize=8)
    return fig


def advice_heatmap(table: pd.DataFrame, hardware: list[str], models: list[str]):
    """AFD / EP throughput ratio of every (model, device) pair at the model's defaults, with P(AFD
    better) under it (the table's ``p_afd``); '?' marks a pair the probability does not decide (the
    table's ``decisive`` False)."""
    import seaborn as sns
    from matplotlib.colors import LogNorm
    cells = table.set_index(["model", "hardware"])
    grid = table.pivot(index="model", columns="hardware", values="ratio").loc[models, hardware].astype(float)
    marks = pd.DataFrame([[_advice_mark(cells, m, h) for h in hardware] for m in models], index=models, columns=hardware)
    fig, ax = plt.subplots(figsize=(min(PAGE_WIDTH_IN, 0.8 * len(hardware) + 2.4), 0.55 * len(models) + 1.6))
    sns.heatmap(grid, ax=ax, cmap="PuOr_r", norm=LogNorm(vmin=0.5, vmax=2.0), annot=marks, fmt="",
                annot_kws={"fontsize": 8}, cbar_kws={"label": "AFD / EP tokens/s per GPU (orange: AFD ahead)"})
    names = {col: dict(zip(table[col], table[f"{col}_name"])) for col in ("model", "hardware")
             if f"{col}_name" in table}   # the catalogue's names, where the table carries them
    if names:
        ax.set_yticklabels([names.get("model", {}).get(m, m) for m in models], rotation=0)
        # a long own device name on lines of its own: rotated whole, it ran into the colour bar's label
        ax.set_xticklabels([textwrap.fill(names.get("hardware", {}).get(h, h).removeprefix("NVIDIA "), 18)
                            for h in hardware])
    ax.tick_params(axis="x", labelrotation=30)
    ax.set(xlabel="", ylabel="")
    _ratio_colour_bar(ax.collections[0].colorbar)
    ax.set_title("ratio at the model's defaults; below it P(AFD better); '?': undecided (P between 0.1 and 0.9)",
                 fontsize=8)
    fig.tight_layout()
    return fig


def _advice_mark(cells: pd.DataFrame, model: str, hardware: str) -> str:
    """A cell's text: the ratio, and P(AFD better) below it ('?' where undecided)."""
    row = cells.loc[(model, hardware)]
    if not np.isfinite(row["ratio"]):
        return "-"
    p = row.get("p_afd", np.nan)
    return f"{row['ratio']:.2f}" + ("" if not np.isfinite(p) else f"\n{p:.2f}") + ("" if row["decisive"] else "?")


def tornado_figure(rows: list[dict], title: str):
    """The AFD / EP ratio with one uncertain assumption at a time at its two outer quadrature nodes
    (:func:`afdlib.decision.verdict.verdict`'s tornado rows), widest first, around the ratio at
    the model's defaults (the vertical line)."""
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * len(rows) + 1.3))
    y = np.arange(len(rows))
    for k, r in enumerate(rows):
        lo, hi = sorted((r["low"], r["high"]))
        ax.barh(k, hi - lo, left=lo, height=0.6, color="#8073ac" if r["high"] < r["low"] else "#e08214")
        ax.text(hi, k, f" {r['at']}", va="center", fontsize=7, zorder=3,     # on white: the defaults' line passes behind
                bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.85))
    ax.axvline(rows[0]["nominal"], color="black", lw=0.8)
    ax.axvline(1.0, color="grey", lw=0.8, ls=":")
    ax.set_yticks(y, [r["assumption"] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    # the range with room for the bars' ends and their labels, and plain ticks across it (a narrow log range
    # otherwise keeps only the tick "1", and no bar can be read)
    ends = [v for r in rows for v in (r["low"], r["high"])] + [rows[0]["nominal"], 1.0]
    lo, hi = min(ends) / 1.04, max(ends) * 1.15
    ax.set_xlim(lo, hi)
    ticks = [t for t in (0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.6, 1.8, 2.0, 2.5, 3.0, 4.0)
             if lo <= t <= hi]
    ax.set_xticks(ticks if len(ticks) >= 3 else np.round(np.geomspace(lo, hi, 4), 2))
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.set_xlabel("AFD / EP tokens/s per GPU (dotted: break-even; line: the model's defaults)")
    # wrapped to the figure's width: a long device or model name must not widen it past the page
    ax.set_title(textwrap.fill(title + " (orange: the ratio rises with the assumption's value, purple: falls)",
                               int(fig.get_figwidth() * 72 / (0.55 * 8)) - 10), fontsize=8)
    fig.tight_layout()
    return fig


def _ratio_colour_bar(bar) -> None:
    """Plain ticks on the logarithmic AFD / EP colour scale (0.5 .. 2), not powers of ten."""
    bar.set_ticks([0.5, 0.7, 1.0, 1.4, 2.0], labels=["0.5", "0.7", "1", "1.4", "2"])
    bar.minorticks_off()


def ratio_maps_figure(maps: dict, placements: dict):
    """One panel per map: AFD / EP ratio over (bandwidth x model shape), the break-even contour, and
    the catalogue models at their shape and their device's bandwidth."""
    from matplotlib.colors import LogNorm
    n = len(maps)
    cols = min(2, n)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(PAGE_WIDTH_IN, 4.4 * rows), squeeze=False, layout="constrained")
    im = None
    for ax, (title, rm) in zip(axes.flat, maps.items()):
        x, y = rm.values, rm.bandwidth / 1e9
        im = ax.pcolormesh(x, y, rm.ratio, cmap="PuOr_r", norm=LogNorm(vmin=0.5, vmax=2.0), shading="nearest")
        if np.nanmin(rm.ratio) < 1 < np.nanmax(rm.ratio):
            ax.contour(x, y, rm.ratio, levels=[1.0], colors="black", linewidths=1.5)
        # models at one point share a label ("8,11"); labels of nearby points are staggered upwards
        points: dict = {}
        for k, (px, py) in enumerate(placements.get(title, {}).values()):
            points.setdefault((float(px), float(py)), []).append(str(k + 1))
        previous, level = None, 0
        y_lo, y_hi = float(np.min(y)), float(np.max(y))
        for (px, py), numbers in sorted(points.items()):
            level = (level + 1) % 3 if previous is not None and px / previous < 1.5 else 0
            # in the upper half the labels stack downwards: off the panel's title and inside the frame
            down = np.log(py / 1e9 / y_lo) > 0.5 * np.log(y_hi / y_lo) if y_hi > y_lo else False
            ax.plot(px, py / 1e9, "o", color="black", ms=4, clip_on=False)
            at_x = np.log(px / np.min(x)) / np.log(np.max(x) / np.min(x)) if np.max(x) > np.min(x) else 0.5
            ha = "left" if at_x < 0.05 else "right" if at_x > 0.95 else "center"     # inside the frame at its edges
            ax.annotate(",".join(numbers), (px, py / 1e9), xytext=(0, -(6 + 11 * level) if down else 5 + 11 * level),
                        textcoords="offset points", fontsize=9, ha=ha, va="top" if down else "bottom",
                        bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.7))
            previous = px
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        plain_log_ticks(ax.yaxis)
        ax.set_xlabel("expert intermediate size M" if rm.axis == "moe_intermediate_size" else "sparsity E / K")
        ax.set_ylabel("bandwidth per GPU, GB/s (sustained)")
        ax.set_title(wrapped(title, PAGE_WIDTH_IN / cols), fontsize=9)   # a long device name: lines, not wider
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    _ratio_colour_bar(fig.colorbar(im, ax=axes, label="AFD / EP tokens/s per GPU (black line: break-even)"))
    return fig


def ratio_bandwidth_figure(curves: dict, current: dict):
    """AFD / EP ratio against the network bandwidth per GPU for several devices; where a curve crosses
    1 the answer flips; a marker at each device's own bandwidth."""
    fig, ax = plt.subplots(figsize=(7.2, 4.2))
    for name, (bw, ratio) in curves.items():
        line, = ax.plot(bw / 1e9, ratio, "-o", ms=3, label=name)
        if name in current:
            ax.plot(current[name][0] / 1e9, current[name][1], "*", ms=12, color=line.get_color())
    ax.axhline(1.0, color="black", lw=1)
    ax.set_xscale("log")
    ax.set_xlabel("network bandwidth per GPU, GB/s (sustained; star: the device's own)")
    ax.set_ylabel("AFD / EP tokens/s per GPU")
    ax.legend(fontsize=8)
    return fig


def kernel_curves_figure(points: pd.DataFrame, curves: pd.DataFrame, attention):
    """The calibrated kernel curves against their measurements. Left: each GEMM or MoE point's
    measured kernel time against the fitted one (+-10% and +-20% bands), by source (``points``:
    :func:`afdlib.evaluator.kernels.measured_points`). Right: achieved
    fraction of peak HBM bandwidth and of peak FLOP/s against rows per weight matrix for the curve's
    shapes (``curves``: columns shape, rows, hbm_fraction, flop_fraction; Hopper), the measured
    Hopper points of those shapes (fractions of their own device's peaks), and the fitted attention fractions (``attention``: the calibrated
    :class:`afdlib.evaluator.kernels.Curves`, Hopper's)."""
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(PAGE_WIDTH_IN, 3.9))
    lo, hi = points.measured_us.min() * 0.7, points.measured_us.max() * 1.4
    x = np.geomspace(lo, hi, 10)
    ax.plot(x, x, color="black", lw=1)
    for f, alpha in ((0.10, 0.14), (0.20, 0.07)):
        ax.fill_between(x, x * (1 - f), x * (1 + f), color="grey", alpha=alpha, lw=0)
    for (source, kind), marker in zip(points.groupby(["source", "kind"], sort=False).groups, "os^vD"):
        sel = points[(points.source == source) & (points.kind == kind)]
        ax.scatter(sel.measured_us, sel.fitted_us, marker=marker, s=18, alpha=0.7, label=f"{source} {kind} ({len(sel)})")
    ax.set(xscale="log", yscale="log", xlabel="measured kernel time (us)", ylabel="fitted kernel time (us)")

    colours = dict(zip(curves["shape"].unique(), ("#2c7fb8", "#d95f02", "#1b9e77", "#7570b3")))
    for shape, c in curves.groupby("shape", sort=False):
        bx.plot(c.rows, c.hbm_fraction, color=colours[shape], lw=1.5, label=f"{shape}: HBM")
        bx.plot(c.rows, c.flop_fraction, color=colours[shape], lw=1.5, ls="--", label=f"{shape}: FLOP/s")
        n, k = (int(v) for v in shape.replace("N", "").replace("K", "").split(" x "))
        sel = points[(points.n == n) & (points.k == k) & points.system.isin(("h800", "h100", "h200"))]
        bx.scatter(sel.m, sel.hbm_fraction, color=colours[shape], marker="o", s=22, zorder=3)
        bx.scatter(sel.m, sel.flop_fraction, color=colours[shape], marker="x", s=22, zorder=3)
    bx.axhline(attention.attention_f_hbm, color="grey", lw=0.8, ls=":")
    bx.axhline(attention.attention_f_flop, color="grey", lw=0.8, ls="-.")
    bx.annotate("attention HBM", (1, attention.attention_f_hbm), xytext=(2, 2), textcoords="offset points", fontsize=8.5)
    bx.annotate("attention BF16 FLOP/s", (1, attention.attention_f_flop), xytext=(2, 2), textcoords="offset points",
                fontsize=8.5)
    bx.set(xscale="log", ylim=(0, 1.05), xlabel="rows per weight matrix (tokens, or tokens per expert)",
           ylabel="achieved fraction of peak (H800)")
    bx.axvspan(bx.get_xlim()[0] if bx.get_xlim()[0] > 0 else 1, 64, color="grey", alpha=0.08, lw=0)
    bx.legend(fontsize=8.5, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2)   # below: off the points
    fig.tight_layout()
    legend_below(ax, fontsize=8.5)                 # under the axis: inside, it covered the 200-600 us points
    ax.get_legend().set_title("source (DeepGEMM kernels)", prop={"size": 8.5})
    return fig


def conditions_figure(panels: dict, costs: dict, price_label: str, unit_device: str = "the FFN-pool device"):
    """The paper's Table 3 conditions one at a time. ``panels``: title -> (x label, {curve: (x, ratio
    under the schedule, ratio with equal overlap, (P(AFD better) at the two ends))}): solid the
    schedule, dashed equal overlap, the ends' P written beside them, two panels a row. ``costs``: design
    -> (GPU-hours per Mtok on the attention-pool device, on ``unit_device``); the last row draws their cost
    in ``unit_device``'s GPU-hours against the price ratio (``price_label``) across the page, its legend
    below: EP dashed, AFD solid, a marker at each end, so that designs of equal cost stay apart."""
    cols = 2                            # two panels a row at the page's width: the text stays legible
    rows = int(np.ceil(len(panels) / cols))
    fig = plt.figure(figsize=(PAGE_WIDTH_IN, 3.3 * (rows + 1)), layout="constrained")
    grid = fig.add_gridspec(rows + 1, cols)
    axes = [fig.add_subplot(grid[i // cols, i % cols]) for i in range(len(panels))]
    if len(panels) % cols:              # an odd panel takes the row's width: no empty slot
        axes[-1].remove()
        axes[-1] = fig.add_subplot(grid[rows - 1, :])
    for ax, (title, (xlabel, curves)) in zip(axes, panels.items()):
        for k, (name, (x, r, req, p)) in enumerate(curves.items()):
            line, = ax.plot(x, r, "-o", ms=3, label=wrapped(name, PAGE_WIDTH_IN / cols))
            ax.plot(x, req, "--", color=line.get_color(), lw=1)
            for xi, ri, pi, side in ((x[0], r[0], p[0], "left"), (x[-1], r[-1], p[-1], "right")):
                if np.isfinite(pi):   # outside the curve's end, one row per curve, on white: off the lines
                    ax.annotate(f"P={pi:.2f}", (xi, ri), xytext=(-5 if side == "left" else 5, 12 * k),
                                textcoords="offset points", fontsize=9, ha="right" if side == "left" else "left",
                                va="center", color=line.get_color(), zorder=5,
                                bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.85))
        ax.margins(x=0.32)                # room beside the ends for the labels (at 0.22 they crossed the frames)
        ax.axhline(1.0, color="black", lw=1)
        ax.set_xscale("log", base=2)
        ax.set(xlabel=xlabel, title=title, ylabel="AFD / EP tokens/s per GPU")
        ax.title.set_fontsize(9)
        # under the panel (the layout makes room): inside, it covered a curve or the break-even line
        ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=1)
    ax = fig.add_subplot(grid[rows, :])
    price = np.geomspace(0.01, 10, 200)
    for name, (a, b) in costs.items():
        cost = a * price + b
        line, = ax.plot(price, cost, ls="--" if name.startswith("EP") else "-", lw=1.4,
                        label=wrapped(name, PAGE_WIDTH_IN / cols))   # the legend fits its half of the page
        ax.plot(price[[0, -1]], cost[[0, -1]], "o", ms=4, color=line.get_color())
    ax.set(xscale="log", yscale="log", xlabel=wrapped(price_label, PAGE_WIDTH_IN),   # long device names wrap
           ylabel=wrapped(f"cost per Mtok ({unit_device} GPU-hours)", 2.6),
           title="heterogeneous pools: cost per million output tokens")
    ax.title.set_fontsize(9)
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2)   # below: the names are long
    return fig
