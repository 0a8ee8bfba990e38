"""fdp.calibrate: eps of the subsampled Gaussian and its inversion."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from fdp import Mechanism, calibrate, dpsgd, risk, targets
from fdp.accounting import accountants, lattice, mechanism_gdp, pld, rtm
from fdp.curves import gdp, tradeoff
from fdp.intervals import Interval
from fdp.targets import RTMTPR, TPR, Advantage, Epsilon, Mu, ReRo


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
    target = Epsilon(4.0, 1e-5, accountant=accountant)
    noise = calibrate.solve(target, 0.3, steps=100, discretization=1e-3, rtol=1e-3).noise_multiplier
    assert accountants.epsilon(Mechanism("gaussian", noise, 0.3, 100), 1e-5, accountant, 1e-3) <= 4.0
    assert accountants.epsilon(Mechanism("gaussian", noise / 1.002, 0.3, 100), 1e-5, accountant, 1e-3) > 4.0


def test_rdp_is_looser_than_pld():
    sgm = Mechanism("gaussian", 1.0, 0.01, 1000)
    assert accountants.epsilon(sgm, 1e-5, accountant="rdp") > accountants.epsilon(sgm, 1e-5, accountant="pld")


@pytest.mark.parametrize("call, name", [
    (lambda: Epsilon(-1.0), "epsilon"), (lambda: Epsilon(1.0, delta=0.0), "delta"),
    (lambda: calibrate.solve(Epsilon(1.0), 0.0, steps=10), "sampling_rate"),
    (lambda: calibrate.solve(Epsilon(1.0), 0.5, steps=1.5), "steps"),
    (lambda: Epsilon(1.0, accountant="moments"), "accountant"),
    (lambda: calibrate.solve("epsilon", 0.5, steps=10), "target"),
    (lambda: calibrate.solve(Epsilon(1.0), 0.5), "not both and not neither"),
    (lambda: calibrate.solve(Epsilon(1.0), 0.5, steps=10, noise_multiplier=1.0), "not both and not neither"),
    (lambda: calibrate.solve(Epsilon(1.0), 0.5, steps=10, max_steps=5), "max_steps"),
])
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


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

    target = Advantage(0.1)
    adv = calibrate.solve(target, 0.05, steps=100, discretization=1e-3)
    assert adv.achieved_lower <= adv.achieved <= 0.1
    assert get_advantage_for_dpsgd(adv.noise_multiplier, 0.05, 100) == pytest.approx(0.1, abs=1e-3)
    assert target.upper(dpsgd(adv.noise_multiplier / (1 + adv.rtol), 0.05, 100), 1e-3) > 0.1
    # the exact smallest noise lies in (noise_lower, noise]: the lower bound on the risk at noise_lower misses
    assert adv.noise_lower < adv.noise_multiplier
    assert target.lower(dpsgd(adv.noise_lower, 0.05, 100), 1e-3) > 0.1
    target = TPR(0.5, fpr=0.01)
    tpr = calibrate.solve(target, 0.05, steps=100, discretization=1e-3)
    assert tpr.achieved_lower <= tpr.achieved <= 0.5
    assert 1.0 - get_beta_for_dpsgd(tpr.noise_multiplier, 0.05, 100, alpha=0.01) == pytest.approx(0.5, abs=1e-3)
    assert target.upper(dpsgd(tpr.noise_multiplier / (1 + tpr.rtol), 0.05, 100), 1e-3) > 0.5


def test_noise_for_mu_and_rero_round_trip():
    """Calibrate, then report: the certified mu* and ReRo bound at the noise found meet their targets, tightly."""

    c = calibrate.solve(Mu(1.0), 0.01, steps=1000, discretization=1e-3, rtol=1e-3)
    mu = mechanism_gdp.mu_and_regret_dpsgd(Mechanism("gaussian", c.noise_multiplier, 0.01, 1000), discretization=1e-3).mu
    assert mu == c.achieved and 1.0 - 5e-3 <= mu <= 1.0 and c.achieved_lower <= mu
    c = calibrate.solve(ReRo(0.05, kappa=0.01), 0.01, steps=1000, discretization=1e-3)
    low, up = pld.tradeoff_bracket(Mechanism("gaussian", c.noise_multiplier, 0.01, 1000), discretization=1e-3, level_min=0.01).gamma(0.01)
    assert up <= 0.05 + 1e-9 and 0.05 * (1 - 5e-3) <= c.achieved <= 0.05 and low <= c.achieved
    # full batches: mu is sqrt(steps) / sigma exactly, the certified curve lies just above it
    c = calibrate.solve(Mu(2.0), 1.0, steps=16, discretization=1e-3, rtol=1e-4)
    assert 2.0 <= c.noise_multiplier <= 2.0 * (1 + 1e-3)


def test_noise_for_rtm_tpr_round_trip():
    """The RTM target: the noise found meets the TPR bound of the relaxed-threat-model adversary on the pessimistic
    lattice and the noise 1 / (1 + rtol) smaller misses it; the optimistic lattice gives a lower bound.  The RTM
    adversary is a membership test, so it needs less noise than the DP bound for the same target, and a release of
    larger dimension needs less still."""

    target = RTMTPR(0.05, fpr=0.01)
    c = calibrate.solve(target, 0.05, steps=100, discretization=1e-3)
    assert c.achieved_lower <= c.achieved <= 0.05 and c.achieved >= 0.05 * (1 - 1e-2)
    assert target.lower(dpsgd(c.noise_lower, 0.05, 100), 1e-3) > 0.05
    assert target.upper(dpsgd(c.noise_multiplier / (1 + c.rtol), 0.05, 100), 1e-3) > 0.05
    bracket = rtm.tensor_bracket(Mechanism("gaussian", c.noise_multiplier, 0.05, 100), discretization=1e-3)
    assert 1.0 - tradeoff.symmetrise(bracket.lower)(0.01) == pytest.approx(c.achieved, abs=1e-12)
    dp = calibrate.solve(TPR(0.05, fpr=0.01), 0.05, steps=100, discretization=1e-3)
    assert c.noise_multiplier < dp.noise_multiplier
    wide = calibrate.solve(RTMTPR(0.05, fpr=0.01, dimension=10), 0.05, steps=100, discretization=1e-3)
    assert wide.noise_multiplier < c.noise_multiplier


def test_noise_for_epsilon_brackets_the_exact_smallest_noise():
    """The epsilon target: the PLD accountant's pessimistic eps meets the target at the noise found, its optimistic
    eps (a dominated pair) lies below it, and at noise_lower the optimistic eps still misses, so the exact smallest
    noise lies in (noise_lower, noise]; full batches against the closed form of the Gaussian mechanism."""
    target = Epsilon(2.0, delta=1e-5)
    c = calibrate.solve(target, 0.05, steps=100, discretization=1e-3)
    assert c.achieved_lower <= c.achieved <= 2.0 and c.noise_lower < c.noise_multiplier
    assert target.lower(dpsgd(c.noise_lower, 0.05, 100), 1e-3) > 2.0
    full = calibrate.solve(Epsilon(1.0, delta=1e-5), 1.0, steps=4, discretization=1e-3)
    exact = 2.0 / gdp.mu_from_eps_delta(1.0, 1e-5)  # 4 full-batch steps: sqrt(4) / sigma-GDP
    assert full.noise_lower < exact <= full.noise_multiplier * (1 + 1e-9)


def test_the_rdp_accountant_is_read_without_a_cap_or_a_lower_bound():
    """Epsilon(accountant="rdp") calibrates to what a TF Privacy log prints: the RDP accountant's epsilon, also for
    full batches (where the PLD target reads the exact closed form and so needs less noise)."""
    rdp = calibrate.solve(Epsilon(2.0, accountant="rdp"), 1.0, steps=100, discretization=1e-4, rtol=1e-4)
    pld_ = calibrate.solve(Epsilon(2.0), 1.0, steps=100, rtol=1e-4)
    assert rdp.achieved == accountants.epsilon(dpsgd(rdp.noise_multiplier, 1.0, 100), 1e-5, "rdp", 1e-4) <= 2.0
    assert rdp.achieved_lower is None and rdp.noise_lower is None
    assert pld_.noise_multiplier < rdp.noise_multiplier
    assert rdp.to_dict()["accountant"] == "rdp" and "accountant" not in pld_.to_dict()


def test_bound_below_false_skips_the_optimistic_side():
    c = calibrate.solve(Advantage(0.1), 0.05, steps=100, discretization=1e-3, bound_below=False)
    full = calibrate.solve(Advantage(0.1), 0.05, steps=100, discretization=1e-3)
    assert c.noise_multiplier == full.noise_multiplier and c.achieved == full.achieved
    assert c.achieved_lower is None and c.noise_lower is None and c.evaluations < full.evaluations


def test_a_lower_side_that_does_not_fit_leaves_the_answer_and_drops_the_lower_bound(monkeypatch):
    """The optimistic side is ten times finer for epsilon and the RTM and can exceed the lattice limits after the
    search has found its noise: the answer stands, with achieved_lower and noise_lower None."""
    from fdp.validation import ResourceLimitError

    def too_big(*args, **kwargs):
        raise ResourceLimitError("discretization: too many points")

    monkeypatch.setattr(Advantage, "optimistic", too_big)
    c = calibrate.solve(Advantage(0.1), 0.05, steps=100, discretization=1e-3)
    assert c.achieved <= 0.1 and c.achieved_lower is None and c.noise_lower is None
    s = calibrate.solve(Advantage(0.1), 0.05, noise_multiplier=2.0, discretization=1e-3)
    assert s.achieved <= 0.1 and s.achieved_lower is None


def test_solving_for_the_steps_finds_the_last_step_that_meets_the_target():
    """The dual search: the certified risk of the steps found meets the target and one more step misses it; with full
    batches mu* = sqrt(T) / sigma, so mu* <= 1.01 at sigma 2 allows exactly 4 steps; the noise solved for at the steps
    found is at most the given noise."""
    target = Advantage(0.1)
    c = calibrate.solve(target, 0.05, noise_multiplier=2.0, discretization=1e-3)
    assert c.achieved_lower <= c.achieved <= 0.1 and c.rtol == 0.0 and c.noise_multiplier == 2.0
    assert target.upper(dpsgd(2.0, 0.05, c.steps + 1), 1e-3) > 0.1
    assert calibrate.solve(target, 0.05, steps=c.steps, discretization=1e-3).noise_multiplier <= 2.0
    assert calibrate.solve(Mu(1.01), 1.0, noise_multiplier=2.0, discretization=1e-3).steps == 4
    r = calibrate.solve(RTMTPR(0.05, fpr=0.01), 0.05, noise_multiplier=2.0, discretization=1e-3)
    assert r.steps > c.steps and r.achieved <= 0.05  # the RTM adversary is weaker: more steps for a like target
    with pytest.raises(ValueError, match="not met even by one step"):
        calibrate.solve(Advantage(0.01), 0.5, noise_multiplier=0.2, discretization=1e-2)
    with pytest.raises(ValueError, match="the most the search tries"):
        calibrate.solve(Advantage(0.5), 0.01, noise_multiplier=50.0, discretization=1e-2, max_steps=64)
    with pytest.raises(ValueError, match="noise_multiplier"):
        calibrate.solve(target, 0.05, noise_multiplier=0.0)


@pytest.mark.parametrize("make, name", [
    (lambda: RTMTPR(0.05, fpr=None), "fpr"),
    (lambda: RTMTPR(0.05, fpr=0.01, dimension=0), "dimension"),
    (lambda: TPR(0.01, fpr=0.1), "tpr must exceed fpr"),
    (lambda: ReRo(0.05, kappa=0.1), "rero must exceed kappa"),
    (lambda: TPR(0.5, fpr=float("nan")), "fpr"),
    (lambda: Advantage(1.5), "advantage"),
    (lambda: Mu(-1.0), "mu"),
    (lambda: calibrate.solve(Advantage(1e-9), 0.05, steps=10, discretization=1e-2), "no noise multiplier"),
])
def test_bad_targets_are_refused(make, name):
    with pytest.raises(ValueError, match=name):
        make()


@pytest.mark.parametrize("target, value, level, message", [
    ("advantage", 2.0, None, "advantage must lie in (0, 1), got 2.0"),
    ("tpr", 0.05, 0.1, "tpr must exceed fpr"),
    ("rero", 0.05, 0.1, "rero must exceed kappa"),
    ("mu", 1.0, 0.1, "mu takes no level"),
    ("tpr", 0.5, None, "fpr is required with tpr"),
    ("eps", 1.0, None, "target must be one of"),
])
def test_a_named_target_is_refused_naming_where_it_came_from(target, value, level, message):
    with pytest.raises(ValueError) as err:
        targets.named(target, value, level, where="calibration_targets[2]")
    assert str(err.value).startswith("calibration_targets[2]: ") and message in str(err.value)
    assert targets.named("tpr", 0.2, 0.1) == TPR(0.2, fpr=0.1)  # a good target passes
    assert targets.named("rtm_tpr", 0.2, 0.1, dimension=3) == RTMTPR(0.2, fpr=0.1, dimension=3)
    assert targets.named("epsilon", 2.0, delta=1e-6) == Epsilon(2.0, delta=1e-6)


def test_a_calibration_writes_its_target_as_before():
    """to_dict(): the target's name, its value and its settings at the end (the command line's JSON)."""
    c = calibrate.solve(TPR(0.5, fpr=0.01), 0.05, steps=100, discretization=1e-3)
    d = c.to_dict()
    assert d["target"] == "tpr" and d["value"] == 0.5 and d["fpr"] == 0.01 and list(d)[-1] == "fpr"
    assert list(d)[:3] == ["noise_multiplier", "target", "value"]


# --- from test_edges_surfaces, round 2 and later break reviews (the report, calibrate and gdp surfaces) ------


def test_library_and_cli_refuse_the_same_rtol():
    for call in (lambda: calibrate.solve(Epsilon(1.0), 1.0, steps=1, rtol=1e-15),
                 lambda: calibrate.solve(Mu(1.0), 1.0, steps=1, rtol=1e-15)):
        with pytest.raises(ValueError, match="rtol must be at least 1e-12"):
            call()


def test_calibrate_refuses_arguments_that_do_not_apply():
    with pytest.raises(TypeError, match="fpr"):  # a typed target has no field for it
        Mu(1.0, fpr=0.1)
    with pytest.raises(ValueError, match="mu takes no level"):
        targets.named("mu", 1.0, 0.1)


def test_a_tiny_advantage_target_is_calibrated_on_a_lattice_that_resolves_it():
    """At spacing 1e-5 the advantage reached read [0, 6e-6] and the noise came out 1,519,686, while a finer
    lattice certifies noise 7,000 (the report's own reading); the automatic spacing now refines while the interval
    is wider than half its upper end."""
    c = calibrate.solve(Advantage(6.027887664106237e-06), 0.001719257047369526, steps=2203)
    assert c.noise_multiplier < 7000 and c.achieved <= 6.027887664106237e-06
    assert c.achieved_lower is not None and (c.achieved - c.achieved_lower) / c.achieved <= calibrate.REFINE_RELATIVE
    reached = risk.report(dpsgd(c.noise_multiplier, 0.001719257047369526, 2203), discretization=c.discretization)
    assert reached.advantage <= 6.027887664106237e-06


# --- from test_edges_round3, round 3 (subnormal levels, RTM curves near alpha = 1, calibration caps) ---------


@pytest.mark.usefixtures("mpmath_50")
def test_a_calibration_without_a_certified_lower_end_starts_at_0():
    """Interval(0.99999054, 0.99999054) at noise 16.2825 missed the true eps there (at most 0.99998977 by integer-order
    RDP): the RDP fallback has no certified lower end, and the interval now says so."""
    res = calibrate.solve(Epsilon(1.0, delta=1e-300), 0.1, steps=10)
    assert res.achieved_lower is None and res.achieved_interval == Interval(0.0, res.achieved)
    assert 0.0 < res.achieved <= 1.0


@pytest.mark.usefixtures("mpmath_50")
def test_subsampled_calibration_at_a_tiny_fpr_is_at_most_the_full_batchs():
    """Rate 0.5, 10 steps, TPR 1e-19 at FPR 1e-20 returned 142.3 where 12.70 certifies it (the full batch's closed
    form is an upper bound for every sampling rate)."""
    full = calibrate.solve(TPR(1e-19, fpr=1e-20), 1.0, steps=2, rtol=1e-2)
    sub = calibrate.solve(TPR(1e-19, fpr=1e-20), 0.5, steps=2, rtol=1e-2)
    assert sub.noise_multiplier <= full.noise_multiplier * (1 + 1e-12) and sub.achieved <= 1e-19


@pytest.mark.usefixtures("mpmath_50")
def test_an_epsilon_evaluation_keeps_one_step_under_its_point_budget():
    """At noise 0.35, rate 1e-6 and spacing 1e-5 one step had 1.9 million points (16 s in dp_accounting's PLD); the
    calibration's spacing is coarsened to EPSILON_MAX_POINTS, and says so."""
    from fdp.accounting.privacy_loss import dpsgd

    h = Epsilon(1.0).default_discretization(dpsgd(0.35, 1e-6, 100))
    assert lattice.lattice_points(dpsgd(0.35, 1e-6, 100).one_step, h) <= targets.EPSILON_MAX_POINTS * 1.01
    assert Epsilon(1.0).default_discretization(dpsgd(1.0, 0.01, 100)) == Mu(1.0).default_discretization(dpsgd(1.0, 0.01, 100))


# --- the break review of the typed targets (2026-11-28) ---------------------------------------------------------


@pytest.mark.parametrize("target, steps", [(Mu(2.0**-15), 1), (Mu(2.0**-3), 4), (Mu(2.0**20), 16)])
def test_the_noise_found_is_the_noise_evaluated_at_a_bracket_end(target, steps):
    """The search returned exp(log(hi)), 2e-15 below the end it had evaluated: Mu(2^-15) at one full-batch step
    came back 32767.999999999985, whose exact mu 1 / noise is above the target."""
    c = calibrate.solve(target, 1.0, steps=steps)
    assert c.achieved <= target.value and target.met_by(dpsgd(c.noise_multiplier, 1.0, steps))
    assert Fraction(steps) <= (Fraction(target.value) * Fraction(c.noise_multiplier)) ** 2  # exact: mu <= target


def test_a_risk_read_at_a_round_noise_calibrates_back_to_that_noise():
    v = Advantage(0.5).upper(dpsgd(8.0, 1.0, 1))
    c = calibrate.solve(Advantage(v), 1.0, steps=1)
    assert c.noise_multiplier == 8.0 and Advantage(v).met_by(dpsgd(c.noise_multiplier, 1.0, 1))


@pytest.mark.parametrize("delta", [1e-300, 1e-100, 1e-15])
def test_the_full_batch_epsilon_interval_holds_the_exact_epsilon(delta):
    """Epsilon.lower moved the float root down one ulp; the root can lie 30 ulps above the exact epsilon at delta
    1e-300 (lower 3.6937216583197072 against 3.69372165831959679), and achieved_lower passed achieved."""
    mu = 0.1  # noise 10, one step
    with mpmath.workdps(150):  # Dong, Roth, Su Cor. 2.13, in logs, bracketed
        def log_excess(e):
            return mpmath.log(mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)) - mpmath.log(delta)

        exact = mpmath.findroot(log_excess, (mpmath.mpf("0.5"), mpmath.mpf(10)), solver="illinois", tol=mpmath.mpf(10) ** -60)
    target = Epsilon(1.0, delta=delta)
    assert target.lower(dpsgd(10.0, 1.0, 1)) <= exact <= target.upper(dpsgd(10.0, 1.0, 1))
    c = calibrate.solve(Epsilon(8.0, delta=delta), 1.0, steps=1)
    assert c.achieved_lower <= c.achieved and c.achieved_interval.contains(c.achieved)


def test_the_lower_end_of_mu_star_is_not_raised_by_the_float_check():
    """Mu.lower read mu_star, which raises its answer until f_mu lies below the breakpoints in floats (by up to 1e-8
    near alpha = 1e-10): it returned 1.27e-8 whatever the mechanism, above the exact 5e-9 at noise 1e8, rate 0.5."""
    for noise, rate, exact in ((1e8, 0.5, 5.0e-9), (1e8, 1e-9, 1e-17), (1e6, 0.01, 1.0e-8)):
        assert Mu(1.0).lower(dpsgd(noise, rate, 1), 1e-2) <= exact


def test_a_subnormal_fpr_on_a_subsampled_run_reads_the_closed_form():
    """The lattice cannot be read at FPR 5e-324 (scipy's root finder failed with its own message): the closed form of the
    full batch is still an upper bound."""
    m = dpsgd(1.0, 0.5, 1)
    assert TPR(0.5, fpr=5e-324).upper(m, 1e-2) == TPR(0.5, fpr=5e-324).closed_form(m)


def test_the_search_bar_ends_on_the_noise_found_not_the_last_noise_tried():
    """Issue 53: the bar's last line showed the last noise probed (1.41433, epsilon 1.00042: a miss) while the search
    had found 1.41504."""
    from fdp.calibrate import _Probes
    from fdp.targets import Mu

    probes = _Probes(Mu(1.0), 0.5, 3, 1e-3, progress=True)
    found, missed = probes.upper(4.0), probes.upper(0.5)
    assert missed > 1.0 >= found and "noise 0.5" in probes.bar.postfix
    probes.close(4.0)
    assert probes.bar.postfix.startswith("found noise 4: mu ") and f"{found:.6g}" in probes.bar.postfix


@pytest.mark.parametrize("name", sorted(targets.TARGETS))
def test_every_target_describes_itself_in_words_and_symbols(name):
    """Issue 51: the CLI and the book described a target twice (presentation's words, the risk report's symbols)."""
    aim = targets.named(name, 0.05, 1e-3 if name in ("tpr", "rero", "rtm_tpr") else None, delta=1e-6, dimension=3)
    words, symbols = aim.describe(), aim.describe(symbols=True)
    assert words and "{" not in words and "0.05" in symbols and "{" not in symbols
    assert ("1e-06" in words) == (name == "epsilon") and ("d = 3" in symbols) == (name == "rtm_tpr")
    assert targets.Epsilon(1.0, accountant="rdp").describe().endswith("(RDP accountant)")
