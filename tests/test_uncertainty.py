"""P(AFD better): the decode model's uncertain assumptions propagated (afdlib.decode.uncertainty)."""
from __future__ import annotations

import numpy as np
import pytest

from afdlib.decode import uncertainty as u
from afdlib.decode.search import compare
from afdlib.decode.step import DECODE_T_GAP_S
from afdlib.decode.sweetspot import with_network
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
    """The compute factor's spread is the GEMM fit's rms log residual; the composition spreads are rms
    log validation errors (AFD, with one case, takes all cases')."""
    from afdlib.decode.validation import validation_rows
    from afdlib.inputs.catalog import data_dir
    from afdlib.inputs.files import read_yaml
    by = {x.name: x for x in u.uncertainties()}
    assert by["compute kernels"].scale == read_yaml(data_dir() / "kernel_efficiency.yaml")["gemm"]["residuals"]["all"]["rms_log"]
    rows = validation_rows()
    ep = np.log([1 + r["error"] for r in rows if r["design"] == "ep"])
    assert by["EP composition"].scale == pytest.approx(np.sqrt(np.mean(ep ** 2)))
    assert by["AFD composition"].scale == pytest.approx(np.sqrt(np.mean(np.log([1 + r["error"] for r in rows]) ** 2)))
    assert 0 < by["networks"].scale < 0.2 and by["gap per step"].nodes()[0][0] == pytest.approx(0.2113249)


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
    return u.verdict(load_model("deepseek-v3"), load_hardware("h800"), BUDGET, 4096)


def test_verdict_on_deepseek_v3_h800(h800_verdict):
    """The tornado's nominal is the searches' own ratio; the interval brackets the median; the words
    follow the probability."""
    model, hw = load_model("deepseek-v3"), load_hardware("h800")
    ep, afd = compare(model, hw, BUDGET, 4096)
    v = h800_verdict
    assert {r["assumption"] for r in v.tornado} == set(u.NAMES)
    assert v.tornado[0]["nominal"] == pytest.approx(float(afd.tokens_per_s_per_gpu / ep.tokens_per_s_per_gpu))
    assert 0 < v.p_afd < 1 and v.ratio_interval[0] < v.ratio_median < v.ratio_interval[1]
    assert v.words().startswith(v.recommendation) and f"{v.p_afd:.2f}" in v.words()
    assert u.Verdict(0.07, (0.5, 0.9), 0.7).words() == "EP, P(AFD better) = 0.07"
    assert u.Verdict(0.55, (0.7, 1.4), 1.02).words() == "AFD (undecided), P(AFD better) = 0.55"


def test_tornado_composition_ends_by_hand(h800_verdict):
    """EP's composition at its 4th percentile (EP slower by e^(-sqrt3 s)) raises AFD / EP by e^(sqrt3 s)."""
    s = next(x.scale for x in u.uncertainties() if x.name == "EP composition")
    row = next(r for r in h800_verdict.tornado if r["assumption"] == "EP composition")
    assert row["low"] / row["nominal"] == pytest.approx(np.exp(np.sqrt(3) * s))
    assert row["high"] / row["nominal"] == pytest.approx(np.exp(-np.sqrt(3) * s))


def test_p_afd_grows_with_afds_scale_out_bandwidth():
    """All of AFD's transfers cross scale-out: more of it for AFD's pools, EP's device unchanged,
    never makes AFD less likely to win (DeepSeek-V3 on H800, AFD's scale-out x 1/4 .. x 4). With
    both on the changed device the direction is not fixed: EP's all-to-all crosses the same NIC."""
    model, hw = load_model("deepseek-v3"), load_hardware("h800")
    ps = []
    for f in (0.25, 0.5, 1.0, 2.0, 4.0):
        h = with_network(hw, hw.scale_out_bytes_per_s * f)
        ps.append(u.verdict(model, h, BUDGET, 4096, tornado=False, ep_hardware=hw).p_afd)
    assert ps == sorted(ps) and ps[-1] > ps[0] + 0.1


def test_advice_table_is_byte_stable_across_runs():
    """No sampling: the quadrature and the searches are deterministic, so two runs of the advice table
    give the same probabilities and intervals to the last bit (the book's rebuilds are identical)."""
    import json
    from afdlib.decode.advise import advice_table
    args = ([load_model("deepseek-v3", profile="reference")], [load_hardware("h800", profile="datasheet")], BUDGET, 4096)
    a, b = advice_table(*args), advice_table(*args)
    assert json.dumps(a, default=str) == json.dumps(b, default=str)
    assert 0 < a[0]["p_afd"] < 1 and a[0]["ratio_lo"] < a[0]["ratio_hi"]
