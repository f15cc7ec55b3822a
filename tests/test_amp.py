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


def test_poisson_select_mean_is_the_sources_15_4_and_exact():
    from scipy import stats

    mu = amp.poisson_select_mean(10, prob=0.9)
    assert mu == pytest.approx(15.41, abs=0.01)  # the source's mu for a grid of 10
    assert stats.poisson.sf(10, mu) == pytest.approx(0.9, abs=1e-9)
    with pytest.raises(ValueError, match="grid_size"):
        amp.poisson_select_mean(0)


def test_dpsgd_fit_learns_with_little_noise_and_clips():
    from pdpkit import datasets as ds
    from pdpkit.losses import logistic

    data = ds.make_synthetic_logistic(2000, d=5, theta_scale=4.0, rng=2)
    theta = amp.dpsgd_fit(data.X, data.y, logistic, noise_multiplier=1e-3, clip=1.0, sample_rate=0.1,
                          steps=300, lr=0.05, rng=3)
    acc = np.mean(np.sign(data.X @ theta) == data.y)
    best = np.mean(np.sign(data.X @ data.theta_true) == data.y)
    assert acc > best - 0.05
    with pytest.raises(ValueError, match="sample_rate"):
        amp.dpsgd_fit(data.X, data.y, logistic, noise_multiplier=1.0, clip=1.0, sample_rate=1.5, steps=1, lr=0.1)


def test_amp_epsilon_rdp_matches_autodp():
    """autodp converts the same RDP curve independently (its own optimizer over orders)."""
    import warnings

    from autodp.autodp_core import Mechanism

    for k in (K, {**K, "tau": 0.2, "sigma_out": 0.3}):
        mech = Mechanism()
        mech.propagate_updates(lambda a, k=k: float(amp.amp_rdp(max(a, 1.0), **k)), type_of_update="RDP")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            ref = mech.get_approxDP(1e-6)
        assert amp.amp_epsilon(1e-6, **k) == pytest.approx(ref, rel=1e-6)
