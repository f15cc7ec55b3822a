"""Benchmarks of pdpkit.gaussian.

* ``gaussian_delta`` on 10^5 ε values (goal < 20 ms) vs the naive two-term formula
  with scipy's ``norm.cdf`` (which overflows/cancels in the tails — timed only).
* ``gaussian_sigma`` for one (ε, δ) (goal < 5 ms) vs bisection with
  ``scipy.optimize.brentq`` on the same tight profile, to the same tolerance.
"""

from __future__ import annotations

import numpy as np
from _harness import best_time, report
from scipy import optimize, stats

from pdpkit.gaussian import gaussian_delta, gaussian_sigma


def main() -> None:
    eps = np.linspace(0.0, 20.0, 10**5)

    def naive() -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            return stats.norm.cdf(0.5 - eps) - np.exp(eps) * stats.norm.cdf(-0.5 - eps)

    t_delta = best_time(lambda: gaussian_delta(eps, sensitivity=1.0, sigma=1.0), repeat=20)
    t_naive = best_time(naive, repeat=20)
    report("gaussian", "gaussian_delta, 1e5 eps values", t_delta, baseline="naive scipy.stats formula",
           baseline_seconds=t_naive, goal="goal < 20 ms")

    def brent_sigma() -> float:
        f = lambda log_mu: np.log(gaussian_delta(1.0, sensitivity=np.exp(log_mu), sigma=1.0)) - np.log(1e-5)
        return 1.0 / np.exp(optimize.brentq(f, np.log(0.05), np.log(1e2), xtol=1e-14, rtol=1e-14))

    assert abs(brent_sigma() / gaussian_sigma(1.0, 1e-5) - 1) < 1e-9
    t_sigma = best_time(lambda: gaussian_sigma(1.0, 1e-5), repeat=50)
    t_brent = best_time(brent_sigma, repeat=20)
    report("gaussian", "gaussian_sigma(eps=1, delta=1e-5)", t_sigma, baseline="scipy brentq on eq. B.1",
           baseline_seconds=t_brent, goal="goal < 5 ms")
    grid_e, grid_d = np.meshgrid(np.linspace(0.1, 10, 100), np.logspace(-12, -2, 100))
    t_grid = best_time(lambda: gaussian_sigma(grid_e, grid_d), repeat=5)
    report("gaussian", "gaussian_sigma, 1e4 (eps, delta) pairs", t_grid, baseline="1e4 x brentq (extrapolated)",
           baseline_seconds=t_brent * 1e4)


if __name__ == "__main__":
    main()
