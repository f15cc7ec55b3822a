r"""Private model selection: ObjPert estimators that choose λ privately, paying for the choice.

:class:`ObjPertClassifierCV` and :class:`ObjPertRegressorCV` choose the regularization λ (and
with it the noise σ) of objective perturbation from a public grid by repeat and select
(Papernot & Steinke 2022; :mod:`pdpkit.selection`): each record goes to a training part or a
validation part by its own coin (``validation_fraction``, from the secret random state);
a random number of runs each trains a uniformly drawn candidate on the training part and
scores it on the validation part through a Gaussian mechanism; the best run's model is
kept, and nothing else — not the number of runs, not the other models, not the split.

The guarantee, ``privacy_spent()``, is the **selection's total** (Rényi DP of repeat and
select, :func:`pdpkit.selection.selection_epsilon`, converted to (ε, δ)); the calibration
(:func:`pdpkit.selection.calibrate_selection`) sets one per-run scale so that this total is
at most (``epsilon``, ``delta``). The chosen model is one of the runs, so the guarantee the
selected model would state on its own (one fit) is **not** its guarantee: the release kept
here (``release_``) carries no guarantee of its own, and the selection's parameters are in
``selection_`` (a :class:`pdpkit.events.RepeatAndSelectEvent`) for an accountant or a release
file to recompute.

Default law of the number of runs: logarithmic (the truncated negative binomial law with
shape 0 of Papernot & Steinke 2022) with mean the grid size — one run per candidate on
average. The selection theorem charges that law least (its :math:`(1 + \eta)` factor is 1,
and the mean enters only as :math:`\log(\text{mean})/(\lambda - 1)`). Source 002, §5,
used a Poisson law whose mean makes the number of runs exceed the grid size with
probability 0.9; that rule costs more. For the default grid at (1, 1e-6) with an intercept
on unit rows, each run is as private as one fit at ε ≈ 0.55 under the default law, 0.35
under the geometric law and 0.29 under the Poisson law with the 0.9 rule (σ about twice the
default law's), and on breast_cancer the selected model is then less accurate
(``benchmarks/bench_selection.py``).
"""

from __future__ import annotations

import contextlib
import functools
import math
import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import metadata_routing
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validation import as_generator, charged_generator, check_estimator_budget, check_positive
from .estimators import (
    EXPECTED_FAILED_CHECKS,
    UNKNOWN_LABEL_POLICIES,
    check_weight_params,
    checked_sample_weight,
    ObjPertClassifier,
    ObjPertRegressor,
    check_classes,
    default_output_mu,
    fit_on_part,
    labels_known,
    prepare_rows,
    encoded_rows,
    private_message,
    record_raw_input,
    schema_object,
)
from .losses import get_loss
from .objpert import DEFAULT_GRAD_TOL, output_mu
from .accountant import Charge
from .events import Guarantee, GuaranteePart
from .release import weighting_statement
from .selection import calibrate_selection, repeat_and_select

__all__ = ["ObjPertClassifierCV", "ObjPertRegressorCV", "ObjPertCVEstimator", "DEFAULT_LAMS", "SELECTION_ACCOUNTING",
           "CV_EXPECTED_FAILED_CHECKS",
           "default_lam", "selection_advice", "SelectionAdviceWarning", "SELECTION_PAYS_N", "SELECTION_PAYS_EPSILON",
           "SELECTION_PAYS_RESULT"]

#: The default public grid of λ (the objective sums the losses, so λ is on the scale of a count).
DEFAULT_LAMS: tuple[float, ...] = (1.0, 3.0, 10.0, 30.0, 100.0)

#: scikit-learn checks the CV estimators are expected to fail (``expected_failed_checks`` of
#: ``check_estimator``), with the reason: the estimators' (:data:`pdpkit.estimators.EXPECTED_FAILED_CHECKS`),
#: and the equivalence of a weight k with k copies of a record.
CV_EXPECTED_FAILED_CHECKS: dict[str, str] = {
    **EXPECTED_FAILED_CHECKS,
    "check_sample_weight_equivalence_on_dense_data": (
        "each record goes to the training or the validation part by its own secret coin and the validation score "
        "counts records (sensitivity 1): k copies of a record take k coins and count k times, one record of weight "
        "k takes one coin and counts once, so the two selections differ in law"),
}

#: The accounting named in the guarantee of a selection.
SELECTION_ACCOUNTING = "repeat-and-select-rdp"


def default_lam(epsilon: float, delta: float, *, norm_bound: float = 1.0, fit_intercept: bool = True) -> float:
    """The λ that :class:`~pdpkit.estimators.ObjPertClassifier` calibrates at (``epsilon``, ``delta``) by default.

    A function of public parameters only (the budget, the row bound, the intercept): the
    centre of a public grid "around the default" (:func:`pdpkit.experiments.using_pdpkit.selection_pays`).

    Parameters
    ----------
    epsilon, delta : float
        The fit's budget.
    norm_bound : float
        Bound R on the Euclidean norm of the feature rows.
    fit_intercept : bool
        Whether an intercept is fitted (a constant column of value R).
    """
    est = ObjPertClassifier(float(epsilon), float(delta), norm_bound=norm_bound, fit_intercept=fit_intercept,
                            classes=[0, 1])
    return float(est.privacy_events()[0].event.lam)


#: The largest public number of records at which private selection of λ was measured to pay (see
#: :func:`selection_advice`), and the largest ε.
SELECTION_PAYS_N = 1000
SELECTION_PAYS_EPSILON = 1.0
#: Where the measurement behind :func:`selection_advice` is stored.
SELECTION_PAYS_RESULT = "results/using_pdpkit/selection_pays.json"


class SelectionAdviceWarning(UserWarning):
    """Private selection of λ is expected to cost more accuracy than it gains (:func:`selection_advice`)."""


def selection_advice(epsilon: float, *, n_records_public: int | None = None) -> str | None:
    r"""Whether private selection of λ is expected to lose accuracy against the default λ; the reason, or ``None``.

    Measured (``selection_pays`` of the chapter *Using pdpkit*, stored in
    :data:`SELECTION_PAYS_RESULT`): held-out accuracy of :class:`ObjPertClassifierCV` (default
    grid, and a grid around the default λ) against :class:`pdpkit.estimators.ObjPertClassifier`
    with its default calibrated λ at the same total (ε, δ = 1e-6), on synthetic data, credit
    default and Adult, n ∈ {500, 2000, 8000, 20000}, ε ∈ {0.5, 1, 2, 4}, 10 paired seeds.
    Averaged over the three data sets, selection lost at every (n, ε); it paid on one data set
    (Adult, +3.3 ± 1.1 points at n = 500, ε = 0.5; +1.4 ± 0.8 at ε = 1) only with
    n ≤ :data:`SELECTION_PAYS_N` and ε ≤ :data:`SELECTION_PAYS_EPSILON`. The default λ is
    already close to the best of the grid (a free, non-private choice gains less than a point
    from n = 8000), while the selection pays with noisier runs and a validation part.

    The advice reads only public inputs: ``epsilon`` and, if given, ``n_records_public`` — a
    public count or estimate of the training records (a published total, a census), never
    the data's own size, which is private under add/remove neighbours. Without it, the advice
    is ``None`` only at ε ≤ :data:`SELECTION_PAYS_EPSILON`, where small data sets may gain.

    Parameters
    ----------
    epsilon : float
        The selection's total ε.
    n_records_public : int, optional
        A public number of training records.

    Returns
    -------
    str or None
        The advice (public words and the measured figures), or ``None`` when selection may pay.
    """
    eps = float(check_positive(epsilon, "epsilon"))
    if n_records_public is not None:
        if isinstance(n_records_public, bool) or not isinstance(n_records_public, (int, np.integer)) \
                or n_records_public < 1:
            raise TypeError(f"n_records_public must be a positive int (a public count) or None; got "
                            f"{n_records_public!r}")
    small = n_records_public is not None and int(n_records_public) <= SELECTION_PAYS_N
    if eps <= SELECTION_PAYS_EPSILON and (n_records_public is None or small):
        return None
    where = (f"at epsilon={eps:g}" if eps > SELECTION_PAYS_EPSILON
             else f"at epsilon={eps:g} with n_records_public={int(n_records_public)}")
    return (f"private selection of lam {where} is expected to cost more accuracy than it gains: against "
            "ObjPertClassifier's default calibrated lam at the same (epsilon, delta), it lost on average over "
            "three data sets at every measured size (500 to 20,000 records) and budget, and paid on one of them "
            f"only with at most {SELECTION_PAYS_N} records and epsilon <= {SELECTION_PAYS_EPSILON:g} "
            f"({SELECTION_PAYS_RESULT}). Fit ObjPertClassifier instead, or keep this selection: the warning "
            "reads only public parameters and spends nothing")


#: Calibration depends on public parameters only: cached (seeds and grid searches repeat them).
_calibrate = functools.lru_cache(maxsize=64)(calibrate_selection)


class ObjPertCVEstimator(BaseEstimator):
    """What the two CV estimators share: the calibration, the split, the selection and the guarantee.

    Not used directly: use :class:`ObjPertClassifierCV` or :class:`ObjPertRegressorCV`.
    """

    __metadata_request__score = {"sample_weight": metadata_routing.UNUSED}
    _estimator_class: type = ObjPertClassifier
    _loss_name = "logistic"

    # ------------------------------------------------------------ parameters
    def _validate_params(self) -> None:
        eps = check_estimator_budget(self, ("epsilon", "delta", "norm_bound", "validation_fraction", "score_share",
                                            "select_mean", "select_shape", "grad_tol"))
        check_positive(self.score_share, "score_share")
        check_positive(self.grad_tol, "grad_tol")
        if not 0.0 < float(self.validation_fraction) < 1.0:
            raise ValueError(f"validation_fraction must lie in (0, 1); got {self.validation_fraction!r}")
        if self.row_norm not in ("raise", "clip"):
            raise ValueError(f"row_norm must be 'raise' or 'clip'; got {self.row_norm!r}")
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise TypeError(f"fit_intercept must be True or False; got {self.fit_intercept!r}")
        lams = self.lams
        if isinstance(lams, (str, bytes)) or np.ndim(lams) != 1 or len(lams) == 0:
            raise TypeError("lams must be a non-empty sequence of positive numbers")
        for v in lams:
            check_positive(v, "lams")
        check_weight_params(weight_bound=self.weight_bound, weight_policy=self.weight_policy)

    def _weights(self, sample_weight: Any, n: int) -> np.ndarray | None:
        """``sample_weight`` checked, refused or clipped above ``weight_bound`` by the public policy (before any
        charge); ``None`` without weights."""
        return checked_sample_weight(sample_weight, n=n, weight_bound=float(self.weight_bound),
                                     weight_policy=self.weight_policy)

    def _weighting(self, weighted: bool) -> dict[str, Any] | None:
        """The public description of a weighted selection (as an estimator's ``weighting_``); ``None`` without."""
        W = float(self.weight_bound)
        if not weighted and W == 1.0:
            return None
        return {"weight_bound": W, "weight_policy": self.weight_policy, "sample_weight": bool(weighted),
                "class_weight": None, "class_weight_source": None}

    def _law(self) -> tuple[float, float]:
        shape = float(self.select_shape)
        mean = self.select_mean
        if mean is None:
            mean = max(float(len(self.lams)), 1.5)
        return float(mean), shape

    def _fit_norm_bound(self) -> float:
        return float(self.norm_bound) * (math.sqrt(2.0) if self.fit_intercept else 1.0)

    # ------------------------------------------------------------ the selection
    def _selection_calibration(self, count: int) -> Any:
        """The selection's calibration (public parameters only): ``count`` fits per run."""
        loss = get_loss(self._loss_name)
        R = self._fit_norm_bound()
        mean, shape = self._law()
        eps = float(self.epsilon)
        return _calibrate(eps, float(self.delta), L=loss.lipschitz * R, beta=loss.smoothness * R * R,
                          lams=tuple(float(v) for v in self.lams), mean=mean, shape=shape,
                          mu_out=default_output_mu(eps), score_share=float(self.score_share), count=count)

    def _fits_per_run(self) -> int:
        return 1

    def privacy_events(self) -> list[Charge]:
        """The ledger entry a fit with these parameters charges: the whole selection, known before the data."""
        self._validate_params()
        cal = self._selection_calibration(self._fits_per_run())
        return [Charge(name=f"{type(self).__name__} (model selection)", event=cal.charge, delta=float(self.delta))]

    def budget_part(self) -> Callable[[float, float], list[Charge]]:
        """The selection as a part for :func:`pdpkit.accountant.plan_budget` (:meth:`privacy_events` at (ε_i, δ_i))."""
        params = self.get_params(deep=False)

        def calibrated(eps: float, delta: float) -> list[Charge]:
            return type(self)(**{**params, "epsilon": eps, "delta": delta}).privacy_events()

        return calibrated

    def _select(self, X: np.ndarray, y: np.ndarray, classes: Any, sample_weight: np.ndarray | None = None) -> None:
        eps, delta = float(self.epsilon), float(self.delta)
        # Weights under the public bound W: each run fits the weighted objective divided by W (weights in [0, 1]),
        # whose lam, sigma and tau are the candidate's: the run estimator is given them times W.
        W = float(self.weight_bound)
        weighting = self._weighting(sample_weight is not None)
        mean, shape = self._law()
        mu_out = default_output_mu(eps)  # what the run estimator (epsilon=eps, lam and sigma given) uses
        # rows are checked (or clipped) before anything is charged or drawn
        prepare_rows(X, norm_bound=float(self.norm_bound), row_norm=self.row_norm)
        # a one-vs-rest run of K >= 3 classes is K fits on the same records: the run's event counts them
        count = len(classes) if classes is not None and len(classes) >= 3 else 1
        cal = self._selection_calibration(count)
        charge = cal.charge
        noise_sd = 1.0 / charge.score_mu

        def run(j: int, gen: np.random.Generator) -> tuple[tuple[int, Any], float]:
            _, _, lam, sigma, _ = charge.candidates[j]
            weights = {} if weighting is None else {"weight_bound": W, "weight_policy": self.weight_policy}
            est = self._estimator_class(epsilon=eps, delta=delta, lam=lam * W, sigma=sigma * W,
                                        norm_bound=self.norm_bound, row_norm=self.row_norm,
                                        fit_intercept=self.fit_intercept, random_state=gen,
                                        grad_tol=float(self.grad_tol) * W, **weights)
            _fit_run(est, Xt, yt, classes, swt)
            est.random_state = None  # the selection's generator would let a pickle replay the noise
            rel = est.release_
            if output_mu(grad_tol=rel.grad_tol, lam=rel.lam, sigma_out=rel.sigma_out) > mu_out * (1 + 1e-9) or \
                    not math.isclose(rel.sigma, sigma, rel_tol=1e-12) or \
                    not math.isclose(rel.lam, lam, rel_tol=1e-12):  # pragma: no cover - a guard on the charge
                raise RuntimeError("a run's parameters differ from the charged candidate's")
            return (j, est), self._count(est, Xv, yv) + float(gen.normal(0.0, noise_sd))

        with contextlib.ExitStack() as stack:
            if self.accountant is not None:  # refuses over budget, before any noise is drawn
                position = stack.enter_context(self.accountant.charging(
                    charge, name=f"{type(self).__name__} (model selection)"))
                rng = charged_generator(self.random_state, position)  # its own stream of the session
            else:
                rng = as_generator(self.random_state, "random_state")
            validation = rng.random(X.shape[0]) < float(self.validation_fraction)
            Xt, yt, Xv, yv = X[~validation], y[~validation], X[validation], y[validation]
            swt = None if sample_weight is None else sample_weight[~validation]
            # The number of runs K and the secret split are never released (the bound assumes it):
            # nothing a run emits may reach the caller, so its warnings are discarded, not collected.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                best = repeat_and_select(run, n_candidates=len(charge.candidates), mean=mean, shape=shape,
                                         rng=rng, default=None)
        del Xt, yt, Xv, yv, swt, validation  # the split is never kept
        self.selection_ = charge
        self.candidates_ = tuple((c[2], c[3]) for c in charge.candidates)
        self.dropped_lams_ = cal.dropped_lams
        accounting = SELECTION_ACCOUNTING if weighting is None else \
            f"{SELECTION_ACCOUNTING}; {weighting_statement(weighting)}"
        self.weighting_ = weighting
        self.guarantee_ = Guarantee(epsilon=cal.epsilon, delta=delta, accounting=accounting,
                                    parts=(GuaranteePart(name="selection", epsilon=cal.epsilon, delta=delta,
                                                         accounting=SELECTION_ACCOUNTING),))
        if best is None:  # no run (Poisson law, K = 0): the fixed default, the zero model
            self.best_index_ = None
            self.best_estimator_ = None
            self.release_ = None
            self.lam_ = self.sigma_ = None
            self.coef_ = np.zeros(X.shape[1]) if count == 1 else np.zeros((count, X.shape[1]))
            self.intercept_ = 0.0 if count == 1 else np.zeros(count)
            return
        j, est = best
        # the run's own release states one fit's guarantee, which is not this model's: keep none
        est.release_ = replace(_without_guarantee(est.release_), seeded=self.random_state is not None)
        est.report_ = None
        self.best_index_ = int(j)
        self.best_estimator_ = est
        self.release_ = est.release_
        self.lam_, self.sigma_ = float(est.lam_), float(est.sigma_)
        self.coef_ = np.array(est.coef_)
        self.intercept_ = float(est.intercept_) if np.ndim(est.intercept_) == 0 else np.array(est.intercept_)

    # ------------------------------------------------------------ the schema
    def _schema(self) -> Any:
        return None if getattr(self, "schema", None) is None else schema_object(self.schema)

    def _encode(self, X: Any) -> Any:
        """With a schema: raw records to encoded rows (norm at most ``norm_bound``, a public map); else X."""
        sch = self._schema()
        return X if sch is None else np.asarray(sch.encode(X), dtype=float) * float(self.norm_bound)

    # ------------------------------------------------------------ prediction
    def _linear(self, X: ArrayLike) -> np.ndarray:
        check_is_fitted(self)
        sch = self._schema()
        if sch is None:
            X = validate_data(self, X, reset=False)
        else:
            X = encoded_rows(sch, X, norm_bound=float(self.norm_bound))
        if self.row_norm == "clip":
            X = prepare_rows(X, norm_bound=self.norm_bound, row_norm="clip")
        return X @ np.asarray(self.coef_).T + self.intercept_

    def __getstate__(self) -> dict[str, Any]:
        """The pickled state, without ``random_state``: a seed in a published pickle would replay every draw."""
        state = dict(super().__getstate__())  # a copy: the fitted object keeps its parameter
        if state.get("random_state") is not None:
            state["random_state"] = None
        return state

    def privacy_spent(self) -> Guarantee:
        r"""The :math:`(\varepsilon, \delta)` guarantee of the whole selection (its total), with its parts.

        Repeat and select over the grid (:func:`pdpkit.selection.selection_epsilon` at
        ``selection_``), which covers the chosen model, its λ and σ, and everything else
        this estimator holds. It is not the chosen model's one-fit guarantee.

        Returns
        -------
        pdpkit.events.Guarantee
            The total, with the part ``"selection"``.
        """
        check_is_fitted(self)
        return self.guarantee_


def _fit_run(est: Any, X: np.ndarray, y: np.ndarray, classes: Any, sample_weight: np.ndarray | None = None) -> None:
    """Fit one run on the training part (with its weights); a classifier keeps the full data's classes (a part may
    lack one)."""
    fit_on_part(est, X, y, classes, sample_weight=sample_weight)


def _without_guarantee(release: Any) -> Any:
    from dataclasses import replace

    return replace(release, guarantee=None, ledger=(), report=None)


_COMMON_DOC = r"""
    epsilon, delta : float
        Target guarantee of the whole selection (add/remove one record).
    lams : sequence of float
        The public grid of λ (default :data:`DEFAULT_LAMS`); each λ gets its own σ at a
        common per-run level; a λ too small for the budget is dropped (``dropped_lams_``).
    select_mean : float or None
        Expected number of runs; ``None``: the grid size (at least 1.5).
    select_shape : float
        The law of the number of runs: 0 logarithmic (default), 1 geometric, η >= 0 a
        truncated negative binomial, ``math.inf`` Poisson (see the module).
    validation_fraction : float
        The probability that a record goes to the validation part.
    score_share : float
        The score's Gaussian μ as a multiple of the largest one that costs nothing beyond the
        models (:func:`pdpkit.selection.calibrate_selection`).
    norm_bound : float
        Bound R on the Euclidean norm of the feature rows.
    row_norm : {"raise", "clip"}
        What to do with a row beyond ``norm_bound``.
    fit_intercept : bool
        Fit an intercept (a constant column of value ``norm_bound``).
    random_state : int, numpy.random.Generator or None
        The secret randomness: the split, the runs, the noise. ``None`` (default): OS entropy;
        a seed makes the selection reproducible by anyone who knows it (the release says so).
        With an accountant it draws from the stream of its place in the ledger, never the
        noise of another release. It is not pickled (a pickle holding the seed would let
        anyone replay the noise and remove it).
    accountant : object or None
        A privacy accountant: ``accountant.charge_selection(charge, name=...)`` is called
        before any noise is drawn (and refuses a selection over its budget).
    grad_tol : float
        The public bound τ on each run's perturbed-gradient norm (as in the estimators).
    weight_bound : float
        The public bound W on a record's weight (``fit(..., sample_weight=...)``): each run
        fits the weighted objective divided by W, so the selection's guarantee is the
        unweighted one's (Redberg, Koskela & Wang 2023, Thm 3.1 with L → WL, β → Wβ) and its
        ``accounting`` states W and the policy. The validation score counts records, unweighted
        (sensitivity 1).
    weight_policy : {"refuse", "clip"}
        A weight above ``weight_bound``: refuse the data set before anything is charged
        (default; the message names no value, row or count) or clip it to the bound.

    Attributes
    ----------
    coef_, intercept_ : numpy.ndarray, float
        The chosen model (zeros if no run was made, possible only for a Poisson law).
    lam_, sigma_ : float
        The chosen candidate's λ and σ.
    best_index_ : int
        Its index in ``candidates_``.
    candidates_ : tuple of (float, float)
        The kept grid's (λ, σ).
    dropped_lams_ : tuple of float
        The λ dropped by the calibration.
    selection_ : pdpkit.events.RepeatAndSelectEvent
        The selection's public parameters (what an accountant stores).
    best_estimator_ : ObjPertClassifier or ObjPertRegressor
        The chosen run's estimator; its ``release_`` carries no guarantee (the guarantee is the
        selection's, ``privacy_spent()``).
    release_ : pdpkit.release.Release
        The chosen model's public fields, without a guarantee of its own.
    weighting_ : dict or None
        A weighted selection's public description (bound, policy), as the estimators'
        ``weighting_``; ``None`` without weights.
"""


class ObjPertClassifierCV(ClassifierMixin, ObjPertCVEstimator):
    __doc__ = (r"""Private classifier whose λ is chosen privately; the whole selection is (ε, δ)-DP.

    Each run trains :class:`pdpkit.estimators.ObjPertClassifier` (logistic loss) on the
    training part with the candidate's λ and σ, and scores it by the number of correct
    predictions on the validation part (one record changes it by at most 1) plus Gaussian
    noise of standard deviation ``1/score_mu``. With K >= 3 classes a run is the K
    one-vs-rest fits with the candidate's λ and σ: the run's event is K ObjPert fits on the
    same records (:class:`pdpkit.events.RepeatAndSelectEvent` with ``count`` = K), calibrated
    together (:func:`pdpkit.selection.calibrate_selection`).

    Parameters
    ----------
    classes : sequence
        The public classes (two: ``classes[1]`` is the positive one; three or more: one
        one-vs-rest model each); required: classes read from the data would reveal who is in it.
    unknown_label : {"raise", "ignore"}
        A record whose label is not one of ``classes``: refuse the data set (default) or leave
        the record out (:data:`pdpkit.estimators.UNKNOWN_LABEL_POLICIES`).
    schema : pdpkit.schema.Schema, dict or str, optional
        A public schema (or its JSON file): ``fit`` and ``predict`` then take raw records,
        encoded by the schema into rows of norm at most ``norm_bound``; its categorical label's
        domain is the classes.
    n_records_public : int, optional
        A public count or estimate of the training records (a published total), never read
        from the data: with it, :func:`selection_advice` can tell whether selection is
        expected to pay at this size. ``fit`` warns (:class:`SelectionAdviceWarning`, before
        anything is spent) when it is expected to cost more accuracy than it gains.""" + _COMMON_DOC + r"""    classes_ : numpy.ndarray
        The public classes.
    """)

    _estimator_class = ObjPertClassifier
    _loss_name = "logistic"

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-5, *, lams: Any = DEFAULT_LAMS,
                 select_mean: float | None = None, select_shape: float = 0.0, validation_fraction: float = 0.3,
                 score_share: float = 1.0, norm_bound: float = 1.0, row_norm: str = "raise",
                 fit_intercept: bool = True, random_state: Any = None, accountant: Any = None,
                 grad_tol: float = DEFAULT_GRAD_TOL, classes: Any = None, unknown_label: str = "raise",
                 schema: Any = None, n_records_public: int | None = None, weight_bound: float = 1.0,
                 weight_policy: str = "refuse") -> None:
        self.n_records_public = n_records_public
        self.weight_bound = weight_bound
        self.weight_policy = weight_policy
        self.classes = classes
        self.unknown_label = unknown_label
        self.schema = schema
        self.epsilon = epsilon
        self.delta = delta
        self.lams = lams
        self.select_mean = select_mean
        self.select_shape = select_shape
        self.validation_fraction = validation_fraction
        self.score_share = score_share
        self.norm_bound = norm_bound
        self.row_norm = row_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.accountant = accountant
        self.grad_tol = grad_tol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        tags.classifier_tags.poor_score = True
        return tags

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> ObjPertClassifierCV:
        """Choose λ privately and fit the chosen model on ``X`` (rows within ``norm_bound``) and labels ``y``.

        Parameters
        ----------
        X : array_like, shape (n, d)
            Feature rows.
        y : array_like, shape (n,)
            Labels, each one of ``classes``.
        sample_weight : array_like, shape (n,), optional
            Each record's weight, at most ``weight_bound`` (``weight_policy``).

        Returns
        -------
        ObjPertClassifierCV
            The fitted estimator.
        """
        classes = self._public_classes(y)  # before any label is read
        self._validate_params()
        advice = selection_advice(float(self.epsilon), n_records_public=self.n_records_public)
        if advice is not None:  # public parameters only, before anything is read or spent
            warnings.warn(advice, SelectionAdviceWarning, stacklevel=2)
        sch = self._schema()
        raw = X
        if sch is not None:  # raw records: the schema's public encoding, its label's classes
            X = self._encode(X)
            y_in = np.asarray(y, dtype=object)
            sw = self._weights(sample_weight, y_in.shape[0])
            known = np.isin(y_in.astype(str), np.asarray(sch.label_classes, dtype=object).astype(str))
            if self.unknown_label == "ignore" and not known.all():
                X, y_in = np.asarray(X)[known], y_in[known]
                sw = None if sw is None else sw[known]
            idx = np.asarray(sch.encode_label(y_in.astype(str)))  # refuses an unknown label ("raise")
            try:
                X, _ = validate_data(self, X, idx, reset=True)
            except (TypeError, ValueError) as exc:
                raise type(exc)(private_message(str(exc))) from None
            y = classes[idx]
        else:
            try:
                X, y = validate_data(self, X, y, reset=True)
            except (TypeError, ValueError) as exc:  # scikit-learn's text may quote a cell or count the rows
                raise type(exc)(private_message(str(exc))) from None
            sw = self._weights(sample_weight, y.shape[0])
            keep = labels_known(y, classes, self.unknown_label)
            if keep is not None:
                X, y = X[keep], y[keep]
                sw = None if sw is None else sw[keep]
        if sch is not None:  # the estimator's input: the raw table's columns
            record_raw_input(self, raw)
        self.classes_ = classes
        self._select(X, y, classes, sample_weight=sw)
        return self

    def _fits_per_run(self) -> int:
        k = int(self._public_classes(None).shape[0])
        return k if k >= 3 else 1

    def _public_classes(self, y: Any) -> np.ndarray:
        """The public classes (``classes``), checked before any label is read; ``y`` is not read."""
        if self.unknown_label not in UNKNOWN_LABEL_POLICIES:
            raise ValueError(f"unknown_label must be one of {UNKNOWN_LABEL_POLICIES}; got {self.unknown_label!r}")
        sch = self._schema()
        if sch is not None:
            if sch.label_classes is None:
                raise ValueError("schema: its label column must be categorical (the classes) for a classifier")
            schema_classes = np.asarray(sch.label_classes, dtype=object)
            if self.classes is not None and [str(c) for c in check_classes(self.classes)] != list(schema_classes):
                raise ValueError("classes must equal the schema's label categories (in their order), or be left None")
            return schema_classes
        if self.classes is None:
            raise ValueError("classes: give the public list of the classes (classes=['no', 'yes']), or a schema "
                             "whose label is categorical; classes read from the data would reveal who is in it")
        return check_classes(self.classes)

    def _count(self, est: ObjPertClassifier, X: np.ndarray, y: np.ndarray) -> float:
        """The number of correct predictions (sensitivity 1)."""
        if X.shape[0] == 0:
            return 0.0
        return float(np.sum(est.predict(X) == y))

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        r"""The linear score :math:`x^\top \text{coef} + \text{intercept}` of the chosen model.

        Parameters
        ----------
        X : array_like, shape (m, d)
            Feature rows.

        Returns
        -------
        numpy.ndarray
            The scores.
        """
        return self._linear(X)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The class with the largest score (two classes: ``classes_[1]`` where the decision function is > 0).

        Parameters
        ----------
        X : array_like, shape (m, d)
            Feature rows.

        Returns
        -------
        numpy.ndarray
            The predicted labels.
        """
        scores = self._linear(X)
        if scores.ndim == 2:
            return self.classes_[np.argmax(scores, axis=1)]
        return self.classes_[(scores > 0).astype(int)]

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Logistic probabilities, one column per class (one-vs-rest: the K logistic scores normalized).

        Parameters
        ----------
        X : array_like, shape (m, d)
            Feature rows.

        Returns
        -------
        numpy.ndarray, shape (m, K)
            The probabilities.
        """
        from scipy.special import expit

        s = self._linear(X)
        p = expit(s)
        if s.ndim == 2:  # one-vs-rest: the K logistic scores normalized, as ObjPertClassifier
            return p / p.sum(axis=1, keepdims=True)
        return np.column_stack([1.0 - p, p])


class ObjPertRegressorCV(RegressorMixin, ObjPertCVEstimator):
    __doc__ = (r"""Private robust linear regression whose λ is chosen privately; the whole selection is (ε, δ)-DP.

    Each run trains :class:`pdpkit.estimators.ObjPertRegressor` (pseudo-Huber loss) on the
    training part and scores it by minus the sum over the validation part of the clipped,
    normalized squared error :math:`\min(1, (\hat y - y)^2/(b - a)^2)`, prediction and label
    clipped to the public bounds :math:`[a, b]` = ``label_bounds`` (each term lies in
    [0, 1], so one record changes the sum by at most 1), plus Gaussian noise.

    Parameters
    ----------""" + _COMMON_DOC.replace("    epsilon, delta : float", """    label_bounds : tuple of float
        Public bounds (a, b) of the labels, for the score only (the model's guarantee does not
        depend on the labels).
    epsilon, delta : float""", 1) + r"""    schema : pdpkit.schema.Schema, dict or str, optional
        A public schema (or its JSON file) whose label is numeric with public bounds: ``fit``
        and ``predict`` then take raw records, encoded by the schema into rows of norm at most
        ``norm_bound``; the labels are mapped onto [-1, 1] by the label's bounds (which the
        score then uses: ``label_bounds`` must be left at its default or equal them), and
        predictions are mapped back to the label's scale.
""")

    _estimator_class = ObjPertRegressor
    _loss_name = "huber"

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-5, *, lams: Any = DEFAULT_LAMS,
                 label_bounds: tuple[float, float] = (-1.0, 1.0), select_mean: float | None = None,
                 select_shape: float = 0.0, validation_fraction: float = 0.3, score_share: float = 1.0,
                 norm_bound: float = 1.0, row_norm: str = "raise", fit_intercept: bool = True,
                 random_state: Any = None, accountant: Any = None,
                 grad_tol: float = DEFAULT_GRAD_TOL, schema: Any = None, weight_bound: float = 1.0,
                 weight_policy: str = "refuse") -> None:
        self.weight_bound = weight_bound
        self.weight_policy = weight_policy
        self.schema = schema
        self.epsilon = epsilon
        self.delta = delta
        self.lams = lams
        self.label_bounds = label_bounds
        self.select_mean = select_mean
        self.select_shape = select_shape
        self.validation_fraction = validation_fraction
        self.score_share = score_share
        self.norm_bound = norm_bound
        self.row_norm = row_norm
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.accountant = accountant
        self.grad_tol = grad_tol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags

    def _bounds(self) -> tuple[float, float]:
        """The score's label bounds, on the scale the model is fitted on ([-1, 1] through a schema)."""
        b = self.label_bounds
        if isinstance(b, (str, bytes)) or np.ndim(b) != 1 or len(b) != 2:
            raise TypeError(f"label_bounds must be a pair (low, high); got {b!r}")
        lo, hi = (float(v) for v in b)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"label_bounds must be finite with low < high; got {b!r}")
        sch = self._schema()
        if sch is None:
            return lo, hi
        if sch.label_bounds is None:
            raise ValueError("schema: its label column must be numeric with public bounds (low, high) for a "
                             "regressor")
        if (lo, hi) not in ((-1.0, 1.0), tuple(float(v) for v in sch.label_bounds)):
            raise ValueError("label_bounds must be left at its default or equal the schema's label bounds")
        return -1.0, 1.0  # the schema maps the label's bounds onto [-1, 1]

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> ObjPertRegressorCV:
        """Choose λ privately and fit the chosen model on ``X`` (rows within ``norm_bound``) and real ``y``.

        Parameters
        ----------
        X : array_like, shape (n, d)
            Feature rows, or raw records with a schema.
        y : array_like, shape (n,)
            Real labels (the score clips them to ``label_bounds``; through a schema, mapped
            onto [-1, 1] by its label's bounds).
        sample_weight : array_like, shape (n,), optional
            Each record's weight, at most ``weight_bound`` (``weight_policy``).

        Returns
        -------
        ObjPertRegressorCV
            The fitted estimator.
        """
        self._validate_params()
        self._bounds()
        sch = self._schema()
        raw = X
        if sch is not None:  # raw records and labels: the schema's public maps
            X, y = self._encode(X), np.asarray(sch.encode_label(y), dtype=float)
        try:
            X, y = validate_data(self, X, y, reset=True, y_numeric=True)
        except (TypeError, ValueError) as exc:  # scikit-learn's text may quote a cell or count the rows
            raise type(exc)(private_message(str(exc))) from None
        if sch is not None:  # the estimator's input: the raw table's columns
            record_raw_input(self, raw)
        sw = self._weights(sample_weight, X.shape[0])
        self._select(X, np.asarray(y, dtype=float), None, sample_weight=sw)
        return self

    def _count(self, est: ObjPertRegressor, X: np.ndarray, y: np.ndarray) -> float:
        """Minus the sum of the clipped, normalized squared errors (sensitivity 1)."""
        if X.shape[0] == 0:
            return 0.0
        lo, hi = self._bounds()
        err = (np.clip(est.predict(X), lo, hi) - np.clip(y, lo, hi)) / (hi - lo)
        return -float(np.sum(np.minimum(1.0, err * err)))

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The chosen model's linear prediction (through a schema, on the label's own scale).

        Parameters
        ----------
        X : array_like, shape (m, d)
            Feature rows, or raw records with a schema.

        Returns
        -------
        numpy.ndarray
            The predictions.
        """
        t = self._linear(X)
        sch = self._schema()
        return t if sch is None else np.asarray(sch.decode_label(t), dtype=float)
