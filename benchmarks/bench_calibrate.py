"""Risk calibration and the risk report against riskcal (Kulynych et al.), one process (issue: risk report).

riskcal calibrates DP-SGD noise to a membership-inference advantage or to a TPR at an FPR by bisection on its
own PLD reading; ``fdp.calibrate.solve`` reads the same risks from our certified lower curve (an upper
bound on the risk, never on the unsafe side) by false position in log noise.  For each case: both noise
multipliers, their times and the ratio (goal: ours at least 10x faster), and riskcal's own risk at our noise
(it should meet the target within riskcal's tolerance 1e-3).  Then the time of a full ``fdp.risk.report`` of
the eps = 8 De et al. run (goal: under 1 s at default accuracy).  riskcal's TPR calibration takes minutes per
case on 2 cores; the whole script about 10 minutes.  Run with ``make bench``.
"""

from __future__ import annotations

import time
import warnings

from fdp import calibrate, risk, targets
from fdp.accounting.privacy_loss import dpsgd
from timing import best_of

# (target, value, fpr, sampling rate, steps): the two measured cases first
CASES = [
    ("tpr", 0.5, 0.01, 0.01, 1000),
    ("advantage", 0.1, None, 0.01, 1000),
    ("advantage", 0.1, None, 0.05, 100),
    ("advantage", 0.3, None, 0.02, 500),
    ("tpr", 0.5, 0.01, 0.05, 100),
]


def riskcal_noise(target, value, fpr, rate, steps):
    from riskcal.calibration.dpsgd import find_noise_multiplier_for_advantage, find_noise_multiplier_for_err_rates

    if target == "advantage":
        return find_noise_multiplier_for_advantage(value, rate, steps)
    return find_noise_multiplier_for_err_rates(alpha=fpr, beta=1.0 - value, sample_rate=rate, num_steps=steps)


def riskcal_risk(target, noise, fpr, rate, steps):
    from riskcal.calibration.dpsgd import get_advantage_for_dpsgd, get_beta_for_dpsgd

    if target == "advantage":
        return get_advantage_for_dpsgd(noise, rate, steps)
    return 1.0 - float(get_beta_for_dpsgd(noise, rate, steps, alpha=fpr))


def main():
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    for target, value, fpr, rate, steps in CASES:
        what = f"{target} {value:g}" + (f" at FPR {fpr:g}" if fpr else "") + f", rate {rate:g}, {steps} steps"
        aim = targets.named(target, value, fpr)
        ours, t_ours = best_of(lambda: calibrate.solve(aim, rate, steps=steps), 1)
        t0 = time.perf_counter()
        theirs = riskcal_noise(target, value, fpr, rate, steps)
        t_theirs = time.perf_counter() - t0
        check = riskcal_risk(target, ours.noise_multiplier, fpr, rate, steps)
        print(f"{what}: ours sigma {ours.noise_multiplier:.5f} (risk in [{ours.achieved_lower:.6f}, "
              f"{ours.achieved:.6f}]) in {t_ours:.2f} s; riskcal sigma {theirs:.5f} in {t_theirs:.1f} s; "
              f"ratio {t_theirs / t_ours:.0f}x (goal >= 10); riskcal's risk at our sigma {check:.6f}")
    run = dpsgd(noise_multiplier=9.4, sampling_rate=2**14 / 50_000, steps=2000)
    _, t_report = best_of(lambda: risk.report(run), 3)
    print(f"full report of the eps = 8 De et al. run: {t_report:.2f} s (goal < 1 s)")


if __name__ == "__main__":
    main()
