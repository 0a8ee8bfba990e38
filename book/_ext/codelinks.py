"""Sphinx extension: a name of the library in a notebook's code cell links to its entry in the library reference.

A chapter's visible cells call the public API (``calibrate.solve(...)``, ``pld.mechanism_pld(...)``); a reader who
wants to know how a number is computed follows the name to its docstring in book/reference/.  The names a cell uses
are resolved through the notebook's own imports (``from fdp.accounting import pld``), read with :mod:`ast` from the
page's source, so ``pld.mechanism_pld`` is ``fdp.accounting.pld.mechanism_pld``; a name re-exported elsewhere
(``fdp.dpsgd``) is looked up under the module that defines it.  Only names that the reference documents (the Python
domain's objects) get a link, with the class ``fdp-api``.

Pygments has already written the cell as ``<span class="n">pld</span><span class="o">.</span><span
class="n">mechanism_pld</span>`` when the page's context is handed to the template; a dotted chain of such spans is
wrapped in one link.  Code blocks that are not notebook cells (``highlight-python`` in the prose) are left alone.
"""

from __future__ import annotations

import ast
import html
import importlib
import json
import re
from pathlib import Path

_NAME = r'<span class="n[a-z]?">(\w+)</span>'
_CHAIN = re.compile(_NAME + r'(?:<span class="o">\.</span>' + _NAME.replace("(\\w+)", "\\w+") + r")*")
_CELL = re.compile(r'(<div class="cell_input[^"]*">\s*<div class="highlight-ipython3 notranslate">.*?</pre>)', re.S)


def imported_names(source: str) -> dict[str, str]:
    """The names a notebook's imports bind, each with the dotted path it stands for (``pld`` -> ``fdp.accounting.pld``)."""
    names = {}
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a cell with IPython syntax: no links rather than a broken build
        return names
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
        elif isinstance(node, ast.Import):
            names.update({a.asname or a.name.split(".")[0]: a.name if a.asname else a.name.split(".")[0] for a in node.names})
    return names


def _home(path: str) -> list[str]:
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
        return [path]
    for part in rest:
        obj = getattr(obj, part, None)
    home = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '')}"
    return [path, home] if callable(obj) and home != path else [path]


def link_chains(body: str, names: dict[str, str], target) -> str:
    """Wrap each dotted chain of names in the notebook cells of ``body`` that ``target`` resolves in a link.

    ``target(path)`` gives the link's address for a documented dotted path, or None.
    """
    def chain(match: re.Match) -> str:
        parts = re.findall(r">(\w+)</span>", match.group(0))
        if names.get(parts[0], "").split(".")[0] != "fdp":  # the library's names only, not fdp_book's
            return match.group(0)
        for n in range(len(parts), 0, -1):  # the longest documented prefix: pld.mechanism_pld, not pld
            for path in _home(".".join([names[parts[0]], *parts[1:n]])):
                address = target(path)
                if address:
                    spans = re.findall(r"<span.*?</span>", match.group(0))[:2 * n - 1]
                    linked = "".join(spans)
                    return (f'<a class="fdp-api" href="{html.escape(address)}" title="{path}">{linked}</a>'
                            + match.group(0)[len(linked):])
        return match.group(0)

    return _CELL.sub(lambda cell: _CHAIN.sub(chain, cell.group(1)), body)


def _link(app, pagename, templatename, context, doctree):
    source = Path(app.srcdir) / f"{pagename}.ipynb"
    if "body" not in context or not source.exists():
        return
    cells = json.loads(source.read_text())["cells"]
    names = imported_names("\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code"))
    objects = app.env.get_domain("py").objects

    def target(path):
        if path not in objects:
            return None
        entry = objects[path]
        return f"{app.builder.get_relative_uri(pagename, entry.docname)}#{entry.node_id}"

    context["body"] = link_chains(context["body"], names, target)


def setup(app):
    app.connect("html-page-context", _link)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
