"""Communication jitter in the verdict (issue 29 part 3): both designs' steps under per-call jitter of
their all-to-all, from the pipeline simulator on the one schedule, as an uncertain assumption.

The decode model's stage times are means; a published deployment's dispatch and combine vary from call
to call (``data/jitter.yaml``: xDeepServe's per-call minima, means and maxima). The assumption: every
communication stage of both designs (EP's dispatch and combine, AFD's transfer) drawn per call with a
lognormal factor of mean 1 and a coefficient of variation uniform from 0 (the model's default) to
:func:`cv_high`, the compute stages held. Each design's best deployment at the defaults is simulated
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
from afdlib.analysis.schedule import ROUTES, run
from afdlib.simulation.pipeline import Jitter, lognormal_factors, simulate, stage_times_of

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
    """The assumption as the verdict's others are stated: a CV uniform from 0 to :func:`cv_high`."""
    hi = max(call_cvs().values())
    return Uncertainty(NAME, "uniform", 0.0, 0.0, hi, "every communication stage's per-call time, both designs",
                       f"CV 0 to {hi:.2f}, the wider of xDeepServe's published per-call spreads of dispatch and "
                       "combine (data/jitter.yaml)")


def cv_high() -> float:
    return uncertainty().high


def losses(model, deployment, context, budget, precision, assumptions, cvs, steps: int = STEPS) -> np.ndarray:
    """Throughput loss of ``deployment`` (with its batch) at each CV of its communication stages."""
    step = decode_step(model, deployment, context, budget, precision, assumptions)
    st = stage_times_of(step, deployment.design, model.moe_layers)
    if step.sbo_parts is not None:
        return np.array([_sbo_loss(step, st, float(cv), steps) for cv in cvs])
    route = "afd" if deployment.design == "afd" else "ep-normal" if deployment.kernels == "normal" else "ep"
    return np.array([float(simulate(route, st["t_attn"], st["t_ffn"], st["t_comm"], st["micro_batches"],
                                    st["n_layers"], steps, Jitter(cv_comm=float(cv)), 0, st["extra_s"]).throughput_loss)
                     for cv in cvs])


def _sbo_loss(step, st: dict, cv: float, steps: int, seed: int = 0) -> float:
    """The loss of a single-batch-overlap step (route ``ep-sbo``): dispatch and combine drawn per call,
    the shared experts, up and down GEMMs beside them constant (the same seeded lognormal factors as
    :func:`afdlib.simulation.pipeline.simulate`)."""
    d = float(np.ravel(step.t_dispatch)[0])
    times = (st["t_attn"], d, *(float(np.ravel(x)[0]) for x in step.sbo_parts), st["t_comm"] - d)
    route, rng = ROUTES["ep-sbo"], np.random.default_rng(seed)

    def durations(k, layer, b):
        stage = route[k][0]
        return times[k] * lognormal_factors(cv, (steps,), rng) if stage in ("dispatch", "combine") and cv else times[k]
    jittered = float(np.mean(run(route, durations, 1, st["n_layers"], (steps,)).makespan)) + st["extra_s"]
    const = float(run(route, lambda k, layer, b: times[k], 1, st["n_layers"]).makespan) + st["extra_s"]
    return 1.0 - const / jittered


def term(model, ep_deployment, afd_deployment, context, budget, precision, assumptions, nominal: float
         ) -> tuple[float, float, dict]:
    """(shift of the mean log ratio, its variance, the tornado row) of :data:`NAME` for the two best
    deployments (``nominal``: AFD / EP at the defaults, the tornado row's centre)."""
    u = uncertainty()
    cvs = [u.low + x * (u.high - u.low) for x, _ in LEGENDRE]
    ep = losses(model, ep_deployment, context, budget, precision, assumptions, cvs)
    afd = losses(model, afd_deployment, context, budget, precision, assumptions, cvs)
    factor = (1 - afd) / (1 - ep)
    shift, var = first_order(1.0, [(factor[0], factor[-1])])
    row = {"assumption": NAME, "low": float(nominal * factor[0]), "high": float(nominal * factor[-1]),
           "nominal": float(nominal), "width": float(abs(nominal * (factor[-1] - factor[0]))), "at": u.percentiles(),
           "source": u.source, "losses": {"ep": ep.tolist(), "afd": afd.tolist(), "cv": cvs}}
    return float(shift), float(var), row


def with_jitter(v, model, bests, context, budget, precision, assumptions):
    """``v`` (a :class:`~afdlib.decision.uncertainty.Verdict`) with the communication jitter of ``bests``
    (EP's and AFD's best deployments at the defaults, with their batches; None: both designs are not
    feasible, ``v`` unchanged), its tornado row among the others where ``v`` has a tornado."""
    if bests is None:
        return v
    nominal = v.tornado[0]["nominal"] if v.tornado else float(np.exp(np.log(v.ratio_median)))
    shift, var, row = term(model, *bests, context, budget, precision, assumptions, nominal)
    return v.with_term(shift, var, row)
