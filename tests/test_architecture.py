"""The package's import layering (ARCHITECTURE.md): a module never imports from a higher layer.

Every ``import``/``from … import`` of a pdpkit module is read from the source with ``ast``
(so lazy imports inside functions count too) and checked against :data:`LAYERS`. The
test of the tester: a synthetic upward import must be reported.
"""

from __future__ import annotations

import ast
import pathlib

import pdpkit

ROOT = pathlib.Path(pdpkit.__file__).parent

#: module -> layer (ARCHITECTURE.md). Experiments are the top layer.
LAYERS: dict[str, int] = {
    "_validation": 0,
    "plotting": 0,
    "_progress": 0,
    "_display": 0,
    "_json": 0,
    "signing": 0,
    "gaussian": 1,
    "losses": 1,
    "goe": 1,
    "audit": 1,
    "datasets": 1,
    "_solver": 1,
    "_goe_mpmath": 1,
    "schema": 1,
    "objpert": 2,
    "analyze_gauss": 2,
    "output_perturbation": 2,
    "accounting": 2,
    "ops": 2,
    "stability": 2,
    "amp": 3,
    "report": 3,
    "single": 3,
    "release": 3,
    "preprocessing": 3,
    "accountant": 3,
    "selection": 3,
    "estimators": 4,
    "model_selection": 4,
    "cli": 4,
    "page": 4,
    "check": 4,
    "__main__": 4,
    "experiments": 5,
}

#: Imports inside a layer that are allowed (importer, imported): the layer's own order.
SAME_LAYER_ALLOWED = {
    ("_solver", "losses"),
    ("analyze_gauss", "goe"),
    ("output_perturbation", "objpert"),
    ("stability", "objpert"),
    ("objpert", "accounting"),
    ("cli", "estimators"),
    ("model_selection", "estimators"),
    ("cli", "page"),
    ("cli", "check"),
    ("__main__", "cli"),
    ("ops", "analyze_gauss"),
    ("ops", "objpert"),
    ("release", "report"),
    ("preprocessing", "release"),
    ("preprocessing", "accountant"),
    ("release", "accountant"),
    ("accountant", "selection"),
    ("model_selection", "accountant"),
    ("cli", "model_selection"),
}

#: Lazy forwards kept so that moved names stay importable (module __getattr__): upward by design.
FORWARDS = {("goe", "analyze_gauss"), ("goe", "_goe_mpmath"), ("gaussian", "output_perturbation"),
            ("objpert", "output_perturbation"), ("objpert", "release"),
            # Release.to_estimator rebuilds the front door's estimator from a release file
            ("release", "estimators")}


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
        if importer not in LAYERS:
            out.append(f"{path.name}: module {importer!r} has no layer in LAYERS (add it, and to ARCHITECTURE.md)")
            continue
        for imported in _pdpkit_imports(path):
            if imported in ("*dynamic*", importer) or (importer, imported) in FORWARDS:
                continue
            if imported not in LAYERS:
                out.append(f"{importer} imports unknown pdpkit module {imported!r}")
            elif LAYERS[imported] > LAYERS[importer]:
                out.append(f"{importer} (layer {LAYERS[importer]}) imports {imported} (layer {LAYERS[imported]})")
            elif LAYERS[imported] == LAYERS[importer] and (importer, imported) not in SAME_LAYER_ALLOWED:
                out.append(f"{importer} imports {imported} from its own layer {LAYERS[importer]}")
    return out


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
