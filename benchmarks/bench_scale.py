"""Fit and report on data larger than memory: numpy, memmap and Dask, against a bandwidth floor.

For each configuration a fresh process generates the data block by block (a seeded generator
per block of rows, never the whole array in one temporary), then times
``ObjPertClassifier(report="adaptive").fit(X, y)`` (ObjPert, its certified stopping rule, the
adaptive privacy report's releases) and ``privacy_report(X, y)`` (every row's private bound).
Printed per run: wall time, peak *anonymous* RSS above the data (sampled every 20 ms: a
memmap's page cache is not the process's memory) and the process's peak RSS, passes over X
(rows read / n), and the ratio of the time to the floor ``passes x bytes / bandwidth``, the
bandwidth measured in the same process by one streaming read of X by blocks (for Dask: one
pass that only sums the blocks, i.e. the cost of producing and reading them on the workers).

``python benchmarks/bench_scale.py`` (part of ``make bench``): n = 10^6, numpy.
``python benchmarks/bench_scale.py --full`` (``make bench-scale``, minutes): n = 10^6 and
10^7 with numpy and memmap, and the largest Dask run in ``--dask-rows`` (default 10^7 and
3 x 10^7; 10^8 x 50 is 40 GB: the generator makes it block by block, each pass regenerates
it, so only its time per pass is extrapolated unless ``--dask-rows 1e8`` is given).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

D = 50
BLOCK = 200_000
CLASSES = [-1.0, 1.0]  # the labels _block draws; +1 is the positive class
HERE = pathlib.Path(__file__).resolve()


def _status(key: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    return 0


class _AnonPeak:
    """Peak anonymous RSS of this process, sampled every 20 ms in a thread."""

    def __init__(self) -> None:
        self.peak = _status("RssAnon:")
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, _status("RssAnon:"))

    def __enter__(self) -> _AnonPeak:
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, _status("RssAnon:"))


def _block(seed: int, i: int, k: int, d: int = D) -> np.ndarray:
    """Block i of the data set: k rows of d features (|x_ij| <= 1/sqrt d, so ||x|| <= 1) and the label."""
    rng = np.random.default_rng([seed, i])
    out = np.empty((k, d + 1))
    X = out[:, :d]
    X[:] = rng.random((k, d))
    X -= 0.5
    X *= 2.0 / np.sqrt(d)
    w = np.random.default_rng(seed).normal(size=d) * 3.0
    u = rng.random(k)
    out[:, d] = np.where(u < 1.0 / (1.0 + np.exp(-(X @ w))), 1.0, -1.0)
    return out


def _fill(X: np.ndarray, y: np.ndarray, seed: int = 7) -> None:
    n = X.shape[0]
    for i, s in enumerate(range(0, n, BLOCK)):
        B = _block(seed, i, min(BLOCK, n - s))
        X[s:s + B.shape[0]] = B[:, :D]
        y[s:s + B.shape[0]] = B[:, D]


def _bandwidth(X) -> float:
    """Bytes per second of one streaming read of X by blocks (best of 2)."""
    best = np.inf
    for _ in range(2):
        t0 = time.perf_counter()
        for s in range(0, X.shape[0], 1 << 16):
            float(np.add.reduce(X[s:s + (1 << 16)], axis=None))
        best = min(best, time.perf_counter() - t0)
    return X.nbytes / best


def _run_estimator(X, y, n: int) -> dict:
    from pdpkit import _solver
    from pdpkit.estimators import ObjPertClassifier

    # the certificate's float64 floor grows like n u (f' and the margins are rounded to float64):
    # the default tau = 1e-8 certifies up to about 1e7 rows at d = 50; beyond, a public 1e-7
    kw = dict(epsilon=1.0, delta=1e-6, report="adaptive", report_epsilon=0.5, report_delta=1e-6, random_state=0,
              grad_tol=1e-8 if n <= 10**7 else 1e-7, classes=CLASSES)
    _solver._ROWS_READ[0] = 0
    t0 = time.perf_counter()
    clf = ObjPertClassifier(**kw).fit(X, y)
    t1 = time.perf_counter()
    p_fit = _solver._ROWS_READ[0] / n
    bounds = clf.privacy_report(X, y)
    t2 = time.perf_counter()
    p_all = _solver._ROWS_READ[0] / n
    assert bounds.shape == (n,) and np.all(np.isfinite(bounds))
    return {"fit_s": t1 - t0, "report_s": t2 - t1, "passes_fit": p_fit, "passes": p_all, "grad_tol": kw["grad_tol"]}


def one(backend: str, n: int) -> dict:
    """One configuration in this process (called in a fresh subprocess by the driver)."""
    from pdpkit.estimators import ObjPertClassifier

    warm = _block(1, 0, 2000)
    ObjPertClassifier(epsilon=1.0, delta=1e-6, random_state=0, classes=CLASSES).fit(warm[:, :D], warm[:, D])  # warm-up
    nbytes = n * D * 8
    out = {"backend": backend, "n": n, "d": D, "bytes": nbytes}
    tmp = None
    if backend in ("numpy", "memmap"):
        if backend == "numpy":
            X = np.empty((n, D))
            y = np.empty(n)
            _fill(X, y)
        else:
            tmp = tempfile.TemporaryDirectory()
            path = pathlib.Path(tmp.name) / "X.npy"
            Xw = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(n, D))
            y = np.empty(n)
            _fill(Xw, y)
            Xw.flush()
            del Xw
            X = np.load(path, mmap_mode="r")
        bw = _bandwidth(X)
        base_anon = _status("RssAnon:")
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # reset VmHWM
        with _AnonPeak() as peak:
            out.update(_run_estimator(X, y, n))
        out["extra_anon"] = peak.peak - base_anon
        out["peak_rss"] = _status("VmHWM:")
        out["bandwidth"] = bw
        out["floor_s"] = out["passes"] * nbytes / bw
    else:
        import dask.array as da
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                               memory_limit="4GiB")
        client = Client(cluster)
        k = 250_000
        chunks = ((k,) * (n // k) + ((n % k,) if n % k else ()), (D + 1,))

        def gen(block_id=None):
            i = block_id[0]
            return _block(7, i, chunks[0][i])

        A = da.map_blocks(gen, chunks=chunks, dtype=float, meta=np.empty((0, D + 1)))
        X, y = A[:, :D], A[:, D]
        # the labels (n floats, 1/D of X) are held in the workers' memory, as a data set's label
        # column would be; X is made block by block again in every pass
        from distributed import wait

        y = y.persist()
        wait(y)
        client.run(lambda: __import__("pdpkit.estimators"))  # the workers' imports, outside the timing
        one_pass = np.inf
        for _ in range(2):  # the first also starts the workers' imports
            t0 = time.perf_counter()
            float(A[:, :D].sum().compute())
            one_pass = min(one_pass, time.perf_counter() - t0)
        with _AnonPeak() as peak:
            out.update(_run_estimator(X, y, n))
        workers = client.run(lambda: _status("VmHWM:"))
        out["extra_anon"] = peak.peak  # the client: it never holds X
        out["peak_rss"] = max(workers.values())
        out["client_peak_rss"] = _status("VmHWM:")
        out["one_pass_s"] = one_pass
        out["floor_s"] = out["passes"] * one_pass
        out["bandwidth"] = nbytes / one_pass
        client.close()
        cluster.close()
    out["time_s"] = out["fit_s"] + out["report_s"]
    out["ratio"] = out["time_s"] / out["floor_s"]
    if tmp is not None:
        del X
        tmp.cleanup()
    return out


def expost(n: int) -> dict:
    """ex_post_pdp of every row: member=False, member=True in order, member=True in another order."""
    from pdpkit.objpert import ex_post_pdp, objpert_fit

    X = np.empty((n, D))
    y = np.empty(n)
    _fill(X, y)
    fit = objpert_fit(X, y, "logistic", lam=1.0, sigma=2.0, rng=0, keep_hessian=True)
    perm = np.random.default_rng(1).permutation(n)
    Xp, yp = X[perm], y[perm]
    out = {"n": n}
    for _round in range(3):  # interleaved rounds, best of each: a changing load weighs on all three alike
        for name, args in (("nonmember", (X, y, False)), ("member", (X, y, True)), ("member_perm", (Xp, yp, True))):
            base = _status("RssAnon:")
            with _AnonPeak() as peak:
                t0 = time.perf_counter()
                ex_post_pdp(fit, X, y, args[0], args[1], member=args[2])
                t = time.perf_counter() - t0
            out[name] = min(out.get(name, np.inf), t)
            out[name + "_extra"] = max(out.get(name + "_extra", 0.0), (peak.peak - base) / X.nbytes)
    return out


def _child(backend: str, n: int, timeout: float) -> dict | None:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PDPKIT_PROGRESS="0")
    try:
        res = subprocess.run([sys.executable, str(HERE), "--one", backend, str(n)], capture_output=True, text=True,
                             env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"    {backend} n={n:.0e}: stopped after {timeout:.0f} s", flush=True)
        return None
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
    if res.returncode or not lines:
        print(f"    {backend} n={n:.0e} failed: {res.stderr.strip().splitlines()[-1:]}", flush=True)
        return None
    return json.loads(lines[-1])


def _line(r: dict) -> str:
    gb = 1 << 30
    client = f" (client {r['client_peak_rss'] / gb:.2f} GB)" if "client_peak_rss" in r else ""
    return (f"[scale] {r['backend']:<7s} n={r['n']:.0e} d={r['d']}  fit {r['fit_s']:7.2f} s  report {r['report_s']:6.2f} s"
            f"  | extra anon RSS {r['extra_anon'] / r['bytes']:.3f} X ({r['extra_anon'] / gb:.2f} GB), peak RSS/process "
            f"{r['peak_rss'] / gb:.2f} GB{client} | passes {r['passes']:.1f} | floor {r['floor_s']:.2f} s "
            f"({r['bandwidth'] / 1e9:.1f} GB/s) | ratio {r['ratio']:.2f} | grad_tol {r['grad_tol']:.0e}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="10^6 and 10^7 rows, numpy, memmap and Dask (minutes)")
    ap.add_argument("--dask-rows", default="1e7,3e7", help="comma-separated Dask sizes for --full")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    ap.add_argument("--one", nargs=2, metavar=("BACKEND", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv or [])
    if args.one:
        n = int(float(args.one[1]))
        print(json.dumps(expost(n) if args.one[0] == "expost" else one(args.one[0], n)), flush=True)
        return
    runs = [("numpy", 10**6)]
    if args.full:
        runs += [("memmap", 10**6), ("numpy", 10**7), ("memmap", 10**7)]
        runs += [("dask", int(float(v))) for v in args.dask_rows.split(",") if v]
    results = []
    for backend, n in runs:
        r = _child(backend, n, args.timeout)
        if r is not None:
            results.append(r)
            print(_line(r), flush=True)
    e = _child("expost", 10**6, args.timeout)
    if e is not None:
        print(f"[scale] ex_post_pdp all 1e6 rows d={D}: member=False {e['nonmember']:.2f} s "
              f"(+{e['nonmember_extra']:.2f} X) | member=True in order {e['member']:.2f} s "
              f"(+{e['member_extra']:.2f} X, ratio {e['member'] / e['nonmember']:.2f}) | member=True permuted "
              f"{e['member_perm']:.2f} s (+{e['member_perm_extra']:.2f} X, ratio "
              f"{e['member_perm'] / e['nonmember']:.2f}; goal <= 1.5)", flush=True)
    nump = {r["n"]: r for r in results if r["backend"] == "numpy"}
    if 10**6 in nump and 10**7 in nump:
        e = np.log10(nump[10**7]["time_s"] / nump[10**6]["time_s"])
        print(f"    numpy cost exponent in n from 1e6 to 1e7: {e:.2f} (goal <= 1.05)", flush=True)
    dk = [r for r in results if r["backend"] == "dask"]
    if dk:
        big = max(dk, key=lambda r: r["n"])
        if big["n"] < 10**8:
            f = 10**8 / big["n"]
            print(f"    extrapolated Dask n=1e8 (linear in n, same passes): about {big['time_s'] * f:.0f} s "
                  f"(floor {big['floor_s'] * f:.0f} s); worker RSS does not grow with n (one block per task)",
                  flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
