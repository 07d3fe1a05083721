"""The sweeps chapter's figure: where AFD overtakes EP, and where EP leads again, over expert width
and sparsity (:mod:`afdlib.sweep.readings`)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from afdlib.report.figures.common import PAGE_WIDTH_IN


def break_even_figure(widths, sparsities, panels: dict, models: dict, unit: str = "GB/s",
                      what: str = "scale-out bandwidth"):
    """One panel per reading (title -> (values over widths x sparsities, words per cell)): each cell
    coloured by its bandwidth (log scale) and labelled with it, or with its words ("never") in grey;
    the catalogue's models (name -> (M, E / K)) as numbered dots."""
    from matplotlib.colors import LogNorm
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter
    x, y = np.asarray(widths, float), np.asarray(sparsities, float)
    finite = np.concatenate([np.ravel(v)[np.isfinite(np.ravel(v))] for v, _ in panels.values()] + [np.ones(0)])
    lo = finite.min() if finite.size else 1.0
    norm = LogNorm(vmin=lo, vmax=max(finite.max() if finite.size else 2.0, lo * 2))
    xe, ye = _log_edges(x), _log_edges(y)
    fig, axes = plt.subplots(1, len(panels), figsize=(PAGE_WIDTH_IN, 4.0), squeeze=False, layout="constrained")
    im = None
    for ax, (title, (values, words)) in zip(axes.flat, panels.items()):
        v = np.asarray(values, float)
        im = ax.pcolormesh(xe, ye, np.ma.masked_invalid(v.T), cmap="viridis_r", norm=norm, shading="flat")
        ax.set_facecolor("#dddddd")
        ax.grid(False)
        for i, xi in enumerate(x):
            for j, yj in enumerate(y):
                text = f"{v[i, j]:.0f}" if np.isfinite(v[i, j]) else "-"
                text = ("<=" + text) if words[i][j] == "from the bottom" else ("never" if words[i][j] == "never" else text)
                dark = np.isfinite(v[i, j]) and norm(v[i, j]) > 0.55      # viridis_r: high values are dark
                ax.annotate(text, (xi, yj), xytext=(0, -6), textcoords="offset points", ha="center", va="center",
                            fontsize=8, color="white" if dark else "black")
        for k, (mx, sy) in enumerate(models.values()):
            ax.plot(mx, sy, "o", color="#d95f02", ms=5, mec="white")
            ax.annotate(str(k + 1), (mx, sy), xytext=(4, 4), textcoords="offset points", fontsize=9, color="#d95f02",
                        fontweight="bold")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xticks(x, [f"{w:.0f}" for w in x])
        ax.set_yticks(y, [f"{s:.0f}" for s in y])
        ax.minorticks_off()
        ax.set_xlabel("expert intermediate size M")
        ax.set_ylabel("sparsity E / K")
        ax.set_title(title, fontsize=9)
    bar = fig.colorbar(im, ax=axes, label=f"{what} per GPU, {unit}")
    bar.ax.yaxis.set_major_formatter(FormatStrFormatter("%.0f"))
    bar.ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    bar.ax.yaxis.set_minor_formatter(NullFormatter())
    return fig


def _log_edges(centres: np.ndarray) -> np.ndarray:
    """Cell edges halfway between neighbouring centres on a log scale (a log axis's cells centred on
    their values), the end cells as wide as their neighbours."""
    c = np.log2(centres)
    step = np.diff(c) if c.size > 1 else np.ones(1)
    mid = (c[:-1] + c[1:]) / 2
    return 2.0 ** np.concatenate([[c[0] - step[0] / 2], mid, [c[-1] + step[-1] / 2]])
