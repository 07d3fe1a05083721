"""What measured expert imbalance costs AFD and EP: sigma from routing data, through the penalty.

Each design sees its own batch per layer step and spreads it over its own GPUs:

* AFD: the FFN pool of N_F x g GPUs receives what the network delivers within t_B (Eq. 9):
  ``tokens_per_rank * N_F g / K`` tokens; experts placed statically by EPLB-style packing fitted
  to long-run counts (replicas only when there are more GPUs than experts).
* EP: ``tokens_per_gpu * R`` tokens over R GPUs, with ``redundant`` EPLB replicas.

A step runs its layers in sequence, so the step's sigma is the harmonic mean over layers
(:func:`afdlib.routing.balance.effective_balancedness`); alpha then follows Section 3.3.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from afdlib.routing.balance import balance_sweep, effective_balancedness
from afdlib.analysis.hfu import hfu_sweep
from afdlib.inputs.specs import Budget
from afdlib.analysis.imbalance import alpha_afd, alpha_ep


@dataclass(frozen=True)
class DesignCost:
    design: str
    gpus: int
    tokens_per_step: int
    sigma: float
    alpha: float
    rounding: str


def imbalance_cost(counts: ArrayLike, model, hardware, n_attn: int, n_ffn: int, ep_size: int, redundant: int,
                   lambda_ep: float, ep_tokens_per_gpu: float, trials: int = 3, seed: int = 0,
                   layers: ArrayLike | None = None, budget: Budget = Budget()) -> tuple[DesignCost, DesignCost]:
    """(AFD, EP) costs of the expert imbalance in ``counts`` (layers x E), for one model and device.

    ``budget`` goes to :func:`afdlib.analysis.hfu.hfu_sweep` to size AFD's batch.
    """
    counts = np.asarray(counts, dtype=float)
    k, e = model.experts_per_token, counts.shape[1]
    res, _ = hfu_sweep(model, hardware, np.array([n_ffn]), budget)
    afd_gpus = n_ffn * hardware.gpus_per_node
    afd_tokens = int(round(float(res["tokens_per_rank"][0]) * afd_gpus / k))
    ep_tokens = int(round(ep_tokens_per_gpu * ep_size))
    common = dict(experts_per_token=k, trials=trials, seed=seed, layers=layers)
    _, _, red_afd = balance_sweep(counts, [afd_gpus], max(0, afd_gpus - e), tokens=afd_tokens, **common)
    _, _, red_ep = balance_sweep(counts, [ep_size], redundant, tokens=ep_tokens, **common)
    s_afd, s_ep = effective_balancedness(red_afd[0]), effective_balancedness(red_ep[0])
    a_afd = alpha_afd(s_afd, n_attn, n_ffn)
    return (DesignCost(f"AFD {n_attn}A{n_ffn}F", afd_gpus, afd_tokens, s_afd, float(a_afd.alpha), str(a_afd.rounding)),
            DesignCost(f"EP{ep_size} + {redundant} redundant", ep_size, ep_tokens, s_ep,
                       float(alpha_ep(s_ep, lambda_ep)), "-"))


@dataclass(frozen=True)
class Comparison:
    """Per design (rows of ``designs``) and trial: the step's sigma (harmonic mean over layers)
    and alpha; and per design the per-layer sigmas of every trial (``layer_sigma``, design x
    trial x layer)."""

    designs: list
    gpus: np.ndarray
    sigma: np.ndarray          # (design, trial)
    alpha: np.ndarray          # (design, trial)
    layer_sigma: np.ndarray    # (design, trial, layer)
    tokens: int


def like_with_like(counts: ArrayLike, experts_per_token: int, n_attn: int, n_ffn: int, gpus_per_node: int,
                   ep_sizes: list[int], redundant: int, lambda_ep: float, tokens: int, trials: int = 8,
                   seed: int = 0, layers: ArrayLike | None = None, dp_sigma: float | None = None) -> Comparison:
    """Imbalance of AFD (N_A + N_F nodes) against EP deployments, every design seeing the same
    batches of ``tokens`` tokens (one layer step), sampled ``trials`` times per layer from the
    measured loads: at equal tokens per GPU when an EP size equals AFD's GPU count.

    AFD's FFN pool (N_F g GPUs) gets an EPLB packing of the experts (replicas only when it has
    more GPUs than experts), each EP size ``redundant`` replicas. Alpha: the whole-node AFD form
    (:func:`afdlib.analysis.imbalance.alpha_afd`) and EP's (:func:`afdlib.analysis.imbalance.alpha_ep`, ``lambda_ep``).
    ``dp_sigma``: DP imbalance on the attention side too (AFD then keeps at most dp_sigma,
    Figure 5; EP the regrown-batch form), multiplied in."""
    from afdlib.routing.balance import balancedness, eplb_placement, route_tokens
    from afdlib.routing.measured import moe_layers
    from afdlib.analysis.imbalance import alpha_dp_afd, alpha_dp_ep, alpha_ep
    c = np.asarray(counts, dtype=float)
    idx = moe_layers(c) if layers is None else np.asarray(layers, dtype=int)
    e = c.shape[1]
    ffn_gpus = n_ffn * gpus_per_node
    designs = [(f"AFD {n_attn}A{n_ffn}F", ffn_gpus, max(0, ffn_gpus - e))] + \
              [(f"EP{r} + {redundant} redundant", r, redundant) for r in ep_sizes]
    rng = np.random.default_rng(seed)
    layer_sigma = np.empty((len(designs), trials, idx.size))
    for j, layer in enumerate(idx):
        batches = np.stack([route_tokens(int(tokens), experts_per_token, c[layer], rng) for _ in range(trials)])
        for d, (_, ranks, red) in enumerate(designs):
            layer_sigma[d, :, j] = balancedness(eplb_placement(c[layer], ranks, red).rank_loads(batches))
    sigma = effective_balancedness(layer_sigma, axis=2)          # the step: layers in sequence
    alpha = np.empty_like(sigma)
    alpha[0] = alpha_afd(sigma[0], n_attn, n_ffn).alpha
    alpha[1:] = alpha_ep(sigma[1:], lambda_ep)
    if dp_sigma is not None:
        alpha[0] *= alpha_dp_afd(dp_sigma)                        # AFD: the stage budget is fixed
        alpha[1:] *= alpha_dp_ep(dp_sigma, lambda_ep)
    gpus = np.array([n_attn * gpus_per_node + ffn_gpus] + list(ep_sizes))
    return Comparison([d[0] for d in designs], gpus, sigma, alpha, layer_sigma, int(tokens))
