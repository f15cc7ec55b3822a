r"""The ``pdpkit`` command line: draft a schema, fit a private model from a CSV, report, predict.

::

    pdpkit schema DATA.csv [--label COL] [--ignore id,...] [--max-categories K]
                  [--label-kind categorical|numeric] --out SCHEMA.json
    pdpkit fit DATA.csv (--label COL [--classes A,B,...] | --schema SCHEMA.json)
               --epsilon E --delta D
               [--features a,b,... | --drop id,...]
               [--loss logistic|huber|robust_log] [--norm-bound R] [--row-norm raise|clip]
               [--no-intercept] [--report METHOD --report-epsilon E2 --report-delta D2]
               [--rho P] [--budget-epsilon EB --budget-delta DB] [--ledger FILE]
               [--sample-weight COL [--weight-bound W] [--weight-policy refuse|clip]]
               [--seed S] [--sign KEY] --out RELEASE.json
    pdpkit fit DATA.csv (--label COL --label-bounds LOW,HIGH | --schema SCHEMA.json)
               --model ops|adaops --epsilon E --delta D [--n-max N]
               [--features a,b,... | --drop id,...] [--norm-bound R] [--row-norm raise|clip]
               [--no-intercept] [--budget-epsilon EB --budget-delta DB] [--ledger FILE]
               [--seed S] [--sign KEY] --out RELEASE.json
    pdpkit report RELEASE.json TARGETS.csv --label COL [--schema SCHEMA.json]
                  [--sample-weight COL] [--public-key KEY.pub] --out REPORT.csv [--plot PNG]
                  [--uniform]
    pdpkit predict RELEASE.json DATA.csv [--schema SCHEMA.json]
                   [--public-key KEY.pub] --out PRED.csv
    pdpkit check DATA.csv [--schema SCHEMA.json] [--label COL] [--classes A,B,...]
                 [--norm-bound R] [--row-norm raise|clip]
                 [--features a,b,... | --drop id,...] [--delta D]
    pdpkit page RELEASE.json [--schema SCHEMA.json] [--title T] [--book-url URL]
                [--public-key KEY.pub] [--sign KEY] --out PRIVACY.html
    pdpkit keygen --out KEY [--force]
    pdpkit verify RELEASE.json [--public-key KEY.pub]
    pdpkit budget LEDGER.sqlite [--json]
    pdpkit --version

``fit`` trains :class:`pdpkit.estimators.ObjPertClassifier` (``--loss logistic``: a
categorical label whose public classes are ``--classes`` or the schema's label domain —
never read from the data, which would reveal who is in it; a logistic fit without them is
refused before any data row is read; cells are compared with the classes as text, so
classes equal as numbers, ``--classes 1,1.0``, are refused) or :class:`pdpkit.estimators.ObjPertRegressor`
(``huber``/``robust_log``: a numeric label) and writes the publishable release
(:class:`pdpkit.release.Release`: the private coefficients, the public parameters, the
guarantee and, with ``--report``, the report's noisy statistics) as JSON. ``report``
evaluates the released privacy report on any records, members or not, one output row per
input row in input order. ``predict`` applies the released model.

``fit --model ops`` or ``--model adaops`` trains :class:`pdpkit.ops_estimators.OPSRegressor`
or :class:`pdpkit.ops_estimators.AdaOPSRegressor` (linear regression by one-posterior sampling)
on a numeric label whose public bounds are ``--label-bounds`` or the schema's, and writes a
:class:`pdpkit.release.OPSRelease`; ``--n-max`` is a public bound on the number of records
(without it the number of records is treated as public and written in the release). It prints
its charge before any noise is drawn, is charged to ``--budget-epsilon``/``--ledger`` like an
ObjPert fit, and refuses the options that belong to ObjPert (``--loss``, ``--classes``,
``--report`` and its budget, ``--rho``, ``--report-share``, the planner), naming each.
``verify``, ``predict`` and ``report`` read such a release; ``report`` then writes each
record's data-independent pDP bound (:meth:`pdpkit.release.OPSRelease.per_person_epsilon`);
``page`` refuses it.

**Weights.** ``fit --sample-weight COL`` weights each record's loss by the number in column
``COL`` (finite, >= 0; the column is not a feature: it is left out of the default features,
refused in ``--features``, and with ``--schema`` it must be a column the schema ignores or does not
name). ``--weight-bound W`` (default 1) is the public bound on a weight that the guarantee
assumes, to be chosen from public knowledge; a weight above it stops the fit
(``--weight-policy refuse``, the default, before anything is charged or drawn) or is clipped to it
(``clip``). The release holds the objective divided by W (:mod:`pdpkit.release`: its λ, σ and τ
are λ/W, σ/W and τ/W) and its ``weighting`` field, and its guarantee states the bound and the
policy. ``report --sample-weight COL`` bounds each person at their own weight (times their
class's weight, the release's policy applied); without it a weighted release's bounds are at
the weight bound, which holds for every weight. ``--model ops``/``adaops`` take no weights and
refuse the three options by name. A refusal of the weights names the column and the kind of
problem (not a number, not finite, negative, above the bound), never a row, a value or a count.

**Signing.** ``keygen`` writes an Ed25519 key pair (:mod:`pdpkit.signing`): ``KEY``, the
private key (mode 0600, to keep secret), and ``KEY.pub``; it prints the public key's
fingerprint, which the publisher lists wherever readers find the releases. ``fit --sign KEY``
signs the release (:meth:`pdpkit.release.Release.sign`) and ``page --sign KEY`` the page.
``verify`` reads a release as ``predict`` and ``report`` do — every field checked, the
guarantee recomputed, a signature checked against the key it names — and prints the
guarantee, the release's fingerprint, its signer and whether its noise came from a seed; with
``--public-key KEY.pub`` the release must be signed by that key (exit status 2 otherwise,
naming the field or the signature). Without a key it says whether the file is unsigned or
signed but unchecked, and which fingerprint to compare with the publisher's list.
``predict``, ``report`` and ``page`` take ``--public-key`` too and refuse a release the key
did not sign. A ``--schema`` given to them must be the release's own schema when the release
carries one (the same bounds and domains): a differing one is refused, never used instead.
Release and schema files are read strictly (``pdpkit._json.loads_strict``): a key given
twice, an integer of more than 19 digits, a number beyond a float's range, ``NaN``, nesting
deeper than 64 are refused naming the field.

**Features.** Without a schema, every column but the label is a numeric feature, or the
columns of ``--features``, or all but those of ``--drop``. With ``--schema`` (a
:class:`pdpkit.schema.Schema` in JSON), the schema says which columns are features, the
label and which are ignored, and encodes each record from its public bounds and domains
alone — numeric columns mapped to :math:`[-1, 1]`, categorical columns one-hot — into the
ball of radius ``--norm-bound``: no statistic of the data is used and no row is ever
clipped. A numeric label with public bounds is scaled to :math:`[-1, 1]` for the fit and
predictions are mapped back. ``pdpkit schema`` drafts a schema from the data for a person
to review: the draft is **not private** (its bounds and domains are read from the records),
says so in its ``"note"`` and ``"nonprivate_draft"`` fields, and ``fit`` refuses it until
both are deleted (a note that still says "NON-PRIVATE DRAFT" keeps it a draft). With a
schema, an empty cell or ``NA``, ``N/A``, ``NaN``, ``nan``, ``null``, ``NULL`` is a missing
value (unless the text is in the column's domain), handled
as the schema's ``handle_missing`` says.

**Budget.** ``--budget-epsilon``/``--budget-delta`` create a
``pdpkit.accountant.PrivacyAccountant`` that the fit (and its report) is charged to; a
fit that would exceed the budget is refused before any noise is drawn. With
``--ledger FILE`` the budget lives in a ledger file (:mod:`pdpkit.ledger`, SQLite): the
first command creates it with ``--budget-epsilon``/``--budget-delta``, every later one
(in any shell or process) charges the same file, and ``fit`` prints what remains.
``budget FILE`` shows the ledger: the budget, each entry with its own (ε, δ), the total.

Bad input stops with a one-line message, exit status 2, and writes no output file. A
problem of the header (a missing column) names the columns; a problem of the rows (a cell
that is not a finite number, a row beyond the norm bound under ``raise``, a label outside
the classes, a value outside the schema's domain, a row of another width, a byte that is
not UTF-8) names only its kind and the public constraint — never a row, a value, a count or
which column — so that the message is the same on neighbouring data sets, and ends with the
``pdpkit check`` command that finds the rows. ``pdpkit check`` is that diagnostic: it reads
the data as ``fit`` does and prints every row a fit would refuse, its column and value
(rows numbered from 1, the header not counted), and the leak heuristics of
:func:`pdpkit.check.leak_heuristics_nonprivate`. Its output is **not private**: it is for
the curator, never to publish. ``fit --seed`` makes the release reproducible by anyone who
knows the seed: it is private only while the seed stays secret, and ``fit`` says so.

CSV files are read as UTF-8 (a byte-order mark is dropped; gzip-compressed files are read
transparently); every column must have a name, each name once, and a file with a header
and no data row is refused. A file without quoted fields is scanned a block at a time and
parsed by pandas' C reader a block of rows at a time straight into float64 columns: ``fit``
peaks at about 2.3x the float64 data above start-up (at most 4x; a 10^6-row, 50 MB file of
5 numeric features and a label takes about 110 MB), less than ``pandas.read_csv`` followed
by the estimator. A file that quotes fields is read by Python's ``csv`` module and needs
several times more. Rows beyond the norm bound are measured without overflow (an entry above
1.3e154 does not make a row's norm infinite or its clipped row zero).

Every output path is checked before any work starts (not an input file, not a directory,
not an existing read-only file, a name the file system takes, in an existing writable
directory) and every output is written atomically (a temporary file
``.pdpkit-PID-*.tmp`` in the same directory, then renamed) with the usual permissions
(``0o666 & ~umask``). Ctrl-C (exit status 130) and SIGTERM (143) stop with one line and
leave neither a partial output nor a temporary file; the temporary files of a process
killed without warning (``kill -9``) are removed by the next run writing in that directory
once they are an hour old (never those of a live process).

``page`` writes the release's privacy page (:func:`pdpkit.page.privacy_page`): one HTML file
on which anyone computes their own bound in the browser, offline.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import csv
import gzip
import io
import math
import os
import re
import shlex
import signal
import stat
import sys
import tempfile
import threading
import time
import warnings
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

import numpy as np

from ._display import fmt_up
from ._validation import clip_factors, row_norms

__all__ = ["main", "read_csv", "build_parser"]

#: Cell texts that mean "missing" in a column read through a schema (unless in its domain).
_NA_TEXT = ("", "NA", "N/A", "NaN", "nan", "null", "NULL")
#: The refusal of a logistic fit without public classes (before any data row is read).
_NEED_CLASSES = ("--classes: give the public list of classes (e.g. --classes no,yes), or a --schema whose label is "
                 "categorical; classes read from the data would reveal who is in it")



class CLIError(Exception):
    """A user error: printed as one line, exit status 2."""


class _RowError(CLIError):
    """A refusal of a file's rows: the kind of problem and the public constraint, never a row, value or count.

    Its text is the same on neighbouring data sets (the offending record elsewhere, with another
    value, one more or one fewer, in another column of the same kind). :func:`main` ends it with
    the ``pdpkit check`` command that names the rows (non-private, for the curator); ``detail``
    is what that command prints for a file it cannot read (it may name a line).
    """

    def __init__(self, path: str, text: str, *, detail: str | None = None) -> None:
        self.path, self.text, self.detail = path, text, detail
        super().__init__(f"{path}: {text}; {_find_rows([path])}")


def _find_rows(check_argv: Sequence[str], before: str = "") -> str:
    """How a refusal of the rows ends: the non-private command that names them."""
    return (f"to find the rows, {before}run the non-private diagnostic (it names rows and values: for the curator "
            f"only, never publish its output): {shlex.join(['pdpkit', 'check', *check_argv])}")


# ------------------------------------------------------------------ reading
#: Bytes read at a time when a CSV is scanned (the scan holds about one block, never the whole file).
_SCAN_BLOCK = 1 << 20
#: Bytes of CSV text pandas parses at a time (its rows go straight into preallocated columns).
_PARSE_BYTES = 1 << 20
#: The bytes a blank row consists of (spaces, commas, tabs, form feeds, vertical tabs; the line break).
_BLANK_BYTES = np.zeros(256, dtype=bool)
_BLANK_BYTES[[ord(c) for c in " ,\t\f\v\n"]] = True


class _Table:
    """A CSV's data rows: each column's floats when pandas read it as numbers, each cell's text on demand.

    ``table[name]`` is the column's cells as stripped strings (a pandas Series, computed once);
    ``table.numbers(name)`` its floats (read-only) when pandas read every cell of the column as
    a number or an empty cell (NaN), else ``None``. A column read as numbers is read again as
    text, from the file, only when its text is asked for.
    """

    def __init__(self, header: list[str], n: int, *, numbers: dict[int, np.ndarray], texts: dict[int, np.ndarray],
                 reread: Callable[[int], np.ndarray] | None, strip: bool) -> None:
        import pandas as pd

        self.columns = header
        self.index = pd.RangeIndex(n)
        self._numbers = numbers
        self._texts = texts
        self._reread = reread
        self._strip = strip
        self._cache: dict[str, Any] = {}

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.index), len(self.columns))

    def numbers(self, name: str) -> np.ndarray | None:
        return self._numbers.get(self.columns.index(name))

    def __getitem__(self, name: str) -> Any:
        if name not in self._cache:
            import pandas as pd

            j = self.columns.index(name)
            cells = self._texts.get(j)
            if cells is None:
                cells = self._reread(j)  # type: ignore[misc]
            col = pd.Series(cells, dtype=object).astype(str)
            self._cache[name] = col.str.strip() if self._strip else col
        return self._cache[name]


def _source(path: str) -> str | bytes:
    """What the reader reads (several times): a regular file's path, or the bytes of a pipe or a FIFO (read once)."""
    try:
        if os.path.isfile(path):
            return path
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise CLIError(f"{path}: {exc.strerror or exc}") from None


def _binary(source: str | bytes) -> IO[bytes]:
    return io.BytesIO(source) if isinstance(source, bytes) else open(source, "rb")


def _open_binary(source: str | bytes, path: str) -> tuple[IO[bytes], str | None]:
    """The file's bytes as a stream (decompressed when gzip: magic bytes 1f 8b) and pandas' compression name."""
    try:
        fh = _binary(source)
    except OSError as exc:
        raise CLIError(f"{path}: {exc.strerror or exc}") from None
    if fh.read(2) == b"\x1f\x8b":
        fh.seek(0)
        return gzip.GzipFile(fileobj=fh, mode="rb"), "gzip"
    fh.seek(0)
    return fh, None


def _gzip_error(path: str) -> CLIError:
    return CLIError(f"{path}: a gzip file that cannot be decompressed (truncated or corrupt)")


def _scan(path: str, source: str | bytes) -> dict[str, Any] | None:
    """One streaming pass over a CSV's bytes, a block at a time: its header and its lines' shape.

    Returns ``None`` when the file quotes a field (read by Python's ``csv`` module instead). Else
    a dict: ``header`` (the stripped names), ``width``, ``lines`` (physical lines after the
    header), ``blank`` (a bool per line: only spaces, commas, tabs; ``None`` when none is),
    ``rows`` (the lines that are not blank), ``longest`` (characters of the longest line),
    ``strip`` (a cell may end in white space), ``compression``. Line breaks are ``\\n``,
    ``\\r\\n`` or ``\\r``; a UTF-8 byte-order mark is dropped. Refuses (naming the file, and
    in the ``detail`` the line) an empty file, bytes that are not UTF-8, a row of another width.
    """
    fh, compression = _open_binary(source, path)
    header: list[str] | None = None
    width = 0
    line = 1  # physical lines before the block's first line (the header is line 1)
    rows = 0
    blanks: list[np.ndarray] = []
    any_blank = False
    longest = 0
    strip = False
    empty = True
    wrong = 0
    first_wrong: tuple[int, int, int] | None = None  # (row, line, cells)
    pending: list[bytes] = []
    first = True
    with fh, getattr(fh, "fileobj", None) or contextlib.nullcontext():
        while True:
            try:
                block = fh.read(_SCAN_BLOCK)
            except (OSError, EOFError, zlib.error):
                raise _gzip_error(path) from None
            if first:
                first = False
                if block.startswith(codecs.BOM_UTF8):
                    block = block[len(codecs.BOM_UTF8):]
            eof = not block
            if not eof and b"\n" not in block and b"\r" not in block:
                pending.append(block)
                continue
            data = b"".join([*pending, block])
            pending = []
            hold = b""
            if not eof and data.endswith(b"\r"):  # (a \r\n may be split between two blocks)
                hold, data = b"\r", data[:-1]
            if b"\r" in data:
                data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            if eof:
                body = data if not data or data.endswith(b"\n") else data + b"\n"
            else:
                cut = data.rfind(b"\n")
                body = data[:cut + 1]
                pending = [data[cut + 1:] + hold] if cut + 1 < len(data) or hold else []
            if body:
                if empty and body.strip():
                    empty = False
                if b'"' in body:
                    return None
                if not body.isascii():
                    try:
                        body.decode("utf-8")
                    except UnicodeDecodeError as exc:
                        at = line + body.count(b"\n", 0, exc.start)
                        raise _RowError(path, "a byte is not UTF-8; the file must be UTF-8 encoded (convert it, e.g. "
                                        "iconv -f latin1 -t utf-8)",
                                        detail=f"line {at}: byte 0x{body[exc.start]:02x} is not UTF-8") from None
                if header is None:
                    end = body.index(b"\n")
                    head = body[:end].decode("utf-8")
                    header = [h.strip() for h in head.split(",")]
                    width = len(header)
                    strip = "\t" in head or head.endswith(" ") or " ," in head
                    longest = len(head)
                    body = body[end + 1:]
                if body:
                    strip = strip or b"\t" in body or b" ," in body or b" \n" in body
                    b = np.frombuffer(body, dtype=np.uint8)
                    ends = np.flatnonzero(b == 10)
                    commas = np.cumsum(b == 44, dtype=np.int64)[ends]
                    cells = np.diff(commas, prepend=0) + 1
                    filled = np.cumsum(~_BLANK_BYTES[b], dtype=np.int64)[ends]
                    blank = np.diff(filled, prepend=0) == 0
                    del b
                    if not body.isascii():  # characters, not bytes
                        longest = max(longest, max(map(len, body.decode("utf-8").split("\n"))))
                    else:
                        longest = max(longest, int(np.max(np.diff(ends, prepend=-1))) - 1)
                    bad = np.flatnonzero(~blank & (cells != width))
                    if bad.size:
                        if first_wrong is None:
                            k = int(bad[0])
                            first_wrong = (rows + int(np.count_nonzero(~blank[:k])) + 1, line + k + 1, int(cells[k]))
                        wrong += int(bad.size)
                    any_blank = any_blank or bool(blank.any())
                    blanks.append(blank)
                    rows += int(blank.size - np.count_nonzero(blank))
                    line += int(ends.size)
            if eof:
                break
    if empty or header is None:
        raise CLIError(f"{path}: the file is empty (a header row is needed)")
    if first_wrong is not None:
        row, at, n_cells = first_wrong
        raise _RowError(path, f"a row has another number of cells than the header ({width})",
                        detail=f"row {row} (line {at}) has {n_cells} cells, the header has {width}"
                        + (f" ({wrong - 1} more such rows)" if wrong > 1 else ""))
    return {"header": header, "width": width, "lines": line - 1, "rows": rows,
            "blank": np.concatenate(blanks) if any_blank else None, "longest": longest, "strip": strip,
            "compression": compression, "source": source}


def _pandas_chunks(path: str, scan: dict[str, Any], **options: Any) -> Iterator[tuple[Any, np.ndarray | None]]:
    """The data lines parsed by pandas' C reader, a block of lines at a time, with the block's non-blank lines."""
    import pandas as pd

    per_line = max(1, scan["longest"] + 1)
    chunk = int(min(max(_PARSE_BYTES // per_line, 1024), 1 << 20))
    blank = scan["blank"]
    p = 0
    try:
        with _binary(scan["source"]) as fh, pd.read_csv(
                fh, header=None, skiprows=1, compression=scan["compression"], encoding="utf-8",
                skip_blank_lines=False, skipinitialspace=True, engine="c", chunksize=chunk, **options) as reader:
            for part in reader:
                m = part.shape[0]
                keep = None if blank is None else ~blank[p:p + m]
                p += m
                yield part, keep
    except (OSError, EOFError, zlib.error):
        raise _gzip_error(path) if scan["compression"] else CLIError(f"{path}: cannot be read") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise _RowError(path, "not a readable CSV", detail=f"not a readable CSV ({exc})") from None
    if p != scan["lines"]:
        raise _RowError(path, "not a readable CSV (the lines and the parsed rows disagree)",
                        detail="not a readable CSV (the lines and the parsed rows disagree)")


def _parse_unquoted(path: str, scan: dict[str, Any], text_columns: Sequence[int]) -> _Table:
    """The rows of a file without quotes, by pandas' C reader, straight into one float64 array per column.

    A column whose every block pandas reads as numbers (an empty cell is NaN) is kept as
    floats; one whose blocks are all text as text (the columns ``text_columns`` are read as
    text from the start); any other is read again as text when its text is asked for.
    """
    width, n = scan["width"], scan["rows"]
    numbers: dict[int, np.ndarray] = {}
    texts: dict[int, list[np.ndarray]] = {}
    mixed: set[int] = set()
    q = 0
    text_columns = set(text_columns)
    options = dict(names=range(width), keep_default_na=False,
                   na_values={j: [""] for j in range(width) if j not in text_columns},
                   dtype={j: str for j in text_columns} or None)
    for part, keep in _pandas_chunks(path, scan, **options):
        k = part.shape[0] if keep is None else int(np.count_nonzero(keep))
        for j in range(width):
            if j in mixed:
                continue
            col = part[j]
            if col.dtype.kind in "iuf" and j not in texts:
                v = col.to_numpy(dtype=float)
                if j not in numbers:
                    numbers[j] = np.empty(n)
                numbers[j][q:q + k] = v if keep is None else v[keep]
            elif col.dtype.kind not in "iufb" and j not in numbers:
                v = col.to_numpy(dtype=object, na_value="")  # (an empty cell: NaN in a column of numbers)
                texts.setdefault(j, []).append(v if keep is None else v[keep])
            else:  # numbers in one block, text in another (or booleans): read again as text if needed
                mixed.add(j)
                numbers.pop(j, None)
                texts.pop(j, None)
        q += k
    for v in numbers.values():
        v.flags.writeable = False
    joined = {j: np.concatenate(v) if v else np.empty(0, dtype=object) for j, v in texts.items()}

    def reread_text(j: int) -> np.ndarray:
        out = []
        for part, keep in _pandas_chunks(path, scan, usecols=[j], dtype=str, keep_default_na=False,
                                         na_filter=False):
            v = part.iloc[:, 0].to_numpy(dtype=object)
            out.append(v if keep is None else v[keep])
        return np.concatenate(out) if out else np.empty(0, dtype=object)

    return _Table(scan["header"], n, numbers=numbers, texts=joined, reread=reread_text, strip=scan["strip"])


def _check_header(path: str, header: list[str]) -> None:
    """Every column named, each name once."""
    for j, h in enumerate(header, start=1):
        if not h:
            raise CLIError(f"{path}: column {j} of the header has no name (a blank or white-space name); name every "
                           "column (or remove the column)")
    first: dict[str, int] = {}
    for j, h in enumerate(header, start=1):
        if h in first:
            raise CLIError(f"{path}: column {h!r} appears twice in the header (columns {first[h]} and {j}); "
                           "column names must be unique")
        first[h] = j


def _read_quoted(path: str, source: str | bytes) -> tuple[_Table, np.ndarray]:
    """A file that quotes fields, read by Python's ``csv`` module (a quoted line break keeps the lines right)."""
    text = _read_text(path, source)
    if not text.strip():
        raise CLIError(f"{path}: the file is empty (a header row is needed)")
    reader = csv.reader(io.StringIO(text, newline=""))
    del text
    rows: list[list[str]] = []
    starts: list[int] = []
    try:
        previous = 0
        for r in reader:
            rows.append(r)
            starts.append(previous + 1)
            previous = reader.line_num
    except csv.Error as exc:
        raise _RowError(path, "not a readable CSV (a quoted field is not closed, or a field is too large)",
                        detail=f"line {reader.line_num}: not a readable CSV ({exc})") from None
    header = [h.strip() for h in rows[0]]
    _check_header(path, header)
    body = [(r, ln) for r, ln in zip(rows[1:], starts[1:], strict=True) if any(c.strip() for c in r)]
    del rows
    for i, (r, ln) in enumerate(body, start=1):
        if len(r) != len(header):
            raise _RowError(path, f"a row has another number of cells than the header ({len(header)})",
                            detail=f"row {i} (line {ln}) has {len(r)} cells, the header has {len(header)}")
    texts = {j: np.array([r[j] for r, _ in body], dtype=object) for j in range(len(header))}
    lines = np.array([ln for _, ln in body], dtype=np.int64)
    return _Table(header, len(body), numbers={}, texts=texts, reread=None, strip=True), lines


def _read_table(path: str, text_columns: Sequence[str] = (), *, all_text: bool = False) -> tuple[_Table, np.ndarray]:
    """Read a CSV with a header: its data rows (a :class:`_Table`) and the line each row starts on.

    Rows whose cells are all blank are dropped; the others must have as many cells as the
    header. A file without quotes is scanned a block at a time, then parsed by pandas' C
    reader a block of rows at a time straight into one float64 array per numeric column (the
    columns ``text_columns``, or every column with ``all_text``, are kept as text): the memory
    is about that of the numbers, never a copy of the file's text. A file that quotes fields is read by Python's ``csv`` module
    (a quoted line break keeps the line numbers right). Raises :class:`CLIError` naming the
    file (and the line or row): an empty file, a header without data rows, a blank or
    duplicate column name, a row of another width, a field beyond the ``csv`` module's size
    limit, bytes that are not UTF-8.
    """
    limit = csv.field_size_limit()
    source = _source(path)
    scan = _scan(path, source)
    if scan is None:
        table, lines = _read_quoted(path, source)
    else:
        header = scan["header"]
        _check_header(path, header)
        if scan["rows"]:
            text = range(len(header)) if all_text else [header.index(c) for c in text_columns if c in header]
            table = _parse_unquoted(path, scan, text)
        else:
            table = _Table(header, 0, numbers={}, texts={}, reread=None, strip=False)
        blank = scan["blank"]
        lines = np.arange(2, scan["lines"] + 2, dtype=np.int64) if blank is None else np.flatnonzero(~blank) + 2
    if table.shape[0] == 0:
        raise CLIError(f"{path}: no data rows (the file has a header and nothing else)")
    if scan is not None and scan["longest"] > limit:  # (csv enforces the limit on a quoted file)
        for name in table.columns:
            too_long = np.flatnonzero(table[name].str.len().to_numpy() > limit)
            if too_long.size:
                raise _RowError(path, f"not a readable CSV (a field is larger than the CSV reader's limit of {limit} "
                                "characters)", detail=f"line {int(lines[too_long[0]])}, column {name!r}: not a "
                                f"readable CSV (field larger than field limit ({limit}))")
    return table, lines


def _numeric_cells(frame: Any, name: str, *, missing_ok: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One column as floats (NaN where missing or not a number), the cells that are not numbers, not finite.

    A cell is missing (with ``missing_ok``) when its text is one of :data:`_NA_TEXT`; ``nan``
    (any case, signed) and infinities are not finite.
    """
    import pandas as pd

    n = frame.shape[0]
    fast = frame.numbers(name) if isinstance(frame, _Table) else None
    if fast is not None and np.all(np.isfinite(fast)):
        return fast, np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    s = frame[name]
    v = np.array(pd.to_numeric(s, errors="coerce"), dtype=float) if n else np.empty(0)
    nan = np.flatnonzero(np.isnan(v))  # only these cells are looked at as text (few, or an error)
    missing = np.zeros(n, dtype=bool)
    text_nan = np.zeros(n, dtype=bool)
    if nan.size:
        cells = s.iloc[nan]
        if missing_ok:
            missing[nan] = cells.isin(_NA_TEXT).to_numpy()
        text_nan[nan] = cells.str.lower().isin(("nan", "+nan", "-nan")).to_numpy()
    not_number = np.isnan(v) & ~text_nan & ~missing
    not_finite = (np.isinf(v) | text_nan) & ~missing
    v[missing] = np.nan
    return v, not_number, not_finite


def _numeric(frame: Any, names: Sequence[str], path: str, *, missing_ok: bool = False,
             what: str = "numeric feature") -> np.ndarray:
    """The columns ``names`` as floats; NaN for a missing cell when ``missing_ok``.

    A cell that is not a number, then one that is not finite, anywhere in these columns, is a
    :class:`_RowError` naming the kind of problem only (``what``: ``"numeric feature"`` or
    ``"label"``): not the row, the column or the value, so that the text does not depend on
    which records are bad. ``pdpkit check`` names them.
    """
    n = frame.shape[0]
    X = np.empty((n, len(names)))
    not_number = not_finite = False
    for j, name in enumerate(names):
        X[:, j], bad_number, bad_finite = _numeric_cells(frame, name, missing_ok=missing_ok)
        not_number = not_number or bool(np.any(bad_number))
        not_finite = not_finite or bool(np.any(bad_finite))
    if not_number:
        raise _RowError(path, f"a {what} cell is not a number (" + ("text where the column needs a number)"
                                                                    if missing_ok else "text, or an empty cell)"))
    if not_finite:
        raise _RowError(path, f"a {what} cell is not a finite number (NaN or infinity)")
    return X


def read_csv(path: str, *, label: str | None, feature_names: Sequence[str] | None = None,
             label_required: bool = True) -> tuple[np.ndarray, np.ndarray | None, list[str]]:
    """Read a CSV with a header: features as floats (validated), the label column as strings.

    Parameters
    ----------
    path : str
        The CSV file (UTF-8 with or without a byte-order mark; gzip-compressed or not).
    label : str or None
        The label column's name (``None``: no label).
    feature_names : sequence of str or None
        The feature columns, in this order; ``None``: every column but the label.
    label_required : bool
        A missing label column is an error (``True``) or means "no labels" (``False``).

    Returns
    -------
    X : numpy.ndarray, shape (n, d)
        The features.
    y : numpy.ndarray of str or None
        The label's cells.
    names : list of str
        The feature columns' names.

    A missing column raises a ``CLIError`` naming the file and the column; an empty or
    non-numeric cell, NaN or infinity one naming the file and the kind of problem only (not
    the row, the column or the value: ``pdpkit check PATH`` names them, non-privately).
    """
    frame, _ = _read_table(path)
    header = list(frame.columns)
    if label is not None and label not in header:
        if label_required:
            raise CLIError(f"{path}: no column {label!r} (columns: {', '.join(header)})")
        label = None
    if feature_names is None:
        feature_names = [h for h in header if h != label]
    else:
        missing = [f for f in feature_names if f not in header]
        if missing:
            raise CLIError(f"{path}: missing feature column(s) {', '.join(map(repr, missing))} of the release")
    if not feature_names:
        raise CLIError(f"{path}: no feature columns")
    X = _numeric(frame, feature_names, path)
    y = None if label is None else _label_text(frame, label, path)
    if X.shape[0] == 0:
        raise CLIError(f"{path}: no data rows")
    return X, y, list(feature_names)


def _label_text(frame: Any, label: str, path: str) -> np.ndarray:
    """The label column's cells as text; an empty cell is refused (naming the column, not the row)."""
    y = frame[label].to_numpy(dtype=object)
    if np.any(y == ""):
        raise _RowError(path, f"a label cell is empty (column {label!r})")
    return y


def _read_text(path: str, source: str | bytes | None = None) -> str:
    """The file's text: gzip-compressed (magic bytes 1f 8b) or not, UTF-8 with or without a byte-order mark."""
    if isinstance(source, bytes):
        raw = source
    else:
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except OSError as exc:
            raise CLIError(f"{path}: {exc.strerror or exc}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error):
            raise CLIError(f"{path}: a gzip file that cannot be decompressed (truncated or corrupt)") from None
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise _RowError(path, "a byte is not UTF-8; the file must be UTF-8 encoded (convert it, e.g. iconv -f latin1 "
                        "-t utf-8)", detail=f"line {line}: byte 0x{raw[exc.start]:02x} is not UTF-8") from None


def _labels_for(loss: str, y: np.ndarray, path: str, label: str, classes: Sequence[str] | None = None) -> np.ndarray:
    """The labels of a fit: text among the public ``classes`` (logistic), or numbers (the other losses)."""
    if loss == "logistic":
        if classes is None:  # (the fit refuses before reading the rows; a safeguard)
            raise CLIError(_NEED_CLASSES)
        if not np.all(np.isin(y.astype(str), list(classes))):
            raise _RowError(path, f"a label is not one of the classes (--classes {','.join(classes)}; column "
                            f"{label!r}; labels are compared as text)")
        return y.astype(str)
    import pandas as pd

    try:
        return _numeric(pd.DataFrame({label: y}), [label], path, what="label").ravel()
    except _RowError as exc:
        raise _RowError(exc.path, f"{exc.text} (--loss {loss} needs numeric labels)") from None


def _clip_rows(X: np.ndarray, norm_bound: float) -> np.ndarray:
    """Rows beyond ``norm_bound`` shrunk onto the ball (the map ``--row-norm clip`` names), exact for huge entries.

    The map the estimator and the release apply (:math:`x \\min(1, R/\\|x\\|)`, with norms exact
    beyond 1e154: ``pdpkit._validation.row_norms``). ``X`` is not changed (a copy when a row
    is clipped).
    """
    norms = row_norms(X)
    if not np.any(norms > norm_bound):
        return X
    return X * clip_factors(norms, norm_bound)[:, None]


def _check_rows(X: np.ndarray, norm_bound: float, row_norm: str, path: str, *, release: bool = False,
                clip_option: bool = True) -> None:
    """Under ``raise``, a row beyond the bound is refused (naming the public bound, not the row or its norm)."""
    if row_norm == "raise":
        norms = row_norms(X)
        if np.any(norms > norm_bound * (1 + 1e-12)):
            if release:
                hint = ("pass --row-norm clip to shrink such rows onto the ball" if clip_option else
                        "the release was fitted with --row-norm raise")
                raise _RowError(path, f"a row's Euclidean norm exceeds the release's norm bound {_num(norm_bound)} "
                                f"({hint})")
            raise _RowError(path, f"a row's Euclidean norm exceeds --norm-bound {_num(norm_bound)}; rescale the "
                            "features, encode them from public bounds with --schema, or pass --row-norm clip")


def _num(v: float) -> str:
    """A public number as short text that reads back exactly."""
    short = f"{v:g}"
    return short if float(short) == v else repr(float(v))


# ------------------------------------------------------------------ schemas
def _load_schema(path: str, option: str = "--schema"):
    from .schema import Schema

    try:
        with open(path, encoding="utf-8-sig") as fh:
            text = fh.read()
    except OSError as exc:
        raise CLIError(f"{option} {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise CLIError(f"{option} {path}: not UTF-8 text (a schema is a JSON file)") from None
    from ._json import loads_strict

    try:
        return Schema.from_dict(loads_strict(text, "the schema"))  # hostile JSON refused, naming the field
    except (ValueError, TypeError, KeyError) as exc:
        raise CLIError(f"{option} {path}: refused: {exc}") from None
    except (OverflowError, RecursionError) as exc:  # (a safeguard: the strict reader refuses such text first)
        raise CLIError(f"{option} {path}: refused: a value is out of range ({type(exc).__name__})") from None


def _schema_error(exc: Exception, path: str) -> CLIError:
    """A schema's refusal of the rows, ending (in :func:`main`) with the ``pdpkit check`` command, not Python's."""
    from .schema import FIND_ROWS_PREFIX

    message = str(exc)
    if FIND_ROWS_PREFIX not in message:  # not about the rows (e.g. the table's shape)
        return CLIError(f"{path}: {message}")
    return _RowError(path, message[:message.index(FIND_ROWS_PREFIX)])


def _typed_frame(frame: Any, schema: Any, path: str, columns: Sequence[Any]) -> Any:
    """The schema's columns of a text table, typed: numbers (NaN when missing), text (None when missing)."""
    import pandas as pd

    header = list(frame.columns)
    absent = [c.name for c in columns if c.name not in header]
    if absent:
        raise CLIError(f"{path}: no column(s) {', '.join(map(repr, absent))} of the schema "
                       f"(columns: {', '.join(header)})")
    numeric = [c.name for c in columns if c.kind == "numeric"]
    values = _numeric(frame, numeric, path, missing_ok=True) if numeric else None  # every column, then refuse
    typed = {}
    for col in columns:
        if col.kind == "numeric":
            typed[col.name] = values[:, numeric.index(col.name)]
        else:
            s = frame[col.name]
            na = s.isin(_NA_TEXT) & ~s.isin(col.categories or ())
            typed[col.name] = s.where(~na, None).astype(object)
    return pd.DataFrame(typed, index=frame.index)


def _encode(schema: Any, typed: Any, norm_bound: float, path: str) -> np.ndarray:
    from .preprocessing import SchemaEncoder

    try:
        return SchemaEncoder(schema, norm_bound=norm_bound).fit_transform(typed)
    except (ValueError, TypeError) as exc:
        raise _schema_error(exc, path) from None


def _split(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"a comma-separated list of column names; got {text!r}")
    dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if dup is not None:
        raise argparse.ArgumentTypeError(f"column {dup!r} is named twice in {text!r}; name each column once")
    return names


# ------------------------------------------------------------------ outputs
#: Temporary files of this process (output's absolute path -> (temporary path, fd)): reserved next to each
#: output before the work starts, filled and renamed at the end, removed on every other way out (errors,
#: Ctrl-C, SIGTERM).
_RESERVED: dict[str, tuple[str, int]] = {}
_WRITTEN: list[str] = []
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _Terminated(BaseException):
    """Raised by the SIGTERM handler (like KeyboardInterrupt for SIGINT)."""


#: The signals received by this run of :func:`main` (SIGINT, SIGTERM), in order.
_RECEIVED: list[int] = []


def _on_sigterm(signum: int, frame: Any) -> None:
    _RECEIVED.append(signum)
    raise _Terminated


def _on_sigint(signum: int, frame: Any) -> None:
    _RECEIVED.append(signum)
    raise KeyboardInterrupt


def _as_signal(exc: BaseException) -> BaseException:
    """The exception a received signal stands for, whatever became of it on its way up.

    The handlers raise :class:`_Terminated` or :class:`KeyboardInterrupt`; arriving while a
    compiled extension initializes (scipy's, imported at the first fit), the exception is
    turned into ``ImportError: initialization failed``. A signal this run received is
    reported as that signal."""
    if not _RECEIVED or isinstance(exc, (KeyboardInterrupt, _Terminated)):
        return exc
    return KeyboardInterrupt() if _RECEIVED[-1] == signal.SIGINT else _Terminated()


@contextlib.contextmanager
def _blocked() -> Iterator[None]:
    """SIGINT and SIGTERM wait meanwhile: a temporary file is never created unregistered, a group of outputs
    is renamed together, and the cleanup is not cut short."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _file_mode() -> int:
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


#: A temporary file of pdpkit: ``.pdpkit-PID-XXXXXXXX.tmp`` (the writer's process id), or ``.pdpkit-XXXXXXXX.tmp``
#: (written by earlier versions of pdpkit, which did not name the process).
_TEMP_NAME = re.compile(r"\.pdpkit-(?:(\d+)-)?[A-Za-z0-9_]+\.tmp")
#: Age after which a temporary file whose process is gone is removed (seconds); one without a process id waits a day.
_STALE_AFTER = 3600.0


def _alive(pid: int) -> bool:
    """Whether a process with this id exists (one we may not signal exists too)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # (PermissionError: it exists, under another user)
        return True
    return True


def _remove_stale(directory: str) -> None:
    """Remove the temporary files a pdpkit killed without warning (``kill -9``, a power cut) left in ``directory``.

    Only ``.pdpkit-PID-*.tmp`` files older than an hour whose process ``PID`` no longer exists
    (and, from versions that did not name the process, ``.pdpkit-*.tmp`` files older than a
    day): a live writer's file is never removed. Errors are ignored (another process may be
    cleaning too).
    """
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        m = _TEMP_NAME.fullmatch(entry.name)
        if m is None:
            continue
        pid = None if m.group(1) is None else int(m.group(1))
        if pid is not None and (pid == os.getpid() or _alive(pid)):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and now - st.st_mtime > (_STALE_AFTER if pid is not None else 86400.0):
                os.unlink(entry.path)
        except OSError:
            pass


def _reserve(path: str, option: str) -> tuple[str, int]:
    """A temporary file next to ``path`` (named with this process's id), with the mode the output will have."""
    d = os.path.dirname(os.path.abspath(path))
    _remove_stale(d)
    with _blocked():
        try:
            fd, tmp = tempfile.mkstemp(dir=d, prefix=f".pdpkit-{os.getpid()}-", suffix=".tmp")
        except OSError as exc:
            raise CLIError(f"{option} {path}: cannot write in the directory {d} ({exc.strerror or exc})") from None
        _RESERVED[os.path.abspath(path)] = (tmp, fd)
    os.chmod(tmp, _file_mode())
    return tmp, fd


def _discard(key: str) -> None:
    tmp, fd = _RESERVED.pop(key, (None, -1))
    if tmp is None:
        return
    try:
        os.close(fd)
    except OSError:
        pass
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass


def _discard_all() -> None:
    for key in list(_RESERVED):
        _discard(key)


def _write_outputs(items: Sequence[tuple[str, str, Callable[[IO[bytes]], Any]]]) -> None:
    """Write each (option, path, writer) to its temporary file, then rename them all together.

    Nothing appears under an output name until every output is complete; on any error the
    temporary files are removed and the outputs keep their previous content.
    """
    current = items[0][:2]  # (option, path) being written, for the message
    try:
        for option, path, writer in items:
            current = (option, path)
            key = os.path.abspath(path)
            tmp, fd = _RESERVED[key] if key in _RESERVED else _reserve(path, option)
            with os.fdopen(os.dup(fd), "wb") as fh:
                fh.truncate(0)
                writer(fh)
        with _blocked():
            for option, path, _ in items:
                current = (option, path)
                tmp, fd = _RESERVED[os.path.abspath(path)]
                os.replace(tmp, path)  # (if this fails, the finally below removes the temporary file)
                del _RESERVED[os.path.abspath(path)]
                os.close(fd)
                _WRITTEN.append(path)
    except OSError as exc:  # e.g. the disk filled up, or the directory changed since the check
        raise CLIError(f"{current[0]} {current[1]}: cannot write ({exc.strerror or exc})") from None
    finally:
        for _, path, _ in items:
            _discard(os.path.abspath(path))


def _write_atomic(path: str, text: str, *, option: str = "--out") -> None:
    _write_outputs([(option, path, lambda fh: fh.write(text.encode("utf-8")))])


def _check_output(option: str, path: str, inputs: Sequence[str]) -> None:
    """An output path that can be written and overwrites no input; its temporary file is reserved."""
    if not path:
        raise CLIError(f"{option}: the path is empty")
    if os.path.isdir(path):
        raise CLIError(f"{option} {path}: is a directory; give a file name")
    if os.path.lexists(path) and not os.path.isfile(path):
        raise CLIError(f"{option} {path}: exists and is not a regular file; give another file name")
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise CLIError(f"{option} {path}: the directory {d} does not exist")
    _check_name(option, path, d)
    if os.path.isfile(path):
        mode = os.stat(path).st_mode
        if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(path, os.W_OK):
            raise CLIError(f"{option} {path}: exists and is read-only (mode {stat.S_IMODE(mode):04o}); it is not "
                           "replaced: make it writable (chmod u+w) or give another file name")
    for inp in inputs:
        if _same_file(inp, path):
            raise CLIError(f"{option} {path}: is the input file {inp}; writing it would destroy the input, "
                           "give another file name")
    _reserve(path, option)


def _check_name(option: str, path: str, directory: str) -> None:
    """A file name the directory's file system takes (its length), checked before any work."""
    name = os.fsencode(os.path.basename(path))
    try:
        limit = int(os.pathconf(directory, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):  # pragma: no cover - a system without pathconf
        limit = 255
    if len(name) > limit:
        raise CLIError(f"{option} {path[:40]}...: the file name is {len(name)} bytes long; the file system allows "
                       f"at most {limit}: give a shorter name")
    try:
        longest = int(os.pathconf(directory, "PC_PATH_MAX"))
    except (OSError, ValueError, AttributeError):  # pragma: no cover
        longest = 4096
    if len(os.fsencode(os.path.abspath(path))) >= longest:
        raise CLIError(f"{option} {path[:40]}...: the path is longer than the file system allows ({longest} bytes): "
                       "give a shorter one")


def _same_file(a: str, b: str) -> bool:
    """The same file, also through a symlink or a hard link."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)


def _check_paths(args: argparse.Namespace) -> None:
    """Every output path checked (and its temporary file reserved) before any work starts."""
    if args.command == "keygen":  # (its files are written by pdpkit.signing.write_keypair)
        return
    inputs = [getattr(args, name) for name in ("data", "release", "targets", "schema", "sign", "public_key")
              if getattr(args, name, None) is not None]
    if getattr(args, "out", None) is None:  # pdpkit check writes nothing
        return
    outputs = [("--out", args.out)]
    if getattr(args, "plot", None) is not None:
        outputs.append(("--plot", args.plot))
        if args.plot and _same_file(args.plot, args.out):
            raise CLIError(f"--plot {args.plot}: is the same file as --out")
    for option, path in outputs:
        _check_output(option, path, inputs)


def _csv_text(header: list[str], rows: list[list[Any]]) -> str:
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()



# ------------------------------------------------------------------ fit
def _accountant_for(args: argparse.Namespace):
    """The accountant of ``--ledger`` and/or ``--budget-epsilon``/``--budget-delta``, or ``None``."""
    from .accountant import PrivacyAccountant

    ledger = getattr(args, "ledger", None)
    if args.budget_epsilon is None and args.budget_delta is None:
        if ledger is None:
            return None
        if not os.path.isfile(ledger):
            raise CLIError(f"--ledger {ledger}: no such ledger file; create it by giving its budget once "
                           "(--budget-epsilon and --budget-delta)")
        return PrivacyAccountant.open(ledger)
    if args.budget_epsilon is None or args.budget_delta is None:
        raise CLIError("give both --budget-epsilon and --budget-delta (the session's total budget), or neither")
    if ledger is None:
        return PrivacyAccountant(args.budget_epsilon, args.budget_delta)
    try:
        return PrivacyAccountant(args.budget_epsilon, args.budget_delta, path=ledger)
    except ValueError as exc:
        if type(exc).__name__ == "LedgerIntegrityError":
            raise
        raise CLIError(f"--ledger {ledger}: {exc}") from None


def _budget_line(acc: Any) -> str:
    """What is left of an accountant's budget (upper bounds rounded up, the remainder rounded down)."""
    spent = acc.spent() if acc.ledger else None
    used = "nothing spent" if spent is None else f"spent ({fmt_up(spent.epsilon, 4)}, {fmt_up(spent.delta, 3)})"
    left = max(acc.epsilon - (0.0 if spent is None else spent.epsilon), 0.0)
    left_down = math.floor(left * 1e4) / 1e4
    return (f"budget ({fmt_up(acc.epsilon, 4)}, {fmt_up(acc.delta, 3)}): {used} in {len(acc.ledger)} entries; "
            f"remaining epsilon {left_down:.4f}")


def _estimator_for(args: argparse.Namespace):
    from .estimators import ObjPertClassifier, ObjPertRegressor

    cls = ObjPertClassifier if args.loss == "logistic" else ObjPertRegressor
    extra = {}
    if getattr(args, "fit_classes", None) is not None:  # the public classes (a schema's label gives its own)
        extra["classes"] = list(args.fit_classes)
    if getattr(args, "sample_weight", None) is not None:  # the public bound and policy the release states
        extra["weight_bound"] = _weight_bound(args)
        extra["weight_policy"] = args.weight_policy or "refuse"
    est = cls(args.epsilon, args.delta, loss=args.loss, norm_bound=args.norm_bound, row_norm=args.row_norm,
              fit_intercept=not args.no_intercept, report=args.report, report_epsilon=args.report_epsilon,
              report_delta=args.report_delta, rho=0.05 if args.rho is None else args.rho, random_state=args.seed,
              **extra)
    accountant = getattr(args, "accountant", None)
    if accountant is not None:
        if "accountant" not in est.get_params():
            raise CLIError("--budget-epsilon: this pdpkit's estimators take no accountant")
        est.set_params(accountant=accountant)
    return est


def _resolve_loss(args: argparse.Namespace, label_kind: str | None) -> str:
    """--loss, or its default: logistic for a categorical label, huber for a numeric one."""
    if args.loss is None:
        return "huber" if label_kind == "numeric" else "logistic"
    if label_kind == "numeric" and args.loss == "logistic":
        raise CLIError("--loss logistic: the schema's label is numeric (regression); pass --loss huber or "
                       "--loss robust_log, or make the label categorical in the schema")
    if label_kind == "categorical" and args.loss != "logistic":
        raise CLIError(f"--loss {args.loss}: the schema's label is categorical (classification); pass "
                       "--loss logistic, or give the label numeric bounds in the schema")
    return args.loss


def _fit_features(header: list[str], label: str, args: argparse.Namespace, path: str) -> list[str]:
    """The feature columns without a schema: all but the label, or --features, or all but --drop."""
    chosen = args.features if args.features is not None else args.drop or []
    option = "--features" if args.features is not None else "--drop"
    unknown = [c for c in chosen if c not in header]
    if unknown:
        raise CLIError(f"{option}: no column(s) {', '.join(map(repr, unknown))} in {path} "
                       f"(columns: {', '.join(header)})")
    if label in chosen:
        raise CLIError(f"{option}: {label!r} is the label (--label)")
    weight = getattr(args, "sample_weight", None)
    if args.features is not None and weight in chosen:
        raise CLIError(f"--features: {weight!r} is the weight column (--sample-weight); a weight is not a feature")
    if args.features is not None:
        return list(args.features)
    names = [h for h in header if h != label and h != weight and h not in chosen]
    if not names:
        raise CLIError(f"{path}: no feature columns" + (" left (--drop removed them all)" if chosen else ""))
    return names


def _select_columns(schema: Any, args: argparse.Namespace) -> Any:
    """The schema restricted by --features / --drop (a refusal names the option)."""
    try:
        if args.features is not None or args.drop:
            return schema.select(features=args.features, drop=args.drop or ())
    except (ValueError, KeyError) as exc:
        option = "--features" if args.features is not None else "--drop"
        raise CLIError(f"{option}: {str(exc).strip(chr(34))} (--schema {args.schema})") from None
    return schema


def _fit_schema(args: argparse.Namespace, path: str):
    """The schema of ``--schema``, reviewed (not a draft), restricted by --features/--drop, with its label."""
    schema = _load_schema(args.schema)
    if schema.nonprivate_draft:
        raise CLIError(f"--schema {args.schema}: is a non-private draft (its bounds and domains were read from the "
                       "data); replace each by public knowledge, then delete both draft marks: the field "
                       "\"nonprivate_draft\" and the \"note\" that says NON-PRIVATE DRAFT")
    lab = schema.label
    if args.label is not None and lab is not None and args.label != lab.name:
        raise CLIError(f"--label {args.label}: the schema's label is {lab.name!r} (--schema {args.schema}); "
                       "leave --label out or make them agree")
    if lab is None and args.label in schema.feature_names:
        raise CLIError(f"--label {args.label}: is a feature column of the schema (--schema {args.schema}); give the "
                       "label column \"role\": \"label\" (or \"ignore\")")
    if lab is None and args.label is None:
        raise CLIError(f"--schema {args.schema}: has no label column; give --label COL or a column with "
                       "\"role\": \"label\"")
    return _select_columns(schema, args)


def _fit_estimator(est: Any, schema: Any, typed: Any, y: np.ndarray, args: argparse.Namespace,
                   sample_weight: np.ndarray | None = None) -> list[str]:
    """Fit on the schema's encoding of the records; the fitted feature names.

    The rows are encoded here (:class:`pdpkit.preprocessing.SchemaEncoder`, radius
    ``--norm-bound``). With an estimator that takes the schema itself this is
    ``est.set_params(schema=schema).fit(typed, y)``.
    """
    _encode(schema, typed, args.norm_bound, args.data)  # the schema's refusals, named after the file
    if schema.label is not None and schema.label.kind == "numeric":
        y = np.asarray(schema.decode_label(y), dtype=float)  # the estimator maps the label by the same bounds
    est.set_params(schema=schema)
    _plan_fit(est, args)
    est.fit(typed, y, sample_weight=sample_weight)
    return list(schema.encoded_names)


def _schema_labels(schema: Any, frame: Any, label: str, path: str, loss: str,
                   classes: Sequence[str] | None = None) -> np.ndarray:
    """The label column for the fit: class names checked against the domain, or a numeric label scaled."""
    import pandas as pd

    lab = schema.label
    if lab is None:  # the label named by --label, outside the schema: the classes are --classes
        return _labels_for(loss, _label_text(frame, label, path), path, label, classes)
    if lab.kind == "categorical":
        text = frame[label]
        y = text.where(~(text.isin(_NA_TEXT) & ~text.isin(lab.categories)), None)
        try:
            idx = schema.encode_label(y)
        except (ValueError, TypeError) as exc:
            raise _schema_error(exc, path) from None
        return np.asarray(schema.label_classes, dtype=object)[idx].astype(str)
    v = _numeric(frame, [label], path, missing_ok=True, what="label")[:, 0]
    try:
        return schema.encode_label(pd.Series(v))
    except (ValueError, TypeError) as exc:
        raise _schema_error(exc, path) from None


def _cmd_fit(args: argparse.Namespace) -> int:
    try:
        return _fit(args)
    except RuntimeError as exc:
        if type(exc).__name__ != "LedgerBusyError":
            raise
        raise CLIError(f"--ledger {args.ledger}: {exc}") from None
    except ValueError as exc:
        if type(exc).__name__ != "BudgetExceededError":
            raise
        where = (f"--ledger {args.ledger}" if args.budget_epsilon is None else
                 f"--budget-epsilon {args.budget_epsilon:g} / --budget-delta {args.budget_delta:g}")
        raise CLIError(f"{where}: {exc}; raise the budget, or lower --epsilon (and --report-epsilon)") from None


def _fit_classes(args: argparse.Namespace, schema: Any) -> list[str] | None:
    """The public classes the estimator is given (``None``: a regression, or the schema's label classes).

    Decided before any data row is read: a logistic fit without ``--classes`` and without a
    schema whose label is categorical is refused here.
    """
    lab = schema.label if schema is not None else None
    if lab is not None and lab.kind == "numeric":
        if args.classes is not None:
            raise CLIError(f"--classes: the schema's label {lab.name!r} is numeric (regression; --schema "
                           f"{args.schema}); leave --classes out")
        return None
    if args.loss != "logistic":
        if args.classes is not None:
            raise CLIError(f"--classes: --loss {args.loss} is a regression (numeric labels); leave --classes out")
        return None
    if lab is not None:  # a categorical label: the schema's domain are the classes
        if args.classes is not None and tuple(args.classes) != tuple(lab.categories or ()):
            raise CLIError(f"--classes {','.join(args.classes)}: the schema's label classes are "
                           f"{','.join(lab.categories or ())} (--schema {args.schema}); leave --classes out or make "
                           "them agree (same classes, same order)")
        return None
    if args.classes is None:
        raise CLIError(_NEED_CLASSES)
    return list(args.classes)


def _fit_check_argv(args: argparse.Namespace, classes: Sequence[str] | None) -> list[str]:
    """The arguments of ``pdpkit check`` that look at the rows as this fit does."""
    argv = [args.data]
    if args.schema:
        argv += ["--schema", args.schema]
    if args.label is not None:
        argv += ["--label", args.label]
    if classes is not None:
        argv += ["--classes", ",".join(classes)]
    weight = getattr(args, "sample_weight", None)
    drop = [*(args.drop or []), *([weight] if weight is not None and not args.schema else [])]
    if args.features is not None:
        argv += ["--features", ",".join(args.features)]
    elif drop:
        argv += ["--drop", ",".join(drop)]
    if not args.schema:
        argv += ["--norm-bound", _num(args.norm_bound)]
        if args.row_norm != "raise":
            argv += ["--row-norm", args.row_norm]
    delta = args.delta if args.delta is not None else getattr(args.accountant, "delta", None)
    return argv + (["--delta", _num(delta)] if delta is not None else [])


def _check_report_options(args: argparse.Namespace) -> None:
    """--report-epsilon, --report-delta and --rho belong to --report (and to a report that releases statistics)."""
    given = [o for o, v in (("--report-epsilon", args.report_epsilon), ("--report-delta", args.report_delta),
                            ("--rho", args.rho)) if v is not None]
    if args.report is None and given:
        raise CLIError(f"{given[0]}: given without --report (it belongs to the privacy report); add --report METHOD "
                       "or leave it out")
    spent = [o for o in given if o != "--rho"]
    if args.report == "data-independent" and spent:
        raise CLIError(f"{spent[0]}: --report data-independent releases no statistics and spends no budget; leave "
                       f"{' and '.join(spent)} out, or choose --report data-dependent or adaptive")
    if args.report in ("data-dependent", "adaptive") and args.epsilon is not None and (
            args.report_epsilon is None or args.report_delta is None):
        raise CLIError(f"--report {args.report}: releases noisy statistics; give their budget --report-epsilon and "
                       "--report-delta")


def _check_budget_options(args: argparse.Namespace) -> None:
    """--epsilon and --delta together; without them the planner needs a budget and plans the report too."""
    if (args.epsilon is None) != (args.delta is None):
        raise CLIError("give both --epsilon and --delta (the model's budget), or neither (the planner shares what "
                       "is left of --budget-epsilon/--ledger)")
    if args.epsilon is None:
        if args.budget_epsilon is None and getattr(args, "ledger", None) is None:
            raise CLIError("--epsilon: give the model's --epsilon and --delta, or a budget (--budget-epsilon and "
                           "--budget-delta, or --ledger) for the planner to share")
        given = [o for o, v in (("--report-epsilon", args.report_epsilon), ("--report-delta", args.report_delta))
                 if v is not None]
        if given:
            raise CLIError(f"{given[0]}: the planner shares the budget between the model and its report; give "
                           "--epsilon and --delta too, or leave the report's budget out")
    if args.report_share is not None and (args.epsilon is not None or args.report not in ("data-dependent",
                                                                                          "adaptive")):
        raise CLIError("--report-share: belongs to the planner (no --epsilon) with a report that releases "
                       "statistics (--report data-dependent or adaptive)")


def _weight_bound(args: argparse.Namespace) -> float:
    return 1.0 if args.weight_bound is None else float(args.weight_bound)


def _check_weight_options(args: argparse.Namespace) -> None:
    """--weight-bound and --weight-policy belong to --sample-weight, which is neither the label nor a feature."""
    given = [o for o, v in (("--weight-bound", args.weight_bound), ("--weight-policy", args.weight_policy))
             if v is not None]
    if args.sample_weight is None and given:
        raise CLIError(f"{given[0]}: given without --sample-weight (it bounds the records' weights); add "
                       "--sample-weight COL or leave it out")
    if args.sample_weight is not None and args.sample_weight == args.label:
        raise CLIError(f"--sample-weight: {args.sample_weight!r} is the label (--label)")


def _check_weight_column(args: argparse.Namespace, schema: Any) -> None:
    """With a schema, the weight column is not one of its features or its label (its role is "ignore", or absent)."""
    weight = args.sample_weight
    if weight is None or schema is None:
        return
    if weight in schema.feature_names:
        raise CLIError(f"--sample-weight: {weight!r} is a feature column of the schema (--schema {args.schema}); "
                       "give it \"role\": \"ignore\" (a weight is not a feature)")
    if schema.label is not None and schema.label.name == weight:
        raise CLIError(f"--sample-weight: {weight!r} is the schema's label (--schema {args.schema})")


def _weight_column(frame: Any, column: str, path: str) -> np.ndarray:
    """The weight column as floats, finite and >= 0; a refusal names the column, never a row, value or count."""
    if column not in list(frame.columns):
        raise CLIError(f"--sample-weight: no column {column!r} in {path} (columns: {', '.join(frame.columns)})")
    w, not_number, not_finite = _numeric_cells(frame, column, missing_ok=False)
    if np.any(not_number):
        raise CLIError(f"{path}: a cell of the weight column {column!r} (--sample-weight) is not a number (text, or "
                       "an empty cell)")
    if np.any(not_finite):
        raise CLIError(f"{path}: a cell of the weight column {column!r} (--sample-weight) is not a finite number "
                       "(NaN or infinity)")
    if np.any(w < 0):
        raise CLIError(f"{path}: a cell of the weight column {column!r} (--sample-weight) is negative; weights "
                       "must be >= 0")
    return np.array(w, dtype=float)


def _weight_refusal(path: str, column: str, bound: float) -> CLIError:
    """A weight above the public bound under the policy "refuse": the same text whichever records and weights."""
    return CLIError(f"{path}: a weight in column {column!r} (--sample-weight) exceeds --weight-bound "
                    f"{_num(bound)}, the public bound the guarantee assumes; raise the bound from public knowledge "
                    "(not from the data), or clip each weight to it (--weight-policy clip)")


def _fit_weights(frame: Any, args: argparse.Namespace) -> np.ndarray | None:
    """The records' weights of ``--sample-weight`` (``None`` without it), refused above --weight-bound under
    --weight-policy refuse before anything is charged or drawn."""
    if args.sample_weight is None:
        return None
    w = _weight_column(frame, args.sample_weight, args.data)
    W = _weight_bound(args)
    if (args.weight_policy or "refuse") == "refuse" and np.any(w > W):
        raise _weight_refusal(args.data, args.sample_weight, W)
    return w


def _plan_fit(est: Any, args: argparse.Namespace) -> None:
    """Print (and, without --epsilon, choose) the fit's charges against the budget, before any noise is drawn."""
    acc = getattr(args, "accountant", None)
    if acc is None:
        return
    from .accountant import compose, plan_budget

    stats = args.report in ("data-dependent", "adaptive")
    if args.epsilon is None:
        # any budget to build the parts from: each part is recalibrated at its own share
        est.set_params(epsilon=1.0, delta=acc.delta / 2, **({"report_epsilon": 1.0, "report_delta": acc.delta / 2}
                                                             if stats else {}))
        parts = {"model": est.budget_part("model")}
        if stats:
            parts["report"] = est.budget_part("report")
        plan = plan_budget(acc.epsilon, acc.delta, parts, weights={"model": 1.0, "report": args.report_share or 0.5},
                           spent=acc.ledger)
        est.set_params(epsilon=plan["model"].epsilon, delta=plan["model"].delta)
        if stats:
            est.set_params(report_epsilon=plan["report"].epsilon, report_delta=plan["report"].delta)
    new = est.privacy_events()
    total, how = compose(tuple(acc.ledger) + tuple(new), acc.delta)
    shares = " + ".join(f"{c.name.rsplit(' ', 1)[-1]} ({fmt_up(c.epsilon(), 4)}, {fmt_up(c.delta, 3)})"
                        for c in new)
    chosen = "planned" if args.epsilon is None else "given"
    earlier = f" with {len(acc.ledger)} earlier entries" if acc.ledger else ""
    print(f"plan ({chosen}, before any noise is drawn): {shares}; the budget ({fmt_up(acc.epsilon, 4)}, "
          f"{fmt_up(acc.delta, 3)}) then holds epsilon {fmt_up(total, 4)}{earlier} [{how}]")


def _fit(args: argparse.Namespace) -> int:
    if args.model != "objpert":
        return _fit_ops(args)
    given = [o for o, v in (("--label-bounds", args.label_bounds), ("--n-max", args.n_max)) if v is not None]
    if given:
        raise CLIError(f"{given[0]}: belongs to --model ops or adaops (an ObjPert fit takes no such bound); leave "
                       "it out, or choose --model ops or adaops")
    _check_budget_options(args)
    _check_report_options(args)
    _check_weight_options(args)
    signing_key = _load_key(args.sign, "--sign", private=True) if args.sign else None
    args.accountant = _accountant_for(args)
    schema = _fit_schema(args, args.data) if args.schema else None
    if schema is None and args.label is None:
        raise CLIError("give --label COL (the label column), or --schema FILE with a label column")
    _check_weight_column(args, schema)
    args.loss = _resolve_loss(args, schema.label.kind if schema is not None and schema.label is not None else None)
    args.fit_classes = _fit_classes(args, schema)  # before any data row is read
    args.check_argv = _fit_check_argv(args, args.fit_classes)
    label = schema.label.name if schema is not None and schema.label is not None else args.label
    frame, _ = _read_table(args.data, text_columns=(label,))
    header = list(frame.columns)
    if label not in header:
        raise CLIError(f"{args.data}: no column {label!r} (columns: {', '.join(header)})")
    if schema is None:
        names = _fit_features(header, label, args, args.data)
        X = _numeric(frame, names, args.data)
        y = _labels_for(args.loss, _label_text(frame, label, args.data), args.data, label, args.fit_classes)
        w = _fit_weights(frame, args)
        del frame  # (the columns were copied into X: the fit holds the numbers once)
        _check_rows(X, args.norm_bound, args.row_norm, args.data)
        if args.row_norm == "clip":
            X = _clip_rows(X, args.norm_bound)
        est = _estimator_for(args)
        import pandas as pd

        _plan_fit(est, args)
        est.fit(pd.DataFrame(X, columns=names, copy=False), y, sample_weight=w)
        described = f"{len(names)} features"
    else:
        typed = _typed_frame(frame, schema, args.data, schema.features)
        if typed.shape[0] == 0:
            raise CLIError(f"{args.data}: no data rows")
        y = _schema_labels(schema, frame, label, args.data, args.loss, args.fit_classes)
        w = _fit_weights(frame, args)
        est = _estimator_for(args)
        names = _fit_estimator(est, schema, typed, y, args, sample_weight=w)
        described = f"{len(schema.feature_names)} features ({len(names)} encoded by --schema {args.schema})"
    if w is not None:
        described += f", weighted by column {args.sample_weight!r}"
    release = est.release_ if signing_key is None else est.release_.sign(signing_key)
    _write_atomic(args.out, release.to_json(indent=2) + "\n")
    g = release.guarantee  # (a weighted fit's says its weight bound and policy)
    seeded = ("; reproducible from --seed: private only while the seed stays secret" if args.seed is not None
              else "")
    print(f"wrote {args.out}: {described}, {g}{seeded}")
    if signing_key is not None:
        print(f"signed by the key {release.signer} (--sign {args.sign}); release fingerprint {release.fingerprint}")
    if getattr(args, "ledger", None) is not None:
        print(f"ledger {args.ledger}: {_budget_line(args.accountant)}")
    return 0


#: The options of an ObjPert fit that an OPS or AdaOPS fit refuses (with the reason).
_NOT_OPS = (("loss", "--loss", "OPS and AdaOPS fit the squared loss"),
            ("classes", "--classes", "OPS and AdaOPS are regressions (numeric labels)"),
            ("report", "--report", "the per-person bounds of OPS need no report: pdpkit report computes them from "
                                   "the release"),
            ("report_epsilon", "--report-epsilon", "OPS and AdaOPS release no report"),
            ("report_delta", "--report-delta", "OPS and AdaOPS release no report"),
            ("rho", "--rho", "OPS and AdaOPS release no report"),
            ("report_share", "--report-share", "OPS and AdaOPS release no report"),
            ("sample_weight", "--sample-weight", "OPS and AdaOPS take no record weights"),
            ("weight_bound", "--weight-bound", "OPS and AdaOPS take no record weights"),
            ("weight_policy", "--weight-policy", "OPS and AdaOPS take no record weights"))


def _ops_options(args: argparse.Namespace, schema: Any) -> None:
    """Refuse the options that do not apply to --model ops/adaops; the labels' public bounds."""
    model = f"--model {args.model}"
    for attr, option, why in _NOT_OPS:
        if getattr(args, attr, None) is not None:
            raise CLIError(f"{option}: does not apply to {model} ({why}); leave it out")
    if schema is None:
        if args.label_bounds is None:
            raise CLIError(f"--label-bounds: {model} needs the labels' public bounds LOW,HIGH (or a --schema whose "
                           "label is numeric with bounds); bounds read from the data would reveal who is in it")
        return
    lab = schema.label
    if lab is None or lab.kind != "numeric" or schema.label_bounds is None:
        raise CLIError(f"--schema {args.schema}: {model} is a regression: the schema's label must be numeric with "
                       "public bounds (\"role\": \"label\", \"low\" and \"high\")")
    if args.label_bounds is not None and tuple(args.label_bounds) != tuple(schema.label_bounds):
        raise CLIError(f"--label-bounds {_num(args.label_bounds[0])},{_num(args.label_bounds[1])}: the schema's "
                       f"label bounds are {_num(schema.label_bounds[0])},{_num(schema.label_bounds[1])} (--schema "
                       f"{args.schema}); leave --label-bounds out or make them agree")


def _ops_labels(frame: Any, label: str, args: argparse.Namespace, path: str) -> np.ndarray:
    """The numeric labels of an OPS fit without a schema, within --label-bounds (or clipped with --row-norm clip)."""
    import pandas as pd

    try:
        y = _numeric(pd.DataFrame({label: _label_text(frame, label, path)}), [label], path, what="label").ravel()
    except _RowError as exc:
        raise _RowError(exc.path, f"{exc.text} (--model {args.model} needs numeric labels)") from None
    lo, hi = args.label_bounds
    c, h = 0.5 * (lo + hi), 0.5 * (hi - lo)
    if args.row_norm == "raise" and np.any(np.abs((y - c) / h) > 1.0 + 1e-12):
        raise CLIError(f"{path}: a label lies outside --label-bounds {_num(lo)},{_num(hi)} (the public bounds the "
                       "guarantee assumes); widen --label-bounds from public knowledge, or pass --row-norm clip "
                       "(labels are then clipped)")
    return y


def _plan_ops(est: Any, X: Any, args: argparse.Namespace) -> None:
    """Print the fit's charge (and, with a budget, the total it leaves), before any noise is drawn."""
    from .accountant import compose
    from .events import UnsupportedEventError

    new = est.privacy_events(X)
    shares = " + ".join(f"{c.name.rsplit(' ', 1)[-1]} ({fmt_up(c.epsilon(), 4)}, {fmt_up(c.delta, 3)})" for c in new)
    acc = args.accountant
    if acc is None:
        print(f"plan (given, before any noise is drawn): {shares} [{new[0].kind}]")
        return
    try:
        total, how = compose(tuple(acc.ledger) + tuple(new), acc.delta)
    except UnsupportedEventError as exc:
        where = (f"--ledger {args.ledger}" if args.ledger is not None else
                 f"--budget-epsilon {args.budget_epsilon:g} / --budget-delta {args.budget_delta:g}")
        raise CLIError(f"{where}: {exc}; nothing was released (an AdaOPS fit needs a budget of its own; --model "
                       "ops composes with other entries)") from None
    earlier = f" with {len(acc.ledger)} earlier entries" if acc.ledger else ""
    print(f"plan (given, before any noise is drawn): {shares}; the budget ({fmt_up(acc.epsilon, 4)}, "
          f"{fmt_up(acc.delta, 3)}) then holds epsilon {fmt_up(total, 4)}{earlier} [{how}]")


def _fit_ops(args: argparse.Namespace) -> int:
    """``pdpkit fit --model ops|adaops``: :class:`pdpkit.ops_estimators.OPSRegressor` or ``AdaOPSRegressor``."""
    if args.epsilon is None or args.delta is None:
        raise CLIError(f"--epsilon: --model {args.model} needs the model's --epsilon and --delta (the planner "
                       "shares a budget between an ObjPert model and its report)")
    signing_key = _load_key(args.sign, "--sign", private=True) if args.sign else None
    schema = _fit_schema(args, args.data) if args.schema else None
    if schema is None and args.label is None:
        raise CLIError("give --label COL (the label column), or --schema FILE with a label column")
    _ops_options(args, schema)
    args.accountant = _accountant_for(args)
    args.check_argv = _fit_check_argv(args, None)
    label = schema.label.name if schema is not None else args.label
    frame, _ = _read_table(args.data, text_columns=(label,))
    header = list(frame.columns)
    if label not in header:
        raise CLIError(f"{args.data}: no column {label!r} (columns: {', '.join(header)})")
    from .ops_estimators import AdaOPSRegressor, OPSRegressor

    cls = AdaOPSRegressor if args.model == "adaops" else OPSRegressor
    est = cls(args.epsilon, args.delta, norm_bound=args.norm_bound, row_norm=args.row_norm,
              fit_intercept=not args.no_intercept, random_state=args.seed, n_max=args.n_max,
              **({"label_bounds": tuple(args.label_bounds)} if schema is None else {}))
    if args.accountant is not None:
        est.set_params(accountant=args.accountant)
    if schema is None:
        import pandas as pd

        names = _fit_features(header, label, args, args.data)
        X = _numeric(frame, names, args.data)
        y = _ops_labels(frame, label, args, args.data)
        del frame
        _check_rows(X, args.norm_bound, args.row_norm, args.data)
        if args.row_norm == "clip":
            X = _clip_rows(X, args.norm_bound)
        if args.n_max is not None and X.shape[0] > args.n_max:
            raise CLIError(f"--n-max {args.n_max}: {args.data} has more records; --n-max must be a public bound on "
                           "the number of records")
        fit_X = pd.DataFrame(X, columns=names, copy=False)
        described = f"{len(names)} features"
    else:
        fit_X = _typed_frame(frame, schema, args.data, schema.features)
        if fit_X.shape[0] == 0:
            raise CLIError(f"{args.data}: no data rows")
        if args.n_max is not None and fit_X.shape[0] > args.n_max:
            raise CLIError(f"--n-max {args.n_max}: {args.data} has more records; --n-max must be a public bound on "
                           "the number of records")
        y = np.asarray(schema.decode_label(_schema_labels(schema, frame, label, args.data, "huber")), dtype=float)
        _encode(schema, fit_X, args.norm_bound, args.data)  # the schema's refusals, named after the file
        est.set_params(schema=schema)
        described = (f"{len(schema.feature_names)} features ({schema.n_encoded} encoded by --schema "
                     f"{args.schema})")
    _plan_ops(est, fit_X, args)
    est.fit(fit_X, y)
    release = est.release_ if signing_key is None else est.release_.sign(signing_key)
    _write_atomic(args.out, release.to_json(indent=2) + "\n")
    seeded = ("; reproducible from --seed: private only while the seed stays secret" if args.seed is not None
              else "")
    print(f"wrote {args.out}: {described}, {release.guarantee}{seeded}")
    if signing_key is not None:
        print(f"signed by the key {release.signer} (--sign {args.sign}); release fingerprint {release.fingerprint}")
    if getattr(args, "ledger", None) is not None:
        print(f"ledger {args.ledger}: {_budget_line(args.accountant)}")
    return 0


def _cmd_budget(args: argparse.Namespace) -> int:
    from .accountant import PrivacyAccountant

    if not os.path.isfile(args.ledger_file):
        raise CLIError(f"{args.ledger_file}: no such ledger file")
    acc = PrivacyAccountant.open(args.ledger_file)
    ledger = acc.ledger
    if args.json:
        import json

        g = acc.spent() if ledger else None
        print(json.dumps({"epsilon": acc.epsilon, "delta": acc.delta,
                          "spent": None if g is None else g.to_dict(),
                          "entries": [c.to_dict() for c in ledger]}, indent=2, allow_nan=False))
        return 0
    print(f"{_plain(args.ledger_file)}: {_budget_line(acc)}")
    for i, c in enumerate(ledger):
        count = f" x{c.count}" if c.count > 1 else ""
        print(f"  {i:>4}  {_plain(c.name)} [{c.kind}{count}]: alone ({fmt_up(c.epsilon(), 4)}, {fmt_up(c.delta, 3)})")
    if ledger:
        print(f"  total: {acc.spent()}")
    return 0


# ------------------------------------------------------------------ releases
def _load_release(path: str, public_key: Any = None):
    """The release, read strictly (hostile JSON refused, naming the field) and verified; signed by ``public_key``."""
    from .release import load_release

    try:
        with open(path, "rb") as fh:
            text = fh.read()
    except OSError as exc:
        raise CLIError(f"{path}: {exc.strerror or exc}") from None
    try:
        return load_release(text, public_key=public_key)  # strict, signature checked, guarantee recomputed
    except (ValueError, KeyError, TypeError) as exc:
        raise CLIError(f"{path}: refused: {exc}") from None
    except (OverflowError, RecursionError) as exc:  # (a safeguard: the strict reader refuses such text first)
        raise CLIError(f"{path}: refused: a value is out of range ({type(exc).__name__})") from None


def _load_key(path: str, option: str, *, private: bool) -> Any:
    """The key of ``--sign`` (private) or ``--public-key`` (public), refused with a one-line reason."""
    from .signing import load_private_key, load_public_key

    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise CLIError(f"{option} {path}: {exc.strerror or exc}") from None
    if private and b"PUBLIC KEY" in data:
        raise CLIError(f"{option} {path}: is a public key; signing needs the private key (KEY, not KEY.pub)")
    if not private and b"PRIVATE KEY" in data:
        raise CLIError(f"{option} {path}: is a private key; give the public key (KEY.pub) — the private key stays "
                       "with the publisher")
    try:
        return load_private_key(data) if private else load_public_key(data)
    except (ValueError, TypeError) as exc:
        raise CLIError(f"{option} {path}: {exc}") from None


def _public_key(args: argparse.Namespace) -> Any:
    path = getattr(args, "public_key", None)
    return None if path is None else _load_key(path, "--public-key", private=False)


def _schema_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The first place (``columns[2].high``) where two schemas' dicts differ, or ``None``."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            where = f"{path}.{key}" if path else key
            if key not in a or key not in b:
                return where
            found = _schema_difference(a[key], b[key], where)
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (u, v) in enumerate(zip(a, b, strict=False)):
            found = _schema_difference(u, v, f"{path}[{i}]")
            if found is not None:
                return found
        return None if len(a) == len(b) else f"{path} (length {len(a)} against {len(b)})"
    return None if a == b and type(a) is type(b) else f"{path} ({a!r} in the release, {b!r} in --schema)"


def _release_schema(release: Any, args: argparse.Namespace):
    """The schema the release was fitted through: the release's own, or ``--schema`` (which must match)."""
    from .schema import Schema

    own = getattr(release, "schema", None)
    if isinstance(own, dict):
        own = Schema.from_dict(own)
    given = _load_schema(args.schema) if getattr(args, "schema", None) else None
    if given is not None and own is not None:  # the same schema, or a refusal: never a silent override
        mine, theirs = ({k: v for k, v in x.to_dict().items() if k != "note"} for x in (own, given))
        where = _schema_difference(mine, theirs)
        if where is not None:
            raise CLIError(f"--schema {args.schema}: differs from the schema {args.release} carries (at {where}); "
                           "leave --schema out (the release's own schema is used) or give that same schema")
    schema = given or own
    if schema is None:
        return None
    names = tuple(release.feature_names or ())
    if tuple(schema.encoded_names) != names:
        where = f"--schema {args.schema}" if given is not None else f"{args.release}'s schema"
        raise CLIError(f"{where}: its encoded features ({', '.join(schema.encoded_names[:6])}"
                       f"{' ...' if schema.n_encoded > 6 else ''}) are not the release's "
                       f"({', '.join(names[:6])}{' ...' if len(names) > 6 else ''}); give the schema it was "
                       "fitted with")
    return schema


@contextlib.contextmanager
def _rows_of(path: str) -> Iterator[None]:
    """A library refusal of a file's rows names the file (and never a count of rows: said as the kind only)."""
    try:
        yield
    except ValueError as exc:
        if "outside norm_bound" in str(exc) or "norm bound" in str(exc):
            raise _RowError(path, "a row's Euclidean norm exceeds the release's norm bound") from None
        raise CLIError(f"{path}: {_as_options(_plain(str(exc)))}") from None


def _release_rows(release, X: np.ndarray, row_norm: str, path: str) -> np.ndarray:
    from .estimators import prepare_rows

    _check_rows(X, release.norm_bound, row_norm, path, release=True)
    if row_norm == "clip":
        X = _clip_rows(X, float(release.norm_bound))
    return prepare_rows(X, norm_bound=release.norm_bound, row_norm="clip", fit_intercept=release.fit_intercept)


def _release_features(release: Any, schema: Any, path: str, *, label: str | None,
                      weight: str | None = None) -> tuple[np.ndarray, Any]:
    """The rows a release is applied to (encoded by its schema when it has one), and the text table; ``weight``:
    a column that is not a feature."""
    frame, _ = _read_table(path)
    header = list(frame.columns)
    if label is not None and label not in header:
        raise CLIError(f"{path}: no column {label!r} (columns: {', '.join(header)})")
    if schema is None:
        names = list(release.feature_names) if release.feature_names is not None else \
            [h for h in header if h != label and h != weight]
        missing = [f for f in names if f not in header]
        if missing:
            raise CLIError(f"{path}: missing feature column(s) {', '.join(map(repr, missing))} of the release")
        X = _numeric(frame, names, path)
    else:
        X = _encode(schema, _typed_frame(frame, schema, path, schema.features), float(release.norm_bound or 1.0),
                    path) if frame.shape[0] else np.empty((0, schema.n_encoded))
    if X.shape[0] == 0:
        raise CLIError(f"{path}: no data rows")
    return X, frame


def _release_check_argv(args: argparse.Namespace, release: Any, schema: Any, path: str, *, label: str | None,
                        row_norm: str) -> None:
    """Set ``args.check_argv`` (and ``args.check_before``): ``pdpkit check`` on a release's targets."""
    argv, before = [path], ""
    if label is not None:
        argv += ["--label", label]
    if schema is not None:
        if getattr(args, "schema", None):
            argv += ["--schema", args.schema]
        else:
            argv += ["--schema", "SCHEMA.json"]
            before = f"write the \"schema\" field of {args.release} to SCHEMA.json, then "
    elif release.feature_names is not None:
        argv += ["--features", ",".join(release.feature_names)]
    elif getattr(args, "sample_weight", None) is not None:
        argv += ["--drop", args.sample_weight]
    if label is not None and getattr(release, "loss", None) == "logistic" and release.classes is not None and not (
            schema is not None and schema.label is not None and schema.label.name == label):
        argv += ["--classes", ",".join(str(c) for c in release.classes)]
    if schema is None:
        argv += ["--norm-bound", _num(float(release.norm_bound or 1.0))]
        if row_norm != "raise":
            argv += ["--row-norm", row_norm]
    args.check_argv, args.check_before = argv, before


def _is_ops(release: Any) -> bool:
    from .release import OPSRelease

    return isinstance(release, OPSRelease)


def _report_ops(release: Any, args: argparse.Namespace) -> int:
    """``pdpkit report`` on an OPS/AdaOPS release: each record's data-independent pDP bound (publishable)."""
    schema = _release_schema(release, args)
    row_norm = args.row_norm or release.row_norm
    _release_check_argv(args, release, schema, args.targets, label=args.label, row_norm=row_norm)
    X, frame = _release_features(release, schema, args.targets, label=args.label)
    if schema is not None and schema.label is not None and schema.label.name == args.label:
        y = np.asarray(schema.decode_label(_schema_labels(schema, frame, args.label, args.targets, "huber")),
                       dtype=float)
    else:
        import pandas as pd

        y = _numeric(pd.DataFrame({args.label: _label_text(frame, args.label, args.targets)}), [args.label],
                     args.targets, what="label").ravel()
        if release.label_bounds is not None:
            lo, hi = release.label_bounds
            if row_norm == "clip":
                y = np.clip(y, lo, hi)
            elif np.any((y < lo - 1e-12 * (hi - lo)) | (y > hi + 1e-12 * (hi - lo))):
                raise CLIError(f"{args.targets}: a label lies outside the release's label bounds {_num(lo)},"
                               f"{_num(hi)} (pass --row-norm clip to clip labels onto them)")
    if schema is None:
        _check_rows(X, float(release.norm_bound), row_norm, args.targets, release=True)
        if row_norm == "clip":
            X = _clip_rows(X, float(release.norm_bound))
    with _rows_of(args.targets):
        bounds = np.asarray(release.per_person_epsilon(X, y, encoded=schema is not None), dtype=float)
    delta = release.model_charge().delta
    text = _csv_text(["row", "epsilon_bound"], [[i + 1, repr(float(b))] for i, b in enumerate(bounds)])
    outputs = [("--out", args.out, lambda fh: fh.write(text.encode("utf-8")))]
    if args.plot:
        from . import plotting as pp
        from .report import plot_report

        pp.setup()
        fig, _ = plot_report(bounds, kind="hist")
        outputs.append(("--plot", args.plot, lambda fh: fig.savefig(fh, format="png", dpi=150, bbox_inches="tight")))
    _write_outputs(outputs)
    print(f"wrote {args.out}: {bounds.size} bounds at delta {fmt_up(delta, 3)}, median at most "
          f"{fmt_up(float(np.median(bounds)))}, max at most {fmt_up(float(np.max(bounds)))} (data-independent: "
          "each holds on every data set of the release's class, with certainty)")
    return 0


def _report_weights(release: Any, frame: Any, y: np.ndarray, args: argparse.Namespace) -> np.ndarray | None:
    """Each person's weight over the release's bound W for the report's bounds, or ``None`` (the bound at W, which
    holds for every weight), as ``ObjPertEstimator.privacy_report`` takes them.

    With ``--sample-weight``: the column times the class weight of the person's label, the
    release's ``weight_policy`` applied (above W: refused, or clipped). Without: the class weight
    (a sample weight of 1) when the fit had no sample weights, else ``None``.
    """
    wt = release.weighting
    if wt is None:
        if args.sample_weight is not None:
            raise CLIError(f"--sample-weight: {args.release} was fitted without weights (every record's weight is "
                           "1); leave --sample-weight out")
        return None
    if args.sample_weight is None and wt["sample_weight"]:
        return None
    w = (np.ones(frame.shape[0]) if args.sample_weight is None
         else _weight_column(frame, args.sample_weight, args.targets))
    if wt["class_weight"] is not None:
        cw = {str(c): float(v) for c, v in wt["class_weight"].items()}
        w = w * np.array([cw[str(c)] for c in y], dtype=float)
    W = float(wt["weight_bound"])
    if np.any(w > W):
        if wt["weight_policy"] == "refuse":
            raise CLIError(f"{args.targets}: a person's weight (--sample-weight times the class weight of their "
                           f"label) exceeds the release's weight bound {_num(W)}, and the release was fitted with "
                           "--weight-policy refuse: a record of such a weight is refused, not bounded")
        w = np.minimum(w, W)
    return w / W


def _cmd_report(args: argparse.Namespace) -> int:
    release = _load_release(args.release, _public_key(args))
    if _is_ops(release):
        if args.sample_weight is not None:
            raise CLIError(f"--sample-weight: {args.release} is an OPS/AdaOPS release (--model "
                           f"{release.mechanism}), which takes no record weights; leave it out")
        return _report_ops(release, args)
    if release.report is None:
        raise CLIError(f"{args.release}: the release carries no privacy report (fit it with --report METHOD)")
    if args.sample_weight is not None and args.sample_weight == args.label:
        raise CLIError(f"--sample-weight: {args.sample_weight!r} is the label (--label)")
    schema = _release_schema(release, args)
    if args.sample_weight is not None and schema is not None and args.sample_weight in schema.feature_names:
        raise CLIError(f"--sample-weight: {args.sample_weight!r} is a feature column of the release's schema")
    _release_check_argv(args, release, schema, args.targets, label=args.label,
                        row_norm=args.row_norm or release.row_norm)
    X, frame = _release_features(release, schema, args.targets, label=args.label, weight=args.sample_weight)
    loss = release.loss
    if schema is not None and schema.label is not None and schema.label.name == args.label:
        y = _schema_labels(schema, frame, args.label, args.targets, loss)
    else:
        y = _label_text(frame, args.label, args.targets)
        y = _labels_for(loss, y, args.targets, args.label) if loss != "logistic" else y.astype(str)
    if loss == "logistic":
        classes = [str(c) for c in release.classes]
        if not np.all(np.isin(y, classes)):
            raise _RowError(args.targets, f"a label is not one of the release's classes ({','.join(classes)}; "
                            f"column {args.label!r}; labels are compared as text)")
        ys = np.where(y == classes[1], 1.0, -1.0)
    else:
        ys = y
    rows = _release_rows(release, X, args.row_norm or release.row_norm, args.targets)
    v = _report_weights(release, frame, y, args)
    # one model: its report's bound; one-vs-rest (K models, independent noise): the sum of the K reports'
    # bounds, each holding with probability 1 - rho/K, so the sum with probability 1 - rho (union bound)
    reports = release.privacy_reports
    with _rows_of(args.targets):
        if len(reports) == 1:
            bounds = np.asarray(reports[0].epsilon_bound(rows, ys, uniform=args.uniform, weight=v), dtype=float)
        else:
            bounds = sum(np.asarray(rep.epsilon_bound(rows, np.where(y == classes[k], 1.0, -1.0),
                                                      uniform=args.uniform, weight=v), dtype=float)
                         for k, rep in enumerate(reports))
    rho = min(sum(rep.rho for rep in reports), 1.0)
    text = _csv_text(["row", "epsilon_bound"], [[i + 1, repr(float(b))] for i, b in enumerate(bounds)])
    outputs = [("--out", args.out, lambda fh: fh.write(text.encode("utf-8")))]
    if args.plot:
        from . import plotting as pp
        from .report import plot_report

        pp.setup()
        fig, _ = plot_report(bounds, kind="hist")
        outputs.append(("--plot", args.plot, lambda fh: fig.savefig(fh, format="png", dpi=150, bbox_inches="tight")))
    _write_outputs(outputs)  # the CSV and the plot appear together, or neither
    weighted = ""
    if release.weighting is not None:
        weighted = (f"; at the release's weight bound {_num(float(release.weighting['weight_bound']))}, which holds "
                    "for every weight (--sample-weight COL gives each person's own)" if v is None else
                    "; at each person's weight")
    print(f"wrote {args.out}: {bounds.size} bounds, median at most {fmt_up(float(np.median(bounds)))}, "
          f"max at most {fmt_up(float(np.max(bounds)))} "
          f"(each holds with probability >= {1 - rho:g}{weighted})")
    return 0


def _cmd_predict(args: argparse.Namespace) -> int:
    release = _load_release(args.release, _public_key(args))
    schema = _release_schema(release, args)
    row_norm = getattr(release, "row_norm", None) or "raise"
    _release_check_argv(args, release, schema, args.data, label=None, row_norm=row_norm)
    X, _ = _release_features(release, schema, args.data, label=None)
    if schema is None and release.norm_bound is not None:  # the release's own refusal, said without a count
        _check_rows(X, float(release.norm_bound), row_norm, args.data, release=True, clip_option=False)
        if row_norm == "clip":
            X = _clip_rows(X, float(release.norm_bound))
    encoded = release.schema is not None
    ops = _is_ops(release)
    with _rows_of(args.data):
        if ops:  # its predict decodes a schema's label itself
            text = _csv_text(["row", "prediction"], [[i + 1, repr(float(s))]
                                                     for i, s in enumerate(release.predict(X, encoded=encoded))])
            _write_atomic(args.out, text)
            print(f"wrote {args.out}: {X.shape[0]} predictions")
            return 0
        scores = release.decision_function(X, encoded=encoded)
        labels = list(release.predict(X, encoded=encoded)) if release.loss == "logistic" else []
    if release.loss == "logistic" and release.classes is not None:
        if scores.ndim == 2:  # one-vs-rest: the chosen class's score
            scores = scores.max(axis=1)
        rows = [[i + 1, lab, repr(float(s))] for i, (lab, s) in enumerate(zip(labels, scores, strict=True))]
        text = _csv_text(["row", "prediction", "score"], rows)
    else:
        if schema is not None and schema.label_bounds is not None:
            scores = schema.decode_label(scores)  # the fit's labels were scaled by the schema's public bounds
        text = _csv_text(["row", "prediction"], [[i + 1, repr(float(s))] for i, s in enumerate(scores)])
    _write_atomic(args.out, text)
    print(f"wrote {args.out}: {scores.size} predictions")
    return 0


# ------------------------------------------------------------------ check (non-private)
def _lenient_numbers(frame: Any, name: str) -> Any:
    """A numeric column for the non-private check: floats where the fit reads a number, NaN where it reads a
    missing value (:data:`_NA_TEXT`), the cell's text where it reads none (so that the check shows it)."""
    import pandas as pd

    fast = frame.numbers(name) if isinstance(frame, _Table) else None
    if fast is not None:
        return pd.Series(fast)
    s = frame[name]
    v = pd.to_numeric(s, errors="coerce").astype(object)
    text = v.isna() & ~s.isin(_NA_TEXT)
    return v.where(~text, s)


def _cmd_check(args: argparse.Namespace) -> int:
    """``pdpkit check``: the rows a fit would refuse, with their values; exit 1 when there are any."""
    import dataclasses

    import pandas as pd

    from .check import NONPRIVATE_BANNER, check_nonprivate

    schema = _load_schema(args.schema) if args.schema else None
    try:
        frame, _ = _read_table(args.data)
    except _RowError as exc:
        if exc.detail is None:
            raise
        print(NONPRIVATE_BANNER.format(source=args.data))
        print(f"{args.data}: {exc.detail}")
        print("1 problem found: the file cannot be read as a CSV until it is corrected")
        return 1
    header = list(frame.columns)
    lab = schema.label if schema is not None else None
    if lab is not None and args.label is not None and args.label != lab.name:
        raise CLIError(f"--label {args.label}: the schema's label is {lab.name!r} (--schema {args.schema}); "
                       "leave --label out or make them agree")
    label = lab.name if lab is not None else args.label
    if label is not None and label not in header:
        raise CLIError(f"{args.data}: no column {label!r} (columns: {', '.join(header)})")
    if schema is not None:
        schema = _select_columns(schema, args)
        absent = [c.name for c in schema.features if c.name not in header]
        if absent:
            raise CLIError(f"{args.data}: no column(s) {', '.join(map(repr, absent))} of the schema "
                           f"(columns: {', '.join(header)})")
        typed = {}
        for col in schema.features:
            if col.kind == "numeric":
                typed[col.name] = _lenient_numbers(frame, col.name)
            else:
                s = frame[col.name]
                typed[col.name] = s.where(~(s.isin(_NA_TEXT) & ~s.isin(col.categories or ())), None).astype(object)
        X = pd.DataFrame(typed)
        y = None
        if label is not None:
            if lab is not None and lab.kind == "numeric":
                y = _lenient_numbers(frame, label)
            elif lab is not None:
                s = frame[label]
                y = s.where(~(s.isin(_NA_TEXT) & ~s.isin(lab.categories or ())), None).astype(object)
            else:
                y = frame[label]
    else:
        names = _fit_features(header, label, args, args.data)
        X = pd.DataFrame({n: (frame.numbers(n) if frame.numbers(n) is not None else frame[n]) for n in names})
        y = frame[label] if label is not None else None
    try:
        report = check_nonprivate(X, y, norm_bound=args.norm_bound, schema=schema, classes=args.classes,
                                  delta=args.delta, row_norm=args.row_norm)
    except (ValueError, TypeError) as exc:
        raise CLIError(f"{args.data}: {exc}") from None
    print(dataclasses.replace(report, source=args.data).to_text(first_row=1))
    return 0 if report.ok else 1


# ------------------------------------------------------------------ schema
def _cmd_schema(args: argparse.Namespace) -> int:
    import pandas as pd

    from .schema import PrivacyLeakWarning, draft_schema_nonprivate

    if args.label is not None and args.label in (args.ignore or ()):
        raise CLIError(f"--ignore: {args.label!r} is the label (--label {args.label}); a column is the label or "
                       "ignored, not both")
    frame, _ = _read_table(args.data, all_text=True)  # (every column is looked at as text)
    header = list(frame.columns)
    for option, names in (("--label", [args.label] if args.label else []), ("--ignore", args.ignore or [])):
        unknown = [c for c in names if c not in header]
        if unknown:
            raise CLIError(f"{option}: no column(s) {', '.join(map(repr, unknown))} in {args.data} "
                           f"(columns: {', '.join(header)})")
    typed = {}
    for name in header:  # a column of numbers (missing cells allowed) is numeric, any other is text
        s = frame[name]
        missing = s.isin(_NA_TEXT)
        v = pd.to_numeric(s.where(~missing, None), errors="coerce")
        numeric = bool(np.all(v.notna().to_numpy() | missing.to_numpy())) and not bool(missing.all())
        typed[name] = v if numeric else s.where(~missing, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # said below, on one line
        try:
            draft = draft_schema_nonprivate(pd.DataFrame(typed), label=args.label, ignore=args.ignore or (),
                                            max_categories=args.max_categories, label_kind=args.label_kind)
        except (ValueError, TypeError) as exc:
            raise CLIError(f"{args.data}: {exc}") from None
    _write_atomic(args.out, draft.to_json() + "\n")
    kinds = [c.kind for c in draft.features]
    label = draft.label
    said = "no label" if label is None else f"label {label.name!r} ({label.kind})"
    print(f"wrote {args.out}: {len(kinds)} features ({kinds.count('numeric')} numeric, "
          f"{kinds.count('categorical')} categorical), {said}, "
          f"{sum(c.role == 'ignore' for c in draft.columns)} ignored. NOT PRIVATE: a draft whose bounds and domains "
          "were read from the data; replace each by public knowledge, then delete the fields \"note\" and "
          "\"nonprivate_draft\" before fitting with it")
    return 0


# ------------------------------------------------------------------ the parser
def _probability(text: str) -> float:
    v = float(text)
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1); got {text}")
    return v


def _positive(text: str) -> float:
    v = float(text)
    if not (v > 0 and v < float("inf")):
        raise argparse.ArgumentTypeError(f"must be > 0; got {text}")
    return v


def _classes(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"a comma-separated list of class names; got {text!r}")
    dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if dup is not None:
        raise argparse.ArgumentTypeError(f"the class {dup!r} appears twice in {text!r}")
    if len(names) < 2:
        raise argparse.ArgumentTypeError(f"at least two classes; got {text!r}")
    seen: dict[float, str] = {}
    for n in names:
        try:
            v = float(n)
        except ValueError:
            continue
        if v in seen:
            raise argparse.ArgumentTypeError(f"{seen[v]!r} and {n!r} are the same number, but a label cell is compared "
                                             "with the classes as text, so they would be two different classes; give "
                                             "each class once, written as the data writes it")
        seen[v] = n
    return names


def _seed(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer; got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer; got {text}")
    return v


def _bounds(text: str) -> list[float]:
    parts = text.split(",")
    try:
        lo, hi = (float(t) for t in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"two numbers LOW,HIGH; got {text!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise argparse.ArgumentTypeError(f"finite numbers with LOW < HIGH; got {text!r}")
    return [lo, hi]


def _count(text: str) -> int:
    v = int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1; got {text}")
    return v


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pdpkit")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree without installing
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (``pdpkit --help``, ``pdpkit COMMAND --help``)."""
    p = argparse.ArgumentParser(prog="pdpkit", description="Private linear models by objective perturbation, "
                                "with a tight guarantee and a publishable per-person privacy report.")
    p.add_argument("--version", action="version", version=f"pdpkit {_version()}",
                   help="print pdpkit's version and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("schema", help="draft a schema (JSON) from a CSV for review: NOT private",
                       description="Draft a schema from the data: column roles, numeric bounds rounded outward, "
                       "categorical domains. The draft is NOT private (read from the records): review it and "
                       "replace every bound and domain by public knowledge before fitting with it.")
    s.add_argument("data", help="the CSV file (UTF-8, header row; gzip read transparently)")
    s.add_argument("--label", help="name of the label column")
    s.add_argument("--ignore", type=_split, metavar="COL[,COL...]",
                   help="columns the model must never see (identifiers, free text), comma-separated")
    s.add_argument("--max-categories", type=_count, default=50, metavar="K",
                   help="a text column with more distinct values is ignored rather than one-hot (default 50)")
    s.add_argument("--label-kind", choices=["categorical", "numeric"],
                   help="classification (categorical) or regression (numeric) label; default: guessed")
    s.add_argument("--out", required=True, help="where to write the draft schema (JSON)")
    s.set_defaults(func=_cmd_schema)

    f = sub.add_parser("fit", help="fit a private model on a CSV and write the release (JSON)")
    f.add_argument("data", help="the training CSV (UTF-8, header row; gzip read transparently)")
    f.add_argument("--label", help="name of the label column (optional with --schema: the schema's label)")
    f.add_argument("--schema", metavar="SCHEMA.json",
                   help="public schema (JSON) naming features, label and ignored columns, with public bounds and "
                   "domains; encodes categorical columns and scales every feature into the norm ball")
    cols = f.add_mutually_exclusive_group()
    cols.add_argument("--features", type=_split, metavar="COL[,COL...]",
                      help="use only these feature columns, comma-separated (default: all but the label)")
    cols.add_argument("--drop", type=_split, metavar="COL[,COL...]",
                      help="leave these columns out of the features (e.g. an identifier), comma-separated")
    f.add_argument("--epsilon", type=_positive, help="epsilon of the model's (epsilon, delta)-DP guarantee "
                   "(add/remove one record); omit it (with --delta and the report's budget) to let the planner "
                   "share what is left of --budget-epsilon/--ledger between the model and its report")
    f.add_argument("--delta", type=_probability,
                   help="delta of the model's guarantee, in (0, 1); far below 1/(number of records)")
    f.add_argument("--report-share", type=_positive, default=None, metavar="W",
                   help="with the planner: the report's share of epsilon relative to the model's (default 0.5)")
    f.add_argument("--classes", type=_classes, metavar="A,B[,C...]",
                   help="the public list of classes of a categorical label, comma-separated (needed for --loss "
                   "logistic without a --schema whose label is categorical, which gives them); the label's cells "
                   "are compared with them as text (so 1,1.0 is refused: two classes equal as numbers). Three or "
                   "more classes are fitted one-vs-rest")
    f.add_argument("--loss", choices=["logistic", "huber", "robust_log"],
                   help="logistic: classification (two label values); huber or robust_log: regression "
                   "(default: logistic, or huber for a schema's numeric label)")
    f.add_argument("--norm-bound", type=_positive, default=1.0,
                   help="public bound on each feature row's Euclidean norm (default 1; with --schema the rows "
                   "are encoded into this ball)")
    f.add_argument("--row-norm", default="raise", choices=["raise", "clip"],
                   help="a row beyond --norm-bound: stop with an error (raise, default) or shrink it onto the ball")
    f.add_argument("--no-intercept", action="store_true", help="fit no intercept")
    f.add_argument("--report", choices=["data-independent", "data-dependent", "adaptive"],
                   help="also release a per-person privacy report by this method")
    f.add_argument("--report-epsilon", type=_positive,
                   help="epsilon of the report's noisy statistics (data-dependent and adaptive reports)")
    f.add_argument("--report-delta", type=_probability, help="delta of the report's noisy statistics")
    f.add_argument("--rho", type=_probability, default=None, help="failure probability of each report bound "
                   "(default 0.05; with --report)")
    f.add_argument("--budget-epsilon", type=_positive,
                   help="total epsilon of a privacy budget the fit and its report are charged to; a fit that "
                   "would exceed it is refused before any noise is drawn")
    f.add_argument("--budget-delta", type=_probability, help="total delta of that budget, in (0, 1)")
    f.add_argument("--ledger", metavar="FILE", help="a ledger file (SQLite) the fit is charged to, shared by every "
                   "command and process that names it: created with --budget-epsilon/--budget-delta, then "
                   "continued; the remaining budget is printed")
    f.add_argument("--seed", type=_seed, default=None, help="seed of the noise (omit for OS entropy); a release "
                   "drawn from a seed is reproducible by anyone who knows it, so it is private only while the seed "
                   "stays secret")
    f.add_argument("--sign", metavar="KEY", help="sign the release with this private key (written by pdpkit "
                   "keygen): readers check it with pdpkit verify RELEASE --public-key KEY.pub")
    f.add_argument("--model", choices=["objpert", "ops", "adaops"], default="objpert",
                   help="objpert (default): objective perturbation (--loss); ops: linear regression by "
                   "one-posterior sampling at a public lambda; adaops: OPS with lambda chosen from a noisy "
                   "lambda_min (both: numeric labels with public bounds, --label-bounds or a schema's)")
    f.add_argument("--label-bounds", type=_bounds, metavar="LOW,HIGH",
                   help="--model ops/adaops: the labels' public bounds (a schema's numeric label gives its own)")
    f.add_argument("--n-max", type=_count, metavar="N",
                   help="--model ops/adaops: public bound on the number of records (default: the number of "
                   "records, which is then treated as public and written in the release)")
    f.add_argument("--sample-weight", metavar="COL",
                   help="a column of the CSV holding each record's weight (finite, >= 0; not a feature): the fit "
                   "minimizes the weighted loss, with the guarantee for records weighted at most --weight-bound")
    f.add_argument("--weight-bound", type=_positive, default=None, metavar="W",
                   help="with --sample-weight: the public bound on a record's weight that the guarantee assumes "
                   "(default 1); choose it from public knowledge, not from the data")
    f.add_argument("--weight-policy", choices=["refuse", "clip"], default=None,
                   help="with --sample-weight: a weight above --weight-bound stops the fit (refuse, default) or is "
                   "clipped to the bound (clip); the release states the policy")
    f.add_argument("--out", required=True, help="where to write the release (JSON)")
    f.set_defaults(func=_cmd_fit)

    r = sub.add_parser("report", help="private ex-post privacy bounds for any records, from a release")
    r.add_argument("release", help="the release (JSON) written by pdpkit fit with --report")
    r.add_argument("targets", help="CSV of the records to bound (members or not), with the label column")
    r.add_argument("--label", required=True, help="name of the label column")
    r.add_argument("--schema", metavar="SCHEMA.json",
                   help="the schema the release was fitted with (when the release does not carry it)")
    r.add_argument("--row-norm", default=None, choices=["raise", "clip"],
                   help="rows beyond the norm bound: as the release was fitted (default), stop, or clip")
    r.add_argument("--uniform", action="store_true", help="bounds that hold jointly for all rows")
    r.add_argument("--sample-weight", metavar="COL",
                   help="a weighted release: the column holding each person's weight, as the fit took it (each "
                   "bound is then at the person's weight; without it, at the release's weight bound, which holds "
                   "for every weight)")
    r.add_argument("--out", required=True, help="where to write the bounds (CSV: row, epsilon_bound)")
    r.add_argument("--plot", help="also draw the bounds' histogram to this PNG")
    r.add_argument("--public-key", metavar="KEY.pub", help="the publisher's public key: the release must be "
                   "signed by it (refused otherwise)")
    r.set_defaults(func=_cmd_report)

    q = sub.add_parser("predict", help="apply a released model to a CSV")
    q.add_argument("release", help="the release (JSON) written by pdpkit fit")
    q.add_argument("data", help="CSV of the records to predict, with the release's feature columns")
    q.add_argument("--schema", metavar="SCHEMA.json",
                   help="the schema the release was fitted with (when the release does not carry it)")
    q.add_argument("--out", required=True, help="where to write the predictions (CSV)")
    q.add_argument("--public-key", metavar="KEY.pub", help="the publisher's public key: the release must be "
                   "signed by it (refused otherwise)")
    q.set_defaults(func=_cmd_predict)

    c = sub.add_parser("check", help="NON-PRIVATE diagnostic: the rows a fit would refuse, with their values",
                       description="Read DATA as pdpkit fit would and print, for the curator, every row a fit "
                       "would refuse (rows numbered from 1, the header not counted), its column and value, and "
                       "the leak heuristics (rows that look scaled by a transformer fitted on the data, many rows "
                       "beyond the bound, delta not small). The output is NOT private: it names rows and values "
                       "of the data; never publish it. Exit status 0: no problem; 1: problems found; 2: a usage "
                       "error.")
    c.add_argument("data", help="the CSV file (UTF-8, header row; gzip read transparently)")
    c.add_argument("--schema", metavar="SCHEMA.json", help="the public schema (JSON) the fit encodes the records with")
    c.add_argument("--label", help="name of the label column (optional with --schema: the schema's label; "
                   "without either, only the features are checked)")
    c.add_argument("--classes", type=_classes, metavar="A,B[,C...]",
                   help="the public classes of the label, comma-separated (as pdpkit fit --classes): labels "
                   "outside them are reported")
    c.add_argument("--norm-bound", type=_positive, default=1.0, metavar="R",
                   help="the fit's bound on each feature row's Euclidean norm (default 1)")
    c.add_argument("--row-norm", default="raise", choices=["raise", "clip"],
                   help="the fit's --row-norm: under raise (default) rows beyond --norm-bound are reported")
    ccols = c.add_mutually_exclusive_group()
    ccols.add_argument("--features", type=_split, metavar="COL[,COL...]",
                       help="check only these feature columns, comma-separated (as pdpkit fit --features)")
    ccols.add_argument("--drop", type=_split, metavar="COL[,COL...]",
                       help="leave these columns out of the features, comma-separated (as pdpkit fit --drop)")
    c.add_argument("--delta", type=_probability, metavar="D",
                   help="the fit's delta, for the heuristic 'delta is not small against the number of records'")
    c.set_defaults(func=_cmd_check)

    g = sub.add_parser("page", help="write a static HTML page on which anyone computes their own privacy bound")
    g.add_argument("release", help="the release (JSON) with a privacy report")
    g.add_argument("--schema", metavar="SCHEMA.json",
                   help="the schema the release was fitted with (when the release does not carry it): the page "
                   "then asks for the raw record")
    g.add_argument("--out", required=True, help="the HTML file to write (self-contained, works offline)")
    g.add_argument("--title", default=None, help="the page's heading")
    g.add_argument("--book-url", default=None, help="base address of the pdpkit book, to link its privacy report "
                   "chapter")
    g.add_argument("--public-key", metavar="KEY.pub", help="the publisher's public key: the release must be "
                   "signed by it (refused otherwise)")
    g.add_argument("--sign", metavar="KEY", help="sign the page's data with this private key (pdpkit keygen)")
    g.set_defaults(func=_cmd_page)

    b = sub.add_parser("budget", help="show a ledger file: its budget, what was charged, what remains")
    b.add_argument("ledger_file", metavar="FILE", help="the ledger file (written by pdpkit fit --ledger)")
    b.add_argument("--json", action="store_true", help="print the budget and the entries as JSON")
    b.set_defaults(func=_cmd_budget)

    k = sub.add_parser("keygen", help="make a signing key pair: KEY (private, keep it secret) and KEY.pub",
                       description="Write a new Ed25519 private key to KEY (mode 0600) and its public key to "
                       "KEY.pub, and print the public key's fingerprint. Sign releases with fit --sign KEY and pages "
                       "with page --sign KEY; list the fingerprint (or KEY.pub) wherever your readers find your "
                       "releases, so that they can check them with pdpkit verify --public-key KEY.pub.")
    k.add_argument("--out", required=True, metavar="KEY", help="where to write the private key (KEY.pub beside it)")
    k.add_argument("--force", action="store_true", help="replace an existing KEY and KEY.pub (the old key is lost)")
    k.set_defaults(func=_cmd_keygen)

    v = sub.add_parser("verify", help="check a release: consistent, and signed by the publisher's key",
                       description="Read a release as predict and report do (every field checked, the guarantee "
                       "recomputed from its parameters) and print its guarantee, its fingerprint, its signer and "
                       "whether its noise came from a seed. With --public-key, the release must be signed by that "
                       "key. Exit status 0: consistent (and signed by the key given); 2: refused.")
    v.add_argument("release", help="the release (JSON) written by pdpkit fit")
    v.add_argument("--public-key", metavar="KEY.pub", help="the publisher's public key (KEY.pub from pdpkit keygen): "
                   "the release must be signed by it")
    v.set_defaults(func=_cmd_verify)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pdpkit`` console script and ``python -m pdpkit``; returns the exit status.

    Parameters
    ----------
    argv : sequence of str or None
        The arguments (``None``: ``sys.argv[1:]``).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if main_thread else None
    # Ctrl-C is recorded too, unless a caller has installed its own handler (main() inside its program)
    own_sigint = main_thread and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if own_sigint:
        signal.signal(signal.SIGINT, _on_sigint)
    _WRITTEN.clear()
    _RECEIVED.clear()
    try:
        try:
            _check_paths(args)
            with _warnings_as_lines(args.command):
                return int(args.func(args))
        except BaseException as exc:
            sig = _as_signal(exc)
            if sig is exc:
                raise
            raise sig from None
    except _RowError as exc:  # the kind of problem only; then the non-private command that names the rows
        hint = _find_rows(getattr(args, "check_argv", None) or [exc.path], getattr(args, "check_before", ""))
        print(_plain(f"pdpkit {args.command}: error: {exc.path}: {exc.text}; {hint}"), file=sys.stderr)
        return 2
    except CLIError as exc:
        print(f"pdpkit {args.command}: error: {_plain(str(exc))}", file=sys.stderr)
        return 2
    except ValueError as exc:  # a validation error of the library (names the parameter: said as the option)
        print(f"pdpkit {args.command}: error: {_as_options(_plain(str(exc)))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"pdpkit {args.command}: interrupted (Ctrl-C); {_what_was_written()}", file=sys.stderr)
        return 130
    except _Terminated:
        print(f"pdpkit {args.command}: terminated (SIGTERM); {_what_was_written()}", file=sys.stderr)
        return 128 + signal.SIGTERM
    finally:
        with _blocked():
            _discard_all()
        if main_thread:  # (None: a handler not installed from Python, which cannot be put back)
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
        if own_sigint:
            signal.signal(signal.SIGINT, signal.default_int_handler)


#: numpy's repr of a scalar (``np.str_('maybe')``, ``np.float64(1.0)``): a message shows the value it holds.
_NUMPY_REPR = re.compile(r"\bnp\.(?:str_|bytes_|bool_|float(?:16|32|64|128)|u?int(?:8|16|32|64))"
                         r"\(((?:'[^']*'|\"[^\"]*\"|[^()'\"])*)\)")
#: The library's parameter names, as the command line's options.
_API_OPTIONS = (
    (re.compile(r"\brandom_state\b"), "--seed"),
    (re.compile(r"\breport_epsilon\b"), "--report-epsilon"),
    (re.compile(r"\breport_delta\b"), "--report-delta"),
    (re.compile(r"\b(?:report|method)='([a-z-]+)'"), r"--report \1"),
    (re.compile(r"\brow_norm='([a-z]+)'"), r"--row-norm \1"),
    (re.compile(r"\brow_norm\b"), "--row-norm"),
    (re.compile(r"\bnorm_bound=(?=[0-9.])"), "--norm-bound "),
    (re.compile(r"\bnorm_bound\b"), "--norm-bound"),
    (re.compile(r"\bloss='([a-z_]+)'"), r"--loss \1"),
    (re.compile(r"\blabel_kind='([a-z]+)'"), r"--label-kind \1"),
    (re.compile(r"\bmax_categories\b"), "--max-categories"),
    (re.compile(r"\bsample_weight\b"), "--sample-weight"),
    (re.compile(r"\bweight_bound=(?=[0-9.])"), "--weight-bound "),
    (re.compile(r"\bweight_bound\b"), "--weight-bound"),
    (re.compile(r"\bweight_policy='([a-z]+)'"), r"--weight-policy \1"),
    (re.compile(r"\bweight_policy\b"), "--weight-policy"),
    (re.compile(r"\bfit_intercept=False\b"), "--no-intercept"),
    (re.compile(r"\b(epsilon|delta)=(?=[0-9.])"), r"--\1 "),
    (re.compile(r"^(epsilon|delta|rho) (?=must\b)"), r"--\1 "),
)


def _plain(message: str) -> str:
    """A message with numpy's scalar reprs replaced by the values they hold (``'maybe'``, not ``np.str_('maybe')``),
    and every control character (from a file's names or keys) shown as an escape: a message cannot move the
    terminal's cursor, erase a line or start another."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", _NUMPY_REPR.sub(r"\1", message))


#: Control characters (C0, DEL, C1): shown as ``\xNN`` in a message, never sent to the terminal.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _as_options(message: str) -> str:
    """A library message in the command line's words: ``random_state`` is ``--seed``, ``report_epsilon``
    ``--report-epsilon``, ``method='adaptive'`` ``--report adaptive``, ..."""
    for pattern, option in _API_OPTIONS:
        message = pattern.sub(option, message)
    return message


@contextlib.contextmanager
def _warnings_as_lines(command: str) -> Iterator[None]:
    """A PrivacyLeakWarning or a SeededReleaseWarning becomes one line on stderr; other warnings pass on."""
    from .release import SeededReleaseWarning
    from .schema import PrivacyLeakWarning

    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", PrivacyLeakWarning)
            warnings.simplefilter("always", SeededReleaseWarning)
            yield
    finally:
        said: set[str] = set()
        for w in caught:
            if issubclass(w.category, (PrivacyLeakWarning, SeededReleaseWarning)):
                if str(w.message) not in said:  # once, however often the release was verified
                    said.add(str(w.message))
                    print(f"pdpkit {command}: warning: {w.message}", file=sys.stderr)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)


def _what_was_written() -> str:
    return f"wrote {', '.join(_WRITTEN)} before stopping" if _WRITTEN else "no output written"


def _cmd_page(args: argparse.Namespace) -> int:
    from .page import privacy_page

    public_key = _public_key(args)
    private_key = _load_key(args.sign, "--sign", private=True) if args.sign else None
    release = _load_release(args.release, public_key)
    if _is_ops(release):
        raise CLIError(f"{args.release}: an OPS/AdaOPS release (--model {release.mechanism}): the privacy page "
                       "evaluates an ObjPert privacy report; each person's bound of this release comes from "
                       "pdpkit report")
    schema = _release_schema(release, args)
    try:
        text = privacy_page(release, schema=schema, title=args.title, book_url=args.book_url, private_key=private_key,
                            public_key=public_key)
    except ValueError as exc:
        raise CLIError(f"{args.release}: {exc}") from None
    _write_atomic(args.out, text)
    print(f"wrote {args.out}: a privacy page of {len(text.encode('utf-8')) // 1024} KB (open it in any browser; "
          "it computes each person's bound offline)")
    if private_key is not None:
        from .signing import key_fingerprint

        print(f"signed by the key {key_fingerprint(private_key)} (--sign {args.sign})")
    return 0


# ------------------------------------------------------------------ signing
def _cmd_keygen(args: argparse.Namespace) -> int:
    from .signing import write_keypair

    key, pub = args.out, f"{args.out}.pub"
    for path in (key, pub):
        if os.path.isdir(path):
            raise CLIError(f"--out {path}: is a directory; give a file name")
    d = os.path.dirname(os.path.abspath(key))
    if not os.path.isdir(d):
        raise CLIError(f"--out {key}: the directory {d} does not exist")
    _check_name("--out", pub, d)
    existing = [p for p in (key, pub) if os.path.lexists(p)]
    if existing and not args.force:
        raise CLIError(f"--out {key}: {' and '.join(existing)} exist{'s' if len(existing) == 1 else ''}; a key is not "
                       "replaced unless asked (--force): releases signed with the old key no longer match a new one")
    try:
        fingerprint = write_keypair(key, overwrite=args.force)
    except OSError as exc:
        raise CLIError(f"--out {key}: cannot write ({exc.strerror or exc})") from None
    print(f"wrote {key} (the private key, mode 0600: keep it secret, never publish it) and {pub} (the public key)")
    print(f"public key fingerprint: {fingerprint}")
    print(f"list this fingerprint (or publish {pub}) wherever your readers find your releases, so that they can "
          f"check a release with: pdpkit verify RELEASE.json --public-key {os.path.basename(pub)}")
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from .release import SEEDED_NOTE, SeededReleaseWarning

    public_key = _public_key(args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededReleaseWarning)  # (said below, on the line "seeded")
        release = _load_release(args.release, public_key)  # every field, the guarantee, the signature
    g = release.guarantee
    print(f"{args.release}: consistent: " + (f"the guarantee {g} is what its parameters give" if g is not None
                                             else "it claims no guarantee (no norm bound)"))
    print(f"release fingerprint: {release.fingerprint}")
    if public_key is not None:
        print(f"signer: {release.signer}: the key of --public-key {args.public_key}; the signature matches every "
              "field of the file")
    elif release.signer is not None:
        print(f"signer: {release.signer}: the signature matches the file, but it was not checked against a "
              "publisher's key: compare this signer fingerprint with the one the publisher lists, or pass "
              "--public-key KEY.pub")
    else:
        print("signer: none: the file is unsigned, so anyone could have written it; compare the release fingerprint "
              "above with the one the publisher lists (or ask for a signed release and its KEY.pub)")
    if release.seeded:
        print(f"seeded: yes: {SEEDED_NOTE}")
    elif release.seeded is False:
        print("seeded: no (the noise came from the operating system's entropy)")
    else:
        print("seeded: not recorded (a release of an older format)")
    return 0
