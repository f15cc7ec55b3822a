"""Argument checks shared by every pdpkit module.

Each checker raises a ``ValueError`` (or ``TypeError``) whose message names the
offending parameter and the allowed range, so that a user who passes, say,
``sigma=0`` learns which argument is wrong and what it should be.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "as_finite_array",
    "check_positive",
    "check_nonnegative",
    "check_probability",
    "check_int_at_least",
    "as_generator",
]


def as_finite_array(value: Any, name: str, *, ndim: int | None = None) -> np.ndarray:
    """Return ``value`` as a float64 array after checking it is finite.

    Raises ``TypeError`` if it cannot be converted to floats, ``ValueError`` if it
    has NaN/inf entries or (when ``ndim`` is given) the wrong number of axes.
    """
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numeric (array-like of floats); got {type(value).__name__}") from exc
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s); got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def check_positive(value: Any, name: str) -> np.ndarray:
    """Finite and strictly positive (elementwise); returned as a float array."""
    arr = as_finite_array(value, name)
    if np.any(arr <= 0):
        raise ValueError(f"{name} must be > 0; got {value!r}")
    return arr


def check_nonnegative(value: Any, name: str) -> np.ndarray:
    """Finite and ≥ 0 (elementwise); returned as a float array."""
    arr = as_finite_array(value, name)
    if np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0; got {value!r}")
    return arr


def check_probability(value: Any, name: str) -> np.ndarray:
    """Strictly inside (0, 1) (elementwise), e.g. δ or a failure probability ρ."""
    arr = as_finite_array(value, name)
    if np.any((arr <= 0) | (arr >= 1)):
        raise ValueError(f"{name} must lie in the open interval (0, 1); got {value!r}")
    return arr


def check_int_at_least(value: Any, name: str, minimum: int) -> int:
    """An integer ≥ ``minimum`` (bools are rejected)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer >= {minimum}; got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value}")
    return int(value)


def as_generator(rng: Any, name: str = "rng") -> np.random.Generator:
    """The generator to sample from, from an ``int`` seed, a ``Generator`` or ``None``.

    ``None`` draws a fresh generator from OS entropy; an integer seeds
    ``numpy.random.default_rng`` (so the same seed reproduces a run exactly); a
    ``numpy.random.Generator`` is used as it is. Anything else (a float, a legacy
    ``RandomState``) is a ``TypeError`` naming the parameter.
    """
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        if rng < 0:
            raise ValueError(f"{name} must be a non-negative integer seed; got {rng}")
        return np.random.default_rng(int(rng))
    raise TypeError(f"{name} must be an int seed, a numpy.random.Generator or None; got {type(rng).__name__}")
