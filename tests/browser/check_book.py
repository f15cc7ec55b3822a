"""Open the built book in headless Chromium, offline, and check what a reader sees.

Usage: ``python tests/browser/check_book.py _build/html`` (``make browser-test``).

For every HTML page of the book:

* no Python traceback or execution error appears in the page text;
* every ``<img>`` has loaded (``complete`` and a non-zero natural width);
* every math element was typeset by MathJax (``mjx-container`` inside each
  ``.math`` element) and no raw ``$$`` or ``\\[`` delimiter is left in the text;
* no request leaves localhost (all others are aborted, so MathJax must be served
  from the build itself);
* nothing overflows its column: no display equation, table, code cell or output whose
  content is wider than its box (``scrollWidth > clientWidth``), and no typeset
  equation wider than the text column;
* no figure is shrunk below half its pixel width, less 5% (figures are 2× PNGs drawn at the
  page width, so a figure shrunk further has text below the legible size).

The per-instance DP chapter must contain math and figures, and a full-page
screenshot of it is saved to ``_build/browser/per_instance_dp.png`` (and one screen
around the privacy-profile theorem to ``per_instance_dp_math.png``). For every chapter,
``<chapter>_figure.png`` shows its widest figure as displayed and ``<chapter>_theorem.png``
its first theorem block with the source's number in the title.

Every page is checked at two widths, a laptop (1280 px) and a phone (390 px):

* the page itself never scrolls sideways (``scrollWidth`` of the document within the
  viewport): long names wrap, tables and wide code scroll inside their own box;
* every image is shown at its file's aspect ratio (within 2 %): a figure may shrink
  on a phone, but never be squashed;
* a display equation wider than its box must be a deliberately scrollable one
  (``overflow-x: auto`` or ``scroll``), never clipped; inline math stays in the column;
* on one chapter the navigation works: clicking ☰ opens (on a phone) or closes and
  reopens (on a laptop) the table of contents, the page-contents button shows the
  page's contents, and the search button opens a search field whose query lists results.

A screenshot of every chapter's first screen at 390 px goes to
``_build/browser/<chapter>_390.png`` (beside the HTML, never into the tracked tree).
"""

from __future__ import annotations

import functools
import http.server
import pathlib
import re
import sys
import threading
from urllib.parse import urlparse

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
MAIN_CHAPTER = "chapters/per_instance_dp.html"
# Jupyter Book 1.x with Sphinx 7.4 emits sphinx-thebe's inline configuration script
# twice; the second `const` declaration throws. Thebe (live code cells) is disabled in
# this book and needs the network anyway, so this one error is known and harmless.
KNOWN_JS_ERRORS = re.compile(r"Identifier 'THEBE_JS_URL' has already been declared")

PAGE_CHECK_JS = r"""
async (narrow) => {
  const describe = (el) => (el.innerText || el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 70);
  const scrollable = (el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  // inside a deliberately scrollable box (a table or code block) that itself fits the column
  const insideScrollBox = (el) => {
    const col = document.querySelector('.bd-article') || document.querySelector('article') || document.querySelector('main');
    const colRight = col ? col.getBoundingClientRect().right : window.innerWidth;
    for (let a = el.parentElement; a && a !== col; a = a.parentElement) {
      if (a.tagName !== 'MJX-CONTAINER' && scrollable(a) && a.scrollWidth > a.clientWidth + 1) {
        return a.getBoundingClientRect().right <= colRight + 1;
      }
    }
    return false;
  };
  const overflowing = () => {
    const out = [];
    const col = document.querySelector('.bd-article') || document.querySelector('article') || document.querySelector('main');
    const colRight = col ? col.getBoundingClientRect().right : window.innerWidth;
    // display equations: the box must hold its content, and the content must fit the column
    (col || document).querySelectorAll('mjx-container[display="true"]').forEach(el => {
      const inner = el.querySelector('mjx-math') || el;
      const box = el.getBoundingClientRect();
      if (box.right > colRight + 1 || box.left < -1) {
        out.push(`equation box runs past the column by ${Math.round(box.right - colRight)}px: ${describe(el)}`);
        return;
      }
      const wider = Math.max(el.scrollWidth - el.clientWidth, inner.getBoundingClientRect().width - box.width);
      if (wider > 1) {
        if (scrollable(el)) { window.__pdpkitScrollable = (window.__pdpkitScrollable || 0) + 1; }
        else out.push(`equation clipped by ${Math.round(wider)}px (not scrollable): ${describe(el)}`);
      }
    });
    // inline math (text and outputs, e.g. sympy's LaTeX) must not run past the column either
    // a long inline formula on a phone: a scrollable inline box that stays in the column
    // math of the article (the page-contents sidebar, off screen on a phone, is not the page)
    (col || document).querySelectorAll('mjx-container:not([display="true"])').forEach(el => {
      const r = el.getBoundingClientRect();
      if (insideScrollBox(el)) return;  // e.g. a cell of a table that scrolls in its own box
      if (r.width > 0 && r.right > colRight + 1) {
        out.push(`inline math overflows by ${Math.round(r.right - colRight)}px: ${describe(el)}`);
      } else if (el.scrollWidth > el.clientWidth + 1 && !scrollable(el)) {
        out.push(`inline math clipped by ${el.scrollWidth - el.clientWidth}px: ${describe(el)}`);
      }
    });
    // tables and code: at the laptop width they fit; on a phone they may scroll inside
    // their own box (the page itself must not)
    document.querySelectorAll('table').forEach(t => {
      const box = t.parentElement;
      const over = Math.max(box.scrollWidth - box.clientWidth, t.scrollWidth - t.clientWidth);
      if (t.getBoundingClientRect().right > colRight + 1 ||
          (over > 1 && !(narrow && (scrollable(t) || scrollable(box))))) {
        out.push(`table overflows by ${over}px: ${describe(t)}`);
      }
    });
    document.querySelectorAll('pre').forEach(el => {
      if (el.scrollWidth > el.clientWidth + 1 && !(narrow && scrollable(el))) {
        out.push(`code overflows by ${el.scrollWidth - el.clientWidth}px: ${describe(el)}`);
      }
    });
    return out;
  };
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  const imgs = Array.from(document.querySelectorAll('article img, main img, .bd-article img'));
  await Promise.all(imgs.map(img => img.complete ? null :
      new Promise(r => { img.addEventListener('load', r); img.addEventListener('error', r); })));
  const mathEls = Array.from(document.querySelectorAll('.math, span.math, div.math'));
  const untypeset = mathEls.filter(el => !el.querySelector('mjx-container')).length;
  const text = document.body.innerText;
  // prose only: drop code, outputs and typeset math, then look for leftover TeX delimiters
  const article = (document.querySelector('article') || document.body).cloneNode(true);
  article.querySelectorAll('pre, code, .cell_output, .output, mjx-container, script, style').forEach(el => el.remove());
  const prose = article.innerText;
  return {
    mathjax: typeof window.MathJax !== 'undefined',
    n_math: mathEls.length,
    n_mjx: document.querySelectorAll('mjx-container').length,
    untypeset: untypeset,
    raw_display: text.includes('$$') || text.includes('\\['),
    stray_dollar: (prose.match(/[^\n]{0,40}\$[^\n]{0,40}/g) || []).slice(0, 3),
    traceback: /Traceback \(most recent call last\)|Error in cell|CellExecutionError/.test(text),
    n_img: imgs.length,
    broken_img: imgs.filter(img => !(img.complete && img.naturalWidth > 0)).map(img => img.src),
    overflow: overflowing(),
    n_scrollable: window.__pdpkitScrollable || 0,
    page_scroll: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth) - window.innerWidth,
    squashed_img: imgs.filter(img => {
        const r = img.getBoundingClientRect();
        if (!(img.naturalWidth > 0 && r.width > 0 && r.height > 0)) return false;
        const natural = img.naturalWidth / img.naturalHeight, shown = r.width / r.height;
        return Math.abs(shown / natural - 1) > 0.02;
      }).map(img => `${img.src.split('/').pop()} shown ${Math.round(img.getBoundingClientRect().width)}x${Math.round(img.getBoundingClientRect().height)}, file ${img.naturalWidth}x${img.naturalHeight}`),
    // an alt text that is empty or a file name/hash says nothing to a reader who cannot see
    alt_missing: imgs.filter(img => img.closest('figure, .cell_output')).filter(img => { const alt = (img.getAttribute('alt') || '').trim();
        return alt.length < 12 || /[0-9a-f]{32,}|\.png$/i.test(alt); }).length,
    shrunk_img: imgs.filter(img => img.naturalWidth > 0 &&
        img.getBoundingClientRect().width < 0.95 * img.naturalWidth / 2)
        .map(img => `${img.src.split('/').pop()} shown at ${Math.round(img.getBoundingClientRect().width)}px of ${img.naturalWidth}px`),
    widest_img: imgs.reduce((best, img, i) =>
        (best < 0 || img.getBoundingClientRect().width > imgs[best].getBoundingClientRect().width) ? i : best, -1),
  };
}
"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args, **kwargs) -> None:
        pass


def _serve(root: pathlib.Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


WIDTHS = {"laptop": (1280, 900), "phone": (390, 844)}
# Chapters being rewritten whose figures do not carry alt texts yet (tests/test_book.py's
# PENDING_CHAPTERS): reported, not failed. Empty it once the chapter has them.
PENDING_ALT: set[str] = set()
NAV_PAGE = "chapters/objpert_accounting.html"

NAV_STATE_JS = r"""
() => {
  const shown = (el) => {
    if (!el) return false;
    const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
    return r.width > 40 && r.height > 40 && r.right > 0 && r.left < window.innerWidth &&
      cs.visibility !== 'hidden' && cs.display !== 'none' && parseFloat(cs.opacity || '1') > 0.1;
  };
  const primary = document.querySelector('.bd-sidebar-primary');
  const secondary = document.querySelector('.bd-sidebar-secondary');
  const tocLink = primary && Array.from(primary.querySelectorAll('a')).find(a => shown(a.parentElement) && a.getBoundingClientRect().width > 0);
  const search = Array.from(document.querySelectorAll('input[name="q"], input.form-control'))
      .find(el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden'; });
  const visibleButtons = (sel) => Array.from(document.querySelectorAll(sel)).filter(b => {
      const r = b.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(b).visibility !== 'hidden'; }).length;
  return {
    primary: shown(primary) && !!tocLink,
    secondary: shown(secondary) && !!secondary.querySelector('a'),
    search_open: !!search,
    n_primary_toggles: visibleButtons('.primary-toggle'),
    n_search_buttons: visibleButtons('.search-button__button, .search-button-field'),
  };
}
"""


def _visible_click(page, selector: str) -> bool:
    """Click the first *visible* element matching ``selector``; False when none is visible."""
    loc = page.locator(selector)
    for k in range(loc.count()):
        if loc.nth(k).is_visible():
            loc.nth(k).click()
            page.wait_for_timeout(400)
            return True
    return False


def _check_navigation(page, base: str, width_name: str) -> list[str]:
    """Click ☰, the page-contents button and search; return what did not work."""
    problems: list[str] = []
    page.goto(f"{base}/{NAV_PAGE}", wait_until="load")
    state = page.evaluate(NAV_STATE_JS)
    if state["n_primary_toggles"] != 1:
        problems.append(f"{state['n_primary_toggles']} visible ☰ buttons (want exactly one)")
    if state["n_search_buttons"] > 1:
        problems.append(f"{state['n_search_buttons']} visible search buttons (want one)")
    if width_name == "phone":
        if state["primary"]:
            problems.append("the table of contents is open before ☰ is clicked")
        if not _visible_click(page, ".primary-toggle"):
            problems.append("no visible ☰ button")
        elif not page.evaluate(NAV_STATE_JS)["primary"]:
            problems.append("☰ does not open the table of contents")
        page.keyboard.press("Escape")
        page.goto(f"{base}/{NAV_PAGE}", wait_until="load")
        if not _visible_click(page, ".secondary-toggle"):
            problems.append("no visible page-contents button")
        elif not page.evaluate(NAV_STATE_JS)["secondary"]:
            problems.append("the page-contents button does not show the page's contents")
        page.goto(f"{base}/{NAV_PAGE}", wait_until="load")
    else:
        if not state["primary"]:
            problems.append("the table of contents is not shown at the laptop width")
        if not state["secondary"]:
            problems.append("the page's contents are not shown at the laptop width")
        if not _visible_click(page, ".primary-toggle"):
            problems.append("no visible ☰ button")
        else:
            if page.evaluate(NAV_STATE_JS)["primary"]:
                problems.append("☰ does not hide the table of contents")
            _visible_click(page, ".primary-toggle")
            if not page.evaluate(NAV_STATE_JS)["primary"]:
                problems.append("a second ☰ click does not bring the table of contents back")
    # search: the button opens a field; a query lists results on search.html
    if not _visible_click(page, ".search-button__button, .search-button-field"):
        problems.append("no visible search button")
    elif not page.evaluate(NAV_STATE_JS)["search_open"]:
        problems.append("the search button opens no search field")
    else:
        page.keyboard.type("privacy profile")
        page.keyboard.press("Enter")
        page.wait_for_load_state("load")
        try:
            page.wait_for_selector("#search-results ul.search li", timeout=15000)
        except Exception:  # noqa: BLE001 - reported below
            problems.append(f"search lists no results (at {page.url.split('/')[-1]})")
    return problems


def main(argv: list[str]) -> int:
    root = pathlib.Path(argv[1] if len(argv) > 1 else "_build/html").resolve()
    if not (root / "index.html").exists():
        print(f"no book at {root} (run `make book` first)")
        return 2
    shot_dir = root.parent / "browser"
    shot_dir.mkdir(parents=True, exist_ok=True)
    pages = []
    for path in sorted(root.rglob("*.html")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(("_static", "_sources", "_modules")):
            continue
        text = path.read_text(errors="replace")
        redirect = re.search(r'http-equiv="Refresh" content="0; url=([^"]+)"', text, re.IGNORECASE)
        if redirect:  # a redirect stub (index.html): its target must exist
            if not (path.parent / redirect.group(1)).exists():
                print(f"FAIL: {rel} redirects to a missing page {redirect.group(1)}")
                return 1
            continue
        pages.append(rel)
    if MAIN_CHAPTER not in pages:
        print(f"FAIL: {MAIN_CHAPTER} is missing from the build")
        return 1
    server, base = _serve(root)
    failures: list[str] = []
    blocked: list[str] = []
    summary: dict[str, dict[str, int]] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)

        def route(r):
            host = urlparse(r.request.url).hostname
            if host in ("127.0.0.1", "localhost"):
                return r.continue_()
            blocked.append(r.request.url)
            return r.abort()

        for width_name, (width, height) in WIDTHS.items():
            narrow = width_name == "phone"
            context = browser.new_context(viewport={"width": width, "height": height})
            context.route("**/*", route)
            page = context.new_page()
            console_errors: list[str] = []
            page.on("pageerror", lambda exc, errs=console_errors: None if KNOWN_JS_ERRORS.search(str(exc)) else errs.append(str(exc)))
            counts = summary.setdefault(width_name, {"pages": 0, "failed": 0, "scrollable": 0, "images": 0})
            print(f"== {width_name}: {width} x {height} px")
            for rel in pages:
                page.goto(f"{base}/{rel}", wait_until="load")
                info = page.evaluate(PAGE_CHECK_JS, narrow)
                problems = []
                if info["traceback"]:
                    problems.append("shows a Python traceback / execution error")
                if info["broken_img"]:
                    problems.append(f"images that did not load: {info['broken_img']}")
                if info["n_math"] and (not info["mathjax"] or info["untypeset"]):
                    problems.append(f"{info['untypeset']} of {info['n_math']} math elements not typeset by MathJax")
                if info["stray_dollar"]:
                    problems.append(f"stray $ in the prose (math that did not parse): {info['stray_dollar']}")
                if info["raw_display"]:
                    problems.append("raw $$ or \\[ math delimiters left in the text")
                if info["page_scroll"] > 1:
                    problems.append(f"the page scrolls sideways by {info['page_scroll']}px")
                if info["overflow"]:
                    problems.append(f"{len(info['overflow'])} element(s) wider than their box: " + " | ".join(info["overflow"]))
                if info["squashed_img"]:
                    problems.append(f"images not at their file's aspect ratio: {info['squashed_img']}")
                if info["alt_missing"] and rel in PENDING_ALT:
                    print(f"note: {rel}: {info['alt_missing']} image(s) without alt text (pending)")
                elif info["alt_missing"]:
                    problems.append(f"{info['alt_missing']} image(s) without a meaningful alt text")
                if not narrow and info["shrunk_img"]:
                    problems.append(f"figures shrunk below legibility: {info['shrunk_img']}")
                stem = pathlib.PurePosixPath(rel).stem
                is_chapter = rel.startswith("chapters/") and rel.count("/") == 1
                if narrow and (is_chapter or rel == "chapters/intro.html"):
                    page.screenshot(path=str(shot_dir / f"{stem}_390.png"))
                if not narrow and is_chapter and info["n_img"]:
                    img = page.locator("article img, main img, .bd-article img").nth(info["widest_img"])
                    img.scroll_into_view_if_needed()
                    img.screenshot(path=str(shot_dir / f"{stem}_figure.png"))
                    theorem = page.locator("div.proof.theorem").first
                    if not theorem.count():
                        theorem = page.locator("div.proof.lemma, div.proof.definition").first
                    if theorem.count():
                        theorem.scroll_into_view_if_needed()
                        theorem.screenshot(path=str(shot_dir / f"{stem}_theorem.png"))
                if rel == MAIN_CHAPTER and not narrow:
                    if info["n_mjx"] == 0:
                        problems.append("no MathJax output (mjx-container) on the main chapter")
                    if info["n_img"] == 0:
                        problems.append("no figure on the main chapter")
                    page.screenshot(path=str(shot_dir / "per_instance_dp.png"), full_page=True)
                    page.locator("div#thm-rkw-b1").scroll_into_view_if_needed()
                    page.screenshot(path=str(shot_dir / "per_instance_dp_math.png"))
                counts["pages"] += 1
                counts["failed"] += bool(problems)
                counts["scrollable"] += info["n_scrollable"]
                counts["images"] += info["n_img"]
                status = "ok" if not problems else "FAIL: " + "; ".join(problems)
                line = f"{rel:55s} math {info['n_mjx']:4d}  images {info['n_img']:3d}  scroll-eq {info['n_scrollable']:3d}  {status}"
                print(line.encode("utf-8", "replace").decode("utf-8"))
                failures += [f"[{width}px] {rel}: {p}" for p in problems]
            nav = _check_navigation(page, base, width_name)
            print(f"navigation at {width} px: " + ("ok (☰, page contents, search)" if not nav else "FAIL: " + "; ".join(nav)))
            failures += [f"[{width}px] navigation: {p}" for p in nav]
            failures += [f"[{width}px] JavaScript error: {e}" for e in console_errors]
            context.close()
        browser.close()
    server.shutdown()
    if blocked:
        print(f"note: {len(blocked)} request(s) to other hosts were blocked, e.g. {blocked[0]}")
    for width_name, c in summary.items():
        print(f"{width_name}: {c['pages']} pages, {c['failed']} failing, {c['images']} images, "
              f"{c['scrollable']} wide displays scroll in their own box")
    print(f"screenshots: {shot_dir}/<chapter>_390.png, {shot_dir / 'per_instance_dp.png'}")
    if failures:
        print("\n".join(["FAILED:"] + failures).encode("utf-8", "replace").decode("utf-8"))
        return 1
    print(f"browser check passed: {len(pages)} pages at {' and '.join(str(w) for w, _ in WIDTHS.values())} px")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
