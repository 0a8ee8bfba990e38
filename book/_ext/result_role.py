"""Sphinx extension: the role ``{result}`notebook:key``` quotes a number of a notebook's run.

Pages that are not notebooks (the errata, the paper pages, the introduction) never type a measured
number: they quote it from the run that computed it, so that every page shows the same value and a
rerun cannot leave a page behind.

* ``{result}`gdp_tables:f1_sgd_rdp``` is the text the notebook glued under that name
  (``myst_nb.glue`` of a string, as the notebook's own page shows it), read from
  ``book/executed/gdp_tables.ipynb``;
* ``{result}`gdp_tables:table2/mu_eps8|.3f``` is a recorded value of the results registry
  (``data/results/gdp_tables.json``) in a Python format; the format ``.3x`` writes three significant
  digits as m × 10ᵏ (``1.02 × 10⁻³``, :func:`fdp.formatting.times_ten`).

A key that the run did not glue or record is a build warning, which ``make`` (``-W``) turns into an
error: a page cannot quote a number that no longer exists.
"""

from __future__ import annotations

import ast
import json
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from functools import lru_cache
from pathlib import Path

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxRole

from fdp.formatting import bound, times_ten

logger = logging.getLogger(__name__)


@lru_cache(maxsize=None)
def _glued(path: Path, mtime: float) -> dict[str, str]:
    """The strings glued in an executed notebook, by name (``mtime`` only keys the cache)."""
    out = {}
    for cell in json.loads(path.read_text()).get("cells", []):
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            plain = next((v for k, v in output.get("data", {}).items() if k.endswith("text/plain")), None)
            if name and isinstance(plain, str) and plain[:1] in "'\"":
                out[name] = ast.literal_eval(plain)
    return out


@lru_cache(maxsize=None)
def _recorded(path: Path, mtime: float) -> dict[str, tuple[float, str | None]]:
    """The recorded values of a notebook's results file with their side (``bound``: "upper", "lower" or None), by key."""
    return {rec["key"]: (rec["value"], rec.get("bound")) for rec in json.loads(path.read_text())["records"]}


def render(value, spec: str, side: str | None = None) -> str:
    """A recorded value in the format ``spec``: Python's, or ``.Nx`` for N significant digits as m × 10ᵏ.

    A value that data/paper marks as an upper (lower) end (``side``) is rounded up (down) in ``.Nf`` and ``.Ng``, as the
    chapters print it."""
    if spec.endswith("x") and spec[1:-1].isdigit() and spec.startswith("."):
        return times_ten(value, int(spec[1:-1]))
    digits = spec[1:-1]
    if side and spec.startswith(".") and digits.isdigit() and spec[-1] in "fg":
        if spec[-1] == "g":
            return bound(value, int(digits), side)
        exact = Decimal(value).quantize(Decimal(1).scaleb(-int(digits)),
                                        rounding=ROUND_CEILING if side == "upper" else ROUND_FLOOR)
        return f"{exact:f}"
    return format(value, spec)


class ResultRole(SphinxRole):
    def run(self):
        notebook, _, rest = self.text.partition(":")
        key, _, spec = rest.partition("|")
        root = Path(self.env.srcdir)
        executed = root / "book" / "executed" / f"{notebook}.ipynb"
        results = root / "data" / "results" / f"{notebook}.json"
        problem = None
        if not notebook or not key:
            problem = f"{{result}}`{self.text}`: write notebook:key (or notebook:key|format for a recorded value)"
        elif spec:
            if not results.is_file():
                problem = f"{{result}}`{self.text}`: no results file {results.relative_to(root)} (run make)"
            else:
                self.env.note_dependency(str(results))
                values = _recorded(results, results.stat().st_mtime)
                if key not in values:
                    problem = f"{{result}}`{self.text}`: {notebook} recorded no key {key!r}"
                else:
                    try:
                        return [nodes.Text(render(values[key][0], spec, values[key][1]))], []
                    except ValueError as err:
                        problem = f"{{result}}`{self.text}`: bad format {spec!r} ({err})"
        elif not executed.is_file():
            problem = f"{{result}}`{self.text}`: no executed notebook {executed.relative_to(root)} (run make)"
        else:
            self.env.note_dependency(str(executed))
            glued = _glued(executed, executed.stat().st_mtime)
            if key in glued:
                return [nodes.Text(glued[key])], []
            problem = f"{{result}}`{self.text}`: {notebook} glued no text {key!r}"
        logger.warning(problem, location=self.get_location())
        return [nodes.problematic(self.rawtext, self.rawtext)], []


def setup(app):
    app.add_role("result", ResultRole())
    return {"parallel_read_safe": True, "parallel_write_safe": True}
