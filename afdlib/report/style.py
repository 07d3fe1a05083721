"""Figure style and saving, shared by the notebooks (one look, one place)."""
from __future__ import annotations

import json
from pathlib import Path

import matplotlib

from afdlib.errors import AfdError

REGIME_COLOURS = {"scale-up-bound": "#dbe9f6", "stable": "#e5f5e0", "scale-out-bound": "#fde0dd",
                  "max-intensity": "#efedf5"}
COMM_CEILING = {"color": "#a50000", "linewidth": 6.0, "alpha": 0.35}
"""The communication ceiling: bold dark red as the paper draws it, wide and translucent so that a line on it shows."""


def setup_style() -> None:
    """Seaborn 'whitegrid' with a readable size; deterministic SVG output (no random ids)."""
    import seaborn as sns
    sns.set_theme(style="whitegrid", context="notebook", font_scale=0.95)
    matplotlib.rcParams.update({"figure.dpi": 100, "savefig.bbox": "tight", "svg.hashsalt": "afd-roofline",
                                "figure.figsize": (7.5, 4.2)})
    try:   # figures shown in the book: twice the pixels, sharp on high-density screens and when zoomed
        from matplotlib_inline.backend_inline import set_matplotlib_formats
        set_matplotlib_formats("retina")
    except ImportError:   # outside IPython's inline backend there is nothing to set
        pass


_RUN: dict = {"fingerprint": None}
"""The parameters of the notebook run in this process (set by :func:`afdlib.report.params.check_parameters`)."""
MANIFEST = ".runs.json"


def set_run(parameters: dict) -> None:
    """Record the run's parameters: outputs are stamped with them in ``<output_dir>/.runs.json``."""
    _RUN["fingerprint"] = json.dumps(parameters, sort_keys=True, default=repr)


def run_parameters() -> dict:
    """The parameters of the notebook run in this process (as :func:`set_run` recorded them; {} before)."""
    return json.loads(_RUN["fingerprint"]) if _RUN["fingerprint"] else {}


def _claim(path: Path) -> None:
    """Refuse to overwrite an output that a run with other parameters wrote (two runs sharing one
    output_dir would otherwise silently mix their figures); record this run's claim."""
    fp = _RUN["fingerprint"]
    if fp is None:
        return
    manifest = path.parent / MANIFEST
    try:
        runs = json.loads(manifest.read_text()) if manifest.exists() else {}
    except (OSError, ValueError):
        runs = {}
    if runs.get(path.name, fp) != fp:
        raise AfdError(f"{path} holds the output of a run with other parameters; give this run its own "
                       f"output_dir (or delete {manifest} to start afresh)")
    runs[path.name] = fp
    manifest.write_text(json.dumps(runs, indent=1, sort_keys=True))


def check_legible(fig, stem: str) -> None:
    """Refuse a figure with text too small to read in the book's column (every figure is saved through
    :func:`save_figure`): :func:`afdlib.report.figures.common.small_texts`, the first few named."""
    from afdlib.report.figures.common import MIN_TEXT_PX, small_texts
    small = small_texts(fig)
    if small:
        shown = "; ".join(f"{text.splitlines()[0]!r} {px:g} px" for text, px in small[:4])
        raise AfdError(f"figure {stem}: {len(small)} text(s) under {MIN_TEXT_PX:g} px at the page's width "
                       f"(larger fonts or a narrower figure): {shown}")


def save_figure(fig, stem: str, output_dir: str | Path = "figures") -> Path:
    """Write ``<output_dir>/<stem>.svg`` (and return its path), once :func:`check_legible` passes."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{stem}.svg"
    _claim(path)
    check_legible(fig, stem)
    fig.savefig(path, metadata={"Date": None})
    return path


def glue_figure(fig, stem: str, output_dir: str | Path = "figures") -> Path:
    """A chapter's figure in one call: written by :func:`save_figure`, glued as ``fig_<stem>`` for a
    ``glue:figure`` directive, and closed."""
    import matplotlib.pyplot as plt

    from afdlib.report.readable import glue
    path = save_figure(fig, stem, output_dir)
    glue(f"fig_{stem}", fig, display=False)
    plt.close(fig)
    return path


def save_data(frame, stem: str, output_dir: str | Path = "figures") -> Path:
    """Write a figure's data as ``<output_dir>/<stem>.csv`` (no index)."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{stem}.csv"
    _claim(path)
    frame.to_csv(path, index=False, float_format="%.6g")
    return path


def glue_all(values: dict) -> None:
    """Glue every (key, value) of a chapter's readings for its prose (myst-nb ``glue``, not displayed)."""
    from afdlib.report.readable import glue
    for key, value in values.items():
        glue(key, value, display=False)


def table_markdown(table) -> str:
    """A pandas Styler (or DataFrame) as a MyST pipe table of its displayed values: the Styler's formats,
    hidden index and ``na_rep`` apply; numeric columns are right-aligned; ``|`` in a cell is escaped."""
    import pandas as pd
    styler = table if hasattr(table, "to_string") and hasattr(table, "data") else pd.DataFrame(table).style.hide(
        axis="index")
    frame = styler.data
    if frame.columns.nlevels != 1 or not styler.hide_index_[0]:
        raise AfdError("a book table has one header row and no index (reset_index, .hide(axis='index'))")
    lines = styler.to_string(delimiter="\x1f").rstrip("\n").split("\n")
    cells = [[c.strip().replace("|", r"\|") for c in line.split("\x1f")] for line in lines]
    if any(len(row) != len(frame.columns) for row in cells):
        raise AfdError(f"a table cell holds a line break: {frame.columns.tolist()}")
    rule = ["---:" if pd.api.types.is_numeric_dtype(frame[c]) else "---" for c in frame.columns]
    return "\n".join("| " + " | ".join(row) + " |" for row in [cells[0], rule, *cells[1:]])


def glue_table(key: str, table) -> None:
    """A chapter's table in one call: glued as markdown (:func:`table_markdown`) for a numbered MyST table,
    ``{table}`` with ``:name:`` around ``{glue:md}`` with ``:format: myst``."""
    from IPython.display import Markdown

    from afdlib.report.readable import glue
    glue(key, Markdown(table_markdown(table)), display=False)
