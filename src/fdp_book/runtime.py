"""How long a notebook will run, said before its heavy work, and where it is while it runs.

A notebook times one probe of each kind of work it repeats (one calibration, one game, one Algorithm 1 run), scales
each by how many of them its parameters ask for and prints the sum before it starts (:func:`estimate`).  While it
runs, :func:`step` prints the part that begins and the time since the notebook started, so that ``make run`` (which
shows the notebook's output as it comes) shows progress; under the book's build, where nobody watches, it prints
nothing.  The estimate covers the whole run, the kernel's start-up and the figures included.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from .paths import book_build

__all__ = ["Timings", "announce", "best_of", "duration", "elapsed", "estimate", "figure_seconds", "step", "timed"]

_started: list[float] = [time.perf_counter()]  # the notebook's start (it imports this module first thing)


def duration(seconds: float) -> str:
    """``seconds`` in words a reader takes in at a glance: "40 s", "3.5 min", "2.1 h"."""
    if seconds < 90:
        return f"{max(seconds, 1.0):.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def timed(probe: Callable[[], object]) -> float:
    """Seconds one call of ``probe`` takes."""
    t = time.perf_counter()
    probe()
    return time.perf_counter() - t


def best_of(call: Callable[[], object], repeats: int) -> tuple[object, float]:
    """``call``'s value and the shortest of ``repeats`` timings of it (the least disturbed by other work), for a page
    that compares speeds."""
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an integer >= 1, got {repeats!r}")
    best, value = float("inf"), None
    for _ in range(repeats):
        t = time.perf_counter()
        value = call()
        best = min(best, time.perf_counter() - t)
    return value, best


def elapsed() -> float:
    """Seconds since this process started (on Linux, from ``/proc``: a notebook's kernel start and imports included),
    or else since this module was imported."""
    try:
        with open("/proc/self/stat") as f:
            started = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime, in clock ticks after boot
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return max(uptime - started / os.sysconf("SC_CLK_TCK"), time.perf_counter() - _started[0])
    except (OSError, ValueError, IndexError):
        return time.perf_counter() - _started[0]


def figure_seconds() -> float:
    """Seconds to draw one of the book's figures as a notebook shows it: a probe figure (two column panels, one linear
    and one logarithmic over eight decades, four curves of 2,000 points and a legend each) drawn and rendered to PNG
    at the column's resolution."""
    import io

    import matplotlib.pyplot as plt
    import numpy as np

    from . import plotting

    t = time.perf_counter()
    fig, axes = plotting.column_figure(1, 2)
    x = np.geomspace(1e-8, 1.0, 2000)
    for ax, scale in zip(axes, ("linear", "log")):  # the book's panels are often logarithmic over many decades
        for k in range(1, 5):
            ax.plot(x, x ** (1 / k), label=f"curve {k}")
        ax.set_xscale(scale)
        ax.set_yscale(scale)
        plotting.legend(ax)
    fig.savefig(io.BytesIO(), format="png", bbox_inches="tight")
    plt.close(fig)
    return time.perf_counter() - t


def _ready() -> bool:
    import fdp.accounting  # noqa: F401  (what every worker imports first)

    return True


def _start_workers(workers: int) -> None:
    """Start joblib's local worker processes (loky keeps them for the process's later parallel calls); nothing with a
    Dask scheduler in the environment (its workers are already running)."""
    from joblib import Parallel, delayed

    from fdp.parallel import SCHEDULER_ENV

    if not os.environ.get(SCHEDULER_ENV, "").strip():
        Parallel(n_jobs=workers)(delayed(_ready)() for _ in range(workers))


def estimate(parts: Iterable[tuple], *, workers: int = 1, what: str = "", figures: int = 0) -> float:
    """Print the estimated run time of the whole notebook and return it in seconds.

    The estimate adds the time already spent (:func:`elapsed`: the kernel's start, the imports, the data, the start of
    the ``workers`` local processes, these probes), each part's units at its probe's time, and the drawing of the
    page's figures (:func:`figure_seconds`; twice outside the book's build, where each figure is also shown where it
    is drawn).

    Parameters
    ----------
    parts : iterable of (probe, count) or (probe, count, shared)
        Each kind of repeated work: a call doing one unit of it, how many units the run does, and whether the units
        are shared among the workers (default True; False: they run one after the other).  Each probe is called
        once and timed (a probe of zero units is not called).
    workers : int
        Parallel workers.
    what : str
        What the estimate counts, for the printed line ("20 calibrations, 3 Monte-Carlo runs").
    figures : int
        Figures the notebook draws after this point.
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers!r}")
    if isinstance(figures, bool) or not isinstance(figures, int) or figures < 0:
        raise ValueError(f"figures must be an integer >= 0, got {figures!r}")
    if workers > 1:
        _start_workers(workers)  # counted in elapsed(): the run pays it once, before its first parallel step
    seconds = 0.0
    for probe, count, *shared in parts:
        if count > 0:
            seconds += timed(probe) * count / (workers if not shared or shared[0] else 1)
    if figures:
        seconds += figure_seconds() * figures * (1 if book_build() else 2)
    seconds += elapsed()
    announce(seconds, where=f"{workers} workers" if workers > 1 else "one worker", what=what)
    return seconds


def announce(seconds: float, *, where: str, what: str = "") -> None:
    """Print an estimated run time (computed elsewhere: ``where`` it runs, ``what`` it counts)."""
    print(f"Estimated run time: about {duration(seconds)} on {where}" + (f" ({what})" if what else "")
          + ", start-up included, from a timed sample of each kind of work.", flush=True)


def step(what: str) -> None:
    """Outside the book's build, print ``what`` begins and the time since the notebook started (progress for
    ``make run``)."""
    if book_build():
        return
    print(f"[{duration(time.perf_counter() - _started[0])} in] {what}", flush=True)


class Timings(dict):
    """Seconds per step of a chapter, for its timings table: ``with timings.step("Figure 3"):`` prints the step as it
    begins (:func:`step`, the progress of ``make run``) and adds the seconds its block took under that name."""

    def __init__(self):
        super().__init__()
        self.started = time.perf_counter()

    @contextmanager
    def step(self, what: str, name: str | None = None) -> Iterator[None]:
        """Time the block as ``name`` (default ``what``), announcing ``what``; a step timed twice adds up."""
        key = what if name is None else name
        if not key or key == "total":
            raise ValueError(f"a step needs a name other than 'total' (the table's last row), got {key!r}")
        step(what)
        t = time.perf_counter()
        try:
            yield
        finally:
            self[key] = self.get(key, 0.0) + time.perf_counter() - t

    def lap(self, name: str | None = None) -> None:
        """Add the seconds since the previous lap (or since the chapter began) under ``name``; without a name, only
        start the next lap.  For a step whose work is a visible cell of its own, timed from the cell after it."""
        now = time.perf_counter()
        if name is not None:
            if not name or name == "total":
                raise ValueError(f"a step needs a name other than 'total' (the table's last row), got {name!r}")
            self[name] = self.get(name, 0.0) + now - getattr(self, "_lap", self.started)
        self._lap = now

    def rows(self) -> list[list[str]]:
        """``[step, seconds]`` per step, then the total since the chapter began."""
        return [[k, f"{v:.1f}"] for k, v in self.items()] + [["total", f"{time.perf_counter() - self.started:.1f}"]]
