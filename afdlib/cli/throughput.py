"""afd throughput: end-to-end decode, output tokens/s per GPU for EP or AFD, and what limits it."""
from __future__ import annotations

import argparse

from afdlib.cli.options import (
    add_decode_options,
    add_deployment_options,
    bounded_int,
    check_memory,
    decode_setup,
    deployment_of,
    device,
    dumps,
    mtp_module,
    precision_of,
    refuse_given,
)


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("throughput", help="end-to-end decode: output tokens/s per GPU for EP or AFD, and what limits it")
    p.add_argument("--model", required=True, help="catalogue slug, or a config.json / .yaml path")
    p.add_argument("--hardware", required=True, help="catalogue slug or .yaml (AFD: the FFN pool)")
    p.add_argument("--gpus-per-node", type=bounded_int("--gpus-per-node", 1, 4096), default=None,
                   help="AFD: GPUs per node, the unit of --n-attn and --n-ffn (default: the hardware's); EP's "
                        "all-to-all spans the hardware's scale-up domain instead, so EP refuses it")
    add_deployment_options(p, micro_batches=3, micro_batches_help="AFD micro-batches (default 3: 3BO)")
    p.add_argument("--all-to-all", default="low-latency", choices=("low-latency", "normal"),
                   help="EP: DeepEP's kernels (default low-latency)")
    # default None: options.deployment_of takes EPDeployment's (every command builds this parser, so the
    # decode model is not imported here); tests/test_cli.py checks the help's default against it
    p.add_argument("--ep-micro-batches", type=int, choices=(1, 2), default=None,
                   help="EP: 1 (nothing of the all-to-all hidden) or 2 (two-batch overlap; the default)")
    p.add_argument("--sbo", action="store_true",
                   help="EP: single-batch overlap, one micro-batch whose dispatch runs beside the shared experts "
                        "and combine beside the down GEMM (SGLang/Ant Group's decode; implies --ep-micro-batches 1)")
    add_decode_options(p)
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    import numpy as np

    from afdlib.decode.batch import MAX_REQUESTS
    from afdlib.decode.deployment import decode_step
    from afdlib.decode.step import bound_names
    from afdlib.inputs.catalog import load_model
    if args.design == "ep":  # options that set only an AFD deployment (checked before anything loads)
        refuse_given(args, ("micro_batches",), "sets AFD's micro-batches; EP's are --ep-micro-batches")
        refuse_given(args, ("gpus_per_node",), "sets the size of an AFD node (the unit of --n-attn and --n-ffn); "
                     "EP's all-to-all spans the hardware's scale-up domain, which it does not change")
    model = load_model(args.model, profile=args.model_profile)
    hw = device(args, args.hardware)
    if args.gpus_per_node is not None:
        hw = hw.with_overrides(gpus_per_node=args.gpus_per_node)
    precision, a, budget = decode_setup(args, model)
    weights_from = precision_of(args, model)[1]
    d = deployment_of(args, model, hw)      # the design's options, EP size against experts, sigma against GPUs
    st = decode_step(model, d, args.context, budget, precision, a)
    check_memory(args, st, a)
    gpus = d.gpus
    ms, us = 1e3, 1e6
    breakdown = {
        "attention_us": float(st.t_attn) * us, "ffn_us": float(st.t_ffn) * us, "comm_us": float(st.t_comm) * us,
        "moe_layer_us": float(st.t_layer) * us, "bound": {"attention": str(bound_names(st.bound_attn)),
                                                         "ffn": str(bound_names(st.bound_ffn)),
                                                         "comm": str(bound_names(st.bound_comm))},
        "per": "micro-batch" if args.design == "afd" else "layer (all micro-batches)",
        "sigma": float(st.sigma), "hidden_share": float(st.hidden_share), "dense_layer_us": float(st.dense_layer_s) * us,
        "lm_head_us": float(st.lm_head_s) * us, "mtp_us": float(np.asarray(st.mtp_s)) * us,
        "t_gap_ms": budget.t_gap_s * ms, "memory_gb": float(st.memory_bytes) / 1e9, "fits_memory": bool(st.fits_memory),
    }
    if args.design == "afd":
        breakdown.update({k: bool(getattr(st.afd, k)) for k in ("no_attention_bubble", "no_ffn_bubble")})
        breakdown.update({k: float(getattr(st.afd, k)) for k in ("bubble_attn", "bubble_ffn")})
    doc = {"tokens_per_s_per_gpu": float(st.tokens_per_s_per_gpu), "tpot_ms": float(st.tpot_s) * ms,
           "batch_per_gpu": int(st.requests), "step_ms": float(st.step_s) * ms, "gpus": int(gpus),
           "slo_ms": float(args.slo_ms), "meets_slo": bool(float(st.tpot_s) <= budget.slo_s),
           "design": args.design, "weights": {"dtype": precision.weights, "from": weights_from},
           "breakdown": breakdown, "floor": step_floor(model, d, args, budget, precision, a)}
    mtp = mtp_module(model, args.mtp)
    if mtp is not None:
        doc["mtp_module"] = mtp
    if args.design == "afd":
        doc["ffn_pool"] = ffn_pool(model, d)
    text = dumps(doc)   # every number printed, as text or JSON, is finite (else one line, status 2)
    if args.json:
        print(text)
        return 0
    where = (f"EP{args.ep_size} (+{args.redundant} redundant)" if args.design == "ep" else
             f"AFD {d.label} ({d.attention.hardware.name} / {hw.name}, {d.micro_batches} micro-batches"
             + (f"; {doc['ffn_pool']['words']}" if doc["ffn_pool"]["replica_slots"] else "") + ")")
    print(f"{model.name} on {hw.name} ({hw.profile}), {where}, {gpus} GPUs, context {args.context:g}, "
          f"MTP L_accept {args.mtp:g}, t_g {budget.t_gap_s * ms:g} ms; weights {precision.weights} ({weights_from})"
          + ("" if mtp is None or mtp["declared"] else f"; {mtp['words']}"))
    how = (f"given; {'within' if doc['meets_slo'] else 'over'} the {args.slo_ms:g} ms SLO"
           if args.batch_per_gpu is not None else f"largest meeting {args.slo_ms:g} ms and memory"
           + (f" up to the search's cap of {MAX_REQUESTS:,}: a larger batch may do more"
              if doc["batch_per_gpu"] >= MAX_REQUESTS else ""))
    print(f"{doc['tokens_per_s_per_gpu']:,.0f} output tokens/s per GPU at {doc['batch_per_gpu']} requests per "
          f"{'attention ' if args.design == 'afd' else ''}GPU ({how}); TPOT {doc['tpot_ms']:.1f} ms")
    b = breakdown
    override = a.ep_overlap if args.design == "ep" else a.afd_overlap
    print(f"per MoE {b['per']}: attention {b['attention_us']:.0f} us ({b['bound']['attention']}), "
          f"FFN {b['ffn_us']:.0f} us ({b['bound']['ffn']}), dispatch+combine {b['comm_us']:.0f} us "
          f"({b['bound']['comm']}); layer {b['moe_layer_us']:.0f} us ({b['hidden_share']:.0%} of what could "
          f"overlap does, {'by the override' if override is not None else 'by the schedule'}); "
          f"sigma {b['sigma']:.3f}; "
          f"memory {b['memory_gb']:.1f} GB per GPU")
    f = doc["floor"]["terms_ms"]
    print(f"floor at one request per {'attention ' if args.design == 'afd' else ''}GPU: TPOT "
          f"{doc['floor']['tpot_ms']:.1f} ms (step {doc['floor']['step_ms']:.1f} ms: gap {f['gap']:.1f}, LM head "
          f"{f['lm_head']:.1f}, MTP {f['mtp']:.1f}, dense layers {f['dense_layers']:.1f}, MoE layers "
          f"{f['moe_layers']:.1f}; of these the kernels' fixed cost {f['kernels_fixed']:.1f})")
    return 0


def ffn_pool(model, d) -> dict:
    """AFD's FFN pool as the decode model places it: routed experts per FFN GPU (at least one, so a pool
    of more GPUs than experts holds replicas, each taking its share of the expert's tokens) and the slots
    beyond the model's experts (replicas, charged in memory), in words where there are any."""
    import numpy as np

    from afdlib.analysis.intensity import local_experts
    from afdlib.decode.weights import spare_slots
    gpus, experts = int(d.ffn.gpus), int(np.max(model.routed_experts))
    local = int(local_experts(experts, gpus, 1))          # the decode model's G (afdlib.decode.step)
    spare = int(spare_slots(local, gpus, experts))
    words = (f"{gpus} FFN GPUs for {experts} routed experts: {local} per GPU, {spare} slots of replicas"
             if spare else f"{local} routed experts per FFN GPU")
    return {"gpus": gpus, "experts_per_gpu": local, "replica_slots": spare, "words": words}


def step_floor(model, d, args, budget, precision, a) -> dict:
    """The decode step at one request per (attention) GPU, the floor the batch cannot go under, with
    each fixed term named and where its value comes from: the gap per step, the LM head, the MTP
    module, the dense and MoE layers, and the kernels' fixed cost inside them (the step less the same
    step with no fixed cost per kernel)."""
    from dataclasses import replace

    from afdlib.decode.deployment import decode_step
    import numpy as np

    from afdlib.decode.step import DECODE_T_GAP_S
    one = replace(d, requests=1)
    st = decode_step(model, one, args.context, budget, precision, a)
    bare = decode_step(model, one, args.context, budget, precision, replace(a, kernel_overhead_s=0.0))
    ms = 1e3
    given_gap = abs(budget.t_gap_s - DECODE_T_GAP_S) > 1e-12
    per_kernel = a.kernels.fixed_s
    return {"batch_per_gpu": 1, "step_ms": float(st.step_s) * ms, "tpot_ms": float(st.tpot_s) * ms,
            "terms_ms": {"gap": budget.t_gap_s * ms, "lm_head": float(st.lm_head_s) * ms,
                         "mtp": float(np.asarray(st.mtp_s)) * ms,
                         "dense_layers": model.dense_layers * float(st.dense_layer_s) * ms,
                         "moe_layers": float(st.t_layer) * model.moe_layers * ms,
                         "kernels_fixed": float(st.step_s - bare.step_s) * ms},
            "sources": {"gap": "--t-gap-ms" if given_gap else
                        "the decode model's default (afdlib.decode.step.DECODE_T_GAP_S): scheduling, sampling and "
                        "batch preparation, at most the 3 ms Step-3's published figures imply",
                        "lm_head": "the evaluator: the LM head's GEMM over the model's vocabulary at this batch"
                        if model.vocab_size else "none: the model gives no vocab_size, so no LM head is modelled",
                        "mtp": "the evaluator: one MoE layer and an LM head per MTP draft (--mtp)",
                        "dense_layers": "the evaluator: attention and dense FFN of the model's dense layers" + (
                            "; the dense FFN's width assumed K x M + the shared experts' (the model gives no "
                            "dense_intermediate_size)" if model.dense_layers and not model.dense_intermediate_size else ""),
                        "moe_layers": "the evaluator and the schedule of the deployment's micro-batches",
                        "kernels_fixed": f"{per_kernel * 1e6:.2g} us per kernel: " + (
                            "a what-if override" if a.kernel_overhead_s is not None else
                            "the calibrated GEMM fit's intercept (data/kernel_efficiency.yaml fixed_per_kernel)"
                            if a.kernel_profile == "calibrated" else f"the {a.kernel_profile} profile's")}}
