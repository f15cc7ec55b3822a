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
have the wrong type, lie outside their range, disagree in length, carry unknown fields or a
key twice, whose guarantee is not the one its parameters give, whose feature names are not
its schema's encoding, or whose schema is still a non-private draft.

A release can be **signed** (:meth:`Release.sign`, ``pdpkit fit --sign KEY``) with an
Ed25519 key (:mod:`pdpkit.signing`): the file then carries a signature over its canonical
bytes (:attr:`Release.payload`) and the signer's key fingerprint.
``Release.from_json(text, public_key=KEY)`` and :meth:`Release.verify` with the publisher's
public key refuse every edit of every field — also those no consistency check can see (a
swapped class list, a permuted feature list, an edited coefficient or released statistic) —
and a file whose signature was stripped.

OPS and AdaOPS (:mod:`pdpkit.ops_estimators`) publish an :class:`OPSRelease` (format
:data:`OPS_RELEASE_FORMAT`): the sampled coefficients, λ, γ, the public bounds on rows, labels
and the number of records (AdaOPS: also κ and its noisy :math:`\lambda_{\min}`), the ledger of
their events (:class:`pdpkit.ops.OPSEvent`, :class:`pdpkit.ops.AdaOPSEvent`) and its total
guarantee — verified, refused when edited and signed as above — and each person's pDP bound as
a function of their own record and the public fields (:meth:`OPSRelease.per_person_epsilon`),
which may be published; the exact per-person pDP of the data stays with the curator.
:func:`load_release` reads a release file of either kind.

**Weights.** A fit with sample or class weights under a public bound :math:`W`
(:mod:`pdpkit.estimators`: ``weight_bound``, ``weight_policy``) minimizes its objective divided
by :math:`W` (:class:`pdpkit.objpert.WeightedLoss`: weights :math:`w_i/W \in [0, 1]`), so its
release states that objective's parameters: ``lam``, ``sigma`` and ``grad_tol`` are
:math:`\lambda/W`, :math:`\sigma/W` and :math:`\tau/W` (``sigma_out`` and the report's noise
scales are those of the divided objective), and the guarantee recomputed from them is the
weighted fit's (Redberg, Koskela & Wang 2023, Thm 3.1 with :math:`L \to WL`,
:math:`\beta \to W\beta`: the same profile). Its optional field ``weighting`` is the estimator's
``weighting_`` — the bound, the policy for a weight above it, whether sample weights were given,
the class weights used and where they came from, all public — and the guarantee's
``accounting`` ends with :func:`weighting_statement` of it, which :meth:`Release.verify`
recomputes: an edit of the field that leaves the statement as it was is refused, and so is a
noisy class count that the ledger does not hold. An unweighted fit writes no ``weighting``
field: its file is the file pdpkit wrote before weights existed, byte for byte (the same
fingerprint and signature, readable by earlier versions), while an earlier version refuses a
weighted file (an unknown field) rather than reading it without its weight bound.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from . import report as _report
from . import signing as _signing
from ._json import canonical_json, loads_strict
from ._solver import _check_loss
from ._validation import as_finite_array, check_probability, clip_factors, row_norms
from ._validation import check_json_keys as _keys
from ._validation import strict_delta as _delta
from ._validation import strict_real as _real
from .accountant import Charge, compose, ledger_guarantee
from .events import Guarantee, GuaranteePart, ObjPertEvent, report_event
from .losses import GLMLoss, get_loss
from .objpert import ObjPertResult, output_mu
from .ops import AdaOPSEvent, OPSEvent, ops_gamma_for_dp

__all__ = [
    "RELEASE_FORMAT",
    "SEEDED_NOTE",
    "SeededReleaseWarning",
    "Release",
    "objpert_guarantee",
    "release_guarantee",
    "model_charges",
    "objpert_release",
    "multiclass_release",
    "OPS_RELEASE_FORMAT",
    "OPSRelease",
    "ops_release",
    "load_release",
    "weighting_statement",
]

#: The format tag of a release file. Format 5 carries a ``signature`` (null when unsigned);
#: format 4 records whether the noise came from a caller's seed (``seeded``) and is read as
#: unsigned; format 3 files are read (``seeded`` unknown: ``None``), format 2 files too (their
#: guarantee is recomputed); format 1 (before the solver's tolerance was paid for) is refused.
RELEASE_FORMAT = "pdpkit-release/5"
_FORMAT_4 = "pdpkit-release/4"
_FORMAT_3 = "pdpkit-release/3"
_FORMAT_2 = "pdpkit-release/2"
#: The format tag of an OPS or AdaOPS release file (:class:`OPSRelease`).
OPS_RELEASE_FORMAT = "pdpkit-ops-release/1"

#: What a release drawn from a caller's seed says about itself (file, repr, verify, CLI, page).
SEEDED_NOTE = ("reproducible from a seed: anyone who knows the seed can regenerate the noise, so this release is "
               "private only while the seed stays secret")


class SeededReleaseWarning(UserWarning):
    """A verified release whose noise was drawn from a seed the caller chose (:data:`SEEDED_NOTE`)."""


_REL_TOL = 1e-9
_SQRT2 = math.sqrt(2.0)


# ------------------------------------------------------------------ strict types
def _bool(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be true or false (a boolean); got {type(value).__name__} {value!r}")
    return bool(value)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= _REL_TOL * max(abs(a), abs(b)) + 1e-15


def _constants(loss: GLMLoss, R: float) -> tuple[float, float]:
    if not (math.isfinite(loss.lipschitz) and math.isfinite(loss.smoothness)):
        raise ValueError(f"loss {loss.name!r} has an unbounded gradient or curvature: ObjPert with it has no "
                         "finite DP guarantee")
    return loss.lipschitz * R, loss.smoothness * R * R


# ------------------------------------------------------------------ weights
#: The fields of a weighted fit's ``weighting`` (``pdpkit.estimators``' ``weighting_``), in the order written.
_WEIGHTING_FIELDS = ("weight_bound", "weight_policy", "sample_weight", "class_weight", "class_weight_source")
#: What a fit does with a weight above its bound (``pdpkit.estimators.WEIGHT_POLICIES``).
_WEIGHT_POLICIES = ("refuse", "clip")
#: Where a fit's class weights came from: given, from public class frequencies, or from a charged noisy count.
_CLASS_WEIGHT_SOURCES = ("given", "class_prior", "noisy class count")
#: The ledger entry of a noisy class count ends with this name (``"ObjPertClassifier class counts"``).
_COUNT_ENTRY = "class counts"


def _exact(v: float) -> str:
    """A public number as short text that reads back as the same float (``5``, ``0.5``, ``0.3333333333333333``)."""
    short = f"{v:g}"
    return short if float(short) == v else repr(float(v))


def weighting_statement(weighting: dict[str, Any]) -> str:
    """The words a weighted fit's guarantee carries: its public weight bound and what happens above it.

    A release of a weighted fit states its guarantee with these words appended to the
    ``accounting`` (``"...; records weighted at most weight_bound=2 (weights above it
    clipped to it)"``), and :meth:`Release.verify` recomputes them from the release's
    ``weighting``. The bound is written so that it reads back as the same number.

    Parameters
    ----------
    weighting : dict
        A release's ``weighting`` (an estimator's ``weighting_``).
    """
    above = "clipped to it" if weighting["weight_policy"] == "clip" else "refused"
    W = _exact(float(weighting["weight_bound"]))
    out = f"records weighted at most weight_bound={W} (weights above it {above})"
    if weighting.get("class_weight_source"):
        out += f", class weights from {weighting['class_weight_source']}"
    return out


def _class_text(c: Any) -> str:
    """A class as the key of ``weighting.class_weight`` in a file: its text, or a number's JSON text."""
    return c if isinstance(c, str) else json.dumps(_json_scalar(c))


def _checked_weighting(weighting: Any, classes: tuple[Any, ...] | None) -> dict[str, Any] | None:
    """``weighting`` checked field by field (errors name ``weighting.FIELD``) and copied; ``None`` stays ``None``.

    The class weights are keyed by the release's classes (each once, in their order).
    """
    if weighting is None:
        return None
    _keys(weighting, "weighting", required=_WEIGHTING_FIELDS)
    W = _real(weighting["weight_bound"], "weighting.weight_bound")
    policy = weighting["weight_policy"]
    if not isinstance(policy, str) or policy not in _WEIGHT_POLICIES:
        raise ValueError(f"weighting.weight_policy must be one of {list(_WEIGHT_POLICIES)}; got {policy!r}")
    sample = _bool(weighting["sample_weight"], "weighting.sample_weight")
    cw, source = weighting["class_weight"], weighting["class_weight_source"]
    if cw is not None:
        if not isinstance(cw, dict):
            raise TypeError(f"weighting.class_weight must be an object {{class: weight}} or null; got "
                            f"{type(cw).__name__}")
        if classes is None:
            raise ValueError("weighting.class_weight: class weights need the release's classes (a classifier's)")
        given = {_json_scalar(k): v for k, v in cw.items()}
        if len(given) != len(cw) or set(given) != set(classes) or len(given) != len(classes):
            raise ValueError(f"weighting.class_weight must give one weight for each of the classes {list(classes)}, "
                             "and no other")
        if len({_class_text(c) for c in classes}) != len(classes):
            raise ValueError(f"weighting.class_weight: the classes {list(classes)} must read differently as text "
                             "(the keys of class_weight in the file)")
        cw = {c: _real(given[c], f"weighting.class_weight[{c!r}]", allow_zero=True) for c in classes}
        if source is None or not isinstance(source, str) or source not in _CLASS_WEIGHT_SOURCES:
            raise ValueError(f"weighting.class_weight_source must be one of {list(_CLASS_WEIGHT_SOURCES)} with "
                             f"class weights; got {source!r}")
        if policy == "refuse" and source == "given" and any(v > W for v in cw.values()):
            raise ValueError("weighting.class_weight: a given class weight above weight_bound under weight_policy "
                             "'refuse' is refused before any record is read: this fit cannot have made it")
    elif source is not None:
        raise ValueError(f"weighting.class_weight_source must be null without class weights; got {source!r}")
    if not sample and cw is None and W == 1.0:
        raise ValueError("weighting: weight_bound 1 without sample or class weights is the unweighted fit, whose "
                         "release has no weighting field")
    return {"weight_bound": W, "weight_policy": policy, "sample_weight": sample, "class_weight": cw,
            "class_weight_source": source}


def _weighting_from_json(weighting: Any, classes: Any) -> Any:
    """A file's ``weighting``: its ``class_weight`` keys (the classes' texts, :func:`_class_text`) mapped back to the
    release's classes; the other fields are checked by the release."""
    if weighting is None or not isinstance(weighting, dict) or not isinstance(weighting.get("class_weight"), dict):
        return weighting
    cw = weighting["class_weight"]
    if not isinstance(classes, list):
        raise ValueError("weighting.class_weight: class weights need the release's classes (a classifier's)")
    texts = {}
    for c in classes:
        if isinstance(c, (str, int, float)):
            texts.setdefault(_class_text(c), []).append(c)
    if any(len(v) > 1 for v in texts.values()) or set(cw) != set(texts) or len(texts) != len(classes):
        raise ValueError(f"weighting.class_weight's keys must be the classes {classes} written as text, each once")
    return {**weighting, "class_weight": {texts[k][0]: v for k, v in cw.items()}}


def _report_event(report: _report.PrivacyReport, R: float) -> Any:
    """What the report releases, for rows of norm <= R (:func:`pdpkit.events.report_event`)."""
    L, beta = _constants(report.loss, R)
    return report_event(L=L, beta=beta, sigma_gradient=report.sigma_gradient, sigma_hessian=report.sigma_hessian,
                        sigma_lambda_min=report.sigma_lambda_min)


def model_charges(*, loss: str | GLMLoss, lam: float, sigma: float, norm_bound: float, grad_tol: float,
                  sigma_out: float, delta: float, count: int = 1, report: _report.PrivacyReport | None = None,
                  report_delta: float | None = None) -> tuple[Charge, ...]:
    r"""The ledger entries of a release's own mechanisms: its ObjPert fit(s), and its report's statistics if any.

    ``"model"``: ``count`` ObjPert fits (one per class of a one-vs-rest classifier, every record
    in each) with the loss's constants at the fitted rows' bound ``norm_bound`` (L R and
    β R², sharp log-determinant constant) and the output noise of parameter
    :math:`\mu = (2\tau/\lambda)/\sigma_{\rm out}` (:func:`pdpkit.objpert.output_mu`).
    ``"report"``: the report's noisy statistics as one Gaussian mechanism per fit.

    Parameters
    ----------
    loss : str or GLMLoss
        The loss.
    lam, sigma : float
        ObjPert's regularization and noise.
    norm_bound : float
        Bound on the fitted rows (with an intercept column: √2 times the user's bound).
    grad_tol, sigma_out : float
        The solver's public tolerance τ and the output noise's standard deviation.
    delta : float
        The δ the model's own ε is stated at.
    count : int
        Number of fits.
    report : PrivacyReport, optional
        A report of (one of) the fits; its noise scales are the same for every fit.
    report_delta : float, optional
        The δ the report's own ε is stated at (needed when the report releases statistics).
    """
    loss = _check_loss(loss)
    R = _real(norm_bound, "norm_bound")
    lam = _real(lam, "lam")
    sigma = _real(sigma, "sigma")
    delta = float(check_probability(delta, "delta"))
    L, beta = _constants(loss, R)
    mu_out = output_mu(grad_tol=grad_tol, lam=lam, sigma_out=sigma_out)
    out = [Charge(name="model", event=ObjPertEvent(L=L, beta=beta, lam=lam, sigma=sigma, mu_out=mu_out),
                  count=count, delta=delta)]
    if report is not None and report.released_statistics:
        if report_delta is None:
            raise ValueError("report_delta is needed: the report releases noisy statistics")
        dr = float(check_probability(report_delta, "report_delta"))
        out.append(Charge(name="report", event=_report_event(report, R), count=count, delta=dr))
    return tuple(out)


def release_guarantee(*, loss: str | GLMLoss, lam: float, sigma: float, norm_bound: float, grad_tol: float,
                      sigma_out: float, delta: float, report: _report.PrivacyReport | None = None,
                      report_delta: float | None = None, count: int = 1) -> Guarantee:
    r"""The total guarantee of a release made alone: the model, and the report's releases if any, with the parts.

    The ledger of :func:`model_charges` composed (:func:`pdpkit.accountant.compose`) at
    ``delta`` (+ ``report_delta``): one fit with every Gaussian exactly (ObjPert's dominating
    pair with :math:`\mu^2 = \mu_{\rm out}^2 + \mu_{\rm report}^2`), several fits through the PLD
    or RDP, whichever is smaller. Each part is the mechanism alone at its own δ.

    Parameters
    ----------
    loss : str or GLMLoss
        The loss.
    lam, sigma : float
        ObjPert's regularization and noise.
    norm_bound : float
        Bound on the fitted rows (with an intercept column: √2 times the user's bound).
    grad_tol, sigma_out : float
        The solver's public tolerance τ and the output noise's standard deviation.
    delta : float
        The model's δ.
    report : PrivacyReport, optional
        The report released with the model.
    report_delta : float, optional
        The report's δ (needed when it releases statistics).
    count : int
        Number of fits (one-vs-rest classes).
    """
    ledger = model_charges(loss=loss, lam=lam, sigma=sigma, norm_bound=norm_bound, grad_tol=grad_tol,
                           sigma_out=sigma_out, delta=delta, count=count, report=report, report_delta=report_delta)
    return ledger_guarantee(ledger, sum(c.delta for c in ledger))


def objpert_guarantee(delta: float, *, loss: str | GLMLoss, lam: float, sigma: float, norm_bound: float,
                      grad_tol: float, sigma_out: float) -> Guarantee:
    r"""The tight guarantee of ObjPert as :func:`pdpkit.objpert.objpert_fit` releases it, on rows :math:`\|x\| \le R`.

    ObjPert with :math:`L R` and :math:`\beta R^2` (sharp log-determinant constant; Redberg,
    Koskela & Wang 2023, Thm 3.1 as corrected in :mod:`pdpkit.accounting`) composed exactly
    with the output Gaussian (:func:`pdpkit.accounting.objpert_output_epsilon`). Holds for the
    released ``theta_released``, whatever point the solver stopped at within τ.

    Parameters
    ----------
    delta : float
        The target δ.
    loss : str or GLMLoss
        The loss (bounded gradient and curvature).
    lam, sigma : float
        ObjPert's regularization and noise.
    norm_bound : float
        Bound on the fitted rows.
    grad_tol, sigma_out : float
        The solver's public tolerance and the output noise's standard deviation.
    """
    return release_guarantee(loss=loss, lam=lam, sigma=sigma, norm_bound=norm_bound, grad_tol=grad_tol,
                             sigma_out=sigma_out, delta=delta)


# ---------------------------------------------------------------------- release
_REPORT_FIELDS = ("method", "rho", "sigma_gradient", "sigma_hessian", "sigma_lambda_min", "gradient_release",
                  "hessian_release", "lambda_min_release")
_FIELDS_3 = ("format", "theta", "lam", "sigma", "loss", "norm_bound", "grad_tol", "sigma_out", "fit_intercept",
             "row_norm", "guarantee", "ledger", "report", "classes", "feature_names", "schema")
_FIELDS_4 = _FIELDS_3 + ("seeded",)
_FIELDS = _FIELDS_4 + ("signature",)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


@dataclass(frozen=True, eq=False)
class Release:
    r"""What ObjPert may publish: released coefficients, public parameters, the total guarantee, its ledger, the schema.

    Everything here is a mechanism parameter chosen without looking at the data (``lam``,
    ``sigma``, ``loss``, ``norm_bound``, ``grad_tol``, ``sigma_out``, ``fit_intercept``,
    ``row_norm``), the private output ``theta`` (:math:`\tilde\theta`, output noise included;
    one row per class for a one-vs-rest classifier with three or more classes), a
    post-processing of it, or — in ``report`` — the noisy statistics of a privacy report (one
    per fit). Nothing data-dependent and un-noised goes in: no :math:`b`, no :math:`n`, no
    gradient norm. ``classes``, ``feature_names`` and ``schema`` (a
    :class:`pdpkit.schema.Schema` as a dict) describe the data's columns and are public.

    ``guarantee`` is the **total** of ``ledger`` (:class:`pdpkit.accountant.Charge` entries):
    this release's own fits and report, and — when the release was made under a
    :class:`pdpkit.accountant.PrivacyAccountant` — everything else the session charged
    (preprocessing, other models). :meth:`verify` checks that the ledger holds this release's
    own mechanisms with exactly its parameters and recomputes the total.

    With ``fit_intercept``, the last coefficient multiplies a constant feature of value
    ``norm_bound`` (the fitted rows have norm at most :math:`\sqrt2` ``norm_bound``);
    :attr:`coef` and :attr:`intercept` undo that scaling. ``row_norm="clip"`` records that rows
    beyond ``norm_bound`` were shrunk onto the ball; the prediction methods apply the same map.

    Parameters
    ----------
    theta : array_like, shape (p,) or (K, p)
        Released coefficients (intercept's last).
    lam, sigma : float
        ObjPert's regularization and noise.
    loss : str
        The loss's name.
    norm_bound : float or None
        Bound on the user's rows (``None``: no guarantee).
    grad_tol, sigma_out : float
        The solver's public tolerance and the output noise's standard deviation.
    fit_intercept : bool
        Whether the last coefficient is the intercept column's.
    guarantee : Guarantee or None
        The total guarantee.
    ledger : tuple of Charge
        What the guarantee is the composition of.
    report : dict, list of dict or None
        The privacy report's public fields (one dict per fit).
    classes : tuple or None
        The label values (two for a single model, K for K rows of theta).
    feature_names : tuple of str or None
        The columns the coefficients belong to.
    row_norm : str
        ``"raise"`` or ``"clip"``.
    schema : dict or None
        The public schema the rows were encoded with.
    seeded : bool or None
        ``True`` when the noise was drawn from a seed the caller chose (``random_state`` an
        int or a Generator): anyone who knows the seed can regenerate it, so the release is
        private only while the seed stays secret (:data:`SEEDED_NOTE`, repeated by
        :meth:`verify` as a :class:`SeededReleaseWarning`); ``False`` for OS entropy;
        ``None`` when not recorded (files of format 3, a release built by hand).
    signature : dict or None
        The signature block (:mod:`pdpkit.signing`) over :attr:`payload`, made by
        :meth:`sign`; ``None`` for an unsigned release.
    weighting : dict or None
        A weighted fit's public description, the estimator's ``weighting_``:
        ``weight_bound`` (W > 0), ``weight_policy`` (``"refuse"`` or ``"clip"``),
        ``sample_weight`` (whether sample weights were given), ``class_weight`` (``None``, or
        ``{class: weight >= 0}`` for every class) and ``class_weight_source`` (``"given"``,
        ``"class_prior"``, ``"noisy class count"``, or ``None`` without class weights). Then
        ``lam``, ``sigma`` and ``grad_tol`` are the fitted objective's, divided by W (module
        docstring), and the guarantee's ``accounting`` ends with
        ``"; " + weighting_statement(weighting)`` (:func:`weighting_statement`). ``None`` for
        an unweighted fit (no field in the file).
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
    ledger: tuple[Charge, ...] = ()
    report: Any = None
    classes: tuple[Any, ...] | None = None
    feature_names: tuple[str, ...] | None = None
    row_norm: str = "raise"
    schema: dict[str, Any] | None = None
    seeded: bool | None = None
    signature: dict[str, str] | None = None
    weighting: dict[str, Any] | None = None
    _payload: bytes | None = field(default=None, init=False, repr=False)
    _report_objs: Any = field(default=(), init=False, repr=False)
    _schema_obj: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        s = object.__setattr__
        theta = np.asarray(self.theta)
        theta = as_finite_array(theta, "theta", ndim=theta.ndim if theta.ndim in (1, 2) else 1).copy()
        if theta.shape[-1] < 1 or (theta.ndim == 2 and theta.shape[0] < 3):
            raise ValueError("theta must be a vector, or one row per class for three or more classes")
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
        if self.seeded is not None:
            s(self, "seeded", _bool(self.seeded, "seeded"))
        if self.signature is not None:
            s(self, "signature", _signing.check_signature_block(self.signature))
        if self.row_norm not in ("raise", "clip"):
            raise ValueError(f"row_norm must be 'raise' or 'clip'; got {self.row_norm!r}")
        if self.row_norm == "clip" and self.norm_bound is None:
            raise ValueError("row_norm='clip' needs norm_bound")
        if self.fit_intercept and self.norm_bound is None:
            raise ValueError("fit_intercept=True needs norm_bound (the intercept column's value)")
        if self.fit_intercept and theta.shape[-1] < 2:
            raise ValueError("theta must hold the intercept's coefficient and at least one feature's")
        ledger = tuple(self.ledger or ())
        if not all(isinstance(c, Charge) for c in ledger):
            raise TypeError("ledger entries must be pdpkit.accountant.Charge objects")
        s(self, "ledger", ledger)
        if self.guarantee is not None:
            if not isinstance(self.guarantee, Guarantee):
                raise TypeError("guarantee must be a Guarantee")
            if self.norm_bound is None:
                raise ValueError("a release with a guarantee needs norm_bound: the guarantee holds only for rows "
                                 "within it")
            if not ledger:
                raise ValueError("a release with a guarantee needs its ledger")
        elif ledger:
            raise ValueError("guarantee: null, but the ledger lists charges: a release that spent privacy states "
                             "its guarantee")
        n_feat = theta.shape[-1] - int(self.fit_intercept)
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
            want = 2 if theta.ndim == 1 else theta.shape[0]
            if len(classes) != want or len(set(classes)) != len(classes):
                raise ValueError(f"classes must be {want} distinct labels (one per row of theta, or two); "
                                 f"got {list(classes)}")
            if not all(isinstance(c, (str, int, float)) for c in classes):
                raise TypeError("classes must be strings or numbers")
            s(self, "classes", classes)
        elif theta.ndim == 2:
            raise ValueError("a release with one row of theta per class needs classes")
        s(self, "weighting", _checked_weighting(self.weighting, self.classes))
        if self.schema is not None:
            from .schema import Schema

            sch = self.schema if isinstance(self.schema, Schema) else Schema.from_dict(self.schema)
            if sch.nonprivate_draft:
                raise ValueError("schema: is a non-private draft (its bounds and domains were read from the data); "
                                 "a release's schema must be reviewed, with its draft marks removed")
            if self.feature_names is not None and tuple(sch.encoded_names) != self.feature_names:
                raise ValueError("feature_names: are not the schema's encoded features, in its order")
            if self.feature_names is None and len(sch.encoded_names) != n_feat:
                raise ValueError(f"schema: encodes {len(sch.encoded_names)} features but theta has {n_feat} feature "
                                 "coefficients")
            s(self, "_schema_obj", sch)
            s(self, "schema", sch.to_dict())
        if self.report is not None:
            reps = self.report if isinstance(self.report, (list, tuple)) else [self.report]
            if len(reps) != self.n_models:
                raise ValueError(f"report must hold one report per fit ({self.n_models}); got {len(reps)}")
            objs = tuple(self._build_report(r, k) for k, r in enumerate(reps))
            s(self, "_report_objs", objs)
            fields = [_public_report_fields(o) for o in objs]
            s(self, "report", fields[0] if theta.ndim == 1 else fields)

    @property
    def n_models(self) -> int:
        """Number of fitted models: 1, or K for a one-vs-rest classifier with K >= 3 classes."""
        return 1 if self.theta.ndim == 1 else int(self.theta.shape[0])

    def _thetas(self) -> np.ndarray:
        return self.theta[None, :] if self.theta.ndim == 1 else self.theta

    def _build_report(self, rep: Any, k: int) -> _report.PrivacyReport:
        if isinstance(rep, _report.PrivacyReport):
            rep = _public_report_fields(rep)
        where = "report" if self.n_models == 1 else f"report[{k}]"
        _keys(rep, where, required=_REPORT_FIELDS)
        kw = dict(rep)
        if not isinstance(kw["method"], str):
            raise TypeError(f"{where}.method must be a string")
        kw["rho"] = _delta(kw["rho"], f"{where}.rho")
        for key in ("sigma_gradient", "sigma_hessian", "sigma_lambda_min", "lambda_min_release"):
            if kw[key] is not None:
                kw[key] = _real(kw[key], f"{where}.{key}", positive=key != "lambda_min_release")
        try:
            with np.errstate(all="ignore"):  # absurd noise scales are refused by verify(), not by a warning
                obj = _report.PrivacyReport(theta=self._thetas()[k], lam=self.lam, sigma=self.sigma,
                                            loss=get_loss(self.loss), **kw)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{where}: {exc}") from None
        return obj

    def __repr__(self) -> str:
        g = str(self.guarantee) if self.guarantee is not None else "no DP guarantee"
        k = f", classes={self.n_models}" if self.n_models > 1 else ""
        return (f"Release(loss={self.loss!r}, d={self.coef.shape[-1]}{k}, fit_intercept={self.fit_intercept}, "
                f"lam={self.lam:.6g}, sigma={self.sigma:.6g}, norm_bound={self.norm_bound}, {g}"
                f"{', with a privacy report' if self.report else ''}"
                f"{'; ' + SEEDED_NOTE if self.seeded else ''})")

    # ------------------------------------------------------------ the model
    @property
    def coef(self) -> np.ndarray:
        """Coefficients of the user's (encoded) features: shape (d,), or (K, d) for K >= 3 classes."""
        return self.theta[..., :-1] if self.fit_intercept else self.theta

    @property
    def intercept(self) -> Any:
        """The intercept (0.0 without ``fit_intercept``; one per class for K >= 3 classes)."""
        if not self.fit_intercept:
            return 0.0 if self.theta.ndim == 1 else np.zeros(self.theta.shape[0])
        b = self.theta[..., -1] * self.norm_bound
        return float(b) if self.theta.ndim == 1 else np.array(b)

    @property
    def fit_norm_bound(self) -> float | None:
        r"""The bound on the fitted rows: ``norm_bound``, times :math:`\sqrt2` with an intercept."""
        if self.norm_bound is None:
            return None
        return self.norm_bound * (_SQRT2 if self.fit_intercept else 1.0)

    @property
    def schema_object(self) -> Any:
        """The schema as a :class:`pdpkit.schema.Schema` (``None`` without one)."""
        return self._schema_obj

    @property
    def privacy_report(self) -> _report.PrivacyReport | None:
        """The released privacy report of the single model (:class:`pdpkit.report.PrivacyReport`), or ``None``.

        For a one-vs-rest release with K >= 3 classes use :attr:`privacy_reports`.
        """
        if not self._report_objs:
            return None
        if self.n_models > 1:
            raise ValueError("this release has one report per class: use privacy_reports")
        return self._report_objs[0]

    @property
    def privacy_reports(self) -> tuple[_report.PrivacyReport, ...]:
        """One released privacy report per fit (empty without a report)."""
        return tuple(self._report_objs)

    def rows(self, X: Any, *, encoded: bool = False) -> np.ndarray:
        """The rows the model reads for records ``X``: encoded by the schema, columns checked by name, clipped.

        A pandas DataFrame's columns are matched **by name** to the release's schema or
        ``feature_names`` (reordered if needed; a missing column is a ``ValueError`` naming it);
        an array must have the release's columns in the release's order. With a schema, raw
        records are encoded by it (:meth:`pdpkit.schema.Schema.encode`) and scaled by
        ``norm_bound``. With ``row_norm="clip"`` rows beyond ``norm_bound`` are shrunk onto the
        ball (the map the model was fitted through); with ``"raise"`` they are refused.

        Parameters
        ----------
        X : DataFrame or array_like, shape (n, d)
            Records.
        encoded : bool
            ``X`` holds rows already encoded by the release's schema (times ``norm_bound``), in
            the order of ``feature_names``: they are not encoded again.
        """
        return _model_rows(X, schema=self._schema_obj, feature_names=self.feature_names, norm_bound=self.norm_bound,
                           row_norm=self.row_norm, d=self.coef.shape[-1], encoded=encoded)

    def decision_function(self, X: Any, *, encoded: bool = False) -> np.ndarray:
        r"""Scores :math:`x^\top\text{coef} + \text{intercept}` (one column per class for K >= 3); post-processing.

        Parameters
        ----------
        X : DataFrame or array_like, shape (n, d)
            Records (see :meth:`rows` for how columns are matched).
        encoded : bool
            ``X`` is already encoded by the schema (see :meth:`rows`).
        """
        rows = self.rows(X, encoded=encoded)
        return rows @ self.coef.T + self.intercept

    def predict_proba(self, X: Any, *, encoded: bool = False) -> np.ndarray:
        r"""Class probabilities (logistic loss): :math:`\sigma(s)` for two classes; one-vs-rest scores normalized.

        Parameters
        ----------
        X : DataFrame or array_like, shape (n, d)
            Records (see :meth:`rows`).
        encoded : bool
            ``X`` is already encoded by the schema (see :meth:`rows`).
        """
        if self.loss != "logistic":
            raise ValueError(f"predict_proba needs the logistic loss; this release's loss is {self.loss!r}")
        s = self.decision_function(X, encoded=encoded)
        if s.ndim == 1:
            p = _sigmoid(s)
            return np.column_stack([1.0 - p, p])
        p = _sigmoid(s)
        return p / p.sum(axis=1, keepdims=True)

    def predict(self, X: Any, *, encoded: bool = False) -> np.ndarray:
        """Predicted labels (classification), or predicted values (regression, in the label's units).

        Parameters
        ----------
        X : DataFrame or array_like, shape (n, d)
            Records (see :meth:`rows`).
        encoded : bool
            ``X`` is already encoded by the schema (see :meth:`rows`).
        """
        s = self.decision_function(X, encoded=encoded)
        if self.loss != "logistic":
            if self._schema_obj is not None and self._schema_obj.label_bounds is not None:
                return np.asarray(self._schema_obj.decode_label(s), dtype=float)
            return s
        classes = np.asarray(self.classes if self.classes is not None else (-1.0, 1.0), dtype=object)
        idx = (s > 0).astype(int) if s.ndim == 1 else np.argmax(s, axis=1)
        out = classes[idx]
        try:
            return out.astype(np.asarray(list(classes)).dtype)
        except (TypeError, ValueError):  # pragma: no cover
            return out

    # ------------------------------------------------------------ checking
    def own_charges(self) -> tuple[Charge, ...]:
        """The ledger entries this release's own fits and report must have (at the ledger's δ for them)."""
        g = self.guarantee
        if g is None:
            return ()
        model = [c for c in self.ledger if c.kind == "objpert" and c.name.endswith("model")]
        reps = [c for c in self.ledger if c.kind == "gaussian" and c.name.endswith("report")]
        delta = model[0].delta if model else g.delta
        released = bool(self._report_objs) and bool(self._report_objs[0].released_statistics)
        dr = reps[0].delta if (released and reps) else (1e-6 if released else None)
        return model_charges(loss=self.loss, lam=self.lam, sigma=self.sigma, norm_bound=self.fit_norm_bound,
                             grad_tol=self.grad_tol, sigma_out=self.sigma_out, delta=delta, count=self.n_models,
                             report=self._report_objs[0] if released else None, report_delta=dr)

    def expected_guarantee(self) -> Guarantee | None:
        """The guarantee the ledger gives at the release's total δ (``None`` without a guarantee).

        A weighted release's (``weighting``) says so in its ``accounting``
        (:func:`weighting_statement`), and a noisy class count must be in the ledger.
        """
        g = self.guarantee
        if g is None:
            return None
        for own in self.own_charges():
            if not any(c.kind == own.kind and c.count == own.count and c.params.keys() == own.params.keys()
                       and all(_close(c.params[k], own.params[k]) for k in own.params) for c in self.ledger):
                raise ValueError(f"ledger: it lacks this release's own {own.name!r} entry ({own.kind}, count "
                                 f"{own.count}, parameters {own.params}): the guarantee would not cover it")
        wt = self.weighting
        if wt is not None and wt["class_weight_source"] == "noisy class count" and not any(
                c.kind == "gaussian" and c.name.endswith(_COUNT_ENTRY) for c in self.ledger):
            raise ValueError("ledger: it lacks the noisy class count's entry (weighting.class_weight_source is "
                             "'noisy class count'): the guarantee would not cover the class weights")
        return _weighted(ledger_guarantee(self.ledger, g.delta), wt)

    # ------------------------------------------------------------ signing
    @property
    def payload(self) -> bytes:
        """The bytes a signature covers: the release's canonical JSON without its signature block.

        For a release read from a file, the canonical bytes of what the file says; for one
        made in this session, of :meth:`to_dict`. Sorted keys, no spaces, ASCII
        (``pdpkit._json.canonical_json``): the same however the file was indented.
        """
        if self._payload is not None:
            return self._payload
        return canonical_json({k: v for k, v in self.to_dict().items() if k != "signature"})

    @property
    def fingerprint(self) -> str:
        """SHA-256 of :attr:`payload`, 64 hex digits: names this release's contents, signed or not."""
        return hashlib.sha256(self.payload).hexdigest()

    @property
    def signer(self) -> str | None:
        """The fingerprint of the key that signed the release (not checked here: :meth:`verify`), or ``None``."""
        return None if self.signature is None else self.signature["fingerprint"]

    def sign(self, private_key: Any) -> Release:
        """This release signed with an Ed25519 key: a copy whose ``signature`` covers :attr:`payload`.

        Parameters
        ----------
        private_key : cryptography's Ed25519PrivateKey, or the path of its PEM file (``pdpkit keygen``)

        Returns
        -------
        Release
            The signed copy (verified with the key's public half before it is returned).
        """
        bare = replace(self, signature=None)
        block = _signing.sign_payload(private_key, bare.payload, context=_signing.RELEASE_CONTEXT)
        signed = replace(bare, signature=block)
        _signing.verify_payload(block, signed.payload, context=_signing.RELEASE_CONTEXT)
        return signed

    def verify_signature(self, public_key: Any = None) -> str:
        """Check the signature over :attr:`payload`; return the signer's fingerprint.

        With ``public_key`` (the publisher's), the release must be signed by that key; without,
        by the key its signature names (intact since signing, by whoever holds that key).
        :class:`pdpkit.signing.SignatureError` (a ``ValueError`` whose message starts with
        "signature") otherwise, an unsigned release included.

        Parameters
        ----------
        public_key : optional
            The publisher's public key, or the path of ``KEY.pub``.
        """
        return _signing.verify_payload(self.signature, self.payload, context=_signing.RELEASE_CONTEXT,
                                       public_key=public_key)

    def verify(self, public_key: Any = None) -> Release:
        """Recompute the guarantee from the ledger and the public fields; ``ValueError`` naming what disagrees.

        Returns the release itself, so ``Release.from_json(text).verify()`` chains. A release
        without a guarantee verifies trivially (it claims nothing). A release drawn from a
        caller's seed verifies with a :class:`SeededReleaseWarning` (:data:`SEEDED_NOTE`).

        With ``public_key``, the release must also be signed by that key
        (:meth:`verify_signature`): every edit of any field is then refused, and so is a
        release whose signature was removed. Without it, a signed release's signature is
        checked against the key it names — compare :attr:`signer` with the fingerprint the
        publisher lists.

        Parameters
        ----------
        public_key : optional
            The publisher's public key (cryptography's Ed25519PublicKey, or the path of ``KEY.pub``).
        """
        if public_key is not None or self.signature is not None:
            self.verify_signature(public_key)
        return self._verify_parameters()

    def _verify_parameters(self) -> Release:
        """:meth:`verify` without the signature (checked already, by :meth:`from_dict`, before the fields)."""
        if self.seeded:
            warnings.warn(f"this release is {SEEDED_NOTE}", SeededReleaseWarning, stacklevel=3)
        try:
            want = self.expected_guarantee()
        except (TypeError, ValueError) as exc:
            raise ValueError(f"guarantee: the release's parameters (lam, sigma, norm_bound, grad_tol, sigma_out, the "
                             f"report's noise scales and the ledger) give no guarantee to check it against: {exc}") \
                from None
        if want is None:
            return self
        _check_guarantee(self.guarantee, want)
        return self

    # ------------------------------------------------------------ serialization
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (see :meth:`to_json`); ``weighting`` only for a weighted fit (its class weights keyed by
        the classes' texts)."""
        out = {
            "format": RELEASE_FORMAT,
            "theta": self.theta.tolist(),
            "lam": self.lam,
            "sigma": self.sigma,
            "loss": self.loss,
            "norm_bound": self.norm_bound,
            "grad_tol": self.grad_tol,
            "sigma_out": self.sigma_out,
            "fit_intercept": self.fit_intercept,
            "row_norm": self.row_norm,
            "guarantee": None if self.guarantee is None else self.guarantee.to_dict(),
            "ledger": [c.to_dict() for c in self.ledger],
            "report": self.report,
            "classes": None if self.classes is None else [_json_scalar(c) for c in self.classes],
            "feature_names": None if self.feature_names is None else list(self.feature_names),
            "schema": self.schema,
            "seeded": self.seeded,
            "signature": self.signature,
        }
        if self.weighting is not None:  # (an unweighted release has no such field: its file is unchanged)
            wt = dict(self.weighting)
            if wt["class_weight"] is not None:
                wt["class_weight"] = {_class_text(c): v for c, v in wt["class_weight"].items()}
            out["weighting"] = wt
        return out

    def to_json(self, **kwargs: Any) -> str:
        """The release as JSON text; ``kwargs`` go to ``json.dumps`` (for instance ``indent=2``).

        Parameters
        ----------
        **kwargs
            Passed to ``json.dumps``.
        """
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    @classmethod
    def from_dict(cls, data: Any, *, verify: bool = True, public_key: Any = None) -> Release:
        """Inverse of :meth:`to_dict`, strict, and verified (:meth:`verify`) unless ``verify=False``.

        ``ValueError``/``TypeError`` naming the field for another format, an unknown or missing
        field, a value of the wrong type or range, inconsistent lengths, or a guarantee its
        parameters and ledger do not give. A format-2 file (one model, no ledger) is read: its
        ledger is rebuilt from its parameters and its stated total checked against it.

        The signature, if any, is checked first, over the canonical bytes of ``data`` as given
        (without its ``signature``): with ``public_key`` a file not signed by that key is
        refused whatever ``verify`` says; without it, a signed file must verify with the key
        it names.

        Parameters
        ----------
        data : dict
            A dict as :meth:`to_dict` writes it.
        verify : bool
            Whether to recompute the guarantee.
        public_key : optional
            The publisher's public key (or the path of ``KEY.pub``): the file must be signed by it.
        """
        if not isinstance(data, dict):
            raise TypeError(f"a release must be a JSON object; got {type(data).__name__}")
        fmt = data.get("format")
        signature = data.get("signature") if fmt == RELEASE_FORMAT else None
        payload = None
        if fmt == RELEASE_FORMAT:  # the bytes the file says, kept: a later verify(public_key) checks them
            try:
                payload = canonical_json({k: v for k, v in data.items() if k != "signature"})
            except (TypeError, ValueError) as exc:
                raise ValueError(f"release: not JSON values ({exc})") from None
        if payload is not None and (public_key is not None or (verify and signature is not None)):
            _signing.verify_payload(signature, payload, context=_signing.RELEASE_CONTEXT, public_key=public_key)
        elif public_key is not None:
            _signing.verify_payload(None, b"", context=_signing.RELEASE_CONTEXT, public_key=public_key)
        rel = cls._from_dict(data, fmt, verify=verify)
        if payload is not None:
            object.__setattr__(rel, "_payload", payload)
        # a signature or a key was checked above, over the file's bytes: the fields remain
        return rel._verify_parameters() if verify else rel

    @classmethod
    def _from_dict(cls, data: dict, fmt: Any, *, verify: bool) -> Release:
        if fmt == _FORMAT_2:
            return cls._from_format_2(data, verify=verify)
        if fmt not in (RELEASE_FORMAT, _FORMAT_4, _FORMAT_3):
            if fmt == OPS_RELEASE_FORMAT:
                raise ValueError(f"format {fmt!r} is an OPS/AdaOPS release: read it with OPSRelease.from_json or "
                                 "load_release")
            if isinstance(fmt, str) and fmt.startswith("pdpkit-release/"):
                raise ValueError(f"format {fmt!r} is not supported (expected {RELEASE_FORMAT!r}): its guarantee "
                                 "assumed the solver's exact minimizer; fit the model again")
            raise ValueError(f"not a pdpkit release (expected format {RELEASE_FORMAT!r})")
        _keys(data, "release", required={RELEASE_FORMAT: _FIELDS, _FORMAT_4: _FIELDS_4}.get(fmt, _FIELDS_3),
              optional=("weighting",) if fmt == RELEASE_FORMAT else ())
        seeded = data["seeded"] if fmt != _FORMAT_3 else None
        if seeded is not None and not isinstance(seeded, bool):
            raise TypeError(f"seeded must be true, false or null (not recorded); got {seeded!r}")
        theta = _theta_from_json(data["theta"])
        g = data["guarantee"]
        classes, names, ledger = data["classes"], data["feature_names"], data["ledger"]
        for key, val in (("classes", classes), ("feature_names", names), ("ledger", ledger)):
            if val is not None and not isinstance(val, list):
                raise TypeError(f"{key} must be a list or null")
        entries = []
        for i, c in enumerate(ledger or []):
            try:
                entries.append(Charge.from_dict(c))
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"ledger[{i}]: {exc}") from None
        rel = cls(theta=theta, lam=data["lam"], sigma=data["sigma"], loss=data["loss"],
                  norm_bound=data["norm_bound"], grad_tol=data["grad_tol"], sigma_out=data["sigma_out"],
                  fit_intercept=data["fit_intercept"], guarantee=None if g is None else Guarantee.from_dict(g),
                  ledger=tuple(entries), report=data["report"], classes=None if classes is None else tuple(classes),
                  feature_names=None if names is None else tuple(names), row_norm=data["row_norm"],
                  schema=data["schema"], seeded=seeded,
                  signature=data["signature"] if fmt == RELEASE_FORMAT else None,
                  weighting=_weighting_from_json(data.get("weighting"), classes))
        return rel

    @classmethod
    def _from_format_2(cls, data: dict, *, verify: bool) -> Release:
        _keys(data, "release", required=tuple(k for k in _FIELDS_3 if k not in ("ledger", "schema")))
        theta = _theta_from_json(data["theta"])
        if theta.ndim != 1:
            raise TypeError("theta must be a list of numbers")
        classes, names = data["classes"], data["feature_names"]
        for key, val in (("classes", classes), ("feature_names", names)):
            if val is not None and not isinstance(val, list):
                raise TypeError(f"{key} must be a list or null")
        kw = dict(theta=theta, lam=data["lam"], sigma=data["sigma"], loss=data["loss"], norm_bound=data["norm_bound"],
                  grad_tol=data["grad_tol"], sigma_out=data["sigma_out"], fit_intercept=data["fit_intercept"],
                  report=data["report"], classes=None if classes is None else tuple(classes),
                  feature_names=None if names is None else tuple(names), row_norm=data["row_norm"])
        g = data["guarantee"]
        if g is None:
            return cls(**kw)
        old = Guarantee.from_dict(g)
        bare = cls(**kw)
        parts = {p.name: p for p in old.parts}
        if "model" not in parts:
            raise ValueError("guarantee.parts lacks the model's part")
        rep = bare._report_objs[0] if bare._report_objs else None
        ledger = model_charges(loss=bare.loss, lam=bare.lam, sigma=bare.sigma, norm_bound=bare.fit_norm_bound,
                               grad_tol=bare.grad_tol, sigma_out=bare.sigma_out, delta=parts["model"].delta,
                               report=rep, report_delta=parts["report"].delta if "report" in parts else None)
        new = ledger_guarantee(ledger, sum(c.delta for c in ledger))
        if verify and not (_close(new.epsilon, old.epsilon) and _close(new.delta, old.delta)):
            raise ValueError(f"guarantee.epsilon = {old.epsilon!r} is not what the release's parameters give "
                             f"({new.epsilon!r})")
        return cls(**kw, guarantee=new, ledger=ledger)

    @classmethod
    def from_json(cls, text: str | bytes, *, verify: bool = True, public_key: Any = None) -> Release:
        """Inverse of :meth:`to_json` (strict and verified, as :meth:`from_dict`).

        Hostile text is a ``ValueError`` naming the field (``pdpkit._json.loads_strict``):
        a key given twice, an integer of more than 19 digits, a number beyond a float's range,
        ``NaN``, nesting deeper than 64.

        Parameters
        ----------
        text : str or bytes
            JSON text.
        verify : bool
            Whether to recompute the guarantee.
        public_key : optional
            The publisher's public key (or the path of ``KEY.pub``): the file must be signed by it.
        """
        return cls.from_dict(loads_strict(text, "the release"), verify=verify, public_key=public_key)



def _weighted(g: Guarantee | None, weighting: dict[str, Any] | None) -> Guarantee | None:
    """A weighted fit's guarantee: ``accounting`` followed by :func:`weighting_statement` (unchanged without)."""
    if g is None or weighting is None:
        return g
    return replace(g, accounting=f"{g.accounting}; {weighting_statement(weighting)}")


def _check_guarantee(g: Guarantee, want: Guarantee) -> None:
    """``ValueError`` naming the field where a stated guarantee (with its parts) differs from the recomputed one."""
    if len(g.parts) != len(want.parts):
        raise ValueError(f"guarantee.parts must list the ledger's {len(want.parts)} entries")
    pairs = [(f"guarantee.parts[{i}]", p, q) for i, (p, q) in enumerate(zip(g.parts, want.parts, strict=True))]
    for where, have, expect in pairs + [("guarantee", g, want)]:
        numeric = expect.accounting.split("; ", 1)[0] in ("pld+rdp", "rdp")
        for attr in ("epsilon", "delta"):
            a, b = getattr(have, attr), getattr(expect, attr)
            ok = _close(a, b) if not (numeric and attr == "epsilon") else (b * (1 - 1e-9) <= a <= b * (1 + 1e-6)
                                                                            + 1e-12)
            if not ok:
                raise ValueError(f"{where}.{attr} = {a!r} is not what the release's parameters give ({b!r})")
        if have.accounting != expect.accounting:
            weighted = " (the analysis, then what the release's weighting says)" if "; " in expect.accounting else ""
            raise ValueError(f"{where}.accounting must be {expect.accounting!r}{weighted}")
        if where != "guarantee" and have.name != expect.name:
            raise ValueError(f"{where}.name must be {expect.name!r} (the ledger's entry)")


def _model_rows(X: Any, *, schema: Any, feature_names: Any, norm_bound: float | None, row_norm: str, d: int,
                encoded: Any) -> np.ndarray:
    """The rows a released linear model reads for records ``X`` (:meth:`Release.rows`, :meth:`OPSRelease.rows`)."""
    if schema is not None and not _bool(encoded, "encoded"):
        sch = schema
        if hasattr(X, "columns"):
            missing = [c for c in sch.feature_names if c not in list(X.columns)]
            if missing:
                raise ValueError(f"X lacks the schema's feature column(s) {missing}")
            X = X[list(sch.feature_names)]
        rows = np.asarray(sch.encode(X), dtype=float) * float(norm_bound or 1.0)
    else:
        if hasattr(X, "columns"):
            cols = [str(c) for c in X.columns]
            if feature_names is not None:
                missing = [c for c in feature_names if c not in cols]
                if missing:
                    raise ValueError(f"X lacks the release's feature column(s) {missing}; its columns are "
                                     "matched by name")
                X = X[list(feature_names)]
            elif len(cols) != d:
                raise ValueError(f"X must have {d} columns; got {len(cols)}")
        rows = as_finite_array(np.asarray(X, dtype=float), "X", ndim=2)
    if rows.shape[1] != d:
        raise ValueError(f"X must have {d} columns; got {rows.shape[1]}")
    if norm_bound is not None:
        norms = row_norms(rows)
        over = norms > norm_bound * (1.0 + 1e-12)
        if np.any(over):
            if row_norm == "clip":
                rows = rows * clip_factors(norms, norm_bound)[:, None]
            else:
                raise ValueError(f"a row of X lies outside norm_bound={norm_bound:g}: the model was "
                                 "fitted on rows inside it (row_norm='raise')")
    return rows


def _theta_from_json(theta: Any) -> np.ndarray:
    def numbers(row: Any) -> bool:
        return isinstance(row, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in row)

    if numbers(theta):
        return np.asarray(theta, dtype=float)
    if isinstance(theta, list) and theta and all(numbers(r) for r in theta) and len({len(r) for r in theta}) == 1:
        return np.asarray(theta, dtype=float)
    raise TypeError("theta must be a list of numbers, or a list of equally long lists of numbers (one per class)")


def _public_report_fields(rep: _report.PrivacyReport) -> dict[str, Any]:
    """The report's own fields (its releases and noise scales), without θ, λ, σ and the loss."""
    d = rep.to_dict()
    return {k: d[k] for k in _REPORT_FIELDS}


def _json_scalar(value: Any) -> Any:
    """A label value as JSON can hold it (numpy scalars to Python)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def _user_bound(result: ObjPertResult, norm_bound: float | None, fit_intercept: bool) -> float | None:
    fitted = result.norm_bound
    scale = _SQRT2 if fit_intercept else 1.0
    if fitted is None:
        if fit_intercept:
            raise ValueError("fit_intercept=True needs a fit with a norm bound (the intercept column's value)")
        if norm_bound is not None:
            raise ValueError("norm_bound must match the bound the fit enforced; the fit enforced none "
                             "(norm_bound=None), so its release carries no guarantee")
        return None
    derived = fitted / scale
    if norm_bound is None:
        return derived
    R = _real(norm_bound, "norm_bound")
    if abs(R * scale - fitted) > 1e-12 * fitted:
        raise ValueError(f"norm_bound={R:g} is not the bound the fit enforced ({derived:g} on the user's rows"
                         f"{', before the intercept column' if fit_intercept else ''}): a guarantee holds "
                         "only at the bound the data were checked against")
    return R


def _check_fit(result: Any, report: Any) -> str:
    if not isinstance(result, ObjPertResult):
        raise TypeError(f"result must be an ObjPertResult; got {type(result).__name__}")
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
    return loss_name


def objpert_release(result: ObjPertResult, *, delta: float | None = None, report: Any = None,
                    report_delta: float | None = None, norm_bound: float | None = None, fit_intercept: bool = False,
                    classes: Any = None, feature_names: Any = None, row_norm: str = "raise",
                    schema: Any = None, accountant: Any = None, seeded: bool | None = None,
                    weighting: dict[str, Any] | None = None) -> Release:
    r"""The publishable part of an ObjPert fit, with its total guarantee at ``delta`` (+ ``report_delta``).

    ``result.theta_released`` is published (never the solver's point). The fit records the
    bound it enforced on the fitted rows; ``norm_bound`` is the bound on the rows the *user*
    passed — equal to the fit's, or with ``fit_intercept`` the fit's divided by :math:`\sqrt2`.
    A fit made with ``norm_bound=None`` or ``delta=None`` gives a release without a guarantee.
    With ``accountant`` (a :class:`pdpkit.accountant.PrivacyAccountant` that was already
    charged for this fit, see :meth:`pdpkit.accountant.PrivacyAccountant.charge_objpert`), the
    guarantee is the accountant's total and the ledger its ledger.

    Parameters
    ----------
    result : ObjPertResult
        The fit.
    delta : float, optional
        The model's δ.
    report : PrivacyReport, optional
        A report of this fit.
    report_delta : float, optional
        The report's δ (needed when it releases statistics).
    norm_bound : float, optional
        Bound on the user's rows (checked against the fit's).
    fit_intercept : bool
        Whether the fit's last column was the intercept column.
    classes : sequence, optional
        The two label values.
    feature_names : sequence of str, optional
        Column names.
    row_norm : str
        ``"raise"`` or ``"clip"``.
    schema : Schema or dict, optional
        The public schema the rows were encoded with.
    accountant : PrivacyAccountant, optional
        The session's accountant (already charged).
    seeded : bool, optional
        Whether the noise came from a caller's seed (recorded in the file as ``seeded``).
    weighting : dict, optional
        A weighted fit's public description (an estimator's ``weighting_``, :class:`Release`):
        ``result`` is then the fit of the objective divided by ``weighting["weight_bound"]``, and
        the guarantee says so (:func:`weighting_statement`). ``None`` for an unweighted fit.
    """
    fit_intercept = _bool(fit_intercept, "fit_intercept")
    loss_name = _check_fit(result, report)
    R = _user_bound(result, norm_bound, fit_intercept)
    return _assemble([result], [report] if report is not None else None, loss_name=loss_name, R=R, delta=delta,
                     report_delta=report_delta, fit_intercept=fit_intercept, classes=classes,
                     feature_names=feature_names, row_norm=row_norm, schema=schema, accountant=accountant,
                     seeded=seeded, weighting=weighting)


def multiclass_release(results: Any, *, classes: Any, delta: float | None = None, reports: Any = None,
                       report_delta: float | None = None, norm_bound: float | None = None,
                       fit_intercept: bool = False, feature_names: Any = None, row_norm: str = "raise",
                       schema: Any = None, accountant: Any = None, seeded: bool | None = None,
                       weighting: dict[str, Any] | None = None) -> Release:
    r"""The release of a one-vs-rest classifier: K ObjPert fits (same λ, σ, τ, σ_out) on the same records.

    Every record is in all K problems, so the guarantee composes K fits
    (:func:`model_charges` with ``count=K``; PLD or RDP, whichever is smaller).

    Parameters
    ----------
    results : sequence of ObjPertResult
        One fit per class, in the order of ``classes``.
    classes : sequence
        The K >= 3 label values.
    delta : float, optional
        The models' δ.
    reports : sequence of PrivacyReport, optional
        One report per fit, all with the same noise scales.
    report_delta : float, optional
        The reports' δ.
    norm_bound : float, optional
        Bound on the user's rows.
    fit_intercept : bool
        Whether the fits' last column was the intercept column.
    feature_names : sequence of str, optional
        Column names.
    row_norm : str
        ``"raise"`` or ``"clip"``.
    schema : Schema or dict, optional
        The public schema.
    accountant : PrivacyAccountant, optional
        The session's accountant (already charged for the K fits).
    seeded : bool, optional
        Whether the noise came from a caller's seed.
    weighting : dict, optional
        The K fits' weights, public (as in :func:`objpert_release`: every record has one weight
        in all K problems).
    """
    results = list(results)
    if len(results) < 3:
        raise ValueError("a one-vs-rest release needs three or more fits (two classes: one fit)")
    fit_intercept = _bool(fit_intercept, "fit_intercept")
    names = {_check_fit(r, rep) for r, rep in zip(results, reports or [None] * len(results), strict=True)}
    first = results[0]
    if len(names) != 1 or any((r.lam, r.sigma, r.grad_tol, r.sigma_out, r.norm_bound) !=
                              (first.lam, first.sigma, first.grad_tol, first.sigma_out, first.norm_bound)
                              for r in results):
        raise ValueError("the fits of a one-vs-rest release must share loss, lam, sigma, grad_tol, sigma_out and "
                         "norm_bound")
    R = _user_bound(first, norm_bound, fit_intercept)
    return _assemble(results, reports, loss_name=names.pop(), R=R, delta=delta, report_delta=report_delta,
                     fit_intercept=fit_intercept, classes=classes, feature_names=feature_names, row_norm=row_norm,
                     schema=schema, accountant=accountant, seeded=seeded, weighting=weighting)


def _assemble(results: list, reports: Any, *, loss_name: str, R: float | None, delta: float | None,
              report_delta: float | None, fit_intercept: bool, classes: Any, feature_names: Any, row_norm: str,
              schema: Any, accountant: Any, seeded: bool | None = None, weighting: Any = None) -> Release:
    first = results[0]
    classes = None if classes is None else tuple(_json_scalar(c) for c in classes)
    weighting = _checked_weighting(weighting, classes)
    scale = _SQRT2 if fit_intercept else 1.0
    guarantee, ledger = None, ()
    rep0 = reports[0] if reports else None
    if R is not None and delta is not None:
        own = model_charges(loss=first.loss, lam=first.lam, sigma=first.sigma, norm_bound=R * scale,
                            grad_tol=first.grad_tol, sigma_out=first.sigma_out, delta=delta, count=len(results),
                            report=rep0, report_delta=report_delta)
        if accountant is not None:
            ledger = tuple(accountant.ledger)
            guarantee = accountant.spent()
        else:
            ledger = own
            guarantee = ledger_guarantee(own, sum(c.delta for c in own))
        guarantee = _weighted(guarantee, weighting)
    theta = np.array(first.theta_released) if len(results) == 1 else np.vstack([r.theta_released for r in results])
    if schema is not None and not isinstance(schema, dict):
        schema = schema.to_dict()
    rel = Release(theta=theta, lam=first.lam, sigma=first.sigma, loss=loss_name, norm_bound=R,
                  grad_tol=first.grad_tol, sigma_out=first.sigma_out, fit_intercept=fit_intercept,
                  guarantee=guarantee, ledger=ledger,
                  report=None if not reports else (reports[0] if len(results) == 1 else list(reports)),
                  classes=classes,
                  feature_names=None if feature_names is None else tuple(str(s) for s in feature_names),
                  row_norm=row_norm, schema=schema, seeded=seeded, weighting=weighting)
    if guarantee is not None:
        rel.expected_guarantee()  # the ledger must hold this release's own mechanisms
    return rel


# ---------------------------------------------------------------------- OPS and AdaOPS
_OPS_FIELDS = ("format", "mechanism", "theta", "lam", "gamma", "n_max", "norm_bound", "fit_intercept", "row_norm",
               "label_bounds", "kappa", "lam_min_noisy", "guarantee", "ledger", "feature_names", "schema", "seeded",
               "signature")
_OPS_MECHANISMS = ("ops", "adaops")


def _adaops_model(event: AdaOPSEvent, *, lam_min_noisy: float, kappa: float, n_max: int, p: int) -> tuple[float, float]:
    r"""(λ, γ) on the unit-ball rows that :func:`pdpkit.ops.adaops_fit` derives from the released λ̃.

    Its steps 2 and 3: margin :math:`1 + \sigma_\lambda\Phi^{-1}(1 - \delta_{\rm fail})`, target
    :math:`n_{\max}/(p\kappa)`, λ = max(0, target − λ̃ + margin), γ calibrated for
    (ε_ops, δ_ops) on the class that λ guarantees.
    """
    margin = 1.0 + event.sigma_lam * float(-special.ndtri(event.delta_fail))
    target = n_max / (p * kappa)
    lam = max(0.0, target - lam_min_noisy + margin)
    gamma = ops_gamma_for_dp(event.eps_ops, event.delta_ops, n=n_max + 1, lam=lam, x_bound=1.0, y_bound=1.0,
                             lam_min=max(target - lam, 0.0))
    return lam, gamma


@dataclass(frozen=True, eq=False)
class OPSRelease:
    r"""What OPS or AdaOPS may publish: the sampled coefficients, the public parameters, the guarantee and its ledger.

    The release of :class:`pdpkit.ops_estimators.OPSRegressor` (``mechanism="ops"``: one
    sample of :math:`\mathcal N(\hat\theta_\lambda, H^{-1}/\gamma)` at a public λ, Wang 2019 §4)
    or :class:`pdpkit.ops_estimators.AdaOPSRegressor` (``"adaops"``: Wang 2019, Alg 1 as corrected in
    :mod:`pdpkit.ops`, which also releases the noisy :math:`\tilde\lambda` = ``lam_min_noisy``
    and derives λ and γ from it). ``theta`` holds the coefficients on the fitted scale: rows
    checked against (or clipped to) ``norm_bound``, an intercept column of value ``norm_bound``
    with ``fit_intercept``, labels mapped from their public bounds (``label_bounds``, or the
    schema's numeric label) onto :math:`[-1, 1]`; :attr:`coef`, :attr:`intercept` and
    :meth:`predict` give the model on the label's scale, with the same arithmetic as the
    estimator (predictions are bit-identical).

    Nothing data-dependent and un-noised goes in: no ridge mean, no exact
    :math:`\lambda_{\min}`, no per-person pDP of the data (those are the curator's
    ``_nonprivate`` quantities). ``n_max`` is the public bound on the number of records the
    guarantee holds for — the number of records itself when the fit was given none (the count
    is then treated as public). What a person may be told is :meth:`per_person_epsilon`: a
    bound on their pDP over every data set of the class, a function of their own record and
    the public fields alone.

    ``guarantee`` is the **total** of ``ledger`` (this release's own event —
    :class:`pdpkit.ops.OPSEvent` or :class:`pdpkit.ops.AdaOPSEvent` — and, under a
    :class:`pdpkit.accountant.PrivacyAccountant`, everything else the session charged).
    :meth:`verify` checks that the ledger holds the release's own event with exactly its
    parameters (OPS: n = ``n_max`` + 1, λ, γ, the fitted rows' bound, labels in [−1, 1];
    AdaOPS: λ and γ as its steps derive them from ``lam_min_noisy``, ``kappa`` and ``n_max``)
    and recomputes the total; signing works as for :class:`Release` (:meth:`sign`,
    :meth:`verify` with ``public_key``), over the canonical bytes :attr:`payload`.

    Parameters
    ----------
    theta : array_like, shape (p,)
        Released coefficients on the fitted scale (intercept's last).
    mechanism : {"ops", "adaops"}
        Which mechanism drew ``theta``.
    lam, gamma : float
        λ (on the fitted rows) and γ of the OPS sample.
    n_max : int
        Public bound on the number of records.
    norm_bound : float
        Bound on the user's (encoded) rows.
    fit_intercept : bool
        Whether the last coefficient is the intercept column's.
    guarantee : Guarantee
        The total guarantee.
    ledger : tuple of Charge
        What the guarantee is the composition of.
    label_bounds : (float, float) or None
        Public bounds of the labels (``None`` with a schema: its label's bounds).
    row_norm : str
        ``"raise"`` or ``"clip"`` (rows and labels beyond their bounds).
    kappa, lam_min_noisy : float or None
        AdaOPS's κ and released :math:`\tilde\lambda` (``None`` for OPS).
    feature_names : tuple of str or None
        The columns the coefficients belong to.
    schema : dict or None
        The public schema the rows and labels were encoded with.
    seeded : bool or None
        Whether the noise came from a caller's seed (:data:`SEEDED_NOTE`).
    signature : dict or None
        The signature block over :attr:`payload` (:meth:`sign`).
    """

    theta: np.ndarray
    mechanism: str
    lam: float
    gamma: float
    n_max: int
    norm_bound: float
    fit_intercept: bool
    guarantee: Guarantee
    ledger: tuple[Charge, ...]
    label_bounds: tuple[float, float] | None = None
    row_norm: str = "raise"
    kappa: float | None = None
    lam_min_noisy: float | None = None
    feature_names: tuple[str, ...] | None = None
    schema: dict[str, Any] | None = None
    seeded: bool | None = None
    signature: dict[str, str] | None = None
    _payload: bytes | None = field(default=None, init=False, repr=False)
    _schema_obj: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        s = object.__setattr__
        theta = as_finite_array(np.asarray(self.theta), "theta", ndim=1).copy()
        if self.mechanism not in _OPS_MECHANISMS:
            raise ValueError(f"mechanism must be one of {list(_OPS_MECHANISMS)}; got {self.mechanism!r}")
        s(self, "fit_intercept", _bool(self.fit_intercept, "fit_intercept"))
        if theta.shape[0] < 1 + int(self.fit_intercept):
            raise ValueError("theta must hold the intercept's coefficient and at least one feature's")
        theta.flags.writeable = False
        s(self, "theta", theta)
        s(self, "lam", _real(self.lam, "lam", allow_zero=self.mechanism == "adaops"))
        s(self, "gamma", _real(self.gamma, "gamma"))
        n_max = self.n_max
        if isinstance(n_max, (bool, np.bool_)) or not isinstance(n_max, (int, np.integer)) or n_max < 1:
            raise TypeError(f"n_max must be an integer >= 1 (the public bound on the number of records); "
                            f"got {n_max!r}")
        s(self, "n_max", int(n_max))
        s(self, "norm_bound", _real(self.norm_bound, "norm_bound"))
        if self.row_norm not in ("raise", "clip"):
            raise ValueError(f"row_norm must be 'raise' or 'clip'; got {self.row_norm!r}")
        ada = self.mechanism == "adaops"
        for name in ("kappa", "lam_min_noisy"):
            v = getattr(self, name)
            if (v is None) == ada:
                raise ValueError(f"{name}: {'AdaOPS releases it' if ada else 'is for AdaOPS only (null for OPS)'}")
            if v is not None:
                s(self, name, _real(v, name, positive=name == "kappa"))
        if self.seeded is not None:
            s(self, "seeded", _bool(self.seeded, "seeded"))
        if self.signature is not None:
            s(self, "signature", _signing.check_signature_block(self.signature))
        if not isinstance(self.guarantee, Guarantee):
            raise TypeError("guarantee must be a Guarantee (an OPS release always states its guarantee)")
        ledger = tuple(self.ledger or ())
        if not ledger or not all(isinstance(c, Charge) for c in ledger):
            raise TypeError("ledger must list pdpkit.accountant.Charge entries (at least the release's own)")
        s(self, "ledger", ledger)
        n_feat = theta.shape[0] - int(self.fit_intercept)
        if self.feature_names is not None:
            names = tuple(self.feature_names)
            if not all(isinstance(v, str) for v in names):
                raise TypeError("feature_names must be strings")
            if len(names) != n_feat or len(set(names)) != len(names):
                raise ValueError(f"feature_names must be {n_feat} distinct names (one per feature coefficient)")
            s(self, "feature_names", names)
        if self.schema is not None:
            from .schema import Schema

            sch = self.schema if isinstance(self.schema, Schema) else Schema.from_dict(self.schema)
            if sch.nonprivate_draft:
                raise ValueError("schema: is a non-private draft (its bounds and domains were read from the data); "
                                 "a release's schema must be reviewed, with its draft marks removed")
            if sch.label_bounds is None:
                raise ValueError("schema: its label must be numeric with public bounds (a regression's release)")
            if self.feature_names is not None and tuple(sch.encoded_names) != self.feature_names:
                raise ValueError("feature_names: are not the schema's encoded features, in its order")
            if len(sch.encoded_names) != n_feat:
                raise ValueError(f"schema: encodes {len(sch.encoded_names)} features but theta has {n_feat} feature "
                                 "coefficients")
            if self.label_bounds is not None:
                raise ValueError("label_bounds: must be null with a schema (its label's bounds are used)")
            s(self, "_schema_obj", sch)
            s(self, "schema", sch.to_dict())
        else:
            lb = self.label_bounds
            if not isinstance(lb, (list, tuple)) or len(lb) != 2:
                raise TypeError(f"label_bounds must be a pair [low, high] of numbers (or a schema); got {lb!r}")
            lo, hi = (_real(v, "label_bounds", positive=False) for v in lb)
            if not lo < hi:
                raise ValueError(f"label_bounds must have low < high; got {list(lb)!r}")
            s(self, "label_bounds", (lo, hi))

    def __repr__(self) -> str:
        name = "AdaOPS" if self.mechanism == "adaops" else "OPS"
        return (f"OPSRelease({name}, d={self.coef.shape[0]}, fit_intercept={self.fit_intercept}, lam={self.lam:.6g}, "
                f"gamma={self.gamma:.6g}, norm_bound={self.norm_bound}, n_max={self.n_max}, {self.guarantee}"
                f"{'; ' + SEEDED_NOTE if self.seeded else ''})")

    # ------------------------------------------------------------ the model
    def _label_map(self) -> tuple[float, float]:
        if self._schema_obj is not None:
            return 0.0, 1.0
        lo, hi = self.label_bounds
        return 0.5 * (lo + hi), 0.5 * (hi - lo)

    @property
    def fit_norm_bound(self) -> float:
        r"""The bound on the fitted rows: ``norm_bound``, times :math:`\sqrt2` with an intercept."""
        return self.norm_bound * (_SQRT2 if self.fit_intercept else 1.0)

    @property
    def coef(self) -> np.ndarray:
        """Coefficients of the user's (encoded) features, on the label's scale (before a schema's decoding)."""
        c, h = self._label_map()
        d = self.theta.shape[0] - int(self.fit_intercept)
        return h * self.theta[:d]

    @property
    def intercept(self) -> float:
        """The intercept on the label's scale (the centre of the label bounds without ``fit_intercept``)."""
        c, h = self._label_map()
        d = self.theta.shape[0] - int(self.fit_intercept)
        return c + (h * self.norm_bound * float(self.theta[d]) if self.fit_intercept else 0.0)

    @property
    def schema_object(self) -> Any:
        """The schema as a :class:`pdpkit.schema.Schema` (``None`` without one)."""
        return self._schema_obj

    def rows(self, X: Any, *, encoded: bool = False) -> np.ndarray:
        """The rows the model reads for records ``X``, as :meth:`Release.rows` (schema, names, clip or refuse).

        Parameters
        ----------
        X : DataFrame or array_like, shape (n, d)
            Records.
        encoded : bool
            ``X`` holds rows already encoded by the release's schema (times ``norm_bound``).
        """
        return _model_rows(X, schema=self._schema_obj, feature_names=self.feature_names, norm_bound=self.norm_bound,
                           row_norm=self.row_norm, d=self.coef.shape[0], encoded=encoded)

    def predict(self, X: Any, *, encoded: bool = False) -> np.ndarray:
        """Predicted values on the label's scale (a schema's numeric label decoded); post-processing.

        Parameters
        ----------
        X : DataFrame or array_like, shape (n, d)
            Records (see :meth:`rows`).
        encoded : bool
            ``X`` is already encoded by the schema (see :meth:`rows`).
        """
        # C order: the same products in the same order as the estimator's, whatever layout X came in
        t = np.ascontiguousarray(self.rows(X, encoded=encoded)) @ self.coef + self.intercept
        sch = self._schema_obj
        return t if sch is None else np.asarray(sch.decode_label(t), dtype=float)

    def _labels(self, y: Any, n: int) -> np.ndarray:
        """Labels mapped onto [-1, 1] as the fit mapped them (a schema clips; otherwise row_norm decides)."""
        if self._schema_obj is not None:
            t = np.asarray(self._schema_obj.encode_label(y), dtype=float)
        else:
            c, h = self._label_map()
            t = (as_finite_array(np.asarray(y, dtype=float), "y", ndim=1) - c) / h
            if np.any(np.abs(t) > 1.0 + 1e-12) and self.row_norm == "raise":
                raise ValueError("y has a label outside label_bounds; the bound holds for labels inside the public "
                                 "bounds (row_norm='raise')")
        if t.shape != (n,):
            raise ValueError(f"y must hold one label per record ({n})")
        return np.clip(t, -1.0, 1.0)

    def model_charge(self) -> Charge:
        """The ledger's entry of this release's own model (its event and the δ its own ε is stated at)."""
        own = [c for c in self.ledger if c.kind == self.mechanism and c.name.endswith("model")]
        if not own:
            raise ValueError(f"ledger: it lacks this release's own model entry (kind {self.mechanism!r})")
        return own[-1]

    def per_person_epsilon(self, X: Any, y: ArrayLike, *, encoded: bool = False) -> np.ndarray:
        r"""Each record's pDP bound at the model's δ: publishable (a function of the record and this release alone).

        OPS: :meth:`pdpkit.ops.OPSEvent.record_epsilon` — the record's leverage and residual
        bounded over every data set of the class (Wang 2019, Def 2.2, Prop 4.3(1) per record).
        AdaOPS: :meth:`pdpkit.ops.AdaOPSEvent.record_epsilon` — its noisy :math:`\lambda_{\min}`
        costs a record in proportion to its squared norm. A record enters as in the fit: its
        row encoded (schema), checked against or clipped to ``norm_bound``, with the intercept
        column; its label mapped from the public bounds. Members and non-members alike; the
        value never depends on the data set, so it may be shown to anyone (the curator's
        exact, data-dependent pDP is
        :meth:`pdpkit.ops_estimators.OPSEstimator.per_person_epsilon_nonprivate`).

        Parameters
        ----------
        X : DataFrame or array_like, shape (n, d)
            Records (see :meth:`rows`).
        y : array_like, shape (n,)
            Their labels, on the label's scale.
        encoded : bool
            ``X`` is already encoded by the schema (see :meth:`rows`).
        """
        rows = self.rows(X, encoded=encoded)
        t = self._labels(y, rows.shape[0])
        if self.fit_intercept:
            rows = np.column_stack([rows, np.full(rows.shape[0], self.norm_bound)])
        charge = self.model_charge()
        if self.mechanism == "ops":
            return np.asarray(charge.event.record_epsilon(rows, t, delta=charge.delta), dtype=float)
        return np.asarray(charge.event.record_epsilon(rows / self.fit_norm_bound, delta=charge.delta), dtype=float)

    # ------------------------------------------------------------ checking
    def own_charges(self) -> tuple[Charge, ...]:
        """The ledger entry this release's own model must have (``ValueError`` when its parameters disagree)."""
        charge = self.model_charge()
        if self.mechanism == "ops":
            event = OPSEvent(n=self.n_max + 1, lam=self.lam, gamma=self.gamma, x_bound=self.fit_norm_bound,
                             y_bound=1.0)
            return (Charge(name=charge.name, event=event, delta=charge.delta),)
        R2 = self.fit_norm_bound ** 2
        lam, gamma = _adaops_model(charge.event, lam_min_noisy=self.lam_min_noisy, kappa=self.kappa,
                                   n_max=self.n_max, p=self.theta.shape[0])
        if not _close(self.lam, lam * R2):
            raise ValueError(f"lam = {self.lam!r} is not what lam_min_noisy, kappa, n_max and the ledger's AdaOPS "
                             f"entry give ({lam * R2!r})")
        if not _close(self.gamma, gamma):
            raise ValueError(f"gamma = {self.gamma!r} is not what lam_min_noisy, kappa, n_max and the ledger's AdaOPS "
                             f"entry give ({gamma!r})")
        return (charge,)

    def expected_guarantee(self) -> Guarantee:
        """The guarantee the ledger gives at the release's total δ (after checking the release's own entry)."""
        for own in self.own_charges():
            if not any(c.kind == own.kind and c.count == own.count and c.params.keys() == own.params.keys()
                       and all(_close(c.params[k], own.params[k]) for k in own.params) for c in self.ledger):
                raise ValueError(f"ledger: it lacks this release's own {own.name!r} entry ({own.kind}, parameters "
                                 f"{own.params}): the guarantee would not cover it")
        return ledger_guarantee(self.ledger, self.guarantee.delta)

    # ------------------------------------------------------------ signing
    @property
    def payload(self) -> bytes:
        """The bytes a signature covers: the canonical JSON without the signature block (as :attr:`Release.payload`)."""
        if self._payload is not None:
            return self._payload
        return canonical_json({k: v for k, v in self.to_dict().items() if k != "signature"})

    @property
    def fingerprint(self) -> str:
        """SHA-256 of :attr:`payload`, 64 hex digits."""
        return hashlib.sha256(self.payload).hexdigest()

    @property
    def signer(self) -> str | None:
        """The fingerprint of the key that signed the release (checked by :meth:`verify`), or ``None``."""
        return None if self.signature is None else self.signature["fingerprint"]

    def sign(self, private_key: Any) -> OPSRelease:
        """This release signed with an Ed25519 key (a copy; as :meth:`Release.sign`).

        Parameters
        ----------
        private_key : cryptography's Ed25519PrivateKey, or the path of its PEM file (``pdpkit keygen``)
        """
        bare = replace(self, signature=None)
        block = _signing.sign_payload(private_key, bare.payload, context=_signing.RELEASE_CONTEXT)
        signed = replace(bare, signature=block)
        _signing.verify_payload(block, signed.payload, context=_signing.RELEASE_CONTEXT)
        return signed

    def verify_signature(self, public_key: Any = None) -> str:
        """Check the signature over :attr:`payload`; return the signer's fingerprint (as for :class:`Release`).

        Parameters
        ----------
        public_key : optional
            The publisher's public key, or the path of ``KEY.pub``.
        """
        return _signing.verify_payload(self.signature, self.payload, context=_signing.RELEASE_CONTEXT,
                                       public_key=public_key)

    def verify(self, public_key: Any = None) -> OPSRelease:
        """Recompute the guarantee from the ledger and the public fields; ``ValueError`` naming what disagrees.

        As :meth:`Release.verify`: with ``public_key`` the release must be signed by it (every
        edit of any field refused, a stripped signature too); a signed release is checked
        against the key it names; a seeded one verifies with a :class:`SeededReleaseWarning`.

        Parameters
        ----------
        public_key : optional
            The publisher's public key (or the path of ``KEY.pub``).
        """
        if public_key is not None or self.signature is not None:
            self.verify_signature(public_key)
        return self._verify_parameters()

    def _verify_parameters(self) -> OPSRelease:
        if self.seeded:
            warnings.warn(f"this release is {SEEDED_NOTE}", SeededReleaseWarning, stacklevel=3)
        try:
            want = self.expected_guarantee()
        except (TypeError, ValueError) as exc:
            raise ValueError(f"guarantee: the release's parameters (lam, gamma, n_max, norm_bound, the ledger) give "
                             f"no guarantee to check it against: {exc}") from None
        _check_guarantee(self.guarantee, want)
        return self

    # ------------------------------------------------------------ serialization
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (see :meth:`to_json`)."""
        return {
            "format": OPS_RELEASE_FORMAT,
            "mechanism": self.mechanism,
            "theta": self.theta.tolist(),
            "lam": self.lam,
            "gamma": self.gamma,
            "n_max": self.n_max,
            "norm_bound": self.norm_bound,
            "fit_intercept": self.fit_intercept,
            "row_norm": self.row_norm,
            "label_bounds": None if self.label_bounds is None else list(self.label_bounds),
            "kappa": self.kappa,
            "lam_min_noisy": self.lam_min_noisy,
            "guarantee": self.guarantee.to_dict(),
            "ledger": [c.to_dict() for c in self.ledger],
            "feature_names": None if self.feature_names is None else list(self.feature_names),
            "schema": self.schema,
            "seeded": self.seeded,
            "signature": self.signature,
        }

    def to_json(self, **kwargs: Any) -> str:
        """The release as JSON text; ``kwargs`` go to ``json.dumps``.

        Parameters
        ----------
        **kwargs
            Passed to ``json.dumps``.
        """
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    @classmethod
    def from_dict(cls, data: Any, *, verify: bool = True, public_key: Any = None) -> OPSRelease:
        """Inverse of :meth:`to_dict`, strict, and verified unless ``verify=False`` (as :meth:`Release.from_dict`).

        Parameters
        ----------
        data : dict
            A dict as :meth:`to_dict` writes it.
        verify : bool
            Whether to recompute the guarantee.
        public_key : optional
            The publisher's public key (or the path of ``KEY.pub``): the file must be signed by it.
        """
        if not isinstance(data, dict):
            raise TypeError(f"a release must be a JSON object; got {type(data).__name__}")
        if data.get("format") != OPS_RELEASE_FORMAT:
            raise ValueError(f"not an OPS release (expected format {OPS_RELEASE_FORMAT!r}; read other releases with "
                             "load_release)")
        try:
            payload = canonical_json({k: v for k, v in data.items() if k != "signature"})
        except (TypeError, ValueError) as exc:
            raise ValueError(f"release: not JSON values ({exc})") from None
        signature = data.get("signature")
        if public_key is not None or (verify and signature is not None):
            _signing.verify_payload(signature, payload, context=_signing.RELEASE_CONTEXT, public_key=public_key)
        _keys(data, "release", required=_OPS_FIELDS)
        theta = _theta_from_json(data["theta"])
        if theta.ndim != 1:
            raise TypeError("theta must be a list of numbers")
        for key in ("feature_names", "ledger", "label_bounds"):
            if data[key] is not None and not isinstance(data[key], list):
                raise TypeError(f"{key} must be a list or null")
        if data["seeded"] is not None and not isinstance(data["seeded"], bool):
            raise TypeError(f"seeded must be true, false or null (not recorded); got {data['seeded']!r}")
        if data["guarantee"] is None:
            raise ValueError("guarantee: an OPS release states its guarantee")
        entries = []
        for i, c in enumerate(data["ledger"] or []):
            try:
                entries.append(Charge.from_dict(c))
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"ledger[{i}]: {exc}") from None
        names = data["feature_names"]
        rel = cls(theta=theta, mechanism=data["mechanism"], lam=data["lam"], gamma=data["gamma"],
                  n_max=data["n_max"], norm_bound=data["norm_bound"], fit_intercept=data["fit_intercept"],
                  guarantee=Guarantee.from_dict(data["guarantee"]), ledger=tuple(entries),
                  label_bounds=None if data["label_bounds"] is None else tuple(data["label_bounds"]),
                  row_norm=data["row_norm"], kappa=data["kappa"], lam_min_noisy=data["lam_min_noisy"],
                  feature_names=None if names is None else tuple(names), schema=data["schema"],
                  seeded=data["seeded"], signature=signature)
        object.__setattr__(rel, "_payload", payload)
        return rel._verify_parameters() if verify else rel

    @classmethod
    def from_json(cls, text: str | bytes, *, verify: bool = True, public_key: Any = None) -> OPSRelease:
        """Inverse of :meth:`to_json` (strict JSON, then :meth:`from_dict`).

        Parameters
        ----------
        text : str or bytes
            JSON text.
        verify : bool
            Whether to recompute the guarantee.
        public_key : optional
            The publisher's public key (or the path of ``KEY.pub``): the file must be signed by it.
        """
        return cls.from_dict(loads_strict(text, "the release"), verify=verify, public_key=public_key)


def ops_release(theta: ArrayLike, charge: Charge, *, lam: float, gamma: float, n_max: int, norm_bound: float,
                fit_intercept: bool, label_bounds: Any = None, row_norm: str = "raise", kappa: float | None = None,
                lam_min_noisy: float | None = None, feature_names: Any = None, schema: Any = None,
                accountant: Any = None, seeded: bool | None = None) -> OPSRelease:
    r"""The publishable part of an OPS or AdaOPS fit (:class:`OPSRelease`), with its total guarantee.

    ``charge`` is the ledger entry of the fit (its :class:`pdpkit.ops.OPSEvent` or
    :class:`pdpkit.ops.AdaOPSEvent`, its name, the δ its own ε is stated at). Alone, the
    ledger is that entry and the guarantee its composition at its δ; with ``accountant`` (a
    :class:`pdpkit.accountant.PrivacyAccountant` already charged with it), the accountant's
    ledger and total. The release's own entry is checked (:meth:`OPSRelease.expected_guarantee`).

    Parameters
    ----------
    theta : array_like, shape (p,)
        The sample on the fitted scale (intercept's last).
    charge : Charge
        The fit's ledger entry.
    lam, gamma : float
        λ (on the fitted rows) and γ of the sample.
    n_max : int
        The public bound on the number of records the event was calibrated for.
    norm_bound : float
        Bound on the user's rows.
    fit_intercept : bool
        Whether the last coefficient is the intercept column's.
    label_bounds : (float, float), optional
        The labels' public bounds (not with a schema).
    row_norm : str
        ``"raise"`` or ``"clip"``.
    kappa, lam_min_noisy : float, optional
        AdaOPS's κ and released :math:`\tilde\lambda`.
    feature_names : sequence of str, optional
        Column names.
    schema : Schema or dict, optional
        The public schema (numeric label with bounds).
    accountant : PrivacyAccountant, optional
        The session's accountant (already charged).
    seeded : bool, optional
        Whether the noise came from a caller's seed.
    """
    if not isinstance(charge, Charge):
        raise TypeError(f"charge must be a pdpkit.accountant.Charge; got {type(charge).__name__}")
    if accountant is not None:
        ledger, guarantee = tuple(accountant.ledger), accountant.spent()
    else:
        ledger = (charge,)
        guarantee = ledger_guarantee(ledger, charge.delta)
    if schema is not None and not isinstance(schema, dict):
        schema = schema.to_dict()
    rel = OPSRelease(theta=np.asarray(theta, dtype=float), mechanism=charge.kind, lam=lam, gamma=gamma, n_max=n_max,
                     norm_bound=norm_bound, fit_intercept=fit_intercept, guarantee=guarantee, ledger=ledger,
                     label_bounds=None if label_bounds is None else tuple(float(v) for v in label_bounds),
                     row_norm=row_norm, kappa=kappa, lam_min_noisy=lam_min_noisy,
                     feature_names=None if feature_names is None else tuple(str(v) for v in feature_names),
                     schema=schema, seeded=seeded)
    rel.expected_guarantee()  # the ledger must hold this release's own event with its parameters
    return rel


def load_release(text: str | bytes, *, verify: bool = True, public_key: Any = None) -> Release | OPSRelease:
    """A release file of any mechanism: :class:`OPSRelease` for OPS/AdaOPS, :class:`Release` for ObjPert (all formats).

    Strict JSON; each class's reader and checks (:meth:`Release.from_dict`,
    :meth:`OPSRelease.from_dict`), the signature checked first.

    Parameters
    ----------
    text : str or bytes
        JSON text.
    verify : bool
        Whether to recompute the guarantee.
    public_key : optional
        The publisher's public key (or the path of ``KEY.pub``): the file must be signed by it.
    """
    data = loads_strict(text, "the release")
    if isinstance(data, dict) and data.get("format") == OPS_RELEASE_FORMAT:
        return OPSRelease.from_dict(data, verify=verify, public_key=public_key)
    return Release.from_dict(data, verify=verify, public_key=public_key)
