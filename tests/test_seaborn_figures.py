"""The figures drawn with seaborn: what they write in their cells, and the same bytes every run."""
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from afdlib.report.figures import advice_heatmap, aic_stage_figure, sensitivity_figure  # noqa: E402
from afdlib.report.style import setup_style  # noqa: E402


def _texts(fig) -> list[str]:
    return [t.get_text() for t in fig.axes[0].texts]


def test_advice_heatmap_writes_ratio_probability_and_marks_the_undecided():
    # each cell: the ratio, P(AFD better) below it, '?' where the table says undecided; a pair
    # without a probability (not computed) shows the ratio alone
    table = pd.DataFrame({"model": ["m1", "m1", "m2", "m2"], "hardware": ["a", "b", "a", "b"],
                          "ratio": [0.5, 1.0, 1.3, 2.0], "p_afd": [0.03, 0.5, 0.8, np.nan],
                          "decisive": [True, False, False, True]})
    fig = advice_heatmap(table, ["a", "b"], ["m1", "m2"])
    assert _texts(fig) == ["0.50\n0.03", "1.00\n0.50?", "1.30\n0.80?", "2.00"]   # row by row: m1 (a, b), then m2
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["m1", "m2"]
    plt.close(fig)
    named = table.assign(model_name=["Model 1", "Model 1", "Model 2", "Model 2"],
                         hardware_name=["NVIDIA A", "NVIDIA B", "NVIDIA A", "NVIDIA B"])
    fig = advice_heatmap(named, ["a", "b"], ["m1", "m2"])
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["Model 1", "Model 2"]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["A", "B"]
    plt.close(fig)


def test_tornado_figure_draws_each_assumption_between_its_ends():
    from afdlib.report.figures import tornado_figure
    rows = [{"assumption": "x", "low": 1.4, "high": 0.7, "nominal": 1.0, "at": "4th and 96th"},
            {"assumption": "y", "low": 0.95, "high": 1.05, "nominal": 1.0, "at": "21st and 79th"}]
    fig = tornado_figure(rows, "t")
    bars = fig.axes[0].patches
    assert [(round(b.get_x(), 6), round(b.get_width(), 6)) for b in bars] == [(0.7, 0.7), (0.95, 0.1)]
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["x", "y"]
    plt.close(fig)


def test_sensitivity_figure_writes_signed_percentages_defaults_first():
    base = pd.DataFrame({"case": ["c1", "c2"], "error": [0.17, -0.06]})
    sens = pd.DataFrame({"variation": ["v", "v"], "case": ["c2", "c1"], "error": [-0.27, 0.61]})
    fig = sensitivity_figure(sens, base)
    assert _texts(fig) == ["+17%", "-6%", "+61%", "-27%"]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["1", "2"]
    plt.close(fig)


@pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")   # seaborn 0.13.2's objects on pandas 3
def test_stage_figure_is_the_same_whatever_numpy_s_global_seed():
    """The strip plot's jitter is seeded: rebuilds of the book give the same figure."""
    setup_style()
    rng = np.random.default_rng(1)
    n = 12
    comp = pd.DataFrame({"kind": "grid", "design": ["ep", "afd"] * (n // 2),
                         "hardware": ["h100", "h200", "b200"] * (n // 3)})
    for col in ("ratio_attn_ms", "ratio_ffn_ms", "ratio_t_attn_us", "ratio_t_ffn_us", "ratio_t_comm_us"):
        comp[col] = rng.lognormal(0, 0.3, n)
    svgs = []
    for seed in (0, 1):
        np.random.seed(seed)
        fig = aic_stage_figure(comp)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
        svgs.append(buf.getvalue())
        plt.close(fig)
    assert svgs[0] == svgs[1]
