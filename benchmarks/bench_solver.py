"""The solver chosen by cost against scikit-learn's lbfgs, at the same gradient target, in the same run.

Logistic loss, n = 10^5 rows in the unit ball, lam = 1, d in (50, 200, 1000), and n = 4·10^4 at d = 800. pdpkit:
``objpert_fit(..., grad_tol=1e-10)`` (the *certified* true perturbed-gradient norm <= 1e-10,
``method="auto"``: full Newton while the Hessian is cheap relative to passes over X, Newton-CG
beyond: warm-started on a sixteenth of the rows when that sixteenth has at least 10 d rows,
Hessian-vector products from cached f'' that also leave the step's margins X p behind (the next
evaluation then reads X once, for X^T f', and forms no margins), preconditioned by deflating the
directions of theta and the mean row with statistics from a sixteenth of the rows, rows read in
blocks of 1 MB (the second-level cache), its last step certified in the same pass).
A pass is one read of X; the certificate (exact split products, about
four passes' work) counts as one. Baseline: ``LogisticRegression(solver="lbfgs", C=1/lam, fit_intercept=False)`` with
its ``tol`` tightened (outside the timing) until its gradient norm, computed by us, is below
1e-10 (or 1e-13 is reached; it stops on its own function-decrease test first, far above the
target), and scipy's L-BFGS-B on the same perturbed objective with ``ftol=0`` and ``gtol`` set
so that it reaches the target. Goals: ratio <= 1.0 for d <= 200, <= 1.5 at d = 1000.
Also n = 4·10^4 at d = 800 (moderate n, large d; goal <= 1.5).
``python benchmarks/bench_solver.py 50 800@40000`` runs only the given dimensions (``d@n``).
"""

from __future__ import annotations

import pathlib
import sys
import warnings

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from _harness import best_time, report

from pdpkit import _solver
from pdpkit.losses import logistic
from pdpkit.objpert import objpert_fit

TARGET = 1e-10


def _data(n: int, d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    w = rng.normal(size=d) * 3.0
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-X @ w)), 1.0, -1.0)
    return X, y


def bench_dimension(d: int, rng: np.random.Generator, n: int = 10**5, repeat: int = 5) -> dict:
    from sklearn.linear_model import LogisticRegression

    X, y = _data(n, d, rng)
    lam, sigma = 1.0, 5.0
    b = rng.normal(0.0, sigma, size=d)

    def ours():
        return objpert_fit(X, y, logistic, lam=lam, sigma=sigma, b=b, grad_tol=TARGET)

    _solver._ROWS_READ[0] = 0
    res = ours()
    passes = _solver._ROWS_READ[0] / n

    def grad(theta: np.ndarray) -> float:
        return float(np.linalg.norm(X.T @ logistic.d1(X @ theta, y) + lam * theta))

    sk_tol = 1e-6
    while True:
        def sk(sk_tol=sk_tol):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return LogisticRegression(C=1.0 / lam, fit_intercept=False, solver="lbfgs", tol=sk_tol,
                                          max_iter=100_000).fit(X, y)
        model = sk()
        sk_grad = grad(model.coef_.ravel())
        if sk_grad <= TARGET or sk_tol <= 1e-13:
            break
        sk_tol /= 10.0
    from scipy.optimize import minimize

    def fun(theta):  # the same perturbed objective, its gradient in one pass
        z = X @ theta
        return (float(np.sum(logistic.value(z, y))) + 0.5 * lam * float(theta @ theta) + float(b @ theta),
                X.T @ logistic.d1(z, y) + lam * theta + b)

    def lb():  # scipy's L-BFGS-B driven to the same gradient target (ftol off)
        return minimize(fun, np.zeros(d), jac=True, method="L-BFGS-B",
                        options={"gtol": TARGET / np.sqrt(d), "ftol": 0.0, "maxiter": 100_000, "maxfun": 100_000})

    lb_res = lb()
    lb_grad = float(np.linalg.norm(fun(lb_res.x)[1]))
    # interleaved rounds (ours, sklearn, scipy), best of each: a load that changes during the run
    # (a shared machine) weighs on all three alike
    t_ours = t_sk = t_lb = float("inf")
    for _ in range(repeat):
        t_ours = min(t_ours, best_time(ours, repeat=1))
        t_sk = min(t_sk, best_time(sk, repeat=1))
        t_lb = min(t_lb, best_time(lb, repeat=1))
    goal = "goal <= 1.0" if d <= 200 else "goal <= 1.5"
    report("solver", f"objpert_fit logistic n={n:.0e} d={d} ({res.method})", t_ours,
           baseline=f"sklearn lbfgs tol={sk_tol:.0e}", baseline_seconds=t_sk, goal=goal)
    report("solver", "  same", t_ours, baseline="scipy L-BFGS-B to the same target", baseline_seconds=t_lb)
    print(f"    certified gradient <= {TARGET:.0e}; {passes:.1f} passes over X; {res.n_iter} Newton iterations; "
          f"sklearn lbfgs stops at gradient {sk_grad:.1e} ({int(model.n_iter_[0])} iterations); scipy L-BFGS-B "
          f"reaches {lb_grad:.1e} in {lb_res.nit} iterations", flush=True)
    return {"d": d, "method": res.method, "ours": t_ours, "lbfgs": t_sk, "lbfgsb_target": t_lb, "passes": passes}


def main(argv: list[str] | None = None) -> None:
    cases = [(int(a.partition("@")[0]), int(float(a.partition("@")[2] or 1e5))) for a in (argv or [])] \
        or [(50, 10**5), (200, 10**5), (800, 4 * 10**4), (1000, 10**5)]
    rng = np.random.default_rng(20261124)
    for d, n in cases:
        bench_dimension(d, rng, n=n)


if __name__ == "__main__":
    main(sys.argv[1:])
