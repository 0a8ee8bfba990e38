"""fdp.calibrate: eps of the subsampled Gaussian and its inversion."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from fdp import Mechanism, calibrate
from fdp.accounting import accountants, mechanism_gdp
from fdp.curves import gdp, tradeoff


def gaussian_delta(eps, mu):
    """Privacy profile of mu-GDP (Dong, Roth, Su Cor. 2.13), an independent closed form."""
    return norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def test_full_batch_matches_gdp_closed_form():
    noise, steps, delta = 2.0, 4, 1e-5
    eps = accountants.epsilon(Mechanism("gaussian", noise, 1.0, steps), delta)
    mu = np.sqrt(steps) / noise
    assert gaussian_delta(eps, mu) == pytest.approx(delta, rel=1e-2)
    assert gaussian_delta(eps, mu) <= delta * (1 + 1e-9) + 1e-12  # pessimistic: eps is an upper bound


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
def test_inverse(accountant):
    noise = calibrate.noise_multiplier_for(4.0, 1e-5, 0.3, 100, accountant=accountant, discretization=1e-3, rtol=1e-3)
    assert accountants.epsilon(Mechanism("gaussian", noise, 0.3, 100), 1e-5, accountant, 1e-3) <= 4.0
    assert accountants.epsilon(Mechanism("gaussian", noise / 1.002, 0.3, 100), 1e-5, accountant, 1e-3) > 4.0


def test_rdp_is_looser_than_pld():
    sgm = Mechanism("gaussian", 1.0, 0.01, 1000)
    assert accountants.epsilon(sgm, 1e-5, accountant="rdp") > accountants.epsilon(sgm, 1e-5, accountant="pld")


@pytest.mark.parametrize(
    "kwargs, name",
    [(dict(epsilon=-1.0), "epsilon"), (dict(delta=0.0), "delta"), (dict(sampling_rate=0.0), "sampling_rate"), (dict(steps=1.5), "steps"),
     (dict(accountant="moments"), "accountant")],
)
def test_bad_input(kwargs, name):
    args = dict(epsilon=1.0, delta=1e-5, sampling_rate=0.5, steps=10)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        calibrate.noise_multiplier_for(**args)


@settings(max_examples=200, deadline=None)
@given(root=st.floats(-3.0, 3.0), slope=st.floats(0.05, 20.0), cubic=st.floats(0.0, 5.0),
       width=st.sampled_from([1e-2, 1e-3, 1e-5]))
def test_bracket_search_keeps_the_bisection_guarantee(root, slope, cubic, width):
    """For any decreasing g with a root in (-4, 4): g(ln result) <= 0 < g(ln result - width), in few evaluations."""
    seen = {}

    def g(x):
        seen[x] = slope * (root - x) + cubic * (root - x) ** 3
        return seen[x]

    result = calibrate._shrink_bracket(g, -4.0, 4.0, width)
    # the guarantee is about the points evaluated (the calibration evaluates eps at exactly the noise it returns)
    b = next(x for x in seen if math.exp(x) == result)
    assert seen[b] <= 0.0
    assert any(value > 0.0 and b - width <= x < b for x, value in seen.items())
    assert len(seen) - 2 <= 2 * math.ceil(math.log2(8.0 / width))  # never much worse than bisection


def test_bracket_search_is_fast_on_a_nearly_linear_function():
    # eps(noise) is close to a power law: log eps is nearly linear in log noise
    calls = []

    def g(x):
        calls.append(x)
        return -1.3 * (x - 0.7) + 0.01 * (x - 0.7) ** 2

    calibrate._shrink_bracket(g, 0.0, 1.5, math.log1p(1e-3))
    assert len(calls) <= 7  # bisection needs 2 + ceil(log2(1.5 / 1e-3)) = 13


# --- calibration to risk targets ---------------------------------------------------------------------


def test_noise_for_advantage_and_tpr_against_riskcal():
    """riskcal (Kulynych et al.) reads the same risks from dp_accounting's PLD: at our noise its advantage and its
    TPR at 1 % FPR meet the targets (within its tolerance 1e-3), and our noise is the smallest that meets them under
    the certified curve (the noise 1 / (1 + rtol) smaller misses).  The exact risk lies in [achieved_lower, achieved]."""
    from riskcal.calibration.dpsgd import get_advantage_for_dpsgd, get_beta_for_dpsgd

    adv = calibrate.noise_for_risk("advantage", 0.1, 0.05, 100, discretization=1e-3)
    assert adv.achieved_lower <= adv.achieved <= 0.1
    assert get_advantage_for_dpsgd(adv.noise_multiplier, 0.05, 100) == pytest.approx(0.1, abs=1e-3)
    assert calibrate._risk("advantage", adv.noise_multiplier / (1 + adv.rtol), 0.05, 100, 1e-3, None, None, 1) > 0.1
    # the exact smallest noise lies in (noise_lower, noise]: the lower bound on the risk at noise_lower misses
    assert adv.noise_lower < adv.noise_multiplier
    assert calibrate._risk_lower("advantage", adv.noise_lower, 0.05, 100, 1e-3, None, 1) > 0.1
    tpr = calibrate.noise_for_risk("tpr", 0.5, 0.05, 100, fpr=0.01, discretization=1e-3)
    assert tpr.achieved_lower <= tpr.achieved <= 0.5
    assert 1.0 - get_beta_for_dpsgd(tpr.noise_multiplier, 0.05, 100, alpha=0.01) == pytest.approx(0.5, abs=1e-3)
    assert calibrate._risk("tpr", tpr.noise_multiplier / (1 + tpr.rtol), 0.05, 100, 1e-3, None, 0.01, 1) > 0.5


def test_noise_for_mu_and_rero_round_trip():
    """Calibrate, then report: the certified mu* and ReRo bound at the noise found meet their targets, tightly."""
    from fdp.accounting import pld

    c = calibrate.noise_for_risk("mu", 1.0, 0.01, 1000, discretization=1e-3, rtol=1e-3)
    mu = mechanism_gdp.mu_and_regret_dpsgd(Mechanism("gaussian", c.noise_multiplier, 0.01, 1000), discretization=1e-3).mu
    assert mu == c.achieved and 1.0 - 5e-3 <= mu <= 1.0 and c.achieved_lower <= mu
    c = calibrate.noise_for_risk("rero", 0.05, 0.01, 1000, kappa=0.01, discretization=1e-3)
    low, up = pld.tradeoff_bracket(Mechanism("gaussian", c.noise_multiplier, 0.01, 1000), discretization=1e-3, level_min=0.01).gamma(0.01)
    assert up <= 0.05 + 1e-9 and 0.05 * (1 - 5e-3) <= c.achieved <= 0.05 and low <= c.achieved
    # full batches: mu is sqrt(steps) / sigma exactly, the certified curve lies just above it
    c = calibrate.noise_for_risk("mu", 2.0, 1.0, 16, discretization=1e-3, rtol=1e-4)
    assert 2.0 <= c.noise_multiplier <= 2.0 * (1 + 1e-3)


def test_noise_for_rtm_tpr_round_trip():
    """The RTM target: the noise found meets the TPR bound of the relaxed-threat-model adversary on the pessimistic
    lattice and the noise 1 / (1 + rtol) smaller misses it; the optimistic lattice gives a lower bound.  The RTM
    adversary is a membership test, so it needs less noise than the DP bound for the same target, and a release of
    larger dimension needs less still."""
    from fdp.accounting import rtm

    c = calibrate.noise_for_risk("rtm_tpr", 0.05, 0.05, 100, fpr=0.01, discretization=1e-3)
    assert c.achieved_lower <= c.achieved <= 0.05 and c.achieved >= 0.05 * (1 - 1e-2)
    assert calibrate._risk_lower("rtm_tpr", c.noise_lower, 0.05, 100, 1e-3, 0.01, 1) > 0.05
    assert calibrate._risk("rtm_tpr", c.noise_multiplier / (1 + c.rtol), 0.05, 100, 1e-3, None, 0.01, 1) > 0.05
    bracket = rtm.tensor_bracket(Mechanism("gaussian", c.noise_multiplier, 0.05, 100), discretization=1e-3)
    assert 1.0 - tradeoff.symmetrise(bracket.lower)(0.01) == pytest.approx(c.achieved, abs=1e-12)
    dp = calibrate.noise_for_risk("tpr", 0.05, 0.05, 100, fpr=0.01, discretization=1e-3)
    assert c.noise_multiplier < dp.noise_multiplier
    wide = calibrate.noise_for_risk("rtm_tpr", 0.05, 0.05, 100, fpr=0.01, discretization=1e-3, dimension=10)
    assert wide.noise_multiplier < c.noise_multiplier


def test_noise_for_epsilon_brackets_the_exact_smallest_noise():
    """The epsilon target: the PLD accountant's pessimistic eps meets the target at the noise found, its optimistic
    eps (a dominated pair) lies below it, and at noise_lower the optimistic eps still misses, so the exact smallest
    noise lies in (noise_lower, noise]; full batches against the closed form of the Gaussian mechanism."""
    c = calibrate.noise_for_risk("epsilon", 2.0, 0.05, 100, delta=1e-5, discretization=1e-3)
    assert c.achieved_lower <= c.achieved <= 2.0 and c.noise_lower < c.noise_multiplier
    assert calibrate._risk_lower("epsilon", c.noise_lower, 0.05, 100, 1e-3, None, 1, 1e-5) > 2.0
    full = calibrate.noise_for_risk("epsilon", 1.0, 1.0, 4, delta=1e-5, discretization=1e-3)
    exact = 2.0 / gdp.mu_from_eps_delta(1.0, 1e-5)  # 4 full-batch steps: sqrt(4) / sigma-GDP
    assert full.noise_lower < exact <= full.noise_multiplier * (1 + 1e-9)


def test_a_lower_side_that_does_not_fit_leaves_the_answer_and_drops_the_lower_bound(monkeypatch):
    """The optimistic side is ten times finer for epsilon and the RTM and can exceed the lattice limits after the
    search has found its noise: the answer stands, with achieved_lower and noise_lower None."""
    from fdp.validation import ResourceLimitError

    def too_big(*args, **kwargs):
        raise ResourceLimitError("discretization: too many points")

    monkeypatch.setattr(calibrate, "_risk_lower", too_big)
    c = calibrate.noise_for_risk("advantage", 0.1, 0.05, 100, discretization=1e-3)
    assert c.achieved <= 0.1 and c.achieved_lower is None and c.noise_lower is None
    s = calibrate.steps_for_risk("advantage", 0.1, 2.0, 0.05, discretization=1e-3)
    assert s.achieved <= 0.1 and s.achieved_lower is None


def test_steps_for_risk_is_the_last_step_that_meets_the_target():
    """The dual search: the certified risk of the steps found meets the target and one more step misses it; with full
    batches mu* = sqrt(T) / sigma, so mu* <= 1.01 at sigma 2 allows exactly 4 steps; noise_for_risk at the steps found
    asks for at most the given noise."""
    c = calibrate.steps_for_risk("advantage", 0.1, 2.0, 0.05, discretization=1e-3)
    assert c.achieved_lower <= c.achieved <= 0.1 and c.rtol == 0.0 and c.noise_multiplier == 2.0
    assert calibrate._risk("advantage", 2.0, 0.05, c.steps + 1, 1e-3, None, None, 1) > 0.1
    assert calibrate.noise_for_risk("advantage", 0.1, 0.05, c.steps, discretization=1e-3).noise_multiplier <= 2.0
    assert calibrate.steps_for_risk("mu", 1.01, 2.0, 1.0, discretization=1e-3).steps == 4
    r = calibrate.steps_for_risk("rtm_tpr", 0.05, 2.0, 0.05, fpr=0.01, discretization=1e-3)
    assert r.steps > c.steps and r.achieved <= 0.05  # the RTM adversary is weaker: more steps for a like target
    with pytest.raises(ValueError, match="not met even by one step"):
        calibrate.steps_for_risk("advantage", 0.01, 0.2, 0.5, discretization=1e-2)
    with pytest.raises(ValueError, match="the most the search tries"):
        calibrate.steps_for_risk("advantage", 0.5, 50.0, 0.01, discretization=1e-2, max_steps=64)
    with pytest.raises(ValueError, match="noise_multiplier"):
        calibrate.steps_for_risk("advantage", 0.1, 0.0, 0.05)


@pytest.mark.parametrize("kwargs, name", [
    (dict(target="rtm_tpr", value=0.05), "fpr"),
    (dict(target="rtm_tpr", value=0.05, fpr=0.01, dimension=0), "dimension"),
    (dict(target="tpr", value=0.01, fpr=0.1), "tpr must exceed fpr"),
    (dict(target="rero", value=0.05, kappa=0.1), "rero must exceed kappa"),
    (dict(target="tpr", value=0.5), "fpr"),
    (dict(target="advantage", value=1.5), "advantage"),
    (dict(target="mu", value=-1.0), "mu"),
    (dict(target="risk", value=0.1), "target"),
    (dict(target="advantage", value=1e-9), "no noise multiplier"),
])
def test_noise_for_risk_rejects_bad_targets(kwargs, name):
    with pytest.raises(ValueError, match=name):
        calibrate.noise_for_risk(sampling_rate=0.05, steps=10, discretization=1e-2, **kwargs)


@pytest.mark.parametrize("target, value, level, message", [
    ("advantage", 2.0, None, "advantage must lie in (0, 1), got 2.0"),
    ("tpr", 0.05, 0.1, "tpr must exceed fpr"),
    ("rero", 0.05, 0.1, "rero must exceed kappa"),
    ("mu", 1.0, 0.1, "fpr applies to the targets 'tpr' and 'rtm_tpr'"),
    ("eps", 1.0, None, "target must be one of"),
])
def test_a_risk_target_is_refused_before_any_work_naming_where_it_came_from(target, value, level, message):
    with pytest.raises(ValueError) as err:
        calibrate.check_risk_target(target, value, level, name="calibration_targets[2]")
    assert str(err.value).startswith("calibration_targets[2]: ") and message in str(err.value)
    calibrate.check_risk_target("tpr", 0.2, 0.1)  # a good target passes
    assert calibrate.level_keyword("rtm_tpr") == "fpr" and calibrate.level_keyword("rero") == "kappa"
