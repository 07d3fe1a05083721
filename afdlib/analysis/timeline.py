"""Timelines of one decode step, drawn from the model (paper Fig. 5): where imbalance loses time.

Both designs are scheduled by the one scheduling core (:func:`afdlib.analysis.schedule.run`, through
:func:`schedule`): micro-batches cycle through attention -> dispatch -> FFN -> combine in every
layer; each resource serves one micro-batch at a time, in program order. A stage lasts as long as its most loaded node or rank (the others
idle until the all-to-all), and the bars show every lane.

* :func:`ep_timeline`: large-scale EP with two micro-batches (DeepSeek's dual-batch overlap): every
  rank runs attention and its experts on the same GPU (resource ``compute``); dispatch and combine
  use the ``network`` and hide behind the other micro-batch's compute when short enough
  (t_B = t_a + t_f, the paper's EP form).
* :func:`afd_timeline`: AFD with ``n_microbatches`` (3 for 3BO) cycling through the attention pool,
  the network (dispatch and combine on its two directions) and the FFN pool.

Loads are per node or rank, relative to a balanced load of 1; times are in any unit (t_B = 1).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from afdlib.errors import AfdError

STAGES = ("attention", "dispatch", "ffn", "combine", "idle")


@dataclass(frozen=True)
class Bar:
    lane: str
    start: float
    duration: float
    stage: str
    microbatch: int = 0

    @property
    def end(self) -> float:
        return self.start + self.duration


def schedule(ops: list[tuple[str, str, float]], n_microbatches: int, n_layers: int
             ) -> list[tuple[str, int, float, float]]:
    """Schedule ``n_layers`` repetitions of ``ops`` for every micro-batch, by the one scheduling
    core (:func:`afdlib.analysis.schedule.run`: each resource in program order).

    ``ops`` lists (stage, resource, duration) in order. Returns (stage, micro-batch, start,
    duration) events.
    """
    from afdlib.analysis.schedule import run
    r = run([(stage, resource) for stage, resource, _ in ops], lambda k, layer, b: ops[k][2], n_microbatches,
            n_layers, record=True)
    return [(stage, b, start, d) for stage, b, _, start, d in r.events]


def _bars(events, lanes: dict[str, list[tuple[str, float]]], times: dict[str, float]) -> tuple[list[Bar], float]:
    """Expand events into per-lane bars: ``lanes[stage]`` lists (lane, load) pairs; ``times[stage]`` is
    the unit time the load multiplies. Idle bars fill every lane up to the makespan."""
    bars = [Bar(lane, start, load * times[stage], stage, mb)
            for stage, mb, start, _ in events for lane, load in lanes[stage]]
    end = max(start + duration for _, _, start, duration in events)
    all_lanes = list(dict.fromkeys(lane for pairs in lanes.values() for lane, _ in pairs))
    return bars + _idle(bars, all_lanes, end), end


def _idle(bars: list[Bar], lanes: list[str], end: float) -> list[Bar]:
    """Idle bars filling each lane's gaps up to ``end``."""
    out = []
    for lane in lanes:
        t = 0.0
        for b in sorted((b for b in bars if b.lane == lane), key=lambda b: b.start):
            if b.start > t + 1e-12:
                out.append(Bar(lane, t, b.start - t, "idle"))
            t = max(t, b.end)
        if end > t + 1e-12:
            out.append(Bar(lane, t, end - t, "idle"))
    return out


def ep_timeline(t_a: float, t_f: float, attn_loads: ArrayLike, ffn_loads: ArrayLike, n_layers: int = 2,
                t_c: float = 0.3, n_microbatches: int = 2) -> tuple[list[Bar], float]:
    """Large-scale EP over ``len(attn_loads)`` ranks; returns bars (idle included) and the makespan.

    ``t_a``, ``t_f`` and ``t_c`` (dispatch + combine) are per micro-batch and layer.
    """
    a, f = np.asarray(attn_loads, dtype=float), np.asarray(ffn_loads, dtype=float)
    ranks = [f"rank {i}" for i in range(a.size)]
    ops = [("attention", "compute", a.max() * t_a), ("dispatch", "network", t_c / 2),
           ("ffn", "compute", f.max() * t_f), ("combine", "network", t_c / 2)]
    lanes = {"attention": list(zip(ranks, a)), "ffn": list(zip(ranks, f)),
             "dispatch": [("network", 1.0)], "combine": [("network", 1.0)]}
    return _bars(schedule(ops, n_microbatches, n_layers), lanes,
                 {"attention": t_a, "ffn": t_f, "dispatch": t_c / 2, "combine": t_c / 2})


def afd_timeline(t_a: float, t_f: float, t_c: float, attn_loads: ArrayLike, ffn_loads: ArrayLike,
                 n_layers: int = 2, n_microbatches: int = 3) -> tuple[list[Bar], float]:
    """AFD pipeline; returns bars (idle included) and the makespan.

    Resources: the attention pool, the two directions of the network (dispatch to the FFN pool
    and combine back, ``t_c / 2`` each: full-duplex links) and the FFN pool.
    """
    a, f = np.asarray(attn_loads, dtype=float), np.asarray(ffn_loads, dtype=float)
    ops = [("attention", "attention", a.max() * t_a), ("dispatch", "to FFN", t_c / 2),
           ("ffn", "ffn", f.max() * t_f), ("combine", "to attention", t_c / 2)]
    lanes = {"attention": [(f"attention {i}", x) for i, x in enumerate(a)],
             "dispatch": [("network, to FFN", 1.0)], "combine": [("network, to attention", 1.0)],
             "ffn": [(f"FFN {i}", x) for i, x in enumerate(f)]}
    return _bars(schedule(ops, n_microbatches, n_layers), lanes,
                 {"attention": t_a, "ffn": t_f, "dispatch": t_c / 2, "combine": t_c / 2})


def loads_with_balancedness(n: int, sigma: float) -> np.ndarray:
    """n loads with max 1 and mean sigma: one straggler at 1, the others equal (needs sigma >= 1/n)."""
    if n == 1:
        return np.ones(1)
    rest = (n * sigma - 1) / (n - 1)
    if rest < 0:
        raise AfdError(f"sigma {sigma} is below 1/n = {1 / n:.3f}: one node cannot carry more than all the load")
    return np.array([1.0] + [rest] * (n - 1))


def busy_share(bars: list[Bar], lane_prefix: str, makespan: float) -> float:
    """Share of the makespan the lanes starting with ``lane_prefix`` are busy (not idle)."""
    lanes = {b.lane for b in bars if b.lane.startswith(lane_prefix)}
    busy = sum(b.duration for b in bars if b.lane in lanes and b.stage != "idle")
    return busy / (len(lanes) * makespan) if lanes else 0.0


@dataclass(frozen=True)
class ImbalanceCase:
    """One imbalance timeline of Fig. 5 (its schedule) and the share of the balanced batch's tokens
    it processes."""

    bars: list[Bar]
    makespan: float
    token_share: float


def imbalance_cases(sigma: float, lambda_ep: float, ep_ranks: int = 4, n_attn: int = 2, n_ffn: int = 2,
                    n_layers: int = 2, t_c_ep: float = 0.3) -> dict[str, ImbalanceCase]:
    """The six schedules of Fig. 5: EP and AFD, balanced, with DP imbalance, with EP imbalance.

    EP: t_B = t_a + t_f = 1 per micro-batch with t_a / t_f = ``lambda_ep``, communication
    ``t_c_ep`` per micro-batch, two micro-batches. AFD: t_a = t_f = t_c = t_B = 1, three.
    DP imbalance: one attention rank or node carries the maximum load, the batch holds ``sigma``
    of the balanced tokens (so the FFN side sees sigma of the load). EP imbalance: one FFN rank
    or node receives 1/sigma of the mean load.
    """
    t_a, t_f = lambda_ep / (lambda_ep + 1), 1 / (lambda_ep + 1)
    one_ep, one_a, one_f = np.ones(ep_ranks), np.ones(n_attn), np.ones(n_ffn)
    strag_ep = loads_with_balancedness(ep_ranks, sigma)
    return {
        "EP, balanced": ImbalanceCase(*ep_timeline(t_a, t_f, one_ep, one_ep, n_layers, t_c_ep), 1.0),
        "EP, DP imbalance": ImbalanceCase(*ep_timeline(t_a, t_f, strag_ep, sigma * one_ep, n_layers, t_c_ep), sigma),
        "EP, EP imbalance": ImbalanceCase(*ep_timeline(t_a, t_f, one_ep, strag_ep / sigma, n_layers, t_c_ep), 1.0),
        "AFD, balanced": ImbalanceCase(*afd_timeline(1, 1, 1, one_a, one_f, n_layers), 1.0),
        "AFD, DP imbalance": ImbalanceCase(*afd_timeline(1, 1, 1, loads_with_balancedness(n_attn, sigma), sigma * one_f,
                                                n_layers), sigma),
        "AFD, EP imbalance": ImbalanceCase(*afd_timeline(1, 1, 1, one_a, loads_with_balancedness(n_ffn, sigma) / sigma,
                                                n_layers), 1.0),
    }


def relative_throughput(cases: dict[str, ImbalanceCase]) -> dict[str, float]:
    """Tokens per unit time of each case relative to the balanced case of the same design."""
    base = {name.split(",")[0]: c.makespan for name, c in cases.items() if name.endswith("balanced")}
    return {name: c.token_share * base[name.split(",")[0]] / c.makespan for name, c in cases.items()}
