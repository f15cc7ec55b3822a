"""The scikit-learn front door: estimator contract, guarantee tied to the data, publishable state."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import check_estimator
from sklearn.utils.multiclass import check_classification_targets

from pdpkit import accounting, objpert
from pdpkit.estimators import EXPECTED_FAILED_CHECKS, ObjPertClassifier, ObjPertRegressor, prepare_rows
from pdpkit.objpert import ObjPertResult
from pdpkit.release import Release, objpert_release
from pdpkit.release import SeededReleaseWarning

#: The public classes of ``_data``'s labels.
CLASSES = [0, 1]


def _data(n=600, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d)) / math.sqrt(d)
    w = np.linspace(2.0, -1.0, d)
    y = np.where(X @ w + 0.2 * rng.normal(size=n) > 0.05, 1, 0)
    return X, y


class _ClassesFromLabels(ObjPertClassifier):
    """TEST ONLY, NOT PRIVATE: reads the classes off the labels, which a release must never do.

    scikit-learn's API checks fit on labels of their own choosing and cannot pass a public
    class list, so they run on this variant; everything but where the classes come from is
    ObjPertClassifier's own code. The real class's refusal is tested in
    ``test_fit_without_classes_refuses_before_reading_a_label``.
    """

    def _public_classes(self, sch, y):
        check_classification_targets(y)
        classes = np.unique(np.asarray(y))
        if classes.shape[0] < 2:  # the real class's own check of its classes (two or more), in sklearn's words
            raise ValueError(f"y must have at least 2 classes; got {classes.shape[0]} class")
        return classes


# weight_bound 4 with clipping: the checks' sample weights go up to 4, their class weights to 1000
@pytest.mark.parametrize("est", [_ClassesFromLabels(row_norm="clip", random_state=0, weight_bound=4.0,
                                                    weight_policy="clip"),
                                 ObjPertRegressor(row_norm="clip", random_state=0, weight_bound=4.0,
                                                  weight_policy="clip")], ids=lambda e: type(e).__name__)
def test_check_estimator_passes(est):
    check_estimator(est, expected_failed_checks=EXPECTED_FAILED_CHECKS, on_skip=None)


def test_fit_without_classes_refuses_before_reading_a_label(unreadable_labels):
    X, _ = _data(n=50)
    with pytest.raises(ValueError, match=r"^classes:") as err:
        ObjPertClassifier().fit(X, unreadable_labels)
    assert "schema" in str(err.value)  # the other public source of the classes
    # test the tester: the variant that reads the classes off the labels does read them
    with pytest.raises(AssertionError, match="labels were read"):
        _ClassesFromLabels().fit(X, unreadable_labels)


def test_row_beyond_norm_bound_raises_naming_no_row_and_clip_is_a_per_record_map():
    X, y = _data()
    X[7] *= 10.0
    with pytest.raises(ValueError, match=r"^X has a row whose Euclidean norm exceeds norm_bound=1; ") as err:
        ObjPertClassifier(classes=CLASSES, random_state=0).fit(X, y)
    text = str(err.value)
    assert "check_nonprivate" in text  # where the curator finds the row
    norm = np.linalg.norm(X[7])
    for leak in ("row 7", "7", f"{norm:.6g}", f"{norm:.3g}", "such rows"):
        assert leak not in text, leak
    clip = ObjPertClassifier(classes=CLASSES, row_norm="clip", random_state=3).fit(X, y)
    Xc = X.copy()
    Xc[7] /= np.linalg.norm(Xc[7])
    ref = ObjPertClassifier(classes=CLASSES, random_state=3).fit(Xc, y)
    np.testing.assert_array_equal(clip.coef_, ref.coef_)
    assert clip.privacy_spent() == ref.privacy_spent()


def test_estimator_is_objpert_on_the_augmented_rows_with_the_same_noise():
    X, y = _data()
    est = ObjPertClassifier(0.7, 1e-6, classes=CLASSES, random_state=11).fit(X, y)
    rows = np.hstack([X, np.ones((X.shape[0], 1))])
    ref = objpert.objpert_fit(rows, np.where(y == 1, 1.0, -1.0), "logistic", lam=est.lam_, sigma=est.sigma_,
                              rng=np.random.default_rng(11), norm_bound=math.sqrt(2))
    np.testing.assert_allclose(est.coef_, ref.theta_released[:-1], rtol=0, atol=1e-12)
    assert est.intercept_ == pytest.approx(ref.theta_released[-1], abs=1e-12)


def test_calibration_meets_the_target_with_the_intercept_column_counted():
    X, y = _data()
    for eps, delta in [(0.5, 1e-5), (2.0, 1e-7)]:
        est = ObjPertClassifier(eps, delta, classes=CLASSES, random_state=0).fit(X, y)
        g = est.privacy_spent()
        assert g.epsilon <= eps and g.epsilon == pytest.approx(eps, rel=1e-9) and g.delta == delta
        # by hand: rows (x, 1) have norm <= sqrt 2, so L = sqrt 2 and beta = 1/4 * 2
        d_hand = accounting.objpert_delta(eps, L=math.sqrt(2), beta=0.5, lam=est.lam_, sigma=est.sigma_, sharp=True)
        assert d_hand <= delta * (1 + 1e-9)
        # test the tester: forgetting the intercept column would claim less than is spent
        wrong = accounting.objpert_epsilon(delta, L=1.0, beta=0.25, lam=est.lam_, sigma=est.sigma_, sharp=True)
        assert wrong < 0.9 * eps
    no_int = ObjPertClassifier(1.0, 1e-5, classes=CLASSES, fit_intercept=False, random_state=0).fit(X, y)
    assert no_int.intercept_ == 0.0 and no_int.coef_.shape == (X.shape[1],)


def test_given_lam_and_sigma_the_guarantee_is_computed_not_calibrated():
    X, y = _data()
    est = ObjPertClassifier(1.0, 1e-5, classes=CLASSES, lam=5.0, sigma=3.0, random_state=0).fit(X, y)
    # ObjPert composed with the output noise that pays for the solver's tolerance (mu = 1e-3)
    expect = accounting.objpert_output_epsilon(1e-5, L=math.sqrt(2), beta=0.5, lam=5.0, sigma=3.0, mu=1e-3,
                                               sharp=True)
    assert est.privacy_spent().epsilon == pytest.approx(expect, rel=1e-12)
    alone = accounting.objpert_epsilon(1e-5, L=math.sqrt(2), beta=0.5, lam=5.0, sigma=3.0, sharp=True)
    assert alone < expect < alone + 1e-3  # the tolerance costs little, and is paid
    only_lam = ObjPertClassifier(1.0, 1e-5, classes=CLASSES, lam=5.0, random_state=0).fit(X, y)
    assert only_lam.lam_ == 5.0 and only_lam.privacy_spent().epsilon == pytest.approx(1.0, rel=1e-8)
    assert only_lam.privacy_spent().epsilon <= 1.0 + 1e-12
    only_sigma = ObjPertClassifier(1.0, 1e-5, classes=CLASSES, sigma=8.0, random_state=0).fit(X, y)
    assert only_sigma.sigma_ == 8.0 and only_sigma.privacy_spent().epsilon == pytest.approx(1.0, rel=1e-8)
    assert only_sigma.privacy_spent().epsilon <= 1.0 + 1e-12


def test_random_state_int_reproduces_generator_accepted_randomstate_refused():
    X, y = _data()
    a = ObjPertClassifier(classes=CLASSES, random_state=5).fit(X, y).coef_
    b = ObjPertClassifier(classes=CLASSES, random_state=5).fit(X, y).coef_
    c = ObjPertClassifier(classes=CLASSES, random_state=6).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    ObjPertClassifier(classes=CLASSES, random_state=np.random.default_rng(1)).fit(X, y)
    with pytest.raises(TypeError, match="random_state"):
        ObjPertClassifier(classes=CLASSES, random_state=np.random.RandomState(0)).fit(X, y)


@pytest.mark.parametrize("labels, classes", [(("no", "yes"), ["no", "yes"]), (("yes", "no"), ["yes", "no"]),
                                             ((0, 1), [0, 1]), ((-1, 1), [-1, 1]), ((False, True), [0, 1])])
def test_any_two_labels_second_class_is_positive(labels, classes):
    # labels[1] is the positive one; ("yes", "no"): the given order, not the sorted one, decides
    X, y01 = _data()
    y = np.where(y01 == 1, labels[1], labels[0])
    est = ObjPertClassifier(classes=classes, random_state=2).fit(X, y)
    ref = ObjPertClassifier(classes=[-1.0, 1.0], random_state=2).fit(X, np.where(y01 == 1, 1.0, -1.0))
    assert list(est.classes_) == classes
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    assert est.score(X, y) > 0.75
    proba = est.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.predict(X), est.classes_[(proba[:, 1] > 0.5).astype(int)])
    np.testing.assert_allclose(np.exp(est.predict_log_proba(X)), proba, rtol=1e-12)


def test_three_labels_fit_one_vs_rest_with_the_composed_guarantee():
    X, y = _data()
    y = y.copy()
    y[:40] = 2
    clf = ObjPertClassifier(classes=[0, 1, 2], random_state=0).fit(X, y)
    assert list(clf.classes_) == [0, 1, 2] and clf.coef_.shape == (3, X.shape[1])
    p = clf.predict_proba(X)
    assert p.shape == (X.shape[0], 3) and np.allclose(p.sum(axis=1), 1.0)
    assert np.array_equal(clf.predict(X), clf.classes_[np.argmax(clf.decision_function(X), axis=1)])
    g = clf.privacy_spent()
    # the three fits together meet the target; a deliberately wrong variant (one fit's guarantee) claims less
    assert g.epsilon <= clf.epsilon * (1 + 1e-9) and g.epsilon > 0.99 * clf.epsilon
    with pytest.warns(SeededReleaseWarning):
        one = Release.from_json(clf.release_.to_json())
    assert one.n_models == 3 and one.guarantee.epsilon == pytest.approx(g.epsilon)
    from pdpkit.release import release_guarantee

    single = release_guarantee(loss="logistic", lam=clf.lam_, sigma=clf.sigma_, norm_bound=clf.release_.fit_norm_bound,
                               grad_tol=clf.grad_tol, sigma_out=one.sigma_out, delta=clf.delta)
    assert single.epsilon < 0.75 * g.epsilon


def test_dataframe_keeps_feature_names_and_pipeline_and_pickle_work():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    df = pd.DataFrame(X, columns=["age", "income", "hours", "score"])
    est = ObjPertClassifier(classes=CLASSES, random_state=0).fit(df, y)
    assert list(est.feature_names_in_) == ["age", "income", "hours", "score"]
    assert est.release_.feature_names == ("age", "income", "hours", "score")
    pipe = Pipeline([("shrink", FunctionTransformer(lambda Z: 3.0 * np.asarray(Z))),
                     ("clf", ObjPertClassifier(classes=CLASSES, row_norm="clip", random_state=0))]).fit(X, y)
    assert pipe.score(X, y) > 0.7
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.predict(df), est.predict(df))
    # nothing non-private travels with the estimator
    assert not any(isinstance(v, ObjPertResult) for v in vars(est).values())


def test_release_is_publishable_and_round_trips():
    X, y = _data()
    est = ObjPertClassifier(classes=["a", "b"], random_state=0).fit(X, ["b" if v else "a" for v in y])
    rel = est.release_
    text = rel.to_json()
    import json

    # exactly the public fields: no objective noise b, no n, no gradient norm
    assert set(json.loads(text)) == {"format", "theta", "lam", "sigma", "loss", "norm_bound", "fit_intercept",
                                     "guarantee", "report", "classes", "feature_names", "row_norm", "grad_tol", "ledger", "schema",
                                     "sigma_out", "seeded", "signature"}
    with pytest.warns(SeededReleaseWarning):  # random_state=0: private only while the seed stays secret
        back = Release.from_json(text)
    np.testing.assert_array_equal(back.theta, rel.theta)
    assert back.guarantee == rel.guarantee and back.classes == ("a", "b") and back.seeded is True
    np.testing.assert_allclose(back.decision_function(X), est.decision_function(X), rtol=1e-13)
    assert "b=" not in repr(rel)
    with pytest.raises(ValueError, match="not a pdpkit release"):
        Release.from_json('{"theta": [1.0]}')


def test_regressor_fits_a_robust_line():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(4000, 2)) / math.sqrt(2)
    y = X @ np.array([1.5, -1.0]) + 0.1 * rng.standard_t(2, size=4000)
    est = ObjPertRegressor(2.0, 1e-6, random_state=0).fit(X, y)
    assert est.score(X, y) > 0.8
    assert est.privacy_spent().epsilon == pytest.approx(2.0, rel=1e-9)
    with pytest.raises(ValueError, match="unbounded gradient"):
        ObjPertRegressor(loss="squared").fit(X, y)


@pytest.mark.parametrize("kwargs, match", [
    ({"epsilon": 0.0}, "epsilon"), ({"delta": 1.0}, "delta"), ({"row_norm": "shrink"}, "row_norm"),
    ({"norm_bound": -1.0}, "norm_bound"), ({"report": "magic"}, "report"),
    ({"report": "adaptive"}, "report_epsilon"), ({"lam": 0.0}, "lam"), ({"sigma": float("nan")}, "sigma"),
])
def test_bad_parameters_raise_naming_them(kwargs, match):
    X, y = _data(n=50)
    with pytest.raises((ValueError, TypeError), match=match):
        ObjPertClassifier(classes=CLASSES, **kwargs).fit(X, y)


def test_prepare_rows_intercept_column_and_bound():
    X = np.array([[3.0, 4.0], [0.3, 0.4]])
    out = prepare_rows(X, norm_bound=1.0, row_norm="clip", fit_intercept=True)
    np.testing.assert_allclose(out, [[0.6, 0.8, 1.0], [0.3, 0.4, 1.0]])
    assert np.all(np.linalg.norm(out, axis=1) <= math.sqrt(2) + 1e-12)


def test_report_travels_with_the_estimator_and_the_total_is_composed_tightly():
    from pdpkit import report as rp

    X, y = _data(n=3000, d=3)
    est = ObjPertClassifier(1.0, 1e-6, classes=CLASSES, report="adaptive", report_epsilon=0.5, report_delta=1e-6,
                            random_state=0).fit(X, y)
    g = est.privacy_spent()
    basic = est.release_.guarantee.epsilon + est.report_.dp_epsilon(1e-6, norm_bound=math.sqrt(2))
    assert g.delta == pytest.approx(2e-6) and g.epsilon <= basic + 1e-12
    assert g.epsilon < basic  # the PLD composition is strictly tighter here
    assert est.report_.dp_epsilon(1e-6, norm_bound=math.sqrt(2)) == pytest.approx(0.5, rel=1e-6)
    bounds = est.privacy_report(X[:20], y[:20])
    rows = prepare_rows(X[:20], norm_bound=1.0, fit_intercept=True)
    np.testing.assert_array_equal(bounds, est.report_.epsilon_bound(rows, np.where(y[:20] == 1, 1.0, -1.0)))
    # the serialized report in the release reproduces the bounds
    with pytest.warns(SeededReleaseWarning):
        again = Release.from_json(est.release_.to_json()).privacy_report
    assert isinstance(again, rp.PrivacyReport)
    np.testing.assert_allclose(again.epsilon_bound(rows, np.where(y[:20] == 1, 1.0, -1.0)), bounds, rtol=1e-13)
    # same seed, same report
    twin = ObjPertClassifier(1.0, 1e-6, classes=CLASSES, report="adaptive", report_epsilon=0.5, report_delta=1e-6,
                             random_state=0).fit(X, y)
    np.testing.assert_array_equal(twin.privacy_report(X[:20], y[:20]), bounds)
    free = ObjPertClassifier(1.0, 1e-6, classes=CLASSES, report="data-independent", random_state=0).fit(X, y)
    assert free.privacy_spent() == free.release_.guarantee
    with pytest.raises(ValueError, match="report=None"):
        ObjPertClassifier(classes=CLASSES, random_state=0).fit(X, y).privacy_report(X[:2], y[:2])


def test_clip_is_part_of_the_model_at_prediction_time_too():
    X, y = _data()
    big = 5.0 * X
    est = ObjPertClassifier(classes=CLASSES, row_norm="clip", random_state=1).fit(big, y)
    clipped = prepare_rows(big, norm_bound=1.0, row_norm="clip")
    np.testing.assert_allclose(est.decision_function(big), clipped @ est.coef_ + est.intercept_, rtol=1e-13)
    with pytest.warns(SeededReleaseWarning):
        back = Release.from_json(est.release_.to_json())
    assert back.row_norm == "clip"
    np.testing.assert_allclose(back.decision_function(big), est.decision_function(big), rtol=1e-13)


def test_objpert_result_release_carries_the_tight_guarantee_or_none():
    X, y = _data()
    ys = np.where(y == 1, 1.0, -1.0)
    fit = objpert.objpert_fit(X, ys, "logistic", lam=2.0, sigma=5.0, rng=0)
    rel = objpert_release(fit, delta=1e-5)
    expect = accounting.objpert_output_epsilon(1e-5, L=1.0, beta=0.25, lam=2.0, sigma=5.0, mu=fit.output_mu,
                                               sharp=True)
    assert fit.output_mu == pytest.approx(1e-3, rel=1e-12)
    assert rel.guarantee.epsilon == pytest.approx(expect, rel=1e-12) and rel.norm_bound == 1.0
    np.testing.assert_array_equal(rel.theta, fit.theta_released)  # never the solver's point
    unbounded = objpert.objpert_fit(3 * X, ys, "logistic", lam=2.0, sigma=5.0, rng=0, norm_bound=None)
    assert objpert_release(unbounded, delta=1e-5).guarantee is None
    with pytest.raises(ValueError, match="norm_bound"):
        objpert.objpert_fit(3 * X, ys, "logistic", lam=2.0, sigma=5.0, rng=0)


def test_prediction_refuses_or_clips_exactly_as_the_release_does_huge_entries_included():
    X, y = _data()
    est = ObjPertClassifier(classes=CLASSES, random_state=0).fit(X, y)
    with pytest.warns(SeededReleaseWarning):
        rel = Release.from_json(est.release_.to_json())
    beyond = X[:5] * 3.0
    for predict in (est.predict, rel.predict):  # row_norm="raise": the model is defined on the ball only
        with pytest.raises(ValueError, match="norm_bound"):
            predict(beyond)
    # a row with an entry beyond 1.3e154 (its sum of squares overflows) is clipped onto the ball, not to zero
    clip = ObjPertClassifier(classes=CLASSES, row_norm="clip", random_state=0).fit(X, y)
    huge = np.zeros((1, X.shape[1]))
    huge[0, 0] = 1e200
    unit = np.zeros((1, X.shape[1]))
    unit[0, 0] = 1.0
    np.testing.assert_array_equal(prepare_rows(huge, norm_bound=1.0, row_norm="clip"), unit)
    np.testing.assert_allclose(clip.decision_function(huge), clip.decision_function(unit), rtol=1e-15)
    assert clip.decision_function(huge)[0] != clip.intercept_  # the wrong variant: a row clipped to zero


def test_a_fit_inside_scikit_learns_model_selection_warns_once_with_no_data_in_the_text(monkeypatch):
    import warnings

    from sklearn.model_selection import GridSearchCV, cross_val_score

    from pdpkit import estimators as est_mod
    from pdpkit.ops_estimators import OPSRegressor

    def caught(fn):
        monkeypatch.setattr(est_mod, "_SELECTION_WARNED", est_mod.threading.Event())
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            fn()
        return [w for w in got if issubclass(w.category, est_mod.NonPrivateSelectionWarning)]

    X, y = _data(n=200)
    X2, y2 = _data(n=300, seed=5)
    grid = {"epsilon": [0.5, 1.0]}
    a = caught(lambda: GridSearchCV(ObjPertClassifier(classes=CLASSES, random_state=0), grid, cv=2).fit(X, y))
    b = caught(lambda: cross_val_score(ObjPertRegressor(row_norm="clip", random_state=0), X2, y2, cv=3))
    c = caught(lambda: cross_val_score(OPSRegressor(5.0, 0.01, row_norm="clip", random_state=0), X2, y2, cv=2))
    assert len(a) == len(b) == len(c) == 1  # once for the whole search, whatever the number of fits
    assert str(a[0].message) == str(b[0].message) == est_mod.SELECTION_NOTE  # the same text whatever the data
    assert not any(ch.isdigit() for ch in est_mod.SELECTION_NOTE)
    # a fit outside model selection does not warn (test the tester: the same fit, called directly)
    assert caught(lambda: ObjPertClassifier(classes=CLASSES, random_state=0).fit(X, y)) == []


def test_feature_names_in_are_the_raw_tables_columns_through_a_schema():
    """scikit-learn's ``n_features_in_`` / ``feature_names_in_`` describe the input ``fit`` saw: with a
    schema, the raw table's columns (not the encoded width); predictions read the same table."""
    import pandas as pd

    from pdpkit.model_selection import ObjPertClassifierCV, ObjPertRegressorCV
    from pdpkit.ops_estimators import AdaOPSRegressor, OPSRegressor
    from pdpkit.schema import Column, Schema

    rng = np.random.default_rng(2)
    n = 800
    frame = pd.DataFrame({"id": np.arange(n), "age": rng.uniform(20, 70, n),
                          "sector": rng.choice(["a", "b", "c"], n), "hours": rng.uniform(0, 100, n)})
    frame["y"] = np.where(frame["age"] > 45, "old", "young")
    columns = ["id", "age", "sector", "hours"]
    clf_schema = Schema([Column("id", role="ignore"), Column("age", low=20.0, high=70.0),
                         Column("sector", kind="categorical", categories=("a", "b", "c")),
                         Column("hours", low=0.0, high=100.0),
                         Column("y", role="label", kind="categorical", categories=("young", "old"))])
    reg_schema = Schema([Column("id", role="ignore"), Column("age", low=20.0, high=70.0),
                         Column("sector", kind="categorical", categories=("a", "b", "c")),
                         Column("hours", role="label", low=0.0, high=100.0)])
    X = frame[columns]
    fitted = [ObjPertClassifier(2.0, 1e-6, schema=clf_schema, random_state=0).fit(X, frame["y"]),
              ObjPertClassifierCV(2.0, 1e-6, schema=clf_schema, lams=(10.0,), random_state=0).fit(X, frame["y"])]
    Xr = frame[["id", "age", "sector"]]
    fitted += [ObjPertRegressor(2.0, 1e-6, schema=reg_schema, random_state=0).fit(Xr, frame["hours"]),
               ObjPertRegressorCV(2.0, 1e-6, schema=reg_schema, lams=(10.0,), random_state=0).fit(Xr, frame["hours"]),
               OPSRegressor(2.0, 1e-6, schema=reg_schema, random_state=0).fit(Xr, frame["hours"]),
               AdaOPSRegressor(2.0, 1e-6, schema=reg_schema, random_state=0).fit(Xr, frame["hours"])]
    for est in fitted:
        raw = X if hasattr(est, "classes_") else Xr
        assert list(est.feature_names_in_) == list(raw.columns) and est.n_features_in_ == raw.shape[1]
        # the model's features: age, the three sectors (and hours for the classifiers)
        assert np.shape(est.coef_)[-1] == (5 if hasattr(est, "classes_") else 4)
        assert est.predict(raw.head(7)).shape == (7,)
        assert est.predict(raw.head(7)[list(raw.columns)[::-1]]).tolist() == est.predict(raw.head(7)).tolist()
    # a release rebuilt as an estimator reads the schema's feature columns
    rebuilt = ObjPertClassifier.from_release(fitted[0].release_)
    assert list(rebuilt.feature_names_in_) == ["age", "sector", "hours"]
    assert rebuilt.predict(X.head(9)).tolist() == fitted[0].predict(X.head(9)).tolist()
    # without a schema: scikit-learn's own behaviour (a DataFrame's names; none for an array)
    plain = ObjPertClassifier(classes=["young", "old"], random_state=0).fit(X[["age"]] / 100.0, frame["y"])
    assert list(plain.feature_names_in_) == ["age"] and plain.n_features_in_ == 1
    arr = ObjPertClassifier(classes=["young", "old"], random_state=0).fit(X[["age"]].to_numpy() / 100.0, frame["y"])
    assert not hasattr(arr, "feature_names_in_") and arr.n_features_in_ == 1


def test_a_one_vs_rest_model_with_a_chosen_lam_calibrates_sigma_for_the_k_fits_together():
    from pdpkit.accountant import compose

    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (500, 3)) / 2
    y = np.digitize(X @ np.array([1.0, -1.0, 0.5]), [-0.2, 0.2])
    est = ObjPertClassifier(1.0, 1e-6, classes=[0, 1, 2], lam=30.0, random_state=0).fit(X, y)
    assert est.lam_ == 30.0
    charges = est.privacy_events()
    eps = compose(charges, 1e-6)[0]
    assert 1.0 * (1 - 1e-6) <= eps <= 1.0 and est.privacy_spent().epsilon == pytest.approx(eps, rel=1e-9)
    # the smallest such sigma: 1% less noise misses the target (test the tester)
    less = ObjPertClassifier(1.0, 1e-6, classes=[0, 1, 2], lam=30.0, sigma=est.sigma_ * 0.99).privacy_events()
    assert compose(less, 1e-6)[0] > 1.0
    with pytest.raises(ValueError, match="lam=0.01 cannot reach"):  # log(1 + beta/lam) alone is above 1
        ObjPertClassifier(1.0, 1e-6, classes=[0, 1, 2], lam=0.01).fit(X, y)
    with pytest.raises(ValueError, match="give lam"):
        ObjPertClassifier(1.0, 1e-6, classes=[0, 1, 2], sigma=3.0).fit(X, y)
