"""ReRo bounds for the ImageNet-style workload: Edgeworth, our certified PLD bracket, and dp_accounting + riskcal.

Workload (De et al. 2022, ImageNet NF-ResNet-50): noise 2.5, sampling rate 16,384/1,281,167, 71,589 steps, at
kappa in {1e-7, 1e-5, 1e-3, 1e-1}.  All methods run in this process; we report times, the ratio of the
dp_accounting + riskcal route (a pessimistic PLD composed by dp_accounting, read by riskcal's
``get_beta_from_pld`` as riskcal and gdpnum do) to our bracket, the bracket's certified width, and each
approximation's distance to the bracket.  riskcal reads the symmetrised curve, so its gamma is at least the add-direction one.
Targets (issue): Edgeworth < 10 ms per kappa after < 0.5 s setup; the bracket of width <= 1e-4 in < 5 s.
Run with ``make bench``.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from fdp import Mechanism
from fdp.accounting import edgeworth, montecarlo, pld
from timing import uncertified_gamma

SIGMA, Q, STEPS = 2.5, 16384 / 1281167, 71589
KAPPAS = np.array([1e-7, 1e-5, 1e-3, 1e-1])


def timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def main():
    print(f"workload: sigma={SIGMA}, q={Q:.6f}, steps={STEPS}, kappa={KAPPAS.tolist()}")
    curve, t_setup = timed(lambda: edgeworth.edgeworth_curve(Mechanism("gaussian", SIGMA, Q, STEPS)))
    ew, t_eval = timed(lambda: [float(curve.power(np.array([k]))[0]) for k in KAPPAS])
    bracket, t_bracket = timed(lambda: pld.tradeoff_bracket(Mechanism("gaussian", SIGMA, Q, STEPS), discretization=1e-4))
    low, up = bracket.gamma(KAPPAS)
    mid = 0.5 * (low + up)

    rc, t_rc = timed(lambda: uncertified_gamma(SIGMA, Q, STEPS, KAPPAS))
    print(f"Edgeworth: setup {t_setup:.3f} s, {1e3 * t_eval / KAPPAS.size:.2f} ms per kappa")
    print(f"PLD bracket: {t_bracket:.2f} s, max width {np.max(up - low):.2e}, max relative width {np.max((up - low) / mid):.2e}")
    print(f"dp_accounting + riskcal: {t_rc:.2f} s; time ratio riskcal route / our bracket {t_rc / t_bracket:.2f}")
    print(f"{'kappa':>8} {'lower':>12} {'upper':>12} {'Edgeworth':>12} {'rel.err':>9} {'riskcal':>12} {'rel.diff':>9}")
    for k, lo, hi, m, e, r in zip(KAPPAS, low, up, mid, ew, rc):
        print(f"{k:8.0e} {lo:12.6g} {hi:12.6g} {e:12.6g} {abs(e - m) / m:9.1e} {r:12.6g} {(r - m) / m:9.1e}")

    # streaming Monte Carlo: peak memory independent of the number of steps
    for steps in (100, 1000):
        tracemalloc.start()
        montecarlo.gamma_mc(Mechanism("gaussian", SIGMA, Q, steps), [0.1], samples=100_000, seed=0)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"streaming MC, 100,000 samples, {steps} steps: peak traced memory {peak / 2**20:.1f} MiB "
              f"(a samples x steps array would need {100_000 * steps * 8 / 2**20:.0f} MiB)")


if __name__ == "__main__":
    main()
