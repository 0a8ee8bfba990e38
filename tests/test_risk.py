"""fdp.risk: one entry point for the ReRo bound of a mechanism, every method behind it, one result type."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from scipy.stats import norm

from fdp import formatting, presentation, risk
from fdp.accounting import accountants, edgeworth, mechanism_gdp, montecarlo, pld, rtm
from fdp.accounting.privacy_loss import Mechanism, RandomizedResponse, dpsgd
from fdp.curves import conversions, gdp, mia, rero, tradeoff

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
    assert "## Membership inference (upper bounds)" in text and formatting.upper(r.gdp.mu, 5) in text


def test_report_full_batches_against_closed_forms():
    """100 steps of noise 2 without subsampling are exactly 5-GDP: TPR = 1 - f_5(FPR), advantage 2 Phi(5/2) - 1."""
    r = risk.report(dpsgd(2.0, 1.0, 100), fpr=[1e-3, 0.1], prior=[0.5])
    exact = tradeoff.gaussian(5.0)
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
    assert not any("RTM bracket" in w for w in r.warnings)  # narrow: no warning
    coarse = risk.report(dpsgd(2.0, 0.05, 2000), discretization=1e-3, rero_discretization=1e-3,
                         rtm_discretization=1e-2, fpr=[1e-3], kappa=[1e-3], prior=[0.5])
    assert any("RTM bracket" in w for w in coarse.warnings)  # a coarse optimistic lattice is flagged
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
    from fdp import calibrate, targets
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
