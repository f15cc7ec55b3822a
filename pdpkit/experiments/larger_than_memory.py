r"""Computations behind the chapter "Data larger than memory": a synthetic data set on disk, a timed fit.

* :func:`synthetic_block` — block ``i`` of a seeded synthetic logistic data set (rows with
  :math:`\|x\| \le 1`), the same whichever process or machine makes it.
* :func:`write_memmap` — the data set written to a ``.npy`` file block by block (never the
  whole array in memory) and opened again as a read-only memmap.
* :func:`fit_and_report` — :class:`pdpkit.estimators.ObjPertClassifier` fitted on it and its
  privacy report on every row, with the wall time of each and the passes over X.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _solver
from ..estimators import ObjPertClassifier

__all__ = ["synthetic_block", "write_memmap", "ScaleRun", "fit_and_report"]


def synthetic_block(i: int, rows: int, *, d: int = 20, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    r"""Block ``i`` of the synthetic data set: ``rows`` rows and their labels in :math:`\{-1, 1\}`.

    Features uniform on :math:`[-1/\sqrt d, 1/\sqrt d]` (so every row has norm at most 1),
    labels drawn from a logistic model with the fixed weights ``3 N(0, I)`` (seed ``seed``).
    Block ``i`` is drawn from the generator seeded ``[seed, i]``: any process makes the same
    block, in any order.

    Parameters
    ----------
    i : int
        Index of the block (0, 1, ...).
    rows : int
        Rows in the block.
    d : int, default 20
        Features.
    seed : int, default 7
        Seed of the data set.
    """
    rng = np.random.default_rng([seed, i])
    X = (rng.random((rows, d)) - 0.5) * (2.0 / np.sqrt(d))
    w = np.random.default_rng(seed).normal(size=d) * 3.0
    y = np.where(rng.random(rows) < 1.0 / (1.0 + np.exp(-X @ w)), 1.0, -1.0)
    return X, y


def write_memmap(path: str | os.PathLike, n_rows: int, *, d: int = 20, block_rows: int = 50_000,
                 seed: int = 7) -> tuple[np.memmap, np.ndarray]:
    """Write the synthetic data set's ``n_rows`` rows to the ``.npy`` file ``path``, block by block.

    Block ``j`` holds the rows ``j·block_rows, …`` and is :func:`synthetic_block` ``(j, …)``.
    Returns the features opened again read-only as a memmap, and the labels (in memory).

    Parameters
    ----------
    path : str or os.PathLike
        The ``.npy`` file to write (in a temporary directory: it takes ``8·n_rows·d`` bytes).
    n_rows : int
        Rows of the data set.
    d : int, default 20
        Features.
    block_rows : int, default 50,000
        Rows generated and written at a time.
    seed : int, default 7
        Seed of the data set (:func:`synthetic_block`).
    """
    if int(n_rows) < 1 or int(block_rows) < 1:
        raise ValueError(f"n_rows and block_rows must be positive integers; got {n_rows!r}, {block_rows!r}")
    n_rows, block_rows = int(n_rows), int(block_rows)
    Xw = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(n_rows, d))
    y = np.empty(n_rows)
    for j, s in enumerate(range(0, n_rows, block_rows)):
        Xw[s:s + block_rows], y[s:s + block_rows] = synthetic_block(
            j, min(block_rows, n_rows - s), d=d, seed=seed)
    Xw.flush()
    del Xw
    return np.load(path, mmap_mode="r"), y


@dataclass(frozen=True)
class ScaleRun:
    """A fit and its privacy report on every row, timed.

    Parameters
    ----------
    clf : ObjPertClassifier
        The fitted estimator.
    bounds : numpy.ndarray
        Every row's private bound (nats).
    fit_seconds : float
        Wall time of the fit.
    report_seconds : float
        Wall time of the report.
    passes_fit : float
        Rows read by the fit divided by n.
    passes : float
        Rows read by the fit and the report together divided by n.
    """

    clf: ObjPertClassifier
    bounds: np.ndarray
    fit_seconds: float
    report_seconds: float
    passes_fit: float
    passes: float


def fit_and_report(X: Any, y: Any, *, classes: Sequence[float] = (-1.0, 1.0), **estimator_kwargs: Any) -> ScaleRun:
    """Fit :class:`pdpkit.estimators.ObjPertClassifier` on ``(X, y)`` and report on every row.

    Parameters
    ----------
    X : array_like
        Features: a numpy array, a memmap or a Dask array (read block by block).
    y : array_like
        Labels.
    classes : Sequence[float], default (-1, +1)
        The public classes (``classes[1]`` positive): those of :func:`synthetic_block`.
    **estimator_kwargs
        The estimator's parameters (a report method among them).
    """
    n = int(X.shape[0])
    start = _solver._ROWS_READ[0]
    t0 = time.perf_counter()
    clf = ObjPertClassifier(classes=list(classes), **estimator_kwargs).fit(X, y)
    t1 = time.perf_counter()
    read_fit = _solver._ROWS_READ[0] - start
    bounds = np.asarray(clf.privacy_report(X, y))
    t2 = time.perf_counter()
    return ScaleRun(clf=clf, bounds=bounds, fit_seconds=t1 - t0, report_seconds=t2 - t1,
                    passes_fit=read_fit / n, passes=(_solver._ROWS_READ[0] - start) / n)
