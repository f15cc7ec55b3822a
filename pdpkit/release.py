r"""What pdpkit publishes: the release file — model, privacy report, guarantee with its parts, schema.

A :class:`Release` holds exactly the public fields of an ObjPert fit: the released
coefficients :math:`\tilde\theta` (the solver's point plus the output noise that pays for the
solver's tolerance, :func:`pdpkit.objpert.objpert_fit`), the mechanism's parameters
(λ, σ, the loss, the norm bound, τ = ``grad_tol``, :math:`\sigma_{\rm out}`), the data's schema
(feature names, the two labels) and — optionally — a privacy report's noisy statistics
(:class:`pdpkit.report.PrivacyReport`). Each public parameter is stored once: the report is
rebuilt from the release's own θ, λ, σ and loss.

Its :class:`Guarantee` is the **total** of everything in the file, with its parts listed:
the model (ObjPert's dominating pair composed exactly with the output Gaussian,
:func:`pdpkit.accounting.objpert_output_epsilon`) and, when the report releases statistics,
the report (one Gaussian mechanism, :meth:`pdpkit.report.PrivacyReport.dp_epsilon`); the total
composes ObjPert's dominating pair with all Gaussians at once (their μ² add up) at the sum
of the parts' δ — the exact composition of the dominating pairs, never above the sum of the
parts' ε.

A release checks itself: :meth:`Release.verify` recomputes every part and the total from the
public fields, and :meth:`Release.from_json` refuses, naming the field, a file whose values
have the wrong type, lie outside their range, disagree in length, carry unknown fields, or
whose guarantee is not the one its parameters give.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import report as _report
from ._solver import _check_loss
from ._validation import as_finite_array, check_probability
from .accounting import _check_mu, objpert_output_epsilon
from .losses import GLMLoss, get_loss
from .objpert import ObjPertResult, output_mu

__all__ = [
    "RELEASE_FORMAT",
    "GuaranteePart",
    "Guarantee",
    "Release",
    "objpert_guarantee",
    "release_guarantee",
    "objpert_release",
]

#: The format tag of a release file. Format 1 (before the solver's tolerance was paid for) is refused.
RELEASE_FORMAT = "pdpkit-release/2"

_ACC_MODEL = "objpert-profile+output-gaussian"
_ACC_REPORT = "gaussian"
_ACC_TOTAL = "objpert-profile+gaussians"
_REL_TOL = 1e-9
_SQRT2 = math.sqrt(2.0)


# ------------------------------------------------------------------ strict types
def _real(value: Any, name: str, *, positive: bool = True, allow_zero: bool = False) -> float:
    """A real number (int or float, not bool or str), finite, > 0 (or >= 0)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number; got {type(value).__name__} {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite; got {value!r}")
    if positive and not (v > 0 or (allow_zero and v == 0)):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}; got {value!r}")
    return v


def _bool(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be true or false (a boolean); got {type(value).__name__} {value!r}")
    return bool(value)


def _delta(value: Any, name: str) -> float:
    v = _real(value, name)
    if not v < 1.0:
        raise ValueError(f"{name} must lie in (0, 1); got {value!r}")
    return v


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= _REL_TOL * max(abs(a), abs(b)) + 1e-15


# ------------------------------------------------------------------ guarantees
@dataclass(frozen=True)
class GuaranteePart:
    """One mechanism's share of a release's guarantee: its name, (ε, δ) and the accounting used."""

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

    Neighbouring data sets differ by adding or removing one record. ``parts`` lists what
    the guarantee is the total of (e.g. the model and the report); ``delta`` is the sum of
    the parts' δ and ``epsilon`` their composition under ``accounting``.
    """

    epsilon: float
    delta: float
    accounting: str = _ACC_TOTAL
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
        head = f"({self.epsilon:.4g}, {self.delta:.3g})-DP [{self.accounting}, add/remove one record]"
        if len(self.parts) > 1:
            head += " = " + " + ".join(f"{p.name} ({p.epsilon:.4g}, {p.delta:.3g})" for p in self.parts)
        return head

    def part(self, name: str) -> GuaranteePart:
        """The part called ``name`` (``KeyError`` if absent)."""
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
        """Inverse of :meth:`to_dict`, strict: unknown or missing fields are a ``ValueError`` naming them."""
        _keys(data, "guarantee", required=("epsilon", "delta", "accounting", "parts"))
        parts = data["parts"]
        if not isinstance(parts, list):
            raise TypeError("guarantee.parts must be a list")
        out = []
        for i, p in enumerate(parts):
            _keys(p, f"guarantee.parts[{i}]", required=("name", "epsilon", "delta", "accounting"))
            out.append(GuaranteePart(name=p["name"], epsilon=p["epsilon"], delta=p["delta"],
                                     accounting=p["accounting"]))
        return cls(epsilon=data["epsilon"], delta=data["delta"], accounting=data["accounting"], parts=tuple(out))


def _keys(data: Any, where: str, *, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    if not isinstance(data, dict):
        raise TypeError(f"{where} must be a JSON object; got {type(data).__name__}")
    unknown = sorted(set(data) - set(required) - set(optional))
    if unknown:
        raise ValueError(f"{where} has unknown field(s) {unknown}")
    missing = [k for k in required if k not in data]
    if missing:
        raise ValueError(f"{where} lacks the field(s) {missing}")


def _constants(loss: GLMLoss, R: float) -> tuple[float, float]:
    if not (math.isfinite(loss.lipschitz) and math.isfinite(loss.smoothness)):
        raise ValueError(f"loss {loss.name!r} has an unbounded gradient or curvature: ObjPert with it has no "
                         "finite DP guarantee")
    return loss.lipschitz * R, loss.smoothness * R * R


def objpert_guarantee(delta: float, *, loss: str | GLMLoss, lam: float, sigma: float, norm_bound: float,
                      grad_tol: float, sigma_out: float) -> Guarantee:
    r"""The tight guarantee of ObjPert as :func:`pdpkit.objpert.objpert_fit` releases it, on rows :math:`\|x\| \le R`.

    ObjPert with :math:`L R` and :math:`\beta R^2` (the loss's per-unit constants times the
    bound ``norm_bound`` = R of the fitted rows; the sharp log-determinant constant
    :math:`\log(1 + \beta R^2/\lambda)`, Redberg, Koskela & Wang 2023, Thm 3.1 as corrected in
    :mod:`pdpkit.accounting`) composed exactly with the output Gaussian of parameter
    :math:`\mu = (2\tau/\lambda)/\sigma_{\rm out}` (:func:`pdpkit.objpert.output_mu`):
    :func:`pdpkit.accounting.objpert_output_epsilon`. Holds for the released
    ``theta_released``, whatever point the solver stopped at within τ. ``ValueError`` for a
    loss with an unbounded gradient.
    """
    return release_guarantee(loss=loss, lam=lam, sigma=sigma, norm_bound=norm_bound, grad_tol=grad_tol,
                             sigma_out=sigma_out, delta=delta)


def _model_epsilon(loss: GLMLoss, lam: float, sigma: float, R: float, mu: float, delta: float) -> float:
    L, beta = _constants(loss, R)
    return _composed_epsilon(L, beta, lam, sigma, mu, delta)


@functools.lru_cache(maxsize=512)
def _composed_epsilon(L: float, beta: float, lam: float, sigma: float, mu: float, delta: float) -> float:
    """Cached: grid searches and seeds repeat the same parameters."""
    return float(objpert_output_epsilon(delta, L=L, beta=beta, lam=lam, sigma=sigma, mu=mu, sharp=True))


def _report_mu(report: _report.PrivacyReport, R: float) -> float:
    """μ of the report's releases as one Gaussian mechanism, for rows of norm <= R (sensitivities LR, βR²/√2, βR²)."""
    L, beta = _constants(report.loss, R)
    sens = {"sigma_gradient": L, "sigma_hessian": beta / _SQRT2, "sigma_lambda_min": beta}
    return math.sqrt(sum((s / getattr(report, k)) ** 2 for k, s in sens.items() if getattr(report, k) is not None))


def release_guarantee(*, loss: str | GLMLoss, lam: float, sigma: float, norm_bound: float, grad_tol: float,
                      sigma_out: float, delta: float, report: _report.PrivacyReport | None = None,
                      report_delta: float | None = None) -> Guarantee:
    r"""The total guarantee of a release: the model, and the report's releases if any, with the parts.

    ``norm_bound`` bounds the *fitted* rows (with an intercept column, :math:`\sqrt2` times the
    user's bound). The model part is :func:`objpert_guarantee` at ``delta``; a report that
    releases statistics is a part of its own at ``report_delta``
    (:meth:`pdpkit.report.PrivacyReport.dp_epsilon`, one Gaussian mechanism); the total is
    ObjPert's dominating pair composed with every Gaussian at once
    (:math:`\mu^2 = \mu_{\rm out}^2 + \mu_{\rm report}^2`), exactly, at
    :math:`\delta + \delta_{\rm report}`.
    """
    loss = _check_loss(loss)
    R = _real(norm_bound, "norm_bound")
    lam = _real(lam, "lam")
    sigma = _real(sigma, "sigma")
    delta = float(check_probability(delta, "delta"))
    mu_out = output_mu(grad_tol=grad_tol, lam=lam, sigma_out=sigma_out)
    eps_m = _model_epsilon(loss, lam, sigma, R, mu_out, delta)
    model = GuaranteePart(name="model", epsilon=eps_m, delta=delta, accounting=_ACC_MODEL)
    if report is None or not report._released():
        return Guarantee(epsilon=eps_m, delta=delta, accounting=_ACC_MODEL, parts=(model,))
    if report_delta is None:
        raise ValueError("report_delta is needed: the report releases noisy statistics")
    dr = float(check_probability(report_delta, "report_delta"))
    mu_tot = _check_mu(math.hypot(mu_out, _report_mu(report, R)))  # refuses absurd noise scales first
    eps_r = float(report.dp_epsilon(dr, norm_bound=R, accounting="gaussian"))
    rep = GuaranteePart(name="report", epsilon=eps_r, delta=dr, accounting=_ACC_REPORT)
    eps_t = _model_epsilon(loss, lam, sigma, R, mu_tot, delta + dr)
    return Guarantee(epsilon=eps_t, delta=delta + dr, accounting=_ACC_TOTAL, parts=(model, rep))


# ---------------------------------------------------------------------- release
_REPORT_FIELDS = ("method", "rho", "sigma_gradient", "sigma_hessian", "sigma_lambda_min", "gradient_release",
                  "hessian_release", "lambda_min_release")


@dataclass(frozen=True, eq=False)
class Release:
    r"""What ObjPert may publish: the released coefficients, the public parameters, the guarantee, the schema.

    Everything here is a mechanism parameter chosen without looking at the data (``lam``,
    ``sigma``, ``loss``, ``norm_bound``, ``grad_tol``, ``sigma_out``, ``fit_intercept``,
    ``row_norm``), the private output ``theta`` (:math:`\tilde\theta`, output noise included), a
    post-processing of it, or — in ``report`` — the noisy statistics of a privacy report (its
    fields without θ, λ, σ and the loss, which are the release's). Nothing data-dependent and
    un-noised goes in: no :math:`b`, no :math:`n`, no gradient norm. ``classes`` (the two label
    values) and ``feature_names`` are the data's *schema*, treated as public like the number
    of columns.

    With ``fit_intercept``, ``theta``'s last entry is the coefficient of a constant feature of
    value ``norm_bound`` (the fitted rows have norm at most :math:`\sqrt2` ``norm_bound``, the
    bound the guarantee uses); :attr:`coef` and :attr:`intercept` undo that scaling.
    ``row_norm="clip"`` records that rows beyond ``norm_bound`` were shrunk onto the ball
    before fitting; :meth:`decision_function` applies the same map.

    Construction checks the schema (types, ranges, lengths, strict booleans); a guarantee
    needs a ``norm_bound``. :meth:`verify` recomputes the guarantee.
    """

    theta: np.ndarray
    lam: float
    sigma: float
    loss: str
    norm_bound: float | None
    grad_tol: float
    sigma_out: float
    fit_intercept: bool = False
    guarantee: Guarantee | None = None
    report: dict[str, Any] | None = None
    classes: tuple[Any, ...] | None = None
    feature_names: tuple[str, ...] | None = None
    row_norm: str = "raise"
    _report_obj: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        s = object.__setattr__
        theta = as_finite_array(self.theta, "theta", ndim=1).copy()
        if theta.shape[0] < 1:
            raise ValueError("theta must have at least one entry")
        theta.flags.writeable = False
        s(self, "theta", theta)
        for name in ("lam", "sigma", "grad_tol", "sigma_out"):
            s(self, name, _real(getattr(self, name), name))
        if not isinstance(self.loss, str):
            raise TypeError(f"loss must be a loss name (a string); got {type(self.loss).__name__}")
        try:
            get_loss(self.loss)
        except (TypeError, ValueError):
            raise ValueError(f"loss {self.loss!r} is not a pdpkit loss") from None
        if self.norm_bound is not None:
            s(self, "norm_bound", _real(self.norm_bound, "norm_bound"))
        s(self, "fit_intercept", _bool(self.fit_intercept, "fit_intercept"))
        if self.row_norm not in ("raise", "clip"):
            raise ValueError(f"row_norm must be 'raise' or 'clip'; got {self.row_norm!r}")
        if self.row_norm == "clip" and self.norm_bound is None:
            raise ValueError("row_norm='clip' needs norm_bound")
        if self.fit_intercept and self.norm_bound is None:
            raise ValueError("fit_intercept=True needs norm_bound (the intercept column's value)")
        if self.fit_intercept and theta.shape[0] < 2:
            raise ValueError("theta must hold the intercept's coefficient and at least one feature's")
        if self.guarantee is not None:
            if not isinstance(self.guarantee, Guarantee):
                raise TypeError("guarantee must be a Guarantee")
            if self.norm_bound is None:
                raise ValueError("a release with a guarantee needs norm_bound: the guarantee holds only for rows "
                                 "within it")
        n_feat = theta.shape[0] - int(self.fit_intercept)
        if self.feature_names is not None:
            names = tuple(self.feature_names)
            if not all(isinstance(v, str) for v in names):
                raise TypeError("feature_names must be strings")
            if len(names) != n_feat:
                raise ValueError(f"feature_names has {len(names)} names but theta has {n_feat} feature coefficients")
            if len(set(names)) != len(names):
                raise ValueError("feature_names must be unique")
            s(self, "feature_names", names)
        if self.classes is not None:
            classes = tuple(self.classes)
            if self.loss != "logistic":
                raise ValueError(f"classes are for the logistic loss; this release's loss is {self.loss!r}")
            if len(classes) != 2 or classes[0] == classes[1]:
                raise ValueError(f"classes must be two distinct labels; got {list(classes)}")
            if not all(isinstance(c, (str, int, float)) for c in classes):
                raise TypeError("classes must be strings or numbers")
            s(self, "classes", classes)
        if self.report is not None:
            s(self, "_report_obj", self._build_report(self.report))

    def _build_report(self, rep: Any) -> _report.PrivacyReport:
        if isinstance(rep, _report.PrivacyReport):
            rep = _public_report_fields(rep)
        _keys(rep, "report", required=_REPORT_FIELDS)
        kw = dict(rep)
        if not isinstance(kw["method"], str):
            raise TypeError("report.method must be a string")
        kw["rho"] = _delta(kw["rho"], "report.rho")
        for k in ("sigma_gradient", "sigma_hessian", "sigma_lambda_min", "lambda_min_release"):
            if kw[k] is not None:
                kw[k] = _real(kw[k], f"report.{k}", positive=k != "lambda_min_release")
        try:
            with np.errstate(all="ignore"):  # absurd noise scales are refused by verify(), not by a warning
                obj = _report.PrivacyReport(theta=self.theta, lam=self.lam, sigma=self.sigma,
                                            loss=get_loss(self.loss), **kw)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"report: {exc}") from None
        object.__setattr__(self, "report", _public_report_fields(obj))
        return obj

    def __repr__(self) -> str:
        g = str(self.guarantee) if self.guarantee is not None else "no DP guarantee"
        return (f"Release(loss={self.loss!r}, d={self.coef.shape[0]}, fit_intercept={self.fit_intercept}, "
                f"lam={self.lam:.6g}, sigma={self.sigma:.6g}, norm_bound={self.norm_bound}, {g}"
                f"{', with a privacy report' if self.report else ''})")

    # ------------------------------------------------------------ the model
    @property
    def coef(self) -> np.ndarray:
        """Coefficients of the user's features."""
        return self.theta[:-1] if self.fit_intercept else self.theta

    @property
    def intercept(self) -> float:
        """The intercept (0.0 without ``fit_intercept``)."""
        return float(self.theta[-1] * self.norm_bound) if self.fit_intercept else 0.0

    @property
    def fit_norm_bound(self) -> float | None:
        r"""The bound on the fitted rows: ``norm_bound``, times :math:`\sqrt2` with an intercept."""
        if self.norm_bound is None:
            return None
        return self.norm_bound * (_SQRT2 if self.fit_intercept else 1.0)

    @property
    def privacy_report(self) -> _report.PrivacyReport | None:
        """The released privacy report (:class:`pdpkit.report.PrivacyReport`), or ``None``."""
        return self._report_obj

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        r""":math:`X\,\text{coef} + \text{intercept}` for rows of the user's features (post-processing)."""
        X = as_finite_array(X, "X", ndim=2)
        if X.shape[1] != self.coef.shape[0]:
            raise ValueError(f"X must have {self.coef.shape[0]} columns; got {X.shape[1]}")
        if self.row_norm == "clip":
            norms = np.sqrt(np.einsum("ij,ij->i", X, X))
            X = X * np.minimum(1.0, self.norm_bound / np.where(norms > 0, norms, 1.0))[:, None]
        return X @ self.coef + self.intercept

    # ------------------------------------------------------------ checking
    def expected_guarantee(self) -> Guarantee | None:
        """The guarantee the public fields give, at the δ of this release's parts (``None`` without one)."""
        g = self.guarantee
        if g is None:
            return None
        names = [p.name for p in g.parts]
        rep = self._report_obj
        releases = rep is not None and bool(rep._released())
        want = ["model", "report"] if releases else ["model"]
        if names != want:
            raise ValueError(f"guarantee.parts must be {want} for this release; got {names}")
        dr = g.part("report").delta if releases else None
        return release_guarantee(loss=self.loss, lam=self.lam, sigma=self.sigma, norm_bound=self.fit_norm_bound,
                                 grad_tol=self.grad_tol, sigma_out=self.sigma_out, delta=g.part("model").delta,
                                 report=rep if releases else None, report_delta=dr)

    def verify(self) -> Release:
        """Recompute the guarantee from the public fields; ``ValueError`` naming the first field that disagrees.

        Returns the release itself, so ``Release.from_json(text).verify()`` chains. A release
        without a guarantee verifies trivially (it claims nothing).
        """
        try:
            want = self.expected_guarantee()
        except (TypeError, ValueError) as exc:
            raise ValueError(f"guarantee: the release's parameters (lam, sigma, norm_bound, grad_tol, sigma_out and "
                             f"the report's noise scales) give no guarantee to check it against: {exc}") from None
        if want is None:
            return self
        g = self.guarantee
        pairs = [(f"guarantee.parts[{i}]", p, q) for i, (p, q) in enumerate(zip(g.parts, want.parts, strict=True))]
        for where, have, expect in pairs + [("guarantee", g, want)]:
            for attr in ("epsilon", "delta"):
                if not _close(getattr(have, attr), getattr(expect, attr)):
                    raise ValueError(f"{where}.{attr} = {getattr(have, attr)!r} is not what the release's parameters "
                                     f"give ({getattr(expect, attr)!r})")
            if have.accounting != expect.accounting:
                raise ValueError(f"{where}.accounting must be {expect.accounting!r}")
        return self

    # ------------------------------------------------------------ serialization
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (see :meth:`to_json`)."""
        return {
            "format": RELEASE_FORMAT,
            "theta": [float(v) for v in self.theta],
            "lam": self.lam,
            "sigma": self.sigma,
            "loss": self.loss,
            "norm_bound": self.norm_bound,
            "grad_tol": self.grad_tol,
            "sigma_out": self.sigma_out,
            "fit_intercept": self.fit_intercept,
            "row_norm": self.row_norm,
            "guarantee": None if self.guarantee is None else self.guarantee.to_dict(),
            "report": self.report,
            "classes": None if self.classes is None else [_json_scalar(c) for c in self.classes],
            "feature_names": None if self.feature_names is None else list(self.feature_names),
        }

    def to_json(self, **kwargs: Any) -> str:
        """The release as JSON text (``kwargs`` go to ``json.dumps``, e.g. ``indent=2``)."""
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    @classmethod
    def from_dict(cls, data: Any, *, verify: bool = True) -> Release:
        """Inverse of :meth:`to_dict`, strict, and verified (:meth:`verify`) unless ``verify=False``.

        ``ValueError``/``TypeError`` naming the field for another format, an unknown or missing
        field, a value of the wrong type or range, inconsistent lengths, or a guarantee its
        parameters do not give.
        """
        if not isinstance(data, dict):
            raise TypeError(f"a release must be a JSON object; got {type(data).__name__}")
        fmt = data.get("format")
        if fmt != RELEASE_FORMAT:
            if isinstance(fmt, str) and fmt.startswith("pdpkit-release/"):
                raise ValueError(f"format {fmt!r} is not supported (expected {RELEASE_FORMAT!r}): its guarantee "
                                 "assumed the solver's exact minimizer; fit the model again")
            raise ValueError(f"not a pdpkit release (expected format {RELEASE_FORMAT!r})")
        _keys(data, "release", required=("format", "theta", "lam", "sigma", "loss", "norm_bound", "grad_tol",
                                         "sigma_out", "fit_intercept", "row_norm", "guarantee", "report", "classes",
                                         "feature_names"))
        theta = data["theta"]
        if not isinstance(theta, list) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in theta):
            raise TypeError("theta must be a list of numbers")
        g = data["guarantee"]
        classes, names = data["classes"], data["feature_names"]
        for key, val in (("classes", classes), ("feature_names", names)):
            if val is not None and not isinstance(val, list):
                raise TypeError(f"{key} must be a list or null")
        rel = cls(theta=np.asarray(theta, dtype=float), lam=data["lam"], sigma=data["sigma"], loss=data["loss"],
                  norm_bound=data["norm_bound"], grad_tol=data["grad_tol"], sigma_out=data["sigma_out"],
                  fit_intercept=data["fit_intercept"], guarantee=None if g is None else Guarantee.from_dict(g),
                  report=data["report"], classes=None if classes is None else tuple(classes),
                  feature_names=None if names is None else tuple(names), row_norm=data["row_norm"])
        return rel.verify() if verify else rel

    @classmethod
    def from_json(cls, text: str, *, verify: bool = True) -> Release:
        """Inverse of :meth:`to_json` (strict and verified, as :meth:`from_dict`)."""
        try:
            data = json.loads(text, parse_constant=_refuse_constant)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not JSON: {exc}") from None
        return cls.from_dict(data, verify=verify)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in a release")


def _public_report_fields(rep: _report.PrivacyReport) -> dict[str, Any]:
    """The report's own fields (its releases and noise scales), without θ, λ, σ and the loss."""
    d = rep.to_dict()
    return {k: d[k] for k in _REPORT_FIELDS}


def _json_scalar(value: Any) -> Any:
    """A label value as JSON can hold it (numpy scalars to Python)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def objpert_release(result: ObjPertResult, *, delta: float | None = None, report: Any = None,
                    report_delta: float | None = None, norm_bound: float | None = None, fit_intercept: bool = False,
                    classes: Any = None, feature_names: Any = None, row_norm: str = "raise") -> Release:
    r"""The publishable part of an ObjPert fit, with its total guarantee at ``delta`` (+ ``report_delta``).

    ``result.theta_released`` is published (never the solver's point). The fit records the
    bound it enforced on the fitted rows; ``norm_bound`` is the bound on the rows the *user*
    passed — equal to the fit's, or with ``fit_intercept`` (a constant column of value
    ``norm_bound`` was appended) the fit's divided by :math:`\sqrt2`. Omitted, it is derived from
    the fit; given and different, ``ValueError``. A fit made with ``norm_bound=None`` or
    ``delta=None`` gives a release without a guarantee. ``report``: a
    :class:`pdpkit.report.PrivacyReport` of this fit (its θ, λ, σ must be the fit's); if it
    releases statistics, ``report_delta`` is needed and the guarantee is the total
    (:func:`release_guarantee`).
    """
    if not isinstance(result, ObjPertResult):
        raise TypeError(f"result must be an ObjPertResult; got {type(result).__name__}")
    fit_intercept = _bool(fit_intercept, "fit_intercept")
    fitted = result.norm_bound
    scale = _SQRT2 if fit_intercept else 1.0
    if fitted is None:
        if fit_intercept:
            raise ValueError("fit_intercept=True needs a fit with a norm bound (the intercept column's value)")
        if norm_bound is not None:
            raise ValueError("norm_bound must match the bound the fit enforced; the fit enforced none "
                             "(norm_bound=None), so its release carries no guarantee")
        R = None
    else:
        derived = fitted / scale
        if norm_bound is None:
            R = derived
        else:
            R = _real(norm_bound, "norm_bound")
            if abs(R * scale - fitted) > 1e-12 * fitted:
                raise ValueError(f"norm_bound={R:g} is not the bound the fit enforced ({derived:g} on the user's rows"
                                 f"{', before the intercept column' if fit_intercept else ''}): a guarantee holds "
                                 "only at the bound the data were checked against")
    if report is not None:
        if not isinstance(report, _report.PrivacyReport):
            raise TypeError(f"report must be a pdpkit.report.PrivacyReport; got {type(report).__name__}")
        if not (np.array_equal(report.theta, result.theta_released) and report.lam == result.lam
                and report.sigma == result.sigma and report.loss.name == result.loss.name):
            raise ValueError("report is not a report of this fit (its theta, lam, sigma or loss differ)")
    loss_name = result.loss.name
    try:
        same = get_loss(loss_name)
    except (TypeError, ValueError):
        same = None
    if same is None or same.lipschitz != result.loss.lipschitz or same.smoothness != result.loss.smoothness:
        raise ValueError(f"loss {loss_name!r} cannot be named in a release (only pdpkit's losses with their "
                         "default constants can)")
    guarantee = None
    if R is not None and delta is not None:
        guarantee = release_guarantee(loss=result.loss, lam=result.lam, sigma=result.sigma, norm_bound=R * scale,
                                      grad_tol=result.grad_tol, sigma_out=result.sigma_out, delta=delta,
                                      report=report, report_delta=report_delta)
    return Release(theta=np.array(result.theta_released), lam=result.lam, sigma=result.sigma, loss=loss_name,
                   norm_bound=R, grad_tol=result.grad_tol, sigma_out=result.sigma_out, fit_intercept=fit_intercept,
                   guarantee=guarantee, report=report,
                   classes=None if classes is None else tuple(_json_scalar(c) for c in classes),
                   feature_names=None if feature_names is None else tuple(str(s) for s in feature_names),
                   row_norm=row_norm)
