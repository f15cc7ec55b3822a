"""The accountant: tight composition of a ledger, a budget that refuses before any noise, and the
workflow around it (schema, one-vs-rest, release in use, pickles and clones)."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
from sklearn.base import clone

from pdpkit.accountant import (
    BudgetExceededError,
    Charge,
    PrivacyAccountant,
    compose,
    ledger_guarantee,
    objpert_calibrate_composed,
)
from pdpkit.accounting import objpert_delta_composed, objpert_output_delta, objpert_rdp, rdp_to_epsilon
from pdpkit.estimators import ObjPertClassifier, ObjPertRegressor
from pdpkit.events import GaussianEvent, ObjPertEvent
from pdpkit.gaussian import gaussian_epsilon
from pdpkit.release import Release, SeededReleaseWarning

L, BETA = math.sqrt(2.0), 0.5
#: The public classes of the 0/1 labels the tests fit.
CLASSES = [0, 1]


def _objpert(count=1, lam=3.0, sigma=8.0, mu_out=1e-3):
    return Charge(name="model", event=ObjPertEvent(L=L, beta=BETA, lam=lam, sigma=sigma, mu_out=mu_out),
                  count=count, delta=1e-6)


# ------------------------------------------------------------------ composition
def test_gaussians_compose_exactly_as_one_gaussian():
    ledger = [Charge(name=f"g{i}", event=GaussianEvent(mu=m)) for i, m in enumerate((0.3, 0.4))]
    eps, acc = compose(ledger, 1e-6)
    assert acc == "gaussian"
    assert eps == pytest.approx(float(gaussian_epsilon(1e-6, sensitivity=0.5, sigma=1.0)), rel=1e-12)
    # a deliberately wrong variant (adding the epsilons) is looser
    assert eps < sum(float(gaussian_epsilon(1e-6, sensitivity=m, sigma=1.0)) for m in (0.3, 0.4))


def test_one_fit_with_gaussians_is_the_exact_quadrature():
    g = Charge(name="report", event=GaussianEvent(mu=0.2))
    eps, acc = compose([_objpert(), g], 1e-6)
    assert acc == "objpert-profile+gaussians"
    d = float(objpert_output_delta(eps, L=L, beta=BETA, lam=3.0, sigma=8.0, mu=math.hypot(1e-3, 0.2), sharp=True))
    assert d <= 1e-6 * (1 + 1e-9) and d == pytest.approx(1e-6, rel=1e-6)  # quadrature to 1e-10


def test_several_fits_are_at_most_both_independent_bounds_and_close_to_the_pld():
    eps, acc = compose([_objpert(count=4, mu_out=0.0)], 1e-6)
    assert acc == "pld+rdp"
    # dp_accounting's composition of the same pair through pdpkit.accounting (another code path)
    d_pld = float(objpert_delta_composed(eps, k=4, L=L, beta=BETA, lam=3.0, sigma=8.0, sharp=True))
    assert d_pld <= 1e-6 * (1 + 1e-6)
    orders = np.linspace(1.1, 200, 800)
    eps_rdp = rdp_to_epsilon(orders, 4 * objpert_rdp(orders, L=L, beta=BETA, lam=3.0, sigma=8.0, sharp=True),
                             delta=1e-6)[0]
    assert eps <= eps_rdp * (1 + 1e-9)
    # and far below basic composition
    one, _ = compose([_objpert(count=1, mu_out=0.0)], 2.5e-7)
    assert eps < 4 * one


def test_ledger_order_does_not_matter_and_the_cache_keys_on_parameters():
    a, b = _objpert(count=2), Charge(name="s", event=GaussianEvent(mu=0.1))
    assert compose([a, b], 1e-6)[0] == compose([b, a], 1e-6)[0]
    assert compose([_objpert(count=2, sigma=9.0)], 1e-6)[0] < compose([a], 1e-6)[0]


@pytest.mark.parametrize("count", [1, 3, 10])
def test_calibration_for_several_fits_meets_the_target_and_is_tight(count):
    lam, sigma = objpert_calibrate_composed(1.0, 1e-6, L=L, beta=BETA, count=count, mu_out=1e-3)
    eps, _ = compose([_objpert(count=count, lam=lam, sigma=sigma)], 1e-6)
    assert eps <= 1.0 and eps > 1.0 - 1e-4  # within 1e-4 of the target: the budget is used


def test_charge_round_trip_and_strictness():
    c = _objpert(count=3)
    assert Charge.from_dict(c.to_dict()) == c
    entry = {"name": "x", "kind": "gaussian", "params": {"mu": 1.0}, "count": 1, "delta": 1e-6}
    with pytest.raises(ValueError, match="kind"):
        Charge.from_dict({**entry, "kind": "no-such-mechanism"})
    with pytest.raises(ValueError, match="unknown"):
        Charge.from_dict({**entry, "params": {"mu": 1.0, "extra": 2}})
    with pytest.raises(TypeError, match="mu"):
        Charge.from_dict({**entry, "params": {"mu": "1"}})
    with pytest.raises(ValueError, match="count"):
        Charge(name="x", event=GaussianEvent(mu=1.0), count=0)


# ------------------------------------------------------------------ the budget
def test_budget_refuses_before_anything_is_charged():
    budget = float(gaussian_epsilon(1e-6, sensitivity=0.25, sigma=1.0))
    acc = PrivacyAccountant(budget, 1e-6)
    assert acc.charge_gaussian(mu=0.2, name="a") == 0  # a charge returns its ledger position
    before = acc.ledger
    with pytest.raises(BudgetExceededError, match="budget"):
        acc.charge_gaussian(mu=0.2, name="b")  # together mu = 0.283 > 0.25
    assert acc.ledger == before
    assert acc.spent().epsilon <= budget and acc.remaining() > 0
    assert acc.charge_gaussian(mu=0.15, name="c") == 1  # together exactly mu = 0.25: allowed; "b" took no place
    assert acc.spent().epsilon == pytest.approx(budget, rel=1e-9)
    assert [p.name for p in acc.spent().parts] == ["a", "c"]


def test_an_estimator_over_budget_draws_no_noise_and_a_clone_shares_the_budget():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] > 0).astype(int)
    acc = PrivacyAccountant(1.2, 1e-5)
    clf = ObjPertClassifier(1.0, 1e-6, classes=CLASSES, accountant=acc, random_state=1).fit(X, y)
    assert clf.privacy_spent().epsilon == pytest.approx(acc.spent().epsilon)
    assert [c.name for c in clf.release_.ledger] == ["ObjPertClassifier model"]
    twin = clone(clf)
    assert twin.accountant is acc and copy.deepcopy(acc) is acc
    gen = np.random.default_rng(5)
    state = gen.bit_generator.state
    with pytest.raises(BudgetExceededError):
        twin.set_params(random_state=gen).fit(X, y)
    assert gen.bit_generator.state == state  # not one number drawn
    assert len(acc.ledger) == 1
    # the release states the session's total and verifies from its ledger
    with pytest.warns(SeededReleaseWarning):  # random_state=1: private only while the seed stays secret
        rel = Release.from_json(clf.release_.to_json())
    assert rel.guarantee.epsilon == pytest.approx(clf.privacy_spent().epsilon)


def test_a_ledger_without_the_release_own_fit_is_refused():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 1] > 0).astype(int)
    rel = ObjPertClassifier(1.0, 1e-6, classes=CLASSES, random_state=0).fit(X, y).release_
    data = rel.to_dict()
    data["ledger"][0]["params"]["sigma"] *= 2  # claims more noise than was drawn
    data["guarantee"] = ledger_guarantee([Charge.from_dict(c) for c in data["ledger"]], 1e-6).to_dict()
    import json

    with pytest.raises(ValueError, match="ledger"):
        Release.from_json(json.dumps(data))


def test_pickle_holds_no_seed():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 2))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] > 0).astype(int)
    clf = ObjPertClassifier(classes=CLASSES, random_state=1234).fit(X, y)
    back = pickle.loads(pickle.dumps(clf))
    assert back.random_state is None and clf.random_state == 1234
    assert np.array_equal(back.predict(X), clf.predict(X))


# ------------------------------------------------------------------ schema, release in use
def _frame(n=400, seed=0):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    age = rng.uniform(18, 90, n)
    color = rng.choice(["red", "green", "blue"], n)
    label = np.where(age + 20 * (color == "red") + rng.normal(0, 5, n) > 60, "yes", "no")
    return pd.DataFrame({"id": np.arange(n), "age": age, "color": color, "label": label})


def _schema():
    from pdpkit.schema import Column, Schema

    return Schema(columns=(Column("id", role="ignore"), Column("age", low=0.0, high=120.0),
                           Column("color", kind="categorical", categories=("red", "green", "blue")),
                           Column("label", role="label", kind="categorical", categories=("no", "yes"))))


def test_schema_fit_predict_and_a_release_that_reads_columns_by_name():
    df = _frame()
    clf = ObjPertClassifier(2.0, 1e-6, schema=_schema(), random_state=0).fit(df, df["label"])
    assert list(clf.classes_) == ["no", "yes"]
    with pytest.warns(SeededReleaseWarning):
        rel = Release.from_json(clf.release_.to_json())
    shuffled = df[["color", "label", "age", "id"]]
    assert np.array_equal(rel.predict(shuffled), clf.predict(df))
    assert np.allclose(rel.predict_proba(df), clf.predict_proba(df))
    with pytest.raises(ValueError, match="age"):
        rel.predict(df.drop(columns=["age"]))
    est = ObjPertClassifier.from_release(rel)
    assert np.array_equal(est.predict(df), clf.predict(df))


def test_release_without_schema_reorders_named_columns_and_refuses_missing_ones():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    y = (X[:, 0] - X[:, 2] > 0).astype(int)
    clf = ObjPertClassifier(classes=CLASSES, random_state=0).fit(df, y)
    rel = clf.release_
    assert np.allclose(rel.decision_function(df[["c", "a", "b"]]), clf.decision_function(df))
    with pytest.raises(ValueError, match="'b'"):
        rel.decision_function(df[["a", "c"]])


def test_regression_labels_scaled_by_public_bounds():
    pd = pytest.importorskip("pandas")
    from pdpkit.schema import Column, Schema

    rng = np.random.default_rng(4)
    x = rng.uniform(0, 10, 2000)
    y = 100 + 20 * x + rng.normal(0, 5, x.size)
    df = pd.DataFrame({"x": x, "y": y})
    sch = Schema(columns=(Column("x", low=0.0, high=10.0), Column("y", role="label", low=0.0, high=400.0)))
    reg = ObjPertRegressor(2.0, 1e-6, schema=sch, random_state=0).fit(df, df["y"])
    pred = reg.predict(df)
    assert np.corrcoef(pred, y)[0, 1] > 0.9
    with pytest.warns(SeededReleaseWarning):
        back = Release.from_json(reg.release_.to_json())
    assert np.allclose(back.predict(df), pred)


def test_schema_report_with_and_without_labels():
    df = _frame(seed=1)
    clf = ObjPertClassifier(2.0, 1e-6, schema=_schema(), report="data-independent", random_state=0).fit(df, df["label"])
    with_label = np.asarray(clf.privacy_report(df.head(20), df["label"].head(20)))
    without = np.asarray(clf.privacy_report(df.head(20)))
    assert np.all(without >= with_label - 1e-12)  # the bound for every label dominates the bound for one


@pytest.mark.parametrize("eps", [0.1, 2.0])
def test_a_private_selection_fits_an_accountant_of_its_own_budget(eps):
    from sklearn.datasets import load_breast_cancer

    from pdpkit.model_selection import ObjPertClassifierCV

    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.min(0)) / (X.max(0) - X.min(0)) / math.sqrt(X.shape[1])  # public-style bounds for the test
    acc = PrivacyAccountant(eps, 1e-6)
    cv = ObjPertClassifierCV(eps, 1e-6, classes=CLASSES, accountant=acc, random_state=0).fit(X, y)
    assert acc.spent().epsilon <= cv.privacy_spent().epsilon * (1 + 1e-9) <= eps * (1 + 1e-9)


# ------------------------------------------------------------------ the budget planner
def _planner_data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 4)) / 2
    return X, (X @ np.array([1.0, -1.0, 0.5, 0.0]) > 0).astype(int)


def test_plan_meets_the_budget_tightly_and_the_planned_fits_fit_in_it():
    from pdpkit.accountant import plan_budget

    model = ObjPertClassifier(classes=CLASSES, report="adaptive", report_epsilon=0.5, report_delta=1e-6)
    plan = plan_budget(2.0, 1e-5, {"model": model.budget_part(), "report": model.budget_part("report")},
                       weights={"model": 2.0, "report": 1.0})
    assert 2.0 * (1 - 2e-3) <= plan.total_epsilon <= 2.0
    assert plan["model"].epsilon == pytest.approx(2.0 * plan["report"].epsilon, rel=1e-12)  # the weights
    assert plan.basic_epsilon > 2.2  # composition is tighter than adding: the parts get more than 2 in all
    # the plan is what the estimator then charges: an accountant of exactly the budget accepts the fit
    X, y = _planner_data()
    acc = PrivacyAccountant(2.0, 1e-5)
    fitted = ObjPertClassifier(plan["model"].epsilon, plan["model"].delta, classes=CLASSES, report="adaptive",
                               report_epsilon=plan["report"].epsilon, report_delta=plan["report"].delta,
                               accountant=acc).fit(X, y)
    assert acc.spent().epsilon == pytest.approx(plan.total_epsilon, rel=1e-9) and fitted.release_ is not None
    # test the tester: one percent more for every part no longer fits
    more = plan_budget(2.0 * 1.01, 1e-5, {"model": model.budget_part(), "report": model.budget_part("report")},
                       weights={"model": 2.0, "report": 1.0})
    assert compose([c for p in more.parts for c in p.charges], 1e-5)[0] > 2.0


def test_plan_of_a_selection_a_scaler_and_two_models_and_its_refusals():
    from pdpkit.accountant import plan_budget
    from pdpkit.model_selection import ObjPertClassifierCV
    from pdpkit.preprocessing import PrivateStandardScaler

    parts = {"scaler": PrivateStandardScaler(bounds=(0.0, 1.0)).budget_part(4),
             "selection": ObjPertClassifierCV(classes=[0, 1, 2], lams=(3.0, 30.0)).budget_part(),
             "model": ObjPertClassifier(classes=[0, 1, 2]).budget_part()}
    plan = plan_budget(3.0, 1e-5, parts, rtol=0.25)  # coarse: each step calibrates a selection (~0.5 s)
    assert plan.total_epsilon <= 3.0 and plan.accounting == "rdp"  # a selection composes in RDP
    assert [c.kind for c in plan["selection"].charges] == ["selection"]
    assert plan["model"].charges[0].count == 3  # three one-vs-rest fits
    with pytest.raises(ValueError, match="at least one part"):
        plan_budget(1.0, 1e-6, {})
    with pytest.raises(TypeError, match="callables"):
        plan_budget(1.0, 1e-6, {"x": 1.0})
    with pytest.raises(ValueError, match="classes"):  # a classifier needs its public classes to plan
        ObjPertClassifier().budget_part()(1.0, 1e-6)


def test_what_an_estimator_plans_is_what_its_fit_charges_also_one_vs_rest_with_a_report():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (1200, 3)) / 2
    y = np.digitize(X @ np.array([1.0, -1.0, 0.5]), [-0.2, 0.2])
    for classes, labels in (([0, 1], (y > 0).astype(int)), ([0, 1, 2], y)):
        est = ObjPertClassifier(1.0, 1e-6, classes=classes, report="adaptive", report_epsilon=0.5,
                                report_delta=1e-6, random_state=0)
        planned = est.privacy_events()
        acc = PrivacyAccountant(10.0, 1e-5)
        est.set_params(accountant=acc).fit(X, labels)
        assert [c.to_dict() for c in acc.ledger] == [c.to_dict() for c in planned]
        assert [c.kind for c in planned] == ["objpert", "gaussian"]
        assert planned[1].count == (1 if len(classes) == 2 else 3)  # a report per one-vs-rest model


def test_a_plan_for_the_rest_of_a_session_composes_with_what_was_spent():
    from pdpkit.accountant import compose, plan_budget
    from pdpkit.events import GaussianEvent
    from pdpkit.gaussian import gaussian_sigma

    def gauss(eps, delta):
        return GaussianEvent(mu=1.0 / float(gaussian_sigma(eps, delta)))

    spent = (Charge(name="earlier", event=GaussianEvent(mu=0.2), delta=1e-6),)
    plan = plan_budget(2.0, 1e-6, {"a": gauss, "b": gauss}, spent=spent, rtol=1e-4)
    new = [c for p in plan.parts for c in p.charges]
    total = compose(spent + tuple(new), 1e-6)[0]
    assert total == pytest.approx(plan.total_epsilon) and 2.0 * (1 - 1e-3) <= total <= 2.0
    alone = plan_budget(2.0, 1e-6, {"a": gauss, "b": gauss}, rtol=1e-4)
    assert plan["a"].epsilon < alone["a"].epsilon  # test the tester: the spent charge leaves less
    with pytest.raises(ValueError, match="nothing is left"):
        plan_budget(0.5, 1e-6, {"a": gauss}, spent=(Charge(name="big", event=GaussianEvent(mu=3.0), delta=1e-6),))
    with pytest.raises(TypeError, match="Charge"):
        plan_budget(1.0, 1e-6, {"a": gauss}, spent=(1.0,))
