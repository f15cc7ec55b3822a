"""Tiny timing harness shared by the benchmarks (``make bench``).

Every benchmark times pdpkit against a *named baseline measured in the same run*
and prints one line per comparison::

    [objpert] ex_post_pdp 1e6 targets d=50     812.3 ms | baseline bare-numpy floor  601.0 ms | ratio 1.35 (goal <= 2)
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable

import numpy as np


def best_time(fn: Callable[[], object], *, repeat: int = 5, number: int = 1) -> float:
    """Best wall-clock time (seconds) per call over ``repeat`` rounds of ``number`` calls."""
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return float(best)


def _fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f} us"
    if seconds < 1.0:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds:8.2f} s "


def report(group: str, name: str, seconds: float, *, baseline: str | None = None,
           baseline_seconds: float | None = None, goal: str = "") -> None:
    """Print one benchmark line: the time, the baseline's time and their ratio."""
    line = f"[{group}] {name:<44s} {_fmt(seconds)}"
    if baseline is not None and baseline_seconds is not None:
        line += f" | baseline {baseline:<32s} {_fmt(baseline_seconds)} | ratio {seconds / baseline_seconds:6.2f}"
    if goal:
        line += f" ({goal})"
    print(line, flush=True)


def machine_line() -> str:
    """One line describing the machine the benchmarks ran on."""
    import os

    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), cpu)
    except OSError:
        pass
    return (f"machine: {platform.machine()} {cpu} | {os.cpu_count()} cores | "
            f"Python {platform.python_version()} | numpy {np.__version__}")
