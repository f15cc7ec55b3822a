r"""The ``pdpkit`` command line: fit a private model from a CSV, report, predict.

::

    pdpkit fit DATA.csv --label COL --epsilon E --delta D
               [--loss logistic|huber|robust_log]
               [--norm-bound R] [--row-norm raise|clip] [--no-intercept]
               [--report METHOD --report-epsilon E2 --report-delta D2] [--rho P] [--seed S]
               --out RELEASE.json
    pdpkit report RELEASE.json TARGETS.csv --label COL --out REPORT.csv
                  [--plot PNG] [--uniform]
    pdpkit predict RELEASE.json DATA.csv --out PRED.csv

``fit`` trains :class:`pdpkit.estimators.ObjPertClassifier` (``--loss logistic``, the default;
exactly two label values, any strings) or :class:`pdpkit.estimators.ObjPertRegressor`
(``huber``/``robust_log``; numeric labels) and writes the publishable release
(:class:`pdpkit.release.Release`: the private coefficients, the public parameters, the
guarantee and, with ``--report``, the report's noisy statistics) as JSON. ``report`` evaluates
the released privacy report on any records, members or not, one output row per input row
in input order. ``predict`` applies the released model. All columns but the label are
features, in the order of the release. Bad input (a missing column, a non-number or NaN,
a row beyond the norm bound under ``raise``, a third label) stops with a message naming
the row and column and a non-zero exit, and writes no output file.

CSV files are read as UTF-8 (a byte-order mark is dropped; gzip-compressed files are read
transparently); column names must be unique. Every output path is checked before any work
starts (not an input file, not a directory, in an existing writable directory) and every
output is written atomically (a temporary file in the same directory, then renamed) with
the usual permissions (``0o666 & ~umask``). Ctrl-C (exit status 130) and SIGTERM (143) stop
with one line and leave neither a partial output nor a temporary file.

``pdpkit page RELEASE.json --out PRIVACY.html [--title T] [--book-url URL]`` writes the release's
privacy page (:func:`pdpkit.page.privacy_page`): one HTML file on which anyone computes their
own bound in the browser, offline.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import csv
import gzip
import io
import json
import math
import os
import signal
import sys
import tempfile
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

import numpy as np

__all__ = ["main", "read_csv"]


class CLIError(Exception):
    """A user error: printed as one line, exit status 2."""


def read_csv(path: str, *, label: str | None, feature_names: Sequence[str] | None = None,
             label_required: bool = True) -> tuple[np.ndarray, np.ndarray | None, list[str]]:
    """Read a CSV with a header: features as floats (validated), the label column as strings.

    Raises :class:`CLIError` naming the file, the row (1-based data row, as a spreadsheet
    shows it less the header) and the column for a missing column, an empty or non-numeric
    cell, NaN or infinity.
    """
    reader = csv.reader(io.StringIO(_read_text(path), newline=""))
    try:
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise CLIError(f"{path}: the file is empty (a header row is needed)") from None
        rows = [r for r in reader if any(cell.strip() for cell in r)]
    except csv.Error as exc:
        raise CLIError(f"{path}: line {reader.line_num}: not a readable CSV ({exc})") from None
    first: dict[str, int] = {}
    for j, h in enumerate(header, start=1):
        if h in first:
            raise CLIError(f"{path}: column {h!r} appears twice in the header (columns {first[h]} and {j}); "
                           "column names must be unique")
        first[h] = j
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
    idx = [header.index(f) for f in feature_names]
    X = np.empty((len(rows), len(idx)))
    for i, r in enumerate(rows, start=1):
        if len(r) != len(header):
            raise CLIError(f"{path}: row {i} has {len(r)} cells, the header has {len(header)}")
        for j, k in enumerate(idx):
            cell = r[k].strip()
            try:
                v = float(cell)
            except ValueError:
                raise CLIError(f"{path}: row {i}, column {header[k]!r}: {cell!r} is not a number") from None
            if not math.isfinite(v):
                raise CLIError(f"{path}: row {i}, column {header[k]!r}: {cell!r} is not finite")
            X[i - 1, j] = v
    y = None
    if label is not None:
        li = header.index(label)
        y = np.array([r[li].strip() for r in rows], dtype=object)
        for i, v in enumerate(y, start=1):
            if v == "":
                raise CLIError(f"{path}: row {i}, column {label!r}: empty label")
    if X.shape[0] == 0:
        raise CLIError(f"{path}: no data rows")
    return X, y, list(feature_names)


def _read_text(path: str) -> str:
    """The file's text: gzip-compressed (magic bytes 1f 8b) or not, UTF-8 with or without a byte-order mark."""
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
        raise CLIError(f"{path}: line {line}: byte 0x{raw[exc.start]:02x} is not UTF-8; the file must be "
                       "UTF-8 encoded (convert it, e.g. iconv -f latin1 -t utf-8)") from None


def _labels_for(loss: str, y: np.ndarray, path: str, label: str) -> np.ndarray:
    if loss == "logistic":
        values = sorted(set(y.tolist()))
        if len(values) != 2:
            raise CLIError(f"{path}: column {label!r} must hold exactly two label values for --loss logistic; "
                           f"found {len(values)}: {', '.join(map(repr, values[:5]))}{' ...' if len(values) > 5 else ''}")
        return y.astype(str)
    out = np.empty(y.shape[0])
    for i, v in enumerate(y, start=1):
        try:
            out[i - 1] = float(v)
        except ValueError:
            raise CLIError(f"{path}: row {i}, column {label!r}: {v!r} is not a number (--loss {loss} "
                           f"needs numeric labels)") from None
        if not math.isfinite(out[i - 1]):
            raise CLIError(f"{path}: row {i}, column {label!r}: {v!r} is not finite")
    return out


def _check_rows(X: np.ndarray, norm_bound: float, row_norm: str, path: str) -> None:
    if row_norm == "raise":
        norms = np.linalg.norm(X, axis=1)
        over = np.flatnonzero(norms > norm_bound * (1 + 1e-12))
        if over.size:
            i = int(over[0])
            raise CLIError(f"{path}: row {i + 1} has Euclidean norm {norms[i]:.6g} > --norm-bound {norm_bound:g} "
                           f"({over.size} such rows); rescale the features or pass --row-norm clip")


# ------------------------------------------------------------------ outputs
#: Temporary files of this process (output's absolute path -> (temporary path, fd)): reserved next to each
#: output before the work starts, filled and renamed at the end, removed on every other way out (errors,
#: Ctrl-C, SIGTERM).
_RESERVED: dict[str, tuple[str, int]] = {}
_WRITTEN: list[str] = []
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _Terminated(BaseException):
    """Raised by the SIGTERM handler (like KeyboardInterrupt for SIGINT)."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated


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


def _reserve(path: str, option: str) -> tuple[str, int]:
    """A temporary file next to ``path``, with the mode the output will have."""
    d = os.path.dirname(os.path.abspath(path))
    with _blocked():
        try:
            fd, tmp = tempfile.mkstemp(dir=d, prefix=".pdpkit-", suffix=".tmp")
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
    for inp in inputs:
        if _same_file(inp, path):
            raise CLIError(f"{option} {path}: is the input file {inp}; writing it would destroy the input, "
                           "give another file name")
    _reserve(path, option)


def _same_file(a: str, b: str) -> bool:
    """The same file, also through a symlink or a hard link."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)


def _check_paths(args: argparse.Namespace) -> None:
    """Every output path checked (and its temporary file reserved) before any work starts."""
    inputs = [getattr(args, name) for name in ("data", "release", "targets") if hasattr(args, name)]
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


def _estimator_for(args: argparse.Namespace):
    from .estimators import ObjPertClassifier, ObjPertRegressor

    cls = ObjPertClassifier if args.loss == "logistic" else ObjPertRegressor
    return cls(args.epsilon, args.delta, loss=args.loss, norm_bound=args.norm_bound, row_norm=args.row_norm,
               fit_intercept=not args.no_intercept, report=args.report, report_epsilon=args.report_epsilon,
               report_delta=args.report_delta, rho=args.rho, random_state=args.seed)


def _cmd_fit(args: argparse.Namespace) -> int:
    X, y, names = read_csv(args.data, label=args.label)
    y = _labels_for(args.loss, y, args.data, args.label)
    _check_rows(X, args.norm_bound, args.row_norm, args.data)
    est = _estimator_for(args)
    try:
        import pandas as pd

        est.fit(pd.DataFrame(X, columns=names), y)
    except ImportError:  # pragma: no cover - pandas ships with the test extra
        est.fit(X, y)
    release = est.release_
    text = release.to_json(indent=2)
    _write_atomic(args.out, text + "\n")
    g = est.privacy_spent()
    print(f"wrote {args.out}: {len(names)} features, {g}")
    return 0


def _load_release(path: str):
    from .release import Release

    try:
        with open(path, encoding="utf-8") as fh:
            return Release.from_json(fh.read())  # strict schema, guarantee recomputed
    except OSError as exc:
        raise CLIError(f"{path}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError, json.JSONDecodeError) as exc:
        raise CLIError(f"{path}: refused: {exc}") from None


def _release_rows(release, X: np.ndarray, row_norm: str, path: str) -> np.ndarray:
    from .estimators import prepare_rows

    _check_rows(X, release.norm_bound, row_norm, path)
    return prepare_rows(X, norm_bound=release.norm_bound, row_norm="clip", fit_intercept=release.fit_intercept)


def _cmd_report(args: argparse.Namespace) -> int:
    release = _load_release(args.release)
    if release.report is None:
        raise CLIError(f"{args.release}: the release carries no privacy report (fit it with --report METHOD)")
    X, y, _ = read_csv(args.targets, label=args.label, feature_names=release.feature_names)
    loss = release.loss
    y = _labels_for(loss, y, args.targets, args.label) if loss != "logistic" else y.astype(str)
    if loss == "logistic":
        classes = [str(c) for c in release.classes]
        bad = np.flatnonzero(~np.isin(y, classes))
        if bad.size:
            i = int(bad[0])
            raise CLIError(f"{args.targets}: row {i + 1}, column {args.label!r}: {y[i]!r} is not one of the "
                           f"release's labels {classes}")
        ys = np.where(y == classes[1], 1.0, -1.0)
    else:
        ys = y
    rows = _release_rows(release, X, args.row_norm or release.row_norm, args.targets)
    report = release.privacy_report
    bounds = np.asarray(report.epsilon_bound(rows, ys, uniform=args.uniform), dtype=float)
    text = _csv_text(["row", "epsilon_bound"], [[i + 1, repr(float(b))] for i, b in enumerate(bounds)])
    outputs = [("--out", args.out, lambda fh: fh.write(text.encode("utf-8")))]
    if args.plot:
        from . import plotting as pp
        from .report import plot_report

        pp.setup()
        fig, _ = plot_report(bounds, kind="hist")
        outputs.append(("--plot", args.plot, lambda fh: fig.savefig(fh, format="png", dpi=150, bbox_inches="tight")))
    _write_outputs(outputs)  # the CSV and the plot appear together, or neither
    print(f"wrote {args.out}: {bounds.size} bounds, median {np.median(bounds):.4g}, max {np.max(bounds):.4g} "
          f"(each holds with probability >= {1 - report.rho:g})")
    return 0


def _cmd_predict(args: argparse.Namespace) -> int:
    release = _load_release(args.release)
    X, _, _ = read_csv(args.data, label=None, feature_names=release.feature_names, label_required=False)
    scores = release.decision_function(X)
    if release.loss == "logistic" and release.classes is not None:
        labels = [release.classes[int(s > 0)] for s in scores]
        rows = [[i + 1, lab, repr(float(s))] for i, (lab, s) in enumerate(zip(labels, scores, strict=True))]
        text = _csv_text(["row", "prediction", "score"], rows)
    else:
        text = _csv_text(["row", "prediction"], [[i + 1, repr(float(s))] for i, s in enumerate(scores)])
    _write_atomic(args.out, text)
    print(f"wrote {args.out}: {scores.size} predictions")
    return 0


def _probability(text: str) -> float:
    v = float(text)
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1); got {text}")
    return v


def _positive(text: str) -> float:
    v = float(text)
    if not (v > 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"must be > 0; got {text}")
    return v


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (``pdpkit --help``)."""
    p = argparse.ArgumentParser(prog="pdpkit", description="Private linear models by objective perturbation, "
                                "with a tight guarantee and a publishable per-person privacy report.")
    sub = p.add_subparsers(dest="command", required=True)

    f = sub.add_parser("fit", help="fit a private model on a CSV and write the release (JSON)")
    f.add_argument("data")
    f.add_argument("--label", required=True, help="name of the label column")
    f.add_argument("--epsilon", type=_positive, required=True)
    f.add_argument("--delta", type=_probability, required=True)
    f.add_argument("--loss", default="logistic", choices=["logistic", "huber", "robust_log"])
    f.add_argument("--norm-bound", type=_positive, default=1.0, help="bound on each feature row's Euclidean norm")
    f.add_argument("--row-norm", default="raise", choices=["raise", "clip"])
    f.add_argument("--no-intercept", action="store_true")
    f.add_argument("--report", choices=["data-independent", "data-dependent", "adaptive"])
    f.add_argument("--report-epsilon", type=_positive)
    f.add_argument("--report-delta", type=_probability)
    f.add_argument("--rho", type=_probability, default=0.05, help="failure probability of each report bound")
    f.add_argument("--seed", type=int, default=None, help="seed of the noise (omit for OS entropy)")
    f.add_argument("--out", required=True)
    f.set_defaults(func=_cmd_fit)

    r = sub.add_parser("report", help="private ex-post privacy bounds for any records, from a release")
    r.add_argument("release")
    r.add_argument("targets")
    r.add_argument("--label", required=True)
    r.add_argument("--row-norm", default=None, choices=["raise", "clip"],
                   help="rows beyond the norm bound: as the release was fitted (default), stop, or clip")
    r.add_argument("--uniform", action="store_true", help="bounds that hold jointly for all rows")
    r.add_argument("--out", required=True)
    r.add_argument("--plot", help="also draw the bounds' histogram to this PNG")
    r.set_defaults(func=_cmd_report)

    q = sub.add_parser("predict", help="apply a released model to a CSV")
    q.add_argument("release")
    q.add_argument("data")
    q.add_argument("--out", required=True)
    q.set_defaults(func=_cmd_predict)

    g = sub.add_parser("page", help="write a static HTML page on which anyone computes their own privacy bound")
    g.add_argument("release", help="the release (JSON) with a privacy report")
    g.add_argument("--out", required=True, help="the HTML file to write (self-contained, works offline)")
    g.add_argument("--title", default=None, help="the page's heading")
    g.add_argument("--book-url", default=None, help="base address of the pdpkit book, to link its privacy report "
                   "chapter")
    g.set_defaults(func=_cmd_page)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pdpkit`` console script and ``python -m pdpkit``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if main_thread else None
    _WRITTEN.clear()
    try:
        _check_paths(args)
        return int(args.func(args))
    except CLIError as exc:
        print(f"pdpkit {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # a validation error of the library (names the parameter/row)
        print(f"pdpkit {args.command}: error: {exc}", file=sys.stderr)
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


def _what_was_written() -> str:
    return f"wrote {', '.join(_WRITTEN)} before stopping" if _WRITTEN else "no output written"


def _cmd_page(args: argparse.Namespace) -> int:
    from .page import privacy_page

    release = _load_release(args.release)
    try:
        text = privacy_page(release, title=args.title, book_url=args.book_url)
    except ValueError as exc:
        raise CLIError(f"{args.release}: {exc}") from None
    _write_atomic(args.out, text)
    print(f"wrote {args.out}: a privacy page of {len(text.encode('utf-8')) // 1024} KB (open it in any browser; "
          "it computes each person's bound offline)")
    return 0
