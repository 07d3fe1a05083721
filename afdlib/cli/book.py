"""afd book: execute the notebooks with papermill and build the HTML book."""
from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("book", help="execute every notebook with papermill and build the HTML book")
    p.add_argument("--only", nargs="*", default=None, help="notebook names to execute (others reused)")
    p.add_argument("--jobs", type=int, default=None,
                   help="notebooks executed in parallel (default: the cores + 1)")
    p.add_argument("--no-execute", action="store_true", help="render the notebooks already executed")
    p.add_argument("--hardware", default=None, help="build a separate book for this hardware (slug or .yaml)")
    p.add_argument("--model", default=None, help="... and/or this model (slug, config.json or .yaml)")
    p.add_argument("--out", default=None, help="folder of the separate book (never the reference book's); "
                   "with --only, re-run those chapters of the book already built there for the same pair")
    p.add_argument("--cell-timeout", default=None, metavar="SECONDS",
                   help="seconds one notebook cell may run before the build fails (default: no limit; "
                        "each notebook's line names its slowest cell)")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from afdlib.errors import AfdError
    from afdlib.inputs import checks
    from afdlib.report.book import JOBS, build_book
    from afdlib.report.own_book import build_custom_book
    timeout = None
    if args.cell_timeout is not None:
        try:
            value = float(args.cell_timeout)
        except ValueError:
            value = args.cell_timeout
        timeout = float(checks.positive(value, "--cell-timeout"))
    if args.jobs is not None and args.jobs < 1:
        raise AfdError(f"--jobs must be at least 1, got {args.jobs}")
    jobs = JOBS if args.jobs is None else args.jobs
    if args.only is not None and not args.only:
        raise AfdError("--only needs at least one notebook name")
    if args.out or args.hardware or args.model:
        if not args.out:
            raise AfdError("--hardware/--model build a separate book: give --out DIR")
        if args.no_execute:
            raise AfdError("--out builds a separate book: --no-execute does not apply (--only re-runs chapters)")
        return build_custom_book(Path(args.out), args.hardware, args.model, jobs, args.only, timeout)
    return build_book(only=args.only, jobs=jobs, execute=not args.no_execute, cell_timeout=timeout)
