"""The figures of the pipeline chapter: overlap timelines and jitter."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import PercentFormatter

from afdlib.analysis.timeline import afd_timeline
from afdlib.report.figures.common import PAGE_WIDTH_IN, STAGE_COLOURS, lanes_panel


def overlap_timelines_figure(timelines: dict):
    """Figure 1(b) of the paper from the scheduler: one panel per case (title -> (bars, makespan)),
    stacked, on a shared time axis."""
    fig, axes = plt.subplots(len(timelines), 1, figsize=(PAGE_WIDTH_IN, 2.4 * len(timelines)), sharex=True, squeeze=False)
    for ax, (title, (bars, _)) in zip(axes[:, 0], timelines.items()):
        lanes_panel(ax, bars, title)
    for ax in axes[:-1, 0]:
        ax.set_xlabel("")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in STAGE_COLOURS.values()]
    fig.legend(handles, list(STAGE_COLOURS), loc="lower center", ncol=5, fontsize=9, bbox_to_anchor=(0.5, -0.04))
    fig.tight_layout()
    return fig


_MB_COLOURS = {1: "#999999", 2: "#1b9e77", 3: "#d95f02", 4: "#7570b3"}
_EP_COLOURS = {1: "#555555", 2: "#e7298a"}
"""EP's lines in their own colours (dashed, squares), so "EP, 2 micro-batches" is never AFD's 2BO green."""


def jitter_ideal_figure(table: pd.DataFrame):
    """Balanced stages under jitter: (a) relative throughput loss, (b) throughput over the
    jitter-free 3BO's, against the CV of the FFN and network stages, one line per micro-batch count."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(PAGE_WIDTH_IN, 3.6))
    for m, g in table.groupby("micro_batches"):
        g = g.sort_values("cv")
        a.plot(g.cv, g.throughput_loss, marker="o", ms=4, color=_MB_COLOURS.get(m, "black"), label=f"{m} micro-batches")
        b.plot(g.cv, g.throughput, marker="o", ms=4, color=_MB_COLOURS.get(m, "black"), label=f"{m} micro-batches")
    _jitter_axes(fig, a, b, "throughput loss (vs the same without jitter)", "throughput (jitter-free 3BO = 1)", 9)
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
    micro-batches, EP dashed), (b) tokens/s per GPU (all GPUs) at the largest batch that still
    meets the SLO, against the CV."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(PAGE_WIDTH_IN, 3.6))
    for (design, m), g in table.groupby(["design", "micro_batches"]):
        g = g.sort_values("cv")
        style = dict(marker="o" if design == "afd" else "s", ms=4,
                     color=(_MB_COLOURS if design == "afd" else _EP_COLOURS).get(m, "black"),
                     ls="-" if design == "afd" else "--", label=f"{design.upper()}, {m} micro-batch{'es' if m > 1 else ''}")
        a.plot(g.cv, g.throughput_loss, **style)
        b.plot(g.cv, g.tokens_per_s_per_gpu_slo, **style)
    _jitter_axes(fig, a, b, "throughput loss at the same batch", "tokens/s per GPU within the SLO", 9)
    return fig


def bubble_timelines_figure(micro_batches=(2, 3), n_layers: int = 2):
    """Figure 1(b) of the paper from the scheduler (:func:`afdlib.analysis.timeline.afd_timeline`):
    one attention and one FFN node, t_a = t_f = t_c = 1 (dispatch and combine 1/2 each way),
    ``n_layers`` layers, one panel per micro-batch count."""
    one = np.ones(1)
    return overlap_timelines_figure({
        f"{m} micro-batches ({m}BO)": afd_timeline(1.0, 1.0, 1.0, one, one, n_layers=n_layers, n_microbatches=m)
        for m in micro_batches})
