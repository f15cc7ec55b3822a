"""The ``pdpkit`` command line at its edges: awkward CSV files.

Every refusal is one line on stderr naming the file, exit status 2, and leaves no output.
"""

from __future__ import annotations

import gzip
import json
import os

import numpy as np
import pytest

from pdpkit import cli
from pdpkit.objpert import Release

FIT = ["--label", "label", "--epsilon", "1", "--delta", "1e-5", "--seed", "3"]


def _rows(n: int = 200, seed: int = 1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.5, 0.5, size=(n, 3))
    y = np.where(X @ [1.0, -1.0, 0.5] > 0, "yes", "no")
    return [[*map(lambda v: repr(float(v)), xi), yi] for xi, yi in zip(X, y, strict=True)]


def _write_csv(path, header=("a", "b", "c", "label"), rows=None, *, prefix: bytes = b"", encoding="utf-8"):
    rows = _rows() if rows is None else rows
    lines = [",".join(header)] + [",".join(r) for r in rows]
    path.write_bytes(prefix + ("\n".join(lines) + "\n").encode(encoding))
    return path


@pytest.fixture
def data(tmp_path):
    return _write_csv(tmp_path / "d.csv")


@pytest.fixture
def release(tmp_path, data):
    rel = tmp_path / "rel.json"
    assert cli.main(["fit", str(data), *FIT, "--report", "adaptive", "--report-epsilon", "0.5",
                     "--report-delta", "1e-6", "--out", str(rel)]) == 0
    return rel


def _leftovers(directory) -> list[str]:
    return sorted(n for n in os.listdir(directory) if n.startswith(".pdpkit-"))


def _one_line_error(capsys, *needles: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if the command starts its work (reads the data) before refusing."""
    def refuse(*args, **kwargs):
        raise AssertionError("the work started before the output paths were checked")

    monkeypatch.setattr(cli, "read_csv", refuse)


# ----------------------------------------------------------------------------- CSV input
def test_duplicate_columns_are_refused_naming_file_and_column(tmp_path, capsys):
    bad = _write_csv(tmp_path / "dup.csv", header=("f0", "f1", "f0", "label"))
    out = tmp_path / "r.json"
    assert cli.main(["fit", str(bad), *FIT, "--out", str(out)]) == 2
    _one_line_error(capsys, "dup.csv", "'f0'", "twice")
    assert not out.exists() and _leftovers(tmp_path) == []


def test_a_utf8_bom_is_not_part_of_the_first_feature_name(tmp_path, data):
    bom = _write_csv(tmp_path / "bom.csv", prefix=b"\xef\xbb\xbf")
    plain_out, bom_out = tmp_path / "plain.json", tmp_path / "bom.json"
    assert cli.main(["fit", str(data), *FIT, "--out", str(plain_out)]) == 0
    assert cli.main(["fit", str(bom), *FIT, "--out", str(bom_out)]) == 0
    rel = Release.from_json(bom_out.read_text())
    assert rel.feature_names == ("a", "b", "c")
    assert rel.theta.tolist() == Release.from_json(plain_out.read_text()).theta.tolist()
    # a BOM'ed file also works as the targets of predict (the release's names are found)
    pred = tmp_path / "p.csv"
    assert cli.main(["predict", str(plain_out), str(bom), "--out", str(pred)]) == 0


def test_a_gzip_file_is_read_transparently(tmp_path, data):
    gz = tmp_path / "d.csv.gz"
    gz.write_bytes(gzip.compress(b"\xef\xbb\xbf" + data.read_bytes()))
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert cli.main(["fit", str(data), *FIT, "--out", str(a)]) == 0
    assert cli.main(["fit", str(gz), *FIT, "--out", str(b)]) == 0
    assert json.loads(a.read_text())["theta"] == json.loads(b.read_text())["theta"]


@pytest.mark.parametrize("content, needles", [
    ("latin1", ["lat.csv", "line 3", "0xe9", "UTF-8"]),
    ("truncated-gzip", ["lat.csv", "gzip", "corrupt"]),
    ("utf16", ["lat.csv", "line 1", "UTF-8"]),
])
def test_undecodable_files_are_refused_naming_the_file(tmp_path, capsys, content, needles):
    rows = _rows(5)
    rows[1][3] = "café"
    path = tmp_path / "lat.csv"
    if content == "latin1":
        _write_csv(path, rows=rows, encoding="latin-1")
    elif content == "utf16":
        _write_csv(path, rows=rows, encoding="utf-16")
    else:
        path.write_bytes(gzip.compress(_write_csv(tmp_path / "x.csv", rows=rows).read_bytes())[:40])
    out = tmp_path / "r.json"
    for argv in (["fit", str(path), *FIT, "--out", str(out)],):
        assert cli.main(argv) == 2
        _one_line_error(capsys, *needles)
    assert not out.exists() and _leftovers(tmp_path) == []


def test_a_malformed_csv_is_one_line_not_a_traceback(tmp_path, capsys):
    path = tmp_path / "big_field.csv"
    path.write_text("a,b,label\n" + "0.1," + "9" * 200_000 + ",yes\n")  # beyond csv's field size limit
    out = tmp_path / "r.json"
    assert cli.main(["fit", str(path), *FIT, "--out", str(out)]) == 2
    _one_line_error(capsys, "big_field.csv", "line")
    assert not out.exists()


