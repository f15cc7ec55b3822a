r"""scikit-learn estimators for objective perturbation, calibrated with the tight accountant.

:class:`ObjPertClassifier` (logistic loss, two classes) and :class:`ObjPertRegressor` (a
robust regression loss) train a linear model by objective perturbation
(:func:`pdpkit.objpert.objpert_fit`), choose its noise :math:`\sigma` and regularization
:math:`\lambda` for a target :math:`(\varepsilon, \delta)` with the tight privacy profile of
Redberg, Koskela & Wang (2023, Thm 3.1 as corrected in :mod:`pdpkit.accounting`), and can
attach a privately publishable per-person privacy report (:mod:`pdpkit.report`; Redberg &
Wang 2021, App. C–E). They are ordinary scikit-learn estimators: ``fit``/``predict``/``score``,
``get_params``/``set_params``, ``Pipeline``, ``clone`` and pickling work.

The guarantee is tied to the data through ``norm_bound``: the privacy analysis assumes
every feature row has :math:`\|x_i\|_2 \le` ``norm_bound``. ``row_norm="raise"`` (default)
refuses data that break it, naming the row; ``row_norm="clip"`` shrinks each such row onto
the ball :math:`x \mapsto x\min(1, R/\|x\|)` — a fixed map applied to each record on its
own, so the guarantee holds for the original records. With ``fit_intercept=True`` the model
is fitted on rows :math:`(x_i, R)` (a constant column equal to ``norm_bound``) whose norm is
at most :math:`\sqrt2 R`, and the guarantee is computed at that bound; the intercept is the
constant column's coefficient times :math:`R`.

**Weights.** ``fit(X, y, sample_weight=...)`` and a classifier's ``class_weight`` weight each
record's loss by :math:`w_i` (``sample_weight`` times its class's weight). The guarantee needs a
public bound :math:`W` = ``weight_bound`` on every weight: a term :math:`w f` is
:math:`WL`-Lipschitz and :math:`W\beta`-smooth, so the guarantee is Redberg, Koskela & Wang
(2023), Thm 3.1 with :math:`L \to WL`, :math:`\beta \to W\beta`, for neighbours that add or
remove one record :math:`(x, y, w)`. The fit minimizes the objective divided by :math:`W`
(:class:`pdpkit.objpert.WeightedLoss`: weights :math:`w_i/W \in [0, 1]`, :math:`\lambda/W`,
noise :math:`\sigma/W`, tolerance :math:`\tau/W`; the same minimizer, the same profile), which is
what the release states. A weight above :math:`W` is refused or clipped to it, as
``weight_policy`` says (a public rule applied to each record on its own); a negative or
non-finite weight is refused; refusals name no value, row or count. ``class_weight="balanced"``
takes the class frequencies from ``class_prior`` (public) or from a Gaussian noisy count of the
classes, which is charged (L2 sensitivity 1 under add/remove).

Neighbouring data sets differ by adding or removing one record. What a fitted estimator
holds — ``coef_``, ``intercept_``, ``release_`` (a :class:`pdpkit.release.Release`) and
``report_`` — is private output or public parameters; the objective's noise vector and the
non-private fit are not kept, so the fitted estimator (and its pickle) may be published.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import metadata_routing
from sklearn.utils.validation import check_array, check_is_fitted, check_X_y, validate_data

from ._validation import (as_generator, charged_generator, check_estimator_budget, check_positive, check_probability,
                          clip_factors, row_norms)
from .accounting import objpert_output_calibrate
from .losses import GLMLoss, get_loss
from ._solver import FIND_ROWS, _is_dask, _Rows, _run_pending_check, row_beyond_bound_message
from .objpert import (DEFAULT_GRAD_TOL, DEFAULT_OUTPUT_MU, WeightedLoss, default_sigma_out, objpert_fit, output_mu,
                      weighted_labels)
from .accountant import (BudgetExceededError, Charge, PrivacyAccountant, calibrate_event,
                         objpert_calibrate_composed)
from .events import GaussianEvent, Guarantee, ObjPertEvent, report_event
from .release import Release, multiclass_release, objpert_release

__all__ = [
    "ObjPertClassifier",
    "ObjPertRegressor",
    "ObjPertEstimator",
    "EXPECTED_FAILED_CHECKS",
    "prepare_rows",
    "schema_object",
    "record_raw_input",
    "encoded_rows",
    "UNKNOWN_LABEL_POLICIES",
    "WEIGHT_POLICIES",
    "NonPrivateSelectionWarning",
    "checked_sample_weight",
    "check_weight_params",
    "SELECTION_NOTE",
    "warn_if_in_model_selection",
]

#: What a classifier does with a record whose label is not one of its public classes:
#: ``"raise"`` refuses the data set (the guarantee's universe holds the public classes only; the
#: message names no label, row or count), ``"ignore"`` leaves the record out — a fixed rule
#: applied to each record on its own, so neighbouring data sets stay neighbours (or become
#: equal) after it, and the guarantee holds for every data set.
UNKNOWN_LABEL_POLICIES = ("raise", "ignore")

#: What a fit does with a record whose weight (``sample_weight`` times its class weight) is above
#: ``weight_bound``: ``"refuse"`` the data set (the message names no value, row or count) or
#: ``"clip"`` the weight to the bound — a fixed rule applied to each record on its own, so the
#: guarantee for weights at most ``weight_bound`` holds for every data set.
WEIGHT_POLICIES = ("refuse", "clip")

#: scikit-learn checks that ``sklearn.utils.estimator_checks.check_estimator`` is told to
#: expect to fail, with the reason (passed as ``expected_failed_checks``). Both estimators pass
#: every other check (with ``row_norm="clip"``, as the checks' data are unbounded, and
#: ``weight_policy="clip"`` with a ``weight_bound`` above the checks' weights).
EXPECTED_FAILED_CHECKS: dict[str, str] = {
    "check_all_zero_sample_weights_error": (
        "weights that are all zero give a valid private fit (the regularizer and the noise): refusing them "
        "would be a refusal that depends on the private weights, not on a public bound"),
}

_REPORT_METHODS = ("data-independent", "data-dependent", "adaptive")


def prepare_rows(X: ArrayLike, *, norm_bound: float, row_norm: str = "raise", fit_intercept: bool = False,
                 name: str = "X") -> np.ndarray:
    r"""The rows ObjPert is fitted on: checked or clipped to ``norm_bound``, with the intercept column.

    ``row_norm="raise"``: a ``ValueError`` when a row's Euclidean norm exceeds ``norm_bound``
    (the message names no row, norm or count: :func:`pdpkit.check.check_nonprivate` finds
    them). ``"clip"``: such rows are scaled onto the ball.
    With ``fit_intercept`` a constant column equal to ``norm_bound`` is appended (rows then have
    norm at most :math:`\sqrt2` ``norm_bound``).

    Parameters
    ----------
    X : array_like, shape (n, d)
        Feature rows (finite).
    norm_bound : float
        R > 0, the public bound on every row's Euclidean norm that the guarantee assumes.
    row_norm : {"raise", "clip"}
        What to do with a row beyond ``norm_bound`` (above); default ``"raise"``.
    fit_intercept : bool
        Append the intercept column of value ``norm_bound``; default ``False``.
    name : str
        The argument's name used in error messages; default ``"X"``.

    Returns
    -------
    numpy.ndarray, shape (n, d) or (n, d + 1)
        The rows, every one of norm at most ``norm_bound`` (before the intercept column).
    """
    R = float(check_positive(norm_bound, "norm_bound"))
    if row_norm not in ("raise", "clip"):
        raise ValueError(f"row_norm must be 'raise' or 'clip'; got {row_norm!r}")
    X = np.asarray(X, dtype=float)
    norms = row_norms(X)
    over = norms > R * (1.0 + 1e-12)
    if np.any(over):
        if row_norm == "raise":
            raise ValueError(row_beyond_bound_message(name, R))
        X = X * clip_factors(norms, R)[:, None]
    if fit_intercept:
        out = np.empty((X.shape[0], X.shape[1] + 1))
        out[:, :-1] = X
        out[:, -1] = R
        return out
    return X


def _row_map(X: Any, *, norm_bound: float, row_norm: str = "raise", fit_intercept: bool = False,
             name: str = "X", defer: bool = False) -> _Rows:
    r"""The rows of :func:`prepare_rows` as a map read block by block: no copy of ``X``.

    Same checks and the same rows (clipping and the intercept column of value ``norm_bound``
    happen per block inside the solver's kernels); ``X`` may be a numpy array, a memmap or a
    Dask array. One pass over ``X`` checks the norms for ``row_norm="raise"`` (with ``defer``,
    the next per-row pass over the map does, and raises before it returns anything).
    """
    R = float(check_positive(norm_bound, "norm_bound"))
    if row_norm not in ("raise", "clip"):
        raise ValueError(f"row_norm must be 'raise' or 'clip'; got {row_norm!r}")
    raw = X if _is_dask(X) else np.asarray(X)
    rows = _Rows(raw, intercept=R if fit_intercept else None, clip=R if row_norm == "clip" else None)
    if rows.n:
        # the raw rows' norms against the bound ("raise") and the fitted rows' checks (finite,
        # largest norm), which the solver and the report then take from the map: in a pass of
        # their own, or (defer) inside the next per-row pass, before any of its results is returned
        limit = R * (1.0 + 1e-12) if row_norm == "raise" else None
        rows.pending_check = (limit, name, R)
        if not defer:
            _run_pending_check(rows)
    return rows


#: The smallest λ calibration returns: a larger λ only lowers ε, and below it the Hessian
#: (≥ λ I) is too close to singular for float64 on nearly separable data.
_LAM_FLOOR = 1e-2


def default_output_mu(eps: float) -> float:
    """μ of the solver's output noise: DEFAULT_OUTPUT_MU, or eps/10 below eps = 0.01 (public: eps is)."""
    return min(DEFAULT_OUTPUT_MU, 0.1 * eps)


@functools.lru_cache(maxsize=128)
def _calibration(eps: float, delta: float, L: float, beta: float, lam: float | None,
                 sigma: float | None) -> tuple[float, float]:
    """(lam, sigma) for ObjPert and its output noise (μ = default_output_mu(eps)) at (eps, delta); cached."""
    if lam is not None and sigma is not None:
        return lam, sigma
    try:
        lam_c, sigma_c = objpert_output_calibrate(eps, delta, L=L, beta=beta, mu=default_output_mu(eps), lam=lam,
                                                  sigma=sigma, sharp=True)
    except ValueError as exc:
        given = "lam" if lam is not None else ("sigma" if sigma is not None else None)
        if given is None:
            raise ValueError(f"no (lam, sigma) reaches epsilon={eps:g}, delta={delta:g}: {exc}") from None
        raise ValueError(f"{given}={lam if lam is not None else sigma:g} cannot reach epsilon={eps:g}, "
                         f"delta={delta:g}: increase {given}, or leave it None to calibrate it") from None
    if lam_c > 1e100 or sigma_c > 1e100:
        raise ValueError(f"epsilon={eps:g} is too small: its lam or sigma would exceed 1e100; raise epsilon or delta")
    if lam is None and lam_c < _LAM_FLOOR:
        lam_c = _LAM_FLOOR  # only lowers epsilon; the guarantee is computed at the lam used
    return float(lam_c), float(sigma_c)


@functools.lru_cache(maxsize=64)
def _calibration_ovr(eps: float, delta: float, L: float, beta: float, count: int) -> tuple[float, float]:
    """(lam, sigma) shared by ``count`` one-vs-rest fits with output noise, (eps, delta) together; cached."""
    try:
        lam_c, sigma_c = objpert_calibrate_composed(eps, delta, L=L, beta=beta, count=count, mu_out=default_output_mu(eps))
    except ValueError as exc:
        raise ValueError(f"no (lam, sigma) reaches epsilon={eps:g}, delta={delta:g} for {count} one-vs-rest fits: "
                         f"{exc}") from None
    if lam_c > 1e100 or sigma_c > 1e100:
        raise ValueError(f"epsilon={eps:g} is too small: its lam or sigma would exceed 1e100; raise epsilon or delta")
    return float(max(lam_c, _LAM_FLOOR)), float(sigma_c)


@functools.lru_cache(maxsize=64)
def _calibration_ovr_sigma(eps: float, delta: float, L: float, beta: float, count: int,
                           lam: float) -> float:
    """The smallest sigma at which ``count`` one-vs-rest fits with a given lam are (eps, delta) together; cached."""
    mu_out = default_output_mu(eps)

    def fits(sigma: float) -> list[Charge]:
        event = ObjPertEvent(L=L, beta=beta, lam=lam, sigma=sigma, mu_out=mu_out)
        return [Charge(name="model", event=event, count=count, delta=delta)]

    # below the Gaussian mechanism's sigma for the K gradients (sensitivity L sqrt(K)) no sigma meets the target:
    # ObjPert's loss is that Gaussian's plus a log-determinant term >= 0
    from .gaussian import gaussian_sigma

    low = float(gaussian_sigma(eps, delta, sensitivity=L * math.sqrt(count)))
    try:
        sigma, _ = calibrate_event(fits, eps, delta, lower=low, upper=low * 1e4, rtol=1e-6)
    except ValueError:
        raise ValueError(f"lam={lam:g} cannot reach epsilon={eps:g}, delta={delta:g} for {count} one-vs-rest fits "
                         "(its log-determinant term alone exceeds it): increase lam, or leave it None to calibrate "
                         "it") from None
    return float(sigma)


def schema_object(schema: Any) -> Any:
    """A :class:`pdpkit.schema.Schema` from a Schema, its dict, or a path to its JSON file (a draft is refused).

    Parameters
    ----------
    schema : pdpkit.schema.Schema, dict or str
        The schema, its dict (:meth:`pdpkit.schema.Schema.to_dict`) or the path of its JSON file.
    """
    from .schema import Schema

    if isinstance(schema, Schema):
        sch = schema
    elif isinstance(schema, dict):
        sch = Schema.from_dict(schema)
    elif isinstance(schema, str):
        sch = Schema.read(schema)
    else:
        raise TypeError(f"schema must be a pdpkit.schema.Schema, its dict or a path; got {type(schema).__name__}")
    if sch.nonprivate_draft:
        raise ValueError("schema is a non-private draft (its bounds were read from the data): replace its bounds "
                         "and domains by public knowledge and remove its nonprivate_draft mark before fitting")
    return sch


def record_raw_input(estimator: BaseEstimator, X: Any) -> None:
    """Set ``n_features_in_`` and ``feature_names_in_`` from the raw records a schema encoded, as scikit-learn defines them.

    With a schema the model sees encoded rows, but the estimator's input is the raw table:
    ``n_features_in_`` is its number of columns and ``feature_names_in_`` their names (only
    when all are strings, as for a pandas DataFrame; otherwise the attribute is absent).
    Column names are public (the schema names them); nothing about the rows is recorded.

    Parameters
    ----------
    estimator : BaseEstimator
        The estimator being fitted.
    X : DataFrame or array_like, shape (n, d)
        The raw records ``fit`` was given.
    """
    columns = getattr(X, "columns", None)
    names = list(columns) if columns is not None else None
    estimator.n_features_in_ = int(np.shape(X)[1])
    if names and all(isinstance(c, str) for c in names):
        estimator.feature_names_in_ = np.asarray(names, dtype=object)
    elif hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_


def encoded_rows(schema: Any, X: Any, *, norm_bound: float) -> np.ndarray:
    """Raw records encoded by a public schema into rows of norm at most ``norm_bound``, checked finite and 2-D.

    Parameters
    ----------
    schema : pdpkit.schema.Schema
        The public schema (its encoding checks the columns by name).
    X : DataFrame or array_like
        Raw records.
    norm_bound : float
        The rows' public norm bound.
    """
    rows = np.asarray(schema.encode(X), dtype=float) * float(norm_bound)
    try:
        return check_array(rows)
    except (TypeError, ValueError) as exc:  # scikit-learn's text may count the rows
        raise type(exc)(private_message(str(exc))) from None


def _num_rows(y: Any) -> int:
    """The number of labels (the length sample_weight must have)."""
    shape = getattr(y, "shape", None)
    if shape is None:
        shape = np.shape(np.asarray(y, dtype=object))
    return int(shape[0]) if len(shape) else 0


def check_weight_params(*, weight_bound: Any, weight_policy: Any) -> None:
    """``weight_bound`` a real number > 0 and ``weight_policy`` one of :data:`WEIGHT_POLICIES`, else the error naming it.

    Parameters
    ----------
    weight_bound : float
        The public bound W on a record's weight.
    weight_policy : {"refuse", "clip"}
        What a fit does with a weight above W.
    """
    W = weight_bound
    if isinstance(W, (str, bytes, bool, np.bool_)) or np.ndim(W) != 0:
        raise TypeError(f"weight_bound must be a real number; got {W!r}")
    check_positive(W, "weight_bound")
    if weight_policy not in WEIGHT_POLICIES:
        raise ValueError(f"weight_policy must be one of {WEIGHT_POLICIES}; got {weight_policy!r}")


def checked_sample_weight(sample_weight: Any, *, n: int, weight_bound: float | None = None,
                          weight_policy: str = "refuse") -> np.ndarray | None:
    """``sample_weight`` checked as ``fit`` checks it: floats, one per record, finite and >= 0; ``None`` stays ``None``.

    With ``weight_bound`` W: under ``weight_policy="refuse"`` a weight above W is refused, and
    under ``"clip"`` it is clipped to W. Every refusal names the parameter and the kind of
    problem, never a value, a row or a count (:data:`WEIGHT_POLICIES`). Used by the estimators
    and by :mod:`pdpkit.model_selection` before anything is charged.

    Parameters
    ----------
    sample_weight : array_like or None
        One weight per record (a scalar is every record's).
    n : int
        The number of records.
    weight_bound : float, optional
        The public bound W on a weight.
    weight_policy : {"refuse", "clip"}
        What to do with a weight above W.
    """
    if sample_weight is None:
        return None
    if _is_dask(sample_weight):
        raise TypeError("sample_weight must be in memory (a numpy array, list or pandas Series), not a Dask array")
    try:
        sw = np.asarray(sample_weight, dtype=float)
    except (TypeError, ValueError):
        raise TypeError("sample_weight must be numbers (one weight per row of X)") from None
    if sw.ndim == 0:
        sw = np.full(n, float(sw))
    if sw.ndim != 1 or sw.shape[0] != n:
        raise ValueError("sample_weight must be one-dimensional with one weight per row of X")
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight must be finite (no NaN or inf)")
    if np.any(sw < 0):
        raise ValueError("sample_weight must be non-negative")
    if weight_bound is not None:
        sw = _within_weight_bound(sw, float(weight_bound), weight_policy)
    return sw


def _within_weight_bound(w: np.ndarray, W: float, policy: str) -> np.ndarray:
    """``w`` when no weight exceeds W; else refused (``policy="refuse"``) or clipped to W (``"clip"``)."""
    if not np.any(w > W):
        return w
    if policy not in WEIGHT_POLICIES:
        raise ValueError(f"weight_policy must be one of {WEIGHT_POLICIES}; got {policy!r}")
    if policy == "refuse":
        raise ValueError(_weight_refusal(W))
    return np.minimum(w, W)


def _weight_refusal(W: float) -> str:
    """The refusal of a weight above the bound: the same text whichever records, weights and counts."""
    return (f"a record's weight (sample_weight times its class weight) exceeds weight_bound={W:g}, the public bound "
            f"the guarantee assumes: raise weight_bound, or pass weight_policy='clip' to clip each weight to it")


def _class_positions(y: Any, classes: Any) -> np.ndarray:
    """The index in ``classes`` of each label of ``y`` (every label is one of them)."""
    order = {_plain(c): i for i, c in enumerate(classes)}
    return np.fromiter((order[_plain(c)] for c in np.asarray(y, dtype=object)), dtype=np.intp,
                       count=np.shape(y)[0])


def _class_map(classes: Any, cw: Any) -> dict | None:
    return None if cw is None or classes is None else {_plain(c): float(w) for c, w in zip(classes, cw, strict=True)}


def _class_weight_source(est: Any) -> str | None:
    cw = getattr(est, "class_weight", None)
    if cw is None:
        return None
    if isinstance(cw, str):
        return "class_prior" if getattr(est, "class_prior", None) is not None else "noisy class count"
    return "given"


class ObjPertEstimator(BaseEstimator):
    """What the two estimators share: calibration, the fit, the release, the report and the guarantee.

    Not used directly: use :class:`ObjPertClassifier` or :class:`ObjPertRegressor`.
    """

    # ``score`` takes no sample weights: no ``set_score_request`` metadata routing.
    __metadata_request__score = {"sample_weight": metadata_routing.UNUSED}

    _default_loss = "logistic"

    def __getstate__(self) -> dict[str, Any]:
        # A seed in a published pickle would let anyone regenerate the objective's noise b and
        # the output noise, and with them the un-noised gradient sum: it is never pickled.
        state = super().__getstate__() if hasattr(super(), "__getstate__") else dict(self.__dict__)
        state = dict(state)
        if state.get("random_state") is not None:
            state["random_state"] = None
        return state

    # ------------------------------------------------------------ parameters
    def _fit_norm_bound(self) -> float:
        return float(self.norm_bound) * (math.sqrt(2.0) if self.fit_intercept else 1.0)

    def _loss(self) -> GLMLoss:
        loss = get_loss(self.loss)
        if not (math.isfinite(loss.lipschitz) and math.isfinite(loss.smoothness)):
            raise ValueError(f"loss {loss.name!r} has an unbounded gradient: objective perturbation with it has "
                             f"no DP guarantee; use 'logistic' (classification) or 'huber'/'robust_log' (regression)")
        if not math.isfinite(loss.self_concordance):
            raise ValueError(f"loss {loss.name!r} has no finite self-concordance constant: the solver's iteration "
                             "budget is proven for quasi-self-concordant losses only, and a fit that could run out of "
                             "iterations would fail or succeed depending on one record")
        return loss

    def _validate_params(self) -> None:
        eps = check_estimator_budget(self, ("epsilon", "delta", "norm_bound", "lam", "sigma", "report_epsilon",
                                            "report_delta", "rho", "grad_tol"))
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise TypeError(f"fit_intercept must be True or False; got {self.fit_intercept!r}")
        check_positive(self.grad_tol, "grad_tol")
        if self.row_norm not in ("raise", "clip"):
            raise ValueError(f"row_norm must be 'raise' or 'clip'; got {self.row_norm!r}")
        if self.lam is not None:
            check_positive(self.lam, "lam")
        if self.sigma is not None:
            check_positive(self.sigma, "sigma")
        if self.report is not None:
            if self.report not in _REPORT_METHODS:
                raise ValueError(f"report must be None or one of {_REPORT_METHODS}; got {self.report!r}")
            if self.report != "data-independent":
                if self.report_epsilon is None or self.report_delta is None:
                    raise ValueError(f"report={self.report!r} releases noisy statistics: give its budget "
                                     f"report_epsilon and report_delta")
                check_positive(self.report_epsilon, "report_epsilon")
                check_probability(self.report_delta, "report_delta")
            check_probability(self.rho, "rho")
        self._validate_weight_params()
        del eps

    def _calibrate(self, loss: GLMLoss) -> tuple[float, float]:
        """(lam, sigma) of the fitted objective (divided by weight_bound) by the tight accountant (sharp
        log-determinant constant, output noise included)."""
        R = self._fit_norm_bound()
        L, beta = loss.lipschitz * R, loss.smoothness * R * R
        W = self._weight_bound()
        return _calibration(float(self.epsilon), float(self.delta), L, beta,
                            None if self.lam is None else float(self.lam) / W,
                            None if self.sigma is None else float(self.sigma) / W)

    # ------------------------------------------------------------ weights
    def _weight_bound(self) -> float:
        """W, the public bound on a record's weight (1 for an estimator built before weights existed)."""
        return float(getattr(self, "weight_bound", 1.0))

    def _grad_tol(self) -> float:
        """τ/W: the tolerance of the fitted objective (the weighted one divided by W)."""
        return float(self.grad_tol) / self._weight_bound()

    def _uses_weights(self) -> bool:
        """Whether the fit goes through the weighted loss: a weight bound other than 1 or class weights."""
        return self._weight_bound() != 1.0 or getattr(self, "class_weight", None) is not None

    def _validate_weight_params(self) -> None:
        check_weight_params(weight_bound=getattr(self, "weight_bound", 1.0),
                            weight_policy=getattr(self, "weight_policy", "refuse"))

    def _checked_sample_weight(self, sample_weight: Any, n: int) -> np.ndarray | None:
        """``sample_weight`` as floats, one per record, finite and >= 0 (the errors name no value or count)."""
        return checked_sample_weight(sample_weight, n=n)

    def _class_weights(self, count_noise: Any, class_index: Any, K: int) -> np.ndarray | None:
        """The weight of each class (None: no class weights); ``count_noise``: the noisy count's generator."""
        return None

    def _normalized_weights(self, sw: np.ndarray | None, class_index: Any, K: int, rng: Any,
                            n: int) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(every record's weight divided by W — ``sample_weight`` times its class weight, the policy applied — or
        None for the unweighted fit (no weights and W = 1); the class weights used, or None)."""
        cw = self._class_weights(rng, class_index, K)
        if sw is None and cw is None and self._weight_bound() == 1.0:
            return None, None
        w = np.ones(n) if sw is None else np.array(sw, dtype=float)
        if cw is not None:
            w = w * cw[class_index]
        W = self._weight_bound()
        w = _within_weight_bound(w, W, getattr(self, "weight_policy", "refuse"))
        return w / W, cw

    def _refuse_before_charging(self, sw: np.ndarray | None, class_index: Any, K: int, n: int) -> None:
        """Under ``weight_policy="refuse"``, refuse a weight above the bound before the accountant is charged.

        Possible when every class weight is public (given, or from ``class_prior``); with class
        weights from a noisy count the check needs the count, drawn after the charge, and runs there.
        """
        if getattr(self, "weight_policy", "refuse") != "refuse" or _class_weight_source(self) == "noisy class count":
            return
        if sw is None and not self._uses_weights():
            return
        self._normalized_weights(sw, class_index, K, None, n)  # raises on a weight above the bound

    def _weighting_record(self, used_sample_weight: bool, class_weights: Any) -> dict[str, Any] | None:
        """What the fit's weights were, all public: the bound, the policy, whether sample weights were given and
        the class weights used (given, from public frequencies, or from a charged noisy count)."""
        if not (used_sample_weight or self._uses_weights()):
            return None
        return {"weight_bound": self._weight_bound(), "weight_policy": getattr(self, "weight_policy", "refuse"),
                "sample_weight": bool(used_sample_weight),
                "class_weight": None if class_weights is None else dict(class_weights),
                "class_weight_source": _class_weight_source(self)}

    def _encode(self, X: Any) -> Any:
        """With a schema: raw records to encoded rows (norm at most norm_bound, public map); else X."""
        if getattr(self, "schema", None) is None:
            return X
        sch = schema_object(self.schema)
        return np.asarray(sch.encode(X), dtype=float) * float(self.norm_bound)

    def _encoded_or_validated(self, X: Any) -> Any:
        """Rows to predict on: a schema's encoding of raw records (its width is the schema's), or X checked
        against the fitted input as scikit-learn checks it."""
        if getattr(self, "schema", None) is None:
            return validate_data(self, X, reset=False)
        return encoded_rows(schema_object(self.schema), X, norm_bound=self.norm_bound)

    def _own_charges(self, loss: GLMLoss, lam: float, sigma: float, count: int, scales: dict[str, Any]) -> list:
        """The ledger entries of this fit (and its report, and a noisy class count), known before any noise is drawn."""
        R = self._fit_norm_bound()
        L, beta = loss.lipschitz * R, loss.smoothness * R * R
        tau = self._grad_tol()
        sigma_out = default_sigma_out(grad_tol=tau, lam=lam, mu=default_output_mu(float(self.epsilon)))
        model = ObjPertEvent(L=L, beta=beta, lam=lam, sigma=sigma,
                             mu_out=output_mu(grad_tol=tau, lam=lam, sigma_out=sigma_out))
        out = self._count_charges()
        out.append(Charge(name=f"{type(self).__name__} model", event=model, count=count, delta=float(self.delta)))
        if scales:
            rep = report_event(L=L, beta=beta, sigma_gradient=scales.get("sigma_gradient"),
                               sigma_hessian=scales.get("sigma_hessian"),
                               sigma_lambda_min=scales.get("sigma_lambda_min"))
            out.append(Charge(name=f"{type(self).__name__} report", event=rep, count=count,
                              delta=float(self.report_delta)))
        return out

    def _count_charges(self) -> list:
        """The noisy class count's entry (``class_weight="balanced"`` without ``class_prior``), or none."""
        return []

    def _own_accountant(self) -> PrivacyAccountant | None:
        """The accountant a fit charges: the one given, or for a noisy class count without one, an accountant of
        this fit alone (so the release's guarantee is the total of everything it released)."""
        acc = getattr(self, "accountant", None)
        if acc is not None or not self._count_charges():
            return acc
        deltas = [float(self.delta), float(self.class_count_delta)]
        if self.report not in (None, "data-independent"):
            deltas.append(float(self.report_delta))
        total = sum(deltas)
        if total >= 1.0:
            raise ValueError("delta, report_delta and class_count_delta must add up to less than 1")
        return PrivacyAccountant(500.0, total)

    @contextlib.contextmanager
    def _charging(self, charges: list) -> Iterator[tuple[Any, np.random.Generator]]:
        """Charge the accountant and yield it with the fit's noise generator: the fit draws inside the block.

        The budget is checked before the block (nothing is drawn on a refusal); the charge is
        recorded when the block ends (:meth:`pdpkit.accountant.PrivacyAccountant.charging`), and
        the release is made after it. With an accountant the noise comes from the stream of the
        charge's ledger position (``pdpkit._validation.charged_generator``): independent of
        every other release of the session, whatever ``random_state`` is. Without one, from
        ``random_state`` itself.
        """
        acc = self._own_accountant()
        if acc is None:
            yield None, as_generator(self.random_state, "random_state")
            return
        if not isinstance(acc, PrivacyAccountant):
            raise TypeError(f"accountant must be a pdpkit.accountant.PrivacyAccountant; got {type(acc).__name__}")
        with acc.charging(charges) as position:  # BudgetExceededError before any noise is drawn
            yield acc, charged_generator(self.random_state, position)

    def _seeded(self) -> bool:
        """Whether the noise comes from a caller's seed (an int or a Generator): the release says so."""
        return self.random_state is not None

    def _rows(self, X: Any, defer: bool = False) -> _Rows:
        # the rows of prepare_rows, read block by block by the solver and the report: no copy of X
        return _row_map(X, norm_bound=self.norm_bound, row_norm=self.row_norm, fit_intercept=self.fit_intercept,
                        defer=defer)

    def _validate(self, X: Any, y: Any, *, reset: bool, y_numeric: bool = False) -> tuple[Any, Any]:
        """validate_data, or for a Dask array the same checks without loading it (shape and features).

        With a schema, after ``fit`` the input is the raw table (``n_features_in_`` counts its
        columns): rows the schema encoded are checked as arrays, their width being the schema's.
        """
        if not _is_dask(X):
            try:
                if not reset and getattr(self, "schema", None) is not None:
                    return check_X_y(X, y, y_numeric=y_numeric)
                return validate_data(self, X, y, reset=reset, y_numeric=y_numeric)
            except (TypeError, ValueError) as exc:  # scikit-learn's text may quote a cell or count the rows
                raise type(exc)(private_message(str(exc))) from None
        if X.ndim != 2:
            raise ValueError(f"Expected 2D array, got {X.ndim}D array instead")
        if reset:
            self.n_features_in_ = int(X.shape[1])
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        elif X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                             f"{self.n_features_in_} features as input.")
        if y is None or not _is_dask(y):
            y = np.asarray(y)
            if y.ndim != 1 or y.shape[0] != X.shape[0]:
                raise ValueError(f"y must be one-dimensional with one label per row of X; got shape {y.shape}")
        return X, y

    def _fit_signed(self, X: np.ndarray, y_signed: np.ndarray, classes: Any,
                    sample_weight: np.ndarray | None = None) -> None:
        self._validate_params()
        loss = self._loss()
        rows = self._rows(X)
        lam, sigma = self._calibrate(loss)
        scales = self._report_scales(loss)
        grad_tol = self._grad_tol()
        report = None
        report_delta = float(self.report_delta) if scales else None
        class_index = None
        if classes is not None and (self._uses_weights() or sample_weight is not None):
            class_index = (np.asarray(y_signed) > 0).astype(np.intp)  # classes[1] is +1
        if (sample_weight is not None or self._uses_weights()) and not _is_dask(y_signed):
            self._refuse_before_charging(sample_weight, class_index, 2, rows.shape[0])
        with self._charging(self._own_charges(loss, lam, sigma, 1, scales)) as (acc, rng):
            y_fit, loss_fit, cw_used = y_signed, loss, None
            if sample_weight is not None or self._uses_weights():
                if _is_dask(y_signed):
                    raise TypeError("weights (sample_weight, class_weight or weight_bound other than 1) need "
                                    "in-memory labels, not a Dask array")
                v, cw_used = self._normalized_weights(sample_weight, class_index, 2, rng, rows.shape[0])
                if v is not None:
                    y_fit, loss_fit = weighted_labels(y_signed, v), WeightedLoss(loss)
            fit = objpert_fit(rows, y_fit, loss_fit, lam=lam, sigma=sigma, rng=rng,
                              norm_bound=self._fit_norm_bound(), grad_tol=grad_tol,
                              sigma_out=default_sigma_out(grad_tol=grad_tol, lam=lam,
                                                          mu=default_output_mu(float(self.epsilon))))
            if self.report is not None:
                from . import report as _report

                report = _report.privacy_report(fit, rows, y_fit, method=self.report, rho=float(self.rho),
                                                rng=rng, **scales)
        weighting = self._weighting_record(sample_weight is not None, _class_map(classes, cw_used))
        release = objpert_release(fit, delta=float(self.delta), report=report, report_delta=report_delta,
                                  norm_bound=float(self.norm_bound), fit_intercept=bool(self.fit_intercept),
                                  classes=classes, feature_names=self._release_names(), row_norm=self.row_norm,
                                  schema=self._release_schema(), accountant=acc, seeded=self._seeded(),
                                  weighting=weighting)
        del fit  # holds the objective's noise b and the solver's point: never kept on the estimator
        self._set_fitted(release, lam * self._weight_bound(), sigma * self._weight_bound())
        self.weighting_ = weighting

    def _n_models(self) -> int:
        """How many fits a fit makes: 1, or K for a one-vs-rest classifier of K >= 3 public classes."""
        return 1

    def privacy_events(self) -> list[Charge]:
        """The ledger entries a fit with these parameters charges (model, and report if it releases statistics).

        Known before any data is read (calibration uses public parameters only): what an
        accountant would record. A classifier needs its public classes (``classes`` or a schema)
        to know how many models it fits.
        """
        self._validate_params()
        loss = self._loss()
        count = self._n_models()
        if count == 1:
            lam, sigma = self._calibrate(loss)
            scales = self._report_scales(loss)
        else:
            R = self._fit_norm_bound()
            lam, sigma = self._ovr_parameters(loss.lipschitz * R, loss.smoothness * R * R, count)
            scales = self._report_scales(loss, count=count)
        return self._own_charges(loss, lam, sigma, count, scales)

    def _ovr_parameters(self, L: float, beta: float, count: int) -> tuple[float, float]:
        """(lam, sigma) of the ``count`` one-vs-rest fits: given, sigma calibrated for a given lam, or both calibrated."""
        if self.sigma is not None and self.lam is None:
            raise ValueError("with three or more classes give lam (sigma is then calibrated), both, or neither")
        W = self._weight_bound()
        if self.lam is None:
            return _calibration_ovr(float(self.epsilon), float(self.delta), L, beta, count)
        if self.sigma is None:
            lam = float(self.lam) / W
            return lam, _calibration_ovr_sigma(float(self.epsilon), float(self.delta), L, beta, count, lam)
        return float(self.lam) / W, float(self.sigma) / W

    def budget_part(self, part: str = "model") -> Callable[[float, float], list[Charge]]:
        """This estimator's model (``"model"``) or report (``"report"``) as a part for :func:`pdpkit.accountant.plan_budget`.

        The part, called with (ε_i, δ_i), is :meth:`privacy_events` of a copy of this estimator
        with ``epsilon``/``delta`` (or ``report_epsilon``/``report_delta``) set to them —
        that part's entries only. Give the plan's shares to the estimator with ``set_params``.

        Parameters
        ----------
        part : {"model", "report"}
            Which budget the part sets.
        """
        if part not in ("model", "report"):
            raise ValueError(f"part must be 'model' or 'report'; got {part!r}")
        keys = ("epsilon", "delta") if part == "model" else ("report_epsilon", "report_delta")
        params = self.get_params(deep=False)

        def calibrated(eps: float, delta: float) -> list[Charge]:
            est = type(self)(**{**params, keys[0]: eps, keys[1]: delta})
            return [c for c in est.privacy_events() if c.name.endswith(part)]

        return calibrated

    def _report_scales(self, loss: GLMLoss, count: int = 1) -> dict[str, Any]:
        """The report's noise scales; for ``count`` reports (one per one-vs-rest model) each scale times
        sqrt(count): K Gaussian mechanisms on the same records then compose to the one report calibrated
        for (report_epsilon, report_delta)."""
        if self.report is None or self.report == "data-independent":
            return {}
        from . import report as _report

        scales = _report.calibrate_report(float(self.report_epsilon), float(self.report_delta), method=self.report,
                                          loss=loss.name, norm_bound=self._fit_norm_bound())
        return {k: (None if v is None else float(v) * math.sqrt(count)) for k, v in scales.items()}

    def _release_names(self) -> list[str] | None:
        if getattr(self, "schema", None) is not None:
            return list(schema_object(self.schema).encoded_names)
        names = getattr(self, "feature_names_in_", None)
        return None if names is None else [str(v) for v in names]

    def _release_schema(self) -> Any:
        return None if getattr(self, "schema", None) is None else schema_object(self.schema)

    @classmethod
    def from_release(cls, release: Release) -> ObjPertEstimator:
        """A fitted estimator that predicts as ``release`` (its parameters, coefficients, schema and report).

        ``ObjPertClassifier.from_release`` needs a classifier's release (logistic loss with
        classes), ``ObjPertRegressor.from_release`` a regressor's; ``ObjPertEstimator.from_release``
        returns whichever the release is.

        A weighted release (``release.weighting``) gives back ``weight_bound`` W,
        ``weight_policy``, the class weights used (as a dict ``class_weight``), ``weighting_``,
        and the weighted objective's λ, σ and τ: the release's times W (it holds the objective
        divided by W). The rebuilt estimator predicts as the fitted one, bit for bit, and its
        ``privacy_spent()`` and ``privacy_report(..., sample_weight=...)`` take weights on the
        same scale.

        Parameters
        ----------
        release : pdpkit.release.Release
            A release with a norm bound (one that carries a guarantee).
        """
        if not isinstance(release, Release):
            raise TypeError(f"release must be a pdpkit.release.Release; got {type(release).__name__}")
        if release.norm_bound is None:
            raise ValueError("a release without norm_bound cannot become an estimator (it has no guarantee)")
        g = release.guarantee
        wt = getattr(release, "weighting", None)
        W = 1.0 if wt is None else float(wt["weight_bound"])
        kw = dict(epsilon=g.epsilon if g is not None else 1.0, delta=g.delta if g is not None else 1e-5,
                  lam=release.lam * W, sigma=release.sigma * W, norm_bound=release.norm_bound,
                  row_norm=release.row_norm, fit_intercept=release.fit_intercept, grad_tol=release.grad_tol * W,
                  schema=release.schema_object)
        if wt is not None:
            kw.update(weight_bound=W, weight_policy=wt["weight_policy"])
        is_classifier = release.loss == "logistic" and release.classes is not None
        want = ObjPertClassifier if is_classifier else ObjPertRegressor
        if not issubclass(want, cls):
            raise TypeError(f"this release is a {'classifier' if is_classifier else 'regressor'}'s: rebuild it with "
                            f"{want.__name__}.from_release")
        if is_classifier:
            cw = None if wt is None or wt["class_weight"] is None else dict(wt["class_weight"])
            est: ObjPertEstimator = ObjPertClassifier(**kw, classes=None if release.schema is not None
                                                      else list(release.classes), class_weight=cw)
            est.classes_ = np.asarray(release.classes)
        else:
            est = ObjPertRegressor(loss=release.loss, **kw)
        if release.schema is None:
            est.n_features_in_ = int(release.coef.shape[-1])
            if release.feature_names is not None:
                est.feature_names_in_ = np.asarray(release.feature_names, dtype=object)
        else:  # the raw table's columns the schema reads: its features (the label is passed as y)
            names = [c.name for c in release.schema_object.columns if c.role == "feature"]
            est.n_features_in_ = len(names)
            est.feature_names_in_ = np.asarray(names, dtype=object)
        est._set_fitted(release, release.lam * W, release.sigma * W)
        if wt is not None:
            est.weighting_ = {**wt, "class_weight": None if wt["class_weight"] is None else dict(wt["class_weight"])}
        return est

    def _set_fitted(self, release: Release, lam: float, sigma: float) -> None:
        self.weighting_ = None
        self.release_ = release
        self.report_ = release.privacy_report if release.n_models == 1 else None
        self.coef_ = np.array(release.coef)
        self.intercept_ = release.intercept if release.n_models > 1 else float(release.intercept)
        self.lam_ = float(lam)
        self.sigma_ = float(sigma)

    # ------------------------------------------------------------ prediction
    def _linear(self, X: ArrayLike) -> np.ndarray:
        check_is_fitted(self)
        X = self._encoded_or_validated(X)
        # the model is "clip, then linear" (the map it was fitted through), or defined on the ball
        # only (row_norm="raise": a row beyond it is refused, as Release.predict refuses it)
        X = prepare_rows(X, norm_bound=self.norm_bound, row_norm=self.row_norm)
        return X @ np.asarray(self.coef_).T + self.intercept_

    # ------------------------------------------------------------ privacy
    def privacy_spent(self) -> Guarantee:
        r"""The :math:`(\varepsilon, \delta)` guarantee of everything this estimator released.

        ``release_.guarantee`` (:func:`pdpkit.release.release_guarantee`): the model —
        ObjPert composed exactly with the output noise that pays for the solver's tolerance —
        and, with a report that releases noisy statistics, the report, composed with it
        exactly at :math:`\delta_{\text{model}} + \delta_{\text{report}}`; the parts are listed in
        ``guarantee.parts``. It is what the release file states and what
        :meth:`pdpkit.release.Release.verify` recomputes. A weighted fit's guarantee says, in
        its ``accounting``, the weight bound and the policy it holds under
        (:func:`pdpkit.release.weighting_statement`); the release holds the fitted objective divided by the
        bound (module docstring).
        """
        check_is_fitted(self)
        return self.release_.guarantee

    def _report_targets(self, X: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        if self.schema is not None:
            X = self._encode(X)
            if not hasattr(self, "classes_") and schema_object(self.schema).label_bounds is not None:
                # a regression's labels, mapped by the schema's public bounds
                y = np.asarray(schema_object(self.schema).encode_label(y), dtype=float)
        X, y = self._validate(X, y, reset=False)
        # a record enters the model through the same row map as in fit (clip, or refuse)
        return self._rows(X, defer=True), self._signed_labels(y)

    def _target_weights(self, y: Any, n: int, sample_weight: Any) -> np.ndarray | None:
        """The people's weights over W for the report's bounds; None: the bound for every weight.

        ``sample_weight`` given: it, times the class weight of ``y``, with the fit's policy. Not
        given: 1 times the class weight when the fit had no sample weights (every record's was 1);
        otherwise (or without a label under class weights) None.
        """
        wt = getattr(self, "weighting_", None)
        if wt is None:
            if sample_weight is not None:
                raise TypeError("sample_weight: this estimator was fitted without weights (weight_bound 1, no "
                                "sample or class weights): every record's weight is 1")
            return None
        sw = self._checked_sample_weight(sample_weight, n)
        if sw is None and wt["sample_weight"]:
            return None  # unknown weight: the bound at W holds for every weight
        cw = None if wt["class_weight"] is None else np.array([wt["class_weight"][_plain(c)]
                                                              for c in self.classes_])
        if cw is not None and y is None:
            return None
        w = np.ones(n) if sw is None else sw
        if cw is not None:
            w = w * cw[_class_positions(np.asarray(y, dtype=object), self.classes_)]
        W = wt["weight_bound"]
        if np.any(w > W):
            if wt["weight_policy"] == "refuse":
                raise ValueError(_weight_refusal(W))
            w = np.minimum(w, W)
        return w / W

    def privacy_report(self, X: ArrayLike, y: ArrayLike | None = None, *, uniform: bool = False,
                       sample_weight: ArrayLike | None = None):
        r"""Every record's private bound on its ex-post pDP, readable: a :class:`pdpkit.report.PersonalBounds`.

        Post-processing of the release and of the report's noisy statistics
        (:meth:`pdpkit.report.PrivacyReport.bounds`): any record, member or not, may be
        passed; each bound holds with probability at least ``1 - rho`` (jointly for all given
        records with ``uniform=True``). Without ``y`` each bound holds whatever the record's
        label (:meth:`pdpkit.report.PrivacyReport.sup_over_labels`: both classes, or every
        label in the schema's bounds for a regression). The result states the release's total
        guarantee and the report's share (``summary()``, ``to_frame()``) and behaves as the
        array of the bounds. Needs ``report`` set at construction.

        Parameters
        ----------
        X : array_like or pandas.DataFrame, shape (m, n_features)
            The records.
        y : array_like, shape (m,), optional
            Their labels; ``None`` for the bound valid for every label.
        uniform : bool
            Bounds that hold jointly for all the given records.
        sample_weight : array_like, shape (m,), optional
            The records' weights as ``fit`` took them (a weighted fit only): each person's
            bound is then at their weight (times their class weight, the fit's
            ``weight_policy`` applied). Left ``None``: weight 1 when the fit had no sample
            weights, otherwise the bound at ``weight_bound``, which holds for every weight.

        Returns
        -------
        pdpkit.report.PersonalBounds
        """
        check_is_fitted(self)
        if self.report_ is None and self.release_.privacy_reports:
            return self._one_vs_rest_report(X, y, uniform, sample_weight)
        if self.report_ is None:
            raise ValueError("this estimator was fitted with report=None: set report='data-independent', "
                             "'data-dependent' or 'adaptive' and refit")
        index = getattr(X, "index", None)
        if y is None:
            X = self._encoded_or_validated(X)  # no label to check (a Dask X: pass y)
            rows, ys = self._rows(X, defer=True), None
        else:
            rows, ys = self._report_targets(X, y)
        # a regression through a schema: its labels were mapped onto [-1, 1] by the public bounds
        label_bounds = (-1.0, 1.0) if (self.schema is not None and not hasattr(self, "classes_")
                                       and schema_object(self.schema).label_bounds is not None) else None
        labels = None if y is None else (self.classes_[(np.asarray(ys) > 0).astype(int)]
                                         if hasattr(self, "classes_") else ys)
        v = self._target_weights(labels, rows.shape[0], sample_weight)
        return self.report_.bounds(rows, ys, uniform=uniform, label_bounds=label_bounds,
                                   guarantee=self.privacy_spent(), index=index, weight=v)


    def _one_vs_rest_report(self, X: Any, y: Any, uniform: bool, sample_weight: Any = None):
        r"""A one-vs-rest model's bound: the sum of its K reports' bounds, each holding with probability 1 − ρ/K.

        The K models are released with independent noise, so a person's ex-post privacy loss
        for the K models together is the sum of the K losses; by the union bound the sum of
        the K bounds holds with probability at least 1 − ρ. Without a label, the largest of the
        K sums a person's class may give (a class fixes the labels of all K models).
        """
        from .report import PersonalBounds

        reps = self.release_.privacy_reports
        index = getattr(X, "index", None)
        if y is None:
            X = self._encoded_or_validated(X)
        else:
            X = self._encode(X)
            X, y = self._validate(X, y, reset=False)
            y = np.asarray(y)
            if not np.isin(y, self.classes_).all():
                raise ValueError(_unknown_label_message(self.classes_))
        rows = self._rows(X, defer=True)
        guarantee = self.privacy_spent()

        def summed(labels: np.ndarray) -> tuple[np.ndarray, Any]:
            total, last = None, None
            v = self._target_weights(labels, rows.shape[0], sample_weight)
            for k, rep in enumerate(reps):
                y_k = np.where(labels == self.classes_[k], 1.0, -1.0)
                last = rep.bounds(rows, y_k, uniform=uniform, guarantee=guarantee, index=index, weight=v)
                total = np.asarray(last) if total is None else total + np.asarray(last)
            return total, last

        if y is not None:
            total, last = summed(y)
        else:  # whatever the label: the largest sum over the K classes a person may have
            n = rows.shape[0]
            total, last = None, None
            for c in self.classes_:
                t_c, last = summed(np.full(n, c, dtype=object))
                total = t_c if total is None else np.maximum(total, t_c)
        return PersonalBounds(epsilon=total, label_known=np.full(total.shape, y is not None),
                              rho=min(sum(r.rho for r in reps), 1.0 - 1e-12), method=reps[0].method, uniform=uniform,
                              total_epsilon=last.total_epsilon, total_delta=last.total_delta,
                              report_epsilon=last.report_epsilon, report_delta=last.report_delta, index=index)


class ObjPertClassifier(ClassifierMixin, ObjPertEstimator):
    r"""Private linear classifier by objective perturbation, (ε, δ)-DP with the tight accountant.

    With three or more classes the model is one-vs-rest: K fits with a shared (λ, σ) on every
    record, calibrated so that the K fits **together** are (ε, δ)-DP
    (:func:`pdpkit.accountant.objpert_calibrate_composed`); ``predict_proba`` normalizes the K
    logistic scores. Its privacy report is one report per class's model (each at ρ/K, with its noise
    scaled by √K for a data-dependent or adaptive report, so the K together cost the report's
    budget); a person's bound is the sum of the K bounds
    (:meth:`~pdpkit.estimators.ObjPertEstimator.privacy_report`), and
    :func:`pdpkit.page.privacy_page` computes it in the browser.

    Parameters
    ----------
    epsilon, delta : float
        Target (ε, δ)-DP guarantee of the model (add/remove one record): ε in (0, 500],
        δ in (0, 1); defaults 1 and 1e-5.
    loss : str or GLMLoss
        ``"logistic"`` (default) or any GLM loss on labels ±1 with bounded derivatives.
    lam, sigma : float, optional
        Regularization λ and objective noise σ. Left ``None``: calibrated for (ε, δ) by
        :func:`pdpkit.accounting.objpert_calibrate` (σ = 1.3 × the Gaussian mechanism's, then the
        smallest λ), or the missing one solved given the other. Both given: nothing is
        calibrated and the guarantee is computed (``privacy_spent()``).
    norm_bound : float
        Bound R on the Euclidean norm of the feature rows passed to ``fit`` (see the module).
    row_norm : {"raise", "clip"}
        What to do with a row beyond ``norm_bound``.
    fit_intercept : bool
        Fit an intercept (as a constant column of value ``norm_bound``).
    report : {None, "data-independent", "data-dependent", "adaptive"}
        Attach a privacy report (:func:`pdpkit.report.privacy_report`) with this method. With
        K >= 3 classes, one report per one-vs-rest model, each at ``rho``/K with its noise
        scales times √K (the K reports together cost ``report_epsilon``, ``report_delta``); a
        person's bound (:meth:`ObjPertEstimator.privacy_report`) is the sum of the K bounds, which holds with
        probability at least 1 − ``rho`` for the K models together (their noises are independent,
        so their ex-post losses add up).
    report_epsilon, report_delta : float, optional
        Budget of the report's noisy releases (not needed for ``"data-independent"``).
    rho : float
        Failure probability of each report bound.
    random_state : int, numpy.random.Generator or None
        Source of the noise. ``None`` (default): OS entropy. A seed makes the release
        reproducible by anyone who knows it — private only while the seed stays secret — and
        the release says so (``release_.seeded``). With an ``accountant`` every fit draws from
        the stream of its place in the ledger (``pdpkit._validation.charged_generator``), so
        two releases of one session never share noise, even with the same seed.
    grad_tol : float
        τ, the public bound on the solver's perturbed-gradient norm
        (:func:`pdpkit.objpert.objpert_fit`); the output noise
        :math:`\sigma_{\rm out} = 2\tau/(\lambda\mu_0)` pays for it, with
        :math:`\mu_0` = :data:`pdpkit.objpert.DEFAULT_OUTPUT_MU`, and the calibration includes it.
    schema : pdpkit.schema.Schema, dict or str, optional
        A public schema (or its JSON file): ``fit`` and ``predict`` then take raw records (a
        DataFrame with the schema's columns), encoded by the schema into rows of norm at most
        ``norm_bound`` — a public map, no statistic of the data, nothing to clip; the classes
        are the schema's label domain.
    accountant : pdpkit.accountant.PrivacyAccountant, optional
        The session's accountant: ``fit`` charges the model (and report) before drawing any
        noise, refuses over budget, and the release states the accountant's total with its
        ledger. Shared, not copied, by ``clone``; a pickled copy in another process refuses
        to charge (:class:`pdpkit.accountant.DetachedAccountantError`).
    classes : sequence, optional
        The public list of classes (two or more distinct strings or numbers; with two,
        ``classes[1]`` is the positive class). Required unless ``schema`` has a categorical
        label, whose categories are then the classes. Never read from the data: the labels
        present, and so the number of one-vs-rest models, would reveal who is in it.
    unknown_label : {"raise", "ignore"}
        A record whose label is not one of the classes: refuse the data set (default; the
        message names no label, row or count) or leave the record out
        (:data:`UNKNOWN_LABEL_POLICIES`).
    weight_bound : float
        W > 0, the public bound on a record's weight (``sample_weight`` times its class
        weight) that the guarantee assumes: the sensitivities scale with it (module
        docstring); default 1. Without weights every record's weight is 1.
    weight_policy : {"refuse", "clip"}
        A weight above ``weight_bound``: refuse the data set (default; the message names no
        value, row or count) or clip it to the bound (:data:`WEIGHT_POLICIES`). Either is
        stated by ``privacy_spent()``.
    class_weight : dict, "balanced" or None
        Weights per class, public: ``{class: weight >= 0}`` (a class left out has weight 1), or
        ``"balanced"``, :math:`1/(K p_c)` for K classes of frequencies :math:`p_c` — from
        ``class_prior``, or, without it, from a Gaussian noisy count of the classes (L2
        sensitivity 1 under add/remove, budget ``class_count_epsilon``,
        ``class_count_delta``), charged to the accountant (an accountant of this fit alone
        when none is given) and composed into the guarantee. A record's weight is its
        ``sample_weight`` times its class's weight; ``weight_bound`` bounds it. Default
        ``None``.
    class_prior : dict or sequence, optional
        Public class frequencies for ``class_weight="balanced"`` (``{class: frequency > 0}`` or
        one per class in the order of the classes; normalized to sum 1), e.g. from census
        documentation. Never read from the data.
    class_count_epsilon, class_count_delta : float, optional
        Budget (ε > 0, δ in (0, 1)) of the noisy class count of ``class_weight="balanced"``
        without ``class_prior``.

    Attributes
    ----------
    classes_ : numpy.ndarray
        The public classes (``classes``, or the schema's label categories), in their order;
        with two, ``classes_[1]`` is the positive class (+1).
    coef_, intercept_ : numpy.ndarray, float
        The private model.
    release_ : pdpkit.release.Release
        What may be published (``release_.to_json()``).
    report_ : pdpkit.report.PrivacyReport or None
        The privacy report.
    lam_, sigma_ : float
        The λ and σ used for the weighted objective (the release holds them divided by
        ``weight_bound``; calibrated, that quotient is at least 0.01: a larger λ only lowers ε).
    weighting_ : dict or None
        A weighted fit's public description (weight bound, policy, whether sample weights were
        given, the class weights used and where they came from); ``None`` for an unweighted fit.
    """

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-5, *, loss: str | GLMLoss = "logistic",
                 lam: float | None = None, sigma: float | None = None, norm_bound: float = 1.0,
                 row_norm: str = "raise", fit_intercept: bool = True, report: str | None = None,
                 report_epsilon: float | None = None, report_delta: float | None = None, rho: float = 0.05,
                 random_state: Any = None, grad_tol: float = DEFAULT_GRAD_TOL,
                 schema: Any = None, accountant: PrivacyAccountant | None = None, classes: Any = None,
                 unknown_label: str = "raise", weight_bound: float = 1.0, weight_policy: str = "refuse",
                 class_weight: Any = None, class_prior: Any = None, class_count_epsilon: float | None = None,
                 class_count_delta: float | None = None) -> None:
        self.weight_bound = weight_bound
        self.weight_policy = weight_policy
        self.class_weight = class_weight
        self.class_prior = class_prior
        self.class_count_epsilon = class_count_epsilon
        self.class_count_delta = class_count_delta
        self.schema = schema
        self.accountant = accountant
        self.classes = classes
        self.unknown_label = unknown_label
        self.epsilon = epsilon
        self.delta = delta
        self.loss = loss
        self.lam = lam
        self.sigma = sigma
        self.norm_bound = norm_bound
        self.row_norm = row_norm
        self.fit_intercept = fit_intercept
        self.report = report
        self.report_epsilon = report_epsilon
        self.report_delta = report_delta
        self.rho = rho
        self.random_state = random_state
        self.grad_tol = grad_tol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        tags.classifier_tags.poor_score = True  # private: noisy by design on the checks' tiny data sets
        return tags

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> ObjPertClassifier:
        """Fit the private model (and its report) on ``X`` (rows within ``norm_bound``, or raw records with a schema).

        Parameters
        ----------
        X : array_like or DataFrame, shape (n, d)
            Feature rows, or raw records with ``schema``.
        y : array_like, shape (n,)
            Labels, each one of the public classes (``classes``, or the schema's label domain);
            another label is refused or left out as ``unknown_label`` says.
        sample_weight : array_like, shape (n,), optional
            Each record's weight (finite, >= 0), multiplied by its class weight; above
            ``weight_bound``: ``weight_policy``.
        """
        warn_if_in_model_selection()
        sch = None if self.schema is None else schema_object(self.schema)
        classes = self._public_classes(sch, y)  # before any label is read
        self._validate_params()
        self._check_class_weight(classes)
        sw = self._checked_sample_weight(sample_weight, _num_rows(y))
        raw = X
        if sch is not None and sch.label_classes is not None:  # the classes are the schema's public domain
            X = self._encode(X)
            keep = None
            if self.unknown_label == "ignore":
                text = np.asarray(y, dtype=object).astype(str)
                known = np.isin(text, np.asarray(sch.label_classes, dtype=object).astype(str))
                keep = None if known.all() else known
            y_in = np.asarray(y, dtype=object)
            if keep is not None:
                X, y_in = np.asarray(X)[keep], y_in[keep]
                sw = None if sw is None else sw[keep]
            idx = np.asarray(sch.encode_label(y_in.astype(str)))
            X, _ = self._validate(X, idx, reset=True)
            y = classes[idx]
        else:
            X, y = self._validate(self._encode(X), y, reset=True)
            keep = labels_known(y, classes, self.unknown_label)
            if keep is not None:
                X, y = X[keep], y[keep]
                sw = None if sw is None else sw[keep]
        if sch is not None:
            record_raw_input(self, raw)
        self.classes_ = classes
        if classes.shape[0] == 2:
            # every label was just checked to be one of the classes: no pass to check it again
            self._fit_signed(X, self._signed_labels(y, known=True), classes=list(classes), sample_weight=sw)
        else:
            self._fit_ovr(X, np.asarray(y), classes, sample_weight=sw)
        return self

    # ------------------------------------------------------------ class weights
    def _check_class_weight(self, classes: np.ndarray) -> None:
        """``class_weight`` and ``class_prior`` against the public classes (before any label is read)."""
        cw = self.class_weight
        if cw is None:
            return
        names = [_plain(c) for c in classes]
        if isinstance(cw, str):
            if cw != "balanced":
                raise ValueError(f"class_weight must be None, a dict or 'balanced'; got {cw!r}")
            if self.class_prior is not None:
                self._prior(classes)
            elif self.class_count_epsilon is None or self.class_count_delta is None:
                raise ValueError("class_weight='balanced' needs the class frequencies: give class_prior (public), "
                                 "or class_count_epsilon and class_count_delta for a noisy count that is charged")
            else:
                check_positive(self.class_count_epsilon, "class_count_epsilon")
                check_probability(self.class_count_delta, "class_count_delta")
            return
        if not isinstance(cw, dict):
            raise TypeError("class_weight must be None, a dict {class: weight} or 'balanced'; got "
                            f"{type(cw).__name__}")
        unknown = [k for k in cw if _plain(k) not in names]
        if unknown:
            raise ValueError(f"class_weight names {unknown!r}, which are not among the classes {names}")
        W = self._weight_bound()
        for k, v in cw.items():
            if isinstance(v, (str, bytes, bool, np.bool_)) or np.ndim(v) != 0:
                raise TypeError(f"class_weight[{k!r}] must be a number; got {v!r}")
            if not (math.isfinite(float(v)) and float(v) >= 0):
                raise ValueError(f"class_weight[{k!r}] must be finite and >= 0; got {v!r}")
            if float(v) > W and self.weight_policy == "refuse":
                raise ValueError(f"class_weight[{k!r}]={float(v):g} exceeds weight_bound={W:g} and "
                                 "weight_policy='refuse': raise weight_bound, or pass weight_policy='clip'")

    def _prior(self, classes: np.ndarray) -> np.ndarray:
        """``class_prior`` as frequencies in the order of ``classes``, positive, summing to 1."""
        prior = self.class_prior
        names = [_plain(c) for c in classes]
        if isinstance(prior, dict):
            if sorted(map(str, (_plain(k) for k in prior))) != sorted(map(str, names)):
                raise ValueError(f"class_prior must give a frequency for each class {names}, and no other")
            p = np.array([float(prior[next(k for k in prior if _plain(k) == c)]) for c in names])
        else:
            try:
                p = np.asarray(prior, dtype=float)
            except (TypeError, ValueError):
                raise TypeError("class_prior must be a dict {class: frequency} or one frequency per class") from None
            if p.shape != (len(names),):
                raise ValueError(f"class_prior must hold one frequency per class ({len(names)})")
        if not (np.all(np.isfinite(p)) and np.all(p > 0)):
            raise ValueError("class_prior's frequencies must be finite and > 0")
        return p / p.sum()

    def _class_weights(self, count_noise: Any, class_index: Any, K: int) -> np.ndarray | None:
        """Each class's weight: given, 1/(K p) from class_prior, or 1/(K p) from the noisy count (drawn here)."""
        cw = getattr(self, "class_weight", None)
        if cw is None:
            return None
        classes = self.classes_ if hasattr(self, "classes_") else None
        if classes is None:  # pragma: no cover - set by fit before the weights
            raise RuntimeError("class weights need the fitted classes")
        names = [_plain(c) for c in classes]
        if isinstance(cw, dict):
            given = {_plain(k): float(v) for k, v in cw.items()}
            return np.array([given.get(c, 1.0) for c in names])
        if self.class_prior is not None:
            p = self._prior(classes)
        else:  # the Gaussian mechanism on the class histogram (sensitivity 1), charged before this draw
            counts = np.bincount(class_index, minlength=K).astype(float)
            noisy = counts + self._count_sigma() * count_noise.standard_normal(K)
            noisy = np.maximum(noisy, 1.0)  # post-processing: every class present at least once
            p = noisy / noisy.sum()
        return 1.0 / (K * p)

    def _count_sigma(self) -> float:
        from .gaussian import gaussian_sigma

        return float(gaussian_sigma(float(self.class_count_epsilon), float(self.class_count_delta), sensitivity=1.0))

    def _count_charges(self) -> list:
        if getattr(self, "class_weight", None) != "balanced" or self.class_prior is not None:
            return []
        check_positive(self.class_count_epsilon, "class_count_epsilon")
        check_probability(self.class_count_delta, "class_count_delta")
        return [Charge(name=f"{type(self).__name__} class counts", event=GaussianEvent(mu=1.0 / self._count_sigma()),
                       count=1, delta=float(self.class_count_delta))]

    def _n_models(self) -> int:
        sch = None if self.schema is None else schema_object(self.schema)
        k = int(self._public_classes(sch, None).shape[0])
        return k if k >= 3 else 1

    def _public_classes(self, sch: Any, y: Any) -> np.ndarray:
        """The classes from public input — the schema's label domain or ``classes`` — never from ``y``.

        Refuses, before any label is read, when neither is given. (``y`` is not read here; it is
        an argument so that a test can make a non-private variant that reads it.)
        """
        if self.unknown_label not in UNKNOWN_LABEL_POLICIES:
            raise ValueError(f"unknown_label must be one of {UNKNOWN_LABEL_POLICIES}; got {self.unknown_label!r}")
        if sch is not None and sch.label is not None and sch.label_classes is None:
            raise ValueError("schema: its label column must be categorical (the classes) for a classifier")
        if sch is not None and sch.label_classes is not None:
            schema_classes = np.asarray(sch.label_classes, dtype=object)
            if self.classes is not None and [str(c) for c in check_classes(self.classes)] != list(schema_classes):
                raise ValueError("classes must equal the schema's label categories (in their order), or be left None")
            return schema_classes
        if self.classes is None:
            raise ValueError("classes: give the public list of classes (classes=['no', 'yes']), or a schema whose "
                             "label is categorical; classes read from the data would reveal who is in it (a rare "
                             "label, the number of one-vs-rest models)")
        return check_classes(self.classes)

    def _fit_ovr(self, X: np.ndarray, y: np.ndarray, classes: np.ndarray,
                 sample_weight: np.ndarray | None = None) -> None:
        """K one-vs-rest fits, composed: every record is in all K problems (with its one weight in each)."""
        self._validate_params()
        loss = self._loss()
        K = int(classes.shape[0])
        R = self._fit_norm_bound()
        L, beta = loss.lipschitz * R, loss.smoothness * R * R
        lam, sigma = self._ovr_parameters(L, beta, K)  # before the rows are read
        rows = self._rows(X)
        grad_tol = self._grad_tol()
        sigma_out = default_sigma_out(grad_tol=grad_tol, lam=lam, mu=default_output_mu(float(self.epsilon)))
        scales = self._report_scales(loss, count=K)
        fits, reports = [], []
        weighted = sample_weight is not None or self._uses_weights()
        if weighted:
            self._refuse_before_charging(sample_weight, _class_positions(y, classes), K, rows.shape[0])
        with self._charging(self._own_charges(loss, lam, sigma, K, scales)) as (acc, rng):
            v, cw_used = None, None
            if weighted:
                v, cw_used = self._normalized_weights(sample_weight, _class_positions(y, classes), K, rng,
                                                      rows.shape[0])
            loss_fit = loss if v is None else WeightedLoss(loss)
            for k, g in enumerate(rng.spawn(K)):
                y_k = np.where(y == classes[k], 1.0, -1.0)
                if v is not None:
                    y_k = weighted_labels(y_k, v)
                fit = objpert_fit(rows, y_k, loss_fit, lam=lam, sigma=sigma, rng=g, norm_bound=R, grad_tol=grad_tol,
                                  sigma_out=sigma_out)
                if self.report is not None:
                    from . import report as _report

                    reports.append(_report.privacy_report(fit, rows, y_k, method=self.report,
                                                          rho=float(self.rho) / K, rng=g, **scales))
                fits.append(fit)
        weighting = self._weighting_record(sample_weight is not None, _class_map(classes, cw_used))
        release = multiclass_release(fits, classes=list(classes), delta=float(self.delta),
                                     reports=reports or None, norm_bound=float(self.norm_bound),
                                     report_delta=float(self.report_delta) if scales else None,
                                     fit_intercept=bool(self.fit_intercept), feature_names=self._release_names(),
                                     row_norm=self.row_norm, schema=self._release_schema(), accountant=acc,
                                     seeded=self._seeded(), weighting=weighting)
        del fits
        self._set_fitted(release, lam * self._weight_bound(), sigma * self._weight_bound())
        self.weighting_ = weighting

    def _signed_labels(self, y: ArrayLike, known: bool = False) -> np.ndarray:
        """The labels as -1 / +1 (``classes_[1]`` is +1); each must be a fitted class (``known``: already so)."""
        if _is_dask(y):  # mapped lazily, block by block
            if not known and bool((~y.map_blocks(np.isin, self.classes_, dtype=bool)).any().compute()):
                raise ValueError(_unknown_label_message(self.classes_))
            return y.map_blocks(lambda b: np.where(b == self.classes_[1], 1.0, -1.0), dtype=float)
        y = np.asarray(y)
        if not known and not np.isin(y, self.classes_).all():
            raise ValueError(_unknown_label_message(self.classes_))
        return np.where(y == self.classes_[1], 1.0, -1.0)

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        r"""The linear score :math:`x^\top \text{coef} + \text{intercept}` (post-processing of the release).

        Parameters
        ----------
        X : array_like or DataFrame, shape (n, d)
            Feature rows, or raw records with a schema.

        Returns
        -------
        numpy.ndarray, shape (n,), or (n, K) for a one-vs-rest model of K classes.
        """
        return self._linear(X)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The class with the largest score (two classes: ``classes_[1]`` where the decision function is > 0).

        Parameters
        ----------
        X : array_like or DataFrame, shape (n, d)
            Feature rows, or raw records with a schema.
        """
        scores = self._linear(X)
        if scores.ndim == 2:
            return self.classes_[np.argmax(scores, axis=1)]
        return self.classes_[(scores > 0).astype(int)]

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Logistic probabilities, one column per class (one-vs-rest: the K logistic scores normalized).

        Parameters
        ----------
        X : array_like or DataFrame, shape (n, d)
            Feature rows, or raw records with a schema.
        """
        from scipy.special import expit

        s = self.decision_function(X)
        p = expit(s)
        if s.ndim == 2:
            return p / p.sum(axis=1, keepdims=True)
        return np.column_stack([1.0 - p, p])

    def predict_log_proba(self, X: ArrayLike) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`, computed stably.

        Parameters
        ----------
        X : array_like or DataFrame, shape (n, d)
            Feature rows, or raw records with a schema.
        """
        from scipy.special import log_expit, logsumexp

        s = self.decision_function(X)
        if s.ndim == 2:
            lp = log_expit(s)
            return lp - logsumexp(lp, axis=1, keepdims=True)
        return np.column_stack([log_expit(-s), log_expit(s)])


class ObjPertRegressor(RegressorMixin, ObjPertEstimator):
    r"""Private robust linear regression by objective perturbation, (ε, δ)-DP with the tight accountant.

    The squared loss has an unbounded gradient (no finite guarantee without bounding the
    parameter), so the default is the pseudo-Huber loss ``"huber"`` (:class:`pdpkit.losses.Huber`,
    scale 1: :math:`L = 1`, :math:`\beta = 1`): quadratic for residuals below 1, linear above —
    scale the labels so that typical residuals are of order 1. ``"robust_log"`` (Asi, Duchi &
    Talwar, Example 1; :math:`L = 1`, :math:`\beta = 1/2`) is the alternative. The labels may be
    any real numbers; the guarantee does not depend on them. Attributes as in
    :class:`ObjPertClassifier` (no ``classes_``, no probabilities).

    Parameters
    ----------
    epsilon, delta : float
        Target (ε, δ)-DP guarantee of the model (add/remove one record): ε in (0, 500],
        δ in (0, 1); defaults 1 and 1e-5.
    loss : str or GLMLoss
        ``"huber"`` (default), ``"robust_log"`` or any GLM loss with bounded derivatives (not
        ``"squared"``: its gradient is unbounded).
    lam, sigma : float, optional
        Regularization λ > 0 and objective noise σ > 0. Left ``None``: calibrated for (ε, δ)
        as in :class:`ObjPertClassifier`; both given: nothing is calibrated and the guarantee
        is computed (``privacy_spent()``).
    norm_bound : float
        R > 0, the bound on the Euclidean norm of the feature rows passed to ``fit``; default 1.
    row_norm : {"raise", "clip"}
        What to do with a row beyond ``norm_bound``: a ``ValueError`` (default) or scaling it
        onto the ball.
    fit_intercept : bool
        Fit an intercept (as a constant column of value ``norm_bound``); default ``True``.
    report : {None, "data-independent", "data-dependent", "adaptive"}
        Attach a privacy report (:func:`pdpkit.report.privacy_report`) with this method;
        default ``None``.
    report_epsilon, report_delta : float, optional
        Budget (ε > 0, δ in (0, 1)) of the report's noisy releases, needed unless ``report``
        is ``None`` or ``"data-independent"``.
    rho : float
        Failure probability of each report bound, in (0, 1); default 0.05.
    random_state : int, numpy.random.Generator or None
        Source of the noise. ``None`` (default): OS entropy. A seed makes the release
        reproducible by anyone who knows it — private only while the seed stays secret — and
        the release says so (``release_.seeded``). With an ``accountant`` every fit draws from
        the stream of its place in the ledger (``pdpkit._validation.charged_generator``), so
        two releases of one session never share noise, even with the same seed.
    grad_tol : float
        τ > 0, the public bound on the solver's perturbed-gradient norm, paid for by the
        output noise as in :class:`ObjPertClassifier`; default
        :data:`pdpkit.objpert.DEFAULT_GRAD_TOL`.
    schema : pdpkit.schema.Schema, dict or str, optional
        A public schema (or its JSON file): ``fit`` and ``predict`` then take raw records,
        encoded by the schema; a label column must be numeric with public bounds, mapped onto
        [-1, 1] (predictions are mapped back).
    accountant : pdpkit.accountant.PrivacyAccountant, optional
        The session's accountant: ``fit`` charges the model (and report) before drawing any
        noise and refuses over budget. Shared, not copied, by ``clone``.
    weight_bound : float
        W > 0, the public bound on a record's weight (``sample_weight`` times its class
        weight) that the guarantee assumes: the sensitivities scale with it (module
        docstring); default 1. Without weights every record's weight is 1.
    weight_policy : {"refuse", "clip"}
        A weight above ``weight_bound``: refuse the data set (default; the message names no
        value, row or count) or clip it to the bound (:data:`WEIGHT_POLICIES`). Either is
        stated by ``privacy_spent()``.

    Attributes
    ----------
    coef_, intercept_ : numpy.ndarray, float
        The private model.
    release_ : pdpkit.release.Release
        What may be published.
    report_ : pdpkit.report.PrivacyReport or None
        The privacy report.
    lam_, sigma_ : float
        The λ and σ of the weighted objective (the release holds them divided by ``weight_bound``).
    weighting_ : dict or None
        A weighted fit's public description (weight bound, policy, whether sample weights were
        given, class weights); ``None`` for an unweighted fit.
    """

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-5, *, loss: str | GLMLoss = "huber",
                 lam: float | None = None, sigma: float | None = None, norm_bound: float = 1.0,
                 row_norm: str = "raise", fit_intercept: bool = True, report: str | None = None,
                 report_epsilon: float | None = None, report_delta: float | None = None, rho: float = 0.05,
                 random_state: Any = None, grad_tol: float = DEFAULT_GRAD_TOL,
                 schema: Any = None, accountant: PrivacyAccountant | None = None, weight_bound: float = 1.0,
                 weight_policy: str = "refuse") -> None:
        self.weight_bound = weight_bound
        self.weight_policy = weight_policy
        self.schema = schema
        self.accountant = accountant
        self.epsilon = epsilon
        self.delta = delta
        self.loss = loss
        self.lam = lam
        self.sigma = sigma
        self.norm_bound = norm_bound
        self.row_norm = row_norm
        self.fit_intercept = fit_intercept
        self.report = report
        self.report_epsilon = report_epsilon
        self.report_delta = report_delta
        self.rho = rho
        self.random_state = random_state
        self.grad_tol = grad_tol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> ObjPertRegressor:
        """Fit the private model (and its report) on ``X`` (rows within ``norm_bound``) and real ``y``.

        Parameters
        ----------
        X : array_like or DataFrame, shape (n, d)
            Feature rows, or raw records with ``schema``.
        y : array_like, shape (n,)
            Real labels (with a schema whose label has public bounds: clipped to them and mapped
            onto [-1, 1]).
        sample_weight : array_like, shape (n,), optional
            Each record's weight (finite, >= 0; above ``weight_bound``: ``weight_policy``).
        """
        warn_if_in_model_selection()
        self._validate_params()
        sw = self._checked_sample_weight(sample_weight, _num_rows(y))
        if self.schema is not None:
            sch = schema_object(self.schema)
            if sch.label is not None and sch.label_bounds is None:
                raise ValueError("schema: its label column must be numeric with public bounds for a regressor")
            if sch.label_bounds is not None:
                y = np.asarray(sch.encode_label(y), dtype=float)  # the public bounds mapped onto [-1, 1]
            raw, X = X, self._encode(X)
        X, y = self._validate(X, y, reset=True, y_numeric=True)
        if self.schema is not None:
            record_raw_input(self, raw)
        self._fit_signed(X, self._signed_labels(y), classes=None, sample_weight=sw)
        return self

    def _signed_labels(self, y: ArrayLike) -> np.ndarray:
        if _is_dask(y):
            return y.astype(float)
        return np.asarray(y, dtype=float)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The linear prediction (with a schema: mapped back from [-1, 1] to the label's public bounds).

        Parameters
        ----------
        X : array_like or DataFrame, shape (n, d)
            Feature rows, or raw records with a schema.
        """
        t = self._linear(X)
        if self.schema is not None and schema_object(self.schema).label_bounds is not None:
            return np.asarray(schema_object(self.schema).decode_label(t), dtype=float)
        return t


def check_classes(classes: Any) -> np.ndarray:
    """``classes`` as an array: two or more distinct labels, all strings or all numbers (else an error)."""
    if isinstance(classes, (str, bytes)) or not hasattr(classes, "__len__") or np.ndim(classes) != 1:
        raise TypeError(f"classes must be a sequence of labels (strings or numbers); got {classes!r}")
    values = list(classes)
    strings = all(isinstance(c, (str, np.str_)) for c in values)
    numbers = all(isinstance(c, (int, float, np.integer, np.floating)) and not isinstance(c, (bool, np.bool_))
                  for c in values)
    if not (strings or numbers):
        raise TypeError(f"classes must be all strings or all numbers; got {values!r}")
    if numbers and not all(math.isfinite(float(c)) for c in values):
        raise ValueError(f"classes must be finite numbers; got {values!r}")
    if len(values) < 2 or len(set(values)) != len(values):
        raise ValueError(f"classes must hold two or more distinct labels; got {values!r}")
    return np.asarray(values, dtype=object) if strings else np.asarray(values)


def labels_known(y: Any, classes: np.ndarray, policy: str) -> np.ndarray | None:
    """``None`` when every label is one of ``classes``; else refuse (``policy="raise"``) or the mask of rows to keep."""
    if _is_dask(y):
        if policy == "ignore":
            raise ValueError("unknown_label='ignore' is not available for Dask arrays: filter the records "
                             "whose label is not one of the classes before the fit")
        if bool((~y.map_blocks(np.isin, classes, dtype=bool)).any().compute()):
            raise ValueError(_unknown_label_message(classes))
        return None
    known = np.isin(np.asarray(y), classes)
    if known.all():
        return None
    if policy == "raise":
        raise ValueError(_unknown_label_message(classes))
    return known


def _unknown_label_message(classes: Any) -> str:
    """The refusal of a label outside the public classes: the same text whichever labels, rows and counts."""
    return (f"y has a label that is not one of the classes {[_plain(c) for c in classes]}; pass "
            f"unknown_label='ignore' to leave such records out; {FIND_ROWS}")


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (so a message shows 'a', not np.str_('a'))."""
    return value.item() if isinstance(value, np.generic) else value


_CELL = re.compile(r"(could not convert string to float|invalid literal for \w+\(\) with base \d+): .*")
_SAMPLES = re.compile(r"inconsistent numbers of samples: \[[^\]]*\]")
_ARRAY = re.compile(r"\s*array=.*?(?=\s*Reshape your data)|\s*array=.*", re.DOTALL)


class NonPrivateSelectionWarning(UserWarning):
    """A private estimator is fitted inside scikit-learn's model selection: the choice among fits is not private."""


_SELECTION_WARNED = threading.Event()

#: What :func:`warn_if_in_model_selection` says: the same text whatever the data (no value, count or score).
SELECTION_NOTE = (
    "this private estimator is being fitted inside scikit-learn's model selection (GridSearchCV, "
    "cross_val_score, ...): each fit is private, but choosing among fits by their scores on the records, "
    "or publishing those scores, is a release that no guarantee covers, with or without an accountant. "
    "Choose privately with pdpkit.model_selection (ObjPertClassifierCV, ObjPertRegressorCV: the choice is "
    "paid for), or choose on public data. This warning is shown once per process.")


def warn_if_in_model_selection() -> bool:
    """Warn (:class:`NonPrivateSelectionWarning`, once per process) when called from scikit-learn's model selection.

    Looks up the call stack for a frame of ``sklearn.model_selection`` (``GridSearchCV``,
    ``RandomizedSearchCV``, ``cross_val_score``, ``cross_validate``, … all fit through it,
    in this process or in joblib's workers). The text is :data:`SELECTION_NOTE`: it names no
    value, count or score of the records. Returns whether such a frame was found.
    """
    frame = sys._getframe(1)
    while frame is not None:
        if str(frame.f_globals.get("__name__", "")).startswith("sklearn.model_selection"):
            if not _SELECTION_WARNED.is_set():
                _SELECTION_WARNED.set()
                warnings.warn(SELECTION_NOTE, NonPrivateSelectionWarning, stacklevel=3)
            return True
        frame = frame.f_back
    return False


def private_message(message: str) -> str:
    """scikit-learn's validation message without what it may quote of the data (a cell, the array, the row counts)."""
    out = _CELL.sub(r"\1 (a cell of X is not a number)", message)
    out = _SAMPLES.sub("inconsistent numbers of samples (X and y must have one label per row)", out)
    out = _ARRAY.sub("", out)
    out = re.sub(r"shape=\(\d+, ", "shape=(, ", out)  # the row count left out (scikit-learn's checks read the rest)
    if out == message and "NaN" not in out and "infinity" not in out:
        return out
    return f"{out.rstrip(': .')}; {FIND_ROWS}"


def fit_on_part(est: ObjPertEstimator, X: Any, y: Any, classes: Any, sample_weight: Any = None) -> None:
    """Fit ``est`` on a part of the data; a classifier keeps the full data's public ``classes`` (a part may lack one).

    Used by :mod:`pdpkit.model_selection` for the runs of a private selection. ``sample_weight``:
    the part's weights (checked and bounded as in ``fit``).
    """
    if classes is None:
        est.fit(X, y, sample_weight=sample_weight)
        return
    validate_data(est, X, reset=True)
    est.classes_ = np.asarray(classes)
    est._validate_params()
    est._check_class_weight(est.classes_)
    sw = est._checked_sample_weight(sample_weight, _num_rows(y))
    if len(classes) >= 3:  # one-vs-rest: the K fits of the full data's classes
        est._fit_ovr(np.asarray(X), np.asarray(y), np.asarray(classes), sample_weight=sw)
        return
    est._fit_signed(X, est._signed_labels(y), classes=list(classes), sample_weight=sw)
