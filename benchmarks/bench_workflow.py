"""The whole private pipeline, pdpkit against IBM diffprivlib 0.6.6, at the same total budget.

Six data sets: breast_cancer, UCI Adult, UCI credit default (binary) and iris, wine,
digits (3, 3 and 10 classes). Every feature has a per-feature public range ``[low, high]``
(and every categorical column a public domain), written below once and **assumed public**:
documented domains where the documentation gives them (Adult's categories from
``adult.names``, its top-codes; credit default's codes; digits' 0..16 pixels), otherwise the
range of the whole data set rounded outward to one significant digit. Both libraries get
the same bounds; preprocessing is part of the pipeline and of its budget.

* pdpkit: ``SchemaEncoder`` (the public schema's encoding: clip to the bounds, map to
  [-1, 1], one-hot over the public domain, divide by √(#columns); no statistic of the data,
  costs nothing) → ``ObjPertClassifier(ε, 1e-6)`` (one-vs-rest with K > 2 classes, the
  composed total guarantee), and → ``ObjPertClassifierCV`` (private model selection, its
  cost included) when pdpkit has it. (ε, δ = 1e-6)-DP for the whole pipeline.
* diffprivlib, pure ε-DP for the whole pipeline, split by its ``BudgetAccountant``:
  ``public`` — its ``LogisticRegression(epsilon=ε, data_norm=1)`` on the same public
  encoding (computed by pdpkit's encoder, whose time on the training rows is added to the
  fit time); ``scaler`` — its private
  ``StandardScaler(epsilon=f·ε, bounds=public bounds)`` on the numerical columns, the
  categorical ones one-hot coded over the public domains (scikit-learn's ``OneHotEncoder``)
  and appended, then
  ``LogisticRegression(epsilon=(1−f)·ε, data_norm=√(#columns))`` (its documented pipeline),
  with f ∈ FRACS, the best f per cell chosen on the test accuracy — in diffprivlib's favour.
  Built-in multiclass (one-vs-rest at ε/K per class). Runs in its own environment
  (``.venv-bench``, ``make bench``): 0.6.6 does not import with scikit-learn ≥ 1.8.
* reference: scikit-learn ``LogisticRegressionCV`` (non-private tuning of C) on the public
  encoding.

Test accuracy: mean ± standard error over SEEDS seeds; seed k draws the noise and, except
for Adult (its published train/test files), a stratified 70/30 train/test split, the same
for every method. Fit time: median over the seeds of the whole pipeline's fit
(preprocessing included: pdpkit from the raw table, diffprivlib's ``scaler`` pipeline from
the raw numerical and categorical arrays). pdpkit calibrates its noise once per (ε, δ)
(cached): the first fit's time, with the calibration, is printed apart.
A cell is marked where pdpkit is not more accurate than the better diffprivlib pipeline
(``ACC``) or is slower than that pipeline (``SLOW``).

``PDPKIT_BENCH_SEEDS`` (default 10) and ``PDPKIT_BENCH_DATASETS`` (comma-separated names)
shorten a development run.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import warnings
from typing import NamedTuple

import numpy as np

from pdpkit import datasets
from pdpkit.estimators import ObjPertClassifier

EPS = (0.1, 0.5, 1.0, 2.0)
SEEDS = int(os.environ.get("PDPKIT_BENCH_SEEDS", "10"))
DELTA = 1e-6
FRACS = (0.1, 0.3, 0.5)  # share of ε that diffprivlib's StandardScaler gets
TEST_SIZE = 0.3
ROOT = pathlib.Path(__file__).resolve().parents[1]
BENCH_PYTHON = ROOT / ".venv-bench" / "bin" / "python"
TAG = "[workflow]"

# ------------------------------------------------------------------ public bounds
# A numerical column: (name, low, high); a categorical one: (name, (category, ...)).

#: breast_cancer, iris, wine: range of the whole data set rounded outward to one significant digit.
BREAST_CANCER_BOUNDS = [
    ("mean radius", 6, 30), ("mean texture", 9, 40), ("mean perimeter", 40, 200), ("mean area", 100, 3000),
    ("mean smoothness", 0.05, 0.2), ("mean compactness", 0.01, 0.4), ("mean concavity", 0, 0.5),
    ("mean concave points", 0, 0.3), ("mean symmetry", 0.1, 0.4), ("mean fractal dimension", 0.04, 0.1),
    ("radius error", 0.1, 3), ("texture error", 0.3, 5), ("perimeter error", 0.7, 30), ("area error", 6, 600),
    ("smoothness error", 0.001, 0.04), ("compactness error", 0.002, 0.2), ("concavity error", 0, 0.4),
    ("concave points error", 0, 0.06), ("symmetry error", 0.007, 0.08), ("fractal dimension error", 0.0008, 0.03),
    ("worst radius", 7, 40), ("worst texture", 10, 50), ("worst perimeter", 50, 300), ("worst area", 100, 5000),
    ("worst smoothness", 0.07, 0.3), ("worst compactness", 0.02, 2), ("worst concavity", 0, 2),
    ("worst concave points", 0, 0.3), ("worst symmetry", 0.1, 0.7), ("worst fractal dimension", 0.05, 0.3),
]
IRIS_BOUNDS = [("sepal length (cm)", 4, 8), ("sepal width (cm)", 2, 5), ("petal length (cm)", 1, 7),
               ("petal width (cm)", 0.1, 3)]
WINE_BOUNDS = [
    ("alcohol", 10, 20), ("malic_acid", 0.7, 6), ("ash", 1, 4), ("alcalinity_of_ash", 10, 30),
    ("magnesium", 70, 200), ("total_phenols", 0.9, 4), ("flavanoids", 0.3, 6), ("nonflavanoid_phenols", 0.1, 0.7),
    ("proanthocyanins", 0.4, 4), ("color_intensity", 1, 20), ("hue", 0.4, 2), ("od280/od315_of_diluted_wines", 1, 4),
    ("proline", 200, 2000),
]
#: digits: 8x8 images of 4x4-pixel block counts, documented range 0..16.
DIGITS_BOUNDS = [(f"pixel_{i}_{j}", 0, 16) for i in range(8) for j in range(8)]


def _adult_bounds() -> list:
    """Adult: the census extract's documented domains and top-codes (``pdpkit.datasets.adult_schema``)."""
    return [(c.name, c.low, c.high) if c.kind == "numeric" else (c.name, tuple(c.categories))
            for c in datasets.adult_schema().features]


#: credit default: documented codes (SEX 1/2, EDUCATION 1..4, MARRIAGE 1..3, repayment status up to 9);
#: amounts: the range over each group of six columns rounded outward to one significant digit.
CREDIT_BOUNDS = (
    [("LIMIT_BAL", 0, 1e6), ("SEX", ("1", "2")), ("EDUCATION", ("1", "2", "3", "4")), ("MARRIAGE", ("1", "2", "3")),
     ("AGE", 20, 80)]
    + [(f"PAY_{k}", -2, 9) for k in (0, 2, 3, 4, 5, 6)]
    + [(f"BILL_AMT{k}", -4e5, 2e6) for k in range(1, 7)]
    + [(f"PAY_AMT{k}", 0, 2e6) for k in range(1, 7)]
)


# ------------------------------------------------------------------------ data


class Task(NamedTuple):
    """A data set ready for both libraries."""

    name: str
    frame: object                   # pandas.DataFrame of the raw feature columns (categoricals as str)
    y: np.ndarray                   # class index 0..K-1
    spec: list                      # public bounds / domains, one entry per feature column
    splits: list                    # [(train rows, test rows)] per seed
    note: str

    @property
    def n_classes(self) -> int:
        return DOCUMENTED_CLASSES[self.name]

    @property
    def classes(self) -> list[int]:
        """The public classes: the class indices 0..K-1 of the data set's documented K (never read off y)."""
        return list(range(self.n_classes))


#: The number of classes each data set documents (its public label domain, as class indices 0..K-1).
DOCUMENTED_CLASSES = {"breast_cancer": 2, "adult": 2, "credit_default": 2, "iris": 3, "wine": 3, "digits": 10}


def _stratified_splits(y: np.ndarray) -> list:
    from sklearn.model_selection import train_test_split

    idx = np.arange(len(y))
    return [tuple(train_test_split(idx, test_size=TEST_SIZE, stratify=y, random_state=seed)) for seed in range(SEEDS)]


_ROUNDED = "bounds: the data's range rounded outward to one significant digit"
BOUNDS_NOTES = {"breast_cancer": _ROUNDED, "iris": _ROUNDED, "wine": _ROUNDED,
                "digits": "bounds: the documented pixel range 0..16",
                "adult": "bounds: documented domains (adult.names) and the census top-codes",
                "credit_default": "bounds: documented codes; amounts: their range rounded outward"}


def _sklearn_task(name: str, spec: list) -> Task:
    from sklearn import datasets as skd

    bunch = getattr(skd, f"load_{name}")(as_frame=True)
    frame = bunch.frame[[c for c, *_ in spec]]
    y = np.asarray(bunch.target, dtype=int)
    return Task(name, frame, y, spec, _stratified_splits(y), "scikit-learn's bundled copy; 70/30 split per seed")


def _adult_task() -> Task:
    import pandas as pd

    tr, te = datasets.load_adult_frame("train"), datasets.load_adult_frame("test")
    frame = pd.concat([tr, te], ignore_index=True)
    y = (frame.pop("income") == ">50K").to_numpy(dtype=int)
    split = (np.arange(len(tr)), np.arange(len(tr), len(frame)))
    return Task("adult", frame, y, _adult_bounds(), [split] * SEEDS,
                "UCI Adult complete rows (pdpkit.datasets.load_adult_frame); adult.data / adult.test")


def _credit_task() -> Task:
    frame = datasets.load_credit_default_frame()
    y = frame.pop("default payment next month").to_numpy(dtype=int)
    frame = frame.drop(columns="ID")
    # undocumented codes into the documented "others" (a fixed map of each record: public)
    frame["EDUCATION"] = frame["EDUCATION"].where(frame["EDUCATION"].isin([1, 2, 3, 4]), 4)
    frame["MARRIAGE"] = frame["MARRIAGE"].where(frame["MARRIAGE"].isin([1, 2, 3]), 3)
    for c in ("SEX", "EDUCATION", "MARRIAGE"):
        frame[c] = frame[c].astype(str)
    return Task("credit_default", frame, y, CREDIT_BOUNDS, _stratified_splits(y),
                "UCI credit default (pdpkit.datasets.load_credit_default_frame, vendored); ID dropped; 70/30 split")


TASKS = {
    "breast_cancer": lambda: _sklearn_task("breast_cancer", BREAST_CANCER_BOUNDS),
    "adult": _adult_task,
    "credit_default": _credit_task,
    "iris": lambda: _sklearn_task("iris", IRIS_BOUNDS),
    "wine": lambda: _sklearn_task("wine", WINE_BOUNDS),
    "digits": lambda: _sklearn_task("digits", DIGITS_BOUNDS),
}


# ------------------------------------------------------------------ encodings


def _is_numeric(entry) -> bool:
    return len(entry) == 3


def make_schema(task: Task):
    """The task's public schema (``pdpkit.schema``), or None if pdpkit has no schema module."""
    try:
        from pdpkit.schema import Column, Schema
    except ImportError:
        return None
    cols = [Column(e[0], role="feature", kind="numeric", low=float(e[1]), high=float(e[2])) if _is_numeric(e)
            else Column(e[0], role="feature", kind="categorical", categories=tuple(e[1])) for e in task.spec]
    return Schema(columns=tuple(cols))


def make_encoder(task: Task):
    """pdpkit's public encoder for the task: ``SchemaEncoder(schema)``."""
    schema = make_schema(task)
    if schema is not None:
        from pdpkit.preprocessing import SchemaEncoder

        return SchemaEncoder(schema)
    return _contract_encoder(task.spec)  # until pdpkit.schema exists: the same encoding, by its contract


def _contract_encoder(spec):
    """The public encoding of the schema contract (used only while pdpkit.schema is missing)."""
    from sklearn.preprocessing import FunctionTransformer

    return FunctionTransformer(lambda frame: _public_encoding(spec, frame))


def _public_encoding(spec, frame) -> np.ndarray:
    """Contract encoding: numbers clipped and mapped to [-1, 1], one-hot over the domain, / sqrt(#columns)."""
    blocks = []
    for e in spec:
        values = frame[e[0]].to_numpy()
        if _is_numeric(e):
            low, high = float(e[1]), float(e[2])
            v = np.clip(values.astype(float), low, high)
            blocks.append(((2 * v - low - high) / (high - low))[:, None])
        else:
            blocks.append((values.astype(str)[:, None] == np.array(e[1], dtype=str)[None, :]).astype(float))
    return np.hstack(blocks) / math.sqrt(len(spec))


def _diffprivlib_arrays(task: Task) -> dict:
    """What diffprivlib's pipelines get: the raw numerical columns with their bounds, the raw
    categorical columns (str) with their public domains."""
    num = [e for e in task.spec if _is_numeric(e)]
    cat = [e for e in task.spec if not _is_numeric(e)]
    N = task.frame[[e[0] for e in num]].to_numpy(dtype=float)
    S = (np.column_stack([task.frame[e[0]].to_numpy().astype(str) for e in cat]) if cat
         else np.zeros((len(task.y), 0), dtype=str))
    out = {"N": N, "S": S, "lows": np.array([e[1] for e in num], float),
           "highs": np.array([e[2] for e in num], float)}
    out.update({f"dom_{j}": np.array(e[1], dtype=str) for j, e in enumerate(cat)})
    return out


# -------------------------------------------------------------------- fitting


def _mean_se(values) -> tuple[float, float]:
    a = np.asarray(values, dtype=float)
    return float(a.mean()), float(a.std(ddof=1) / math.sqrt(len(a))) if len(a) > 1 else 0.0


def _pdpkit_runs(task: Task, make_estimator, label: str) -> dict | str:
    """{eps: {"acc": [...], "time": [...]}} of the pipeline encoder -> estimator, or why it could not run."""
    from sklearn.pipeline import make_pipeline

    out: dict = {}
    refused: set = set()
    for eps in EPS:
        accs, times = [], []
        _clear_calibration_caches()  # the first seed's fit includes the calibration: "cold"
        for seed, (tr, te) in enumerate(task.splits):
            try:
                est = make_estimator(eps, seed, task.classes)
            except (ImportError, TypeError) as exc:
                return f"not available ({type(exc).__name__}: {exc})"
            pipe = make_pipeline(make_encoder(task), est)
            Xtr, ytr = task.frame.iloc[tr], task.y[tr]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                try:
                    pipe.fit(Xtr, ytr)
                except ValueError as exc:
                    if "binary" in str(exc):
                        return "not available (binary only)"
                    if type(exc).__name__ != "BudgetExceededError":
                        raise
                    # the session accountant of the pipeline's own budget refused: fit without it
                    refused.add(eps)
                    est.set_params(accountant=None)
                    t0 = time.perf_counter()
                    pipe.fit(Xtr, ytr)
                times.append(time.perf_counter() - t0)
            _check_guarantee(pipe[-1], eps, label)
            accs.append(float(np.mean(pipe.predict(task.frame.iloc[te]) == task.y[te])))
        out[eps] = {"acc": accs, "time": times, "cold": times[0]}
    if refused:
        out["refused"] = sorted(refused)
    return out


def _accountant(eps: float):
    """A fresh ``PrivacyAccountant`` of budget (eps, DELTA) for one pipeline, or None if pdpkit has none."""
    try:
        from pdpkit.accountant import PrivacyAccountant
    except ImportError:
        return None
    return PrivacyAccountant(eps, DELTA)


def _with_accountant(cls, eps: float, seed: int, classes: list):
    """``cls(eps, DELTA, classes=classes)``, charging a session accountant of the same budget when pdpkit has one."""
    acc = _accountant(eps)
    if acc is not None and "accountant" in cls().get_params():
        return cls(eps, DELTA, random_state=seed, accountant=acc, classes=classes)
    return cls(eps, DELTA, random_state=seed, classes=classes)


def _clear_calibration_caches() -> None:
    """Forget pdpkit's cached calibrations and compositions (they depend on public parameters only)."""
    import importlib

    for module in ("pdpkit.estimators", "pdpkit.model_selection", "pdpkit.accountant", "pdpkit.accounting",
                   "pdpkit.selection", "pdpkit.objpert"):
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        for value in list(vars(mod).values()):
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


def _check_guarantee(est, eps: float, label: str) -> None:
    """The whole pipeline's total guarantee (the encoder costs nothing) is within (eps, DELTA)."""
    acc = getattr(est, "accountant", None)
    g = acc.spent() if acc is not None else est.privacy_spent()
    if g.epsilon > eps * (1 + 1e-9) or g.delta > DELTA * (1 + 1e-9):
        raise AssertionError(f"{label}: guarantee ({g.epsilon}, {g.delta}) exceeds the budget ({eps}, {DELTA})")


def _objpert(eps: float, seed: int, classes: list):
    return _with_accountant(ObjPertClassifier, eps, seed, classes)


def _objpert_cv(eps: float, seed: int, classes: list):
    try:
        from pdpkit.model_selection import ObjPertClassifierCV
    except ImportError:
        from pdpkit.estimators import ObjPertClassifierCV

    return _with_accountant(ObjPertClassifierCV, eps, seed, classes)


def _nonprivate(task: Task, E: np.ndarray) -> dict:
    """Non-private reference: LogisticRegressionCV (C tuned by 5-fold CV) on the public encoding."""
    from sklearn.linear_model import LogisticRegressionCV

    accs, times, seen = [], [], {}
    for tr, te in task.splits:
        key = (tr.tobytes(), te.tobytes())
        if key not in seen:  # Adult: one published split, a deterministic fit
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                clf = LogisticRegressionCV(Cs=10, max_iter=2000).fit(E[tr], task.y[tr])
            seen[key] = (float(np.mean(clf.predict(E[te]) == task.y[te])), time.perf_counter() - t0)
        accs.append(seen[key][0])
        times.append(seen[key][1])
    return {"acc": accs, "time": times}


def _diffprivlib(task: Task, E: np.ndarray) -> dict | str:
    if not BENCH_PYTHON.exists():
        return "not run: .venv-bench missing (make bench creates it)"
    arrays = _diffprivlib_arrays(task)
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / f"{task.name}.npz"
        splits = {f"tr_{k}": tr for k, (tr, _) in enumerate(task.splits)}
        splits.update({f"te_{k}": te for k, (_, te) in enumerate(task.splits)})
        np.savez(path, E=E, y=task.y, **arrays, **splits)
        res = subprocess.run([str(BENCH_PYTHON), str(pathlib.Path(__file__).with_name("_diffprivlib_worker.py")),
                              "workflow", str(path), ",".join(map(str, EPS)), str(SEEDS),
                              ",".join(map(str, FRACS))], capture_output=True, text=True)
    if res.returncode:
        return f"failed: {res.stderr.strip().splitlines()[-1:]}"
    raw = json.loads(res.stdout.strip().splitlines()[-1])
    out = {variant: {float(e): r for e, r in per_eps.items()} for variant, per_eps in raw.items()}
    # the public pipeline's preprocessing is pdpkit's encoder: add its time on the training rows
    encode = []
    for tr, _ in task.splits:
        rows = task.frame.iloc[tr]
        t0 = time.perf_counter()
        make_encoder(task).fit_transform(rows)
        encode.append(time.perf_counter() - t0)
    for r in out["public"].values():
        r["time"] = [t + e for t, e in zip(r["time"], encode)]
    return out


# ---------------------------------------------------------------------- table


def _cell(runs) -> str:
    if runs is None:
        return f"{'-':>13s} {'-':>7s}"
    m, se = _mean_se(runs["acc"])
    return f"{m:6.3f}±{se:5.3f} {np.median(runs['time']) * 1e3:7.1f}"


def _best_diffprivlib(dpl: dict, eps: float) -> tuple[str, dict]:
    """The diffprivlib pipeline (public, or the scaler at its best share f) with the higher mean accuracy."""
    return max(((v, r[eps]) for v, r in dpl.items()), key=lambda vr: np.mean(vr[1]["acc"]))


def _flags(ours, theirs) -> str:
    if ours is None or theirs is None:
        return ""
    flags = []
    if np.mean(ours["acc"]) <= np.mean(theirs["acc"]):
        flags.append("ACC")
    if np.median(ours["time"]) > np.median(theirs["time"]):
        flags.append("SLOW")
    return ",".join(flags)


def _ratios(ours, theirs) -> str:
    if ours is None or theirs is None:
        return f"{'-':>5s} {'-':>6s}"
    return (f"{np.mean(ours['acc']) / np.mean(theirs['acc']):5.3f} "
            f"{np.median(ours['time']) / np.median(theirs['time']):6.2f}")


def run_task(task: Task) -> list[tuple]:
    """Run every method on one task and print its block of the table; return the marked cells."""
    encoder = make_encoder(task)
    E = np.asarray(encoder.fit_transform(task.frame), dtype=float)
    ref = _nonprivate(task, E)
    dpl = _diffprivlib(task, E)
    ours = _pdpkit_runs(task, _objpert, "ObjPertClassifier")
    ours_cv = _pdpkit_runs(task, _objpert_cv, "ObjPertClassifierCV")
    n_tr = len(task.splits[0][0])
    m, se = _mean_se(ref["acc"])
    print(f"{TAG} {task.name}: n_train={n_tr}, n_test={len(task.splits[0][1])}, {len(task.spec)} columns -> "
          f"{E.shape[1]} encoded, K={task.n_classes} classes; {task.note}; "
          f"{BOUNDS_NOTES[task.name]} (assumed public)", flush=True)
    print(f"{TAG}   non-private reference (LogisticRegressionCV on the public encoding): "
          f"{m:.3f}±{se:.3f}, fit {np.median(ref['time']):.3f} s", flush=True)
    for what, res in (("ObjPertClassifier", ours), ("ObjPertClassifierCV", ours_cv), ("diffprivlib", dpl)):
        if isinstance(res, str):
            print(f"{TAG}   {what}: {res}", flush=True)
        elif what.startswith("ObjPert"):
            refused = res.pop("refused", [])
            print(f"{TAG}   {what}: first fit per eps after clearing pdpkit's calibration caches: "
                  + ", ".join(f"{eps:g}: {r['cold']:.3f} s" for eps, r in res.items())
                  + " (the table's median is over the seeds)", flush=True)
            if refused:
                print(f"{TAG}   {what}: a PrivacyAccountant of the same budget (eps, {DELTA:g}) refused the fit "
                      f"(BudgetExceededError) at eps = {', '.join(f'{e:g}' for e in refused)}: the accountant "
                      f"composes the estimator's charge to more than the estimator calibrated it to; fitted "
                      f"without the accountant, guarantee from privacy_spent()", flush=True)
    ours = None if isinstance(ours, str) else ours
    ours_cv = None if isinstance(ours_cv, str) else ours_cv
    dpl = None if isinstance(dpl, str) else dpl
    marked = []
    for eps in EPS:
        dpl_pub = dpl["public"][eps] if dpl else None
        if dpl:
            scalers = {v: r for v, r in dpl.items() if v.startswith("scaler")}
            sv, dpl_sc = _best_diffprivlib(scalers, eps)
            best_v, best = _best_diffprivlib(dpl, eps)
        else:
            sv, dpl_sc, best_v, best = "", None, "", None
        o, c = (ours or {}).get(eps), (ours_cv or {}).get(eps)
        f_o, f_c = _flags(o, best), _flags(c, best)
        for label, flag in (("ObjPertClassifier", f_o), ("ObjPertClassifierCV", f_c)):
            if flag:
                marked.append((task.name, eps, label, flag))
        print(f"{TAG} {task.name:>14s} {eps:4.1f} | {_cell(o)} | {_cell(c)} | {_cell(dpl_pub)} | "
              f"{_cell(dpl_sc)} {sv.removeprefix('scaler'):>4s} | {_ratios(o, best)} {f_o:<8s}| "
              f"{_ratios(c, best)} {f_c:<8s}", flush=True)
    return marked


def _header() -> None:
    print(f"{TAG} whole pipeline, same total budget: pdpkit (eps, {DELTA:g})-DP (tight accountant, total "
          f"guarantee of every release checked), diffprivlib 0.6.6 pure eps-DP (BudgetAccountant); "
          f"{SEEDS} seeds; per-feature bounds and categorical domains assumed PUBLIC, the same for both",
          flush=True)
    print(f"{TAG} accuracy = test accuracy mean±s.e. over seeds, fit ms = median milliseconds of the whole "
          f"pipeline's fit; ratios = pdpkit / better diffprivlib pipeline (acc, time); ACC = not more accurate, SLOW = slower",
          flush=True)
    print(f"{TAG} {'data':>14s} {'eps':>4s} | {'ObjPertClassifier  fit ms':>21s} | {'ObjPertClassifierCV':>21s} | "
          f"{'dpl public enc.':>21s} | {'dpl DP scaler':>21s} {'f':>4s} | {'acc_r':>5s} {'time_r':>6s} "
          f"{'':8s}| {'CV acc_r':>5s} {'time_r':>6s}", flush=True)


def main() -> None:
    wanted = os.environ.get("PDPKIT_BENCH_DATASETS")
    names = [n for n in TASKS if not wanted or n in wanted.split(",")]
    _header()
    t0 = time.perf_counter()
    marked = []
    for name in names:
        marked += run_task(TASKS[name]())
    print(f"{TAG} cells where pdpkit is not more accurate (ACC) or slower (SLOW) than the better diffprivlib "
          f"pipeline: " + ("; ".join(f"{n} eps={e:g} {lab} {f}" for n, e, lab, f in marked) or "none"), flush=True)
    print(f"{TAG} benchmark wall time {time.perf_counter() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    main()
