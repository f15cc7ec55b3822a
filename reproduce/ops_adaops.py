"""Full-scale runs of the OPS/AdaOPS chapter (Wang 2019, §4.3 Figure 2, and the chapter's tables).

* ``figure2_left``: DP ε of ridge output perturbation against the members' pDP, n from 100
  to 100,000 (the chapter's CI run stops at 3,000).
* ``figure2_right``: OPS over 17 values of γ on one data set each of n = 1,000, 10,000 and
  100,000 (CI: n = 1,000, 9 values): where the source's "several orders of magnitude" holds.
* ``accuracy_table``: AdaOPS, OPS with a fixed λ, output perturbation and least squares at
  ε = 0.5, 1, 2 over 200 seeds (CI: 20).
* ``adaops_efficiency``: Prop 4.4(2), AdaOPS's excess error over least squares for n up to
  128,000 (CI: 32,000) with the fitted log-log slope.

``python reproduce/ops_adaops.py [--only NAME]``; run with ``nice -n 15``.
"""

from __future__ import annotations

import numpy as np
from _common import run

from pdpkit.experiments import ops_adaops as ex

SEED = 20190101
DELTA = 1e-6
QUANTILES = [0.05, 0.25, 0.5, 0.75, 0.95]


def figure2_left() -> tuple[dict, dict, str]:
    ns = [100, 300, 1000, 3000, 10_000, 30_000, 100_000]
    res = ex.output_perturbation_vs_n(ns, d=5, lam=1.0, sigma=4.0, delta=DELTA, rng=SEED)
    return ({"ns": ns, "d": 5, "lam": 1.0, "sigma": 4.0, "delta": DELTA, "dp_epsilon": res.dp_epsilon,
             "quantiles": QUANTILES, "members_q": [np.quantile(m, QUANTILES) for m in res.members],
             "members_mean": [float(np.mean(m)) for m in res.members]},
            {"output_perturbation_vs_n": SEED}, "n = 100 to 100,000 (7 sizes), d = 5; the source gives no sizes")


def figure2_right() -> tuple[dict, dict, str]:
    gammas = np.logspace(-3, 1, 17)
    out = {"gammas": gammas, "lam": 10.0, "d": 5, "delta": DELTA, "ns": [1000, 10_000, 100_000]}
    for n in out["ns"]:
        X, y, _ = ex.anisotropic_regression(n, d=5, rng=SEED + 6)
        r = ex.ops_vs_gamma(X, y, gammas, lam=10.0, delta=DELTA)
        out[f"n{n}"] = {"excess_risk": r.excess_risk, "dp_epsilon": r.dp_epsilon, "pdp_for_all": r.pdp_for_all,
                        "members_median": r.members_median, "members_max": r.members_max,
                        "expmech_epsilon": r.expmech_epsilon}
    return out, {"anisotropic_regression": SEED + 6}, (
        "n = 1,000, 10,000 and 100,000, 17 values of gamma; the source gives no sizes")


def accuracy_table() -> tuple[dict, dict, str]:
    seeds = range(200)
    out = {"n": 2000, "d": 5, "kappa": 2.0, "delta": DELTA, "eps": [0.5, 1.0, 2.0], "n_seeds": len(seeds)}
    for e in out["eps"]:
        T = ex.accuracy_table(e, DELTA, n=2000, d=5, seeds=seeds, kappa=2.0, lam_fixed=2000 / (5 * 2.0))
        out["methods"] = list(T.methods)
        excess = T.mse[:, 1:] - T.mse[:, :1]
        out[f"eps{e:g}"] = {"mse_mean": T.mse.mean(0), "mse_se": T.mse.std(0, ddof=1) / np.sqrt(len(seeds)),
                            "excess_mean": excess.mean(0),
                            "excess_se": excess.std(0, ddof=1) / np.sqrt(len(seeds)),
                            "adaops_lam_zero": float(np.mean(T.lam_adaops == 0))}
    return out, {"accuracy_table": list(seeds)}, "n = 2,000, d = 5, 200 seeds (CI: 20); the source has no table"


def adaops_efficiency() -> tuple[dict, dict, str]:
    ns = [2000, 4000, 8000, 16000, 32000, 64000, 128000]
    eff = ex.adaops_efficiency(ns, d=5, eps=1.0, delta=DELTA, kappa=2.0, reps=300, rng=SEED + 44)
    slope, slope_se = ex.fitted_slope(eff.ns, eff.excess_mean, eff.excess_se)
    return ({"ns": ns, "d": 5, "eps": 1.0, "delta": DELTA, "kappa": 2.0, "reps": eff.reps,
             "excess_mean": eff.excess_mean, "excess_se": eff.excess_se, "predicted": eff.predicted,
             "ols_mse": eff.ols_mse, "gamma": eff.gamma, "lam_zero": eff.lam_zero,
             "slope": slope, "slope_se": slope_se},
            {"adaops_efficiency": SEED + 44},
            "n = 2,000 to 128,000 (7 sizes), 300 data sets each (CI: to 32,000, 60 each); the source has no experiment")


EXPERIMENTS = {"figure2_left": figure2_left, "figure2_right": figure2_right, "accuracy_table": accuracy_table,
               "adaops_efficiency": adaops_efficiency}


if __name__ == "__main__":
    run("ops_adaops", EXPERIMENTS, __doc__.splitlines()[0])
