"""Reading aids of the built book in headless Chromium: permalinks, figures on a phone, wide equations.

Run by ``make browser-test`` (``PDPKIT_BROWSER_TESTS=1 pytest tests/browser -s``); skipped otherwise, and where
playwright, Chromium or the built book is missing. The book is read from ``PDPKIT_BOOK_HTML`` (default
``_build/html``) and served from localhost as ``check_book.py`` serves it.

* **Permalinks.** Every ``prf`` block that a chapter's source declares (its ``:label:``, read from the notebook,
  not from the HTML) is on the chapter's page with a link in its title whose target is the block itself: the
  link's ``href`` is the page's own address with the block's anchor, the element that anchor names is the block,
  and following the link (a tap at 390 px) makes the block the page's ``:target`` and brings it on screen. At
  1280 px the link shows when the block is hovered; at 390 px (a touch screen) it is always shown, not covered,
  at least 16 px wide, and inside the screen.
* **Figures at 390 px.** pdpkit's figures are drawn at 100 px per inch with no text under
  :data:`pdpkit.plotting.MIN_FONT_PT` points, and shipped as PNGs of twice that resolution; the text on a figure
  shown ``w`` px wide out of a logical width ``L`` is at least ``MIN_FONT_PT * 100/72 * w/L`` px tall. A figure
  whose bound is under 9 px must be a link that a tap follows to an image file at its full resolution (its natural
  width is the shown image's); the closing line prints the figures under 9 px.
* **Wide equations at 390 px.** A display equation wider than the column scrolls inside its own box, which shows
  a cue: its content fades out at the edge that hides part of it (a mask, checked in the computed style and in
  the pixels: the box's last em is paler with the cue than without it), and the cue moves to the
  other edge once the box is scrolled to its end.
* **No page scrolls sideways** at 390 px.

Each check is also run on a page made wrong on purpose — a block stripped of its permalink, a permalink to
another block, a figure without its link or linked to a page that is no image, the cue's stylesheet switched off,
an element wider than the screen — and must reject it.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import time

import pytest

if os.environ.get("PDPKIT_BROWSER_TESTS") != "1":  # `make browser-test` sets it; `make unit` skips Chromium
    pytest.skip("browser test: run by make browser-test (PDPKIT_BROWSER_TESTS=1)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")

from check_book import CHROMIUM, CHROMIUM_ARGS, _serve  # noqa: E402  (after the skip: it imports playwright)

from pdpkit.plotting import MIN_FONT_PT  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 3, "is_mobile": True, "has_touch": True}
LAPTOP = {"viewport": {"width": 1280, "height": 900}}
MIN_RENDERED_PX = 9.0
PX_PER_PT = 100.0 / 72.0  # pdpkit.plotting.RC["figure.dpi"]: the figure's logical pixels per inch, over 72 pt
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


def _source_labels() -> dict[str, list[str]]:
    """Chapter stem -> the labels of its ``prf`` blocks (not ``{prf:proof}``), read from the notebook's markdown."""
    out: dict[str, list[str]] = {}
    for path in sorted((ROOT / "chapters").glob("*.ipynb")) + sorted((ROOT / "chapters").glob("*.md")):
        if path.suffix == ".md":
            lines = path.read_text(encoding="utf-8").splitlines()
        else:
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            lines = [ln for c in cells if c["cell_type"] == "markdown" for ln in "".join(c["source"]).splitlines()]
        labels = []
        for i, line in enumerate(lines):
            m = re.match(r"\s*(`{3,}|:{3,})\{prf:(\w+)\}", line)
            if not m or m.group(2) == "proof":
                continue
            j = i + 1
            while j < len(lines) and re.match(r"\s*:\w[\w-]*:", lines[j]):
                lab = re.match(r"\s*:label:\s*(\S+)", lines[j])
                if lab:
                    labels.append(lab.group(1))
                j += 1
        if labels:
            out[path.stem] = labels
    return out


SOURCE_LABELS = _source_labels()
CHAPTERS = sorted(p.relative_to(BOOK).as_posix() for p in (BOOK / "chapters").glob("*.html")
                  if not re.search(r'http-equiv="Refresh"', p.read_text(errors="replace"), re.I))
# pages whose HTML holds a block or an image (the others are only checked for sideways scrolling)
WITH_BLOCKS = [rel for rel in CHAPTERS if pathlib.PurePosixPath(rel).stem in SOURCE_LABELS
               or 'class="proof' in (BOOK / rel).read_text(errors="replace")]
WITH_IMAGES = [rel for rel in CHAPTERS if "<img" in (BOOK / rel).read_text(errors="replace")]

READY_JS = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  const imgs = Array.from(document.querySelectorAll('.bd-article img, article img'));
  await Promise.all(imgs.map(img => img.complete ? null :
      new Promise(r => { img.addEventListener('load', r); img.addEventListener('error', r); })));
}"""

# every block with an anchor in the article: id, classes, and what its title's links point to
BLOCKS_JS = r"""() => Array.from(document.querySelectorAll('div.proof[id]')).filter(b => b.id !== 'proof').map(b => {
  const title = b.querySelector(':scope > .admonition-title');
  const links = title ? Array.from(title.querySelectorAll('a[href]')).filter(a => a.hash) : [];
  const own = links.filter(a => a.href.split('#')[0] === location.href.split('#')[0]);
  return {id: b.id, kind: Array.from(b.classList).filter(c => c !== 'proof' && c !== 'admonition'),
          links: own.map(a => ({hash: a.hash, text: a.textContent.trim(),
                                targetIsBlock: document.getElementById(decodeURIComponent(a.hash.slice(1))) === b}))};
})"""

# the permalink of the block `id` as seen: opacity (up the tree), visibility, box, not covered
LINK_STATE_JS = r"""(id) => {
  const b = document.getElementById(id);
  const a = Array.from(b.querySelectorAll(':scope > .admonition-title a[href]')).find(x => x.hash === '#' + id);
  if (!a) return null;
  let opacity = 1;
  for (let el = a; el; el = el.parentElement) opacity *= parseFloat(getComputedStyle(el).opacity || '1');
  const r = a.getBoundingClientRect(), cs = getComputedStyle(a);
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return {opacity, visibility: cs.visibility, display: cs.display, width: r.width, height: r.height,
          left: r.left, right: r.right, top: r.top, uncovered: !!hit && (hit === a || a.contains(hit))};
}"""

# true once no transition or animation runs on the permalink of block `id` or on an element above it:
# a state read in the middle of a fade (0.15 s) is neither the shown nor the hidden one
LINK_SETTLED_JS = r"""(id) => {
  const b = document.getElementById(id);
  const a = Array.from(b.querySelectorAll(':scope > .admonition-title a[href]')).find(x => x.hash === '#' + id);
  if (!a) return true;
  for (let el = a; el; el = el.parentElement)
    if (el.getAnimations().some(an => an.playState === 'running' || an.pending)) return false;
  return true;
}"""

FIGURES_JS = r"""() => Array.from(document.querySelectorAll('.bd-article img, article img')).map((img, i) => [img, i])
    .filter(([img]) => img.closest('figure, .cell_output') && img.naturalWidth > 0).map(([img, i]) => {
  const r = img.getBoundingClientRect();
  // a pdpkit figure's logical width is written in px by myst-nb; another picture (a screenshot) has no known fonts
  const styled = /^[0-9.]+px$/.test(img.style.width) ? parseFloat(img.style.width) : null;
  const a = img.closest('a[href]');
  return {i, src: img.currentSrc || img.src, file: (img.currentSrc || img.src).split('/').pop(), shown: r.width,
          natural: img.naturalWidth, logical: styled,
          figure: (img.closest('figure') || {}).id || '', href: a ? a.href : null};
})"""

EQUATIONS_JS = r"""() => {
  const scrollable = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  const out = [];
  document.querySelectorAll('.bd-article mjx-container[display="true"], article mjx-container[display="true"]')
      .forEach((eq, i) => {
    const box = [eq, eq.parentElement].find(el => el && el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1);
    if (!box) return;
    const cs = getComputedStyle(box);
    const mask = (cs.maskImage && cs.maskImage !== 'none') ? cs.maskImage : (cs.webkitMaskImage || 'none');
    const hiddenRight = box.scrollLeft + box.clientWidth < box.scrollWidth - 1;
    const hiddenLeft = box.scrollLeft > 1;
    out.push({i, text: (eq.textContent || '').slice(0, 40), scrollable: scrollable(box), mask,
              hiddenLeft, hiddenRight, over: box.scrollWidth - box.clientWidth,
              fontPx: parseFloat(cs.fontSize)});
  });
  return out;
}"""

PAGE_SCROLL_JS = ("() => [Math.max(document.documentElement.scrollWidth, document.body.scrollWidth) - "
                  "document.documentElement.clientWidth, window.innerWidth]")


def _fades(mask: str, side: str) -> bool:
    """The computed mask is a gradient whose stops on ``side`` are paler (alpha < 0.5) than opaque black."""
    if "gradient" not in mask:
        return False
    stops = re.findall(r"rgba?\(([^)]*)\)", mask)
    alphas = [float(s.split(",")[3]) if s.count(",") == 3 else 1.0 for s in stops]
    if len(alphas) < 2:
        return False
    return (alphas[-1] if side == "right" else alphas[0]) < 0.5 and max(alphas) == 1.0


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
    print("\nreading aids:", json.dumps(REPORT, ensure_ascii=False))


def _context(browser, base: str, kind: dict, pages: dict[str, str] | None = None):
    """A browser context that reaches localhost only; ``pages`` (path -> html) are served instead of the files."""
    ctx = browser.new_context(**kind)
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
    page.wait_for_function("document.documentElement.dataset.pdpkitReader === 'ready'", timeout=15000)
    page.evaluate("""() => { window.EQ_SELECTOR = '.bd-article mjx-container[display="true"], '
                                                 + 'article mjx-container[display="true"]'; }""")


# ------------------------------------------------------------------------------------------ the checks


def permalink_problems(page, rel: str, want: list[str] | None, *, phone: bool) -> list[str]:
    """What is wrong with the permalinks of the blocks on the open page (``want``: the labels its source declares)."""
    problems = []
    blocks = page.evaluate(BLOCKS_JS)
    found = {b["id"] for b in blocks}
    if want is not None:
        missing = [lab for lab in want if lab not in found]
        if missing:
            problems.append(f"{rel}: blocks of the source not on the page: {missing}")
    for b in blocks:
        own = [ln for ln in b["links"] if ln["hash"] == "#" + b["id"]]
        if not own:
            others = [ln["hash"] for ln in b["links"]]
            problems.append(f"{rel}#{b['id']}: no permalink in the title" + (f" (links to {others})" if others else ""))
            continue
        if not all(ln["targetIsBlock"] for ln in own):
            problems.append(f"{rel}#{b['id']}: the permalink's anchor names another element")
            continue
        if phone:
            page.evaluate("id => document.getElementById(id).querySelector(':scope > .admonition-title')"
                          ".scrollIntoView({block: 'center', behavior: 'instant'})", b["id"])
            try:
                page.wait_for_function(LINK_SETTLED_JS, arg=b["id"], timeout=2000)
            except sync_api.TimeoutError:
                problems.append(f"{rel}#{b['id']}: the permalink's style never settles on a phone")
                continue
            st = page.evaluate(LINK_STATE_JS, b["id"])
            if not (st["opacity"] >= 0.5 and st["visibility"] == "visible" and st["display"] != "none"):
                problems.append(f"{rel}#{b['id']}: permalink not shown on a phone ({st})")
            elif not (st["width"] >= 16 and st["height"] >= 12 and st["left"] >= 0 and st["right"] <= 390 + 0.5):
                problems.append(f"{rel}#{b['id']}: permalink too small to tap or off screen ({st})")
            elif not st["uncovered"]:
                problems.append(f"{rel}#{b['id']}: permalink covered by another element")
        else:
            title = page.locator(f'div.proof[id="{b["id"]}"] > .admonition-title').first
            title.scroll_into_view_if_needed()
            title.hover()
            try:
                page.wait_for_function("id => { const s = (" + LINK_STATE_JS + ")(id); return s && s.opacity >= 0.5 "
                                       "&& s.visibility === 'visible' && s.display !== 'none'; }", arg=b["id"],
                                       timeout=1000)
            except sync_api.TimeoutError:
                state = page.evaluate(LINK_STATE_JS, b["id"])
                problems.append(f"{rel}#{b['id']}: permalink not shown on hover ({state})")
    return problems


def follow_permalink_problems(page, rel: str, label: str) -> list[str]:
    """Tap (phone) the permalink of block ``label``: the address gets its anchor, the block is :target and on screen."""
    link = page.locator(f'div.proof[id="{label}"] > .admonition-title a[href="#{label}"]').first
    if not link.count():
        return [f"{rel}#{label}: no permalink to follow"]
    page.evaluate("() => window.scrollTo({top: 0, behavior: 'instant'})")
    link.scroll_into_view_if_needed()
    link.tap()
    state = """id => { const t = document.querySelector(':target'); const b = document.getElementById(id);
        const r = b.getBoundingClientRect();
        return {hash: location.hash, targetIsBlock: t === b, onScreen: r.top < innerHeight && r.bottom > 0}; }"""
    try:  # the theme scrolls smoothly to an anchor
        page.wait_for_function(f"id => {{ const s = ({state})(id); return s.targetIsBlock && s.onScreen; }}", arg=label,
                               timeout=3000)
    except sync_api.TimeoutError:
        pass
    st = page.evaluate(state, label)
    if st["hash"] != "#" + label or not st["targetIsBlock"] or not st["onScreen"]:
        return [f"{rel}#{label}: following the permalink gives {st}"]
    return []


def figure_problems(page, rel: str, figs: list[dict], check) -> list[str]:
    """Each figure at 390 px: text bound >= 9 px, or a link to an image file at the figure's full resolution.

    ``check(url)`` opens a link's target and returns (content type, natural width of its image or 0).
    """
    problems = []
    for f in figs:
        # a picture that is not a pdpkit figure (no logical width) has fonts of unknown size: it needs the link
        bound = MIN_FONT_PT * PX_PER_PT * f["shown"] / f["logical"] if f["logical"] else 0.0
        f["text_px_at_least"] = round(bound, 1)
        if bound >= MIN_RENDERED_PX:
            continue
        if not f["href"]:
            problems.append(f"{rel}: figure {f['figure'] or f['file']} has text from {bound:.1f} px at 390 px "
                            "and no full-size link")
            continue
        ctype, natural = check(f["href"])
        if not (ctype.startswith("image/") and natural >= f["natural"]):
            problems.append(f"{rel}: the full-size link of {f['figure'] or f['file']} opens {ctype!r} "
                            f"(natural width {natural}, the figure's file has {f['natural']})")
        elif f["logical"] and MIN_FONT_PT * PX_PER_PT * natural / f["logical"] < MIN_RENDERED_PX:  # 1 px per px
            problems.append(f"{rel}: {f['figure'] or f['file']} at full size still has text under 9 px")
    return problems


def equation_problems(page, rel: str, *, pixels: bool = True) -> tuple[list[str], int, int]:
    """Wide display equations: scroll in their box, fade at the hidden edge (style and pixels), cue follows scroll.

    Returns the problems, the number of wide equations and of those whose fade was seen in the pixels.
    """
    problems, seen = [], 0
    eqs = page.evaluate(EQUATIONS_JS)
    for e in eqs:
        name = f"{rel}: equation {e['text']!r}"
        if not e["scrollable"]:
            problems.append(f"{name} is clipped, not scrollable")
            continue
        if e["hiddenRight"] and not _fades(e["mask"], "right"):
            problems.append(f"{name} hides {e['over']} px on the right with no cue (mask {e['mask'][:60]})")
            continue
        if pixels:
            seen += _fade_in_pixels(page, e["i"])
        # scrolled to its end: the cue moves to the left edge
        after = page.evaluate("""i => new Promise(res => {
            const eq = document.querySelectorAll(EQ_SELECTOR)[i];
            const box = [eq, eq.parentElement].find(el => el.scrollWidth > el.clientWidth + 1);
            box.scrollLeft = box.scrollWidth;
            requestAnimationFrame(() => requestAnimationFrame(() => {
              const cs = getComputedStyle(box);
              const mask = (cs.maskImage && cs.maskImage !== 'none') ? cs.maskImage : (cs.webkitMaskImage || 'none');
              const out = {mask, end: box.scrollLeft + box.clientWidth >= box.scrollWidth - 1};
              box.scrollLeft = 0;
              res(out);
            }));
        })""", e["i"])
        page.wait_for_timeout(50)
        if not (after["end"] and _fades(after["mask"], "left") and not _fades(after["mask"], "right")):
            problems.append(f"{name}: scrolled to its end, the cue does not move to the left edge "
                            f"({after['mask'][:60]})")
    return problems, len(eqs), seen


def _fade_in_pixels(page, i: int) -> int:
    """1 if the last em of the equation's box is paler with the cue than without it, 0 if that strip is blank."""
    from io import BytesIO

    from PIL import Image

    clip = page.evaluate("""i => {
        const eq = document.querySelectorAll(EQ_SELECTOR)[i];
        const box = [eq, eq.parentElement].find(el => el.scrollWidth > el.clientWidth + 1);
        box.scrollIntoView({block: 'center', behavior: 'instant'});
        const r = box.getBoundingClientRect(), em = parseFloat(getComputedStyle(box).fontSize);
        // the content's strip only (clientHeight leaves out a scrollbar, which is faded too)
        return {x: r.right - em, y: r.top + box.clientTop, width: em, height: box.clientHeight};
    }""", i)

    def grey(png: bytes) -> bytes:
        return Image.open(BytesIO(png)).convert("L").tobytes()

    with_cue = page.screenshot(clip=clip)
    page.evaluate("""i => {
        const eq = document.querySelectorAll(EQ_SELECTOR)[i];
        const box = [eq, eq.parentElement].find(el => el.scrollWidth > el.clientWidth + 1);
        box.dataset.pdpkitSavedClass = box.className; box.classList.remove('pdpkit-more-right', 'pdpkit-more-left');
        box.style.maskImage = 'none'; box.style.webkitMaskImage = 'none'; }""", i)
    without = page.screenshot(clip=clip)
    page.evaluate("""i => {
        const eq = document.querySelectorAll(EQ_SELECTOR)[i];
        const box = [eq, eq.parentElement].find(el => el.scrollWidth > el.clientWidth + 1);
        box.style.maskImage = ''; box.style.webkitMaskImage = ''; box.className = box.dataset.pdpkitSavedClass; }""", i)
    cue, plain = grey(with_cue), grey(without)
    background = max(plain)  # the box's background (white, or a theorem block's tint): ink is what is darker
    ink_cue = sum(max(0, background - v) for v in cue)
    ink_plain = sum(max(0, background - v) for v in plain)
    if background - min(plain) < 64:  # nothing drawn in that strip: no glyph to fade
        return 0
    if ink_cue >= 0.7 * ink_plain:  # the last em is at most half opaque
        raise AssertionError(f"the fade is not in the pixels: ink {ink_cue:.0f} with the cue, {ink_plain:.0f} without")
    return 1


# ------------------------------------------------------------------------------------------ the tests


def test_every_chapter_has_its_source_blocks():
    """The reference itself: the notebooks declare the blocks the checks look for (and the book has the pages)."""
    assert sum(len(v) for v in SOURCE_LABELS.values()) >= 100
    for stem in SOURCE_LABELS:
        assert f"chapters/{stem}.html" in CHAPTERS, stem


def test_every_prf_block_has_a_permalink_to_itself(served):
    browser, base = served
    problems, n_blocks = [], 0
    for kind, phone in ((LAPTOP, False), (PHONE, True)):
        ctx = _context(browser, base, kind)
        page = ctx.new_page()
        try:
            for rel in WITH_BLOCKS:
                stem = pathlib.PurePosixPath(rel).stem
                _open(page, f"{base}/{rel}")
                problems += permalink_problems(page, rel, SOURCE_LABELS.get(stem, []), phone=phone)
                if phone:
                    n_blocks += len(page.evaluate(BLOCKS_JS))
                    labels = SOURCE_LABELS.get(stem, [])
                    for lab in dict.fromkeys(labels[-1:] + labels[:1]):  # tap the last block's, then the first's
                        problems += follow_permalink_problems(page, rel, lab)
        finally:
            ctx.close()
    REPORT["prf_blocks"] = n_blocks
    assert n_blocks >= sum(len(v) for v in SOURCE_LABELS.values())
    assert not problems, "\n".join(problems)


def test_the_permalink_check_rejects_wrong_pages(served):
    """A block stripped of its permalink, and a permalink to another block, are caught (test the tester)."""
    browser, base = served
    rel = "chapters/per_instance_dp.html"
    html = (BOOK / rel).read_text(encoding="utf-8")
    labels = SOURCE_LABELS["per_instance_dp"]
    first, second = labels[0], labels[1]
    link = re.compile(r'<a class="headerlink pdpkit-permalink" href="#' + re.escape(first) + r'"[^>]*>[^<]*</a>')
    assert len(link.findall(html)) == 1
    stripped = link.sub("", html)
    elsewhere = link.sub(lambda m: m.group(0).replace(f'"#{first}"', f'"#{second}"'), html)
    block = re.compile(r'<div class="proof [^"]*" id="' + re.escape(second) + '"')
    assert len(block.findall(html)) == 1
    no_block = block.sub('<div class="moved"', html)
    # an element earlier in the page takes the block's anchor: the link then leads elsewhere
    no_target = block.sub(lambda m: f'<span id="{second}"></span>' + m.group(0), html)
    pages = {"chapters/stripped.html": stripped, "chapters/elsewhere.html": elsewhere,
             "chapters/no_block.html": no_block, "chapters/no_target.html": no_target}
    for kind, phone in ((PHONE, True), (LAPTOP, False)):
        ctx = _context(browser, base, kind, pages)
        page = ctx.new_page()
        try:
            _open(page, f"{base}/{rel}")
            assert permalink_problems(page, rel, labels, phone=phone) == []
            _open(page, f"{base}/chapters/stripped.html")
            got = permalink_problems(page, "stripped", labels, phone=phone)
            assert got == [f"stripped#{first}: no permalink in the title"], got
            if phone:
                assert follow_permalink_problems(page, "stripped", first) != []
            _open(page, f"{base}/chapters/elsewhere.html")
            got = permalink_problems(page, "elsewhere", labels, phone=phone)
            assert got == [f"elsewhere#{first}: no permalink in the title (links to ['#{second}'])"], got
            _open(page, f"{base}/chapters/no_target.html")
            got = permalink_problems(page, "no_target", labels, phone=phone)
            assert got == [f"no_target#{second}: the permalink's anchor names another element"], got
            _open(page, f"{base}/chapters/no_block.html")
            got = permalink_problems(page, "no_block", labels, phone=phone)
            assert any("not on the page" in p and second in p for p in got), got
            # a permalink hidden by a style, or covered: shown nowhere
            _open(page, f"{base}/{rel}")
            # (a slow fade to it: a state read before the fade ends would count the first link as shown)
            page.add_style_tag(content="div.proof a.pdpkit-permalink { opacity: 0 !important; "
                                       "transition: opacity 0.6s linear !important; }")
            got = permalink_problems(page, rel, labels, phone=phone)
            assert len(got) == len(labels) and all("not shown" in p for p in got), got[:3]
        finally:
            ctx.close()


def _image_checker(browser, base: str):
    ctx = _context(browser, base, PHONE)
    page = ctx.new_page()

    def check(url: str) -> tuple[str, int]:
        resp = page.goto(url, wait_until="load")
        ctype = (resp.headers.get("content-type", "") if resp else "").split(";")[0]
        natural = page.evaluate("() => document.images.length === 1 && document.body.children.length === 1 ? "
                                "document.images[0].naturalWidth : 0") if ctype.startswith("image/") else 0
        return ctype, natural

    return ctx, check


def test_figures_on_a_phone_are_legible_or_open_at_full_size(served):
    browser, base = served
    ctx = _context(browser, base, PHONE)
    page = ctx.new_page()
    ictx, check = _image_checker(browser, base)
    problems, small, n_figs, tapped = [], [], 0, 0
    try:
        for rel in WITH_IMAGES:
            _open(page, f"{base}/{rel}")
            figs = page.evaluate(FIGURES_JS)
            n_figs += len(figs)
            problems += figure_problems(page, rel, figs, check)
            small += [f"{f['figure'] or f['file']} {f['text_px_at_least']}" for f in figs
                      if f["text_px_at_least"] < MIN_RENDERED_PX]
            if figs:  # a tap on the first figure opens its file
                img = page.locator(".bd-article img, article img").nth(figs[0]["i"])
                img.scroll_into_view_if_needed()
                box = img.bounding_box()
                hit = page.evaluate("([x, y]) => { const el = document.elementFromPoint(x, y); "
                                    "return el && el.tagName === 'IMG' && !!el.closest('a[href]'); }",
                                    [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2])
                if not hit:
                    problems.append(f"{rel}: the middle of the first figure is not its link")
                    continue
                try:
                    with page.expect_navigation(wait_until="load", timeout=15000):
                        img.tap()
                except sync_api.TimeoutError:
                    pass
                if page.url.split("/")[-1] != figs[0]["href"].split("/")[-1]:
                    problems.append(f"{rel}: a tap on the first figure opens {page.url}")
                tapped += 1
    finally:
        ictx.close()
        ctx.close()
    REPORT["figures"] = n_figs
    REPORT["figures_under_9px_at_390px"] = len(small)
    REPORT["smallest_text_px_at_390px"] = min((float(s.rsplit(" ", 1)[1]) for s in small if not s.endswith(" 0.0")),
                                              default=None)
    assert n_figs >= 40 and tapped >= 10
    assert not problems, "\n".join(problems)


def test_the_figure_check_rejects_wrong_pages(served):
    """A figure without its link, one linked to a page, one linked to a smaller image: each is caught."""
    browser, base = served
    rel = "chapters/per_instance_dp.html"
    ctx = _context(browser, base, PHONE)
    page = ctx.new_page()
    ictx, check = _image_checker(browser, base)
    try:
        _open(page, f"{base}/{rel}")
        figs = page.evaluate(FIGURES_JS)
        assert figs and figure_problems(page, rel, figs, check) == []
        unlinked = [dict(figs[0], href=None)] + figs[1:]
        assert len(figure_problems(page, rel, unlinked, check)) == 1
        to_page = [dict(figs[0], href=f"{base}/{rel}")]
        assert "opens 'text/html'" in figure_problems(page, rel, to_page, check)[0]
        bigger = [dict(figs[0], natural=figs[0]["natural"] * 2)]  # the link opens a file smaller than the figure's
        assert "natural width" in figure_problems(page, rel, bigger, check)[0]
        # the same figure shown at its logical width (a laptop) needs no link: its text is >= 9 pt * 100/72 px
        wide = [dict(f, href=None, shown=f["logical"]) for f in figs]
        assert figure_problems(page, rel, wide, check) == []
        # a picture of unknown fonts (a screenshot) needs the link at any width
        assert len(figure_problems(page, rel, [dict(wide[0], logical=None)], check)) == 1
        # and, in the page: the link taken away from the first figure
        page.evaluate("""() => { const img = document.querySelector('.bd-article img');
            const a = img.closest('a'); a.replaceWith(img); }""")
        figs2 = page.evaluate(FIGURES_JS)
        assert len(figure_problems(page, rel, figs2, check)) == 1
    finally:
        ictx.close()
        ctx.close()


def test_wide_equations_show_a_cue_and_no_page_scrolls_sideways(served):
    browser, base = served
    ctx = _context(browser, base, PHONE)
    page = ctx.new_page()
    problems, n_wide, n_pixels, per_page = [], 0, 0, {}
    try:
        for rel in CHAPTERS:
            _open(page, f"{base}/{rel}")
            over, inner = page.evaluate(PAGE_SCROLL_JS)
            if over > 1 or inner != 390:
                problems.append(f"{rel}: the page scrolls sideways by {over} px (window {inner} px wide)")
            p, n, seen = equation_problems(page, rel)
            problems += p
            n_wide += n
            n_pixels += seen
            if n:
                per_page[pathlib.PurePosixPath(rel).stem] = n
            over, inner = page.evaluate(PAGE_SCROLL_JS)
            if over > 1:
                problems.append(f"{rel}: after scrolling its equations the page scrolls sideways by {over} px")
    finally:
        ctx.close()
    REPORT["wide_equations_at_390px"] = per_page
    REPORT["fades_seen_in_pixels"] = n_pixels
    assert n_wide >= 5 and n_pixels >= 3, (n_wide, n_pixels)
    assert not problems, "\n".join(problems)


def test_the_equation_check_rejects_wrong_pages(served):
    """The cue's stylesheet switched off, the box clipped, an element wider than the screen: each is caught."""
    browser, base = served
    rel = "chapters/objpert_ex_post.html"
    ctx = _context(browser, base, PHONE)
    page = ctx.new_page()
    try:
        _open(page, f"{base}/{rel}")
        problems, n, seen = equation_problems(page, rel)
        assert problems == [] and n >= 1 and seen >= 1, (problems, n, seen)
        page.evaluate("() => document.querySelectorAll('link[href*=\"pdpkit_reader.css\"]')"
                      ".forEach(l => { l.disabled = true; })")
        page.wait_for_timeout(100)
        problems, n2, _ = equation_problems(page, rel, pixels=False)
        assert n2 == n and len(problems) == n and all("no cue" in p for p in problems), problems[:2]
        first_wide = page.evaluate(EQUATIONS_JS)[0]["i"]
        with pytest.raises(AssertionError, match="not in the pixels"):
            _fade_in_pixels(page, first_wide)
        page.evaluate("() => document.querySelectorAll('link[href*=\"pdpkit_reader.css\"]')"
                      ".forEach(l => { l.disabled = false; })")
        page.add_style_tag(content='div.math, mjx-container[display="true"] { overflow-x: hidden !important; }')
        problems, _, _ = equation_problems(page, rel, pixels=False)
        assert problems and all("clipped" in p for p in problems), problems[:2]
        _open(page, f"{base}/{rel}")
        page.evaluate("() => { const d = document.createElement('div'); d.style.width = '600px'; d.textContent = 'x';"
                      " document.querySelector('.bd-article').appendChild(d); }")
        over, _ = page.evaluate(PAGE_SCROLL_JS)
        assert over > 1
    finally:
        ctx.close()
