"""Private linear regression on held-out data: pdpkit's OPS and AdaOPS against the alternatives.

At equal ε (δ = 1e-6 for pdpkit; the others are pure ε-DP), on four data sets — the two wine
sets the project ships (``pdpkit.datasets.load_wine_quality``: features standardized as the
loader documents, rows clipped into the unit ball, labels (q − 5)/5) and two it uses nowhere
else, from statsmodels' bundled copies: ``star98`` (303 California school districts, 12
columns, label the share above the national median) and ``fair`` (6,366 survey answers, 8
columns, label the 1–5 marriage rating). Their public bounds are written below from the
codebooks, not read from the data; each column is mapped onto [-1, 1] by them (and the rows,
divided by √d, lie in the unit ball).

Methods, each fitted on the same 80% and scored on the other 20% of 10 random splits:
``OPSRegressor`` and ``AdaOPSRegressor`` (squared loss), ``ObjPertRegressor`` (pseudo-Huber),
IBM diffprivlib 0.6.6's ``LinearRegression`` (given each column's bounds), OpenDP 0.16's
Theil–Sen (one feature: the one most correlated with the label on the training rows — chosen
non-privately, in its favour), and two non-private baselines: least squares and the training
mean (the "constant predictor"). diffprivlib and OpenDP run in ``.venv-bench``
(``_regression_worker.py``). Printed: RMSE mean ± sd on the label's [-1, 1] scale, and each
method's RMSE over the constant predictor's (the baseline, measured in the same run).
"""

from __future__ import annotations

import json
import math
import pathlib
import subprocess
import tempfile
import warnings

import numpy as np

from pdpkit.datasets import load_wine_quality
from pdpkit.estimators import ObjPertRegressor
from pdpkit.ops_estimators import AdaOPSRegressor, OPSRegressor

EPS = (0.5, 1.0, 2.0)
DELTA = 1e-6
SEEDS = tuple(range(10))
HERE = pathlib.Path(__file__).resolve().parent
BENCH_PYTHON = HERE.parent / ".venv-bench" / "bin" / "python"

#: Public bounds (low, high) per column, from the data sets' documentation.
BOUNDS = {
    "star98": {"label": (0.0, 1.0), "LOWINC": (0, 100), "PERASIAN": (0, 100), "PERBLACK": (0, 100),
               "PERHISP": (0, 100), "PERMINTE": (0, 100), "AVYRSEXP": (0, 40), "AVSALK": (0, 100),
               "PERSPENK": (0, 20), "PTRATIO": (0, 50), "PCTAF": (0, 100), "PCTCHRT": (0, 100),
               "PCTYRRND": (0, 100)},
    "fair": {"label": (1.0, 5.0), "age": (17.5, 42), "yrs_married": (0.5, 23), "children": (0, 5.5),
             "religious": (1, 4), "educ": (9, 20), "occupation": (1, 6), "occupation_husb": (1, 6),
             "affairs": (0, 60)},
}


def _unit(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return np.clip(2.0 * (values - lo) / (hi - lo) - 1.0, -1.0, 1.0)


def _external(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(columns in [-1, 1] by their public bounds, label in [-1, 1]) of a statsmodels data set."""
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "data.npz"
        subprocess.run([str(BENCH_PYTHON), str(HERE / "_regression_worker.py"), "data", name, str(out)], check=True)
        raw = np.load(out)
        X, y, names = raw["X"], raw["y"], [str(v) for v in raw["names"]]
    b = BOUNDS[name]
    cols = np.column_stack([_unit(X[:, j], *b[c]) for j, c in enumerate(names)])
    return cols, _unit(y, *b["label"])


def _data_sets() -> dict[str, tuple[np.ndarray, np.ndarray, float]]:
    """name -> (features each in [-1, 1], labels in [-1, 1], the scale that puts rows in the unit ball)."""
    out = {}
    for color in ("red", "white"):
        ds = load_wine_quality(color, row_norm="clip")
        out[f"wine-{color}"] = (np.asarray(ds.X), np.asarray(ds.y), 1.0)
    if BENCH_PYTHON.exists():
        for name in ("star98", "fair"):
            X, y = _external(name)
            out[name] = (X, y, 1.0 / math.sqrt(X.shape[1]))
    else:
        print("[regression] .venv-bench missing (make bench creates it): star98, fair, diffprivlib and OpenDP "
              "skipped")
    return out


def _splits(n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for s in SEEDS:
        p = np.random.default_rng(1000 + s).permutation(n)
        out.append((p[: int(0.8 * n)], p[int(0.8 * n):]))
    return out


def _rmse(pred: np.ndarray, y: np.ndarray) -> float:
    return float(np.sqrt(np.mean((pred - y) ** 2)))


def _ours(X, y, scale, splits) -> dict[str, dict[float, list[float]]]:
    from sklearn.linear_model import LinearRegression

    res: dict[str, dict[float, list[float]]] = {m: {} for m in ("OPS", "AdaOPS", "ObjPert (Huber)", "least squares",
                                                                 "constant")}
    Xs = X * scale
    for eps in EPS:
        for m in res:
            res[m][eps] = []
        for k, (tr, te) in enumerate(splits):
            for name, est in (("OPS", OPSRegressor(eps, DELTA, random_state=k)),
                              ("AdaOPS", AdaOPSRegressor(eps, DELTA, random_state=k)),
                              ("ObjPert (Huber)", ObjPertRegressor(eps, DELTA, random_state=k))):
                res[name][eps].append(_rmse(est.fit(Xs[tr], y[tr]).predict(Xs[te]), y[te]))
            res["least squares"][eps].append(_rmse(LinearRegression().fit(X[tr], y[tr]).predict(X[te]), y[te]))
            res["constant"][eps].append(_rmse(np.full(len(te), y[tr].mean()), y[te]))
    return res


def _theirs(X, y, splits) -> dict[str, dict[float, list[float]]] | None:
    if not BENCH_PYTHON.exists():
        return None
    arrays = {}
    for k, (tr, te) in enumerate(splits):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            corr = [abs(np.corrcoef(X[tr, j], y[tr])[0, 1]) for j in range(X.shape[1])]
        arrays.update({f"Xtr_{k}": X[tr], f"ytr_{k}": y[tr], f"Xte_{k}": X[te], f"yte_{k}": y[te],
                       f"feat_{k}": np.int64(np.nanargmax(corr))})
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "reg.npz"
        np.savez(path, **arrays)
        run = subprocess.run([str(BENCH_PYTHON), str(HERE / "_regression_worker.py"), "fit", str(path),
                              ",".join(map(str, EPS))], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"[regression] the benchmark environment failed: {run.stderr.strip().splitlines()[-1:]}")
        return None
    got = json.loads(run.stdout.strip().splitlines()[-1])
    return {"diffprivlib LinearRegression": {float(e): v for e, v in got["diffprivlib"].items()},
            "OpenDP Theil-Sen (1 feature)": {float(e): v for e, v in got["opendp"].items()}}


def main() -> None:
    private = ("OPS", "AdaOPS", "ObjPert (Huber)")
    for name, (X, y, scale) in _data_sets().items():
        splits = _splits(len(y))
        res = _ours(X, y, scale, splits)
        res.update(_theirs(X, y, splits) or {})
        const = {e: float(np.mean(res["constant"][e])) for e in EPS}
        print(f"[regression] {name}: n = {len(y)}, d = {X.shape[1]}; test RMSE on [-1, 1], mean ± sd over "
              f"{len(SEEDS)} splits (ratio to the constant predictor); pdpkit at delta = {DELTA:g}, others pure eps")
        print(f"[regression] {'method':30s}" + "".join(f"{'eps = ' + str(e):>26s}" for e in EPS))
        for m, by_eps in res.items():
            cells = "".join(f"{np.mean(v):>12.4f} ± {np.std(v):.4f} ({np.mean(v) / const[e]:4.2f})"
                            for e, v in by_eps.items())
            print(f"[regression] {m:30s}{cells}")
        others = [m for m in res if m not in private and m not in ("least squares", "constant")]
        for e in EPS:
            for group, label in ((private[:2], "OPS/AdaOPS"), (private, "pdpkit")):
                best = min(group, key=lambda m: np.mean(res[m][e]))
                rivals = [m for m in others if np.mean(res[m][e]) < np.mean(res[best][e])]
                verdict = "ahead of every other library's method" if not rivals else f"behind {', '.join(rivals)}"
                print(f"[regression]   eps = {e}: best of {label} ({best}) is {verdict}", flush=True)


if __name__ == "__main__":
    main()
