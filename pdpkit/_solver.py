r"""GLM fitting internals shared by the mechanism modules (private): data checks and the exact solver.

Minimizes :math:`J(\theta; D) + b^\top\theta` for a GLM loss until the perturbed gradient's
*true* norm is certified to be at most an absolute, public tolerance τ: the float64 gradient
plus a rigorous bound on its rounding error (:func:`_certified_gradient`). A private release
then pays for the distance :math:`\le\tau/\lambda` to the exact minimizer with output noise
(:func:`pdpkit.objpert.objpert_fit`). Failure raises (``_NoConvergence``, turned into
``RuntimeError`` by :func:`_solve`) with a message that carries no number computed from the
data. Also the blocked SYRK Hessian and its Cholesky factor that the ex-post pDP and the
privacy report reuse.
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
                f"the solver did not reach its gradient tolerance in max_iter={max_iter} Newton iterations; "
                "increase max_iter, lam or grad_tol")
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
                    raise _NoConvergence("the Hessian lost positive definiteness in floating point; "
                                         "increase lam") from None
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
                    "the solver's line search stalled above its gradient tolerance (the tolerance is below "
                    "what float64 resolves for this problem); increase grad_tol or lam")
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


def _closed_form_squared(X, y, lam, b, grad_tol, theta0=None):
    n, _d = X.shape
    H = _hessian(X, np.ones(n), lam)
    cf = sla.cho_factor(H, lower=False, check_finite=False)
    theta = sla.cho_solve(cf, X.T @ y - b, check_finite=False) if theta0 is None else np.array(theta0)
    for _ in range(4):  # iterative refinement in float64
        z = X @ theta
        g = X.T @ (z - y) + lam * theta + b
        gnorm = float(np.linalg.norm(g))
        if gnorm <= grad_tol:
            return theta, z, gnorm
        theta = theta - sla.cho_solve(cf, g, check_finite=False)
    raise _NoConvergence(
        "the closed-form solution (squared loss) stayed above its gradient tolerance after iterative "
        "refinement; increase grad_tol or lam")


def _grad_scale(X: np.ndarray, y: np.ndarray, loss: GLMLoss) -> float:
    """max(1, n * max_i ||x_i|| * L~): L~ = the loss's Lipschitz constant, or max(1, max|y_i|) if unbounded.

    A *data-dependent* scale: only for non-private fits (never for a tolerance a guarantee relies on).
    """
    if X.shape[0] == 0:
        return 1.0
    lip = loss.lipschitz if math.isfinite(loss.lipschitz) else max(1.0, float(np.max(np.abs(y))))
    return max(1.0, X.shape[0] * float(np.sqrt(np.max(np.einsum("ij,ij->i", X, X)))) * lip)


# ------------------------------------------------------------ certified gradient
_U = 2.0 ** -53        # unit roundoff of float64
_CERT_CHUNK = 8192     # rows per block of the certified gradient
_LOSS_ULPS = 8.0       # assumed accuracy of a loss's f' in float64, relative
# The certified sum runs in numpy's long double: x87 extended precision on x86-64 (u = 2^-64);
# where long double is float64 its own unit roundoff enters the bound, which stays rigorous.
_U_LONG = float(np.finfo(np.longdouble).eps) / 2.0


def _gamma(k: int, u: float = _U) -> float:
    """Higham's gamma_k = k u / (1 - k u): the relative error bound of a k-term sum or dot product."""
    return k * u / (1.0 - k * u)


def _certified_gradient(X: np.ndarray, y: np.ndarray, loss: GLMLoss, lam: float, b: np.ndarray,
                        theta: np.ndarray) -> tuple[np.ndarray, float]:
    r"""The perturbed gradient :math:`\hat g \approx \nabla J(\theta; D) + b` and a rigorous bound on its error.

    Returns ``(g, err)`` with :math:`\|\hat g - (\nabla J(\theta; D) + b)\|_2 \le` ``err`` for the
    float64 vector ``theta`` as given. The margins :math:`x_i^\top\theta` are formed in long double
    and rounded to float64 (error :math:`\Delta_i \le\gamma^{\rm long}_d|x_i|^\top|\theta| + u|z_i|`,
    Higham 2002, §3.1), which moves :math:`f'`
    by at most :math:`1.01 f''_i e^{c\Delta_i}\Delta_i` for a loss with quasi-self-concordance
    constant :math:`c` (while :math:`c\Delta_i < 1`; Asi, Duchi & Talwar, Lemma 2.1) and by
    :math:`\beta\Delta_i` otherwise; :math:`f'` itself is assumed accurate to :data:`_LOSS_ULPS`
    units in the last place (relative; for the squared loss, :math:`f' = z - y` is accurate to
    :math:`2u(|z| + |y|)`); the sum over rows
    :math:`\sum_i f'_i x_i` runs in long double (error :math:`\le\gamma^{\rm long}_{k+B}\sum_i|x_{ij}||f'_i|`
    for blocks of :math:`k` rows and :math:`B` blocks), and the final additions in float64.
    Every bound is per coordinate, in absolute values, inflated by 1 % for the rounding of
    the bound itself.
    """
    n, d = X.shape
    k = _CERT_CHUNK
    acc = np.zeros(d, dtype=np.longdouble)
    A = np.zeros(d)   # sum_i |x_ij| |f'_i|
    E = np.zeros(d)   # sum_i |x_ij| * (bound on the error of f'_i: margin and evaluation)
    ath = np.abs(theta)
    th_long = theta.astype(np.longdouble)
    beta = loss.smoothness
    c_sc = loss.self_concordance
    g_long = _gamma(d, _U_LONG)
    squared = isinstance(loss, Squared)
    for s in range(0, n, k):
        Xc = X[s:s + k]
        Xl = Xc.astype(np.longdouble)
        z = (Xl @ th_long).astype(np.float64)  # the margins, accurate to long double, then rounded once
        yc = y[s:s + k]
        d1, d2 = loss._d1_d2(z, yc)
        acc += Xl.T @ d1.astype(np.longdouble)
        Ac = np.abs(Xc)
        A += Ac.T @ np.abs(d1)
        dz = g_long * (Ac @ ath) * (1.0 + 1e-3) + _U * np.abs(z)
        if math.isfinite(c_sc) and c_sc >= 0:
            curv = np.where(c_sc * dz < 1.0, np.minimum(beta, 1.01 * d2 * np.exp(np.minimum(c_sc * dz, 1.0))), beta)
        else:  # pragma: no cover - every pdpkit loss is quasi-self-concordant
            curv = beta
        ev = _LOSS_ULPS * _U * np.abs(d1)
        if squared:  # f' = z - y: the subtraction's error is relative to |z| + |y|
            ev = ev + 2.0 * _U * (np.abs(z) + np.abs(yc))
        E += Ac.T @ (curv * dz + ev)
    S = acc.astype(np.float64)
    g = S + lam * theta + b
    blocks = -(-n // k) if n else 0
    err = (_gamma(min(k, max(n, 1)) + blocks + 1, _U_LONG) * A + _U * np.abs(S) + E
           + 3.0 * _U * (np.abs(S) + np.abs(lam * theta) + np.abs(b)))
    if not (math.isfinite(beta) and np.all(np.isfinite(err))):  # pragma: no cover
        return g, math.inf
    return g, 1.01 * float(np.linalg.norm(err)) * (1.0 + _gamma(d + 1))


def _solve(X, y, loss, lam, b, grad_tol, max_iter, method, want_hessian=True, certify=True):
    r"""Minimize :math:`J(\theta; D) + b^\top\theta` until :math:`\|\nabla J + b\| \le` ``grad_tol`` (absolute).

    With ``certify`` (every private use), the bound holds for the *true* gradient at the
    returned float64 point: the computed norm plus :func:`_certified_gradient`'s rounding
    bound is at most ``grad_tol``. The iteration aims at half the tolerance, then certifies;
    if rounding alone would exceed half of it, ``RuntimeError`` asks for a larger
    ``grad_tol`` (the message holds no number computed from the data).
    """
    n, d = X.shape
    if method == "auto":
        method = "closed-form" if isinstance(loss, Squared) else ("newton" if d <= _NEWTON_MAX_D else "newton-cg")
    if method not in ("closed-form", "newton", "newton-cg"):
        raise ValueError(f"method must be 'auto', 'newton', 'newton-cg' or 'closed-form'; got {method!r}")
    if method == "closed-form" and not isinstance(loss, Squared):
        raise ValueError(f"method='closed-form' is only available for the squared loss, not {loss.name!r}")
    target = 0.5 * grad_tol if certify else grad_tol
    theta = None
    n_iter = 0
    try:
        for _attempt in range(4):
            if method == "closed-form":
                theta, _z, gnorm = _closed_form_squared(X, y, lam, b, target, theta0=theta)
                w = np.ones(n)
            else:
                theta, _z, w, gnorm, it = _newton(X, y, loss, lam, b, target, max(1, max_iter - n_iter), method,
                                                  theta0=theta)
                n_iter += it
            if not certify:
                break
            g, err = _certified_gradient(X, y, loss, lam, b, theta)
            gnorm = float(np.linalg.norm(g))
            if gnorm + err <= grad_tol:
                break
            if err >= 0.5 * grad_tol:
                raise _NoConvergence(
                    f"grad_tol={grad_tol:g} is below what float64 can certify for data of this size; "
                    "increase grad_tol (the output noise pays for it)")
            target = 0.25 * (grad_tol - err)
        else:
            raise _NoConvergence("the solver could not certify its gradient tolerance; increase grad_tol or lam")
    except _NoConvergence as exc:
        raise RuntimeError(str(exc)) from None
    chol = _chol_lower(_hessian(X, w, lam)) if want_hessian else None
    return theta, gnorm, grad_tol, n_iter, method, chol
