"""What the pipeline chapter quotes (afdlib.simulation.readings): closed forms, numbers derived by
hand, and small synthetic studies whose answer is known."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from afdlib.decode.deployment import AFDDeployment
from afdlib.errors import AfdError
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget
from afdlib.simulation import readings as r


def test_bubble_shares_are_figure_1b():
    """Equal stages: with two micro-batches a layer's cycle is t_a + t_f + t_c = 3 while attention
    works 2, so it idles a third of the time (plus a little fill and drain); with three, only the
    fill and drain."""
    got = r.bubble_shares()
    assert 33.3 <= float(got["bubble_2"].rstrip("%")) < 34.0
    assert float(got["bubble_3"].rstrip("%")) < 1.0


def test_mva_readings_by_hand():
    # m / (m + 2): 2/4, 3/5, 4/6; loss against min(1, m/3): 1 - 0.5 / (2/3) = 25%, 1 - 0.6 = 40%, 1 - 2/3 = 33%
    assert r.mva_readings() == {"mva_2": "0.50", "mva_loss_2": "25%", "mva_3": "0.60", "mva_loss_3": "40%",
                                "mva_4": "0.67", "mva_loss_4": "33%"}


def _ideal(cvs=(0.0, 0.05, 0.2)):
    rows = []
    for m in (2, 3, 4):
        for cv in cvs:
            rows.append({"micro_batches": m, "cv": cv, "throughput_loss": 0.01 * m + cv / 10,
                         "throughput": min(1, m / 3) * (1 - cv / 10)})
    return pd.DataFrame(rows)


def test_ideal_readings_pick_the_quoted_cvs():
    got = r.ideal_readings(_ideal())
    assert got["ideal_loss_3"] == "5.0%"             # 0.03 + 0.2 / 10
    assert got["ideal_thr_2"] == "0.65"              # 2/3 x 0.98 = 0.6533
    assert got["ideal_thr_3_const"] == "1.00"
    assert got["ideal_small_cv"] == "0.05" and got["ideal_loss_3_005"] == "3.5%"   # 0.03 + 0.005
    with pytest.raises(AfdError, match="the study has no CV 0.2"):
        r.ideal_readings(_ideal((0.0, 0.1)))


def test_layer_sample_spreads_over_the_moe_layers():
    counts = np.zeros((10, 4))
    counts[3:] = np.arange(3, 10)[:, None]          # layers 0-2 dense (no routed tokens)
    sample = r.layer_sample(counts, 3)
    assert list(sample[:, 0]) == [3, 6, 9]           # first, middle and last MoE layer


def _study(slo_tokens: dict, cvs=(0.0, 0.1, 0.2)):
    """A synthetic study: AFD with 2, 3, 4 micro-batches (tokens/s per GPU within the SLO per
    (m, cv) from ``slo_tokens``), EP with one and two batches."""
    rows = []
    for cv in cvs:
        for m in (2, 3, 4):
            rows.append({"design": "afd", "micro_batches": m, "cv": cv, "throughput_loss": cv * m / 10,
                         "tokens_per_s_per_gpu_slo": slo_tokens[(m, cv)], "batch_slo": 100 + m, "tpot_ms": 40 + cv * 10,
                         "straggler_cv": 0.02 + m / 1000, "requests": 210, "t_attn_us": 230.0, "t_ffn_us": 200.0,
                         "t_comm_us": 200.0})
        for m in (1, 2):
            rows.append({"design": "ep", "micro_batches": m, "cv": cv, "throughput_loss": cv / 100 * (m - 1) - 1e-4,
                         "tokens_per_s_per_gpu_slo": 1.0, "batch_slo": 1, "tpot_ms": 1.0, "straggler_cv": 0.03,
                         "t_attn_us": 230.0, "t_ffn_us": 200.0, "t_comm_us": 200.0 + 300.0 * (m == 1)})
    return pd.DataFrame(rows)


SAME = {"same_shape_3": "40.0", "same_shape_4": "44.0"}


def test_deployment_readings_find_where_3bo_stops_being_best():
    # 3BO best at CV 0 and 0.1; at 0.2 4BO leads by 1%: a tie within the noise
    tokens = {(2, 0.0): 2000, (3, 0.0): 2800, (4, 0.0): 2200, (2, 0.1): 1900, (3, 0.1): 2700, (4, 0.1): 2100,
              (2, 0.2): 1800, (3, 0.2): 2000, (4, 0.2): 2020}
    got = r.deployment_readings(_study(tokens))
    head = r.deployment_headlines(_study(tokens), SAME)
    assert head["dep_choice"] == ("it is the best AFD choice up to CV 0.1; at CV 0.2 the best 4-micro-batch deployment "
                                  "is 1.0% ahead, a tie within the simulation's noise")
    # the synthetic losses grow with m (cv m / 10): 4BO loses most, not 3BO, and absorbs no better; it
    # starts 1 - 2200 / 2800 = 21% behind, and the extra micro-batch costs (44 > 40 ms)
    assert head["dep_fragile"] == "4BO is the most fragile here (CV 0.2), not 3BO as the paper says."
    assert head["dep_fragile_why"] == ""
    assert head["dep_4"].startswith("4BO absorbs jitter no better and starts 21% behind without any: each extra")
    # moderate jitter: 3BO leads at 0.1 (2700), 4BO at 0.2 (2020)
    assert head["dep_most"] == "The most AFD throughput at moderate jitter comes from 3BO at CV 0.1 and 4BO at CV 0.2."
    assert head["dep_batch_3"] == "batch 103 at every CV"
    # EP's largest loss 0.2% is below every AFD loss at CV 0.2; its two-batch comm (t_comm 200 us) sits
    # below its compute (230 + 200 us)
    assert head["ep_robust"] == "EP is robust in relative terms."
    assert head["ep_slack"].startswith("With two micro-batches the network stage has slack")
    assert got["dep_last"] == "the best 2BO deployment comes last at every CV"
    tokens[(4, 0.2)], tokens[(2, 0.2)] = 1700, 1800
    assert r.deployment_readings(_study(tokens))["dep_last"] == "the last at each CV: 2BO at 0, 2BO at 0.1, 4BO at 0.2"
    assert got["dep_slo_3_01"] == "2,700" and got["dep_loss_4_02"] == "8.0%"   # 0.2 x 4 / 10
    assert "dep_loss_3_03" not in got                        # no CV 0.3 in the study
    assert got["straggler_cv"] == "2.2%-3.0%" and got["ep_loss_1"] == "0.01%"   # 0.02 + 2 / 1000 to 0.03; abs(-1e-4)
    assert got["ep_loss_max"] == "0.2%"                      # 0.2 / 100 - 1e-4
    assert got["ep_loss_words"] == "EP's deployments, with one micro-batch and with two, lose at most 0.2% over the same range"
    one = _study(tokens)
    one = one[(one.design == "afd") | (one.micro_batches == 1)].assign(throughput_loss=lambda t: t.throughput_loss * 0)
    assert r.ep_loss_words(one[one.design == "ep"]) == ("EP's best deployment, one micro-batch with nothing overlapped "
                                                        "to break, loses nothing measurable over the same range (under 0.05%)")


def test_deployment_headlines_when_3bo_wins_everywhere_or_nowhere():
    best3 = {(m, cv): 3000 if m == 3 else 2000 for m in (2, 3, 4) for cv in (0.0, 0.1, 0.2)}
    head = r.deployment_headlines(_study(best3), SAME)
    assert head["dep_choice"] == "it is the best AFD choice up to CV 0.2 on the whole grid"
    assert head["dep_most"] == "3BO still delivers the most AFD throughput at every CV studied."   # 0, 0.1 and 0.2
    # 4BO starts 1 - 2000 / 3000 = 33% behind
    assert "starts 33% behind" in head["dep_4"]
    never = {(m, cv): 3000 if m == 2 else 2000 for m in (2, 3, 4) for cv in (0.0, 0.1, 0.2)}
    head = r.deployment_headlines(_study(never), SAME)
    # never "the best AFD choice up to CV 0": 3BO is not the best at any CV
    assert head["dep_choice"] == ("it is not the best AFD choice at any CV studied (the best 2BO deployment leads "
                                  "without jitter)")
    assert head["dep_most"] == "2BO, not 3BO, delivers the most AFD throughput at every CV studied."
    # 3BO best at CV 0 only (3000 against 2000), 2BO ahead from CV 0.1: "only without jitter", not "up to CV 0"
    at0 = {(m, cv): (3000 if m == 3 else 2000) if cv == 0 else (3000 if m == 2 else 2000)
           for m in (2, 3, 4) for cv in (0.0, 0.1, 0.2)}
    assert r.deployment_headlines(_study(at0), SAME)["dep_choice"].startswith(
        "it is the best AFD choice only without jitter (CV 0); at CV 0.1 the best 2-micro-batch deployment is 50.0% ahead")
    # 4BO level with 3BO at CV 0 (2000 each): not behind, so no cost explanation
    assert head["dep_4"] == "4BO absorbs jitter no better but starts 0% ahead without any"


def test_deployment_headlines_in_the_paper_s_outcome():
    """3BO loses most and EP loses more than AFD: the paper's wording with its reason, and EP not robust."""
    tokens = {(m, cv): 3000 if m == 3 else 2000 for m in (2, 3, 4) for cv in (0.0, 0.1, 0.2)}
    study = _study(tokens)
    study.loc[(study.design == "afd") & (study.micro_batches == 3), "throughput_loss"] *= 3
    study.loc[study.design == "ep", "throughput_loss"] = 0.5
    head = r.deployment_headlines(study, SAME)
    assert head["dep_fragile"] == "3BO is the most fragile, as the paper says (CV 0.2)."
    assert "nothing is spare" in head["dep_fragile_why"]
    assert head["ep_robust"] == "EP is not more robust than AFD here in relative terms."
    # two-batch EP whose all-to-all outlasts its compute: the network sets the pace
    study.loc[(study.design == "ep") & (study.micro_batches == 2), "t_comm_us"] = 500.0
    assert "sets the pace" in r.deployment_headlines(study, SAME)["ep_slack"]


def test_context_and_kernel_readings_at_the_3bo_deployment():
    model = load_model("deepseek-v3", profile="reference")
    study = _study({(m, cv): 1.0 for m in (2, 3, 4) for cv in (0.0, 0.1, 0.2)})
    ctx = r.context_readings(model, study, steps=50, seed=0)
    assert ctx["ctx_requests"] == 70                          # 210 requests in three micro-batches
    assert ctx["ctx_attn_cv"] == f"{1 / np.sqrt(70):.2f}"     # CV 1 per request over 70 requests
    assert 0 <= float(ctx["ctx_loss"].rstrip("%")) < 5
    five_three = AFDDeployment.of(load_hardware("h800"), 5, 3, micro_batches=3, requests=210)
    k = r.kernel_readings(model, study, [five_three], 3.0)
    # DeepSeek-V3: 61 layers x 11 kernels x 3 us = 2.013 ms, 13% of 15 ms; at 10 us 6.71 ms, 45%
    assert (k["k_attn"], k["n_all_layers"]) == (11, 61)
    assert (k["kernel_fit_us"], k["extra_kernels_fit"], k["extra_kernels_fit_share"]) == ("3", "2.0", "13%")
    assert (k["kernel_what_if_us"], k["extra_kernels_what_if"], k["extra_kernels_what_if_share"]) == ("10", "6.7", "45%")
    # a fixed cost of 2.52 us (the calibrated profile's before its refit on aiconfigurator's kernel tables;
    # 5.1 us since): 61 x 11 x 2.52 = 1.69 ms, 11% of 15 ms
    k = r.kernel_readings(model, study, [five_three], 2.52)
    assert (k["kernel_fit_us"], k["extra_kernels_fit"], k["extra_kernels_fit_share"]) == ("2.5", "1.7", "11%")
    # MegaScale-Infer: 2 (1 + 100 / 200) = 3 with t_c each way, 2 (1 + 200 / 200) = 4 one lane
    assert (k["ms_rule"], k["ms_rule_one_lane"], k["cfg3"]) == ("3.0", "4.0", "5A3F")
    with pytest.raises(AfdError, match="no AFD deployment with 3 micro-batches"):
        r.kernel_readings(model, study, [replace(five_three, micro_batches=2)], 3.0)


def test_an_extra_micro_batch_costs_time_at_the_same_shape():
    model, hw = load_model("deepseek-v3", profile="reference"), load_hardware("h800", profile="datasheet")
    budget = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=0.003)
    got = r.same_shape_tpot(model, budget, 4096, [AFDDeployment.of(hw, 5, 3, micro_batches=3, requests=211)])
    assert float(got["same_shape_4"]) > float(got["same_shape_3"]) > 3.0   # above the fixed gap alone


def test_deployment_table_rows():
    study = pd.DataFrame([
        {"design": "afd", "micro_batches": 3, "cv": 0.2, "n_attn": 5, "n_ffn": 3, "ep_size": None, "kernels": None,
         "t_attn_us": 228.8, "t_ffn_us": 229.2, "t_comm_us": 212.8, "requests": 211, "tpot_ms": 50.9,
         "tpot_const_ms": 47.48, "p99_tpot_ms": 51.86, "throughput_loss": 0.0672, "bubble_attn": 0.09,
         "bubble_ffn": 0.088, "batch_slo": 199, "tokens_per_s_per_gpu_slo": 2496.6},
        {"design": "ep", "micro_batches": 2, "cv": 0.0, "n_attn": None, "n_ffn": None, "ep_size": 32,
         "kernels": "low-latency", "t_attn_us": 100, "t_ffn_us": 90, "t_comm_us": 50, "requests": 64, "tpot_ms": 30,
         "tpot_const_ms": 30, "p99_tpot_ms": 31, "throughput_loss": 0.0, "bubble_attn": 0.1, "bubble_ffn": 0.1,
         "batch_slo": 80, "tokens_per_s_per_gpu_slo": 1000.0}])
    t = r.deployment_table(study)
    assert list(t.deployment) == ["AFD 5A3F, 3 µb, batch 211", "EP32 (low-latency), 2 µb, batch 64"]
    assert list(t.iloc[0])[1:] == ["0.2", "229/229/213", "50.9 (47.5), 51.9", "6.7%", "9%/9%", "199, 2,497"]
    assert t.iloc[1]["bubbles attn/FFN"] == "10% (GPU)"
    # a loss that rounds to zero prints without a sign
    assert r.deployment_table(study.assign(throughput_loss=[-0.0001, 0.0])).loss.tolist() == ["0.0%", "0.0%"]


def test_bubble_timelines_figure_has_a_panel_per_micro_batch_count():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from afdlib.report.figures import bubble_timelines_figure
    fig = bubble_timelines_figure((2, 3, 4))
    try:
        assert [ax.get_title() for ax in fig.axes] == [f"{m} micro-batches ({m}BO)" for m in (2, 3, 4)]
    finally:
        plt.close(fig)


def test_ep_model_readings_compare_the_simulator_with_the_decode_model():
    from afdlib.decode.deployment import EPDeployment, decode_step
    model, hw = load_model("deepseek-v3", profile="reference"), load_hardware("h800", profile="datasheet")
    budget = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=0.003)
    deps = [EPDeployment(hw, 32, micro_batches=1, kernels="normal", requests=130.0),
            EPDeployment(hw, 64, micro_batches=2, requests=140.0)]
    steps = [decode_step(model, d, 4096, budget) for d in deps]
    study = pd.DataFrame([{"design": "ep", "micro_batches": d.micro_batches, "cv": 0.0,
                           "tpot_const_ms": float(st.tpot_s) * 1e3 * f} for d, st, f in zip(deps, steps, (1.0, 1.02))])
    got = r.ep_model_readings(model, budget, 4096, study, deps)
    assert got["ep_sim_gap"] == "2.0%"
    assert got["ep_hidden_2"] == f"{float(steps[1].hidden_share):.0%}"
    with pytest.raises(AfdError, match="no EP deployment with 2 micro-batches"):
        r.ep_model_readings(model, budget, 4096, study, deps[:1])


def test_validation_ep_readings_count_the_over_predicted_cases():
    from afdlib.decode.validation import validation_rows

    got = r.validation_ep_readings()
    ep = [c for c in validation_rows() if c["design"] == "ep"]
    assert got["val_ep_n"] == len(ep) and got["val_ep_over"] == sum(c["predicted"] > c["published"] for c in ep)


def test_ideal_readings_word_where_the_loss_peaks():
    # _ideal's loss 0.01 m + cv / 10 grows with m: largest at 4, not 3; its throughput min(1, m / 3)
    # (1 - cv / 10) is 2/3, 1, 1 at CV 0.2 x 0.98: not increasing from 3 to 4, so 3BO delivers the most
    got = r.ideal_readings(_ideal())
    assert got["ideal_peak"] == "the relative loss is largest at 4 micro-batches, not three as the paper says"
    assert got["ideal_more"] == "in absolute terms 3BO delivers the most"
    assert got["ideal_order"].startswith("another ordering (the relative loss is largest at 4")
    peaked = _ideal()
    peaked.loc[peaked.micro_batches == 3, "throughput_loss"] += 0.1
    peaked.loc[peaked.micro_batches == 4, "throughput"] *= 1.1
    got = r.ideal_readings(peaked)
    assert got["ideal_peak"] == "the relative loss peaks at three micro-batches, as the paper says"
    assert got["ideal_more"] == "in absolute terms more micro-batches still deliver more"
    assert got["ideal_order"] == "the same ordering"


def test_the_slo_edge_is_measured_not_said_slightly():
    import pandas as pd
    study = pd.DataFrame([{"design": "ep", "cv": 0.0, "tpot_ms": 54.8, "ep_size": 64, "n_attn": None, "n_ffn": None,
                           "micro_batches": 2},
                          {"design": "afd", "cv": 0.0, "tpot_ms": 49.95, "ep_size": None, "n_attn": 6, "n_ffn": 3,
                           "micro_batches": 2},
                          {"design": "ep", "cv": 0.1, "tpot_ms": 60.0, "ep_size": 64, "n_attn": None, "n_ffn": None,
                           "micro_batches": 2}])
    assert r.slo_edge_words(study, 50.0) == "here by up to 9.6% (EP64)"          # 54.8 / 50 - 1; CV 0 only
    assert r.slo_edge_words(study[study.design == "afd"], 50.0) == "none of these deployments does"
