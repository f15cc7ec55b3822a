"""The ``pdpkit`` command line: fit → release file → predict/report, and refusals that write nothing.

A refusal of the rows names the kind of problem and the public constraint, never the row, the value
or the column, and ends with the ``pdpkit check`` command that finds the rows (non-private).
"""

from __future__ import annotations

import csv
import json
import re
import shlex
import subprocess
import sys

import numpy as np
import pytest

from pdpkit import cli
from pdpkit.estimators import ObjPertClassifier
from pdpkit.release import Release
from pdpkit.release import RELEASE_FORMAT


def _write(path, header, rows):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


@pytest.fixture
def data_csv(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.uniform(-0.5, 0.5, size=(300, 3))
    y = np.where(X @ [1.0, -1.0, 0.5] > 0, "yes", "no")
    path = tmp_path / "d.csv"
    _write(path, ["a", "b", "c", "label"],
           [[*map(lambda v: repr(float(v)), xi), yi] for xi, yi in zip(X, y, strict=True)])
    return path, X, y


def test_fit_then_predict_equals_the_estimator(tmp_path, data_csv):
    path, X, y = data_csv
    out = tmp_path / "rel.json"
    assert cli.main(["fit", str(path), "--label", "label", "--classes", "no,yes", "--epsilon", "1", "--delta", "1e-5",
                     "--seed", "4", "--out", str(out)]) == 0
    rel = Release.from_json(out.read_text())
    est = ObjPertClassifier(1.0, 1e-5, classes=["no", "yes"], random_state=4).fit(X, y)
    np.testing.assert_allclose(rel.theta, est.release_.theta, rtol=1e-13)
    assert rel.guarantee.epsilon == pytest.approx(1.0, rel=1e-9) and rel.feature_names == ("a", "b", "c")
    pred = tmp_path / "pred.csv"
    assert cli.main(["predict", str(out), str(path), "--out", str(pred)]) == 0
    with open(pred) as fh:
        got = [r["prediction"] for r in csv.DictReader(fh)]
    assert got == list(est.predict(X))


def test_python_dash_m_runs(tmp_path, data_csv):
    path, _, _ = data_csv
    out = tmp_path / "r.json"
    res = subprocess.run([sys.executable, "-m", "pdpkit", "fit", str(path), "--label", "label", "--classes", "no,yes",
                          "--epsilon", "2", "--delta", "1e-6", "--seed", "0", "--out", str(out)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "reproducible from --seed: private only while the seed stays secret" in res.stdout
    assert json.loads(out.read_text())["format"] == RELEASE_FORMAT


@pytest.mark.parametrize("mutate, message, value", [
    (lambda rows: rows[4].__setitem__(1, "nan"), "a numeric feature cell is not a finite number", "'nan'"),
    (lambda rows: rows[2].__setitem__(0, "abc"), "a numeric feature cell is not a number", "'abc'"),
    (lambda rows: rows[9].__setitem__(2, "40"), "a row's Euclidean norm exceeds --norm-bound 1", "40"),
    (lambda rows: rows[0].__setitem__(3, "maybe"), "a label is not one of the classes (--classes no,yes", "'maybe'"),
    (lambda rows: rows[7].__setitem__(3, ""), "a label cell is empty (column 'label')", "''"),
])
def test_bad_input_exits_nonzero_names_the_kind_not_the_row_and_writes_nothing(tmp_path, data_csv, capsys, mutate,
                                                                               message, value):
    path, X, y = data_csv
    rows = [[*map(lambda v: repr(float(v)), xi), yi] for xi, yi in zip(X, y, strict=True)]
    mutate(rows)
    bad = tmp_path / "bad.csv"
    _write(bad, ["a", "b", "c", "label"], rows)
    out = tmp_path / "never.json"
    code = cli.main(["fit", str(bad), "--label", "label", "--classes", "no,yes", "--epsilon", "1", "--delta", "1e-5",
                     "--out", str(out)])
    assert code == 2
    assert not out.exists()
    err = capsys.readouterr().err
    head = err.split("; to find the rows")[0].replace(str(bad), "DATA")
    assert message in head and not re.search(r"row \d|line \d", head) and value not in head, err
    # the message ends with the non-private command that finds the rows; run, it names them
    command = err.rstrip("\n").rsplit(": pdpkit check ", 1)[1]
    assert cli.main(["check", *shlex.split(command)]) == 1
    said = capsys.readouterr().out
    assert said.startswith("NON-PRIVATE") and value in said


def test_missing_column_and_missing_feature(tmp_path, data_csv, capsys):
    path, _, _ = data_csv
    out = tmp_path / "x.json"
    assert cli.main(["fit", str(path), "--label", "nope", "--classes", "no,yes", "--epsilon", "1", "--delta", "1e-5",
                     "--out", str(out)]) == 2
    assert "no column 'nope'" in capsys.readouterr().err and not out.exists()
    rel = tmp_path / "rel.json"
    cli.main(["fit", str(path), "--label", "label", "--classes", "no,yes", "--epsilon", "1", "--delta", "1e-5",
              "--out", str(rel)])
    other = tmp_path / "other.csv"
    _write(other, ["a", "c"], [["0.1", "0.2"]])
    pred = tmp_path / "p.csv"
    assert cli.main(["predict", str(rel), str(other), "--out", str(pred)]) == 2
    assert "missing feature column(s) 'b'" in capsys.readouterr().err and not pred.exists()


def test_report_command_one_row_per_target_in_input_order(tmp_path, data_csv):
    path, X, y = data_csv
    rel = tmp_path / "rel.json"
    assert cli.main(["fit", str(path), "--label", "label", "--classes", "no,yes", "--epsilon", "1", "--delta", "1e-5",
                     "--seed", "2", "--report", "adaptive", "--report-epsilon", "0.5", "--report-delta", "1e-6",
                     "--out", str(rel)]) == 0
    out, png = tmp_path / "rep.csv", tmp_path / "rep.png"
    assert cli.main(["report", str(rel), str(path), "--label", "label", "--out", str(out), "--plot", str(png)]) == 0
    with open(out) as fh:
        got = np.array([float(r["epsilon_bound"]) for r in csv.DictReader(fh)])
    est = ObjPertClassifier(1.0, 1e-5, classes=["no", "yes"], report="adaptive", report_epsilon=0.5,
                            report_delta=1e-6, random_state=2).fit(X, y)
    np.testing.assert_allclose(got, est.privacy_report(X, y), rtol=1e-12)
    assert png.stat().st_size > 1000
    # a release without a report cannot report
    plain = tmp_path / "plain.json"
    cli.main(["fit", str(path), "--label", "label", "--classes", "no,yes", "--epsilon", "1", "--delta", "1e-5",
              "--out", str(plain)])
    assert cli.main(["report", str(plain), str(path), "--label", "label", "--out", str(tmp_path / "n.csv")]) == 2
    assert not (tmp_path / "n.csv").exists()


def test_a_logistic_fit_without_classes_is_refused_before_reading_the_rows(tmp_path, data_csv, capsys, monkeypatch):
    path, _, _ = data_csv

    def refuse(*args, **kwargs):
        raise AssertionError("the data were read before the classes were asked for")

    monkeypatch.setattr(cli, "_read_table", refuse)
    out = tmp_path / "r.json"
    assert cli.main(["fit", str(path), "--label", "label", "--epsilon", "1", "--delta", "1e-5", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--classes: give the public list of classes (e.g. --classes no,yes)" in err
    assert "classes read from the data would reveal who is in it" in err and not out.exists()
    for bad in ("yes", "a,,b", "a,a"):  # at least two distinct, non-empty classes
        with pytest.raises(SystemExit):
            cli.main(["fit", str(path), "--label", "label", "--classes", bad, "--epsilon", "1", "--delta", "1e-5",
                      "--out", str(out)])
    capsys.readouterr()
    assert cli.main(["fit", str(path), "--label", "label", "--classes", "no,yes", "--loss", "huber", "--epsilon", "1",
                     "--delta", "1e-5", "--out", str(out)]) == 2
    assert "--classes: --loss huber is a regression" in capsys.readouterr().err


def test_the_classes_go_to_the_estimator_and_labels_are_compared_as_text(tmp_path, capsys, monkeypatch):
    rows = [[repr(0.1 * (i % 5)), "yes" if i % 2 else "1.0"] for i in range(20)]
    path = tmp_path / "t.csv"
    _write(path, ["a", "label"], rows)
    seen = {}
    real = cli._estimator_for

    def spy(args):
        est = real(args)
        seen.update(est.get_params())
        raise KeyboardInterrupt  # stop before the fit: only the estimator's parameters are looked at

    monkeypatch.setattr(cli, "_estimator_for", spy)
    assert cli.main(["fit", str(path), "--label", "label", "--classes", "1.0,yes", "--epsilon", "1", "--delta", "1e-5",
                     "--out", str(tmp_path / "r.json")]) == 130
    assert seen["classes"] == ["1.0", "yes"]
    capsys.readouterr()
    assert cli.main(["fit", str(path), "--label", "label", "--classes", "1,yes", "--epsilon", "1", "--delta", "1e-5",
                     "--out", str(tmp_path / "r.json")]) == 2  # '1.0' is not the class '1'
    assert "a label is not one of the classes (--classes 1,yes" in capsys.readouterr().err


def test_classes_equal_as_numbers_are_refused(tmp_path, capsys):
    """'1' and '1.0' would be two classes (cells are compared as text): an easy confusion, refused up front."""
    with pytest.raises(SystemExit) as exc:
        cli.main(["fit", "d.csv", "--label", "label", "--classes", "1.0,1", "--epsilon", "1", "--delta", "1e-5",
                  "--out", str(tmp_path / "r.json")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "'1.0' and '1' are the same number" in err and "compared with the classes as text" in err
    assert "Traceback" not in err


def test_without_seed_the_final_line_says_nothing_of_a_seed(tmp_path, data_csv, capsys):
    path, _, _ = data_csv
    assert cli.main(["fit", str(path), "--label", "label", "--classes", "no,yes", "--epsilon", "1", "--delta", "1e-5",
                     "--out", str(tmp_path / "r.json")]) == 0
    assert "--seed" not in capsys.readouterr().out


def test_three_classes_fit_with_an_adaptive_report_and_the_report_command_sums_the_k_bounds(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (1500, 3)) / 2
    y = np.array(["lo", "mid", "hi"])[np.digitize(X @ np.array([1.0, -1.0, 0.5]), [-0.2, 0.2])]
    path = tmp_path / "train.csv"
    _write(path, ["a", "b", "c", "label"], [[*map(repr, row), lab] for row, lab in zip(X.tolist(), y)])
    out, rep = tmp_path / "release.json", tmp_path / "report.csv"
    assert cli.main(["fit", str(path), "--label", "label", "--classes", "lo,mid,hi", "--epsilon", "1",
                     "--delta", "1e-6", "--report", "adaptive", "--report-epsilon", "0.5", "--report-delta",
                     "1e-6", "--seed", "0", "--out", str(out)]) == 0
    release = Release.from_json(out.read_text())
    assert release.n_models == 3 and len(release.privacy_reports) == 3
    assert [p.name for p in release.guarantee.parts] == ["model", "report"]
    assert cli.main(["report", str(out), str(path), "--label", "label", "--out", str(rep)]) == 0
    with open(rep, newline="") as fh:
        got = np.array([float(r["epsilon_bound"]) for r in csv.DictReader(fh)])
    from pdpkit.estimators import prepare_rows

    rows = prepare_rows(X, norm_bound=release.norm_bound, fit_intercept=True)  # as fitted: intercept column
    want = sum(np.asarray(r.epsilon_bound(rows, np.where(y == c, 1.0, -1.0)))
               for r, c in zip(release.privacy_reports, release.classes))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # test the tester: one model's bound alone is smaller than the sum the command wrote
    assert np.all(np.asarray(release.privacy_reports[0].epsilon_bound(rows, np.where(y == "lo", 1.0, -1.0)))
                  < got)
