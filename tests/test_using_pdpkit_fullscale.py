"""The stored report on all 16,281 test records of "Using pdpkit" agrees with the chapter's live 2,000.

The live run is the chapter's: the same model (same seeds), its report on the test file's
first 2,000 people, a subset of the 16,281 of the stored run. The fraction of the live
bounds at most a stored quartile q must be q within 3 binomial s.e. (finite-population
corrected) plus 0.02 (the 2,000 are the file's first records, not a random draw); the live
mean bound must lie within 3 combined s.e. of the stored mean. A perturbed stored value
must fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pdpkit.experiments import stored
from pdpkit.experiments import using_pdpkit as ex

N_LIVE = 2000


def quantile_consistent(live: np.ndarray, q: float, stored_quantile: float, n_stored: int) -> bool:
    """The fraction of ``live`` at most ``stored_quantile`` is ``q`` within 3 s.e. + 0.02."""
    frac = float(np.mean(live <= stored_quantile))
    se = math.sqrt(q * (1 - q) / live.size * (1 - live.size / n_stored))
    return abs(frac - q) <= 3.0 * se + 0.02


@pytest.fixture(scope="module")
def runs():
    full = stored.load_result("using_pdpkit", "report")
    clf, live = ex.adult_report_bounds(lam=full.data["lam"], n_people=N_LIVE, random_state=0)
    return full, clf, live


def test_live_report_matches_stored(runs):
    full, clf, live = runs
    d = full.data
    g = clf.privacy_spent()
    assert (g.epsilon, g.delta) == pytest.approx((d["epsilon"], d["delta"]), rel=1e-9)
    assert clf.sigma_ == pytest.approx(d["sigma"], rel=1e-9)
    stored_q = dict(zip(d["quantiles"], d["bound_q"]))
    for q in (0.25, 0.5, 0.75):
        assert quantile_consistent(live, q, stored_q[q], d["n_people"])
    assert stored_q[0.0] <= live.min() and live.max() <= stored_q[1.0]  # a subset
    se_live = live.std(ddof=1) / math.sqrt(live.size)
    assert abs(live.mean() - d["bound_mean"]) <= 3 * math.hypot(se_live, d["bound_se"])


def test_perturbed_stored_values_fail(runs):
    full, _, live = runs
    d = full.data
    median = dict(zip(d["quantiles"], d["bound_q"]))[0.5]
    assert not quantile_consistent(live, 0.5, 1.5 * median, d["n_people"])
    assert not quantile_consistent(live, 0.5, 0.6 * median, d["n_people"])
    se_live = live.std(ddof=1) / math.sqrt(live.size)
    assert abs(live.mean() - 1.2 * d["bound_mean"]) > 3 * math.hypot(se_live, d["bound_se"])


def test_one_vs_rest_bound_covers_the_k_models_joint_loss_and_agrees_with_the_stored_1000_fits():
    """The bound of a one-vs-rest model (the sum of its K reports' bounds, each at rho/K) covers the exact
    ex-post loss of the K models together with probability >= 1 - rho, target by target.

    Live, 100 fits replayed to the last bit: a 99.9% Clopper-Pearson interval must reach 1 - rho for every
    target, and the first model's bound alone (the control) must fall below it for some target. Stored, 1,000
    fits: the 99.9% lower Clopper-Pearson bound reaches 1 - rho for every target. Each target's live coverage is
    a binomial draw at the stored one (both tails at least 1e-3), for the sum and for the control; a stored
    coverage moved down by 0.2 must fail (test the tester). One live run serves both halves."""
    from scipy.stats import beta as beta_law
    from scipy.stats import binom

    live = ex.one_vs_rest_report_coverage(reps=100)
    d = stored.load_result("using_pdpkit", "one_vs_rest_coverage").data
    rho, n = live["rho"], live["reps"]
    hits = np.round(live["covered"] * n).astype(int)
    up = np.where(hits == n, 1.0, beta_law.ppf(1 - 5e-4, hits + 1, n - hits))
    assert np.all(up >= 1 - rho)
    assert np.any(live["upper_one_model"] < 1 - rho)
    assert d["reps"] == 1000 and d["rho"] == rho
    assert np.min(d["lower"]) >= 1 - d["rho"]

    def agrees(live_fraction, p_stored):
        k = np.round(np.asarray(live_fraction) * n).astype(int)
        p = np.clip(np.asarray(p_stored), 1e-12, 1 - 1e-12)
        return bool(np.all((binom.cdf(k, n, p) >= 1e-3) & (binom.sf(k - 1, n, p) >= 1e-3)))

    assert agrees(live["covered"], d["covered"]) and agrees(live["one_model"], d["one_model"])
    assert not agrees(live["one_model"], np.asarray(d["one_model"]) - 0.2)
