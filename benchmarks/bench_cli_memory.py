"""Peak memory of ``pdpkit fit`` on a 10^6-row CSV, against the float64 data and the API on the same file.

The file: 10^6 rows of 5 numeric features (``%.6f`` in [-0.4, 0.4]) and a 0/1 label, 49.5 MB
(the shape of the 51 MB file of the issue). Each measurement runs in a fresh process: a small fit
first (every module imported: the start-up), then ``/proc/self/clear_refs`` resets the peak
resident size and the measured work runs; printed is the peak above start-up (``VmHWM`` minus
the resident size after the small fit) and its ratio to the float64 data (features and label,
10^6 x 6 x 8 bytes = 48 MB). Goal: at most 4x.

* ``pdpkit fit``: the command line (``pdpkit.cli.main``);
* baseline ``pandas.read_csv + ObjPertClassifier.fit``: the same data through the API.

Before the reader was rewritten (commit c445cb9) the command peaked at 542 MB above start-up,
11.3x the float64 data (693 MiB for the whole process, 14x the file); after, about 111 MB, 2.3x.

``python benchmarks/bench_cli_memory.py`` (part of ``make bench``; Linux only).
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

N, D = 1_000_000, 5
TAG = "[cli-memory]"
FIT = ["--label", "label", "--classes", "0,1", "--epsilon", "1", "--delta", "1e-7", "--seed", "1"]

PROBE = r"""
import sys

def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) * 1024

mode, tiny, big, out = sys.argv[1:5]
fit = sys.argv[5:]
if mode == "cli":
    from pdpkit import cli

    work = lambda path: cli.main(["fit", path, *fit, "--out", out])
else:
    import pandas as pd
    from pdpkit.estimators import ObjPertClassifier

    def work(path):
        frame = pd.read_csv(path)
        X, y = frame.drop(columns="label"), frame["label"].to_numpy()
        del frame
        ObjPertClassifier(1.0, 1e-7, classes=[0, 1], random_state=1).fit(X, y)
        return 0
assert work(tiny) == 0
start = status("VmRSS:")
with open("/proc/self/clear_refs", "w") as fh:
    fh.write("5")
assert work(big) == 0
print(status("VmHWM:") - start)
"""


def _write(path: pathlib.Path, n: int, seed: int) -> None:
    """The CSV, block by block (never the whole text in memory)."""
    rng = np.random.default_rng(seed)
    w = np.array([1.0, -1.0, 0.5, 0.2, -0.3])
    with open(path, "w") as fh:
        fh.write(",".join([*(f"f{j}" for j in range(D)), "label"]) + "\n")
        for s in range(0, n, 100_000):
            X = rng.uniform(-0.4, 0.4, size=(min(100_000, n - s), D))
            y = (X @ w > 0).astype(int)
            fh.write("".join(",".join(f"{v:.6f}" for v in row) + f",{lab}\n"
                             for row, lab in zip(X.tolist(), y.tolist(), strict=True)))


def _peak(mode: str, tiny: pathlib.Path, big: pathlib.Path, out: pathlib.Path) -> int:
    res = subprocess.run([sys.executable, "-c", PROBE, mode, str(tiny), str(big), str(out), *FIT],
                         capture_output=True, text=True, check=True)
    return int(res.stdout.split()[-1])


def main() -> None:
    if not os.path.exists("/proc/self/clear_refs"):
        print(f"{TAG} skipped: needs Linux's /proc/self/clear_refs", flush=True)
        return
    with tempfile.TemporaryDirectory() as tmp:
        d = pathlib.Path(tmp)
        tiny, big = d / "tiny.csv", d / "big.csv"
        _write(tiny, 50, seed=1)
        _write(big, N, seed=0)
        size = big.stat().st_size
        data = N * (D + 1) * 8
        print(f"{TAG} file {size / 1e6:.1f} MB: {N} rows x {D} numeric features + a 0/1 label; float64 data "
              f"{data / 1e6:.1f} MB", flush=True)
        api = _peak("api", tiny, big, d / "r.json")
        cli = _peak("cli", tiny, big, d / "r.json")
        for name, peak in (("pdpkit fit (command line)", cli), ("pandas.read_csv + ObjPertClassifier.fit", api)):
            print(f"{TAG} {name:<44s} peak above start-up {peak / 1e6:7.1f} MB | baseline float64 data "
                  f"{data / 1e6:5.1f} MB | ratio {peak / data:5.2f} (goal <= 4)", flush=True)
        print(f"{TAG} pdpkit fit against the API on the same file: ratio {cli / api:5.2f}", flush=True)


if __name__ == "__main__":
    main()
