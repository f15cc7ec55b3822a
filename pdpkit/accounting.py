r"""Tight accounting for objective perturbation: privacy profile, RDP, dominating pair, PLD.

Redberg, Koskela & Wang (2023), §3 and App. D, for GLM losses
:math:`\ell(\theta; z) = f(x^\top\theta; y)` with :math:`\|\nabla\ell\| \le L` and
:math:`0 \le f''\|x\|^2 \le \beta`, regularization :math:`\lambda` and noise
:math:`b \sim \mathcal N(0, \sigma^2 I_d)` (losses summed; add/remove neighbours).

The privacy-loss bound
----------------------
By the ex-post formula of :mod:`pdpkit.objpert` (Redberg & Wang 2021, Cor 7), for either
order of a neighbouring pair the privacy loss of an output is

.. math::

   \log\frac{p_D(\theta^P)}{p_{D'}(\theta^P)} = -\log(1 \pm \mu) + \frac{\|g\|^2}{2\sigma^2}
   \mp \frac{g^\top b}{\sigma^2},
   \qquad g = f'\,x,\quad \mu = f''\,x^\top H^{-1}x .

Here :math:`-\log(1 + \mu) \le 0`, and for a removal :math:`-\log(1 - \mu) =
\log(1 + f''x^\top H_{-z}^{-1}x) \le \log(1 + \beta/\lambda)` (Sherman–Morrison,
:math:`H_{-z} \succeq \lambda I`); :math:`\|g\|^2 \le L^2`; and
:math:`|g^\top b| \le L\,|x^\top b|/\|x\|` with :math:`x^\top b/(\sigma\|x\|) \sim \mathcal N(0, 1)`
under :math:`\mathcal M(D)` — :math:`x` is the fixed target, so no conditioning on
:math:`b` is needed (this is where the GLM structure enters). Hence the privacy loss is
dominated by

.. math::

   Y = \varepsilon_0 + \frac{a^2}{2} + a\,|Z|, \qquad Z \sim \mathcal N(0, 1),\quad a = L/\sigma,

with :math:`\varepsilon_0 = -\log(1 - \beta/\lambda)` (the source's constant, which needs
:math:`\lambda > \beta`) or, with ``sharp=True``, :math:`\varepsilon_0 = \log(1 + \beta/\lambda)`
(valid for every :math:`\lambda > 0`, and smaller). Every result of this module is a
function of the law of :math:`Y` (a shifted, scaled half-normal):

* :func:`objpert_delta` — :math:`\delta(\varepsilon) = \mathbb E[(1 - e^{\varepsilon - Y})_+]`,
  Thm 3.1 corrected (see the chapter's errata: the printed :math:`\tilde\varepsilon` has the
  wrong sign of the log term and the second branch the wrong order of :math:`H`);
* :func:`objpert_rdp` — :math:`\frac{1}{\alpha - 1}\log\mathbb E[e^{(\alpha - 1)Y}]`, Thm 3.2,
  with the correct limit at :math:`\alpha = 1`;
* :func:`objpert_dominating_pair`, :func:`objpert_pld` — a pair :math:`(P, Q)` whose
  privacy loss is exactly :math:`Y` (Lemmas D.4, D.6), and its pessimistic
  dp_accounting privacy-loss distribution, so ObjPert composes with anything
  dp_accounting knows (:func:`objpert_delta_composed`);
* calibration: :func:`objpert_epsilon`, :func:`objpert_sigma`, :func:`objpert_lambda`,
  :func:`objpert_calibrate` — never on the unsafe side;
* smooth losses without GLM structure: :func:`objpert_rdp_nonglm` (Thm E.1) and
  :func:`objpert_delta_nonglm`, where :math:`g` depends on :math:`b` and Cauchy–Schwarz
  replaces :math:`|Z|` by :math:`\|b\|/\sigma \sim \chi_d` (and the log term is
  :math:`d\,\varepsilon_0`);
* RDP conversion: :func:`rdp_to_epsilon`, :func:`rdp_to_delta` (Canonne, Kamath &
  Steinke 2020, Prop 12, as implemented by dp_accounting) and
  :func:`objpert_epsilon_rdp` over continuous orders.

Convention: the swept quantity (``eps``, ``delta``, ``alpha``) is positional, every
mechanism parameter (``L``, ``beta``, ``lam``, ``sigma``, ``k``) keyword-only. Mechanism
parameters are single numbers (an array or a string is a ``TypeError`` naming it), and
``L/sigma`` must lie in [1e-300, 1e154] (a ``ValueError`` names both outside it); no function
lets an overflow warning or a root finder's message through.
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate, optimize, special

from ._validation import (
    as_finite_array,
    check_int_at_least,
    check_mu,
    check_probability,
    scalar_nonnegative,
    scalar_positive,
    scalar_probability,
)
from .gaussian import delta_from_mu, log_delta_from_mu, gaussian_sigma

__all__ = [
    "ObjPertDominatingPair",
    "objpert_delta",
    "objpert_log_delta",
    "objpert_epsilon",
    "objpert_sigma",
    "objpert_lambda",
    "objpert_calibrate",
    "objpert_rdp",
    "rdp_to_epsilon",
    "rdp_to_delta",
    "objpert_epsilon_rdp",
    "objpert_dominating_pair",
    "objpert_pld",
    "objpert_delta_composed",
    "objpert_rdp_nonglm",
    "objpert_delta_nonglm",
    "objpert_output_delta",
    "objpert_output_epsilon",
    "objpert_output_calibrate",
]

_SQRT2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


# ------------------------------------------------------------------ parameters
#: The range of a = L/sigma every function accepts: a**2 stays finite, and so does every quantity
#: derived from it (the calibrations return parameters inside this range for any eps up to 1e300).
_A_MIN, _A_MAX = 1e-300, 1e154


def _scalar_positive(value: object, name: str) -> float:
    return scalar_positive(value, name)


def _eps0(beta: object, lam: object, sharp: object) -> float:
    """The log-determinant constant eps0 (validated beta, lam and sharp)."""
    beta = scalar_nonnegative(beta, "beta")
    lam = scalar_positive(lam, "lam")
    if not isinstance(sharp, (bool, np.bool_)):
        raise TypeError(f"sharp must be a bool; got {type(sharp).__name__}")
    if sharp:
        with np.errstate(over="ignore"):
            ratio = np.float64(beta) / np.float64(lam)
        if not np.isfinite(ratio):
            raise ValueError(f"beta/lam must be finite (at most about 1e308); got beta = {beta:g}, lam = {lam:g}")
        return math.log1p(float(ratio))
    if not lam > beta:
        raise ValueError(f"lam must be > beta = {beta:g} for the bound -log(1 - beta/lam) "
                         f"(or pass sharp=True, valid for every lam > 0); got lam = {lam:g}")
    return -math.log1p(-beta / lam)


def objpert_constants(L: object, beta: object, lam: object, sigma: object, sharp: bool) -> tuple[float, float]:
    """(eps0, a): the log-determinant constant and a = L/sigma, with validation."""
    L = _scalar_positive(L, "L")
    eps0 = _eps0(beta, lam, sharp)
    sigma = _scalar_positive(sigma, "sigma")
    return eps0, _ratio(L, sigma)


def _ratio(L: float, sigma: float) -> float:
    """a = L/sigma, which must lie in [1e-300, 1e154] (``ValueError`` naming L and sigma)."""
    with np.errstate(over="ignore", under="ignore"):
        a = float(np.float64(L) / np.float64(sigma))
    if not _A_MIN <= a <= _A_MAX:
        raise ValueError(f"L/sigma must lie in [{_A_MIN:g}, {_A_MAX:g}]; got L = {L:g}, sigma = {sigma:g}")
    return a


def _log_erfcx(a: float) -> float:
    """log erfcx(a/sqrt 2) = log E[e^{-a|Z|}] - a^2/2 (-inf where erfcx underflows, a beyond 1e308)."""
    v = float(special.erfcx(a / _SQRT2))
    return math.log(v) if v > 0.0 else -math.inf


def _clamp_log(v: float) -> float:
    """A log-delta as a finite float for the root finders (-inf, below the float range, becomes -1e308)."""
    return max(v, -1e308)


# -------------------------------------------------------------- privacy profile
def _log_delta(eps: np.ndarray, eps0: float, a: float) -> np.ndarray:
    """log delta(eps) of the dominating loss Y = eps0 + a^2/2 + a|Z| (vectorized, stable)."""
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        eps_t = eps - eps0  # the source's eps-tilde, with the correct sign
        eps_h = eps_t - 0.5 * a * a  # eps-hat
        out = np.empty_like(eps_t)
        upper = eps_h >= 0.0
        if np.any(upper):
            # 2 H_{e^eps_t}(N(a, 1) || N(0, 1)): the Gaussian profile at eps_t
            out[upper] = math.log(2.0) + log_delta_from_mu(eps_t[upper], np.full(upper.sum(), a))
        lower = ~upper
        if np.any(lower):
            # 1 - e^{eps_h} E[e^{-a|Z|}] with E[e^{-a|Z|}] = e^{a^2/2} 2 Phi(-a) = erfcx(a/sqrt 2)
            inner = eps_h[lower] + _log_erfcx(a)
            out[lower] = np.log(-np.expm1(np.minimum(inner, 0.0)))
    return out


def objpert_log_delta(eps: ArrayLike, *, L: float, beta: float, lam: float, sigma: float,
                      sharp: bool = False) -> np.ndarray:
    r"""Natural logarithm of :func:`objpert_delta`, accurate where δ underflows (far tail).

    Parameters
    ----------
    eps : array_like
        ε of the (ε, δ) guarantee, in nats.
    L : float
        Lipschitz bound L ≥ :math:`|f'|` of the GLM loss.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    """
    eps0, a = objpert_constants(L, beta, lam, sigma, sharp)
    e = np.atleast_1d(as_finite_array(eps, "eps")).astype(float)
    out = _log_delta(e.ravel(), eps0, a).reshape(e.shape)
    return out[0] if np.ndim(eps) == 0 else out


def objpert_delta(eps: ArrayLike, *, L: float, beta: float, lam: float, sigma: float,
                  sharp: bool = False) -> np.ndarray:
    r"""Privacy profile of objective perturbation for GLMs (Redberg, Koskela & Wang 2023, Thm 3.1, corrected).

    With :math:`a = L/\sigma`, :math:`\varepsilon_0` the log-determinant constant (module
    docstring), :math:`\tilde\varepsilon = \varepsilon - \varepsilon_0` and
    :math:`\hat\varepsilon = \tilde\varepsilon - a^2/2`:

    .. math::

       \delta(\varepsilon) = \begin{cases}
         2\,H_{e^{\tilde\varepsilon}}\big(\mathcal N(L, \sigma^2)\,\|\,\mathcal N(0, \sigma^2)\big),
           & \hat\varepsilon \ge 0,\\
         1 - e^{\hat\varepsilon}\,\operatorname{erfcx}(a/\sqrt2)
           = (1 - e^{\hat\varepsilon}) + 2e^{\hat\varepsilon} H_{e^{a^2/2}}(\cdots),
           & \hat\varepsilon < 0,
       \end{cases}

    the hockey-stick divergence of the dominating pair (:func:`objpert_dominating_pair`),
    for every real ε (continuous at :math:`\hat\varepsilon = 0`). ObjPert with rows
    :math:`\|x\| \le 1` (so that :math:`L, \beta` bound :math:`|f'|\|x\|, f''\|x\|^2`) is
    :math:`(\varepsilon, \delta(\varepsilon))`-DP for every ε. Evaluated in log space
    where small (relative error about :math:`10^{-13}` down to δ = 1e-300), vectorized over ``eps``.

    Parameters
    ----------
    eps : array_like
        ε, any real values.
    L, beta, lam, sigma : float
        Keyword-only: Lipschitz and smoothness constants of the loss, regularization
        :math:`\lambda` (> β unless ``sharp``), noise scale σ.
    sharp : bool
        Use :math:`\log(1 + \beta/\lambda)` instead of the source's
        :math:`-\log(1 - \beta/\lambda)` (valid for every λ > 0).
    """
    eps0, a = objpert_constants(L, beta, lam, sigma, sharp)
    e = np.atleast_1d(as_finite_array(eps, "eps")).astype(float)
    out = _delta(e.ravel(), eps0, a).reshape(e.shape)
    return out[0] if np.ndim(eps) == 0 else out


def _delta(flat: np.ndarray, eps0: float, a: float) -> np.ndarray:
    """delta(eps) of the dominating loss (no validation; see :func:`objpert_delta`)."""
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        eps_t = flat - eps0
        out = np.empty_like(flat)
        upper = eps_t - 0.5 * a * a >= 0.0
        if np.any(upper):
            out[upper] = np.minimum(1.0, 2.0 * delta_from_mu(eps_t[upper], np.full(upper.sum(), a)))
        if np.any(~upper):
            inner = eps_t[~upper] - 0.5 * a * a + _log_erfcx(a)
            out[~upper] = -np.expm1(np.minimum(inner, 0.0))
        tiny = out < 1e-280
        if np.any(tiny):  # keep relative accuracy where the direct form underflows
            out[tiny] = np.exp(_log_delta(flat[tiny], eps0, a))
    return out


# ------------------------------------------------------------------- inversion
def _solve_increasing(fn: Callable[[float], float], lo: float, hi: float, *, grow: Callable[[float], float],
                      max_grow: int = 200) -> float:
    """Root of an increasing fn on [lo, hi], growing hi until fn(hi) >= 0."""
    f_hi = fn(hi)
    n = 0
    while f_hi < 0:
        lo, hi = hi, grow(hi)
        f_hi = fn(hi)
        n += 1
        if n > max_grow:
            raise ArithmeticError("could not bracket the root")
    return optimize.brentq(fn, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500)


class _NoSolution(ValueError):
    """A calibration without a solution (the caller may re-raise it naming its own parameter)."""


_SOLVER_ERRORS = (ArithmeticError, RuntimeError, ValueError)


def objpert_epsilon(delta: ArrayLike, *, L: float, beta: float, lam: float, sigma: float,
                    sharp: bool = False) -> np.ndarray:
    r"""Smallest ε ≥ 0 with :func:`objpert_delta` :math:`(\varepsilon) \le \delta` (Thm 3.1 inverted).

    Solved in log space by Brent's method, then moved up by a few ulps until the
    inequality holds in floating point: the returned ε is never on the unsafe side.
    Where δ(0) ≤ δ already (a tiny ``L/sigma`` with a small log-determinant constant: the
    privacy loss is then below δ at ε = 0) the answer is 0 — the profile is defined for
    negative ε too, but a privacy guarantee's ε is not. Vectorized over ``delta`` in (0, 1).

    Parameters
    ----------
    delta : array_like
        δ of the (ε, δ) guarantee, in (0, 1).
    L : float
        Lipschitz bound L ≥ :math:`|f'|` of the GLM loss.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    """
    eps0, a = objpert_constants(L, beta, lam, sigma, sharp)
    d = np.atleast_1d(check_probability(delta, "delta")).astype(float)
    out = np.empty(d.size)
    c = eps0 + 0.5 * a * a
    delta_at_zero = float(_delta(np.zeros(1), eps0, a)[0])
    for i, di in enumerate(d.ravel()):
        if delta_at_zero <= di:
            out[i] = 0.0
            continue
        target = math.log(di)

        def fn(e: float, target: float = target) -> float:  # increasing in e
            return target - _clamp_log(float(_log_delta(np.array([e]), eps0, a)[0]))

        # P(Y > eps) >= delta(eps): eps = c + a Phi^{-1}(1 - delta/2) is on the safe side of the root
        top = (c + a * float(-special.ndtri(di / 2.0))) * (1.0 + 1e-12) + 1e-12
        lo = c - 50.0 * (1.0 + a)
        for _ in range(10_000):  # (the relative step matters where a^2 is so large that 50 a is below an ulp)
            if fn(lo) <= 0:
                break
            lo -= max(50.0 * (1.0 + a), abs(lo) * 1e-12)
        def grow(h: float, top: float = top) -> float:
            nxt = h + 2.0 * (1.0 + a) + abs(h)
            return nxt if nxt < 1e300 else max(top, h)  # no overflow: top is past the root

        try:
            e = _solve_increasing(fn, lo, max(c, lo + 1.0), grow=grow)
        except _SOLVER_ERRORS:  # pragma: no cover - the bracket [lo, top] always holds the root
            raise ValueError(f"could not invert the profile at delta = {di:g} for L/sigma = {a:g}, eps0 = "
                             f"{eps0:g}") from None
        e = max(e, 0.0)
        for _ in range(64):
            if float(_delta(np.array([e]), eps0, a)[0]) <= di:
                break
            e = e + max(abs(e), 1.0) * 1e-13
        out[i] = e
    out = out.reshape(d.shape)
    return out[0] if np.ndim(delta) == 0 else out


def objpert_sigma(eps: float, delta: float, *, L: float, beta: float, lam: float,
                  sharp: bool = False) -> float:
    r"""Smallest σ such that ObjPert is (ε, δ)-DP by :func:`objpert_delta`.

    δ(ε) decreases in σ and tends to :math:`(1 - e^{\varepsilon - \varepsilon_0})_+` as
    σ → ∞, so a σ exists iff :math:`\varepsilon \ge \varepsilon_0`; otherwise a
    ``ValueError`` names ``lam`` (increase it). The result is rounded up. ``eps`` and
    ``delta`` are single numbers; ``eps`` up to 1e300 (σ is then tiny), and a σ beyond the
    float range (a huge ``L`` with a tiny δ) is a ``ValueError``.

    Parameters
    ----------
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    L : float
        Lipschitz bound L ≥ :math:`|f'|` of the GLM loss.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    """
    eps = scalar_positive(eps, "eps")
    delta = scalar_probability(delta, "delta")
    L = _scalar_positive(L, "L")
    eps0 = _eps0(beta, lam, sharp)
    if eps > 1e300:
        raise ValueError(f"eps must be at most 1e300 (sigma is then about L * 1e-150); got eps = {eps:g}")
    if eps <= eps0:
        raise ValueError(f"lam is too small: the log-determinant term alone costs eps0 = {eps0:.6g} >= eps = "
                         f"{eps:g}; increase lam (or use sharp=True)")
    log_delta = math.log(delta)

    def fn(log_s: float) -> float:  # increasing in log sigma
        a = L / math.exp(log_s)
        return log_delta - _clamp_log(float(_log_delta(np.array([eps]), eps0, a)[0]))

    # ObjPert's privacy loss dominates the Gaussian mechanism's, so its sigma is at least the Gaussian one
    try:
        g = float(gaussian_sigma(eps, delta, sensitivity=L))
    except ValueError:
        raise ValueError(f"L is out of range for (eps, delta) = ({eps:g}, {delta:g}): sigma would exceed the "
                         f"largest float; got L = {L:g}") from None
    lo = math.log(g) - 1.0
    for _ in range(2000):  # log sigma spans about 1400 in floats
        if fn(lo) <= 0:
            break
        lo -= 1.0
    try:
        log_s = _solve_increasing(fn, lo, lo + 1.0, grow=lambda h: h + 1.0, max_grow=2000)
    except _SOLVER_ERRORS:  # pragma: no cover - delta(eps) -> 0 as sigma -> infinity when eps > eps0
        raise ValueError(f"could not calibrate sigma for (eps, delta) = ({eps:g}, {delta:g}); got L = {L:g}, "
                         f"beta = {float(beta):g}, lam = {float(lam):g}") from None
    if log_s > math.log(np.finfo(float).max) - 1e-9:
        raise ValueError(f"sigma would exceed the largest float: eps = {eps:g} is too close to eps0 = {eps0:.6g} "
                         f"or L = {L:g} too large for delta = {delta:g}")
    s = math.exp(log_s)
    for _ in range(64):
        if float(_delta(np.array([eps]), eps0, L / s)[0]) <= delta:
            return s
        s *= 1.0 + 1e-13
    return s  # pragma: no cover


def objpert_lambda(eps: float, delta: float, *, L: float, beta: float, sigma: float,
                   sharp: bool = False) -> float:
    r"""Smallest λ such that ObjPert is (ε, δ)-DP by :func:`objpert_delta` at noise σ.

    δ(ε) decreases in λ (through :math:`\varepsilon_0`) to the value at
    :math:`\varepsilon_0 = 0`; if even that exceeds δ no λ works and a ``ValueError``
    names ``sigma`` (increase it). Solved by bisection on :math:`\varepsilon_0`, rounded up.
    Where the smallest λ is below the float range (a huge ε), the smallest positive normal
    float is returned (it satisfies the guarantee).

    Parameters
    ----------
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    L : float
        Lipschitz bound L ≥ :math:`|f'|` of the GLM loss.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    """
    eps = scalar_positive(eps, "eps")
    delta = scalar_probability(delta, "delta")
    L = _scalar_positive(L, "L")
    beta = scalar_nonnegative(beta, "beta")
    sigma = _scalar_positive(sigma, "sigma")
    if not isinstance(sharp, (bool, np.bool_)):
        raise TypeError(f"sharp must be a bool; got {type(sharp).__name__}")
    try:
        return _lambda(eps, delta, L, beta, sigma, sharp)
    except _NoSolution as exc:
        raise ValueError(str(exc)) from None


def _lambda(eps: float, delta: float, L: float, beta: float, sigma: float, sharp: bool) -> float:
    a = _ratio(L, sigma)
    log_delta = math.log(delta)
    if _clamp_log(float(_log_delta(np.array([eps]), 0.0, a)[0])) > log_delta:
        raise _NoSolution(f"sigma is too small: even as lam -> infinity delta(eps = {eps:g}) > {delta:g}; "
                          f"increase sigma")
    tiny = float(np.finfo(float).tiny)
    if beta == 0.0:
        return tiny

    def fn(e0: float) -> float:  # decreasing in e0
        return log_delta - _clamp_log(float(_log_delta(np.array([eps]), e0, a)[0]))

    # delta(eps) >= 1 - e^{eps - e0}: at e0 = eps - log(1 - delta) the target is met with equality at best
    # (for a tiny L/sigma, with rounding on either side: step past it)
    top = eps if fn(eps) < 0 else eps - math.log1p(-delta)
    step = max(abs(top), 1.0) * 1e-15
    for _ in range(200):
        if fn(top) <= 0:
            break
        top, step = top + step, 2.0 * step
    try:
        e0 = optimize.brentq(fn, 0.0, top, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    except _SOLVER_ERRORS:  # pragma: no cover - fn(0) >= 0 >= fn(top)
        raise ValueError(f"could not calibrate lam for (eps, delta) = ({eps:g}, {delta:g}); got L = {L:g}, "
                         f"beta = {beta:g}, sigma = {sigma:g}") from None
    e0 = max(0.0, e0 * (1.0 - 1e-12))
    if e0 == 0.0:
        raise _NoSolution(f"sigma is too small: only lam -> infinity meets delta(eps = {eps:g}) <= {delta:g}; "
                          f"increase sigma")
    # eps0 = log(1 + beta/lam) (sharp) or -log(1 - beta/lam): solve for lam, round up
    if not sharp:
        lam = beta / -math.expm1(-e0)
    elif e0 < 700.0:
        lam = beta / math.expm1(e0)
    else:  # e^{e0} - 1 overflows: log lam = log beta - e0 - log(1 - e^{-e0})
        lam = math.exp(max(math.log(beta) - e0 - math.log1p(-math.exp(-e0)), math.log(tiny)))
    lam = max(lam * (1.0 + 1e-12), tiny)
    if sharp and not math.isfinite(beta / lam):
        raise ValueError(f"beta/lam would exceed the largest float: beta = {beta:g} is too large for "
                         f"eps = {eps:g}; rescale the loss")
    for _ in range(64):
        eps0 = math.log1p(beta / lam) if sharp else -math.log1p(-beta / lam)
        if float(_delta(np.array([eps]), eps0, a)[0]) <= delta:
            return lam
        lam *= 1.0 + 1e-12
    return lam  # pragma: no cover


def objpert_calibrate(eps: float, delta: float, *, L: float, beta: float, f: float = 1.3,
                      sharp: bool = False) -> tuple[float, float]:
    r"""(λ, σ) for (ε, δ)-DP ObjPert by the rule of Redberg, Koskela & Wang (2023), §5.

    σ = ``f`` × the tight Gaussian σ at sensitivity L (:func:`pdpkit.gaussian.gaussian_sigma`),
    then the smallest valid λ (:func:`objpert_lambda`, solved, not searched on a grid).
    ``f > 1`` is needed for a finite λ; for a small ε it must be larger (about 2 as ε → 0,
    where ObjPert's δ(0) is twice the Gaussian mechanism's): a ``ValueError`` names ``f``.

    Parameters
    ----------
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    L : float
        Lipschitz bound L ≥ :math:`|f'|` of the GLM loss.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    f : float, default 1.3
        Factor by which σ exceeds the σ of the Gaussian mechanism with the same (ε, δ) (the source's rule is 1.3).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    """
    eps = scalar_positive(eps, "eps")
    delta = scalar_probability(delta, "delta")
    f = scalar_positive(f, "f")
    if f <= 1.0:
        raise ValueError(f"f must be > 1 (sigma above the Gaussian mechanism's); got {f}")
    L = _scalar_positive(L, "L")
    beta = scalar_nonnegative(beta, "beta")
    if not isinstance(sharp, (bool, np.bool_)):
        raise TypeError(f"sharp must be a bool; got {type(sharp).__name__}")
    try:
        g = float(gaussian_sigma(eps, delta, sensitivity=L))
    except ValueError:
        raise ValueError(f"L is out of range for (eps, delta) = ({eps:g}, {delta:g}): sigma would exceed the "
                         f"float range; got L = {L:g}") from None
    sigma = f * g
    if not (math.isfinite(sigma) and _A_MIN <= L / sigma <= _A_MAX):
        raise ValueError(f"f is too large: sigma = f * (Gaussian sigma) leaves the range where L/sigma lies in "
                         f"[{_A_MIN:g}, {_A_MAX:g}]; got f = {f:g}")
    try:
        return _lambda(eps, delta, L, beta, sigma, sharp), sigma
    except _NoSolution:
        raise ValueError(f"f is too small for (eps, delta) = ({eps:g}, {delta:g}): with sigma = f * (Gaussian "
                         f"sigma) no lam meets the target; increase f (about 2 or more for a small eps); "
                         f"got f = {f:g}") from None


# ------------------------------------------------------------------------- RDP
def objpert_rdp(alpha: ArrayLike, *, L: float, beta: float, lam: float, sigma: float,
                sharp: bool = False) -> np.ndarray:
    r"""Rényi DP of objective perturbation for GLMs (Redberg, Koskela & Wang 2023, Thm 3.2).

    .. math::

       \varepsilon(\alpha) = \varepsilon_0 + \frac{\alpha a^2}{2}
         + \frac{\log\big(2\Phi((\alpha - 1)a)\big)}{\alpha - 1},\qquad a = L/\sigma,

    i.e. :math:`\varepsilon_0 + a^2/2 + \frac{1}{\alpha-1}\log\mathbb E[e^{(\alpha-1)a|Z|}]`
    with the half-normal moment generating function. At α = 1 it is the limit
    :math:`\varepsilon_0 + a^2/2 + a\sqrt{2/\pi}` (the source's α = 1 line instead
    evaluates the moment generating function at 1). Vectorized over α ≥ 1.

    Parameters
    ----------
    alpha : array_like
        Rényi order α ≥ 1.
    L : float
        Lipschitz bound L ≥ :math:`|f'|` of the GLM loss.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    """
    eps0, a = objpert_constants(L, beta, lam, sigma, sharp)
    al = np.atleast_1d(as_finite_array(alpha, "alpha")).astype(float)
    if np.any(al < 1.0):
        raise ValueError(f"alpha must be >= 1; got {alpha!r}")
    out = _rdp(al, eps0, a)
    if not np.all(np.isfinite(out)):
        raise ValueError("alpha * (L/sigma)**2 / 2 exceeds the largest float: alpha or L/sigma is too large")
    return out[0] if np.ndim(alpha) == 0 else out


def _rdp(al: np.ndarray, eps0: float, a: float) -> np.ndarray:
    """Thm 3.2 at the orders ``al`` >= 1 (no validation; +inf beyond the float range)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        t = (al - 1.0) * a
        log_mgf = np.log(2.0) + special.log_ndtr(t)
        term = np.where(t > 1e-8, log_mgf / np.where(t > 0, al - 1.0, 1.0),
                        a * _SQRT_2_OVER_PI - t * a / math.pi)
        out = eps0 + 0.5 * al * a * a + term
    return out.reshape(al.shape)


def _check_orders(orders: ArrayLike, rdp: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    o = np.atleast_1d(as_finite_array(orders, "orders")).astype(float)
    r = np.atleast_1d(as_finite_array(rdp, "rdp")).astype(float)
    if o.shape != r.shape or o.ndim != 1:
        raise ValueError(f"orders and rdp must be 1-d of the same length; got {o.shape} and {r.shape}")
    if np.any(o < 1.0):
        raise ValueError("orders must all be >= 1")
    if np.any(r < 0.0):
        raise ValueError("rdp must all be >= 0 (a Renyi divergence is never negative)")
    return o, r


def rdp_to_epsilon(orders: ArrayLike, rdp: ArrayLike, *, delta: float) -> tuple[float, float]:
    r"""(ε, order): the smallest ε over the orders by the improved conversion.

    :math:`\varepsilon = \rho(\alpha) + \log(1 - 1/\alpha) - \log(\delta\alpha)/(\alpha - 1)`
    (Canonne, Kamath & Steinke 2020, Prop 12), evaluated by
    ``dp_accounting.rdp.rdp_privacy_accountant.compute_epsilon``.

    Parameters
    ----------
    orders : array_like
        Rényi orders α > 1 at which the RDP curve is given or evaluated.
    rdp : array_like
        Rényi DP ε(α) at the given orders.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    """
    from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc

    delta = scalar_probability(delta, "delta")
    o, r = _check_orders(orders, rdp)
    eps, order = rdp_acc.compute_epsilon(o, r, delta)
    return float(eps), float(order)


def rdp_to_delta(orders: ArrayLike, rdp: ArrayLike, *, eps: float) -> tuple[float, float]:
    r"""(δ, order): the smallest δ over the orders for a target ε (the same conversion, inverted),
    by ``dp_accounting.rdp.rdp_privacy_accountant.compute_delta``.

    Parameters
    ----------
    orders : array_like
        Rényi orders α > 1 at which the RDP curve is given or evaluated.
    rdp : array_like
        Rényi DP ε(α) at the given orders.
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    """
    from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc

    eps = scalar_nonnegative(eps, "eps")
    o, r = _check_orders(orders, rdp)
    tiny = (r > 0.0) & (r < 1e-15)
    if np.any(tiny):
        # dp_accounting's KL bound 0.5 log(1 - e^{-r}) fails for such r (e^{-r} rounds to 1): give it the same
        # bound for those orders computed with expm1, then let it evaluate the rest
        log_kl = 0.5 * np.log(-np.expm1(-r[tiny]))
        a_t = o[tiny]
        with np.errstate(divide="ignore"):
            rdp_bound = np.where(a_t > 1.01, (a_t - 1.0) * (r[tiny] - eps + np.log1p(-1.0 / a_t)) - np.log(a_t),
                                 np.inf)
        log_d = np.minimum(log_kl, rdp_bound)
        j = int(np.argmin(log_d))
        best = (min(math.exp(log_d[j]), 1.0), float(a_t[j]))
        if np.all(tiny):
            return best
        delta, order = rdp_acc.compute_delta(o[~tiny], r[~tiny], eps)
        return min((float(delta), float(order)), best)
    delta, order = rdp_acc.compute_delta(o, r, eps)
    return float(delta), float(order)


def objpert_epsilon_rdp(delta: float, *, L: float, beta: float, lam: float, sigma: float,
                        sharp: bool = False) -> tuple[float, float]:
    r"""(ε, α): Thm 3.2 converted to (ε, δ) by the improved conversion, minimized over continuous α > 1.

    Parameters
    ----------
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    L : float
        Lipschitz bound L ≥ :math:`|f'|` of the GLM loss.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    """
    delta = scalar_probability(delta, "delta")
    eps0, a = objpert_constants(L, beta, lam, sigma, sharp)

    def eps_of(log_am1: float) -> float:
        al = 1.0 + math.exp(log_am1)
        rho = float(_rdp(np.array([al]), eps0, a)[0])  # +inf where it exceeds the float range
        return rho + math.log1p(-1.0 / al) - math.log(delta * al) / (al - 1.0)

    grid = np.linspace(math.log(0.02), math.log(5000.0), 200)
    vals = np.array([eps_of(g) for g in grid])
    j = int(np.argmin(vals))
    lo, hi = grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]
    res = optimize.minimize_scalar(eps_of, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
    best = min((float(res.fun), float(res.x)), (float(vals[j]), float(grid[j])))
    if not math.isfinite(best[0]):
        raise ValueError(f"the RDP bound exceeds the largest float at every order: L/sigma = {a:g} is too large")
    return max(0.0, best[0]), 1.0 + math.exp(best[1])


# ----------------------------------------------------------- dominating pair, PLD
@dataclass(frozen=True)
class ObjPertDominatingPair:
    r"""A dominating pair :math:`(P, Q)` for ObjPert (Redberg, Koskela & Wang 2023, Lemmas D.4, D.6).

    In the coordinate :math:`t = |Z| \ge 0`: :math:`P` is the half-normal law,
    :math:`p(t) = 2\varphi(t)`; :math:`Q` has density
    :math:`q(t) = p(t)\,e^{-(c + a t)} = 2e^{a^2/2 - c}\varphi(t + a)` on :math:`t \ge 0`
    (a half-normal shifted by :math:`-a`, the form of Lemma D.6 with :math:`(t + L)` in
    units of σ) and an atom of mass ``mass_q_at_minus_inf`` :math:`= 1 - 2e^{-\varepsilon_0}\Phi(-a)`
    where :math:`P` has none (privacy loss :math:`-\infty`). The privacy loss
    :math:`\log p/q = c + a t` is exactly the dominating variable :math:`Y`, so
    :math:`H_{e^\varepsilon}(P\|Q)` is :func:`objpert_delta` for every ε.

    Attributes
    ----------
    eps0 : float
        The constant ε₀ of the dominating privacy loss :math:`Y = \varepsilon_0 + a^2/2 + a|Z|` (module docstring).
    a : float
        The slope a = L/σ of Y in :math:`|Z|`.
    """

    eps0: float
    a: float

    @property
    def c(self) -> float:
        """Offset :math:`c = \\varepsilon_0 + a^2/2` of the privacy loss."""
        return self.eps0 + 0.5 * self.a * self.a

    @property
    def mass_q_at_minus_inf(self) -> float:
        """Mass of :math:`Q` outside the support of :math:`P`, in [0, 1)."""
        return float(-np.expm1(-self.eps0 + math.log(2.0) + special.log_ndtr(-self.a)))

    def pdf_p(self, t: ArrayLike) -> np.ndarray:
        """Density of :math:`P` (half-normal) at ``t``.

        Parameters
        ----------
        t : array_like
            Point(s) of the real line at which to evaluate.
        """
        t = np.asarray(t, dtype=float)
        return np.where(t >= 0, 2.0 * np.exp(-0.5 * t * t) / math.sqrt(2 * math.pi), 0.0)

    def pdf_q(self, t: ArrayLike) -> np.ndarray:
        """Density of the continuous part of :math:`Q` at ``t``.

        Parameters
        ----------
        t : array_like
            Point(s) of the real line at which to evaluate.
        """
        t = np.asarray(t, dtype=float)
        u = t + self.a
        return np.where(t >= 0, 2.0 * np.exp(0.5 * self.a**2 - self.c - 0.5 * u * u) / math.sqrt(2 * math.pi), 0.0)

    def privacy_loss(self, t: ArrayLike) -> np.ndarray:
        """:math:`\\log p(t)/q(t) = c + a t`.

        Parameters
        ----------
        t : array_like
            Point(s) of the real line at which to evaluate.
        """
        return self.c + self.a * np.asarray(t, dtype=float)


def objpert_dominating_pair(*, L: float, beta: float, lam: float, sigma: float,
                            sharp: bool = False) -> ObjPertDominatingPair:
    """The dominating pair of :class:`ObjPertDominatingPair` for these parameters.

    Parameters
    ----------
    L : float
        Lipschitz bound L ≥ :math:`|f'|` of the GLM loss.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    """
    eps0, a = objpert_constants(L, beta, lam, sigma, sharp)
    return ObjPertDominatingPair(eps0=eps0, a=a)


#: Largest privacy-loss grid :func:`objpert_pld` builds (a few hundred MB at most in dp_accounting).
_PLD_MAX_POINTS = 5e6


def objpert_pld(*, L: float, beta: float, lam: float, sigma: float, sharp: bool = False,
                value_discretization_interval: float = 1e-4, tail_mass: float = 1e-15):
    r"""Pessimistic dp_accounting ``PrivacyLossDistribution`` of the dominating pair, by connect-the-dots.

    Doroshenko, Ghazi, Kamath, Kumar & Manurangsi (2022): on the grid
    :math:`\varepsilon_k = kh` (``h = value_discretization_interval``) the exact profile
    :math:`\delta(\varepsilon_k)` (:func:`objpert_delta`) is interpolated linearly in
    :math:`e^\varepsilon`. A hockey-stick divergence is convex in :math:`e^\varepsilon`, so the
    interpolant lies above :math:`\delta` everywhere and equals it on the grid; it is the
    profile of the PMF with masses

    .. math::

       p_k = \frac{(\delta_{k+1} - \delta_k) - e^h(\delta_k - \delta_{k-1})}{e^h - 1}

    at loss :math:`\varepsilon_k` (no overflow: :math:`e^{\varepsilon_k}` cancels). The grid starts
    at or below the smallest privacy loss :math:`c = \varepsilon_0 + a^2/2`, where δ is exactly
    linear in :math:`e^\varepsilon`, and stops where :math:`\delta \le` ``tail_mass``; what is left is
    put at :math:`+\infty` (counted in δ). The result is pessimistic, alone and composed.

    Parameters
    ----------
    L : float
        Lipschitz bound L ≥ :math:`|f'|` of the GLM loss.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    value_discretization_interval : float, default 0.0001
        Discretization interval of dp_accounting's privacy-loss distribution (smaller: tighter and slower).
    tail_mass : float, default 1e-15
        Probability mass of the profile's tail that dp_accounting may truncate (added to δ pessimistically).
    """
    from dp_accounting.pld import pld_pmf, privacy_loss_distribution

    eps0, a = objpert_constants(L, beta, lam, sigma, sharp)
    h = scalar_positive(value_discretization_interval, "value_discretization_interval")
    if h > 100.0:
        raise ValueError(f"value_discretization_interval must lie in (0, 100] (a grid step in nats); got {h:g}")
    tail_mass = scalar_probability(tail_mass, "tail_mass")
    c = eps0 + 0.5 * a * a
    # last grid point: delta(eps) <= tail_mass
    e_hi = float(objpert_epsilon(tail_mass, L=L, beta=beta, lam=lam, sigma=sigma, sharp=sharp))
    with np.errstate(over="ignore"):
        span = (max(e_hi, c) - min(c, e_hi)) / h + 3.0
        k_max = max(abs(c), abs(e_hi)) / h
    if not (span <= _PLD_MAX_POINTS and k_max < 2.0**52):
        raise ValueError(f"value_discretization_interval is too fine for these parameters: the grid from the "
                         f"smallest privacy loss to delta = tail_mass would exceed {_PLD_MAX_POINTS:g} points; "
                         f"increase it or sigma (got value_discretization_interval = {h:g}, L/sigma = {a:g})")
    k_lo = math.floor(c / h)
    k_hi = max(k_lo + 2, math.ceil(e_hi / h))
    ks = np.arange(k_lo, k_hi + 1)
    dl = objpert_delta(ks * h, L=L, beta=beta, lam=lam, sigma=sigma, sharp=sharp)
    em1 = math.expm1(h)
    diffs = np.diff(dl)  # delta_{k+1} - delta_k  (<= 0)
    p = np.empty(ks.size)
    p[0] = diffs[0] / em1 + (1.0 - dl[0])  # left of the grid delta is linear with slope -(1 - delta_0)/x_0
    p[1:-1] = (diffs[1:] - (em1 + 1.0) * diffs[:-1]) / em1
    p[-1] = -(em1 + 1.0) * diffs[-1] / em1
    p = np.maximum(p, 0.0)  # convexity makes them >= 0 up to rounding
    infinity_mass = float(dl[-1])
    loss_probs = {int(k): float(v) for k, v in zip(ks, p, strict=True) if v > 0}
    pmf = pld_pmf.create_pmf(loss_probs, h, infinity_mass, pessimistic_estimate=True)
    return privacy_loss_distribution.PrivacyLossDistribution(pmf)


def objpert_delta_composed(eps: ArrayLike, *, k: int, L: float, beta: float, lam: float, sigma: float,
                           sharp: bool = False, value_discretization_interval: float = 1e-4) -> np.ndarray:
    r"""δ(ε) of ``k`` adaptive compositions of ObjPert (Redberg, Koskela & Wang 2023, Lemma D.7 and equation D.11).

    The PLD of :func:`objpert_pld` composed ``k`` times by FFT in dp_accounting
    (pessimistic). ``k = 1`` returns :func:`objpert_delta` exactly.

    Parameters
    ----------
    eps : array_like
        ε of the (ε, δ) guarantee, in nats.
    k : int
        Number of adaptive compositions k ≥ 1.
    L : float
        Lipschitz bound L ≥ :math:`|f'|` of the GLM loss.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    value_discretization_interval : float, default 0.0001
        Discretization interval of dp_accounting's privacy-loss distribution (smaller: tighter and slower).
    """
    k = check_int_at_least(k, "k", 1)
    e = np.atleast_1d(as_finite_array(eps, "eps")).astype(float)
    if k == 1:
        return objpert_delta(eps, L=L, beta=beta, lam=lam, sigma=sigma, sharp=sharp)
    pld = objpert_pld(L=L, beta=beta, lam=lam, sigma=sigma, sharp=sharp,
                      value_discretization_interval=value_discretization_interval)
    with warnings.catch_warnings():  # scipy's logsumexp warns on exact zeros inside dp_accounting
        warnings.simplefilter("ignore", RuntimeWarning)
        composed = pld.self_compose(k)
        out = np.array([composed.get_delta_for_epsilon(float(x)) for x in e.ravel()]).reshape(e.shape)
    return out[0] if np.ndim(eps) == 0 else out


# ------------------------------------------------------------------- non-GLM losses
def _nonglm_constants(L, beta, lam, sigma, d, sharp) -> tuple[float, float, int]:
    eps0, a = objpert_constants(L, beta, lam, sigma, sharp)
    d = check_int_at_least(d, "d", 1)
    return d * eps0, a, d


def _chi_logpdf(w: np.ndarray, d: int) -> np.ndarray:
    from scipy import stats

    return stats.chi.logpdf(w, d)


def objpert_rdp_nonglm(alpha: ArrayLike, *, L: float, beta: float, lam: float, sigma: float, d: int,
                       sharp: bool = False) -> np.ndarray:
    r"""RDP of ObjPert for smooth convex losses without GLM structure (Redberg, Koskela & Wang 2023, Thm E.1).

    For :math:`\|\nabla\ell\| \le L`, :math:`\nabla^2\ell \preceq \beta I_d`: the log-determinant
    term is at most :math:`d\varepsilon_0` and, :math:`g` depending on :math:`b`, the cross term
    at most :math:`a\|b\|/\sigma` with :math:`\|b\|/\sigma = W \sim \chi_d` (Cauchy–Schwarz), so

    .. math::

       \varepsilon(\alpha) = d\varepsilon_0 + \frac{a^2}{2}
         + \frac{1}{\alpha - 1}\log\mathbb E\big[e^{(\alpha - 1)aW}\big]

    (the source prints :math:`L/2\sigma^2` for :math:`L^2/2\sigma^2`). At α = 1 the limit
    :math:`d\varepsilon_0 + a^2/2 + a\,\mathbb E W`. The moment generating function of
    :math:`\chi_d` is integrated numerically in log space. Vectorized over α ≥ 1.

    Parameters
    ----------
    alpha : array_like
        Rényi order α ≥ 1.
    L : float
        Lipschitz bound L ≥ :math:`|f'|` of the GLM loss.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    d : int
        Dimension d (number of features).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    """
    c0, a, d = _nonglm_constants(L, beta, lam, sigma, d, sharp)
    al = np.atleast_1d(as_finite_array(alpha, "alpha")).astype(float)
    if np.any(al < 1.0):
        raise ValueError(f"alpha must be >= 1; got {alpha!r}")
    mean_w = math.sqrt(2.0) * math.exp(math.lgamma((d + 1) / 2.0) - math.lgamma(d / 2.0))
    out = np.empty(al.size)
    for i, a_i in enumerate(al.ravel()):
        a_i = float(a_i)
        m = (a_i - 1.0) * a
        if m < 1e-10:
            out[i] = a * mean_w
            continue
        if m > 50.0:
            out[i] = _log_chi_mgf_far(m, d, a_i - 1.0)
            continue
        mode = 0.5 * (m + math.sqrt(m * m + 4.0 * (d - 1)))  # maximizer of the log integrand
        peak = float(_chi_logpdf(np.array([mode]), d)[0]) + m * mode if mode > 0 else 0.0
        f = lambda w, m=m, peak=peak: math.exp(float(_chi_logpdf(np.array([w]), d)[0]) + m * w - peak)
        width = 10.0 + math.sqrt(d)
        val = integrate.quad(f, 0.0, mode + width, epsabs=0, epsrel=1e-12, limit=200)[0]
        val += integrate.quad(f, mode + width, np.inf, epsabs=0, epsrel=1e-12, limit=200)[0]
        out[i] = (math.log(val) + peak) / (a_i - 1.0)
    with np.errstate(over="ignore"):
        out = c0 + 0.5 * a * a + out.reshape(al.shape)
    if not np.all(np.isfinite(out)):
        raise ValueError("the RDP exceeds the largest float: alpha or L/sigma is too large")
    return out[0] if np.ndim(alpha) == 0 else out


def _log_chi_mgf_far(m: float, d: int, am1: float) -> float:
    r""":math:`\log\mathbb E[e^{mW}]/(\alpha - 1)` for :math:`W \sim \chi_d` and a large m, without overflow.

    With the mode :math:`w^* = (m + \sqrt{m^2 + 4(d-1)})/2` of :math:`g(w) = (d-1)\log w - w^2/2 + mw`,
    :math:`g(w^* + v) - g(w^*) = (d-1)(\log(1 + v/w^*) - v/w^*) - v^2/2` (no cancellation) and
    :math:`g(w^*) = (d-1)(\log w^* - 1) + w^{*2}/2`; the peak has width at most 1, so
    :math:`v \in [-40, 40]` holds all but :math:`e^{-800}` of the integral.
    """
    w = 0.5 * m * (1.0 + math.sqrt(1.0 + 4.0 * (d - 1) / m / m))
    f = lambda v: math.exp((d - 1) * (math.log1p(v / w) - v / w) - 0.5 * v * v)
    val = integrate.quad(f, max(-w, -40.0), 40.0, epsabs=0, epsrel=1e-12, limit=200)[0]
    log_c = (1.0 - d / 2.0) * math.log(2.0) - math.lgamma(d / 2.0)  # chi_d density constant
    return (math.log(val) + log_c + (d - 1) * (math.log(w) - 1.0)) / am1 + 0.5 * w * (w / am1)


def objpert_delta_nonglm(eps: ArrayLike, *, L: float, beta: float, lam: float, sigma: float, d: int,
                         sharp: bool = False) -> np.ndarray:
    r"""Privacy profile of ObjPert for smooth losses without GLM structure.

    Lemma D.3's argument with :math:`\chi_d` in place of :math:`|\mathcal N(0, 1)|`: the
    privacy loss is at most :math:`Y = d\varepsilon_0 + a^2/2 + aW`, :math:`W \sim \chi_d`, so
    :math:`\delta(\varepsilon) = \mathbb E[(1 - e^{\varepsilon - Y})_+]
    = \int_{w_0}^\infty f_{\chi_d}(w)\,(1 - e^{-a(w - w_0)})\,dw` with
    :math:`w_0 = \max(0, (\varepsilon - d\varepsilon_0 - a^2/2)/a)` — one positive integrand,
    no cancellation. For ``d = 1`` it equals :func:`objpert_delta`.

    Parameters
    ----------
    eps : array_like
        ε of the (ε, δ) guarantee, in nats.
    L : float
        Lipschitz bound L ≥ :math:`|f'|` of the GLM loss.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    d : int
        Dimension d (number of features).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    """
    c0, a, d = _nonglm_constants(L, beta, lam, sigma, d, sharp)
    e = np.atleast_1d(as_finite_array(eps, "eps")).astype(float)
    c = c0 + 0.5 * a * a
    out = np.empty(e.size)
    for i, ei in enumerate(e.ravel()):
        ei = float(ei)
        w0 = max(0.0, (ei - c) / a)  # (a Python float: inf, not a warning, where it overflows)
        if w0 > math.sqrt(d) + 40.0:  # delta <= P(W > w0) <= e^{-40^2/2} (W is 1-Lipschitz, E W <= sqrt d)
            out[i] = 0.0
            continue
        shift = ei - c - a * w0  # <= 0; equals 0 when w0 > 0
        f = lambda w, w0=w0, shift=shift: math.exp(float(_chi_logpdf(np.array([w]), d)[0])) * (
            -math.expm1(shift - a * (w - w0)))
        mode = math.sqrt(max(d - 1, 0))
        knots = sorted({w0, max(w0, mode), max(w0, mode) + 5.0})
        val = 0.0
        for lo, hi in itertools.pairwise(knots):
            if hi > lo:
                val += integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-12, limit=200)[0]
        val += integrate.quad(f, knots[-1], np.inf, epsabs=0, epsrel=1e-12, limit=200)[0]
        out[i] = min(1.0, val)
    out = out.reshape(e.shape)
    return out[0] if np.ndim(eps) == 0 else out


# ------------------------------------------- ObjPert followed by an output Gaussian
def _gauss_delta_scalar(x: float, mu: float) -> float:
    """The Gaussian mechanism's profile at x: Phi(mu/2 - x/mu) - e^x Phi(-mu/2 - x/mu).

    In log space where that is accurate to 1e-8 relative, rounded up by its error bound (a fast
    scalar path for the quadrature, never below the exact value); where the difference
    cancels, ``pdpkit.gaussian.delta_from_mu``.
    """
    la = float(special.log_ndtr(0.5 * mu - x / mu))
    if la < -700.0:  # delta <= Phi(mu/2 - x/mu) = e^la: an upper bound, below 1e-304
        return math.exp(la)
    lb = float(special.log_ndtr(-0.5 * mu - x / mu))
    r = x + lb - la  # < 0: the second term is the smaller
    # relative error of the result through the rounding of r (and a few ulps of exp, expm1)
    rel = 8.0 * 2.0 ** -53 * (abs(x) + abs(la) + abs(lb) + 1.0) / abs(r) + 1e-15 if r != 0 else math.inf
    if not (math.isfinite(r) and rel <= 1e-8):
        # r cancels (small mu, or x near the knee): the vectorized profile keeps full accuracy there
        return float(delta_from_mu(np.array([float(x)]), np.array([float(mu)]))[0])
    return max(0.0, math.exp(la) * -math.expm1(min(r, 0.0)) * (1.0 + rel))  # rounded up: never below


def output_delta_one(e: float, eps0: float, a: float, mu: float) -> float:
    """delta(e) of the loss Y + G: Y = eps0 + a^2/2 + a|Z| (ObjPert), G ~ N(mu^2/2, mu^2) independent."""
    c = eps0 + 0.5 * a * a
    if a < 1e-12:  # |Z| > 40 has probability < 1e-300: an upper bound with Y <= c + 40 a
        x = e - c - 40.0 * a
        return min(1.0, _gauss_delta_scalar(x, mu) if mu > 0 else max(0.0, -math.expm1(min(x, 0.0))))
    if mu == 0.0:
        t0 = max(0.0, (e - c) / a)
        f0 = lambda t: 2.0 * math.exp(-0.5 * t * t) / math.sqrt(2.0 * math.pi) * -math.expm1(e - c - a * t)
        return integrate.quad(f0, t0, np.inf, epsabs=0, epsrel=1e-10, limit=200)[0]

    def f(t: float) -> float:  # half-normal density times the Gaussian profile at e - Y
        return 2.0 * math.exp(-0.5 * t * t) / math.sqrt(2.0 * math.pi) * _gauss_delta_scalar(e - c - a * t, mu)

    # the integrand changes regime where e - Y crosses mu^2/2 (the Gaussian profile's knee)
    knee = max(0.0, (e - c - 0.5 * mu * mu) / a)
    pieces = sorted({0.0, knee, knee + 4.0 * mu / a + 4.0})
    total = 0.0
    for lo, hi in itertools.pairwise(pieces):
        if hi > lo:
            total += integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-10, limit=200)[0]
    total += integrate.quad(f, pieces[-1], np.inf, epsabs=0, epsrel=1e-10, limit=200)[0]
    return min(1.0, total)


_DELTA_MIN = 1e-100  # below, log-space floors of the quadrature would decide the answer
_EPS_MAX = 500.0  # calibration refuses a larger eps: it protects nothing, and exp(eps) leaves the float range
def objpert_output_delta(eps: ArrayLike, *, L: float, beta: float, lam: float, sigma: float, mu: float,
                         sharp: bool = False) -> np.ndarray:
    r"""Privacy profile of ObjPert composed with a Gaussian mechanism of parameter μ.

    The dominating privacy loss of ObjPert, :math:`Y = \varepsilon_0 + a^2/2 + a|Z|`
    (:func:`objpert_delta`), plus an independent Gaussian loss :math:`\mathcal N(\mu^2/2, \mu^2)`:
    :math:`\delta(\varepsilon) = \int_0^\infty 2\varphi(t)\,\delta_\mu(\varepsilon - \varepsilon_0 - a^2/2 - at)\,dt`
    with :math:`\delta_\mu` the Gaussian mechanism's profile. Dominating pairs compose under
    adaptive composition (Zhu, Dong & Wang 2022, Thm 10), so this is exact for ObjPert
    followed by any Gaussian release with :math:`\ell_2` sensitivity Δ and noise s, μ = Δ/s,
    chosen after seeing ObjPert's output: approximate minima perturbation's output noise
    (Redberg, Koskela & Wang 2023, Alg 1), and a privacy report's noisy statistics
    (Gaussians add up: :math:`\mu^2 = \sum_i \mu_i^2`). With μ = 0 it is :func:`objpert_delta`.
    Adaptive quadrature to relative accuracy about 1e-10, one integral per ε.

    Parameters
    ----------
    eps : array_like
        ε of the (ε, δ) guarantee, in nats.
    L : float
        Lipschitz bound L ≥ :math:`|f'|` of the GLM loss.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    mu : float
        Gaussian-DP parameter μ of the output-noise step (its sensitivity over its σ).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    """
    eps0, a = objpert_constants(L, beta, lam, sigma, sharp)
    mu = check_mu(mu)
    e = np.atleast_1d(as_finite_array(eps, "eps")).astype(float)
    out = np.array([output_delta_one(float(x), eps0, a, mu) for x in e.ravel()]).reshape(e.shape)
    return out[0] if np.ndim(eps) == 0 else out


def objpert_output_epsilon(delta: float, *, L: float, beta: float, lam: float, sigma: float, mu: float,
                           sharp: bool = False) -> float:
    r"""Smallest ε with :func:`objpert_output_delta` :math:`(\varepsilon) \le \delta`, never on the unsafe side.

    Parameters
    ----------
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    L : float
        Lipschitz bound L ≥ :math:`|f'|` of the GLM loss.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    mu : float
        Gaussian-DP parameter μ of the output-noise step (its sensitivity over its σ).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    """
    eps0, a = objpert_constants(L, beta, lam, sigma, sharp)
    mu = check_mu(mu)
    delta = float(check_probability(delta, "delta"))
    return _output_epsilon(float(delta), float(eps0), float(a), float(mu))


@functools.lru_cache(maxsize=4096)
def _output_epsilon(delta: float, eps0: float, a: float, mu: float) -> float:
    """:func:`objpert_output_epsilon` on its constants, memoized: a calibration's last check and
    the release's guarantee ask for the same value (a pure function of four floats: the cached
    value is the same bits)."""
    c = eps0 + 0.5 * a * a

    def fn(e: float) -> float:  # increasing in e
        return math.log(delta) - math.log(max(output_delta_one(e, eps0, a, mu), 1e-300))

    lo = c - 10.0
    while fn(lo) > 0:
        lo -= 10.0 + abs(lo)
    e = _solve_increasing(fn, lo, max(c, lo + 1.0), grow=lambda h: h + 2.0 * (1.0 + a + mu) + abs(h))
    for _ in range(64):
        if output_delta_one(e, eps0, a, mu) <= delta:
            return max(e, 0.0)
        e += max(abs(e), 1.0) * 1e-11
    return max(e, 0.0)  # pragma: no cover


def objpert_output_calibrate(eps: float, delta: float, *, L: float, beta: float, mu: float,
                             lam: float | None = None, sigma: float | None = None, f: float = 1.3,
                             sharp: bool = False) -> tuple[float, float]:
    r"""(λ, σ) such that ObjPert followed by a Gaussian of parameter μ is (ε, δ)-DP (:func:`objpert_output_delta`).

    Both free: σ = ``f`` × the Gaussian mechanism's σ at sensitivity L (multiplied by ``f``
    again while even λ → ∞ would leave δ(ε) above 0.9 δ, as happens for large δ), then the
    smallest λ (the rule of :func:`objpert_calibrate`). One given: the smallest value of the other.
    Solved by bracketing and bisection on the log-determinant constant (for λ) or on
    :math:`\log\sigma`, rounded to the safe side. ``ValueError`` naming the parameter to
    change when no value works.

    Parameters
    ----------
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    L : float
        Lipschitz bound L ≥ :math:`|f'|` of the GLM loss.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    mu : float
        Gaussian-DP parameter μ of the output-noise step (its sensitivity over its σ).
    lam : float, optional
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float, optional
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    f : float, default 1.3
        Factor by which σ exceeds the σ of the Gaussian mechanism with the same (ε, δ) (the source's rule is 1.3).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    """
    eps = scalar_positive(eps, "eps")
    delta = scalar_probability(delta, "delta")
    L = _scalar_positive(L, "L")
    beta = scalar_nonnegative(beta, "beta")
    mu = check_mu(mu)
    if lam is not None and sigma is not None:
        raise ValueError("give at most one of lam and sigma: the other is calibrated")
    if eps > _EPS_MAX:
        raise ValueError(f"eps must be at most {_EPS_MAX:g} (a larger eps protects nothing); got {eps:g}")
    if delta < _DELTA_MIN:
        raise ValueError(f"delta must be at least {_DELTA_MIN:g} for this calibration; got {delta:g}")
    if mu > 0 and _gauss_delta_scalar(eps, mu) > 0.5 * delta:
        raise ValueError(f"the Gaussian part (mu = {mu:g}) alone costs more than half of delta at eps = {eps:g}: "
                         "lower mu (a smaller grad_tol or a larger sigma_out) or raise eps or delta")
    if lam is None:
        if sigma is None:
            f = scalar_positive(f, "f")
            if f <= 1.0:
                raise ValueError(f"f must be > 1 (sigma above the Gaussian mechanism's); got {f}")
            sigma = f * float(gaussian_sigma(eps, delta, sensitivity=L))
            # at large delta the half-normal loss needs more than f times the Gaussian's sigma: grow it
            for _ in range(200):
                if output_delta_one(eps, 0.0, L / sigma, mu) <= 0.9 * delta:
                    break
                sigma *= f
            else:  # pragma: no cover - excluded by the check on mu above
                raise ValueError(f"no sigma reaches (eps={eps:g}, delta={delta:g}); raise eps or delta")
        sigma = _scalar_positive(sigma, "sigma")
        a = L / sigma
        if output_delta_one(eps, 0.0, a, mu) > delta:
            raise ValueError(f"sigma={sigma:g} is too small for (eps={eps:g}, delta={delta:g}) even as lam -> "
                             "infinity; increase sigma (or the budget)")
        if beta == 0.0:
            return float(np.finfo(float).tiny), sigma
        def gap(e0: float) -> float:  # decreasing in e0; its root is the largest valid eps0
            return math.log(delta) - math.log(max(output_delta_one(eps, e0, a, mu), 1e-300))

        lo = optimize.brentq(gap, 0.0, eps, xtol=1e-14, rtol=4 * np.finfo(float).eps) if gap(eps) < 0 else eps
        e0 = min(lo * (1.0 - 1e-10), 700.0)  # beyond, lambda is below the float range anyway
        if not e0 > 0:
            raise ValueError(f"sigma={sigma:g} is too small for (eps={eps:g}, delta={delta:g}) even as lam -> "
                             "infinity; increase sigma (or the budget)")
        lam_out = max(beta / math.expm1(e0) if sharp else beta / -math.expm1(-e0), float(np.finfo(float).tiny))
        for _ in range(64):
            if objpert_output_epsilon(delta, L=L, beta=beta, lam=lam_out, sigma=sigma, mu=mu, sharp=sharp) <= eps:
                return lam_out, sigma
            lam_out *= 1.0 + 1e-9
        return lam_out, sigma  # pragma: no cover
    lam = _scalar_positive(lam, "lam")
    eps0, _ = objpert_constants(L, beta, lam, 1.0, sharp)
    if eps <= eps0 or output_delta_one(eps, eps0, 0.0 + 1e-300, mu) > delta:
        raise ValueError(f"lam={lam:g} is too small for (eps={eps:g}, delta={delta:g}): the log-determinant "
                         "term and the output noise alone exceed the budget; increase lam")

    def gap_s(log_s: float) -> float:  # increasing in log sigma
        return math.log(delta) - math.log(max(output_delta_one(eps, eps0, L / math.exp(log_s), mu), 1e-300))

    lo = math.log(float(gaussian_sigma(eps, delta, sensitivity=L))) - 1.0
    while gap_s(lo) > 0:
        lo -= 1.0
    hi = _solve_increasing(gap_s, lo, lo + 1.0, grow=lambda h: h + 1.0, max_grow=700)
    for _ in range(64):
        if output_delta_one(eps, eps0, L / math.exp(hi), mu) <= delta:
            break
        hi += 1e-12
    hi += 1e-9  # a margin for the inversion's own tolerance (objpert_output_epsilon <= eps)
    return lam, math.exp(hi)
