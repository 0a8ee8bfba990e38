"""Tight mu-GDP and exact regret for DP-SGD: our certified route against gdpnum (the GDP paper's code), one process.

Workloads: the eps = 8 CIFAR-10 run of De et al. used in the GDP paper's Sec. 5 (noise 9.4, 2,000 steps,
q = 2^14 / 50,000) and three more settings (issue: certified speed).  gdpnum builds dp_accounting's
connect-the-dots PLD at 1e-4 and reads mu* and the regret (a 10,000-level grid) from it, uncertified.  Ours
(``fdp.accounting.mechanism_gdp.mu_and_regret_dpsgd``, default ``method="lattice"``): the certified lower curve of both
directions (``fdp.accounting.pld.certified_lower_curve``, symmetrised), eq. 21 and the exact regret on its
breakpoints, at the same spacing 1e-4 (goal: at least as fast as gdpnum) and at our default spacing.
Accuracy: the certified interval for mu* is [mu* of the bracket's upper curve, our certified mu*]; gdpnum's
value below the interval is optimistic.  The route before (dp_accounting's PLD read by our exact
Alg. 1, normalised) is timed too.  Then a profile of one certified run (De et al.) and its memory peak.

Before (2026-11-24, one process): at 1e-4 our dp_accounting route took 0.267 s against gdpnum's 0.155 s on
the De et al. run (ratio 0.58), and it was not certified.  Run with ``make bench``.
"""

from __future__ import annotations

from gdpnum.dpsgd import get_mu_and_regret_for_dpsgd

from fdp import Mechanism
from fdp.accounting import mechanism_gdp, pld
from fdp.curves import gdp
from timing import best_of, profile_phases

WORKLOADS = {
    "eps = 8, De et al. (9.4, 0.328, 2000)": (9.4, 2**14 / 50_000, 2000),
    "(3.0, 0.01, 5000)": (3.0, 0.01, 5000),
    "(1.5, 0.05, 400)": (1.5, 0.05, 400),
    "(0.9, 0.002, 20000)": (0.9, 0.002, 20_000),
}
PHASES = [
    ("lattice frames", "frames"),
    ("pessimistic one-step measures (2)", "pessimistic"),
    ("FFT compositions (2)", "self_convolve"),
    ("  of which the low frequencies", "_low_frequencies"),
    ("breakpoints of the curves", "breakpoints"),
    ("symmetrisation (envelope)", "symmetrise"),
    ("mu* (eq. 21)", "_mu_star"),
    ("exact regret", "_gdp_divergence"),
]


def compare(name, noise, rate, steps):
    (mu_g, reg_g), t_g = best_of(lambda: get_mu_and_regret_for_dpsgd(noise, rate, steps), 3)
    (mu_c, reg_c), t_c = best_of(lambda: mechanism_gdp.mu_and_regret_dpsgd(Mechanism("gaussian", noise, rate, steps), discretization=1e-4), 3)
    (mu_o, reg_o), t_o = best_of(lambda: mechanism_gdp.mu_and_regret_dpsgd(Mechanism("gaussian", noise, rate, steps)), 3)
    (mu_d, _), t_d = best_of(
        lambda: mechanism_gdp.mu_and_regret_dpsgd(Mechanism("gaussian", noise, rate, steps), discretization=1e-4, method="dp_accounting"), 3)
    bracket = pld.tradeoff_bracket(Mechanism("gaussian", noise, rate, steps), discretization=1e-4, level_min=1e-10)
    low = gdp.mu_star(bracket.upper, tail=1e-10)
    h = pld.default_discretization(Mechanism("gaussian", noise, rate, steps))
    print(f"{name}: certified mu* interval at 1e-4 [{low:.6f}, {mu_c:.6f}]")
    print(f"  gdpnum (1e-4)          mu {mu_g:.6f} ({mu_g - low:+.1e} from the interval's bottom), regret {reg_g:.4e}, "
          f"{t_g:.3f} s")
    print(f"  ours certified (1e-4)  mu {mu_c:.6f}, regret {reg_c:.4e}, {t_c:.3f} s: gdpnum / ours = {t_g / t_c:.2f} "
          "(goal >= 1)")
    print(f"  ours certified ({h:.0e})  mu {mu_o:.6f}, regret {reg_o:.4e}, {t_o:.3f} s: gdpnum / ours = {t_g / t_o:.2f}")
    print(f"  before: dp_accounting + exact Alg. 1 (1e-4)  mu {mu_d:.6f}, {t_d:.3f} s: gdpnum / it = {t_g / t_d:.2f}")


def main():
    for name, args in WORKLOADS.items():
        compare(name, *args)
    noise, rate, steps = WORKLOADS["eps = 8, De et al. (9.4, 0.328, 2000)"]
    profile_phases(lambda: mechanism_gdp.mu_and_regret_dpsgd(Mechanism("gaussian", noise, rate, steps), discretization=1e-4), PHASES,
                   "one certified mu* and regret (De et al., 1e-4)")


if __name__ == "__main__":
    main()
