"""Full-scale Figure 2 / Tables 1–2 of Redberg, Koskela & Wang (2023): Alg 1 against DP-SGD.

``python reproduce/amp.py [--only NAME] [--trials T] [--eps E ...]`` runs
:func:`pdpkit.experiments.amp.compare_amp_dpsgd` with the source's settings (§5 and Table 5):
δ = 1e-5, ten trials, 60 epochs of DP-SGD with expected batch 256, the learning-rate grid of
10 points log-spaced in [1e-8, 1e-1], Poisson repeat-and-select with P(K > 10) = 0.9,
τ = 0.01, σ_out = 0.15, σ = 1.3 σ_Gauss; rows scaled to unit norm with a bias column appended.
Data: Adult (the vendored UCI files, Iyengar et al.'s recipe, a seeded 80 / 20 split),
Synthetic-L and Synthetic-H (:func:`pdpkit.datasets.make_iyengar_synthetic`, 80 / 20 in
row order as Iyengar et al.). Gisette is not shipped with pdpkit and is not run.

Each experiment writes ``results/amp/<name>.json`` after every ε, so an interrupted run keeps
the values of ε it finished (the stored ``scale`` says which). Run with ``nice -n 15``.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from pdpkit import datasets as ds
from pdpkit.experiments import amp as ex
from pdpkit.experiments import stored

CHAPTER = "amp"
EPSILONS = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)  # the source's Figure 2
SETTINGS = dict(delta=1e-5, epochs=60, batch_size=256, lr_grid=tuple(np.logspace(-8, -1, 10)),
                tau=0.01, sigma_out=0.15, f=1.3)
SEEDS = {"figure2_adult": {"split": 0, "run": 2}, "figure2_synthetic_L": {"data": 1000, "run": 3},
         "figure2_synthetic_H": {"data": 1, "run": 4}, "eps01_sizes": {"split": 0, "data": 1000, "run": 5},
         "honest_gap": {"split": 0, "data": 1000, "run": 6, "draws": 7}}
# Training-set sizes of the epsilon = 0.1 experiment, and the chapter's CI settings it starts from.
SIZES = {"figure2_adult": (2_000, 4_000, 8_000, 16_000), "figure2_synthetic_L": (2_000, 4_000, 8_000)}
CI_SETTINGS = dict(epochs=20, sigma_out=0.1)


def _data(name: str):
    """(X_train, y_train, X_test, y_test, description) with rows of norm √2."""
    if name == "figure2_adult":
        adult = ds.load_adult()
        X = ex.with_bias(adult.X)
        perm = np.random.default_rng(SEEDS[name]["split"]).permutation(adult.y.size)
        n_tr = int(0.8 * adult.y.size)
        tr, te = perm[:n_tr], perm[n_tr:]
        return X[tr], adult.y[tr], X[te], adult.y[te], "Adult"
    kind = name[-1]
    syn = ds.make_iyengar_synthetic(kind, rng=SEEDS[name]["data"])
    X = ex.with_bias(syn.X)
    n_tr = int(0.8 * syn.y.size)
    return X[:n_tr], syn.y[:n_tr], X[n_tr:], syn.y[n_tr:], f"Synthetic-{kind}"


def run(name: str, epsilons, trials: int, resume_seed: int | None = None) -> None:
    """Run ``name`` at ``epsilons``; with ``resume_seed``, add them to the stored result (same trials)."""
    X_tr, y_tr, X_te, y_te, label = _data(name)
    seeds = dict(SEEDS[name])
    done: dict[str, list] = {k: [] for k in ("epsilons", "acc_dishonest", "acc_amp", "acc_honest",
                                             "noise_dishonest", "noise_honest", "amp_lambda", "amp_sigma")}
    wall = 0.0
    if resume_seed is not None:
        old = stored.load_result(CHAPTER, name)
        if old.data["trials"] != trials:
            raise SystemExit(f"--resume needs the stored number of trials ({old.data['trials']})")
        for k in done:
            done[k] = list(old.data[k])
        wall = float(old.provenance["wall_time_s"])
        seeds = {**old.provenance["seeds"], f"run_resumed_{len(old.data['epsilons'])}": resume_seed}
        epsilons = [e for e in epsilons if float(e) not in done["epsilons"]]
    gen = np.random.default_rng(seeds["run"] if resume_seed is None else resume_seed)
    cache: dict = {}
    for eps in epsilons:
        with stored.Timer() as t:
            r = ex.compare_amp_dpsgd(X_tr, y_tr, X_te, y_te, [eps], trials=trials, rng=gen,
                                     calibration_cache=cache, progress=False, **SETTINGS)
        wall += t.seconds
        done["epsilons"].append(float(eps))
        for key in ("acc_dishonest", "acc_amp", "acc_honest"):
            done[key].append(getattr(r, key)[0].tolist())
        for key in ("noise_dishonest", "noise_honest", "amp_lambda", "amp_sigma"):
            done[key].append(float(getattr(r, key)[0]))
        data = {"dataset": label, "n_train": int(y_tr.size), "n_test": int(y_te.size), "d": int(X_tr.shape[1]),
                "trials": trials, "acc_nonprivate": r.acc_nonprivate, "select_mean": r.select_mean,
                "settings": {k: (list(v) if isinstance(v, tuple) else v) for k, v in SETTINGS.items()},
                **done}
        order = np.argsort(done["epsilons"])
        for key in done:
            done[key] = [done[key][j] for j in order]
        data.update(done)
        for key in ("acc_dishonest", "acc_amp", "acc_honest"):
            a = np.asarray(done[key], dtype=float)
            data[key.replace("acc_", "mean_")] = a.mean(axis=1)
            data[key.replace("acc_", "se_")] = a.std(axis=1, ddof=1) / math.sqrt(trials)
        k = len(done["epsilons"])
        scale = (f"{label}: n = {y_tr.size:,} training and {y_te.size:,} test rows, d = {X_tr.shape[1]} "
                 f"(with the bias column), {k} of the source's 9 values of epsilon "
                 f"({', '.join(f'{e:g}' for e in done['epsilons'])}), {trials} trials, 60 epochs, batch 256")
        if name == "figure2_adult" and (k < len(EPSILONS) or trials < 10):
            scale += "; " + REASON
        elif k < len(epsilons) or trials < 10:
            scale += "; a partial run (the values of epsilon finished so far)"
        stored.save_result(CHAPTER, name, data, provenance=stored.provenance(
            seeds=seeds, scale=scale, wall_time_s=wall))
        j = done["epsilons"].index(float(eps))
        print(f"{name}: eps {eps:g} done in {t.seconds:.0f} s: dishonest "
              f"{data['mean_dishonest'][j]:.4f}, Alg 1 {data['mean_amp'][j]:.4f}, "
              f"honest {data['mean_honest'][j]:.4f}", flush=True)


def run_sizes(trials: int) -> None:
    """Alg 1 and DP-SGD at epsilon = 0.1 against the training-set size (the source's settings),
    plus the chapter's CI settings (20 epochs, sigma_out = 0.1) at n = 2,000."""
    gen = np.random.default_rng(SEEDS["eps01_sizes"]["run"])
    data: dict = {"eps": 0.1, "trials": trials, "settings": {k: (list(v) if isinstance(v, tuple) else v)
                                                               for k, v in SETTINGS.items()}}
    wall = 0.0
    for name, sizes in SIZES.items():
        X_tr, y_tr, X_te, y_te, label = _data(name)
        with stored.Timer() as t:
            runs = ex.compare_at_sizes(X_tr, y_tr, X_te, y_te, sizes, 0.1, trials=trials, rng=gen,
                                       progress=False, **SETTINGS)
            ci = ex.compare_at_sizes(X_tr, y_tr, X_te, y_te, (2_000,), 0.1, trials=trials, rng=gen,
                                     progress=False, **{**SETTINGS, **CI_SETTINGS})[2_000]
        wall += t.seconds
        rows = []
        for n, r in [*runs.items(), ("ci", ci)]:
            row = {"n_train": 2_000 if n == "ci" else n, "setting": "ci" if n == "ci" else "source"}
            for key in ("acc_dishonest", "acc_amp", "acc_honest"):
                a = getattr(r, key)[0]
                row[key.replace("acc_", "mean_")] = float(a.mean())
                row[key.replace("acc_", "se_")] = float(a.std(ddof=1) / math.sqrt(trials))
            row.update(noise_dishonest=float(r.noise_dishonest[0]), noise_honest=float(r.noise_honest[0]),
                       amp_lambda=float(r.amp_lambda[0]), amp_sigma=float(r.amp_sigma[0]))
            rows.append(row)
            print(f"{label} n = {row['n_train']} ({row['setting']}): dishonest {row['mean_dishonest']:.4f}, "
                  f"Alg 1 {row['mean_amp']:.4f}, honest {row['mean_honest']:.4f}", flush=True)
        data[label] = rows
        stored.save_result(CHAPTER, "eps01_sizes", data, provenance=stored.provenance(
            seeds=SEEDS["eps01_sizes"], wall_time_s=wall,
            scale=(f"epsilon = 0.1, {trials} trials, the source's settings at training sizes "
                   + "; ".join(f"{k.split('_', 1)[1]}: {', '.join(f'{n:,}' for n in v)}"
                               for k, v in SIZES.items())
                   + ", and the chapter's CI settings (20 epochs, sigma_out = 0.1) at 2,000 rows")))


#: Readings of honest DP-SGD's set-up, each against the stored run's (the first): how the K
#: learning rates are drawn, the accountant's orders and steps, and the authors' code's defaults.
INTEGER_ORDERS = tuple(range(2, 257))
HONEST_VARIANTS = {
    "as stored": {},
    "distinct candidates": dict(candidates="distinct"),
    "K log-spaced candidates": dict(candidates="log-spaced"),
    "integer orders 2-256, floor(1/q) 60 steps": dict(orders=INTEGER_ORDERS, steps="floor"),
    "code defaults: batch 4096, mu 8, grid 1e-5..1e-1": dict(
        candidates="distinct", batch_size=4096, select_mean=8.0, lr_grid=tuple(np.logspace(-5, -1, 10)),
        orders=INTEGER_ORDERS, steps="floor"),
}
SYNTHETIC_DRAWS = tuple(range(1000, 1010))  # random states of Synthetic-L (1000: the benchmark's)


def run_honest_gap(trials: int, draw_trials: int) -> None:
    """Honest DP-SGD at epsilon = 0.1 under each reading of its set-up (Adult, Synthetic-L), and
    the three methods on ten draws of Synthetic-L: what separates our honest DP-SGD from the source's."""
    gen = np.random.default_rng(SEEDS["honest_gap"]["run"])
    data: dict = {"eps": 0.1, "trials": trials, "draw_trials": draw_trials,
                  "variants": {k: {a: (list(b) if isinstance(b, tuple) else b) for a, b in v.items()}
                               for k, v in HONEST_VARIANTS.items()}}
    wall = 0.0
    for name in ("figure2_adult", "figure2_synthetic_L"):
        X_tr, y_tr, X_te, y_te, label = _data(name)
        rows = []
        for variant, kw in HONEST_VARIANTS.items():
            kw = dict(kw)
            if kw.get("steps") == "floor":  # the authors' code: int(1 / q) * epochs
                kw["steps"] = int(y_tr.size / kw.get("batch_size", 256)) * 60
            with stored.Timer() as t:
                r = ex.honest_dpsgd(X_tr, y_tr, X_te, y_te, 0.1, trials=trials, rng=gen, **kw)
            wall += t.seconds
            rows.append({"variant": variant, "accuracy": r.accuracy.tolist(), "n_candidates": r.n_candidates.tolist(),
                         "mean": float(r.accuracy.mean()),
                         "se": float(r.accuracy.std(ddof=1) / math.sqrt(trials)),
                         "noise_multiplier": r.noise_multiplier, "select_mean": r.select_mean,
                         "sample_rate": r.sample_rate, "steps": r.steps})
            print(f"{label} {variant}: {rows[-1]['mean']:.4f} +- {1.96 * rows[-1]['se']:.4f} "
                  f"(sigma {r.noise_multiplier:.2f}, {t.seconds:.0f} s)", flush=True)
            data[label] = rows
            _save_honest_gap(data, wall, trials, draw_trials)
    draws = []
    dgen = np.random.default_rng(SEEDS["honest_gap"]["draws"])
    cache: dict = {}
    for state in SYNTHETIC_DRAWS:
        syn = ds.make_iyengar_synthetic("L", rng=state)
        X = ex.with_bias(syn.X)
        n_tr = int(0.8 * syn.y.size)
        with stored.Timer() as t:
            r = ex.compare_amp_dpsgd(X[:n_tr], syn.y[:n_tr], X[n_tr:], syn.y[n_tr:], [0.1], trials=draw_trials,
                                     rng=dgen, calibration_cache=cache, progress=False, **SETTINGS)
        wall += t.seconds
        draws.append({"random_state": state, "acc_nonprivate": r.acc_nonprivate,
                      **{k.replace("acc_", "mean_"): float(getattr(r, k)[0].mean())
                         for k in ("acc_dishonest", "acc_amp", "acc_honest")}})
        print(f"Synthetic-L draw {state}: " + ", ".join(f"{k} {v:.4f}" for k, v in draws[-1].items()
                                                          if k.startswith("mean")), flush=True)
        data["synthetic_L_draws"] = draws
        _save_honest_gap(data, wall, trials, draw_trials)


def _save_honest_gap(data: dict, wall: float, trials: int, draw_trials: int) -> None:
    stored.save_result(CHAPTER, "honest_gap", data, provenance=stored.provenance(
        seeds=SEEDS["honest_gap"], wall_time_s=wall,
        scale=(f"epsilon = 0.1; honest DP-SGD alone, {trials} trials per reading, on all of Adult and "
               f"Synthetic-L; the three methods on {len(SYNTHETIC_DRAWS)} draws of Synthetic-L "
               f"(random states {SYNTHETIC_DRAWS[0]}-{SYNTHETIC_DRAWS[-1]}), {draw_trials} trials each")))


REASON = ("Adult: the epsilons of Table 2 first, then as many others as the time allowed; all nine "
          "at ten trials take about 1.5 h on 2 shared cores")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(SEEDS), action="append")
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--eps", type=float, nargs="+", default=None)
    parser.add_argument("--resume", type=int, default=None, metavar="SEED",
                        help="add --eps to the stored result (a fresh seed for the added runs)")
    args = parser.parse_args(argv)
    for name in args.only or sorted(SEEDS):
        if name == "eps01_sizes":
            run_sizes(args.trials)
            continue
        if name == "honest_gap":
            run_honest_gap(args.trials, draw_trials=3)
            continue
        eps = args.eps
        if eps is None:
            eps = (0.1, 1.0, 8.0) if name == "figure2_adult" else EPSILONS
        run(name, eps, args.trials, resume_seed=args.resume)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
