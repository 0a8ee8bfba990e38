"""Shared helpers of the benchmarks (imported by the bench_*.py scripts run from this folder)."""

from __future__ import annotations

import time

import numpy as np


def best_of(fn, repeats: int = 5):
    """The smallest wall time of ``repeats`` calls of ``fn`` and the value of the last call."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return value, min(times)


def uncertified_gamma(noise_multiplier, sampling_rate, steps, kappas, discretization=1e-4):
    """gamma at ``kappas`` the uncertified way: dp_accounting's pessimistic PLD read by riskcal's
    ``get_beta_from_pld`` (as riskcal and gdpnum do; it reads the symmetrised curve)."""
    from riskcal.analysis import get_beta_from_pld

    from fdp import pld

    dist = pld.mechanism_pld("gaussian", noise_multiplier, sampling_rate, steps, discretization=discretization)
    return 1.0 - np.asarray(get_beta_from_pld(dist, alpha=np.asarray(kappas)))
