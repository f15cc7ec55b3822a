r"""Private linear regression with the squared loss: OPS and AdaOPS as scikit-learn regressors.

Source: Wang, *Per-instance differential privacy* (document 001), §4: one-posterior sampling
(OPS) releases one draw of :math:`\mathcal N(\hat\theta_\lambda, H^{-1}/\gamma)`,
:math:`H = X^\top X + \lambda I`, the ridge posterior at inverse temperature γ; AdaOPS (Alg 1,
as corrected in :mod:`pdpkit.ops`) first releases a noisy :math:`\lambda_{\min}(X^\top X)` and
chooses λ and γ from it. Both need public bounds on the rows (``norm_bound``) and on the
labels (``label_bounds``, or a schema's numeric label): the squared loss's gradient is then
bounded on the data's domain, and the exact privacy analyses of :mod:`pdpkit.ops` apply.

* :class:`OPSRegressor`: fixed public λ (default :math:`R^2 p\sqrt n/4` for ``n_max`` = n records,
  rows of norm at most R and p coefficients), γ the largest with the exact (ε, δ)-DP of OPS over
  data sets of at most ``n_max`` + 1 records (:func:`pdpkit.ops.ops_gamma_for_dp`), charged as a
  :class:`pdpkit.ops.OPSEvent`.
* :class:`AdaOPSRegressor`: :func:`pdpkit.ops.adaops_fit` with its steps composed exactly
  (:func:`pdpkit.ops.adaops_tight_budget`), charged as a :class:`pdpkit.ops.AdaOPSEvent`.

Rows are checked against (or clipped to) ``norm_bound`` and get an intercept column of value
``norm_bound`` (:func:`pdpkit.estimators.prepare_rows`); labels are mapped from their public
bounds onto :math:`[-1, 1]`, and predictions back. What a fitted estimator keeps is the
release (coefficients) and public parameters (λ and γ; AdaOPS's λ and γ are functions of its
noisy :math:`\lambda_{\min}`, which it releases); the ridge mean is never kept. The number of
records is public here unless ``n_max`` bounds it: with ``n_max=None`` it is ``len(X)``, read
from the data, and the guarantee then holds for data sets of that size (say so when you
publish). ``per_person_epsilon_nonprivate`` gives the curator each record's exact pDP
(:func:`pdpkit.ops.ops_pdp_epsilon`) — a function of the data, never to be published.

A fit writes its release file, ``release_`` (:class:`pdpkit.release.OPSRelease`: the model, its
ledger of events and the guarantee they compose to), and ``from_release`` rebuilds an estimator
that predicts bit for bit as the fitted one. ``per_person_epsilon`` is the publishable
per-person report: each record's pDP bounded over every data set of the class, a function of
that record and the release's public fields alone (:meth:`pdpkit.ops.OPSEvent.record_epsilon`,
:meth:`pdpkit.ops.AdaOPSEvent.record_epsilon`).
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import metadata_routing
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validation import as_generator, charged_generator, check_estimator_budget, check_positive
from .accountant import Charge, PrivacyAccountant, ledger_guarantee
from .estimators import (encoded_rows, prepare_rows, private_message, record_raw_input, schema_object,
                         warn_if_in_model_selection)
from .events import Guarantee, PrivacyEvent
from .release import OPSRelease, ops_release
from .ops import (
    OPSEvent,
    adaops_check_kappa,
    adaops_event,
    adaops_fit,
    adaops_tight_budget,
    ops_fit,
    ops_gamma_for_dp,
    ops_lam_floor,
    ops_pdp_epsilon,
)

__all__ = ["OPSRegressor", "AdaOPSRegressor", "OPSEstimator"]

#: Calibrations depend on public parameters only: cached (seeds, splits and grid searches repeat them).
_gamma_for_dp = functools.lru_cache(maxsize=256)(ops_gamma_for_dp)
_lam_floor = functools.lru_cache(maxsize=256)(ops_lam_floor)
_tight_budget = functools.lru_cache(maxsize=256)(adaops_tight_budget)

_LABEL_BEYOND = ("y has a label outside label_bounds; the guarantee needs every label inside its public bounds: "
                 "widen label_bounds from public knowledge, or pass row_norm='clip' (labels are then clipped)")


class OPSEstimator(RegressorMixin, BaseEstimator):
    """What the two regressors share: bounds, labels, the accountant, prediction and the guarantee.

    Not used directly: use :class:`OPSRegressor` or :class:`AdaOPSRegressor`.
    """

    __metadata_request__score = {"sample_weight": metadata_routing.UNUSED}

    def __getstate__(self) -> dict[str, Any]:
        # a seed in a published pickle would let anyone regenerate the noise: never pickled
        state = dict(super().__getstate__())
        if state.get("random_state") is not None:
            state["random_state"] = None
        return state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags

    # ------------------------------------------------------------ parameters
    def _fit_norm_bound(self) -> float:
        return float(self.norm_bound) * (math.sqrt(2.0) if self.fit_intercept else 1.0)

    def _validate_params(self) -> None:
        check_estimator_budget(self, ("epsilon", "delta", "norm_bound"))
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise TypeError(f"fit_intercept must be True or False; got {self.fit_intercept!r}")
        if self.row_norm not in ("raise", "clip"):
            raise ValueError(f"row_norm must be 'raise' or 'clip'; got {self.row_norm!r}")
        lb = self.label_bounds
        if isinstance(lb, (str, bytes)) or np.ndim(lb) != 1 or len(lb) != 2:
            raise TypeError(f"label_bounds must be a pair (low, high) of numbers; got {lb!r}")
        lo, hi = (float(v) for v in lb)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"label_bounds must be finite with low < high; got {lb!r}")
        if self.n_max is not None and (isinstance(self.n_max, (bool, np.bool_))
                                       or not isinstance(self.n_max, (int, np.integer)) or self.n_max < 1):
            raise ValueError(f"n_max must be None or an integer >= 1 (a public bound on the number of records); "
                             f"got {self.n_max!r}")

    def _schema(self) -> Any:
        return None if getattr(self, "schema", None) is None else schema_object(self.schema)

    def _label_map(self) -> tuple[float, float]:
        """(centre, half-width) mapping the labels' public bounds onto [-1, 1] (a schema has done it already)."""
        if self._schema() is not None:
            return 0.0, 1.0
        lo, hi = (float(v) for v in self.label_bounds)
        return 0.5 * (lo + hi), 0.5 * (hi - lo)

    def _encode(self, X: Any) -> Any:
        sch = self._schema()
        return X if sch is None else np.asarray(sch.encode(X), dtype=float) * float(self.norm_bound)

    def _prepare(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        """The fitted rows (bounded, intercept column) and the labels on [-1, 1]."""
        warn_if_in_model_selection()
        self._validate_params()
        sch = self._schema()
        raw = X
        if sch is not None:
            if sch.label_bounds is None:
                raise ValueError("schema: its label column must be numeric with public bounds for a regressor")
            y = np.asarray(sch.encode_label(y), dtype=float)  # clipped to the public bounds, onto [-1, 1]
            X = self._encode(X)
        try:
            X, y = validate_data(self, X, y, reset=True, y_numeric=True)
        except (TypeError, ValueError) as exc:  # scikit-learn's text may quote a cell or count the rows
            raise type(exc)(private_message(str(exc))) from None
        if sch is not None:  # the estimator's input: the raw table's columns
            record_raw_input(self, raw)
        y = np.asarray(y, dtype=float)
        if self.n_max is not None and X.shape[0] > int(self.n_max):
            raise ValueError("X has more records than n_max: n_max must be a public bound on the number of "
                             "records")
        c, h = self._label_map()
        t = (y - c) / h
        if np.any(np.abs(t) > 1.0 + 1e-12):
            if self.row_norm == "raise":
                raise ValueError(_LABEL_BEYOND)
        t = np.clip(t, -1.0, 1.0)
        rows = prepare_rows(X, norm_bound=float(self.norm_bound), row_norm=self.row_norm,
                            fit_intercept=bool(self.fit_intercept))
        return rows, t

    def _n_public(self, n: int) -> int:
        return int(self.n_max) if self.n_max is not None else int(n)

    @contextlib.contextmanager
    def _charging(self, charge: Charge) -> Iterator[np.random.Generator]:
        """Charge the accountant (before any noise) and yield the noise generator (its ledger position's stream)."""
        acc = getattr(self, "accountant", None)
        if acc is None:
            yield as_generator(self.random_state, "random_state")
            return
        if not isinstance(acc, PrivacyAccountant):
            raise TypeError(f"accountant must be a pdpkit.accountant.PrivacyAccountant; got {type(acc).__name__}")
        with acc.charging(charge) as position:
            yield charged_generator(self.random_state, position)

    def _charge(self, event: PrivacyEvent) -> Charge:
        return Charge(name=f"{type(self).__name__} model", event=event, delta=float(self.delta))

    def _set_fitted(self, release: OPSRelease) -> None:
        self.release_ = release
        self.coef_ = np.array(release.coef)
        self.intercept_ = float(release.intercept)
        self.lam_ = float(release.lam)
        self.gamma_ = float(release.gamma)
        self.event_ = release.model_charge().event

    def _release(self, theta: np.ndarray, charge: Charge, n_public: int, **extra: Any) -> OPSRelease:
        """The release of this fit (:func:`pdpkit.release.ops_release`): the model, its ledger and guarantee."""
        sch = self._schema()
        names = getattr(self, "feature_names_in_", None)
        if sch is not None:
            names = list(sch.encoded_names)
        return ops_release(theta, charge, n_max=n_public, norm_bound=float(self.norm_bound),
                           fit_intercept=bool(self.fit_intercept),
                           label_bounds=None if sch is not None else tuple(float(v) for v in self.label_bounds),
                           row_norm=self.row_norm, feature_names=None if names is None else [str(v) for v in names],
                           schema=sch, accountant=getattr(self, "accountant", None),
                           seeded=self.random_state is not None, **extra)

    def _n_coefficients(self, X: Any) -> int:
        sch = self._schema()
        d = len(sch.encoded_names) if sch is not None else int(np.shape(X)[1])
        return d + int(bool(self.fit_intercept))

    @classmethod
    def from_release(cls, release: OPSRelease) -> OPSEstimator:
        """A fitted estimator that predicts as ``release`` (bit-identical), with its parameters, schema and event.

        ``OPSRegressor.from_release`` needs an OPS release, ``AdaOPSRegressor.from_release`` an
        AdaOPS one; ``OPSEstimator.from_release`` returns whichever the release is. ``epsilon``
        and ``delta`` are the model's own entry's (its ε at its δ).

        Parameters
        ----------
        release : pdpkit.release.OPSRelease
            The release (:meth:`pdpkit.release.OPSRelease.from_json` reads a file).
        """
        if not isinstance(release, OPSRelease):
            raise TypeError(f"release must be a pdpkit.release.OPSRelease; got {type(release).__name__}")
        want = AdaOPSRegressor if release.mechanism == "adaops" else OPSRegressor
        if not issubclass(want, cls):
            raise TypeError(f"this release is {release.mechanism!r}: rebuild it with {want.__name__}.from_release")
        charge = release.model_charge()
        kw: dict[str, Any] = dict(epsilon=float(charge.epsilon()), delta=float(charge.delta),
                                  norm_bound=release.norm_bound, n_max=release.n_max, row_norm=release.row_norm,
                                  fit_intercept=release.fit_intercept, schema=release.schema_object)
        if release.label_bounds is not None:
            kw["label_bounds"] = tuple(release.label_bounds)
        if want is AdaOPSRegressor:
            est: OPSEstimator = AdaOPSRegressor(kappa=release.kappa, **kw)
            est.kappa_ = float(release.kappa)
            est.lam_min_noisy_ = float(release.lam_min_noisy)
        else:
            est = OPSRegressor(lam=release.lam, **kw)
        if release.schema_object is None:
            est.n_features_in_ = int(release.coef.shape[0])
            if release.feature_names is not None:
                est.feature_names_in_ = np.asarray(release.feature_names, dtype=object)
        else:  # the raw table's columns the schema reads
            names = [c.name for c in release.schema_object.columns if c.role == "feature"]
            est.n_features_in_ = len(names)
            est.feature_names_in_ = np.asarray(names, dtype=object)
        est._set_fitted(release)
        return est

    # ------------------------------------------------------------ prediction
    def predict(self, X: ArrayLike) -> np.ndarray:
        """The linear prediction on the label's scale (a row beyond ``norm_bound`` refused, or clipped with ``"clip"``).

        Parameters
        ----------
        X : array_like or DataFrame, shape (n, d)
            Feature rows, or raw records with a schema.
        """
        check_is_fitted(self)
        sch = self._schema()
        if sch is None:
            X = validate_data(self, X, reset=False)
        else:
            X = encoded_rows(sch, X, norm_bound=float(self.norm_bound))
        # C order: a DataFrame's or an array's rows give the same products (and the release's predict)
        X = np.ascontiguousarray(prepare_rows(X, norm_bound=float(self.norm_bound), row_norm=self.row_norm))
        t = X @ self.coef_ + self.intercept_
        sch = self._schema()
        return t if sch is None else np.asarray(sch.decode_label(t), dtype=float)

    # ------------------------------------------------------------ privacy
    def privacy_spent(self) -> Guarantee:
        r"""The :math:`(\varepsilon, \delta)` guarantee of this fit's release (its event alone, exactly).

        With an ``accountant``, ``accountant.spent()`` is the session's total.
        """
        check_is_fitted(self)
        return ledger_guarantee((self._charge(self.event_),), float(self.delta))

    def per_person_epsilon(self, X: ArrayLike, y: ArrayLike) -> np.ndarray:
        r"""Each record's pDP bound at the model's δ, publishable: :meth:`pdpkit.release.OPSRelease.per_person_epsilon`.

        A function of the record and the release's public fields alone (its bound over every
        data set of the class), for members and non-members alike: a person may be told it.

        Parameters
        ----------
        X : array_like or DataFrame
            Records (raw records with a schema).
        y : array_like
            Their labels, on the label's scale.
        """
        check_is_fitted(self)
        return self.release_.per_person_epsilon(X, y)

    def privacy_events(self, X: ArrayLike) -> list[Charge]:
        """The ledger entry a fit on ``X`` would charge, known before any noise is drawn.

        Reads only the shape of ``X`` (the number of coefficients, and the number of records
        when ``n_max`` is ``None``: then treated as public) and the public parameters.

        Parameters
        ----------
        X : array_like or DataFrame, shape (n, d)
            The rows (raw records with a schema) the fit would read.
        """
        self._validate_params()
        return [self._charge(self._planned_event(self._n_public(int(np.shape(X)[0])), self._n_coefficients(X)))]

    def per_person_epsilon_nonprivate(self, X: ArrayLike, y: ArrayLike) -> np.ndarray:
        r"""**Not private.** Each training record's exact ε-pDP at ``delta`` against this fit's λ and γ.

        Wang 2019, Def 2.2 and Thm 4.1 made exact (:func:`pdpkit.ops.ops_pdp_epsilon`, both
        orders, the record as a member): a function of the data, for the curator's analysis —
        never publish it. ``X`` and ``y`` must be the data the model was fitted on.

        Parameters
        ----------
        X : array_like or DataFrame
            The training rows (raw records with a schema).
        y : array_like
            Their labels.
        """
        check_is_fitted(self)
        rows, t = self._prepare_again(X, y)
        return np.asarray(ops_pdp_epsilon(rows, t, rows, t, lam=self.lam_, gamma=self.gamma_, delta=float(self.delta),
                                          member=np.ones(rows.shape[0], dtype=bool)), dtype=float)

    def _prepare_again(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        keys = ("n_features_in_", "feature_names_in_")
        saved = {k: getattr(self, k) for k in keys if hasattr(self, k)}
        try:
            return self._prepare(X, y)
        finally:  # the fitted attributes as they were (none added, none changed)
            for k in keys:
                if k in saved:
                    setattr(self, k, saved[k])
                elif hasattr(self, k):
                    delattr(self, k)



class OPSRegressor(OPSEstimator):
    r"""Private linear regression by one-posterior sampling (Wang 2019, §4), (ε, δ)-DP exactly.

    ``fit`` draws :math:`\tilde\theta \sim \mathcal N(\hat\theta_\lambda, H^{-1}/\gamma)` on the
    bounded rows (intercept column of value ``norm_bound``) and the labels mapped onto
    :math:`[-1, 1]` from ``label_bounds``. γ is the largest with OPS's exact (ε, δ)-DP over data
    sets of at most ``n_max`` + 1 records, rows of norm at most ``norm_bound`` (√2 ``norm_bound``
    with the intercept) and labels in their bounds, at the fixed public λ
    (:func:`pdpkit.ops.ops_dp_epsilon`: the worst leverage and residual of that class, both
    orders of every pair); the guarantee is that event's exact profile (:class:`pdpkit.ops.OPSEvent`).
    A λ too small for (ε, δ) at any γ is refused before anything is drawn.

    Parameters
    ----------
    epsilon, delta : float
        The model's (ε, δ)-DP target (add/remove one record); defaults 1 and 1e-5.
    lam : float, optional
        The ridge λ > 0 (public). Default: :math:`R^2 p \sqrt n / 4`, n = ``n_max`` (or the
        number of records), R the fitted rows' norm bound, p the number of coefficients, and at
        least twice the smallest λ at which (ε, δ) can be met (:func:`pdpkit.ops.ops_lam_floor`) — a
        data-independent rule that was within 10% of the best λ of a grid on three data sets
        (n from 1,300 to 16,000, p from 4 to 12, ε from 0.5 to 2); tune it on public data.
    norm_bound : float
        Public bound on the feature rows' Euclidean norm; default 1.
    label_bounds : (float, float)
        Public bounds (low, high) on the labels; default (-1, 1). Ignored with a schema (its
        label's bounds are used).
    n_max : int, optional
        Public bound on the number of records. ``None``: the number of records, which is then
        treated as public.
    row_norm : {"raise", "clip"}
        A row beyond ``norm_bound`` or a label beyond its bounds: a ``ValueError`` (default) or
        clipped.
    fit_intercept : bool
        Fit an intercept (a constant column of value ``norm_bound``); default ``True``.
    random_state : int, numpy.random.Generator or None
        The noise's source (``None``: OS entropy). With an ``accountant``, the stream of the
        charge's ledger position.
    schema : pdpkit.schema.Schema, dict or str, optional
        A public schema: ``fit`` and ``predict`` take raw records; its label must be numeric
        with public bounds.
    accountant : pdpkit.accountant.PrivacyAccountant, optional
        Charged (:class:`pdpkit.ops.OPSEvent`) before any noise is drawn; over budget, ``fit``
        refuses.

    Attributes
    ----------
    coef_, intercept_ : numpy.ndarray, float
        The released model on the label's scale.
    lam_, gamma_ : float
        The public λ and γ used.
    event_ : pdpkit.ops.OPSEvent
        What was released.
    release_ : pdpkit.release.OPSRelease
        What may be published (``release_.to_json()``).
    """

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-5, *, lam: float | None = None,
                 norm_bound: float = 1.0, label_bounds: tuple[float, float] = (-1.0, 1.0), n_max: int | None = None,
                 row_norm: str = "raise", fit_intercept: bool = True, random_state: Any = None,
                 schema: Any = None, accountant: PrivacyAccountant | None = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.lam = lam
        self.norm_bound = norm_bound
        self.label_bounds = label_bounds
        self.n_max = n_max
        self.row_norm = row_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.schema = schema
        self.accountant = accountant

    def _event(self, n_public: int, p: int) -> OPSEvent:
        R = self._fit_norm_bound()
        if self.lam is not None:
            if isinstance(self.lam, (str, bytes, bool, np.bool_)) or np.ndim(self.lam) != 0:
                raise TypeError(f"lam must be a real number; got {self.lam!r}")
            lam = float(check_positive(self.lam, "lam"))
        else:
            lam = max(R * R * p * math.sqrt(n_public) / 4.0,
                      2.0 * _lam_floor(float(self.epsilon), float(self.delta), x_bound=R))
        gamma = _gamma_for_dp(float(self.epsilon), float(self.delta), n=n_public + 1, lam=lam, x_bound=R, y_bound=1.0)
        return OPSEvent(n=n_public + 1, lam=lam, gamma=gamma, x_bound=R, y_bound=1.0)

    def fit(self, X: ArrayLike, y: ArrayLike) -> OPSRegressor:
        """Draw the private model from the bounded rows ``X`` and labels ``y``.

        Parameters
        ----------
        X : array_like or DataFrame, shape (n, d)
            Feature rows (norm at most ``norm_bound``), or raw records with a schema.
        y : array_like, shape (n,)
            Real labels within ``label_bounds`` (with a schema: its label's bounds).
        """
        rows, t = self._prepare(X, y)
        n_public = self._n_public(rows.shape[0])
        event = self._event(n_public, rows.shape[1])
        charge = self._charge(event)
        with self._charging(charge) as rng:
            theta = ops_fit(rows, t, lam=event.lam, gamma=event.gamma, rng=rng).theta
        self._set_fitted(self._release(theta, charge, n_public, lam=event.lam, gamma=event.gamma))
        return self

    def _planned_event(self, n_public: int, p: int) -> OPSEvent:
        return self._event(n_public, p)


class AdaOPSRegressor(OPSEstimator):
    r"""Private linear regression by AdaOPS (Wang 2019, Alg 1 and Prop 4.4, corrected), (ε, δ)-DP.

    The bounded rows are scaled into the unit ball (divided by their norm bound R, √2
    ``norm_bound`` with the intercept) and the labels mapped onto :math:`[-1, 1]`:
    :func:`pdpkit.ops.adaops_fit` releases a noisy :math:`\lambda_{\min}(X^\top X)`, sets
    λ so that every leverage is at most :math:`d\kappa/n_{\max}` with probability
    :math:`1 - \delta/4`, and draws an OPS sample with the largest γ that is
    :math:`(\varepsilon_{\rm ops}, \delta/2)`-DP on that class. The two steps are composed
    exactly (:class:`pdpkit.ops.AdaOPSEvent`), which leaves the OPS step more than the source's
    ε/2 (:func:`pdpkit.ops.adaops_tight_budget`). ``kappa`` too large for the budget is refused
    before anything is drawn. ``lam_`` and ``gamma_`` are stated for the bounded rows
    (OPS on :math:`X/R` with (λ, γ) is OPS on X with (λR², γ)).

    Parameters
    ----------
    epsilon, delta : float
        The model's (ε, δ)-DP target; defaults 1 and 1e-5.
    kappa : float, optional
        The target bound on the regularized problem's condition (> 0). Default: half the
        largest κ at which the budget can be met for ``n_max`` records and p coefficients
        (:func:`pdpkit.ops.ops_lam_floor`), and at most 1 — data-independent.
    norm_bound, label_bounds, n_max, row_norm, fit_intercept, random_state, schema, accountant
        As in :class:`OPSRegressor`.

    Attributes
    ----------
    coef_, intercept_ : numpy.ndarray, float
        The released model on the label's scale.
    lam_, gamma_ : float
        λ and γ used (functions of the released noisy λ_min).
    lam_min_noisy_ : float
        The released noisy :math:`\lambda_{\min}` of the scaled rows.
    kappa_ : float
        The κ used.
    event_ : pdpkit.ops.AdaOPSEvent
        What was released.
    release_ : pdpkit.release.OPSRelease
        What may be published (``release_.to_json()``).
    """

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-5, *, kappa: float | None = None,
                 norm_bound: float = 1.0,
                 label_bounds: tuple[float, float] = (-1.0, 1.0), n_max: int | None = None, row_norm: str = "raise",
                 fit_intercept: bool = True, random_state: Any = None, schema: Any = None,
                 accountant: PrivacyAccountant | None = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.kappa = kappa
        self.norm_bound = norm_bound
        self.label_bounds = label_bounds
        self.n_max = n_max
        self.row_norm = row_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.schema = schema
        self.accountant = accountant

    def fit(self, X: ArrayLike, y: ArrayLike) -> AdaOPSRegressor:
        """Draw the private model from the bounded rows ``X`` and labels ``y``.

        Parameters
        ----------
        X : array_like or DataFrame, shape (n, d)
            Feature rows (norm at most ``norm_bound``), or raw records with a schema.
        y : array_like, shape (n,)
            Real labels within ``label_bounds`` (with a schema: its label's bounds).
        """
        self._check_kappa_param()
        rows, t = self._prepare(X, y)
        R = self._fit_norm_bound()
        eps, delta = float(self.epsilon), float(self.delta)
        budget = _tight_budget(eps, delta)
        n_public = self._n_public(rows.shape[0])
        p = rows.shape[1]
        kappa = self._kappa(n_public, p)
        # kappa's feasibility is data-independent: checked before the charge (adaops_fit checks it
        # again, inside the charge, where a refusal would still be recorded)
        event = self._planned_event(n_public, p)
        charge = self._charge(event)
        with self._charging(charge) as rng:
            res = adaops_fit(rows / R, t, eps, delta, kappa=kappa, n_public=n_public, rng=rng, budget=budget)
        self.kappa_ = kappa
        # OPS on the rows X/R with (λ, γ) is OPS on X with (λ R², γ): θ = θ_scaled / R
        self._set_fitted(self._release(np.asarray(res.theta) / R, charge, n_public, lam=res.lam * R * R,
                                       gamma=res.gamma, kappa=kappa, lam_min_noisy=float(res.lam_min_noisy)))
        self.lam_min_noisy_ = float(res.lam_min_noisy)
        return self

    def _check_kappa_param(self) -> None:
        if self.kappa is not None:
            if isinstance(self.kappa, (str, bytes, bool, np.bool_)) or np.ndim(self.kappa) != 0:
                raise TypeError(f"kappa must be a real number or None; got {self.kappa!r}")
            check_positive(self.kappa, "kappa")

    def _kappa(self, n_public: int, p: int) -> float:
        if self.kappa is None:  # half the largest feasible kappa, at most 1 (data-independent)
            budget = _tight_budget(float(self.epsilon), float(self.delta))
            return min(1.0, 0.5 * n_public / (p * _lam_floor(budget.eps_ops, budget.delta_ops)))
        return float(self.kappa)

    def _planned_event(self, n_public: int, p: int) -> PrivacyEvent:
        """The AdaOPS event of this budget, after κ's data-independent feasibility check."""
        self._check_kappa_param()
        eps, delta = float(self.epsilon), float(self.delta)
        budget = _tight_budget(eps, delta)
        adaops_check_kappa(kappa=self._kappa(n_public, p), n_public=n_public, d=p, budget=budget)
        return adaops_event(eps, delta, budget=budget)


