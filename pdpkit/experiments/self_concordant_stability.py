r"""Experiments of the chapter "Self-concordant stability".

* :func:`robust_regression_data` — the source's synthetic design (§4.1): :math:`x \sim
  U[-1,1]^d`, :math:`\theta^\star` uniform on the sphere of radius ``theta_norm``,
  :math:`y = \langle\theta^\star, x\rangle + \sigma\,\mathrm{Lap}(1)`.
* :func:`parameter_change_tightness` — the worst :math:`\|\theta(D) - \theta(D')\|` over
  adversarial and random neighbours, by re-optimisation, against :math:`t(\Lambda)` of (9),
  for add/remove and for replace neighbours.
* :func:`eigenvalue_relative_error` — Figure 1 of Asi, Duchi & Talwar: the relative error
  :math:`|\hat\lambda - \lambda_{\min}|/\lambda_{\min}` of Alg 2 against :math:`n/d`.

They only compute; the chapter plots.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._progress import progress as _progress
from .._validation import as_generator
from ..losses import get_loss
from ..stability import fit_and_hessian, parameter_change_bound, private_eigen_bounds, stability_constants

__all__ = ["robust_regression_data", "ParameterChangeTightness", "parameter_change_tightness",
           "EigenvalueError", "eigenvalue_relative_error"]


def robust_regression_data(n: int, *, d: int, theta_norm: float = 1.0, noise: float = 1.0,
                           rng=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""§4.1's design: ``(X, y, theta_star)`` with rows in :math:`[-1,1]^d` (norm :math:`\le\sqrt d`).

    Parameters
    ----------
    n : int
        Number of records n.
    d : int
        Dimension d (number of features).
    theta_norm : float, default 1.0
        Norm ‖θ*‖ of the true parameter.
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    noise : float, default 1.0
        Scale s of the Laplace label noise.
    """
    gen = as_generator(rng)
    X = gen.uniform(-1.0, 1.0, (n, d))
    th = gen.normal(size=d)
    th *= theta_norm / np.linalg.norm(th)
    y = X @ th + noise * gen.laplace(size=n)
    return X, y, th


def _adversarial_neighbours(X, y, theta, A, r, gen, n_random):
    d = X.shape[1]
    _, V = np.linalg.eigh(A)
    adds = []
    for v in (V[:, 0], V[:, -1]):
        for sg in (1.0, -1.0):
            x = sg * r * v
            adds.append((x, float(x @ theta) + 40.0))      # |f'| -> 1 and f'' -> 0: the extreme point
    for _ in range(n_random):
        x = gen.normal(size=d)
        x *= r / np.linalg.norm(x)
        adds.append((x, float(x @ theta) + 3.0 * gen.normal()))
    Ainv = np.linalg.inv(A)
    lev = np.abs(np.tanh(0.5 * (y - X @ theta))) * np.sqrt(np.einsum("ij,jk,ik->i", X, Ainv, X))
    rem = [int(i) for i in np.argsort(lev)[-3:]]
    return adds, rem


@dataclass(frozen=True)
class ParameterChangeTightness:
    """Worst ``‖θ(D) − θ(D')‖ / t(Λ)`` per n: add/remove neighbours and replace neighbours
    against their own t, and replace neighbours against the add/remove t (erratum E-adt-eq9-neighbours).

    Attributes
    ----------
    ns : numpy.ndarray
        The sample sizes n.
    add_remove : numpy.ndarray
        Worst add/remove move over t(Λ) at each n.
    replace : numpy.ndarray
        Worst replace move over the replace t at each n.
    replace_vs_add_remove_t : numpy.ndarray
        Worst replace move over the add/remove t.
    t_add_remove : numpy.ndarray
        The add/remove bound t(Λ) at each n.
    """

    ns: np.ndarray
    add_remove: np.ndarray
    replace: np.ndarray
    replace_vs_add_remove_t: np.ndarray
    t_add_remove: np.ndarray


def parameter_change_tightness(ns: Sequence[int], *, d: int = 3, lam: float = 1.0, n_random: int = 3,
                               rng=None, progress: bool | None = None) -> ParameterChangeTightness:
    r"""Re-optimise on adversarial and random neighbours of a robust-regression data set.

    Rows are scaled to norm :math:`\le r = 1`. Add: the extreme points :math:`\pm r v`
    (:math:`v` the eigenvectors of the smallest and largest eigenvalue of :math:`H`) with a
    label far away (:math:`|f'| \to 1`), and ``n_random`` random points on the sphere; remove:
    the three points of largest :math:`|f'|\,\|x\|_{H^{-1}}`; replace: each of the four extreme
    adds with the two removals that move :math:`\theta` most with it. NaN where (C1) fails.

    Parameters
    ----------
    ns : Sequence[int]
        The sample sizes n to sweep.
    d : int, default 3
        Dimension d (number of features).
    lam : float, default 1.0
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    progress : bool, optional
        A tqdm progress bar (``None``: only when a person watches; ``PDPKIT_PROGRESS=0`` turns it off).
    n_random : int, default 3
        Random added points on the sphere per n.
    """
    gen = as_generator(rng)
    loss = get_loss("robust_log")
    r = 1.0
    c_ar = stability_constants(loss, norm_bound=r, lam=lam)
    c_rep = stability_constants(loss, norm_bound=r, lam=lam, neighbours="replace")
    out = {k: [] for k in ("ar", "rep", "rep_ar", "t")}
    for n in _progress(list(ns), total=len(ns), desc="neighbours", progress=progress):
        X, y, _ = robust_regression_data(int(n), d=d, rng=gen)
        X /= np.sqrt(d)
        theta, H = fit_and_hessian(X, y, loss, lam)
        eig = float(np.linalg.eigvalsh(H)[0])
        t_ar = float(parameter_change_bound(eig, c_ar))
        t_rep = float(parameter_change_bound(eig, c_rep))
        adds, rem = _adversarial_neighbours(X, y, theta, H + lam * np.eye(d), r, gen, n_random)
        worst_ar = 0.0
        for x, yy in adds:
            th1, _ = fit_and_hessian(np.vstack([X, x[None]]), np.append(y, yy), loss, lam)
            worst_ar = max(worst_ar, float(np.linalg.norm(th1 - theta)))
        for i in rem:
            th1, _ = fit_and_hessian(np.delete(X, i, 0), np.delete(y, i), loss, lam)
            worst_ar = max(worst_ar, float(np.linalg.norm(th1 - theta)))
        worst_rep = 0.0
        Ainv = np.linalg.inv(H + lam * np.eye(d))
        G = -np.tanh(0.5 * (y - X @ theta))[:, None] * X          # per-example gradients f' x
        for x, yy in adds[:4]:
            ga = -np.tanh(0.5 * (yy - x @ theta)) * x
            # remove the example whose gradient points most against the added one (in H^{-1})
            score = np.linalg.norm((G - ga) @ Ainv, axis=1)
            for i in [int(j) for j in np.argsort(score)[-2:]]:
                Xp = np.vstack([np.delete(X, i, 0), x[None]])
                th1, _ = fit_and_hessian(Xp, np.append(np.delete(y, i), yy), loss, lam)
                worst_rep = max(worst_rep, float(np.linalg.norm(th1 - theta)))
        out["ar"].append(worst_ar / t_ar if np.isfinite(t_ar) else np.nan)
        out["rep"].append(worst_rep / t_rep if np.isfinite(t_rep) else np.nan)
        out["rep_ar"].append(worst_rep / t_ar if np.isfinite(t_ar) else np.nan)
        out["t"].append(t_ar)
    return ParameterChangeTightness(np.asarray(ns, dtype=int), np.array(out["ar"]), np.array(out["rep"]),
                                    np.array(out["rep_ar"]), np.array(out["t"]))


@dataclass(frozen=True)
class EigenvalueError:
    """Relative errors of Alg 2, shape (len(dims), len(ratios), reps); NaN-free (λ̂ = 0 gives 1).

    Attributes
    ----------
    dims : numpy.ndarray
        The dimensions d.
    ratios : numpy.ndarray
        The ratios n/d.
    rel_error : numpy.ndarray
        Relative errors, shape (len(dims), len(ratios), reps).
    eps : float
        ε of Alg 2.
    delta : float
        δ of Alg 2.
    """

    dims: np.ndarray
    ratios: np.ndarray
    rel_error: np.ndarray
    eps: float
    delta: float


def eigenvalue_relative_error(ratios: Sequence[float], *, dims: Sequence[int] = (5, 10, 20), eps: float = 1.0,
                              delta: float = 1e-6, reps: int = 3, lam: float = 0.0, rng=None,
                              progress: bool | None = None) -> EigenvalueError:
    r"""Figure 1: :math:`|\hat\lambda - \lambda_{\min}|/\lambda_{\min}` of Alg 2 (:func:`~pdpkit.stability.private_eigen_bounds`).

    Robust regression on §4.1's design with :math:`\|\theta^\star\| = 1`, :math:`\sigma = 1`,
    ``norm_bound`` :math:`= \sqrt d` (rows in :math:`[-1,1]^d`), :math:`n = \text{ratio}\cdot d`,
    fresh data for each repetition.

    Parameters
    ----------
    ratios : Sequence[float]
        The ratios n/d to sweep.
    dims : Sequence[int], optional
        The dimensions d to sweep.
    eps : float, default 1.0
        ε of the (ε, δ) guarantee, in nats.
    delta : float, default 1e-06
        δ of the (ε, δ) guarantee, in (0, 1).
    reps : int, default 3
        Repetitions per point of the sweep.
    lam : float, default 0.0
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    progress : bool, optional
        A tqdm progress bar (``None``: only when a person watches; ``PDPKIT_PROGRESS=0`` turns it off).
    """
    gen = as_generator(rng)
    loss = get_loss("robust_log")
    res = np.empty((len(dims), len(ratios), reps))
    jobs = [(i, j, k) for i in range(len(dims)) for j in range(len(ratios)) for k in range(reps)]
    for i, j, k in _progress(jobs, total=len(jobs), desc="Figure 1", progress=progress):
        d = int(dims[i])
        n = int(round(ratios[j] * d))
        X, y, _ = robust_regression_data(n, d=d, rng=gen)
        _, H = fit_and_hessian(X, y, loss, lam)
        lam_min = float(np.linalg.eigvalsh(H)[0])
        eb = private_eigen_bounds(X, y, loss, eps, delta, lam=lam, norm_bound=float(np.sqrt(d)), rng=gen)
        res[i, j, k] = abs(float(eb.lambda_min) - lam_min) / lam_min
    return EigenvalueError(np.asarray(dims), np.asarray(ratios, dtype=float), res, float(eps), float(delta))
