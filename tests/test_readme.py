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


def _shell_commands() -> list[str]:
    """Every ``pdpkit ...`` command of the README's bash blocks, continuation lines joined, comments dropped."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("pdpkit "):
                out.append(line)
    return out


def test_every_shell_command_of_the_readme_parses():
    import shlex

    from pdpkit.cli import build_parser

    commands = _shell_commands()
    assert len(commands) >= 6
    for command in commands:
        try:
            build_parser().parse_args(shlex.split(command)[1:])
        except SystemExit as exc:  # argparse's exit on a bad option
            raise AssertionError(f"the README's command does not parse: {command}") from exc
    # the test of the tester: a misspelt option is caught
    try:
        build_parser().parse_args(["fit", "x.csv", "--epsilonn", "1"])
    except SystemExit:
        pass
    else:
        raise AssertionError("a misspelt option parsed")
