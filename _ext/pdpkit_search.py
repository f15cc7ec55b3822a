"""Finding the book's content and its code: search that folds accents and ranks chapters first; the repository.

Search (Sphinx's own, in ``search.html``):

* **Accents are folded in the index**: the English search language is replaced by one whose ``stem`` folds a
  word to ASCII before stemming (``Rényi`` is indexed as ``renyi``), and ``_static/pdpkit_search.js`` folds the
  query the same way before Sphinx's ``Search`` parses it, so ``Renyi``, ``renyi`` and ``Rényi`` find the same
  pages.
* **Chapters rank above API pages** for the words of their titles: the same script defines the ``Scorer``
  (before ``searchtools.js``, which then keeps it) whose ``score`` lifts a chapter whose page title holds every
  query word above everything else, then a chapter with a section title holding them; API pages keep Sphinx's
  scores.

Where the code is: the repository's URL is set in one place, ``repository: url:`` of ``_config.yml`` or the
environment variable ``PDPKIT_REPOSITORY_URL`` (which wins). With a URL the theme's repository buttons
(``use_repository_button``, ``use_issues_button``) are on, the ``pdpkit-get-code`` directive (in
``chapters/intro.md``) prints the ``git clone`` line, and
the intro's "How to cite" BibTeX gains the ``url`` field; without one the buttons stay off and the directive says
how to obtain the project otherwise.
"""

from __future__ import annotations

import os
import re
import unicodedata

from docutils import nodes
from sphinx.search.en import SearchEnglish
from sphinx.util.docutils import SphinxDirective

#: Letters that Unicode decomposition does not reduce to ASCII (the same table is in ``pdpkit_search.js``).
_EXTRA_FOLDS = {"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i"}

ENV_URL = "PDPKIT_REPOSITORY_URL"
ENV_PROVIDER = "PDPKIT_REPOSITORY_PROVIDER"  # github, gitlab or bitbucket, for a host the theme cannot infer


def fold(word: str) -> str:
    """``"Rényi"`` -> ``"Renyi"``: drop the marks (category M) after compatibility decomposition, then map the rest.

    The same rule as the script's ``fold`` (``normalize("NFKD")``, then remove ``\\p{M}``).
    """
    decomposed = unicodedata.normalize("NFKD", word)
    stripped = "".join(ch for ch in decomposed if not unicodedata.category(ch).startswith("M"))
    return "".join(_EXTRA_FOLDS.get(ch, _EXTRA_FOLDS.get(ch.lower(), ch)) for ch in stripped)


class SearchEnglishFolded(SearchEnglish):
    """English search with accents folded before stemming, in the index (the script folds queries)."""

    lang = "en"

    def stem(self, word: str) -> str:
        return super().stem(fold(word))


# ------------------------------------------------------------------------------------------------------- repository
def repository_url(config) -> str:
    """The repository's URL: ``$PDPKIT_REPOSITORY_URL``, else ``repository: url:`` of ``_config.yml``, else ``""``."""
    url = os.environ.get(ENV_URL, "").strip()
    if not url:
        url = str((config.html_theme_options or {}).get("repository_url") or "").strip()
    return url.rstrip("/")


def wire_repository(app, config):
    """Turn the theme's repository buttons on exactly when a repository URL is known."""
    url = repository_url(config)
    opts = dict(config.html_theme_options or {})
    if url:
        opts["repository_url"] = url
        if not re.search(r"github|gitlab|bitbucket", url, re.I) and not opts.get("repository_provider"):
            # the theme names the host's kind for its icons and links; one it cannot infer is given here
            opts["repository_provider"] = os.environ.get(ENV_PROVIDER, "github")
    else:
        opts.pop("repository_url", None)
    for button in ("use_repository_button", "use_issues_button"):
        opts[button] = bool(url)
    config.html_theme_options = opts
    config.pdpkit_repository_url = url


def clone_url(url: str) -> str:
    """The ``git clone`` argument for a repository's web URL (a GitHub/GitLab page URL gains ``.git``)."""
    if re.match(r"https://(github\.com|gitlab\.com)/[^/]+/[^/]+$", url) and not url.endswith(".git"):
        return url + ".git"
    return url


class GetCodeDirective(SphinxDirective):
    """``pdpkit-get-code``: how to obtain the project — ``git clone <url>`` when the URL is known."""

    has_content = False

    def run(self):
        url = self.config.pdpkit_repository_url
        if url:
            para = nodes.paragraph()
            para += nodes.Text("The project lives at ")
            para += nodes.reference(url, url, refuri=url)
            para += nodes.Text(". Clone it:")
            code = f"git clone {clone_url(url)} pdpkit\ncd pdpkit"
        else:
            para = nodes.paragraph(
                text="This copy of the book names no public repository. Get the project's directory (a clone "
                "or an archive of its repository) from whoever gave you the book, and go into it:"
            )
            code = "cd pdpkit"
        block = nodes.literal_block(code, code, language="bash")
        return [para, block]


_CITE_YEAR = re.compile(r"(@misc\{pdpkit,\n(?:.*\n)*?)(  year\s*=\s*\{\d+\})\n")


def cite_with_url(app, docname, source):
    """Give the intro's "How to cite" BibTeX entry the repository's URL, when one is known."""
    url = app.config.pdpkit_repository_url
    if not url or docname != app.config.root_doc:
        return
    source[0] = _CITE_YEAR.sub(lambda m: f"{m.group(1)}{m.group(2)},\n  url          = {{{url}}}\n", source[0], count=1)


def setup(app):
    app.add_search_language(SearchEnglishFolded)
    app.add_js_file("pdpkit_search.js", priority=200)
    app.add_config_value("pdpkit_repository_url", "", "env")
    app.connect("config-inited", wire_repository)
    app.connect("source-read", cite_with_url)
    app.add_directive("pdpkit-get-code", GetCodeDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
