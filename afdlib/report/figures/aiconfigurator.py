"""The figures of the side-by-side with NVIDIA aiconfigurator."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from afdlib.report.figures.common import PAGE_WIDTH_IN, plain_log_ticks


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
    axes[0].set_ylabel("our TPOT / aiconfigurator's\n(grey band: within 20%)")
    fig.tight_layout()
    handles, labels = axes[1].get_legend_handles_labels()      # below the panels: the lines stay clear
    fig.legend(handles, labels, fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, 0.0))
    return fig


def aic_stage_figure(comp: pd.DataFrame):
    """Ratio ours / aiconfigurator's of each stage, every grid setting: EP attention and FFN side
    (all layers of a step), AFD attention, FFN and transfer (per layer and micro-batch); a bar at
    each stage's median."""
    import seaborn as sns
    import seaborn.objects as so
    grid = comp[comp.kind == "grid"]
    colours = {h.upper(): c for h, c in _SYSTEM_COLOURS.items() if h in set(grid.hardware)}
    cols = (("ep", "ratio_attn_ms", "EP attention"), ("ep", "ratio_ffn_ms", "EP FFN side"),
            ("afd", "ratio_t_attn_us", "AFD t_a"), ("afd", "ratio_t_ffn_us", "AFD t_f"),
            ("afd", "ratio_t_comm_us", "AFD t_c"))
    long = pd.concat([grid.loc[grid.design == design, ["hardware", col]].set_axis(["system", "ratio"], axis=1)
                      .assign(stage=label) for design, col, label in cols], ignore_index=True)
    long["system"] = long.system.str.upper()
    fig, ax = plt.subplots(figsize=(7.2, 3.8))
    ax.axhspan(0.8, 1.2, color="grey", alpha=0.15, lw=0)
    ax.axhline(1.0, color="black", lw=1)
    (so.Plot(long, x="stage", y="ratio", color="system")
     .add(so.Dot(pointsize=4, alpha=0.8), so.Jitter(width=0.36, seed=0))      # seeded: the same figure each build
     .add(so.Dash(width=0.6, linewidth=2, color="black"), so.Agg("median"), color=None)
     .scale(y="log", x=so.Nominal(order=[c[2] for c in cols]),
            color=so.Nominal(colours, order=list(colours)))
     .label(x="", y="ours / aiconfigurator's (grey band: within 20%)", color="")
     .theme(sns.axes_style("whitegrid"))                                          # the book's style
     .on(ax).plot())
    plain_log_ticks(ax.yaxis)              # the log scale's decades alone (1 and 0.1) could not be read
    fig.tight_layout()
    return fig
