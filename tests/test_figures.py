"""Figure helpers: labels that do not collide."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from afdlib.report.figures import place_labels  # noqa: E402


def test_labels_of_crowded_points_do_not_overlap_each_other_or_leave_the_axes():
    fig, ax = plt.subplots(figsize=(4, 3))
    # two pairs of near-coincident points and a point on the right edge: the first offset (right of
    # the point) would collide for the second of each pair and leave the axes for the last
    points = [(1.0, 1.0), (1.0, 1.03), (2.0, 2.0), (2.05, 2.0), (3.0, 1.5)]
    ax.plot(*zip(*points), "o")
    ax.set_xlim(0.5, 3.05)
    ax.set_ylim(0.5, 2.5)
    labels = ["first label", "second label", "third", "fourth", "a long label at the edge"]
    place_labels(ax, points, labels)
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.texts]
    assert len(boxes) == len(labels)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b)
    inside = ax.get_window_extent(renderer)
    assert all(inside.contains(b.x0, b.y0) and inside.contains(b.x1, b.y1) for b in boxes)
    plt.close(fig)
