"""Run NVIDIA aiconfigurator on the comparison settings and write ``data/aiconfigurator.csv``.

aiconfigurator is an optional extra (about 850 MB), never needed to build the book or run the
tests: they read the committed CSV. To regenerate it (offline once installed; about two minutes)::

    python -m venv .venv-aic && .venv-aic/bin/pip install -e '.[aiconfigurator]'
    .venv-aic/bin/python scripts/aiconfigurator_grid.py [--out data/aiconfigurator.csv] [--only SUBSTRING]

Every setting of :func:`afdlib.peers.aiconfigurator.grid_settings` and
:func:`afdlib.peers.aiconfigurator.deployment_settings` is run twice: with the tool's default MoE tables
(power-law expert load, exponent 1.01) and with its balanced ones. A setting the tool refuses is
kept with its error in ``status``. Each row records the tool's version, its database version and
the equivalent command line (``args``).
"""
from __future__ import annotations

import argparse
import csv
import datetime
import logging
import math
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from afdlib.peers.aiconfigurator import (COLUMNS, DISTRIBUTIONS, MODELS, TOOL, cli_command,  # noqa: E402
                                         deployment_settings, grid_settings, op_family, results_path,
                                         tool_kwargs)


def run_one(api, setting, distribution: str) -> dict:
    import aiconfigurator
    row = {k: "" for k in COLUMNS}
    row.update({"id": setting.id, "kind": setting.kind, "deployment": setting.deployment, "note": setting.note,
                "distribution": distribution, "tool": TOOL, "tool_version": aiconfigurator.__version__,
                "backend": setting.backend, "args": cli_command(setting, distribution),
                "run_date": datetime.date.today().isoformat(), "design": setting.design, "model": setting.model,
                "hf_model": MODELS[setting.model], "hardware": setting.hardware, "system": setting.system,
                "batch_per_gpu": setting.batch_per_gpu, "context": setting.context, "ep_size": setting.ep_size,
                "attn_gpus": setting.attn_gpus, "ffn_gpus": setting.ffn_gpus,
                "micro_batches": setting.micro_batches, "nextn": setting.nextn,
                "nextn_accepted": setting.nextn_accepted, **setting.quant})
    for k in ("tpot_ms", "tokens_per_s_per_gpu", "attn_ms", "ffn_ms", "other_ms", "t_attn_us", "t_ffn_us",
              "t_comm_us", "memory_gb"):
        row[k] = math.nan
    row["oom"] = 0
    build = api._build_model_config_original

    def build_with(*a, **k):
        cfg = build(*a, **k)
        cfg.workload_distribution = "power_law" if distribution.startswith("power_law") else distribution
        return cfg

    api._build_model_config = build_with
    try:
        r = api.cli_estimate(**tool_kwargs(setting))
    except Exception as e:  # the tool refuses the setting: keep the reason
        why = str(e).splitlines()[0].split(" at /")[0]      # no local paths in the committed file
        row["status"] = f"refused: {type(e).__name__}: {why[:200]}"
        row["backend_version"] = "unknown"
        return row
    raw = r.raw
    row["status"] = "ok"
    row["backend_version"] = str(r.backend_version)
    row["tpot_ms"] = float(r.tpot)
    row["tokens_per_s_per_gpu"] = float(raw["tokens/s/gpu"])
    if setting.design == "ep":
        fam = {"attention": 0.0, "ffn": 0.0, "other": 0.0}
        for name, ms in r.summary.get_generation_latency_dict().items():
            fam[op_family(name)] += float(ms)
        row["attn_ms"], row["ffn_ms"], row["other_ms"] = fam["attention"], fam["ffn"], fam["other"]
        row["memory_gb"] = float(raw["memory"])
        row["oom"] = int(bool(r.summary.check_oom()))
    else:
        row["t_attn_us"] = float(raw["t_a_layer"]) * 1e3
        row["t_ffn_us"] = float(raw["t_f_layer"]) * 1e3
        row["t_comm_us"] = float(raw["t_c_layer"]) * 1e3
        row["memory_gb"] = max(float(raw["(a)memory"]), float(raw["(f)memory"]))
        row["oom"] = int(bool(raw["(a)is_oom"]) or bool(raw["(f)is_oom"]))
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=results_path())
    ap.add_argument("--only", default="", help="run only settings whose id contains this")
    args = ap.parse_args(argv)
    try:
        import aiconfigurator.cli.api as api
    except ImportError:
        print("aiconfigurator is not installed: pip install -e '.[aiconfigurator]'", file=sys.stderr)
        return 2
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    api._build_model_config_original = api._build_model_config
    settings, refused = deployment_settings()
    settings = [s for s in grid_settings() + settings if args.only in s.id]
    for slug, why in refused.items():
        print(f"not expressible: {slug}: {why}", file=sys.stderr)
    rows, t0 = [], time.perf_counter()
    for i, s in enumerate(settings, 1):
        for d in DISTRIBUTIONS:
            rows.append(run_one(api, s, d))
        print(f"[{i}/{len(settings)}] {s.id}: {rows[-2]['status'][:60]} "
              f"tpot {rows[-2]['tpot_ms']:.2f} ms ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    rows.sort(key=lambda r: (r["id"], DISTRIBUTIONS.index(r["distribution"])))
    with open(args.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(COLUMNS), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) and not math.isnan(v) else
                            "" if isinstance(v, float) else v) for k, v in r.items()})
    ok = sum(r["status"] == "ok" for r in rows)
    print(f"wrote {args.out}: {len(rows)} rows, {ok} ok, in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
