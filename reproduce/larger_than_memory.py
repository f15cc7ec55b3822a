"""Full-scale run of the chapter "Data larger than memory": 10^7 rows from a memmap.

* ``memmap``: the chapter's ``FULL_SCALE = True`` path. The synthetic data set (d = 20,
  blocks of 50,000 rows) is written block by block to a ``.npy`` file in a temporary
  directory (removed afterwards; 1.6 GB), opened read-only as a memmap, and
  ``ObjPertClassifier(report="adaptive")`` is fitted on it and reports on every row. Stored:
  the guarantee, λ and σ, quantiles of the private bounds, the wall time of writing, of
  the fit and of the report, the passes over X, the process's peak RSS
  (``resource.getrusage``) and the bytes on disk; then the agreement of the fit and report
  on the memmap's first 10^6 rows with the same in memory (coefficients to 1e-10, bounds
  to 1e-9 relative). δ = 10^-9 for the model and for the report (δn ≤ 0.01).

``python reproduce/larger_than_memory.py``; run it with ``nice -n 10``.
"""

from __future__ import annotations

import pathlib
import resource
import tempfile
import time

import numpy as np
from _common import run

from pdpkit.experiments import larger_than_memory as ex

N_ROWS, D, BLOCK, SEED = 10**7, 20, 50_000, 7
N_AGREE = 10**6
KW = dict(epsilon=1.0, delta=1e-9, report="adaptive", report_epsilon=0.5, report_delta=1e-9,
          random_state=0)
QUANTILES = [0.05, 0.25, 0.5, 0.75, 0.95, 1.0]


def memmap() -> tuple[dict, dict, str]:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        X, y = ex.write_memmap(pathlib.Path(tmp) / "X.npy", N_ROWS, d=D, block_rows=BLOCK, seed=SEED)
        write_s = time.perf_counter() - t0
        r = ex.fit_and_report(X, y, **KW)
        peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
        g = r.clf.privacy_spent()
        out = {"n": N_ROWS, "d": D, "block_rows": BLOCK, "bytes_on_disk": int(X.nbytes),
               "estimator": {k: v for k, v in KW.items()},
               "epsilon": g.epsilon, "delta": g.delta, "guarantee": str(g).split(" = ")[0],
               "lam": r.clf.lam_, "sigma": r.clf.sigma_,
               "quantiles": QUANTILES, "bound_q": np.quantile(r.bounds, QUANTILES),
               "write_s": write_s, "fit_s": r.fit_seconds, "report_s": r.report_seconds,
               "us_per_row": 1e6 * (r.fit_seconds + r.report_seconds) / N_ROWS,
               "passes_fit": r.passes_fit, "passes": r.passes, "peak_rss_bytes": int(peak_rss)}
        # agreement at a smaller n: the memmap's first rows against the same rows in memory
        head = X[:N_AGREE]
        on_disk = ex.fit_and_report(head, y[:N_AGREE], **KW)
        in_mem = ex.fit_and_report(np.array(head), y[:N_AGREE], **KW)
        out["agreement_n"] = N_AGREE
        out["coef_equal_1e10"] = bool(np.max(np.abs(on_disk.clf.coef_ - in_mem.clf.coef_)) <= 1e-10)
        out["bounds_equal_1e9"] = bool(np.allclose(on_disk.bounds, in_mem.bounds, rtol=1e-9, atol=0))
        out["same_guarantee"] = on_disk.clf.privacy_spent() == in_mem.clf.privacy_spent() == g
        del X, head
    return out, {"data": SEED, "estimator": KW["random_state"]}, (
        "the chapter's FULL_SCALE: n = 10^7 rows, d = 20, from a memmap of 1.6 GB on disk; "
        "agreement with the in-memory fit checked on the first 10^6 rows")


EXPERIMENTS = {"memmap": memmap}


if __name__ == "__main__":
    run("larger_than_memory", EXPERIMENTS, __doc__.splitlines()[0])
