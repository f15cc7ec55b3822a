"""Reading aids: permalinks on theorem blocks, figures at full size, wide equations.

* **Permalinks.** Every labelled ``prf`` block (theorem, lemma, definition, algorithm, …) gets a
  ``¶``-style link at the end of its title whose ``href`` is the block's own anchor, written into
  the HTML at build time (a post-transform), so it works without JavaScript. The link carries
  Sphinx's ``headerlink`` class (the search results leave it out of their summaries) and
  ``pdpkit-permalink``, which ``pdpkit_reader.css`` shows on hover on a laptop and always on a
  touch screen or a narrow one.
* **Figures at full size.** Every image of a page becomes a link to its file (Sphinx already links
  the images it shows scaled; this covers the others as well and marks them all), so a tap on a
  phone opens the figure at its full resolution, where its tick labels have their drawn size.
  ``pdpkit_reader.css`` adds a small "full size" mark to the figures on a narrow screen.
* **Wide equations.** A display equation wider than the column scrolls inside its own box;
  ``pdpkit_reader.js`` marks such a box and ``pdpkit_reader.css`` fades its content out at the edge
  that hides more of it and gives it a visible scrollbar. The page itself never scrolls sideways.
"""

from __future__ import annotations

import html
import posixpath
import urllib.parse

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.osutil import relative_uri

FULLSIZE_TITLE = "Open the figure at full size"


def _is_prf_block(node: nodes.Node) -> bool:
    """A labelled sphinx-proof block (enumerable or ``:nonumber:``), not a ``{prf:proof}`` box."""
    if not isinstance(node, nodes.Element) or "label" not in node.attributes or "realtype" not in node.attributes:
        return False
    return type(node).__module__.startswith("sphinx_proof") and bool(node.get("ids"))


class ProofPermalinks(SphinxPostTransform):
    """Append a permalink to the title of every labelled ``prf`` block."""

    default_priority = 800
    formats = ("html",)

    def run(self, **kwargs) -> None:
        if not getattr(self.config, "html_permalinks", True):
            return
        icon = getattr(self.config, "html_permalinks_icon", "¶") or "¶"
        for node in list(self.document.findall(_is_prf_block)):
            titles = [child for child in node.children if isinstance(child, nodes.title)]
            if not titles or any("pdpkit-permalink" in raw.astext() for raw in titles[0].findall(nodes.raw)):
                continue
            anchor = node["ids"][0]
            kind = str(node.get("realtype", "result")).replace("_", " ")
            what = html.escape(f"Link to this {kind}", quote=True)
            link = (f'<a class="headerlink pdpkit-permalink" href="#{html.escape(anchor, quote=True)}" '
                    f'title="{what}" aria-label="{what}">{icon}</a>')
            titles[0] += nodes.raw("", link, format="html")


class FullSizeImageLinks(SphinxPostTransform):
    """Make every image that is not a link already a link to its own file (the full-size picture)."""

    default_priority = 810
    formats = ("html",)

    def run(self, **kwargs) -> None:
        builder = self.app.builder
        if not getattr(builder, "html_scaled_image_link", False):  # e.g. epub: no links around images
            return
        imgpath = relative_uri(builder.get_target_uri(self.env.docname), builder.imagedir)
        for image in list(self.document.findall(nodes.image)):
            if isinstance(image.parent, nodes.reference) or "no-scaled-link" in image["classes"]:
                continue
            uri = image["uri"]
            if uri in self.env.images:
                target = posixpath.join(imgpath, urllib.parse.quote(self.env.images[uri][1]))
            elif "://" in uri or uri.startswith("data:"):
                target = uri
            else:  # an image the builder does not copy cannot be linked
                continue
            reference = nodes.reference("", "", internal=True, refuri=target, reftitle=FULLSIZE_TITLE,
                                        classes=["pdpkit-fullsize"])
            image.replace_self(reference)
            reference.append(image)


def setup(app):
    app.add_post_transform(ProofPermalinks)
    app.add_post_transform(FullSizeImageLinks)
    # the book's ``_static/`` is on html_static_path and jupyter-book lists its files in
    # html_css_files / html_js_files, which Sphinx loads at priority 800: the same file with the
    # same attributes is kept once
    app.add_css_file("pdpkit_reader.css", priority=800)
    app.add_js_file("pdpkit_reader.js", priority=800)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
