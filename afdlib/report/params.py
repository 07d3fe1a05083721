"""Notebook parameters: every chapter checks what papermill injected before it computes anything.

``check_parameters(globals(), name=validator, ...)`` fails with one :class:`AfdError` line naming
the parameter when a value has the wrong type or range, and when a name is not a parameter of the
notebook at all (papermill only warns about a misspelt ``-p hardwar h800`` and runs the defaults).
A validator takes the value and returns it (possibly normalised) or raises
:class:`afdlib.inputs.checks.Refused`; the number and name rules are those of
:mod:`afdlib.inputs.checks`, worded as everywhere else in the library.
"""
from __future__ import annotations

import types
from pathlib import Path
from typing import Any, Callable

from afdlib.errors import AfdError
from afdlib.inputs import checks

_IPYTHON = {"In", "Out", "get_ipython", "exit", "quit", "open"}


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
        except checks.Refused as e:
            refused = checks.Refused(e.rule, namespace[name], f"notebook parameter '{name}'")
            if isinstance(namespace[name], str) and e.rule.startswith("a list"):
                raise AfdError(f"{refused} (papermill's -p passes text: give a list as YAML, "
                               f"-y \"{name}: {_as_yaml_list(namespace[name])}\")") from None
            raise refused from None
    from afdlib.report.readable import forget
    from afdlib.report.style import set_run
    set_run({name: namespace[name] for name in spec if name != "output_dir"})
    forget()                    # this run's glued values only (afdlib.report.readable.show_chapter)


def require_items(name: str, given: list, needed: list, why: str) -> None:
    """One :class:`AfdError` line when the list parameter ``name`` lacks any of ``needed`` (``why``: what
    the chapter reads them as)."""
    missing = [x for x in needed if x not in given]
    if missing:
        raise AfdError(f"notebook parameter '{name}' must include {', '.join(needed)} ({why}); "
                       f"{', '.join(missing)} missing")


def _as_yaml_list(text_value: str) -> str:
    """``[0.5, 0.8]`` as given, ``0.5,0.8`` or ``h800`` in brackets."""
    text_value = text_value.strip()
    return text_value if text_value.startswith("[") else f"[{text_value}]"


positive = checks.positive
"""A finite number > 0."""
nonnegative = checks.nonnegative
"""A finite number >= 0."""
fraction = checks.fraction
"""A number in (0, 1]."""
share = checks.share
"""A number in [0, 1]."""
text = checks.text
"""A non-empty string."""


def folder(v):
    """An existing folder (relative paths: to the notebook's working directory)."""
    checks.text(v)
    if not Path(v).is_dir():
        raise checks.Refused("an existing folder", v)
    return v


def integer(lo: int = 1, hi: int = 10**6) -> Callable:
    """An integer in lo..hi."""
    def check(v):
        return checks.integer(v, lo=lo, hi=hi)
    return check


def one_of(*choices: str) -> Callable:
    def check(v):
        return checks.one_of(v, choices)
    return check


def list_of(item: Callable, min_len: int = 1) -> Callable:
    """A list (or tuple) of at least ``min_len`` items, each passing ``item``; returned as a list."""
    def check(v):
        if not isinstance(v, (list, tuple)) or len(v) < min_len:
            raise checks.Refused(f"a list of at least {min_len}", v)
        try:
            return [item(x) for x in v]
        except checks.Refused as e:
            raise checks.Refused(f"a list whose items are each {e.rule}", v) from None
    return check


def optional(check: Callable) -> Callable:
    def wrapped(v):
        return None if v is None else check(v)
    return wrapped


def price_map(v):
    """None, or a mapping of hardware slug to a positive price (USD per GPU-hour)."""
    if v is None:
        return v
    rule = "None or a mapping of hardware slug to a positive USD price per GPU-hour"
    if not isinstance(v, dict) or not all(isinstance(k, str) for k in v):
        raise checks.Refused(rule, v)
    try:
        for p in v.values():
            checks.positive(p)
    except checks.Refused:
        raise checks.Refused(rule, v) from None
    return v


PROFILE_HW = one_of("paper", "datasheet")
PROFILE_MODEL = one_of("paper", "reference")
