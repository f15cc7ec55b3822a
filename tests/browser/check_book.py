"""Open the built book in headless Chromium, offline, and check what a reader sees.

Usage: ``python tests/browser/check_book.py _build/html`` (``make browser-test``).

For every HTML page of the book:

* no Python traceback or execution error appears in the page text;
* every ``<img>`` has loaded (``complete`` and a non-zero natural width);
* every math element was typeset by MathJax (``mjx-container`` inside each
  ``.math`` element) and no raw ``$$`` or ``\\[`` delimiter is left in the text;
* no request leaves localhost (all others are aborted, so MathJax must be served
  from the build itself).

The per-instance DP chapter must contain math and figures, and a full-page
screenshot of it is saved to ``_build/browser/per_instance_dp.png`` (and one screen
around the privacy-profile theorem to ``per_instance_dp_math.png``).
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
            if rel == MAIN_CHAPTER:
                if info["n_mjx"] == 0:
                    problems.append("no MathJax output (mjx-container) on the main chapter")
                if info["n_img"] == 0:
                    problems.append("no figure on the main chapter")
                page.screenshot(path=str(shot_dir / "per_instance_dp.png"), full_page=True)
                # and one screen around the profile theorem, legible at a glance
                page.locator("#thm-pdp-gauss-profile").scroll_into_view_if_needed()
                page.screenshot(path=str(shot_dir / "per_instance_dp_math.png"))
            status = "ok" if not problems else "FAIL: " + "; ".join(problems)
            print(f"{rel:55s} math {info['n_mjx']:4d}  images {info['n_img']:3d}  {status}")
            failures += [f"{rel}: {p}" for p in problems]
        if console_errors:
            failures += [f"JavaScript error: {e}" for e in console_errors]
        browser.close()
    server.shutdown()
    if blocked:
        print(f"note: {len(blocked)} request(s) to other hosts were blocked, e.g. {blocked[0]}")
    print(f"screenshots: {shot_dir / 'per_instance_dp.png'}, {shot_dir / 'per_instance_dp_math.png'}")
    if failures:
        print("\n".join(["FAILED:"] + failures))
        return 1
    print(f"browser check passed: {len(pages)} pages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
