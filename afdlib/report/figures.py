"""The book's figures: one function per figure, taking computed data and returning a Figure.

Kept out of the notebooks so that each chapter is parameters, a library call, a figure, glued
numbers and prose. Plotting only: every number drawn comes from the model modules.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import PercentFormatter

from afdlib.analysis.hfu import limit_names
from afdlib.report.style import COMM_CEILING, REGIME_COLOURS

PAGE_WIDTH_IN = 8.5
"""Width of a full-page figure, inches: at the theme's content width (about 750 px) the figure is
shown at about 90% of its size, so 8-10 pt text stays legible."""
PANELS_PER_ROW = 2
"""Multi-panel figures are laid out two panels per row for the page."""

STAGE_COLOURS = {"attention": "#2c7fb8", "dispatch": "#fdae61", "combine": "#d7191c", "ffn": "#1a9641",
                 "idle": "#eeeeee"}


_LABEL_OFFSETS = ((7, 0, "left", "center"), (-7, 0, "right", "center"), (5, 3, "left", "bottom"),
                  (5, -3, "left", "top"), (-5, 3, "right", "bottom"), (-5, -3, "right", "top"),
                  (0, 7, "center", "bottom"), (0, -7, "center", "top"), (5, 12, "left", "bottom"),
                  (5, -12, "left", "top"))


def place_labels(ax, points, labels, fontsize: float = 8) -> None:
    """Annotate each point with its label at the first of a few offsets (right-above, right-below,
    left-above, ...) whose text box stays inside the axes and overlaps neither a label placed
    before it nor another point: no label collisions, and no label nearer a foreign point."""
    from matplotlib.transforms import Bbox
    renderer = ax.figure.canvas.get_renderer()
    inside = ax.get_window_extent(renderer)
    dots = [ax.transData.transform(p) for p in points]
    placed = []
    for k, ((x, y), label) in enumerate(zip(points, labels)):
        others = [Bbox.from_bounds(px - 4, py - 4, 8, 8) for j, (px, py) in enumerate(dots) if j != k]
        for dx, dy, ha, va in _LABEL_OFFSETS:
            text = ax.annotate(label, (x, y), fontsize=fontsize, xytext=(dx, dy), textcoords="offset points",
                               ha=ha, va=va)
            box = text.get_window_extent(renderer)
            free = (inside.contains(box.x0, box.y0) and inside.contains(box.x1, box.y1)
                    and not any(box.overlaps(o) for o in placed + others))
            if free:
                break
            text.remove()
        else:                                       # every offset collides: keep the first one
            text = ax.annotate(label, (x, y), fontsize=fontsize, xytext=(5, 3), textcoords="offset points")
            box = text.get_window_extent(renderer)
        placed.append(box.expanded(1.04, 1.1))


def models_scatter(model_table: pd.DataFrame, paper_models: list[str]):
    """Granularity H/M against sparsity E/K; the paper's models in blue, models at one point share a label."""
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    in_paper = model_table["slug"].isin(paper_models)
    ax.scatter(model_table.sparsity_e_over_k, model_table.granularity_h_over_m,
               s=in_paper.map({True: 70, False: 40}), c=in_paper.map({True: "#2c7fb8", False: "#999999"}), zorder=3)
    points = model_table.groupby(["sparsity_e_over_k", "granularity_h_over_m"])["name"].agg(" / ".join)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)          # ratios: equal steps for equal factors, and the small ones apart
    low, high = (int(f(np.log2(v))) for f, v in zip((np.floor, np.ceil), ax.get_ylim()))
    ax.set_yticks([2.0 ** k for k in range(low, high + 1)])
    ax.set_ylim(2.0 ** low / 1.1, 2.0 ** high * 1.1)
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    place_labels(ax, [(x, y) for x, y in points.index], list(points), fontsize=8)
    ax.set_xlabel("sparsity E / K (routed experts per activated expert)")
    ax.set_ylabel("granularity H / M")
    ax.set_title("Models: blue = the paper's six")
    return fig


def intensity_figure(sweep: pd.DataFrame, model, hardware, n_ffn_max: int):
    """Fig. 2: normalised intensity against N_F, discrete and continuous, regimes shaded."""
    from afdlib.analysis.intensity import normalised_intensity, regime_spans
    k, e, r, g = model.experts_per_token, model.routed_experts, hardware.bandwidth_ratio, hardware.gpus_per_node
    fine = np.geomspace(1, n_ffn_max, 800)
    fig, ax = plt.subplots()
    for lo, hi, name in regime_spans(n_ffn_max, k, e, r, g):
        ax.axvspan(lo, hi, color=REGIME_COLOURS[name], zorder=0)
        ax.text(np.sqrt(lo * hi), 1.02, name, transform=ax.get_xaxis_transform(), ha="center", fontsize=8)
    ax.plot(fine, normalised_intensity(fine, k, e, r, g, continuous=True), color="#555555", lw=1.5, ls="--",
            label="continuous G = E / (N_F g)")
    ax.step(sweep.n_ffn, sweep.intensity, where="post", color="#2c7fb8", lw=1.2, alpha=0.6)
    ax.plot(sweep.n_ffn, sweep.intensity, "o", color="#2c7fb8", ms=4, label="discrete G = ceil(E / (N_F g))")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("FFN nodes N_F")
    ax.set_ylabel("intensity I  (B_out = 1 token)")
    ax.set_title(f"{model.name} on {hardware.name}: K={k}, E={e}, g={g}, r={r:.2f}", pad=18)
    ax.legend(loc="upper left", fontsize=8)
    return fig


def hfu_frame(grid: dict[str, np.ndarray], hardware: list[str], models: list[str], n_ffn) -> pd.DataFrame:
    """Long table of an :func:`afdlib.analysis.hfu.hfu_grid` result, one row per (device, model, N_F)."""
    d, m, n = np.meshgrid(hardware, models, n_ffn, indexing="ij")
    return pd.DataFrame({"hardware": d.ravel(), "model": m.ravel(), "n_ffn": n.ravel(),
                         **{k: grid[k].ravel() for k in ("hfu", "comm_ceiling", "feasible", "local_experts")},
                         "limit": limit_names(grid["limit"].ravel())})


_INFEASIBLE_MARKERS = {1: "x", 2: "+", 3: "X"}
_INFEASIBLE_NAMES = {1: "HBM capacity", 2: "weight read > t_B", 3: "both"}


def hfu_panels(grid: dict[str, np.ndarray], hardware, models, n_ffn, ceiling_model: int = 0, title: str = ""):
    """Fig. 4: one panel per device, the bound of each model against N_F; x marks infeasible points,
    labelled with the HBM rule that fails; the communication ceiling of ``models[ceiling_model]`` in bold red."""
    palette = [c for k, c in enumerate(plt.get_cmap("tab10").colors) if k != 3]   # no red beside the red ceiling
    colours = dict(zip([m.slug for m in models], palette))
    cols = min(PANELS_PER_ROW, len(hardware))
    rows = int(np.ceil(len(hardware) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(PAGE_WIDTH_IN, 2.5 * rows + 0.6), sharex=True, sharey=True,
                             squeeze=False)
    ref = models[ceiling_model]
    for i, (h, ax) in enumerate(zip(hardware, axes.flat)):
        ax.plot(n_ffn, np.minimum(grid["comm_ceiling"][i, ceiling_model], 1.0), **COMM_CEILING, zorder=4,
                label=f"communication ceiling ({ref.name}), capped at 100%")
        for j, m in enumerate(models):
            ok, y = grid["feasible"][i, j], grid["hfu"][i, j]
            ax.plot(n_ffn[ok], y[ok], "-o", ms=2.5, lw=1.2, color=colours[m.slug], label=m.name, zorder=3)
            fails = np.asarray(grid["fails"][i, j])
            for bits, marker in _INFEASIBLE_MARKERS.items():   # which rule fails: the marker, in the legend
                hit = fails == bits
                if hit.any():
                    ax.plot(n_ffn[hit], y[hit], marker, ms=6, mew=1.4, color=colours[m.slug], ls="none", zorder=5)
        ax.set_title(h.name.replace("NVIDIA ", ""), fontsize=10)
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 1.08)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    for ax in axes.flat[len(hardware):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("FFN nodes N_F")
    for ax in axes[:, 0]:
        ax.set_ylabel("HFU upper bound")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    for bits, marker in _INFEASIBLE_MARKERS.items():
        handles.append(plt.Line2D([], [], marker=marker, ls="none", color="black", mew=1.2))
        labels.append(f"infeasible: {_INFEASIBLE_NAMES[bits]}")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.legend(handles, labels, loc="upper center", ncol=3, fontsize=8, bbox_to_anchor=(0.5, 0.0))
    return fig


def grouped_gemm_figure(tokens, curves: dict, exponents, hardware, ep_tokens: float, afd_ceiling: dict,
                        paper_ep_hfu: float, experts_per_gpu: int, ofu: float, afd_model_name: str):
    """Fig. 3: grouped-GEMM HFU against tokens per expert, balanced and Zipf-skewed, one panel per device."""
    from afdlib.evaluator.grouped_gemm import ridge_tokens_per_expert
    cols = min(PANELS_PER_ROW, len(hardware))
    rows = int(np.ceil(len(hardware) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(PAGE_WIDTH_IN if cols > 1 else 7.5, 4 * rows), sharey=True,
                             squeeze=False)
    for ax in axes.flat[len(hardware):]:
        ax.set_visible(False)
    for h, ax in zip(hardware, axes.flat):
        for k, s in enumerate(exponents):
            ax.plot(tokens, curves[h.slug][k], lw=2 if s == 0 else 1.3, ls="-" if s == 0 else "--",
                    label="balanced" if s == 0 else f"Zipf s = {s:g}")
        ridge = float(ridge_tokens_per_expert(h.flops, h.hbm_bytes_per_s)) * ofu
        ax.axvline(ridge, color="grey", lw=0.8, ls=":")
        ax.text(ridge, 0.03, f" ridge {ridge:.0f}", fontsize=8, color="grey")
        if afd_ceiling.get(h.slug) is not None:
            ax.axhline(afd_ceiling[h.slug], **COMM_CEILING,
                       label=f"AFD ceiling, {afd_model_name} on {h.name.replace('NVIDIA ', '')} ({afd_ceiling[h.slug]:.1%})")
        ax.axvline(ep_tokens, color="black", lw=0.8)
        ax.text(ep_tokens, 1.02, f"EP: {ep_tokens:.0f} tok/expert", fontsize=8, ha="center")
        if h.slug == "h800":
            ax.plot([ep_tokens], [paper_ep_hfu], "k*", ms=11, label=f"paper, measured EP (~{paper_ep_hfu:.0%})")
        ax.set_xscale("log")
        ax.set_ylim(0, 1.08)
        ax.set_title(f"{h.name}: {experts_per_gpu} experts per GPU", pad=14)
        ax.set_xlabel("average tokens per expert")
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    axes[0, 0].set_ylabel("grouped-GEMM HFU (roofline)")
    fig.tight_layout()
    legend: dict = {}                   # one legend below the panels, each entry once: the curves stay clear
    for ax in axes.flat[:len(hardware)]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    fig.legend(list(legend.values()), list(legend), loc="upper center", ncol=3, fontsize=8, bbox_to_anchor=(0.5, 0.0))
    return fig


def ceiling_figure(models, best: np.ndarray, ordinary, superpod, reference_model):
    """Appendix A: the ceiling against M (with each model's best bound) and against bandwidth."""
    from afdlib.analysis.hfu import comm_ceiling
    sizes = np.geomspace(256, 32768, 200)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(PAGE_WIDTH_IN, 4.3))
    lines = {
        f"{superpod.name}: BW_eff = {superpod.scale_up_bytes_per_s / 1e9:.0f} GB/s":
            (superpod.scale_up_bytes_per_s, superpod.flops, "#c0392b"),
        f"{ordinary.name}, best (scale-up {ordinary.scale_up_bytes_per_s / 1e9:.0f} GB/s)":
            (ordinary.scale_up_bytes_per_s, ordinary.flops, "#2c7fb8"),
        f"{ordinary.name}, dead zone (scale-out {ordinary.scale_out_bytes_per_s / 1e9:.0f} GB/s)":
            (ordinary.scale_out_bytes_per_s, ordinary.flops, "#7f8c8d"),
    }
    for label, (bw, flops, colour) in lines.items():
        ax1.plot(sizes, np.minimum(1, comm_ceiling(1, 1, bw, bw, sizes, flops)), color=colour, lw=2, label=label)
    for i, marker in ((0, "o"), (1, "s")):
        ax1.plot([m.moe_intermediate_size for m in models], best[i], marker, color="black", ms=4, alpha=0.7,
                 ls="none")
    # each model by its number in the list (the chapter's table has the same order), staggered in
    # height where expert sizes lie close together, so that no two labels overlap
    by_size = pd.Series([str(k + 1) for k in range(len(models))]).groupby(
        [m.moe_intermediate_size for m in models]).agg(",".join)
    previous, level = None, 0
    for size, numbers in by_size.items():
        level = (level + 1) % 3 if previous is not None and size / previous < 1.35 else 0
        ax1.text(size, 0.03 + 0.065 * level, numbers, fontsize=7, ha="center", va="bottom",
                 bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.8))
        previous = size
    ax1.set_xscale("log", base=2)
    ax1.set_xlabel("expert intermediate size M")
    ax1.set_ylabel("HFU ceiling")
    ax1.set_title("Ceiling vs M (markers: each model's best feasible bound,\n circles ordinary, squares Superpod; "
                  "numbers: the models)", fontsize=9)
    ax1.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax1.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.24), ncol=1)   # below: the 100% points stay visible
    ax1.set_ylim(0, 1.08)
    bw = np.geomspace(10e9, 2000e9, 200)
    for flops, colour in ((ordinary.flops, "#2c7fb8"), (superpod.flops, "#c0392b")):
        ax2.plot(bw / 1e9, np.minimum(1, comm_ceiling(1, 1, bw, bw, reference_model.moe_intermediate_size, flops)),
                 color=colour, lw=2, label=f"M = {reference_model.moe_intermediate_size}, {flops / 1e12:.0f} TFLOP/s")
    for name, value in (("400 Gb/s NIC", 50e9), ("800 Gb/s NIC", 100e9), ("H800 NVLink", 160e9),
                        ("NVLink 5 (80%)", 720e9)):
        ax2.axvline(value / 1e9, color="grey", lw=0.8, ls=":")
        ax2.text(value / 1e9, 0.40, name, fontsize=7, rotation=90, ha="center", va="bottom",
                 bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85))
    ax2.set_xscale("log")
    ax2.set_xlabel("effective bandwidth per GPU, GB/s (one direction)")
    ax2.set_title(f"Ceiling vs bandwidth ({reference_model.name} experts)", fontsize=9)
    ax2.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax2.set_ylim(0, 1.08)
    ax2.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.24))
    fig.tight_layout()
    return fig


def penalty_table(n_ffn_values, sigmas, lambda_min: float, lambda_max: float) -> pd.DataFrame:
    """Fig. 6 points: every whole N_A with lambda = N_A / N_F in range, every sigma; alpha for AFD and EP.

    One vectorised call over all (N_F, N_A) pairs x all sigmas.
    """
    from afdlib.analysis.imbalance import alpha_afd, alpha_ep
    pairs = [(nf, na) for nf in n_ffn_values
             for na in range(int(np.ceil(lambda_min * nf)), int(np.floor(lambda_max * nf)) + 1)]
    nf, na = (np.array(x, dtype=float)[None, :] for x in zip(*pairs))
    s = np.asarray(sigmas, dtype=float)[:, None]
    afd = alpha_afd(s, na, nf)
    shape = afd.alpha.shape
    return pd.DataFrame({"n_ffn": np.broadcast_to(nf, shape).ravel().astype(int),
                         "n_attn": np.broadcast_to(na, shape).ravel().astype(int),
                         "lambda": np.broadcast_to(na / nf, shape).ravel(), "sigma": np.broadcast_to(s, shape).ravel(),
                         "alpha_afd": afd.alpha.ravel(), "rounding": afd.rounding.ravel(),
                         "alpha_ep": alpha_ep(s, na / nf).ravel()})


def penalty_figure(table: pd.DataFrame, lambda_min: float, lambda_max: float):
    """Fig. 6: alpha against lambda, one panel per N_F; EP solid (continuous), AFD dashed (whole nodes)."""
    from afdlib.analysis.imbalance import alpha_ep
    n_ffn_values, sigmas = sorted(table.n_ffn.unique()), sorted(table.sigma.unique())
    lam = np.linspace(lambda_min, lambda_max, 200)
    colours = dict(zip(sigmas, plt.get_cmap("viridis")(np.linspace(0.1, 0.85, len(sigmas)))))
    fig, axes = plt.subplots(1, len(n_ffn_values), figsize=(max(PAGE_WIDTH_IN, 3.2 * len(n_ffn_values)), 3.8),
                             sharey=True, squeeze=False)
    for ax, nf in zip(axes[0], n_ffn_values):
        for s in sigmas:
            ax.plot(lam, alpha_ep(s, lam), color=colours[s], lw=1.6, label=f"EP, σ = {s:.2f}")
            pts = table[(table.n_ffn == nf) & (table.sigma == s)]
            ax.plot(pts["lambda"], pts.alpha_afd, "--o", color=colours[s], ms=3, lw=1, label=f"AFD, σ = {s:.2f}")
        ax.set_title(f"N_F = {nf}")
        ax.set_xlabel("λ  (EP: t_a / t_f;  AFD: N_A / N_F)")
    axes[0, 0].set_ylabel("α, throughput per node vs balanced")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, bbox_to_anchor=(0.5, -0.12))
    fig.suptitle("EP solid, AFD dashed (points: whole attention nodes)", fontsize=10)
    fig.tight_layout()
    return fig


def _lanes_panel(ax, bars, title: str) -> None:
    """One timeline: a bar per op on its lane, coloured by stage, numbered by micro-batch."""
    lanes = sorted({b.lane for b in bars}, key=lambda s: (s.startswith("FFN"), s.startswith("network"), s))
    y = {lane: i for i, lane in enumerate(lanes)}
    for b in bars:
        ax.barh(y[b.lane], b.duration, left=b.start, color=STAGE_COLOURS[b.stage], edgecolor="white", height=0.8,
                hatch="//" if b.stage == "idle" else None)
        if b.stage in ("attention", "ffn") and b.duration > 0.3:
            ax.text(b.start + b.duration / 2, y[b.lane], str(b.microbatch), ha="center", va="center", fontsize=7,
                    color="white")
    ax.set_yticks(range(len(lanes)), lanes, fontsize=8)
    ax.invert_yaxis()
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("time (units of t_B)")


def timelines_figure(cases: dict, alpha_measured: dict):
    """Fig. 5: one panel per imbalanced case; bars per lane, coloured by stage, numbered by micro-batch."""
    shown = [c for c in cases if "balanced" not in c]
    cols = 1
    rows = len(shown)
    fig, axes = plt.subplots(rows, cols, figsize=(PAGE_WIDTH_IN, 2.4 * rows + 0.4), squeeze=False)
    for ax, case in zip(axes.flat, shown):
        _lanes_panel(ax, cases[case].bars, f"{case}: throughput {alpha_measured[case]:.3f} of balanced")
    for ax in axes.flat[len(shown):]:
        ax.set_visible(False)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in STAGE_COLOURS.values()]
    fig.legend(handles, list(STAGE_COLOURS), loc="lower center", ncol=5, fontsize=8, bbox_to_anchor=(0.5, -0.03))
    fig.tight_layout()
    return fig


def uniform_sigma_figure(batch_tokens, ranks, analytic, leading, monte_carlo, experts_per_token: int):
    """Uniform routing: analytic (Blom) lines, sqrt(2 ln R) dotted, Monte-Carlo dots, against R."""
    fig, ax = plt.subplots()
    for k, t in enumerate(batch_tokens):
        line, = ax.plot(ranks, analytic[k], label=f"T = {t}")
        ax.plot(ranks, monte_carlo[k], "o", color=line.get_color(), ms=4)
        ax.plot(ranks, leading[k], ":", color=line.get_color(), lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("EP ranks R")
    ax.set_ylabel("balancedness σ (mean / max)")
    ax.set_title(f"Uniform top-{experts_per_token} routing: lines analytic (Blom), dotted sqrt(2 ln R), "
                 "dots Monte-Carlo", fontsize=9)
    ax.legend(fontsize=8)
    return fig


def measured_sigma_figure(longrun: pd.DataFrame, per_batch: pd.DataFrame, redundant: int, n_layers: int,
                          trials: int, fitted: pd.DataFrame | None = None):
    """Measured loads: long-run balancedness by placement, and per-batch with EPLB replicas, against R.

    ``fitted``: the same long-run columns for a fitted skew, drawn dashed in the same colours.
    """
    fig, axes = plt.subplots(1, 2, figsize=(PAGE_WIDTH_IN, 4), sharey=True)
    columns = (("contiguous", "-o", "contiguous"), ("eplb_no_replicas", "-s", "EPLB packing (replicas only where R > E)"),
               (f"eplb_plus_{redundant}", "-^", f"EPLB + {redundant} replicas"))
    for k, (col, style, label) in enumerate(columns):
        line, = axes[0].plot(longrun.ep_size, longrun[col], style, label=label)
        if fitted is not None:
            axes[0].plot(fitted.ep_size, fitted[col], "--", color=line.get_color(), lw=1,
                         label="Zipf fit" if k == 0 else None)
    axes[0].set_title("long-run counts", fontsize=10)
    for t, grp in per_batch.groupby("tokens"):
        axes[1].plot(grp.ep_size, grp[f"eplb_plus_{redundant}"], "-o", ms=3, label=f"T = {t}, EPLB + {redundant}")
    axes[1].set_title(f"per batch of T tokens ({n_layers} layers x {trials} batches)", fontsize=10)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("EP ranks R")
        ax.legend(fontsize=7)
    axes[0].set_ylabel("balancedness σ (median over layers)")
    return fig


def validation_figure(table: pd.DataFrame):
    """Predicted against published tokens/s per GPU (EP: bar = nothing hidden .. all hidden), with
    +-20% and +-35% bands; points numbered as the table's rows."""
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
        marker = {"published": "o", "assumed": "s"}.get(r.batch_from, "D")
        ax.errorbar(r.published, r.predicted, yerr=[[r.predicted - r.band_low], [r.band_high - r.predicted]],
                    fmt=marker, color=colour, ms=7, capsize=4, lw=1.2)
        ax.annotate(str(k + 1), (r.published, r.predicted), xytext=(7, -4), textcoords="offset points", fontsize=9)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ticks = [t for t in (1000, 2000, 3000, 5000, 7000, 10000, 15000) if lo <= t <= hi]
    fmt = FuncFormatter(lambda v, _: f"{v:,.0f}")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(plt.FixedLocator(ticks))
        axis.set_major_formatter(fmt)
        axis.set_minor_formatter(plt.NullFormatter())
    ax.set_xlabel("published output tokens/s per GPU")
    ax.set_ylabel("predicted output tokens/s per GPU")
    ax.set_title("blue EP (bar: all-to-all hidden none .. all), orange AFD; circles: published batch,\n"
                 "squares: assumed batch, diamonds: batch from SLO and memory; bands ±20% and ±35%", fontsize=8)
    return fig


def breakdown_figure(table: pd.DataFrame):
    """Each case's per-layer attention, FFN and all-to-all times (cases numbered as the table's rows)."""
    fig, ax = plt.subplots(figsize=(7.2, 0.55 * len(table) + 1.2))
    y = np.arange(len(table))
    parts = (("t_attn_us", "attention", "#2c7fb8"), ("t_ffn_us", "FFN (experts)", "#1a9641"),
             ("t_comm_us", "dispatch + combine", "#d7191c"))
    for j, (col, name, colour) in enumerate(parts):
        ax.barh(y + (j - 1) * 0.26, table[col], height=0.26, color=colour, label=name)
    ax.set_yticks(y, [f"{k + 1}. {c}" for k, c in enumerate(table.label)], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("µs per MoE layer (EP: both micro-batches; AFD: one micro-batch)")
    ax.legend(fontsize=8, loc="lower right")
    return fig


def sensitivity_figure(sens: pd.DataFrame, base: pd.DataFrame):
    """Relative error of every case under one-at-a-time variations (the default first)."""
    table = sens.pivot(index="variation", columns="case", values="error")
    order = list(dict.fromkeys(sens.variation))
    table = pd.concat([base.set_index("case")["error"].rename("defaults").to_frame().T, table.loc[order]])
    table = table[list(base.case)]
    fig, ax = plt.subplots(figsize=(10, 0.38 * len(table) + 1.6))
    im = ax.imshow(table.to_numpy(dtype=float), cmap="RdBu_r", vmin=-0.6, vmax=0.6, aspect="auto")
    for (i, j), v in np.ndenumerate(table.to_numpy(dtype=float)):
        ax.text(j, i, f"{v:+.0%}", ha="center", va="center", fontsize=8,
                color="white" if abs(v) > 0.35 else "black")
    ax.set_xticks(range(table.shape[1]), [f"{k + 1}" for k in range(table.shape[1])])
    ax.set_yticks(range(len(table)), table.index, fontsize=9)
    ax.set_xlabel("case (numbered as in Table 1)")
    fig.colorbar(im, ax=ax, format=PercentFormatter(1.0), label="predicted / published - 1")
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
    ax.legend(fontsize=8)
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


def advice_heatmap(table: pd.DataFrame, hardware: list[str], models: list[str], decisive: float):
    """AFD / EP throughput ratio of every (model, device) pair; '?' marks ratios within the model's error."""
    from matplotlib.colors import LogNorm
    grid = table.pivot(index="model", columns="hardware", values="ratio").loc[models, hardware]
    fig, ax = plt.subplots(figsize=(min(PAGE_WIDTH_IN, 0.8 * len(hardware) + 2.4), 0.45 * len(models) + 1.6))
    im = ax.imshow(grid.to_numpy(dtype=float), cmap="PuOr_r", norm=LogNorm(vmin=0.5, vmax=2.0), aspect="auto")
    for (i, j), v in np.ndenumerate(grid.to_numpy(dtype=float)):
        mark = "" if (v > decisive or v < 1 / decisive) else "?"
        ax.text(j, i, f"{v:.2f}{mark}", ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(hardware)), hardware, rotation=30)
    ax.set_yticks(range(len(models)), models)
    _ratio_colour_bar(fig.colorbar(im, ax=ax, label="AFD / EP tokens/s per GPU (orange: AFD ahead)"))
    ax.set_title(f"'?': within the spread of the model's errors (ratio between {1 / decisive:.2f} and {decisive:.2f})",
                 fontsize=8)
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
        for k, (name, (px, py)) in enumerate(placements.get(title, {}).items()):
            points.setdefault((float(px), float(py)), []).append(str(k + 1))
        previous, level = None, 0
        for (px, py), numbers in sorted(points.items()):
            level = (level + 1) % 3 if previous is not None and px / previous < 1.5 else 0
            ax.plot(px, py / 1e9, "o", color="black", ms=4)
            ax.annotate(",".join(numbers), (px, py / 1e9), xytext=(0, 5 + 9 * level), textcoords="offset points",
                        fontsize=7, ha="center", bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.7))
            previous = px
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("expert intermediate size M" if rm.axis == "moe_intermediate_size" else "sparsity E / K")
        ax.set_ylabel("bandwidth per GPU, GB/s (sustained)")
        ax.set_title(title, fontsize=9)
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


_SYSTEM_COLOURS = {"h100": "#1b9e77", "h200": "#d95f02", "b200": "#7570b3", "gb200": "#e7298a", "h800": "#666666"}


def aic_scatter_figure(comp: pd.DataFrame):
    """Our TPOT against aiconfigurator's for every compared setting (log-log), EP and AFD panels,
    colour by system, filled markers DeepSeek-V3, hollow the GQA model; y = x and +-20%."""
    fig, axes = plt.subplots(1, 2, figsize=(PAGE_WIDTH_IN, 4.4), sharex=True, sharey=True)
    lo = min(comp.aic_tpot_ms.min(), comp.our_tpot_ms.min()) * 0.8
    hi = max(comp.aic_tpot_ms.max(), comp.our_tpot_ms.max()) * 1.25
    x = np.geomspace(lo, hi, 10)
    models = sorted(comp.model.unique())
    for ax, design in zip(axes, ("ep", "afd")):
        ax.plot(x, x, color="black", lw=1)
        ax.fill_between(x, x * 0.8, x * 1.2, color="grey", alpha=0.15, lw=0)
        part = comp[comp.design == design]
        for (hw, model), g in part.groupby(["hardware", "model"]):
            filled = model == models[0]
            ax.scatter(g.aic_tpot_ms, g.our_tpot_ms, s=30, marker="o" if g.kind.iloc[0] == "grid" else "D",
                       facecolors=_SYSTEM_COLOURS.get(hw, "grey") if filled else "none",
                       edgecolors=_SYSTEM_COLOURS.get(hw, "grey"), lw=1.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{design.upper()} ({len(part)} settings)")
        ax.set_xlabel("aiconfigurator TPOT (ms)")
        ticks = [t for t in (10, 20, 50, 100, 200, 500) if lo <= t <= hi]
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(plt.FixedLocator(ticks))
            axis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
            axis.set_minor_formatter(plt.NullFormatter())
    axes[0].set_ylabel("our TPOT (ms)")
    names = {"h800": "H800 (run on its H100)"}
    handles = [plt.Line2D([], [], ls="", marker="o", color=c, label=names.get(h, h.upper()))
               for h, c in _SYSTEM_COLOURS.items() if h in set(comp.hardware)]
    handles += [plt.Line2D([], [], ls="", marker="o", color="black", label=models[0]),
                plt.Line2D([], [], ls="", marker="o", mfc="none", color="black", label=models[-1]),
                plt.Line2D([], [], ls="", marker="D", mfc="none", color="grey", label="published deployment")]
    axes[1].legend(handles=handles, fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def aic_ratio_figure(comp: pd.DataFrame):
    """Our TPOT over aiconfigurator's against requests per GPU, EP and AFD, one line per system
    and model (solid: the first model, dashed: the second); band 0.8-1.2."""
    grid = comp[comp.kind == "grid"]
    fig, axes = plt.subplots(1, 2, figsize=(PAGE_WIDTH_IN, 3.8), sharey=True)
    models = sorted(grid.model.unique())
    for ax, design in zip(axes, ("ep", "afd")):
        ax.axhspan(0.8, 1.2, color="grey", alpha=0.15, lw=0)
        ax.axhline(1.0, color="black", lw=1)
        for (hw, model), g in grid[grid.design == design].groupby(["hardware", "model"]):
            g = g.sort_values("batch_per_gpu")
            ax.plot(g.batch_per_gpu, g.ratio_tpot_ms, marker="o", ms=4, color=_SYSTEM_COLOURS.get(hw, "grey"),
                    ls="-" if model == models[0] else "--", label=f"{hw.upper()}, {model}")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(grid.batch_per_gpu.unique()))
        ax.set_xticklabels([str(int(b)) for b in sorted(grid.batch_per_gpu.unique())])
        ax.set_xlabel("requests per (attention) GPU")
        ax.set_title(design.upper())
    axes[0].set_ylabel("our TPOT / aiconfigurator's")
    fig.tight_layout()
    handles, labels = axes[1].get_legend_handles_labels()      # below the panels: the lines stay clear
    fig.legend(handles, labels, fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, 0.0))
    return fig


def aic_stage_figure(comp: pd.DataFrame):
    """Ratio ours / aiconfigurator's of each stage, every grid setting: EP attention and FFN side
    (all layers of a step), AFD attention, FFN and transfer (per layer and micro-batch)."""
    grid = comp[comp.kind == "grid"]
    cols = (("ep", "ratio_attn_ms", "EP attention"), ("ep", "ratio_ffn_ms", "EP FFN side"),
            ("afd", "ratio_t_attn_us", "AFD t_a"), ("afd", "ratio_t_ffn_us", "AFD t_f"),
            ("afd", "ratio_t_comm_us", "AFD t_c"))
    fig, ax = plt.subplots(figsize=(7.2, 3.8))
    ax.axhspan(0.8, 1.2, color="grey", alpha=0.15, lw=0)
    ax.axhline(1.0, color="black", lw=1)
    rng = np.random.default_rng(0)
    for i, (design, col, label) in enumerate(cols):
        part = grid[grid.design == design]
        jitter = rng.uniform(-0.18, 0.18, len(part))
        ax.scatter(i + jitter, part[col], s=14, c=[_SYSTEM_COLOURS.get(h, "grey") for h in part.hardware], alpha=0.8)
        ax.plot([i - 0.3, i + 0.3], [part[col].median()] * 2, color="black", lw=2)
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels([c[2] for c in cols])
    ax.set_yscale("log")
    ax.set_ylabel("ours / aiconfigurator's")
    handles = [plt.Line2D([], [], ls="", marker="o", color=c, label=h.upper()) for h, c in _SYSTEM_COLOURS.items()
               if h in set(grid.hardware)]
    ax.legend(handles=handles, fontsize=8, ncol=4, loc="lower left")
    fig.tight_layout()
    return fig


def overlap_timelines_figure(timelines: dict):
    """Figure 1(b) of the paper from the scheduler: one panel per case (title -> (bars, makespan)),
    stacked, on a shared time axis."""
    fig, axes = plt.subplots(len(timelines), 1, figsize=(PAGE_WIDTH_IN, 2.4 * len(timelines)), sharex=True, squeeze=False)
    for ax, (title, (bars, _)) in zip(axes[:, 0], timelines.items()):
        _lanes_panel(ax, bars, title)
    for ax in axes[:-1, 0]:
        ax.set_xlabel("")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in STAGE_COLOURS.values()]
    fig.legend(handles, list(STAGE_COLOURS), loc="lower center", ncol=5, fontsize=8, bbox_to_anchor=(0.5, -0.04))
    fig.tight_layout()
    return fig


_MB_COLOURS = {1: "#999999", 2: "#1b9e77", 3: "#d95f02", 4: "#7570b3"}


def jitter_ideal_figure(table: pd.DataFrame):
    """Balanced stages under jitter: (a) relative throughput loss, (b) throughput over the
    jitter-free 3BO's, against the CV of the FFN and network stages, one line per micro-batch count."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(PAGE_WIDTH_IN, 3.6))
    for m, g in table.groupby("micro_batches"):
        g = g.sort_values("cv")
        a.plot(g.cv, g.throughput_loss, marker="o", ms=4, color=_MB_COLOURS.get(m, "black"), label=f"{m} micro-batches")
        b.plot(g.cv, g.throughput, marker="o", ms=4, color=_MB_COLOURS.get(m, "black"), label=f"{m} micro-batches")
    _jitter_axes(fig, a, b, "throughput loss (vs the same without jitter)", "throughput (jitter-free 3BO = 1)", 8)
    return fig


def _jitter_axes(fig, a, b, loss_label: str, rate_label: str, legend_size: float) -> None:
    """The two panels of a jitter figure: (a) relative loss in percent, (b) throughput, against the CV."""
    a.set_ylabel(loss_label)
    b.set_ylabel(rate_label)
    for ax, tag in ((a, "(a)"), (b, "(b)")):
        ax.set_xlabel("coefficient of variation of t_f and t_c")
        ax.set_title(tag, loc="left", fontsize=10)
    a.yaxis.set_major_formatter(PercentFormatter(1.0))
    a.legend(fontsize=legend_size)
    fig.tight_layout()


def jitter_deployment_figure(table: pd.DataFrame):
    """Deployments under jitter: (a) relative loss at the deployment's batch (AFD solid by
    micro-batches, EP dashed), (b) AFD's tokens/s per GPU at the largest batch that still meets
    the SLO, against the CV."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(PAGE_WIDTH_IN, 3.6))
    for (design, m), g in table.groupby(["design", "micro_batches"]):
        g = g.sort_values("cv")
        style = dict(marker="o" if design == "afd" else "s", ms=4, color=_MB_COLOURS.get(m, "black"),
                     ls="-" if design == "afd" else "--", label=f"{design.upper()}, {m} micro-batch{'es' if m > 1 else ''}")
        a.plot(g.cv, g.throughput_loss, **style)
        if design == "afd":   # EP's absolute figures depend on its overlap assumption: relative loss only
            b.plot(g.cv, g.tokens_per_s_per_gpu_slo, **style)
    _jitter_axes(fig, a, b, "throughput loss at the same batch", "AFD tokens/s per GPU within the SLO", 7)
    return fig
