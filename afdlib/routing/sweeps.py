"""Balancedness sweeps over EP sizes and batch sizes (the sigma chapter's tables).

* uniform top-K routing: the analytic forms (:func:`afdlib.routing.balance.uniform_balancedness`)
  against a Monte-Carlo of the same routing;
* measured (or fitted) long-run loads: experts in contiguous blocks, placed by EPLB without and with
  redundant replicas, per EP size;
* batches of T tokens drawn from each layer's long-run popularity, the placement fitted to the
  long-run counts;
* a Zipf exponent per layer (:func:`afdlib.routing.measured.fit_zipf`) and its summary.

Balancedness sigma = mean / max rank load (1: perfect). Columns are returned as dicts of arrays, one
entry per table column.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from afdlib.errors import AfdError
from afdlib.routing.balance import (
    balance_sweep, balancedness, contiguous_rank_loads, placement_replicas, route_tokens, uniform_balancedness,
)
from afdlib.routing.measured import fit_zipf


@dataclass(frozen=True)
class UniformCheck:
    """Uniform top-K routing of T tokens (rows) over E experts on R ranks (columns, the EP sizes that
    divide E): sigma by Blom's approximation, by its sqrt(2 ln R) leading term, and by Monte-Carlo
    (mean over trials)."""

    tokens: np.ndarray
    ranks: np.ndarray
    experts_per_token: int
    analytic: np.ndarray
    leading: np.ndarray
    monte_carlo: np.ndarray

    @property
    def mean_load(self) -> np.ndarray:
        """Token-expert pairs a rank expects, mu = T K / R."""
        return self.tokens[:, None] * self.experts_per_token / self.ranks[None, :]

    def gap(self, min_load: float = 64.0) -> tuple[float, float]:
        """Largest |Monte-Carlo - Blom| and |Monte-Carlo - leading term| where mu >= ``min_load``
        (nan where no cell qualifies)."""
        big = self.mean_load >= min_load
        if not big.any():
            return np.nan, np.nan
        return (float(np.abs(self.monte_carlo - self.analytic)[big].max()),
                float(np.abs(self.monte_carlo - self.leading)[big].max()))


def uniform_check(batch_tokens: list[int], experts_per_token: int, n_experts: int, ep_sizes: list[int],
                  trials: int, seed: int = 0) -> UniformCheck:
    """The analytic sigma of uniform routing against ``trials`` Monte-Carlo draws per batch size (one
    generator seeded ``seed``, batches drawn in order); experts in contiguous blocks of E / R."""
    ranks = np.array([r for r in ep_sizes if n_experts % r == 0])
    if ranks.size == 0:
        raise AfdError(f"no EP size in {list(ep_sizes)} divides the {n_experts} experts")
    rng = np.random.default_rng(seed)
    draws = {t: np.stack([route_tokens(t, experts_per_token, np.ones(n_experts), rng) for _ in range(trials)])
             for t in batch_tokens}
    mc = np.array([[balancedness(contiguous_rank_loads(draws[t], r)).mean() for r in ranks] for t in batch_tokens])
    tokens = np.array(batch_tokens)
    analytic, leading = (uniform_balancedness(tokens[:, None], experts_per_token, n_experts, ranks[None, :], method=m)
                         for m in ("blom", "leading"))
    return UniformCheck(tokens, ranks, experts_per_token, analytic, leading, mc)


def replicas_for(ep_sizes: list[int], n_experts: int, redundant: int) -> list[int]:
    """Redundant replicas per EP size (:func:`afdlib.routing.balance.placement_replicas`): ``redundant``,
    or more where E + redundant slots would leave a rank empty (then R - E, one slot per rank)."""
    return [placement_replicas(r, n_experts, redundant) for r in ep_sizes]


def longrun_balance(counts: ArrayLike, ep_sizes: list[int], redundant: int,
                    max_over_mean: bool = False) -> dict[str, object]:
    """Median over MoE layers of the long-run sigma per EP size: experts contiguous, placed by EPLB
    with replicas only where R > E, and with ``redundant`` replicas (:func:`replicas_for`);
    ``max_over_mean`` adds 1 / sigma of the first and the last."""
    c = np.asarray(counts, dtype=float)
    e = c.shape[1]
    _, cont, red = balance_sweep(c, ep_sizes, replicas_for(ep_sizes, e, redundant))
    _, _, pack = balance_sweep(c, ep_sizes, [max(0, r - e) for r in ep_sizes])
    out = {"ep_size": list(ep_sizes), "contiguous": np.median(cont, axis=1),
           "eplb_no_replicas": np.median(pack, axis=1), f"eplb_plus_{redundant}": np.median(red, axis=1)}
    if max_over_mean:
        out["contiguous_max_over_mean"] = 1 / out["contiguous"]
        out[f"eplb_plus_{redundant}_max_over_mean"] = 1 / out[f"eplb_plus_{redundant}"]
    return out


def sample_layers(layers: ArrayLike, n: int) -> np.ndarray:
    """``n`` of ``layers`` (at most all), evenly spaced, first and last included."""
    layers = np.asarray(layers)
    return layers[np.linspace(0, layers.size - 1, min(n, layers.size)).astype(int)]


def per_batch_balance(counts: ArrayLike, ep_sizes: list[int], redundant: int, batch_tokens: list[int],
                      experts_per_token: int, trials: int, seed: int, layers: ArrayLike) -> list[dict]:
    """Per batch size T and EP size: the median over ``layers`` of each layer's median sigma over
    ``trials`` batches of T tokens drawn from its long-run popularity (the same seed for every T),
    experts contiguous and placed by EPLB with replicas (:func:`replicas_for`)."""
    extra = replicas_for(ep_sizes, np.asarray(counts).shape[1], redundant)
    rows = []
    for t in batch_tokens:
        _, cont, red = balance_sweep(counts, ep_sizes, extra, tokens=t, experts_per_token=experts_per_token,
                                     trials=trials, seed=seed, layers=layers)
        rows += [{"tokens": t, "ep_size": r, "contiguous": float(np.median(cont[i])),
                  f"eplb_plus_{redundant}": float(np.median(red[i]))} for i, r in enumerate(ep_sizes)]
    return rows


FIT_QUANTITIES = {"zipf_exponent": ("exponent", "Zipf exponent s"),
                  "total_variation": ("total_variation", "total variation (0 = perfect fit)"),
                  "max_over_mean_measured": ("max_over_mean_measured", "max / mean, measured"),
                  "max_over_mean_fitted": ("max_over_mean_fitted", "max / mean, fitted")}
"""Columns of :func:`zipf_fit_table`: the :class:`afdlib.routing.measured.ZipfFit` field and the label."""


def zipf_fit_table(counts: ArrayLike, layers: ArrayLike) -> dict[str, object]:
    """Per layer, the least-squares Zipf exponent of its long-run loads, the total variation of the
    fit and the hottest expert's load over the mean, measured and fitted."""
    c = np.asarray(counts, dtype=float)
    fits = [fit_zipf(c[i]) for i in layers]
    return {"layer": np.asarray(layers),
            **{column: [getattr(f, field) for f in fits] for column, (field, _) in FIT_QUANTITIES.items()}}


def zipf_fit_summary(table: dict) -> dict[str, list]:
    """Median, min and max over the layers of each quantity of :func:`zipf_fit_table`."""
    return {"quantity": [label for _, label in FIT_QUANTITIES.values()],
            **{stat: [fn(np.asarray(table[k])) for k in FIT_QUANTITIES]
               for stat, fn in (("median", np.median), ("min", np.min), ("max", np.max))}}
