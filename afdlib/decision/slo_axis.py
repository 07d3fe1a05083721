"""The question's axis: AFD / EP and P(AFD better) over per-token latency targets (issue 29 part 5).

A verdict answers one SLO (``--slo-ms``); the lead can depend on it (DeepSeek-V3 on H800: near 1.05
at 50 ms, below 1 at 30 ms and from 75 ms). :func:`slo_verdicts` searches both designs and the
verdict's quadrature at every SLO of :data:`SLOS_S` and the asked one as cells of one call (the
budget's SLO an array over the cells: the results of each SLO alone, tests/test_slo_axis.py), and
:func:`holds_words` names the SLOs at which the asked SLO's verdict holds.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from afdlib.decode.step import Assumptions
from afdlib.decision.jitter import term
from afdlib.decision.blocks import search_blocks
from afdlib.decision.uncertainty import DECIDED, Verdict, quadrature_of, quadrature_settings, ratios_of
from afdlib.inputs.specs import Budget, Hardware, Model, Precision

SLOS_S = (0.030, 0.050, 0.075, 0.100)
"""The per-token latency targets every answer is also given at, seconds (interactive to batch-like)."""


def slo_verdicts(model: Model, hardware: Hardware, budget: Budget, context, precision: Precision = Precision(),
                 assumptions: Assumptions = Assumptions(), attn_hardware: Hardware | None = None,
                 validated_only: bool = False, slos=SLOS_S, asked: tuple | None = None) -> list[dict]:
    """Per SLO (``slos`` and ``budget.slo_s``, ascending, each once): the SLO in ms, AFD / EP at the
    model's defaults (None where EP has no feasible deployment), both designs' feasibility, the
    :class:`~afdlib.decision.uncertainty.Verdict` (None where either design is infeasible at the defaults)
    whether it is the asked SLO (``asked``) and the communication jitter's tornado row of its verdict
    (``jitter``, :mod:`afdlib.decision.jitter`, at that SLO's best deployments). ``asked``: ((EP, AFD)
    tokens/s per GPU, (EP, AFD) best deployments) at the asked SLO where already searched (the other SLOs
    are searched alone). Every SLO's search and quadrature are blocks of one call (:func:`slo_blocks`)."""
    s, blocks = slo_blocks(budget, slos, asked)
    ep, afd, parts = search_blocks(model, hardware, attn_hardware, budget, context, precision, assumptions,
                                   validated_only, blocks)
    return slo_rows(model, hardware, attn_hardware, budget, context, precision, assumptions, s, asked, ep, afd, parts)


def slo_blocks(budget: Budget, slos=SLOS_S, asked: tuple | None = None) -> tuple[np.ndarray, list[dict]]:
    """(the SLOs, ascending, the asked one in; the blocks of settings
    (:func:`afdlib.decision.blocks.search_blocks`): the defaults at each SLO not already searched, then
    the quadrature's settings at every SLO, SLO-major)."""
    s = np.array(sorted({float(x) for x in slos} | {float(budget.slo_s)}))
    todo = s[s != float(budget.slo_s)] if asked is not None else s
    q = quadrature_settings()
    size = q["gap"].size
    quad = {k: np.tile(v, s.size) for k, v in q.items()} | {"slo": np.repeat(s, size)}
    return s, ([{"slo": todo}] if todo.size else []) + [quad]


def slo_rows(model, hardware, attn_hardware, budget, context, precision, assumptions, s, asked, ep, afd,
             parts) -> list[dict]:
    """:func:`slo_verdicts`' rows from the bests of :func:`slo_blocks`' blocks (``parts``: their slices,
    the defaults' first where any)."""
    here = s == float(budget.slo_s)
    e, a, bests = np.zeros(s.size), np.zeros(s.size), [None] * s.size
    where = np.flatnonzero(~here if asked is not None else np.ones(s.size, dtype=bool))
    if where.size:
        first = parts[0]
        e[where], a[where] = (np.asarray(x.tokens_per_s_per_gpu, dtype=float)[first] for x in (ep, afd))
        for k, i in enumerate(where):
            bests[i] = (ep.at(first.start + k).on(hardware).deployment,
                        afd.at(first.start + k).on(hardware, attn_hardware).deployment)
    if asked is not None:
        (e[here], a[here]), bests[int(np.flatnonzero(here)[0])] = asked
    log_r, w, sd = quadrature_of(ratios_of(ep, afd)[parts[-1]].reshape(s.size, -1))
    verdicts = {}
    for i in np.flatnonzero((e > 0) & (a > 0)):
        b = replace(budget, slo_s=float(s[i]))
        shift, var, row = term(model, *bests[i], context, b, precision, assumptions, float(a[i] / e[i]))
        verdicts[int(i)] = (Verdict.of(log_r[i], w, sd[i]).with_term(shift, var), row)
    return [{"slo_ms": float(x * 1e3), "ratio": float(a[i] / e[i]) if e[i] > 0 else None,
             "ep_feasible": bool(e[i] > 0), "afd_feasible": bool(a[i] > 0), "verdict": verdicts.get(i, (None,))[0],
             "jitter": verdicts.get(i, (None, None))[1], "asked": bool(x == float(budget.slo_s))} for i, x in enumerate(s)]


def axis_reason(rows: list[dict], recommendation: str, decided: bool) -> str:
    """One line of ``afd advise``'s reasons: the ratio and P(AFD better) at every SLO, and where the verdict holds."""
    return ("over SLOs: " + "; ".join(
        f"{r['slo_ms']:g} ms " + (_feasible_words(r) if r["verdict"] is None else
                                  f"AFD / EP {r['ratio']:.2f}, P(AFD better) {r['verdict'].p_afd:.2f}") for r in rows)
            + f"; the verdict {holds_words(rows, recommendation, decided)}")


def holds(row: dict, recommendation: str, decided: bool) -> bool:
    """Whether the asked SLO's verdict (``recommendation``, ``decided`` or only the more likely) holds
    at ``row``'s SLO: the same design the more likely there, and beyond the threshold if it was decided
    (one design alone feasible: that design)."""
    v = row["verdict"]
    if v is None:
        alone = "AFD" if row["afd_feasible"] and not row["ep_feasible"] else "EP" if row["ep_feasible"] and not row["afd_feasible"] else None
        return alone == recommendation
    return v.recommendation == recommendation and (not decided or v.p_afd <= DECIDED or v.p_afd >= 1 - DECIDED)


def holds_words(rows: list[dict], recommendation: str, decided: bool) -> str:
    """The SLOs at which the verdict holds, in words: "holds for SLOs 30-100 ms", "holds at 50 ms
    only" (with where the other design is the more likely), "holds for SLOs 50-75 ms (EP more likely at
    30 and 100 ms)"."""
    ok = [r["slo_ms"] for r in rows if holds(r, recommendation, decided)]
    if not ok:
        return "holds at none of these SLOs"
    other = [r for r in rows if not holds(r, recommendation, decided)]
    span = f"at {ok[0]:g} ms only" if len(ok) == 1 else (
        f"for SLOs {ok[0]:g}-{ok[-1]:g} ms" if len(ok) == len(rows) or _contiguous(rows, ok) else
        "at " + ", ".join(f"{x:g}" for x in ok) + " ms")
    if not other:
        return f"holds {span}"

    def state(r):
        v = r["verdict"]
        if v is None:
            return _feasible_words(r)
        return f"{v.recommendation} more likely" if v.recommendation != recommendation else "undecided"
    by: dict[str, list[float]] = {}
    for r in other:
        by.setdefault(state(r), []).append(r["slo_ms"])
    rest = "; ".join(f"{s} at {', '.join(f'{x:g}' for x in xs)} ms" for s, xs in by.items())
    return f"holds {span} ({rest})"


def _feasible_words(row: dict) -> str:
    """An SLO at which not both designs are feasible, in words."""
    if not (row["ep_feasible"] or row["afd_feasible"]):
        return "no feasible deployment"
    return ("only AFD" if row["afd_feasible"] else "only EP") + " feasible"


def _contiguous(rows: list[dict], ok: list[float]) -> bool:
    idx = [i for i, r in enumerate(rows) if r["slo_ms"] in ok]
    return idx == list(range(idx[0], idx[-1] + 1))


def axis_json(rows: list[dict]) -> list[dict]:
    """The rows for ``--json``: SLO, ratio, P(AFD better), its 10th-90th percentile, the more likely design."""
    return [{"slo_ms": r["slo_ms"], "ratio": r["ratio"],
             "p_afd": None if r["verdict"] is None else r["verdict"].p_afd,
             "ratio_interval": None if r["verdict"] is None else list(r["verdict"].ratio_interval),
             "recommendation": None if r["verdict"] is None else r["verdict"].recommendation,
             "feasible": {"ep": r["ep_feasible"], "afd": r["afd_feasible"]}} for r in rows]
