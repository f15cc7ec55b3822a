r"""The privacy of private model selection for objective perturbation (repeat and select).

A *candidate* is one public setting of approximate minima perturbation: ObjPert with
constants :math:`(L, \beta)`, regularization :math:`\lambda` and noise :math:`\sigma`
(sharp log-determinant constant, :mod:`pdpkit.accounting`), followed by the output Gaussian
of parameter :math:`\mu_{\rm out}` that pays for the solver's tolerance
(:func:`pdpkit.objpert.output_mu`). One *run* of the base mechanism :math:`Q`:

1. each record is put in the training part or in the validation part by its own coin
   (independent, fair or not, drawn from the mechanism's secret randomness and never
   released);
2. a candidate :math:`j` is drawn uniformly from the public grid;
3. the candidate is trained on the training part (``count`` ObjPert fits on the same
   records, for instance the one-vs-rest problems of a multiclass model);
4. its *score* — a count over the validation part to which one record adds at most 1 (for
   instance the number of correct predictions) — is released through a Gaussian mechanism
   of parameter ``score_mu`` (noise of standard deviation ``1/score_mu``).

The run outputs :math:`(j, \tilde\theta_j, \text{score})`. Repeat and select
(:func:`repeat_and_select`; Papernot & Steinke 2022, Alg 1) runs :math:`Q` a random number
:math:`K` of times and releases the run with the best score only (not :math:`K`, not the
other runs).

The base run's Rényi DP
-----------------------
Neighbouring data sets differ by adding or removing one record :math:`z`. Fix everything
but :math:`z`'s coin: the other records' parts :math:`(T, V)` and the candidate :math:`j`.

* :math:`z` in the training part: the model is ObjPert on :math:`T` versus :math:`T + z`
  composed with its output Gaussian, :math:`\rho_j(\alpha) =
  \text{count}\,(\varepsilon_{\rm ObjPert}(\alpha) + \alpha\mu_{\rm out}^2/2)`
  (:func:`pdpkit.accounting.objpert_rdp`, Redberg, Koskela & Wang 2023, Thm 3.2, and the
  Gaussian's RDP, composed); the score is a post-processing of the model with :math:`V`
  fixed and independent noise.
* :math:`z` in the validation part: the model has the same law on both sides; given the
  model, the count moves by at most 1, so the score is a Gaussian mechanism:
  :math:`\rho_{\rm val}(\alpha) = \alpha\,\mu_{\rm score}^2/2`.

Both data sets' outputs are mixtures over the coins with the *same* weights (the coins of
:math:`D`'s records have the same law under :math:`D` and :math:`D'`, and :math:`z`'s coin
is independent of them), and the Rényi divergence of every order is jointly quasi-convex
(van Erven & Harremoës 2014, Thm 13): the divergence of two mixtures with common weights is
at most the largest divergence of the paired components, in either direction. Hence, per
order, the run's RDP is at most the **maximum** of the two parts' — not their sum. The
bound holds for each value of :math:`z`'s coin separately, so it does not need that coin to
be secret; it needs the other records' coins to be independent of the data and of their
order (here: i.i.d. coins from the secret random state). The candidate :math:`j` is drawn
independently and released, so the run is a mixture with disjoint supports and its RDP is
the log-mean-exp over candidates (at most their maximum):

.. math::

   \rho_Q(\alpha) = \max\Big(\frac{1}{\alpha - 1}\log\frac1m\sum_{j=1}^m
   e^{(\alpha - 1)\rho_j(\alpha)},\; \frac{\alpha\,\mu_{\rm score}^2}{2}\Big).

The same argument (quasi-convexity over the coins, then the selection theorem for each
fixed split) covers one split shared by all runs, as :mod:`pdpkit.model_selection` does:
the selection theorem is monotone in the base run's RDP curve.

Since :math:`\rho_j(\alpha) \ge \alpha (L/\sigma_j)^2/2`, a score with
:math:`\mu_{\rm score} \le \min_j L/\sigma_j` costs nothing beyond the model:
:func:`calibrate_selection` sets the largest such free score on its order grid.

Repeat and select
-----------------
With :math:`K` drawn from a truncated negative binomial law :math:`\mathcal D_{\eta,\gamma}`
(``shape`` :math:`=\eta \ge 0`: logarithmic at 0, geometric at 1) Papernot & Steinke (2022,
Thm 2) give, for every :math:`\lambda > 1` and :math:`\hat\lambda \ge 1`,

.. math::

   \varepsilon'(\lambda) = \rho_Q(\lambda) + (1 + \eta)\Big(1 - \frac1{\hat\lambda}\Big)
   \rho_Q(\hat\lambda) + \frac{(1 + \eta)\log(1/\gamma)}{\hat\lambda}
   + \frac{\log\mathbb E[K]}{\lambda - 1};

with :math:`K \sim` Poisson(mean) (``shape = inf``, Thm 6), for :math:`\hat\varepsilon =
\log(1 + 1/(\lambda - 1))` and :math:`\hat\delta` the base run's δ at :math:`\hat\varepsilon`
(from its RDP, Canonne, Kamath & Steinke 2020, Prop 12),
:math:`\varepsilon'(\lambda) = \rho_Q(\lambda) + \text{mean}\cdot\hat\delta +
\log(\text{mean})/(\lambda - 1)`. Both are evaluated as dp_accounting evaluates them
(its ``_compute_rdp_repeat_and_select``, vectorized over the orders with the same operations:
the same bits; :math:`\hat\lambda` and the conversion's orders range over
a fixed fine grid of 200 orders, whatever orders are asked for), then converted to
:math:`(\varepsilon, \delta)` by :func:`pdpkit.accounting.rdp_to_epsilon`.

Source 002 (Redberg, Koskela & Wang 2023, §5) tunes DP-SGD this way with a Poisson number of
runs whose mean makes :math:`K` exceed the grid size with probability 0.9; they do not tune
ObjPert's (λ, σ), noting that doing so needs the same selection. This module is that
selection for ObjPert.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from ._validation import (
    as_finite_array,
    as_generator,
    check_int_at_least,
    check_mu,
    check_repetition_law,
    finite_scalar,
    scalar_positive,
    scalar_probability,
)
from .accounting import objpert_sigma, rdp_to_epsilon
from .events import SELECTION_FORMAT, SELECTION_ORDERS, RepeatAndSelectEvent, repetitions_gamma  # noqa: F401
from .objpert import DEFAULT_OUTPUT_MU

__all__ = [
    "SelectionCalibration",
    "selection_rdp",
    "selection_epsilon",
    "calibrate_selection",
    "repeat_and_select",
    "repetitions_pmf",
    "default_repetitions",
]

#: The charge of a private selection: the event :class:`pdpkit.events.RepeatAndSelectEvent`.
SelectionCharge = RepeatAndSelectEvent


# ----------------------------------------------------------------- the law of K
def repetitions_pmf(n_runs: ArrayLike, *, mean: float, shape: float) -> np.ndarray:
    r"""The probability that repeat and select makes exactly ``n_runs`` runs.

    Poisson(mean) for ``shape = inf``; otherwise the truncated negative binomial law of
    Papernot & Steinke (2022, §2): :math:`P[K = k] = \frac{(1-\gamma)^k}{\gamma^{-\eta} - 1}
    \prod_{\ell=0}^{k-1}\frac{\ell + \eta}{\ell + 1}` for :math:`k \ge 1` (η = ``shape`` > 0)
    and :math:`\frac{(1-\gamma)^k}{k\log(1/\gamma)}` for η = 0, with γ set by the mean.

    Parameters
    ----------
    n_runs : array_like of int
        Numbers of runs k.
    mean : float
        The expected number of runs (>= 1; > 1 for a truncated negative binomial).
    shape : float
        η >= 0 of the truncated negative binomial (0 logarithmic, 1 geometric), or ``math.inf``
        for Poisson.

    Returns
    -------
    numpy.ndarray
        The probabilities, shaped like ``n_runs``.
    """
    mean, shape = check_repetition_law(mean, shape)
    kk = np.asarray(as_finite_array(n_runs, "n_runs"), dtype=float)
    if np.any(kk != np.floor(kk)):
        raise ValueError("n_runs must hold integers")
    with np.errstate(divide="ignore", invalid="ignore"):
        if math.isinf(shape):
            out = np.where(kk >= 0, np.exp(kk * math.log(mean) - mean - special.gammaln(kk + 1.0)), 0.0)
        else:
            g = repetitions_gamma(mean, shape=shape)
            if shape == 0.0:
                logp = kk * math.log1p(-g) - np.log(kk) - math.log(-math.log(g))
            else:
                logp = (kk * math.log1p(-g) + special.gammaln(kk + shape) - special.gammaln(shape)
                        - special.gammaln(kk + 1.0) - math.log(math.expm1(-shape * math.log(g))))
            out = np.where(kk >= 1, np.exp(logp), 0.0)
    return out


def _draw_k(mean: float, shape: float, rng: np.random.Generator) -> int:
    """One draw of the number of runs from its law (exactly as in Papernot & Steinke 2022)."""
    if math.isinf(shape):
        return int(rng.poisson(mean))
    g = repetitions_gamma(mean, shape=shape)
    if shape == 0.0:
        return int(rng.logseries(1.0 - g))
    p0 = math.exp(shape * math.log(g))  # P[NB = 0] = gamma^eta, rejected
    if p0 < 0.9:
        while True:  # negative binomial conditioned on >= 1 by rejection
            k = int(rng.negative_binomial(shape, g))
            if k >= 1:
                return k
    # P[K >= 1] is small: invert the truncated law's CDF instead of rejecting
    u = rng.random()
    k, cdf = 0, 0.0
    while True:
        k += 1
        cdf += float(repetitions_pmf(k, mean=mean, shape=shape))
        if cdf >= u or k > 10**7:
            return k


def default_repetitions(n_candidates: int, *, coverage: float = 0.9, shape: float = 1.0) -> float:
    r"""The mean number of runs for which :math:`P[K > \text{n\_candidates}]` equals ``coverage``.

    The rule of source 002 (Redberg, Koskela & Wang 2023, §5: Poisson with
    :math:`P[K > s] = 0.9`, s the grid size), for the Poisson law (``shape = inf``) or a
    truncated negative binomial one. For the geometric law (``shape = 1``) it is
    :math:`1/\gamma` with :math:`(1 - \gamma)^s = \text{coverage}`.

    Parameters
    ----------
    n_candidates : int
        The grid size s >= 1.
    coverage : float
        The probability, in (0, 1), that the number of runs exceeds the grid size.
    shape : float
        The law's shape (as in :func:`repetitions_pmf`).

    Returns
    -------
    float
        The mean.
    """
    from scipy import optimize, stats

    s = check_int_at_least(n_candidates, "n_candidates", 1)
    q = scalar_probability(coverage, "coverage")
    if isinstance(shape, (str, bytes, bool)):
        raise TypeError(f"shape must be a real number; got {shape!r}")
    shape = float(shape)
    if math.isinf(shape):
        return float(optimize.brentq(lambda m: stats.poisson.sf(s, m) - q, 1e-9, 10.0 * s + 100.0, xtol=1e-12))
    if shape == 1.0:
        return 1.0 / -math.expm1(math.log(q) / s)

    def gap(log_m: float) -> float:
        m = math.exp(log_m)
        return 1.0 - float(np.sum(repetitions_pmf(np.arange(1, s + 1), mean=m, shape=shape))) - q

    return float(math.exp(optimize.brentq(gap, math.log(1.0 + 1e-6), math.log(1e6), xtol=1e-12)))


def _check_orders(orders: ArrayLike) -> np.ndarray:
    o = np.atleast_1d(as_finite_array(orders, "orders")).astype(float)
    if o.ndim != 1 or np.any(o < 1.0):
        raise ValueError("orders must be a 1-d array of Renyi orders >= 1")
    return o


# ------------------------------------------------------------------- the RDP
def selection_rdp(orders: ArrayLike, *, candidates: Sequence[Sequence[float]], score_mu: float, mean: float,
                  shape: float, count: int = 1) -> np.ndarray:
    r"""Rényi DP of repeat and select over ObjPert candidates (Papernot & Steinke 2022, Thm 2 and 6).

    The base run (a uniformly drawn candidate trained on the training part, its score a
    Gaussian count on the disjoint validation part; see the module) has RDP
    :math:`\rho_Q(\alpha)`, the maximum of the candidates' log-mean-exp and the score's
    :math:`\alpha\mu_{\rm score}^2/2`; the number of runs is Poisson(``mean``) for
    ``shape = inf`` (Thm 6) or truncated negative binomial (Thm 2). Add/remove neighbours.

    Parameters
    ----------
    orders : array_like
        Rényi orders >= 1 (the theorems need an order > 1; at order 1 a truncated negative
        binomial law gets the bound of the larger orders, Poisson gets ``inf``).
    candidates : sequence of (L, beta, lam, sigma, mu_out)
        The public grid: ObjPert constants L and β (of the fitted rows), regularization λ,
        noise σ, and the output Gaussian's parameter :math:`\mu_{\rm out}` (>= 0).
    score_mu : float
        The Gaussian parameter of the score (a count with sensitivity 1).
    mean : float
        Expected number of runs (>= 1).
    shape : float
        ``math.inf`` for a Poisson number of runs; η >= 0 for the truncated negative binomial
        (0 logarithmic, 1 geometric).
    count : int
        ObjPert fits per run on the same records (their RDP adds up).

    Returns
    -------
    numpy.ndarray
        The RDP at each order (a float for a scalar order).
    """
    event = RepeatAndSelectEvent(candidates=candidates, score_mu=score_mu, mean=mean, shape=shape, count=count)
    out = event.rdp(_check_orders(orders))
    return out[0] if np.ndim(orders) == 0 else out


def selection_epsilon(delta: float, *, candidates: Sequence[Sequence[float]], score_mu: float, mean: float,
                      shape: float, count: int = 1) -> float:
    r"""The ε at ``delta`` of private model selection: :func:`selection_rdp` converted to (ε, δ).

    The conversion is Canonne, Kamath & Steinke (2020, Prop 12) through
    :func:`pdpkit.accounting.rdp_to_epsilon`, minimized over a fixed grid of 200 orders in
    (1, 10001].

    Parameters
    ----------
    delta : float
        The target δ in (0, 1).
    candidates : sequence of (L, beta, lam, sigma, mu_out)
        As in :func:`selection_rdp`.
    score_mu : float
        As in :func:`selection_rdp`.
    mean : float
        As in :func:`selection_rdp`.
    shape : float
        As in :func:`selection_rdp`.
    count : int
        As in :func:`selection_rdp`.

    Returns
    -------
    float
        ε such that the selection is (ε, δ)-DP.
    """
    delta = scalar_probability(delta, "delta")
    o = SELECTION_ORDERS[1:]
    rdp = selection_rdp(o, candidates=candidates, score_mu=score_mu, mean=mean, shape=shape, count=count)
    finite = np.isfinite(rdp)
    if not np.any(finite):
        raise ValueError("no finite RDP bound at any order: the candidates' noise is too small")
    return rdp_to_epsilon(o[finite], rdp[finite], delta=delta)[0]


# ---------------------------------------------------------------- calibration
@dataclass(frozen=True)
class SelectionCalibration:
    r"""The result of :func:`calibrate_selection`: the charge, the dropped λ, the per-run scale and the ε.

    Parameters
    ----------
    charge : pdpkit.events.RepeatAndSelectEvent
        The public parameters of the selection (candidates with their σ, the score's μ, the law).
    lams : tuple of float
        The λ of the kept candidates, in the order of ``charge.candidates``.
    dropped_lams : tuple of float
        The λ of the grid that were dropped (a public decision, see :func:`calibrate_selection`).
    run_epsilon : float
        The per-run scale: each kept candidate's σ is the smallest making ObjPert alone
        ``(run_epsilon, delta)``-DP.
    epsilon : float
        The selection's ε at ``delta`` (recomputed, at most the target).
    delta : float
        The target δ.
    """

    charge: RepeatAndSelectEvent
    lams: tuple[float, ...]
    dropped_lams: tuple[float, ...]
    run_epsilon: float
    epsilon: float
    delta: float


def _free_score_mu(cands: tuple, count: int) -> float:
    """The largest μ with α μ²/2 <= the candidates' log-mean-exp RDP at every order of the grid."""
    al = SELECTION_ORDERS[1:]
    train = RepeatAndSelectEvent(candidates=cands, score_mu=1e-300, mean=2.0, shape=1.0, count=count).base_rdp(al)
    return float(np.sqrt(np.min(2.0 * train / al)))


def calibrate_selection(eps: float, delta: float, *, L: float, beta: float, lams: Sequence[float], mean: float,
                        shape: float, mu_out: float = DEFAULT_OUTPUT_MU, score_share: float = 1.0,
                        count: int = 1, tol: float = 1e-4) -> SelectionCalibration:
    r"""Public (σ per candidate, score μ) so that the whole selection is (ε, δ)-DP (:func:`selection_epsilon`).

    One per-run scale ε_run: candidate λ gets the smallest σ for which ObjPert alone is
    (ε_run, δ)-DP (:func:`pdpkit.accounting.objpert_sigma`, sharp constant) — every λ gets its
    own best σ at a common level, the bias–variance trade-off of source 002, §5; the
    score gets ``score_share`` times the largest μ that costs nothing beyond the models
    (see the module). A λ whose log-determinant constant
    :math:`\log(1 + \beta/\lambda)` is at least ε_run/2 is dropped (more than half the per-run
    budget would pay for λ alone, leaving σ above about twice the Gaussian mechanism's); the
    decision depends on public numbers only. ε_run is the largest found by bisection (to
    relative ``tol``) at which the recomputed ε of the selection is at most ``eps``.

    Parameters
    ----------
    eps : float
        The target ε of the whole selection.
    delta : float
        The target δ (also the δ of the per-run scale).
    L : float
        Lipschitz constant of the loss on the fitted rows (the loss's constant times the rows' bound).
    beta : float
        Smoothness constant on the fitted rows (the loss's constant times the bound squared).
    lams : sequence of float
        The public grid of λ.
    mean : float
        Expected number of runs.
    shape : float
        The law of the number of runs (``math.inf`` Poisson, η >= 0 truncated negative binomial).
    mu_out : float
        The output Gaussian's parameter of every fit (the solver's tolerance; pdpkit's default).
    score_share : float
        The score's μ as a multiple of the free μ: at most 1 costs nothing beyond the models.
    count : int
        ObjPert fits per run on the same records.
    tol : float
        Relative tolerance of the bisection on ε_run.

    Returns
    -------
    SelectionCalibration
        The charge and the calibration's numbers; ``ValueError`` if no λ of the grid is kept.
    """
    eps = scalar_positive(eps, "eps")
    delta = scalar_probability(delta, "delta")
    L = scalar_positive(L, "L")
    beta = finite_scalar(beta, "beta")
    if beta < 0:
        raise ValueError(f"beta must be >= 0; got {beta!r}")
    mean, shape = check_repetition_law(mean, shape)
    mu_out = check_mu(finite_scalar(mu_out, "mu_out"))
    share = scalar_positive(score_share, "score_share")
    count = check_int_at_least(count, "count", 1)
    tol = scalar_positive(tol, "tol")
    if isinstance(lams, (str, bytes)) or np.ndim(lams) != 1 or len(lams) == 0:
        raise TypeError("lams must be a non-empty sequence of numbers")
    grid = tuple(float(scalar_positive(v, "lams")) for v in lams)
    eps0 = [math.log1p(beta / lam) for lam in grid]

    def plan(e_run: float) -> tuple[RepeatAndSelectEvent, tuple, tuple] | None:
        kept = [lam for lam, e0 in zip(grid, eps0, strict=True) if e0 < 0.5 * e_run]
        if not kept:
            return None
        cands = []
        for lam in kept:
            try:
                sigma = objpert_sigma(e_run, delta, L=L, beta=beta, lam=lam, sharp=True)
            except ValueError:
                return None
            cands.append((L, beta, lam, float(sigma), mu_out))
        cands = tuple(cands)
        score = min(share * _free_score_mu(cands, count), 100.0)
        charge = RepeatAndSelectEvent(candidates=cands, score_mu=score, mean=mean, shape=shape, count=count)
        return charge, tuple(kept), tuple(lam for lam in grid if lam not in kept)

    def eps_of(e_run: float) -> tuple[float, Any]:
        p = plan(e_run)
        if p is None:
            return math.inf, None
        try:
            return p[0].epsilon(delta), p
        except ValueError:
            return math.inf, None

    # bracket: lo has a plan within the budget, hi has none (or exceeds it)
    hi = eps
    e_hi, p_hi = eps_of(hi)
    if e_hi <= eps:  # one run at eps already fits: never happens for a real selection, kept for safety
        lo, p_lo, e_lo = hi, p_hi, e_hi
    else:
        lo = hi
        for _ in range(200):
            lo *= 0.5
            e_lo, p_lo = eps_of(lo)
            if e_lo <= eps:
                break
            if p_lo is None and lo < 2.0 * min(eps0) and min(eps0) > 0:
                raise ValueError(f"no lam of the grid reaches epsilon={eps:g}, delta={delta:g}: the largest "
                                 f"lam's log-determinant term is too large; add larger lams or raise epsilon")
        else:  # pragma: no cover
            raise ValueError(f"no per-run noise reaches epsilon={eps:g}, delta={delta:g}")
        while hi - lo > tol * lo:
            mid = 0.5 * (lo + hi)
            e_mid, p_mid = eps_of(mid)
            if e_mid <= eps:
                lo, p_lo, e_lo = mid, p_mid, e_mid
            else:
                hi = mid
    charge, kept, dropped = p_lo
    return SelectionCalibration(charge=charge, lams=kept, dropped_lams=dropped, run_epsilon=float(lo),
                                epsilon=float(e_lo), delta=float(delta))


# -------------------------------------------------------------- the mechanism
def repeat_and_select(run: Callable[[int, np.random.Generator], tuple[Any, float]], *, n_candidates: int,
                      mean: float, shape: float, rng: Any = None, default: Any = None) -> Any:
    r"""Repeat and select (Papernot & Steinke 2022, Alg 1): the best of a random number of runs.

    Draws :math:`K` from the law of :func:`repetitions_pmf`; for each of the :math:`K` runs
    draws a candidate index uniformly from ``range(n_candidates)`` and calls
    ``run(index, rng)``, which returns ``(result, score)`` (the score a noisy, released
    number); returns the result of the run with the highest score, ties broken uniformly at
    random. Neither :math:`K` nor the other runs are returned. With :math:`K = 0` (possible
    for a Poisson law only, with probability :math:`e^{-\text{mean}}`) the output is
    ``default`` — a fixed value chosen before the data are seen, as the theorem's
    :math:`\bot`. The guarantee is :func:`selection_rdp` for the base run ``run`` implements.

    Parameters
    ----------
    run : callable
        ``run(index, rng) -> (result, score)``: one run of the base mechanism with candidate
        ``index``; it must draw its randomness from ``rng`` (or from its own secret source).
    n_candidates : int
        The grid size (>= 1).
    mean : float
        Expected number of runs.
    shape : float
        ``math.inf`` for Poisson, η >= 0 for the truncated negative binomial.
    rng : int, numpy.random.Generator or None
        The secret randomness of the selection.
    default : object
        The output when no run is made.

    Returns
    -------
    object
        The best run's result, or ``default``.
    """
    m = check_int_at_least(n_candidates, "n_candidates", 1)
    mean, shape = check_repetition_law(mean, shape)
    gen = as_generator(rng, "rng")
    k = _draw_k(mean, shape, gen)
    best, best_score, ties = default, -math.inf, 0
    for _ in range(k):
        j = int(gen.integers(m))
        result, score = run(j, gen)
        score = float(score)
        if math.isnan(score):
            raise ValueError("run returned a NaN score")
        if score > best_score or ties == 0:
            best, best_score, ties = result, score, 1
        elif score == best_score:
            ties += 1
            if gen.random() * ties < 1.0:  # reservoir: each tied run kept with probability 1/ties
                best = result
    del k  # never returned
    return best
