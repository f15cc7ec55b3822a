"""Benchmark of pdpkit.single.

``release_linear_functional`` (Alg 5: fit, data Hessian, its eigenvalues, two recursive
releases, the ratio certificate, the local modulus) on robust regression against the
non-private work it cannot avoid, measured in the same run: ``erm_fit_nonprivate`` plus
one formation of the data Hessian ``X^T diag(f'') X`` (goal: ratio <= 1.5).

Size: the issue asks for n = 10^6, d = 50 (a 400 MB design matrix). ``BENCH_SINGLE_N``
overrides n (the machine is shared; the report says which n ran).
"""

from __future__ import annotations

import math
import os

import numpy as np
from _harness import best_time, report

from pdpkit._solver import _hessian
from pdpkit.losses import robust_log
from pdpkit.objpert import erm_fit_nonprivate
from pdpkit.single import release_linear_functional


def main() -> None:
    n = int(os.environ.get("BENCH_SINGLE_N", 10**6))
    d = 50
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, size=(n, d))
    theta_star = rng.standard_normal(d)
    theta_star /= np.linalg.norm(theta_star)
    y = X @ theta_star + rng.laplace(size=n)
    R = math.sqrt(d)
    lam = 1.0
    u = np.zeros(d)
    u[0] = 1.0

    def baseline() -> None:
        th = erm_fit_nonprivate(X, y, robust_log, lam=lam)
        _hessian(X, robust_log.d2(X @ th, y), lam)

    def alg5() -> None:
        release_linear_functional(X, y, robust_log, u, 4.0, 1e-6, lam=lam, norm_bound=R,
                                  cap=n * robust_log.smoothness * R * R, domain="linf", rng=1)

    t_base = best_time(baseline, repeat=3)
    t_alg5 = best_time(alg5, repeat=3)
    report("single", f"release_linear_functional n={n:.0e} d={d}", t_alg5,
           baseline="erm_fit_nonprivate + 1 Hessian", baseline_seconds=t_base, goal="goal: ratio <= 1.5")


if __name__ == "__main__":
    main()
