"""The whole-book PDF without a browser: its build configuration, the landing page's link, the reader of the PDF.

* ``tools/build_pdf.pdf_config`` turns ``_config.yml`` into the PDF build's: stored outputs, the local extensions by
  an absolute path that holds them, the print flag, and nothing else changed.
* ``_ext/pdpkit_pdf.py`` on a small Sphinx project: no PDF, no link and no copy; a PDF, a link on the root document
  (after its first paragraph) to a copy of the same bytes, with its page count; the PDF deleted, an incremental build
  drops the link and the copy; the print build gets the print style sheet and no link, every other build neither.
  ``singlehtml`` renders sphinx-proof's blocks next to sphinx-exercise's with the extension, and fails without it.
* ``PdfFile`` and ``check_pdf`` read a PDF written here, object by object, in Chromium's layout: pages, named
  destinations, links, bookmarks (UTF-16 titles), text through a ToUnicode map; a dead internal link, a link to a
  file of the web book and a missing title are refused.
"""

from __future__ import annotations

import importlib.util
import pathlib
import re
import subprocess
import sys
import zlib

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _load(name: str, path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return sys.modules[name]


build_pdf = _load("build_pdf", ROOT / "tools" / "build_pdf.py")
pdpkit_pdf = _load("pdpkit_pdf", ROOT / "_ext" / "pdpkit_pdf.py")


# ------------------------------------------------------------------------------------------- a PDF written here

def _utf16(text: str) -> bytes:
    return b"<FEFF" + text.encode("utf-16-be").hex().upper().encode() + b">"


def write_pdf(pages: list[str], *, links: list[tuple[int, str]] = (), uris: list[tuple[int, str]] = (),
              dests: dict[str, int] | None = None, outline: list[tuple[str, int]] = ()) -> bytes:
    """A PDF laid out as Chromium writes one: ``pages`` (each one line of text, shown through a two-byte font with a
    ToUnicode map), link annotations to named destinations (``links``: (page, name)) and to URIs, the catalog's
    ``/Dests`` (name -> page, 1-based) and a flat outline ((title, page))."""
    objects: dict[int, bytes] = {}
    n_pages = len(pages)
    page_ids = [10 + 2 * i for i in range(n_pages)]
    content_ids = [11 + 2 * i for i in range(n_pages)]
    chars = sorted(set("".join(pages)))
    codes = {c: (i + 3).to_bytes(2, "big") for i, c in enumerate(chars)}  # CIDs 3, 4, ...: not the characters
    bfchar = b"\n".join(b"<" + codes[c].hex().encode() + b"> <" + c.encode("utf-16-be").hex().encode() + b">"
                        for c in chars)
    cmap = (b"/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n1 begincodespacerange\n<0000> <FFFF>\n"
            b"endcodespacerange\n" + str(len(chars)).encode() + b" beginbfchar\n" + bfchar + b"\nendbfchar\nendcmap\n")
    packed = zlib.compress(cmap)
    objects[5] = b"<</Filter /FlateDecode\n/Length %d>> stream\n" % len(packed) + packed + b"\nendstream"
    objects[4] = b"<</Type /Font\n/Subtype /Type0\n/BaseFont /AAAAAA+Test\n/Encoding /Identity-H\n/ToUnicode 5 0 R>>"
    annots: dict[int, list[int]] = {}
    next_id = 100
    for page, name in links:
        objects[next_id] = (b"<</Type /Annot\n/Subtype /Link\n/F 4\n/Rect [6 700 60 712]\n/Dest /"
                            + name.encode() + b">>")
        annots.setdefault(page, []).append(next_id)
        next_id += 1
    for page, uri in uris:
        objects[next_id] = (b"<</Type /Annot\n/Subtype /Link\n/F 4\n/Rect [6 680 60 692]\n/A <</Type /Action\n/S /URI"
                            b"\n/URI (" + uri.encode() + b")>>>>")
        annots.setdefault(page, []).append(next_id)
        next_id += 1
    for i, text in enumerate(pages):
        hexed = b"".join(codes[c] for c in text).hex().encode()
        stream = zlib.compress(b"BT\n/F4 12 Tf\n1 0 0 -1 10 20 Tm\n[<" + hexed[:8] + b"> 12 <" + hexed[8:]
                               + b">] TJ\nET\n")
        objects[content_ids[i]] = b"<</Filter /FlateDecode\n/Length %d>> stream\n" % len(stream) + stream \
            + b"\nendstream"
        refs = b" ".join(b"%d 0 R" % a for a in annots.get(i + 1, []))
        objects[page_ids[i]] = (b"<</Type /Page\n/Resources <</ProcSet [/PDF /Text]\n/Font <</F4 4 0 R>>>>\n"
                                b"/MediaBox [0 0 595.92 841.92]\n/Contents " + b"%d 0 R" % content_ids[i]
                                + (b"\n/Annots [" + refs + b"]" if refs else b"") + b"\n/Parent 3 0 R>>")
    objects[3] = b"<</Type /Pages\n/Count %d\n/Kids [%s]>>" % (n_pages, b" ".join(b"%d 0 R" % p for p in page_ids))
    objects[6] = b"<<" + b"\n".join(b"/" + name.encode() + b" [%d 0 R /XYZ 6 800 0]" % page_ids[p - 1]
                                    for name, p in (dests or {}).items()) + b">>"
    items = list(range(200, 200 + len(outline)))
    for k, (title, page) in enumerate(outline):
        objects[items[k]] = (b"<</Title " + _utf16(title) + b"\n/Dest [%d 0 R /XYZ 6 800 0]\n/Parent 7 0 R"
                             % page_ids[page - 1] + (b"\n/Next %d 0 R" % items[k + 1] if k + 1 < len(items) else b"")
                             + b">>")
    objects[7] = (b"<</Type /Outlines\n/First %d 0 R\n/Last %d 0 R\n/Count %d>>" % (items[0], items[-1], len(items))
                  if items else b"<</Type /Outlines\n/Count 0>>")
    objects[8] = b"<</Type /Catalog\n/Pages 3 0 R\n/Dests 6 0 R\n/Outlines 7 0 R>>"
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    for number in sorted(objects):
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    out += b"trailer\n<</Root 8 0 R>>\n%%EOF\n"
    return bytes(out)


BOOK = dict(pages=["Chapter one", "Theorem 1.1 here", "Chapter two"], links=[(3, "thm-one"), (1, "chapter-two")],
            uris=[(1, "https://example.org/")], dests={"thm-one": 2, "chapter-two": 3},
            outline=[("Chapter one", 1), ("Chapter two — ε", 3)])


def test_the_reader_reads_what_was_written():
    pdf = build_pdf.PdfFile(write_pdf(**BOOK))
    assert len(pdf.pages) == 3
    assert pdf.destinations() == {"thm-one": 2, "chapter-two": 3}
    assert pdf.links() == [{"page": 1, "dest": "chapter-two"}, {"page": 1, "uri": "https://example.org/"},
                           {"page": 3, "dest": "thm-one"}]
    assert pdf.outline() == [(0, "Chapter one", 1), (0, "Chapter two — ε", 3)]
    assert [pdf.page_text(i) for i in (1, 2, 3)] == BOOK["pages"]
    summary = build_pdf.check_pdf(write_pdf(**BOOK), titles=["Chapter one", "Chapter two"])
    assert summary["pages"] == 3 and summary["internal_links"] == 2 and summary["bookmarks"] == 2
    # the page count of the landing page's link: page objects, not the page tree's node (/Type /Pages)
    assert pdpkit_pdf.pdf_page_count(write_pdf(**BOOK)) == 3
    assert len(re.findall(rb"/Type /Page", write_pdf(**BOOK))) == 4  # the naive count, which the function avoids


def test_a_stream_is_read_by_its_length():
    # a stream's bytes may contain "endobj": the object ends after /Length bytes, not at the first "endobj"
    raw = b"q 1 0 0 1 0 0 cm % endobj 1 0 obj\nQ"
    data = write_pdf(**BOOK).replace(b"3 0 obj\n", b"2 0 obj\n<</Length %d>> stream\n" % len(raw) + raw
                                     + b"\nendstream\nendobj\n3 0 obj\n", 1)
    pdf = build_pdf.PdfFile(data)
    assert pdf.objects[2].rstrip().endswith(b"endstream") and raw in pdf.objects[2]
    assert len(pdf.pages) == 3 and pdf.page_text(2) == "Theorem 1.1 here"


@pytest.mark.parametrize("wrong, message", [
    (dict(links=[(3, "thm-one"), (1, "chapter-three")]), "undefined destinations"),
    (dict(uris=[(1, "http://127.0.0.1:8000/_images/figure.png")]), "files of the web book"),
    (dict(uris=[(1, "file:///tmp/book/chapters/intro.html")]), "files of the web book"),
    (dict(outline=[("Chapter two", 3), ("Chapter one", 1)]), "no bookmark"),
    (dict(pages=["Chapter one", "Theorem 1.1 here", "Chapter 2"]), "not in the PDF's text"),
])
def test_the_check_refuses_a_broken_pdf(wrong, message):
    with pytest.raises(AssertionError, match=message):
        build_pdf.check_pdf(write_pdf(**{**BOOK, **wrong}), titles=["Chapter one", "Chapter two"])


def test_titles_are_matched_across_line_breaks():
    # Chromium writes a heading that wraps without the space at its break: "objectiveperturbation"
    data = write_pdf(**{**BOOK, "outline": [("Chapter one", 1), ("Chapter two,wrapped", 3)],
                        "pages": ["Chapter one", "x", "Chapter two,", "wrapped"][:3]})
    build_pdf.check_pdf(data, titles=["Chapter one", "Chapter two, wrapped"], text_titles=False)


# --------------------------------------------------------------------------------------- the build's configuration

def test_the_pdf_config_renders_stored_outputs_and_changes_nothing_else(tmp_path):
    text = (ROOT / "_config.yml").read_text()
    derived = yaml.safe_load(build_pdf.pdf_config(text, ROOT / "_ext"))
    original = yaml.safe_load(text)
    assert derived["execute"]["execute_notebooks"] == "off"
    assert derived["sphinx"]["config"]["pdpkit_pdf_print"] is True
    for name, path in derived["sphinx"]["local_extensions"].items():
        assert pathlib.Path(path).is_absolute() and (pathlib.Path(path) / f"{name}.py").is_file()
    assert set(derived["sphinx"]["local_extensions"]) == set(original["sphinx"]["local_extensions"])
    for config in (derived, original):
        config["execute"].pop("execute_notebooks")
        config["sphinx"].pop("local_extensions")
        config["sphinx"]["config"].pop("pdpkit_pdf_print", None)
    assert derived == original
    with pytest.raises(ValueError, match="execute_notebooks"):
        build_pdf.pdf_config(text.replace("execute_notebooks:", "execute_notebook:"), ROOT / "_ext")
    with pytest.raises(ValueError, match="local_extensions"):
        build_pdf.pdf_config(re.sub(r"local_extensions:", "local_extension:", text), ROOT / "_ext")


def test_the_book_page_of_a_single_page_build(tmp_path):
    (tmp_path / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=chapters/intro.html" />')
    assert build_pdf.book_page(tmp_path) == "chapters/intro.html"
    (tmp_path / "index.html").write_text("<html><body>the book</body></html>")
    assert build_pdf.book_page(tmp_path) == "index.html"
    assert 760 < build_pdf.layout_width() < 920  # the web book's column on a laptop, so figures keep their size


def test_make_pdf_is_a_target_outside_make_test():
    makefile = (ROOT / "Makefile").read_text()
    phony = re.search(r"^\.PHONY:(.*?)(?<!\\)\n", makefile, re.M | re.S).group(1)
    assert "pdf" in phony.split()
    rule = re.search(r"^pdf:(.*)$", makefile, re.M)
    assert rule and "$(BROWSER_STAMP)" in rule.group(1)
    assert "tools/build_pdf.py" in makefile[rule.end():].split("\n\n")[0]
    assert re.search(r"^help:(?:\n\t.*)*make pdf", makefile, re.M)
    test_rule = re.search(r"^test:.*?(?=\n\n)", makefile, re.M | re.S).group(0)
    assert "pdf" not in test_rule


# ------------------------------------------------------------------------------------------- the Sphinx extension

CONF = """
extensions = {extensions!r}
root_doc = "chapters/intro"
html_static_path = ["_static"]
html_css_files = ["pdpkit_print.css"]  # as jupyter-book lists every style sheet of _static/
numfig = True
pdpkit_pdf_print = {print_mode!r}
pdpkit_pdf_file = "out/pdpkit.pdf"
"""

INTRO = """Landing
=======

First paragraph of the landing page.

Second paragraph.

.. toctree::
   :numbered:

   one
   two
"""

ONE = """Chapter one
===========

.. prf:theorem:: A result
   :label: thm-one

   Every statement holds.

.. exercise:: A question
   :label: ex-one

   Is it so?

.. figure:: /_static/dot.png
   :name: fig-dot

   A dot.
"""

TWO = """Chapter two
===========

By :prf:ref:`thm-one`, and see :numref:`fig-dot` and :ref:`ex-one`. Math: :math:`\\varepsilon_1 = 1`.
"""

DOT_PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                        "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db00000000049454e44ae426082")


def make_project(root: pathlib.Path, *, extensions: list[str] | None = None, print_mode: bool = False,
                 extra_conf: str = "") -> pathlib.Path:
    """A two-chapter book with a theorem, an exercise, a figure and math; its root document in ``chapters/``."""
    if extensions is None:
        extensions = ["sphinx_proof", "sphinx_exercise", "pdpkit_pdf"]
    (root / "chapters").mkdir(parents=True, exist_ok=True)
    (root / "_static").mkdir(exist_ok=True)
    (root / "_static" / "pdpkit_print.css").write_text((ROOT / "_static" / "pdpkit_print.css").read_text())
    (root / "_static" / "dot.png").write_bytes(DOT_PNG)
    (root / "conf.py").write_text(f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\n"
                                  + CONF.format(extensions=extensions, print_mode=print_mode) + extra_conf)
    (root / "chapters" / "intro.rst").write_text(INTRO)
    (root / "chapters" / "one.rst").write_text(ONE)
    (root / "chapters" / "two.rst").write_text(TWO)
    return root


def sphinx_build(src: pathlib.Path, out: pathlib.Path, builder: str = "html", *, fresh: bool = False):
    cmd = [sys.executable, "-m", "sphinx", "-b", builder, "-q", str(src), str(out)] + (["-E"] if fresh else [])
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def pdf_links(out: pathlib.Path, page: str = "chapters/intro.html") -> list[tuple[str, bool]]:
    """The landing page's links to the PDF: (href, whether the file it names exists in the output)."""
    html = (out / page).read_text()
    hrefs = re.findall(r'<a class="[^"]*pdpkit-pdf[^"]*" href="([^"]+)"', html)
    return [(href, (out / page).parent.joinpath(href).resolve().is_file()) for href in hrefs]


def test_the_link_checker_sees_a_dead_link(tmp_path):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "intro.html").write_text('<a class="reference external pdpkit-pdf" '
                                                      'href="../pdpkit.pdf">pdpkit.pdf</a>')
    assert pdf_links(tmp_path) == [("../pdpkit.pdf", False)]
    (tmp_path / "pdpkit.pdf").write_bytes(b"%PDF")
    assert pdf_links(tmp_path) == [("../pdpkit.pdf", True)]


def test_the_landing_page_links_the_pdf_only_when_it_exists(tmp_path):
    src = make_project(tmp_path / "src")
    out = tmp_path / "html"
    run = sphinx_build(src, out)
    assert run.returncode == 0, run.stderr
    assert pdf_links(out) == [] and not (out / "pdpkit.pdf").exists()
    assert "pdpkit_print.css" not in (out / "chapters" / "intro.html").read_text()  # only the print build has it

    data = write_pdf(**BOOK)
    (src / "out").mkdir()
    (src / "out" / "pdpkit.pdf").write_bytes(data)
    run = sphinx_build(src, out)  # incremental: nothing else changed, the landing page is written again
    assert run.returncode == 0, run.stderr
    assert pdf_links(out) == [("../pdpkit.pdf", True)]
    assert (out / "pdpkit.pdf").read_bytes() == data
    html = (out / "chapters" / "intro.html").read_text()
    text = re.sub(r"<[^>]+>", "", html)
    assert "3 pages" in text
    # after the first paragraph, before the second
    assert text.index("First paragraph") < text.index("pdpkit.pdf (3 pages") < text.index("Second paragraph")
    assert pdf_links(out, "chapters/one.html") == []  # the landing page only

    (src / "out" / "pdpkit.pdf").unlink()
    run = sphinx_build(src, out)
    assert run.returncode == 0, run.stderr
    assert pdf_links(out) == [] and not (out / "pdpkit.pdf").exists()


def test_the_print_build_has_the_print_sheet_and_no_link(tmp_path):
    src = make_project(tmp_path / "src", print_mode=True)
    (src / "out").mkdir()
    (src / "out" / "pdpkit.pdf").write_bytes(write_pdf(**BOOK))
    out = tmp_path / "single"
    run = sphinx_build(src, out, "singlehtml")
    assert run.returncode == 0, run.stderr
    html = (out / "chapters" / "intro.html").read_text()
    assert re.search(r'<link[^>]+href="_static/pdpkit_print\.css', html)
    assert "pdpkit-pdf" not in html and not (out / "pdpkit.pdf").exists()
    # sphinx-proof's block and sphinx-exercise's, numbered as in the HTML book, links as anchors of the one page
    assert re.search(r'class="proof theorem admonition" id="thm-one"', html)
    assert "Exercise 1.1" in html and "Fig. 1.1" in html
    assert re.search(r'href="(?:chapters/intro\.html)?#thm-one"', html)


def test_singlehtml_fails_on_sphinx_proof_without_the_extension(tmp_path):
    # the gap the extension fills: sphinx-exercise registers singlehtml visitors, sphinx-proof only html ones
    src = make_project(tmp_path / "src", extensions=["sphinx_proof", "sphinx_exercise"])
    run = sphinx_build(src, tmp_path / "single", "singlehtml")
    assert run.returncode != 0
    assert "unknown node type" in run.stderr + run.stdout
