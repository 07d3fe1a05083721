"""afd intensity: tokens per FFN rank and arithmetic intensity vs N_F (paper Fig. 2)."""
from __future__ import annotations

import argparse

from afdlib.cli.options import add_system_args, dumps, load_system, n_ffn_list, print_table


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("intensity", help="tokens per FFN rank and arithmetic intensity vs N_F (Fig. 2)")
    add_system_args(p)
    p.add_argument("--n-ffn", type=n_ffn_list, default=list(range(1, 65)), help="e.g. 1..64 (default) or 1,2,4")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from afdlib.analysis.intensity import intensity_sweep, regime_borders
    model, hw = load_system(args)
    cols = intensity_sweep(model, hw, args.n_ffn)
    rows = [{"n_ffn": int(n), "local_experts": int(g), "intensity": round(float(i), 6),
             "intensity_continuous": round(float(c), 6), "regime": str(r)}
            for n, g, i, c, r in zip(*cols.values())]
    if args.json:
        print(dumps(rows))
        return 0
    borders = regime_borders(model.experts_per_token, model.routed_experts, hw.bandwidth_ratio, hw.gpus_per_node)
    print(f"{model.name} on {hw.name} ({hw.profile}): K={model.experts_per_token}, E={model.routed_experts}, "
          f"g={hw.gpus_per_node}, r=BW_up/BW_out={_ratio(hw.bandwidth_ratio)}; intensity normalised to B_out = 1")
    print(_borders_line(borders))
    print_table(rows, list(rows[0]), {"intensity": ".3f", "intensity_continuous": ".3f"})
    return 0


def _borders_line(borders: dict[str, float]) -> str:
    """Where each regime starts, in order of N_F; a regime whose border lies at or beyond max-intensity's
    is never reached (G = 1 takes precedence, :func:`afdlib.analysis.intensity.regime`) and said so."""
    top = borders["max-intensity"]
    never = [k for k, v in borders.items() if k != "max-intensity" and v >= top]
    shown = sorted(((k, v) for k, v in borders.items() if k not in never), key=lambda kv: kv[1])
    return "regimes start at N_F = " + ", ".join(f"{k} {v:g}" for k, v in shown) + (
        f" ({' and '.join(f'{k} ({borders[k]:g})' for k in never)} never reached: max-intensity, G = 1, takes "
        "precedence" + ")" if never else "")


def _ratio(r: float) -> str:
    """The bandwidth ratio with two decimals, in 3 significant figures from 10^4 (a device file's 10^12
    ratio printed 15 digits)."""
    return f"{r:.2f}" if r < 1e4 else f"{r:.3g}"
