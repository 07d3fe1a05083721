"""The ``afd`` command: the paper's models from the shell, every subcommand with ``--json``.

Imports are deferred into each subcommand so that a number comes back in well under a second
(no plotting or notebook machinery unless ``afd book`` is asked for). User mistakes print one
line ``afd: error: ...`` and exit 2; no traceback.
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Callable, Sequence


MAX_NODES = 100_000
"""Largest node count the command accepts (N_F, N_A): beyond any cluster, and every grid stays small."""
MAX_POINTS = 100_000
"""Most N_F values one command evaluates."""
MAX_BALANCE_RANKS = 65_536
MAX_BALANCE_TOKENS = 10_000_000
"""afd balance: at most 64Ki ranks or replicas, 10^7 tokens per sampled batch (about 8 s each)."""


def _n_ffn_list(text: str) -> list[int]:
    """'1..64', '1,2,4' or '8' -> a list of positive integers (at most MAX_POINTS, each <= MAX_NODES)."""
    out: list[int] = []
    try:
        for part in text.split(","):
            part = part.strip()
            if ".." in part:
                lo, hi = (int(x) for x in part.split(".."))
                if hi < lo:
                    raise ValueError
                if lo >= 1 and hi <= MAX_NODES:
                    out.extend(range(lo, hi + 1))
                else:
                    out.extend((lo, hi))  # checked below
            else:
                out.append(int(part))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected N, A..B or a comma list, got '{text}'") from None
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"FFN node counts must be >= 1, got '{text}'")
    if max(out) > MAX_NODES:
        raise argparse.ArgumentTypeError(f"FFN node counts must be <= {MAX_NODES:,}, got '{text}'")
    if len(out) > MAX_POINTS:
        raise argparse.ArgumentTypeError(f"at most {MAX_POINTS:,} values, got {len(out):,}")
    return out


def _finite_float(text: str, zero_allowed: bool) -> float:
    """A finite number > 0 (or >= 0 where zero is allowed), with a one-line reason otherwise."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: '{text}'") from None
    if not (v < float("inf") and (v >= 0 if zero_allowed else v > 0)):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}" if zero_allowed
                                         else f"must be a finite positive number, got {text}")
    return v


def _positive_float(text: str) -> float:
    return _finite_float(text, zero_allowed=False)


def _nonnegative_float(text: str) -> float:
    return _finite_float(text, zero_allowed=True)


def _fraction(text: str) -> float:
    v = _positive_float(text)
    if v > 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text}")
    return v


def _add_system_args(p: argparse.ArgumentParser, model: bool = True) -> None:
    if model:
        p.add_argument("--model", required=True, help="catalogue slug, or a config.json / .yaml path")
        p.add_argument("--model-profile", default="paper", choices=("paper", "reference"),
                       help="paper: Table 4 values where they differ (default)")
    p.add_argument("--hardware", required=True, help="catalogue slug, or a .yaml path")
    p.add_argument("--hw-profile", default="paper", choices=("paper", "datasheet"),
                   help="paper: Table 5 sustained values (default); datasheet: spec x efficiency")
    p.add_argument("--gpus-per-node", type=int, default=None, help="override g (default: catalogue)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _system(args) -> tuple:
    from afdlib.inputs.catalog import load_hardware, load_model
    from afdlib.errors import AfdError
    hw = load_hardware(args.hardware, profile=args.hw_profile)
    if args.gpus_per_node is not None:
        if not 1 <= args.gpus_per_node <= 4096:
            raise AfdError(f"--gpus-per-node must be in 1..4096, got {args.gpus_per_node}")
        hw = hw.with_overrides(gpus_per_node=args.gpus_per_node)
    model = load_model(args.model, profile=args.model_profile) if hasattr(args, "model") else None
    return model, hw


def _print_table(rows: list[dict], columns: Sequence[str], fmt: dict[str, str] | None = None) -> None:
    fmt = fmt or {}
    cells = [["-" if r[c] is None else r[c] if isinstance(r[c], str) else format(r[c], fmt.get(c, "")) for c in columns]
             for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.rjust(w) for c, w in zip(columns, widths)))
    for row in cells:
        print("  ".join(v.rjust(w) for v, w in zip(row, widths)))


# ----------------------------------------------------------------------------- subcommands

def cmd_catalog(args) -> int:
    from afdlib.inputs.catalog import load_catalog, to_record
    hw, models = load_catalog(profile=args.hw_profile)
    if args.json:
        print(_dumps({"hardware": {k: to_record(v) for k, v in hw.items()},
                          "models": {k: to_record(v) for k, v in models.items()}}, indent=1))
        return 0
    from afdlib.inputs.catalog import hardware_row, model_row
    print(f"Hardware (profile {args.hw_profile}; per GPU, per direction; sources: afd catalog --json)")
    _print_table([hardware_row(h) for h in hw.values()],
                 ["slug", "profile", "peak_tflops", "dtype", "bf16_tflops", "hbm_tb_per_s", "hbm_gb", "scale_up_gb_per_s",
                  "scale_out_gb_per_s", "gpus_per_node", "name"],
                 {"peak_tflops": ".0f", "bf16_tflops": ".0f", "hbm_tb_per_s": ".2f", "hbm_gb": ".0f", "scale_up_gb_per_s": ".0f",
                  "scale_out_gb_per_s": ".0f"})
    print("\nModels")
    _print_table([model_row(m) for m in models.values()],
                 ["slug", "hidden_size", "moe_intermediate_size", "num_layers", "moe_layers", "routed_experts",
                  "experts_per_token", "granularity_h_over_m", "sparsity_e_over_k", "name"],
                 {"granularity_h_over_m": ".2f", "sparsity_e_over_k": ".1f"})
    return 0


def cmd_intensity(args) -> int:
    from afdlib.analysis.intensity import intensity_sweep, regime_borders
    model, hw = _system(args)
    cols = intensity_sweep(model, hw, args.n_ffn)
    rows = [{"n_ffn": int(n), "local_experts": int(g), "intensity": round(float(i), 6),
             "intensity_continuous": round(float(c), 6), "regime": str(r)}
            for n, g, i, c, r in zip(*cols.values())]
    if args.json:
        print(_dumps(rows))
        return 0
    borders = regime_borders(model.experts_per_token, model.routed_experts, hw.bandwidth_ratio, hw.gpus_per_node)
    print(f"{model.name} on {hw.name} ({hw.profile}): K={model.experts_per_token}, E={model.routed_experts}, "
          f"g={hw.gpus_per_node}, r=BW_up/BW_out={hw.bandwidth_ratio:.2f}; intensity normalised to B_out = 1")
    print("regimes start at N_F = " + ", ".join(f"{k} {v:g}" for k, v in borders.items()))
    _print_table(rows, list(rows[0]), {"intensity": ".3f", "intensity_continuous": ".3f"})
    return 0


def _budget_args(p: argparse.ArgumentParser, defaults=None) -> None:
    """--slo-ms, --l-accept, --t-gap-ms; defaults from :class:`afdlib.inputs.specs.Budget` (or ``defaults``)."""
    from afdlib.inputs.specs import Budget
    b = defaults or Budget()
    p.add_argument("--slo-ms", type=_positive_float, default=b.slo_s * 1e3,
                   help=f"per-token latency SLO, ms (default {b.slo_s * 1e3:g})")
    p.add_argument("--l-accept", type=_positive_float, default=b.l_accept,
                   help=f"accepted tokens per step (MTP; default {b.l_accept:g})")
    p.add_argument("--t-gap-ms", type=_nonnegative_float, default=b.t_gap_s * 1e3,
                   help=f"fixed gap per step t_g, ms (default {b.t_gap_s * 1e3:g})")


def _budget(args, micro_batches: int | None = None):
    from afdlib.inputs.specs import Budget
    kw = {} if micro_batches is None else {"micro_batches": micro_batches}
    return Budget(slo_s=args.slo_ms / 1e3, l_accept=args.l_accept, t_gap_s=args.t_gap_ms / 1e3, **kw)


def cmd_hfu(args) -> int:
    from afdlib.analysis.hfu import hfu_sweep
    model, hw = _system(args)
    res, summary = hfu_sweep(model, hw, args.n_ffn, _budget(args), hbm_usable_fraction=args.hbm_fraction,
                             ofu=args.ofu)
    from afdlib.analysis.hfu import failed_rules
    rows = [{"n_ffn": int(n), "hfu": round(float(h), 6), "limit": str(lim), "feasible": bool(f),
             "fails": failed_rules(x)}
            for n, h, lim, f, x in zip(args.n_ffn, res["hfu"], res["limit"], res["feasible"], res["fails"])]
    doc = {"rows": rows, "max_hfu": None if summary.max_hfu is None else round(summary.max_hfu, 6),
           "best_n_ffn": summary.best_n_ffn, "dead_zone_floor": round(summary.dead_zone_floor, 6)}
    if args.json:
        print(_dumps(doc))
        return 0
    t_b = float(res["t_b"].flat[0])
    print(f"{model.name} on {hw.name} ({hw.profile}): SLO {args.slo_ms:g} ms, L_accept {args.l_accept:g}, "
          f"t_g {args.t_gap_ms:g} ms -> t_B = {t_b * 1e3:.4f} ms per layer and stage")
    best = "none feasible" if summary.max_hfu is None else f"{summary.max_hfu:.1%} at N_F = {summary.best_n_ffn}"
    print(f"max HFU upper bound: {best}; dead-zone floor (N_F >= K = {model.experts_per_token}): "
          f"{summary.dead_zone_floor:.1%}")
    _print_table([{**r, "hfu": f"{r['hfu']:.1%}", "feasible": "yes" if r["feasible"] else "no",
                   "fails": ", ".join(r["fails"]) or "-"} for r in rows],
                 ["n_ffn", "hfu", "limit", "feasible", "fails"])
    return 0


def cmd_penalty(args) -> int:
    from afdlib.analysis.imbalance import alpha_afd, alpha_dp_afd, alpha_dp_ep, alpha_ep
    lam = args.lambda_ep if args.lambda_ep is not None else args.n_attn / args.n_ffn
    afd = alpha_afd(args.sigma, args.n_attn, args.n_ffn)
    doc = {"alpha_ep": round(float(alpha_ep(args.sigma, lam)), 6), "alpha_afd": round(float(afd.alpha), 6),
           "alpha_afd_exact": round(float(afd.exact), 6), "rounding": str(afd.rounding)}
    if args.json:
        print(_dumps(doc))
        return 0
    print(f"sigma = {args.sigma:g}, N_A = {args.n_attn}, N_F = {args.n_ffn} (lambda_AFD = {args.n_attn / args.n_ffn:g}),"
          f" lambda_EP = t_a / t_f = {lam:g}")
    print(f"EP imbalance:  alpha_EP = {doc['alpha_ep']:.4f}   alpha_AFD = {doc['alpha_afd']:.4f} "
          f"({doc['rounding']}; exact {doc['alpha_afd_exact']:.4f}, floor {float(afd.floor):.4f}, "
          f"ceil {float(afd.ceil):.4f})")
    print(f"DP imbalance:  alpha_EP = {float(alpha_dp_ep(args.sigma, lam)):.4f} (batch regrown)   "
          f"alpha_AFD = {float(alpha_dp_afd(args.sigma)):.4f}")
    return 0


def cmd_balance(args) -> int:
    from afdlib.routing.balance import balance_report
    from afdlib.routing.measured import load_counts
    from afdlib.errors import AfdError
    counts = load_counts(args.counts)
    if args.tokens is not None and args.top_k > counts.shape[1]:
        raise AfdError(f"--top-k ({args.top_k}) exceeds the experts in the file ({counts.shape[1]})")
    rep = balance_report(counts, args.ranks, args.redundant, tokens=args.tokens, experts_per_token=args.top_k,
                         trials=args.trials, seed=args.seed)
    doc = {"median_contiguous": round(rep.median_contiguous, 6), "median_redundant": round(rep.median_redundant, 6),
           "layers": [{"layer": int(la), "contiguous": round(float(c), 6), "redundant": round(float(r), 6)}
                      for la, c, r in zip(rep.layers, rep.contiguous, rep.redundant)]}
    if args.json:
        print(_dumps(doc))
        return 0
    what = "long-run counts" if args.tokens is None else f"batches of {args.tokens} tokens (median of {args.trials})"
    print(f"{args.counts}: {len(rep.layers)} MoE layers x {counts.shape[1]} experts on {args.ranks} ranks, {what}")
    print(f"balancedness (mean/max), median over layers: contiguous {rep.median_contiguous:.3f} "
          f"(max/mean {1 / rep.median_contiguous:.2f}); placement with {args.redundant} redundant "
          f"{rep.median_redundant:.3f} (max/mean {1 / rep.median_redundant:.2f})")
    return 0


def _bounded_int(name: str, lo: int, hi: int):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got '{text}'") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{name} must be in {lo}..{hi}, got {v}")
        return v
    return parse


def _bounded_float(name: str, lo: float, hi: float, lo_open: bool = False):
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got '{text}'") from None
        if not (v > lo if lo_open else v >= lo) or not v <= hi:
            raise argparse.ArgumentTypeError(f"{name} must be in {'(' if lo_open else '['}{lo:g}, {hi:g}], got {text}")
        return v
    return parse


def cmd_throughput(args) -> int:
    import numpy as np

    from afdlib.inputs.catalog import load_hardware, load_model
    from dataclasses import replace

    from afdlib.decode.step import afd_step, best_batch, bound_names, ep_step
    from afdlib.errors import AfdError
    model = load_model(args.model, profile=args.model_profile)
    hw = load_hardware(args.hardware, profile=args.hw_profile)
    if args.gpus_per_node is not None:
        hw = hw.with_overrides(gpus_per_node=args.gpus_per_node)
    precision, a, budget = _decode_setup(args)
    a = replace(a, all_to_all=args.all_to_all, ep_micro_batches=args.ep_micro_batches)
    budget = replace(budget, micro_batches=args.micro_batches)
    if args.design == "ep":
        if args.ep_size is None:
            raise AfdError("--design ep needs --ep-size (GPUs in the EP group)")
        if args.ep_size > model.routed_experts + args.redundant:
            raise AfdError(f"--ep-size ({args.ep_size}) exceeds the routed + redundant experts "
                           f"({model.routed_experts} + {args.redundant}): every GPU must hold an expert")
        gpus = args.ep_size
        step_of = lambda r: ep_step(model, hw, args.ep_size, r, args.context, budget, precision, a, args.redundant)  # noqa: E731
        attn_hw = hw
    else:
        if args.n_attn is None or args.n_ffn is None:
            raise AfdError("--design afd needs --n-attn and --n-ffn (nodes)")
        attn_hw = hw if args.attn_hardware is None else load_hardware(args.attn_hardware, profile=args.hw_profile)
        gpus = args.n_attn * attn_hw.gpus_per_node + args.n_ffn * hw.gpus_per_node
        step_of = lambda r: afd_step(model, attn_hw, hw, args.n_attn, args.n_ffn, r, args.context, budget,  # noqa: E731
                                     precision, a)
    if args.batch_per_gpu is not None:
        st = step_of(np.array(float(args.batch_per_gpu)))
        if not bool(st.fits_memory):
            raise AfdError(f"{args.batch_per_gpu} requests per GPU at context {args.context:g} do not fit in memory "
                           f"({float(st.memory_bytes) / 1e9:.1f} GB needed, "
                           f"{a.hbm_usable_fraction:.0%} of HBM usable)")
    else:
        st = best_batch(step_of, budget.slo_s)[1]
    ms, us = 1e3, 1e6
    breakdown = {
        "attention_us": float(st.t_attn) * us, "ffn_us": float(st.t_ffn) * us, "comm_us": float(st.t_comm) * us,
        "moe_layer_us": float(st.t_layer) * us, "bound": {"attention": str(bound_names(st.bound_attn)),
                                                         "ffn": str(bound_names(st.bound_ffn)),
                                                         "comm": str(bound_names(st.bound_comm))},
        "per": "micro-batch" if args.design == "afd" else "layer (all micro-batches)",
        "sigma": float(st.sigma), "dense_layer_us": float(st.dense_layer_s) * us,
        "lm_head_us": float(st.lm_head_s) * us, "mtp_us": float(np.asarray(st.mtp_s)) * us,
        "t_gap_ms": budget.t_gap_s * ms, "memory_gb": float(st.memory_bytes) / 1e9, "fits_memory": bool(st.fits_memory),
    }
    if args.design == "afd":
        breakdown.update({k: bool(getattr(st.afd, k)) for k in ("no_attention_bubble", "no_ffn_bubble")})
        breakdown.update({k: float(getattr(st.afd, k)) for k in ("bubble_attn", "bubble_ffn")})
    doc = {"tokens_per_s_per_gpu": float(st.tokens_per_s_per_gpu), "tpot_ms": float(st.tpot_s) * ms,
           "batch_per_gpu": int(st.requests), "step_ms": float(st.step_s) * ms, "gpus": int(gpus),
           "design": args.design, "breakdown": breakdown}
    if args.json:
        print(_dumps(doc))
        return 0
    where = (f"EP{args.ep_size} (+{args.redundant} redundant)" if args.design == "ep" else
             f"AFD {args.n_attn}A{args.n_ffn}F ({attn_hw.name} / {hw.name}, {args.micro_batches} micro-batches)")
    print(f"{model.name} on {hw.name} ({hw.profile}), {where}, {gpus} GPUs, context {args.context:g}, "
          f"MTP L_accept {args.mtp:g}, t_g {budget.t_gap_s * ms:g} ms")
    how = "given" if args.batch_per_gpu is not None else f"largest meeting {args.slo_ms:g} ms and memory"
    print(f"{doc['tokens_per_s_per_gpu']:,.0f} output tokens/s per GPU at {doc['batch_per_gpu']} requests per "
          f"{'attention ' if args.design == 'afd' else ''}GPU ({how}); TPOT {doc['tpot_ms']:.1f} ms")
    b = breakdown
    print(f"per MoE {b['per']}: attention {b['attention_us']:.0f} us ({b['bound']['attention']}), "
          f"FFN {b['ffn_us']:.0f} us ({b['bound']['ffn']}), dispatch+combine {b['comm_us']:.0f} us "
          f"({b['bound']['comm']}); layer {b['moe_layer_us']:.0f} us; sigma {b['sigma']:.3f}; "
          f"memory {b['memory_gb']:.1f} GB per GPU")
    return 0


def cmd_simulate(args) -> int:
    import numpy as np
    from dataclasses import replace

    from afdlib.inputs.catalog import load_hardware, load_model
    from afdlib.decode.step import afd_step, best_batch, ep_step
    from afdlib.errors import AfdError
    from afdlib.simulation.pipeline import Jitter, simulate, stage_times_of, straggler_factors
    given = [args.t_attn_us, args.t_ffn_us, args.t_comm_us]
    if any(v is not None for v in given):
        if any(v is None for v in given):
            raise AfdError("give all of --t-attn-us, --t-ffn-us and --t-comm-us, or none (stage times from the "
                           "decode model)")
        if args.stragglers != "none" or args.counts:
            raise AfdError("--stragglers and --counts need the decode model (--model, --hardware), not given times")
        m = args.micro_batches or (2 if args.design == "ep" else 3)
        layers = args.layers or (load_model(args.model, profile=args.model_profile).moe_layers if args.model else None)
        if layers is None:
            raise AfdError("with given stage times, give --layers or --model")
        st = {"t_attn": args.t_attn_us * 1e-6, "t_ffn": args.t_ffn_us * 1e-6, "t_comm": args.t_comm_us * 1e-6,
              "micro_batches": m, "n_layers": layers, "extra_s": (args.t_gap_ms or 0.0) / 1e3, "l_accept": args.mtp}
        factors = None
    else:
        if not args.model or not args.hardware:
            raise AfdError("give --model and --hardware (stage times from the decode model), or --t-attn-us, "
                           "--t-ffn-us, --t-comm-us")
        model = load_model(args.model, profile=args.model_profile)
        hw = load_hardware(args.hardware, profile=args.hw_profile)
        precision, a, budget = _decode_setup(args)
        if args.design == "ep":
            if args.ep_size is None:
                raise AfdError("--design ep needs --ep-size (GPUs in the EP group)")
            m = args.micro_batches or 2
            a = replace(a, ep_micro_batches=m)
            step_of = lambda r: ep_step(model, hw, args.ep_size, r, args.context, budget, precision, a,  # noqa: E731
                                        args.redundant)
            attn_gpus, ffn_gpus, redundant = args.ep_size, args.ep_size, args.redundant
        else:
            if args.n_attn is None or args.n_ffn is None:
                raise AfdError("--design afd needs --n-attn and --n-ffn (nodes)")
            m = args.micro_batches or 3
            budget = replace(budget, micro_batches=m)
            step_of = lambda r: afd_step(model, hw, hw, args.n_attn, args.n_ffn, r, args.context, budget,  # noqa: E731
                                         precision, a)
            attn_gpus, ffn_gpus, redundant = args.n_attn * hw.gpus_per_node, args.n_ffn * hw.gpus_per_node, 0
        if args.batch_per_gpu is not None:
            step = step_of(np.array(float(args.batch_per_gpu)))
        else:
            step = best_batch(step_of, budget.slo_s)[1]
        st = stage_times_of(step, args.design, model.moe_layers)
        factors = None
        if args.stragglers != "none" or args.counts:
            from afdlib.routing.measured import load_counts, moe_layers
            if args.counts:
                counts = load_counts(args.counts)
                popularity = counts[moe_layers(counts)]
                if popularity.shape[1] != model.routed_experts:
                    raise AfdError(f"{args.counts}: {popularity.shape[1]} experts per layer, the model has "
                                   f"{model.routed_experts}")
            else:
                popularity = np.ones((min(model.moe_layers, 16), model.routed_experts))
            tokens = int(round(float(step.requests) / m * st["l_accept"] * attn_gpus)) if args.design == "afd" else \
                int(round(float(step.requests) / m * st["l_accept"] * args.ep_size))
            factors = straggler_factors(popularity, max(tokens, 1), ffn_gpus, model.experts_per_token,
                                        redundant, samples=4, seed=args.seed)
    jitter = Jitter(cv_attn=args.cv_attn, cv_ffn=args.cv_ffn, cv_comm=args.cv_comm, ffn_factors=factors)
    sim = simulate(args.design if args.design == "ep" else "afd", st["t_attn"], st["t_ffn"], st["t_comm"],
                   st["micro_batches"], st["n_layers"], args.steps, jitter, args.seed, st["extra_s"])
    ms = 1e3 / st["l_accept"]
    doc = {"tpot_ms": float(sim.step_s) * ms, "bubble_attn": float(sim.bubble_attn),
           "bubble_ffn": float(sim.bubble_ffn), "throughput_loss": float(sim.throughput_loss),
           "tpot_ms_no_jitter": float(sim.step_const_s) * ms, "p99_tpot_ms": float(sim.p99_step_s) * ms,
           "bubble_attn_no_jitter": float(sim.bubble_attn_const), "bubble_ffn_no_jitter": float(sim.bubble_ffn_const),
           "design": args.design, "micro_batches": st["micro_batches"], "layers": st["n_layers"],
           "stage_us": {"attention": st["t_attn"] * 1e6, "ffn": st["t_ffn"] * 1e6, "comm": st["t_comm"] * 1e6},
           "rest_of_step_ms": st["extra_s"] * 1e3, "steps": args.steps, "seed": args.seed,
           "ffn_straggler_cv": None if factors is None else float(np.std(factors / factors.mean(axis=1, keepdims=True)))}
    if args.json:
        print(_dumps(doc))
        return 0
    print(f"{args.design.upper()}, {st['micro_batches']} micro-batches, {st['n_layers']} MoE layers; per micro-batch "
          f"attention {doc['stage_us']['attention']:.0f} us, FFN {doc['stage_us']['ffn']:.0f} us, "
          f"dispatch+combine {doc['stage_us']['comm']:.0f} us")
    print(f"TPOT {doc['tpot_ms']:.2f} ms (no jitter {doc['tpot_ms_no_jitter']:.2f} ms, p99 {doc['p99_tpot_ms']:.2f}); "
          f"throughput loss {doc['throughput_loss']:.1%}; bubbles: attention {doc['bubble_attn']:.1%}, "
          f"FFN {doc['bubble_ffn']:.1%} ({args.steps} steps, seed {args.seed})")
    return 0


def _decode_setup(args):
    """(precision, assumptions, budget) from the options shared by throughput and advise."""
    from afdlib.decode.step import DECODE_T_GAP_S, Assumptions
    from afdlib.inputs.specs import Budget, Precision
    precision = Precision(weights=args.weights, attention=args.attention_dtype or args.weights,
                          kv_cache=args.kv_cache)
    skew = None
    if getattr(args, "counts", None):
        from afdlib.routing.balance import placement_skew
        from afdlib.routing.measured import load_counts
        from afdlib.errors import AfdError
        if args.sigma is not None:
            raise AfdError("give --sigma or --counts, not both")
        skew = placement_skew(load_counts(args.counts))
    a = Assumptions(ep_overlap=args.ep_overlap, afd_overlap=args.afd_overlap, sigma=args.sigma,
                    matmul_efficiency=args.matmul_efficiency, skew=skew)
    t_gap_s = DECODE_T_GAP_S if args.t_gap_ms is None else args.t_gap_ms / 1e3
    budget = Budget(slo_s=args.slo_ms / 1e3, l_accept=args.mtp, t_gap_s=t_gap_s)
    return precision, a, budget


def cmd_advise(args) -> int:
    import time

    from afdlib.decode.advise import advise, parse_prices
    from afdlib.inputs.catalog import hardware_names, load_hardware, load_model, model_names
    from afdlib.errors import AfdError
    prices = parse_prices(args.price_per_gpu_hour)
    precision, a, budget = _decode_setup(args)
    if args.all:
        pairs = [(m, h) for m in model_names() for h in hardware_names()]
    else:
        if not args.model or not args.hardware:
            raise AfdError("give --model and --hardware, or --all")
        pairs = [(args.model, args.hardware)]
    results = []
    for m_name, h_name in pairs:
        t0 = time.perf_counter()
        model = load_model(m_name, profile=args.model_profile)
        hw = load_hardware(h_name, profile=args.hw_profile)
        attn = None if args.attn_hardware is None else load_hardware(args.attn_hardware, profile=args.hw_profile)
        try:
            adv = advise(model, hw, budget, args.context, precision, a, attn, prices, explain=not args.all)
        except AfdError as e:
            if not args.all:
                raise
            results.append({"model": model.slug, "hardware": hw.slug, "error": str(e)})
            if not args.json:
                print(f"{model.slug:18s} {hw.slug:12s} -   {e}", flush=True)
            continue
        doc = {"model": model.slug, "hardware": hw.slug, **adv.to_json(),
               "seconds": round(time.perf_counter() - t0, 3)}
        results.append(doc)
        if args.all and not args.json:
            ratio = "  EP -" if adv.ratio is None else f"{adv.ratio:5.2f}"
            print(f"{model.slug:18s} {hw.slug:12s} {adv.recommendation:3s}{' ' if adv.decisive else '?'} "
                  f"ratio {ratio}  "
                  f"EP {adv.ep.get('tokens_per_s_per_gpu', 0):8,.0f}  AFD {adv.afd.get('tokens_per_s_per_gpu', 0):8,.0f}"
                  " tokens/s per GPU", flush=True)
    if args.json:
        print(_dumps(results if args.all else results[0]))
        return 0
    if args.all:
        return 0
    doc = results[0]
    print(f"{doc['model']} on {doc['hardware']} ({args.hw_profile}), SLO {args.slo_ms:g} ms, context {args.context:g}, "
          f"MTP {args.mtp:g}: {doc['recommendation']} ("
          + ("EP has no feasible deployment" if doc["ratio"] is None else
             f"AFD / EP tokens/s per GPU = {doc['ratio']:.2f}{'' if doc['decisive'] else ', a close call'}")
          + ")")
    rows = []
    for name in ("ep", "afd"):
        d = doc[name]
        if not d.get("feasible"):
            rows.append({"design": name.upper(), "config": "none feasible", "tokens/s/GPU": None, "TPOT ms": None,
                         "batch": None, "GPUs": None})
            continue
        cfg = (f"EP{d['ep_size']}+{d['redundant']} ({d['kernels']})" if name == "ep"
               else f"{d['n_attn']}A{d['n_ffn']}F, {d['micro_batches']} micro-batches")
        rows.append({"design": name.upper(), "config": cfg, "tokens/s/GPU": d["tokens_per_s_per_gpu"],
                     "TPOT ms": d["tpot_ms"], "batch": float(d["batch_per_gpu"]), "GPUs": float(d["gpus"])})
    _print_table(rows, ["design", "config", "tokens/s/GPU", "TPOT ms", "batch", "GPUs"],
                 {"tokens/s/GPU": ",.0f", "TPOT ms": ".1f", "batch": ".0f", "GPUs": ".0f"})
    print("\nwhy:")
    for r in doc["reasons"]:
        print(f"- {r}")
    return 0


def _deployment_options(p: argparse.ArgumentParser, micro_batches: int | None, micro_batches_help: str) -> None:
    """The design and its deployment (EP size and replicas, or N_A and N_F; micro-batches; batch),
    shared by `afd throughput` and `afd simulate`."""
    p.add_argument("--design", required=True, choices=("ep", "afd"))
    p.add_argument("--ep-size", type=_bounded_int("--ep-size", 1, 1_000_000), default=None, help="EP: GPUs")
    p.add_argument("--redundant", type=_bounded_int("--redundant", 0, 1_000_000), default=0,
                   help="EP: redundant expert replicas (default 0)")
    p.add_argument("--n-attn", type=_bounded_int("--n-attn", 1, MAX_NODES), default=None, help="AFD: attention nodes")
    p.add_argument("--n-ffn", type=_bounded_int("--n-ffn", 1, MAX_NODES), default=None, help="AFD: FFN nodes")
    p.add_argument("--micro-batches", type=_bounded_int("--micro-batches", 1, 64), default=micro_batches,
                   help=micro_batches_help)
    p.add_argument("--batch-per-gpu", type=_bounded_int("--batch-per-gpu", 1, 1_000_000), default=None,
                   help="requests per (attention) GPU; default: the largest meeting the SLO and memory")


def _decode_options(p: argparse.ArgumentParser) -> None:
    from afdlib.decode.step import Assumptions
    from afdlib.inputs.specs import Budget
    p.add_argument("--model-profile", default="reference", choices=("paper", "reference"))
    p.add_argument("--attn-hardware", default=None, help="AFD attention pool, if other than --hardware")
    p.add_argument("--hw-profile", default="datasheet", choices=("paper", "datasheet"),
                   help="datasheet (default): spec x efficiency; paper: Table 5")
    p.add_argument("--context", type=_bounded_float("--context", 0, 1e7), default=4096.0,
                   help="cached tokens per request (default 4096)")
    p.add_argument("--slo-ms", type=_bounded_float("--slo-ms", 0, 1e6, lo_open=True), default=Budget.slo_s * 1e3,
                   help=f"per-token latency target, ms (default {Budget.slo_s * 1e3:g})")
    p.add_argument("--mtp", type=_bounded_float("--mtp", 1, 64), default=1.0,
                   help="accepted tokens per step with MTP (default 1: no MTP)")
    p.add_argument("--t-gap-ms", type=_bounded_float("--t-gap-ms", 0, 1e5), default=None,
                   help="fixed gap per step, ms (default 3; the paper's 15 includes work this model computes)")
    p.add_argument("--weights", default="fp8", help="weight data type (default fp8)")
    p.add_argument("--attention-dtype", default=None, help="attention weights' data type (default: --weights)")
    p.add_argument("--kv-cache", default="bf16", help="KV-cache data type (default bf16)")
    p.add_argument("--sigma", type=_bounded_float("--sigma", 0, 1, lo_open=True), default=None,
                   help="FFN balancedness mean/max (default: uniform routing's per-step value)")
    p.add_argument("--ep-overlap", type=_bounded_float("--ep-overlap", 0, 1), default=Assumptions.ep_overlap,
                   help=f"EP: share of all-to-all hidden behind compute (default {Assumptions.ep_overlap:g})")
    p.add_argument("--afd-overlap", type=_bounded_float("--afd-overlap", 0, 1), default=Assumptions.afd_overlap,
                   help=f"AFD: share of transfers hidden behind compute (default {Assumptions.afd_overlap:g}: 3BO)")
    p.add_argument("--matmul-efficiency", type=_bounded_float("--matmul-efficiency", 0, 1, lo_open=True),
                   default=Assumptions.matmul_efficiency)
    p.add_argument("--json", action="store_true")


def cmd_book(args) -> int:
    from afdlib.report.book import build_book, build_custom_book
    from afdlib.errors import AfdError
    if args.out or args.hardware or args.model:
        if not args.out:
            raise AfdError("--hardware/--model build a separate book: give --out DIR")
        if args.only is not None or args.no_execute:
            raise AfdError("--out builds a whole separate book: --only and --no-execute do not apply")
        return build_custom_book(Path(args.out), args.hardware, args.model, args.jobs)
    return build_book(only=args.only, jobs=args.jobs, execute=not args.no_execute)


def _dumps(doc, **kw) -> str:
    """JSON with no NaN or Infinity: a non-finite number is a bug or an input the checks missed."""
    from afdlib.errors import AfdError
    try:
        return json.dumps(doc, allow_nan=False, **kw)
    except ValueError:
        raise AfdError("the result is not finite for these inputs (NaN or infinity); please report the "
                       "command line") from None


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``afd <command>: error: ...``) and status 2."""

    def error(self, message):
        self.exit(2, f"afd: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from afdlib.decode.step import Assumptions
    parser = _Parser(prog="afd", description="Attention-FFN disaggregation vs expert "
                     "parallelism: the models of arXiv 2602.09721.")
    from afdlib import __version__
    parser.add_argument("--version", action="version", version=f"afd {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("catalog", help="hardware and models, with sources")
    p.add_argument("--hw-profile", default="paper", choices=("paper", "datasheet"))
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_catalog)

    p = sub.add_parser("intensity", help="tokens per FFN rank and arithmetic intensity vs N_F (Fig. 2)")
    _add_system_args(p)
    p.add_argument("--n-ffn", type=_n_ffn_list, default=list(range(1, 65)), help="e.g. 1..64 (default) or 1,2,4")
    p.set_defaults(func=cmd_intensity)

    p = sub.add_parser("hfu", help="HFU upper bound of the AFD FFN side vs N_F, and the dead zone (Fig. 4)")
    _add_system_args(p)
    _budget_args(p)
    p.add_argument("--n-ffn", type=_n_ffn_list, default=list(range(1, 65)), help="e.g. 1..64 (default)")
    p.add_argument("--hbm-fraction", type=_fraction, default=1.0,
                   help="share of HBM routed weights may use (default 1.0, the paper's reading)")
    p.add_argument("--ofu", type=_fraction, default=1.0, help="operator FLOPS utilisation (default 1.0)")
    p.set_defaults(func=cmd_hfu)

    p = sub.add_parser("penalty", help="imbalance penalty alpha for AFD and EP (Figs. 5-6, corrected)")
    p.add_argument("--sigma", type=_bounded_float("--sigma", 0, 1, lo_open=True), required=True,
                   help="balancedness mean/max, in (0, 1]")
    p.add_argument("--n-attn", type=_bounded_int("N_A", 1, MAX_NODES), required=True, help="attention nodes N_A")
    p.add_argument("--n-ffn", type=_bounded_int("N_F", 1, MAX_NODES), required=True, help="FFN nodes N_F")
    p.add_argument("--lambda-ep", type=_positive_float, default=None,
                   help="EP's t_a / t_f (default N_A / N_F, the same ratio as AFD)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_penalty)

    p = sub.add_parser("balance", help="balancedness of measured expert loads over ranks, with redundant experts")
    p.add_argument("--counts", required=True, help='JSON file {"logical_count": [[...E...] x layers]}')
    p.add_argument("--ranks", type=_bounded_int("--ranks", 1, MAX_BALANCE_RANKS), required=True,
                   help="EP ranks (GPUs) the experts are spread over")
    p.add_argument("--redundant", type=_bounded_int("--redundant", 0, MAX_BALANCE_RANKS), default=0,
                   help="redundant expert replicas (EPLB-style; default 0)")
    p.add_argument("--tokens", type=_bounded_int("--tokens", 1, MAX_BALANCE_TOKENS), default=None,
                   help="score sampled batches of T tokens, not long-run counts")
    p.add_argument("--top-k", type=_bounded_int("--top-k", 1, 4096), default=8,
                   help="experts per token when sampling (default 8, DeepSeek-V3)")
    p.add_argument("--trials", type=_bounded_int("--trials", 1, 1000), default=5,
                   help="batches sampled per layer (default 5)")
    p.add_argument("--seed", type=_bounded_int("--seed", 0, 2**63 - 1), default=0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_balance)

    p = sub.add_parser("throughput", help="end-to-end decode: output tokens/s per GPU for EP or AFD, and what limits it")
    p.add_argument("--model", required=True, help="catalogue slug, or a config.json / .yaml path")
    p.add_argument("--hardware", required=True, help="catalogue slug or .yaml (AFD: the FFN pool)")
    p.add_argument("--gpus-per-node", type=_bounded_int("--gpus-per-node", 1, 4096), default=None)
    _deployment_options(p, micro_batches=3, micro_batches_help="AFD micro-batches (default 3: 3BO)")
    p.add_argument("--all-to-all", default="low-latency", choices=("low-latency", "normal"))
    p.add_argument("--ep-micro-batches", type=int, choices=(1, 2), default=Assumptions.ep_micro_batches,
                   help="EP: 1 (nothing of the all-to-all hidden) or 2 (two-batch overlap; default)")
    _decode_options(p)
    p.set_defaults(func=cmd_throughput)

    p = sub.add_parser("advise", help="AFD or EP? the best deployment of each, and the computed reasons")
    p.add_argument("--model", default=None, help="catalogue slug, or a config.json / .yaml path")
    p.add_argument("--hardware", default=None, help="catalogue slug or .yaml (AFD: the FFN pool)")
    p.add_argument("--all", action="store_true", help="every catalogue model x hardware pair")
    p.add_argument("--counts", default=None, help='measured expert loads {"logical_count": [[...E...] x layers]}: '
                   "imbalance from an EPLB-style placement of them (a few seconds more)")
    p.add_argument("--price-per-gpu-hour", nargs="+", default=None, metavar="SLUG=USD",
                   help="prices per GPU-hour, e.g. h800=2.0 h20=1.1: compare cost per token")
    _decode_options(p)
    p.set_defaults(func=cmd_advise)

    p = sub.add_parser("simulate", help="the batch-overlap pipeline simulated step by step: bubbles and the "
                       "throughput lost to jitter")
    p.add_argument("--model", default=None, help="catalogue slug, or a config.json / .yaml path")
    p.add_argument("--hardware", default=None, help="catalogue slug or .yaml")
    _deployment_options(p, micro_batches=None, micro_batches_help="micro-batches (default 3 for AFD, 2 for EP)")
    p.add_argument("--cv-ffn", type=_bounded_float("--cv-ffn", 0, 10), default=0.0,
                   help="coefficient of variation of the FFN stage time (lognormal; default 0)")
    p.add_argument("--cv-comm", type=_bounded_float("--cv-comm", 0, 10), default=0.0,
                   help="coefficient of variation of dispatch + combine (default 0)")
    p.add_argument("--cv-attn", type=_bounded_float("--cv-attn", 0, 10), default=0.0,
                   help="coefficient of variation of attention (e.g. varying context; default 0)")
    p.add_argument("--stragglers", choices=("none", "uniform"), default="none",
                   help="FFN stragglers from sampled routing: uniform routing (or --counts: measured loads)")
    p.add_argument("--counts", default=None, help='measured expert loads {"logical_count": [[...E...] x layers]}: '
                   "FFN stragglers sampled from them (EPLB-style placement)")
    p.add_argument("--steps", type=_bounded_int("--steps", 1, 10_000_000), default=10_000,
                   help="decode steps simulated (default 10000)")
    p.add_argument("--seed", type=_bounded_int("--seed", 0, 2**63 - 1), default=0)
    p.add_argument("--t-attn-us", type=_bounded_float("--t-attn-us", 0, 1e9), default=None,
                   help="attention time per micro-batch and layer, us (instead of the decode model)")
    p.add_argument("--t-ffn-us", type=_bounded_float("--t-ffn-us", 0, 1e9), default=None)
    p.add_argument("--t-comm-us", type=_bounded_float("--t-comm-us", 0, 1e9), default=None,
                   help="dispatch + combine per micro-batch and layer, us")
    p.add_argument("--layers", type=_bounded_int("--layers", 1, 10_000), default=None,
                   help="MoE layers, with given stage times (default: the model's)")
    _decode_options(p)
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("book", help="execute every notebook with papermill and build the HTML book")
    p.add_argument("--only", nargs="*", default=None, help="notebook names to execute (others reused)")
    p.add_argument("--jobs", type=int, default=2, help="notebooks executed in parallel (default 2)")
    p.add_argument("--no-execute", action="store_true", help="render the notebooks already executed")
    p.add_argument("--hardware", default=None, help="build a separate book for this hardware (slug or .yaml)")
    p.add_argument("--model", default=None, help="... and/or this model (slug, config.json or .yaml)")
    p.add_argument("--out", default=None, help="folder of the separate book (never the reference book's)")
    p.set_defaults(func=cmd_book)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from afdlib.errors import AfdError
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # usage errors (one line, status 2), --help and --version (0)
        return int(e.code or 0)
    func: Callable = args.func
    try:
        with warnings.catch_warnings():  # overflow in extreme inputs: results are checked to be finite
            warnings.simplefilter("ignore", RuntimeWarning)
            return int(func(args) or 0)
    except AfdError as e:
        print(f"afd: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
