"""afd catalog: the hardware and model catalogues, with their sources."""
from __future__ import annotations

import argparse

from afdlib.cli.options import dumps, print_table


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("catalog", help="hardware and models, with sources")
    p.add_argument("--hw-profile", default="paper", choices=("paper", "datasheet"))
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from afdlib.inputs.catalog import load_catalog, to_record
    hw, models = load_catalog(profile=args.hw_profile)
    if args.json:
        print(dumps({"hardware": {k: to_record(v) for k, v in hw.items()},
                          "models": {k: to_record(v) for k, v in models.items()}}, indent=1))
        return 0
    from afdlib.inputs.catalog import hardware_row, model_row
    print(f"Hardware (profile {args.hw_profile}; per GPU, per direction; sources: afd catalog --json)")
    print_table([hardware_row(h) for h in hw.values()],
                 ["slug", "profile", "peak_tflops", "dtype", "bf16_tflops", "fp4_tflops", "hbm_tb_per_s", "hbm_gb", "scale_up_gb_per_s",
                  "scale_out_gb_per_s", "gpus_per_node", "name"],
                 {"peak_tflops": ".0f", "bf16_tflops": ".0f", "fp4_tflops": ".0f", "hbm_tb_per_s": ".2f", "hbm_gb": ".0f", "scale_up_gb_per_s": ".0f",
                  "scale_out_gb_per_s": ".0f"})
    print("\nModels")
    print_table([model_row(m) for m in models.values()],
                 ["slug", "hidden_size", "moe_intermediate_size", "num_layers", "moe_layers", "routed_experts",
                  "experts_per_token", "granularity_h_over_m", "sparsity_e_over_k", "name"],
                 {"granularity_h_over_m": ".2f", "sparsity_e_over_k": ".1f"})
    return 0
