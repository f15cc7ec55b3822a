"""Full-scale experiment of the chapter "Self-concordant stability" (Asi, Duchi & Talwar, Figure 1).

Figure 1: relative error of Alg 2's private λ_min, robust regression, ε = 1, δ = 1e-6,
d = 5, 10, 20, n/d = 10 to 10^4 (n up to 2·10^5), 25 repetitions (the source's count, §4.1).
Calls :func:`pdpkit.experiments.self_concordant_stability.eigenvalue_relative_error`;
the result goes to ``results/self_concordant_stability/figure1.json``.
"""

from __future__ import annotations

import numpy as np

from pdpkit.experiments import self_concordant_stability as ex
from pdpkit.experiments import stored

from _common import run_each

CHAPTER = "self_concordant_stability"
SEED = 20250412
REPS = 25


def figure1() -> None:
    ratios = [10, 30, 100, 300, 1000, 3000, 10000]
    with stored.Timer() as t:
        res = ex.eigenvalue_relative_error(ratios, dims=(5, 10, 20), reps=REPS, rng=SEED)
    a = res.rel_error
    stored.save_result(CHAPTER, "figure1", {
        "dims": res.dims, "ratios": res.ratios, "eps": res.eps, "delta": res.delta, "reps": REPS,
        "mean": a.mean(-1), "se": a.std(-1, ddof=1) / np.sqrt(REPS), "median": np.median(a, -1),
        "refused": (a >= 1.0).mean(-1)},
        provenance=stored.provenance(seeds={"figure1": SEED}, wall_time_s=t.seconds,
                                     scale="d = 5, 10, 20, n/d = 10 to 10^4 (n up to 2*10^5), "
                                           "25 repetitions (the source's)"))


EXPERIMENTS = {"figure1": figure1}

if __name__ == "__main__":
    run_each(EXPERIMENTS, __doc__.splitlines()[0])
