"""Screenshot of a release's privacy page in headless Chromium, as a phone shows it.

Usage: ``python tests/browser/page_screenshot.py RELEASE.json OUT.png [--width 390] [--key KEY.pem]``.
The page (:func:`pdpkit.page.privacy_page`, signed with ``--key`` if given) is served from an
https address the script answers itself (a secure context, so the page can check its data with
Web Crypto; every other request is refused), the page's check is awaited, the form is filled
with the middle of each numeric range and the first category, the label is left at "I don't
know", the bound is computed, and the whole page is saved.
"""

from __future__ import annotations

import argparse
import pathlib

from playwright.sync_api import sync_playwright

from pdpkit.page import page_data, privacy_page
from pdpkit.release import Release

CHROMIUM = "/usr/bin/chromium"
URL = "https://pdpkit.invalid/privacy.html"  # answered by this script


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release")
    ap.add_argument("out")
    ap.add_argument("--width", type=int, default=390)
    ap.add_argument("--book-url", default=None)
    ap.add_argument("--key", default=None, help="the publisher's private key (PEM): the page is signed with it")
    args = ap.parse_args()
    rel = Release.from_json(pathlib.Path(args.release).read_text(encoding="utf-8"))
    html = privacy_page(rel, book_url=args.book_url, private_key=args.key)
    fields = page_data(rel)["inputs"]["fields"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
        ctx = browser.new_context(viewport={"width": args.width, "height": 800}, device_scale_factor=2)
        ctx.route("**/*", lambda route: route.fulfill(status=200, content_type="text/html; charset=utf-8", body=html)
                  if route.request.url == URL else route.abort())
        page = ctx.new_page()
        page.goto(URL, wait_until="load")
        page.wait_for_function("window.PDP_PAGE && PDP_PAGE.state !== 'checking'")
        if page.evaluate("PDP_PAGE.state") != "ready":
            print(f"the page refuses: {page.evaluate('PDP_PAGE.error')}")
        else:
            for i, f in enumerate(fields):
                if f["kind"] == "numeric":
                    mid = 0.0 if f["low"] is None else 0.5 * (f["low"] + f["high"])
                    page.fill(f"#f{i}", f"{mid:g}")
                else:
                    page.select_option(f"#f{i}", index=0)
            page.click("#compute")
        page.screenshot(path=args.out, full_page=True)
        browser.close()
    print(f"wrote {args.out}: {len(html.encode('utf-8')) / 1024:.0f} KB page at {args.width} px")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
