r"""Experiments of the chapter "Releasing one parameter" (Asi, Duchi & Talwar, §4.1).

Synthetic robust regression as in the source: :math:`\theta^\star = \|\theta^\star\|\,v` with
:math:`v` uniform on the sphere, :math:`x_i \sim \mathrm{U}[-1, 1]^d`,
:math:`y_i = \langle\theta^\star, x_i\rangle + s\,\mathrm{Lap}(1)` (the source does not
state :math:`s`; we use :math:`s = 1`), loss ``robust_log``, rows bounded by
:math:`r = \sqrt d`.

* :func:`make_robust_regression` — one data set.
* Figure 1 (Alg 2's relative error) is reproduced in the chapter "Self-concordant
  stability" (:mod:`pdpkit.experiments.self_concordant_stability`).
* :func:`compare_methods` — Figures 2–5: error of the first coordinate (Alg 5) or of the
  whole vector (Alg 3) against :math:`n` or :math:`\epsilon`, with the baselines of §4:
  the idealized non-private release (item 2), output perturbation at
  :math:`\lambda = 10^{-2}n` (item 4), and ObjPert (item 5) calibrated by pdpkit's tight
  add/remove accountant (:func:`pdpkit.accounting.objpert_calibrate`) instead of the
  source's garbled (15). DP-SGD (item 3) is omitted: the source tuned it non-privately,
  and the honest comparison lives in the chapter "Approximate minima perturbation".

When Alg 5 (or Alg 3) returns :math:`\bot`, the "local" method falls back to ObjPert at
:math:`(\epsilon/2, \delta/2)` — the source's own modification in §4.2 (half the budget is
left after the eigenvalue certificates) — and the fraction of :math:`\bot` is reported.
All functions only compute; the chapter plots.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._progress import progress as _progress
from .._solver import _hessian, _newton
from .._validation import as_generator
from ..accounting import objpert_calibrate
from ..losses import robust_log
from ..objpert import objpert_fit
from ..output_perturbation import output_perturbation_fit
from ..single import (
    local_output_perturbation,
    local_sensitivity_release_nonprivate,
    release_linear_functional,
)

__all__ = [
    "RobustData",
    "make_robust_regression",
    "fit_and_eigs_nonprivate",
    "MethodErrors",
    "compare_methods",
]

METHODS = ("local", "nonprivate", "objpert", "output")


@dataclass(frozen=True)
class RobustData:
    """A synthetic robust-regression data set: rows ``X`` in the cube, labels ``y``, truth ``theta_star``."""

    X: np.ndarray
    y: np.ndarray
    theta_star: np.ndarray

    @property
    def norm_bound(self) -> float:
        """:math:`\\sqrt d`, the Euclidean radius of the cube :math:`[-1, 1]^d`."""
        return math.sqrt(self.X.shape[1])


def make_robust_regression(n: int, d: int, *, theta_norm: float = 1.0, noise: float = 1.0,
                           rng=None) -> RobustData:
    r"""One data set of §4.1: :math:`x \sim \mathrm U[-1,1]^d`, :math:`y = \langle\theta^\star, x\rangle + s\,\mathrm{Lap}(1)`."""
    gen = as_generator(rng)
    v = gen.standard_normal(d)
    theta_star = theta_norm * v / np.linalg.norm(v)
    X = gen.uniform(-1.0, 1.0, size=(n, d))
    y = X @ theta_star + noise * gen.laplace(0.0, 1.0, size=n)
    return RobustData(X=X, y=y, theta_star=theta_star)


def fit_and_eigs_nonprivate(X: np.ndarray, y: np.ndarray, *, lam: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    r"""**Non-private** :math:`\theta(D)` (robust_log, ridge ``lam``) and the eigenvalues of the data Hessian there."""
    n, d = X.shape
    theta, _z, w, _g, _ = _newton(X, y, robust_log, lam, np.zeros(d), 1e-12 * max(1.0, n * math.sqrt(d)), 200,
                                  "newton")
    H = _hessian(X, w, 0.0)
    return theta, np.linalg.eigvalsh(H, UPLO="U")


@dataclass(frozen=True)
class MethodErrors:
    r"""Errors of the four methods on a grid.

    ``err_star[m]`` and ``err_fit[m]`` have shape ``(len(grid), reps)``: the error against
    :math:`\theta^\star` and against the non-private :math:`\theta(D)` (``lam = 0``) — of the
    first coordinate (``target="coordinate"``) or of the whole vector in :math:`\ell_2`
    (``target="vector"``). ``bottom`` is the fraction of runs where the local mechanism
    returned :math:`\bot` (and ObjPert at half the budget was used instead);
    ``stat_error`` the error of the non-private :math:`\theta(D)` against
    :math:`\theta^\star` (the statistical floor), shape ``(len(grid), reps)``.
    """

    grid: np.ndarray
    swept: str
    target: str
    d: int
    theta_norm: float
    err_star: dict
    err_fit: dict
    bottom: np.ndarray
    stat_error: np.ndarray


def _objpert(data: RobustData, eps: float, delta: float, gen) -> np.ndarray:
    R = data.norm_bound
    lam, sigma = objpert_calibrate(eps, delta, L=robust_log.lipschitz * R, beta=robust_log.smoothness * R * R)
    return np.asarray(objpert_fit(data.X, data.y, robust_log, lam=lam, sigma=sigma, rng=gen, norm_bound=R).theta)


def compare_methods(grid: Sequence[float], *, swept: str = "n", d: int = 10, theta_norm: float = 1.0,
                    n: int = 10**5, eps: float = 4.0, delta: float = 1e-6, target: str = "coordinate",
                    reps: int = 3, rng=None, progress: bool | None = None) -> MethodErrors:
    r"""Figures 2–5: errors of Alg 5 / Alg 3 ("local"), the idealized release, ObjPert and output perturbation.

    ``swept="n"`` sweeps the sample size at fixed ``eps`` (Figs 2–3); ``swept="eps"`` sweeps
    :math:`\epsilon` at fixed ``n`` (Figs 4–5), reusing each replicate's data set across the
    grid. ``target="coordinate"`` releases :math:`\theta_1` (Alg 5 with :math:`u = e_1`,
    cube domain), ``"vector"`` the whole :math:`\theta` (Alg 3).
    """
    if swept not in ("n", "eps"):
        raise ValueError(f"swept must be 'n' or 'eps'; got {swept!r}")
    if target not in ("coordinate", "vector"):
        raise ValueError(f"target must be 'coordinate' or 'vector'; got {target!r}")
    gen = as_generator(rng)
    grid = np.asarray(grid, dtype=float)
    G = grid.size
    err_star = {m: np.full((G, reps), np.nan) for m in METHODS}
    err_fit = {m: np.full((G, reps), np.nan) for m in METHODS}
    bottom = np.zeros((G, reps), dtype=bool)
    stat = np.full((G, reps), np.nan)
    u = np.zeros(d)
    u[0] = 1.0
    cache: dict[int, tuple[RobustData, np.ndarray]] = {}
    jobs = [(i, k) for i in range(G) for k in range(reps)]
    for i, k in _progress(jobs, total=len(jobs), desc=f"sweep {swept}", progress=progress):
        n_i = int(grid[i]) if swept == "n" else int(n)
        e_i = float(grid[i]) if swept == "eps" else float(eps)
        if swept == "eps" and k in cache:
            data, theta_fit = cache[k]
        else:
            data = make_robust_regression(n_i, d, theta_norm=theta_norm, rng=gen)
            theta_fit, _ = fit_and_eigs_nonprivate(data.X, data.y)
            if swept == "eps":
                cache[k] = (data, theta_fit)
        R = data.norm_bound
        kw = dict(lam=0.0, norm_bound=R, rng=gen)
        if target == "coordinate":
            loc = release_linear_functional(data.X, data.y, robust_log, u, e_i, delta,
                                            cap=n_i * robust_log.smoothness * R * R, domain="linf", **kw)
            ideal = local_sensitivity_release_nonprivate(data.X, data.y, robust_log, e_i, delta, u=u,
                                                         domain="linf", **kw).value
        else:
            loc = local_output_perturbation(data.X, data.y, robust_log, e_i, delta, **kw)
            ideal = local_sensitivity_release_nonprivate(data.X, data.y, robust_log, e_i, delta, **kw).value
        if loc.released:
            local = loc.value
        else:
            bottom[i, k] = True
            fb = _objpert(data, e_i / 2.0, delta / 2.0, gen)
            local = fb[0] if target == "coordinate" else fb
        obj = _objpert(data, e_i, delta, gen)
        out = np.asarray(output_perturbation_fit(data.X, data.y, robust_log, lam=1e-2 * n_i, eps=e_i, delta=delta,
                                                 norm_bound=R, rng=gen).theta)
        if target == "coordinate":
            stat[i, k] = abs(theta_fit[0] - data.theta_star[0])
        else:
            stat[i, k] = float(np.linalg.norm(theta_fit - data.theta_star))
        est = {"local": local, "nonprivate": ideal, "objpert": obj, "output": out}
        for m, v in est.items():
            v = np.asarray(v, dtype=float)
            if target == "coordinate":
                v = v.reshape(-1)[0] if v.ndim else float(v)
                err_star[m][i, k] = abs(v - data.theta_star[0])
                err_fit[m][i, k] = abs(v - theta_fit[0])
            else:
                err_star[m][i, k] = float(np.linalg.norm(v - data.theta_star))
                err_fit[m][i, k] = float(np.linalg.norm(v - theta_fit))
    return MethodErrors(grid=grid, swept=swept, target=target, d=d, theta_norm=theta_norm, err_star=err_star,
                        err_fit=err_fit, bottom=bottom.mean(axis=1), stat_error=stat)
