"""Benchmarks of pdpkit.accounting.

* ``objpert_delta`` on 10^4 ε values vs per-point ``scipy.integrate.quad`` of the PLRV
  integrand E[(1 - e^{ε - Y})_+] (goal: ≥ 1000× faster) and vs a per-point scalar loop of
  the same closed form with ``math.erfc`` (goal: ≥ 10× faster).
* ``objpert_delta_composed`` at k = 10 (goal < 0.5 s), against basic composition.
"""

from __future__ import annotations

import math
import time

import numpy as np
from _harness import best_time, report
from scipy import integrate

from pdpkit.accounting import objpert_delta, objpert_delta_composed

P = dict(L=1.0, beta=0.25, lam=1.0, sigma=2.0)
A = P["L"] / P["sigma"]
C = -math.log1p(-P["beta"] / P["lam"]) + A * A / 2


def _quad_delta(e: float) -> float:
    t0 = max(0.0, (e - C) / A)
    f = lambda t: 2 * math.exp(-t * t / 2) / math.sqrt(2 * math.pi) * (1 - math.exp(e - C - A * t))
    return integrate.quad(f, t0, np.inf, epsabs=0, epsrel=1e-12)[0]


def _scalar_delta(e: float) -> float:
    e_t = e - (C - A * A / 2)
    if e_t - A * A / 2 >= 0:
        x1, x2 = A / 2 - e_t / A, -A / 2 - e_t / A
        return math.erfc(-x1 / math.sqrt(2)) - math.exp(e_t) * math.erfc(-x2 / math.sqrt(2))
    return -math.expm1(e_t - A * A / 2 + math.log(math.erfc(A / math.sqrt(2)) * math.exp(A * A / 2)))


def main() -> None:
    eps = np.linspace(0.0, 6.0, 10**4)
    sample = eps[::100]
    err = max(abs(float(objpert_delta(e, **P)) / _quad_delta(float(e)) - 1) for e in sample)
    t_vec = best_time(lambda: objpert_delta(eps, **P), repeat=20)
    t0 = time.perf_counter()
    for e in sample:
        _quad_delta(float(e))
    t_quad = (time.perf_counter() - t0) * (eps.size / sample.size)  # extrapolated to 10^4 points
    t_loop = best_time(lambda: [_scalar_delta(float(e)) for e in eps], repeat=5)
    report("accounting", "objpert_delta, 1e4 eps values", t_vec, baseline="per-point scipy quad (extrap.)",
           baseline_seconds=t_quad, goal="goal: ratio <= 0.001")
    report("accounting", "objpert_delta, 1e4 eps values", t_vec, baseline="per-point scalar closed form",
           baseline_seconds=t_loop, goal="goal: ratio <= 0.1")
    print(f"[accounting] speed-up: {t_quad / t_vec:.0f}x over quad (goal >= 1000x), "
          f"{t_loop / t_vec:.0f}x over the scalar loop (goal >= 10x); "
          f"max relative deviation from quad on 100 points: {err:.1e}")
    t_comp = best_time(lambda: objpert_delta_composed(np.array([1.0, 2.0, 4.0]), k=10, **P), repeat=3)
    t_basic = best_time(lambda: 10 * objpert_delta(np.array([0.1, 0.2, 0.4]), **P), repeat=20)
    report("accounting", "objpert_delta_composed k=10, 3 eps", t_comp, baseline="basic composition (loose)",
           baseline_seconds=t_basic, goal="goal < 0.5 s")
