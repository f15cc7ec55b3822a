r"""Mechanism events: frozen descriptions of what a release did, each with its own privacy analysis.

An *event* says, in public parameters only, which mechanism ran on the data — exactly what
its privacy analysis needs and nothing else (the spirit of dp_accounting's ``DpEvent``:
"each event should completely document the mathematical behavior … so that the writer of an
accountant can implement the accounting correctly"). Neighbouring data sets differ by
adding or removing one record. Every event knows, in one place,

* its **Rényi DP** curve (:meth:`PrivacyEvent.rdp`; ``None`` where no bound is available),
* its **privacy-loss distribution** (:meth:`PrivacyEvent.pld`: dp_accounting's pessimistic
  PLD on the grid :data:`PLD_INTERVAL`; ``None`` where none is available),
* its **Gaussian part** (:meth:`PrivacyEvent.split`): a Gaussian mechanism of parameter
  :math:`\mu = \Delta/s` composes exactly with any other (their :math:`\mu^2` add; Dong, Roth &
  Su 2022, Cor 3.3), so an event hands its Gaussian part to the accountant separately,
* and, where one exists, the **exact** ε of its non-Gaussian part composed with a Gaussian
  (:meth:`PrivacyEvent.epsilon_with_gaussian`; for ObjPert the quadrature of
  :func:`pdpkit.accounting.objpert_output_epsilon`).

:class:`pdpkit.accountant.PrivacyAccountant` composes events by these capabilities, never by
their names: adding a mechanism is one subclass of :class:`PrivacyEvent` (with a ``kind``,
``params`` and its curves). The events pdpkit releases:

* :class:`GaussianEvent`: a Gaussian mechanism of parameter μ (a statistic, a report);
* :class:`LaplaceEvent`: a Laplace mechanism (noise multiplier b/Δ);
* :class:`ObjPertEvent`: one ObjPert fit with its output noise (Redberg, Koskela & Wang
  2023, Thm 3.1 as corrected and Thm 3.2);
* :class:`RepeatAndSelectEvent`: private selection over ObjPert candidates (Papernot &
  Steinke 2022, Thm 2 and 6);
* :class:`PoissonSampledEvent`: a Gaussian or Laplace mechanism on a Poisson subsample;
* :class:`SelfComposedEvent`: one event repeated ``count`` times on the same records;
* :class:`ComposedEvent`: several events on the same records.

:func:`report_event` is what a privacy report releases (a Gaussian mechanism over its noisy
statistics, :mod:`pdpkit.report`). :func:`from_dp_event` reads dp_accounting's events
(Gaussian, Laplace, Poisson-sampled, self-composed, composed); :meth:`PrivacyEvent.dp_event`
writes one back, ObjPert and selection as a :class:`PdpkitDpEvent` that carries its PLD and RDP.

:class:`Guarantee` and :class:`GuaranteePart` — an (ε, δ) statement with its parts — live here
too: every release states one.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import attr
import numpy as np
from dp_accounting import dp_event as _dpe
from numpy.typing import ArrayLike
from scipy import special

from ._display import fmt_up as _up
from ._validation import check_int_at_least, check_json_keys, check_mu, check_repetition_law, finite_scalar
from ._validation import strict_delta as _delta
from ._validation import strict_real as _real
from .accounting import objpert_output_epsilon, objpert_pld, objpert_rdp

__all__ = [
    "PLD_INTERVAL",
    "RDP_ORDERS",
    "SELECTION_ORDERS",
    "SELECTION_FORMAT",
    "UnsupportedEventError",
    "PrivacyEvent",
    "GaussianEvent",
    "LaplaceEvent",
    "ObjPertEvent",
    "RepeatAndSelectEvent",
    "PoissonSampledEvent",
    "SelfComposedEvent",
    "ComposedEvent",
    "PdpkitDpEvent",
    "event_from_dict",
    "from_dp_event",
    "report_event",
    "repetitions_gamma",
    "GuaranteePart",
    "Guarantee",
]

#: Grid step (nats) of every privacy-loss distribution pdpkit composes (pessimistic rounding).
PLD_INTERVAL = 1e-4

#: The Rényi orders used wherever a ledger is composed in RDP.
RDP_ORDERS: tuple[float, ...] = tuple(
    [1.0 + x for x in (0.01, 0.05, 0.1, 0.25, 0.5, 0.75)]
    + [float(x) for x in np.concatenate([np.arange(2.0, 16.0, 0.5), np.arange(16.0, 64.0, 2.0),
                                         [64.0, 80.0, 96.0, 128.0, 192.0, 256.0, 512.0, 1024.0]])])

#: The orders at which a selection's base run is evaluated for the selection theorems (the
#: :math:`\hat\lambda` of Thm 2 and the conversion's orders of Thm 6): 1 and 1 + 10^(-3..4).
SELECTION_ORDERS: np.ndarray = np.concatenate([[1.0], 1.0 + np.geomspace(1e-3, 1e4, 199)])

#: The format tag of a selection's parameters (:meth:`RepeatAndSelectEvent.params`).
SELECTION_FORMAT = "pdpkit-selection/1"


class UnsupportedEventError(ValueError):
    """An event pdpkit cannot account (no valid analysis under add/remove-one neighbours): refused, nothing charged."""


# ------------------------------------------------------------------ strict numbers
def _pld_quiet(build: Any) -> Any:
    with warnings.catch_warnings():  # scipy's logsumexp warns on exact zeros inside dp_accounting
        warnings.simplefilter("ignore", RuntimeWarning)
        return build()


@functools.lru_cache(maxsize=256)
def _gaussian_pld(mu: float, sampling_prob: float = 1.0) -> Any:
    from dp_accounting.pld import privacy_loss_distribution as pld_mod

    return _pld_quiet(lambda: pld_mod.from_gaussian_mechanism(
        1.0 / mu, sensitivity=1.0, pessimistic_estimate=True, value_discretization_interval=PLD_INTERVAL,
        sampling_prob=sampling_prob))


@functools.lru_cache(maxsize=256)
def _laplace_pld(noise_multiplier: float, sampling_prob: float = 1.0) -> Any:
    from dp_accounting.pld import privacy_loss_distribution as pld_mod

    return _pld_quiet(lambda: pld_mod.from_laplace_mechanism(
        noise_multiplier, sensitivity=1.0, pessimistic_estimate=True, value_discretization_interval=PLD_INTERVAL,
        sampling_prob=sampling_prob))


@functools.lru_cache(maxsize=256)
def _objpert_pld(L: float, beta: float, lam: float, sigma: float) -> Any:
    return _pld_quiet(lambda: objpert_pld(L=L, beta=beta, lam=lam, sigma=sigma, sharp=True,
                                          value_discretization_interval=PLD_INTERVAL))


# ------------------------------------------------------------------ the event
class PrivacyEvent:
    r"""One mechanism run on the data, described by its public parameters; frozen.

    A subclass sets ``kind`` (its name in a ledger file) and is a frozen dataclass; it
    implements :meth:`params` (JSON-ready) and :meth:`from_params` (strict), and at least one
    of :meth:`rdp` and :meth:`pld`. Optional: :meth:`split` (a Gaussian part the accountant
    composes exactly), :meth:`epsilon_with_gaussian` (an exact ε with a Gaussian) and
    :meth:`dp_event`. Defining the subclass registers its ``kind``: a ledger that names it is
    read back (:func:`event_from_dict`) and charged like any other.
    """

    kind: ClassVar[str] = ""
    #: The accounting label of :meth:`epsilon_with_gaussian` (one such event and Gaussians).
    exact_accounting: ClassVar[str] = ""
    #: Extra Rényi orders this event's RDP needs on top of :data:`RDP_ORDERS`.
    extra_orders: ClassVar[tuple[float, ...]] = ()
    _registry: ClassVar[dict[str, type[PrivacyEvent]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if kind:
            if kind in PrivacyEvent._registry and PrivacyEvent._registry[kind].__qualname__ != cls.__qualname__:
                raise TypeError(f"an event of kind {kind!r} is registered already "
                                f"({PrivacyEvent._registry[kind].__qualname__})")
            PrivacyEvent._registry[kind] = cls

    # --- what every event provides
    def params(self) -> dict[str, Any]:
        """The public parameters, JSON-ready (what a ledger file stores beside ``kind``)."""
        raise NotImplementedError

    @classmethod
    def from_params(cls, params: Any, where: str = "event") -> PrivacyEvent:
        """Inverse of :meth:`params`, strict (unknown or missing fields are a ``ValueError`` naming ``where``).

        Parameters
        ----------
        params : dict
            As :meth:`params` writes it.
        where : str
            Where the parameters were read from (for messages).
        """
        raise NotImplementedError

    def rdp(self, orders: ArrayLike) -> np.ndarray | None:
        """The event's Rényi DP at ``orders`` (> 1); ``None`` if it has no RDP bound.

        Parameters
        ----------
        orders : array_like
            Rényi orders.
        """
        return None

    def pld(self) -> Any:
        """The event's pessimistic dp_accounting ``PrivacyLossDistribution`` on :data:`PLD_INTERVAL`, or ``None``."""
        return None

    def split(self) -> tuple[PrivacyEvent | None, float]:
        r"""(the non-Gaussian part or ``None``, the Gaussian part's :math:`\mu^2`): this event is their composition."""
        return self, 0.0

    def epsilon_with_gaussian(self, delta: float, *, mu: float) -> float | None:
        """The exact ε at ``delta`` of this (non-Gaussian) event composed with a Gaussian of parameter ``mu``, or ``None``.

        Parameters
        ----------
        delta : float
            The δ.
        mu : float
            The Gaussian's parameter (>= 0).
        """
        return None

    def dp_event(self) -> Any:
        """This event as a dp_accounting ``DpEvent`` (:class:`PdpkitDpEvent` where dp_accounting has none)."""
        return PdpkitDpEvent(kind=self.kind, params=_freeze(self.params()))

    # --- derived
    @property
    def has_pld(self) -> bool:
        """Whether :meth:`pld` gives a distribution (the class overrides it)."""
        return type(self).pld is not PrivacyEvent.pld

    @property
    def has_rdp(self) -> bool:
        """Whether :meth:`rdp` gives a curve (the class overrides it)."""
        return type(self).rdp is not PrivacyEvent.rdp

    def to_dict(self) -> dict[str, Any]:
        """``{"kind": …, "params": …}``, JSON-ready."""
        return {"kind": self.kind, "params": self.params()}

    @classmethod
    def from_dict(cls, data: Any, where: str = "event") -> PrivacyEvent:
        """Inverse of :meth:`to_dict` (:func:`event_from_dict`); on a subclass, an event of that kind only.

        Parameters
        ----------
        data : dict
            ``{"kind": …, "params": …}``.
        where : str
            Where it was read from (for messages).
        """
        event = event_from_dict(data, where)
        if not isinstance(event, cls):
            raise ValueError(f"{where}: a {cls.kind!r} event was expected; got kind {event.kind!r}")
        return event

    @property
    def key(self) -> tuple:
        """A hashable identity of the event's parameters (for caches and comparisons)."""
        return (self.kind, repr(_freeze(self.params())))


def _freeze(value: Any) -> Any:
    """A JSON value as nested tuples (hashable, for an attrs DpEvent field)."""
    if isinstance(value, dict):
        return tuple((k, _freeze(v)) for k, v in sorted(value.items()))
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, tuple):
        if value and all(isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str) for v in value):
            return {k: _thaw(v) for k, v in value}
        return [_thaw(v) for v in value]
    return value


def event_from_dict(data: Any, where: str = "event") -> PrivacyEvent:
    """The event a ``{"kind", "params"}`` dict describes (:meth:`PrivacyEvent.to_dict`), strictly.

    Parameters
    ----------
    data : dict
        ``{"kind": …, "params": …}``.
    where : str
        Where it was read from (for messages).
    """
    check_json_keys(data, where, required=("kind", "params"))
    return _event_of_kind(data["kind"], data["params"], where)


def _event_of_kind(kind: Any, params: Any, where: str) -> PrivacyEvent:
    cls = PrivacyEvent._registry.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"{where}: kind must be one of {sorted(PrivacyEvent._registry)}; got {kind!r}")
    return cls.from_params(params, f"{where}: params")


def _gauss_rdp(orders: ArrayLike, mu: float) -> np.ndarray:
    return np.asarray(orders, dtype=float) * mu * mu / 2.0


# ------------------------------------------------------------------ Gaussian
@dataclass(frozen=True)
class GaussianEvent(PrivacyEvent):
    r"""A Gaussian mechanism of parameter :math:`\mu = \Delta/s` (sensitivity over noise standard deviation).

    Several statistics released at once with μ_i are one Gaussian mechanism with
    :math:`\mu^2 = \sum_i\mu_i^2`. RDP :math:`\alpha\mu^2/2`; exact profile
    :func:`pdpkit.gaussian.gaussian_epsilon` (Balle & Wang 2018).

    Parameters
    ----------
    mu : float
        Sensitivity over noise standard deviation (>= 0; 0 releases nothing private).
    """

    kind: ClassVar[str] = "gaussian"
    mu: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", check_mu(_real(self.mu, "mu", allow_zero=True)))

    def params(self) -> dict[str, Any]:
        return {"mu": self.mu}

    @classmethod
    def from_params(cls, params: Any, where: str = "event") -> GaussianEvent:
        check_json_keys(params, where, required=("mu",))
        return cls(mu=_real(params["mu"], f"{where}: mu", allow_zero=True))

    def rdp(self, orders: ArrayLike) -> np.ndarray:
        return _gauss_rdp(orders, self.mu)

    def pld(self) -> Any:
        return None if self.mu == 0 else _gaussian_pld(self.mu)

    def split(self) -> tuple[PrivacyEvent | None, float]:
        return None, self.mu * self.mu

    def dp_event(self) -> Any:
        return _dpe.NoOpDpEvent() if self.mu == 0 else _dpe.GaussianDpEvent(noise_multiplier=1.0 / self.mu)


def report_event(*, L: float, beta: float, sigma_gradient: float | None, sigma_hessian: float | None,
                 sigma_lambda_min: float | None) -> GaussianEvent:
    r"""What a privacy report releases, as one Gaussian mechanism (:mod:`pdpkit.report`).

    The report's noisy statistics on rows of norm at most R, with the loss's constants
    L R and β R² passed as ``L`` and ``beta``: the gradient (sensitivity :math:`L`), the
    Hessian (Frobenius sensitivity :math:`\beta/\sqrt2` under the GOE noise of
    :mod:`pdpkit.analyze_gauss`) and the smallest eigenvalue (sensitivity :math:`\beta`), each
    with its noise scale (``None``: not released). Together a Gaussian mechanism with
    :math:`\mu^2 = \sum (\Delta_i/\sigma_i)^2`.

    Parameters
    ----------
    L, beta : float
        The loss's gradient and curvature bounds at the rows' norm bound.
    sigma_gradient, sigma_hessian, sigma_lambda_min : float or None
        The report's noise scales (``None`` for a statistic it does not release).
    """
    L = _real(L, "L")
    beta = _real(beta, "beta", allow_zero=True)
    table = ((L, sigma_gradient), (beta / math.sqrt(2.0), sigma_hessian), (beta, sigma_lambda_min))
    mu2 = sum((s / _real(sig, "sigma")) ** 2 for s, sig in table if sig is not None)
    return GaussianEvent(mu=math.sqrt(mu2))


# ------------------------------------------------------------------ Laplace
@dataclass(frozen=True)
class LaplaceEvent(PrivacyEvent):
    r"""A Laplace mechanism with noise multiplier :math:`b/\Delta` (scale over sensitivity): pure :math:`\Delta/b`-DP.

    RDP (Mironov 2017, Prop 6) with :math:`t = \Delta/b`:
    :math:`\frac{1}{\alpha-1}\log\big(\frac{\alpha}{2\alpha-1}e^{(\alpha-1)t} +
    \frac{\alpha-1}{2\alpha-1}e^{-\alpha t}\big)`; PLD by dp_accounting.

    Parameters
    ----------
    noise_multiplier : float
        The noise's scale b over the sensitivity Δ (> 0).
    """

    kind: ClassVar[str] = "laplace"
    noise_multiplier: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise_multiplier", _real(self.noise_multiplier, "noise_multiplier"))

    def params(self) -> dict[str, Any]:
        return {"noise_multiplier": self.noise_multiplier}

    @classmethod
    def from_params(cls, params: Any, where: str = "event") -> LaplaceEvent:
        check_json_keys(params, where, required=("noise_multiplier",))
        return cls(noise_multiplier=_real(params["noise_multiplier"], f"{where}: noise_multiplier"))

    def rdp(self, orders: ArrayLike) -> np.ndarray:
        al = np.asarray(orders, dtype=float)
        t = 1.0 / self.noise_multiplier
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(al > 1.0, al, 2.0)
            lse = special.logsumexp(np.stack([(a - 1.0) * t, -a * t]), axis=0,
                                    b=np.stack([a / (2.0 * a - 1.0), (a - 1.0) / (2.0 * a - 1.0)]))
            out = np.where(al > 1.0, lse / (a - 1.0), t + math.expm1(-t))  # order 1: the KL divergence
        return np.minimum(out, t)  # never above pure DP

    def pld(self) -> Any:
        return _laplace_pld(self.noise_multiplier)

    def dp_event(self) -> Any:
        return _dpe.LaplaceDpEvent(noise_multiplier=self.noise_multiplier)


# ------------------------------------------------------------------ ObjPert
_OBJPERT_KEYS = ("L", "beta", "lam", "sigma", "mu_out")


@dataclass(frozen=True)
class ObjPertEvent(PrivacyEvent):
    r"""One ObjPert fit followed by output noise: what :func:`pdpkit.objpert.objpert_fit` releases.

    Per-record constants ``L`` (gradient) and ``beta`` (curvature) at the fitted rows' norm
    bound, regularization ``lam``, objective noise ``sigma``, the sharp log-determinant
    constant; the released point carries a Gaussian of parameter ``mu_out`` (approximate
    minima perturbation; 0 for none). Its dominating pair is
    :func:`pdpkit.accounting.objpert_dominating_pair` (Redberg, Koskela & Wang 2023, Thm 3.1
    as corrected in :mod:`pdpkit.accounting`), its RDP
    :func:`pdpkit.accounting.objpert_rdp` (Thm 3.2) plus the output noise's
    :math:`\alpha\mu_{\rm out}^2/2`; with Gaussians alone it is composed exactly
    (:func:`pdpkit.accounting.objpert_output_epsilon`).

    Parameters
    ----------
    L, beta, lam, sigma : float
        ObjPert's public parameters (``beta`` >= 0, the others > 0).
    mu_out : float
        The output noise's parameter (>= 0).
    """

    kind: ClassVar[str] = "objpert"
    exact_accounting: ClassVar[str] = "objpert-profile+gaussians"
    L: float
    beta: float
    lam: float
    sigma: float
    mu_out: float = 0.0

    def __post_init__(self) -> None:
        for k in _OBJPERT_KEYS:
            object.__setattr__(self, k, _real(getattr(self, k), k, allow_zero=k in ("beta", "mu_out")))
        check_mu(self.mu_out)

    def params(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in _OBJPERT_KEYS}

    @classmethod
    def from_params(cls, params: Any, where: str = "event") -> ObjPertEvent:
        check_json_keys(params, where, required=_OBJPERT_KEYS)
        return cls(**{k: _real(params[k], f"{where}: {k}", allow_zero=k in ("beta", "mu_out"))
                      for k in _OBJPERT_KEYS})

    def _core_rdp(self, orders: np.ndarray) -> np.ndarray:
        return np.asarray(objpert_rdp(orders, L=self.L, beta=self.beta, lam=self.lam, sigma=self.sigma, sharp=True),
                          dtype=float)

    def rdp(self, orders: ArrayLike) -> np.ndarray:
        al = np.asarray(orders, dtype=float)
        return self._core_rdp(al) + _gauss_rdp(al, self.mu_out)

    def pld(self) -> Any:
        core = _objpert_pld(self.L, self.beta, self.lam, self.sigma)
        return core if self.mu_out == 0 else _pld_quiet(lambda: core.compose(_gaussian_pld(self.mu_out)))

    def split(self) -> tuple[PrivacyEvent | None, float]:
        if self.mu_out == 0:
            return self, 0.0
        return ObjPertEvent(L=self.L, beta=self.beta, lam=self.lam, sigma=self.sigma), self.mu_out ** 2

    def epsilon_with_gaussian(self, delta: float, *, mu: float) -> float:
        return float(objpert_output_epsilon(delta, L=self.L, beta=self.beta, lam=self.lam, sigma=self.sigma,
                                            mu=math.sqrt(mu * mu + self.mu_out ** 2), sharp=True))

    def dp_event(self) -> Any:
        core = PdpkitDpEvent(kind=self.kind, params=_freeze({**self.params(), "mu_out": 0.0}))
        if self.mu_out == 0:
            return core
        return _dpe.ComposedDpEvent(events=[core, _dpe.GaussianDpEvent(noise_multiplier=1.0 / self.mu_out)])


# ------------------------------------------------------------------ repeat and select
def repetitions_gamma(mean: float, *, shape: float) -> float:
    """γ of the truncated negative binomial law of the number of runs with this mean (Papernot & Steinke 2022, §2).

    dp_accounting's solver: the selection's bound uses the same γ.

    Parameters
    ----------
    mean : float
        The expected number of runs (> 1).
    shape : float
        The law's shape η >= 0 (finite).
    """
    from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc

    return float(rdp_acc._gamma_truncated_negative_binomial(shape, mean))


def _tnb_mean(gamma: float, shape: float) -> float:
    """E[K] of the truncated negative binomial law D_{shape, gamma} (Papernot & Steinke 2022, §2)."""
    if shape == 0.0:
        return (1.0 / gamma - 1.0) / math.log(1.0 / gamma)
    return shape * (1.0 - gamma) / (gamma * -math.expm1(shape * math.log(gamma)))


def _check_candidates(candidates: Any) -> tuple[tuple[float, float, float, float, float], ...]:
    if isinstance(candidates, (str, bytes)) or not isinstance(candidates, Sequence):
        raise TypeError("candidates must be a sequence of (L, beta, lam, sigma, mu_out) tuples")
    out = []
    for i, c in enumerate(candidates):
        if isinstance(c, ObjPertEvent):
            c = tuple(c.params()[k] for k in _OBJPERT_KEYS)
        if isinstance(c, (str, bytes)) or not isinstance(c, Sequence) or len(c) != 5:
            raise TypeError(f"candidates[{i}] must be a tuple (L, beta, lam, sigma, mu_out); got {c!r}")
        vals = tuple(finite_scalar(v, f"candidates[{i}].{n}") for v, n in zip(c, _OBJPERT_KEYS, strict=True))
        L, beta, lam, sigma, mu_out = vals
        for n, v in (("L", L), ("lam", lam), ("sigma", sigma)):
            if not v > 0:
                raise ValueError(f"candidates[{i}].{n} must be > 0; got {v!r}")
        for n, v in (("beta", beta), ("mu_out", mu_out)):
            if not v >= 0:
                raise ValueError(f"candidates[{i}].{n} must be >= 0; got {v!r}")
        check_mu(mu_out)
        out.append(vals)
    if not out:
        raise ValueError("candidates must hold at least one candidate")
    return tuple(out)


def _base_rdp(al: np.ndarray, cands: tuple, score_mu: float, count: int) -> np.ndarray:
    """The base run's RDP at orders ``al`` >= 1 (:mod:`pdpkit.selection`): max(log-mean-exp of the candidates, score)."""
    rho = np.array([count * (np.asarray(objpert_rdp(al, L=L, beta=beta, lam=lam, sigma=sigma, sharp=True))
                             + 0.5 * al * mu_out * mu_out)
                    for L, beta, lam, sigma, mu_out in cands])
    m = rho.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        am1 = al - 1.0
        lme = (special.logsumexp(am1 * rho, axis=0) - math.log(m)) / np.where(am1 > 0, am1, 1.0)
    train = np.where(am1 > 0, lme, rho.mean(axis=0))  # order 1 (KL): the mean
    train = np.maximum(train, rho.min(axis=0))  # guards rounding: a log-mean-exp is >= the minimum
    out = np.maximum(train, 0.5 * al * score_mu * score_mu)
    if not np.all(np.isfinite(out)):
        raise ValueError("the base run's RDP overflows: some candidate's L/sigma (or score_mu) is too large")
    return out


def _log_delta_min(orders: np.ndarray, rdp: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """dp_accounting's ``compute_delta`` (Canonne, Kamath & Steinke 2020, Prop 12, and the KL bound) at many ε at once.

    The same floating-point operations in the same order as dp_accounting's loop over the
    orders (the per-order logarithms by ``math``, the rest by IEEE arithmetic), so each value
    is the same bits; the loop's cost, one pass over the orders per ε, becomes one array
    expression. Returns min(δ(ε), 1) for each ε. Orders >= 1 and RDP >= 0 (the callers' curves).
    """
    a = [float(x) for x in orders]
    r = [float(x) for x in rdp]
    base = np.array([-np.inf if x <= 0 else 0.5 * math.log1p(-math.exp(-x)) for x in r])
    big = np.array([x > 1.01 for x in a])
    am1 = np.array([x - 1 for x in a])
    l1 = np.array([math.log1p(-1 / x) if b else 0.0 for x, b in zip(a, big, strict=True)])
    la = np.array([math.log(x) if b else 0.0 for x, b in zip(a, big, strict=True)])
    rr = np.array(r)
    with np.errstate(invalid="ignore"):
        bound = am1[:, None] * ((rr[:, None] - eps[None, :]) + l1[:, None]) - la[:, None]
    logd = np.where(big[:, None], np.minimum(base[:, None], bound), base[:, None])
    best = logd[np.argmin(logd, axis=0), np.arange(eps.size)]
    return np.array([min(math.exp(float(v)), 1.0) for v in best])


def _repeat_and_select_rdp(orders: np.ndarray, base: Any, mean: float, shape: float) -> np.ndarray:
    """Papernot & Steinke (2022) Thm 2/6 as dp_accounting evaluates them, on the union of ``orders`` and :data:`SELECTION_ORDERS`.

    The evaluation of dp_accounting's ``_compute_rdp_repeat_and_select`` (Poisson: Thm 6, with
    its ``compute_delta`` at ε̂ = log(1 + 1/(λ - 1)) for every order; truncated negative binomial:
    Thm 2 and monotonicity in the order), vectorized over the orders with the same operations
    in the same order: the same bits, without its quadratic Python loop
    (tests/test_selection.py pins every value to dp_accounting's and to an independent
    evaluation of the theorems).
    """
    from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc

    grid = np.union1d(orders, SELECTION_ORDERS)
    rdp = np.asarray(base(grid), dtype=float)
    if math.isnan(shape) or shape < 0:
        raise ValueError(f"shape must be >= 0; got {shape}")
    if math.isnan(mean) or mean < 1:
        raise ValueError(f"mean must be >= 1; got {mean}")
    above = grid > 1
    out = np.full(grid.shape, np.inf)
    log_mean = math.log(mean)
    if shape == np.inf:
        eps_hat = np.array([math.log1p(1 / (float(x) - 1)) for x in grid[above]])
        d_hat = _log_delta_min(grid, rdp, eps_hat)
        out[above] = rdp[above] + mean * d_hat + np.array([log_mean / (float(x) - 1) for x in grid[above]])
    else:
        gamma = rdp_acc._gamma_truncated_negative_binomial(shape, mean)  # noqa: SLF001 - dp_accounting's own gamma
        c = (1 + shape) * np.min((1 - 1 / grid) * rdp - math.log(gamma) / grid)
        out[above] = rdp[above] + np.array([log_mean / (float(x) - 1) for x in grid[above]]) + c
        out = np.minimum.accumulate(out[::-1])[::-1]  # monotonicity in the order (grid ascending)
        # dp_accounting's gamma is rounded down (a law with a mean above ``mean`` by up to 1e-9 relative), and
        # the sampler uses that law: pay log(its mean / mean)/(order - 1) on top (never below the theorem)
        excess = max(0.0, math.log(_tnb_mean(repetitions_gamma(mean, shape=shape), shape) / mean))
        with np.errstate(divide="ignore"):
            out = out + np.where(grid > 1.0, excess / np.where(grid > 1.0, grid - 1.0, 1.0), 0.0)
            # order 1 holds the bound of the larger orders (monotonicity): keep that with the margin
            out = np.minimum.accumulate(out[::-1])[::-1]
    return out[np.searchsorted(grid, orders)]


@dataclass(frozen=True)
class RepeatAndSelectEvent(PrivacyEvent):
    r"""Private selection over ObjPert candidates (repeat and select; Papernot & Steinke 2022, Thm 2 and 6).

    ``candidates`` are the grid's public settings ``(L, beta, lam, sigma, mu_out)``, each run
    training ``count`` ObjPert fits (sharp constant) with output noise ``mu_out`` each;
    ``score_mu`` is the score's Gaussian parameter (a count with sensitivity 1, noise of
    standard deviation ``1/score_mu``); ``mean`` and ``shape`` give the law of the number of
    runs (``shape = inf``: Poisson). The base run's RDP is the maximum of the candidates'
    log-mean-exp and the score's (:mod:`pdpkit.selection` proves it); the theorems are
    evaluated by dp_accounting. RDP only: no PLD.

    Parameters
    ----------
    candidates : tuple of tuple of float
        The candidates ``(L, beta, lam, sigma, mu_out)`` (or :class:`ObjPertEvent` objects).
    score_mu : float
        The score's Gaussian parameter (> 0).
    mean : float
        The expected number of runs.
    shape : float
        The law's shape: ``math.inf`` for Poisson, η >= 0 for the truncated negative binomial.
    count : int
        ObjPert fits per run on the same records (1 for a binary model).
    """

    kind: ClassVar[str] = "selection"
    extra_orders: ClassVar[tuple[float, ...]] = tuple(float(o) for o in SELECTION_ORDERS[SELECTION_ORDERS > 1.0])
    candidates: tuple[tuple[float, float, float, float, float], ...]
    score_mu: float
    mean: float
    shape: float
    count: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "candidates", _check_candidates(self.candidates))
        mu = finite_scalar(self.score_mu, "score_mu")
        if not mu > 0:
            raise ValueError(f"score_mu must be > 0; got {self.score_mu!r}")
        object.__setattr__(self, "score_mu", float(check_mu(mu)))
        m, s = check_repetition_law(self.mean, self.shape)
        object.__setattr__(self, "mean", m)
        object.__setattr__(self, "shape", s)
        object.__setattr__(self, "count", check_int_at_least(self.count, "count", 1))

    @property
    def candidate_events(self) -> tuple[ObjPertEvent, ...]:
        """The candidates as :class:`ObjPertEvent` objects."""
        return tuple(ObjPertEvent(*c) for c in self.candidates)

    def base_rdp(self, orders: ArrayLike) -> np.ndarray:
        """One run's RDP at ``orders`` >= 1: the maximum of the candidates' log-mean-exp and the score's.

        Parameters
        ----------
        orders : array_like
            Rényi orders >= 1.
        """
        return _base_rdp(np.asarray(orders, dtype=float), self.candidates, self.score_mu, self.count)

    def rdp(self, orders: ArrayLike) -> np.ndarray:
        o = np.atleast_1d(np.asarray(orders, dtype=float))
        return _repeat_and_select_rdp(o, lambda al: _base_rdp(al, self.candidates, self.score_mu, self.count),
                                      self.mean, self.shape)

    def params(self) -> dict[str, Any]:
        """JSON-ready (format :data:`SELECTION_FORMAT`; a Poisson law has no shape)."""
        law = ({"law": "poisson", "mean": self.mean} if math.isinf(self.shape)
               else {"law": "truncated-negative-binomial", "mean": self.mean, "shape": self.shape})
        return {"format": SELECTION_FORMAT,
                "candidates": [dict(zip(_OBJPERT_KEYS, c, strict=True)) for c in self.candidates],
                "score_mu": self.score_mu, "count": self.count, "repetitions": law}

    @classmethod
    def from_params(cls, params: Any, where: str = "selection") -> RepeatAndSelectEvent:
        if isinstance(params, RepeatAndSelectEvent):
            return params
        check_json_keys(params, where, required=("format", "candidates", "score_mu", "count", "repetitions"))
        if params["format"] != SELECTION_FORMAT:
            raise ValueError(f"{where}.format must be {SELECTION_FORMAT!r}; got {params['format']!r}")
        if not isinstance(params["candidates"], list):
            raise TypeError(f"{where}.candidates must be a list")
        cands = []
        for i, c in enumerate(params["candidates"]):
            check_json_keys(c, f"{where}.candidates[{i}]", required=_OBJPERT_KEYS)
            cands.append(tuple(c[k] for k in _OBJPERT_KEYS))
        law = params["repetitions"]
        if isinstance(law, dict) and law.get("law") == "poisson":
            check_json_keys(law, f"{where}.repetitions", required=("law", "mean"))
            shape = math.inf
        else:
            check_json_keys(law, f"{where}.repetitions", required=("law", "mean", "shape"))
            if law["law"] != "truncated-negative-binomial":
                raise ValueError(f"{where}.repetitions.law must be 'poisson' or 'truncated-negative-binomial'")
            shape = law["shape"]
        if isinstance(params["count"], bool) or not isinstance(params["count"], int):
            raise TypeError(f"{where}.count must be an integer")
        return cls(candidates=tuple(cands), score_mu=params["score_mu"], mean=law["mean"], shape=shape,
                   count=params["count"])

    def epsilon(self, delta: float) -> float:
        """The selection's ε at ``delta`` alone: its RDP over :data:`SELECTION_ORDERS`, converted (Canonne, Kamath & Steinke 2020).

        Parameters
        ----------
        delta : float
            The target δ in (0, 1).
        """
        from .accounting import rdp_to_epsilon

        o = SELECTION_ORDERS[1:]
        rdp = self.rdp(o)
        finite = np.isfinite(rdp)
        if not np.any(finite):
            raise ValueError("no finite RDP bound at any order: the candidates' noise is too small")
        return rdp_to_epsilon(o[finite], rdp[finite], delta=_delta(delta, "delta"))[0]


# ------------------------------------------------------------------ subsampling and composition
@dataclass(frozen=True)
class PoissonSampledEvent(PrivacyEvent):
    r"""A Gaussian or Laplace mechanism run on a Poisson subsample (each record kept with probability q).

    Under add/remove neighbours, dp_accounting's pessimistic PLD of the subsampled mechanism
    (Zhu, Dong & Wang 2022); RDP of the subsampled Gaussian by dp_accounting (Mironov, Talwar
    & Zhang 2019), none for a subsampled Laplace.

    Parameters
    ----------
    sampling_probability : float
        q in (0, 1].
    event : GaussianEvent or LaplaceEvent
        The mechanism run on the subsample.
    """

    kind: ClassVar[str] = "poisson-sampled"
    sampling_probability: float
    event: PrivacyEvent

    def __post_init__(self) -> None:
        q = _real(self.sampling_probability, "sampling_probability")
        if q > 1.0:
            raise ValueError(f"sampling_probability must lie in (0, 1]; got {q!r}")
        object.__setattr__(self, "sampling_probability", q)
        if not isinstance(self.event, (GaussianEvent, LaplaceEvent)):
            raise UnsupportedEventError(f"a Poisson-sampled {type(self.event).__name__} has no analysis here "
                                        "(only a Gaussian or Laplace mechanism)")

    def params(self) -> dict[str, Any]:
        return {"sampling_probability": self.sampling_probability, "event": self.event.to_dict()}

    @classmethod
    def from_params(cls, params: Any, where: str = "event") -> PoissonSampledEvent:
        check_json_keys(params, where, required=("sampling_probability", "event"))
        return cls(sampling_probability=_real(params["sampling_probability"], f"{where}: sampling_probability"),
                   event=event_from_dict(params["event"], f"{where}.event"))

    @property
    def has_rdp(self) -> bool:
        return isinstance(self.event, GaussianEvent)

    def rdp(self, orders: ArrayLike) -> np.ndarray | None:
        if not isinstance(self.event, GaussianEvent):
            return None
        if self.event.mu == 0:
            return np.zeros_like(np.asarray(orders, dtype=float))
        from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc

        o = np.asarray(orders, dtype=float)
        acc = rdp_acc.RdpAccountant(list(o))
        acc.compose(self.dp_event())
        return np.asarray(acc._rdp, dtype=float)  # noqa: SLF001 - dp_accounting's curve at our orders

    def pld(self) -> Any:
        q = self.sampling_probability
        if isinstance(self.event, GaussianEvent):
            return None if self.event.mu == 0 else _gaussian_pld(self.event.mu, q)
        return _laplace_pld(self.event.noise_multiplier, q)

    def dp_event(self) -> Any:
        return _dpe.PoissonSampledDpEvent(sampling_probability=self.sampling_probability, event=self.event.dp_event())


@dataclass(frozen=True)
class SelfComposedEvent(PrivacyEvent):
    """One event repeated ``count`` times on the same records (adaptively).

    Parameters
    ----------
    event : PrivacyEvent
        The repeated event.
    count : int
        How many times (>= 1).
    """

    kind: ClassVar[str] = "self-composed"
    event: PrivacyEvent
    count: int

    def __post_init__(self) -> None:
        if not isinstance(self.event, PrivacyEvent):
            raise TypeError(f"event must be a PrivacyEvent; got {type(self.event).__name__}")
        object.__setattr__(self, "count", check_int_at_least(self.count, "count", 1))

    def params(self) -> dict[str, Any]:
        return {"event": self.event.to_dict(), "count": self.count}

    @classmethod
    def from_params(cls, params: Any, where: str = "event") -> SelfComposedEvent:
        check_json_keys(params, where, required=("event", "count"))
        if isinstance(params["count"], bool) or not isinstance(params["count"], int):
            raise TypeError(f"{where}.count must be an integer")
        return cls(event=event_from_dict(params["event"], f"{where}.event"), count=params["count"])

    def dp_event(self) -> Any:
        return _dpe.SelfComposedDpEvent(event=self.event.dp_event(), count=self.count)


@dataclass(frozen=True)
class ComposedEvent(PrivacyEvent):
    """Several events run on the same records, in any (adaptive) order.

    Parameters
    ----------
    events : tuple of PrivacyEvent
        The events.
    """

    kind: ClassVar[str] = "composed"
    events: tuple[PrivacyEvent, ...] = field(default=())

    def __post_init__(self) -> None:
        evs = tuple(self.events)
        if not all(isinstance(e, PrivacyEvent) for e in evs):
            raise TypeError("events must be PrivacyEvent objects")
        object.__setattr__(self, "events", evs)

    def params(self) -> dict[str, Any]:
        return {"events": [e.to_dict() for e in self.events]}

    @classmethod
    def from_params(cls, params: Any, where: str = "event") -> ComposedEvent:
        check_json_keys(params, where, required=("events",))
        if not isinstance(params["events"], list):
            raise TypeError(f"{where}.events must be a list")
        return cls(events=tuple(event_from_dict(e, f"{where}.events[{i}]") for i, e in enumerate(params["events"])))

    def dp_event(self) -> Any:
        return _dpe.ComposedDpEvent(events=[e.dp_event() for e in self.events])


# ------------------------------------------------------------------ dp_accounting, both ways
@attr.s(frozen=True, slots=True, auto_attribs=True)
class PdpkitDpEvent(_dpe.DpEvent):
    """A pdpkit event as a dp_accounting ``DpEvent``: ObjPert, a selection, anything dp_accounting has no class for.

    dp_accounting's own accountants do not know it (their ``supports`` is ``False``); a
    :class:`pdpkit.accountant.PrivacyAccountant` composes it (it reads any tree that holds
    it). To compose it with dp_accounting's PLDs yourself, use
    :meth:`privacy_loss_distribution` (pessimistic, grid :data:`PLD_INTERVAL`):
    ``pld.compose(event.privacy_loss_distribution())``.

    Attributes
    ----------
    kind : str
        The pdpkit event's kind (``"objpert"``, ``"selection"``, …).
    params : tuple
        Its parameters as nested ``(key, value)`` tuples (hashable).
    """

    kind: str
    params: tuple

    def event(self) -> PrivacyEvent:
        """The pdpkit event."""
        return _event_of_kind(self.kind, _thaw(self.params), "PdpkitDpEvent")

    def privacy_loss_distribution(self) -> Any:
        """The event's dp_accounting ``PrivacyLossDistribution``, or ``None`` where it has none (a selection)."""
        return self.event().pld()

    def rdp(self, orders: ArrayLike) -> np.ndarray | None:
        """The event's Rényi DP at ``orders``.

        Parameters
        ----------
        orders : array_like
            Rényi orders (> 1).
        """
        return self.event().rdp(orders)


def from_dp_event(event: Any) -> PrivacyEvent:
    """The pdpkit event of a dp_accounting ``DpEvent``; :class:`UnsupportedEventError` naming what has no analysis here.

    Read: ``GaussianDpEvent``, ``LaplaceDpEvent``, ``PoissonSampledDpEvent`` of either,
    ``SelfComposedDpEvent``, ``ComposedDpEvent``, ``NoOpDpEvent`` and :class:`PdpkitDpEvent`.
    Refused: ``SampledWithoutReplacementDpEvent`` (dp_accounting analyses a fixed-size batch
    under *replace-one* neighbours only; pdpkit's budgets are add/remove-one, and a
    replace-one guarantee does not imply one), ``NonPrivateDpEvent``, and every other class.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        The event.
    """
    if isinstance(event, PdpkitDpEvent):
        return event.event()
    if isinstance(event, _dpe.NoOpDpEvent):
        return ComposedEvent(events=())
    if isinstance(event, _dpe.GaussianDpEvent):
        nm = float(event.noise_multiplier)
        if not nm > 0:
            raise UnsupportedEventError("GaussianDpEvent with noise_multiplier 0 is not private")
        return GaussianEvent(mu=1.0 / nm)
    if isinstance(event, _dpe.LaplaceDpEvent):
        nm = float(event.noise_multiplier)
        if not nm > 0:
            raise UnsupportedEventError("LaplaceDpEvent with noise_multiplier 0 is not private")
        return LaplaceEvent(noise_multiplier=nm)
    if isinstance(event, _dpe.PoissonSampledDpEvent):
        inner = from_dp_event(event.event)
        if not isinstance(inner, (GaussianEvent, LaplaceEvent)):
            raise UnsupportedEventError(f"PoissonSampledDpEvent of {type(event.event).__name__}: pdpkit accounts "
                                        "a Poisson subsample of a Gaussian or Laplace mechanism only")
        return PoissonSampledEvent(sampling_probability=float(event.sampling_probability), event=inner)
    if isinstance(event, _dpe.SelfComposedDpEvent):
        return SelfComposedEvent(event=from_dp_event(event.event), count=int(event.count))
    if isinstance(event, _dpe.ComposedDpEvent):
        return ComposedEvent(events=tuple(from_dp_event(e) for e in event.events))
    if isinstance(event, _dpe.SampledWithoutReplacementDpEvent):
        raise UnsupportedEventError(
            "SampledWithoutReplacementDpEvent: dp_accounting analyses a fixed-size batch under replace-one "
            "neighbours only, and pdpkit's budgets are add/remove-one (a replace-one guarantee does not imply "
            "one); describe the batch as a PoissonSampledDpEvent instead")
    raise UnsupportedEventError(f"{type(event).__name__}: pdpkit has no analysis of this event "
                                "(add/remove-one neighbours)")


# ------------------------------------------------------------------ guarantees
@dataclass(frozen=True)
class GuaranteePart:
    """One mechanism's share of a guarantee: its name, its own (ε, δ) and the accounting used.

    Parameters
    ----------
    name : str
        What was released (``"model"``, ``"report"``, a ledger entry's name).
    epsilon : float
        The part's ε alone, at its own ``delta``.
    delta : float
        The part's δ, in (0, 1).
    accounting : str
        The analysis that gives this part's (ε, δ).
    """

    name: str
    epsilon: float
    delta: float
    accounting: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError("a guarantee part's name must be a non-empty string")
        if not isinstance(self.accounting, str) or not self.accounting:
            raise TypeError("a guarantee part's accounting must be a non-empty string")
        object.__setattr__(self, "epsilon", _real(self.epsilon, f"guarantee part {self.name!r}: epsilon",
                                                  allow_zero=True))
        object.__setattr__(self, "delta", _delta(self.delta, f"guarantee part {self.name!r}: delta"))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"name": self.name, "epsilon": self.epsilon, "delta": self.delta, "accounting": self.accounting}


@dataclass(frozen=True)
class Guarantee:
    r"""An :math:`(\varepsilon, \delta)`-DP guarantee, the accounting that proves it, and its parts.

    Neighbouring data sets differ by adding or removing one record. ``parts`` lists what the
    guarantee is the total of (the model and the report, or an accountant's ledger), each
    with its own (ε, δ) alone; ``epsilon`` is their composition at the total ``delta`` under
    ``accounting``.

    Parameters
    ----------
    epsilon : float
        The total ε (>= 0).
    delta : float
        The total δ, in (0, 1).
    accounting : str
        The analysis that composes the parts.
    parts : tuple of GuaranteePart
        What the total is made of.
    """

    epsilon: float
    delta: float
    accounting: str = ObjPertEvent.exact_accounting
    parts: tuple[GuaranteePart, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _real(self.epsilon, "guarantee.epsilon", allow_zero=True))
        object.__setattr__(self, "delta", _delta(self.delta, "guarantee.delta"))
        if not isinstance(self.accounting, str) or not self.accounting:
            raise TypeError("guarantee.accounting must be a non-empty string naming the analysis")
        parts = tuple(self.parts)
        if not all(isinstance(p, GuaranteePart) for p in parts):
            raise TypeError("guarantee.parts must be GuaranteePart objects")
        object.__setattr__(self, "parts", parts)

    def __str__(self) -> str:
        # ε and δ are upper bounds: shown rounded up (4 and 3 significant digits), never below the guarantee
        head = f"({_up(self.epsilon, 4)}, {_up(self.delta, 3)})-DP [{self.accounting}, add/remove one record]"
        if len(self.parts) > 1:
            head += " = " + " + ".join(f"{p.name} ({_up(p.epsilon, 4)}, {_up(p.delta, 3)})" for p in self.parts)
        return head

    def part(self, name: str) -> GuaranteePart:
        """The part called ``name`` (``KeyError`` if absent).

        Parameters
        ----------
        name : str
            The part's name.
        """
        for p in self.parts:
            if p.name == name:
                return p
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"epsilon": self.epsilon, "delta": self.delta, "accounting": self.accounting,
                "parts": [p.to_dict() for p in self.parts]}

    @classmethod
    def from_dict(cls, data: Any) -> Guarantee:
        """Inverse of :meth:`to_dict`, strict: unknown or missing fields are a ``ValueError`` naming them.

        Parameters
        ----------
        data : dict
            A dict as :meth:`to_dict` writes it.
        """
        check_json_keys(data, "guarantee", required=("epsilon", "delta", "accounting", "parts"))
        parts = data["parts"]
        if not isinstance(parts, list):
            raise TypeError("guarantee.parts must be a list")
        out = []
        for i, p in enumerate(parts):
            check_json_keys(p, f"guarantee.parts[{i}]", required=("name", "epsilon", "delta", "accounting"))
            out.append(GuaranteePart(name=p["name"], epsilon=p["epsilon"], delta=p["delta"],
                                     accounting=p["accounting"]))
        return cls(epsilon=data["epsilon"], delta=data["delta"], accounting=data["accounting"], parts=tuple(out))
