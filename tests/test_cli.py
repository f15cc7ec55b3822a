"""The ``pdpkit`` command line: fit → release file → predict/report, and refusals that write nothing."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
import pytest

from pdpkit import cli
from pdpkit.estimators import ObjPertClassifier
from pdpkit.objpert import Release


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
    _write(path, ["a", "b", "c", "label"], [[*map(lambda v: repr(float(v)), xi), yi] for xi, yi in zip(X, y, strict=True)])
    return path, X, y


def test_fit_then_predict_equals_the_estimator(tmp_path, data_csv):
    path, X, y = data_csv
    out = tmp_path / "rel.json"
    assert cli.main(["fit", str(path), "--label", "label", "--epsilon", "1", "--delta", "1e-5", "--seed", "4",
                     "--out", str(out)]) == 0
    rel = Release.from_json(out.read_text())
    est = ObjPertClassifier(1.0, 1e-5, random_state=4).fit(X, y)
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
    res = subprocess.run([sys.executable, "-m", "pdpkit", "fit", str(path), "--label", "label", "--epsilon", "2",
                          "--delta", "1e-6", "--seed", "0", "--out", str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert json.loads(out.read_text())["format"] == "pdpkit-release/3"


@pytest.mark.parametrize("mutate, message", [
    (lambda rows: rows[4].__setitem__(1, "nan"), r"row 5, column 'b'"),
    (lambda rows: rows[2].__setitem__(0, "abc"), r"row 3, column 'a': 'abc' is not a number"),
    (lambda rows: rows[9].__setitem__(2, "40"), r"row 10 has Euclidean norm"),
    (lambda rows: rows[0].__setitem__(3, "maybe"), r"exactly two label values"),
])
def test_bad_input_exits_nonzero_names_row_and_column_and_writes_nothing(tmp_path, data_csv, capsys, mutate,
                                                                         message):
    path, X, y = data_csv
    rows = [[*map(lambda v: repr(float(v)), xi), yi] for xi, yi in zip(X, y, strict=True)]
    mutate(rows)
    bad = tmp_path / "bad.csv"
    _write(bad, ["a", "b", "c", "label"], rows)
    out = tmp_path / "never.json"
    code = cli.main(["fit", str(bad), "--label", "label", "--epsilon", "1", "--delta", "1e-5", "--out", str(out)])
    assert code != 0
    assert not out.exists()
    import re

    assert re.search(message, capsys.readouterr().err)


def test_missing_column_and_missing_feature(tmp_path, data_csv, capsys):
    path, _, _ = data_csv
    out = tmp_path / "x.json"
    assert cli.main(["fit", str(path), "--label", "nope", "--epsilon", "1", "--delta", "1e-5",
                     "--out", str(out)]) == 2
    assert "no column 'nope'" in capsys.readouterr().err and not out.exists()
    rel = tmp_path / "rel.json"
    cli.main(["fit", str(path), "--label", "label", "--epsilon", "1", "--delta", "1e-5", "--out", str(rel)])
    other = tmp_path / "other.csv"
    _write(other, ["a", "c"], [["0.1", "0.2"]])
    pred = tmp_path / "p.csv"
    assert cli.main(["predict", str(rel), str(other), "--out", str(pred)]) == 2
    assert "missing feature column(s) 'b'" in capsys.readouterr().err and not pred.exists()


def test_report_command_one_row_per_target_in_input_order(tmp_path, data_csv):
    path, X, y = data_csv
    rel = tmp_path / "rel.json"
    assert cli.main(["fit", str(path), "--label", "label", "--epsilon", "1", "--delta", "1e-5", "--seed", "2",
                     "--report", "adaptive", "--report-epsilon", "0.5", "--report-delta", "1e-6",
                     "--out", str(rel)]) == 0
    out, png = tmp_path / "rep.csv", tmp_path / "rep.png"
    assert cli.main(["report", str(rel), str(path), "--label", "label", "--out", str(out), "--plot", str(png)]) == 0
    with open(out) as fh:
        got = np.array([float(r["epsilon_bound"]) for r in csv.DictReader(fh)])
    est = ObjPertClassifier(1.0, 1e-5, report="adaptive", report_epsilon=0.5, report_delta=1e-6,
                            random_state=2).fit(X, y)
    np.testing.assert_allclose(got, est.privacy_report(X, y), rtol=1e-12)
    assert png.stat().st_size > 1000
    # a release without a report cannot report
    plain = tmp_path / "plain.json"
    cli.main(["fit", str(path), "--label", "label", "--epsilon", "1", "--delta", "1e-5", "--out", str(plain)])
    assert cli.main(["report", str(plain), str(path), "--label", "label", "--out", str(tmp_path / "n.csv")]) == 2
    assert not (tmp_path / "n.csv").exists()
