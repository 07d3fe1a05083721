"""The figure of the modern-MoE chapter: the AFD / EP ratio of hybrid-attention models and of the same
models read with full attention in every layer, and how far the hybrid layers move it."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from afdlib.report.figures.common import PAGE_WIDTH_IN


def hybrid_heatmap(rows: list[dict], pairs: list[dict]):
    """Top: AFD / EP tokens/s per GPU of each model as published and read as all full attention (the
    study's ``rows``), with P(AFD better) under the ratio where it was computed ('?': undecided).
    Bottom: the shift, the hybrid's ratio over its all-full reading's (``pairs``; below 1: toward EP).
    Rows and columns in the order the study gives them, labelled with the catalogue's names."""
    import seaborn as sns
    from matplotlib.colors import LogNorm
    table, shifts = pd.DataFrame(rows), pd.DataFrame(pairs)
    hardware = list(dict.fromkeys(table.hardware))
    hw_names = [n.removeprefix("NVIDIA ") for n in dict.fromkeys(table.hardware_name)]
    models = list(dict.fromkeys(table.model))
    bases = list(dict.fromkeys(shifts.model))
    cells = table.set_index(["model", "hardware"])
    grid = table.pivot(index="model", columns="hardware", values="ratio").loc[models, hardware].astype(float)
    marks = [[_mark(cells.loc[(m, h)]) for h in hardware] for m in models]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(min(PAGE_WIDTH_IN, 0.8 * len(hardware) + 3.6),
                                                     0.5 * (len(models) + len(bases)) + 2.4),
                                      gridspec_kw={"height_ratios": [len(models), len(bases)]})
    sns.heatmap(grid, ax=top, cmap="PuOr_r", norm=LogNorm(vmin=0.5, vmax=2.0), annot=np.array(marks), fmt="",
                annot_kws={"fontsize": 9}, cbar_kws={"label": "AFD / EP (orange: AFD ahead)"})
    shift = shifts.pivot(index="model", columns="hardware", values="shift").loc[bases, hardware].astype(float)
    sns.heatmap(shift, ax=bottom, cmap="PuOr_r", norm=LogNorm(vmin=0.8, vmax=1.25), annot=True, fmt=".2f",
                annot_kws={"fontsize": 9}, cbar_kws={"label": "hybrid / all full"})
    names = {m: n.removeprefix("NVIDIA-") for m, n in zip(table.model, table.model_name)}   # the vendor in the name is long
    top.set_yticklabels([names[m] for m in models], rotation=0, fontsize=9)
    bottom.set_yticklabels([names[m] for m in bases], rotation=0, fontsize=9)
    for ax in (top, bottom):
        ax.set(xlabel="", ylabel="")
        ax.set_xticklabels(hw_names, rotation=30)
        bar = ax.collections[0].colorbar
        ticks = [0.5, 0.7, 1.0, 1.4, 2.0] if ax is top else [0.8, 0.9, 1.0, 1.1, 1.25]
        bar.set_ticks(ticks, labels=[f"{t:g}" for t in ticks])
        bar.minorticks_off()
    top.set_title("AFD / EP at the model's defaults; below it P(AFD better) where computed; '?': undecided",
                  fontsize=9)
    bottom.set_title("the hybrid's ratio over the same model's with full attention (below 1: toward EP)",
                     fontsize=9)
    fig.tight_layout()
    return fig


def _mark(row) -> str:
    p = row["p_afd"]
    return f"{row['ratio']:.2f}" + ("" if not np.isfinite(p) else f"\n{p:.2f}" + ("" if row["decisive"] else "?"))
