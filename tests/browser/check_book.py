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
async () => {
  const describe = (el) => (el.innerText || el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 70);
  const overflowing = () => {
    const out = [];
    const col = document.querySelector('.bd-article, article, main');
    const colRight = col ? col.getBoundingClientRect().right : window.innerWidth;
    // display equations: the box must hold its content, and the content must fit the column
    document.querySelectorAll('mjx-container[display="true"]').forEach(el => {
      const inner = el.querySelector('mjx-math') || el;
      const r = inner.getBoundingClientRect();
      const box = el.getBoundingClientRect();
      const over = Math.max(el.scrollWidth - el.clientWidth, r.right - Math.min(box.right, colRight),
                            Math.max(box.left, 0) - r.left);
      if (over > 1) out.push(`equation overflows by ${Math.round(over)}px: ${describe(el)}`);
    });
    // inline math (text and outputs, e.g. sympy's LaTeX) must not run past the column either
    document.querySelectorAll('mjx-container:not([display="true"])').forEach(el => {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.right > colRight + 1) {
        out.push(`inline math overflows by ${Math.round(r.right - colRight)}px: ${describe(el)}`);
      }
    });
    document.querySelectorAll('table').forEach(t => {
      const box = t.parentElement;
      if (box.scrollWidth > box.clientWidth + 1 || t.getBoundingClientRect().right > colRight + 1) {
        out.push(`table overflows by ${box.scrollWidth - box.clientWidth}px: ${describe(t)}`);
      }
    });
    document.querySelectorAll('pre').forEach(el => {
      if (el.scrollWidth > el.clientWidth + 1) {
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
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})

        def route(r):
            host = urlparse(r.request.url).hostname
            if host in ("127.0.0.1", "localhost"):
                return r.continue_()
            blocked.append(r.request.url)
            return r.abort()

        context.route("**/*", route)
        page = context.new_page()
        console_errors: list[str] = []
        page.on("pageerror", lambda exc: None if KNOWN_JS_ERRORS.search(str(exc)) else console_errors.append(str(exc)))
        for rel in pages:
            page.goto(f"{base}/{rel}", wait_until="load")
            info = page.evaluate(PAGE_CHECK_JS)
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
            if info["overflow"]:
                problems.append(f"{len(info['overflow'])} element(s) wider than their box: " + " | ".join(info["overflow"]))
            if info["shrunk_img"]:
                problems.append(f"figures shrunk below legibility: {info['shrunk_img']}")
            stem = pathlib.PurePosixPath(rel).stem
            if rel.startswith("chapters/") and rel.count("/") == 1 and info["n_img"]:
                img = page.locator("article img, main img, .bd-article img").nth(info["widest_img"])
                img.scroll_into_view_if_needed()
                img.screenshot(path=str(shot_dir / f"{stem}_figure.png"))
                theorem = page.locator("div.proof.theorem").first
                if not theorem.count():
                    theorem = page.locator("div.proof.lemma, div.proof.definition").first
                if theorem.count():
                    theorem.scroll_into_view_if_needed()
                    theorem.screenshot(path=str(shot_dir / f"{stem}_theorem.png"))
            if rel == MAIN_CHAPTER:
                if info["n_mjx"] == 0:
                    problems.append("no MathJax output (mjx-container) on the main chapter")
                if info["n_img"] == 0:
                    problems.append("no figure on the main chapter")
                page.screenshot(path=str(shot_dir / "per_instance_dp.png"), full_page=True)
                # and one screen around the profile theorem, legible at a glance
                page.locator("div#thm-rkw-b1").scroll_into_view_if_needed()
                page.screenshot(path=str(shot_dir / "per_instance_dp_math.png"))
            status = "ok" if not problems else "FAIL: " + "; ".join(problems)
            line = f"{rel:55s} math {info['n_mjx']:4d}  images {info['n_img']:3d}  {status}"
            print(line.encode("utf-8", "replace").decode("utf-8"))
            failures += [f"{rel}: {p}" for p in problems]
        if console_errors:
            failures += [f"JavaScript error: {e}" for e in console_errors]
        browser.close()
    server.shutdown()
    if blocked:
        print(f"note: {len(blocked)} request(s) to other hosts were blocked, e.g. {blocked[0]}")
    print(f"screenshots: {shot_dir / 'per_instance_dp.png'}, {shot_dir / 'per_instance_dp_math.png'}")
    if failures:
        print("\n".join(["FAILED:"] + failures).encode("utf-8", "replace").decode("utf-8"))
        return 1
    print(f"browser check passed: {len(pages)} pages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
