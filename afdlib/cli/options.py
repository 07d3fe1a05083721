"""What the subcommands share: argparse value types, option groups and the output helpers.

Each value type returns the clean value or raises :class:`argparse.ArgumentTypeError` with one line,
worded by :mod:`afdlib.inputs.checks` as everywhere else in the library.
"""
from __future__ import annotations

import argparse
import json
from typing import Any, Callable, Sequence

import numpy as np

from afdlib.errors import AfdError
from afdlib.inputs import checks
from afdlib.inputs.checks import (ACCEPTED_TOKENS, CONTEXT_TOKENS, GAP_MS, MAX_DEPLOYMENT_COUNT, MAX_NODES,  # noqa: F401
                                  SLO_MS, shortened)

DISPATCH_TYPES = ("fp8", "bf16", "fp4")
"""The data types ``--dispatch`` takes (fp4: NVFP4, scales included: :data:`afdlib.inputs.specs.NVFP4_BYTES`)."""
MAX_POINTS = 100_000
"""Most N_F values one command evaluates."""
MAX_BALANCE_RANKS = 65_536
MAX_BALANCE_TOKENS = 10_000_000
"""afd balance: at most 64Ki ranks or replicas, 10^7 tokens per sampled batch (about 8 s each)."""


def n_ffn_list(text: str) -> list[int]:
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
        raise argparse.ArgumentTypeError(f"expected N, A..B or a comma list, got '{shortened(text)}'") from None
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"FFN node counts must be >= 1, got '{shortened(text)}'")
    if max(out) > MAX_NODES:
        raise argparse.ArgumentTypeError(f"FFN node counts must be <= {MAX_NODES:,}, got '{shortened(text)}'")
    if len(out) > MAX_POINTS:
        raise argparse.ArgumentTypeError(f"at most {MAX_POINTS:,} values, got {len(out):,}")
    from collections import Counter
    twice = sorted(n for n, k in Counter(out).items() if k > 1)
    if twice:     # the same row printed again, as if another value had been asked for
        raise argparse.ArgumentTypeError(f"N_F {twice[0]} given twice in '{shortened(text)}'; give each once")
    return out


def argument(check: Callable, convert: Callable[[str], Any] = float, **bounds) -> Callable[[str], Any]:
    """An argparse value type: ``convert`` the text, then ``check`` it (:mod:`afdlib.inputs.checks`,
    with ``bounds``); a refusal becomes argparse's one-line error, in the checker's words."""
    def parse(text: str):
        try:
            if not text.isascii() or "_" in text:   # Python reads '1_000' and full-width digits; a file does not
                raise ValueError(text)
            value, shown = convert(text), shortened(text)
        except ValueError:
            value, shown = text, shortened(repr(text))  # not even a number: the checker says so
        try:
            out = check(value, **bounds)
            return out + 0.0 if isinstance(out, float) else out   # -0 is 0: no "-0.0" in the output
        except checks.Refused as e:  # the line as typed: "got 1e400", not "got inf"
            raise argparse.ArgumentTypeError(checks.line(e.rule, shown, e.name, e.where)) from None
    return parse


positive_float = argument(checks.positive)
"""A finite number > 0."""
nonnegative_float = argument(checks.nonnegative)
"""A finite number >= 0."""
fraction = argument(checks.fraction)
"""A number in (0, 1]."""


def bounded_int(name: str, lo: int, hi: int) -> Callable[[str], int]:
    """An integer in lo..hi; ``name`` (the option) heads the error."""
    return argument(checks.integer, int, name=name, lo=lo, hi=hi)


def bounded_float(name: str, lo: float, hi: float, lo_open: bool = False) -> Callable[[str], float]:
    """A number in [lo, hi] (``lo_open``: (lo, hi]); ``name`` (the option) heads the error."""
    return argument(checks.in_range, name=name, lo=lo, hi=hi, lo_open=lo_open)


def add_system_args(p: argparse.ArgumentParser, model: bool = True) -> None:
    if model:
        p.add_argument("--model", required=True, help="catalogue slug, or a config.json / .yaml path")
        p.add_argument("--model-profile", default="paper", choices=("paper", "reference"),
                       help="paper: Table 4 values where they differ (default)")
    p.add_argument("--hardware", required=True, help="catalogue slug, or a .yaml path")
    p.add_argument("--hw-profile", default="paper", choices=("paper", "datasheet"),
                   help="paper: Table 5 sustained values (default); datasheet: spec x efficiency")
    p.add_argument("--gpus-per-node", type=int, default=None, help="override g (default: catalogue)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def device(args, name: str):
    """The device ``name`` (a slug or a file) under ``--hw-profile``; a profile given on the command line
    for a flat file, which holds one set of figures (no ``paper:`` or ``datasheet:`` block), is refused:
    it would choose nothing."""
    from afdlib.inputs.catalog import load_hardware, refuse_profile_of_flat
    hw = load_hardware(name, profile=args.hw_profile)
    if given(args, "hw_profile"):
        refuse_profile_of_flat(hw, name, f"--hw-profile {args.hw_profile}")
    return hw


def load_system(args) -> tuple:
    from afdlib.inputs.catalog import load_model
    hw = device(args, args.hardware)
    if args.gpus_per_node is not None:
        checks.integer(args.gpus_per_node, "--gpus-per-node", lo=1, hi=4096)
        hw = hw.with_overrides(gpus_per_node=args.gpus_per_node)
    model = load_model(args.model, profile=args.model_profile) if hasattr(args, "model") else None
    return model, hw


def add_budget_args(p: argparse.ArgumentParser, defaults=None) -> None:
    """--slo-ms, --l-accept, --t-gap-ms; defaults from :class:`afdlib.inputs.specs.Budget` (or ``defaults``)."""
    from afdlib.inputs.specs import Budget
    b = defaults or Budget()
    # the decode options' ranges (add_decode_options): beyond them the bound's arithmetic overflows
    p.add_argument("--slo-ms", type=bounded_float("--slo-ms", *SLO_MS, lo_open=True), default=b.slo_s * 1e3,
                   help=f"per-token latency SLO, ms (default {b.slo_s * 1e3:g})")
    p.add_argument("--l-accept", type=bounded_float("--l-accept", *ACCEPTED_TOKENS), default=b.l_accept,
                   help=f"accepted tokens per step (MTP; 1 to 64, default {b.l_accept:g})")
    p.add_argument("--t-gap-ms", type=bounded_float("--t-gap-ms", *GAP_MS), default=b.t_gap_s * 1e3,
                   help=f"fixed gap per step t_g, ms (default {b.t_gap_s * 1e3:g})")


def budget_of(args, micro_batches: int | None = None):
    from afdlib.inputs.specs import Budget
    kw = {} if micro_batches is None else {"micro_batches": micro_batches}
    return Budget(slo_s=args.slo_ms / 1e3, l_accept=args.l_accept, t_gap_s=args.t_gap_ms / 1e3, **kw)


def add_deployment_options(p: argparse.ArgumentParser, micro_batches: int | None, micro_batches_help: str) -> None:
    """The design and its deployment (EP size and replicas, or N_A and N_F; micro-batches; batch),
    shared by `afd throughput` and `afd simulate`."""
    p.add_argument("--design", required=True, choices=("ep", "afd"))
    p.add_argument("--ep-size", type=bounded_int("--ep-size", 1, MAX_DEPLOYMENT_COUNT), default=None, help="EP: GPUs")
    p.add_argument("--redundant", type=bounded_int("--redundant", 0, MAX_DEPLOYMENT_COUNT), default=0,
                   help="EP: redundant expert replicas (default 0)")
    p.add_argument("--n-attn", type=bounded_int("--n-attn", 1, MAX_NODES), default=None, help="AFD: attention nodes")
    p.add_argument("--n-ffn", type=bounded_int("--n-ffn", 1, MAX_NODES), default=None, help="AFD: FFN nodes")
    p.add_argument("--micro-batches", type=bounded_int("--micro-batches", 1, 64), default=micro_batches,
                   help=micro_batches_help)
    p.add_argument("--attention-domains", type=bounded_int("--attention-domains", 1, 64), default=None,
                   help="AFD: the attention pool in this many data-parallel domains, each running --micro-batches "
                        "of its own against the one FFN pool (xDeepServe: 3 domains x 2; default 1)")
    p.add_argument("--batch-per-gpu", type=bounded_int("--batch-per-gpu", 1, MAX_DEPLOYMENT_COUNT), default=None,
                   help="requests per (attention) GPU; default: the largest meeting the SLO and memory")


def given(args, dest: str) -> bool:
    """Whether the command line gave the option stored as ``dest`` (:func:`afdlib.cli.main` records
    them in ``args.given``; a namespace parsed without that record gives nothing to refuse)."""
    return dest in getattr(args, "given", ())


_FLAGS = {"kernel_profile": "--kernels", "mtp": "--mtp"}


def flag(dest: str) -> str:
    """The option that stores ``dest``: ``ep_size`` -> ``--ep-size``."""
    return _FLAGS.get(dest, "--" + dest.replace("_", "-"))


def refuse_given(args, dests: Sequence[str], why: str) -> None:
    """One line for the first option of ``dests`` the command line gave: ``why`` says why it would
    have no effect (an option silently ignored reads as an answer to a question not asked)."""
    for dest in dests:
        if given(args, dest):
            raise AfdError(f"{flag(dest)} {why}")


AFD_ONLY = ("n_attn", "n_ffn", "attn_hardware", "afd_overlap", "attention_domains")
"""Options of an AFD deployment, refused with ``--design ep``."""
EP_ONLY = ("ep_size", "redundant", "ep_overlap", "ep_micro_batches", "all_to_all", "sbo")
"""Options of an EP deployment, refused with ``--design afd``."""


def check_design_options(args) -> None:
    """Refuse the options of the design not asked for (``--n-attn`` with ``--design ep``, ...)."""
    if args.design == "ep":
        refuse_given(args, AFD_ONLY, "is an AFD option; --design ep does not use it")
    else:
        refuse_given(args, EP_ONLY, "is an EP option; --design afd does not use it")


def ffn_ranks(deployment) -> int:
    """GPUs the FFN side's load spreads over: the EP group, or AFD's FFN pool."""
    return int(deployment.ep_size if deployment.design == "ep" else deployment.ffn.gpus)


def check_sigma(args, ranks: int, where: str = "") -> None:
    """``--sigma`` is a balancedness over ``ranks`` GPUs: at least 1/ranks (:func:`checks.balancedness`)."""
    if getattr(args, "sigma", None) is not None:
        checks.balancedness(args.sigma, int(ranks), "--sigma", where)


def check_memory(args, step, assumptions) -> None:
    """A given ``--batch-per-gpu`` must fit in memory (a searched one does by construction)."""
    if args.batch_per_gpu is not None and not bool(np.all(step.fits_memory)):
        raise AfdError(f"{args.batch_per_gpu} requests per GPU at context {args.context:g} do not fit in memory "
                       f"({float(np.max(step.memory_bytes)) / 1e9:.1f} GB needed, "
                       f"{assumptions.hbm_usable_fraction:.0%} of HBM usable)")


def measured_counts(path: str, model):
    """The expert loads of a ``--counts`` file (layers x experts), refused unless it has one column
    per routed expert of ``model``: the one check of a counts file against the model, for every command."""
    from afdlib.routing.measured import load_counts
    counts = load_counts(path)
    if counts.shape[1] != model.routed_experts:
        raise AfdError(f"{path}: {counts.shape[1]} experts per layer, the model ({model.slug}) has "
                       f"{model.routed_experts}")
    from afdlib.routing.measured import moe_layers
    routed = int(moe_layers(counts).size)
    if counts.shape[0] > model.num_layers or routed > model.moe_layers:    # another model's loads
        raise AfdError(f"{path}: {counts.shape[0]} layers, {routed} with routed tokens; the model ({model.slug}) "
                       f"has {model.num_layers} layers, {model.moe_layers} of them MoE")
    return counts


def deployment_of(args, model, hardware):
    """The deployment the options describe (:mod:`afdlib.decode.deployment`): ``--design``;
    ``--ep-size`` and ``--redundant``, or ``--n-attn`` and ``--n-ffn`` (the attention pool on
    ``--attn-hardware``, default ``hardware``); the micro-batches (EP: ``--ep-micro-batches`` where
    the command has it, else ``--micro-batches``, default 2; AFD: ``--micro-batches``, default 3);
    EP's ``--all-to-all`` kernels where the command has them; ``--batch-per-gpu`` (None: the
    largest batch meeting the SLO and memory). One line naming the option where one is missing."""
    from afdlib.decode.deployment import AFDDeployment, EPDeployment
    check_design_options(args)
    d = _deployment(args, model, hardware, AFDDeployment, EPDeployment)
    check_sigma(args, ffn_ranks(d))
    if int(d.micro_batches) == 1 and not getattr(d, "sbo", False):   # one micro-batch: nothing to overlap with
        refuse_given(args, ("ep_overlap", "afd_overlap"), "sets how much of the other micro-batches' work hides "
                     "a stage; one micro-batch has none (single-batch overlap, --sbo, hides EP's all-to-all)")
    return d


def _deployment(args, model, hardware, AFDDeployment, EPDeployment):
    if args.design == "ep":
        if args.ep_size is None:
            raise AfdError("--design ep needs --ep-size (GPUs in the EP group)")
        if args.ep_size > model.routed_experts + args.redundant:
            raise AfdError(f"--ep-size ({args.ep_size}) exceeds the routed + redundant experts "
                           f"({model.routed_experts} + {args.redundant}): every GPU must hold an expert")
        sbo = bool(getattr(args, "sbo", False))
        if hasattr(args, "ep_micro_batches"):     # afd throughput: its own EP option, EPDeployment's default
            m = args.ep_micro_batches or (1 if sbo else EPDeployment.micro_batches)
        else:
            m = args.micro_batches or EPDeployment.micro_batches
        kernels = getattr(args, "all_to_all", None) or EPDeployment.kernels
        if sbo and (m != 1 or kernels != "low-latency"):
            raise AfdError(f"--sbo (single-batch overlap) runs one micro-batch on DeepEP's low-latency kernels; "
                           f"drop --ep-micro-batches {m}" if m != 1 else "--sbo runs on DeepEP's low-latency kernels; "
                           "drop --all-to-all normal")
        return EPDeployment(hardware, args.ep_size, args.redundant, m, kernels, args.batch_per_gpu, sbo)
    if args.n_attn is None or args.n_ffn is None:
        raise AfdError("--design afd needs --n-attn and --n-ffn (nodes)")
    attn = None if args.attn_hardware is None else device(args, args.attn_hardware)
    if attn is not None and getattr(args, "gpus_per_node", None) is not None:   # the unit of both pools
        attn = attn.with_overrides(gpus_per_node=args.gpus_per_node)
    return AFDDeployment.of(hardware, args.n_attn, args.n_ffn, attn,
                            micro_batches=args.micro_batches or AFDDeployment.micro_batches,
                            requests=args.batch_per_gpu, domains=getattr(args, "attention_domains", None) or 1)


def add_decode_options(p: argparse.ArgumentParser) -> None:
    # the decode model itself is imported only by the command that runs it (every command builds this
    # parser); Assumptions' kernel profile defaults to PROFILES[0]
    from afdlib.evaluator.kernels import PROFILES
    from afdlib.inputs.specs import ATTENTION_COMPUTE, Budget
    p.add_argument("--model-profile", default="reference", choices=("paper", "reference"))
    p.add_argument("--attn-hardware", default=None, help="AFD attention pool, if other than --hardware")
    p.add_argument("--hw-profile", default="datasheet", choices=("paper", "datasheet"),
                   help="datasheet (default): spec x efficiency; paper: Table 5")
    p.add_argument("--context", type=bounded_float("--context", *CONTEXT_TOKENS), default=4096.0,
                   help="cached tokens per request (default 4096)")
    p.add_argument("--slo-ms", type=bounded_float("--slo-ms", *SLO_MS, lo_open=True), default=Budget.slo_s * 1e3,
                   help=f"per-token latency target, ms (default {Budget.slo_s * 1e3:g})")
    p.add_argument("--mtp", type=bounded_float("--mtp", *ACCEPTED_TOKENS), default=1.0,
                   help="accepted tokens per step with MTP (default 1: no MTP)")
    p.add_argument("--t-gap-ms", type=bounded_float("--t-gap-ms", *GAP_MS), default=None,
                   help="fixed gap per step, ms (default 3; the paper's 15 includes work this model computes)")
    p.add_argument("--weights", default=None,
                   help="experts' and dense FFN weights' data type: fp8, bf16, nvfp4 (or fp4: NVFP4, 0.5625 bytes "
                        "per weight, W4A4 at the FP4 rate, Blackwell only), mxfp4 (0.53125 bytes, likewise), int4 "
                        "(weight-only W4A16, 0.5625 bytes, at the BF16 rate); default: what "
                        "the model's config "
                        "declares, else fp8")
    p.add_argument("--attention-dtype", default=None,
                   help="attention weights' data type (default: --weights; fp8 where the weights are NVFP4)")
    p.add_argument("--kv-cache", default="bf16", help="KV-cache data type (default bf16)")
    p.add_argument("--attention-compute", default=ATTENTION_COMPUTE[0], choices=ATTENTION_COMPUTE,
                   help="data type the core attention computes in, apart from the cache's: bf16 (the default; "
                        "FlashMLA dequantizes an FP8 cache) or fp8 (FP8 FlashMLA on Hopper, FP8 attention on "
                        "Blackwell: their published speedups over BF16, data/attention_kernels.yaml)")
    p.add_argument("--dispatch", default=None, choices=DISPATCH_TYPES,
                   help="data type of the tokens sent to the experts (EP's dispatch, AFD's attention-to-FFN "
                        "transfer): fp8 (the default, DeepEP's), bf16, or fp4 (NVFP4 with its block scales, 0.5625 "
                        "bytes per element, as FP4 dispatch on Blackwell sends them); the way back stays BF16")
    p.add_argument("--sigma", type=bounded_float("--sigma", 0, 1, lo_open=True), default=None,
                   help="FFN balancedness mean/max (default: uniform routing's per-step value)")
    p.add_argument("--ep-overlap", type=bounded_float("--ep-overlap", 0, 1), default=None,
                   help="what-if override for EP: share of the all-to-all hidden behind compute (default: "
                        "derived from the schedule of its micro-batches and kernels)")
    p.add_argument("--afd-overlap", type=bounded_float("--afd-overlap", 0, 1), default=None,
                   help="what-if override for AFD: share of the transfers hidden behind compute, 1 the "
                        "pipeline's steady state (default: derived from the schedule of its micro-batches)")
    p.add_argument("--kernels", dest="kernel_profile", default=PROFILES[0], choices=PROFILES,
                   help="kernel efficiency: calibrated (default: by shape and architecture, fitted to DeepGEMM's, "
                        "FlashMLA's and aiconfigurator's kernel measurements), datasheet (0.75 of peak FLOP/s, HBM 0.8, 3 us per kernel) or roofline "
                        "(speed of light)")
    p.add_argument("--matmul-efficiency", type=bounded_float("--matmul-efficiency", 0, 1, lo_open=True),
                   default=None, help="replace every GEMM's and attention's fraction of peak FLOP/s (what-if)")
    p.add_argument("--json", action="store_true")


def precision_of(args, model=None):
    """(:class:`~afdlib.inputs.specs.Precision`, where its weights' type came from) for ``model``:
    ``--weights``, else the type the model's config declares (:attr:`Model.weights_dtype`), else the
    default (FP8). The attention projections follow ``--attention-dtype``, else
    :meth:`Precision.for_weights <afdlib.inputs.specs.Precision.for_weights>`'s rule."""
    from afdlib.inputs.specs import Precision
    for option, value in (("--weights", args.weights), ("--attention-dtype", args.attention_dtype)):
        if value is not None and not str(value).strip():      # '' would read as not given: the default
            raise AfdError(f"{option} is empty; give a data type (fp8, bf16, nvfp4, mxfp4, int4) or leave it out")
    declared = getattr(model, "weights_dtype", None)
    weights, origin = ((args.weights, "--weights") if args.weights else
                       (declared, f"declared by {model.sources.get('weights_dtype', 'the model')}") if declared else
                       (Precision.weights, "default" if not getattr(model, "sources", {}).get("weights_unread") else
                        f"default: {model.sources['weights_unread']}; give --weights"))
    precision = Precision.for_weights(weights, args.attention_dtype or None, args.kv_cache)
    from dataclasses import replace
    if getattr(args, "dispatch", None):
        precision = replace(precision, dispatch=args.dispatch)
    if getattr(args, "attention_compute", "bf16") != "bf16":
        precision = replace(precision, attention_compute=args.attention_compute)
    return precision, origin


def decode_setup(args, model=None):
    """(precision, assumptions, budget) from the options shared by throughput and advise; the
    precision is ``model``'s (:func:`precision_of`)."""
    from afdlib.decode.step import DECODE_T_GAP_S, Assumptions
    from afdlib.inputs.specs import Budget
    precision, _ = precision_of(args, model)
    skew = None
    if getattr(args, "counts", None):
        from afdlib.routing.balance import placement_skew
        if args.sigma is not None:
            raise AfdError("give --sigma or --counts, not both")
        skew = placement_skew(measured_counts(args.counts, model))
    a = Assumptions(ep_overlap=args.ep_overlap, afd_overlap=args.afd_overlap, sigma=args.sigma,
                    matmul_efficiency=args.matmul_efficiency, skew=skew, kernel_profile=args.kernel_profile)
    t_gap_s = DECODE_T_GAP_S if args.t_gap_ms is None else args.t_gap_ms / 1e3
    budget = Budget(slo_s=args.slo_ms / 1e3, l_accept=args.mtp, t_gap_s=t_gap_s)
    return precision, a, budget


def mtp_module(model, l_accept: float) -> dict | None:
    """What the MTP drafts of ``--mtp`` are costed as (None without MTP): the model's declared module, or,
    where its config declares none (``mtp_layers`` 0: Qwen3 and most non-DeepSeek configs), the same form
    (each draft one MoE layer and an LM head, as DeepSeek-V3's MTP module), said rather than silently
    assumed: a draft model of another size costs something else."""
    if l_accept <= 1.0:
        return None
    n = int(getattr(model, "mtp_layers", 0) or 0)
    if n > 0:
        return {"declared": True, "words": f"the model's MTP module ({n} layer{'s' if n > 1 else ''})"}
    return {"declared": False, "words": "the model declares no MTP module (mtp_layers 0): each draft is costed as one "
                                        "MoE layer and an LM head, as DeepSeek-V3's MTP module"}


def print_table(rows: list[dict], columns: Sequence[str], fmt: dict[str, str] | None = None) -> None:
    fmt = fmt or {}
    cells = [["-" if r[c] is None else r[c] if isinstance(r[c], str) else format(r[c], fmt.get(c, "")) for c in columns]
             for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.rjust(w) for c, w in zip(columns, widths)))
    for row in cells:
        print("  ".join(v.rjust(w) for v, w in zip(row, widths)))


def dumps(doc, **kw) -> str:
    """JSON with no NaN or Infinity: a non-finite number is a bug or an input the checks missed."""
    return json.dumps(checks.finite(doc), allow_nan=False, **kw)
