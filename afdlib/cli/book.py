"""afd book: execute the notebooks with papermill and build the HTML book."""
from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("book", help="execute every notebook with papermill and build the HTML book")
    p.add_argument("--only", nargs="*", default=None, help="notebook names to execute (others reused)")
    p.add_argument("--jobs", type=int, default=2, help="notebooks executed in parallel (default 2)")
    p.add_argument("--no-execute", action="store_true", help="render the notebooks already executed")
    p.add_argument("--hardware", default=None, help="build a separate book for this hardware (slug or .yaml)")
    p.add_argument("--model", default=None, help="... and/or this model (slug, config.json or .yaml)")
    p.add_argument("--out", default=None, help="folder of the separate book (never the reference book's)")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from afdlib.errors import AfdError
    from afdlib.report.book import build_book, build_custom_book
    if args.out or args.hardware or args.model:
        if not args.out:
            raise AfdError("--hardware/--model build a separate book: give --out DIR")
        if args.only is not None or args.no_execute:
            raise AfdError("--out builds a whole separate book: --only and --no-execute do not apply")
        return build_custom_book(Path(args.out), args.hardware, args.model, args.jobs)
    return build_book(only=args.only, jobs=args.jobs, execute=not args.no_execute)
