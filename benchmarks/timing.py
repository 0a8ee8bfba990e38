"""Shared helpers of the benchmarks (imported by the bench_*.py scripts run from this folder)."""

from __future__ import annotations

import cProfile
import pstats
import time
import tracemalloc

import numpy as np


def best_of(fn, repeats: int = 5):
    """The smallest wall time of ``repeats`` calls of ``fn`` and the value of the last call, each computed from
    scratch (the report's cache of its last PLDs is cleared first: a repeat would time a dictionary lookup)."""
    from fdp.accounting import pld

    times = []
    for _ in range(repeats):
        pld._mechanism_pld.cache_clear()
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return value, min(times)


def uncertified_gamma(noise_multiplier, sampling_rate, steps, kappas, discretization=1e-4):
    """gamma at ``kappas`` the uncertified way: dp_accounting's pessimistic PLD read by riskcal's
    ``get_beta_from_pld`` (as riskcal and gdpnum do; it reads the symmetrised curve)."""
    from riskcal.analysis import get_beta_from_pld

    from fdp import Mechanism
    from fdp.accounting import pld

    dist = pld.mechanism_pld(Mechanism("gaussian", noise_multiplier, sampling_rate, steps), discretization=discretization)
    return 1.0 - np.asarray(get_beta_from_pld(dist, alpha=np.asarray(kappas)))


def profile_phases(fn, phases, what: str) -> None:
    """Run ``fn`` once under cProfile and tracemalloc; print the cumulative time of each phase
    ``(label, function name)`` and the peak of traced memory."""
    prof = cProfile.Profile()
    tracemalloc.start()
    prof.enable()
    fn()
    prof.disable()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    stats = pstats.Stats(prof)
    total = stats.total_tt
    cumulative = {}
    for (_, _, func), (_, _, _, cum, _) in stats.stats.items():
        cumulative[func] = cumulative.get(func, 0.0) + cum
    print(f"profile of {what} (total {total:.3f} s under cProfile; peak traced memory {peak / 2**20:.0f} MiB):")
    for label, func in phases:
        t = cumulative.get(func, 0.0)
        print(f"  {label:34s} {t:7.3f} s  {100 * t / total:5.1f} %")
