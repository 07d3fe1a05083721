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
    marks = [t.get_text() for t in fig.axes[1].get_legend().get_texts()][2:]
    # 50 GB/s = 400 Gb/s; no fixed "H800 NVLink" or "800 Gb/s NIC" in a book of other devices; each a letter
    # above the frame (off the curves) and its name in the legend
    assert marks == ["a: Lab node NIC (400 Gb/s)", "b: Lab node scale-up", "c: GB200 NVL72 fabric"]
    top = next(a for a in fig.axes[1].child_axes)
    assert [t.get_text() for t in top.get_xticklabels()] == ["a", "b", "c"]
    assert fig.axes[1].get_title() == "Ceiling vs bandwidth (Kimi-K2 experts)"
    plt.close(fig)


def test_the_ceiling_figure_wraps_a_long_device_name_in_its_legends(tmp_path):
    """An own-pair book for a lab node with a long name failed: the legend entries "<name>, best (scale-up
    450 GB/s)" widened the figure past the column (every text 8.4 px); wrapped, all stay >= 9 px."""
    import numpy as np

    from afdlib.inputs.catalog import load_hardware, load_model
    from afdlib.report.figures import ceiling_figure
    from afdlib.report.figures.common import small_texts
    device = tmp_path / "lab.yaml"
    device.write_text("name: Lab node (4 x H200-class accelerators, never in the catalogue)\ngpus_per_node: 4\n"
                      "fp8_tflops: 1979\nhbm_tb_per_s: 4.8\nhbm_gb: 141\nscale_up_gb_per_s: 450\n"
                      "scale_out_gb_per_s: 50\nsource: a test\n")
    ordinary, superpod, model = load_hardware(str(device)), load_hardware("gb200"), load_model("kimi-k2")
    fig = ceiling_figure([model], np.array([[0.4], [0.6]]), ordinary, superpod, model)
    assert small_texts(fig) == []
    plt.close(fig)


def test_small_texts_measure_the_size_shown_in_the_column():
    from afdlib.report.figures.common import COLUMN_PX, small_texts
    # a figure narrower than the column is shown at its size: 7 pt at 100 dpi = 9.72 px, 6 pt = 8.33 px
    fig, ax = plt.subplots(figsize=(5, 3), dpi=100)
    ax.text(0.5, 0.5, "seven", fontsize=7)
    ax.text(0.2, 0.2, "six", fontsize=6)
    assert small_texts(fig) == [("six", 8.3)]
    # twice the column's width: shown scaled down to the column (the saved figure is cut to its contents,
    # the axes' 77.5% of the width and the tick labels), so 9.72 px becomes about 9.72 / 1.6 and the ticks shrink
    fig.set_size_inches(2 * COLUMN_PX / 100, 3)
    got = dict(small_texts(fig))
    assert 9.72 / 2 < got["seven"] < 9.72 / 1.4 and len(got) > 2
    plt.close(fig)


def test_save_figure_refuses_text_too_small_to_read(tmp_path):
    import pytest

    from afdlib.errors import AfdError
    from afdlib.report.style import save_figure
    fig, ax = plt.subplots(figsize=(5, 3), dpi=100)
    ax.text(0.5, 0.5, "tiny label", fontsize=5)
    with pytest.raises(AfdError, match="tiny label"):
        save_figure(fig, "tiny", tmp_path)
    ax.texts[0].set_fontsize(9)
    assert save_figure(fig, "tiny", tmp_path).exists()
    plt.close(fig)


def test_curves_on_an_earlier_curve_are_drawn_dashed_and_the_ceiling_under_them():
    import numpy as np

    from afdlib.report.figures.paper import coinciding, hfu_panels
    nan = np.nan
    a = np.array([1.0, 0.5, 0.4, nan])
    same = np.array([nan, 0.5, 0.4, 0.3])          # equal where both have a value (DeepSeek-V3 and Kimi-K2)
    other = np.array([0.9, 0.6, 0.4, 0.3])
    assert [coinciding([a, same, other], j) for j in range(3)] == [0, 1, 0]
    assert coinciding([a, same, np.array([nan, 0.5, 0.4, 0.3])], 2) == 2
    assert coinciding([a, np.array([nan, nan, 0.4, nan])], 1) == 0       # one common point is not a line

    class M:
        def __init__(self, slug):
            self.slug = self.name = slug

    class H:
        name = "Lab"
    n = np.array([1, 2, 4, 8])
    ceiling = np.array([[[1.0, 0.5, 0.4, 0.3]] * 2])
    grid = {"comm_ceiling": ceiling, "hfu": ceiling, "feasible": np.ones((1, 2, 4), bool),
            "fails": np.zeros((1, 2, 4), int)}
    fig = hfu_panels(grid, [H()], [M("a"), M("b")], n)
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    ceiling_line = next(v for k, v in lines.items() if k.startswith("communication ceiling"))
    assert ceiling_line.get_zorder() < lines["a"].get_zorder() < lines["b"].get_zorder()
    assert lines["a"].get_linestyle() == "-" and lines["b"].get_linestyle() == "--"
    plt.close(fig)


def test_a_long_device_name_takes_a_legend_row_of_its_own_not_the_page(tmp_path):
    """An own-pair book for a device with a long name failed its Figure 3: the three-column legend
    widened the figure past the page, which shrank every text under the legible size."""
    import numpy as np

    from afdlib.inputs.catalog import load_hardware
    from afdlib.report.figures import grouped_gemm_figure
    from afdlib.report.figures.common import legend_columns, small_texts
    assert legend_columns(["balanced", "Zipf s = 0.5", "Zipf s = 1"], 7.5) == 3      # short labels: three
    assert legend_columns(["x" * 120], 7.5) == 1                                     # one too long: one
    device = tmp_path / "lab.yaml"
    device.write_text("name: Lab node (4 x H200-class, never in the catalogue of this project)\ngpus_per_node: 4\n"
                      "fp8_tflops: 1979\nhbm_tb_per_s: 4.8\nhbm_gb: 141\nscale_up_gb_per_s: 450\n"
                      "scale_out_gb_per_s: 50\nsource: a test\n")
    hw = load_hardware(str(device))
    tokens = np.geomspace(1, 4096, 50)
    curves = {hw.slug: [np.minimum(1.0, tokens / 500), np.minimum(0.9, tokens / 700)]}
    fig = grouped_gemm_figure(tokens, curves, [0.0, 0.5], [hw], 112.0, {hw.slug: 0.33}, 0.6, 8, 1.0,
                              "Qwen/Qwen3.5-397B-A17B")
    assert small_texts(fig) == []
    plt.close(fig)


def test_the_tornado_figure_wraps_a_long_pair_name():
    from afdlib.report.figures import tornado_figure
    from afdlib.report.figures.common import small_texts
    rows = [{"assumption": a, "low": 0.9, "high": 1.1, "nominal": 1.0, "at": "4th and 96th"}
            for a in ("compute kernels", "networks", "gap per step")]
    fig = tornado_figure(rows, "Qwen/Qwen3.5-397B-A17B on Lab node (4 x H200-class, never in the catalogue)")
    assert small_texts(fig) == [] and "\n" in fig.axes[0].get_title()
    plt.close(fig)


def test_the_tornado_figure_has_ticks_to_read_a_narrow_range_by():
    """Ratios 0.93-1.02 once showed one tick, "1": the bars could not be read. Plain ticks across the range,
    every bar inside the frame (the left end not clipped)."""
    from afdlib.report.figures import tornado_figure
    rows = [{"assumption": "a", "low": 0.93, "high": 1.02, "nominal": 0.97, "at": "4th and 96th"},
            {"assumption": "b", "low": 0.95, "high": 0.99, "nominal": 0.97, "at": "4th and 96th"}]
    fig = tornado_figure(rows, "M on D")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert len(labels) >= 3 and "0.9" in labels and "1" in labels
    lo, hi = ax.get_xlim()
    assert lo < 0.93 and hi > 1.02
    plt.close(fig)


def test_the_conditions_figure_stays_legible_with_long_device_names():
    """An own-pair book names its device from the file (long names): the conditions figure still passes
    the book's legibility check (it once shrank every text under 9 px when the names took a legend column)."""
    import numpy as np

    from afdlib.report.figures import conditions_figure
    from afdlib.report.style import check_legible
    long = "Lab node (4 x H200-class, never in the catalogue)"
    x = np.array([512.0, 1024, 2048, 4096])
    curve = (x, np.array([1.1, 1.0, 0.9, 0.8]), np.array([0.9, 0.85, 0.8, 0.7]), (0.6, 0.3))
    panels = {f"panel {k}": ("x", {long: curve, "NVIDIA GB200 NVL72": curve}) for k in range(4)}
    costs = {f"AFD {k}A ({long}) 3F (NVIDIA H20)": (0.1 * k, 0.05) for k in range(1, 5)} | {f"EP on {long}": (0.0, 0.07)}
    fig = conditions_figure(panels, costs, f"price ratio NVIDIA H20 / {long}", long)
    check_legible(fig, "conditions")                    # raises where a text is under 9 px at the page's width
    plt.close(fig)


def test_the_ratio_maps_wrap_a_long_device_name_in_their_titles():
    """A map titled with a long own device name (an own-pair book's 4-GPU lab node) once stuck out of
    its panel, widened the saved figure past the column and shrank every label to 8.9 px (the build
    failed); wrapped, every text keeps its 9 px."""
    from types import SimpleNamespace

    import numpy as np

    from afdlib.report.figures import ratio_maps_figure
    from afdlib.report.figures.common import small_texts
    m = np.geomspace(512, 16384, 6)
    bw = np.geomspace(12.5e9, 400e9, 5)
    ratio = np.outer(np.linspace(0.7, 1.4, 5), np.ones(6))
    long = "Lab node (4 x H200-class accelerators, never in the catalogue), 4-GPU nodes: scale-out x M"
    maps = {t: SimpleNamespace(values=m, bandwidth=bw, ratio=ratio, axis="moe_intermediate_size")
            for t in (long, "NVIDIA GB200 NVL72: fabric x M")}
    placements = {long: {"A": (2048.0, 50e9), "B": (16384.0, 50e9)}}
    fig = ratio_maps_figure(maps, placements)
    assert small_texts(fig) == []
    assert "\n" in fig.axes[0].get_title()           # wrapped, not one line wider than its panel
    plt.close(fig)


def test_the_jitter_deployment_figure_colours_ep_apart_from_afd():
    """EP with two micro-batches once shared AFD 2BO's green: every line a colour of its own."""
    import pandas as pd

    from afdlib.report.figures.pipeline import jitter_deployment_figure
    rows = [{"design": d, "micro_batches": m, "cv": cv, "throughput_loss": 0.01 * cv, "tokens_per_s_per_gpu_slo": 1000.0}
            for d, ms in (("afd", (2, 3, 4)), ("ep", (1, 2))) for m in ms for cv in (0.0, 0.1)]
    fig = jitter_deployment_figure(pd.DataFrame(rows))
    colours = [line.get_color() for line in fig.axes[0].get_lines()]
    assert len(colours) == 5 and len(set(colours)) == 5
    plt.close(fig)
