"""Finding and citing in the built book, in headless Chromium: search, the bibliography, "Get the code".

Run by ``make browser-test`` (``PDPKIT_BROWSER_TESTS=1 pytest tests/browser -s``); skipped otherwise, and where
playwright, Chromium or the built book is missing. The book is read from ``PDPKIT_BOOK_HTML`` (default
``_build/html``) and served from localhost as ``check_book.py`` serves it.

* **Search** (``search.html?q=…``, Sphinx's own search with ``_static/pdpkit_search.js``): the first result of
  ``Renyi``, ``renyi`` and ``Rényi`` is the chapter whose section is *Rényi DP* (found from the chapters' sources,
  not from the HTML), of ``privacy report`` the chapter *The privacy report*, of ``GOE`` the chapter *GOE noise and
  Analyze-Gauss* — each chapter found by its title in the notebooks. The page's accent folding is the Python one of
  ``_ext/pdpkit_search.py`` on a list of words.
* **Bibliography**: every entry's identifiers are real ``<a href>`` links (``https://doi.org/10.…``,
  ``https://arxiv.org/abs/…``) or the entry says it has none; every back-reference ("Cited in") leads to a page
  and to an element there that is a citation linking back to this entry; every in-text citation on every chapter
  prints the label of the entry it links to (one style in text and list).
* **Get the code** (the intro): the two commands, ``make lab`` and ``pip install -e .``; the ``git clone`` line and
  the repository button exactly when the book was built with a repository URL (``PDPKIT_REPOSITORY_URL`` or
  ``repository: url:`` of ``_config.yml``); every internal link of the intro leads to an existing page and anchor,
  a ``{doc}`` link's text being the title of the page it opens.

Each check also runs on a page made wrong on purpose — the search script removed, an identifier's link removed, a
back-reference pointing elsewhere, an in-text label changed, a link to the wrong page — and must reject it.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import sys
import time

import pytest
import yaml

if os.environ.get("PDPKIT_BROWSER_TESTS") != "1":  # `make browser-test` sets it; `make unit` skips Chromium
    pytest.skip("browser test: run by make browser-test (PDPKIT_BROWSER_TESTS=1)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")

from check_book import CHROMIUM, CHROMIUM_ARGS, _serve  # noqa: E402  (after the skip: it imports playwright)

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "_ext"))
from pdpkit_search import ENV_URL, fold  # noqa: E402

REPORT: dict = {}


def _book() -> pathlib.Path:
    given = pathlib.Path(os.environ.get("PDPKIT_BOOK_HTML", "_build/html"))
    for cand in ([given] if given.is_absolute() else [pathlib.Path.cwd() / given, ROOT / given]):
        if (cand / "index.html").exists():
            return cand.resolve()
    pytest.skip(f"no built book at {given} (make book, or set PDPKIT_BOOK_HTML)", allow_module_level=True)


BOOK = _book()
if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):  # pragma: no cover - machine without Chromium
    pytest.skip("Chromium is not installed", allow_module_level=True)


def _headings(stem: str) -> list[str]:
    nb = json.loads((ROOT / "chapters" / f"{stem}.ipynb").read_text())
    text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    return [line.lstrip("#").strip() for line in text.splitlines() if re.match(r"#{1,6} ", line)]


def _chapter_with(pattern: str, *, level1: bool) -> str:
    """The one chapter whose title (``level1``) or one of whose section titles matches ``pattern``."""
    found = []
    for nb in sorted((ROOT / "chapters").glob("*.ipynb")):
        heads = _headings(nb.stem)
        heads = heads[:1] if level1 else heads[1:]
        if any(re.search(pattern, h) for h in heads):
            found.append(nb.stem)
    assert len(found) == 1, (pattern, found)
    return found[0]


# query -> the chapter that must come first (from the sources, not from the HTML)
RDP_CHAPTER = _chapter_with(r"^Rényi DP\b", level1=False)
EXPECTED = {
    "Renyi": RDP_CHAPTER,
    "renyi": RDP_CHAPTER,
    "Rényi": RDP_CHAPTER,
    "privacy report": _chapter_with(r"(?i)^the privacy report$", level1=True),
    "GOE": _chapter_with(r"^GOE\b", level1=True),
}
FOLD_WORDS = ["Rényi", "RÉNYI", "Erdős", "Gödel", "naïve", "Ångström", "façade", "Łojasiewicz", "Straße", "Søren",
              "Æsir", "Œuvre", "ﬁle", "x²", "plain"]


@pytest.fixture(scope="module")
def served():
    server, base = _serve(BOOK)
    t0 = time.perf_counter()
    with sync_api.sync_playwright() as pw:
        chromium = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield browser, base
        browser.close()
    server.shutdown()
    REPORT["seconds"] = round(time.perf_counter() - t0, 1)
    print("\nfinding and citing:", json.dumps(REPORT, ensure_ascii=False))


def _context(browser, base: str, edit=None):
    """A context that reaches localhost only; ``edit(path, html) -> html`` rewrites the pages it is given."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})

    def route(r):
        url = r.request.url
        if not url.startswith(base):
            return r.abort()
        path = url[len(base):].split("#")[0].split("?")[0].lstrip("/")
        if edit is not None and path.endswith(".html"):
            file = BOOK / path
            if file.is_file():
                text = edit(path, file.read_text(encoding="utf-8"))
                return r.fulfill(status=200, content_type="text/html; charset=utf-8", body=text)
        return r.continue_()

    ctx.route("**/*", route)
    return ctx


# --------------------------------------------------------------------------------------------------------- search
def search_results(page, base: str, query: str) -> list[str]:
    """The pages of the results of ``query`` on search.html, in the order shown (``chapters/x.html``)."""
    page.goto(f"{base}/search.html?q={query}", wait_until="load")
    page.wait_for_function(
        "() => { const s = document.querySelector('#search-results .search-summary');"
        " return s && /finished|did not match/i.test(s.innerText); }", timeout=30000)
    hrefs = page.eval_on_selector_all("#search-results ul.search li > a", "els => els.map(a => a.href)")
    return [h[len(base):].lstrip("/").split("#")[0].split("?")[0] for h in hrefs]


def search_problems(page, base: str) -> tuple[list[str], dict]:
    problems, firsts = [], {}
    for query, stem in EXPECTED.items():
        got = search_results(page, base, query)
        firsts[query] = got[:3]
        if not got or got[0] != f"chapters/{stem}.html":
            problems.append(f"{query!r}: first result {got[:1]}, want chapters/{stem}.html")
    return problems, firsts


def test_search_finds_the_chapters_first(served):
    browser, base = served
    ctx = _context(browser, base)
    page = ctx.new_page()
    problems, firsts = search_problems(page, base)
    REPORT["search (first three)"] = firsts
    ctx.close()
    assert not problems, problems


def test_the_search_check_rejects_the_book_without_its_search_script(served):
    browser, base = served
    ctx = _context(browser, base, edit=lambda path, html: re.sub(r'<script src="[^"]*pdpkit_search\.js[^"]*"></script>',
                                                                 "", html))
    page = ctx.new_page()
    problems, _ = search_problems(page, base)
    ctx.close()
    # without the script the query is not folded ("Rényi" finds nothing: the index holds "renyi") and API
    # pages keep their place above chapters
    assert any(p.startswith("'Rényi'") for p in problems), problems
    assert any(p.startswith("'GOE'") for p in problems), problems


def test_the_page_folds_accents_as_the_index_does(served):
    browser, base = served
    ctx = _context(browser, base)
    page = ctx.new_page()
    page.goto(f"{base}/search.html", wait_until="load")
    got = page.evaluate("words => words.map(w => window.PdpkitSearch.fold(w))", FOLD_WORDS)
    ctx.close()
    assert got == [fold(w) for w in FOLD_WORDS]
    assert fold("Rényi") == "Renyi" and fold("plain") == "plain"


# --------------------------------------------------------------------------------------------------- bibliography
BIB_JS = r"""
() => Array.from(document.querySelectorAll('div.citation')).map(c => ({
  id: c.id,
  label: c.querySelector('.label') ? c.querySelector('.label').innerText.replace(/^\[|\]$/g, '') : '',
  text: c.innerText,
  links: Array.from(c.querySelectorAll('p:not(.pdpkit-cited-in):not(.pdpkit-listed-for) a'))
    .map(a => ({href: a.getAttribute('href') || '', text: a.innerText})),
  backrefs: Array.from(c.querySelectorAll('p.pdpkit-cited-in a')).map(a => a.href),
  cited: !!c.querySelector('p.pdpkit-cited-in') && /^Cited in/.test(c.querySelector('p.pdpkit-cited-in').innerText),
  listed: !!c.querySelector('p.pdpkit-listed-for'),
}))
"""
DOI_HREF = re.compile(r"^https://doi\.org/10\.\d{4,9}/\S+$")
ARXIV_HREF = re.compile(r"^https://arxiv\.org/abs/(\d{4}\.\d{4,5}|[a-z-]+/\d{7})$")
NO_ID = re.compile(r"No DOI, URL or arXiv identifier")


def bibliography_problems(page, base: str) -> tuple[list[str], list[dict]]:
    page.goto(f"{base}/chapters/bibliography.html", wait_until="load")
    entries = page.evaluate(BIB_JS)
    problems = []
    if len(entries) < 30:
        problems.append(f"{len(entries)} entries in the bibliography")
    for e in entries:
        if not (e["cited"] or e["listed"]) or "Not cited on any page" in e["text"]:
            problems.append(f"{e['id']}: neither cited on a page nor listed for a stated reason")
        ids = [a for a in e["links"] if DOI_HREF.match(a["href"]) or ARXIV_HREF.match(a["href"])
               or a["href"].startswith("https://")]
        if not ids and not NO_ID.search(e["text"]):
            problems.append(f"{e['id']}: no identifier link and no note saying it has none")
        for a in e["links"]:
            if a["text"].startswith("doi:") and not (DOI_HREF.match(a["href"]) and a["href"].endswith(a["text"][4:])):
                problems.append(f"{e['id']}: DOI {a['text']} links to {a['href']!r}")
            if a["text"].startswith("arXiv:") and not (ARXIV_HREF.match(a["href"])
                                                       and a["href"].endswith(a["text"][6:])):
                problems.append(f"{e['id']}: {a['text']} links to {a['href']!r}")
        for plain in re.findall(r"(?:doi:|arXiv:)\S+", e["text"]):
            if not any(plain.rstrip(".,") == a["text"] for a in e["links"]):
                problems.append(f"{e['id']}: {plain} is plain text, not a link")
    return problems, entries


def backref_problems(page, base: str, entries: list[dict]) -> list[str]:
    """Every "Cited in" link leads to an existing element that is a citation of this entry (linking back)."""
    targets = [(e["id"], href) for e in entries for href in e["backrefs"]]
    found = page.evaluate(r"""async (targets) => {
      const out = [];
      const cache = {};
      for (const [entry, href] of targets) {
        const [url, anchor] = href.split('#');
        if (!(url in cache)) {
          const r = await fetch(url);
          cache[url] = r.ok ? new DOMParser().parseFromString(await r.text(), 'text/html') : null;
        }
        const doc = cache[url];
        const el = doc && anchor ? doc.getElementById(anchor) : null;
        const back = el ? Array.from(el.querySelectorAll('a')).map(a => a.getAttribute('href') || '') : [];
        out.push({entry, href, page: !!doc, element: !!el,
                  isCitation: !!el && el.classList.contains('bibtex-citation'),
                  linksBack: back.some(h => h.endsWith('bibliography.html#' + entry))});
      }
      return out;
    }""", targets)
    problems = []
    for f in found:
        if not (f["page"] and f["element"] and f["isCitation"] and f["linksBack"]):
            problems.append(f"{f['entry']}: back-reference {f['href']} leads to no citation of it ({f})")
    return problems


def intext_problems(page, base: str, labels: dict[str, str], pages: list[str]) -> list[str]:
    """Every in-text citation prints ``[<label of its entry>]`` (parenthetical) or ``<who> [<year>]``."""
    problems = []
    for rel in pages:
        page.goto(f"{base}/{rel}", wait_until="load")
        refs = page.eval_on_selector_all(
            ".bibtex-citation a[href*='bibliography.html#']",
            "els => els.map(a => ({href: a.getAttribute('href'), text: a.innerText,"
            " span: a.closest('.bibtex-citation').innerText}))")
        for r in refs:
            key = r["href"].split("#")[1]
            label = labels.get(key)
            if label is None:
                problems.append(f"{rel}: citation of {key} leads to no entry")
            elif r["text"] != label and not label.endswith(" " + r["text"]):
                problems.append(f"{rel}: {r['text']!r} for the entry labelled {label!r}")
            elif not (r["span"].startswith("[") or r["span"].startswith(label.rpartition(" ")[0])):
                problems.append(f"{rel}: citation {r['span']!r} is not in the book's style")
    return problems


def _citing_pages() -> list[str]:
    pages = []
    for src in sorted((ROOT / "chapters").glob("*.ipynb")) + sorted((ROOT / "chapters").glob("*.md")):
        if re.search(r"\{cite(:\w+)?\}`", src.read_text()):
            pages.append(f"chapters/{src.stem}.html")
    return pages


def test_the_bibliography_links_and_back_references(served):
    browser, base = served
    ctx = _context(browser, base)
    page = ctx.new_page()
    problems, entries = bibliography_problems(page, base)
    problems += backref_problems(page, base, entries)
    labels = {e["id"]: e["label"] for e in entries}
    pages = _citing_pages()
    problems += intext_problems(page, base, labels, pages)
    REPORT["bibliography"] = {"entries": len(entries),
                              "linked": sum(1 for e in entries if any(a["href"].startswith("https://")
                                                                      for a in e["links"])),
                              "back-references": sum(len(e["backrefs"]) for e in entries),
                              "pages checked for in-text labels": len(pages)}
    ctx.close()
    assert len(pages) >= 10, pages
    assert not problems, problems


def _break_first(pattern: str, repl: str):
    def edit(path, html):
        return re.sub(pattern, repl, html, count=1) if path in ("chapters/bibliography.html", "chapters/intro.html") \
            else html
    return edit


@pytest.mark.parametrize("name, edit", [
    ("an identifier's link removed",
     _break_first(r'<a class="reference external" href="https://doi\.org/[^"]+">(doi:[^<]+)</a>', r"\1")),
    ("an arXiv link to the wrong paper",
     _break_first(r'href="https://arxiv\.org/abs/\d{4}\.\d{4,5}">(arXiv:)',
                  r'href="https://arxiv.org/abs/1111.11111">\1')),
    ("a back-reference pointing elsewhere",
     _break_first(r'(<p class="pdpkit-cited-in">Cited in: <a class="reference internal" href="[^"#]+)#[^"]+"',
                  r'\1#no-such-place"')),
    ("an in-text label changed",
     _break_first(r'(<span class="bibtex-citation"[^>]*>\[<a [^>]*>)[^<]+<', r"\1Someone 1999<")),
])
def test_the_bibliography_check_rejects_wrong_pages(served, name, edit):
    browser, base = served
    ctx = _context(browser, base, edit=edit)
    page = ctx.new_page()
    problems, entries = bibliography_problems(page, base)
    problems += backref_problems(page, base, entries)
    problems += intext_problems(page, base, {e["id"]: e["label"] for e in entries}, ["chapters/intro.html"])
    ctx.close()
    assert problems, name


# ------------------------------------------------------------------------------------------------- get the code
def _repository_url() -> str:
    url = os.environ.get(ENV_URL, "").strip()
    if not url:
        url = str((yaml.safe_load((ROOT / "_config.yml").read_text()).get("repository") or {}).get("url") or "")
    return url.strip().rstrip("/")


INTRO_JS = r"""
() => {
  const sec = document.getElementById('get-the-code');
  const links = Array.from(document.querySelectorAll('article a.reference.internal')).map(a => ({
    href: a.href, text: a.innerText.trim(), doc: !!a.querySelector('span.doc')}));
  return {
    section: sec ? sec.innerText : '',
    code: sec ? Array.from(sec.querySelectorAll('pre')).map(p => p.innerText).join('\n') : '',
    cite: Array.from(document.querySelectorAll('pre')).map(p => p.innerText)
      .find(t => t.includes('@misc{pdpkit')) || '',
    repoButtons: Array.from(document.querySelectorAll('a')).filter(a => !a.closest('article'))
      .filter(a => /source repository/i.test((a.getAttribute('title') || '') + ' '
                   + (a.getAttribute('data-bs-original-title') || '') + ' ' + a.innerText)
                   || /\/issues\/?$/.test(a.getAttribute('href') || ''))
      .map(a => a.getAttribute('href')),
    links,
  };
}
"""


def intro_problems(page, base: str, url: str) -> list[str]:
    page.goto(f"{base}/chapters/intro.html", wait_until="load")
    got = page.evaluate(INTRO_JS)
    problems = []
    for cmd in ("make book", "make test", "make lab", "pip install -e ."):
        if cmd not in got["code"]:
            problems.append(f"'Get the code' lacks `{cmd}`")
    if url:
        if f"git clone {url}" not in got["code"]:
            problems.append(f"no `git clone {url}` line")
        if not any(h and h.startswith(url) for h in got["repoButtons"]):
            problems.append(f"no repository button to {url}")
        if url not in got["cite"]:
            problems.append("the BibTeX entry has no url")
    else:
        if "git clone" in got["code"]:
            problems.append("a `git clone` line without a repository URL")
        if got["repoButtons"]:
            problems.append(f"repository buttons without a repository URL: {got['repoButtons']}")
        if "whoever gave you the book" not in got["section"]:
            problems.append("'Get the code' does not say how to obtain the project")
    # internal links: the page and the anchor exist; a {doc} link's text is the page's title
    checked = page.evaluate(r"""async (links) => {
      const out = [];
      for (const l of links) {
        const [url, anchor] = l.href.split('#');
        const r = await fetch(url);
        const doc = r.ok ? new DOMParser().parseFromString(await r.text(), 'text/html') : null;
        const h1 = doc && doc.querySelector('article h1');
        const title = h1 ? h1.innerText.replace(/#$/, '').replace(/^\d+\.\s*/, '').trim() : null;
        out.push({...l, ok: !!doc, anchorOk: !anchor || !!(doc && doc.getElementById(decodeURIComponent(anchor))),
                  title});
      }
      return out;
    }""", got["links"])
    for link in checked:
        if not link["ok"] or not link["anchorOk"]:
            problems.append(f"intro link {link['text']!r} -> {link['href']} leads nowhere")
        elif link["doc"] and link["title"] is not None and link["text"] != link["title"] \
                and not link["title"].endswith(link["text"]):
            problems.append(f"intro link {link['text']!r} opens the page {link['title']!r}")
    REPORT["intro links checked"] = len(checked)
    return problems


def test_get_the_code_and_the_intro_links(served):
    browser, base = served
    ctx = _context(browser, base)
    page = ctx.new_page()
    problems = intro_problems(page, base, _repository_url())
    ctx.close()
    assert not problems, problems


@pytest.mark.parametrize("name, edit", [
    ("the notation link sent to the landing page",
     lambda path, html: html.replace('href="notation.html"><span class="doc">Notation', 'href="intro.html"><span '
                                     'class="doc">Notation', 1) if path == "chapters/intro.html" else html),
    ("make lab dropped",
     lambda path, html: re.sub(r"make<span[^>]*> </span>lab", "make<span> </span>ball", html)
     if path == "chapters/intro.html" else html),
    ("a clone line without a URL",
     lambda path, html: html.replace('<span class="nb">cd</span>', 'git clone https://example.invalid/x <span '
                                     'class="nb">cd</span>', 1) if path == "chapters/intro.html" else html),
])
def test_the_intro_check_rejects_wrong_pages(served, name, edit):
    if _repository_url() and name == "a clone line without a URL":
        pytest.skip("the book was built with a repository URL")
    browser, base = served
    ctx = _context(browser, base, edit=edit)
    page = ctx.new_page()
    problems = intro_problems(page, base, _repository_url())
    ctx.close()
    assert problems, name
