"""The other libraries' private linear regressions, in the benchmark environment (``.venv-bench``).

Run by ``bench_regression.py`` with the environment's Python (``make bench`` creates it from
``benchmarks/constraints-diffprivlib.txt``: diffprivlib 0.6.6 needs scikit-learn < 1.8).

* ``data NAME OUT.npz``: a data set the project uses nowhere else, from statsmodels' bundled
  copies (no download): ``star98`` (California schools, 303 rows) or ``fair`` (Fair's affairs
  survey, 6,366 rows), written raw (``X``, ``y``, ``names``).
* ``fit DATA.npz EPS``: for each split ``k`` (``Xtr_k, ytr_k, Xte_k, yte_k``, features in
  [-1, 1] by public bounds, labels in [-1, 1]): diffprivlib's ``LinearRegression`` (pure ε-DP,
  given those bounds) and OpenDP's Theil–Sen (``opendp.extras.sklearn.linear_model``, pure
  ε-DP under add/remove-one, its noise scale found by OpenDP's own ``binary_search_param``)
  on the one feature ``feat_k`` the caller chose. Per ε: the test RMSEs of each.

Writes one JSON line.
"""

from __future__ import annotations

import json
import sys
import warnings

import numpy as np


def data(name: str, out: str) -> None:
    import statsmodels.api as sm

    if name == "star98":
        frame = sm.datasets.star98.load_pandas().data
        y = frame["NABOVE"] / (frame["NABOVE"] + frame["NBELOW"])
        cols = ["LOWINC", "PERASIAN", "PERBLACK", "PERHISP", "PERMINTE", "AVYRSEXP", "AVSALK", "PERSPENK",
                "PTRATIO", "PCTAF", "PCTCHRT", "PCTYRRND"]
    elif name == "fair":
        frame = sm.datasets.fair.load_pandas().data
        y = frame["rate_marriage"]
        cols = ["age", "yrs_married", "children", "religious", "educ", "occupation", "occupation_husb", "affairs"]
    else:
        raise SystemExit(f"unknown data set {name!r}")
    np.savez(out, X=frame[cols].to_numpy(dtype=float), y=y.to_numpy(dtype=float), names=np.array(cols))


def fit(path: str, eps_list: str) -> None:
    import opendp.prelude as dp
    from diffprivlib.models import LinearRegression
    from opendp.extras.sklearn.linear_model._make_private_theil_sen import make_private_theil_sen

    dp.enable_features("contrib", "honest-but-curious")
    arrays = np.load(path)
    k_max = sum(1 for key in arrays.files if key.startswith("Xtr_"))
    out: dict = {"diffprivlib": {}, "opendp": {}}
    for eps in map(float, eps_list.split(",")):
        scale = dp.binary_search_param(
            lambda s: make_private_theil_sen(dp.max_divergence(), (-1.0, 1.0), (-1.0, 1.0), scale=s),
            d_in=1, d_out=eps)
        ts = make_private_theil_sen(dp.max_divergence(), (-1.0, 1.0), (-1.0, 1.0), scale=scale)
        r_dpl, r_odp = [], []
        for k in range(k_max):
            Xtr, ytr, Xte, yte = (arrays[f"{a}_{k}"] for a in ("Xtr", "ytr", "Xte", "yte"))
            d = Xtr.shape[1]
            reg = LinearRegression(epsilon=eps, bounds_X=(-np.ones(d), np.ones(d)), bounds_y=(-1.0, 1.0),
                                   random_state=k)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                reg.fit(Xtr, ytr)
            r_dpl.append(float(np.sqrt(np.mean((yte - reg.predict(Xte)) ** 2))))
            j = int(arrays[f"feat_{k}"])
            slope, intercept = ts(np.stack([Xtr[:, j], ytr], axis=1))
            r_odp.append(float(np.sqrt(np.mean((yte - (slope * Xte[:, j] + intercept)) ** 2))))
        out["diffprivlib"][str(eps)] = r_dpl
        out["opendp"][str(eps)] = r_odp
    print(json.dumps(out))


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    {"data": data, "fit": fit}[cmd](*args)
