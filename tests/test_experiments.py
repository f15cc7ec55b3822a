"""Tests for pdpkit.experiments (small sizes; each compares with an independent computation)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from pdpkit import datasets as ds
from pdpkit.experiments import objpert_ex_post as ex
from pdpkit.experiments import output_vs_objective as ov
from pdpkit.gaussian import gaussian_sigma
from pdpkit.losses import huber, logistic, squared
from pdpkit.objpert import (
    erm_fit_nonprivate,
    objpert_epsilon_classic,
    objpert_fit,
    objpert_calibrate_classic,
    objpert_log_density,
)
from pdpkit.output_perturbation import output_perturbation_fit, output_perturbation_sensitivity

DELTA = 1e-5


def _exact_removal_pdp(X, y, loss, lam, sigma, theta):
    """|log p_D(theta) - log p_{D - z_i}(theta)| for every member i, from the exact density."""
    logp = objpert_log_density(theta, X, y, loss, lam=lam, sigma=sigma)
    out = np.empty(len(y))
    for i in range(len(y)):  # independent reference: one density per neighbour
        keep = np.arange(len(y)) != i
        out[i] = abs(logp - objpert_log_density(theta, X[keep], y[keep], loss, lam=lam, sigma=sigma))
    return out


# ----------------------------------------------------------------- setup helper


def test_objpert_dp_setup_matches_thm_2_8():
    lam, sigma = objpert_calibrate_classic(1.0, DELTA, loss="logistic")
    assert lam == pytest.approx(2 * 0.25 / 1.0)
    # Thm 2.8: sigma = L sqrt(8 log(2/delta) + 4 eps)/eps
    assert sigma == pytest.approx(math.sqrt(8 * math.log(2 / DELTA) + 4.0))
    assert objpert_epsilon_classic(DELTA, L=1.0, beta=0.25, lam=lam, sigma=sigma) == pytest.approx(1.0)
    lam2, sigma2 = objpert_calibrate_classic(0.5, DELTA, loss=huber, lam=3.0, form="lecture")
    assert lam2 == 3.0
    assert objpert_epsilon_classic(DELTA, L=1.0, beta=1.0, lam=3.0, sigma=sigma2, form="lecture") == pytest.approx(0.5)
    with pytest.raises(ValueError, match="unbounded gradient"):
        objpert_calibrate_classic(1.0, DELTA, loss=squared)
    with pytest.raises(ValueError, match="lam"):
        objpert_calibrate_classic(1.0, DELTA, loss="logistic", lam=0.1)  # below 2 beta / eps


# ---------------------------------------------------------------- Figs 4 and 5


def test_worst_case_vs_n_against_exact_density_and_dp_eps():
    lam, sigma = objpert_calibrate_classic(1.0, DELTA, loss="logistic")
    ns = [20, 60]
    res = ex.worst_case_pdp_vs_n(ns, d=3, lam=lam, sigma=sigma, rho=0.05, n_repeats=2, rng=np.random.default_rng(11))
    assert res.worst_pdp.shape == (2, 2) and res.parameter == "n"
    np.testing.assert_array_equal(res.n, ns)
    np.testing.assert_array_equal(res.d, [3, 3])
    # The same draws, recomputed from the exact output density (independent of Thm 6).
    rng = np.random.default_rng(11)
    for i, n in enumerate(ns):
        for r in range(2):
            data = ds.make_synthetic_logistic(n, d=3, rng=rng)
            fit = objpert_fit(data.X, data.y, logistic, lam=lam, sigma=sigma, rng=rng)
            exact = _exact_removal_pdp(data.X, data.y, logistic, lam, sigma, fit.theta)
            assert res.worst_pdp[i, r] == pytest.approx(exact.max(), rel=1e-8, abs=1e-11)
            assert res.mean_pdp[i, r] == pytest.approx(exact.mean(), rel=1e-8, abs=1e-11)
    # The worst case over the data set stays below the DP epsilon of the accounting used.
    assert res.dp_eps == pytest.approx(1.0)
    assert np.all(res.worst_pdp <= res.dp_eps)
    assert np.all(res.worst_pdp <= res.worst_bound)
    assert np.all(res.worst_bound_output <= res.worst_bound + 1e-12)  # |f'| <= L, f'' <= beta


def test_worst_case_vs_d_shapes_and_bound_growth():
    lam, sigma = objpert_calibrate_classic(1.0, DELTA, loss="logistic")
    res = ex.worst_case_pdp_vs_d([1, 4, 16], n=200, lam=lam, sigma=sigma, n_repeats=2, rng=np.random.default_rng(5))
    assert res.parameter == "d" and res.worst_pdp.shape == (3, 2)
    np.testing.assert_array_equal(res.d, [1, 4, 16])
    assert np.all(res.bound_dominates)
    assert np.all(res.worst_pdp < res.dp_eps)
    # The l1 form of Thm 9 grows with d for dense unit-norm rows: ||x||_1 up to sqrt(d).
    assert np.all(np.diff(res.worst_bound.mean(axis=1)) > 0)
    # In d = 1, every row is +-1 and the bound is the same closed form for all rows.
    expected = -math.log1p(-0.25 / lam) + 1 / (2 * sigma**2) + math.sqrt(2 * math.log(2 / 0.05)) / sigma
    np.testing.assert_allclose(res.worst_bound[0], expected, rtol=1e-12)


def test_data_independent_bound_holds_with_probability_at_least_one_minus_rho():
    # rho = 0.9 makes the high-probability term as small as it gets, so the test has
    # power; Thm 9 still promises domination in >= 10% of draws (for all members at once).
    lam, sigma = 0.3, 0.5
    rho = 0.9
    res = ex.worst_case_pdp_vs_n([15], d=2, lam=lam, sigma=sigma, rho=rho, n_repeats=150, rng=np.random.default_rng(2))
    k = int(res.bound_dominates.sum())
    test = stats.binomtest(k, 150, 1 - rho, alternative="less")
    assert test.pvalue > 1e-3, (k, test.pvalue)


def test_worst_case_validation():
    with pytest.raises(ValueError, match="rho"):
        ex.worst_case_pdp_vs_n([10], d=2, lam=1.0, sigma=1.0, rho=1.5)
    with pytest.raises(ValueError, match="ns"):
        ex.worst_case_pdp_vs_n([], d=2, lam=1.0, sigma=1.0)
    with pytest.raises(ValueError, match="sigma"):
        ex.worst_case_pdp_vs_d([2], n=10, lam=1.0, sigma=0.0)
    with pytest.raises(TypeError, match="rng"):
        ex.worst_case_pdp_vs_d([2], n=10, lam=1.0, sigma=1.0, rng="3")


# ---------------------------------------------------------------- Figs 7 and 8


def test_pdp_distribution_kidney_against_exact_density():
    K = ds.load_kidney()
    lam, sigma = objpert_calibrate_classic(1.0, DELTA, loss="logistic")
    res = ex.pdp_distribution(K, "logistic", lam=lam, sigma=sigma, rng=np.random.default_rng(3))
    assert res.eps1.shape == (400,) and res.dataset == "kidney"
    np.testing.assert_allclose(np.abs(res.terms.total), res.eps1)
    assert res.dp_eps == pytest.approx(1.0)
    assert np.all(res.eps1 <= res.bound_output_dependent)
    assert np.all(res.bound_output_dependent <= res.bound_data_independent + 1e-12)
    # Spot-check 5 members against the exact log-density ratio of D and D - z.
    idx = np.array([0, 57, 123, 250, 399])
    logp = objpert_log_density(res.fit.theta, K.X, K.y, logistic, lam=lam, sigma=sigma)
    for i in idx:
        keep = np.arange(400) != i
        ref = logp - objpert_log_density(res.fit.theta, K.X[keep], K.y[keep], logistic, lam=lam, sigma=sigma)
        assert res.eps1[i] == pytest.approx(abs(ref), rel=1e-7, abs=1e-12)


def test_pdp_distribution_squared_loss_is_not_dp():
    W = ds.load_wine_quality("red")
    res = ex.pdp_distribution(W, squared, lam=2.0, sigma=5.0, rng=np.random.default_rng(4))
    assert math.isinf(res.dp_eps) and np.all(np.isinf(res.bound_data_independent))
    assert np.all(np.isfinite(res.eps1)) and np.all(res.eps1 <= res.bound_output_dependent)
    res_h = ex.pdp_distribution(W, huber, lam=2.0, sigma=5.0, rng=np.random.default_rng(4))
    assert math.isfinite(res_h.dp_eps)
    with pytest.raises(TypeError, match="Dataset"):
        ex.pdp_distribution((W.X, W.y), squared, lam=2.0, sigma=5.0)


# ------------------------------------------------ output vs objective perturbation


def _separable(n, d, rng):
    """Train and test halves of one well-separated synthetic data set."""
    data = ds.make_synthetic_logistic(2 * n, d=d, theta_scale=8.0, rng=rng)
    return data.X[:n], data.y[:n], data.X[n:], data.y[n:]


def test_accuracy_vs_epsilon_limits_and_feasibility():
    rng = np.random.default_rng(8)
    Xtr, ytr, Xte, yte = _separable(300, 4, rng)
    eps = [0.05, 1.0, 1e4]
    lams = [0.05, 20.0]
    res = ov.accuracy_vs_epsilon(Xtr, ytr, Xte, yte, eps, lams=lams, n_seeds=6, rng=np.random.default_rng(0))
    assert res.acc_output.shape == (3, 2, 6)
    # Thm 2.8 needs lam >= 2 beta / eps = 0.5 / eps: infeasible exactly there.
    infeasible = np.array([[lam < 0.5 / e for lam in lams] for e in eps])
    np.testing.assert_array_equal(np.isnan(res.acc_objpert).all(axis=2), infeasible)
    np.testing.assert_array_equal(np.isnan(res.sigma_objpert), infeasible)
    assert not np.isnan(res.acc_output).any()
    # Noise scales: the analytic Gaussian mechanism at sensitivity L/lambda.
    for i, e in enumerate(eps):
        for j, lam in enumerate(lams):
            sens = output_perturbation_sensitivity(logistic, lam=lam, norm_bound=1.0, tol=1e-10)
            assert res.sigma_output[i, j] == pytest.approx(float(gaussian_sigma(e, DELTA, sensitivity=sens)), rel=1e-9)
    # At eps = 1e4 the noise is negligible: both match the non-private minimizer.
    for j, lam in enumerate(lams):
        base = np.mean(np.where(Xte @ erm_fit_nonprivate(Xtr, ytr, logistic, lam=lam) >= 0, 1, -1) == yte)
        assert res.acc_nonprivate[j] == pytest.approx(base)
        np.testing.assert_allclose(res.acc_output[2, j], base, atol=0.01)
        np.testing.assert_allclose(res.acc_objpert[2, j], base, atol=0.01)
    # At eps = 0.05 output perturbation with lam = 0.05 is close to a coin flip.
    assert abs(res.acc_output[0, 0].mean() - 0.5) < 0.15
    lam_best, mean, std = res.best("objpert")
    assert lam_best[0] == 20.0  # the only feasible lambda at eps = 0.05
    none = ov.accuracy_vs_epsilon(Xtr, ytr, Xte, yte, [0.05], lams=[1.0], n_seeds=2).best("objpert")
    assert all(np.isnan(v[0]) for v in none)  # no feasible lambda at all
    assert mean.shape == (3,) and np.all(std >= 0)
    lam_out, mean_out, _ = res.best("output")
    j = [list(lams).index(v) for v in lam_out]
    np.testing.assert_allclose(mean_out, res.acc_output[np.arange(3), j].mean(axis=1))
    with pytest.raises(ValueError, match="method"):
        res.best("dpsgd")


def test_accuracy_vs_epsilon_output_releases_are_output_perturbation_fits():
    """Every seed's output-perturbation release is output_perturbation_fit with that seed's stream.

    The experiment fits once per (eps, lambda) and adds each seed's noise to that minimizer;
    the reference calls output_perturbation_fit for every seed. The other stream of each
    seed (ObjPert's) must give other accuracies: the comparison can fail.
    """
    rng = np.random.default_rng(10)
    Xtr, ytr, Xte, yte = _separable(200, 3, rng)
    eps, lams, n_seeds = [0.5, 2.0], [0.3, 3.0], 5
    res = ov.accuracy_vs_epsilon(Xtr, ytr, Xte, yte, eps, lams=lams, n_seeds=n_seeds, rng=np.random.default_rng(2))
    seeds = np.random.default_rng(2).integers(0, 2**63 - 1, size=(n_seeds, 2))  # as the experiment draws them

    def accuracies(e, lam, stream):
        thetas = np.array([output_perturbation_fit(Xtr, ytr, logistic, e, DELTA, lam=lam,
                                                   rng=np.random.default_rng(s)).theta for s in stream])
        return np.mean(np.where(Xte @ thetas.T >= 0, 1.0, -1.0) == yte[:, None], axis=0)

    differs = False
    for i, e in enumerate(eps):
        for j, lam in enumerate(lams):
            np.testing.assert_array_equal(res.acc_output[i, j], accuracies(e, lam, seeds[:, 0]))
            differs |= not np.array_equal(res.acc_output[i, j], accuracies(e, lam, seeds[:, 1]))
    assert differs


def test_accuracy_vs_epsilon_common_random_numbers_and_validation():
    rng = np.random.default_rng(9)
    Xtr, ytr, _, _ = _separable(100, 3, rng)
    a = ov.accuracy_vs_epsilon(Xtr, ytr, Xtr, ytr, [1.0], lams=[1.0], n_seeds=3, rng=np.random.default_rng(1))
    b = ov.accuracy_vs_epsilon(Xtr, ytr, Xtr, ytr, [1.0], lams=[1.0], n_seeds=3, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(a.acc_objpert, b.acc_objpert)
    with pytest.raises(ValueError, match="norm"):
        ov.accuracy_vs_epsilon(2 * Xtr, ytr, Xtr, ytr, [1.0], lams=[1.0], n_seeds=1)
    with pytest.raises(ValueError, match="y_test"):
        ov.accuracy_vs_epsilon(Xtr, ytr, Xtr, 0 * ytr, [1.0], lams=[1.0], n_seeds=1)
    with pytest.raises(ValueError, match="epsilons"):
        ov.accuracy_vs_epsilon(Xtr, ytr, Xtr, ytr, [], lams=[1.0], n_seeds=1)
    with pytest.raises(ValueError, match="lams"):
        ov.accuracy_vs_epsilon(Xtr, ytr, Xtr, ytr, [1.0], lams=[-1.0], n_seeds=1)


# ------------------------------------------------------------ exact-density check


def test_density_mass_squared_loss_closed_form():
    # Squared loss in d = 1: theta^P = (x'y - b)/(x'x + lam) is Gaussian; the mass is 1 and
    # the box is at least as wide as the exact tail quantile requires.
    X = np.array([[0.5], [-0.8], [0.1]])
    y = np.array([0.3, -0.2, 1.0])
    lam, sigma = 0.7, 0.4
    m = ex.objpert_density_mass(X, y, squared, lam=lam, sigma=sigma, tail=1e-10)
    assert m.mass == pytest.approx(1.0, abs=1e-12) and m.tail_bound <= 1e-10 * (1 + 1e-9)
    a = float(X[:, 0] @ X[:, 0]) + lam
    sd = sigma / a
    exact_outside = 2 * stats.norm.sf(m.radius / sd)
    assert exact_outside <= m.tail_bound
    np.testing.assert_allclose(m.center, [float(X[:, 0] @ y) / a])


def test_density_mass_logistic_2d_and_validation():
    rng = np.random.default_rng(3)
    X = ds.normalize_rows(rng.standard_normal((12, 2)))
    y = np.where(rng.random(12) < 0.5, 1.0, -1.0)
    m = ex.objpert_density_mass(X, y, logistic, lam=1.0, sigma=0.8, panels=32, order=8)
    assert abs(m.mass - 1.0) <= 1e-9 and abs(m.mass - m.mass_coarse) <= 1e-9
    assert m.n_evaluations == (32 * 8) ** 2
    # A coarser rule is visibly less accurate on a peaked density: the check has power.
    peaked = ex.objpert_density_mass(X, y, logistic, lam=0.05, sigma=0.05, panels=2, order=2)
    assert abs(peaked.mass - 1.0) > 1e-3
    with pytest.raises(ValueError, match="columns"):
        ex.objpert_density_mass(np.ones((3, 3)) / 2, np.ones(3), logistic, lam=1.0, sigma=1.0)
    with pytest.raises(ValueError, match="panels"):
        ex.objpert_density_mass(X, y, logistic, lam=1.0, sigma=1.0, panels=5)


def test_compare_at_sizes_uses_the_first_rows_and_validates_sizes():
    from pdpkit.experiments import amp as ex_amp

    data = ds.make_synthetic_logistic(80, d=3, theta_scale=3.0, rng=1)
    X = ex_amp.with_bias(data.X)
    # the noise calibrations are given (what is tested here is the choice of rows; the
    # calibrations are tests/test_amp.py's): compare_amp_dpsgd's cache, keyed by (eps, delta, q, steps)
    q = 16 / 40
    cache = {(8.0, 1e-5, q, math.ceil(1 / q)): (1.0, 1.2, (0.66, 1.1))}
    kw = dict(trials=1, epochs=1, batch_size=16, lr_grid=(0.1,), rng=2, progress=False, calibration_cache=cache)
    out = ex_amp.compare_at_sizes(X[:60], data.y[:60], X[60:], data.y[60:], (40,), 8.0, **kw)
    assert len(cache) == 1  # no calibration was run again
    assert sorted(out) == [40]
    for n, r in out.items():
        assert r.acc_amp.shape == (1, 1) and 0.0 <= r.acc_amp[0, 0] <= 1.0
    for bad in (0, 61):
        with pytest.raises(ValueError, match="size"):
            ex_amp.compare_at_sizes(X[:60], data.y[:60], X[60:], data.y[60:], (bad,), 8.0, **kw)
