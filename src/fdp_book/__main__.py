"""``python -m fdp_book verify``: check the results registry against the papers' values (``make verify``);
``python -m fdp_book page RUN.ipynb``: render a ``make run`` notebook as one HTML page (:mod:`fdp_book.rerun`);
``python -m fdp_book params NAME``: a chapter's parameters, the book's values and what they mean (``make run HELP=1``);
``python -m fdp_book check NAME ARGS...``: the parameters papermill's ARGS would pass, checked against the chapter's
schema (``make run`` does this before it starts the notebook).

The book's command, apart from the library's (``python -m fdp``): it needs the book's repository (its
notebooks and ``data/paper``), which an installed ``fdp`` does not have.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def verify(results_dir: str | None = None) -> int:
    """Print every notebook's status against the papers' values; 0 when all hold, 1 otherwise."""
    # imported here: paths finds the repository on import, and outside it that RuntimeError is the one-line error
    import os

    from . import results
    from .paths import BOOK_RESULTS, ROOT, paper_dir

    # the chapters that record numbers: each has the paper's values in data/paper (a user's copy of a notebook has not)
    expected = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb") if (paper_dir() / f"{p.stem}.yaml").is_file())
    if results_dir is not None and not Path(results_dir).is_dir():
        raise ValueError(f"--results-dir: {results_dir!r} is not a folder")
    # the book's registry unless told otherwise (FDP_RESULTS_DIR, as the test-suite does, or --results-dir)
    ok, lines = results.verify(expected, results_dir or os.environ.get("FDP_RESULTS_DIR") or BOOK_RESULTS)
    print("\n".join(lines))
    print("verify: OK" if ok else "verify: FAILED")
    return 0 if ok else 1


def _page(args) -> int:
    from .rerun import build_page, write_csv

    notebook, run_results = Path(args.notebook), Path(args.results)
    if not notebook.is_file():
        raise ValueError(f"notebook: no file {notebook}")
    if not run_results.is_dir():
        raise ValueError(f"--results: {run_results} is not a folder")
    if (run_results / f"{notebook.stem}.json").is_file():
        print(f"results: {run_results / notebook.stem}.json and {write_csv(notebook.stem, run_results)}")
    print(f"page: {build_page(notebook, run_results, Path(args.out))}")
    return 0


def _params(notebook: str) -> int:
    """Print a chapter's parameters from their schema, wrapped to the terminal: each name with the book's value (as
    it pastes back into ``make run``: ``-p name value``), then its meaning, the values it takes and the paper's
    value."""
    import shutil
    import textwrap

    from . import parameters

    width = min(shutil.get_terminal_size((80, 24)).columns, 100)
    lines = [f"parameters of notebooks/{notebook}.ipynb, with the book's values (change one with "
             f'make run NB={notebook} PARAMS="-p name value"; schema: notebooks/schema/{notebook}.yaml):', ""]
    lines = [line for text in lines for line in (textwrap.wrap(text, width) or [""])]
    for name, value, values, meaning, paper in parameters.table_rows(notebook):
        lines += textwrap.wrap(f"{name} = {value}", width, subsequent_indent=" " * 8, break_on_hyphens=False)
        for label, text in (("", meaning), ("values: ", values), ("paper: ", paper)):
            lines += textwrap.wrap(label + text, width, initial_indent=" " * 4, subsequent_indent=" " * 6)
    print("\n".join(lines))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fdp_book", description="The book's commands: verify the results "
                                     "registry against the papers' values; render a make-run notebook as a page; "
                                     "list a chapter's parameters.")
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="check the results registry against the papers' values")
    v.add_argument("--results-dir", default=None, help="folder of results (default data/results)")
    p = sub.add_parser("page", help="render a make-run notebook as one HTML page")
    p.add_argument("notebook", help="the executed notebook, _build/runs/<name>-<tag>/<name>.ipynb")
    p.add_argument("--results", required=True, help="folder with that run's <name>.json")
    p.add_argument("--out", required=True, help="new or empty folder for the one-page book (or one it wrote before)")
    h = sub.add_parser("params", help="a chapter's parameters, the book's values and their meaning")
    h.add_argument("notebook", help="the chapter's name, e.g. guo_comparison")
    c = sub.add_parser("check", help="check papermill's parameter options against a chapter's schema")
    c.add_argument("notebook", help="the chapter's name, e.g. guo_comparison")
    c.add_argument("args", nargs=argparse.REMAINDER, help="papermill's -f/-y/-p/-r options")
    args = parser.parse_args(argv)
    try:
        if args.command == "page":
            return _page(args)
        if args.command == "params":
            return _params(args.notebook)
        if args.command == "check":
            from .parameters import check_command_line

            check_command_line(args.notebook, args.args)
            return 0
        return verify(args.results_dir)
    except (ValueError, RuntimeError) as exc:  # a bad folder, or no book repository (paths.ROOT)
        print(f"{parser.prog} {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
