"""The figures of the sigma chapter: balancedness from uniform routing and from measured loads."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from afdlib.report.figures.common import PAGE_WIDTH_IN, legend_below


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
                         label="dashed: the Zipf fit, each placement in its colour" if k == 0 else None)
    axes[0].set_title("long-run counts", fontsize=10)
    for t, grp in per_batch.groupby("tokens"):
        axes[1].plot(grp.ep_size, grp[f"eplb_plus_{redundant}"], "-o", ms=3, label=f"T = {t}, EPLB + {redundant}")
    axes[1].set_title(f"per batch of T tokens ({n_layers} layers x {trials} batches)", fontsize=10)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("EP ranks R")
    axes[0].set_ylabel("balancedness σ (median over layers)")
    fig.tight_layout()
    for ax in axes:             # under each panel: inside, the legend covered points and the dashed fits
        legend_below(ax, fontsize=8)
    return fig
