"""A notebook stopped by a user error ends papermill as such an error ends ``afd``: with one line
(``papermill: error: notebook parameter 'sigmas' must be ...``) and status 2, instead of
papermill's own traceback (the error's line buried in it) and status 1.

papermill loads the ``papermill.engine`` entry points when it is imported, whatever engine a run
uses; this module is one (pyproject.toml), and loading it installs :func:`excepthook`. The engine it
registers, ``afd``, is papermill's default (nbclient) under another name: an entry point must name
one. A user error is an :class:`afdlib.errors.AfdError` raised in the notebook (every parameter
check raises one); any other exception reaches the hook that was there before.
"""
from __future__ import annotations

import sys


def _user_error_names() -> set[str]:
    """The class names of AfdError and its subclasses (a notebook's error is known by name only)."""
    from afdlib.errors import AfdError
    from afdlib.inputs import checks  # noqa: F401  (defines Refused, a subclass)
    names, todo = set(), [AfdError]
    while todo:
        kind = todo.pop()
        names.add(kind.__name__)
        todo += kind.__subclasses__()
    return names


def user_error_line(error: BaseException) -> str | None:
    """The one line for a papermill error that is a notebook's user error, else None."""
    from papermill.exceptions import PapermillExecutionError
    if isinstance(error, PapermillExecutionError) and error.ename in _user_error_names():
        return f"papermill: error: {error.evalue}"
    return None


_previous = sys.excepthook


def excepthook(kind, error, traceback) -> None:
    """One line and status 2 for a notebook's user error; anything else as before."""
    line = user_error_line(error)
    if line is None:
        _previous(kind, error, traceback)
        return
    print(line, file=sys.stderr)
    raise SystemExit(2)   # raised in sys.excepthook, SystemExit sets the interpreter's exit status


class Engine:
    """papermill's default engine (nbclient), as ``--engine afd``."""

    @classmethod
    def execute_notebook(cls, *args, **kwargs):
        from papermill.engines import NBClientEngine
        return NBClientEngine.execute_notebook(*args, **kwargs)


sys.excepthook = excepthook
