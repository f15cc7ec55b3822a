r"""Per-instance differential privacy of the Gaussian mechanism.

The Gaussian mechanism releases :math:`o = Q(D) + \mathcal N(0, \sigma^2 I_d)`. For a
neighbour :math:`D' = D_{\pm z}` (add or remove one record :math:`z`) write
:math:`\Delta_z = Q(D') - Q(D)` and :math:`\mu = \lVert\Delta_z\rVert/\sigma`.

This module implements, vectorized with numpy broadcasting:

* the exact ex-post per-instance privacy loss (Redberg & Wang 2021, Thm 22);
* the dataset-independent pDP bound and the high-probability ex-post bound
  (Redberg & Wang 2021, Cor 23, both the :math:`\Phi^{-1}` and the
  :math:`\sqrt{2\log}` form);
* the tight privacy profile :math:`\delta(\varepsilon)` of the analytic Gaussian
  mechanism (Balle & Wang 2018; Redberg, Koskela & Wang 2023, eq. B.1), its inverse in
  :math:`\varepsilon` and the tightest :math:`\sigma` for a target
  :math:`(\varepsilon, \delta)`;
* Rényi DP (Mironov 2017; Redberg, Koskela & Wang 2023, Thm B.1);
* pDP with a non-isotropic covariance (Wang 2019, Lemma 2.4, corrected);
* moments of pDP over a data set (Wang 2019, Def 2.7).

Output perturbation of a regularized minimizer (its sensitivities, ridge regression's
per-instance sensitivities) is :mod:`pdpkit.output_perturbation`.

Notation: :math:`\Phi` is the standard normal CDF, and the privacy loss random
variable is :math:`L(o) = \log p_D(o) - \log p_{D'}(o)`, which is
:math:`\mathcal N(\mu^2/2, \mu^2)` when :math:`o \sim M(D)`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from ._validation import (
    as_finite_array,
    check_int_at_least,
    check_nonnegative,
    check_positive,
    check_probability,
)

__all__ = [
    "gaussian_privacy_loss",
    "gaussian_ex_post_pdp",
    "gaussian_pdp_epsilon",
    "gaussian_ex_post_bound",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_sigma",
    "gaussian_rdp",
    "gaussian_classic_epsilon",
    "mahalanobis_sensitivity",
    "gaussian_pdp_epsilon_covariance",
    "pdp_moments",
]

_SQRT2 = np.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


def _finite_result(out: np.ndarray, message: str) -> np.ndarray:
    """``out`` if every entry is finite, else ``ValueError(message)`` (a result beyond the float range)."""
    if not np.all(np.isfinite(out)):
        raise ValueError(message)
    return out


# ----------------------------------------------------------------------------- ex post
def gaussian_privacy_loss(delta_z: ArrayLike, noise: ArrayLike, *, sigma: ArrayLike) -> np.ndarray:
    r"""Signed privacy loss :math:`\log p_D(o) - \log p_{D'}(o)` of the Gaussian mechanism.

    For :math:`o = Q(D) + w` and :math:`\Delta_z = Q(D') - Q(D)`,

    .. math:: L(o) = \frac{\lVert\Delta_z\rVert^2}{2\sigma^2} - \frac{\Delta_z^\top w}{\sigma^2}.

    Parameters
    ----------
    delta_z : array_like, shape (..., d)
        :math:`Q(D') - Q(D)`; the last axis is the output dimension.
    noise : array_like, shape (..., d)
        The realized noise :math:`w = o - Q(D)` (broadcast against ``delta_z``).
    sigma : float or array_like
        Noise standard deviation, > 0 (broadcast against the leading axes).
    """
    delta_z = np.atleast_1d(as_finite_array(delta_z, "delta_z"))
    noise = np.atleast_1d(as_finite_array(noise, "noise"))
    sigma = check_positive(sigma, "sigma")
    if delta_z.shape[-1] != noise.shape[-1]:
        raise ValueError(
            f"delta_z and noise must have the same last (dimension) axis; got {delta_z.shape} and {noise.shape}"
        )
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        sq = np.einsum("...i,...i->...", delta_z, delta_z)
        inner = np.einsum("...i,...i->...", delta_z, noise)
        out = sq / (2.0 * sigma**2) - inner / sigma**2
        if not np.all(np.isfinite(out)) or np.any((sigma < 1e-150) | (sigma > 1e150)):
            # sigma**2 or the squares leave the float range: the same loss in units of sigma
            s = sigma[..., None]
            dz, nz = delta_z / s, noise / s
            out = np.einsum("...i,...i->...", dz, dz) / 2.0 - np.einsum("...i,...i->...", dz, nz)
    return _finite_result(out, "the privacy loss exceeds the largest float: delta_z and noise are too large "
                               "relative to sigma")


def gaussian_ex_post_pdp(delta_z: ArrayLike, noise: ArrayLike, *, sigma: ArrayLike) -> np.ndarray:
    r"""Exact ex-post per-instance privacy loss of the Gaussian mechanism.

    Redberg & Wang 2021, Thm 22: for the realized output :math:`o = Q(D) + w`,

    .. math:: \varepsilon(o, D, D_{\pm z}) = \left| \frac{\lVert\Delta_z\rVert^2}{2\sigma^2}
              - \frac{\Delta_z^\top w}{\sigma^2} \right|
              = \left|\log \frac{p(o \mid D)}{p(o \mid D_{\pm z})}\right|,

    with :math:`\Delta_z = Q(D_{\pm z}) - Q(D)`. Vectorized: the last axis of
    ``delta_z`` and ``noise`` is the dimension, leading axes broadcast (e.g. many
    targets for one output, or many outputs for one target).

    Parameters
    ----------
    delta_z : array_like
        The change Δ_z = Q(D_{±z}) − Q(D) of the released quantity, shape (..., d).
    noise : array_like
        The realized noise w = o − Q(D) (broadcast against ``delta_z``).
    sigma : array_like
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    """
    return np.abs(gaussian_privacy_loss(delta_z, noise, sigma=sigma))


# ----------------------------------------------------------------------------- Cor 23
def _upper_normal_quantile(p: np.ndarray) -> np.ndarray:
    """:math:`\\Phi^{-1}(1-p)`, accurate also for tiny ``p`` (no ``1 - p`` rounding)."""
    return -special.ndtri(p)


def gaussian_pdp_epsilon(sensitivity: ArrayLike, *, sigma: ArrayLike, delta: ArrayLike,
                         form: str = "phi") -> np.ndarray:
    r"""Dataset-independent (ε, δ)-pDP bound of the Gaussian mechanism (the tail bound of its privacy loss).

    Redberg & Wang 2021, Cor 23 (via the tail bound of the privacy loss and their
    Lemma 27), with ``form="phi"``:

    .. math:: \varepsilon(D, D_{\pm z}) = \frac{\Delta_z^2}{2\sigma^2}
              + \frac{\Delta_z\,\Phi^{-1}(1-\delta)}{\sigma},

    where ``sensitivity`` is :math:`\lVert\Delta_z\rVert`; with ``form="sqrt_log"`` the
    Gaussian tail :math:`\Phi^{-1}(1-\delta) \le \sqrt{2\log(1/\delta)}` is bounded once more,
    which is the form of Thms 11, 14 and 17 (the Hessian, gradient and
    :math:`\lambda_{\min}` releases). Both are valid but not tight:
    :func:`gaussian_epsilon` gives the smallest ε with :math:`\delta(\varepsilon) \le \delta`.
    The one place in pdpkit where this bound is computed.

    Parameters
    ----------
    sensitivity : array_like
        ℓ2 sensitivity Δ of the released quantity (a per-person array is allowed where the function is vectorized).
    sigma : array_like
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    delta : array_like
        δ of the (ε, δ) guarantee, in (0, 1).
    form : str, default 'phi'
        ``"phi"`` for the first (tighter) expression, ``"sqrt_log"`` for the second.
    """
    sensitivity = check_nonnegative(sensitivity, "sensitivity")
    sigma = check_positive(sigma, "sigma")
    delta = check_probability(delta, "delta")
    if form == "phi":
        tail = _upper_normal_quantile(delta)
    elif form == "sqrt_log":
        tail = np.sqrt(2.0 * np.log(1.0 / delta))
    else:
        raise ValueError(f"form must be 'phi' or 'sqrt_log'; got {form!r}")
    with np.errstate(over="ignore", under="ignore"):
        mu = sensitivity / sigma
        out = mu**2 / 2.0 + mu * tail
    return _finite_result(out, "sensitivity/sigma must be below about 1e154: the bound exceeds the largest float")


def gaussian_ex_post_bound(sensitivity: ArrayLike, *, sigma: ArrayLike, rho: ArrayLike,
                           form: str = "phi") -> np.ndarray:
    r"""High-probability dataset-independent bound on the ex-post pDP (Cor 23, equation 5).

    With probability at least :math:`1-\rho` over the output,

    .. math:: \varepsilon(o, D, D_{\pm z}) \le \frac{\Delta_z^2}{2\sigma^2}
              + \frac{\Delta_z\,\Phi^{-1}(1-\rho/2)}{\sigma}
              \le \frac{\Delta_z^2}{2\sigma^2} + \frac{\Delta_z\sqrt{2\log(2/\rho)}}{\sigma}.

    Parameters
    ----------
    form : {"phi", "sqrt_log"}
        ``"phi"`` for the first (tighter) expression, ``"sqrt_log"`` for the second.
    sensitivity : array_like
        ℓ2 sensitivity Δ of the released quantity (a per-person array is allowed where the function is vectorized).
    sigma : array_like
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    rho : array_like
        Failure probability ρ of the high-probability bound, in (0, 1).
    """
    sensitivity = check_nonnegative(sensitivity, "sensitivity")
    sigma = check_positive(sigma, "sigma")
    rho = check_probability(rho, "rho")
    if form == "phi":
        tail = _upper_normal_quantile(rho / 2.0)
    elif form == "sqrt_log":
        tail = np.sqrt(2.0 * np.log(2.0 / rho))
    else:
        raise ValueError(f"form must be 'phi' or 'sqrt_log'; got {form!r}")
    with np.errstate(over="ignore", under="ignore"):
        mu = sensitivity / sigma
        out = mu**2 / 2.0 + mu * tail
    return _finite_result(out, "sensitivity/sigma must be below about 1e154: the bound exceeds the largest float")


# ----------------------------------------------------------------------------- profile
#: Below this ratio mu / max(1, |x1|) the profile is evaluated by the series of ``_log_mills_diff``: the
#: closed form loses about log10(max(1, |x1|) / mu) digits to cancellation, the series none.
_SERIES_RATIO = 0.01
_SERIES_TERMS = 12  # terms in mu: the k-th is below (mu / max(1, |x1|))^(k-1) = 1e-22 at k = 12
_FAR = -20.0  # below this x the moments come from their asymptotic series, not the recursion
_ASYMPTOTIC_TERMS = 30


def _log_mills_diff(x: np.ndarray, mu: np.ndarray) -> np.ndarray:
    r""":math:`\log(R(x) - R(x - \mu))` for the Mills ratio :math:`R = \Phi/\varphi`, without cancellation.

    :math:`R(x) = \int_0^\infty e^{xt - t^2/2}\,dt`, so
    :math:`R(x) - R(x - \mu) = \int_0^\infty e^{xt - t^2/2}(1 - e^{-\mu t})\,dt
    = \sum_{k \ge 1} (-1)^{k+1}\frac{\mu^k}{k!} M_k(x)` with the moments
    :math:`M_k(x) = \int_0^\infty t^k e^{xt - t^2/2}\,dt`. For :math:`x \ge -20` they follow from
    :math:`M_0 = R(x)`, :math:`M_1 = 1 + xM_0`, :math:`M_{k+1} = xM_k + kM_{k-1}` (relative error
    about :math:`10^{-16}x^2`); below, from their asymptotic series
    :math:`M_k(x) = \sum_j (-1)^j \frac{(k + 2j)!}{2^j j!}|x|^{-(k + 2j + 1)}` (30 terms: error
    below 1e-20 for :math:`|x| \ge 20`). Used where :math:`\mu \le 0.01\max(1, |x|)`.
    """
    out = np.empty(x.shape)
    far = x < _FAR
    near = ~far
    if np.any(near):
        xn, mn = x[near], mu[near]
        m_prev = np.sqrt(np.pi / 2.0) * special.erfcx(-xn / _SQRT2)  # M_0
        m_cur = 1.0 + xn * m_prev  # M_1
        total = np.zeros(xn.shape)
        coef = np.ones(xn.shape)  # mu^(k-1) / k!
        for k in range(1, _SERIES_TERMS + 1):
            total += coef * m_cur if k % 2 else -coef * m_cur
            coef = coef * mn / (k + 1)
            m_prev, m_cur = m_cur, xn * m_cur + k * m_prev
        out[near] = np.log(mn) + np.log(total)
    if np.any(far):
        ax, mf = -x[far], mu[far]
        inv2 = (1.0 / ax) ** 2
        r = mf / ax
        # M_k |x|^(k+1) / k! = sum_j c_kj |x|^(-2j) for k = 1..12, all k at once (one matrix
        # product over the 30 powers), then the alternating sum over k in powers of r
        scaled = _ASYMPTOTIC_COEF @ (inv2[None, :] ** np.arange(_ASYMPTOTIC_TERMS)[:, None])
        signed_powers = _ALTERNATING[:, None] * r[None, :] ** np.arange(_SERIES_TERMS)[:, None]
        total = np.sum(signed_powers * scaled, axis=0)
        # sum_k (-1)^(k+1) mu^k M_k / k! = (mu / x^2) * total
        out[far] = np.log(mf) - 2.0 * np.log(ax) + np.log(total)
    return out


def _asymptotic_coefficients() -> np.ndarray:
    """c_kj = (-1)^j (k + 2j)! / (k! 2^j j!), rows k = 1..12, columns j = 0..29 (see ``_log_mills_diff``)."""
    c = np.empty((_SERIES_TERMS, _ASYMPTOTIC_TERMS))
    for k in range(1, _SERIES_TERMS + 1):
        term = 1.0
        for j in range(_ASYMPTOTIC_TERMS):
            c[k - 1, j] = term
            term *= -(k + 2 * j + 1) * (k + 2 * j + 2) / (2.0 * (j + 1))
    return c


_ASYMPTOTIC_COEF = _asymptotic_coefficients()
_ALTERNATING = np.array([1.0 if k % 2 else -1.0 for k in range(1, _SERIES_TERMS + 1)])


def _series_regime(x1: np.ndarray, mu: np.ndarray) -> np.ndarray:
    return mu < _SERIES_RATIO * np.maximum(1.0, np.abs(x1))


def delta_from_mu(eps: np.ndarray, mu: np.ndarray) -> np.ndarray:
    r"""Tight δ(ε) for normalized sensitivity μ = Δ/σ > 0 (eq. B.1), computed stably.

    With :math:`x_1 = \mu/2 - \varepsilon/\mu` and :math:`x_2 = -\mu/2 - \varepsilon/\mu`
    one has :math:`x_2^2 = x_1^2 + 2\varepsilon`, hence
    :math:`e^{\varepsilon}\Phi(x_2) = \tfrac12 e^{-x_1^2/2}\operatorname{erfcx}(-x_2/\sqrt2)`:
    the factor :math:`e^{\varepsilon}` never overflows, and for :math:`x_1 \le 0` both
    terms share the factor :math:`e^{-x_1^2/2}`, so the difference has no cancellation
    beyond that of two scaled complementary error functions. Where μ is small against
    :math:`\max(1, |x_1|)` (tiny ε, huge σ) that difference is all cancellation, and
    :math:`\delta = \varphi(x_1)(R(x_1) - R(x_2))` comes from the series of ``_log_mills_diff``.
    ``mu = inf`` gives the limit δ = 1; overflowing intermediates (ε or 1/μ near 1e308) are
    the limits they stand for, without a warning.
    """
    eps, mu = np.broadcast_arrays(np.asarray(eps, dtype=float), np.asarray(mu, dtype=float))
    neg = eps < 0.0
    if np.any(neg):
        # negative eps: H_{e^eps}(P||Q) = 1 - e^eps + e^eps H_{e^-eps}(Q||P), and the Gaussian
        # pair is symmetric, so the formula below is only ever evaluated at eps >= 0
        out = np.empty(eps.shape)
        pos = ~neg
        out[pos] = delta_from_mu(eps[pos], mu[pos])
        en = eps[neg]
        out[neg] = -np.expm1(en) + np.exp(en) * delta_from_mu(-en, mu[neg])
        return np.clip(out, 0.0, 1.0)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        x1 = mu / 2.0 - eps / mu
        x2 = -mu / 2.0 - eps / mu
        g = np.exp(-0.5 * x1 * x1)
        second = special.erfcx(-x2 / _SQRT2)  # x2 < 0: no overflow
        out = np.where(
            x1 <= 0.0,
            0.5 * g * (special.erfcx(np.maximum(-x1, 0.0) / _SQRT2) - second),
            special.ndtr(x1) - 0.5 * g * second,
        )
        series = _series_regime(x1, mu)
        if np.any(series):
            xs = x1[series]
            out[series] = np.exp(-0.5 * xs * xs - _LOG_SQRT_2PI + _log_mills_diff(xs, mu[series]))
    return np.clip(out, 0.0, 1.0)


def log_delta_from_mu(eps: np.ndarray, mu: np.ndarray) -> np.ndarray:
    r""":math:`\log \delta(\varepsilon)` without underflow in the far tail.

    For :math:`x_1 \le 0`: :math:`\log\delta = -x_1^2/2 + \log\tfrac12 +
    \log(\operatorname{erfcx}(-x_1/\sqrt2) - \operatorname{erfcx}(-x_2/\sqrt2))`; where μ is small
    against :math:`\max(1, |x_1|)`, :math:`-x_1^2/2 - \log\sqrt{2\pi} + \log(R(x_1) - R(x_2))`
    (``_log_mills_diff``). ``-inf`` only where log δ is below -1.8e308.
    """
    eps, mu = np.broadcast_arrays(np.asarray(eps, dtype=float), np.asarray(mu, dtype=float))
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        x1 = mu / 2.0 - eps / mu
        x2 = -mu / 2.0 - eps / mu
        diff = special.erfcx(np.maximum(-x1, 0.0) / _SQRT2) - special.erfcx(-x2 / _SQRT2)
        tail = -0.5 * x1 * x1 + np.log(0.5) + np.log(np.maximum(diff, 1e-320))
        head = np.log(np.maximum(delta_from_mu(eps, mu), 1e-320))
        out = np.where(x1 <= 0.0, tail, head)
        series = _series_regime(x1, mu)
        if np.any(series):
            xs = x1[series]
            out[series] = -0.5 * xs * xs - _LOG_SQRT_2PI + _log_mills_diff(xs, mu[series])
    return out


def _log_one_minus_delta(eps: np.ndarray, mu: np.ndarray) -> np.ndarray:
    r""":math:`\log(1 - \delta(\varepsilon))` for ε ≥ 0, accurate where δ is close to 1.

    :math:`1 - \delta = \Phi(-x_1) + e^{\varepsilon}\Phi(x_2) = \Phi(-x_1) + \tfrac12 e^{-x_1^2/2}
    \operatorname{erfcx}(-x_2/\sqrt2)`: a sum of two positive terms, added in log space.
    """
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        x1 = mu / 2.0 - eps / mu
        x2 = -mu / 2.0 - eps / mu
        return np.logaddexp(special.log_ndtr(-x1), -0.5 * x1 * x1 + np.log(0.5 * special.erfcx(-x2 / _SQRT2)))


def gaussian_delta(eps: ArrayLike, *, sensitivity: ArrayLike, sigma: ArrayLike) -> np.ndarray:
    r"""Tight privacy profile :math:`\delta(\varepsilon)` of the Gaussian mechanism.

    Redberg, Koskela & Wang 2023, eq. (B.1) (Balle & Wang 2018, Thm 8): with
    :math:`\Delta` the L2 sensitivity,

    .. math:: \delta(\varepsilon) = \Phi\!\left(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\right)
              - e^{\varepsilon}\,\Phi\!\left(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\right).

    It is the hockey-stick divergence :math:`H_{e^\varepsilon}(\mathcal N(\Delta,\sigma^2)\,\|\,\mathcal N(0,\sigma^2))`,
    exact for every ε (both orders of the pair give the same curve). Evaluated
    without overflow for ε up to ~1e300 and without catastrophic cancellation
    (see the implementation note in ``delta_from_mu``). Broadcasts its arguments.
    ``sensitivity = 0`` gives δ = 0. Negative ε is allowed (δ(ε) is defined there).

    Parameters
    ----------
    eps : array_like
        ε of the (ε, δ) guarantee, in nats.
    sensitivity : array_like
        ℓ2 sensitivity Δ of the released quantity (a per-person array is allowed where the function is vectorized).
    sigma : array_like
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    """
    eps = as_finite_array(eps, "eps")
    sensitivity = check_nonnegative(sensitivity, "sensitivity")
    sigma = check_positive(sigma, "sigma")
    with np.errstate(over="ignore", under="ignore"):
        mu = sensitivity / sigma  # inf: the limit delta = 1; 0: the limit of no privacy loss
    eps, mu = np.broadcast_arrays(eps, mu)
    zero = mu == 0.0
    safe_mu = np.where(zero, 1.0, mu)
    out = delta_from_mu(eps, safe_mu)
    out = np.where(zero, np.maximum(0.0, -np.expm1(np.minimum(eps, 0.0))), out)
    return out[()] if out.ndim == 0 else out


def _safeguarded_newton(
    f_and_slope: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    increasing: bool,
    rtol: float = 1e-13,
    max_iter: int = 200,
) -> np.ndarray:
    """Vectorized root of a monotone function on brackets ``[lo, hi]``.

    Newton steps from the bracket midpoint, falling back to bisection whenever a
    step leaves the bracket; stops when every bracket is below ``rtol`` relative
    width or the Newton step is that small.
    """
    lo = lo.astype(float).copy()
    hi = hi.astype(float).copy()
    x = 0.5 * (lo + hi)
    sign = 1.0 if increasing else -1.0
    for _ in range(max_iter):
        val, slope = f_and_slope(x)
        pos = sign * val > 0
        hi = np.where(pos, x, hi)
        lo = np.where(pos, lo, x)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            step = val / slope
        newton = x - step
        ok = np.isfinite(newton) & (newton >= lo) & (newton <= hi)
        x_new = np.where(val == 0, x, np.where(ok, newton, 0.5 * (lo + hi)))
        done = (np.abs(x_new - x) <= rtol * np.abs(x_new)) | (hi - lo <= rtol * np.abs(hi)) | (val == 0)
        x = x_new
        if np.all(done):
            break
    return x


#: Above this μ, δ(ε) is ill-conditioned in ε (x1 = μ/2 - ε/μ loses about log10(μ) digits): solve for x1.
_X1_SOLVE_ABOVE = 1e3


def _epsilon_via_x1(d: np.ndarray, m: np.ndarray) -> np.ndarray:
    r"""ε with δ(ε) = d for a large μ = m, solved in :math:`x_1 = \mu/2 - \varepsilon/\mu`.

    δ as a function of :math:`x_1` (with :math:`x_2 = x_1 - \mu`) is well-conditioned:
    :math:`\partial\delta/\partial x_1 = \mu e^{\varepsilon}\Phi(x_2) = \mu\varphi(x_1)R(x_2) \approx \varphi(x_1)`.
    With :math:`z = \Phi^{-1}(1 - \delta)` the root lies in :math:`[-z, 40 - z]`: the left end is
    Cor 23's bound, and at the right end :math:`\delta \ge \Phi(x_1) - \varphi(x_1)/|x_2| > \delta`
    for μ > 1e3 (:math:`R(x_2) \le 1/|x_2|`). :math:`\varepsilon = \mu(\mu/2 - x_1)` is then exact to rounding.
    """
    log_d, log_1md, high = np.log(d), np.log1p(-d), d > 0.5

    def f_and_slope(x1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            x2 = x1 - m
            g = -0.5 * x1 * x1
            log_second = g + np.log(0.5 * special.erfcx(-x2 / _SQRT2))  # log e^ε Φ(x2)
            tail = g + np.log(0.5) + np.log(np.maximum(
                special.erfcx(np.maximum(-x1, 0.0) / _SQRT2) - special.erfcx(-x2 / _SQRT2), 1e-320))
            head = np.log(np.maximum(special.ndtr(x1) - np.exp(log_second), 1e-320))
            log_delta = np.where(x1 <= 0.0, tail, head)
            log_c = np.logaddexp(special.log_ndtr(-x1), log_second)  # log(1 - δ)
            val = np.where(high, log_1md - log_c, log_delta - log_d)
            slope = np.exp(np.log(m) + log_second - np.where(high, log_c, log_delta))
        return val, slope

    z = _upper_normal_quantile(d)
    x1 = _safeguarded_newton(f_and_slope, -z, np.minimum(40.0 - z, m / 2.0), increasing=True)
    return m * (m / 2.0 - x1)


def gaussian_epsilon(delta: ArrayLike, *, sensitivity: ArrayLike, sigma: ArrayLike) -> np.ndarray:
    r"""Smallest ε ≥ 0 with :math:`\delta(\varepsilon) \le \delta` for the Gaussian mechanism.

    Inverts :func:`gaussian_delta` (eq. B.1) in ε by safeguarded Newton steps on
    :math:`\log\delta(\varepsilon)`, using
    :math:`\frac{d}{d\varepsilon}\delta(\varepsilon) = -e^{\varepsilon}\Phi(x_2)`.
    The bracket's upper end is Cor 23's bound :math:`\mu^2/2 + \mu\Phi^{-1}(1-\delta)`.
    Relative accuracy ~1e-12. Broadcasts its arguments.

    Parameters
    ----------
    delta : array_like
        δ of the (ε, δ) guarantee, in (0, 1).
    sensitivity : array_like
        ℓ2 sensitivity Δ of the released quantity (a per-person array is allowed where the function is vectorized).
    sigma : array_like
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    """
    delta = check_probability(delta, "delta")
    sensitivity = check_nonnegative(sensitivity, "sensitivity")
    sigma = check_positive(sigma, "sigma")
    with np.errstate(over="ignore", under="ignore"):
        mu = sensitivity / sigma
    delta, mu = np.broadcast_arrays(delta, mu)
    shape = delta.shape
    delta = delta.ravel()
    mu = mu.ravel()
    out = np.zeros_like(delta)
    positive = mu > 0
    if np.any(positive):
        d, m = delta[positive], mu[positive]
        need = delta_from_mu(np.zeros_like(m), m) > d  # otherwise ε = 0 already suffices
        if np.any(need):
            d, m = d[need], m[need]
            log_d = np.log(d)
            with np.errstate(over="ignore"):
                hi = m * (m / 2.0 + _upper_normal_quantile(d))
            if not np.all(np.isfinite(hi)):
                raise ValueError("sensitivity/sigma must be below about 1e154: larger ratios give an epsilon "
                                 "beyond the largest float")

            high = d > 0.5  # there 1 - delta carries the information: solve on log(1 - delta)
            log_1md = np.log1p(-d)

            def f_and_slope(e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
                with np.errstate(over="ignore", under="ignore"):
                    x1 = m / 2.0 - e / m
                    x2 = -m / 2.0 - e / m
                    log_delta = log_delta_from_mu(e, m)
                    # e^ε Φ(x2) = ½ e^{-x1²/2} erfcx(-x2/√2)
                    log_deriv = -0.5 * x1 * x1 + np.log(0.5 * special.erfcx(-x2 / _SQRT2))
                    if not np.any(high):
                        return log_delta - log_d, -np.exp(log_deriv - log_delta)
                    log_c = _log_one_minus_delta(e, m)
                    return (np.where(high, log_1md - log_c, log_delta - log_d),
                            -np.exp(log_deriv - np.where(high, log_c, log_delta)))

            res = _safeguarded_newton(f_and_slope, np.zeros_like(m), hi, increasing=False)
            big = m > _X1_SOLVE_ABOVE
            if np.any(big):
                res[big] = _epsilon_via_x1(d[big], m[big])
            sub = out[positive]
            sub[need] = res
            out[positive] = sub
    out = out.reshape(shape)
    return out[()] if out.ndim == 0 else out


def gaussian_sigma(eps: ArrayLike, delta: ArrayLike, *, sensitivity: ArrayLike = 1.0) -> np.ndarray:
    r"""Smallest σ such that the Gaussian mechanism is (ε, δ)-DP (tight, equation B.1).

    The analytic Gaussian mechanism of Balle & Wang 2018. δ(ε) depends on
    :math:`\mu = \Delta/\sigma` only and is increasing in μ with
    :math:`\partial\delta/\partial\mu = \varphi(x_1)`; we solve
    :math:`\delta(\varepsilon; \mu) = \delta` for μ by safeguarded Newton steps in
    :math:`\log\mu` and return :math:`\sigma = \Delta/\mu`. The bracket's lower end is the
    larger of the root of Cor 23's sufficient condition :math:`\mu^2/2 + \mu\Phi^{-1}(1-\delta) = \varepsilon`
    and the ε → 0 limit :math:`\mu_0 = 2\Phi^{-1}((1+\delta)/2) = 2\sqrt2\operatorname{erf}^{-1}(\delta)`
    (δ(ε; μ) ≤ δ(0; μ) = erf(μ/(2√2))), so that σ tends to :math:`\Delta/\mu_0 \approx \Delta/(\delta\sqrt{2\pi})`
    as ε → 0. Relative accuracy ~1e-12 for every ε > 0 (1e-300 to 1e300) and δ in (0, 1).
    A σ beyond the float range (e.g. a huge ``sensitivity`` with a tiny ε and δ) is a ``ValueError``.

    Parameters
    ----------
    eps : array_like
        ε of the (ε, δ) guarantee, in nats.
    delta : array_like
        δ of the (ε, δ) guarantee, in (0, 1).
    sensitivity : array_like, default 1.0
        ℓ2 sensitivity Δ of the released quantity (a per-person array is allowed where the function is vectorized).
    """
    eps = check_positive(eps, "eps")
    delta = check_probability(delta, "delta")
    sensitivity = check_positive(sensitivity, "sensitivity")
    eps, delta, sensitivity = np.broadcast_arrays(eps, delta, sensitivity)
    shape = eps.shape
    e, d = eps.ravel(), delta.ravel()
    log_d = np.log(d)
    z = _upper_normal_quantile(d)
    # Sufficient (Cor 23): mu_lo gives delta(eps; mu_lo) <= delta (the root, written without cancellation
    # or overflow for every sign of z and every eps).
    with np.errstate(divide="ignore", invalid="ignore"):  # np.where evaluates both branches
        root = np.where(z > 0.0, e / (0.5 * z + np.sqrt(0.25 * z * z + 0.5 * e)),
                        np.sqrt(2.0) * np.sqrt(0.5 * z * z + e) - z)
    mu_lo = np.maximum(root, 2.0 * _SQRT2 * special.erfinv(d))
    high = d > 0.5  # there 1 - delta carries the information: solve on log(1 - delta)
    log_1md = np.log1p(-d)
    mu_hi = mu_lo.copy()
    for _ in range(200):
        short = np.where(high, _log_one_minus_delta(e, mu_hi) > log_1md, delta_from_mu(e, mu_hi) < d)
        if not np.any(short):
            break
        mu_hi = np.where(short, 2.0 * mu_hi, mu_hi)

    def f_and_slope(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(over="ignore", under="ignore"):
            m = np.exp(u)
            x1 = m / 2.0 - e / m
            log_delta = log_delta_from_mu(e, m)
            log_phi = -0.5 * x1 * x1 - _LOG_SQRT_2PI
            if not np.any(high):
                return log_delta - log_d, np.exp(u + log_phi - log_delta)
            log_c = _log_one_minus_delta(e, m)
            return (np.where(high, log_1md - log_c, log_delta - log_d),
                    np.exp(u + log_phi - np.where(high, log_c, log_delta)))

    u = _safeguarded_newton(f_and_slope, np.log(mu_lo), np.log(mu_hi), increasing=True, rtol=1e-15)
    with np.errstate(over="ignore", under="ignore"):
        out = (sensitivity.ravel() / np.exp(u)).reshape(shape)
    if not np.all(np.isfinite(out) & (out >= np.finfo(float).tiny)):
        raise ValueError("sensitivity is out of range for this (eps, delta): the calibrated sigma = sensitivity/mu "
                         "lies beyond the float range (1e-308 to 1e308); rescale the sensitivity")
    return out[()] if out.ndim == 0 else out


def gaussian_rdp(alpha: ArrayLike, *, sensitivity: ArrayLike, sigma: ArrayLike) -> np.ndarray:
    r"""Rényi DP of the Gaussian mechanism: :math:`\varepsilon(\alpha) = \alpha\Delta^2/(2\sigma^2)`.

    Redberg, Koskela & Wang 2023, Thm B.1 (Mironov 2017, Prop 7). Exact: it is the
    Rényi divergence of order α between :math:`\mathcal N(\Delta,\sigma^2)` and
    :math:`\mathcal N(0,\sigma^2)`, for every α > 0 (α = 1 is the KL divergence).

    Parameters
    ----------
    alpha : array_like
        Rényi order α ≥ 1.
    sensitivity : array_like
        ℓ2 sensitivity Δ of the released quantity (a per-person array is allowed where the function is vectorized).
    sigma : array_like
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    """
    alpha = check_positive(alpha, "alpha")
    sensitivity = check_nonnegative(sensitivity, "sensitivity")
    sigma = check_positive(sigma, "sigma")
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        out = alpha * sensitivity**2 / (2.0 * sigma**2)
        if not np.all(np.isfinite(out)) or np.any((sigma < 1e-150) | (sigma > 1e150)):
            out = alpha * (sensitivity / sigma) ** 2 / 2.0  # the squares leave the float range
    return _finite_result(out, "alpha * (sensitivity/sigma)**2 / 2 exceeds the largest float: sensitivity/sigma "
                               "or alpha is too large")


def gaussian_classic_epsilon(sensitivity: ArrayLike, *, sigma: ArrayLike, delta: ArrayLike) -> np.ndarray:
    r"""The classic calibration read as an ε: :math:`\varepsilon = \frac{\Delta}{\sigma}\sqrt{2\log(1.25/\delta)}`.

    Dwork & Roth 2014, Thm A.1. The guarantee holds **only when the returned value is
    at most 1**; the value is returned as is and the caller must check that. Kept for
    comparison with the tight :func:`gaussian_epsilon`, which is smaller everywhere.

    Parameters
    ----------
    sensitivity : array_like
        ℓ2 sensitivity Δ of the released quantity (a per-person array is allowed where the function is vectorized).
    sigma : array_like
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    delta : array_like
        δ of the (ε, δ) guarantee, in (0, 1).
    """
    sensitivity = check_nonnegative(sensitivity, "sensitivity")
    sigma = check_positive(sigma, "sigma")
    delta = check_probability(delta, "delta")
    with np.errstate(over="ignore", under="ignore"):
        out = sensitivity / sigma * np.sqrt(2.0 * np.log(1.25 / delta))
    return _finite_result(out, "sensitivity/sigma is too large: the epsilon exceeds the largest float")


# ----------------------------------------------------------------------------- Lemma 2.4
def mahalanobis_sensitivity(delta_z: ArrayLike, *, precision: ArrayLike) -> np.ndarray:
    r"""Per-instance sensitivity in the norm of a precision matrix: :math:`\sqrt{\Delta_z^\top P \Delta_z}`.

    For Gaussian noise with covariance :math:`P^{-1}` (Wang 2019, Lemma 2.4 uses
    :math:`P = \gamma A`), this is the normalized sensitivity μ of the equivalent
    isotropic mechanism: whitening by :math:`P^{1/2}` maps the pair to
    :math:`\mathcal N(P^{1/2}\Delta_z, I)` vs :math:`\mathcal N(0, I)`.
    ``delta_z`` has shape (..., d); ``precision`` is (d, d) symmetric positive definite.

    Parameters
    ----------
    delta_z : array_like
        The change Δ_z = Q(D_{±z}) − Q(D) of the released quantity, shape (..., d).
    precision : array_like
        Precision matrix P (inverse noise covariance), shape (d, d), symmetric positive definite.
    """
    delta_z = np.atleast_1d(as_finite_array(delta_z, "delta_z"))
    precision = as_finite_array(precision, "precision", ndim=2)
    d = delta_z.shape[-1]
    if precision.shape != (d, d):
        raise ValueError(f"precision must have shape ({d}, {d}) to match delta_z; got {precision.shape}")
    if not np.allclose(precision, precision.T, rtol=1e-10, atol=1e-12 * np.abs(precision).max()):
        raise ValueError("precision must be symmetric")
    try:
        chol = np.linalg.cholesky(precision)
    except np.linalg.LinAlgError as exc:
        raise ValueError("precision must be positive definite") from exc
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        white = delta_z @ chol  # rows: (L^T Δ)^T, so ||.||^2 = Δ^T L L^T Δ
        out = np.sqrt(np.einsum("...i,...i->...", white, white))
        if not np.all(np.isfinite(out)):  # the squares overflow: scale by the largest entry first
            scale = np.max(np.abs(white), axis=-1, keepdims=True)
            scale = np.where(scale > 0, scale, 1.0)
            out = scale[..., 0] * np.sqrt(np.einsum("...i,...i->...", white / scale, white / scale))
    return _finite_result(out, "the Mahalanobis sensitivity exceeds the largest float: delta_z or precision "
                               "is too large")


def gaussian_pdp_epsilon_covariance(delta_z: ArrayLike, *, precision: ArrayLike, delta: ArrayLike) -> np.ndarray:
    r"""Tight (ε, δ)-pDP of :math:`\hat\theta(D) + \mathcal N(0, P^{-1})` for one target.

    The corrected form of Wang 2019, Lemma 2.4 (noise covariance :math:`A^{-1}/\gamma`,
    i.e. precision :math:`P = \gamma A`): the mechanism is exactly as private as the
    isotropic Gaussian mechanism with :math:`\mu = \sqrt{\gamma}\,\Delta_A(Z, z)`, so

    .. math:: \varepsilon(Z, z) = \varepsilon_{\mathrm{tight}}(\delta; \mu) \le
              \sqrt{\gamma}\,\Delta_A\sqrt{2\log(1.25/\delta)} \quad(\text{when this is} \le 1),

    where the lemma as printed reads :math:`\gamma\Delta_A\sqrt{\log(1.25/\delta)}`
    (see the chapter's errata: the power of γ and a factor √2 are off).

    Parameters
    ----------
    delta_z : array_like
        The change Δ_z = Q(D_{±z}) − Q(D) of the released quantity, shape (..., d).
    delta : array_like
        δ of the (ε, δ) guarantee, in (0, 1).
    precision : array_like
        Precision matrix P = γA of the noise (inverse covariance), shape (d, d), symmetric positive definite.
    """
    mu = mahalanobis_sensitivity(delta_z, precision=precision)
    return gaussian_epsilon(delta, sensitivity=mu, sigma=1.0)


# ----------------------------------------------------------------------------- moments
def pdp_moments(epsilons: ArrayLike, *, k: int = 2, weights: ArrayLike | None = None) -> np.ndarray:
    r"""Moments :math:`(\mathbb E\varepsilon, \dots, \mathbb E\varepsilon^k)` of pDP losses (Wang 2019, Def 2.7).

    ``epsilons`` are the pDP losses :math:`\varepsilon(Z, z)` of a collection of
    (data set, target) pairs — e.g. of each individual of a data set ("pDP of a data
    set", uniform weights) — and ``weights`` an optional probability vector.
    Returns an array of length ``k``. The ε values are data-dependent and **not
    private**: moments computed from them are for analysis, not for release.

    Parameters
    ----------
    epsilons : array_like
        The pDP losses ε(Z, z) of a collection of (data set, target) pairs (not private).
    k : int, default 2
        Highest moment order k ≥ 1.
    weights : array_like, optional
        Probability weights of the pairs (``None``: uniform).
    """
    k = check_int_at_least(k, "k", 1)
    eps = check_nonnegative(epsilons, "epsilons").ravel()
    if eps.size == 0:
        raise ValueError("epsilons must be non-empty")
    if weights is None:
        w = np.full(eps.size, 1.0 / eps.size)
    else:
        w = check_nonnegative(weights, "weights").ravel()
        if w.shape != eps.shape or not np.isclose(w.sum(), 1.0):
            raise ValueError("weights must be a probability vector with one entry per epsilon")
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        powers = eps[None, :] ** np.arange(1, k + 1)[:, None]
        out = powers @ w
    return _finite_result(out, f"epsilons**k (k = {k}) exceeds the largest float: lower k")
