"""afd simulate: the batch-overlap pipeline simulated step by step (bubbles, throughput lost to jitter)."""
from __future__ import annotations

import argparse

from afdlib.cli.options import (
    add_decode_options,
    add_deployment_options,
    bounded_float,
    bounded_int,
    check_design_options,
    check_memory,
    decode_setup,
    deployment_of,
    device,
    dumps,
    given,
    measured_counts,
    refuse_given,
)


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("simulate", help="the batch-overlap pipeline simulated step by step: bubbles and the "
                       "throughput lost to jitter")
    p.add_argument("--model", default=None, help="catalogue slug, or a config.json / .yaml path")
    p.add_argument("--hardware", default=None, help="catalogue slug or .yaml")
    add_deployment_options(p, micro_batches=None, micro_batches_help="micro-batches (default 3 for AFD, 2 for EP)")
    p.add_argument("--cv-ffn", type=bounded_float("--cv-ffn", 0, 10), default=0.0,
                   help="coefficient of variation of the FFN stage time (lognormal; default 0)")
    p.add_argument("--cv-comm", type=bounded_float("--cv-comm", 0, 10), default=0.0,
                   help="coefficient of variation of dispatch + combine (default 0)")
    p.add_argument("--cv-attn", type=bounded_float("--cv-attn", 0, 10), default=0.0,
                   help="coefficient of variation of attention (e.g. varying context; default 0)")
    p.add_argument("--stragglers", choices=("none", "uniform"), default="none",
                   help="FFN stragglers from sampled routing: uniform routing (or --counts: measured loads)")
    p.add_argument("--counts", default=None, help='measured expert loads {"logical_count": [[...E...] x layers]}: '
                   "FFN stragglers sampled from them (EPLB-style placement)")
    p.add_argument("--steps", type=bounded_int("--steps", 1, 10_000_000), default=10_000,
                   help="decode steps simulated (default 10000; at most 5e7 random stage times: steps x layers x "
                   "micro-batches x attention domains, when jittered)")
    p.add_argument("--seed", type=bounded_int("--seed", 0, 2**63 - 1), default=0)
    p.add_argument("--t-attn-us", type=bounded_float("--t-attn-us", 0, 1e9), default=None,
                   help="attention time per micro-batch and layer, us (instead of the decode model)")
    p.add_argument("--t-ffn-us", type=bounded_float("--t-ffn-us", 0, 1e9), default=None)
    p.add_argument("--t-comm-us", type=bounded_float("--t-comm-us", 0, 1e9), default=None,
                   help="dispatch + combine per micro-batch and layer, us")
    p.add_argument("--layers", type=bounded_int("--layers", 1, 10_000), default=None,
                   help="MoE layers, with given stage times (default: the model's; layers x micro-batches x "
                   "attention domains at most 5e5 ops to schedule)")
    add_decode_options(p)
    p.set_defaults(func=run)
    return p


DECODE_MODEL_ONLY = ("hardware", "attn_hardware", "hw_profile", "ep_size", "redundant", "n_attn", "n_ffn",
                     "batch_per_gpu", "context", "slo_ms", "weights", "attention_dtype", "kv_cache", "dispatch", "sigma",
                     "ep_overlap", "afd_overlap", "kernel_profile", "matmul_efficiency")
"""Options that reach the simulation only through the decode model: refused with given stage times."""


STRAGGLER_SAMPLES = 4
"""Routing samples per layer behind the FFN's straggler factors."""


def run(args) -> int:
    import numpy as np

    from afdlib.decode.deployment import decode_step
    from afdlib.errors import AfdError
    from afdlib.inputs.catalog import load_model
    from afdlib.simulation.pipeline import (Jitter, check_draws, check_routed_pairs, simulate, stage_times_of,
                                            straggler_factors)
    given_times = [args.t_attn_us, args.t_ffn_us, args.t_comm_us]
    jittered = bool(args.cv_attn or args.cv_ffn or args.cv_comm or args.stragglers != "none" or args.counts)
    if not jittered:
        refuse_given(args, ("seed",), "seeds the jitter; without --cv-attn, --cv-ffn, --cv-comm, --stragglers or "
                     "--counts nothing is random")
    if args.counts and args.stragglers == "uniform":
        raise AfdError("--counts samples the FFN's stragglers from the measured loads; --stragglers uniform samples "
                       "them from uniform routing: give one")
    if any(v is not None for v in given_times):
        if any(v is None for v in given_times):
            raise AfdError("give all of --t-attn-us, --t-ffn-us and --t-comm-us, or none (stage times from the "
                           "decode model)")
        if args.stragglers != "none" or args.counts:
            raise AfdError("--stragglers and --counts need the decode model (--model, --hardware), not given times")
        refuse_given(args, DECODE_MODEL_ONLY, "sets the decode model's stage times; with --t-attn-us, --t-ffn-us "
                     "and --t-comm-us given it has no effect")
        if not any(given_times):
            raise AfdError("--t-attn-us, --t-ffn-us and --t-comm-us are all 0: a step with no work has no pipeline "
                           "to simulate")
        if args.layers is not None and args.model:
            raise AfdError("with given stage times, give --layers or --model (its MoE layers), not both")
        refuse_given(args, ("model_profile",), "needs --model")
        m = args.micro_batches or (2 if args.design == "ep" else 3)
        layers = args.layers or (load_model(args.model, profile=args.model_profile).moe_layers if args.model else None)
        if layers is None:
            raise AfdError("with given stage times, give --layers or --model")
        check_draws(args.steps if jittered else None, layers, m, domains=args.attention_domains or 1)
        if args.design == "ep":
            refuse_given(args, ("attention_domains",), "is an AFD option; --design ep does not use it")
        st = {"t_attn": args.t_attn_us * 1e-6, "t_ffn": args.t_ffn_us * 1e-6, "t_comm": args.t_comm_us * 1e-6,
              "micro_batches": m, "n_layers": layers, "extra_s": (args.t_gap_ms or 0.0) / 1e3, "l_accept": args.mtp,
              "domains": args.attention_domains or 1}      # the given times are one domain's micro-batch's
        factors = None
    else:
        if not args.model or not args.hardware:
            raise AfdError("give --model and --hardware (stage times from the decode model), or --t-attn-us, "
                           "--t-ffn-us, --t-comm-us")
        refuse_given(args, ("layers",), "sets the layers of given stage times; the decode model takes the model's")
        check_design_options(args)
        refuse_given(args, ("ep_overlap", "afd_overlap"), "is a what-if of the decode model's overlap (afd throughput, "
                     "afd advise); the simulation schedules the stages itself, so the overlap is its result")
        model = load_model(args.model, profile=args.model_profile)
        hw = device(args, args.hardware)
        check_draws(args.steps if jittered else None, model.moe_layers,   # the work bounded before anything runs
                    args.micro_batches or (2 if args.design == "ep" else 3), domains=args.attention_domains or 1)
        precision, a, budget = decode_setup(args, model)   # --counts checked against the model's experts
        d = deployment_of(args, model, hw)    # EP size against experts, --sigma against the FFN GPUs
        step = decode_step(model, d, args.context, budget, precision, a)
        check_memory(args, step, a)
        st = stage_times_of(step, args.design, model.moe_layers)
        factors = None
        if args.counts and args.stragglers == "none" and given(args, "stragglers"):
            raise AfdError("--counts samples the FFN's stragglers from the measured loads; --stragglers none "
                           "contradicts it (leave --stragglers out)")
        if args.stragglers != "none" or args.counts:
            from afdlib.routing.measured import moe_layers
            if args.counts:
                counts = measured_counts(args.counts, model)
                popularity = counts[moe_layers(counts)]
            else:
                popularity = np.ones((min(model.moe_layers, 16), model.routed_experts))
            # tokens of one micro-batch over all attention GPUs (EP: every GPU), spread over the FFN GPUs
            attn_gpus, ffn_gpus, redundant = ((d.ep_size, d.ep_size, d.redundant) if d.design == "ep"
                                              else (d.attention.gpus, d.ffn.gpus, 0))
            tokens = int(round(float(step.requests) / d.micro_batches * st["l_accept"] * attn_gpus))
            check_routed_pairs(max(tokens, 1), model.experts_per_token, popularity.shape[0], STRAGGLER_SAMPLES)
            factors = straggler_factors(popularity, max(tokens, 1), ffn_gpus, model.experts_per_token,
                                        redundant, samples=STRAGGLER_SAMPLES, seed=args.seed)
    jitter = Jitter(cv_attn=args.cv_attn, cv_ffn=args.cv_ffn, cv_comm=args.cv_comm, ffn_factors=factors)
    sim = simulate(args.design if args.design == "ep" else "afd", st["t_attn"], st["t_ffn"], st["t_comm"],
                   st["micro_batches"], st["n_layers"], args.steps, jitter, args.seed, st["extra_s"],
                   domains=st.get("domains", 1))
    ms = 1e3 / st["l_accept"]
    doc = {"tpot_ms": float(sim.step_s) * ms, "bubble_attn": float(sim.bubble_attn),
           "bubble_ffn": float(sim.bubble_ffn), "throughput_loss": float(sim.throughput_loss),
           "tpot_ms_no_jitter": float(sim.step_const_s) * ms, "p99_tpot_ms": float(sim.p99_step_s) * ms if args.steps >= P99_STEPS else None,
           "bubble_attn_no_jitter": float(sim.bubble_attn_const), "bubble_ffn_no_jitter": float(sim.bubble_ffn_const),
           "design": args.design, "micro_batches": st["micro_batches"], "layers": st["n_layers"],
           "stage_us": {"attention": st["t_attn"] * 1e6, "ffn": st["t_ffn"] * 1e6, "comm": st["t_comm"] * 1e6},
           "rest_of_step_ms": st["extra_s"] * 1e3, "steps": args.steps, "seed": args.seed,
           "ffn_straggler_cv": None if factors is None else float(np.std(factors / factors.mean(axis=1, keepdims=True)))}
    if args.model:          # the decode model's batch met the SLO; the simulated step may not
        doc |= {"slo_ms": args.slo_ms, "meets_slo": bool(doc["tpot_ms"] <= args.slo_ms * (1 + 1e-9))}
    text = dumps(doc)   # every number printed, as text or JSON, is finite (else one line, status 2)
    if args.json:
        print(text)
        return 0
    domains = f"{st['domains']} attention domains x " if st.get("domains", 1) > 1 else ""
    print(f"{args.design.upper()}, {domains}{st['micro_batches']} micro-batches, {st['n_layers']} MoE layers; per micro-batch "
          f"attention {doc['stage_us']['attention']:.0f} us, FFN {doc['stage_us']['ffn']:.0f} us, "
          f"dispatch+combine {doc['stage_us']['comm']:.0f} us")
    p99 = (f"p99 {doc['p99_tpot_ms']:.2f}" if doc["p99_tpot_ms"] is not None else
           f"no p99 from fewer than {P99_STEPS} steps")
    print(f"TPOT {doc['tpot_ms']:.2f} ms (no jitter {doc['tpot_ms_no_jitter']:.2f} ms, {p99}); "
          f"{loss_words(doc['throughput_loss'], args.steps)}; bubbles: attention {doc['bubble_attn']:.1%}, "
          f"FFN {doc['bubble_ffn']:.1%} ({args.steps} steps, seed {args.seed})")
    if doc.get("meets_slo") is False:
        print(f"the simulated TPOT is over the {args.slo_ms:g} ms SLO"
              + (" (--batch-per-gpu is simulated as given)" if args.batch_per_gpu is not None else
                 " (the batch meets it in the decode model's step)"))
    return 0


P99_STEPS = 100
"""Fewest simulated steps a 99th percentile of the step time is reported from (below, one of them is it)."""


def loss_words(loss: float, steps: int) -> str:
    """The throughput lost to jitter in words; a negative loss (the jittered run a little faster than the
    jitter-free one) is sampling noise, since mean-one noise cannot gain on average, and says so."""
    if loss >= 0:
        return f"throughput loss {loss:.1%}"
    return f"throughput loss {loss:.1%} (a gain within the sampling noise of {steps:,} steps: mean-one jitter cannot gain on average)"
