"""Progress bars for long work (full-scale experiments, coverage simulations, big audits).

:func:`progress` wraps an iterable in a `tqdm <https://tqdm.github.io>`_ bar when a person
is watching and returns it unchanged otherwise. ``progress=None`` (the default everywhere
in pdpkit) means *auto*:

* no bar under CI (``CI`` set), under pytest and nbval, or when ``PDPKIT_PROGRESS=0``
  (the Makefile exports it, so the book build and the tests never show one and stored
  notebook outputs never contain one);
* otherwise a bar in a notebook (``tqdm.auto``) or when standard error is a terminal.

``progress=True`` forces a bar (if tqdm is installed), ``progress=False`` suppresses it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

__all__ = ["progress", "progress_enabled"]

T = TypeVar("T")


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()  # type: ignore[attr-defined]
    except Exception:  # pragma: no cover - IPython without a shell
        return False
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def progress_enabled(progress: bool | None = None) -> bool:
    """Whether a progress bar should be shown (see the module docstring for *auto*)."""
    if progress is not None:
        if not isinstance(progress, (bool,)):
            raise TypeError(f"progress must be True, False or None (auto); got {progress!r}")
        return progress
    env = os.environ
    if env.get("PDPKIT_PROGRESS", "").strip() in {"0", "false", "no", "off"}:
        return False
    if env.get("CI") or "PYTEST_CURRENT_TEST" in env:
        return False
    if _in_notebook():
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # pragma: no cover - closed or replaced stderr
        return False


def progress(iterable: Iterable[T], *, total: int | None = None, desc: str | None = None,
             progress: bool | None = None, **kwargs: Any) -> Iterable[T] | Iterator[T]:
    """``iterable``, wrapped in a tqdm bar when :func:`progress_enabled` says so."""
    if not progress_enabled(progress):
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency; stay silent without it
        return iterable
    return tqdm(iterable, total=total, desc=desc, **kwargs)
