r"""Output perturbation: a regularized minimizer plus Gaussian noise, and its sensitivities.

The baseline that objective perturbation is measured against (lecture notes on
objective perturbation; Chaudhuri, Monteleoni & Sarwate 2011) and the mechanism of
Wang (2019), Figure 1:

* :func:`output_perturbation_sensitivity`, :func:`output_perturbation_fit` — release
  :math:`\hat\theta + \mathcal N(0, \sigma^2 I_d)` for a GLM loss with
  :math:`\ell_2` sensitivity :math:`L R/\lambda` (add/remove neighbours, rows
  :math:`\|x_i\| \le R`) and the tight analytic Gaussian :math:`\sigma`;
* ridge regression's exact per-instance sensitivities (removal of each member, addition
  of a target), the "pDP for all" search and a global-sensitivity bound
  (Wang 2019, §3 and Figure 1). These are functions of the data: not private.

Chapters: "Per-instance differential privacy" (ridge) and "Output vs objective
perturbation".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
import scipy.linalg as sla

from ._solver import _check_data, _check_loss, _check_norm_bound, _freeze, _grad_scale, _solve
from ._validation import as_finite_array, as_generator, check_int_at_least, check_positive, check_probability
from .gaussian import gaussian_sigma
from .losses import GLMLoss

__all__ = [
    "OutputPerturbationResult",
    "output_perturbation_sensitivity",
    "output_perturbation_fit",
    "ridge_fit_nonprivate",
    "ridge_removal_sensitivity_nonprivate",
    "ridge_addition_sensitivity_nonprivate",
    "ridge_pdp_for_all_nonprivate",
    "ridge_global_sensitivity_bound",
]


@dataclass(frozen=True, eq=False)
class OutputPerturbationResult:
    r"""Output of :func:`output_perturbation_fit`.

    Attributes
    ----------
    theta : numpy.ndarray
        The released :math:`\hat\theta + \mathcal N(0, \sigma^2 I_d)`.
    sigma : float
        Gaussian noise scale (tight analytic Gaussian calibration).
    sensitivity : float
        The :math:`\ell_2` sensitivity used (see :func:`output_perturbation_sensitivity`).
    eps, delta : float
        The :math:`(\epsilon, \delta)`-DP guarantee (add/remove neighbours).
    lam : float
        Regularization.
    loss : GLMLoss
        The loss.
    norm_bound : float
        The bound :math:`R` on :math:`\|x_i\|_2` that was checked and used.
    """

    theta: np.ndarray
    sigma: float
    sensitivity: float
    eps: float
    delta: float
    lam: float
    loss: GLMLoss
    norm_bound: float


def output_perturbation_sensitivity(loss: str | GLMLoss, *, lam: float, norm_bound: float = 1.0,
                                    tol: float = 0.0) -> float:
    r""":math:`\ell_2` sensitivity of the regularized ERM minimizer under add/remove neighbours.

    For :math:`J(\theta; D) = \sum_i f(x_i^\top\theta; y_i) + \frac\lambda2\|\theta\|^2` with
    :math:`|f'| \le L` and :math:`\|x\| \le R`, :math:`J` is :math:`\lambda`-strongly convex and the
    added loss :math:`\ell` is :math:`LR`-Lipschitz; adding the two strong-convexity
    inequalities at the minimizers :math:`\theta^*, \tilde\theta^*` of neighbouring data sets gives

    .. math::

       \lambda\|\theta^* - \tilde\theta^*\|^2 \le \ell(\theta^*) - \ell(\tilde\theta^*)
       \le LR\,\|\theta^* - \tilde\theta^*\|
       \quad\Longrightarrow\quad \|\theta^* - \tilde\theta^*\| \le \frac{LR}{\lambda}.

    (The lecture notes write :math:`L\|\theta^* - \tilde\theta^*\|^2` on the right and conclude
    :math:`\|\theta^* - \tilde\theta^*\|^2 \le L/\lambda`: the Lipschitz bound is linear in the
    distance, and the conclusion is on the norm, not its square.) A solver that stops at
    gradient norm :math:`\tau = \text{tol}\cdot LR` is within :math:`\tau/\lambda` of the exact
    minimizer on each data set, so the returned sensitivity is :math:`LR(1 + 2\,\text{tol})/\lambda`.

    Parameters
    ----------
    loss : str | GLMLoss
        The GLM loss: a :class:`pdpkit.losses.GLMLoss` or its name (``"logistic"``, ``"squared"``, ``"robust_log"``, ``"huber"``).
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    norm_bound : float, default 1.0
        Public bound R on the Euclidean norm of every feature row.
    tol : float, default 0.0
        Relative gradient tolerance of the solver; the bound adds the distance it allows to the minimizer.
    """
    loss = _check_loss(loss)
    lam = float(check_positive(lam, "lam"))
    R = float(check_positive(norm_bound, "norm_bound"))
    tol = float(as_finite_array(tol, "tol"))
    if tol < 0:
        raise ValueError(f"tol must be >= 0; got {tol!r}")
    if not math.isfinite(loss.lipschitz):
        raise ValueError(f"loss {loss.name!r} has an unbounded gradient (lipschitz = inf): output perturbation has no "
                         "finite sensitivity; use a loss with bounded f'")
    return loss.lipschitz * R * (1.0 + 2.0 * tol) / lam


def output_perturbation_fit(X: ArrayLike, y: ArrayLike, loss: str | GLMLoss, eps: float, delta: float, *, lam: float,
                            rng: int | np.random.Generator | None = None, norm_bound: float = 1.0,
                            tol: float = 1e-10) -> OutputPerturbationResult:
    r"""Gaussian output perturbation of the regularized ERM minimizer, :math:`(\epsilon, \delta)`-DP.

    Releases :math:`\hat\theta + \mathcal N(0, \sigma^2 I_d)` where :math:`\hat\theta` minimizes
    :math:`J(\theta; D)` to absolute gradient norm :math:`\text{tol}\cdot LR` (data-independent)
    and :math:`\sigma` = ``pdpkit.gaussian.gaussian_sigma(eps, delta, sensitivity=...)`` (tight
    analytic Gaussian mechanism, Balle & Wang 2018) with the sensitivity of
    :func:`output_perturbation_sensitivity` (lecture notes on objective perturbation, output
    perturbation, with the :math:`\|\cdot\|^2` slip corrected). Add/remove neighbours.

    Raises ``ValueError`` if a row of ``X`` has norm above ``norm_bound`` (the sensitivity
    would not hold), if the loss has an unbounded gradient, or for invalid parameters;
    ``RuntimeError`` if the solver cannot reach the tolerance.

    Parameters
    ----------
    X : array_like
        Feature rows, shape (n, d).
    y : array_like
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    loss : str | GLMLoss
        The GLM loss: a :class:`pdpkit.losses.GLMLoss` or its name (``"logistic"``, ``"squared"``, ``"robust_log"``, ``"huber"``).
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    norm_bound : float, default 1.0
        Public bound R on the Euclidean norm of every feature row.
    tol : float, default 1e-10
        Relative gradient tolerance: the solver stops at gradient norm ``tol``·LR (data-independent).
    """
    loss = _check_loss(loss)
    X, y = _check_data(X, y, loss)
    lam = float(check_positive(lam, "lam"))
    eps = float(check_positive(eps, "eps"))
    delta = float(check_probability(delta, "delta"))
    tol = float(check_positive(tol, "tol"))
    R = _check_norm_bound(X, norm_bound)
    sens = output_perturbation_sensitivity(loss, lam=lam, norm_bound=R, tol=tol)

    sigma = float(gaussian_sigma(eps, delta, sensitivity=sens))
    rng = as_generator(rng)
    abs_tol = tol * loss.lipschitz * R  # public: the sensitivity above pays for it
    # the true gradient norm at the returned point is certified <= abs_tol (rounding included)
    theta_hat, *_ = _solve(X, y, loss, lam, np.zeros(X.shape[1]), abs_tol, 200, "auto", want_hessian=False)
    theta = theta_hat + rng.normal(0.0, sigma, size=X.shape[1])
    return OutputPerturbationResult(theta=_freeze(theta), sigma=sigma, sensitivity=sens, eps=eps, delta=delta,
                                    lam=lam, loss=loss, norm_bound=R)


# ----------------------------------------------------------------------------- ridge
def _ridge_parts(X, y, lam: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    X = as_finite_array(X, "X", ndim=2)
    y = as_finite_array(y, "y", ndim=1)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X and y must have the same number of rows; got {X.shape[0]} and {y.shape[0]}")
    lam = float(check_positive(lam, "lam"))
    H = X.T @ X + lam * np.eye(X.shape[1])
    chol = sla.cho_factor(H, lower=True, check_finite=False)
    theta = sla.cho_solve(chol, X.T @ y, check_finite=False)
    return X, y, np.asarray(chol[0]), theta


def ridge_fit_nonprivate(X: ArrayLike, y: ArrayLike, *, lam: float = 1.0) -> np.ndarray:
    r"""Ridge regression :math:`\hat\theta = (X^\top X + \lambda I)^{-1}X^\top y` (not private).

    Parameters
    ----------
    X : array_like
        Feature rows, shape (n, d).
    y : array_like
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    lam : float, default 1.0
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    """
    return _ridge_parts(X, y, lam)[3]


def ridge_removal_sensitivity_nonprivate(X: ArrayLike, y: ArrayLike, *, lam: float = 1.0) -> np.ndarray:
    r"""Per-instance sensitivity :math:`\lVert\hat\theta(D) - \hat\theta(D_{-i})\rVert` of every member.

    Exact leave-one-out identity for ridge regression (Sherman–Morrison; Wang 2019,
    Lemma 3.1 specialised to squared loss): with :math:`H = X^\top X + \lambda I`,
    residual :math:`r_i = y_i - x_i^\top\hat\theta` and leverage
    :math:`h_i = x_i^\top H^{-1}x_i`,

    .. math:: \hat\theta(D) - \hat\theta(D_{-i}) = \frac{r_i}{1 - h_i} H^{-1}x_i .

    One Cholesky of H and one triangular solve for all n members. Data-dependent,
    **not private**.

    Parameters
    ----------
    X : array_like
        Feature rows, shape (n, d).
    y : array_like
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    lam : float, default 1.0
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    """
    X, y, L, theta = _ridge_parts(X, y, lam)
    r = y - X @ theta
    W = sla.solve_triangular(L, X.T, lower=True, check_finite=False)  # L^{-1} x_i
    h = np.einsum("ij,ij->j", W, W)
    V = sla.solve_triangular(L.T, W, lower=False, check_finite=False)  # H^{-1} x_i
    return np.abs(r) * np.sqrt(np.einsum("ij,ij->j", V, V)) / (1.0 - h)


def ridge_addition_sensitivity_nonprivate(X: ArrayLike, y: ArrayLike, target_x: ArrayLike, target_y: ArrayLike, *,
                                          lam: float = 1.0) -> np.ndarray:
    r"""Per-instance sensitivity :math:`\lVert\hat\theta(D \cup \{z\}) - \hat\theta(D)\rVert` of targets z ∉ D.

    :math:`\hat\theta(D\cup\{z\}) - \hat\theta(D) = \frac{y - x^\top\hat\theta}{1 + x^\top H^{-1}x}H^{-1}x`.
    Vectorized over targets (``target_x`` shape (m, d)). **Not private.**

    Parameters
    ----------
    X : array_like
        Feature rows, shape (n, d).
    y : array_like
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    target_x : array_like
        Features x of the target record z.
    target_y : array_like
        Label y of the target record z.
    lam : float, default 1.0
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    """
    X, y, L, theta = _ridge_parts(X, y, lam)
    tx = np.atleast_2d(as_finite_array(target_x, "target_x"))
    ty = np.atleast_1d(as_finite_array(target_y, "target_y"))
    if tx.shape[1] != X.shape[1] or tx.shape[0] != ty.shape[0]:
        raise ValueError(f"target_x must be (m, {X.shape[1]}) and target_y (m,); got {tx.shape} and {ty.shape}")
    r = ty - tx @ theta
    W = sla.solve_triangular(L, tx.T, lower=True, check_finite=False)
    h = np.einsum("ij,ij->j", W, W)
    V = sla.solve_triangular(L.T, W, lower=False, check_finite=False)
    return np.abs(r) * np.sqrt(np.einsum("ij,ij->j", V, V)) / (1.0 + h)


def ridge_pdp_for_all_nonprivate(X: ArrayLike, y: ArrayLike, *, lam: float = 1.0, y_bound: float = 1.0,
                                 n_starts: int = 64,
                                 rng: np.random.Generator | None = None) -> float:
    r"""Largest per-instance sensitivity over the whole domain ("pDP for all", Wang 2019 §2.2).

    :math:`\sup_{\lVert x\rVert \le 1, |y| \le B} \lVert\hat\theta(D\cup\{z\}) - \hat\theta(D)\rVert`
    together with the members' removal sensitivities. For fixed x the supremum over y
    is at :math:`y = -B\,\mathrm{sign}(x^\top\hat\theta)`, giving
    :math:`(B + |x^\top\hat\theta|)\lVert H^{-1}x\rVert / (1 + x^\top H^{-1}x)`,
    which grows along rays, so the sup is on the unit sphere; it is maximized by
    projected gradient ascent from ``n_starts`` starts (the eigenvectors of H and
    random directions). Returns a value within the optimizer's tolerance of the
    true supremum (a lower bound on it that is tight in our tests). **Not private.**

    Parameters
    ----------
    X : array_like
        Feature rows, shape (n, d).
    y : array_like
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    lam : float, default 1.0
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    y_bound : float, default 1.0
        Public bound on the absolute value :math:`|y|` of the labels.
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    n_starts : int, default 64
        Number of starting points of the projected gradient ascent.
    """
    X, y, L, theta = _ridge_parts(X, y, lam)
    d = X.shape[1]
    rng = as_generator(rng)
    H = L @ L.T
    Hinv = sla.cho_solve((L, True), np.eye(d), check_finite=False)
    starts = np.concatenate([np.linalg.eigh(H)[1].T, -np.linalg.eigh(H)[1].T,
                             rng.standard_normal((n_starts, d))])
    U = starts / np.linalg.norm(starts, axis=1, keepdims=True)

    def value_and_grad(U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a = U @ theta
        s = np.sign(a)
        V = U @ Hinv
        q = np.einsum("ij,ij->i", U, V)
        V2 = V @ Hinv
        nrm = np.sqrt(np.einsum("ij,ij->i", V, V))
        num = (y_bound + np.abs(a)) * nrm
        val = num / (1.0 + q)
        g_num = s[:, None] * theta[None, :] * nrm[:, None] + (y_bound + np.abs(a))[:, None] * V2 / nrm[:, None]
        grad = g_num / (1.0 + q)[:, None] - (val / (1.0 + q))[:, None] * 2.0 * V
        return val, grad

    step = 0.5
    val, grad = value_and_grad(U)
    for _ in range(500):
        G = grad - np.einsum("ij,ij->i", grad, U)[:, None] * U
        cand = U + step * G
        cand /= np.linalg.norm(cand, axis=1, keepdims=True)
        new_val, new_grad = value_and_grad(cand)
        better = new_val >= val
        U = np.where(better[:, None], cand, U)
        val = np.where(better, new_val, val)
        grad = np.where(better[:, None], new_grad, grad)
        if not np.any(better):
            step *= 0.5
            if step < 1e-10:
                break
    members = ridge_removal_sensitivity_nonprivate(X, y, lam=lam)
    return float(max(val.max(), members.max()))


def ridge_global_sensitivity_bound(n: int, *, lam: float = 1.0, y_bound: float = 1.0) -> float:
    r"""Upper bound on the global L2 sensitivity of ridge regression on bounded data.

    Data sets of at most n records with :math:`\lVert x_i\rVert \le 1`, :math:`|y_i| \le B`,
    ridge parameter λ. Adding z = (x, y) to D (removal is the same statement for
    :math:`D_{-z}`) moves the estimate by (Sherman–Morrison)
    :math:`\frac{|y - a|}{1 + q}\lVert H^{-1}x\rVert` with :math:`H = X^\top X + \lambda I`,
    :math:`q = x^\top H^{-1}x \le 1/\lambda` and :math:`a = x^\top\hat\theta`. Two
    Cauchy–Schwarz steps give :math:`\lVert H^{-1}x\rVert \le \sqrt{q/\lambda}` and
    :math:`|a| = |x^\top H^{-1}X^\top y| \le \sqrt{q}\,\lVert y\rVert \le B\sqrt{qn}` (as
    :math:`XH^{-1}X^\top \preceq I`). So the sensitivity is at most
    :math:`g(s) = B\,(s + \sqrt n\,s^2)/(\sqrt\lambda\,(1 + s^2))` with :math:`s = \sqrt q`,
    which increases up to :math:`s^* = \sqrt n + \sqrt{n+1}`; we return
    :math:`g(\min(s^*, \lambda^{-1/2}))`. This drives the worst-case DP ε of output
    perturbation in Wang 2019, Figure 1; it is an upper bound on the true worst case.

    Parameters
    ----------
    n : int
        Number of records n.
    lam : float, default 1.0
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    y_bound : float, default 1.0
        Public bound on the absolute value :math:`|y|` of the labels.
    """
    n = check_int_at_least(n, "n", 1)
    lam = float(check_positive(lam, "lam"))
    y_bound = float(check_positive(y_bound, "y_bound"))
    s = min(np.sqrt(n) + np.sqrt(n + 1.0), 1.0 / np.sqrt(lam))
    return float(y_bound * (s + np.sqrt(n) * s * s) / (np.sqrt(lam) * (1.0 + s * s)))
