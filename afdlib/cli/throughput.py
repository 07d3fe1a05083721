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
    dumps,
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

    from afdlib.decode.deployment import decode_step
    from afdlib.decode.step import bound_names
    from afdlib.inputs.catalog import load_hardware, load_model
    if args.design == "ep":  # options that set only an AFD deployment (checked before anything loads)
        refuse_given(args, ("micro_batches",), "sets AFD's micro-batches; EP's are --ep-micro-batches")
        refuse_given(args, ("gpus_per_node",), "sets the size of an AFD node (the unit of --n-attn and --n-ffn); "
                     "EP's all-to-all spans the hardware's scale-up domain, which it does not change")
    model = load_model(args.model, profile=args.model_profile)
    hw = load_hardware(args.hardware, profile=args.hw_profile)
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
           "design": args.design, "weights": {"dtype": precision.weights, "from": weights_from},
           "breakdown": breakdown}
    text = dumps(doc)   # every number printed, as text or JSON, is finite (else one line, status 2)
    if args.json:
        print(text)
        return 0
    where = (f"EP{args.ep_size} (+{args.redundant} redundant)" if args.design == "ep" else
             f"AFD {d.label} ({d.attention.hardware.name} / {hw.name}, {d.micro_batches} micro-batches)")
    print(f"{model.name} on {hw.name} ({hw.profile}), {where}, {gpus} GPUs, context {args.context:g}, "
          f"MTP L_accept {args.mtp:g}, t_g {budget.t_gap_s * ms:g} ms; weights {precision.weights} ({weights_from})")
    how = "given" if args.batch_per_gpu is not None else f"largest meeting {args.slo_ms:g} ms and memory"
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
    return 0
