"""Algorithm 1 (Hayes et al.): our streaming Monte Carlo vs the naive array implementation.

The naive version draws the whole (samples x steps) matrix at once, as a direct transcription
of Algorithm 1 would.  Both run here, in the same process, on the same workload; we report the
ratios of wall time and of peak traced memory (tracemalloc tracks NumPy allocations), and check
that both estimate the same gamma.  Run with ``make bench``.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from fdp import Mechanism
from fdp.accounting import montecarlo


def naive_gamma(sigma, q, steps, kappa, samples, seed):
    rng = np.random.default_rng(seed)
    w = sigma * rng.standard_normal((samples, steps))
    log_r = np.log((1 - q) + q * np.exp((w - 0.5) / sigma**2)).sum(axis=1)
    top = np.sort(log_r)[::-1][: int(np.ceil(kappa * samples))]
    return np.exp(top).sum() / samples


def measure(fn):
    tracemalloc.start()
    t0 = time.perf_counter()
    value = fn()
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return value, elapsed, peak


def main():
    sigma, q, steps, kappa, samples = 1.0, 0.05, 1000, 0.1, 200_000
    print(f"workload: sigma={sigma}, q={q}, steps={steps}, kappa={kappa}, samples={samples:,}")
    ours, t_ours, m_ours = measure(lambda: montecarlo.gamma_mc(Mechanism("gaussian", sigma, q, steps), kappa, samples=samples, seed=1))
    naive, t_naive, m_naive = measure(lambda: naive_gamma(sigma, q, steps, kappa, samples, seed=1))
    print(f"gamma: streaming {ours.estimate[0]:.4f} +- {ours.std_error[0]:.4f}, naive {naive:.4f}")
    print(f"time:  streaming {t_ours:.2f} s, naive {t_naive:.2f} s, ratio naive/streaming {t_naive / t_ours:.2f}")
    print(f"peak memory: streaming {m_ours / 2**20:.0f} MiB, naive {m_naive / 2**20:.0f} MiB, "
          f"ratio naive/streaming {m_naive / m_ours:.1f}")


if __name__ == "__main__":
    main()
