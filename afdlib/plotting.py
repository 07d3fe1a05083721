"""Figure style and saving, shared by the notebooks (one look, one place)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

REGIME_COLOURS = {"scale-up-bound": "#dbe9f6", "stable": "#e5f5e0", "scale-out-bound": "#fde0dd",
                  "max-intensity": "#efedf5"}
COMM_CEILING = {"color": "#c0392b", "linewidth": 3.2, "alpha": 0.45}


def setup_style() -> None:
    """Seaborn 'whitegrid' with a readable size; deterministic SVG output (no random ids)."""
    import seaborn as sns
    sns.set_theme(style="whitegrid", context="notebook", font_scale=0.95)
    matplotlib.rcParams.update({"figure.dpi": 100, "savefig.bbox": "tight", "svg.hashsalt": "afd-roofline",
                                "figure.figsize": (7.5, 4.2)})


def save_figure(fig, stem: str, output_dir: str | Path = "figures") -> Path:
    """Write ``<output_dir>/<stem>.svg`` (and return its path)."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{stem}.svg"
    fig.savefig(path, metadata={"Date": None})
    return path


def save_data(frame, stem: str, output_dir: str | Path = "figures") -> Path:
    """Write a figure's data as ``<output_dir>/<stem>.csv`` (no index)."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{stem}.csv"
    frame.to_csv(path, index=False, float_format="%.6g")
    return path
