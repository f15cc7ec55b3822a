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
    # c4[j] = -2 x^(j-1) e^(-x^2/4), the same expression in Phi_i's and G_ij's recursions
    c4 = [None] + [-2 * xp(j - 1) * e4 for j in range(1, d)]
    phi = [phi0, -2 * e4]
    for i in range(2, d):
        phi.append(c4[i] + 2 * (i - 1) * phi[i - 2])
    integ = [i0, -e2]
    for k in range(2, 2 * d):
        integ.append(-xp(k - 1) * e2 + (k - 1) * integ[k - 2])
    g0 = [phi[0] ** 2 / 2, -2 * integ[0]]
    for i in range(2, d):
        g0.append(-2 * integ[i - 1] + 2 * (i - 1) * g0[i - 2])
    # G_ij = c4_j Phi_i + 2 I_{i+j-1} + 2 (j - 1) G_{i,j-2} on mpmath's raw numbers: the same
    # operations (mpf_mul, mpf_mul_int, mpf_add, mpf_sub) as mpf's operators, without objects
    from mpmath.libmp import mpf_add, mpf_mul, mpf_mul_int, mpf_sub

    ctx = getattr(mp, "mp", mp)
    prec, rnd = ctx._prec_rounding
    c4r = [None] + [v._mpf_ for v in c4[1:]]
    integr = [v._mpf_ for v in integ]
    G = []
    for i in range(d):
        phi_i = phi[i]._mpf_
        row = [g0[i]._mpf_]
        for j in range(1, d):
            val = mpf_add(mpf_mul(c4r[j], phi_i, prec, rnd), mpf_mul_int(integr[i + j - 1], 2, prec, rnd),
                          prec, rnd)
            if j >= 2:
                val = mpf_add(val, mpf_mul_int(row[j - 2], 2 * (j - 1), prec, rnd), prec, rnd)
            row.append(val)
        G.append(row)
    make = ctx.make_mpf
    A = [[make(mpf_sub(G[i][j], G[j][i], prec, rnd)) for j in range(d)] + [mp.mpf(0)] * (n - d)
         for i in range(d)] + [[mp.mpf(0)] * n for _ in range(n - d)]
    if d % 2:
        for i in range(d):
            A[i][d] = phi[i]
            A[d][i] = -phi[i]
    return A


def _mp_det(rows, mp, *, use_gmpy2: bool | None = None):
    """Determinant of a square matrix given as a list of rows of mpf: ``mpmath.det``'s algorithm.

    The Gauss elimination of ``mpmath.LU_decomp`` step for step (scaled partial pivoting:
    the row maximizing pivot / row sum; zero when a row sum or a pivot is at most
    ``||A||_1 eps``), so the value is the same to the last bit, on plain lists instead of
    an ``mpmath.matrix``, whose indexing costs more than the arithmetic at these sizes.
    Every step is an operation correctly rounded to the working precision (round to
    nearest, ties to even), as in mpmath; with ``gmpy2`` (``use_gmpy2=None``: when it can be
    imported) the same roundings are done by MPFR (several times faster), otherwise on
    mpmath's raw numbers.
    """
    ctx = getattr(mp, "mp", mp)                      # the module's context, or a context
    n = len(rows)
    if n == 0:
        return mp.mpf(1)
    from mpmath.libmp import mpf_abs, mpf_mul, mpf_mul_int, mpf_sum

    prec, rnd = ctx._prec_rounding
    a = [[ctx.convert(v)._mpf_ for v in r] for r in rows]
    # mpmath: tol = absmin(mnorm(A, 1) * eps), mnorm(A, 1) = max_j fsum(abs(a_ij) for i)
    tol = ctx.absmin(max(ctx.make_mpf(mpf_sum([mpf_abs(r[j], prec, rnd) for r in a], prec, rnd))
                         for j in range(n)) * ctx.eps)
    if use_gmpy2 is None:
        try:
            import gmpy2  # noqa: F401
            use_gmpy2 = True
        except ImportError:   # pragma: no cover - gmpy2 is a test dependency
            use_gmpy2 = False
    elim = _elimination_gmpy2 if use_gmpy2 else _elimination_mpf
    sign, diag = elim(a, tol._mpf_, prec, rnd)
    if diag is None:
        return ctx.mpf(0)
    det = mpf_mul_int(diag[0], sign, prec, rnd)      # mpmath: det = (+-1) * a_00, then *= a_ii
    for v in diag[1:]:
        det = mpf_mul(det, v, prec, rnd)
    return ctx.make_mpf(det)


def _elimination_mpf(a, tol, prec, rnd):
    """Elimination of :func:`_mp_det` on mpmath's raw numbers: (sign, diagonal) or (1, None) if singular."""
    from mpmath.libmp import fzero, mpf_abs, mpf_div, mpf_gt, mpf_le, mpf_mul, mpf_rdiv_int, mpf_sub, mpf_sum

    n = len(a)
    sign = 1
    for j in range(n - 1):
        biggest, piv_row = fzero, None
        for k in range(j, n):
            row = a[k]
            s = mpf_sum([mpf_abs(v, prec, rnd) for v in row[j:]], prec, rnd)
            if mpf_le(s, tol):
                return 1, None
            current = mpf_mul(mpf_rdiv_int(1, s, prec, rnd), mpf_abs(row[j], prec, rnd), prec, rnd)
            if mpf_gt(current, biggest):
                biggest, piv_row = current, k
        if piv_row is None or mpf_le(mpf_abs(a[piv_row][j], prec, rnd), tol):
            return 1, None
        if piv_row != j:
            a[j], a[piv_row] = a[piv_row], a[j]
            sign = -sign
        pivot, tail = a[j][j], a[j][j + 1:]
        for i in range(j + 1, n):
            row = a[i]
            f = mpf_div(row[j], pivot, prec, rnd)
            a[i] = row[:j] + [f] + [mpf_sub(v, mpf_mul(f, w, prec, rnd), prec, rnd)
                                    for v, w in zip(row[j + 1:], tail, strict=True)]
    if mpf_le(mpf_abs(a[n - 1][n - 1], prec, rnd), tol):
        return 1, None
    return sign, [a[i][i] for i in range(n)]


def _elimination_gmpy2(a, tol, prec, rnd):
    """Elimination of :func:`_mp_det` in MPFR (gmpy2), the same roundings as :func:`_elimination_mpf`.

    mpmath's operations (mpf_mul, mpf_sub, mpf_div, mpf_rdiv_int, mpf_abs with a precision)
    and MPFR's are both correctly rounded to nearest-even, so they agree bit for bit. The
    row sums of the pivot search: ``mpf_sum`` adds exactly and rounds once, unless a term
    lies more than twice the precision below the running sum (it then drops the term);
    MPFR's ``fsum`` is correctly rounded. The two differ by at most one unit in the last
    place, which changes a decision only where it is within a few units of a tie: a row
    sum against the tolerance, or two rows' pivot criteria against each other. There the
    row sums are taken from ``mpf_sum`` itself.
    """
    import gmpy2
    from mpmath.libmp import from_man_exp, mpf_sum

    if rnd != "n":   # pragma: no cover - mpmath's default rounding is to nearest
        return _elimination_mpf(a, tol, prec, rnd)

    def to_mpfr(v, conv):
        sgn, man, exp, bc = v
        if not man:
            if exp:                                  # inf or nan: not from a finite matrix
                raise ValueError("non-finite matrix entry")
            return gmpy2.mpfr(0)
        return conv.mul_2exp(gmpy2.mpfr(-man if sgn else man, max(bc, 2)), exp)

    def to_mpf(x):
        man, exp = x.as_mantissa_exp()
        return from_man_exp(int(man), int(exp))

    n = len(a)
    conv = gmpy2.context(precision=max(2, prec, *(v[3] for r in a for v in r), tol[3]))
    A = [[to_mpfr(v, conv) for v in r] for r in a]
    tol_r = to_mpfr(tol, conv)
    saved = gmpy2.get_context()
    gmpy2.set_context(gmpy2.context(precision=prec, round=gmpy2.RoundToNearest,
                                    emax=conv.emax, emin=conv.emin))
    try:
        near = 1 - gmpy2.mul_2exp(gmpy2.mpfr(1), 12 - prec)     # a few units in the last place
        fsum = gmpy2.fsum

        def exact_sum(row, j):                       # mpmath's fsum of the rounded |a_kl|, l >= j
            return to_mpfr(mpf_sum([to_mpf(abs(v)) for v in row[j:]], prec, rnd), conv)

        sign = 1
        for j in range(n - 1):
            crit = []                                # pivot criteria 1/s_k |a_kj|, s_k within an ulp
            for k in range(j, n):
                row = A[k]
                s = fsum(map(abs, row[j:]))
                if s * near <= tol_r:
                    s = exact_sum(row, j)
                    if s <= tol_r:
                        return 1, None
                crit.append((1 / s) * abs(row[j]))
            best = max(crit)
            close = [i for i, c in enumerate(crit) if c >= best * near]
            if best > 0 and len(close) > 1:          # near a tie: the exact criteria decide
                for i in close:
                    crit[i] = (1 / exact_sum(A[j + i], j)) * abs(A[j + i][j])
            biggest, piv_row = 0, None
            for i, current in enumerate(crit):       # mpmath: the first row of largest criterion
                if current > biggest:
                    biggest, piv_row = current, j + i
            if piv_row is None or abs(A[piv_row][j]) <= tol_r:
                return 1, None
            if piv_row != j:
                A[j], A[piv_row] = A[piv_row], A[j]
                sign = -sign
            pivot, tail = A[j][j], A[j][j + 1:]
            for i in range(j + 1, n):
                row = A[i]
                f = row[j] / pivot
                A[i] = row[:j] + [f] + [v - f * w for v, w in zip(row[j + 1:], tail, strict=True)]
        if abs(A[n - 1][n - 1]) <= tol_r:
            return 1, None
        return sign, [to_mpf(A[i][i]) for i in range(n)]
    finally:
        gmpy2.set_context(saved)


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


