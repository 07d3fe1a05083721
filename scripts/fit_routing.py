"""Derive the shipped routing summary from SGLang's DeepSeek-V3 expert-load files.

    .venv/bin/python scripts/fit_routing.py [--counts-dir ../shared/data/deepseek-v3-expert-load]

The raw files are reference data that the project reads but does not redistribute; this script
writes only what is derived from them (per-layer Zipf exponents and fit quality, summary
balancedness) to data/deepseek_v3_routing_fit.yaml, which the book uses when the raw files are
absent.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import yaml

from afdlib.routing.balance import balance_report
from afdlib.routing.measured import fit_zipf, load_counts, moe_layers

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ("SGLang large-scale EP statistics (sglang issue #6017, attachment_ep_statistics.zip; git copy "
          "GeneratedRandomly/SGLang-reproduce @c79682c8cf0f attachment_ep_statistics/): accumulated tokens per "
          "routed expert of DeepSeek-V3, benchmark prompts (workload undocumented)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--counts-dir", default=str(ROOT.parent / "shared" / "data" / "deepseek-v3-expert-load"))
    ap.add_argument("--out", default=str(ROOT / "data" / "deepseek_v3_routing_fit.yaml"))
    args = ap.parse_args()
    files = {}
    for path in sorted(Path(args.counts_dir).glob("*.json")):
        counts = load_counts(path)
        layers = moe_layers(counts)
        fits = [fit_zipf(counts[i]) for i in layers]
        files[path.stem] = {
            "moe_layers": [int(i) for i in layers],
            "selections_per_layer_median": float(np.median(counts[layers].sum(axis=1))),
            "zipf_exponent": [round(f.exponent, 3) for f in fits],
            "zipf_total_variation": [round(f.total_variation, 4) for f in fits],
            "expert_max_over_mean": [round(f.max_over_mean_measured, 3) for f in fits],
            "median_balancedness": {
                f"ep{r}_contiguous": round(balance_report(counts, r, 0).median_contiguous, 4) for r in (8, 32, 64, 144)
            } | {
                "ep32_redundant32": round(balance_report(counts, 32, 32).median_redundant, 4),
                "ep144_redundant32": round(balance_report(counts, 144, 32).median_redundant, 4),
            },
        }
        print(f"{path.stem}: median Zipf s = {np.median([f.exponent for f in fits]):.3f}")
    doc = {
        "description": "Derived from measured DeepSeek-V3 expert loads; per MoE layer, a least-squares Zipf exponent "
                       "for the sorted expert shares (afdlib.routing.measured.fit_zipf), its total-variation distance to "
                       "the measured shares, and the measured hottest-expert max/mean. Regenerate with "
                       "scripts/fit_routing.py.",
        "source": SOURCE, "model": "deepseek-v3", "routed_experts": 256, "experts_per_token": 8, "files": files,
    }
    Path(args.out).write_text(yaml.safe_dump(doc, sort_keys=False, width=120, default_flow_style=None))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
