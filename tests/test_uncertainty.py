"""P(AFD better): the decode model's uncertain assumptions propagated (afdlib.decision.uncertainty)."""
from __future__ import annotations

import numpy as np
import pytest

from afdlib.decision import uncertainty as u
from afdlib.decision.verdict import verdict
from afdlib.decode.search import compare
from afdlib.decode.step import DECODE_T_GAP_S
from afdlib.decision.sweetspot import with_network
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget

BUDGET = Budget(slo_s=0.05, t_gap_s=DECODE_T_GAP_S)


def test_quadrature_rules_integrate_what_they_claim():
    """Three-point Gauss-Hermite: weights sum to 1, E z^2 = 1, E z^4 = 3 (a standard normal's);
    two-point Gauss-Legendre on [0, 1]: E u = 1/2, E u^2 = 1/3, E u^3 = 1/4."""
    z, w = np.array(u.HERMITE).T
    assert w.sum() == pytest.approx(1) and (w * z ** 2).sum() == pytest.approx(1) and (w * z ** 4).sum() == pytest.approx(3)
    x, v = np.array(u.LEGENDRE).T
    assert [(v * x ** k).sum() for k in (1, 2, 3)] == pytest.approx([1 / 2, 1 / 3, 1 / 4])


def test_uncertainties_come_from_their_sources():
    """The compute factor's spread is the GEMM fit's rms log residual; each design's own spread is the rms
    log validation errors (AFD, with one case, takes all cases')."""
    from afdlib.decode.validation import validation_rows
    from afdlib.inputs.catalog import data_dir
    from afdlib.inputs.files import read_yaml
    by = {x.name: x for x in u.uncertainties()}
    assert by["compute kernels"].scale == read_yaml(data_dir() / "kernel_efficiency.yaml")["gemm"]["residuals"]["all"]["rms_log"]
    rows = validation_rows()
    ep = np.log([1 + r["error"] for r in rows if r["design"] == "ep"])
    from afdlib.decode.validation import design_spreads
    spreads = design_spreads()         # each design's own, for its absolute tokens/s (not the verdict)
    assert spreads["ep"][0] == pytest.approx(np.sqrt(np.mean(ep ** 2)))
    assert spreads["afd"][0] == pytest.approx(np.sqrt(np.mean(np.log([1 + r["error"] for r in rows]) ** 2)))
    # the verdict's: the ratio's rms log error over the head-to-heads at its one-sided 90% upper bound;
    # three sources (Step-3, FastAFD, xDeepServe): chi-square with 3 degrees of freedom, whose 10%
    # quantile is 0.5844 (printed chi-square tables: 0.584)
    from afdlib.decision.head_to_head import head_to_head_rows
    e = np.array([r["log_error"] for r in head_to_head_rows()])
    assert len({r["source"] for r in head_to_head_rows()}) == 3
    assert by["AFD / EP composition"].scale == pytest.approx(np.sqrt(np.mean(e ** 2)) * np.sqrt(3 / 0.5844), rel=1e-3)
    assert 0 < by["networks"].scale < 0.2 and by["gap per step"].nodes()[0][0] == pytest.approx(0.2113249)
    # the fixed cost per kernel: the rms log ratio of each GEMM source's own t0 to the fitted one
    fixed = read_yaml(data_dir() / "kernel_efficiency.yaml")["fixed_per_kernel"]
    t0 = np.array(list(fixed["by_source"].values()))
    assert by["fixed cost per kernel"].scale == pytest.approx(np.sqrt(np.mean(np.log(t0 / fixed["seconds"]) ** 2)),
                                                              abs=1e-4)


def test_fixed_cost_spread_is_the_fits_own():
    """The per-source t0 the file records are what scripts/fit_kernels.py refits (the script, rerun,
    writes the same numbers), and the pooled fit's t0 lies among them."""
    import importlib.util
    from pathlib import Path
    from afdlib.inputs.catalog import data_dir
    from afdlib.inputs.files import read_yaml
    spec = importlib.util.spec_from_file_location("fit_kernels", Path(__file__).parents[1] / "scripts" / "fit_kernels.py")
    fk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fk)
    doc = read_yaml(data_dir() / "kernel_efficiency.yaml")
    par = {"p": doc["gemm"]["parameters"]["p"], "gemm": doc["gemm"]["parameters"]["by_architecture"]}
    assert fk.t0_by_source(fk.gemm_points(), par) == doc["fixed_per_kernel"]["by_source"]
    t0 = doc["fixed_per_kernel"]["by_source"].values()
    assert min(t0) < doc["fixed_per_kernel"]["seconds"] < max(t0)


def test_usable_hbm_runs_to_sglangs_reserve():
    """Share 0: the assumptions' 0.9; share 1: all but SGLang's 12 GiB. H800 (80 GB): 1 - 12 x 2^30 / 80e9
    = 0.83893, a factor 0.93215 on its HBM; H200 (141 GB): 0.90862, more than 0.9."""
    from afdlib.decode.step import Assumptions
    h800, h200 = load_hardware("h800"), load_hardware("h200")
    a = Assumptions()
    assert u.hbm_factor(h800, a, 0.0) == pytest.approx(1.0)
    assert u.hbm_factor(h800, a, 1.0) * 0.9 == pytest.approx(1 - 12 * 2 ** 30 / h800.hbm_bytes)
    assert h800.hbm_bytes == pytest.approx(80e9) and u.hbm_factor(h800, a, 1.0) == pytest.approx(0.93215, abs=1e-5)
    assert u.hbm_factor(h200, a, 1.0) > 1.0


def test_routing_skew_share_zero_is_the_default_and_the_stand_in_matches_the_measured_balance():
    """A skew to the power 0 is no skew (the step is the default's to the bit); the fitted skew of 256
    experts at EP32 + 32 redundant is within 0.01 of the measured loads' EPLB balance (0.9931, the
    shipped fit's median), at EP144 + 32 within 0.07 (0.8751: eight quantile layers stand in for 58)."""
    from afdlib.decode.deployment import EPDeployment, decode_step
    from afdlib.decode.step import Assumptions
    from afdlib.routing.balance import fitted_skew
    model, hw = load_model("deepseek-v3"), load_hardware("h800")
    d = EPDeployment(hw, 144, 32, 2, "low-latency", 64)
    base = decode_step(model, d, 4096, BUDGET, assumptions=Assumptions())
    none = decode_step(model, d, 4096, BUDGET, assumptions=Assumptions(skew=fitted_skew(256), skew_share=0.0))
    assert float(none.tokens_per_s_per_gpu) == float(base.tokens_per_s_per_gpu)
    sk = fitted_skew(256)
    assert float(sk(32, 32)) == pytest.approx(0.9931, abs=0.01)
    assert float(sk(144, 32)) == pytest.approx(0.8751, abs=0.07)


def test_first_order_terms_by_hand():
    """f(t) = a + b t + c t^2 of a standard t: E f = a + c and var f = b^2 (first order: the 2 c^2 of t^2
    is second order); from f(-1) and f(1) exactly those. Terms add over assumptions; a non-finite one
    is left out."""
    a, b, c = 0.1, 0.05, 0.02
    f = lambda t: np.exp(a + b * t + c * t ** 2)          # noqa: E731  (ratios: the terms take logs)
    shift, var = u.first_order(f(0.0), [(f(-1.0), f(1.0)), (f(-1.0), f(1.0))])
    assert shift == pytest.approx(2 * c) and var == pytest.approx(2 * b ** 2)
    shift, var = u.first_order(1.0, [(np.inf, 2.0)])
    assert shift == 0 and var == 0


def test_mixture_by_hand():
    """One setting at ratio 1: P = 1/2 and the median 1; ratio e^0.3 with sd 0.3: P = Phi(1) = 0.8413,
    10th percentile e^(0.3 - 1.2816 x 0.3) = e^-0.0845."""
    p, (lo, hi), mid = u.mixture(np.array([0.0]), np.array([1.0]), 0.3)
    assert p == pytest.approx(0.5) and mid == pytest.approx(1.0, abs=1e-9) and lo * hi == pytest.approx(1.0)
    p, (lo, _), _ = u.mixture(np.array([0.3]), np.array([1.0]), 0.3)
    assert p == pytest.approx(0.841345, abs=1e-6) and lo == pytest.approx(np.exp(0.3 - 1.2815516 * 0.3), rel=1e-6)
    # half the weight certain to favour AFD (EP infeasible), half at ratio 1: P = 3/4
    assert u.mixture(np.array([np.inf, 0.0]), np.array([0.5, 0.5]), 0.3)[0] == pytest.approx(0.75)


def test_identical_designs_give_one_half():
    """Designs identical by construction (every setting's ratio 1): exactly 1/2, whatever the spreads."""
    r = np.zeros(18)
    assert u.mixture(r, np.full(18, 1 / 18), 0.31)[0] == 0.5


@pytest.fixture(scope="module")
def h800_verdict():
    return verdict(load_model("deepseek-v3"), load_hardware("h800"), BUDGET, 4096)


def test_verdict_on_deepseek_v3_h800(h800_verdict):
    """The tornado's nominal is the searches' own ratio; the interval brackets the median; the words
    follow the probability."""
    model, hw = load_model("deepseek-v3"), load_hardware("h800")
    ep, afd = compare(model, hw, BUDGET, 4096)
    v = h800_verdict
    # the quadrature's assumptions and the communication jitter of each design's best (afdlib.decision.jitter)
    assert {r["assumption"] for r in v.tornado} == set(u.NAMES) | {"communication jitter"}
    assert v.tornado[0]["nominal"] == pytest.approx(float(afd.tokens_per_s_per_gpu / ep.tokens_per_s_per_gpu))
    assert 0 < v.p_afd < 1 and v.ratio_interval[0] < v.ratio_median < v.ratio_interval[1]
    assert v.words().startswith(v.recommendation) and f"{v.p_afd:.2f}" in v.words()
    assert u.Verdict(0.07, (0.5, 0.9), 0.7).words() == "EP, P(AFD better) = 0.07"
    assert u.Verdict(0.55, (0.7, 1.4), 1.02).words() == "AFD (undecided), P(AFD better) = 0.55"


def test_tornado_composition_ends_by_hand(h800_verdict):
    """The ratio's composition at its 4th and 96th percentile: AFD / EP times e^(-+sqrt3 s)."""
    s = next(x.scale for x in u.uncertainties() if x.name == "AFD / EP composition")
    row = next(r for r in h800_verdict.tornado if r["assumption"] == "AFD / EP composition")
    assert row["low"] / row["nominal"] == pytest.approx(np.exp(-np.sqrt(3) * s))
    assert row["high"] / row["nominal"] == pytest.approx(np.exp(np.sqrt(3) * s))


def test_p_afd_grows_with_afds_scale_out_bandwidth():
    """All of AFD's transfers cross scale-out: more of it for AFD's pools, EP's device unchanged,
    never makes AFD less likely to win (DeepSeek-V3 on H800, AFD's scale-out x 1/4 .. x 4). With
    both on the changed device the direction is not fixed: EP's all-to-all crosses the same NIC."""
    model, hw = load_model("deepseek-v3"), load_hardware("h800")
    ps = []
    for f in (0.25, 0.5, 1.0, 2.0, 4.0):
        h = with_network(hw, hw.scale_out_bytes_per_s * f)
        ps.append(verdict(model, h, BUDGET, 4096, tornado=False, ep_hardware=hw).p_afd)
    assert ps == sorted(ps) and ps[-1] > ps[0] + 0.1


def test_advice_table_is_byte_stable_across_runs():
    """No sampling: the quadrature and the searches are deterministic, so two runs of the advice table
    give the same probabilities and intervals to the last bit (the book's rebuilds are identical)."""
    import json
    from afdlib.decision.advise import advice_table
    args = ([load_model("deepseek-v3", profile="reference")], [load_hardware("h800", profile="datasheet")], BUDGET, 4096)
    a, b = advice_table(*args), advice_table(*args)
    assert json.dumps(a, default=str) == json.dumps(b, default=str)
    assert 0 < a[0]["p_afd"] < 1 and a[0]["ratio_lo"] < a[0]["ratio_hi"]


def test_first_order_terms_agree_with_monte_carlo():
    """The first-order assumptions (fixed cost per kernel, usable HBM, routing skew) drawn jointly, both
    searches re-run at each of 240 draws (one vectorised search), the composition factors exact:
    P(AFD better) within 0.02 of the first-order terms' (DeepSeek-V3 on H800, the other shared
    assumptions at their defaults; measured with 300 draws: 0.526 against 0.529, Kimi-K2 on H200 0.500
    against 0.480)."""
    from statistics import NormalDist
    from afdlib.decode.step import Assumptions
    from afdlib.inputs.specs import Precision
    by = {x.name: x for x in u.uncertainties()}
    s = by["AFD / EP composition"].scale
    model, hw = load_model("deepseek-v3"), load_hardware("h800")
    args = (model, hw, None, BUDGET, 4096, Precision(), Assumptions())
    rng, n = np.random.default_rng(7), 240
    fixed = np.exp(by["fixed cost per kernel"].scale * rng.standard_normal(n))
    lr = np.log(u.setting_ratios(*args, np.ones(n), np.ones(n), False, None, fixed, rng.random(n), rng.random(n)))
    p_mc = np.mean([NormalDist().cdf(x / s) for x in lr])
    pts = [by[name].points() for name in u.FIRST_ORDER]
    f, m, k = np.ones(7), np.zeros(7), np.zeros(7)
    f[1:3], m[3:5], k[5:7] = pts
    r = u.setting_ratios(*args, np.ones(7), np.ones(7), False, None, f, m, k)
    shift, var = u.first_order(r[0], [(r[1], r[2]), (r[3], r[4]), (r[5], r[6])])
    p_fo = NormalDist().cdf((np.log(r[0]) + shift) / np.sqrt(s ** 2 + var))
    assert abs(p_mc - p_fo) < 0.02


def test_mtp_acceptance_cancels_to_the_first_order_terms_size():
    """MTP's accepted tokens per step (only where given: the default has none) scale both designs'
    tokens per step alike: from 1.7 to 1.9 each design's throughput grows by more than 10% while AFD / EP
    moves by less than 4% (measured: EP +15%, AFD +12%, the ratio 1.147 -> 1.116), the size of a
    first-order term, so it is held rather than integrated."""
    from dataclasses import replace
    model, hw = load_model("deepseek-v3"), load_hardware("h800")
    out = []
    for acc in (1.7, 1.9):
        ep, afd = compare(model, hw, replace(BUDGET, l_accept=acc), 4096)
        out.append((float(ep.tokens_per_s_per_gpu), float(afd.tokens_per_s_per_gpu)))
    (e0, a0), (e1, a1) = out
    assert e1 / e0 > 1.1 and a1 / a0 > 1.1
    assert abs((a1 / e1) / (a0 / e0) - 1) < 0.04


def test_decisive_band_and_the_undecided_sentence_by_hand():
    """With the ratio's composition spread alone P = Phi(ln r / S): P = 0.9 at ln r = 1.2815516 S, so the
    band is exp(-+1.2815516 S); a verdict inside it is undecided and the sentence gives the band and the
    ratio; a decided one says so."""
    by = {x.name: x for x in u.uncertainties()}
    s = by["AFD / EP composition"].scale
    lo, hi = u.decisive_band()
    assert hi == pytest.approx(np.exp(1.2815516 * s)) and lo * hi == pytest.approx(1.0)
    from statistics import NormalDist
    assert NormalDist().cdf(np.log(hi) / s) == pytest.approx(1 - u.DECIDED)
    from afdlib.decision.decision import undecided_words
    words = undecided_words(u.Verdict(0.55, (0.7, 1.5), 1.04), 1.047)
    assert words.startswith("undecided") and f"below {lo:.2f} or above {hi:.2f}" in words and "1.05 at" in words
    assert undecided_words(u.Verdict(0.05, (0.4, 0.6), 0.5), 0.5) == "decided"
    assert all(w in u.assumption_words() for w in ("fixed cost per kernel", "usable HBM share", "routing skew"))
