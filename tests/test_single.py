"""Tests of pdpkit.single (Asi, Duchi & Talwar: Alg 3, Alg 5, Alg 7, eq. (7)).

References are independent of the code under test: the tight Gaussian profile
(pdpkit.gaussian.gaussian_delta, itself tested against mpmath), scipy's normal CDF for
eq. (7), Kolmogorov–Smirnov tests of the released noise, Clopper–Pearson audits on a
worst-case neighbouring pair found by brute force, and the composition arithmetic.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from pdpkit import audit, gaussian
from pdpkit import single
from pdpkit.losses import robust_log

EPS = np.array([0.1, 0.5, 1.0, 2.0, 4.0, 8.0])
DELTA = np.array([1e-3, 1e-6, 1e-10])


# ------------------------------------------------------------------ noise multiplier
def test_analytic_attains_delta_exactly():
    e, d = np.meshgrid(EPS, DELTA)
    s = single.noise_multiplier(e, d, method="analytic")
    got = gaussian.gaussian_delta(e, sensitivity=1.0, sigma=s)
    assert np.allclose(got, d, rtol=1e-8, atol=0)
    # test the tester: 1% less noise breaks delta
    assert np.all(gaussian.gaussian_delta(e, sensitivity=1.0, sigma=0.99 * s) > d)


def test_eq7_solves_its_equation_with_scipy():
    e, d = np.meshgrid(EPS, DELTA)
    s = single.noise_multiplier(e, d, method="eq7")
    lhs = stats.norm.cdf(-s * e - 0.5 / s) + stats.norm.cdf(-s * e + 0.5 / s)
    assert np.allclose(lhs / d, 1.0, rtol=1e-10)
    s_lo = s * (1 - 1e-9)
    lhs_lo = stats.norm.cdf(-s_lo * e - 0.5 / s_lo) + stats.norm.cdf(-s_lo * e + 0.5 / s_lo)
    assert np.all(lhs_lo > d)  # the infimum: slightly less noise violates (7)


def test_eq7_and_naive_are_valid_but_larger():
    e, d = np.meshgrid(EPS, DELTA)
    a = single.noise_multiplier(e, d, method="analytic")
    s7 = single.noise_multiplier(e, d, method="eq7")
    sn = single.noise_multiplier(e, d, method="naive")
    assert np.all(a < s7) and np.all(s7 < sn)
    # valid: the tight profile at their sigma is below delta ...
    for s in (s7, sn):
        assert np.all(gaussian.gaussian_delta(e, sensitivity=1.0, sigma=s) < d)
    # ... and measurably wasteful (trap 8): eq. (7) costs 4%-90% more noise here
    ratio = s7 / a
    assert 1.03 < ratio.min() and ratio.max() < 1.95
    assert float(ratio[0, 0]) == pytest.approx(1.891, abs=2e-3)  # eps = 0.1, delta = 1e-3
    # naive closed form (section 2.2)
    c = np.sqrt(2 * np.log(2 / d))
    assert np.allclose(sn, c / (2 * e) + np.sqrt(c * c + 2 * e) / (2 * e), rtol=1e-14)


def test_noise_multiplier_scalar_and_bad_input():
    assert isinstance(single.noise_multiplier(1.0, 1e-6), float)
    with pytest.raises(ValueError, match="method"):
        single.noise_multiplier(1.0, 1e-6, method="tight")
    with pytest.raises(ValueError, match="eps"):
        single.noise_multiplier(0.0, 1e-6)
    with pytest.raises(ValueError, match="delta"):
        single.noise_multiplier(1.0, 1.0)
