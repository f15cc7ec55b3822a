"""Fit IBM diffprivlib's LogisticRegression in its own environment (``.venv-bench``).

diffprivlib 0.6.6 does not import with scikit-learn ≥ 1.8, so ``make bench`` gives it a
separate virtual environment (``benchmarks/constraints-diffprivlib.txt``) and
``bench_estimators.py`` calls this script there. Reads ``DATA.npz`` (``Xtr, ytr, Xte, yte``),
writes one JSON line: per ε, the test accuracies over the seeds and the median fit time.
"""

from __future__ import annotations

import json
import sys
import time
import warnings

import numpy as np


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
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
