"""Numbers shown to people as upper bounds, rounded outward (private helper).

A displayed guarantee or per-person bound reads "at most": its digits must never be
smaller than the number computed. :func:`ceil_sig` rounds up to a number of significant
digits (from the shortest decimal that identifies the float, so ``0.1`` stays ``0.1``);
:func:`fmt_up` formats the result as ``format(x, ".{digits}g")`` would, so a displayed
``0.3755`` stands for a bound of at most 0.3755 (0.37547 is shown as ``0.3755``, never
``0.3754``). :func:`ceil_sig_array` is :func:`ceil_sig` element by element, for tables.

What "smallest" means: ``fmt_up(x, k)`` is the smallest decimal of ``k`` significant digits
that is at least the shortest decimal ``repr(x)`` of the float. For a normal float and
``k <= 15`` that is also the smallest ``k``-digit decimal whose float is ``>= x`` (two such
decimals never round to the same float); below the normal range floats are sparser than
decimals and several ``k``-digit decimals read back as the same float.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, Decimal

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["ceil_sig", "fmt_up", "ceil_sig_array"]


def _check_digits(digits: int) -> int:
    """``digits`` as an ``int`` >= 1 (``TypeError`` for a non-integer, ``ValueError`` below 1)."""
    if isinstance(digits, bool) or not isinstance(digits, int | np.integer):
        raise TypeError(f"digits must be an integer; got {type(digits).__name__} {digits!r}")
    if digits < 1:
        raise ValueError(f"digits must be >= 1; got {digits!r}")
    return int(digits)


def _ceil_decimal(x: float, digits: int) -> Decimal:
    """The shortest decimal of the finite, non-zero ``x`` rounded toward +infinity to ``digits`` significant digits."""
    d = Decimal(repr(x))
    if len(d.as_tuple().digits) <= digits:  # already short enough: nothing to round
        return d
    quantum = Decimal(1).scaleb(d.adjusted() - digits + 1)
    return d.quantize(quantum, rounding=ROUND_CEILING)


def ceil_sig(x: float, digits: int = 4) -> float:
    """The smallest number of ``digits`` significant decimal digits that is >= ``x`` (``x`` itself if not finite)."""
    x = float(x)
    digits = _check_digits(digits)
    if not math.isfinite(x) or x == 0.0:
        return x
    up = float(_ceil_decimal(x, digits))
    # float() of a decimal is the nearest double and rounding is monotone: a decimal >= repr(x)
    # reads back as a float >= x. The guard keeps that true whatever the conversion does.
    return up if up >= x else math.nextafter(up, math.inf)


def fmt_up(x: float, digits: int = 4) -> str:
    """``x`` rounded up to ``digits`` significant digits, formatted like ``f"{x:.{digits}g}"``.

    The digits are written from the rounded decimal itself, not from its float, so the text
    is never below ``repr(x)`` even where floats are sparser than decimals (subnormals).
    """
    digits = _check_digits(digits)
    x = float(x)
    if not math.isfinite(x) or x == 0.0:
        return f"{x:.{digits}g}"
    return _format_g_like(_ceil_decimal(x, digits), digits)


def _format_g_like(d: Decimal, digits: int) -> str:
    """``d`` (at most ``digits`` significant digits) as ``"%.{digits}g"`` writes it: trailing zeros dropped.

    ``%g`` writes positionally when the decimal exponent lies in ``[-4, digits)`` and in
    scientific notation (``1.5e-05``, ``2e+07``) otherwise.
    """
    t = d.normalize()
    sign, ds, _ = t.as_tuple()
    exp = t.adjusted()
    if -4 <= exp < digits:
        return format(t, "f")
    mantissa = str(ds[0]) + ("." + "".join(str(v) for v in ds[1:]) if len(ds) > 1 else "")
    return ("-" if sign else "") + f"{mantissa}e{exp:+03d}"


def ceil_sig_array(a: ArrayLike, digits: int = 4) -> np.ndarray:
    """:func:`ceil_sig` of every entry of ``a``: a float64 array of ``a``'s shape, each entry rounded up.

    For tables of bounds: each displayed entry is then at least the number it stands for.
    """
    digits = _check_digits(digits)
    arr = np.asarray(a, dtype=np.float64)
    out = np.empty_like(arr)
    flat, src = out.reshape(-1), arr.reshape(-1)
    for i, v in enumerate(src.tolist()):
        flat[i] = ceil_sig(v, digits)
    return out
