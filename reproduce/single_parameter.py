"""Full-scale experiments of the chapter "Releasing one parameter" (Asi, Duchi & Talwar, §4).

Figures 2–3: error of the first coordinate against n (10^3 to 10^5, 9 points), d = 5, 10, 20,
‖θ*‖ = 1 and 5, ε = 4, δ = 1e-6, 25 repetitions (the source's count, §4.1).
Figures 2–3 to 10^6 (``figures2_3_to_1e6``): the same sweep at n = 10^5, 3.2·10^5 and 10^6, the
source's largest sizes, 25 repetitions.
Figures 4–5: error against ε (0.5 to 16) at n = 10^5, d = 10, ‖θ*‖ = 1 and 6, 25 repetitions.
Figures 6–7: UCI Adult (the source uses ACS data), bootstrap samples of n = 10^4 to 10^6,
ε = 2, 4, 8, 25 repetitions (the source's count).
Figures 6–7 gated (``figures6_7_gated``): the same protocol with a "local" release gated on Alg 2 alone
(not certified) next to Alg 5 and ObjPert, n = 10^4 to 10^6 (9 points), 25 repetitions, and the
fraction of Alg 2 draws at (ε/2, δ/2) with a positive bound on a finer grid of n. Every run calls
:mod:`pdpkit.experiments.single_parameter`; results go to ``results/single_parameter/``.

``--only NAME`` runs one experiment (``figures2_3``, ``figures4_5``, ``figures6_7``, ``figures6_7_gated``).
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


def _sweep_n(name: str, n_grid: np.ndarray, seed: int, scale: str) -> None:
    """Figs 2-3's sweep over n (eps = 4, both norms, d = 5, 10, 20), stored as ``name``; seeds ``seed + d``."""
    out, seeds = {}, {}
    with stored.Timer() as t:
        for norm in (1.0, 5.0):
            for d in (5, 10, 20):
                seeds[f"norm={norm:g},d={d}"] = seed + d
                res = ex.compare_methods(n_grid, swept="n", d=d, theta_norm=norm, eps=4.0, reps=REPS,
                                         rng=seed + d)
                out[f"norm={norm:g},d={d}"] = _methods(res)
    stored.save_result(CHAPTER, name, {"reps": REPS, "eps": 4.0, "delta": 1e-6, "sweeps": out},
                       provenance=stored.provenance(seeds=seeds, wall_time_s=t.seconds, scale=scale))


def figures2_3() -> None:
    _sweep_n("figures2_3", np.geomspace(1e3, 1e5, 9).round(), SEED,
             "n = 10^3 to 10^5 (9 points), d = 5, 10, 20, 25 repetitions (the source's "
             "repetitions; n stops at 10^5 as in the source's Figs 4-5)")


def figures2_3_to_1e6() -> None:
    _sweep_n("figures2_3_to_1e6", np.geomspace(1e5, 1e6, 3).round(), SEED + 1000,
             "n = 10^5, 3.2*10^5, 10^6 (the source's largest sizes), d = 5, 10, 20, 25 repetitions")


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


def figures6_7_gated() -> None:
    ns = np.geomspace(1e4, 1e6, 9).round()
    ns_gate = np.geomspace(1e5, 4e5, 13).round()
    reps, draws = 25, 400
    with stored.Timer() as t:
        res = ex.adult_gated_errors_uncertified(ns, eps=(2.0, 4.0, 8.0), features=("sex", "schooling"), reps=reps,
                                                draws=draws, rng=SEED + 7)
        fine = ex.adult_gated_errors_uncertified(ns_gate, eps=(2.0, 4.0, 8.0), reps=reps, draws=draws,
                                                 gate_only=True, rng=SEED + 8)

    def gates(r: dict) -> dict:
        return {f"eps={e:g}": {"empirical": r["gate"][e].mean(1), "exact": r["gate_exact"][e].mean(1)}
                for e in r["eps"]}

    def lengths(r: dict) -> dict:
        L = r["recursion_length"]
        return {"mean": L.mean(1), "min": L.min(1), "max": L.max(1), "lambda_min_mean": r["lambda_min"].mean(1)}

    runs = {f"{f},eps={e:g}": {"bottom_alg5": res["bottom"][(f, e)],
                               "errors": {m: _summary(v) for m, v in res["errors"][(f, e)].items()}}
            for f in res["features"] for e in res["eps"]}
    stored.save_result(CHAPTER, "figures6_7_gated",
                       {"reps": reps, "delta": 1e-6, "draws": draws, "ns": ns, "runs": runs, "gate": gates(res),
                        "recursion_length": lengths(res),
                        "gate_fine": {"ns": ns_gate, "gate": gates(fine), "recursion_length": lengths(fine)}},
                       provenance=stored.provenance(
                           seeds={"errors": SEED + 7, "gate_fine": SEED + 8}, wall_time_s=t.seconds,
                           scale="UCI Adult bootstrap samples n = 10^4 to 10^6 (9 points), eps = 2, 4, 8, "
                                 "25 repetitions (the source's), 400 Alg 2 draws per sample and eps; the gate "
                                 "alone on 13 points from 10^5 to 4*10^5, 25 samples each; the gated release is "
                                 "not certified"))


EXPERIMENTS = {"figures2_3": figures2_3, "figures2_3_to_1e6": figures2_3_to_1e6, "figures4_5": figures4_5,
               "figures6_7": figures6_7, "figures6_7_gated": figures6_7_gated}

if __name__ == "__main__":
    run_each(EXPERIMENTS, __doc__.splitlines()[0])
