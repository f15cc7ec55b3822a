"""One numbering rule for the whole book.

The book numbers its own figures, tables and chapters; the five sources number theirs. A
number of the book is written only through a cross-reference role (``{numref}``,
``{prf:ref}``), which renders the number the build gives the object. A number of a
source is always written with its source: "R&W Alg 4", "ADT Alg 4", "RKW Thm 3.2",
"Wang Thm 4.1", "LN Lemma 10.1" (the abbreviations are stated once, on the Notation
page), or the source's name in full ("Redberg & Wang 2021, Thm 6"), or a ``{cite}``
role, in the same sentence. So "Figure 4" alone is refused wherever a reader could read
it — in a chapter's text, in a theorem's title, and in a figure's panel titles drawn by
code (the chapters' code cells and ``pdpkit.experiments``).
"""

from __future__ import annotations

import ast
import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"

# A numbered object: the kinds the sources and the book number.
KIND = (
    r"Figures?|Figs?\.?|Tables?|Algorithms?|Algs?\.?|Theorems?|Thms?\.?|Lemmas?|Propositions?|Props?\.?"
    r"|Corollar(?:y|ies)|Cors?\.?|Remarks?|Examples?|Definitions?|Defs?\.?|Claims?|Equations?|Eqs?\.|eqs?\."
)
NUMBERED = re.compile(rf"(?<![\w-])(?:{KIND})[ \u00a0]?\(?(?:[A-H]\.?)?\d+")

# What names a source: the book's abbreviations, the sources' names, a citation, an author and year.
SOURCE = re.compile(
    r"R&W|\bRKW\b|\bADT\b|\bLN\b|\bWang\b|Redberg|Asi, Duchi|lecture notes|\{cite(?::\w+)?\}"
    r"|\b[A-Z][a-z]+(?: et al\.| & [A-Z][a-z]+|, [A-Z][a-z]+)*,? (?:19|20)\d\d\b"
)

# Abbreviations whose full stop does not end a sentence.
_ABBREV = re.compile(r"\b(?:Figs?|Algs?|Thms?|Props?|Cors?|Defs?|Eqs?|eqs?|App|Apps|Sec|cf|vs|resp|e\.g|i\.e|et al)\.")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-Z*({\[$])|\n\s*\n|\n(?=\s*(?:[*|-]|\d+\.|#|:::|```))")


def _mask(text: str) -> str:
    """The prose a reader reads: roles, code and math replaced by neutral tokens."""
    text = re.sub(r"^(```+|~~~+)(?!\{).*?^\1", " ", text, flags=re.S | re.M)  # code fences (not directives)
    text = re.sub(r"\{cite(?::\w+)?\}`[^`]*`", " {cite} ", text)
    text = re.sub(r"\{(?:numref|prf:ref|ref|eq|doc|download|py:\w+)\}`[^`]*`", " ROLE ", text)
    text = re.sub(r"`[^`]*`", " CODE ", text)
    text = re.sub(r"\$\$.*?\$\$", " MATH ", text, flags=re.S)
    text = re.sub(r"(?<!\\)\$[^$]*(?<!\\)\$", " MATH ", text)
    text = re.sub(r"^:(?:label|class|name|nonumber|enumerated)?:.*$", " ", text, flags=re.M)
    return text


def unqualified(text: str) -> list[str]:
    """Each numbered object in ``text`` whose sentence names no source, with its sentence."""
    prose = _mask(text)
    protected = _ABBREV.sub(lambda m: m.group(0)[:-1] + "\u2024", prose)  # one-dot leader: not a full stop
    found = []
    for sentence in _SENTENCE_END.split(protected):
        if NUMBERED.search(sentence) and not SOURCE.search(" ".join(sentence.split())):
            for m in NUMBERED.finditer(sentence):
                found.append(f"{m.group(0)!r} in: {' '.join(sentence.split())[:160]}")
    return found


PAGES = ["notation.md", "api.md"]  # the book's pages written by hand (chapters are notebooks)


def _markdown_pages() -> list[tuple[str, str]]:
    pages = []
    for nb_path in sorted(CHAPTERS.glob("*.ipynb")):
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        for k, cell in enumerate(nb["cells"]):
            if cell["cell_type"] == "markdown":
                pages.append((f"{nb_path.name} cell {k}", "".join(cell["source"])))
            shown = cell.get("metadata", {}).get("mystnb", {})  # a figure's caption and alt text
            for part, key in (("figure", "caption"), ("image", "alt")):
                if shown.get(part, {}).get(key):
                    pages.append((f"{nb_path.name} cell {k} {part} {key}", shown[part][key]))
    for md in PAGES:
        pages.append((md, (CHAPTERS / md).read_text(encoding="utf-8")))
    return pages


_TITLE_CALL = {"set_title", "suptitle", "title", "set_xlabel", "set_ylabel", "xlabel", "ylabel", "set_label"}
_TITLE_KW = {"title", "xlabel", "ylabel"}


def title_strings(source: str) -> list[str]:
    """The text of every title and axis label a piece of code draws.

    A title's argument is read as text: its strings, an f-string's fields as a number, and a name
    (a tuple of panels, a dict of titles) through the value last assigned to it in the same code.
    """
    tree = ast.parse(source)
    assigned = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned[target.id] = node.value

    def strings(node, seen=frozenset()) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.JoinedStr):
            return "".join(v.value if isinstance(v, ast.Constant) else strings(v.value, seen) or "9"
                           for v in node.values)
        if isinstance(node, ast.BinOp):
            return strings(node.left, seen) + strings(node.right, seen)
        if isinstance(node, ast.IfExp):  # a part drawn or not: the title with it
            return strings(node.body, seen) + strings(node.orelse, seen)
        if isinstance(node, ast.Name):
            value = assigned.get(node.id)
            return strings(value, seen | {node.id}) if value is not None and node.id not in seen else ""
        return "\n\n".join(s for s in (strings(child, seen) for child in ast.iter_child_nodes(node)) if s)

    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in _TITLE_CALL and node.args:
                texts.append(strings(node.args[0]))
            texts += [strings(kw.value) for kw in node.keywords if kw.arg in _TITLE_KW]
        elif isinstance(node, (ast.For, ast.comprehension)):  # panels: for ax, ..., title in (...)
            names = [t.id for t in ast.walk(node.target) if isinstance(t, ast.Name)]
            if any("title" in n for n in names):
                texts.append(strings(node.iter))
    return [t for t in texts if t.strip()]


def _code_sources() -> list[tuple[str, str]]:
    sources = []
    for nb_path in sorted(CHAPTERS.glob("*.ipynb")):
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        for k, cell in enumerate(nb["cells"]):
            if cell["cell_type"] == "code":
                src = "".join(cell["source"])
                src = "\n".join(line for line in src.splitlines() if not line.lstrip().startswith(("%", "!")))
                sources.append((f"{nb_path.name} cell {k}", src))
    for py in sorted((ROOT / "pdpkit" / "experiments").glob("*.py")):
        sources.append((f"pdpkit/experiments/{py.name}", py.read_text(encoding="utf-8")))
    sources.append(("pdpkit/plotting.py", (ROOT / "pdpkit" / "plotting.py").read_text(encoding="utf-8")))
    return sources


# ------------------------------------------------------------------ the checker, tested first
@pytest.mark.parametrize("text", [
    "The book's Figure 4 shows the worst case.",
    "On the kidney data of Figure 7 below the leverage is small.",
    "**Figure 3** plots the Rényi divergence.",
    "Alg 4 falls back to its regularized estimator.",
    "The source's Fig. 5 and Table 2 agree.",
    "Lemma 19 is loose by a factor $\\sqrt 2$.",
    "By Thm 2.8 of the third source, the noise is larger.",
    "Kifer et al. state Thm 2.8 for every convex loss.",
])
def test_the_check_refuses_an_unqualified_number(text):
    assert unqualified(text), f"accepted: {text!r}"


@pytest.mark.parametrize("text", [
    "R&W Alg 4 falls back to its regularized estimator; ADT Alg 4 bounds the largest eigenvalue.",
    "{numref}`fig-ex-post-worst` reproduces Redberg & Wang's Fig 4 and Fig 5.",
    "The RDP of {prf:ref}`RKW Thm 3.2 <thm-rkw-3-2>` is finite.",
    "The leverage satisfies {prf:ref}`R&W Lemma 19 <lem-rw-19>`.",
    "On the kidney data of {numref}`fig-ex-post-kidney` the leverage is small.",
    "Lemma 10.1 of {cite}`wang2022lecture` is a change of variables.",
    "Zhu, Dong & Wang 2022, Thm 10, compose dominating pairs.",
    "The error $\\text{Thm 2}$ in math, `Alg 3` in code and E-rw-alg2-small-lambda are not prose.",
])
def test_the_check_accepts_a_qualified_number(text):
    assert not unqualified(text), unqualified(text)


def test_a_number_in_another_sentence_does_not_qualify():
    assert unqualified("R&W prove it in the appendix. Alg 4 then falls back.")
    assert not unqualified("R&W prove it in the appendix; R&W Alg 4 then falls back.")


def test_titles_are_read_from_code():
    code = (
        'ax.set_title("Figure 4: worst case vs n")\n'
        'ax.set(xlabel="n", title=f"Fig {k}: vs d")\n'
        'fig.suptitle(rf"Figure {no}: $n$")\n'
        'for ax, res, title in ((a, r, "Figures 7 and 8"),):\n    ax.set_title(title)\n'
        'ax.plot(x, y, label="Thm 3.2")\n'
        'names = {"a": "Alg 3 (Thm 1)"}\nax.set(title=f"{names[a]}: slope")\n'
    )
    titles = title_strings(code)
    assert len([t for t in titles if unqualified(t)]) == 5, titles
    assert not [t for t in title_strings('ax.set_title("RKW Fig 3: Rényi divergence")') if unqualified(t)]


# ------------------------------------------------------------------ the book
def test_chapter_text_qualifies_every_source_number():
    bad = [f"{where}: {hit}" for where, text in _markdown_pages() for hit in unqualified(text)]
    assert not bad, f"{len(bad)} numbers without their source, e.g.\n" + "\n".join(bad[:40])


def test_panel_titles_qualify_every_source_number():
    bad = [f"{where}: {hit}" for where, src in _code_sources() for t in title_strings(src) for hit in unqualified(t)]
    assert not bad, f"{len(bad)} panel titles with a number and no source, e.g.\n" + "\n".join(bad[:40])


def test_book_numbers_are_never_hard_coded():
    """The book's own figures and tables are referred to through {numref}, never as "Figure 5.2"."""
    bad = []
    for where, text in _markdown_pages():
        for m in re.finditer(r"(?<![\w-])(?:Figure|Fig\.?|Table)[ \u00a0]\d+\.\d+", _mask(text)):
            bad.append(f"{where}: {m.group(0)!r}")
    assert not bad, bad
