"""Tests of pdpkit.objpert: exact solver, exact output density, ex-post pDP, bounds, classic DP.

Independent references: the change-of-variables density checked by quadrature (it integrates
to one) and by the closed-form CDF in one dimension, samples of the mechanism (KS test),
scipy's and scikit-learn's minimizers, per-target slogdet computations, the paper's
recursive matrix-determinant-lemma product, and binomial tests for high-probability bounds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.integrate as si
import scipy.optimize as so
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from pdpkit.losses import Huber, huber, logistic, robust_log, squared
from pdpkit.output_perturbation import output_perturbation_fit, output_perturbation_sensitivity
from pdpkit.objpert import (
    ObjPertResult,
    erm_fit_nonprivate,
    ex_post_pdp,
    ex_post_pdp_general,
    ex_post_pdp_terms,
    objpert_epsilon_classic,
    objpert_fit,
    objpert_hessian,
    objpert_log_density,
    objpert_sigma_classic,
    pdp_bound_data_independent,
)

LOSSES = [logistic, robust_log, huber, squared]


def _data(rng, n, d, loss, scale=1.0):
    X = rng.normal(size=(n, d)) * scale / math.sqrt(d)
    if loss is logistic:
        y = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ rng.normal(size=d) * 2)), 1.0, -1.0)
    else:
        y = X @ rng.normal(size=d) + 0.5 * rng.standard_t(3, size=n)
    return X, y


def _perturbed_grad(X, y, loss, lam, b, theta):
    return X.T @ loss.d1(X @ theta, y) + lam * theta + b


def _perturbed_grad_longdouble(X, y, loss, lam, b, theta):
    """The perturbed gradient in x87 extended precision (64-bit mantissa): an independent reference."""
    import mpmath

    Xl, th = X.astype(np.longdouble), theta.astype(np.longdouble)
    z = Xl @ th
    # f' in extended precision via mpmath (30 digits) on the extended-precision margins
    mpmath.mp.dps = 30
    d1 = np.array([np.longdouble(float(v)) for v in (
        [mpmath.mpf(-yi) / (1 + mpmath.exp(mpmath.mpf(float(yi)) * mpmath.mpf(float(zi)))) for zi, yi in zip(z, y)]
        if loss.name == "logistic" else loss.d1(z.astype(float), y))], dtype=np.longdouble)
    return Xl.T @ d1 + np.longdouble(lam) * th + b.astype(np.longdouble)


# ----------------------------------------------------------------- exact density
@pytest.mark.parametrize("loss", LOSSES, ids=lambda loss: loss.name)
@pytest.mark.parametrize("d", [1, 2, 3])
def test_ex_post_pdp_equals_exact_log_density_ratio(loss, d):
    rng = np.random.default_rng(10 + d)
    n, lam, sigma = 15, 0.6, 0.8
    X, y = _data(rng, n, d, loss, scale=2.0)
    res = objpert_fit(X, y, loss, lam=lam, sigma=sigma, rng=rng, norm_bound=None)
    logp = objpert_log_density(res.theta, X, y, loss, lam=lam, sigma=sigma)
    # members: removal, one at a time, all vectorized in one call
    signed = ex_post_pdp(res, X, y, X, y, member=True, signed=True)
    ref = np.array([logp - objpert_log_density(res.theta, np.delete(X, i, 0), np.delete(y, i), loss, lam=lam, sigma=sigma)
                    for i in range(n)])
    np.testing.assert_allclose(signed, ref, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ex_post_pdp(res, X, y, X, y, member=True), np.abs(ref), rtol=0, atol=1e-9)
    # non-members: addition
    Z, yz = _data(rng, 6, d, loss, scale=3.0)
    signed = ex_post_pdp(res, X, y, Z, yz, member=False, signed=True)
    ref = np.array([logp - objpert_log_density(res.theta, np.vstack([X, Z[j]]), np.append(y, yz[j]), loss, lam=lam, sigma=sigma)
                    for j in range(len(yz))])
    np.testing.assert_allclose(signed, ref, rtol=0, atol=1e-9)
    # the terms add up and epsilon is the absolute value
    terms = ex_post_pdp_terms(res, X, y, Z, yz, member=False)
    np.testing.assert_allclose(terms.total, ref, atol=1e-9)
    np.testing.assert_allclose(terms.epsilon, np.abs(ref), atol=1e-9)
    assert np.all(terms.log_det <= 0) and np.all(terms.grad_sq >= 0)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 3), n=st.integers(1, 12),
       lam=st.floats(0.05, 5.0), sigma=st.floats(0.05, 5.0), loss_i=st.integers(0, 1))
def test_ex_post_pdp_exact_density_property(seed, d, n, lam, sigma, loss_i):
    loss = [logistic, robust_log][loss_i]
    rng = np.random.default_rng(seed)
    X, y = _data(rng, n, d, loss, scale=3.0)
    res = objpert_fit(X, y, loss, lam=lam, sigma=sigma, rng=rng, norm_bound=None)
    logp = objpert_log_density(res.theta, X, y, loss, lam=lam, sigma=sigma)
    i = int(rng.integers(n))
    rem = ex_post_pdp(res, X, y, X[i], y[i], member=True, signed=True)
    ref = logp - objpert_log_density(res.theta, np.delete(X, i, 0), np.delete(y, i), loss, lam=lam, sigma=sigma)
    assert rem == pytest.approx(ref, abs=1e-9)
    zx, zy = _data(rng, 1, d, loss, scale=3.0)
    add = ex_post_pdp(res, X, y, zx[0], zy[0], member=False, signed=True)
    ref = logp - objpert_log_density(res.theta, np.vstack([X, zx]), np.append(y, zy), loss, lam=lam, sigma=sigma)
    assert add == pytest.approx(ref, abs=1e-9)


@pytest.mark.parametrize("loss", [logistic, robust_log], ids=lambda loss: loss.name)
def test_density_integrates_to_one_and_matches_closed_form_cdf_d1(loss):
    rng = np.random.default_rng(3)
    X, y = _data(rng, 8, 1, loss, scale=2.0)
    lam, sigma = 0.5, 1.5

    def pdf(t):
        return float(np.exp(objpert_log_density(np.array([t]), X, y, loss, lam=lam, sigma=sigma)))

    total, _ = si.quad(pdf, -np.inf, np.inf, epsabs=1e-12, epsrel=1e-12, limit=200)
    assert total == pytest.approx(1.0, abs=1e-9)
    # In d = 1, theta^P <= t  iff  b >= -J'(t): the CDF is Phi(J'(t)/sigma) in closed form.
    for t in (-2.0, -0.3, 0.0, 0.7, 2.5):
        jp = float(X[:, 0] @ loss.d1(X[:, 0] * t, y) + lam * t)
        cdf, _ = si.quad(pdf, -np.inf, t, epsabs=1e-13, epsrel=1e-12, limit=200)
        assert cdf == pytest.approx(stats.norm.cdf(jp / sigma), abs=1e-9)


def test_density_integrates_to_one_d2():
    rng = np.random.default_rng(4)
    X, y = _data(rng, 10, 2, logistic, scale=1.0)
    lam, sigma = 1.0, 1.0
    # ||theta^P - theta*|| <= ||b|| / lam (strong convexity): the mass is within 9 sigma/lam of
    # the non-private minimizer. Gauss-Legendre tensor grid on that box.
    center = erm_fit_nonprivate(X, y, logistic, lam=lam)
    nodes, weights = np.polynomial.legendre.leggauss(240)
    half = 9.0 * sigma / lam
    T1, T2 = np.meshgrid(center[0] + nodes * half, center[1] + nodes * half, indexing="ij")
    w = weights * half
    dens = np.exp(objpert_log_density(np.stack([T1, T2], axis=-1), X, y, logistic, lam=lam, sigma=sigma))
    assert dens.shape == (240, 240)
    assert float(w @ dens @ w) == pytest.approx(1.0, abs=1e-9)


def test_mechanism_samples_follow_the_density_d1():
    # KS test of objpert_fit's outputs against the closed-form CDF Phi(J'(t)/sigma).
    rng = np.random.default_rng(5)
    X, y = _data(rng, 6, 1, logistic, scale=2.0)
    lam, sigma = 0.4, 1.0
    thetas = np.array([objpert_fit(X, y, logistic, lam=lam, sigma=sigma, rng=rng, norm_bound=None).theta[0] for _ in range(600)])

    def cdf(t):
        t = np.asarray(t, dtype=float)
        jp = (X[:, 0][None, :] * logistic.d1(np.outer(t, X[:, 0]), y[None, :])).sum(1) + lam * t
        return stats.norm.cdf(jp / sigma)

    assert stats.kstest(thetas, cdf).pvalue > 1e-3


def test_log_density_empty_data_is_gaussian_and_vectorized():
    lam, sigma = 2.0, 0.7
    th = np.random.default_rng(6).normal(size=(4, 5, 3))
    got = objpert_log_density(th, np.zeros((0, 3)), np.zeros(0), logistic, lam=lam, sigma=sigma)
    assert got.shape == (4, 5)
    ref = stats.multivariate_normal(mean=np.zeros(3), cov=(sigma / lam) ** 2 * np.eye(3)).logpdf(th)
    np.testing.assert_allclose(got, ref, rtol=1e-12)


# ------------------------------------------------------------------------ solver
@pytest.mark.parametrize("loss", LOSSES, ids=lambda loss: loss.name)
def test_solver_reaches_tol_and_matches_scipy(loss):
    rng = np.random.default_rng(7)
    X, y = _data(rng, 300, 6, loss, scale=3.0)
    lam, sigma = 0.3, 2.0
    res = objpert_fit(X, y, loss, lam=lam, sigma=sigma, rng=rng, norm_bound=None)
    # the tolerance is public and absolute: the default, whatever the data
    assert res.grad_tol == 1e-8
    # the TRUE perturbed gradient at the returned float64 point, in extended precision, is within it
    g_true = _perturbed_grad_longdouble(X, y, loss, lam, res.b, res.theta)
    assert float(np.sqrt(np.sum(g_true * g_true))) <= res.grad_tol
    # the release is the point plus output noise of the public scale 2 tau / (lam mu0)
    assert res.sigma_out == pytest.approx(2 * 1e-8 / (lam * 1e-3), rel=1e-12)
    assert 0 < np.linalg.norm(res.theta_released - res.theta) < 10 * res.sigma_out * np.sqrt(6)

    def F(th):
        z = X @ th
        return loss.value(z, y).sum() + 0.5 * lam * th @ th + res.b @ th, _perturbed_grad(X, y, loss, lam, res.b, th)

    ref = so.minimize(F, np.zeros(6), jac=True, method="trust-exact",
                      hess=lambda th: (X * loss.d2(X @ th, y)[:, None]).T @ X + lam * np.eye(6),
                      options=dict(gtol=1e-10))
    g_ref = float(np.linalg.norm(F(ref.x)[1]))
    assert g_ref < 1e-6
    # lam-strong convexity: ||theta - theta_ref|| <= (||grad(theta)|| + ||grad(theta_ref)||) / lam
    assert np.linalg.norm(res.theta - ref.x) <= (res.grad_norm + g_ref) / lam + 1e-12
    assert F(res.theta)[0] <= F(ref.x)[0] + 1e-9


def test_large_n_solver_paths_agree():
    # n large enough for the warm start and sub-sampled Hessians; newton-cg and the
    # squared loss's Newton path as references.
    rng = np.random.default_rng(8)
    X, y = _data(rng, 20_000, 12, logistic, scale=3.0)
    b = rng.normal(size=12)
    a = objpert_fit(X, y, logistic, lam=0.5, sigma=1.0, b=b, norm_bound=None)
    c = objpert_fit(X, y, logistic, lam=0.5, sigma=1.0, b=b, method="newton-cg", norm_bound=None)
    assert a.method == "newton" and c.method == "newton-cg"
    np.testing.assert_allclose(a.theta, c.theta, atol=1e-9)
    assert a.grad_norm <= a.grad_tol and c.grad_norm <= c.grad_tol
    Xs, ys = _data(rng, 500, 4, squared)
    cf = objpert_fit(Xs, ys, squared, lam=1.0, sigma=1.0, b=b[:4], norm_bound=None)
    nt = objpert_fit(Xs, ys, squared, lam=1.0, sigma=1.0, b=b[:4], method="newton", norm_bound=None)
    assert cf.method == "closed-form" and cf.n_iter == 0
    np.testing.assert_allclose(cf.theta, nt.theta, atol=1e-10)
    with pytest.raises(ValueError, match="closed-form"):
        objpert_fit(Xs, np.sign(ys), logistic, lam=1.0, sigma=1.0, method="closed-form", norm_bound=None)
    with pytest.raises(ValueError, match="method"):
        objpert_fit(Xs, ys, squared, lam=1.0, sigma=1.0, method="bfgs", norm_bound=None)


def test_solver_hard_problems_still_exact():
    rng = np.random.default_rng(9)
    n, d = 5000, 8
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    y = np.sign(X @ w)  # separable: the minimizer is far out, only lam keeps it finite
    res = objpert_fit(X, y, logistic, lam=1e-4, sigma=1.0, rng=rng, norm_bound=None, grad_tol=1e-6)
    assert res.grad_norm <= res.grad_tol
    X2 = X.copy()
    X2[:, -1] = 0.0
    X2[:3, -1] = 1.0  # a feature seen by three rows only
    res2 = objpert_fit(X2, y, logistic, lam=1e-3, sigma=1.0, rng=rng, norm_bound=None)
    assert res2.grad_norm <= res2.grad_tol
    huge_b = objpert_fit(X, y, Huber(0.01), lam=1.0, sigma=1e4, rng=rng, norm_bound=None)
    assert huge_b.grad_norm <= huge_b.grad_tol


def test_solver_raises_instead_of_returning_an_inexact_point():
    rng = np.random.default_rng(10)
    X, y = _data(rng, 400, 5, logistic, scale=5.0)
    with pytest.raises(RuntimeError, match="max_iter=1") as info:
        objpert_fit(X, y, logistic, lam=1e-3, sigma=1.0, rng=rng, max_iter=1, norm_bound=None)
    _no_data_numbers(str(info.value), allowed=("1",))
    with pytest.raises(RuntimeError, match="grad_tol") as info:
        objpert_fit(X, y, logistic, lam=1e-3, sigma=1.0, rng=rng, grad_tol=1e-30, norm_bound=None)
    _no_data_numbers(str(info.value), allowed=("1e-30", "200"))
    with pytest.raises(TypeError, match="grad_tol"):  # the old relative tolerance is refused
        objpert_fit(X, y, logistic, lam=1e-3, sigma=1.0, rng=rng, tol=1e-2, norm_bound=None)


def _no_data_numbers(message, allowed=()):
    """A failure message carries no number but the caller's own settings."""
    import re

    found = [m for m in re.findall(r"\d[\d.e+-]*", message) if m not in allowed]
    assert not found, f"message carries numbers {found}: {message}"


def test_result_repr_shows_no_internal_state():
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(30, 3))
    y = np.where(rng.random(30) < 0.5, 1.0, -1.0)
    res = objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, rng=1)
    text = repr(res)
    assert "theta_released=" in text and "lam=" in text and "grad_tol=" in text and "sigma_out=" in text
    for hidden in (" theta=", "(theta=", "b=", "grad_norm=", " n=", "n_iter=", "hessian_cholesky="):
        assert hidden not in text


def test_result_is_immutable_and_reproducible():
    rng = np.random.default_rng(11)
    X, y = _data(rng, 50, 3, logistic)
    r1 = objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, rng=np.random.default_rng(1), norm_bound=None)
    r2 = objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, rng=np.random.default_rng(1), norm_bound=None)
    np.testing.assert_array_equal(r1.theta, r2.theta)
    np.testing.assert_array_equal(r1.b, r2.b)
    with pytest.raises(ValueError):
        r1.theta[0] = 1.0
    with pytest.raises(AttributeError):
        r1.sigma = 2.0  # frozen
    assert isinstance(r1, ObjPertResult) and r1.d == 3 and r1.n == 50 and r1.loss is logistic
    assert r1.lam == 1.0 and r1.sigma == 1.0
    assert r1.hessian_cholesky is None
    eps_without = ex_post_pdp(r1, X, y, X, y, member=True)
    assert r1.hessian_cholesky is None  # immutable: nothing is cached on the result
    r3 = objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, rng=np.random.default_rng(1), keep_hessian=True, norm_bound=None)
    L = r3.hessian_cholesky
    H = (X * logistic.d2(X @ r3.theta, y)[:, None]).T @ X + np.eye(3)
    np.testing.assert_allclose(L @ L.T, H, rtol=1e-12)
    with pytest.raises(ValueError):
        L[0, 0] = 1.0  # read-only
    np.testing.assert_allclose(ex_post_pdp(r3, X, y, X, y, member=True), eps_without, rtol=1e-12)


def test_erm_fit_nonprivate_matches_sklearn():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(12)
    X, y = _data(rng, 400, 5, logistic, scale=3.0)
    lam = 0.7
    theta = erm_fit_nonprivate(X, y, logistic, lam=lam)
    sk = LogisticRegression(C=1.0 / lam, fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(theta, sk.coef_.ravel(), atol=1e-6)
    assert np.linalg.norm(_perturbed_grad(X, y, logistic, lam, 0.0, theta)) <= 1e-10 * 400 * np.max(np.linalg.norm(X, axis=1))
    Xs, ys = _data(rng, 100, 4, squared)
    np.testing.assert_allclose(erm_fit_nonprivate(Xs, ys, squared, lam=2.0),
                               np.linalg.solve(Xs.T @ Xs + 2.0 * np.eye(4), Xs.T @ ys), atol=1e-12)


# ---------------------------------------------------------------- ex-post pDP
def _reference_ex_post(res, X, y, x, yz, member):
    """Per-target reference: slogdet of the neighbour's Hessian and the noise vectors b, b'."""
    loss, lam, s2 = res.loss, res.lam, res.sigma**2
    th = res.theta
    H = (X * loss.d2(X @ th, y)[:, None]).T @ X + lam * np.eye(len(th))
    b = -(X.T @ loss.d1(X @ th, y) + lam * th)
    g = loss.d1(x @ th, yz) * x
    Gz = loss.d2(x @ th, yz) * np.outer(x, x)
    sgn = -1.0 if member else 1.0
    ld = np.linalg.slogdet(H)[1] - np.linalg.slogdet(H + sgn * Gz)[1]
    b_nb = b - sgn * g
    return ld + (b_nb @ b_nb - b @ b) / (2 * s2)


def test_vectorized_equals_per_target_reference():
    rng = np.random.default_rng(13)
    X, y = _data(rng, 80, 7, logistic, scale=3.0)
    res = objpert_fit(X, y, logistic, lam=0.2, sigma=0.5, rng=rng, norm_bound=None)
    Z, yz = _data(rng, 30, 7, logistic, scale=3.0)
    targets = np.vstack([X[:30], Z])
    labels = np.concatenate([y[:30], yz])
    member = np.r_[np.ones(30, bool), np.zeros(30, bool)]
    got = ex_post_pdp(res, X, y, targets, labels, member=member, signed=True)
    ref = np.array([_reference_ex_post(res, X, y, targets[j], labels[j], member[j]) for j in range(60)])
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)
    # a chunk boundary inside the targets gives the same answer
    big = np.repeat(targets, 200, axis=0)
    got_big = ex_post_pdp(res, X, y, big, np.repeat(labels, 200), member=np.repeat(member, 200), signed=True)
    np.testing.assert_allclose(got_big, np.repeat(got, 200), rtol=1e-13, atol=1e-15)
    # scalar target -> float
    one = ex_post_pdp(res, X, y, targets[0], labels[0], member=True)
    assert isinstance(one, float) and one == pytest.approx(abs(ref[0]), rel=1e-10)


def test_removal_guard_and_data_mismatch():
    rng = np.random.default_rng(14)
    X = np.c_[rng.normal(size=(40, 1)), np.zeros((40, 1))]
    y = squared.check_labels(rng.normal(size=40))
    res = objpert_fit(X, y, squared, lam=0.1, sigma=1.0, rng=rng, norm_bound=None)
    # "removing" a point that is not in D (x^T H^-1 x f'' >= 1 along the empty direction): the
    # membership check names it before the non-convexity guard is reached
    with pytest.raises(ValueError, match=r"target_x\[0\].*not a record of \(X, y\)"):
        ex_post_pdp(res, X, y, np.array([[0.0, 1.0]]), np.array([0.0]), member=True)
    # adding it is fine
    assert np.isfinite(ex_post_pdp(res, X, y, np.array([[0.0, 1.0]]), np.array([0.0]), member=False)).all()
    with pytest.raises(ValueError, match="not the data set"):
        ex_post_pdp(res, X + 0.1, y, X, y, member=True)
    with pytest.raises(ValueError, match="fitted on"):
        ex_post_pdp(res, X[:-1], y[:-1], X, y, member=True)


def test_ex_post_pdp_general_equals_glm_and_recursive_product():
    rng = np.random.default_rng(15)
    X, y = _data(rng, 60, 4, robust_log, scale=3.0)
    res = objpert_fit(X, y, robust_log, lam=0.3, sigma=0.7, rng=rng, norm_bound=None)
    Z, yz = _data(rng, 10, 4, robust_log, scale=3.0)
    targets = np.vstack([X[:10], Z])
    labels = np.concatenate([y[:10], yz])
    member = np.r_[np.ones(10, bool), np.zeros(10, bool)]
    t = targets @ res.theta
    grads = robust_log.d1(t, labels)[:, None] * targets
    hess = robust_log.d2(t, labels)[:, None, None] * targets[:, :, None] * targets[:, None, :]
    np.testing.assert_allclose(ex_post_pdp_general(res, X, y, grads, hess, member=member),
                               ex_post_pdp(res, X, y, targets, labels, member=member), rtol=1e-10, atol=1e-12)
    # A non-GLM per-example loss (full-rank PSD Hessian): the log-det term equals the paper's
    # recursive matrix-determinant-lemma product prod_j (1 -+ mu_j) over the eigenpairs of G.
    H = (X * robust_log.d2(X @ res.theta, y)[:, None]).T @ X + 0.3 * np.eye(4)
    b = -(X.T @ robust_log.d1(X @ res.theta, y) + 0.3 * res.theta)
    for member_flag in (False, True):
        A = rng.normal(size=(4, 4))
        G = 0.5 * A @ A.T / 4
        g = rng.normal(size=4)
        lam_k, U = np.linalg.eigh(G)
        # in the paper's convention: grad b = -H, and |det(grad b -+ sum_k lam_k u_k u_k^T)|
        sign = 1.0 if not member_flag else -1.0  # add: subtract from grad b; remove: add
        M = -H.copy()
        prod = 1.0
        for k in range(4):
            mu = lam_k[k] * U[:, k] @ np.linalg.solve(M, U[:, k])
            prod *= 1 - sign * mu
            M = M - sign * lam_k[k] * np.outer(U[:, k], U[:, k])
        ref = -math.log(prod) + g @ g / (2 * 0.49) - (1.0 if not member_flag else -1.0) * (g @ b) / 0.49
        got = ex_post_pdp_general(res, X, y, g, G, member=member_flag, signed=True)
        assert got == pytest.approx(ref, abs=1e-10)
    with pytest.raises(ValueError, match="symmetric"):
        ex_post_pdp_general(res, X, y, g, G + np.triu(np.ones((4, 4)), 1), member=False)
    with pytest.raises(ValueError, match="positive definite"):
        ex_post_pdp_general(res, X, y, g, 1e6 * np.eye(4), member=True)


# ------------------------------------------------------ data-independent bounds
def test_thm8_log_term_dominates_always():
    rng = np.random.default_rng(16)
    for trial in range(20):
        loss = [logistic, robust_log, huber][trial % 3]
        d = 1 + trial % 4
        X, y = _data(rng, 30, d, loss, scale=2.0)
        lam = float(rng.uniform(0.5, 5.0))
        res = objpert_fit(X, y, loss, lam=lam, sigma=1.0, rng=rng, norm_bound=None)
        Z, yz = _data(rng, 20, d, loss, scale=2.0)
        for tx, ty, mem in ((X, y, True), (Z, yz, False)):
            terms = ex_post_pdp_terms(res, X, y, tx, ty, member=mem)
            c2 = loss.d2(tx @ res.theta, ty)
            a = c2 * np.einsum("ij,ij->i", tx, tx) / lam
            sharp = np.log1p(a)
            paper = np.where(a < 1, -np.log1p(-np.minimum(a, 0.999999)), np.inf)
            assert np.all(np.abs(terms.log_det) <= sharp + 1e-12)
            assert np.all(sharp <= paper)
            # the function's first term is that log term: strip the two Gaussian terms
            rho = 0.1
            c1 = np.abs(loss.d1(tx @ res.theta, ty))
            rest = (c1**2 * np.einsum("ij,ij->i", tx, tx) / 2 + c1 * np.abs(tx).sum(1) * math.sqrt(2 * math.log(2 * d / rho)))
            for flag, first in ((False, paper), (True, sharp)):
                bound = pdp_bound_data_independent(loss, tx, lam=lam, sigma=1.0, rho=rho, theta=res.theta, target_y=ty, sharp=flag)
                np.testing.assert_allclose(bound - rest, first, rtol=1e-10, atol=1e-12)
            # the worst-case constants dominate the output-dependent ones
            worst = pdp_bound_data_independent(loss, tx, lam=lam, sigma=1.0, rho=rho, sharp=True)
            assert np.all(worst >= pdp_bound_data_independent(loss, tx, lam=lam, sigma=1.0, rho=rho, theta=res.theta, target_y=ty,
                                                              sharp=True) - 1e-12)


def test_thm9_holds_with_probability_at_least_one_minus_rho():
    # Repeated ObjPert draws; the bound is claimed simultaneously for all targets with
    # probability >= 1 - rho. One-sided binomial test of the failure rate at level 1e-3.
    rng = np.random.default_rng(17)
    d, lam, sigma, rho = 2, 2.0, 0.3, 0.5
    X, y = _data(rng, 25, d, logistic, scale=2.0)
    Z, yz = _data(rng, 10, d, logistic, scale=2.0)
    runs, fails, implied = 400, 0, 0
    thr = sigma * math.sqrt(2 * math.log(2 * d / rho))
    for _ in range(runs):
        res = objpert_fit(X, y, logistic, lam=lam, sigma=sigma, rng=rng, norm_bound=None)
        eps = np.r_[ex_post_pdp(res, X, y, X, y, member=True), ex_post_pdp(res, X, y, Z, yz, member=False)]
        bound = np.r_[pdp_bound_data_independent(logistic, X, lam=lam, sigma=sigma, rho=rho, theta=res.theta, target_y=y),
                      pdp_bound_data_independent(logistic, Z, lam=lam, sigma=sigma, rho=rho, theta=res.theta, target_y=yz)]
        failed = bool(np.any(eps > bound + 1e-12))
        fails += failed
        # deterministic part: on the event ||b||_inf <= thr the bound must hold
        if np.max(np.abs(res.b)) <= thr:
            implied += 1
            assert not failed
    assert implied > 0
    assert stats.binomtest(fails, runs, rho, alternative="greater").pvalue > 1e-3


def test_bound_vectorization_and_edge_cases():
    rng = np.random.default_rng(18)
    tx = rng.normal(size=(7, 3))
    vec = pdp_bound_data_independent(logistic, tx, lam=1.0, sigma=2.0, rho=0.05)
    one = [pdp_bound_data_independent(logistic, x, lam=1.0, sigma=2.0, rho=0.05) for x in tx]
    np.testing.assert_allclose(vec, one, rtol=1e-15)
    assert isinstance(one[0], float)
    # beta ||x||^2 >= lam: the paper's log term is infinite, the sharp one is finite
    assert math.isinf(pdp_bound_data_independent(logistic, [4.0, 0.0, 0.0], lam=1.0, sigma=2.0, rho=0.05))
    assert math.isfinite(pdp_bound_data_independent(logistic, [4.0, 0.0, 0.0], lam=1.0, sigma=2.0, rho=0.05, sharp=True))
    assert math.isinf(pdp_bound_data_independent(squared, [0.1, 0.0, 0.0], lam=1.0, sigma=2.0, rho=0.05))
    with pytest.raises(ValueError, match="rho"):
        pdp_bound_data_independent(logistic, tx, lam=1.0, sigma=2.0, rho=1.0)
    with pytest.raises(ValueError, match="target_y"):
        pdp_bound_data_independent(logistic, tx, lam=1.0, sigma=2.0, rho=0.1, theta=np.zeros(3))
    with pytest.raises(ValueError, match="target_y"):
        pdp_bound_data_independent(logistic, tx, lam=1.0, sigma=2.0, rho=0.1, theta=np.zeros(3), target_y=np.zeros(7))


# --------------------------------------------------------------- classic (eps, delta)
def test_classic_epsilon_kifer_form_and_sigma_round_trip():
    rng = np.random.default_rng(19)
    for _ in range(50):
        L, beta = float(rng.uniform(0.1, 2)), float(rng.uniform(0.05, 1))
        lam, sigma, delta = float(rng.uniform(0.1, 50)), float(rng.uniform(0.5, 50)), float(10 ** rng.uniform(-9, -2))
        eps = objpert_epsilon_classic(delta, L=L, beta=beta, lam=lam, sigma=sigma)
        # both conditions of Thm 2.8 hold at eps, and one of them is tight
        assert lam >= 2 * beta / eps * (1 - 1e-12)
        need = L * math.sqrt(8 * math.log(2 / delta) + 4 * eps) / eps
        assert sigma >= need * (1 - 1e-12)
        assert min(lam - 2 * beta / eps, sigma - need) == pytest.approx(0.0, abs=1e-9 * max(lam, sigma))
        # sigma_classic inverts it when the Gaussian condition is the binding one
        if lam > 2 * beta / eps * (1 + 1e-9):
            assert objpert_sigma_classic(eps, delta, L=L, beta=beta, lam=lam) == pytest.approx(sigma, rel=1e-9)
        # the lecture's form is never larger
        lec = objpert_epsilon_classic(delta, L=L, beta=beta, lam=lam, sigma=sigma, form="lecture")
        assert lec <= eps
        assert objpert_sigma_classic(lec, delta, L=L, beta=beta, lam=lam, form="lecture") == pytest.approx(sigma, rel=1e-9)
    with pytest.raises(ValueError, match="lam"):
        objpert_sigma_classic(0.5, 1e-5, L=1.0, beta=1.0, lam=1.0)  # needs lam >= 2 beta / eps = 4
    with pytest.raises(ValueError, match="lam"):
        objpert_sigma_classic(0.01, 1e-5, L=1.0, beta=1.0, lam=1.0, form="lecture")
    with pytest.raises(ValueError, match="form"):
        objpert_epsilon_classic(1e-5, L=1, beta=1, lam=1, sigma=1, form="other")


def test_lecture_guarantee_privacy_loss_tail_by_simulation():
    # The lecture's (eps, delta): the privacy loss log p_D/p_D' exceeds eps with probability <= delta.
    # Worst-case-ish neighbours: remove / add a point at ||x|| = 1. Binomial test at level 1e-3.
    rng = np.random.default_rng(20)
    d, lam, sigma, delta = 2, 1.0, 1.5, 0.2
    X = rng.normal(size=(20, d))
    X /= np.maximum(1, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(rng.random(20) < 0.5, 1.0, -1.0)
    # each neighbouring pair separately: remove X[0] or X[1]; add a unit vector with either label
    Z = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.6, -0.8], [0.6, -0.8]])
    yz = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    eps = objpert_epsilon_classic(delta, L=logistic.lipschitz, beta=logistic.smoothness, lam=lam, sigma=sigma, form="lecture")
    runs = 400
    over = np.zeros(8, dtype=int)
    for _ in range(runs):
        res = objpert_fit(X, y, logistic, lam=lam, sigma=sigma, rng=rng, norm_bound=1.0)
        loss_rm = ex_post_pdp(res, X, y, X[:2], y[:2], member=True, signed=True)
        loss_add = ex_post_pdp(res, X, y, Z, yz, member=False, signed=True)
        over += np.r_[loss_rm, loss_add] > eps
    for k in over:
        assert stats.binomtest(int(k), runs, delta, alternative="greater").pvalue > 1e-3 / 8


# ------------------------------------------------------------ output perturbation
def test_output_perturbation_sensitivity_is_LR_over_lambda_not_its_square_root():
    # D = {z} vs the empty data set, robust loss with a far-away label: the minimizer moves by
    # nearly L R / lam, which exceeds sqrt(L R / lam), the lecture's (slipped) bound, when L R > lam.
    lam = 0.1
    x = np.array([[1.0, 0.0]])
    theta = erm_fit_nonprivate(x, np.array([1e3]), robust_log, lam=lam)
    move = float(np.linalg.norm(theta - erm_fit_nonprivate(np.zeros((0, 2)), np.zeros(0), robust_log, lam=lam)))
    sens = output_perturbation_sensitivity(robust_log, lam=lam, norm_bound=1.0)
    assert sens == pytest.approx(1.0 / lam)
    assert math.sqrt(1.0 / lam) < move <= sens
    assert move == pytest.approx(sens, rel=1e-6)
    # random neighbouring data sets never exceed it
    rng = np.random.default_rng(21)
    for _ in range(20):
        X, y = _data(rng, 15, 3, logistic, scale=3.0)
        X /= np.maximum(1, np.linalg.norm(X, axis=1))[:, None]
        a = erm_fit_nonprivate(X, y, logistic, lam=0.5)
        b = erm_fit_nonprivate(X[1:], y[1:], logistic, lam=0.5)
        assert np.linalg.norm(a - b) <= output_perturbation_sensitivity(logistic, lam=0.5)


def test_output_perturbation_fit():
    from pdpkit.gaussian import gaussian_sigma

    rng = np.random.default_rng(22)
    X, y = _data(rng, 200, 4, logistic)
    X /= np.maximum(1, np.linalg.norm(X, axis=1))[:, None]
    out = output_perturbation_fit(X, y, logistic, 1.0, 1e-5, lam=2.0, rng=np.random.default_rng(0))
    assert out.sensitivity == pytest.approx(0.5 * (1 + 2e-10))
    assert out.sigma == pytest.approx(float(gaussian_sigma(1.0, 1e-5, sensitivity=out.sensitivity)))
    theta_hat = erm_fit_nonprivate(X, y, logistic, lam=2.0)
    noise = np.random.default_rng(0).normal(0.0, out.sigma, size=4)
    np.testing.assert_allclose(out.theta, theta_hat + noise, atol=1e-9)
    with pytest.raises(ValueError, match="norm_bound"):
        output_perturbation_fit(2 * X, y, logistic, 1.0, 1e-5, lam=2.0)
    with pytest.raises(ValueError, match="unbounded gradient"):
        output_perturbation_fit(X, y, squared, 1.0, 1e-5, lam=2.0)
    with pytest.raises(ValueError, match="delta"):
        output_perturbation_fit(X, y, logistic, 1.0, 0.0, lam=2.0)
    with pytest.raises(ValueError, match="eps"):
        output_perturbation_fit(X, y, logistic, -1.0, 1e-5, lam=2.0)


# -------------------------------------------------------------------- validation
def test_invalid_inputs_name_the_parameter():
    rng = np.random.default_rng(23)
    X, y = _data(rng, 20, 3, logistic)
    X = X / np.linalg.norm(X, axis=1).max()  # inside the default norm_bound=1
    res = objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, rng=rng)
    bad_X = X.copy()
    bad_X[0, 0] = np.nan
    cases = [
        (lambda: objpert_fit(bad_X, y, logistic, lam=1.0, sigma=1.0), ValueError, r"\bX\b.*finite"),
        (lambda: objpert_fit(X[0], y, logistic, lam=1.0, sigma=1.0), ValueError, r"\bX\b.*dimension"),
        (lambda: objpert_fit(X, y[:-1], logistic, lam=1.0, sigma=1.0), ValueError, r"\by\b.*one label per row"),
        (lambda: objpert_fit(X, np.zeros(20), logistic, lam=1.0, sigma=1.0), ValueError, r"\by\b.*-1 and \+1"),
        (lambda: objpert_fit(X, y, logistic, lam=0.0, sigma=1.0), ValueError, r"\blam\b.*> 0"),
        (lambda: objpert_fit(X, y, logistic, lam=-1.0, sigma=1.0), ValueError, r"\blam\b"),
        (lambda: objpert_fit(X, y, logistic, lam=np.nan, sigma=1.0), ValueError, r"\blam\b"),
        (lambda: objpert_fit(X, y, logistic, lam=1.0, sigma=0.0), ValueError, r"\bsigma\b.*> 0"),
        (lambda: objpert_fit(X, y, logistic, lam=1.0, sigma=np.inf), ValueError, r"\bsigma\b"),
        (lambda: objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, b=np.ones(2)), ValueError, r"\bb\b.*shape"),
        (lambda: objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, b=[np.nan] * 3), ValueError, r"\bb\b.*finite"),
        (lambda: objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, tol=0.0), TypeError, r"\bgrad_tol\b"),
        (lambda: objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, grad_tol=0.0), ValueError, r"\bgrad_tol\b"),
        (lambda: objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, grad_tol="1e-8"), TypeError, r"\bgrad_tol\b"),
        (lambda: objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, sigma_out=-1.0), ValueError, r"\bsigma_out\b"),
        (lambda: objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, max_iter=0), ValueError, r"\bmax_iter\b"),
        (lambda: objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, max_iter=2.5), TypeError, r"\bmax_iter\b"),
        (lambda: objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, rng=1.5), TypeError, r"\brng\b"),
        (lambda: objpert_fit(X, y, "hinge", lam=1.0, sigma=1.0), ValueError, r"\bloss\b"),
        (lambda: objpert_fit(3 * X, y, logistic, lam=1.0, sigma=1.0, norm_bound=1.0), ValueError, r"\bnorm_bound\b"),
        (lambda: ex_post_pdp(res, X, y, X[:, :2], y, member=True), ValueError, r"\btarget_x\b.*shape"),
        (lambda: ex_post_pdp(res, X, y, X, y[:-1], member=True), ValueError, r"\btarget_y\b"),
        (lambda: ex_post_pdp(res, X, y, X, np.zeros(20), member=True), ValueError, r"\btarget_y\b.*-1 and \+1"),
        (lambda: ex_post_pdp(res, X, y, bad_X, y, member=True), ValueError, r"\btarget_x\b.*finite"),
        (lambda: ex_post_pdp(res, X, y, X, y, member=1), TypeError, r"\bmember\b"),
        (lambda: ex_post_pdp(res, X, y, X, y, member=np.ones(3, bool)), ValueError, r"\bmember\b"),
        (lambda: ex_post_pdp("fit", X, y, X, y, member=True), TypeError, r"\bresult\b"),
        (lambda: ex_post_pdp(res, bad_X, y, X, y, member=True), ValueError, r"\bX\b.*finite"),
        (lambda: ex_post_pdp_general(res, X, y, np.ones(2), np.eye(2), member=True), ValueError, r"\btarget_grad\b"),
        (lambda: ex_post_pdp_general(res, X, y, np.ones(3), np.eye(2), member=True), ValueError, r"\btarget_hessian\b"),
        (lambda: objpert_log_density(np.zeros(2), X, y, logistic, lam=1.0, sigma=1.0), ValueError, r"\btheta\b"),
        (lambda: objpert_log_density(np.zeros(3), X, y, logistic, lam=1.0, sigma=-1.0), ValueError, r"\bsigma\b"),
        (lambda: pdp_bound_data_independent(logistic, X, lam=0.0, sigma=1.0, rho=0.1), ValueError, r"\blam\b"),
        (lambda: pdp_bound_data_independent(logistic, X, lam=1.0, sigma=0.0, rho=0.1), ValueError, r"\bsigma\b"),
        (lambda: objpert_epsilon_classic(1.5, L=1.0, beta=0.25, lam=1.0, sigma=1.0), ValueError, r"\bdelta\b"),
        (lambda: objpert_epsilon_classic(1e-5, L=0.0, beta=0.25, lam=1.0, sigma=1.0), ValueError, r"\bL\b"),
        (lambda: objpert_epsilon_classic(1e-5, L=1.0, beta=-0.25, lam=1.0, sigma=1.0), ValueError, r"\bbeta\b"),
        (lambda: objpert_sigma_classic(0.0, 1e-5, L=1.0, beta=0.25, lam=1.0), ValueError, r"\beps\b"),
        (lambda: erm_fit_nonprivate(X, y, logistic, lam=0.0), ValueError, r"\blam\b"),
        (lambda: output_perturbation_sensitivity(logistic, lam=1.0, norm_bound=-1.0), ValueError, r"\bnorm_bound\b"),
    ]
    for call, exc, pattern in cases:
        with pytest.raises(exc, match=pattern):
            call()


# ------------------------------------------------ norm bound, Hessian, membership
def test_norm_bound_default_is_enforced_and_recorded():
    rng = np.random.default_rng(31)
    X, y = _data(rng, 30, 3, logistic)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)  # every row on the unit sphere
    res = objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, rng=0)
    assert res.norm_bound == 1.0
    assert "norm_bound=1.0" in repr(res)
    # rounding on the sphere is accepted; a row 1e-9 beyond is not, and the message names no row,
    # norm or count (pdpkit.check.check_nonprivate does, for the curator)
    Xo = X.copy()
    Xo[7] *= 1.0 + 1e-9
    Xo[12] *= 1.5
    beyond = r"^X has a row whose Euclidean norm exceeds norm_bound=1; .*check_nonprivate"
    with pytest.raises(ValueError, match=beyond) as info:
        objpert_fit(Xo, y, logistic, lam=1.0, sigma=1.0, rng=0)
    _no_data_numbers(str(info.value), allowed=("1",))  # no "row 12", no norm 1.5, no "2 row(s)"
    Xo[12] /= 1.5
    with pytest.raises(ValueError, match=beyond) as info:
        objpert_fit(Xo, y, logistic, lam=1.0, sigma=1.0, rng=0)
    _no_data_numbers(str(info.value), allowed=("1",))  # no "row 7", no norm 1.000000001
    assert objpert_fit(X * (1.0 + 1e-13), y, logistic, lam=1.0, sigma=1.0, rng=0).norm_bound == 1.0
    # a larger bound is recorded; None must be asked for and is recorded as None
    assert objpert_fit(1.9 * X, y, logistic, lam=1.0, sigma=1.0, rng=0, norm_bound=2.0).norm_bound == 2.0
    with pytest.raises(ValueError, match="norm_bound"):
        objpert_fit(3 * X, y, logistic, lam=1.0, sigma=1.0, rng=0)
    free = objpert_fit(3 * X, y, logistic, lam=1.0, sigma=1.0, rng=0, norm_bound=None)
    assert free.norm_bound is None
    # the check changes nothing else: same noise, same minimizer
    np.testing.assert_array_equal(objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, rng=0, norm_bound=None).theta,
                                  res.theta)
    with pytest.raises(ValueError, match="norm_bound"):
        objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, norm_bound=0.0)


@pytest.mark.parametrize("loss", [logistic, huber, squared])
def test_objpert_hessian_is_the_jacobian_of_the_gradient(loss):
    rng = np.random.default_rng(32)
    X, y = _data(rng, 40, 4, loss, scale=2.0)
    lam = 0.7
    res = objpert_fit(X, y, loss, lam=lam, sigma=0.5, rng=rng, norm_bound=None, keep_hessian=True)
    H = objpert_hessian(res, X, y)
    assert H.shape == (4, 4)
    np.testing.assert_array_equal(H, H.T)
    # independent reference: central differences of the analytic gradient of J at theta
    def grad(th):
        return X.T @ loss.d1(X @ th, y) + lam * th

    h = 1e-5
    num = np.column_stack([(grad(res.theta + h * e) - grad(res.theta - h * e)) / (2 * h) for e in np.eye(4)])
    np.testing.assert_allclose(H, num, rtol=1e-6, atol=1e-6)
    # and it is the matrix whose Cholesky factor the fit kept
    L = res.hessian_cholesky
    np.testing.assert_allclose(L @ L.T, H, rtol=1e-12, atol=1e-12)
    assert np.linalg.eigvalsh(H).min() >= lam * (1 - 1e-12)
    # test the tester: the Hessian at another point differs from the difference quotient at theta
    assert not np.allclose(H, num + np.outer(X[0], X[0]), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="not the data set"):
        objpert_hessian(res, X + 0.1, y)
    with pytest.raises(TypeError, match="result"):
        objpert_hessian("fit", X, y)


def test_member_targets_must_be_records_of_the_data():
    rng = np.random.default_rng(33)
    X, y = _data(rng, 50, 3, logistic)
    X[5, 1] = 0.0
    res = objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, rng=rng, norm_bound=None)
    # members given in any order, repeated, with -0.0 for 0.0: accepted
    idx = np.array([5, 0, 49, 5, 17])
    tx = X[idx].copy()
    tx[0, 1] = -0.0
    eps = ex_post_pdp(res, X, y, tx, y[idx], member=True)
    assert np.all(np.isfinite(eps))
    # a mixed call: non-members may be anything
    Z, yz = _data(rng, 4, 3, logistic)
    mixed = ex_post_pdp(res, X, y, np.r_[X[:3], Z], np.r_[y[:3], yz], member=np.r_[[True] * 3, [False] * 4])
    np.testing.assert_allclose(mixed[:3], ex_post_pdp(res, X, y, X[:3], y[:3], member=True), rtol=1e-13)
    # a member target that is not a record: the message names target_x and its index
    bad_x = np.r_[X[:3], Z[:1], X[3:4]]
    bad_y = np.r_[y[:3], yz[:1], y[3:4]]
    for fn in (ex_post_pdp, ex_post_pdp_terms):
        with pytest.raises(ValueError, match=r"target_x\[3\].*not a record of \(X, y\)"):
            fn(res, X, y, bad_x, bad_y, member=True)
    # the right row with the wrong label is not a record either
    with pytest.raises(ValueError, match=r"target_x\[1\]"):
        ex_post_pdp(res, X, y, X[:2], np.r_[y[0], -y[1]], member=True)
    # a row that differs in the last bit is not a record
    near = X[10].copy()
    near[2] = np.nextafter(near[2], np.inf)
    with pytest.raises(ValueError, match=r"target_x\[0\]"):
        ex_post_pdp(res, X, y, near, y[10], member=True)
    # the same targets as non-members are fine
    assert np.all(np.isfinite(ex_post_pdp(res, X, y, bad_x, bad_y, member=False)))


def test_member_check_is_exact_under_hash_collisions(monkeypatch):
    # every record given the same hash: the check must fall back to comparing records exactly
    import pdpkit._validation as validation

    rng = np.random.default_rng(34)
    X, y = _data(rng, 60, 3, logistic)
    X /= np.linalg.norm(X, axis=1).max()
    res = objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, rng=rng)
    real = validation._records
    collide = lambda A, b: (real(A, b)[0], np.zeros(A.shape[0], np.uint64))
    monkeypatch.setattr(validation, "_records", collide)
    perm = rng.permutation(60)
    eps = ex_post_pdp(res, X, y, X[perm], y[perm], member=True)
    monkeypatch.undo()
    np.testing.assert_array_equal(eps, ex_post_pdp(res, X, y, X[perm], y[perm], member=True))
    monkeypatch.setattr(validation, "_records", collide)
    with pytest.raises(ValueError, match=r"target_x\[1\]"):
        ex_post_pdp(res, X, y, np.r_[X[:1], 0.5 * X[1:2]], y[:2], member=True)


def test_member_check_is_exact_when_records_share_all_but_the_last_byte():
    # records that agree everywhere except the last bit of the last feature: matched exactly
    rng = np.random.default_rng(34)
    X, y = _data(rng, 60, 3, logistic)
    X /= np.linalg.norm(X, axis=1).max() * 1.01
    X[:, :2] = X[0, :2]
    X[:, 2] = np.nextafter(0.5, 1.0, dtype=float) + np.arange(60) * np.spacing(0.5)
    res = objpert_fit(X, y, logistic, lam=1.0, sigma=1.0, rng=rng, norm_bound=None)
    perm = rng.permutation(60)
    assert np.all(np.isfinite(ex_post_pdp(res, X, y, X[perm], y[perm], member=True)))
    between = X[7].copy()
    between[2] = np.nextafter(X[60 - 1, 2], np.inf)
    with pytest.raises(ValueError, match=r"target_x\[1\]"):
        ex_post_pdp(res, X, y, np.r_[X[:1], between[None]], y[:2], member=True)
