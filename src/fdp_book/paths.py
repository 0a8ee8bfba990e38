"""Where the repository's data, results and errata are.

The repository root is ``FDP_ROOT`` when set, else the first folder holding ``_toc.yml`` and
``data/paper`` above the working directory (a notebook runs in ``notebooks/``) or above this file
(an editable install); a copy of ``fdp`` installed elsewhere finds the book it works for from there.
The book's registry, ``data/results``, is written only by the book's build (``make``, which sets
``FDP_BOOK_BUILD=1`` for the notebooks it executes); a notebook run anywhere else (JupyterLab, VS Code,
``jupyter execute``) records into a scratch folder, ``_build/scratch/results``, and says so.  The
environment variable ``FDP_RESULTS_DIR`` overrides both (``make run`` and the test-suite use it).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ROOT", "PAPER_DATA", "ERRATA", "BOOK_RESULTS", "SCRATCH_RESULTS", "book_build", "results_dir", "paper_dir"]



def _find_root() -> Path:
    override = os.environ.get("FDP_ROOT")
    if override:
        root = Path(override).resolve()
        if not ((root / "_toc.yml").is_file() and (root / "data" / "paper").is_dir()):
            raise RuntimeError(f"FDP_ROOT={override} is not the book's repository (no _toc.yml and data/paper there)")
        return root
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        for folder in (start, *start.parents):
            if (folder / "_toc.yml").is_file() and (folder / "data" / "paper").is_dir():
                return folder
    raise RuntimeError(
        "fdp_book needs the repository of the book (a folder with _toc.yml and data/paper): run it from "
        "inside the repository or set FDP_ROOT"
    )


#: The repository root (the folder holding _toc.yml and data/paper).
ROOT = _find_root()
#: Values transcribed from the papers, each with its source.
PAPER_DATA = ROOT / "data" / "paper"
#: The errata page; each entry carries a MyST label ``(label)=`` that records cite.
ERRATA = ROOT / "book" / "errata.md"


#: The book's results registry (written by the book's build only).
BOOK_RESULTS = ROOT / "data" / "results"
#: Where a notebook run outside the book's build records its numbers.
SCRATCH_RESULTS = ROOT / "_build" / "scratch" / "results"


def book_build() -> bool:
    """Whether this process runs under the book's build (``FDP_BOOK_BUILD=1``, set by ``make`` for the notebooks)."""
    return os.environ.get("FDP_BOOK_BUILD", "") == "1"


def results_dir() -> Path:
    """Folder where notebooks record their numbers: ``FDP_RESULTS_DIR`` if set, else ``data/results`` under the
    book's build, else the scratch folder."""
    override = os.environ.get("FDP_RESULTS_DIR")
    if override:
        return Path(override).resolve()
    return BOOK_RESULTS if book_build() else SCRATCH_RESULTS


def paper_dir() -> Path:
    """Folder of the paper values, ``data/paper/<notebook>.yaml`` (``FDP_PAPER_DIR`` overrides, for tests)."""
    override = os.environ.get("FDP_PAPER_DIR")
    return Path(override).resolve() if override else PAPER_DATA
