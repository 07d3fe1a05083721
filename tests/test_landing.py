"""The landing page's readings (afdlib.report.landing): thresholds along the bandwidth and the departures."""
from types import SimpleNamespace

import numpy as np
import pytest

from afdlib.decision.threshold import break_even_scale_out
from afdlib.decode.step import DECODE_T_GAP_S
from afdlib.decision.sweetspot import with_network
from afdlib.decision.verdict import verdict
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.decode.step import Assumptions
from afdlib.inputs.specs import Budget, Precision
from afdlib.report.landing import (Thresholds, bandwidth_windows, PAPER_CONDITIONS, condition_rows, crossings, interval_words,
                                   layer_mismatches, lead_intervals, method_rows, p_afd_over_bandwidth,
                                   pairing_readings)

BW = np.array([1e9, 2e9, 4e9, 8e9])


def test_crossings_are_linear_in_log_bandwidth():
    # 0.5 -> 1.5 between 1 and 2 GB/s: halfway in log, sqrt(2) GB/s; 1.5 -> 0.5 between 4 and 8: 4 sqrt(2)
    x = crossings(BW, [0.5, 1.5, 1.5, 0.5])
    assert x == pytest.approx([np.sqrt(2) * 1e9, 4 * np.sqrt(2) * 1e9])
    assert lead_intervals(BW, [0.5, 1.5, 1.5, 0.5]) == [pytest.approx((np.sqrt(2) * 1e9, 4 * np.sqrt(2) * 1e9))]
    # open at either end of the range searched
    assert lead_intervals(BW, [1.5, 0.5, 0.5, 0.5]) == [(None, pytest.approx(np.sqrt(2) * 1e9))]
    assert lead_intervals(BW, [0.5, 0.5, 0.5, 1.5]) == [(pytest.approx(4 * np.sqrt(2) * 1e9), None)]
    assert lead_intervals(BW, [0.5, 0.9, 0.9, 0.5]) == []
    # an infinite ratio (EP infeasible) turns at the grid point on the finite side
    assert crossings(BW, [0.5, np.inf, np.inf, np.inf]) == [pytest.approx(1e9)]


def test_interval_words():
    assert interval_words([], 2.5e9, 2560e9) == "nowhere in 2.5-2,560 GB/s"
    assert interval_words([(29e9, 55e9)], 2.5e9, 2560e9) == "from 29 to 55 GB/s"
    assert interval_words([(None, 8e9)], 2.5e9, 2560e9) == "below 8.0 GB/s"
    assert interval_words([(100e9, None)], 2.5e9, 2560e9) == "above 100 GB/s (to the top of the range, 2,560)"


def test_threshold_words_by_hand():
    t = Thresholds("M", "D", BW, np.array([0.05, 0.3, 0.6, 0.4]), 2e9)
    # P crosses 0.1 between 1 and 2 GB/s at (0.1 - 0.05) / 0.25 = 0.2 of the log step: 2^0.2 GB/s
    ep = lead_intervals(t.bandwidth, -t.p_afd, -0.1)
    assert ep == [(None, pytest.approx(2 ** 0.2 * 1e9))]
    w = t.words()
    assert "P never reaches 0.9 (at most 0.60, at 4.0 GB/s)" in w and "EP is decided (P at most 0.1) below 1.1 GB/s" in w
    assert t.at_own == 0.3 and t.peak == (0.6, 4e9)


def _case():
    return (load_model("deepseek-v3", profile="reference"), load_hardware("h800", profile="datasheet"),
            Budget(slo_s=0.05, l_accept=1.0, t_gap_s=DECODE_T_GAP_S))


def test_windows_hold_the_advise_break_even():
    model, hw, budget = _case()
    bw, _ = break_even_scale_out(model, hw, budget, 4096, Precision(), Assumptions(), factors=np.geomspace(1 / 4, 4, 9))
    (w,) = bandwidth_windows([model], [hw], budget, 4096, factors=np.geomspace(1 / 4, 4, 9))
    edges = [x for a, b in w.intervals for x in (a, b) if x is not None]
    if bw is None:
        assert not edges or w.intervals == [(None, None)]
    else:
        assert min(abs(np.log(x / bw)) for x in edges) < 1e-9


def test_vectorised_probability_is_the_verdict_at_each_bandwidth():
    model, hw, budget = _case()
    bws = np.array([10e9, 40e9])
    p = p_afd_over_bandwidth(model, hw, budget, 4096, bws)
    for b, q in zip(bws, p):
        assert q == pytest.approx(verdict(model, with_network(hw, b), budget, 4096, tornado=False).p_afd, abs=1e-9)


def test_method_rows_by_hand():
    rows = method_rows(4.0, 1.0, "8A2F", 0.015, 0.003, 8.0, 8 * (1 - (7 / 8) ** 8), "DeepSeek-V3 at N_F = K = 8",
                       [("GLM-4.7", 92, 3, 92, 89)])
    by = {r["claim"]: r for r in rows}
    # 8 (1 - (7/8)^8) = 5.2505 nodes: the paper's 8 overstate the traffic by 52%
    assert "5.25 expected" in by["FFN nodes a token crosses to (two-stage forwarding)"]["this book"]
    assert "by 52%" in by["FFN nodes a token crosses to (two-stage forwarding)"]["reason"]
    assert all(r["departs"] for r in rows)
    same = method_rows(1.0, 1.0, "8A2F", 0.003, 0.003, 5.0, 5.0, "x", [])
    assert [r["departs"] for r in same] == [False, True, False, False]   # the imbalance row is a method


def test_layer_mismatches_from_the_catalogue():
    # Table 4 prints GLM-4.7 with 92 MoE layers next to 3 dense layers of 92; DeepSeek-V3's 3 + 58 = 61 add up
    assert layer_mismatches(["deepseek-v3", "glm-4.7"]) == [("GLM-4.7", 92, 3, 92, 89)]


def test_condition_rows_join_the_table3_readings_per_condition():
    """One row per paper condition, its readings joined; it departs when any reading does."""
    t3 = SimpleNamespace(rows=lambda: [
        {"condition (paper)": "coarse experts", "reading": "agrees with the paper on O: 1 to 2"},
        {"condition (paper)": "coarse experts", "reading": "departs on S, because x: 2 to 1"},
        {"condition (paper)": "lower sparsity", "reading": "agrees with the paper on O: 2 to 1"}])
    rows = condition_rows(t3)
    assert [r["claim"] for r in rows] == [PAPER_CONDITIONS["coarse experts"], PAPER_CONDITIONS["lower sparsity"]]
    assert [r["departs"] for r in rows] == [True, False]
    assert rows[0]["this book"] == "agrees with the paper on O: 1 to 2; departs on S, because x: 2 to 1"


def test_pairing_readings_by_hand():
    x, y = SimpleNamespace(slug="x", name="X"), SimpleNamespace(slug="y", name="Y")
    rows = [{"design": "EP on x", "x GPU-h/Mtok": 1.0, "y GPU-h/Mtok": 0.0},
            {"design": "EP on y", "x GPU-h/Mtok": 0.0, "y GPU-h/Mtok": 0.5},
            {"design": "AFD 4A (x) 3F (y)", "x GPU-h/Mtok": 0.2, "y GPU-h/Mtok": 0.1},
            {"design": "AFD 2A (y) 16F (x)", "x GPU-h/Mtok": 0.6, "y GPU-h/Mtok": 0.3}]
    (l1, w1, ok1), (l2, w2, ok2) = pairing_readings(rows, x, y)
    # x attention: cheaper than EP on x above 0.1 / (1.0 - 0.2) = 0.125, than EP on y below (0.5 - 0.1) / 0.2 = 2
    assert ok1 and "between 0.12 and 2 times" in w1 and "bound" not in l1
    # y attention: above 0.6 / (0.5 - 0.3) = 3 against EP on y, below (1.0 - 0.6) / 0.3 = 1.33 against EP on x
    assert not ok2 and "at no price" in w2 and l2.startswith("AFD 2A (y) 16F (x)") and "bound of 16 nodes" in l2


def test_reference_row_states_the_lean_against_the_tool():
    """Undecided for AFD: the paper's EP lead is not confirmed (a departure row), its reason names the
    equal-overlap ratio and, given, the model's lean against aiconfigurator."""
    from afdlib.report.landing import reference_row
    ref = {"decisive": False, "recommendation": "AFD", "p_afd": 0.54, "ratio": 1.05}
    row = reference_row(ref, 0.85, "EP 25%, AFD 23%", "M", "D", "toward AFD by a factor 1.21")
    assert row["departs"] and "the ratio is 0.85" in row["reason"]
    # undecided: the reason says why, from the ratio's composition error's band (uncertainty.decisive_band)
    from afdlib.decision.uncertainty import decisive_band
    assert row["reason"].startswith("undecided because") and f"above {decisive_band()[1]:.2f}" in row["reason"]
    assert row["reason"].endswith("against NVIDIA aiconfigurator the model leans toward AFD by a factor 1.21")
    assert reference_row({**ref, "decisive": True, "recommendation": "EP"}, 0.85, "s", "M", "D")["departs"] is False
    # on a Superpod the paper finds AFD competitive: a verdict decided for EP departs, an undecided one does not
    pod = reference_row({**ref, "decisive": True, "recommendation": "EP"}, 0.85, "s", "M", "D", superpod=True)
    assert pod["departs"] is True and pod["claim"].startswith("AFD is competitive on a Superpod (M on D)")
    assert reference_row(ref, 0.85, "s", "M", "D", superpod=True)["departs"] is False


def test_one_grid_for_the_break_even():
    """The landing page's windows and thresholds search the grid `afd advise` finds its break-even on
    (one home, so the two report the same crossing): 41 bandwidths from 1/16 to 64 x the device's,
    (64 x 16)^(1/40) = 1.1892 apart."""
    from afdlib.decision.threshold import FLIP_FACTORS
    from afdlib.report import landing
    assert landing.FACTORS is FLIP_FACTORS and FLIP_FACTORS.size == 41
    assert FLIP_FACTORS[1] / FLIP_FACTORS[0] == pytest.approx(1024 ** (1 / 40)) == pytest.approx(1.18921, abs=1e-5)
    import inspect
    for f in (landing.bandwidth_windows, landing.probability_thresholds):
        assert inspect.signature(f).parameters["factors"].default is FLIP_FACTORS


def test_decided_reading_has_a_wording_for_each_outcome():
    from afdlib.report.landing import decided_reading
    row = {"recommendation": "EP", "decisive": False}
    assert decided_reading([row] * 3) == "no verdict is decided"
    assert decided_reading([{**row, "decisive": True}, row]) == "1 of 2 verdicts is decided, all for EP"
    both = [{**row, "decisive": True}, {"recommendation": "AFD", "decisive": True}, row]
    assert decided_reading(both) == "2 of 3 verdicts are decided, 1 for EP and 1 for AFD"
    assert decided_reading([{"recommendation": "-", "decisive": True}]) == "no verdict is decided"


def test_verdict_glue_compares_the_ratio_s_error_with_each_design_s_from_their_numbers():
    import numpy as np

    from afdlib.decision.head_to_head import ratio_error
    from afdlib.decode.validation import design_spreads
    from afdlib.report.landing import verdict_glue
    g, err = verdict_glue([]), ratio_error()
    smaller = err["rms_log"] < min(s for s, _ in design_spreads().values())
    assert g["ratio_vs_designs"] == ("smaller than" if smaller else "no smaller than")
    assert g["ratio_rms"] == f"{np.expm1(err['rms_log']):.0%}" and g["n_sources"] == str(err["sources"])
    lo, hi = float(g["band_lo"]), float(g["band_hi"])
    assert lo < 1 < hi and abs(lo * hi - 1) < 0.01


def test_the_lean_of_the_head_to_heads_is_worded_from_their_signs():
    from afdlib.report.landing import _lean_words
    assert _lean_words({"pairs": 2, "signs": [-1], "mean_log": -0.082}) == (
        "both head-to-heads find AFD / EP higher than the model predicts (mean log error -0.082): on them the "
        "model leans toward EP, and the verdict does not correct for it")
    assert "all 3 head-to-heads find AFD / EP lower" in _lean_words({"pairs": 3, "signs": [1], "mean_log": 0.05})
    assert _lean_words({"pairs": 3, "signs": [-1, 1], "mean_log": 0.0}).endswith("no lean shows")


def test_the_opening_recommendation_by_hand():
    from afdlib.decision.uncertainty import decisive_band
    from afdlib.report.landing import recommendation_words
    lo, hi = decisive_band()

    def row(model, hw, rec, ratio, p, decisive):
        return {"model": model, "hardware": hw, "model_name": model.upper(), "hardware_name": f"NVIDIA {hw}",
                "recommendation": rec, "ratio": ratio, "p_afd": p, "decisive": decisive}
    rows = [row("a", "x", "EP", 0.60, 0.05, True), row("b", "x", "AFD", 1.05, 0.55, False),
            row("c", "y", "EP", 0.90, 0.30, False), row("d", "y", "-", float("nan"), float("nan"), False)]
    text = recommendation_words(rows, "a grid")
    # the refused pair (d) is no pair of the count; one decided, two undecided split one each
    assert text.startswith("For a grid, the model decides 1 of 3 pairs: EP for A on x (AFD / EP 0.60, "
                           "P(AFD better) 0.05); it holds under both the free search")
    assert "The other 2 stay undecided (AFD / EP 0.90 to 1.05 at the model's defaults; AFD is the more likely " \
           "in 1 and EP in 1)" in text
    assert f"decided only below {lo:.2f} or above {hi:.2f}" in text
    none = recommendation_words([dict(r, decisive=False) for r in rows[1:3]], "g")
    assert none.startswith("For g, the model decides none of the 2 pairs. All 2 stay undecided")
    assert recommendation_words(rows[:1], "g").endswith("validate.")      # nothing undecided: no second sentence
