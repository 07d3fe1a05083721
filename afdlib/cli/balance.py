"""afd balance: balancedness of measured expert loads over ranks, with redundant experts."""
from __future__ import annotations

import argparse

from afdlib.cli.options import MAX_BALANCE_RANKS, MAX_BALANCE_TOKENS, bounded_int, dumps, refuse_given

MAX_PICKS = 10 ** 9
"""Most expert choices one ``afd balance`` run samples (tokens x top-K x trials x MoE layers): about 40 s
on one core (10^6 tokens x 8 x 5 trials x 58 layers, 2.3 x 10^9, took 97 s); more is refused before
anything runs."""


PROGRESS_PICKS = 10 ** 8
"""Sampled expert choices from which ``afd balance`` reports its progress on stderr (a few seconds)."""


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("balance", help="balancedness of measured expert loads over ranks, with redundant experts")
    p.add_argument("--counts", required=True, help='JSON file {"logical_count": [[...E...] x layers]}')
    p.add_argument("--ranks", type=bounded_int("--ranks", 1, MAX_BALANCE_RANKS), required=True,
                   help="EP ranks (GPUs) the experts are spread over")
    p.add_argument("--redundant", type=bounded_int("--redundant", 0, MAX_BALANCE_RANKS), default=0,
                   help="redundant expert replicas (EPLB-style; default 0)")
    p.add_argument("--tokens", type=bounded_int("--tokens", 1, MAX_BALANCE_TOKENS), default=None,
                   help="score sampled batches of T tokens, not long-run counts")
    p.add_argument("--top-k", type=bounded_int("--top-k", 1, 4096), default=8,
                   help="experts per token when sampling (default 8, DeepSeek-V3)")
    p.add_argument("--trials", type=bounded_int("--trials", 1, 1000), default=5,
                   help="batches sampled per layer (default 5)")
    p.add_argument("--seed", type=bounded_int("--seed", 0, 2**63 - 1), default=0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from afdlib.errors import AfdError
    from afdlib.routing.balance import balance_report
    from afdlib.routing.measured import load_counts
    if args.tokens is None:
        refuse_given(args, ("top_k", "trials", "seed"), "samples batches of --tokens tokens; without --tokens the "
                     "long-run counts are scored and it has no effect")
    counts = load_counts(args.counts)
    if args.tokens is not None and args.top_k > counts.shape[1]:
        raise AfdError(f"--top-k ({args.top_k}) exceeds the experts in the file ({counts.shape[1]})")
    if args.tokens is not None:
        from afdlib.routing.measured import moe_layers
        layers = int(moe_layers(counts).size)
        picks = args.tokens * args.top_k * args.trials * layers
        if picks > MAX_PICKS:
            raise AfdError(f"--tokens {args.tokens:,} x --top-k {args.top_k} x --trials {args.trials} x {layers} MoE layers "
                           f"= {picks:.2g} sampled expert choices, more than the {MAX_PICKS:.0e} one run samples (about "
                           "40 s); give fewer tokens or trials")
    progress = None
    if args.tokens is not None and picks > PROGRESS_PICKS:        # seconds of sampling: say how far it is
        import sys

        def progress(done, total):
            if done % max(1, total // 10) == 0 or done == total:
                print(f"afd balance: {done} of {total} MoE layers sampled", file=sys.stderr, flush=True)
    rep = balance_report(counts, args.ranks, args.redundant, tokens=args.tokens, experts_per_token=args.top_k,
                         trials=args.trials, seed=args.seed, progress=progress)
    doc = {"median_contiguous": round(rep.median_contiguous, 6), "median_redundant": round(rep.median_redundant, 6),
           "layers": [{"layer": int(la), "contiguous": round(float(c), 6), "redundant": round(float(r), 6)}
                      for la, c, r in zip(rep.layers, rep.contiguous, rep.redundant)]}
    if args.json:
        print(dumps(doc))
        return 0
    what = "long-run counts" if args.tokens is None else f"batches of {args.tokens} tokens (median of {args.trials})"
    print(f"{args.counts}: {len(rep.layers)} MoE layer{'' if len(rep.layers) == 1 else 's'} x {counts.shape[1]} experts on {args.ranks} ranks, {what}")
    print(f"balancedness (mean/max), median over layers: contiguous {rep.median_contiguous:.3f} "
          f"(max/mean {1 / rep.median_contiguous:.2f}); placement with {args.redundant} redundant "
          f"{rep.median_redundant:.3f} (max/mean {1 / rep.median_redundant:.2f})")
    return 0
