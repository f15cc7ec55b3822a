r"""Experiments of the chapter "Approximate minima perturbation".

* :func:`dpsgd_rdp_curve` — the RDP curve of DP-SGD (Poisson-subsampled Gaussian,
  composed) from dp_accounting, for the source's Figure 5.
* :func:`compare_amp_dpsgd` — Figure 2 and Tables 1–2 of Redberg, Koskela & Wang (2023):
  test accuracy of Alg 1 against DP-SGD whose learning rate is tuned dishonestly (best of
  a grid, tuning not paid for) or honestly (a Poisson number of random candidates, paid
  for by repeat-and-select), at the same (ε, δ).
* :func:`honest_dpsgd` — honest DP-SGD alone, with each reading of its set-up (how the K
  candidates are drawn, the accountant's orders, the number of steps, the batch size), to
  find what moves its accuracy.

Both only compute; the chapter plots. Choosing the best run on the test set is the
source's protocol for all three methods.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .._progress import progress as _progress
from .._validation import as_generator, check_int_at_least
from ..amp import amp_calibrate, amp_fit, dpsgd_fit, dpsgd_noise_multiplier, poisson_select_mean
from ..losses import logistic
from ..objpert import erm_fit_nonprivate

__all__ = ["dpsgd_rdp_curve", "AMPComparison", "compare_amp_dpsgd", "compare_at_sizes", "HonestRun", "honest_dpsgd",
           "with_bias"]


def dpsgd_rdp_curve(orders: Sequence[float], *, sample_rate: float, noise_multiplier: float,
                    steps: int) -> np.ndarray:
    """RDP ε(α) of ``steps`` Poisson-subsampled Gaussian steps, by dp_accounting's RDP accountant.

    Parameters
    ----------
    orders : Sequence[float]
        Rényi orders α > 1 at which the RDP curve is given or evaluated.
    sample_rate : float
        Poisson subsampling rate q of DP-SGD.
    noise_multiplier : float
        Noise multiplier of DP-SGD (noise standard deviation over the clipping norm).
    steps : int
        Number of DP-SGD steps.
    """
    from absl import logging as absl_logging
    from dp_accounting.rdp.rdp_privacy_accountant import _compute_rdp_poisson_subsampled_gaussian

    verbosity = absl_logging.get_verbosity()
    absl_logging.set_verbosity(absl_logging.ERROR)  # fractional orders near 1 may not converge
    try:
        rdp = _compute_rdp_poisson_subsampled_gaussian(sample_rate, noise_multiplier, np.asarray(orders, float))
    finally:
        absl_logging.set_verbosity(verbosity)
    return steps * np.asarray(rdp, dtype=float)


def with_bias(X: np.ndarray) -> np.ndarray:
    """Rows scaled to unit norm, then a constant 1 appended: every row has norm √2 (the source's recipe).

    Parameters
    ----------
    X : numpy.ndarray
        Feature rows, shape (n, d).
    """
    X = np.asarray(X, dtype=float)
    nrm = np.linalg.norm(X, axis=1, keepdims=True)
    return np.hstack([X / np.where(nrm > 0, nrm, 1.0), np.ones((X.shape[0], 1))])


@dataclass(frozen=True)
class AMPComparison:
    """Test accuracies, shape (len(epsilons), trials), of the three methods, and the settings.

    Attributes
    ----------
    epsilons : numpy.ndarray
        The values of ε.
    acc_dishonest : numpy.ndarray
        Test accuracy of DP-SGD that does not pay for its tuning, shape (len(epsilons), trials).
    acc_honest : numpy.ndarray
        Test accuracy of DP-SGD that pays for its tuning (repeat and select).
    acc_amp : numpy.ndarray
        Test accuracy of Alg 1.
    acc_nonprivate : float
        Test accuracy of the non-private logistic regression.
    noise_dishonest : numpy.ndarray
        Noise multiplier of dishonest DP-SGD at each ε.
    noise_honest : numpy.ndarray
        Noise multiplier of honest DP-SGD at each ε.
    amp_lambda : numpy.ndarray
        λ of Alg 1 at each ε.
    amp_sigma : numpy.ndarray
        σ of Alg 1 at each ε.
    select_mean : float
        Mean μ of the Poisson number of tuning runs.
    """

    epsilons: np.ndarray
    acc_dishonest: np.ndarray
    acc_honest: np.ndarray
    acc_amp: np.ndarray
    acc_nonprivate: float
    noise_dishonest: np.ndarray
    noise_honest: np.ndarray
    amp_lambda: np.ndarray
    amp_sigma: np.ndarray
    select_mean: float


def _accuracy(theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(np.where(X @ theta >= 0, 1.0, -1.0) == y))


def compare_amp_dpsgd(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
                      epsilons: Sequence[float], *, delta: float = 1e-5, trials: int = 2,
                      lr_grid: Sequence[float] = tuple(np.logspace(-8, -1, 10)), epochs: int = 60,
                      batch_size: int = 256, tau: float = 0.01, sigma_out: float = 0.15, f: float = 1.3,
                      rng=None, calibration_cache: dict | None = None,
                      progress: bool | None = None) -> AMPComparison:
    r"""Figure 2 / Tables 1–2: Alg 1 vs dishonest and honest DP-SGD at each ε.

    Rows must have norm √2 (:func:`with_bias`), so the logistic loss has
    :math:`C = \sqrt2`, :math:`\beta = 1/2`. DP-SGD: expected batch ``batch_size``, ``epochs``
    passes, clipping norm C; dishonest: the best of the whole ``lr_grid`` with the noise of a
    single run; honest: a Poisson(μ) number of uniformly drawn learning rates with
    :math:`P(K > |\text{grid}|) = 0.9`, noise calibrated for repeat-and-select. Alg 1:
    :func:`pdpkit.amp.amp_calibrate` (RDP accounting, σ = f·σ_Gauss) and
    :func:`pdpkit.amp.amp_fit`. ``calibration_cache`` (a dict) shares the noise calibrations
    between data sets of the same size. ``progress``: a tqdm bar over the (ε, trial) runs
    (``None``: only when a person watches, ``PDPKIT_PROGRESS=0`` turns it off).

    Parameters
    ----------
    epsilons : Sequence[float]
        The values of ε (nats) to sweep.
    delta : float, default 1e-05
        δ of the (ε, δ) guarantee, in (0, 1).
    tau : float, default 0.01
        Public gradient-norm tolerance τ of the solver (the output noise pays for it).
    sigma_out : float, default 0.15
        Standard deviation of the output noise added to the solver's point.
    f : float, default 1.3
        Factor by which σ exceeds the σ of the Gaussian mechanism with the same (ε, δ) (the source's rule is 1.3).
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    progress : bool, optional
        A tqdm progress bar (``None``: only when a person watches; ``PDPKIT_PROGRESS=0`` turns it off).
    X_train : numpy.ndarray
        Training rows, each of norm √2 (:func:`with_bias`).
    y_train : numpy.ndarray
        Training labels ±1.
    X_test : numpy.ndarray
        Test rows, each of norm √2.
    y_test : numpy.ndarray
        Test labels ±1.
    trials : int, default 2
        Independent trials per ε.
    lr_grid : Sequence[float], optional
        The learning rates DP-SGD's tuning chooses from.
    epochs : int, default 60
        Passes of DP-SGD over the data.
    batch_size : int, default 256
        Expected batch size of DP-SGD.
    calibration_cache : dict, optional
        A dict that keeps the calibrations between calls (``None``: none): keyed by
        ``(eps, delta, q, steps)`` (q = ``min(1, batch_size / n)``, steps =
        ``ceil(epochs / q)``), valued ``(noise_dishonest, noise_honest, (lambda, sigma))``;
        an entry already there is used as it is.
    """
    gen = as_generator(rng)
    n = X_train.shape[0]
    C, beta = math.sqrt(2.0), 0.5
    q = min(1.0, batch_size / n)
    steps = math.ceil(epochs / q)
    mu = poisson_select_mean(len(lr_grid), prob=0.9)
    cache = {} if calibration_cache is None else calibration_cache
    eps_arr = np.asarray(epsilons, dtype=float)
    shape = (eps_arr.size, trials)
    acc_d, acc_h, acc_a = np.empty(shape), np.empty(shape), np.empty(shape)
    nm_d, nm_h, lam_a, sig_a = (np.empty(eps_arr.size) for _ in range(4))
    bar = _progress(range(eps_arr.size * trials), total=eps_arr.size * trials, desc="AMP vs DP-SGD",
                    progress=progress)
    ticks = iter(bar)
    for i, eps in enumerate(eps_arr):
        key = (float(eps), float(delta), q, steps)
        if key not in cache:
            cache[key] = (dpsgd_noise_multiplier(eps, delta, sample_rate=q, steps=steps),
                          dpsgd_noise_multiplier(eps, delta, sample_rate=q, steps=steps, select_mean=mu),
                          amp_calibrate(eps, delta, C=C, beta=beta, sigma_out=sigma_out, tau=tau, f=f))
        nm_d[i], nm_h[i], (lam_a[i], sig_a[i]) = cache[key]
        for j in range(trials):
            next(ticks, None)
            dishonest = [dpsgd_fit(X_train, y_train, logistic, noise_multiplier=nm_d[i], clip=C, sample_rate=q,
                                   steps=steps, lr=lr, rng=gen) for lr in lr_grid]
            acc_d[i, j] = max(_accuracy(th, X_test, y_test) for th in dishonest)
            k = int(gen.poisson(mu))
            lrs = gen.choice(np.asarray(lr_grid), size=max(k, 1))
            honest = [dpsgd_fit(X_train, y_train, logistic, noise_multiplier=nm_h[i], clip=C, sample_rate=q,
                                steps=steps, lr=float(lr), rng=gen) for lr in lrs]
            acc_h[i, j] = max(_accuracy(th, X_test, y_test) for th in honest) if k > 0 else 0.5
            res = amp_fit(X_train, y_train, logistic, lam=lam_a[i], sigma=sig_a[i], sigma_out=sigma_out,
                          tau=tau, clip=C, rng=gen, norm_bound=math.sqrt(2.0))
            acc_a[i, j] = _accuracy(res.theta, X_test, y_test)
    next(ticks, None)  # closes the bar
    theta_np = erm_fit_nonprivate(X_train, y_train, logistic, lam=1e-3)
    return AMPComparison(epsilons=eps_arr, acc_dishonest=acc_d, acc_honest=acc_h, acc_amp=acc_a,
                         acc_nonprivate=_accuracy(theta_np, X_test, y_test), noise_dishonest=nm_d,
                         noise_honest=nm_h, amp_lambda=lam_a, amp_sigma=sig_a, select_mean=mu)


def compare_at_sizes(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
                     sizes: Sequence[int], eps: float, *, rng=None, **settings) -> dict[int, AMPComparison]:
    r""":func:`compare_amp_dpsgd` at one ε on the first ``n`` training rows, for each ``n`` in ``sizes``.

    The test rows and every other setting stay fixed, so the comparison isolates the
    training-set size: Alg 1's λ and σ do not depend on n (the calibration is data-free),
    so its perturbation :math:`b/n` and regularization :math:`\lambda/n` shrink like
    :math:`1/n`, while DP-SGD's noise multiplier depends on n through the sampling rate.

    Parameters
    ----------
    X_train : numpy.ndarray
        Training rows, each of norm √2 (:func:`with_bias`), in a random order.
    y_train : numpy.ndarray
        Training labels ±1.
    X_test : numpy.ndarray
        Test rows, each of norm √2.
    y_test : numpy.ndarray
        Test labels ±1.
    sizes : Sequence[int]
        Training-set sizes n (each at most the number of training rows).
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    **settings
        Passed on to :func:`compare_amp_dpsgd` (``trials``, ``epochs``, ``sigma_out``, ...).
    """
    gen = as_generator(rng)
    out = {}
    for n in sizes:
        n = int(n)
        if not 1 <= n <= X_train.shape[0]:
            raise ValueError(f"every size must lie in [1, {X_train.shape[0]}]; got {n}")
        out[n] = compare_amp_dpsgd(X_train[:n], y_train[:n], X_test, y_test, [eps], rng=gen, **settings)
    return out


@dataclass(frozen=True)
class HonestRun:
    """Test accuracies of honest DP-SGD, one per trial, and the settings that produced them.

    Attributes
    ----------
    accuracy : numpy.ndarray
        Test accuracy of the selected run in each trial, shape (trials,).
    n_candidates : numpy.ndarray
        The number K of candidate runs of each trial (Poisson), shape (trials,).
    noise_multiplier : float
        The noise multiplier every run used.
    select_mean : float
        Mean μ of the Poisson number of runs.
    sample_rate : float
        Poisson sampling rate q = batch / n.
    steps : int
        Steps of each run.
    """

    accuracy: np.ndarray
    n_candidates: np.ndarray
    noise_multiplier: float
    select_mean: float
    sample_rate: float
    steps: int


def honest_dpsgd(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray, eps: float, *,
                 candidates: Literal["with-replacement", "distinct", "log-spaced"] = "with-replacement",
                 lr_grid: Sequence[float] = tuple(np.logspace(-8, -1, 10)), select_mean: float | None = None,
                 delta: float = 1e-5, epochs: int = 60, batch_size: int = 256, steps: int | None = None,
                 orders: Sequence[float] | None = None, trials: int = 10, rng=None) -> HonestRun:
    r"""Honest DP-SGD of Redberg, Koskela & Wang (2023, §5 and Table 5) under one reading of its set-up.

    Each trial draws :math:`K \sim \mathrm{Poisson}(\mu)`, trains K DP-SGD runs (Adam,
    :func:`pdpkit.amp.dpsgd_fit`, clipping :math:`\sqrt2`) with the noise multiplier that makes
    the repeat-and-select release (ε, δ)-DP (Papernot & Steinke 2022, Thm 6, through
    :func:`pdpkit.amp.dpsgd_noise_multiplier`) and keeps the run of best test accuracy (the
    source's protocol). ``candidates`` is how the K learning rates are chosen:

    * ``"with-replacement"`` — K uniform draws from ``lr_grid`` (what :func:`compare_amp_dpsgd` does);
    * ``"distinct"`` — :math:`\min(K, |\text{grid}|)` distinct points of ``lr_grid``;
    * ``"log-spaced"`` — K points log-spaced over ``lr_grid``'s range (RKW §5: the grid's
      "granularity determined by" K).

    Parameters
    ----------
    X_train : numpy.ndarray
        Training rows, each of norm √2 (:func:`with_bias`).
    y_train : numpy.ndarray
        Training labels ±1.
    X_test : numpy.ndarray
        Test rows, each of norm √2.
    y_test : numpy.ndarray
        Test labels ±1.
    eps : float
        ε of the (ε, δ) guarantee of the whole tuning, in nats.
    candidates : {"with-replacement", "distinct", "log-spaced"}, default "with-replacement"
        How the K learning rates are chosen (above).
    lr_grid : Sequence[float], optional
        The learning rates (or, for ``"log-spaced"``, their range), default 10 points log-spaced in [1e-8, 1e-1].
    select_mean : float, optional
        Mean μ of K (``None``: :math:`P(K > |\text{grid}|) = 0.9`, μ = 15.41 for 10 points).
    delta : float, default 1e-05
        δ of the (ε, δ) guarantee, in (0, 1).
    epochs : int, default 60
        Passes over the data: steps = ⌈epochs / q⌉ unless ``steps`` is given.
    batch_size : int, default 256
        Expected batch size of DP-SGD (q = batch_size / n).
    steps : int, optional
        Steps of each run (``None``: ⌈epochs / q⌉).
    orders : Sequence[float], optional
        Rényi orders of the accountant (``None``: dp_accounting's defaults).
    trials : int, default 10
        Independent trials.
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    """
    if candidates not in ("with-replacement", "distinct", "log-spaced"):
        raise ValueError("candidates must be 'with-replacement', 'distinct' or 'log-spaced'; "
                         f"got {candidates!r}")
    gen = as_generator(rng)
    grid = np.asarray(lr_grid, dtype=float)
    if grid.ndim != 1 or grid.size < 1 or not np.all(np.isfinite(grid) & (grid > 0)):
        raise ValueError("lr_grid must be a non-empty sequence of positive learning rates")
    trials = check_int_at_least(trials, "trials", 1)
    n = X_train.shape[0]
    C = math.sqrt(2.0)
    q = min(1.0, check_int_at_least(batch_size, "batch_size", 1) / n)
    T = math.ceil(check_int_at_least(epochs, "epochs", 1) / q) if steps is None else \
        check_int_at_least(steps, "steps", 1)
    mu = poisson_select_mean(grid.size, prob=0.9) if select_mean is None else float(select_mean)
    nm = dpsgd_noise_multiplier(eps, delta, sample_rate=q, steps=T, select_mean=mu, orders=orders)
    acc = np.empty(trials)
    ks = np.empty(trials, dtype=int)
    for j in range(trials):
        k = int(gen.poisson(mu))
        ks[j] = k
        if k == 0:  # no run: nothing better than a coin
            acc[j] = 0.5
            continue
        if candidates == "with-replacement":
            lrs = gen.choice(grid, size=k)
        elif candidates == "distinct":
            lrs = gen.choice(grid, size=min(k, grid.size), replace=False)
        else:
            lrs = np.logspace(math.log10(grid.min()), math.log10(grid.max()), k)
        acc[j] = max(_accuracy(dpsgd_fit(X_train, y_train, logistic, noise_multiplier=nm, clip=C, sample_rate=q,
                                         steps=T, lr=float(lr), rng=gen), X_test, y_test) for lr in lrs)
    return HonestRun(accuracy=acc, n_candidates=ks, noise_multiplier=float(nm), select_mean=mu, sample_rate=q,
                     steps=T)
