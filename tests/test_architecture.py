"""The package's import layering (ARCHITECTURE.md): a module never imports from a higher layer.

Every ``import``/``from … import`` of a pdpkit module is read from the source with ``ast``
(so lazy imports inside functions count too) and checked against :data:`LAYERS`. The
test of the tester: a synthetic upward import must be reported.
"""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest

import pdpkit

ROOT = pathlib.Path(pdpkit.__file__).parent

#: The layers (ARCHITECTURE.md), each an ordered list: a module imports only from lower layers
#: and from modules listed before it in its own layer. Experiments are the top layer.
LAYER_LIST: tuple[tuple[str, ...], ...] = (
    ("_validation", "_progress", "_display", "_json", "plotting", "signing", "ledger"),
    ("gaussian", "losses", "goe", "_goe_mpmath", "audit", "schema", "datasets", "_solver"),
    ("accounting", "events", "objpert", "analyze_gauss", "output_perturbation", "ops", "stability"),
    ("amp", "report", "single", "selection", "accountant", "preprocessing", "release"),
    ("check", "estimators", "ops_estimators", "page", "model_selection", "cli", "__main__"),
    ("experiments",),
)

#: module -> (layer, place in its layer)
RANK: dict[str, tuple[int, int]] = {m: (i, j) for i, layer in enumerate(LAYER_LIST) for j, m in enumerate(layer)}
#: module -> layer
LAYERS: dict[str, int] = {m: r[0] for m, r in RANK.items()}

#: Modules every other may import (private helpers need no API page).
PRIVATE_MODULES = {"_validation", "_progress", "_display", "_json", "_solver", "_goe_mpmath"}


def _module_of(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _pdpkit_imports(path: pathlib.Path) -> set[str]:
    """The top-level pdpkit modules a source file imports (relative or absolute, anywhere in it)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    in_subpackage = len(path.relative_to(ROOT).parts) > 1
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "pdpkit" and len(parts) > 1:
                    found.add(parts[1])
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level == 0:
                parts = mod.split(".")
                if parts[0] != "pdpkit":
                    continue
                rest = parts[1:]
            else:
                up = node.level - (1 if in_subpackage else 0)
                if up != 1:  # within experiments/ (level 1 in a subpackage)
                    continue
                rest = mod.split(".") if mod else []
            if rest:
                found.add(rest[0])
            else:  # from . import a, b
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.JoinedStr | ast.Constant):
                found.add("*dynamic*")
    return found


def violations(files: list[pathlib.Path]) -> list[str]:
    out = []
    for path in files:
        importer = _module_of(path)
        if importer == "__init__":
            continue
        if importer not in RANK:
            out.append(f"{path.name}: module {importer!r} has no layer in LAYER_LIST (add it, and to ARCHITECTURE.md)")
            continue
        for imported in _pdpkit_imports(path):
            if imported == importer:
                continue
            if imported == "*dynamic*":
                out.append(f"{importer} imports a pdpkit module by a computed name (importlib): name it")
            elif imported not in RANK:
                out.append(f"{importer} imports unknown pdpkit module {imported!r}")
            elif RANK[imported] >= RANK[importer]:
                li, ji = RANK[importer]
                lm, jm = RANK[imported]
                where = "a higher layer" if lm > li else "later in its own layer"
                out.append(f"{importer} (layer {li}) imports {imported} (layer {lm}): {where}")
    return out


def import_graph(files: list[pathlib.Path]) -> dict[str, set[str]]:
    """module -> the pdpkit modules it imports, through every import statement (module- or function-level)."""
    graph: dict[str, set[str]] = {}
    for path in files:
        importer = _module_of(path)
        if importer == "__init__":
            continue
        graph.setdefault(importer, set()).update(m for m in _pdpkit_imports(path) if m not in (importer, "*dynamic*"))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: strongly connected components of more than one module, or a module importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_module_respects_the_layers():
    files = sorted(p for p in ROOT.rglob("*.py"))
    assert files
    assert violations(files) == []


def test_the_layer_check_catches_an_upward_import(tmp_path, monkeypatch):
    fake_root = tmp_path / "pdpkit"
    fake_root.mkdir()
    bad = fake_root / "gaussian.py"
    bad.write_text("from .objpert import objpert_fit\nfrom . import losses\n", encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.ROOT", fake_root)
    found = violations([bad])
    assert len(found) == 2 and "gaussian (layer 1) imports objpert (layer 2)" in found[0] + found[1]


def test_no_import_cycle_through_any_import_statement():
    graph = import_graph(sorted(ROOT.rglob("*.py")))
    assert len(graph) >= 35
    assert cycles(graph) == []


def test_the_cycle_check_catches_a_function_level_cycle(tmp_path, monkeypatch):
    fake_root = tmp_path / "pdpkit"
    fake_root.mkdir()
    (fake_root / "release.py").write_text("def f():\n    from .estimators import g\n", encoding="utf-8")
    (fake_root / "estimators.py").write_text("from . import release\n", encoding="utf-8")
    (fake_root / "gaussian.py").write_text("import numpy\n", encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.ROOT", fake_root)
    assert cycles(import_graph(sorted(fake_root.glob("*.py")))) == [["estimators", "release"]]


def test_no_module_forwards_names_with_getattr():
    """Moved names are imported from where they live; only the package's lazy loader (PEP 562) has __getattr__."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.name == "__init__.py" and path.parent == ROOT:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{path.relative_to(ROOT)}:{n.lineno}" for n in tree.body
                  if isinstance(n, ast.FunctionDef) and n.name == "__getattr__"]
    assert found == []


HEAVY = ("sklearn", "pandas", "matplotlib", "dask")


@pytest.mark.parametrize("statement", [
    "import pdpkit",
    "import pdpkit.gaussian",
    "import pdpkit.accounting",
    "import pdpkit.events",
    "import pdpkit.accountant",
    "import pdpkit.ledger",
    "import pdpkit.cli\ntry:\n    pdpkit.cli.main(['--version'])\nexcept SystemExit:\n    pass",
])
def test_importing_a_mechanism_loads_no_estimator_plotting_or_cluster_stack(statement):
    code = f"{statement}\nimport sys\nprint('loaded:', *(m for m in {HEAVY!r} if m in sys.modules))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1] == "loaded:", res.stdout


def test_the_import_check_sees_a_heavy_import():
    code = f"import pdpkit.estimators\nimport sys\nprint('loaded:', *(m for m in {HEAVY!r} if m in sys.modules))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "sklearn" in res.stdout.strip().splitlines()[-1]


def private_reach_ins(files: list[pathlib.Path]) -> list[str]:
    """``from .module import _name`` and ``module._name`` across modules, where ``module`` is not a private helper."""
    out = []
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("pdpkit")):
                mod = (node.module or "").split(".")[-1] if node.module else ""
                for a in node.names:
                    if not mod:  # from . import report as _report
                        aliases[a.asname or a.name] = a.name
                    elif a.name.startswith("_") and not a.name.startswith("__") and mod not in PRIVATE_MODULES:
                        out.append(f"{path.name}:{node.lineno}: from {mod} import {a.name}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases and aliases[node.value.id] not in PRIVATE_MODULES \
                    and node.attr.startswith("_") and not node.attr.startswith("__"):
                out.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
    return out


def test_no_module_reads_another_modules_private_names():
    assert private_reach_ins(sorted(ROOT.rglob("*.py"))) == []


def test_the_reach_in_check_catches_one(tmp_path):
    bad = tmp_path / "release.py"
    bad.write_text("from .report import _released\nfrom . import objpert as _o\nx = _o._scale_from\n"
                   "from ._solver import _Rows\n", encoding="utf-8")
    assert len(private_reach_ins([bad])) == 2
