"""Imbalance penalty (NOTES.md section 5, with the erratum) and the timelines of Fig. 5."""
import numpy as np
import pytest

from afdlib.errors import AfdError
from afdlib.analysis.imbalance import (alpha_afd, alpha_afd_as_printed, alpha_afd_exact, alpha_dp_afd, alpha_dp_ep, alpha_ep)
from afdlib.analysis.timeline import afd_timeline, busy_share, ep_timeline, loads_with_balancedness


def test_ep_check_values():
    # NOTES: lambda = 4 -> 0.921, 0.938, 0.952, 0.966
    assert alpha_ep([0.70, 0.75, 0.80, 0.85], 4) == pytest.approx([0.921, 0.938, 0.952, 0.966], abs=5e-4)


def test_afd_check_values():
    p = alpha_afd(0.8, 8, 2)  # a = 6.4: floor 1.25 x 6 / 8 = 0.9375; ceil 1.25 x 6.4 / 9 = 0.889
    assert float(p.alpha) == pytest.approx(0.9375) and str(p.rounding) == "floor"
    assert float(p.ceil) == pytest.approx(1.25 * 6.4 / 9)
    assert float(p.alpha) < float(alpha_ep(0.8, 4)) == pytest.approx(0.952, abs=5e-4)
    p = alpha_afd(0.8, 10, 2)  # a = 8 is whole: exact 0.8 x 12 / 10 = 0.96
    assert float(p.alpha) == pytest.approx(0.96) and str(p.rounding) == "exact"
    p = alpha_afd(0.75, 10, 2)  # a = 7.5: floor 1.2 x 7 / 9 = 0.9333
    assert float(p.alpha) == pytest.approx(0.9333, abs=5e-5)
    assert float(alpha_ep(0.75, 5)) == pytest.approx(0.947, abs=5e-4)


def test_exact_form_equals_ep_form_at_lambda_na_over_nf():
    s, na, nf = np.linspace(0.3, 1, 15), 12, 4
    assert alpha_afd_exact(s, na, nf) == pytest.approx(alpha_ep(s, na / nf))


def test_alpha_tends_to_one_as_sigma_tends_to_one():
    for na, nf in ((1, 1), (8, 2), (10, 4), (7, 3)):
        assert float(alpha_afd(1.0, na, nf).alpha) == pytest.approx(1)
        assert float(alpha_afd(1 - 1e-9, na, nf).alpha) == pytest.approx(1, abs=1e-6)
        assert float(alpha_afd_exact(1.0, na, nf)) == pytest.approx(1)
    lam = np.linspace(0.5, 8, 20)
    assert alpha_ep(1.0, lam) == pytest.approx(1) and alpha_dp_ep(1.0, lam) == pytest.approx(1)
    assert float(alpha_dp_afd(1.0)) == 1


def test_erratum_printed_constant_gives_lambda_at_sigma_one():
    assert float(alpha_afd_as_printed(1.0, 8, 2)) == pytest.approx(4.0)   # = lambda
    assert float(alpha_afd_as_printed(1.0, 10, 2)) == pytest.approx(5.0)


def test_afd_never_beats_ep_at_equal_lambda():
    sig = np.linspace(0.3, 1, 36)[:, None, None]
    na = np.arange(1, 41)[None, :, None]
    nf = np.array([1, 2, 4, 6, 8])[None, None, :]
    afd = alpha_afd(sig, na, nf)
    assert np.all(afd.alpha <= alpha_ep(sig, na / nf) + 1e-12)
    assert np.all(afd.alpha <= 1 + 1e-12) and np.all(afd.alpha > 0)
    # equality exactly where sigma N_A is whole
    whole = np.isclose(sig * na, np.round(sig * na)) & np.ones_like(afd.alpha, dtype=bool)
    assert np.allclose(afd.alpha[whole], alpha_ep(sig, na / nf)[whole])


def test_dp_imbalance_forms():
    s, lam = 0.8, 4.0
    # EP regrows its batch: x (t_a + s t_f) = t_a + t_f -> alpha = s x = 0.8 x 5 / 4.8 = 0.8333
    assert float(alpha_dp_ep(s, lam)) == pytest.approx(0.8 * 5 / 4.8)
    assert s <= float(alpha_dp_ep(s, lam)) <= float(alpha_ep(s, lam))  # between sigma and the EP form (lambda > 1)
    assert float(alpha_dp_afd(s)) == s


@pytest.mark.parametrize("call", [
    lambda: alpha_ep(1.2, 4), lambda: alpha_ep(0, 4), lambda: alpha_ep(0.8, -1),
    lambda: alpha_afd(0.8, 0, 2), lambda: alpha_afd(0.8, 8, 0), lambda: alpha_afd(float("nan"), 8, 2),
    lambda: alpha_dp_afd(-0.1),
])
def test_bad_input(call):
    with pytest.raises(AfdError):
        call()


def test_timelines_reproduce_the_closed_forms():
    s, lam, layers = 0.8, 4.0, 60
    t_a, t_f = lam / (lam + 1), 1 / (lam + 1)
    one, strag = np.ones(4), loads_with_balancedness(4, s)
    assert strag.mean() == pytest.approx(s) and strag.max() == 1
    # EP, two micro-batches, communication (0.3 t_B) hidden: the closed forms up to fill and drain
    _, base = ep_timeline(t_a, t_f, one, one, layers)
    assert base == pytest.approx(2 * layers * (t_a + t_f), abs=0.2)  # t_B = t_a + t_f per micro-batch
    _, ep_ep = ep_timeline(t_a, t_f, one, strag / s, layers)
    assert base / ep_ep == pytest.approx(float(alpha_ep(s, lam)), abs=1e-3)
    _, ep_dp = ep_timeline(t_a, t_f, strag, s * one, layers)
    assert s * base / ep_dp == pytest.approx(float(alpha_dp_ep(s, lam)), abs=1e-3)
    # communication longer than the other micro-batch's compute is exposed and costs throughput
    _, exposed = ep_timeline(t_a, t_f, one, one, layers, t_c=2.0)
    assert exposed > base * 1.05
    # AFD: one slow FFN GPU stretches every pipeline cycle; steady state -> alpha = sigma
    _, afd_base = afd_timeline(1, 1, 1, np.ones(2), np.ones(2), layers)
    _, afd_ep = afd_timeline(1, 1, 1, np.ones(2), loads_with_balancedness(2, s) / s, layers)
    assert afd_base / afd_ep == pytest.approx(s, abs=0.01)
    # balanced 3BO: each resource busy 3 x layers t_B, plus fill and drain
    assert afd_base == pytest.approx(3 * layers + 2)


def test_timeline_bars_are_consistent():
    bars, end = afd_timeline(1, 1, 1, np.ones(2), np.ones(1), n_layers=2)
    for lane in {b.lane for b in bars}:
        mine = sorted((b for b in bars if b.lane == lane), key=lambda b: b.start)
        assert all(a.end <= b.start + 1e-9 for a, b in zip(mine, mine[1:]))  # no overlap on a lane
        assert sum(b.duration for b in mine) == pytest.approx(end)           # idle fills the gaps
    assert 0 < busy_share(bars, "FFN", end) <= 1
    with pytest.raises(AfdError):
        loads_with_balancedness(4, 0.2)  # below 1/n


def test_imbalance_cases_throughputs_match_the_closed_forms():
    from afdlib.analysis.timeline import imbalance_cases, relative_throughput
    t = relative_throughput(imbalance_cases(0.8, 4.0, n_layers=60))
    assert t["EP, balanced"] == 1 and t["AFD, balanced"] == 1
    assert t["EP, EP imbalance"] == pytest.approx(float(alpha_ep(0.8, 4.0)), abs=1e-3)
    assert t["EP, DP imbalance"] == pytest.approx(float(alpha_dp_ep(0.8, 4.0)), abs=1e-3)
    # AFD without resizing: every pipeline cycle is stretched, alpha -> sigma (within fill and drain)
    assert t["AFD, EP imbalance"] == pytest.approx(0.8, abs=0.01)
    assert t["AFD, DP imbalance"] == pytest.approx(0.8, abs=0.01)
