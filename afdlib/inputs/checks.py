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
balancedness    number in [1/R, 1]          "in [1/R, 1] (... over R ranks)"
label           a string or a number        "text" (returned shortened to ``limit``)
==============  ==========================  =========================================

:func:`finite` walks a whole result (dicts, lists, numbers) and refuses any NaN or infinity in it,
:func:`finite_text` a sentence with a number formatted into it: a command prints a result, as text
or JSON, only when every number in it is finite.

A number is an ``int`` or ``float`` (numpy scalars included), never a ``bool`` nor a string;
the number checkers also take a real numpy array (as the decode model's grids pass) and check
every element.
"""
from __future__ import annotations

import math
import numbers
import re
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


SHOWN_DIGITS = 40
"""Longest run of digits an error line prints whole; a longer one is shortened (:func:`shortened`)."""
SHOWN_CHARS = 300
"""Longest other value (a path, a name) an error line prints whole."""


def show(value: Any) -> str:
    """A value as the error line prints it: numbers plainly (``-1.0``, ``nan``), anything else by repr;
    shortened (:func:`shortened`: a 300-digit integer reads as its first digits and its length)."""
    if isinstance(value, np.ndarray) or (isinstance(value, numbers.Number) and not isinstance(value, bool)):
        return shortened(str(value))
    return shortened(repr(value))


def shortened(text: str) -> str:
    """``text`` as an error line prints it: a number of more than :data:`SHOWN_DIGITS` digits as
    "99999999... (300 digits)", other text whole up to :data:`SHOWN_CHARS` characters (a path stays
    readable), then cut with "..."."""
    digits = text.strip("'\"").lstrip("+-")
    if digits.isdigit() and len(digits) > SHOWN_DIGITS:
        return f"{text[:8]}... ({len(digits)} digits)"
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 3] + "..."


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
    try:        # an integer beyond float's range (10**400 from a file) is not finite for the model either
        finite = math.isfinite(value) if isinstance(value, (int, float)) else np.all(np.isfinite(value))
    except OverflowError:
        finite = False
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


MAX_INTEGER = 2 ** 53
"""Largest integer any field takes: the largest a float holds exactly (every size and count is multiplied
in floating point; 10**400 would overflow there)."""


def integer(value: Any, name: str = "", where: str = "", lo: int | None = None, hi: int | None = None,
            integral_float: bool = False) -> int:
    """An integer in lo..hi (either bound optional), as ``int``. ``integral_float``: accept a float
    with an integral value too (JSON writers emit ``4096.0``)."""
    ok_type = isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
    if not ok_type and integral_float and isinstance(value, float) and math.isfinite(value) and value.is_integer():
        ok_type = True
    if not ok_type or (lo is not None and value < lo) or (hi is not None and value > hi):
        raise Refused(integer_rule(lo, hi), value, name, where)
    if abs(value) > MAX_INTEGER:          # a count or size the model's float arithmetic cannot carry exactly
        raise Refused(f"at most {MAX_INTEGER:.3g} in size", value, name, where)
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


def balancedness(value: Any, ranks: int, name: str = "", where: str = ""):
    """A balancedness (mean/max load) over ``ranks`` ranks: in [1/ranks, 1]. All the load on one
    rank is the least balanced a placement can be (mean/max = 1/ranks), so a smaller value is no
    placement at all; one rank is always balanced."""
    v = number(value, name, where)
    r = integer(ranks, "ranks", lo=1)
    if not (_all(v * r >= 1) and _all(v <= 1)):
        raise Refused(f"in [1/{r}, 1] (mean/max over {r} ranks is at least 1/{r} = {1 / r:.3g})", value, name, where)
    return value


LABEL_CHARS = 80
"""Longest label (a device's or model's ``name`` from a file) kept for display."""


def label(value: Any, name: str = "", where: str = "", limit: int = LABEL_CHARS) -> str:
    """A name from a file, as text for display: a string or a plain number (YAML reads ``name: 5090``
    as one), refused when it is a list or mapping (a YAML alias can make one of any size) or holds a
    control character, and shortened to ``limit`` characters (``...`` marks the cut)."""
    if isinstance(value, bool) or not isinstance(value, (str, numbers.Real)):
        raise AfdError(line("text", f"a {type(value).__name__}", name, where))  # not the value: it may be huge
    out = " ".join(str(value).split())  # one line: no newline of a file's string reaches the output
    if not out.isprintable():           # nor a terminal's escape sequence (ESC [31m turned the output red)
        bad = next(c for c in out if not c.isprintable())
        raise AfdError(line(f"printable text (it holds the control character {bad!r})", shortened(repr(out)), name, where))
    return out if len(out) <= limit else out[:limit - 3] + "..."


OUT_OF_RANGE = ("these inputs take the model beyond floating point (a rate, size or count near 0 or near 1e308 "
                "among them?); if none is, that is a bug: please report the command line")
"""What a non-finite result says: the likely cause first, then where to send it."""


def finite(doc: Any, name: str = "result") -> Any:
    """``doc`` unchanged when every number in it (nested dicts, lists and tuples) is finite; else
    :class:`AfdError` naming the first non-finite entry's path."""
    def walk(x, path):
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, f"{path}.{k}" if path else str(k))
        elif isinstance(x, (list, tuple)):
            for i, v in enumerate(x):
                walk(v, f"{path}[{i}]")
        elif _is_real(x) and not (math.isfinite(x) if isinstance(x, (int, float)) else np.all(np.isfinite(x))):
            raise AfdError(f"{name} is not finite ({path or 'value'} = {x}): {OUT_OF_RANGE}")
    walk(doc, "")
    return doc


_NON_FINITE = re.compile(r"(?<![\w.])[-+]?(?:nan|inf(?:inity)?)(?!\w)", re.IGNORECASE)


def finite_text(sentence: str, name: str = "result") -> str:
    """``sentence`` unchanged unless a number formatted into it reads ``nan`` or ``inf`` (as Python
    formats them); then :class:`AfdError` quoting it. For computed sentences (an answer's reasons),
    not for names read from files."""
    hit = _NON_FINITE.search(sentence)
    if hit:
        raise AfdError(f"{name} is not finite ('{hit.group()}' in: {sentence[:120]}): {OUT_OF_RANGE}")
    return sentence


# ----------------------------------------------------------------------------- ranges of the decode settings
# One home for the commands' options (afdlib.cli.options) and the sweep's spec (afdlib.sweep.spec): beyond
# them the arithmetic overflows or the value means nothing.
SLO_MS = (0, 1e6)
"""Range of a per-token latency target, ms (open at 0): every command's --slo-ms."""
ACCEPTED_TOKENS = (1, 64)
"""Range of the accepted tokens per step (MTP): --mtp, hfu's --l-accept."""
GAP_MS = (0, 1e5)
"""Range of the fixed gap per step, ms: --t-gap-ms."""
CONTEXT_TOKENS = (0, 1e7)
"""Range of the cached tokens per request: --context."""
MAX_NODES = 100_000
"""Most attention or FFN nodes of an AFD deployment: --n-attn, --n-ffn."""
MAX_DEPLOYMENT_COUNT = 1_000_000
"""Most EP GPUs, redundant experts or requests per GPU: --ep-size, --redundant, --batch-per-gpu."""


def yaml_number(text: str) -> str:
    """How to write ``text`` (a number YAML 1.1 reads as text) as a YAML number: an exponent needs a decimal
    point in the mantissa and a sign ("1.0e+308"); else it was quoted, tagged or has a leading zero (octal)."""
    import re
    m = re.fullmatch(r"\s*([+-]?)(\d*)(?:\.(\d*))?[eE]([+-]?)(\d+)\s*", text)
    if not m:
        lead = re.fullmatch(r"\s*([+-]?)0+(\d[\d.]*)\s*", text)
        return (f"write it without the leading zero, as {''.join(lead.groups())}" if lead
                else f"write it as {text.strip()}, without quotes or a tag")
    sign, whole, frac, esign, exp = m.groups()
    return f"write it as {sign}{whole or '0'}.{frac or '0'}e{esign or '+'}{exp}"


def reads_as_number(text: str) -> bool:
    """Whether Python reads ``text`` as a number (a YAML value read as text that was meant as one)."""
    try:
        return float(text) is not None
    except ValueError:
        return False
