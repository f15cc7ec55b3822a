"""The stored full-scale Figure 2 / Tables 1–2 runs agree with small live re-runs of the same code.

Each test re-runs part of a stored experiment (``results/amp/*.json``, written by
``reproduce/amp.py``) at the stored data size with a few trials, and checks each method's
live mean against the stored mean within three standard errors of the difference, using
the stored per-trial spread for both (live and stored trials have the same distribution):
``|live - stored| <= 3 sd sqrt(1/k + 1/10) + 0.005`` (the 0.005 absorbs the granularity of a
test accuracy on a few thousand rows). A perturbed stored value must fail the same check.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pdpkit import amp
from pdpkit import datasets as ds
from pdpkit.experiments import amp as ex
from pdpkit.experiments import stored

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _consistent(live: np.ndarray, stored_mean: float, stored_se: float, stored_trials: int) -> bool:
    sd = stored_se * math.sqrt(stored_trials)
    bound = 3.0 * sd * math.sqrt(1.0 / live.size + 1.0 / stored_trials) + 0.005
    return abs(float(np.mean(live)) - stored_mean) <= bound


def _adult_split():
    adult = ds.load_adult()
    X = ex.with_bias(adult.X)
    perm = np.random.default_rng(0).permutation(adult.y.size)  # reproduce/amp.py's split
    n_tr = int(0.8 * adult.y.size)
    return X[perm[:n_tr]], adult.y[perm[:n_tr]], X[perm[n_tr:]], adult.y[perm[n_tr:]]


def _synthetic_split(kind: str):
    syn = ds.make_iyengar_synthetic(kind)
    X = ex.with_bias(syn.X)
    n_tr = int(0.8 * syn.y.size)  # reproduce/amp.py's split: 80 / 20 in row order
    return X[:n_tr], syn.y[:n_tr], X[n_tr:], syn.y[n_tr:]


def _alg1_runs(name, split, seed):
    """Alg 1 on all training rows of a stored run at its epsilons 0.1 and 8, 3 trials each."""
    res = stored.load_result("amp", name)
    X_tr, y_tr, X_te, y_te = split
    assert res.data["n_train"] == y_tr.size and res.data["n_test"] == y_te.size
    gen = np.random.default_rng(seed)
    out = {}
    for eps in (0.1, 8.0):
        k = res.data["epsilons"].index(eps)
        lam, sigma = amp.amp_calibrate(eps, 1e-5, C=math.sqrt(2), beta=0.5, sigma_out=0.15, tau=0.01)
        assert lam == pytest.approx(res.data["amp_lambda"][k], rel=1e-6)
        accs = []
        for _ in range(3):
            fit = amp.amp_fit(X_tr, y_tr, "logistic", lam=lam, sigma=sigma, sigma_out=0.15, tau=0.01,
                              clip=math.sqrt(2), rng=gen, norm_bound=math.sqrt(2))
            accs.append(float(np.mean(np.where(X_te @ fit.theta >= 0, 1.0, -1.0) == y_te)))
        out[eps] = (np.array(accs), res.data["mean_amp"][k], res.data["se_amp"][k], res.data["trials"])
    return out


@pytest.fixture(scope="module")
def alg1_full_adult():
    return _alg1_runs("figure2_adult", _adult_split(), 11)


def test_alg1_on_all_of_synthetic_l_agrees_with_the_stored_run():
    for eps, (live, mean, se, trials) in _alg1_runs("figure2_synthetic_L", _synthetic_split("L"), 13).items():
        assert _consistent(live, mean, se, trials), (eps, live.mean(), mean)


def test_dishonest_dpsgd_on_synthetic_h_agrees_with_the_stored_run():
    """Synthetic-H (d = 2,001): dishonest DP-SGD, the best of the grid, at epsilon = 0.1, 2 trials."""
    res = stored.load_result("amp", "figure2_synthetic_H")
    X_tr, y_tr, X_te, y_te = _synthetic_split("H")
    k = res.data["epsilons"].index(0.1)
    q = 256 / y_tr.size
    steps = math.ceil(60 / q)
    nm = amp.dpsgd_noise_multiplier(0.1, 1e-5, sample_rate=q, steps=steps)
    assert nm == pytest.approx(res.data["noise_dishonest"][k], rel=1e-3)
    gen = np.random.default_rng(14)
    live = []
    for _ in range(2):
        accs = [np.mean(np.where(X_te @ amp.dpsgd_fit(X_tr, y_tr, "logistic", noise_multiplier=nm,
                                                       clip=math.sqrt(2), sample_rate=q, steps=steps,
                                                       lr=lr, rng=gen) >= 0, 1.0, -1.0) == y_te)
                for lr in np.logspace(-8, -1, 10)]
        live.append(max(accs))
    live = np.array(live)
    mean, se = res.data["mean_dishonest"][k], res.data["se_dishonest"][k]
    assert _consistent(live, mean, se, res.data["trials"]), (live.mean(), mean)
    assert not _consistent(live, mean + 0.1, se, res.data["trials"])


def test_alg1_on_all_of_adult_agrees_with_the_stored_run(alg1_full_adult):
    for eps, (live, mean, se, trials) in alg1_full_adult.items():
        assert _consistent(live, mean, se, trials), (eps, live.mean(), mean)


def test_a_perturbed_stored_alg1_value_fails(alg1_full_adult):
    live, mean, se, trials = alg1_full_adult[0.1]
    assert not _consistent(live, mean + 0.05, se, trials)
    assert not _consistent(live, mean - 0.05, se, trials)


@pytest.fixture(scope="module")
def ci_size_adult():
    """The chapter's CI configuration (2,000 Adult rows, the source's settings) at epsilon = 0.1, 3 trials."""
    sz = stored.load_result("amp", "eps01_sizes")
    row = next(r for r in sz.data["Adult"] if r["n_train"] == 2_000 and r["setting"] == "source")
    X_tr, y_tr, X_te, y_te = _adult_split()
    live = ex.compare_amp_dpsgd(X_tr[:2_000], y_tr[:2_000], X_te, y_te, [0.1], trials=3, epochs=60,
                                sigma_out=0.15, rng=12, progress=False)
    return live, row, sz.data["trials"]


def test_ci_scale_run_agrees_with_the_stored_size_sweep(ci_size_adult):
    live, row, trials = ci_size_adult
    for m in ("dishonest", "amp", "honest"):
        acc = getattr(live, "acc_" + m)[0]
        assert _consistent(acc, row["mean_" + m], row["se_" + m], trials), (m, acc.mean(), row["mean_" + m])
    assert live.amp_lambda[0] == pytest.approx(row["amp_lambda"], rel=1e-6)
    assert live.noise_honest[0] == pytest.approx(row["noise_honest"], rel=1e-3)


def test_a_perturbed_stored_size_sweep_value_fails(ci_size_adult):
    live, row, trials = ci_size_adult
    acc = live.acc_amp[0]
    assert not _consistent(acc, row["mean_amp"] + 0.08, row["se_amp"], trials)


def test_the_stored_runs_order_the_methods_as_the_source_at_epsilon_one_tenth():
    """The source's Tables 1-2 at epsilon = 0.1: dishonest > Alg 1 > honest on Adult and Synthetic-L."""
    for name in ("figure2_adult", "figure2_synthetic_L"):
        res = stored.load_result("amp", name)
        k = res.data["epsilons"].index(0.1)
        d, a, h = (res.data["mean_" + m][k] for m in ("dishonest", "amp", "honest"))
        se_ah = math.hypot(res.data["se_amp"][k], res.data["se_honest"][k])
        assert a - h > 2 * se_ah, name  # Alg 1 ahead of honest DP-SGD beyond noise
        assert d >= a - 2 * math.hypot(res.data["se_dishonest"][k], res.data["se_amp"][k]), name
