"""Composed subsampled-Gaussian RTM curve: the tensor reading (PLD of the product channel) vs the sum reading.

Workload: mu 1, sampling rate 0.3, 30 steps (the size test_rtm used to time).  Both readings run in
this process; the ratio is what to watch.  Run with ``make bench``.
"""

from __future__ import annotations

from fdp.accounting import rtm
from fdp.accounting.privacy_loss import Mechanism
from timing import best_of

MU, RATE, STEPS = 1.0, 0.3, 30
RUN = Mechanism("gaussian", 1.0 / MU, RATE, STEPS)


def main():
    print(f"workload: mu {MU}, q {RATE}, {STEPS} steps")
    _, t_tensor = best_of(lambda: rtm.composed_subsampled_gaussian(RUN, reading="tensor",
                                                                    discretization=1e-4), 3)
    _, t_sum = best_of(lambda: rtm.composed_subsampled_gaussian(RUN, reading="sum"), 3)
    print(f"tensor reading {t_tensor:.3f} s, sum reading {t_sum:.3f} s, ratio tensor/sum {t_tensor / t_sum:.2f}")


if __name__ == "__main__":
    main()
