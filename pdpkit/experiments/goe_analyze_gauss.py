r"""Monte Carlo checks of the chapter "GOE noise and Analyze-Gauss".

* :func:`noise_comparison` — Redberg & Wang 2021, App. D ("Improvements over Analyze
  Gauss"): the classic Analyze-Gauss noise and the GOE noise of Alg 6, calibrated to the
  same :math:`(\epsilon, \delta)`-DP, by simulation (entry variances, Frobenius energy and
  spectral-norm quantiles).
* :func:`lambda1_moments` — mean and standard deviation of the largest eigenvalue of the
  standard GOE by simulation, to set beside the exact law of Chiani (2014, Thm 2)
  (:func:`pdpkit.goe.goe_lambda1_mean_std`).
* :func:`norm_exceedance` — the frequency of :math:`\|G\|_2 > \tau` for GOE noise, to set
  beside the exact :func:`pdpkit.goe.goe_norm_sf` (Lemma 20's coverage; the source's
  :math:`\tau \approx 12`).
* :func:`breast_cancer_hessian` and :func:`lambda_min_coverage` — the Hessian of a private
  logistic fit on the breast-cancer data and the coverage of the lower confidence value
  for :math:`\lambda_{\min}` released by Alg 3 (App. C.1).

The matrices are simulated in batches of at most ``batch`` draws (1000 by default, 20 MB
at :math:`d = 50`), so that memory stays bounded at :math:`10^5` draws; each batch
continues the generator's stream where the previous one stopped, so the results do not
depend on the batch size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_generator, check_int_at_least, check_positive, check_probability
from ..analyze_gauss import analyze_gauss, analyze_gauss_sigma, lambda_min_lower_bound, private_lambda_min
from ..datasets import normalize_rows
from ..goe import goe_matrix, goe_norm_isf, goe_norm_sf
from ..losses import logistic
from ..objpert import objpert_fit

__all__ = [
    "NoiseComparison",
    "noise_comparison",
    "Lambda1Moments",
    "lambda1_moments",
    "NormExceedance",
    "norm_exceedance",
    "breast_cancer_hessian",
    "LambdaMinCoverage",
    "lambda_min_coverage",
]


def _batches(n_draws: int, batch: int) -> list[int]:
    return [min(batch, n_draws - s) for s in range(0, n_draws, batch)]


def _goe_norms(d: int, n_draws: int, batch: int, gen: np.random.Generator) -> np.ndarray:
    return np.concatenate([np.abs(np.linalg.eigvalsh(goe_matrix(d, size=m, rng=gen))).max(axis=1)
                           for m in _batches(n_draws, batch)])


@dataclass(frozen=True)
class NoiseComparison:
    """Classic and GOE Analyze-Gauss noise at equal DP, simulated.

    Attributes
    ----------
    d, n_draws : int
        Matrix size and number of simulated matrices of each kind.
    sigma_classic, sigma_goe : float
        Noise scales of the classic (upper-triangle) and the GOE mechanism.
    diag_var_goe, offdiag_var_goe : float
        Sample variances of the GOE noise's entry (0, 0) and entry (0, 1).
    frob2_goe_mean : float
        Mean of :math:`\\|E\\|_F^2` over the GOE draws.
    median_norm_classic, q99_norm_classic : float
        Median and 0.99 quantile of the classic noise's spectral norm.
    median_norm_goe, q99_norm_goe : float
        The same for the GOE noise (simulated).
    median_norm_goe_exact, q99_norm_goe_exact : float
        The same for the GOE noise from its exact law (:func:`pdpkit.goe.goe_norm_isf`).
    """

    d: int
    n_draws: int
    sigma_classic: float
    sigma_goe: float
    diag_var_goe: float
    offdiag_var_goe: float
    frob2_goe_mean: float
    median_norm_classic: float
    q99_norm_classic: float
    median_norm_goe: float
    q99_norm_goe: float
    median_norm_goe_exact: float
    q99_norm_goe_exact: float


def noise_comparison(d: int, *, eps: float, delta: float, beta: float, n_draws: int,
                     rng: int | np.random.Generator | None = None, batch: int = 1000) -> NoiseComparison:
    r"""Simulate the classic and the GOE Analyze-Gauss noise calibrated to the same DP.

    Both mechanisms are calibrated by :func:`pdpkit.analyze_gauss.analyze_gauss_sigma`
    to :math:`(\epsilon, \delta)`-DP for :math:`\|H_x\|_F \le \beta` (Redberg & Wang 2021,
    Thm 17); the GOE scale is :math:`\sigma_{\text{classic}}/\sqrt 2`.

    Parameters
    ----------
    d : int
        Matrix size, at least 2.
    eps : float
        Target :math:`\epsilon > 0`.
    delta : float
        Target :math:`\delta \in (0, 1)`.
    beta : float
        Bound :math:`\beta > 0` on :math:`\|H_x\|_F`.
    n_draws : int
        Matrices simulated of each kind (at least 2).
    rng : int, numpy.random.Generator or None
        Seed or generator.
    batch : int
        Largest number of matrices drawn at once.
    """
    d = check_int_at_least(d, "d", 2)
    n_draws = check_int_at_least(n_draws, "n_draws", 2)
    batch = check_int_at_least(batch, "batch", 1)
    check_positive(eps, "eps")
    check_probability(delta, "delta")
    check_positive(beta, "beta")
    gen = as_generator(rng)
    s_up = float(analyze_gauss_sigma(eps, delta, beta=beta, variant="upper"))
    s_goe = float(analyze_gauss_sigma(eps, delta, beta=beta, variant="goe"))
    zero = np.zeros((d, d))
    norm_up = np.abs(np.linalg.eigvalsh(np.stack(
        [analyze_gauss(zero, sigma=s_up, variant="upper", rng=gen) for _ in range(n_draws)]))).max(axis=1)
    e00, e01, frob2, norm_goe = [], [], [], []
    for m in _batches(n_draws, batch):
        E = goe_matrix(d, sigma=s_goe, size=m, rng=gen)
        e00.append(E[:, 0, 0])
        e01.append(E[:, 0, 1])
        frob2.append((E**2).sum(axis=(1, 2)))
        norm_goe.append(np.abs(np.linalg.eigvalsh(E)).max(axis=1))
    norm_goe_all = np.concatenate(norm_goe)
    return NoiseComparison(
        d=d, n_draws=n_draws, sigma_classic=s_up, sigma_goe=s_goe,
        diag_var_goe=float(np.concatenate(e00).var()), offdiag_var_goe=float(np.concatenate(e01).var()),
        frob2_goe_mean=float(np.concatenate(frob2).mean()),
        median_norm_classic=float(np.median(norm_up)), q99_norm_classic=float(np.quantile(norm_up, 0.99)),
        median_norm_goe=float(np.median(norm_goe_all)), q99_norm_goe=float(np.quantile(norm_goe_all, 0.99)),
        median_norm_goe_exact=s_goe * float(goe_norm_isf(0.5, d=d)),
        q99_norm_goe_exact=s_goe * float(goe_norm_isf(0.01, d=d)))


@dataclass(frozen=True)
class Lambda1Moments:
    """Simulated moments of the largest eigenvalue of the standard GOE.

    Attributes
    ----------
    dims : tuple of int
        Matrix sizes.
    n_draws : int
        Matrices simulated per size.
    mean, sd, se_mean : numpy.ndarray
        Sample mean, sample standard deviation and standard error of the mean of
        :math:`\\lambda_1`, one per size.
    samples : tuple of numpy.ndarray
        The simulated :math:`\\lambda_1`, one array per size (for empirical CDFs).
    """

    dims: tuple[int, ...]
    n_draws: int
    mean: np.ndarray
    sd: np.ndarray
    se_mean: np.ndarray
    samples: tuple[np.ndarray, ...]


def lambda1_moments(dims: Sequence[int], *, n_draws: int, rng: int | np.random.Generator | None = None,
                    batch: int = 1000) -> Lambda1Moments:
    r"""Simulate :math:`\lambda_1` of the standard GOE :math:`(Z + Z^\top)/\sqrt2` for each size.

    Parameters
    ----------
    dims : sequence of int
        Matrix sizes, each at least 1.
    n_draws : int
        Matrices simulated per size (at least 2).
    rng : int, numpy.random.Generator or None
        Seed or generator (one stream, the sizes in order).
    batch : int
        Largest number of matrices drawn at once.
    """
    dims = tuple(check_int_at_least(d, "dims", 1) for d in dims)
    n_draws = check_int_at_least(n_draws, "n_draws", 2)
    batch = check_int_at_least(batch, "batch", 1)
    gen = as_generator(rng)
    samples = tuple(np.concatenate([np.linalg.eigvalsh(goe_matrix(d, size=m, rng=gen))[:, -1]
                                    for m in _batches(n_draws, batch)]) for d in dims)
    mean = np.array([s.mean() for s in samples])
    sd = np.array([s.std() for s in samples])
    return Lambda1Moments(dims=dims, n_draws=n_draws, mean=mean, sd=sd, se_mean=sd / math.sqrt(n_draws),
                          samples=samples)


@dataclass(frozen=True)
class NormExceedance:
    """How often the spectral norm of GOE noise exceeds a threshold: simulated and exact.

    Attributes
    ----------
    d, n_draws : int
        Matrix size and number of simulated matrices.
    threshold : float
        The threshold :math:`\\tau` (standard GOE, :math:`\\sigma = 1`).
    exceedances : int
        Number of draws with :math:`\\|G\\|_2 > \\tau`.
    fraction : float
        ``exceedances / n_draws``.
    p_exact : float
        :math:`P(\\|G\\|_2 > \\tau)` from the exact law (:func:`pdpkit.goe.goe_norm_sf`).
    se : float
        Binomial standard error of ``fraction`` at ``p_exact``.
    """

    d: int
    n_draws: int
    threshold: float
    exceedances: int
    fraction: float
    p_exact: float
    se: float


def norm_exceedance(d: int, *, threshold: float, n_draws: int, rng: int | np.random.Generator | None = None,
                    batch: int = 1000) -> NormExceedance:
    r"""Simulate :math:`P(\|G\|_2 > \tau)` for the standard GOE and compare with the exact law.

    Parameters
    ----------
    d : int
        Matrix size, at least 1.
    threshold : float
        :math:`\tau > 0`.
    n_draws : int
        Matrices simulated (at least 1).
    rng : int, numpy.random.Generator or None
        Seed or generator.
    batch : int
        Largest number of matrices drawn at once.
    """
    d = check_int_at_least(d, "d", 1)
    threshold = float(check_positive(threshold, "threshold"))
    n_draws = check_int_at_least(n_draws, "n_draws", 1)
    batch = check_int_at_least(batch, "batch", 1)
    norms = _goe_norms(d, n_draws, batch, as_generator(rng))
    k = int(np.sum(norms > threshold))
    p = float(goe_norm_sf(threshold, d=d))
    return NormExceedance(d=d, n_draws=n_draws, threshold=threshold, exceedances=k, fraction=k / n_draws,
                          p_exact=p, se=math.sqrt(p * (1 - p) / n_draws))


def breast_cancer_hessian(*, lam: float = 1.0, sigma: float = 1.0,
                          rng: int | np.random.Generator | None = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The non-private Hessian of a private logistic fit on the breast-cancer data.

    The 569 tumours' 30 features are standardized and each row scaled to unit norm;
    :func:`pdpkit.objpert.objpert_fit` fits logistic regression by objective perturbation
    and the Hessian :math:`H = \sum_i f''(x_i^\top\theta^P)x_ix_i^\top + \lambda I`
    is evaluated at the released :math:`\theta^P` (Redberg & Wang 2021, App. C–D).
    :math:`H` is a function of the data and is not private.

    Parameters
    ----------
    lam : float
        Regularization :math:`\lambda > 0`.
    sigma : float
        ObjPert's noise scale :math:`\sigma > 0`.
    rng : int, numpy.random.Generator or None
        Seed or generator of ObjPert's noise.

    Returns
    -------
    (H, X, fpp)
        The Hessian, the normalized features and the curvatures :math:`f''(x_i^\top\theta^P)`.
    """
    from sklearn.datasets import load_breast_cancer

    lam = float(check_positive(lam, "lam"))
    bc = load_breast_cancer()
    y = np.where(bc.target == 1, 1.0, -1.0)
    X = normalize_rows((bc.data - bc.data.mean(axis=0)) / bc.data.std(axis=0))
    fit = objpert_fit(X, y, "logistic", lam=lam, sigma=sigma, rng=as_generator(rng))
    fpp = logistic.d2(X @ fit.theta, y)
    H = (X * fpp[:, None]).T @ X + lam * np.eye(X.shape[1])
    return H, X, fpp


@dataclass(frozen=True)
class LambdaMinCoverage:
    """Coverage of the lower confidence value for :math:`\\lambda_{\\min}(H)` (Alg 3), simulated.

    Attributes
    ----------
    n_draws : int
        Number of simulated releases.
    sigma, rho : float
        Noise scale of the release and the confidence parameter.
    misses : int
        Releases whose lower value exceeds :math:`\\lambda_{\\min}(H)`.
    miss_rate : float
        ``misses / n_draws`` (the target is :math:`\\rho/2`).
    se : float
        Binomial standard error of ``miss_rate`` at :math:`\\rho/2`.
    first_release, first_lower : float
        The first simulated release and its lower value (an example).
    """

    n_draws: int
    sigma: float
    rho: float
    misses: int
    miss_rate: float
    se: float
    first_release: float
    first_lower: float


def lambda_min_coverage(H: ArrayLike, *, sigma: float, rho: float, floor: float, n_draws: int,
                        rng: int | np.random.Generator | None = None) -> LambdaMinCoverage:
    r"""Simulate the release of :math:`\lambda_{\min}(H)` (Redberg & Wang 2021, Alg 3) and the
    coverage of :func:`pdpkit.analyze_gauss.lambda_min_lower_bound`.

    Parameters
    ----------
    H : array_like
        Symmetric positive definite matrix.
    sigma : float
        Noise scale :math:`\sigma_4 > 0` of the release.
    rho : float
        Confidence parameter in (0, 1): the lower value fails with probability
        :math:`\le \rho/2`.
    floor : float
        The known lower bound :math:`\lambda` on :math:`\lambda_{\min}(H)`.
    n_draws : int
        Number of simulated releases (at least 1).
    rng : int, numpy.random.Generator or None
        Seed or generator.
    """
    H = np.asarray(H, dtype=float)
    check_probability(rho, "rho")
    n_draws = check_int_at_least(n_draws, "n_draws", 1)
    gen = as_generator(rng)
    lam_min = float(np.linalg.eigvalsh(H)[0])
    lam_hat = np.array([private_lambda_min(H, sigma=sigma, rng=gen) for _ in range(n_draws)])
    lower = lambda_min_lower_bound(lam_hat, sigma=sigma, rho=rho, floor=floor)
    k = int(np.sum(lower > lam_min))
    return LambdaMinCoverage(n_draws=n_draws, sigma=float(sigma), rho=float(rho), misses=k,
                             miss_rate=k / n_draws, se=math.sqrt(rho / 2 * (1 - rho / 2) / n_draws),
                             first_release=float(lam_hat[0]), first_lower=float(lower[0]))
