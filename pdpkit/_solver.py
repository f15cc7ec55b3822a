"""GLM fitting internals shared by the mechanism modules (private): data checks and the exact solver.

Minimizes :math:`J(\theta; D) + b^\top\theta` for a GLM loss to a perturbed-gradient
norm below ``tol`` times a data scale, in float64; raises (``_NoConvergence``, turned into
``RuntimeError`` by :func:`_solve`) rather than return a point above the tolerance, because
ObjPert's privacy proof needs the exact minimizer. Also the blocked SYRK Hessian and its
Cholesky factor that the ex-post pDP and the privacy report reuse.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.linalg as sla
from scipy.linalg.blas import dsyrk

from ._validation import as_finite_array, check_positive
from .losses import GLMLoss, Squared, get_loss

_EPS = np.finfo(np.float64).eps
_NEWTON_MAX_D = 1500  # above this dimension, method="auto" uses truncated Newton-CG


def _freeze(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64, copy=True)
    a.flags.writeable = False
    return a


def _check_data(X: Any, y: Any, loss: GLMLoss, *, xname: str = "X", yname: str = "y") -> tuple[np.ndarray, np.ndarray]:
    X = as_finite_array(X, xname, ndim=2)
    y_arr = np.asarray(y)
    if y_arr.ndim != 1:
        raise ValueError(f"{yname} must be one-dimensional; got shape {y_arr.shape}")
    if y_arr.shape[0] != X.shape[0]:
        raise ValueError(f"{yname} must have one label per row of {xname}: {xname} has {X.shape[0]} rows, {yname} has {y_arr.shape[0]}")
    y_arr = loss.check_labels(y_arr, yname)
    if X.shape[1] == 0:
        raise ValueError(f"{xname} must have at least one column")
    return X, y_arr


def _check_norm_bound(X: np.ndarray, norm_bound: Any, xname: str = "X") -> float:
    R = float(check_positive(norm_bound, "norm_bound"))
    if X.shape[0]:
        sq = np.einsum("ij,ij->i", X, X)
        i = int(np.argmax(sq))
        worst = float(np.sqrt(sq[i]))
        if worst > R * (1.0 + 1e-12):
            over = int(np.count_nonzero(sq > (R * (1.0 + 1e-12)) ** 2))
            raise ValueError(f"every row of {xname} must have Euclidean norm <= norm_bound={R:g}; row {i} has norm "
                             f"{worst:.12g} (the largest; {over} row(s) exceed the bound)")
    return R




def _check_general_targets(target_grad: Any, target_hessian: Any, d: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """Per-target gradients (m, d) and symmetric Hessians (m, d, d) of a smooth non-GLM loss.

    A single target may be given as (d,) and (d, d); the third value says so. ``ValueError``
    names the parameter for a bad shape or an asymmetric Hessian.
    """
    g = as_finite_array(target_grad, "target_grad")
    G = as_finite_array(target_hessian, "target_hessian")
    scalar = g.ndim == 1
    if scalar:
        g = g[None, :]
        if G.ndim == 2:
            G = G[None]
    if g.ndim != 2 or g.shape[1] != d:
        raise ValueError(f"target_grad must have shape (m, {d}) or ({d},); got {np.shape(target_grad)}")
    m = g.shape[0]
    if G.shape != (m, d, d):
        raise ValueError(f"target_hessian must have shape ({m}, {d}, {d}); got {np.shape(target_hessian)}")
    scale = 1.0 + (float(np.max(np.abs(G))) if G.size else 0.0)
    if np.max(np.abs(G - np.swapaxes(G, -1, -2)), initial=0.0) > 1e-10 * scale:
        raise ValueError("target_hessian must be symmetric")
    return g, G, scalar


def _check_loss(loss: Any) -> GLMLoss:
    try:
        return get_loss(loss)
    except (TypeError, ValueError) as exc:
        raise type(exc)(str(exc)) from None


_HESS_BLOCK = 2048  # rows per SYRK block: the scaled block stays in cache


def _hessian(X: np.ndarray, w: np.ndarray, lam: float, scale: float = 1.0) -> np.ndarray:
    """Upper triangle of scale * X^T diag(w) X + lam I (w >= 0): blocked SYRK, no n-by-d temporary."""
    n, d = X.shape
    H = np.zeros((d, d), order="F")
    if n:
        sw = np.sqrt(w * scale)
        buf = np.empty((min(_HESS_BLOCK, n), d))
        for s in range(0, n, _HESS_BLOCK):
            Xc = X[s:s + _HESS_BLOCK]
            Bc = buf[:Xc.shape[0]]
            np.multiply(Xc, sw[s:s + _HESS_BLOCK, None], out=Bc)
            # Bc.T is F-contiguous (d, k): SYRK accumulates Bc.T @ Bc without a transposed copy.
            H = dsyrk(1.0, Bc.T, beta=1.0, c=H, trans=0, lower=0, overwrite_c=1)
    H[np.diag_indices(d)] += lam
    return H


def _objective(loss: GLMLoss, z: np.ndarray, y: np.ndarray, theta: np.ndarray, lam: float, b: np.ndarray,
               weight: float = 1.0) -> tuple[float, float]:
    """Objective value and the sum of the magnitudes of its terms (its rounding scale)."""
    vals = weight * float(np.sum(loss._value(z, y)))
    reg = 0.5 * lam * float(theta @ theta)
    lin = float(b @ theta)
    F = vals + reg + lin
    scale = abs(vals) + abs(reg) + abs(lin) + 1.0  # the losses are >= 0
    return F, scale


def _chol_lower(H_upper: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor from an (upper-triangle-valid) SPD matrix."""
    U = sla.cholesky(H_upper, lower=False, check_finite=False)
    return np.ascontiguousarray(U.T)


# Large-n shortcuts (see _newton): a random 1/_SUB_FRACTION of the rows is used for a warm
# start and for far-region Hessians when it still has >= _SUB_MIN_ROWS_PER_DIM * d rows.
_SUB_FRACTION = 16
_SUB_MIN_ROWS_PER_DIM = 10
_SUB_SWITCH = 0.5    # leave the sub-sampled-Hessian phase once c * t * max|x_i^T p| < this
_CHORD_DRIFT = 0.05  # keep a factorization while the margins have moved by less than this / c


class _NoConvergence(RuntimeError):
    pass


def _newton(X, y, loss, lam, b, grad_tol, max_iter, method, *, weight=1.0, theta0=None, warm_move=None):
    r"""Damped Newton with backtracking (Armijo) on :math:`w\sum_i f(x_i^\top\theta; y_i) + \frac\lambda2\|\theta\|^2 + b^\top\theta`.

    ``method="newton"``: each step solves the Newton system with a Cholesky factorization.
    Three cost-saving rules leave the fixed point and the stopping test (the float64 gradient
    on all the data) untouched:

    * for large :math:`n` the iteration is warm-started at the minimizer of the same objective
      on a fixed random sixteenth of the rows (loss weighted by 16), itself computed this way;
    * far from the minimizer (while a step moves some margin :math:`x_i^\top\theta` by more
      than :math:`0.5/c`, :math:`c` the loss's self-concordance constant) the Hessian is
      estimated on that sixteenth: there the step is limited by the nonlinearity, not by the
      Hessian's accuracy. A damped step or a poor gradient reduction switches to the exact
      Hessian for good;
    * near the minimizer a factorization is reused while the margins have moved by less than
      :math:`0.05/c` since it was computed (the Hessian has then changed by less than about 5%,
      by quasi-self-concordance, Asi, Duchi & Talwar, Lemma 2.1 (i)).

    ``method="newton-cg"``: truncated conjugate gradients with exact Hessian-vector products.
    With ``warm_move`` set (warm-start use), the iteration stops as soon as a full step moves
    no margin by more than ``warm_move / c``, instead of at ``grad_tol``.
    """
    n, d = X.shape
    c = loss.self_concordance if math.isfinite(loss.self_concordance) else math.inf
    m_sub = n // _SUB_FRACTION
    use_sub = method == "newton" and m_sub >= _SUB_MIN_ROWS_PER_DIM * d and 0 < c < math.inf
    if use_sub:
        idx = np.sort(np.random.default_rng(0x5EED).choice(n, m_sub, replace=False))
        X_sub = X[idx]
    if theta0 is None and use_sub:
        try:
            theta0 = _newton(X_sub, y[idx], loss, lam, b, 0.0, 50, method, weight=weight * n / m_sub,
                             warm_move=_CHORD_DRIFT)[0]
        except _NoConvergence:  # pragma: no cover - a warm start is optional
            theta0 = None
    theta = np.zeros(d) if theta0 is None else theta0
    z = X @ theta
    d1, d2 = loss._d1_d2(z, y)
    g = weight * (X.T @ d1) + lam * theta + b
    gnorm = float(np.linalg.norm(g))
    F, Fscale = _objective(loss, z, y, theta, lam, b, weight)
    n_iter = 0
    sub = use_sub
    factor = None
    drift = math.inf
    while gnorm > grad_tol:
        if n_iter >= max_iter:
            raise _NoConvergence(
                f"objpert_fit did not converge: perturbed-gradient norm {gnorm:.3e} > tolerance {grad_tol:.3e} "
                f"after max_iter={max_iter} Newton iterations; increase max_iter or tol")
        n_iter += 1
        if method == "newton":
            if sub:
                factor = sla.cho_factor(_hessian(X_sub, d2[idx], lam, weight * n / m_sub), lower=False,
                                        check_finite=False)
                drift = math.inf  # a sub-sampled Hessian: refactor next time
            elif factor is None or drift > _CHORD_DRIFT:
                try:
                    factor = sla.cho_factor(_hessian(X, d2, lam, weight), lower=False, check_finite=False)
                except np.linalg.LinAlgError:  # pragma: no cover - H >= lam I in exact arithmetic
                    raise _NoConvergence("the Hessian lost positive definiteness in floating point; increase lam") from None
                drift = 0.0  # an exact Hessian; otherwise reuse the factorization (chord step)
            p = -sla.cho_solve(factor, g, check_finite=False)
        else:
            p = _cg_direction(X, weight * d2, lam, g)
        Xp = X @ p
        gtp = float(g @ p)
        if not gtp < 0:  # pragma: no cover - p is a descent direction for any SPD model
            p, Xp, gtp = -g, X @ -g, -gnorm * gnorm
            factor, drift = None, math.inf
        step = 1.0
        while True:
            th_new = theta + step * p
            z_new = z + step * Xp
            F_new, Fscale_new = _objective(loss, z_new, y, th_new, lam, b, weight)
            # Armijo; when the predicted decrease is below the objective's rounding error the
            # comparison is meaningless and the full Newton step is taken.
            if F_new <= F + 1e-4 * step * gtp or (step == 1.0 and -gtp <= 64 * _EPS * Fscale):
                break
            step *= 0.5
            if step < 1e-12:
                raise _NoConvergence(
                    f"objpert_fit: line search failed at perturbed-gradient norm {gnorm:.3e} (tolerance "
                    f"{grad_tol:.3e}); the tolerance is probably below the gradient's rounding floor: increase tol")
        theta, z, F, Fscale = th_new, z_new, F_new, Fscale_new
        d1, d2 = loss._d1_d2(z, y)
        g = weight * (X.T @ d1) + lam * theta + b
        gnorm_new = float(np.linalg.norm(g))
        move = c * step * float(np.max(np.abs(Xp))) if n else 0.0
        ratio = gnorm_new / gnorm if gnorm > 0 else 0.0
        gnorm = gnorm_new
        if warm_move is not None and step == 1.0 and move < warm_move:
            break
        if sub and (step < 1.0 or ratio > 0.5 or move < _SUB_SWITCH):
            sub = False
        if not sub:
            drift += move
            if step < 1.0 or ratio > 0.25:
                drift = math.inf  # refresh the factorization at the next step
    return theta, z, d2, gnorm, n_iter


def _cg_direction(X, w, lam, g, max_cg=None):
    """Truncated conjugate gradients on H p = -g with H v = X^T (w * (X v)) + lam v."""
    d = g.shape[0]
    gnorm = float(np.linalg.norm(g))
    forcing = min(0.5, math.sqrt(gnorm)) * gnorm
    max_cg = max_cg or min(d, 500)
    p = np.zeros(d)
    r = -g.copy()
    s = r.copy()
    rr = float(r @ r)
    for _ in range(max_cg):
        Hs = X.T @ (w * (X @ s)) + lam * s
        alpha = rr / float(s @ Hs)
        p += alpha * s
        r -= alpha * Hs
        rr_new = float(r @ r)
        if math.sqrt(rr_new) <= forcing:
            break
        s = r + (rr_new / rr) * s
        rr = rr_new
    return p


def _closed_form_squared(X, y, lam, b, grad_tol):
    n, _d = X.shape
    H = _hessian(X, np.ones(n), lam)
    cf = sla.cho_factor(H, lower=False, check_finite=False)
    rhs = X.T @ y - b
    theta = sla.cho_solve(cf, rhs, check_finite=False)
    for _ in range(3):  # iterative refinement in float64
        z = X @ theta
        g = X.T @ (z - y) + lam * theta + b
        gnorm = float(np.linalg.norm(g))
        if gnorm <= grad_tol:
            break
        theta = theta - sla.cho_solve(cf, g, check_finite=False)
    z = X @ theta
    g = X.T @ (z - y) + lam * theta + b
    gnorm = float(np.linalg.norm(g))
    if gnorm > grad_tol:
        raise RuntimeError(
            f"objpert_fit (squared loss, closed form): perturbed-gradient norm {gnorm:.3e} > tolerance {grad_tol:.3e} "
            "after iterative refinement; the residuals are too large for this tolerance: increase tol")
    return theta, z, gnorm


def _grad_scale(X: np.ndarray, y: np.ndarray, loss: GLMLoss) -> float:
    """max(1, n * max_i ||x_i|| * L~): L~ = the loss's Lipschitz constant, or max(1, max|y_i|) if unbounded."""
    if X.shape[0] == 0:
        return 1.0
    lip = loss.lipschitz if math.isfinite(loss.lipschitz) else max(1.0, float(np.max(np.abs(y))))
    return max(1.0, X.shape[0] * float(np.sqrt(np.max(np.einsum("ij,ij->i", X, X)))) * lip)


def _solve(X, y, loss, lam, b, tol, max_iter, method, want_hessian=True):
    """Minimize J(theta; D) + b^T theta to ||grad|| <= tol * scale; return the pieces."""
    n, d = X.shape
    grad_tol = tol * _grad_scale(X, y, loss)
    if method == "auto":
        method = "closed-form" if isinstance(loss, Squared) else ("newton" if d <= _NEWTON_MAX_D else "newton-cg")
    if method == "closed-form":
        if not isinstance(loss, Squared):
            raise ValueError(f"method='closed-form' is only available for the squared loss, not {loss.name!r}")
        theta, _z, gnorm = _closed_form_squared(X, y, lam, b, grad_tol)
        n_iter = 0
        w = np.ones(n)
    elif method in ("newton", "newton-cg"):
        try:
            theta, _z, w, gnorm, n_iter = _newton(X, y, loss, lam, b, grad_tol, max_iter, method)
        except _NoConvergence as exc:
            raise RuntimeError(str(exc)) from None
    else:
        raise ValueError(f"method must be 'auto', 'newton', 'newton-cg' or 'closed-form'; got {method!r}")
    chol = _chol_lower(_hessian(X, w, lam)) if want_hessian else None
    return theta, gnorm, grad_tol, n_iter, method, chol


