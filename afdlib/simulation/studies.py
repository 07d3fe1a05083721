"""Studies of the pipeline: MegaScale-Infer's rules, each micro-batch count at its own best
deployment, jitter at the SLO, and the jitter-free ideal (the pipeline chapter's tables).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from afdlib.analysis.schedule import constant_step
from afdlib.decode.deployment import AFDDeployment, Deployment, EPDeployment, step_function
from afdlib.decode.search import best_afd, best_ep
from afdlib.decode.step import Assumptions
from afdlib.decode.batch import largest_batch
from afdlib.errors import AfdError
from afdlib.inputs.specs import Precision
from afdlib.simulation.pipeline import Jitter, simulate, stage_times_of, straggler_factors

def megascale_total(t_a: float, t_e: float, t_c: float, t_f: float, n_microbatches: int, n_layers: int) -> float:
    """MegaScale-Infer's total time of the ping-pong pipeline when the expert side sets the pace:
    (T_a + T_e + 2 T_c) + T_f (m L - 1), T_c each way (here T_e = T_f: the experts' time)."""
    return (t_a + t_e + 2 * t_c) + t_f * (n_microbatches * n_layers - 1)


def megascale_min_microbatches(t_c: float, t_f: float) -> float:
    """MegaScale-Infer's rule for enough micro-batches to hide communication: m >= 2 (1 + T_c / T_f)."""
    return 2.0 * (1.0 + t_c / t_f)


def best_deployments(model, hardware, budget, context: float, design: str, micro_batches=(2, 3, 4),
                     precision=None, assumptions=None) -> list[Deployment]:
    """For each micro-batch count, the decode model's best deployment of ``design`` under the SLO
    (:mod:`afdlib.decode.search`), with its batch: AFD's pools, EP's size, redundant experts and
    kernels. The jitter study compares micro-batch counts each at its own best deployment."""
    precision, a = precision or Precision(), assumptions or Assumptions()
    out = []
    for m in micro_batches:
        if design == "afd":
            best = best_afd(model, hardware, hardware, budget, context, precision, a, micro_batches=(int(m),),
                            domain_forms=())
        else:
            best = best_ep(model, hardware, budget, context, precision, a, micro_batches=(int(m),))
        out.append(best.deployment)
    return out


def jitter_study(model, hardware, budget, context: float, deployments: list[Deployment], cvs=(0.0, 0.1, 0.2, 0.3),
                 popularity: ArrayLike | None = None, steps: int = 2000, seed: int = 0, precision=None,
                 assumptions=None, straggler_samples: int = 4, slo_steps: int = 400) -> list[dict]:
    """Deployments of the decode model (with their batch, as :func:`best_deployments` returns
    them; ``hardware`` names the device of the rows) under jitter of the FFN and network stages
    with each CV.

    Per (deployment, CV) row: at the deployment's batch, the mean and p99 TPOT, the loss, the
    bubbles and the tokens/s per GPU (all GPUs), with and without jitter; and under the SLO
    (``budget.slo_s`` on the mean TPOT), the largest batch that still meets it with this jitter
    (:func:`slo_batch_under_jitter`) and its tokens/s per GPU (``*_slo``). ``popularity`` (rows:
    layers' expert loads) adds the FFN stragglers sampled from routing (:func:`straggler_factors`)
    on top of the CV."""

    precision = precision or Precision()
    base = assumptions or Assumptions()
    rows = []
    for d in deployments:
        if not isinstance(d, (EPDeployment, AFDDeployment)) or d.requests is None:
            raise AfdError("jitter_study takes deployments with their batch (best_deployments)")
        cfg = d.record()
        m, design, requests = d.micro_batches, d.design, float(d.requests)
        attn_gpus, ffn_gpus, gpus = (int(g) for g in ((d.attention.gpus, d.ffn.gpus, d.gpus) if design == "afd"
                                                      else (d.ep_size, d.ep_size, d.ep_size)))   # counts of GPUs
        redundant = int(d.redundant) if design == "ep" else 0
        step_of = step_function(model, d, context, budget, precision, base)
        step = step_of(np.array(requests))
        st = stage_times_of(step, design, model.moe_layers)
        batch_hi = int(largest_batch(step_of, float("inf"))) or 1      # the largest that fits in memory
        factors = None
        if popularity is not None:
            tokens = int(round(requests / m * st["l_accept"] * attn_gpus))
            factors = straggler_factors(popularity, max(tokens, 1), ffn_gpus, model.experts_per_token,
                                        redundant, straggler_samples, seed)
        per_gpu = attn_gpus * requests * st["l_accept"] / gpus
        for cv in cvs:
            jit = Jitter(cv_ffn=cv, cv_comm=cv, ffn_factors=factors)
            sim = simulate(design, st["t_attn"], st["t_ffn"], st["t_comm"], m,
                           st["n_layers"], steps, jit, seed, st["extra_s"], domains=st["domains"])
            b_slo, step_slo = slo_batch_under_jitter(step_of, design, model.moe_layers, budget.slo_s, jit, batch_hi,
                                                     slo_steps, seed)
            rows.append({**cfg, "cv": float(cv), "gpus": gpus,
                         "t_attn_us": st["t_attn"] * 1e6, "t_ffn_us": st["t_ffn"] * 1e6, "t_comm_us": st["t_comm"] * 1e6,
                         "tpot_ms": float(sim.step_s) / st["l_accept"] * 1e3,
                         "tpot_const_ms": float(sim.step_const_s) / st["l_accept"] * 1e3,
                         "p99_tpot_ms": float(sim.p99_step_s) / st["l_accept"] * 1e3,
                         "throughput_loss": float(sim.throughput_loss), "bubble_attn": float(sim.bubble_attn),
                         "bubble_ffn": float(sim.bubble_ffn),
                         "tokens_per_s_per_gpu": per_gpu / float(sim.step_s),
                         "tokens_per_s_per_gpu_const": per_gpu / float(sim.step_const_s),
                         "batch_slo": b_slo,
                         "tokens_per_s_per_gpu_slo": attn_gpus * b_slo * st["l_accept"] / gpus / step_slo,
                         "straggler_cv": None if factors is None else
                         float(np.std(factors / factors.mean(axis=1, keepdims=True))),
                         "straggler_mean": None if factors is None else float(factors.mean())})
    return rows


def slo_batch_under_jitter(step_of, design: str, moe_layers: int, slo_s: float, jitter: Jitter,
                           batch_hi: int, steps: int = 400, seed: int = 0, points: int = 24) -> tuple[int, float]:
    """The largest batch per (attention) GPU up to ``batch_hi`` whose simulated mean TPOT under
    ``jitter`` meets ``slo_s`` and which fits in memory (``step_of(requests_array)`` -> decode
    Step); (0, inf) when none does. Returns (batch, mean step time in s). A coarse geometric grid
    of ``points`` batches, then a linear one between the last feasible point and the next; each
    grid is one vectorised simulation (TPOT grows with the batch)."""
    def feasible(grid):
        step = step_of(grid)
        st = stage_times_of(step, design, moe_layers)
        sim = simulate(design, st["t_attn"], st["t_ffn"], st["t_comm"],
                       st["micro_batches"], st["n_layers"], steps, jitter, seed, st["extra_s"], domains=st["domains"])
        return (sim.step_s / st["l_accept"] <= slo_s) & np.asarray(step.fits_memory), sim.step_s

    coarse = np.unique(np.round(np.geomspace(1, max(batch_hi, 1), points)))
    ok, _ = feasible(coarse)
    if not ok[0]:
        return 0, float("inf")
    i = int(np.flatnonzero(ok)[-1])
    hi = coarse[i + 1] - 1 if i + 1 < coarse.size else coarse[i]
    fine = np.unique(np.round(np.linspace(coarse[i], hi, points)))
    ok, step_s = feasible(fine)
    j = int(np.flatnonzero(ok)[-1]) if ok.any() else 0
    return int(fine[j]), float(step_s[j])


def ideal_sweep(cvs, micro_batches=(2, 3, 4), n_layers: int = 61, steps: int = 1000, seed: int = 0,
                t_comm: float = 1.0) -> list[dict]:
    """AFD with equal attention and FFN stages (t_B = 1) and ``t_comm``, jitter of the FFN and
    the network with each CV: relative loss and throughput (micro-batches per unit time, over
    the jitter-free 3BO's)."""
    ref = float(constant_step("afd", 1.0, 1.0, t_comm, 3, n_layers).makespan) / (3 * n_layers)
    rows = []
    for m in micro_batches:
        for cv in cvs:
            sim = simulate("afd", 1.0, 1.0, t_comm, int(m), n_layers, steps, Jitter(cv_ffn=cv, cv_comm=cv), seed)
            rows.append({"micro_batches": int(m), "cv": float(cv), "throughput_loss": float(sim.throughput_loss),
                         "throughput": ref * m * n_layers / float(sim.step_s),
                         "bubble_attn": float(sim.bubble_attn), "bubble_ffn": float(sim.bubble_ffn)})
    return rows
