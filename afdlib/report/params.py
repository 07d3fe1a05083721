"""Notebook parameters: every chapter checks what papermill injected before it computes anything.

``check_parameters(globals(), name=validator, ...)`` fails with one :class:`AfdError` line naming
the parameter when a value has the wrong type or range, and when a name is not a parameter of the
notebook at all (papermill only warns about a misspelt ``-p hardwar h800`` and runs the defaults).
A validator takes the value and returns it (possibly normalised) or raises.
"""
from __future__ import annotations

import math
import types
from typing import Any, Callable

from afdlib.errors import AfdError

_IPYTHON = {"In", "Out", "get_ipython", "exit", "quit", "open"}


class _Bad(Exception):
    pass


def check_parameters(namespace: dict, **spec: Callable[[Any], Any]) -> None:
    """Validate the notebook's parameters in ``namespace`` (its ``globals()``) against ``spec``."""
    unknown = sorted(k for k, v in namespace.items()
                     if not k.startswith("_") and k not in spec and k not in _IPYTHON
                     and not isinstance(v, (types.ModuleType, types.FunctionType, type)) and not callable(v))
    if unknown:
        raise AfdError(f"unknown notebook parameter(s) {', '.join(unknown)}; valid: {', '.join(spec)}")
    for name, check in spec.items():
        if name not in namespace:
            raise AfdError(f"notebook parameter '{name}' is missing")
        try:
            namespace[name] = check(namespace[name])
        except _Bad as e:
            raise AfdError(f"notebook parameter '{name}' {e}, got {namespace[name]!r}") from None
    from afdlib.report.style import set_run
    set_run({name: namespace[name] for name in spec if name != "output_dir"})


def _number(v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise _Bad("must be a finite number")
    return v


def positive(v):
    if _number(v) <= 0:
        raise _Bad("must be positive")
    return v


def nonnegative(v):
    if _number(v) < 0:
        raise _Bad("must be >= 0")
    return v


def fraction(v):
    if not 0 < _number(v) <= 1:
        raise _Bad("must be in (0, 1]")
    return v


def share(v):
    if not 0 <= _number(v) <= 1:
        raise _Bad("must be in [0, 1]")
    return v


def integer(lo: int = 1, hi: int = 10**6) -> Callable:
    def check(v):
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise _Bad(f"must be an integer in {lo}..{hi}")
        return v
    return check


def text(v):
    if not isinstance(v, str) or not v.strip():
        raise _Bad("must be a non-empty string")
    return v


def one_of(*choices: str) -> Callable:
    def check(v):
        if v not in choices:
            raise _Bad(f"must be one of {', '.join(choices)}")
        return v
    return check


def list_of(item: Callable, min_len: int = 1) -> Callable:
    def check(v):
        if not isinstance(v, (list, tuple)) or len(v) < min_len:
            raise _Bad(f"must be a list of at least {min_len}")
        try:
            return [item(x) for x in v]
        except _Bad as e:
            raise _Bad(f"must be a list whose items each {e}") from None
    return check


def optional(check: Callable) -> Callable:
    def wrapped(v):
        return None if v is None else check(v)
    return wrapped


def price_map(v):
    if v is None:
        return v
    if not isinstance(v, dict) or not all(isinstance(k, str) and isinstance(p, (int, float)) and not isinstance(p, bool)
                                          and math.isfinite(p) and p > 0 for k, p in v.items()):
        raise _Bad("must be None or a mapping of hardware slug to a positive USD price per GPU-hour")
    return v


PROFILE_HW = one_of("paper", "datasheet")
PROFILE_MODEL = one_of("paper", "reference")
