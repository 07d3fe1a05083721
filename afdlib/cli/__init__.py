"""The ``afd`` command: the paper's models from the shell, every subcommand with ``--json``.

One module per subcommand (``add_parser(subparsers)`` registers it, ``run(args)`` runs it);
:mod:`afdlib.cli.options` holds what they share. Imports are deferred into each ``run`` so that
a number comes back in well under a second (no plotting or notebook machinery unless ``afd book``
is asked for). User mistakes print one line ``afd: error: ...`` and exit 2; no traceback.
"""
from __future__ import annotations

import argparse
import sys
import warnings
from typing import Callable, Sequence

from afdlib.cli import advise, balance, book, catalog, hfu, intensity, penalty, simulate, throughput

SUBCOMMANDS = (catalog, intensity, hfu, penalty, balance, throughput, advise, simulate, book)
"""The subcommands in the order ``afd --help`` lists them."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``afd <command>: error: ...``) and status 2."""

    def error(self, message):
        self.exit(2, f"afd: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="afd", description="Attention-FFN disaggregation vs expert "
                     "parallelism: the models of arXiv 2602.09721.")
    from afdlib import __version__
    parser.add_argument("--version", action="version", version=f"afd {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    for command in SUBCOMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from afdlib.errors import AfdError
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # usage errors (one line, status 2), --help and --version (0)
        return int(e.code or 0)
    func: Callable = args.func
    try:
        with warnings.catch_warnings():  # overflow in extreme inputs: results are checked to be finite
            warnings.simplefilter("ignore", RuntimeWarning)
            return int(func(args) or 0)
    except AfdError as e:
        print(f"afd: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
