"""The sweet-spot chapter's readings (afdlib.studies.sweetspot_study): hand-built tables and maps with the
numbers the readings must return, and the searches they run on a small grid."""
import math
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from afdlib.decode.step import DECODE_T_GAP_S
from afdlib.decision.sweetspot import RatioMap
from afdlib.studies.sweetspot_study import (
    PropertyMaps, advice_summary, break_even_side, design_named, error_spread, heterogeneous_design,
    duplex_gain, heterogeneous_price_reading, heterogeneous_prices, median_ratio_between, overlap_readings, pools_named, pools_rows,
    property_maps, ratio_of, ratio_span,
    top_form, twins,
)
from afdlib.decode.search import best_afd
from afdlib.errors import AfdError
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget

BUDGET = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=DECODE_T_GAP_S)


def _row(model, hw, ratio, rec=None, decisive=False):
    return {"model": model, "hardware": hw, "ratio": ratio, "decisive": decisive,
            "recommendation": rec or ("-" if math.isnan(ratio) else "AFD" if ratio > 1 else "EP")}


ROWS = [_row("a", "x", 2.0, decisive=True), _row("a", "y", 0.5), _row("a", "z", 2.0, decisive=True),
        _row("b", "x", 0.8), _row("b", "y", 1.25), _row("b", "z", 0.8)]


def test_advice_summary_counts_and_skips_missing_ratios():
    s = advice_summary(ROWS + [_row("c", "x", float("nan"))])
    assert (s.pairs, s.afd, s.ep, s.decisive) == (7, 3, 3, 2)
    assert (s.ratio_min, s.ratio_max) == (0.5, 2.0)
    assert math.isnan(s.median_ep_over_afd)          # a pair without a ratio: no median
    # EP / AFD of the six: 0.5, 2, 0.5, 1.25, 0.8, 1.25 -> sorted 0.5 0.5 0.8 1.25 1.25 2: median (0.8 + 1.25) / 2
    assert advice_summary(ROWS).median_ep_over_afd == pytest.approx(1.025)


def test_ratio_lookups():
    assert ratio_of(ROWS, "b", "y") == 1.25
    with pytest.raises(AfdError, match="no advice for model 'c' on 'x'"):
        ratio_of(ROWS, "c", "x")
    assert ratio_span(ROWS, ["a", "b"], ["y"]) == (0.5, 1.25)
    assert all(math.isnan(v) for v in ratio_span(ROWS, ["nope"], ["x"]))   # no such pair: nothing to span
    # x / y per model: a 2 / 0.5 = 4, b 0.8 / 1.25 = 0.64 -> median 2.32
    assert median_ratio_between(ROWS, "x", "y") == pytest.approx(2.32)
    with pytest.raises(AfdError, match="device 'w' is not in the advice table"):
        median_ratio_between(ROWS, "w", "y")


def test_twins_are_devices_with_the_same_ratio_for_every_model():
    assert twins(ROWS) == [("x", "z")]
    assert twins(ROWS[:3]) == [("x", "z")]          # one model: x and z agree on it
    assert twins([_row("a", "x", 1.0), _row("a", "y", 1.1)]) == []


def test_error_spread_and_the_lean_toward_afd():
    rows = [{"design": "afd", "error": 0.272}, {"design": "ep", "error": -0.104}, {"design": "ep", "error": 0.05}]
    e = error_spread(rows)
    assert (e.low, e.high, e.afd, e.ep_low, e.ep_high) == (-0.104, 0.272, (0.272,), -0.104, 0.05)
    # 1.272 / 1.05 = 1.2114; 1.272 / 0.896 = 1.4196
    assert e.afd_lean == pytest.approx((0.2114, 0.4196), abs=1e-4)
    with pytest.raises(AfdError, match="at least one AFD and one EP case"):
        error_spread(rows[1:])


def test_break_even_side():
    grid = np.array([1.0, 2.0, 4.0, 8.0])
    assert break_even_side(None, np.array([0.5, 0.9, 1.0, 0.7]), grid) == "never"
    assert break_even_side(None, np.array([1.5, 0.9, 1.2, 1.1]), grid) == "always"   # not all at or below 1
    assert break_even_side(3.0, np.array([0.5, 0.9, 1.2, 1.3]), grid) == "above"     # next grid point, 4: 1.2
    assert break_even_side(3.0, np.array([1.5, 1.2, 0.9, 0.8]), grid) == "below"
    assert break_even_side(9.0, np.array([1.5, 1.2, 1.1, 1.2]), grid) == "below"     # nothing searched above


def test_every_crossing_is_interpolated_by_the_break_evens_rule():
    from afdlib.decision.threshold import flips
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    # 0.8 -> 1.2 crosses halfway (1.5); 1.3 -> 0.9 at 3 + 0.3 / 0.4 = 3.75; nan counts as below, and a
    # crossing into nan is not interpolated
    got = flips(x, np.array([0.8, 1.2, 1.3, 0.9, np.nan]))
    assert list(got) == pytest.approx([1.5, 3.75])
    assert flips(x, np.full(5, 0.9)).size == 0
    # an infinite ratio (EP infeasible) turns at the grid point on EP's feasible side
    assert list(flips(x, np.array([0.5, 0.9, np.inf, np.inf, np.inf]))) == [2.0]
    # a NaN after a lead (counted below) turns at the last finite grid point, not at NaN
    assert list(flips(x, np.array([0.5, 1.2, 1.3, np.nan, 0.5]))) == pytest.approx([1 + 0.5 / 0.7, 3.0])


def _map(axis, bandwidth, values, ratio, ep=None, afd=None):
    ratio = np.asarray(ratio, dtype=float)
    ep = np.ones_like(ratio) if ep is None else np.asarray(ep, dtype=float)
    return RatioMap(axis, np.asarray(bandwidth, dtype=float), np.asarray(values, dtype=float), ratio, ep,
                    ratio * ep if afd is None else np.asarray(afd, dtype=float), 0.0, ratio.size * 10)


@pytest.fixture(scope="module")
def hand_maps():
    """DeepSeek-V3 (M = 2048) on H800 (NIC 40 GB/s) and GB200 (fabric 720 GB/s), 3 x 3 maps."""
    ds = load_model("deepseek-v3", profile="reference")
    h800, gb200 = (load_hardware(h, profile="datasheet") for h in ("h800", "gb200"))
    m, s = [1024, 2048, 4096], [8, 32, 128]
    bw_o, bw_s = [10e9, 45e9, 640e9], [80e9, 700e9, 2880e9]
    mo = _map("moe_intermediate_size", bw_o, m, [[0.5, 0.6, 0.7], [0.9, 1.3, 0.8], [0.4, 1.1, 0.2]],
              ep=[[1, 1, 1], [1, 2, 1], [1, 3, 1]], afd=[[1, 1, 1], [1, 2.6, 1], [1, 3.9, 1]])
    so = _map("sparsity", bw_o, s, [[0.1, 0.2, 0.3], [0.7, 0.8, 0.95], [0.4, 0.5, 0.6]])
    ms = _map("moe_intermediate_size", bw_s, m, [[0.6, 0.65, 0.7], [0.85, 0.75, 0.66], [0.9, 0.95, 0.99]])
    ss = _map("sparsity", bw_s, s, [[0.1, 0.1, 0.1], [0.5, 0.6, 0.7], [0.2, 0.2, 0.2]])
    return PropertyMaps(ds, h800, gb200, mo, so, ms, ss)


def test_map_readings_at_the_reference_point(hand_maps):
    r = hand_maps.readings()
    # H800's 40 GB/s is nearest 45 GB/s (row 1); GB200's 720 nearest 700 (row 1); M = 2048 is column 1
    assert (r.m_row_bw, r.m_row_small, r.m_row_large, r.m_row_peak, r.m_row_peak_m) == (45e9, 0.9, 0.8, 1.3, 2048)
    assert (r.m_top_bw, r.m_top_small, r.m_top_large) == (640e9, 0.4, 0.2)
    from dataclasses import replace as _replace

    from afdlib.studies.sweetspot_words import top_row_clause
    assert top_row_clause(r) == "; at 640 GB/s it goes from 0.40 to 0.20"
    assert top_row_clause(_replace(r, m_row_bw=640e9)) == ""       # the own row is the top row: said once
    assert (r.ms_row_bw, r.ms_row_small, r.ms_row_large, r.ss_row_low, r.ss_row_high) == (700e9, 0.85, 0.66, 0.5, 0.7)
    assert (r.s_row_low, r.s_row_high, r.s_low, r.s_high, r.m_small, r.m_large) == (0.7, 0.95, 8, 128, 1024, 4096)
    assert (r.ref_m_grid, r.fabric_low, r.fabric_high, r.fabric_low_bw, r.fabric_high_bw) == (2048, 0.65, 0.95, 80e9,
                                                                                              2880e9)
    assert (r.o_low, r.o_high, r.o_low_bw, r.o_high_bw, r.o_peak, r.o_peak_bw) == (0.6, 1.1, 10e9, 640e9, 1.3, 45e9)
    # from the peak (45 GB/s) to the top: AFD 2.6 -> 3.9 (+50%), EP 2 -> 3 (+50%)
    assert (r.afd_gain, r.ep_gain) == pytest.approx((0.5, 0.5))


def test_map_titles_placements_columns(hand_maps):
    titles = list(hand_maps.titled())
    assert titles == ["NVIDIA H800 SXM, 8-GPU nodes: scale-out x M", "NVIDIA H800 SXM, 8-GPU nodes: scale-out x E/K",
                      "NVIDIA GB200 NVL72: fabric x M", "NVIDIA GB200 NVL72: fabric x E/K"]
    kimi = load_model("kimi-k2", profile="reference")          # E = 384, K = 8: E / K = 48
    places = hand_maps.placements([kimi])
    assert places[titles[1]]["Kimi-K2"] == (48, 40e9) and places[titles[2]]["Kimi-K2"][1] == 720e9
    cols = hand_maps.columns()
    assert [c["map"] for c in cols] == titles and "sparsity" in cols[1] and "moe_intermediate_size" in cols[0]
    assert list(cols[0]["bandwidth_gb_per_s"][:4]) == [10, 10, 10, 45] and list(cols[0]["ratio"][3:6]) == [0.9, 1.3, 0.8]
    assert hand_maps.points == 90


def test_pools_rows_and_the_heterogeneous_design():
    pools = [{"design": "EP on h20", "tokens_per_s_per_gpu": 500.0, "gpu_hours_per_mtok": {"h20": 0.5},
              "total_gpu_hours_per_mtok": 0.5, "usd_per_mtok": 1.0},
             {"design": "AFD 4A (h800) 1F (h20)", "tokens_per_s_per_gpu": 800.0,
              "gpu_hours_per_mtok": {"h800": 0.3, "h20": 0.05}, "total_gpu_hours_per_mtok": 0.35, "usd_per_mtok": 0.7},
             {"design": "AFD 4A (h20) 1F (h800)", "tokens_per_s_per_gpu": 900.0,
              "gpu_hours_per_mtok": {"h20": 0.2, "h800": 0.1}, "total_gpu_hours_per_mtok": 0.3, "usd_per_mtok": 0.5}]
    flat = pools_rows(pools, ["h20", "h800"], priced=False)
    assert flat[0] == {"design": "EP on h20", "tokens/s per GPU": 500.0, "h20 GPU-h/Mtok": 0.5, "h800 GPU-h/Mtok": 0.0,
                       "GPU-h/Mtok": 0.5}
    assert pools_rows(pools, ["h20"], priced=True)[2]["USD/Mtok"] == 0.5
    assert heterogeneous_design(pools, "h20", "h800") == "AFD 4A (h20) 1F (h800)"
    assert heterogeneous_design(pools, "b200", "h800") == "none"
    # for the reader: the devices' names from their data, the slugs only as keys
    h20, h800 = (SimpleNamespace(slug=s, name=n) for s, n in (("h20", "NVIDIA H20"), ("h800", "NVIDIA H800 SXM")))
    named = pools_named(flat, [h20, h800])
    assert named[0] == {"design": "EP on NVIDIA H20", "tokens/s per GPU": 500.0, "GPU-h/Mtok on NVIDIA H20": 0.5,
                        "GPU-h/Mtok on NVIDIA H800 SXM": 0.0, "GPU-h/Mtok": 0.5}
    assert named[1]["design"] == "AFD 4A (NVIDIA H800 SXM) 1F (NVIDIA H20)"
    assert design_named("EP on h20x", [h20]) == "EP on h20x"        # another slug that starts alike stays


def test_overlap_readings():
    rate = {("NBO", "EP"): 1000.0, ("SBO", "EP"): 1100.0, ("NBO", "AFD"): 500.0, ("2BO", "AFD"): 800.0,
            ("3BO", "AFD"): 1000.0, ("4BO", "AFD"): 900.0}
    methods = [{"method": m, "design": d, "tokens_per_s_per_gpu": v} for (m, d), v in rate.items()]
    methods[2:2] = [{"method": "2BO", "design": "EP", "tokens_per_s_per_gpu": v} for v in (850.0, 1200.0)]
    o = overlap_readings(methods)
    assert (o.afd_3_over_2, o.afd_3_over_4) == pytest.approx((1.25, 1000 / 900))
    assert (o.ep_2bo_change, o.ep_2bo_gain) == pytest.approx((-0.15, 0.2))
    assert o.ep_best == "SBO"                          # the all-hidden 2BO row (1200) is a what-if, not counted
    assert o.ep_sbo_change == pytest.approx(0.1)       # 1100 / 1000 - 1
    assert o.ep_best_words() == "short of that what-if the fastest EP row is SBO"          # 1100 < 1200
    methods[3]["tokens_per_s_per_gpu"] = 1050.0                                            # what-if below SBO
    assert overlap_readings(methods).ep_best_words() == "the fastest EP row, that what-if included, is SBO"
    methods[3]["tokens_per_s_per_gpu"] = 1200.0
    methods[2]["tokens_per_s_per_gpu"] = 1150.0        # two micro-batches as scheduled beat SBO
    assert overlap_readings(methods).ep_best == "2BO" and overlap_readings(methods).ep_2bo_change == pytest.approx(0.15)


def test_afd_form_words_follow_the_ratios():
    from afdlib.studies.sweetspot_study import OverlapReadings
    from afdlib.studies.sweetspot_words import afd_form_words

    def words(r2, r4):
        return afd_form_words(OverlapReadings(r2, r4, 0.0, 0.0, "NBO", 0.0))
    assert words(1.05, 1.2) == "three micro-batches beat two (1.05x) and four (1.20x), as the paper's choice of 3BO implies"
    # the own-pair book's "three micro-batches beat two (0.98x)": two beat three there
    assert words(0.98, 1.2).startswith("two micro-batches beat three (3BO gives 0.98x 2BO's throughput)")
    assert words(0.98, 1.2).endswith("against the paper's choice of 3BO")
    assert words(1.1, 0.9).startswith("four micro-batches beat three (3BO gives 0.90x 4BO's")
    assert words(0.9, 0.95).startswith("three micro-batches give no more than two (0.90x) or four (0.95x)")


def test_top_form():
    rows = [{"ep_form": f, "ep_validated": v} for f, v in (("one batch", False), ("two", True), ("one batch", False),
                                                            ("two", True), ("one batch", False))]
    rows.append({"ep_form": "-"})                      # a pair without an EP deployment is not counted
    assert top_form(rows, "ep") == ("one batch", 3, False)
    assert top_form(rows[1:4], "ep") == ("two", 2, True)
    with pytest.raises(AfdError):
        top_form([{"ep_form": "-"}], "ep")


def test_duplex_gain_is_afd_at_one_and_a_half_times_its_network():
    ds, h800 = load_model("deepseek-v3", profile="reference"), load_hardware("h800", profile="datasheet")
    fast = replace(h800, scale_out_bytes_per_s=h800.scale_out_bytes_per_s * 1.5,
                   scale_up_bytes_per_s=h800.scale_up_bytes_per_s * 1.5)
    rate = [float(best_afd(ds, h, h, BUDGET, 4096).tokens_per_s_per_gpu) for h in (h800, fast)]
    gain = duplex_gain(ds, h800, BUDGET, 4096)
    assert gain == pytest.approx(rate[1] / rate[0] - 1) and 0 < gain < 0.5   # more network, never less throughput


def test_property_maps_on_a_small_grid():
    ds = load_model("deepseek-v3", profile="reference")
    h800, gb200 = (load_hardware(h, profile="datasheet") for h in ("h800", "gb200"))
    maps = property_maps(ds, h800, gb200, BUDGET, 4096, 2)
    # grids' ends: 80% of 12.5-800 GB/s (NIC) and 100-3600 GB/s (fabric), M 512-16384, E/K 4-128
    assert maps.m_ordinary.bandwidth == pytest.approx([10e9, 640e9])
    assert maps.sparsity_superpod.bandwidth == pytest.approx([80e9, 2880e9])
    # the family's members at the same total parameters: M 512 (E 1024, K 32) and 16384 (E 32, K 1);
    # E/K 4 (K 64) and 128 (K 2)
    assert list(maps.m_superpod.values) == pytest.approx([512, 16384])
    assert list(maps.sparsity_ordinary.values) == pytest.approx([4, 128])
    assert maps.on_bound().endswith("of 16")


def test_an_own_superpod_in_the_ordinary_slot_keeps_its_fabric():
    """An own-pair book for GB300 NVL72 puts it in the maps' first slot: its maps sweep the fabric range
    (80-2880 GB/s sustained, past its own 720), titled and captioned as a fabric, not "8-GPU nodes: the NIC"."""
    from afdlib.studies.sweetspot_study import maps_networks, network_title, network_words
    gb300, gb200, h800 = (load_hardware(h, profile="datasheet") for h in ("gb300", "gb200", "h800"))
    maps = property_maps(load_model("deepseek-v3", profile="reference"), gb300, gb200, BUDGET, 4096, 2)
    assert maps.m_ordinary.bandwidth == pytest.approx([80e9, 2880e9])
    assert list(maps.titled())[0] == f"{gb300.name}: fabric x M" and network_words(gb300) == f"{gb300.name}'s fabric"
    assert maps_networks(gb300) == "each Superpod: its whole fabric"
    assert maps_networks(h800) == f"{h800.name}'s 8-GPU nodes: the NIC; Superpod: the whole fabric"
    assert network_title(h800) == f"{h800.name}, 8-GPU nodes: scale-out"
    for rm in maps.titled().values():
        assert rm.ratio.shape == (2, 2)
        ok = rm.ep > 0
        assert np.allclose(rm.ratio[ok], rm.afd[ok] / rm.ep[ok])


def test_heterogeneous_prices_bound_the_price_ratio():
    h20, h800 = (load_hardware(h, profile="datasheet") for h in ("h20", "h800"))
    pools = [{"design": "EP on h20", "h20 GPU-h/Mtok": 0.5, "h800 GPU-h/Mtok": 0.0},
             {"design": "EP on h800", "h20 GPU-h/Mtok": 0.0, "h800 GPU-h/Mtok": 0.1},
             {"design": "AFD 4A (h20) 1F (h800)", "h20 GPU-h/Mtok": 0.2, "h800 GPU-h/Mtok": 0.05}]
    # cheaper than EP on h20 when 0.2 p + 0.05 < 0.5 p (p > 1/6); than EP on h800 when 0.2 p + 0.05 < 0.1 (p < 1/4)
    assert heterogeneous_prices(pools, "h20", "h800") == pytest.approx((1 / 6, 0.25))
    assert "between 0.17 and 0.25 times" in heterogeneous_price_reading(pools, h20, h800)
    pools[2]["h800 GPU-h/Mtok"] = 0.09                 # 0.2 p + 0.09 < 0.1: p < 0.05; 0.09 / 0.3 = 0.3 < p
    assert heterogeneous_prices(pools, "h20", "h800") == pytest.approx((0.3, 0.05))
    assert heterogeneous_price_reading(pools, h20, h800).endswith("at no price cheaper than both")
    pools[2]["h20 GPU-h/Mtok"] = 0.6                    # more attention GPU-hours than EP on h20: at no price (inf)
    assert heterogeneous_prices(pools, "h20", "h800")[0] == np.inf
    words = heterogeneous_price_reading(pools, h20, h800)
    assert "inf" not in words and f"never cheaper than EP on {h20.name}, at any price" in words
    assert np.isnan(heterogeneous_prices(pools[:2], "h20", "h800")[0])
    assert heterogeneous_price_reading(pools[:2], h20, h800).startswith("not comparable here")


def test_a_mixed_pool_that_needs_more_ffn_hours_than_ep_is_never_cheaper():
    h20, h800 = (load_hardware(h, profile="datasheet") for h in ("h20", "h800"))
    pools = [{"design": "EP on h20", "h20 GPU-h/Mtok": 0.5, "h800 GPU-h/Mtok": 0.0},
             {"design": "EP on h800", "h20 GPU-h/Mtok": 0.0, "h800 GPU-h/Mtok": 0.1},
             {"design": "AFD 4A (h20) 1F (h800)", "h20 GPU-h/Mtok": 0.2, "h800 GPU-h/Mtok": 0.12}]
    # 0.2 p + 0.12 < 0.1 has no positive p: never cheaper than EP on h800 (no "under 0 times")
    low, high = heterogeneous_prices(pools, "h20", "h800")
    assert high <= 0
    reading = heterogeneous_price_reading(pools, h20, h800)
    assert reading.startswith(f"never cheaper than EP on {h800.name}, at any price") and "under" not in reading


def test_verdict_table_writes_design_probability_and_undecided():
    from afdlib.studies.sweetspot_study import verdict_table
    # each cell: the design, AFD / EP, and the probability of the design it names (EP: 1 - P(AFD better))
    rows = [{"model": "a", "hardware": "x", "recommendation": "EP", "ratio": 0.71, "p_afd": 0.034, "decisive": True},
            {"model": "a", "hardware": "y", "recommendation": "AFD", "ratio": 1.043, "p_afd": 0.54, "decisive": False},
            {"model": "b", "hardware": "x", "recommendation": "-", "p_afd": float("nan"), "decisive": False}]
    t = verdict_table(rows, ["a", "b"], ["x", "y"])
    assert t.loc["a"].tolist() == ["EP 0.71 (0.97)", "AFD 1.04 (0.54?)"] and t.loc["b"].tolist() == ["-", "-"]


def test_verdict_table_labels_with_names_when_given_objects():
    from types import SimpleNamespace
    from afdlib.studies.sweetspot_study import verdict_table
    rows = [{"model": "a", "hardware": "x", "recommendation": "EP", "ratio": 0.9, "p_afd": 0.2, "decisive": False}]
    t = verdict_table(rows, [SimpleNamespace(slug="a", name="Model A")], [SimpleNamespace(slug="x", name="GPU X")])
    assert t.loc["Model A", "GPU X"] == "EP 0.90 (0.80?)"


def test_twins_are_named_by_the_rows_names():
    rows = [{**r, "hardware_name": r["hardware"].upper() + " GPU"} for r in ROWS]
    assert twins(rows) == [("X GPU", "Z GPU")]


def test_threshold_words_name_each_devices_node_and_crossings(h800):
    from dataclasses import replace

    from afdlib.studies.threshold_study import ThresholdCurve, threshold_words
    four = replace(h800, slug="lab", name="Lab", gpus_per_node=4)
    bw = np.array([10e9, 20e9, 40e9])
    curves = [ThresholdCurve("NVIDIA H800 SXM", "h800", bw, np.array([0.9, 1.1, 0.9]), 40e9, 0.9, np.array([15e9, 30e9])),
              ThresholdCurve("Lab", "lab", bw, np.full(3, 0.9), 40e9, 0.9, np.array([]))]
    words = threshold_words(curves, [h800, four], "h800")
    assert words["curve_devices"] == "2 devices (NVIDIA H800 SXM: 8 GPUs per node, Lab: 4 GPUs per node)"
    assert words["crossings"] == "NVIDIA H800 SXM: 15, 30 GB/s; Lab: never"
    assert words["cross_note"].startswith("on that grid the ratio crosses 1 twice")
    assert threshold_words(curves, [four], "lab")["cross_note"] == "its curve stays on one side of 1"   # not the break-even line again


def test_sweet_spot_words_for_every_outcome():
    from afdlib.report.own_book import PAPER_HARDWARE, PAPER_MODELS, grid_words
    from afdlib.studies.sweetspot_words import break_even_words, equal_share_words
    assert equal_share_words(0.8, 0.9) == "EP ahead, as the paper says, when both designs hide the same share"
    assert equal_share_words(1.1, 1.2).startswith("AFD ahead, against the paper")
    assert equal_share_words(0.9, 1.1) == "EP ahead with all hidden and AFD with half: the lead turns with the share both hide"
    # a Superpod: the paper's reading there is AFD competitive, so EP ahead is not "as the paper says"
    assert "as the paper says" not in equal_share_words(0.8, 0.9, superpod=True)
    assert equal_share_words(0.8, 0.9, superpod=True).startswith("EP ahead when both designs hide the same share, short of")
    assert "nearest today's fabric" in break_even_words(47e9, "below", 40e9, "fabric")
    # the own-pair book's "crossing 1 ... at about none in range GB/s": no number where there is none
    none = break_even_words(None, "never", 40e9)
    assert "no bandwidth at which the ratio crosses 1" in none and "none" not in none and "now 40 GB/s" in none
    assert "at about 47 GB/s per GPU (the ratio above 1 just below it" in break_even_words(47e9, "below", 40e9)
    assert grid_words(PAPER_MODELS, PAPER_HARDWARE) == "the paper's six models on its eight GPUs"
    assert grid_words(["deepseek-v3"], ["h800", "gb200"]) == "1 model on 2 devices"
    from afdlib.studies.sweetspot_words import decided_words
    assert [decided_words(n) for n in (0, 1, 3)] == ["none is decided", "1 is decided", "3 are decided"]


def test_table_2s_afd_reading_says_where_a_split_attention_pool_beats_every_row():
    """minimax-m2.5 on a 4-GPU lab node: Table 2's best AFD row 3BO at 2,609 tokens/s, the pair's best AFD
    28A3F with 2 attention domains x 2 micro-batches at 2,737: the reading says the rows keep one domain."""
    from afdlib.studies.sweetspot_words import one_domain_note
    methods = [{"design": "AFD", "method": m, "tokens_per_s_per_gpu": t} for m, t in (("2BO", 2580.0), ("3BO", 2609.0))]
    row = {"model": "m", "hardware": "h", "afd_form": "AFD, 2 attention domains x 2 micro-batches", "afd_config": "28A3F",
           "afd": 2737.0}
    note = one_domain_note([row], "m", "h", methods)
    assert "one domain" in note and "28A3F" in note and "1.05x the best row here" in note     # 2737 / 2609
    assert one_domain_note([{**row, "afd_form": "AFD, 3 micro-batches"}], "m", "h", methods) == ""
    assert one_domain_note([{**row, "afd": 2600.0}], "m", "h", methods) == ""


def test_duplex_words_say_whom_the_shared_lane_favours():
    from afdlib.studies.sweetspot_words import duplex_words
    assert duplex_words(0.04) == "gains 4%: the shared lane favours EP"
    assert duplex_words(0.001).startswith("gains nothing measurable")
    assert duplex_words(-0.02) == "gains nothing (its best changes by -2%): the shared lane does not bind here"
