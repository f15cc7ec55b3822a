"""Full-scale runs of the privacy-report chapter (Redberg & Wang 2021, App. B.1-B.2).

* ``figure2``: every client's exact ex-post pDP against the data-independent and the
  data-dependent bound on all 30,000 credit-default clients (the main text's Figure 2;
  CI: 3,000).
* ``coverage``: coverage of the per-target bound for a member, a non-member and an
  outlier, 1,000 draws per method (CI: 300).
* ``figure4`` / ``figure5``: worst member's ex-post pDP and the worst released bound
  (data-independent and adaptive, uniform over the members) on synthetic logistic data,
  n from 100 to 10,000 at d = 50 and d from 1 to 60 at n = 1,000, 10 repetitions each
  (the source's App. B.1).
* ``figure6``: one total budget shared between ObjPert, the Hessian and the gradient, on all
  30,000 credit-default clients (the source's App. B.2), the source's four splits and three
  more extreme ones (ε₁ = 0.9, 0.95, 0.98) that locate where the data-dependent report stops
  paying for itself; with the training accuracy of ObjPert's released θ at each
  split's (λ, σ) over 20 noise draws (the price the bound does not show).

* ``figure6_draws``: the same splits like for like — the data-independent bound of the same fit
  (same λ and σ) next to the data-dependent one — and the data-dependent bound's coverage over
  100 independent draws per split, member by member.

``python reproduce/privacy_report.py [--only NAME]``; run with ``nice -n 15``.
"""

from __future__ import annotations

import numpy as np
from _common import run

from pdpkit import datasets as ds
from pdpkit import report
from pdpkit.experiments import privacy_report as ex
from pdpkit.objpert import objpert_calibrate_classic, objpert_fit

EPS, DELTA, RHO = 1.0, 1e-5, 0.05
REPS = 10
NS = [100, 200, 500, 1000, 2000, 5000, 10000]
DIMS = [1, 2, 5, 10, 20, 30, 40, 50, 60]
SPLITS = [(0.2, 0.7, 0.1), (0.4, 0.5, 0.1), (0.5, 0.25, 0.25), (0.8, 0.1, 0.1),
          (0.9, 0.05, 0.05), (0.95, 0.025, 0.025), (0.98, 0.01, 0.01)]
QUANTILES = [0.05, 0.25, 0.5, 0.75, 0.95]
ACCURACY_SEEDS = range(20)


def _accuracy(X: np.ndarray, y: np.ndarray, lam: float, sigma: float) -> tuple[float, float]:
    """Mean and s.e. over ``ACCURACY_SEEDS`` of the training accuracy of ObjPert's released θ."""
    acc = [np.mean(np.sign(X @ objpert_fit(X, y, "logistic", lam=lam, sigma=sigma, rng=s).theta_released) == y)
           for s in ACCURACY_SEEDS]
    return float(np.mean(acc)), float(np.std(acc, ddof=1) / np.sqrt(len(acc)))


def _worst_case(parameter: str, values: list[int], fixed: int, seed: int) -> dict:
    lam_dp, sigma_dp = objpert_calibrate_classic(EPS, DELTA, loss="logistic")
    cal_ad = report.calibrate_report(2.0, DELTA, method="adaptive")
    res = ex.worst_case_report(parameter, values, fixed, lam=lam_dp, sigma=sigma_dp, rho=RHO,
                               n_repeats=REPS, rng=seed, **cal_ad)
    out = {"parameter": parameter, "values": res.values, "fixed": fixed, "n_repeats": REPS,
           "lam": lam_dp, "sigma": sigma_dp, "rho": RHO, "delta": DELTA,
           "worst_pdp_mean": res.worst_pdp.mean(1), "worst_pdp_se": res.worst_pdp.std(1, ddof=1) / np.sqrt(REPS)}
    for m in res.worst_bound:
        key = m.replace("-", "_")
        out[f"worst_bound_{key}_mean"] = res.worst_bound[m].mean(1)
        out[f"worst_bound_{key}_se"] = res.worst_bound[m].std(1, ddof=1) / np.sqrt(REPS)
        out[f"covered_{key}"] = res.covered[m].sum(1)
    return out


def figure4() -> tuple[dict, dict, str]:
    return (_worst_case("n", NS, 50, 41), {"worst_case": 41},
            "the source's: d = 50, n = 100 to 10,000 (7 sizes), 10 repetitions")


def figure5() -> tuple[dict, dict, str]:
    return (_worst_case("d", DIMS, 1000, 42), {"worst_case": 42},
            "the source's: n = 1,000, d = 1 to 60 (9 dimensions), 10 repetitions")


def figure6() -> tuple[dict, dict, str]:
    credit = ds.load_credit_default()
    res = ex.budget_allocation(credit.X, credit.y, SPLITS, delta=DELTA, rho=RHO, rng=6)
    ind = res.independent
    b_ind = ind.bounds["data-independent"]
    out = {"n": credit.n, "d": credit.d, "splits": res.splits, "quantiles": QUANTILES,
           "eps_independent": res.eps_independent, "lam_independent": ind.lam,
           "independent_eps1_q": np.quantile(ind.eps1, QUANTILES),
           "independent_bound_q": np.quantile(b_ind, QUANTILES),
           "independent_covered": float(np.mean(b_ind >= ind.eps1)),
           "lam": res.lam, "eps1_q": [], "bound_q": [], "covered": [], "ratio_median": []}
    lam0, sig0 = objpert_calibrate_classic(res.eps_independent, DELTA, loss="logistic")
    out["independent_accuracy"] = _accuracy(credit.X, credit.y, lam0, sig0)
    out["accuracy"] = []
    for run in res.dependent:
        out["accuracy"].append(_accuracy(credit.X, credit.y, run.lam, run.sigma))
        b = run.bounds["data-dependent"]
        out["eps1_q"].append(np.quantile(run.eps1, QUANTILES))
        out["bound_q"].append(np.quantile(b, QUANTILES))
        out["covered"].append(float(np.mean(b >= run.eps1)))
        out["ratio_median"].append(float(np.median(b / run.eps1)))
    return out, {"budget_allocation": 6, "data": "all clients",
                  "accuracy": list(ACCURACY_SEEDS)}, (
        "the source's: all 30,000 credit-default clients, its four splits plus three more "
        "extreme ones (eps_1 = 0.9, 0.95, 0.98)")


def figure2() -> tuple[dict, dict, str]:
    credit = ds.load_credit_default()
    lam_dp, sigma_dp = objpert_calibrate_classic(EPS, DELTA, loss="logistic")
    cal_dd = report.calibrate_report(2.0, DELTA, method="data-dependent")
    lam = ex.data_dependent_lambda(lam=lam_dp, d=credit.d, sigma_hessian=cal_dd["sigma_hessian"], rho=RHO)
    res = ex.report_vs_truth(credit.X, credit.y, "logistic", lam=lam, sigma=sigma_dp, rho=RHO, delta=DELTA, rng=22,
                             methods=("data-independent", "data-dependent"), **cal_dd)
    out = {"n": credit.n, "d": credit.d, "lam": lam, "sigma": sigma_dp, "quantiles": QUANTILES,
           "eps1_q": np.quantile(res.eps1, QUANTILES)}
    for m in res.bounds:
        key = m.replace("-", "_")
        out[f"{key}_bound_q"] = np.quantile(res.bounds[m], QUANTILES)
        out[f"{key}_ratio_q"] = np.quantile(res.ratio(m), QUANTILES)
        out[f"{key}_covered"] = float(np.mean(res.bounds[m] >= res.eps1))
    return out, {"report_vs_truth": 22}, "the source's: all 30,000 credit-default clients (CI: 3,000)"


def coverage() -> tuple[dict, dict, str]:
    args = dict(lam=0.05, sigma=0.5, sigma_gradient=0.05, sigma_hessian=0.002, sigma_lambda_min=0.05, rho=0.1,
                n_draws=1000)
    out = {"n": 20, "d": 3, **args}
    for m, seed in (("data-dependent", 31), ("adaptive", 32)):
        c = ex.report_coverage_scenarios(20, d=3, method=m, rng=seed, **args)
        out["scenarios"] = list(c.scenarios)
        out[m.replace("-", "_")] = {"failures": c.failures, "upper": c.upper, "median_ratio": c.median_ratio}
    return out, {"data-dependent": 31, "adaptive": 32}, "1,000 draws per method (CI: 300)"


DRAWS = 100


def figure6_draws() -> tuple[dict, dict, str]:
    credit = ds.load_credit_default()
    res = ex.budget_allocation_draws(credit.X, credit.y, SPLITS, draws=DRAWS, delta=DELTA, rho=RHO, rng=16,
                                     progress=True)
    out = {"n": credit.n, "d": credit.d, "splits": res.splits, "lam": res.lam, "draws": res.draws, "rho": res.rho,
           "mean_covered": res.mean_covered, "worst_person_rate": res.worst_person_rate,
           "persons_below": res.persons_below,
           "share_min": res.covered_share.min(axis=1), "share_q05": np.quantile(res.covered_share, 0.05, axis=1),
           "share_median": np.median(res.covered_share, axis=1),
           "dependent_median": np.median(res.dependent_median, axis=1),
           "independent_median": np.median(res.independent_median, axis=1),
           "eps1_median": np.median(res.eps1_median, axis=1),
           "dependent_below_independent": (res.dependent_median < res.independent_median).mean(axis=1)}
    return out, {"figure6_draws": 16, "data": "all clients"}, (
        f"all 30,000 credit-default clients, the 7 splits of figure6, {DRAWS} draws each")


EXPERIMENTS = {"figure2": figure2, "figure4": figure4, "figure5": figure5, "figure6": figure6,
               "figure6_draws": figure6_draws, "coverage": coverage}


if __name__ == "__main__":
    run("privacy_report", EXPERIMENTS, __doc__.splitlines()[0])
