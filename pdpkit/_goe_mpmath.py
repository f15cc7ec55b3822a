r"""Multiprecision reference for the law of the GOE's largest eigenvalue (private; used by the tests).

Chiani's Pfaffian (Chiani 2014, Thm 2) evaluated in the monomial basis in mpmath,
independent of the float64 implementation of :mod:`pdpkit.goe`: the reference the
tests compare against and the baseline of the benchmarks. Still importable as
``pdpkit.goe.goe_lambda1_cdf_mpmath``.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import check_int_at_least

__all__ = ["goe_lambda1_cdf_mpmath"]



def _mp_monomial_matrix(x, d: int, mp):
    r"""Skew matrix of de Bruijn's formula in the monomial basis :math:`t^i e^{-t^2/4}` on :math:`(-\infty, x]`.

    Exact recursions (integration by parts), with
    :math:`\Phi_i(z)=\int_{-\infty}^z t^ie^{-t^2/4}dt`, :math:`I_m(x)=\int_{-\infty}^x t^me^{-t^2/2}dt`
    and :math:`G_{ij}=\int_{-\infty}^x\Phi_i(z)z^je^{-z^2/4}dz`:
    :math:`\Phi_i=-2z^{i-1}e^{-z^2/4}+2(i-1)\Phi_{i-2}`,
    :math:`I_m=-x^{m-1}e^{-x^2/2}+(m-1)I_{m-2}`,
    :math:`G_{ij}=-2x^{j-1}e^{-x^2/4}\Phi_i(x)+2I_{i+j-1}+2(j-1)G_{i,j-2}`,
    :math:`G_{00}=\Phi_0^2/2`, :math:`G_{i0}=-2I_{i-1}+2(i-1)G_{i-2,0}`;
    :math:`A_{ij}=G_{ij}-G_{ji}` (the form of Chiani 2014, Thm 2, in this normalization).
    """
    n = d + (d % 2)
    if x == mp.inf:
        e4 = e2 = mp.mpf(0)
        phi0, i0 = 2 * mp.sqrt(mp.pi), mp.sqrt(2 * mp.pi)

        def xp(k):
            return mp.mpf(0)
    else:
        x = mp.mpf(x)
        e4, e2 = mp.exp(-x * x / 4), mp.exp(-x * x / 2)
        phi0 = mp.sqrt(mp.pi) * mp.erfc(-x / 2)
        i0 = mp.sqrt(mp.pi / 2) * mp.erfc(-x / mp.sqrt(2))

        def xp(k):
            return x ** k
    phi = [phi0, -2 * e4]
    for i in range(2, d):
        phi.append(-2 * xp(i - 1) * e4 + 2 * (i - 1) * phi[i - 2])
    integ = [i0, -e2]
    for k in range(2, 2 * d):
        integ.append(-xp(k - 1) * e2 + (k - 1) * integ[k - 2])
    G = [[mp.mpf(0)] * d for _ in range(d)]
    for i in range(d):
        if i == 0:
            G[0][0] = phi[0] ** 2 / 2
        elif i == 1:
            G[1][0] = -2 * integ[0]
        else:
            G[i][0] = -2 * integ[i - 1] + 2 * (i - 1) * G[i - 2][0]
        for j in range(1, d):
            val = -2 * xp(j - 1) * e4 * phi[i] + 2 * integ[i + j - 1]
            if j >= 2:
                val += 2 * (j - 1) * G[i][j - 2]
            G[i][j] = val
    A = [[mp.mpf(0)] * n for _ in range(n)]
    for i in range(d):
        for j in range(d):
            A[i][j] = G[i][j] - G[j][i]
    if d % 2:
        for i in range(d):
            A[i][d] = phi[i]
            A[d][i] = -phi[i]
    return A


def _mp_det(rows, mp):
    """Determinant of a square matrix given as a list of rows of mpf: ``mpmath.det``'s algorithm.

    The Gauss elimination of ``mpmath.LU_decomp`` step for step (scaled partial pivoting:
    the row maximizing pivot / row sum; zero when a row sum or a pivot is at most
    ``||A||_1 eps``), so the value is the same to the last bit, on plain lists instead of
    an ``mpmath.matrix``, whose indexing costs more than the arithmetic at these sizes.
    """
    a = [list(r) for r in rows]
    n = len(a)
    tol = mp.absmin(max(mp.fsum(abs(r[j]) for r in a) for j in range(n)) * mp.eps)
    det = 1
    for j in range(n - 1):
        biggest, piv_row = 0, None
        for k in range(j, n):
            s = mp.fsum([abs(v) for v in a[k][j:]])
            if s <= tol:
                return mp.mpf(0)
            current = 1 / s * abs(a[k][j])
            if current > biggest:
                biggest, piv_row = current, k
        if piv_row is None or abs(a[piv_row][j]) <= tol:
            return mp.mpf(0)
        if piv_row != j:
            a[j], a[piv_row] = a[piv_row], a[j]
            det *= -1
        pivot, tail = a[j][j], a[j][j + 1:]
        for i in range(j + 1, n):
            f = a[i][j] / pivot
            row = a[i]
            a[i] = row[:j] + [f] + [v - f * w for v, w in zip(row[j + 1:], tail, strict=True)]
    if abs(a[n - 1][n - 1]) <= tol:
        return mp.mpf(0)
    for i in range(n):
        det *= a[i][i]
    return det


def goe_lambda1_cdf_mpmath(x: float, d: int, *, dps: int | None = None, validate: bool = True):
    r"""Reference :math:`P(\lambda_{\max}\le x)` by Chiani's Pfaffian in the monomial basis, in mpmath.

    :math:`F(x)=\frac{d!}{Z_d}\sqrt{\det A(x)}` with :math:`A` from the exact
    recursions of the monomial basis and Mehta's normalization :math:`Z_d`
    (Chiani 2014, Thm 2, restated for this module's normalization). Slow
    (:math:`O(d^3)` multiprecision operations) and independent of the float64
    implementation: it is the reference of the tests and the baseline of the
    benchmarks. The monomial basis loses about :math:`d^2/80` digits (more in the
    lower tail), so the default precision is :math:`60 + d^2/80` digits and, with
    ``validate=True``, the computation is repeated at twice the precision until two
    successive values agree to :math:`10^{-30}` relative.

    Returns
    -------
    mpmath.mpf
    """
    import mpmath as mp

    d = check_int_at_least(d, "d", 1)
    if isinstance(x, (bool, np.bool_)):
        raise TypeError("x must be a real number")
    try:
        xf = float(x)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"x must be a real number; got {type(x).__name__}") from exc
    if math.isnan(xf):
        raise ValueError("x must not be NaN")
    if xf == -math.inf:
        return mp.mpf(0)
    prec = int(dps) if dps is not None else 60 + (d * d) // 80

    def once(p: int):
        with mp.workdps(p):
            A = _mp_monomial_matrix(mp.inf if xf == math.inf else x, d, mp)
            det = _mp_det(A, mp)
            if det <= 0:
                return mp.mpf(0)
            logz = mp.mpf(_mp_log_mehta(d, mp))
            return +mp.exp(mp.log(mp.factorial(d)) + mp.log(det) / 2 - logz)

    val = once(prec)
    if not validate:
        return val
    for _ in range(6):
        prec *= 2
        new = once(prec)
        if new != 0 and abs(new - val) <= mp.mpf(10) ** -30 * abs(new):
            return new
        val = new
    raise ArithmeticError(f"goe_lambda1_cdf_mpmath did not converge at d={d}, x={x}")


def _mp_log_mehta(d: int, mp):
    s = (mp.mpf(d) / 2 + mp.mpf(d * (d - 1)) / 4) * mp.log(2) + mp.mpf(d) / 2 * mp.log(2 * mp.pi)
    for j in range(1, d + 1):
        s += mp.loggamma(1 + mp.mpf(j) / 2) - mp.loggamma(mp.mpf(3) / 2)
    return s


