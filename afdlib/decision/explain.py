"""The searches behind one explained answer (``afd advise`` with its reasons), as blocks of one call.

An explained answer needs, besides the best deployments at the asked SLO: the SLO axis' defaults and
quadratures (:mod:`afdlib.decision.slo_axis`), the tornado's ends (:func:`afdlib.decision.verdict.tornado_rows`)
and the break-even bandwidth's grid (:func:`afdlib.decision.threshold.break_even_scale_out`). Each is a
block of settings of one :func:`afdlib.decision.blocks.search_blocks` call, read by the same function as
when it is searched alone (the results of each alone, tests/test_explain.py): one search's fixed cost
instead of four.
"""
from __future__ import annotations

import numpy as np

from afdlib.decision.blocks import search_blocks
from afdlib.decision.slo_axis import SLOS_S, slo_blocks, slo_rows
from afdlib.decision.threshold import FLIP_FACTORS, break_even_of, ratio_or_inf
from afdlib.decision.uncertainty import ratios_of
from afdlib.decision.verdict import tornado_of, tornado_settings


def explained(model, hardware, budget, context, precision, assumptions, attn_hardware=None,
              validated_only: bool = False, asked: tuple | None = None, slos=SLOS_S,
              factors: np.ndarray = FLIP_FACTORS) -> tuple[list[dict], tuple[dict, ...], tuple]:
    """(the SLO axis' rows, :func:`afdlib.decision.slo_axis.slo_verdicts`; the tornado's rows at the asked
    SLO, :func:`afdlib.decision.verdict.tornado_rows`; (the break-even scale-out bandwidth or None, the
    ratio at each of ``factors``), :func:`afdlib.decision.threshold.break_even_scale_out`), searched as
    blocks of one call. ``asked``: as :func:`~afdlib.decision.slo_axis.slo_verdicts`' (the asked SLO's
    bests, already found)."""
    s, axis_blocks = slo_blocks(budget, slos, asked)
    tornado = tornado_settings()
    blocks = axis_blocks + [tornado, {"scale_out": np.asarray(factors, dtype=float)}]
    ep, afd, parts = search_blocks(model, hardware, attn_hardware, budget, context, precision, assumptions,
                                   validated_only, blocks)
    axis = slo_rows(model, hardware, attn_hardware, budget, context, precision, assumptions, s, asked, ep, afd,
                    parts[:len(axis_blocks)])
    rows = tornado_of(ratios_of(ep, afd)[parts[-2]])
    ratio = ratio_or_inf(*(np.asarray(x.tokens_per_s_per_gpu, dtype=float)[parts[-1]] for x in (ep, afd)))
    return axis, rows, (break_even_of(hardware, np.asarray(factors, dtype=float), ratio), ratio)
