r"""Preprocessing that spends no privacy, or is accounted: scikit-learn transformers.

A transformer fitted on the private records keeps statistics of them (means, ranges, the
categories that occur) in the fitted pipeline, and a pipeline that is published publishes
them — outside any guarantee the model states. pdpkit offers two ways round it:

* :class:`SchemaEncoder` maps each record into the unit ball from a public
  :class:`pdpkit.schema.Schema` (bounds and domains known without the data): ``fit``
  learns nothing, so the encoder spends nothing and may be published;
* :class:`PrivateStandardScaler` estimates each feature's mean and scale under public
  bounds by the Gaussian mechanism, calibrated tightly
  (:func:`pdpkit.gaussian.gaussian_sigma`), and charges a
  ``pdpkit.accountant.PrivacyAccountant`` when given one; its output rows are not
  bounded, so the estimator after it needs ``row_norm="clip"``.

:func:`pdpkit.check.leak_heuristics_nonprivate` looks at the rows an estimator would be
given and says when they look like the output of a transformer fitted on the data, when many
rows lie beyond the norm bound, when every row lies deep inside it, or when δ is not small
against the number of records. Whether such a message appears depends on the data, so a fit
does not issue it: the curator runs it (``pdpkit.check.check_nonprivate``, ``pdpkit
check``), and keeps its output to themselves.

Which scikit-learn transformers leak
------------------------------------

Fitted on private records, these keep statistics of them in the fitted object (and in its
pickle), which no pdpkit guarantee covers:

* ``StandardScaler`` (``mean_``, ``var_``, ``scale_``) — use :class:`PrivateStandardScaler`
  (charged to the budget) or :class:`SchemaEncoder` (public bounds, free);
* ``MinMaxScaler`` (``data_min_``, ``data_max_``: two records' values), ``MaxAbsScaler``
  (``max_abs_``), ``RobustScaler`` (``center_``, ``scale_``: quantiles, i.e. records'
  values), ``QuantileTransformer`` (``quantiles_``), ``PowerTransformer`` (``lambdas_``
  and a standardization), ``KBinsDiscretizer`` (``bin_edges_``), ``SplineTransformer``
  (knots from the data's range or quantiles) — use :class:`SchemaEncoder`, or fit the
  scikit-learn transformer on the public bounds only (``MinMaxScaler().fit([[low], [high]])``);
* ``OneHotEncoder`` and ``OrdinalEncoder`` with ``categories="auto"`` (``categories_``: which
  values occur — a rare value reveals that someone has it) — use the schema's public domain
  (:class:`SchemaEncoder`), or ``OneHotEncoder(categories=[public list],
  handle_unknown="ignore")``;
* ``SimpleImputer`` with ``strategy="mean"``, ``"median"`` or ``"most_frequent"``
  (``statistics_``) — use the schema's ``handle_missing="zero"`` (a public constant) or
  ``strategy="constant"``;
* ``LabelEncoder``/``LabelBinarizer`` (``classes_``) and ``TargetEncoder`` (label means) —
  use the schema's label classes;
* ``PCA``, ``TruncatedSVD`` and other decompositions (``components_``, ``mean_``) — no
  private alternative here; do without or privatize them separately.

Safe, because ``fit`` keeps nothing about the records: ``PolynomialFeatures`` (only the
number of features), ``FunctionTransformer`` (stateless), ``Normalizer`` and ``Binarizer``
(one record at a time), ``SplineTransformer`` with explicit knots, and any transformer
fitted on public values only. A transformer that changes the rows' norms (e.g.
``PolynomialFeatures`` after :class:`SchemaEncoder`) needs the estimator's ``norm_bound``
set for its output — for degree-2 features of unit rows, a public bound follows from the
degree — or ``row_norm="clip"``.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validation import (as_finite_array, as_generator, charged_generator, check_int_at_least, scalar_positive,
                          scalar_probability)
from .accountant import Charge
from .gaussian import gaussian_epsilon, gaussian_sigma
from .events import GaussianEvent, Guarantee, GuaranteePart
from .schema import PrivacyLeakWarning, Schema

__all__ = [
    "PrivacyLeakWarning",
    "SchemaEncoder",
    "PrivateStandardScaler",
    "SCHEMA_ENCODER_EXPECTED_FAILED_CHECKS",
    "SCALER_EXPECTED_FAILED_CHECKS",
]

#: The smallest scale :class:`PrivateStandardScaler` reports, as a fraction of half the public range.
_MIN_SCALE_FRACTION = 1e-3


#: scikit-learn checks that :class:`SchemaEncoder` is expected to fail, with the reason. The
#: encoder reads the schema's columns and refuses a table of another width, while the checks
#: feed arrays of 1 to 10 columns: the tests run ``check_estimator`` with a three-feature and
#: a two-feature schema, each expecting to fail the checks of the other width as well as
#: these, so that every other check passes in one of the two runs.
SCHEMA_ENCODER_EXPECTED_FAILED_CHECKS: dict[str, str] = {
    name: "the check feeds arrays whose width is not the schema's: the encoder refuses them by design"
    for name in ("check_n_features_in_after_fitting", "check_estimators_dtypes", "check_dtype_object",
                 "check_fit2d_1sample", "check_fit2d_1feature", "check_positive_only_tag_during_fit")
}

#: scikit-learn checks that :class:`PrivateStandardScaler` is expected to fail (none: with an int
#: ``random_state`` and public ``bounds`` it passes every check).
SCALER_EXPECTED_FAILED_CHECKS: dict[str, str] = {}


# ------------------------------------------------------------------ the public encoder
class SchemaEncoder(TransformerMixin, BaseEstimator):
    r"""Encode records into the ball of radius ``norm_bound`` from a public schema: spends no privacy.

    ``transform(X) = norm_bound * schema.encode(X)`` (:meth:`pdpkit.schema.Schema.encode`):
    numeric features clipped to their public bounds and mapped to :math:`[-1, 1]`,
    categorical features one-hot over their public domain, each row divided by
    :math:`\sqrt{k}` (``k`` feature columns). Every output row has
    :math:`\|x\|_2 \le` ``norm_bound``, so an estimator after it with the same ``norm_bound``
    never clips. ``fit`` reads nothing of the records but the table's width and column names
    (``n_features_in_``, ``feature_names_in_``): the fitted encoder is a function of the
    schema alone and may be published.

    Parameters
    ----------
    schema : pdpkit.schema.Schema
        The public description of the table. A schema drafted from the data
        (``nonprivate_draft=True``) draws a :class:`PrivacyLeakWarning` in ``fit``.
    norm_bound : float
        Radius of the ball the rows are mapped into (the estimator's ``norm_bound``).

    Attributes
    ----------
    n_features_in_ : int
        Number of columns of the table seen in ``fit``.
    feature_names_in_ : numpy.ndarray
        Its column names (a pandas DataFrame only).
    """

    def __init__(self, schema: Schema | None = None, *, norm_bound: float = 1.0) -> None:
        self.schema = schema
        self.norm_bound = norm_bound

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.input_tags.allow_nan = self.schema is not None and getattr(self.schema, "handle_missing", "") == "zero"
        tags.requires_fit = True
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    def _check_schema(self) -> Schema:
        if not isinstance(self.schema, Schema):
            raise TypeError(f"schema must be a pdpkit.schema.Schema; got {type(self.schema).__name__}")
        scalar_positive(self.norm_bound, "norm_bound")
        return self.schema

    def _layout(self, X: Any, *, reset: bool) -> Schema:
        """Check the schema and the table's shape (not its values); record the layout when ``reset``."""
        schema = self._check_schema()
        if hasattr(X, "columns"):
            names = np.asarray([str(c) for c in X.columns], dtype=object)
            width, n = len(names), len(X)
        else:
            from scipy import sparse

            if sparse.issparse(X):
                raise TypeError("sparse input is not supported: SchemaEncoder reads a table (a pandas DataFrame) "
                                "or a dense 2-D array")
            arr = np.asarray(X) if not isinstance(X, np.ndarray) else X
            if arr.ndim != 2:
                raise ValueError(f"Expected a 2-D table or array, got shape {arr.shape}: Reshape your data "
                                 "(one row per record, one column per feature)")
            if arr.dtype.kind == "c":
                raise ValueError("Complex data not supported")
            names, (n, width) = None, arr.shape
        if width == 0:
            raise ValueError(f"X has 0 feature(s) (shape=({n}, 0)) while a minimum of 1 is required.")
        if n == 0:
            raise ValueError(f"X has 0 sample(s) (shape ({n}, {width})); at least one record is required")
        if reset:
            self.n_features_in_ = int(width)
            if names is not None:
                self.feature_names_in_ = names
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        else:
            check_is_fitted(self, "n_features_in_")
            if names is None and width != self.n_features_in_:
                raise ValueError(f"X has {width} features, but SchemaEncoder is expecting {self.n_features_in_} "
                                 "features as input")
        return schema

    def _warn_draft(self, schema: Schema) -> None:
        if schema.nonprivate_draft:
            warnings.warn("the schema is a non-private draft (its bounds and domains were read from the data): "
                          "review it and set nonprivate_draft=False before fitting", PrivacyLeakWarning,
                          stacklevel=3)

    def fit(self, X: Any, y: Any = None) -> SchemaEncoder:
        """Check the schema and the records (as ``transform`` would); learn nothing from them.

        Parameters
        ----------
        X : pandas.DataFrame or array_like, shape (n, k)
            The records (a table read by column name, or an array in the schema's feature order).
        y : ignored
            Accepted for pipelines.
        """
        schema = self._layout(X, reset=True)
        self._warn_draft(schema)
        schema.encode(X)  # refuses what transform would refuse (missing columns, values); keeps nothing
        return self

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> np.ndarray:
        """``fit(X).transform(X)``, encoding once.

        Parameters
        ----------
        X : pandas.DataFrame or array_like, shape (n, k)
            The records.
        y : ignored
            Accepted for pipelines.
        **fit_params
            Ignored.
        """
        schema = self._layout(X, reset=True)
        self._warn_draft(schema)
        return float(self.norm_bound) * schema.encode(X)

    def transform(self, X: Any) -> np.ndarray:
        r"""The encoded rows, each of norm at most ``norm_bound``.

        Parameters
        ----------
        X : pandas.DataFrame or array_like, shape (n, k)
            The records, in the layout seen in ``fit``.

        Returns
        -------
        numpy.ndarray, shape (n, schema.n_encoded)
        """
        schema = self._layout(X, reset=False)
        return float(self.norm_bound) * schema.encode(X)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """The encoded features' names (``"age"``, ``"workclass=Private"``, ...).

        Parameters
        ----------
        input_features : ignored
            Accepted for scikit-learn's API; the names come from the schema.
        """
        check_is_fitted(self, "n_features_in_")
        return np.asarray(self._check_schema().encoded_names, dtype=object)


# ------------------------------------------------------------------ the private scaler
def _scaler_contributions(X: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    r"""Each record's contribution :math:`(1, u, u^2 - 1)` to the released sums, :math:`u \in [-1, 1]^d`."""
    mid, half = (lower + upper) / 2.0, (upper - lower) / 2.0
    u = np.clip((np.clip(X, lower, upper) - mid) / half, -1.0, 1.0)
    return np.hstack([np.ones((X.shape[0], 1)), u, u * u - 1.0])


@functools.lru_cache(maxsize=128)
def _scaler_calibration(eps: float, delta: float, d: int) -> tuple[float, float]:
    """(sigma, the exact epsilon at delta) of the scaler's Gaussian mechanism, sensitivity sqrt(1 + d); cached."""
    sensitivity = math.sqrt(1.0 + d)
    sigma = float(gaussian_sigma(eps, delta, sensitivity=sensitivity))
    return sigma, float(gaussian_epsilon(delta, sensitivity=sensitivity, sigma=sigma))


class PrivateStandardScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    r"""Standardize features with a private mean and scale under public bounds (Gaussian mechanism).

    Each record :math:`x` is clipped to the public box ``bounds`` and mapped to
    :math:`u = (x - m)/w \in [-1, 1]^d` (:math:`m, w` the box's midpoint and half-width).
    One Gaussian mechanism releases the sums
    :math:`\sum_i (1, u_i, u_i^2 - 1) + \mathcal N(0, \sigma^2 I_{2d+1})`. Adding or removing a
    record moves them by :math:`(1, u, u^2 - 1)`, of squared norm
    :math:`1 + \sum_j (u_j^2 + (1 - u_j^2)^2) \le 1 + d` (each coordinate's term
    :math:`s + (1-s)^2 \le 1` for :math:`s = u_j^2 \in [0, 1]`): the L2 sensitivity is
    :math:`\Delta = \sqrt{1 + d}`, the same as for the count and the means alone — the second
    moments cost nothing extra. :math:`\sigma` is the tightest for :math:`(\varepsilon, \delta)`
    (:func:`pdpkit.gaussian.gaussian_sigma`, the analytic Gaussian mechanism of Balle & Wang
    2018; Redberg, Koskela & Wang 2023, eq. B.1), so the release is exactly
    :math:`(\varepsilon, \delta)`-DP for add/remove neighbours, :math:`\mu = \Delta/\sigma`.

    The mean, variance and scale are post-processing: count :math:`\tilde n = \max(1, \cdot)`,
    mean :math:`m + w\,\mathrm{clip}(\tilde S_1/\tilde n, -1, 1)`, second moment clipped to
    :math:`[0, 1]`, scale :math:`w\sqrt{\max(\text{var}, 10^{-6})}`. With an ``accountant``, the
    mechanism is charged (``accountant.charge_gaussian(mu=..., name="PrivateStandardScaler")``)
    before any noise is drawn; a budget that refuses leaves the random state untouched.

    The output is not bounded (a value beyond the box, or a small private scale, gives a large
    standardized value): the estimator after it needs ``row_norm="clip"`` and a ``norm_bound``
    chosen from public knowledge (e.g. :math:`\sqrt d` times a few).

    Parameters
    ----------
    epsilon : float
        ε of the scaler's release (add/remove one record).
    delta : float
        δ of the scaler's release, in (0, 1).
    bounds : tuple of (float or array_like, float or array_like)
        Public bounds ``(lower, upper)`` of each feature (scalars apply to every feature),
        ``lower < upper``: values outside are clipped for the statistics.
    accountant : PrivacyAccountant or None
        A ``pdpkit.accountant.PrivacyAccountant``, charged for the release before noise is
        drawn (it refuses when over budget).
    random_state : int, numpy.random.Generator or None
        Source of the noise; an int reproduces the fit exactly (and lets anyone who knows it
        do so: the statistics are then private only while the seed stays secret). With an
        ``accountant`` the noise comes from the stream of the charge's place in the ledger, so
        it is never another release's noise, whatever seed each was given.

    Attributes
    ----------
    mean_, var_, scale_ : numpy.ndarray, shape (d,)
        The private means, variances and scales (post-processing of the noisy sums).
    n_samples_seen_ : float
        The private (noisy) number of records, at least 1.
    sigma_ : float
        σ of the noise on the sums, in units of the normalized features.
    mu_ : float
        :math:`\Delta/\sigma` of the Gaussian mechanism (what an accountant is charged).
    guarantee_ : pdpkit.events.Guarantee
        The scaler's own :math:`(\varepsilon, \delta)` with one part, ``"PrivateStandardScaler"``.
    n_features_in_ : int
        Number of features seen in ``fit``.
    """

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-5, *, bounds: Any = None, accountant: Any = None,
                 random_state: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.accountant = accountant
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    def privacy_events(self, n_features: int) -> list[Charge]:
        """The ledger entry a fit on ``n_features`` columns charges (one Gaussian mechanism), known before the data.

        Parameters
        ----------
        n_features : int
            The number of columns (public: the table's layout).
        """
        eps = scalar_positive(self.epsilon, "epsilon")
        delta = scalar_probability(self.delta, "delta")
        d = check_int_at_least(n_features, "n_features", 1)
        sigma, _ = _scaler_calibration(eps, delta, d)
        return [Charge(name="PrivateStandardScaler", event=GaussianEvent(mu=math.sqrt(1.0 + d) / sigma),
                       delta=delta)]

    def budget_part(self, n_features: int) -> Callable[[float, float], list[Charge]]:
        """The scaler as a part for :func:`pdpkit.accountant.plan_budget` (:meth:`privacy_events` at (ε_i, δ_i)).

        Parameters
        ----------
        n_features : int
            The number of columns it will standardize.
        """
        params = self.get_params(deep=False)

        def calibrated(eps: float, delta: float) -> list[Charge]:
            return type(self)(**{**params, "epsilon": eps, "delta": delta}).privacy_events(n_features)

        return calibrated

    def _bounds(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        if self.bounds is None:
            raise ValueError("bounds must be given: public (lower, upper) bounds of each feature, known without "
                             "the data (e.g. bounds=(0, 120) for ages)")
        try:
            lower, upper = self.bounds
        except (TypeError, ValueError):
            raise TypeError(f"bounds must be a pair (lower, upper); got {self.bounds!r}") from None
        lower = as_finite_array(lower, "bounds[0]")
        upper = as_finite_array(upper, "bounds[1]")
        for name, b in (("bounds[0]", lower), ("bounds[1]", upper)):
            if b.ndim > 1 or (b.ndim == 1 and b.shape[0] != d):
                raise ValueError(f"{name} must be a number or have one entry per feature ({d}); got shape {b.shape}")
        lower, upper = np.broadcast_to(lower, (d,)).astype(float), np.broadcast_to(upper, (d,)).astype(float)
        bad = ~(lower < upper) | ~np.isfinite(upper - lower)
        if np.any(bad):
            j = int(np.argmax(bad))
            raise ValueError(f"bounds: lower must be smaller than upper for every feature; feature {j} has "
                             f"lower={lower[j]!r}, upper={upper[j]!r}")
        return lower, upper

    def fit(self, X: ArrayLike, y: Any = None) -> PrivateStandardScaler:
        """Release the private count, means and second moments of the records (one Gaussian mechanism).

        Parameters
        ----------
        X : array_like, shape (n, d)
            The private records (numbers; NaN and infinity refused).
        y : ignored
            Accepted for pipelines.
        """
        eps = scalar_positive(self.epsilon, "epsilon")
        delta = scalar_probability(self.delta, "delta")
        X = validate_data(self, X, reset=True, dtype=np.float64)
        d = X.shape[1]
        lower, upper = self._bounds(d)
        sensitivity = math.sqrt(1.0 + d)
        sigma, eps_exact = _scaler_calibration(eps, delta, d)
        mu = sensitivity / sigma
        sums = _scaler_contributions(X, lower, upper).sum(axis=0)
        if self.accountant is not None:
            # checked before any noise is drawn (a refusal releases nothing), recorded with the draw; the
            # noise comes from the stream of the charge's place in the ledger, whatever the seed
            with self.accountant.charging(GaussianEvent(mu=mu), name="PrivateStandardScaler") as position:
                sums = sums + charged_generator(self.random_state, position).normal(0.0, sigma, size=2 * d + 1)
        else:
            sums = sums + as_generator(self.random_state, "random_state").normal(0.0, sigma, size=2 * d + 1)
        n_tilde = max(float(sums[0]), 1.0)
        mean_u = np.clip(sums[1:d + 1] / n_tilde, -1.0, 1.0)
        second_u = np.clip(sums[d + 1:] / n_tilde + 1.0, 0.0, 1.0)
        var_u = np.maximum(second_u - mean_u * mean_u, _MIN_SCALE_FRACTION**2)
        half = (upper - lower) / 2.0
        self.mean_ = (lower + upper) / 2.0 + half * mean_u
        self.var_ = half * half * var_u
        self.scale_ = half * np.sqrt(var_u)
        self.n_samples_seen_ = n_tilde
        self.sigma_ = sigma
        self.mu_ = mu
        part = GuaranteePart(name="PrivateStandardScaler", epsilon=eps_exact, delta=delta, accounting="gaussian")
        self.guarantee_ = Guarantee(epsilon=eps_exact, delta=delta, accounting="gaussian", parts=(part,))
        return self

    def transform(self, X: ArrayLike) -> np.ndarray:
        """Standardized features ``(X - mean_) / scale_`` (post-processing of the private release).

        Parameters
        ----------
        X : array_like, shape (n, d)
            Records with the features seen in ``fit``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return (X - self.mean_) / self.scale_

    def inverse_transform(self, X: ArrayLike) -> np.ndarray:
        """Back to the features' scale: ``X * scale_ + mean_``.

        Parameters
        ----------
        X : array_like, shape (n, d)
            Standardized rows.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X * self.scale_ + self.mean_
