"""afd book: execute the notebooks with papermill and build the HTML book."""
from __future__ import annotations

import argparse
from pathlib import Path


MAX_JOBS = 64
"""Most notebooks executed at once (a kernel each, about 150 MB; the reference book has 15 chapters)."""
CELL_TIMEOUT_S = (1.0, 7 * 86400.0)
"""A cell's time limit: at least a second (a kernel's start alone takes a fraction of one), at most a week."""


def add_parser(subparsers) -> argparse.ArgumentParser:
    from afdlib.cli.options import bounded_float, bounded_int
    p = subparsers.add_parser("book", help="execute every notebook with papermill and build the HTML book")
    p.add_argument("--only", nargs="*", default=None, help="notebook names to execute (others reused)")
    p.add_argument("--jobs", type=bounded_int("--jobs", 1, MAX_JOBS), default=None,
                   help=f"notebooks executed in parallel, 1-{MAX_JOBS} (default: the cores + 1)")
    p.add_argument("--no-execute", action="store_true", help="render the notebooks already executed")
    p.add_argument("--hardware", default=None, help="build a separate book for this hardware (slug or .yaml)")
    p.add_argument("--model", default=None, help="... and/or this model (slug, config.json or .yaml)")
    p.add_argument("--out", default=None, help="folder of the separate book (never the reference book's); "
                   "with --only, re-run those chapters of the book already built there for the same pair")
    p.add_argument("--cell-timeout", type=bounded_float("--cell-timeout", *CELL_TIMEOUT_S), default=None,
                   metavar="SECONDS", help=f"seconds one notebook cell may run before the build fails, "
                   f"{CELL_TIMEOUT_S[0]:g}-{CELL_TIMEOUT_S[1]:g} (default: no limit; each notebook's line names its "
                   "slowest cell)")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from afdlib.errors import AfdError
    from afdlib.report.book import JOBS, build_book
    from afdlib.report.own_book import build_custom_book
    timeout = args.cell_timeout
    jobs = JOBS if args.jobs is None else args.jobs
    if args.only is not None and not args.only:
        raise AfdError("--only needs at least one notebook name")
    if args.only and len(set(args.only)) < len(args.only):
        raise AfdError(f"--only names {next(n for n in args.only if args.only.count(n) > 1)} twice")
    if args.only and args.no_execute:
        raise AfdError("--only names notebooks to execute; --no-execute executes none")
    if args.out or args.hardware or args.model:
        if not args.out:
            raise AfdError("--hardware/--model build a separate book: give --out DIR")
        if args.no_execute:
            raise AfdError("--out builds a separate book: --no-execute does not apply (--only re-runs chapters)")
        return build_custom_book(Path(args.out), args.hardware, args.model, jobs, args.only, timeout)
    return build_book(only=args.only, jobs=jobs, execute=not args.no_execute, cell_timeout=timeout)
