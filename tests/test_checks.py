"""afdlib.inputs.checks: each rule accepts its boundary and refuses the value just outside it;
NaN, infinity, booleans and strings are never numbers; every refusal is one line naming the thing."""
import math
import pickle
import re

import numpy as np
import pytest

from afdlib.errors import AfdError
from afdlib.inputs import checks

BELOW_0 = -math.ulp(0.0)          # the largest float below 0 (-5e-324)
ABOVE_1 = math.nextafter(1.0, 2)  # the smallest float above 1

# checker, boundary values it accepts, values just outside it refuses, the rule's wording
CASES = [
    (checks.positive, [math.ulp(0.0), 1e308], [0.0, -0.0, BELOW_0], "positive"),
    (checks.nonnegative, [0.0, -0.0, 1e308], [BELOW_0, -1], ">= 0"),
    (checks.fraction, [math.ulp(0.0), 1.0, 1], [0.0, ABOVE_1], "in (0, 1]"),
    (checks.share, [0.0, 1.0, 0, 1], [BELOW_0, ABOVE_1], "in [0, 1]"),
]


@pytest.mark.parametrize("check, inside, outside, rule", CASES, ids=[c[0].__name__ for c in CASES])
def test_number_rules_at_their_boundaries(check, inside, outside, rule):
    for v in inside:
        assert check(v, "x") == v
    for v in outside:
        with pytest.raises(AfdError, match="^" + re.escape(f"x must be {rule}, got {v}") + "$"):
            check(v, "x")


@pytest.mark.parametrize("check", [checks.number, checks.positive, checks.nonnegative, checks.fraction,
                                   checks.share, lambda v, name: checks.in_range(v, -1e308, 1e308, name)])
def test_non_numbers_and_non_finite_numbers_are_refused(check):
    for v in (math.nan, math.inf, -math.inf, np.float64("nan")):
        with pytest.raises(AfdError, match="^q must be finite, got "):
            check(v, "q")
    for v in (True, False, np.bool_(True), "1", "0.5", None, [0.5], 1j):
        with pytest.raises(AfdError, match="^q must be a number, got "):
            check(v, "q")


def test_in_range_ends_open_and_closed():
    assert checks.in_range(0, 0, 10) == 0 and checks.in_range(10, 0, 10) == 10
    with pytest.raises(AfdError, match=r"must be in \(0, 10\], got 0"):
        checks.in_range(0, 0, 10, lo_open=True)
    with pytest.raises(AfdError, match=r"must be in \[0, 10\), got 10"):
        checks.in_range(10, 0, 10, hi_open=True)
    with pytest.raises(AfdError, match=r"must be in \[0, 10\], got 10.000000000000002"):
        checks.in_range(math.nextafter(10, 11), 0, 10)
    assert checks.in_range(1e-7, 0, 1e6, lo_open=True) == 1e-7


def test_numpy_scalars_and_arrays_are_numbers():
    assert checks.positive(np.float32(2.5)) == 2.5 and checks.positive(np.int64(3)) == 3
    grid = np.array([[0.0, 0.5], [1.0, 0.25]])
    assert checks.share(grid) is grid
    with pytest.raises(AfdError, match=r"must be in \(0, 1\]"):
        checks.fraction(grid)  # one zero in the grid
    with pytest.raises(AfdError, match="must be finite"):
        checks.share(np.array([0.5, np.nan]))
    with pytest.raises(AfdError, match="must be a number"):
        checks.share(np.array([True, False]))


def test_integer_bounds_and_types():
    assert checks.integer(1, lo=1) == 1 and checks.integer(0, lo=0) == 0 and checks.integer(64, lo=1, hi=64) == 64
    assert checks.integer(np.int64(7), lo=1) == 7 and type(checks.integer(np.int64(7))) is int
    assert checks.integer(-5) == -5   # no bound given: any integer
    for v, lo, hi, rule in ((0, 1, None, "a positive integer"), (-1, 0, None, "a non-negative integer"),
                            (65, 1, 64, "an integer in 1..64"), (0, 1, 64, "an integer in 1..64"),
                            (-2, -1, None, "an integer >= -1"), (5, None, 4, "an integer in -inf..4")):
        with pytest.raises(AfdError, match=f"^n must be {rule}, got {v}$"):
            checks.integer(v, "n", lo=lo, hi=hi)
    for v in (True, np.bool_(False), 2.0, 2.5, "2", math.nan, math.inf, None):
        with pytest.raises(AfdError, match="must be a positive integer"):
            checks.integer(v, lo=1)


def test_integer_may_take_an_integral_float():
    assert checks.integer(4096.0, integral_float=True) == 4096
    for v in (4096.5, math.inf, math.nan, True):
        with pytest.raises(AfdError, match="must be an integer"):
            checks.integer(v, integral_float=True)


def test_one_of_and_text():
    assert checks.one_of("normal", ("low-latency", "normal")) == "normal"
    with pytest.raises(AfdError, match="^all_to_all must be one of low-latency, normal, got 'Normal'$"):
        checks.one_of("Normal", ("low-latency", "normal"), "all_to_all")
    with pytest.raises(AfdError, match="must be one of"):
        checks.one_of(np.array(["normal"]), ("normal",))
    assert checks.text(" a ") == " a "
    for v in ("", "  ", None, 3):
        with pytest.raises(AfdError, match="must be a non-empty string"):
            checks.text(v)


def test_the_line_names_where_and_what():
    with pytest.raises(checks.Refused) as e:
        checks.positive(-2, "hbm_bytes", "hardware 'x'")
    assert str(e.value) == "hardware 'x': hbm_bytes must be positive, got -2"
    assert (e.value.rule, e.value.value, e.value.name, e.value.where) == ("positive", -2, "hbm_bytes", "hardware 'x'")
    with pytest.raises(checks.Refused, match="^must be >= 0, got -1.5$"):
        checks.nonnegative(-1.5)
    with pytest.raises(checks.Refused, match="^x must be a number, got 'fast'$"):   # text shown quoted
        checks.positive("fast", "x")
    again = pickle.loads(pickle.dumps(e.value))  # crosses processes as the same one-line AfdError
    assert isinstance(again, AfdError) and str(again) == str(e.value)


def test_every_vocabulary_words_a_rule_the_same_way(capsys):
    """The command line, the notebook parameters, the catalogue and the decode assumptions refuse an
    out-of-range fraction with the same words."""
    from afdlib.cli import main
    from afdlib.decode.step import Assumptions
    from afdlib.inputs.specs import Efficiency
    from afdlib.report import params
    with pytest.raises(AfdError, match=r"^matmul_efficiency must be in \(0, 1\], got 1.5$"):
        Assumptions(matmul_efficiency=1.5)
    with pytest.raises(AfdError, match=r"^efficiency hbm must be in \(0, 1\], got 1.5$"):
        Efficiency(hbm=1.5)
    with pytest.raises(AfdError, match=r"^notebook parameter 'f' must be in \(0, 1\], got 1.5$"):
        params.check_parameters({"f": 1.5}, f=params.fraction)
    with pytest.raises(AfdError, match=r"^notebook parameter 'n' must be a list whose items are each "
                                       r"an integer in 1..64, got \[1, 65\]$"):
        params.check_parameters({"n": [1, 65]}, n=params.list_of(params.integer(1, 64)))
    assert main(["penalty", "--sigma", "1.5", "--n-attn", "8", "--n-ffn", "2"]) == 2
    assert "--sigma must be in (0, 1], got 1.5" in capsys.readouterr().err


def test_at_least_takes_its_bound_and_refuses_below():
    assert checks.at_least(1, 1, "N_A") == 1 and checks.at_least(np.array([1.0, 7.5]), 1, "N_A") is not None
    with pytest.raises(AfdError, match=r"^N_A must be >= 1, got 0\.999$"):
        checks.at_least(0.999, 1, "N_A")
    with pytest.raises(AfdError, match="^N_A must be finite, got nan$"):
        checks.at_least(float("nan"), 1, "N_A")
