"""The stored full-scale Monte Carlo results of "GOE noise and Analyze-Gauss" agree with small live runs.

Each test re-runs a check of the chapter at a few thousand draws and requires
|live − stored| ≤ 4 combined standard errors (the standard errors are known: binomial
for frequencies, sd/√n for means, and the asymptotic s.e. of a sample variance); a
perturbed stored value must fail. At 4 s.e. a correct pair fails with probability
below 10⁻⁴ per comparison.
"""

from __future__ import annotations

import math

import pytest

from pdpkit.experiments import goe_analyze_gauss as ex
from pdpkit.experiments import stored

K = 4.0


def consistent(live: float, se_live: float, ref: float, se_ref: float, *, k: float = K) -> bool:
    """|live − ref| ≤ k·sqrt(se_live² + se_ref²)."""
    return abs(live - ref) <= k * math.hypot(se_live, se_ref)


def test_consistent_rejects_a_shift():
    assert consistent(1.0, 0.01, 1.02, 0.01)
    assert not consistent(1.0, 0.01, 1.1, 0.01)


def test_lambda1_moments_live_match_stored():
    res = stored.load_result("goe_analyze_gauss", "lambda1_moments")
    dims = (2, 10)
    live = ex.lambda1_moments(dims, n_draws=5000, rng=12)
    for i, d in enumerate(dims):
        j = res.data["dims"].index(d)
        mean, se = res.data["mean"][j], res.data["se_mean"][j]
        assert consistent(live.mean[i], live.se_mean[i], mean, se)
        assert not consistent(live.mean[i], live.se_mean[i], mean + 10 * live.se_mean[i], se)  # perturbed
        # the stored mean also agrees with the exact law (Chiani's Thm 2)
        assert abs(mean - res.data["exact_mean"][j]) <= K * se


def test_noise_comparison_live_matches_stored():
    res = stored.load_result("goe_analyze_gauss", "noise_comparison").data
    live = ex.noise_comparison(30, eps=1.0, delta=1e-6, beta=0.25, n_draws=2000, rng=11)
    assert live.sigma_goe == pytest.approx(res["sigma_goe"], rel=1e-12)
    # off-diagonal entry is N(0, s^2): var of the sample variance is 2 s^4 / n
    s2 = live.sigma_goe**2
    se_live, se_ref = s2 * math.sqrt(2 / live.n_draws), s2 * math.sqrt(2 / res["n_draws"])
    assert consistent(live.offdiag_var_goe, se_live, res["offdiag_var_goe"], se_ref)
    assert not consistent(live.offdiag_var_goe, se_live, 1.2 * res["offdiag_var_goe"], se_ref)
    # ||E||_F^2 / s^2 is a sum of d(d+1)/2 chi^2_1 terms times 2 (each weight 2 or 4 on the diagonal)
    d = 30
    var_f = s2**2 * (2 * 4 * d + 2 * 4 * d * (d - 1) / 2)  # diagonal 2s^2 Z^2, off-diagonal 2 s^2 Z^2
    se_live, se_ref = math.sqrt(var_f / live.n_draws), math.sqrt(var_f / res["n_draws"])
    assert consistent(live.frob2_goe_mean, se_live, res["frob2_goe_mean"], se_ref)
    assert not consistent(live.frob2_goe_mean, se_live, 1.05 * res["frob2_goe_mean"], se_ref)


@pytest.mark.parametrize("key, d, n_draws", [("tau_d10", 10, 20_000), ("twelve_d50", 50, 2000)])
def test_norm_exceedance_live_matches_stored(key, d, n_draws):
    st = stored.load_result("goe_analyze_gauss", "norm_exceedance").data[key]
    live = ex.norm_exceedance(d, threshold=st["threshold"], n_draws=n_draws, rng=13)
    assert live.p_exact == pytest.approx(st["p_exact"], rel=1e-9)
    assert consistent(live.fraction, live.se, st["fraction"], st["se"])
    shifted = st["fraction"] + 8 * math.hypot(live.se, st["se"]) + 1e-3
    assert not consistent(live.fraction, live.se, shifted, st["se"])  # perturbed


def test_lambda_min_coverage_live_matches_stored():
    st = stored.load_result("goe_analyze_gauss", "lambda_min_coverage").data
    H, _, _ = ex.breast_cancer_hessian(lam=1.0, sigma=1.0, rng=5)
    live = ex.lambda_min_coverage(H, sigma=st["sigma"], rho=st["rho"], floor=1.0, n_draws=3000, rng=14)
    assert consistent(live.miss_rate, live.se, st["miss_rate"], st["se"])
    assert abs(st["miss_rate"] - st["rho"] / 2) <= K * st["se"]  # stored run covers at rho/2
    assert not consistent(live.miss_rate, live.se, 2 * st["miss_rate"], st["se"])  # perturbed
