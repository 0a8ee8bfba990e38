"""Repository paths that do not depend on the working directory.

The results directory can be redirected with the environment variable ``FDP_RESULTS_DIR``
(``make run`` and the test-suite use this so that they never overwrite the book's results).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ROOT", "PAPER_DATA", "ERRATA", "results_dir", "paper_dir"]

#: The repository root (the folder holding pyproject.toml).
ROOT = Path(__file__).resolve().parents[2]
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
