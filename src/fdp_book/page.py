"""What a book page shows around its computation: the results box and the rerun box.

A reproduction page opens with two boxes that are written at the end of its run and pasted at the
top with myst-nb's ``glue`` (so they always describe the run that produced the page):

* :func:`glance` -- what the page reproduces, how many of its numbers and claims match the paper,
  how many are explained deviations (each linked to its errata entry) and how many this run could
  not compare;
* :func:`rerun` -- the ``make run`` line and the page's parameters from their schema
  (:mod:`fdp_book.parameters`): the book's value, this run's where it differs, the values allowed, the meaning and
  the paper's value with its source.

Inside a page, :func:`show` displays a captioned table (built by :func:`table`) and :func:`paste`
glues numbers and run-dependent sentences for the prose.  The report page renders each notebook's
records with :func:`records_table`, and each paper chapter's comparison with :func:`chapter_table`.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import yaml

from . import parameters, results
from .paths import ROOT, book_build, paper_dir

#: Whether glued figures, tables and sentences are also shown where they are computed: yes when a notebook runs
#: in Jupyter or under ``make run`` (a reader of that notebook sees them), no under the book's build (the page
#: places them in its prose).  Notebooks glue through :func:`glue`.
SHOW = not book_build()

__all__ = ["glance", "rerun", "plural", "table", "show", "paste", "paste_md", "records_table", "chapter_table", "own_outcome"]


def plural(n: int, word: str) -> str:
    """``n`` and ``word``, in the plural unless n is 1 ("1 run", "3 runs")."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def glance(notebook: str, reproduces: str, directory: Path | None = None, namespace: dict | None = None,
           found: str | None = None) -> str:
    """MyST markdown of the "Results at a glance" box of ``notebook``, from its recorded results.

    ``reproduces`` names the paper's figures and tables the page reproduces (with citations).  The box
    also says how this run is scaled down from the paper: every parameter whose comment in the
    parameters cell gives the paper's value ("(the paper: 10,000)"), with this run's value from
    ``namespace`` (a notebook passes ``globals()``; the default otherwise).  ``found`` (MyST) is the run's headline
    reading, shown after the comparison (the risk report's first run; the attacks chapter's gap and knee).
    """
    if not reproduces:
        raise ValueError("reproduces must name what the page reproduces")
    records, ours = results.split_own(results.load(notebook, directory))
    status = [results.status_of(r) for r in records]
    claims = sum(r["kind"] == "claim" for r in records)
    explained = [r for r, s in zip(records, status) if s == "explained"]
    failing = [r["key"] for r, s in zip(records, status) if s in results.FAILING]
    failing += [r["key"] for r in ours if results.status_of(r) in results.FAILING]  # ours fail verify as well
    uncompared = status.count("not compared")
    lines = [f"**Reproduces:** {reproduces}", ""]
    compared = " and ".join(plural(n, what) for n, what in ((len(records) - claims, "printed value"),
                                                               (claims, "claim")) if n)
    outcomes = [f"{status.count('match')} match"] if "match" in status else []
    outcomes += [f"{status.count('set-up')} set-up (hit by choice)"] if "set-up" in status else []
    outcomes += [f"{plural(len(explained), 'explained deviation')}"
                 + (f" ({by_cause(explained)})" if len(explained) > 1 else f" ({explained[0].get('cause')})")] if explained else []
    outcomes += [f"{uncompared} not compared (this run's parameters differ from the book's full run, the one set "
                 "against the paper)"] if uncompared else []
    outcomes += [f"**{len(failing)} failing** ({', '.join(failing)})"] if failing else []
    besides = f" Besides, {own_outcome(ours)}." if ours else ""
    if records:
        lines.append(f"**Compared with the paper:** {compared}, of which {', '.join(outcomes)}.{besides}")
    else:  # a rerun whose settings are all other than the paper's records nothing the paper prints
        lines.append("**Compared with the paper:** nothing; no number of this run is one the paper prints (its "
                     f"parameters differ from the paper's).{besides}")
    if found:
        lines += ["", f"**Found:** {found}"]
    namespace = namespace or {}
    scaled = []
    has_schema = parameters.schema_path(notebook).is_file()  # (a results-only test fixture has none)
    book = _book_values(notebook) if has_schema else {}
    for name, spec in parameters.schema(notebook).items() if has_schema else []:
        if spec.paper is None:
            continue
        value = namespace.get(name, book.get(name))
        if results.same(value, spec.paper) or (isinstance(spec.paper, str) and _same_setting(parameters.shown(value), spec.paper)):
            continue  # the paper's value itself
        shown = dict(spec.labels).get(value) if spec.labels else None
        shown = shown or parameters.shown(value, prose=True)
        paper = spec.paper if isinstance(spec.paper, str) else parameters.shown(spec.paper, prose=True)
        scaled.append(f"{_short(spec.meaning)}: {shown} (the paper: {paper})")
    if scaled:
        lines += ["", "**This run against the paper's set-up:** " + "; ".join(scaled) + "."]
    # the errata index's entries for this chapter, in its order, then any other entry a deviation here cites
    labels = errata_entries(notebook)
    labels += sorted({r["errata"] for r in explained if r.get("errata")} - set(labels))
    if labels:
        lines += ["", "**Errata:** " + ", ".join(f"{{ref}}`{label}`" for label in labels)]
    body = "\n".join(lines)
    return f":::{{admonition}} Results at a glance\n:class: tip\n\n{body}\n:::\n"


def boxes(notebook: str, namespace: dict, reproduces: str | None = None, found: str | None = None) -> None:
    """Glue the page's "Results at a glance" (``glance``) and "Rerun this page" (``rerun``) boxes, written from this
    run's records and parameters; ``reproduces`` defaults to the chapter's ``reproduces:`` in data/paper, ``found``
    is :func:`glance`'s."""
    from IPython.display import Markdown

    glue("glance", Markdown(glance(notebook, reproduces or results.reproduces(notebook), namespace=namespace, found=found)))
    glue("rerun", Markdown(rerun(notebook, namespace)))


def _short(meaning: str) -> str:
    """A parameter's meaning as a label in running text: before its first ": " (what follows explains the values) and
    without a closing parenthesis (a note for the parameter table)."""
    return re.sub(r"\s*\([^()]*\)$", "", meaning.split(": ")[0])


def _numbers(text: str) -> list[float]:
    """The numbers written in ``text``: ``1,000``, ``1_000_000``, ``10^6``, ``1M`` and plain decimals."""
    text = re.sub(r"(?<=\d)[,_](?=\d{3})", "", text)
    text = re.sub(r"10\^(\d+)", lambda m: f"1e{m.group(1)}", text)
    text = re.sub(r"(\d+(?:\.\d+)?)M\b", lambda m: f"{float(m.group(1)) * 1e6:.0f}", text)
    return [float(x) for x in re.findall(r"\d+(?:\.\d+)?(?:e\d+)?", text)]


def _same_setting(value: str, paper: str) -> bool:
    """Whether this run's ``value`` is the paper's (``"1_000_000"`` and ``"10^6"``; ``"1000"`` and ``"used 1000"``;
    a method named alike)."""
    if re.sub(r"[\W_]", "", value.lower()) == re.sub(r"[\W_]", "", paper.lower()):
        return True
    ours, theirs = _numbers(value), _numbers(paper)
    return bool(ours) and ours == theirs


def errata_entries(notebook: str) -> list[str]:
    """Labels of the entries of the errata page's index (book/errata.md) whose chapter is ``notebook``, in order.

    The index names the chapter by its label, ``{numref}`Chapter %s <ch-notebook-name>```."""
    path = ROOT / "book" / "errata.md"
    if not path.is_file():
        return []
    rows = [line for line in path.read_text().splitlines() if line.startswith("| {ref}`")]
    return [re.search(r"<([\w-]+)>`", row).group(1) for row in rows if f"<{chapter_label(notebook)}>`" in row]


def chapter_label(notebook: str) -> str:
    """The label of a notebook's chapter title (``(ch-...)=`` above its first heading), for {numref} and {ref}."""
    return "ch-" + notebook.replace("_", "-")


def _book_values(notebook: str) -> dict:
    """The book's parameter values, ``notebooks/params/<notebook>.yaml``."""
    path = ROOT / "notebooks" / "params" / f"{notebook}.yaml"
    return (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}


#: A cell that starts with a number (a sign, a comparison, a bracket or bold may come first): its column is right-aligned.
_NUMERIC = re.compile(r"^(\*{1,2})?[\[(]?[-+\u2212\u2011≤≥<>~≈]?\s?\.?\d|^inf$")  # also *italic*, **bold**, [interval], (range]


def table(header, rows) -> str:
    """A Markdown table (rendered as an HTML table by the book) from a header and rows of cells; a column whose every
    cell starts with a number is right-aligned, so that its digits line up."""
    header = [str(h) for h in header]
    if not header:
        raise ValueError("header must name at least one column")
    rows = [[str(c) for c in r] for r in rows]
    bad = [r for r in rows if len(r) != len(header)]
    if bad:
        raise ValueError(f"every row must have {len(header)} cells (the header's), got {bad[0]!r}")
    numeric = [bool(rows) and all(_NUMERIC.match(r[j].strip()) for r in rows) for j in range(len(header))]
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "|" + "".join("---:|" if n else "---|" for n in numeric)]
    return "\n".join(lines + ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows])


def show(header, rows, caption: str, folded: bool = False) -> None:
    """Display a table with a bold caption above it (units and meaning belong in the caption).

    ``folded``: the table behind a dropdown titled by the caption, for the numbers behind a figure that the prose
    already summarises (a long chapter stays readable; the PDF prints every dropdown open)."""
    from IPython.display import Markdown, display

    if not caption:
        raise ValueError("caption must say what the table shows")
    caption = " ".join(caption.split()).replace("*", "\\*")  # mu* must not close the bold (or open emphasis)
    if folded:
        display(Markdown(f":::{{dropdown}} {caption}\n\n{table(header, rows)}\n:::\n"))
    else:
        display(Markdown(f"**{caption}**\n\n" + table(header, rows)))


#: Metadata of an output that repeats a glued value for a reader of the notebook (the rerun page drops it).
JUPYTER_COPY = {"fdp": "copy of a glued value"}
_DIRECTIVE = re.compile(r"^:{3,}\{[\w:-]+\}\s*(.*)$")
_ROLE = re.compile(r"\{[\w:-]+\}`([^`<]*?)\s*(?:<([^>`]*)>)?`")


_CITE = re.compile(r"\{cite(:t|:p)?\}`([^`]+)`")


def _bibliography() -> dict:
    """``key -> (authors, year)`` of the book's references (book/references.bib), as the book's citations name them:
    "Hayes et al." for three or more authors; empty outside the repository."""
    path = ROOT / "book" / "references.bib"
    if not path.is_file():
        return {}
    out = {}
    for key, body in re.findall(r"@\w+\{([^,\s]+),(.*?)\n\}", path.read_text(), flags=re.S):
        author, year = re.search(r"author\s*=\s*\{(.*)\},?\s*$", body, flags=re.M), re.search(r"year\s*=\s*\{(.*?)\}", body)
        if author and year:
            names = [a.split(",")[0].strip().strip("{}") for a in author.group(1).split(" and ")]
            out[key] = (names[0] + (" et al." if len(names) > 2 else f" and {names[1]}" if len(names) == 2 else ""), year.group(1))
    return out


def _cite(match, bib: dict) -> str:
    """A citation role as text: ``{cite:t}`` as "Hayes et al. (2023)", ``{cite}`` as "(Hayes et al. 2023)"; an
    unknown key as itself."""
    textual, keys = match.group(1) == ":t", [k.strip() for k in match.group(2).split(",")]
    if textual:
        return "; ".join(f"{bib[k][0]} ({bib[k][1]})" if k in bib else k for k in keys)
    return "(" + "; ".join(f"{bib[k][0]} {bib[k][1]}" if k in bib else k for k in keys) + ")"


def commonmark(text: str) -> str:
    """A page's MyST (boxes, roles) as plain Markdown, for Jupyter, which renders no MyST: a directive's title in
    bold, its options and closing fence dropped, a citation as author and year (:func:`_cite`), another role as its
    text (``{ref}`erratum <label>``` -> erratum)."""
    lines, bib = [], None
    for line in text.splitlines():
        directive = _DIRECTIVE.match(line)
        if directive:
            lines.append(f"**{directive.group(1)}**" if directive.group(1) else "")
        elif not re.match(r"^(:{3,}\s*|:[\w-]+:.*)$", line):
            if _CITE.search(line):
                bib = _bibliography() if bib is None else bib
                line = _CITE.sub(lambda m: _cite(m, bib), line)
            lines.append(_ROLE.sub(lambda m: m.group(1) or m.group(2) or "", line))
    return "\n".join(lines)


def glue(name: str, value) -> None:
    """Glue a figure, table or sentence for the page (``{glue:figure}``, ``{glue:md}``, ``{glue:text}``).

    Under the book's build that is all; run anywhere else (Jupyter, ``make run``) the value is also shown where it
    is computed, Markdown as :func:`commonmark` (bare numbers are not shown on their own), tagged
    :data:`JUPYTER_COPY` so that the rerun's page does not show it twice.  A matplotlib figure is closed once glued
    (the inline backend would otherwise show it again at the end of the cell)."""
    from IPython.display import Markdown, display
    from matplotlib.figure import Figure
    from myst_nb import glue as myst_glue

    myst_glue(name, value, display=False)
    if SHOW and not isinstance(value, (str, int, float)):
        display(Markdown(commonmark(value.data)) if isinstance(value, Markdown) else value, metadata=JUPYTER_COPY)
    if isinstance(value, Figure):
        import matplotlib.pyplot as plt

        plt.close(value)


def numbers(values: dict, *names: str) -> dict:
    """The parameters ``names`` of ``values`` as the prose writes them, keyed by name for :func:`paste`: integers with
    thousands separators ("1,024"), other numbers in their shortest form that reads back as the same number ("0.5",
    "1e-05", "0.1234567")."""
    import numbers as kinds

    out = {}
    for name in names:
        if name not in values:
            raise ValueError(f"{name} is not among the values given ({', '.join(values)})")
        value = values[name]
        if isinstance(value, bool) or not isinstance(value, kinds.Real) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number to be written in the prose, got {value!r}")
        if isinstance(value, kinds.Integral):
            out[name] = f"{int(value):,}"
        else:
            short = f"{float(value) + 0.0:g}"  # + 0.0: no "-0"
            out[name] = short if float(short) == float(value) else repr(float(value))
    return out


def paste(**values) -> None:
    """Glue numbers and run-dependent sentences for the page's prose ({glue:text} and {glue:md}); see :func:`glue`."""
    for name, value in values.items():
        glue(name, value)


def paste_md(**values: str) -> None:
    """Glue run-dependent Markdown (code spans, emphasis) for the page's ``{glue:md}`` roles: :func:`paste` of each
    string as IPython's ``Markdown``."""
    from IPython.display import Markdown

    paste(**{name: Markdown(value) for name, value in values.items()})


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")  # a list typed over several lines reads as one


def _examples(notebook: str) -> list[tuple[str, str]]:
    """``(name, value as typed)`` for the box's example commands: a number and a list of the page's own parameters,
    each at a value other than the book's (the quick profile's where it sets one: a short run; else a list without
    its last entry), and one the schema accepts."""
    quick_path = ROOT / "notebooks" / "params" / f"{notebook}.quick.yaml"
    quick = (yaml.safe_load(quick_path.read_text()) or {}) if quick_path.is_file() else {}
    book = _book_values(notebook)
    specs = parameters.schema(notebook)
    picks = []
    for wanted in (("float", "int"), ("list[float]", "list[int]")):
        for name in [n for n in specs if n in quick] + list(specs):
            value = quick.get(name, book.get(name))
            if results.same(value, book.get(name)) and wanted[0].startswith("list") and isinstance(value, list) and len(value) > 1:
                value = value[:-1]
            if specs[name].type not in wanted or name == "n_jobs" or results.same(value, book.get(name)):
                continue
            try:
                parameters.check_all(notebook, {**book, name: value})
            except ValueError:
                continue
            text = parameters.shown(value)
            picks.append((name, f"'{text}'" if text.startswith("[") else text))
            break
    return picks


def rerun(notebook: str, namespace: dict | None = None) -> str:
    """MyST markdown of the "Rerun this page" box: example commands and the table of parameters, both from the
    notebook's parameter schema (:mod:`fdp_book.parameters`).

    ``namespace`` holds this run's values by parameter name (a notebook passes ``globals()``); a value that differs
    as data from the book's (``notebooks/params/<notebook>.yaml``) is shown in its own column.
    """
    namespace = namespace or {}
    book = _book_values(notebook)
    rows = parameters.table_rows(notebook)
    changed = {name: namespace[name] for name, *_ in rows if name in namespace and not results.same(namespace[name], book.get(name))}
    compared = (paper_dir() / f"{notebook}.yaml").is_file()  # a chapter that reproduces a paper (not a user's page)
    header = (["parameter", "book's value"] + (["this run"] if changed else [])
              + ["meaning; values", "the paper's value" if compared else "where the value comes from"])
    cells = [[f"`{name}`", value] + ([parameters.shown(changed[name]) if name in changed else ""] if changed else [])
             + [f"{meaning}; {values}", paper] for name, value, values, meaning, paper in rows]
    commands = [f'make run NB={notebook} PARAMS="-p {name} {value}"' for name, value in _examples(notebook)] or [f"make run NB={notebook}"]
    # a list whose entries carry labels does not survive the shell: edit a copy of the book's parameter file instead
    # (papermill's -f; the copy is read after the book's file, so it wins)
    labelled = [name for name, spec in parameters.schema(notebook).items()
                if spec.type == "records" and any(f.type == "str" for f in spec.fields)]
    edit = ""
    if labelled:
        edit = (f"\n\nLists with labels ({', '.join(f'`{name}`' for name in labelled)}) are easiest changed in a copy of the "
                "book's parameter file:\n\n```bash\n"
                "# copy, edit the entries, run\n"
                f"cp notebooks/params/{notebook}.yaml mine.yaml\n"
                f'make run NB={notebook} PARAMS="-f mine.yaml" RUN=mine\n```')
    body = ("Run this page with other parameters: change a value in a command below (a list is written as YAML, "
            f"in single quotes), or add more `-p name value` pairs from the table (`make run NB={notebook} HELP=1` "
            "prints it in a terminal). A value outside the table's range stops the run at once, naming the parameter."
            "\n\n```bash\n" + "\n".join(commands) + "\n```" + edit + "\n\nThe run, its results and its page (printed "
            "last) go to `_build/runs/`" + ("; records whose parameters differ from the book's full run (the one set "
                                            "against the paper) are marked *not compared*" if compared else "") + ".\n\n"
            + table(header, cells))
    return f":::{{dropdown}} Rerun this page\n:class-container: rerun\n\n{body}\n:::\n"


def _status_cell(rec: dict) -> str:
    status = results.status_of(rec)
    if status == "explained" and rec.get("errata"):
        return f"explained: {rec.get('cause', '')} ({{ref}}`erratum <{rec['errata']}>`)"
    return f"**{status}**" if status in results.FAILING else status


def records_table(records: list[dict], chapter: str | None = None) -> str:
    """MyST markdown of one notebook's records for the report page, compact (small type, one line per row
    where it fits).

    Values printed in the paper and the paper's claims (statements tested through a quantity whose
    paper value is a threshold) go to separate tables; every row says where in the paper the number
    is and what it is (the place links to the figure or section that shows it, else to ``chapter``), and an
    explained deviation links to its errata entry.  Then the reasons of the explained deviations and of
    the records this run could not compare, each with the record's key (the name ``make verify`` reports).
    """
    paper_records, ours = results.split_own(records)
    printed = [r for r in paper_records if r["kind"] != "claim"]
    claims = [r for r in paper_records if r["kind"] == "claim"]

    def where(rec):  # the place links to the figure that shows the number, else to the chapter
        place, what = _place_and_what(rec)
        if chapter:
            place = f"{{ref}}`{place} <{rec['anchor']}>`" if rec.get("anchor") else f"{{doc}}`{place} <{chapter}>`"
        return f"**{place}** {what}" if what else f"**{place}**"

    parts = []
    if printed:
        parts.append("**Values printed in the paper**\n\n" + _folding_matches(
            printed, ["in the paper: what", "ours", "paper", "tolerance", "status"],
            lambda r: [where(r), results.shown(r, 5), r.get("printed") or f"{r['paper']:.5g}", f"{r['tol']:.2g} ({r['kind']})",
                       _status_cell(r)],
            "value"))
    if claims:
        parts.append("**Claims of the paper**\n\n" + _folding_matches(
            claims, ["in the paper: claim", "tested by", "outcome"],
            lambda r: [where(r), r.get("quantity", ""), _claim_cell(r) + _unless_match(r)], "claim"))
    if ours:  # statements we test beside the paper's (marked "our addition" in data/paper): not the paper's claims
        parts.append("**Our own checks beside the paper's** (not claims of the paper)\n\n"
                     + table(["beside the paper's", "tested by", "outcome"],
                             [[where(r), r.get("quantity", ""), _claim_cell(r, "check") + _unless_match(r)]
                              for r in ours]))
    notes = []
    for r in records:
        status = results.status_of(r)
        place, what = _place_and_what(r)
        if status == "not compared":
            notes.append(f"* {place} ({what}), not compared: {r['not_compared']} (`{r['key']}`)")
        elif status == "set-up":
            notes.append(f"* {place} ({what}), set-up: {r['chosen']} (`{r['key']}`)")
        elif status != "match" and r.get("explanation"):
            link = f" ({{ref}}`erratum <{r['errata']}>`)" if r.get("errata") else ""
            notes.append(f"* {place} ({what}): {r['explanation']}{link} (`{r['key']}`)")
    if notes:  # folded: the rows already give each status and link its erratum
        parts.append(f":::{{dropdown}} Explained deviations, set-up values and records not compared ({len(notes)}): the reasons\n\n"
                     + "\n".join(notes) + "\n:::")
    if not parts:
        return "No records."
    body = "\n\n".join(parts)
    return f"````{{container}} records\n{body}\n````"


#: A records table longer than this shows its deviations and folds its matches (the report stays a page to scan)
FOLD_MATCHES_OVER = 20


def _folding_matches(records: list[dict], header: list[str], row, noun: str) -> str:
    """A table of ``records``, one ``row(record)`` each; when there are more than :data:`FOLD_MATCHES_OVER`, the
    matching ones go to a folded table below the others (deviations, records not compared and failures stay in
    view)."""
    if len(records) <= FOLD_MATCHES_OVER:
        return table(header, [row(r) for r in records])
    shown = [r for r in records if results.status_of(r) != "match"]
    matching = [r for r in records if results.status_of(r) == "match"]
    counted = plural(len(matching), ("more " if shown else "") + noun)
    folded = (f":::{{dropdown}} {counted} that match{'es' if len(matching) == 1 else ''} the paper\n\n"
              f"{table(header, [row(r) for r in matching])}\n:::")
    return (table(header, [row(r) for r in shown]) + "\n\n" if shown else "") + folded


def _unless_match(rec: dict) -> str:
    """``"; <status>"`` for a claim whose outcome alone does not say its status (anything but a plain match)."""
    return "" if results.status_of(rec) == "match" else f"; {_status_cell(rec)}"


def _place_and_what(rec: dict) -> tuple[str, str]:
    """The record's place in the paper ("Table 2 'after'") and what it is (the source's parenthesis), without
    the paper's name, which the chapter already gives."""
    source = re.sub(r"^[^,(]*?\d{4}[ab]?(?: \([^)]*\))?, ", "", rec["source"]).strip()
    if not source.endswith(")"):
        said = source.find("): ")  # "Fig. 3a (offline LiRA): 'the quoted claim'": the place, then what it says
        return (source[:said + 1], source[said + 3:]) if said > 0 else (source, "")
    depth = 0  # the parenthesis that the final ")" closes (the detail may hold brackets of its own)
    for i in range(len(source) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(source[i], 0)
        if depth == 0:
            return source[:i].rstrip(), source[i + 1:-1]
    return source, ""


def _claim_cell(rec: dict, noun: str = "claim") -> str:
    """A claim's (or our check's) outcome in words: the measured quantity against what it needs (the reference
    value within the tolerance)."""
    holds = results.within(rec["value"], rec["paper"], rec["tol"])
    verdict = "holds" if holds else "does not hold"
    def number(x: float, digits: int) -> str:  # a grid point as 3,000, not 3e+03
        return f"{x:,.0f}" if float(x).is_integer() and 1000 <= abs(x) < 1e15 else f"{x:.{digits}g}"

    ours = results.shown(rec, 3) if rec.get("bound") else number(rec["value"], 3)  # a bound rounded outward, as its chapter does
    if holds and rec["value"] in (0, 1) and rec["paper"] in (0, 1) and rec["tol"] < 0.5:  # a yes/no that holds: its 0/1
        return f"{verdict} in our run"  # says nothing (one that does not hold shows its number: it may be a fraction)
    if rec["paper"] != 0 and rec["tol"] >= 0.2 * abs(rec["paper"]):  # a range ("above the baseline"): its ends
        low, high = rec["paper"] - rec["tol"], rec["paper"] + rec["tol"]
        low = 0.0 if abs(low) < 1e-6 * abs(high) else low  # a range that starts at 0, written as 0
        return f"{verdict}: ours {ours}, the {noun} needs {number(low, 4)} to {number(high, 4)}"
    return f"{verdict}: ours {ours}, the {noun} needs {number(rec['paper'], 3)} ± {rec['tol']:.2g}"


def by_cause(explained: list[dict]) -> str:
    """"paper error 3, printed rounding 1": explained deviations counted by cause, in the order of
    :data:`fdp_book.results.CAUSES`."""
    causes = [r.get("cause") for r in explained]
    return ", ".join(f"{c} {causes.count(c)}" for c in results.CAUSES if c in causes)


def own_outcome(ours: list[dict]) -> str:
    """"2 checks of our own (both hold)": the outcome of our own checks, counted apart from the paper's claims."""
    status = [results.status_of(r) for r in ours]
    held, uncompared, explained = status.count("match") + status.count("set-up"), status.count("not compared"), status.count("explained")
    failing = len(status) - held - uncompared - explained
    parts = [f"{held} hold{'s' if held == 1 else ''}"] if held else []
    parts += [f"{explained} deviate{'s' if explained == 1 else ''} with an explanation"] if explained else []
    parts += [f"{uncompared} not compared"] if uncompared else []
    parts += [f"**{failing} failing**"] if failing else []
    if held == len(ours):
        parts = ["it holds" if held == 1 else "all hold"]
    return f"{plural(len(ours), 'check')} of our own ({', '.join(parts)})"


def chapter_table(records: list[dict], most: int = 8) -> str:
    """MyST markdown of a paper chapter's comparison: the counts, then (folded) the explained deviations
    (each linked to its erratum), or some of the printed values where every number matches.

    Rows are for people: where in the paper, what the number is, ours against the paper's to four
    significant digits, a claim's outcome in words; the registry keys are on the reproduction report.
    """
    if not records:
        raise ValueError("records must not be empty")
    records, ours = results.split_own(records)
    status = [results.status_of(r) for r in records]
    explained = [r for r, s in zip(records, status) if s == "explained"]
    shown = explained or [r for r in records if r["kind"] != "claim"][:most] or records[:most]
    setup = status.count("set-up")
    other = len(records) - status.count("match") - setup - len(explained)
    lead = (f"{plural(len(records), 'number')} and claims recorded: {status.count('match')} match the paper"
            + (f", {setup} hit by a parameter chosen to hit {'it' if setup == 1 else 'them'}" if setup else "")
            + f", {plural(len(explained), 'explained deviation')}" + (f" ({by_cause(explained)})" if explained else "")
            + (f", {other} other" if other else "")
            + "." + (f" Besides, {own_outcome(ours)}." if ours else ""))
    rows = []
    for r in shown:
        place, what = _place_and_what(r)
        if r["kind"] == "claim":
            rows.append([place, what, _claim_cell(r), "claimed", _status_cell(r)])
        else:
            rows.append([place, what, results.shown(r, 4), r.get("printed") or f"{r['paper']:.4g}", _status_cell(r)])
    # the table folded, so that the page's findings follow the counts on the first screen
    title = (f"The deviations ({len(explained)}), each with its erratum" if explained
             else "Some of the printed values")
    return (lead + f"\n\n:::{{dropdown}} {title}\n\n" + table(["in the paper", "what", "ours", "paper", "status"], rows)
            + "\n:::")
