"""``pdpkit fit`` holds the numbers of a CSV about once: its peak memory above start-up is at most 4x the float64 data.

The command once read the file's text into Python strings several times over (14x the file on a
10^6-row file); it now scans the file a block at a time and lets pandas' C reader parse it a
block of rows at a time straight into float64 columns. Measured in a child process: its resident
memory after a small fit (every module imported, the start-up), then its peak (``VmHWM``, reset
through ``/proc/self/clear_refs``) while it fits a 2x10^5-row file of 5 numeric features and a
0/1 label. ``benchmarks/bench_cli_memory.py`` measures the 10^6-row file.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

N, D = 200_000, 5

PROBE = r"""
import sys
from pdpkit import cli

def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) * 1024

tiny, big, out = sys.argv[1:4]
fit = ["--label", "label", "--classes", "0,1", "--epsilon", "1", "--delta", "1e-7", "--seed", "1"]
assert cli.main(["fit", tiny, *fit, "--out", out]) == 0
start = status("VmRSS:")
with open("/proc/self/clear_refs", "w") as fh:
    fh.write("5")  # the peak resident size starts again from the current one
assert cli.main(["fit", big, *fit, "--out", out]) == 0
print(status("VmHWM:") - start)
"""


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.4, 0.4, size=(n, D))  # norms at most 0.9: no row beyond the bound
    return pd.DataFrame(X, columns=[f"f{j}" for j in range(D)]).assign(label=(X @ [1, -1, 0.5, 0.2, -0.3] > 0) * 1)


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux's /proc/self/clear_refs")
def test_fit_peak_memory_above_start_up_is_at_most_four_times_the_float64_data(tmp_path):
    tiny, big = tmp_path / "tiny.csv", tmp_path / "big.csv"
    _table(50, seed=1).to_csv(tiny, index=False, float_format="%.6f")
    _table(N).to_csv(big, index=False, float_format="%.6f")
    res = subprocess.run([sys.executable, "-c", PROBE, str(tiny), str(big), str(tmp_path / "r.json")],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    peak = int(res.stdout.split()[-1])
    data = N * (D + 1) * 8  # the features and the label as float64
    assert peak <= 4 * data, f"peak {peak / 2**20:.1f} MiB above start-up = {peak / data:.2f}x the float64 data"
