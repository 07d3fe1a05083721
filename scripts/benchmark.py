"""Benchmarks (not timed tests): whole-book build from scratch, and the afd command's latency.

    .venv/bin/python scripts/benchmark.py            # book build + CLI
    .venv/bin/python scripts/benchmark.py --cli-only

Prints wall-clock seconds; run it on an idle machine. The target is about a minute for the
whole book on 2 cores.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def timed(cmd: list[str], repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli-only", action="store_true")
    args = ap.parse_args()
    print(f"cores: {os.cpu_count()}")
    afd = str(BIN / "afd")
    for argv in (["intensity", "--model", "deepseek-v3", "--hardware", "h800", "--json"], ["catalog", "--json"]):
        print(f"afd {' '.join(argv)}: {timed([afd, *argv], repeat=5):.3f} s (best of 5)")
    if args.cli_only:
        return
    for path in (ROOT / "_build", ROOT / "book" / "generated"):
        shutil.rmtree(path, ignore_errors=True)
    print(f"whole book from scratch (afd book): {timed([afd, 'book']):.1f} s")


if __name__ == "__main__":
    main()
