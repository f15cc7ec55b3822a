"""nbval's order of the chapters: the longest first.

``make nbval`` runs the chapters on two workers (pytest-xdist, ``--dist loadscope``: a
chapter's cells stay together on one kernel), each taking the next chapter in the
collection's order when it finishes one. Longest first keeps one worker from starting the
longest chapter when the other is nearly done. A chapter's length is read from its own
stored outputs: the execution times Jupyter records in each code cell's metadata. Only the
order changes; every cell still runs after the one before it in the same kernel.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from pathlib import Path


def _timestamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@cache
def recorded_seconds(path: Path) -> float:
    """Sum over the notebook's code cells of the recorded execution time (0 where none is recorded)."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError):
        return 0.0
    total = 0.0
    for cell in cells:
        times = cell.get("metadata", {}).get("execution", {})
        start, end = times.get("iopub.execute_input"), times.get("shell.execute_reply")
        if cell.get("cell_type") == "code" and start and end:
            try:
                total += max(0.0, (_timestamp(end) - _timestamp(start)).total_seconds())
            except ValueError:
                pass
    return total


def pytest_collection_modifyitems(session, config, items):
    position = {}
    for k, item in enumerate(items):
        position.setdefault(Path(item.path), k)
    # stable: the cells of a chapter keep their order and stay together
    items.sort(key=lambda item: (-recorded_seconds(Path(item.path)), position[Path(item.path)]))
