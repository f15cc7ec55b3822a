"""The README's examples run as written and print what they claim; the release file goes
to a temporary directory, never into the directory the example is run from (a reader's
clone of this repository)."""

from __future__ import annotations

import contextlib
import io
import pathlib
import re
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def test_first_example_is_the_estimator_and_runs(tmp_path, monkeypatch):
    blocks = _python_blocks()
    assert "ObjPertClassifier" in blocks[0]
    cwd, scratch = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    scratch.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where tempfile.mkdtemp() goes
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks[0], "README.md", "exec"), {})
    text = out.getvalue()
    acc = float(re.search(r"test accuracy ([0-9.]+)", text).group(1))
    assert acc > 0.8
    assert "-DP [objpert-profile+gaussians" in text
    assert not any(cwd.iterdir()), "the example wrote into the current directory"
    (release,) = scratch.glob("*/release.json")  # written into a temporary directory
    assert release.stat().st_size > 100


def test_gaussian_example_runs():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(next(b for b in _python_blocks() if "gaussian_sigma" in b), "README.md", "exec"), {})
    assert abs(float(out.getvalue().split()[0]) - 4.2247) < 1e-4


def test_workflow_example_runs_within_its_budget():
    block = next(b for b in _python_blocks() if "PrivacyAccountant" in b)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), {})
    text = out.getvalue()
    eps = float(re.match(r"\(([0-9.]+),", text).group(1))
    assert eps <= 3.0 and "pld+rdp" in text
