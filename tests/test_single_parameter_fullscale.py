"""The stored full-scale results of "Releasing one parameter" and "Self-concordant stability" agree with small live runs.

Each test re-runs one point of a stored experiment at CI size and requires
|live mean − stored mean| ≤ 3 combined standard errors (plus a floor for the Monte Carlo
error of a standard error from few repetitions); a perturbed stored value must fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pdpkit.experiments import self_concordant_stability as es
from pdpkit.experiments import single_parameter as ex
from pdpkit.experiments import stored


def consistent(live: np.ndarray, mean: float, se: float, *, k: float = 3.0, rel_floor: float = 0.05) -> bool:
    """|mean(live) − mean| ≤ k·sqrt(se_live² + se²) + rel_floor·|mean| (NaNs in ``live`` dropped)."""
    live = np.asarray(live, dtype=float)
    live = live[np.isfinite(live)]
    se_live = live.std(ddof=1) / math.sqrt(live.size)
    return abs(live.mean() - mean) <= k * math.hypot(se_live, se) + rel_floor * abs(mean)


def test_consistent_rejects_a_shifted_mean():
    g = np.random.default_rng(0)
    x = g.normal(1.0, 0.1, size=20)
    assert consistent(x, 1.0, 0.02)
    assert not consistent(x, 1.5, 0.02)


def test_figure1_live_matches_stored():
    res = stored.load_result("self_concordant_stability", "figure1")
    ratios, dims = list(res.array("ratios")), list(res.array("dims").astype(int))
    j = ratios.index(3000.0)
    live = es.eigenvalue_relative_error([3000], dims=(5, 10), reps=4, rng=11)
    for i, d in enumerate((5, 10)):
        mean, se = res.array("mean")[dims.index(d), j], res.array("se")[dims.index(d), j]
        assert consistent(live.rel_error[i, 0], mean, se)
        assert not consistent(live.rel_error[i, 0], 2.0 * mean, se)  # perturbed stored value


def _stored_point(res, key, method, idx, kind="err_fit"):
    block = res.data["sweeps"][key][kind][method]
    return float(block["mean"][idx]), float(block["se"][idx])


def test_figures2_3_live_match_stored():
    res = stored.load_result("single_parameter", "figures2_3")
    key = "norm=1,d=5"
    grid = np.array(res.data["sweeps"][key]["grid"])
    i = int(np.argmin(np.abs(grid - 1e4)))
    live = ex.compare_methods([grid[i]], swept="n", d=5, theta_norm=1.0, eps=4.0, reps=6, rng=3)
    for m in ("nonprivate", "objpert"):
        mean, se = _stored_point(res, key, m, i)
        assert consistent(live.err_fit[m][0], mean, se)
        assert not consistent(live.err_fit[m][0], 3.0 * mean, se)
    mean, se = _stored_point(res, key, "nonprivate", i, kind="err_star")
    assert consistent(live.err_star["nonprivate"][0], mean, se)


def test_figures4_5_live_match_stored():
    res = stored.load_result("single_parameter", "figures4_5")
    key = "coordinate,norm=1"
    grid = list(res.data["sweeps"][key]["grid"])
    i = grid.index(4.0)
    live = ex.compare_methods([4.0], swept="eps", d=10, theta_norm=1.0, n=100_000, target="coordinate", reps=4,
                              rng=5)
    for m in ("nonprivate", "objpert"):
        mean, se = _stored_point(res, key, m, i)
        assert consistent(live.err_fit[m][0], mean, se)
        assert not consistent(live.err_fit[m][0], 3.0 * mean, se)
    assert res.data["sweeps"][key]["bottom"][i] == pytest.approx(live.bottom[0], abs=0.5)


def test_figures6_7_live_match_stored():
    res = stored.load_result("single_parameter", "figures6_7")
    run = res.data["runs"]["sex,eps=4"]
    ns = list(run["ns"])
    i = ns.index(10000.0) if 10000.0 in ns else int(np.argmin(np.abs(np.array(ns) - 1e4)))
    live = ex.adult_errors([int(ns[i])], eps=4.0, feature="sex", reps=12, rng=7)
    for m in ("nonprivate", "objpert", "local"):
        mean, se = float(run["errors"][m]["mean"][i]), float(run["errors"][m]["se"][i])
        assert consistent(live.errors[m][0], mean, se, rel_floor=0.15)
    mean, se = float(run["errors"]["nonprivate"]["mean"][i]), float(run["errors"]["nonprivate"]["se"][i])
    assert not consistent(live.errors["nonprivate"][0], 2.0 * mean, se, rel_floor=0.15)  # perturbed
    assert run["bottom"][i] == live.bottom[0] == 1.0
