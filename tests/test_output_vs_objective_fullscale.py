"""The output-vs-objective chapter's stored 200-seed comparison agrees with a fresh 20-seed run.

At two values of ε and every λ of the stored grid, the fresh mean test accuracy of each
method (other seeds) must lie within four combined standard errors (plus 0.002 for the
accuracy's granularity of 1/114) of the stored mean. A perturbed stored value must fail.
"""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np

from pdpkit.experiments import output_vs_objective as ex
from pdpkit.experiments import stored

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _split():
    spec = importlib.util.spec_from_file_location("repro_ovo", ROOT / "reproduce" / "output_vs_objective.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.breast_cancer_split()


def _mismatch(live, data, eps) -> list[str]:
    idx = [data["epsilons"].index(e) for e in eps]
    bad = []
    for method, acc in (("output", live.acc_output), ("objpert", live.acc_objpert)):
        m_l = acc.mean(axis=2)
        s_l = acc.std(axis=2, ddof=1) / np.sqrt(acc.shape[2])
        m_s = np.asarray(data[f"{method}_mean"], dtype=float)[idx]
        s_s = np.asarray(data[f"{method}_se"], dtype=float)[idx]
        ok = ~np.isfinite(m_s) | (np.abs(m_l - m_s) <= 4 * np.hypot(s_l, s_s) + 0.002)
        bad += [f"{method} at eps index {i}" for i in np.argwhere(~ok)[:, 0]]
    return bad


def test_accuracy_live_agrees_with_stored():
    data = stored.load_result("output_vs_objective", "accuracy_vs_epsilon").data
    eps = [0.2, 2.0]
    live = ex.accuracy_vs_epsilon(*_split(), eps, lams=data["lams"], delta=1e-5, n_seeds=20,
                                  rng=np.random.default_rng(5))
    assert not _mismatch(live, data, eps)
    bad = dict(data)
    bad["objpert_mean"] = (np.asarray(data["objpert_mean"], dtype=float) - 0.05).tolist()
    assert _mismatch(live, bad, eps)
