"""``pdpkit fit`` holds the numbers of a CSV about once: its peak memory above start-up is at most 4x the float64 data.

The command once read the file's text into Python strings several times over (14x the file on a
10^6-row file); it now scans the file a block at a time and lets pandas' C reader parse it a
block of rows at a time straight into float64 columns. Measured as ``benchmarks/bench_cli_memory.py``
measures the 10^6-row file (its probe, run here): in a child process, its resident memory after a
small fit (every module imported, the start-up), then its peak (``VmHWM``, reset through
``/proc/self/clear_refs``) while it fits a 2x10^5-row file of 5 numeric features and a 0/1 label.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "bench_cli_memory.py"
N = 200_000


def _bench():
    spec = importlib.util.spec_from_file_location("bench_cli_memory", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux's /proc/self/clear_refs")
def test_fit_peak_memory_above_start_up_is_at_most_four_times_the_float64_data(tmp_path):
    bench = _bench()
    tiny, big = tmp_path / "tiny.csv", tmp_path / "big.csv"
    bench._write(tiny, 50, seed=1)
    bench._write(big, N, seed=0)
    peak = bench._peak("cli", tiny, big, tmp_path / "r.json")
    data = N * (bench.D + 1) * 8  # the features and the label as float64
    assert peak <= 4 * data, f"peak {peak / 2**20:.1f} MiB above start-up = {peak / data:.2f}x the float64 data"
