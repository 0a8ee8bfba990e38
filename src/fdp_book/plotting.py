"""One figure style for the book."""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.font_manager import FontProperties
from matplotlib.path import Path

__all__ = ["use_style", "new_figure", "column_figure", "legend", "PAPER_STYLE", "COLUMN_INCHES", "COLUMN_DPI"]

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


def _sampled_segments(xy: np.ndarray, step: float) -> np.ndarray:
    """Points along the polyline ``xy`` (display coordinates) at most ``step`` pixels apart, its vertices included
    (a two-point diagonal across a panel is seen wherever a legend box meets it)."""
    seg = xy[1:] - xy[:-1]
    n = np.maximum(1, np.ceil(np.hypot(seg[:, 0], seg[:, 1]) / step).astype(int))
    which = np.repeat(np.arange(len(seg)), n)
    t = (np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)) / np.repeat(n, n)
    return np.vstack([xy[which] + seg[which] * t[:, None], xy[-1:]])


def _drawn_points(ax) -> np.ndarray:
    """Display coordinates of what ``ax`` shows: line vertices (each segment sampled, so that a line crossing
    a box without a vertex in it is seen), markers and error bars, bar corners."""
    chunks = []
    for line in ax.get_lines():
        x, y = (np.asarray(v, dtype=float) for v in line.get_data())
        if x.size == 0 or not line.get_visible():
            continue
        xy = ax.transData.transform(np.column_stack([x, y]))
        xy = xy[np.all(np.isfinite(xy), axis=1)]
        if len(xy) > 1 and line.get_linestyle() not in ("None", "none", ""):
            xy = _sampled_segments(xy, step=2.0)
        chunks.append(xy)
    for coll in ax.collections:
        for path in coll.get_paths():
            verts = path.vertices
            if len(verts):
                chunks.append(coll.get_transform().transform(verts) if coll.get_offsets().size == 0 else
                              ax.transData.transform(coll.get_offsets()))
    for patch in ax.patches:
        chunks.append(patch.get_window_extent().corners())
    pts = np.vstack(chunks) if chunks else np.empty((0, 2))
    return pts[np.all(np.isfinite(pts), axis=1)]


def _drawn_areas(ax) -> list:
    """Display-coordinate paths of what ``ax`` fills (bars and other patches, bands of ``fill_between``) and the boxes
    of its texts: a legend may lie inside a tall bar without any of the bar's corners under it."""
    renderer = ax.figure.canvas.get_renderer()
    areas = [patch.get_transform().transform_path(patch.get_path()) for patch in ax.patches]
    for coll in ax.collections:
        if isinstance(coll, PolyCollection) and len(coll.get_facecolors()):
            areas += [coll.get_transform().transform_path(path) for path in coll.get_paths()]
    areas += [Path(text.get_window_extent(renderer).corners()[[0, 1, 3, 2, 0]]) for text in ax.texts
              if text.get_visible() and text.get_text()]
    return areas


def _covers(box, pts: np.ndarray, areas: list) -> bool:
    """Whether the display box ``box`` lies over a drawn point or inside a drawn area (tested on a grid of the box)."""
    if ((pts[:, 0] >= box.x0) & (pts[:, 0] <= box.x1) & (pts[:, 1] >= box.y0) & (pts[:, 1] <= box.y1)).any():
        return True
    gx, gy = np.meshgrid(np.linspace(box.x0, box.x1, 17), np.linspace(box.y0, box.y1, 9))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    return any(area.contains_points(grid).any() for area in areas)


def legend(ax, *args, **kwargs):
    """``ax.legend`` that never covers data (call it last, after the limits and scales are set).

    The legend is framed and tried where asked (``loc``, "best" by default), then in the other corners and edges
    of the axes; the first place where no plotted point or line lies under it is kept.  Only when every place
    inside covers data (or when ``loc="below"``) does it go under the panel's axis label, in ``ncols`` columns if
    given and they fit, else in as many as fit (never beside the panel: the panel keeps the column's width).  Long
    bar markers ("_", drawn 20-30 points wide over a category) are drawn at the legend's handle length, so they do
    not stick out of its frame.  ``order`` (labels) puts those entries first, in that order, so that the columns
    group what belongs together.  Returns the legend.
    """
    order = kwargs.pop("order", None)
    if order is not None:
        handles, labels = args if len(args) == 2 else ax.get_legend_handles_labels()
        rank = {label: i for i, label in enumerate(order)}
        pairs = sorted(zip(handles, labels), key=lambda hl: rank.get(hl[1], len(rank)))  # (stable: the rest keep theirs)
        args = ([h for h, _ in pairs], [label for _, label in pairs])
    return _fit_handles(_place_legend(ax, *args, **kwargs))


def shared_legend(fig, axes, ncols: int | None = None, last: str | None = None, **kwargs):
    """One legend under all ``axes`` of ``fig``, for panels that share their entries: each label once, in the order
    the panels first use it, those that start with ``last`` moved to the end; in ``ncols`` columns (default: two
    rows, so that a column holds a pair, such as a curve and its inverse), fewer where the legend would be wider
    than the figure.  Returns the legend."""
    entries = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    labels = sorted(entries, key=lambda label: bool(last) and label.startswith(last))  # (a stable sort)
    kwargs.setdefault("columnspacing", 1.2)  # (tighter than the default 2: more columns fit the column's width)
    kwargs.setdefault("handlelength", 1.6)
    for cols in range(ncols or -(-len(labels) // 2), 0, -1):  # fewer columns while it is wider than the figure
        leg = fig.legend([entries[label] for label in labels], labels, loc="outside lower center", ncols=cols, **kwargs)
        fig.draw_without_rendering()
        if cols == 1 or leg.get_window_extent().width <= fig.bbox.width:
            break
        leg.remove()
    return _fit_handles(leg)


def spare_panels(axes, used: int, source=None, **kwargs):
    """Turn off the panels after the first ``used`` (a grid of two per row leaves one spare with an odd count) and,
    given the ``source`` axes, put its legend in the first spare panel instead of over the data.

    Returns the legend, or None when there is no spare panel (then the caller places the legend with :func:`legend`).
    """
    spare = list(axes[used:])
    for ax in spare:
        ax.axis("off")
    if source is None or not spare:
        return None
    kwargs.setdefault("frameon", False)
    return _fit_handles(spare[0].legend(*source.get_legend_handles_labels(), loc="center", **kwargs))


def log_rate_axis(ax, rates) -> None:
    """A logarithmic x axis for sampling rates spanning decades, ticked at the rates themselves (0.01 stays
    readable next to 0.99)."""
    ax.set_xscale("log")
    ax.set_xticks(list(rates))
    ax.set_xticklabels([f"{r:g}" for r in rates])
    ax.minorticks_off()


def _fit_handles(leg):
    """Shrink the legend's copies of wide "_" and "|" markers to its handle length (the plot keeps its own)."""
    for handle in getattr(leg, "legend_handles", []):
        if hasattr(handle, "get_marker") and handle.get_marker() in ("_", "|") and handle.get_markersize() > 12:
            handle.set_markersize(12)
    return leg


def _place_legend(ax, *args, **kwargs):
    """:func:`legend`'s placement."""
    kwargs.setdefault("frameon", True)
    kwargs.setdefault("framealpha", 0.9)
    kwargs.setdefault("edgecolor", "0.8")
    anchor = kwargs.pop("bbox_to_anchor", None)
    if anchor is not None:
        return ax.legend(*args, bbox_to_anchor=anchor, **kwargs)  # placed outside by the caller
    ax.figure.draw_without_rendering()  # the layout and the sizes, without rasterising
    asked = kwargs.pop("loc", "best")
    if asked != "below":
        pts, areas = _drawn_points(ax), _drawn_areas(ax)
        renderer = ax.figure.canvas.get_renderer()
        for loc in dict.fromkeys([asked, "upper left", "upper right", "lower right", "lower left", "center right",
                                  "center left", "upper center", "lower center"]):
            leg = ax.legend(*args, loc=loc, **kwargs)
            # a legend inside the axes leaves the layout as drawn above: its box is known without drawing the figure
            if not _covers(leg.get_window_extent(renderer).padded(2.0), pts, areas):
                return leg
            leg.remove()
    # no free place: under this panel's axis label (constrained layout makes room below; two panels of a row each
    # keep their own legend, where one figure legend per panel would lie on top of each other), in as many columns
    # as fit the panel's width, else as few as fit the figure's
    handles, labels = args if len(args) == 2 else ax.get_legend_handles_labels()
    asked_cols = [n for n in (kwargs.pop("ncols", None), kwargs.pop("ncol", None)) if n]  # tried first, if it fits
    renderer = ax.figure.canvas.get_renderer()
    # the gap from the axes' bottom to below its tick labels and axis label, in units of the legend's font size (a
    # distance in points survives the re-layout that the legend itself triggers; one in axes fractions does not)
    size = FontProperties(size=kwargs.get("fontsize", plt.rcParams["legend.fontsize"])).get_size_in_points()
    labels_box = ax.xaxis.get_tightbbox(renderer)  # None for a hidden x axis
    bottom = ax.get_window_extent(renderer).y0
    gap = (bottom - (labels_box.y0 if labels_box is not None else bottom)) * 72.0 / ax.figure.dpi
    kwargs["borderaxespad"] = gap / size + 0.4
    width = ax.get_tightbbox(renderer).width
    for ncols in asked_cols[:1] + list(range(min(len(labels), 3), 0, -1)):
        leg = ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncols=ncols, **kwargs)
        ax.figure.draw_without_rendering()
        if ncols == 1 or leg.get_window_extent().width <= width:
            return leg
        leg.remove()
    return leg
