"""Computations behind the chapter "Using pdpkit": test accuracy against the privacy budget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._progress import progress as _progress
from ..datasets import Dataset
from ..estimators import ObjPertClassifier

__all__ = ["accuracy_curve"]


def accuracy_curve(train: Dataset, test: Dataset, *, eps: Sequence[float], delta: float, seeds: int = 2,
                   progress: bool | None = None, **estimator_kwargs: Any) -> dict[str, np.ndarray]:
    r"""Mean test accuracy of :class:`pdpkit.estimators.ObjPertClassifier` at each ε, over the seeds ``0, 1, …, seeds - 1``.

    Returns ``{"eps": ..., "accuracy": ..., "std": ...}`` (standard deviation over seeds).

    Parameters
    ----------
    eps : Sequence[float]
        The values of ε (nats) of the (ε, δ) guarantees.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    seeds : int, default 2
        Number of fits per ε, with the seeds 0, 1, …, ``seeds`` − 1.
    progress : bool, optional
        A tqdm progress bar (``None``: only when a person watches; ``PDPKIT_PROGRESS=0`` turns it off).
    train : Dataset
        Training data set.
    test : Dataset
        Test data set.
    """
    eps = np.asarray(eps, dtype=float)
    acc = np.empty((eps.size, seeds))
    grid = [(i, s) for i in range(eps.size) for s in range(seeds)]
    for i, s in _progress(grid, total=len(grid), desc="accuracy curve", progress=progress):
        clf = ObjPertClassifier(float(eps[i]), delta, random_state=s, **estimator_kwargs).fit(train.X, train.y)
        acc[i, s] = clf.score(test.X, test.y)
    return {"eps": eps, "accuracy": acc.mean(axis=1), "std": acc.std(axis=1)}
