"""Full-scale run of the chapter "Using pdpkit": the privacy report on all 16,281 test records.

* ``report``: the chapter's ``FULL_SCALE = True`` path. The private model of income
  (ObjPertClassifier at (1, 10^-6), the adaptive report at (0.5, 10^-6), ρ = 0.05, λ = 3 as
  the chapter's private selection chose it) on the 32,561 training records through the
  reviewed schema, and every test record's private bound with its label (CI: the first
  2,000). Stored: quantiles, mean and s.e. of the bounds, the estimator's guarantee.
* ``one_vs_rest_coverage``: how often a three-class model's per-person bound (the sum of its
  three reports' bounds) covers the exact ex-post loss of the three models together, over
  1,000 fits (CI: 40); with the first model's bound alone as the control.
* ``selection_pays``: held-out accuracy of private selection of λ (ObjPertClassifierCV) against
  the default calibrated λ at the same total (ε, δ), on synthetic data, credit default and Adult,
  n from 500 to 20,000, ε from 0.5 to 4, the default grid and a grid around the default λ,
  10 seeds (paired), with a free-selection ceiling.
* ``selection_split``: the same comparison with a validation part of 15%, 30% and 50% (credit
  default and Adult, 500 and 2,000 records, ε = 0.5 and 1, the default grid).

``python reproduce/using_pdpkit.py``; run it with ``nice -n 10``.
"""

from __future__ import annotations

import numpy as np
from _common import run

from pdpkit.experiments import using_pdpkit as ex

LAM = 3.0  # the chapter's ObjPertClassifierCV (seed 0) chooses 3 from 3, 10, 30, 100
QUANTILES = [0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0]
COVERAGE_REPS = 1000


def report() -> tuple[dict, dict, str]:
    clf, bounds = ex.adult_report_bounds(lam=LAM, n_people=None, random_state=0)
    g = clf.privacy_spent()
    out = {"n_people": int(bounds.size), "lam": LAM, "sigma": clf.sigma_,
           "epsilon": g.epsilon, "delta": g.delta, "quantiles": QUANTILES,
           "bound_q": np.quantile(bounds, QUANTILES), "bound_mean": float(bounds.mean()),
           "bound_se": float(bounds.std(ddof=1) / np.sqrt(bounds.size))}
    return out, {"records": [0, 1], "estimator": 0}, (
        "the chapter's FULL_SCALE: all 16,281 test records, against the first 2,000 live")


def one_vs_rest_coverage() -> tuple[dict, dict, str]:
    r = ex.one_vs_rest_report_coverage(reps=COVERAGE_REPS)
    out = {"reps": r["reps"], "rho": r["rho"], "covered": r["covered"], "lower": r["lower"],
           "one_model": r["one_model"], "upper_one_model": r["upper_one_model"]}
    return out, {"records": 0, "estimator": f"0 to {COVERAGE_REPS - 1}"}, (
        f"the chapter's FULL_SCALE: {COVERAGE_REPS} fits of the three-class model, against 40 live")


SELECTION_GRIDS = {"default": None, "around the default": ("default-lam", (1 / 3, 1.0, 3.0))}


def selection_pays() -> tuple[dict, dict, str]:
    r = ex.selection_pays(data=ex.SELECTION_PAYS_DATA, ns=(500, 2000, 8000, 20000), eps=(0.5, 1.0, 2.0, 4.0),
                          delta=1e-6, grids=SELECTION_GRIDS, seeds=10, progress=True)
    return r, {"subsample": "0 to 9", "estimator": "0 to 9"}, (
        "3 data sets x 4 sizes x 4 budgets x 2 grids, 10 paired seeds each")


def selection_split() -> tuple[dict, dict, str]:
    r = ex.selection_pays(data=("adult", "credit_default"), ns=(500, 2000), eps=(0.5, 1.0), delta=1e-6,
                          grids={"default": None}, validation_fractions=(0.15, 0.3, 0.5), seeds=10, progress=True)
    return r, {"subsample": "0 to 9", "estimator": "0 to 9"}, (
        "2 data sets x 2 sizes x 2 budgets x 3 validation fractions, 10 paired seeds each")


EXPERIMENTS = {"report": report, "one_vs_rest_coverage": one_vs_rest_coverage, "selection_pays": selection_pays,
               "selection_split": selection_split}


if __name__ == "__main__":
    run("using_pdpkit", EXPERIMENTS, __doc__.splitlines()[0])
