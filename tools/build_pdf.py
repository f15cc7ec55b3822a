"""Build the whole book as one PDF: ``_build/pdf/pdpkit.pdf`` (``make pdf``).

Usage: ``python tools/build_pdf.py [--out PDF] [--html DIR]``.

1. The book is built with Sphinx's ``singlehtml`` builder from the outputs stored in the notebooks (no execution),
   with a configuration derived from ``_config.yml`` (``_build/_config_pdf.yml``: ``execute_notebooks: "off"``, the
   local extensions by absolute path, ``pdpkit_pdf_print: true``, which adds ``_static/pdpkit_print.css``). One HTML
   document keeps the book's numbering (chapters, figures, theorem blocks), its bibliography, and turns every
   cross-reference into an anchor of the same document.
2. Headless Chromium (Debian's, driven by playwright) opens it from a server on 127.0.0.1, waits for MathJax to
   typeset every formula and for every image, opens the exercises' solutions (the code cells the web book hides
   stay out), leaves out the web book's sidebars and buttons, removes the links to files that are not in the PDF
   (source pages, full-size figures), scales down what is wider than the page (display equations, tables), and
   prints it: A4, page numbers in the footer, an outline (bookmarks) from the headings, tagged. Sphinx writes the
   single page as ``chapters/intro.html`` (the root document) with the paths of a page at the top of the output, so
   it is served as ``/index.html``, and its links to itself become bare ``#anchors``.
3. The PDF is read back (``PdfFile``: a small reader for Chromium's uncompressed object layout) and checked: pages,
   every internal link's named destination defined, the outline, the chapters' titles in the outline and the text.
   The closing line gives its page count, size and the build time.

``--html DIR`` prints an existing single-page build instead of building one. A cross-reference whose target is not
on the page, or a link the check refuses, fails the build.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import pathlib
import re
import shutil
import subprocess
import sys
import threading
import time
import zlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
CONFIG = ROOT / "_build" / "_config_pdf.yml"
BOOK_OUT = ROOT / "_build" / "pdf" / "book"  # jupyter-book writes BOOK_OUT/_build/singlehtml
PDF = ROOT / "_build" / "pdf" / "pdpkit.pdf"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

# The page: A4, 14 mm margins at the sides, room for the header and footer; printed at SCALE, so the text column is
# about 840 CSS pixels wide (the web book's column on a laptop) and the body text about 10 pt.
MM = 96 / 25.4  # CSS pixels per millimetre
PAGE_MM = (210.0, 297.0)
MARGIN_MM = {"top": 16.0, "bottom": 16.0, "left": 14.0, "right": 14.0}
SCALE = 0.78
HEADER = ('<div style="font-size:7.5pt;width:100%;padding:0 14mm;color:#666;font-family:sans-serif;'
          'text-align:right"><span class="title"></span></div>')
FOOTER = ('<div style="font-size:7.5pt;width:100%;text-align:center;color:#666;font-family:sans-serif">'
          '<span class="pageNumber"></span> / <span class="totalPages"></span></div>')


def layout_width() -> int:
    """The width in CSS pixels that the printed page lays its column out in."""
    return int((PAGE_MM[0] - MARGIN_MM["left"] - MARGIN_MM["right"]) * MM / SCALE)


def pdf_config(text: str, ext_dir: pathlib.Path | str) -> str:
    """The PDF build's configuration from ``_config.yml``'s text: stored outputs, extensions by path, print style."""
    import yaml

    config = yaml.safe_load(text)
    execute = config.get("execute")
    sphinx = config.get("sphinx")
    if not isinstance(execute, dict) or "execute_notebooks" not in execute:
        raise ValueError("_config.yml has no execute.execute_notebooks")
    if not isinstance(sphinx, dict) or not sphinx.get("local_extensions") or "config" not in sphinx:
        raise ValueError("_config.yml has no sphinx.local_extensions or sphinx.config")
    execute["execute_notebooks"] = "off"
    sphinx["local_extensions"] = {name: str(pathlib.Path(ext_dir).resolve()) for name in sphinx["local_extensions"]}
    sphinx["config"]["pdpkit_pdf_print"] = True
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True)


def build_html(config: pathlib.Path = CONFIG, out: pathlib.Path = BOOK_OUT) -> pathlib.Path:
    """Build the single-page book (incrementally: a second run reads only what changed); its directory."""
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(pdf_config((ROOT / "_config.yml").read_text(), ROOT / "_ext"))
    jb = pathlib.Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb) if jb.exists() else "jupyter-book", "build", str(ROOT), "--builder", "singlehtml",
           "--config", str(config), "--path-output", str(out), "-n", "--keep-going"]
    print("$", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout)
    warnings = [line for line in log.splitlines() if "WARNING" in line or "ERROR" in line]
    for line in warnings:
        print(line)
    html = out / "_build" / "singlehtml"
    if proc.returncode != 0 or not (html / "index.html").exists():
        print(log[-4000:])
        raise SystemExit(f"the single-page build failed (exit {proc.returncode})")
    print(f"single-page book: {html / 'index.html'} ({len(warnings)} warnings)", flush=True)
    return html


class _BookHandler(http.server.SimpleHTTPRequestHandler):
    """Files of the build; ``/`` and ``/index.html`` are the book's page (``root``), quietly."""

    root = "index.html"

    def translate_path(self, path: str) -> str:
        if path.split("?", 1)[0].split("#", 1)[0] in ("/", "/index.html"):
            path = "/" + self.root
        return super().translate_path(path)

    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def serve(directory: pathlib.Path, root: str = "index.html"):
    """``directory`` over http on 127.0.0.1 (a free port), ``root`` at ``/index.html``; yields the base URL.

    Sphinx's ``singlehtml`` builder writes the root document's file (``chapters/intro.html``) with the paths of a
    page at the top of the output (``_static/``, ``_images/``): it is served there.
    """
    handler = functools.partial(type("Handler", (_BookHandler,), {"root": root}), directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


# Waits until MathJax has typeset every formula, the fonts are loaded and every image has arrived.
WAIT_JS = r"""
async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
    if (MathJax.typesetPromise) await MathJax.typesetPromise();
  }
  document.querySelectorAll('img').forEach(img => { img.loading = 'eager'; });
  await Promise.all(Array.from(document.images).map(img => img.complete ? null :
    new Promise(done => { img.addEventListener('load', done); img.addEventListener('error', done); })));
  await document.fonts.ready;
  const pending = Array.from(document.querySelectorAll('.math, span.math, div.math'))
    .filter(el => !el.querySelector('mjx-container') && /\\\(|\\\[|\$/.test(el.textContent)).length;
  const broken = Array.from(document.images).filter(img => !img.naturalWidth).map(img => img.src);
  return {pending, broken, math: document.querySelectorAll('mjx-container').length,
          errors: document.querySelectorAll('mjx-merror').length};
}
"""

# Prepares the page for paper: hidden content shown, links that would leave the PDF removed, wide boxes scaled down.
PREPARE_JS = r"""
(bookPath) => {
  // code the web book hides behind a button (a figure's plotting code) stays out; other hidden content is shown
  document.querySelectorAll('details.hide.above-input').forEach(d => d.remove());
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  document.querySelectorAll('.toggle-hidden').forEach(el => el.classList.remove('toggle-hidden'));
  let removed = 0, internal = 0, missing = [];
  document.querySelectorAll('a[href]').forEach(a => {
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin) return;  // a link out of the book: kept
    // the page is served as /index.html; its own links name it by its file (bookPath) or by the bare #anchor
    const here = [location.pathname, bookPath, '/'].includes(url.pathname);
    if (here && url.hash.length > 1) {
      const id = decodeURIComponent(url.hash.slice(1));
      if (document.getElementById(id)) { a.setAttribute('href', url.hash); internal++; return; }
      missing.push(id);
    }
    a.removeAttribute('href');  // a file of the web book the PDF does not hold, or an empty anchor
    removed++;
  });
  // what paper does not show leaves the page: less for Chromium to lay out and print
  let pruned = 0;
  document.querySelectorAll('.bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-header-article, ' +
                            '.prev-next-area, .bd-footer, .bd-footer-article, #pst-search-dialog, script, ' +
                            'mjx-assistive-mml').forEach(el => { el.remove(); pruned++; });
  // boxes wider than the column (display equations, tables) are scaled to fit, innermost first
  const col = document.querySelector('.bd-article') || document.body;
  let scaled = 0;
  for (let pass = 0; pass < 3; pass++) {
    const wide = Array.from(col.querySelectorAll('mjx-container[display="true"], table, pre, div.highlight, ' +
                                                 '.pst-scrollable-table-container, .table-wrapper, div.output'))
      .filter(el => el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0);
    if (!wide.length) break;
    for (const el of wide.reverse()) {
      const z = Math.max(0.35, el.clientWidth / el.scrollWidth - 0.005);
      el.style.zoom = String((parseFloat(el.style.zoom) || 1) * z);
      scaled++;
    }
  }
  const right = col.getBoundingClientRect().right;
  const over = Array.from(col.querySelectorAll('*')).filter(el => {
    if (el.closest('mjx-assistive-mml')) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.right > right + 2;
  }).slice(0, 10).map(el => el.tagName + '.' + el.className + ': ' + (el.textContent || '').trim().slice(0, 60));
  return {removed, internal, missing, scaled, pruned, over};
}
"""


def book_page(html_dir: pathlib.Path) -> str:
    """The single page of a ``singlehtml`` build: the root document's file (``index.html`` redirects to it)."""
    index = (pathlib.Path(html_dir) / "index.html").read_text(errors="replace")
    m = re.search(r'http-equiv="Refresh"\s+content="0;\s*url=([^"]+)"', index, re.I)
    return m.group(1) if m else "index.html"


def print_pdf(html_dir: pathlib.Path, pdf_path: pathlib.Path, *, page: str | None = None,
              timeout_s: float = 900.0) -> dict:
    """Print ``html_dir/page`` (the book's page) with headless Chromium to ``pdf_path``; what was done and how long."""
    from playwright.sync_api import sync_playwright

    page = page or book_page(html_dir)

    chromium = CHROMIUM if pathlib.Path(CHROMIUM).exists() else shutil.which("chromium")
    if not chromium:
        raise SystemExit("Chromium is not installed (make pdf installs Debian's chromium)")
    stats: dict = {}
    pdf_path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with serve(html_dir, page) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": layout_width(), "height": 1200})
            context.route(re.compile(r"^(?!http://127\.0\.0\.1:\d+/)"), lambda route: route.abort())
            tab = context.new_page()
            tab.set_default_timeout(timeout_s * 1000)
            errors: list[str] = []
            tab.on("pageerror", lambda exc: errors.append(str(exc)))
            tab.emulate_media(media="print")
            tab.goto(base + "index.html", wait_until="load")
            tab.wait_for_function("!document.querySelector('script[src*=\"mathjax\"]') || "
                                  "(window.MathJax && MathJax.startup && MathJax.startup.promise)")
            stats.update(tab.evaluate(WAIT_JS))
            stats["seconds_load"] = round(time.perf_counter() - t0, 1)
            stats.update(tab.evaluate(PREPARE_JS, "/" + page))
            t1 = time.perf_counter()
            tab.pdf(path=str(pdf_path), width=f"{PAGE_MM[0]}mm", height=f"{PAGE_MM[1]}mm",
                    margin={k: f"{v}mm" for k, v in MARGIN_MM.items()}, scale=SCALE, print_background=True,
                    display_header_footer=True, header_template=HEADER, footer_template=FOOTER,
                    outline=True, tagged=True)
            stats["seconds_print"] = round(time.perf_counter() - t1, 1)
            stats["page_errors"] = [e for e in errors if "THEBE_JS_URL" not in e]
        finally:
            browser.close()
    return stats


# ---------------------------------------------------------------------------------------------- reading the PDF

_OBJ = re.compile(rb"(\d+)\s+0\s+obj\b")
_STREAM = re.compile(rb">>\s*stream\r?\n")


def _objects(data: bytes) -> dict[int, bytes]:
    """Every ``N 0 obj ... endobj`` of the file: number -> body; a stream's data is skipped by its ``/Length``."""
    out: dict[int, bytes] = {}
    pos = 0
    while (m := _OBJ.search(data, pos)) is not None:
        start = m.end()
        end = data.find(b"endobj", start)
        stream = _STREAM.search(data, start, end if end != -1 else len(data))
        if stream is not None:
            length = re.search(rb"/Length\s+(\d+)(?!\s+\d+\s+R)", data[start:stream.start() + 2])
            if length:
                end = data.find(b"endobj", stream.end() + int(length.group(1)))
        if end == -1:
            break
        out[int(m.group(1))] = data[start:end]
        pos = end + len(b"endobj")
    return out
_REF = re.compile(rb"(\d+)\s+0\s+R")


def _pdf_string(raw: bytes) -> str:
    """A PDF string token, ``(literal)`` or ``<hex>``, as text (UTF-16BE after a byte-order mark, else Latin-1)."""
    if raw.startswith(b"<"):
        data = bytes.fromhex(raw[1:-1].decode("ascii"))
    else:
        body, out, i = raw[1:-1], bytearray(), 0
        escapes = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("b"): 8, ord("f"): 12}
        while i < len(body):
            c = body[i]
            if c == 0x5C and i + 1 < len(body):  # backslash
                nxt = body[i + 1]
                if nxt in escapes:
                    out.append(escapes[nxt])
                    i += 2
                elif 0x30 <= nxt <= 0x37:
                    digits = re.match(rb"[0-7]{1,3}", body[i + 1:i + 4]).group()
                    out.append(int(digits, 8) & 0xFF)
                    i += 1 + len(digits)
                elif nxt == 0x0A:
                    i += 2
                else:
                    out.append(nxt)
                    i += 2
            else:
                out.append(c)
                i += 1
        data = bytes(out)
    if data.startswith(b"\xfe\xff"):
        return data[2:].decode("utf-16-be", "replace")
    return data.decode("latin-1")


_STRING = rb"\((?:\\.|[^\\)])*\)|<[0-9A-Fa-f\s]*>"


class PdfFile:
    """The parts of a PDF written by Chromium (Skia) that the checks read: pages, links, destinations, outline, text.

    Skia writes every object uncompressed and in the clear (only streams are compressed, with FlateDecode), without
    object streams, so a regular expression over ``N 0 obj ... endobj`` finds them all. A PDF from elsewhere may not
    parse; this reader is for checking the book's PDF, not for PDFs in general.
    """

    def __init__(self, data: bytes):
        self.data = data
        self.objects = _objects(data)
        catalogs = [n for n, body in self.objects.items() if re.search(rb"/Type\s*/Catalog\b", body)]
        if not catalogs:
            raise ValueError("no catalog: not a PDF this reader understands")
        self.catalog = self.objects[catalogs[-1]]
        self.pages = self._page_list(self._ref(self.catalog, b"Pages"))

    def _ref(self, body: bytes, key: bytes) -> int | None:
        m = re.search(rb"/" + key + rb"\s+(\d+)\s+0\s+R", body)
        return int(m.group(1)) if m else None

    def _dict(self, body: bytes) -> bytes:
        return body.split(b"stream", 1)[0]

    def _page_list(self, node: int | None) -> list[int]:
        if node is None:
            return []
        body = self._dict(self.objects.get(node, b""))
        if re.search(rb"/Type\s*/Page(?![A-Za-z])", body):
            return [node]
        kids = re.search(rb"/Kids\s*\[(.*?)\]", body, re.S)
        return [p for kid in _REF.findall(kids.group(1) if kids else b"") for p in self._page_list(int(kid))]

    def destinations(self) -> dict[str, int]:
        """The named destinations (the catalog's ``/Dests``): name -> page number (1-based)."""
        ref = self._ref(self.catalog, b"Dests")
        if ref is None:
            return {}
        index = {obj: i + 1 for i, obj in enumerate(self.pages)}
        out = {}
        for name, page in re.findall(rb"/([^\s/\[\]<>()]+)\s*\[\s*(\d+)\s+0\s+R", self.objects[ref]):
            out[self._name(name)] = index.get(int(page), 0)
        return out

    @staticmethod
    def _name(raw: bytes) -> str:
        return re.sub(rb"#([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), raw).decode("utf-8", "replace")

    def links(self) -> list[dict]:
        """Every link annotation of every page: ``{"page", "dest"}`` (internal, by name) or ``{"page", "uri"}``."""
        out = []
        for number, page in enumerate(self.pages, 1):
            annots = re.search(rb"/Annots\s*\[(.*?)\]", self._dict(self.objects[page]), re.S)
            for ref in _REF.findall(annots.group(1) if annots else b""):
                body = self.objects.get(int(ref), b"")
                if not re.search(rb"/Subtype\s*/Link\b", body):
                    continue
                dest = re.search(rb"/Dest\s*/([^\s/\[\]<>()]+)", body) or re.search(
                    rb"/S\s*/GoTo\s*/D\s*/([^\s/\[\]<>()]+)", body)
                uri = re.search(rb"/URI\s*(" + _STRING + rb")", body)
                if dest:
                    out.append({"page": number, "dest": self._name(dest.group(1))})
                elif re.search(rb"/Dest\s*\[", body):
                    out.append({"page": number, "dest": None})
                elif uri:
                    out.append({"page": number, "uri": _pdf_string(uri.group(1))})
        return out

    def outline(self) -> list[tuple[int, str, int]]:
        """The bookmarks in order: (depth, title, page number)."""
        root = self._ref(self.catalog, b"Outlines")
        index = {obj: i + 1 for i, obj in enumerate(self.pages)}
        out: list[tuple[int, str, int]] = []

        def walk(node: int | None, depth: int) -> None:
            seen = set()
            while node is not None and node not in seen:
                seen.add(node)
                body = self.objects.get(node, b"")
                title = re.search(rb"/Title\s*(" + _STRING + rb")", body, re.S)
                page = re.search(rb"/Dest\s*\[\s*(\d+)\s+0\s+R", body)
                out.append((depth, _pdf_string(title.group(1)) if title else "",
                            index.get(int(page.group(1)), 0) if page else 0))
                walk(self._ref(body, b"First"), depth + 1)
                node = self._ref(body, b"Next")

        if root is not None:
            walk(self._ref(self.objects[root], b"First"), 0)
        return out

    def _stream(self, number: int) -> bytes:
        body = self.objects.get(number, b"")
        m = re.search(rb"stream\r?\n(.*)endstream", body, re.S)
        if not m:
            return b""
        raw = m.group(1)
        return zlib.decompress(raw) if b"/FlateDecode" in body.split(b"stream", 1)[0] else raw

    def _cmap(self, font: int) -> dict[bytes, str]:
        """A font's ToUnicode map: code (bytes) -> text."""
        ref = self._ref(self._dict(self.objects.get(font, b"")), b"ToUnicode")
        if ref is None:
            return {}
        text = self._stream(ref)
        out: dict[bytes, str] = {}

        def uni(hexcode: bytes) -> str:
            return bytes.fromhex(hexcode.decode()).decode("utf-16-be", "replace")

        for block in re.findall(rb"beginbfchar(.*?)endbfchar", text, re.S):
            for src, dst in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
                out[bytes.fromhex(src.decode())] = uni(dst)
        for block in re.findall(rb"beginbfrange(.*?)endbfrange", text, re.S):
            for lo, hi, dst in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*(<[0-9A-Fa-f]+>|\[[^\]]*\])",
                                          block):
                a, b = int(lo, 16), int(hi, 16)
                width = len(lo) // 2
                if dst.startswith(b"["):
                    targets = [uni(t) for t in re.findall(rb"<([0-9A-Fa-f]+)>", dst)]
                    for k, t in zip(range(a, b + 1), targets):
                        out[k.to_bytes(width, "big")] = t
                else:
                    start = int(dst[1:-1], 16)
                    for k in range(a, b + 1):
                        code = start + k - a
                        out[k.to_bytes(width, "big")] = code.to_bytes(len(dst[1:-1]) // 2, "big").decode(
                            "utf-16-be", "replace")
        return out

    def page_text(self, number: int) -> str:
        """The text of page ``number`` (1-based), decoded through each font's ToUnicode map, one line per text run."""
        body = self._dict(self.objects[self.pages[number - 1]])
        fonts: dict[bytes, int] = {}
        resources = self._resources(body)
        fm = re.search(rb"/Font\s*<<(.*?)>>", resources, re.S)
        if fm:
            fonts = {name: int(ref) for name, ref in re.findall(rb"/(\w+)\s+(\d+)\s+0\s+R", fm.group(1))}
        maps = {name: self._cmap(ref) for name, ref in fonts.items()}
        contents = re.search(rb"/Contents\s*(\[(.*?)\]|\d+\s+0\s+R)", body, re.S)
        streams = _REF.findall(contents.group(1)) if contents else []
        lines = []
        for ref in streams:
            cmap: dict[bytes, str] = {}
            for m in re.finditer(rb"/(\w+)\s+[\d.]+\s+Tf|(\[(?:" + _STRING + rb"|[^\]])*\])\s*TJ|(" + _STRING
                                 + rb")\s*Tj", self._stream(int(ref)), re.S):
                if m.group(1):
                    cmap = maps.get(m.group(1), {})
                    continue
                strings = re.findall(_STRING, m.group(2) or m.group(3))
                lines.append("".join(self._decode(s, cmap) for s in strings))
        return "\n".join(lines)

    def _resources(self, page_body: bytes) -> bytes:
        ref = re.search(rb"/Resources\s+(\d+)\s+0\s+R", page_body)
        if ref:
            return self._dict(self.objects.get(int(ref.group(1)), b""))
        return page_body

    @staticmethod
    def _decode(token: bytes, cmap: dict[bytes, str]) -> str:
        raw = bytes.fromhex(re.sub(rb"\s", b"", token[1:-1]).decode()) if token.startswith(b"<") else \
            _pdf_string(token).encode("latin-1")
        width = len(next(iter(cmap))) if cmap else 1
        return "".join(cmap.get(raw[i:i + width], "") for i in range(0, len(raw), width))

    def text(self) -> str:
        return "\n".join(self.page_text(i) for i in range(1, len(self.pages) + 1))


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def check_pdf(data: bytes, *, titles: list[str] = (), text_titles: bool = True) -> dict:
    """Read the PDF back; raise ``AssertionError`` if it has no page, a dead internal link, or lacks a title.

    ``titles``: headings that must be bookmarks (in this order) and, with ``text_titles``, appear in the text.
    """
    pdf = PdfFile(data)
    dests = pdf.destinations()
    links = pdf.links()
    internal = [link for link in links if "dest" in link]
    dead = sorted({link["dest"] for link in internal if link["dest"] not in dests})
    outline = pdf.outline()
    assert pdf.pages, "the PDF has no page"
    assert not dead, f"internal links to undefined destinations: {dead[:10]}"
    local = [link["uri"] for link in links if "uri" in link and re.match(r"(file:|http://127\.0\.0\.1)", link["uri"])]
    assert not local, f"links to files of the web book: {local[:5]}"
    # compared without white space: Chromium drops the space where a heading wraps ("objectiveperturbation")
    bookmark_titles = [_squeeze(title) for _, title, _ in outline]
    position = 0
    for title in titles:
        hits = [i for i, t in enumerate(bookmark_titles) if _squeeze(title) in t and i >= position]
        assert hits, f"no bookmark {title!r} (after position {position})"
        position = hits[0]
    if titles and text_titles:
        text = _squeeze(pdf.text())
        absent = [t for t in titles if _squeeze(t) not in text]
        assert not absent, f"titles not in the PDF's text: {absent}"
    return {"pages": len(pdf.pages), "bytes": len(data), "internal_links": len(internal),
            "external_links": len(links) - len(internal), "destinations": len(dests), "bookmarks": len(outline)}


def chapter_titles() -> list[str]:
    """The titles of the book's documents in the order of ``_toc.yml`` (the first heading of each)."""
    import json

    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from book_pages import toc_files
    finally:
        sys.path.pop(0)
    titles = []
    for name in toc_files():
        md, nb = ROOT / f"{name}.md", ROOT / f"{name}.ipynb"
        if md.exists():
            text = md.read_text()
        elif nb.exists():
            text = "\n".join("".join(c["source"]) for c in json.loads(nb.read_text())["cells"]
                             if c["cell_type"] == "markdown")
        else:
            continue
        m = re.search(r"^# (.+)$", text, re.M)
        if m:
            titles.append(re.sub(r"[`*]", "", m.group(1)).strip())
    return titles


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=pathlib.Path, default=PDF)
    parser.add_argument("--html", type=pathlib.Path, help="print this single-page build instead of building one")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    html = args.html if args.html else build_html()
    t_html = time.perf_counter() - t0
    tmp = args.out.with_suffix(".pdf.part")
    stats = print_pdf(html, tmp)
    print("page:", {k: v for k, v in stats.items() if k not in ("over",)}, flush=True)
    if stats["over"]:
        print("wider than the column:", *stats["over"], sep="\n  ")
    if stats["missing"]:
        raise SystemExit(f"cross-references to anchors missing from the page: {sorted(set(stats['missing']))[:10]}")
    data = tmp.read_bytes()
    summary = check_pdf(data, titles=chapter_titles() if not args.html else [])
    tmp.replace(args.out)
    total = time.perf_counter() - t0
    rel = args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out
    print(f"PDF: {rel}: {summary['pages']} pages, {summary['bytes'] / 1e6:.1f} MB, "
          f"{summary['internal_links']} internal links (all resolved), {summary['bookmarks']} bookmarks; "
          f"built in {total:.0f} s (HTML {t_html:.0f} s, Chromium {total - t_html:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
