"""One figure style for the book."""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt

__all__ = ["use_style", "new_figure", "column_figure", "PAPER_STYLE", "COLUMN_INCHES", "COLUMN_DPI"]

#: Width of the book's text column (688 px at 1280 px) in inches at 100 px per inch, and the dpi that
#: draws it at twice that resolution: a 9 pt font is then 12.5 px on the page.
COLUMN_INCHES = 6.88
COLUMN_DPI = 200

#: Marker style for values transcribed from a paper, drawn over our curves.
PAPER_STYLE = dict(marker="o", linestyle="none", markerfacecolor="none", markersize=7)


def use_style() -> None:
    """Set the book's matplotlib defaults (readable sizes, grid, no top/right spines)."""
    mpl.rcParams.update(
        {
            "figure.dpi": 110,
            "savefig.dpi": 110,
            "figure.figsize": (6.4, 4.0),
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "legend.frameon": False,
            "font.size": 10,
        }
    )


def new_figure(ncols: int = 1, width: float = 6.4, height: float = 4.0):
    """A figure with ``ncols`` axes side by side, in the book's style."""
    use_style()
    fig, axes = plt.subplots(1, ncols, figsize=(width, height), squeeze=False, layout="constrained")
    return fig, axes[0] if ncols > 1 else axes[0, 0]


def column_figure(nrows: int = 1, ncols: int = 1, row_height: float = 3.0):
    """A figure as wide as the book's column, at most two panels per row, drawn at 2x resolution.

    Returns ``(fig, axes)`` with ``axes`` a flat list of ``nrows * ncols`` axes.  Fonts of 9 pt and
    more stay legible at the displayed size; more than two panels in a row would not.
    """
    if ncols not in (1, 2):
        raise ValueError(f"ncols must be 1 or 2 (wider rows are illegible at the column width), got {ncols!r}")
    if not isinstance(nrows, int) or nrows < 1:
        raise ValueError(f"nrows must be a positive integer, got {nrows!r}")
    if not row_height > 0:
        raise ValueError(f"row_height must be > 0, got {row_height!r}")
    use_style()
    mpl.rcParams.update({"font.size": 9, "legend.fontsize": 9, "axes.titlesize": 9, "axes.labelsize": 9,
                         "xtick.labelsize": 9, "ytick.labelsize": 9})
    fig, axes = plt.subplots(nrows, ncols, figsize=(COLUMN_INCHES, row_height * nrows), dpi=COLUMN_DPI,
                             squeeze=False, layout="constrained")
    return fig, list(axes.flat)
