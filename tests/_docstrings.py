"""Which public parameters of pdpkit lack a description (used by tests/test_book.py).

A parameter is documented when the numpy-style ``Parameters`` section of its function's
docstring (for a class: the class docstring's ``Parameters`` or ``Attributes``, or
``__init__``'s ``Parameters``) has an entry naming it (``name : type`` or ``a, b : type``).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re

import pdpkit

# autosummary's summary is the docstring's text up to the first period followed by a space
ABBREVIATION = re.compile(r"\b(eq|eqs|e\.g|i\.e|Thm|Thms|Prop|Props|Cor|Alg|Algs|Lem|Def|App|resp|cf|vs|etc|approx|Sec|Fig|Figs|al|No|(?:[a-z]\.)+[a-z])\.$")


def public_modules() -> list[str]:
    names = [f"pdpkit.{m.name}" for m in pkgutil.iter_modules(pdpkit.__path__) if not m.name.startswith("_")]
    import pdpkit.experiments as ex

    names += [f"pdpkit.experiments.{m.name}" for m in pkgutil.iter_modules(ex.__path__)]
    return sorted(n for n in names if n != "pdpkit.experiments")


def _section(doc: str, titles: tuple[str, ...]) -> list[str]:
    """The entry names of the numpy sections ``titles`` of ``doc``."""
    doc = inspect.cleandoc(doc or "")
    lines = doc.splitlines()
    names: list[str] = []
    i = 0
    while i < len(lines) - 1:
        if lines[i].strip() in titles and re.fullmatch(r"\s*-{3,}\s*", lines[i + 1]):
            base = len(lines[i]) - len(lines[i].lstrip())
            j = i + 2
            while j < len(lines):
                line = lines[j]
                if line.strip() and len(line) - len(line.lstrip()) == base:
                    if j + 1 < len(lines) and re.fullmatch(r"\s*-{3,}\s*", lines[j + 1]):
                        break  # the next section
                    head = line.strip().split(" : ")[0]
                    names += [n.strip().lstrip("*") for n in head.split(",")]
                j += 1
            i = j
        else:
            i += 1
    return names


def _params(obj) -> list[str]:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values()
            if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _first_line(doc: str | None) -> str:
    return inspect.cleandoc(doc or "").split("\n\n")[0].replace("\n", " ").strip()


def undocumented(module_name: str) -> tuple[list[str], list[str]]:
    """(undocumented parameters, bad summary lines) of the public names of a module."""
    mod = importlib.import_module(module_name)
    missing, summaries = [], []

    def check(qual: str, func, documented: list[str]) -> None:
        for p in _params(func):
            if p not in documented:
                missing.append(f"{qual}({p})")

    def check_summary(qual: str, doc: str | None) -> None:
        line = _first_line(doc)
        if not line:
            summaries.append(f"{qual}: no docstring")
        elif ABBREVIATION.search(re.split(r"(?<=\.)\s", line)[0]):
            summaries.append(f"{qual}: summary cut at an abbreviation: {line[:70]!r}")

    for name in getattr(mod, "__all__", []):
        obj = getattr(mod, name)
        qual = f"{module_name}.{name}"
        if inspect.isclass(obj):
            if obj.__module__ != module_name:
                continue
            check_summary(qual, obj.__doc__)
            documented = _section(obj.__doc__, ("Parameters", "Attributes", "Other Parameters"))
            init = obj.__dict__.get("__init__")
            if init is not None and not dataclasses.is_dataclass(obj):
                documented += _section(init.__doc__, ("Parameters", "Other Parameters"))
            if not issubclass(obj, BaseException):
                if dataclasses.is_dataclass(obj) or init is not None:
                    check(qual, obj, documented)
            for mname, member in vars(obj).items():
                if mname.startswith("_") or isinstance(member, property):
                    continue
                func = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
                if inspect.isfunction(func):
                    doc = inspect.getdoc(getattr(obj, mname))  # autodoc shows an inherited docstring
                    check_summary(f"{qual}.{mname}", doc)
                    check(f"{qual}.{mname}", func, _section(doc, ("Parameters", "Other Parameters")))
        elif inspect.isfunction(obj):
            if obj.__module__ != module_name:
                continue
            check_summary(qual, obj.__doc__)
            check(qual, obj, _section(obj.__doc__, ("Parameters", "Other Parameters")))
    return missing, summaries


if __name__ == "__main__":
    total = 0
    for m in public_modules():
        miss, summ = undocumented(m)
        total += len(miss)
        print(f"{m:45s} {len(miss):4d} undocumented  {len(summ)} bad summaries")
        for s in summ:
            print("    ", s)
    print("total undocumented parameters:", total)
