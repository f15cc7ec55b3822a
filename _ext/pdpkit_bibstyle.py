"""The bibliography's style: one author–year label in the text and in the list, links, back-references.

The book cites author–year. This extension registers

* the pybtex formatting style ``pdpkit_authoryear`` (``bibtex_default_style``): pybtex's ``plain`` with labels
  such as ``Redberg & Wang 2021`` or ``Chaudhuri et al. 2011`` (``a``, ``b`` when two entries would share one),
  sorted by author, year and title; an entry's DOI, arXiv eprint and URL are links (``https://doi.org/…``,
  ``https://arxiv.org/abs/…``);
* the referencing style ``pdpkit_authoryear`` (``bibtex_reference_style``): ``{cite}`` / ``{cite:p}`` print the
  entry's label itself, ``[Redberg & Wang 2021]``, ``[Chaudhuri et al. 2011; Kifer et al. 2012]``, and ``{cite:t}``
  prints ``Redberg & Wang [2021]`` — so what a reader sees in the text is what they find in the list;
* back-references: under each entry of the bibliography, the pages that cite it, each linked to the place of
  its first citation there (``p.pdpkit-cited-in``). An entry that no page cites says why it is listed
  (``UNCITED``; ``p.pdpkit-listed-for``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from docutils import nodes
from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.template import join, node
from sphinxcontrib.bibtex.plugin import register_plugin as register_bibtex_plugin
from sphinxcontrib.bibtex.style.referencing import BaseReferenceStyle, BracketStyle, GroupReferenceStyle
from sphinxcontrib.bibtex.style.referencing.extra_empty import ExtraEmptyReferenceStyle
from sphinxcontrib.bibtex.style.template import entry_label, join2, post_text, pre_text, reference

#: Entries listed although no page cites them with ``{cite}``: key -> (what the entry is for, page or None).
UNCITED = {
    "jagielski2020auditing": ("Cited in the docstring of the statistical audits", "chapters/api/audit"),
    "ding2018detecting": ("Cited in the docstring of the statistical audits", "chapters/api/audit"),
    "dwork2006our": ("Further reading: the origin of (ε, δ)-DP and of the Gaussian mechanism", None),
    "dwork2009differential": ("Further reading: propose-test-release, the scheme behind test-and-release", None),
    "papernot2018scalable": ("Further reading: a data-dependent privacy analysis (PATE)", None),
    "efron2004least": ("The source of the diabetes data used in the chapter", "chapters/per_instance_dp"),
}


def _last_names(entry) -> list[str]:
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    return [" ".join(p.last_names).replace("{", "").replace("}", "") for p in persons]


def label_parts(label: str) -> tuple[str, str]:
    """``"Chaudhuri et al. 2011"`` -> ``("Chaudhuri et al.", "2011")`` (the year keeps its ``a``/``b``)."""
    who, _, year = label.rpartition(" ")
    return who, year


class AuthorYearLabelStyle(BaseLabelStyle):
    """Labels ``Author 2021``, ``Author & Other 2021``, ``Author et al. 2021`` (a, b when equal)."""

    def format_labels(self, sorted_entries):
        labels = []
        for entry in sorted_entries:
            names = _last_names(entry) or [entry.fields.get("title", entry.key)[:20]]
            if len(names) == 1:
                who = names[0]
            elif len(names) == 2:
                who = f"{names[0]} & {names[1]}"
            else:
                who = f"{names[0]} et al."
            labels.append(f"{who} {entry.fields.get('year', 'n.d.')}")
        seen: dict[str, int] = {}
        for label in labels:
            seen[label] = seen.get(label, 0) + 1
        suffix: dict[str, int] = {}
        for label in labels:
            if seen[label] > 1:
                suffix[label] = suffix.get(label, 0) + 1
                yield label + "abcdefghijklmnopqrstuvwxyz"[suffix[label] - 1]
            else:
                yield label


class AuthorYearStyle(PlainStyle):
    """pybtex's ``plain`` formatting with author–year labels, sorted by author and year.

    ``plain`` already renders ``doi`` as a link to ``https://doi.org/<doi>``, ``eprint`` as a link to
    ``https://arxiv.org/abs/<eprint>`` and ``url`` as a link to itself; an entry without any of them carries a
    ``note`` saying so, which ``plain`` prints.
    """

    default_label_style = "pdpkit_authoryear"
    default_sorting_style = "author_year_title"


# ---------------------------------------------------------------------------------------------- references in text
@node
def label_who(children, data):
    """The author part of the entry's label."""
    assert not children
    return Text(label_parts(data["formatted_entry"].label)[0])


@node
def label_year(children, data):
    """The year part of the entry's label (with its ``a``/``b``)."""
    assert not children
    return Text(label_parts(data["formatted_entry"].label)[1])


@dataclass
class _Parenthetical(BaseReferenceStyle):
    """``{cite}``, ``{cite:p}``: ``[Redberg & Wang 2021; Wang 2019]`` (``al``: without brackets)."""

    bracket: BracketStyle = field(default_factory=lambda: BracketStyle(sep="; "))

    def role_names(self):
        return [f"{alt}p{full}" for alt in ["", "al"] for full in ["", "s"]]

    def outer(self, role_name, children):
        return self.bracket.outer(children, brackets="al" not in role_name, capfirst=False)

    def inner(self, role_name):
        return join2(sep1=" ", sep2=", ")[pre_text, reference[entry_label], post_text]


@dataclass
class _Textual(BaseReferenceStyle):
    """``{cite:t}``: ``Redberg & Wang [2021]``."""

    bracket: BracketStyle = field(default_factory=lambda: BracketStyle(sep="; "))

    def role_names(self):
        return [f"{cap}t{full}" for cap in ["", "c"] for full in ["", "s"]]

    def outer(self, role_name, children):
        return self.bracket.outer(children, brackets=False, capfirst="c" in role_name)

    def inner(self, role_name):
        return join(sep=" ")[
            label_who,
            join["[", join2(sep1=" ", sep2=", ")[pre_text, reference[label_year], post_text], "]"],
        ]


@dataclass
class _Author(BaseReferenceStyle):
    """``{cite:author}``: ``Redberg & Wang``; ``{cite:authorpar}``: ``[Redberg & Wang]``."""

    def role_names(self):
        return ["author", "authors", "cauthor", "cauthors", "authorpar", "authorpars"]

    def outer(self, role_name, children):
        return BracketStyle(sep="; ").outer(children, brackets="par" in role_name, capfirst=role_name[0] == "c")

    def inner(self, role_name):
        return reference[label_who]


@dataclass
class _Label(BaseReferenceStyle):
    """``{cite:label}``: ``Redberg & Wang 2021``; ``{cite:labelpar}``: ``[Redberg & Wang 2021]``."""

    def role_names(self):
        return ["label", "labelpar"]

    def outer(self, role_name, children):
        return BracketStyle(sep="; ").outer(children, brackets=role_name == "labelpar")

    def inner(self, role_name):
        return reference[entry_label]


@dataclass
class _Year(BaseReferenceStyle):
    """``{cite:year}``: ``2021``; ``{cite:yearpar}``: ``[2021]``."""

    def role_names(self):
        return ["year", "yearpar"]

    def outer(self, role_name, children):
        return BracketStyle(sep="; ").outer(children, brackets=role_name == "yearpar")

    def inner(self, role_name):
        return reference[label_year]


@dataclass
class AuthorYearReferenceStyle(GroupReferenceStyle):
    """In-text references that print the bibliography's own labels (``pdpkit_authoryear``)."""

    def __post_init__(self):
        self.styles.extend([_Parenthetical(), _Textual(), _Author(), _Label(), _Year(), ExtraEmptyReferenceStyle()])
        super().__post_init__()


# ------------------------------------------------------------------------------------------------ back-references
def _page_order(env) -> list[str]:
    """Every page in the order of the table of contents (depth first from the root)."""
    order: list[str] = []

    def walk(doc):
        if doc in order:
            return
        order.append(doc)
        for child in env.toctree_includes.get(doc, []):
            walk(child)

    walk(env.config.root_doc)
    return order + sorted(set(env.found_docs) - set(order))


def citing_pages(env) -> dict[str, list[tuple[str, str]]]:
    """Citation key -> [(page, id of its first citation on that page)], pages in table-of-contents order."""
    domain = env.get_domain("cite")
    first: dict[str, dict[str, str]] = {}
    for ref in domain.citation_refs:
        for target in ref.targets:
            first.setdefault(target.key, {}).setdefault(ref.docname, ref.citation_ref_id)
    rank = {doc: i for i, doc in enumerate(_page_order(env))}
    return {key: sorted(pages.items(), key=lambda p: rank.get(p[0], len(rank))) for key, pages in first.items()}


def _page_link(app, fromdoc: str, todoc: str, anchor: str | None, text: str) -> nodes.reference:
    uri = app.builder.get_relative_uri(fromdoc, todoc) + (f"#{anchor}" if anchor else "")
    return nodes.reference("", text, internal=True, refuri=uri)


def _title(env, doc: str) -> str:
    return env.titles[doc].astext() if doc in env.titles else doc


def add_backrefs(app, doctree, docname):
    """Under each entry of the bibliography on ``docname``: ``Cited in: <page>, <page>.`` (linked)."""
    env = app.env
    domain = env.get_domain("cite")
    keys = {c.citation_id: c.key for c in domain.citations if c.bibliography_key.docname == docname}
    if not keys:
        return
    cited = citing_pages(env)
    for citation in doctree.findall(nodes.citation):
        key = next((keys[i] for i in citation["ids"] if i in keys), None)
        if key is None:
            continue
        para = nodes.paragraph(classes=["pdpkit-cited-in" if cited.get(key) else "pdpkit-listed-for"])
        if cited.get(key):
            para += nodes.Text("Cited in: ")
            for n, (doc, anchor) in enumerate(cited[key]):
                if n:
                    para += nodes.Text(", ")
                para += _page_link(app, docname, doc, anchor, _title(env, doc))
            para += nodes.Text(".")
        elif key in UNCITED:
            why, doc = UNCITED[key]
            para += nodes.Text(why)
            if doc and doc in env.all_docs:
                para += nodes.Text(": ")
                para += _page_link(app, docname, doc, None, _title(env, doc))
            para += nodes.Text(".")
        else:
            para += nodes.Text("Not cited on any page.")
        citation += para


def setup(app):
    register_plugin("pybtex.style.labels", "pdpkit_authoryear", AuthorYearLabelStyle)
    register_plugin("pybtex.style.formatting", "pdpkit_authoryear", AuthorYearStyle)
    register_bibtex_plugin("sphinxcontrib.bibtex.style.referencing", "pdpkit_authoryear", AuthorYearReferenceStyle)
    app.connect("doctree-resolved", add_backrefs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
