"""Run every ``benchmarks/bench_*.py`` (each defines ``main()``) and print its ratios."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import machine_line  # noqa: E402


def main(argv: list[str]) -> int:
    print(machine_line(), flush=True)
    selected = set(argv)
    for path in sorted(HERE.glob("bench_*.py")):
        if selected and path.stem not in selected and path.stem.removeprefix("bench_") not in selected:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        print(f"--- {path.name}", flush=True)
        module.main()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
