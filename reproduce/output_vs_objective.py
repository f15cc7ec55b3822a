"""Full-scale run of the output-vs-objective chapter: the breast-cancer accuracy comparison.

* ``accuracy_vs_epsilon``: test accuracy of ridge-logistic output perturbation and objective
  perturbation over 7 values of ε and 9 of λ, 200 noise seeds (the chapter's CI run: 20;
  its ``FULL_SCALE``: 100). The lecture notes give no numbers; the data set is fixed
  (455 training and 114 test rows of UCI breast cancer), so only the seeds scale.

``python reproduce/output_vs_objective.py``; run with ``nice -n 15``.
"""

from __future__ import annotations

import numpy as np
from sklearn.datasets import load_breast_cancer

from pdpkit import datasets as ds
from pdpkit.experiments import output_vs_objective as ex
from pdpkit.experiments import stored

EPS_GRID = [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
LAM_GRID = [0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0]
N_SEEDS = 200


def breast_cancer_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The chapter's split: 455 training rows (permutation seed 0), standardized on them, unit rows."""
    bc = load_breast_cancer()
    y = np.where(bc.target == 1, 1.0, -1.0)
    perm = np.random.default_rng(0).permutation(len(y))
    train, test = perm[:455], perm[455:]
    mean, std = bc.data[train].mean(axis=0), bc.data[train].std(axis=0)
    X = ds.normalize_rows((bc.data - mean) / std)
    return X[train], y[train], X[test], y[test]


def main() -> None:
    with stored.Timer() as t:
        cmp = ex.accuracy_vs_epsilon(*breast_cancer_split(), EPS_GRID, lams=LAM_GRID, delta=1e-5,
                                     n_seeds=N_SEEDS, rng=np.random.default_rng(1))
        data = {"epsilons": EPS_GRID, "lams": LAM_GRID, "delta": 1e-5, "n_seeds": N_SEEDS,
                "acc_nonprivate": cmp.acc_nonprivate}
        for method in ("output", "objpert"):
            acc = cmp.acc_output if method == "output" else cmp.acc_objpert
            data[f"{method}_mean"] = acc.mean(axis=2)
            data[f"{method}_se"] = acc.std(axis=2, ddof=1) / np.sqrt(N_SEEDS)
            lam, mean, sd = cmp.best(method)
            data[f"{method}_best_lam"], data[f"{method}_best_mean"] = lam, mean
            data[f"{method}_best_se"] = sd / np.sqrt(N_SEEDS)
    path = stored.save_result("output_vs_objective", "accuracy_vs_epsilon", data, provenance=stored.provenance(
        seeds={"split": 0, "noise": 1}, scale="200 noise seeds (CI: 20); the data set is fixed",
        wall_time_s=t.seconds))
    print(f"accuracy_vs_epsilon: {t.seconds:.0f} s -> {path}", flush=True)


if __name__ == "__main__":
    main()
