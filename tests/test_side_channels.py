"""Side channels of the workflow: what leaves pdpkit besides the mechanisms' outputs.

Each test attacks the code path a user runs (estimators, cross-validation, pickled copies,
private selection) the way an adversary would, and each comes with a deliberately wrong
variant — the behaviour before these channels were closed — that the same check rejects:

1. two charges of one session never share noise, whatever seeds were passed;
2. the class list (and the number of one-vs-rest models) never depends on the labels;
3. a copy of an estimator in another process cannot spend outside the session's ledger;
4. a private selection emits nothing that depends on its secret number of runs;
5. whether a fit succeeds does not depend on one record (no iteration cap);
6. the curator's messages are the same text on neighbouring data sets.
"""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import pdpkit.estimators as est_mod
import pdpkit.model_selection as ms_mod
import pdpkit.selection as sel_mod
from pdpkit import _solver
from pdpkit._validation import charged_generator
from pdpkit.accountant import DetachedAccountantError, PrivacyAccountant
from pdpkit.audit import clopper_pearson
from pdpkit.estimators import ObjPertClassifier, ObjPertRegressor, prepare_rows
from pdpkit.losses import get_loss
from pdpkit.model_selection import ObjPertClassifierCV
from pdpkit.objpert import objpert_fit

CLASSES = ["no", "yes"]


def _data(n: int = 200, d: int = 2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, "yes", "no").astype(object)
    return X, y


# ---------------------------------------------------------------- 1. two charges, one noise
def _max_abs_corr(streams: list[np.ndarray]) -> float:
    """Largest |Pearson correlation| between any two standard-normal streams."""
    c = np.corrcoef(np.vstack(streams))
    return float(np.max(np.abs(c - np.eye(len(streams)))))


def test_charged_streams_are_independent_and_a_shared_seed_is_not():
    N = 200_000
    same_seed = [charged_generator(0, p).standard_normal(N) for p in range(4)]
    # |r| of independent streams is about N^{-1/2} = 0.0022; 6 sd is a failure probability < 1e-8
    assert _max_abs_corr(same_seed) < 6 / math.sqrt(N)
    # the wrong variant: every charge seeded from default_rng(seed), as before
    wrong = [np.random.default_rng(0).standard_normal(N) for _ in range(4)]
    assert not _max_abs_corr(wrong) < 6 / math.sqrt(N)
    # a Generator advances between charges; two fresh generators of one seed still differ by position
    one = np.random.default_rng(5)
    g = [charged_generator(one, 0).standard_normal(8) for _ in range(2)]
    assert not np.array_equal(g[0], g[1])
    h = [charged_generator(np.random.default_rng(5), p).standard_normal(8) for p in (0, 1)]
    assert not np.array_equal(h[0], h[1])
    # reproducible: the same seed and position give the same stream
    assert np.array_equal(charged_generator(7, 3).standard_normal(5), charged_generator(7, 3).standard_normal(5))


def _neg_gradient_over_sigma(release, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """-(gradient of the known records' loss + lambda theta) at the released theta, over sigma: about b / sigma."""
    loss = get_loss("logistic")
    rows = prepare_rows(X, norm_bound=release.norm_bound, fit_intercept=release.fit_intercept)
    s = np.where(y == CLASSES[1], 1.0, -1.0)
    theta = np.asarray(release.theta)
    g = rows.T @ loss.d1(rows @ theta, s) + release.lam * theta
    return -g / release.sigma


def _two_fits_statistic(X: np.ndarray, y: np.ndarray, Xo: np.ndarray, yo: np.ndarray, seed: int) -> float:
    """The adversary's statistic from two releases of one session made with the same seed.

    With shared noise, b1/sigma1 = b2/sigma2: the released models' first-order conditions then
    cancel the noise, and what is left is the target's gradient (zero without the target).
    """
    acc = PrivacyAccountant(1.0, 1e-5)
    r1 = ObjPertClassifier(0.3, 1e-6, classes=CLASSES, accountant=acc, random_state=seed).fit(X, y).release_
    r2 = ObjPertClassifier(0.6, 1e-6, classes=CLASSES, accountant=acc, random_state=seed).fit(X, y).release_
    return float(np.linalg.norm(_neg_gradient_over_sigma(r1, Xo, yo) - _neg_gradient_over_sigma(r2, Xo, yo)))


def _audit_two_fits(runs: int, monkeypatch=None) -> tuple[int, int, float, float]:
    X, y = _data(120, 2, seed=3)
    z_x, z_y = np.array([[1.0, 0.0]]), np.array(["no"])  # a record the model gets wrong: a large gradient
    Xz, yz = np.vstack([X, z_x]), np.concatenate([y, z_y])
    threshold = 0.01  # fixed before sampling: shared noise cancels far below it; the target leaves about 0.03
    hits_d = sum(_two_fits_statistic(X, y, X, y, s) < threshold for s in range(runs))
    hits_dz = sum(_two_fits_statistic(Xz, yz, X, y, s) < threshold for s in range(runs))
    acc = PrivacyAccountant(1.0, 1e-5)
    for e in (0.3, 0.6):
        ObjPertClassifier(e, 1e-6, classes=CLASSES, accountant=acc, random_state=0).fit(X, y)
    g = acc.spent()
    return hits_d, hits_dz, g.epsilon, g.delta


def _refuted(hits_d: int, hits_dz: int, runs: int, eps: float, delta: float, alpha: float = 1e-3) -> bool:
    """Whether P_D[S] <= e^eps P_D'[S] + delta is refuted with confidence 1 - alpha (Clopper-Pearson, Bonferroni)."""
    p_lo = clopper_pearson(hits_d, runs, alpha / 2)[0]
    q_hi = clopper_pearson(hits_dz, runs, alpha / 2)[1]
    return bool(p_lo - math.exp(eps) * q_hi > delta)


def test_two_releases_with_one_seed_do_not_cancel_their_noise(monkeypatch):
    runs = 12
    hits_d, hits_dz, eps, delta = _audit_two_fits(runs)
    assert not _refuted(hits_d, hits_dz, runs, eps, delta)
    assert hits_d == 0  # independent noise: the statistic is of order sqrt(2 d + 2), never below 0.01
    # the wrong variant (each charge seeded from default_rng(seed)) is refuted: no epsilon below infinity holds
    # (24 runs: 24/24 against 0/24 refutes the claim at confidence 0.999)
    monkeypatch.setattr(est_mod, "charged_generator", lambda seed, position: np.random.default_rng(seed))
    runs = 24
    hits_d, hits_dz, eps, delta = _audit_two_fits(runs)
    assert _refuted(hits_d, hits_dz, runs, eps, delta)


def test_every_release_of_a_session_gets_its_own_place(monkeypatch):
    from sklearn.base import clone

    import pdpkit.preprocessing as pre

    seen = []
    real = charged_generator

    def spy(seed, position):
        seen.append((seed, position))
        return real(seed, position)

    for mod in (est_mod, ms_mod, pre):
        monkeypatch.setattr(mod, "charged_generator", spy)
    X, y = _data(300, 3)
    acc = PrivacyAccountant(20.0, 1e-5)
    pre.PrivateStandardScaler(1.0, 1e-6, bounds=(-1.0, 1.0), accountant=acc, random_state=0).fit(X)
    base = ObjPertClassifier(1.0, 1e-6, classes=CLASSES, accountant=acc, random_state=0)
    a, b = clone(base).fit(X, y), clone(base).fit(X, y)  # clone copies the integer seed into both
    ObjPertClassifierCV(1.0, 1e-6, classes=CLASSES, accountant=acc, random_state=0).fit(X, y)
    assert [p for _, p in seen] == [0, 1, 2, 3] and all(s == 0 for s, _ in seen)
    assert not np.allclose(a.coef_, b.coef_)  # the same seed, two places: two noises


# ---------------------------------------------------------------- 2. classes from public input
def _rare_label_releases(classes_from_data: bool) -> tuple:
    rng = np.random.default_rng(1)
    X = rng.uniform(-0.5, 0.5, size=(300, 2))
    y = np.where(X[:, 0] > 0, "a", "b")
    Xz, yz = np.vstack([X, [[0.1, 0.1]]]), np.concatenate([y, ["c"]])  # the only person with label "c"
    kw = dict(lam=1.0, sigma=5.0, random_state=0)
    kw.update({} if classes_from_data else {"classes": ["a", "b", "c"]})
    cls = _FromData if classes_from_data else ObjPertClassifier
    return cls(**kw).fit(X, y).release_, cls(**kw).fit(Xz, yz).release_


class _FromData(ObjPertClassifier):
    """The wrong variant, for the test only: classes read off the labels, as before."""

    def _public_classes(self, sch, y):
        return np.unique(np.asarray(y))


def test_one_rare_label_changes_nothing_but_the_noise_a_model_sees():
    without, with_z = _rare_label_releases(classes_from_data=False)
    assert without.classes == with_z.classes == ("a", "b", "c")
    assert without.theta.shape == with_z.theta.shape == (3, 3)  # three one-vs-rest models either way
    # the wrong variant: the release names the rare label, and the number of models changes
    without, with_z = _rare_label_releases(classes_from_data=True)
    assert without.classes != with_z.classes and without.theta.shape != with_z.theta.shape


def test_a_label_outside_the_classes_is_refused_or_left_out():
    X, y = _data(100)
    y2 = y.copy()
    y2[[3, 50]] = "maybe"
    with pytest.raises(ValueError, match="not one of the classes") as err:
        ObjPertClassifier(classes=CLASSES).fit(X, y2)
    assert "maybe" not in str(err.value) and "3" not in str(err.value)
    kept = ObjPertClassifier(classes=CLASSES, unknown_label="ignore", lam=1.0, sigma=2.0, random_state=4).fit(X, y2)
    alone = ObjPertClassifier(classes=CLASSES, lam=1.0, sigma=2.0, random_state=4).fit(X[y2 != "maybe"],
                                                                                      y2[y2 != "maybe"])
    np.testing.assert_array_equal(kept.coef_, alone.coef_)  # "ignore" is fitting without those records


# ---------------------------------------------------------------- 3. copies outside the ledger
def test_a_pickled_copy_in_this_process_is_the_session_accountant():
    X, y = _data(80)
    acc = PrivacyAccountant(3.0, 1e-5)
    est = ObjPertClassifier(1.0, 1e-6, classes=CLASSES, accountant=acc)
    for _ in range(2):
        pickle.loads(pickle.dumps(est)).fit(X, y)
    assert len(acc.ledger) == 2  # both charged the session's ledger
    assert pickle.loads(pickle.dumps(acc)) is acc


def test_a_pickled_copy_in_another_process_refuses_to_charge(tmp_path):
    acc = PrivacyAccountant(3.0, 1e-5)
    est = ObjPertClassifier(1.0, 1e-6, lam=1.0, sigma=5.0, classes=CLASSES, accountant=acc)  # nothing to calibrate
    path = tmp_path / "est.pkl"
    path.write_bytes(pickle.dumps(est))
    code = (
        "import pickle, sys, numpy as np\n"
        "from pdpkit.accountant import DetachedAccountantError\n"
        f"est = pickle.loads(open({str(path)!r}, 'rb').read())\n"
        "X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(40, 2)); y = np.where(X[:, 0] > 0, 'yes', 'no')\n"
        "assert est.accountant.detached and est.accountant.ledger == ()\n"
        "try:\n    est.fit(X, y)\nexcept DetachedAccountantError as exc:\n    print('refused:', exc); sys.exit(0)\n"
        "sys.exit(3)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "refused: this PrivacyAccountant is a copy made by pickling" in done.stdout
    assert acc.ledger == ()


def test_cross_validation_in_worker_processes_cannot_spend_outside_the_ledger():
    from sklearn.model_selection import cross_val_score

    X, y = _data(80)
    acc = PrivacyAccountant(1.5, 1e-5)
    est = ObjPertClassifier(1.0, 1e-6, lam=1.0, sigma=5.0, classes=CLASSES, accountant=acc)
    with pytest.raises(DetachedAccountantError, match="copy made by pickling"):
        cross_val_score(est, X, y, cv=2, n_jobs=2, error_score="raise")  # joblib's loky processes
    assert acc.ledger == ()  # nothing was charged, and nothing was released


# ---------------------------------------------------------------- 4. the selection's hidden K
def _emissions(seed: int, X: np.ndarray, y: np.ndarray, ks: list) -> tuple:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cv = ObjPertClassifierCV(1.0, 1e-6, classes=CLASSES, random_state=seed).fit(X, y)
    return [(w.category, str(w.message)) for w in caught], sorted(vars(cv)), ks[-1]


def test_a_selection_emits_nothing_that_depends_on_its_number_of_runs(monkeypatch):
    ks: list = []
    real = sel_mod._draw_k

    def spy(mean, shape, rng):
        ks.append(real(mean, shape, rng))
        return ks[-1]

    monkeypatch.setattr(sel_mod, "_draw_k", spy)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    X = (X - X.mean(0)) / X.std(0)  # standardized columns: the old per-run heuristics warned on these
    X /= np.linalg.norm(X, axis=1).max()
    y = np.where(X[:, 0] > 0, "yes", "no")
    seen = [_emissions(seed, X, y, ks) for seed in range(6)]
    assert len({k for *_, k in seen}) >= 2  # the runs' numbers differed
    assert all(w == seen[0][0] == [] for w, *_ in seen)
    assert all(attrs == seen[0][1] for _, attrs, _ in seen)

    # the wrong variant: a run that warns (as every run's leak heuristics did) is caught by the same check
    def warn_per_run(est, X, y, classes, sample_weight=None):
        warnings.warn("a run's message", UserWarning)
        real_run(est, X, y, classes, sample_weight)

    real_run = ms_mod._fit_run
    monkeypatch.setattr(ms_mod, "warnings", _NoCatch())
    monkeypatch.setattr(ms_mod, "_fit_run", warn_per_run)
    seen = [_emissions(seed, X, y, ks) for seed in range(6)]
    counts = {(len(w), k) for w, _, k in seen}
    assert all(n == k for n, k in counts) and len({n for n, _ in counts}) >= 2


class _NoCatch:
    """A stand-in for the warnings module whose catch_warnings discards nothing (the wrong variant)."""

    def catch_warnings(self):
        import contextlib

        return contextlib.nullcontext()

    def simplefilter(self, *args, **kwargs):
        pass


# ---------------------------------------------------------------- 5. success does not depend on a record
def _separable(with_person: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2)
    X = rng.uniform(-0.7, 0.7, size=(150, 2))
    y = np.where(X[:, 0] > 0.05, 1.0, -1.0)
    if with_person:  # one mislabelled person deep in the other class
        X, y = np.vstack([X, [[0.6, 0.0]]]), np.concatenate([y, [-1.0]])
    return X, y


@pytest.mark.parametrize("with_person", [False, True])
def test_separable_data_with_a_tiny_lambda_always_fits(with_person, monkeypatch):
    X, y = _separable(with_person)
    monkeypatch.setattr(_solver, "_FAST_ITER", 3)  # the fast phase gives up early: the proven phase must finish
    runs = 12
    for seed in range(runs):
        fit = objpert_fit(X, y, "logistic", lam=1e-4, sigma=0.5, rng=seed, norm_bound=1.0)
        assert fit.grad_norm <= fit.grad_tol
    # the wrong variant: a fixed cap (as solver_max_iter was) fails on some draws and not others
    failures = 0
    for seed in range(runs):
        try:
            objpert_fit(X, y, "logistic", lam=1e-4, sigma=0.5, rng=seed, norm_bound=1.0, max_iter=4)
        except RuntimeError:
            failures += 1
    assert failures > 0


def test_the_iteration_budget_is_never_below_what_plain_newton_takes():
    rng = np.random.default_rng(0)
    loss = get_loss("logistic")
    for trial in range(6):
        n, d = 200, 3
        X = rng.normal(size=(n, d))
        X /= np.linalg.norm(X, axis=1).max()
        y = np.where(X @ rng.normal(size=d) > 0, 1.0, -1.0)
        lam = 10.0 ** rng.uniform(-4, 0)
        b = rng.normal(0.0, 2.0, size=d)
        rows = _solver._as_rows(X)
        start = rng.normal(0.0, 50.0, size=d)  # far away: many damped steps
        theta, gnorm, it, _ = _solver._newton_rows(rows, y, loss, lam, b, 1e-9, 10_000, "newton", theta0=start,
                                                  plain=True)
        F0 = float(np.sum(loss.value(X @ start, y)) + 0.5 * lam * start @ start + b @ start)
        budget = _solver._proven_newton_budget(F0, b, lam, loss.self_concordance, 1.0, n, loss.smoothness, 1e-9)
        assert gnorm <= 1e-9 and it <= budget


def test_estimators_have_no_iteration_cap_to_hit():
    for cls in (ObjPertClassifier, ObjPertRegressor, ObjPertClassifierCV):
        assert "solver_max_iter" not in cls().get_params()


# ---------------------------------------------------------------- 6. the curator's messages
def _message(fn) -> str:
    with pytest.raises((ValueError, TypeError)) as err:
        fn()
    return str(err.value)


def _neighbours_over_bound() -> list[np.ndarray]:
    X, _ = _data(60, 3)
    out = []
    for rows, scale in (([5], 1.5), ([40], 1.5), ([5], 7.0), ([5, 41], 2.0), ([5, 41, 9], 3.0)):
        Z = X.copy()
        Z[rows] = Z[rows] / np.linalg.norm(Z[rows], axis=1, keepdims=True) * scale
        out.append(Z)
    return out


def _leaky_prepare_rows(X, *, norm_bound, **kw):
    """The wrong variant: the message that named the row, its norm and the count."""
    norms = np.linalg.norm(X, axis=1)
    over = np.flatnonzero(norms > norm_bound)
    if over.size:
        raise ValueError(f"row {over[0]} of X has Euclidean norm {norms[over[0]]:.6g} > norm_bound={norm_bound:g} "
                         f"({over.size} such rows)")
    return X


def test_refusals_read_the_same_on_neighbouring_data_sets():
    _, y = _data(60, 3)
    neighbours = _neighbours_over_bound()
    paths = {
        "estimator": lambda Z: ObjPertClassifier(classes=CLASSES).fit(Z, y),
        "cv": lambda Z: ObjPertClassifierCV(classes=CLASSES).fit(Z, y),
        "prepare_rows": lambda Z: prepare_rows(Z, norm_bound=1.0),
        "objpert_fit": lambda Z: objpert_fit(Z, np.where(y == "yes", 1.0, -1.0), "logistic", lam=1.0, sigma=1.0),
    }
    for name, fn in paths.items():
        texts = {_message(lambda: fn(Z)) for Z in neighbours}
        assert len(texts) == 1, (name, texts)
        assert "row 5" not in texts.pop()
    leaky = {_message(lambda: _leaky_prepare_rows(Z, norm_bound=1.0)) for Z in neighbours}
    assert len(leaky) > 1  # the check catches a message that names the row, norm or count


def test_label_and_cell_refusals_read_the_same_on_neighbouring_data_sets():
    X, y = _data(60, 3)
    texts = set()
    for rows, value in (([2], "maybe"), ([30], "maybe"), ([2], "perhaps"), ([2, 31], "maybe")):
        yy = y.astype(object).copy()
        yy[rows] = value
        texts.add(_message(lambda: ObjPertClassifier(classes=CLASSES).fit(X, yy)))
        texts.add(_message(lambda: ObjPertClassifierCV(classes=CLASSES).fit(X, yy)))
    assert len(texts) == 1, texts
    cells = set()
    for rows, value in (([2], "abc"), ([30], "abc"), ([2], "xyz"), ([2, 31], "abc")):
        XX = X.astype(object).copy()
        XX[rows, 1] = value
        cells.add(_message(lambda: ObjPertClassifier(classes=CLASSES).fit(XX, y)))
        cells.add(_message(lambda: ObjPertRegressor().fit(XX, np.zeros(len(y)))))
    assert len(cells) == 1 and "abc" not in cells.pop()
    for value in (np.nan, np.inf):  # two kinds of cell, each one text whichever rows and how many
        texts = set()
        for rows, sign in (([2], 1.0), ([30], 1.0), ([2, 31], -1.0), ([7], 1.0)):
            XX = X.copy()
            XX[rows, rows[0] % 3] = sign * value
            texts.add(_message(lambda: ObjPertClassifier(classes=CLASSES).fit(XX, y)))
        assert len(texts) == 1, texts


def test_threads_charging_one_accountant_never_exceed_its_budget():
    import threading

    acc = PrivacyAccountant(1.0, 1e-6)
    mu = 0.05  # each charge a Gaussian of mu 0.05: 22 fit in (1, 1e-6), not 32
    fits = 0
    while acc.total_epsilon([_gauss(mu)] * (fits + 1)) <= 1.0:
        fits += 1

    def race(acc: PrivacyAccountant) -> list:
        barrier, accepted = threading.Barrier(8), []

        def worker() -> None:
            barrier.wait()
            for _ in range(4):
                try:
                    accepted.append(acc.charge_gaussian(mu=mu, name="count"))
                except ValueError:
                    pass

        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return accepted

    def slow(acc: PrivacyAccountant) -> PrivacyAccountant:
        """The composition takes a millisecond, as a real ledger's does: the window between check and write."""
        import time

        real = acc.total_epsilon

        def total_epsilon(extra=()):
            value = real(extra)
            time.sleep(1e-3)
            return value

        acc.total_epsilon = total_epsilon
        return acc

    accepted = race(slow(acc))
    assert sorted(accepted) == list(range(fits)) and len(acc.ledger) == fits and acc.spent().epsilon <= 1.0
    # the wrong variant: the check and the write as two steps; threads then spend beyond the budget
    import contextlib

    loose = slow(PrivacyAccountant(1.0, 1e-6))
    loose._lock = contextlib.nullcontext()
    race(loose)
    assert len(loose.ledger) > fits


def _gauss(mu: float):
    from pdpkit.accountant import Charge
    from pdpkit.events import GaussianEvent

    return Charge(name="count", event=GaussianEvent(mu=mu), delta=1e-6)
