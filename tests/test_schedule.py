"""One schedule for both designs: the searches' makespans equal the max-plus core's, and the step's
MoE layers are that schedule (issue 18: overlap derived, not assumed)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from afdlib.analysis.schedule import ROUTES, afd_moe_time, ep_moe_time, makespan, run
from afdlib.decode.deployment import AFDDeployment, EPDeployment, decode_step
from afdlib.decode.step import Assumptions
from afdlib.errors import AfdError
from afdlib.inputs.specs import Budget

BUDGET = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=0.0)


@pytest.mark.parametrize("design", sorted(ROUTES))
@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_makespan_equals_the_max_plus_schedule(design, m):
    """Property: random stage times (some zero, some tied), 1-4 micro-batches, 1-61 layers, the
    pipeline's fill and drain included: the closed forms and the periodic recurrence give run's makespan."""
    rng = np.random.default_rng(18 + m)
    route = ROUTES[design]
    if design == "ep-sbo" and m > 1:             # single-batch overlap: one micro-batch by definition
        with pytest.raises(AfdError, match="one micro-batch"):
            makespan(route, [1.0] * len(route), m, 2)
        return
    for layers in (1, 2, 3, 5, 8, 61):
        t = rng.exponential(size=(len(route), 3000)) * (rng.uniform(size=(len(route), 3000)) < 0.85)
        t[:, :1000] = np.round(t[:, :1000] * 2) / 2          # ties between stages
        expected = run(route, lambda k, layer, b, t=t: t[k], m, layers, (t.shape[1],)).makespan
        got = makespan(route, list(t), m, layers)
        assert np.allclose(got, expected, rtol=1e-12, atol=1e-12), (design, m, layers)


def test_afd_closed_form_by_hand():
    # t_a = 2, t_c = 1, t_f = 1, m = 3, L = 2: the attention pool is busy 3 x 2 per layer; its 6 turns
    # take 12, plus the last micro-batch's transfer and FFN (1 + 1): 14 = max(L S + (m-1) t_B = 8 + 4,
    # S + (L m - 1) t_B = 4 + 10)
    assert float(makespan(ROUTES["afd"], (2.0, 1.0, 1.0), 3, 2)) == 14.0
    assert float(run(ROUTES["afd"], lambda k, layer, b: (2.0, 1.0, 1.0)[k], 3, 2).makespan) == 14.0


def test_single_batch_overlap_by_hand():
    # attention 3, dispatch 1, shared experts 0.5, up/gate 2, down 1, combine 1.5 (SGLang/Ant's SBO):
    # dispatch (1) runs beside the shared experts (0.5), combine (1.5) beside the down GEMM (1), so a
    # layer takes 3 + max(1, 0.5) + 2 + max(1, 1.5) = 7.5 against the serial 9; 61 layers 457.5.
    # Hidden share: (serial - scheduled) / (serial - max(compute, comm)) = (9 - 7.5) / (9 - 6.5) = 0.6
    t_att, t_d, t_s, t_up, t_down, t_cb = 3.0, 1.0, 0.5, 2.0, 1.0, 1.5
    assert float(makespan(ROUTES["ep-sbo"], (t_att, t_d, t_s, t_up, t_down, t_cb), 1, 61)) == 457.5
    total, hidden = ep_moe_time(t_att, t_d, t_s + t_up + t_down, t_cb, 1, "low-latency", 61,
                                sbo=(t_s, t_up, t_down))
    assert float(total) == 457.5 and float(hidden) == pytest.approx(0.6)
    with pytest.raises(AfdError, match="low-latency"):
        ep_moe_time(t_att, t_d, 3.5, t_cb, 1, "normal", 61, sbo=(t_s, t_up, t_down))


def test_one_batch_ep_with_low_latency_kernels_is_the_serial_sum():
    t = np.array([3.0, 1.0, 2.0, 1.5])          # attention, dispatch, experts, combine
    for layers in (1, 7, 61):
        total, hidden = ep_moe_time(*t, 1, "low-latency", layers)
        assert float(total) == pytest.approx(layers * t.sum()) and float(hidden) == 0.0


def test_two_batches_with_compute_equal_to_communication_hide_what_the_schedule_says():
    # per micro-batch t_a = t_d = t_f = t_c = 1 (compute 2 = dispatch + combine 2). By hand, layer 1:
    # GPU A0 [0,1] A1 [1,2]; network D0 [1,2] D1 [2,3]; GPU F0 [2,3] F1 [3,4]; network C0 [3,4] C1 [4,5];
    # layer 2 starts A0 at 4 (C0 ended, GPU free) and everything shifts by 4: the L layers take 4 L + 1.
    # Serial 8 L, bound 4 L (each resource busy 4 per layer): hidden (8L - 4L - 1) / 4L = 1 - 1 / (4 L).
    for layers in (1, 2, 61):
        total, hidden = ep_moe_time(1.0, 1.0, 1.0, 1.0, 2, "low-latency", layers)
        assert float(total) == 4 * layers + 1
        assert float(hidden) == pytest.approx(1 - 1 / (4 * layers))
    # and not an assumed half: the old default would have given 1.5 x the bound per layer
    total, hidden = ep_moe_time(1.0, 1.0, 1.0, 1.0, 2, "low-latency", 61, override=0.5)
    assert float(total) == 61 * 6 and float(hidden) == pytest.approx(0.5)


def test_normal_kernels_serialise():
    # the normal kernels hold the SMs: nothing overlaps, whatever the micro-batches
    t = (1.0, 0.5, 2.0, 0.7)
    for m in (1, 2):
        total, hidden = ep_moe_time(*t, m, "normal", 10)
        assert float(total) == pytest.approx(m * 10 * sum(t)) and float(hidden) == 0.0


def test_steps_are_the_schedule_and_overrides_apply_to_their_design(ds, h800):
    reqs = np.array([16.0, 64.0, 256.0])
    ep_d, afd_d = EPDeployment(h800, 144, 32, 2, requests=reqs), AFDDeployment.of(h800, 2, 2, requests=reqs)
    ep, afd = decode_step(ds, ep_d, 4096, BUDGET), decode_step(ds, afd_d, 4096, BUDGET)
    for st in (ep, afd):   # the step's MoE part is the makespan of all MoE layers
        rest = ds.dense_layers * st.dense_layer_s + st.lm_head_s + st.mtp_s
        assert np.allclose(st.step_s - rest, ds.moe_layers * st.t_layer)
        assert np.all((st.hidden_share > 0) & (st.hidden_share <= 1))
    m = 3
    expected = makespan(ROUTES["afd"], (afd.t_attn, afd.t_comm, afd.t_ffn), m, ds.moe_layers)
    assert np.allclose(ds.moe_layers * afd.t_layer, expected)
    # an EP override moves EP only, an AFD override AFD only, each by its formula
    a = Assumptions(ep_overlap=0.3)
    ep_o, afd_o = decode_step(ds, ep_d, 4096, BUDGET, assumptions=a), decode_step(ds, afd_d, 4096, BUDGET,
                                                                                  assumptions=a)
    assert np.array_equal(afd_o.step_s, afd.step_s)
    compute, comm = ep.t_attn + ep.t_ffn, ep.t_comm
    layer = np.maximum(compute, comm) + 0.7 * np.minimum(compute, comm)
    assert np.allclose(ep_o.t_layer, layer) and np.allclose(ep_o.hidden_share, 0.3)
    afd_1 = decode_step(ds, afd_d, 4096, BUDGET, assumptions=Assumptions(afd_overlap=1.0))
    ideal = np.maximum.reduce([m * afd.t_attn, m * afd.t_ffn, m * afd.t_comm, afd.t_attn + afd.t_ffn + afd.t_comm])
    assert np.allclose(afd_1.t_layer, ideal) and np.all(afd_1.t_layer <= afd.t_layer)
    assert np.array_equal(decode_step(ds, ep_d, 4096, BUDGET, assumptions=Assumptions(afd_overlap=0.0)).step_s,
                          ep.step_s)
    # one batch: serial, nothing hidden, unless an override says single-batch overlap
    one = decode_step(ds, replace(ep_d, micro_batches=1), 4096, BUDGET)
    assert np.all(one.hidden_share == 0.0)
    sbo = decode_step(ds, replace(ep_d, micro_batches=1), 4096, BUDGET,
                      assumptions=Assumptions(ep_overlap=0.4, single_batch_overlap=True))
    assert np.allclose(sbo.hidden_share, 0.4)


def test_afd_moe_time_override_formula():
    """L (ideal + (1 - o)(serial - ideal)) + (1 - o) fill: ideal 6 and 9, serial 6 + 1.5 and 9 + 7.5;
    the schedule's fill and drain over 5 layers: its makespan less 5 ideal."""
    t_a, t_f, t_c, m = np.array([1.0, 3.0]), np.array([2.0, 1.0]), np.array([0.5, 2.5]), 3
    ideal = np.maximum.reduce([m * t_a, m * t_f, m * t_c, t_a + t_f + t_c])
    serial = np.maximum.reduce([m * t_a, m * t_f, t_a + t_f]) + m * t_c
    assert np.allclose(ideal, [6.0, 9.0]) and np.allclose(serial, [7.5, 16.5])
    fill = afd_moe_time(t_a, t_f, t_c, m, 5)[0] - 5 * ideal
    total, _ = afd_moe_time(t_a, t_f, t_c, m, 5, override=0.25)
    assert np.allclose(total, 5 * (ideal + 0.75 * (serial - ideal)) + 0.75 * fill)


def test_afd_override_ends_bracket_the_schedule():
    """AFD's what-if override: share 1 (the steady state, no fill and drain) never exceeds the
    schedule, share 0 (no transfer overlapping compute, fill and drain kept) never falls below it,
    and the layer time falls as the share grows; random stage times, 1-4 micro-batches, 1-61 layers.
    The case that broke the old share-0 formula: t_a = t_f = 1, t_c = 0.1, m = 3, one layer, which
    schedules 4.1 against 3.3."""
    from afdlib.analysis.schedule import afd_moe_time
    rng = np.random.default_rng(7)
    for m in (1, 2, 3, 4):
        for layers in (1, 2, 61):
            t = rng.uniform(0.01, 1.0, (3, 200))
            sched, _ = afd_moe_time(*t, m, layers)
            ends = [afd_moe_time(*t, m, layers, override=o)[0] for o in (0.0, 0.5, 1.0)]
            assert np.all(ends[2] <= sched * (1 + 1e-12)) and np.all(sched <= ends[0] * (1 + 1e-12))
            assert np.all(ends[0] >= ends[1]) and np.all(ends[1] >= ends[2])
    assert afd_moe_time(1.0, 1.0, 0.1, 3, 1)[0] == pytest.approx(4.1)
    assert afd_moe_time(1.0, 1.0, 0.1, 3, 1, override=0.0)[0] >= 4.1


@pytest.mark.parametrize("domains", [2, 3, 4])
def test_attention_domains_makespan_equals_the_max_plus_schedule(domains):
    """Property: with D data-parallel attention domains (xDeepServe's AFD), random stage times (some zero,
    some tied), 1-5 micro-batches per domain, 1-120 layers: the closed form gives run's makespan."""
    rng = np.random.default_rng(28 + domains)
    route = ROUTES["afd"]
    for m in (1, 2, 3, 5):
        for layers in (1, 2, 5, 61, 120):
            t = rng.exponential(size=(3, 500)) * (rng.uniform(size=(3, 500)) < 0.9)
            t[:, :150] = np.round(t[:, :150] * 2) / 2          # ties between stages
            expected = run(route, lambda k, layer, b, t=t: t[k], domains * m, layers, (500,), domains=domains).makespan
            assert np.allclose(makespan(route, list(t), domains * m, layers, domains=domains), expected, rtol=1e-12)


def test_attention_domains_by_hand():
    # xDeepServe-like stage times per micro-batch (ms): attention 0.35, transfer 0.36, MoE 0.12; 3 domains
    # x 2 micro-batches. Each domain's attention is busy 2 x 0.35 = 0.70 a layer, its links 2 x 0.36 =
    # 0.72, the FFN 6 x 0.12 = 0.72; one micro-batch's round trip 0.35 + 0.36 + 0.12 = 0.83 binds: a
    # layer tends to 0.83 (plus the fill). The same six micro-batches on one attention pool take
    # 6 x 0.35 = 2.1 a layer at least.
    t = (0.35, 0.36, 0.12)
    per_layer = float(makespan(ROUTES["afd"], t, 6, 1000, domains=3)) / 1000
    assert per_layer == pytest.approx(0.83, rel=1e-3)
    assert float(makespan(ROUTES["afd"], t, 6, 1000)) / 1000 >= 2.1
    total, hidden = afd_moe_time(0.35, 0.12, 0.36, 2, 1000, domains=3)
    assert float(total) == pytest.approx(per_layer * 1000)
    # serial m (t_a + D t_f + t_c) = 2 (0.35 + 0.36 + 0.36) = 2.14, bound 0.83: hidden (2.14 - 0.83...) / (2.14 - 0.83)
    assert 0.99 < float(hidden) <= 1.0
    with pytest.raises(AfdError, match="AFD route"):
        makespan(ROUTES["ep"], (1.0, 1.0, 1.0, 1.0), 4, 2, domains=2)
