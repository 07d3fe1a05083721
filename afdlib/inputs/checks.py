"""One vocabulary for checking numbers and names: each checker returns the clean value or raises.

Every refusal is one line, ``{where}: {name} must be {rule}, got {value}`` (``where`` and ``name``
optional), raised as :class:`Refused`, an :class:`afdlib.errors.AfdError` that also carries the
rule and the value, so a caller may word the subject its own way (the command line's options,
the notebooks' parameters, the catalogue's files, the decode model's assumptions).

The rules, one wording each:

==============  ==========================  =========================================
checker         accepts                     rule
==============  ==========================  =========================================
number          a finite real number        "a number", then "finite"
positive        number > 0                  "positive"
nonnegative     number >= 0                 ">= 0"
fraction        number in (0, 1]            "in (0, 1]"
share           number in [0, 1]            "in [0, 1]"
in_range        number in [lo, hi]          "in [lo, hi]" (an open end with a parenthesis)
integer         int in lo..hi               "a positive integer", "an integer in lo..hi", ...
one_of          one of the choices          "one of a, b, c"
text            a non-empty string          "a non-empty string"
==============  ==========================  =========================================

A number is an ``int`` or ``float`` (numpy scalars included), never a ``bool`` nor a string;
the number checkers also take a real numpy array (as the decode model's grids pass) and check
every element.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import numpy as np

from afdlib.errors import AfdError


class Refused(AfdError):
    """A value outside its rule; ``str()`` is the whole line, ``rule`` and ``value`` its parts."""

    def __init__(self, rule: str, value: Any, name: str = "", where: str = ""):
        self.rule, self.value, self.name, self.where = rule, value, name, where
        super().__init__(line(rule, show(value), name, where))

    def __reduce__(self):  # pickles (across processes) as the plain one-line error
        return AfdError, (str(self),)


def line(rule: str, shown: str, name: str = "", where: str = "") -> str:
    """The one-line refusal: ``{where}: {name} must be {rule}, got {shown}``."""
    return f"{where}: " * bool(where) + f"{name} " * bool(name) + f"must be {rule}, got {shown}"


def show(value: Any) -> str:
    """A value as the error line prints it: numbers plainly (``-1.0``, ``nan``), anything else by repr."""
    if isinstance(value, np.ndarray) or (isinstance(value, numbers.Number) and not isinstance(value, bool)):
        return str(value)
    return repr(value)


def _is_real(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "iuf"
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _all(ok) -> bool:
    return bool(ok) if isinstance(ok, bool) else bool(np.all(ok))


def number(value: Any, name: str = "", where: str = ""):
    """A finite real number (or real array, every element finite), returned unchanged."""
    if not _is_real(value):
        raise Refused("a number", value, name, where)
    finite = math.isfinite(value) if isinstance(value, (int, float)) else np.all(np.isfinite(value))
    if not finite:
        raise Refused("finite", value, name, where)
    return value


def in_range(value: Any, lo: float, hi: float, name: str = "", where: str = "",
             lo_open: bool = False, hi_open: bool = False):
    """A finite number in [lo, hi] (``lo_open``: lo excluded; ``hi_open``: hi excluded)."""
    v = number(value, name, where)
    above = (v > lo) if lo_open else (v >= lo)
    below = (v < hi) if hi_open else (v <= hi)
    if not (_all(above) and _all(below)):
        raise Refused(f"in {'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}", value, name, where)
    return value


def positive(value: Any, name: str = "", where: str = ""):
    """A finite number > 0."""
    if not _all(number(value, name, where) > 0):
        raise Refused("positive", value, name, where)
    return value


def at_least(value: Any, lo: float, name: str = "", where: str = ""):
    """A finite number >= ``lo``."""
    if not _all(number(value, name, where) >= lo):
        raise Refused(f">= {lo:g}", value, name, where)
    return value


def nonnegative(value: Any, name: str = "", where: str = ""):
    """A finite number >= 0."""
    return at_least(value, 0, name, where)


def fraction(value: Any, name: str = "", where: str = ""):
    """A number in (0, 1]: an efficiency, a balancedness, a usable share of a resource."""
    return in_range(value, 0, 1, name, where, lo_open=True)


def share(value: Any, name: str = "", where: str = ""):
    """A number in [0, 1]: an overlap, a probability."""
    return in_range(value, 0, 1, name, where)


def integer_rule(lo: int | None = None, hi: int | None = None) -> str:
    """How :func:`integer` words its bounds: "a positive integer", "an integer in 1..64", ..."""
    if hi is not None:
        return f"an integer in {'-inf' if lo is None else lo}..{hi}"
    return {None: "an integer", 0: "a non-negative integer", 1: "a positive integer"}.get(lo, f"an integer >= {lo}")


def integer(value: Any, name: str = "", where: str = "", lo: int | None = None, hi: int | None = None,
            integral_float: bool = False) -> int:
    """An integer in lo..hi (either bound optional), as ``int``. ``integral_float``: accept a float
    with an integral value too (JSON writers emit ``4096.0``)."""
    ok_type = isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
    if not ok_type and integral_float and isinstance(value, float) and math.isfinite(value) and value.is_integer():
        ok_type = True
    if not ok_type or (lo is not None and value < lo) or (hi is not None and value > hi):
        raise Refused(integer_rule(lo, hi), value, name, where)
    return int(value)


def one_of(value: Any, choices: Sequence, name: str = "", where: str = ""):
    """One of ``choices`` (compared with ==), returned unchanged."""
    if isinstance(value, np.ndarray) or value not in choices:
        raise Refused(f"one of {', '.join(map(str, choices))}", value, name, where)
    return value


def text(value: Any, name: str = "", where: str = "") -> str:
    """A string with something other than blanks in it."""
    if not isinstance(value, str) or not value.strip():
        raise Refused("a non-empty string", value, name, where)
    return value
