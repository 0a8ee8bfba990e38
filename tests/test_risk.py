"""fdp.risk: one entry point for the ReRo bound of a mechanism, every method behind it, one result type."""

from __future__ import annotations

import math
import warnings

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from fdp import calibrate, formatting, presentation, risk, targets
from fdp.accounting import accountants, edgeworth, mechanism_gdp, montecarlo, pld, rtm
from fdp.accounting.privacy_loss import Mechanism, RandomizedResponse, dpsgd
from fdp.curves import conversions, gdp, mia, rero, tradeoff
from fdp.intervals import Interval
from references import max_test, mu_at, one_step_add_tpr

KAPPA = np.array([1e-3, 0.05])
SGM = dpsgd(noise_multiplier=1.2, sampling_rate=0.2, steps=20)


def test_bracket_is_the_certified_upper_end_of_the_pld_bracket():
    est = risk.rero(SGM, KAPPA, discretization=1e-2)
    low, up = pld.tradeoff_bracket(SGM, discretization=1e-2, level_min=1e-3).gamma(KAPPA)
    assert est.method == "bracket" and est.certified
    np.testing.assert_array_equal(est.value, up)
    np.testing.assert_array_equal(est.upper, up)
    np.testing.assert_array_equal(est.lower, np.maximum(low, KAPPA))
    assert np.all(est.lower <= est.value) and est.warnings == ()


def test_approximations_carry_an_error_estimate_and_agree_with_the_bracket():
    truth = risk.rero(SGM, KAPPA, discretization=1e-3)
    ew = risk.rero(SGM, KAPPA, "edgeworth")
    clt = risk.rero(SGM, KAPPA, "clt")
    np.testing.assert_array_equal(ew.value, edgeworth.gamma_edgeworth(SGM, KAPPA))
    assert not ew.certified and not clt.certified
    assert ew.error_estimate is not None and clt.error_estimate is not None
    # the CLT's error estimate includes its distance to the series
    assert np.all(clt.error_estimate >= np.abs(clt.value - ew.value))
    # against the certified value (the bracket is 1e-6 wide here): the series is off by 3.9e-5 and 1.4e-4, the CLT by
    # 2.6e-3 and 8.2e-3, which its error estimate (2.7e-3, 8.5e-3) covers
    assert np.all(np.abs(ew.value - truth.value) <= 2e-4)
    assert np.all(np.abs(clt.value - truth.value) <= clt.error_estimate)
    assert np.all(np.abs(clt.value - truth.value) >= 1e-3)  # the CLT is the cruder approximation


def test_monte_carlo_interval_covers_the_certified_value():
    est = risk.rero(SGM, 0.05, "mc", samples=200_000, seed=3)
    truth = risk.rero(SGM, 0.05, discretization=1e-3)
    assert est.method == "mc" and not est.certified
    assert est.lower[0] <= truth.upper[0] and truth.lower[0] <= est.upper[0]
    ref = montecarlo.gamma_mc(Mechanism("gaussian", 1.2, 0.2, 20), 0.05, samples=200_000, seed=3)
    np.testing.assert_array_equal(est.value, ref.estimate)


def test_full_batch_gaussian_is_the_closed_form():
    """Noise 2, 9 full-batch steps: exactly 1.5-GDP; the interval holds Phi(Phi^-1(kappa) + 1.5) (mpmath, 40 digits)
    and is a few roundings wide."""
    est = risk.rero(Mechanism("gaussian", 2.0, 1.0, 9), KAPPA)
    with mpmath.workdps(40):
        exact = [float(mpmath.ncdf(-mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * mpmath.mpf(k)) + mpmath.mpf(1.5)))
                 for k in KAPPA]
    assert np.all(est.lower <= exact) and np.all(exact <= est.upper) and np.all(est.value == est.upper)
    np.testing.assert_allclose(est.upper, rero.gamma(tradeoff.gaussian(1.5), KAPPA), rtol=1e-13, atol=0)
    assert est.method == "closed form" and est.certified


def test_a_wide_bracket_warns():
    est = risk.rero(dpsgd(1.0, 0.5, 50), [1e-6], discretization=0.2)
    assert est.warnings and "wide" in est.warnings[0]


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(noise="cauchy", noise_multiplier=1.0), "noise"),
    (dict(noise="gaussian", noise_multiplier=0.0), "noise_multiplier"),
    (dict(noise="gaussian", noise_multiplier=1.0, sampling_rate=1.5), "sampling_rate"),
    (dict(noise="laplace", noise_multiplier=1.0, steps=0), "steps"),
])
def test_a_bad_mechanism_names_its_parameter(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        Mechanism(**kwargs)


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="method"):
        risk.rero(SGM, 0.1, "pld")
    with pytest.raises(ValueError, match="mechanism"):
        risk.rero(("gaussian", 1.0, 0.1, 10), 0.1)
    with pytest.raises(ValueError, match="kappa"):
        risk.rero(SGM, 1.5)


def test_gdp_report_is_alg1_on_the_dpsgd_curve():
    run = dpsgd(2.0, 0.05, 200)
    report = risk.gdp(run, delta=1e-5)

    assert (report.mu, report.regret) == tuple(mechanism_gdp.mu_and_regret_dpsgd(Mechanism("gaussian", 2.0, 0.05, 200)))
    assert report.method == "lattice" and report.alpha_floor == 1e-10
    assert report.discretization == pld.default_discretization(Mechanism("gaussian", 2.0, 0.05, 200))
    dist = pld.mechanism_pld(Mechanism("gaussian", 2.0, 0.05, 200), discretization=report.discretization)
    assert report.epsilon == float(dist.get_epsilon_for_delta(1e-5))


def test_gdp_report_and_mu_and_regret_agree_far_from_privacy():
    # the curve passes below (tail, tail): both lower the floor to its fixed point, and the report says so
    from fdp.accounting import mechanism_gdp

    run = dpsgd(1.0, 0.5623, 1000)
    report = risk.gdp(run, discretization=1e-3)
    assert (report.mu, report.regret) == tuple(mechanism_gdp.mu_and_regret_dpsgd(run, discretization=1e-3))
    assert report.mu > 2 * norm.isf(1e-10) and 0.0 < report.alpha_floor < 1e-10
    assert any("floor was lowered" in w for w in report.warnings)
    with pytest.raises(ValueError, match="tail"):  # checked for full batches too
        mechanism_gdp.mu_and_regret_dpsgd(dpsgd(1.0, 1.0, 10), tail=0.7)


def test_gdp_report_of_full_batches_is_the_closed_form():
    report = risk.gdp(Mechanism("gaussian", 4.0, 1.0, 16))
    assert (report.mu, report.regret, report.alpha_floor, report.method) == (1.0, 0.0, 0.0, "closed form")


def test_gdp_report_refuses_what_it_cannot_answer():
    with pytest.raises(ValueError, match="Gaussian"):
        risk.gdp(Mechanism("laplace", 1.0, 0.1, 10))
    with pytest.raises(ValueError, match="tail"):
        risk.gdp(dpsgd(1.0, 0.1, 10), tail=0.5)
    with pytest.raises(ValueError, match="delta"):
        risk.gdp(dpsgd(1.0, 0.1, 10), delta=0.0)


# --- the risk report -------------------------------------------------------------------------------


def test_report_readings_agree_with_their_parts():
    """Each reading of the report is the library's answer to that question on the same run; the MIA numbers are
    upper bounds that the certified upper curve brackets from below within 1e-4, mu* only falls as the floor rises."""

    run = dpsgd(2.0, 0.05, 200)
    r = risk.report(run, discretization=1e-3, rero_discretization=1e-3, fpr=[1e-3, 0.1], prior=[0.1, 0.5])
    g = risk.gdp(run, discretization=1e-3)
    assert (r.gdp.mu, r.gdp.regret, r.epsilon_pld) == (g.mu, g.regret, g.epsilon)
    assert r.epsilon_rdp == accountants.epsilon(Mechanism("gaussian", 2.0, 0.05, 200), 1e-5, accountant="rdp") > r.epsilon_pld
    assert r.gdp.mu >= r.mu_at_floor[1e-6] >= r.mu_at_floor[1e-4]
    est = risk.rero(run, r.kappa, discretization=1e-3)
    np.testing.assert_array_equal(r.rero.upper, est.upper)
    bracket = pld.tradeoff_bracket(Mechanism("gaussian", 2.0, 0.05, 200), discretization=1e-3, level_min=1e-3)
    above = tradeoff.symmetrise(bracket.upper)  # on or above the exact symmetrised curve
    tpr_low, adv_low, bayes_low = mia.membership_bounds(above, r.fpr, r.prior)
    assert np.all(tpr_low - bracket.slack <= r.tpr) and np.all(r.tpr <= tpr_low + 1e-4)
    assert adv_low - bracket.slack <= r.advantage <= adv_low + 1e-4
    assert np.all(bayes_low - bracket.slack <= r.bayes_success) and np.all(r.bayes_success <= bayes_low + 1e-4)
    # prior 1/2: (1 + advantage) / 2, up to the margin both readings are raised by (the curve's running sums)
    margin = (2.0 * r.curve.alphas.size + 8.0) * 2.0**-53
    assert r.bayes_success[1] == pytest.approx((1.0 + r.advantage) / 2.0, abs=margin)
    data = r.to_dict()
    assert data["gdp"]["mu"] == r.gdp.mu and data["rero"]["gamma_lower"] == est.lower.tolist()
    text = presentation.markdown(r)
    assert "## Membership inference" in text and formatting.upper(r.gdp.mu, 5) in text
    # the lower ends: the optimistic lattice's TPR, and eps of the optimistic PLD (the targets' readings)
    assert np.all(r.tpr_lower <= r.tpr) and np.all(r.tpr_lower >= tpr_low - bracket.slack - 1e-4)
    assert r.tpr_interval.lower is r.tpr_lower and data["mia"]["tpr_lower"] == r.tpr_lower.tolist()
    assert r.epsilon_pld_lower == targets.Epsilon(r.epsilon_pld, 1e-5).lower(r.mechanism, discretization=r.discretization)
    assert r.epsilon_pld_lower <= r.epsilon_pld and data["dp"]["epsilon_pld_lower"] == r.epsilon_pld_lower
    assert formatting.lower(r.epsilon_pld_lower, 5) in text and "exact TPR at least" in text


def test_report_full_batches_against_closed_forms():
    """100 steps of noise 2 without subsampling are exactly 5-GDP: TPR = 1 - f_5(FPR), advantage 2 Phi(5/2) - 1."""
    r = risk.report(dpsgd(2.0, 1.0, 100), fpr=[1e-3, 0.1], prior=[0.5])
    exact = tradeoff.gaussian(5.0)
    assert np.all(r.tpr_lower <= 1.0 - exact([1e-3, 0.1])) and np.all(r.tpr_lower >= (1.0 - exact([1e-3, 0.1])) * (1 - 1e-12))
    assert r.epsilon_pld_lower <= float(gdp.eps_from_mu_delta(5.0, 1e-5)) <= r.epsilon_pld
    assert r.gdp.mu == 5.0 and r.gdp.method == "closed form"
    assert np.all(exact.power(r.fpr) <= r.tpr) and np.all(r.tpr <= exact.power(r.fpr) + 1e-4)
    assert 2 * norm.cdf(2.5) - 1 <= r.advantage <= 2 * norm.cdf(2.5) - 1 + 1e-4
    np.testing.assert_allclose(r.rero.upper, exact.power(r.kappa), rtol=1e-12)


def test_report_rtm_reading_brackets_the_closed_form_and_stays_below_dp():
    """One full-batch step of noise 2 under the RTM is the closed-form chi-square curve of rtm.gaussian (Thm. 2):
    the report's RTM bracket contains its ReRo bound and its membership TPR (symmetrised on a fine grid); the RTM
    adversary is one membership test, so its TPR never exceeds the DP bound, and a wider release weakens it."""
    r = risk.report(dpsgd(2.0, 1.0, 1), fpr=[1e-3, 0.1], kappa=[1e-3, 0.1], prior=[0.5], rtm_discretization=1e-4)
    exact = rtm.gaussian(0.5)
    gamma = 1.0 - exact(r.kappa)
    assert np.all(r.rtm.gamma_lower <= gamma + 1e-12) and np.all(gamma <= r.rtm.gamma + 1e-12)
    assert np.all(r.rtm.gamma - r.rtm.gamma_lower < 1e-3 * gamma)
    tpr = 1.0 - tradeoff.symmetrise(exact, grid=np.linspace(0.0, 1.0, 20001))(r.fpr)
    assert np.all(r.rtm.tpr_lower <= tpr + 1e-6) and np.all(tpr <= r.rtm.tpr + 1e-6)
    run = dpsgd(2.0, 0.05, 200)
    one, many = (risk.report(run, discretization=1e-3, rero_discretization=1e-3, rtm_discretization=1e-3,
                             rtm_dimension=d) for d in (1, 20))
    assert np.all(one.rtm.tpr <= one.tpr) and one.rtm.advantage <= one.advantage
    assert np.all(many.rtm.tpr < one.rtm.tpr) and np.all(many.rtm.gamma < one.rtm.gamma)
    # a coarse optimistic lattice widens the bracket, which the Markdown shows; nothing to act on, so no warning
    coarse = risk.report(dpsgd(2.0, 0.05, 2000), discretization=1e-3, rero_discretization=1e-3,
                         rtm_discretization=1e-2, fpr=[1e-3], kappa=[1e-3], prior=[0.5])
    assert coarse.rtm.tpr_lower[0] < 0.95 * coarse.rtm.tpr[0] and not coarse.warnings
    assert "a smaller rtm_discretization narrows" in presentation.markdown(coarse)
    data = one.to_dict()["rtm"]
    assert data["dimension"] == 1 and data["tpr_upper"] == one.rtm.tpr.tolist()
    assert "## Relaxed threat model" in presentation.markdown(one)
    with pytest.raises(ValueError, match="rtm_dimension"):
        risk.report(run, rtm_dimension=0)


def test_report_of_randomized_response_is_its_closed_forms():
    """Randomized response is exactly (eps, 0)-DP: TPR <= min(e^eps FPR, 1 - e^-eps (1 - FPR)), mu* = mu_pure_dp(eps),
    eps at delta from its privacy profile, gamma = TPR at kappa; no RDP and no RTM reading."""
    e = 1.5
    r = risk.report(RandomizedResponse(e), fpr=[1e-3, 0.1, 0.9], kappa=[1e-3, 0.1], prior=[0.5], delta=1e-3)
    exact_tpr = np.minimum(np.exp(e) * r.fpr, 1.0 - np.exp(-e) * (1.0 - r.fpr))
    np.testing.assert_allclose(r.tpr, exact_tpr, rtol=1e-12)
    assert r.gdp.mu == pytest.approx(float(gdp.mu_pure_dp(e)), rel=1e-12) and r.gdp.method == "closed form"
    curve = conversions.randomized_response(e)
    assert float(conversions.tradeoff_profile(curve, r.epsilon_pld)) == pytest.approx(1e-3, rel=1e-9)
    np.testing.assert_allclose(r.rero.upper, np.exp(e) * r.kappa, rtol=1e-12)
    assert r.advantage == pytest.approx((np.exp(e) - 1) / (np.exp(e) + 1), rel=1e-12)
    assert r.epsilon_rdp is None and r.rtm is None and r.discretization is None
    # an exact curve: the lower ends are the exact values read from below (the reviewer found them None)
    assert np.all(r.tpr_lower <= r.tpr) and np.all(r.tpr_lower >= exact_tpr * (1 - 1e-12))
    assert r.epsilon_pld_lower == r.epsilon_pld
    assert r.to_dict()["rtm"] is None and "| exact |" in presentation.markdown(r) and "Relaxed" not in presentation.markdown(r)
    assert len(presentation.figure(r).axes) == 4
    assert risk.report(RandomizedResponse(700.0), delta=1e-5).epsilon_pld == pytest.approx(700.0, abs=1e-4)
    with pytest.raises(ValueError, match="epsilon"):
        RandomizedResponse(800.0)


def test_report_of_one_laplace_step_brackets_the_closed_forms():
    """One Laplace step of scale 2 (effect size 1/2): the MIA bounds lie on or above 1 - f of eq. 1 of the ReRo
    paper within 1e-4, mu* is not below mu_laplace(1/2), eps is at most 1/2; the RTM bracket contains the RTM
    paper's closed-form Laplace curve (Thm. 1) at each prior.  Subsampled Laplace is refused by name."""
    r = risk.report(Mechanism("laplace", 2.0, 1.0, 1), fpr=[1e-3, 0.1], kappa=[1e-3, 0.1], prior=[0.5])
    exact = tradeoff.laplace(0.5)
    assert np.all(exact.power(r.fpr) <= r.tpr + 1e-12) and np.all(r.tpr <= exact.power(r.fpr) + 1e-4)
    assert float(gdp.mu_laplace(0.5)) - 1e-9 <= r.gdp.mu <= float(gdp.mu_laplace(0.5)) + 1e-3
    assert r.epsilon_pld <= 0.5 + 1e-9 and r.epsilon_rdp >= r.epsilon_pld
    gamma = 1.0 - rtm.laplace(0.5)(r.kappa)
    assert np.all(r.rtm.gamma_lower <= gamma + 1e-9) and np.all(gamma <= r.rtm.gamma + 1e-9)
    assert r.to_dict()["mechanism"]["noise"] == "laplace" and "Laplace noise" in presentation.markdown(r)
    with pytest.raises(ValueError, match="subsampled Laplace"):
        risk.report(Mechanism("laplace", 2.0, 0.5, 1))
    with pytest.raises(ValueError, match="rtm_dimension"):
        risk.report(Mechanism("laplace", 2.0, 1.0, 1), rtm_dimension=2)


def test_report_figure_draws_four_panels_where_asked():
    """The figure draws into given axes (a book grid) or a new plain Figure; the profile panel plots delta(eps) of
    the certified curve, which at the PLD's epsilon is the report's delta up to the accountant's own rounding."""
    from matplotlib.figure import Figure

    r = risk.report(dpsgd(2.0, 1.0, 100), fpr=[1e-3, 0.1], prior=[0.5])
    fig = presentation.figure(r)
    assert len(fig.axes) == 4 and [ax.get_title() for ax in fig.axes][1] == "privacy profile"
    eps, delta = fig.axes[1].lines[0].get_data()
    assert np.interp(r.epsilon_pld, eps, delta) == pytest.approx(r.delta, rel=0.05)
    own = Figure().subplots(2, 2).flat
    assert presentation.figure(r, axes=own) is own[0].figure
    with pytest.raises(ValueError, match="axes"):
        presentation.figure(r, axes=own[:3])


def test_report_rejects_bad_input():
    for bad in ("gaussian", 1.0, None):
        with pytest.raises(ValueError, match="mechanism"):
            risk.report(bad)
    for kwargs, name in (({"fpr": [1.5]}, "fpr"), ({"prior": [0.0]}, "prior"), ({"kappa": [1.0]}, "kappa"),
                         ({"delta": 0.0}, "delta"), ({"rero_discretization": -1.0}, "rero_discretization")):
        with pytest.raises(ValueError, match=name):
            risk.report(SGM, **kwargs)


def test_every_bracket_is_one_interval_type():
    """Brackets, confidence intervals and calibrations expose the same Interval(lower, upper)."""
    from fdp.accounting import montecarlo
    from fdp.experiments import attacks
    from fdp.intervals import Interval

    run = dpsgd(2.0, 0.05, 50)
    est = risk.rero(run, [0.01, 0.1], discretization=1e-3)
    assert isinstance(est.interval, Interval) and np.all(est.interval.contains(est.value))
    assert np.all(est.interval.width >= 0) and tuple(est.interval) == (est.lower, est.upper)
    assert risk.rero(run, [0.1], "clt").interval is None  # an approximation has no interval
    g = risk.gdp(run, discretization=1e-3)
    assert g.mu_interval.contains(g.mu) and g.mu_interval.lower == g.mu_lower
    report = risk.report(run, discretization=1e-3, rero_discretization=1e-3, rtm_discretization=1e-3)
    assert np.all(report.rtm.tpr_interval.width >= 0) and np.all(report.rtm.gamma_interval.contains(report.rtm.gamma))
    mc = montecarlo.gamma_mc(run, [0.1], samples=20_000, seed=1)
    assert np.all(mc.confidence_interval.contains(mc.estimate)) and mc.interval_method == "asymptotic"
    assert attacks.success_rate([True] * 7 + [False] * 3).interval.contains(0.7)
    cal = calibrate.solve(targets.Mu(1.0), 1.0, steps=4)
    assert cal.achieved_interval.upper == cal.achieved and cal.achieved_interval.contains(cal.achieved)
    assert not Interval(0.1, 0.2).contains(0.3)



def test_estimate_advantage_needs_the_priors_it_was_read_at():
    est = risk.rero_closed_form("gaussian", 2.0, [0.1, 0.5])
    assert np.all(est.advantage([0.1, 0.5]) >= rero.advantage(est.value, [0.1, 0.5]))
    with pytest.raises(ValueError, match="kappa must be the 2 priors"):
        est.advantage(0.1)
    with pytest.raises(ValueError, match="kappa"):
        est.advantage([0.1, 1.5])


def test_rtm_tpr_lower_end_lies_below_the_exact_tpr():
    """One step of noise 0.0625 at rate 0.5: the RTM TPR's lower end read 1.0 at FPR 0.5, above the exact TPR
    1 - 8.8e-16 (the optimistic curve's reading was moved up, as an upper bound's); lower ends now move down."""
    r = risk.report(dpsgd(0.0625, 0.5, 1), fpr=[0.5])
    assert r.rtm.tpr_lower[0] < 1.0 - 8e-16 and r.rtm.tpr_lower[0] <= r.rtm.tpr[0]
    above = tradeoff.piecewise_linear([0.0, 0.5, 1.0], [1.0, 0.2, 0.0])
    low, adv_low, _ = mia.membership_bounds(above, [0.5], [0.5], side="lower")
    up, adv_up, _ = mia.membership_bounds(above, [0.5], [0.5])
    assert low[0] < 0.8 < up[0] and adv_low < 0.3 < adv_up


# --- from test_edges_surfaces, round 2 and later break reviews (the report, calibrate and gdp surfaces) ------


def test_mu_grows_as_the_floor_falls():
    """mu* never decreases as the floor decreases (it is a sup over a growing range)."""
    m = dpsgd(1.0, 0.01, 1)
    mus = [risk.gdp(m, tail=t).mu for t in (1e-4, 1e-10, 1e-30, 1e-60, 1e-100)]
    assert all(b >= a for a, b in zip(mus, mus[1:]))


def test_mu_star_is_capped_by_the_full_batch_at_every_floor():
    """At floor 1e-300 the lattice's pessimistic far tail gave mu* 3.361 for one step at sigma 1; the full batch's
    sqrt(T)/sigma = 1 bounds it (and the exact add curve's mu(1e-300) = 0.873 stays below)."""
    r = risk.gdp(dpsgd(1.0, 0.01, 1), tail=1e-300)
    assert r.mu == 1.0 and r.mu_lower <= 0.873
    rep = risk.report(dpsgd(1.0, 0.01, 1), fpr=[1e-300, 1e-3])
    exact = norm.sf(norm.isf(1e-300) - 1.0)  # TPR of the full batch at FPR 1e-300, an upper bound
    assert one_step_add_tpr(1e-300, 0.01, 1.0) <= rep.tpr[0] <= exact * (1 + 1e-11)  # the closed form raised ~2e-12
    assert all(v <= 1.0 for v in rep.mu_at_floor.values())


def test_the_library_takes_tail_0_for_every_gaussian_mechanism():
    assert risk.gdp(dpsgd(1.0, 0.01, 1), tail=0.0).mu == 1.0
    with pytest.raises(ValueError, match="tail must lie in"):  # the lattice route alone still needs a floor it reaches
        mechanism_gdp.mu_and_regret_dpsgd(dpsgd(1.0, 0.01, 1), tail=0.0)
    assert risk.gdp(dpsgd(2.0, 1.0, 4), tail=0.0).mu == 1.0


def test_full_batch_readings_are_the_closed_forms():
    mu = 2.0  # 4 steps at noise 1
    r = risk.report(dpsgd(1.0, 1.0, 4), fpr=[1e-30, 0.1], prior=[0.5], kappa=[1e-30])
    g = tradeoff.gaussian(mu)
    assert np.allclose(r.tpr, g.power(np.array([1e-30, 0.1])), rtol=1e-12, atol=0)
    assert r.advantage == pytest.approx(2 * norm.cdf(mu / 2) - 1, rel=1e-12)
    assert r.bayes_success[0] == pytest.approx(norm.cdf(mu / 2), rel=1e-12)  # prior 1/2: (1 + advantage) / 2


@pytest.mark.parametrize("steps", [1, 2])
def test_tiny_noise_readings_are_above_the_max_test(recwarn, steps):
    """Noise 0.03, rate 0.5: losses pass 709 and e^l overflows.  The overflow used to corrupt the curve
    silently (2 steps: mu* 1.68, TPR at 1e-3 0.004 where the max test alone gives 7.03 and 0.750); one step
    was refused with an overflow message."""
    r = risk.report(dpsgd(0.03, 0.5, steps), discretization=0.02, fpr=[1e-3, 1e-2], kappa=[1e-3, 0.1])
    for fpr, tpr in zip([1e-3, 1e-2], r.tpr):
        assert tpr >= max_test(fpr, 0.5, 0.03, steps)
    for kappa, upper in zip([1e-3, 0.1], r.rero.upper):
        assert upper >= max_test(kappa, 0.5, 0.03, steps)  # gamma(kappa) = 1 - f(kappa) >= the max test's power
    a = 1e-10 * 1.0001  # the floor of mu*
    assert r.gdp.mu >= mu_at(a, max_test(a, 0.5, 0.03, steps))
    if steps == 1:  # the add curve is exact
        assert r.tpr[0] == pytest.approx(one_step_add_tpr(1e-3, 0.5, 0.03), rel=1e-3)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sigma=st.floats(0.01, 0.1), q=st.floats(0.05, 0.99), steps=st.integers(1, 3))
def test_mu_at_tiny_noise_is_above_the_max_test(sigma, q, steps):
    """Across tiny noise (likelihood ratios beyond the float range) mu* stays above the max test's mu at the
    floor; the true curve's beta there is at least (1 - q)^T (1 - a) >= 1e-6, so that point counts for mu*."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mu = risk.gdp(dpsgd(sigma, q, steps), discretization=0.05).mu
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]  # no raw overflow warnings
    a = 1e-10 * 1.0001
    assert mu >= mu_at(a, max_test(a, q, sigma, steps))


@given(eps=st.floats(1e-6, 50.0), fpr=st.floats(0.0, 1.0), kappa=st.floats(1e-300, 0.999))
@settings(max_examples=60, deadline=None)
def test_randomized_response_readings_are_its_closed_forms(eps, fpr, kappa):
    r = risk.report(RandomizedResponse(eps), fpr=[fpr], kappa=[kappa], prior=[0.5])
    exact = tradeoff.eps_delta(eps, 0.0)
    assert r.tpr[0] >= exact.power(fpr) * (1 - 1e-15)
    assert r.rero.upper[0] >= max(exact.power(kappa), kappa) * (1 - 1e-15)
    assert r.advantage >= math.tanh(eps / 2) * (1 - 1e-15)


@given(tail=st.floats(1e-300, 1e-3))
@settings(max_examples=15, deadline=None)
def test_gdp_mu_at_any_legal_floor_is_above_the_exact_point(tail):
    mu = risk.gdp(dpsgd(2.0, 0.05, 1), tail=tail, discretization=1e-3).mu
    assert mu >= mu_at(tail, one_step_add_tpr(tail, 0.05, 2.0)) * (1 - 1e-9)


def test_default_gdp_spacing_refines_mu_at_tiny_sampling_rates_and_states_the_interval():
    """At (10, 1e-6, 150 steps) the floor 1e-5 of the default spacing printed mu* 3.55e-5 without a warning, 29 times
    the CLT value 1.23e-6; the automatic spacing now refines it (1.38e-6) and states the certified interval."""
    g = risk.gdp(dpsgd(10.0, 1e-6, 150))
    assert 1e-6 <= g.mu_lower <= g.mu <= 1.5e-6
    assert any(w.startswith("mu* lies in [") for w in g.warnings) == (g.mu - g.mu_lower > risk.WARN_RELATIVE * g.mu)
    # every end is certified at every spacing: the coarse interval (with its warning) contains the fine one's
    coarse = risk.gdp(dpsgd(10.0, 1e-6, 150), discretization=1e-5)
    assert coarse.mu_lower <= g.mu_lower and g.mu <= coarse.mu
    (message,) = coarse.warnings
    assert message.startswith("mu* lies in [") and "smaller discretization" in message
    # the printed interval is rounded outward
    low, high = (float(x) for x in message[len("mu* lies in ["):message.index("]")].split(", "))
    assert low <= coarse.mu_lower and high >= coarse.mu
    # a closed form is its own lower end
    full = risk.gdp(dpsgd(2.0, 1.0, 4))
    assert full.mu_lower == full.mu == 1.0


def test_gdp_states_how_loose_mu_is_where_no_lattice_resolves_it():
    """10^6 steps at sampling rate 1e-9: the loss per step is far below any affordable spacing; the report keeps the
    certified upper end and says how wide the interval is, rather than printing it as tight."""
    g = risk.gdp(dpsgd(2.0, 1e-9, 10**6))
    assert g.mu_lower <= g.mu
    assert any(w.startswith("mu* lies in [") for w in g.warnings) == (g.mu - g.mu_lower > risk.MU_RTOL * g.mu)


def test_default_rero_bracket_is_at_most_1e_4_wide():
    kappa = np.array([1e-7, 1e-5, 1e-3, 1e-1])
    for run in (dpsgd(2.5, 16384 / 1281167, 71589), dpsgd(1.1, 0.07, 60)):
        est = risk.rero(run, kappa)
        assert np.max((est.upper - est.lower) / est.upper) <= risk.RERO_RTOL and not est.warnings
        fixed = risk.rero(run, kappa, discretization=1e-4)  # both certified: the brackets overlap
        assert np.all(est.lower <= fixed.upper) and np.all(fixed.lower <= est.upper)


def test_report_levels_must_be_one_dimensional():
    for name in ("fpr", "kappa", "prior"):
        with pytest.raises(ValueError, match=f"{name} must be a number or a 1-d list"):
            risk.report(dpsgd(2.0, 1.0, 1), **{name: [[0.1]]})


def test_far_from_private_composed_curve_keeps_its_powers():
    """Noise 0.02, rate 0.5, 2 steps at kappa 1e-280: the read-off lowered a beta to meet the first point without
    raising its power ('powers must have the shape of betas' was printed as the refusal).  Truth: gamma is at
    least 1 - (1 - q)^2 = 0.75 at any kappa (the record takes part, and noise 0.02 gives it away)."""
    est = risk.rero(dpsgd(0.02, 0.5, 2), [1e-280])
    assert est.upper[0] >= 0.75 and est.lower[0] <= 0.75 + 1e-12


@pytest.mark.parametrize("mu, kappa", [(701.0, 1e-305), (720.0, 1e-320), (702.0, 3.3e-306), (38.60452980315939, 1e-17),
                                       (0.1, 5e-324), (4.368446330985709, 1e-320), (745.0, 5e-324), (2.0, 0.7)])
def test_the_laplace_rero_closed_form_brackets_the_exact_power(mu, kappa):
    """ReRo paper eq. 1 in exact arithmetic: e^mu kappa, 1 - e^-mu / (4 kappa) or 1 - e^-mu (1 - kappa). The curve capped
    e^mu at e^700 (gamma 0.10 for 0.28 at mu 701) and a relative margin of 8 ulps missed the rounding of large exponents."""
    import mpmath

    mpmath.mp.dps = 50
    m, k = mpmath.mpf(mu), mpmath.mpf(kappa)
    exact = (mpmath.e**m * k if k < mpmath.e**-m / 2 else 1 - mpmath.e**-m / (4 * k) if k <= 0.5
             else 1 - mpmath.e**-m * (1 - k))
    est = risk.rero_closed_form("laplace", mu, kappa)
    assert mpmath.mpf(float(est.lower[0])) <= exact <= mpmath.mpf(float(est.upper[0]))
    margin = 8 * np.finfo(float).eps * (4 + mu + abs(math.log(kappa)))  # twice the stated margin: tight
    assert float(est.upper[0]) <= float(exact) * (1 + margin) + 1e-320
    curve = tradeoff.laplace(mu)  # the curve itself: below the corner in logs past e^700
    assert float(curve.power(kappa)) == pytest.approx(float(exact), rel=1e-12, abs=1e-320)


@pytest.mark.parametrize("kappa", [5e-324, 1e-312, 1e-308])
def test_the_gaussian_rero_closed_form_is_an_upper_bound_at_subnormal_kappa(kappa):
    # gamma = Phi(Phi^-1(kappa) + 0.1) is about 4.4e-311 at kappa 1e-312; it was reported as kappa itself
    import mpmath

    mpmath.mp.dps = 50
    k = mpmath.mpf(kappa)
    x = mpmath.findroot(lambda t: mpmath.log(mpmath.ncdf(t)) - mpmath.log(k), -37.5)
    exact = mpmath.ncdf(x + mpmath.mpf("0.1"))
    est = risk.rero_closed_form("gaussian", 0.1, kappa)
    assert mpmath.mpf(float(est.lower[0])) <= exact <= mpmath.mpf(float(est.upper[0]))


# --- from test_edges_round3, round 3 (subnormal levels, RTM curves near alpha = 1, calibration caps) ---------


@pytest.mark.usefixtures("mpmath_50")
def test_interval_refuses_reversed_or_nan_ends():
    with pytest.raises(ValueError, match="lower must be <= upper"):
        Interval(0.2, 0.1)
    with pytest.raises(ValueError, match="NaN"):
        Interval(float("nan"), 0.1)
    assert Interval(np.array([0.1, 0.2]), np.array([0.1, 0.3])).contains(0.1).tolist() == [True, False]
