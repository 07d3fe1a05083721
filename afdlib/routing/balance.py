"""Where sigma comes from: balancedness of expert load over ranks, from routing statistics.

Balancedness sigma = mean / max of per-rank load (<= 1). Sources of load:

* uniform top-K routing of T tokens over E experts (analytic: mean + Gaussian extreme-value
  term; Monte-Carlo: top-K without replacement per token);
* skewed expert popularity (a Zipf exponent, or a measured histogram such as SGLang's
  ``logical_count`` recorder dumps);
* placements: equal contiguous blocks of experts per rank (plain EP), or redundant experts placed
  in the manner of DeepSeek's EPLB (replicate the expert with the highest load per replica, then
  pack replicas onto ranks with equal slot counts, heaviest first into the lightest rank).

All random draws take an explicit seed (``numpy.random.default_rng``).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

from afdlib.errors import AfdError
from afdlib.routing.measured import moe_layers


def balancedness(loads: ArrayLike) -> np.ndarray:
    """mean / max along the last axis (1 for an all-zero row)."""
    x = np.asarray(loads, dtype=float)
    mx = x.max(axis=-1)
    return np.divide(x.mean(axis=-1), mx, out=np.ones_like(mx), where=mx > 0)


def expected_max_std_normal(n: ArrayLike, method: str = "blom") -> np.ndarray:
    """Expected maximum of n independent standard normals.

    ``blom``: Phi^-1((n - 0.375) / (n + 0.25)), within 0.03 of the exact value for n >= 2 and
    within 1% for n >= 10;
    ``leading``: sqrt(2 ln n), the leading extreme-value term (overestimates for small n).
    """
    n = np.asarray(n, dtype=float)
    if method == "leading":
        return np.sqrt(2 * np.log(np.maximum(n, 1)))
    if method != "blom":
        raise AfdError(f"unknown method '{method}'; valid: blom, leading")
    # rank counts repeat across a grid: invert the normal CDF once per distinct value
    values, index = np.unique(np.maximum(n, 1.0), return_inverse=True)
    inv = NormalDist().inv_cdf
    z = np.array([inv((v - 0.375) / (v + 0.25)) if v > 1 else 0.0 for v in values])
    return z[index].reshape(n.shape)


def uniform_balancedness(tokens: ArrayLike, experts_per_token: int, routed_experts: int, ranks: ArrayLike,
                         method: str = "blom") -> np.ndarray:
    """Expected balancedness of uniform top-K routing over R ranks holding E/R experts each.

    Per-rank load has mean mu = T K / R and variance v = T K (1/R)(1 - 1/R)(E - K)/(E - 1)
    (K distinct experts per token: a hypergeometric correction); for large T the loads are about
    normal, and the expected maximum is mu + z_R sqrt(v), with z_R from
    :func:`expected_max_std_normal` (``method="leading"`` gives the mu + sqrt(2 ln R v) form).
    Returns mu / (mu + z_R sqrt(v)).
    """
    t, r = np.asarray(tokens, dtype=float), np.asarray(ranks, dtype=float)
    k, e = np.asarray(experts_per_token, dtype=float), np.asarray(routed_experts, dtype=float)
    if np.any(k > e):
        raise AfdError(f"TopK ({experts_per_token}) exceeds the routed experts ({routed_experts})")
    mu = t * k / r
    v = t * k / r * (1 - 1 / r) * (e - k) / np.maximum(e - 1, 1)
    return mu / (mu + expected_max_std_normal(r, method) * np.sqrt(v))


def alias_table(popularity: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Walker's alias table (Vose's construction) for drawing index i with probability p_i / sum(p):
    draw a uniform index i and a uniform u; keep i if u < prob[i], else take alias[i]."""
    p = np.asarray(popularity, dtype=float)
    n = p.size
    scaled = p * (n / p.sum())
    prob = np.ones(n)
    alias = np.arange(n)
    small = [i for i in range(n) if scaled[i] < 1.0]
    large = [i for i in range(n) if scaled[i] >= 1.0]
    while small and large:
        s_, l_ = small.pop(), large.pop()
        prob[s_], alias[s_] = scaled[s_], l_
        scaled[l_] = scaled[l_] + scaled[s_] - 1.0
        (small if scaled[l_] < 1.0 else large).append(l_)
    for i in small + large:              # what is left is 1 up to rounding
        prob[i] = 1.0
    return prob, alias


def route_tokens(tokens: int, experts_per_token: int, popularity: ArrayLike, rng: np.random.Generator,
                 chunk: int = 1 << 18) -> np.ndarray:
    """Tokens routed to each expert: every token picks K distinct experts, weighted by popularity.

    Sequential sampling without replacement (the Plackett-Luce / Gumbel top-K distribution):
    slot j of every token is drawn from ``popularity`` and redrawn while it repeats one of the
    token's slots 1..j-1, which is exactly a draw from the popularity restricted to the experts
    not yet chosen. Vectorised over tokens (alias-method draws, :func:`alias_table`), in chunks to
    bound memory.
    Returns counts of shape (E,), summing to T K.
    """
    p = np.asarray(popularity, dtype=float)
    e, k = p.size, int(experts_per_token)
    if k > e:
        raise AfdError(f"TopK ({experts_per_token}) exceeds the routed experts ({e})")
    if tokens < 0 or np.any(~np.isfinite(p)) or np.any(p < 0) or p.sum() <= 0:
        raise AfdError("need tokens >= 0 and a non-negative popularity with a positive sum")
    if np.count_nonzero(p) < k:
        raise AfdError(f"only {np.count_nonzero(p)} experts have non-zero popularity: cannot pick {k} distinct")
    prob, alias = alias_table(p)

    def draw(n: int) -> np.ndarray:
        # Walker's alias method: O(1) per draw, the same distribution as inverse-CDF sampling
        i = rng.integers(0, e, n)
        return np.where(rng.random(n) < prob[i], i, alias[i])

    counts = np.zeros(e, dtype=np.int64)
    for start in range(0, tokens, chunk):
        n = min(chunk, tokens - start)
        chosen = np.empty((n, k), dtype=np.int64)
        for j in range(k):
            slot = draw(n)
            todo = np.arange(n)
            while True:
                clash = (chosen[todo, :j] == slot[todo, None]).any(axis=1)
                if not clash.any():
                    break
                todo = todo[clash]
                slot[todo] = draw(todo.size)
            chosen[:, j] = slot
        counts += np.bincount(chosen.ravel(), minlength=e)
    return counts


def contiguous_rank_loads(expert_loads: ArrayLike, ranks: int) -> np.ndarray:
    """Load per rank with experts in equal contiguous blocks (expert e on rank floor(e R / E)).

    Works on the last axis, so a stack of batches (..., E) gives (..., R).
    """
    x = np.asarray(expert_loads, dtype=float)
    if ranks < 1:
        raise AfdError(f"ranks must be >= 1, got {ranks}")
    e = x.shape[-1]
    owner = (np.arange(e) * ranks) // e
    return x @ (owner[:, None] == np.arange(ranks)[None, :]).astype(float)


@dataclass(frozen=True)
class Placement:
    """Replicas of logical experts on ranks.

    ``replicas[e]`` copies of expert e; ``slot_expert[r]`` lists the logical experts of rank r's
    slots. Each replica takes an equal share of its expert's tokens.
    """

    replicas: np.ndarray
    slot_expert: list[np.ndarray]

    def rank_loads(self, expert_loads: ArrayLike) -> np.ndarray:
        """Per-rank load for given per-expert loads (last axis E), split evenly across replicas:
        one matrix product with the (E, R) matrix of each expert's share on each rank."""
        x = np.asarray(expert_loads, dtype=float)
        return x @ self.share_matrix

    @cached_property
    def share_matrix(self) -> np.ndarray:
        """(E, R): the share of expert e's tokens that rank r serves (its slots / replicas)."""
        m = np.zeros((self.replicas.size, len(self.slot_expert)))
        ranks = np.repeat(np.arange(len(self.slot_expert)), [s.size for s in self.slot_expert])
        np.add.at(m, (np.concatenate(self.slot_expert), ranks), 1.0)      # one slot adds 1 to (expert, rank)
        return m / self.replicas[:, None]


def eplb_placement(expert_loads: ArrayLike, ranks: int, redundant: int = 0) -> Placement:
    """Redundant experts and balanced packing in the manner of DeepSeek's EPLB (global policy).

    1. Replication: starting from one replica per expert, ``redundant`` times give one more replica
       to the expert with the highest load per replica.
    2. Packing: E + redundant slots over ``ranks`` ranks, ranks getting equal slot counts (the
       first (E + redundant) mod R ranks one more when it does not divide); replicas sorted by
       load, heaviest first, each into the lightest rank that still has a free slot.
    With ``redundant = 0`` this only rearranges the experts.
    """
    x = np.asarray(expert_loads, dtype=float)
    if x.ndim != 1:
        raise AfdError("eplb_placement takes one layer's loads (a 1-D array)")
    key = (x.tobytes(), int(ranks), int(redundant))
    if key in _PLACEMENTS:
        return _PLACEMENTS[key]
    placement = _eplb_placement(x, ranks, redundant)
    if len(_PLACEMENTS) >= 4096:
        _PLACEMENTS.clear()
    _PLACEMENTS[key] = placement
    return placement


_PLACEMENTS: dict = {}
"""Placements already fitted in this process (a placement is a pure function of its inputs)."""


def _eplb_placement(x: np.ndarray, ranks: int, redundant: int) -> Placement:
    e = x.size
    if ranks < 1 or redundant < 0:
        raise AfdError(f"need ranks >= 1 and redundant >= 0, got {ranks} and {redundant}")
    slots = e + redundant
    if slots < ranks:
        raise AfdError(f"{slots} expert slot{'' if slots == 1 else 's'} cannot fill {ranks} ranks: add redundant experts or use fewer ranks")
    # heaps give the same choices as scanning every expert / rank (ties: the lowest index)
    reps, loads = [1] * e, x.tolist()
    if redundant:
        heap = [(-v, i) for i, v in enumerate(loads)]
        heapq.heapify(heap)
        for _ in range(redundant):
            _, i = heapq.heappop(heap)
            reps[i] += 1
            heapq.heappush(heap, (-(loads[i] / reps[i]), i))
    replicas = np.array(reps, dtype=np.int64)
    item_expert = np.repeat(np.arange(e), replicas)
    item_load = (x / replicas)[item_expert]
    capacity = np.full(ranks, slots // ranks)
    capacity[: slots % ranks] += 1
    used = [0] * ranks
    members: list[list[int]] = [[] for _ in range(ranks)]
    open_ranks = [(0.0, r) for r in range(ranks)]       # (weight, rank) of ranks with a free slot
    cap, expert_of, load_of = capacity.tolist(), item_expert.tolist(), item_load.tolist()   # Python numbers: the same values, no per-item conversion
    for i in np.argsort(-item_load, kind="stable").tolist():
        w, r = heapq.heappop(open_ranks)
        members[r].append(expert_of[i])
        used[r] += 1
        if used[r] < cap[r]:
            heapq.heappush(open_ranks, (w + load_of[i], r))
    slots_of = [np.array(m, dtype=np.int64) for m in members]
    for a in (replicas, *slots_of):      # shared through the cache: read-only
        a.setflags(write=False)
    return Placement(replicas, slots_of)


# ----------------------------------------------------------------------------- balance reports

@dataclass(frozen=True)
class BalanceReport:
    """Per-layer balancedness, experts contiguous and with the EPLB-style placement."""

    layers: np.ndarray
    contiguous: np.ndarray
    redundant: np.ndarray

    @property
    def median_contiguous(self) -> float:
        return float(np.median(self.contiguous))

    @property
    def median_redundant(self) -> float:
        return float(np.median(self.redundant))


def balance_sweep(counts: ArrayLike, ranks: list[int], redundant: int | list[int] = 0, tokens: int | None = None,
                  experts_per_token: int = 8, trials: int = 5, seed: int = 0,
                  layers: ArrayLike | None = None, progress=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Balancedness of each MoE layer for several rank counts, on the same sampled batches.

    Without ``tokens``: the long-run counts themselves. With ``tokens``: ``trials`` batches of T
    tokens sampled from each layer's long-run popularity (top-K without replacement), and the
    median over trials. The redundant-expert placement is fitted to the long-run counts (an
    oracle on the same data), as a static placement would be. ``redundant`` is one number or one
    per entry of ``ranks``. Returns (layers, contiguous, redundant), the last two of shape
    (len(ranks), len(layers)). ``progress(done, layers)`` is called after each layer where given.
    """
    c = np.asarray(counts, dtype=float)
    ranks = [int(r) for r in ranks]
    extra = [int(redundant)] * len(ranks) if np.isscalar(redundant) else [int(x) for x in redundant]
    if len(extra) != len(ranks):
        raise AfdError("give one redundant count, or one per rank count")
    if min(ranks) < 1 or min(extra) < 0:
        raise AfdError(f"ranks must be >= 1 and redundant >= 0, got {ranks} and {extra}")
    if tokens is not None and (tokens < 1 or trials < 1):
        raise AfdError(f"tokens and trials must be >= 1, got {tokens} and {trials}")
    idx = moe_layers(c) if layers is None else np.asarray(layers, dtype=int)
    if idx.size == 0:
        raise AfdError("no layer has any routed tokens")
    rng = np.random.default_rng(seed)
    cont = np.empty((len(ranks), idx.size))
    red = np.empty((len(ranks), idx.size))
    for j, layer in enumerate(idx):
        if tokens is None:
            batches = c[layer][None, :]
        else:
            batches = np.stack([route_tokens(tokens, experts_per_token, c[layer], rng) for _ in range(trials)])
        for i, (r, n) in enumerate(zip(ranks, extra)):
            cont[i, j] = np.median(balancedness(contiguous_rank_loads(batches, r)))
            red[i, j] = np.median(balancedness(eplb_placement(c[layer], r, n).rank_loads(batches)))
        if progress is not None:
            progress(j + 1, idx.size)
    return idx, cont, red


def balance_report(counts: ArrayLike, ranks: int, redundant: int = 0, tokens: int | None = None,
                   experts_per_token: int = 8, trials: int = 5, seed: int = 0, progress=None) -> BalanceReport:
    """Per-layer balancedness on ``ranks`` ranks (see :func:`balance_sweep`)."""
    layers, cont, red = balance_sweep(counts, [ranks], redundant, tokens, experts_per_token, trials, seed,
                                      progress=progress)
    return BalanceReport(layers, cont[0], red[0])


def effective_balancedness(per_layer_sigma: ArrayLike, axis: int | None = None):
    """One sigma for a whole step: layers run in sequence, so the FFN time is sum(t_f / sigma_l),
    and the step's sigma is the harmonic mean 1 / mean(1 / sigma_l).

    A float over all of ``per_layer_sigma``; with ``axis`` (the layers' axis), an array of one
    sigma per step over the other axes."""
    s = np.asarray(per_layer_sigma, dtype=float)
    if axis is None:
        return float(1.0 / np.mean(1.0 / s))
    return 1.0 / np.mean(1.0 / s, axis=axis)


# ----------------------------------------------------------------------------- measured skew of a placement

def placement_replicas(ranks: int, experts: int, redundant: int) -> int:
    """Redundant replicas of a placement of ``experts`` over ``ranks`` GPUs: ``redundant``, and at
    least ``ranks - experts`` so that every GPU holds an expert (EPLB packs E + replicas slots over
    the ranks, none empty). One rule for every design: EP over its ranks, AFD over its FFN pool."""
    return max(int(redundant), int(ranks) - int(experts))


def placement_skew(counts: ArrayLike):
    """A function ``skew(ranks, redundant) -> balancedness`` from measured expert loads.

    For each (ranks, redundant) pair it places the experts in the manner of EPLB on the long-run
    counts of every MoE layer (:func:`placement_replicas` replicas) and returns the
    step's balancedness (harmonic mean over layers, :func:`effective_balancedness`). Arrays of
    pairs are answered element-wise; each distinct pair is placed once and remembered. The decode
    model multiplies it with uniform routing's per-step balancedness: what the placement leaves of
    the measured skew, and what sampling a finite batch adds.
    """
    c = np.asarray(counts, dtype=float)
    layers = moe_layers(c)
    if layers.size == 0:
        raise AfdError("no layer has any routed tokens")
    e = c.shape[1]
    memo: dict[tuple[int, int], float] = {}

    def one(ranks: int, redundant: int) -> float:
        key = (ranks, redundant)
        if key not in memo:
            extra = placement_replicas(ranks, e, redundant)
            sig = [float(balancedness(eplb_placement(c[la], ranks, extra).rank_loads(c[la]))) for la in layers]
            memo[key] = effective_balancedness(sig)
        return memo[key]

    def skew(ranks, redundant=0) -> np.ndarray:
        r, red = np.broadcast_arrays(np.asarray(ranks, dtype=float), np.asarray(redundant, dtype=float))
        # each (ranks, redundant) pair as one integer code: a 1-D unique (a sort) instead of a row-wise one
        ri, di = r.ravel().astype(np.int64), red.ravel().astype(np.int64)
        base = int(di.max(initial=0)) + 1
        uniq, index = np.unique(ri * base + di, return_inverse=True)
        values = np.array([one(int(u // base), int(u % base)) for u in uniq])
        return values[index.reshape(-1)].reshape(r.shape)

    return skew


FIT_LAYERS = 8
"""Layers a fitted skew places (:func:`fitted_skew`): the exponents at the midpoints of eight equal
quantile bins of the measured layers' (the step's skew is a harmonic mean over layers, smooth in them)."""


@lru_cache(maxsize=16)
def fitted_skew(routed_experts: int, fit_path: str | None = None, name: str = "decode_in1000out1000"):
    """:func:`placement_skew` of Zipf loads over ``routed_experts`` experts with
    the exponents of the measured DeepSeek-V3 layers (the shipped fit, ``data/deepseek_v3_routing_fit.yaml``,
    :data:`FIT_LAYERS` quantiles of them; experts in a seeded random order): the only measured routing
    on file, carried to a model with another expert count by its per-layer Zipf exponents."""
    from afdlib.inputs.catalog import data_dir
    from afdlib.inputs.files import read_yaml
    from afdlib.routing.measured import zipf_counts
    doc = read_yaml(Path(fit_path) if fit_path else data_dir() / "deepseek_v3_routing_fit.yaml")
    try:
        exps = np.asarray(doc["files"][name]["zipf_exponent"], dtype=float)
    except (KeyError, TypeError, ValueError) as e:
        raise AfdError(f"routing fit: no usable exponents for '{name}' ({e})") from None
    s = np.quantile(exps, (np.arange(FIT_LAYERS) + 0.5) / FIT_LAYERS)
    counts = np.stack([zipf_counts(1e6, int(routed_experts), x, seed=k) for k, x in enumerate(s)])
    return placement_skew(counts)
