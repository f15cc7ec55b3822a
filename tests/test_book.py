"""The book and the package stay in sync.

* every chapter in ``_toc.yml`` exists, and every notebook under ``chapters/`` is listed;
* each notebook imports the pdpkit module(s) its chapter is about, checks algebra with
  sympy assertions, is stored with outputs executed in order, and does not redefine a
  public pdpkit function (a chapter imports, never re-implements);
* the API reference documents every public pdpkit module.
"""

from __future__ import annotations

import ast
import importlib
import json
import pathlib
import pkgutil
import re

import pytest
import yaml

import pdpkit

ROOT = pathlib.Path(__file__).resolve().parents[1]

# chapter notebook -> the pdpkit modules it must import
CHAPTER_MODULES = {
    "per_instance_dp": ["gaussian", "audit", "output_perturbation"],
    "output_vs_objective": ["losses", "objpert", "output_perturbation"],
    "objpert_ex_post": ["objpert"],
    "goe_analyze_gauss": ["goe", "analyze_gauss"],
    "objpert_accounting": ["accounting"],
    "amp": ["amp"],
    "privacy_report": ["report"],
    "ops_adaops": ["ops"],
    "self_concordant_stability": ["stability"],
    "single_parameter": ["single"],
    "using_pdpkit": ["estimators", "cli"],
}


def _toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(entries):
        for entry in entries:
            files.append(entry["file"])
            walk(entry.get("sections", []))

    for part in toc.get("parts", []):
        walk(part.get("chapters", []))
    walk(toc.get("chapters", []))
    return files


def _notebooks() -> list[pathlib.Path]:
    return sorted(p for p in (ROOT / "chapters").glob("*.ipynb"))


def _code(nb_path: pathlib.Path) -> list[str]:
    nb = json.loads(nb_path.read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def _public_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(pdpkit.__path__) if not m.name.startswith("_"))


def test_toc_entries_exist_and_every_notebook_is_listed():
    files = _toc_files()
    for f in files:
        assert any((ROOT / f"{f}{ext}").exists() for ext in (".md", ".ipynb")), f"_toc.yml lists missing {f}"
    for nb in _notebooks():
        assert f"chapters/{nb.stem}" in files, f"{nb.name} is not in _toc.yml"


@pytest.mark.parametrize("nb_path", _notebooks(), ids=lambda p: p.stem)
def test_chapter_imports_its_modules_and_asserts_with_sympy(nb_path):
    src = "\n".join(_code(nb_path))
    for module in CHAPTER_MODULES.get(nb_path.stem, []):
        pattern = rf"(from\s+pdpkit\s+import\s+[^\n]*\b{module}\b|from\s+pdpkit\.{module}\s+import|import\s+pdpkit\.{module}\b)"
        assert re.search(pattern, src), f"{nb_path.name} does not import pdpkit.{module}"
    assert "import sympy" in src, f"{nb_path.name} has no sympy derivation"
    assert re.search(r"assert\s+sp\.(simplify|expand|factor|cancel|nsimplify)|assert\s+sympy\.", src), \
        f"{nb_path.name} has no sympy assertion"


@pytest.mark.parametrize("nb_path", _notebooks(), ids=lambda p: p.stem)
def test_chapter_is_stored_executed_in_order(nb_path):
    nb = json.loads(nb_path.read_text())
    counts = [c.get("execution_count") for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]
    assert counts and None not in counts, f"{nb_path.name} has unexecuted cells"
    assert counts == list(range(1, len(counts) + 1)), f"{nb_path.name} was not run top to bottom in a fresh kernel"
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            assert out.get("output_type") != "error", f"{nb_path.name} stores an error output"
            if out.get("output_type") == "stream":
                assert out.get("name") != "stderr", f"{nb_path.name} stores stderr output: {''.join(out['text'])[:200]}"


@pytest.mark.parametrize("nb_path", _notebooks(), ids=lambda p: p.stem)
def test_chapter_does_not_redefine_pdpkit_functions(nb_path):
    public = set()
    for name in _public_modules():
        mod = importlib.import_module(f"pdpkit.{name}")
        public |= set(getattr(mod, "__all__", []))
    for source in _code(nb_path):
        cleaned = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(cleaned)):
            if isinstance(node, ast.FunctionDef):
                assert node.name not in public, f"{nb_path.name} re-implements pdpkit's {node.name}"


def _documented_names(module) -> list[str]:
    return [n for n in getattr(module, "__all__", []) if not n.isupper() and not n.startswith("__")]


@pytest.mark.parametrize("name", _public_modules())
def test_every_module_has_an_api_page_with_an_autosummary_of_its_names(name):
    files = _toc_files()
    if name == "experiments":
        page = ROOT / "chapters" / "api" / "experiments.md"
        text = page.read_text()
        sub = importlib.import_module("pdpkit.experiments")
        for m in pkgutil.iter_modules(sub.__path__):
            mod = importlib.import_module(f"pdpkit.experiments.{m.name}")
            assert f"automodule:: pdpkit.experiments.{m.name}" in text, f"experiments.md lacks {m.name}"
            for n in _documented_names(mod):
                assert re.search(rf"^\s+{n}$", text, re.M), f"experiments.md's autosummary lacks {m.name}.{n}"
        return
    page = ROOT / "chapters" / "api" / f"{name}.md"
    assert page.exists(), f"pdpkit.{name} has no API page chapters/api/{name}.md"
    assert f"chapters/api/{name}" in files, f"chapters/api/{name}.md is not in _toc.yml"
    text = page.read_text()
    assert f"automodule:: pdpkit.{name}" in text and ".. autosummary::" in text
    summary = text[text.index(".. autosummary::"):text.index(".. automodule::")]
    for n in _documented_names(importlib.import_module(f"pdpkit.{name}")):
        assert re.search(rf"^\s+{n}$", summary, re.M), f"chapters/api/{name}.md's autosummary lacks {n}"


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme and re.search(r"^make test$", ci, re.M)


def _display_math_problems(src: str) -> list[str]:
    """Display-math blocks that MyST will not typeset: glued to a text line above them,
    or containing a line that Markdown reads as a list item ("+ ", "- ", "* ")."""
    problems = []
    lines = src.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("$$"):
            j = i
            if not (lines[i].strip().endswith("$$") and len(lines[i].strip()) > 2):
                j = i + 1
                while j < len(lines) and not lines[j].rstrip().endswith("$$"):
                    j += 1
            if i > 0 and lines[i - 1].strip() and not lines[i - 1].startswith(":"):
                problems.append(f"no blank line before: {lines[i][:60]!r}")
            for line in lines[i + 1:j + 1]:
                if re.match(r"\s*[+\-*] ", line):
                    problems.append(f"list marker inside display math: {line[:60]!r}")
            i = j + 1
        else:
            i += 1
    return problems


@pytest.mark.parametrize("nb_path", _notebooks(), ids=lambda p: p.stem)
def test_display_math_is_parseable(nb_path):
    nb = json.loads(nb_path.read_text())
    problems = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            problems += _display_math_problems("".join(cell["source"]))
    assert not problems, f"{nb_path.name}: {problems}"


# ------------------------------------------------------------------ the reader's path
def _markdown(nb_path: pathlib.Path) -> list[str]:
    nb = json.loads(nb_path.read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]


def _list_markers_inside_inline_math(text: str) -> list[str]:
    """Lines that start with '+ ', '- ' or '* ' while an inline $...$ is open: Markdown reads a list item."""
    found, inside = [], False
    for line in text.splitlines():
        if line.strip().startswith("$$"):
            continue
        if inside and re.match(r"\s*[-+*] ", line):
            found.append(line[:60])
        if len(re.findall(r"(?<!\\)\$", line.replace("$$", ""))) % 2:
            inside = not inside
    return found


def test_the_inline_math_check_catches_a_list_marker():
    assert _list_markers_inside_inline_math("gradient $a\n+ b$ and") == ["+ b$ and"]
    assert _list_markers_inside_inline_math("gradient $a +\nb$ and\n- an item") == []


@pytest.mark.parametrize("nb_path", _notebooks(), ids=lambda p: p.stem)
def test_inline_math_never_starts_a_line_with_a_list_marker(nb_path):
    found = [f for md in _markdown(nb_path) for f in _list_markers_inside_inline_math(md)]
    assert not found, f"{nb_path.name}: a line inside $...$ starts like a list item (move the sign up): {found}"


@pytest.mark.parametrize("nb_path", _notebooks(), ids=lambda p: p.stem)
def test_chapter_opens_with_what_it_shows_and_ends_with_exercises(nb_path):
    md = _markdown(nb_path)
    assert "What this chapter shows" in md[0], f"{nb_path.name}: the first cell has no 'What this chapter shows' box"
    text = "\n".join(md)
    exercises = re.findall(r"\{exercise\}[^\n]*\n:label: (\S+)", text)
    assert 2 <= len(exercises) <= 4, f"{nb_path.name}: {len(exercises)} exercises (want two or three)"
    for label in exercises:
        assert re.search(rf"\{{solution-start\}} {re.escape(label)}\n:class: dropdown", text), \
            f"{nb_path.name}: exercise {label} has no hidden solution"
    assert text.count("{solution-start}") == text.count("{solution-end}")
    assert "Errata and clarifications" in text, f"{nb_path.name} has no errata box"


_PRF = re.compile(r"(?::::+|```+)\{prf:(\w+)\}([^\n]*)\n((?::[\w-]+:[^\n]*\n)*)")


@pytest.mark.parametrize("nb_path", _notebooks(), ids=lambda p: p.stem)
def test_theorem_blocks_carry_labels_source_numbers_and_no_book_numbers(nb_path):
    text = "\n".join(_markdown(nb_path))
    blocks = [m for m in _PRF.finditer(text) if m.group(1) != "proof"]
    assert blocks, f"{nb_path.name} states no result in a prf block"
    for m in blocks:
        kind, title, opts = m.groups()
        assert ":label:" in opts, f"{nb_path.name}: {kind} '{title.strip()}' has no :label:"
        assert ":nonumber:" in opts, f"{nb_path.name}: {kind} '{title.strip()}' carries a book number"
        name = title.strip()
        source = re.search(r" — (.+)$", name)  # "Ex-post pDP of ObjPert — Redberg & Wang 2021, Thm 6"
        assert source, f"{nb_path.name}: {kind} '{name}' names no source after ' — '"
        assert re.search(r"Redberg|Wang|Asi, Duchi|lecture notes|this book|\bbook\b|[A-Z]\w+ (?:et al\. )?(?:19|20)\d\d",
                         source.group(1)), f"{nb_path.name}: {kind} '{name}' names no source after ' — '"
        assert re.search(r"\d|lecture notes|this book", source.group(1)), \
            f"{nb_path.name}: {kind} '{name}' names no number of its source"
        prose = re.sub(r"\$[^$]*\$", "", name)
        assert not re.search(r"\([^()]*\(", prose), f"{nb_path.name}: {kind} '{name}' nests parentheses"
    bare = re.findall(r"\{prf:ref\}`([^`<]*)`", text)
    assert not bare, f"{nb_path.name}: {{prf:ref}} without explicit text renders as a bare kind name: {bare}"
    assert re.search(r"\{prf:ref\}`[^`]+<[^`]+>`", text), f"{nb_path.name} never refers to its results with {{prf:ref}}"


@pytest.mark.parametrize("nb_path", _notebooks(), ids=lambda p: p.stem)
def test_chapter_code_fits_the_page_and_draws_through_pdpkit_plotting(nb_path):
    code = _code(nb_path)
    long = [line for src in code for line in src.splitlines() if len(line) > 88]
    assert not long, f"{nb_path.name}: {len(long)} code lines wider than 88 columns, e.g. {long[0]!r}"
    src = "\n".join(code)
    assert "pp.setup()" in src, f"{nb_path.name} does not call pdpkit.plotting.setup()"
    for forbidden in ("rcParams", "plt.subplots", "figsize", "plt.show("):
        assert forbidden not in src, f"{nb_path.name} uses {forbidden}: draw through pdpkit.plotting"


def test_every_experiments_module_belongs_to_a_chapter():
    import pdpkit.experiments as E

    for m in pkgutil.iter_modules(E.__path__):
        if m.name == "stored":  # every chapter's stored full-scale results, not one chapter's figures
            continue
        nb = ROOT / "chapters" / f"{m.name}.ipynb"
        assert nb.exists(), f"pdpkit.experiments.{m.name} has no chapter {nb.name}"
        assert f"pdpkit.experiments.{m.name}" in "\n".join(_code(nb)) or \
            re.search(rf"from pdpkit\.experiments import [^\n]*\b{m.name}\b", "\n".join(_code(nb))), \
            f"{nb.name} does not import its experiments module"


# ------------------------------------------------------------------ running a chapter
@pytest.mark.parametrize("nb_path", _notebooks(), ids=lambda p: p.stem)
def test_chapter_runs_on_the_project_kernel_and_says_how_to_run_it(nb_path):
    """The kernel ``make install`` registers, a "Run this chapter" note, the cost of full scale."""
    nb = json.loads(nb_path.read_text())
    spec = nb["metadata"]["kernelspec"]
    assert (spec["name"], spec["display_name"]) == ("pdpkit", "Python (pdpkit)"), \
        f"{nb_path.name} names the kernel {spec['name']!r}: the chapters run on the project's kernel"
    md = _markdown(nb_path)
    run = [m for m in md if m.startswith(":::{admonition} Run this chapter")]
    assert run, f"{nb_path.name} has no 'Run this chapter' note"
    assert "make lab" in run[0] and f"chapters/{nb_path.name}" in run[0] and "`pdpkit`" in run[0]
    box = md[0][md[0].index("What this chapter shows"):]
    box = box[:box.index("\n:::")]
    duration = r"about [0-9.]+ (s|min|minutes|hours?)\b"
    assert re.search(duration, box), f"{nb_path.name}: the box does not say how long the chapter takes"
    first = _code(nb_path)[0]
    switch = re.search(r"^FULL_SCALE = False  # (.*(?:\n# .*)*)", first, re.M)
    if switch is None:
        assert "no `FULL_SCALE` switch" in box and "FULL_SCALE" not in "\n".join(_code(nb_path))
    else:
        assert "`FULL_SCALE = True`" in box, f"{nb_path.name}: the box does not say what FULL_SCALE changes"
        assert re.search(duration, switch.group(1)), \
            f"{nb_path.name}: the FULL_SCALE comment does not say how long full scale takes"


# ------------------------------------------------------------------ finding one's way
# Chapters whose figures, errata ids and captions the lead is converting (the notebook is
# being rewritten); remove a name once its chapter follows ARCHITECTURE.md "A chapter's shape".
PENDING_CHAPTERS: set[str] = set()


def _book_pages():
    import importlib.util

    spec = importlib.util.spec_from_file_location("book_pages", ROOT / "tools" / "book_pages.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_results_at_a_glance_lists_every_result_and_erratum_and_is_current():
    pages = _book_pages()
    problems = pages.registry_problems()
    assert not problems, "chapters/results_registry.yml: " + "; ".join(problems)
    for path, text in pages.generated().items():
        assert path.read_text() == text, f"{path.name} is stale: run python tools/book_pages.py"
    assert "chapters/results" in _toc_files() and "chapters/notation" in _toc_files()


def test_registry_check_fails_on_a_missing_label_or_erratum():
    """The test of the tester: drop one prf label and one erratum from the registry."""
    pages = _book_pages()
    reg = pages.load_registry()
    label, erratum = "thm-rkw-3-1", "E-rkw-3.1-sign"
    for r in reg["results"]:
        r["prf"] = [x for x in r.get("prf") or [] if x != label]
        r["errata"] = [x for x in r.get("errata") or [] if x != erratum]
    problems = pages.registry_problems(reg)
    assert any(label in p for p in problems) and any(erratum in p for p in problems), problems
    assert any("prf block" in p for p in problems) and any("erratum" in p for p in problems)
    # two numbers that differ only in punctuation would share a row anchor on the results page
    reg = pages.load_registry()
    reg["results"].append(dict(reg["results"][0], num=reg["results"][0]["num"].replace(" ", ". ")))
    assert any("anchor" in p for p in pages.registry_problems(reg)), pages.registry_problems(reg)


def test_intro_chapter_table_follows_the_toc():
    intro = (ROOT / "chapters" / "intro.md").read_text()
    table = intro[intro.index("<!-- chapters:start -->"):intro.index("<!-- chapters:end -->")]
    listed = re.findall(r"^\| \{doc\}`(\w+)`", table, re.M)
    toc = [f.split("/")[1] for f in _toc_files() if f.count("/") == 1 and (ROOT / f"{f}.ipynb").exists()]
    assert listed == toc, f"the intro's chapter table {listed} is not the toc's {toc}"


@pytest.mark.parametrize("nb_path", _notebooks(), ids=lambda p: p.stem)
def test_figures_have_a_numbered_caption_alt_text_and_collapsed_code(nb_path):
    if nb_path.stem in PENDING_CHAPTERS:
        pytest.skip(f"{nb_path.stem}: pending (PENDING_CHAPTERS)")
    nb = json.loads(nb_path.read_text())
    names = []
    for i, cell in enumerate(nb["cells"]):
        pngs = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        if cell["cell_type"] != "code" or not pngs:
            continue
        meta = cell["metadata"]
        where = f"{nb_path.name} cell {i}"
        assert len(pngs) == 1, f"{where} shows {len(pngs)} figures: one figure per cell"
        assert "hide-input" in meta.get("tags", []), f"{where}: a figure cell is tagged hide-input"
        fig = meta.get("mystnb", {}).get("figure", {})
        alt = meta.get("mystnb", {}).get("image", {}).get("alt", "")
        assert len(fig.get("caption", "")) >= 40, f"{where}: no caption (mystnb.figure.caption)"
        assert fig.get("name", "").startswith(f"fig-{nb_path.stem}-"), f"{where}: name fig-{nb_path.stem}-<slug>"
        assert len(alt) >= 30 and not re.search(r"[0-9a-f]{32}|\.png", alt), f"{where}: no meaningful alt text"
        names.append(fig["name"])
    assert len(names) == len(set(names)), f"{nb_path.name}: figure names repeat"


@pytest.mark.parametrize("nb_path", _notebooks(), ids=lambda p: p.stem)
def test_errata_items_carry_stable_ids(nb_path):
    if nb_path.stem in PENDING_CHAPTERS:
        pytest.skip(f"{nb_path.stem}: pending (PENDING_CHAPTERS)")
    text = "\n".join(_markdown(nb_path))
    boxes = re.findall(r":::\{admonition\} Errata and clarifications\n(.*?)\n:::", text, re.S)
    assert boxes, f"{nb_path.name} has no errata box"
    for box in boxes:
        items = re.findall(r"^(?:\*|\d+\.) (.*)", box, re.M)
        assert items, f"{nb_path.name}: an errata box without items"
        for item in items:
            assert re.match(r"\*\*E-(rw|wang|rkw|lect|adt|book)-[A-Za-z0-9.]+-[a-z0-9.-]+\*\*", item), \
                f"{nb_path.name}: errata item without an id E-<source>-<result>-<slug>: {item[:60]!r}"
    assert not re.search(r"\bE-(rw|adt|wang|rkw|lect)-\d+\b(?![.\w-])", "\n".join(_markdown(nb_path) + _code(nb_path))), \
        f"{nb_path.name} still uses a numbered errata id"


def test_the_book_speaks_only_of_itself():
    pages = [p for p in (ROOT / "chapters").rglob("*") if p.suffix in (".md", ".ipynb")]
    pages += [ROOT / "README.md", ROOT / "ARCHITECTURE.md"]
    pages += list((ROOT / "pdpkit").rglob("*.py"))  # the API pages are the docstrings
    for page in pages:
        text = page.read_text()
        for word in (r"\btraps?\b", r"\bthe issue\b", r"\btickets?\b"):
            assert not re.search(word, text, re.I), f"{page.relative_to(ROOT)} speaks of {word}"


def test_exercises_and_figures_are_numbered_per_chapter():
    """Numbered chapters: sphinx-exercise and numfig then number "Exercise 6.1", "Figure 6.2"."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    for part in toc["parts"]:
        files = [c["file"] for c in part["chapters"]]
        if any((ROOT / f"{f}.ipynb").exists() for f in files):
            assert part.get("numbered") is True, f"part {part['caption']!r} is not numbered"


# ------------------------------------------------------------------ the API reference
def _docstrings():
    import importlib.util

    spec = importlib.util.spec_from_file_location("_docstrings", ROOT / "tests" / "_docstrings.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_api_index_lists_every_module():
    index = (ROOT / "chapters" / "api.md").read_text()
    for name in _public_modules():
        assert f"{{doc}}`api/{name}`" in index, f"chapters/api.md does not list pdpkit.{name}"


@pytest.mark.parametrize("module", _docstrings().public_modules())
def test_every_public_parameter_is_described(module):
    missing, summaries = _docstrings().undocumented(module)
    assert not summaries, f"{module}: " + "; ".join(summaries)
    assert not missing, f"{module}: {len(missing)} undocumented parameters: " + ", ".join(missing[:12])


def test_the_parameter_check_finds_an_undocumented_parameter():
    """The test of the tester, on a function whose ``Parameters`` section misses one name."""
    d = _docstrings()

    def f(x, *, sigma, delta):
        """Do something.

        Parameters
        ----------
        x : array_like
            The data.
        sigma, other : float
            Noise.
        """

    assert d._section(f.__doc__, ("Parameters",)) == ["x", "sigma", "other"]
    assert [p for p in d._params(f) if p not in d._section(f.__doc__, ("Parameters",))] == ["delta"]
    assert d.ABBREVIATION.search("Smallest σ such that it holds (tight, eq.")
    assert d.ABBREVIATION.search("Recursion for the smallest eigenvalue of a q.s.c.")
    assert not d.ABBREVIATION.search("Recursion for the smallest eigenvalue of a GLM.")


def test_sources_and_pages_hold_no_control_characters():
    # A backslash lost on the way into a file (a Python string's "\text" or "\b") leaves a tab or
    # a control character where LaTeX was meant: the formula then renders wrong, silently.
    bad = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]|\t(?=ext|imes|heta|au)")
    pages = [p for p in (ROOT / "chapters").rglob("*") if p.suffix in (".md", ".ipynb", ".yml")]
    pages += list((ROOT / "pdpkit").rglob("*.py")) + list((ROOT / "tests").rglob("*.py"))
    def text(p):
        if p.suffix == ".ipynb":  # JSON escapes a tab: read the cells' sources
            return "".join("".join(c["source"]) for c in json.loads(p.read_text(encoding="utf-8"))["cells"])
        return p.read_text(encoding="utf-8")

    found = [str(p.relative_to(ROOT)) for p in pages if bad.search(text(p))]
    assert found == []
    assert bad.search(":math:`|\text{grid}|`")  # the tester's control: the lost backslash is seen
