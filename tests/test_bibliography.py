"""The bibliography (``references.bib``), its style and how the chapters cite it; the repository wiring.

* Every entry carries an identifier in its own field — ``doi``, ``url`` or ``eprint`` with ``archiveprefix =
  {arXiv}`` — or a ``note`` saying it has none; identifiers are well formed (a DOI ``10.<registrant>/<suffix>``, a
  new-style arXiv id ``YYMM.NNNNN`` with a real month and year, an ``https://`` URL), never written as plain text in
  another field (``note = {arXiv:…}``) and never beside a note saying there is none.
* The identifier that a source prints on its own front matter is the one recorded: the third paper's
  ``arXiv:2401.00583`` (read from ``../shared/seeds/``, skipped where the seeds are absent).
* Every entry is cited by a chapter (``{cite}``, ``{cite:p}``, ``{cite:t}`` …) or listed in
  ``_ext/pdpkit_bibstyle.UNCITED`` with its reason, and no listed entry is in fact cited; every cited key exists;
  the chapters use only the ``cite`` roles of the book's one style.
* The labels of the list (``Redberg & Wang 2021``, ``Dwork et al. 2006a``) are unique, and the in-text style prints
  exactly them (``[Redberg & Wang 2021]``, ``Redberg & Wang [2021]``).
* Accent folding of the search index; the repository URL turns the buttons and the BibTeX ``url`` on, and only then.

Each check is also run on a wrong variant (an entry without identifier, a malformed DOI, an arXiv id with month
13, an identifier in a note, a missing ``archiveprefix``, a stale ``UNCITED`` entry) and must reject it.
"""

from __future__ import annotations

import datetime
import json
import pathlib
import re
import sys

import pytest
from pybtex.database import parse_string

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))

import pdpkit_bibstyle  # noqa: E402
import pdpkit_search  # noqa: E402

BIB = ROOT / "references.bib"
SEEDS = ROOT.parent / "shared" / "seeds"
DOI = re.compile(r"^10\.\d{4,9}/[^\s{}]+$")
ARXIV_NEW = re.compile(r"^(\d{2})(\d{2})\.(\d{4,5})$")
ARXIV_OLD = re.compile(r"^[a-z-]+(\.[A-Z]{2})?/\d{7}$")
URL = re.compile(r"^https?://[^\s{}]+$")
NO_ID_NOTE = re.compile(r"No DOI, URL or arXiv identifier")
PLAIN_ID = re.compile(r"(?i)(arxiv:\s*\d|doi:\s*10\.|https?://|\b10\.\d{4,9}/)")
CITE = re.compile(r"\{(cite(?::[a-z]+)?|footcite(?::[a-z]+)?)\}`([^`]*)`")
STYLE_ROLES = {"cite", "cite:p", "cite:t", "cite:ps", "cite:ts", "cite:ct", "cite:alp", "cite:label", "cite:year",
               "cite:author"}


def _arxiv_ok(eprint: str) -> bool:
    m = ARXIV_NEW.match(eprint)
    if m:
        yy, mm = int(m.group(1)), int(m.group(2))
        year = 2000 + yy
        return 1 <= mm <= 12 and 2007 <= year <= datetime.date.today().year and (year > 2014 or len(m.group(3)) == 4)
    return bool(ARXIV_OLD.match(eprint))


def bib_problems(text: str) -> list[str]:
    """What is wrong with the identifiers of a BibTeX file's entries."""
    problems = []
    for key, entry in parse_string(text, "bibtex").entries.items():
        f = {k.lower(): str(v) for k, v in entry.fields.items()}
        has = [k for k in ("doi", "url", "eprint") if f.get(k)]
        note = f.get("note", "")
        if not has and not NO_ID_NOTE.search(note):
            problems.append(f"{key}: no doi, url or eprint, and no note saying it has none")
        if has and NO_ID_NOTE.search(note):
            problems.append(f"{key}: an identifier and a note saying it has none")
        if "doi" in f and not DOI.match(f["doi"]):
            problems.append(f"{key}: malformed doi {f['doi']!r}")
        if "url" in f and not URL.match(f["url"]):
            problems.append(f"{key}: malformed url {f['url']!r}")
        if "eprint" in f:
            if f.get("archiveprefix", "").lower() != "arxiv":
                problems.append(f"{key}: eprint without archiveprefix = {{arXiv}}")
            if not _arxiv_ok(f["eprint"]):
                problems.append(f"{key}: malformed arXiv id {f['eprint']!r}")
        for name, value in f.items():
            if name not in ("doi", "url", "eprint") and PLAIN_ID.search(value):
                problems.append(f"{key}: an identifier written as text in {name!r}: {value!r}")
    return problems


def _sources() -> dict[str, str]:
    out = {}
    for path in sorted((ROOT / "chapters").rglob("*")):
        if path.suffix == ".md":
            out[path.relative_to(ROOT).as_posix()] = path.read_text()
        elif path.suffix == ".ipynb":
            nb = json.loads(path.read_text())
            out[path.relative_to(ROOT).as_posix()] = "\n".join("".join(c["source"]) for c in nb["cells"])
    return out


def cited_keys(sources: dict[str, str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name, text in sources.items():
        for _role, keys in CITE.findall(text):
            for key in keys.split(","):
                out.setdefault(key.strip(), set()).add(name)
    return out


def citation_problems(bib_keys: set[str], cited: dict[str, set[str]], uncited: dict) -> list[str]:
    problems = [f"{k}: cited ({sorted(cited[k])}) but not in references.bib" for k in cited if k not in bib_keys]
    for key in sorted(bib_keys):
        if key not in cited and key not in uncited:
            problems.append(f"{key}: cited nowhere and not listed in UNCITED")
        if key in cited and key in uncited:
            problems.append(f"{key}: listed in UNCITED but cited in {sorted(cited[key])}")
    problems += [f"{k}: in UNCITED but not in references.bib" for k in uncited if k not in bib_keys]
    problems += [f"{k}: UNCITED gives no reason" for k, (why, _doc) in uncited.items() if len(why) < 10]
    return problems


# --------------------------------------------------------------------------------------------- identifiers
def test_every_entry_has_a_well_formed_identifier_or_says_it_has_none():
    text = BIB.read_text()
    assert len(parse_string(text, "bibtex").entries) >= 36
    assert bib_problems(text) == []


def test_most_entries_are_identified():
    entries = parse_string(BIB.read_text(), "bibtex").entries
    with_id = [k for k, e in entries.items() if any(f in e.fields for f in ("doi", "url", "eprint"))]
    assert len(with_id) >= 30, sorted(set(entries) - set(with_id))


GOOD = """@article{a, author = {A, B}, title = {T}, journal = {J}, year = {2020}, doi = {10.1000/xyz}}"""


@pytest.mark.parametrize("wrong, what", [
    ("@article{a, author = {A, B}, title = {T}, year = {2020}}", "no doi"),
    ("@article{a, author = {A, B}, title = {T}, year = {2020}, doi = {https://doi.org/10.1/x}}", "malformed doi"),
    ("@article{a, author = {A, B}, title = {T}, year = {2020}, eprint = {2413.00583}, archiveprefix = {arXiv}}",
     "malformed arXiv"),
    ("@article{a, author = {A, B}, title = {T}, year = {2020}, eprint = {2401.583}, archiveprefix = {arXiv}}",
     "malformed arXiv"),
    ("@article{a, author = {A, B}, title = {T}, year = {2020}, eprint = {2401.00583}}", "archiveprefix"),
    ("@article{a, author = {A, B}, title = {T}, year = {2020}, note = {arXiv:2401.00583}}", "no doi"),
    ("@misc{a, author = {A, B}, title = {T}, year = {2020}, howpublished = {Preprint, arXiv:2401.00583}}",
     "as text"),
    ("@article{a, author = {A, B}, title = {T}, year = {2020}, url = {www.example.org}}", "malformed url"),
    ("@article{a, author = {A, B}, title = {T}, year = {2020}, doi = {10.1000/x},"
     " note = {No DOI, URL or arXiv identifier recorded}}", "an identifier and a note"),
])
def test_the_identifier_check_rejects_wrong_entries(wrong, what):
    assert bib_problems(GOOD) == []
    problems = bib_problems(wrong)
    assert any(what in p for p in problems), problems


def test_a_source_s_own_identifier_is_the_one_recorded():
    seeds = sorted(SEEDS.glob("002_*.txt")) if SEEDS.is_dir() else []
    if not seeds:
        pytest.skip("the source documents are not next to the repository")
    front = seeds[0].read_text()[:3000]
    printed = re.search(r"arXiv:(\d{4}\.\d{4,5})(v\d+)?", front).group(1)
    assert "Objective Perturbation" in front
    entry = parse_string(BIB.read_text(), "bibtex").entries["redberg2023improving"]
    assert entry.fields["eprint"] == printed
    assert str(entry.fields["archiveprefix"]).lower() == "arxiv"


# ------------------------------------------------------------------------------------------------ citations
def test_every_entry_is_cited_or_listed_with_a_reason():
    keys = set(parse_string(BIB.read_text(), "bibtex").entries)
    cited = cited_keys(_sources())
    assert len(cited) >= 25
    assert citation_problems(keys, cited, pdpkit_bibstyle.UNCITED) == []


def test_the_citation_check_rejects_a_stale_or_missing_reason():
    keys = {"a", "b", "c"}
    cited = {"a": {"x.md"}, "b": {"y.md"}}
    assert citation_problems(keys, cited, {"c": ("Further reading on c", None)}) == []
    assert citation_problems(keys, cited, {}) != []  # c cited nowhere, no reason
    assert citation_problems(keys, cited, {"c": ("ok reason here", None), "a": ("cited after all", None)}) != []
    assert citation_problems(keys, {**cited, "z": {"x.md"}}, {"c": ("Further reading", None)}) != []


def test_the_chapters_use_the_book_s_citation_roles_only():
    roles = {role for text in _sources().values() for role, _keys in CITE.findall(text)}
    assert roles and roles <= STYLE_ROLES, roles - STYLE_ROLES
    # no citation in the comma form of another style ("(Wang, 2019)") bypasses the bibliography
    for name, text in _sources().items():
        assert not re.search(r"\((?:Redberg|Wang|Asi|Chaudhuri|Kifer)(?: & \w+| et al\.)?, \d{4}\)", text), name


def test_labels_are_unique_and_the_text_prints_them():
    entries = parse_string(BIB.read_text(), "bibtex").entries
    style = pdpkit_bibstyle.AuthorYearStyle(label_style=pdpkit_bibstyle.AuthorYearLabelStyle)
    formatted = list(style.format_entries(entries.values()))
    labels = {e.key: e.label for e in formatted}
    assert len(set(labels.values())) == len(labels)
    assert labels["redberg2021privately"] == "Redberg & Wang 2021"
    assert labels["chaudhuri2011differentially"] == "Chaudhuri et al. 2011"
    assert {labels["dwork2006calibrating"], labels["dwork2006our"]} == {"Dwork et al. 2006a", "Dwork et al. 2006b"}
    assert pdpkit_bibstyle.label_parts("Dwork et al. 2006a") == ("Dwork et al.", "2006a")
    # the rendered entries link their identifiers
    html = {e.key: e.text.render_as("html") for e in formatted}
    assert 'href="https://arxiv.org/abs/2401.00583"' in html["redberg2023improving"]
    assert 'href="https://doi.org/10.1007/11681878_14"' in html["dwork2006calibrating"]
    assert "No DOI, URL or arXiv identifier" in html["wang2022lecture"]


def test_the_in_text_style_covers_every_role():
    from sphinxcontrib.bibtex.domain import BibtexDomain

    style = pdpkit_bibstyle.AuthorYearReferenceStyle()
    assert set(BibtexDomain._role_names) <= set(style.role_style)


# ---------------------------------------------------------------------------------------- search and repository
def test_folding():
    fold = pdpkit_search.fold
    assert fold("Rényi") == "Renyi" and fold("Erdős") == "Erdos" and fold("Straße") == "Strasse"
    assert fold("renyi") == "renyi"
    lang = pdpkit_search.SearchEnglishFolded({})
    assert lang.stem("Rényi") == lang.stem("Renyi") == lang.stem("renyi")
    assert lang.stem("Rényi") != pdpkit_search.SearchEnglish({}).stem("Rényi")  # the unfolded index differs


class _Config:
    def __init__(self, url=""):
        self.html_theme_options = {"repository_url": url} if url else {}
        self.pdpkit_repository_url = ""
        self.root_doc = "chapters/intro"


class _App:
    def __init__(self, config):
        self.config = config


@pytest.mark.parametrize("yml_url, env_url, want", [
    ("", "", ""),
    ("https://example.org/pdpkit", "", "https://example.org/pdpkit"),
    ("", "https://example.org/p/", "https://example.org/p"),
    ("https://a.example/x", "https://b.example/y", "https://b.example/y"),
])
def test_the_repository_url_switches_the_buttons_and_the_citation(monkeypatch, yml_url, env_url, want):
    monkeypatch.setenv(pdpkit_search.ENV_URL, env_url)
    config = _Config(yml_url)
    pdpkit_search.wire_repository(None, config)
    opts = config.html_theme_options
    assert config.pdpkit_repository_url == want
    assert opts["use_repository_button"] is opts["use_issues_button"] is bool(want)
    assert opts.get("repository_url", "") == want
    source = [(ROOT / "chapters" / "intro.md").read_text()]
    pdpkit_search.cite_with_url(_App(config), "chapters/intro", source)
    block = re.search(r"@misc\{pdpkit,\n(.*?)\n\}", source[0], re.S).group(1)
    assert (f"url          = {{{want}}}" in block) is bool(want)
    assert block.count("url") == (1 if want else 0)


def test_the_intro_has_the_get_the_code_section():
    intro = (ROOT / "chapters" / "intro.md").read_text()
    section = intro.split("## Get the code", 1)[1].split("\n## ", 1)[0]
    for needed in ("{pdpkit-get-code}", "make book", "make test", "make lab", "pip install -e ."):
        assert needed in section, needed
    assert "git clone" not in section  # the clone line comes from the one place that knows the URL
    assert pdpkit_search.clone_url("https://github.com/o/r") == "https://github.com/o/r.git"
