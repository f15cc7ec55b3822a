r"""Experiments of the chapter "OPS and AdaOPS: posterior sampling for linear regression".

Wang (2019), §3–§4 (source 001). Every function only computes; the chapter prints and
plots. The privacy analysis itself lives in :mod:`pdpkit.ops` (OPS, AdaOPS) and
:mod:`pdpkit.gaussian` (fixed-covariance output perturbation).

* :func:`anisotropic_regression` — an ill-conditioned linear-Gaussian design with unit rows.
* :func:`noise_shape_pdp` — members' tight pDP of output perturbation with the three noise
  shapes of §4 (isotropic, Fisher, democratic) at equal mean squared error, and eq. (3.3).
* :func:`scalar_instance` — a one-dimensional data set realising a given leverage score and
  residual (the exact pDP of OPS depends on the data only through them).
* :func:`output_perturbation_vs_n` — Figure 2, left.
* :func:`ops_vs_gamma` — Figure 2, right.
* :func:`ops_mse_check` — Prop 4.3(3) by Monte Carlo.
* :func:`members_pdp_scaling` — Prop 4.3(2) by Monte Carlo.
* :func:`accuracy_table` — AdaOPS, OPS with a data-independent λ and output perturbation
  at the same (ε, δ).
* :func:`generalization_gap` — Prop 2.9 with a clipped loss, by Monte Carlo.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
from numpy.typing import ArrayLike

from .._validation import as_generator
from ..datasets import normalize_rows
from ..gaussian import gaussian_epsilon, gaussian_sigma
from ..ops import (
    adaops_fit,
    ops_dp_epsilon,
    ops_fit,
    ops_gamma_for_dp,
    ops_pdp_epsilon,
    pdp_generalization_bound,
)
from ..output_perturbation import (
    ridge_fit_nonprivate,
    ridge_global_sensitivity_bound,
    ridge_removal_sensitivity_nonprivate,
)

__all__ = [
    "anisotropic_regression",
    "NoiseShapePdp",
    "noise_shape_pdp",
    "scalar_instance",
    "OutputPerturbationVsN",
    "output_perturbation_vs_n",
    "OpsVsGamma",
    "ops_vs_gamma",
    "MseCheck",
    "ops_mse_check",
    "members_pdp_scaling",
    "AccuracyTable",
    "accuracy_table",
    "GeneralizationGap",
    "generalization_gap",
    "AdaopsEfficiency",
    "adaops_efficiency",
    "fitted_slope",
]


def anisotropic_regression(n: int, *, d: int, cond: float = 1.0, noise: float = 0.1, clip: bool = True,
                           rng=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Linear-Gaussian data with unit rows and an ill-conditioned design.

    :math:`x_i` = a normalised :math:`\mathcal N(0, \operatorname{diag}(s_1^2, \dots, s_d^2))`
    draw with :math:`s_j` geometric from 1 down to :math:`1/\sqrt{\text{cond}}`;
    :math:`\theta_0 \sim \mathcal N(0, I_d)`; :math:`y_i = x_i^\top\theta_0 + \text{noise}\,\xi_i`,
    clipped to :math:`[-1, 1]` when ``clip`` (the source's Fig 1 recipe). Returns ``(X, y, theta0)``.

    Parameters
    ----------
    n : int
        Number of records n.
    d : int
        Dimension d (number of features).
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    cond : float, default 1.0
        Condition number of the design's covariance.
    noise : float, default 0.1
        Standard deviation of the label noise.
    clip : bool, default True
        Clip the labels to [−1, 1].
    """
    rng = as_generator(rng)
    scales = np.geomspace(1.0, 1.0 / np.sqrt(cond), d)
    X = normalize_rows(rng.standard_normal((n, d)) * scales)
    theta0 = rng.standard_normal(d)
    y = X @ theta0 + noise * rng.standard_normal(n)
    return X, (np.clip(y, -1.0, 1.0) if clip else y), theta0


@dataclass(frozen=True)
class NoiseShapePdp:
    """Members' pDP under one noise shape: tight (``exact``) and equation (3.3) (``printed``).

    Attributes
    ----------
    exact : numpy.ndarray
        Each member's tight pDP ε.
    printed : numpy.ndarray
        Each member's ε by equation (3.3) as printed.
    sensitivity : numpy.ndarray
        Each member's whitened sensitivity.
    """

    exact: np.ndarray
    printed: np.ndarray
    sensitivity: np.ndarray


def noise_shape_pdp(X: np.ndarray, y: np.ndarray, *, lam: float, noise_mse: float,
                    delta: float) -> dict[str, NoiseShapePdp]:
    r"""Members' pDP of :math:`\tilde\theta \sim \mathcal N(\hat\theta, A^{-1})` for three fixed shapes.

    :math:`H = X^\top X + \lambda I`, :math:`A = c\,M` with :math:`M \in \{I, H, H^2\}`
    (isotropic, Fisher, democratic) and :math:`c` such that
    :math:`\operatorname{tr}(A^{-1}) = ` ``noise_mse`` (equal accuracy). Removing member i moves
    the ridge estimate by :math:`v_i = \frac{r_i}{1 - h_i}H^{-1}x_i` (Sherman–Morrison,
    Lemma 3.1), so the whitened sensitivity is :math:`\norm{v_i}_A` and the tight pDP is
    :func:`~pdpkit.gaussian.gaussian_epsilon` of it; ``printed`` is eq. (3.3)'s
    :math:`\norm{v_i}_A\sqrt{\log(1.25/\delta)}` (γ = 1 here). ``A`` is held fixed, as Lemma
    2.4 requires. One Cholesky, one triangular solve for all members.

    Parameters
    ----------
    X : numpy.ndarray
        Feature rows, shape (n, d).
    y : numpy.ndarray
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    noise_mse : float
        The common expected squared error tr(A⁻¹) of the three noise shapes.
    """
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    d = X.shape[1]
    H = X.T @ X + lam * np.eye(d)
    L = np.linalg.cholesky(H)
    theta = sla.cho_solve((L, True), X.T @ y)
    W = sla.solve_triangular(L, X.T, lower=True)  # L^{-1} x_i
    h = np.einsum("ij,ij->j", W, W)
    V = sla.solve_triangular(L.T, W, lower=False)  # H^{-1} x_i
    c = (y - X @ theta) / (1.0 - h)
    evals = np.linalg.eigvalsh(H)
    sq = {  # v' M v / c^2 for M = I, H, H^2
        "isotropic": np.einsum("ij,ij->j", V, V),
        "Fisher": h,
        "democratic": np.einsum("ij,ij->i", X, X),
    }
    trace_inv = {"isotropic": float(d), "Fisher": float(np.sum(1 / evals)), "democratic": float(np.sum(evals**-2))}
    out = {}
    for name, q in sq.items():
        scale = trace_inv[name] / noise_mse  # A = scale * M has tr(A^{-1}) = noise_mse
        sens = np.abs(c) * np.sqrt(scale * q)
        out[name] = NoiseShapePdp(exact=gaussian_epsilon(delta, sensitivity=sens, sigma=1.0),
                                  printed=sens * np.sqrt(np.log(1.25 / delta)), sensitivity=sens)
    return out


def scalar_instance(mu: float, residual: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""A data set and targets with out-of-sample leverage ``mu`` and residuals ``residual`` (λ = 0).

    ``X = [[1/sqrt(mu)]]``, ``y = [0]`` so :math:`H = 1/\mu`, :math:`\hat\theta = 0`;
    the targets are :math:`x = 1`, :math:`y = r`. Returns ``(X, y, target_x, target_y)``.
    The exact pDP of OPS depends on (X, y, z) only through :math:`\mu` and :math:`\gamma r^2`.

    Parameters
    ----------
    mu : float
        Out-of-sample leverage μ > 0 of the targets.
    residual : array_like
        Residuals r of the targets.
    """
    r = np.atleast_1d(np.asarray(residual, float))
    return (np.array([[1.0 / np.sqrt(mu)]]), np.zeros(1), np.ones((r.size, 1)), r)


@dataclass(frozen=True)
class OutputPerturbationVsN:
    """Figure 2 (left): DP ε and members' pDP of isotropic output perturbation of ridge.

    Attributes
    ----------
    ns : numpy.ndarray
        The sample sizes n.
    dp_epsilon : numpy.ndarray
        DP ε of output perturbation at each n.
    members : list[numpy.ndarray]
        The members' pDP ε at each n.
    """

    ns: np.ndarray
    dp_epsilon: np.ndarray
    members: list[np.ndarray]


def output_perturbation_vs_n(ns: Sequence[int], *, d: int, lam: float, sigma: float, delta: float,
                             noise: float = 0.1, rng=None) -> OutputPerturbationVsN:
    r"""Figure 2 (left) of Wang (2019): ridge + :math:`\mathcal N(0, \sigma^2 I)` across n.

    DP: the tight Gaussian ε at :func:`~pdpkit.output_perturbation.ridge_global_sensitivity_bound`
    (rows in the unit ball, :math:`|y| \le 1`). Members: the tight Gaussian ε at each member's
    exact removal sensitivity (:func:`~pdpkit.output_perturbation.ridge_removal_sensitivity_nonprivate`)
    on a synthetic data set (:func:`anisotropic_regression` with cond = 1).

    Parameters
    ----------
    ns : Sequence[int]
        The sample sizes n to sweep.
    d : int
        Dimension d (number of features).
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    noise : float, default 0.1
        Standard deviation of the label noise.
    """
    rng = as_generator(rng)
    dp, members = [], []
    for n in ns:
        X, y, _ = anisotropic_regression(int(n), d=d, noise=noise, rng=rng)
        dp.append(float(gaussian_epsilon(delta, sensitivity=ridge_global_sensitivity_bound(int(n), lam=lam),
                                         sigma=sigma)))
        sens = ridge_removal_sensitivity_nonprivate(X, y, lam=lam)
        members.append(gaussian_epsilon(delta, sensitivity=sens, sigma=sigma))
    return OutputPerturbationVsN(np.asarray(ns), np.asarray(dp), members)


@dataclass(frozen=True)
class OpsVsGamma:
    """Figure 2 (right): privacy notions and utility of OPS over a γ grid (fixed data set).

    Attributes
    ----------
    gammas : numpy.ndarray
        The values of γ.
    excess_risk : numpy.ndarray
        Expected excess empirical risk per record at each γ.
    dp_epsilon : numpy.ndarray
        DP ε over data sets of at most n records.
    pdp_for_all : numpy.ndarray
        pDP of the worst possible target.
    members_median : numpy.ndarray
        Median of the members' pDP.
    members_max : numpy.ndarray
        Largest member pDP.
    expmech_epsilon : numpy.ndarray
        ε of OPS read as an exponential mechanism.
    """

    gammas: np.ndarray
    excess_risk: np.ndarray
    dp_epsilon: np.ndarray
    pdp_for_all: np.ndarray
    members_median: np.ndarray
    members_max: np.ndarray
    expmech_epsilon: np.ndarray


def ops_vs_gamma(X: np.ndarray, y: np.ndarray, gammas: Sequence[float], *, lam: float, delta: float) -> OpsVsGamma:
    r"""Figure 2 (right) of Wang (2019) for OPS with a fixed λ > 0 on one data set.

    * ``excess_risk``: the exact expected excess empirical risk
      :math:`\frac1n\E[\norm{\mathbf y - X\tilde\theta}^2 - \norm{\mathbf y - X\hat\theta}^2]
      = \operatorname{tr}(X^\top X H^{-1})/(n\gamma)`;
    * ``dp_epsilon``: :func:`~pdpkit.ops.ops_dp_epsilon` over data sets of ≤ n records;
    * ``pdp_for_all``: the exact pDP at the corner :math:`\mu = 1/\lambda_{\min}(H)`,
      :math:`|r| = 1 + \norm{\hat\theta}` (an upper bound on the sup over
      :math:`\norm x \le 1, |y| \le 1` when the exact pDP is increasing in μ and in :math:`|r|` — the
      chapter checks this on a grid);
    * ``members_median``, ``members_max``: the exact pDP of every member;
    * ``expmech_epsilon``: the pure ε of the sampler restricted to the ball of radius
      :math:`B = \sqrt n/(2\sqrt\lambda)` (which holds every ridge solution on bounded data):
      the exponential mechanism's :math:`\gamma(1 + B)^2/2` for add/remove neighbours
      (derived in the chapter).

    Parameters
    ----------
    X : numpy.ndarray
        Feature rows, shape (n, d).
    y : numpy.ndarray
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    gammas : Sequence[float]
        The values of γ to sweep.
    """
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    n, d = X.shape
    H = X.T @ X + lam * np.eye(d)
    evals = np.linalg.eigvalsh(H)
    theta = np.linalg.solve(H, X.T @ y)
    risk_trace = float(np.trace(np.linalg.solve(H, X.T @ X))) / n
    mu_max, r_max = 1.0 / evals[0], 1.0 + float(np.linalg.norm(theta))
    B = np.sqrt(n) / (2.0 * np.sqrt(lam))
    out = {k: [] for k in ("risk", "dp", "all", "med", "max", "em")}
    for g in gammas:
        out["risk"].append(risk_trace / g)
        out["dp"].append(float(ops_dp_epsilon(delta, n=n, lam=lam, gamma=g)))
        Xs, ys, tx, ty = scalar_instance(mu_max, r_max)
        out["all"].append(float(np.max(ops_pdp_epsilon(Xs, ys, tx, ty, lam=0.0, gamma=g, delta=delta,
                                                       member=False))))
        m = ops_pdp_epsilon(X, y, X, y, lam=lam, gamma=g, delta=delta, member=True)
        out["med"].append(float(np.median(m)))
        out["max"].append(float(np.max(m)))
        out["em"].append(g * (1.0 + B) ** 2 / 2.0)
    return OpsVsGamma(np.asarray(gammas, float), *(np.asarray(out[k]) for k in ("risk", "dp", "all", "med", "max", "em")))


@dataclass(frozen=True)
class MseCheck:
    """Prop 4.3(3): Monte Carlo mean squared error of OPS with its standard error, and two formulas.

    Attributes
    ----------
    mc_mean : float
        Monte Carlo mean squared error.
    mc_se : float
        Its standard error.
    exact : float
        The exact mean squared error.
    printed : float
        Prop 4.3(3) as printed.
    """

    mc_mean: float
    mc_se: float
    exact: float
    printed: float


def ops_mse_check(X: np.ndarray, theta0: np.ndarray, *, sigma: float, lam: float, gamma: float, reps: int,
                  draws_per_label: int = 20, rng=None) -> MseCheck:
    r""":math:`\E[\norm{\tilde\theta - \theta_0}^2 \mid X]` under :math:`\mathbf y \sim \mathcal N(X\theta_0, \sigma^2 I)`.

    Monte Carlo over ``reps`` fresh label vectors, each with ``draws_per_label`` OPS draws
    (:func:`~pdpkit.ops.ops_fit` with ``size``); the standard error is that of the
    per-label averages (independent across labels). Compared with the exact value
    :math:`\sigma^2\operatorname{tr}(H^{-1}X^\top XH^{-1}) + \operatorname{tr}(H^{-1})/\gamma
    + \lambda^2\norm{H^{-1}\theta_0}^2` and the printed
    :math:`\sigma^2\operatorname{tr}(H^{-1})(1 + \gamma^{-1}) + \lambda^2\norm{H^{-1}\theta_0}^2`.

    Parameters
    ----------
    X : numpy.ndarray
        Feature rows, shape (n, d).
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    gamma : float
        Inverse temperature γ > 0 of OPS: θ is drawn from N(θ̂, H⁻¹/γ).
    reps : int
        Repetitions per point of the sweep.
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    theta0 : numpy.ndarray
        The true parameter θ₀.
    draws_per_label : int, default 20
        OPS draws per label vector.
    """
    rng = as_generator(rng)
    X = np.asarray(X, float)
    d = X.shape[1]
    H = X.T @ X + lam * np.eye(d)
    Hi = np.linalg.inv(H)
    bias = lam**2 * float(np.sum((Hi @ theta0) ** 2))
    exact = sigma**2 * float(np.trace(Hi @ X.T @ X @ Hi)) + float(np.trace(Hi)) / gamma + bias
    printed = sigma**2 * float(np.trace(Hi)) * (1.0 + 1.0 / gamma) + bias
    per_label = np.empty(reps)
    for k in range(reps):
        yk = X @ theta0 + sigma * rng.standard_normal(X.shape[0])
        draws = ops_fit(X, yk, lam=lam, gamma=gamma, size=draws_per_label, rng=rng).theta
        per_label[k] = np.mean(np.sum((draws - theta0) ** 2, axis=1))
    return MseCheck(float(per_label.mean()), float(per_label.std(ddof=1) / np.sqrt(reps)), exact, printed)


def members_pdp_scaling(ns: Sequence[int], conds: Sequence[float], *, d: int, gamma: float, lam: float,
                        delta: float, sigma: float, rng=None) -> np.ndarray:
    r"""Prop 4.3(2): :math:`\frac1n\sum_i \eps_i^2 \big/ \big(\sigma^2 d\gamma\log(2/\delta)/n\big)` per (n, cond).

    Unclipped model data (assumption (c)) from :func:`anisotropic_regression`; :math:`\eps_i`
    is the exact pDP of member i (:func:`~pdpkit.ops.ops_pdp_epsilon`, ``member=True``).
    Returns an array of shape (len(ns), len(conds)); the proposition says it is O(1) and
    does not depend on the condition number.

    Parameters
    ----------
    ns : Sequence[int]
        The sample sizes n to sweep.
    d : int
        Dimension d (number of features).
    gamma : float
        Inverse temperature γ > 0 of OPS: θ is drawn from N(θ̂, H⁻¹/γ).
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    conds : Sequence[float]
        The condition numbers of the design to sweep.
    """
    rng = as_generator(rng)
    out = np.empty((len(ns), len(conds)))
    for i, n in enumerate(ns):
        for j, c in enumerate(conds):
            X, y, _ = anisotropic_regression(int(n), d=d, cond=c, noise=sigma, clip=False, rng=rng)
            e = ops_pdp_epsilon(X, y, X, y, lam=lam, gamma=gamma, delta=delta, member=True)
            out[i, j] = np.mean(e**2) / (sigma**2 * d * gamma * np.log(2 / delta) / n)
    return out


@dataclass(frozen=True)
class AccuracyTable:
    """Test MSE (seeds × methods) at one (ε, δ); ``methods`` names the columns.

    Attributes
    ----------
    eps : float
        ε of the guarantee.
    delta : float
        δ of the guarantee.
    methods : tuple[str, ...]
        Names of the columns of ``mse``.
    mse : numpy.ndarray
        Test mean squared error, shape (seeds, methods).
    lam_adaops : numpy.ndarray
        λ chosen by AdaOPS per seed.
    gamma_adaops : numpy.ndarray
        γ chosen by AdaOPS per seed.
    """

    eps: float
    delta: float
    methods: tuple[str, ...]
    mse: np.ndarray
    lam_adaops: np.ndarray
    gamma_adaops: np.ndarray


def _ridge_output_perturbation(X, y, eps, delta, lam, rng):
    sens = ridge_global_sensitivity_bound(X.shape[0], lam=lam)
    sig = float(gaussian_sigma(eps, delta=delta, sensitivity=sens))
    return ridge_fit_nonprivate(X, y, lam=lam) + sig * rng.standard_normal(X.shape[1])


def accuracy_table(eps: float, delta: float, *, n: int, d: int, seeds: Sequence[int], kappa: float,
                   lam_fixed: float, cond: float = 1.0, noise: float = 0.1, n_test: int = 2000) -> AccuracyTable:
    r"""Test MSE of four estimators over ``seeds`` (fresh data and noise per seed), all (ε, δ)-DP but OLS.

    * ``OLS (not private)``: least squares;
    * ``AdaOPS``: :func:`~pdpkit.ops.adaops_fit` with ``kappa``;
    * ``OPS, fixed λ``: :func:`~pdpkit.ops.ops_fit` with ``lam_fixed`` and
      γ = :func:`~pdpkit.ops.ops_gamma_for_dp` (data-independent, over ≤ n records);
    * ``output perturbation``: ridge with ``lam_fixed`` + isotropic Gaussian noise, tight
      σ (:func:`~pdpkit.gaussian.gaussian_sigma`) at the global sensitivity bound
      :func:`~pdpkit.output_perturbation.ridge_global_sensitivity_bound`.

    Data: :func:`anisotropic_regression` (unit rows, clipped y); test set of ``n_test`` from
    the same model.

    Parameters
    ----------
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    n : int
        Number of records n.
    d : int
        Dimension d (number of features).
    seeds : Sequence[int]
        Seeds, one per repetition.
    kappa : float
        AdaOPS's κ (see :func:`~pdpkit.ops.adaops_fit`).
    lam_fixed : float
        λ of OPS with fixed λ and of output perturbation.
    cond : float, default 1.0
        Condition number of the design's covariance.
    noise : float, default 0.1
        Standard deviation of the label noise.
    n_test : int, default 2000
        Number of test records.
    """
    methods = ("OLS (not private)", "AdaOPS", "OPS, fixed λ", "output perturbation")
    gamma_fixed = float(ops_gamma_for_dp(eps, delta, n=n, lam=lam_fixed))
    mse = np.empty((len(seeds), len(methods)))
    lam_a, gam_a = [], []
    for k, s in enumerate(seeds):
        rng = np.random.default_rng(s)
        X, y, theta0 = anisotropic_regression(n + n_test, d=d, cond=cond, noise=noise, rng=rng)
        Xtr, ytr, Xte, yte = X[:n], y[:n], X[n:], y[n:]
        ada = adaops_fit(Xtr, ytr, eps, delta, kappa=kappa, rng=rng)
        lam_a.append(ada.lam)
        gam_a.append(ada.gamma)
        thetas = (
            np.linalg.lstsq(Xtr, ytr, rcond=None)[0],
            ada.theta,
            ops_fit(Xtr, ytr, lam=lam_fixed, gamma=gamma_fixed, rng=rng).theta,
            _ridge_output_perturbation(Xtr, ytr, eps, delta, lam_fixed, rng),
        )
        mse[k] = [np.mean((yte - Xte @ t) ** 2) for t in thetas]
    return AccuracyTable(eps, delta, methods, mse, np.asarray(lam_a), np.asarray(gam_a))


@dataclass(frozen=True)
class GeneralizationGap:
    """Prop 2.9 check: the Monte Carlo gap with its standard error, and the bound.

    Attributes
    ----------
    gap : float
        Monte Carlo on-average generalization gap.
    gap_se : float
        Its standard error.
    bound : float
        Prop 2.9's bound (corrected).
    mean_eps : float
        Mean of the pDP table.
    max_eps : float
        Largest entry of the pDP table.
    """

    gap: float
    gap_se: float
    bound: float
    mean_eps: float
    max_eps: float


def _clipped_loss(theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.minimum(1.0, (y - X @ theta) ** 2 / 4.0)


def generalization_gap(n: int, *, d: int, lam: float, gamma: float, delta: float, datasets: int,
                       targets: int = 200, noise: float = 0.3, rng=None) -> GeneralizationGap:
    r"""On-average generalization gap of OPS under :math:`\ell = \min\{1, (y - x^\top\theta)^2/4\}`.

    Monte Carlo over ``datasets`` data sets :math:`Z \sim \mathcal D^n` (unit rows, clipped
    y; :func:`anisotropic_regression` with a fresh :math:`\theta_0` per data set, so
    :math:`\mathcal D` is a mixture), one OPS draw each: the mean loss on ``targets`` fresh
    points minus the mean training loss (Definition 2.8). The bound is
    :func:`~pdpkit.ops.pdp_generalization_bound` (Prop 2.9) on the table of exact pDP
    :math:`\eps(W, z)` (:func:`~pdpkit.ops.ops_pdp_epsilon`, ``member=False``) of the fresh
    targets relative to :math:`W` = the first n − 1 records, at a fixed δ.

    Parameters
    ----------
    n : int
        Number of records n.
    d : int
        Dimension d (number of features).
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    gamma : float
        Inverse temperature γ > 0 of OPS: θ is drawn from N(θ̂, H⁻¹/γ).
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    datasets : int
        Number of data sets drawn.
    targets : int, default 200
        Fresh test points per data set.
    noise : float, default 0.3
        Standard deviation of the label noise.
    """
    rng = as_generator(rng)
    gaps = np.empty(datasets)
    table = np.empty((datasets, targets))
    for k in range(datasets):
        X, y, _ = anisotropic_regression(n + targets, d=d, noise=noise, rng=rng)
        Xtr, ytr, Xz, yz = X[:n], y[:n], X[n:], y[n:]
        th = ops_fit(Xtr, ytr, lam=lam, gamma=gamma, rng=rng).theta
        gaps[k] = np.mean(_clipped_loss(th, Xz, yz)) - np.mean(_clipped_loss(th, Xtr, ytr))
        table[k] = ops_pdp_epsilon(Xtr[:-1], ytr[:-1], Xz, yz, lam=lam, gamma=gamma, delta=delta, member=False)
    bound = pdp_generalization_bound(table, delta)
    return GeneralizationGap(float(gaps.mean()), float(gaps.std(ddof=1) / np.sqrt(datasets)), bound,
                             float(table.mean()), float(table.max()))


# ======================================================== Prop 4.4(2): efficiency
@dataclass(frozen=True)
class AdaopsEfficiency:
    r"""Prop 4.4(2): AdaOPS's mean squared error above least squares, over n.

    Attributes
    ----------
    ns : numpy.ndarray
        The sample sizes n.
    excess_mean : numpy.ndarray
        Monte Carlo mean of :math:`\|\tilde\theta - \hat\theta_{\rm OLS}\|^2` (same data), per n. It is
        the excess :math:`\mathbb{E}\|\tilde\theta - \theta_0\|^2 - \mathbb{E}\|\hat\theta_{\rm OLS} - \theta_0\|^2` whenever
        AdaOPS chooses λ = 0: then :math:`\tilde\theta - \hat\theta_{\rm OLS}` is OPS noise, independent of
        the data, and the cross term has mean 0 (``lam_zero`` says how often λ = 0 held).
    excess_se : numpy.ndarray
        Its standard error.
    predicted : numpy.ndarray
        Mean of :math:`\operatorname{tr}(H^{-1})/\gamma` (the OPS noise term, Prop 4.3(3) corrected), per n.
    ols_mse : numpy.ndarray
        Mean of :math:`\|\hat\theta_{\rm OLS} - \theta_0\|^2`, per n (the efficient estimator's error).
    gamma : numpy.ndarray
        Mean γ chosen by AdaOPS, per n.
    lam_zero : numpy.ndarray
        Fraction of runs in which AdaOPS chose λ = 0, per n.
    reps : int
    """

    ns: np.ndarray
    excess_mean: np.ndarray
    excess_se: np.ndarray
    predicted: np.ndarray
    ols_mse: np.ndarray
    gamma: np.ndarray
    lam_zero: np.ndarray
    reps: int


def adaops_efficiency(ns: Sequence[int], *, d: int, eps: float, delta: float, kappa: float, reps: int,
                      noise: float = 0.1, rng=None) -> AdaopsEfficiency:
    r"""Wang 2019, Prop 4.4(2): how fast AdaOPS's excess error over least squares vanishes.

    Per n and repetition: a fresh data set (:func:`anisotropic_regression`, unit rows, clipped
    labels), :func:`pdpkit.ops.adaops_fit` at ``(eps, delta)``, and least squares on the same
    data. Prop 4.4(2) claims, when :math:`\lambda_{\min}(X^\top X)` exceeds AdaOPS's target,
    :math:`\mathbb{E}\|\tilde\theta - \theta_0\|^2 = \sigma^2\operatorname{tr}[(X^\top X)^{-1}]` plus a
    term of order :math:`\operatorname{tr}[(X^\top X)^{-1}]/\gamma_n` with :math:`\gamma_n \propto n`:
    an excess of order :math:`n^{-2}` against the efficient :math:`n^{-1}`.

    Parameters
    ----------
    ns : Sequence[int]
        The sample sizes n.
    d : int
        Dimension d.
    eps : float
        ε of AdaOPS's (ε, δ)-DP guarantee.
    delta : float
        δ of the guarantee.
    kappa : float
        AdaOPS's condition-number parameter κ.
    reps : int
        Repetitions per n.
    noise : float, default 0.1
        Standard deviation of the label noise.
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None``.
    """
    gen = as_generator(rng)
    out = {k: [] for k in ("m", "se", "pred", "ols", "gamma", "zero")}
    for n in ns:
        ex, pred, ols_e, gam, zero = [], [], [], [], []
        for _ in range(int(reps)):
            X, y, theta0 = anisotropic_regression(int(n), d=d, noise=noise, rng=gen)
            ada = adaops_fit(X, y, eps, delta, kappa=kappa, rng=gen)
            ols = np.linalg.lstsq(X, y, rcond=None)[0]
            e_ols = float(np.sum((ols - theta0) ** 2))
            ex.append(float(np.sum((ada.theta - ols) ** 2)))
            H = X.T @ X + ada.lam * np.eye(d)
            pred.append(float(np.trace(np.linalg.inv(H))) / ada.gamma)
            ols_e.append(e_ols)
            gam.append(ada.gamma)
            zero.append(ada.lam == 0.0)
        out["m"].append(np.mean(ex))
        out["se"].append(np.std(ex, ddof=1) / np.sqrt(len(ex)))
        out["pred"].append(np.mean(pred))
        out["ols"].append(np.mean(ols_e))
        out["gamma"].append(np.mean(gam))
        out["zero"].append(np.mean(zero))
    return AdaopsEfficiency(np.asarray(ns), *(np.asarray(out[k]) for k in ("m", "se", "pred", "ols", "gamma", "zero")),
                            reps=int(reps))


def fitted_slope(x: ArrayLike, y: ArrayLike, y_se: ArrayLike) -> tuple[float, float]:
    r"""Slope of :math:`\log y` on :math:`\log x` by weighted least squares, and its standard error.

    Weights :math:`(y/\mathrm{se}_y)^2` (delta method: :math:`\mathrm{se}(\log y) \approx \mathrm{se}_y/y`).
    Used to test a claimed rate :math:`y \propto x^{a}`.

    Parameters
    ----------
    x : ArrayLike
        Positive abscissae (e.g. n).
    y : ArrayLike
        Positive estimates at each x.
    y_se : ArrayLike
        Their standard errors (positive).
    """
    x, y, s = (np.asarray(v, float) for v in (x, y, y_se))
    if np.any(x <= 0) or np.any(y <= 0) or np.any(s <= 0) or not (x.shape == y.shape == s.shape) or x.size < 3:
        raise ValueError("x, y and y_se must be positive arrays of one shape with at least 3 points")
    w = (y / s) ** 2
    A = np.column_stack([np.ones_like(x), np.log(x)])
    cov = np.linalg.inv(A.T @ (A * w[:, None]))
    coef = cov @ (A.T @ (w * np.log(y)))
    return float(coef[1]), float(np.sqrt(cov[1, 1]))
