"""The batch-overlap pipeline: the scheduling core against closed forms (the paper's Eqs. 2-5,
MegaScale-Infer's total time, mean-value analysis), and the simulator's jitter."""
from __future__ import annotations

import json

import numpy as np
import pytest

from afdlib.routing.balance import uniform_balancedness
from afdlib.cli import main
from afdlib.errors import AfdError
from afdlib.simulation.pipeline import Jitter, simulate, straggler_factors
from afdlib.analysis.schedule import constant_step, run
from afdlib.simulation.studies import megascale_min_microbatches, megascale_total


def per_layer(design, ta, tf, tc, m, layers=(100, 200)):
    """Steady-state time of one layer: the makespan's growth per added layer."""
    a, b = (constant_step(design, ta, tf, tc, m, n).makespan for n in layers)
    return (b - a) / (layers[1] - layers[0])


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5])
def test_layer_time_is_the_max_plus_cycle(m):
    """A closed cycle of three single-server stages with m micro-batches: one layer takes
    max(m max(t_a, t_f, t_c), t_a + t_f + t_c) (each stage serves m micro-batches; one
    micro-batch's round trip cannot be shorter than its stages): the decode model's formula."""
    rng = np.random.default_rng(m)
    ta, tf, tc = rng.uniform(0.1, 2.0, (3, 50))
    expected = np.maximum(m * np.maximum.reduce([ta, tf, tc]), ta + tf + tc)
    assert per_layer("afd", ta, tf, tc, m) == pytest.approx(expected, rel=1e-9)


def test_paper_bubble_conditions_eqs_2_to_5():
    """3BO with any stage times: a layer takes 3 t_B, t_B = max(t_a, t_f, t_c) (Eq. 2 with
    equality); the pool that sets the pace never waits, which is Eq. 3 (2 t_a >= t_f + t_c) when
    attention is the longest stage and Eq. 4 when the FFN is; the other pools idle 1 - t / t_B;
    with t_a = t_f = t_B >= t_c (Eq. 5) neither pool idles."""
    rng = np.random.default_rng(0)
    for ta, tf, tc in rng.uniform(0.1, 1.0, (20, 3)):
        t_b = max(ta, tf, tc)
        assert per_layer("afd", ta, tf, tc, 3) == pytest.approx(3 * t_b)
        r = constant_step("afd", ta, tf, tc, 3, 400)
        for pool, t, eq in (("attention", ta, 2 * ta >= tf + tc), ("ffn", tf, 2 * tf >= ta + tc)):
            assert float(r.idle_share(pool)) == pytest.approx(1 - t / t_b, abs=0.01)
            if t == t_b:
                assert eq                        # the pacing pool satisfies its equation
    ideal = constant_step("afd", 1.0, 1.0, 0.6, 3, 400)
    assert float(ideal.idle_share("attention")) < 0.01 and float(ideal.idle_share("ffn")) < 0.01


def test_two_batch_overlap_bubble_figure_1b():
    """2BO with three equal stages: every pool idles a third of the time (Figure 1(b)); 3BO
    closes the bubble."""
    two = constant_step("afd", 1.0, 1.0, 1.0, 2, 300)
    three = constant_step("afd", 1.0, 1.0, 1.0, 3, 300)
    assert float(two.idle_share("attention")) == pytest.approx(1 / 3, abs=0.01)
    assert float(two.idle_share("ffn")) == pytest.approx(1 / 3, abs=0.01)
    assert float(three.idle_share("attention")) == pytest.approx(0.0, abs=0.01)
    assert per_layer("afd", 1.0, 1.0, 1.0, 2) == pytest.approx(3.0)             # 3 stages, 2 micro-batches


@pytest.mark.parametrize("t_a,t_f,t_c,m", [(0.8, 1.0, 0.3, 3), (1.0, 1.0, 0.5, 3), (0.5, 1.0, 0.2, 4),
                                           (1.0, 1.0, 0.0, 2)])
def test_megascale_total_time(t_a, t_f, t_c, m):
    """With the experts setting the pace and m >= 2 (1 + T_c / T_f), MegaScale-Infer's total
    (T_a + T_e + 2 T_c) + T_f (m L - 1) is exact (T_c each way: the duplex route)."""
    assert m >= megascale_min_microbatches(t_c, t_f) - 1e-12 or t_a + 2 * t_c <= (m - 1) * t_f
    for layers in (1, 7, 61):
        got = float(constant_step("afd-duplex", t_a, t_f, 2 * t_c, m, layers).makespan)
        assert got == pytest.approx(megascale_total(t_a, t_f, t_c, t_f, m, layers), rel=1e-12)


def test_megascale_rule_is_needed():
    """Below m = 2 (1 + T_c / T_f) the FFN idles and the total exceeds the formula."""
    t_a, t_f, t_c = 1.0, 1.0, 1.0          # rule: m >= 4
    got = float(constant_step("afd-duplex", t_a, t_f, 2 * t_c, 3, 61).makespan)
    assert got > megascale_total(t_a, t_f, t_c, t_f, 3, 61) * 1.2


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_exponential_stages_match_mean_value_analysis(m):
    """Three balanced single-server stations with exponential times (gamma, cv = 1): a closed
    network's throughput is m / (m + K - 1) per mean stage time (mean-value analysis, K = 3)."""
    sim = simulate("afd", 1.0, 1.0, 1.0, m, 300, steps=100,
                   jitter=Jitter(cv_attn=1, cv_ffn=1, cv_comm=1, distribution="gamma"), seed=3)
    throughput = m * 300 / float(sim.step_s)
    assert throughput == pytest.approx(m / (m + 2), rel=0.02)


def test_no_jitter_no_loss_and_loss_grows_with_jitter():
    base = simulate("afd", 1.0, 1.0, 1.0, 3, 61, steps=10)
    assert float(base.throughput_loss) == 0.0 and float(base.step_s) == float(base.step_const_s)
    losses = [float(simulate("afd", 1.0, 1.0, 1.0, 3, 61, steps=400, jitter=Jitter(cv_ffn=cv, cv_comm=cv),
                             seed=0).throughput_loss) for cv in (0.05, 0.1, 0.2, 0.4)]
    assert 0 < losses[0] < losses[1] < losses[2] < losses[3] < 1


def test_three_micro_batches_are_the_most_fragile_at_balance():
    """What the cycle predicts: with balanced stages 2BO has a bubble that absorbs jitter, 3BO
    has no slack, 4BO has a spare micro-batch queued: the relative loss peaks at m = 3 while the
    absolute throughput still grows with m."""
    res = {m: simulate("afd", 1.0, 1.0, 1.0, m, 61, steps=800, jitter=Jitter(cv_ffn=0.3, cv_comm=0.3), seed=1)
           for m in (2, 3, 4)}
    loss = {m: float(r.throughput_loss) for m, r in res.items()}
    thr = {m: m / float(r.step_s) for m, r in res.items()}
    assert loss[3] > loss[4] > loss[2]
    assert thr[4] > thr[3] > thr[2]


def test_slack_absorbs_jitter():
    """An FFN-bound 3BO pipeline (t_a = t_c = 0.4 t_f) loses almost nothing to FFN jitter: the
    bottleneck's mean time is unchanged and the other stages have slack."""
    loose = simulate("afd", 0.4, 1.0, 0.4, 3, 61, steps=400, jitter=Jitter(cv_ffn=0.3), seed=0)
    tight = simulate("afd", 1.0, 1.0, 1.0, 3, 61, steps=400, jitter=Jitter(cv_ffn=0.3), seed=0)
    assert abs(float(loose.throughput_loss)) < 0.01 < float(tight.throughput_loss)


def test_simulation_is_seeded_and_vectorised_over_settings():
    j = Jitter(cv_ffn=0.2, cv_comm=0.2)
    a = simulate("afd", [0.5, 1.0], 1.0, 0.5, 3, 20, steps=300, jitter=j, seed=7)
    b = simulate("afd", [0.5, 1.0], 1.0, 0.5, 3, 20, steps=300, jitter=j, seed=7)
    c = simulate("afd", [0.5, 1.0], 1.0, 0.5, 3, 20, steps=300, jitter=j, seed=8)
    assert a.step_s.shape == (2,)
    assert np.array_equal(a.step_s, b.step_s) and not np.array_equal(a.step_s, c.step_s)
    # chunking does not change the result
    d = simulate("afd", [0.5, 1.0], 1.0, 0.5, 3, 20, steps=300, jitter=j, seed=7, chunk=1000)
    assert np.array_equal(a.step_s, d.step_s)


def test_ep_route_two_batch_overlap_hides_the_network():
    """EP, two micro-batches on one GPU pool: with dispatch + combine shorter than the other
    micro-batch's compute, a layer takes 2 (t_a + t_f); the GPUs never wait."""
    assert per_layer("ep", 0.8, 0.2, 0.3, 2) == pytest.approx(2.0)
    # one micro-batch hides nothing
    assert per_layer("ep", 0.8, 0.2, 0.3, 1) == pytest.approx(1.3)


def test_straggler_factors_uniform_match_the_analytic_balancedness():
    f = straggler_factors(np.ones((4, 256)), 4096, 16, 8, samples=25, seed=0)
    assert f.shape == (4, 25) and np.all(f >= 1)
    assert float(f.mean()) == pytest.approx(1 / float(uniform_balancedness(4096, 8, 256, 16)), rel=0.02)


def test_bad_inputs():
    with pytest.raises(AfdError, match="unknown design"):
        simulate("pp", 1, 1, 1, 3, 2)
    with pytest.raises(AfdError, match="t_ffn must be finite"):
        simulate("afd", 1, -1, 1, 3, 2)
    with pytest.raises(AfdError, match="steps"):
        simulate("afd", 1, 1, 1, 3, 2, steps=0)
    with pytest.raises(AfdError, match="cv_ffn"):
        Jitter(cv_ffn=-0.1)
    with pytest.raises(AfdError, match="at least one micro-batch"):
        run((("a", "x"),), lambda k, layer, b: 1.0, 0, 1)


def test_cli_simulate(capsys):
    argv = ["simulate", "--design", "afd", "--t-attn-us", "100", "--t-ffn-us", "100", "--t-comm-us", "100",
            "--layers", "61", "--json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"tpot_ms", "bubble_attn", "bubble_ffn", "throughput_loss"} <= set(doc)
    assert doc["throughput_loss"] == 0.0                      # no jitter: zero by construction
    # 61 layers x 3 micro-batches x 100 us + fill (two more stages) = 18.5 ms
    assert doc["tpot_ms"] == pytest.approx(18.5)
    assert main(argv + ["--cv-ffn", "0.3", "--cv-comm", "0.3", "--steps", "500"]) == 0
    jittered = json.loads(capsys.readouterr().out)
    assert jittered["throughput_loss"] > 0.05 and jittered["tpot_ms"] > doc["tpot_ms"]
    assert main(["simulate", "--design", "afd", "--t-attn-us", "100"]) == 2
    assert "give all of" in capsys.readouterr().err
    assert main(["simulate", "--design", "afd"]) == 2
    assert main(["simulate", "--model", "deepseek-v3", "--hardware", "h800", "--design", "afd", "--n-attn", "2",
                 "--n-ffn", "2", "--stragglers", "uniform", "--steps", "200", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["layers"] == 58 and doc["micro_batches"] == 3 and 0 < doc["ffn_straggler_cv"] < 0.2


def test_attention_cv_from_contexts():
    """The CV of a sum of n independent lengths is the single length's CV over sqrt(n)."""
    from afdlib.simulation.pipeline import attention_cv
    assert float(attention_cv(1.0, 64)) == pytest.approx(0.125)
    rng = np.random.default_rng(0)
    sums = rng.exponential(1.0, (20000, 64)).sum(axis=1)          # exponential lengths: CV 1
    assert float(sums.std() / sums.mean()) == pytest.approx(float(attention_cv(1.0, 64)), rel=0.03)
