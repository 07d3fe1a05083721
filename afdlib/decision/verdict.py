"""The verdict of one pair: P(AFD better), the ratio's interval and the tornado, from the shared
assumptions' quadrature (:mod:`afdlib.decision.uncertainty`) and the communication jitter of each
design's best deployment (:mod:`afdlib.decision.jitter`)."""
from __future__ import annotations

import numpy as np

from afdlib.decision.jitter import with_jitter
from afdlib.decision.blocks import search_blocks
from afdlib.decision.uncertainty import (FIRST_ORDER, NAMES, Verdict, quadrature_of, quadrature_settings, ratios_of,
                                       setting_ratios, uncertainties)
from afdlib.decode.step import Assumptions
from afdlib.inputs.specs import Budget, Hardware, Model, Precision


def verdict(model: Model, hardware: Hardware, budget: Budget, context, precision: Precision = Precision(),
            assumptions: Assumptions = Assumptions(), attn_hardware: Hardware | None = None,
            validated_only: bool = False, tornado: bool = True, ep_hardware: Hardware | None = None,
            bests: tuple | None = None) -> Verdict:
    """P(AFD better), the ratio's interval and (``tornado``) the tornado rows for one pair, the
    searches re-run at every quadrature setting of the shared assumptions
    (:func:`~afdlib.decision.uncertainty.quadrature`) and the tornado's ends, as blocks of one call, with
    the communication jitter of each design's best deployment at the defaults (``bests``: those two
    deployments where already found, else searched; :mod:`afdlib.decision.jitter`).
    ``ep_hardware``: EP's device where it differs from AFD's pools' (a what-if)."""
    # the tornado's first cell is at the defaults; without it, one cell there where the bests are not given
    blocks = [quadrature_settings()] + ([tornado_settings()] if tornado else [{}] if bests is None else [])
    ep, afd, (quad, *rest) = search_blocks(model, hardware, attn_hardware, budget, context, precision, assumptions,
                                           validated_only, blocks, ep_hardware)
    rest = rest[0] if rest else None
    r = ratios_of(ep, afd)
    log_r, weights, sd = quadrature_of(r[quad])
    rows = tornado_of(r[rest]) if tornado else ()
    if bests is None:                   # each design's best at the defaults: the deployments jitter is simulated on
        e, a = ep.at(rest.start), afd.at(rest.start)
        bests = ((e.on(ep_hardware or hardware).deployment, a.on(hardware, attn_hardware).deployment)
                 if float(e.tokens_per_s_per_gpu) > 0 and float(a.tokens_per_s_per_gpu) > 0 else None)
    return with_jitter(Verdict.of(log_r, weights, sd, rows), model, bests, context, budget, precision, assumptions)


def tornado_rows(model, hardware, attn_hardware, budget, context, precision, assumptions, validated_only,
             ep_hardware=None) -> tuple[dict, ...]:
    """Per assumption the ratio at its outer nodes, every other at its default (1; none of the
    ``usable HBM`` and ``routing skew`` shares), widest first: one search of every end as a cell
    (:func:`tornado_settings`, :func:`tornado_of`)."""
    return tornado_of(setting_ratios(model, hardware, attn_hardware, budget, context, precision, assumptions,
                                     validated_only=validated_only, ep_hardware=ep_hardware, **tornado_settings()))


def _ends() -> tuple[dict, tuple]:
    u = {x.name: x for x in uncertainties()}
    return u, (NAMES[0], NAMES[1], *FIRST_ORDER, NAMES[2])


def tornado_settings() -> dict[str, np.ndarray]:
    """The tornado's cells as settings (:func:`afdlib.decision.uncertainty.setting_bests`): the defaults,
    then each assumption's two outer nodes with every other at its default."""
    u, names = _ends()
    k = 1 + 2 * len(names)
    values = {name: np.full(k, 0.0 if u[name].kind == "uniform" and name != NAMES[2] else 1.0) for name in names}
    for j, name in enumerate(names):
        values[name][1 + 2 * j: 3 + 2 * j] = u[name].ends()
    return dict(zip(("compute", "network", "fixed", "memory", "skew", "gap"),
                    (values[n] for n in (NAMES[0], NAMES[1], NAMES[3], NAMES[4], NAMES[5], NAMES[2]))))


def tornado_of(r: np.ndarray) -> tuple[dict, ...]:
    """The tornado's rows, widest first, from the ratios ``r`` at :func:`tornado_settings`."""
    u, names = _ends()
    nominal = float(r[0])
    ends = {name: (r[1 + 2 * j], r[2 + 2 * j]) for j, name in enumerate(names)}
    lo, hi = u[NAMES[6]].ends()                     # the ratio's own error, a factor on AFD / EP
    ends[NAMES[6]] = (nominal * lo, nominal * hi)
    rows = [{"assumption": name, "low": float(a), "high": float(b), "nominal": nominal,
             "width": float(abs(b - a)), "at": u[name].percentiles(), "source": u[name].source}
            for name, (a, b) in ends.items()]
    return tuple(sorted(rows, key=lambda x: -x["width"]))
