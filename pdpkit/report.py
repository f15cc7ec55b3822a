r"""The privacy report: a privately publishable bound on every person's ex-post pDP under ObjPert.

Redberg & Wang (2021): Alg 2 / Thm 10 of the main text (rebuilt from App. E.2, Prop 21), the
adaptive report of App. C.1 (Alg 3–5, Thm 11, Prop 12, Thm 13–14), the uniform report and
calibration of App. C.3 (Prop 15, Cor 16), Analyze-Gauss with GOE noise (App. D, Alg 6,
Thm 17, Lemma 20) and the budget allocation of App. B.2.

Setting (notation of :mod:`pdpkit.objpert`, losses summed): ObjPert released
:math:`\theta^P = \operatorname{argmin} J(\theta; D) + b^\top\theta`,
:math:`b \sim \mathcal N(0, \sigma^2 I)`, so :math:`b = -\nabla J(\theta^P; D)`, with
:math:`H = \nabla^2 J(\theta^P; D) \succeq \lambda I`. For a GLM target :math:`z = (x, y)`
write :math:`c_1 = f'(x^\top\theta^P; y)`, :math:`c_2 = f''(x^\top\theta^P; y) \ge 0`,
:math:`\mu = x^\top H^{-1}x`. The ex-post pDP of the release is
(:func:`pdpkit.objpert.ex_post_pdp`)

.. math::

   \epsilon_1 = \bigl|-\log(1 \pm c_2\mu) + \tfrac{c_1^2\|x\|^2}{2\sigma^2}
   \mp \tfrac{c_1 x^\top b}{\sigma^2}\bigr|

(upper signs: :math:`z \notin D`; lower: :math:`z \in D`). It depends on :math:`D` through
:math:`H` and :math:`b`, so it cannot be published. :func:`privacy_report` releases noisy
versions of :math:`H` (Alg 6), of :math:`\nabla J(\theta^P; D)` (Alg 5) and of
:math:`\lambda_{\min}(H)` (Alg 3); everything a :class:`PrivacyReport` computes afterwards is
post-processing of :math:`\theta^P` and these releases, and is valid for **either**
neighbour (the report does not know whether :math:`z \in D`):

* log term. Under the event :math:`\|\hat H - H\|_2 \le \tau\sigma_H` and
  :math:`\lambda_{\min}(H) \ge \underline\lambda`, :math:`\mu \le \bar\mu(x)`
  (:meth:`PrivacyReport.leverage_bound`). For a non-member
  :math:`\log(1 + c_2\mu) \le \log(1 + c_2\bar\mu)`; for a member
  :math:`-\log(1 - c_2\mu) = \log(1 + c_2 x^\top H_{-z}^{-1}x)` (Sherman–Morrison) is at most
  :math:`-\log(1 - c_2\bar\mu)` and at most :math:`\log(1 + c_2\|x\|^2/\max\{\lambda,
  \underline\lambda - c_2\|x\|^2\})` (:math:`H_{-z} \succeq \lambda I`, and Weyl). The report
  takes the smaller of the two member bounds; both dominate the non-member term.
* quadratic term :math:`c_1^2\|x\|^2/(2\sigma^2)`: exact (a function of :math:`\theta^P`).
* cross term. :math:`x` is fixed, so :math:`x^\top b \sim \mathcal N(0, \sigma^2\|x\|^2)`
  (Thm 9, per-target :math:`\ell_2` form); with the released gradient
  :math:`\hat g = \nabla J + e = -b + e`, :math:`|c_1 x^\top b| \le |c_1\hat g^\top x|
  + \sigma_2|c_1|\|x\|\,z` (Alg 4's :math:`\bar g` with the absolute value it lacks). The
  report takes the smaller, each at half the cross term's failure probability.

**Weights.** For a fit with a :class:`pdpkit.objpert.WeightedLoss` (record weights
:math:`v \in [0, 1]`, a public bound W divided out), a record of weight :math:`v` is added or
removed with :math:`v f'` and :math:`v f''` (Redberg & Wang 2021, Thm 6, Cor 7): its bound is the
one above with :math:`c_1 \to v c_1`, :math:`c_2 \to v c_2`, which every bound method takes as
``weight=``; the report's random events do not involve the target, and its releases'
sensitivities stay :math:`LR`, :math:`\beta R^2/\sqrt2`, :math:`\beta R^2` as :math:`v \le 1`.
Every term grows with :math:`v`, so the bound at ``weight=None`` (:math:`v = 1`, the public
bound) holds whatever the target's weight.

``rho`` is the **total** failure probability per target; :func:`rho_parts` splits it
equally over the method's random events (cross term; Hessian; :math:`\lambda_{\min}`).

Where this module departs from the printed source (evidence in ``tests/test_report.py``):

* τ is Lemma 20's quantile in Alg 6's normalization, 16.97 for :math:`d = 50`,
  :math:`\rho = 8.465\cdot10^{-6}`; the source's "τ ≈ 12" is Chiani's scaling (÷√2), with
  which :math:`P(\|G\|_2 > 12\sigma_H) \approx 1` and the leverage bound fails.
* Alg 4's :math:`\bar g` needs :math:`|f'\hat g^\top x|`; a draft's Alg 2 uses
  :math:`-\log(1 + f''\bar\mu)` for everybody, which members violate.
* Prop 12's proof mixes :math:`\hat\lambda^P_{\min}` with its lower confidence value; only
  the lower value :math:`\underline\lambda` makes the chain valid (used throughout).
* The additive error of the released-gradient cross term is :math:`2\sigma_2|f'|\|x\|z/\sigma^2`,
  not :math:`|f'|\|x\|z/\sigma_2` (Thm 10, 13, Prop 15). Prop 15's union bound over :math:`m`
  two-sided events with :math:`\sqrt{2\log(m/\rho)}` is valid, since
  :math:`2\bar\Phi(t) \le e^{-t^2/2}` for :math:`t \ge 0`; the exact quantile
  :math:`\Phi^{-1}(1 - \rho/(2m))` used here is smaller.
* Alg 2 has no branch for :math:`\lambda < 2\tau\sigma_H`: :func:`privacy_report` raises.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import scipy.linalg as sla
from numpy.typing import ArrayLike
from scipy import special

from . import accounting as _accounting
from . import analyze_gauss as _ag
from . import gaussian as _gaussian
from . import goe as _goe
from . import objpert as _objpert
from .events import report_event
from ._display import fmt_up as _fmt_up
from ._progress import progress as _progress
from ._solver import (_Rows, _check_general_targets, _check_loss, _check_rows, _evaluate, _is_dask, _map_rows,
                      _scratch)
from ._validation import as_finite_array, as_generator, check_int_at_least, check_positive, check_probability
from .losses import GLMLoss, Huber, RobustLog, Squared

__all__ = [
    "PrivacyReport",
    "PersonalBounds",
    "rho_parts",
    "privacy_report",
    "total_privacy",
    "calibrate_report",
    "report_coverage",
    "plot_report",
]

METHODS = ("data-independent", "data-dependent", "adaptive")
_EVENTS = {
    "data-independent": ("cross",),
    "data-dependent": ("cross", "hessian"),
    "adaptive": ("cross", "hessian", "lambda_min"),
}
_COMPONENTS = ("gradient", "hessian", "lambda_min")
_SIGMA_NAME = {"gradient": "sigma_gradient", "hessian": "sigma_hessian", "lambda_min": "sigma_lambda_min"}
_CHUNK = 8192
_PLD_H = 1e-3  # PLD grid of total_privacy(composition="pld"): pessimistic, so only slightly loose
_SQRT2 = math.sqrt(2.0)


# ===================================================================== arguments
def _check_method(method: Any) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}")
    return method


def _check_rho(rho: Any) -> float:
    arr = check_probability(rho, "rho")
    if arr.ndim:
        raise TypeError(f"rho must be a scalar in (0, 1); got an array of shape {arr.shape}")
    return float(arr)


def _opt_sigma(value: Any, name: str) -> float | None:
    if value is None:
        return None
    arr = check_positive(value, name)
    if arr.ndim:
        raise TypeError(f"{name} must be a scalar > 0 or None; got an array of shape {arr.shape}")
    return float(arr)


def _check_sigmas(method: str, sg: Any, sh: Any, sl: Any) -> tuple[float | None, float | None, float | None]:
    sg = _opt_sigma(sg, "sigma_gradient")
    sh = _opt_sigma(sh, "sigma_hessian")
    sl = _opt_sigma(sl, "sigma_lambda_min")
    if method == "data-independent":
        for name, v in (("sigma_gradient", sg), ("sigma_hessian", sh), ("sigma_lambda_min", sl)):
            if v is not None:
                raise ValueError(f"method='data-independent' releases nothing: {name} must be None; got {v!r}")
    else:
        if sh is None:
            raise ValueError(f"method={method!r} releases the Hessian (Alg 6): sigma_hessian must be a number > 0")
        if method == "data-dependent" and sl is not None:
            raise ValueError("method='data-dependent' does not release lambda_min: sigma_lambda_min must be None "
                             "(use method='adaptive')")
        if method == "adaptive" and sl is None:
            raise ValueError("method='adaptive' releases lambda_min (Alg 3): sigma_lambda_min must be a number > 0")
    return sg, sh, sl


def rho_parts(rho: float, *, method: str) -> dict[str, float]:
    r"""Split the total per-target failure probability ``rho`` over the method's random events.

    Equal shares (union bound): ``"cross"`` — the tail of the cross term :math:`c_1x^\top b`
    (Thm 9; with a released gradient it is split again in halves between the
    data-independent and the released-gradient bound, whose minimum is used);
    ``"hessian"`` — :math:`\|\hat H - H\|_2 \le \tau\sigma_H` (Lemma 20, Prop 21);
    ``"lambda_min"`` — :math:`\underline\lambda \le \lambda_{\min}(H)` (Alg 3, Prop 12).

    Parameters
    ----------
    rho : float
        Total failure probability per target, a scalar in (0, 1).
    method : {"adaptive", "data-dependent", "data-independent"}
        The report's method; it fixes which random events share ``rho``.

    Returns
    -------
    dict
        ``{event: probability}``, summing to ``rho``.
    """
    method = _check_method(method)
    rho = _check_rho(rho)
    events = _EVENTS[method]
    return {e: rho / len(events) for e in events}


@functools.lru_cache(maxsize=256)
def _tau(d: int, rho_hessian: float) -> float:
    """Lemma 20's tau in Alg 6's normalization (cached: the exact GOE quantile costs milliseconds)."""
    return float(_goe.goe_norm_bound(d, rho=rho_hessian))


def _loss_to_dict(loss: GLMLoss) -> dict[str, Any]:
    if isinstance(loss, Huber):
        return {"name": "huber", "scale": loss.scale}
    return {"name": loss.name}


def _loss_from_dict(spec: Any) -> GLMLoss:
    if isinstance(spec, str):
        return _check_loss(spec)
    if not isinstance(spec, Mapping) or "name" not in spec:
        raise ValueError(f"loss must be a loss name or a dict with a 'name'; got {spec!r}")
    if spec["name"] == "huber" and "scale" in spec:
        return Huber(float(spec["scale"]))
    return _check_loss(spec["name"])


def _frozen(a: Any, name: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    arr = np.array(as_finite_array(a, name), dtype=np.float64, copy=True)
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}; got {arr.shape}")
    arr.flags.writeable = False
    return arr


def _overhead_eps(sens: dict[str, np.ndarray], sigmas: dict[str, float], delta: Any, accounting: str) -> np.ndarray:
    """pDP/DP epsilon of the released components {name: sigma} with sensitivities sens (see overhead_pdp)."""
    delta = float(check_probability(delta, "delta"))
    if accounting not in ("gaussian", "source"):
        raise ValueError(f"accounting must be 'gaussian' or 'source'; got {accounting!r}")
    shape = np.shape(next(iter(sens.values())))
    if not sigmas:
        return np.zeros(shape)
    bad = np.zeros(shape, dtype=bool)
    for c in sigmas:
        bad |= np.isinf(sens[c])
    sens = {c: np.where(bad, 0.0, sens[c]) for c in sigmas}
    if accounting == "gaussian":
        mu2 = sum((sens[c] / sg) ** 2 for c, sg in sigmas.items())
        eps = _gaussian.gaussian_epsilon(delta, sensitivity=np.sqrt(mu2), sigma=1.0)
    else:
        dk = delta / len(sigmas)
        eps = np.zeros(shape)
        if "gradient" in sigmas:  # Thm 14, statement 1
            eps = eps + _gaussian.gaussian_pdp_epsilon(sens["gradient"], sigma=sigmas["gradient"], delta=dk,
                                                       form="sqrt_log")
        if "hessian" in sigmas:  # Thm 17 (takes ||H_x||_F = sqrt 2 * Delta_H)
            eps = eps + _ag.analyze_gauss_pdp_epsilon(_SQRT2 * sens["hessian"], sigma=sigmas["hessian"], delta=dk)
        if "lambda_min" in sigmas:  # Thm 11
            eps = eps + _ag.lambda_min_pdp_epsilon(sens["lambda_min"], sigma=sigmas["lambda_min"], delta=dk)
    return np.where(bad, np.inf, eps)


# ====================================================================== the report
@dataclass(frozen=True, eq=False)
class PrivacyReport:
    r"""A released privacy report (Redberg & Wang 2021, Alg 2 / Alg 4): releases, parameters, bounds.

    Build it with :func:`privacy_report`. It holds only public quantities — the ObjPert
    release :math:`\theta^P` with its parameters, and the report's own releases — so it
    can be published (:meth:`to_dict` / :meth:`from_dict`); every method is post-processing.

    Attributes
    ----------
    method : {"data-independent", "data-dependent", "adaptive"}
    rho : float
        Total failure probability per target (or per call, for the uniform variants).
    theta : numpy.ndarray
        :math:`\theta^P` (read-only).
    lam, sigma : float
        ObjPert's regularization :math:`\lambda` and noise scale :math:`\sigma`.
    loss : GLMLoss
    sigma_gradient, sigma_hessian, sigma_lambda_min : float or None
        Noise scales of Alg 5 (:math:`\sigma_2`), Alg 6 (:math:`\sigma_H`) and Alg 3
        (:math:`\sigma_4`); ``None`` when the component is not released.
    gradient_release : numpy.ndarray or None
        :math:`\nabla J(\theta^P; D) + e`, :math:`e \sim \mathcal N(0, \sigma_2^2 I)`.
    hessian_release : numpy.ndarray or None
        :math:`H + \sigma_H(Z + Z^\top)/\sqrt2` (Alg 6).
    lambda_min_release : float or None
        :math:`\lambda_{\min}(H) + \mathcal N(0, \sigma_4^2)` (Alg 3).
    rho_parts : Mapping
        :func:`rho_parts` of ``rho`` (computed).
    tau : float or None
        :func:`pdpkit.goe.goe_norm_bound` ``(d, rho=rho_parts["hessian"])`` — Lemma 20 in
        Alg 6's normalization, so that :math:`P(\|\hat H - H\|_2 > \tau\sigma_H) \le` the
        Hessian's share (computed; ``None`` without a Hessian release).
    lambda_lower : float
        :math:`\underline\lambda \le \lambda_{\min}(H)` used by the bounds: :math:`\lambda`,
        or for ``"adaptive"`` :math:`\max\{\lambda, \hat\lambda^P_{\min} - \sigma_4\Phi^{-1}(1 - \rho_\lambda)\}`
        (a one-sided interval: only the lower side is needed).
    estimator : str or None
        ``"standard"`` (:math:`\hat H`) or ``"regularized"`` (:math:`\hat H + \tau\sigma_H I`),
        Prop 12; ``None`` for the data-independent report.
    """

    method: str
    rho: float
    theta: np.ndarray
    lam: float
    sigma: float
    loss: GLMLoss
    sigma_gradient: float | None = None
    sigma_hessian: float | None = None
    sigma_lambda_min: float | None = None
    gradient_release: np.ndarray | None = field(default=None, repr=False)
    hessian_release: np.ndarray | None = field(default=None, repr=False)
    lambda_min_release: float | None = None
    rho_parts: Mapping[str, float] = field(init=False)
    tau: float | None = field(init=False)
    lambda_lower: float = field(init=False, repr=False)
    estimator: str | None = field(init=False, repr=False)
    _factor: float = field(init=False, repr=False)
    _W: np.ndarray | None = field(init=False, repr=False)

    # ------------------------------------------------------------- construction
    def __post_init__(self) -> None:
        s = object.__setattr__
        method = _check_method(self.method)
        rho = _check_rho(self.rho)
        s(self, "rho", rho)
        theta = _frozen(self.theta, "theta")
        if theta.ndim != 1 or theta.shape[0] == 0:
            raise ValueError(f"theta must have shape (d,); got {theta.shape}")
        s(self, "theta", theta)
        d = theta.shape[0]
        s(self, "lam", float(check_positive(self.lam, "lam")))
        s(self, "sigma", float(check_positive(self.sigma, "sigma")))
        s(self, "loss", _check_loss(self.loss))
        sg, sh, sl = _check_sigmas(method, self.sigma_gradient, self.sigma_hessian, self.sigma_lambda_min)
        s(self, "sigma_gradient", sg)
        s(self, "sigma_hessian", sh)
        s(self, "sigma_lambda_min", sl)
        if (sg is None) != (self.gradient_release is None):
            raise ValueError("gradient_release must be given exactly when sigma_gradient is")
        if (sh is None) != (self.hessian_release is None):
            raise ValueError("hessian_release must be given exactly when sigma_hessian is")
        if (sl is None) != (self.lambda_min_release is None):
            raise ValueError("lambda_min_release must be given exactly when sigma_lambda_min is")
        if sg is not None:
            s(self, "gradient_release", _frozen(self.gradient_release, "gradient_release", (d,)))
        if sh is not None:
            Hh = _frozen(self.hessian_release, "hessian_release", (d, d))
            if np.max(np.abs(Hh - Hh.T)) > 1e-12 * max(1.0, float(np.max(np.abs(Hh)))):
                raise ValueError("hessian_release must be symmetric")
            s(self, "hessian_release", Hh)
        if sl is not None:
            lr = as_finite_array(self.lambda_min_release, "lambda_min_release")
            if lr.ndim:
                raise ValueError("lambda_min_release must be a scalar")
            s(self, "lambda_min_release", float(lr))
        parts = rho_parts(rho, method=method)
        s(self, "rho_parts", MappingProxyType(parts))
        lam = self.lam
        if method == "data-independent":
            s(self, "tau", None)
            s(self, "lambda_lower", lam)
            s(self, "estimator", None)
            s(self, "_factor", 1.0)
            s(self, "_W", None)
            return
        tau = _tau(d, parts["hessian"])
        s(self, "tau", tau)
        ts = tau * sh
        if method == "data-dependent":
            if lam < 2.0 * ts:
                raise ValueError(f"lam must be >= 2*tau*sigma_hessian = {2.0 * ts:.6g} for the data-dependent report "
                                 f"(Prop 21: tau = {tau:.6g}); got lam = {lam:g}. Use method='adaptive', a smaller "
                                 "sigma_hessian or a larger lam")
            lam_lower, estimator, factor, M = lam, "standard", 1.5, self.hessian_release
        else:
            # one-sided lower confidence bound at level rho_lambda: lambda_min_lower_bound spends rho/2 per side
            lam_lower = float(_ag.lambda_min_lower_bound(self.lambda_min_release, sigma=sl,
                                                         rho=2.0 * parts["lambda_min"], floor=lam))
            if lam_lower >= 2.0 * ts:
                estimator, factor, M = "standard", (lam_lower + ts) / lam_lower, self.hessian_release
            else:
                estimator, factor = "regularized", (lam_lower + 2.0 * ts) / lam_lower
                M = self.hessian_release + ts * np.eye(d)
        s(self, "lambda_lower", lam_lower)
        s(self, "estimator", estimator)
        s(self, "_factor", factor)
        try:
            L = np.linalg.cholesky(M)
            W = math.sqrt(factor) * sla.solve_triangular(L, np.eye(d), lower=True, check_finite=False).T
            W.flags.writeable = False
        except np.linalg.LinAlgError:
            # the matrix is not positive definite: the Hessian event failed (probability <= rho_parts["hessian"]);
            # fall back to ||x||^2 / lambda_lower, valid without that event
            W = None
        s(self, "_W", W)

    @property
    def d(self) -> int:
        """Dimension of :math:`\\theta`."""
        return int(self.theta.shape[0])

    def __reduce__(self):
        # pickle and deepcopy through the public fields (the derived ones are recomputed)
        return (_report_from_dict, (self.to_dict(),))

    # ------------------------------------------------------------ serialization
    def to_dict(self) -> dict[str, Any]:
        """The report as a JSON-serializable dict: its releases and parameters only."""
        def arr(a):
            return None if a is None else np.asarray(a).tolist()

        return {
            "format": "pdpkit.report.PrivacyReport",
            "version": 1,
            "method": self.method,
            "rho": self.rho,
            "theta": arr(self.theta),
            "lam": self.lam,
            "sigma": self.sigma,
            "loss": _loss_to_dict(self.loss),
            "sigma_gradient": self.sigma_gradient,
            "sigma_hessian": self.sigma_hessian,
            "sigma_lambda_min": self.sigma_lambda_min,
            "gradient_release": arr(self.gradient_release),
            "hessian_release": arr(self.hessian_release),
            "lambda_min_release": self.lambda_min_release,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | str) -> PrivacyReport:
        """Rebuild a report from :meth:`to_dict` (or its JSON text); derived fields are recomputed.

        Parameters
        ----------
        data : dict or str
            The dict of :meth:`to_dict` (format ``"pdpkit.report.PrivacyReport"``, version 1),
            or its JSON text. ``ValueError`` for another format or missing keys.
        """
        if isinstance(data, str):
            data = json.loads(data)
        if not isinstance(data, Mapping):
            raise TypeError(f"data must be a dict (or JSON text) from PrivacyReport.to_dict; got {type(data).__name__}")
        if data.get("format") != "pdpkit.report.PrivacyReport" or data.get("version") != 1:
            raise ValueError("data is not a version-1 pdpkit PrivacyReport dict")
        keys = ("method", "rho", "theta", "lam", "sigma", "sigma_gradient", "sigma_hessian", "sigma_lambda_min",
                "gradient_release", "hessian_release", "lambda_min_release")
        missing = [k for k in keys + ("loss",) if k not in data]
        if missing:
            raise ValueError(f"data lacks the keys {missing}")
        kw = {k: data[k] for k in keys}
        return cls(loss=_loss_from_dict(data["loss"]), **kw)

    # ------------------------------------------------------------------ targets
    def _targets(self, target_x: Any, target_y: Any) -> tuple[np.ndarray, np.ndarray, bool]:
        try:
            tx = target_x if isinstance(target_x, np.ndarray) and target_x.dtype == np.float64 \
                else np.asarray(target_x, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError("target_x must be numeric (array-like of floats)") from exc
        scalar = tx.ndim == 1
        if scalar:
            tx = tx[None, :]
        d = self.d
        if tx.ndim != 2 or tx.shape[1] != d:
            raise ValueError(f"target_x must have shape (m, {d}) or ({d},); got {np.shape(target_x)}")
        try:
            ty = np.atleast_1d(np.asarray(target_y, dtype=np.float64))
        except (TypeError, ValueError) as exc:
            raise TypeError("target_y must be numeric") from exc
        if ty.ndim != 1 or ty.shape[0] != tx.shape[0]:
            raise ValueError(f"target_y must have one label per target ({tx.shape[0]}); got shape {np.shape(target_y)}")
        ty = self.loss.check_labels(ty, "target_y")
        return tx, ty, scalar

    def _finite_rows(self, target_x: Any) -> tuple[np.ndarray, bool]:
        """Finite rows of shape (m, d), and whether one row of shape (d,) was given (block readers materialized)."""
        if isinstance(target_x, _Rows):
            target_x = target_x.materialize()
        elif _is_dask(target_x):
            target_x = np.asarray(target_x.compute())
        tx = as_finite_array(target_x, "target_x")
        scalar = tx.ndim == 1
        if scalar:
            tx = tx[None, :]
        if tx.ndim != 2 or tx.shape[1] != self.d:
            raise ValueError(f"target_x must have shape (m, {self.d}) or ({self.d},); got {np.shape(target_x)}")
        return tx, scalar

    @staticmethod
    def _finite_or_raise(out: np.ndarray, target_x: Any, what: str) -> None:
        if not np.all(np.isfinite(out)):
            as_finite_array(target_x, "target_x")
            raise ValueError(f"{what} is not finite (overflow): target_x is too large")

    def _check_uniform(self, uniform: Any) -> bool | str:
        if uniform is True or uniform is False or uniform == "domain":
            return uniform
        raise ValueError(f"uniform must be False, True or 'domain'; got {uniform!r}")

    def _cross_quantiles(self, uniform: bool | str, m: int) -> tuple[float, float | None]:
        """Tail multipliers (b-route, e-route): Phi^-1 per target or union over m, or the l1 constant."""
        rc = self.rho_parts["cross"]
        r = rc / 2.0 if self.sigma_gradient is not None else rc
        if uniform == "domain":
            # Hoelder with ||b||_inf (||e||_inf) <= s sqrt(2 log(2d/r)) (Thm 9's constant)
            q = math.sqrt(2.0 * math.log(2.0 * self.d / r))
        else:
            k = m if uniform is True else 1
            q = float(-special.ndtri(r / (2.0 * k)))
        return q, (q if self.sigma_gradient is not None else None)

    # ------------------------------------------------------------------- bounds
    def leverage_bound(self, target_x: ArrayLike) -> np.ndarray | float:
        r"""Private upper bound :math:`\bar\mu(x) \ge x^\top H^{-1}x`, valid under the report's events.

        ``"data-independent"``: :math:`\|x\|^2/\lambda` (always valid). ``"data-dependent"``
        (Prop 21): :math:`\min\{\tfrac32 x^\top\hat H^{-1}x, \|x\|^2/\lambda\}`, valid when
        :math:`\|\hat H - H\|_2 \le \tau\sigma_H \le \lambda/2`. ``"adaptive"`` (Prop 12,
        corrected to use the lower confidence value :math:`\underline\lambda` throughout):
        :math:`\min\{\tfrac{\underline\lambda + \tau\sigma_H}{\underline\lambda}x^\top\hat H^{-1}x,
        \|x\|^2/\underline\lambda\}` if :math:`\underline\lambda \ge 2\tau\sigma_H`, else
        :math:`\min\{\tfrac{\underline\lambda + 2\tau\sigma_H}{\underline\lambda}x^\top(\hat H + \tau\sigma_H I)^{-1}x,
        \|x\|^2/\underline\lambda\}`.

        Parameters
        ----------
        target_x : array_like, shape (m, d) or (d,)

        Returns
        -------
        numpy.ndarray of shape (m,), or float for one target of shape (d,).
        """
        tx, scalar = self._finite_rows(target_x)
        out = np.einsum("ij,ij->i", tx, tx) / self.lambda_lower
        if self._W is not None:
            V = tx @ self._W
            out = np.minimum(out, np.einsum("ij,ij->i", V, V))
        return float(out[0]) if scalar else out

    def epsilon_bound(self, target_x: ArrayLike, target_y: ArrayLike, *,
                      uniform: bool | str = False, weight: ArrayLike | None = None) -> np.ndarray | float:
        r"""Private upper bound :math:`\bar\epsilon_1^P(z) \ge \epsilon_1(\theta^P, D, D_{\pm z})` for every target.

        With :math:`\bar\mu` = :meth:`leverage_bound`, :math:`\underline\lambda` = ``lambda_lower``,

        .. math::

           \begin{aligned}
           \bar\epsilon_1^P = {} & \min\Bigl\{-\log(1 - c_2\bar\mu),\;
           \log\Bigl(1 + \tfrac{c_2\|x\|^2}{\max\{\lambda, \underline\lambda - c_2\|x\|^2\}}\Bigr)\Bigr\}
           + \frac{c_1^2\|x\|^2}{2\sigma^2} \\
           & + \frac{\min\{\sigma|c_1|\|x\|q,\;
           |c_1\hat g^\top x| + \sigma_2|c_1|\|x\|q\}}{\sigma^2}
           \end{aligned}

        (the first entry of the min is :math:`\infty` when :math:`c_2\bar\mu \ge 1`; the second
        entry of the last min only with a released gradient). It holds for a member and a
        non-member alike (module docstring), with probability at least :math:`1 - \rho` over
        ObjPert's and the report's noise, for each fixed target. ``q`` is
        :math:`\Phi^{-1}(1 - r/2)` with :math:`r` the cross term's share (halved when the
        gradient is released).

        Parameters
        ----------
        target_x : array_like, shape (m, d) or (d,)
            Targets' feature rows (as fitted: with the intercept column when there is one);
            a memmap or a Dask array is read block by block (one bound per row, gathered).
        target_y : array_like, shape (m,) or scalar
            Targets' labels.
        uniform : bool or "domain"
            ``False``: for each target separately. ``True``: jointly for all the given targets
            (Prop 15, union bound: :math:`r/(2m)` in the quantile). ``"domain"``: jointly for
            every :math:`x` (Prop 15, second statement: :math:`\|x\|_1` and
            :math:`\sqrt{2\log(2d/r)}` replace :math:`\|x\|` and ``q``; for the
            data-independent method this is :func:`pdpkit.objpert.pdp_bound_data_independent`
            with ``sharp=True``).
        weight : array_like, shape (m,) or scalar, optional
            The targets' weights :math:`v \in [0, 1]` in a weighted fit (a record's weight over
            the public bound; module docstring): :math:`c_1`, :math:`c_2` are multiplied by
            :math:`v`. ``None``: :math:`v = 1`, a bound for every weight.

        Returns
        -------
        numpy.ndarray of shape (m,), or float for one target of shape (d,).
        """
        uniform = self._check_uniform(uniform)
        if isinstance(target_x, _Rows) or _is_dask(target_x):
            return self._epsilon_bound_rows(target_x, target_y, uniform, weight)
        tx, ty, scalar = self._targets(target_x, target_y)
        m, d = tx.shape
        ty = self._with_weight(ty, weight)
        if self.method == "data-independent" and uniform == "domain":
            as_finite_array(tx, "target_x")
            loss = self.loss if weight is None else _objpert.WeightedLoss(self.loss)
            out = _objpert.pdp_bound_data_independent(loss, tx, lam=self.lam, sigma=self.sigma,
                                                      rho=self.rho_parts["cross"], theta=self.theta,
                                                      target_y=ty, sharp=True)
            return float(out[0]) if scalar else out
        qb, qe = self._cross_quantiles(uniform, m)
        Mcat, k = self._mcat(qe)
        out = np.empty(m)
        with np.errstate(invalid="ignore", over="ignore"):  # non-finite targets are reported below
            self._bound_blocks(tx, ty, Mcat, k, qb, qe, uniform == "domain", out)
        self._finite_or_raise(out, target_x, "epsilon_bound")
        return float(out[0]) if scalar else out

    def _mcat(self, qe: float | None) -> tuple[np.ndarray, int]:
        W = self._W
        k = 0 if W is None else W.shape[1]
        cols = [W] if W is not None else []
        cols.append(self.theta[:, None])
        if qe is not None:
            cols.append(self.gradient_release[:, None])
        return np.ascontiguousarray(np.hstack(cols)), k

    def _with_weight(self, ty: np.ndarray, weight: Any) -> np.ndarray:
        """The checked labels, as a weighted loss's complex labels ``y + 1j*v`` when ``weight`` is given."""
        if weight is None:
            return ty
        v = as_finite_array(weight, "weight")
        if v.ndim > 1 or (v.ndim == 1 and v.shape[0] != ty.shape[0]):
            raise ValueError(f"weight must be a number or have one entry per target ({ty.shape[0]}); got shape "
                             f"{v.shape}")
        if not (np.all(v >= 0.0) and np.all(v <= 1.0)):
            raise ValueError("weight must be in [0, 1] (a record's weight divided by the public weight bound)")
        return _objpert.weighted_labels(ty, v)

    def _epsilon_bound_rows(self, target_x: Any, target_y: Any, uniform: bool | str,
                            weight: Any = None) -> np.ndarray:
        """epsilon_bound for targets read by blocks (the estimator's rows, a memmap or a Dask array)."""
        from .objpert import target_rows

        if weight is not None and not _is_dask(target_y):
            trows, ty, _ = target_rows(target_x, target_y, self.loss, self.d)
            ty = self._with_weight(np.asarray(ty), weight)
        elif weight is not None:
            raise TypeError("weight with Dask targets: pass the targets as numpy arrays")
        else:
            trows, ty, _ = target_rows(target_x, target_y, self.loss, self.d)
        m = trows.n
        if self.method == "data-independent" and uniform == "domain":
            return self.epsilon_bound(trows.materialize(), np.real(np.asarray(ty)), uniform=uniform,
                                      weight=None if weight is None else np.imag(np.asarray(ty)))
        qb, qe = self._cross_quantiles(uniform, m)
        Mcat, k = self._mcat(qe)
        with np.errstate(invalid="ignore", over="ignore"):
            out = _map_rows(trows, ty, _k_bound, (self, Mcat, k, qb, qe, uniform == "domain"))
        if not np.all(np.isfinite(out)):
            raise ValueError("epsilon_bound is not finite (overflow): target_x is too large")
        return out

    def _bound_blocks(self, tx: np.ndarray, ty: np.ndarray, Mcat: np.ndarray, k: int, qb: float,
                      qe: float | None, l1: bool, out: np.ndarray) -> None:
        for s in range(0, tx.shape[0], _CHUNK):
            out[s:s + _CHUNK] = self._bound_block(tx[s:s + _CHUNK], ty[s:s + _CHUNK], Mcat, k, qb, qe, l1)

    def _bound_block(self, Xc: np.ndarray, yc: np.ndarray, Mcat: np.ndarray, k: int, qb: float,
                     qe: float | None, l1: bool) -> np.ndarray:
        s2 = self.sigma * self.sigma
        lam, lam_lo = self.lam, self.lambda_lower
        V = np.matmul(Xc, Mcat, out=_scratch((Xc.shape[0], Mcat.shape[1]), 1, "products")[0])
        xx = np.einsum("ij,ij->i", Xc, Xc)
        yc = np.asarray(yc)
        if yc.dtype.kind == "c":  # weighted targets: v f', v f''
            d1, d2 = self.loss._d1_d2(V[:, k], yc.real)
            d1, d2 = d1 * yc.imag, d2 * yc.imag
        else:
            d1, d2 = self.loss._d1_d2(V[:, k], yc)
        mu = xx / lam_lo
        if k:
            mu = np.minimum(mu, np.einsum("ij,ij->i", V[:, :k], V[:, :k]))
        a = d2 * mu
        c2x = d2 * xx
        with np.errstate(divide="ignore", invalid="ignore"):
            t1 = np.where(a < 1.0, -np.log1p(-np.minimum(a, 1.0)), np.inf)
        t1 = np.minimum(t1, np.log1p(c2x / np.maximum(lam, lam_lo - c2x)))
        norm = np.sum(np.abs(Xc), axis=1) if l1 else np.sqrt(xx)
        ad1 = np.abs(d1)
        # a zero gradient (c1 = 0 or x = 0) contributes nothing, also for an unbounded loss
        delta = np.where((ad1 == 0) | (norm == 0), 0.0, ad1 * norm)
        cross = self.sigma * qb * delta
        if qe is not None:
            cross = np.minimum(cross, np.abs(d1 * V[:, k + 1]) + self.sigma_gradient * qe * delta)
        return t1 + d1 * d1 * xx / (2.0 * s2) + cross / s2

    def epsilon_bound_general(self, target_grad: ArrayLike, target_hessian: ArrayLike, *,
                              uniform: bool | str = False) -> np.ndarray | float:
        r"""Private bound on the ex-post pDP for a smooth convex per-example loss that need not be a GLM (Appendix C.2).

        With :math:`g = \nabla\ell(\theta^P; z)` and :math:`G = \nabla^2\ell(\theta^P; z)`
        supplied per target, the log-determinant term is bounded through
        :math:`G^{1/2}H^{-1}G^{1/2} \preceq c\,G^{1/2}M^{-1}G^{1/2}` (:math:`M` the released
        estimator matrix, :math:`c` its factor, as in :meth:`leverage_bound`):
        :math:`-\log\det(I - cG^{1/2}M^{-1}G^{1/2})` (member; dominates the non-member term),
        or :math:`\log\det(I + G/\max\{\lambda, \underline\lambda - \|G\|_2\})` (member via
        :math:`H_{-z}`), whichever is smaller. The cross term: :math:`g` depends on
        :math:`b` through :math:`\theta^P`, so without a released gradient only Hölder
        with :math:`\|b\|_\infty` (:math:`\|g\|_1`, Thm 9) is valid; with :math:`\hat g` (drawn
        after :math:`\theta^P`, so independent of :math:`g`) also
        :math:`|g^\top\hat g| + \sigma_2\|g\|q`. On a GLM target (:math:`g = c_1x`,
        :math:`G = c_2xx^\top`) the log and quadratic terms equal those of
        :meth:`epsilon_bound`, and the whole bound equals ``epsilon_bound(..., uniform="domain")``
        when the cross term is taken in the :math:`\ell_1` form.

        Parameters
        ----------
        target_grad : array_like, shape (m, d) or (d,)
            Gradient :math:`g = \nabla\ell(\theta^P; z)` of each target's loss at the released point.
        target_hessian : array_like, shape (m, d, d) or (d, d)
            Hessian :math:`G = \nabla^2\ell(\theta^P; z)` of each target's loss at the
            released point; symmetric positive semidefinite.
        uniform : bool or "domain"
            As in :meth:`epsilon_bound`.
        """
        uniform = self._check_uniform(uniform)
        d = self.d
        g, G, scalar = _check_general_targets(target_grad, target_hessian, d)
        m = g.shape[0]
        G = 0.5 * (G + np.swapaxes(G, -1, -2))
        gev = np.linalg.eigvalsh(G)
        if np.min(gev, initial=0.0) < -1e-10 * (1.0 + (float(np.max(np.abs(G))) if G.size else 0.0)):
            raise ValueError("target_hessian must be positive semidefinite (a convex loss)")
        gev = np.maximum(gev, 0.0)
        gnorm = gev[:, -1]
        t1 = np.sum(np.log1p(gev / np.maximum(self.lam, self.lambda_lower - gnorm)[:, None]), axis=1)
        if self._W is not None:
            A = np.swapaxes(self._W, 0, 1)[None] @ G @ self._W[None]
            aev = np.linalg.eigvalsh(0.5 * (A + np.swapaxes(A, -1, -2)))
            aev = np.maximum(aev, 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                ta = np.where(aev[:, -1] < 1.0, -np.sum(np.log1p(-np.minimum(aev, 1.0)), axis=1), np.inf)
            t1 = np.minimum(t1, ta)
        s2 = self.sigma * self.sigma
        gg = np.einsum("ij,ij->i", g, g)
        g1 = np.sum(np.abs(g), axis=1)
        rc = self.rho_parts["cross"]
        r = rc / 2.0 if self.sigma_gradient is not None else rc
        cross = self.sigma * g1 * math.sqrt(2.0 * math.log(2.0 * d / r))
        if self.sigma_gradient is not None:
            qe, _ = self._cross_quantiles(uniform, m)
            norm = g1 if uniform == "domain" else np.sqrt(gg)
            cross = np.minimum(cross, np.abs(g @ self.gradient_release) + self.sigma_gradient * qe * norm)
        out = t1 + gg / (2.0 * s2) + cross / s2
        self._finite_or_raise(out, target_grad, "epsilon_bound_general")
        return float(out[0]) if scalar else out

    # ------------------------------------------------------------------ overhead
    @property
    def released_statistics(self) -> list[str]:
        """The noisy statistics this report releases (``"gradient"``, ``"hessian"``, ``"lambda_min"``), in order."""
        return [c for c in _COMPONENTS if getattr(self, _SIGMA_NAME[c]) is not None]

    @property
    def leverage_factor(self) -> np.ndarray | None:
        r"""The public matrix :math:`W` with :math:`\bar\mu(x) = \|W^\top x\|^2` from the released Hessian (read-only).

        ``sqrt(factor) L^{-T}`` for the Cholesky factor :math:`L` of the (regularized) noisy
        Hessian, so that :meth:`leverage_bound` is :math:`\min(\|W^\top x\|^2, \|x\|^2/\lambda)`;
        ``None`` for a data-independent report, or when the noisy Hessian is not positive definite.
        """
        return self._W

    def cross_quantiles(self, uniform: bool | str = False, m: int = 1) -> tuple[float, float | None]:
        """Tail multipliers (b-route, e-route) of the cross terms: per target, a union over ``m``, or Hölder's.

        Parameters
        ----------
        uniform : bool or "domain"
            As in :meth:`bounds`: per target (False), jointly over ``m`` targets (True), or over
            the whole domain.
        m : int
            The number of targets of a joint bound.
        """
        return self._cross_quantiles(uniform, m)

    def _sigmas(self) -> dict[str, float]:
        return {c: getattr(self, _SIGMA_NAME[c]) for c in self.released_statistics}

    def overhead_pdp(self, target_x: ArrayLike, target_y: ArrayLike, delta: float, *,
                     accounting: str = "gaussian", weight: ArrayLike | None = None) -> np.ndarray | float:
        r"""The report's own pDP ε (at δ) towards each target: the price of publishing it.

        The released components are Gaussian mechanisms with per-instance :math:`\ell_2`
        sensitivities (at the fixed :math:`\theta^P`) :math:`\Delta_2 = |c_1|\|x\|` (gradient,
        Thm 14), :math:`\Delta_H = c_2\|x\|^2/\sqrt2` (Alg 6 in its iid coordinates, Thm 17) and
        :math:`\Delta_4 = c_2\|x\|^2` (:math:`\lambda_{\min}`, Weyl, Thm 11).

        ``accounting="gaussian"``: together they are one Gaussian mechanism with
        :math:`\mu^2 = \sum_i(\Delta_i/\sigma_i)^2`, and ε is the tight one,
        :func:`pdpkit.gaussian.gaussian_epsilon` ``(delta, sensitivity=mu, sigma=1)``.
        ``accounting="source"``: the sum of Thm 14 (statement 1), Thm 17 and Thm 11, each at
        δ/k for the k released components (so the total is (ε, δ)-pDP). Zero when nothing
        is released.

        Parameters
        ----------
        target_x : array_like, shape (m, d) or (d,)
            Targets' feature rows (as fitted: with the intercept column when there is one).
        target_y : array_like, shape (m,) or scalar
            Targets' labels.
        delta : float
            δ ∈ (0, 1) at which ε is stated.
        accounting : {"gaussian", "source"}
            ``"gaussian"`` (default): the components composed as one Gaussian mechanism, tight ε;
            ``"source"``: the sum of the source's per-component bounds at δ/k.
        weight : array_like, shape (m,) or scalar, optional
            The targets' weights in [0, 1] in a weighted fit (as in :meth:`epsilon_bound`):
            the sensitivities are multiplied by them. ``None``: 1.

        Returns
        -------
        numpy.ndarray of shape (m,), or float for one target of shape (d,).
        """
        tx, ty, scalar = self._targets(target_x, target_y)
        d1, d2 = self.loss._d1_d2(tx @ self.theta, ty)
        if weight is not None:
            v = np.imag(self._with_weight(ty, weight))
            d1, d2 = d1 * v, d2 * v
        xx = np.einsum("ij,ij->i", tx, tx)
        ad1 = np.abs(d1)
        sens = {"gradient": np.where((ad1 == 0) | (xx == 0), 0.0, ad1 * np.sqrt(xx)),
                "hessian": d2 * xx / _SQRT2, "lambda_min": d2 * xx}
        out = _overhead_eps(sens, self._sigmas(), delta, accounting)
        return float(out[0]) if scalar else out

    def dp_epsilon(self, delta: float, *, norm_bound: float = 1.0, accounting: str = "gaussian") -> float:
        r"""(ε, δ)-DP of the report's releases for rows with :math:`\|x\| \le R` (``norm_bound``).

        As :meth:`overhead_pdp` with the worst-case sensitivities :math:`LR`,
        :math:`\beta R^2/\sqrt2`, :math:`\beta R^2` (``loss.lipschitz``, ``loss.smoothness``):
        Thm 14, 17 and 11's DP statements, or their tight composition. ``inf`` for a released
        gradient of a loss with unbounded gradient (squared); 0 when nothing is released.

        Parameters
        ----------
        delta : float
            δ ∈ (0, 1) at which ε is stated.
        norm_bound : float
            R > 0, the public bound on every row's Euclidean norm (with the intercept column
            when there is one); default 1.
        accounting : {"gaussian", "source"}
            ``"gaussian"`` (default): the components composed as one Gaussian mechanism, tight ε;
            ``"source"``: the sum of the source's per-component bounds at δ/k.

        Returns
        -------
        float
            ε ≥ 0 (``inf`` when a released component has unbounded sensitivity).
        """
        R = float(check_positive(norm_bound, "norm_bound"))
        L, beta = self.loss.lipschitz, self.loss.smoothness
        sens = {"gradient": np.array([L * R]), "hessian": np.array([beta * R * R / _SQRT2]),
                "lambda_min": np.array([beta * R * R])}
        return float(_overhead_eps(sens, self._sigmas(), delta, accounting)[0])

    # ------------------------------------------------------------- readable result
    def bounds(self, target_x: ArrayLike, target_y: ArrayLike | None = None, *, uniform: bool | str = False,
               label_bounds: tuple[float, float] | None = None, guarantee: Any = None,
               index: Any = None, weight: ArrayLike | None = None) -> PersonalBounds:
        r"""Every person's private bound as a readable result: the bounds, ρ, the method and the guarantees.

        With ``target_y`` the bounds are :meth:`epsilon_bound`. Without it (``None``: the
        person does not know, or does not give, the label) each bound is the largest
        :meth:`epsilon_bound` over every label the person might have, so it holds whatever the
        label is: the two labels :math:`\pm1` of the logistic loss, or every :math:`y` in
        ``label_bounds`` for a regression loss :math:`f(t; y) = h(y - t)` (``"huber"``,
        ``"robust_log"``, ``"squared"``). The report's random events do not involve
        :math:`y` (the cross term's tail is that of :math:`x^\top b`, the Hessian's and
        :math:`\lambda_{\min}`'s do not see the target), so the maximum over the labels
        holds with the same probability :math:`1 - \rho` (:meth:`sup_over_labels` says how the
        maximum over an interval is found).

        Parameters
        ----------
        target_x : array_like, shape (m, d) or (d,)
            The rows as the model was fitted on them (encoded, intercept column included).
        target_y : array_like, shape (m,) or scalar, or None
            The labels as fitted (:math:`\pm1` for the logistic loss), or ``None`` for the
            bound valid for every label.
        uniform : bool or "domain"
            As in :meth:`epsilon_bound`.
        label_bounds : tuple of float, optional
            ``(low, high)``, the public range of a regression label on the fitted scale
            (:math:`(-1, 1)` for a label encoded by a schema); needed without ``target_y``
            for a regression loss.
        guarantee : pdpkit.events.Guarantee, optional
            The release's total guarantee (with its parts ``"model"`` and ``"report"``), so
            the result can state the model's and the report's ε.
        index : array_like, optional
            Labels of the m people for :meth:`PersonalBounds.to_frame`.
        weight : array_like, shape (m,) or scalar, optional
            The people's weights in [0, 1] in a weighted fit (:meth:`epsilon_bound`); ``None``:
            the bound for every weight.

        Returns
        -------
        PersonalBounds
        """
        uniform = self._check_uniform(uniform)
        if target_y is not None:
            eps = self.epsilon_bound(target_x, target_y, uniform=uniform, weight=weight)
            known = True
        else:
            eps = self.sup_over_labels(target_x, uniform=uniform, label_bounds=label_bounds, weight=weight)
            known = False
        eps = np.atleast_1d(np.asarray(eps, dtype=np.float64))
        total_eps = total_delta = report_eps = report_delta = None
        if guarantee is not None:
            try:
                total_eps, total_delta = float(guarantee.epsilon), float(guarantee.delta)
                parts = {p.name: p for p in getattr(guarantee, "parts", ())}
            except (AttributeError, TypeError, ValueError):
                raise TypeError("guarantee must be a pdpkit.events.Guarantee (epsilon, delta, parts)") from None
            rep = parts.get("report") or next((p for n, p in parts.items() if n.endswith(" report")), None)
            if rep is not None:  # "report", or an estimator's "<Estimator> report" in an accountant's ledger
                report_eps, report_delta = float(rep.epsilon), float(rep.delta)
            elif not self.released_statistics:
                report_eps = 0.0
        return PersonalBounds(epsilon=eps, label_known=np.full(eps.shape, known), rho=self.rho, method=self.method,
                              uniform=uniform, total_epsilon=total_eps, total_delta=total_delta,
                              report_epsilon=report_eps, report_delta=report_delta, index=index)

    def sup_over_labels(self, target_x: ArrayLike, *, uniform: bool | str = False,
                        label_bounds: tuple[float, float] | None = None,
                        weight: ArrayLike | None = None) -> np.ndarray | float:
        r"""The bound that holds whatever the target's label: :meth:`epsilon_bound` maximized over the labels.

        Logistic loss: the larger of the bounds at :math:`y = \pm1`. Regression losses
        :math:`f(t; y) = h(y - t)` with :math:`h` even and convex, :math:`|h'|` nondecreasing
        and :math:`h''` nonincreasing in :math:`|r|` (``"huber"``, ``"robust_log"``,
        ``"squared"``): with :math:`t = x^\top\theta^P` fixed, the bound depends on the
        label only through :math:`r = y - t`, as

        .. math::

           B(r) = T(c_2(r)) + A\,c_1(r)^2 + K\,|c_1(r)|,

        where :math:`T` (the log term) is nondecreasing in :math:`c_2`, :math:`A = \|x\|^2/(2\sigma^2)`
        and :math:`K \ge 0` (the cross term, linear in :math:`|c_1|`) do not depend on the label;
        :math:`c_2` falls and :math:`|c_1|` rises with :math:`|r|`. Where :math:`B` is largest
        is not at an end of the range in general (near :math:`r = 0` the curvature wins, far
        out the gradient, and a local maximum can lie between), but on any interval
        :math:`[a, b]` of :math:`|r|`, :math:`B \le T(c_2(a)) + A c_1(b)^2 + K|c_1(b)|`.
        Branch and bound with this bound, on the range of :math:`|r|` that ``label_bounds``
        allows, discards every interval whose bound is within a relative :math:`10^{-7}` of
        the best value found — so the maximum is certified to lie within :math:`10^{-7}` of
        it, in the remaining intervals — and a golden-section search on each run of adjacent
        remaining intervals (80 steps) then finds the maximum to rounding (``tests/test_personal_bounds.py``
        compares with a dense grid of labels, and with the end points, which miss interior
        maxima).

        Parameters
        ----------
        target_x : array_like, shape (m, d) or (d,)
            Rows as fitted.
        uniform : bool or "domain"
            As in :meth:`epsilon_bound`.
        label_bounds : tuple of float, optional
            ``(low, high)`` of a regression label on the fitted scale (required for a
            regression loss, ignored for the logistic loss).
        weight : array_like, shape (m,) or scalar, optional
            The targets' weights in [0, 1] in a weighted fit (:meth:`epsilon_bound`): a fixed
            positive factor per target keeps the monotonicity the search relies on.

        Returns
        -------
        numpy.ndarray of shape (m,), or float for one target of shape (d,).
        """
        uniform = self._check_uniform(uniform)
        name = getattr(self.loss, "name", "")
        tx, scalar = self._finite_rows(target_x)
        m = tx.shape[0]
        v = None if weight is None else np.imag(self._with_weight(np.zeros(m), weight))
        if name == "logistic":
            out = np.maximum(self.epsilon_bound(tx, np.ones(m), uniform=uniform, weight=v),
                             self.epsilon_bound(tx, -np.ones(m), uniform=uniform, weight=v))
            return float(out[0]) if scalar else out
        if not isinstance(self.loss, (Huber, RobustLog, Squared)):
            raise TypeError(f"a bound for every label needs the logistic loss or a regression loss h(y - t) "
                            f"('huber', 'robust_log', 'squared'); got {name!r}")
        if label_bounds is None:
            raise ValueError(f"the {name!r} loss has real labels: a bound for every label needs label_bounds="
                             "(low, high), the label's public range on the fitted scale")
        try:
            lo, hi = (float(v) for v in label_bounds)
        except (TypeError, ValueError):
            raise TypeError("label_bounds must be a pair of numbers (low, high)") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"label_bounds must be finite with low < high; got {label_bounds!r}")
        terms = self._label_free_terms(tx, uniform)
        t = tx @ self.theta
        r_lo, r_hi = lo - t, hi - t
        a0 = np.where((r_lo <= 0.0) & (r_hi >= 0.0), 0.0, np.minimum(np.abs(r_lo), np.abs(r_hi)))
        b0 = np.maximum(np.abs(r_lo), np.abs(r_hi))
        out = _branch_and_bound(self.loss, terms, a0, b0, v)
        self._finite_or_raise(out, target_x, "sup_over_labels")
        return float(out[0]) if scalar else out

    def _label_free_terms(self, tx: np.ndarray, uniform: bool | str) -> dict[str, np.ndarray | float]:
        """What the bound needs besides (c1, c2): ||x||^2, the leverage bound and the cross term's factor."""
        m = tx.shape[0]
        xx = np.einsum("ij,ij->i", tx, tx)
        mu = self.leverage_bound(tx)
        qb, qe = self._cross_quantiles(uniform, m)
        norm = np.sum(np.abs(tx), axis=1) if uniform == "domain" else np.sqrt(xx)
        K = self.sigma * qb * norm
        if qe is not None:
            K = np.minimum(K, np.abs(tx @ self.gradient_release) + self.sigma_gradient * qe * norm)
        return {"xx": xx, "mu": mu, "K": K, "s2": self.sigma * self.sigma, "lam": self.lam,
                "lam_lo": self.lambda_lower}


def _k_bound(Xe: np.ndarray, yc: np.ndarray, off: int, rep: PrivacyReport, Mcat: np.ndarray, k: int, qb: float,
             qe: float | None, l1: bool) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        return rep._bound_block(Xe, yc, Mcat, k, qb, qe, l1)


def _report_from_dict(data: dict[str, Any]) -> PrivacyReport:
    return PrivacyReport.from_dict(data)


# ============================================================ every label at once
_SUP_BB_RTOL = 1e-7  # branch and bound: every interval's upper bound within this of the best value
_SUP_MAX_ROUNDS = 200
_SUP_GOLDEN_ROUNDS = 80  # golden section in each remaining interval: 0.618^80 ~ 2e-17 of its width


def _bound_from_terms(terms: dict[str, Any], c1: np.ndarray, c2: np.ndarray, sel: np.ndarray) -> np.ndarray:
    """epsilon_bound's formula from (c1, c2) and the label-free terms of the targets ``sel``."""
    xx, mu, K = terms["xx"][sel], terms["mu"][sel], terms["K"][sel]
    lam, lam_lo, s2 = terms["lam"], terms["lam_lo"], terms["s2"]
    a = c2 * mu
    c2x = c2 * xx
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t1 = np.where(a < 1.0, -np.log1p(-np.minimum(a, 1.0)), np.inf)
        t1 = np.minimum(t1, np.log1p(c2x / np.maximum(lam, lam_lo - c2x)))
        ac1 = np.abs(c1)
        cross = np.where(ac1 == 0, 0.0, ac1 * K)
        return t1 + c1 * c1 * xx / (2.0 * s2) + cross / s2


def _branch_and_bound(loss: GLMLoss, terms: dict[str, Any], a0: np.ndarray, b0: np.ndarray,
                      weight: np.ndarray | None = None) -> np.ndarray:
    r"""max over |r| in [a0, b0] of B (:meth:`PrivacyReport.sup_over_labels`): branch and bound, then golden section.

    ``weight``: each target's weight v (c1 and c2 multiplied by it), or None (1).
    """
    m = a0.shape[0]

    def derivs(r: np.ndarray, sel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c1, c2 = loss._d1_d2(np.zeros_like(r), r)  # f(t; y) = h(y - t): c1, c2 depend on r = y - t only
        if weight is not None:
            return np.abs(c1) * weight[sel], c2 * weight[sel]
        return np.abs(c1), c2

    def value(sel: np.ndarray, r: np.ndarray) -> np.ndarray:
        c1, c2 = derivs(r, sel)
        return _bound_from_terms(terms, c1, c2, sel)

    def upper(sel: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        # log term at the smallest |r| (largest curvature), gradient terms at the largest |r|
        c1b, _ = derivs(b, sel)
        _, c2a = derivs(a, sel)
        return _bound_from_terms(terms, c1b, c2a, sel)

    every = np.arange(m)
    best = np.maximum(value(every, a0), value(every, b0))
    idx, a, b, ub = every, a0.copy(), b0.copy(), upper(every, a0, b0)
    fin_idx, fin_a, fin_b, fin_ub = [], [], [], []  # intervals whose bound is within _SUP_BB_RTOL of the best
    for _ in range(_SUP_MAX_ROUNDS):
        done = ub <= best[idx] * (1.0 + _SUP_BB_RTOL)
        fin_idx.append(idx[done]), fin_a.append(a[done]), fin_b.append(b[done]), fin_ub.append(ub[done])
        idx, a, b = idx[~done], a[~done], b[~done]
        if idx.size == 0:
            break
        mid = 0.5 * (a + b)
        np.maximum.at(best, idx, value(idx, mid))
        idx = np.concatenate([idx, idx])
        a, b = np.concatenate([a, mid]), np.concatenate([mid, b])
        ub = upper(idx, a, b)
    else:  # pragma: no cover - the rounds are ample: keep the safe upper bounds
        np.maximum.at(best, idx, ub)
    idx, a, b, ub = (np.concatenate(v) for v in (fin_idx, fin_a, fin_b, fin_ub))
    keep = ub > best[idx]  # an interval that may hold a larger value: find its maximum (golden section)
    idx, a, b = _merge_adjacent(idx[keep], a[keep], b[keep])
    g = 0.5 * (math.sqrt(5.0) - 1.0)
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = value(idx, c), value(idx, d)
    for _ in range(_SUP_GOLDEN_ROUNDS):
        left = fc >= fd  # the maximum lies in [a, d]
        b = np.where(left, d, b)
        a = np.where(left, a, c)
        c_new = np.where(left, b - g * (b - a), d)
        d_new = np.where(left, c, a + g * (b - a))
        f_new = value(idx, np.where(left, c_new, d_new))
        fc, fd = np.where(left, f_new, fd), np.where(left, fc, f_new)
        c, d = c_new, d_new
    if idx.size:
        np.maximum.at(best, idx, np.maximum(fc, fd))
    return best


def _merge_adjacent(idx: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Join a target's intervals that share an end point: [a, m] and [m, b] become [a, b].

    The intervals the branch and bound keeps lie around each local maximum, side by side
    (bisection halves share their midpoint exactly): one golden-section search per run of
    them instead of one per interval.
    """
    if idx.size == 0:
        return idx, a, b
    order = np.lexsort((a, idx))
    idx, a, b = idx[order], a[order], b[order]
    start = np.ones(idx.size, dtype=bool)
    start[1:] = (idx[1:] != idx[:-1]) | (a[1:] != b[:-1])
    first = np.flatnonzero(start)
    return idx[first], a[first], np.maximum.reduceat(b, first)


def _fmt(v: float | None, digits: int = 3) -> str:
    """A bound or a guarantee's ε/δ for a reader: rounded up to ``digits`` significant digits ("?" if unknown).

    Every number shown this way reads "at most", so its digits are never below the number.
    """
    return "?" if v is None else _fmt_up(v, digits)


class PersonalBounds(np.lib.mixins.NDArrayOperatorsMixin):
    r"""Every person's published privacy bound, with what it means: ρ, the method, and the guarantees.

    :meth:`PrivacyReport.bounds` builds it. ``epsilon[i]`` bounds person i's ex-post
    privacy loss from the published model (:meth:`PrivacyReport.epsilon_bound`): with
    probability at least :math:`1 - \rho` over the noise of the model and of its report,
    :math:`|\log p_D(\tilde\theta) - \log p_{D'}(\tilde\theta)| \le` ``epsilon[i]`` for the data
    sets with and without the person, so their participation changed the probability
    (density) of the published coefficients by at most a factor :math:`e^{\varepsilon_i}`.
    ``total_epsilon`` (at ``total_delta``) is the guarantee the release gives everybody;
    ``report_epsilon`` the report's own share of it.

    It behaves as the array of the bounds in arithmetic and in numpy (``np.asarray``,
    comparisons, ``len``, indexing, ``max()``, ``mean()``, ``tolist()``), so code written for the
    bare array keeps working.

    Parameters
    ----------
    epsilon : array_like, shape (m,)
        The bounds, in nats (natural logarithm).
    label_known : array_like of bool, shape (m,)
        Whether each bound used the person's label (``False``: the bound for every label).
    rho : float
        Failure probability of each bound (of all of them together when ``uniform``).
    method : str
        The report's method (``"data-independent"``, ``"data-dependent"``, ``"adaptive"``).
    uniform : bool or "domain"
        Whether the bounds hold jointly (:meth:`PrivacyReport.epsilon_bound`).
    total_epsilon, total_delta : float, optional
        The release's total guarantee (model and report).
    report_epsilon, report_delta : float, optional
        The report's part of it (0 for a report that releases nothing).
    index : array_like, optional
        Labels of the people, for :meth:`to_frame`.
    """

    __array_priority__ = 20

    def __init__(self, *, epsilon: ArrayLike, label_known: ArrayLike, rho: float, method: str,
                 uniform: bool | str = False, total_epsilon: float | None = None, total_delta: float | None = None,
                 report_epsilon: float | None = None, report_delta: float | None = None, index: Any = None) -> None:
        eps = np.array(epsilon, dtype=np.float64, copy=True).reshape(-1)
        eps.flags.writeable = False
        known = np.array(label_known, dtype=bool, copy=True).reshape(-1)
        if known.shape != eps.shape:
            raise ValueError(f"label_known must have the shape of epsilon {eps.shape}; got {known.shape}")
        known.flags.writeable = False
        if index is not None and len(index) != eps.shape[0]:
            raise ValueError(f"index must have {eps.shape[0]} entries; got {len(index)}")
        self.epsilon = eps
        self.label_known = known
        self.rho = _check_rho(rho)
        self.method = _check_method(method)
        self.uniform = uniform
        self.total_epsilon = total_epsilon
        self.total_delta = total_delta
        self.report_epsilon = report_epsilon
        self.report_delta = report_delta
        self.index = index

    # ------------------------------------------------------------ the array
    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        out = self.epsilon if dtype is None else self.epsilon.astype(dtype)
        return np.array(out, copy=True) if copy or out is self.epsilon else out

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        args = [np.asarray(x) if isinstance(x, PersonalBounds) else x for x in inputs]
        return getattr(ufunc, method)(*args, **kwargs)

    def __len__(self) -> int:
        return int(self.epsilon.shape[0])

    def __getitem__(self, key: Any) -> Any:
        return self.epsilon[key]

    def __iter__(self):
        return iter(self.epsilon.tolist())

    _ARRAY_ATTRS = frozenset({"max", "min", "mean", "sum", "std", "argmax", "argmin", "tolist", "astype", "copy",
                              "dtype", "size", "ndim", "round", "clip", "all", "any", "item"})

    def __getattr__(self, name: str) -> Any:
        # the read-only ndarray methods code written for the bare array used (bounds.max(), .tolist(), ...)
        if name in PersonalBounds._ARRAY_ATTRS:
            return getattr(self.__dict__["epsilon"], name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the bounds, ``(m,)``."""
        return self.epsilon.shape

    @property
    def factor(self) -> np.ndarray:
        r""":math:`e^{\varepsilon_i}`: by how much each person's participation can change the published model's likelihood."""
        with np.errstate(over="ignore"):
            return np.exp(self.epsilon)

    # ------------------------------------------------------------ reading
    def _holds(self) -> str:
        p = 1.0 - self.rho
        pct = f"{100 * p:.6g}%"
        return f"with probability at least {pct}" + (" (for all of them at once)" if self.uniform else "")

    def _guarantee_line(self) -> str:
        if self.total_epsilon is None:
            return "The model's overall guarantee was not given (pass guarantee=release.guarantee)."
        line = (f"Everyone in the data is protected by the overall guarantee of everything released with the model: "
                f"(epsilon, delta) = ({_fmt(self.total_epsilon)}, {_fmt(self.total_delta, 2)}) differential privacy")
        if self.report_epsilon is not None:
            if self.report_epsilon == 0.0:
                line += "; the report released no statistics of its own (it cost nothing)."
            else:
                line += (f", of which publishing the report took ({_fmt(self.report_epsilon)}, "
                         f"{_fmt(self.report_delta, 2)}).")
        else:
            line += "."
        return line

    def summary(self) -> str:
        """A few lines of plain language: what the bounds say, how sure they are, and the overall guarantee.

        Returns
        -------
        str
        """
        m = len(self)
        label = {True: "", False: " whatever their label"}
        if m == 1:
            e = float(self.epsilon[0])
            lines = [f"{self._holds().capitalize()}, this person's privacy loss from the published model is at most "
                     f"{_fmt(e)}{label[bool(self.label_known[0])]},",
                     f"i.e. their participation changes the probability of any outcome of the published model by "
                     f"at most a factor {_fmt(float(self.factor[0]))}."]
        else:
            q = np.quantile(self.epsilon, [0.0, 0.5, 1.0]) if m else np.zeros(3)
            lines = [f"{self._holds().capitalize()}, each of these {m} people's privacy loss from the published "
                     f"model is at most their own bound (median {_fmt(q[1])}, largest {_fmt(q[2])}, smallest "
                     f"{_fmt(q[0])}),",
                     f"i.e. a participation changes the probability of any outcome by at most a factor between "
                     f"{_fmt(math.exp(min(q[0], 700)))} and {_fmt(math.exp(min(q[2], 700)))}."]
            if not self.label_known.all():
                lines.append(f"{int((~self.label_known).sum())} bound(s) hold whatever the person's label.")
        lines.append(f"Bounds by the {self.method} report (ex-post per-instance privacy, in nats).")
        lines.append(self._guarantee_line())
        return "\n".join(lines)

    def to_frame(self) -> Any:
        """The bounds as a pandas DataFrame, one row per person.

        Returns
        -------
        pandas.DataFrame
            Columns ``epsilon_bound`` (nats), ``factor`` (:math:`e^\\varepsilon`),
            ``label_known`` and ``probability`` (:math:`1 - \\rho`, the bound's confidence);
            the attributes (``frame.attrs``) hold the method and the guarantees.
        """
        import pandas as pd

        frame = pd.DataFrame({"epsilon_bound": self.epsilon, "factor": self.factor,
                              "label_known": self.label_known, "probability": np.full(len(self), 1.0 - self.rho)},
                             index=self.index)
        frame.attrs.update(method=self.method, rho=self.rho, uniform=self.uniform, total_epsilon=self.total_epsilon,
                           total_delta=self.total_delta, report_epsilon=self.report_epsilon,
                           report_delta=self.report_delta)
        return frame

    def __repr__(self) -> str:
        # each bound rounded up to 4 significant digits: "epsilon <= 0.3755" never understates a bound
        arr = np.array2string(self.epsilon, threshold=8, edgeitems=3, separator=", ",
                              formatter={"float_kind": lambda v: _fmt(float(v), 4)})
        head = (f"PersonalBounds({len(self)} {'person' if len(self) == 1 else 'people'}, method={self.method!r}, "
                f"probability >= {1.0 - self.rho:.6g}{', jointly' if self.uniform else ''}")
        if self.total_epsilon is not None:
            head += f", total guarantee ({_fmt(self.total_epsilon, 4)}, {_fmt(self.total_delta, 3)})-DP"
        return f"{head}):\n  epsilon <= {arr} nats"

    def _repr_html_(self) -> str:
        import html

        # the table shows the bounds and factors as strings rounded up (to_frame keeps the exact numbers)
        frame = self.to_frame().head(20).copy()
        for col in ("epsilon_bound", "factor"):
            frame[col] = [_fmt(float(v), 4) for v in frame[col]]
        return "<pre>" + html.escape(self.summary()) + "</pre>" + frame.to_html()


# ================================================================== the mechanism
def privacy_report(fit: _objpert.ObjPertResult, X: ArrayLike, y: ArrayLike, *, method: str = "adaptive",
                   rho: float = 0.05, sigma_gradient: float | None = None, sigma_hessian: float | None = None,
                   sigma_lambda_min: float | None = None, rng: int | np.random.Generator | None = None) -> PrivacyReport:
    r"""Release a privacy report for an ObjPert fit (Redberg & Wang 2021, Alg 2 and Alg 4).

    * ``"data-independent"`` (Thm 8 + Thm 9, per-target :math:`\ell_2` form): releases
      nothing, costs nothing; :math:`\bar\mu = \|x\|^2/\lambda`.
    * ``"data-dependent"`` (Alg 2, rebuilt from Prop 21): releases :math:`\hat H` by Alg 6
      (``sigma_hessian``) and optionally :math:`\hat g` by Alg 5 (``sigma_gradient``).
      Needs :math:`\lambda \ge 2\tau\sigma_H`, else ``ValueError`` naming ``lam`` and nothing
      is released (the source's Alg 2 has no branch for it).
    * ``"adaptive"`` (Alg 4): also releases :math:`\hat\lambda^P_{\min}` by Alg 3
      (``sigma_lambda_min``); the standard or regularized estimator of Prop 12 (corrected).

    The releases are drawn in the order gradient, Hessian, :math:`\lambda_{\min}` from ``rng``.
    Their privacy is :meth:`PrivacyReport.overhead_pdp` / :meth:`PrivacyReport.dp_epsilon`;
    :func:`calibrate_report` chooses the noise scales for a DP budget.

    Parameters
    ----------
    fit : ObjPertResult
        From :func:`pdpkit.objpert.objpert_fit` (its non-public fields are not used).
    X, y : array_like
        The data set it was fitted on: numpy, memmap or Dask arrays, read by blocks (the
        gradient and the Hessian at the released point in one pass; no copy of ``X``).
    method : {"adaptive", "data-dependent", "data-independent"}
        Which report (above); default ``"adaptive"``.
    rho : float
        Total failure probability per target, in (0, 1) (:func:`rho_parts`); default 0.05.
    sigma_gradient, sigma_hessian, sigma_lambda_min : float or None
        Noise scales :math:`\sigma_2`, :math:`\sigma_H`, :math:`\sigma_4` (> 0), ``None`` for a
        component that is not released.
    rng : int, numpy.random.Generator or None
        Source of the releases' noise (an int seeds a fresh generator; ``None``: fresh entropy).

    Returns
    -------
    PrivacyReport
    """
    if not isinstance(fit, _objpert.ObjPertResult):
        raise TypeError(f"fit must be an ObjPertResult from pdpkit.objpert.objpert_fit; got {type(fit).__name__}")
    method = _check_method(method)
    rho = _check_rho(rho)
    sg, sh, sl = _check_sigmas(method, sigma_gradient, sigma_hessian, sigma_lambda_min)
    loss = fit.loss
    rows, y, stats = _check_rows(X, y, loss)  # read by blocks: X is never copied
    n, d = rows.shape
    if d != fit.d or n != fit.n:
        raise ValueError(f"X has shape {rows.shape}: not the data set fit was fitted on (its d = {fit.d}, or its "
                         "number of rows, differ)")
    gen = as_generator(rng)
    # the report is computed at the *released* theta: public, so its statistics' sensitivities
    # are those of a fixed theta (Thm 11, 14, 17), and it is published beside that theta
    # a weighted fit's report: the statistics below are of the weighted objective (each record's
    # weight v <= 1 keeps the loss's constants as sensitivities); the bounds take a target's weight
    unweighted = loss.base if isinstance(loss, _objpert.WeightedLoss) else loss
    base = dict(method=method, rho=rho, theta=fit.theta_released, lam=fit.lam, sigma=fit.sigma, loss=unweighted)
    if method == "data-independent":
        return PrivacyReport(**base)
    parts = rho_parts(rho, method=method)
    tau = _tau(d, parts["hessian"])
    if method == "data-dependent" and fit.lam < 2.0 * tau * sh:
        raise ValueError(f"lam must be >= 2*tau*sigma_hessian = {2.0 * tau * sh:.6g} for the data-dependent report "
                         f"(Prop 21, tau = {tau:.6g}); the fit has lam = {fit.lam:g}. Nothing was released: use "
                         "method='adaptive', a smaller sigma_hessian or a larger lam")
    resid = float(np.linalg.norm(_evaluate(rows, y, loss, fit.theta, fit.lam, fit.b, 1.0, False)[2]))
    if resid > 2.0 * fit.grad_tol + 1e-12 * _objpert.scale_from(rows, y, loss, stats):
        raise ValueError("X and y are not the data set fit was fitted on (the perturbed gradient at the fit's "
                         "point is above its tolerance)")
    theta = fit.theta_released
    # one pass at the released theta: the gradient and the Hessian, by blocks
    grad, Hu = _evaluate(rows, y, loss, theta, fit.lam, np.zeros(d), 1.0, True)[2:4]
    H = np.triu(Hu) + np.triu(Hu, 1).T
    g_rel = grad + sg * gen.standard_normal(d) if sg is not None else None  # Alg 5
    H_rel = _ag.analyze_gauss(H, sigma=sh, rng=gen)  # Alg 6
    l_rel = _ag.private_lambda_min(H, sigma=sl, rng=gen) if sl is not None else None  # Alg 3
    return PrivacyReport(**base, sigma_gradient=sg, sigma_hessian=sh, sigma_lambda_min=sl,
                         gradient_release=g_rel, hessian_release=H_rel, lambda_min_release=l_rel)


# ===================================================================== accounting
def _loss_constants(loss: GLMLoss, norm_bound: Any) -> tuple[float, float, float]:
    R = float(check_positive(norm_bound, "norm_bound"))
    return R, loss.lipschitz * R, loss.smoothness * R * R


def total_privacy(report: PrivacyReport, *, delta_model: float, delta_report: float, norm_bound: float = 1.0,
                  form: str = "tight", accounting: str = "gaussian", composition: str = "basic") -> tuple[float, float]:
    r"""(ε, δ)-DP of the model and its report together (Redberg & Wang 2021, Appendix B.2).

    The model: ObjPert with rows :math:`\|x\| \le R` (``norm_bound``), :math:`L R`,
    :math:`\beta R^2`. ``form="tight"``: its exact privacy profile
    (:func:`pdpkit.accounting.objpert_epsilon` with ``sharp=True``: the log-determinant constant
    :math:`\log(1 + \beta R^2/\lambda)`, valid for every λ); ``form="kifer"``: the source's
    guarantee (:func:`pdpkit.objpert.objpert_epsilon_classic`, Kifer et al.). The report:
    :meth:`PrivacyReport.dp_epsilon` (``accounting``).

    ``composition="basic"``: :math:`(\varepsilon_m + \varepsilon_r, \delta_m + \delta_r)`.
    ``composition="pld"`` (needs ``form="tight"``, ``accounting="gaussian"``): the
    pessimistic PLD of ObjPert (:func:`pdpkit.accounting.objpert_pld`) composed with the
    report's Gaussian mechanism in dp_accounting, and ε at the total
    :math:`\delta = \delta_m + \delta_r` — never larger than the basic composition's ε up to
    the PLD's (pessimistic) discretization, 1e-3.

    Parameters
    ----------
    report : PrivacyReport
        The released report (it carries the model's ``lam``, ``sigma`` and loss).
    delta_model : float
        δ ∈ (0, 1) spent on the model (ObjPert).
    delta_report : float
        δ ∈ (0, 1) spent on the report's releases.
    norm_bound : float
        R > 0, the public bound on every row's Euclidean norm; default 1.
    form : {"tight", "kifer"}
        The model's guarantee (above); default ``"tight"``.
    accounting : {"gaussian", "source"}
        The report's accounting, as in :meth:`PrivacyReport.dp_epsilon`; default ``"gaussian"``.
    composition : {"basic", "pld"}
        How the two are composed (above); default ``"basic"``.

    Returns
    -------
    (eps, delta) : tuple of float
    """
    if not isinstance(report, PrivacyReport):
        raise TypeError(f"report must be a PrivacyReport; got {type(report).__name__}")
    dm = float(check_probability(delta_model, "delta_model"))
    dr = float(check_probability(delta_report, "delta_report"))
    if form not in ("tight", "kifer"):
        raise ValueError(f"form must be 'tight' or 'kifer'; got {form!r}")
    if composition not in ("basic", "pld"):
        raise ValueError(f"composition must be 'basic' or 'pld'; got {composition!r}")
    if accounting not in ("gaussian", "source"):
        raise ValueError(f"accounting must be 'gaussian' or 'source'; got {accounting!r}")
    R, L, beta = _loss_constants(report.loss, norm_bound)
    if not math.isfinite(L):
        raise ValueError(f"loss {report.loss.name!r} has an unbounded gradient: ObjPert with it is not DP")
    lam, sigma = report.lam, report.sigma
    if composition == "pld":
        if form != "tight" or accounting != "gaussian":
            raise ValueError("composition='pld' needs form='tight' and accounting='gaussian'")
        import warnings

        from dp_accounting.pld import privacy_loss_distribution as _pld

        pld = _accounting.objpert_pld(L=L, beta=beta, lam=lam, sigma=sigma, sharp=True,
                                      value_discretization_interval=_PLD_H)
        if report.released_statistics:
            mu = report_event(L=L, beta=beta, sigma_gradient=report.sigma_gradient, sigma_hessian=report.sigma_hessian,
                              sigma_lambda_min=report.sigma_lambda_min).mu
            pld = pld.compose(_pld.from_gaussian_mechanism(1.0 / mu, sensitivity=1.0, pessimistic_estimate=True,
                                                           value_discretization_interval=_PLD_H))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            eps = float(pld.get_epsilon_for_delta(dm + dr))
        return eps, dm + dr
    if form == "tight":
        eps_m = float(_accounting.objpert_epsilon(dm, L=L, beta=beta, lam=lam, sigma=sigma, sharp=True))
    else:
        eps_m = float(_objpert.objpert_epsilon_classic(L=L, beta=beta, lam=lam, sigma=sigma, delta=dm, form="kifer"))
    eps_r = report.dp_epsilon(dr, norm_bound=R, accounting=accounting)
    return eps_m + eps_r, dm + dr


def calibrate_report(eps: float, delta: float, *, method: str, loss: str | GLMLoss = "logistic",
                     norm_bound: float = 1.0, weights: Mapping[str, float] | None = None,
                     accounting: str = "gaussian") -> dict[str, float | None]:
    r"""Noise scales of the report's releases for an (ε, δ)-DP budget (Appendix C.3; Cor 16 done exactly).

    ``weights`` (default: equal over the method's components — gradient and Hessian for
    ``"data-dependent"``, and :math:`\lambda_{\min}` for ``"adaptive"``; a zero or missing
    weight means the component is not released) share the budget:

    * ``accounting="gaussian"``: :math:`(\Delta_i/\sigma_i)^2 = w_i\mu^2` with :math:`\mu` the
      tight Gaussian μ of (ε, δ) (:func:`pdpkit.gaussian.gaussian_sigma`);
    * ``accounting="source"``: component i gets :math:`\varepsilon_i = w_i\varepsilon` at
      :math:`\delta/k` and the σ of Thm 14/17/11 (:func:`pdpkit.analyze_gauss.analyze_gauss_sigma`).

    Sensitivities :math:`LR`, :math:`\beta R^2/\sqrt2`, :math:`\beta R^2`. The scales are
    then rounded up until :meth:`PrivacyReport.dp_epsilon` at δ is at most ``eps`` (never on
    the unsafe side).

    Parameters
    ----------
    eps : float
        The report's budget ε > 0.
    delta : float
        The report's budget δ ∈ (0, 1).
    method : {"adaptive", "data-dependent", "data-independent"}
        The report's method; ``"data-independent"`` releases nothing (all scales ``None``).
    loss : str or GLMLoss
        The model's loss (a loss from :mod:`pdpkit.losses` or its name), whose constants
        give the sensitivities; default ``"logistic"``.
    norm_bound : float
        R > 0, the public bound on every row's Euclidean norm; default 1.
    weights : dict or None
        ``{component: weight ≥ 0}`` over ``"gradient"``, ``"hessian"``, ``"lambda_min"``, the
        shares of the budget (normalized to sum 1); ``None``: equal shares.
    accounting : {"gaussian", "source"}
        As in :meth:`PrivacyReport.dp_epsilon`; default ``"gaussian"``.

    Returns
    -------
    dict
        ``{"sigma_gradient": ..., "sigma_hessian": ..., "sigma_lambda_min": ...}`` (``None``:
        not released), ready for ``privacy_report(..., **result)``.
    """
    eps = float(check_positive(eps, "eps"))
    delta = float(check_probability(delta, "delta"))
    method = _check_method(method)
    loss = _check_loss(loss)
    if accounting not in ("gaussian", "source"):
        raise ValueError(f"accounting must be 'gaussian' or 'source'; got {accounting!r}")
    R, L, beta = _loss_constants(loss, norm_bound)
    allowed = {"data-independent": (), "data-dependent": ("gradient", "hessian"),
               "adaptive": ("gradient", "hessian", "lambda_min")}[method]
    if weights is None:
        w = {c: 1.0 for c in allowed}
    else:
        if not isinstance(weights, Mapping):
            raise TypeError("weights must be a dict {component: weight}")
        unknown = set(weights) - set(allowed)
        if unknown:
            raise ValueError(f"weights for method={method!r} may name only {allowed}; got {sorted(unknown)}")
        w = {c: float(check_positive(v, f"weights[{c!r}]")) if v != 0 else 0.0 for c, v in weights.items()}
        w = {c: v for c, v in w.items() if v > 0}
    out: dict[str, float | None] = {_SIGMA_NAME[c]: None for c in _COMPONENTS}
    if method == "data-independent":
        return out
    if "hessian" not in w:
        raise ValueError(f"method={method!r} must release the Hessian: weights['hessian'] must be > 0")
    if method == "adaptive" and "lambda_min" not in w:
        raise ValueError("method='adaptive' must release lambda_min: weights['lambda_min'] must be > 0")
    total = sum(w.values())
    w = {c: v / total for c, v in w.items()}
    if "gradient" in w and not math.isfinite(L):
        raise ValueError(f"loss {loss.name!r} has an unbounded gradient: releasing it is not DP (weights['gradient'] = 0)")
    # a function of public numbers only: computed once per process for each budget and set-up
    return dict(_calibrated_scales(eps, delta, accounting, L, beta, tuple(w.items())))


@functools.lru_cache(maxsize=256)
def _calibrated_scales(eps: float, delta: float, accounting: str, L: float, beta: float,
                       weights: tuple[tuple[str, float], ...]) -> tuple[tuple[str, float | None], ...]:
    """The scales of :func:`calibrate_report` for normalized weights (checked by the caller)."""
    w = dict(weights)
    out: dict[str, float | None] = {_SIGMA_NAME[c]: None for c in _COMPONENTS}
    sens = {"gradient": L, "hessian": beta / _SQRT2, "lambda_min": beta}
    if accounting == "gaussian":
        s_unit = float(_gaussian.gaussian_sigma(eps, delta=delta, sensitivity=1.0))  # sigma for mu = 1/s_unit
        for c, wc in w.items():
            out[_SIGMA_NAME[c]] = sens[c] * s_unit / math.sqrt(wc)
    else:
        dk = delta / len(w)
        for c, wc in w.items():
            if c == "hessian":
                s = _ag.analyze_gauss_sigma(wc * eps, delta=dk, beta=beta)  # Thm 17: Delta = beta/sqrt 2
            else:  # Thm 14 / Thm 11: Delta^2/(2s^2) + Delta sqrt(2 log(1/delta))/s, i.e. the "upper" variant's formula
                s = _ag.analyze_gauss_sigma(wc * eps, delta=dk, beta=sens[c], variant="upper")
            out[_SIGMA_NAME[c]] = float(s)
    sig = {c: out[_SIGMA_NAME[c]] for c in w}
    wc_sens = {c: np.array([sens[c]]) for c in _COMPONENTS}
    for _ in range(200):
        if float(_overhead_eps(wc_sens, sig, delta, accounting)[0]) <= eps:
            break
        sig = {c: v * (1.0 + 1e-12) for c, v in sig.items()}
    else:  # pragma: no cover - the solvers are accurate to ~1e-12
        raise ArithmeticError("could not round the noise scales to the safe side")
    for c, v in sig.items():
        out[_SIGMA_NAME[c]] = v
    return tuple(out.items())


# ======================================================================= coverage
def report_coverage(X: ArrayLike, y: ArrayLike, loss: str | GLMLoss, target_x: ArrayLike, target_y: ArrayLike, *,
                    member: ArrayLike, lam: float, sigma: float, method: str = "adaptive", rho: float = 0.05,
                    sigma_gradient: float | None = None, sigma_hessian: float | None = None,
                    sigma_lambda_min: float | None = None, uniform: bool | str = False, n_trials: int = 200,
                    alpha: float = 0.05, rng: int | np.random.Generator | None = None,
                    progress: bool | None = None) -> dict[str, Any]:
    r"""Monte Carlo coverage of the report: how often :math:`\bar\epsilon_1^P < \epsilon_1`.

    Each trial runs ObjPert on ``(X, y)`` (fresh :math:`b`), releases a report and compares
    :meth:`PrivacyReport.epsilon_bound` with the exact, **non-private**
    :func:`pdpkit.objpert.ex_post_pdp` of every target (``member`` says which neighbour:
    ``True`` removes a row of ``X``, ``False`` adds the target). A bound is counted as
    failing when it is below :math:`\epsilon_1` by more than :math:`10^{-9}` relative.
    An analysis tool: it uses the data and must not be published.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Features of the data set, rows of norm at most 1.
    y : array_like, shape (n,)
        Labels in the loss's domain.
    loss : str or GLMLoss
        A loss from :mod:`pdpkit.losses` or its name.
    target_x : array_like, shape (m, d)
        Targets' feature rows.
    target_y : array_like, shape (m,) or scalar
        Targets' labels.
    member : bool or array of bool, shape (m,)
        As in :func:`pdpkit.objpert.ex_post_pdp`: ``True`` for a target that is a row of
        ``(X, y)`` (neighbour by removal), ``False`` for one that is added.
    lam : float
        ObjPert's regularization :math:`\lambda > 0`.
    sigma : float
        ObjPert's noise scale σ > 0.
    method : {"adaptive", "data-dependent", "data-independent"}
        The report's method, as in :func:`privacy_report`; default ``"adaptive"``.
    rho : float
        The report's failure probability per target, in (0, 1); default 0.05.
    sigma_gradient, sigma_hessian, sigma_lambda_min : float or None
        The report's noise scales, as in :func:`privacy_report`.
    uniform : bool or "domain"
        As in :meth:`PrivacyReport.epsilon_bound`; default ``False``.
    n_trials : int
        Number of independent fits and reports, ≥ 1; default 200.
    alpha : float
        1 − confidence level of the Clopper–Pearson intervals, in (0, 1); default 0.05.
    rng : int, numpy.random.Generator or None
        Source of all the noise (an int seeds a fresh generator; ``None``: fresh entropy).
    progress : bool or None
        A tqdm progress bar over the trials (``None``, the default: only when a person
        watches; ``PDPKIT_PROGRESS=0`` turns it off).

    Returns
    -------
    dict
        ``trials``; ``failures`` and ``rate`` per target; ``ci_upper`` per target and
        ``max_ci_upper`` (Clopper–Pearson, two-sided level ``1 - alpha``,
        :func:`pdpkit.audit.clopper_pearson`); ``any_failures``, ``any_rate``, ``any_ci``
        (trials in which some target failed: the uniform claim); ``median_bound``,
        ``median_eps1`` and ``median_ratio`` (bound / ε₁) over all trials and targets.
    """
    from .audit import clopper_pearson

    loss = _check_loss(loss)
    n_trials = check_int_at_least(n_trials, "n_trials", 1)
    alpha = float(check_probability(alpha, "alpha"))
    gen = as_generator(rng)
    tx = as_finite_array(target_x, "target_x")
    if tx.ndim != 2:
        raise ValueError(f"target_x must have shape (m, d); got {tx.shape}")
    m = tx.shape[0]
    fails = np.zeros(m, dtype=np.int64)
    any_fail = 0
    bounds = np.empty((n_trials, m))
    eps1 = np.empty((n_trials, m))
    for t in _progress(range(n_trials), total=n_trials, desc="report coverage", progress=progress):
        fit = _objpert.objpert_fit(X, y, loss, lam=lam, sigma=sigma, rng=gen)
        rep = privacy_report(fit, X, y, method=method, rho=rho, sigma_gradient=sigma_gradient,
                             sigma_hessian=sigma_hessian, sigma_lambda_min=sigma_lambda_min, rng=gen)
        bd = rep.epsilon_bound(tx, target_y, uniform=uniform)
        e1 = _objpert.ex_post_pdp(_objpert.released_state_nonprivate(fit, X, y), X, y, tx, target_y, member=member)
        f = bd < e1 * (1.0 - 1e-9) - 1e-12
        fails += f
        any_fail += bool(np.any(f))
        bounds[t], eps1[t] = bd, e1
    _, hi = clopper_pearson(fails, n_trials, alpha)
    lo_any, hi_any = clopper_pearson(any_fail, n_trials, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = bounds / eps1
    return {
        "trials": n_trials, "failures": fails, "rate": fails / n_trials, "ci_upper": np.asarray(hi),
        "max_ci_upper": float(np.max(hi)), "any_failures": any_fail, "any_rate": any_fail / n_trials,
        "any_ci": (float(lo_any), float(hi_any)), "median_bound": float(np.median(bounds)),
        "median_eps1": float(np.median(eps1)), "median_ratio": float(np.median(ratio[np.isfinite(ratio)]))
        if np.any(np.isfinite(ratio)) else math.nan,
    }


# ======================================================================= figures
def plot_report(bounds: ArrayLike, eps1: ArrayLike | None = None, *, kind: str = "hist", ax: Any = None,
                label: str = "private bound", bins: int = 40) -> tuple[Any, Any]:
    r"""Plot released bounds :math:`\bar\epsilon_1^P` (and, in an analysis, the true :math:`\epsilon_1`).

    ``kind="hist"``: histograms; ``"cdf"``: empirical CDFs; ``"ratio"``: histogram of
    :math:`\bar\epsilon_1^P/\epsilon_1` on a log axis (needs ``eps1``; the source's Figs 9–10).
    Uses the book's style (:func:`pdpkit.plotting.figure`) when ``ax`` is ``None``.

    Parameters
    ----------
    bounds : array_like
        Released bounds :math:`\bar\epsilon_1^P` (nats), any shape (flattened).
    eps1 : array_like or None
        The exact, non-private :math:`\epsilon_1` of the same targets (same shape); ``None``
        (default) to plot the bounds alone.
    kind : {"hist", "cdf", "ratio"}
        The plot (above); default ``"hist"``.
    ax : matplotlib.axes.Axes or None
        Axes to draw on; ``None`` (default): a new figure.
    label : str
        Legend label of the bounds; default ``"private bound"``.
    bins : int
        Number of histogram bins; default 40.

    Returns
    -------
    (Figure, Axes)
    """
    from . import plotting as pp

    if kind not in ("hist", "cdf", "ratio"):
        raise ValueError(f"kind must be 'hist', 'cdf' or 'ratio'; got {kind!r}")
    b = as_finite_array(bounds, "bounds").ravel()
    e = None if eps1 is None else as_finite_array(eps1, "eps1").ravel()
    if e is not None and e.shape != b.shape:
        raise ValueError(f"eps1 must have the shape of bounds {b.shape}; got {e.shape}")
    if kind == "ratio" and e is None:
        raise ValueError("kind='ratio' needs eps1")
    if ax is None:
        fig, ax = pp.figure()
    else:
        fig = ax.figure
    if kind == "hist":
        hi = float(max(np.max(b), np.max(e) if e is not None else 0.0)) if b.size else 1.0
        edges = np.linspace(0.0, hi if hi > 0 else 1.0, bins + 1)
        if e is not None:
            ax.hist(e, bins=edges, alpha=0.6, label=r"true $\epsilon_1$ (not publishable)")
        ax.hist(b, bins=edges, alpha=0.6, label=label)
        ax.set_xlabel(r"ex-post pDP $\epsilon$ (nats)")
        ax.set_ylabel("number of targets")
    elif kind == "cdf":
        for vals, lab in ((e, r"true $\epsilon_1$ (not publishable)"), (b, label)):
            if vals is None:
                continue
            v = np.sort(vals)
            ax.step(v, np.arange(1, v.size + 1) / v.size, where="post", label=lab)
        ax.set_xlabel(r"ex-post pDP $\epsilon$ (nats)")
        ax.set_ylabel("fraction of targets")
    else:
        keep = e > 0
        r = b[keep] / e[keep]
        edges = np.geomspace(max(float(np.min(r)), 1e-3), max(float(np.max(r)), 1.0 + 1e-9) * 1.01, bins + 1)
        ax.hist(r, bins=edges, label=label)
        ax.set_xscale("log")
        ax.axvline(1.0, color="k", lw=1.0)
        ax.set_xlabel(r"ratio $\bar\epsilon_1^P/\epsilon_1$ (dimensionless)")
        ax.set_ylabel("number of targets")
    ax.legend()
    return fig, ax
