"""P(AFD beats EP): the decode model's uncertain assumptions sampled jointly, one random stream for both designs.

A verdict compares two predictions, each with an error. Instead of a band around 1, each uncertain
assumption gets a distribution from its source (:func:`uncertainties`), the draws are applied to
both designs' best deployments at once (the same draw of a shared assumption moves both), and the
answer is the share of draws in which AFD gives more output tokens per second per GPU than EP under
the SLO (``p_afd``), with the 10th-90th percentile of the AFD / EP ratio.

**What is drawn** (:data:`NAMES`; every distribution is centred on the model's default, in log
space for factors):

* ``compute kernels``: a factor on every compute stage (attention, experts, dense layers, LM head,
  MTP drafts) of both designs, lognormal with the calibrated GEMM curve's rms log residual over its
  kernel measurements (``data/kernel_efficiency.yaml``): the same kernels run in both designs.
* ``networks``: a factor on every transfer (EP's dispatch and combine, AFD's t_c) of both designs,
  lognormal with the rms log deviation of the all-to-all model from DeepEP's published low-latency
  times across the NIC (EP16-EP256, :func:`afdlib.decode.validation.deepep_rows`).
* ``gap per step``: a share of the budget's gap per step, uniform between none and all of it (the
  default :data:`afdlib.decode.step.DECODE_T_GAP_S` is the upper end Step-3's figures allow); the
  same gap for both designs.
* ``EP composition`` and ``AFD composition``: what the components do not explain, a factor on each
  design's throughput drawn independently, lognormal with the rms log error of that design's
  published deployments (:func:`afdlib.decode.validation.validation_rows`; a design with fewer than
  :data:`MIN_CASES` cases takes all cases' spread). These errors already hold the kernels', the
  networks' and the gap's share, so the spread is counted more than once: conservative.

**How a draw is evaluated.** Each design's best deployment (from :mod:`afdlib.decode.search`) is
evaluated once over a grid of batches (:data:`BATCH_SPAN` around its own); a draw scales its
per-micro-batch stage times, reschedules the MoE layers with the one max-plus schedule
(:func:`afdlib.analysis.schedule.ep_moe_time`, :func:`~afdlib.analysis.schedule.afd_moe_time`), and
takes the largest batch of the grid that meets the SLO and fits in memory: the batch follows the
draw, the deployment's form and size do not (a faster kernel does not re-run the search).
Seeded (:data:`SEED`): the same draws for every pair, so the advice table is byte-stable and
pairs are compared on the same stream.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from afdlib.analysis.schedule import afd_moe_time, ep_moe_time
from afdlib.decode.deployment import step_function
from afdlib.decode.step import DECODE_T_GAP_S, Assumptions
from afdlib.errors import AfdError
from afdlib.inputs.specs import Budget, Model, Precision

NAMES = ("compute kernels", "networks", "gap per step", "EP composition", "AFD composition")
"""The uncertain assumptions, in the order of :func:`uncertainties`."""

SEED = 20_260_212
"""The random stream's seed (the paper's arXiv month): every pair gets the same draws."""
N_DRAWS = 512
"""Draws per pair: the 10th and 90th percentiles to about +-2% of the ratio."""
DECIDED = 0.1
"""A pair is decided when P(AFD better) <= this or >= 1 - this."""
MIN_CASES = 3
"""A design's composition spread comes from its own published deployments only from this many on."""
BATCH_SPAN = (0.25, 2.5)
"""Batches evaluated per draw, as multiples of the deployment's own (the SLO-chosen) batch: every
whole batch between, or :data:`MAX_BATCHES` evenly spaced whole batches where there are more."""
MAX_BATCHES = 400


@dataclass(frozen=True)
class Uncertainty:
    """One uncertain assumption: ``kind`` lognormal (``scale``: sigma of the log factor) or uniform
    (``low``, ``high``); what it applies to and its source."""

    name: str
    kind: str
    scale: float
    low: float
    high: float
    applies_to: str
    source: str

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` draws (even), antithetic: the second half mirrors the first (z and -z, u and 1 - u),
        so that two designs identical by construction come out at exactly P = 1/2."""
        half = rng.standard_normal(n // 2) if self.kind == "lognormal" else rng.uniform(0.0, 1.0, n // 2)
        if self.kind == "lognormal":
            return np.exp(self.scale * np.concatenate([half, -half]))
        return self.low + (self.high - self.low) * np.concatenate([half, 1.0 - half])

    def quantile(self, q: float) -> float:
        """The ``q`` quantile (for the tornado chart's ends)."""
        if self.kind == "lognormal":
            from statistics import NormalDist
            return float(np.exp(NormalDist(0.0, self.scale).inv_cdf(q)))
        return self.low + q * (self.high - self.low)

    nominal: float = 1.0
    """The model's default (every factor's and the gap share's: 1)."""


def _rms_log(ratios) -> float:
    r = np.asarray(list(ratios), dtype=float)
    return float(np.sqrt(np.mean(np.log(r) ** 2)))


@lru_cache(maxsize=1)
def uncertainties() -> tuple[Uncertainty, ...]:
    """The distributions of :data:`NAMES`, each from its source (module docstring)."""
    from afdlib.decode.validation import deepep_rows, validation_rows
    from afdlib.inputs.catalog import data_dir
    from afdlib.inputs.files import read_yaml
    fit = read_yaml(data_dir() / "kernel_efficiency.yaml")["gemm"]["residuals"]["all"]
    nic = [r for r in deepep_rows() if r["ep_size"] >= 16]
    net = _rms_log(r["model_both_us"] / r["both_us"] for r in nic)
    rows = validation_rows()
    pooled = _rms_log(1 + r["error"] for r in rows)

    def spread(design):
        errs = [1 + r["error"] for r in rows if r["design"] == design]
        return (_rms_log(errs), f"rms log error of its {len(errs)} published deployments") if len(errs) >= MIN_CASES \
            else (pooled, f"rms log error of all {len(rows)} published deployments (it has {len(errs)})")
    (s_ep, src_ep), (s_afd, src_afd) = spread("ep"), spread("afd")
    return (
        Uncertainty(NAMES[0], "lognormal", float(fit["rms_log"]), 0, 0, "compute stages of both designs",
                    f"calibrated GEMM curve's rms log residual over {fit['points']} kernel times"),
        Uncertainty(NAMES[1], "lognormal", net, 0, 0, "transfers of both designs",
                    f"all-to-all model against DeepEP's low-latency times, {len(nic)} sizes across the NIC"),
        Uncertainty(NAMES[2], "uniform", 0.0, 0.0, 1.0, "the gap per step of both designs, as a share of its value",
                    f"none to the default, the upper end Step-3's figures allow ({DECODE_T_GAP_S * 1e3:g} ms)"),
        Uncertainty(NAMES[3], "lognormal", s_ep, 0, 0, "EP's throughput", src_ep),
        Uncertainty(NAMES[4], "lognormal", s_afd, 0, 0, "AFD's throughput", src_afd),
    )


@lru_cache(maxsize=4)
def draws(n: int = N_DRAWS, seed: int = SEED) -> dict[str, np.ndarray]:
    """``n`` joint draws of every uncertainty (name -> array), from one seeded stream (antithetic:
    :meth:`Uncertainty.draw`)."""
    if n < 2 or n % 2:
        raise AfdError(f"draws must be an even number >= 2, got {n}")
    rng = np.random.default_rng(seed)
    return {u.name: u.draw(rng, n) for u in uncertainties()}


def _curve(model: Model, deployment, context, budget: Budget, precision: Precision, assumptions: Assumptions):
    """The deployment's step over the batch grid (requests per (attention) GPU), and the grid."""
    base = float(np.asarray(deployment.requests))
    lo, hi = max(1.0, np.floor(BATCH_SPAN[0] * base)), max(1.0, np.ceil(BATCH_SPAN[1] * base))
    stride = max(1.0, np.ceil((hi - lo) / MAX_BATCHES))
    batches = np.unique(np.append(np.arange(lo, hi + 1, stride), base))
    step_of = step_function(model, deployment, context, budget, precision, assumptions)
    return step_of(batches), batches


def _rates(st, model: Model, deployment, budget: Budget, compute, network, gap) -> np.ndarray:
    """Tokens/s per GPU of each draw (the draws' factors are arrays of one shape; the batch axis last),
    at the largest batch of the grid meeting the SLO and fitting in memory (0 where none does)."""
    c, n, g = (np.asarray(x, dtype=float)[..., None] for x in (compute, network, gap))
    g = g * st.t_gap_s
    m, layers = int(st.micro_batches), model.moe_layers
    t_a, t_f, t_c = st.per_micro_batch()
    moe_nominal = layers * np.asarray(st.t_layer, dtype=float)
    rest = np.asarray(st.step_s, dtype=float) - moe_nominal - st.t_gap_s
    if st.design == "ep":
        t_d = np.asarray(st.t_dispatch, dtype=float) / m
        moe, _ = ep_moe_time(c * t_a, n * t_d, c * t_f, n * (t_c - t_d), m, str(np.asarray(deployment.kernels)), layers)
    else:
        moe, _ = afd_moe_time(c * t_a, c * t_f, n * t_c, m, layers)
    step = moe + c * rest + g
    rate = np.asarray(st.tokens_per_s_per_gpu, dtype=float) * np.asarray(st.step_s, dtype=float) / step
    ok = (step / budget.l_accept <= budget.slo_s * (1 + 1e-9)) & np.asarray(st.fits_memory)
    return np.where(ok, rate, 0.0).max(axis=-1)


@dataclass(frozen=True)
class Verdict:
    """``p_afd``: share of draws in which AFD gives more tokens/s per GPU than EP; ``ratio_interval``:
    10th and 90th percentile of AFD / EP; ``decided``: p_afd <= :data:`DECIDED` or >= 1 - it."""

    p_afd: float
    ratio_interval: tuple[float, float]
    ratio_median: float
    draws: int

    @property
    def decided(self) -> bool:
        return self.p_afd <= DECIDED or self.p_afd >= 1 - DECIDED

    def words(self, recommendation: str) -> str:
        """The one-line verdict: "EP, P(AFD better) = 0.07" (and "undecided" when it is not)."""
        p = f"P(AFD better) = {self.p_afd:.2f}"
        return f"{recommendation}, {p}" if self.decided else f"{recommendation} (undecided), {p}"


def ratio_draws(model: Model, ep, afd, budget: Budget, context, precision: Precision = Precision(),
                assumptions: Assumptions = Assumptions(), values: dict | None = None) -> np.ndarray:
    """AFD / EP tokens/s per GPU under ``values`` (name -> array of draws; default :func:`draws`) for
    the best deployments ``ep`` and ``afd`` (:class:`afdlib.decode.search.Best`, one pair)."""
    v = draws() if values is None else values
    st_e, _ = _curve(model, ep.deployment, context, budget, precision, assumptions)
    st_a, _ = _curve(model, afd.deployment, context, budget, precision, assumptions)
    e = _rates(st_e, model, ep.deployment, budget, v[NAMES[0]], v[NAMES[1]], v[NAMES[2]]) * v[NAMES[3]]
    a = _rates(st_a, model, afd.deployment, budget, v[NAMES[0]], v[NAMES[1]], v[NAMES[2]]) * v[NAMES[4]]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(e > 0, a / np.where(e > 0, e, 1.0), np.where(a > 0, np.inf, 1.0))


def verdict(model: Model, ep, afd, budget: Budget, context, precision: Precision = Precision(),
            assumptions: Assumptions = Assumptions()) -> Verdict:
    """P(AFD better) and the ratio's 10th-90th percentile over :func:`draws`."""
    r = ratio_draws(model, ep, afd, budget, context, precision, assumptions)
    lo, mid, hi = np.percentile(r, [10, 50, 90])
    return Verdict(float(np.mean(r > 1.0)), (float(lo), float(hi)), float(mid), int(r.size))


def tornado_rows(model: Model, ep, afd, budget: Budget, context, precision: Precision = Precision(),
                 assumptions: Assumptions = Assumptions()) -> list[dict]:
    """One row per uncertainty: the AFD / EP ratio with that assumption at its 10th and at its 90th
    percentile and every other at the model's default (``low``, ``high``, ``nominal``), widest first."""
    base = {u.name: np.array([u.nominal]) for u in uncertainties()}
    nominal = float(ratio_draws(model, ep, afd, budget, context, precision, assumptions, base)[0])
    rows = []
    for u in uncertainties():
        ends = [float(ratio_draws(model, ep, afd, budget, context, precision, assumptions,
                                  {**base, u.name: np.array([u.quantile(q)])})[0]) for q in (0.1, 0.9)]
        rows.append({"assumption": u.name, "low": ends[0], "high": ends[1], "nominal": nominal,
                     "width": abs(ends[1] - ends[0]), "source": u.source})
    return sorted(rows, key=lambda r: -r["width"])
