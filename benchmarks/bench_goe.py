"""Benchmarks of pdpkit.goe against baselines measured in the same run.

1. One evaluation of the exact CDF of the largest eigenvalue at d = 50 against the
   straightforward multiprecision Pfaffian in the monomial basis
   (``goe_lambda1_cdf_mpmath`` at 60 + d^2/80 digits, one evaluation; goal <= 5 ms).
2. The upper quantile tau = F^{-1}(1 - rho/2) at d = 50, rho = 8.465e-6 (Lemma 20) against
   bisection on the multiprecision CDF to 1e-10 (extrapolated: 38 halvings of an interval
   of width 20 times one timed evaluation; goal <= 50 ms).
3. 1000 values of x at d = 50 spanning F from 1e-3 to 1 - 1e-12 (goal <= 0.5 s) against
   the same 1000 points one call at a time, and against 1000 multiprecision evaluations
   (extrapolated from one).
4. Monte Carlo at the 1 - 1e-6 quantile: how many GOE(50) draws the empirical quantile needs
   for the accuracy of ``goe_lambda1_isf`` (1e-10 in x) and for a modest 1e-3, from the
   binomial standard error sqrt(q(1 - q)/n)/f(x); the time of a timed batch of 2000 draws
   (``numpy.linalg.eigvalsh``) is extrapolated.
"""

from __future__ import annotations

import math
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from _harness import best_time, report

from pdpkit import goe
from pdpkit._goe_mpmath import goe_lambda1_cdf_mpmath

D = 50
RHO = 8.465e-6


def main() -> None:
    goe.goe_lambda1_cdf(0.0, d=D)                     # build the per-d table once (cached)
    t_build = best_time(lambda: (goe._table.cache_clear(), goe._table(D)), repeat=3)
    report("goe", f"per-d table build d={D} (once, cached)", t_build)

    # 1. one CDF evaluation
    x0 = 14.0
    t_cdf = best_time(lambda: goe.goe_lambda1_cdf(x0, d=D), repeat=20, number=5)
    t0 = time.perf_counter()
    goe_lambda1_cdf_mpmath(x0, D, validate=False)
    t_mp = time.perf_counter() - t0
    report("goe", f"goe_lambda1_cdf one x d={D}", t_cdf, baseline="mpmath monomial Pfaffian",
           baseline_seconds=t_mp, goal=f"<= 5 ms; {t_mp / t_cdf:.0f}x faster")
    t_sf = best_time(lambda: goe.goe_lambda1_sf(18.0, d=D), repeat=20, number=5)
    report("goe", f"goe_lambda1_sf one x (upper tail) d={D}", t_sf, baseline="mpmath monomial Pfaffian",
           baseline_seconds=t_mp, goal=f"<= 5 ms; {t_mp / t_sf:.0f}x faster")

    # 2. the Lemma 20 quantile
    halvings = math.ceil(math.log2(20.0 / 1e-10))
    t_bis = halvings * t_mp
    for name, fn in ((f"goe_lambda1_isf(rho/2) d={D}", lambda: goe.goe_lambda1_isf(RHO / 2, d=D)),
                     (f"goe_lambda1_quantile(0.5) d={D}", lambda: goe.goe_lambda1_quantile(0.5, d=D))):
        t_q = best_time(fn, repeat=5)
        report("goe", name, t_q, baseline=f"mpmath bisection, {halvings} evals (extrap.)",
               baseline_seconds=t_bis, goal=f"<= 50 ms; {t_bis / t_q:.0f}x faster")

    # 3. many x at once
    xs = np.linspace(float(goe.goe_lambda1_quantile(1e-3, d=D)), float(goe.goe_lambda1_isf(1e-12, d=D)), 1000)
    t_vec = best_time(lambda: goe.goe_lambda1_cdf(xs, d=D), repeat=3)
    t_loop = best_time(lambda: [goe.goe_lambda1_cdf(float(x), d=D) for x in xs[::10]], repeat=1) * 10
    report("goe", f"goe_lambda1_cdf 1000 x d={D}", t_vec, baseline="same x one call at a time",
           baseline_seconds=t_loop, goal="<= 0.5 s")
    report("goe", f"goe_lambda1_cdf 1000 x d={D}", t_vec, baseline="1000 mpmath evals (extrap.)",
           baseline_seconds=1000 * t_mp, goal=f"<= 0.5 s; {1000 * t_mp / t_vec:.0f}x faster")
    xs_low = np.linspace(float(goe.goe_lambda1_quantile(1e-30, d=D)), float(goe.goe_lambda1_quantile(1e-6, d=D)), 100)
    t_low = best_time(lambda: goe.goe_lambda1_cdf(xs_low, d=D), repeat=3)
    report("goe", f"goe_lambda1_cdf 100 x lower tail d={D}", t_low, baseline="100 mpmath evals (extrap.)",
           baseline_seconds=100 * t_mp, goal=f"informational; {100 * t_mp / t_low:.0f}x faster")

    # 4. Monte Carlo at the 1 - 1e-6 quantile
    q = 1e-6
    x_q = float(goe.goe_lambda1_isf(q, d=D))
    f_q = float(goe.goe_lambda1_pdf(x_q, d=D))
    rng = np.random.default_rng(0)
    batch = 2000
    t_batch = best_time(lambda: np.linalg.eigvalsh(goe.goe_matrix(D, size=batch, rng=rng))[:, -1], repeat=2)
    per_draw = t_batch / batch
    t_isf = best_time(lambda: goe.goe_lambda1_isf(q, d=D), repeat=5)
    for acc in (1e-10, 1e-3):
        n_draws = q * (1 - q) / (f_q * acc) ** 2
        years = n_draws * per_draw / 3.15576e7
        report("goe", f"isf(1e-6) vs Monte Carlo to {acc:g} in x", t_isf,
               baseline=f"MC batch of {batch} GOE({D}) draws", baseline_seconds=t_batch,
               goal=f"MC needs {n_draws:.1e} draws = {years:.1e} years at {per_draw * 1e6:.0f} us/draw")

if __name__ == "__main__":
    main()
