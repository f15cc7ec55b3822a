r"""Analyze-Gauss with GOE noise and the private release of :math:`\lambda_{\min}`.

Redberg & Wang (2021), Appendix D and C.1:

* :func:`analyze_gauss` — Algorithm 6 (Analyze-Gauss with Gaussian Orthogonal
  Ensemble noise) and the classic upper-triangle variant of Dwork et al. (2014);
* :func:`analyze_gauss_sensitivity`, :func:`analyze_gauss_pdp_epsilon`,
  :func:`analyze_gauss_dp_epsilon`, :func:`analyze_gauss_sigma`,
  :func:`analyze_gauss_privacy_loss` — Theorem 17 (pDP and DP) and the exact privacy
  loss;
* :func:`private_lambda_min`, :func:`lambda_min_pdp_epsilon`,
  :func:`lambda_min_lower_bound`, :func:`weyl_bound` — Algorithm 3 and Theorem 11.

The law of the GOE noise itself (CDF of its largest eigenvalue and norm, the bound
:math:`\tau` of Lemmas 19–20) is :mod:`pdpkit.goe`. Both modules use the normalization
of Algorithm 6, :math:`G = \sigma(Z + Z^\top)/\sqrt 2`. Every ``rng`` accepts an
``int`` seed, a ``numpy.random.Generator`` or ``None``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from ._validation import (
    as_finite_array,
    as_generator,
    check_nonnegative,
    check_positive,
    check_probability,
)
from .gaussian import gaussian_pdp_epsilon
from .goe import goe_matrix

__all__ = [
    "analyze_gauss",
    "analyze_gauss_sensitivity",
    "analyze_gauss_pdp_epsilon",
    "analyze_gauss_dp_epsilon",
    "analyze_gauss_sigma",
    "analyze_gauss_privacy_loss",
    "private_lambda_min",
    "lambda_min_pdp_epsilon",
    "lambda_min_lower_bound",
    "weyl_bound",
]

_Variant = Literal["goe", "upper"]


def _check_variant(variant: str) -> str:
    if variant not in ("goe", "upper"):
        raise ValueError(f"variant must be 'goe' or 'upper'; got {variant!r}")
    return variant


@lru_cache(maxsize=32)
def _tri_masks(d: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.tri(d, d, -1)`` and ``np.tri(d, d, 0)`` as booleans: the masks of ``np.triu(., 0)``, ``np.triu(., 1)``."""
    below, below_or_on = np.tri(d, d, -1, dtype=bool), np.tri(d, d, 0, dtype=bool)
    below.setflags(write=False)
    below_or_on.setflags(write=False)
    return below, below_or_on


def _upper_noise(d: int, sigma: float, shape: tuple[int, ...], gen: np.random.Generator) -> np.ndarray:
    """Classic Analyze-Gauss noise: iid N(0, sigma^2) on and above the diagonal, mirrored."""
    e = sigma * gen.standard_normal(shape + (d, d))
    below, below_or_on = _tri_masks(d)
    zero = np.zeros(1, e.dtype)
    upper = np.where(below, zero, e)                            # np.triu(e), with its mask cached
    return upper + np.swapaxes(np.where(below_or_on, zero, e), -1, -2)   # + np.triu(e, 1)^T


def _check_symmetric(H, name: str) -> np.ndarray:
    H = as_finite_array(H, name)
    if H.ndim < 2 or H.shape[-1] != H.shape[-2]:
        raise ValueError(f"{name} must be a square matrix (or a stack of them); got shape {H.shape}")
    scale = max(1.0, float(np.max(np.abs(H)))) if H.size else 1.0
    if H.size and np.max(np.abs(H - np.swapaxes(H, -1, -2))) > 1e-10 * scale:
        raise ValueError(f"{name} must be symmetric")
    return H


def analyze_gauss(H: ArrayLike, *, sigma: float, variant: _Variant = "goe",
                  rng: np.random.Generator | None = None) -> np.ndarray:
    r"""Release a symmetric matrix with Gaussian noise (Redberg & Wang 2021, Alg 6).

    ``variant="goe"`` is Algorithm 6: :math:`\hat H = H + \sigma(Z+Z^\top)/\sqrt2`
    (off-diagonal noise variance :math:`\sigma^2`, diagonal :math:`2\sigma^2`).
    ``variant="upper"`` is the classic Analyze-Gauss of Dwork et al. (2014): iid
    :math:`\mathcal N(0,\sigma^2)` noise on the upper triangle including the
    diagonal, mirrored to keep the output symmetric. At equal privacy the GOE
    variant may use :math:`\sigma/\sqrt 2` of the classic noise scale (see
    :func:`analyze_gauss_sigma`): the same diagonal variance and half the
    off-diagonal variance.

    Parameters
    ----------
    H : array_like, shape (d, d)
        Symmetric matrix (e.g. a Hessian :math:`\sum_i \nabla^2\ell(z_i) + \lambda I`).
    sigma : float
        Noise scale :math:`\sigma > 0`.
    variant : {"goe", "upper"}
        Which mechanism.
    rng : numpy.random.Generator, optional
        Source of randomness.

    Returns
    -------
    numpy.ndarray, shape (d, d)
        The private symmetric release :math:`\hat H^P`.
    """
    H = _check_symmetric(H, "H")
    if H.ndim != 2:
        raise ValueError(f"H must be a single (d, d) matrix; got shape {H.shape}")
    sigma = float(check_positive(sigma, "sigma"))
    _check_variant(variant)
    gen = as_generator(rng)
    d = H.shape[0]
    if variant == "goe":
        noise = goe_matrix(d, sigma=sigma, rng=gen)
    else:
        noise = _upper_noise(d, sigma, (), gen)
    return H + noise


def analyze_gauss_sensitivity(H_x: ArrayLike, *, variant: _Variant = "goe") -> np.ndarray:
    r"""Exact per-instance :math:`\ell_2`-sensitivity of Analyze-Gauss for a contribution :math:`H_x`.

    Both mechanisms are Gaussian mechanisms with iid :math:`\mathcal N(0,\sigma^2)`
    noise in suitable coordinates (Redberg & Wang 2021, proof of Thm 17). Adding
    or removing one person changes those coordinates by

    * ``"goe"``: :math:`\|[\operatorname{diag}(H_x)/\sqrt2, \operatorname{triu}_{>0}(H_x)]\|_2 = \|H_x\|_F/\sqrt2`
      (exactly, for every symmetric :math:`H_x`);
    * ``"upper"``: :math:`\|\operatorname{triu}_{\ge 0}(H_x)\|_2
      = \sqrt{(\|H_x\|_F^2 + \sum_k H_{x,kk}^2)/2} \le \|H_x\|_F`,
      with equality iff :math:`H_x` is diagonal (the source uses the bound).

    Parameters
    ----------
    H_x : array_like, shape (..., d, d)
        Symmetric per-person contribution(s).
    variant : {"goe", "upper"}

    Returns
    -------
    numpy.ndarray
        Sensitivities, shape ``H_x.shape[:-2]``.
    """
    H_x = _check_symmetric(H_x, "H_x")
    _check_variant(variant)
    fro2 = np.sum(H_x * H_x, axis=(-1, -2))
    if variant == "goe":
        return np.sqrt(fro2 / 2.0)
    diag2 = np.sum(np.diagonal(H_x, axis1=-2, axis2=-1) ** 2, axis=-1)
    return np.sqrt((fro2 + diag2) / 2.0)


def analyze_gauss_pdp_epsilon(frobenius_norm: ArrayLike, *, sigma: ArrayLike, delta: ArrayLike,
                              variant: _Variant = "goe") -> np.ndarray:
    r"""pDP of Analyze-Gauss for a person with :math:`\|H_x\|_F` given (Redberg & Wang 2021, Thm 17).

    For Algorithm 6 (``variant="goe"``), Theorem 17:

    .. math::

       \epsilon(\cdot) = \frac{\|H_x\|_F^2}{4\sigma^2} + \frac{\|H_x\|_F\sqrt{2\log(1/\delta)}}{\sqrt2\,\sigma},

    i.e. the Gaussian-mechanism tail bound
    :math:`\Delta^2/(2\sigma^2) + \Delta\sqrt{2\log(1/\delta)}/\sigma` with
    :math:`\Delta = \|H_x\|_F/\sqrt2`. For the classic upper-triangle mechanism
    (``variant="upper"``) the source's sensitivity bound :math:`\Delta = \|H_x\|_F`
    is used. Passing a bound :math:`\beta \ge \sup_x\|H_x\|_F` gives the
    :math:`(\epsilon,\delta)`-DP of the mechanism (same theorem). Vectorized
    (broadcasting) over all arguments.

    Parameters
    ----------
    frobenius_norm : array_like
        :math:`\|H_x\|_F \ge 0`.
    sigma : array_like
        Noise scale :math:`\sigma > 0` of the chosen variant.
    delta : array_like
        :math:`\delta \in (0, 1)`.
    variant : {"goe", "upper"}

    Returns
    -------
    numpy.ndarray
        :math:`\epsilon`.
    """
    f = check_nonnegative(frobenius_norm, "frobenius_norm")
    s = check_positive(sigma, "sigma")
    dl = check_probability(delta, "delta")
    _check_variant(variant)
    sens = f / math.sqrt(2.0) if variant == "goe" else f
    return gaussian_pdp_epsilon(sens, sigma=s, delta=dl, form="sqrt_log")


def analyze_gauss_dp_epsilon(beta: ArrayLike, *, sigma: ArrayLike, delta: ArrayLike,
                             variant: _Variant = "goe") -> np.ndarray:
    r"""(ε, δ)-DP of Analyze-Gauss when every :math:`\|H_x\|_F \le \beta` (Redberg & Wang 2021, Thm 17).

    The same expression as :func:`analyze_gauss_pdp_epsilon` with
    :math:`\beta` in place of :math:`\|H_x\|_F`.

    Parameters
    ----------
    beta : array_like
        Smoothness bound β ≥ f'' of the GLM loss.
    sigma : array_like
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    delta : array_like
        δ of the (ε, δ) guarantee, in (0, 1).
    variant : _Variant, default 'goe'
        ``"goe"`` (symmetrized GOE noise, Alg 6) or ``"upper"`` (the classic upper-triangle Analyze-Gauss).
    """
    return analyze_gauss_pdp_epsilon(beta, sigma=sigma, delta=delta, variant=variant)


def analyze_gauss_sigma(eps: ArrayLike, delta: ArrayLike, *, beta: ArrayLike, variant: _Variant = "goe") -> np.ndarray:
    r"""Noise scale :math:`\sigma` giving :math:`(\epsilon,\delta)`-DP by Thm 17's bound.

    Solves :math:`\Delta^2/(2\sigma^2) + \Delta\sqrt{2\log(1/\delta)}/\sigma = \epsilon`
    for :math:`\sigma`, with :math:`\Delta = \beta/\sqrt2` (``"goe"``) or
    :math:`\Delta=\beta` (``"upper"``):
    :math:`\sigma = \Delta/(\sqrt{c^2+2\epsilon}-c)`, :math:`c=\sqrt{2\log(1/\delta)}`.
    Consequently :math:`\sigma_{\rm goe} = \sigma_{\rm upper}/\sqrt2` at equal privacy
    (Redberg & Wang 2021, App. D, "Improvements over Analyze Gauss").

    Parameters
    ----------
    eps : array_like
        ε of the (ε, δ) guarantee, in nats.
    delta : array_like
        δ of the (ε, δ) guarantee, in (0, 1).
    beta : array_like
        Smoothness bound β ≥ f'' of the GLM loss.
    variant : _Variant, default 'goe'
        ``"goe"`` (symmetrized GOE noise, Alg 6) or ``"upper"`` (the classic upper-triangle Analyze-Gauss).
    """
    e = check_positive(eps, "eps")
    dl = check_probability(delta, "delta")
    b = check_positive(beta, "beta")
    _check_variant(variant)
    sens = b / math.sqrt(2.0) if variant == "goe" else b
    c = np.sqrt(2.0 * np.log(1.0 / dl))
    # sqrt(c^2 + 2e) - c written without cancellation
    ratio = 2.0 * e / (np.sqrt(c * c + 2.0 * e) + c)
    return sens / ratio


def _coords(M: np.ndarray, variant: str) -> np.ndarray:
    """Coordinates in which the noise is iid N(0, sigma^2): diag/sqrt2 + strict upper (goe), or upper."""
    d = M.shape[-1]
    iu = np.triu_indices(d, 1)
    diag = np.diagonal(M, axis1=-2, axis2=-1)
    if variant == "goe":
        diag = diag / math.sqrt(2.0)
    return np.concatenate([diag, M[..., iu[0], iu[1]]], axis=-1)


def analyze_gauss_privacy_loss(outputs: ArrayLike, H: ArrayLike, H_prime: ArrayLike, *, sigma: float,
                               variant: _Variant = "goe") -> np.ndarray:
    r"""Exact privacy loss :math:`\log p_D(o)/p_{D'}(o)` of Analyze-Gauss at outputs :math:`o`.

    In the coordinates of the proof of Thm 17 (Redberg & Wang 2021) the noise is
    iid :math:`\mathcal N(0,\sigma^2)`, so with :math:`f` those coordinates the loss
    is :math:`(\|f(o)-f(H')\|^2 - \|f(o)-f(H)\|^2)/(2\sigma^2)`. Under
    :math:`o\sim M(D)` it is :math:`\mathcal N(\mu, 2\mu)` with
    :math:`\mu=\Delta^2/(2\sigma^2)`, :math:`\Delta` = :func:`analyze_gauss_sensitivity`
    of :math:`H'-H`.

    Parameters
    ----------
    outputs : array_like, shape (m, d, d) or (d, d)
        Released matrices (symmetric).
    H, H_prime : array_like, shape (d, d)
        The matrices of the neighbouring data sets :math:`D` and :math:`D'` (non-private).
    sigma : float
        Noise scale of the mechanism.
    variant : {"goe", "upper"}

    Returns
    -------
    numpy.ndarray, shape (m,) or ()
    """
    H = _check_symmetric(H, "H")
    Hp = _check_symmetric(H_prime, "H_prime")
    o = as_finite_array(outputs, "outputs")
    if H.ndim != 2 or Hp.shape != H.shape or o.shape[-2:] != H.shape:
        raise ValueError("outputs, H and H_prime must share the matrix shape (d, d)")
    s = float(check_positive(sigma, "sigma"))
    _check_variant(variant)
    fo = _coords(o, variant)
    a = fo - _coords(H, variant)
    b = fo - _coords(Hp, variant)
    return (np.sum(b * b, axis=-1) - np.sum(a * a, axis=-1)) / (2.0 * s * s)


# ---------------------------------------------------------------------------
# Releasing lambda_min (App. C.1: Alg 3, Thm 11) and Weyl's inequality
# ---------------------------------------------------------------------------

def private_lambda_min(H: ArrayLike, *, sigma: float, rng: np.random.Generator | None = None) -> float:
    r"""Release :math:`\lambda_{\min}(H) + \mathcal N(0, \sigma^2)` (Redberg & Wang 2021, Alg 3).

    Its privacy is that of a Gaussian mechanism with per-instance sensitivity
    :math:`\|H_x\|_2` (:func:`weyl_bound`; :math:`f''\|x\|^2` for a GLM), see
    :func:`lambda_min_pdp_epsilon` (Thm 11).

    Parameters
    ----------
    H : array_like, shape (d, d)
        Symmetric matrix (non-private input).
    sigma : float
        Noise scale :math:`\sigma_4 > 0`.
    rng : numpy.random.Generator, optional

    Returns
    -------
    float
        :math:`\hat\lambda^P_{\min}`.
    """
    H = _check_symmetric(H, "H")
    if H.ndim != 2:
        raise ValueError(f"H must be a single (d, d) matrix; got shape {H.shape}")
    sigma = float(check_positive(sigma, "sigma"))
    gen = as_generator(rng)
    lam = float(np.linalg.eigvalsh(H)[0])
    return lam + sigma * float(gen.standard_normal())


def lambda_min_pdp_epsilon(sensitivity: ArrayLike, *, sigma: ArrayLike, delta: ArrayLike) -> np.ndarray:
    r"""pDP of Alg 3 (Redberg & Wang 2021, Thm 11).

    .. math::

       \epsilon_4(\cdot) = \frac{s^2}{2\sigma_4^2} + \frac{s\sqrt{2\log(1/\delta)}}{\sigma_4},

    with :math:`s = f''(\cdot)\|x\|^2` for a GLM (or :math:`\|\nabla^2\ell\|_F`, or
    any bound on :math:`\|H_x\|_2`); with :math:`s\le\beta` for all :math:`x`, the
    DP :math:`\epsilon`. Vectorized.

    Parameters
    ----------
    sensitivity : array_like
        Per-person sensitivity of the released quantity.
    sigma : array_like
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    delta : array_like
        δ of the (ε, δ) guarantee, in (0, 1).
    """
    s = check_nonnegative(sensitivity, "sensitivity")
    sg = check_positive(sigma, "sigma")
    dl = check_probability(delta, "delta")
    return gaussian_pdp_epsilon(s, sigma=sg, delta=dl, form="sqrt_log")


def lambda_min_lower_bound(lambda_hat: ArrayLike, *, sigma: ArrayLike, rho: ArrayLike,
                           floor: float = 0.0) -> np.ndarray:
    r"""Lower confidence bound :math:`\max\{\text{floor}, \hat\lambda - \sigma\,\Phi^{-1}(1-\rho/2)\}`.

    Redberg & Wang (2021), Alg 4 (with ``floor`` = the regularization
    :math:`\lambda`): with probability :math:`\ge 1-\rho/2` over the noise of
    Alg 3 it is :math:`\le \lambda_{\min}(H)` (the source spends :math:`\rho/2` per
    side, Prop 12). A post-processing of the private release.

    Parameters
    ----------
    sigma : array_like
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    rho : array_like
        Failure probability ρ of the high-probability bound, in (0, 1).
    lambda_hat : array_like
        The private release of λ_min(H) (Alg 3).
    floor : float, default 0.0
        Value below which the bound is not lowered (Alg 4 uses the regularization λ, a certain lower bound).
    """
    lh = as_finite_array(lambda_hat, "lambda_hat")
    sg = check_positive(sigma, "sigma")
    r = check_probability(rho, "rho")
    fl = float(as_finite_array(floor, "floor"))
    return np.maximum(fl, lh - sg * special.ndtri(1.0 - r / 2.0))


def weyl_bound(H_x: ArrayLike) -> np.ndarray:
    r"""Weyl's bound :math:`\max_k|\lambda_k(H + H_x) - \lambda_k(H)| \le \|H_x\|_2`.

    Returns the spectral norm :math:`\|H_x\|_2` (vectorized over a stack) — the
    per-instance sensitivity of every eigenvalue, in particular of
    :math:`\lambda_{\min}` (Redberg & Wang 2021, proof of Thm 11). For a rank-one
    GLM term :math:`H_x = f''\,xx^\top` it equals :math:`f''\|x\|^2`.

    Parameters
    ----------
    H_x : array_like
        One person's term H_x of the Hessian, shape (d, d), or a stack of them (..., d, d).
    """
    H_x = _check_symmetric(H_x, "H_x")
    ev = np.linalg.eigvalsh(H_x)
    return np.max(np.abs(ev), axis=-1)


