"""Full-scale runs of the chapter "RDP and privacy profiles of objective perturbation" (Redberg, Koskela & Wang 2023).

The chapter's figures are deterministic; full scale only refines their grids:

* ``figure1``: the four (epsilon, delta) curves of Figure 1 at both settings on 97 values of
  delta from 1e-10 to 1e-1 (CI: 25; every fourth fine point is a CI point).
* ``figure4``: epsilon at delta = 1e-5 after k compositions, from RDP and from the PLD, at
  11 values of k from 1 to 100 (CI: 6, all among them).

``python reproduce/objpert_accounting.py [--only NAME]``; run with ``nice -n 15``.
"""

from __future__ import annotations

import numpy as np
from _common import run

from pdpkit.experiments import objpert_accounting as ex

SETTINGS = {
    "sigma = 5, beta = 1, lambda = 20": dict(L=1.0, beta=1.0, lam=20.0, sigma=5.0),
    "sigma = 10, beta = 1, lambda = 5": dict(L=1.0, beta=1.0, lam=5.0, sigma=10.0),
}
ORDERS = np.concatenate([np.linspace(1.05, 10, 60), np.linspace(10.5, 256, 80)])
DELTAS = np.logspace(-10, -1, 97)
KS = [1, 2, 3, 5, 8, 10, 15, 20, 30, 50, 100]
PRM4 = dict(L=1.0, beta=1.0, lam=10.0, sigma=8.0)


def figure1() -> tuple[dict, dict, str]:
    out = {"deltas": DELTAS, "orders": ORDERS, "settings": {}}
    for title, prm in SETTINGS.items():
        c = ex.epsilon_delta_curves(DELTAS, **prm, orders=ORDERS)
        out["settings"][title] = {**prm, "kifer": c.kifer, "rdp": c.rdp, "profile": c.profile,
                                  "gaussian": c.gaussian}
    return out, {}, "97 values of delta from 1e-10 to 1e-1 (CI: 25, every fourth fine point)"


def figure4() -> tuple[dict, dict, str]:
    c = ex.composition_curves(KS, **PRM4, orders=ORDERS, delta=1e-5, value_discretization_interval=1e-3)
    return ({**PRM4, "ks": list(c.ks), "delta": c.delta, "orders": ORDERS,
             "value_discretization_interval": 1e-3, "rdp": c.rdp, "pld": c.pld}, {},
            "11 numbers of compositions from 1 to 100 (CI: 6, all among them)")


EXPERIMENTS = {"figure1": figure1, "figure4": figure4}


if __name__ == "__main__":
    run("objpert_accounting", EXPERIMENTS, __doc__.splitlines()[0])
