"""Where AFD can beat EP: the AFD / EP throughput ratio over the design space (paper Section 4).

Each cell of a map is one hypothetical (bandwidth, model shape) pair, the shape a member of the model's
family at the same total routed parameters (:func:`with_shape`, the paper's method); the best EP and the
best AFD deployment are searched in every cell (:func:`afdlib.decode.search.compare`, evaluated in chunks of rows
so a large map runs in bounded memory) and the ratio of their output tokens per second per GPU
is the map's value. On 8-GPU nodes the swept bandwidth is the scale-out (NIC) rate; on a
Superpod it is the whole fabric (scale-up and the inter-domain network in proportion).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from afdlib.decode.step import Assumptions
from afdlib.errors import AfdError
from afdlib.decode.deployment import decode_step
from afdlib.decode.search import afd_candidates, best_afd, best_ep, compare, ep_candidates
from afdlib.inputs.specs import Budget, Hardware, Model, Precision

AXES = ("moe_intermediate_size", "sparsity")


@dataclass(frozen=True)
class RatioMap:
    """A map: ``ratio[i, j]`` = AFD / EP tokens/s per GPU at ``bandwidth[i]`` and ``values[j]`` (a member
    of the model's family at the same total parameters, :func:`with_shape`)."""

    axis: str
    bandwidth: np.ndarray          # bytes/s per GPU, sustained
    values: np.ndarray             # M, or E / K
    ratio: np.ndarray
    ep: np.ndarray
    afd: np.ndarray
    seconds: float
    points: int                    # cells x candidates (EP: sizes x redundancy x kernels x micro-batches)
    on_bound: int = 0              # cells where either design's best sits on a bound of its search (its cap)

    def row(self, bandwidth: float) -> int:
        """Index of the swept bandwidth nearest ``bandwidth`` (log scale)."""
        return int(np.argmin(np.abs(np.log(self.bandwidth / bandwidth))))

    def column(self, value: float) -> int:
        """Index of the swept M or E/K nearest ``value`` (log scale)."""
        return int(np.argmin(np.abs(np.log(self.values / value))))


def with_network(hardware: Hardware, bandwidth) -> Hardware:
    """The device with its network set to ``bandwidth`` (per GPU): the NIC on 8-GPU nodes; on a
    Superpod the whole fabric, scale-up and inter-domain in proportion to scale-out (the catalogue's
    Superpods have scale-up = scale-out)."""
    bw = np.asarray(bandwidth, dtype=float)
    if not hardware.superpod:
        return replace(hardware, scale_out_bytes_per_s=bw)
    factor = bw / hardware.scale_out_bytes_per_s
    inter = None if hardware.inter_domain_bytes_per_s is None else hardware.inter_domain_bytes_per_s * factor
    return replace(hardware, scale_out_bytes_per_s=bw, scale_up_bytes_per_s=hardware.scale_up_bytes_per_s * factor,
                   inter_domain_bytes_per_s=inter)


def with_shape(model: Model, axis: str, value: float) -> Model:
    """The member of ``model``'s family nearest ``value`` of ``axis``, at the same total routed parameters
    (the paper's method: "keeping the total number of parameters constant"; E x M constant, the shared
    experts and everything outside the routed experts unchanged).

    * ``moe_intermediate_size`` (granularity): experts split or merged, as fine-grained segmentation
      does: K = round(K0 M0 / M) >= 1, E = round(K E0 / K0), M = E0 M0 / E, so E x M = E0 x M0 exactly,
      the activated routed parameters K x M = K0 x M0 within the rounding of E, and E / K unchanged;
    * ``sparsity`` (E / K): the experts kept (E, M: the same parameters), K = round(E0 / value) in
      [1, E0] experts per token, so only the activated parameters change.
    """
    e0, k0, m0 = model.routed_experts, model.experts_per_token, model.moe_intermediate_size
    v = float(value)
    if axis == "moe_intermediate_size":
        k = max(1, round(k0 * m0 / v))
        e = max(k, round(k * e0 / k0))
        return replace(model, routed_experts=e, experts_per_token=k, moe_intermediate_size=e0 * m0 / e,
                       shared_expert_intermediate_size=model.shared_size)
    if axis == "sparsity":
        return replace(model, experts_per_token=int(min(e0, max(1, round(e0 / v)))))
    raise AfdError(f"unknown map axis '{axis}'; valid: {', '.join(AXES)}")


def shape_value(model: Model, axis: str) -> float:
    """The model's value of a map axis: M, or E / K."""
    return float(model.moe_intermediate_size if axis == "moe_intermediate_size" else model.sparsity)


def family(model: Model, axis: str, values) -> list[Model]:
    """The distinct members of the family nearest ``values`` (:func:`with_shape`), by increasing value."""
    members = {shape_value(m, axis): m for m in (with_shape(model, axis, v) for v in np.ravel(values))}
    return [members[v] for v in sorted(members)]


def routed_parameters(model: Model) -> tuple[float, float]:
    """(total, activated) routed-expert parameters: MoE layers x (E, K) x 3 H M (a latent MoE: its
    latent width for H; two-matrix experts: 2)."""
    per = (float(model.ffn_matrices) * model.moe_layers * model.routed_width
           * np.asarray(model.moe_intermediate_size, dtype=float))
    return float(per * model.routed_experts), float(per * model.experts_per_token)


def ratio_map(model: Model, hardware: Hardware, budget: Budget, context: float, bandwidth, values, axis: str,
              precision: Precision = Precision(), assumptions: Assumptions = Assumptions(),
              cells_per_chunk: int = 64) -> RatioMap:
    """The AFD / EP ratio over ``bandwidth`` (rows) x the members of ``model``'s family nearest
    ``values`` of ``axis`` (columns, :func:`family`: same total parameters; the map's ``values`` are the
    members' own, so fewer columns where two values round to one member).

    Each member is searched on its own (its EP candidates, redundant experts included, are its own),
    its bandwidth cells ``cells_per_chunk`` at a time, so memory depends on the chunk, not on the map."""
    bw = np.asarray(bandwidth, dtype=float)
    members = family(model, axis, values)
    hw = with_network(hardware, bw)
    t0 = time.perf_counter()
    e, a, bound = (np.zeros((bw.size, len(members))) for _ in range(3))
    for j, m in enumerate(members):
        ep, afd = compare(m, hw, budget, context, precision, assumptions, cell_shape=(bw.size,), chunk=cells_per_chunk)
        e[:, j], a[:, j] = ep.tokens_per_s_per_gpu, afd.tokens_per_s_per_gpu
        bound[:, j] = ep.bound | afd.bound
    seconds = time.perf_counter() - t0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(e > 0, a / e, np.nan)
    candidates = 2 * 2 * ep_candidates(model, hardware)[0].size + 3 * afd_candidates()[0].size
    vals = np.array([shape_value(m, axis) for m in members])
    return RatioMap(axis, bw, vals, ratio, e, a, seconds, bw.size * vals.size * candidates, int(np.count_nonzero(bound)))


def best_afd_open(model: Model, attn: Hardware, ffn: Hardware, budget: Budget, context: float,
                  precision: Precision = Precision(), assumptions: Assumptions = Assumptions()):
    """The best AFD deployment with the search widened where its best sits on a bound
    (:func:`afdlib.decode.search.best_afd` does it: :mod:`afdlib.decode.bounds`). Returns (best, the
    largest pool searched, whether the best still sits on the search's cap)."""
    best = best_afd(model, attn, ffn, budget, context, precision, assumptions)
    searched = max([int(np.max(v)) for v in best.searched.values()] or [0])
    return best, searched, bool(np.any(best.bound))


def overlap_methods(model: Model, hardware: Hardware, budget: Budget, context: float,
                    precision: Precision = Precision(), assumptions: Assumptions = Assumptions()) -> list[dict]:
    """The paper's Table 2 as numbers: the best throughput per GPU of each batch-overlap method.

    * NBO: one batch, nothing overlapped (EP: the all-to-all between compute; AFD: one micro-batch,
      the pools take turns);
    * SBO: one batch with single-batch overlap on low-latency kernels, as the schedule runs it
      (dispatch beside the shared experts, combine beside the down GEMM; the ``ep_overlap`` override
      where one is given), with the share it hides;
    * 2BO: two micro-batches (EP as its schedule hides the all-to-all, or at the ``ep_overlap``
      override if one is given; and at 1: all hidden, the paper's EP);
    * 3BO, 4BO: AFD with three and four micro-batches (the paper's choice is 3).
    """
    rows = []
    nbo = replace(assumptions, ep_overlap=0.0)
    ep_nbo = best_ep(model, hardware, budget, context, precision, nbo, micro_batches=(1,))
    rows.append(_row("NBO", "EP", ep_nbo))
    sbo = best_ep(model, hardware, budget, context, precision, assumptions, modes=("low-latency",), micro_batches=(1,))
    share = (float(decode_step(model, sbo.deployment, context, budget, precision, assumptions).hidden_share)
             if float(np.asarray(sbo.tokens_per_s_per_gpu)) > 0 else 0.0)
    rows.append(_row("SBO", "EP", sbo, f"{share:.0%} hidden ({'schedule' if assumptions.ep_overlap is None else 'override'})"))
    for h, note in ((assumptions.ep_overlap, "schedule" if assumptions.ep_overlap is None else "override"),
                    (1.0, "the paper's EP")):
        a = replace(assumptions, ep_overlap=h)
        best = best_ep(model, hardware, budget, context, precision, a, micro_batches=(2,))
        if h is None and float(np.asarray(best.tokens_per_s_per_gpu)) > 0:
            h = float(decode_step(model, best.deployment, context, budget, precision, a).hidden_share)
        rows.append(_row("2BO", "EP", best, f"{h or 0:.0%} hidden ({note})"))
    for m, name in ((1, "NBO"), (2, "2BO"), (3, "3BO"), (4, "4BO")):
        rows.append(_row(name, "AFD", best_afd(model, hardware, hardware, budget, context, precision, assumptions,
                                               micro_batches=(m,), domain_forms=())))
    return rows


def _row(method: str, design: str, best, note: str = "") -> dict:
    return {"method": method, "design": design, "tokens_per_s_per_gpu": float(np.asarray(best.tokens_per_s_per_gpu)),
            "deployment": best.deployment.label, "batch_per_gpu": float(best.deployment.requests), "note": note}


def pools_table(model: Model, pairs: list[tuple[Hardware, Hardware]], budget: Budget, context: float,
                precision: Precision = Precision(), assumptions: Assumptions = Assumptions(),
                prices: dict[str, float] | None = None) -> list[dict]:
    """Heterogeneous AFD pools (attention device, FFN device) beside EP on each device alone.

    GPU-hours per million output tokens, split by device, need no prices; with ``prices`` (USD per
    GPU-hour by slug) the cost per million tokens follows. The AFD search is not bounded
    (:func:`best_afd_open`): an attention pool of slow GPUs can need more than 16 nodes.
    """
    per_mtok = 1e6 / 3600
    rows, seen = [], set()
    for attn, ffn in pairs:
        for hw in (attn, ffn):
            if hw.slug in seen:
                continue
            seen.add(hw.slug)
            ep = best_ep(model, hw, budget, context, precision, assumptions)
            rate = float(ep.tokens_per_s_per_gpu)
            if rate > 0:
                rows.append({"design": f"EP on {hw.slug}", "tokens_per_s_per_gpu": rate,
                             "gpu_hours_per_mtok": {hw.slug: per_mtok / rate}})
        afd = best_afd_open(model, attn, ffn, budget, context, precision, assumptions)[0]
        rate = float(afd.tokens_per_s_per_gpu)
        if rate <= 0:
            continue
        d = afd.deployment
        g_a, g_f = float(d.attention.gpus), float(d.ffn.gpus)
        total = rate * (g_a + g_f)
        hours = {attn.slug: g_a / total * per_mtok}
        hours[ffn.slug] = hours.get(ffn.slug, 0.0) + g_f / total * per_mtok
        rows.append({"design": f"AFD {d.attention.nodes:.0f}A ({attn.slug}) {d.ffn.nodes:.0f}F ({ffn.slug})",
                     "tokens_per_s_per_gpu": rate, "gpu_hours_per_mtok": hours})
    for r in rows:
        r["total_gpu_hours_per_mtok"] = sum(r["gpu_hours_per_mtok"].values())
        if prices:
            missing = [s for s in r["gpu_hours_per_mtok"] if s not in prices]
            if missing:
                raise AfdError(f"no price for {', '.join(missing)}")
            r["usd_per_mtok"] = sum(h * prices[s] for s, h in r["gpu_hours_per_mtok"].items())
    return rows
