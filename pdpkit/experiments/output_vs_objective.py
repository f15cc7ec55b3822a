r"""Experiments of the chapter "Output vs objective perturbation".

* :func:`accuracy_vs_epsilon` — output perturbation against ObjPert at the same
  :math:`(\epsilon, \delta)` (the lecture notes' comparison, on data).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._progress import progress as _progress
from .._validation import as_finite_array, as_generator, check_int_at_least, check_probability
from ..losses import GLMLoss, get_loss
from ..objpert import (
    objpert_sigma_classic,
    erm_fit_nonprivate,
    objpert_fit,
)
from ..output_perturbation import output_perturbation_fit


__all__ = ["AccuracyVsEpsilon", "accuracy_vs_epsilon"]


def _loss(loss: Any) -> GLMLoss:
    return get_loss(loss)


# ===================================================== output vs objective perturbation
@dataclass(frozen=True)
class AccuracyVsEpsilon:
    r"""Test accuracy of output perturbation and ObjPert at the same :math:`(\epsilon, \delta)`.

    Accuracy arrays have shape ``(len(epsilons), len(lams), n_seeds)``; NaN marks a
    :math:`(\epsilon, \lambda)` at which the classic ObjPert accounting cannot reach
    :math:`\epsilon` (Thm 2.8 needs :math:`\lambda \ge 2\beta/\epsilon`).

    Attributes
    ----------
    epsilons, lams : numpy.ndarray
        The privacy levels and regularizations tried.
    delta : float
    acc_output : numpy.ndarray
        Output perturbation (:func:`pdpkit.output_perturbation.output_perturbation_fit`).
    acc_objpert : numpy.ndarray
        ObjPert with :math:`\sigma` from :func:`pdpkit.objpert.objpert_sigma_classic`.
    acc_nonprivate : numpy.ndarray, shape (len(lams),)
        The non-private regularized ERM minimizer.
    sigma_output, sigma_objpert : numpy.ndarray, shape (len(epsilons), len(lams))
        The noise scales used (NaN where infeasible).
    objpert_form : str
        The classic accounting used for ObjPert.
    """

    epsilons: np.ndarray
    lams: np.ndarray
    delta: float
    acc_output: np.ndarray
    acc_objpert: np.ndarray
    acc_nonprivate: np.ndarray
    sigma_output: np.ndarray
    sigma_objpert: np.ndarray
    objpert_form: str

    def best(self, method: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r"""Per :math:`\epsilon`, the :math:`\lambda` with the highest mean accuracy.

        The choice uses the test accuracy, i.e. it is **non-private** tuning (an
        oracle), applied in the same way to both methods.

        Parameters
        ----------
        method : {"output", "objpert"}

        Returns
        -------
        (lam, mean, std) : tuple of numpy.ndarray, each of shape (len(epsilons),)
            The chosen :math:`\lambda`, and the mean and standard deviation of the
            accuracy over the seeds at that :math:`\lambda` (NaN where no
            :math:`\lambda` is feasible).
        """
        if method not in ("output", "objpert"):
            raise ValueError(f"method must be 'output' or 'objpert'; got {method!r}")
        acc = self.acc_output if method == "output" else self.acc_objpert
        mean = np.full(acc.shape[:2], -np.inf)
        ok = ~np.isnan(acc).any(axis=2)
        mean[ok] = acc[ok].mean(axis=1)
        idx = np.argmax(mean, axis=1)
        rows = np.arange(acc.shape[0])
        chosen = acc[rows, idx]
        none = ~ok.any(axis=1)  # no feasible lambda at this epsilon
        lam = np.where(none, np.nan, self.lams[idx])
        return lam, np.where(none, np.nan, chosen.mean(axis=1)), np.where(none, np.nan, chosen.std(axis=1))


def _accuracy(theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Accuracy of sign(X theta) against labels y in {-1, +1}; theta may be (k, d)."""
    pred = np.where(X @ np.atleast_2d(theta).T >= 0.0, 1.0, -1.0)
    return np.mean(pred == y[:, None], axis=0)


def _output_noise(seed: int, sigma: float, d: int) -> np.ndarray:
    """The noise :func:`pdpkit.output_perturbation.output_perturbation_fit` draws with ``rng=default_rng(seed)``."""
    return np.random.default_rng(seed).normal(0.0, sigma, size=d)


def accuracy_vs_epsilon(X_train: Any, y_train: Any, X_test: Any, y_test: Any, epsilons: Sequence[float],
                        *, lams: Sequence[float], delta: float = 1e-5, n_seeds: int = 10,
                        loss: str | GLMLoss = "logistic", objpert_form: str = "kifer",
                        rng: np.random.Generator | None = None, progress: bool | None = None) -> AccuracyVsEpsilon:
    r"""Test accuracy of output perturbation vs ObjPert at equal :math:`(\epsilon, \delta)`, over :math:`\lambda`.

    For every :math:`\epsilon`, :math:`\lambda` and seed: output perturbation releases
    the regularized ERM minimizer plus Gaussian noise calibrated by the analytic Gaussian
    mechanism to the sensitivity :math:`L/\lambda` (lecture notes on objective
    perturbation, corrected); ObjPert uses the smallest :math:`\sigma` with which the
    classic accounting (``objpert_form``; Redberg, Koskela & Wang, Thm 2.8 by default)
    certifies :math:`(\epsilon, \delta)`-DP. Both need rows with
    :math:`\|x_i\|_2 \le 1` (checked) and labels :math:`\pm 1`; accuracy is that of
    :math:`\operatorname{sign}(x^\top\theta)` on the test set. Seed :math:`s` uses the same
    standard-normal draws for every :math:`(\epsilon, \lambda)` (common random numbers), so
    the curves are smooth in :math:`\epsilon` and :math:`\lambda`.

    The minimizer that output perturbation perturbs depends on neither :math:`\epsilon` nor
    the seed: :func:`~pdpkit.output_perturbation.output_perturbation_fit` runs once per
    :math:`(\epsilon, \lambda)` (it gives seed 0's release and :math:`\sigma`), and seed
    :math:`s`'s release is that minimizer plus seed :math:`s`'s draw of
    :math:`\mathcal N(0, \sigma^2 I)` — ``output_perturbation_fit`` with seed :math:`s`, up to
    the rounding of the minimizer recovered from seed 0's release.

    Parameters
    ----------
    X_train, y_train, X_test, y_test : array_like
        Rows of norm at most 1; labels in :math:`\{-1, +1\}`.
    epsilons : sequence of float
        Privacy levels (> 0).
    lams : sequence of float
        Regularizations (> 0) to try for both methods.
    delta : float, default 1e-5
    n_seeds : int, default 10
    loss : str or GLMLoss, default "logistic"
        A loss with a bounded gradient.
    objpert_form : {"kifer", "lecture"}
    rng : numpy.random.Generator, optional
        Seeds the per-seed noise streams.
    progress : bool, optional
        A tqdm progress bar (``None``: only when a person watches; ``PDPKIT_PROGRESS=0`` turns it off).

    Returns
    -------
    AccuracyVsEpsilon
    """
    loss = _loss(loss)
    Xtr = as_finite_array(X_train, "X_train", ndim=2)
    Xte = as_finite_array(X_test, "X_test", ndim=2)
    ytr = loss.check_labels(y_train)
    yte = as_finite_array(y_test, "y_test", ndim=1)
    if not np.all(np.abs(yte) == 1.0):
        raise ValueError("y_test must contain only the labels -1 and +1")
    if Xte.shape[1] != Xtr.shape[1] or Xte.shape[0] != yte.shape[0]:
        raise ValueError(f"X_test must have shape (len(y_test), {Xtr.shape[1]}); got {Xte.shape}")
    eps_arr = as_finite_array(list(epsilons), "epsilons", ndim=1)
    lam_arr = as_finite_array(list(lams), "lams", ndim=1)
    if eps_arr.size == 0 or np.any(eps_arr <= 0):
        raise ValueError("epsilons must be a non-empty sequence of positive numbers")
    if lam_arr.size == 0 or np.any(lam_arr <= 0):
        raise ValueError("lams must be a non-empty sequence of positive numbers")
    delta = float(check_probability(delta, "delta"))
    n_seeds = check_int_at_least(n_seeds, "n_seeds", 1)
    seeds = as_generator(rng).integers(0, 2**63 - 1, size=(n_seeds, 2))
    k, m, d = eps_arr.size, lam_arr.size, Xtr.shape[1]
    acc_out = np.full((k, m, n_seeds), np.nan)
    acc_obj = np.full((k, m, n_seeds), np.nan)
    sig_out = np.full((k, m), np.nan)
    sig_obj = np.full((k, m), np.nan)
    acc_np = np.empty(m)
    for j, lam in _progress(list(enumerate(lam_arr)), total=m, desc="accuracy vs epsilon", progress=progress):
        acc_np[j] = _accuracy(erm_fit_nonprivate(Xtr, ytr, loss, lam=lam), Xte, yte)[0]
        for i, eps in enumerate(eps_arr):
            # seed 0's release; every seed's is the same minimizer plus its own N(0, sigma^2 I)
            first = output_perturbation_fit(Xtr, ytr, loss, eps, delta, lam=lam,
                                            rng=np.random.default_rng(seeds[0, 0]))
            sig_out[i, j] = first.sigma
            theta_hat = first.theta - _output_noise(seeds[0, 0], first.sigma, d)
            thetas = [first.theta] + [theta_hat + _output_noise(seeds[s, 0], first.sigma, d)
                                      for s in range(1, n_seeds)]
            acc_out[i, j] = _accuracy(np.array(thetas), Xte, yte)
            try:
                sigma = objpert_sigma_classic(eps, delta, L=loss.lipschitz, beta=loss.smoothness, lam=lam,
                                              form=objpert_form)
            except ValueError:
                continue  # lam too small for this eps under the classic accounting
            sig_obj[i, j] = sigma
            thetas = [objpert_fit(Xtr, ytr, loss, lam=lam, sigma=sigma, rng=np.random.default_rng(seeds[s, 1]),
                                  norm_bound=1.0).theta_released
                      for s in range(n_seeds)]
            acc_obj[i, j] = _accuracy(np.array(thetas), Xte, yte)
    return AccuracyVsEpsilon(epsilons=eps_arr, lams=lam_arr, delta=delta, acc_output=acc_out, acc_objpert=acc_obj,
                             acc_nonprivate=acc_np, sigma_output=sig_out, sigma_objpert=sig_obj,
                             objpert_form=objpert_form)


