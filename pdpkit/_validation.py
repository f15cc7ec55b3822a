"""Argument checks shared by every pdpkit module.

Each checker raises a ``ValueError`` (or ``TypeError``) whose message names the
offending parameter and the allowed range, so that a user who passes, say,
``sigma=0`` learns which argument is wrong and what it should be.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "as_finite_array",
    "check_positive",
    "check_nonnegative",
    "check_probability",
    "check_int_at_least",
    "scalar_positive",
    "scalar_nonnegative",
    "scalar_probability",
    "as_generator",
    "charged_generator",
    "check_member_flags",
    "check_member_records",
    "check_json_keys",
    "row_norms",
    "clip_factors",
    "check_mu",
    "check_repetition_law",
    "strict_real",
    "finite_scalar",
    "strict_delta",
    "MU_MAX",
]

#: The largest Gaussian parameter μ = Δ/s accepted: a Gaussian part with μ above it alone
#: costs ε > μ²/2 = 5000, no meaningful guarantee.
MU_MAX = 100.0


def as_finite_array(value: Any, name: str, *, ndim: int | None = None) -> np.ndarray:
    """Return ``value`` as a float64 array after checking it is finite.

    Raises ``TypeError`` if it cannot be converted to floats or is text (``"1"`` is
    never read as the number 1), ``ValueError`` if it has NaN/inf entries or (when
    ``ndim`` is given) the wrong number of axes.
    """
    if type(value) is float and not ndim:  # the common case, checked without numpy's overhead
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite (no NaN or inf)")
        return np.array(value)
    try:
        raw = np.asarray(value)
        text = raw.dtype.kind in "US" or (raw.dtype.kind == "O" and any(
            isinstance(v, (str, bytes)) for v in raw.ravel()))
        if not text:
            arr = raw.astype(np.float64, copy=False)
    except (TypeError, ValueError, OverflowError) as exc:
        raise TypeError(f"{name} must be numeric (array-like of floats); got {type(value).__name__}") from exc
    if text:
        raise TypeError(f"{name} must be numeric (array-like of floats), not text; got {type(value).__name__}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s); got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def check_estimator_budget(params: Any, names: tuple[str, ...]) -> float:
    """An estimator's scalar parameters and its (ε, δ) and norm bound: the checks every pdpkit estimator shares.

    Each of ``names`` (attributes of ``params``) is ``None`` or a real scalar (``TypeError``
    naming it otherwise: text, bool, arrays); ``epsilon`` lies in (0, 500] (a larger ε protects
    nothing), ``delta`` in (0, 1), ``norm_bound`` > 0. Returns ε.
    """
    for name in names:
        value = getattr(params, name)
        if value is not None and (isinstance(value, (str, bytes, bool, np.bool_)) or np.ndim(value) != 0):
            raise TypeError(f"{name} must be a real number; got {value!r}")
    eps = float(check_positive(params.epsilon, "epsilon"))
    if eps > 500.0:
        raise ValueError(f"epsilon must be at most 500 (a larger epsilon protects nothing); got {eps:g}")
    check_probability(params.delta, "delta")
    check_positive(params.norm_bound, "norm_bound")
    return eps


def check_positive(value: Any, name: str) -> np.ndarray:
    """Finite and strictly positive (elementwise); returned as a float array."""
    if type(value) is float and 0.0 < value < math.inf:
        return np.array(value)
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
    if type(value) is float and 0.0 < value < 1.0:
        return np.array(value)
    arr = as_finite_array(value, name)
    if np.any((arr <= 0) | (arr >= 1)):
        raise ValueError(f"{name} must lie in the open interval (0, 1); got {value!r}")
    return arr


def _scalar(arr: np.ndarray, name: str, requirement: str) -> float:
    if arr.ndim:
        raise TypeError(f"{name} must be a single number {requirement}, not an array; got shape {arr.shape}")
    return float(arr)


def scalar_positive(value: Any, name: str) -> float:
    """A single finite number > 0, as a float (``TypeError`` for an array or text)."""
    return _scalar(check_positive(value, name), name, "> 0")


def scalar_nonnegative(value: Any, name: str) -> float:
    """A single finite number >= 0, as a float (``TypeError`` for an array or text)."""
    return _scalar(check_nonnegative(value, name), name, ">= 0")


def scalar_probability(value: Any, name: str) -> float:
    """A single number in the open interval (0, 1), as a float (``TypeError`` for an array or text)."""
    return _scalar(check_probability(value, name), name, "in the open interval (0, 1)")


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


#: The first word of every charged release's spawn key: keeps the streams of
#: :func:`charged_generator` apart from any ``SeedSequence(seed).spawn(...)`` a caller makes.
_CHARGE_STREAM_TAG = 0x70647063  # "pdpc"


def charged_generator(random_state: Any, position: int, name: str = "random_state") -> np.random.Generator:
    r"""The noise of the release charged at ``position`` of an accountant's ledger.

    Every charged release draws from its own stream, whatever seed the caller passed:
    ``SeedSequence(entropy, spawn_key=(tag, position))``, where ``entropy`` is

    * the caller's integer seed (the run is reproducible from it),
    * 128 bits drawn from the caller's ``Generator`` (which advances), or
    * 128 bits of OS entropy for ``None``.

    Two charges of one ledger have different positions, hence different spawn keys:
    ``SeedSequence`` hashes entropy and spawn key together into the generator's state, the
    mechanism numpy provides for independent parallel streams (its ``spawn``), so two
    releases never share noise even when both were given ``random_state=0``. (Seeding each
    from ``default_rng(0)``, as before, gave them the same standard-normal vector, and their
    composition was then no longer the independent composition the accountant computes.)

    Parameters
    ----------
    random_state : int, numpy.random.Generator or None
        The caller's source of randomness.
    position : int
        The charge's place in the ledger (>= 0): its first entry's index.
    name : str
        The parameter's name in error messages.
    """
    if isinstance(position, (bool, np.bool_)) or not isinstance(position, (int, np.integer)) or position < 0:
        raise ValueError(f"position must be an integer >= 0; got {position!r}")
    if random_state is None:
        entropy: Any = np.random.SeedSequence().entropy
    elif isinstance(random_state, np.random.Generator):
        entropy = [int(v) for v in random_state.integers(0, 2**32, size=4, dtype=np.uint64)]
    elif isinstance(random_state, (int, np.integer)) and not isinstance(random_state, (bool, np.bool_)):
        if random_state < 0:
            raise ValueError(f"{name} must be a non-negative integer seed; got {random_state}")
        entropy = int(random_state)
    else:
        raise TypeError(f"{name} must be an int seed, a numpy.random.Generator or None; "
                        f"got {type(random_state).__name__}")
    return np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(_CHARGE_STREAM_TAG, int(position))))


def check_member_flags(member: Any, m: int) -> np.ndarray:
    """``member`` as one bool per target: a bool for all ``m`` targets, or an array of ``m`` bools.

    ``True``: the target is a record of the data set (neighbour: remove it); ``False``: a
    newcomer (neighbour: add it). ``TypeError`` for non-bools, ``ValueError`` for a wrong length.
    """
    arr = np.asarray(member)
    if arr.dtype != np.bool_:
        raise TypeError("member must be a bool or an array of bools (True: z in D, removal; False: z not in D, "
                        f"addition); got dtype {arr.dtype}")
    if arr.ndim == 0:
        return np.full(m, bool(arr))
    if arr.shape != (m,):
        raise ValueError(f"member must be a bool or have shape ({m},); got {arr.shape}")
    return arr


#: Odd 64-bit multipliers of the record hash (one per column, cycled), fixed once.
_HASH_MULT = np.random.default_rng(0x5EED).integers(1, 2**63, size=4096, dtype=np.uint64) | np.uint64(1)


def _records(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The records (x_i, y_i) as columns of uint64 words (-0.0 read as 0.0), and a 64-bit hash of each."""
    Z = np.empty((X.shape[1] + 1, X.shape[0]))
    Z[:-1] = X.T
    Z[-1] = y
    Z += 0.0  # -0.0 -> 0.0, so equal values have equal bits
    W = Z.view(np.uint64)
    mult = _HASH_MULT[np.arange(W.shape[0]) % _HASH_MULT.size]
    H = W ^ (W >> np.uint64(31))
    H *= mult[:, None]  # wraps modulo 2**64
    return W, H.sum(axis=0, dtype=np.uint64)


def check_member_records(X: np.ndarray, y: np.ndarray, tx: np.ndarray, ty: np.ndarray, member: np.ndarray) -> None:
    """``ValueError`` naming ``target_x[j]`` unless every target flagged ``member`` is a record (x_i, y_i).

    Exact: records are matched by a 64-bit hash of their float64 words (one sort of the data's
    hashes, one binary search per target) and every candidate is then compared word by word,
    so a hash collision can never accept a target; equal-hash runs of distinct records
    (probability ~n²/2⁶⁴) are searched whole. ``-0.0`` counts as ``0.0``.
    """
    idx = np.flatnonzero(member)
    if idx.size == 0:
        return
    mx, my = tx[idx], ty[idx]
    if mx.shape == X.shape and np.array_equal(mx, X) and np.array_equal(my, y):
        return  # the usual call: every row of the data, in order
    WD, hD = _records(X, y)
    WT, hT = _records(mx, my)
    order = np.argsort(hD, kind="stable")
    hs = hD[order]
    lo = np.searchsorted(hs, hT, side="left")
    hi = np.searchsorted(hs, hT, side="right")
    first = order[np.minimum(lo, max(hs.size - 1, 0))] if hs.size else np.zeros(lo.size, dtype=np.intp)
    found = (hi > lo) & (np.all(WD[:, first] == WT, axis=0) if hs.size else False)
    for t in np.flatnonzero(~found & (hi - lo > 1)):  # distinct records sharing a hash: rare
        found[t] = bool(np.any(np.all(WD[:, order[lo[t]:hi[t]]] == WT[:, t:t + 1], axis=0)))
    if not np.all(found):
        j = int(idx[np.flatnonzero(~found)[0]])
        raise ValueError(f"target_x[{j}] (with target_y[{j}]) is not a record of (X, y), but member=True for it "
                         f"({int(np.count_nonzero(~found))} member target(s) not found): a removal analysis "
                         "needs a record of the data set; pass member=False to analyse adding it")


def check_json_keys(data: Any, where: str, *, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    """A JSON object with every ``required`` field and no field outside ``required`` and ``optional``.

    ``TypeError`` if ``data`` is not a dict; ``ValueError`` naming ``where`` and the unknown
    (with the allowed) or the missing fields otherwise. Shared by the strict JSON readers.
    """
    if not isinstance(data, dict):
        raise TypeError(f"{where} must be a JSON object; got {type(data).__name__}")
    unknown = sorted(set(data) - set(required) - set(optional))
    if unknown:
        raise ValueError(f"{where} has unknown field(s) {unknown} (allowed: {sorted(required + optional)})")
    missing = [k for k in required if k not in data]
    if missing:
        raise ValueError(f"{where} lacks the field(s) {missing}")


def row_norms(X: np.ndarray) -> np.ndarray:
    """Euclidean norms of the rows of a float array, exact also for entries beyond 1e154.

    The sum of squares overflows to ``inf`` once an entry passes about 1.3e154 (and
    underflows below 1e-154); such rows (and only they) are measured again divided by their
    largest entry, so a huge row has its true (finite) norm and is clipped onto the ball, not
    to zero.

    Parameters
    ----------
    X : numpy.ndarray, shape (n, d)
        Finite rows.
    """
    sq = np.einsum("ij,ij->i", X, X)
    norms = np.sqrt(sq)
    risky = ~(sq <= 1e300) | (sq < 1e-290)  # overflowed (or not finite), or perhaps underflowed
    if np.any(risky):
        S = X[risky]
        top = np.max(np.abs(S), axis=1)
        scale = np.where(top > 0, top, 1.0)
        U = S / scale[:, None]
        with np.errstate(over="ignore"):
            norms[risky] = scale * np.sqrt(np.einsum("ij,ij->i", U, U))
    return norms


def clip_factors(norms: np.ndarray, bound: float) -> np.ndarray:
    """The factors ``min(1, bound / norm)`` that shrink rows of these norms onto the ball of radius ``bound``.

    Parameters
    ----------
    norms : numpy.ndarray
        Row norms (:func:`row_norms`).
    bound : float
        The ball's radius.
    """
    return np.minimum(1.0, bound / np.where(norms > 0, norms, 1.0))


def check_mu(mu: Any, name: str = "mu") -> float:
    """A Gaussian mechanism's parameter μ = Δ/s: a real number in [0, :data:`MU_MAX`]."""
    m = scalar_nonnegative(mu, name)
    if m > MU_MAX:
        raise ValueError(f"{name} must be at most {MU_MAX:g} (the Gaussian part alone would cost eps > "
                         f"{MU_MAX ** 2 / 2:g}); got {float(m):g}: its noise scale is too small for its sensitivity")
    return float(m)


def check_repetition_law(mean: object, shape: object) -> tuple[float, float]:
    """The law of a selection's number of runs: ``mean`` >= 1 real, ``shape`` >= 0 real or inf (Poisson)."""
    import math

    for name, value in (("mean", mean), ("shape", shape)):
        if isinstance(value, (str, bytes, bool, np.bool_)) or np.ndim(value) != 0:
            raise TypeError(f"{name} must be a real number; got {value!r}")
    m, s = float(mean), float(shape)
    if not (math.isfinite(m) and m >= 1.0):
        raise ValueError(f"mean (the expected number of runs) must be a finite number >= 1; got {mean!r}")
    if m > 1e6:
        raise ValueError(f"mean must be at most 1e6 runs; got {m:g}")
    if math.isnan(s) or s < 0.0:
        raise ValueError(f"shape must be >= 0 (0 logarithmic, 1 geometric, inf Poisson); got {shape!r}")
    if math.isfinite(s) and s > 1e6:
        raise ValueError(f"shape must be at most 1e6 or inf (Poisson); got {s:g}")
    if math.isfinite(s) and m == 1.0:
        raise ValueError("mean must be > 1 for a truncated negative binomial number of runs (K >= 1 always, "
                         "so mean 1 is K = 1: no selection)")
    return m, s


def strict_real(value: Any, name: str, *, positive: bool = True, allow_zero: bool = False) -> float:
    """A real number from a file or a parameter: int or float (not bool or text), finite, > 0 (or >= 0)."""
    import math

    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number; got {type(value).__name__} {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite; got {value!r}")
    if positive and not (v > 0 or (allow_zero and v == 0)):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}; got {value!r}")
    return v


def strict_delta(value: Any, name: str) -> float:
    """A δ from a file or a parameter: a number in (0, 1) (:func:`strict_real`)."""
    v = strict_real(value, name)
    if not v < 1.0:
        raise ValueError(f"{name} must lie in (0, 1); got {value!r}")
    return v


def finite_scalar(value: Any, name: str) -> float:
    """A finite real scalar (a number or a 0-d array; not text or bool), as a float."""
    import math

    if isinstance(value, (str, bytes, bool, np.bool_)) or np.ndim(value) != 0:
        raise TypeError(f"{name} must be a real number; got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite; got {value!r}")
    return v
