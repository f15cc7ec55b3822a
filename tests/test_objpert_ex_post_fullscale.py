"""The ex-post pDP chapter's stored Figures 4-5 agree with fresh, smaller runs.

A fresh run (other seeds, 5 draws) at a subset of the stored sweep must lie within four
combined standard errors (plus 0.01 nats) of the stored means, for the worst member's loss
and both data-independent bounds. A perturbed stored value must fail.
"""

from __future__ import annotations

import numpy as np
import pytest

from pdpkit.experiments import objpert_ex_post as ex
from pdpkit.experiments import stored
from pdpkit.objpert import objpert_calibrate_classic

KEYS = ("worst_pdp", "worst_bound", "worst_bound_output")


def _mismatch(live, data, values) -> list[str]:
    idx = [data["values"].index(v) for v in values]
    bad = []
    for key in KEYS:
        a = getattr(live, key)
        m_l, s_l = a.mean(1), a.std(1, ddof=1) / np.sqrt(a.shape[1])
        m_s = np.asarray(data[key + "_mean"])[idx]
        s_s = np.asarray(data[key + "_se"])[idx]
        ok = np.abs(m_l - m_s) <= 4 * np.hypot(s_l, s_s) + 0.01
        bad += [f"{key} at {v}" for v, k in zip(values, ok, strict=True) if not k]
    return bad


@pytest.mark.parametrize(("name", "values"), [("figure4", [100, 1000]), ("figure5", [2, 20, 60])])
def test_worst_case_live_agrees_with_stored(name, values):
    data = stored.load_result("objpert_ex_post", name).data
    lam, sigma = objpert_calibrate_classic(1.0, 1e-5, loss="logistic")
    common = dict(lam=lam, sigma=sigma, rho=0.05, delta=1e-5, n_repeats=5, rng=np.random.default_rng(77))
    if name == "figure4":
        live = ex.worst_case_pdp_vs_n(values, d=50, **common)
    else:
        live = ex.worst_case_pdp_vs_d(values, n=1000, **common)
    assert not _mismatch(live, data, values)
    bad = dict(data)
    bad["worst_bound_mean"] = (np.asarray(data["worst_bound_mean"]) * 1.2).tolist()
    assert _mismatch(live, bad, values)
