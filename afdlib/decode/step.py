"""End-to-end decode: output tokens per second per GPU for large-scale EP and for AFD.

One decode step produces ``L_accept`` tokens per request (1 without MTP). Every operator's work
comes from its own module (:mod:`afdlib.evaluator.attention`, :mod:`afdlib.evaluator.grouped_gemm`,
:mod:`afdlib.evaluator.dense`, :mod:`afdlib.evaluator.alltoall`) and becomes time through the one evaluator
(:func:`afdlib.evaluator.roofline.stage_time`): within an operator the tiers overlap, operators of a stage
run one after another, and each kernel pays a fixed cost.

**One schedule for both designs.** The MoE layers of a step are the max-plus schedule of the
micro-batches' stages in program order over the design's resources
(:mod:`afdlib.analysis.schedule`: :func:`~afdlib.analysis.schedule.makespan`, equal to
:func:`~afdlib.analysis.schedule.run`'s makespan, fill and drain included); how much of the
communication hides is an output (:attr:`afdlib.decode.result.Step.hidden_share`), not an
assumption. :attr:`Assumptions.ep_overlap` and :attr:`Assumptions.afd_overlap` remain what-if
overrides (None by default).

**EP** (:func:`ep_step`): every GPU runs attention for its own ``requests`` (data parallel) and
holds (E + redundant) / R routed experts; ``micro_batches`` (2, DeepSeek's dual micro-batch
overlap) split the batch so that one micro-batch's dispatch/combine can run beside the other's
compute: route ``ep`` (attention and experts on the GPU, dispatch and combine on the network) with
DeepEP's low-latency kernels, ``ep-normal`` (the normal kernels hold the SMs: serial) with its
normal kernels; one micro-batch is serial either way.

**AFD** (:func:`afd_step`): ``n_attn`` attention nodes and ``n_ffn`` FFN nodes (possibly different
hardware), ``micro_batches`` (3BO) cycling attention -> dispatch -> FFN -> combine in every MoE
layer, route ``afd`` (attention pool, one network lane carrying dispatch + combine, the paper's
t_c, FFN pool). With per-micro-batch stage times t_a, t_f, t_c the L MoE layers take
``max(L S + (m - 1) t_B, S + (L m - 1) t_B)`` with S = t_a + t_f + t_c and t_B = max(t_a, t_f,
t_c): per layer in steady state ``max(m t_a, m t_f, m t_c, t_a + t_f + t_c)`` (each pool serves m
micro-batches; one micro-batch's round trip cannot be shorter than its stages): with m = 3, where
attention sets the pace it never waits exactly when ``2 t_a >= t_f + t_c`` (Eq. 3), and the FFN
where ``2 t_f >= t_a + t_c`` (Eq. 4); bubble-free, the layer takes 3 max(t_a, t_f, t_c) = 3 t_B.
Dense layers and the LM head run on the attention pool. Throughput per GPU counts both pools.

The FFN side's imbalance is the balancedness sigma (mean/max per-GPU load): the busiest GPU's
expert work and its share of the all-to-all grow by 1/sigma. Without a given sigma the model uses
uniform routing's expected per-step balancedness (:func:`afdlib.routing.balance.uniform_balancedness`),
the floor that even a perfect expert placement leaves.

Everything broadcasts over numpy arrays (batch, context, deployment size), so sweeps are one call.
These are the low-level evaluators; a deployment (:mod:`afdlib.decode.deployment`) reaches them
through :func:`afdlib.decode.deployment.decode_step`. What they return is typed in
:mod:`afdlib.decode.result`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from afdlib.evaluator.alltoall import DESTINATION_RULES, afd_transfer_work, ep_all_to_all_work
from afdlib.evaluator.attention import attention_kernels, attention_work, kv_cache_bytes
from afdlib.routing.balance import uniform_balancedness
from afdlib.evaluator.dense import (KERNELS_FFN, KERNELS_HEAD, dense_ffn_work, lm_head_work, router_work, shared_experts_work)
from afdlib.analysis.budget import no_attention_bubble, no_ffn_bubble
from afdlib.analysis.intensity import local_experts
from afdlib.analysis.schedule import afd_moe_time, ep_moe_time
from afdlib.decode.result import AFDPipeline, PoolMemory, Step
from afdlib.decode.weights import dense_side_bytes, ffn_side_bytes, spare_slots
from afdlib.errors import AfdError
from afdlib.evaluator.grouped_gemm import KERNELS_ROUTED, active_experts, routed_experts_work
from afdlib.evaluator.kernels import PROFILES, KernelProfile
from afdlib.evaluator.roofline import TIERS, Work, stage_time
from afdlib.inputs.specs import Budget, Hardware, Model, Precision

DECODE_T_GAP_S = 0.003
"""The fixed gap per step of the decode model, seconds (scheduling, sampling, batch preparation).

The paper's t_g = 15 ms also holds the dense layers and the gaps between kernels, which this model
computes explicitly; Step-3's published figures imply a gap of 3 ms or less (issue #7 of this
project). 3 ms is that upper end; every case states the value it uses."""


EP_KERNELS = "low-latency"
"""EP's default DeepEP kernels: the decode (low-latency) all-to-all, one RDMA message per remote
expert (:data:`afdlib.evaluator.alltoall.EP_MODES`)."""


@dataclass(frozen=True)
class Assumptions:
    """The decode model's named assumptions, with their sources.

    * ``kernel_profile`` "calibrated": how close each operator's kernel gets to the roofline
      (:mod:`afdlib.evaluator.kernels`): "calibrated" (efficiency by shape and architecture, fitted to DeepGEMM's and
      FlashMLA's published kernel measurements and to aiconfigurator's measured tables of DeepGEMM
      kernels, ``data/kernel_efficiency.yaml``), "datasheet" (the
      earlier scalars: 0.75 of peak FLOP/s, HBM and networks at the hardware profile's 0.8, 3 us per
      kernel) or "roofline" (speed of light). One profile for both designs.
    * ``matmul_efficiency`` None: the profile's FLOP fractions; a number replaces every GEMM's and
      attention's fraction of peak FLOP/s (a what-if).
    * ``kernel_overhead_s`` None: the profile's fixed cost per kernel (calibrated: the GEMM fit's
      ramp and tail; datasheet: 3 us, after AIConfigurator's "+3 us per memory op"); a number replaces it.
    * ``ep_overlap`` None: what EP hides of its all-to-all comes from the schedule (module
      docstring). A number is a what-if override for EP alone: the share of the shorter of
      (compute, dispatch + combine) hidden behind the longer, a MoE layer taking
      ``max(compute, comm) + (1 - overlap) * min(compute, comm)`` (1: the roofline's lower bound,
      the max; 0: the sum; with one batch nothing hides unless ``single_batch_overlap``); the
      validation shows both ends of each design's override as a what-if band for every case
      (``band_low``, ``band_high``).
    * ``hbm_usable_fraction`` 0.9: share of HBM for weights and KV cache (the rest: activations,
      CUDA graphs, communication buffers), as serving engines reserve (SGLang's static memory
      fraction is of this order).
    * ``sigma``: balancedness of the FFN load; None: uniform routing's per-step value.
    * ``skew``: measured expert loads as a function of the placement
      (:func:`afdlib.routing.balance.placement_skew`); multiplies the per-step balancedness.
    * ``skew_share`` 1: the power the skew enters with (0: none of it, 1: all of it; an array over a
      map's cells, with the candidates' axis, is how :mod:`afdlib.decision.uncertainty` varies it).
    * ``afd_overlap`` None: AFD's layers come from the schedule. A number is a what-if override
      for AFD alone: the share of the transfers hidden behind the pools' compute, 1 the steady
      state of the pipeline without its fill and drain (a MoE layer takes max(m t_a, m t_f, m t_c,
      t_a + t_f + t_c)), 0 every transfer between compute (max(m t_a, m t_f, t_a + t_f) + m t_c,
      with the schedule's fill and drain: :func:`afdlib.analysis.schedule.afd_moe_time`).
    * ``afd_two_stage`` True: AFD tokens cross scale-out once per destination FFN node and fan out
      inside it (the paper's two-stage forwarding); False: one copy per expert over scale-out.
    * ``afd_destinations`` "expected": FFN nodes a token crosses to under two-stage AFD, for uniform
      routing (:data:`afdlib.evaluator.alltoall.DESTINATION_RULES`: "exact" is aiconfigurator's send
      probability over K distinct experts, "paper" the paper's min(K, N_F)).
    * Kernels per layer and micro-batch (each paying the fixed cost per kernel): attention
      (:func:`afdlib.evaluator.attention.attention_kernels`: MLA 11, GQA 8, MFA 9), routed experts 5
      (:data:`afdlib.evaluator.grouped_gemm.KERNELS_ROUTED`), shared experts or a dense FFN 3, the LM head 3;
      the all-to-all pays its message latency instead.
    """

    matmul_efficiency: float | None = None
    kernel_overhead_s: float | None = None
    ep_overlap: ArrayLike | None = None    # None: from the schedule; a share: EP's what-if override
    hbm_usable_fraction: float = 0.9
    sigma: ArrayLike | None = None   # a number, or an array broadcasting with the deployment grid
    afd_overlap: ArrayLike | None = None   # None: from the schedule; a share: AFD's what-if override
    single_batch_overlap: bool = False  # EP with one batch: let an ep_overlap override apply (SBO)
    skew: object = None  # measured skew: skew(ranks, redundant) -> balancedness (balance.placement_skew)
    skew_share: ArrayLike = 1.0  # the power of the skew (0: none of it); arrays over cells + (1,)
    afd_two_stage: bool = True
    afd_destinations: str = "expected"
    kernel_profile: str = PROFILES[0]

    def __post_init__(self):
        from afdlib.inputs import checks  # the library's one vocabulary of number checks
        if self.matmul_efficiency is not None:
            checks.fraction(self.matmul_efficiency, "matmul_efficiency")
        checks.fraction(self.hbm_usable_fraction, "hbm_usable_fraction")
        for name in ("ep_overlap", "afd_overlap"):
            if getattr(self, name) is not None:
                checks.share(getattr(self, name), name)  # numbers, or arrays over a grid
        if self.kernel_overhead_s is not None:
            checks.nonnegative(self.kernel_overhead_s, "kernel_overhead_s")
        checks.one_of(self.afd_destinations, DESTINATION_RULES, "afd_destinations")
        checks.one_of(self.kernel_profile, PROFILES, "kernel profile")
        if self.sigma is not None:
            checks.fraction(self.sigma, "sigma (balancedness)")
        checks.share(self.skew_share, "skew_share")

    @property
    def kernels(self) -> KernelProfile:
        """The kernel profile with this set's what-if overrides."""
        return KernelProfile(self.kernel_profile, self.matmul_efficiency, self.kernel_overhead_s)


def draft_tokens(l_accept: float) -> int:
    """MTP draft tokens verified per step for ``l_accept`` accepted tokens: ceil(L_accept) - 1."""
    if l_accept < 1:
        raise AfdError(f"accepted tokens per step must be >= 1, got {l_accept}")
    return int(np.ceil(l_accept - 1e-9)) - 1


def _time(works, hw, a: Assumptions, kernels: float = 0.0):
    """(seconds with the kernels' fixed cost, the :class:`~afdlib.evaluator.roofline.StageTime`, whose
    binding tier is found only if asked for). The works come from the operator families through the
    kernel profile (:meth:`KernelProfile.gemm`, :meth:`~KernelProfile.attention`); the roofline
    profile puts every tier at its datasheet peak here."""
    k = a.kernels
    if k.name == "roofline":
        works = [k.at_peak(w, hw) for w in ([works] if isinstance(works, Work) else works)]
    st = stage_time(works, hw, k.stage_efficiency)
    return st.seconds + kernels * k.fixed_s, st


def _balancedness(a: "Assumptions", tokens, k, e, ranks, redundant):
    """The FFN side's sigma for ``tokens`` tokens of one micro-batch over ``ranks`` GPUs: the given
    one, else uniform routing's per-step value; times the measured skew of the placement if any,
    placed with ``redundant`` replicas (the spare slots, :func:`~afdlib.decode.weights.spare_slots`)."""
    sigma = (np.asarray(a.sigma, dtype=float) if a.sigma is not None
             else uniform_balancedness(np.maximum(tokens, 1.0), k, e, ranks))
    if a.skew is None:
        return sigma
    skew = a.skew(ranks, redundant)
    return sigma * (skew if np.ndim(a.skew_share) == 0 and a.skew_share == 1 else skew ** np.asarray(a.skew_share))


def _attention_stage(model, precision, hardware, a, requests, context, tokens_per_request):
    """(time, bound, (projections, core)) of one attention layer of one micro-batch, with the router;
    the projections' and core's work through the kernel profile, which a dense layer of the same
    micro-batch runs again (:func:`_rest_of_step`)."""
    proj, core = attention_work(model, precision, requests, context, tokens_per_request)
    tokens = np.asarray(requests, dtype=float) * tokens_per_request
    k = a.kernels
    works = (k.gemm(proj, hardware, tokens), k.attention(core, hardware))
    t, st = _time([*works, k.gemm(router_work(model, tokens), hardware, tokens)], hardware, a, attention_kernels(model))
    return t, st, works


def attention_layer_s(model: Model, precision: Precision, hardware: Hardware, assumptions: Assumptions,
                      requests: ArrayLike, context: ArrayLike, tokens_per_request: ArrayLike = 1) -> np.ndarray:
    """Seconds of one attention layer for ``requests`` at ``context`` (projections, core, router and
    their kernels' fixed cost): what each design charges per layer and micro-batch."""
    return _attention_stage(model, precision, hardware, assumptions, requests, context, tokens_per_request)[0]


def _ffn_works(model, precision, hardware, a, tokens, local, sigma, count=active_experts):
    """(routed experts' work, shared experts' work, kernels) of one GPU's experts in one MoE layer:
    ``tokens`` tokens, the busiest GPU's routed pairs grown by 1 / sigma, through the kernel profile
    (rows of each grouped GEMM: tokens per active expert, counted by ``count``)."""
    pairs = tokens * model.experts_per_token / sigma
    active = count(pairs, local)
    rows = np.divide(pairs, active, out=np.zeros(np.broadcast_shapes(np.shape(pairs), np.shape(active))),
                     where=active > 0)
    k = a.kernels
    return (k.gemm(routed_experts_work(model, precision, pairs, local, count), hardware, rows),
            k.gemm(shared_experts_work(model, precision, tokens), hardware, tokens),
            KERNELS_ROUTED + (KERNELS_FFN if model.shared_experts else 0))


def _ffn_stage(model, precision, hardware, a, tokens, local, sigma, sbo: bool = False):
    """(time, bound) of one GPU's experts in one MoE layer (:func:`_ffn_works`); with ``sbo``, also the
    parts single-batch overlap schedules apart, each with its kernels' fixed cost: (shared experts,
    routed up and gate GEMMs, routed down GEMM), the down GEMM 1 of the ``ffn_matrices`` weight matrices
    of the routed work and 1 of its kernels (else None)."""
    routed, shared, kernels = _ffn_works(model, precision, hardware, a, tokens, local, sigma)
    t, st = _time([routed, shared], hardware, a, kernels)
    if not sbo:
        return t, st, None
    t_routed, _ = _time(routed, hardware, a, KERNELS_ROUTED)
    down = (t_routed - KERNELS_ROUTED * a.kernels.fixed_s) / model.ffn_matrices + a.kernels.fixed_s
    return t, st, (t - t_routed, t_routed - down, down)


def _afd_local(model, ffn_gpus):
    """Routed experts on each of AFD's ``ffn_gpus`` FFN GPUs (at least one: replicas beyond E), G of Eq. 10."""
    return local_experts(model.routed_experts, ffn_gpus, 1)


def _afd_ffn_side(model, a, tokens_per_micro_batch, ffn_gpus):
    """(tokens per FFN GPU, routed experts per FFN GPU, sigma) of one AFD micro-batch whose
    ``tokens_per_micro_batch`` tokens (over the whole attention pool) spread over ``ffn_gpus``."""
    local, e = _afd_local(model, ffn_gpus), model.routed_experts
    sigma = _balancedness(a, tokens_per_micro_batch, model.experts_per_token, e, ffn_gpus,
                          spare_slots(local, ffn_gpus, e))
    return tokens_per_micro_batch / ffn_gpus, local, sigma


def afd_ffn_parts(model: Model, ffn_hardware: Hardware, precision: Precision, assumptions: Assumptions,
                  tokens_per_micro_batch: ArrayLike, ffn_gpus: ArrayLike, count=active_experts) -> dict[str, np.ndarray]:
    """AFD's FFN stage t_f of one MoE layer and micro-batch on the busiest FFN GPU, in the parts
    :func:`afd_step` adds up (seconds): the routed experts' grouped GEMMs (``routed_s``), the shared
    experts' GEMMs (``shared_s``) and the fixed cost of the stage's kernels (``fixed_s``), for
    ``tokens_per_micro_batch`` tokens over the attention pool spread over ``ffn_gpus`` GPUs;
    ``routed_s + shared_s + fixed_s`` is the step's ``t_ffn``. ``count``: the routed experts the pairs
    reach (the decode model's :func:`~afdlib.evaluator.grouped_gemm.active_experts`; a kernel table
    measured with balanced routing is matched by
    :func:`~afdlib.evaluator.grouped_gemm.balanced_active_experts`, with ``assumptions.sigma`` 1)."""
    a = assumptions
    arriving, local, sigma = _afd_ffn_side(model, a, np.asarray(tokens_per_micro_batch, dtype=float),
                                           np.asarray(ffn_gpus, dtype=float))
    routed, shared, kernels = _ffn_works(model, precision, ffn_hardware, a, arriving, local, sigma, count)
    return {"routed_s": _time(routed, ffn_hardware, a)[0], "shared_s": _time(shared, ffn_hardware, a)[0],
            "fixed_s": np.asarray(kernels * a.kernels.fixed_s), "kernels": kernels}


def _rest_of_step(model, precision, hardware, a, req, context, q: int, m: int, moe_layer, attention):
    """(one dense layer, the LM head, the MTP drafts) of a step, on the GPUs that hold attention.

    A dense layer is attention (``attention``: a MoE layer's (projections, core) work of the same
    micro-batch, :func:`_attention_stage`) plus the dense FFN for each of the ``m`` micro-batches (no
    all-to-all); each MTP draft costs one more MoE layer at one token per request and an LM head."""
    tokens = req * q
    k = a.kernels
    t_att, _ = _time(list(attention), hardware, a, attention_kernels(model))
    t_ffn, _ = _time(k.gemm(dense_ffn_work(model, precision, tokens / m), hardware, tokens / m), hardware, a,
                     KERNELS_FFN)
    head, _ = _time(k.gemm(lm_head_work(model, precision, tokens), hardware, tokens), hardware, a, KERNELS_HEAD)
    drafts = q - 1
    mtp = 0.0
    if drafts:
        draft_head, _ = _time(k.gemm(lm_head_work(model, precision, req), hardware, req), hardware, a, KERNELS_HEAD)
        mtp = drafts * (moe_layer(1)[0] + draft_head)
    return m * (t_att + t_ffn), head, mtp


def _checks(requests, context, *sizes) -> np.ndarray:
    r = np.asarray(requests, dtype=float)
    if np.any(~np.isfinite(r)) or np.any(r < 0):
        raise AfdError("requests per GPU must be non-negative")
    c = np.asarray(context, dtype=float)
    if np.any(~np.isfinite(c)) or np.any(c < 0):
        raise AfdError("context must be non-negative")
    for name, v in sizes:
        v = np.asarray(v, dtype=float)
        if np.any(~np.isfinite(v)) or np.any(v < 1):
            raise AfdError(f"{name} must be >= 1, got {v}")
    return r


def _dispatch_share(comm, precision: Precision):
    """(dispatch, combine) seconds of an all-to-all of ``comm`` = (seconds, Work): the message
    latency half each, the rest in proportion to the wire bytes (FP8 dispatch, BF16 combine: 1/3, 2/3)."""
    seconds, work = comm
    latency = np.minimum(np.asarray(work.fixed_s, dtype=float), seconds)
    d = latency / 2 + (seconds - latency) * precision.bytes("dispatch") / precision.wire_bytes
    return d, seconds - d


def ep_step(model: Model, hardware: Hardware, ep_size: ArrayLike, requests: ArrayLike, context: ArrayLike,
            budget: Budget, precision: Precision = Precision(), assumptions: Assumptions = Assumptions(),
            redundant: ArrayLike = 0, micro_batches: int = 2, kernels: str = EP_KERNELS, sbo: bool = False) -> Step:
    """Large-scale EP over ``ep_size`` GPUs, ``requests`` per GPU at ``context`` cached tokens.

    ``budget.l_accept`` tokens are accepted per step (MTP: ceil(L_accept) - 1 drafts verified);
    ``budget.t_gap_s`` is added once per step; ``budget.micro_batches`` is AFD's and not used here.
    ``micro_batches`` (2: DeepSeek's and SGLang's two-batch overlap in decode) and ``kernels``
    (DeepEP's all-to-all mode, :data:`EP_KERNELS`) are the deployment's choices
    (:class:`afdlib.decode.deployment.EPDeployment`), not assumptions; so is ``sbo``, single-batch
    overlap (one micro-batch, low-latency kernels: dispatch beside the shared experts, combine beside
    the down GEMM, :func:`afdlib.analysis.schedule.ep_moe_time`), for which the routed experts' time
    splits into the up-and-gate and the down GEMMs by their weight matrices (1 of ``ffn_matrices``
    is the down projection; the grouped GEMM's shape-dependent efficiency is the whole one's).
    """
    a = assumptions
    r_size = np.asarray(ep_size, dtype=float)
    req = _checks(requests, context, ("EP size", ep_size))
    red = np.asarray(redundant, dtype=float)
    q = 1 + draft_tokens(budget.l_accept)
    m, mode = micro_batches, kernels
    k, e = model.experts_per_token, model.routed_experts
    local = np.ceil((e + red) / r_size - 1e-9)   # the busiest GPU holds the rounded-up share

    def moe_layers(tokens_per_request, n_layers):
        req_mb = req / m
        t_mb = req_mb * tokens_per_request
        sigma = _balancedness(a, t_mb * r_size, k, e, r_size, spare_slots(local, r_size, e))
        t_att, b_att, works = _attention_stage(model, precision, hardware, a, req_mb, context, tokens_per_request)
        attention.setdefault(tokens_per_request, works)
        t_ffn, b_ffn, parts = _ffn_stage(model, precision, hardware, a, t_mb, local, sigma, sbo)
        comm = ep_all_to_all_work(model, precision, hardware, t_mb, r_size, mode)
        comm = comm.network_scaled(1.0 / sigma)
        t_comm, b_comm = _time(comm, hardware, a)
        t_d, t_cb = _dispatch_share((t_comm, a.kernels.at_peak(comm, hardware)), precision)   # the timed work's latency
        total, hidden = ep_moe_time(t_att, t_d, t_ffn, t_cb, m, mode, n_layers, a.ep_overlap,
                                    a.single_batch_overlap, parts)
        return total, m * t_att, m * t_ffn, m * t_comm, b_att, b_ffn, b_comm, sigma, hidden, m * t_d, parts

    attention = {}             # tokens per request -> a MoE layer's attention work (the dense layer's)
    moe, t_att, t_ffn, t_comm, b_att, b_ffn, b_comm, sigma, hidden, t_disp, parts = moe_layers(q, model.moe_layers)
    layer = moe / max(model.moe_layers, 1)
    dense, head, mtp = _rest_of_step(model, precision, hardware, a, req, context, q, m, lambda x: moe_layers(x, 1),
                                     attention[q])
    step = moe + model.dense_layers * dense + head + mtp + budget.t_gap_s
    weights = ffn_side_bytes(model, precision, local) + dense_side_bytes(model, precision)
    memory = weights + req * kv_cache_bytes(model, precision, context)
    capacity = a.hbm_usable_fraction * hardware.hbm_bytes
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(step > 0, req * budget.l_accept / step, 0.0)
    arrays = np.broadcast_arrays(req, step, step / budget.l_accept, rate, t_att, t_ffn, t_comm, layer, sigma, memory,
                                 memory <= capacity)
    return Step("ep", *arrays, dense_layer_s=dense, lm_head_s=head, mtp_s=mtp, t_gap_s=budget.t_gap_s,
                tokens_per_request=q, micro_batches=m, memory=(PoolMemory("GPU", weights, capacity),),
                hidden_share=np.broadcast_to(hidden, np.shape(step)),
                t_dispatch=np.broadcast_to(t_disp, np.shape(step)), sbo_parts=parts,
                bounds=lambda: (b_att.bound, b_ffn.bound, b_comm.bound))


def afd_step(model: Model, attn_hardware: Hardware, ffn_hardware: Hardware, n_attn: ArrayLike, n_ffn: ArrayLike,
             requests: ArrayLike, context: ArrayLike, budget: Budget, precision: Precision = Precision(),
             assumptions: Assumptions = Assumptions(), superpod: bool | None = None,
             micro_batches: int | None = None, domains: int = 1) -> Step:
    """AFD with ``n_attn`` attention nodes of ``attn_hardware`` and ``n_ffn`` FFN nodes of
    ``ffn_hardware``; ``requests`` per attention GPU at ``context``; ``micro_batches``
    micro-batches (the deployment's, :class:`afdlib.decode.deployment.AFDDeployment`; None:
    ``budget.micro_batches``). ``superpod``: both pools in one scale-up fabric (default: both
    devices are Superpod-class and of the same kind). ``domains``: the attention pool split into
    that many data-parallel domains, each running ``micro_batches`` of its own against the one FFN
    pool (xDeepServe's 3 domains x 2 micro-batches, :func:`afdlib.analysis.schedule.afd_moe_time`): a
    micro-batch then brings 1 / ``domains`` of the pool's tokens to the FFN GPUs."""
    a = assumptions
    na, nf = np.asarray(n_attn, dtype=float), np.asarray(n_ffn, dtype=float)
    req = _checks(requests, context, ("N_A", n_attn), ("N_F", n_ffn))
    if superpod is None:
        superpod = bool(attn_hardware.superpod and ffn_hardware.superpod and attn_hardware.slug == ffn_hardware.slug)
    q = 1 + draft_tokens(budget.l_accept)
    m = budget.micro_batches if micro_batches is None else micro_batches
    d = int(domains)
    if d < 1:
        raise AfdError(f"attention domains must be >= 1, got {domains}")
    g_a, g_f = attn_hardware.gpus_per_node, ffn_hardware.gpus_per_node
    ffn_gpus = nf * g_f
    local = _afd_local(model, ffn_gpus)

    def moe_layers(tokens_per_request, n_layers):
        req_mb = req / m
        t_mb = req_mb * tokens_per_request
        # tokens per FFN GPU per micro-batch, and the FFN side's sigma
        arriving, _, sigma = _afd_ffn_side(model, a, t_mb * na * g_a / d, ffn_gpus)
        t_a, b_a, works = _attention_stage(model, precision, attn_hardware, a, req_mb, context, tokens_per_request)
        attention.setdefault(tokens_per_request, works)
        t_f, b_f, _ = _ffn_stage(model, precision, ffn_hardware, a, arriving, local, sigma)
        send, recv = afd_transfer_work(model, precision, attn_hardware, ffn_hardware, t_mb, na, nf, superpod,
                                       a.afd_two_stage, a.afd_destinations, domains=d)
        recv = recv.network_scaled(1.0 / sigma)
        st_send, st_recv = _time(send, attn_hardware, a), _time(recv, ffn_hardware, a)
        t_c = np.maximum(st_send[0], st_recv[0])
        b_c = (st_send[0] >= st_recv[0], st_send[1], st_recv[1])      # the slower direction's bound, when asked
        # the paper's communication stage: dispatch and combine share one lane (Eq. 2: t_c <= t_B)
        total, hidden = afd_moe_time(t_a, t_f, t_c, m, n_layers, a.afd_overlap, d)
        return total, t_a, t_f, t_c, b_a, b_f, b_c, sigma, hidden

    attention = {}             # tokens per request -> a MoE layer's attention work (the dense layer's)
    moe, t_a, t_f, t_c, b_a, b_f, b_c, sigma, hidden = moe_layers(q, model.moe_layers)
    layer = moe / max(model.moe_layers, 1)
    dense, head, mtp = _rest_of_step(model, precision, attn_hardware, a, req, context, q, m,
                                     lambda x: moe_layers(x, 1), attention[q])
    step = moe + model.dense_layers * dense + head + mtp + budget.t_gap_s
    attn_weights = dense_side_bytes(model, precision)
    attn_memory = attn_weights + req * kv_cache_bytes(model, precision, context)
    ffn_memory = ffn_side_bytes(model, precision, local)
    cap_a = a.hbm_usable_fraction * attn_hardware.hbm_bytes
    cap_f = a.hbm_usable_fraction * ffn_hardware.hbm_bytes
    fits = (attn_memory <= cap_a) & (ffn_memory <= cap_f)
    memory = np.where(attn_memory / cap_a >= ffn_memory / cap_f, attn_memory, ffn_memory)
    attn_gpus = na * g_a
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(step > 0, attn_gpus * req * budget.l_accept / step / (attn_gpus + ffn_gpus), 0.0)
    # the pools' idle shares in the steady state (fill and drain are in the step's time); an override's layer
    cycle = (np.maximum.reduce(np.broadcast_arrays(m * t_a, d * m * t_f, m * t_c, t_a + t_f + t_c))
             if a.afd_overlap is None else layer)
    idle_a, idle_f = 1 - m * t_a / cycle, 1 - d * m * t_f / cycle
    # the paper's Eqs. 3-4 hold for one attention pool; with domains, whether a pool waits is its idle share
    pipeline = AFDPipeline(superpod, idle_a, idle_f,
                           no_attention_bubble(t_a, t_f, t_c) if d == 1 else idle_a <= 1e-9,
                           no_ffn_bubble(t_a, t_f, t_c) if d == 1 else idle_f <= 1e-9, np.maximum.reduce(np.broadcast_arrays(t_a, t_f, t_c)),
                           attn_memory, ffn_memory)
    arrays = np.broadcast_arrays(req, step, step / budget.l_accept, rate, t_a, t_f, t_c, layer, sigma, memory, fits)
    return Step("afd", *arrays, dense_layer_s=dense, lm_head_s=head, mtp_s=mtp, t_gap_s=budget.t_gap_s,
                tokens_per_request=q, micro_batches=m, domains=d,
                memory=(PoolMemory("attention GPU", attn_weights, cap_a), PoolMemory("FFN GPU", ffn_memory, cap_f)),
                afd=pipeline, hidden_share=np.broadcast_to(hidden, np.shape(step)), bounds=lambda: (b_a.bound, b_f.bound, np.where(b_c[0], b_c[1].bound, b_c[2].bound)))


def bound_names(bound: ArrayLike) -> np.ndarray:
    """Tier names of bound indices."""
    return np.asarray(TIERS)[np.asarray(bound, dtype=int)]
