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
