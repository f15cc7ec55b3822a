"""Tests of pdpkit.audit: the Clopper–Pearson bounds, and the audit of the Gaussian
mechanism's whole claimed δ(ε) curve — which must pass for the true σ and fail for a
mechanism whose noise is 0.9× the claimed σ (testing the tester)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from pdpkit.audit import audit_delta_curve, clopper_pearson
from pdpkit.gaussian import gaussian_delta


def test_clopper_pearson_matches_binomial_tails():
    n, alpha = 1000, 0.05
    for k in [0, 1, 17, 500, 999, 1000]:
        lo, hi = clopper_pearson(k, n, alpha)
        if k > 0:
            assert stats.binom.sf(k - 1, n, lo) == pytest.approx(alpha / 2, rel=1e-8)
        else:
            assert lo == 0
        if k < n:
            assert stats.binom.cdf(k, n, hi) == pytest.approx(alpha / 2, rel=1e-8)
        else:
            assert hi == 1


def test_clopper_pearson_coverage_by_simulation():
    """Coverage of the exact interval is at least 1 - alpha (checked at p = 0.03, n = 200)."""
    rng = np.random.default_rng(0)
    p, n, alpha = 0.03, 200, 0.1
    k = rng.binomial(n, p, size=20_000)
    lo, hi = clopper_pearson(k, n, alpha)
    coverage = np.mean((lo <= p) & (p <= hi))
    assert coverage >= 1 - alpha - 3 * np.sqrt(alpha * (1 - alpha) / k.size)


SENS, SIGMA = 1.0, 1.0
EPS_GRID = np.linspace(0.0, 4.0, 17)


def _gaussian_audit(noise_factor: float, seed: int):
    """Worst-case pair for a 1-d Gaussian mechanism: Q(D) = Δ, Q(D') = 0.

    Events S_ε = {o > Δ/2 + εσ²/Δ} are fixed by the *claimed* σ (they are the
    level sets of the claimed privacy loss), whatever the mechanism really does.
    """
    true_sigma = noise_factor * SIGMA
    claimed = gaussian_delta(EPS_GRID, sensitivity=SENS, sigma=SIGMA)
    thresholds = SENS / 2 + EPS_GRID * SIGMA**2 / SENS
    return audit_delta_curve(
        lambda m, rng: SENS + true_sigma * rng.standard_normal(m),
        lambda m, rng: true_sigma * rng.standard_normal(m),
        lambda o: o,
        thresholds,
        EPS_GRID,
        claimed,
        n_samples=10**6,
        alpha=0.01,
        rng=np.random.default_rng(seed),
    )


def test_audit_passes_for_the_true_gaussian_mechanism():
    result = _gaussian_audit(1.0, seed=2024)
    assert result.passed, result.summary()
    # and it is not vacuous: the lower bound comes close to the claim where δ is large
    assert np.max(result.delta_lower / result.claimed_delta) > 0.9


def test_audit_fails_with_0_9_times_the_noise():
    result = _gaussian_audit(0.9, seed=2025)
    assert not result.passed, result.summary()
    assert result.worst_margin > 0


def test_audit_rejects_bad_inputs():
    with pytest.raises(ValueError, match="same length"):
        audit_delta_curve(lambda m, r: r.standard_normal(m), lambda m, r: r.standard_normal(m), lambda o: o,
                          [0.0, 1.0], [0.0], [0.1, 0.2], n_samples=10)
    with pytest.raises(ValueError, match="one value per sample"):
        audit_delta_curve(lambda m, r: r.standard_normal((m, 2)), lambda m, r: r.standard_normal((m, 2)),
                          lambda o: o, [0.0], [0.0], [0.1], n_samples=10)
