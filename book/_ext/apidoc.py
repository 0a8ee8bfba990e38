"""Sphinx extension: the library reference (book/reference/) reads like a reference.

* A module's docstring may carry underlined headings of its own ("Method", "Error control"); on a reference page they
  would sit at the level of the page's module sections and break its outline, so they become rubrics.
* A module that defines names lists them in a summary table (autosummary) at the end of its docstring, in the order
  of its ``__all__``, so that a long page can be scanned; a package that only re-exports its modules' names does not.
* The members a NamedTuple generates for its fields ("Alias for field number 0") are left out: the class's
  Attributes section documents each field once.
* The doc comment of a module constant (``#: The largest loss lattice we allocate: ...``) and a property's docstring
  are shown as written: napoleon would read the words before their first colon as a type.
"""

from __future__ import annotations

import importlib
import re

_UNDERLINE = re.compile(r"^([-=~^\"'`#*+])\1{2,}\s*$")


def headings_to_rubrics(lines: list[str]) -> None:
    """Replace each underlined heading in ``lines`` (in place) by a rubric of the same title."""
    i = 0
    while i + 1 < len(lines):
        title, rule = lines[i], lines[i + 1]
        if title.strip() and not title.startswith(" ") and _UNDERLINE.match(rule) and len(rule.strip()) >= 3:
            lines[i:i + 2] = [f".. rubric:: {title.strip()}", ""]
        i += 1


def defined_names(module) -> list[str]:
    """The names of ``module.__all__`` that the module itself defines (a re-export's home is elsewhere)."""
    names = []
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name)
        home = getattr(obj, "__module__", None) if callable(obj) else None
        if home in (None, module.__name__):
            names.append(name)
    return names


def _process(app, what, name, obj, options, lines):
    if what != "module":
        return
    headings_to_rubrics(lines)
    module = importlib.import_module(name)
    if hasattr(module, "__path__") or options.get("no-members") or not getattr(module, "__all__", None):
        return
    names = defined_names(module)
    if names:
        lines.extend(["", ".. rubric:: Contents", "", ".. autosummary::", ""] + [f"   {n}" for n in names] + [""])


_CONSTANT_DOCS: dict[str, list[str]] = {}


def _keep_constant_doc(app, what, name, obj, options, lines):
    if what in ("data", "attribute", "property"):
        _CONSTANT_DOCS[name] = list(lines)


def _restore_constant_doc(app, what, name, obj, options, lines):
    if name in _CONSTANT_DOCS:
        lines[:] = _CONSTANT_DOCS.pop(name)


def _skip_field_aliases(app, what, name, obj, skip, options):
    if (obj.__doc__ or "").startswith("Alias for field number"):
        return True
    return None


def setup(app):
    app.setup_extension("sphinx.ext.autodoc")  # its events, whatever the order of the extension list
    app.setup_extension("sphinx.ext.autosummary")
    app.connect("autodoc-process-docstring", _keep_constant_doc, priority=400)  # before napoleon (500)
    app.connect("autodoc-process-docstring", _restore_constant_doc, priority=550)  # after it
    app.connect("autodoc-process-docstring", _process, priority=600)
    app.connect("autodoc-skip-member", _skip_field_aliases)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
