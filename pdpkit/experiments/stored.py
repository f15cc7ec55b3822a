r"""Full-scale results, stored as data with their provenance, and read back by the chapters.

Every chapter runs its experiments at a size that fits the book's build (under a minute);
``make reproduce`` runs them at the sources' scale (``reproduce/<chapter>.py``) and writes
each result to ``results/<chapter>/<name>.json``. A stored result is a JSON object with

* ``"data"`` — the numbers (lists of floats, ints and strings; no pickles), and
* ``"provenance"`` — the command that produced it, the package version and the git commit
  (with a flag when the work tree had uncommitted changes), the seeds, the scale, the
  machine (platform, processor count, Python/numpy/scipy versions) and the wall time.

The chapters plot a stored result beside their live, smaller run; a unit test per
experiment checks that the two agree within a stated interval, so that neither can drift
silently. Nothing here is private data: every experiment runs on public or synthetic data
sets.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import pathlib
import platform
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["RESULTS_DIR", "StoredResult", "Timer", "provenance", "save_result", "load_result",
           "stored_results"]

#: The folder of stored results: ``results/`` at the top of the repository.
RESULTS_DIR: pathlib.Path = pathlib.Path(
    os.environ.get("PDPKIT_RESULTS_DIR", pathlib.Path(__file__).resolve().parents[2] / "results"))

_REQUIRED_PROVENANCE = ("command", "pdpkit_version", "commit", "seeds", "scale", "machine",
                        "wall_time_s", "finished_utc")


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=RESULTS_DIR.parent, capture_output=True,
                              text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _machine() -> dict[str, Any]:
    import scipy

    return {"platform": platform.platform(), "machine": platform.machine(),
            "processors": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__,
            "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS")}


def provenance(*, seeds: Mapping[str, Any] | list | int, scale: str, wall_time_s: float,
               command: str | None = None) -> dict[str, Any]:
    """The provenance record of a result computed now, in this process.

    Parameters
    ----------
    seeds : Mapping, list or int
        Every seed the experiment used (a mapping from its role to its value, or a list).
    scale : str
        The scale, in words a reader can check against the source (e.g. ``"the source's:
        n = 30,000, 9 ε, 10 trials"``, or an intermediate scale and why).
    wall_time_s : float
        Wall time of the experiment in seconds.
    command : str, optional
        The command that produced it; by default this process's command line.
    """
    from importlib.metadata import version

    commit = _git("rev-parse", "HEAD")
    # the results folder is excluded: a script that stores several results writes into it
    dirty = _git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results")
    return {
        "command": command if command is not None else " ".join([pathlib.Path(sys.argv[0]).name,
                                                                 *sys.argv[1:]]),
        "pdpkit_version": version("pdpkit"),
        "commit": commit,
        "work_tree_modified": bool(dirty) if dirty is not None else None,
        "seeds": seeds,
        "scale": scale,
        "machine": _machine(),
        "wall_time_s": round(float(wall_time_s), 1),
        "finished_utc": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
    }


def _plain(value: Any) -> Any:
    """JSON-ready copy: arrays to lists, numpy scalars to Python, non-finite floats to None."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"a stored result holds numbers, strings, lists and mappings; got {type(value).__name__}")


@dataclass(frozen=True)
class StoredResult:
    """A stored full-scale result: its numbers and where they came from.

    Parameters
    ----------
    chapter : str
        The chapter's notebook name.
    name : str
        The experiment's name within the chapter.
    data : dict
        The numbers, as stored (lists, floats, ints, strings; NaN stored as ``None``).
    provenance : dict
        Command, version, commit, seeds, scale, machine and wall time of the run.
    """

    chapter: str
    name: str
    data: dict[str, Any]
    provenance: dict[str, Any]

    def array(self, key: str) -> np.ndarray:
        """``data[key]`` as a float array (``None`` entries become NaN).

        Parameters
        ----------
        key : str
            A key of ``data`` holding numbers or nested lists of numbers.
        """
        return np.array(self.data[key], dtype=float)

    def caption(self) -> str:
        """One line for a figure or table: the scale, the wall time and the commit."""
        p = self.provenance
        commit = (p.get("commit") or "unknown")[:7]
        seconds = float(p["wall_time_s"])
        took = ("under 1 s" if seconds < 1.0 else f"{seconds:.0f} s" if seconds < 59.5
                else f"{seconds / 60.0:.0f} min")
        return (f"stored full-scale run ({p['scale']}; {took} on "
                f"{p['machine'].get('processors')} cores, pdpkit {p['pdpkit_version']} at {commit})")


def _path(chapter: str, name: str) -> pathlib.Path:
    for label, text in (("chapter", chapter), ("name", name)):
        if not text or not all(ch.isalnum() or ch in "_-." for ch in text) or text.startswith("."):
            raise ValueError(f"{label} must be a plain file name (letters, digits, '_', '-', '.'); got {text!r}")
    return RESULTS_DIR / chapter / f"{name}.json"


def save_result(chapter: str, name: str, data: Mapping[str, Any], *,
                provenance: Mapping[str, Any]) -> pathlib.Path:
    """Write ``results/<chapter>/<name>.json``; returns its path.

    Parameters
    ----------
    chapter : str
        The chapter's notebook name (``chapters/<chapter>.ipynb``).
    name : str
        The experiment's name within the chapter (e.g. ``"figure2_adult"``).
    data : Mapping
        The numbers: lists, arrays, floats, ints, strings and nested mappings of them.
    provenance : Mapping
        From :func:`provenance`; every field it makes is required.
    """
    missing = [k for k in _REQUIRED_PROVENANCE if k not in provenance]
    if missing:
        raise ValueError(f"provenance lacks {missing}; build it with pdpkit.experiments.stored.provenance")
    path = _path(chapter, name)
    record = {"chapter": chapter, "name": name, "provenance": _plain(dict(provenance)),
              "data": _plain(dict(data))}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False, allow_nan=False) + "\n",
                   encoding="utf-8")
    tmp.replace(path)
    return path


def load_result(chapter: str, name: str) -> StoredResult:
    """Read ``results/<chapter>/<name>.json`` (written by :func:`save_result`).

    Parameters
    ----------
    chapter : str
        The chapter's notebook name.
    name : str
        The experiment's name within the chapter.

    Raises
    ------
    FileNotFoundError
        If the result has not been stored; ``make reproduce`` writes it.
    ValueError
        If the file is not a stored result (missing provenance fields).
    """
    path = _path(chapter, name)
    if not path.exists():
        raise FileNotFoundError(f"no stored result {chapter}/{name}: run `make reproduce CHAPTERS={chapter}`")
    record = json.loads(path.read_text(encoding="utf-8"))
    prov = record.get("provenance", {})
    missing = [k for k in _REQUIRED_PROVENANCE if k not in prov]
    if missing or record.get("chapter") != chapter or record.get("name") != name or "data" not in record:
        raise ValueError(f"{path.name} is not a stored result of {chapter}/{name} (missing {missing or 'fields'})")
    return StoredResult(chapter=chapter, name=name, data=record["data"], provenance=prov)


def stored_results() -> Iterator[StoredResult]:
    """Every stored result, in file-name order."""
    for path in sorted(RESULTS_DIR.glob("*/*.json")):
        yield load_result(path.parent.name, path.stem)


class Timer:
    """Wall time of a ``with`` block, in seconds (``timer.seconds``)."""

    seconds: float = float("nan")

    def __enter__(self) -> Timer:
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._start
