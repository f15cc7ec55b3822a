r"""A public description of the data: roles, numeric bounds, categorical domains, label classes.

A :class:`Schema` says, for each column of a table, what it is for (``"feature"``,
``"label"`` or ``"ignore"``) and what values it may take — the public bounds of a numeric
column, the public domain (list of values) of a categorical column, the classes of a
categorical label or the bounds of a numeric one. It is **not** derived from the data: it is
what anyone may know before seeing a record (a questionnaire's answers, a sensor's range, a
census category list), so that a model encoded with it spends no privacy on preprocessing.

Encoding (:meth:`Schema.encode`) is a fixed map applied to each record on its own, with no
statistic of the data set:

* a numeric feature is clipped to ``[low, high]`` and mapped to :math:`[-1, 1]` by
  :math:`v \mapsto (2v - \text{low} - \text{high})/(\text{high} - \text{low})`;
* a categorical feature becomes a one-hot vector over its public domain (in the domain's
  order);
* the row is then divided by :math:`\sqrt{k}`, with :math:`k` the number of feature
  columns. Each column contributes at most 1 to the squared norm, so every encoded row has
  :math:`\|x\|_2 \le 1` by construction — the norm bound ObjPert needs holds without any
  clipping of rows and without looking at the data.

Two public rules settle the values a schema does not foresee, the same for every record
(vectorized: the same operations on every row):

* **a categorical value outside the domain** (``handle_unknown``): ``"error"`` (default)
  refuses; ``"zero"`` encodes it as the all-zero block, the same as a missing value ("none
  of the listed values");
* **a missing value** — ``None``, ``NaN``, ``pandas.NA`` (``handle_missing``): ``"error"``
  (default) refuses; ``"zero"`` encodes it as 0 — the midpoint of a numeric column's range,
  the all-zero block of a categorical one.

An infinite numeric value, or text in a numeric column, is always refused (it is not a
measurement). A refusal names the kind of problem and the public rule, never a row, a value,
a count or the column: its text is the same on neighbouring data sets (the first kind found
in a fixed order — text, infinity, missing, outside the domain — whichever columns hold it),
so that a refusal releases nothing about a record. The curator finds the rows with the
non-private diagnostic ``pdpkit.check.check_nonprivate(X, y, schema=schema)``, which every
refusal names. Labels: a
categorical label is encoded as the index of its class in the label's domain
(:meth:`Schema.encode_label`; a value outside the domain or a missing label is refused); a
numeric label is clipped to its public bounds and mapped to :math:`[-1, 1]`, and
:meth:`Schema.decode_label` maps predictions back to the label's scale.

Values of a categorical column are compared as text: a string as it is, an integer as its
decimal digits, a float that is an integer as that integer (``1.0`` is ``"1"``, as a
column with a missing value reads integers in pandas), any other float by its shortest
``repr``, a boolean as ``"True"``/``"False"``.

The JSON form (:meth:`Schema.to_json`, format ``pdpkit-schema/1``) is strict: an unknown
field, a missing field, a value of the wrong type or outside its range is a ``ValueError``
or ``TypeError`` naming the field (``columns[2].low``).

:func:`draft_schema_nonprivate` drafts a schema *from the data* for a person to review: its
bounds and domains are read from the records and are **not private**. The draft carries
``nonprivate_draft=True`` (and a ``"note"`` in its JSON) until a person has replaced them
with public knowledge and removed both marks (read from JSON, a note that still says
"NON-PRIVATE DRAFT" keeps the schema a draft); the command line refuses to fit with a draft.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_json_keys

__all__ = [
    "SCHEMA_FORMAT",
    "DRAFT_NOTE",
    "Column",
    "Schema",
    "draft_schema_nonprivate",
]

#: The format tag of a schema's JSON form.
SCHEMA_FORMAT = "pdpkit-schema/1"

#: The ``"note"`` a drafted schema carries in its JSON (and ``Schema.note``).
DRAFT_NOTE = ("NON-PRIVATE DRAFT: the bounds, domains and label classes below were read from the data "
              "by pdpkit.schema.draft_schema_nonprivate. Published or used as they are, they reveal "
              "records (a bound is a record's value). Replace each one by public knowledge (a range "
              "or list of values anyone may know without the data), then delete this note and the "
              "field nonprivate_draft.")

#: The words that make a note a draft mark (in any case): :data:`DRAFT_NOTE` begins with them.
_DRAFT_MARK = "NON-PRIVATE DRAFT"

_ROLES = ("feature", "label", "ignore")
_KINDS = ("numeric", "categorical")
_POLICIES = ("error", "zero")


class PrivacyLeakWarning(UserWarning):
    """Something computed from private data may leave the guarantee's accounting.

    Raised as a warning (never with a number computed from the data in its message) when a
    schema was drafted from the data or a drafted schema is used. (Advice that depends on
    the data — rows that look scaled by a transformer fitted on them — is no warning of a
    fit: the curator reads it from ``pdpkit.check.leak_heuristics_nonprivate``.) Exported
    by :mod:`pdpkit.preprocessing`.
    """


# ------------------------------------------------------------------ refusals of the records
# What encode and encode_label say about bad records: the kind of problem and the public rule only, never a
# row, a value, a count or which column, so that the text is the same on neighbouring data sets. The
# non-private pdpkit.check.check_nonprivate names the rows. The kinds are refused in this order.
_FEATURE_TEXT = "a numeric feature cell is not a number (text in a column the schema makes numeric)"
_FEATURE_INFINITE = "a numeric feature cell is infinite (a value must be a finite number, or missing)"
_FEATURE_MISSING = ("a feature value is missing (NaN, None or pandas.NA) and the schema's handle_missing is 'error' "
                    "(set handle_missing='zero' to encode a missing value as 0: a numeric column's midpoint, a "
                    "categorical column's all-zero block)")
_FEATURE_UNKNOWN = ("a categorical feature value is outside the schema's domain and the schema's handle_unknown is "
                    "'error' (add the value to the column's categories if it is public, or set "
                    "handle_unknown='zero' to encode a value outside the domain as all zeros)")
_REFUSAL_ORDER = (_FEATURE_TEXT, _FEATURE_INFINITE, _FEATURE_MISSING, _FEATURE_UNKNOWN)
_LABEL_TEXT = "a label cell is not a number"
_LABEL_INFINITE = "a label cell is infinite"
_LABEL_MISSING = "a label cell is missing"
_LABEL_UNKNOWN = "a label is not one of the schema's label classes"
#: How every refusal of the records ends (the command line replaces it with ``pdpkit check DATA ...``).
FIND_ROWS_PREFIX = "; find the rows with pdpkit.check.check_nonprivate("


def _find_rows(label: bool) -> str:
    """The end of a refusal: where the curator finds the rows (a non-private diagnostic)."""
    call = "X, y, schema=schema" if label else "X, schema=schema"
    return f"{FIND_ROWS_PREFIX}{call}), a non-private diagnostic for the curator (never publish its output)"


def _is_draft_note(note: Any) -> bool:
    """Whether a schema's note still says it is a non-private draft ("NON-PRIVATE DRAFT", in any case)."""
    return isinstance(note, str) and _DRAFT_MARK in note.upper()


def _refusal_rank(exc: Exception) -> int | None:
    """The place of a feature refusal in the fixed order of kinds (``None``: not a refusal of the records)."""
    text = str(exc)
    return next((i for i, m in enumerate(_REFUSAL_ORDER) if text.startswith(m)), None)


# ------------------------------------------------------------------ value checks
def _number(value: Any, where: str) -> float:
    """A finite real number (not a bool, not text)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{where} must be a number; got {type(value).__name__} {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{where} must be finite; got {value!r}")
    return v


def canonical_text(value: Any) -> str:
    """The text a categorical value is compared as (see the module docstring)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if f.is_integer() and abs(f) < 2.0**53:
            return str(int(f))
        return repr(f)
    return str(value)


# ------------------------------------------------------------------ columns
@dataclass(frozen=True)
class Column:
    """One column of a table: its name, its role, its kind and its public range or domain.

    Parameters
    ----------
    name : str
        The column's name, as in the table's header.
    role : {"feature", "label", "ignore"}
        A model input, the label, or a column the model never sees (an identifier, free text).
    kind : {"numeric", "categorical"}
        A number (encoded from its bounds) or one of a public list of values (one-hot).
    low, high : float or None
        Public bounds of a numeric column, ``low < high``; required for a numeric feature or
        label, not allowed for a categorical column. Values outside are clipped to them.
    categories : tuple of str or None
        Public domain of a categorical column: distinct, non-empty strings, in the order of
        the one-hot encoding (or of the label's classes). Required for a categorical feature
        (at least one value) or label (at least two); not allowed for a numeric column.
    """

    name: str
    role: str = "feature"
    kind: str = "numeric"
    low: float | None = None
    high: float | None = None
    categories: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"a column's name must be a non-empty string; got {self.name!r}")
        where = f"column {self.name!r}"
        if self.role not in _ROLES:
            raise ValueError(f"{where}: role must be one of {_ROLES}; got {self.role!r}")
        if self.kind not in _KINDS:
            raise ValueError(f"{where}: kind must be one of {_KINDS}; got {self.kind!r}")
        if self.kind == "numeric":
            if self.categories is not None:
                raise ValueError(f"{where}: a numeric column has no categories (set kind='categorical', or "
                                 "remove categories)")
            given = [b is not None for b in (self.low, self.high)]
            if any(given) and not all(given):
                raise ValueError(f"{where}: give both low and high, or neither")
            if all(given):
                low = _number(self.low, f"{where}: low")
                high = _number(self.high, f"{where}: high")
                if not low < high:
                    raise ValueError(f"{where}: low must be smaller than high; got low={low!r}, high={high!r}")
                if not math.isfinite(high - low):
                    raise ValueError(f"{where}: high - low must be a finite float; got low={low!r}, high={high!r}")
                object.__setattr__(self, "low", low)
                object.__setattr__(self, "high", high)
            elif self.role != "ignore":
                raise ValueError(f"{where}: a numeric {self.role} needs public bounds low and high (a range "
                                 "known without the data)")
        else:
            if self.low is not None or self.high is not None:
                raise ValueError(f"{where}: a categorical column has no low/high bounds (set kind='numeric', "
                                 "or remove them)")
            if self.categories is None:
                if self.role != "ignore":
                    raise ValueError(f"{where}: a categorical {self.role} needs its public domain categories")
            else:
                if isinstance(self.categories, str) or not isinstance(self.categories, Iterable):
                    raise TypeError(f"{where}: categories must be a list of strings; got {self.categories!r}")
                cats = tuple(self.categories)
                for c in cats:
                    if not isinstance(c, str) or not c:
                        raise TypeError(f"{where}: every category must be a non-empty string; got {c!r} (write "
                                        "numbers as text, e.g. \"1\")")
                if len(set(cats)) != len(cats):
                    dup = next(c for c in cats if cats.count(c) > 1)
                    raise ValueError(f"{where}: category {dup!r} appears twice")
                minimum = 2 if self.role == "label" else 1
                if len(cats) < minimum:
                    raise ValueError(f"{where}: a categorical {self.role} needs at least {minimum} "
                                     f"categor{'ies' if minimum > 1 else 'y'}; got {len(cats)}")
                object.__setattr__(self, "categories", cats)

    @property
    def encoded_names(self) -> tuple[str, ...]:
        """The names of this column's encoded features: ``name``, or ``name=value`` per category."""
        if self.kind == "numeric":
            return (self.name,)
        return tuple(f"{self.name}={c}" for c in (self.categories or ()))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (fields that are ``None`` are left out)."""
        out: dict[str, Any] = {"name": self.name, "role": self.role, "kind": self.kind}
        if self.low is not None:
            out["low"] = self.low
            out["high"] = self.high
        if self.categories is not None:
            out["categories"] = list(self.categories)
        return out

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "column") -> Column:
        """Inverse of :meth:`to_dict`, strict: an error names the offending field.

        Parameters
        ----------
        data : dict
            ``name`` (required), ``role`` (default ``"feature"``), ``kind`` (default
            ``"numeric"``), ``low``/``high``, ``categories``.
        where : str
            How error messages name this column's dict (e.g. ``"columns[2]"``).
        """
        check_json_keys(data, where, required=("name",), optional=("role", "kind", "low", "high", "categories"))
        name = data["name"]
        if not isinstance(name, str) or not name:
            raise TypeError(f"{where}.name must be a non-empty string; got {name!r}")
        for key in ("role", "kind"):
            if key in data and not isinstance(data[key], str):
                raise TypeError(f"{where}.{key} must be a string; got {data[key]!r}")
        for key in ("low", "high"):
            if data.get(key) is not None:
                _number(data[key], f"{where}.{key}")
        cats = data.get("categories")
        if cats is not None:
            if not isinstance(cats, list):
                raise TypeError(f"{where}.categories must be a list of strings; got {type(cats).__name__}")
            for j, c in enumerate(cats):
                if not isinstance(c, str):
                    raise TypeError(f"{where}.categories[{j}] must be a string; got {c!r} (write numbers as "
                                    "text, e.g. \"1\")")
            cats = tuple(cats)
        try:
            return cls(name=name, role=data.get("role", "feature"), kind=data.get("kind", "numeric"),
                       low=data.get("low"), high=data.get("high"), categories=cats)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{where}: {exc}") from None


# ------------------------------------------------------------------ the schema
@dataclass(frozen=True)
class Schema:
    r"""The public description of a table: its columns, and the rules for unforeseen values.

    Parameters
    ----------
    columns : sequence of Column
        Every column the model may see; names unique, at least one feature, at most one
        label. Columns of a table that the schema does not name are never read.
    handle_unknown : {"error", "zero"}
        A categorical feature's value outside its domain: refused (default), or encoded
        as the all-zero block.
    handle_missing : {"error", "zero"}
        A missing feature value (``None``, ``NaN``, ``pandas.NA``): refused (default), or
        encoded as 0 (a numeric column's midpoint, a categorical column's all-zero block).
    note : str or None
        Free text kept with the schema (a drafted schema's warning, :data:`DRAFT_NOTE`).
    nonprivate_draft : bool
        ``True`` for a schema read from the data by :func:`draft_schema_nonprivate`, until a
        person has reviewed it: its bounds and domains are then not public knowledge.
    """

    columns: tuple[Column, ...]
    handle_unknown: str = "error"
    handle_missing: str = "error"
    note: str | None = None
    nonprivate_draft: bool = False
    _index: dict[str, int] = field(default=None, init=False, repr=False, compare=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if isinstance(self.columns, (str, Column)) or not isinstance(self.columns, Iterable):
            raise TypeError("columns must be a sequence of Column objects")
        cols = tuple(self.columns)
        for c in cols:
            if not isinstance(c, Column):
                raise TypeError(f"columns must hold Column objects; got {type(c).__name__}")
        object.__setattr__(self, "columns", cols)
        names = [c.name for c in cols]
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise ValueError(f"column {dup!r} appears twice in the schema")
        if not any(c.role == "feature" for c in cols):
            raise ValueError("a schema needs at least one column with role 'feature'")
        labels = [c.name for c in cols if c.role == "label"]
        if len(labels) > 1:
            raise ValueError(f"a schema has at most one label column; got {labels}")
        for key in ("handle_unknown", "handle_missing"):
            if getattr(self, key) not in _POLICIES:
                raise ValueError(f"{key} must be one of {_POLICIES}; got {getattr(self, key)!r}")
        if self.note is not None and not isinstance(self.note, str):
            raise TypeError(f"note must be a string or None; got {type(self.note).__name__}")
        if not isinstance(self.nonprivate_draft, (bool, np.bool_)):
            raise TypeError(f"nonprivate_draft must be True or False; got {self.nonprivate_draft!r}")
        object.__setattr__(self, "nonprivate_draft", bool(self.nonprivate_draft))
        if not self.nonprivate_draft and _is_draft_note(self.note):  # reviewed in Python: the draft's note goes too
            object.__setattr__(self, "note", None)
        enc = self.encoded_names
        if len(set(enc)) != len(enc):
            dup = next(n for n in enc if enc.count(n) > 1)
            raise ValueError(f"two columns encode to the same feature name {dup!r}: rename a column")
        object.__setattr__(self, "_index", {c.name: i for i, c in enumerate(cols)})

    # ------------------------------------------------------------ views
    @property
    def features(self) -> tuple[Column, ...]:
        """The feature columns, in order."""
        return tuple(c for c in self.columns if c.role == "feature")

    @property
    def label(self) -> Column | None:
        """The label column, or ``None``."""
        return next((c for c in self.columns if c.role == "label"), None)

    @property
    def feature_names(self) -> tuple[str, ...]:
        """The raw feature columns' names, in order (the columns :meth:`encode` reads)."""
        return tuple(c.name for c in self.features)

    @property
    def encoded_names(self) -> tuple[str, ...]:
        """The encoded features' names: ``"age"``, ``"workclass=Private"``, ... (columns of :meth:`encode`)."""
        return tuple(n for c in self.features for n in c.encoded_names)

    @property
    def n_encoded(self) -> int:
        """The number of encoded features (columns of :meth:`encode`)."""
        return len(self.encoded_names)

    @property
    def label_classes(self) -> tuple[str, ...] | None:
        """A categorical label's classes (its public domain, in order), else ``None``."""
        lab = self.label
        return lab.categories if lab is not None and lab.kind == "categorical" else None

    @property
    def label_bounds(self) -> tuple[float, float] | None:
        """A numeric label's public bounds ``(low, high)``, else ``None``."""
        lab = self.label
        return (lab.low, lab.high) if lab is not None and lab.kind == "numeric" else None  # type: ignore[return-value]

    def column(self, name: str) -> Column:
        """The column called ``name`` (``KeyError`` naming the schema's columns if absent).

        Parameters
        ----------
        name : str
            A column's name.
        """
        try:
            return self.columns[self._index[name]]
        except KeyError:
            raise KeyError(f"the schema has no column {name!r} (columns: {', '.join(self._index)})") from None

    def select(self, *, features: Sequence[str] | None = None, drop: Sequence[str] = ()) -> Schema:
        """The same schema with fewer features: the others become ``role="ignore"``.

        Parameters
        ----------
        features : sequence of str or None
            Keep only these feature columns (each must be a feature of the schema).
        drop : sequence of str
            Make these feature columns ignored (each must be a feature of the schema).
        """
        feats = set(self.feature_names)
        keep = set(feats if features is None else features)
        for name in list(keep) + list(drop):
            if name not in feats:
                role = self.column(name).role if name in self._index else None
                raise ValueError(f"{name!r} is not a feature column of the schema"
                                 + (f" (its role is {role!r})" if role else ""))
        keep -= set(drop)
        cols = tuple(replace(c, role="ignore") if c.role == "feature" and c.name not in keep else c
                     for c in self.columns)
        return replace(self, columns=cols)

    # ------------------------------------------------------------ encoding
    def feature_columns(self, X: Any) -> list[Any]:
        """One 1-D array (or pandas Series) per feature, from a table or a 2-D array in feature order.

        Parameters
        ----------
        X : table or array_like
            A data frame with the features by name, or a 2-D array in the schema's feature order.
        """
        names = self.feature_names
        if hasattr(X, "columns") and hasattr(X, "__getitem__"):  # a pandas (or similar) data frame
            present = [str(c) for c in X.columns]
            missing = [n for n in names if n not in present]
            if missing:
                raise ValueError(f"X lacks the schema's feature column(s) {', '.join(map(repr, missing))}")
            if len(set(present)) != len(present):
                dup = next(n for n in present if present.count(n) > 1)
                raise ValueError(f"X has the column {dup!r} twice")
            by_name = {str(c): c for c in X.columns}
            return [X[by_name[n]] for n in names]
        if isinstance(X, Mapping):
            missing = [n for n in names if n not in X]
            if missing:
                raise ValueError(f"X lacks the schema's feature column(s) {', '.join(map(repr, missing))}")
            cols = [np.asarray(X[n]) for n in names]
            lengths = {c.shape[0] if c.ndim else -1 for c in cols}
            if len(lengths) != 1 or any(c.ndim != 1 for c in cols):
                raise ValueError("X's columns must be 1-D and of equal length")
            return cols
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise ValueError(f"X must be a table (a pandas DataFrame) or a 2-D array; got shape {arr.shape}")
        if arr.shape[1] != len(names):
            raise ValueError(f"X has {arr.shape[1]} columns; the schema has {len(names)} features "
                             f"({', '.join(names)}), in this order")
        return [arr[:, j] for j in range(arr.shape[1])]

    def encode(self, X: Any) -> np.ndarray:
        r"""The encoded feature rows, each of Euclidean norm at most 1, from the schema alone.

        Numeric features clipped to their bounds and mapped to :math:`[-1, 1]`, categorical
        features one-hot over their domain, the row divided by :math:`\sqrt{k}` (``k``
        feature columns); unknown and missing values as ``handle_unknown`` and
        ``handle_missing`` say (see the module docstring). A refused record raises
        ``TypeError`` (text in a numeric column) or ``ValueError`` naming the kind of problem
        only (no row, value or column); ``pdpkit.check.check_nonprivate`` names the rows.

        Parameters
        ----------
        X : pandas.DataFrame, mapping of columns, or array_like of shape (n, k)
            The records. A table is read by column name (other columns are not read); a
            2-D array must hold the :attr:`feature_names` columns in that order.

        Returns
        -------
        numpy.ndarray, shape (n, n_encoded)
            Float64 rows with :math:`\|x\|_2 \le 1`, columns named :attr:`encoded_names`.
        """
        cols = self.feature_columns(X)
        n = len(cols[0])
        out = np.zeros((n, self.n_encoded))
        j = 0
        refused: list[tuple[int, Exception]] = []
        for col, values in zip(self.features, cols, strict=True):
            width = 1 if col.kind == "numeric" else len(col.categories or ())
            try:
                if col.kind == "numeric":
                    out[:, j] = self._encode_numeric(col, values)
                else:
                    codes = self._codes(col, values, policy_unknown=self.handle_unknown, what="feature")
                    rows = np.flatnonzero(codes >= 0)
                    out[rows, j + codes[rows]] = 1.0
            except (TypeError, ValueError) as exc:
                rank = _refusal_rank(exc)
                if rank is None:
                    raise
                refused.append((rank, exc))
            j += width
        if refused:  # the first kind in a fixed order: the message does not depend on which column is bad
            raise min(refused, key=lambda item: item[0])[1]
        out /= math.sqrt(len(self.features))
        # each column adds at most 1 to the squared norm; a rounding excess (~1e-16) is shrunk away
        norms = np.sqrt(np.einsum("ij,ij->i", out, out))
        over = norms > 1.0
        if np.any(over):
            out[over] /= norms[over, None] * (1.0 + 2.0**-52)
        return out

    def _numeric_values(self, col: Column, values: Any, what: str) -> np.ndarray:
        """Floats, NaN where missing; text is a TypeError naming the column, infinity a ValueError."""
        series = as_series(values)
        import pandas as pd

        kind = pd.api.types.infer_dtype(series, skipna=True)
        if kind not in ("floating", "integer", "mixed-integer-float", "boolean", "empty", "decimal"):
            if what == "label":
                raise TypeError(f"{_LABEL_TEXT} (the schema's label {col.name!r} is numeric){_find_rows(True)}")
            raise TypeError(f"{_FEATURE_TEXT}{_find_rows(False)}")
        v = series.to_numpy(dtype=float, na_value=np.nan)
        if np.any(np.isinf(v)):
            if what == "label":
                raise ValueError(f"{_LABEL_INFINITE} (the schema's label {col.name!r} is numeric: a finite number)"
                                 f"{_find_rows(True)}")
            raise ValueError(f"{_FEATURE_INFINITE}{_find_rows(False)}")
        return v

    def _encode_numeric(self, col: Column, values: Any) -> np.ndarray:
        v = self._numeric_values(col, values, "feature")
        missing = np.isnan(v)
        if np.any(missing) and self.handle_missing == "error":
            raise ValueError(f"{_FEATURE_MISSING}{_find_rows(False)}")
        low, high = float(col.low), float(col.high)  # type: ignore[arg-type]
        t = 2.0 * ((np.clip(v, low, high) - low) / (high - low)) - 1.0
        t = np.clip(t, -1.0, 1.0)
        t[missing] = 0.0
        return t

    def _codes(self, col: Column, values: Any, *, policy_unknown: str, what: str,
               missing_ok: bool | None = None) -> np.ndarray:
        """Index of each value in ``col.categories``; -1 for a value encoded as all zeros."""
        import pandas as pd

        series = as_series(values)
        if pd.api.types.infer_dtype(series, skipna=True) in ("mixed", "mixed-integer"):
            # e.g. booleans among numbers: hashing would merge True with 1, so compare the texts
            series = series.map(lambda v: v if pd.isna(v) else canonical_text(v))
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        codes = np.asarray(codes, dtype=np.intp)
        index = {c: i for i, c in enumerate(col.categories or ())}
        lookup = np.array([index.get(canonical_text(u), -1) for u in uniques] + [-1], dtype=np.intp)
        missing = codes < 0
        mapped = lookup[codes]  # codes = -1 reads the appended -1
        unknown = (mapped < 0) & ~missing
        if missing_ok is None:
            missing_ok = self.handle_missing == "zero"
        if np.any(missing) and not missing_ok:
            if what == "label":
                raise ValueError(f"{_LABEL_MISSING} (column {col.name!r}; a label is never imputed)"
                                 f"{_find_rows(True)}")
            raise ValueError(f"{_FEATURE_MISSING}{_find_rows(False)}")
        if np.any(unknown) and policy_unknown == "error":
            if what == "label":
                shown = ", ".join(map(repr, col.categories or ()))
                raise ValueError(f"{_LABEL_UNKNOWN} [{shown}] (column {col.name!r}; add the class to the schema's "
                                 f"label categories if it is public){_find_rows(True)}")
            raise ValueError(f"{_FEATURE_UNKNOWN}{_find_rows(False)}")
        return mapped

    def encode_label(self, y: ArrayLike) -> np.ndarray:
        r"""The label in the form a model is fitted on.

        A categorical label: the index of each value in :attr:`label_classes` (``numpy.intp``);
        a value outside the domain or a missing label is refused (naming the kind of problem
        and the label's public domain, not the row or the value). A numeric label: clipped to
        :attr:`label_bounds` and mapped to :math:`[-1, 1]` by
        :math:`(2y - \text{low} - \text{high})/(\text{high} - \text{low})`; a missing or
        infinite label is refused.

        Parameters
        ----------
        y : array_like, shape (n,)
            The labels (a pandas Series, a list, a 1-D array).
        """
        lab = self._label_column()
        y = as_series(y)
        if lab.kind == "categorical":
            return self._codes(lab, y, policy_unknown="error", what="label", missing_ok=False)
        v = self._numeric_values(lab, y, "label")
        if np.any(np.isnan(v)):
            raise ValueError(f"{_LABEL_MISSING} (column {lab.name!r}; a label is never imputed){_find_rows(True)}")
        low, high = float(lab.low), float(lab.high)  # type: ignore[arg-type]
        return np.clip(2.0 * ((np.clip(v, low, high) - low) / (high - low)) - 1.0, -1.0, 1.0)

    def decode_label(self, t: ArrayLike) -> np.ndarray:
        r"""Inverse of :meth:`encode_label`: class names from indices, or values on the label's scale.

        A categorical label: ``label_classes[t]`` (an object array of strings). A numeric label:
        :math:`\text{low} + (t + 1)(\text{high} - \text{low})/2` — linear, not clipped, so that a
        prediction outside :math:`[-1, 1]` maps outside the bounds.

        Parameters
        ----------
        t : array_like, shape (n,)
            Class indices (categorical label) or encoded values (numeric label).
        """
        lab = self._label_column()
        if lab.kind == "categorical":
            idx = np.asarray(t)
            if idx.dtype.kind not in "iu":
                raise TypeError(f"t must hold integer class indices for the categorical label {lab.name!r}")
            classes = np.array(lab.categories, dtype=object)
            if np.any((idx < 0) | (idx >= classes.size)):
                raise ValueError(f"t must hold class indices in [0, {classes.size - 1}]")
            return classes[idx]
        from ._validation import as_finite_array

        v = as_finite_array(t, "t")
        low, high = float(lab.low), float(lab.high)  # type: ignore[arg-type]
        return low + (v + 1.0) * ((high - low) / 2.0)

    def _label_column(self) -> Column:
        lab = self.label
        if lab is None:
            raise ValueError("the schema has no label column (give one column role='label')")
        return lab

    # ------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``{"format": "pdpkit-schema/1", "columns": [...], ...}``."""
        out: dict[str, Any] = {"format": SCHEMA_FORMAT}
        if self.note is not None:
            out["note"] = self.note
        if self.nonprivate_draft:
            out["nonprivate_draft"] = True
        out["handle_unknown"] = self.handle_unknown
        out["handle_missing"] = self.handle_missing
        out["columns"] = [c.to_dict() for c in self.columns]
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Schema:
        """Inverse of :meth:`to_dict`, strict: an error names the offending field and its path.

        A schema is a draft (``nonprivate_draft=True``) while **either** draft mark is present:
        the field ``nonprivate_draft: true``, or a ``note`` that still says "NON-PRIVATE DRAFT"
        — deleting the field alone does not make a draft reviewed.

        Parameters
        ----------
        data : dict
            ``format`` (``"pdpkit-schema/1"``) and ``columns`` (required); ``note``,
            ``nonprivate_draft``, ``handle_unknown``, ``handle_missing`` (optional).
        """
        check_json_keys(data, "schema", required=("format", "columns"),
              optional=("note", "nonprivate_draft", "handle_unknown", "handle_missing"))
        if data["format"] != SCHEMA_FORMAT:
            raise ValueError(f"schema.format must be {SCHEMA_FORMAT!r}; got {data['format']!r}")
        cols = data["columns"]
        if not isinstance(cols, list):
            raise TypeError(f"schema.columns must be a list; got {type(cols).__name__}")
        columns = tuple(Column.from_dict(c, where=f"columns[{i}]") for i, c in enumerate(cols))
        for key in ("handle_unknown", "handle_missing"):
            if key in data and not isinstance(data[key], str):
                raise TypeError(f"schema.{key} must be a string; got {data[key]!r}")
        note = data.get("note")
        if note is not None and not isinstance(note, str):
            raise TypeError(f"schema.note must be a string; got {type(note).__name__}")
        draft = data.get("nonprivate_draft", False)
        if not isinstance(draft, bool):
            raise TypeError(f"schema.nonprivate_draft must be true or false; got {draft!r}")
        draft = draft or _is_draft_note(note)
        try:
            return cls(columns, handle_unknown=data.get("handle_unknown", "error"),
                       handle_missing=data.get("handle_missing", "error"), note=note, nonprivate_draft=draft)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"schema: {exc}") from None

    def to_json(self, **kwargs: Any) -> str:
        """The JSON text of :meth:`to_dict` (``indent=2`` unless given; NaN and infinity refused).

        Parameters
        ----------
        **kwargs
            Passed to ``json.dumps``.
        """
        kwargs.setdefault("indent", 2)
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    @classmethod
    def from_json(cls, text: str) -> Schema:
        """A schema from its JSON text, strict (:meth:`from_dict`).

        Hostile text is a ``ValueError`` naming the field (``pdpkit._json.loads_strict``): a
        key given twice, an integer of more than 19 digits, a number beyond a float's range,
        ``NaN``/``Infinity``, nesting deeper than 64.

        Parameters
        ----------
        text : str or bytes
            The JSON text.
        """
        from ._json import loads_strict

        return cls.from_dict(loads_strict(text, "the schema"))

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Schema:
        """A schema from a JSON file (UTF-8, a byte-order mark allowed).

        Parameters
        ----------
        path : str or path-like
            The file.
        """
        with open(path, encoding="utf-8-sig") as fh:
            return cls.from_json(fh.read())

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_json` (and a final newline) to ``path``.

        Parameters
        ----------
        path : str or path-like
            The file (overwritten).
        """
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.to_json() + "\n")


def as_series(values: Any):
    """A pandas Series (object or numeric) from a Series, a list or a 1-D array."""
    import pandas as pd

    if isinstance(values, pd.Series):
        return values.reset_index(drop=True)
    arr = np.asarray(values, dtype=object if not isinstance(values, np.ndarray) else None)
    if arr.ndim != 1:
        raise ValueError(f"a column must be 1-D; got shape {arr.shape}")
    return pd.Series(arr)


# ------------------------------------------------------------------ drafting (non-private)
def _nice_bounds(lo: float, hi: float) -> tuple[float, float]:
    """Bounds rounded outward to one significant digit of the larger magnitude (17, 90 -> 10, 90)."""
    m = max(abs(lo), abs(hi))
    if m == 0.0:
        return -1.0, 1.0
    step = 10.0 ** math.floor(math.log10(m))
    low, high = math.floor(lo / step) * step, math.ceil(hi / step) * step
    if not low < high:
        high = low + step
    return float(low), float(high)


def draft_schema_nonprivate(data: Any, *, label: str | None = None, ignore: Sequence[str] = (),
                            max_categories: int = 50, label_kind: str | None = None) -> Schema:
    """A draft schema read from the data — NOT private — for a person to review and correct.

    Every bound, domain and label class of the draft comes from the records themselves: a
    numeric column's range (rounded outward to one significant digit), a text column's
    distinct values. Used as they are, they leak the data (a bound is a record's value). The
    draft therefore carries ``nonprivate_draft=True`` and :data:`DRAFT_NOTE`; a
    :class:`PrivacyLeakWarning` is issued. Replace each bound and domain by public knowledge
    and set ``nonprivate_draft=False`` (in JSON: delete the note and the field) before fitting.

    Columns: ``label`` becomes the label (categorical when it holds text or at most ten
    distinct integers, numeric otherwise, unless ``label_kind`` says); ``ignore`` columns are
    ignored; a column of numbers becomes a numeric feature, except integers that are all
    distinct (an identifier), which are ignored; a text column with at most
    ``max_categories`` distinct values becomes a categorical feature, one with more is
    ignored. Missing values are skipped when reading ranges and domains.

    Parameters
    ----------
    data : pandas.DataFrame or path
        The table, or a CSV file (UTF-8, a header row; gzip-compressed files are read too).
    label : str or None
        The label column's name.
    ignore : sequence of str
        Columns the model must never see (identifiers, free text, dates).
    max_categories : int
        A text column with more distinct values than this is ignored rather than one-hot.
    label_kind : {"categorical", "numeric"} or None
        The label's kind (classification or regression); ``None`` guesses as above.

    Returns
    -------
    Schema
        The draft, with ``nonprivate_draft=True``.
    """
    import pandas as pd

    from ._validation import check_int_at_least

    max_categories = check_int_at_least(max_categories, "max_categories", 1)
    if label_kind not in (None, "categorical", "numeric"):
        raise ValueError(f"label_kind must be None, 'categorical' or 'numeric'; got {label_kind!r}")
    if isinstance(ignore, str):
        ignore = (ignore,)
    if isinstance(data, (str, os.PathLike)):
        with open(data, "rb") as fh:
            compression = "gzip" if fh.read(2) == b"\x1f\x8b" else None
        df = pd.read_csv(data, encoding="utf-8-sig", compression=compression, skipinitialspace=True)
    elif isinstance(data, pd.DataFrame):
        df = data
    else:
        raise TypeError(f"data must be a pandas DataFrame or a CSV path; got {type(data).__name__}")
    names = [str(c) for c in df.columns]
    for name, what in [(label, "label")] + [(n, "ignore") for n in ignore]:
        if name is not None and name not in names:
            raise ValueError(f"{what}: no column {name!r} (columns: {', '.join(names)})")
    columns = []
    for raw, name in zip(df.columns, names, strict=True):
        s = df[raw]
        present = s[~pd.isna(s)]
        numeric = pd.api.types.infer_dtype(present, skipna=True) in ("floating", "integer", "mixed-integer-float",
                                                                     "boolean", "empty")
        if name == label:
            values = sorted({canonical_text(v) for v in present.tolist()})
            integral = numeric and bool(np.all(np.mod(present.to_numpy(dtype=float), 1.0) == 0.0))
            kind = label_kind or ("numeric" if numeric and not (integral and len(values) <= 10) else "categorical")
            if kind == "numeric":
                if not numeric:
                    raise ValueError(f"label_kind='numeric' but column {name!r} holds text")
                lo, hi = _nice_bounds(float(present.min()), float(present.max()))
                columns.append(Column(name, role="label", kind="numeric", low=lo, high=hi))
            else:
                if len(values) < 2:
                    raise ValueError(f"the label column {name!r} holds fewer than two distinct values")
                columns.append(Column(name, role="label", kind="categorical", categories=tuple(values)))
            continue
        if name in ignore or present.size == 0:
            columns.append(Column(name, role="ignore", kind="numeric" if numeric else "categorical"))
            continue
        if numeric:
            v = present.to_numpy(dtype=float)
            if np.all(np.mod(v, 1.0) == 0.0) and np.unique(v).size == v.size and v.size >= 20:
                columns.append(Column(name, role="ignore", kind="numeric"))  # all distinct integers: an identifier
                continue
            lo, hi = _nice_bounds(float(v.min()), float(v.max()))
            columns.append(Column(name, kind="numeric", low=lo, high=hi))
        else:
            values = sorted({canonical_text(v) for v in present.tolist()} - {""})
            if 0 < len(values) <= max_categories:
                columns.append(Column(name, kind="categorical", categories=tuple(values)))
            else:
                columns.append(Column(name, role="ignore", kind="categorical"))
    warnings.warn("draft_schema_nonprivate read the bounds, domains and label classes of this schema from the "
                  "data: they are not private. Review the draft, replace them by public knowledge and set "
                  "nonprivate_draft=False before fitting or publishing anything made with it",
                  PrivacyLeakWarning, stacklevel=2)
    has_missing = bool(df.isna().to_numpy().any())
    return Schema(tuple(columns), handle_missing="zero" if has_missing else "error", note=DRAFT_NOTE,
                  nonprivate_draft=True)
