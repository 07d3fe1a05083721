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
micro-batches).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike

from afdlib.errors import AfdError

ROUTES = {
    "afd": (("attention", "attention"), ("comm", "network"), ("ffn", "ffn")),
    "afd-duplex": (("attention", "attention"), ("dispatch", "to FFN"), ("ffn", "ffn"), ("combine", "to attention")),
    "ep": (("attention", "GPU"), ("dispatch", "network"), ("ffn", "GPU"), ("combine", "network")),
}
"""Stages of one layer as (stage, resource), per design."""

POOLS = {"afd": ("attention", "ffn"), "afd-duplex": ("attention", "ffn"), "ep": ("GPU", "GPU")}
"""The resources whose idle share is reported as (attention bubble, FFN bubble)."""

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
