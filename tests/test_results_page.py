"""*Results at a glance*: every row linked to its statement, every erratum id an anchor, math in MyST markup.

The checks read the generated page (``chapters/results.md``) and the chapters' markdown as the book's parser sees
them, not through ``tools/book_pages.py``'s own helpers:

* every row of the page's tables links its name to its statement — the ``{prf:ref}`` of the registry's first prf
  label, a label that a chapter's prf block declares (read from the notebooks by a parser of this file) — or, for a
  result with no block, to the errata item that treats it or to its chapter, saying so on the row; every
  ``{doc}`` names a chapter, every ``{pdpkit:erratum}`` an anchor;
* every errata id of the registry is the first bold word of an item of a chapter's list, parsed with MyST's
  docutils parser, and ``_ext/pdpkit_results.py``'s :func:`erratum_items` finds it there (that item gets the id
  as its HTML anchor);
* a small Sphinx build with the extension: the item's anchor, its ``¶`` link, the row anchors and the links of
  the results table are in the HTML; a reference to an id that no page has is a warning;
* the registry's evidence holds no raw TeX outside ``$...$``.

Each check is also run on something made wrong on purpose (a row linked to a label no chapter has, a name left
unlinked, an id that is not an item's first bold word, a dangling erratum reference, raw TeX) and must reject it.
"""

from __future__ import annotations

import copy
import importlib.util
import io
import json
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
MYST_EXTENSIONS = ["dollarmath", "colon_fence", "amsmath", "deflist", "substitution"]


def _load(name: str, path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


pages = _load("book_pages_for_results", ROOT / "tools" / "book_pages.py")
ext = _load("pdpkit_results_ext", ROOT / "_ext" / "pdpkit_results.py")


def _markdown_cells(nb: pathlib.Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "markdown"]


def _declared_labels() -> dict[str, str]:
    """label -> chapter, for every prf block (not proofs) of the notebooks: a fence line, then its options."""
    out = {}
    for nb in sorted(CHAPTERS.glob("*.ipynb")):
        lines = "\n".join(_markdown_cells(nb)).splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"\s*(`{3,}|:{3,})\{prf:(\w+)\}", line)
            if not m or m.group(2) == "proof":
                continue
            for opt in lines[i + 1:]:
                if not re.match(r"\s*:\w[\w-]*:", opt):
                    break
                lab = re.match(r"\s*:label:\s*(\S+)", opt)
                if lab:
                    out[lab.group(1)] = nb.stem
    return out


# ------------------------------------------------------------------ the chapters as MyST's docutils parser reads them
def _generic_directives(text: str) -> None:
    """Register every directive a chapter uses that docutils lacks (prf:*, exercise, ...) as a plain container whose
    content is parsed, so that lists inside them are lists (as in the book, where sphinx-proof parses them)."""
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives

    class AnyOptions(dict):
        def __contains__(self, key):
            return True

        def __getitem__(self, key):
            return directives.unchanged

    class Container(Directive):
        has_content = True
        optional_arguments = 1
        final_argument_whitespace = True
        option_spec = AnyOptions()

        def run(self):
            node = nodes.container()
            self.state.nested_parse(self.content, self.content_offset, node)
            return [node]

    for name in set(re.findall(r"^\s*(?:`{3,}|:{3,})\{([\w:-]+)\}", text, re.M)):
        if name not in ("admonition", "math", "code-cell", "list-table", "note", "warning"):
            directives.register_directive(name, Container)


def _parse(text: str):
    from docutils.core import publish_doctree
    from myst_parser.parsers.docutils_ import Parser

    _generic_directives(text)
    return publish_doctree(text, parser=Parser(), settings_overrides={
        "myst_enable_extensions": MYST_EXTENSIONS, "report_level": 5, "halt_level": 5, "warning_stream": io.StringIO()})


def _anchors_in(cells: list[str]) -> list[str]:
    ids = []
    for cell in cells:
        if "**E-" in cell:
            ids += [eid for eid, _ in ext.erratum_items(_parse(cell))]
    return ids


@pytest.fixture(scope="module")
def chapter_anchors() -> dict[str, list[str]]:
    """erratum id -> the chapters where it is an item's anchor (each chapter's markdown cells, parsed)."""
    out: dict[str, list[str]] = {}
    for nb in sorted(CHAPTERS.glob("*.ipynb")):
        ids = _anchors_in(_markdown_cells(nb))
        assert len(ids) == len(set(ids)), f"{nb.stem}: an erratum id leads two items: {sorted(ids)}"
        for eid in ids:
            out.setdefault(eid, []).append(nb.stem)
    return out


def test_every_erratum_of_the_registry_is_an_anchor_in_a_chapter(chapter_anchors):
    reg = pages.load_registry()
    listed = {e for r in reg["results"] for e in r.get("errata") or []}
    missing = sorted(listed - set(chapter_anchors))
    assert not missing, f"errata ids that are the first bold word of no chapter's list item: {missing}"
    # and the generator's chapters for an id are those where it is an anchor
    for eid, stems in pages.errata_ids().items():
        assert set(chapter_anchors.get(eid, [])) <= set(stems), (eid, stems, chapter_anchors.get(eid))


def test_an_id_that_does_not_open_its_item_is_no_anchor():
    good = "* **E-rw-6-signs** — **Signs.** Verified.\n1. **E-rw-8-constant** — the constant.\n"
    assert _anchors_in([good]) == ["E-rw-6-signs", "E-rw-8-constant"]
    wrong = [
        "* The signs, see **E-rw-6-signs**.\n",  # not the first word
        "**E-rw-6-signs** — a paragraph, not a list item.\n",
        "* *E-rw-6-signs* — emphasis, not bold.\n",
        "* **E-rw-6** — not an id of the form E-<source>-<result>-<slug>.\n",
    ]
    for text in wrong:
        assert _anchors_in([text]) == [], text


# ------------------------------------------------------------------ the generated page
def _page_rows(text: str) -> list[dict]:
    """The rows of the page's list-tables: (source class, cells), header rows left out."""
    rows = []
    for m in re.finditer(r"^````\{list-table\}\n((?:.*\n)*?)^````$", text, re.M):
        body = m.group(1)
        src = re.search(r":class:.*\bpdpkit-src-(\w+)", body).group(1)
        for block in re.split(r"^\* ", body, flags=re.M)[1:]:
            cells = [c.strip() for c in re.split(r"^ {0,2}- ?", "  " + block, flags=re.M)[1:]]
            rows.append({"src": src, "cells": cells})
    return [r for r in rows if r["cells"][0] != "result"]


def row_link_problems(text: str, reg: dict, labels: dict[str, str], anchors: dict[str, list[str]]) -> list[str]:
    """What is unlinked or linked wrong on the page ``text`` for the registry ``reg``."""
    problems = []
    rows = _page_rows(text)
    if len(rows) != len(reg["results"]):
        problems.append(f"{len(rows)} rows on the page, {len(reg['results'])} results in the registry")
    stems = {p.stem for p in CHAPTERS.glob("*.ipynb")}
    for r, row in zip(reg["results"], rows):
        where = f"{r['src']} {r['num']}"
        cells = row["cells"]
        if len(cells) != 7:
            problems.append(f"{where}: {len(cells)} cells")
            continue
        if (row["src"], cells[0]) != (r["src"], r["num"]):
            problems.append(f"{where}: the row says {row['src']} {cells[0]}")
        name = cells[1]
        if r.get("note"):
            note = f" {{pdpkit:nostatement}}`{r['note']}`"
            if not name.endswith(note):
                problems.append(f"{where}: the note {r['note']!r} is not shown")
            name = name.removesuffix(note)
        mark = " {pdpkit:reconstructed}`reconstructed from the appendix`"
        if name.endswith(mark) != bool(r.get("reconstructed")):
            problems.append(f"{where}: reconstructed is {bool(r.get('reconstructed'))}, the page's mark says otherwise")
        name = name.removesuffix(mark)
        prf = re.fullmatch(r"\{prf:ref\}`(.+) <([^<>`]+)>`", name)
        err = re.match(r"\{pdpkit:erratum\}`(.+) <([^<>`]+)>` \{pdpkit:nostatement\}`[^`]+`$", name)
        doc = re.match(r"\{doc\}`(.+) <(\w+)>` \{pdpkit:nostatement\}`[^`]+`$", name)
        bare = re.fullmatch(r"([^`{}]+) \{pdpkit:nostatement\}`[^`]*no statement block[^`]*`", name)
        if r.get("prf"):
            if not prf or prf.group(2) != r["prf"][0]:
                problems.append(f"{where}: the name does not link to its block {r['prf'][0]}: {name}")
            elif prf.group(2) not in labels:
                problems.append(f"{where}: links to {prf.group(2)}, a label no chapter declares")
        elif r.get("errata"):
            if not err or err.group(2) not in anchors:
                problems.append(f"{where}: the name does not link to an erratum item: {name}")
        elif doc:
            if doc.group(2) not in stems:
                problems.append(f"{where}: links to {doc.group(2)}, no chapter")
        elif not bare:
            problems.append(f"{where}: neither linked nor marked as without a statement block: {name}")
        for eid in re.findall(r"\{pdpkit:erratum\}`(?:[^`<]*<)?([^`<>]+)>?`", cells[4] + " " + name):
            if eid not in anchors:
                problems.append(f"{where}: erratum {eid} is no chapter's anchor")
        if [e for e in re.findall(r"\{pdpkit:erratum\}`([^`]+)`", cells[4])] != list(r.get("errata") or []):
            problems.append(f"{where}: errata cell {cells[4]!r} is not the registry's {r.get('errata')}")
        for stem in re.findall(r"\{doc\}`(\w+)`", cells[5]):
            if stem not in stems:
                problems.append(f"{where}: chapter {stem} does not exist")
        for lab in r.get("prf") or []:
            if labels.get(lab) not in re.findall(r"\{doc\}`(\w+)`", cells[5]):
                problems.append(f"{where}: the chapter of {lab} is not in the chapter cell")
    ids = [pages.row_id(row["src"], row["cells"][0]) for row in rows]
    problems += [f"two rows have the anchor {i}" for i in sorted({i for i in ids if ids.count(i) > 1})]
    return problems


@pytest.fixture(scope="module")
def labels() -> dict[str, str]:
    return _declared_labels()


def test_every_row_links_to_its_statement(labels, chapter_anchors):
    text = (CHAPTERS / "results.md").read_text()
    assert text == pages.results_page(), "chapters/results.md is stale: run python tools/book_pages.py"
    reg = pages.load_registry()
    assert not row_link_problems(text, reg, labels, chapter_anchors)
    rows = _page_rows(text)
    with_block = sum(1 for r in reg["results"] if r.get("prf"))
    assert with_block >= 120 and len(rows) == len(reg["results"])
    # every row has a link in its name cell, or says plainly that the book has no block for it
    for row in rows:
        assert "{prf:ref}" in row["cells"][1] or "no statement block" in row["cells"][1], row


def test_the_row_check_rejects_wrong_pages(labels, chapter_anchors):
    reg = pages.load_registry()
    text = pages.results_page()
    i = next(k for k, r in enumerate(reg["results"]) if r["num"] == "Thm 6" and r["src"] == "rw")
    # a name linked to another block
    wrong = text.replace("{prf:ref}`Ex-post pDP of ObjPert <thm-rw-6>`", "{prf:ref}`Ex-post pDP of ObjPert <cor-rw-7>`")
    assert any("rw Thm 6" in p for p in row_link_problems(wrong, reg, labels, chapter_anchors))
    # a name left unlinked
    wrong = text.replace("{prf:ref}`Ex-post pDP of ObjPert <thm-rw-6>`", "Ex-post pDP of ObjPert")
    assert any("rw Thm 6" in p for p in row_link_problems(wrong, reg, labels, chapter_anchors))
    # a registry whose label no chapter declares: the generator links it, the check refuses it
    bad = copy.deepcopy(reg)
    bad["results"][i]["prf"] = ["thm-rw-66"]
    assert any("thm-rw-66" in p for p in row_link_problems(text.replace("<thm-rw-6>", "<thm-rw-66>"), bad, labels,
                                                               chapter_anchors))
    # an erratum reference to an id that no chapter anchors
    wrong = text.replace("{pdpkit:erratum}`E-rw-6-signs`", "{pdpkit:erratum}`E-rw-6-sign`", 1)
    assert any("E-rw-6-sign " in p + " " for p in row_link_problems(wrong, reg, labels, chapter_anchors))
    # a row without a link and without the note
    j = next(k for k, r in enumerate(reg["results"]) if not r.get("prf") and not r.get("errata"))
    r = reg["results"][j]
    row = next(x for x in _page_rows(text) if (x["src"], x["cells"][0]) == (r["src"], r["num"]))
    wrong = text.replace(row["cells"][1], r["what"], 1)
    assert any(f"{r['src']} {r['num']}" in p for p in row_link_problems(wrong, reg, labels, chapter_anchors))


def test_row_anchors_are_unique_and_the_extension_uses_the_generators_rule():
    reg = pages.load_registry()
    ids = [pages.row_id(r["src"], r["num"]) for r in reg["results"]]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z]+-[a-z0-9]+(-[a-z0-9]+)*", i) for i in ids)
    assert ids == [ext.row_id(r["src"], r["num"]) for r in reg["results"]]
    assert pages.row_id("rw", "Thm 6") == "rw-thm-6" and pages.row_id("adt", "(9), (10), (C1)") == "adt-9-10-c1"
    assert pages.row_id("rw", "App. B.1") != pages.row_id("rw", "App. B.2")


# ------------------------------------------------------------------ evidence markup
TEX_OUTSIDE_MATH = re.compile(r"\\|\^|\{|\}|(?<=[A-Za-zα-ωΑ-Ω])_(?=[A-Za-zα-ω0-9])")


def raw_tex(text: str) -> list[str]:
    """TeX left outside ``$...$`` and code spans."""
    if text.count("$") % 2:
        return ["unbalanced $"]
    outside = re.sub(r"`[^`]*`", "", re.sub(r"\$[^$]+\$", "", text))
    return TEX_OUTSIDE_MATH.findall(outside)


def test_the_registrys_evidence_has_no_raw_tex():
    reg = pages.load_registry()
    bad = {f"{r['src']} {r['num']}": raw_tex(r.get("evidence") or "") for r in reg["results"]}
    assert not {k: v for k, v in bad.items() if v}
    assert sum("$" in (r.get("evidence") or "") for r in reg["results"]) >= 15
    for wrong in ["exponent e^{-cd t^{3/2}}", "hypothesis E e^{2ε} ≤ 1", "ρ_max undefined", "public $n_{\\max}",
                  "$a$ and \\lambda"]:
        assert raw_tex(wrong), wrong
    assert not raw_tex("exponent $e^{-cd\\,t^{3/2}}$ through `dp_accounting`; 1e-5")


# ------------------------------------------------------------------ the extension in a small Sphinx build
CONF = """
import sys
sys.path.insert(0, {ext!r})
extensions = ["myst_parser", "pdpkit_results"]
myst_enable_extensions = ["colon_fence", "dollarmath"]
html_theme = "basic"
"""
INDEX = "# Book\n\n```{toctree}\nchap\nresults\n```\n"
CHAP = """# A chapter

:::{admonition} Errata and clarifications
:class: warning

* **E-rw-6-signs** — **Signs.** Verified; see also **E-rw-8-constant**.
1. **E-rw-8-constant** — the constant, $\\log 2$.
:::
"""
RESULTS = """# Results

````{list-table}
:header-rows: 1
:class: pdpkit-results pdpkit-src-rw

* - result
  - what
  - status
  - evidence
  - errata
  - chapter
  - pdpkit
* - Thm 6
  - {pdpkit:erratum}`Ex-post pDP <E-rw-6-signs>` {pdpkit:nostatement}`no statement block: its erratum treats it`
  - as printed
  - $e^{-t}$
  - {pdpkit:erratum}`E-rw-6-signs`, {pdpkit:erratum}`E-rw-8-constant`
  - {doc}`chap`
  -
````
"""


def _build(tmp_path: pathlib.Path, results: str) -> tuple[pathlib.Path, str]:
    pytest.importorskip("myst_parser")
    from sphinx.application import Sphinx

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(CONF.format(ext=str(ROOT / "_ext")))
    (src / "index.md").write_text(INDEX)
    (src / "chap.md").write_text(CHAP)
    (src / "results.md").write_text(results)
    (src / "_static").mkdir()
    warnings = io.StringIO()
    app = Sphinx(str(src), str(src), str(tmp_path / "html"), str(tmp_path / "doctrees"), "html",
                 status=io.StringIO(), warning=warnings, freshenv=True)
    app.nitpicky = True
    app.build()
    return tmp_path / "html", warnings.getvalue()


def test_the_extension_anchors_errata_and_rows(tmp_path):
    out, warnings = _build(tmp_path, RESULTS)
    assert not warnings.strip(), warnings
    chap = (out / "chap.html").read_text()
    assert re.search(r'<li class="[^"]*pdpkit-erratum[^"]*" id="E-rw-6-signs">', chap), chap
    assert re.search(r'<li class="[^"]*pdpkit-erratum[^"]*" id="E-rw-8-constant">', chap)
    assert 'href="#E-rw-6-signs" title="Link to this erratum">¶</a>' in chap
    assert 'id="E-rw-8-constant"' in chap and chap.count('id="E-rw-8-constant"') == 1  # not the second mention
    page = (out / "results.html").read_text()
    assert re.search(r'<tr class="[^"]*pdpkit-result[^"]*pdpkit-status-as-printed[^"]*" id="rw-thm-6">', page), page
    assert page.count('href="chap.html#E-rw-6-signs"') == 2 and 'href="chap.html#E-rw-8-constant"' in page
    assert re.search(r'<a class="[^"]*pdpkit-rowlink[^"]*" href="#rw-thm-6"', page)
    for col in ext.COLUMNS:
        assert f"pdpkit-col-{col}" in page
    assert 'class="pdpkit-nostatement"' in page
    assert "pdpkit_results.css" in page and "pdpkit_results.js" in page


def test_a_dangling_erratum_reference_is_a_warning(tmp_path):
    dangling = RESULTS.replace("{pdpkit:erratum}`E-rw-8-constant`", "{pdpkit:erratum}`E-rw-8-const`")
    _, warnings = _build(tmp_path, dangling)
    assert "E-rw-8-const" in warnings and "errata box" in warnings, warnings


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
