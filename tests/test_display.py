"""Displayed upper bounds are rounded up: pdpkit._display, Guarantee's text and the accountant's repr.

A number shown as "at most" must never be below the number computed. The property tests check
``fmt_up`` against its definition for every positive finite float (hypothesis): the text reads
back as a float ``>= x`` and is the smallest decimal of its digits that does; a checker that
accepts round-to-nearest, or a rounding that overshoots, would be a checker that tests nothing,
so both deliberately wrong variants are shown to fail it.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from decimal import Context, Decimal

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from pdpkit._display import ceil_sig, ceil_sig_array, fmt_up
from pdpkit.accountant import Guarantee, GuaranteePart, PrivacyAccountant

POSITIVE = st.floats(min_value=0.0, exclude_min=True, allow_nan=False, allow_infinity=False)
NORMAL = st.floats(min_value=sys.float_info.min, allow_nan=False, allow_infinity=False)

#: (x, digits, rounded up, what round-to-nearest shows): values where nearest rounding goes down.
EDGES = [
    (0.37541, 4, "0.3755", "0.3754"),
    (0.37547, 3, "0.376", "0.375"),
    (1.00049, 4, "1.001", "1"),
    (9.99949, 4, "10", "9.999"),
    (2.0000001e-6, 3, "2.01e-06", "2e-06"),
    (123401.0, 3, "1.24e+05", "1.23e+05"),
    (0.00012341, 3, "0.000124", "0.000123"),
]


def _previous(text: str, digits: int) -> Decimal:
    """The largest decimal of ``digits`` significant digits below ``text`` (9.999 below 10 at 4 digits)."""
    return Context(prec=digits, Emin=-10**6, Emax=10**6).next_minus(Decimal(text))


def _violations(fmt: Callable[[float, int], str], x: float, digits: int) -> list[str]:
    """What is wrong with ``fmt(x, digits)`` as the rounded-up display of ``x`` (empty: nothing).

    Read back as a float, the text must be ``>= x``; as a decimal it has at most ``digits``
    significant digits, is at least the shortest decimal ``repr(x)``, and the next smaller
    decimal of ``digits`` digits is below it (the text is the smallest such). For a normal
    float and ``digits <= 15`` that next smaller decimal also reads back below ``x``.
    """
    text = fmt(x, digits)
    out = []
    shown, exact = Decimal(text), Decimal(repr(x))
    if not float(text) >= x:
        out.append(f"{text!r} reads back below {x!r}")
    if len(shown.normalize().as_tuple().digits) > digits:
        out.append(f"{text!r} has more than {digits} significant digits")
    if shown < exact:
        out.append(f"{text!r} is below {x!r}")
    prev = _previous(text, digits)
    if prev >= exact:
        out.append(f"{text!r} is not the smallest: {prev} is >= {x!r}")
    if x >= sys.float_info.min and digits <= 15 and float(prev) >= x:
        out.append(f"{text!r} is not the smallest float: {prev} reads back >= {x!r}")
    return out


def _nearest(x: float, digits: int) -> str:
    """Deliberately wrong: round to nearest, the display this module replaced."""
    return f"{x:.{digits}g}"


def _scaled_ceil(x: float, digits: int) -> str:
    """Deliberately wrong: multiply, Math.ceil, divide; the float product overshoots (0.07 * 100 > 7)."""
    scale = 10.0 ** (digits - 1 - math.floor(math.log10(x)))
    return f"{math.ceil(x * scale) / scale:.{digits}g}"


@pytest.mark.parametrize("x,digits,up,nearest", EDGES)
def test_edge_values_round_up_where_nearest_rounds_down(x, digits, up, nearest):
    assert fmt_up(x, digits) == up
    assert f"{x:.{digits}g}" == nearest != up  # the old display would have understated the bound
    assert ceil_sig(x, digits) == float(up) >= x
    assert _violations(fmt_up, x, digits) == []
    assert _violations(_nearest, x, digits) != []


@pytest.mark.parametrize("x,digits,text", [(0.1, 4, "0.1"), (1.0, 4, "1"), (0.375, 3, "0.375"), (1e-6, 3, "1e-06"),
                                           (2.5e-5, 2, "2.5e-05"), (120.0, 3, "120"), (1234.0, 4, "1234")])
def test_numbers_with_few_digits_are_shown_as_they_are(x, digits, text):
    assert fmt_up(x, digits) == text and ceil_sig(x, digits) == x


@settings(max_examples=1500, deadline=None)
@given(x=POSITIVE, digits=st.integers(1, 17))
@example(x=5e-324, digits=4)  # the smallest subnormal: %.4g of its float would write 4.941e-324 < 5e-324
@example(x=sys.float_info.max, digits=1)  # rounds up beyond the largest float: "2e+308", read back as inf
@example(x=0.07, digits=1)
def test_fmt_up_is_the_smallest_decimal_at_least_x(x, digits):
    assert _violations(fmt_up, x, digits) == []
    assert ceil_sig(x, digits) == float(fmt_up(x, digits)) >= x


@settings(max_examples=500, deadline=None)
@given(x=NORMAL, digits=st.integers(1, 15))
def test_fmt_up_writes_what_percent_g_writes_for_the_rounded_float(x, digits):
    """For normal floats the text is exactly the old ``.{digits}g`` format, applied to the rounded-up value.

    (Except above the largest float, where the float is inf and the text the decimal: ``2e+308``.)
    """
    assume(math.isfinite(ceil_sig(x, digits)))
    assert fmt_up(x, digits) == f"{ceil_sig(x, digits):.{digits}g}"
    assert fmt_up(-x, digits) == f"{ceil_sig(-x, digits):.{digits}g}"  # toward +infinity: -0.37541 -> -0.3754


def test_deliberately_wrong_variants_fail_the_property():
    """Round-to-nearest understates 0.37541; multiply-then-ceil overshoots 0.07 (shows 0.08)."""
    assert any("below" in v for v in _violations(_nearest, 0.37541, 4))
    assert _scaled_ceil(0.07, 1) == "0.08"
    assert any("not the smallest" in v for v in _violations(_scaled_ceil, 0.07, 1))
    assert _violations(fmt_up, 0.07, 1) == [] and fmt_up(0.07, 1) == "0.07"


def test_non_finite_zero_and_bad_digits():
    assert fmt_up(0.0, 3) == "0" and ceil_sig(0.0, 3) == 0.0
    assert fmt_up(math.inf, 3) == "inf" and math.isnan(ceil_sig(math.nan, 3))
    with pytest.raises(ValueError, match="digits"):
        fmt_up(1.0, 0)
    with pytest.raises(TypeError, match="digits"):
        ceil_sig(1.0, 2.5)


def test_ceil_sig_array_is_ceil_sig_entry_by_entry():
    a = np.array([[0.37541, 1e-7, 2.0], [np.inf, 0.0, 9.99949]])
    got = ceil_sig_array(a, 4)
    assert got.shape == a.shape and got.dtype == np.float64
    want = np.array([[ceil_sig(v, 4) for v in row] for row in a.tolist()])
    np.testing.assert_array_equal(got, want)
    assert np.all(got >= a)
    assert ceil_sig_array(0.37541, 3).shape == () and float(ceil_sig_array(0.37541, 3)) == 0.376
    np.testing.assert_array_equal(a, [[0.37541, 1e-7, 2.0], [np.inf, 0.0, 9.99949]])  # the input is unchanged


# ------------------------------------------------------------------ the guarantee's text
def test_guarantee_text_rounds_epsilon_and_delta_up():
    g = Guarantee(epsilon=0.37541, delta=1.0001e-6)
    assert str(g).startswith("(0.3755, 1.01e-06)-DP [")
    assert f"{g.epsilon:.4g}" == "0.3754" and f"{g.delta:.3g}" == "1e-06"  # what nearest rounding showed
    assert g.epsilon == 0.37541  # the number itself is exact


def test_guarantee_parts_are_rounded_up_too():
    parts = (GuaranteePart("model", 1.00049, 5.0001e-7, "exact"), GuaranteePart("report", 0.12341, 5e-7, "exact"))
    g = Guarantee(epsilon=1.12342, delta=1.0000001e-6, accounting="rdp", parts=parts)
    assert str(g) == ("(1.124, 1.01e-06)-DP [rdp, add/remove one record] = model (1.001, 5.01e-07) + "
                      "report (0.1235, 5e-07)")


def test_accountant_repr_rounds_budget_and_spending_up():
    acc = PrivacyAccountant(0.37541, 1.0001e-6)
    assert repr(acc) == "PrivacyAccountant(budget=(0.3755, 1.01e-06), nothing spent)"
    acc.charge_gaussian(mu=0.05, name="means")
    g = acc.spent()
    text = repr(acc)
    assert f"spent=({fmt_up(g.epsilon, 4)}, {fmt_up(g.delta, 3)}), 1 entries)" in text
    assert float(fmt_up(g.epsilon, 4)) >= g.epsilon
