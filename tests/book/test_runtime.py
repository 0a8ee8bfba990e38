"""The estimated run time and the progress lines of a notebook (fdp_book.runtime)."""

from __future__ import annotations

import time

import pytest

from fdp_book import runtime


@pytest.mark.parametrize("seconds, text", [(0.2, "1 s"), (40, "40 s"), (89, "89 s"), (90, "1.5 min"), (3600, "60.0 min"),
                                           (5400, "1.5 h"), (36000, "10.0 h")])
def test_a_duration_reads_at_a_glance(seconds, text):
    assert runtime.duration(seconds) == text


def test_the_estimate_scales_each_probe_by_its_count_over_the_workers(capsys, monkeypatch):
    calls, started = [], []
    times = iter([0.0, 2.0, 10.0, 13.0])  # perf_counter around each timed probe
    monkeypatch.setattr(runtime.time, "perf_counter", lambda: next(times))
    monkeypatch.setattr(runtime, "elapsed", lambda: 4.0)  # the kernel's start, imports and probes so far
    monkeypatch.setattr(runtime, "_start_workers", started.append)
    monkeypatch.setattr(runtime, "figure_seconds", lambda: 0.5)
    monkeypatch.setattr(runtime, "book_build", lambda: False)  # each figure is drawn twice: glued and shown
    seconds = runtime.estimate([(lambda: calls.append("a"), 10), (lambda: calls.append("b"), 4, False),
                                (lambda: calls.append("never"), 0)], workers=2, what="two kinds", figures=3)
    assert calls == ["a", "b"] and started == [2]  # a probe of no units is not called; the workers start first
    # shared units divided among the workers, serial ones not; figures; the time already spent
    assert seconds == pytest.approx(2.0 * 10 / 2 + 3.0 * 4 + 0.5 * 3 * 2 + 4.0)
    assert capsys.readouterr().out == ("Estimated run time: about 29 s on 2 workers (two kinds), start-up included, from a "
                                       "timed sample of each kind of work.\n")


def test_the_estimate_counts_the_time_since_the_process_started():
    assert runtime.elapsed() >= time.perf_counter() - runtime._started[0] - 0.02  # at least since the import


def test_a_probe_figure_is_drawn_and_closed():
    import matplotlib.pyplot as plt

    before = len(plt.get_fignums())
    assert 0.0 < runtime.figure_seconds() < 30.0
    assert len(plt.get_fignums()) == before


def test_the_estimate_needs_a_worker_and_a_count_of_figures():
    with pytest.raises(ValueError, match="workers"):
        runtime.estimate([], workers=0)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="figures"):
            runtime.estimate([], figures=bad)


def test_progress_is_said_outside_the_books_build_only(capsys, monkeypatch):
    monkeypatch.setattr(runtime, "_started", [time.perf_counter()])  # the clock runs from the notebook's start
    monkeypatch.setenv("FDP_BOOK_BUILD", "1")
    runtime.step("Figure 1")
    assert "Figure 1" not in capsys.readouterr().out
    monkeypatch.delenv("FDP_BOOK_BUILD")
    time.sleep(0.01)
    runtime.step("Figure 2")
    assert capsys.readouterr().out == "[1 s in] Figure 2\n"


def test_best_of_returns_the_value_and_the_shortest_time():
    calls = []
    value, seconds = runtime.best_of(lambda: calls.append(1) or len(calls), 3)
    assert value == 3 and len(calls) == 3 and 0 <= seconds < 1
    with pytest.raises(ValueError, match="repeats"):
        runtime.best_of(lambda: None, 0)


def test_timings_add_up_each_step_and_end_with_the_total(monkeypatch, capsys):
    monkeypatch.setattr(runtime, "book_build", lambda: False)
    times = iter([0.0, 1.0, 2.0, 4.0, 10.0, 11.0, 15.0, 20.0])  # each step reads the clock to print, to start and to end
    monkeypatch.setattr(runtime.time, "perf_counter", lambda: next(times))
    timings = runtime.Timings()  # starts at 0
    with timings.step("Figure 1: 6 runs", "Figure 1"):  # 2 -> 4
        pass
    with timings.step("Figure 1: again", "Figure 1"):  # 11 -> 15
        pass
    assert timings == {"Figure 1": 6.0} and "Figure 1: 6 runs" in capsys.readouterr().out
    assert timings.rows() == [["Figure 1", "6.0"], ["total", "20.0"]]


def test_a_step_cannot_be_named_total_and_repeats_are_counted():
    timings = runtime.Timings()
    with pytest.raises(ValueError, match="total"):
        with timings.step("total"):
            pass
    for bad in (0, 2.5, True, "3"):
        with pytest.raises(ValueError, match="repeats"):
            runtime.best_of(lambda: None, bad)


def test_a_lap_times_the_work_since_the_previous_lap(monkeypatch):
    """A step that is a visible cell of its own is timed by laps, from the cell after it."""
    times = iter([0.0, 3.0, 7.0, 8.0, 12.0])
    monkeypatch.setattr(runtime.time, "perf_counter", lambda: next(times))
    timings = runtime.Timings()  # 0
    timings.lap()  # 3: set-up, not a step
    timings.lap("DP accounting")  # 7
    timings.lap("Figure 7")  # 8
    assert timings == {"DP accounting": 4.0, "Figure 7": 1.0}
    with pytest.raises(ValueError, match="total"):
        timings.lap("total")
