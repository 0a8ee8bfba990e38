"""How long a notebook will run, said before its heavy work, and where it is while it runs.

A notebook times one probe of each kind of work it repeats (one calibration, one game, one Algorithm 1 run), scales
each by how many of them its parameters ask for and prints the sum before it starts (:func:`estimate`).  While it
runs, :func:`step` prints the part that begins and the time since the notebook started, so that ``make run`` (which shows the notebook's
output as it comes) shows progress; under the book's build, where nobody watches, it prints nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from .paths import book_build

__all__ = ["Timings", "announce", "best_of", "duration", "estimate", "step", "timed"]

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


def estimate(parts: Iterable[tuple], *, workers: int = 1, what: str = "") -> float:
    """Print the estimated run time and return it in seconds.

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
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers!r}")
    seconds = 0.0
    for probe, count, *shared in parts:
        if count > 0:
            seconds += timed(probe) * count / (workers if not shared or shared[0] else 1)
    announce(seconds, where=f"{workers} workers" if workers > 1 else "one worker", what=what)
    return seconds


def announce(seconds: float, *, where: str, what: str = "") -> None:
    """Print an estimated run time (computed elsewhere: ``where`` it runs, ``what`` it counts)."""
    print(f"Estimated run time: about {duration(seconds)} on {where}" + (f" ({what})" if what else "")
          + ", from a timed sample of each kind of work.", flush=True)


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

    def rows(self) -> list[list[str]]:
        """``[step, seconds]`` per step, then the total since the chapter began."""
        return [[k, f"{v:.1f}"] for k, v in self.items()] + [["total", f"{time.perf_counter() - self.started:.1f}"]]
