"""The stored refined Figures 1 and 4 of "RDP and privacy profiles of objective perturbation" agree with the CI grids.

Both figures are deterministic, so the live coarse curves must equal the stored fine
curves at the shared grid points (every fourth stored δ is a CI δ; the CI numbers of
compositions are among the stored ones) to 1e-9 absolute in ε — far below any
difference the figures show, and far above rounding (the values are of order 1). A
perturbed stored value must fail.
"""

from __future__ import annotations

import numpy as np

from pdpkit.experiments import objpert_accounting as ex
from pdpkit.experiments import stored

TOL = 1e-9
ORDERS = np.concatenate([np.linspace(1.05, 10, 60), np.linspace(10.5, 256, 80)])


def agree(live: np.ndarray, ref: np.ndarray) -> bool:
    """max |live − ref| ≤ TOL."""
    return bool(np.max(np.abs(np.asarray(live) - np.asarray(ref))) <= TOL)


def test_figure1_ci_grid_matches_stored_fine_grid():
    res = stored.load_result("objpert_accounting", "figure1")
    fine = res.array("deltas")
    deltas = np.logspace(-10, -1, 25)
    at = np.arange(0, fine.size, 4)
    assert fine.size == 97 and np.allclose(fine[at], deltas, rtol=1e-12, atol=0)
    assert np.array_equal(res.array("orders"), ORDERS)
    for setting in res.data["settings"].values():
        prm = {k: setting[k] for k in ("L", "beta", "lam", "sigma")}
        live = ex.epsilon_delta_curves(deltas, **prm, orders=ORDERS)
        for name in ("kifer", "rdp", "profile", "gaussian"):
            ref = np.array(setting[name])[at]
            assert agree(getattr(live, name), ref), name
            bumped = ref.copy()
            bumped[len(bumped) // 2] += 1e-6  # perturbed stored value
            assert not agree(getattr(live, name), bumped)


def test_figure4_ci_ks_match_stored():
    res = stored.load_result("objpert_accounting", "figure4")
    ks = [1, 2, 5, 10, 20, 50]
    at = [res.data["ks"].index(k) for k in ks]
    prm = {k: res.data[k] for k in ("L", "beta", "lam", "sigma")}
    live = ex.composition_curves(ks, **prm, orders=res.array("orders"), delta=res.data["delta"],
                                 value_discretization_interval=res.data["value_discretization_interval"])
    for name in ("rdp", "pld"):
        ref = res.array(name)[at]
        assert agree(getattr(live, name), ref), name
        assert not agree(getattr(live, name), ref * (1 + 1e-6))  # perturbed stored value
    assert np.all(res.array("pld") <= res.array("rdp"))  # PLD tighter on the fine grid too
