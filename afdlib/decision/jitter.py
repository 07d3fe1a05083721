"""Communication jitter in the verdict (issue 29 part 3): both designs' steps under per-call jitter of
their all-to-all, from the pipeline simulator on the one schedule, as an uncertain assumption.

The decode model's stage times are means; a published deployment's dispatch and combine vary from call
to call (``data/jitter.yaml``: xDeepServe's per-call minima, means and maxima). The assumption: every
dispatch and combine of both designs drawn per call with a lognormal factor of mean 1, at a share u of
their published coefficients of variation (:func:`call_cvs`: dispatch 0.21, combine 0.47), u uniform from
0 (the model's default) to 1, the compute stages held. AFD's one transfer stage carries a dispatch and a
combine, independent draws: its CV is that of their sum, sqrt((p c_d)^2 + ((1 - p) c_c)^2) with p the
dispatch's share of the wire bytes. Each design's best deployment at the defaults is simulated
(:func:`afdlib.simulation.pipeline.simulate`, seeded) at the uniform share's two Gauss-Legendre nodes,
and AFD / EP moves by (1 - AFD's throughput loss) / (1 - EP's): a first-order term of the verdict
(:func:`afdlib.decision.uncertainty.first_order`), its shift of the mean log ratio and its variance.
Read as: each design keeps its deployment and batch (not re-chosen, and its TPOT then passes the SLO by
the loss); EP's single-batch overlap is simulated on its own route (dispatch beside the shared experts,
combine beside the down GEMM), where a longer call than its compute partner shows.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from afdlib.decision.uncertainty import LEGENDRE, Uncertainty, first_order
from afdlib.decode.deployment import decode_step
from afdlib.inputs.catalog import data_dir
from afdlib.inputs.files import read_yaml
from afdlib.simulation.pipeline import Jitter, simulate, stage_times_of

NAME = "communication jitter"
STEPS = 300
"""Simulated steps per design and CV (seeded): the loss's sampling error is below 0.1% at these CVs."""


@lru_cache(maxsize=1)
def call_cvs() -> dict[str, float]:
    """Per-call coefficient of variation of dispatch and combine, ``(mean - min) / mean`` (an exponential
    tail above each call's floor, ``data/jitter.yaml``): 0.21 and 0.47."""
    calls = read_yaml(data_dir() / "jitter.yaml")["calls_us"]
    return {k: (float(v["mean"]) - float(v["min"])) / float(v["mean"]) for k, v in calls.items()}


def uncertainty() -> Uncertainty:
    """The assumption as the verdict's others are stated: a share uniform from 0 to 1 of the published
    per-call CVs (:func:`call_cvs`)."""
    c = call_cvs()
    return Uncertainty(NAME, "uniform", 0.0, 0.0, 1.0, "every dispatch's and combine's per-call time, both designs",
                       f"0 to xDeepServe's published per-call spreads (CV {c['dispatch']:.2f} dispatch, "
                       f"{c['combine']:.2f} combine; data/jitter.yaml), a share of the way")


def cv_high() -> float:
    """The largest per-call CV the assumption reaches (combine's)."""
    return max(call_cvs().values())


def losses(model, deployment, context, budget, precision, assumptions, shares, steps: int = STEPS) -> np.ndarray:
    """Throughput loss of ``deployment`` (with its batch) at each share of the per-call CVs, the shares
    as settings of one simulation on the deployment's own route: EP's dispatch and combine apart at the
    step's own split (:attr:`afdlib.decode.result.Step.t_dispatch`), single-batch overlap with its
    stages (``sbo_parts``), AFD's one transfer at the CV of a dispatch plus a combine."""
    step = decode_step(model, deployment, context, budget, precision, assumptions)
    st = stage_times_of(step, deployment.design, model.moe_layers)
    c, u = call_cvs(), np.asarray(shares, dtype=float)
    times = None
    if deployment.design == "afd":
        route = "afd"
        p = precision.bytes("dispatch") / precision.wire_bytes
        jitter = Jitter(cv_comm=u * np.hypot(p * c["dispatch"], (1 - p) * c["combine"]))
    else:
        route = "ep-sbo" if step.sbo_parts is not None else "ep-normal" if deployment.kernels == "normal" else "ep"
        d = float(np.ravel(step.t_dispatch)[0]) / st["micro_batches"]
        times = {"attention": st["t_attn"], "dispatch": d, "ffn": st["t_ffn"], "combine": st["t_comm"] - d}
        if step.sbo_parts is not None:
            times.update(zip(("shared", "up", "down"), (float(np.ravel(x)[0]) for x in step.sbo_parts)))
        jitter = Jitter(cv_dispatch=u * c["dispatch"], cv_combine=u * c["combine"])
    return np.asarray(simulate(route, st["t_attn"], st["t_ffn"], st["t_comm"], st["micro_batches"], st["n_layers"],
                               steps, jitter, 0, np.full(u.shape, st["extra_s"]), stage_times=times,
                               domains=st["domains"]).throughput_loss,
                      dtype=float)


def term(model, ep_deployment, afd_deployment, context, budget, precision, assumptions, nominal: float
         ) -> tuple[float, float, dict]:
    """(shift of the mean log ratio, its variance, the tornado row) of :data:`NAME` for the two best
    deployments (``nominal``: AFD / EP at the defaults, the tornado row's centre)."""
    u = uncertainty()
    shares = [u.low + x * (u.high - u.low) for x, _ in LEGENDRE]
    ep = losses(model, ep_deployment, context, budget, precision, assumptions, shares)
    afd = losses(model, afd_deployment, context, budget, precision, assumptions, shares)
    factor = (1 - afd) / (1 - ep)
    shift, var = first_order(1.0, [(factor[0], factor[-1])])
    row = {"assumption": NAME, "low": float(nominal * factor[0]), "high": float(nominal * factor[-1]),
           "nominal": float(nominal), "width": float(abs(nominal * (factor[-1] - factor[0]))), "at": u.percentiles(),
           "source": u.source, "losses": {"ep": ep.tolist(), "afd": afd.tolist(), "share": [float(x) for x in shares]}}
    return float(shift), float(var), row


def with_jitter(v, model, bests, context, budget, precision, assumptions):
    """``v`` (a :class:`~afdlib.decision.uncertainty.Verdict`) with the communication jitter of ``bests``
    (EP's and AFD's best deployments at the defaults, with their batches; None: both designs are not
    feasible, ``v`` unchanged), its tornado row among the others where ``v`` has a tornado."""
    if bests is None:
        return v
    nominal = v.tornado[0]["nominal"] if v.tornado else v.ratio_median   # the row's centre (shown with a tornado)
    shift, var, row = term(model, *bests, context, budget, precision, assumptions, nominal)
    return v.with_term(shift, var, row)
