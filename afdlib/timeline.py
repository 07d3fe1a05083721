"""Timelines of one decode step, drawn from the model (paper Fig. 5): where imbalance loses time.

Two schedules, each a list of :class:`Bar` (lane, start, duration, stage, micro-batch):

* :func:`ep_timeline`: large-scale EP, every rank runs attention then its experts, with an
  all-to-all barrier after each (communication overlapped by the two-micro-batch scheme and not
  drawn: t_B = t_a + t_f as in the paper's EP form).
* :func:`afd_timeline`: AFD with ``n_microbatches`` micro-batches cycling through the attention
  pool, the network (dispatch, then combine) and the FFN pool, each resource serving one
  micro-batch at a time (3BO for three). A pool's stage lasts as long as its most loaded node.

Loads are per node or rank, relative to a balanced load of 1; times are in any unit (t_B = 1).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

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


def ep_timeline(t_a: float, t_f: float, attn_loads: ArrayLike, ffn_loads: ArrayLike,
                n_layers: int = 2) -> tuple[list[Bar], float]:
    """Large-scale EP over ``len(attn_loads)`` ranks; returns bars (idle included) and the makespan."""
    a, f = np.asarray(attn_loads, dtype=float), np.asarray(ffn_loads, dtype=float)
    lanes = [f"rank {i}" for i in range(a.size)]
    bars, t = [], 0.0
    for _ in range(n_layers):
        bars += [Bar(lane, t, x * t_a, "attention") for lane, x in zip(lanes, a)]
        t += a.max() * t_a
        bars += [Bar(lane, t, x * t_f, "ffn") for lane, x in zip(lanes, f)]
        t += f.max() * t_f
    return bars + _idle(bars, lanes, t), t


def afd_timeline(t_a: float, t_f: float, t_c: float, attn_loads: ArrayLike, ffn_loads: ArrayLike,
                 n_layers: int = 2, n_microbatches: int = 3) -> tuple[list[Bar], float]:
    """AFD pipeline; returns bars (idle included) and the makespan.

    Each micro-batch runs attention -> dispatch -> FFN -> combine per layer. Resources (attention
    pool, network, FFN pool) serve one micro-batch at a time, first come first served (ties: lower
    micro-batch first). Dispatch and combine take ``t_c / 2`` each on the network lane.
    """
    a, f = np.asarray(attn_loads, dtype=float), np.asarray(ffn_loads, dtype=float)
    attn_lanes = [f"attention {i}" for i in range(a.size)]
    ffn_lanes = [f"FFN {i}" for i in range(f.size)]
    ops = [("attention", a.max() * t_a), ("dispatch", t_c / 2), ("ffn", f.max() * t_f), ("combine", t_c / 2)]
    resource = {"attention": "attention", "dispatch": "network", "ffn": "ffn", "combine": "network"}
    free = {"attention": 0.0, "network": 0.0, "ffn": 0.0}
    bars: list[Bar] = []
    # heap of (ready time, micro-batch, op index); op index counts through layers x 4 ops
    heap = [(0.0, mb, 0) for mb in range(n_microbatches)]
    heapq.heapify(heap)
    total_ops = 4 * n_layers
    while heap:
        # pick the op that can start earliest
        best = min(heap, key=lambda item: (max(item[0], free[resource[ops[item[2] % 4][0]]]), item[1]))
        heap.remove(best)
        heapq.heapify(heap)
        ready, mb, k = best
        stage, dur = ops[k % 4]
        start = max(ready, free[resource[stage]])
        free[resource[stage]] = start + dur
        if stage == "attention":
            bars += [Bar(lane, start, x * t_a, stage, mb) for lane, x in zip(attn_lanes, a)]
        elif stage == "ffn":
            bars += [Bar(lane, start, x * t_f, stage, mb) for lane, x in zip(ffn_lanes, f)]
        else:
            bars.append(Bar("network", start, dur, stage, mb))
        if k + 1 < total_ops:
            heapq.heappush(heap, (start + dur, mb, k + 1))
    end = max(b.end for b in bars)
    return bars + _idle(bars, attn_lanes + ["network"] + ffn_lanes, end), end


def loads_with_balancedness(n: int, sigma: float) -> np.ndarray:
    """n loads with max 1 and mean sigma: one straggler at 1, the others equal (needs sigma >= 1/n)."""
    if n == 1:
        return np.ones(1)
    rest = (n * sigma - 1) / (n - 1)
    if rest < 0:
        from .errors import AfdError
        raise AfdError(f"sigma {sigma} is below 1/n = {1 / n:.3f}: one node cannot carry more than all the load")
    return np.array([1.0] + [rest] * (n - 1))


def busy_share(bars: list[Bar], lane_prefix: str, makespan: float) -> float:
    """Share of the makespan the lanes starting with ``lane_prefix`` are busy (not idle)."""
    lanes = {b.lane for b in bars if b.lane.startswith(lane_prefix)}
    busy = sum(b.duration for b in bars if b.lane in lanes and b.stage != "idle")
    return busy / (len(lanes) * makespan) if lanes else 0.0


@dataclass(frozen=True)
class Case:
    """One schedule of Fig. 5 and the share of the balanced batch's tokens it processes."""

    bars: list[Bar]
    makespan: float
    token_share: float


def imbalance_cases(sigma: float, lambda_ep: float, ep_ranks: int = 4, n_attn: int = 2, n_ffn: int = 2,
                    n_layers: int = 2) -> dict[str, Case]:
    """The six schedules of Fig. 5: EP and AFD, balanced, with DP imbalance, with EP imbalance.

    EP: t_B = t_a + t_f = 1 with t_a / t_f = ``lambda_ep``. AFD: t_a = t_f = t_c = t_B = 1.
    DP imbalance: one attention rank or node carries the maximum load, the batch holds ``sigma``
    of the balanced tokens (so the FFN side sees sigma of the load). EP imbalance: one FFN rank
    or node receives 1/sigma of the mean load.
    """
    t_a, t_f = lambda_ep / (lambda_ep + 1), 1 / (lambda_ep + 1)
    one_ep, one_a, one_f = np.ones(ep_ranks), np.ones(n_attn), np.ones(n_ffn)
    strag_ep = loads_with_balancedness(ep_ranks, sigma)
    return {
        "EP, balanced": Case(*ep_timeline(t_a, t_f, one_ep, one_ep, n_layers), 1.0),
        "EP, DP imbalance": Case(*ep_timeline(t_a, t_f, strag_ep, sigma * one_ep, n_layers), sigma),
        "EP, EP imbalance": Case(*ep_timeline(t_a, t_f, one_ep, strag_ep / sigma, n_layers), 1.0),
        "AFD, balanced": Case(*afd_timeline(1, 1, 1, one_a, one_f, n_layers), 1.0),
        "AFD, DP imbalance": Case(*afd_timeline(1, 1, 1, loads_with_balancedness(n_attn, sigma), sigma * one_f,
                                                n_layers), sigma),
        "AFD, EP imbalance": Case(*afd_timeline(1, 1, 1, one_a, loads_with_balancedness(n_ffn, sigma) / sigma,
                                                n_layers), 1.0),
    }


def relative_throughput(cases: dict[str, Case]) -> dict[str, float]:
    """Tokens per unit time of each case relative to the balanced case of the same design."""
    base = {name.split(",")[0]: c.makespan for name, c in cases.items() if name.endswith("balanced")}
    return {name: c.token_share * base[name.split(",")[0]] / c.makespan for name, c in cases.items()}
