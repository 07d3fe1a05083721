"""P(AFD better): the joint draws of the decode model's uncertain assumptions (afdlib.decode.uncertainty)."""
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


@pytest.fixture(scope="module")
def pair():
    model, hw = load_model("deepseek-v3"), load_hardware("h800")
    return (model, *compare(model, hw, BUDGET, 4096))


def test_draws_are_seeded_antithetic_and_centred():
    """Same seed, same draws; the second half mirrors the first, so each log factor's mean is exactly 0
    and the gap share's mean exactly 1/2."""
    a, b = u.draws(), u.draws.__wrapped__(u.N_DRAWS, u.SEED)
    half = u.N_DRAWS // 2
    for name in u.NAMES:
        assert np.array_equal(a[name], b[name]) and a[name].size == u.N_DRAWS
    for name in ("compute kernels", "networks", "EP composition", "AFD composition"):
        assert np.allclose(np.log(a[name][:half]), -np.log(a[name][half:]))
        assert abs(np.mean(np.log(a[name]))) < 1e-12
    assert np.mean(a["gap per step"]) == pytest.approx(0.5)
    with pytest.raises(Exception, match="even"):
        u.draws.__wrapped__(3, 1)


def test_identical_designs_give_one_half(pair):
    """EP against itself: the shared draws cancel and the two composition factors are mirrored, so
    exactly half the draws put 'AFD' (here EP again) ahead: P = 0.5."""
    model, ep, _ = pair
    r = u.ratio_draws(model, ep, ep, BUDGET, 4096)
    assert np.mean(r > 1) == 0.5


def test_nominal_draw_reproduces_the_search(pair):
    """Every assumption at the model's default: the ratio is the searches' own AFD / EP."""
    model, ep, afd = pair
    base = {n: np.array([1.0]) for n in u.NAMES}
    r = u.ratio_draws(model, ep, afd, BUDGET, 4096, values=base)[0]
    assert r == pytest.approx(float(afd.tokens_per_s_per_gpu) / float(ep.tokens_per_s_per_gpu), rel=1e-9)


def test_verdict_bounds_and_words(pair):
    model, ep, afd = pair
    v = u.verdict(model, ep, afd, BUDGET, 4096)
    assert 0 <= v.p_afd <= 1 and v.ratio_interval[0] <= v.ratio_median <= v.ratio_interval[1]
    assert v.words("EP").startswith("EP") and f"{v.p_afd:.2f}" in v.words("EP")
    assert u.Verdict(0.07, (0.5, 0.9), 0.7, 512).words("EP") == "EP, P(AFD better) = 0.07"
    assert u.Verdict(0.45, (0.7, 1.4), 0.95, 512).words("EP") == "EP (undecided), P(AFD better) = 0.45"


def test_tornado_ends_bracket_each_assumption(pair):
    """A composition factor moves one design only: EP's 10th percentile (EP slower) raises AFD / EP
    by exactly exp(1.2816 s_EP), its 90th lowers it by the same factor."""
    model, ep, afd = pair
    rows = {r["assumption"]: r for r in u.tornado_rows(model, ep, afd, BUDGET, 4096)}
    s = next(x.scale for x in u.uncertainties() if x.name == "EP composition")
    row = rows["EP composition"]
    assert row["low"] / row["nominal"] == pytest.approx(np.exp(1.2815516 * s), rel=1e-6)
    assert row["high"] / row["nominal"] == pytest.approx(np.exp(-1.2815516 * s), rel=1e-6)


def test_p_afd_grows_with_afds_scale_out_bandwidth():
    """AFD's transfers all cross scale-out: more of it for AFD alone (EP held on the H800) never makes
    AFD less likely to win (DeepSeek-V3, AFD's scale-out x 1/4 .. x 4, its search re-run at each)."""
    from afdlib.decode.search import best_afd, best_ep
    model, hw = load_model("deepseek-v3"), load_hardware("h800")
    ep = best_ep(model, hw, BUDGET, 4096)
    ps = []
    for f in (0.25, 0.5, 1.0, 2.0, 4.0):
        h = with_network(hw, hw.scale_out_bytes_per_s * f)
        afd = best_afd(model, h, h, BUDGET, 4096)
        ps.append(u.verdict(model, ep, afd, BUDGET, 4096).p_afd)
    assert ps == sorted(ps) and ps[-1] > ps[0]
