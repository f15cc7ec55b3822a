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

import functools
import math
from collections.abc import Sequence

from numpy.typing import ArrayLike
from dataclasses import dataclass

import numpy as np

from .._progress import progress as _progress
from .._solver import _hessian
from .._validation import as_generator
from ..accounting import objpert_calibrate
from ..losses import robust_log
from ..objpert import DEFAULT_GRAD_TOL, objpert_fit
from ..output_perturbation import output_perturbation_fit
from ..single import (
    DataFit,
    data_fit_nonprivate,
    local_output_perturbation,
    local_sensitivity_release_nonprivate,
    release_linear_functional,
)

__all__ = [
    "RobustData",
    "make_robust_regression",
    "fit_nonprivate",
    "fit_and_eigs_nonprivate",
    "MethodErrors",
    "compare_methods",
    "adult_features",
    "AdultErrors",
    "adult_errors",
    "adult_certificate_nonprivate",
    "release_threshold",
    "certificate_r2_nonprivate",
    "certified_sample_size_nonprivate",
    "adult_population_eigs_nonprivate",
    "adult_gated_errors_uncertified",
    "AccuracyRates",
    "accuracy_against_n",
    "rate_consistent",
]

METHODS = ("local", "nonprivate", "objpert", "output")


@dataclass(frozen=True)
class RobustData:
    """A synthetic robust-regression data set: rows ``X`` in the cube, labels ``y``, truth ``theta_star``.

    Attributes
    ----------
    X : numpy.ndarray
        Rows in the cube [−1, 1]^d.
    y : numpy.ndarray
        Labels.
    theta_star : numpy.ndarray
        The true parameter θ*.
    """

    X: np.ndarray
    y: np.ndarray
    theta_star: np.ndarray

    @property
    def norm_bound(self) -> float:
        """:math:`\\sqrt d`, the Euclidean radius of the cube :math:`[-1, 1]^d`."""
        return math.sqrt(self.X.shape[1])


def make_robust_regression(n: int, *, d: int, theta_norm: float = 1.0, noise: float = 1.0,
                           rng=None) -> RobustData:
    r"""One data set of §4.1: :math:`x \sim \mathrm U[-1,1]^d`, :math:`y = \langle\theta^\star, x\rangle + s\,\mathrm{Lap}(1)`.

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
    v = gen.standard_normal(d)
    theta_star = theta_norm * v / np.linalg.norm(v)
    X = gen.uniform(-1.0, 1.0, size=(n, d))
    y = X @ theta_star + noise * gen.laplace(0.0, 1.0, size=n)
    return RobustData(X=X, y=y, theta_star=theta_star)


def fit_nonprivate(X: np.ndarray, y: np.ndarray, loss=robust_log, *, lam: float = 0.0) -> np.ndarray:
    r"""**Non-private** :math:`\theta(D)` of a GLM (``lam`` may be 0), as :mod:`pdpkit.single` computes it.

    Parameters
    ----------
    X : numpy.ndarray
        Feature rows, shape (n, d).
    y : numpy.ndarray
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    loss : object, optional
        The GLM loss: a :class:`pdpkit.losses.GLMLoss` or its name (``"logistic"``, ``"squared"``, ``"robust_log"``, ``"huber"``).
    lam : float, default 0.0
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    """
    from ..single import fit_to_tolerance

    return fit_to_tolerance(np.asarray(X, float), np.asarray(y, float), loss, lam, math.sqrt(max(1.0, float(
        np.max(np.einsum("ij,ij->i", X, X))))))[0]


def fit_and_eigs_nonprivate(X: np.ndarray, y: np.ndarray, *, lam: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    r"""**Non-private** :math:`\theta(D)` (robust_log, ridge ``lam``) and the eigenvalues of the data Hessian there.

    Parameters
    ----------
    X : numpy.ndarray
        Feature rows, shape (n, d).
    y : numpy.ndarray
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    lam : float, default 0.0
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    """
    theta = fit_nonprivate(X, y, robust_log, lam=lam)
    H = _hessian(X, robust_log.d2(X @ theta, y), 0.0)
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

    Attributes
    ----------
    grid : numpy.ndarray
        Points of the sweep.
    swept : str
        ``"n"`` or ``"eps"``.
    target : str
        ``"coordinate"`` or ``"vector"``.
    d : int
        Dimension d.
    theta_norm : float
        Norm ‖θ*‖ of the true parameter.
    err_star : dict
        Per method, errors against θ*.
    err_fit : dict
        Per method, errors against θ(D).
    bottom : numpy.ndarray
        Fraction of runs where the local mechanism returned ⊥.
    stat_error : numpy.ndarray
        Error of the non-private θ(D) against θ*.
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


@functools.lru_cache(maxsize=256)
def _objpert_calibration(eps: float, delta: float, L: float, beta: float) -> tuple[float, float]:
    """:func:`pdpkit.accounting.objpert_calibrate` (a function of public constants only), once per argument tuple."""
    return objpert_calibrate(eps, delta, L=L, beta=beta)


def _objpert(data: RobustData, eps: float, delta: float, gen) -> np.ndarray:
    R = data.norm_bound
    lam, sigma = _objpert_calibration(eps, delta, robust_log.lipschitz * R, robust_log.smoothness * R * R)
    # Beyond 10^5 rows the solver's tolerance grows with n: float64 cannot certify a gradient sum of
    # 10^6 terms to 1e-10 (the output noise, a function of the public tolerance, pays for it).
    n = data.X.shape[0]
    tol = DEFAULT_GRAD_TOL if n <= 10**5 else DEFAULT_GRAD_TOL * n / 10**5
    fit = objpert_fit(data.X, data.y, robust_log, lam=lam, sigma=sigma, rng=gen, norm_bound=R, grad_tol=tol)
    return np.asarray(fit.theta_released)


def compare_methods(grid: Sequence[float], *, swept: str = "n", d: int = 10, theta_norm: float = 1.0,
                    n: int = 10**5, eps: float = 4.0, delta: float = 1e-6, target: str = "coordinate",
                    reps: int = 3, rng=None, progress: bool | None = None) -> MethodErrors:
    r"""Figures 2–5: errors of Alg 5 / Alg 3 ("local"), the idealized release, ObjPert and output perturbation.

    ``swept="n"`` sweeps the sample size at fixed ``eps`` (Figs 2–3); ``swept="eps"`` sweeps
    :math:`\epsilon` at fixed ``n`` (Figs 4–5), reusing each replicate's data set across the
    grid. ``target="coordinate"`` releases :math:`\theta_1` (Alg 5 with :math:`u = e_1`,
    cube domain), ``"vector"`` the whole :math:`\theta` (Alg 3).
    :math:`\theta(D)` is fitted once per data set (``pdpkit.single.data_fit_nonprivate``) and
    shared by the local and the idealized release, which give the same outputs as fitting
    afresh; ObjPert and output perturbation fit their own regularized objectives.

    Parameters
    ----------
    grid : Sequence[float]
        Points of the sweep.
    swept : str, default 'n'
        Which quantity the sweep varies.
    d : int, default 10
        Dimension d (number of features).
    theta_norm : float, default 1.0
        Norm ‖θ*‖ of the true parameter.
    n : int, default 100000
        Number of records n.
    eps : float, default 4.0
        ε of the (ε, δ) guarantee, in nats.
    delta : float, default 1e-06
        δ of the (ε, δ) guarantee, in (0, 1).
    reps : int, default 3
        Repetitions per point of the sweep.
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    progress : bool, optional
        A tqdm progress bar (``None``: only when a person watches; ``PDPKIT_PROGRESS=0`` turns it off).
    target : str, default 'coordinate'
        ``"coordinate"`` (θ₁, Alg 5) or ``"vector"`` (θ, Alg 3).
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
    cache: dict[int, tuple[RobustData, DataFit]] = {}
    jobs = [(i, k) for i in range(G) for k in range(reps)]
    for i, k in _progress(jobs, total=len(jobs), desc=f"sweep {swept}", progress=progress):
        n_i = int(grid[i]) if swept == "n" else int(n)
        e_i = float(grid[i]) if swept == "eps" else float(eps)
        if swept == "eps" and k in cache:
            data, fit = cache[k]
        else:
            data = make_robust_regression(n_i, d=d, theta_norm=theta_norm, rng=gen)
            # one fit of theta(D) per data set, shared by Alg 5 (or 3) and the idealized release
            fit = data_fit_nonprivate(data.X, data.y, robust_log, lam=0.0, norm_bound=data.norm_bound)
            if swept == "eps":
                cache[k] = (data, fit)
        theta_fit = fit.theta
        R = data.norm_bound
        kw = dict(lam=0.0, norm_bound=R, rng=gen, fit=fit)
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
        out_tol = 1e-10 if n_i <= 10**5 else 1e-10 * n_i / 10**5  # as in _objpert: float64's floor grows with n
        out = np.asarray(output_perturbation_fit(data.X, data.y, robust_log, lam=1e-2 * n_i, eps=e_i, delta=delta,
                                                 norm_bound=R, rng=gen, tol=out_tol).theta)
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


# ------------------------------------------------------------------- §4.2 on Adult
_OCCUPATION_GROUPS = {  # the source's footnote 2, mapped onto Adult's 14 occupations
    "management": ("Exec-managerial",),
    "computer-engineering-science": ("Tech-support",),
    "education-legal-arts-professional": ("Prof-specialty",),
    "service": ("Other-service", "Protective-serv", "Priv-house-serv"),
    "sales-office": ("Sales", "Adm-clerical"),
    "construction-maintenance-farming": ("Craft-repair", "Farming-fishing"),
    "production-transport-military": ("Machine-op-inspct", "Transport-moving", "Handlers-cleaners",
                                      "Armed-Forces"),
}
_WORKCLASS_GROUPS = {  # "Without-pay" (21 rows) joins the reference group
    "private-or-other": ("Private", "Without-pay"),
    "government": ("Federal-gov", "Local-gov", "State-gov"),
    "self-employed": ("Self-emp-inc", "Self-emp-not-inc"),
}


def adult_features() -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    r"""UCI Adult coded after §4.2's recipe for ACS income data: rows in :math:`[-1, 1]^{15}`, labels :math:`\pm1`.

    Intercept; working age (18–60); hours per week and years of schooling mapped to
    :math:`[-1, 1]`; white; married; sex (male); occupation in the source's top-level
    groups (Adult's 14 occupations fall into 7 of its 8 groups; one group is the reference);
    class of worker (government, self-employed; private and the 21 unpaid workers are the
    reference: Adult has no "unknown" class after dropping incomplete rows).
    :math:`d = 15` (the source has 17: 8 occupation groups, 4 classes of worker). Label +1 for income >50K.
    Fresh arrays on every call (the coding itself is computed once per process).
    """
    X, y, names, _ = _adult_population()
    return X.copy(), y.copy(), names


@functools.cache
def _adult_population() -> tuple[np.ndarray, np.ndarray, tuple[str, ...], np.ndarray]:
    """Adult coded as in :func:`adult_features` (read-only arrays) and its unregularized logistic θ, once per process."""
    from ..losses import logistic

    X, y, names = _adult_coded()
    theta = fit_nonprivate(X, y, logistic)
    for a in (X, y, theta):
        a.setflags(write=False)
    return X, y, names, theta


def _adult_coded() -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    from ..datasets import load_adult

    a = load_adult(row_norm="none")
    X, names = a.X, list(a.feature_names)
    col = {nm: X[:, i] for i, nm in enumerate(names)}
    age = np.round(col["age"] * 90.0)  # age / max(age), max 90
    feats = {
        "intercept": np.ones(X.shape[0]),
        "working_age": ((age >= 18) & (age <= 60)).astype(float),
        "hours": 2.0 * (col["hours-per-week"] - col["hours-per-week"].min())
        / np.ptp(col["hours-per-week"]) - 1.0,
        "schooling": 2.0 * (col["education-num"] - col["education-num"].min())
        / np.ptp(col["education-num"]) - 1.0,
        "white": col["race=White"],
        "married": col["marital-status=Married-civ-spouse"] + col["marital-status=Married-AF-spouse"],
        "sex": col["sex=Male"],
    }
    for g, members in list(_OCCUPATION_GROUPS.items())[1:]:
        feats["occupation:" + g] = sum(col["occupation=" + m] for m in members)
    for g, members in list(_WORKCLASS_GROUPS.items())[1:]:
        feats["workclass:" + g] = sum(col["workclass=" + m] for m in members)
    return np.column_stack(list(feats.values())), np.asarray(a.y, dtype=float), tuple(feats)


@dataclass(frozen=True)
class AdultErrors:
    r"""Errors :math:`|\hat\theta_j - \theta_j(P_n)|` on bootstrap samples of Adult, shape ``(len(ns), reps)`` per method.

    Attributes
    ----------
    ns : numpy.ndarray
        The sample sizes n.
    eps : float
        ε of the releases.
    feature : str
        The released coefficient's feature.
    theta_population : float
        The coefficient on all Adult rows.
    errors : dict
        Per method, errors, shape (len(ns), reps).
    bottom : numpy.ndarray
        Fraction of runs where Alg 5 returned ⊥.
    """

    ns: np.ndarray
    eps: float
    feature: str
    theta_population: float
    errors: dict
    bottom: np.ndarray


def adult_errors(ns: Sequence[int], *, eps: float, feature: str = "sex", delta: float = 1e-6, reps: int = 3,
                 rng=None, progress: bool | None = None) -> AdultErrors:
    r"""Figures 6–7 on Adult: Alg 5 (ObjPert at :math:`\epsilon/2` when :math:`\bot`), the idealized release, ObjPert.

    Logistic loss, unregularized; each replicate draws a bootstrap sample of size ``n``
    from the 45,222 complete Adult rows (the source's protocol with ACS data).

    Parameters
    ----------
    ns : Sequence[int]
        The sample sizes n to sweep.
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    delta : float, default 1e-06
        δ of the (ε, δ) guarantee, in (0, 1).
    reps : int, default 3
        Repetitions per point of the sweep.
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    progress : bool, optional
        A tqdm progress bar (``None``: only when a person watches; ``PDPKIT_PROGRESS=0`` turns it off).
    feature : str, default 'sex'
        ``"sex"`` or ``"schooling"``: the coefficient to release.
    """
    from ..losses import logistic

    gen = as_generator(rng)
    X_all, y_all, names, theta_pop = _adult_population()
    j = names.index(feature)
    n_all, d = X_all.shape
    R = math.sqrt(d)
    u = np.zeros(d)
    u[j] = 1.0
    methods = ("local", "nonprivate", "objpert")
    errors = {m: np.full((len(ns), reps), np.nan) for m in methods}
    bottom = np.zeros((len(ns), reps), dtype=bool)
    jobs = [(i, k) for i in range(len(ns)) for k in range(reps)]
    for i, k in _progress(jobs, total=len(jobs), desc="Adult", progress=progress):
        n = int(ns[i])
        idx = gen.integers(0, n_all, size=n)
        X, y = X_all[idx], y_all[idx]
        fit = data_fit_nonprivate(X, y, logistic, lam=0.0, norm_bound=R)  # shared by both releases
        th = fit.theta
        kw = dict(lam=0.0, norm_bound=R, rng=gen, fit=fit)
        loc = release_linear_functional(X, y, logistic, u, eps, delta, cap=n * logistic.smoothness * R * R,
                                        domain="linf", **kw)
        if loc.released:
            v_loc = loc.value
        else:
            bottom[i, k] = True
            lam_o, sig_o = _objpert_calibration(eps / 2, delta / 2, R, logistic.smoothness * R * R)
            v_loc = objpert_fit(X, y, logistic, lam=lam_o, sigma=sig_o, rng=gen, norm_bound=R).theta_released[j]
        ideal = local_sensitivity_release_nonprivate(X, y, logistic, eps, delta, u=u, domain="linf", **kw).value
        lam_o, sig_o = _objpert_calibration(eps, delta, R, logistic.smoothness * R * R)
        obj = objpert_fit(X, y, logistic, lam=lam_o, sigma=sig_o, rng=gen, norm_bound=R).theta_released[j]
        for m, v in (("local", v_loc), ("nonprivate", ideal), ("objpert", obj)):
            errors[m][i, k] = abs(float(v) - th[j])
    return AdultErrors(ns=np.asarray(ns), eps=float(eps), feature=feature, theta_population=float(theta_pop[j]),
                       errors=errors, bottom=bottom.mean(axis=1))


def adult_certificate_nonprivate(ns: Sequence[int], *, eps: float = 4.0, delta: float = 1e-6,
                                 rng=None) -> np.ndarray:
    r"""**Non-private** diagnostic: Alg 5's ratio certificate at the *true* extreme eigenvalues of Adult samples.

    For each ``n`` a bootstrap sample: the data Hessian's eigenvalues at :math:`\theta(D)`
    (logistic loss, ``lam = 0``) and :func:`pdpkit.stability.modulus_ratio_bound` there — the
    most favourable certificates Alg 2 and Alg 4 could return. Rows
    ``(n, eig_min, eig_max, r2_linf, r2_l2, threshold)``, the threshold being (14) at
    :math:`(\epsilon/4, \delta/(4 + e^{\epsilon/4}))`.

    Parameters
    ----------
    ns : Sequence[int]
        The sample sizes n to sweep.
    eps : float, default 4.0
        ε of the (ε, δ) guarantee, in nats.
    delta : float, default 1e-06
        δ of the (ε, δ) guarantee, in (0, 1).
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    """
    from scipy import stats as _stats

    from .. import stability as st
    from ..losses import logistic

    gen = as_generator(rng)
    X_all, y_all, _, _ = _adult_population()
    d = X_all.shape[1]
    R = math.sqrt(d)
    consts = st.stability_constants(logistic, norm_bound=R)
    e4 = eps / 4.0
    z = _stats.norm.isf(delta / (4.0 + math.exp(e4)) / 2.0)
    thr = 2.0 * e4 / (1.0 + z * z)
    rows = []
    for n in ns:
        idx = gen.integers(0, X_all.shape[0], size=int(n))
        X, y = X_all[idx], y_all[idx]
        th = fit_nonprivate(X, y, logistic)
        ev = np.linalg.eigvalsh(_hessian(X, logistic.d2(X @ th, y), 0.0), UPLO="U")
        rows.append((n, ev[0], ev[-1], float(st.modulus_ratio_bound(ev[0], ev[-1], consts, domain="linf", d=d)),
                     float(st.modulus_ratio_bound(ev[0], ev[-1], consts, domain="l2")), thr))
    return np.array(rows)


# ------------------------------------------------- Figs 6–7: which change keeps Alg 5 from releasing
CERTIFICATES = ("pdpkit", "printed")
ACCOUNTINGS = ("pdpkit", "source", "whole")


def release_threshold(eps: float, delta: float, *, accounting: str) -> float:
    r"""The largest certificate :math:`r^2` Alg 5 may accept at a total budget :math:`(\epsilon, \delta)`.

    :math:`2\epsilon_s/(1 + \Phi^{-1}(1 - \delta_s/2)^2)` (Lemma A.1 (iii), (14)) at the per-step
    budget of the accounting: ``"pdpkit"`` — four steps, :math:`(\epsilon/4, \delta/(4 + e^{\epsilon/4}))`
    (the chapter's recount of Cor 3.6); ``"source"`` — Cor 3.6's three steps,
    :math:`(\epsilon/3, \delta/(1 + e^{\epsilon/3} + e^{2\epsilon/3}))`; ``"whole"`` — the whole
    :math:`(\epsilon, \delta)` on the variance test, a ceiling no accounting can exceed.

    Parameters
    ----------
    eps : float
        Total ε of Alg 5, in nats.
    delta : float
        Total δ of Alg 5, in (0, 1).
    accounting : str
        ``"pdpkit"``, ``"source"`` or ``"whole"``.
    """
    from scipy import stats as _stats

    if accounting not in ACCOUNTINGS:
        raise ValueError(f"accounting must be one of {ACCOUNTINGS}; got {accounting!r}")
    if accounting == "pdpkit":
        e_s, d_s = eps / 4.0, delta / (4.0 + math.exp(eps / 4.0))
    elif accounting == "source":
        e_s, d_s = eps / 3.0, delta / (1.0 + math.exp(eps / 3.0) + math.exp(2.0 * eps / 3.0))
    else:
        e_s, d_s = eps, delta
    z = _stats.norm.isf(d_s / 2.0)
    return 2.0 * e_s / (1.0 + z * z)


def certificate_r2_nonprivate(eig_min: ArrayLike, eig_max: ArrayLike, *, n: ArrayLike, loss, norm_bound: float,
                              d: int, certificate: str, domain: str = "linf") -> np.ndarray:
    r"""**Non-private**: Alg 5's certificate :math:`r^2` at given (true) extreme eigenvalues of the summed Hessian.

    ``certificate="pdpkit"``: :func:`pdpkit.stability.modulus_ratio_bound` with add/remove
    neighbours (what :func:`pdpkit.single.release_linear_functional` tests);
    ``"printed"``: :func:`pdpkit.stability.modulus_ratio_bound_as_printed`, the source's (13)–(14)
    with its replace-one neighbours. Vectorized over ``n`` (with ``eig_min``, ``eig_max``).

    Parameters
    ----------
    eig_min, eig_max : array_like
        Smallest and largest eigenvalue of the summed data Hessian at θ(D), one per ``n``.
    n : array_like
        The sample sizes.
    loss : object
        The GLM loss.
    norm_bound : float
        Public bound r on the row norms.
    d : int
        Dimension d.
    certificate : str
        ``"pdpkit"`` or ``"printed"``.
    domain : str, default 'linf'
        ``"linf"`` (rows in a cube: Prop 8.3, (14b)) or ``"l2"`` (Prop 8.2, (14a)).
    """
    from .. import stability as st

    if certificate not in CERTIFICATES:
        raise ValueError(f"certificate must be one of {CERTIFICATES}; got {certificate!r}")
    lo, hi, nn = np.broadcast_arrays(np.asarray(eig_min, float), np.asarray(eig_max, float),
                                     np.asarray(n, dtype=np.int64))
    if certificate == "pdpkit":
        c = st.stability_constants(loss, norm_bound=norm_bound)
        return np.asarray(st.modulus_ratio_bound(lo, hi, c, domain=domain, d=d), dtype=float)
    c = st.stability_constants(loss, norm_bound=norm_bound, neighbours="replace")
    return np.array([st.modulus_ratio_bound_as_printed(a, b, c, n=int(k), domain=domain, d=d)
                     for a, b, k in zip(lo.ravel(), hi.ravel(), nn.ravel(), strict=True)]).reshape(lo.shape)


def certified_sample_size_nonprivate(eig_min_avg: float, eig_max_avg: float, *, loss, norm_bound: float, d: int,
                                     eps: float, delta: float, certificate: str, accounting: str,
                                     domain: str = "linf", n_max: float = 1e12) -> float:
    r"""**Non-private**: the smallest n at which Alg 5's test passes when the Hessian is :math:`n` times a fixed one.

    The summed Hessian of n records drawn from a population with averaged Hessian eigenvalues
    ``eig_min_avg``, ``eig_max_avg`` has extreme eigenvalues close to :math:`n` times them (exactly
    so in expectation at the population's θ); at these *true* eigenvalues — the most favourable
    certificates Algs 2 and 4 could return — the smallest n (to 0.1%) with
    :func:`certificate_r2_nonprivate` :math:`\le` :func:`release_threshold`. ``inf`` if none up to ``n_max``.

    Parameters
    ----------
    eig_min_avg, eig_max_avg : float
        Extreme eigenvalues of the averaged Hessian.
    loss, norm_bound, d, certificate, domain
        As in :func:`certificate_r2_nonprivate`.
    eps, delta, accounting
        As in :func:`release_threshold`.
    n_max : float, default 1e12
        The largest n searched.
    """
    thr = release_threshold(eps, delta, accounting=accounting)

    def passes(log_n: float) -> bool:
        n = round(10.0 ** log_n)
        r2 = certificate_r2_nonprivate(n * eig_min_avg, n * eig_max_avg, n=n, loss=loss, norm_bound=norm_bound, d=d,
                                       certificate=certificate, domain=domain)
        return bool(r2 <= thr)

    grid = np.linspace(1.0, math.log10(n_max), 111)
    n_grid = np.array([round(10.0 ** g) for g in grid])  # the n of passes(g), evaluated together
    r2_grid = certificate_r2_nonprivate(n_grid * eig_min_avg, n_grid * eig_max_avg, n=n_grid, loss=loss,
                                        norm_bound=norm_bound, d=d, certificate=certificate, domain=domain)
    ok = [bool(v <= thr) for v in r2_grid]
    if not any(ok):
        return math.inf
    j = ok.index(True)
    if j == 0:
        return 10.0
    lo, hi = grid[j - 1], grid[j]
    while hi - lo > 4e-4:  # the certificate decreases in n: bisection on log10 n
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if passes(mid) else (mid, hi)
    return float(round(10.0 ** hi))


def adult_population_eigs_nonprivate() -> tuple[float, float, int, int]:
    r"""**Non-private**: extreme eigenvalues of Adult's averaged logistic Hessian at the population θ, N and d.

    The 45,222 complete rows of :func:`adult_features`, unregularized logistic loss; a bootstrap
    sample of size n has summed Hessian :math:`\approx n` times this one.
    """
    from ..losses import logistic

    X, y, _, th = _adult_population()
    ev = np.linalg.eigvalsh(_hessian(X, logistic.d2(X @ th, y), 0.0), UPLO="U") / X.shape[0]
    return float(ev[0]), float(ev[-1]), int(X.shape[0]), int(X.shape[1])


# ------------------------------------------- Figs 6–7: a "local" curve gated on Alg 2 alone
def _alg2_gate_probability(eig_min: ArrayLike, *, consts, eps: float, delta: float) -> np.ndarray:
    r"""Exact probability that Alg 2 at :math:`(\epsilon, \delta)` returns :math:`\hat\lambda > 0`.

    With :math:`N` the length of recursion (10) from ``eig_min`` and
    :math:`k = \log(1/2\delta)/\epsilon`, Alg 2 returns the inverse at
    :math:`m = \max(0, \lfloor N + W - k\rfloor)`, :math:`W \sim \mathrm{Lap}(1/\epsilon)`, and
    :math:`\hat\lambda > 0` exactly when :math:`m \ge 1`, i.e. :math:`W \ge k + 1 - N`:
    probability :math:`\tfrac12 e^{-\epsilon(k + 1 - N)}` when :math:`N < k + 1`, else
    :math:`1 - \tfrac12 e^{-\epsilon(N - k - 1)}`. Non-private (a function of the data's
    :math:`\lambda_{\min}`).

    Parameters
    ----------
    eig_min : array_like
        Smallest eigenvalue(s) of the data Hessian (without λ).
    consts : StabilityConstants
        :func:`pdpkit.stability.stability_constants` of the loss.
    eps : float
        ε of Alg 2 (its whole budget).
    delta : float
        δ of Alg 2.
    """
    from .. import stability as st

    N = np.asarray(st.qsc_lambda_min_recursion(consts).length(np.maximum(np.asarray(eig_min, float), 0.0)), float)
    a = math.log(1.0 / (2.0 * delta)) / eps + 1.0 - N
    return np.where(a > 0, 0.5 * np.exp(-eps * np.abs(a)), 1.0 - 0.5 * np.exp(-eps * np.abs(a)))


def adult_gated_errors_uncertified(ns: Sequence[int], *, eps: Sequence[float] = (2.0, 4.0, 8.0),
                                   features: Sequence[str] = ("sex", "schooling"), delta: float = 1e-6,
                                   reps: int = 3, draws: int = 200, gate_only: bool = False, rng=None,
                                   progress: bool | None = None) -> dict:
    r"""Figures 6–7 with a "local" release gated on Alg 2 alone — **not certified** — next to Alg 5 and ObjPert.

    The gated release: :math:`\hat\lambda` = Alg 2 at :math:`(\epsilon/2, \delta/2)`; if
    :math:`\hat\lambda > 0`, :math:`T = \theta_j(D) + \sigma(\epsilon/2, \delta/2)\,\omega(e_j \mid D)\,Z`
    with :math:`\omega` the local modulus (11) at the data's own Hessian
    (:func:`pdpkit.stability.local_modulus`, cube domain), else ObjPert at
    :math:`(\epsilon/2, \delta/2)` (the source's fallback, §4.2). It skips Alg 4 and the
    variance test (14): the noise scale :math:`\omega(e_j \mid D)` is released without a
    certificate that it changes little between neighbours, so Cor 3.6 does not cover it and it
    carries no :math:`(\epsilon, \delta)` guarantee. It is the reading of the source's Figs 6–7
    under which the local curve takes over where Alg 2's recursion length first exceeds
    :math:`\log(1/\delta)/(\epsilon/2) + 1`.

    One bootstrap sample of Adult (:func:`adult_features`, logistic loss, unregularized) and one
    fit per (n, replicate), shared by every ε and feature; ObjPert at :math:`\epsilon` and at
    :math:`\epsilon/2` is fitted once per (sample, ε) and read at each feature's coordinate.
    Errors are against the sample's :math:`\theta_j(D)`, as in :func:`adult_errors`.

    Returns a dict: ``ns``, ``eps``, ``features``, ``delta``; ``errors[(feature, eps)][method]``
    of shape ``(len(ns), reps)``, methods ``"alg5"`` (ObjPert at :math:`(\epsilon/2, \delta/2)`
    when :math:`\bot`), ``"gated"`` (same fallback) and ``"objpert"``; ``bottom[(feature, eps)]``
    the fraction of Alg 5's :math:`\bot` per n; ``gate[eps]`` the fraction of ``draws`` Alg 2
    draws at :math:`(\epsilon/2, \delta/2)` with :math:`\hat\lambda > 0`, and ``gate_exact[eps]``
    its exact probability: with :math:`N` the length of recursion (10) from the sample's
    :math:`\lambda_{\min}` and :math:`k = \log(1/\delta)/(\epsilon/2)`, :math:`\hat\lambda > 0`
    exactly when :math:`N + W - k \ge 1`, :math:`W \sim \mathrm{Lap}(2/\epsilon)`; both of
    shape ``(len(ns), reps)``; ``recursion_length`` (:math:`N`) and ``lambda_min`` per sample.
    With ``gate_only`` the releases are skipped (``errors`` and ``bottom`` are empty).

    Parameters
    ----------
    ns : Sequence[int]
        The sample sizes n.
    eps : Sequence[float], default (2.0, 4.0, 8.0)
        The total ε of each release, in nats.
    features : Sequence[str], default ('sex', 'schooling')
        The released coefficients.
    delta : float, default 1e-06
        δ of the (ε, δ) budget, in (0, 1).
    reps : int, default 3
        Bootstrap samples per n.
    draws : int, default 200
        Alg 2 draws per sample and ε for the gate fraction.
    gate_only : bool, default False
        Only the gate fractions and recursion lengths (no releases).
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    progress : bool, optional
        A tqdm progress bar (``None``: only when a person watches; ``PDPKIT_PROGRESS=0`` turns it off).
    """
    from .. import stability as st
    from ..losses import logistic
    from ..single import noise_multiplier

    gen = as_generator(rng)
    X_all, y_all, names, _ = _adult_population()
    n_all, d = X_all.shape
    R = math.sqrt(d)
    eps = tuple(float(e) for e in eps)
    features = tuple(features)
    cols = {f: names.index(f) for f in features}
    consts = st.stability_constants(logistic, norm_bound=R)
    rec = st.qsc_lambda_min_recursion(consts)
    G = len(ns)
    methods = ("alg5", "gated", "objpert")
    keys = [] if gate_only else [(f, e) for f in features for e in eps]
    errors = {key: {m: np.full((G, reps), np.nan) for m in methods} for key in keys}
    bottom = {key: np.zeros((G, reps)) for key in keys}
    gate = {e: np.full((G, reps), np.nan) for e in eps}
    gate_exact = {e: np.full((G, reps), np.nan) for e in eps}
    length = np.zeros((G, reps), dtype=np.int64)
    lam_min = np.zeros((G, reps))
    jobs = [(i, k) for i in range(G) for k in range(reps)]
    for i, k in _progress(jobs, total=len(jobs), desc="Adult, gated", progress=progress):
        n = int(ns[i])
        idx = gen.integers(0, n_all, size=n)
        X, y = X_all[idx], y_all[idx]
        fit = data_fit_nonprivate(X, y, logistic, lam=0.0, norm_bound=R)
        th = fit.theta
        eig_min = max(float(fit.eigenvalues[0]), 0.0)
        length[i, k] = rec.length(eig_min)
        lam_min[i, k] = eig_min
        omega = {} if gate_only else {f: float(st.local_modulus(fit.hessian, np.eye(d)[j], consts, domain="linf"))
                                      for f, j in cols.items()}
        for e in eps:
            e2, d2 = e / 2.0, delta / 2.0
            lam_hat = np.asarray(st.recursive_release(eig_min, rec, e2, d2, rng=gen, size=draws).bound, float)
            gate[e][i, k] = float(np.mean(lam_hat > 0))
            gate_exact[e][i, k] = float(_alg2_gate_probability(eig_min, consts=consts, eps=e2, delta=d2))
            if gate_only:
                continue
            lam_h = float(st.recursive_release(eig_min, rec, e2, d2, rng=gen).bound)  # the gate of this release
            lam_o, sig_o = _objpert_calibration(e, delta, R, logistic.smoothness * R * R)
            obj = objpert_fit(X, y, logistic, lam=lam_o, sigma=sig_o, rng=gen, norm_bound=R).theta_released
            lam_f, sig_f = _objpert_calibration(e2, d2, R, logistic.smoothness * R * R)
            fb = objpert_fit(X, y, logistic, lam=lam_f, sigma=sig_f, rng=gen, norm_bound=R).theta_released
            sigma = float(noise_multiplier(e2, d2))
            for f, j in cols.items():
                u = np.eye(d)[j]
                loc = release_linear_functional(X, y, logistic, u, e, delta, cap=n * logistic.smoothness * R * R,
                                                domain="linf", lam=0.0, norm_bound=R, rng=gen, fit=fit)
                bottom[(f, e)][i, k] = 0.0 if loc.released else 1.0
                v5 = loc.value if loc.released else fb[j]
                if lam_h > 0 and math.isfinite(omega[f]):
                    vg = th[j] + sigma * omega[f] * gen.standard_normal()
                else:
                    vg = fb[j]
                for m, v in (("alg5", v5), ("gated", vg), ("objpert", obj[j])):
                    errors[(f, e)][m][i, k] = abs(float(v) - th[j])
    return {"ns": np.asarray(ns), "eps": eps, "features": features, "delta": float(delta), "errors": errors,
            "bottom": {key: v.mean(axis=1) for key, v in bottom.items()}, "gate": gate, "gate_exact": gate_exact,
            "recursion_length": length, "lambda_min": lam_min}


# ------------------------------------------------------- accuracy claims: Thm 1, Thm 2, Prop 7.1
ALGORITHMS = ("alg3", "alg5", "alg7")


@dataclass(frozen=True)
class AccuracyRates:
    r"""Errors of a released estimate against :math:`\theta(D)` over :math:`n`, and the claimed rate's data-dependent factor.

    ``error[i, k]`` is the mean over ``draws`` noise draws of :math:`\|\hat\theta - \theta(D)\|_2`
    (Alg 3, Alg 7) or :math:`|T - \theta_1(D)|` (Alg 5) on the ``k``-th data set of size
    ``ns[i]`` (NaN if nothing was released); ``rate[i, k]`` the factor of the claimed bound
    that depends on the data: :math:`G_0/\lambda_{\min}` (Thm 1, Prop 7.1; the source's
    :math:`G_0/(n\lambda_{\min}(P_n))` in its averaged convention) or
    :math:`\sup_{x \in [-1,1]^d} |u^\top H^{-1}x| = \|H^{-1}u\|_1` (Thm 2; the source's
    :math:`\frac1n\sup_x |u^\top(P_n\ddot\ell)^{-1}x|`), all in the summed convention.

    Attributes
    ----------
    ns : numpy.ndarray
        The sample sizes n.
    algorithm : str
        ``"alg3"``, ``"alg5"`` or ``"alg7"``.
    error : numpy.ndarray
        Mean error per data set, shape (len(ns), reps).
    rate : numpy.ndarray
        The claimed rate's data factor, shape (len(ns), reps).
    released : numpy.ndarray
        Fraction of draws released, shape (len(ns), reps).
    """

    ns: np.ndarray
    algorithm: str
    error: np.ndarray
    rate: np.ndarray
    released: np.ndarray

    def slope(self) -> float:
        """Least-squares slope of log(mean error) against log n over the points with a release."""
        m = np.nanmean(self.error, axis=1)
        ok = np.isfinite(m)
        return float(np.polyfit(np.log(self.ns[ok]), np.log(m[ok]), 1)[0])


def accuracy_against_n(ns: Sequence[int], *, algorithm: str, d: int = 3, eps: float = 2.0, delta: float = 1e-6,
                       reps: int = 3, draws: int = 200, rng=None) -> AccuracyRates:
    r"""Errors of Alg 3 (Thm 1), Alg 5 (Thm 2) or Alg 7 (Prop 7.1) over :math:`n` on §4.1's robust regression.

    Each data set is released ``draws`` times (the test and the noise drawn afresh each time);
    ``error`` averages the released draws. Thm 1, Thm 2 and Prop 7.1 bound the error by a
    constant times ``rate`` (times :math:`\frac1\epsilon\sqrt{\log\frac1\delta}` and a
    dimension factor), and ``rate`` falls like :math:`1/n` since :math:`\lambda_{\min}` grows
    like :math:`n`: the claimed rate is :math:`n^{-1}` at fixed :math:`d, \epsilon, \delta`.
    Alg 5 releases the first coordinate on the cube (``domain="linf"``).

    Parameters
    ----------
    ns : Sequence[int]
        The sample sizes n.
    algorithm : str
        ``"alg3"``, ``"alg5"`` or ``"alg7"``.
    d : int, default 3
        Dimension d.
    eps : float, default 2.0
        ε of the (ε, δ) guarantee, in nats.
    delta : float, default 1e-06
        δ of the (ε, δ) guarantee, in (0, 1).
    reps : int, default 3
        Data sets per n.
    draws : int, default 200
        Releases per data set.
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}; got {algorithm!r}")
    from ..single import smooth_output_perturbation

    gen = as_generator(rng)
    ns = np.asarray(ns, dtype=int)
    shape = (ns.size, reps)
    error, rate, released = np.full(shape, np.nan), np.full(shape, np.nan), np.zeros(shape)
    u = np.zeros(d)
    u[0] = 1.0
    for i, n in enumerate(ns):
        for k in range(reps):
            data = make_robust_regression(int(n), d=d, rng=gen)
            R = data.norm_bound
            fit = data_fit_nonprivate(data.X, data.y, robust_log, lam=0.0, norm_bound=R)
            theta, ev = fit.theta, fit.eigenvalues
            kw = dict(lam=0.0, norm_bound=R, rng=gen, size=draws, fit=fit)
            if algorithm == "alg3":
                rel = local_output_perturbation(data.X, data.y, robust_log, eps, delta, **kw)
            elif algorithm == "alg7":
                rel = smooth_output_perturbation(data.X, data.y, robust_log, eps, delta, n_max=int(n), **kw)
            else:
                rel = release_linear_functional(data.X, data.y, robust_log, u, eps, delta, domain="linf",
                                                cap=int(n) * robust_log.smoothness * R * R, **kw)
            ok = np.asarray(rel.released, dtype=bool)
            released[i, k] = ok.mean()
            if algorithm == "alg5":
                rate[i, k] = float(np.abs(np.linalg.solve(fit.hessian, u)).sum())
                errs = np.abs(np.asarray(rel.value, dtype=float)[ok] - theta[0])
            else:
                rate[i, k] = robust_log.lipschitz * R / float(ev[0])
                errs = np.linalg.norm(np.asarray(rel.value, dtype=float)[ok] - theta, axis=1)
            if errs.size:
                error[i, k] = float(errs.mean())
    return AccuracyRates(ns=ns, algorithm=algorithm, error=error, rate=rate, released=released)


def rate_consistent(ns: ArrayLike, errors: ArrayLike, *, claimed_slope: float, tol: float) -> bool:
    r"""Whether the fitted log–log slope of ``errors`` (mean over the last axis) against ``ns`` is within ``tol`` of ``claimed_slope``.

    Parameters
    ----------
    ns : array_like
        The sample sizes.
    errors : array_like
        Errors, shape (len(ns),) or (len(ns), reps).
    claimed_slope : float
        The claimed exponent of n (−1 for :math:`1/n`).
    tol : float
        The allowed distance between the fitted and the claimed slope.
    """
    e = np.asarray(errors, dtype=float)
    m = np.nanmean(e, axis=-1) if e.ndim > 1 else e
    ok = np.isfinite(m)
    slope = float(np.polyfit(np.log(np.asarray(ns, dtype=float)[ok]), np.log(m[ok]), 1)[0])
    return abs(slope - claimed_slope) <= tol
