"""A given deployment's batch search over a sweep's chunk, with fewer evaluations per point than
bisection: the same answer as :func:`afdlib.decode.batch.largest_batch` (the largest integer batch
whose step fits in memory and meets the SLO; 0 where one request does not), found by regula falsi
with the Illinois correction on the step's own continuous excess over its limits, each round
evaluating only the points whose bracket is still open.

Feasibility is decided by the step's own test (``fits_memory`` and ``tpot_s <= slo``) only; the
excess (the larger of TPOT / SLO and the KV-cache pool's memory / its capacity, minus 1) only
chooses where to look next. Each point keeps a bracket: its largest batch known to be feasible
(``lo``; 0 at first) and its smallest known not to be (``up``; one past the bound at first). A
probe inside the bracket moves one end; the search ends when the ends are adjacent, so the answer
is exact wherever TPOT and memory grow with the batch (the library's assumption too). Bisection
needs log2(bound) rounds over every point; here a point's excess is smooth in the batch (a
rounded roofline), so its bracket closes in a few probes and the chunk's later rounds run on the
few points left. The step at the answer is the one its probe evaluated: no last evaluation.
"""
from __future__ import annotations

import numpy as np

ROUNDS = 60
"""A cap on probe rounds (each round at least moves one end of every open bracket, so a bound of
2^16 is reached well before it): past it the remaining points are bisected."""


def largest(step_at, slo, n: int, hi: int, design: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(batch, tokens/s per GPU, TPOT s) per point of ``n``: the largest batch 0..``hi`` that fits and
    meets ``slo`` (an array over the points or a number), and the step's throughput and TPOT there
    (at one request where none fits, as the library's ``step_of(max(batch, 1))``).
    ``step_at(requests, index)`` evaluates the step at the points ``index`` (an index array; it may
    repeat) with ``requests`` of the same length."""
    slo = np.broadcast_to(np.asarray(slo, dtype=float), (n,))
    lo, up = np.zeros(n), np.full(n, hi + 1.0)
    g_lo, g_up = np.full(n, -1.0), np.full(n, np.nan)
    moved = np.zeros(n, np.int8)                 # +1: lo moved last, -1: up moved last (Illinois)
    tokens, tpot = np.zeros(n), np.full(n, np.nan)
    at, x = np.arange(n), np.ones(n)
    for rounds in range(ROUNDS + 64):
        if not at.size:
            break
        st = step_at(x[at], at)
        t = np.broadcast_to(np.asarray(st.tpot_s, dtype=float), at.shape)
        ok = np.broadcast_to(np.asarray(st.fits_memory & (t <= slo[at])), at.shape)
        g = _excess(st, design, slo[at], at.shape)
        r = np.broadcast_to(np.asarray(st.tokens_per_s_per_gpu, dtype=float), at.shape)
        first = lo[at] == 0
        tokens[at] = np.where(ok | first, r, tokens[at])      # the step at lo (at 1 until one fits)
        tpot[at] = np.where(ok | first, t, tpot[at])
        i_ok, i_no = at[ok], at[~ok]
        # Illinois: an end that stays twice has its excess halved, so the next guess leaves it
        g_up[i_ok] = np.where(moved[i_ok] == 1, g_up[i_ok] / 2, g_up[i_ok])
        g_lo[i_no] = np.where(moved[i_no] == -1, g_lo[i_no] / 2, g_lo[i_no])
        lo[i_ok], g_lo[i_ok], moved[i_ok] = x[i_ok], np.minimum(g[ok], 0.0), 1
        up[i_no], g_up[i_no], moved[i_no] = x[i_no], np.maximum(g[~ok], 1e-300), -1
        at = at[up[at] - lo[at] > 1]
        if not at.size:
            break
        if rounds >= ROUNDS:                    # a safety net: plain bisection
            x[at] = np.floor((lo[at] + up[at]) / 2)
            continue
        a, b, ga, gb = lo[at], up[at], g_lo[at], g_up[at]
        open_top = b > hi                        # nothing infeasible found yet: try the bound
        with np.errstate(divide="ignore", invalid="ignore"):
            guess = a + (b - a) * (-ga) / (gb - ga)
        guess = np.where(np.isfinite(guess), guess, (a + b) / 2)
        # just past the root after a feasible probe, just short of it after an infeasible one
        guess = np.where(moved[at] == 1, np.ceil(guess), np.floor(guess))
        x[at] = np.where(open_top, float(hi), np.clip(guess, a + 1, b - 1))
    return lo, tokens, tpot


def _excess(st, design, slo, shape) -> np.ndarray:
    cap = st.memory[0].capacity_bytes            # EP: the GPU; AFD: the attention GPU, which holds the cache
    mem = st.memory_bytes if design == "ep" else st.afd.attn_memory_bytes
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.maximum(np.asarray(st.tpot_s, dtype=float) / slo, np.asarray(mem, dtype=float) / cap) - 1.0
    return np.broadcast_to(g, shape)
