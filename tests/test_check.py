"""pdpkit.check and ``pdpkit check``: the non-private diagnostic, the leak heuristics, and refusals that leak nothing.

A refusal of the records (``pdpkit fit``, ``Schema.encode``/``encode_label``) must read the same on
neighbouring data sets: the bad record at another index, with another value, one more or one
fewer such record, a clean record more or less, a bad record of the same kind in another column.
``test_messages_identical_on_neighbours`` checks every refusal path on such sets, and a leaky
formatter (the messages these paths printed before) shows that the comparison catches a leak.
The rows are found by the explicitly non-private ``check_nonprivate`` / ``pdpkit check``.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, RobustScaler, StandardScaler

import pdpkit.preprocessing
from pdpkit import cli
from pdpkit.check import (
    CLIP_FRACTION,
    NONPRIVATE_BANNER,
    CheckProblem,
    CheckReport,
    _column_stats,
    check_nonprivate,
    leak_heuristics_nonprivate,
)
from pdpkit.preprocessing import SchemaEncoder
from pdpkit.schema import Column, Schema

# ------------------------------------------------------------------ neighbouring data sets
HEADER = ["a", "b", "c", "label"]


def _base_rows(n: int = 12) -> list[list[str]]:
    rng = np.random.default_rng(5)
    X = rng.uniform(-0.3, 0.3, size=(n, 3))
    return [[f"{v:.4f}" for v in x] + ["yes" if x[0] > 0 else "no"] for x in X]


def _neighbours(col: str, other: str | None, v1: str, v2: str, header: list[str],
                base: list[list[str]]) -> list[list[list[str]]]:
    """Data sets that differ in the bad records only: index, value, count, clean rows, column of the same kind."""
    j, k = header.index(col), header.index(other) if other is not None else None

    def edit(changes, rows=None):
        rows = [list(r) for r in (base if rows is None else rows)]
        for i, jj, v in changes:
            rows[i][jj] = v
        return rows

    sets = [edit([(3, j, v1)]), edit([(9, j, v1)]), edit([(3, j, v2)]), edit([(3, j, v1), (9, j, v2)]),
            edit([(3, j, v1)], base + [base[0]]),  # one clean record more
            edit([(3, j, v1)], base[:-1])]  # one fewer
    if k is not None:
        sets.append(edit([(5, k, v1)]))  # the same kind of problem in another column
    return sets


def _write(path, header, rows) -> None:
    path.write_text("\n".join([",".join(header)] + [",".join(r) for r in rows]) + "\n", encoding="utf-8")


def _identical(texts: list[str]) -> bool:
    return len(set(texts)) == 1


def _cli_texts(tmp_path, capsys, argv: list[str], header: list[str], sets, *, raw: Callable | None = None):
    """stderr of ``pdpkit fit`` on each data set, written to the same path (so the hint is the same)."""
    path = tmp_path / "data.csv"
    out = tmp_path / "never.json"
    texts = []
    for rows in sets:
        if raw is None:
            _write(path, header, rows)
        else:
            path.write_bytes(raw(rows))
        assert cli.main(["fit", str(path), *argv, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "pdpkit check" in err and not out.exists(), err
        texts.append(err)
    return texts


FIT = ["--epsilon", "1", "--delta", "1e-6"]
PLAIN = ["--label", "label", "--classes", "no,yes", *FIT]

#: (name, column, same-kind column, value, other value, extra fit options, expected text)
PLAIN_CASES = [
    ("text", "a", "c", "abc", "x1", [], "a numeric feature cell is not a number"),
    ("empty feature", "b", "a", "", " ", [], "a numeric feature cell is not a number"),
    ("nan", "a", "b", "nan", "-NaN", [], "a numeric feature cell is not a finite number"),
    ("infinity", "b", "c", "inf", "-inf", [], "a numeric feature cell is not a finite number"),
    ("norm", "a", "c", "3.0", "40", [], "a row's Euclidean norm exceeds --norm-bound 1;"),
    ("label", "label", None, "maybe", "perhaps", [], "a label is not one of the classes (--classes no,yes"),
    ("empty label", "label", None, "", "", [], "a label cell is empty (column 'label')"),
]


@pytest.mark.parametrize("name, col, other, v1, v2, extra, expected", PLAIN_CASES, ids=[c[0] for c in PLAIN_CASES])
def test_messages_identical_on_neighbours(tmp_path, capsys, name, col, other, v1, v2, extra, expected):
    sets = _neighbours(col, other, v1, v2, HEADER, _base_rows())
    texts = _cli_texts(tmp_path, capsys, [*PLAIN, *extra], HEADER, sets)
    assert _identical(texts), texts
    assert expected in texts[0]
    assert not re.search(r"row \d|line \d", texts[0]) and (v1 == "" or repr(v1) not in texts[0])


def test_messages_identical_on_neighbours_numeric_label_and_file_structure(tmp_path, capsys):
    base = [[r[0], r[1], r[2], f"{0.1 * i:.1f}"] for i, r in enumerate(_base_rows())]
    sets = _neighbours("label", None, "high", "n/a", HEADER, base)
    texts = _cli_texts(tmp_path, capsys, ["--label", "label", "--loss", "huber", *FIT], HEADER, sets)
    assert _identical(texts) and "a label cell is not a number" in texts[0] and "--loss huber" in texts[0]
    # a row of another width, and a byte that is not UTF-8, anywhere in the file
    def short(rows):
        return "\n".join([",".join(HEADER)] + [",".join(r[:3] if "CUT" in r else r) for r in rows]).encode()

    sets = _neighbours("a", "b", "CUT", "CUT", HEADER, _base_rows())
    texts = _cli_texts(tmp_path, capsys, PLAIN, HEADER, sets, raw=short)
    assert _identical(texts) and "another number of cells than the header (4)" in texts[0]

    def latin(rows):
        return "\n".join([",".join(HEADER)] + [",".join(r) for r in rows]).encode("latin-1")

    sets = _neighbours("label", None, "café", "naïve", HEADER, _base_rows())
    texts = _cli_texts(tmp_path, capsys, PLAIN, HEADER, sets, raw=latin)
    assert _identical(texts) and "a byte is not UTF-8" in texts[0]


# -------- with a schema
S_HEADER = ["pid", "age", "score", "colour", "shape", "label"]


def _schema() -> Schema:
    return Schema([Column("pid", role="ignore"), Column("age", low=0, high=120), Column("score", low=-4, high=4),
                   Column("colour", kind="categorical", categories=("red", "green", "blue")),
                   Column("shape", kind="categorical", categories=("round", "square")),
                   Column("label", role="label", kind="categorical", categories=("no", "yes"))])


def _schema_rows(n: int = 12) -> list[list[str]]:
    rng = np.random.default_rng(6)
    return [[str(100 + i), str(int(rng.integers(18, 90))), f"{rng.normal():.3f}",
             str(rng.choice(["red", "green", "blue"])), str(rng.choice(["round", "square"])),
             str(rng.choice(["no", "yes"]))] for i in range(n)]


SCHEMA_CASES = [
    ("text", "age", "score", "old", "young", "a numeric feature cell is not a number"),
    ("infinity", "age", "score", "inf", "-inf", "a numeric feature cell is not a finite number"),
    ("missing", "age", "colour", "", "NA", "a feature value is missing"),
    ("unknown", "colour", "shape", "purple", "pink", "a categorical feature value is outside the schema's domain"),
    ("label", "label", None, "maybe", "perhaps", "a label is not one of the schema's label classes ['no', 'yes']"),
    ("missing label", "label", None, "", "NA", "a label cell is missing (column 'label'"),
]


@pytest.mark.parametrize("name, col, other, v1, v2, expected", SCHEMA_CASES, ids=[c[0] for c in SCHEMA_CASES])
def test_messages_identical_on_neighbours_with_a_schema(tmp_path, capsys, name, col, other, v1, v2, expected):
    sp = tmp_path / "schema.json"
    _schema().write(sp)
    sets = _neighbours(col, other, v1, v2, S_HEADER, _schema_rows())
    texts = _cli_texts(tmp_path, capsys, ["--schema", str(sp), *FIT], S_HEADER, sets)
    assert _identical(texts), texts
    assert expected in texts[0] and "pdpkit.check" not in texts[0]
    assert not re.search(r"row \d|line \d", texts[0]) and (v1 == "" or repr(v1) not in texts[0])


PY_CASES = [
    ("text", "age", "score", "old", "young"),
    ("infinity", "age", "score", math.inf, -math.inf),
    ("missing", "age", "colour", None, math.nan),
    ("unknown", "colour", "shape", "purple", "pink"),
]


def _frame(rows: list[list[str]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=S_HEADER).astype(object)
    for c in ("age", "score"):
        frame[c] = [float(v) if isinstance(v, str) and re.fullmatch(r"-?[\d.]+", v) else v for v in frame[c]]
    return frame


@pytest.mark.parametrize("name, col, other, v1, v2", PY_CASES, ids=[c[0] for c in PY_CASES])
def test_schema_encode_messages_identical_on_neighbours(name, col, other, v1, v2):
    schema = _schema()
    texts = []
    for rows in _neighbours(col, other, v1, v2, S_HEADER, _schema_rows()):
        with pytest.raises((TypeError, ValueError)) as exc:
            schema.encode(_frame(rows))
        texts.append(f"{type(exc.value).__name__}: {exc.value}")
    assert _identical(texts), texts
    assert texts[0].endswith("a non-private diagnostic for the curator (never publish its output)")
    assert (name == "text") == texts[0].startswith("TypeError")  # the exception types callers catch are kept


def test_encode_label_messages_identical_on_neighbours():
    schema = _schema()
    numeric = Schema([Column("x", low=0, high=1), Column("y", role="label", low=0, high=10)])
    for s, values, bad in ((schema, ["no", "yes"] * 6, ["maybe", "perhaps"]), (schema, ["no", "yes"] * 6, [None, None]),
                           (numeric, [1.0, 2.0] * 6, [math.inf, -math.inf]), (numeric, [1.0, 2.0] * 6, ["a", "b"]),
                           (numeric, [1.0, 2.0] * 6, [math.nan, None])):
        texts = []
        for changes, extra in (([(3, bad[0])], 0), ([(9, bad[0])], 0), ([(3, bad[1])], 0),
                               ([(3, bad[0]), (9, bad[1])], 0), ([(3, bad[0])], 1), ([(3, bad[0])], -1)):
            y = list(values) + values[:extra] if extra >= 0 else list(values[:extra])
            y = list(y)
            for i, v in changes:
                y[i] = v
            with pytest.raises((TypeError, ValueError)) as exc:
                s.encode_label(pd.Series(y, dtype=object))
            texts.append(f"{type(exc.value).__name__}: {exc.value}")
        assert _identical(texts), texts
        assert "check_nonprivate(X, y, schema=schema)" in texts[0]


def _leaky_norm(rows: list[list[str]]) -> str:
    """The norm refusal as the command line printed it before: the first row, its norm and the count."""
    X = np.array([[float(v) for v in r[:3]] for r in rows])
    norms = np.linalg.norm(X, axis=1)
    over = np.flatnonzero(norms > 1.0)
    return f"row {over[0] + 1} has Euclidean norm {norms[over[0]]:.6g} > --norm-bound 1 ({over.size} such rows)"


def _leaky_cell(rows: list[list[str]]) -> str:
    """The cell refusal as it was printed before: the first bad cell's row, column and value."""
    for i, r in enumerate(rows):
        for j, v in enumerate(r[:3]):
            if not re.fullmatch(r"-?[\d.]+", v):
                return f"row {i + 1}, column {HEADER[j]!r}: {v!r} is not a number"
    return ""


def _leaky_labels(rows: list[list[str]]) -> str:
    """The label refusal as it was printed before: how many values, and which."""
    values = sorted({r[3] for r in rows})
    return f"column 'label' must hold exactly two label values; found {len(values)}: {', '.join(map(repr, values))}"


@pytest.mark.parametrize("leaky, case", [(_leaky_norm, ("a", "c", "3.0", "40")), (_leaky_cell, ("a", "c", "abc", "x1")),
                                         (_leaky_labels, ("label", None, "maybe", "perhaps"))])
def test_the_neighbour_comparison_catches_a_leaky_message(leaky, case):
    sets = _neighbours(*case, HEADER, _base_rows())
    texts = [leaky(rows) for rows in sets]
    assert all(texts) and not _identical(texts), texts


def test_report_and_predict_refusals_identical_on_neighbours(tmp_path, capsys):
    """The targets of report and predict are not the training data; the same rule costs nothing there."""
    train = tmp_path / "train.csv"
    _write(train, HEADER, _base_rows(40))
    rel = tmp_path / "rel.json"
    assert cli.main(["fit", str(train), *PLAIN, "--report", "data-independent", "--seed", "1", "--out", str(rel)]) == 0
    capsys.readouterr()
    path, out = tmp_path / "targets.csv", tmp_path / "never.csv"
    for command, (col, other, v1, v2) in ((["report", "--label", "label"], ("label", None, "maybe", "perhaps")),
                                          (["report", "--label", "label"], ("a", "c", "3.0", "40")),
                                          (["predict"], ("a", "c", "3.0", "40")), (["predict"], ("b", "c", "x", "y"))):
        texts = []
        for rows in _neighbours(col, other, v1, v2, HEADER, _base_rows()):
            _write(path, HEADER, rows)
            argv = [command[0], str(rel), str(path), *command[1:], "--out", str(out)]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (a seeded release says so when read)
                assert cli.main(argv) == 2
            texts.append(capsys.readouterr().err)
        assert _identical(texts), texts
        assert "pdpkit check" in texts[0] and not re.search(r"row \d", texts[0]) and repr(v1) not in texts[0]
        assert not out.exists()


# ------------------------------------------------------------------ check_nonprivate
def test_check_nonprivate_names_rows_columns_and_values():
    X = pd.DataFrame({"a": [0.1, "abc", 0.2, 0.3, np.inf, 0.1], "b": [0.1, 0.1, 2.0, None, 0.1, 0.2]})
    y = ["no", "yes", "maybe", "", "no", "yes"]
    report = check_nonprivate(X, y, norm_bound=1.0, classes=["no", "yes"], delta=1e-9)
    kinds = {(p.kind, p.columns): (p.rows, p.values) for p in report.problems}
    assert kinds[("a numeric feature cell is not a number", ("a",))] == ((1,), ("'abc'",))
    assert kinds[("a numeric feature cell is not a finite number", ("a",))] == ((4,), ("'inf'",))
    assert kinds[("a numeric feature cell is not a finite number", ("b",))] == ((3,), ("'nan'",))  # None: NaN
    assert kinds[("a row's Euclidean norm exceeds norm_bound=1", ())] == ((2,), ("2.00998",))
    assert kinds[("a label cell is empty or missing", ("label",))] == ((3,), ("''",))
    assert kinds[("a label is not one of the classes ['no', 'yes']", ("label",))] == ((2,), ("'maybe'",))
    assert not report.ok
    text = str(report)
    assert text.startswith(NONPRIVATE_BANNER.format(source="X")) and "0-based positions" in text
    assert "column 'a': row 1 (value 'abc')" in text
    # numeric text is a number here, as the estimators read it; clean data are ok
    clean = check_nonprivate(pd.DataFrame({"a": ["0.1", "0.2"], "b": [0.3, 0.1]}), ["no", "yes"], norm_bound=1.0,
                             classes=["no", "yes"])
    assert clean.ok and clean.problems == () and "no problem found" in str(clean)


def test_check_nonprivate_on_arrays_with_many_bad_rows_and_clip():
    X = np.full((40, 2), 0.1)
    X[5:25, 0] = 3.0
    X[30, 1] = np.nan
    report = check_nonprivate(X, norm_bound=1.0)
    norm = next(p for p in report.problems if "norm" in p.kind)
    assert norm.rows == tuple(range(5, 25)) and len(norm.values) == 5
    assert "row 6, 7, 8, 9, 10 … and 15 more" not in report.to_text()  # (rows, plural)
    assert "rows 6, 7, 8, 9, 10 … and 15 more" in report.to_text(first_row=1)
    assert [p.rows for p in report.problems if "finite" in p.kind] == [(30,)]
    assert any("one row in twenty" in m for m in report.leaks)  # the heuristics on the finite rows
    clipped = check_nonprivate(X, norm_bound=1.0, row_norm="clip")
    assert not any("norm" in p.kind for p in clipped.problems)  # clipping refuses no row
    assert check_nonprivate(X[:, :1] * 0 + 0.5, y=[1] * 40).notes  # labels without classes: said so
    with pytest.raises(ValueError, match="row_norm"):
        check_nonprivate(X, row_norm="shrink")


def test_check_nonprivate_with_a_schema():
    schema = _schema()
    rows = _schema_rows(8)
    frame = _frame(rows).astype(object)
    frame.loc[2, "age"] = "old"
    frame.loc[4, "colour"] = "purple"
    frame.loc[5, "score"] = None
    frame.loc[6, "score"] = np.inf
    y = list(frame["label"])
    y[1] = "maybe"
    y[3] = None
    report = check_nonprivate(frame, y, schema=schema, delta=1e-9)
    got = {(p.kind.split(" (")[0], p.columns): p.rows for p in report.problems}
    assert got == {("a numeric feature cell is not a number", ("age",)): (2,),
                   ("a numeric feature cell is not a finite number", ("score",)): (6,),
                   ("a feature value is missing", ("score",)): (5,),
                   ("a categorical feature value is outside the schema's domain", ("colour",)): (4,),
                   ("a label cell is empty or missing", ("label",)): (3,),
                   ("a label is not one of the classes of the schema's label ['no', 'yes']", ("label",)): (1,)}
    assert report.notes == ("leak heuristics not run: a feature cell is refused",)
    lenient = Schema(schema.columns, handle_missing="zero", handle_unknown="zero")
    only = check_nonprivate(frame.assign(age=1.0, score=0.5), schema=lenient)
    assert only.ok  # the public rules encode missing and unknown values: nothing refused
    with pytest.raises(ValueError, match="differ from the schema's label classes"):
        check_nonprivate(frame, y, schema=schema, classes=["yes", "no"])
    with pytest.raises(ValueError, match="lacks the schema's feature column"):
        check_nonprivate(frame.drop(columns="shape"), schema=schema)


def test_the_report_is_a_frozen_dataclass_named_non_private():
    report = CheckReport(problems=(CheckProblem("k", (0,), ("a",), ("'x'",)),), n_rows=1)
    with pytest.raises(AttributeError):
        report.problems = ()  # type: ignore[misc]
    assert "NON-PRIVATE" in (CheckReport.__doc__ or "") and "NON-PRIVATE" in (check_nonprivate.__doc__ or "")
    assert not report.ok and CheckReport(problems=()).ok


def test_leak_warnings_left_preprocessing_without_an_alias():
    assert not hasattr(pdpkit.preprocessing, "leak_warnings")
    assert "leak_warnings" not in pdpkit.preprocessing.__all__ and "CLIP_FRACTION" not in pdpkit.preprocessing.__all__


# ------------------------------------------------------------------ pdpkit check
def test_check_command_exit_codes_and_output(tmp_path, capsys):
    rows = _base_rows()
    path = tmp_path / "d.csv"
    _write(path, HEADER, rows)
    assert cli.main(["check", str(path), "--label", "label", "--classes", "no,yes", "--delta", "1e-9"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("NON-PRIVATE: this report names rows and values of") and "no problem found" in out
    rows[3][1] = "abc"
    rows[7][3] = "maybe"
    _write(path, HEADER, rows)
    assert cli.main(["check", str(path), "--label", "label", "--classes", "no,yes"]) == 1
    out = capsys.readouterr().out
    assert "a numeric feature cell is not a number; column 'b': row 4 (value 'abc')" in out
    assert "a label is not one of the classes ['no', 'yes']; column 'label': row 8 (value 'maybe')" in out
    assert "numbered from 1, the header not counted" in out
    assert cli.main(["check", str(path), "--label", "nope"]) == 2  # a usage error
    assert "no column 'nope'" in capsys.readouterr().err
    assert cli.main(["check", str(tmp_path / "absent.csv")]) == 2
    capsys.readouterr()


def test_check_command_prints_the_leak_heuristics(tmp_path, capsys, raw):
    path = tmp_path / "scaled.csv"
    Xs = StandardScaler().fit_transform(raw[:200])
    _write(path, ["a", "b", "c"], [[repr(float(v)) for v in x] for x in Xs])
    assert cli.main(["check", str(path), "--norm-bound", "10", "--delta", "0.5"]) == 0  # advice, not a refusal
    out = capsys.readouterr().out
    assert "leak heuristics (2):" in out and "StandardScaler" in out and "delta is not small" in out


# ------------------------------------------------------------------ leak heuristics (moved from preprocessing)
def _messages(X, *, norm_bound=1.0, delta=1e-9):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the heuristics return their messages; they warn nothing
        return leak_heuristics_nonprivate(X, norm_bound=norm_bound, delta=delta)


@pytest.fixture
def raw():
    rng = np.random.default_rng(737)
    return np.column_stack([rng.normal(38.6, 13.7, 737), rng.uniform(0, 99, 737), rng.exponential(3.3, 737)])


@pytest.mark.parametrize("scaler, word", [(StandardScaler(), "StandardScaler"), (MinMaxScaler(), "MinMaxScaler"),
                                          (MaxAbsScaler(), "MaxAbsScaler"), (RobustScaler(), "RobustScaler")])
def test_data_fitted_scalers_are_recognised(raw, scaler, word):
    msgs = _messages(scaler.fit_transform(raw), norm_bound=10.0)
    assert any(word in m for m in msgs), msgs
    others = {"StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler"} - {word}
    assert not any(o in m for m in msgs for o in others), msgs


def test_public_encodings_and_raw_data_draw_no_scaler_message(raw):
    schema = Schema([Column(f"f{j}", low=lo, high=hi) for j, (lo, hi) in enumerate([(0, 100), (0, 100), (0, 40)])])
    assert _messages(SchemaEncoder(schema).fit_transform(raw)) == []
    # MinMaxScaler fitted on the public bounds only is public too
    public = MinMaxScaler().fit(np.array([[0, 0, 0], [100, 100, 40]])).transform(raw)
    assert not any("Scaler" in m for m in _messages(public, norm_bound=2.0))
    onehot = np.eye(3)[np.random.default_rng(0).integers(0, 3, 200)]  # 0/1 indicators: min 0, max 1, not scaled
    assert _messages(onehot / math.sqrt(3)) == []
    one = Schema([Column("f0", low=10.0, high=60.0)])  # one feature, records beyond its bounds: -1 and 1 reached
    assert _messages(SchemaEncoder(one).fit_transform(raw[:, :1])) == []


def test_clipped_rows_deep_inside_and_delta(raw):
    assert any("one row in twenty lies beyond norm_bound" in m for m in _messages(raw, norm_bound=50.0))
    assert any("deep inside the norm ball" in m for m in _messages(raw, norm_bound=1e4))
    assert any("delta is not small" in m for m in _messages(raw / 1e3, norm_bound=0.2, delta=1.0 / 737))
    assert not any("delta" in m for m in _messages(raw / 1e3, norm_bound=0.2, delta=1.0 / 738))
    # the stated fraction is the threshold: a twentieth clipped is allowed, one row more is not
    X = np.zeros((100, 2))
    X[:, 0] = 0.5
    X[: int(CLIP_FRACTION * 100), 0] = 3.0
    assert not any("twenty" in m for m in _messages(X))
    X[int(CLIP_FRACTION * 100), 0] = 3.0
    assert any("twenty" in m for m in _messages(X))
    # without a bound or a delta, those checks are skipped
    assert leak_heuristics_nonprivate(raw, norm_bound=None, delta=None) == []


def test_messages_state_no_number_of_the_data(raw):
    msgs = set()
    for X, R, delta in [(raw, 50.0, 1e-2), (raw, 1e4, 1e-9), (StandardScaler().fit_transform(raw), 10.0, 1e-9),
                        (MinMaxScaler().fit_transform(raw), 10.0, 1e-9), (RobustScaler().fit_transform(raw), 10, 1e-9),
                        (MaxAbsScaler().fit_transform(raw), 10.0, 1e-9)]:
        msgs |= set(_messages(X, norm_bound=R, delta=delta))
    assert len(msgs) == 7  # every kind of message was produced
    for m in msgs:
        assert not re.search(r"\d", m), m  # no digit at all: neither n, nor a fraction, nor a norm
    # the tester: a message carrying a statistic would be caught
    assert re.search(r"\d", "737 rows, max norm 1.3e+02")


@pytest.mark.parametrize("block_bytes", [8 * 3 * 5, 8 * 3 * 64, 1 << 25])
def test_leak_checks_read_the_rows_in_blocks_and_match_whole_array_statistics(raw, block_bytes):
    for X in (raw, StandardScaler().fit_transform(raw), RobustScaler().fit_transform(raw)):
        st = _column_stats(X, block_bytes=block_bytes)  # 5 rows, 64 rows, one block
        np.testing.assert_allclose(st["mean"], X.mean(axis=0), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(st["std"], X.std(axis=0), rtol=1e-12)
        np.testing.assert_array_equal(st["min"], X.min(axis=0))
        np.testing.assert_array_equal(st["max"], X.max(axis=0))
        np.testing.assert_array_equal(st["below"], (X < -1e-8).sum(axis=0))
        np.testing.assert_array_equal(st["above"], (X > 1e-8).sum(axis=0))
        np.testing.assert_allclose(st["norms"], np.linalg.norm(X, axis=1), rtol=1e-14)
    # a memmap is read block by block, never copied whole, with the same verdicts
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        Xs = RobustScaler().fit_transform(raw)
        mm = np.lib.format.open_memmap(f"{tmp}/x.npy", mode="w+", dtype=np.float64, shape=Xs.shape)
        mm[:] = Xs
        mm.flush()
        assert _messages(mm, norm_bound=10.0) == _messages(Xs, norm_bound=10.0)
        del mm
    bad = raw.copy()
    bad[700, 1] = np.nan
    with pytest.raises(ValueError, match="finite"):
        _column_stats(bad, block_bytes=block_bytes)
