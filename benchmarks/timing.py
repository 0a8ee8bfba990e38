"""Shared timing helper of the benchmarks (imported by the bench_*.py scripts run from this folder)."""

from __future__ import annotations

import time


def best_of(fn, repeats: int = 5):
    """The smallest wall time of ``repeats`` calls of ``fn`` and the value of the last call."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return value, min(times)
