"""What measured expert imbalance costs AFD and EP: sigma from routing data, through the penalty.

Each design sees its own batch per layer step and spreads it over its own GPUs:

* AFD: the FFN pool of N_F x g GPUs receives what the network delivers within t_B (Eq. 9):
  ``tokens_per_rank * N_F g / K`` tokens; experts placed statically by EPLB-style packing fitted
  to long-run counts (replicas only when there are more GPUs than experts).
* EP: ``tokens_per_gpu * R`` tokens over R GPUs, with ``redundant`` EPLB replicas.

A step runs its layers in sequence, so the step's sigma is the harmonic mean over layers
(:func:`afdlib.balance.effective_balancedness`); alpha then follows Section 3.3.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .balance import balance_sweep, effective_balancedness
from .hfu import hfu_sweep
from .specs import Budget
from .imbalance import alpha_afd, alpha_ep


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

    ``budget`` goes to :func:`afdlib.hfu.hfu_sweep` to size AFD's batch.
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
