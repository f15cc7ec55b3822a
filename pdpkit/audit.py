r"""Statistical audits of claimed privacy profiles.

A mechanism :math:`M` claimed to be :math:`(\varepsilon, \delta(\varepsilon))`-DP must
satisfy, for every event S and neighbouring pair (D, D'),

.. math:: \Pr[M(D)\in S] - e^{\varepsilon}\Pr[M(D')\in S] \le \delta(\varepsilon).

An audit samples the mechanism on a (worst-case) neighbouring pair, fixes one event
:math:`S_\varepsilon` per ε of a grid **from the claimed parameters alone** (never from
the samples), and computes a lower confidence bound on the left-hand side,

.. math:: \delta_{\mathrm{lb}}(\varepsilon) = \underline{p}(S_\varepsilon) - e^{\varepsilon}\,\overline{q}(S_\varepsilon),

with Clopper–Pearson bounds (Clopper & Pearson 1934) at level α split by
Bonferroni over the grid and the two probabilities. If
:math:`\delta_{\mathrm{lb}}(\varepsilon) > \delta(\varepsilon)` for some ε, the claim is
refuted with confidence at least 1 − α (Jagielski et al. 2020; Ding et al. 2018).

The natural event, optimal for the pair by the Neyman–Pearson lemma, is
:math:`S_\varepsilon = \{o : L(o) > \varepsilon\}` with L the *claimed* privacy-loss
function :math:`\log p_D(o)/p_{D'}(o)`. For the Gaussian mechanism on the pair
(Δ, 0) in one dimension this is :math:`\{o > \Delta/2 + \varepsilon\sigma^2/\Delta\}`.
"""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from ._progress import progress_enabled
from ._validation import as_finite_array, as_generator, check_int_at_least, check_probability

__all__ = ["clopper_pearson", "AuditResult", "audit_delta_curve"]


def clopper_pearson(k: ArrayLike, n: ArrayLike, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Two-sided exact (Clopper–Pearson) confidence interval for a binomial proportion.

    Returns ``(lower, upper)`` with :math:`\Pr[p < \text{lower}] \le \alpha/2` and
    :math:`\Pr[p > \text{upper}] \le \alpha/2`: lower is the α/2 quantile of
    Beta(k, n − k + 1) (0 when k = 0), upper the 1 − α/2 quantile of Beta(k + 1, n − k)
    (1 when k = n). Vectorized over ``k`` and ``n``.

    Parameters
    ----------
    k : array_like
        Number of successes (a count, so positional).
    n : array_like
        Number of trials.
    alpha : float
        1 − confidence level of the Clopper–Pearson interval.
    """
    alpha = float(check_probability(alpha, "alpha"))
    k = np.asarray(k)
    n = np.asarray(n)
    if np.any(k < 0) or np.any(k > n) or np.any(n < 1):
        raise ValueError("clopper_pearson needs 0 <= k <= n and n >= 1")
    k = k.astype(float)
    n = n.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.where(k > 0, special.betaincinv(k, n - k + 1.0, alpha / 2.0), 0.0)
        upper = np.where(k < n, special.betaincinv(k + 1.0, n - k, 1.0 - alpha / 2.0), 1.0)
    return lower, upper


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_delta_curve`.

    Attributes
    ----------
    eps, claimed_delta, delta_lower : numpy.ndarray
        The grid, the claimed δ(ε) and the (1 − α)-confidence lower bound on the
        realized hockey-stick divergence for the fixed events.
    p_hat, q_hat : numpy.ndarray
        Empirical probabilities of the events under M(D) and M(D').
    n_samples : int
        Samples drawn on each side.
    alpha : float
        Family-wise error level of the whole audit.
    passed : bool
        True when no ε refutes the claim (``delta_lower <= claimed_delta`` everywhere).
    """

    eps: np.ndarray
    claimed_delta: np.ndarray
    delta_lower: np.ndarray
    p_hat: np.ndarray
    q_hat: np.ndarray
    n_samples: int
    alpha: float
    passed: bool

    @property
    def worst_margin(self) -> float:
        """max over the grid of ``delta_lower - claimed_delta`` (> 0 means refuted)."""
        return float(np.max(self.delta_lower - self.claimed_delta))

    def summary(self) -> str:
        """A one-line human-readable verdict."""
        verdict = "passed" if self.passed else "REFUTED"
        i = int(np.argmax(self.delta_lower - self.claimed_delta))
        return (f"audit {verdict}: {self.n_samples} samples per side, alpha={self.alpha:g}; "
                f"largest margin at eps={self.eps[i]:.4g}: delta_lb={self.delta_lower[i]:.4g} "
                f"vs claimed {self.claimed_delta[i]:.4g}")


def _count_exceedances(sampler: Callable[[int, np.random.Generator], np.ndarray],
                       statistic: Callable[[np.ndarray], np.ndarray], thresholds: np.ndarray,
                       n_samples: int, chunk: int, rng: np.random.Generator, bar: Any = None) -> np.ndarray:
    """Count, for each threshold, how many of ``n_samples`` statistics exceed it (chunked)."""
    order = np.argsort(thresholds)
    sorted_thr = thresholds[order]
    counts = np.zeros(thresholds.size, dtype=np.int64)
    remaining = n_samples
    while remaining > 0:
        m = min(chunk, remaining)
        stats = np.asarray(statistic(sampler(m, rng)), dtype=float).reshape(-1)
        if stats.size != m:
            raise ValueError(f"statistic must return one value per sample; got {stats.size} for {m} samples")
        if np.any(np.isnan(stats)):
            raise ValueError("statistic returned NaN")
        stats.sort()
        # number of stats strictly greater than each threshold
        counts[order] += m - np.searchsorted(stats, sorted_thr, side="right")
        remaining -= m
        if bar is not None:
            bar.update(m)
    return counts


def audit_delta_curve(
    sample_d: Callable[[int, np.random.Generator], np.ndarray],
    sample_d_prime: Callable[[int, np.random.Generator], np.ndarray],
    statistic: Callable[[np.ndarray], np.ndarray],
    thresholds: ArrayLike,
    eps: ArrayLike,
    claimed_delta: ArrayLike,
    *,
    n_samples: int = 10**6,
    alpha: float = 0.05,
    chunk: int = 2**17,
    rng: np.random.Generator | None = None,
    progress: bool | None = None,
) -> AuditResult:
    r"""Audit a claimed privacy profile δ(ε) on one neighbouring pair.

    Parameters
    ----------
    sample_d, sample_d_prime : callable
        ``sample(m, rng)`` returns m independent outputs of M(D) (resp. M(D')),
        stacked along the first axis.
    statistic : callable
        Maps a batch of outputs to one float each. The event for ``eps[k]`` is
        :math:`S_k = \{\text{statistic}(o) > \text{thresholds}[k]\}`.
    thresholds : array_like
        Fixed in advance from the *claimed* parameters (e.g. statistic = claimed
        privacy loss and thresholds = eps) — never tuned on the samples.
    eps, claimed_delta : array_like
        The grid and the claimed δ(ε) on it (same length as ``thresholds``).
    n_samples : int
        Samples per side (the same samples serve every ε: the events are fixed, and
        Bonferroni covers the 2·len(eps) confidence statements).
    alpha : float
        Family-wise error level: a correct claim is refuted with probability ≤ α.
    chunk : int
        Samples drawn per batch (bounds memory).
    rng : int, numpy.random.Generator or None
        Source of randomness (``None``: fresh OS entropy).
    progress : bool or None
        A tqdm bar over the 2·``n_samples`` draws (``None``: only when a person watches,
        ``PDPKIT_PROGRESS=0`` turns it off).

    Returns
    -------
    AuditResult
    """
    eps = np.atleast_1d(as_finite_array(eps, "eps"))
    thresholds = np.atleast_1d(as_finite_array(thresholds, "thresholds"))
    claimed_delta = np.atleast_1d(as_finite_array(claimed_delta, "claimed_delta"))
    if not (eps.shape == thresholds.shape == claimed_delta.shape) or eps.ndim != 1:
        raise ValueError("eps, thresholds and claimed_delta must be 1-d arrays of the same length; got "
                         f"{eps.shape}, {thresholds.shape}, {claimed_delta.shape}")
    n_samples = check_int_at_least(n_samples, "n_samples", 1)
    chunk = check_int_at_least(chunk, "chunk", 1)
    alpha = float(check_probability(alpha, "alpha"))
    rng = as_generator(rng)

    bar = None
    if progress_enabled(progress):
        try:
            from tqdm.auto import tqdm

            bar = tqdm(total=2 * n_samples, desc="audit", unit="sample")
        except ImportError:  # pragma: no cover
            bar = None
    try:
        k_p = _count_exceedances(sample_d, statistic, thresholds, n_samples, chunk, rng, bar)
        k_q = _count_exceedances(sample_d_prime, statistic, thresholds, n_samples, chunk, rng, bar)
    finally:
        if bar is not None:
            bar.close()
    # 2·K one-sided statements, each at level alpha/(2K): two-sided CP at level alpha/K.
    level = alpha / eps.size
    p_lower, _ = clopper_pearson(k_p, n_samples, level)
    _, q_upper = clopper_pearson(k_q, n_samples, level)
    delta_lower = p_lower - np.exp(eps) * q_upper
    passed = bool(np.all(delta_lower <= claimed_delta))
    return AuditResult(eps=eps, claimed_delta=claimed_delta, delta_lower=delta_lower,
                       p_hat=k_p / n_samples, q_hat=k_q / n_samples, n_samples=n_samples,
                       alpha=alpha, passed=passed)
