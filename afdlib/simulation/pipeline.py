"""The batch-overlap pipeline simulated step by step under jitter.

Stage times are the decode model's means times random factors of mean one, drawn independently
per step, layer and micro-batch (:class:`Jitter`): lognormal with a given coefficient of
variation for attention, FFN and network, or for the FFN the straggler factors of
:func:`straggler_factors` (the busiest rank's load over the mean, from routing samples),
rescaled to mean one. Each step is scheduled by the one core (:func:`afdlib.analysis.schedule.run`).
``throughput_loss`` compares the mean step time with the same configuration's constant-time
step, so jitter is the only difference.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from afdlib.analysis.schedule import POOLS, _route, _stage_times, run
from afdlib.errors import AfdError
from afdlib.routing.balance import balancedness, eplb_placement, route_tokens

MAX_STEPS = 10 ** 7
MAX_STAGE_DRAWS = 5 * 10 ** 7
"""Most random stage times one jittered simulation draws (steps x layers x micro-batches x settings;
each draw feeds every stage of one op: about 3-5 s on one core of a 2025 server). ``afd simulate``
refuses more before it starts (:func:`check_draws`), so a run inside its options' bounds cannot
hang; :func:`simulate` itself takes what its caller gives (a notebook's grid may be larger)."""
MAX_SCHEDULED_OPS = 5 * 10 ** 5
"""Most (layer, micro-batch) ops one simulation schedules one by one (layers x micro-batches x attention
domains: each a few numpy operations over the steps at once, about 10 us; 5 x 10^5 take about 5 s on
one core): refused beyond, jittered or not, before it starts (:func:`check_draws`)."""
LOSS_ROUNDING = 1e-9
"""A throughput loss smaller than this is the rounding of summing the same step times in another order
(-2.2e-16 with every stage constant), reported as 0."""
MAX_ROUTED_PAIRS = 10 ** 8
"""Most (token, expert) pairs ``afd simulate`` has :func:`straggler_factors` route (tokens x top-k x
layers x samples; about 3.5 s), checked before it starts (:func:`check_routed_pairs`)."""


def stage_draws(steps: int, n_layers: int, n_microbatches: int, settings: int = 1) -> int:
    """Random stage times a jittered simulation draws: one per step, layer, micro-batch and setting."""
    return int(steps) * int(n_layers) * int(n_microbatches) * int(settings)


def check_draws(steps: int, n_layers: int, n_microbatches: int, settings: int = 1, domains: int = 1) -> None:
    """:class:`AfdError` before any work when a simulation would schedule more than :data:`MAX_SCHEDULED_OPS`
    ops or, jittered, draw more than :data:`MAX_STAGE_DRAWS` stage times (``steps`` None: not jittered),
    naming the product and the bound (``domains``: AFD's attention domains, each with ``n_microbatches`` of
    its own)."""
    ops = int(n_layers) * int(n_microbatches) * int(domains)
    if ops > MAX_SCHEDULED_OPS:
        raise AfdError(f"{n_layers:,} layers x {n_microbatches} micro-batches"
                       + (f" x {domains} attention domains" if domains > 1 else "")
                       + f" = {ops:,} ops to schedule one by one, more than the {MAX_SCHEDULED_OPS:,} of one "
                       "simulation (a few seconds); lower the layers, the micro-batches"
                       + (" or the attention domains" if domains > 1 else ""))
    n = 0 if steps is None else stage_draws(steps, n_layers, n_microbatches * domains, settings)
    if n > MAX_STAGE_DRAWS:
        raise AfdError(f"{steps:,} steps x {n_layers:,} layers x {n_microbatches} micro-batches"
                       + (f" x {domains} attention domains" if domains > 1 else "")
                       + (f" x {settings:,} settings" if settings > 1 else "")
                       + f" = {n:,} random stage times, more than the {MAX_STAGE_DRAWS:,} one simulation draws "
                       "(a few seconds); lower the steps or the layers")

# ----------------------------------------------------------------------------- jitter

def lognormal_factors(cv: ArrayLike, size, rng: np.random.Generator) -> np.ndarray:
    """Random factors of mean 1 and coefficient of variation ``cv`` (lognormal; 1 where cv = 0; an
    array broadcasting with ``size`` gives each setting its own)."""
    cv = np.asarray(cv, dtype=float)
    if not np.any(cv):
        return np.ones(size)
    s2 = np.log1p(cv * cv)
    return np.exp(rng.standard_normal(size) * np.sqrt(s2) - s2 / 2)


def gamma_factors(cv: ArrayLike, size, rng: np.random.Generator) -> np.ndarray:
    """Random factors of mean 1 and coefficient of variation ``cv`` (gamma; cv = 1: exponential; 1
    where cv = 0; an array broadcasting with ``size`` gives each setting its own)."""
    cv = np.asarray(cv, dtype=float)
    if not np.any(cv):
        return np.ones(size)
    if cv.ndim == 0:
        k = 1.0 / (cv * cv)
        return rng.gamma(k, 1.0 / k, size)
    k = 1.0 / np.where(cv > 0, cv * cv, 1.0)
    return np.where(cv > 0, rng.gamma(np.broadcast_to(k, size), 1.0 / np.broadcast_to(k, size)), 1.0)


DISTRIBUTIONS = {"lognormal": lognormal_factors, "gamma": gamma_factors}


@dataclass(frozen=True)
class Jitter:
    """Random stage times: each stage's time is its mean times a factor of mean one, drawn per
    step, layer and micro-batch. ``cv_*``: coefficients of variation (``distribution``:
    lognormal or gamma); ``ffn_factors``: an empirical straggler distribution for the FFN stage,
    one row per layer (each row rescaled to mean one, so that what differs between layers in the
    long run stays in the mean stage time, and only the step-to-step spread is jitter), resampled
    per op and combined with ``cv_ffn`` when both are given."""

    cv_attn: float = 0.0
    cv_ffn: float = 0.0
    cv_comm: float = 0.0
    ffn_factors: np.ndarray | None = field(default=None, repr=False)
    distribution: str = "lognormal"
    cv_dispatch: float | None = None    # EP's dispatch and combine stages where they differ (None: cv_comm)
    cv_combine: float | None = None

    def __post_init__(self):
        for name in ("cv_attn", "cv_ffn", "cv_comm", "cv_dispatch", "cv_combine"):
            v = getattr(self, name)
            if v is None:
                continue
            v = np.asarray(v, dtype=float)         # a number, or one per setting of the simulation
            if not (np.all(np.isfinite(v)) and np.all((v >= 0) & (v <= 10))):
                raise AfdError(f"{name} must be in [0, 10], got {v}")
        if self.distribution not in DISTRIBUTIONS:
            raise AfdError(f"unknown distribution '{self.distribution}'; valid: {', '.join(DISTRIBUTIONS)}")
        if self.ffn_factors is not None:
            f = np.asarray(self.ffn_factors, dtype=float)
            if f.size == 0 or np.any(~np.isfinite(f)) or np.any(f <= 0):
                raise AfdError("ffn_factors must be a non-empty array of positive numbers")

    @property
    def none(self) -> bool:
        return (not any(np.any(getattr(self, n)) for n in ("cv_attn", "cv_ffn", "cv_comm", "cv_dispatch", "cv_combine")
                        if getattr(self, n) is not None) and self.ffn_factors is None)


def attention_cv(context_cv: ArrayLike, requests_per_microbatch: ArrayLike) -> np.ndarray:
    """Coefficient of variation of a micro-batch's attention time when its requests' cached
    lengths vary independently with ``context_cv``: attention reads every request's KV cache, so
    its time follows the sum of ``requests_per_microbatch`` lengths, whose CV is
    context_cv / sqrt(requests) (the fixed weight read and kernel costs, not counted, only lower
    it further: an upper bound)."""
    return np.asarray(context_cv, dtype=float) / np.sqrt(np.maximum(np.asarray(requests_per_microbatch, float), 1.0))


def check_routed_pairs(tokens: int, experts_per_token: int, layers: int, samples: int) -> None:
    """:class:`AfdError` before any work when :func:`straggler_factors` would route more than
    :data:`MAX_ROUTED_PAIRS` (token, expert) pairs."""
    pairs = int(tokens) * int(experts_per_token) * int(layers) * int(samples)
    if pairs > MAX_ROUTED_PAIRS:
        raise AfdError(f"straggler sampling: {int(tokens):,} tokens per micro-batch x top-{experts_per_token} x "
                       f"{layers} layers x {samples} samples = {pairs:,} routed pairs, more than the "
                       f"{MAX_ROUTED_PAIRS:,} one run samples (a few seconds); use a smaller batch or deployment")


def straggler_factors(popularity: ArrayLike, tokens: int, ranks: int, experts_per_token: int,
                      redundant: int = 0, samples: int = 4, seed: int = 0) -> np.ndarray:
    """The FFN stage's straggler factors: the busiest rank's load over the mean (1 / sigma) for
    routing samples of ``tokens`` tokens over ``ranks`` ranks, ``samples`` per row of
    ``popularity`` (one row per layer: measured expert loads, or ones for uniform routing), with
    an EPLB-style placement of ``redundant`` replicas fitted to each row. Returns the factors,
    shape (layers, samples)."""
    p = np.atleast_2d(np.asarray(popularity, dtype=float))
    if tokens < 1 or ranks < 1 or samples < 1:
        raise AfdError(f"tokens, ranks and samples must be >= 1, got {tokens}, {ranks}, {samples}")
    rng = np.random.default_rng(seed)
    out = []
    for row in p:
        batches = np.stack([route_tokens(int(tokens), experts_per_token, row, rng) for _ in range(samples)])
        sigma = balancedness(eplb_placement(row, ranks, redundant).rank_loads(batches))
        out.append(1.0 / np.asarray(sigma, dtype=float))
    return np.stack(out)


def stage_times_of(step, design: str, moe_layers: int) -> dict:
    """Per-micro-batch stage times of a decode-model step (:class:`afdlib.decode.step.Step`) for the
    simulator: ``t_attn``, ``t_ffn``, ``t_comm`` (s), the micro-batches, the MoE layers, and
    ``extra_s``, the rest of the step (dense layers, LM head, MTP drafts, fixed gap) taken as
    constant, and ``l_accept`` (:meth:`afdlib.decode.result.Step.per_micro_batch`, one unit for both
    designs). Arrays where the step is an array (one entry per setting)."""
    if design != step.design:
        raise AfdError(f"a {step.design.upper()} step cannot be simulated as {design.upper()}")
    m = int(step.micro_batches)
    per = dict(zip(("t_attn", "t_ffn", "t_comm"), step.per_micro_batch()))
    per["domains"] = int(step.domains)
    extra = np.maximum(np.asarray(step.step_s, dtype=float) - moe_layers * np.asarray(step.t_layer, dtype=float), 0)
    out = {**per, "micro_batches": m, "n_layers": int(moe_layers), "extra_s": extra,
           "l_accept": float(np.ravel(np.asarray(step.step_s) / np.asarray(step.tpot_s))[0])}
    if np.ndim(step.step_s) == 0:
        out.update({k: float(out[k]) for k in ("t_attn", "t_ffn", "t_comm", "extra_s")})
    return out


@dataclass(frozen=True)
class Simulation:
    """Mean results over the simulated steps, arrays over the settings (seconds, shares).

    ``step_s``: mean time of the MoE layers' pipeline per step plus ``extra_s``;
    ``step_const_s``: the same with constant stage times; ``throughput_loss`` = 1 - step_const_s /
    step_s; ``bubble_attn``, ``bubble_ffn``: idle shares of the pools over the pipeline (EP: both
    are the GPUs'); ``p99_step_s``: the 99th percentile of the step time."""

    step_s: np.ndarray
    step_const_s: np.ndarray
    throughput_loss: np.ndarray
    bubble_attn: np.ndarray
    bubble_ffn: np.ndarray
    bubble_attn_const: np.ndarray
    bubble_ffn_const: np.ndarray
    p99_step_s: np.ndarray
    steps: int


def simulate(design: str, t_attn: ArrayLike, t_ffn: ArrayLike, t_comm: ArrayLike, n_microbatches: int,
             n_layers: int, steps: int = 1000, jitter: Jitter = Jitter(), seed: int = 0,
             extra_s: ArrayLike = 0.0, chunk: int = 1 << 16, stage_times: dict | None = None,
             domains: int = 1) -> Simulation:
    """Simulate ``steps`` decode steps (module docstring). Stage times are per micro-batch and
    layer (seconds), arrays broadcasting over settings; ``extra_s`` is added to every step (dense
    layers, LM head, fixed gap). ``stage_times``: every stage of the route by name, where the three
    times do not say them (EP's dispatch and combine apart, single-batch overlap's shared experts and
    up and down GEMMs; stages without a CV of :class:`Jitter` are held). Seeded: the same arguments
    give the same result. Steps are simulated in chunks of ``chunk`` to bound memory. ``domains``: AFD's
    attention pool in that many data-parallel domains of ``n_microbatches`` each
    (:data:`afdlib.analysis.schedule.DOMAIN_RESOURCES`)."""
    n_microbatches = int(n_microbatches) * int(domains)
    if not 1 <= steps <= MAX_STEPS:
        raise AfdError(f"steps must be in 1..{MAX_STEPS}, got {steps}")
    route = _route(design)
    if stage_times is None:
        times = _stage_times(design, t_attn, t_ffn, t_comm)
    else:
        times = {stage: np.asarray(stage_times[stage], dtype=float) for stage, *_ in route}
        if any(np.any(~np.isfinite(t)) or np.any(t < 0) for t in times.values()):
            raise AfdError("stage times must be finite and >= 0")
    settings = np.broadcast(*times.values(), np.asarray(extra_s, dtype=float)).shape
    const = run(route, lambda k, layer, b: times[route[k][0]], n_microbatches, n_layers, settings, domains=domains)
    pools = POOLS[design]
    extra = np.asarray(extra_s, dtype=float)
    if jitter.none:
        step = const.makespan + extra
        bub = (const.idle_share(pools[0]), const.idle_share(pools[1]))
        return Simulation(step, step, np.zeros(settings), *bub, *bub, step, steps)
    draw = DISTRIBUTIONS[jitter.distribution]
    rng = np.random.default_rng(seed)
    ffn_pool = None
    if jitter.ffn_factors is not None:
        f = np.asarray(jitter.ffn_factors, dtype=float)
        f = np.atleast_2d(f)
        ffn_pool = (f / f.mean(axis=1, keepdims=True)).ravel()
    cv = {"attention": jitter.cv_attn, "ffn": jitter.cv_ffn, "comm": jitter.cv_comm,
          "dispatch": jitter.cv_comm if jitter.cv_dispatch is None else jitter.cv_dispatch,
          "combine": jitter.cv_comm if jitter.cv_combine is None else jitter.cv_combine}
    total, busy_a, busy_f, makespans = 0.0, 0.0, 0.0, []
    done = 0
    while done < steps:
        n = min(chunk, steps - done)
        size = (n,) + settings

        def durations(k, layer, b, size=size):
            stage = route[k][0]
            c = cv.get(stage, 0.0)
            factor = draw(c, size, rng) if np.any(c) else 1.0
            if stage == "ffn" and ffn_pool is not None:
                factor = factor * ffn_pool[rng.integers(0, ffn_pool.size, size)]
            return times[stage] * factor

        r = run(route, durations, n_microbatches, n_layers, size, domains=domains)
        makespans.append(r.makespan)
        total = total + r.makespan.sum(axis=0)
        busy_a = busy_a + r.busy_of(pools[0]).sum(axis=0)
        busy_f = busy_f + r.busy_of(pools[1]).sum(axis=0)
        done += n
    span = np.concatenate(makespans, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        bubble_a = np.where(total > 0, 1 - busy_a / total, 0.0)
        bubble_f = np.where(total > 0, 1 - busy_f / total, 0.0)
        step = total / steps + extra
        step_const = const.makespan + extra
        loss = np.where(step > 0, 1 - step_const / step, 0.0)
        # the same makespans summed in another order differ in their last bits: that is no loss nor gain
        loss = np.where(np.abs(loss) < LOSS_ROUNDING, 0.0, loss)
    return Simulation(step, step_const, loss, bubble_a, bubble_f, const.idle_share(pools[0]),
                      const.idle_share(pools[1]), np.percentile(span, 99, axis=0) + extra, steps)
