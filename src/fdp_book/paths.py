"""Where the repository's data, results and errata are.

The repository root is ``FDP_ROOT`` when set, else the first folder holding ``_toc.yml`` and
``data/paper`` above the working directory (a notebook runs in ``notebooks/``) or above this file
(an editable install); a copy of ``fdp`` installed elsewhere finds the book it works for from there.
The results directory can be redirected with the environment variable ``FDP_RESULTS_DIR``
(``make run`` and the test-suite use this so that they never overwrite the book's results).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ROOT", "PAPER_DATA", "ERRATA", "results_dir", "paper_dir"]



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


def results_dir() -> Path:
    """Folder where notebooks record their numbers (``data/results`` unless overridden)."""
    override = os.environ.get("FDP_RESULTS_DIR")
    return Path(override).resolve() if override else ROOT / "data" / "results"


def paper_dir() -> Path:
    """Folder of the paper values, ``data/paper/<notebook>.yaml`` (``FDP_PAPER_DIR`` overrides, for tests)."""
    override = os.environ.get("FDP_PAPER_DIR")
    return Path(override).resolve() if override else PAPER_DATA
