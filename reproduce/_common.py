"""The command line every ``reproduce/<chapter>.py`` with several experiments shares."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from pdpkit.experiments import stored


def run(chapter: str, experiments: dict[str, Callable[[], tuple[dict, dict, str]]], description: str) -> None:
    """Run ``experiments`` (all, or those named by ``--only``) and store each with its provenance.

    Each experiment returns ``(data, seeds, scale)``; it is timed and written to
    ``results/<chapter>/<name>.json`` by :func:`pdpkit.experiments.stored.save_result`.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--only", choices=sorted(experiments), action="append")
    args = parser.parse_args()
    for name in args.only or list(experiments):
        with stored.Timer() as t:
            data, seeds, scale = experiments[name]()
        path = stored.save_result(chapter, name, data,
                                  provenance=stored.provenance(seeds=seeds, scale=scale, wall_time_s=t.seconds))
        print(f"{name}: {t.seconds:.0f} s -> {path}", flush=True)


def run_each(experiments: dict[str, Callable[[], None]], description: str) -> None:
    """Call ``experiments`` (all, or those named by ``--only``); each stores its own result(s)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--only", choices=sorted(experiments), action="append")
    for name in parser.parse_args().only or list(experiments):
        print("running", name, flush=True)
        experiments[name]()
