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


def test_the_ceiling_figure_marks_the_chapters_devices_from_their_data(tmp_path):
    import numpy as np

    from afdlib.inputs.catalog import load_hardware, load_model
    from afdlib.report.figures import ceiling_figure
    device = tmp_path / "lab.yaml"
    device.write_text("name: Lab node\ngpus_per_node: 4\nfp8_tflops: 1979\nhbm_tb_per_s: 4.0\nhbm_gb: 141\n"
                      "scale_up_gb_per_s: 360\nscale_out_gb_per_s: 50\nsource: a test\n")
    ordinary, superpod, model = load_hardware(str(device)), load_hardware("gb200"), load_model("kimi-k2")
    fig = ceiling_figure([model], np.array([[0.4], [0.6]]), ordinary, superpod, model)
    marks = {t.get_text() for t in fig.axes[1].texts}
    # 50 GB/s = 400 Gb/s; no fixed "H800 NVLink" or "800 Gb/s NIC" in a book of other devices
    assert marks == {"Lab node NIC (400 Gb/s)", "Lab node scale-up", "GB200 NVL72 fabric"}
    assert fig.axes[1].get_title() == "Ceiling vs bandwidth (Kimi-K2 experts)"
    plt.close(fig)
