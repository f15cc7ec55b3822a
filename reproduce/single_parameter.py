"""Full-scale experiments of the chapter "Releasing one parameter" (Asi, Duchi & Talwar, §4).

Figures 2–3: error of the first coordinate against n (10^3 to 10^5, 9 points), d = 5, 10, 20,
‖θ*‖ = 1 and 5, ε = 4, δ = 1e-6, 25 repetitions (the source's count, §4.1).
Figures 4–5: error against ε (0.5 to 16) at n = 10^5, d = 10, ‖θ*‖ = 1 and 6, 25 repetitions.
Figures 6–7: UCI Adult (the source uses ACS data), bootstrap samples of n = 10^4 to 10^6,
ε = 2, 4, 8, 25 repetitions (the source's count). Every run calls
:mod:`pdpkit.experiments.single_parameter`; results go to ``results/single_parameter/``.

``--only NAME`` runs one experiment (``figures2_3``, ``figures4_5``, ``figures6_7``).
"""

from __future__ import annotations

import numpy as np

from pdpkit.experiments import single_parameter as ex
from pdpkit.experiments import stored

from _common import run_each

CHAPTER = "single_parameter"
SEED = 20250412
REPS = 25


def _summary(a: np.ndarray) -> dict:
    """Mean, standard error, median over the last axis (the repetitions)."""
    a = np.asarray(a, dtype=float)
    k = a.shape[-1]
    return {"mean": a.mean(-1), "se": a.std(-1, ddof=1) / np.sqrt(k), "median": np.median(a, -1)}


def _methods(res: ex.MethodErrors) -> dict:
    return {"grid": res.grid, "bottom": res.bottom, "stat_error": _summary(res.stat_error),
            "err_fit": {m: _summary(v) for m, v in res.err_fit.items()},
            "err_star": {m: _summary(v) for m, v in res.err_star.items()}}


def figures2_3() -> None:
    n_grid = np.geomspace(1e3, 1e5, 9).round()
    out, seeds = {}, {}
    with stored.Timer() as t:
        for norm in (1.0, 5.0):
            for d in (5, 10, 20):
                seeds[f"norm={norm:g},d={d}"] = SEED + d
                res = ex.compare_methods(n_grid, swept="n", d=d, theta_norm=norm, eps=4.0, reps=REPS,
                                         rng=SEED + d)
                out[f"norm={norm:g},d={d}"] = _methods(res)
    stored.save_result(CHAPTER, "figures2_3", {"reps": REPS, "eps": 4.0, "delta": 1e-6, "sweeps": out},
                       provenance=stored.provenance(
                           seeds=seeds, wall_time_s=t.seconds,
                           scale="n = 10^3 to 10^5 (9 points), d = 5, 10, 20, 25 repetitions (the source's "
                                 "repetitions; n stops at 10^5 as in the source's Figs 4-5)"))


def figures4_5() -> None:
    eps_grid = np.array([0.5, 1.0, 2.0, 4.0, 8.0, 16.0])
    out, seeds = {}, {}
    with stored.Timer() as t:
        for target in ("coordinate", "vector"):
            for norm in (1.0, 6.0):
                key = f"{target},norm={norm:g}"
                seeds[key] = SEED + int(norm)
                res = ex.compare_methods(eps_grid, swept="eps", d=10, theta_norm=norm, n=100_000, target=target,
                                         reps=REPS, rng=SEED + int(norm))
                out[key] = _methods(res)
    stored.save_result(CHAPTER, "figures4_5", {"reps": REPS, "n": 100_000, "d": 10, "delta": 1e-6, "sweeps": out},
                       provenance=stored.provenance(seeds=seeds, wall_time_s=t.seconds,
                                                    scale="the source's: n = 10^5, d = 10, 25 repetitions"))


def figures6_7() -> None:
    ns = np.geomspace(1e4, 1e6, 5).round()
    out, seeds = {}, {}
    with stored.Timer() as t:
        for feat in ("sex", "schooling"):
            for e_a in (2.0, 4.0, 8.0):
                key = f"{feat},eps={e_a:g}"
                seeds[key] = SEED
                res = ex.adult_errors(ns, eps=e_a, feature=feat, reps=REPS, rng=SEED)
                out[key] = {"ns": res.ns, "theta_population": res.theta_population, "bottom": res.bottom,
                            "errors": {m: _summary(v) for m, v in res.errors.items()}}
    stored.save_result(CHAPTER, "figures6_7", {"reps": REPS, "delta": 1e-6, "runs": out},
                       provenance=stored.provenance(
                           seeds=seeds, wall_time_s=t.seconds,
                           scale="UCI Adult (45,222 rows; the source's ACS data need a download) bootstrap "
                                 "samples n = 10^4 to 10^6, eps = 2, 4, 8, 25 repetitions (the source's)"))


EXPERIMENTS = {"figures2_3": figures2_3, "figures4_5": figures4_5, "figures6_7": figures6_7}

if __name__ == "__main__":
    run_each(EXPERIMENTS, __doc__.splitlines()[0])
