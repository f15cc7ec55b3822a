"""Benchmarks of pdpkit.report against baselines measured in the same run.

1. ``PrivacyReport.epsilon_bound`` (data-dependent report with a released gradient) for 10^6
   targets in d = 50 against a bare-numpy floor: Cholesky of the released Hessian, one
   ``scipy.linalg.solve_triangular`` on all targets, the elementwise terms (goal: ratio <= 2);
   and against :func:`pdpkit.objpert.ex_post_pdp` on the same targets (goal: ratio <= 1.2).
2. ``privacy_report`` (adaptive, all three releases; logistic, n = 10^5, d = 50) against
   forming H = X^T diag(f'') X + lam I with numpy and its ``eigvalsh`` (goal: ratio <= 1.5).
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import scipy.linalg as sla

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from _harness import best_time, report

from pdpkit.losses import logistic
from pdpkit.objpert import ex_post_pdp, objpert_fit
from pdpkit.report import privacy_report


def _data(n: int, d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    w = rng.normal(size=d) * 3.0
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-X @ w)), 1.0, -1.0)
    return X, y


def bench_epsilon_bound(rng: np.random.Generator) -> None:
    n, d, m = 2000, 50, 10**6
    X, y = _data(n, d, rng)
    lam, sigma = 200.0, 2.0
    res = objpert_fit(X, y, logistic, lam=lam, sigma=sigma, rng=rng)
    rep = privacy_report(res, X, y, method="data-dependent", rho=0.05, sigma_hessian=1.0, sigma_gradient=1.0,
                         rng=rng)
    tx, ty = _data(m, d, rng)
    Hh, g, theta = rep.hessian_release, rep.gradient_release, rep.theta
    q = float(rep._cross_quantiles(False, m)[0])

    def floor() -> np.ndarray:
        L = np.linalg.cholesky(Hh)
        V = sla.solve_triangular(L, tx.T, lower=True, check_finite=False)
        quad = 1.5 * np.einsum("ij,ij->j", V, V)
        t = tx @ theta
        xg = tx @ g
        xx = np.einsum("ij,ij->i", tx, tx)
        u = ty * t
        e = np.exp(-np.abs(u))
        inv = 1.0 / (1.0 + e)
        d1 = -ty * np.where(u >= 0, e * inv, inv)
        d2 = e * inv * inv
        mu = np.minimum(quad, xx / lam)
        c2x = d2 * xx
        t1 = np.minimum(-np.log1p(-d2 * mu), np.log1p(c2x / np.maximum(lam, lam - c2x)))
        delta = np.abs(d1) * np.sqrt(xx)
        cross = np.minimum(sigma * q * delta, np.abs(d1 * xg) + q * delta)
        return t1 + d1 * d1 * xx / (2 * sigma**2) + cross / sigma**2

    def ours() -> np.ndarray:
        return rep.epsilon_bound(tx, ty)

    def ex_post() -> np.ndarray:
        return ex_post_pdp(res, X, y, tx, ty, member=False)

    err = float(np.max(np.abs(ours() - floor()) / np.maximum(1.0, np.abs(floor()))))
    t_floor = best_time(floor, repeat=3)
    t_ours = best_time(ours, repeat=3)
    t_ex = best_time(ex_post, repeat=3)
    report("report", "epsilon_bound 1e6 targets d=50", t_ours, baseline="bare-numpy floor (chol+trsm)",
           baseline_seconds=t_floor, goal="goal <= 2")
    report("report", "epsilon_bound 1e6 targets d=50", t_ours, baseline="objpert.ex_post_pdp (non-private)",
           baseline_seconds=t_ex, goal="goal <= 1.2")
    print(f"    max relative difference to the floor: {err:.1e}", flush=True)


def bench_privacy_report(rng: np.random.Generator) -> None:
    n, d = 10**5, 50
    X, y = _data(n, d, rng)
    lam, sigma = 50.0, 2.0
    res = objpert_fit(X, y, logistic, lam=lam, sigma=sigma, rng=rng)

    def baseline() -> np.ndarray:
        w = logistic.d2(X @ res.theta, y)
        H = (X * w[:, None]).T @ X + lam * np.eye(d)
        return np.linalg.eigvalsh(H)

    def ours():
        return privacy_report(res, X, y, method="adaptive", sigma_gradient=1.0, sigma_hessian=1.0,
                              sigma_lambda_min=1.0, rng=rng)

    ours()  # warm the tau cache (the exact GOE quantile, once per (d, rho))
    t_base = best_time(baseline, repeat=5)
    t_ours = best_time(ours, repeat=5)
    report("report", "privacy_report adaptive n=1e5 d=50", t_ours, baseline="numpy: form H + eigvalsh",
           baseline_seconds=t_base, goal="goal <= 1.5")


def main() -> None:
    rng = np.random.default_rng(20240602)
    bench_epsilon_bound(rng)
    bench_privacy_report(rng)


if __name__ == "__main__":
    main()
