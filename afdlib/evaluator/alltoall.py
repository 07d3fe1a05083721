"""Dispatch and combine: the all-to-all of tokens to their experts and back (one operator family).

Bytes per token copy are :func:`token_wire_bytes`: H hidden elements at the wire's data types
(FP8 dispatch + BF16 combine: 3 H). Which tier carries a copy depends on the kernels:

* EP, **low-latency** kernels (DeepEP's, used for decode): one message per remote *expert* a
  token visits; messages to GPUs outside the sender's scale-up domain cross the NIC, the others
  (the share (domain - 1) / R) stay on scale-up. DeepEP's published low-latency times on H800
  (128 tokens, top-8, EP16..EP256) follow this split within about 10% (tests/test_decode.py).
* EP, **normal** kernels: one copy per remote destination *node* over scale-out, then forwarded
  to the experts' GPUs over scale-up inside the node.
* AFD: attention GPUs send one copy per destination FFN node over scale-out (scale-up on a
  Superpod), and the FFN node fans it out to the experts' GPUs over scale-up (the paper's
  two-stage forwarding).

On a Superpod-class device (``superpod``: the fabric spans the AFD nodes) the copies that leave
the scale-up domain (an NVL72 rack) travel at the catalogue's inter-domain rate.

Each all-to-all pays a fixed message latency (the hardware's ``scale_out_latency_s`` or
``scale_up_latency_s``, when the catalogue knows it) once for dispatch and once for combine.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from afdlib.errors import AfdError
from afdlib.evaluator.roofline import Work
from afdlib.inputs.specs import Precision

EP_MODES = ("low-latency", "normal")


def token_wire_bytes(tokens: ArrayLike, hidden_size: ArrayLike, precision: Precision = Precision()) -> np.ndarray:
    """Bytes ``tokens`` token copies put on the wire for their dispatch and their combine together:
    tokens * H (b_dispatch + b_combine) (:attr:`afdlib.inputs.specs.Precision.wire_bytes`). The
    paper's FP8 dispatch and BF16 combine give 3 H per token (21,504 bytes at H = 7168).
    Where the count is a large grid, pass 1 and multiply: one pass over the grid."""
    # left to right from the count: for a fractional count, the rounding the decode model always had
    return np.asarray(tokens, dtype=float) * hidden_size * precision.wire_bytes


def distinct_destinations(experts_per_token: ArrayLike, groups: ArrayLike) -> np.ndarray:
    """Expected number of the ``groups`` equal groups (nodes, ranks) that a token's K experts touch,
    for uniform routing: ``groups * (1 - (1 - 1/groups)^K)`` (at most min(K, groups))."""
    n = np.maximum(np.asarray(groups, dtype=float), 1.0)
    return n * -np.expm1(np.asarray(experts_per_token, dtype=float) * np.log1p(-1.0 / np.maximum(n, 1.0 + 1e-12)))


def exact_destinations(experts_per_token: int, experts: int, groups: ArrayLike) -> np.ndarray:
    """Expected number of the ``groups`` equal groups holding E/groups experts each that a token's
    K distinct experts touch: ``groups * (1 - C(E - E/groups, K) / C(E, K))`` (aiconfigurator's
    send probability per FFN node, times the nodes). Computed as a product, so it broadcasts."""
    n = np.maximum(np.asarray(groups, dtype=float), 1.0)
    per = experts / n                                   # experts per group
    miss = np.ones_like(n)
    for i in range(int(experts_per_token)):            # C(E - per, K) / C(E, K) = prod (E - per - i) / (E - i)
        miss = miss * np.clip((experts - per - i) / (experts - i), 0.0, None)
    return n * (1.0 - miss)


DESTINATION_RULES = ("expected", "exact", "paper")
"""How many FFN nodes a token crosses to under AFD: ``expected`` (uniform routing with replacement,
:func:`distinct_destinations`), ``exact`` (K distinct experts, :func:`exact_destinations`),
``paper`` (min(K, N_F): the paper's max(1, K/N_F) copies per node, every node reached)."""


def afd_destinations(rule: str, experts_per_token: int, experts: int, n_ffn: ArrayLike) -> np.ndarray:
    """FFN nodes one token crosses to, by ``rule`` (:data:`DESTINATION_RULES`)."""
    if rule == "expected":
        return distinct_destinations(experts_per_token, n_ffn)
    if rule == "exact":
        return exact_destinations(experts_per_token, experts, n_ffn)
    if rule == "paper":
        return np.minimum(float(experts_per_token), np.maximum(np.asarray(n_ffn, dtype=float), 1.0))
    raise AfdError(f"unknown destination rule '{rule}'; valid: {', '.join(DESTINATION_RULES)}")


def _latency(hardware, tier: str) -> float:
    v = hardware.scale_up_latency_s if tier == "scale-up" else hardware.scale_out_latency_s
    return 0.0 if v is None else v


def ep_all_to_all_work(model, precision, hardware, tokens: ArrayLike, ep_size: ArrayLike,
                       mode: str = "low-latency") -> Work:
    """Dispatch + combine of one MoE layer as seen by one EP rank sending ``tokens`` tokens.

    Balanced routing: the receive side of the busiest rank is the caller's to scale (imbalance).
    """
    if mode not in EP_MODES:
        raise AfdError(f"unknown all-to-all mode '{mode}'; valid: {', '.join(EP_MODES)}")
    t = np.asarray(tokens, dtype=float)
    r = np.asarray(ep_size, dtype=float)
    k, h = model.experts_per_token, model.routed_width
    per_copy = token_wire_bytes(1, h, precision)
    domain = np.minimum(r, hardware.scale_up_domain)
    inside = r <= hardware.scale_up_domain
    expert_copies = t * k * (r - 1) / r * per_copy       # to experts on other GPUs
    if mode == "low-latency":
        # copies to GPUs of the own scale-up domain stay off the NIC (DeepEP's measured
        # low-latency times at EP16..EP256 follow the share (R - domain) / R of remote ranks)
        up = t * k * (domain - 1) / r * per_copy
        out = t * k * (r - domain) / r * per_copy
    else:
        nodes = np.maximum(1.0, r / hardware.scale_up_domain)
        node_copies = t * distinct_destinations(k, nodes) * (nodes - 1) / nodes * per_copy
        up = expert_copies
        out = np.where(inside, 0.0, node_copies)
    fixed = 2 * np.where(inside, _latency(hardware, "scale-up"), _latency(hardware, "scale-out"))
    if hardware.superpod:  # leaving the domain (rack) means the inter-domain network, not the fabric
        return Work(scale_up_bytes=up, inter_domain_bytes=out, fixed_s=fixed)
    return Work(scale_up_bytes=up, scale_out_bytes=out, fixed_s=fixed)


def afd_transfer_work(model, precision, attn_hardware, ffn_hardware, tokens_per_attn_gpu: ArrayLike,
                      n_attn: ArrayLike, n_ffn: ArrayLike, superpod: bool, two_stage: bool = True,
                      destinations: str = "expected", domains: int = 1) -> tuple[Work, Work]:
    """(attention GPU, FFN GPU) sides of one micro-batch's dispatch + combine under AFD.

    ``tokens_per_attn_gpu`` tokens leave each of the ``n_attn`` x g attention GPUs; with
    ``two_stage`` (the paper's reading) each crosses the pool boundary once per FFN node among its
    experts, arriving spread over the ``n_ffn`` x g FFN GPUs, which fan the copies out to their
    experts over scale-up; without it, one copy per expert crosses scale-out straight to the
    expert's GPU. ``superpod``: the two pools share one scale-up fabric (scale-out = scale-up).
    ``destinations``: how the FFN nodes a token crosses to are counted (:data:`DESTINATION_RULES`).
    ``domains``: the attention pool in that many data-parallel domains, one of whose micro-batches is
    in flight: each FFN GPU receives from 1 / ``domains`` of the attention GPUs.
    """
    t = np.asarray(tokens_per_attn_gpu, dtype=float)
    na, nf = np.asarray(n_attn, dtype=float), np.asarray(n_ffn, dtype=float)
    k, h = model.experts_per_token, model.routed_width
    g_a, g_f = attn_hardware.gpus_per_node, ffn_hardware.gpus_per_node
    per_copy = token_wire_bytes(1, h, precision)
    share = na * g_a / (nf * g_f) / domains               # attention GPUs (of one domain) per FFN GPU
    expert_copies = t * k * per_copy                      # one copy per expert a token visits
    tier = "scale-up" if superpod else "scale-out"
    lat_a, lat_f = 2 * _latency(attn_hardware, tier), 2 * _latency(ffn_hardware, tier)
    if superpod:  # one fabric: every copy goes straight to its expert's GPU; copies to GPUs in
        # other scale-up domains (racks; pools packed into as few as possible) cross the inter-domain network
        total = na * g_a + nf * g_f
        away = np.maximum(0.0, 1.0 - attn_hardware.scale_up_domain / total)
        return (Work(scale_up_bytes=expert_copies * (1 - away), inter_domain_bytes=expert_copies * away,
                     fixed_s=lat_a),
                Work(scale_up_bytes=expert_copies * share * (1 - away),
                     inter_domain_bytes=expert_copies * share * away, fixed_s=lat_f))
    if not two_stage:
        return (Work(scale_out_bytes=expert_copies, fixed_s=lat_a),
                Work(scale_out_bytes=expert_copies * share, fixed_s=lat_f))
    send = t * afd_destinations(destinations, k, model.routed_experts, nf) * per_copy   # one copy per FFN node, leaving one attention GPU
    recv = send * share                                   # arriving at one FFN GPU from outside its node
    fan = expert_copies * share * (g_f - 1) / g_f         # forwarded to the expert's GPU inside the node
    return (Work(scale_out_bytes=send, fixed_s=lat_a),
            Work(scale_out_bytes=recv, scale_up_bytes=fan, fixed_s=lat_f))
