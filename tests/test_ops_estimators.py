"""OPSRegressor and AdaOPSRegressor: the law they release, its privacy on worst neighbours, the accounting.

Independent references: the released coefficients are checked against the OPS posterior
N(θ̂, (γH)⁻¹) formed here with numpy from the estimator's public λ and γ (Mahalanobis distances
against the χ² law, Kolmogorov–Smirnov); the privacy of that law on the worst newcomer of a
grid is estimated by Monte Carlo from scipy's multivariate normal densities (not pdpkit's
one-dimensional reduction); AdaOPS's composed profile against dp_accounting's PLD of the same
pair. Each check has a deliberately wrong variant that must fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.utils.estimator_checks import check_estimator

from pdpkit import ops
from pdpkit.accountant import BudgetExceededError, Charge, PrivacyAccountant, compose
from pdpkit.events import UnsupportedEventError, event_from_dict
from pdpkit.ops_estimators import AdaOPSRegressor, OPSRegressor

LABELS = (0.0, 10.0)


def _data(n: int = 30, d: int = 2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X *= 0.5 / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.clip(5.0 + X @ np.arange(1.0, d + 1.0) * 4.0 + rng.normal(size=n), *LABELS)
    return X, y


class _RawLabels(OPSRegressor):
    """A wrong variant: fits the labels on their own scale while claiming |y| <= 1."""

    def _prepare(self, X, y):
        rows, _ = super()._prepare(X, y)
        return rows, np.asarray(y, dtype=float)


def _spec_law(X, y, lam, gamma, *, raw=False):
    """OPS's posterior N(θ̂, (γH)⁻¹) on rows X (no intercept) and labels mapped onto [-1, 1], by numpy."""
    t = y if raw else (y - 5.0) / 5.0
    H = X.T @ X + lam * np.eye(X.shape[1])
    return np.linalg.solve(H, X.T @ t), np.linalg.inv(gamma * H)


# scikit-learn's checks fit on a few dozen rows: at (1, 1e-5) OPS refuses them (a newcomer's leverage
# alone would exceed the budget), so the plumbing is checked at a large epsilon
@pytest.mark.parametrize("est", [OPSRegressor(50.0, 0.1, row_norm="clip", random_state=0),
                                 AdaOPSRegressor(50.0, 0.1, kappa=0.1, row_norm="clip", random_state=0)],
                         ids=lambda e: type(e).__name__)
def test_check_estimator_passes(est):
    check_estimator(est, on_skip=None)


@pytest.mark.parametrize("variant", [OPSRegressor, _RawLabels])
def test_released_coefficients_follow_the_ops_posterior_exactly(variant):
    X, y = _data()
    fits = [variant(1.0, 1e-3, label_bounds=LABELS, n_max=31, fit_intercept=False, random_state=s).fit(X, y)
            for s in range(300)]
    m = fits[0]
    # the released coefficients on the label's scale are 5 θ (half-width 5, centre 5 without intercept)
    theta = np.array([f.coef_ for f in fits]) / 5.0
    assert all(f.intercept_ == 5.0 for f in fits)
    mean, cov = _spec_law(X, y, m.lam_, m.gamma_)
    z = theta - mean
    maha = np.einsum("ij,jk,ik->i", z, np.linalg.inv(cov), z)
    p = stats.kstest(maha, stats.chi2(df=2).cdf).pvalue
    if variant is OPSRegressor:
        assert p > 1e-4
    else:  # test the tester: labels on their own scale move the mean far from the claimed law
        assert p < 1e-4


def _mc_delta(eps, mean_p, cov_p, mean_q, cov_q, rng, m=200_000):
    """Monte Carlo δ_P‖Q(ε) = E_P[(1 - e^(ε - L))_+], L = log p/q, with its standard error."""
    s = rng.multivariate_normal(mean_p, cov_p, size=m)
    L = stats.multivariate_normal(mean_p, cov_p).logpdf(s) - stats.multivariate_normal(mean_q, cov_q).logpdf(s)
    v = np.maximum(0.0, -np.expm1(eps - L))
    return float(v.mean()), float(v.std() / math.sqrt(m))


@pytest.mark.parametrize("raw", [False, True])
def test_worst_newcomer_of_a_grid_meets_the_claim_and_the_unscaled_variant_does_not(raw):
    X, y = _data()
    eps, delta = 1.0, 1e-3
    m = OPSRegressor(eps, delta, label_bounds=LABELS, n_max=31, fit_intercept=False, random_state=0).fit(X, y)
    # the newcomer with the largest exact pDP on a grid of unit rows and extreme labels (chosen with
    # pdpkit; judged below by Monte Carlo with scipy's densities)
    ang = np.linspace(0.0, np.pi, 91)
    Z = np.c_[np.cos(ang), np.sin(ang)] * 0.5
    best = None
    for yz in LABELS:
        t = np.full(len(Z), yz if raw else (yz - 5.0) / 5.0)
        e = ops.ops_pdp_epsilon(X, y if raw else (y - 5.0) / 5.0, Z, t, lam=m.lam_, gamma=m.gamma_, delta=delta,
                                member=False)
        k = int(np.argmax(e))
        if best is None or e[k] > best[0]:
            best = (e[k], Z[k], yz)
    _, zx, zy = best
    P = _spec_law(X, y, m.lam_, m.gamma_, raw=raw)
    Q = _spec_law(np.vstack([X, zx]), np.append(y, zy), m.lam_, m.gamma_, raw=raw)
    rng = np.random.default_rng(7)
    worst = max(_mc_delta(eps, *P, *Q, rng), _mc_delta(eps, *Q, *P, rng))
    if not raw:
        assert worst[0] + 5.0 * worst[1] <= delta
    else:  # test the tester: labels up to 10 against a claimed bound of 1
        assert worst[0] - 5.0 * worst[1] > 3.0 * delta


def test_lam_floor_is_where_the_leverage_alone_meets_the_budget():
    for eps, delta in ((0.5, 1e-6), (1.0, 1e-5), (2.0, 1e-3)):
        lam = ops.ops_lam_floor(eps, delta, x_bound=2.0)
        ops.ops_gamma_for_dp(eps, delta, n=100, lam=1.001 * lam, x_bound=2.0)  # reachable just above
        with pytest.raises(ValueError, match="not reachable"):
            ops.ops_gamma_for_dp(eps, delta, n=100, lam=0.999 * lam, x_bound=2.0)


def test_ops_event_is_the_dp_bound_of_its_class_and_reads_back():
    X, y = _data(n=200, d=3)
    m = OPSRegressor(1.0, 1e-6, label_bounds=LABELS, random_state=0).fit(X, y)
    ev = m.event_
    assert ev.n == 201 and ev.x_bound == pytest.approx(math.sqrt(2.0)) and ev.y_bound == 1.0
    # R^2 p sqrt(n) / 4, or twice the smallest feasible λ when that is larger
    floor = ops.ops_lam_floor(1.0, 1e-6, x_bound=ev.x_bound)
    assert ev.lam == pytest.approx(max(2.0 * 4 * math.sqrt(200) / 4, 2 * floor))
    assert float(ops.ops_dp_epsilon(1e-6, n=201, lam=ev.lam, gamma=ev.gamma, x_bound=ev.x_bound)) <= 1.0
    assert float(ops.ops_dp_epsilon(1e-6, n=201, lam=ev.lam, gamma=1.01 * ev.gamma, x_bound=ev.x_bound)) > 1.0
    g = m.privacy_spent()
    assert g.epsilon == pytest.approx(1.0, rel=1e-8) and g.epsilon <= 1.0 and g.delta == 1e-6
    assert event_from_dict(ev.to_dict()) == ev
    with pytest.raises(TypeError, match="n must be an integer"):
        event_from_dict({"kind": "ops", "params": {**ev.params(), "n": 201.0}})
    # two OPS fits compose by RDP: above one fit, below the sum
    two = compose((Charge(name="a", event=ev, delta=1e-6), Charge(name="b", event=ev, delta=1e-6)), 1e-6)[0]
    assert 1.0 < two < 2.0


def test_adaops_profile_matches_dp_accountings_pld_of_the_same_pair():
    from dp_accounting.pld import common, privacy_loss_distribution

    ev = ops.adaops_event(1.0, 1e-5)
    pld = privacy_loss_distribution.from_gaussian_mechanism(
        ev.sigma_lam, value_discretization_interval=1e-4).compose(
        privacy_loss_distribution.from_privacy_parameters(
            common.DifferentialPrivacyParameters(ev.eps_ops, ev.delta_ops), value_discretization_interval=1e-4))
    p = 1.0 / (1.0 + math.exp(-ev.eps_ops))
    from pdpkit.gaussian import delta_from_mu

    gaps = []
    for e in (0.2, 0.4, 0.5, 0.6, 0.9):
        ref = pld.get_delta_for_epsilon(e) + ev.delta_fail  # pessimistic: at or above the exact value
        exact = ev.delta(e)
        assert exact <= ref * (1.0 + 1e-9) and ref - exact <= 1e-3 * exact
        # test the tester: the weights of the two shifted Gaussian profiles swapped
        mu = 1.0 / ev.sigma_lam
        dg = delta_from_mu(np.array([e - ev.eps_ops, e + ev.eps_ops]), np.array([mu, mu]))
        wrong = ev.delta_fail + ev.delta_ops + (1 - ev.delta_ops) * ((1 - p) * dg[0] + p * dg[1])
        gaps.append(abs(wrong - ref) / ref)
    assert max(gaps) > 0.1


def test_adaops_tight_budget_meets_the_target_and_leaves_ops_more_than_half():
    for eps in (0.5, 1.0, 2.0):
        b = ops.adaops_tight_budget(eps, 1e-6)
        got = ops.adaops_event(eps, 1e-6, budget=b).epsilon_with_gaussian(1e-6, mu=0.0)
        assert got <= eps and got == pytest.approx(eps, rel=1e-6)
        assert b.eps_ops > eps / 2 and b.eps_lambda == eps / 2
        assert ops.adaops_event(eps, 1e-6).epsilon_with_gaussian(1e-6, mu=0.0) < eps  # the source's split


def test_adaops_refuses_a_budget_that_composes_above_its_target():
    X, y = _data(n=500, d=2)
    b = ops.AdaOPSBudget(eps_lambda=0.5, delta_lambda=2.5e-7, delta_fail=2.5e-7, eps_ops=0.9, delta_ops=5e-7)
    with pytest.raises(ValueError, match="compose to more than eps"):
        ops.adaops_fit(X, (y - 5) / 5, 1.0, 1e-6, kappa=1.0, budget=b, rng=0)


def test_accountant_is_charged_before_noise_and_refuses_over_budget(tmp_path):
    X, y = _data(n=400, d=3)
    path = tmp_path / "budget.sqlite"
    acc = PrivacyAccountant(3.0, 1e-5, path=path)
    a = OPSRegressor(1.0, 1e-6, label_bounds=LABELS, random_state=0, accountant=acc).fit(X, y)
    a2 = OPSRegressor(0.5, 1e-6, label_bounds=LABELS, random_state=0, accountant=acc).fit(X, y)
    assert [c.kind for c in acc.ledger] == ["ops", "ops"]
    assert 0.9 < acc.spent().epsilon < 1.5  # composed by RDP (at the budget's δ), below the sum
    # AdaOPS's δ parts have neither RDP nor PLD: refused beside other OPS fits, nothing charged
    b = AdaOPSRegressor(1.0, 1e-6, label_bounds=LABELS, random_state=0, accountant=acc)
    with pytest.raises(UnsupportedEventError):
        b.fit(X, y)
    assert len(acc.ledger) == 2 and not hasattr(b, "coef_")
    # re-opened in another session: the kinds read back
    again = PrivacyAccountant.open(path)
    assert [ch.event for ch in again.ledger] == [a.event_, a2.event_]
    # AdaOPS with Gaussians alone: composed exactly
    acc3 = PrivacyAccountant(2.0, 1e-5)
    acc3.charge_gaussian(mu=0.2, name="a count")
    b = AdaOPSRegressor(1.0, 1e-6, label_bounds=LABELS, random_state=0, accountant=acc3).fit(X, y)
    assert acc3.spent().accounting == "adaops-exact-profile"
    assert b.privacy_spent().epsilon <= 1.0 < acc3.spent().epsilon < 2.0
    # over budget: refused before any noise, nothing recorded
    small = PrivacyAccountant(0.5, 1e-5)
    with pytest.raises(BudgetExceededError):
        OPSRegressor(1.0, 1e-6, label_bounds=LABELS, accountant=small).fit(X, y)
    assert small.ledger == ()
    # an infeasible kappa is refused before the charge
    with pytest.raises(ValueError, match="kappa"):
        AdaOPSRegressor(1.0, 1e-6, kappa=1e6, label_bounds=LABELS, accountant=small).fit(X, y)
    assert small.ledger == ()
    # one seed, two charges: two noise streams
    acc2 = PrivacyAccountant(5.0, 1e-5)
    f1 = OPSRegressor(1.0, 1e-6, label_bounds=LABELS, random_state=3, accountant=acc2).fit(X, y)
    f2 = OPSRegressor(1.0, 1e-6, label_bounds=LABELS, random_state=3, accountant=acc2).fit(X, y)
    assert not np.allclose(f1.coef_, f2.coef_)


def test_refusals_name_no_value_and_clip_follows_the_public_rule():
    X, y = _data(n=50)
    msgs = []
    for bad in (10.5, 1e6):
        yy = y.copy()
        yy[3] = bad
        with pytest.raises(ValueError) as err:
            OPSRegressor(label_bounds=LABELS).fit(X, yy)
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1] and "label_bounds" in msgs[0]
    with pytest.raises(ValueError, match="more records than n_max"):
        OPSRegressor(label_bounds=LABELS, n_max=10).fit(X, y)
    yy = y.copy()
    yy[3] = 1e6
    a = OPSRegressor(label_bounds=LABELS, row_norm="clip", random_state=1).fit(X, yy)
    yy[3] = 10.0
    b = OPSRegressor(label_bounds=LABELS, row_norm="clip", random_state=1).fit(X, yy)
    assert np.array_equal(a.coef_, b.coef_)
    with pytest.raises(TypeError, match="label_bounds"):
        OPSRegressor(label_bounds=5.0).fit(X, y)


def test_adaops_default_kappa_is_feasible_on_small_data_and_an_explicit_one_is_kept():
    X, y = _data(n=120, d=4)
    for eps in (0.5, 1.0, 2.0):
        m = AdaOPSRegressor(eps, 1e-6, label_bounds=LABELS, random_state=0).fit(X, y)
        assert 0 < m.kappa_ <= 1.0 and m.privacy_spent().epsilon <= eps
    assert AdaOPSRegressor(2.0, 1e-6, kappa=0.05, label_bounds=LABELS, random_state=0).fit(X, y).kappa_ == 0.05


def test_per_person_pdp_is_below_the_guarantee_and_fit_data_is_needed():
    X, y = _data(n=300, d=3)
    for est in (OPSRegressor(1.0, 1e-6, label_bounds=LABELS, random_state=0),
                AdaOPSRegressor(1.0, 1e-6, label_bounds=LABELS, random_state=0)):
        est.fit(X, y)
        e = est.per_person_epsilon_nonprivate(X, y)
        assert e.shape == (300,) and np.all(e >= 0) and np.all(e <= 1.0)
        assert est.n_features_in_ == 3
        import pandas as pd

        est.per_person_epsilon_nonprivate(pd.DataFrame(X, columns=["a", "b", "c"]), y)
        assert not hasattr(est, "feature_names_in_")  # the analysis leaves the fitted attributes as they were


def test_predictions_on_the_label_scale_beat_the_constant_on_easy_data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(20_000, 3)) / math.sqrt(3.0)
    y = np.clip(5.0 + 4.0 * X @ np.array([1.0, -1.0, 0.5]) + 0.3 * rng.normal(size=20_000), *LABELS)
    Xt, yt, Xv, yv = X[:16_000], y[:16_000], X[16_000:], y[16_000:]
    const = math.sqrt(np.mean((yv - yt.mean()) ** 2))
    for est in (OPSRegressor(1.0, 1e-6, label_bounds=LABELS, random_state=0),
                AdaOPSRegressor(1.0, 1e-6, label_bounds=LABELS, random_state=0)):
        rmse = math.sqrt(np.mean((est.fit(Xt, yt).predict(Xv) - yv) ** 2))
        assert rmse < 0.8 * const, (type(est).__name__, rmse, const)
