"""The bibliography's style: entries labelled and sorted by author and year.

The book cites author–year (``bibtex_reference_style: author_year``); with pybtex's
``plain`` style the bibliography itself would still be numbered ``[1]``, ``[2]``, …, so a
reader could not find "Redberg & Wang, 2021" in it. This extension registers the pybtex
style ``pdpkit_authoryear`` (``plain`` with labels such as ``Redberg & Wang 2021`` or
``Chaudhuri et al. 2011``, sorted by author, year and title) for ``bibtex_default_style``.
"""

from __future__ import annotations

from pybtex.plugin import register_plugin
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle


def _last_names(entry) -> list[str]:
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    return [" ".join(p.last_names).replace("{", "").replace("}", "") for p in persons]


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
    """pybtex's ``plain`` formatting with author–year labels, sorted by author and year."""

    default_label_style = "pdpkit_authoryear"
    default_sorting_style = "author_year_title"


def setup(app):
    register_plugin("pybtex.style.labels", "pdpkit_authoryear", AuthorYearLabelStyle)
    register_plugin("pybtex.style.formatting", "pdpkit_authoryear", AuthorYearStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
