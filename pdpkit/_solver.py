r"""GLM fitting internals shared by the mechanism modules (private): data checks and the exact solver.

Minimizes :math:`J(\theta; D) + b^\top\theta` for a GLM loss until the perturbed gradient's
*true* norm is certified to be at most an absolute, public tolerance τ: the float64 gradient
plus a rigorous bound on its rounding error (:func:`_certified_gradient`). A private release
then pays for the distance :math:`\le\tau/\lambda` to the exact minimizer with output noise
(:func:`pdpkit.objpert.objpert_fit`). Failure raises (``_NoConvergence``, turned into
``RuntimeError`` by :func:`_solve`) with a message that carries no number computed from the
data. Also the blocked SYRK Hessian and its Cholesky factor that the ex-post pDP and the
privacy report reuse.
"""

from __future__ import annotations

import functools
import math
import threading
from typing import Any

import numpy as np
import scipy.linalg as sla
from scipy.linalg.blas import dsyrk

from ._validation import as_finite_array, check_positive, clip_factors, row_norms
from .losses import GLMLoss, Squared, get_loss

_EPS = np.finfo(np.float64).eps
_NEWTON_MAX_D = 1500  # above this dimension, method="auto" uses truncated Newton-CG


def _freeze(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64, copy=True)
    a.flags.writeable = False
    return a


# ------------------------------------------------------------ rows in blocks
#: Bytes of float64 per block of rows: a block stays in cache while a kernel reads it twice.
_BLOCK_BYTES = 1 << 20
#: Rows read over all passes since the counter was last reset (benchmarks: passes = rows / n).
_ROWS_READ = [0]


def _is_dask(a: Any) -> bool:
    """Whether ``a`` is a Dask array (without importing dask)."""
    return type(a).__module__.split(".")[0] == "dask" and hasattr(a, "chunks")


class _Rows:
    r"""The feature rows the solver sees, read block by block from ``X`` and never copied whole.

    Row :math:`i` is :math:`x_i` (a row of ``X``: a numpy array, a ``numpy.memmap`` or a Dask
    array), shrunk onto the ball of radius ``clip`` when it is longer (``clip``: a fixed map of
    each record), then followed by the constant ``intercept`` when it is given (a virtual
    column: the intercept costs no copy of ``X``). Every kernel sees one block of at most
    ``block_rows`` such rows, materialized as float64: extra memory O(``block_rows`` · d).

    ``pending_check``: the map's deferred row checks, ``(limit, name, norm_bound)`` (``limit``
    None: no bound to check), which the next pass over the rows makes before it returns
    anything (:func:`_run_pending_check`); None when there are none. The builder of a map sets it
    (``estimators``' row map); the solver clears it once the checks have passed.
    """

    def __init__(self, X: Any, *, intercept: float | None = None, clip: float | None = None,
                 block_rows: int | None = None) -> None:
        self.X = X
        n, p = X.shape
        self.n, self.p = int(n), int(p)
        self.intercept = None if intercept is None else float(intercept)
        self.clip = None if clip is None else float(clip)
        self.d = self.p + (self.intercept is not None)
        self.dask = _is_dask(X)
        self.block_rows = int(block_rows) if block_rows else max(256, _BLOCK_BYTES // (8 * max(self.d, 1)))
        #: deferred row checks (limit, name, norm_bound), or None (see the class docstring)
        self.pending_check: tuple[float | None, str, float] | None = None
        #: the rows' own checks (finite, largest squared norm, its row), once made
        self._x_checked: tuple | None = None
        #: (labels, loss name, checks) of the last :func:`_check_rows` with these rows
        self._checked: tuple | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n, self.d)

    def like(self, X: Any) -> _Rows:
        """The same row map on other raw rows ``X`` (a subset, or targets)."""
        _run_pending_check(self)  # a deferred check is never skipped by reading a subset
        return _Rows(X, intercept=self.intercept, clip=self.clip, block_rows=self.block_rows)

    def meta(self) -> _Rows:
        """The row map without the data (what a Dask task carries)."""
        return _Rows(np.empty((0, self.p)), intercept=self.intercept, clip=self.clip, block_rows=self.block_rows)

    def head_or_every(self, k: int) -> tuple[_Rows, slice]:
        """About 1/k of the rows for a warm start: every k-th row in memory, the first n/k otherwise."""
        m = self.n // k
        sl = slice(None, None, k) if (type(self.X) is np.ndarray) else slice(0, m)
        return self.like(self.X[sl]), sl

    def effective(self, Xc: Any, out: np.ndarray | None = None) -> np.ndarray:
        """One block of raw rows as the rows the model is fitted on (float64, clipped, intercept).

        ``out``: a work array of at least the block's rows (:meth:`block_buffer`) that receives
        the rows when they are changed (clipped, or given an intercept column), instead of a
        fresh array per block: a fresh megabyte is a page fault per page. The result is then a
        view of ``out``, valid until the next call with it.
        """
        Xc = np.asarray(Xc)
        if Xc.dtype != np.float64:
            Xc = Xc.astype(np.float64)
        k = Xc.shape[0]
        scale = None
        if self.clip is not None and k:
            norms = row_norms(Xc)
            if np.any(norms > self.clip * (1.0 + 1e-12)):
                scale = clip_factors(norms, self.clip)[:, None]
        if self.intercept is None and scale is None:
            return Xc
        o = np.empty((k, self.d)) if out is None or out.shape[0] < k else out[:k]
        if scale is not None:
            np.multiply(Xc, scale, out=o[:, :self.p])
        else:
            o[:, :self.p] = Xc
        if self.intercept is not None:
            o[:, self.p] = self.intercept
        return o

    def block_buffer(self) -> np.ndarray | None:
        """A work array for :meth:`effective` over blocks of :attr:`block_rows` rows (None: rows used as they are)."""
        if self.intercept is None and self.clip is None:
            return None
        return np.empty((self.block_rows, self.d))

    def materialize(self) -> np.ndarray:
        """All rows as one array (only for small data: the vectorized density of many points)."""
        _run_pending_check(self)
        if self.dask:
            return self.effective(self.X.compute())
        return self.effective(self.X)


def _as_rows(X: Any) -> _Rows:
    """A :class:`_Rows` for an array-like, a memmap, a Dask array or a :class:`_Rows` (returned as is)."""
    if isinstance(X, _Rows):
        return X
    if _is_dask(X):
        return _Rows(X)
    return _Rows(np.asarray(X))


#: How a curator finds the rows a refusal is about: the messages of a fit name no row, value or
#: count of the data (they would be statistics of it); this explicitly non-private diagnostic does.
FIND_ROWS = "pdpkit.check.check_nonprivate (or `pdpkit check` on a CSV) names the rows, for the curator only"


def row_beyond_bound_message(name: str, R: float) -> str:
    """The refusal of a row beyond ``norm_bound``: the same text whichever rows, and however many, are beyond."""
    return (f"{name} has a row whose Euclidean norm exceeds norm_bound={R:g}; the guarantee needs every row inside "
            f"the ball: rescale the features from public bounds, raise norm_bound, or pass row_norm='clip'; "
            f"{FIND_ROWS}")


#: The row checks of no rows: (finite, largest squared norm, its row), (first row beyond, its norm, count).
_NO_ROW_CHECKS = ((True, -1.0, -1), (-1, 0.0, 0))


def _norm_stats(Xe: np.ndarray, sq: np.ndarray, off: int) -> tuple:
    """(all finite, largest squared row norm, its row) of a non-empty block from its squared row norms ``sq``."""
    finite = bool(np.isfinite(sq).all()) or bool(np.isfinite(Xe).all())
    i = int(np.argmax(sq)) if finite else 0
    return (finite, float(sq[i]), off + i)


def _k_row_checks(Xe: np.ndarray, yc: Any, off: int, limit: float | None, p: int) -> tuple:
    """(the fitted rows' check, :func:`_k_check`'s; the raw rows beyond ``limit``: first, its norm, how many).

    ``Xe`` are the fitted rows, whose first ``p`` columns are the raw row (an intercept column
    follows when there is one); ``limit`` None: no bound to check (clipped rows).
    """
    if Xe.shape[0] == 0:
        return _NO_ROW_CHECKS
    sq = np.einsum("ij,ij->i", Xe, Xe)
    over = (-1, 0.0, 0)
    if limit is not None:
        raw_sq = sq if Xe.shape[1] == p else np.einsum("ij,ij->i", Xe[:, :p], Xe[:, :p])
        norms = np.sqrt(raw_sq)
        bad = norms > limit
        if np.any(bad):
            j = int(np.argmax(bad))
            over = (off + j, float(norms[j]), int(np.count_nonzero(bad)))
    return (_norm_stats(Xe, sq, off), over)


def _comb_over(a: tuple, b: tuple) -> tuple:
    first = a if a[0] >= 0 and (b[0] < 0 or a[0] < b[0]) else b
    return (first[0], first[1], a[2] + b[2])


def _comb_row_checks(a: tuple, b: tuple) -> tuple:
    return (_comb_check(a[0], b[0]), _comb_over(a[1], b[1]))


def _add_row_checks(acc: tuple | None, Xe: np.ndarray, off: int, check: tuple) -> tuple:
    """``acc`` combined with the row checks of one more block (``check = (limit, p)``)."""
    part = _k_row_checks(Xe, None, off, *check)
    return part if acc is None else _comb_row_checks(acc, part)


def _settle_row_checks(rows: _Rows, res: tuple | None) -> None:
    """Raise for a row map's failed deferred checks (a row beyond its bound, a non-finite value); else keep them."""
    _limit, name, R = rows.pending_check
    rows.pending_check = None
    stats, (i, _norm, _count) = _NO_ROW_CHECKS if res is None else res
    if i >= 0:
        raise ValueError(row_beyond_bound_message(name, R))
    if not stats[0]:
        raise ValueError(f"{name} must be finite (no NaN or inf); {FIND_ROWS}")
    rows._x_checked = stats


def _run_pending_check(rows: _Rows) -> None:
    """A row map's deferred checks (``rows.pending_check``) in a pass of their own."""
    pend = getattr(rows, "pending_check", None)
    if pend is None:
        return
    rows.pending_check = None  # the pass below must not run it again
    try:
        res = _map_reduce(rows, None, _k_row_checks, (pend[0], rows.p), combine=_comb_row_checks)
    finally:
        rows.pending_check = pend
    _settle_row_checks(rows, res)


def _sum_parts(a: Any, b: Any) -> Any:
    """Elementwise sum of two kernel results (tuples of arrays, floats or None)."""
    if isinstance(a, tuple):
        return tuple(_sum_parts(u, v) for u, v in zip(a, b, strict=True))
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _apply_blocks(meta: _Rows, Xc: Any, yc: Any, off: int, kernel: Any, args: tuple, combine: Any) -> Any:
    """A kernel over one (possibly large) block, in sub-blocks of ``meta.block_rows`` rows."""
    Xc = np.asarray(Xc)
    k = meta.block_rows
    acc = None
    buf = meta.block_buffer()
    for s in range(0, max(Xc.shape[0], 1), k):
        part = kernel(meta.effective(Xc[s:s + k], buf), None if yc is None else np.asarray(yc[s:s + k]), off + s,
                      *args)
        acc = part if acc is None else combine(acc, part)
    return acc


def _map_reduce(rows: _Rows, y: Any, kernel: Any, args: tuple = (), combine: Any = _sum_parts) -> Any:
    """``combine`` over blocks of ``kernel(block, y_block, offset, *args)``: one pass over the rows.

    numpy and memmap: sequential blocks in this process. Dask: one task per chunk of rows on
    the workers, then a binary tree of ``combine`` (only the kernels' small results travel).
    """
    if getattr(rows, "pending_check", None) is not None:
        _run_pending_check(rows)
    _ROWS_READ[0] += rows.n
    if rows.dask:
        return _dask_map_reduce(rows, y, kernel, args, combine)
    X = rows.X
    if rows.n == 0:
        return kernel(rows.effective(X[:0]), None if y is None else y[:0], 0, *args)
    acc = None
    k = rows.block_rows
    buf = rows.block_buffer()
    for s in range(0, rows.n, k):
        part = kernel(rows.effective(X[s:s + k], buf), None if y is None else y[s:s + k], s, *args)
        acc = part if acc is None else combine(acc, part)
    return acc


def _dask_blocks(rows: _Rows, y: Any) -> tuple[list, list, list]:
    X = rows.X
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    # unoptimized graphs: X and y cut from one array (a table's columns) then share the task that
    # makes each block (optimized, each would fuse its own copy and make or read every block twice)
    xb = list(X.to_delayed(optimize_graph=False).ravel())
    sizes = X.chunks[0]
    offs = [int(v) for v in np.cumsum((0,) + tuple(sizes))[:-1]]
    if y is None:
        yb = [None] * len(xb)
    elif _is_dask(y):
        yb = list(y.rechunk((sizes,)).to_delayed(optimize_graph=False).ravel())
    else:
        yb = [y[o:o + c] for o, c in zip(offs, sizes, strict=True)]
    return xb, yb, offs


def _dask_map_reduce(rows: _Rows, y: Any, kernel: Any, args: tuple, combine: Any) -> Any:
    import dask

    xb, yb, offs = _dask_blocks(rows, y)
    meta = rows.meta()
    parts = [dask.delayed(_apply_blocks, pure=True)(meta, b, c, o, kernel, args, combine)
             for b, c, o in zip(xb, yb, offs, strict=True)]
    while len(parts) > 1:
        parts = [dask.delayed(combine, pure=True)(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return dask.compute(parts[0])[0]


def _map_rows(rows: _Rows, y: Any, kernel: Any, args: tuple = (), ncols: int = 1) -> np.ndarray:
    """Per-row outputs ``kernel(block, y_block, offset, *args)`` (shape (k,) or (k, ncols)) for every row.

    numpy: filled block by block into the result (n or n x ncols floats). Dask: ``map_blocks``
    on the workers, the per-row results gathered into this process.
    """
    _ROWS_READ[0] += rows.n
    shape = (rows.n,) if ncols == 1 else (rows.n, ncols)
    pend = getattr(rows, "pending_check", None)  # a row map's deferred checks, made in this pass
    check = None if pend is None else (pend[0], rows.p)
    if rows.dask:
        import dask

        xb, yb, offs = _dask_blocks(rows, y)
        meta = rows.meta()
        parts = [dask.delayed(_apply_rows, pure=True)(meta, b, c, o, kernel, args, check)
                 for b, c, o in zip(xb, yb, offs, strict=True)]
        res = dask.compute(*parts)
        if check is not None:
            res, checks = [r[0] for r in res], [r[1] for r in res]
            _settle_row_checks(rows, functools.reduce(_comb_row_checks, checks))
        return np.concatenate(res) if res else np.empty(shape)
    out = np.empty(shape)
    k = rows.block_rows
    acc = None
    buf = rows.block_buffer()
    for s in range(0, rows.n, k):
        Xe = rows.effective(rows.X[s:s + k], buf)
        out[s:s + k] = kernel(Xe, None if y is None else y[s:s + k], s, *args)
        if check is not None:
            acc = _add_row_checks(acc, Xe, s, check)
    if check is not None:
        _settle_row_checks(rows, acc)  # raises before anything computed in this pass leaves it
    return out


def _apply_rows(meta: _Rows, Xc: Any, yc: Any, off: int, kernel: Any, args: tuple, check: tuple | None = None) -> Any:
    Xc = np.asarray(Xc)
    k = meta.block_rows
    outs, acc = [], None
    buf = meta.block_buffer()
    for s in range(0, Xc.shape[0], k):
        Xe = meta.effective(Xc[s:s + k], buf)
        outs.append(kernel(Xe, None if yc is None else np.asarray(yc[s:s + k]), off + s, *args))
        if check is not None:
            acc = _add_row_checks(acc, Xe, off + s, check)
    arr = np.concatenate(outs) if outs else np.empty(0)
    return arr if check is None else (arr, _NO_ROW_CHECKS if acc is None else acc)


def _spool_chunks(chunks: Any, *, directory: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Rows from an iterable of ``(X_chunk, y_chunk)`` pairs as a read-only memmap and a label array.

    For a reader that streams a file in chunks (the command line's CSV reader): one pass over
    the chunks, memory O(chunk + n) (the labels), the features written to an unlinked
    temporary file in ``directory`` (default: the system's) and mapped back, so the fit and
    the report read them by blocks without holding them. All chunks must have the same
    number of columns; ``ValueError`` otherwise, naming the chunk.
    """
    import os
    import tempfile

    fd, path = tempfile.mkstemp(prefix="pdpkit-rows-", suffix=".f8", dir=directory)
    ys: list[np.ndarray] = []
    n = 0
    d = None
    try:
        with os.fdopen(fd, "wb") as fh:
            for i, (Xc, yc) in enumerate(chunks):
                Xc = np.ascontiguousarray(Xc, dtype=np.float64)
                yc = np.asarray(yc).ravel()
                if Xc.ndim != 2 or (d is not None and Xc.shape[1] != d) or yc.shape[0] != Xc.shape[0]:
                    raise ValueError(f"chunk {i} has shape {Xc.shape} with {yc.shape[0]} labels; every chunk "
                                     f"needs the same columns ({d}) and one label per row")
                d = Xc.shape[1]
                fh.write(Xc.tobytes())
                ys.append(yc)
                n += Xc.shape[0]
        if d is None or n == 0:
            raise ValueError("chunks must hold at least one row")
        X = np.memmap(path, dtype=np.float64, mode="r", shape=(n, d))
    finally:
        os.unlink(path)  # the mapping keeps the data; nothing is left behind
    return X, np.concatenate(ys)


# ------------------------------------------------------------ data checks, by blocks
def _k_check(Xe: np.ndarray, yc: Any, off: int, loss: Any, yname: str, side: tuple | None = None) -> tuple:
    """(all finite, largest squared row norm, its row) of a block; the block's labels are checked.

    ``side = (kernel, out)`` (rows in memory or on disk): ``out[off:off + k] = kernel(Xe, yc, off)``
    in the same read of the block (a per-row quantity another step needs, e.g. matching keys).
    """
    if yc is not None and loss is not None:
        loss.check_labels(yc, yname)
    if side is not None:
        side[1][off:off + Xe.shape[0]] = side[0](Xe, yc, off)
    if Xe.shape[0] == 0:
        return _NO_ROW_CHECKS[0]
    return _norm_stats(Xe, np.einsum("ij,ij->i", Xe, Xe), off)


def _comb_check(a: tuple, b: tuple) -> tuple:
    best = a if a[1] >= b[1] else b
    return (a[0] and b[0], best[1], best[2])


def _label_error(yc: np.ndarray, loss: GLMLoss, yname: str) -> list:
    """[the message of ``loss.check_labels`` on a block of labels], or [] when they are valid."""
    try:
        loss.check_labels(np.asarray(yc), yname)
    except ValueError as exc:
        return [str(exc)]
    return []


def _check_dask_labels(y: Any, loss: GLMLoss, yname: str) -> None:
    """The loss's label check on a Dask array, block by block on the workers (reads only the labels)."""
    import dask

    errors = dask.compute(*[dask.delayed(_label_error, pure=True)(b, loss, yname)
                            for b in y.to_delayed(optimize_graph=False).ravel()])
    for e in errors:
        if e:
            raise ValueError(e[0])


def _check_rows(X: Any, y: Any, loss: GLMLoss | None, *, xname: str = "X", yname: str = "y",
                side: tuple | None = None) -> tuple[_Rows, Any, tuple]:
    """Rows and labels checked in one pass: finite, labels in the loss's domain, the largest row norm.

    ``X`` may be array-like, a memmap, a Dask array or a :class:`_Rows`; ``y`` stays a Dask
    array when it is one. Returns (rows, y, (finite, largest squared norm, its row)).
    """
    if isinstance(X, _Rows):
        rows = X
    elif _is_dask(X):
        if X.ndim != 2:
            raise ValueError(f"{xname} must have 2 dimension(s); got shape {X.shape}")
        if X.dtype.kind not in "fiub":
            raise TypeError(f"{xname} must be numeric (array-like of floats); got {X.dtype}")
        rows = _Rows(X)
    else:
        try:
            raw = np.asarray(X)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{xname} must be numeric (array-like of floats); got {type(X).__name__}") from exc
        if raw.dtype.kind not in "fiub":
            raw = as_finite_array(raw, xname)  # raises for text; converts objects
        if raw.ndim != 2:
            raise ValueError(f"{xname} must have 2 dimension(s); got shape {raw.shape}")
        rows = _Rows(raw)
    if _is_dask(y):
        if y.ndim != 1:
            raise ValueError(f"{yname} must be one-dimensional; got shape {y.shape}")
        y_arr = y
    else:
        y_arr = np.asarray(y)
        if y_arr.ndim != 1:
            raise ValueError(f"{yname} must be one-dimensional; got shape {y_arr.shape}")
    if y_arr.shape[0] != rows.n:
        raise ValueError(f"{yname} must have one label per row of {xname}: {xname} has {rows.n} rows, "
                         f"{yname} has {y_arr.shape[0]}")
    if not _is_dask(y_arr) and loss is not None:
        y_arr = loss.check_labels(y_arr, yname)
        lab_loss = None
    else:
        lab_loss = loss
    if rows.p == 0:
        raise ValueError(f"{xname} must have at least one column")
    # a row map built for one fit (an estimator's, used by its solver and then by its report)
    # is checked once with the same labels: the second check would read X again for the same answer
    _run_pending_check(rows)  # a row map's own checks first (one pass), then reused below
    # (the labels object itself is kept, not its id: an id can be reused once an object is freed)
    lname = None if loss is None else loss.name
    done = getattr(rows, "_checked", None)
    if side is None and done is not None and done[0] is y and done[1] == lname:
        return rows, y_arr, done[2]
    x_checked = getattr(rows, "_x_checked", None)  # the rows' own checks, made when the map was built
    if side is None and x_checked is not None:
        stats = x_checked
        if lab_loss is not None:
            _check_dask_labels(y_arr, lab_loss, yname)
    else:
        stats = _map_reduce(rows, y_arr if (lab_loss is not None or side is not None) else None, _k_check,
                            (lab_loss, yname, side), combine=_comb_check)
    if not stats[0]:
        raise ValueError(f"{xname} must be finite (no NaN or inf)")
    if isinstance(X, _Rows):
        X._checked = (y, lname, stats)
    return rows, y_arr, stats


def _check_data(X: Any, y: Any, loss: GLMLoss, *, xname: str = "X", yname: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """X as a finite float64 (n, d) array and y checked by the loss (for the in-memory analyses)."""
    X = as_finite_array(X, xname, ndim=2)
    y_arr = np.asarray(y)
    if y_arr.ndim != 1:
        raise ValueError(f"{yname} must be one-dimensional; got shape {y_arr.shape}")
    if y_arr.shape[0] != X.shape[0]:
        raise ValueError(f"{yname} must have one label per row of {xname}: {xname} has {X.shape[0]} rows, {yname} has {y_arr.shape[0]}")
    y_arr = loss.check_labels(y_arr, yname)
    if X.shape[1] == 0:
        raise ValueError(f"{xname} must have at least one column")
    return X, y_arr


def _check_norm_bound(X: Any, norm_bound: Any, xname: str = "X", stats: tuple | None = None) -> float:
    R = float(check_positive(norm_bound, "norm_bound"))
    rows = _as_rows(X)
    if rows.n:
        if stats is None:
            stats = _map_reduce(rows, None, _k_check, (None, "y"), combine=_comb_check)
        worst = float(np.sqrt(stats[1]))
        if worst > R * (1.0 + 1e-12):
            raise ValueError(row_beyond_bound_message(xname, R))
    return R


def _check_general_targets(target_grad: Any, target_hessian: Any, d: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """Per-target gradients (m, d) and symmetric Hessians (m, d, d) of a smooth non-GLM loss.

    A single target may be given as (d,) and (d, d); the third value says so. ``ValueError``
    names the parameter for a bad shape or an asymmetric Hessian.
    """
    g = as_finite_array(target_grad, "target_grad")
    G = as_finite_array(target_hessian, "target_hessian")
    scalar = g.ndim == 1
    if scalar:
        g = g[None, :]
        if G.ndim == 2:
            G = G[None]
    if g.ndim != 2 or g.shape[1] != d:
        raise ValueError(f"target_grad must have shape (m, {d}) or ({d},); got {np.shape(target_grad)}")
    m = g.shape[0]
    if G.shape != (m, d, d):
        raise ValueError(f"target_hessian must have shape ({m}, {d}, {d}); got {np.shape(target_hessian)}")
    scale = 1.0 + (float(np.max(np.abs(G))) if G.size else 0.0)
    if np.max(np.abs(G - np.swapaxes(G, -1, -2)), initial=0.0) > 1e-10 * scale:
        raise ValueError("target_hessian must be symmetric")
    return g, G, scalar


def _check_loss(loss: Any) -> GLMLoss:
    try:
        return get_loss(loss)
    except (TypeError, ValueError) as exc:
        raise type(exc)(str(exc)) from None


_HESS_BLOCK = 2048  # rows per SYRK block: the scaled block stays in cache


def _hessian(X: np.ndarray, w: np.ndarray, lam: float, scale: float = 1.0) -> np.ndarray:
    """Upper triangle of scale * X^T diag(w) X + lam I (w >= 0): blocked SYRK, no n-by-d temporary."""
    n, d = X.shape
    H = np.zeros((d, d), order="F")
    if n:
        sw = np.sqrt(w * scale)
        buf = np.empty((min(_HESS_BLOCK, n), d))
        for s in range(0, n, _HESS_BLOCK):
            Xc = X[s:s + _HESS_BLOCK]
            Bc = buf[:Xc.shape[0]]
            np.multiply(Xc, sw[s:s + _HESS_BLOCK, None], out=Bc)
            # Bc.T is F-contiguous (d, k): SYRK accumulates Bc.T @ Bc without a transposed copy.
            H = dsyrk(1.0, Bc.T, beta=1.0, c=H, trans=0, lower=0, overwrite_c=1)
    H[np.diag_indices(d)] += lam
    return H


def _objective(loss: GLMLoss, z: np.ndarray, y: np.ndarray, theta: np.ndarray, lam: float, b: np.ndarray,
               weight: float = 1.0) -> tuple[float, float]:
    """Objective value and the sum of the magnitudes of its terms (its rounding scale)."""
    vals = weight * float(np.sum(loss._value(z, y)))
    reg = 0.5 * lam * float(theta @ theta)
    lin = float(b @ theta)
    F = vals + reg + lin
    scale = abs(vals) + abs(reg) + abs(lin) + 1.0  # the losses are >= 0
    return F, scale


def _chol_lower(H_upper: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor from an (upper-triangle-valid) SPD matrix."""
    U = sla.cholesky(H_upper, lower=False, check_finite=False)
    return np.ascontiguousarray(U.T)


class _NoConvergence(RuntimeError):
    """The solver stopped above its tolerance; ``theta``: its last iterate when it ran out of iterations."""

    def __init__(self, message: str, theta: np.ndarray | None = None) -> None:
        super().__init__(message)
        self.theta = theta


#: Iterations of the fast Newton phase (warm start, sub-sampled Hessians, chord steps, inexact
#: conjugate gradients) before :func:`_solve` continues with plain damped Newton, whose
#: iteration count is bounded by :func:`_proven_newton_budget`. A fit never fails for lack of
#: iterations: how many it takes depends on the data, whether it succeeds does not.
_FAST_ITER = 200
#: Armijo's constant and the backtracking factor of the line search (Boyd & Vandenberghe's α, β).
_ARMIJO = 1e-4
_BACKTRACK = 0.5
#: Consecutive plain-Newton steps that move the objective by rounding only and bring the
#: gradient no lower than half its smallest norm so far: float64's floor has been reached
#: (the iteration cannot make progress there).
_FLOOR_STEPS = 8


def _proven_newton_budget(F0: float, b: np.ndarray, lam: float, c: float, r_max: float, n: int, beta: float,
                          grad_tol: float) -> int:
    r"""Iterations that provably suffice for plain damped Newton from objective value ``F0`` to reach ``grad_tol``.

    The perturbed objective :math:`F(\theta) = \sum_i f(x_i^\top\theta; y_i) + \frac\lambda2\|\theta\|^2
    + b^\top\theta` of a loss with :math:`|f'''| \le c f''` (quasi-self-concordance, Asi, Duchi &
    Talwar, §2.1) on rows of norm at most :math:`r` is self-concordant with constant
    :math:`M = c r/\sqrt\lambda`: :math:`|D^3F[u,u,u]| \le c\,r\|u\|\,u^\top\nabla^2F u \le
    M (u^\top\nabla^2 F u)^{3/2}`, as :math:`\nabla^2F \succeq \lambda I`. So :math:`(M^2/4) F` is
    standard self-concordant, and Newton's method with a backtracking line search (Armijo
    constant :math:`\alpha`, factor :math:`\beta_{\rm bt}`) needs at most
    :math:`(M^2/4)(F_0 - F^*)/\gamma + \log_2\log_2(4/\epsilon)` iterations,
    :math:`\gamma = \alpha\beta_{\rm bt}\eta^2/(1+\eta)`, :math:`\eta = (1-2\alpha)/4` (Boyd &
    Vandenberghe 2004, §9.6.4; the Newton step and Armijo's test are invariant under scaling
    :math:`F`), to bring the scaled Newton decrement's square below :math:`\epsilon`. With
    :math:`f \ge 0` (every pdpkit loss), :math:`F^* \ge -\|b\|^2/(2\lambda)`. The gradient's norm
    is at most :math:`\sqrt{\lambda_{\max}(\nabla^2F)}` times the unscaled decrement, and
    :math:`\lambda_{\max} \le n\beta r^2 + \lambda`, which fixes :math:`\epsilon` for ``grad_tol``.
    The result is doubled and padded (a margin for floating point): a proof that the iteration
    ends, far above the iterations a fit takes, never a limit a fit meets.
    """
    if not (math.isfinite(c) and c >= 0 and math.isfinite(F0)):
        return 1 << 62
    M2 = (c * r_max) ** 2 / lam
    eta = (1.0 - 2.0 * _ARMIJO) / 4.0
    gamma = _ARMIJO * _BACKTRACK * eta * eta / (1.0 + eta)
    gap = max(F0 + float(b @ b) / (2.0 * lam), 0.0)
    damped = 0.25 * M2 * gap / gamma
    lam_max = n * beta * r_max * r_max + lam
    eps = 0.25 * M2 * grad_tol * grad_tol / lam_max
    quad = math.log2(max(math.log2(4.0 / eps), 1.0)) if 0.0 < eps < 4.0 else 0.0
    total = 2.0 * (damped + quad) + 16.0
    return int(min(total, float(1 << 62)))


# ------------------------------------------------------------ one pass: value, gradient, Hessian
def _margins(Xe: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Xe @ T for a few columns, one matrix-vector product each (BLAS's GEMM is slow on two columns)."""
    Z = np.empty((Xe.shape[0], T.shape[1]), order="F")
    for j in range(T.shape[1]):
        np.dot(Xe, T[:, j], out=Z[:, j])
    return Z


def _k_eval(Xe: np.ndarray, yc: Any, off: int, loss: GLMLoss, T: np.ndarray, want_h: bool,
            curv_out: np.ndarray | None = None) -> tuple:
    """(sum of f, X^T f', upper triangle of X^T diag(f'') X or None, max |X p|) at theta = T[:, 0], p = T[:, 1].

    ``curv_out`` (in-memory rows only): a pair of (n,) arrays that receive the block's f'' (unless None) and
    margins at ``off``; or (f'', margins, squared row norms, margins along ``v``, ``v``).
    """
    d = Xe.shape[1]
    if Xe.shape[0] == 0:
        return (0.0, np.zeros(d), np.zeros((d, d), order="F") if want_h else None, 0.0)
    Z = _margins(Xe, T)
    z = Z[:, 0]
    fs, d1, d2 = loss._sum_d1_d2(z, yc)
    if curv_out is not None:
        if curv_out[0] is not None:
            curv_out[0][off:off + Xe.shape[0]] = d2
        curv_out[1][off:off + Xe.shape[0]] = z
        if len(curv_out) > 2:  # and the squared row norms and margins along a fixed vector
            curv_out[2][off:off + Xe.shape[0]] = np.einsum("ij,ij->i", Xe, Xe)
            np.dot(Xe, curv_out[4], out=curv_out[3][off:off + Xe.shape[0]])
    g = Xe.T @ d1
    H = None
    if want_h:
        B = np.multiply(Xe, np.sqrt(d2)[:, None], out=_scratch(Xe.shape, 1, "hessian")[0])
        # B.T is F-contiguous (d, k): SYRK forms B.T @ B without a transposed copy
        H = dsyrk(1.0, B.T, trans=0, lower=0)
    mv = float(np.max(np.abs(Z[:, 1]))) if T.shape[1] > 1 else 0.0
    return (fs, g, H, mv)


def _k_eval_moved(Xe: np.ndarray, yc: Any, off: int, loss: GLMLoss, z0: np.ndarray, zp: np.ndarray, step: float,
                  curv_out: tuple) -> tuple:
    """:func:`_k_eval` at theta + step p from known margins: z = z0 + step zp (X theta and X p of every row, cached).

    One read of the block (X^T f'), no margins formed; the block's f'' and margins go to ``curv_out``.
    """
    k = Xe.shape[0]
    if k == 0:
        return (0.0, np.zeros(Xe.shape[1]), None, 0.0)
    sl = slice(off, off + k)
    z = curv_out[1][sl]
    np.multiply(zp[sl], step, out=z)
    z += z0[sl]
    fs, d1, d2 = loss._sum_d1_d2(z, yc)
    curv_out[0][sl] = d2
    return (fs, Xe.T @ d1, None, 0.0)


def _comb_eval(a: tuple, b: tuple) -> tuple:
    return (a[0] + b[0], a[1] + b[1], _sum_parts(a[2], b[2]), max(a[3], b[3]))


def _evaluate(rows: _Rows, y: Any, loss: GLMLoss, theta: np.ndarray, lam: float, b: np.ndarray, weight: float,
              want_h: bool, p: np.ndarray | None = None, curv_out: np.ndarray | None = None,
              moved: tuple | None = None) -> tuple:
    r"""One pass at ``theta``: objective, its rounding scale, gradient, Hessian (upper, or None), max :math:`|x_i^\top p|`.

    ``curv_out``: a pair of (n,) arrays that receive every row's :math:`f''` and margin (in-memory rows only).
    ``moved = (z0, zp, step)``: ``theta`` is a point whose margins are ``z0 + step zp`` (known, in
    memory): the pass reads X once for the gradient and forms no margins (no Hessian, ``p`` ignored).
    """
    if moved is not None:
        fs, gd, Hu, mv = _map_reduce(rows, y, _k_eval_moved, (loss, *moved, curv_out), combine=_comb_eval)
    else:
        T = theta[:, None] if p is None else np.column_stack([theta, p])
        fs, gd, Hu, mv = _map_reduce(rows, y, _k_eval, (loss, T, bool(want_h), curv_out), combine=_comb_eval)
    vals = weight * fs
    reg = 0.5 * lam * float(theta @ theta)
    lin = float(b @ theta)
    F = vals + reg + lin
    Fscale = abs(vals) + abs(reg) + abs(lin) + 1.0  # the losses are >= 0
    g = weight * gd + lam * theta + b
    H = None
    if want_h:
        H = np.asfortranarray(Hu * weight if weight != 1.0 else Hu)
        H[np.diag_indices(theta.shape[0])] += lam
    return F, Fscale, g, H, mv


def _hessian_rows(rows: _Rows, y: Any, loss: GLMLoss, theta: np.ndarray, lam: float, weight: float = 1.0) -> np.ndarray:
    """Upper triangle of weight * X^T diag(f''(X theta)) X + lam I, by blocks (one pass)."""
    return _evaluate(rows, y, loss, theta, lam, np.zeros_like(theta), weight, True)[3]


def _k_hv(Xe: np.ndarray, yc: Any, off: int, loss: GLMLoss, T: np.ndarray, curv: np.ndarray | None = None,
          u_out: np.ndarray | None = None) -> np.ndarray:
    """X^T diag(f''(X theta)) X v for T = [theta, v]: one read of the block (f'' read from ``curv`` when given).

    ``u_out`` (with ``curv``): an (n,) array that receives the block's margins along v, X v.
    """
    if Xe.shape[0] == 0:
        return np.zeros(Xe.shape[1])
    if curv is not None:
        k = Xe.shape[0]
        if u_out is not None:
            u = np.dot(Xe, T[:, 1], out=u_out[off:off + k])
        else:
            u = Xe @ T[:, 1]
        return Xe.T @ (curv[off:off + k] * u)
    Z = _margins(Xe, T)
    d2 = loss._d1_d2(Z[:, 0], yc)[1]
    return Xe.T @ (d2 * Z[:, 1])


# Large-n shortcuts (see _newton): about 1/_SUB_FRACTION of the rows is used for a warm
# start and for far-region Hessians when it still has >= _SUB_MIN_ROWS_PER_DIM * d rows.
_SUB_FRACTION = 16
_SUB_MIN_ROWS_PER_DIM = 10
_WARM_CG_ROWS_PER_DIM = 10
_MOVED_MIN = 1e3     # Newton-CG forms the margins afresh once the gradient is below this times the tolerance
_SUB_SWITCH = 0.5    # leave the sub-sampled-Hessian phase once c * t * max|x_i^T p| < this
_CHORD_DRIFT = 0.05  # keep a factorization while the margins have moved by less than this / c


def _newton_rows(rows, y, loss, lam, b, grad_tol, max_iter, method, *, weight=1.0, theta0=None, warm_move=None,
                 certify_tol=None, cert_out=None, g_ref=None, g_ref_out=None, plain=False, r_max=None):
    r"""Damped Newton with backtracking (Armijo) on :math:`w\sum_i f(x_i^\top\theta; y_i) + \frac\lambda2\|\theta\|^2 + b^\top\theta`.

    Every evaluation is one pass over the rows (:func:`_evaluate`: objective, gradient and,
    when asked, the Hessian, by blocks); nothing of size n is kept between passes.
    ``method="newton"``: each step solves the Newton system with a Cholesky factorization.
    Three cost-saving rules leave the fixed point and the stopping test (the float64 gradient
    on all the data) untouched:

    * for large :math:`n` the iteration is warm-started at the minimizer of the same objective
      on about a sixteenth of the rows (loss weighted accordingly), itself computed this way;
    * far from the minimizer (while a step moves some margin :math:`x_i^\top\theta` by more
      than :math:`0.5/c`, :math:`c` the loss's self-concordance constant) the Hessian is
      estimated on that sixteenth: there the step is limited by the nonlinearity, not by the
      Hessian's accuracy. A damped step or a poor gradient reduction switches to the exact
      Hessian for good;
    * near the minimizer a factorization is reused while the margins have moved by less than
      :math:`0.05/c` since it was computed (the Hessian has then changed by less than about 5%,
      by quasi-self-concordance, Asi, Duchi & Talwar, Lemma 2.1 (i)). While steps keep
      asking for a new Hessian, it is formed in the same pass as the trial point's gradient.

    ``method="newton-cg"``: truncated conjugate gradients with exact Hessian-vector products
    (one pass each), their forcing terms relative to ``g_ref`` (by default the first gradient's
    norm; a warm start reports the first gradient of its own problem through ``g_ref_out``).
    With ``warm_move`` set (warm-start use), the iteration stops as soon as a
    full step moves no margin by more than ``warm_move / c``, instead of at ``grad_tol``.

    With ``certify_tol`` (and ``weight`` 1), a Newton-CG step that is predicted to be the last
    and that the line search accepts whatever the objective's value is evaluated by
    :func:`_certified_gradient` instead of a plain pass; when it certifies ``certify_tol``, the
    iteration ends there and ``(g, err)`` is appended to ``cert_out`` (one pass saved).

    ``plain=True``: damped Newton as :func:`_proven_newton_budget` analyses it — an exact
    Hessian (or conjugate gradients run to a residual of 1e-10 of the gradient) at every
    step, no warm start, no sub-sampled Hessian, no reused factorization. ``max_iter=None``
    (plain only): the proven budget from the first objective value (``r_max``: the rows'
    largest norm). Running out of iterations raises ``_NoConvergence`` carrying the last iterate.
    """
    n, d = rows.shape
    c = loss.self_concordance if math.isfinite(loss.self_concordance) else math.inf
    m_sub = n // _SUB_FRACTION
    use_sub = method == "newton" and m_sub >= _SUB_MIN_ROWS_PER_DIM * d and 0 < c < math.inf and not plain
    # Newton-CG is warm-started the same way (no sub-sampled Hessians: its products are exact)
    warm = use_sub or (method == "newton-cg" and m_sub >= _WARM_CG_ROWS_PER_DIM * d and 0 < c < math.inf
                       and warm_move is None and not plain)
    if use_sub or warm:
        rows_sub, sl = rows.head_or_every(_SUB_FRACTION)
        y_sub = y[sl]
        w_sub = weight * n / rows_sub.n
    if theta0 is None and warm:
        try:
            ref: list = []
            theta0 = _newton_rows(rows_sub, y_sub, loss, lam, b, 0.0, 50, method, weight=w_sub,
                                  warm_move=_CHORD_DRIFT, g_ref_out=ref)[0]
            if g_ref is None and ref:
                g_ref = ref[0]
        except _NoConvergence:  # pragma: no cover - a warm start is optional
            theta0 = None
    theta = np.zeros(d) if theta0 is None else np.array(theta0, dtype=np.float64)
    # in-memory rows keep every row's f'' and margin of the last evaluation: a Hessian-vector product
    # then reads X twice in cache instead of forming the margins again, and the preconditioner is
    # built from them (a few vectors of n floats, 1/d of X each)
    curv = (np.empty(n), np.empty(n)) if (method == "newton-cg" and not rows.dask) else None
    # and the margins of each step, X p, from the conjugate-gradient products' own X s: the next
    # evaluation then reads X once (X^T f') instead of forming X theta again (two more (n,) arrays)
    inc = (np.empty(n), np.empty(n)) if curv is not None else None
    defl = None
    stats = None
    if curv is not None and d > 2 and n >= 2 * d:
        # The preconditioner's statistics (the mean row, squared row norms, margins along the mean
        # row) only steer conjugate gradients: a sixteenth of the rows estimates them well enough
        # (computed here, 1/16 of a pass); on fewer rows, all rows, in the first evaluation.
        if m_sub >= max(d, 256):
            rows_s, sl_s = (rows_sub, sl) if warm else rows.head_or_every(_SUB_FRACTION)
            xbar = _map_reduce(rows_s, None, _k_colsum) / rows_s.n
            rs = _map_rows(rows_s, None, _k_row_stats, (xbar,), ncols=2)
            defl = (xbar, (rs[:, 0], rs[:, 1]), sl_s, n / rows_s.n)
        else:
            xbar = _map_reduce(rows, None, _k_colsum) / n
            stats = (np.empty(n), np.empty(n), xbar)  # filled by the first evaluation
            defl = (xbar, stats[:2], slice(None), 1.0)
    forced = method == "newton" and not use_sub  # form the Hessian with the next evaluation
    F, Fscale, g, H, _ = _evaluate(rows, y, loss, theta, lam, b, weight, forced,
                                   curv_out=None if curv is None else curv + (stats or ()))
    gnorm = float(np.linalg.norm(g))
    # the forcing terms of Newton-CG are relative to the first gradient (of the warm start's problem, when there is one)
    g_ref = max(gnorm if g_ref is None else max(g_ref, gnorm), 1e-300)
    if g_ref_out is not None:
        g_ref_out.append(g_ref)
    if max_iter is None:
        if not plain:  # pragma: no cover - a guard: only plain Newton has a proven budget
            raise ValueError("max_iter=None needs plain=True")
        max_iter = _proven_newton_budget(F, b, lam, c, float(r_max), n, loss.smoothness, grad_tol)
    n_iter = 0
    floor_steps = 0
    g_best = gnorm  # the smallest gradient norm so far (plain Newton's floor test)
    sub = use_sub
    factor = None
    drift = math.inf
    k_nl = math.inf  # the Newton-CG step's nonlinear remainder over |g|^2, not known yet
    last = False
    while gnorm > grad_tol:
        if n_iter >= max_iter:
            raise _NoConvergence(
                f"the solver did not reach its gradient tolerance in max_iter={max_iter} Newton iterations; "
                "increase max_iter, lam or grad_tol", theta=theta)
        n_iter += 1
        if method == "newton":
            if sub:
                factor = sla.cho_factor(_hessian_rows(rows_sub, y_sub, loss, theta, lam, w_sub), lower=False,
                                        check_finite=False)
                drift = math.inf  # a sub-sampled Hessian: refactor next time
            elif H is not None or factor is None or drift > _CHORD_DRIFT:
                if H is None:
                    H = _hessian_rows(rows, y, loss, theta, lam, weight)
                try:
                    factor = sla.cho_factor(H, lower=False, check_finite=False)
                except np.linalg.LinAlgError:  # pragma: no cover - H >= lam I in exact arithmetic
                    raise _NoConvergence("the Hessian lost positive definiteness in floating point; "
                                         "increase lam") from None
                drift = 0.0  # an exact Hessian; otherwise reuse the factorization (chord step)
            p = -sla.cho_solve(factor, g, check_finite=False)
        else:
            precond = None if defl is None else _Deflation(theta, defl[0], (curv[0][defl[2]], curv[1][defl[2]]),
                                                           defl[1], weight * defl[3], lam)
            # Never solve the Newton system more accurately than the step's nonlinear remainder
            # (about k_nl |g|^2, k_nl measured on the previous steps); when that remainder is
            # predicted below a quarter of the tolerance, solve to half of it and finish in this step.
            forcing = min(_FORCING_MAX, math.sqrt(gnorm / g_ref)) * gnorm
            remainder = k_nl * gnorm * gnorm
            last = grad_tol > 0 and remainder <= 0.25 * grad_tol
            if last:
                forcing = 0.5 * grad_tol
            elif remainder < math.inf:
                forcing = max(forcing, remainder)
            if plain:  # Newton's own direction, to the precision float64 gives conjugate gradients
                forcing = min(forcing, 1e-10 * gnorm)
            p, resid = _cg_direction(rows, y, loss, theta, weight, lam, g, g_ref=g_ref, precond=precond,
                                     max_cg=2 * d if plain else None,
                                     curv=None if curv is None else curv[0], forcing=forcing,
                                     zp=None if inc is None else inc[0], u=None if inc is None else inc[1])
        gtp = float(g @ p)
        if not gtp < 0:  # pragma: no cover - p is a descent direction for any SPD model
            p, gtp = -g, -gnorm * gnorm
            factor, drift = None, math.inf
        want_h = forced and method == "newton" and not sub
        # margins moved along the known X p, while the gradient is far above the tolerance (the
        # last steps form X theta afresh: no rounding carried over from earlier steps)
        moved = inc is not None and method == "newton-cg" and gnorm > _MOVED_MIN * grad_tol
        if moved:
            np.copyto(inc[1], curv[1])  # the margins at theta (the work array is free after CG)
            mv_moved = float(np.max(np.abs(inc[0]))) if n else 0.0
        step = 1.0
        while True:
            th_new = theta + step * p
            if (certify_tol is not None and method == "newton-cg" and last and step == 1.0 and weight == 1.0
                    and -gtp <= 64 * _EPS * Fscale):
                g_c, err_c = _certified_gradient(rows, y, loss, lam, b, th_new)
                gnorm_c = float(np.linalg.norm(g_c))
                if gnorm_c + err_c <= certify_tol:
                    cert_out.append((g_c, err_c))
                    return th_new, gnorm_c, n_iter, None
            # max|x_i^T p| steers the chord steps (Newton) and the warm start's stop; Newton-CG skips it
            p_move = p if (method == "newton" or warm_move is not None) else None
            if moved:
                F_new, Fscale_new, g_new, H_new, _ = _evaluate(rows, y, loss, th_new, lam, b, weight, False,
                                                               curv_out=curv, moved=(inc[1], inc[0], step))
                mv = mv_moved
            else:
                F_new, Fscale_new, g_new, H_new, mv = _evaluate(rows, y, loss, th_new, lam, b, weight, want_h,
                                                                p_move, curv_out=curv)
            # Armijo; when the predicted decrease is below the objective's rounding error the
            # comparison is meaningless and the full Newton step is taken.
            if F_new <= F + _ARMIJO * step * gtp or (step == 1.0 and -gtp <= 64 * _EPS * Fscale):
                break
            step *= _BACKTRACK
            if step < 1e-12:
                raise _NoConvergence(
                    "the solver's line search stalled above its gradient tolerance (the tolerance is below "
                    "what float64 resolves for this problem); increase grad_tol or lam")
        at_rounding = abs(F - F_new) <= 64 * _EPS * max(Fscale, Fscale_new)  # F moved by rounding only
        theta, F, Fscale, g, H = th_new, F_new, Fscale_new, g_new, H_new
        gnorm_new = float(np.linalg.norm(g))
        if plain:
            # In exact arithmetic every step of plain Newton decreases F (Armijo) and the budget is
            # proven; in float64, steps that move F by rounding only and bring the gradient no lower
            # than half its smallest norm so far mean the tolerance is below what float64 resolves
            # for this problem: a floor, not a cap. (Against the smallest norm so far, not the last
            # one: at the floor the iterates can cycle through a few points whose gradients rise
            # and then fall by more than half, which would reset a step-to-step count forever.)
            floor_steps = floor_steps + 1 if (at_rounding and gnorm_new > 0.5 * g_best) else 0
            g_best = min(g_best, gnorm_new)
            if floor_steps >= _FLOOR_STEPS:
                raise _NoConvergence("the solver's gradient stalled above its tolerance at the resolution of double "
                                     "precision for this problem; increase grad_tol or lam")
        if method == "newton-cg" and step == 1.0 and gnorm > 0:
            # g(theta + p) = g + H p + remainder, and g + H p = -(CG's residual)
            k_nl = float(np.linalg.norm(g + resid)) / (gnorm * gnorm)
        move = c * step * mv if n else 0.0
        ratio = gnorm_new / gnorm if gnorm > 0 else 0.0
        gnorm = gnorm_new
        if warm_move is not None and step == 1.0 and move < warm_move:
            break
        if sub and (step < 1.0 or ratio > 0.5 or move < _SUB_SWITCH):
            sub = False
        if not sub:
            drift += move
            if step < 1.0 or ratio > 0.25:
                drift = math.inf  # refresh the factorization at the next step
        if plain:
            drift = math.inf  # an exact Hessian at every step
        forced = drift > _CHORD_DRIFT
    return theta, gnorm, n_iter, H


def _newton(X, y, loss, lam, b, grad_tol, max_iter, method, *, weight=1.0, theta0=None):
    """:func:`_newton_rows` on an in-memory array, returning (theta, margins, f'' at theta, gradient norm, iterations)."""
    theta, gnorm, n_iter, _H = _newton_rows(_as_rows(X), y, loss, lam, b, grad_tol, max_iter, method, weight=weight,
                                            theta0=theta0)
    z = X @ theta
    return theta, z, loss._d1_d2(z, y)[1], gnorm, n_iter


#: Largest relative residual of a Newton-CG step (Eisenstat-Walker forcing term, capped).
_FORCING_MAX = 0.5


def _k_colsum(Xe: np.ndarray, yc: Any, off: int) -> np.ndarray:
    return Xe.sum(axis=0)


def _k_row_stats(Xe: np.ndarray, yc: Any, off: int, v: np.ndarray) -> np.ndarray:
    """Every row's squared norm and margin along ``v`` (two columns)."""
    out = np.empty((Xe.shape[0], 2))
    out[:, 0] = np.einsum("ij,ij->i", Xe, Xe)
    out[:, 1] = Xe @ v
    return out


class _Deflation:
    r"""A preconditioner for :math:`H = w X^\top\operatorname{diag}(f'')X + \lambda I` from O(n) cached numbers.

    A GLM's Hessian is nearly a multiple of the identity on most directions (for well-scaled
    features) with a few outliers: along :math:`\theta` the curvature is lower (rows with a
    large margin have a small :math:`f''`), along the mean row higher (features with a common
    offset, an intercept). With :math:`V` an orthonormal basis of :math:`\{\theta, \bar x\}`,
    :math:`P^{-1} r = V (V^\top H V)^{-1} V^\top r + (I - VV^\top) r / \alpha`, :math:`\alpha` the
    mean curvature on the complement, :math:`(\operatorname{tr} H - \operatorname{tr} V^\top H V)/(d - k)`.
    :math:`V^\top H V` and :math:`\operatorname{tr} H` come from the cached margins
    :math:`X\theta`, :math:`X\bar x`, squared row norms and :math:`f''` (O(n k) work, no pass),
    of all rows or of a fixed subset with its weight scaled up (an estimate: ``curv``, ``stats``
    and ``weight`` given accordingly). SPD whatever the data: conjugate gradients converge with it in any case.
    """

    def __init__(self, theta: np.ndarray, xbar: np.ndarray, curv: tuple, stats: tuple, weight: float,
                 lam: float) -> None:
        d = theta.shape[0]
        fpp, z = curv
        rn2, m = stats
        A = np.column_stack([theta, xbar])
        M = np.column_stack([z, m])
        scale = np.linalg.norm(A, axis=0)
        keep = scale > 0
        A, M = A[:, keep] / scale[keep], M[:, keep] / scale[keep]
        V, R = np.linalg.qr(A) if A.shape[1] else (np.zeros((d, 0)), np.zeros((0, 0)))
        ok = np.abs(np.diag(R)) > 1e-6
        V, R, M = V[:, ok], R[np.ix_(ok, ok)], M[:, ok]
        XV = sla.solve_triangular(R, M.T, trans="T", lower=False).T if V.shape[1] else M
        k = V.shape[1]
        W = weight * (XV.T @ (fpp[:, None] * XV)) + lam * np.eye(k)
        tr = weight * float(fpp @ rn2) + d * lam
        alpha = (tr - float(np.trace(W))) / max(d - k, 1)
        self.V = V
        self.alpha = alpha if alpha > lam else max(tr / d, lam)
        self.W = sla.cho_factor(W, check_finite=False) if k else None

    def solve(self, r: np.ndarray) -> np.ndarray:
        if self.W is None:
            return r / self.alpha
        c = self.V.T @ r
        return self.V @ sla.cho_solve(self.W, c, check_finite=False) + (r - self.V @ c) / self.alpha


def _cg_direction(rows, y, loss, theta, weight, lam, g, max_cg=None, g_ref=1.0, precond=None, curv=None,
                  forcing=None, zp=None, u=None):
    """Truncated (preconditioned) conjugate gradients on H p = -g, H v = w X^T (f'' * (X v)) + lam v (one pass per product).

    Stops at the residual ``forcing``, by default ``min(0.5, sqrt(|g| / g_ref)) |g|`` (Eisenstat-Walker's
    choice relative to the first gradient's norm ``g_ref``: superlinear convergence whatever the
    scale of the sum). Returns the step p and its residual r = -g - H p.
    ``precond``: an object whose ``solve(r)`` applies an SPD approximation of H^{-1} (:class:`_Deflation`);
    ``curv``: every row's f'' at ``theta`` (then a product does not form the margins again);
    with it, ``zp`` and ``u`` (two (n,) arrays) make ``zp`` the margins of the step, X p, from the
    products' own X s (no extra pass), ``u`` a work array.
    """
    d = g.shape[0]
    gnorm = float(np.linalg.norm(g))
    if forcing is None:
        forcing = min(_FORCING_MAX, math.sqrt(gnorm / g_ref)) * gnorm
    max_cg = max_cg or min(d, 500)
    p = np.zeros(d)
    r = -g.copy()
    z = r if precond is None else precond.solve(r)
    s = z.copy()
    rz = float(r @ z)
    track = zp is not None and curv is not None
    if track:
        zp[:] = 0.0
    for _ in range(max_cg):
        T = np.column_stack([theta, s])
        Hs = weight * _map_reduce(rows, y, _k_hv, (loss, T, curv, u if track else None)) + lam * s
        alpha = rz / float(s @ Hs)
        p += alpha * s
        if track:
            zp += alpha * u
        r -= alpha * Hs
        if float(np.linalg.norm(r)) <= forcing:
            break
        z = r if precond is None else precond.solve(r)
        rz_new = float(r @ z)
        s = z + (rz_new / rz) * s
        rz = rz_new
    return p, r


def _k_normal(Xe: np.ndarray, yc: Any, off: int) -> tuple:
    """(upper X^T X, X^T y) of a block."""
    d = Xe.shape[1]
    if Xe.shape[0] == 0:
        return (np.zeros((d, d), order="F"), np.zeros(d))
    return (dsyrk(1.0, Xe.T, trans=0, lower=0), Xe.T @ yc)


def _closed_form_squared(rows, y, loss, lam, b, grad_tol, theta0=None):
    d = rows.d
    XtX, Xty = _map_reduce(rows, y, _k_normal)
    H = np.asfortranarray(XtX)
    H[np.diag_indices(d)] += lam
    cf = sla.cho_factor(H, lower=False, check_finite=False)
    theta = sla.cho_solve(cf, Xty - b, check_finite=False) if theta0 is None else np.array(theta0)
    for _ in range(4):  # iterative refinement in float64
        g = _evaluate(rows, y, loss, theta, lam, b, 1.0, False)[2]
        gnorm = float(np.linalg.norm(g))
        if gnorm <= grad_tol:
            return theta, gnorm, H
        theta = theta - sla.cho_solve(cf, g, check_finite=False)
    raise _NoConvergence(
        "the closed-form solution (squared loss) stayed above its gradient tolerance after iterative "
        "refinement; increase grad_tol or lam")


def _grad_scale(X: np.ndarray, y: np.ndarray, loss: GLMLoss) -> float:
    """max(1, n * max_i ||x_i|| * L~): L~ = the loss's Lipschitz constant, or max(1, max|y_i|) if unbounded.

    A *data-dependent* scale: only for non-private fits (never for a tolerance a guarantee relies on).
    """
    if X.shape[0] == 0:
        return 1.0
    if isinstance(X, _Rows) or _is_dask(X):
        rows = _as_rows(X)
        max_sq = _map_reduce(rows, None, _k_check, (None, "y"), combine=_comb_check)[1]
        ymax = float(abs(y).max().compute()) if _is_dask(y) else float(np.max(np.abs(y)))
    else:
        max_sq = float(np.max(np.einsum("ij,ij->i", X, X)))
        ymax = float(np.max(np.abs(y)))
    lip = loss.lipschitz if math.isfinite(loss.lipschitz) else max(1.0, ymax)
    return max(1.0, X.shape[0] * float(np.sqrt(max_sq)) * lip)


# ------------------------------------------------------------ certified gradient
_U = 2.0 ** -53        # unit roundoff of float64
_ETA = 2.0 ** -1074    # the smallest subnormal: the absolute error of a product that underflows
_LOSS_ULPS = 8.0       # assumed accuracy of a loss's f' in float64, relative
# The block sums are added in numpy's long double: x87 extended precision on x86-64 (u = 2^-64);
# where long double is float64 its own unit roundoff enters the bound, which stays rigorous.
_U_LONG = float(np.finfo(np.longdouble).eps) / 2.0
#: Bits kept in the leading part of a split factor (rows, f' and theta; see _split).
_SPLIT_BITS = 20
#: Rows per sub-block of the certified gradient: 2^11 products of two 21-bit integers sum exactly.
_CERT_ROWS = 2048
#: Bytes of a sub-block of the certified gradient (it stays in cache while it is read nine times).
_CERT_BYTES = 1 << 21


def _gamma(k: int, u: float = _U) -> float:
    """Higham's gamma_k = k u / (1 - k u): the relative error bound of a k-term sum or dot product."""
    return k * u / (1.0 - k * u)


def _split(a: np.ndarray, amax: float, bits: int, hi: np.ndarray | None = None,
           lo: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, float] | None:
    r"""``a = hi + lo`` exactly, ``hi`` an integer multiple of ``unit`` with ``|hi| <= (2^bits + 1) unit``, ``|lo| <= unit``.

    ``amax >= max|a|`` (> 0, finite); ``unit = 2^(e - bits)`` for :math:`2^{e-1} \le` ``amax``
    :math:`< 2^e`. Rump, Ogita & Oishi's ExtractScalar (SIAM J. Sci. Comput. 31, 2008,
    Lemma 3.3): with :math:`\sigma = 2^{e + 53 - bits}`, ``hi = fl(fl(sigma + a) - sigma)``
    and ``lo = fl(a - hi)`` are exact splits. ``None`` when :math:`\sigma` would overflow.
    ``hi`` and ``lo`` may be given as output buffers of ``a``'s shape.
    """
    e = math.frexp(amax)[1]
    if e + 53 - bits > 1023:
        return None
    sigma = math.ldexp(1.0, e + 53 - bits)
    hi = np.add(a, sigma, out=hi)
    hi -= sigma
    return hi, np.subtract(a, hi, out=lo), math.ldexp(1.0, e - bits)


_SCRATCH = threading.local()
#: Largest work array :func:`_scratch` keeps (numbers): four times a block of :data:`_BLOCK_BYTES`.
_SCRATCH_MAX = 4 * _BLOCK_BYTES // 8


def _scratch(shape: tuple[int, int], count: int, name: str = "block") -> list[np.ndarray]:
    """``count`` float64 work arrays of ``shape`` for the user ``name``, kept per thread.

    A fresh array of a megabyte is a page fault per page whenever the allocator maps it anew
    (every time in a Dask worker, whose nanny sets ``MALLOC_TRIM_THRESHOLD_``); a kernel's
    block-sized temporaries come from here instead. Each name keeps its arrays (grown, never
    shrunk), so two kernels of one pass do not take each other's. A result is valid until the
    next call with the same name in the same thread. Arrays of more than :data:`_SCRATCH_MAX`
    numbers are made fresh and not kept (a thread keeps a few megabytes per name at most).
    """
    rows, cols = shape
    size = rows * cols
    if size > _SCRATCH_MAX:
        return [np.empty(shape) for _ in range(count)]
    pool = getattr(_SCRATCH, "pool", None)
    if pool is None:
        pool = _SCRATCH.pool = {}
    bufs = pool.get((name, count))
    if bufs is None or bufs[0].size < size:
        bufs = pool[(name, count)] = [np.empty(size) for _ in range(count)]
    return [b[:size].reshape(rows, cols) for b in bufs]


def _k_cert(Xe: np.ndarray, yc: Any, off: int, loss: GLMLoss, theta: np.ndarray) -> tuple:
    r"""One block of the certified gradient: (sum f' x as two float64 words, sum of the summed terms' magnitudes,
    per-coordinate error bound, number of summed terms, the long double's unit roundoff).

    Every product that matters is exact in float64 BLAS: the rows, :math:`f'` and :math:`\theta`
    are split (:func:`_split`) into a leading part of at most 21 significant bits on a common
    grid and a remainder. A dot product of leading parts is a sum of integers (times one power
    of two) below :math:`2^{53}`, so any BLAS computes it exactly, in any order, with or without
    FMA; the remainders' products are :math:`2^{-20}` smaller and carry Higham's bound. The
    exact partial sums of the sub-blocks are then added in long double. A block whose scale
    would leave float64's exponent range is summed in plain float64 with Higham's bound instead.
    """
    n_rows, d = Xe.shape
    acc = np.zeros(d, dtype=np.longdouble)
    T = np.zeros(d)   # sum of |t| over the terms t added in long double
    E = np.zeros(d)   # bound on everything else: margins, evaluation of f', the sub-blocks' remainders
    m = 0
    beta = loss.smoothness
    c_sc = loss.self_concordance
    squared = isinstance(loss, Squared)
    bits = _SPLIT_BITS
    tmax = float(np.max(np.abs(theta))) if d else 0.0
    bits_t = 31 - int(d).bit_length()  # d (2^bits + 1)(2^bits_t + 1) < 2^53: the margins' leading dot is exact
    th_split = _split(theta, tmax, bits_t) if tmax > 0 and bits_t >= 1 else None
    th_l1 = float(np.sum(np.abs(theta)))
    g_d1 = _gamma(d + 1)
    kk = max(64, min(_CERT_ROWS, _CERT_BYTES // (8 * max(d, 1))))
    bufs = _scratch((min(kk, n_rows), d), 3, "cert")
    for s in range(0, n_rows, kk):
        Xc = Xe[s:s + kk]
        k = Xc.shape[0]
        ycc = yc[s:s + k]
        Ac = np.abs(Xc, out=bufs[0][:k])
        xmax = float(Ac.max()) if Ac.size else 0.0
        xs = _split(Xc, xmax, bits, bufs[1][:k], bufs[2][:k]) if xmax > 0 else None
        exact_z = xs is not None and th_split is not None and (
            math.frexp(xmax)[1] + math.frexp(tmax)[1] - bits - bits_t >= -1000)
        if exact_z:
            X1, X2, unit_x = xs
            t1, t2, unit_t = th_split
            x1max = (2.0 ** bits + 1.0) * unit_x
            z = X1 @ t1  # exact
            z += (X1 @ t2 + X2 @ theta)
            c1 = x1max * float(np.sum(np.abs(t2))) + unit_x * th_l1
            dz = 1.01 * (_U * np.abs(z) + g_d1 * c1 + 2 * d * _ETA)
        else:  # zero rows or theta, or an extreme scale: plain float64 margins, Higham's bound
            z = Xc @ theta
            dz = 1.01 * (_U * np.abs(z) + _gamma(d) * (Ac @ np.abs(theta)) + d * _ETA)
        d1, d2 = loss._d1_d2(z, ycc)
        fmax = float(np.max(np.abs(d1))) if k else 0.0
        if fmax == 0.0:
            pass  # nothing to sum
        elif xs is not None:
            X1, X2, unit_x = xs
            fs = _split(d1, fmax, bits)
            if fs is not None and math.frexp(xmax)[1] + math.frexp(fmax)[1] - 2 * bits >= -1000:
                f1, f2, unit_f = fs
                x1max = (2.0 ** bits + 1.0) * unit_x
                parts = (X1.T @ f1, X1.T @ f2, X2.T @ d1)  # the first exact
                E += (_gamma(k) * (k * x1max * unit_f + unit_x * float(np.sum(np.abs(d1)))) + 2 * k * _ETA)
            else:
                parts = (Xc.T @ d1,)
                E += _gamma(k) * (Ac.T @ np.abs(d1)) + k * _ETA
            for p in parts:
                acc += p
                T += np.abs(p)
            m += len(parts)
        else:
            parts = (Xc.T @ d1,)
            E += _gamma(k) * (Ac.T @ np.abs(d1)) + k * _ETA
            acc += parts[0]
            T += np.abs(parts[0])
            m += 1
        if math.isfinite(c_sc) and c_sc >= 0:
            curv = np.where(c_sc * dz < 1.0, np.minimum(beta, 1.01 * d2 * np.exp(np.minimum(c_sc * dz, 1.0))), beta)
        else:  # pragma: no cover - every pdpkit loss is quasi-self-concordant
            curv = beta
        ev = _LOSS_ULPS * _U * np.abs(d1)
        if squared:  # f' = z - y: the subtraction's error is relative to |z| + |y|
            ev = ev + 2.0 * _U * (np.abs(z) + np.abs(ycc))
        E += Ac.T @ (curv * dz + ev)
    hi = acc.astype(np.float64)
    # the long-double sum travels as two float64 words (portable between machines whose long
    # double differs), with the unit roundoff of the machine that formed it
    return (hi, (acc - hi).astype(np.float64), T, E, m, _U_LONG)


def _comb_cert(a: tuple, b: tuple) -> tuple:
    s = (a[0].astype(np.longdouble) + a[1]) + (b[0].astype(np.longdouble) + b[1])
    hi = s.astype(np.float64)
    return (hi, (s - hi).astype(np.float64), a[2] + b[2], a[3] + b[3], a[4] + b[4], max(a[5], b[5], _U_LONG))


def _certified_gradient(X: Any, y: Any, loss: GLMLoss, lam: float, b: np.ndarray,
                        theta: np.ndarray) -> tuple[np.ndarray, float]:
    r"""The perturbed gradient :math:`\hat g \approx \nabla J(\theta; D) + b` and a rigorous bound on its error.

    Returns ``(g, err)`` with :math:`\|\hat g - (\nabla J(\theta; D) + b)\|_2 \le` ``err`` for the
    float64 vector ``theta`` as given. Rows, :math:`\theta` and :math:`f'` are split exactly into
    a leading part on a coarse grid and a remainder (:func:`_split`, Rump, Ogita & Oishi 2008),
    so that the dot products of leading parts are sums of integers below :math:`2^{53}`:
    exact in float64 BLAS in any order. The margins are then accurate to
    :math:`\Delta_i \le u|z_i| + \gamma_{d+1}(\ldots)` (the remainders' products, about
    :math:`2^{-20}` of the whole, with Higham 2002, §3.1), which moves :math:`f'`
    by at most :math:`1.01 f''_i e^{c\Delta_i}\Delta_i` for a loss with quasi-self-concordance
    constant :math:`c` (while :math:`c\Delta_i < 1`; Asi, Duchi & Talwar, Lemma 2.1) and by
    :math:`\beta\Delta_i` otherwise; :math:`f'` itself is assumed accurate to :data:`_LOSS_ULPS`
    units in the last place (relative; for the squared loss, :math:`f' = z - y` is accurate to
    :math:`2u(|z| + |y|)`). The sum :math:`\sum_i f'_i x_i` is formed per sub-block of at most
    :data:`_CERT_ROWS` rows as an exact leading sum plus the remainders' sums (Higham's
    bound), and these :math:`m` partial sums are added in long double in any order (error
    :math:`\le\gamma^{\rm long}_{m}\sum|t|` over the partial sums :math:`t`): one after
    another in a process, or as a tree across Dask workers; the partial sums
    travel as two float64 words and the bound takes the coarsest long double among the machines
    that summed, so a cluster whose workers' long double is only float64 stays rigorous. A
    block whose scale would leave float64's exponent range is summed in plain float64 with
    Higham's bound. The final additions are in float64. The rows are read block by block (the rows the model is fitted on,
    intercept and clipping included: :class:`_Rows`). Every bound is per coordinate, in
    absolute values, inflated by 1 % for the rounding of the bound itself.
    """
    rows = _as_rows(X)
    n, d = rows.shape
    beta = loss.smoothness
    if n == 0:
        hi, lo, T, E, m, u_long = np.zeros(d), np.zeros(d), np.zeros(d), np.zeros(d), 0, _U_LONG
    else:
        hi, lo, T, E, m, u_long = _map_reduce(rows, y, _k_cert, (loss, theta), combine=_comb_cert)
    u_long = max(u_long, _U_LONG)  # the coarsest long double among the machines that summed
    S = hi + lo
    g = S + lam * theta + b
    err = (_gamma(m + 1, u_long) * T + _U * np.abs(S) + E
           + 3.0 * _U * (np.abs(S) + np.abs(lam * theta) + np.abs(b)))
    if not (math.isfinite(beta) and np.all(np.isfinite(err))):  # pragma: no cover
        return g, math.inf
    return g, 1.01 * float(np.linalg.norm(err)) * (1.0 + _gamma(d + 1))


#: Cost model of method="auto": a Hessian pass (n d^2 flops in SYRK) costs about
#: d / _HESSIAN_PASS_RATIO gradient passes (8 n d bytes read); Newton needs about two exact
#: Hessians near the minimizer, Newton-CG about _CG_PASSES more passes than Newton in all
#: (measured single-threaded at n = 1e5, logistic: with well-conditioned features Newton-CG is
#: cheaper from d of about 50 on, with correlated or 0/1 features Newton stays cheaper up to
#: d of about 150: the rule keeps Newton there).
_HESSIAN_PASS_RATIO = 10.0
_CG_PASSES = 30.0


def _auto_method(loss: GLMLoss, n: int, d: int) -> str:
    """The solver by cost: closed form (squared loss), full Newton while Hessians are cheap, Newton-CG beyond."""
    if isinstance(loss, Squared):
        return "closed-form"
    hessians = 2.0 * d / _HESSIAN_PASS_RATIO
    return "newton" if hessians <= _CG_PASSES and d <= _NEWTON_MAX_D else "newton-cg"


def _newton_until(rows, y, loss, lam, b, target, method, theta0, certify_tol, cert):
    """The fast Newton phase for :data:`_FAST_ITER` iterations, then plain damped Newton to ``target``.

    The plain phase has a proven iteration budget (:func:`_proven_newton_budget`, from the
    objective where it starts), so the iteration ends at ``target`` whatever the data: no
    fit fails for lack of iterations.
    """
    try:
        return _newton_rows(rows, y, loss, lam, b, target, _FAST_ITER, method, theta0=theta0,
                            certify_tol=certify_tol, cert_out=cert)
    except _NoConvergence as exc:
        if exc.theta is None:
            raise
        start = exc.theta
    r_max = math.sqrt(max(_map_reduce(rows, None, _k_check, (None, "y"), combine=_comb_check)[1], 0.0))
    theta, gnorm, it, H = _newton_rows(rows, y, loss, lam, b, target, None, method, theta0=start,
                                       certify_tol=certify_tol, cert_out=cert, plain=True, r_max=r_max)
    return theta, gnorm, _FAST_ITER + it, H


def _solve(X, y, loss, lam, b, grad_tol, max_iter, method, want_hessian=True, certify=True):
    r"""Minimize :math:`J(\theta; D) + b^\top\theta` until :math:`\|\nabla J + b\| \le` ``grad_tol`` (absolute).

    ``X``: an array, a memmap, a Dask array or a :class:`_Rows` (read by blocks, never copied).
    With ``certify`` (every private use), the bound holds for the *true* gradient at the
    returned float64 point: the computed norm plus :func:`_certified_gradient`'s rounding
    bound is at most ``grad_tol``. The iteration aims at half the tolerance, then certifies;
    if rounding alone would exceed half of it, ``RuntimeError`` asks for a larger
    ``grad_tol`` (the message holds no number computed from the data).
    ``max_iter=None``: no iteration limit that depends on the data (:func:`_newton_until`).
    """
    rows = _as_rows(X)
    n, d = rows.shape
    if method == "auto":
        method = _auto_method(loss, n, d)
    if method not in ("closed-form", "newton", "newton-cg"):
        raise ValueError(f"method must be 'auto', 'newton', 'newton-cg' or 'closed-form'; got {method!r}")
    if method == "closed-form" and not isinstance(loss, Squared):
        raise ValueError(f"method='closed-form' is only available for the squared loss, not {loss.name!r}")
    target = 0.5 * grad_tol if certify else grad_tol
    theta = None
    n_iter = 0
    H = None
    try:
        for _attempt in range(4):
            if method == "closed-form":
                theta, gnorm, H = _closed_form_squared(rows, y, loss, lam, b, target, theta0=theta)
            else:
                cert: list = []
                if max_iter is None:
                    theta, gnorm, it, H = _newton_until(rows, y, loss, lam, b, target, method, theta,
                                                        grad_tol if certify else None, cert)
                else:
                    theta, gnorm, it, H = _newton_rows(rows, y, loss, lam, b, target, max(1, max_iter - n_iter),
                                                       method, theta0=theta,
                                                       certify_tol=grad_tol if certify else None, cert_out=cert)
                n_iter += it
            if not certify:
                break
            # the certificate at theta: formed with the last step when it certified there
            g, err = cert[0] if (method != "closed-form" and cert) else _certified_gradient(rows, y, loss, lam, b,
                                                                                             theta)
            gnorm = float(np.linalg.norm(g))
            if gnorm + err <= grad_tol:
                break
            if err >= 0.5 * grad_tol:
                raise _NoConvergence(
                    f"grad_tol={grad_tol:g} is below what float64 can certify for data of this size; "
                    "increase grad_tol (the output noise pays for it)")
            target = 0.25 * (grad_tol - err)
            H = None
        else:
            raise _NoConvergence("the solver could not certify its gradient tolerance; increase grad_tol or lam")
    except _NoConvergence as exc:
        raise RuntimeError(str(exc)) from None
    chol = None
    if want_hessian:
        if H is None:
            H = _hessian_rows(rows, y, loss, theta, lam)
        chol = _chol_lower(H)
    return theta, gnorm, grad_tol, n_iter, method, chol
