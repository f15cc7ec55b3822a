"""The OPS/AdaOPS chapter's stored full-scale results agree with fresh, smaller runs.

Figure 2: a fresh run at sizes the stored run shares must give the same DP ε (a closed form:
to rounding) and members' median pDP within a factor of 3 (a different data set; the
median moves by orders of magnitude across the stored sizes). AdaOPS efficiency: a fresh run
(other seed, 40 data sets) at three stored sizes must agree with the stored means within
four combined standard errors, and its fitted slope with the stored slope within four
combined standard errors. A perturbed stored value must fail each check.
"""

from __future__ import annotations

import numpy as np

from pdpkit.experiments import ops_adaops as ex
from pdpkit.experiments import stored


def _fig2_mismatch(live, data, ns) -> list[int]:
    idx = [data["ns"].index(n) for n in ns]
    q = data["quantiles"].index(0.5)
    med_s = np.asarray(data["members_q"])[idx, q]
    med_l = np.array([np.median(m) for m in live.members])
    dp_ok = np.isclose(live.dp_epsilon, np.asarray(data["dp_epsilon"])[idx], rtol=1e-9)
    med_ok = (med_l <= 3 * med_s) & (med_s <= 3 * med_l)
    return [n for n, a, b in zip(ns, dp_ok, med_ok, strict=True) if not (a and b)]


def test_figure2_left_live_agrees_with_stored():
    data = stored.load_result("ops_adaops", "figure2_left").data
    ns = [300, 1000, 3000]
    live = ex.output_perturbation_vs_n(ns, d=5, lam=1.0, sigma=4.0, delta=1e-6, rng=7)
    assert not _fig2_mismatch(live, data, ns)
    bad = dict(data)
    bad["members_q"] = (np.asarray(data["members_q"]) * 10).tolist()
    assert _fig2_mismatch(live, bad, ns)


def test_figure2_right_reproduces_at_n_1000():
    data = stored.load_result("ops_adaops", "figure2_right").data
    X, y, _ = ex.anisotropic_regression(1000, d=5, rng=20190101 + 6)
    live = ex.ops_vs_gamma(X, y, data["gammas"], lam=10.0, delta=1e-6)
    np.testing.assert_allclose(live.members_median, data["n1000"]["members_median"], rtol=1e-8)
    np.testing.assert_allclose(live.dp_epsilon, data["n1000"]["dp_epsilon"], rtol=1e-9)


def _eff_mismatch(live, data, ns) -> list[str]:
    idx = [data["ns"].index(n) for n in ns]
    m_s, s_s = np.asarray(data["excess_mean"])[idx], np.asarray(data["excess_se"])[idx]
    ok = np.abs(live.excess_mean - m_s) <= 4 * np.hypot(live.excess_se, s_s)
    return [f"n = {n}" for n, k in zip(ns, ok, strict=True) if not k]


def test_adaops_efficiency_live_agrees_with_stored():
    data = stored.load_result("ops_adaops", "adaops_efficiency").data
    ns = [2000, 8000, 32000]
    live = ex.adaops_efficiency(ns, d=5, eps=1.0, delta=1e-6, kappa=2.0, reps=40, rng=3)
    assert not _eff_mismatch(live, data, ns)
    bad = dict(data)
    bad["excess_mean"] = (np.asarray(data["excess_mean"]) * 2).tolist()
    assert _eff_mismatch(live, bad, ns)
    slope, se = ex.fitted_slope(live.ns, live.excess_mean, live.excess_se)
    assert abs(slope - data["slope"]) <= 4 * np.hypot(se, data["slope_se"])
    assert abs(data["slope"] + 2.0) <= 0.25  # the claimed rate, at the stored scale
