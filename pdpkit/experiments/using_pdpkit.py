r"""Computations behind the chapter "Using pdpkit": a practitioner's table, its public schema, accuracy.

* :func:`adult_records` — UCI Adult as a practitioner's CSV would hold it: one row per
  person with the raw values (text categories, numbers, ``"?"`` read as missing), an
  identifier column, the income label.
* :data:`ADULT_PUBLIC_BOUNDS` and :func:`adult_public_schema` — the reviewed schema of the
  chapter: bounds and domains known without the data.
* :data:`EDUCATION_LEVEL` — a public map of Adult's 16 education values onto three levels
  (the chapter's multiclass label).
* :func:`adult_report_bounds` — the chapter's private model of income and its privacy
  report on the test file's people.
* :func:`accuracy_curve` — test accuracy of :class:`pdpkit.estimators.ObjPertClassifier`
  against ε.
* :func:`one_vs_rest_report_coverage` — how often a one-vs-rest model's per-person bound
  covers the exact ex-post loss of its K models together.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._progress import progress as _progress
from .._validation import as_generator
from ..datasets import ADULT_NUMERIC_BOUNDS, Dataset, adult_documented_domains, read_vendored
from ..estimators import ObjPertClassifier
from ..schema import Column, Schema

__all__ = ["ADULT_COLUMNS", "ADULT_PUBLIC_BOUNDS", "EDUCATION_LEVEL", "adult_records", "adult_public_schema",
           "adult_report_bounds", "accuracy_curve", "one_vs_rest_report_coverage", "selection_pays",
           "SELECTION_PAYS_DATA"]

#: The columns of ``adult.data`` and ``adult.test``, in the files' order (``adult.names``).
ADULT_COLUMNS: tuple[str, ...] = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
    "income",
)

#: Adult's education values grouped into three levels: no high-school diploma, a diploma or
#: some college (associate degrees included), a bachelor's degree or more. A fixed, public map.
EDUCATION_LEVEL: dict[str, str] = {
    **{v: "no diploma" for v in ("Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th")},
    **{v: "high school" for v in ("HS-grad", "Some-college", "Assoc-voc", "Assoc-acdm")},
    **{v: "bachelor+" for v in ("Bachelors", "Masters", "Prof-school", "Doctorate")},
}


def adult_records(split: str = "train", *, id_column: str = "person_id", n: int | None = None,
                  rng: Any = 0) -> Any:
    """UCI Adult's raw records as a table: an identifier, 14 columns as the files hold them, text and numbers.

    The vendored ``adult.data`` (32,561 rows) or ``adult.test`` (16,281 rows) read as a CSV
    would be: ``"?"`` becomes a missing value (in ``workclass``, ``occupation`` and
    ``native-country``), the test file's trailing period of the label is dropped. A first
    column ``id_column`` holds distinct random integers with seven digits, as a customer or
    patient number would — a column a model must never see.

    Parameters
    ----------
    split : {"train", "test"}
        ``adult.data`` or ``adult.test``.
    id_column : str
        The identifier column's name.
    n : int or None
        Keep a uniformly drawn subset of ``n`` rows (in file order); ``None`` keeps all.
    rng : int, numpy.random.Generator or None
        Source of the identifiers and of the subset.

    Returns
    -------
    pandas.DataFrame
        One row per record: ``id_column``, then :data:`ADULT_COLUMNS`.
    """
    import io

    import pandas as pd

    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test'; got {split!r}")
    gen = as_generator(rng)
    text = read_vendored("adult.data" if split == "train" else "adult.test").decode("ascii")
    frame = pd.read_csv(io.StringIO(text), header=None, names=list(ADULT_COLUMNS), skipinitialspace=True,
                        na_values=["?"], comment="|")
    frame["income"] = frame["income"].str.rstrip(".")
    ids = gen.choice(9_000_000, size=len(frame), replace=False) + 1_000_000
    frame.insert(0, id_column, ids)
    if n is not None:
        if not 1 <= int(n) <= len(frame):
            raise ValueError(f"n must lie in [1, {len(frame)}]; got {n!r}")
        keep = np.sort(gen.choice(len(frame), size=int(n), replace=False))
        frame = frame.iloc[keep].reset_index(drop=True)
    return frame


#: Public bounds of Adult's numeric columns: the selection (age above 16, hours above 0) and the
#: census top-codes (age 90, hours 99, capital gains 99,999); capital losses capped at 5,000 by
#: a rule applied to each record on its own.
ADULT_PUBLIC_BOUNDS: dict[str, tuple[float, float]] = {
    c: ADULT_NUMERIC_BOUNDS[c] for c in ("age", "capital-gain", "capital-loss", "hours-per-week")
}


def adult_public_schema() -> Schema:
    """The reviewed schema of Adult: every bound and domain known without the data.

    The identifier ``person_id``, ``fnlwgt`` (a survey weight) and ``education-num`` (the
    same as ``education``) are ignored; the numeric columns carry :data:`ADULT_PUBLIC_BOUNDS`,
    the text columns the domains of :func:`pdpkit.datasets.adult_documented_domains`; the label ``income``
    takes ``"<=50K"`` or ``">50K"``; a missing value is encoded as the all-zero block.
    """
    domains = adult_documented_domains()
    columns = [Column("person_id", role="ignore")]
    for name in ADULT_COLUMNS[:-1]:
        if name in ("fnlwgt", "education-num"):
            columns.append(Column(name, role="ignore"))
        elif name in ADULT_PUBLIC_BOUNDS:
            low, high = ADULT_PUBLIC_BOUNDS[name]
            columns.append(Column(name, low=low, high=high))
        else:
            columns.append(Column(name, kind="categorical", categories=domains[name]))
    columns.append(Column("income", role="label", kind="categorical", categories=("<=50K", ">50K")))
    return Schema(tuple(columns), handle_missing="zero")


def adult_report_bounds(*, lam: float, n_people: int | None = None,
                        random_state: Any = 0) -> tuple[ObjPertClassifier, np.ndarray]:
    """The chapter's model of income and every reported person's private bound (nats).

    :class:`~pdpkit.estimators.ObjPertClassifier` at (1, 10^-6) with the adaptive report at
    (0.5, 10^-6), ρ = 0.05, on :func:`adult_records` ``("train", rng=0)`` through
    :func:`adult_public_schema`; the report covers the first ``n_people`` records of
    ``adult_records("test", rng=1)`` (all 16,281 when ``None``), with their labels.

    Parameters
    ----------
    lam : float
        The regularization (the chapter's privately selected value).
    n_people : int or None
        How many test records to report on.
    random_state : int, numpy.random.Generator or None
        The estimator's source of noise.
    """
    train = adult_records("train", rng=0)
    test = adult_records("test", rng=1)
    clf = ObjPertClassifier(1.0, 1e-6, lam=lam, schema=adult_public_schema(), report="adaptive",
                            report_epsilon=0.5, report_delta=1e-6, rho=0.05,
                            random_state=random_state).fit(train, train["income"])
    people = test if n_people is None else test.head(int(n_people))
    return clf, np.asarray(clf.privacy_report(people, people["income"]))


def accuracy_curve(train: Dataset, test: Dataset, *, eps: Sequence[float], delta: float, seeds: int = 2,
                   progress: bool | None = None, classes: Sequence[float] = (-1.0, 1.0),
                   **estimator_kwargs: Any) -> dict[str, np.ndarray]:
    r"""Mean test accuracy of :class:`pdpkit.estimators.ObjPertClassifier` at each ε, over the seeds ``0, 1, …, seeds - 1``.

    Returns ``{"eps": ..., "accuracy": ..., "std": ...}`` (standard deviation over seeds).

    Parameters
    ----------
    eps : Sequence[float]
        The values of ε (nats) of the (ε, δ) guarantees.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    seeds : int, default 2
        Number of fits per ε, with the seeds 0, 1, …, ``seeds`` − 1.
    progress : bool, optional
        A tqdm progress bar (``None``: only when a person watches; ``PDPKIT_PROGRESS=0`` turns it off).
    train : Dataset
        Training data set.
    test : Dataset
        Test data set.
    classes : Sequence[float], default (-1, +1)
        The public classes (``classes[1]`` positive): a :class:`~pdpkit.datasets.Dataset`'s
        labels are :math:`\{-1, +1\}`.
    **estimator_kwargs
        Further parameters of :class:`pdpkit.estimators.ObjPertClassifier`.
    """
    eps = np.asarray(eps, dtype=float)
    acc = np.empty((eps.size, seeds))
    grid = [(i, s) for i in range(eps.size) for s in range(seeds)]
    for i, s in _progress(grid, total=len(grid), desc="accuracy curve", progress=progress):
        clf = ObjPertClassifier(float(eps[i]), delta, random_state=s, classes=list(classes),
                                **estimator_kwargs).fit(train.X, train.y)
        acc[i, s] = clf.score(test.X, test.y)
    return {"eps": eps, "accuracy": acc.mean(axis=1), "std": acc.std(axis=1)}


def one_vs_rest_report_coverage(*, n: int = 400, targets: int = 20, reps: int = 150, rho: float = 0.05,
                                confidence: float = 0.999, seed: int = 0) -> dict[str, Any]:
    r"""Coverage of a one-vs-rest model's per-person bound: the exact ex-post loss of the K models together.

    Three classes on ``n`` synthetic records in three dimensions (the rows in the ball of
    radius 1, an intercept); ``reps`` fits of :class:`~pdpkit.estimators.ObjPertClassifier`
    at (1, 10^-6) with the adaptive report at (0.5, 10^-6) and failure probability ``rho``,
    seeds ``0, …, reps − 1``. For the first ``targets`` records (members), the estimator's
    bound (:meth:`~pdpkit.estimators.ObjPertEstimator.privacy_report`: the sum of the K
    reports' bounds) is compared with the exact ex-post privacy loss of the K released
    models together — the sum of the K models' :func:`pdpkit.objpert.ex_post_pdp` (their
    noises are independent) — from the same fits replayed with the estimator's noise streams
    (their released coefficients are checked equal, bit for bit).

    Returns ``{"covered": ..., "one_model": ..., "lower": ..., "upper_one_model": ...}``:
    per target, the fraction of fits whose bound covers the exact loss; the same for the
    first model's bound alone (a bound that ignores the other K − 1 models, which must fail);
    the one-sided lower (for the sum) and upper (for one model) Clopper–Pearson bounds at
    ``confidence``.

    Parameters
    ----------
    n, targets, reps : int
        Records, targets and fits.
    rho : float
        The report's failure probability (each of the K reports at ``rho / K``).
    confidence : float
        Confidence of the Clopper–Pearson bounds.
    seed : int
        Seed of the synthetic records.
    """
    from scipy.stats import beta as beta_law

    from ..estimators import default_output_mu, prepare_rows
    from ..losses import logistic
    from ..objpert import default_sigma_out, ex_post_pdp, objpert_fit
    from ..report import calibrate_report, privacy_report

    rng = np.random.default_rng(seed)
    K = 3
    X = rng.uniform(-1, 1, (n, 3)) / 2
    y = np.digitize(X @ np.array([1.0, -1.0, 0.5]) + 0.1 * rng.normal(size=n), [-0.2, 0.2])
    rows = prepare_rows(X, norm_bound=1.0, fit_intercept=True)
    R = float(np.sqrt(2.0))
    scales = {k: float(v) * np.sqrt(K) for k, v in
              calibrate_report(0.5, 1e-6, method="adaptive", loss="logistic", norm_bound=R).items() if v is not None}
    covered = np.zeros((reps, targets), bool)
    one_model = np.zeros((reps, targets), bool)
    for r in range(reps):
        est = ObjPertClassifier(1.0, 1e-6, classes=[0, 1, 2], report="adaptive", report_epsilon=0.5,
                                report_delta=1e-6, rho=rho, random_state=r).fit(X, y)
        bound = np.asarray(est.privacy_report(X[:targets], y[:targets]))
        sigma_out = default_sigma_out(grad_tol=est.grad_tol, lam=est.lam_, mu=default_output_mu(1.0))
        truth, first = np.zeros(targets), None
        for k, g in enumerate(np.random.default_rng(r).spawn(K)):  # the estimator's K noise streams
            y_k = np.where(y == k, 1.0, -1.0)
            fit = objpert_fit(rows, y_k, logistic, lam=est.lam_, sigma=est.sigma_, rng=g, norm_bound=R,
                              grad_tol=est.grad_tol, sigma_out=sigma_out)
            if not np.array_equal(fit.theta_released, est.release_.theta[k]):
                raise AssertionError("the replayed fit is not the estimator's")
            rep = privacy_report(fit, rows, y_k, method="adaptive", rho=rho / K, rng=g, **scales)
            truth = truth + np.asarray(ex_post_pdp(fit, rows, y_k, rows[:targets], y_k[:targets], member=True))
            if first is None:
                first = np.asarray(rep.bounds(rows[:targets], y_k[:targets]))
        covered[r], one_model[r] = truth <= bound, truth <= first
    a = 1.0 - confidence
    hits, hits_one = covered.sum(0), one_model.sum(0)
    lower = np.where(hits == 0, 0.0, beta_law.ppf(a, hits, reps - hits + 1))
    upper_one = np.where(hits_one == reps, 1.0, beta_law.ppf(1 - a, hits_one + 1, reps - hits_one))
    return {"covered": covered.mean(0), "one_model": one_model.mean(0), "lower": lower,
            "upper_one_model": upper_one, "reps": reps, "rho": rho}


# --------------------------------------------------------------- when private selection pays
#: The data sets :func:`selection_pays` measures on: vendored UCI Adult and credit default, and
#: synthetic logistic data (d = 10, θ* ~ N(0, 4² I), x uniform on the unit sphere).
SELECTION_PAYS_DATA: tuple[str, ...] = ("synthetic", "credit_default", "adult")


def _selection_pays_pool(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(training pool, held-out test set) of one of :data:`SELECTION_PAYS_DATA`, unit-norm rows, labels ±1."""
    from ..datasets import load_adult, load_credit_default, make_synthetic_logistic

    if name == "adult":
        train, test = load_adult("train"), load_adult("test")
        return train.X, train.y, test.X, test.y
    if name == "credit_default":  # 30,000 clients: the last 10,000 (a fixed, public cut) held out
        data = load_credit_default()
        return data.X[:20000], data.y[:20000], data.X[20000:], data.y[20000:]
    if name == "synthetic":
        data = make_synthetic_logistic(40000, d=10, theta_scale=4.0, rng=np.random.default_rng(20240601))
        return data.X[:30000], data.y[:30000], data.X[30000:], data.y[30000:]
    raise ValueError(f"data set must be one of {SELECTION_PAYS_DATA}; got {name!r}")


def _grid_lams(spec: Any, eps: float, delta: float) -> tuple[float, ...]:
    """A grid of :func:`selection_pays`: ``None`` (the default grid), ``("default-lam", multipliers)`` or λ values."""
    from ..model_selection import DEFAULT_LAMS, default_lam

    if spec is None:
        return DEFAULT_LAMS
    if isinstance(spec, tuple) and len(spec) == 2 and spec[0] == "default-lam":
        lam0 = default_lam(eps, delta)
        return tuple(float(lam0 * m) for m in spec[1])
    return tuple(float(v) for v in spec)


def selection_pays(*, data: Sequence[str] = ("synthetic",), ns: Sequence[int] = (500, 2000, 8000),
                   eps: Sequence[float] = (0.5, 1.0, 2.0, 4.0), delta: float = 1e-6,
                   grids: dict[str, Any] | None = None, validation_fractions: Sequence[float] = (0.3,),
                   seeds: int = 10, progress: bool | None = None) -> dict[str, Any]:
    r"""Held-out accuracy of private selection of λ against the default calibrated λ, at the same total budget.

    For each data set, training size ``n``, total ε (at ``delta``), grid and
    ``validation_fraction``, and each seed ``s``: ``n`` training rows are drawn without
    replacement from the data set's training pool (seed ``s``), then

    * (a) :class:`pdpkit.model_selection.ObjPertClassifierCV` (``random_state=s``; the whole
      selection is (ε, δ)-DP) and
    * (b) :class:`~pdpkit.estimators.ObjPertClassifier` with its default calibrated λ
      (``random_state=s``; (ε, δ)-DP)

    are fitted on them and scored on the fixed held-out set; (c) a non-private ceiling: each
    λ of the grid fitted at the full (ε, δ) and the best test accuracy among them (the choice
    is not paid for and is made on the test set: what a perfect, free selection would reach).
    Rows have unit norm, an intercept is fitted, labels are ±1.

    A grid is a tuple of λ, or ``("default-lam", multipliers)``: the multiples of the default
    calibrated λ at that (ε, δ) (:func:`pdpkit.model_selection.default_lam`), a public grid.

    Returns a dict of flat lists, one entry per configuration (data set, n, ε, grid,
    validation fraction): ``"cv"``, ``"default"``, ``"ceiling"`` (mean accuracies over the
    seeds), ``"gain"`` and ``"gain_se"`` (mean and standard error of the paired difference
    cv − default), ``"ceiling_gain"`` (ceiling − default), with the configuration's keys.

    Parameters
    ----------
    data : sequence of str
        Names from :data:`SELECTION_PAYS_DATA`.
    ns : sequence of int
        Training sizes (subsampled from the pool; at most its size).
    eps : sequence of float
        Total ε of each method.
    delta : float
        δ of each method.
    grids : mapping, optional
        Name to grid (see above); default ``{"default": None}``, the estimator's default grid.
    validation_fractions : sequence of float
        The CV estimator's ``validation_fraction`` values.
    seeds : int
        Seeds ``0, …, seeds − 1``.
    progress : bool, optional
        A progress bar (``None``: only when a person watches).
    """
    from ..model_selection import ObjPertClassifierCV, SelectionAdviceWarning

    grids = {"default": None} if grids is None else dict(grids)
    keys = {k: [] for k in ("data", "n", "eps", "grid", "lams", "validation_fraction", "cv", "default",
                            "ceiling", "gain", "gain_se", "ceiling_gain")}
    configs = [(name, int(n), float(e), g, float(v)) for name in data for n in ns for e in eps
               for g in grids for v in validation_fractions]
    pools = {name: _selection_pays_pool(name) for name in data}
    cache: dict[tuple, Any] = {}
    for name, n, e, g, v in _progress(configs, total=len(configs), desc="selection pays", progress=progress):
        Xp, yp, Xte, yte = pools[name]
        lams = _grid_lams(grids[g], e, delta)
        cv_acc, def_acc, ceil_acc = [], [], []
        for s in range(seeds):
            idx = np.random.default_rng(s).choice(Xp.shape[0], size=n, replace=False)
            X, y = Xp[idx], yp[idx]
            with warnings.catch_warnings():  # (the advice this measurement is behind)
                warnings.simplefilter("ignore", SelectionAdviceWarning)
                cv = ObjPertClassifierCV(e, delta, lams=lams, validation_fraction=v, classes=[-1.0, 1.0],
                                         random_state=s).fit(X, y)
            cv_acc.append(cv.score(Xte, yte))
            key = (name, n, e, s)  # the default and the ceiling do not depend on the split
            if key not in cache:
                cache[key] = ObjPertClassifier(e, delta, classes=[-1.0, 1.0], random_state=s).fit(X, y).score(Xte, yte)
            def_acc.append(cache[key])
            ckey = (name, n, e, s, lams)
            if ckey not in cache:
                best = -1.0
                for lam in lams:
                    try:
                        est = ObjPertClassifier(e, delta, lam=lam, classes=[-1.0, 1.0], random_state=s).fit(X, y)
                    except ValueError:  # λ too small to reach (ε, δ) in one fit
                        continue
                    best = max(best, est.score(Xte, yte))
                cache[ckey] = best
            ceil_acc.append(cache[ckey])
        diff = np.asarray(cv_acc) - np.asarray(def_acc)
        for k, val in (("data", name), ("n", n), ("eps", e), ("grid", g), ("lams", list(lams)),
                       ("validation_fraction", v), ("cv", float(np.mean(cv_acc))),
                       ("default", float(np.mean(def_acc))), ("ceiling", float(np.mean(ceil_acc))),
                       ("gain", float(diff.mean())), ("gain_se", float(diff.std(ddof=1) / np.sqrt(seeds))),
                       ("ceiling_gain", float(np.mean(ceil_acc) - np.mean(def_acc)))):
            keys[k].append(val)
    return {**keys, "delta": delta, "seeds": seeds}
