"""The HFU upper bound of the AFD FFN side, and its dead zone (paper Section 3.2, Fig. 4, Appendix A).

Per FFN rank and layer, within the stage budget t_B:

* the network delivers ``B_rank`` tokens (Eq. 9), each doing the two grouped GEMMs of its
  expert: ``6 * B_rank * H * M`` FLOPs (gate+up: 2 H M weights, down: H M; 2 FLOPs per weight);
* the rank reads its G experts' FP8 weights once: ``3 * G * H * M`` bytes
  (:func:`afdlib.evaluator.grouped_gemm.expert_weight_bytes`).

Bytes follow a :class:`afdlib.inputs.specs.Precision`, by default the paper's (FP8 weights; 3 H
bytes per token on the wire, :func:`afdlib.evaluator.alltoall.token_wire_bytes`).
The HFU over the stage is ``FLOPs / (FLOPS * t_B)``. When the interconnect limits, H and t_B
cancel and the bound is the communication ceiling ``HFU_comm = 2 * BW_eff * M / FLOPS`` with
``BW_eff = min(BW_out * max(1, K/N_F), BW_up)``; compute caps it at 1. A point is feasible when
the routed weights of all MoE layers fit in HBM and one layer's weight read fits in t_B.
For N_F >= K, BW_eff = BW_out: the bound sits on the floor ``2 * BW_out * M / FLOPS`` however
many FFN nodes are added. That is the dead zone.

Every function broadcasts over numpy arrays: a whole grid (devices x models x N_F) is one call.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from afdlib.analysis.intensity import effective_bandwidth, forwarding_fan, local_experts, tokens_deliverable
from afdlib.analysis.budget import stage_budget
from afdlib.evaluator.alltoall import token_wire_bytes
from afdlib.evaluator.grouped_gemm import expert_weight_bytes, grouped_gemm_flops
from afdlib.evaluator.roofline import TIERS, Work, operator_tiers, operator_time
from afdlib.inputs.specs import Budget, Hardware, Model, Precision, stack

LIMITS = ("compute", "comm-scale-up", "comm-scale-out", "hbm-capacity", "hbm-time")


def flops_per_wire_byte(moe_intermediate_size: ArrayLike, precision: Precision = Precision()) -> np.ndarray:
    """FLOPs the grouped GEMMs do per byte a token brings on the wire: 6 H M / (3 H) = 2 M
    (6 H M over :func:`afdlib.evaluator.alltoall.token_wire_bytes`; H cancels)."""
    return 6.0 / precision.wire_bytes * np.asarray(moe_intermediate_size, dtype=float)


def comm_ceiling(n_ffn: ArrayLike, experts_per_token: ArrayLike, scale_out: ArrayLike, scale_up: ArrayLike,
                 moe_intermediate_size: ArrayLike, peak_flops: ArrayLike, bandwidth: ArrayLike | None = None,
                 precision: Precision = Precision()) -> np.ndarray:
    """HFU_comm = 2 * BW_eff * M / FLOPS (Appendix A; 2 M is :func:`flops_per_wire_byte`); not capped at 1.
    ``bandwidth``: BW_eff where the caller has it already (it is the same for every N_F of a grid)."""
    bw = effective_bandwidth(n_ffn, experts_per_token, scale_out, scale_up) if bandwidth is None else bandwidth
    return np.asarray(bw, dtype=float) * (flops_per_wire_byte(moe_intermediate_size, precision)
                                          / np.asarray(peak_flops, dtype=float))


def dead_zone_floor(scale_out: ArrayLike, moe_intermediate_size: ArrayLike, peak_flops: ArrayLike,
                    ofu: float = 1.0, precision: Precision = Precision()) -> np.ndarray:
    """The bound for N_F >= K, min(OFU, 2 * BW_out * M / FLOPS): more FFN nodes cannot lift it."""
    return np.minimum(ofu, np.asarray(scale_out, dtype=float) * flops_per_wire_byte(moe_intermediate_size, precision)
                      / np.asarray(peak_flops, dtype=float))


def ffn_rank_work(n_ffn: ArrayLike, model: Model, hardware: Hardware, t_b: ArrayLike,
                  precision: Precision = Precision(), bandwidth: ArrayLike | None = None) -> tuple[np.ndarray, Work]:
    """Tokens one FFN rank receives within t_B (Eq. 9) and the work they bring: the grouped GEMMs'
    FLOPs and the bytes on each network tier (activations only; the weight read is a feasibility
    rule of its own, as in the paper).

    Two-stage forwarding: a token crosses scale-out once per destination node and fans out to up to
    K / N_F GPUs inside it, so scale-out carries 1 / max(1, K / N_F) of what scale-up delivers.
    ``bandwidth``: BW_eff (:func:`afdlib.analysis.intensity.effective_bandwidth`) where the caller has it.
    """
    n = np.asarray(n_ffn, dtype=float)
    k, h = model.experts_per_token, model.routed_width
    if bandwidth is None:
        bandwidth = effective_bandwidth(n, k, hardware.scale_out_bytes_per_s, hardware.scale_up_bytes_per_s)
    tokens = tokens_deliverable(bandwidth, t_b, h, precision)
    wire = tokens * token_wire_bytes(1, h, precision)
    fan = forwarding_fan(n, k)
    work = Work(flops_fp8=grouped_gemm_flops(tokens, h, model.moe_intermediate_size, model.ffn_matrices),
                scale_up_bytes=wire, scale_out_bytes=wire / fan)
    return tokens, work


def hfu_bound(n_ffn: ArrayLike, model: Model, hardware: Hardware, budget: Budget = Budget(),
              hbm_usable_fraction: float = 1.0, ofu: float = 1.0, precision: Precision = Precision()
              ) -> dict[str, np.ndarray]:
    """HFU upper bound of one FFN rank against N_F (SI units); model and hardware fields may be
    arrays (:func:`afdlib.inputs.specs.stack`) broadcasting with ``n_ffn``.

    The rank's work within t_B (:func:`ffn_rank_work`) goes through the one evaluator
    (:func:`afdlib.evaluator.roofline.stage_time`, compute at ``ofu`` of peak): HFU = FLOPs / (FLOPS *
    max(t_B, stage time)), the communication ceiling where the network binds, ``ofu`` where compute
    does. ``hbm_usable_fraction`` is the share of HBM the routed weights may take (1.0 in the
    paper's reading; lower it to reserve room for activations, buffers or shared experts).
    ``precision``: the weights' and the wire's data types (the paper's by default).

    Returns arrays: ``hfu`` (the bound if the point were feasible), ``comm_ceiling``, ``feasible``,
    ``limit`` (int8 codes into :data:`LIMITS`, :func:`limit_names` turns them into names; for
    infeasible points the HBM rule that fails, capacity first), ``fails`` (every rule a point
    fails, as bits: 1 HBM capacity, 2 HBM time; :func:`failed_rules` names them), ``local_experts``, ``tokens_per_rank``, ``weight_bytes_per_gpu`` (all MoE layers),
    ``weight_read_s`` (one layer), ``t_b``.
    """
    n = np.asarray(n_ffn, dtype=float)
    h, m_size = model.routed_width, model.moe_intermediate_size
    t_b = stage_budget(budget.slo_s, stage_layers(model), budget.l_accept, budget.t_gap_s, budget.micro_batches)
    g = local_experts(model.routed_experts, n, hardware.gpus_per_node)
    per_gpu = g * expert_weight_bytes(1, h, m_size, precision, model.ffn_matrices)       # one layer's, for now (G whole: exact)
    read_s = per_gpu / np.asarray(hardware.hbm_bytes_per_s, dtype=float)
    per_gpu = np.multiply(per_gpu, np.asarray(model.moe_layers, dtype=float),
                          out=per_gpu if per_gpu.shape == np.broadcast_shapes(per_gpu.shape, np.shape(model.moe_layers))
                          else None)                                    # all MoE layers (in place on grids)
    fits_capacity = per_gpu <= np.asarray(hardware.hbm_bytes) * hbm_usable_fraction
    fits_time = read_s <= t_b
    bw = effective_bandwidth(n, model.experts_per_token, hardware.scale_out_bytes_per_s, hardware.scale_up_bytes_per_s)
    tokens, work = ffn_rank_work(n, model, hardware, t_b, precision, bandwidth=bw)
    # the one evaluator's one-operator path, with the work's byte arrays released before it runs
    tiers, flops = operator_tiers(work, hardware, ofu), work.flops
    del work
    stage = operator_time(tiers)
    del tiers
    # HFU = FLOPs / (FLOPS max(t_B, stage)); min(): it equals ofu where compute binds, up to rounding.
    # In place: on grids each temporary is a pass over memory.
    bound = np.maximum(stage.seconds, t_b)
    bound *= np.asarray(hardware.flops, dtype=float)
    np.divide(flops, bound, out=bound)
    np.minimum(bound, ofu, out=bound)
    limit = _LIMIT_OF_TIER[stage.bound]                   # integer codes into LIMITS
    del stage, flops
    ceiling = comm_ceiling(n, model.experts_per_token, hardware.scale_out_bytes_per_s,
                           hardware.scale_up_bytes_per_s, m_size, hardware.flops, bandwidth=bw, precision=precision)
    limit = np.where(fits_time, limit, np.int8(4))
    limit = np.where(fits_capacity, limit, np.int8(3))
    shape = np.broadcast_shapes(bound.shape, limit.shape, np.shape(t_b))
    out = {
        "hfu": bound, "comm_ceiling": ceiling, "feasible": fits_capacity & fits_time, "limit": limit,
        "fails": (~fits_capacity).astype(np.int8) | ((~fits_time).astype(np.int8) << 1),
        "local_experts": g, "tokens_per_rank": tokens,
        "weight_bytes_per_gpu": per_gpu, "weight_read_s": read_s, "t_b": t_b,
    }
    return {k: np.broadcast_to(v, shape) for k, v in out.items()}


_LIMIT_OF_TIER = np.array([LIMITS.index({"compute": "compute", "hbm": "hbm-time", "scale-out": "comm-scale-out",
                                          "scale-up": "comm-scale-up", "inter-domain": "comm-scale-out"}[t])
                           for t in TIERS], dtype=np.int8)


def failed_rules(fails: int) -> list[str]:
    """Names of every feasibility rule in a ``fails`` bitmask of :func:`hfu_bound`."""
    return [name for bit, name in ((1, LIMITS[3]), (2, LIMITS[4])) if int(fails) & bit]


def limit_names(codes: ArrayLike) -> np.ndarray:
    """Names (:data:`LIMITS`) of the ``limit`` codes that :func:`hfu_bound` returns."""
    return np.asarray(LIMITS)[np.asarray(codes, dtype=np.intp)]
_MODEL_FIELDS = ("hidden_size", "moe_intermediate_size", "routed_experts", "experts_per_token", "moe_layers",
                 "num_layers", "moe_latent_size", "ffn_matrices")   # the last two: latent MoE, relu2 experts
_HARDWARE_FIELDS = ("flops", "hbm_bytes_per_s", "hbm_bytes", "scale_out_bytes_per_s", "scale_up_bytes_per_s",
                    "gpus_per_node")


def min_slo_for_weight_read(model: Model, hardware: Hardware, n_ffn: ArrayLike, budget: Budget = Budget(),
                            precision: Precision = Precision()) -> np.ndarray:
    """The smallest SLO (seconds) at which one layer's weight read on an FFN rank fits in t_B
    (Eq. 1 solved for the SLO: (t_g + N_layers N_BO read) / L_accept); the HBM-time rule of
    :func:`hfu_bound` holds from there on (capacity does not depend on the SLO)."""
    g = local_experts(model.routed_experts, np.asarray(n_ffn, dtype=float), hardware.gpus_per_node)
    read = (expert_weight_bytes(g, model.routed_width, model.moe_intermediate_size, precision, model.ffn_matrices)
            / hardware.hbm_bytes_per_s)
    return (budget.t_gap_s + stage_layers(model) * budget.micro_batches * read) / budget.l_accept


def stage_layers(model: Model):
    """N_layers of Eq. 1: the layers whose attention and FFN stages a step runs. A hybrid model's
    blocks without an FFN (Nemotron-H's Mamba and attention blocks) are not stages of their own: its
    FFN blocks (MoE and dense) are; every other model's layers."""
    return model.moe_layers + model.dense_layers if model.mixers else model.num_layers


def hfu_grid(models, hardware, n_ffn: ArrayLike, budget: Budget = Budget(), **kw) -> dict[str, np.ndarray]:
    """:func:`hfu_bound` for every (device, model, N_F) at once; arrays of shape (D, M, N)."""
    m = stack([replace(x, num_layers=stage_layers(x), mixers=()) if x.mixers else x for x in models], 1, 3,
              _MODEL_FIELDS)
    h = stack(list(hardware), 0, 3, _HARDWARE_FIELDS)
    n = np.asarray(n_ffn, dtype=float)[None, None, :]
    return hfu_bound(n, m, h, budget, **kw)


@dataclass(frozen=True)
class BoundSummary:
    """The maximum of the bound over feasible N_F, where it is first reached, and the floor."""

    max_hfu: float | None
    best_n_ffn: int | None
    dead_zone_floor: float


def best_over_n_ffn(n_ffn: ArrayLike, result: dict[str, np.ndarray], atol: float = 1e-12
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Maximum of the bound over feasible N_F (last axis) and the first N_F reaching it.

    Returns float arrays over the leading axes; NaN where no point is feasible.
    """
    n = np.asarray(n_ffn, dtype=float)
    feasible = np.asarray(result["feasible"])
    masked = np.where(feasible, result["hfu"], -np.inf)
    best = masked.max(axis=-1)
    first = np.argmax(feasible & (masked >= best[..., None] - atol), axis=-1)
    none = ~feasible.any(axis=-1)
    return np.where(none, np.nan, best), np.where(none, np.nan, n[first])


def summarise(n_ffn: ArrayLike, result: dict[str, np.ndarray], floor: float, atol: float = 1e-12) -> BoundSummary:
    """Maximum over the feasible points of one (device, model) sweep (None if none is feasible)."""
    best, first = best_over_n_ffn(n_ffn, result, atol)
    if np.isnan(best):
        return BoundSummary(None, None, float(floor))
    return BoundSummary(float(best), int(first), float(floor))


def hfu_sweep(model, hardware, n_ffn: ArrayLike, budget: Budget = Budget(), **kw
              ) -> tuple[dict[str, np.ndarray], BoundSummary]:
    """The bound for one model on one device over ``n_ffn``, and its summary (``limit`` as names)."""
    res = {k: v[0, 0] for k, v in hfu_grid([model], [hardware], n_ffn, budget, **kw).items()}
    res["limit"] = limit_names(res["limit"])   # one sweep: names
    floor = dead_zone_floor(hardware.scale_out_bytes_per_s, model.moe_intermediate_size, hardware.flops,
                            kw.get("ofu", 1.0), kw.get("precision", Precision()))
    return res, summarise(n_ffn, res, float(floor))


def grid_summaries(models, hardware, n_ffn: ArrayLike, grid: dict[str, np.ndarray], ofu: float = 1.0,
                   precision: Precision = Precision()) -> dict[tuple[str, str], BoundSummary]:
    """:class:`BoundSummary` of every (device slug, model slug) of a :func:`hfu_grid` result."""
    models, hardware = list(models), list(hardware)
    floors = dead_zone_floor(np.array([h.scale_out_bytes_per_s for h in hardware])[:, None],
                             np.array([m.moe_intermediate_size for m in models])[None, :],
                             np.array([h.flops for h in hardware])[:, None], ofu, precision)
    best, first = best_over_n_ffn(n_ffn, grid)
    return {(h.slug, m.slug): BoundSummary(None if np.isnan(best[i, j]) else float(best[i, j]),
                                           None if np.isnan(first[i, j]) else int(first[i, j]), float(floors[i, j]))
            for i, h in enumerate(hardware) for j, m in enumerate(models)}


def intermediate_size_for_full_hfu(bandwidth: ArrayLike, peak_flops: ArrayLike, precision: Precision = Precision()
                                   ) -> np.ndarray:
    """Expert size M at which the communication ceiling reaches 100%: FLOPS / (2 BW_eff)."""
    return np.asarray(peak_flops, dtype=float) / (flops_per_wire_byte(1.0, precision)
                                                  * np.asarray(bandwidth, dtype=float))


def bandwidth_for_full_hfu(moe_intermediate_size: ArrayLike, peak_flops: ArrayLike,
                           precision: Precision = Precision()) -> np.ndarray:
    """Effective bandwidth (bytes/s) at which the communication ceiling reaches 100%: FLOPS / (2 M)."""
    return np.asarray(peak_flops, dtype=float) / flops_per_wire_byte(moe_intermediate_size, precision)
