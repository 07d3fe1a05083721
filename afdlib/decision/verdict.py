"""The verdict of one pair: P(AFD better), the ratio's interval and the tornado, from the shared
assumptions' quadrature (:mod:`afdlib.decision.uncertainty`) and the communication jitter of each
design's best deployment (:mod:`afdlib.decision.jitter`)."""
from __future__ import annotations

import numpy as np

from afdlib.decision.jitter import with_jitter
from afdlib.decision.uncertainty import FIRST_ORDER, NAMES, Verdict, quadrature, setting_ratios, uncertainties
from afdlib.decode.search import best_ep, compare
from afdlib.decode.step import Assumptions
from afdlib.inputs.specs import Budget, Hardware, Model, Precision


def verdict(model: Model, hardware: Hardware, budget: Budget, context, precision: Precision = Precision(),
            assumptions: Assumptions = Assumptions(), attn_hardware: Hardware | None = None,
            validated_only: bool = False, tornado: bool = True, ep_hardware: Hardware | None = None,
            bests: tuple | None = None) -> Verdict:
    """P(AFD better), the ratio's interval and (``tornado``) the tornado rows for one pair, the
    searches re-run at every quadrature setting of the shared assumptions (:func:`quadrature`), with
    the communication jitter of each design's best deployment at the defaults (``bests``: those two
    deployments where already found, else searched; :mod:`afdlib.decision.jitter`).
    ``ep_hardware``: EP's device where it differs from AFD's pools' (a what-if)."""
    log_r, weights, sd = quadrature(model, hardware, budget, context, precision, assumptions, attn_hardware,
                                    validated_only, ep_hardware)
    rows = tornado_rows(model, hardware, attn_hardware, budget, context, precision, assumptions, validated_only,
                        ep_hardware) if tornado else ()
    if bests is None:                   # each design's best at the defaults: the deployments jitter is simulated on
        ep, afd = compare(model, hardware, budget, context, precision, assumptions, attn_hardware,
                          validated_only=validated_only)
        if ep_hardware is not None:
            ep = best_ep(model, ep_hardware, budget, context, precision, assumptions, validated_only=validated_only)
        bests = (ep.deployment, afd.deployment) if float(ep.tokens_per_s_per_gpu) > 0 and float(
            afd.tokens_per_s_per_gpu) > 0 else None
    return with_jitter(Verdict.of(log_r, weights, sd, rows), model, bests, context, budget, precision, assumptions)


def tornado_rows(model, hardware, attn_hardware, budget, context, precision, assumptions, validated_only,
             ep_hardware=None) -> tuple[dict, ...]:
    """Per assumption the ratio at its outer nodes, every other at its default (1; none of the
    ``usable HBM`` and ``routing skew`` shares), widest first: one search of every end as a cell
    (the gap's with the budget's gap scaled per cell, the last two)."""
    u = {x.name: x for x in uncertainties()}
    names = (NAMES[0], NAMES[1], *FIRST_ORDER, NAMES[2])
    k = 1 + 2 * len(names)
    values = {name: np.full(k, 0.0 if u[name].kind == "uniform" and name != NAMES[2] else 1.0) for name in names}
    for j, name in enumerate(names):
        values[name][1 + 2 * j: 3 + 2 * j] = u[name].ends()
    r = setting_ratios(model, hardware, attn_hardware, budget, context, precision, assumptions,
                       values[NAMES[0]], values[NAMES[1]], validated_only, ep_hardware, values[NAMES[3]],
                       values[NAMES[4]], values[NAMES[5]], values[NAMES[2]])
    nominal = float(r[0])
    ends = {name: (r[1 + 2 * j], r[2 + 2 * j]) for j, name in enumerate(names)}
    lo, hi = u[NAMES[6]].ends()                     # the ratio's own error, a factor on AFD / EP
    ends[NAMES[6]] = (nominal * lo, nominal * hi)
    rows = [{"assumption": name, "low": float(a), "high": float(b), "nominal": nominal,
             "width": float(abs(b - a)), "at": u[name].percentiles(), "source": u[name].source}
            for name, (a, b) in ends.items()]
    return tuple(sorted(rows, key=lambda x: -x["width"]))
