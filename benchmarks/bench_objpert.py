"""Benchmarks of pdpkit.objpert against baselines measured in the same run.

1. ``ex_post_pdp`` for 10^6 targets in d = 50 against a bare-numpy floor: one Cholesky of
   H, one ``scipy.linalg.solve_triangular`` on all targets at once, and the elementwise
   terms (goal: ratio <= 2).
2. ``objpert_fit`` (logistic, n = 10^5, d = 50) to perturbed-gradient norm <= 1e-9 n against
   scikit-learn's ``LogisticRegression(solver="lbfgs")`` (C = 1/lam, no intercept) reaching
   the same gradient norm on the same data (goal: ratio <= 1). The sklearn tolerance is
   tightened until its solution's gradient norm is verified to be below the target. An
   informational second run uses strongly correlated features, where lbfgs struggles.
"""

from __future__ import annotations

import pathlib
import sys
import warnings

import numpy as np
import scipy.linalg as sla

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from _harness import best_time, report

from pdpkit.losses import logistic
from pdpkit.objpert import DEFAULT_GRAD_TOL, ex_post_pdp, objpert_fit


def _data(n: int, d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    w = rng.normal(size=d) * 3.0
    p = 1.0 / (1.0 + np.exp(-X @ w))
    y = np.where(rng.random(n) < p, 1.0, -1.0)
    return X, y


def _floor(L: np.ndarray, theta: np.ndarray, b: np.ndarray, sigma: float, tx: np.ndarray, ty: np.ndarray,
           member: bool) -> np.ndarray:
    """Bare-numpy floor: one triangular solve on all targets plus the elementwise terms."""
    V = sla.solve_triangular(L, tx.T, lower=True, check_finite=False)
    quad = np.einsum("ij,ij->j", V, V)
    t = tx @ theta
    xb = tx @ b
    xx = np.einsum("ij,ij->i", tx, tx)
    u = ty * t
    e = np.exp(-np.abs(u))
    inv = 1.0 / (1.0 + e)
    d1 = -ty * np.where(u >= 0, e * inv, inv)
    d2 = e * inv * inv
    sgn = -1.0 if member else 1.0
    s2 = sigma * sigma
    return np.abs(-np.log1p(sgn * d2 * quad) + d1 * d1 * xx / (2 * s2) - sgn * d1 * xb / s2)


def bench_ex_post(rng: np.random.Generator) -> None:
    n, d, m = 2000, 50, 10**6
    X, y = _data(n, d, rng)
    lam, sigma = 5.0, 2.0
    res = objpert_fit(X, y, logistic, lam=lam, sigma=sigma, rng=rng)
    tx, ty = _data(m, d, rng)
    # the floor's inputs: H at theta and b = -grad J, computed once outside the timing except the Cholesky
    z = X @ res.theta
    w = logistic.d2(z, y)
    H = (X * w[:, None]).T @ X + lam * np.eye(d)
    b = -(X.T @ logistic.d1(z, y) + lam * res.theta)

    def floor() -> np.ndarray:
        L = np.linalg.cholesky(H)
        return _floor(L, res.theta, b, sigma, tx, ty, False)

    def ours() -> np.ndarray:
        # res was fitted without keep_hessian: H is formed and factored inside the timing, like the floor
        return ex_post_pdp(res, X, y, tx, ty, member=False)

    err = float(np.max(np.abs(ours() - floor()) / np.maximum(1.0, np.abs(floor()))))
    t_floor = best_time(floor, repeat=3)
    t_ours = best_time(ours, repeat=3)
    report("objpert", "ex_post_pdp 1e6 targets d=50", t_ours, baseline="bare-numpy floor (chol+trsm)",
           baseline_seconds=t_floor, goal="goal <= 2")
    print(f"    max relative difference to the floor: {err:.1e}", flush=True)


def _correlated(n: int, d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Equicorrelated (0.9) features on scales 0.1..1, rows scaled into the unit ball."""
    C = 0.9 * np.ones((d, d)) + 0.1 * np.eye(d)
    X = rng.normal(size=(n, d)) @ np.linalg.cholesky(C).T * np.logspace(-1, 0, d)
    X /= np.max(np.linalg.norm(X, axis=1))
    w = rng.normal(size=d) * 25.0
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-X @ w)), 1.0, -1.0)
    return X, y


def bench_fit(rng: np.random.Generator, *, correlated: bool = False) -> None:
    from sklearn.linear_model import LogisticRegression

    n, d = 10**5, 50
    X, y = _correlated(n, d, rng) if correlated else _data(n, d, rng)
    lam, sigma = 1.0, 5.0
    # ObjPert's public tolerance, certified in float64 (true gradient norm <= tau), and the same
    # target for lbfgs (its computed gradient norm)
    target = DEFAULT_GRAD_TOL
    b = rng.normal(0.0, sigma, size=d)

    def ours():
        return objpert_fit(X, y, logistic, lam=lam, sigma=sigma, b=b)

    res = ours()

    def grad_J(theta: np.ndarray, lin: np.ndarray) -> float:
        return float(np.linalg.norm(X.T @ logistic.d1(X @ theta, y) + lam * theta + lin))

    sk_tol = 1e-6
    label = "correlated features" if correlated else "isotropic features"
    while True:
        def sk(sk_tol=sk_tol):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return LogisticRegression(C=1.0 / lam, fit_intercept=False, solver="lbfgs", tol=sk_tol,
                                          max_iter=10_000).fit(X, y)
        model = sk()
        sk_grad = grad_J(model.coef_.ravel(), np.zeros(d))
        if sk_grad <= target or sk_tol < 1e-12:
            break
        sk_tol /= 10.0

    def ours_with_hessian():
        return objpert_fit(X, y, logistic, lam=lam, sigma=sigma, b=b, keep_hessian=True)

    t_ours = best_time(ours, repeat=5)
    t_sk = best_time(sk, repeat=5)
    t_ours_h = best_time(ours_with_hessian, repeat=5)
    if correlated:
        report("objpert", "objpert_fit, correlated features (info)", t_ours,
               baseline=f"sklearn lbfgs tol={sk_tol:.0e}", baseline_seconds=t_sk)
    else:
        report("objpert", "objpert_fit logistic n=1e5 d=50 (certified grad<=1e-8)", t_ours,
               baseline=f"sklearn lbfgs tol={sk_tol:.0e}", baseline_seconds=t_sk, goal="goal <= 1")
        report("objpert", "  same, keep_hessian=True (+ exact H factor)", t_ours_h,
               baseline=f"sklearn lbfgs tol={sk_tol:.0e}", baseline_seconds=t_sk)
    print(f"    {label}: gradient norms objpert_fit {res.grad_norm:.2e} ({res.n_iter} Newton its), "
          f"sklearn {sk_grad:.2e} ({int(model.n_iter_[0])} lbfgs its); target {target:.1e}", flush=True)
    if sk_grad > target:
        print("    note: sklearn's lbfgs did not reach the target gradient norm at any tol tried "
              "(it stops on its own criteria first); its time is for the tightest tol", flush=True)


def main() -> None:
    rng = np.random.default_rng(20240601)
    bench_ex_post(rng)
    bench_fit(rng)
    bench_fit(rng, correlated=True)


if __name__ == "__main__":
    main()
