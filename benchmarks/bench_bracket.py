"""Certified ReRo brackets against the uncertified route, and where the bracket's time goes (issue: certified speed).

For each workload (the ImageNet ReRo workload of De et al. and four DP-SGD settings of the hidden-size family
used across the book) this prints, in one process: the time of our certified bracket (``fdp.accounting.pld.tradeoff_bracket``
at discretization 1e-4, and for the ImageNet workload also at 6e-5, the spacing at which its width meets the goal),
the time of the uncertified route (dp_accounting's PLD at 1e-4 read by riskcal's ``get_beta_from_pld``), their
ratio (goal: at most 3), the bracket's largest relative width over kappa in [1e-7, 0.1] (goal: at most 1e-4), and
how far the uncertified values lie above the bracket (they read the symmetrised curve, the bracket the add
direction, so at small kappa they may lie well above it).  For the ImageNet workload it then profiles one bracket
(cProfile: the one-step measures, pessimistic and optimistic with its root finding; the FFT composition; the
curves' breakpoints and convex envelope; the queries) and reports the peak of traced memory.

Before the float64 one-step measures (mpmath, until 2026-11-24), on this machine: ImageNet 6.67 s against 0.151 s
(ratio 44) at width 2.5e-4, one-step measures 99.3 % of the time; the hidden-size family 17-115 x.
Run with ``make bench``.
"""

from __future__ import annotations

import numpy as np

from fdp import Mechanism, risk
from fdp.accounting import pld
from fdp.accounting.privacy_loss import dpsgd
from timing import best_of, profile_phases, uncertified_gamma

KAPPAS = np.array([1e-7, 1e-5, 1e-3, 1e-1])
WORKLOADS = {
    "ImageNet (De et al.)": (2.5, 16384 / 1281167, 71589),
    "ImageNet, h = 6e-5": (2.5, 16384 / 1281167, 71589, 6e-5),
    "hidden size (1.1, 0.07, 60)": (1.1, 0.07, 60),
    "hidden size (0.59, 0.01, 100)": (0.59, 0.01, 100),
    "hidden size (10.7, 0.99, 100)": (10.7, 0.99, 100),
    "hidden size (2.0, 0.3, 20)": (2.0, 0.3, 20),
}
# cProfile entries reported for one bracket: (label, function name)
PHASES = [
    ("lattice frame (tail roots)", "frames"),
    ("pessimistic one-step measure", "pessimistic"),
    ("optimistic one-step measure", "optimistic"),
    ("  of which the bins' root finding", "_bins"),
    ("FFT composition (both)", "self_convolve"),
    ("breakpoints of the curves", "breakpoints"),
    ("  of which the convex envelope", "lower_convex_envelope"),
    ("queries (gamma)", "gamma"),
]


def bracket(noise, rate, steps, discretization=1e-4):
    return pld.tradeoff_bracket(Mechanism("gaussian", noise, rate, steps), discretization=discretization, level_min=float(KAPPAS.min()))


def compare(name, noise, rate, steps, discretization=1e-4):
    (low, up), t_cert = best_of(lambda: bracket(noise, rate, steps, discretization).gamma(KAPPAS), 3)
    ref, t_ref = best_of(lambda: uncertified_gamma(noise, rate, steps, KAPPAS), 3)
    width = np.max((up - low) / up)
    above = np.max((ref - up) / up)  # the uncertified route reads the symmetrised curve: its gamma may lie above
    print(f"{name:30s} certified {t_cert:6.2f} s, uncertified {t_ref:5.3f} s: ratio {t_cert / t_ref:5.1f} (goal <= 3); "
          f"max relative width {width:.1e} (goal <= 1e-4); uncertified (symmetrised) above the bracket's top by "
          f"at most {above:+.1e} relative")


def compare_automatic(name, noise, rate, steps):
    """The default of ``fdp.risk.rero`` (issue: accuracy by default): the spacing chosen for a relative width of
    1e-4 (a coarse probe, then the spacing the h^2 scaling asks for), against the uncertified route (goal: <= 2x)."""
    est, t_auto = best_of(lambda: risk.rero(dpsgd(noise, rate, steps), KAPPAS), 3)
    _, t_ref = best_of(lambda: uncertified_gamma(noise, rate, steps, KAPPAS), 3)
    width = np.max((est.upper - est.lower) / est.upper)
    print(f"{name + ', automatic':30s} certified {t_auto:6.2f} s, uncertified {t_ref:5.3f} s: ratio "
          f"{t_auto / t_ref:5.1f} (goal <= 2); max relative width {width:.1e} (goal <= 1e-4)")


def main():
    for name, args in WORKLOADS.items():
        compare(name, *args)
    compare_automatic("ImageNet (De et al.)", *WORKLOADS["ImageNet (De et al.)"])
    noise, rate, steps, h = WORKLOADS["ImageNet, h = 6e-5"]
    profile_phases(lambda: bracket(noise, rate, steps, h).gamma(KAPPAS), PHASES, "one bracket (ImageNet, h = 6e-5)")


if __name__ == "__main__":
    main()
