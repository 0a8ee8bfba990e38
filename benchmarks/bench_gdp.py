"""Tight mu-GDP and regret for DP-SGD: ours vs gdpnum (the GDP paper's code), same process.

Workload: the eps = 8 CIFAR-10 run of De et al. used in the GDP paper's Sec. 5 (noise 9.4, 2,000
steps, q = 2^14 / 50,000).  Both sides build the PLD with dp_accounting, then turn it into mu* and
the regret; gdpnum at its default 1e-4 discretisation with a 10,000-point bisection for the regret,
ours at ``fdp.pld.default_discretization`` with the exact regret on breakpoints.  Accuracy is judged
against the certified interval for mu* from ``fdp.pld.tradeoff_bracket`` (the add curve suffices:
mu* of C(f, f^-1) equals mu* of f because f_mu is symmetric).  Run with ``make bench``.
"""

from __future__ import annotations

import time

from gdpnum.dpsgd import get_mu_and_regret_for_dpsgd

from fdp import gdp, pld
from timing import best_of

NOISE, RATE, STEPS = 9.4, 2**14 / 50_000, 2000


def main():
    print(f"workload: noise {NOISE}, q {RATE:.5f}, {STEPS} steps")
    h = pld.default_discretization(NOISE, RATE, STEPS)
    (mu_g, reg_g), t_g = best_of(lambda: get_mu_and_regret_for_dpsgd(NOISE, RATE, STEPS))
    (mu_o, reg_o), t_o = best_of(lambda: gdp.mu_and_regret_dpsgd(NOISE, RATE, STEPS))
    (mu_f, reg_f), t_f = best_of(lambda: gdp.mu_and_regret_dpsgd(NOISE, RATE, STEPS, discretization=1e-4), 2)
    t0 = time.perf_counter()
    bracket = pld.tradeoff_bracket("gaussian", NOISE, RATE, STEPS, discretization=1e-4, kappa_min=1e-10)
    lo, hi = gdp.mu_star(bracket.upper, tail=1e-10), gdp.mu_star(bracket.lower, tail=1e-10)
    t_b = time.perf_counter() - t0
    print(f"certified mu* interval (lattice bracket, {t_b:.1f} s): [{lo:.6f}, {hi:.6f}]")
    print(f"gdpnum  (1e-4):  mu {mu_g:.6f} ({mu_g - hi:+.1e} from the interval's top), regret {reg_g:.4e}, "
          f"{t_g:.3f} s")
    print(f"ours ({h:.0e}):  mu {mu_o:.6f} ({mu_o - hi:+.1e}), regret {reg_o:.4e}, {t_o:.3f} s")
    print(f"ours  (1e-4):  mu {mu_f:.6f} ({mu_f - hi:+.1e}), regret {reg_f:.4e}, {t_f:.3f} s")
    print(f"time ratio gdpnum/ours: {t_g / t_o:.2f} at our default, {t_g / t_f:.2f} both at 1e-4")


if __name__ == "__main__":
    main()
