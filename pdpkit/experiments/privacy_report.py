r"""Experiments of the chapter "The privacy report".

* :func:`report_vs_truth` — Redberg & Wang 2021, main text Fig 2 and App. B.3 (Figs 7–10):
  the exact ex-post pDP :math:`\epsilon_1` of every member of a data set against the
  privately released bounds :math:`\bar\epsilon_1^P` of :func:`pdpkit.report.privacy_report`.
* :func:`worst_case_report` — App. B.1 (Figs 4–5) with the data-dependent curves: the
  worst case over the members as :math:`n` or :math:`d` varies.
* :func:`budget_allocation` — App. B.2 (Fig 6): one DP budget shared between ObjPert,
  the Hessian release and the gradient release.
* :func:`report_coverage_scenarios` — coverage of the report by simulation for members,
  non-members and an outlier, with Clopper–Pearson intervals
  (:func:`pdpkit.audit.clopper_pearson`).

The exact :math:`\epsilon_1` are functions of the data and are not private; they are what
the report bounds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from .._progress import progress as _progress
from .._validation import as_generator, check_int_at_least, check_positive, check_probability
from ..audit import clopper_pearson
from ..datasets import make_synthetic_logistic
from ..gaussian import gaussian_sigma
from ..goe import goe_norm_bound
from ..losses import GLMLoss, get_loss
from ..objpert import ex_post_pdp, ex_post_pdp_general, ex_post_pdp_terms, objpert_calibrate_classic, objpert_fit, released_state_nonprivate
from ..report import privacy_report, rho_parts

__all__ = [
    "data_dependent_lambda",
    "ReportVsTruth",
    "report_vs_truth",
    "WorstCaseReport",
    "worst_case_report",
    "BudgetAllocation",
    "budget_allocation",
    "BudgetAllocationDraws",
    "budget_allocation_draws",
    "CoverageScenarios",
    "report_coverage_scenarios",
    "group_gradients",
    "GroupCoverage",
    "group_report_coverage",
]

_METHODS = ("data-independent", "data-dependent", "adaptive")


def _sigmas(method: str, sigmas: Mapping[str, float | None]) -> dict[str, float | None]:
    if method == "data-independent":
        return {}
    out = {k: sigmas.get(k) for k in ("sigma_gradient", "sigma_hessian", "sigma_lambda_min")}
    if method == "data-dependent":
        out["sigma_lambda_min"] = None
    return out


def _check_methods(methods: Sequence[str]) -> tuple[str, ...]:
    methods = tuple(methods)
    if not methods or any(m not in _METHODS for m in methods):
        raise ValueError(f"methods must be a non-empty subset of {_METHODS}; got {methods!r}")
    return methods


def data_dependent_lambda(*, lam: float, d: int, sigma_hessian: float, rho: float) -> float:
    r""":math:`\max\{\lambda, 2\tau\sigma_H\}`: the smallest regularization at least ``lam`` for which
    the data-dependent report (Prop 21) applies, with :math:`\tau` as in
    :func:`pdpkit.report.privacy_report` (Lemma 20 at the Hessian's share of ``rho``).

    A larger :math:`\lambda` at the same :math:`\sigma` keeps ObjPert's DP guarantee.

    Parameters
    ----------
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    d : int
        Dimension d (number of features).
    sigma_hessian : float
        Noise scale σ_H of the released Hessian (Analyze-Gauss with GOE noise).
    rho : float
        Failure probability ρ of the high-probability bound, in (0, 1).
    """
    tau = float(goe_norm_bound(d, rho=rho_parts(rho, method="data-dependent")["hessian"]))
    return max(float(lam), 2.0 * tau * float(sigma_hessian))


# ======================================================== Fig 2, Figs 7-10 (App. B.3)
@dataclass(frozen=True)
class ReportVsTruth:
    r"""Exact ex-post pDP of every member against the released bounds (Fig 2, Figs 7–10).

    Attributes
    ----------
    eps1 : numpy.ndarray
        :math:`\epsilon_1(\theta^P, D, D_{-z})` of every member (exact, not private).
    bounds : dict
        ``{method: bound per member}`` from :meth:`pdpkit.report.PrivacyReport.epsilon_bound`.
    leverage : dict
        ``{method: leverage bound per member}`` (:meth:`~pdpkit.report.PrivacyReport.leverage_bound`).
    leverage_true : numpy.ndarray
        :math:`x^\top H^{-1}x` of every member.
    overhead_dp : dict
        ``{method: (ε at delta) of the report's releases}`` (:meth:`~pdpkit.report.PrivacyReport.dp_epsilon`).
    lam, sigma, rho, delta : float
    estimator : dict
        ``{method: "standard" | "regularized" | None}``.
    """

    eps1: np.ndarray
    bounds: dict
    leverage: dict
    leverage_true: np.ndarray
    overhead_dp: dict
    lam: float
    sigma: float
    rho: float
    delta: float
    estimator: dict

    def ratio(self, method: str) -> np.ndarray:
        r""":math:`\bar\epsilon_1^P / \epsilon_1` per member.

        Parameters
        ----------
        method : str
            The report's method (a key of ``bounds``).
        """
        return self.bounds[method] / self.eps1


def report_vs_truth(X: Any, y: Any, loss: str | GLMLoss, *, lam: float, sigma: float,
                    methods: Sequence[str] = ("data-independent", "data-dependent"),
                    sigma_gradient: float | None = None, sigma_hessian: float | None = None,
                    sigma_lambda_min: float | None = None, rho: float = 0.05, delta: float = 1e-5,
                    uniform: bool = False, rng: int | np.random.Generator | None = None) -> ReportVsTruth:
    r"""Fit ObjPert once and compare every member's exact :math:`\epsilon_1` with each report's bound.

    One fit (:func:`pdpkit.objpert.objpert_fit`), then one :func:`pdpkit.report.privacy_report`
    per method (noise drawn from ``rng`` in the order of ``methods``). The bounds are per
    target (failure probability ``rho`` each), or with ``uniform=True`` jointly for all members
    (Prop 15). Members are removals (:math:`D_{-z}`).

    Parameters
    ----------
    X : Any
        Feature rows, shape (n, d).
    y : Any
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    loss : str | GLMLoss
        The GLM loss: a :class:`pdpkit.losses.GLMLoss` or its name (``"logistic"``, ``"squared"``, ``"robust_log"``, ``"huber"``).
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    sigma_gradient : float, optional
        Noise scale σ₂ of the released gradient inner products.
    sigma_hessian : float, optional
        Noise scale σ_H of the released Hessian (Analyze-Gauss with GOE noise).
    sigma_lambda_min : float, optional
        Noise scale of the released smallest eigenvalue.
    rho : float, default 0.05
        Failure probability ρ of the high-probability bound, in (0, 1).
    delta : float, default 1e-05
        δ of the (ε, δ) guarantee, in (0, 1).
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    methods : Sequence[str], optional
        The report methods to compare.
    uniform : bool, default False
        Bounds joint over all members (Prop 15) instead of per target.
    """
    loss = get_loss(loss)
    methods = _check_methods(methods)
    lam = float(check_positive(lam, "lam"))
    sigma = float(check_positive(sigma, "sigma"))
    rho = float(check_probability(rho, "rho"))
    delta = float(check_probability(delta, "delta"))
    gen = as_generator(rng)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    fit = objpert_fit(X, y, loss, lam=lam, sigma=sigma, rng=gen)
    at_release = released_state_nonprivate(fit, X, y)  # the report bounds the loss at the released point
    eps1 = np.asarray(ex_post_pdp(at_release, X, y, X, y, member=True), dtype=np.float64)
    sig = dict(sigma_gradient=sigma_gradient, sigma_hessian=sigma_hessian, sigma_lambda_min=sigma_lambda_min)
    bounds, lev, over, est = {}, {}, {}, {}
    for m in methods:
        rep = privacy_report(fit, X, y, method=m, rho=rho, rng=gen, **_sigmas(m, sig))
        bounds[m] = np.asarray(rep.epsilon_bound(X, y, uniform=bool(uniform)), dtype=np.float64)
        lev[m] = np.asarray(rep.leverage_bound(X), dtype=np.float64)
        over[m] = float(rep.dp_epsilon(delta))
        est[m] = getattr(rep, "estimator", None)
    d2 = loss.d2(X @ at_release.theta, y)
    H = (X * d2[:, None]).T @ X + lam * np.eye(X.shape[1])
    lev_true = np.einsum("ij,ji->i", X, np.linalg.solve(H, X.T))
    return ReportVsTruth(eps1=eps1, bounds=bounds, leverage=lev, leverage_true=lev_true, overhead_dp=over,
                         lam=lam, sigma=sigma, rho=rho, delta=delta, estimator=est)


# ============================================================= Figs 4-5 (App. B.1)
@dataclass(frozen=True)
class WorstCaseReport:
    r"""Worst case over the members as :math:`n` or :math:`d` varies (Figs 4–5).

    Arrays have shape ``(len(values), n_repeats)``.

    Attributes
    ----------
    parameter : str
        ``"n"`` or ``"d"``.
    values : numpy.ndarray
    worst_pdp : numpy.ndarray
        :math:`\max_{z \in D}\epsilon_1`.
    worst_bound : dict
        ``{method: max over members of the bound}``.
    covered : dict
        ``{method: bound >= eps_1 for every member}`` (boolean arrays).
    """

    parameter: str
    values: np.ndarray
    worst_pdp: np.ndarray
    worst_bound: dict
    covered: dict


def worst_case_report(parameter: str, values: Sequence[int], fixed: int, *, lam: float, sigma: float,
                      methods: Sequence[str] = ("data-independent", "adaptive"),
                      sigma_gradient: float | None = None, sigma_hessian: float | None = None,
                      sigma_lambda_min: float | None = None, rho: float = 0.05, n_repeats: int = 1,
                      uniform: bool = True, rng: int | np.random.Generator | None = None,
                      progress: bool | None = None) -> WorstCaseReport:
    r"""Worst ex-post pDP and worst released bound over the members, vs :math:`n` or :math:`d`.

    Synthetic logistic regression (:func:`pdpkit.datasets.make_synthetic_logistic`, unit-norm
    rows); ``parameter="n"`` varies the size with ``fixed`` the dimension, ``"d"`` the reverse.
    The bounds are joint over the members (``uniform=True``, Prop 15) by default, so that their
    maximum is a bound on the maximum of :math:`\epsilon_1` with probability :math:`1 - \rho`.

    Parameters
    ----------
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    sigma_gradient : float, optional
        Noise scale σ₂ of the released gradient inner products.
    sigma_hessian : float, optional
        Noise scale σ_H of the released Hessian (Analyze-Gauss with GOE noise).
    sigma_lambda_min : float, optional
        Noise scale of the released smallest eigenvalue.
    rho : float, default 0.05
        Failure probability ρ of the high-probability bound, in (0, 1).
    n_repeats : int, default 1
        Repetitions per point of the sweep.
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    progress : bool, optional
        A tqdm progress bar (``None``: only when a person watches; ``PDPKIT_PROGRESS=0`` turns it off).
    parameter : str
        ``"n"`` or ``"d"``: the quantity to vary.
    values : Sequence[int]
        Its values.
    fixed : int
        The value of the other one.
    methods : Sequence[str], optional
        The report methods to compare.
    uniform : bool, default True
        Bounds joint over all members (Prop 15) instead of per target.
    """
    if parameter not in ("n", "d"):
        raise ValueError(f"parameter must be 'n' or 'd'; got {parameter!r}")
    methods = _check_methods(methods)
    vals = [check_int_at_least(v, "values", 1) for v in values]
    if not vals:
        raise ValueError("values must contain at least one value")
    fixed = check_int_at_least(fixed, "fixed", 1)
    n_repeats = check_int_at_least(n_repeats, "n_repeats", 1)
    gen = as_generator(rng)
    k = len(vals)
    worst = np.empty((k, n_repeats))
    wb = {m: np.empty((k, n_repeats)) for m in methods}
    cov = {m: np.empty((k, n_repeats), dtype=bool) for m in methods}
    jobs = [(i, r) for i in range(k) for r in range(n_repeats)]
    for i, r in _progress(jobs, total=len(jobs), desc=f"worst case vs {parameter}", progress=progress):
        n, d = (vals[i], fixed) if parameter == "n" else (fixed, vals[i])
        data = make_synthetic_logistic(n, d=d, rng=gen)
        res = report_vs_truth(data.X, data.y, "logistic", lam=lam, sigma=sigma, methods=methods,
                              sigma_gradient=sigma_gradient, sigma_hessian=sigma_hessian,
                              sigma_lambda_min=sigma_lambda_min, rho=rho, uniform=uniform, rng=gen)
        worst[i, r] = res.eps1.max()
        for m in methods:
            wb[m][i, r] = res.bounds[m].max()
            cov[m][i, r] = bool(np.all(res.bounds[m] >= res.eps1))
    return WorstCaseReport(parameter=parameter, values=np.array(vals), worst_pdp=worst, worst_bound=wb,
                           covered=cov)


# =================================================================== Fig 6 (App. B.2)
@dataclass(frozen=True)
class BudgetAllocation:
    r"""One DP budget shared between ObjPert, the Hessian and the gradient (Fig 6).

    Attributes
    ----------
    splits : numpy.ndarray
        Shape ``(k, 3)``: :math:`(\epsilon_1, \epsilon_H, \epsilon_g)` of each data-dependent run.
    eps_independent : float
        ObjPert's budget of the data-independent run.
    independent : ReportVsTruth
        ObjPert at ``eps_independent``, data-independent bound.
    dependent : tuple of ReportVsTruth
        One per split: ObjPert at :math:`\epsilon_1` with :math:`\lambda` raised to
        :func:`data_dependent_lambda`, data-dependent report.
    lam : numpy.ndarray
        :math:`\lambda` of each data-dependent run.
    """

    splits: np.ndarray
    eps_independent: float
    independent: ReportVsTruth
    dependent: tuple
    lam: np.ndarray


def budget_allocation(X: Any, y: Any, splits: Sequence[Sequence[float]], *, eps_independent: float = 1.0,
                      delta: float = 1e-5, rho: float = 0.05, rng: int | np.random.Generator | None = None,
                      progress: bool | None = None) -> BudgetAllocation:
    r"""Redberg & Wang 2021, Appendix B.2 (Fig 6) for private logistic regression on ``X, y``.

    The data-independent run: ObjPert calibrated to ``(eps_independent, delta)``-DP by
    :func:`pdpkit.objpert.objpert_calibrate_classic` (Kifer et al.), nothing else released.
    Each data-dependent run :math:`(\epsilon_1, \epsilon_H, \epsilon_g)`: ObjPert at
    :math:`(\epsilon_1, \delta)`, the Hessian (Alg 6, sensitivity :math:`\beta/\sqrt2`) and the
    gradient (Alg 5, sensitivity :math:`L`) each a Gaussian mechanism calibrated tightly to
    :math:`(\epsilon_H, \delta)` and :math:`(\epsilon_g, \delta)`
    (:func:`pdpkit.gaussian.gaussian_sigma`); :math:`\lambda` is raised to
    :math:`2\tau\sigma_H` where needed (:func:`data_dependent_lambda`), which keeps ObjPert's
    guarantee. Rows must have norm at most 1.

    Parameters
    ----------
    X : Any
        Feature rows, shape (n, d).
    y : Any
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    delta : float, default 1e-05
        δ of the (ε, δ) guarantee, in (0, 1).
    rho : float, default 0.05
        Failure probability ρ of the high-probability bound, in (0, 1).
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    progress : bool, optional
        A tqdm progress bar (``None``: only when a person watches; ``PDPKIT_PROGRESS=0`` turns it off).
    splits : Sequence[Sequence[float]]
        Budget splits (ε₁, ε_H, ε_g) of the data-dependent runs.
    eps_independent : float, default 1.0
        ε of the data-independent run.
    """
    sp = np.asarray(splits, dtype=np.float64)
    if sp.ndim != 2 or sp.shape[1] != 3 or sp.shape[0] == 0 or not np.all(np.isfinite(sp)) or np.any(sp <= 0):
        raise ValueError(f"splits must be a non-empty (k, 3) array of positive budgets; got {np.shape(splits)}")
    delta = float(check_probability(delta, "delta"))
    gen = as_generator(rng)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    logistic = get_loss("logistic")
    L, beta = logistic.lipschitz, logistic.smoothness
    lam0, sig0 = objpert_calibrate_classic(eps_independent, delta, loss="logistic")
    indep = report_vs_truth(X, y, logistic, lam=lam0, sigma=sig0, methods=("data-independent",), rho=rho,
                            delta=delta, rng=gen)
    runs, lams = [], []
    for e1, eh, eg in _progress(sp, total=len(sp), desc="budget splits", progress=progress):
        lam1, sig1 = objpert_calibrate_classic(float(e1), delta, loss="logistic")
        s_h = float(gaussian_sigma(float(eh), delta=delta, sensitivity=beta / math.sqrt(2.0)))
        s_g = float(gaussian_sigma(float(eg), delta=delta, sensitivity=L))
        lam = data_dependent_lambda(lam=lam1, d=X.shape[1], sigma_hessian=s_h, rho=rho)
        lams.append(lam)
        runs.append(report_vs_truth(X, y, logistic, lam=lam, sigma=sig1, methods=("data-dependent",),
                                    sigma_hessian=s_h, sigma_gradient=s_g, rho=rho, delta=delta, rng=gen))
    return BudgetAllocation(splits=sp, eps_independent=float(eps_independent), independent=indep,
                            dependent=tuple(runs), lam=np.array(lams))


@dataclass(frozen=True)
class BudgetAllocationDraws:
    r"""Fig 6's data-dependent runs over independent draws, with the data-independent bound of the same model.

    Attributes
    ----------
    splits : numpy.ndarray
        Shape ``(k, 3)``: :math:`(\epsilon_1, \epsilon_H, \epsilon_g)` of each run.
    lam : numpy.ndarray
        :math:`\lambda` of each split (raised to :func:`data_dependent_lambda`).
    draws : int
        Independent draws (fit, Hessian, gradient) per split.
    covered_share : numpy.ndarray
        Shape ``(k, draws)``: the share of members whose data-dependent bound covers their
        exact :math:`\epsilon_1` in each draw.
    mean_covered : numpy.ndarray
        Shape ``(k,)``: the coverage over all members and draws.
    worst_person_rate : numpy.ndarray
        Shape ``(k,)``: the smallest per-member coverage rate over the draws.
    persons_below : numpy.ndarray
        Shape ``(k,)``: members whose coverage rate is significantly below :math:`1 - \rho`
        (the upper Clopper–Pearson limit at level 0.05/n, Bonferroni over the n members, is
        below it).
    dependent_median, independent_median, eps1_median : numpy.ndarray
        Shape ``(k, draws)``: the median over members of the data-dependent bound, of the
        data-independent bound of the **same** fit (same λ and σ), and of the exact
        :math:`\epsilon_1`.
    rho : float
    """

    splits: np.ndarray
    lam: np.ndarray
    draws: int
    covered_share: np.ndarray
    mean_covered: np.ndarray
    worst_person_rate: np.ndarray
    persons_below: np.ndarray
    dependent_median: np.ndarray
    independent_median: np.ndarray
    eps1_median: np.ndarray
    rho: float


def budget_allocation_draws(X: Any, y: Any, splits: Sequence[Sequence[float]], *, draws: int = 50,
                            delta: float = 1e-5, rho: float = 0.05, rng: int | np.random.Generator | None = None,
                            progress: bool | None = None) -> BudgetAllocationDraws:
    r"""Redberg & Wang 2021, Appendix B.2 (Fig 6) like for like: both bounds on one model, coverage over draws.

    Each split's data-dependent run (as :func:`budget_allocation`: ObjPert at
    :math:`(\epsilon_1, \delta)` with λ raised to :func:`data_dependent_lambda`, the Hessian
    and the gradient at :math:`(\epsilon_H, \delta)` and :math:`(\epsilon_g, \delta)`) is
    repeated ``draws`` times with fresh noise; each draw reports the data-dependent bound
    **and** the data-independent bound of the same fit (Thm 8 + Thm 9 at the same λ and σ),
    so the two compare one model, and every member's coverage is counted. A bound at level ρ
    covers each member with probability at least :math:`1 - \rho`; the members of one draw
    share its noise, so one draw's share may fall below it while every member's rate across
    draws does not. Rows must have norm at most 1.

    Parameters
    ----------
    X : Any
        Feature rows, shape (n, d).
    y : Any
        Labels ±1, one per row of ``X``.
    splits : Sequence[Sequence[float]]
        Budget splits (ε₁, ε_H, ε_g).
    draws : int, default 50
        Independent draws per split.
    delta : float, default 1e-05
        δ of each part.
    rho : float, default 0.05
        Failure probability ρ of each bound.
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy).
    progress : bool, optional
        A tqdm progress bar (``None``: only when a person watches).
    """
    sp = np.asarray(splits, dtype=np.float64)
    if sp.ndim != 2 or sp.shape[1] != 3 or sp.shape[0] == 0 or not np.all(np.isfinite(sp)) or np.any(sp <= 0):
        raise ValueError(f"splits must be a non-empty (k, 3) array of positive budgets; got {np.shape(splits)}")
    draws = check_int_at_least(draws, "draws", 2)
    delta = float(check_probability(delta, "delta"))
    rho = float(check_probability(rho, "rho"))
    gen = as_generator(rng)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    logistic = get_loss("logistic")
    k, n = sp.shape[0], X.shape[0]
    covered = np.zeros((k, draws))
    dep_med, ind_med, eps_med = (np.zeros((k, draws)) for _ in range(3))
    lams = np.zeros(k)
    jobs = [(i, r) for i in range(k) for r in range(draws)]
    hits = np.zeros((k, n), dtype=np.int64)
    for i, r in _progress(jobs, total=len(jobs), desc="budget splits x draws", progress=progress):
        e1, eh, eg = (float(v) for v in sp[i])
        lam1, sig1 = objpert_calibrate_classic(e1, delta, loss="logistic")
        s_h = float(gaussian_sigma(eh, delta=delta, sensitivity=logistic.smoothness / math.sqrt(2.0)))
        s_g = float(gaussian_sigma(eg, delta=delta, sensitivity=logistic.lipschitz))
        lam = data_dependent_lambda(lam=lam1, d=X.shape[1], sigma_hessian=s_h, rho=rho)
        lams[i] = lam
        res = report_vs_truth(X, y, logistic, lam=lam, sigma=sig1, methods=("data-independent", "data-dependent"),
                              sigma_hessian=s_h, sigma_gradient=s_g, rho=rho, delta=delta, rng=gen)
        b = res.bounds["data-dependent"]
        ok = b >= res.eps1
        hits[i] += ok
        covered[i, r] = ok.mean()
        dep_med[i, r] = np.median(b)
        ind_med[i, r] = np.median(res.bounds["data-independent"])
        eps_med[i, r] = np.median(res.eps1)
    upper = clopper_pearson(hits, draws, 0.10 / n)[1]  # one-sided 0.05/n for each member
    return BudgetAllocationDraws(splits=sp, lam=lams, draws=draws, covered_share=covered,
                                 mean_covered=hits.mean(axis=1) / draws, worst_person_rate=hits.min(axis=1) / draws,
                                 persons_below=(upper < 1.0 - rho).sum(axis=1), dependent_median=dep_med,
                                 independent_median=ind_med, eps1_median=eps_med, rho=rho)


# ============================================================ coverage by simulation
@dataclass(frozen=True)
class CoverageScenarios:
    r"""Coverage of the per-target bound by simulation.

    Attributes
    ----------
    scenarios : tuple of str
        ``("member", "non-member", "outlier")``.
    failures : numpy.ndarray
        Number of draws with :math:`\bar\epsilon_1^P < \epsilon_1`, per scenario.
    n_draws : int
    rho : float
    upper : numpy.ndarray
        One-sided :math:`1 - \alpha` Clopper–Pearson upper limit of the failure probability.
    median_ratio : numpy.ndarray
        Median of :math:`\bar\epsilon_1^P/\epsilon_1` per scenario.
    dominant : numpy.ndarray
        Fraction of draws in which the cross term :math:`|g^\top b|/\sigma^2` is the largest of
        the three terms of :math:`\epsilon_1` in absolute value, per scenario.
    log_term_printed_failures : numpy.ndarray
        Draws in which :math:`\log(1 + f''\bar\mu)` — the log term of a public draft of Alg 2 —
        is below the exact log-determinant term :math:`|\log(1 \pm f''\mu)|`, per scenario.
    cross_printed_failures : numpy.ndarray
        Draws in which Alg 4's printed :math:`|\bar g| = |f'\hat g^\top x + \sigma_2|f'|\|x\|q|`
        (without the inner absolute value) is below :math:`|f'x^\top b|`, per scenario (zeros
        when no gradient is released); ``q`` as in the report.
    """

    scenarios: tuple
    failures: np.ndarray
    n_draws: int
    rho: float
    upper: np.ndarray
    median_ratio: np.ndarray
    dominant: np.ndarray
    log_term_printed_failures: np.ndarray
    cross_printed_failures: np.ndarray


def report_coverage_scenarios(n: int, *, d: int, lam: float, sigma: float, method: str = "adaptive",
                              sigma_gradient: float | None = None, sigma_hessian: float | None = None,
                              sigma_lambda_min: float | None = None, rho: float = 0.1, n_draws: int = 200,
                              outlier_scale: float = 0.05, alpha: float = 0.05,
                              rng: int | np.random.Generator | None = None,
                              progress: bool | None = None) -> CoverageScenarios:
    r"""Simulated failure probability of :meth:`pdpkit.report.PrivacyReport.epsilon_bound` per target.

    Every draw: a fresh synthetic logistic data set whose last coordinate is shrunk by
    ``outlier_scale`` (a direction almost free of data), plus one *outlier* member
    :math:`x = e_d`; ObjPert; one report; the bound for a member (row 0), a fresh
    non-member, and the outlier, each compared with its exact :math:`\epsilon_1`
    (:func:`pdpkit.objpert.ex_post_pdp`). The outlier's log-determinant term
    :math:`-\log(1 - f''x^\top H^{-1}x)` is large when :math:`\lambda` is small.

    Parameters
    ----------
    n : int
        Number of records n.
    d : int
        Dimension d (number of features).
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    sigma_gradient : float, optional
        Noise scale σ₂ of the released gradient inner products.
    sigma_hessian : float, optional
        Noise scale σ_H of the released Hessian (Analyze-Gauss with GOE noise).
    sigma_lambda_min : float, optional
        Noise scale of the released smallest eigenvalue.
    rho : float, default 0.1
        Failure probability ρ of the high-probability bound, in (0, 1).
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    progress : bool, optional
        A tqdm progress bar (``None``: only when a person watches; ``PDPKIT_PROGRESS=0`` turns it off).
    method : str, default 'adaptive'
        The report method.
    n_draws : int, default 200
        Independent draws (data set, fit, report).
    outlier_scale : float, default 0.05
        Factor by which the last coordinate is shrunk (a direction almost free of data).
    alpha : float, default 0.05
        1 − confidence level of the Clopper–Pearson intervals.
    """
    n = check_int_at_least(n, "n", 2)
    d = check_int_at_least(d, "d", 2)
    n_draws = check_int_at_least(n_draws, "n_draws", 1)
    rho = float(check_probability(rho, "rho"))
    gen = as_generator(rng)
    sig = _sigmas(method, dict(sigma_gradient=sigma_gradient, sigma_hessian=sigma_hessian,
                               sigma_lambda_min=sigma_lambda_min))
    scen = ("member", "non-member", "outlier")
    fail = np.zeros(3, dtype=int)
    ratios = np.empty((n_draws, 3))
    dom = np.zeros(3)
    log_fail = np.zeros(3, dtype=int)
    cross_fail = np.zeros(3, dtype=int)
    e_d = np.zeros(d)
    e_d[-1] = 1.0
    shrink = np.ones(d)
    shrink[-1] = outlier_scale
    for t in _progress(range(n_draws), total=n_draws, desc="coverage", progress=progress):
        data = make_synthetic_logistic(n, d=d, rng=gen)
        X = data.X * shrink
        y = data.y.copy()
        X[-1] = e_d
        fit = objpert_fit(X, y, "logistic", lam=lam, sigma=sigma, rng=gen)
        new = make_synthetic_logistic(1, d=d, rng=gen)
        tx = np.vstack([X[0], new.X[0] * shrink, X[-1]])
        ty = np.array([y[0], new.y[0], y[-1]])
        member = np.array([True, False, True])
        at_release = released_state_nonprivate(fit, X, y)
        # the exact loss and its three terms in one pass (ex_post_pdp returns terms.epsilon)
        terms = ex_post_pdp_terms(at_release, X, y, tx, ty, member=member)
        eps1 = terms.epsilon
        rep = privacy_report(fit, X, y, method=method, rho=rho, rng=gen, **sig)
        bound = np.asarray(rep.epsilon_bound(tx, ty))
        fail += bound < eps1
        ratios[t] = bound / eps1
        mags = np.abs(np.column_stack([terms.log_det, terms.grad_sq, terms.cross]))
        dom += np.argmax(mags, axis=1) == 2
        d1, d2 = fit.loss.d1(tx @ fit.theta, ty), fit.loss.d2(tx @ fit.theta, ty)
        log_fail += np.log1p(d2 * np.asarray(rep.leverage_bound(tx))) < np.abs(terms.log_det)
        if rep.gradient_release is not None:
            q = float(stats.norm.isf(rep.rho_parts["cross"] / 4.0))
            xn = np.linalg.norm(tx, axis=1)
            printed = np.abs(d1 * (tx @ rep.gradient_release) + rep.sigma_gradient * np.abs(d1) * xn * q)
            cross_fail += printed < np.abs(d1 * (tx @ fit.b))
    _, hi = clopper_pearson(fail, n_draws, 2 * alpha)  # two-sided 1 - 2 alpha: one-sided 1 - alpha
    return CoverageScenarios(scenarios=scen, failures=fail, n_draws=n_draws, rho=rho, upper=np.asarray(hi),
                             median_ratio=np.median(ratios, axis=0), dominant=dom / n_draws,
                             log_term_printed_failures=log_fail, cross_printed_failures=cross_fail)


# ========================================== App. C.2: a smooth loss that is not a GLM
def group_gradients(theta: ArrayLike, X: ArrayLike, y: ArrayLike, groups: ArrayLike,
                    loss: str | GLMLoss = "logistic") -> tuple[np.ndarray, np.ndarray]:
    r"""Gradient and Hessian at ``theta`` of each person's loss when a person owns several rows.

    A person :math:`p` with rows :math:`\{i : \text{groups}_i = p\}` has the loss
    :math:`\ell(\theta; z_p) = \sum_{i \in p} f(x_i^\top\theta; y_i)`: smooth and convex, but not a
    GLM (its Hessian :math:`\sum_{i\in p} f''_i x_ix_i^\top` has rank up to the person's number of
    rows). Returns ``(g, G)`` with shapes ``(P, d)`` and ``(P, d, d)``, persons ordered
    ``0, …, P − 1`` (``groups`` holds integers in that range).

    Parameters
    ----------
    theta : ArrayLike
        The point :math:`\theta`, shape (d,).
    X : ArrayLike
        Feature rows, shape (n, d).
    y : ArrayLike
        Labels, one per row of ``X``.
    groups : ArrayLike
        Person index of each row, integers ``0 … P − 1``.
    loss : str | GLMLoss, default "logistic"
        The rows' GLM loss.
    """
    f = get_loss(loss) if isinstance(loss, str) else loss
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    groups = np.asarray(groups)
    if groups.shape != (X.shape[0],) or not np.issubdtype(groups.dtype, np.integer) or groups.min(initial=0) < 0:
        raise ValueError("groups must hold one non-negative integer person index per row of X")
    P = int(groups.max(initial=-1)) + 1
    z = X @ np.asarray(theta, dtype=np.float64)
    g = np.zeros((P, X.shape[1]))
    np.add.at(g, groups, f.d1(z, y)[:, None] * X)
    G = np.zeros((P, X.shape[1], X.shape[1]))
    np.add.at(G, groups, f.d2(z, y)[:, None, None] * np.einsum("ij,ik->ijk", X, X))
    return g, G


@dataclass(frozen=True)
class GroupCoverage:
    r"""Coverage of :meth:`pdpkit.report.PrivacyReport.epsilon_bound_general` for persons with several rows.

    Attributes
    ----------
    methods : tuple of str
        The report methods compared.
    failures : dict
        ``{method: number of (draw, person) pairs with bound < ε₁}``.
    trials : int
        Number of (draw, person) pairs per method.
    draw_failures : dict
        ``{method: number of draws in which some person is uncovered}``.
    median_ratio : dict
        ``{method: median of bound / ε₁ over all pairs}``.
    median_eps1 : float
        Median of the persons' exact ε₁.
    rho : float
    n_draws : int
    """

    methods: tuple
    failures: dict
    trials: int
    draw_failures: dict
    median_ratio: dict
    median_eps1: float
    rho: float
    n_draws: int

    def upper(self, *, method: str, alpha: float = 0.05) -> float:
        """One-sided 1 − α Clopper–Pearson upper limit of the per-person failure probability.

        Parameters
        ----------
        method : str
            A key of ``failures``.
        alpha : float, default 0.05
            1 − confidence level.
        """
        return float(clopper_pearson(self.failures[method], self.trials, 2 * alpha)[1])


def group_report_coverage(n_people: int, *, rows_per_person: int, d: int, lam: float, sigma: float,
                          methods: Sequence[str] = ("data-independent", "adaptive"),
                          sigma_gradient: float | None = None, sigma_hessian: float | None = None,
                          sigma_lambda_min: float | None = None, rho: float = 0.1, n_draws: int = 100,
                          rng: int | np.random.Generator | None = None) -> GroupCoverage:
    r"""Redberg & Wang 2021, Appendix C.2: the report's bound for a non-GLM loss, checked by simulation.

    One synthetic logistic data set (:func:`pdpkit.datasets.make_synthetic_logistic`) of
    ``n_people * rows_per_person`` unit rows, each person owning ``rows_per_person`` of them.
    Per draw: a fresh ObjPert fit (:func:`pdpkit.objpert.objpert_fit`), one report per method
    (:func:`pdpkit.report.privacy_report`), each person's gradient and Hessian at the released
    point (:func:`group_gradients`), the bound
    :meth:`~pdpkit.report.PrivacyReport.epsilon_bound_general` (per target, failure
    probability ``rho``) and the exact removal loss
    :func:`pdpkit.objpert.ex_post_pdp_general` (the log-determinant form of Thm 6).

    Parameters
    ----------
    n_people : int
        Number of persons.
    rows_per_person : int
        Rows per person (1: a GLM target).
    d : int
        Dimension d.
    lam : float
        Ridge coefficient λ > 0.
    sigma : float
        ObjPert's noise σ > 0.
    methods : Sequence[str], optional
        The report methods to compare.
    sigma_gradient : float, optional
        Noise scale σ₂ of the released gradient.
    sigma_hessian : float, optional
        Noise scale σ_H of the released Hessian.
    sigma_lambda_min : float, optional
        Noise scale of the released smallest eigenvalue.
    rho : float, default 0.1
        Failure probability ρ of the per-target bound.
    n_draws : int, default 100
        Number of independent fits.
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy).
    """
    methods = _check_methods(methods)
    n_people = check_int_at_least(n_people, "n_people", 2)
    k = check_int_at_least(rows_per_person, "rows_per_person", 1)
    n_draws = check_int_at_least(n_draws, "n_draws", 1)
    rho = float(check_probability(rho, "rho"))
    gen = as_generator(rng)
    data = make_synthetic_logistic(n_people * k, d=d, rng=gen)
    groups = np.repeat(np.arange(n_people), k)
    fails = dict.fromkeys(methods, 0)
    draw_fails = dict.fromkeys(methods, 0)
    ratios: dict = {m: [] for m in methods}
    eps_all = []
    for _ in range(n_draws):
        fit = objpert_fit(data.X, data.y, "logistic", lam=lam, sigma=sigma, rng=gen)
        g, G = group_gradients(fit.theta_released, data.X, data.y, groups)
        eps1 = ex_post_pdp_general(released_state_nonprivate(fit, data.X, data.y), data.X, data.y, g, G,
                                   member=True)
        eps_all.append(eps1)
        for m in methods:
            rep = privacy_report(fit, data.X, data.y, method=m, rho=rho, rng=gen,
                                 **_sigmas(m, {"sigma_gradient": sigma_gradient, "sigma_hessian": sigma_hessian,
                                               "sigma_lambda_min": sigma_lambda_min}))
            bound = rep.epsilon_bound_general(g, G)
            miss = int(np.sum(bound < eps1))
            fails[m] += miss
            draw_fails[m] += int(miss > 0)
            ratios[m].append(bound / eps1)
    return GroupCoverage(methods=methods, failures=fails, trials=n_draws * n_people, draw_failures=draw_fails,
                         median_ratio={m: float(np.median(np.concatenate(ratios[m]))) for m in methods},
                         median_eps1=float(np.median(np.concatenate(eps_all))), rho=rho, n_draws=n_draws)
