"""The stored 10^7-row memmap run of "Data larger than memory" agrees with the chapter's live 2 x 10^5 run.

Scale-free quantities only: the guarantee (a property of the mechanism, the same at every
n), the estimator's settings, the agreement of the memmap with memory, the passes over X
(within 3), the time per row (within a factor 20: the live run's fixed costs weigh more at
2 x 10^5 rows), and the median private bound: at fixed λ and σ the bounds hardly depend on
n, so the fraction of the live bounds below the stored median must be 1/2 within
3 binomial s.e. plus 0.02 (the two fits' θ differ). A perturbed stored median must fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pdpkit.experiments import larger_than_memory as ex
from pdpkit.experiments import stored

N_LIVE = 200_000
KW = dict(epsilon=1.0, delta=1e-9, report="adaptive", report_epsilon=0.5, report_delta=1e-9,
          random_state=0)


def median_consistent(live_bounds: np.ndarray, stored_median: float) -> bool:
    """The fraction of ``live_bounds`` at most ``stored_median`` is 1/2 within 3 s.e. + 0.02."""
    frac = float(np.mean(live_bounds <= stored_median))
    return abs(frac - 0.5) <= 3.0 * math.sqrt(0.25 / live_bounds.size) + 0.02


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    res = stored.load_result("larger_than_memory", "memmap")
    path = tmp_path_factory.mktemp("ltm") / "X.npy"
    X, y = ex.write_memmap(path, N_LIVE, d=res.data["d"], block_rows=res.data["block_rows"],
                           seed=res.provenance["seeds"]["data"])
    live = ex.fit_and_report(X, y, **KW)
    return res, live


def test_stored_run_is_the_chapters_path(runs):
    res, _ = runs
    assert res.data["estimator"] == KW
    assert res.data["n"] == 10**7
    assert res.data["coef_equal_1e10"] and res.data["bounds_equal_1e9"] and res.data["same_guarantee"]
    assert res.data["delta"] * res.data["n"] <= 0.02


def test_live_matches_stored(runs):
    res, live = runs
    big = res.data
    g = live.clf.privacy_spent()
    assert g.epsilon == pytest.approx(big["epsilon"], rel=1e-9)
    assert g.delta == pytest.approx(big["delta"], rel=1e-12)
    assert abs(live.passes - big["passes"]) <= 3
    # no wall-clock comparison: a test's time depends on the machine's load (benchmarks/ measure time)
    median = dict(zip(big["quantiles"], big["bound_q"]))[0.5]
    assert median_consistent(live.bounds, median)
    assert not median_consistent(live.bounds, 1.1 * median)  # a perturbed stored value fails
    assert not median_consistent(live.bounds, 0.9 * median)
