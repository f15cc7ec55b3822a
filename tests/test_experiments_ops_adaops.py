"""The OPS chapter's experiment code against explicit computations (refits, closed forms)."""

from __future__ import annotations

import numpy as np
import pytest

from pdpkit import gaussian as gm
from pdpkit import ops
from pdpkit.experiments import ops_adaops as ex
from pdpkit.output_perturbation import ridge_global_sensitivity_bound


def _explicit_shifts(X, y, lam):
    """theta_hat(D) - theta_hat(D - z_i) by refitting without each member."""
    d = X.shape[1]
    full = np.linalg.solve(X.T @ X + lam * np.eye(d), X.T @ y)
    out = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        out.append(full - np.linalg.solve(X[keep].T @ X[keep] + lam * np.eye(d), X[keep].T @ y[keep]))
    return np.array(out)


def test_noise_shape_pdp_matches_explicit_refits():
    X, y, _ = ex.anisotropic_regression(15, d=3, cond=10.0, rng=1)
    lam, mse, delta = 0.7, 0.2, 1e-5
    got = ex.noise_shape_pdp(X, y, lam=lam, noise_mse=mse, delta=delta)
    H = X.T @ X + lam * np.eye(3)
    shifts = _explicit_shifts(X, y, lam)
    for name, M in (("isotropic", np.eye(3)), ("Fisher", H), ("democratic", H @ H)):
        A = M * np.trace(np.linalg.inv(M)) / mse
        assert np.isclose(np.trace(np.linalg.inv(A)), mse)
        sens = np.sqrt(np.einsum("ij,jk,ik->i", shifts, A, shifts))
        np.testing.assert_allclose(got[name].sensitivity, sens, rtol=1e-9)
        np.testing.assert_allclose(got[name].exact, gm.gaussian_epsilon(delta, sensitivity=sens, sigma=1.0),
                                   rtol=1e-9)
        np.testing.assert_allclose(got[name].printed, sens * np.sqrt(np.log(1.25 / delta)), rtol=1e-9)
    # test the tester: (3.4)'s first line (in-sample residual with the larger set's H) differs
    theta = np.linalg.solve(H, X.T @ y)
    wrong = np.abs(y - X @ theta) * np.linalg.norm(np.linalg.solve(H, X.T).T, axis=1)
    assert not np.allclose(wrong, np.linalg.norm(shifts, axis=1), rtol=1e-3)


@pytest.mark.parametrize("mu", [1e-3, 0.2, 4.0])
def test_scalar_instance_realizes_leverage_and_residual(mu):
    r = np.array([-1.5, 0.0, 2.0])
    X, y, tx, ty = ex.scalar_instance(mu, r)
    np.testing.assert_allclose(ops.leverage_scores_nonprivate(X, lam=0.0, target_x=tx), mu, rtol=1e-12)
    theta = np.linalg.solve(X.T @ X, X.T @ y)
    np.testing.assert_allclose(ty - tx @ theta, r, atol=1e-14)


def test_ops_mse_check_formulas_and_monte_carlo():
    X, _, th0 = ex.anisotropic_regression(30, d=2, rng=3)
    # at sigma = 1, lam = 0 the printed and the exact formula coincide (closed form)
    c1 = ex.ops_mse_check(X, th0, sigma=1.0, lam=0.0, gamma=0.7, reps=2, rng=0)
    assert np.isclose(c1.exact, c1.printed, rtol=1e-12)
    c2 = ex.ops_mse_check(X, th0, sigma=0.5, lam=1.0, gamma=0.5, reps=600, rng=4)
    assert abs(c2.mc_mean - c2.exact) < 4.5 * c2.mc_se  # ~7e-6 false-alarm rate
    assert abs(c2.mc_mean - c2.printed) > 10 * c2.mc_se  # the printed formula is detectably off


def test_output_perturbation_vs_n_uses_the_global_bound():
    res = ex.output_perturbation_vs_n([20, 80], d=3, lam=1.0, sigma=4.0, delta=1e-6, rng=5)
    for n, e, members in zip(res.ns, res.dp_epsilon, res.members, strict=True):
        assert np.isclose(e, gm.gaussian_epsilon(1e-6, sensitivity=ridge_global_sensitivity_bound(int(n), lam=1.0),
                                                 sigma=4.0))
        assert members.shape == (n,) and np.all(members >= 0) and np.all(members <= e)


def test_ops_vs_gamma_orders_the_privacy_notions():
    X, y, _ = ex.anisotropic_regression(200, d=3, rng=6)
    res = ex.ops_vs_gamma(X, y, [0.05, 1.0], lam=5.0, delta=1e-6)
    assert np.all(res.members_median <= res.members_max)
    assert np.all(res.members_max <= res.pdp_for_all) and np.all(res.pdp_for_all <= res.dp_epsilon)
    np.testing.assert_allclose(res.excess_risk[0] / res.excess_risk[1], 20.0)


def test_fitted_slope_recovers_a_rate_and_rejects_a_wrong_one():
    from pdpkit.experiments.ops_adaops import fitted_slope

    rng = np.random.default_rng(0)
    n = np.array([1e3, 2e3, 4e3, 8e3, 16e3])
    y = 5.0 * n**-2.0
    se = 0.05 * y
    noisy = y * (1 + 0.05 * rng.standard_normal(n.size))
    slope, s = fitted_slope(n, noisy, se)
    assert abs(slope + 2.0) <= 4 * s and abs(slope + 1.0) > 0.25
    exact, _ = fitted_slope(n, y, se)
    assert abs(exact + 2.0) < 1e-12
    with pytest.raises(ValueError, match="positive"):
        fitted_slope(n, -y, se)
