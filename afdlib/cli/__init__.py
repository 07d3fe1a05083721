"""The ``afd`` command: the paper's models from the shell, every subcommand with ``--json``.

One module per subcommand (``add_parser(subparsers)`` registers it, ``run(args)`` runs it);
:mod:`afdlib.cli.options` holds what they share. Imports are deferred into each ``run`` so that
a number comes back in well under a second (no plotting or notebook machinery unless ``afd book``
is asked for). User mistakes print one line ``afd: error: ...`` and exit 2; no traceback. Each
command parses, checks ranges and physics (:mod:`afdlib.inputs.checks`), refuses an option it would
ignore (:func:`given_options` records what the line gave), then computes; it prints a result only
when every number in it is finite. Ctrl-C ends any command with one line and status 130.
"""
from __future__ import annotations

import argparse
import re
import sys
import warnings
from typing import Callable, Sequence

from afdlib.cli import advise, balance, book, catalog, hfu, intensity, model, penalty, simulate, sweep, throughput

SUBCOMMANDS = (catalog, model, intensity, hfu, penalty, balance, throughput, advise, simulate, sweep, book)
"""The subcommands in the order ``afd --help`` lists them."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``afd <command>: error: ...``) and status 2, and an
    option is taken only by its whole name (``--mod`` is not ``--model``: a prefix that another option
    added later would also start with would change meaning silently)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    argv: Sequence[str] = ()
    """The line being parsed (the top parser's): an unknown option of a command points to its own --help."""

    def error(self, message):
        prog = self.prog
        commands = [a for a in self._actions if isinstance(a, argparse._SubParsersAction)]
        if commands and message.startswith("unrecognized arguments"):   # raised by the top parser
            given = [t for t in self.argv if t in commands[0].choices]
            prog = commands[0].choices[given[0]].prog if given else prog
        self.exit(2, f"afd: error: {message} (see {prog} --help)\n")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``afd`` parser; for a line whose first word is a subcommand (``argv``), only that subcommand's
    parser is built (the others' ~150 options are half of a fresh query's own time, and cannot take any
    of the line: a subcommand is chosen by its whole name). Any other line (none, ``--help``, a
    mistyped command) gets every subcommand, so help and "invalid choice" list them all."""
    parser = _Parser(prog="afd", description="Attention-FFN disaggregation vs expert "
                     "parallelism: the models of arXiv 2602.09721.")
    from afdlib import __version__
    parser.add_argument("--version", action="version", version=f"afd {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    first = argv[0] if argv else None
    named = [c for c in SUBCOMMANDS if c.__name__.rsplit(".", 1)[-1] == first]
    for command in named or SUBCOMMANDS:
        command.add_parser(sub)
    return parser


def given_options(argv: Sequence[str] | None, parser: argparse.ArgumentParser | None = None) -> set[str]:
    """The destinations of the options ``argv`` gives (a default is not given): the same line parsed
    again by a parser whose defaults are all suppressed (``parser``, once its own parse is done: its
    defaults are suppressed in place; else a new one). A command refuses an option it would ignore."""
    quiet = parser if parser is not None else build_parser()

    def suppress(p: argparse.ArgumentParser) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    suppress(sub)
            else:
                action.default = argparse.SUPPRESS
        p._defaults.clear()
    suppress(quiet)
    return set(vars(quiet.parse_args(argv))) - {"command"}


_LONG_NUMBER = re.compile(r"(?<![\w/.\-])\d{16,}(?:\.\d+)?(?![\w/])")


def readable_numbers(message: str) -> str:
    """``message`` with each computed number of 16 or more digits written in 3 significant figures
    (a TPOT of 10^300 ms from a rate of 10^-300 reads ``3.43e+303``, not 300 digits); names and paths
    with digits in them are left as they are."""
    return _LONG_NUMBER.sub(lambda m: f"{float(m.group()):.3g}", message)


def main(argv: Sequence[str] | None = None) -> int:
    from afdlib.errors import AfdError
    line = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(line)
    parser.argv = line
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # usage errors (one line, status 2), --help and --version (0)
        return int(e.code or 0)
    twice = repeated_option(sys.argv[1:] if argv is None else list(argv), parser)
    if twice:
        print(f"afd: error: {twice} given twice; give it once (the last one would win without a word)",
              file=sys.stderr)
        return 2
    args.given = given_options(argv, parser)   # the parser is not used again
    func: Callable = args.func
    stdout = sys.stdout
    if not getattr(args, "json", False):        # text output: no computed number of hundreds of digits
        sys.stdout = _ReadableNumbers(stdout)
    try:
        with warnings.catch_warnings():  # overflow in extreme inputs: results are checked to be finite
            warnings.simplefilter("ignore", RuntimeWarning)
            return int(func(args) or 0)
    except AfdError as e:
        print(f"afd: error: {readable_numbers(str(e))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt as e:  # Ctrl-C (or TERM, HUP in a sweep): one line, the shell's status, no traceback
        below = getattr(e, "mid_line", False) or getattr(sys.stderr, "isatty", lambda: False)()
        print("\nafd: interrupted" if below else "afd: interrupted", file=sys.stderr)  # below a bar's line, or ^C
        return 128 + int(getattr(e, "signum", 2))
    finally:
        sys.stdout = stdout


class _ReadableNumbers:
    """Standard output with each computed number of 16 or more digits shortened (:func:`readable_numbers`):
    a TPOT of 10^300 ms from a what-if efficiency of 10^-300 prints as 4.13e+303, as in --json."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(readable_numbers(text))

    def __getattr__(self, name):
        return getattr(self._stream, name)


def repeated_option(argv: Sequence[str], parser: argparse.ArgumentParser) -> str | None:
    """The first option ``argv`` gives twice that takes one value (the last one would win without a word:
    ``--model kimi-k2 --model deepseek-v3``); None if there is none. Options that collect (append, count)
    may repeat."""
    single = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                for a in sub._actions:
                    if not isinstance(a, (argparse._AppendAction, argparse._CountAction, argparse._HelpAction)):
                        single.update((o, a.option_strings[-1]) for o in a.option_strings)
    seen = set()
    for token in argv:
        if token == "--":
            break
        name = single.get(token.split("=", 1)[0])
        if name is None:
            continue
        if name in seen:
            return name
        seen.add(name)
    return None


if __name__ == "__main__":
    sys.exit(main())
