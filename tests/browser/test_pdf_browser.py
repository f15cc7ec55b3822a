"""The PDF printer in headless Chromium, on a small book built here like ``make pdf`` builds the real one.

Run by ``make browser-test`` (``PDPKIT_BROWSER_TESTS=1``); skipped otherwise, and where playwright or Chromium is
missing. The two-chapter book of ``tests/test_pdf.py`` (a theorem, an exercise, a figure, math, cross-references
between the chapters), with the book's theme, offline MathJax and the print build's style sheet, is built with
Sphinx's ``singlehtml`` builder and printed by ``tools/build_pdf.print_pdf``. The PDF is read back: pages, MathJax's
formulas typeset and printed as text, the chapters' titles as bookmarks in order and in the text, the theme's
sidebars and buttons left out, and the cross-reference from chapter two to chapter one's theorem an internal link
whose destination is the page that shows the theorem. A wrong variant (the same page printed with its links to other
files left in) is refused by the check. About 15 s.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shutil
import sys
import time

import pytest

if os.environ.get("PDPKIT_BROWSER_TESTS") != "1":  # `make browser-test` sets it; `make unit` skips Chromium
    pytest.skip("browser test: run by make browser-test (PDPKIT_BROWSER_TESTS=1)", allow_module_level=True)
pytest.importorskip("playwright.sync_api")
if not (os.path.exists("/usr/bin/chromium") or shutil.which("chromium")):  # pragma: no cover
    pytest.skip("Chromium is not installed", allow_module_level=True)

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load(name: str, path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return sys.modules[name]


build_pdf = _load("build_pdf", ROOT / "tools" / "build_pdf.py")
book = _load("test_pdf_book", ROOT / "tests" / "test_pdf.py")

THEME = """
extensions += ["sphinx-mathjax-offline"]
html_theme = "sphinx_book_theme"
"""


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pdfbook")
    src = book.make_project(tmp / "src", print_mode=True, extra_conf=THEME)
    out = tmp / "single"
    t0 = time.perf_counter()
    run = book.sphinx_build(src, out, "singlehtml")
    assert run.returncode == 0, run.stderr
    t1 = time.perf_counter()
    pdf = tmp / "book.pdf"
    stats = build_pdf.print_pdf(out, pdf, page="chapters/intro.html", timeout_s=120)
    print(f"\nsmall book: singlehtml {t1 - t0:.1f} s, print {time.perf_counter() - t1:.1f} s,",
          {k: v for k, v in stats.items() if k != "over"})
    return out, pdf.read_bytes(), stats


def test_the_small_book_prints_with_math_links_and_outline(printed):
    _, data, stats = printed
    assert stats["math"] >= 1 and stats["pending"] == 0 and stats["errors"] == 0
    assert stats["broken"] == [] and stats["missing"] == []
    summary = build_pdf.check_pdf(data, titles=["Landing", "Chapter one", "Chapter two"])
    assert summary["pages"] >= 3  # the landing page and a new page for each chapter
    pdf = build_pdf.PdfFile(data)
    text = re.sub(r"\s+", " ", pdf.text())
    assert "Exercise 1.1" in text and "Fig. 1.1" in text
    assert "ε" in text  # MathJax's formula, printed as text
    assert "Search" not in text and "Contents" not in text  # the theme's search button and page contents
    # chapter two cites chapter one's theorem: an internal link to the page that shows it; a link to a chapter
    # lands on the page where the chapter starts
    pages = [re.sub(r"\s+", "", pdf.page_text(i)) for i in range(1, len(pdf.pages) + 1)]
    theorem_page = next(i for i, t in enumerate(pages, 1) if "Everystatementholds" in t)
    citing_page = next(i for i, t in enumerate(pages, 1) if "2.Chaptertwo" in t)
    assert citing_page > theorem_page
    dests = pdf.destinations()
    targets = {link["dest"]: dests[link["dest"]] for link in pdf.links() if link["page"] == citing_page
               and "dest" in link}
    assert targets.get("thm-one") == theorem_page
    assert dests["document-chapters/two"] == citing_page and dests["document-chapters/one"] == theorem_page


def test_links_to_other_files_are_refused(printed):
    out, _, _ = printed
    # the same page printed without the preparation: its links to other files of the web build stay in the PDF
    page = (out / "chapters" / "intro.html").read_text()
    (out / "wrong.html").write_text(page.replace("</body>", '<p><a href="_static/other.html">a page of the web '
                                                 "book</a></p></body>"))
    from playwright.sync_api import sync_playwright

    with build_pdf.serve(out, "wrong.html") as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=build_pdf.CHROMIUM if os.path.exists(build_pdf.CHROMIUM)
                                     else shutil.which("chromium"), args=build_pdf.CHROMIUM_ARGS)
        try:
            tab = browser.new_page()
            tab.goto(base + "index.html", wait_until="load")
            data = tab.pdf(outline=True, tagged=True)
        finally:
            browser.close()
    with pytest.raises(AssertionError, match="files of the web book"):
        build_pdf.check_pdf(data)
