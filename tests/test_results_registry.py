"""The results registry (``chapters/results_registry.yml``) against the chapters.

* every status is one of ``tools/book_pages.py``'s ``STATUSES``;
* a ``corrected`` entry names an erratum, and for one of its errata the chapter holding that
  erratum has a code cell with a line ``# counterexample: E-<id>`` and an ``assert``
  (the cell computes the printed form at specific numbers and asserts that it fails there);
* every source figure a chapter reproduces ("R&W Fig 2", "RKW Figs 1 and 4",
  "Wang 2019, Fig. 1", "Fig 3 of ADT", ...) is listed by the registry: a registry entry of that
  source names the figure in its number or its title ("Fig 2", "App. B.1" with
  "(Figs 4–5)").

Each check is a function of the registry and the chapters' cells, and each is run on a
deliberately wrong variant that it must reject.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("book_pages", ROOT / "tools" / "book_pages.py")
book_pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(book_pages)

# how the chapters name each source next to a figure number
SOURCE_NAMES = {
    "rw": r"R&W|Redberg\s*&\s*Wang(?:\s+2021)?",
    "rkw": r"RKW|Redberg,\s*Koskela\s*&\s*Wang(?:\s+2023)?",
    "wang": r"(?<!&\s)Wang(?:'s|\s+2019)?",
    "adt": r"ADT|Asi,\s*Duchi\s*&\s*Talwar(?:\s+2025)?",
    "lect": r"(?:the\s+)?lecture\s+notes",
}
# a list of figure numbers: "2", "4 and 5", "4–5", "1, 3 and 4" (not the "1" of "1,000")
_NUM = r"\d+(?![\d,.]\d)"
_NUMS = rf"{_NUM}(?:\s*(?:–|-|,\s*and|,|and)\s*{_NUM})*"
_FIG = rf"Fig(?:ure)?s?\.?\s*(?P<nums>{_NUMS})"


def _expand(nums: str) -> set[int]:
    out: set[int] = set()
    for part in re.split(r"\s*(?:,\s*and|,|and)\s*", nums.strip()):
        if not part:
            continue
        bounds = re.split(r"\s*[–-]\s*", part)
        lo, hi = int(bounds[0]), int(bounds[-1])
        out.update(range(lo, hi + 1))
    return out


def figure_citations(texts: dict[str, list[str]]) -> dict[tuple[str, int], list[str]]:
    """(source, figure number) -> the chapters whose cells cite it, from each chapter's cell texts."""
    found: dict[tuple[str, int], list[str]] = {}
    for chapter, cells in texts.items():
        for text in cells:
            for src, name in SOURCE_NAMES.items():
                pats = (rf"(?:{name})\s*,?\s+{_FIG}", rf"{_FIG}\s+of\s+(?:{name})")
                for pat in pats:
                    for m in re.finditer(pat, text):
                        for n in _expand(m.group("nums")):
                            found.setdefault((src, n), [])
                            if chapter not in found[(src, n)]:
                                found[(src, n)].append(chapter)
    return found


def registry_figures(reg: dict) -> set[tuple[str, int]]:
    """(source, figure number) named by a registry entry's number or title."""
    out = set()
    for r in reg["results"]:
        for field in (r["num"], r.get("what") or ""):
            for m in re.finditer(_FIG, field):
                out.update((r["src"], n) for n in _expand(m.group("nums")))
    return out


def chapter_cells() -> dict[str, list[dict]]:
    return {nb.stem: json.loads(nb.read_text())["cells"] for nb in book_pages.chapter_notebooks()}


def chapter_texts(cells: dict[str, list[dict]]) -> dict[str, list[str]]:
    return {ch: ["".join(c["source"]) for c in cs] for ch, cs in cells.items()}


_CE = re.compile(r"^\s*# counterexample: (E-[A-Za-z0-9_.\-]+)\s*$", re.M)


def counterexample_cells(cells: dict[str, list[dict]]) -> dict[str, set[str]]:
    """Erratum id -> the chapters with a code cell marked ``# counterexample: <id>`` that asserts."""
    out: dict[str, set[str]] = {}
    for ch, cs in cells.items():
        for c in cs:
            if c["cell_type"] != "code":
                continue
            src = "".join(c["source"])
            if not re.search(r"^\s*assert\b", src, re.M):
                continue
            for eid in _CE.findall(src):
                out.setdefault(eid, set()).add(ch)
    return out


def status_problems(reg: dict) -> list[str]:
    return [f"{r['src']} {r['num']}: unknown status {r['status']!r}" for r in reg["results"]
            if r["status"] not in book_pages.STATUSES]


def corrected_problems(reg: dict, cells: dict[str, list[dict]], errata: dict[str, list[str]]) -> list[str]:
    """Corrected entries without an erratum id, or without a counterexample cell in the chapter of one of them."""
    marked = counterexample_cells(cells)
    problems = []
    for r in reg["results"]:
        if r["status"] != "corrected":
            continue
        ids = r.get("errata") or []
        if not ids:
            problems.append(f"{r['src']} {r['num']}: corrected without an erratum id")
            continue
        if not any(marked.get(e, set()) & set(errata.get(e, [])) for e in ids):
            problems.append(f"{r['src']} {r['num']}: no '# counterexample: E-...' cell with an assert for any of "
                            f"{', '.join(ids)} in its chapter")
    return problems


def figure_problems(reg: dict, texts: dict[str, list[str]]) -> list[str]:
    listed = registry_figures(reg)
    return [f"{src} Fig {n} (cited in {', '.join(chs)}) has no registry entry"
            for (src, n), chs in sorted(figure_citations(texts).items()) if (src, n) not in listed]


@pytest.fixture(scope="module")
def reg():
    return book_pages.load_registry()


@pytest.fixture(scope="module")
def cells():
    return chapter_cells()


@pytest.fixture(scope="module")
def errata():
    return book_pages.errata_ids()


# ------------------------------------------------------------------ statuses
def test_statuses_known(reg):
    assert status_problems(reg) == []


def test_statuses_reject_unknown(reg):
    bad = copy.deepcopy(reg)
    bad["results"][0]["status"] = "fixed"
    assert status_problems(bad) == [f"{bad['results'][0]['src']} {bad['results'][0]['num']}: unknown status 'fixed'"]


def test_new_statuses_are_known():
    for s in ("sharpened", "clarified", "partly reproduced"):
        assert s in book_pages.STATUSES


# ------------------------------------------------------------------ corrected entries
def test_corrected_entries_have_errata_and_counterexamples(reg, cells, errata):
    assert corrected_problems(reg, cells, errata) == []


def test_corrected_check_rejects_missing_erratum(reg, cells, errata):
    bad = copy.deepcopy(reg)
    bad["results"].append({"src": "rw", "num": "Thm 99", "what": "x", "status": "corrected", "evidence": "x"})
    assert "rw Thm 99: corrected without an erratum id" in corrected_problems(bad, cells, errata)


def test_corrected_check_rejects_missing_cell(reg, cells, errata):
    bad = copy.deepcopy(reg)
    bad["results"].append({"src": "rw", "num": "Thm 99", "what": "x", "status": "corrected", "evidence": "x",
                           "errata": ["E-rw-6-signs"]})  # an erratum of the book that has no counterexample cell
    assert any(p.startswith("rw Thm 99: no '# counterexample") for p in corrected_problems(bad, cells, errata))


def test_corrected_check_rejects_cell_without_assert(reg, cells, errata):
    rw_alg4 = [r for r in reg["results"] if r["src"] == "rw" and r["num"] == "Alg 4"]
    assert rw_alg4 and rw_alg4[0]["status"] == "corrected"
    stripped = copy.deepcopy(cells)
    for c in stripped["privacy_report"]:
        src = "".join(c["source"])
        if "# counterexample: E-rw-alg4-abs" in src:
            c["source"] = [re.sub(r"^assert\b", "check =", line) for line in c["source"]]
    one = {"sources": reg["sources"], "results": rw_alg4}
    assert corrected_problems(one, cells, errata) == []
    assert corrected_problems(one, stripped, errata) != []


def test_corrected_check_rejects_cell_in_another_chapter(reg, cells, errata):
    rw_alg4 = [r for r in reg["results"] if r["src"] == "rw" and r["num"] == "Alg 4"]
    moved = {ch: cs for ch, cs in cells.items() if ch != "privacy_report"}
    moved["amp"] = moved["amp"] + [c for c in cells["privacy_report"]
                                   if "# counterexample: E-rw-alg4-abs" in "".join(c["source"])]
    assert corrected_problems({"sources": reg["sources"], "results": rw_alg4}, moved, errata) != []


# ------------------------------------------------------------------ reproduced figures
def test_figure_citations_are_found():
    texts = {"x": ['fig.suptitle("R&W Figs 7 and 8")', "RKW Figs 1, 3 and 4 (with 1,000 rows)",
                   r'ax.set_title(r"Ridge, $\sigma = 4$ (Wang 2019, Fig. 1)")', "As in Wang's Fig 1",
                   "R&W Figs 4 and 5, 1,000 rows", "Fig 6 of ADT", "Redberg & Wang 2021, Fig 2",
                   "ADT Figs 2–3"]}
    got = set(figure_citations(texts))
    assert got == {("rw", 7), ("rw", 8), ("rkw", 1), ("rkw", 3), ("rkw", 4), ("wang", 1), ("rw", 4),
                   ("rw", 5), ("adt", 6), ("rw", 2), ("adt", 2), ("adt", 3)}


def test_reproduced_figures_are_listed(reg, cells):
    assert figure_problems(reg, chapter_texts(cells)) == []


def test_figure_check_rejects_a_missing_entry(reg, cells):
    bad = copy.deepcopy(reg)
    bad["results"] = [r for r in bad["results"] if not (r["src"] == "rkw" and r["num"] == "Fig 5")]
    assert figure_problems(bad, chapter_texts(cells)) == ["rkw Fig 5 (cited in amp) has no registry entry"]


def test_figure_check_rejects_an_unlisted_citation(reg, cells):
    texts = chapter_texts(cells)
    texts["amp"] = texts["amp"] + ["RKW Fig 9 reproduced"]
    assert figure_problems(reg, texts) == ["rkw Fig 9 (cited in amp) has no registry entry"]
