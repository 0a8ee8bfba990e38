"""Sphinx extension: a name of the library in a notebook's code cell links to its entry in the library reference.

A chapter's visible cells call the public API (``calibrate.solve(...)``, ``pld.mechanism_pld(...)``); a reader who
wants to know how a number is computed follows the name to its docstring in book/reference/.  The names a cell uses
are resolved through the notebook's own imports (``from fdp.accounting import pld``), read with :mod:`ast` from the
page's source, so ``pld.mechanism_pld`` is ``fdp.accounting.pld.mechanism_pld``; a name re-exported elsewhere
(``fdp.dpsgd``) is looked up under the module that defines it.  Only names that the reference documents (the Python
domain's objects) get a link, with the class ``fdp-api``; a library name the reference does not document is a build
warning (an error under ``-W``).  A function the page defines in a cell links to its definition (``fdp-local``).

Pygments has already written the cell as ``<span class="n">pld</span><span class="o">.</span><span
class="n">mechanism_pld</span>`` when the page's context is handed to the template; a dotted chain of such spans is
wrapped in one link.  Code blocks that are not notebook cells (``highlight-python`` in the prose) are left alone.
"""

from __future__ import annotations

import ast
import functools
import html
import importlib
import json
import re
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)

_NAME = r'<span class="n[a-z]?">(\w+)</span>'
_CHAIN = re.compile(_NAME + r'(?:<span class="o">\.</span>' + _NAME.replace("(\\w+)", "\\w+") + r")*")
_CELL = re.compile(r'(<div class="cell_input[^"]*">\s*<div class="highlight-ipython3 notranslate">.*?</pre>)', re.S)


def imported_names(sources: list[str]) -> dict[str, str]:
    """The names the imports of a notebook's cells bind, each with the dotted path it stands for (``pld`` ->
    ``fdp.accounting.pld``); a cell that is not plain Python (an IPython magic) is skipped, not the page."""
    names = {}
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
            elif isinstance(node, ast.Import):
                names.update({a.asname or a.name.split(".")[0]: a.name if a.asname else a.name.split(".")[0]
                              for a in node.names})
    return names


def defined_functions(sources: list[str]) -> set[str]:
    """The functions a notebook's cells define at their top level (``def play(...)``)."""
    out = set()
    for source in sources:
        try:
            out |= {n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)}
        except SyntaxError:
            continue
    return out


@functools.lru_cache(maxsize=None)  # the same names recur in every cell of every page
def _home(path: str) -> tuple[str, ...]:
    """``path`` and, when it names a function or class defined in another module, its defining module's path."""
    module, _, rest = path, "", []
    while module:
        try:
            obj = importlib.import_module(module)
            break
        except ImportError:
            module, _, last = module.rpartition(".")
            rest.insert(0, last)
    else:
        return (path,)
    for part in rest:
        obj = getattr(obj, part, None)
    home = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '')}"
    return (path, home) if callable(obj) and home != path else (path,)


def link_chains(body: str, names: dict[str, str], target, local: frozenset = frozenset()) -> tuple[str, list[str]]:
    """Wrap each dotted chain of names in the notebook cells of ``body`` that ``target`` resolves in a link.

    ``target(path)`` gives the link's address for a documented dotted path, or None.  A function of ``local`` (defined
    on the page) links to its definition, which gets the anchor ``code-<name>``.  A name in an attribute position
    (after a dot) or as a keyword (before ``=``) is not a reference to an import and is left alone.  Returns the body
    and the library paths used in a cell that the reference does not document.
    """
    undocumented = []

    def chain(match: re.Match) -> str:
        text, before, after = match.group(0), match.string[:match.start()], match.string[match.end():]
        if before.endswith('<span class="o">.</span>') or after.startswith('<span class="o">=</span>'):
            return text
        parts = re.findall(r">(\w+)</span>", text)
        if re.search(r'<span class="k">def</span>(<span class="w">)?\s*(</span>)?$', before) and parts[0] in local:
            return f'<span id="code-{parts[0]}">{text}</span>'
        if parts[0] in local:
            return f'<a class="fdp-local" href="#code-{parts[0]}" title="defined on this page">{text}</a>'
        if names.get(parts[0], "").split(".")[0] != "fdp":  # the library's names only, not fdp_book's
            return text
        for n in range(len(parts), 0, -1):  # the longest documented prefix: pld.mechanism_pld, not pld
            for path in _home(".".join([names[parts[0]], *parts[1:n]])):
                address = target(path)
                if address:
                    spans = re.findall(r"<span.*?</span>", text)[:2 * n - 1]
                    linked = "".join(spans)
                    return (f'<a class="fdp-api" href="{html.escape(address)}" title="{path}">{linked}</a>'
                            + text[len(linked):])
        undocumented.append(".".join([names[parts[0]], *parts[1:]]))
        return text

    return _CELL.sub(lambda cell: _CHAIN.sub(chain, cell.group(1)), body), undocumented


def _link(app, pagename, templatename, context, doctree):
    source = Path(app.srcdir) / f"{pagename}.ipynb"
    if "body" not in context or not source.exists():
        return
    cells = [c for c in json.loads(source.read_text())["cells"] if c["cell_type"] == "code"]
    sources = ["".join(c["source"]) for c in cells]
    shown = ["".join(c["source"]) for c in cells if not {"remove-cell", "remove-input"} & set(c["metadata"].get("tags", []))]
    objects = app.env.get_domain("py").objects

    def target(path):
        if path not in objects:
            return None
        entry = objects[path]
        return f"{app.builder.get_relative_uri(pagename, entry.docname)}#{entry.node_id}"

    context["body"], undocumented = link_chains(context["body"], imported_names(sources), target,
                                                frozenset(defined_functions(shown)))  # a link needs its target shown
    for path in sorted(set(undocumented)):
        logger.warning(f"{pagename}: a code cell uses {path}, which has no entry in the library reference")


def setup(app):
    app.connect("html-page-context", _link)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
