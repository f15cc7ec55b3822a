"""Write the book's generated pages from the chapters, ``_toc.yml`` and the registry.

Usage: ``python tools/book_pages.py`` (writes) or ``python tools/book_pages.py --check``
(exit 1 when a page is stale; ``tests/test_book.py`` runs the same comparison).

* ``chapters/results.md`` — *Results at a glance*: every numbered result of the five
  sources and this book's own, from ``chapters/results_registry.yml``, with the chapters
  found from the ``prf`` labels and the errata ids found in the chapters' boxes. One MyST list-table per
  source (class ``pdpkit-results``): each name links to its statement (``{prf:ref}``, else the errata item or
  the chapter, the row saying that the book has no block for it), each errata id to its item
  (``{pdpkit:erratum}``); ``_ext/pdpkit_results.py`` gives the rows their anchors (:func:`row_id`).
* the chapter table of ``chapters/intro.md`` (between ``<!-- chapters:start -->`` and
  ``<!-- chapters:end -->``), in the order of ``_toc.yml``;
* the "How to cite" block of ``chapters/intro.md`` (between ``<!-- cite:start -->`` and
  ``<!-- cite:end -->``), with the package's version.
"""

from __future__ import annotations

import json
import pathlib
import re
import sys
from collections import Counter

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
REGISTRY = ROOT / "chapters" / "results_registry.yml"
RESULTS_PAGE = ROOT / "chapters" / "results.md"
INTRO = ROOT / "chapters" / "intro.md"
STATUSES = ("as printed", "sharpened", "clarified", "corrected", "rebuilt", "partly reproduced", "new",
            "not covered")
PRF = re.compile(r"(?::::+|```+)\{prf:(\w+)\}([^\n]*)\n((?::[\w-]+:[^\n]*\n)*)")
ERRATUM = re.compile(r"\*\*(E-(?:rw|wang|rkw|lect|adt|book)-[A-Za-z0-9.]+-[a-z0-9.-]+)\*\*")

# chapter -> (modules, what it does); the order and the set of chapters come from _toc.yml
CHAPTER_SUMMARY = {
    "using_pdpkit": (["schema", "preprocessing", "accountant", "estimators", "model_selection", "cli", "release"],
                     "a private workflow: public schema, accounted preprocessing, private selection, multiclass, "
                     "a privacy report and a release with one total guarantee"),
    "larger_than_memory": (["objpert", "report"],
                           "fit and report on a memmap and a Dask array, row block by row block, no copy of X"),
    "per_instance_dp": (["gaussian", "audit"],
                        "DP, pDP, ex-post pDP; the Gaussian mechanism; moments of pDP; audits"),
    "output_vs_objective": (["losses", "output_perturbation", "objpert"],
                            "GLM losses, output vs objective perturbation, an exact ObjPert solver"),
    "objpert_ex_post": (["objpert"], "the ex-post pDP of ObjPert, checked against its exact output density"),
    "goe_analyze_gauss": (["goe", "analyze_gauss"],
                          "Analyze-Gauss with GOE noise; the exact law of the GOE's largest eigenvalue"),
    "objpert_accounting": (["accounting"],
                           "ObjPert's tight privacy profile and RDP, a dominating pair, composition, calibration"),
    "amp": (["amp"], "approximate minima perturbation with gradient clipping, against honestly tuned DP-SGD"),
    "privacy_report": (["report"],
                       "a publishable per-person privacy report: private Hessian, gradient and eigenvalue, "
                       "bounds with their coverage"),
    "ops_adaops": (["ops"], "one-posterior sampling for linear regression: exact pDP, Thm 4.1 corrected, AdaOPS"),
    "self_concordant_stability": (["stability"],
                                  "how far a q.s.c. GLM's minimizer and Hessian eigenvalues move between "
                                  "neighbours; private eigenvalue bounds"),
    "single_parameter": (["single"],
                         "one parameter or one linear functional with noise at the local sensitivity"),
    "larger_than_memory": ([], "fitting and reporting on data that do not fit in memory"),
}


def toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(entries):
        for entry in entries:
            files.append(entry["file"])
            walk(entry.get("sections", []))

    for part in toc.get("parts", []):
        walk(part.get("chapters", []))
    return files


def chapter_notebooks() -> list[pathlib.Path]:
    return sorted((ROOT / "chapters").glob("*.ipynb"))


def _markdown(nb_path: pathlib.Path) -> str:
    nb = json.loads(nb_path.read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def _title(nb_path: pathlib.Path) -> str:
    for line in _markdown(nb_path).splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return nb_path.stem


def prf_labels() -> dict[str, tuple[str, str, str]]:
    """Every labelled prf block (proofs excluded): label -> (chapter stem, kind, title)."""
    out = {}
    for nb in chapter_notebooks():
        for m in PRF.finditer(_markdown(nb)):
            kind, title, opts = m.groups()
            lab = re.search(r":label: (\S+)", opts)
            if kind != "proof" and lab:
                out[lab.group(1)] = (nb.stem, kind, title.strip())
    return out


def errata_ids() -> dict[str, list[str]]:
    """Every errata id in a chapter's errata box: id -> chapter stems."""
    out: dict[str, list[str]] = {}
    for nb in chapter_notebooks():
        for eid in ERRATUM.findall(_markdown(nb)):
            out.setdefault(eid, [])
            if nb.stem not in out[eid]:
                out[eid].append(nb.stem)
    return out


def load_registry() -> dict:
    return yaml.safe_load(REGISTRY.read_text())


def registry_problems(reg: dict | None = None) -> list[str]:
    """What is missing from the registry or wrong in it (empty when it is complete)."""
    reg = reg or load_registry()
    labels, errata = prf_labels(), errata_ids()
    problems = []
    listed_labels = {lab for r in reg["results"] for lab in r.get("prf") or []}
    listed_errata = {e for r in reg["results"] for e in r.get("errata") or []}
    for lab in sorted(set(labels) - listed_labels):
        problems.append(f"prf block {lab} ({labels[lab][0]}) is not in the registry")
    for lab in sorted(listed_labels - set(labels)):
        problems.append(f"the registry names a prf label {lab} that no chapter has")
    for eid in sorted(set(errata) - listed_errata):
        problems.append(f"erratum {eid} ({', '.join(errata[eid])}) is not in the registry")
    for eid in sorted(listed_errata - set(errata)):
        problems.append(f"the registry names an erratum {eid} that no chapter has")
    for r in reg["results"]:
        if r["src"] not in reg["sources"]:
            problems.append(f"{r['num']}: unknown source {r['src']}")
        if r["status"] not in STATUSES:
            problems.append(f"{r['src']} {r['num']}: status {r['status']!r} is not one of {STATUSES}")
        if r["status"] != "not covered" and not r.get("evidence"):
            problems.append(f"{r['src']} {r['num']}: no evidence")
        if r["status"] == "corrected" and not r.get("errata"):
            problems.append(f"{r['src']} {r['num']}: corrected without an erratum id")
        if r.get("reconstructed") not in (None, True, False) or not isinstance(r.get("note", ""), str):
            problems.append(f"{r['src']} {r['num']}: reconstructed must be true/false and note a string")
    seen = Counter((r["src"], r["num"]) for r in reg["results"])
    problems += [f"{k[0]} {k[1]} is listed twice" for k, v in seen.items() if v > 1]
    anchors = Counter(row_id(r["src"], r["num"]) for r in reg["results"])
    problems += [f"two rows would have the anchor {a}" for a, v in anchors.items() if v > 1 and a not in
                 {row_id(*k) for k, n in seen.items() if n > 1}]
    return problems


def _fn_link(fn) -> str:
    if not fn:
        return ""
    names = fn if isinstance(fn, list) else [fn]
    return ", ".join(f"{{py:obj}}`~{n}`" for n in names)


def row_id(src: str, num: str) -> str:
    """The anchor of a row of *Results at a glance*: ``rw-thm-6`` for Redberg & Wang 2021, Thm 6.

    ``_ext/pdpkit_results.py`` gives each row this id (the same rule, applied to the row's first cell).
    """
    return src + "-" + re.sub(r"[^a-z0-9]+", "-", num.lower()).strip("-")


def _fns(r) -> list[str]:
    fn = r.get("fn") or []
    return fn if isinstance(fn, list) else [fn]


def row_chapters(r: dict, labels: dict, errata: dict) -> list[str]:
    """The chapters that treat a result: those of its prf blocks and errata items, else the chapter whose
    figures its experiment function computes (``pdpkit.experiments.<chapter>``)."""
    chapters: list[str] = []
    for lab in r.get("prf") or []:
        if labels[lab][0] not in chapters:
            chapters.append(labels[lab][0])
    for eid in r.get("errata") or []:
        chapters += [s for s in errata.get(eid, []) if s not in chapters]
    if not chapters:
        for name in _fns(r):
            parts = name.split(".")
            if parts[:2] == ["pdpkit", "experiments"] and (ROOT / "chapters" / f"{parts[2]}.ipynb").exists():
                chapters += [parts[2]] if parts[2] not in chapters else []
    return chapters


def name_cell(r: dict, chapters: list[str]) -> str:
    """The result's name, linked to its statement, with the row's marks (see ``_marks``)."""
    return _name_link(r, chapters) + _marks(r)


def _marks(r: dict) -> str:
    """A mark on a result reconstructed from a source's appendix (``reconstructed: true``) and the
    registry's ``note``."""
    marks = ""
    if r.get("reconstructed"):
        marks += " {pdpkit:reconstructed}`reconstructed from the appendix`"
    if r.get("note"):
        marks += f" {{pdpkit:nostatement}}`{r['note']}`"
    return marks


def _name_link(r: dict, chapters: list[str]) -> str:
    """The result's name, linked to its statement: its first prf block; without one, the erratum item that
    treats it, else its chapter; the row says so when the book has no statement block for it."""
    what = r["what"]
    if r.get("prf"):
        return f"{{prf:ref}}`{what} <{r['prf'][0]}>`"
    if r.get("errata"):
        return (f"{{pdpkit:erratum}}`{what} <{r['errata'][0]}>` "
                "{pdpkit:nostatement}`no statement block: its erratum treats it`")
    if chapters:
        return f"{{doc}}`{what} <{chapters[0]}>` {{pdpkit:nostatement}}`no statement block: its chapter treats it`"
    return f"{what} {{pdpkit:nostatement}}`no statement block in this book`"


RESULT_COLUMNS = ("result", "what", "status", "evidence", "errata", "chapter", "pdpkit")


def _item(text: str) -> str:
    text = (text or "").replace("\n", " ").strip()
    return f"  - {text}" if text else "  -"


def _list_row(cells) -> list[str]:
    """One row of a MyST list-table: ``* - first`` then ``  - next`` for each cell (empty cells stay empty)."""
    lines = [_item(c) for c in cells]
    return ["* " + lines[0][2:]] + lines[1:]


def results_page() -> str:
    reg = load_registry()
    labels, errata = prf_labels(), errata_ids()
    counts = Counter(r["status"] for r in reg["results"])
    example = row_id("rw", "Thm 6")
    out = [
        "# Results at a glance",
        "",
        "Every numbered result of the five sources, and this book's own, with its status in the",
        "book: **as printed** (stated and verified as the source has it), **sharpened** (valid",
        "as printed; the book proves a tighter form, and the evidence gives both values),",
        "**clarified** (ambiguous or under-specified as printed; the chapter names the ambiguity",
        "and fixes a reading, under which the result holds), **corrected** (false as printed:",
        "the evidence gives a counterexample, and the chapter states and verifies the corrected",
        "result), **rebuilt** (reconstructed from the source's proof or appendix), **partly",
        "reproduced** (an experiment of which the book reproduces only part), **new** (this",
        "book's own), or **not covered**. *Evidence* is the number that decides the status; the errata",
        "ids (`E-<source>-<result>-<slug>`) are those of the chapters' *Errata and",
        "clarifications* boxes, where the full argument is.",
        "",
        "A result's name leads to its statement in the book (its theorem, lemma, definition or",
        "algorithm block); an erratum id leads to the item of the errata box that argues it, which",
        "has the id as its anchor (cite an erratum as `E-rw-6-signs`, link it as",
        "`objpert_ex_post.html#E-rw-6-signs`). Each row has an anchor of its own, the source and",
        f"the number: `results.html#{example}`; its number links to it. On a narrow screen a tap on",
        "a row shows its evidence, errata, chapter and functions; the lists can be filtered by",
        "source and by status.",
        "",
        "Only the appendix of Redberg & Wang 2021 is a source, not its main text: the results",
        "of that paper that only its main text states are listed as its appendix states or uses",
        "them, and marked {pdpkit:reconstructed}`reconstructed from the appendix`.",
        "",
        "This page is generated by `tools/book_pages.py` from `chapters/results_registry.yml`",
        "and the chapters' theorem blocks; the tests fail when a theorem block or an erratum",
        "is missing from it.",
        "",
        "| status | results |",
        "|---|---|",
    ]
    out += [f"| {s} | {counts.get(s, 0)} |" for s in STATUSES]
    out += [f"| **total** | **{sum(counts.values())}** |", ""]
    for src, meta in reg["sources"].items():
        rows = [r for r in reg["results"] if r["src"] == src]
        if not rows:
            continue
        cite = f" {{cite}}`{meta['cite']}`" if meta.get("cite") else ""
        out += [f"## {meta['name']}", ""]
        if cite:
            out += [f"Source:{cite}." + (f" {meta['note']}." if meta.get("note") else ""), ""]
        out += ["````{list-table}", ":header-rows: 1", ":widths: auto", f":class: pdpkit-results pdpkit-src-{src}", ""]
        out += _list_row(RESULT_COLUMNS)
        for r in rows:
            chapters = row_chapters(r, labels, errata)
            cells = [
                r["num"],
                name_cell(r, chapters),
                r["status"],
                r.get("evidence", ""),
                ", ".join(f"{{pdpkit:erratum}}`{e}`" for e in r.get("errata") or []),
                ", ".join(f"{{doc}}`{s}`" for s in chapters),
                _fn_link(r.get("fn")),
            ]
            out += _list_row(cells)
        out += ["````", ""]
    return "\n".join(out).rstrip() + "\n"


def chapter_table() -> str:
    rows = ["| chapter | module | what it does |", "|---|---|---|"]
    for f in toc_files():
        if not f.startswith("chapters/") or f.count("/") != 1:
            continue
        stem = f.split("/")[1]
        nb = ROOT / f"{f}.ipynb"
        if not nb.exists():
            continue
        if stem not in CHAPTER_SUMMARY:
            raise SystemExit(f"tools/book_pages.py: add {stem} to CHAPTER_SUMMARY")
        modules, what = CHAPTER_SUMMARY[stem]
        mods = ", ".join(f"{{doc}}`{m} <api/{m}>`" for m in modules) or "—"
        rows.append(f"| {{doc}}`{stem}` | {mods} | {what} |")
    return "\n".join(rows)


def cite_block() -> str:
    sys.path.insert(0, str(ROOT))
    import pdpkit

    version = pdpkit.__version__
    return "\n".join([
        f"This book documents **pdpkit {version}**. Cite the book and the package as",
        "",
        "```bibtex",
        "@misc{pdpkit,",
        "  author       = {{The pdpkit authors}},",
        "  title        = {pdpkit: per-instance privacy for objective perturbation},",
        f"  note         = {{Jupyter Book and Python package, version {version}}},",
        "  year         = {2026}",
        "}",
        "```",
        "",
        "and the source of each result you use by its document and number (the *Results at",
        "a glance* page lists them); an erratum by its id, e.g. `E-rkw-3.1-sign`.",
    ])


def _replace_block(text: str, name: str, body: str) -> str:
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    if start not in text or end not in text:
        raise SystemExit(f"chapters/intro.md lacks the {start} ... {end} markers")
    i, j = text.index(start) + len(start), text.index(end)
    return text[:i] + "\n" + body + "\n" + text[j:]


def generated() -> dict[pathlib.Path, str]:
    intro = INTRO.read_text()
    intro = _replace_block(intro, "chapters", chapter_table())
    intro = _replace_block(intro, "cite", cite_block())
    return {RESULTS_PAGE: results_page(), INTRO: intro}


def main(argv: list[str]) -> int:
    problems = registry_problems()
    if problems:
        print("\n".join(["chapters/results_registry.yml is incomplete:"] + problems))
        return 1
    stale = []
    for path, text in generated().items():
        if path.exists() and path.read_text() == text:
            continue
        stale.append(path.relative_to(ROOT).as_posix())
        if "--check" not in argv:
            path.write_text(text)
    if "--check" in argv and stale:
        print("stale (run python tools/book_pages.py): " + ", ".join(stale))
        return 1
    print("wrote " + ", ".join(stale) if stale else "generated pages are up to date")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
