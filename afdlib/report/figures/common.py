"""What every figure shares: the page width, the panels per row, stage colours, label placement and
the timeline lanes."""
from __future__ import annotations




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



def lanes_panel(ax, bars, title: str) -> None:
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
