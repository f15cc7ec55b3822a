"""Progress bars: shown when asked or when a person watches, never under CI, pytest or the book build."""

from __future__ import annotations

import io

import pytest

from pdpkit import _progress


def test_auto_is_off_under_pytest_ci_and_the_makefile(monkeypatch):
    items = [1, 2, 3]
    assert _progress.progress(items) is items  # PYTEST_CURRENT_TEST is set
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    monkeypatch.setenv("CI", "true")
    assert not _progress.progress_enabled()
    monkeypatch.delenv("CI")
    monkeypatch.setenv("PDPKIT_PROGRESS", "0")
    assert not _progress.progress_enabled()


def test_auto_follows_the_terminal(monkeypatch):
    for var in ("PYTEST_CURRENT_TEST", "CI", "PDPKIT_PROGRESS"):
        monkeypatch.delenv(var, raising=False)

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr("sys.stderr", Tty())
    assert _progress.progress_enabled()
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert not _progress.progress_enabled()


def test_forced_bar_draws_with_tqdm_and_yields_everything(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    bar = _progress.progress(range(5), total=5, desc="work", progress=True, file=err, mininterval=0)
    assert list(bar) == [0, 1, 2, 3, 4]
    assert "work" in err.getvalue() and "5/5" in err.getvalue()
    assert _progress.progress_enabled(False) is False
    with pytest.raises(TypeError, match="progress"):
        _progress.progress_enabled("yes")
