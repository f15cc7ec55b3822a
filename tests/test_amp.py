"""Accounting of approximate minima perturbation (Alg 1, Thm 4.1 of Redberg, Koskela & Wang 2023).

References independent of the code under test: mpmath quadrature of the composed pair
with the Gaussian profile written out in mpmath, Monte Carlo of the composed privacy
loss, Thm 4.1 by hand, and the tau = 0 reduction to ObjPert.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from pdpkit import accounting as acc
from pdpkit import amp

K = dict(C=1.0, beta=0.25, lam=1.0, sigma=2.0, sigma_out=0.5, tau=0.05)


def _ref_delta(eps: float, *, C, beta, lam, sigma, sigma_out, tau) -> float:
    with mp.workdps(30):
        a = mp.mpf(C) / sigma
        c = -mp.log1p(-mp.mpf(beta) / lam) + a * a / 2
        mu = 2 * mp.mpf(tau) / (lam * sigma_out)

        def gauss_profile(x):  # H_{e^x}(N(mu, 1) || N(0, 1)) for any real x
            return mp.ncdf(mu / 2 - x / mu) - mp.e**x * mp.ncdf(-mu / 2 - x / mu)

        f = lambda t: 2 * mp.npdf(t) * gauss_profile(mp.mpf(eps) - c - a * t)
        knee = max(mp.mpf(0), (mp.mpf(eps) - c) / a)
        return float(mp.quad(f, [0, knee, knee + 1, knee + 4, knee + 16, mp.inf]))


@pytest.mark.parametrize("eps", [0.0, 0.5, 1.0, 2.0, 4.0])
def test_amp_delta_matches_mpmath_quadrature(eps):
    assert float(amp.amp_delta(eps, **K)) == pytest.approx(_ref_delta(eps, **K), rel=1e-8)


def test_amp_delta_matches_monte_carlo_of_the_composed_loss():
    rng = np.random.default_rng(0)
    a = K["C"] / K["sigma"]
    c = -math.log1p(-K["beta"] / K["lam"]) + a * a / 2
    mu = 2 * K["tau"] / (K["lam"] * K["sigma_out"])
    n = 2_000_000
    loss = c + a * np.abs(rng.standard_normal(n)) + mu * mu / 2 + mu * rng.standard_normal(n)
    for eps in (0.5, 1.0):
        vals = np.maximum(0.0, -np.expm1(eps - loss))
        mc, se = vals.mean(), vals.std() / math.sqrt(n)
        assert abs(float(amp.amp_delta(eps, **K)) - mc) < 5 * se


def test_tau_zero_is_objpert_and_tau_costs_privacy():
    e = np.array([0.0, 0.5, 1.0, 2.0])
    base = acc.objpert_delta(e, L=1.0, beta=0.25, lam=1.0, sigma=2.0)
    np.testing.assert_allclose(amp.amp_delta(e, **{**K, "tau": 0.0}), base, rtol=1e-8)
    assert np.all(amp.amp_delta(e, **K) >= base)


def test_amp_rdp_is_theorem_4_1_by_hand():
    al = np.array([1.0, 2.0, 8.0])
    by_hand = acc.objpert_rdp(al, L=1.0, beta=0.25, lam=1.0, sigma=2.0) + 2 * 0.05**2 * al / (0.5**2 * 1.0**2)
    np.testing.assert_allclose(amp.amp_rdp(al, **K), by_hand, rtol=1e-12)


def test_amp_epsilon_exact_is_below_rdp_and_safe():
    e_rdp = amp.amp_epsilon(1e-6, **K)
    e_pld = amp.amp_epsilon(1e-6, **K, accounting="pld")
    assert e_pld <= e_rdp
    assert float(amp.amp_delta(e_pld, **K)) <= 1e-6


def test_amp_calibrate_gives_the_guarantee_and_the_smallest_lambda():
    lam, sigma = amp.amp_calibrate(1.0, 1e-5, C=1.0, beta=0.25, sigma_out=0.1, tau=1e-3)
    kw = dict(C=1.0, beta=0.25, sigma=sigma, sigma_out=0.1, tau=1e-3)
    assert amp.amp_epsilon(1e-5, lam=lam, **kw) <= 1.0
    assert amp.amp_epsilon(1e-5, lam=lam * (1 - 1e-4), **kw) > 1.0


@pytest.mark.parametrize("call, name", [
    (lambda: amp.amp_delta(1.0, **{**K, "sigma_out": 0.0}), "sigma_out"),
    (lambda: amp.amp_delta(1.0, **{**K, "tau": -1.0}), "tau"),
    (lambda: amp.amp_delta(1.0, **{**K, "sigma": -1.0}), "sigma"),
    (lambda: amp.amp_epsilon(1e-5, **K, accounting="moments"), "accounting"),
    (lambda: amp.amp_epsilon(2.0, **K), "delta"),
    (lambda: amp.amp_rdp(0.5, **K), "alpha"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ------------------------------------------------------------ DP-SGD baseline
def test_dpsgd_noise_multiplier_against_dp_accounting_directly():
    from dp_accounting import dp_event
    from dp_accounting.rdp import RdpAccountant

    q, steps = 256 / 30000, 500
    nm = amp.dpsgd_noise_multiplier(1.0, 1e-5, sample_rate=q, steps=steps)

    def eps_at(m):
        ev = dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(m)), steps)
        return RdpAccountant().compose(ev).get_epsilon(1e-5)

    assert eps_at(nm) <= 1.0 + 1e-9 and eps_at(nm * (1 - 1e-3)) > 1.0
    tuned = amp.dpsgd_noise_multiplier(1.0, 1e-5, sample_rate=q, steps=steps,
                                       select_mean=amp.poisson_select_mean(6))
    assert tuned > nm  # honest tuning costs noise


def test_poisson_select_mean_covers_a_grid_point_with_the_stated_probability():
    mu = amp.poisson_select_mean(10, prob=0.9)
    rng = np.random.default_rng(1)
    runs = rng.poisson(mu, size=20000)
    tried = np.array([np.any(rng.integers(10, size=k) == 0) for k in runs])
    assert abs(tried.mean() - 0.9) < 4 * math.sqrt(0.09 / tried.size)
    with pytest.raises(ValueError, match="grid_size"):
        amp.poisson_select_mean(0)


# ------------------------------------------------------------ the mechanism
def test_clipped_loss_derivatives_bounds_and_convexity():
    from pdpkit.losses import huber, logistic

    t = np.linspace(-20, 20, 801)
    for base, labels in ((logistic, (1.0, -1.0)), (huber, (-0.5, 2.0))):
        for C, r in ((0.3, 1.0), (0.5, 0.7), (2.0, 1.0)):
            cl = amp.ClippedGLMLoss(base, C)
            for lab in labels:
                h = 1e-6
                fd = (cl.value(t + h, lab, r) - cl.value(t - h, lab, r)) / (2 * h)
                d1 = cl.d1(t, lab, r)
                assert np.max(np.abs(fd - d1)) < 1e-6  # value and derivative agree
                assert np.all(np.abs(d1) * r <= C + 1e-12)  # gradient norm <= C
                assert np.all(cl.d2(t, lab, r) >= 0)
                assert np.all(cl.d2(t, lab, r) <= base.d2(t, lab) + 1e-15)  # beta kept
                unclipped = np.abs(base.d1(t, lab)) * r <= C
                np.testing.assert_allclose(d1[unclipped], base.d1(t[unclipped], lab), rtol=1e-12)
    assert amp.ClippedGLMLoss(logistic, 0.5).lipschitz == 0.5


def test_amp_fit_stops_below_tau_on_the_clipped_objective():
    from pdpkit import datasets as ds
    from pdpkit.losses import logistic

    data = ds.make_synthetic_logistic(300, 4, rng=3)
    b = np.random.default_rng(4).normal(0, 1.0, size=4)
    tau, C, lam = 1e-3, 0.5, 1.0
    res = amp.amp_fit(data.X, data.y, logistic, lam=lam, sigma=1.0, sigma_out=1e-12, tau=tau, clip=C, b=b, rng=5)
    cl = amp.ClippedGLMLoss(logistic, C)
    r = np.linalg.norm(data.X, axis=1)

    def objective(th):
        return float(np.sum(cl.value(data.X @ th, data.y, r)) + lam / 2 * th @ th + b @ th)

    h = 1e-5
    fd_grad = np.array([(objective(res.theta + h * e) - objective(res.theta - h * e)) / (2 * h) for e in np.eye(4)])
    assert np.linalg.norm(fd_grad) <= tau + 1e-6
    assert res.grad_norm_nonprivate <= tau and not hasattr(res, "b")  # the noise b is never kept


def test_amp_fit_refuses_to_release_without_reaching_tau_and_checks_input():
    from pdpkit import datasets as ds
    from pdpkit.losses import logistic, squared

    data = ds.make_synthetic_logistic(100, 3, rng=1)
    with pytest.raises(RuntimeError, match="tau"):
        amp.amp_fit(data.X, data.y, logistic, lam=1.0, sigma=1.0, sigma_out=0.1, tau=0.0, max_iter=1, rng=0)
    with pytest.raises(ValueError, match="clip"):
        amp.amp_fit(data.X, data.y, squared, lam=1.0, sigma=1.0, sigma_out=0.1, tau=1e-3)
    with pytest.raises(ValueError, match="tau"):
        amp.amp_fit(data.X, data.y, logistic, lam=1.0, sigma=1.0, sigma_out=0.1, tau=-1.0)
    with pytest.raises(ValueError, match="sigma_out"):
        amp.amp_fit(data.X, data.y, logistic, lam=1.0, sigma=1.0, sigma_out=0.0, tau=1e-3)
    with pytest.raises(ValueError, match="norm"):
        amp.amp_fit(3 * data.X, data.y, logistic, lam=1.0, sigma=1.0, sigma_out=0.1, tau=1e-3)
