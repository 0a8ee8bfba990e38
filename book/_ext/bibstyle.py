"""Sphinx extension: the bibliography labelled and sorted by author and year, as the text cites.

The text cites author-year ("Kaissis et al. [2023a]", sphinxcontrib-bibtex's ``author_year`` reference
style); pybtex's default labels ([KHZR23]) would name the same work differently in the list.  This style
labels an entry "Surname, year" (one author), "Surname and Surname, year" (two) or "Surname et al., year",
and sorts the list by that label's authors, then year, then title, so that "Kaissis et al., 2023a", "2023b" and
"2024" follow each other as a reader looks them up.  Works that would share a label carry a/b in their year field
in ``book/references.bib``, so the text and the list disambiguate them alike.
"""

from __future__ import annotations

from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting import BaseSortingStyle


def _surname(person) -> str:
    """The last name without BibTeX braces or accents commands ({\\'e} -> e is left to pybtex's latex codec)."""
    name = " ".join(person.prelast_names + person.last_names)
    return name.replace("{", "").replace("}", "")


def _who(entry) -> str:
    """The authors as the label names them: one surname, two joined by "and", else the first and "et al."."""
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    if not people:
        return entry.fields.get("title", "Anonymous").split(":")[0]
    if len(people) == 1:
        return _surname(people[0])
    if len(people) == 2:
        return f"{_surname(people[0])} and {_surname(people[1])}"
    return f"{_surname(people[0])} et al."


def author_year_label(entry) -> str:
    """The label of an entry: its authors' surnames (at most two, else "et al.") and its year."""
    return f"{_who(entry)}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearSorting(BaseSortingStyle):
    """The list in the order of its labels: authors as labelled, year (with its a/b), title."""

    def sorting_key(self, entry):
        return (_who(entry).lower(), entry.fields.get("year", ""), entry.fields.get("title", "").lower())


class AuthorYearLabels(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        for entry in sorted_entries:
            yield author_year_label(entry)


class AuthorYearStyle(UnsrtStyle):
    default_label_style = "fdp_author_year"
    default_sorting_style = "fdp_author_year"


def setup(app):
    register_plugin("pybtex.style.labels", "fdp_author_year", AuthorYearLabels)
    register_plugin("pybtex.style.sorting", "fdp_author_year", AuthorYearSorting)
    register_plugin("pybtex.style.formatting", "fdp_author_year", AuthorYearStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
