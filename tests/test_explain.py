"""The searches behind one explained answer as blocks of one call give what each gives searched alone."""
import numpy as np
import pytest

from afdlib.decision.blocks import search_blocks
from afdlib.decision.explain import explained
from afdlib.decision.slo_axis import slo_verdicts
from afdlib.decision.threshold import break_even_scale_out
from afdlib.decision.verdict import tornado_rows
from afdlib.decode.search import compare
from afdlib.decode.step import Assumptions
from afdlib.inputs.catalog import load_hardware, load_model
from afdlib.inputs.specs import Budget, Precision

BUDGET = Budget(slo_s=0.05)
FACTORS = np.geomspace(1 / 4, 4, 5)


@pytest.mark.parametrize("hw, attn", [("h800", None), ("gb200", None), ("h800", "h20")])
def test_a_block_at_the_defaults_is_the_search_at_the_defaults_to_the_bit(hw, attn):
    # every setting at its default (factors 1, shares 0, all of the gap) changes no number: the block's
    # bests are compare's, on an 8-GPU node, a Superpod and heterogeneous pools alike
    model, h = load_model("deepseek-v3"), load_hardware(hw)
    a = None if attn is None else load_hardware(attn)
    ep, afd, (cell,) = search_blocks(model, h, a, BUDGET, 4096, Precision(), Assumptions(), False, [{}])
    e0, a0 = compare(model, h, BUDGET, 4096, Precision(), Assumptions(), a)
    assert float(ep.tokens_per_s_per_gpu[cell][0]) == float(e0.tokens_per_s_per_gpu)
    assert float(afd.tokens_per_s_per_gpu[cell][0]) == float(a0.tokens_per_s_per_gpu)
    assert ep.at(0).on(h).deployment.label == e0.deployment.label
    assert afd.at(0).on(h, a).deployment.label == a0.deployment.label


def test_explained_is_each_search_alone():
    model, h = load_model("deepseek-v3"), load_hardware("h800")
    args = (model, h, BUDGET, 4096, Precision(), Assumptions())
    ep, afd = compare(*args)
    asked = ((float(ep.tokens_per_s_per_gpu), float(afd.tokens_per_s_per_gpu)), (ep.deployment, afd.deployment))
    axis, rows, (bw, ratio) = explained(*args, asked=asked, slos=(0.03, 0.075), factors=FACTORS)
    alone_axis = slo_verdicts(*args, slos=(0.03, 0.075), asked=asked)
    assert [r["slo_ms"] for r in axis] == [30.0, 50.0, 75.0]
    assert [r["verdict"].p_afd for r in axis] == [r["verdict"].p_afd for r in alone_axis]
    assert [r["ratio"] for r in axis] == [r["ratio"] for r in alone_axis]
    alone_rows = tornado_rows(model, h, None, BUDGET, 4096, Precision(), Assumptions(), False)
    assert [(r["assumption"], r["low"], r["high"]) for r in rows] == [(r["assumption"], r["low"], r["high"])
                                                                     for r in alone_rows]
    alone_bw, alone_ratio = break_even_scale_out(*args, factors=FACTORS)
    assert bw == alone_bw and np.array_equal(ratio, alone_ratio)
    # a break-even lies between two grid points whose ratios straddle 1; none where no two do
    grid = h.scale_out_bytes_per_s * FACTORS
    straddle = (ratio[:-1] - 1) * (ratio[1:] - 1) <= 0
    if bw is None:
        assert not straddle.any()
    else:
        k = np.searchsorted(grid, bw)
        assert 0 < k < len(grid) and straddle[k - 1]
