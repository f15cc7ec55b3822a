r"""Experiments of the chapter "Ex-post per-instance privacy of ObjPert".

* :func:`worst_case_pdp_vs_n`, :func:`worst_case_pdp_vs_d` — Redberg & Wang 2021,
  App. B.1, Figs 4–5: the worst ex-post pDP over the members of a synthetic
  logistic-regression data set, the data-independent bound (Thm 8 with Thm 9's
  high-probability term) and the DP :math:`\epsilon` of the same mechanism.
* :func:`pdp_distribution` — App. B.3, Figs 7–8: the distribution of
  :math:`\epsilon_1` over the individuals of a real data set.
* :func:`objpert_density_mass` — the total mass of ObjPert's exact output density
  in one or two dimensions, by quadrature with a rigorous tail bound.
* :func:`stopping_rule_audit` — an adversary's event against a solver whose stopping
  rule depends on the data, and against what :func:`pdpkit.objpert.objpert_fit` releases.

The per-instance values are functions of the data and are not private (they are what a
privacy report estimates privately).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from .._progress import progress as _progress
from .._validation import as_finite_array, as_generator, check_int_at_least, check_positive, check_probability
from ..datasets import Dataset, make_synthetic_logistic, make_synthetic_regression
from ..losses import GLMLoss, get_loss
from ..objpert import (
    ExPostTerms,
    ObjPertResult,
    erm_fit_nonprivate,
    ex_post_pdp_terms,
    objpert_epsilon_classic,
    objpert_fit,
    objpert_log_density,
    pdp_bound_data_independent,
)
from ..release import objpert_release


__all__ = [
    "WorstCasePdp",
    "PdpDistribution",
    "DensityMass",
    "worst_case_pdp_vs_n",
    "worst_case_pdp_vs_d",
    "pdp_distribution",
    "objpert_density_mass",
    "StoppingRuleAudit",
    "stopping_rule_audit",
]


def _loss(loss: Any) -> GLMLoss:
    return get_loss(loss)


def _dp_epsilon(loss: GLMLoss, lam: float, sigma: float, delta: float, form: str) -> float:
    """Classic DP epsilon of ObjPert for rows with norm <= 1; inf for an unbounded gradient."""
    if not math.isfinite(loss.lipschitz):
        return math.inf
    return objpert_epsilon_classic(delta, L=loss.lipschitz, beta=loss.smoothness, lam=lam, sigma=sigma, form=form)



# =============================================================== Figs 4-5 (App. B.1)
@dataclass(frozen=True)
class WorstCasePdp:
    r"""Worst-case ex-post pDP over a data set's members, against bounds (Figs 4–5).

    Arrays have shape ``(len(values), n_repeats)``; row ``k`` is the data set with
    ``parameter = values[k]``, column ``r`` an independent draw of data and noise.

    Attributes
    ----------
    parameter : str
        ``"n"`` or ``"d"``: what varies.
    values : numpy.ndarray
        The values of the varying parameter.
    n, d : numpy.ndarray
        Data-set size and dimension of every row (one of them constant).
    worst_pdp : numpy.ndarray
        :math:`\max_{z \in D}\epsilon_1(\theta^P, D, D_{-z})`.
    mean_pdp : numpy.ndarray
        The mean of :math:`\epsilon_1` over the members.
    worst_bound : numpy.ndarray
        The maximum over members of the data-independent bound
        (:func:`pdpkit.objpert.pdp_bound_data_independent`, Thm 8 with Thm 9's
        :math:`\ell_1` term at failure probability ``rho``).
    worst_bound_output : numpy.ndarray
        The same bound with the constants evaluated at the released
        :math:`\theta^P` (``theta=`` option), maximized over members.
    bound_dominates : numpy.ndarray of bool
        Whether the data-independent bound is :math:`\ge \epsilon_1` for *every*
        member (Thm 9: probability at least :math:`1 - \rho`).
    dp_eps : float
        The classic DP :math:`\epsilon` of the mechanism at ``delta``
        (:func:`pdpkit.objpert.objpert_epsilon_classic`).
    lam, sigma, rho, delta : float
        The run's parameters.
    loss : str
        The loss name.
    dp_form : str
        The classic accounting used for ``dp_eps``.
    """

    parameter: str
    values: np.ndarray
    n: np.ndarray
    d: np.ndarray
    worst_pdp: np.ndarray
    mean_pdp: np.ndarray
    worst_bound: np.ndarray
    worst_bound_output: np.ndarray
    bound_dominates: np.ndarray
    dp_eps: float
    lam: float
    sigma: float
    rho: float
    delta: float
    loss: str
    dp_form: str


def _one_worst_case(n: int, d: int, loss: GLMLoss, lam: float, sigma: float, rho: float,
                    rng: np.random.Generator) -> tuple[float, float, float, float, bool]:
    if loss.name == "logistic":
        data = make_synthetic_logistic(n, d=d, rng=rng)
    else:
        data = make_synthetic_regression(n, d=d, rng=rng)
    fit = objpert_fit(data.X, data.y, loss, lam=lam, sigma=sigma, rng=rng)
    eps1 = ex_post_pdp_terms(fit, data.X, data.y, data.X, data.y, member=True).epsilon
    bound = pdp_bound_data_independent(loss, data.X, lam=lam, sigma=sigma, rho=rho)
    bound_out = pdp_bound_data_independent(loss, data.X, lam=lam, sigma=sigma, rho=rho, theta=fit.theta,
                                           target_y=data.y)
    return float(eps1.max()), float(eps1.mean()), float(bound.max()), float(bound_out.max()), bool(np.all(eps1 <= bound))


def _worst_case(parameter: str, values: Sequence[int], fixed: int, *, lam: float, sigma: float, rho: float,
                delta: float, n_repeats: int, loss: Any, rng: np.random.Generator | None,
                dp_form: str, progress: bool | None = None) -> WorstCasePdp:
    loss = _loss(loss)
    lam = float(check_positive(lam, "lam"))
    sigma = float(check_positive(sigma, "sigma"))
    rho = float(check_probability(rho, "rho"))
    delta = float(check_probability(delta, "delta"))
    n_repeats = check_int_at_least(n_repeats, "n_repeats", 1)
    vals = [check_int_at_least(v, "ns" if parameter == "n" else "ds", 1) for v in values]
    if not vals:
        raise ValueError(f"{'ns' if parameter == 'n' else 'ds'} must contain at least one value")
    rng = as_generator(rng)
    k = len(vals)
    out = np.empty((5, k, n_repeats))
    grid = [(i, r) for i in range(k) for r in range(n_repeats)]
    for i, r in _progress(grid, total=len(grid), desc=f"worst case vs {parameter}", progress=progress):
        v = vals[i]
        n, d = (v, fixed) if parameter == "n" else (fixed, v)
        out[:, i, r] = _one_worst_case(n, d, loss, lam, sigma, rho, rng)
    values_arr = np.array(vals)
    fixed_arr = np.full(k, fixed)
    n_arr, d_arr = (values_arr, fixed_arr) if parameter == "n" else (fixed_arr, values_arr)
    return WorstCasePdp(
        parameter=parameter, values=values_arr, n=n_arr, d=d_arr,
        worst_pdp=out[0], mean_pdp=out[1], worst_bound=out[2], worst_bound_output=out[3],
        bound_dominates=out[4].astype(bool),
        dp_eps=_dp_epsilon(loss, lam, sigma, delta, dp_form),
        lam=lam, sigma=sigma, rho=rho, delta=delta, loss=loss.name, dp_form=dp_form,
    )


def worst_case_pdp_vs_n(ns: Sequence[int], *, d: int, lam: float, sigma: float, rho: float = 0.05,
                        delta: float = 1e-5, n_repeats: int = 1, loss: str | GLMLoss = "logistic",
                        rng: np.random.Generator | None = None, dp_form: str = "kifer",
                        progress: bool | None = None) -> WorstCasePdp:
    r"""Worst-case ex-post pDP over the data set as the size :math:`n` varies (Redberg & Wang 2021, Fig 4).

    For every :math:`n` in ``ns`` and every repeat: draw synthetic data
    (:func:`pdpkit.datasets.make_synthetic_logistic` for the logistic loss,
    :func:`pdpkit.datasets.make_synthetic_regression` otherwise; unit-norm rows),
    run ObjPert (:func:`pdpkit.objpert.objpert_fit`), and compute the exact ex-post pDP
    :math:`\epsilon_1(\theta^P, D, D_{-z})` of every member (Thm 6 / Cor 7) and the
    data-independent bound of every member (Thm 8 + Thm 9). The DP :math:`\epsilon` of
    the mechanism (the same for every data set) comes from
    :func:`pdpkit.objpert.objpert_epsilon_classic` at ``delta``.

    Parameters
    ----------
    ns : sequence of int
        Data-set sizes (each :math:`\ge 1`).
    d : int
        Dimension.
    lam, sigma : float
        ObjPert's regularization and noise scale.
    rho : float, default 0.05
        Failure probability of Thm 9's bound.
    delta : float, default 1e-5
        :math:`\delta` of the DP guarantee.
    n_repeats : int, default 1
        Independent repetitions per size.
    loss : str or GLMLoss, default "logistic"
    rng : numpy.random.Generator, optional
    dp_form : {"kifer", "lecture"}
        Classic accounting for the DP :math:`\epsilon`.
    progress : bool, optional
        A tqdm progress bar (``None``: only when a person watches; ``PDPKIT_PROGRESS=0`` turns it off).

    Returns
    -------
    WorstCasePdp
    """
    d = check_int_at_least(d, "d", 1)
    return _worst_case("n", ns, d, lam=lam, sigma=sigma, rho=rho, delta=delta, n_repeats=n_repeats,
                       loss=loss, rng=rng, dp_form=dp_form, progress=progress)


def worst_case_pdp_vs_d(ds: Sequence[int], *, n: int, lam: float, sigma: float, rho: float = 0.05,
                        delta: float = 1e-5, n_repeats: int = 1, loss: str | GLMLoss = "logistic",
                        rng: np.random.Generator | None = None, dp_form: str = "kifer",
                        progress: bool | None = None) -> WorstCasePdp:
    r"""Worst-case ex-post pDP over the data set as the dimension :math:`d` varies (Redberg & Wang 2021, Fig 5).

    As :func:`worst_case_pdp_vs_n`, with :math:`n` fixed and :math:`d` taking the values ``ds``.

    Parameters
    ----------
    n : int
        Number of records n.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    rho : float, default 0.05
        Failure probability ρ of the high-probability bound, in (0, 1).
    delta : float, default 1e-05
        δ of the (ε, δ) guarantee, in (0, 1).
    n_repeats : int, default 1
        Repetitions per point of the sweep.
    loss : str | GLMLoss, default 'logistic'
        The GLM loss: a :class:`pdpkit.losses.GLMLoss` or its name (``"logistic"``, ``"squared"``, ``"robust_log"``, ``"huber"``).
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    progress : bool, optional
        A tqdm progress bar (``None``: only when a person watches; ``PDPKIT_PROGRESS=0`` turns it off).
    ds : Sequence[int]
        The dimensions d to sweep.
    dp_form : str, default 'kifer'
        ``"kifer"`` (Thm 2.8) or ``"lecture"`` (the lecture notes' GLM form): the classic DP ε shown for reference.
    """
    n = check_int_at_least(n, "n", 1)
    return _worst_case("d", ds, n, lam=lam, sigma=sigma, rho=rho, delta=delta, n_repeats=n_repeats,
                       loss=loss, rng=rng, dp_form=dp_form, progress=progress)


# =============================================================== Figs 7-8 (App. B.3)
@dataclass(frozen=True)
class PdpDistribution:
    r"""The ex-post pDP of every individual of a data set (Figs 7–8).

    Attributes
    ----------
    eps1 : numpy.ndarray, shape (n,)
        :math:`\epsilon_1(\theta^P, D, D_{-z_i})` for every member :math:`z_i`.
    terms : pdpkit.objpert.ExPostTerms
        Its three signed terms (log-determinant, gradient, cross term).
    bound_data_independent : numpy.ndarray, shape (n,)
        Thm 8 + Thm 9 with the loss's constants (``inf`` for an unbounded gradient).
    bound_output_dependent : numpy.ndarray, shape (n,)
        The same bound with :math:`f', f''` evaluated at :math:`\theta^P`.
    dp_eps : float
        Classic DP :math:`\epsilon` of the run (``inf`` when the loss has an unbounded
        gradient: then the mechanism is not DP for any finite :math:`\epsilon`).
    fit : pdpkit.objpert.ObjPertResult
        The ObjPert run.
    rho, delta : float
        Failure probability of the bound and :math:`\delta` of the DP guarantee.
    dataset : str
        The data set's name.
    """

    eps1: np.ndarray
    terms: ExPostTerms
    bound_data_independent: np.ndarray
    bound_output_dependent: np.ndarray
    dp_eps: float
    fit: ObjPertResult
    rho: float
    delta: float
    dataset: str


def pdp_distribution(dataset: Dataset, loss: str | GLMLoss, *, lam: float, sigma: float, rho: float = 0.05,
                     delta: float = 1e-5, rng: np.random.Generator | None = None,
                     dp_form: str = "kifer") -> PdpDistribution:
    r"""Run ObjPert on a data set and compute every member's ex-post pDP (Redberg & Wang 2021, Figs 7–8).

    Parameters
    ----------
    dataset : pdpkit.datasets.Dataset
        E.g. :func:`pdpkit.datasets.load_kidney` (logistic regression, Fig 7) or
        :func:`pdpkit.datasets.load_wine_quality` (linear regression, Fig 8).
    loss : str or GLMLoss
    lam, sigma : float
        Regularization and noise scale.
    rho : float, default 0.05
        Failure probability of the high-probability bounds.
    delta : float, default 1e-5
        :math:`\delta` of the DP guarantee reported as ``dp_eps``.
    rng : numpy.random.Generator, optional
        Source of ObjPert's noise.
    dp_form : {"kifer", "lecture"}
        Classic accounting for ``dp_eps``.

    Returns
    -------
    PdpDistribution
    """
    if not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be a pdpkit.datasets.Dataset; got {type(dataset).__name__}")
    loss = _loss(loss)
    rho = float(check_probability(rho, "rho"))
    delta = float(check_probability(delta, "delta"))
    fit = objpert_fit(dataset.X, dataset.y, loss, lam=lam, sigma=sigma, rng=as_generator(rng))
    terms = ex_post_pdp_terms(fit, dataset.X, dataset.y, dataset.X, dataset.y, member=True)
    if math.isfinite(loss.lipschitz):
        indep = pdp_bound_data_independent(loss, dataset.X, lam=fit.lam, sigma=fit.sigma, rho=rho)
    else:
        indep = np.full(dataset.n, np.inf)
    outdep = pdp_bound_data_independent(loss, dataset.X, lam=fit.lam, sigma=fit.sigma, rho=rho, theta=fit.theta,
                                        target_y=dataset.y)
    return PdpDistribution(
        eps1=terms.epsilon, terms=terms, bound_data_independent=indep, bound_output_dependent=outdep,
        dp_eps=_dp_epsilon(loss, fit.lam, fit.sigma, delta, dp_form), fit=fit, rho=rho, delta=delta,
        dataset=dataset.name,
    )


# ============================================================ exact-density check
@dataclass(frozen=True)
class DensityMass:
    r"""Total mass of ObjPert's output density on a box, with its error budget.

    Attributes
    ----------
    mass : float
        Composite Gauss–Legendre quadrature of :math:`p_D` over the box.
    mass_coarse : float
        The same rule with half the panels per axis; ``abs(mass - mass_coarse)``
        estimates the quadrature error of ``mass_coarse`` (and bounds that of
        ``mass`` in practice).
    tail_bound : float
        Rigorous upper bound on the mass outside the box (see
        :func:`objpert_density_mass`).
    center : numpy.ndarray
        The box centre (the non-private minimizer).
    radius : float
        Half-width of the box.
    n_evaluations : int
        Density evaluations of the fine rule.
    """

    mass: float
    mass_coarse: float
    tail_bound: float
    center: np.ndarray
    radius: float
    n_evaluations: int


def _gauss_legendre_composite(a: float, b: float, panels: int, order: int) -> tuple[np.ndarray, np.ndarray]:
    t, w = np.polynomial.legendre.leggauss(order)
    edges = np.linspace(a, b, panels + 1)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[:-1] + edges[1:])
    nodes = (mid[:, None] + half[:, None] * t[None, :]).ravel()
    weights = (half[:, None] * w[None, :]).ravel()
    return nodes, weights


def objpert_density_mass(X: Any, y: Any, loss: str | GLMLoss, *, lam: float, sigma: float, tail: float = 1e-12,
                         panels: int = 64, order: int = 10) -> DensityMass:
    r"""Integrate ObjPert's exact output density over :math:`\mathbb{R}^d`, :math:`d \in \{1, 2\}`.

    The density is :func:`pdpkit.objpert.objpert_log_density` (change of variables,
    Redberg & Wang 2021, App. E.1). The box is centred at the non-private minimizer
    :math:`\hat\theta` (:math:`\nabla J(\hat\theta; D) = 0`) with half-width :math:`r`.
    Because :math:`J` is :math:`\lambda`-strongly convex,
    :math:`\|b\| = \|\nabla J(\theta; D) - \nabla J(\hat\theta; D)\| \ge \lambda\|\theta - \hat\theta\|`,
    so the output leaves the ball of radius :math:`r` only if
    :math:`\|b\| \ge \lambda r`:

    .. math::

       \Pr[\|\theta^P - \hat\theta\| > r] \le \Pr[\chi^2_d \ge (\lambda r/\sigma)^2],

    and :math:`r` is chosen so that this tail is ``tail``. The box contains the ball,
    so the mass outside the box is at most ``tail``. The integral over the box is a
    product composite Gauss–Legendre rule (``panels`` panels of ``order`` nodes per
    axis), and again with ``panels // 2`` panels for an error estimate.

    Parameters
    ----------
    X, y, loss, lam, sigma
        As in :func:`pdpkit.objpert.objpert_fit`; ``X`` must have 1 or 2 columns.
    tail : float, default 1e-12
        Target bound on the mass outside the box, in (0, 1).
    panels : int, default 64
        Panels per axis (even, :math:`\ge 2`).
    order : int, default 10
        Gauss–Legendre nodes per panel.

    Returns
    -------
    DensityMass
    """
    loss = _loss(loss)
    X = as_finite_array(X, "X", ndim=2)
    d = X.shape[1]
    if d not in (1, 2):
        raise ValueError(f"X must have 1 or 2 columns for the quadrature; got {d}")
    lam = float(check_positive(lam, "lam"))
    sigma = float(check_positive(sigma, "sigma"))
    tail = float(check_probability(tail, "tail"))
    panels = check_int_at_least(panels, "panels", 2)
    if panels % 2:
        raise ValueError(f"panels must be even; got {panels}")
    order = check_int_at_least(order, "order", 1)
    center = erm_fit_nonprivate(X, y, loss, lam=lam, tol=1e-13) if X.shape[0] else np.zeros(d)
    # chi^2_d upper quantile: P[chi2_d >= q] = tail.
    q = float(special.gammainccinv(d / 2.0, tail)) * 2.0
    radius = sigma * math.sqrt(q) / lam
    tail_bound = float(special.gammaincc(d / 2.0, q / 2.0))

    def integrate(p: int) -> tuple[float, int]:
        axes = [_gauss_legendre_composite(c - radius, c + radius, p, order) for c in center]
        if d == 1:
            pts = axes[0][0][:, None]
            w = axes[0][1]
        else:
            g0, g1 = np.meshgrid(axes[0][0], axes[1][0], indexing="ij")
            pts = np.stack([g0.ravel(), g1.ravel()], axis=1)
            w = np.outer(axes[0][1], axes[1][1]).ravel()
        logp = objpert_log_density(pts, X, y, loss, lam=lam, sigma=sigma)
        return float(np.sum(w * np.exp(logp))), pts.shape[0]

    fine, n_eval = integrate(panels)
    coarse, _ = integrate(panels // 2)
    return DensityMass(mass=fine, mass_coarse=coarse, tail_bound=tail_bound, center=np.asarray(center),
                       radius=radius, n_evaluations=n_eval)


# ------------------------------------------------------------- the stopping rule
@dataclass(frozen=True)
class StoppingRuleAudit:
    r"""Outcome of :func:`stopping_rule_audit`: how often an event happens on D and on D′.

    ``counts[rule]`` is ``(k_D, k_D')`` out of ``n_samples`` runs for the event
    :math:`\{\theta = 0\}` (the starting point released as such); ``delta_lower[rule]`` the
    Clopper–Pearson lower confidence bound on :math:`P_{D'}(E) - e^{\varepsilon}P_D(E)` at the
    claimed ε (level ``alpha``, Bonferroni over the two counts). A value above the claimed δ
    refutes the claim for that rule.

    Attributes
    ----------
    rules : tuple[str, ...]
        The stopping rules audited (``"former"``, ``"release"``).
    counts : dict[str, tuple[int, int]]
        Per rule, how often the event happened on D and on D′.
    delta_lower : dict[str, float]
        Per rule, the lower confidence bound on the δ the event proves.
    epsilon : float
        The claimed ε.
    delta : float
        The claimed δ.
    n_samples : int
        Runs per data set.
    alpha : float
        1 − confidence level of the Clopper–Pearson bounds.
    """

    rules: tuple[str, ...]
    counts: dict[str, tuple[int, int]]
    delta_lower: dict[str, float]
    epsilon: float
    delta: float
    n_samples: int
    alpha: float


def _former_release(X: np.ndarray, y: np.ndarray, loss: GLMLoss, lam: float, sigma: float, tol: float,
                    method: str, gen: np.random.Generator) -> np.ndarray:
    """The former stopping rule, kept only to be refuted: ``tol`` times max(1, n max||x|| L), the point released."""
    from .._solver import _grad_scale, _solve

    b = gen.normal(0.0, sigma, size=X.shape[1])
    theta, *_ = _solve(X, y, loss, lam, b, tol * _grad_scale(X, y, loss), 200, method, want_hessian=False,
                       certify=False)
    return theta


def stopping_rule_audit(D: tuple[Any, Any], D_prime: tuple[Any, Any], *, lam: float, sigma: float, delta: float,
                        tol: float = 1e-2, method: str = "auto", n_samples: int = 2000, alpha: float = 0.01,
                        rng: int | np.random.Generator | None = None) -> StoppingRuleAudit:
    r"""The event :math:`\{\theta = 0\}` on a neighbouring pair, for the former rule and for the release.

    ``"former"``: the solver stops at ``tol`` relative to a data-dependent scale and its point
    is released (the private helper ``_former_release``). ``"release"``:
    :func:`pdpkit.objpert.objpert_fit`'s ``theta_released`` (public tolerance, output noise). The claimed ε at ``delta`` is the
    release's own guarantee (:func:`pdpkit.release.objpert_release`).

    Parameters
    ----------
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    n_samples : int, default 2000
        Monte Carlo samples per side.
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    D : tuple[Any, Any]
        The data set ``(X, y)``.
    D_prime : tuple[Any, Any]
        Its neighbour ``(X', y')``.
    tol : float, default 0.01
        Relative tolerance of the former, data-dependent stopping rule.
    method : str, default 'auto'
        Solver method passed to :func:`pdpkit.objpert.objpert_fit`.
    alpha : float, default 0.01
        1 − confidence level of the Clopper–Pearson bounds.
    """
    from ..audit import clopper_pearson

    gen = as_generator(rng)
    loss = get_loss("logistic")
    XD, yD = (np.asarray(a, dtype=float) for a in D)
    XP, yP = (np.asarray(a, dtype=float) for a in D_prime)
    n_samples = check_int_at_least(n_samples, "n_samples", 1)
    eps = objpert_release(objpert_fit(XD, yD, loss, lam=lam, sigma=sigma, rng=0), delta=delta).guarantee.epsilon
    rules = ("former", "release")
    counts, lower = {}, {}
    for rule in rules:
        k = []
        for X, y in ((XD, yD), (XP, yP)):
            hits = 0
            for _ in range(n_samples):
                if rule == "former":
                    th = _former_release(X, y, loss, lam, sigma, tol, method, gen)
                else:
                    th = objpert_fit(X, y, loss, lam=lam, sigma=sigma, rng=gen, method=method).theta_released
                hits += bool(np.all(th == 0.0))
            k.append(hits)
        counts[rule] = (k[0], k[1])
        p_lower, _ = clopper_pearson(k[1], n_samples, alpha / 2)
        _, q_upper = clopper_pearson(k[0], n_samples, alpha / 2)
        lower[rule] = float(p_lower - math.exp(eps) * q_upper)
    return StoppingRuleAudit(rules=rules, counts=counts, delta_lower=lower, epsilon=float(eps), delta=float(delta),
                             n_samples=n_samples, alpha=float(alpha))
