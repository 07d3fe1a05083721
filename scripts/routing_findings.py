"""Record what the routing chapter finds on the raw expert-load files, for clones that lack them.

    .venv/bin/python scripts/routing_findings.py [--counts-dir ../shared/data/deepseek-v3-expert-load]

Runs notebooks/sigma_from_routing.ipynb with papermill at its default parameters on the raw files (the
reference data, not redistributed) and writes only the chapter's headline numbers as printed, with the
parameters and the data's source, to data/deepseek_v3_routing_findings.yaml
(afdlib.report.routing_findings). A clone's routing chapter compares its own findings, on the shipped
fits, with this record and lists which differ.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from afdlib.report.routing_findings import FINDINGS, SAVED, record_path
from afdlib.routing.measured import default_counts_dir

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from fit_routing import SOURCE  # noqa: E402  (one statement of the data's source)


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    import papermill as pm
    ap = argparse.ArgumentParser()
    ap.add_argument("--counts-dir", default=str(default_counts_dir()))
    ap.add_argument("--out", default=str(record_path()))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        pm.execute_notebook(str(ROOT / "notebooks" / "sigma_from_routing.ipynb"), str(Path(tmp) / "run.ipynb"),
                            parameters={"counts_dir": str(Path(args.counts_dir).resolve()),
                                        "output_dir": str(Path(tmp) / "figures")},
                            cwd=tmp, kernel_name="python3", progress_bar=False)
        saved = json.loads((Path(tmp) / "figures" / SAVED).read_text())
    if not saved["measured"]:
        sys.exit(f"{args.counts_dir}: the raw files are not there (the chapter ran on the fits); nothing written")
    doc = {"description": "What the routing chapter (notebooks/sigma_from_routing.py) finds on the measured DeepSeek-V3 "
                          "expert loads, its headline numbers as printed, for a clone's chapter to compare with "
                          "(afdlib.report.routing_findings). Regenerate with scripts/routing_findings.py.",
           "source": SOURCE, "commit": commit(), "parameters": saved["parameters"],
           "what": {k: FINDINGS[k] for k in saved["findings"]}, "findings": saved["findings"]}
    Path(args.out).write_text(yaml.safe_dump(doc, sort_keys=False, width=120, allow_unicode=True))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
