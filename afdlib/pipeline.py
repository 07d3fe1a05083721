"""The batch-overlap pipeline: one scheduling core, and a simulator of decode steps under jitter.

**Scheduling core** (:func:`run`). A decode step runs ``n_layers`` layers; every layer is the
same route of stages, each on a resource (:data:`ROUTES`), and ``n_microbatches`` micro-batches
pass through them. A resource runs one stage at a time, in program order: (layer, stage,
micro-batch) in lexicographic order, the order in which a serving engine issues its kernels and
transfers. On a route where every stage has a resource of its own (AFD) this is also the
first-come-first-served order, since micro-batches cannot overtake one another. An op starts
when its micro-batch's previous op has ended and its resource has finished the op before it:

    start = max(end of the micro-batch's previous op, end of the resource's previous op)

a max-plus recurrence, vectorised over any batch of independent runs (steps, settings): one
Python iteration per (layer, stage, micro-batch) position, numpy across runs. The Figure 5
timelines (:mod:`afdlib.timeline`) are scheduled by the same function.

**Routes.** ``afd``: attention pool -> network -> FFN pool, the network carrying dispatch and
combine of a micro-batch as one stage of ``t_c`` (the paper's Eqs. 2-4, in which t_c is one
lane); ``afd-duplex``: dispatch and combine on the two directions of the links, each its own
resource (MegaScale-Infer's timing, with T_c each way); ``ep``: attention and experts on the same
GPUs, dispatch and combine on the network (DeepSeek's dual micro-batch overlap with two
micro-batches).

**Simulator** (:func:`simulate`). Stage times are the decode model's means times random factors
of mean one, drawn independently per step, layer and micro-batch (:class:`Jitter`): lognormal
with a given coefficient of variation for attention, FFN and network, or for the FFN the
straggler factors of :func:`straggler_factors` (the busiest rank's load over the mean, from
routing samples), rescaled to mean one. ``throughput_loss`` compares the mean step time with the
same configuration's constant-time step, so jitter is the only difference.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike

from .errors import AfdError

ROUTES = {
    "afd": (("attention", "attention"), ("comm", "network"), ("ffn", "ffn")),
    "afd-duplex": (("attention", "attention"), ("dispatch", "to FFN"), ("ffn", "ffn"), ("combine", "to attention")),
    "ep": (("attention", "GPU"), ("dispatch", "network"), ("ffn", "GPU"), ("combine", "network")),
}
"""Stages of one layer as (stage, resource), per design."""

POOLS = {"afd": ("attention", "ffn"), "afd-duplex": ("attention", "ffn"), "ep": ("GPU", "GPU")}
"""The resources whose idle share is reported as (attention bubble, FFN bubble)."""

MAX_STEPS = 10 ** 7


@dataclass(frozen=True)
class Run:
    """One scheduled batch of runs: ``makespan`` and ``busy`` (per resource) have the batch's
    shape; ``events`` lists (stage, micro-batch, layer, start, duration) when recorded."""

    makespan: np.ndarray
    busy: dict
    events: list | None = None

    def idle_share(self, resource: str) -> np.ndarray:
        """Share of the makespan the resource is idle (its bubble)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.makespan > 0, 1.0 - self.busy[resource] / self.makespan, 0.0)


def run(route, durations: Callable[[int, int, int], ArrayLike], n_microbatches: int, n_layers: int,
        shape: tuple = (), record: bool = False) -> Run:
    """Schedule ``n_layers`` repetitions of ``route`` ((stage, resource) pairs) for
    ``n_microbatches`` micro-batches in program order (module docstring).

    ``durations(k, layer, microbatch)`` (``k``: the stage's index in ``route``) returns the op's
    duration, a number or an array
    broadcasting to ``shape`` (the batch of independent runs). ``record`` keeps every event
    (for drawing; use it with scalar durations).
    """
    if n_microbatches < 1 or n_layers < 1:
        raise AfdError(f"need at least one micro-batch and one layer, got {n_microbatches} and {n_layers}")
    end = [np.zeros(shape) for _ in range(n_microbatches)]
    free = {res: np.zeros(shape) for _, res in route}
    busy = {res: np.zeros(shape) for _, res in route}
    events = [] if record else None
    for layer in range(n_layers):
        for k, (stage, res) in enumerate(route):
            for b in range(n_microbatches):
                d = np.asarray(durations(k, layer, b), dtype=float)
                start = np.maximum(end[b], free[res])
                end[b] = start + d
                free[res] = end[b]
                busy[res] = busy[res] + d
                if record:
                    events.append((stage, b, layer, float(start), float(d)))
    makespan = end[0]
    for e in end[1:]:
        makespan = np.maximum(makespan, e)
    return Run(makespan, busy, events)


def constant_step(design: str, t_attn, t_ffn, t_comm, n_microbatches: int, n_layers: int) -> Run:
    """The pipeline with constant stage times (per micro-batch and layer; ``t_comm`` is dispatch +
    combine, split in halves where the route has them as two stages; on ``afd-duplex`` each
    direction takes ``t_comm`` / 2). Arrays broadcast: one run per setting."""
    times = _stage_times(design, t_attn, t_ffn, t_comm)
    shape = np.broadcast(*times.values()).shape
    route = _route(design)
    return run(route, lambda k, layer, b: times[route[k][0]], n_microbatches, n_layers, shape)


def _route(design: str):
    if design not in ROUTES:
        raise AfdError(f"unknown design '{design}'; valid: {', '.join(ROUTES)}")
    return ROUTES[design]


def _stage_times(design: str, t_attn, t_ffn, t_comm) -> dict:
    ta, tf, tc = (np.asarray(x, dtype=float) for x in (t_attn, t_ffn, t_comm))
    for name, v in (("t_attn", ta), ("t_ffn", tf), ("t_comm", tc)):
        if np.any(~np.isfinite(v)) or np.any(v < 0):
            raise AfdError(f"{name} must be finite and >= 0")
    if design == "afd":
        return {"attention": ta, "comm": tc, "ffn": tf}
    return {"attention": ta, "dispatch": tc / 2, "ffn": tf, "combine": tc / 2}


# ----------------------------------------------------------------------------- jitter

def lognormal_factors(cv: float, size, rng: np.random.Generator) -> np.ndarray:
    """Random factors of mean 1 and coefficient of variation ``cv`` (lognormal; 1 where cv = 0)."""
    if cv == 0:
        return np.ones(size)
    s2 = np.log1p(cv * cv)
    return np.exp(rng.standard_normal(size) * np.sqrt(s2) - s2 / 2)


def gamma_factors(cv: float, size, rng: np.random.Generator) -> np.ndarray:
    """Random factors of mean 1 and coefficient of variation ``cv`` (gamma; cv = 1: exponential)."""
    if cv == 0:
        return np.ones(size)
    k = 1.0 / (cv * cv)
    return rng.gamma(k, 1.0 / k, size)


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

    def __post_init__(self):
        for name in ("cv_attn", "cv_ffn", "cv_comm"):
            v = getattr(self, name)
            if not (np.isfinite(v) and 0 <= v <= 10):
                raise AfdError(f"{name} must be in [0, 10], got {v}")
        if self.distribution not in DISTRIBUTIONS:
            raise AfdError(f"unknown distribution '{self.distribution}'; valid: {', '.join(DISTRIBUTIONS)}")
        if self.ffn_factors is not None:
            f = np.asarray(self.ffn_factors, dtype=float)
            if f.size == 0 or np.any(~np.isfinite(f)) or np.any(f <= 0):
                raise AfdError("ffn_factors must be a non-empty array of positive numbers")

    @property
    def none(self) -> bool:
        return self.cv_attn == self.cv_ffn == self.cv_comm == 0 and self.ffn_factors is None


def attention_cv(context_cv: ArrayLike, requests_per_microbatch: ArrayLike) -> np.ndarray:
    """Coefficient of variation of a micro-batch's attention time when its requests' cached
    lengths vary independently with ``context_cv``: attention reads every request's KV cache, so
    its time follows the sum of ``requests_per_microbatch`` lengths, whose CV is
    context_cv / sqrt(requests) (the fixed weight read and kernel costs, not counted, only lower
    it further: an upper bound)."""
    return np.asarray(context_cv, dtype=float) / np.sqrt(np.maximum(np.asarray(requests_per_microbatch, float), 1.0))


def straggler_factors(popularity: ArrayLike, tokens: int, ranks: int, experts_per_token: int,
                      redundant: int = 0, samples: int = 4, seed: int = 0) -> np.ndarray:
    """The FFN stage's straggler factors: the busiest rank's load over the mean (1 / sigma) for
    routing samples of ``tokens`` tokens over ``ranks`` ranks, ``samples`` per row of
    ``popularity`` (one row per layer: measured expert loads, or ones for uniform routing), with
    an EPLB-style placement of ``redundant`` replicas fitted to each row. Returns the factors,
    shape (layers, samples)."""
    from .balance import balancedness, eplb_placement, route_tokens
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
    """Per-micro-batch stage times of a decode-model step (:class:`afdlib.decode.Step`) for the
    simulator: ``t_attn``, ``t_ffn``, ``t_comm`` (s), the micro-batches, the MoE layers, and
    ``extra_s``, the rest of the step (dense layers, LM head, MTP drafts, fixed gap) taken as
    constant, and ``l_accept``. EP steps report a layer's times over all micro-batches: they are
    divided here. Arrays where the step is an array (one entry per setting)."""
    if design == "ep":
        m = int(step.extra.get("ep_micro_batches", 2))
        per = {k: np.asarray(getattr(step, k), dtype=float) / m for k in ("t_attn", "t_ffn", "t_comm")}
    else:
        m = int(step.extra["micro_batches"])
        per = {k: np.asarray(getattr(step, k), dtype=float) for k in ("t_attn", "t_ffn", "t_comm")}
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
             extra_s: ArrayLike = 0.0, chunk: int = 1 << 16) -> Simulation:
    """Simulate ``steps`` decode steps (module docstring). Stage times are per micro-batch and
    layer (seconds), arrays broadcasting over settings; ``extra_s`` is added to every step (dense
    layers, LM head, fixed gap). Seeded: the same arguments give the same result. Steps are
    simulated in chunks of ``chunk`` to bound memory."""
    if not 1 <= steps <= MAX_STEPS:
        raise AfdError(f"steps must be in 1..{MAX_STEPS}, got {steps}")
    route = _route(design)
    times = _stage_times(design, t_attn, t_ffn, t_comm)
    settings = np.broadcast(*times.values(), np.asarray(extra_s, dtype=float)).shape
    const = run(route, lambda k, layer, b: times[route[k][0]], n_microbatches, n_layers, settings)
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
    cv = {"attention": jitter.cv_attn, "ffn": jitter.cv_ffn, "comm": jitter.cv_comm, "dispatch": jitter.cv_comm,
          "combine": jitter.cv_comm}
    total, busy_a, busy_f, makespans = 0.0, 0.0, 0.0, []
    done = 0
    while done < steps:
        n = min(chunk, steps - done)
        size = (n,) + settings

        def durations(k, layer, b, size=size):
            stage = route[k][0]
            factor = draw(cv[stage], size, rng) if cv[stage] else 1.0
            if stage == "ffn" and ffn_pool is not None:
                factor = factor * ffn_pool[rng.integers(0, ffn_pool.size, size)]
            return times[stage] * factor

        r = run(route, durations, n_microbatches, n_layers, size)
        makespans.append(r.makespan)
        total = total + r.makespan.sum(axis=0)
        busy_a = busy_a + r.busy[pools[0]].sum(axis=0)
        busy_f = busy_f + r.busy[pools[1]].sum(axis=0)
        done += n
    span = np.concatenate(makespans, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        bubble_a = np.where(total > 0, 1 - busy_a / total, 0.0)
        bubble_f = np.where(total > 0, 1 - busy_f / total, 0.0)
        step = total / steps + extra
        step_const = const.makespan + extra
        loss = np.where(step > 0, 1 - step_const / step, 0.0)
    return Simulation(step, step_const, loss, bubble_a, bubble_f, const.idle_share(pools[0]),
                      const.idle_share(pools[1]), np.percentile(span, 99, axis=0) + extra, steps)


def megascale_total(t_a: float, t_e: float, t_c: float, t_f: float, n_microbatches: int, n_layers: int) -> float:
    """MegaScale-Infer's total time of the ping-pong pipeline when the expert side sets the pace:
    (T_a + T_e + 2 T_c) + T_f (m L - 1), T_c each way (here T_e = T_f: the experts' time)."""
    return (t_a + t_e + 2 * t_c) + t_f * (n_microbatches * n_layers - 1)


def megascale_min_microbatches(t_c: float, t_f: float) -> float:
    """MegaScale-Infer's rule for enough micro-batches to hide communication: m >= 2 (1 + T_c / T_f)."""
    return 2.0 * (1.0 + t_c / t_f)


def best_configs(model, hardware, budget, context: float, design: str, micro_batches=(2, 3, 4),
                 precision=None, assumptions=None) -> list[dict]:
    """For each micro-batch count, the decode model's best deployment of ``design`` under the SLO
    (:mod:`afdlib.search`): AFD's N_A, N_F and batch; EP's size, redundant experts, kernels and
    batch. The jitter study compares micro-batch counts each at its own best deployment."""
    from .alltoall import EP_MODES
    from .decode import Assumptions
    from .search import best_afd, best_ep
    from .specs import Precision
    precision, a = precision or Precision(), assumptions or Assumptions()
    out = []
    for m in micro_batches:
        if design == "afd":
            best = best_afd(model, hardware, hardware, budget, context, precision, a, micro_batches=(int(m),))
            c = {k: float(v) for k, v in best.config.items()}
            out.append({"design": "afd", "micro_batches": int(m), "n_attn": int(c["n_attn"]),
                        "n_ffn": int(c["n_ffn"]), "requests": int(c["requests"])})
        else:
            best = best_ep(model, hardware, budget, context, precision, a, micro_batches=(int(m),))
            c = {k: float(v) for k, v in best.config.items()}
            out.append({"design": "ep", "micro_batches": int(m), "ep_size": int(c["ep_size"]),
                        "redundant": int(c["redundant"]), "kernels": EP_MODES[int(c["kernels"])],
                        "requests": int(c["requests"])})
    return out


def jitter_study(model, hardware, budget, context: float, configs: list[dict], cvs=(0.0, 0.1, 0.2, 0.3),
                 popularity: ArrayLike | None = None, steps: int = 2000, seed: int = 0, precision=None,
                 assumptions=None, straggler_samples: int = 4, slo_steps: int = 400) -> list[dict]:
    """Deployments of the decode model (``configs``, as :func:`best_configs` returns them) under
    jitter of the FFN and network stages with each CV.

    Per (deployment, CV) row: at the deployment's batch, the mean and p99 TPOT, the loss, the
    bubbles and the tokens/s per GPU (all GPUs), with and without jitter; and under the SLO
    (``budget.slo_s`` on the mean TPOT), the largest batch that still meets it with this jitter
    (:func:`slo_batch_under_jitter`) and its tokens/s per GPU (``*_slo``). ``popularity`` (rows:
    layers' expert loads) adds the FFN stragglers sampled from routing (:func:`straggler_factors`)
    on top of the CV."""
    from dataclasses import replace

    from .decode import Assumptions, afd_step, ep_step, largest_batch
    from .specs import Precision
    precision = precision or Precision()
    base = assumptions or Assumptions()
    g = hardware.gpus_per_node
    rows = []
    for cfg in configs:
        m, design, requests = int(cfg["micro_batches"]), cfg["design"], float(cfg["requests"])
        if design == "afd":
            attn_gpus, ffn_gpus, gpus, redundant = cfg["n_attn"] * g, cfg["n_ffn"] * g, (cfg["n_attn"] + cfg["n_ffn"]) * g, 0

            def step_of(r, cfg=cfg, m=m):
                return afd_step(model, hardware, hardware, cfg["n_attn"], cfg["n_ffn"], r, context,
                                replace(budget, micro_batches=m), precision, base)
        else:
            attn_gpus = ffn_gpus = gpus = cfg["ep_size"]
            redundant = cfg.get("redundant", 0)

            def step_of(r, cfg=cfg, m=m):
                a = replace(base, ep_micro_batches=m, all_to_all=cfg.get("kernels", base.all_to_all))
                return ep_step(model, hardware, cfg["ep_size"], r, context, budget, precision, a,
                               cfg.get("redundant", 0))
        step = step_of(np.array(requests))
        st = stage_times_of(step, design, model.moe_layers)
        batch_hi = int(largest_batch(step_of, float("inf"))) or 1      # the largest that fits in memory
        factors = None
        if popularity is not None:
            tokens = int(round(requests / m * st["l_accept"] * attn_gpus))
            factors = straggler_factors(popularity, max(tokens, 1), ffn_gpus, model.experts_per_token,
                                        redundant, straggler_samples, seed)
        per_gpu = attn_gpus * requests * st["l_accept"] / gpus
        for cv in cvs:
            jit = Jitter(cv_ffn=cv, cv_comm=cv, ffn_factors=factors)
            sim = simulate(design if design == "ep" else "afd", st["t_attn"], st["t_ffn"], st["t_comm"], m,
                           st["n_layers"], steps, jit, seed, st["extra_s"])
            b_slo, step_slo = slo_batch_under_jitter(step_of, design, model.moe_layers, budget.slo_s, jit, batch_hi,
                                                     slo_steps, seed)
            rows.append({**cfg, "cv": float(cv), "gpus": gpus,
                         "t_attn_us": st["t_attn"] * 1e6, "t_ffn_us": st["t_ffn"] * 1e6, "t_comm_us": st["t_comm"] * 1e6,
                         "tpot_ms": float(sim.step_s) / st["l_accept"] * 1e3,
                         "tpot_const_ms": float(sim.step_const_s) / st["l_accept"] * 1e3,
                         "p99_tpot_ms": float(sim.p99_step_s) / st["l_accept"] * 1e3,
                         "throughput_loss": float(sim.throughput_loss), "bubble_attn": float(sim.bubble_attn),
                         "bubble_ffn": float(sim.bubble_ffn),
                         "tokens_per_s_per_gpu": per_gpu / float(sim.step_s),
                         "tokens_per_s_per_gpu_const": per_gpu / float(sim.step_const_s),
                         "batch_slo": b_slo,
                         "tokens_per_s_per_gpu_slo": attn_gpus * b_slo * st["l_accept"] / gpus / step_slo,
                         "straggler_cv": None if factors is None else
                         float(np.std(factors / factors.mean(axis=1, keepdims=True))),
                         "straggler_mean": None if factors is None else float(factors.mean())})
    return rows


def slo_batch_under_jitter(step_of, design: str, moe_layers: int, slo_s: float, jitter: Jitter,
                           batch_hi: int, steps: int = 400, seed: int = 0, points: int = 24) -> tuple[int, float]:
    """The largest batch per (attention) GPU up to ``batch_hi`` whose simulated mean TPOT under
    ``jitter`` meets ``slo_s`` and which fits in memory (``step_of(requests_array)`` -> decode
    Step); (0, inf) when none does. Returns (batch, mean step time in s). A coarse geometric grid
    of ``points`` batches, then a linear one between the last feasible point and the next; each
    grid is one vectorised simulation (TPOT grows with the batch)."""
    def feasible(grid):
        step = step_of(grid)
        st = stage_times_of(step, design, moe_layers)
        sim = simulate(design if design == "ep" else "afd", st["t_attn"], st["t_ffn"], st["t_comm"],
                       st["micro_batches"], st["n_layers"], steps, jitter, seed, st["extra_s"])
        return (sim.step_s / st["l_accept"] <= slo_s) & np.asarray(step.fits_memory), sim.step_s

    coarse = np.unique(np.round(np.geomspace(1, max(batch_hi, 1), points)))
    ok, _ = feasible(coarse)
    if not ok[0]:
        return 0, float("inf")
    i = int(np.flatnonzero(ok)[-1])
    hi = coarse[i + 1] - 1 if i + 1 < coarse.size else coarse[i]
    fine = np.unique(np.round(np.linspace(coarse[i], hi, points)))
    ok, step_s = feasible(fine)
    j = int(np.flatnonzero(ok)[-1]) if ok.any() else 0
    return int(fine[j]), float(step_s[j])


def ideal_sweep(cvs, micro_batches=(2, 3, 4), n_layers: int = 61, steps: int = 1000, seed: int = 0,
                t_comm: float = 1.0) -> list[dict]:
    """AFD with equal attention and FFN stages (t_B = 1) and ``t_comm``, jitter of the FFN and
    the network with each CV: relative loss and throughput (micro-batches per unit time, over
    the jitter-free 3BO's)."""
    ref = float(constant_step("afd", 1.0, 1.0, t_comm, 3, n_layers).makespan) / (3 * n_layers)
    rows = []
    for m in micro_batches:
        for cv in cvs:
            sim = simulate("afd", 1.0, 1.0, t_comm, int(m), n_layers, steps, Jitter(cv_ffn=cv, cv_comm=cv), seed)
            rows.append({"micro_batches": int(m), "cv": float(cv), "throughput_loss": float(sim.throughput_loss),
                         "throughput": ref * m * n_layers / float(sim.step_s),
                         "bubble_attn": float(sim.bubble_attn), "bubble_ffn": float(sim.bubble_ffn)})
    return rows
