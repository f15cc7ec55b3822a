"""The results page: links, anchors and layout of *Results at a glance*.

* **Errata anchors.** An item of a list (bulleted or numbered) whose paragraph opens with a bold errata id
  ``E-<source>-<result>-<slug>`` (``* **E-rw-6-signs** — ...``, the form of every chapter's *Errata and
  clarifications* box) gets that id as its HTML anchor, exactly as written (``objpert_ex_post.html#E-rw-6-signs``),
  and a ``¶`` permalink after the id, like Sphinx's headerlinks (classes ``headerlink pdpkit-permalink``). The ids
  are collected in the ``pdpkit`` domain, so the role ``{pdpkit:erratum}`E-rw-6-signs``` (or
  ``{pdpkit:erratum}`text <E-rw-6-signs>```) links to the item from any page, and a reference to an id that no
  chapter has is a warning (an error in the strict build).
* **Rows of the results tables.** A table with the class ``pdpkit-results`` (and ``pdpkit-src-<source>``), as
  ``tools/book_pages.py`` writes them, has one row per result: the row gets the anchor ``<source>-<number>``
  (:func:`row_id`, the rule of ``book_pages.row_id``), the classes ``pdpkit-result``, ``pdpkit-src-<source>`` and
  ``pdpkit-status-<status>``, its cells the class of their column (``pdpkit-col-num``, ``pdpkit-col-name``, ...),
  and its number becomes a link to the row itself.
* **Layout.** ``pdpkit_results.css`` keeps names whole at laptop widths and gives a phone one line per result
  (number, name, status), the details under it; ``pdpkit_results.js`` hides the details until the row is tapped
  and adds filters by source and by status. Without JavaScript every row and every detail is shown.
* ``{pdpkit:nostatement}`text``` is a short note (class ``pdpkit-nostatement``) on a row whose result has no
  statement block in the book.
"""

from __future__ import annotations

import html
import re

from docutils import nodes
from sphinx.domains import Domain, ObjType
from sphinx.roles import XRefRole
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.nodes import make_refnode

logger = logging.getLogger(__name__)

ERRATUM_ID = re.compile(r"E-[a-z]+-[A-Za-z0-9.]+-[a-z0-9.-]+")
COLUMNS = ("num", "name", "status", "evidence", "errata", "chapter", "api")
RESULTS_CLASS = "pdpkit-results"


def row_id(src: str, num: str) -> str:
    """``rw-thm-6`` for source ``rw``, number ``Thm 6`` (``tools/book_pages.py`` has the same rule)."""
    return src + "-" + re.sub(r"[^a-z0-9]+", "-", num.lower()).strip("-")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def erratum_items(document: nodes.Node) -> list[tuple[str, nodes.list_item]]:
    """Every list item whose first paragraph opens with a bold errata id: (id, item), in document order."""
    found = []
    for item in document.findall(nodes.list_item):
        if not item.children or not isinstance(item[0], nodes.paragraph):
            continue
        lead = _lead_strong(item[0])
        if lead is not None and ERRATUM_ID.fullmatch(lead.astext().strip()):
            found.append((lead.astext().strip(), item))
    return found


def _lead_strong(para: nodes.paragraph) -> nodes.strong | None:
    """The paragraph's first node, when it is bold (empty text nodes before it are skipped)."""
    for child in para.children:
        if isinstance(child, nodes.Text) and not child.astext().strip():
            continue
        return child if isinstance(child, nodes.strong) else None
    return None


class ErrataDomain(Domain):
    """Errata ids (anchors of the chapters' errata items) and the role that links to them."""

    name = "pdpkit"
    label = "pdpkit"
    object_types = {"erratum": ObjType("erratum", "erratum")}
    roles = {"erratum": XRefRole(warn_dangling=True)}
    initial_data: dict = {"errata": {}}  # id -> [(docname, anchor)]
    dangling_warnings = {"erratum": "erratum %(target)s is in no chapter's errata box"}

    @property
    def errata(self) -> dict[str, list[tuple[str, str]]]:
        return self.data.setdefault("errata", {})

    def note_erratum(self, eid: str, docname: str, anchor: str) -> None:
        places = self.errata.setdefault(eid, [])
        if (docname, anchor) not in places:
            places.append((docname, anchor))
            places.sort()

    def clear_doc(self, docname: str) -> None:
        for eid in list(self.errata):
            self.errata[eid] = [p for p in self.errata[eid] if p[0] != docname]
            if not self.errata[eid]:
                del self.errata[eid]

    def merge_domaindata(self, docnames, otherdata) -> None:
        for eid, places in otherdata.get("errata", {}).items():
            for docname, anchor in places:
                if docname in docnames:
                    self.note_erratum(eid, docname, anchor)

    def resolve_xref(self, env, fromdocname, builder, typ, target, node, contnode):
        places = self.errata.get(target)
        if not places:
            return None
        docname, anchor = places[0]
        if node.get("refexplicit") and isinstance(contnode, nodes.literal):  # a name in words, not an id
            contnode = nodes.inline(contnode.astext(), contnode.astext(), classes=["pdpkit-erratum-name"])
        return make_refnode(builder, fromdocname, docname, anchor, contnode, f"Erratum {target}")

    def resolve_any_xref(self, env, fromdocname, builder, target, node, contnode):
        return []

    def get_objects(self):
        for eid, places in self.errata.items():
            for docname, anchor in places:
                yield eid, eid, "erratum", docname, anchor, 1


def nostatement_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    return [nodes.inline(rawtext, text, classes=["pdpkit-nostatement"])], []


def reconstructed_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{pdpkit:reconstructed}`text```: the mark of a result that only a source's main text states,
    listed as its appendix states or uses it (class ``pdpkit-reconstructed``)."""
    return [nodes.inline(rawtext, text, classes=["pdpkit-nostatement", "pdpkit-reconstructed"])], []


class ErrataAnchors(SphinxTransform):
    """Give every errata item its id as anchor and record it in the ``pdpkit`` domain."""

    default_priority = 400

    def apply(self, **kwargs) -> None:
        domain = self.env.get_domain("pdpkit")
        for eid, item in erratum_items(self.document):
            if eid in self.document.ids:
                logger.warning("erratum %s is the first word of two items of one page", eid, location=item)
                continue
            item["ids"].insert(0, eid)
            item["classes"].append("pdpkit-erratum")
            self.document.ids[eid] = item
            domain.note_erratum(eid, self.env.docname, eid)


class ResultRows(SphinxTransform):
    """Anchors, classes and self-links for the rows of the results tables."""

    default_priority = 410

    def apply(self, **kwargs) -> None:
        for table in self.document.findall(nodes.table):
            if RESULTS_CLASS not in table["classes"]:
                continue
            src = next((c[len("pdpkit-src-"):] for c in table["classes"] if c.startswith("pdpkit-src-")), "")
            for group in table.findall(nodes.thead):
                for row in group.findall(nodes.row):
                    self._columns(row)
            for group in table.findall(nodes.tbody):
                for row in group.children:
                    if isinstance(row, nodes.row):
                        self._row(row, src)

    @staticmethod
    def _columns(row: nodes.row) -> list[nodes.entry]:
        entries = [e for e in row.children if isinstance(e, nodes.entry)]
        for name, entry in zip(COLUMNS, entries):
            entry["classes"].append(f"pdpkit-col-{name}")
        return entries

    def _row(self, row: nodes.row, src: str) -> None:
        entries = self._columns(row)
        if len(entries) != len(COLUMNS):
            logger.warning("a results row has %d cells, not %d", len(entries), len(COLUMNS), location=row)
            return
        rid = row_id(src, entries[0].astext().strip())
        if rid in self.document.ids:
            logger.warning("two results rows have the anchor %s", rid, location=row)
            return
        row["ids"].insert(0, rid)
        self.document.ids[rid] = row
        row["classes"] += ["pdpkit-result", f"pdpkit-src-{src}",
                           f"pdpkit-status-{slug(entries[2].astext())}"]
        para = entries[0].children[0] if entries[0].children else None
        if isinstance(para, nodes.paragraph):
            link = nodes.reference("", "", *para.children, refid=rid, classes=["pdpkit-rowlink"],
                                   reftitle="Link to this row")
            para.children = []
            para += link


class ErrataPermalinks(SphinxPostTransform):
    """A ``¶`` link after each errata id, to the item's own anchor (HTML only)."""

    default_priority = 805
    formats = ("html",)

    def run(self, **kwargs) -> None:
        if not getattr(self.config, "html_permalinks", True):
            return
        icon = getattr(self.config, "html_permalinks_icon", "¶") or "¶"
        for eid, item in erratum_items(self.document):
            if "pdpkit-erratum" not in item["classes"] or not item["ids"] or item["ids"][0] != eid:
                continue
            para = item[0]
            if any(isinstance(n, nodes.raw) and "pdpkit-erratum-link" in n.astext() for n in para.children):
                continue
            anchor = html.escape(eid, quote=True)
            link = (f'<a class="headerlink pdpkit-permalink pdpkit-erratum-link" href="#{anchor}" '
                    f'title="Link to this erratum">{icon}</a>')
            para.insert(para.index(_lead_strong(para)) + 1, nodes.raw("", link, format="html"))


def setup(app):
    app.add_domain(ErrataDomain)
    app.add_role_to_domain("pdpkit", "nostatement", nostatement_role)
    app.add_role_to_domain("pdpkit", "reconstructed", reconstructed_role)
    app.add_transform(ErrataAnchors)
    app.add_transform(ResultRows)
    app.add_post_transform(ErrataPermalinks)
    app.add_css_file("pdpkit_results.css", priority=800)
    app.add_js_file("pdpkit_results.js", priority=800)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
