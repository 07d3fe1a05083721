"""What every figure shares: the page width, the panels per row, stage colours, label placement and
the timeline lanes."""
from __future__ import annotations


COLUMN_PX = 688
"""Width of the book's text column in CSS pixels at a 1,280 px wide page (scripts/screenshot.py's default):
a wider figure is shown scaled down to it."""
MIN_TEXT_PX = 9.0
"""The smallest text a figure may show, in CSS pixels as rendered in that column (legible at page width)."""

PAGE_WIDTH_IN = 8.5
"""Width of a full-page figure, inches: shown in the text column (:data:`COLUMN_PX`) at about 84% of its
size at 96 dpi, so text of 9 pt and more stays legible (:data:`MIN_TEXT_PX`)."""
PANELS_PER_ROW = 2
"""Multi-panel figures are laid out two panels per row for the page."""

def legend_columns(labels, width_in: float, fontsize: float = 9, most: int = 3) -> int:
    """The most columns (up to ``most``) in which a legend of ``labels`` stays within ``width_in``
    inches: each column as wide as the longest label (about 0.55 em a character) and its handle
    (0.7 in), so a long device or model name takes a row of its own rather than widening the figure
    past the page (which would shrink every text under the legible size)."""
    longest = max((len(str(x)) for x in labels), default=0)
    column_in = longest * 0.55 * fontsize / 72 + 0.7
    return max(1, min(most, int(width_in // column_in)))


def legend_below(ax, fontsize: float = 9, ncol: int | None = None) -> None:
    """The panel's legend under everything the panel draws below its frame (ticks, tick labels, its axis
    label), however tall the legend: anchored at the panel's own drawn bottom, not at a fixed fraction of a
    frame the layout may shrink, and off the data (a legend inside the frame covered points and bars).
    Call it after the figure's layout; the saved figure's tight box takes it in. ``ncol``: as many columns
    as the labels fit in the panel's width (:func:`legend_columns`) unless given."""
    fig = ax.figure
    if ncol is None:
        ncol = legend_columns(ax.get_legend_handles_labels()[1], ax.get_position().width * fig.get_figwidth(), fontsize)
    fig.canvas.draw()
    bottom = ax.get_tightbbox(fig.canvas.get_renderer()).y0
    y = ax.transAxes.inverted().transform((0.0, bottom))[1]
    ax.legend(fontsize=fontsize, loc="upper center", bbox_to_anchor=(0.5, y - 0.02), ncol=ncol)


def plain_log_ticks(axis) -> None:
    """A logarithmic ``axis`` (``ax.xaxis`` or ``ax.yaxis``) labelled at 1, 2 and 5 of each decade in plain
    numbers ("0.2", "500"), no minor labels: its decades' powers alone could not be read."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def wrapped(label: str, width_in: float, fontsize: float = 9) -> str:
    """``label`` broken into lines that fit ``width_in`` inches beside a legend handle (about 0.55 em a
    character), so a long device or model name stays inside its panel."""
    import textwrap
    return textwrap.fill(str(label), max(12, int((width_in - 0.8) * 72 / (0.55 * fontsize))))


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



def lanes_panel(ax, bars, title: str) -> None:
    """One timeline: a bar per op on its lane, coloured by stage, numbered by micro-batch."""
    lanes = sorted({b.lane for b in bars}, key=lambda s: (s.startswith("FFN"), s.startswith("network"), s))
    y = {lane: i for i, lane in enumerate(lanes)}
    for b in bars:
        ax.barh(y[b.lane], b.duration, left=b.start, color=STAGE_COLOURS[b.stage], edgecolor="white", height=0.8,
                hatch="//" if b.stage == "idle" else None)
        if b.stage in ("attention", "ffn") and b.duration > 0.3:
            ax.text(b.start + b.duration / 2, y[b.lane], str(b.microbatch), ha="center", va="center", fontsize=9,
                    color="white")
    ax.set_yticks(range(len(lanes)), lanes, fontsize=9)
    ax.invert_yaxis()
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("time (units of t_B)")


def small_texts(fig, column_px: float = COLUMN_PX, floor_px: float = MIN_TEXT_PX) -> list[tuple[str, float]]:
    """Every visible text of ``fig`` (titles, labels, ticks, legends, annotations) smaller than ``floor_px`` once
    the figure is shown in the book: its size in points at the figure's dpi, scaled down to ``column_px`` when
    the saved (tight) figure is wider. ``[(text, px), ...]``, empty when everything is legible."""
    from matplotlib.text import Text
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width_px = fig.get_tightbbox(renderer).width * fig.dpi
    scale = min(1.0, column_px / width_px)
    small = []
    for text in fig.findobj(Text):
        if not (text.get_visible() and text.get_text().strip()) or not _shown(text):
            continue
        px = text.get_fontsize() * fig.dpi / 72 * scale
        if px < floor_px - 1e-9:
            small.append((text.get_text(), round(px, 1)))
    return small


def _shown(text) -> bool:
    """A text that is drawn: its own and every parent's visibility (hidden axes keep visible tick labels)."""
    artist = text
    while artist is not None:
        if not artist.get_visible():
            return False
        artist = getattr(artist, "axes", None) if artist is text else None
    return text.figure is not None
