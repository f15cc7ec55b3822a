"""*Results at a glance* in headless Chromium: math typeset, every row linked, errata anchors resolve, a phone layout.

Run by ``make browser-test`` (``PDPKIT_BROWSER_TESTS=1 pytest tests/browser -s``); skipped otherwise, and where
playwright, Chromium or the built book is missing. The book is read from ``PDPKIT_BOOK_HTML`` (default
``_build/html``) and served from localhost as ``check_book.py`` serves it.

The reference is the repository, not the page: ``chapters/results_registry.yml`` (one row per result, its prf
labels, its errata, whether its evidence holds math) and the chapters' notebooks (the errata ids that open an item
of a list, read with a regular expression). At 1280 px and at 390 px:

* **math typeset**: MathJax has rendered every ``$...$`` of the evidence column (a row whose registry evidence has
  math has a MathJax container and no MathJax error) and no ``\\``, ``^{`` or ``$`` is left in the column's text;
* **every row linked**: one row per registry entry with the anchor ``<source>-<number>``, its number a link to
  itself; its name a link to its first prf block (``#<label>`` on the chapter's page) or, for a result with no
  block, a link or a note saying so; every link of the table leads to a page that exists and to an element with
  the link's anchor on it (each target page fetched and parsed);
* **errata anchors**: every errata id of a chapter is the anchor of a list item on that chapter's page, which
  begins with the id and has a ``¶`` link to itself; the results page links each registry erratum to such an item;
  following a few of them makes the item the page's ``:target``, on screen;
* **no name breaks inside a word** (between hyphens and spaces only), and no page scrolls sideways;
* **the phone**: one line per result (number, name, status), the details hidden until a tap (the toggle says
  ``aria-expanded``), the page far shorter than the 46,000 px of a plain table; without JavaScript every detail
  is shown and no filter is offered;
* **filters**: by source and by status, the rows shown are exactly the registry's rows with that source and status,
  a source's section disappears when it has none, and "all" shows every row again.

Each check is also run on a page made wrong on purpose (a name linked to an anchor that is not there, an erratum
item without its anchor, raw TeX in the evidence, the stylesheet missing, the script missing) and must reject it.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import time
from urllib.parse import unquote, urlsplit

import pytest
import yaml

if os.environ.get("PDPKIT_BROWSER_TESTS") != "1":  # `make browser-test` sets it; `make unit` skips Chromium
    pytest.skip("browser test: run by make browser-test (PDPKIT_BROWSER_TESTS=1)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")

from check_book import CHROMIUM, CHROMIUM_ARGS, _serve  # noqa: E402  (after the skip: it imports playwright)

ROOT = pathlib.Path(__file__).resolve().parents[2]
# a touch screen 390 px wide; not `is_mobile`, which lets the page zoom out to a wider layout and so hides a page
# that is wider than the screen (check_book.py measures the same way)
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "has_touch": True}
LAPTOP = {"viewport": {"width": 1280, "height": 900}}
PAGE = "chapters/results.html"
PLAIN_TABLE_HEIGHT = 46_000  # the phone page as one plain table
MAX_PHONE_HEIGHT = PLAIN_TABLE_HEIGHT // 3
MAX_PHONE_ROW = 90  # px: a line or two of name, not the details
REPORT: dict = {}


def _book() -> pathlib.Path:
    given = pathlib.Path(os.environ.get("PDPKIT_BOOK_HTML", "_build/html"))
    for cand in ([given] if given.is_absolute() else [pathlib.Path.cwd() / given, ROOT / given]):
        if (cand / "index.html").exists():
            return cand.resolve()
    pytest.skip(f"no built book at {given} (make book, or set PDPKIT_BOOK_HTML)", allow_module_level=True)


BOOK = _book()
if not (BOOK / PAGE).exists():
    pytest.skip(f"{BOOK / PAGE} is not built", allow_module_level=True)
if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):  # pragma: no cover - machine without Chromium
    pytest.skip("Chromium is not installed", allow_module_level=True)

REGISTRY = yaml.safe_load((ROOT / "chapters" / "results_registry.yml").read_text(encoding="utf-8"))
RESULTS = REGISTRY["results"]


def expected_row_id(src: str, num: str) -> str:
    """The row anchor the page promises (``results.html#rw-thm-6``): source, then the number in lower case."""
    return src + "-" + "-".join(re.findall(r"[a-z0-9]+", num.lower()))


def _chapter_errata() -> dict[str, list[str]]:
    """chapter stem -> the errata ids that open an item of a list in its markdown cells."""
    out: dict[str, list[str]] = {}
    item = re.compile(r"^\s*(?:[*+-]|\d+[.)])\s+\*\*(E-[a-z]+-[A-Za-z0-9.]+-[a-z0-9.-]+)\*\*", re.M)
    for nb in sorted((ROOT / "chapters").glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        ids = item.findall(text)
        if ids:
            out[nb.stem] = ids
    return out


CHAPTER_ERRATA = _chapter_errata()

READY_JS = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  if (window.MathJax && MathJax.typesetPromise) await MathJax.typesetPromise();
}"""

ROWS_JS = r"""() => Array.from(document.querySelectorAll('table.pdpkit-results tr.pdpkit-result')).map(tr => {
  const cell = (c) => tr.querySelector('td.pdpkit-col-' + c);
  const ev = cell('evidence');
  let raw = '';
  if (ev) { const c = ev.cloneNode(true); c.querySelectorAll('mjx-container, script').forEach(x => x.remove());
            raw = c.textContent; }
  const name = cell('name');
  const links = Array.from(tr.querySelectorAll('td a[href]')).filter(a => !a.classList.contains('pdpkit-rowlink'))
    .map(a => ({href: a.href, col: (a.closest('td').className.match(/pdpkit-col-(\w+)/) || [])[1],
                text: a.textContent.trim()}));
  const rowlink = tr.querySelector('td.pdpkit-col-num a.pdpkit-rowlink');
  return {id: tr.id, num: (cell('num') || tr).textContent.replace(/\u25b8/g, '').trim(),
          src: (Array.from(tr.classList).find(c => c.startsWith('pdpkit-src-')) || '').slice(11),
          raw, math: ev ? ev.querySelectorAll('mjx-container').length : 0,
          mathErrors: ev ? ev.querySelectorAll('mjx-merror, .MathJax_Error').length : 0,
          nameLinks: name ? Array.from(name.querySelectorAll('a[href]')).map(a => a.href) : [],
          note: !!(name && name.querySelector('.pdpkit-nostatement')),
          rowlink: rowlink ? rowlink.href : null, links};
})"""

# every same-origin page: its status and, for each id, the tag and the start of the text
TARGETS_JS = r"""async (urls) => {
  const out = {};
  for (const url of urls) {
    const r = await fetch(url);
    if (!r.ok) { out[url] = {status: r.status, ids: {}}; continue; }
    const doc = new DOMParser().parseFromString(await r.text(), 'text/html');
    const ids = {};
    doc.querySelectorAll('[id]').forEach(el => {
      if (ids[el.id]) return;
      const start = el.id.startsWith('E-') ? (el.textContent || '').trim().slice(0, 80) : '';
      const own = el.id.startsWith('E-') ?
        !!el.querySelector(':scope > p > a.headerlink[href="#' + CSS.escape(el.id) + '"]') : false;
      ids[el.id] = {tag: el.tagName.toLowerCase(), start, own};
    });
    out[url] = {status: r.status, ids};
  }
  return out;
}"""

# words (split at spaces and hyphens) of the numbers and names that lie on two lines
BROKEN_WORDS_JS = r"""() => {
  const bad = [];
  document.querySelectorAll('table.pdpkit-results td.pdpkit-col-num, table.pdpkit-results td.pdpkit-col-name')
    .forEach(td => {
      const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
      let n;
      while ((n = walker.nextNode())) {
        const re = /[^\s\-\u2010-\u2015/]+/g;
        let m;
        while ((m = re.exec(n.data))) {
          const r = document.createRange();
          r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
          const tops = new Set(Array.from(r.getClientRects()).filter(x => x.width > 0).map(x => Math.round(x.top)));
          if (tops.size > 1) bad.push(m[0]);
        }
      }
    });
  return bad;
}"""

LAYOUT_JS = r"""() => {
  const rows = Array.from(document.querySelectorAll('table.pdpkit-results tr.pdpkit-result'))
    .filter(tr => tr.getClientRects().length);
  const heights = rows.map(tr => tr.getBoundingClientRect().height).sort((a, b) => a - b);
  const shownDetails = rows.filter(tr => Array.from(tr.querySelectorAll(
      'td.pdpkit-col-evidence, td.pdpkit-col-errata, td.pdpkit-col-chapter, td.pdpkit-col-api'))
      .some(td => td.textContent.trim() && td.getClientRects().length &&
                  getComputedStyle(td).display !== 'none')).length;
  const oneLine = rows.filter(tr => {
    const t = (c) => tr.querySelector('td.pdpkit-col-' + c);
    const [a, b, c] = ['num', 'name', 'status'].map(x => t(x) && t(x).getBoundingClientRect());
    return a && b && c && Math.abs(a.top - b.top) < 12 && Math.abs(b.top - c.top) < 12 &&
           a.right <= b.left + 1 && b.right <= c.left + 1;
  }).length;
  const doc = document.documentElement;
  return {rows: rows.length, median: heights.length ? heights[Math.floor(heights.length / 2)] : 0,
          max: heights.length ? heights[heights.length - 1] : 0, shownDetails, oneLine,
          height: doc.scrollHeight, sideways: Math.max(doc.scrollWidth, document.body.scrollWidth) - window.innerWidth,
          toggles: document.querySelectorAll('button.pdpkit-results-toggle').length,
          filters: !!document.querySelector('form.pdpkit-results-filters')};
}"""

VISIBLE_JS = r"""() => ({
  rows: Array.from(document.querySelectorAll('table.pdpkit-results tr.pdpkit-result'))
    .filter(tr => tr.getClientRects().length).map(tr => tr.id),
  sections: Array.from(document.querySelectorAll('table.pdpkit-results'))
    .map(t => t.closest('section')).filter(s => s && s.getClientRects().length).length,
  sideways: document.documentElement.scrollWidth - window.innerWidth,
})"""


@pytest.fixture(scope="module")
def served():
    server, base = _serve(BOOK)
    t0 = time.perf_counter()
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium"),
                                     args=CHROMIUM_ARGS)
        yield browser, base
        browser.close()
    server.shutdown()
    REPORT["seconds"] = round(time.perf_counter() - t0, 1)
    print("\nresults page:", json.dumps(REPORT, ensure_ascii=False))


def _context(browser, base: str, kind: dict, pages: dict[str, str] | None = None, **kwargs):
    """A browser context that reaches localhost only; ``pages`` (path -> html) are served instead of the files."""
    ctx = browser.new_context(**kind, **kwargs)
    pages = pages or {}

    def route(r):
        url = r.request.url
        if not url.startswith(base):
            return r.abort()
        path = url[len(base):].split("#")[0].split("?")[0].lstrip("/")
        if path in pages:
            return r.fulfill(status=200, content_type="text/html; charset=utf-8", body=pages[path])
        return r.continue_()

    ctx.route("**/*", route)
    return ctx


def _open(page, url: str) -> None:
    page.goto(url, wait_until="load")
    page.evaluate(READY_JS)


def _page_of(url: str) -> str:
    return url.split("#")[0]


def _anchor(url: str) -> str:
    return unquote(urlsplit(url).fragment)


# ------------------------------------------------------------------------------------------ the checks


def math_problems(rows: list[dict]) -> list[str]:
    problems = []
    by_id = {r["id"]: r for r in rows}
    for res in RESULTS:
        row = by_id.get(expected_row_id(res["src"], res["num"]))
        if row is None:
            continue
        where = f"{res['src']} {res['num']}"
        if "$" in (res.get("evidence") or "") and not row["math"]:
            problems.append(f"{where}: the evidence's math is not typeset")
        if row["mathErrors"]:
            problems.append(f"{where}: MathJax error in the evidence")
        left = [s for s in ("\\", "^{", "$", "_{") if s in row["raw"]]
        if left:
            problems.append(f"{where}: raw TeX {left} in the evidence: {row['raw'][:80]!r}")
    return problems


def link_problems(page, base: str, rows: list[dict], rel: str = PAGE) -> list[str]:
    """Rows against the registry; every link of the table against the page it leads to."""
    problems = []
    want = [expected_row_id(r["src"], r["num"]) for r in RESULTS]
    got = [r["id"] for r in rows]
    if got != want:
        missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
        problems.append(f"rows are not the registry's: missing {missing[:5]}, extra {extra[:5]}, "
                        f"{len(got)} rows for {len(want)} results")
    page_url = f"{base}/{rel}"
    by_id = {r["id"]: r for r in rows}
    urls = sorted({_page_of(ln["href"]) for r in rows for ln in r["links"]} | {page_url}
                  | {f"{base}/chapters/{stem}.html" for stem in CHAPTER_ERRATA})
    targets = page.evaluate(TARGETS_JS, [u for u in urls if u.startswith(base)])
    REPORT["target_pages"] = len(targets)

    def resolves(href: str) -> bool:
        t = targets.get(_page_of(href))
        return bool(t) and t["status"] == 200 and (not _anchor(href) or _anchor(href) in t["ids"])

    n_links = 0
    for res in RESULTS:
        rid = expected_row_id(res["src"], res["num"])
        row = by_id.get(rid)
        if row is None:
            continue
        where = f"{res['src']} {res['num']}"
        if row["rowlink"] is None or _anchor(row["rowlink"]) != rid or _page_of(row["rowlink"]) != _page_of(page_url):
            problems.append(f"{where}: its number is not a link to its own row")
        if res.get("prf"):
            own = [h for h in row["nameLinks"] if _anchor(h) == res["prf"][0]]
            if not own:
                problems.append(f"{where}: the name does not link to its block {res['prf'][0]} ({row['nameLinks']})")
        elif not row["nameLinks"] and not row["note"]:
            problems.append(f"{where}: the name is neither linked nor marked as without a statement block")
        for ln in row["links"]:
            n_links += 1
            if not resolves(ln["href"]):
                problems.append(f"{where}: the link {ln['text']!r} ({ln['col']}) leads nowhere: {ln['href']}")
        errata_links = {_anchor(ln["href"]): ln["href"] for ln in row["links"] if ln["col"] == "errata"}
        for eid in res.get("errata") or []:
            href = errata_links.get(eid)
            if href is None:
                problems.append(f"{where}: erratum {eid} is not linked")
                continue
            stem = pathlib.PurePosixPath(urlsplit(href).path).stem
            if eid not in CHAPTER_ERRATA.get(stem, []):
                problems.append(f"{where}: erratum {eid} links to {stem}, which has no item {eid}")
    REPORT["links_checked"] = n_links
    # every erratum item of a chapter: an anchor on its page, at an item that begins with the id, with its ¶ link
    n_items = 0
    for stem, ids in CHAPTER_ERRATA.items():
        t = targets.get(f"{base}/chapters/{stem}.html")
        for eid in ids:
            n_items += 1
            el = (t or {}).get("ids", {}).get(eid)
            if el is None:
                problems.append(f"{stem}#{eid}: no element has the erratum's anchor")
            elif el["tag"] != "li" or not el["start"].startswith(eid):
                problems.append(f"{stem}#{eid}: the anchor is on a {el['tag']} that begins {el['start'][:30]!r}")
            elif not el["own"]:
                problems.append(f"{stem}#{eid}: the item has no ¶ link to itself")
    REPORT["errata_items"] = n_items
    return problems


def follow_erratum_problems(page, base: str, stem: str, eid: str) -> list[str]:
    _open(page, f"{base}/chapters/{stem}.html#{eid}")
    state = page.evaluate("""(id) => { const t = document.querySelector(':target');
      const r = t ? t.getBoundingClientRect() : null;
      return {target: t ? t.id : null, tag: t ? t.tagName : null, top: r ? r.top : null, h: innerHeight}; }""", eid)
    if state["target"] != eid or state["tag"] != "LI":
        return [f"{stem}#{eid}: following the link does not target the item ({state})"]
    if not (-2 <= state["top"] < state["h"]):
        return [f"{stem}#{eid}: the item is off screen after following the link ({state})"]
    return []


def layout_problems(page, *, phone: bool, script: bool = True) -> tuple[list[str], dict]:
    lay = page.evaluate(LAYOUT_JS)
    problems = []
    if lay["sideways"] > 1:
        problems.append(f"the page scrolls sideways by {lay['sideways']} px")
    if not phone:
        broken = page.evaluate(BROKEN_WORDS_JS)
        if broken:
            problems.append(f"{len(broken)} words of names break across lines: {broken[:8]}")
        return problems, lay
    if script and lay["height"] >= MAX_PHONE_HEIGHT:
        problems.append(f"the phone page is {lay['height']} px tall (at most {MAX_PHONE_HEIGHT})")
    if lay["oneLine"] < lay["rows"]:
        problems.append(f"{lay['rows'] - lay['oneLine']} of {lay['rows']} rows do not put number, name and status "
                        "on one line")
    if script:
        if lay["median"] > MAX_PHONE_ROW / 1.5 or lay["max"] > 2 * MAX_PHONE_ROW:
            problems.append(f"phone rows are tall: median {lay['median']:.0f} px, largest {lay['max']:.0f} px")
        if lay["shownDetails"]:
            problems.append(f"{lay['shownDetails']} rows show their details before a tap")
        if lay["toggles"] != lay["rows"]:
            problems.append(f"{lay['toggles']} toggles for {lay['rows']} rows")
    return problems, lay


def tap_problems(page, rid: str) -> list[str]:
    """Tap a row's line: its details show and its toggle says so; a second tap hides them."""
    problems = []
    detail = f"#{rid} td.pdpkit-col-evidence"
    shown = f"() => {{ const td = document.querySelector('{detail}'); return !!td && td.getClientRects().length > 0; }}"
    expanded = f"() => document.querySelector('#{rid} button.pdpkit-results-toggle')?.getAttribute('aria-expanded')"
    if page.evaluate(shown):
        problems.append(f"{rid}: details shown before the tap")
    page.locator(f"#{rid} td.pdpkit-col-status").tap()
    if not page.evaluate(shown) or page.evaluate(expanded) != "true":
        problems.append(f"{rid}: a tap on the row does not show its details")
    if page.evaluate("() => document.documentElement.scrollWidth - innerWidth") > 1:
        problems.append(f"{rid}: the open row pushes the page sideways")
    page.locator(f"#{rid} button.pdpkit-results-toggle").tap()
    if page.evaluate(shown) or page.evaluate(expanded) != "false":
        problems.append(f"{rid}: a tap on the toggle does not hide the details again")
    return problems


def filter_problems(page) -> list[str]:
    problems = []
    form = "form.pdpkit-results-filters"
    if not page.locator(form).count():
        return ["no filter form"]
    everything = {expected_row_id(r["src"], r["num"]) for r in RESULTS}
    n_sections = len({r["src"] for r in RESULTS})
    cases = [("wang", ""), ("", "corrected"), ("rkw", "not-covered"), ("book", "as-printed"), ("lect", "new"), ("", "")]
    for src, status in cases:
        page.select_option(f"{form} select[name=source]", src)
        page.select_option(f"{form} select[name=status]", status)
        vis = page.evaluate(VISIBLE_JS)
        want = {expected_row_id(r["src"], r["num"]) for r in RESULTS
                if (not src or r["src"] == src) and (not status or r["status"].replace(" ", "-") == status)}
        if set(vis["rows"]) != want:
            problems.append(f"filter {src or 'all'}/{status or 'any'}: {len(vis['rows'])} rows shown, "
                            f"{len(want)} expected")
        srcs = {r["src"] for r in RESULTS if expected_row_id(r["src"], r["num"]) in want}
        if vis["sections"] != len(srcs):
            problems.append(f"filter {src or 'all'}/{status or 'any'}: {vis['sections']} sections shown, {len(srcs)} "
                            "have rows")
        if vis["sideways"] > 1:
            problems.append(f"filter {src or 'all'}/{status or 'any'}: the page scrolls sideways")
    if set(page.evaluate(VISIBLE_JS)["rows"]) != everything or page.evaluate(VISIBLE_JS)["sections"] != n_sections:
        problems.append("all sources, any status: not every row is shown")
    return problems


# ------------------------------------------------------------------------------------------ the tests


def test_the_reference_is_the_repository():
    assert len(RESULTS) >= 150 and sum(len(v) for v in CHAPTER_ERRATA.values()) >= 60
    ids = [expected_row_id(r["src"], r["num"]) for r in RESULTS]
    assert len(set(ids)) == len(ids) and "rw-thm-6" in ids
    assert sum("$" in (r.get("evidence") or "") for r in RESULTS) >= 15
    listed = {e for r in RESULTS for e in r.get("errata") or []}
    assert listed <= {e for v in CHAPTER_ERRATA.values() for e in v}


@pytest.mark.parametrize("kind", ["laptop", "phone"])
def test_math_links_anchors_and_layout(served, kind):
    browser, base = served
    phone = kind == "phone"
    ctx = _context(browser, base, PHONE if phone else LAPTOP)
    page = ctx.new_page()
    try:
        _open(page, f"{base}/{PAGE}")
        rows = page.evaluate(ROWS_JS)
        problems = math_problems(rows) + link_problems(page, base, rows)
        more, lay = layout_problems(page, phone=phone)
        problems += more
        REPORT[kind] = {"rows": lay["rows"], "page_height": lay["height"], "median_row": round(lay["median"]),
                        "math_rows": sum(1 for r in rows if r["math"])}
        if phone:
            problems += tap_problems(page, "rw-thm-6") + tap_problems(page, "adt-9-10-c1")
        problems += filter_problems(page)
        # following an erratum link from the page, and a row's own anchor
        for stem, eid in (("objpert_ex_post", "E-rw-6-signs"), ("privacy_report", "E-rw-12-lower-value"),
                          ("ops_adaops", "E-wang-B.7-sigma")):
            if eid in CHAPTER_ERRATA.get(stem, []):
                problems += follow_erratum_problems(page, base, stem, eid)
        _open(page, f"{base}/{PAGE}#wang-prop-4-3")
        if page.evaluate("() => document.querySelector(':target')?.id") != "wang-prop-4-3":
            problems.append("results.html#wang-prop-4-3 does not target its row")
    finally:
        ctx.close()
    assert not problems, "\n".join(problems[:40])


def test_without_javascript_every_detail_is_shown(served):
    browser, base = served
    ctx = _context(browser, base, PHONE, java_script_enabled=False)
    page = ctx.new_page()
    try:
        page.goto(f"{base}/{PAGE}", wait_until="load")
        problems, lay = layout_problems(page, phone=True, script=False)
        with_details = sum(1 for r in RESULTS if (r.get("evidence") or r.get("errata") or r.get("fn")))
        assert lay["shownDetails"] >= with_details and not lay["filters"] and lay["toggles"] == 0, lay
        assert not problems, problems
        REPORT["phone_without_js"] = lay["height"]
    finally:
        ctx.close()


def test_the_checks_reject_wrong_pages(served):
    """A name linked to a missing anchor, an erratum item without its anchor, raw TeX, no stylesheet, no script."""
    browser, base = served
    html = (BOOK / PAGE).read_text(encoding="utf-8")
    chap = (BOOK / "chapters" / "objpert_ex_post.html").read_text(encoding="utf-8")
    assert html.count('href="objpert_ex_post.html#thm-rw-6"') >= 1
    wrong_link = html.replace('href="objpert_ex_post.html#thm-rw-6"', 'href="objpert_ex_post.html#thm-rw-66"')
    assert chap.count('id="E-rw-6-signs"') == 1
    no_anchor = chap.replace('id="E-rw-6-signs"', 'id="e-rw-6-signs"')
    row = re.search(r'<tr [^>]*id="rw-thm-8".*?</tr>', html, re.S).group(0)
    ev = re.search(r'<td class="[^"]*pdpkit-col-evidence[^"]*"><p>', row).group(0)
    raw_tex = html.replace(row, row.replace(ev, ev + "e^{-cd t^{3/2}} "))
    no_css = re.sub(r'<link[^>]*pdpkit_results\.css[^>]*>', "", html)
    no_js = re.sub(r'<script[^>]*pdpkit_results\.js[^>]*></script>', "", html)
    assert no_css != html and no_js != html
    pages = {"chapters/wrong_link.html": wrong_link, "chapters/objpert_ex_post.html": no_anchor,
             "chapters/raw_tex.html": raw_tex, "chapters/no_css.html": no_css, "chapters/no_js.html": no_js}
    ctx = _context(browser, base, PHONE, pages)
    page = ctx.new_page()
    try:
        _open(page, f"{base}/chapters/wrong_link.html")
        rows = page.evaluate(ROWS_JS)
        got = link_problems(page, base, rows, rel="chapters/wrong_link.html")
        assert any("rw Thm 6: the name does not link to its block thm-rw-6" in p for p in got), got[:5]
        assert any("rw Thm 6: the link" in p and "leads nowhere" in p for p in got), got[:5]
        assert any("objpert_ex_post#E-rw-6-signs: no element" in p for p in got), got[:5]
        assert any("E-rw-6-signs" in p and "leads nowhere" in p for p in got), got[:5]
        assert follow_erratum_problems(page, base, "objpert_ex_post", "E-rw-6-signs") != []
        _open(page, f"{base}/chapters/raw_tex.html")
        got = math_problems(page.evaluate(ROWS_JS))
        assert len(got) == 1 and got[0].startswith("rw Thm 8: raw TeX ['^{'] in the evidence"), got
        _open(page, f"{base}/chapters/no_css.html")
        got, lay = layout_problems(page, phone=True)
        assert any("phone page is" in p for p in got) and any("details before a tap" in p for p in got), (got, lay)
        REPORT["phone_plain_table"] = lay["height"]
        _open(page, f"{base}/chapters/no_js.html")
        assert filter_problems(page) == ["no filter form"]
        got, _ = layout_problems(page, phone=True)
        assert any("toggles" in p for p in got), got
    finally:
        ctx.close()
    ctx = _context(browser, base, LAPTOP, pages)
    page = ctx.new_page()
    try:
        _open(page, f"{base}/chapters/no_css.html")
        page.add_style_tag(content="table.pdpkit-results td.pdpkit-col-name, table.pdpkit-results td.pdpkit-col-name *"
                                   " { overflow-wrap: anywhere !important; word-break: break-all !important; }"
                                   " table.pdpkit-results td.pdpkit-col-name { width: 3rem; max-width: 3rem; }")
        got, _ = layout_problems(page, phone=False)
        assert any("break across lines" in p for p in got), got
        page.add_style_tag(content=".bd-article { min-width: 1600px; }")
        got, _ = layout_problems(page, phone=False)
        assert any("sideways" in p for p in got), got
    finally:
        ctx.close()
