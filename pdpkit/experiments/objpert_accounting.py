r"""Experiments of the chapter "RDP and privacy profiles of objective perturbation".

* :func:`epsilon_delta_curves` — Redberg, Koskela & Wang 2023, Figure 1: the
  :math:`(\epsilon, \delta)` curves of Thm 2.8 (Kifer et al.), of Thm 3.2 converted by
  :func:`pdpkit.accounting.rdp_to_epsilon`, of the privacy profile (Thm 3.1) and of the
  Gaussian lower bound (Lemma 3.4).
* :func:`composition_curves` — Figure 4: :math:`\epsilon` at a fixed :math:`\delta` after
  :math:`k` compositions, from composed RDP and from the composed privacy-loss
  distribution (eq. D.11).

Both are deterministic (no randomness): a finer grid only adds points to the curves.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_finite_array, check_int_at_least, check_positive, check_probability
from ..accounting import objpert_epsilon, objpert_pld, objpert_rdp, rdp_to_epsilon
from ..gaussian import gaussian_epsilon
from ..objpert import objpert_epsilon_classic

__all__ = ["EpsilonDeltaCurves", "epsilon_delta_curves", "CompositionCurves", "composition_curves"]


@dataclass(frozen=True)
class EpsilonDeltaCurves:
    """The :math:`\\epsilon(\\delta)` curves of one parameter setting (Figure 1).

    Attributes
    ----------
    deltas : numpy.ndarray
        The grid of :math:`\\delta`.
    kifer, rdp, profile, gaussian : numpy.ndarray
        :math:`\\epsilon` at each :math:`\\delta` from Thm 2.8, from Thm 3.2 converted,
        from the privacy profile (Thm 3.1) and from the Gaussian lower bound.
    """

    deltas: np.ndarray
    kifer: np.ndarray
    rdp: np.ndarray
    profile: np.ndarray
    gaussian: np.ndarray


def epsilon_delta_curves(deltas: ArrayLike, *, L: float, beta: float, lam: float, sigma: float,
                         orders: ArrayLike) -> EpsilonDeltaCurves:
    r"""The four :math:`(\epsilon, \delta)` curves of Redberg, Koskela & Wang 2023, Figure 1.

    Parameters
    ----------
    deltas : array_like
        Values of :math:`\delta \in (0, 1)`.
    L : float
        Bound :math:`L > 0` on the gradient norm.
    beta : float
        Bound :math:`\beta \ge 0` on :math:`f''\|x\|^2`.
    lam : float
        Regularization :math:`\lambda > \beta` (Thm 2.8 needs it).
    sigma : float
        Noise scale :math:`\sigma > 0`.
    orders : array_like
        Rényi orders :math:`\alpha > 1` over which the RDP bound is converted.
    """
    deltas = as_finite_array(deltas, "deltas").ravel()
    check_probability(deltas, "deltas")
    orders = as_finite_array(orders, "orders").ravel()
    check_positive(L, "L")
    check_positive(sigma, "sigma")
    rdp = objpert_rdp(orders, L=L, beta=beta, lam=lam, sigma=sigma)
    return EpsilonDeltaCurves(
        deltas=deltas,
        kifer=np.array([objpert_epsilon_classic(d, L=L, beta=beta, lam=lam, sigma=sigma) for d in deltas],
                       dtype=float),
        rdp=np.array([rdp_to_epsilon(orders, rdp, delta=d)[0] for d in deltas], dtype=float),
        profile=np.asarray(objpert_epsilon(deltas, L=L, beta=beta, lam=lam, sigma=sigma), dtype=float),
        gaussian=np.asarray(gaussian_epsilon(deltas, sensitivity=L, sigma=sigma), dtype=float))


@dataclass(frozen=True)
class CompositionCurves:
    """:math:`\\epsilon` at a fixed :math:`\\delta` after :math:`k` compositions (Figure 4).

    Attributes
    ----------
    ks : tuple of int
        Numbers of compositions.
    delta : float
        The :math:`\\delta` at which :math:`\\epsilon` is read.
    rdp, pld : numpy.ndarray
        :math:`\\epsilon` from composed RDP (converted) and from the composed
        privacy-loss distribution, one per :math:`k`.
    """

    ks: tuple[int, ...]
    delta: float
    rdp: np.ndarray
    pld: np.ndarray


def composition_curves(ks: Sequence[int], *, L: float, beta: float, lam: float, sigma: float,
                       orders: ArrayLike, delta: float = 1e-5,
                       value_discretization_interval: float = 1e-3) -> CompositionCurves:
    r"""Compose ObjPert :math:`k` times: :math:`\epsilon(\delta)` from RDP and from the PLD.

    The RDP route multiplies :func:`pdpkit.accounting.objpert_rdp` by :math:`k` and converts
    with :func:`pdpkit.accounting.rdp_to_epsilon`; the PLD route self-composes
    :func:`pdpkit.accounting.objpert_pld` (Redberg, Koskela & Wang 2023, Lemma D.7, eq. D.11).

    Parameters
    ----------
    ks : sequence of int
        Numbers of compositions, each at least 1.
    L : float
        Bound :math:`L > 0` on the gradient norm.
    beta : float
        Bound :math:`\beta \ge 0` on :math:`f''\|x\|^2`.
    lam : float
        Regularization :math:`\lambda > 0`.
    sigma : float
        Noise scale :math:`\sigma > 0`.
    orders : array_like
        Rényi orders :math:`\alpha > 1` for the RDP route.
    delta : float
        The :math:`\delta \in (0, 1)` at which :math:`\epsilon` is read.
    value_discretization_interval : float
        Grid step of the privacy-loss distribution (pessimistic rounding).
    """
    ks = tuple(check_int_at_least(k, "ks", 1) for k in ks)
    delta = float(check_probability(delta, "delta"))
    orders = as_finite_array(orders, "orders").ravel()
    rdp = objpert_rdp(orders, L=L, beta=beta, lam=lam, sigma=sigma)
    pld = objpert_pld(L=L, beta=beta, lam=lam, sigma=sigma,
                      value_discretization_interval=value_discretization_interval)
    e_rdp, e_pld = [], []
    for k in ks:
        e_rdp.append(rdp_to_epsilon(orders, k * rdp, delta=delta)[0])
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            e_pld.append(pld.self_compose(k).get_epsilon_for_delta(delta))
    return CompositionCurves(ks=ks, delta=delta, rdp=np.array(e_rdp, dtype=float),
                             pld=np.array(e_pld, dtype=float))
