"""The run-dependent prose of the chapters (fdp_book.chapters): each sentence says what its numbers show."""

from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from fdp.experiments.attacks import Proportion
from fdp.experiments.inversion import Inversion
from fdp.experiments.reconstruction import GameResult
from fdp.formatting import upper
from fdp.targets import named
from fdp_book import results
from fdp_book.chapters import gdp_tables as gt
from fdp_book.chapters import guo_comparison as guo
from fdp_book.chapters import reconstruction_attacks as ra
from fdp_book.chapters import report
from fdp_book.chapters import rero_bounds as rb
from fdp_book.chapters import rero_sampling_rate as rs
from fdp_book.chapters import risk_report as rr
from fdp_book.chapters import rtm_dpsgd as rd
from fdp_book.chapters import rtm_tradeoffs as rt
from fdp_book.paths import ROOT


def _game(rates, trials=100):
    """A GameResult whose prior-aware attack succeeds at ``rates`` (one per prior size)."""
    success = np.zeros((trials, len(rates)), dtype=bool)
    for j, r in enumerate(rates):
        success[: int(round(r * trials)), j] = True
    return GameResult(success={"prior-aware": success}, prior_sizes=list(range(2, 2 + len(rates))), mean_norm=0.0,
                      frac_clipped=0.0, accuracy=0.0)


@pytest.mark.parametrize("gaps, says", [((0.1, 0.2, 0.3), "it grows with"), ((0.3, 0.2, 0.1), "it shrinks as"),
                                        ((0.1, 0.3, 0.2), "does not move in one direction")])
def test_figure_3_says_how_the_gap_moves_with_epsilon(gaps, says):
    eps, sizes = [1.0, 10.0, 100.0], [2, 3]
    fig3 = {e: _game([0.5, 0.4]) for e in eps}
    bounds = {e: [0.5 + g, 0.4] for e, g in zip(eps, gaps)}
    text = ra.see_fig3(fig3, bounds, eps, sizes, sound=True)
    assert says in text
    assert ", ".join(f"{g:.3f} at ε = {e:g}" for g, e in zip(gaps, eps)) in text
    assert "saturated" not in text  # no bound is at 1


def _fig1(means, n=4, class_corr=0.1):
    out = {}
    for e, m in means.items():
        out[e] = dict(mse=np.full(n, m) + np.linspace(-1e-3, 1e-3, n), class_corr=class_corr, below_target=n,
                      app_d=Proportion(0.01, 0.0, 0.05) if e < 10 else Proportion(0.04, 0.005, 0.14),
                      inv=Inversion(reconstructions=np.zeros((n, 2)), loss=np.zeros(n), iterations=np.full(n, 100),
                                    converged=np.ones(n, dtype=bool), target_loss=np.ones(n)))
    return out


def test_figure_1_names_the_knee_or_says_there_is_none():
    base = dict(nearest_neighbour=0.03, noise=0.33)
    fig1 = _fig1({1.0: 0.3, 100.0: 0.1, 1000.0: 0.02})
    eps = sorted(fig1)
    assert ra.knee(fig1, eps, 0.03) == 1000.0
    text = ra.see_fig1(fig1, eps, base, 3000, 0.1)
    assert "below the nearest-neighbour baseline at ε = 1,000**, by " in text and "At ε = 100 the error is still 0.1000." in text
    assert "The optimiser is not what limits the attack" in text  # every run settled, every loss below its target's
    fig1 = _fig1({1.0: 0.34, 10.0: 0.2})
    assert ra.knee(fig1, [1.0, 10.0], 0.03) is None
    text = ra.see_fig1(fig1, [1.0, 10.0], base, 3000, 0.1)
    assert "At no ε of this run" in text and "optimiser" not in text
    assert "at ε = 1 the reconstructions are farther from their targets than uniform noise" in text


def test_figure_1_knee_is_read_by_the_error_with_its_standard_error_and_by_app_d():
    fig1 = _fig1({100.0: 0.1, 1000.0: 0.05, 3000.0: 0.028}, n=50)
    fig1[1000.0]["app_d"] = Proportion(0.963, 0.9, 0.99)
    eps = sorted(fig1)
    mse = fig1[3000.0]["mse"]
    se = (0.03 - mse.mean()) / (mse.std(ddof=1) / np.sqrt(50))
    readings = ra.knee_readings(fig1, eps, 0.03, 0.1)
    assert readings == {"fig1_knee_se": f"{se:.1f}", "fig1_app_d_before_knee": "0.963 at ε\u00a0=\u00a01,000, where chance is 0.1"}
    text = ra.see_fig1(fig1, eps, dict(nearest_neighbour=0.03, noise=0.33), 3000, 0.1)
    assert f"at ε = 3,000**, by {se:.1f} standard errors of the mean over the targets (0.0280 against 0.0300)" in text
    assert "in 96% of the cases (chance 10%): by that reading the attack works at ε = 1,000, the upper end of the paper's range." in text
    fig1[1000.0]["app_d"] = Proportion(0.3, 0.2, 0.4)  # no majority: App. D's reading is not offered
    assert "At ε = 1,000 the error is still 0.0500. " in ra.see_fig1(fig1, eps, dict(nearest_neighbour=0.03, noise=0.33), 3000, 0.1)
    assert ra.knee_readings(fig1, eps, 0.001, 0.1) == {"fig1_knee_se": "-", "fig1_app_d_before_knee": "-"}
    assert ra.knee_readings(fig1, [3000.0], 0.03, 0.1)["fig1_app_d_before_knee"] == "-"  # the knee is the grid's first ε
    found2 = dict(gap=0.179, e_gap=10.0, likelihood_no_better=True)
    glance = ra.glance_reading(found2, fig1, eps, 0.03, 0.1)
    assert glance.startswith("in Figure 2 (a prior of 10, full batch) the prior-aware attack falls short of the tight bound by up to "
                             "0.179 (ε\u00a0=\u00a010), and the Bayes")
    assert glance.endswith(f"at ε\u00a0=\u00a03,000 (by {se:.1f} standard errors), while App. D's conversion already succeeds with "
                           "0.300 at ε\u00a0=\u00a01,000, where chance is 0.1.")
    assert ra.glance_reading(found2, fig1, eps, 0.001, 0.1).endswith("stays above the nearest-neighbour baseline at every ε of this run.")


def test_figure_13_claims_a_larger_gap_at_the_larger_clipping_norm_only_beyond_two_standard_errors():
    def run(p, trials=200):
        return SimpleNamespace(trials=trials, rate=lambda attack: Proportion(p, 0.0, 1.0))
    se = np.sqrt(2 * 0.995 * 0.005 / 200)
    assert ra.gap_shortfall(run(0.995), run(0.995), 0.005, 0.005) == pytest.approx(2 * se)
    assert ra.gap_shortfall(run(0.9), run(0.5), 0.1, 0.5) == 0.0  # 0.4 larger, far beyond sampling error
    clip = {0.1: (0.85, 0.91), 1.0: (0.73, 0.84)}
    runs = {(C, x): run(p) for C in (0.1, 1.0) for x, p in ((10.0, 0.58), (100.0, 0.5))}
    same = ra.see_fig13(clip, {0.1: [0.18, 0.005], 1.0: [0.18, 0.005]}, [10.0, 100.0], runs, 2 * se)
    assert "0.005 at C = 0.1 and 0.005 at C = 1, no larger at C = 1: this run does not show the larger gap" in same
    near = ra.see_fig13(clip, {0.1: [0.18, 0.005], 1.0: [0.18, 0.01]}, [10.0, 100.0], runs, 0.009)
    assert "larger at C = 1 but by less than two standard errors of the two success rates (it falls 0.009 short)" in near
    assert "the effect App. K.1 describes" in ra.see_fig13(clip, {0.1: [0.1, 0.1], 1.0: [0.1, 0.5]}, [10.0, 100.0], runs, 0.0)
    # a saturated bound at the largest ε (1 at both C, the attack 0.995): no gap can open there; the largest ε where one
    # can (10: bound 0.764) is compared instead, with its own test
    runs = {(C, x): run(p) for C in (0.1, 1.0) for x, p in ((10.0, 0.585), (100.0, 0.995))}
    text = ra.see_fig13(clip, {0.1: [0.179, 0.005], 1.0: [0.184, 0.005]}, [10.0, 100.0], runs, 2 * se)
    assert "At ε = 100 the bound is at least 0.99 and Alg. 2 wins nearly every game at both clipping norms: no gap" in text
    assert ra.compared_index({0.1: [0.179, 0.005], 1.0: [0.184, 0.005]}, [10.0, 100.0], runs) == 0
    assert "At ε = 10 the gap to the bound is 0.179 at C = 0.1 and 0.184 at C = 1, larger at C = 1 but by less than two" in text


def test_figure_1_reports_reconstructions_unlike_their_class():
    text = ra.see_fig1(_fig1({1.0: 0.3, 10.0: 0.2}, class_corr=-0.11), [1.0, 10.0], dict(nearest_neighbour=0.03, noise=0.33), 3000,
                       0.1)
    assert "At ε = 1, 10 the reconstructions look unlike their own class" in text and "-0.110" in text
    assert "falls below chance at ε = 1 (" in text  # at ε = 10 the interval (0.005 to 0.14) includes chance 0.1


def test_the_image_strip_places_targets_above_their_reconstructions():
    targets = np.arange(8.0).reshape(2, 4) / 8
    strip = ra.image_strip(targets, [targets[::-1]], side=2)
    assert strip.shape == (5, 5)
    np.testing.assert_array_equal(strip[:2, :2], targets[0].reshape(2, 2))
    np.testing.assert_array_equal(strip[3:, :2], targets[1].reshape(2, 2))
    assert np.all(strip[2] == 1.0) and np.all(strip[:, 2] == 1.0)  # white between images


def test_figures_7_and_8_name_the_runs_beyond_two_regrets():
    ratios = {(9.4, 2000): 1.3, (3.0, 875): 1.004, (1.5, 500): 1.2}
    text = gt.see_fig78(ratios, 0.2)
    assert "to within 1 % for the runs with noise 3" in text
    assert "1.30 for noise 9.4, T 2000, 1.20 for noise 1.5, T 500" in text
    assert "exceeds $2\\Delta$ by up to 20.0 %" in text
    assert "is an approximation" not in gt.see_fig78({(9.4, 2000): 1.3}, 0.0)


def test_the_excess_over_two_regrets_reads_the_runs_the_paper_plots_but_the_one_it_exempts():
    cifar = [dict(eps=e, noise=s, steps=t) for e, s, t in ((1.0, 40.0, 906), (6.0, 12.0, 2007), (8.0, 9.4, 2000))]
    finetune = [dict(eps=4.0, noise=12.0, steps=1000)]
    ratios = {(40.0, 906): 0.99, (12.0, 2007): 1.2, (9.4, 2000): 1.5, (12.0, 1000): 1.03}
    assert gt.two_regret_excess(cifar, finetune, ratios) == pytest.approx(0.03)  # eps 6 is not plotted, noise 9.4 exempt
    assert gt.two_regret_excess(cifar, [], ratios) == 0.0


def test_the_rule_of_thumb_verdict_follows_the_threshold():
    worst = dict(regret=0.012, noise=2.0, steps=400, rate=0.3)
    text = gt.rule_sentence(worst, (0.013, 0.31), (2.0, 400, 0.01), [3.0], drawn=[1.0, 2.0])
    assert "too generous" in text and "noise 3 or more keeps every grid point below 0.01" in text and "not drawn" in text
    assert gt.rule_sentence(dict(worst, regret=0.004), (0.005, 0.31), (2.0, 400, 0.01), [2.0], [2.0]).endswith(
        "The rule holds on this grid.")
    assert gt.noise_sentence([]) == "More noise gives a lower regret at every grid point."


def test_figure_14_says_when_a_drop_exceeds_what_the_games_resolve():
    small = ra.see_fig14({(8.0, 2): -0.02, (8.0, 10): 0.1}, [0.01, 0.99], 60)
    assert "consistent with the claim" in small
    big = ra.see_fig14({(8.0, 2): -0.5, (8.0, 10): 0.1}, [0.01, 0.99], 60)
    assert "contradicts the claim" in big and "consistent" not in big


def test_soundness_lists_as_monte_carlo_error_only_the_intervals_that_reach_below_the_bound():
    pairs = [("A", "x", 0.9, 0.85, 0.5),  # interval entirely above: a violation
             ("B", "y", 0.52, 0.40, 0.5)]  # point above, interval below: Monte-Carlo error
    text, excess, above = ra.see_soundness(pairs)
    assert (excess, above) == (1, 1) and "B, y" in text and "A, x: 0.9000" not in text


def test_gdp_prose_follows_the_signs():
    text = gt.see_speed((1.0, 2.0, 0.5), (1.5, 1.6, 1.55), (0.0012, 0.001), [0.001], [(1.0, 0.1, 10)])
    assert "20.0 % above ours" in text
    assert "On other runs the gap is larger" not in text  # 0.1 % is not larger than this run's 3 %
    worst = dict(regret=0.008, noise=2.0, steps=400, rate=0.3)
    assert "not between them" in gt.rule_sentence(worst, (0.02, 0.31), (2.0, 400, 0.01), [], [2.0])


# guo_comparison


def _guo_run(ours, mc, analytic, printed_ours=None):
    """A one-prior-size, one-noise run: the three bounds and what Table 2 prints for them."""
    table = {(10, "ours"): [ours], (10, "guo_mc"): [mc], (10, "guo_analytic"): [analytic]}
    printed = {(10, "ours", 1.0): printed_ours, (10, "guo_mc", 1.0): None, (10, "guo_analytic", 1.0): analytic}
    return table, printed


@pytest.mark.parametrize("printed, exact, gap", [(0.5004, 0.5, 0.0), (0.5, 0.5004, 0.0), (0.502, 0.5, 0.0015),
                                                 (0.498, 0.5, -0.0015)])
def test_guo_rounding_gap_is_zero_inside_the_printed_rounding(printed, exact, gap):
    assert guo.rounding_gap(printed, exact) == pytest.approx(gap, abs=1e-12)


def test_guo_z_text_never_reads_as_three_beyond_three():
    assert guo.z_text(3.0001) == "+3.0001" and guo.z_text(-0.001) == "-1e-03" and guo.z_text(0.0) == "+0.00" and guo.z_text(2.5) == "+2.50"


@pytest.mark.parametrize("values, says", [((0.2, 0.3, 0.4), "holds at every cell"), ((0.35, 0.3, 0.4), "fails at some")])
def test_guo_figure11_says_whether_the_papers_ordering_holds(values, says):
    table, printed = _guo_run(*values)
    curves = {10: {"ours": [values[0]], "guo_mc": [values[1]], "guo_analytic": [values[2]]}}
    text = guo.see_figure11(table, curves, {10: [0.35]}, printed)
    assert says in text and "between the two Fano bounds" in text and "above the trade-off bound" in text
    text = guo.see_figure11(table, curves, {10: [0.1]}, printed)
    assert "below the trade-off bound" in text and "below both" in text


def test_guo_distance_check_counts_the_cells_outside_their_rounding():
    table, printed = _guo_run(0.2, 0.3, 0.4)
    assert "reproduces all 1 printed" in guo.distance_check(table, printed, [1.0])
    printed[10, "guo_analytic", 1.0] = 0.402
    assert "1 of the 1 printed analytic cells lie outside" in guo.distance_check(table, printed, [1.0])
    printed[10, "guo_analytic", 1.0] = None
    assert "no printed analytic cell" in guo.distance_check(table, printed, [1.0])


def test_guo_z_verdict_counts_the_far_cells_and_judges_the_stated_count():
    z = {(10, 0.5): {1000: 0.5, 100_000: 12.0}, (10, 1.0): {1000: -1.0, 100_000: 2.0}}
    text = guo.z_verdict(z, [1000, 100_000], 100_000, 10**6)
    assert "with N = 1,000 samples, 0 of the 2 printed cells lie" in text and "N = 100,000 samples, 1 of the 2" in text
    assert "the farthest 12.00" in text and "the printed row is not what Algorithm 1 produces." in text
    assert guo.z_verdict(z, [1000], 100_000, 10**6).endswith("states 100,000 samples (App. A says 1,000,000 for every experiment).")


def test_guo_summary_follows_the_statuses():
    text = guo.summary(["match", "match"], ["match", "deviation"], 100_000)
    assert "matches the print in every cell" in text and "in 1 of the 2 printed cells compared;" in text
    assert "not compared with the print in this run (its sensitivity" in guo.summary(["not compared"], ["not compared"], 10)
    assert "holds no printed cell" in guo.summary([], [], 10)


# rero_bounds
def _errors(invalid=0, miss=0, collapsed=0):
    return dict(ew_gap=0.01, invalid=invalid, clt_gap=0.1, mc_gap=0.2, mc_miss=miss, mc_collapsed=collapsed)


def test_rero_bounds_monte_carlo_sentence_names_each_flag_and_miss():
    text = rb.mc_summary({"a": _errors(), "d": _errors(miss=1, collapsed=3)}, 8)
    assert "flags the collapse at 3 of 8 points in panel d" in text and "without being flagged: 1 of 8 points in panel d." in text
    text = rb.mc_summary({"a": _errors()}, 8)
    assert "flags no collapse" in text and "no unflagged interval misses" in text


def test_rero_bounds_edgeworth_validity_counts_the_gaps():
    assert rb.ew_validity({"a": _errors(), "b": _errors()}, 8).startswith("In this run it is a valid distribution at every")
    assert "not a distribution at 3 of 16 points" in rb.ew_validity({"a": _errors(invalid=3), "b": _errors()}, 8)


def test_rero_bounds_mpmath_sentences_follow_the_distance():
    assert "overlap at all 4 points" in rb.mpmath_agreement(4, 0.0)
    assert "disagrees" in rb.mpmath_agreement(4, 2e-3) and "2.0e-03 apart" in rb.mpmath_text(4, 2e-3, 3e-3)
    assert "does not check" in rb.mpmath_agreement(0, 0.0) and "no mpmath" in rb.mpmath_text(0, 0.0, 0.0)


@pytest.mark.parametrize("bracket, riskcal, says", [(2.0, 1.0, "2.0 times as fast"), (1.0, 2.0, "2.0 times as slow"),
                                                     (1.0, 1.01, "as fast as the bracket")])
def test_rero_bounds_riskcal_speed_reads_the_ratio(bracket, riskcal, says):
    assert rb.riskcal_speed(bracket, riskcal).startswith(says)


def test_rero_bounds_workloads_summary_follows_the_tolerance():
    close = SimpleNamespace(edgeworth_error=0.01, clt_vs_edgeworth=0.02)
    assert "agree with the certified value within 5%" in rb.workloads_summary([close, close])
    far = SimpleNamespace(edgeworth_error=0.01, clt_vs_edgeworth=0.2)
    assert "leave the certified value" in rb.workloads_summary([close, far])


# rtm_dpsgd
WORKLOADS = [("CIFAR-10", 10.5, 0.08, 1000, 1e-5), ("SNLI", 1.15, 0.0075, 405, 1.8e-6)]


def _dp(stated=(8.0, 1.0), pld=(7.5, 1.1)):
    return {label: dict(rdp=p + 0.2, pld=p, stated=s, noise_rdp=1.2, noise_pld=1.1)
            for (label, *_), s, p in zip(WORKLOADS, stated, pld)}


def test_rtm_dpsgd_dp_paragraph_names_what_each_accountant_certifies():
    text = rd.see_dp(WORKLOADS, _dp(), {"CIFAR-10": "match", "SNLI": "deviation"})
    assert "CIFAR-10's settings give" in text and "does not certify ε = 1 (it needs noise 1.200)" in text
    assert "certifies CIFAR-10 at or below" in text  # SNLI's PLD epsilon 1.1 is above its stated 1
    text = rd.see_dp(WORKLOADS, _dp(pld=(7.5, 0.9)), {"CIFAR-10": "match", "SNLI": "match"})
    assert "certifies both CIFAR-10 and SNLI" in text


def _calib(tensor, summed, paper):
    return [dict(label=label, eps_rtm_paper=p, tensor=dict(upper=t, lower=t / 2, eps_upper=t, eps_lower=2 * t),
                 sum=dict(upper=s, lower=s / 2, eps_upper=s, eps_lower=2 * s))
            for (label, *_), t, s, p in zip(WORKLOADS, tensor, summed, paper)]


def test_rtm_dpsgd_reading_b_and_the_calibration_paragraph_follow_the_numbers():
    assert rd.reading_b(_calib((1, 1), (2, 2), (1, 1))).startswith("it needs more noise for the same curve on every")
    assert "on CIFAR-10, but not on SNLI" in rd.reading_b(_calib((1, 1), (2, 1), (1, 1)))
    assert rd.reading_b(_calib((1, 1), (1, 0.5), (1, 1))).startswith("it needs no more noise")
    text = rd.see_calibration(_calib((2.0, 1.0), (1.0, 2.0), (4.0, 2.0)))
    assert "gives 0.50-0.50 times the printed ε and keeps the printed order" in text and "reverses the order" in text
    assert "No workload" in rd.see_calibration(_calib((1, 1), (1, 1), (None, None)))


def test_rtm_dpsgd_figure7_paragraph_and_summary_follow_the_claim():
    fig7 = {label: [dict(eps=1.0, noise=5.0, dp=0.2, rtm=0.15, edgeworth=0.21), dict(eps=8.0, noise=1.0, dp=0.9, rtm=rtm, edgeworth=np.nan)]
            for (label, *_), rtm in zip(WORKLOADS, (0.5, 0.95))}
    text = rd.see_figure7(WORKLOADS, fig7, 0.1)
    assert text.startswith("**What we see.** **The RTM bound is not below") and "1.0e-02 (CIFAR-10)" in text
    assert "the gap is 5.0 percentage points at ε = 1 and 40.0 at ε = 8" in text
    assert "is **not** below" in rd.summary(WORKLOADS, _dp(), fig7)
    fig7["SNLI"][1]["rtm"] = 0.5
    assert "The claim holds at every budget" in rd.see_figure7(WORKLOADS, fig7, 0.1)


# rero_sampling_rate
def test_rero_sampling_rate_one_step_sentence_confirms_only_a_certain_order():
    assert "certainly lower at p = 0.1 than at p = 0.9" in rs.one_step_text(0.02, 0.1, 0.9)
    assert "does not confirm" in rs.one_step_text(-0.001, 0.1, 0.9) and "does not confirm" in rs.one_step_text(0.0, 0.1, 0.9)


def test_rero_sampling_rate_curves_coincide_only_within_the_tolerance():
    assert "coincide (largest spreads 3.0e-03 and 4.0e-03)" in rs.coincide_text(3e-3, 4e-3, 2000)
    assert "has not yet made them one mechanism" in rs.coincide_text(3e-3, 0.05, 2000)


def test_rero_sampling_rate_figure5a_claim_reads_the_table():
    fig5 = {"pld": [(1.0, 0.19, 0.2), (2.0, 0.3, 0.31)], "rdp": [(1.1, 0.18, 0.19), (2.1, 0.29, 0.3)]}
    text = rs.figure5a_claim([0.01, 0.5], fig5, {0.01: 0.2, 0.99: 0.35})
    assert text.startswith("with the tight accountant the upper end of the bracket is 0.200 at q = 0.01 where the text says about "
                           "0.20 (the report gives the verdicts).")
    assert "not compared with them" in rs.figure5a_claim([0.01], fig5, {}, "(4, 1e-5)-DP")
    assert "σ is larger and the bound smaller at every rate" in text
    fig5["rdp"][1] = (1.9, 0.3, 0.4)
    assert "not always larger and the bound not always smaller" in rs.figure5a_claim([0.02, 0.5], fig5, {0.01: 0.2})


# risk_report
def _calibration(noise, achieved=0.05, achieved_lower=0.049):
    return SimpleNamespace(noise_multiplier=noise, achieved=achieved, achieved_lower=achieved_lower, noise_lower=noise * 0.99,
                           seconds=1.0)


def test_risk_report_calibration_paragraph_compares_the_threat_models_and_the_steps():
    targets = [("epsilon", 8.0, None), ("tpr", 0.05, 1e-3), ("rtm_tpr", 0.05, 1e-3)]
    names = [named(*t, delta=1e-5, dimension=1).describe(symbols=True) for t in targets]
    assert names == ["ε ≤ 8 at δ = 1e-05", "TPR ≤ 0.05 at FPR 0.001", "RTM TPR ≤ 0.05 at FPR 0.001, d = 1"]
    steps = rr.steps_text(SimpleNamespace(steps=1500), names[0], 9.4, 2000)
    assert "finds that 1500 steps keep the first target (ε ≤ 8 at δ = 1e-05); the run took 2000." in steps
    text = rr.see_calibration(targets, names, [_calibration(9.0), _calibration(12.0), _calibration(3.0)], 9.4, steps)
    assert "from 3 (RTM TPR" in text and "to 12 (TPR ≤ 0.05" in text and "multiplier of 3, 4.0 times less" in text
    text = rr.see_calibration(targets[:2], names[:2], [_calibration(9.0), _calibration(12.0)], 9.4, "")
    assert "RTM adversary" not in text
    assert rr.steps_text(ValueError("too noisy"), names[0], 9.4, 2000).endswith("fails: too noisy.")


def test_risk_report_rtm_factor_names_the_range_of_runs():
    reports = [SimpleNamespace(tpr=np.array([0.1]), rtm=SimpleNamespace(tpr=np.array([t]))) for t in (0.05, 0.01)]
    runs = [("A", 1.0, 0.1, 10), ("B", 1.0, 0.1, 10)]
    assert rr.rtm_factor(runs, reports, np.array([1e-3])) == "from 2.0 times (A) to 10.0 times (B)"
    assert rr.rtm_factor(runs[:1], reports[:1], np.array([1e-3])) == "2.0 times (A)"


# report
def _record(key, source, status, kind="figure"):
    """A record of that status (results.status_of): a match, a pinned deviation or a value not compared."""
    rec = dict(key=key, source=source, kind=kind, value=1.0, paper=1.0, tol=0.1)
    if status == "explained":
        rec |= dict(value=2.0, expected=2.0, expected_tol=0.1)
    if status == "not compared":
        rec["not_compared"] = "another setting"
    return rec


def test_report_counts_records_by_page_and_says_none_failing_only_when_none_fail():
    registry = {"rero_bounds": [_record("a", "Kaissis et al. 2023a (ReRo), Fig. 1", "match"),
                                _record("b", "Kaissis et al. 2023a (ReRo), Fig. 1", "explained", kind="claim")],
                "gdp_tables": [_record("c", "Gomez et al. 2025 (GDP), Table 2", "not compared")]}
    header, rows = report.summary_rows(registry)
    assert rows[0][:9] == ["{doc}`rero_bounds`", 2, 1, 1, 0, 1, 0, 0, 0] and rows[-1][1] == "**3**"  # (no set-up value)
    assert "3 numbers and claims" in report.verdict(registry) and "**none failing**" in report.verdict(registry)
    assert report.headline(registry)["n_match"] == "1"
    assert len(rows) == 3  # a paper with one page has no subtotal row
    registry["rero_sampling_rate"] = [_record("e", "Hayes et al. 2023, Fig. 5a", "match")]
    header, rows = report.summary_rows(registry)
    assert rows[2] == ["*subtotal: Kaissis et al. 2023a (ReRo)*", "*3*", "*1*", "*2*", "*0*", "*1*", "*0*", "*0*", "*0*"]
    assert rows[-1][1] == "**4**" and "4 numbers and claims" in report.verdict(registry)  # subtotals not counted twice
    with pytest.raises(ValueError, match="none of the four papers"):
        report.by_paper({"x": [_record("d", "Somebody 2020", "match")]})
    # issue 52: explained deviations counted by cause, and a value the set-up was chosen to hit is no match
    registry["rero_bounds"][1]["cause"] = "paper ambiguity"
    registry["gdp_tables"].append(_record("f", "Gomez et al. 2025 (GDP), Table 2", "match") | {"chosen": "noise set to hit it"})
    header, rows = report.cause_rows(report.by_paper(registry))
    assert header[1:] == [*results.CAUSES, "explained"]
    assert rows[0] == ["Kaissis et al. 2023a (ReRo)", 0, 1, 0, 0, 0, 1] and rows[-1][-1] == "**1**"
    assert report.headline(registry)["n_setup"] == "1" and report.headline(registry)["n_by_cause"] == "paper ambiguity 1"
    assert "1 reproduce a value that our set-up was chosen to hit" in report.verdict(registry)


# gdp_tables
def test_gdp_tables_summary_gives_a_verdict_per_group_and_the_rule_of_thumb():
    text = gt.summary({"Table 3": ["match", "match"], "TopDown": ["match", "explained"]}, [{"mu": 1.23456}],
                      dict(regret=0.0123, noise=2.0, steps=400, rate=0.05), (0.0131, 0.061))
    assert "* Table 3: reproduced to the printed digits." in text and "* TopDown: 1 of 2 printed values reproduced." in text
    assert "μ* = 1.235" in text and "worst regret 0.0123 on the grid (noise 2, T = 400, rate 0.05), 0.0131 at its peak" in text
    assert "rule of thumb" not in gt.summary({}, [])


def test_gdp_tables_off_interval_and_gdpnum_row_sign_the_distance():
    assert gt.off_interval(1.0, 1.1, 1.2) == pytest.approx(-0.1) and gt.off_interval(1.15, 1.1, 1.2) == 0.0
    assert gt.gdpnum_row((1.5, 0.05, 400), 0.95, 1.0, 1.1)[-1] == "-5.00 %"


def test_gdp_tables_figure1_texts_say_whether_gdp_has_the_smallest_regret():
    alpha = np.linspace(0, 1, 11)
    lap = dict(regret=dict(eps_dp=0.03, eps_delta=0.031, zcdp=0.05, rdp=0.04, gdp=0.02), eq24=dict(zcdp=0.06, rdp=0.05),
               reps=dict(eps_dp=lambda a: 1 - a, eps_delta=lambda a: 1 - a))
    sgd = dict(regret=dict(eps_delta=0.2, zcdp=0.05, rdp=0.06, gdp=0.001), eq24=dict(zcdp=0.0501, rdp=0.07), rho=0.5,
               int_rdp=0.07, eq24_int_rdp=0.08)
    texts = gt.figure1_texts(lap, sgd, (0.1, 0.3, 0.35), alpha, 0.0512, 0.49, 1001.0)
    assert texts["f1_lap_gdp_best"] == "is" and texts["f1_sgd_gdp_best"] == "the smallest"
    assert texts["f1_zcdp_gap"] == "0.11"  # the printed value against eq. 24, the paper's quantity
    sgd["regret"]["gdp"] = 0.3
    assert gt.figure1_texts(lap, sgd, (0.1, 0.3, 0.35), alpha, None, 0.49, 1001.0)["f1_sgd_gdp_best"] == "not the smallest"


# rtm_tradeoffs
def test_rtm_tradeoffs_fig1f_and_appfig5a_paragraphs_follow_the_claims():
    m = dict(gap_lo=0.2, gap_hi=0.1, gap_f=0.3)
    assert rt.see_fig1f(m, (1, 30), True).startswith("**What we see.** The claim holds: the $d$ = 30 curve lies above")
    assert "**The $d$ = 30 curve falls below" in rt.see_fig1f(m, (1, 30), False) and "noise of 29 more coordinates" in rt.see_fig1f(m, (1, 30), True)
    m = dict(gap_l=0.2, gap_ls=0.05)
    assert "As stated" in rt.see_appfig5a(m, True, True) and "stays above the DP curve" in rt.see_appfig5a(m, True, True)
    assert "**Subsampling does not move" in rt.see_appfig5a(m, False, False) and "falls below" in rt.see_appfig5a(m, False, False)


def test_reconstruction_setup_texts_follow_the_data_set():
    assert ra.data_note("mnist", 5000).startswith("**Data.** The paper's MNIST") and "5,000 MNIST" in ra.data_note("mnist", 5000)
    assert "stand-in for MNIST" in ra.data_note("digits", 1797)
    book = yaml.safe_load((ROOT / "notebooks" / "params" / "reconstruction_attacks.yaml").read_text())
    texts = ra.setup_texts(book, 5000, 784, "MNIST")
    assert texts["pool_size"] == "4,001" and texts["n_params"] == "7,960" and texts["delta"] == "1e-05"
    assert texts["fig1_max_iterations"] == f"{book['fig1_max_iterations']:,}" and texts["fig4_rate"] == f"{book['fig4_rate']:g}"


def test_figure_8_names_the_tenfold_values_it_does_not_draw():
    tenfold = {(10.0, 2): 0.61, (10.0, 8): 0.4, (1.0, 2): 0.2}
    text = ra._undrawn(tenfold, [1.0, 10.0], [2, 8])
    assert text == "; at ε = 100, which the figure does not draw, the gradient-based attack succeeds with 0.610 (prior 2), 0.400 (prior 8)"
    assert ra._undrawn({(1.0, 2): 0.2}, [1.0, 10.0], [2]) == ""


@pytest.mark.parametrize("states, says", [({"fig5b/q0.01/improved_attack": "match", "fig5b/q0.99/improved_attack": "match"},
                                           "matches the values the paper's text states at q = 0.01 and 0.99"),
                                          ({"fig5b/q0.99/improved_attack": "mismatch"}, "At q = 0.99 it lies outside")])
def test_figure_5b_says_how_each_stated_value_fares(states, says):
    fig5 = {q: _game([0.3]) for q in (0.01, 0.99)}
    for q in fig5:
        fig5[q].success["improved"] = fig5[q].success["prior-aware"]
    assert says in ra.see_fig5(fig5, {0.01: 0.4, 0.99: 0.5}, [0.01, 0.99], 1.0, states)


def test_risk_report_shows_a_bayes_bound_near_guessing_as_its_excess():
    assert rr._above_guessing(0.99 + 1.2e-6, 0.99) == "0.99 + 1.3e-06" and rr._above_guessing(0.75, 0.5) == "0.7500"


def test_risk_report_glance_reads_the_first_run_at_the_smallest_levels_rounded_up():
    report = SimpleNamespace(epsilon_pld=7.91234, gdp=SimpleNamespace(mu=1.123451, regret=0.0123),
                             tpr=np.array([0.2, 0.0123451]), rero=SimpleNamespace(upper=np.array([0.5, 0.0123451])),
                             rtm=SimpleNamespace(tpr=np.array([0.1, 0.00123451]), gamma=np.array([0.3, 0.00223451]),
                                                 dimension=1))
    text = rr.glance_reading([("A", 9.4, 0.3, 2000, 1e-5)], [report], np.array([0.1, 1e-3]), np.array([0.1, 1e-3]))
    assert text.startswith("the first run, A, satisfies (ε\u00a0=\u00a07.913, δ\u00a0=\u00a01e\u201105)-DP and "
                           "μ\u00a0=\u00a01.1235-GDP at regret 1.23 × 10⁻²")
    assert "TPR above 0.01235 at FPR 0.001" in text and "above 0.01235 at prior κ = 0.001" in text
    assert "In the relaxed threat model (d = 1) these two bounds fall to 0.001235 and 0.002235." in text
    report.rtm.gamma[1] = 0.00123451  # at kappa = FPR the two RTM bounds agree
    text = rr.glance_reading([("A", 9.4, 0.3, 2000, 1e-5)], [report], np.array([0.1, 1e-3]), np.array([0.1, 1e-3]))
    assert "In the relaxed threat model (d = 1) both fall to 0.001235." in text


def test_reconstruction_fig2_says_the_gap_is_no_weakness_of_alg2_only_when_the_likelihood_attack_shares_it():
    def setting(bound, alg2, likelihood):
        rates = {"prior-aware": (alg2, alg2 - 0.05, alg2 + 0.05), "likelihood": (likelihood, likelihood - 0.05, likelihood + 0.05)}
        return {"res": SimpleNamespace(rate=rates.get), "bound": bound, "orth": bound - 0.05, "rdp": 0.99}

    soundness = [("Fig. 2, ε = 1", None, None, 0.1, 0.2)]
    far = {1.0: setting(0.2, 0.15, 0.16), 10.0: setting(0.76, 0.585, 0.585)}
    text = ra.see_fig2(far, [1.0, 10.0], ra.fig2_findings(far, [1.0, 10.0], soundness))
    assert "At ε = 10, where the gap is largest, it too lies 0.175 below the bound, so the gap is not a weakness" in text
    close = {1.0: setting(0.2, 0.15, 0.16), 10.0: setting(0.76, 0.585, 0.62)}
    text = ra.see_fig2(close, [1.0, 10.0], ra.fig2_findings(close, [1.0, 10.0], soundness))
    assert "it too lies 0.140 below the bound, so" in text
    near = {1.0: setting(0.2, 0.15, 0.16), 10.0: setting(0.76, 0.585, 0.68)}  # near the bound, not significantly above
    text = ra.see_fig2(near, [1.0, 10.0], ra.fig2_findings(near, [1.0, 10.0], soundness))
    assert "it too lies 0.080 below the bound. Even" in text and "not a weakness" not in text


def test_risk_report_command_lines_are_this_runs_with_the_flags_that_differ_from_the_clis_defaults():
    run = ("A", 9.4, 16384 / 50000, 2000, 1e-5)
    text = rr.cli_text(run, np.array([1e-3, 1e-2, 0.1]), [1e-3, 1e-2, 0.1], [0.01, 0.5], 1, ("tpr", 0.05, 1e-3), 1e-4)
    assert text["cli_report"] == "`python -m fdp report --noise-multiplier 9.4 --sampling-rate 0.32768 --steps 2000`"
    assert text["cli_calibrate"].startswith("`python -m fdp calibrate --sampling-rate 0.32768 --steps 2000 --tpr-at-fpr 0.05 0.001 "
                                            "--discretization 0.0001` (or `--epsilon`, `--mu`, `--advantage`, `--rero GAMMA")
    assert "--tpr-at-fpr TPR FPR" not in text["cli_calibrate"] and text["cli_rero_rtol"] == "1\u00a0×\u00a010⁻⁴"
    text = rr.cli_text(("B", 7.0, 4096 / 549361, 405, 1e-6), [1e-3], [1e-3, 1e-2, 0.1], [0.01, 0.5], 3, ("epsilon", 8.0, None), 1e-3)
    assert text["cli_report"].endswith(f"--sampling-rate {4096 / 549361!r} --steps 405 --delta 1e-06 --kappa 0.001 --rtm-dimension 3`")
    assert "--epsilon 8.0 --delta 1e-06 --discretization 0.001` (or `--mu`" in text["cli_calibrate"]
    assert "--rero 0.05 --kappa 0.001 " in rr.cli_text(run, [1e-3], [1e-3], [0.5], 1, ("rero", 0.05, 1e-3), 1e-4)["cli_calibrate"]
    numpy = rr.cli_text((*run[:4], np.float64(1e-6)), [1e-3], [1e-3], [0.5], np.int64(3), ("epsilon", 8.0, None), 1e-4)
    assert "--delta 1e-06 --kappa" in numpy["cli_report"] and "--rtm-dimension 3`" in numpy["cli_report"]  # not np.float64(...)
    rtm = rr.cli_text(run, [1e-3], [1e-3], [0.5], 2, ("rtm_tpr", 0.05, 1e-3), 1e-4)["cli_calibrate"]
    assert "--rtm-tpr-at-fpr 0.05 0.001 --rtm-dimension 2 --discretization" in rtm


def test_risk_report_calibrate_command_line_runs(capsys):
    # the line the page prints is one the CLI accepts, and it finds the noise for that target
    from fdp import cli
    line = rr.cli_text(("A", 1.0, 0.01, 10, 1e-5), [1e-3], [1e-3], [0.5], 1, ("advantage", 0.1, None), 1e-3)["cli_calibrate"]
    assert line.startswith("`python -m fdp calibrate ")
    assert cli.main(line.split("`")[1].split()[3:]) == 0
    assert "noise" in capsys.readouterr().out


def test_risk_report_checked_section_says_what_this_run_compares():
    paper = {"de_eps8/mu": {"paper": 1.57}, "de_eps8/epsilon_rdp": {"paper": 8.0}}
    both = rr.checked_text("match", "match", paper)
    assert "(noise 9.4, sampling rate 0.32768, 2,000 steps)" in both and "so both are compared" in both
    assert "$\\varepsilon$ = 8 at δ\u00a0=\u00a01e-05, which" in both and "$\\mu^*$ = 1.57 (Gomez et al., Sec. 5)" in both
    assert "so only $\\mu^*$ is compared" in rr.checked_text("match", "not compared", paper)
    assert "neither is compared here" in rr.checked_text("not compared", "not compared", paper)


# your_run


def test_your_run_command_lines_print_the_pages_numbers(capsys):
    """The report line the page prints reads the page's run (JSON equal to fdp.risk.report of the same run), and the
    calibrate line finds the noise for the page's first target."""
    import json

    from fdp import cli, dpsgd, risk
    from fdp_book.chapters import your_run as yr

    lines = yr.commands(0.9, 512, 20000, 3.0, 1e-6, ("epsilon", 4.0, None), 1e-3)
    assert lines["cli_report"] == ("`python -m fdp report --noise-multiplier 0.9 --batch-size 512 --dataset-size 20000 "
                                   "--epochs 3 --delta 1e-06`")
    assert lines["cli_calibrate"] == ("`python -m fdp calibrate --batch-size 512 --dataset-size 20000 --epochs 3 --epsilon 4.0 "
                                      "--delta 1e-06 --discretization 0.001`")
    assert cli.main(lines["cli_report"].strip("`").split()[3:] + ["--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    page = risk.report(dpsgd(0.9, batch_size=512, dataset_size=20000, epochs=3.0), delta=1e-6)
    assert printed["mechanism"]["steps"] == page.mechanism.steps == 118  # 3 * 20000 / 512 = 117.2, rounded up
    assert printed["dp"]["epsilon_pld"] == page.epsilon_pld and printed["mia"]["tpr_upper"] == page.tpr.tolist()
    assert cli.main(lines["cli_calibrate"].strip("`").split()[3:]) == 0 and "noise_multiplier" in capsys.readouterr().out
    assert "--tpr-at-fpr 0.05 0.001 --disc" in yr.commands(1.0, 1, 2, 1, 1e-5, ("tpr", 0.05, 1e-3), 1e-4)["cli_calibrate"]
    assert "--rero 0.05 --kappa 0.001 --disc" in yr.commands(1.0, 1, 2, 1, 1e-5, ("rero", 0.05, 1e-3), 1e-4)["cli_calibrate"]


def test_your_run_epsilon_table_names_the_tool_of_each_accountant_and_tf_privacys_halved_noise():
    from fdp import dpsgd, risk
    from fdp.accounting import accountants
    from fdp_book.chapters import your_run as yr

    r = risk.report(dpsgd(1.1, 256 / 60000, 7032), discretization=1e-3, rero_discretization=1e-3, rtm_discretization=1e-3)
    half = accountants.epsilon(dpsgd(0.55, 256 / 60000, 7032), 1e-5, accountant="rdp")  # as the page computes it
    assert half > 5 * r.epsilon_rdp and len(yr.epsilon_rows(r, float("inf"))[1]) == len(yr.epsilon_rows(r, None)[1]) == 3
    header, rows = yr.epsilon_rows(r, half)
    assert header[1] == "ε at most" and [row[0] for row in rows][:3] == ["PLD (tight)", "RDP, dp_accounting's orders",
                                                                        "RDP, Opacus's orders"]
    assert "used_microbatching=True" in rows[3][3] and float(rows[0][2]) <= r.epsilon_pld <= float(rows[0][1])
    assert f"{100 * (r.epsilon_rdp / r.epsilon_pld - 1):.0f} % above the tight one" in yr.see_epsilon(r, 60000)
    assert "not below one over the data-set size" not in yr.see_epsilon(r, 60000)
    assert "not below one over the data-set size (1e-05)" in yr.see_epsilon(r, 100000)
    # issue 53's new user: Opacus samples at 1 / len(loader) = 1/235 and takes 235 steps per epoch (7,050 in 30)
    opacus = yr.see_epsilon(r, 60000, 256, 30)
    assert "1/235 = 0.0042553" in opacus and "(7,050 in all)" in opacus and "--steps 7050 --delta 1e-05`" in opacus
    assert "Opacus" not in yr.see_epsilon(r, 60000)
    assert "{doc}`glossary <../glossary>`" in yr.plain_words(r) and "## In plain words" not in yr.plain_words(r)


def test_your_run_calibration_sentence_and_caveats():
    """Each target's noise rounded up beside the run's own, and the library's warnings listed under it, stars escaped."""
    from fdp_book.chapters import your_run as yr

    report = SimpleNamespace(warnings=("mu* lies in [1, 2]",), mechanism=SimpleNamespace(noise_multiplier=1.1))
    calibrations = [SimpleNamespace(noise_multiplier=1.52026, warnings=()),
                    SimpleNamespace(noise_multiplier=0.9608, warnings=("the risk reached lies in [0.1, 0.2]",))]
    text = yr.see_calibration(["ε ≤ 1", "TPR ≤ 0.005 at FPR 0.001"], calibrations, report)
    assert "ε ≤ 1 holds with a noise multiplier of 1.521 or more; TPR ≤ 0.005" in text and "(this run uses 1.1)" in text
    assert "* μ\\* lies in [1, 2]" in text and "* TPR ≤ 0.005 at FPR 0.001: the risk reached" in text
    assert yr.caveats(SimpleNamespace(warnings=()), calibrations[:1], ["x"]) == ""


def test_rtm_dpsgd_search_notes_show_the_librarys_notes_in_the_pages_names(monkeypatch):
    """A search that leaves the page's bounds is a note under the cell naming sandwich_bounds, shown once; other
    warnings pass through unchanged."""
    import warnings

    import IPython.display

    from fdp import FDPWarning

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda md: shown.append(md.data))

    with pytest.warns(UserWarning, match="other"):
        notes = rd.SearchNotes().start()
        for _ in range(2):
            warnings.warn("the noise searched for lies outside bounds (0.2, 50.0): the search moved to [0.05, 0.2]",
                          FDPWarning)
        warnings.warn("other", UserWarning)
        notes.show()
    assert len(shown) == 1 and shown[0].count("outside sandwich_bounds (0.2, 50.0)") == 1
    assert shown[0].startswith("**Note.** The noise searched")


def test_your_run_glance_reads_the_smallest_levels_rounded_up():
    from fdp import dpsgd, risk
    from fdp_book.chapters import your_run as yr

    r = risk.report(dpsgd(1.1, 256 / 60000, 7032), fpr=[0.1, 1e-3], kappa=[0.1, 1e-3], discretization=1e-3,
                    rero_discretization=1e-3, rtm_discretization=1e-3)
    box = yr.glance(r, ["ε ≤ 1 at δ = 1e-05"], [SimpleNamespace(noise_multiplier=1.52026)])
    assert box.startswith(":::{admonition} Results at a glance") and box.rstrip().endswith(":::")
    assert f"at a false-positive rate of 0.001, any attack's true-positive rate is at most {upper(r.tpr[1], 4)}" in box
    assert f"at a prior of 0.001, any attack succeeds with probability at most {upper(r.rero.upper[1], 4)}" in box
    assert "**Noise for ε ≤ 1 at δ = 1e-05:** 1.521 or more." in box


def test_the_risk_report_records_de_et_al_s_run_wherever_it_stands_and_no_other_run_under_its_name():
    """Issue 53's new user: with their own run first, the page recorded their numbers as `de_eps8/mu`."""
    de, mine = ("De", 9.4, 16384 / 50000, 2000, 1e-5), ("mine", 0.8, 512 / 45000, 1758, 2e-5)
    assert rr.paper_run([mine, de]) == 1 and rr.paper_run([de]) == 0 and rr.paper_run([mine]) is None


def test_rtm_tradeoffs_figure2c_at_more_steps_says_what_the_comparable_points_show():
    none = rt.steps_check_text({10: (0.72, 0, 2), 100: (0.14, 0, 0)}, 1)
    assert "At 10 and 100 steps (the figure above has 1)" in none and "by up to 0.72 and 0.14" in none
    assert "at 0 of 2 and none of none" in none and "show no amplification" in none
    assert "some of the amplification" in rt.steps_check_text({10: (0.5, 1, 3)}, 1)
    assert "cannot show an amplification either way" in rt.steps_check_text({100: (0.1, 0, 0)}, 1)
    assert rt.steps_check_text({}, 1).startswith("This run repeats the comparison at no other")
