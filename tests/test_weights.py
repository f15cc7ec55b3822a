"""Sample and class weights with a public weight bound: the fit, the guarantee, the policies and the report."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import expit

from pdpkit import accounting
from pdpkit.accountant import PrivacyAccountant
from pdpkit.audit import audit_delta_curve
from pdpkit.estimators import ObjPertClassifier, ObjPertRegressor
from pdpkit.release import weighting_statement
from pdpkit.objpert import (WeightedLoss, erm_fit_nonprivate, ex_post_pdp, objpert_fit, objpert_log_density,
                            weighted_labels)

CLASSES = [0, 1]


def _data(n=400, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d)) / math.sqrt(d)
    y = np.where(X @ np.linspace(2.0, -1.0, d) + 0.3 * rng.normal(size=n) > 0.0, 1, 0)
    return X, y


# ------------------------------------------------------------------ weights of one change nothing
@pytest.mark.parametrize("report", [None, "adaptive"])
def test_weights_of_one_give_the_unweighted_fit_and_guarantee_bit_for_bit(report):
    X, y = _data()
    kw = dict(classes=CLASSES, random_state=7, report=report, report_epsilon=1.0, report_delta=1e-6)
    a = ObjPertClassifier(**kw).fit(X, y)
    b = ObjPertClassifier(**kw).fit(X, y, sample_weight=np.ones(len(y)))
    assert np.array_equal(a.coef_, b.coef_) and a.intercept_ == b.intercept_
    ga, gb = a.release_.guarantee, b.release_.guarantee
    assert (ga.epsilon, ga.delta, ga.parts) == (gb.epsilon, gb.delta, gb.parts)
    # all-ones sample weights are a weighted fit at W = 1: the same numbers, and the file says so
    assert gb.accounting == f"{ga.accounting}; {weighting_statement(b.weighting_)}"
    assert a.privacy_spent().epsilon == b.privacy_spent().epsilon
    assert a.lam_ == b.lam_ and a.sigma_ == b.sigma_
    if report is not None:
        assert np.array_equal(a.report_.hessian_release, b.report_.hessian_release)
        assert np.array_equal(a.privacy_report(X[:5], y[:5]), b.privacy_report(X[:5], y[:5]))
    r1 = ObjPertRegressor(random_state=3).fit(X, X.sum(axis=1))
    r2 = ObjPertRegressor(random_state=3).fit(X, X.sum(axis=1), sample_weight=[1.0] * len(y))
    assert np.array_equal(r1.coef_, r2.coef_) and r1.intercept_ == r2.intercept_


def test_weighted_loss_with_unit_weights_is_the_unweighted_solver_to_the_last_bit():
    X, y = _data(n=300)
    ys = np.where(y == 1, 1.0, -1.0)
    f0 = objpert_fit(X, ys, "logistic", lam=1.0, sigma=1.0, rng=1)
    f1 = objpert_fit(X, weighted_labels(ys, 1.0), WeightedLoss("logistic"), lam=1.0, sigma=1.0, rng=1)
    assert np.array_equal(f0.theta, f1.theta) and np.array_equal(f0.theta_released, f1.theta_released)


# ------------------------------------------------------------------ integer weights are repeated records
def test_an_integer_weight_k_is_the_record_repeated_k_times_in_the_nonprivate_minimizer():
    X, y = _data(n=60, d=3, seed=2)
    ys = np.where(y == 1, 1.0, -1.0)
    k = np.random.default_rng(5).integers(0, 5, size=len(ys))
    W, lam = 4.0, 2.0
    # the estimators' form: weights k/W on the objective divided by W
    theta_w = erm_fit_nonprivate(X, weighted_labels(ys, k / W), WeightedLoss("logistic"), lam=lam / W, tol=1e-13)
    theta_rep = erm_fit_nonprivate(np.repeat(X, k, axis=0), np.repeat(ys, k), "logistic", lam=lam, tol=1e-13)
    np.testing.assert_allclose(theta_w, theta_rep, rtol=0, atol=1e-9)
    # an independent check: the gradient of the weighted objective, written out, vanishes there
    grad = -(X.T @ (k * ys * expit(-ys * (X @ theta_rep)))) + lam * theta_rep
    assert np.linalg.norm(grad) < 1e-8
    # a wrong variant (the weights ignored) is far from it
    theta_bad = erm_fit_nonprivate(X, ys, "logistic", lam=lam, tol=1e-13)
    assert np.linalg.norm(theta_bad - theta_rep) > 1e-2


def test_the_estimators_fit_is_the_repeated_records_fit_up_to_the_solvers_tolerance():
    X, y = _data(n=40, d=3, seed=3)
    k = np.random.default_rng(1).integers(0, 4, size=len(y))
    kw = dict(classes=CLASSES, random_state=11, weight_bound=3.0, fit_intercept=False)
    a = ObjPertClassifier(**kw).fit(X, y, sample_weight=k)
    b = ObjPertClassifier(**kw).fit(np.repeat(X, k, axis=0), np.repeat(y, k))
    # same noise (same seed, same d), same objective: equal up to the public tolerance tau/lam (and rounding)
    assert np.max(np.abs(a.coef_ - b.coef_)) <= 2 * a.grad_tol / a.lam_ + 1e-12


# ------------------------------------------------------------------ the guarantee scales with W
@pytest.mark.parametrize("W", [0.5, 3.0, 40.0])
def test_objective_divided_by_W_has_the_profile_of_the_constants_times_W(W):
    L, beta, lam, sigma = 1.3, 0.25 * 1.69, 3.0, 2.5
    for delta in (1e-3, 1e-6):
        scaled_constants = accounting.objpert_epsilon(delta, L=W * L, beta=W * beta, lam=lam, sigma=sigma, sharp=True)
        divided_objective = accounting.objpert_epsilon(delta, L=L, beta=beta, lam=lam / W, sigma=sigma / W,
                                                       sharp=True)
        assert divided_objective == pytest.approx(scaled_constants, rel=1e-9)
    est = ObjPertClassifier(classes=CLASSES, weight_bound=W, lam=lam, sigma=sigma, fit_intercept=False)
    ev = est.privacy_events()[0].event
    assert (ev.L, ev.beta, ev.lam, ev.sigma) == (1.0, 0.25, lam / W, sigma / W)


def test_calibration_with_a_weight_bound_meets_the_target_at_the_scaled_constants():
    est = ObjPertClassifier(1.0, 1e-6, classes=CLASSES, weight_bound=5.0, fit_intercept=False)
    X, y = _data(n=200)
    est.fit(X, y, sample_weight=np.full(len(y), 2.0))
    eps = accounting.objpert_epsilon(1e-6, L=5.0, beta=5.0 * 0.25, lam=est.lam_, sigma=est.sigma_, sharp=True)
    assert eps <= 1.0 + 1e-6
    assert est.privacy_spent().epsilon <= 1.0 + 1e-6
    assert "weight_bound=5" in est.privacy_spent().accounting and "refused" in est.privacy_spent().accounting


def _sampler_1d(x, y, v, lam, sigma):
    """Exact draws of ObjPert's minimizer in one dimension (logistic loss, weights v): bisection on J' = -b."""
    x, y, v = (np.asarray(a, dtype=float) for a in (x, y, v))

    def grad(theta):
        return (-(v * y * x)[None, :] * expit(-(y * x)[None, :] * theta[:, None])).sum(axis=1) + lam * theta

    def draw(m, rng):
        b = sigma * rng.standard_normal(m)
        span = (np.abs(b) + np.sum(v * np.abs(x))) / lam + 1.0
        lo, hi = -span, span
        for _ in range(64):
            mid = 0.5 * (lo + hi)
            up = grad(mid) + b > 0
            hi = np.where(up, mid, hi)
            lo = np.where(up, lo, mid)
        return 0.5 * (lo + hi)

    return draw


def _log_density_1d(theta, x, y, v, lam, sigma):
    x, y, v = (np.asarray(a, dtype=float) for a in (x, y, v))
    u = (y * x)[None, :] * theta[:, None]
    g = (-(v * y * x)[None, :] * expit(-u)).sum(axis=1) + lam * theta
    h = (v * x * x * expit(u) * expit(-u)).sum(axis=1) + lam
    return -g * g / (2 * sigma * sigma) + np.log(h)


def test_audit_worst_case_neighbour_of_weight_W_within_the_profile_and_an_unscaled_claim_is_refuted():
    # the mechanism the estimators run for weight bound W: objective / W, weights w / W, lam / W, sigma / W
    W, lam, sigma = 4.0, 4.0, 2.0
    x = np.array([0.4, -0.7, 0.9, 0.1])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    w = np.array([1.0, 4.0, 2.5, 0.0])
    lam_n, sigma_n = lam / W, sigma / W
    # worst-case neighbour: a record of the largest norm, weight W, label against the fit
    x2, y2, v2 = np.append(x, 1.0), np.append(y, -1.0), np.append(w / W, 1.0)
    v1 = w / W
    # the package's exact density (weighted loss, complex labels) agrees with the one written out here
    th = np.linspace(-2, 2, 7)
    ours = objpert_log_density(th[:, None], x2[:, None], weighted_labels(y2, v2), WeightedLoss("logistic"),
                               lam=lam_n, sigma=sigma_n)
    np.testing.assert_allclose(ours, _log_density_1d(th, x2, y2, v2, lam_n, sigma_n) - 0.5 * math.log(
        2 * math.pi * sigma_n ** 2), rtol=1e-12, atol=1e-12)

    def loss(theta):
        return (_log_density_1d(theta, x2, y2, v2, lam_n, sigma_n) - _log_density_1d(theta, x, y, v1, lam_n, sigma_n))

    eps = np.array([0.25, 0.5, 1.0, 1.5])
    common = dict(statistic=loss, thresholds=eps, eps=eps, n_samples=60_000, rng=np.random.default_rng(2024),
                  progress=False)
    sample_big = _sampler_1d(x2, y2, v2, lam_n, sigma_n)
    sample_small = _sampler_1d(x, y, v1, lam_n, sigma_n)
    claimed = accounting.objpert_delta(eps, L=W * 1.0, beta=W * 0.25, lam=lam, sigma=sigma, sharp=True)
    assert accounting.objpert_delta(eps, L=1.0, beta=0.25, lam=lam_n, sigma=sigma_n, sharp=True) == \
        pytest.approx(claimed, rel=1e-9)
    right = audit_delta_curve(sample_big, sample_small, claimed_delta=claimed, **common)
    assert right.passed, right.summary()
    # the wrong variant: the sensitivity not scaled by W (the loss's own constants at the weighted lam, sigma)
    wrong_claim = accounting.objpert_delta(eps, L=1.0, beta=0.25, lam=lam, sigma=sigma, sharp=True)
    wrong = audit_delta_curve(sample_big, sample_small, claimed_delta=wrong_claim, **common)
    assert not wrong.passed, wrong.summary()


def test_ex_post_pdp_of_a_weighted_member_is_the_exact_log_density_ratio():
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(30, 2)) / math.sqrt(2)
    ys = np.where(rng.uniform(size=30) < 0.5, 1.0, -1.0)
    v = rng.uniform(0, 1, size=30)
    loss = WeightedLoss("logistic")
    yc = weighted_labels(ys, v)
    fit = objpert_fit(X, yc, loss, lam=2.0, sigma=0.7, rng=3)
    for i in (0, 7, 19):
        eps = ex_post_pdp(fit, X, yc, X[i], yc[i], member=True)
        keep = np.arange(30) != i
        lp = objpert_log_density(fit.theta, X, yc, loss, lam=2.0, sigma=0.7)
        lq = objpert_log_density(fit.theta, X[keep], yc[keep], loss, lam=2.0, sigma=0.7)
        # at the solver's point theta, b = -grad J(theta) + O(tau): the ratio agrees to rounding and tolerance
        assert eps == pytest.approx(abs(lp - lq), abs=1e-6)
    # a member with another weight is not a record of the data set
    with pytest.raises(ValueError, match="not a record"):
        ex_post_pdp(fit, X, yc, X[0], weighted_labels(ys[:1], min(1.0, v[0] + 0.1))[0], member=True)


# ------------------------------------------------------------------ the policies
def test_refuse_names_no_value_row_or_count_and_clip_is_the_fit_on_clipped_weights():
    X, y = _data(n=200)
    kw = dict(classes=CLASSES, random_state=5, weight_bound=2.0)
    messages = set()
    for over in ([3], [0, 50, 199], list(range(40))):
        sw = np.ones(len(y))
        sw[over] = 7.5 + len(over)
        with pytest.raises(ValueError) as err:
            ObjPertClassifier(**kw).fit(X, y, sample_weight=sw)
        messages.add(str(err.value))
    assert len(messages) == 1
    (msg,) = messages
    assert "weight_bound=2" in msg and "weight_policy='clip'" in msg
    for leak in ("7.5", "8.5", "10.5", "47.5", "50", "199", "40 "):
        assert leak not in msg
    sw = np.random.default_rng(0).uniform(0, 5, size=len(y))
    a = ObjPertClassifier(**kw, weight_policy="clip").fit(X, y, sample_weight=sw)
    b = ObjPertClassifier(**kw).fit(X, y, sample_weight=np.minimum(sw, 2.0))
    assert np.array_equal(a.coef_, b.coef_) and a.intercept_ == b.intercept_
    assert "clipped" in a.privacy_spent().accounting and "refused" in b.privacy_spent().accounting
    assert a.weighting_["weight_policy"] == "clip" and "weight_policy='clip'" in repr(a)


@pytest.mark.parametrize("k", [2, 3])
def test_a_refused_weight_spends_nothing_when_the_class_weights_are_public(k):
    """Under "refuse" with public class weights, the check runs before the accountant is charged; with class
    weights from a noisy count it needs the count, so the charge stands (the failure may depend on the noise)."""
    X, y = _data(n=120)
    classes = list(range(k))
    y = np.arange(len(y)) % k if k > 2 else y
    sw = np.ones(len(y))
    sw[5] = 3.0
    for extra, spent in (({}, False), ({"class_weight": {c: 1.0 for c in classes}}, False),
                         ({"class_weight": "balanced", "class_prior": [1 / k] * k}, False),
                         ({"class_weight": "balanced", "weight_bound": 2.0 * k, "class_count_epsilon": 1.0,
                           "class_count_delta": 1e-6}, True)):
        kw = {"weight_bound": 2.0, **extra}
        if extra.get("class_weight") == "balanced" and "class_prior" not in extra:
            sw_k = sw * 10 * k  # above W = 2k whatever the noisy count gives
        else:
            sw_k = sw
        acc = PrivacyAccountant(50.0, 1e-3)
        with pytest.raises(ValueError, match="exceeds weight_bound"):
            ObjPertClassifier(classes=classes, accountant=acc, **kw).fit(X, y, sample_weight=sw_k)
        assert (len(acc.ledger) > 0) == spent, (extra, acc.ledger)
    acc = PrivacyAccountant(50.0, 1e-3)
    with pytest.raises(ValueError, match="exceeds weight_bound"):
        ObjPertRegressor(weight_bound=2.0, accountant=acc).fit(X, X.sum(axis=1), sample_weight=sw)
    assert len(acc.ledger) == 0


@pytest.mark.parametrize("bad", [-1.0, np.nan, np.inf])
def test_negative_or_non_finite_weights_are_refused_naming_the_parameter_only(bad):
    X, y = _data(n=50)
    sw = np.ones(len(y))
    sw[17] = bad
    for policy in ("refuse", "clip"):
        with pytest.raises(ValueError, match="^sample_weight") as err:
            ObjPertClassifier(classes=CLASSES, weight_policy=policy, weight_bound=9.0).fit(X, y, sample_weight=sw)
        assert "17" not in str(err.value) and "nan" not in str(err.value).lower().replace("no nan", "")
    with pytest.raises(ValueError, match="one weight per row"):
        ObjPertClassifier(classes=CLASSES).fit(X, y, sample_weight=np.ones(len(y) + 1))


def test_bad_weight_parameters_raise_naming_them():
    X, y = _data(n=50)
    with pytest.raises(ValueError, match="weight_policy"):
        ObjPertClassifier(classes=CLASSES, weight_policy="ignore").fit(X, y)
    with pytest.raises(ValueError, match="weight_bound"):
        ObjPertRegressor(weight_bound=0.0).fit(X, y.astype(float))
    with pytest.raises(TypeError, match="weight_bound"):
        ObjPertRegressor(weight_bound="2").fit(X, y.astype(float))


# ------------------------------------------------------------------ class weights
def test_class_weight_dict_is_sample_weight_of_the_class_and_bounded_publicly():
    X, y = _data()
    cw = {0: 0.5, 1: 2.0}
    a = ObjPertClassifier(classes=CLASSES, random_state=2, weight_bound=2.0, class_weight=cw).fit(X, y)
    b = ObjPertClassifier(classes=CLASSES, random_state=2, weight_bound=2.0).fit(
        X, y, sample_weight=np.where(y == 1, 2.0, 0.5))
    assert np.array_equal(a.coef_, b.coef_) and a.intercept_ == b.intercept_
    assert a.weighting_["class_weight"] == {0: 0.5, 1: 2.0}
    # a class weight above the bound under "refuse" is refused before any record is read (public numbers)
    with pytest.raises(ValueError, match=r"class_weight\[1\]=2 exceeds weight_bound=1"):
        ObjPertClassifier(classes=CLASSES, class_weight=cw).fit(X, y)
    with pytest.raises(ValueError, match="not among the classes"):
        ObjPertClassifier(classes=CLASSES, class_weight={2: 1.0}).fit(X, y)


def test_balanced_from_public_frequencies_is_one_over_k_p():
    X, y = _data()
    prior = {0: 0.25, 1: 0.75}
    a = ObjPertClassifier(classes=CLASSES, random_state=2, weight_bound=2.0, class_weight="balanced",
                          class_prior=prior).fit(X, y)
    b = ObjPertClassifier(classes=CLASSES, random_state=2, weight_bound=2.0,
                          class_weight={0: 1 / (2 * 0.25), 1: 1 / (2 * 0.75)}).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_)
    assert a.weighting_["class_weight_source"] == "class_prior"
    assert [c.name for c in a.release_.ledger] == [c.name for c in b.release_.ledger]
    with pytest.raises(ValueError, match="class_prior"):
        ObjPertClassifier(classes=CLASSES, class_weight="balanced").fit(X, y)


def test_balanced_from_a_private_count_is_charged_and_composed():
    X, y = _data()
    acc = PrivacyAccountant(5.0, 1e-4)
    est = ObjPertClassifier(classes=CLASSES, random_state=2, weight_bound=3.0, weight_policy="clip",
                            class_weight="balanced", class_count_epsilon=0.2, class_count_delta=1e-6,
                            accountant=acc)
    names = [c.name for c in est.privacy_events()]
    assert names == ["ObjPertClassifier class counts", "ObjPertClassifier model"]
    est.fit(X, y)
    assert [c.name for c in acc.ledger] == names
    count = acc.ledger[0].event
    assert count.mu == pytest.approx(1.0 / est._count_sigma())  # L2 sensitivity 1
    assert est.privacy_spent().epsilon == acc.spent().epsilon
    assert est.weighting_["class_weight_source"] == "noisy class count"
    # the class weights are a post-processing of the noisy count, not the raw counts' 1/(K p)
    raw = len(y) / (2 * np.bincount(y))
    assert not np.allclose([est.weighting_["class_weight"][c] for c in CLASSES], raw, rtol=0, atol=1e-12)
    # without an accountant, the fit's own ledger holds the count: the release's guarantee covers it
    solo = ObjPertClassifier(classes=CLASSES, random_state=2, weight_bound=3.0, weight_policy="clip",
                             class_weight="balanced", class_count_epsilon=0.2, class_count_delta=1e-6).fit(X, y)
    assert [c.name for c in solo.release_.ledger] == names
    assert solo.privacy_spent().epsilon > 1.0


# ------------------------------------------------------------------ the report with weights
@pytest.mark.parametrize("method", ["data-independent", "data-dependent", "adaptive"])
def test_report_bound_grows_with_the_weight_and_the_bound_at_W_is_the_default(method):
    X, y = _data(n=500)
    sw = np.random.default_rng(3).uniform(0, 3, size=len(y))
    est = ObjPertClassifier(classes=CLASSES, random_state=4, weight_bound=3.0, lam=300.0, report=method,
                            report_epsilon=1.0, report_delta=1e-6).fit(X, y, sample_weight=sw)
    t, ty = X[:20], y[:20]
    at_w = np.asarray(est.privacy_report(t, ty, sample_weight=sw[:20]))
    at_bound = np.asarray(est.privacy_report(t, ty, sample_weight=np.full(20, 3.0)))
    default = np.asarray(est.privacy_report(t, ty))
    np.testing.assert_array_equal(at_bound, default)
    assert np.all(at_w <= at_bound) and np.any(at_w < 0.9 * at_bound)
    zero = np.asarray(est.privacy_report(t, ty, sample_weight=np.zeros(20)))
    np.testing.assert_array_equal(zero, 0.0)  # a record of weight 0 is not in the objective at all
    # the report's own sensitivities are those of a weight at most 1 after division by W
    assert est.report_.loss.name == "logistic" and not isinstance(est.report_.loss, WeightedLoss)


def test_report_bounds_a_weighted_members_exact_ex_post_loss():
    from pdpkit.objpert import released_state_nonprivate
    from pdpkit.report import privacy_report

    X, y = _data(n=300, d=2, seed=8)
    ys = np.where(y == 1, 1.0, -1.0)
    v = np.random.default_rng(9).uniform(0, 1, size=len(ys))
    loss = WeightedLoss("logistic")
    yc = weighted_labels(ys, v)
    hits = 0
    for seed in range(20):
        fit = objpert_fit(X, yc, loss, lam=20.0, sigma=1.0, rng=seed)
        rep = privacy_report(fit, X, yc, method="data-independent", rho=0.05, rng=seed)
        rel = released_state_nonprivate(fit, X, yc)
        exact = ex_post_pdp(rel, X, yc, X[:10], yc[:10], member=True)
        bound = rep.epsilon_bound(X[:10], ys[:10], weight=v[:10])
        hits += int(np.sum(bound >= exact))
        # a wrong variant, the weights left out of the bound (weight 1 for everyone), is larger, not smaller
        assert np.all(rep.epsilon_bound(X[:10], ys[:10]) >= bound)
    assert hits >= 0.9 * 200


# ------------------------------------------------------------------ model selection passes the weights
def test_cross_val_score_and_grid_search_route_sample_weight_to_fit(monkeypatch):
    import sklearn
    from sklearn.model_selection import GridSearchCV, cross_val_score

    X, y = _data(n=120)
    sw = np.random.default_rng(0).uniform(0.5, 2, size=len(y))
    seen = []
    original = ObjPertClassifier._checked_sample_weight

    def spy(self, sample_weight, n):
        seen.append(None if sample_weight is None else np.asarray(sample_weight).copy())
        return original(self, sample_weight, n)

    monkeypatch.setattr(ObjPertClassifier, "_checked_sample_weight", spy)
    with sklearn.config_context(enable_metadata_routing=True), pytest.warns(UserWarning):
        est = ObjPertClassifier(classes=CLASSES, weight_bound=2.0, random_state=0).set_fit_request(sample_weight=True)
        cross_val_score(est, X, y, cv=3, params={"sample_weight": sw})
        assert len(seen) == 3 and all(s is not None and s.shape[0] == 80 for s in seen)
        assert all(np.all(np.isin(s, sw)) for s in seen)
        seen.clear()
        GridSearchCV(est, {"epsilon": [1.0, 2.0]}, cv=2).fit(X, y, sample_weight=sw)
        assert len(seen) == 5 and all(s is not None for s in seen)
