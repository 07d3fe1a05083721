"""The figures of the paper's own analysis: the models, intensity (Fig. 2), the grouped GEMM
(Fig. 3), the HFU bound (Fig. 4, Appendix A), the penalty (Fig. 6) and the timelines (Fig. 5)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import PercentFormatter

from afdlib.analysis.hfu import limit_names
from afdlib.report.style import COMM_CEILING, REGIME_COLOURS
from afdlib.report.figures.common import (PAGE_WIDTH_IN, PANELS_PER_ROW, STAGE_COLOURS, lanes_panel, legend_below,
                                         legend_columns, place_labels, wrapped)


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
        ax.text(np.sqrt(lo * hi), 1.02, name, transform=ax.get_xaxis_transform(), ha="center", fontsize=9)
    ax.plot(fine, normalised_intensity(fine, k, e, r, g, continuous=True), color="#555555", lw=1.5, ls="--",
            label="continuous G = E / (N_F g)")
    ax.step(sweep.n_ffn, sweep.intensity, where="post", color="#2c7fb8", lw=1.2, alpha=0.6)
    ax.plot(sweep.n_ffn, sweep.intensity, "o", color="#2c7fb8", ms=4, label="discrete G = ceil(E / (N_F g))")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("FFN nodes N_F")
    ax.set_ylabel("intensity I  (B_out = 1 token)")
    ax.set_title(f"{model.name} on {hardware.name}: K={k}, E={e}, g={g}, r={r:.2f}", pad=18)
    ax.legend(loc="upper left", fontsize=9)
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
    """Fig. 4: one panel per device, the bound of each model against N_F; black x marks infeasible points,
    labelled with the HBM rule that fails; the communication ceiling of ``models[ceiling_model]`` in bold red."""
    palette = [c for k, c in enumerate(plt.get_cmap("tab10").colors) if k != 3]   # no red beside the red ceiling
    colours = dict(zip([m.slug for m in models], palette))
    cols = min(PANELS_PER_ROW, len(hardware))
    rows = int(np.ceil(len(hardware) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(PAGE_WIDTH_IN, 2.5 * rows + 0.6), sharex=True, sharey=True,
                             squeeze=False)
    ref = models[ceiling_model]
    for i, (h, ax) in enumerate(zip(hardware, axes.flat)):
        # the ceiling as a wide translucent band under the models: a model pinned to it stays visible on it
        ax.plot(n_ffn, np.minimum(grid["comm_ceiling"][i, ceiling_model], 1.0), **COMM_CEILING, zorder=2,
                solid_capstyle="butt", label=f"communication ceiling ({ref.name}), capped at 100%")
        curves = [np.where(grid["feasible"][i, j], grid["hfu"][i, j], np.nan) for j in range(len(models))]
        for j, m in enumerate(models):
            ok, y = grid["feasible"][i, j], grid["hfu"][i, j]
            twins = coinciding(curves, j)    # drawn dashed over an equal curve drawn before it: both colours show
            ax.plot(n_ffn[ok], y[ok], marker="o", ms=2.5, lw=1.4, color=colours[m.slug], label=m.name,
                    zorder=3 + 0.01 * j, ls=(4 * (twins - 1), (4, 4 * twins)) if twins else "-")
            fails = np.asarray(grid["fails"][i, j])
            for bits, marker in _INFEASIBLE_MARKERS.items():   # which rule fails: the marker, in the legend
                hit = fails == bits
                if hit.any():
                    # black and larger than the dots, on a white halo: an infeasible point reads apart from
                    # the feasible dots of any colour (the legend's markers are black too)
                    ax.plot(n_ffn[hit], y[hit], marker, ms=9, mew=3.2, color="white", ls="none", zorder=5)
                    ax.plot(n_ffn[hit], y[hit], marker, ms=8, mew=1.6, color="black", ls="none", zorder=6)
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
    handles = handles[:1] + [plt.Line2D([], [], marker="o", ms=2.5, lw=1.4, color=colours[m.slug]) for m in models]
    labels = labels[:1] + [m.name for m in models]      # each model solid in the legend: its colour names it
    for bits, marker in _INFEASIBLE_MARKERS.items():
        handles.append(plt.Line2D([], [], marker=marker, ls="none", color="black", mew=1.2))
        labels.append(f"infeasible: {_INFEASIBLE_NAMES[bits]}")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.legend(handles, labels, loc="upper center", ncol=legend_columns(labels, fig.get_figwidth()), fontsize=9,
               bbox_to_anchor=(0.5, 0.0))
    return fig


def coinciding(curves: list[np.ndarray], j: int) -> int:
    """How many of the curves before ``curves[j]`` it lies on (equal wherever both have a value, NaN where
    none, at two or more points): 0 draws it solid, n dashed with gaps that let the n below show."""
    y = curves[j]
    count = 0
    for prev in curves[:j]:
        both = np.isfinite(y) & np.isfinite(prev)
        if both.sum() >= 2 and np.allclose(y[both], prev[both], rtol=1e-6, atol=1e-9):
            count += 1
    return count


def grouped_gemm_figure(tokens, curves: dict, exponents, hardware, ep_tokens: float, afd_ceiling: dict,
                        paper_ep_hfu: float, experts_per_gpu: int, ofu: float, afd_model_name: str,
                        own: tuple | None = None):
    """Fig. 3: grouped-GEMM HFU against tokens per expert, balanced and Zipf-skewed, one panel per device;
    ``own``: (device slug, tokens per expert) of the model's own best EP deployment, marked in that panel."""
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
        right = ridge < ep_tokens < 4 * ridge     # the EP line just right of the ridge: its label goes left
        ax.text(ridge, 0.03, f"ridge {ridge:.0f} " if right else f" ridge {ridge:.0f}", fontsize=9, color="grey",
                ha="right" if right else "left")
        if afd_ceiling.get(h.slug) is not None:
            ax.axhline(afd_ceiling[h.slug], **COMM_CEILING,
                       label=f"AFD ceiling, {afd_model_name} on {h.name.replace('NVIDIA ', '')} ({afd_ceiling[h.slug]:.1%})")
        ax.axvline(ep_tokens, color="black", lw=0.8)
        ax.text(ep_tokens, 1.01, f"EP: {ep_tokens:.0f} tok/expert", fontsize=9, ha="center", va="bottom",
                transform=ax.get_xaxis_transform())   # above the frame: not on the 100% line
        if h.slug == "h800":
            ax.plot([ep_tokens], [paper_ep_hfu], "k*", ms=11, label=f"paper, measured EP (~{paper_ep_hfu:.0%})")
        if own is not None and own[0] == h.slug and own[1] is not None:
            ax.axvline(own[1], color="#a50000", lw=1.2, ls="-.",
                       label=f"{afd_model_name}'s own best EP ({own[1]:.0f} tok/expert, decode model)")
        ax.set_xscale("log")
        ax.set_ylim(0, 1.08)
        ax.set_title(f"{h.name}: {experts_per_gpu} expert{'s' if experts_per_gpu != 1 else ''} per GPU", pad=20)
        ax.set_xlabel("average tokens per expert")
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    axes[0, 0].set_ylabel("grouped-GEMM HFU (roofline)")
    fig.tight_layout()
    legend: dict = {}                   # one legend below the panels, each entry once: the curves stay clear
    for ax in axes.flat[:len(hardware)]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    fig.legend(list(legend.values()), list(legend), loc="upper center", ncol=legend_columns(legend, fig.get_figwidth()),
               fontsize=9, bbox_to_anchor=(0.5, 0.0))
    return fig


def ceiling_figure(models, best: np.ndarray, ordinary, superpod, reference_model):
    """Appendix A: the ceiling against M (with each model's best bound) and against bandwidth."""
    from afdlib.analysis.hfu import comm_ceiling
    sizes = np.geomspace(256, 32768, 200)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(PAGE_WIDTH_IN, 4.8))
    lines = {
        f"{superpod.name}: BW_eff = {superpod.scale_up_bytes_per_s / 1e9:.0f} GB/s":
            (superpod.scale_up_bytes_per_s, superpod.flops, "#c0392b"),
        f"{ordinary.name}, best (scale-up {ordinary.scale_up_bytes_per_s / 1e9:.0f} GB/s)":
            (ordinary.scale_up_bytes_per_s, ordinary.flops, "#2c7fb8"),
        f"{ordinary.name}, dead zone (scale-out {ordinary.scale_out_bytes_per_s / 1e9:.0f} GB/s)":
            (ordinary.scale_out_bytes_per_s, ordinary.flops, "#7f8c8d"),
    }
    for label, (bw, flops, colour) in lines.items():
        ax1.plot(sizes, np.minimum(1, comm_ceiling(1, 1, bw, bw, sizes, flops)), color=colour, lw=2,
                 label=wrapped(label, PAGE_WIDTH_IN / 2 - 0.6))    # a long device name: lines, not a wider figure
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
        ax1.text(size, -0.04 - 0.085 * level, numbers, fontsize=9, ha="center", va="top")   # under 0%: off the curves
        previous = size
    ax1.set_xscale("log", base=2)
    ax1.set_xlabel("expert intermediate size M")
    ax1.set_ylabel("HFU ceiling")
    ax1.set_title("Ceiling vs M (markers: each model's best feasible\nbound, circles ordinary, squares Superpod;\n"
                  "numbers: the models)", fontsize=9)
    ax1.yaxis.set_major_formatter(PercentFormatter(1.0))

    ax1.set_ylim(-0.32, 1.08)                     # a strip under 0% for the models' numbers
    ax1.set_yticks(np.linspace(0, 1, 6))
    bw = np.geomspace(10e9, 2000e9, 200)
    def short(hw):
        return hw.name.replace("NVIDIA ", "")
    same = np.isclose(ordinary.flops, superpod.flops)     # one chip's FLOP/s: one curve, both devices named
    for hw, colour, ls in ((ordinary, "#2c7fb8", "-"), (superpod, "#c0392b", ":" if same else "-")):
        name = f"{short(ordinary)} = {short(superpod)}" if same else short(hw)
        ax2.plot(bw / 1e9, np.minimum(1, comm_ceiling(1, 1, bw, bw, reference_model.moe_intermediate_size, hw.flops)),
                 color=colour, lw=2, ls=ls, label=None if same and hw is superpod else wrapped(
                     f"{name}: M = {reference_model.moe_intermediate_size}, {hw.flops / 1e12:.0f} TFLOP/s", PAGE_WIDTH_IN / 2 - 0.6))
    marks = {f"{short(ordinary)} NIC ({ordinary.scale_out_bytes_per_s * 8 / 1e9:g} Gb/s)": ordinary.scale_out_bytes_per_s,
             f"{short(ordinary)} scale-up": ordinary.scale_up_bytes_per_s,
             f"{short(superpod)} fabric": superpod.scale_up_bytes_per_s}   # the chapter's devices, from their data
    at: dict = {}                                  # devices at one bandwidth share a mark
    for name, value in marks.items():
        at.setdefault(value / 1e9, []).append(name)
    letters = "abcdef"
    for k, (value, names) in enumerate(at.items()):   # a letter above the frame, the name in the legend
        ax2.axvline(value, color="grey", lw=0.8, ls=":", label=wrapped(f"{letters[k]}: {' = '.join(names)}", PAGE_WIDTH_IN / 2 - 0.6))
    ax2.set_xscale("log")
    top = ax2.secondary_xaxis("top")
    top.set_xticks(list(at), list(letters[:len(at)]), fontsize=9)
    top.xaxis.set_minor_locator(plt.NullLocator())
    top.tick_params(length=0, pad=1)
    ax2.set_xlabel("effective bandwidth per GPU, GB/s (one direction)")
    ax2.set_title(wrapped(f"Ceiling vs bandwidth ({reference_model.name} experts)", PAGE_WIDTH_IN / 2), fontsize=9, pad=14)
    ax2.set_ylabel("HFU ceiling")
    ax2.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax2.set_ylim(0, 1.08)
    fig.tight_layout()
    for ax in (ax1, ax2):      # below each panel, under its axis label (the 100% points stay visible)
        legend_below(ax)
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
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=9, bbox_to_anchor=(0.5, -0.12))
    fig.suptitle("EP solid, AFD dashed (points: whole attention nodes)", fontsize=10)
    fig.tight_layout()
    return fig


def timelines_figure(cases: dict, alpha_measured: dict):
    """Fig. 5: one panel per imbalanced case; bars per lane, coloured by stage, numbered by micro-batch."""
    shown = [c for c in cases if "balanced" not in c]
    cols = 1
    rows = len(shown)
    fig, axes = plt.subplots(rows, cols, figsize=(PAGE_WIDTH_IN, 2.4 * rows + 0.4), squeeze=False)
    for ax, case in zip(axes.flat, shown):
        lanes_panel(ax, cases[case].bars, f"{case}: throughput {alpha_measured[case]:.3f} of balanced")
    for ax in axes.flat[len(shown):]:
        ax.set_visible(False)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in STAGE_COLOURS.values()]
    fig.legend(handles, list(STAGE_COLOURS), loc="lower center", ncol=5, fontsize=9, bbox_to_anchor=(0.5, -0.03))
    fig.tight_layout()
    return fig
