"""afd hfu: the HFU upper bound of the AFD FFN side vs N_F, and the dead zone (paper Fig. 4)."""
from __future__ import annotations

import argparse

from afdlib.cli.options import (
    add_budget_args,
    add_system_args,
    budget_of,
    dumps,
    fraction,
    load_system,
    n_ffn_list,
    print_table,
)


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("hfu", help="HFU upper bound of the AFD FFN side vs N_F, and the dead zone (Fig. 4)")
    add_system_args(p)
    add_budget_args(p)
    p.add_argument("--n-ffn", type=n_ffn_list, default=list(range(1, 65)), help="e.g. 1..64 (default)")
    p.add_argument("--hbm-fraction", type=fraction, default=1.0,
                   help="share of HBM routed weights may use (default 1.0, the paper's reading)")
    p.add_argument("--ofu", type=fraction, default=1.0, help="operator FLOPS utilisation (default 1.0)")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from afdlib.analysis.hfu import hfu_sweep
    model, hw = load_system(args)
    res, summary = hfu_sweep(model, hw, args.n_ffn, budget_of(args), hbm_usable_fraction=args.hbm_fraction,
                             ofu=args.ofu)
    from afdlib.analysis.hfu import failed_rules
    rows = [{"n_ffn": int(n), "hfu": round(float(h), 6), "limit": str(lim), "feasible": bool(f),
             "fails": failed_rules(x)}
            for n, h, lim, f, x in zip(args.n_ffn, res["hfu"], res["limit"], res["feasible"], res["fails"])]
    doc = {"rows": rows, "max_hfu": None if summary.max_hfu is None else round(summary.max_hfu, 6),
           "best_n_ffn": summary.best_n_ffn, "dead_zone_floor": round(summary.dead_zone_floor, 6)}
    if args.json:
        print(dumps(doc))
        return 0
    t_b = float(res["t_b"].flat[0])
    print(f"{model.name} on {hw.name} ({hw.profile}): SLO {args.slo_ms:g} ms, L_accept {args.l_accept:g}, "
          f"t_g {args.t_gap_ms:g} ms -> t_B = {t_b * 1e3:.4f} ms per layer and stage")
    best = "none feasible" if summary.max_hfu is None else f"{summary.max_hfu:.1%} at N_F = {summary.best_n_ffn}"
    print(f"max HFU upper bound: {best}; dead-zone floor (N_F >= K = {model.experts_per_token}): "
          f"{summary.dead_zone_floor:.1%}")
    print_table([{**r, "hfu": f"{r['hfu']:.1%}", "feasible": "yes" if r["feasible"] else "no",
                   "fails": ", ".join(r["fails"]) or "-"} for r in rows],
                 ["n_ffn", "hfu", "limit", "feasible", "fails"])
    return 0
