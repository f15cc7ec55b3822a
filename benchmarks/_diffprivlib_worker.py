"""Fit IBM diffprivlib's models in their own environment (``.venv-bench``).

diffprivlib 0.6.6 does not import with scikit-learn ≥ 1.8, so ``make bench`` gives it a
separate virtual environment (``benchmarks/constraints-diffprivlib.txt``) and the
benchmarks call this script there.

* ``logistic DATA.npz EPS SEEDS`` (``bench_estimators.py``): ``LogisticRegression`` on
  ``Xtr, ytr, Xte, yte``; per ε, the test accuracies over the seeds and the median fit time.
* ``linear DATA.npz EPS`` (``bench_ops.py``): ``LinearRegression`` (no intercept, the data's
  public bounds: features in [-1, 1], labels in [-1, 1]) on ``Xtr_k, ytr_k, Xte_k, yte_k`` for
  k = 0, 1, …; per ε, the test MSEs.

Writes one JSON line.
"""

from __future__ import annotations

import json
import sys
import time
import warnings

import numpy as np


def linear(path: str, eps_list: str) -> None:
    from diffprivlib.models import LinearRegression

    data = np.load(path)
    k_max = sum(1 for key in data.files if key.startswith("Xtr_"))
    out = {}
    for eps in map(float, eps_list.split(",")):
        mse = []
        for k in range(k_max):
            Xtr, ytr, Xte, yte = (data[f"{a}_{k}"] for a in ("Xtr", "ytr", "Xte", "yte"))
            d = Xtr.shape[1]
            reg = LinearRegression(epsilon=eps, bounds_X=(-np.ones(d), np.ones(d)), bounds_y=(-1.0, 1.0),
                                   fit_intercept=False, random_state=k)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                reg.fit(Xtr, ytr)
            mse.append(float(np.mean((yte - reg.predict(Xte)) ** 2)))
        out[str(eps)] = mse
    print(json.dumps(out))


def main(path: str, eps_list: str, seeds: int) -> None:
    from diffprivlib.models import LogisticRegression

    data = np.load(path)
    Xtr, ytr, Xte, yte = data["Xtr"], data["ytr"], data["Xte"], data["yte"]
    out = {}
    for eps in map(float, eps_list.split(",")):
        accs, times = [], []
        for seed in range(seeds):
            clf = LogisticRegression(epsilon=eps, data_norm=1.0, random_state=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                clf.fit(Xtr, ytr)
                times.append(time.perf_counter() - t0)
            accs.append(float(np.mean(clf.predict(Xte) == yte)))
        out[str(eps)] = {"acc": accs, "time": float(np.median(times))}
    print(json.dumps(out))


if __name__ == "__main__":
    if sys.argv[1] == "linear":
        linear(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[2], sys.argv[3], int(sys.argv[4]))
