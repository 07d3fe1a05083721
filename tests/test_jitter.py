"""Communication jitter as an uncertain assumption of the verdict (afdlib.decision.jitter)."""
import numpy as np
import pytest

from afdlib.decision.jitter import call_cvs, cv_high, losses, term, with_jitter
from afdlib.decision.uncertainty import Verdict
from afdlib.decode.deployment import AFDDeployment, EPDeployment
from afdlib.inputs.specs import Budget, Precision
from afdlib.decode.step import Assumptions

BUDGET = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=0.003)


def test_call_cvs_by_hand():
    # xDeepServe per call: dispatch mean 234 us, min 185; combine mean 312, min 165 (data/jitter.yaml):
    # an exponential tail above the floor has sd = mean - min: 49 / 234 = 0.209, 147 / 312 = 0.471
    assert call_cvs() == pytest.approx({"dispatch": 49 / 234, "combine": 147 / 312})
    assert cv_high() == pytest.approx(147 / 312)


def test_a_pipeline_loses_to_jitter_a_serial_step_barely(ds, h800):
    # mean-one factors on a serial chain leave the mean step as it is (only the overlap's max loses);
    # AFD's three-stage pipeline waits on the slowest transfer of each turn where the transfer sets the
    # pace (6A3F at 186 per attention GPU, DeepSeek-V3's best on H800: t_c near t_f): it loses more as
    # the CV grows (a pool with slack, 4A2F at 128, loses nothing: the transfer never sets the pace there)
    ep = EPDeployment(h800, 64, 0, 1, "low-latency", 64)
    afd = AFDDeployment.of(h800, 6, 3, micro_batches=3, requests=186)
    # at 0.2 and 0.8 of the published per-call CVs
    lep = losses(ds, ep, 4096, BUDGET, Precision(), Assumptions(), [0.2, 0.8])
    lafd = losses(ds, afd, 4096, BUDGET, Precision(), Assumptions(), [0.2, 0.8])
    assert np.all(np.abs(lep) < 0.005) and lafd[0] < lafd[1] and 0.01 < lafd[1] < 0.2
    slack = losses(ds, AFDDeployment.of(h800, 4, 2, micro_batches=3, requests=128), 4096, BUDGET, Precision(),
                   Assumptions(), [0.8])
    assert abs(slack[0]) < 1e-3
    shift, var, row = term(ds, ep, afd, 4096, BUDGET, Precision(), Assumptions(), 1.0)
    factor = (1 - lafd) / (1 - lep)
    # the first-order rule on the uniform share's two Legendre nodes (0.21 and 0.79, the row's own)
    assert shift < 0 and var > 0 and row["high"] < row["low"] <= 1.0 and row["assumption"] == "communication jitter"
    assert factor[1] < factor[0] < 1 and row["losses"]["share"] == pytest.approx([0.5 - 0.5 / 3 ** 0.5, 0.5 + 0.5 / 3 ** 0.5])


def test_with_jitter_moves_the_mixture(ds, h800):
    log_r, w, sd = np.log([1.2, 0.9]), np.array([0.5, 0.5]), np.array([0.1, 0.1])
    v = Verdict.of(log_r, w, sd)
    assert with_jitter(v, ds, None, 4096, BUDGET, Precision(), Assumptions()) is v     # one design infeasible
    down = v.with_term(-0.2, 0.0)
    # every setting's log ratio 0.2 lower: P(AFD better) falls, and the median by a factor exp(-0.2)
    assert down.p_afd < v.p_afd and down.ratio_median == pytest.approx(v.ratio_median * np.exp(-0.2), rel=1e-3)
    assert v.with_term(0.0, 0.0).p_afd == pytest.approx(v.p_afd)


def test_a_cv_per_setting_is_each_cv_alone():
    # the simulator takes one CV per setting: the same losses as one CV at a time, up to the draws
    # (the settings share one random stream, so not bit for bit), and no jitter at a zero CV
    from afdlib.simulation.pipeline import Jitter, simulate
    both = simulate("afd", 1.0, 1.0, 1.0, 3, 20, 3000, Jitter(cv_comm=np.array([0.0, 0.3])), 0, np.zeros(2))
    alone = simulate("afd", 1.0, 1.0, 1.0, 3, 20, 3000, Jitter(cv_comm=0.3), 0)
    assert both.throughput_loss[0] == 0.0
    assert both.throughput_loss[1] == pytest.approx(float(alone.throughput_loss), abs=0.01)


def test_named_stage_times_are_the_three_times_where_they_say_the_same():
    # EP's route with dispatch and combine at half the all-to-all each: the default reading of the three
    # times, so the same seeded simulation; at another split the mean step moves, the constant one not
    from afdlib.simulation.pipeline import Jitter, simulate
    j = Jitter(cv_comm=0.3)
    plain = simulate("ep", 2.0, 1.0, 1.0, 2, 10, 500, j, 0)
    named = simulate("ep", 2.0, 1.0, 1.0, 2, 10, 500, j, 0,
                     stage_times={"attention": 2.0, "dispatch": 0.5, "ffn": 1.0, "combine": 0.5})
    assert float(named.step_s) == float(plain.step_s) and float(named.step_const_s) == float(plain.step_const_s)
    skewed = simulate("ep", 2.0, 1.0, 1.0, 2, 10, 500, j, 0,
                      stage_times={"attention": 2.0, "dispatch": 0.2, "ffn": 1.0, "combine": 0.8})
    assert float(skewed.step_s) != float(plain.step_s)
