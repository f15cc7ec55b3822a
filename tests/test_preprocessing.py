"""pdpkit.preprocessing: the public encoder, the private scaler against the Gaussian mechanism.

The leak heuristics moved to pdpkit.check (tests/test_check.py): a fit no longer issues them.
"""

from __future__ import annotations

import contextlib
import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from pdpkit.audit import clopper_pearson
from pdpkit.preprocessing import (
    SCALER_EXPECTED_FAILED_CHECKS,
    SCHEMA_ENCODER_EXPECTED_FAILED_CHECKS,
    PrivacyLeakWarning,
    PrivateStandardScaler,
    SchemaEncoder,
    _scaler_contributions,
)
from pdpkit.release import Guarantee
from pdpkit.schema import Column, Schema


@pytest.fixture
def schema():
    return Schema([Column("id", role="ignore"), Column("age", low=20.0, high=70.0),
                   Column("workclass", kind="categorical", categories=("Private", "Gov", "Self")),
                   Column("income", role="label", kind="categorical", categories=("<=50K", ">50K"))])


@pytest.fixture
def frame():
    return pd.DataFrame({"id": [7, 8, 9], "age": [45.0, 20.0, 95.0], "workclass": ["Gov", "Private", "Self"],
                         "income": [">50K", "<=50K", "<=50K"]})


# ------------------------------------------------------------------ SchemaEncoder
def test_encoder_is_the_schema_times_the_bound_and_learns_nothing(schema, frame):
    enc = SchemaEncoder(schema, norm_bound=2.5)
    rows = enc.fit_transform(frame)
    np.testing.assert_array_equal(rows, 2.5 * schema.encode(frame))
    assert np.max(np.linalg.norm(rows, axis=1)) <= 2.5
    assert list(enc.get_feature_names_out()) == ["age", "workclass=Private", "workclass=Gov", "workclass=Self"]
    # fitting on other records gives the same fitted object (nothing learned from the values)
    other = frame.assign(age=[30.0, 31.0, 32.0], workclass=["Self", "Self", "Self"])
    fitted = {k: v for k, v in vars(SchemaEncoder(schema).fit(frame)).items()}
    refit = {k: v for k, v in vars(SchemaEncoder(schema).fit(other)).items()}
    assert pickle.dumps(fitted) == pickle.dumps(refit)
    # a pipeline keeps the names for pandas output
    out = SchemaEncoder(schema).set_output(transform="pandas").fit_transform(frame)
    assert list(out.columns) == list(schema.encoded_names)


def test_encoder_warns_on_a_draft_schema(schema, frame):
    draft = Schema(schema.columns, nonprivate_draft=True)
    with pytest.warns(PrivacyLeakWarning, match="non-private draft"):
        SchemaEncoder(draft).fit(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        SchemaEncoder(schema).fit(frame)  # a reviewed schema draws no warning


def test_encoder_refuses_bad_input(schema, frame):
    with pytest.raises(TypeError, match="schema must be a pdpkit.schema.Schema"):
        SchemaEncoder().fit(frame)
    with pytest.raises(ValueError, match="lacks the schema's feature column"):
        SchemaEncoder(schema).fit(frame.drop(columns="age"))
    enc = SchemaEncoder(schema).fit(frame[["age", "workclass"]].to_numpy(dtype=object))
    with pytest.raises(ValueError, match="X has 3 features, but SchemaEncoder is expecting 2"):
        enc.transform(np.zeros((1, 3), dtype=object))


@pytest.mark.parametrize("width, other", [(3, 2), (2, 3)])
def test_encoder_check_estimator(width, other):
    """Two runs (the checks feed arrays of several widths); together they cover every other check."""
    schema = Schema([Column(f"x{j}", low=-5.0, high=5.0) for j in range(width)])
    wrong_width = {name: f"the check feeds {other} columns" for name in _width_checks(other)}
    check_estimator(SchemaEncoder(schema), on_skip=None,
                    expected_failed_checks={**SCHEMA_ENCODER_EXPECTED_FAILED_CHECKS, **wrong_width})


def _width_checks(width: int) -> tuple[str, ...]:
    """The checks that feed arrays of ``width`` columns only (so fail against the other schema)."""
    if width == 2:
        return ("check_estimators_overwrite_params", "check_estimators_fit_returns_self",
                "check_readonly_memmap_input", "check_fit_idempotent", "check_fit_check_is_fitted",
                "check_n_features_in")
    return ("check_fit_score_takes_y", "check_estimators_nan_inf", "check_dont_overwrite_parameters", "check_pipeline_consistency",
            "check_estimators_pickle", "check_f_contiguous_array_estimator", "check_transformer_data_not_an_array",
            "check_transformer_general", "check_transformer_preserve_dtypes", "check_methods_sample_order_invariance",
            "check_methods_subset_invariance", "check_dict_unchanged", "check_fit2d_predict1d")


def test_polynomial_features_keep_a_public_norm_bound(schema, frame):
    """PolynomialFeatures learns only the width: degree-2 features of unit rows have norm <= sqrt(3) (1, x, x⊗x)."""
    pipe = make_pipeline(SchemaEncoder(schema), PolynomialFeatures(degree=2))
    rows = pipe.fit_transform(frame)
    assert np.max(np.linalg.norm(rows, axis=1)) <= math.sqrt(3.0)


# ------------------------------------------------------------------ PrivateStandardScaler
def test_record_contribution_sensitivity_is_sqrt_one_plus_d():
    """||(1, u, u^2 - 1)|| <= sqrt(1 + d) over the box, reached at its corners and at its centre."""
    d = 4
    lower, upper = np.full(d, -3.0), np.full(d, 5.0)
    rng = np.random.default_rng(0)
    inside = rng.uniform(-10, 12, size=(20_000, d))  # beyond the box too: clipped
    norms = np.linalg.norm(_scaler_contributions(inside, lower, upper), axis=1)
    assert np.max(norms) <= math.sqrt(1 + d) * (1 + 1e-15)
    extremes = np.array([lower, upper, (lower + upper) / 2])
    np.testing.assert_allclose(np.linalg.norm(_scaler_contributions(extremes, lower, upper), axis=1),
                               math.sqrt(1 + d), rtol=1e-15)


def test_scaler_calibration_is_the_exact_gaussian_profile():
    """sigma is the tight one: the Gaussian profile (closed form, scipy) at mu = sqrt(1+d)/sigma equals delta."""
    X = np.random.default_rng(1).uniform(0, 1, size=(100, 3))
    for eps, delta in [(0.1, 1e-6), (1.0, 1e-5), (4.0, 1e-9)]:
        sc = PrivateStandardScaler(eps, delta, bounds=(0.0, 1.0), random_state=0).fit(X)
        mu = sc.mu_
        assert mu == pytest.approx(math.sqrt(1 + 3) / sc.sigma_, rel=1e-15)
        profile = stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu)
        assert profile == pytest.approx(delta, rel=1e-8)
        # a 1% smaller sigma would break (eps, delta): the calibration is the tightest
        mu_small = mu / 0.99
        assert stats.norm.cdf(mu_small / 2 - eps / mu_small) - math.exp(eps) * stats.norm.cdf(
            -mu_small / 2 - eps / mu_small) > delta
        g = sc.guarantee_
        assert isinstance(g, Guarantee) and g.epsilon == pytest.approx(eps, rel=1e-9) and g.delta == delta
        assert [p.name for p in g.parts] == ["PrivateStandardScaler"]


def test_scaler_agrees_with_sklearn_within_the_noise():
    """On many records, the private mean and scale are sklearn's StandardScaler's up to the stated noise."""
    rng = np.random.default_rng(2)
    n, d = 40_000, 3
    X = np.column_stack([rng.normal(40, 10, n), rng.uniform(0, 100, n), rng.exponential(2.0, n)])
    bounds = (np.array([0.0, 0.0, 0.0]), np.array([120.0, 100.0, 30.0]))
    Xc = np.clip(X, *bounds)
    ref = StandardScaler().fit(Xc)
    sc = PrivateStandardScaler(1.0, 1e-6, bounds=bounds, random_state=3).fit(X)
    half = (bounds[1] - bounds[0]) / 2
    # each sum's noise has sd sigma; the mean's error is ~ half * sigma / n (plus the count's effect)
    tol = 8 * half * sc.sigma_ / n
    np.testing.assert_allclose(sc.mean_, ref.mean_, atol=tol.max())
    np.testing.assert_allclose(sc.scale_, ref.scale_, rtol=0.01)
    assert abs(sc.n_samples_seen_ - n) < 8 * sc.sigma_
    Z = sc.transform(X[:5])
    np.testing.assert_allclose(sc.inverse_transform(Z), X[:5], rtol=1e-12)


def test_scaler_noise_has_the_calibrated_sd():
    """Monte Carlo: the released count's noise has sd sigma (chi-square interval, 99.9%); sigma/2 would fail."""
    X = np.random.default_rng(4).uniform(-1, 1, size=(500, 2))
    reps = 400
    counts = np.array([PrivateStandardScaler(1.0, 1e-5, bounds=(-1, 1), random_state=s).fit(X).n_samples_seen_
                       for s in range(reps)])
    sigma = PrivateStandardScaler(1.0, 1e-5, bounds=(-1, 1), random_state=0).fit(X).sigma_
    s2 = np.var(counts - 500, ddof=0) * reps / (reps - 1)
    lo, hi = (reps - 1) * s2 / stats.chi2.ppf([0.9995, 0.0005], reps - 1)
    assert lo <= sigma**2 <= hi
    assert not lo <= (sigma / 2) ** 2 <= hi  # the tester: a scaler with half the noise is caught


class FakeAccountant:
    """Records charges; refuses when told (as PrivacyAccountant refuses over budget)."""

    def __init__(self, refuse: bool = False, rng: np.random.Generator | None = None):
        self.refuse, self.rng, self.calls = refuse, rng, []

    @contextlib.contextmanager
    def charging(self, event, *, name: str, **kwargs):
        state = None if self.rng is None else self.rng.bit_generator.state
        self.calls.append((event.mu, name, state))
        if self.refuse:
            raise ValueError("over budget")
        yield len(self.calls) - 1  # the ledger position, as PrivacyAccountant's charges give


def test_scaler_charges_the_accountant_before_drawing_noise():
    X = np.random.default_rng(5).uniform(0, 1, size=(50, 2))
    rng = np.random.default_rng(6)
    before = rng.bit_generator.state
    acc = FakeAccountant(rng=rng)
    sc = PrivateStandardScaler(0.5, 1e-6, bounds=(0, 1), accountant=acc, random_state=rng).fit(X)
    assert len(acc.calls) == 1
    mu, name, state_at_charge = acc.calls[0]
    assert name == "PrivateStandardScaler" and mu == pytest.approx(sc.mu_, rel=1e-15)
    assert state_at_charge == before  # no noise drawn before the charge
    # a refusal leaves the random state untouched and the scaler unfitted
    rng2 = np.random.default_rng(7)
    before2 = rng2.bit_generator.state
    refusing = FakeAccountant(refuse=True)
    fresh = PrivateStandardScaler(0.5, 1e-6, bounds=(0, 1), accountant=refusing, random_state=rng2)
    with pytest.raises(ValueError, match="over budget"):
        fresh.fit(X)
    assert rng2.bit_generator.state == before2 and not hasattr(fresh, "mean_")


def test_scaler_with_the_real_accountant():
    accountant = pytest.importorskip("pdpkit.accountant")
    acc = accountant.PrivacyAccountant(1.0, 1e-5)
    X = np.random.default_rng(8).uniform(0, 1, size=(50, 2))
    sc = PrivateStandardScaler(1.0, 1e-5, bounds=(0, 1), accountant=acc, random_state=0).fit(X)
    assert acc.spent().epsilon == pytest.approx(sc.guarantee_.epsilon, rel=1e-6)
    with pytest.raises(accountant.BudgetExceededError):
        PrivateStandardScaler(1.0, 1e-5, bounds=(0, 1), accountant=acc, random_state=0).fit(X)


@pytest.mark.parametrize("bounds, error, message", [
    (None, ValueError, "bounds must be given"),
    ((1.0,), TypeError, "bounds must be a pair"),
    ((1.0, 0.0), ValueError, "lower must be smaller than upper"),
    (([0, 0, 0], 1.0), ValueError, r"bounds\[0\] must be a number or have one entry per feature \(2\)"),
    (("0", 1.0), TypeError, r"bounds\[0\] must be numeric"),
])
def test_scaler_refuses_bad_bounds(bounds, error, message):
    with pytest.raises(error, match=message):
        PrivateStandardScaler(bounds=bounds).fit(np.zeros((3, 2)))


def test_scaler_check_estimator():
    check_estimator(PrivateStandardScaler(bounds=(-10.0, 10.0), random_state=0), on_skip=None,
                    expected_failed_checks=SCALER_EXPECTED_FAILED_CHECKS)


@pytest.fixture(scope="module")
def scaler_pair_outputs():
    """The scaler run as a user runs it (fit, read mean_/var_/n_samples_seen_) on a worst-case pair.

    D: 2000 records in the unit box; D' adds the box's corner, whose contribution (1, u, u^2 - 1)
    has the full norm sqrt(1 + d). The released sums are recovered from the fitted attributes
    (no clipping happens at this size) and projected on the neighbour's direction: 4,000
    releases on each side, N(0, s^2) under D and N(Delta, s^2) under D'. Drawn once: the
    audits below fix their events from the claimed parameters alone, so every claim is
    tested on the same draws.
    """
    d, lower, upper = 2, np.zeros(2), np.ones(2)
    D = np.random.default_rng(21).uniform(0, 1, size=(2000, d))
    corner = upper[None, :]
    Dp = np.vstack([D, corner])
    q_D = _scaler_contributions(D, lower, upper).sum(axis=0)
    v = _scaler_contributions(corner, lower, upper)[0]
    delta_sens = float(np.linalg.norm(v))
    eps, delta, m = 1.0, 1e-3, 4000

    def released(data, rng):
        out = np.empty(m)
        for k in range(m):
            sc = PrivateStandardScaler(eps, delta, bounds=(0.0, 1.0), random_state=rng).fit(data)
            half, mid = 0.5, 0.5
            mean_u = (sc.mean_ - mid) / half
            second_u = sc.var_ / half**2 + mean_u**2
            n_t = sc.n_samples_seen_
            sums = np.concatenate([[n_t], n_t * mean_u, n_t * (second_u - 1.0)])
            out[k] = (sums - q_D) @ v / delta_sens
        return out

    sigma = PrivateStandardScaler(eps, delta, bounds=(0.0, 1.0), random_state=0).fit(D).sigma_
    gen = np.random.default_rng(22)
    return released(D, gen), released(Dp, gen), delta_sens, sigma


def _scaler_audit(outputs, claim_sigma_factor: float):
    """Audit the claim sigma * claim_sigma_factor on the pair's outputs (events from the claim)."""
    from pdpkit.audit import audit_delta_curve
    from pdpkit.gaussian import gaussian_delta

    out_D, out_Dp, delta_sens, sigma = outputs
    claimed = sigma * claim_sigma_factor
    mu = delta_sens / claimed
    grid = np.array([0.0, 0.1, 0.25, 0.5])

    def replay(out):
        pos = [0]

        def sample(m, rng):
            pos[0] += m
            return out[pos[0] - m:pos[0]]
        return sample

    return audit_delta_curve(replay(out_D), replay(out_Dp),
                             lambda t: mu**2 / 2 - mu * t / claimed, grid, grid,
                             gaussian_delta(grid, sensitivity=delta_sens, sigma=claimed),
                             n_samples=out_D.size, alpha=0.01, chunk=1000, rng=0, progress=False)


def test_scaler_audit_passes_and_a_claim_of_twice_the_noise_is_refuted(scaler_pair_outputs):
    assert _scaler_audit(scaler_pair_outputs, 1.0).passed
    # the tester: the same mechanism claiming more privacy is caught
    assert not _scaler_audit(scaler_pair_outputs, 2.0).passed


def test_pipelines_with_the_public_encoder_and_the_private_scaler(schema, frame):
    """A raw table (identifier, category, out-of-range value) through a pipeline; nothing data-fitted leaks."""
    from pdpkit.estimators import ObjPertClassifier

    rng = np.random.default_rng(31)
    n = 300
    big = pd.DataFrame({"id": np.arange(n), "age": rng.uniform(15, 80, n),
                        "workclass": rng.choice(["Private", "Gov", "Self"], n)})
    y = np.where((big["age"] > 45) ^ (big["workclass"] == "Gov"), ">50K", "<=50K")
    pipe = make_pipeline(SchemaEncoder(schema),
                         ObjPertClassifier(1.0, 1e-6, classes=["<=50K", ">50K"], random_state=0)).fit(big, y)
    assert pipe.score(big, y) > 0.5 and pipe[-1].privacy_spent().epsilon == pytest.approx(1.0, rel=1e-9)
    num = big[["age"]].to_numpy()
    private = make_pipeline(PrivateStandardScaler(0.5, 1e-6, bounds=(0.0, 120.0), random_state=1),
                            ObjPertClassifier(1.0, 1e-6, classes=["<=50K", ">50K"], row_norm="clip", norm_bound=3.0,
                                              random_state=2)).fit(num, y)
    assert private[0].guarantee_.epsilon == pytest.approx(0.5, rel=1e-9)
    assert set(private.predict(num)) <= {">50K", "<=50K"}
