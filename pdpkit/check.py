r"""A NON-PRIVATE diagnostic for the curator: which rows a fit would refuse, and leak heuristics.

A private fit refuses bad rows — a text cell in a numeric column, NaN or infinity, a row
beyond the norm bound, a label outside the public classes, a value outside a schema's
domain — without saying which rows or which values: its messages name the kind of problem
and the public constraint only, because a refusal whose text changes when one record
changes is itself a release about that record. This module is where the curator, who may
see the data, finds the rows:

* :func:`check_nonprivate` looks at the records as a fit would and returns a
  :class:`CheckReport` naming each problem with its rows (0-based positions), its column
  and the offending values;
* :func:`leak_heuristics_nonprivate` says when the rows look like the output of a
  transformer fitted on the private records (``StandardScaler``, ``MinMaxScaler``,
  ``MaxAbsScaler``, ``RobustScaler``), when many rows lie beyond the norm bound, when every
  row lies deep inside it, or when δ is not small against the number of records. Whether
  such a message appears depends on the data, so the estimators no longer issue it while
  fitting; it is printed here, and by ``pdpkit check``, for the curator.

Everything here is computed from the private records and is **not private**: never publish
a report, print it into a shared log, or send it to an analyst. The command line's
``pdpkit check DATA ...`` prints the same report (rows numbered from 1, the header not
counted).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_finite_array, row_norms, scalar_positive, scalar_probability
from .schema import Schema, as_series, canonical_text

__all__ = [
    "NONPRIVATE_BANNER",
    "CLIP_FRACTION",
    "CheckProblem",
    "CheckReport",
    "check_nonprivate",
    "leak_heuristics_nonprivate",
]

#: The first line of every report (``{source}``: the data's name).
NONPRIVATE_BANNER = ("NON-PRIVATE: this report names rows and values of {source}; it is for the curator, never "
                     "publish it")

#: :func:`leak_heuristics_nonprivate` speaks when more than this fraction of the rows lie beyond the norm bound.
CLIP_FRACTION = 0.05

#: Tolerance of the "looks standardized / scaled" heuristics (a transformer's output meets its targets to
#: rounding; data that merely look scaled do not, to 1e-8).
_LEAK_TOL = 1e-8

#: Characters of a cell shown in a report.
_SHOW = 40

# The kinds of problem, worded as the private refusals word them.
_NOT_NUMBER = "a numeric feature cell is not a number"
_NOT_FINITE = "a numeric feature cell is not a finite number"
_MISSING = "a feature value is missing (the schema's handle_missing is 'error')"
_UNKNOWN = "a categorical feature value is outside the schema's domain (handle_unknown is 'error')"
_LABEL_EMPTY = "a label cell is empty or missing"
_LABEL_UNKNOWN = "a label is not one of the classes"
_LABEL_NOT_NUMBER = "a label cell is not a number"
_LABEL_NOT_FINITE = "a label cell is not a finite number"
_NAN_TEXT = ("nan", "+nan", "-nan")


# ------------------------------------------------------------------ the report
@dataclass(frozen=True)
class CheckProblem:
    """One kind of problem in one column, with every row that has it (NON-PRIVATE).

    Attributes
    ----------
    kind : str
        What is wrong, in the words of the private refusal (``"a numeric feature cell is not
        a number"``, ``"a row's Euclidean norm exceeds norm_bound=1"``, ...).
    rows : tuple of int
        The rows that have it: 0-based positions in the data, increasing.
    columns : tuple of str
        The column it is in (empty for a problem of a whole row, such as its norm).
    values : tuple of str
        The offending values of the first rows (cells as ``repr``, norms to six digits), at
        most as many as a report shows.
    """

    kind: str
    rows: tuple[int, ...]
    columns: tuple[str, ...] = ()
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class CheckReport:
    """What :func:`check_nonprivate` found — NON-PRIVATE: it names rows and values of the data.

    For the curator only: never publish it. ``str(report)`` starts with
    :data:`NONPRIVATE_BANNER` and lists each problem with its first rows and values.

    Attributes
    ----------
    problems : tuple of CheckProblem
        What a fit would refuse (empty when nothing).
    leaks : tuple of str
        The messages of :func:`leak_heuristics_nonprivate` (advice; a fit does not refuse them).
    notes : tuple of str
        What was not checked, and why (e.g. labels without public classes).
    n_rows : int
        The number of rows looked at.
    source : str
        How the report names the data (a file name, or ``"X"``).
    """

    problems: tuple[CheckProblem, ...]
    leaks: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    n_rows: int = 0
    source: str = "X"

    @property
    def ok(self) -> bool:
        """``True`` when a fit would refuse none of the rows (leak heuristics do not count)."""
        return not self.problems

    def to_text(self, *, first_row: int = 0, shown: int = 5) -> str:
        """The report as text: the banner, the problems with their first rows and values, the leak heuristics.

        Parameters
        ----------
        first_row : int
            The number printed for the first row: 0 (positions, as ``str`` prints them) or 1
            (data rows as a spreadsheet counts them without the header, as ``pdpkit check``).
        shown : int
            How many rows (and values) of each problem are printed before "… and N more".
        """
        numbering = ("0-based positions" if first_row == 0 else
                     f"numbered from {first_row}, the header not counted")
        lines = [NONPRIVATE_BANNER.format(source=self.source),
                 f"{self.source}: {self.n_rows} rows checked (rows are {numbering})"]
        if self.problems:
            lines.append(f"problems ({len(self.problems)}):")
        for p in self.problems:
            rows = ", ".join(str(r + first_row) for r in p.rows[:shown])
            more = f" … and {len(p.rows) - shown} more" if len(p.rows) > shown else ""
            where = f"; column {p.columns[0]!r}" if len(p.columns) == 1 else (
                f"; columns {', '.join(map(repr, p.columns))}" if p.columns else "")
            values = (f" ({'value' if len(p.values) == 1 else 'values'} {', '.join(p.values[:shown])})"
                      if p.values else "")
            word = "row" if len(p.rows) == 1 else "rows"
            lines.append(f"  - {p.kind}{where}: {word} {rows}{more}{values}")
        if self.leaks:
            lines.append(f"leak heuristics ({len(self.leaks)}):")
            lines += [f"  - {m}" for m in self.leaks]
        lines += [f"note: {m}" for m in self.notes]
        lines.append("no problem found: a fit would refuse none of these rows" if self.ok else
                     f"{len(self.problems)} problem(s) found: a fit refuses these rows until they are corrected")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


def _show(value: Any) -> str:
    text = value if isinstance(value, str) else canonical_text(value) if value is not None else "None"
    return repr(text if len(text) <= _SHOW else text[:_SHOW] + "...")


def _problem(kind: str, mask: np.ndarray, column: str | None, cells: Any, shown: int = 5,
             show: Any = _show) -> CheckProblem | None:
    """The rows of ``mask`` as one problem (``None`` when there is none), the first ``shown`` values shown."""
    rows = np.flatnonzero(mask)
    if rows.size == 0:
        return None
    values = tuple(show(cells[int(i)]) for i in rows[:shown])
    return CheckProblem(kind=kind, rows=tuple(int(i) for i in rows), columns=() if column is None else (column,),
                        values=values)


# ------------------------------------------------------------------ cells
def _numeric_cells(values: Any, *, text_ok: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Any]:
    """A column read as numbers: (floats, not a number, not finite, missing, the cells as a list).

    ``missing``: ``None``, ``NaN``, ``pandas.NA``. A text cell is parsed as pandas parses a
    CSV's numbers when ``text_ok`` (``"nan"`` is then not finite, ``"abc"`` not a number), and is
    not a number otherwise (as :meth:`pdpkit.schema.Schema.encode` reads a numeric column).
    """
    import pandas as pd

    series = as_series(values)
    n = len(series)
    if series.dtype.kind in "iufb":
        v = series.to_numpy(dtype=float, na_value=np.nan)
        missing = np.isnan(v)
        return v, np.zeros(n, dtype=bool), np.isinf(v), missing, series.tolist()
    cells = series.tolist()
    v = np.full(n, np.nan)
    not_number = np.zeros(n, dtype=bool)
    not_finite = np.zeros(n, dtype=bool)
    missing = np.zeros(n, dtype=bool)
    text_rows, texts = [], []
    for i, c in enumerate(cells):
        if c is None or c is pd.NA or (isinstance(c, (float, np.floating)) and math.isnan(c)):
            missing[i] = True
        elif isinstance(c, (bool, np.bool_, int, float, np.integer, np.floating)):
            v[i] = float(c)
        elif isinstance(c, str) and text_ok:
            text_rows.append(i)
            texts.append(c.strip())
        else:
            not_number[i] = True
    if text_rows:
        idx = np.asarray(text_rows)
        parsed = np.asarray(pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce"), dtype=float)
        nan_text = np.array([t.lower() in _NAN_TEXT for t in texts], dtype=bool)
        v[idx] = parsed
        not_number[idx] = np.isnan(parsed) & ~nan_text
    not_finite |= ~np.isfinite(v) & ~not_number & ~missing
    return v, not_number, not_finite, missing, cells


def _columns_of(X: Any) -> tuple[list[str], list[Any]]:
    """Column names and columns of a table, a mapping or a 2-D array (names ``"0"``, ``"1"``, ...)."""
    if hasattr(X, "columns") and hasattr(X, "__getitem__"):
        return [str(c) for c in X.columns], [X[c] for c in X.columns]
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise ValueError(f"X must be a table (a pandas DataFrame) or a 2-D array; got shape {arr.shape}")
    return [str(j) for j in range(arr.shape[1])], [arr[:, j] for j in range(arr.shape[1])]


# ------------------------------------------------------------------ the checks
def check_nonprivate(X: ArrayLike, y: ArrayLike | None = None, *, norm_bound: float | None = None,
                     schema: Schema | None = None, classes: Sequence[Any] | None = None,
                     delta: float | None = None, row_norm: str = "raise") -> CheckReport:
    r"""Find the rows a private fit would refuse, with their values — NON-PRIVATE, for the curator.

    A fit (an estimator, ``pdpkit fit``, :meth:`pdpkit.schema.Schema.encode`) refuses bad
    rows naming only the kind of problem, so that its message is the same on neighbouring
    data sets. This function names the rows: it looks at the records as the fit reads them
    and lists, for each kind of problem and column, every row that has it and the first
    values. Its report is computed from the private records without noise and is **not
    private**: for the curator, never to publish.

    Without a schema (``X`` numeric features):

    * a cell that is not a number (text that does not parse as one; a text cell is parsed
      as pandas parses a CSV's numbers), or not a finite number (NaN, infinity, missing);
    * with ``norm_bound`` and ``row_norm="raise"``: a row (of finite cells) with
      :math:`\|x\|_2 >` ``norm_bound``;
    * with ``y`` and ``classes``: a label that is not one of the classes (compared by
      equality, text as text: ``"1"`` is not ``"1.0"``), and an empty or missing label.

    With a ``schema`` (``X`` the raw records, read by column name as
    :meth:`pdpkit.schema.Schema.encode` reads them): text in a numeric column, an infinite
    value, a missing value where the schema's ``handle_missing`` is ``"error"``, a
    categorical value outside its domain where ``handle_unknown`` is ``"error"``; with
    ``y``, a label outside the schema's label classes, a missing label, or (a numeric label)
    text or an infinite value. The schema's encoding is in the ball by construction, so no
    row is beyond the bound.

    Then :func:`leak_heuristics_nonprivate` runs on the feature rows (the finite ones; with a
    schema, the encoding times ``norm_bound``, 1 when not given, when no feature cell is
    refused).

    Parameters
    ----------
    X : array_like or pandas.DataFrame, shape (n, d)
        The feature rows (without a schema), or the raw records (with one).
    y : array_like, shape (n,), or None
        The labels, or ``None`` to check the features only.
    norm_bound : float or None
        The fit's bound on the rows' Euclidean norm (``None``: rows not compared with a bound,
        and the heuristics about the bound skipped; with a schema, 1).
    schema : pdpkit.schema.Schema or None
        The public schema the fit encodes the records with.
    classes : sequence or None
        The public classes of a categorical label, when there is no schema (with one, its
        label classes; giving different ones is a ``ValueError``).
    delta : float or None
        The fit's δ, for the heuristic "δ is not small against the number of records"
        (``None``: skipped).
    row_norm : {"raise", "clip"}
        The fit's treatment of a row beyond the bound: ``"raise"`` refuses it (a problem here),
        ``"clip"`` shrinks it (not a problem; the heuristics speak when many rows are clipped).

    Returns
    -------
    CheckReport
        The problems (rows as 0-based positions), the leak heuristics' messages, notes on what
        was not checked. ``report.ok`` is ``True`` when a fit would refuse no row.
    """
    if row_norm not in ("raise", "clip"):
        raise ValueError(f"row_norm must be 'raise' or 'clip'; got {row_norm!r}")
    R = None if norm_bound is None else scalar_positive(norm_bound, "norm_bound")
    if delta is not None:
        delta = scalar_probability(delta, "delta")
    if schema is not None and not isinstance(schema, Schema):
        raise TypeError(f"schema must be a pdpkit.schema.Schema or None; got {type(schema).__name__}")
    if classes is not None:
        if isinstance(classes, str) or len(list(classes)) < 2:
            raise ValueError(f"classes must be a list of at least two public labels; got {classes!r}")
        classes = list(classes)
    if schema is not None and schema.label_classes is not None and classes is not None \
            and tuple(map(str, classes)) != tuple(schema.label_classes):
        raise ValueError(f"classes {classes!r} differ from the schema's label classes {list(schema.label_classes)}")
    problems: list[CheckProblem] = []
    notes: list[str] = []
    if schema is not None:
        features, n, rows = _check_schema_features(schema, X, problems)
    else:
        features, n, rows = _check_numeric_features(X, R, row_norm, problems)
    if y is not None:
        _check_labels(y, n, schema, classes, problems, notes)
    leaks: list[str] = []
    if rows is not None and rows.shape[0] > 0:
        bound = R if schema is None else (R or 1.0)
        leaks = leak_heuristics_nonprivate(rows if schema is None else bound * rows, norm_bound=bound, delta=delta)
    elif features:
        notes.append("leak heuristics not run: a feature cell is refused")
    return CheckReport(problems=tuple(problems), leaks=tuple(leaks), notes=tuple(notes), n_rows=n)


def _check_numeric_features(X: Any, R: float | None, row_norm: str,
                            problems: list[CheckProblem]) -> tuple[bool, int, np.ndarray | None]:
    """Cells and norms of numeric feature rows; (any cell refused, n, the finite rows or None)."""
    arr = None if hasattr(X, "columns") else np.asarray(X)
    if arr is not None and arr.dtype.kind in "iufb":
        if arr.ndim != 2:
            raise ValueError(f"X must be a table (a pandas DataFrame) or a 2-D array; got shape {arr.shape}")
        M = arr.astype(float)
        names = [str(j) for j in range(M.shape[1])]
        for j, name in enumerate(names):
            problem = _problem(_NOT_FINITE, ~np.isfinite(M[:, j]), name, M[:, j])
            if problem:
                problems.append(problem)
    else:
        names, cols = _columns_of(X)
        M = np.empty((len(cols[0]) if cols else 0, len(cols)))
        for j, (name, col) in enumerate(zip(names, cols, strict=True)):
            v, not_number, not_finite, missing, cells = _numeric_cells(col, text_ok=True)
            M[:, j] = v
            for kind, mask in ((_NOT_NUMBER, not_number), (_NOT_FINITE, not_finite | missing)):
                problem = _problem(kind, mask, name, cells)
                if problem:
                    problems.append(problem)
    n = M.shape[0]
    bad_cells = bool(problems)
    finite = np.all(np.isfinite(M), axis=1)
    rows = M[finite]
    if R is not None and row_norm == "raise":
        norms = np.full(n, np.nan)
        norms[finite] = row_norms(rows)
        over = finite & (norms > R * (1.0 + 1e-12))
        problem = _problem(f"a row's Euclidean norm exceeds norm_bound={R:g}", over, None, norms,
                           show=lambda x: f"{x:.6g}")
        if problem:
            problems.append(problem)
    return bad_cells, n, rows


def _check_schema_features(schema: Schema, X: Any, problems: list[CheckProblem]) -> tuple[bool, int, np.ndarray | None]:
    """The schema's refusals of the records, every row; (any refused, n, the encoded rows or None)."""
    cols = schema.feature_columns(X)  # a missing column is a ValueError naming it (the header, not the rows)
    n = len(cols[0])
    before = len(problems)
    for col, values in zip(schema.features, cols, strict=True):
        if col.kind == "numeric":
            _v, not_number, not_finite, missing, cells = _numeric_cells(values, text_ok=False)
            found = [(_NOT_NUMBER, not_number), (_NOT_FINITE, not_finite)]
            if schema.handle_missing == "error":
                found.append((_MISSING, missing))
        else:
            codes, missing, cells = _category_codes(values, col.categories or ())
            found = []
            if schema.handle_missing == "error":
                found.append((_MISSING, missing))
            if schema.handle_unknown == "error":
                found.append((_UNKNOWN, (codes < 0) & ~missing))
        for kind, mask in found:
            problem = _problem(kind, mask, col.name, cells)
            if problem:
                problems.append(problem)
    if len(problems) > before:
        return True, n, None
    return False, n, schema.encode(X)


def _category_codes(values: Any, categories: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """Index of each value in ``categories`` compared as text (-1 outside), the missing mask, the cells."""
    series = as_series(values)
    cells = series.tolist()
    missing = series.isna().to_numpy()
    index = {c: i for i, c in enumerate(categories)}
    codes = np.array([-1 if m else index.get(canonical_text(c), -1) for c, m in zip(cells, missing, strict=True)],
                     dtype=np.intp)
    return codes, missing, cells


def _check_labels(y: Any, n: int, schema: Schema | None, classes: list[Any] | None,
                  problems: list[CheckProblem], notes: list[str]) -> None:
    """Append the label problems: empty or missing, outside the classes, (numeric) not a finite number."""
    series = as_series(y)
    if len(series) != n:
        raise ValueError(f"y has {len(series)} labels; X has {n} rows")
    lab = schema.label if schema is not None else None
    name = lab.name if lab is not None else "label"
    if lab is not None and lab.kind == "numeric":
        _v, not_number, not_finite, missing, cells = _numeric_cells(series, text_ok=False)
        for kind, mask in ((_LABEL_EMPTY, missing), (_LABEL_NOT_NUMBER, not_number),
                           (_LABEL_NOT_FINITE, not_finite)):
            problem = _problem(kind, mask, name, cells)
            if problem:
                problems.append(problem)
        return
    cells = series.tolist()
    empty = series.isna().to_numpy() | np.array([isinstance(c, str) and c == "" for c in cells], dtype=bool)
    problem = _problem(_LABEL_EMPTY, empty, name, cells)
    if problem:
        problems.append(problem)
    if lab is not None:
        codes, _missing, _ = _category_codes(series, lab.categories or ())
        unknown = (codes < 0) & ~empty
        kind = f"{_LABEL_UNKNOWN} of the schema's label {list(lab.categories or ())}"
    elif classes is not None:
        unknown = ~series.isin(classes).to_numpy() & ~empty
        kind = f"{_LABEL_UNKNOWN} {classes}"
    else:
        notes.append("labels not compared with classes: none given (give the public classes, or a schema "
                     "whose label is categorical)")
        return
    problem = _problem(kind, unknown, name, cells)
    if problem:
        problems.append(problem)


# ------------------------------------------------------------------ leak heuristics
_MSG_CLIPPED = ("more than one row in twenty lies beyond norm_bound and is clipped (or refused): the features are "
                "not scaled to the bound, and a clipped row loses its information. Scale the features from public "
                "bounds (pdpkit.preprocessing.SchemaEncoder) and choose norm_bound from public knowledge")
_MSG_INSIDE = ("every row lies deep inside the norm ball (all norms below a quarter of norm_bound): the noise is "
               "calibrated to norm_bound and is larger than rows like these need. Choose norm_bound from public "
               "bounds of the features, or encode them to fill the ball (pdpkit.preprocessing.SchemaEncoder)")
_MSG_DELTA = ("delta is not small against the number of records (delta times the number of records is at least "
              "one): an (epsilon, delta) guarantee with such a delta allows publishing a whole record. Choose "
              "delta far below one over the number of records")
_MSG_STANDARD = ("every column has mean zero and standard deviation one, as scikit-learn's StandardScaler leaves "
                 "them: if it was fitted on these records, its mean_ and scale_ are statistics of the private data "
                 "that no guarantee covers (and the fitted pipeline keeps them). Use "
                 "pdpkit.preprocessing.PrivateStandardScaler (charged to the budget) or SchemaEncoder (public bounds)")
_MSG_MINMAX = ("every column has minimum zero and maximum one, as scikit-learn's MinMaxScaler leaves them: if it "
               "was fitted on these records, its data_min_ and data_max_ are records' values that no guarantee "
               "covers. Use pdpkit.preprocessing.SchemaEncoder (public bounds), or fit MinMaxScaler on the public "
               "bounds only")
_MSG_MAXABS = ("every column has largest absolute value one, as scikit-learn's MaxAbsScaler leaves them: if it was "
               "fitted on these records, its max_abs_ are records' values that no guarantee covers. Use "
               "pdpkit.preprocessing.SchemaEncoder (public bounds)")
_MSG_ROBUST = ("every column has median zero and interquartile range one, as scikit-learn's RobustScaler leaves "
               "them: if it was fitted on these records, its center_ and scale_ are quantiles (records' values) "
               "that no guarantee covers. Use pdpkit.preprocessing.SchemaEncoder (public bounds)")


def _all_columns(ok: np.ndarray, zero: np.ndarray) -> bool:
    """Every column meets the target or is all zero (what a scaler makes of a constant), and one meets it."""
    return bool(np.all(ok | zero) and np.any(ok))


def _column_stats(X: np.ndarray, block_bytes: int = 1 << 23) -> dict[str, Any]:
    """One pass over the rows in blocks (no copy of ``X``): what :func:`leak_heuristics_nonprivate` looks at.

    The row norms (n floats), and per column:
    any nonzero, mean and standard deviation (blocks merged by Chan et al.'s update), min,
    max, the counts below ``-tol`` and above ``tol``; whether a value lies strictly inside
    (0, 1) or (-1, 1) anywhere. ``ValueError``/``TypeError`` as :func:`as_finite_array` for a
    block that is not finite or not numeric.
    """
    n, d = X.shape
    tol = _LEAK_TOL
    k = max(1, block_bytes // (8 * max(d, 1)))
    count, mean, m2 = 0, np.zeros(d), np.zeros(d)
    lo, hi = np.full(d, np.inf), np.full(d, -np.inf)
    nonzero = np.zeros(d, dtype=bool)
    below, above = np.zeros(d, dtype=np.int64), np.zeros(d, dtype=np.int64)
    norms2: list[np.ndarray] = []
    inner_01 = inner_abs = False
    for s in range(0, n, k):
        B = as_finite_array(X[s:s + k], "X", ndim=2)
        m = B.shape[0]
        norms2.append(np.einsum("ij,ij->i", B, B))
        bmean = B.mean(axis=0)
        dev = B - bmean
        bm2 = np.einsum("ij,ij->j", dev, dev)
        delta_mean = bmean - mean
        total = count + m
        mean = mean + delta_mean * (m / total)
        m2 = m2 + bm2 + delta_mean**2 * (count * m / total)
        count = total
        lo, hi = np.minimum(lo, B.min(axis=0)), np.maximum(hi, B.max(axis=0))
        nonzero |= np.any(B != 0.0, axis=0)
        below += np.count_nonzero(B < -tol, axis=0)
        above += np.count_nonzero(B > tol, axis=0)
        inner_01 = inner_01 or bool(np.any((B > tol) & (B < 1.0 - tol)))
        aB = np.abs(B, out=dev)
        inner_abs = inner_abs or bool(np.any((aB > tol) & (aB < 1.0 - tol)))
    norms = np.sqrt(np.concatenate(norms2))
    return {"norms": norms, "max_norm": float(norms.max()), "mean": mean, "std": np.sqrt(m2 / count),
            "min": lo, "max": hi, "nonzero": nonzero, "below": below, "above": above,
            "inner_01": inner_01, "inner_abs": inner_abs}


def leak_heuristics_nonprivate(X: ArrayLike, *, norm_bound: float | None, delta: float | None) -> list[str]:
    r"""Advice on rows that waste or leak privacy — NON-PRIVATE: whether each message appears depends on the data.

    Each message states no number computed from the data, but its presence does: on two
    neighbouring data sets one may appear and the other not. So a fit does not issue them;
    the curator reads them here (and in ``pdpkit check``), and does not publish them.

    * more than :data:`CLIP_FRACTION` of the rows have :math:`\|x\|_2 >` ``norm_bound``
      (clipped by ``row_norm="clip"``: the features are not scaled to the bound);
    * every row has :math:`\|x\|_2 <` ``norm_bound``/4 (the bound, and with it the noise, is
      larger than the rows need);
    * :math:`\delta \ge 1/n` (such a δ allows releasing a record);
    * the columns look like the output of a scaler fitted on these records: every column
      with mean 0 and standard deviation 1 (``StandardScaler``), minimum 0 and maximum 1
      (``MinMaxScaler``), largest absolute value 1 (``MaxAbsScaler``), or median 0 and
      interquartile range 1 (``RobustScaler``), each to :math:`10^{-8}`; a column of zeros
      (a constant, as these scalers leave it) is allowed, and the min–max and max–abs checks
      need a value strictly between the extremes (a table of 0/1 indicators is not flagged);
      the max–abs check needs two columns or more (one feature encoded from public bounds
      reaches them, and is not flagged).

    The rows are read in blocks (a ``numpy.memmap`` is never copied whole).

    Parameters
    ----------
    X : array_like, shape (n, d)
        The feature rows as the estimator receives them (before an intercept column); finite.
    norm_bound : float or None
        The estimator's bound on the rows' Euclidean norm (``None``: the first two checks are
        skipped).
    delta : float or None
        The estimator's δ (``None``: the third check is skipped).

    Returns
    -------
    list of str
        The messages, in the order above (empty when nothing looks wrong).
    """
    R = None if norm_bound is None else scalar_positive(norm_bound, "norm_bound")
    if delta is not None:
        delta = scalar_probability(delta, "delta")
    X = np.asarray(X)  # a memmap stays a memmap: the rows are read block by block below
    if X.ndim != 2:
        raise ValueError(f"X must have 2 dimension(s); got shape {X.shape}")
    n = X.shape[0]
    messages: list[str] = []
    if n == 0 or X.shape[1] == 0:
        return messages
    st = _column_stats(X)
    if R is not None and np.count_nonzero(st["norms"] > R * (1.0 + 1e-12)) > CLIP_FRACTION * n:
        messages.append(_MSG_CLIPPED)
    if R is not None and st["max_norm"] < R / 4.0:
        messages.append(_MSG_INSIDE)
    if delta is not None and delta >= 1.0 / n:
        messages.append(_MSG_DELTA)
    if n >= 4:
        zero, tol = ~st["nonzero"], _LEAK_TOL
        mean, std, lo, hi = st["mean"], st["std"], st["min"], st["max"]
        maxabs = np.maximum(-lo, hi)
        if _all_columns((np.abs(mean) <= tol) & (np.abs(std - 1.0) <= tol), zero):
            messages.append(_MSG_STANDARD)
        if _all_columns((np.abs(lo) <= tol) & (np.abs(hi - 1.0) <= tol), zero) and st["inner_01"]:
            messages.append(_MSG_MINMAX)
        elif X.shape[1] >= 2 and _all_columns(np.abs(maxabs - 1.0) <= tol, zero) and st["inner_abs"]:
            messages.append(_MSG_MAXABS)
        # median 0 needs at most half the values below -tol and at most half above tol;
        # only then are the columns' quartiles computed, one column (n floats) at a time
        maybe = (st["below"] <= n / 2) & (st["above"] <= n / 2)
        if bool(np.all(maybe | zero)) and bool(np.any(maybe & ~zero)):
            ok = np.zeros(X.shape[1], dtype=bool)
            for j in np.flatnonzero(~zero):
                q25, q50, q75 = np.percentile(np.asarray(X[:, j], dtype=np.float64), [25.0, 50.0, 75.0])
                ok[j] = abs(q50) <= tol and abs(q75 - q25 - 1.0) <= tol
                if not ok[j]:
                    break
            if _all_columns(ok, zero):
                messages.append(_MSG_ROBUST)
    return messages
