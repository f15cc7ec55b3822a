"""Benchmarks of pdpkit.stability: the recursion's exact length and its inverse at N = 10^7.

* ``Recursion.length`` from a start 10^7 steps above the floor (recursion (10), logistic,
  r = 1, λ = 0; a fresh recursion each time, so nothing is cached) vs a plain-Python
  forward loop of the same recursion written with ``math`` (the fastest plain loop),
  measured in the same run on 2·10^5 steps and extrapolated linearly (goal: < 1 s).
* ``Recursion.inverse(10^7)`` vs the backward sequence by ``scipy.optimize.brentq``, one
  root per step, measured on 2000 steps and extrapolated (goal: < 1 s).
Both comparisons first check that the fast and the plain answers agree.
"""

from __future__ import annotations

import math
import time

import numpy as np
from _harness import best_time, report
from scipy import optimize

from pdpkit import stability as st

CONSTS = st.stability_constants("logistic", norm_bound=1.0, lam=0.0)
N_BIG = 10**7


def _plain_step():
    c = CONSTS
    a, r, tau, lam, G1 = c.alpha, c.norm_bound, c.tau, c.lam, c.G1
    cc = c.loss.self_concordance
    thr = 2 * a * r * tau / (c.rho * (1 - c.rho)) + G1 / c.rho - lam / c.rho
    k4 = 4 * a * r * tau

    def R(e: float) -> float:
        if e < thr:
            return 0.0
        L = e + lam
        t = 2 * tau / (L * (1 + math.sqrt(1 - k4 / L)))
        return max(0.0, e * max(0.0, 1 - math.expm1(cc * r * t)) - G1)

    return R


def _plain_length(R, x: float) -> int:
    n = 0
    while x > 0.0:
        x = R(x)
        n += 1
    return n


def main() -> None:
    R = _plain_step()
    # calibrate a start N_BIG steps above the floor
    probe = st.qsc_lambda_min_recursion(CONSTS)
    start = float(probe.inverse(N_BIG)) * (1 - 1e-9)
    assert probe.length(start) == N_BIG
    # exactness against the plain loop on a smaller problem
    n_small = 2 * 10**5
    x_small = float(probe.inverse(n_small)) * (1 - 1e-9)
    t0 = time.perf_counter()
    n_plain = _plain_length(R, x_small)
    t_plain = time.perf_counter() - t0
    assert n_plain == st.qsc_lambda_min_recursion(CONSTS).length(x_small) == n_small, n_plain
    t_plain_big = t_plain * N_BIG / n_small
    t_len = best_time(lambda: st.qsc_lambda_min_recursion(CONSTS).length(start), repeat=3)
    report("stability", "Recursion.length, N = 1e7 (fresh)", t_len,
           baseline="plain-Python loop (extrap.)", baseline_seconds=t_plain_big, goal="goal < 1 s")
    # inverse against brentq, one root per step
    m_small = 2000
    b = float(probe.inverse(100))
    t0 = time.perf_counter()
    for _ in range(m_small):
        b = optimize.brentq(lambda x, y=b: R(x) - y, b, b + 10.0, xtol=1e-12, rtol=1e-15)
    t_brent = (time.perf_counter() - t0) / m_small
    ours = float(probe.inverse(100 + m_small))
    assert ours <= b * (1 + 1e-12) and b - ours <= 1e-9 * b, (ours, b)
    t_inv = best_time(lambda: st.qsc_lambda_min_recursion(CONSTS).inverse(N_BIG), repeat=3)
    report("stability", "Recursion.inverse(1e7) (fresh)", t_inv,
           baseline="brentq per step (extrap.)", baseline_seconds=t_brent * N_BIG, goal="goal < 1 s")
    print(f"[stability] plain loop {t_plain / n_small * 1e6:.2f} us/step, brentq {t_brent * 1e6:.1f} us/step; "
          f"length {N_BIG} and inverse agree with both at 2e5 / 2000 steps")
    np.testing.assert_array_equal(probe.length(np.array([start, x_small])), [N_BIG, n_small])


if __name__ == "__main__":
    main()
