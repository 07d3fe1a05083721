"""afd penalty: the imbalance penalty alpha for AFD and EP (paper Figs. 5-6, corrected)."""
from __future__ import annotations

import argparse

from afdlib.cli.options import MAX_NODES, bounded_float, bounded_int, dumps, positive_float


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("penalty", help="imbalance penalty alpha for AFD and EP (Figs. 5-6, corrected)")
    p.add_argument("--sigma", type=bounded_float("--sigma", 0, 1, lo_open=True), required=True,
                   help="balancedness mean/max, in (0, 1]")
    p.add_argument("--n-attn", type=bounded_int("N_A", 1, MAX_NODES), required=True, help="attention nodes N_A")
    p.add_argument("--n-ffn", type=bounded_int("N_F", 1, MAX_NODES), required=True, help="FFN nodes N_F")
    p.add_argument("--lambda-ep", type=positive_float, default=None,
                   help="EP's t_a / t_f (default N_A / N_F, the same ratio as AFD)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from afdlib.analysis.imbalance import alpha_afd, alpha_dp_afd, alpha_dp_ep, alpha_ep
    from afdlib.inputs import checks
    from afdlib.inputs.specs import MAX_GPUS_PER_NODE
    # a balancedness over the FFN pool's GPUs is at least 1 / those GPUs, at most N_F x the largest node
    checks.balancedness(args.sigma, args.n_ffn * MAX_GPUS_PER_NODE, "--sigma",
                        f"N_F = {args.n_ffn} nodes of at most {MAX_GPUS_PER_NODE:,} GPUs")
    lam = args.lambda_ep if args.lambda_ep is not None else args.n_attn / args.n_ffn
    afd = alpha_afd(args.sigma, args.n_attn, args.n_ffn)
    doc = {"alpha_ep": round(float(alpha_ep(args.sigma, lam)), 6), "alpha_afd": round(float(afd.alpha), 6),
           "alpha_afd_exact": round(float(afd.exact), 6), "rounding": str(afd.rounding),
           "alpha_afd_floor": round(float(afd.floor), 6), "alpha_afd_ceil": round(float(afd.ceil), 6),
           "dp": {"alpha_ep": round(float(alpha_dp_ep(args.sigma, lam)), 6),
                  "alpha_afd": round(float(alpha_dp_afd(args.sigma)), 6)}}
    if args.json:
        print(dumps(doc))
        return 0
    print(f"sigma = {args.sigma:g}, N_A = {args.n_attn}, N_F = {args.n_ffn} (lambda_AFD = {args.n_attn / args.n_ffn:g}),"
          f" lambda_EP = t_a / t_f = {lam:g}")
    print(f"EP imbalance:  alpha_EP = {doc['alpha_ep']:.4f}   alpha_AFD = {doc['alpha_afd']:.4f} "
          f"({doc['rounding']}; exact {doc['alpha_afd_exact']:.4f}, floor {doc['alpha_afd_floor']:.4f}, "
          f"ceil {doc['alpha_afd_ceil']:.4f})")
    print(f"DP imbalance:  alpha_EP = {doc['dp']['alpha_ep']:.4f} (batch regrown)   "
          f"alpha_AFD = {doc['dp']['alpha_afd']:.4f}")
    return 0
