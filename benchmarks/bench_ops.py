"""Benchmarks of pdpkit.ops.

* ``ops_pdp_epsilon`` for every row of a data set (n = 10^6, d = 50; ``PDPKIT_BENCH_N`` overrides n)
  against the numpy floor of the same run: X^T X, one Cholesky, one ``solve_triangular``
  on all rows (goal: ratio <= 5);
* ``ops_pdp_bound`` (Thm 4.1, corrected) on the same rows against the same floor (goal: ratio <= 2).
"""

from __future__ import annotations

import os

import numpy as np
import scipy.linalg as sla
from _harness import best_time, report

from pdpkit.ops import ops_pdp_bound, ops_pdp_epsilon


def _floor(X: np.ndarray, lam: float) -> np.ndarray:
    H = X.T @ X
    H[np.diag_indices(X.shape[1])] += lam
    L = sla.cholesky(H, lower=True, check_finite=False)
    return sla.solve_triangular(L, X.T, lower=True, check_finite=False)


def main() -> None:
    n = int(os.environ.get("PDPKIT_BENCH_N", 10**6))
    d = 50
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = np.clip(X @ rng.normal(size=d) * 0.3 + 0.1 * rng.normal(size=n), -1, 1)
    kw = dict(lam=1.0, gamma=50.0, delta=1e-6, member=True)
    # best of several rounds, the floor measured before and after (the machine is shared)
    t_floor = best_time(lambda: _floor(X, 1.0), repeat=5)
    t_eps = best_time(lambda: ops_pdp_epsilon(X, y, X, y, **kw), repeat=3)
    t_bnd = best_time(lambda: ops_pdp_bound(X, y, X, y, form="corrected", **kw), repeat=5)
    t_floor = min(t_floor, best_time(lambda: _floor(X, 1.0), repeat=5))
    label = f"n={n:.0e} d={d}"
    report("ops", f"ops_pdp_epsilon, all rows, {label}", t_eps, baseline="numpy floor (XtX, chol, trsm)",
           baseline_seconds=t_floor, goal="goal: ratio <= 5")
    report("ops", f"ops_pdp_bound corrected, all rows, {label}", t_bnd, baseline="numpy floor (XtX, chol, trsm)",
           baseline_seconds=t_floor, goal="goal: ratio <= 2")


if __name__ == "__main__":
    main()
