"""What the validation chapter quotes (afdlib.studies.validation_readings), on small tables whose
answers are derived by hand."""
import pandas as pd

from afdlib.studies import validation_readings as r


def _table():
    # two EP cases with published batches, one AFD case; EP case b's all-to-all (300 us) is longer
    # than its compute (100 + 100 us): 50% longer; every prediction (published x (1 + error)) inside
    # its band
    return pd.DataFrame([
        {"case": "a", "label": "A, H800 EP8", "design": "ep", "batch_from": "published", "published": 100.0,
         "error": 0.10, "predicted": 110.0, "hidden_share": 0.5, "band_low": 80.0, "band_high": 120.0,
         "t_attn_us": 100.0, "t_ffn_us": 100.0, "t_comm_us": 150.0, "micro_batches": 2},
        {"case": "b", "label": "B, GB200 EP48", "design": "ep", "batch_from": "derived", "published": 200.0,
         "error": -0.30, "predicted": 140.0, "hidden_share": 0.9, "band_low": 130.0, "band_high": 190.0,
         "t_attn_us": 100.0, "t_ffn_us": 100.0, "t_comm_us": 300.0, "micro_batches": 2},
        {"case": "c", "label": "C, H800 2A2F", "design": "afd", "batch_from": "published", "published": 50.0,
         "error": 0.05, "predicted": 52.5, "hidden_share": 1.0, "band_low": 40.0, "band_high": 55.0,
         "t_attn_us": 1.0, "t_ffn_us": 1.0, "t_comm_us": 1.0, "micro_batches": 3}])


def test_summary_readings_by_hand():
    t = _table()
    before = t.assign(error=[0.2, -0.1, 0.4])
    got = r.summary_readings(t, before)
    # |errors| 0.10, 0.30, 0.05: median 10.0%, largest 30.0%; two within 20%
    assert (got["median_error"], got["max_error"], got["n_within_20"]) == ("10.0%", "30.0%", 2)
    assert got["errors_datasheet"] == "median 20.0%, largest 40.0%"
    assert (got["n_ep_published"], got["n_afd_cases"], got["ep_hidden"]) == (2, 1, "50%-90%")
    # b's published 200 lies above its band (150-190): the band does not hold
    assert got["band_holds"] == "does not hold"
    assert (got["n_comm_bound"], got["comm_bound_where"], got["comm_margin"]) == ("1 of the 2", "GB200", "50%")
    # band relative to published: a 80/100 - 1 = -20%, b 190/200 - 1 = -5%, a 120/100 - 1 = +20%
    assert got["band_width"] == "from -35% to +20%"    # b's 130/200 - 1 = -35% is the lowest
    # the AFD case's band: 40/50 - 1 = -20%, 55/50 - 1 = +10%; every prediction inside its band
    assert got["afd_band"] == "C, H800 2A2F: -20% to +10%" and got["prediction_in_band"] == "lies inside"
    assert got["afd_published_where"] == "inside"    # 40 <= 50 <= 55
    assert r.summary_readings(t.assign(band_high=[120.0, 190.0, 49.0], predicted=[110.0, 140.0, 45.0]),
                              before)["afd_published_where"] == "above"
    assert r.summary_readings(t.assign(band_high=[120.0, 190.0, 52.0]), before)["prediction_in_band"] == \
        "does not always lie inside"    # C's 52.5 above its 52


def test_batch_match_interpolates_the_curve():
    # a throughput curve through (16, 1000) and (32, 2000) reaches 1500 at 24 requests
    assert r.batch_match([1000.0, 2000.0], [16, 32], 1500.0) == "24"


def test_summary_readings_lean_by_hand():
    got = r.summary_readings(_table(), _table())
    # EP errors +10% (over) and -30%; the AFD case +5%; none beyond 20% but b (-30%)
    assert (got["n_ep"], got["n_ep_over"], got["ep_over_range"], got["ep_under"]) == (2, 1, "+10%", "-30.0%")
    assert (got["afd_errors"], got["n_beyond_20"], got["beyond_20"]) == ("+5.0%", 1, "B, GB200 EP48 (-30.0%)")


def test_signed_drops_the_minus_of_zero():
    assert (r.signed(-0.004), r.signed(-0.006), r.signed(0.0)) == ("+0%", "-1%", "+0%")


def test_lever_spans_by_hand():
    t = _table()
    rows = []
    for case, errs in (("a", (-0.2, 0.4, 0.0, 0.1, 0.2, 0.0)), ("b", (0.0, 0.1, -0.5, 0.3, -0.1, 0.0))):
        for (lo, hi), (e_lo, e_hi) in zip(r.LEVERS.values(), zip(errs[0::2], errs[1::2])):
            rows += [{"case": case, "variation": lo, "error": e_lo}, {"case": case, "variation": hi, "error": e_hi}]
    got = r.lever_spans(t, pd.DataFrame(rows))
    # a (H800, over the NIC): overlap -20% -> +40% = 60 points, kernel 0 -> +10% = 10, gap +20% -> 0 = 20
    # b (GB200, NVLink): overlap 10, kernel 80, gap 10
    assert (got["span_overlap_nic"], got["span_kernel_nic"], got["span_gap_nic"]) == ("60-60", "10-10", "20-20")
    assert (got["span_overlap_nvl"], got["span_kernel_nvl"], got["span_gap_nvl"]) == ("10-10", "80-80", "10-10")
    assert got["gap15_nic"] == "+0%"


def test_ep_lean_is_stated_as_computed():
    t = _table()
    # one EP case over, one under: no lean
    assert r.summary_readings(t, t)["ep_lean"].startswith("do not lean one way")
    # both over: one way; two over, one under: over more often
    both = t.assign(error=[0.1, 0.2, 0.0])
    assert r.summary_readings(both, both)["ep_lean"].startswith("lean one way")
    three = pd.concat([t, t.iloc[[0]].assign(case="d")]).assign(error=[0.1, -0.3, 0.0, 0.2])
    assert r.summary_readings(three, three)["ep_lean"].startswith("lean over more often than under")


def test_nic_compute_readings_by_hand():
    # only A crosses the NIC (B is GB200): 150 / (100 + 100) = 0.75
    assert r.nic_compute_readings(_table()) == {"nic_comm_ratio": "A, H800 EP8: 0.75 times"}
    # a one-batch case over the NIC (single-batch overlap) is read apart from the two-batch ones
    one = pd.concat([_table(), _table().iloc[[0]].assign(case="d", label="D, H20 EP16", micro_batches=1)])
    assert r.nic_compute_readings(one) == {"nic_comm_ratio": "A, H800 EP8: 0.75 times"}


def test_blackwell_readings_by_hand():
    from afdlib.evaluator.kernels import curves
    t = pd.DataFrame([{"case": r.JUNE, "error": -0.1, "t_attn_us": 200.0},
                      {"case": r.SEPT, "error": -0.3, "t_attn_us": 250.0}])
    sens = pd.DataFrame([{"case": c, "variation": v, "error": e} for c, v, e in (
        (r.SEPT, "no kernel overhead", 0.05), (r.SEPT, r.OVERLAP_NONE, -0.35),
        (r.JUNE, r.OVERLAP_ALL, -0.09))])
    got = r.blackwell_readings(t, sens, t.assign(error=[0.3, -0.05]))
    # September's attention 250 us against June's 200: +25%
    assert (got["sept_attn_ratio"], got["sept_datasheet"], got["june_datasheet"]) == ("+25%", "-5.0%", "+30.0%")
    assert (got["sept_nokernel"], got["sept_none"], got["june_all"]) == ("+5%", "-35%", "-9%")
    assert got["bw_fractions"].startswith(f"GEMMs at {curves('gb200').gemm_f_hbm:.2f} of peak HBM bandwidth")


def test_step3_leave_one_out_gap_is_the_sensitivity_row():
    """The 3 ms gap was chosen with Step-3 in view: its leave-one-out error is its row 't_g 0 ms' of
    the sensitivity table, and without a gap the step is shorter, so the prediction is higher."""
    import pandas as pd
    from afdlib.decode.step import DECODE_T_GAP_S
    from afdlib.decode.validation import load_deployments, sensitivity_rows, validation_rows
    from afdlib.studies.validation_readings import STEP3, sensitivity_readings
    cases = load_deployments()
    table = pd.DataFrame(validation_rows(cases))
    sens = pd.DataFrame(sensitivity_rows(cases))
    got = sensitivity_readings(table, sens, cases, 0.9, DECODE_T_GAP_S * 1e3)
    row = sens[(sens.case == STEP3) & (sens.variation == "t_g 0 ms")].iloc[0]
    assert got["step3_tg0"] == f"{row.error:+.1%}"
    assert row.predicted > float(table.set_index("case").predicted[STEP3])


def test_tell_apart_by_hand():
    # -35% is beyond 20%, -8% and -1% within
    assert r.tell_apart({"none": -0.35, "copies": -0.08, "all": -0.01}) == \
        "none lies beyond 20% of the published figure; it cannot tell the other readings apart"
    assert r.tell_apart({"a": 0.1, "b": -0.2}).startswith("all of these readings lie within 20%")
    assert r.tell_apart({"a": 0.3, "b": -0.25}) == "all of these readings lie beyond 20% of the published figure"
