r"""Approximate minima perturbation (AMP) with gradient clipping: its privacy accounting.

Redberg, Koskela & Wang (2023), §4, Alg 1 and Thm 4.1 (App. F). Alg 1 minimizes the
perturbed objective of ObjPert built from clipped-gradient losses (gradient norm at most
``C``, smoothness β kept, Thm F.2–F.3) only approximately — until the perturbed gradient
is at most τ — and releases the approximate minimizer :math:`\tilde\theta` plus
:math:`\mathcal N(0, \sigma_{\rm out}^2 I_d)`. Writing
:math:`\tilde\theta = \theta^P + (\tilde\theta - \theta^P)` with
:math:`\|\tilde\theta - \theta^P\| \le \tau/\lambda` (strong convexity), Alg 1 is the
adaptive composition of ObjPert (Lipschitz constant ``C``) with a Gaussian mechanism of
sensitivity :math:`2\tau/\lambda` and noise :math:`\sigma_{\rm out}` (the source's Remark
4.2 and App. D.3.1). Hence:

* :func:`amp_rdp` — Thm 4.1: ObjPert's RDP (:func:`pdpkit.accounting.objpert_rdp`) plus
  :math:`2\tau^2\alpha/(\sigma_{\rm out}^2\lambda^2)`;
* :func:`amp_delta` — the exact hockey-stick divergence of the composed dominating pair:
  the ObjPert privacy loss :math:`Y = \varepsilon_0 + a^2/2 + a|Z|` plus an independent
  Gaussian loss :math:`\mathcal N(\mu^2/2, \mu^2)`, :math:`\mu = 2\tau/(\lambda\sigma_{\rm out})`, so
  :math:`\delta(\varepsilon) = \mathbb E_{|Z|}[\delta_{\mu}(\varepsilon - Y)]`, a one-dimensional
  integral of the Gaussian profile :math:`\delta_\mu` (:func:`pdpkit.gaussian.gaussian_delta`);
* :func:`amp_epsilon`, :func:`amp_calibrate` — inversion and the calibration rule of §5,
  under RDP (as the source) or the exact profile;
* the DP-SGD baseline's accounting, through dp_accounting: :func:`dpsgd_event`,
  :func:`dpsgd_noise_multiplier` (optionally paying for hyperparameter tuning with the
  Poisson repeat-and-select of Papernot & Steinke 2022) and :func:`poisson_select_mean`.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate, optimize

from ._validation import as_finite_array, check_nonnegative, check_positive, check_probability
from .accounting import _constants, objpert_rdp
from .gaussian import _delta_from_mu, gaussian_rdp, gaussian_sigma

__all__ = [
    "amp_rdp",
    "amp_delta",
    "amp_epsilon",
    "amp_calibrate",
    "dpsgd_event",
    "dpsgd_noise_multiplier",
    "poisson_select_mean",
]

_SQRT_2PI = math.sqrt(2.0 * math.pi)


def _amp_constants(C, beta, lam, sigma, sigma_out, tau, sharp) -> tuple[float, float, float]:
    """(eps0, a, mu): ObjPert's constants with L = C, and the output mechanism's mu."""
    eps0, a = _constants(C, beta, lam, sigma, sharp)
    sigma_out = float(check_positive(sigma_out, "sigma_out"))
    tau = float(check_nonnegative(tau, "tau"))
    return eps0, a, 2.0 * tau / (float(lam) * sigma_out)


def amp_rdp(alpha: ArrayLike, *, C: float, beta: float, lam: float, sigma: float, sigma_out: float,
            tau: float, sharp: bool = False) -> np.ndarray:
    r"""RDP of Alg 1 (Redberg, Koskela & Wang 2023, Thm 4.1).

    .. math::

       \varepsilon(\alpha) = \varepsilon_{\rm ObjPert}(\alpha; L = C)
         + \frac{2\tau^2\alpha}{\sigma_{\rm out}^2\lambda^2},

    the RDP of objective perturbation (:func:`pdpkit.accounting.objpert_rdp`, Thm 3.2 with
    the clipping threshold as Lipschitz constant) composed with the Gaussian mechanism of
    sensitivity :math:`2\tau/\lambda`. Vectorized over α ≥ 1.
    """
    _amp_constants(C, beta, lam, sigma, sigma_out, tau, sharp)
    obj = objpert_rdp(alpha, L=C, beta=beta, lam=lam, sigma=sigma, sharp=sharp)
    if float(tau) == 0.0:
        return obj
    return obj + gaussian_rdp(alpha, 2.0 * float(tau) / float(lam), float(sigma_out))


def _delta_one(e: float, eps0: float, a: float, mu: float) -> float:
    c = eps0 + 0.5 * a * a
    if mu == 0.0:
        t0 = max(0.0, (e - c) / a)
        f = lambda t: 2.0 * math.exp(-0.5 * t * t) / _SQRT_2PI * -math.expm1(e - c - a * t)
        return integrate.quad(f, t0, np.inf, epsabs=0, epsrel=1e-10, limit=200)[0]

    def f(t: float) -> float:  # half-normal density times the Gaussian profile at eps - Y
        return 2.0 * math.exp(-0.5 * t * t) / _SQRT_2PI * float(
            _delta_from_mu(np.array([e - c - a * t]), np.array([mu]))[0])

    # the integrand changes regime where eps - Y crosses mu^2/2 (the Gaussian profile's knee)
    knee = max(0.0, (e - c - 0.5 * mu * mu) / a)
    pieces = sorted({0.0, knee, knee + 4.0 * mu / a + 4.0})
    total = 0.0
    for lo, hi in itertools.pairwise(pieces):
        if hi > lo:
            total += integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-10, limit=200)[0]
    total += integrate.quad(f, pieces[-1], np.inf, epsabs=0, epsrel=1e-10, limit=200)[0]
    return min(1.0, total)


def amp_delta(eps: ArrayLike, *, C: float, beta: float, lam: float, sigma: float, sigma_out: float,
              tau: float, sharp: bool = False) -> np.ndarray:
    r"""Privacy profile of Alg 1: ObjPert's dominating pair composed exactly with the output Gaussian.

    :math:`\delta(\varepsilon) = \int_0^\infty 2\varphi(t)\,
    \delta_\mu(\varepsilon - \varepsilon_0 - a^2/2 - a t)\,dt` with :math:`a = C/\sigma`,
    :math:`\mu = 2\tau/(\lambda\sigma_{\rm out})` and :math:`\delta_\mu` the Gaussian mechanism's
    profile (for every real argument). With τ = 0 it is
    :func:`pdpkit.accounting.objpert_delta`. Adaptive quadrature to relative accuracy
    about 1e-10, one integral per ε.
    """
    eps0, a, mu = _amp_constants(C, beta, lam, sigma, sigma_out, tau, sharp)
    e = np.atleast_1d(as_finite_array(eps, "eps")).astype(float)
    out = np.array([_delta_one(float(x), eps0, a, mu) for x in e.ravel()]).reshape(e.shape)
    return out[0] if np.ndim(eps) == 0 else out


def amp_epsilon(delta: float, *, C: float, beta: float, lam: float, sigma: float, sigma_out: float,
                tau: float, sharp: bool = False, accounting: str = "rdp") -> float:
    r"""ε of Alg 1 at δ: Thm 4.1 converted over continuous α (``"rdp"``, as the source)
    or the smallest ε with :func:`amp_delta` ≤ δ (``"pld"``, the exact composition).

    The ``"rdp"`` conversion is the improved one of Canonne, Kamath & Steinke (2020, Prop 12),
    :math:`\varepsilon = \rho(\alpha) + \log(1 - 1/\alpha) - \log(\delta\alpha)/(\alpha - 1)`,
    minimized over α > 1.
    """
    delta = float(check_probability(delta, "delta"))
    eps0, a, mu = _amp_constants(C, beta, lam, sigma, sigma_out, tau, sharp)
    kw = dict(C=C, beta=beta, lam=lam, sigma=sigma, sigma_out=sigma_out, tau=tau, sharp=sharp)
    if accounting == "rdp":
        def eps_of(log_am1: float) -> float:
            al = 1.0 + math.exp(log_am1)
            rho = float(amp_rdp(al, **kw))
            return rho + math.log1p(-1.0 / al) - math.log(delta * al) / (al - 1.0)

        grid = np.linspace(math.log(0.02), math.log(5000.0), 160)
        vals = np.array([eps_of(g) for g in grid])
        j = int(np.argmin(vals))
        res = optimize.minimize_scalar(eps_of, bounds=(grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]),
                                       method="bounded", options={"xatol": 1e-10})
        return max(0.0, min(float(res.fun), float(vals[j])))
    if accounting == "pld":
        c = eps0 + 0.5 * a * a
        fn = lambda e: math.log(max(_delta_one(e, eps0, a, mu), 1e-300)) - math.log(delta)
        lo, hi = c - 10.0, c + 1.0
        while fn(lo) < 0:
            lo -= 10.0
        while fn(hi) > 0:
            hi += 2.0 * (1.0 + hi - lo)
        e = optimize.brentq(fn, lo, hi, xtol=1e-12, rtol=4 * np.finfo(float).eps)
        for _ in range(64):  # never on the unsafe side
            if _delta_one(e, eps0, a, mu) <= delta:
                return e
            e += max(abs(e), 1.0) * 1e-11
        return e  # pragma: no cover
    raise ValueError(f"accounting must be 'rdp' or 'pld'; got {accounting!r}")


def amp_calibrate(eps: float, delta: float, *, C: float, beta: float, sigma_out: float, tau: float,
                  f: float = 1.3, accounting: str = "rdp", sharp: bool = False) -> tuple[float, float]:
    r"""(λ, σ) for (ε, δ)-DP Alg 1 by the rule of §5 under the chosen accounting.

    σ = ``f`` × the Gaussian mechanism's σ at sensitivity ``C``
    (:func:`pdpkit.gaussian.gaussian_sigma`); λ is the smallest regularization with
    :func:`amp_epsilon` ≤ ε, found by bisection on log λ (both the log-determinant term and
    the output mechanism's sensitivity :math:`2\tau/\lambda` decrease in λ), rounded up.
    ``ValueError`` naming ``sigma_out`` when no λ suffices.
    """
    eps = float(check_positive(eps, "eps"))
    delta = float(check_probability(delta, "delta"))
    f = float(check_positive(f, "f"))
    if f <= 1.0:
        raise ValueError(f"f must be > 1; got {f}")
    sigma = f * float(gaussian_sigma(eps, delta, float(check_positive(C, "C"))))
    beta_f = float(check_nonnegative(beta, "beta"))

    def eps_at(lam: float) -> float:
        return amp_epsilon(delta, C=C, beta=beta_f, lam=lam, sigma=sigma, sigma_out=sigma_out, tau=tau,
                           sharp=sharp, accounting=accounting)

    floor = beta_f * (1.0 + 1e-9) if (beta_f > 0 and not sharp) else 1e-12
    hi = max(1.0, 2.0 * floor)
    for _ in range(80):
        if eps_at(hi) <= eps:
            break
        hi *= 4.0
    else:
        raise ValueError(f"sigma_out is too small (or tau too large): no lambda reaches eps = {eps:g}")
    lo = floor
    if eps_at(lo * (1 + 1e-9)) <= eps:
        return lo * (1 + 1e-9), sigma
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if eps_at(mid) <= eps:
            hi = mid
        else:
            lo = mid
        if hi / lo < 1 + 1e-7:
            break
    return hi, sigma


# ---------------------------------------------------------------- DP-SGD baseline
def dpsgd_event(noise_multiplier: float, *, sample_rate: float, steps: int, select_mean: float | None = None):
    r"""The dp_accounting event of DP-SGD: ``steps`` Poisson-subsampled Gaussian steps.

    With ``select_mean``, the whole training is repeated a Poisson(``select_mean``) number of
    times and the best run released (``RepeatAndSelectDpEvent`` with infinite shape:
    Papernot & Steinke 2022, Thm 2), which is what honest hyperparameter tuning costs.
    """
    from dp_accounting import dp_event

    nm = float(check_positive(noise_multiplier, "noise_multiplier"))
    q = float(check_probability(sample_rate, "sample_rate"))
    from ._validation import check_int_at_least

    steps = check_int_at_least(steps, "steps", 1)
    event = dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(nm)), steps)
    if select_mean is not None:
        event = dp_event.RepeatAndSelectDpEvent(event, float(check_positive(select_mean, "select_mean")), np.inf)
    return event


def dpsgd_noise_multiplier(eps: float, delta: float, *, sample_rate: float, steps: int,
                           select_mean: float | None = None) -> float:
    r"""Smallest DP-SGD noise multiplier (noise std / clipping norm) for (ε, δ)-DP.

    Accounted by dp_accounting's ``RdpAccountant`` with its default orders (add/remove
    neighbours) and calibrated by ``dp_accounting.calibrate_dp_mechanism``; with
    ``select_mean`` the cost of tuning by Poisson repeat-and-select is included.
    """
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    eps = float(check_positive(eps, "eps"))
    delta = float(check_probability(delta, "delta"))
    nm = dp_accounting.calibrate_dp_mechanism(
        RdpAccountant,
        lambda m: dpsgd_event(m, sample_rate=sample_rate, steps=steps, select_mean=select_mean),
        eps, delta, dp_accounting.ExplicitBracketInterval(1e-3, 1e4), tol=1e-6)
    return float(nm)


def poisson_select_mean(grid_size: int, *, prob: float = 0.9) -> float:
    r"""Mean μ of the Poisson number of tuning runs so that a given grid point is tried with
    probability at least ``prob``: each run draws a point uniformly from ``grid_size``, so
    :math:`P(\text{tried}) = 1 - e^{-\mu/m}` and :math:`\mu = m\log(1/(1 - \text{prob}))`."""
    from ._validation import check_int_at_least

    m = check_int_at_least(grid_size, "grid_size", 1)
    prob = float(check_probability(prob, "prob"))
    return float(m * -math.log1p(-prob))
