"""Tests for pdpkit.goe: Alg 6 / Thm 17, the exact law of the GOE's largest eigenvalue, Lemma 20.

Every check compares with something independent: the multiprecision monomial-basis
Pfaffian (a different basis, different recursions and Mehta's normalization),
closed forms derived with sympy, Monte Carlo with stated standard errors, published
Tracy-Widom moments, scipy, or a statistical privacy audit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from pdpkit import analyze_gauss as ag
from pdpkit import goe
from pdpkit._goe_mpmath import goe_lambda1_cdf_mpmath
from pdpkit.audit import audit_delta_curve
from pdpkit.gaussian import gaussian_delta

RHO_PAPER = 8.465e-6


# ---------------------------------------------------------------------------
# Sampling and Algorithm 6
# ---------------------------------------------------------------------------

def _chi2_variance_pvalues(samples: np.ndarray, variances: np.ndarray) -> np.ndarray:
    """Two-sided p-values of sum(x^2)/var ~ chi2(n) for each entry (mean-zero Gaussian entries)."""
    n = samples.shape[0]
    t = np.sum(samples**2, axis=0) / variances
    cdf = stats.chi2.cdf(t, n)
    return 2 * np.minimum(cdf, 1 - cdf)


@pytest.mark.parametrize("variant", ["goe", "upper"])
def test_analyze_gauss_symmetric_with_stated_entry_variances(variant):
    rng = np.random.default_rng(11)
    d, sigma, n = 4, 0.7, 20000
    H = np.array([[2.0, 0.3, 0.0, 0.1], [0.3, 1.0, 0.2, 0.0], [0.0, 0.2, 3.0, 0.5], [0.1, 0.0, 0.5, 1.5]])
    out = np.stack([ag.analyze_gauss(H, sigma=sigma, variant=variant, rng=rng) for _ in range(n)])
    assert np.array_equal(out, np.swapaxes(out, -1, -2))
    noise = out - H
    iu = np.triu_indices(d)
    diag_var = 2 * sigma**2 if variant == "goe" else sigma**2
    var = np.where(iu[0] == iu[1], diag_var, sigma**2)
    p = _chi2_variance_pvalues(noise[:, iu[0], iu[1]], var)
    assert p.min() > 1e-3 / p.size            # Bonferroni at family level 1e-3
    # the wrong variance must be rejected (the test can fail)
    wrong = np.where(iu[0] == iu[1], sigma**2 if variant == "goe" else 2 * sigma**2, sigma**2)
    assert _chi2_variance_pvalues(noise[:, iu[0], iu[1]], wrong).min() < 1e-6
    # entries of the upper triangle are uncorrelated
    corr = np.corrcoef(noise[:, iu[0], iu[1]].T)
    assert np.max(np.abs(corr - np.eye(corr.shape[0]))) < 4.5 / math.sqrt(n)


def test_goe_matrix_batch_and_seed():
    a = goe.goe_matrix(5, sigma=2.0, size=(3, 2), rng=np.random.default_rng(1))
    b = goe.goe_matrix(5, sigma=2.0, size=(3, 2), rng=np.random.default_rng(1))
    assert a.shape == (3, 2, 5, 5) and np.array_equal(a, b)
    assert np.array_equal(a, np.swapaxes(a, -1, -2))


def test_theorem17_sensitivity_symbolic_d2_d3():
    for d in (2, 3):
        h = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"h{min(i, j)}{max(i, j)}", real=True))
        coords = [h[k, k] / sp.sqrt(2) for k in range(d)] + [h[i, j] for i in range(d) for j in range(i + 1, d)]
        lhs = sum(c**2 for c in coords)
        rhs = sum(h[i, j] ** 2 for i in range(d) for j in range(d)) / 2
        assert sp.simplify(lhs - rhs) == 0


@settings(max_examples=40)
@given(st.integers(min_value=1, max_value=12), st.integers(min_value=0, max_value=2**31 - 1))
def test_sensitivity_identity_numeric(d, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((d, d))
    Hx = a + a.T
    fro = np.linalg.norm(Hx)
    # independent route: explicit loops over the coordinates of the proof of Thm 17
    s_goe = math.sqrt(sum((Hx[k, k] / math.sqrt(2)) ** 2 for k in range(d))
                      + sum(Hx[i, j] ** 2 for i in range(d) for j in range(i + 1, d)))
    s_up = math.sqrt(sum(Hx[i, j] ** 2 for i in range(d) for j in range(i, d)))
    assert ag.analyze_gauss_sensitivity(Hx) == pytest.approx(fro / math.sqrt(2), rel=1e-12)
    assert ag.analyze_gauss_sensitivity(Hx) == pytest.approx(s_goe, rel=1e-12)
    assert ag.analyze_gauss_sensitivity(Hx, variant="upper") == pytest.approx(s_up, rel=1e-12)
    assert s_up <= fro * (1 + 1e-12)


def test_upper_sensitivity_attains_frobenius_for_diagonal():
    Hx = np.diag([0.3, -0.4, 0.0])
    assert ag.analyze_gauss_sensitivity(Hx, variant="upper") == pytest.approx(0.5)
    assert ag.analyze_gauss_sensitivity(Hx, variant="goe") == pytest.approx(0.5 / math.sqrt(2))


def test_theorem17_epsilon_formula_and_validity():
    f, s, dl = np.array([0.1, 0.25, 1.0]), 0.5, 1e-5
    expected = f**2 / (4 * s**2) + f * math.sqrt(2 * math.log(1 / dl)) / (math.sqrt(2) * s)
    eps = ag.analyze_gauss_pdp_epsilon(f, sigma=s, delta=dl)
    np.testing.assert_allclose(eps, expected, rtol=1e-14)
    # the bound is valid: the tight delta of the Gaussian mechanism at that eps is <= delta
    assert np.all(gaussian_delta(eps, sensitivity=f / math.sqrt(2), sigma=s) <= dl)
    np.testing.assert_allclose(ag.analyze_gauss_dp_epsilon(0.25, sigma=s, delta=dl, variant="upper"),
                               0.25**2 / (2 * s**2) + 0.25 * math.sqrt(2 * math.log(1 / dl)) / s)


def test_sigma_calibration_inverts_and_goe_saves_sqrt2():
    eps, dl, beta = 0.8, 1e-6, 0.25
    s_goe = ag.analyze_gauss_sigma(eps, dl, beta=beta)
    s_up = ag.analyze_gauss_sigma(eps, dl, beta=beta, variant="upper")
    assert ag.analyze_gauss_dp_epsilon(beta, sigma=s_goe, delta=dl) == pytest.approx(eps, rel=1e-12)
    assert ag.analyze_gauss_dp_epsilon(beta, sigma=s_up, delta=dl, variant="upper") == pytest.approx(eps, rel=1e-12)
    assert s_goe == pytest.approx(s_up / math.sqrt(2), rel=1e-12)


def test_privacy_loss_is_gaussian_mechanism_loss():
    rng = np.random.default_rng(5)
    d, sigma = 3, 0.8
    H = np.eye(d)
    x = np.array([0.6, 0.0, 0.8])
    Hp = H + 0.25 * np.outer(x, x)
    out = H + goe.goe_matrix(d, sigma=sigma, size=200000, rng=rng)
    loss = ag.analyze_gauss_privacy_loss(out, H, Hp, sigma=sigma)
    mu = (0.25 / math.sqrt(2)) ** 2 / (2 * sigma**2)      # Delta^2 / (2 sigma^2), Delta = ||H_x||_F / sqrt(2)
    se_mean = math.sqrt(2 * mu / loss.size)
    assert abs(loss.mean() - mu) < 4.5 * se_mean
    assert abs(loss.var() / (2 * mu) - 1) < 4.5 * math.sqrt(2 / loss.size)
    # against the density ratio computed from scratch for the first few outputs
    iu = np.triu_indices(d, 1)

    def logpdf(o, c):
        e = o - c
        return (stats.norm.logpdf(np.diag(e), scale=math.sqrt(2) * sigma).sum()
                + stats.norm.logpdf(e[iu], scale=sigma).sum())

    for o, lo in zip(out[:5], loss[:5], strict=False):
        assert lo == pytest.approx(logpdf(o, H) - logpdf(o, Hp), rel=1e-10, abs=1e-12)


# ---------------------------------------------------------------------------
# The exact CDF: multiprecision reference, closed forms, Monte Carlo
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("d,points", [(1, 9), (2, 9), (3, 9), (4, 7), (5, 7), (8, 7), (13, 6), (25, 6),
                                      (40, 5), (59, 4), (60, 5)])
def test_cdf_matches_multiprecision_reference(d, points):
    import mpmath as mp

    # a grid spanning the lower tail, the bulk and the upper tail
    ps = np.array([1e-30, 1e-8, 1e-3, 0.2, 0.5, 0.9])[: max(points - 3, 2)]
    qs = np.array([1e-4, 4.2325e-6, 1e-14])
    xs = np.concatenate([goe.goe_lambda1_quantile(ps, d=d), goe.goe_lambda1_isf(qs, d=d)])
    F = goe.goe_lambda1_cdf(xs, d=d)
    S = goe.goe_lambda1_sf(xs, d=d)
    for x, f, s in zip(xs, F, S, strict=False):
        ref = goe_lambda1_cdf_mpmath(float(x), d)
        assert abs(f - float(ref)) <= 1e-10                       # the bar (absolute)
        assert abs(mp.mpf(f) / ref - 1) <= 1e-9                   # relative, also in the lower tail
        assert abs(mp.mpf(s) / (1 - ref) - 1) <= 1e-12            # upper tail without cancellation


def test_reference_determinant_is_mpmaths_to_the_last_bit():
    import mpmath as mp

    from pdpkit._goe_mpmath import _mp_det, _mp_monomial_matrix

    # the reference's elimination on lists is mpmath.det's (same pivots, same roundings), done in
    # MPFR (gmpy2) or on mpmath's raw numbers, including the zero it returns for a numerically
    # singular matrix at low precision
    for d, x, dps in ((5, 0.5, 15), (12, 6.9, 40), (13, -3.0, 15), (13, 7.2, 62), (20, math.inf, 30),
                      (30, 11.0, 71)):
        with mp.workdps(dps):
            A = _mp_monomial_matrix(x if x != math.inf else mp.inf, d, mp)
            ref = mp.det(mp.matrix(A))
            assert _mp_det(A, mp) == ref == _mp_det(A, mp, use_gmpy2=False)
    with mp.workdps(15):
        # rows spanning more than the precision (mpmath's row sums drop terms), the first two with
        # tied pivot criteria (mpmath takes the first)
        big = mp.mpf(2) ** 60
        for A in ([[big, 1, big / 2], [big, big / 2, 1], [3, big, 5 * big]], [[big, 1, 3], [5, big, 1], [7, 3, big]]):
            ref = mp.det(mp.matrix(A))
            assert ref != 0 and _mp_det(A, mp) == ref == _mp_det(A, mp, use_gmpy2=False)
    with mp.workdps(30):
        for use in (True, False):
            assert _mp_det([[1, 2], [2, 4]], mp, use_gmpy2=use) == 0 == mp.det(mp.matrix([[1, 2], [2, 4]]))
            assert _mp_det([[0, 1], [1, 0]], mp, use_gmpy2=use) == -1


def test_mpmath_reference_normalization_is_mehta_constant():
    import mpmath as mp

    # F(+inf) = 1 checks d!/Z_d (the constant K of Chiani's theorem) against the Pfaffian at +inf
    for d in (1, 2, 3, 6, 11):
        assert abs(goe_lambda1_cdf_mpmath(math.inf, d) - 1) < mp.mpf(10) ** -25


def test_closed_forms_d1_d2_sympy():
    x, t = sp.symbols("x t", real=True)
    w = sp.exp(-t**2 / 4)
    # d = 1: the single eigenvalue is N(0, 2)
    F1 = sp.integrate(w, (t, -sp.oo, x)) / sp.integrate(w, (t, -sp.oo, sp.oo))
    # d = 2: density (1/Z2) |l1 - l2| e^{-(l1^2 + l2^2)/4}; F2 = (2/Z2) int_{l1<l2<x} (l2 - l1) ...
    inner = sp.integrate((x - t) * w, (t, -sp.oo, x))          # int_{l1 < x} (x - l1) w(l1)
    # Z2 = int int |l1 - l2| w(l1) w(l2): with u = l2 - l1, v = l1 + l2 (Jacobian 1/2) and
    # l1^2 + l2^2 = (u^2 + v^2)/2 it is int_0^inf u e^{-u^2/8} du * int_R e^{-v^2/8} dv
    u, v = sp.symbols("u v", real=True)
    Z2 = sp.simplify(sp.integrate(u * sp.exp(-u**2 / 8), (u, 0, sp.oo))
                     * sp.integrate(sp.exp(-v**2 / 8), (v, -sp.oo, sp.oo)))
    assert sp.simplify(Z2 - 8 * sp.sqrt(2 * sp.pi)) == 0
    assert math.exp(goe._log_mehta(2)) == pytest.approx(float(Z2), rel=1e-14)   # Mehta's formula
    F2 = (1 + sp.erf(x / sp.sqrt(2))) / 2 - sp.exp(-x**2 / 4) * (1 + sp.erf(x / 2)) / (2 * sp.sqrt(2))
    density = 2 * inner * sp.exp(-x**2 / 4) / Z2
    assert sp.simplify((sp.diff(F2, x) - density).rewrite(sp.erf)) == 0
    assert sp.limit(F2, x, -sp.oo) == 0 and sp.limit(F2, x, sp.oo) == 1
    xs = np.linspace(-12, 12, 97)
    f1 = sp.lambdify(x, F1, "mpmath")
    f2 = sp.lambdify(x, F2, "mpmath")
    import mpmath as mp

    with mp.workdps(60):                                       # the closed forms cancel in the lower tail
        ref1 = [float(f1(mp.mpf(float(v)))) for v in xs]
        ref2 = [float(f2(mp.mpf(float(v)))) for v in xs]
    np.testing.assert_allclose(goe.goe_lambda1_cdf(xs, d=1), ref1, rtol=1e-12, atol=0)
    np.testing.assert_allclose(goe.goe_lambda1_cdf(xs, d=2), ref2, rtol=1e-11, atol=0)
    np.testing.assert_allclose(goe.goe_lambda1_sf(xs, d=1), stats.norm.sf(xs / math.sqrt(2)), rtol=1e-12)


def _check_against_empirical(lam: np.ndarray, d: int) -> None:
    n = lam.size
    xs = np.quantile(lam, np.linspace(0.002, 0.998, 41))
    F = goe.goe_lambda1_cdf(xs, d=d)
    emp = np.searchsorted(np.sort(lam), xs, side="right") / n
    assert np.max(np.abs(emp - F) / np.sqrt(F * (1 - F) / n)) < 4.0


@pytest.mark.parametrize("d", [2, 5, 10])
def test_cdf_agrees_with_monte_carlo(d):
    rng = np.random.default_rng(100 + d)
    lam = np.concatenate([np.linalg.eigvalsh(goe.goe_matrix(d, size=10**4, rng=rng))[:, -1] for _ in range(10)])
    _check_against_empirical(lam, d)                     # 10^5 GOE draws, 4 standard errors


def _sturm_all_below(a: np.ndarray, b2: np.ndarray, x: np.ndarray) -> np.ndarray:
    """For tridiagonal matrices (diagonals a, squared off-diagonals b2; one per row) and one
    point x per row: whether every eigenvalue is below x (all pivots of T - x I negative)."""
    q = a[:, 0] - x
    below = q < 0
    for k in range(1, a.shape[1]):
        q = a[:, k] - x - b2[:, k - 1] / q
        below &= q < 0
    return below


def _tridiagonal_goe(d: int, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """m draws of the Dumitriu-Edelman (2002) model of the standard GOE(d) (beta = 1): diagonal
    N(0, 2), squared off-diagonal chi^2_{d-1}, ..., chi^2_1 (the eigenvalue law of (Z + Z^T)/sqrt 2)."""
    a = rng.normal(0.0, math.sqrt(2.0), size=(m, d))
    b2 = rng.chisquare(np.arange(d - 1, 0, -1), size=(m, d - 1))
    return a, b2


def _tridiagonal_lambda_max(a: np.ndarray, b2: np.ndarray) -> np.ndarray:
    """lambda_max of each tridiagonal matrix by bisection on Sturm counts, to 1e-11 absolute."""
    b = np.sqrt(b2)
    lo = np.max(a, axis=1)                                      # lambda_max >= max_k a_k
    hi = np.max(a + np.pad(b, ((0, 0), (0, 1))) + np.pad(b, ((0, 0), (1, 0))), axis=1)   # Gershgorin
    while np.max(hi - lo) > 1e-11:
        mid = 0.5 * (lo + hi)
        below = _sturm_all_below(a, b2, mid)
        hi, lo = np.where(below, mid, hi), np.where(below, lo, mid)
    return 0.5 * (lo + hi)


def test_tridiagonal_lambda_max_is_the_largest_eigenvalue():
    from scipy.linalg import eigvalsh_tridiagonal

    a, b2 = _tridiagonal_goe(7, 50, np.random.default_rng(3))
    lam = _tridiagonal_lambda_max(a, b2)
    ref = [eigvalsh_tridiagonal(a[i], np.sqrt(b2[i]))[-1] for i in range(a.shape[0])]
    np.testing.assert_allclose(lam, ref, rtol=0, atol=1e-10)


def test_cdf_agrees_with_monte_carlo_d50():
    # 10^5 draws of the d = 50 GOE spectrum through the Dumitriu-Edelman (2002) tridiagonal model,
    # with lambda_max <= x decided by Sturm counts; and 2 x 10^4 dense goe_matrix draws.
    d, n = 50, 10**5
    rng = np.random.default_rng(150)
    xs = goe.goe_lambda1_quantile(np.linspace(0.002, 0.998, 41), d=d)
    a, b2 = _tridiagonal_goe(d, n, rng)
    # all_below[i, j] = (lambda_max_i <= xs[j]), monotone in j: find for each draw the first
    # grid point above lambda_max by binary search (6 Sturm sweeps instead of 41)
    lo, hi = np.zeros(n, dtype=int), np.full(n, xs.size)        # first index is in [lo, hi]
    while np.any(lo < hi):
        active, mid = lo < hi, (lo + hi) // 2
        below = _sturm_all_below(a, b2, xs[np.minimum(mid, xs.size - 1)])
        hi, lo = np.where(active & below, mid, hi), np.where(active & ~below, mid + 1, lo)
    all_below = np.arange(xs.size)[None, :] >= lo[:, None]
    F = goe.goe_lambda1_cdf(xs, d=d)
    assert np.max(np.abs(all_below.mean(axis=0) - F) / np.sqrt(F * (1 - F) / n)) < 4.0
    # the dense sampler at 2 * 10^4 draws: a 1% error in its scale moves lambda_max by 0.2 of its sd,
    # about 20 standard errors of the empirical CDF at the median (the CDF itself is checked above at 10^5)
    lam = np.concatenate([np.linalg.eigvalsh(goe.goe_matrix(d, size=2000, rng=rng))[:, -1] for _ in range(10)])
    _check_against_empirical(lam, d)
    with pytest.raises(AssertionError):  # the tester's control: the 1% scale error is caught
        _check_against_empirical(1.01 * lam, d)


@pytest.mark.parametrize("d", [1, 2, 7, 50, 51])
def test_cdf_monotone_in_unit_interval_and_tails_finite(d):
    xs = np.concatenate([[-np.inf], np.linspace(-150, 150, 301), 2 * math.sqrt(d) + np.linspace(-3, 6, 91),
                         [np.inf]])
    xs.sort()
    F = goe.goe_lambda1_cdf(xs, d=d)
    S = goe.goe_lambda1_sf(xs, d=d)
    lF = goe.goe_lambda1_logcdf(xs, d=d)
    assert not np.any(np.isnan(F)) and not np.any(np.isnan(S)) and not np.any(np.isnan(lF))
    assert np.all((F >= 0) & (F <= 1) & (S >= 0) & (S <= 1))
    assert np.all(np.diff(F) >= 0) and np.all(np.diff(S) <= 0)
    assert np.all(np.diff(lF[1:]) >= 0)
    np.testing.assert_allclose(F + S, 1.0, atol=2e-16)
    # the log-CDF is finite where F < 1e-300 and 1 - F is resolved where it is < 1e-15
    assert np.any((lF < math.log(1e-300)) & np.isfinite(lF))
    tail = (S < 1e-15) & (S > 1e-290)
    assert np.any(tail) and np.all(np.isfinite(np.log(S[tail])))


def test_pdf_is_derivative_of_cdf():
    for d in (1, 4, 9, 30):
        xs = np.linspace(-2 * math.sqrt(d) - 2, 2 * math.sqrt(d) + 5, 23)
        h = 1e-5
        lower = xs < 2 * math.sqrt(d) - 1
        fd = np.where(lower, (goe.goe_lambda1_cdf(xs + h, d=d) - goe.goe_lambda1_cdf(xs - h, d=d)) / (2 * h),
                      (goe.goe_lambda1_sf(xs - h, d=d) - goe.goe_lambda1_sf(xs + h, d=d)) / (2 * h))
        np.testing.assert_allclose(goe.goe_lambda1_pdf(xs, d=d), fd, rtol=1e-6, atol=1e-13)
        # and it is a density: mean and spread from it are sane
        mean, sd = goe.goe_lambda1_mean_std(d)
        assert sd > 0 and abs(mean - 2 * math.sqrt(d)) < 2.5


def test_large_d_self_consistency():
    # d = 200: the Hermite route and the lower-tail route agree where they overlap
    d = 200
    for x in (26.6, 26.8, 27.0):
        lp_herm, _, _ = goe._lambda1_eval(np.array([x]), d)
        lp_adapt, _, _ = goe._adaptive(d, -np.inf, x)
        assert abs(lp_herm[0] - lp_adapt) < 1e-9
    F = goe.goe_lambda1_cdf(np.linspace(20, 40, 41), d=d)
    assert np.all(np.diff(F) >= 0) and F[0] < 1e-50 and F[-1] == 1.0


# ---------------------------------------------------------------------------
# Quantiles, Lemma 20, the first source's tau = 12, the spectral norm
# ---------------------------------------------------------------------------

def test_quantiles_invert_to_1e10():
    for d in (1, 3, 10, 50):
        xs = np.array([2 * math.sqrt(d) - 3, 2 * math.sqrt(d), 2 * math.sqrt(d) + 3, 2 * math.sqrt(d) + 6])
        F = goe.goe_lambda1_cdf(xs, d=d)
        S = goe.goe_lambda1_sf(xs, d=d)
        ok = F < 0.999
        np.testing.assert_allclose(goe.goe_lambda1_quantile(F[ok], d=d), xs[ok], atol=1e-10, rtol=0)
        np.testing.assert_allclose(goe.goe_lambda1_isf(S, d=d), xs, atol=1e-10, rtol=0)


def test_first_source_tau_is_in_chiani_normalization():
    d = 50
    tau = goe.goe_lambda1_isf(RHO_PAPER / 2, d=d)
    assert tau == pytest.approx(16.9705609141, abs=1e-9)
    # Chiani's normalization (off-diagonal variance 1/2): tau / sqrt(2) = 12, the source's value
    assert tau * goe.goe_normalization_factor("chiani", d=d) == pytest.approx(12.0, abs=1e-4)
    # with Alg 6's noise, tau = 12 is below the spectral edge 2 sqrt(50) = 14.1: it fails 99% of the time
    assert goe.goe_lambda1_sf(12.0, d=d) > 0.99 and goe.goe_norm_sf(12.0, d=d) > 0.99
    assert goe.goe_norm_bound(d, rho=RHO_PAPER, sigma=2.0) == pytest.approx(2 * tau, rel=1e-14)


def test_lemma20_union_bound_vs_exact_norm_law():
    for d in (1, 2, 5, 50):
        for rho in (1e-2, 1e-6):
            t_union = goe.goe_norm_bound(d, rho=rho)
            t_exact = goe.goe_norm_bound(d, rho=rho, method="exact")
            assert t_exact <= t_union
            assert goe.goe_norm_sf(t_union, d=d) <= rho * (1 + 1e-12)
            assert goe.goe_norm_sf(t_exact, d=d) == pytest.approx(rho, rel=1e-9)
            # union bound: P(||G|| > tau) is between sf(tau) and 2 sf(tau)
            s = goe.goe_lambda1_sf(t_union, d=d)
            assert s <= goe.goe_norm_sf(t_union, d=d) <= 2 * s * (1 + 1e-12)


def test_norm_law_closed_form_d1_and_monte_carlo():
    xs = np.array([0.1, 0.7, 2.0, 5.0, 20.0])
    np.testing.assert_allclose(goe.goe_norm_cdf(xs, d=1), 2 * stats.norm.cdf(xs / math.sqrt(2)) - 1, rtol=1e-13)
    np.testing.assert_allclose(goe.goe_norm_sf(xs, d=1), 2 * stats.norm.sf(xs / math.sqrt(2)), rtol=1e-12)
    rng = np.random.default_rng(3)
    for d in (3, 8):
        n = 60000
        nrm = np.max(np.abs(np.linalg.eigvalsh(goe.goe_matrix(d, size=n, rng=rng))), axis=-1)
        xs = np.quantile(nrm, [0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
        F = goe.goe_norm_cdf(xs, d=d)
        emp = np.searchsorted(np.sort(nrm), xs, side="right") / n
        assert np.max(np.abs(emp - F) / np.sqrt(F * (1 - F) / n)) < 4.0


def test_norm_bound_coverage_monte_carlo():
    rng = np.random.default_rng(8)
    d, sigma, rho, n = 6, 1.7, 0.05, 40000
    tau = goe.goe_norm_bound(d, rho=rho, sigma=sigma)
    nrm = np.max(np.abs(np.linalg.eigvalsh(goe.goe_matrix(d, sigma=sigma, size=n, rng=rng))), axis=-1)
    p_exact = goe.goe_norm_sf(tau / sigma, d=d)
    assert abs((nrm > tau).mean() - p_exact) < 4 * math.sqrt(p_exact * (1 - p_exact) / n)
    assert p_exact <= rho


def test_concentration_bound_is_valid_and_mean_below_edge():
    for d in (1, 5, 20, 50):
        mean, _ = goe.goe_lambda1_mean_std(d)
        assert mean <= 2 * math.sqrt(d)
        b = goe.goe_norm_concentration_bound(d, rho=1e-6)
        assert goe.goe_norm_sf(b, d=d) <= 1e-6
        assert b >= goe.goe_norm_bound(d, rho=1e-6)


# ---------------------------------------------------------------------------
# Tracy-Widom
# ---------------------------------------------------------------------------

def test_tracy_widom1_moments_match_published_values():
    # Bornemann (2010), Table 4: mean -1.2065335745820, variance 1.6077810345810
    t, w = np.polynomial.legendre.leggauss(24)

    def nodes(a, b, panels=6):
        edges = np.linspace(a, b, panels + 1)
        z = (edges[:-1, None] + (np.diff(edges)[:, None] / 2) * (t + 1)).ravel()
        return z, ((np.diff(edges)[:, None] / 2) * w).ravel()

    # E X = int_0^inf (1 - F) - int_-inf^0 F and E X^2 = 2 int_0^inf z (1 - F) - 2 int_-inf^0 z F,
    # on the same Gauss-Legendre nodes (each of F and 1 - F evaluated once per node)
    zp, wp = nodes(0, 12)
    zn, wn = nodes(-12, 0)
    sf, cdf = np.asarray(goe.tracy_widom1_sf(zp)), np.asarray(goe.tracy_widom1_cdf(zn))
    mean = float(np.sum(wp * sf) - np.sum(wn * cdf))
    m2 = float(2 * np.sum(wp * zp * sf) - 2 * np.sum(wn * zn * cdf))
    assert mean == pytest.approx(-1.2065335745820, abs=1e-10)
    assert m2 - mean**2 == pytest.approx(1.6077810345810, abs=1e-10)
    assert goe.tracy_widom1_quantile(0.95) == pytest.approx(0.9793, abs=1e-4)


def test_tracy_widom_scaling_constants():
    # centring 2 sqrt(d) and scale d^(-1/6) of this normalization: the exact law converges to TW1
    tw_mean, tw_sd = -1.2065335745820, math.sqrt(1.6077810345810)
    gaps = []
    for d in (10, 50, 100):  # d = 200 (mean gap 0.09) is the chapter's table
        m, s = goe.goe_lambda1_mean_std(d)
        gaps.append((abs((m - 2 * math.sqrt(d)) * d ** (1 / 6) - tw_mean), abs(s * d ** (1 / 6) - tw_sd)))
    gaps = np.array(gaps)
    assert np.all(np.diff(gaps, axis=0) < 0) and np.all(gaps[-1] < 0.12)
    for p in (0.1, 0.5, 0.9):
        assert abs(goe.goe_lambda1_quantile(p, d=200) - goe.tracy_widom_approx_quantile(p, d=200)) * 200 ** (1 / 6) < 0.1
    # simulation of the scaled largest eigenvalue agrees with the exact finite-d moments (d = 60):
    # 10^4 draws of the tridiagonal model (the eigenvalue law of the dense GOE, whose own sampler is
    # checked against the exact CDF at d = 2, 5, 10, 50)
    d = 60
    lam = _tridiagonal_lambda_max(*_tridiagonal_goe(d, 10**4, np.random.default_rng(21)))
    m, s = goe.goe_lambda1_mean_std(d)
    assert abs(lam.mean() - m) < 4 * s / math.sqrt(lam.size)
    assert abs(lam.std() / s - 1) < 4 / math.sqrt(2 * lam.size)
    # the control: a 1% scale error moves the mean by about 23 standard errors
    assert abs(1.01 * lam.mean() - m) > 4 * s / math.sqrt(lam.size)


# ---------------------------------------------------------------------------
# lambda_min release (Alg 3, Thm 11) and Weyl
# ---------------------------------------------------------------------------

def test_weyl_bound_and_lambda_min_sensitivity():
    rng = np.random.default_rng(4)
    d = 6
    a = rng.standard_normal((40, d))
    H = a.T @ a + 0.5 * np.eye(d)
    X = rng.standard_normal((500, d))
    fpp = rng.uniform(0, 0.25, 500)
    Hx = fpp[:, None, None] * X[:, :, None] * X[:, None, :]
    bound = ag.weyl_bound(Hx)
    np.testing.assert_allclose(bound, fpp * np.sum(X**2, axis=1), rtol=1e-12)
    lam = np.linalg.eigvalsh(H)[0]
    lam_add = np.linalg.eigvalsh(H + Hx)[:, 0]
    assert np.all(lam_add >= lam - 1e-12) and np.all(lam_add - lam <= bound + 1e-12)


def test_private_lambda_min_distribution_and_lower_bound_coverage():
    rng = np.random.default_rng(9)
    H = np.diag([3.0, 1.0, 2.0])
    sigma, rho, n = 0.4, 0.1, 20000
    rel = np.array([ag.private_lambda_min(H, sigma=sigma, rng=rng) for _ in range(n)])
    assert stats.kstest((rel - 1.0) / sigma, "norm").pvalue > 1e-3
    lb = ag.lambda_min_lower_bound(rel, sigma=sigma, rho=rho)
    miss = (lb > 1.0).mean()
    assert abs(miss - rho / 2) < 4 * math.sqrt(rho / 2 / n)
    eps = ag.lambda_min_pdp_epsilon(0.25, sigma=sigma, delta=1e-5)
    assert gaussian_delta(eps, sensitivity=0.25, sigma=sigma) <= 1e-5


# ---------------------------------------------------------------------------
# Input validation
# ---------------------------------------------------------------------------

def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="sigma"):
        goe.goe_matrix(3, sigma=0.0)
    with pytest.raises(ValueError, match="d"):
        goe.goe_lambda1_cdf(1.0, d=0)
    with pytest.raises(ValueError, match="d"):
        goe.goe_lambda1_cdf(1.0, d=goe.D_MAX + 1)
    with pytest.raises(TypeError, match="d"):
        goe.goe_lambda1_cdf(1.0, d=2.5)
    with pytest.raises(ValueError, match="x"):
        goe.goe_lambda1_cdf([1.0, np.nan], d=3)
    with pytest.raises(ValueError, match="p"):
        goe.goe_lambda1_quantile(1.0, d=3)
    with pytest.raises(ValueError, match="rho"):
        goe.goe_norm_bound(3, rho=0.0)
    with pytest.raises(ValueError, match="delta"):
        ag.analyze_gauss_pdp_epsilon(1.0, sigma=1.0, delta=1.5)
    with pytest.raises(ValueError, match="symmetric"):
        ag.analyze_gauss(np.array([[1.0, 2.0], [0.0, 1.0]]), sigma=1.0)
    with pytest.raises(ValueError, match="variant"):
        ag.analyze_gauss(np.eye(2), sigma=1.0, variant="lower")
    with pytest.raises(TypeError, match="rng"):
        goe.goe_matrix(2, rng=1.0)
    with pytest.raises(ValueError, match="normalization"):
        goe.goe_normalization_factor("wigner", d=3)


# ---------------------------------------------------------------------------
# Statistical audit of Algorithm 6 on a worst-case neighbouring pair (last)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("variant", ["goe", "upper"])
def test_audit_alg6_worst_case_pair(variant):
    d, sigma, beta = 3, 0.5, 0.5
    rng = np.random.default_rng(2024)
    H = np.array([[2.0, 0.2, 0.0], [0.2, 1.5, 0.1], [0.0, 0.1, 1.0]])
    if variant == "goe":          # any H_x with ||H_x||_F = beta is worst case: take a rank-one GLM term
        x = np.array([1.0, 2.0, 2.0]) / 3.0
        Hx = beta * np.outer(x, x)
    else:                         # the classic mechanism's worst case is a diagonal H_x
        Hx = np.diag([beta, 0.0, 0.0])
    Hp = H + Hx
    sens = float(ag.analyze_gauss_sensitivity(Hx, variant=variant))
    assert sens == pytest.approx(beta / math.sqrt(2) if variant == "goe" else beta)
    eps = np.array([0.0, 0.25, 0.5, 1.0, 1.5])
    claimed = gaussian_delta(eps, sensitivity=sens, sigma=sigma)

    def sampler(center, scale):
        def draw(m, g):
            if variant == "goe":
                return center + goe.goe_matrix(d, sigma=scale, size=m, rng=g)
            return center + ag._upper_noise(d, scale, (m,), g)
        return draw

    def statistic(outputs):
        return ag.analyze_gauss_privacy_loss(outputs, H, Hp, sigma=sigma, variant=variant)

    res = audit_delta_curve(sampler(H, sigma), sampler(Hp, sigma), statistic, eps, eps, claimed,
                            n_samples=400000, rng=rng)
    assert res.passed
    assert np.max(claimed - res.delta_lower) < 0.01          # and the audit is tight
    # the tester is tested: 0.9x the claimed noise must fail
    bad = audit_delta_curve(sampler(H, 0.9 * sigma), sampler(Hp, 0.9 * sigma), statistic, eps, eps, claimed,
                            n_samples=400000, rng=rng)
    assert not bad.passed


# ------------------------------------------------------------- every d: beyond the exact law
def _tridiagonal_extremes(d: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """||G||_2 of m standard GOE(d) draws via the Dumitriu-Edelman tridiagonal model (beta = 1):
    diagonal N(0, 2), off-diagonal chi_{d-1}, ..., chi_1 (same spectrum law as Alg 6's noise)."""
    from scipy.linalg import eigvalsh_tridiagonal

    out = np.empty(m)
    dof = np.arange(d - 1, 0, -1)
    for i in range(m):
        diag = math.sqrt(2.0) * rng.standard_normal(d)
        off = np.sqrt(rng.chisquare(dof))
        lo = eigvalsh_tridiagonal(diag, off, select="i", select_range=(0, 0))[0]
        hi = eigvalsh_tridiagonal(diag, off, select="i", select_range=(d - 1, d - 1))[0]
        out[i] = max(hi, -lo)
    return out


def test_mean_upper_bound_dominates_the_exact_mean_and_is_below_2_sqrt_d():
    for d in (1, 2, 5, 20, 50):
        exact = goe.goe_lambda1_mean_std(d)[0]
        bound = goe.goe_lambda1_mean_upper_bound(d)
        assert exact <= bound < 2 * math.sqrt(d)


def test_norm_bound_beyond_the_exact_range_is_valid_and_within_ten_percent():
    d = goe.D_MAX + 76
    rng = np.random.default_rng(11)
    norms = _tridiagonal_extremes(d, 300, rng)
    for rho in (0.05, 0.01):
        bound = float(goe.goe_norm_bound(d, rho=rho))
        assert bound == pytest.approx(float(goe.goe_norm_isf(rho, d=d)))
        # valid: the empirical exceedance is at most rho (binomial, 99.9% one-sided)
        k = int(np.sum(norms > bound))
        assert k <= stats.binom.ppf(0.999, norms.size, rho)
        # tight to 10%: above the Monte Carlo quantile (an upper confidence value) by <= 10%
        q_upper = float(np.quantile(norms, 1.0 - rho / 4))
        assert bound <= 1.10 * q_upper, (rho, bound, q_upper)
    # Tracy-Widom helpers accept any d
    assert np.isfinite(goe.tracy_widom_approx_quantile(0.5, d=5000))
    assert 0.0 < float(goe.tracy_widom_approx_cdf(2 * math.sqrt(5000), d=5000)) < 1.0


def test_the_ten_percent_check_fails_for_a_loose_bound():
    """Tester of the tester: twice the concentration term is more than 10% too loose at d = 1100."""
    d = goe.D_MAX + 76
    norms = _tridiagonal_extremes(d, 100, np.random.default_rng(12))
    loose = goe.goe_lambda1_mean_upper_bound(d) + 2 * 2 * math.sqrt(math.log(2 / 1e-6)) + 0.1 * 2 * math.sqrt(d)
    assert loose > 1.10 * float(np.quantile(norms, 0.99))


def test_exact_law_at_d_512_matches_the_tridiagonal_model():
    d = 512
    norms = _tridiagonal_extremes(d, 300, np.random.default_rng(13))
    med = float(goe.goe_norm_isf(0.5, d=d))
    frac = float(np.mean(norms > med))
    assert abs(frac - 0.5) < 4 * math.sqrt(0.25 / norms.size)
