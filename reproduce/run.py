"""Run chapters' full-scale experiments and store their results: ``make reproduce``.

``python reproduce/run.py`` runs every ``reproduce/<chapter>.py``; ``python reproduce/run.py
amp single_parameter`` runs only those chapters. Each script runs its chapter's experiments at
the sources' scale (or a documented intermediate scale) and writes
``results/<chapter>/<name>.json`` through :func:`pdpkit.experiments.stored.save_result`, with
the command, version, commit, seeds, machine and wall time. Commit the results: the chapters
plot them beside their live runs and the unit tests check the two agree.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    scripts = sorted(p for p in HERE.glob("*.py") if p.name != "run.py" and not p.name.startswith("_"))
    known = {p.stem: p for p in scripts}
    wanted = argv or list(known)
    unknown = [name for name in wanted if name not in known]
    if unknown:
        print(f"no reproduce script for {unknown}; known: {sorted(known)}", file=sys.stderr)
        return 2
    failed = []
    for name in wanted:
        start = time.perf_counter()
        print(f"== {name}", flush=True)
        done = subprocess.run([sys.executable, str(known[name])], cwd=HERE.parent, check=False)
        print(f"== {name}: exit {done.returncode} after {time.perf_counter() - start:.0f} s", flush=True)
        if done.returncode:
            failed.append(name)
    if failed:
        print(f"failed: {failed}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
