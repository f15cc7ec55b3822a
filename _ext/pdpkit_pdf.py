"""The whole-book PDF: a link to it from the landing page when it has been built, and its print build.

* **The link.** When the PDF exists at build time (``pdpkit_pdf_file``, by default ``_build/pdf/pdpkit.pdf``
  under the book's source directory, where ``make pdf`` writes it), an HTML build copies it to the root of its
  output (``pdpkit.pdf``) and adds a paragraph after the first paragraph of the landing page (the root document)
  linking to it, with its page count and size. When it does not exist, there is no link and no copy (a copy left
  by an earlier build is removed). A change of the file (built, rebuilt or deleted) makes an incremental build
  write the landing page again.
* **The print build.** ``make pdf`` (``tools/build_pdf.py``) builds the book with Sphinx's ``singlehtml`` builder
  and ``pdpkit_pdf_print: true``. That build gets the print style sheet ``_static/pdpkit_print.css`` (every other
  build leaves it out: jupyter-book lists every style sheet of ``_static/`` for every page) and no link to the PDF.
* **singlehtml.** Sphinx looks up the visitors of an extension's nodes by the builder's name before its format:
  once one extension (sphinx-exercise) registers visitors for ``singlehtml``, the nodes registered for ``html``
  alone (sphinx-proof's theorem blocks) have none there. The ``html`` visitors are copied to ``singlehtml`` where
  it has none of its own.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil

from docutils import nodes
from sphinx.util import logging
from sphinx.util.osutil import relative_uri

logger = logging.getLogger(__name__)

PRINT_CSS = "pdpkit_print.css"
PDF_NAME = "pdpkit.pdf"  # its name in the HTML output, beside index.html
LINK_CLASS = "pdpkit-pdf-link"
_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")


def pdf_page_count(data: bytes) -> int:
    """The number of page objects in a PDF whose objects are not compressed (Chromium's, Skia's PDFs).

    ``/Type /Page`` objects are counted, not ``/Type /Pages`` (the page tree's nodes); 0 for anything else.
    """
    return len(_PAGE.findall(data))


def pdf_source(app) -> pathlib.Path:
    """Where the built PDF is looked for: ``pdpkit_pdf_file``, relative to the book's source directory."""
    return pathlib.Path(app.srcdir, app.config.pdpkit_pdf_file)


def _pdf_state(app):
    path = pdf_source(app)
    try:
        st = path.stat()
    except OSError:
        return None
    return (str(path), st.st_size, st.st_mtime_ns)


def _is_html(app) -> bool:
    return getattr(app.builder, "format", None) == "html"


def _config_inited(app, config) -> None:
    css = list(config.html_css_files or [])
    names = [entry[0] if isinstance(entry, (tuple, list)) else entry for entry in css]
    if config.pdpkit_pdf_print:
        if PRINT_CSS not in names:
            css.append(PRINT_CSS)
    else:
        css = [entry for entry, name in zip(css, names) if name != PRINT_CSS]
    config.html_css_files = css


def _builder_inited(app) -> None:
    handlers = app.registry.translation_handlers
    if "singlehtml" in handlers:
        for name, visitors in handlers.get("html", {}).items():
            handlers["singlehtml"].setdefault(name, visitors)
    app.pdpkit_pdf_linked = None
    if not _is_html(app) or app.config.pdpkit_pdf_print:
        return
    target = pathlib.Path(app.outdir, PDF_NAME)
    source = pdf_source(app)
    if source.is_file():
        os.makedirs(app.outdir, exist_ok=True)
        shutil.copyfile(source, target)
        data = target.read_bytes()
        app.pdpkit_pdf_linked = (pdf_page_count(data), len(data))
    elif target.exists():
        target.unlink()


def _env_get_outdated(app, env, added, changed, removed):
    """The landing page is written again when the PDF appeared, changed or went away."""
    state = _pdf_state(app) if _is_html(app) and not app.config.pdpkit_pdf_print else None
    before = getattr(env, "pdpkit_pdf_state", None)
    env.pdpkit_pdf_state = state
    root = app.config.root_doc
    if state != before and root in env.found_docs and root not in added | changed:
        return [root]
    return []


def link_paragraph(uri: str, pages: int, size: int) -> nodes.paragraph:
    """The landing page's paragraph: the whole book as one PDF, with its page count and size."""
    para = nodes.paragraph(classes=[LINK_CLASS])
    para += nodes.Text("The whole book is also one PDF, with the same numbering, links and bibliography: ")
    para += nodes.reference("", PDF_NAME, refuri=uri, internal=False, classes=["pdpkit-pdf"])
    details = f"{size / 1e6:.1f} MB" if pages <= 0 else f"{pages} pages, {size / 1e6:.1f} MB"
    para += nodes.Text(f" ({details}).")
    return para


def _doctree_resolved(app, doctree, docname) -> None:
    if docname != app.config.root_doc or not getattr(app, "pdpkit_pdf_linked", None):
        return
    if any(LINK_CLASS in node["classes"] for node in doctree.findall(nodes.paragraph)):
        return
    pages, size = app.pdpkit_pdf_linked
    uri = relative_uri(app.builder.get_target_uri(docname), PDF_NAME)
    para = link_paragraph(uri, pages, size)
    first = next(doctree.findall(nodes.paragraph), None)
    if first is None:
        section = next(doctree.findall(nodes.section), None)
        (section if section is not None else doctree).append(para)
    else:
        first.parent.insert(first.parent.index(first) + 1, para)


def setup(app):
    app.add_config_value("pdpkit_pdf_print", False, "html", types=[bool])
    app.add_config_value("pdpkit_pdf_file", "_build/pdf/pdpkit.pdf", "html", types=[str])
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    app.connect("env-get-outdated", _env_get_outdated)
    app.connect("doctree-resolved", _doctree_resolved)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
