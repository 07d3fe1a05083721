"""The verdict over SLOs (afdlib.decision.slo_axis): one vectorised search with the results of each SLO alone."""
from dataclasses import replace

import pytest

from afdlib.decode.search import compare
from afdlib.decision.slo_axis import holds_words, slo_verdicts
from afdlib.decision.uncertainty import Verdict
from afdlib.decision.verdict import verdict
from afdlib.inputs.specs import Budget

BUDGET = Budget(slo_s=0.05, l_accept=1.0, t_gap_s=0.003)


def test_each_slo_as_a_cell_gives_that_slo_alone(ds, h800):
    rows = slo_verdicts(ds, h800, BUDGET, 4096, slos=(0.03, 0.075))
    assert [r["slo_ms"] for r in rows] == [30.0, 50.0, 75.0] and [r["asked"] for r in rows] == [False, True, False]
    for r in rows:
        budget = replace(BUDGET, slo_s=r["slo_ms"] / 1e3)
        v = verdict(ds, h800, budget, 4096, tornado=False)
        ep, afd = compare(ds, h800, budget, 4096)
        assert r["verdict"].p_afd == pytest.approx(v.p_afd, abs=1e-12)
        assert r["verdict"].ratio_interval == pytest.approx(v.ratio_interval, rel=1e-9)
        assert r["ratio"] == pytest.approx(float(afd.tokens_per_s_per_gpu / ep.tokens_per_s_per_gpu), rel=1e-12)
    # the asked SLO's rates and deployments given: the same rows (its jitter row included)
    ep, afd = compare(ds, h800, BUDGET, 4096)
    again = slo_verdicts(ds, h800, BUDGET, 4096, slos=(0.03, 0.075), asked=(
        (float(ep.tokens_per_s_per_gpu), float(afd.tokens_per_s_per_gpu)), (ep.deployment, afd.deployment)))
    assert [r["ratio"] for r in again] == pytest.approx([r["ratio"] for r in rows], rel=1e-12)
    assert [r["verdict"].p_afd for r in again] == pytest.approx([r["verdict"].p_afd for r in rows], abs=1e-12)
    assert all(r["jitter"]["assumption"] == "communication jitter" for r in again)


def _row(ms, p, ep=True, afd=True):
    return {"slo_ms": ms, "ratio": 1.0, "ep_feasible": ep, "afd_feasible": afd,
            "verdict": None if p is None else Verdict(p, (0.8, 1.2), 1.0), "asked": ms == 50}


def test_holds_words_by_hand():
    rows = [_row(30, 0.05), _row(50, 0.04), _row(75, 0.3), _row(100, 0.6)]
    # decided EP at 50 ms: holds where EP is decided (30, 50); undecided at 75 (EP more likely but P 0.3);
    # AFD more likely at 100
    assert holds_words(rows, "EP", True) == "holds for SLOs 30-50 ms (undecided at 75 ms; AFD more likely at 100 ms)"
    # the more likely design only (undecided verdict): EP at 30, 50, 75
    assert holds_words(rows, "EP", False) == "holds for SLOs 30-75 ms (AFD more likely at 100 ms)"
    assert holds_words(rows[:2], "EP", True) == "holds for SLOs 30-50 ms"
    assert holds_words([_row(30, 0.6), _row(50, 0.4), _row(75, 0.6)], "EP", False) == \
        "holds at 50 ms only (AFD more likely at 30, 75 ms)"
    gaps = [_row(30, 0.4), _row(50, 0.6), _row(75, 0.4)]
    assert holds_words(gaps, "EP", False) == "holds at 30, 75 ms (AFD more likely at 50 ms)"
    assert holds_words([_row(30, None, ep=False, afd=False), _row(50, 0.4)], "EP", False) == \
        "holds at 50 ms only (no feasible deployment at 30 ms)"
    assert holds_words([_row(30, None, ep=False), _row(50, 0.6)], "AFD", False) == "holds for SLOs 30-50 ms"
