"""The one scheduling core of the batch-overlap pipeline (both designs, one schedule).

A decode step runs ``n_layers`` layers; every layer is the same route of stages, each on a
resource (:data:`ROUTES`), and ``n_microbatches`` micro-batches pass through them. A resource
runs one stage at a time, in program order: (layer, stage, micro-batch) in lexicographic order,
the order in which a serving engine issues its kernels and transfers. On a route where every
stage has a resource of its own (AFD) this is also the first-come-first-served order, since
micro-batches cannot overtake one another. An op starts when its micro-batch's previous op has
ended and its resource has finished the op before it:

    start = max(end of the micro-batch's previous op, end of the resource's previous op)

a max-plus recurrence, vectorised over any batch of independent runs (steps, settings): one
Python iteration per (layer, stage, micro-batch) position, numpy across runs. The Figure 5
timelines (:mod:`afdlib.analysis.timeline`) and the jitter simulator
(:mod:`afdlib.simulation.pipeline`) are scheduled by the same function.

**Routes.** ``afd``: attention pool -> network -> FFN pool, the network carrying dispatch and
combine of a micro-batch as one stage of ``t_c`` (the paper's Eqs. 2-4, in which t_c is one
lane); ``afd-duplex``: dispatch and combine on the two directions of the links, each its own
resource (MegaScale-Infer's timing, with T_c each way); ``ep``: attention and experts on the same
GPUs, dispatch and combine on the network (DeepSeek's dual micro-batch overlap with two
micro-batches), as DeepEP's **low-latency** kernels run: their RDMA transfers proceed in the
background and a hook receives them, "without occupying any SM resources" (DeepEP's README,
github.com/deepseek-ai/DeepEP, low-latency kernels); ``ep-normal``: DeepEP's **normal** kernels,
which run on SMs (the README's ``Buffer.set_num_sms``). The model: a normal kernel holds the GPU's
compute while it runs, so nothing of its micro-batch's or another's compute overlaps it (every
stage on the one resource ``GPU``: the step is the serial sum). With one micro-batch every route
is serial, since each stage waits for the one before, except ``ep-sbo``: **single-batch overlap**
(SBO, SGLang/Ant Group's decode on H20: "dispatch's receive runs under the shared expert, combine's
send under the down GEMM", LMSYS 2025-09-26), one micro-batch whose stages wait for named stages
rather than the one before (a route entry's third element, :data:`ROUTES`): the shared expert
waits for attention only, so it runs on the GPU while dispatch is on the network; the routed up
and gate GEMM waits for dispatch (and, on the GPU, the shared expert); combine starts with the down
GEMM (it sends each part as the GEMM finishes it: the fine-grained limit) and the next layer waits
for both to end. One layer takes ``t_a + max(t_dispatch, t_shared) + t_up + max(t_down,
t_combine)``, an output of the schedule like every other overlap.

**Makespans for the searches** (:func:`makespan`): constant stage times per layer, vectorised,
proven equal to :func:`run` in tests/test_schedule.py (random stage times, 1-4 micro-batches,
1-61 layers, fill and drain included). With S the sum of one micro-batch's stage times, t_max the
longest stage, m micro-batches and L layers:

* one micro-batch, or every stage on one resource (``ep-normal``): the serial sum, m L S;
* a route whose stages each have a resource of their own (``afd``, ``afd-duplex``: a cyclic flow
  shop with a fixed order): ``max(L S + (m - 1) t_max, S + (L m - 1) t_max)``: either one
  micro-batch's path through all layers plus the others' turns at the longest stage (the pipeline
  fills), or the longest stage's resource busy for all L m turns plus the fill and drain of the
  other stages; per layer in steady state max(S, m t_max), the paper's Eqs. 2-4;
* ``afd`` with D data-parallel attention domains of m micro-batches each (:data:`DOMAIN_RESOURCES`),
  S = t_a + t_c + t_f: the longest path through the ops, which either follows one micro-batch through
  the L layers and crosses to the last micro-batch once, on a domain's attention or links (D
  micro-batches a step) and the FFN (one a step), or the FFN alone, or stays on one resource all
  along (a domain's attention, its links, the FFN) and takes the FFN's remaining turns at the end:
  ``max(L S + max((m - 1) max(t_a, t_c) + (D - 1) t_f, (D m - 1) t_f), S + (L m - 1) t_a + (D - 1) t_f,
  S + (L m - 1) t_c + (D - 1) t_f, S + (L D m - 1) t_f)`` (D = 1: the line above);
* any other route (``ep`` with two micro-batches: attention and experts share the GPU, dispatch
  and combine the network): no closed form is used; the layers' max-plus recurrence (:func:`run`'s,
  on the state the next layer sees) runs until its state repeats up to a constant shift (period
  1-4 layers; a max-plus map is shift-invariant, so from there the schedule is periodic) and the
  rest is extrapolated. Exact (to rounding); its cost grows with the transient, at most L layers.

**The designs' MoE layers** (:func:`ep_moe_time`, :func:`afd_moe_time`, what the decode step
uses): the makespan of the L MoE layers of a step on the design's route, and the share of what
could overlap that the schedule overlaps (:func:`hidden_share`), or, under a what-if override
share, the overlap formula of :class:`afdlib.decode.step.Assumptions`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike

from afdlib.errors import AfdError
from afdlib.evaluator.roofline import overlap

ROUTES = {
    "afd": (("attention", "attention"), ("comm", "network"), ("ffn", "ffn")),
    "afd-duplex": (("attention", "attention"), ("dispatch", "to FFN"), ("ffn", "ffn"), ("combine", "to attention")),
    "ep": (("attention", "GPU"), ("dispatch", "network"), ("ffn", "GPU"), ("combine", "network")),
    "ep-normal": (("attention", "GPU"), ("dispatch", "GPU"), ("ffn", "GPU"), ("combine", "GPU")),
    "ep-sbo": (("attention", "GPU"), ("dispatch", "network"), ("shared", "GPU", ((0, "end"),)),
               ("up", "GPU", ((1, "end"),)), ("down", "GPU"), ("combine", "network", ((4, "start"),))),
}
"""Stages of one layer as (stage, resource), per design; a third element, where given, lists the
stages of the same micro-batch and layer the op waits for, as (stage index, "start" or "end")
(default: the end of the stage before it). The first stage of a layer waits for every op of the
micro-batch's previous layer."""

DOMAIN_RESOURCES = {"afd": ("attention", "network")}
"""The resources of a route that each **data-parallel attention domain** has for itself (xDeepServe's
AFD, arXiv 2508.02520v6 section 5.2: "three DP domains" of attention dies against one MoE pool, "two
microbatches per domain"): with D domains, micro-batch b belongs to domain b mod D and runs its
attention and its transfers on that domain's GPUs and links (resource ``"attention/d"``,
``"network/d"``), while the FFN pool serves every domain's micro-batches in turn. One domain is the
plain route."""

POOLS = {"afd": ("attention", "ffn"), "afd-duplex": ("attention", "ffn"), "ep": ("GPU", "GPU"),
         "ep-normal": ("GPU", "GPU"), "ep-sbo": ("GPU", "GPU")}
"""The resources whose idle share is reported as (attention bubble, FFN bubble)."""

@dataclass(frozen=True)
class Run:
    """One scheduled batch of runs: ``makespan`` and ``busy`` (per resource) have the batch's
    shape; ``events`` lists (stage, micro-batch, layer, start, duration) when recorded."""

    makespan: np.ndarray
    busy: dict
    events: list | None = None

    def busy_of(self, resource: str) -> np.ndarray:
        """Busy time of a resource; of a resource split into attention domains (``"attention/d"``), the
        domains' mean."""
        if resource in self.busy:
            return self.busy[resource]
        parts = [v for k, v in self.busy.items() if k.startswith(resource + "/")]
        if not parts:
            raise AfdError(f"no resource '{resource}' in this schedule")
        return sum(parts) / len(parts)

    def idle_share(self, resource: str) -> np.ndarray:
        """Share of the makespan the resource is idle (its bubble; of a domain-split one, the mean)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.makespan > 0, 1.0 - self.busy_of(resource) / self.makespan, 0.0)


def resource_of(route, domains: int = 1) -> Callable[[int, int], str]:
    """``(stage index, micro-batch) -> resource`` of ``route`` with ``domains`` data-parallel attention
    domains (:data:`DOMAIN_RESOURCES`; one domain: the route's own names)."""
    d = int(domains)
    if d < 1:
        raise AfdError(f"need at least one attention domain, got {domains}")
    if d == 1:
        return lambda k, b: route[k][1]
    split = next((v for key, v in DOMAIN_RESOURCES.items() if ROUTES[key] == route), None)
    if split is None:
        raise AfdError("data-parallel attention domains take the AFD route (afd)")
    return lambda k, b: f"{route[k][1]}/{b % d}" if route[k][1] in split else route[k][1]


def run(route, durations: Callable[[int, int, int], ArrayLike], n_microbatches: int, n_layers: int,
        shape: tuple = (), record: bool = False, domains: int = 1) -> Run:
    """Schedule ``n_layers`` repetitions of ``route`` ((stage, resource) pairs) for
    ``n_microbatches`` micro-batches in program order (module docstring).

    ``durations(k, layer, microbatch)`` (``k``: the stage's index in ``route``) returns the op's
    duration, a number or an array
    broadcasting to ``shape`` (the batch of independent runs). ``record`` keeps every event
    (for drawing; use it with scalar durations). ``domains``: data-parallel attention domains
    (:data:`DOMAIN_RESOURCES`; ``n_microbatches`` counts every domain's).
    """
    if n_microbatches < 1 or n_layers < 1:
        raise AfdError(f"need at least one micro-batch and one layer, got {n_microbatches} and {n_layers}")
    res_of = resource_of(route, domains)
    names = list(dict.fromkeys(res_of(k, b) for k in range(len(route)) for b in range(n_microbatches)))
    end = [np.zeros(shape) for _ in range(n_microbatches)]
    free = {res: np.zeros(shape) for res in names}
    busy = {res: np.zeros(shape) for res in names}
    events = [] if record else None
    named = any(len(stage) > 2 for stage in route)
    for layer in range(n_layers):
        ops = [{} for _ in range(n_microbatches)]     # (k, "start" | "end") -> time, this layer
        done = list(end)                               # named routes: the end of every op so far
        for k, (stage, _, *after) in enumerate(route):
            for b in range(n_microbatches):
                res = res_of(k, b)
                d = np.asarray(durations(k, layer, b), dtype=float)
                if not named:
                    ready = end[b]
                elif k == 0:
                    ready = done[b]
                else:
                    ready = reduce(np.maximum, [ops[b][dep] for dep in (after[0] if after else ((k - 1, "end"),))])
                start = np.maximum(ready, free[res])
                end[b] = start + d
                ops[b][(k, "start")], ops[b][(k, "end")] = start, end[b]
                done[b] = np.maximum(done[b], end[b])
                free[res] = end[b]
                busy[res] = busy[res] + d
                if record:
                    events.append((stage, b, layer, float(start), float(d)))
        if named:
            end = done
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


def makespan(route, times, n_microbatches: int, n_layers: int, domains: int = 1) -> np.ndarray:
    """Makespan of ``n_layers`` layers of ``route`` with constant stage times ``times`` (one array
    per stage of the route, per micro-batch, broadcasting), equal to :func:`run`'s (module
    docstring: closed forms where they hold, else the periodic layer recurrence; with ``domains`` > 1
    attention domains, :data:`DOMAIN_RESOURCES`, always the recurrence)."""
    t = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in times))
    total = t[0]
    for x in t[1:]:
        total = total + x
    resources = {res for _, res, *_ in route}
    n = int(n_layers)
    if np.ndim(n_microbatches):   # one count per run: only the closed form of a route whose stages each
        # have a resource of their own (AFD's, one domain; at m = 1 it is the serial sum too)
        m = np.asarray(n_microbatches, dtype=float)
        if len(resources) != len(route) or int(domains) != 1 or np.any(m < 1) or n < 1:
            raise AfdError("micro-batch counts per run take a route whose stages each have a resource (afd), "
                           "one domain, at least one micro-batch and one layer")
        longest = np.maximum.reduce(t)
        return np.maximum(n * total + (m - 1) * longest, total + (n * m - 1) * longest)
    m = int(n_microbatches)
    if m < 1 or n < 1:
        raise AfdError(f"need at least one micro-batch and one layer, got {m} and {n}")
    if any(len(stage) > 2 for stage in route):     # stages that wait for named ones: SBO, one micro-batch
        if m != 1:
            raise AfdError("a route whose stages wait for named stages (single-batch overlap) takes one micro-batch")
        # each layer waits for every op of the one before, whose resources are then free: n equal layers
        return n * run(route, lambda k, layer, b: t[k], 1, 1, t[0].shape).makespan
    if int(domains) > 1:
        resource_of(route, domains)              # AfdError unless the AFD route
        if m % int(domains):
            raise AfdError(f"{m} micro-batches do not split over {domains} attention domains")
        return _afd_domains(t[0], t[1], t[2], int(domains), m // int(domains), n)
    if m == 1 or len(resources) == 1:
        return m * n * total
    if len(resources) == len(route):
        longest = np.maximum.reduce(t)
        return np.maximum(n * total + (m - 1) * longest, total + (n * m - 1) * longest)
    return _periodic(route, t, m, n)


def _afd_domains(t_a, t_c, t_f, d: int, m: int, n: int) -> np.ndarray:
    """The makespan of route ``afd`` with ``d`` attention domains of ``m`` micro-batches each and ``n``
    layers (module docstring), equal to :func:`run`'s (tests/test_schedule.py)."""
    s = t_a + t_c + t_f
    cross = np.maximum((m - 1) * np.maximum(t_a, t_c) + (d - 1) * t_f, (d * m - 1) * t_f)
    return np.maximum.reduce(np.broadcast_arrays(n * s + cross, s + (n * m - 1) * t_a + (d - 1) * t_f,
                                                 s + (n * m - 1) * t_c + (d - 1) * t_f, s + (n * d * m - 1) * t_f))


def _layer(route, t, end: list, free: dict, res_of) -> None:
    """One layer of :func:`run`'s recurrence, in place (``end`` per micro-batch, ``free`` per resource)."""
    for k in range(len(route)):
        for b in range(len(end)):
            res = res_of(k, b)
            e = np.maximum(end[b], free[res])
            e += t[k]
            end[b] = free[res] = e


def _periodic(route, t, m: int, n: int, max_period: int = 4) -> np.ndarray:
    """:func:`run`'s makespan layer by layer until the state (micro-batches' ends, resources' free
    times) repeats up to a shift, then extrapolated: x_{l+p} = x_l + c 1 makes every later layer
    repeat (max-plus maps commute with adding a constant). Runs that have repeated leave the
    arrays, so the cost follows the slowest transients only."""
    shape = t[0].shape
    times = [np.ravel(x) for x in t]
    out = np.full(times[0].size, np.nan)
    live = np.arange(out.size)                       # runs still iterating
    res_of = resource_of(route)
    names = list(dict.fromkeys(res_of(k, b) for k in range(len(route)) for b in range(m)))
    end = [np.zeros(live.size) for _ in range(m)]
    free = {res: np.zeros(live.size) for res in names}

    def state():   # a resource whose last op ended a micro-batch's path holds that very array: once
        rows = list(end)
        rows += [f for f in free.values() if not any(f is e for e in end)]
        return rows
    states = [state()]                               # x_0, x_1, ...: the live runs' state after each layer
    for layer in range(1, n + 1):
        _layer(route, times, end, free, res_of)
        states.append(state())
        if layer == n:
            break
        if layer == 1:   # x_0 (zeros, no array shared) is not compared: x_1 - x_0 constant is rare anyway
            continue
        scale = 1e-12 * _most(states[layer])
        done = np.zeros(live.size, dtype=bool)
        for p in range(1, min(max_period, layer - 1) + 1):
            step = [a - b for a, b in zip(states[layer], states[layer - p])]
            found = ~done & (_most(step) - reduce(np.minimum, step) <= scale)
            q, r = divmod(n - layer, p)              # x_n = x_{layer - p + r} + (q + 1) c
            if live.size == out.size and found.all():   # every run at once: no indexing
                return (_most(states[layer - p + r]) + (q + 1) * step[0]).reshape(shape)
            if np.any(found):
                out[live[found]] = (_most([x[found] for x in states[layer - p + r]])
                                    + (q + 1) * step[0][found])
                done |= found
        if np.any(done):
            keep = ~done
            if not np.any(keep):
                return out.reshape(shape)
            live, times = live[keep], [x[keep] for x in times]
            end, free = _compact(end, free, keep)
            states = [[x[keep] for x in st] for st in states]
    out[live] = _most(states[n])
    return out.reshape(shape)


def _most(rows: list) -> np.ndarray:
    """Elementwise maximum of a list of equal-shaped arrays (pairwise: no stacked copy)."""
    return reduce(np.maximum, rows)


def _compact(end: list, free: dict, keep: np.ndarray) -> tuple[list, dict]:
    """The live runs of the recurrence's state, keeping a resource that shares a micro-batch's array shared."""
    new_end = [e[keep] for e in end]
    new_free = {}
    for res, f in free.items():
        same = [b for b, e in enumerate(end) if f is e]
        new_free[res] = new_end[same[0]] if same else f[keep]
    return new_end, new_free


# ----------------------------------------------------------------------------- the designs' MoE layers

def hidden_share(serial, scheduled, bound) -> np.ndarray:
    """The share of the time that could overlap which the schedule overlaps:
    (serial - scheduled) / (serial - bound), 0 where nothing can overlap (serial = bound)."""
    gap = np.asarray(serial - bound, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(gap > 1e-12 * serial, np.clip((serial - scheduled) / gap, 0.0, 1.0), 0.0)


def ep_moe_time(t_att, t_dispatch, t_ffn, t_combine, m: int, kernels: str, n_layers: int,
                override=None, single_batch: bool = False, sbo=None) -> tuple[np.ndarray, np.ndarray]:
    """(seconds, hidden share) of EP's ``n_layers`` MoE layers from per-micro-batch stage times:
    the schedule of route ``ep`` (low-latency kernels) or ``ep-normal`` (normal kernels hold the
    SMs), with ``sbo`` = (t_shared, t_up, t_down), the parts of ``t_ffn``, route ``ep-sbo`` (one
    micro-batch, low-latency kernels: single-batch overlap), or, with an ``override`` share, the
    what-if overlap formula per layer (which overlaps one micro-batch only where it overlaps: with
    ``sbo`` or ``single_batch``). The hidden share is of the shorter of (compute, dispatch +
    combine): serial m L (t_a + t_f + t_c), bound L max(m (t_a + t_f), m t_c, t_a + t_f + t_c)
    (single-batch overlap: L max(t_a + t_f, t_c)) (:func:`hidden_share`)."""
    compute, comm = t_att + t_ffn, t_dispatch + t_combine
    if sbo is not None and (m != 1 or kernels != "low-latency"):
        raise AfdError("single-batch overlap takes one micro-batch and DeepEP's low-latency kernels")
    if override is not None:
        hidden = override if (m > 1 or single_batch or sbo is not None) else 0.0
        total = n_layers * overlap(m * compute, m * comm, hidden)
    elif sbo is not None:
        t_shared, t_up, t_down = sbo
        total = makespan(ROUTES["ep-sbo"], (t_att, t_dispatch, t_shared, t_up, t_down, t_combine), 1, n_layers)
    else:
        route = ROUTES["ep" if kernels == "low-latency" else "ep-normal"]
        total = makespan(route, (t_att, t_dispatch, t_ffn, t_combine), m, n_layers)
    serial = n_layers * m * (compute + comm)
    bound = n_layers * np.maximum(m * compute, m * comm)
    if sbo is None and (override is None or not single_batch):   # one micro-batch's path, unless it overlaps
        bound = np.maximum(bound, n_layers * (compute + comm))
    return total, hidden_share(serial, total, bound)


def afd_moe_time(t_a, t_f, t_c, m: int, n_layers: int, override=None, domains: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(seconds, hidden share) of AFD's ``n_layers`` MoE layers from per-micro-batch stage times:
    the schedule of route ``afd`` (one lane carries dispatch + combine, the paper's t_c), or, with
    an ``override`` share o, ``L (ideal + (1 - o) (serial - ideal)) + (1 - o) fill`` (ideal: the
    steady state max(m t_a, m t_f, m t_c, t_a + t_f + t_c) per layer; serial: max(m t_a, m t_f,
    t_a + t_f) + m t_c, no transfer overlapping any compute; fill: what the schedule's fill and
    drain add to L ideal). So o = 1 is the steady state's lower bound and o = 0 an upper bound of
    the schedule (tests/test_schedule.py). The hidden share has EP's definition: serial m L (t_a +
    t_f + t_c), bound L max(m t_a, m t_f, m t_c, t_a + t_f + t_c).

    With D ``domains`` (data-parallel attention domains, :data:`DOMAIN_RESOURCES`), each domain runs
    ``m`` micro-batches on its own attention GPUs and links while the FFN pool serves all D m of them:
    ``t_a`` and ``t_c`` are one domain's micro-batch, ``t_f`` the FFN stage of one; in the formulas
    above the FFN's m t_f becomes D m t_f (one domain's serial path and the FFN's turns for all)."""
    d = int(domains)
    ideal = np.maximum.reduce(np.broadcast_arrays(m * t_a, d * m * t_f, m * t_c, t_a + t_f + t_c))
    scheduled = makespan(ROUTES["afd"], (t_a, t_c, t_f), d * m, n_layers, domains=d)
    if override is not None:
        serial = np.maximum.reduce(np.broadcast_arrays(m * t_a, d * m * t_f, t_a + t_f)) + m * t_c
        fill = np.maximum(scheduled - n_layers * ideal, 0.0)
        total = n_layers * (ideal + (1.0 - override) * (serial - ideal)) + (1.0 - override) * fill
    else:
        total = scheduled
    return total, hidden_share(n_layers * m * (t_a + d * t_f + t_c), total, n_layers * ideal)
