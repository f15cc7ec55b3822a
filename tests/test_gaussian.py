"""Tests of pdpkit.gaussian against independent references (scipy densities, mpmath
quadrature of the hockey-stick divergence, Monte Carlo, brute-force refits)."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from pdpkit import gaussian as g
from pdpkit import output_perturbation as op


# ----------------------------------------------------------------------------- ex post
@pytest.mark.parametrize("d", [1, 2, 5, 17])
def test_ex_post_equals_log_density_ratio(d):
    rng = np.random.default_rng(d)
    for _ in range(20):
        q_d = rng.normal(size=d)
        delta_z = rng.normal(scale=rng.uniform(0.01, 3), size=d)
        sigma = rng.uniform(0.1, 5)
        noise = rng.normal(scale=sigma, size=d)
        o = q_d + noise
        lp = stats.multivariate_normal(q_d, sigma**2 * np.eye(d)).logpdf(o)
        lq = stats.multivariate_normal(q_d + delta_z, sigma**2 * np.eye(d)).logpdf(o)
        assert g.gaussian_privacy_loss(delta_z, noise, sigma=sigma) == pytest.approx(lp - lq, rel=1e-10, abs=1e-10)
        assert g.gaussian_ex_post_pdp(delta_z, noise, sigma=sigma) == pytest.approx(abs(lp - lq), rel=1e-10, abs=1e-10)


def test_ex_post_vectorized_over_targets_and_outputs():
    rng = np.random.default_rng(0)
    deltas = rng.normal(size=(7, 1, 3))
    noises = rng.normal(size=(1, 5, 3))
    out = g.gaussian_ex_post_pdp(deltas, noises, sigma=2.0)
    assert out.shape == (7, 5)
    for i in range(7):
        for j in range(5):
            assert out[i, j] == pytest.approx(g.gaussian_ex_post_pdp(deltas[i, 0], noises[0, j], sigma=2.0))


def test_privacy_loss_distribution_is_normal_mu2_over_2():
    """Under o ~ M(D), L(o) ~ N(mu^2/2, mu^2): check with a KS test (fixed seed)."""
    rng = np.random.default_rng(1)
    delta_z, sigma = np.array([0.6, -0.8, 0.0]), 1.3
    mu = 1.0 / sigma
    noise = rng.normal(scale=sigma, size=(50_000, 3))
    losses = g.gaussian_privacy_loss(delta_z, noise, sigma=sigma)
    assert stats.kstest(losses, stats.norm(mu**2 / 2, mu).cdf).pvalue > 1e-3


# ----------------------------------------------------------------------------- Cor 23
def test_cor23_bounds_hold_and_forms_are_ordered():
    rng = np.random.default_rng(2)
    delta_z, sigma, rho = np.array([0.5, 0.5]), 1.0, 0.01
    phi_form = g.gaussian_ex_post_bound(np.linalg.norm(delta_z), sigma=sigma, rho=rho)
    log_form = g.gaussian_ex_post_bound(np.linalg.norm(delta_z), sigma=sigma, rho=rho, form="sqrt_log")
    assert phi_form <= log_form
    n = 200_000
    eps = g.gaussian_ex_post_pdp(delta_z, rng.normal(scale=sigma, size=(n, 2)), sigma=sigma)
    viol = np.sum(eps > phi_form)
    # exact: P(violation) <= rho; binomial upper tail at 1e-6
    assert stats.binom.sf(viol - 1, n, rho) > 1e-6
    # and the Phi form is tight: the violation rate is close to rho (two-sided tail of |L|
    # exceeds the bound only on the upper side, so the rate is about rho/2)
    assert viol / n == pytest.approx(rho / 2, rel=0.1)


def test_cor23_pdp_bound_dominates_tight_epsilon():
    sens = np.linspace(0.01, 5, 50)
    for delta in [1e-12, 1e-6, 1e-2]:
        assert np.all(g.gaussian_pdp_epsilon(sens, sigma=1.0, delta=delta) >= g.gaussian_epsilon(delta, sensitivity=sens, sigma=1.0) - 1e-12)


# ----------------------------------------------------------------------------- profile
def _hockey_stick_quadrature(eps: float, sens: float, sigma: float) -> mp.mpf:
    """∫ (p(o) − e^ε q(o))_+ do for p = N(Δ, σ²), q = N(0, σ²), by mpmath quadrature.

    At 30 digits: the quadrature agrees with one at 60 digits to better than 1e-18 relative on
    the tests' range, ten orders below their 1e-9 tolerance.
    """
    with mp.workdps(30):
        e, d, s = mp.mpf(eps), mp.mpf(sens), mp.mpf(sigma)
        t = d / 2 + e * s**2 / d  # the integrand is positive exactly for o > t
        integrand = lambda o: mp.npdf(o, d, s) - mp.e**e * mp.npdf(o, 0, s)
        # the integrand decays on the length scale h = σ²/(t − Δ + σ) beyond t: subdivide on it
        h = s**2 / (abs(t - d) + s)
        return mp.quad(integrand, [t + h * k for k in (0, 1, 2, 4, 8, 16, 32, 64, 128, 256)] + [mp.inf])


@pytest.mark.parametrize(
    "eps,sens,sigma",
    [(0.0, 1, 1), (1e-3, 1, 1), (0.5, 1, 1), (1, 1, 1), (3, 1, 0.7), (10, 2, 0.5), (50, 10, 1),
     (50, 1, 0.2), (0.5, 0.01, 1), (1e-3, 0.001, 1), (5, 0.3, 0.1), (20, 1, 0.3)],
)
def test_delta_equals_hockey_stick_integral(eps, sens, sigma):
    ref = float(_hockey_stick_quadrature(eps, sens, sigma))
    got = float(g.gaussian_delta(eps, sensitivity=sens, sigma=sigma))
    assert got == pytest.approx(ref, rel=1e-9, abs=1e-300)


@settings(max_examples=40, deadline=None)
@given(eps=st.floats(0, 60), mu=st.floats(1e-3, 30))
def test_delta_matches_quadrature_property(eps, mu):
    ref = float(_hockey_stick_quadrature(eps, mu, 1.0))
    got = float(g.gaussian_delta(eps, sensitivity=mu, sigma=1.0))
    assert abs(got - ref) <= 1e-9 * ref + 1e-300


def test_delta_is_decreasing_and_convex_in_exp_eps():
    """A hockey-stick divergence H_γ is convex and non-increasing in γ = e^ε (not in ε)."""
    gamma = np.linspace(1.0, 200.0, 4001)
    d = g.gaussian_delta(np.log(gamma), sensitivity=2.0, sigma=1.0)
    assert np.all((d >= 0) & (d <= 1))
    assert np.all(np.diff(d) <= 0)
    assert np.all(np.diff(d, 2) >= -1e-15)


@pytest.mark.parametrize("eps", [1e-3, 0.01, 0.3, 1.0, 4.0, 15.0, 50.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-8, 1e-5, 1e-2, 0.3])
def test_sigma_and_epsilon_invert_delta(eps, delta):
    sigma = g.gaussian_sigma(eps, delta)
    assert g.gaussian_delta(eps, sensitivity=1.0, sigma=sigma) == pytest.approx(delta, rel=1e-9)
    assert g.gaussian_epsilon(delta, sensitivity=1.0, sigma=sigma) == pytest.approx(eps, rel=1e-9)
    # and sigma is the smallest such: a slightly smaller sigma violates the target
    assert g.gaussian_delta(eps, sensitivity=1.0, sigma=sigma * (1 - 1e-6)) > delta


def test_sigma_scales_with_sensitivity_and_broadcasts():
    s = g.gaussian_sigma(np.array([0.5, 1.0, 2.0])[:, None], np.array([1e-6, 1e-3])[None, :], sensitivity=3.0)
    assert s.shape == (3, 2)
    assert s[1, 0] == pytest.approx(3.0 * g.gaussian_sigma(1.0, 1e-6), rel=1e-12)


def test_epsilon_is_zero_when_delta_already_met():
    # δ(0) = 2Φ(μ/2) − 1; for a target above it, ε = 0
    assert g.gaussian_epsilon(0.9, sensitivity=1.0, sigma=1.0) == 0.0


def test_tight_sigma_below_classic_calibration():
    for eps in [0.1, 0.5, 1.0]:
        for delta in [1e-5, 1e-9]:
            classic = np.sqrt(2 * np.log(1.25 / delta)) / eps
            assert g.gaussian_sigma(eps, delta) < classic


# ----------------------------------------------------------------------------- RDP
@pytest.mark.parametrize("alpha", [1.5, 2.0, 5.0, 32.0])
def test_rdp_equals_numerical_renyi_divergence(alpha):
    sens, sigma = 0.7, 1.1
    with mp.workdps(40):
        f = lambda o: mp.npdf(o, sens, sigma) ** alpha * mp.npdf(o, 0, sigma) ** (1 - alpha)
        ref = mp.log(mp.quad(f, [-mp.inf, 0, sens, mp.inf])) / (alpha - 1)
    assert g.gaussian_rdp(alpha, sensitivity=sens, sigma=sigma) == pytest.approx(float(ref), rel=1e-10)


# ----------------------------------------------------------------------------- Lemma 2.4
def test_covariance_pdp_matches_whitened_isotropic_and_monte_carlo():
    rng = np.random.default_rng(3)
    d = 3
    B = rng.normal(size=(d, d))
    A = B @ B.T + d * np.eye(d)
    gamma, delta = 0.5, 1e-2
    P = gamma * A
    dz = rng.normal(size=d)
    dz *= 1.5 / np.sqrt(gamma * dz @ A @ dz)  # μ = 1.5: the e^ε-weighted side stays estimable
    eps = g.gaussian_pdp_epsilon_covariance(dz, precision=P, delta=delta)
    mu = np.sqrt(gamma * dz @ A @ dz)
    assert g.mahalanobis_sensitivity(dz, precision=P) == pytest.approx(mu, rel=1e-12)
    # Monte Carlo of the hockey-stick divergence with the optimal event {L > eps}
    cov = np.linalg.inv(P)
    n = 400_000
    o_p = rng.multivariate_normal(dz, cov, size=n)
    o_q = rng.multivariate_normal(np.zeros(d), cov, size=n)
    loss = lambda o: stats.multivariate_normal(dz, cov).logpdf(o) - stats.multivariate_normal(np.zeros(d), cov).logpdf(o)
    est = np.mean(loss(o_p) > eps) - np.exp(eps) * np.mean(loss(o_q) > eps)
    se = np.sqrt(np.mean(loss(o_p) > eps) / n) + np.exp(eps) * np.sqrt(np.mean(loss(o_q) > eps) / n)
    assert abs(est - delta) < 5 * se


def test_lemma_2_4_as_printed_can_understate_epsilon():
    """The printed γ·Δ_A·sqrt(log(1.25/δ)) is below the true ε when γ is small (see chapter errata)."""
    gamma, delta_a, delta = 0.25, 1.0, 1e-5
    printed = gamma * delta_a * np.sqrt(np.log(1.25 / delta))
    true = g.gaussian_epsilon(delta, sensitivity=np.sqrt(gamma) * delta_a, sigma=1.0)
    assert printed < true


# ----------------------------------------------------------------------------- moments
def test_pdp_moments():
    eps = np.array([0.1, 0.2, 0.7])
    m = g.pdp_moments(eps, k=3)
    assert m == pytest.approx([eps.mean(), (eps**2).mean(), (eps**3).mean()])
    w = np.array([0.5, 0.25, 0.25])
    assert g.pdp_moments(eps, k=1, weights=w)[0] == pytest.approx(w @ eps)


# ----------------------------------------------------------------------------- ridge
def _ridge(X, y, lam):
    return np.linalg.solve(X.T @ X + lam * np.eye(X.shape[1]), X.T @ y)


def test_ridge_sensitivities_equal_brute_force_refits():
    rng = np.random.default_rng(4)
    n, d, lam = 40, 4, 1.0
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(X @ rng.normal(size=d) + 0.1 * rng.normal(size=n), -1, 1)
    theta = _ridge(X, y, lam)
    ref = [np.linalg.norm(theta - _ridge(np.delete(X, i, 0), np.delete(y, i), lam)) for i in range(n)]
    assert op.ridge_removal_sensitivity_nonprivate(X, y, lam=lam) == pytest.approx(ref, rel=1e-9)
    tx = rng.normal(size=(6, d))
    ty = rng.uniform(-1, 1, 6)
    ref_add = [np.linalg.norm(_ridge(np.vstack([X, tx[j]]), np.append(y, ty[j]), lam) - theta) for j in range(6)]
    assert op.ridge_addition_sensitivity_nonprivate(X, y, tx, ty, lam=lam) == pytest.approx(ref_add, rel=1e-9)


def test_ridge_pdp_for_all_beats_random_search_and_respects_global_bound():
    rng = np.random.default_rng(5)
    n, d = 30, 3
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(X @ np.array([1.0, -2.0, 0.5]) + 0.3 * rng.normal(size=n), -1, 1)
    sup = op.ridge_pdp_for_all_nonprivate(X, y, lam=1.0, rng=np.random.default_rng(0))
    U = rng.normal(size=(200_000, d))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    theta = _ridge(X, y, 1.0)
    ys = -np.sign(U @ theta)
    random_best = op.ridge_addition_sensitivity_nonprivate(X, y, U, ys, lam=1.0).max()
    assert sup >= random_best * (1 - 1e-9)
    assert sup <= random_best * 1.01  # random search over 2e5 directions in 3-d is close
    assert sup <= op.ridge_global_sensitivity_bound(n + 1, lam=1.0)


# ----------------------------------------------------------------------------- input checks
@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: g.gaussian_delta(1.0, sensitivity=1.0, sigma=0.0), "sigma"),
        (lambda: g.gaussian_delta(np.nan, sensitivity=1.0, sigma=1.0), "eps"),
        (lambda: g.gaussian_delta(1.0, sensitivity=-1.0, sigma=1.0), "sensitivity"),
        (lambda: g.gaussian_sigma(1.0, 1.5), "delta"),
        (lambda: g.gaussian_sigma(1.0, 0.0), "delta"),
        (lambda: g.gaussian_sigma(0.0, 1e-5), "eps"),
        (lambda: g.gaussian_epsilon(1e-5, sensitivity=1.0, sigma=-2.0), "sigma"),
        (lambda: g.gaussian_pdp_epsilon(1.0, sigma=1.0, delta=1.0), "delta"),
        (lambda: g.gaussian_ex_post_bound(1.0, sigma=1.0, rho=0.0), "rho"),
        (lambda: g.gaussian_rdp(0.0, sensitivity=1.0, sigma=1.0), "alpha"),
        (lambda: g.gaussian_ex_post_pdp([1.0, 2.0], [1.0, np.inf], sigma=1.0), "noise"),
        (lambda: g.gaussian_ex_post_pdp([1.0, 2.0], [1.0, 2.0, 3.0], sigma=1.0), "delta_z"),
        (lambda: op.ridge_fit_nonprivate(np.ones((3, 2)), np.ones(4), lam=1.0), "X and y"),
        (lambda: op.ridge_fit_nonprivate(np.ones((3, 2)), np.ones(3), lam=0.0), "lam"),
    ],
)
def test_invalid_arguments_name_the_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


def test_non_numeric_input_is_a_type_error():
    with pytest.raises(TypeError, match="sigma"):
        g.gaussian_delta(1.0, sensitivity=1.0, sigma="one")


def test_ridge_global_bound_dominates_adversarial_search():
    """Random and adversarially grown data sets never exceed the global bound."""
    rng = np.random.default_rng(6)
    for lam in [0.5, 1.0, 3.0]:
        for n in [1, 3, 10]:
            bound = op.ridge_global_sensitivity_bound(n, lam=lam)
            best = 0.0
            for _ in range(200):
                d = rng.integers(1, 4)
                X = rng.normal(size=(n, d))
                X[: n // 2] = X[0]  # repeated points grow the estimate along one direction
                X /= np.linalg.norm(X, axis=1, keepdims=True)
                y = rng.choice([-1.0, 1.0], size=n)
                theta = _ridge(X, y, lam)
                U = rng.normal(size=(64, d))
                U = np.vstack([U, theta[None, :] + 1e-12])
                U /= np.linalg.norm(U, axis=1, keepdims=True)
                ys = -np.sign(U @ theta + 1e-300)
                best = max(best, op.ridge_addition_sensitivity_nonprivate(X, y, U, ys, lam=lam).max())
            assert best <= bound
            assert best >= 0.2 * bound  # and the bound is not absurdly loose on small n


def test_delta_at_negative_eps_matches_mpmath_and_is_finite():
    """delta(eps) for eps < 0 (used when a Gaussian loss is composed with another one):
    the direct formula overflows to NaN; the symmetric identity must not."""
    eps = np.array([-200.0, -50.0, -10.0, -1.0, -0.1])
    got = g.gaussian_delta(eps, sensitivity=0.2, sigma=1.0)
    assert np.all(np.isfinite(got))
    with mp.workdps(50):
        ref = [float(mp.ncdf(mp.mpf("0.1") - mp.mpf(x) / mp.mpf("0.2"))
                     - mp.e ** mp.mpf(x) * mp.ncdf(mp.mpf("-0.1") - mp.mpf(x) / mp.mpf("0.2"))) for x in eps]
    np.testing.assert_allclose(got, ref, rtol=1e-12)
