"""The batch search: the largest requests per GPU whose decode step meets the per-token SLO and
fits in memory (TPOT and memory grow with the batch, so the feasible batches are 1..n), vectorised
over any number of deployments at once.

:func:`batches` is the one entry point: it chooses between the two searches by the number of
points (:data:`NARROWED_FROM`: now always :func:`largest`). :func:`largest` finds the same batch with
fewer evaluations per point: the same answer as :func:`largest_batch` (the largest integer batch
whose step fits in memory and meets the SLO; 0 where one request does not), found by regula falsi
with the Illinois correction on the step's own continuous excess over its limits, each round
evaluating only the points whose bracket is still open.

Feasibility is decided by the step's own test (``fits_memory`` and ``tpot_s <= slo``) only; the
excess (the larger of TPOT / SLO and the KV-cache pool's memory / its capacity, minus 1) only
chooses where to look next. Each point keeps a bracket: its largest batch known to be feasible
(``lo``; 0 at first) and its smallest known not to be (``up``; one past the bound at first, then one
past the memory's own bound, :func:`memory_bound`, read from the first probe at one request). A
probe inside the bracket moves one end; the search ends when the ends are adjacent, so the answer
is exact wherever TPOT and memory grow with the batch (the library's assumption too). Bisection
needs log2(bound) rounds over every point; here a point's excess is smooth in the batch (a
rounded roofline), so its bracket closes in a few probes and the chunk's later rounds run on the
few points left. The step at the answer is the one its probe evaluated: no last evaluation.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from afdlib.decode.result import Step
from afdlib.errors import AfdError

MAX_REQUESTS = 2 ** 16
"""Largest batch per GPU the searches consider."""

FIRST_BOUND = 1024
"""The bound a sweep's given deployments search their batches up to first (:func:`batches`'
``first``): most points' largest batch lies below it, so the bisection takes 10 rounds instead of
the 16 up to :data:`MAX_REQUESTS`; the points that reach it are searched again up to that maximum,
so every result is the library's own."""

GRID_SEARCH_MAX = 1 << 14
"""Largest (cells x grid points) for which :func:`largest_batch` narrows with grids first."""


def largest_batch(step_of, slo_s: float, shape: tuple = (), hi: int = MAX_REQUESTS, grid: int = 16) -> np.ndarray:
    """Per element of ``shape``, the largest integer number of requests (0..hi) whose step fits in
    memory and meets ``slo_s``; 0 where even one request does not. TPOT and memory grow with the
    batch, so the feasible batches are 1..n: two vectorised grids of ``grid`` batches each (one
    geometric over 1..hi, one linear inside the bracket it finds) narrow the search, then
    bisection finishes it (on large arrays, more than :data:`GRID_SEARCH_MAX` points, bisection
    alone). ``step_of(requests_array)`` returns a :class:`Step`; the requests may
    carry a leading grid axis in front of ``shape``."""
    lo = np.zeros(shape)
    top = np.full(shape, float(hi))

    def ok_of(requests):
        st = step_of(requests)
        return np.broadcast_to(st.fits_memory & (st.tpot_s <= slo_s), requests.shape)

    f = np.linspace(0.0, 1.0, grid).reshape((grid,) + (1,) * len(shape))
    # the grids pay when each evaluation is dominated by its fixed cost (small arrays); on large
    # arrays (maps of candidates) plain bisection does less work
    passes = (True, False) if int(np.prod(shape)) * grid <= GRID_SEARCH_MAX else ()
    for geometric in passes:
        if not np.any(top > lo):
            break
        first = lo + 1
        if geometric:
            pts = np.ceil(np.exp(np.log(first) + f * (np.log(np.maximum(top, first)) - np.log(first))) - 1e-9)
        else:
            pts = np.ceil(first + f * (np.maximum(top, first) - first) - 1e-9)
        pts = np.minimum(pts, top)
        ok = ok_of(pts) & (top > lo)
        last = grid - 1 - np.argmax(ok[::-1], axis=0)                   # index of the last feasible point
        any_ok = ok.any(axis=0)
        best = np.take_along_axis(pts, last[None], axis=0)[0]
        nxt = np.take_along_axis(pts, np.minimum(last + 1, grid - 1)[None], axis=0)[0]
        new_top = np.where(any_ok, np.where(last == grid - 1, top, nxt - 1), pts[0] - 1)
        lo, top = np.where(any_ok, best, lo), np.where(top > lo, np.maximum(new_top, np.where(any_ok, best, lo)), top)
    while np.any(top > lo):
        mid = np.ceil((lo + top) / 2)
        ok = ok_of(mid)
        lo, top = np.where(ok, mid, lo), np.where(ok, top, mid - 1)
    return lo


def best_batch(step_of, slo_s: float, max_requests: int = MAX_REQUESTS) -> tuple[int, Step]:
    """The largest requests per GPU (1..max_requests) whose step fits in memory and meets the
    per-token SLO (:func:`largest_batch`), and its step; AfdError saying what fails where none does."""
    best = float(largest_batch(step_of, slo_s, (), max_requests))
    if best < 1:
        first = step_of(np.array(1.0))
        if bool(first.fits_memory):
            why = f"one request per GPU takes TPOT {float(first.tpot_s) * 1e3:.1f} ms, over the SLO {slo_s * 1e3:g} ms"
        else:
            full = [f"the {m.pool}'s weights need {_apart(float(np.max(m.weights_bytes)) / 1e9, float(np.max(m.capacity_bytes)) / 1e9)} GB usable"
                    for m in first.memory if np.any(m.weights_bytes > m.capacity_bytes)]
            why = "; ".join(full) or "one request per GPU does not fit in memory (KV cache)"
        raise AfdError(f"no batch meets the SLO and fits in memory: {why}")
    return int(best), step_of(np.array(best))


def _apart(need: float, have: float) -> str:
    """"77.34 GB of the 77.28": two sizes with as many decimals as it takes to tell them apart (at most 4)."""
    d = 1
    while d < 4 and f"{need:.{d}f}" == f"{have:.{d}f}":
        d += 1
    def shown(x):      # a size that rounds to 0 at these decimals keeps two significant digits (0.0009, not 0.0)
        return f"{x:.2g}" if x > 0 and float(f"{x:.{d}f}") == 0 else f"{x:.{d}f}"
    return f"{shown(need)} GB of the {shown(have)}"


NARROWED_FROM = 0
"""Points (candidate-cells, a sweep chunk's points) from which :func:`batches` searches with
:func:`largest`: every search, since it brackets each point below its memory's own bound
(:func:`memory_bound`, from its first round at one request): about 3.4 step evaluations per point
(DeepSeek-V3 on H800, an explained answer's 206 cells), against two grids of 16 and a bisection in
:func:`largest_batch`; measured faster at every size on 2 cores, one pair's search included (16
single-pair compares 1.46 -> 1.31 s, a 2-model x 8-device advice table 4.66 -> 3.66 s, identical
results). :func:`largest_batch` stays the reference the tests hold it to."""


class Rivals(NamedTuple):
    """Candidates of a search that compete per cell (:func:`largest`'s ``rivals``): the points are
    cell-major, ``per_cell`` candidates to a cell; ``eligible`` (flat over the points) says whose rate
    counts (the others are not searched: the caller gives them rate 0); ``floor`` (one per cell, updated
    in place, so several calls over one cell's candidates share it) the best feasible rate found so far;
    ``twins`` (one per cell, or None) a cell with the same step (the cells differ in their SLO only), the
    cell itself or one before it: a probe of a candidate at the batch its twin's is probed at in the same
    round is read off the twin's."""

    per_cell: int
    eligible: np.ndarray
    floor: np.ndarray
    twins: np.ndarray | None = None


PRUNE_MARGIN = 1e-9
"""Relative margin of the pruning test (:func:`largest`): a candidate leaves the search only when its
bound is below its cell's best found by more than this (rounding never prunes the best)."""


def batches(whole, step_at, slo, shape: tuple, design: str, hi: int = MAX_REQUESTS,
            first: int | None = None, rivals: Rivals | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(largest batch 0..``hi``, tokens/s per GPU, TPOT s) per point of ``shape``, the step's at
    max(batch, 1): the one batch search of the searches and the sweeps, which chooses its strategy
    by the number of points (:data:`NARROWED_FROM`): below it :func:`largest_batch` on
    ``whole()`` (the step function over ``shape``), from it :func:`largest` on ``step_at``
    (``step_at(requests, index)``: the step at the flat points ``index``). With ``first`` (a
    sweep's given deployments: :data:`FIRST_BOUND`) the search goes up to that bound first and
    searches the points that reach it again up to ``hi``, each by the strategy its count chooses.
    ``slo`` broadcasts over ``shape``; ``design`` ("ep" or "afd") says which pool holds the KV cache.
    ``rivals`` (a search's candidates, :class:`Rivals`): :func:`largest` stops searching a candidate
    that cannot beat its cell's best; its batch and rate are then a feasible one below its own largest.
    The best per cell, and where it is reached, are those of the search without."""
    points = int(np.prod(shape))
    if first is not None and first < hi:
        if rivals is not None:
            raise AfdError("a search's rivals and a sweep's first bound do not combine")
        found = batches(whole, step_at, slo, shape, design, first)
        top = np.flatnonzero(np.reshape(found[0], -1) >= first)
        if not top.size:
            return found
        again = batches(lambda: (lambda requests: step_at(requests, top)), lambda requests, at: step_at(requests, top[at]),
                        np.broadcast_to(slo, shape).reshape(-1)[top], (top.size,), design, hi)
        out = tuple(np.broadcast_to(x, shape).reshape(-1).copy() for x in found)
        for x, y in zip(out, again):
            x[top] = y
        return tuple(x.reshape(shape) for x in out)
    if points < NARROWED_FROM:
        step_of = whole()
        n = largest_batch(step_of, slo, shape, hi=hi)
        st = step_of(np.maximum(n, 1.0))
        return n, np.broadcast_to(st.tokens_per_s_per_gpu, shape), np.broadcast_to(st.tpot_s, shape)
    n, tokens, tpot = largest(step_at, np.broadcast_to(slo, shape).reshape(-1), points, hi, design, rivals)
    return n.reshape(shape), tokens.reshape(shape), tpot.reshape(shape)


# --- the narrowed search: fewer step evaluations per point on large arrays ---------------------------

ROUNDS = 60
"""A cap on probe rounds (each round at least moves one end of every open bracket, so a bound of
2^16 is reached well before it): past it the remaining points are bisected."""


def largest(step_at, slo, n: int, hi: int, design: str,
            rivals: Rivals | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(batch, tokens/s per GPU, TPOT s) per point of ``n``: the largest batch 0..``hi`` that fits and
    meets ``slo`` (an array over the points or a number), and the step's throughput and TPOT there
    (at one request where none fits, as the library's ``step_of(max(batch, 1))``).
    ``step_at(requests, index)`` evaluates the step at the points ``index`` (an index array) with
    ``requests`` of the same length; ``design`` ("ep" or "afd") says which pool holds the KV cache.

    With ``rivals`` (:class:`Rivals`), only eligible points are searched, and a point whose bracket
    [lo, up) still holds a batch leaves the search once no batch in it can beat its cell's best feasible
    rate found so far (``rivals.floor``): the rate is B / (TPOT(B) x GPUs) times the tokens per request
    and step, and TPOT does not fall as the batch grows (the search's own premise), so every batch B
    below ``up`` gives at most rate(lo) x (up - 1) / lo. Such a point keeps its ``lo`` and rate there,
    below its cell's best: the best and its argument are unchanged, at fewer evaluations."""
    slo = np.broadcast_to(np.asarray(slo, dtype=float), (n,))
    lo, up, top = np.zeros(n), np.full(n, hi + 1.0), np.full(n, float(hi))
    g_lo, g_up = np.full(n, -1.0), np.full(n, np.nan)
    moved = np.zeros(n, np.int8)                 # +1: lo moved last, -1: up moved last (Illinois)
    tokens, tpot = np.zeros(n), np.full(n, np.nan)
    at, x = np.arange(n), np.ones(n)
    twin = None
    if rivals is not None:
        at = np.flatnonzero(np.broadcast_to(rivals.eligible, (n,)))
        if rivals.twins is not None:    # each point's twin: its candidate in its cell's twin
            k = rivals.per_cell
            twin = np.asarray(rivals.twins, dtype=np.int64).reshape(-1).repeat(k) * k + np.tile(np.arange(k), n // k)
    for rounds in range(ROUNDS + 64):
        if not at.size:
            break
        p = _probe_at(step_at, x, at, twin, design)
        t, r = p.tpot_s, p.tokens_per_s_per_gpu
        ok = p.fits_memory & (t <= slo[at])
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.maximum(t / slo[at], p.memory_bytes / p.capacity_bytes) - 1.0
        first = lo[at] == 0
        if rounds == 0:        # the cache's memory bounds every batch (memory_bound): search below it
            top = np.minimum(top, _memory_bound(p))
            up = np.minimum(up, top + 1.0)
        tokens[at] = np.where(ok | first, r, tokens[at])      # the step at lo (at 1 until one fits)
        tpot[at] = np.where(ok | first, t, tpot[at])
        i_ok, i_no = at[ok], at[~ok]
        # Illinois: an end that stays twice has its excess halved, so the next guess leaves it
        g_up[i_ok] = np.where(moved[i_ok] == 1, g_up[i_ok] / 2, g_up[i_ok])
        g_lo[i_no] = np.where(moved[i_no] == -1, g_lo[i_no] / 2, g_lo[i_no])
        lo[i_ok], g_lo[i_ok], moved[i_ok] = x[i_ok], np.minimum(g[ok], 0.0), 1
        up[i_no], g_up[i_no], moved[i_no] = x[i_no], np.maximum(g[~ok], 1e-300), -1
        at = at[up[at] - lo[at] > 1]
        if rivals is not None:
            at = _contenders(rivals, i_ok, at, lo, up, tokens)
        if not at.size:
            break
        if rounds >= ROUNDS:                    # a safety net: plain bisection
            x[at] = np.floor((lo[at] + up[at]) / 2)
            continue
        a, b, ga, gb = lo[at], up[at], g_lo[at], g_up[at]
        open_top = b > top[at]                   # nothing infeasible found yet: try the bound
        with np.errstate(divide="ignore", invalid="ignore"):
            guess = a + (b - a) * (-ga) / (gb - ga)
        guess = np.where(np.isfinite(guess), guess, (a + b) / 2)
        # just past the root after a feasible probe, just short of it after an infeasible one
        guess = np.where(moved[at] == 1, np.ceil(guess), np.floor(guess))
        x[at] = np.where(open_top, top[at], np.clip(guess, a + 1, b - 1))
    return lo, tokens, tpot


def _contenders(rivals: Rivals, found, at, lo, up, tokens) -> np.ndarray:
    """The open points ``at`` that may still beat their cell's best (:func:`largest`), after raising
    each cell's floor to the rates of the points just ``found`` feasible."""
    k, floor = rivals.per_cell, rivals.floor
    np.maximum.at(floor, found // k, tokens[found])
    open_lo = lo[at]
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.where(open_lo > 0, tokens[at] * (up[at] - 1.0) / open_lo, np.inf)
    return at[bound * (1.0 + PRUNE_MARGIN) >= floor[at // k]]


class _Probe(NamedTuple):
    """What the search reads of a step, one value per probed point: TPOT, whether it fits, tokens/s per
    GPU, the cache pool's bytes (EP: the GPU; AFD: the attention GPU, which holds the cache), its
    capacity and weights, and the requests."""

    tpot_s: np.ndarray
    fits_memory: np.ndarray
    tokens_per_s_per_gpu: np.ndarray
    memory_bytes: np.ndarray
    capacity_bytes: np.ndarray
    weights_bytes: np.ndarray
    requests: np.ndarray

    @classmethod
    def of(cls, st, design: str, shape: tuple) -> "_Probe":
        mem = st.memory_bytes if design == "ep" else st.afd.attn_memory_bytes
        fields = (st.tpot_s, st.fits_memory, st.tokens_per_s_per_gpu, mem, st.memory[0].capacity_bytes,
                  st.memory[0].weights_bytes, st.requests)
        return cls(*(np.broadcast_to(np.asarray(f, dtype=bool if i == 1 else float), shape) for i, f in enumerate(fields)))


def _probe_at(step_at, x, at, twin, design: str) -> _Probe:
    """The step at the points ``at`` and batches ``x[at]``; with ``twin`` (each point's twin: the same
    step, another SLO), a point whose twin is probed at the same batch in this round reads the twin's."""
    if twin is None:
        return _Probe.of(step_at(x[at], at), design, at.shape)
    mine = twin[at]
    probed = np.zeros(x.size, bool)
    probed[at] = True
    shared = (mine != at) & probed[mine] & (x[mine] == x[at])
    own = at[~shared]
    p = _Probe.of(step_at(x[own], own), design, own.shape)
    where = np.empty(x.size, np.int64)
    where[own] = np.arange(own.size)
    src = where[np.where(shared, mine, at)]
    return _Probe(*(f[src] for f in p))


def memory_bound(st, design: str) -> np.ndarray:
    """Per point of the step ``st``, a batch above which no batch fits in memory: the pool that holds the
    KV cache (EP: the GPU; AFD: the attention GPU) holds its weights and ``requests`` times one
    request's cache, affine in the batch, so every batch that fits is at most floor((capacity -
    weights) / per request); one more against rounding (the search still decides every batch by the
    step's own test). Infinite where a request needs no cache (or the step has no requests)."""
    return _memory_bound(_Probe.of(st, design, np.shape(st.tpot_s)))


def _memory_bound(p: _Probe) -> np.ndarray:
    cap, w = p.capacity_bytes, p.weights_bytes
    with np.errstate(divide="ignore", invalid="ignore"):
        per = (p.memory_bytes - w) / p.requests
        return np.where(per > 0, np.floor(np.maximum(cap - w, -per) / per) + 1.0, np.inf)
