"""One figure style for the book."""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt

__all__ = ["use_style", "new_figure", "PAPER_STYLE"]

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
