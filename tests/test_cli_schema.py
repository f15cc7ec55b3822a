"""The command line with a public schema: drafting, --schema, --features/--drop, --version, help, budget."""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
from importlib.metadata import version

import numpy as np
import pandas as pd
import pytest

from pdpkit import cli
from pdpkit.estimators import ObjPertClassifier, ObjPertRegressor
from pdpkit.preprocessing import PrivacyLeakWarning
from pdpkit.release import Release
from pdpkit.schema import Column, Schema

FIT = ["--epsilon", "1", "--delta", "1e-6", "--seed", "5"]


@pytest.fixture
def people(tmp_path):
    """A CSV with an identifier, a numeric, a categorical column and a two-valued label."""
    rng = np.random.default_rng(11)
    n = 400
    age = rng.integers(18, 90, n)
    colour = rng.choice(["red", "green", "blue"], n)
    score = rng.normal(0, 1, n)
    label = np.where(0.03 * (age - 50) + (colour == "red") + 0.5 * score > 0, "yes", "no")
    frame = pd.DataFrame({"pid": np.arange(10_000, 10_000 + n), "age": age, "colour": colour,
                          "score": np.round(score, 4), "label": label})
    path = tmp_path / "people.csv"
    frame.to_csv(path, index=False)
    return path, frame


@pytest.fixture
def schema():
    return Schema([Column("pid", role="ignore"), Column("age", low=0, high=120),
                   Column("colour", kind="categorical", categories=("red", "green", "blue", "other")),
                   Column("score", low=-4, high=4),
                   Column("label", role="label", kind="categorical", categories=("no", "yes"))])


@pytest.fixture
def schema_file(tmp_path, schema):
    path = tmp_path / "schema.json"
    schema.write(path)
    return path


def _err(capsys) -> str:
    lines = capsys.readouterr().err.splitlines(keepends=True)
    notes = [ln for ln in lines if ": warning: this release is reproducible from a seed" in ln]
    assert len(notes) <= 1, lines  # the seeded release's note, said once per command (the tests use --seed)
    err = "".join(ln for ln in lines if ln not in notes)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


# ------------------------------------------------------------------ the parser
def _actions(parser: argparse.ArgumentParser, path: str = "pdpkit"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _actions(sub, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction):
            yield path, action


def _without_help(parser: argparse.ArgumentParser) -> list[str]:
    return [f"{path} {'/'.join(a.option_strings) or a.dest}" for path, a in _actions(parser)
            if not a.help or a.help == argparse.SUPPRESS]


def test_every_option_of_every_command_has_help():
    parser = cli.build_parser()
    assert _without_help(parser) == []
    commands = {p.split()[1] for p, _ in _actions(parser) if len(p.split()) > 1}
    assert commands >= {"schema", "fit", "report", "predict"}


def test_the_help_walk_sees_an_option_without_help():
    parser = cli.build_parser()
    fit = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["fit"]
    fit.add_argument("--undocumented")
    assert _without_help(parser) == ["pdpkit fit --undocumented"]


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"pdpkit {version('pdpkit')}"


def test_help_mentions_every_subcommand():
    res = subprocess.run([sys.executable, "-m", "pdpkit", "fit", "--help"], capture_output=True, text=True)
    assert res.returncode == 0 and "--schema" in res.stdout and "--budget-epsilon" in res.stdout


# ------------------------------------------------------------------ pdpkit schema
def test_schema_command_drafts_and_says_it_is_not_private(tmp_path, people, capsys):
    path, frame = people
    out = tmp_path / "draft.json"
    assert cli.main(["schema", str(path), "--label", "label", "--out", str(out)]) == 0
    said = capsys.readouterr()
    assert "NOT PRIVATE" in said.out and said.err == ""
    data = json.loads(out.read_text())
    assert data["nonprivate_draft"] is True and data["note"].startswith("NON-PRIVATE DRAFT")
    draft = Schema.from_dict(data)
    assert {c.name: c.role for c in draft.columns} == {"pid": "ignore", "age": "feature", "colour": "feature",
                                                      "score": "feature", "label": "label"}
    assert draft.column("colour").categories == ("blue", "green", "red")
    assert draft.column("age").low <= frame["age"].min() and draft.column("age").high >= frame["age"].max()
    # fitting with the draft as it is is refused, naming the fields to delete
    rel = tmp_path / "rel.json"
    assert cli.main(["fit", str(path), "--schema", str(out), *FIT, "--out", str(rel)]) == 2
    err = _err(capsys)
    assert "--schema" in err and "non-private draft" in err and "nonprivate_draft" in err and not rel.exists()
    # once reviewed (the mark deleted), it fits
    del data["note"], data["nonprivate_draft"]
    out.write_text(json.dumps(data))
    assert cli.main(["fit", str(path), "--schema", str(out), *FIT, "--out", str(rel)]) == 0


def test_schema_command_ignore_and_errors(tmp_path, people, capsys):
    path, _ = people
    out = tmp_path / "d.json"
    assert cli.main(["schema", str(path), "--label", "label", "--ignore", "score", "--out", str(out)]) == 0
    assert Schema.read(out).column("score").role == "ignore"
    capsys.readouterr()
    assert cli.main(["schema", str(path), "--label", "nope", "--out", str(out)]) == 2
    assert "--label: no column(s) 'nope'" in _err(capsys)


# ------------------------------------------------------------------ fit --schema
def test_fit_with_a_schema_is_the_estimator_on_the_schema_encoding(tmp_path, people, schema, schema_file, capsys):
    path, frame = people
    rel = tmp_path / "rel.json"
    assert cli.main(["fit", str(path), "--schema", str(schema_file), *FIT, "--out", str(rel)]) == 0
    assert "3 features (6 encoded by --schema" in capsys.readouterr().out
    release = Release.from_json(rel.read_text())
    rows = schema.encode(frame)
    est = ObjPertClassifier(1.0, 1e-6, classes=["no", "yes"], random_state=5).fit(
        pd.DataFrame(rows, columns=schema.encoded_names), frame["label"])
    np.testing.assert_allclose(release.theta, est.release_.theta, rtol=1e-13)
    assert release.feature_names == ("age", "colour=red", "colour=green", "colour=blue", "colour=other", "score")
    assert "pid" not in release.feature_names  # the identifier is never a feature
    # predict encodes raw records with the schema; the same as the estimator on encoded rows
    pred = tmp_path / "pred.csv"
    assert cli.main(["predict", str(rel), str(path), "--schema", str(schema_file), "--out", str(pred)]) == 0
    got = pd.read_csv(pred)
    assert list(got["prediction"]) == list(est.predict(pd.DataFrame(rows, columns=schema.encoded_names)))
    # without --schema the release's own schema encodes the raw records: the same predictions
    assert release.schema == schema.to_dict()
    assert cli.main(["predict", str(rel), str(path), "--out", str(tmp_path / "p2.csv")]) == 0
    assert list(pd.read_csv(tmp_path / "p2.csv")["prediction"]) == list(got["prediction"])
    capsys.readouterr()
    # another schema is refused
    other = tmp_path / "other.json"
    schema.select(drop=["score"]).write(other)
    assert cli.main(["predict", str(rel), str(path), "--schema", str(other), "--out", str(tmp_path / "p3.csv")]) == 2
    assert "differs from the schema" in _err(capsys)


def test_report_with_a_schema(tmp_path, people, schema, schema_file):
    path, frame = people
    rel, rep = tmp_path / "rel.json", tmp_path / "rep.csv"
    assert cli.main(["fit", str(path), "--schema", str(schema_file), *FIT, "--report", "data-independent",
                     "--out", str(rel)]) == 0
    assert cli.main(["report", str(rel), str(path), "--label", "label", "--schema", str(schema_file),
                     "--out", str(rep)]) == 0
    rows = schema.encode(frame)
    est = ObjPertClassifier(1.0, 1e-6, classes=["no", "yes"], random_state=5, report="data-independent").fit(
        pd.DataFrame(rows, columns=schema.encoded_names), frame["label"])
    np.testing.assert_allclose(pd.read_csv(rep)["epsilon_bound"],
                               est.privacy_report(pd.DataFrame(rows, columns=schema.encoded_names), frame["label"]),
                               rtol=1e-12)


def test_regression_labels_scaled_by_public_bounds_and_mapped_back(tmp_path):
    rng = np.random.default_rng(12)
    n = 300
    x = rng.uniform(0, 10, n)
    y = 100 + 20 * x + rng.normal(0, 5, n)
    path = tmp_path / "r.csv"
    pd.DataFrame({"x": x, "y": y}).to_csv(path, index=False)
    schema = Schema([Column("x", low=0, high=10), Column("y", role="label", low=0, high=400)])
    sp = tmp_path / "s.json"
    schema.write(sp)
    rel, pred = tmp_path / "rel.json", tmp_path / "p.csv"
    assert cli.main(["fit", str(path), "--schema", str(sp), *FIT, "--out", str(rel)]) == 0  # huber by default
    assert cli.main(["predict", str(rel), str(path), "--schema", str(sp), "--out", str(pred)]) == 0
    est = ObjPertRegressor(1.0, 1e-6, random_state=5).fit(pd.DataFrame(schema.encode({"x": x}), columns=["x"]),
                                                           (y - 200) / 200)
    encoded = pd.DataFrame(schema.encode({"x": x}), columns=["x"])
    np.testing.assert_allclose(pd.read_csv(pred)["prediction"], 200 + 200 * est.predict(encoded), rtol=1e-12)
    assert cli.main(["fit", str(path), "--schema", str(sp), *FIT, "--loss", "logistic",
                     "--out", str(tmp_path / "n.json")]) == 2


@pytest.mark.parametrize("edit, cell, needles", [
    ("colour", "purple", ["a categorical feature value is outside the schema's domain", "handle_unknown"]),
    ("age", "", ["a feature value is missing", "handle_missing"]),
    ("age", "old", ["a numeric feature cell is not a number"]),
    ("age", "inf", ["a numeric feature cell is not a finite number"]),
    ("label", "maybe", ["a label is not one of the schema's label classes ['no', 'yes'] (column 'label'"]),
    ("label", "", ["a label cell is missing (column 'label'"]),
])
def test_schema_refusals_name_the_kind_not_the_row(tmp_path, people, schema_file, capsys, edit, cell, needles):
    path, frame = people
    bad = frame.astype(object)
    bad.loc[2, edit] = cell
    bp = tmp_path / "bad.csv"
    bad.to_csv(bp, index=False)
    out = tmp_path / "never.json"
    assert cli.main(["fit", str(bp), "--schema", str(schema_file), *FIT, "--out", str(out)]) == 2
    err = _err(capsys)
    for needle in needles:
        assert needle in err, err
    head, hint = err.split("; to find the rows")
    assert not re.search(r"row \d|line \d", head) and repr(cell) not in head, err
    assert "pdpkit.check" not in err and f"pdpkit check {bp} --schema {schema_file}" in hint  # the CLI's command
    assert not out.exists()
    assert cli.main(["check", str(bp), "--schema", str(schema_file)]) == 1
    said = capsys.readouterr().out
    assert said.startswith("NON-PRIVATE") and f"column '{edit}': row 3" in said, said


def test_missing_values_by_the_schema_rule(tmp_path, people, schema, capsys):
    path, frame = people
    bad = frame.astype(object)
    bad.loc[2, "age"] = "NA"
    bad.loc[5, "colour"] = ""
    bp = tmp_path / "m.csv"
    bad.to_csv(bp, index=False)
    lenient = tmp_path / "lenient.json"
    Schema(schema.columns, handle_missing="zero").write(lenient)
    rel = tmp_path / "rel.json"
    assert cli.main(["fit", str(bp), "--schema", str(lenient), *FIT, "--out", str(rel)]) == 0


@pytest.mark.parametrize("argv, needles", [
    (["--label", "colour"], ["--label colour", "the schema's label is 'label'"]),
    (["--features", "age,pid"], ["--features", "'pid' is not a feature column"]),
])
def test_schema_option_conflicts_name_the_option(tmp_path, people, schema_file, capsys, argv, needles):
    path, _ = people
    assert cli.main(["fit", str(path), "--schema", str(schema_file), *argv, *FIT, "--out",
                     str(tmp_path / "x.json")]) == 2
    err = _err(capsys)
    for needle in needles:
        assert needle in err, err


@pytest.mark.parametrize("content, needles", [
    ("{not json", ["--schema", "not JSON"]),
    ('{"format": "pdpkit-schema/1", "columns": [{"name": "age", "low": "0", "high": 1}]}',
     ["--schema", "columns[0].low must be a number"]),
])
def test_a_bad_schema_file_is_refused_naming_the_option_and_field(tmp_path, people, capsys, content, needles):
    path, _ = people
    sp = tmp_path / "bad.json"
    sp.write_text(content)
    assert cli.main(["fit", str(path), "--schema", str(sp), *FIT, "--out", str(tmp_path / "x.json")]) == 2
    err = _err(capsys)
    for needle in needles:
        assert needle in err


def test_out_may_not_overwrite_the_schema(tmp_path, people, schema_file, capsys):
    path, _ = people
    before = schema_file.read_text()
    assert cli.main(["fit", str(path), "--schema", str(schema_file), *FIT, "--out", str(schema_file)]) == 2
    assert "is the input file" in _err(capsys) and schema_file.read_text() == before


# ------------------------------------------------------------------ --features / --drop
def test_drop_and_features_choose_the_columns(tmp_path, people, capsys):
    path, frame = people
    numeric = frame[["pid", "age", "score", "label"]]
    npath = tmp_path / "n.csv"
    numeric.assign(age=numeric["age"] / 200).to_csv(npath, index=False)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert cli.main(["fit", str(npath), "--label", "label", "--classes", "no,yes", "--drop", "pid", "--row-norm",
                     "clip", *FIT, "--out", str(a)]) == 0
    assert cli.main(["fit", str(npath), "--label", "label", "--classes", "no,yes", "--features", "age,score",
                     "--row-norm", "clip", *FIT, "--out", str(b)]) == 0
    ra, rb = Release.from_json(a.read_text()), Release.from_json(b.read_text())
    assert ra.feature_names == rb.feature_names == ("age", "score")
    assert ra.theta.tolist() == rb.theta.tolist()
    capsys.readouterr()
    assert cli.main(["fit", str(npath), "--label", "label", "--classes", "no,yes", "--features", "age,nope", *FIT,
                     "--out", str(tmp_path / "c.json")]) == 2
    assert "--features: no column(s) 'nope'" in _err(capsys)
    assert cli.main(["fit", str(npath), "--label", "label", "--classes", "no,yes", "--drop", "label", *FIT,
                     "--out", str(tmp_path / "c.json")]) == 2
    assert "--drop: 'label' is the label (--label)" in _err(capsys)
    with pytest.raises(SystemExit) as exc:
        cli.main(["fit", str(npath), "--label", "label", "--drop", "pid", "--features", "age", *FIT,
                  "--out", str(tmp_path / "c.json")])
    assert exc.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_a_text_column_without_a_schema_is_refused(tmp_path, people, capsys):
    path, _ = people
    assert cli.main(["fit", str(path), "--label", "label", "--classes", "no,yes", "--drop", "pid", *FIT,
                     "--out", str(tmp_path / "x.json")]) == 2
    err = _err(capsys)
    assert "a numeric feature cell is not a number (text, or an empty cell)" in err
    assert "colour" not in err.split("; to find the rows")[0]
    assert err.rstrip().endswith(f"pdpkit check {path} --label label --classes no,yes --drop pid --norm-bound 1 "
                                 "--delta 1e-06")


def test_a_label_that_the_schema_makes_a_feature_is_refused(tmp_path, people, schema, capsys):
    path, _ = people
    cols = [c for c in schema.columns if c.role != "label"] + [Column("label", kind="categorical",
                                                                      categories=("no", "yes"))]
    sp = tmp_path / "s.json"
    Schema(cols).write(sp)
    assert cli.main(["fit", str(path), "--schema", str(sp), "--label", "label", *FIT,
                     "--out", str(tmp_path / "x.json")]) == 2
    assert "--label label: is a feature column of the schema" in _err(capsys)
    # a schema without a label, with --label naming a column outside it, fits with --classes (and not without)
    Schema([c for c in schema.columns if c.role != "label"]).write(sp)
    assert cli.main(["fit", str(path), "--schema", str(sp), "--label", "label", *FIT,
                     "--out", str(tmp_path / "y.json")]) == 2
    assert "--classes: give the public list of classes" in _err(capsys)
    assert cli.main(["fit", str(path), "--schema", str(sp), "--label", "label", "--classes", "no,yes", *FIT,
                     "--out", str(tmp_path / "y.json")]) == 0


def test_label_or_schema_is_needed(tmp_path, people, capsys):
    path, _ = people
    assert cli.main(["fit", str(path), *FIT, "--out", str(tmp_path / "x.json")]) == 2
    assert "give --label COL" in _err(capsys)


# ------------------------------------------------------------------ the budget
def test_budget(tmp_path, people, schema_file, capsys):
    path, _ = people
    from pdpkit.estimators import ObjPertClassifier as Clf

    out = tmp_path / "rel.json"
    argv = ["fit", str(path), "--schema", str(schema_file), *FIT, "--budget-epsilon", "0.5", "--budget-delta",
            "1e-5", "--out", str(out)]
    if "accountant" not in Clf().get_params():
        assert cli.main(argv) == 2
        assert "--budget-epsilon" in _err(capsys)
        return
    assert cli.main(argv) == 2  # the model alone (epsilon 1) exceeds a budget of 0.5
    assert not out.exists()
    argv[argv.index("0.5")] = "2"
    assert cli.main(argv) == 0


def test_budget_options_come_together(tmp_path, people, capsys):
    path, _ = people
    assert cli.main(["fit", str(path), "--label", "label", "--classes", "no,yes", *FIT, "--budget-epsilon", "1",
                     "--out", str(tmp_path / "x.json")]) == 2
    assert "give both --budget-epsilon and --budget-delta" in _err(capsys)


# ------------------------------------------------------------------ reading
def test_quoted_fields_and_line_breaks_keep_row_and_line_numbers(tmp_path, capsys):
    path = tmp_path / "q.csv"
    path.write_text('a,b,label\n0.1,"0.2",yes\n"0.3","0.4",no\n\n0.5,"x\ny",no\n')
    frame, lines = cli._read_table(str(path))
    assert frame.shape == (3, 3) and lines.tolist() == [2, 3, 5]
    argv = ["--label", "label", "--classes", "no,yes"]
    assert cli.main(["fit", str(path), *argv, *FIT, "--out", str(tmp_path / "o.json")]) == 2
    assert "a numeric feature cell is not a number" in _err(capsys)
    assert cli.main(["check", str(path), *argv]) == 1
    assert "column 'b': row 3 (value 'x\\ny')" in capsys.readouterr().out
    path.write_text('a,b,label\n0.1,"0.2",yes\n0.3,0.4\n')
    assert cli.main(["fit", str(path), *argv, *FIT, "--out", str(tmp_path / "o.json")]) == 2
    assert "a row has another number of cells than the header (3)" in _err(capsys)
    assert cli.main(["check", str(path), *argv]) == 1
    assert "row 2 (line 3) has 2 cells, the header has 3" in capsys.readouterr().out


def test_read_table_and_read_csv_agree_with_pandas(tmp_path):
    rng = np.random.default_rng(13)
    frame = pd.DataFrame(rng.normal(size=(50, 3)), columns=["a", "b", "c"]).assign(label=rng.choice(["p", "q"], 50))
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False, float_format="%.17g")
    X, y, names = cli.read_csv(str(path), label="label")
    np.testing.assert_array_equal(X, frame[["a", "b", "c"]].to_numpy())
    assert list(y) == list(frame["label"]) and names == ["a", "b", "c"]
    text, lines = cli._read_table(str(path))
    assert lines.tolist() == list(range(2, 52)) and list(text.columns) == ["a", "b", "c", "label"]


def test_classes_and_a_schema_must_agree(tmp_path, people, schema, schema_file, capsys):
    path, _ = people
    out = tmp_path / "x.json"
    assert cli.main(["fit", str(path), "--schema", str(schema_file), "--classes", "yes,no", *FIT,
                     "--out", str(out)]) == 2
    assert "--classes yes,no: the schema's label classes are no,yes" in _err(capsys)
    assert cli.main(["fit", str(path), "--schema", str(schema_file), "--classes", "no,yes", *FIT,
                     "--out", str(out)]) == 0
    capsys.readouterr()
    numeric = tmp_path / "numeric.json"
    Schema([c for c in schema.columns if c.role != "label"] + [Column("label", role="label", low=0, high=1)]).write(
        numeric)
    assert cli.main(["fit", str(path), "--schema", str(numeric), "--classes", "no,yes", *FIT,
                     "--out", str(out)]) == 2
    assert "--classes: the schema's label 'label' is numeric" in _err(capsys)


def test_a_leak_warning_is_one_line(capsys):
    import warnings

    with cli._warnings_as_lines("fit"):
        warnings.warn("rows look standardized", PrivacyLeakWarning)
    assert capsys.readouterr().err == "pdpkit fit: warning: rows look standardized\n"


def test_output_csv_is_readable(tmp_path, people, schema_file):
    path, frame = people
    rel, pred = tmp_path / "rel.json", tmp_path / "p.csv"
    cli.main(["fit", str(path), "--schema", str(schema_file), *FIT, "--out", str(rel)])
    cli.main(["predict", str(rel), str(path), "--schema", str(schema_file), "--out", str(pred)])
    with open(pred) as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(frame) and set(r["prediction"] for r in rows) <= {"yes", "no"}


def _reference_read(text: str, label: str):
    """The reader pdpkit had before pandas: Python's csv module, float() per cell, blank rows dropped."""
    rows = list(csv.reader(text.splitlines()))
    header = [h.strip() for h in rows[0]]
    body = [r for r in rows[1:] if any(c.strip() for c in r)]
    feats = [h for h in header if h != label]
    X = np.array([[float(r[header.index(f)].strip()) for f in feats] for r in body])
    y = np.array([r[header.index(label)].strip() for r in body], dtype=object)
    return X, y, feats


@pytest.mark.parametrize("seed", range(6))
def test_the_pandas_reader_agrees_with_the_csv_module_on_awkward_files(tmp_path, seed):
    rng = np.random.default_rng(seed)
    n = 60
    lines = [" a , b,c ,label"]
    for _ in range(n):
        cells = [repr(float(v)) if rng.random() < 0.8 else f"{v:.3e}" for v in rng.normal(0, 0.2, 3)]
        cells = [(" " * rng.integers(0, 2)) + c + (" " * rng.integers(0, 2)) for c in cells]
        lab = rng.choice(["01", "10", " 10", "1.50"])
        lines.append(",".join([*cells, lab]))
        if rng.random() < 0.1:
            lines.append(rng.choice(["", "   ", ",,,"]))
    sep = "\r\n" if seed % 2 else "\n"
    text = sep.join(lines) + (sep if seed % 3 else "")
    path = tmp_path / "awkward.csv"
    path.write_bytes(text.encode())
    X, y, names = cli.read_csv(str(path), label="label")
    Xr, yr, nr = _reference_read(text, "label")
    np.testing.assert_array_equal(X, Xr)
    assert list(y) == list(yr) and names == nr == ["a", "b", "c"]


def test_label_text_is_kept_exactly(tmp_path):
    """Labels that look like numbers keep their text ('01', not 1) in the release's classes."""
    rng = np.random.default_rng(14)
    X = rng.uniform(-0.5, 0.5, size=(100, 2))
    frame = pd.DataFrame(X, columns=["a", "b"]).assign(label=np.where(X[:, 0] > 0, "01", "10"))
    path = tmp_path / "l.csv"
    frame.to_csv(path, index=False)
    rel = tmp_path / "r.json"
    assert cli.main(["fit", str(path), "--label", "label", "--classes", "01,10", *FIT, "--out", str(rel)]) == 0
    assert Release.from_json(rel.read_text()).classes == ("01", "10")


# ------------------------------------------------------------------ draft marks, a --schema beside the release's own
def test_a_draft_is_reviewed_only_when_both_marks_are_gone(tmp_path, people, capsys):
    path, _ = people
    draft = tmp_path / "draft.json"
    assert cli.main(["schema", str(path), "--label", "label", "--out", str(draft)]) == 0
    capsys.readouterr()
    data = json.loads(draft.read_text())
    rel = tmp_path / "rel.json"
    del data["nonprivate_draft"]  # the mark deleted, the note kept: still a draft
    draft.write_text(json.dumps(data))
    assert Schema.from_dict(data).nonprivate_draft
    assert cli.main(["fit", str(path), "--schema", str(draft), *FIT, "--out", str(rel)]) == 2
    assert "non-private draft" in _err(capsys) and not rel.exists()
    data["note"] = "reviewed: bounds from the census codebook"  # both marks gone
    draft.write_text(json.dumps(data))
    assert cli.main(["fit", str(path), "--schema", str(draft), *FIT, "--out", str(rel)]) == 0


def test_a_schema_that_differs_from_the_releases_own_is_refused(tmp_path, people, schema, schema_file, capsys):
    path, _ = people
    rel = tmp_path / "rel.json"
    assert cli.main(["fit", str(path), "--schema", str(schema_file), *FIT, "--report", "data-independent",
                     "--out", str(rel)]) == 0
    capsys.readouterr()
    cols = [Column("age", low=0, high=100) if c.name == "age" else c for c in schema.columns]  # same names
    other = tmp_path / "other.json"
    Schema(cols).write(other)
    for command, extra in (("predict", [str(path)]), ("report", [str(path), "--label", "label"]), ("page", [])):
        out = tmp_path / f"{command}.out"
        assert cli.main([command, str(rel), *extra, "--schema", str(other), "--out", str(out)]) == 2
        err = _err(capsys)
        assert "differs from the schema" in err and "columns[1].high" in err and not out.exists()
        assert cli.main([command, str(rel), *extra, "--schema", str(schema_file), "--out", str(out)]) == 0  # identical
        capsys.readouterr()


@pytest.mark.parametrize("block, parse", [(7, 64), (64, 1000)])
def test_the_block_reader_agrees_whatever_the_block_boundaries(tmp_path, monkeypatch, block, parse):
    """The scan and the parse read a block at a time: a line, a \\r\\n or a BOM cut between blocks changes nothing."""
    monkeypatch.setattr(cli, "_SCAN_BLOCK", block)
    monkeypatch.setattr(cli, "_PARSE_BYTES", parse)
    for seed in range(4):
        (tmp_path / str(seed)).mkdir()
        test_the_pandas_reader_agrees_with_the_csv_module_on_awkward_files(tmp_path / str(seed), seed)
    path = tmp_path / "cr.csv"
    path.write_bytes(b"\xef\xbb\xbfa,b,label\r0.1,0.2,x\r\r0.3, 0.4 ,y\r")  # old Mac line breaks, a blank line
    X, y, names = cli.read_csv(str(path), label="label")
    assert names == ["a", "b"] and X.tolist() == [[0.1, 0.2], [0.3, 0.4]] and list(y) == ["x", "y"]
    assert cli._read_table(str(path))[1].tolist() == [2, 4]
