"""The README's examples run as written (in a scratch directory) and print what they claim."""

from __future__ import annotations

import contextlib
import io
import os
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def test_first_example_is_the_estimator_and_runs(tmp_path, monkeypatch):
    blocks = _python_blocks()
    assert "ObjPertClassifier" in blocks[0]
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks[0], "README.md", "exec"), {})
    text = out.getvalue()
    acc = float(re.search(r"test accuracy ([0-9.]+)", text).group(1))
    assert acc > 0.8
    assert "-DP [objpert-profile+gaussians" in text
    assert os.path.getsize(tmp_path / "release.json") > 100


def test_gaussian_example_runs():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(_python_blocks()[1], "README.md", "exec"), {})
    assert abs(float(out.getvalue().split()[0]) - 4.2247) < 1e-4
