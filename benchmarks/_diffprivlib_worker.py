"""Fit IBM diffprivlib's models in their own environment (``.venv-bench``).

diffprivlib 0.6.6 does not import with scikit-learn ≥ 1.8, so ``make bench`` gives it a
separate virtual environment (``benchmarks/constraints-diffprivlib.txt``) and the
benchmarks call this script there.

* ``logistic DATA.npz EPS SEEDS`` (``bench_estimators.py``): ``LogisticRegression`` on
  ``Xtr, ytr, Xte, yte``; per ε, the test accuracies over the seeds and the median fit time.
* ``workflow DATA.npz EPS SEEDS FRACS`` (``bench_workflow.py``): two whole pipelines per
  split ``k`` (train rows ``tr_k``, test rows ``te_k``), each under one ``BudgetAccountant``
  of total ε (pure ε-DP): ``public`` — ``LogisticRegression(epsilon=ε, data_norm=1)`` on the
  public-bounds encoding ``E`` (rows of norm ≤ 1, no statistic of the data); ``scaler<f>`` —
  diffprivlib's ``StandardScaler(epsilon=f·ε, bounds=public bounds)`` on the raw numerical
  columns ``N``, the raw categorical columns ``S`` one-hot coded over their public domains
  ``dom_j`` (scikit-learn's ``OneHotEncoder``, a value outside: all zeros) and appended, then
  ``LogisticRegression(epsilon=ε − f·ε, data_norm=√(#numerical + #categorical columns))``
  (the norm of a row of standardized numbers and one-hot blocks, on average). Per variant
  and ε: the test accuracies and the fit times (preprocessing included) over the splits.
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


def _workflow_fit(variant: str, eps: float, data, tr, seed: int):
    """Fit one whole diffprivlib pipeline under a fresh accountant of total ``eps``; return predict."""
    from diffprivlib import BudgetAccountant
    from diffprivlib.models import LogisticRegression, StandardScaler
    from sklearn.preprocessing import OneHotEncoder

    acc = BudgetAccountant(epsilon=eps, delta=0.0)
    y = data["y"][tr]
    if variant == "public":
        clf = LogisticRegression(epsilon=eps, data_norm=1.0, random_state=seed, accountant=acc)
        clf.fit(data["E"][tr], y)
        predict = lambda rows: clf.predict(data["E"][rows])  # noqa: E731
    else:
        frac = float(variant.removeprefix("scaler"))
        eps_scaler = frac * eps
        N, S = data["N"], data["S"]
        bounds = (data["lows"], data["highs"])
        scaler = StandardScaler(epsilon=eps_scaler, bounds=bounds, random_state=seed, accountant=acc)
        scaler.fit(N[tr])
        onehot = OneHotEncoder(categories=[data[f"dom_{j}"] for j in range(S.shape[1])], handle_unknown="ignore",
                               sparse_output=False).fit(S[tr]) if S.shape[1] else None

        def features(rows):
            num = scaler.transform(N[rows])
            return np.hstack([num, onehot.transform(S[rows])]) if onehot is not None else num

        norm = float(np.sqrt(N.shape[1] + S.shape[1]))
        clf = LogisticRegression(epsilon=eps - eps_scaler, data_norm=norm, random_state=seed, accountant=acc)
        clf.fit(features(tr), y)
        predict = lambda rows: clf.predict(features(rows))  # noqa: E731
    spent_eps, spent_delta = acc.total()
    if spent_eps > eps * (1 + 1e-12) or spent_delta != 0:
        raise AssertionError(f"{variant}: the accountant spent ({spent_eps}, {spent_delta}) > ({eps}, 0)")
    return predict


def workflow(path: str, eps_list: str, seeds: int, fracs: str) -> None:
    data = dict(np.load(path))
    variants = ["public"] + [f"scaler{f}" for f in fracs.split(",") if f]
    out: dict = {v: {} for v in variants}
    for variant in variants:
        for eps in map(float, eps_list.split(",")):
            accs, times = [], []
            for seed in range(seeds):
                tr, te = data[f"tr_{seed}"], data[f"te_{seed}"]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t0 = time.perf_counter()
                    predict = _workflow_fit(variant, eps, data, tr, seed)
                    times.append(time.perf_counter() - t0)
                    accs.append(float(np.mean(predict(te) == data["y"][te])))
            out[variant][str(eps)] = {"acc": accs, "time": times}
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
    elif sys.argv[1] == "workflow":
        workflow(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    else:
        main(sys.argv[2], sys.argv[3], int(sys.argv[4]))
