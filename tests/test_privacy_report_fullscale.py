"""The privacy-report chapter's stored full-scale results agree with fresh, smaller runs.

Figures 4-5: a fresh run with other seeds and 5 repetitions at a subset of the stored sweep
must lie within four combined standard errors (plus 0.01 nats for the nearly deterministic
data-independent bound) of the stored means. Figure 6: the stored run is re-run exactly (all
30,000 clients, the same seed; it takes under a second) and must match to rounding.
A perturbed stored value must fail both checks.
"""

from __future__ import annotations

import numpy as np
import pytest

from pdpkit import datasets as ds
from pdpkit import report
from pdpkit.experiments import privacy_report as ex
from pdpkit.experiments import stored
from pdpkit.objpert import objpert_calibrate_classic

KEYS = ("worst_pdp", "worst_bound_data_independent", "worst_bound_adaptive")


def _live(parameter: str, values: list[int], fixed: int, seed: int) -> dict:
    lam, sigma = objpert_calibrate_classic(1.0, 1e-5, loss="logistic")
    cal = report.calibrate_report(2.0, 1e-5, method="adaptive")
    res = ex.worst_case_report(parameter, values, fixed, lam=lam, sigma=sigma, rho=0.05, n_repeats=5,
                               rng=seed, **cal)
    reps = res.worst_pdp.shape[1]
    out = {"worst_pdp": (res.worst_pdp.mean(1), res.worst_pdp.std(1, ddof=1) / np.sqrt(reps))}
    for m, key in (("data-independent", KEYS[1]), ("adaptive", KEYS[2])):
        out[key] = (res.worst_bound[m].mean(1), res.worst_bound[m].std(1, ddof=1) / np.sqrt(reps))
    return out


def _inconsistent(live: dict, data: dict, values: list[int]) -> list[str]:
    idx = [data["values"].index(v) for v in values]
    bad = []
    for key in KEYS:
        m_l, s_l = live[key]
        m_s = np.asarray(data[key + "_mean"])[idx]
        s_s = np.asarray(data[key + "_se"])[idx]
        tol = 4.0 * np.sqrt(s_l**2 + s_s**2) + 0.01
        bad += [f"{key} at {v}" for v, ok in zip(values, np.abs(m_l - m_s) <= tol, strict=True) if not ok]
    return bad


@pytest.mark.parametrize(("name", "parameter", "values", "fixed"),
                         [("figure4", "n", [100, 1000], 50), ("figure5", "d", [2, 20], 1000)])
def test_worst_case_live_agrees_with_stored(name, parameter, values, fixed):
    data = stored.load_result("privacy_report", name).data
    live = _live(parameter, values, fixed, seed=141)
    assert not _inconsistent(live, data, values)
    shifted = dict(data)
    shifted["worst_bound_adaptive_mean"] = list(np.asarray(data["worst_bound_adaptive_mean"]) + 0.3)
    assert _inconsistent(live, shifted, values)  # the check can fail


def test_budget_allocation_reproduces_exactly():
    res = stored.load_result("privacy_report", "figure6")
    data = res.data
    credit = ds.load_credit_default()
    live = ex.budget_allocation(credit.X, credit.y, data["splits"], delta=1e-5, rho=0.05, rng=6)
    q = data["quantiles"]
    np.testing.assert_allclose(live.lam, data["lam"], rtol=1e-12)
    got = np.array([np.quantile(r.bounds["data-dependent"], q) for r in live.dependent])
    np.testing.assert_allclose(got, data["bound_q"], rtol=1e-8)
    np.testing.assert_allclose(np.quantile(live.independent.bounds["data-independent"], q),
                               data["independent_bound_q"], rtol=1e-8)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(got, np.asarray(data["bound_q"]) * 1.01, rtol=1e-8)


def test_figure2_reproduces_exactly():
    data = stored.load_result("privacy_report", "figure2").data
    credit = ds.load_credit_default()
    lam_dp, sigma_dp = objpert_calibrate_classic(1.0, 1e-5, loss="logistic")
    cal_dd = report.calibrate_report(2.0, 1e-5, method="data-dependent")
    lam = ex.data_dependent_lambda(lam=lam_dp, d=credit.d, sigma_hessian=cal_dd["sigma_hessian"], rho=0.05)
    res = ex.report_vs_truth(credit.X, credit.y, "logistic", lam=lam, sigma=sigma_dp, rho=0.05, delta=1e-5, rng=22,
                             methods=("data-independent", "data-dependent"), **cal_dd)
    got = np.quantile(res.bounds["data-dependent"], data["quantiles"])
    np.testing.assert_allclose(got, data["data_dependent_bound_q"], rtol=1e-8)
    np.testing.assert_allclose(np.quantile(res.eps1, data["quantiles"]), data["eps1_q"], rtol=1e-8)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(got * 1.01, data["data_dependent_bound_q"], rtol=1e-8)


def _coverage_mismatch(live, stored_part, n_stored) -> list[str]:
    p_l = live.failures / live.n_draws
    p_s = np.asarray(stored_part["failures"]) / n_stored
    se = np.sqrt(p_l * (1 - p_l) / live.n_draws + p_s * (1 - p_s) / n_stored)
    ok = np.abs(p_l - p_s) <= 4 * se + 1.0 / live.n_draws
    return [s for s, k in zip(live.scenarios, ok, strict=True) if not k]


def test_coverage_live_agrees_with_stored():
    data = stored.load_result("privacy_report", "coverage").data
    args = {k: data[k] for k in ("lam", "sigma", "sigma_gradient", "sigma_hessian", "sigma_lambda_min", "rho")}
    live = ex.report_coverage_scenarios(20, d=3, method="adaptive", rng=131, n_draws=200, **args)
    assert not _coverage_mismatch(live, data["adaptive"], data["n_draws"])
    bad = {"failures": [200, 200, 200]}  # a stored failure rate of 20%
    assert _coverage_mismatch(live, bad, data["n_draws"])
