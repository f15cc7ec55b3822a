"""Full-scale runs of the ex-post pDP chapter (Redberg & Wang 2021, App. B.1, Figures 4 and 5).

* ``figure4``: worst and mean ex-post pDP over the members and the data-independent bounds
  (Thm 8 + Thm 9, with the constants L, β and with f', f'' at θᴾ), n from 100 to 10,000 at
  d = 50, 20 draws per point (the chapter's ``FULL_SCALE``; CI: 5).
* ``figure5``: the same at n = 1,000 for every d from 1 to 60, 20 draws per point (CI: 9
  dimensions, 5 draws).

ObjPert at (1, 1e-5)-DP with the classic calibration; ρ = 0.05.
``python reproduce/objpert_ex_post.py [--only NAME]``; run with ``nice -n 15``.
"""

from __future__ import annotations

import numpy as np
from _common import run

from pdpkit.experiments import objpert_ex_post as ex
from pdpkit.objpert import objpert_calibrate_classic

EPS, DELTA, RHO, REPS = 1.0, 1e-5, 0.05, 20


def _summary(res) -> dict:
    out = {"parameter": res.parameter, "values": res.values, "n_repeats": REPS, "lam": res.lam,
           "sigma": res.sigma, "rho": res.rho, "delta": res.delta, "dp_eps": res.dp_eps,
           "bound_dominates": res.bound_dominates.sum(1)}
    for key in ("worst_pdp", "mean_pdp", "worst_bound", "worst_bound_output"):
        a = getattr(res, key)
        out[key + "_mean"] = a.mean(1)
        out[key + "_se"] = a.std(1, ddof=1) / np.sqrt(a.shape[1])
    return out


def _settings() -> dict:
    lam, sigma = objpert_calibrate_classic(EPS, DELTA, loss="logistic")
    return {"lam": lam, "sigma": sigma, "rho": RHO, "delta": DELTA, "n_repeats": REPS}


def figure4() -> tuple[dict, dict, str]:
    res = ex.worst_case_pdp_vs_n([100, 200, 500, 1000, 2000, 5000, 10000], d=50, **_settings(),
                                 rng=np.random.default_rng(4))
    return _summary(res), {"worst_case_pdp_vs_n": 4}, "the source's: d = 50, n = 100 to 10,000, 20 draws per point"


def figure5() -> tuple[dict, dict, str]:
    res = ex.worst_case_pdp_vs_d(list(range(1, 61)), n=1000, **_settings(), rng=np.random.default_rng(5))
    return _summary(res), {"worst_case_pdp_vs_d": 5}, "the source's: n = 1,000, every d from 1 to 60, 20 draws per point"


EXPERIMENTS = {"figure4": figure4, "figure5": figure5}


if __name__ == "__main__":
    run("objpert_ex_post", EXPERIMENTS, __doc__.splitlines()[0])
