"""A rerun as a page: the notebook that ``make run`` executed, rendered offline as one HTML page in the book's theme.

``make run NB=<name> PARAMS=...`` executes ``notebooks/<name>.ipynb`` into ``_build/runs/`` and then calls
:func:`build_page`, which

* opens the page with what makes this run different: the parameters that differ from the book's (the values in
  ``notebooks/params/<name>.yaml``) and this run's recorded numbers beside the book's and the paper's, with the
  status of each (a record whose parameters differ from the book's full run, the one set against the paper, is *not
  compared*, and says why);
* writes the records as CSV next to their JSON;
* builds the page with jupyter-book from a one-page book whose configuration is the book's own (theme, MathJax,
  bibliography, extensions), so the glued figures and sentences sit in the prose as in the book.  Links to other
  pages of the book are not part of a one-page build and stay plain text.

Nothing of the book (``book/executed``, ``data/results``, ``_build/html``) is read for writing or written.
"""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml

from . import page, parameters, results
from .paths import BOOK_RESULTS, ERRATA, ROOT

__all__ = ["build_page", "changed_parameters", "records_table", "write_csv"]



_MARKER = ".fdp-rerun-page"  # in a folder this module wrote, which it may replace


def changed_parameters(notebook: str, executed: nbformat.NotebookNode) -> dict[str, tuple] | None:
    """``{name: (book's value, this run's value)}`` for the parameters papermill passed that differ from the book's;
    None for a notebook papermill did not execute (its parameters are not recorded in it)."""
    book = yaml.safe_load((ROOT / "notebooks" / "params" / f"{notebook}.yaml").read_text()) or {}
    if "papermill" not in executed.metadata:
        return None
    passed = executed.metadata["papermill"].get("parameters", {}) or {}
    try:  # as the notebook read them: "2e-5" (YAML 1.1's text) the number 2e-05, an int given for a float a float
        passed = {**passed, **{k: v for k, v in parameters.check_all(notebook, {**book, **passed}).items() if k in passed}}
    except ValueError:  # (the run checked them itself: only a schema changed since can refuse them)
        pass
    return {name: (book.get(name), value) for name, value in passed.items() if not results.same(value, book.get(name))}


def _number(value) -> str:
    return "-" if value is None else f"{value:.5g}"


def records_table(notebook: str, run_results: Path) -> str:
    """MyST table of this run's records beside the book's value and the paper's, with this run's status."""
    ours = results.load(notebook, run_results)
    book = {r["key"]: r for r in (results.load(notebook, BOOK_RESULTS) if (BOOK_RESULTS / f"{notebook}.json").is_file()
                                  else [])}
    rows, reasons = [], []
    for rec in ours:
        # the key as code: the book's style lets code in a table cell wrap anywhere (a key like
        # fig2c/subsampling_amplifies_power_loss_fraction widened the table past the column)
        rows.append([f"`{rec['key']}`", _number(rec["value"]), _number(book.get(rec["key"], {}).get("value")),
                     _number(rec.get("paper")), results.status_of(rec)])
        if rec.get("not_compared") and rec["not_compared"] not in reasons:
            reasons.append(rec["not_compared"])
    text = page.table(["record", "this run", "the book's run", "paper", "status in this run"], rows)
    if not book:
        text += "\n\nThe book's run: none found here (data/results is written by `make`)."
    text += "".join(f"\n\nNot compared: {why}." for why in reasons)
    return f"````{{container}} records\n{text}\n````"  # small type, as the reproduction report's tables


def write_csv(notebook: str, run_results: Path) -> Path:
    """This run's records as CSV, ``<run_results>/<notebook>.csv`` (key, value, paper, tolerance, status)."""
    path = run_results / f"{notebook}.csv"
    with path.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["key", "value", "paper", "tolerance", "kind", "status", "not_compared"])
        for rec in results.load(notebook, run_results):
            out.writerow([rec["key"], repr(rec["value"]), rec.get("paper"), rec.get("tol"), rec["kind"],
                          results.status_of(rec), rec.get("not_compared") or ""])
    return path


_XREF = re.compile(r"\{(ref|doc)\}`([^`<]*?)\s*(?:<([^>`]*)>)?`")


def _errata_titles() -> dict[str, str]:
    """``{label: the entry's heading}`` of the errata page (``(label)=`` above a heading)."""
    text = ERRATA.read_text() if ERRATA.is_file() else ""
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^\(([\w-]+)\)=\n#+ (.+)$", text, re.MULTILINE)}


def _links_to_the_book(text: str, labels: dict[str, str], book: Path) -> str:
    """A page of a one-page build cannot resolve references to the book's other pages: the errata entries and
    chapters they name become links into the built book (``_build/html``) where it exists, else their words and the
    source file that holds them."""
    def link(m):
        kind, target = m.group(1), (m.group(3) or m.group(2)).strip()
        words = m.group(2).strip() if m.group(3) else (labels.get(target) if kind == "ref" else None)
        if kind == "ref" and target not in labels:
            return m.group(0)  # a label of this page: the one-page build resolves it
        page_file = (book / "book" / "errata.html") if kind == "ref" else (book / "book" / "executed" / f"{target}.html")
        if kind == "doc" and target.startswith("../"):
            page_file = book / "book" / f"{target[3:]}.html"
        words = words or (f"erratum {target}" if kind == "ref" else target)
        if not page_file.is_file():  # the book is not built: its source, which the clone holds
            source = ("book/errata.md" if kind == "ref" else f"book/{target[3:]}.md" if target.startswith("../")
                      else f"notebooks/{target}.ipynb")
            return f"{words} ({source})"
        # raw HTML: MyST does not follow file: URIs written as Markdown links
        return f'<a href="{page_file.as_uri()}{"#" + target if kind == "ref" else ""}">{words}</a>'

    return _XREF.sub(link, text)


def _as_book_page(executed: nbformat.NotebookNode, header: str) -> nbformat.NotebookNode:
    """The executed notebook laid out as the book's pages: glued values only where their directives place them (a
    run outside the book's build also shows a copy in place, :data:`fdp_book.page.JUPYTER_COPY`), no printed output
    (the estimate and progress lines), papermill's injected cell removed, ``header`` after the title."""
    nb = nbformat.from_dict(executed)
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            cell.metadata["tags"] = tags + ["remove-cell"]
        if "outputs" in cell:  # the copies shown for a reader of the notebook (the page places the glued values) and
            # the run's progress lines (the terminal showed them; the book's pages, built without them, have none)
            cell.outputs = [o for o in cell.outputs if o.get("metadata", {}).get("fdp") != page.JUPYTER_COPY["fdp"]
                            and o.get("output_type") != "stream"]
    labels, book = _errata_titles(), ROOT / "_build" / "html"
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _links_to_the_book(cell.source, labels, book)
        for out in cell.get("outputs", []):
            for mime in [k for k in out.get("data", {}) if k.endswith("text/markdown")]:
                out["data"][mime] = _links_to_the_book(out["data"][mime], labels, book)
    nb.cells.insert(1, nbformat.v4.new_markdown_cell(header))
    nb.cells.append(nbformat.v4.new_markdown_cell("## References\n\n```{bibliography}\n```"))  # the book's list
    return nb


def _config(title: str) -> dict:
    """The book's _config.yml with every path made absolute, for a one-page book elsewhere."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["title"] = title
    config["bibtex_bibfiles"] = [str(ROOT / f) for f in config.get("bibtex_bibfiles", [])]
    html = config.setdefault("html", {})
    if html.get("favicon"):
        html["favicon"] = str(ROOT / html["favicon"])
    sphinx = config.setdefault("sphinx", {})
    sphinx["local_extensions"] = {name: str(ROOT / path) for name, path in (sphinx.get("local_extensions") or {}).items()}
    conf = sphinx.setdefault("config", {})
    conf["html_static_path"] = [str(ROOT / p) for p in conf.get("html_static_path", [])]
    conf["nitpicky"] = False  # the book's other pages are not part of this build
    return config


def build_page(run_notebook: Path, run_results: Path, out_dir: Path) -> Path:
    """Render a ``make run`` notebook as one HTML page; returns the page's path.

    Parameters
    ----------
    run_notebook : Path
        The executed notebook, ``_build/runs/<name>-<tag>/<name>.ipynb`` (its name is the chapter's).
    run_results : Path
        The folder with this run's ``<name>.json``.
    out_dir : Path
        A new or empty folder for the one-page book, or one this function wrote before (then replaced); any
        other folder is refused (ValueError), never emptied.

    Returns
    -------
    Path
        ``<out_dir>/_build/html/<name>.html``.
    """
    notebook = run_notebook.stem
    if not (ROOT / "notebooks" / "params" / f"{notebook}.yaml").is_file():
        raise ValueError(f"notebook: {run_notebook} is not a run of a chapter (no notebooks/params/{notebook}.yaml); "
                         "make run names the executed notebook after its chapter")
    if not run_results.is_dir():
        raise ValueError(f"results: {run_results} is not a folder")
    if out_dir.exists() and any(out_dir.iterdir()) and not (out_dir / _MARKER).exists():
        raise ValueError(f"out: {out_dir} holds files that this command did not write; name a new or empty folder")
    executed = nbformat.read(run_notebook, as_version=4)
    if not any(c.get("outputs") for c in executed.cells if c.cell_type == "code"):
        raise ValueError(f"notebook: {run_notebook} has no outputs: execute it first (make run)")
    changed = changed_parameters(notebook, executed)
    lines = [":::{admonition} A rerun of this chapter with other parameters", ":class: important", ""]
    if changed is None:
        lines += ["This notebook was not executed by `make run` (it carries no papermill record of its parameters), so "
                  "the parameters that differ from the book's are not known here; the records below say which "
                  "numbers could not be compared with the paper and why.", ""]
    elif changed:
        lines += ["Parameters that differ from the book's run:", "",
                  page.table(["parameter", "the book's run", "this run"],
                             [[f"`{k}`", parameters.shown(a), parameters.shown(b)] for k, (a, b) in changed.items()]), ""]
    else:
        lines += ["Every parameter is the book's: this run should repeat the book's numbers.", ""]
    if (run_results / f"{notebook}.json").is_file() and not results.load(notebook, run_results):
        lines += ["This run recorded no number the paper prints (none of its settings is one of the paper's), so there "
                  "is nothing to set beside the book's and the paper's values; the prose below is written by this run.", ""]
    elif (run_results / f"{notebook}.json").is_file():
        lines += ["This run's recorded numbers beside the book's run and the paper's (a record whose parameters "
                  "differ from the book's full run, the one set against the paper, is *not compared*; the prose below "
                  "is written by this run):", "",
                  records_table(notebook, run_results), ""]
    lines.append(":::")
    if out_dir.exists():
        shutil.rmtree(out_dir)  # empty, or written by this function before (its marker)
    out_dir.mkdir(parents=True)
    (out_dir / _MARKER).write_text("written by fdp_book.rerun.build_page; replaced by its next run\n")
    nbformat.write(_as_book_page(executed, "\n".join(lines)), out_dir / f"{notebook}.ipynb")
    title = f"Rerun: {notebook}"
    (out_dir / "_config.yml").write_text(yaml.safe_dump(_config(title), sort_keys=False, allow_unicode=True))
    (out_dir / "_toc.yml").write_text(f"format: jb-book\nroot: {notebook}\n")
    run = subprocess.run([sys.executable, "-c", "from jupyter_book.cli.main import main; main()", "build", str(out_dir),
                          "--builder", "html", "--quiet"], capture_output=True, text=True)
    html = out_dir / "_build" / "html" / f"{notebook}.html"
    if run.returncode != 0 or not html.is_file():
        raise RuntimeError(f"jupyter-book could not build the rerun page of {notebook}:\n{run.stdout[-2000:]}\n"
                           f"{run.stderr[-2000:]}")
    return html
