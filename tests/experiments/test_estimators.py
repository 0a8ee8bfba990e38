"""The ReRo estimators side by side (fdp.experiments.estimators), against closed forms and independent computations."""

import math

import numpy as np
import pytest

from fdp import Mechanism
from fdp.accounting import accountants, edgeworth, ground_truth
from fdp.curves import rero, tradeoff
from fdp.experiments import estimators


def test_certified_gamma_is_the_closed_form_at_full_batch_and_brackets_mpmath_otherwise():
    low, up = estimators.certified_gamma(Mechanism("gaussian", 0.5, 1.0, 3), 0.1)
    assert low == up == rero.gamma(tradeoff.gaussian(2 * math.sqrt(3)), 0.1)
    mechanism = Mechanism("laplace", 1.0, 0.5, 2)
    low, up = estimators.certified_gamma(mechanism, 0.1, max_grid=600)
    truth = ground_truth.gamma_ground_truth(mechanism, [0.1], grid=200)
    assert low <= truth.upper[0] and truth.lower[0] <= up and up - low < 1e-2


def test_edgeworth_gamma_is_nan_where_the_series_is_no_distribution():
    with pytest.raises(ValueError):
        edgeworth.gamma_edgeworth(Mechanism("gaussian", 1 / 3, 0.1, 1), 0.1)
    assert np.isnan(estimators.edgeworth_gamma(Mechanism("gaussian", 1 / 3, 0.1, 1), 0.1))
    assert np.isnan(estimators.edgeworth_gamma(Mechanism("gaussian", 1 / 3, 0.1, 1), [0.1, 0.2])).all()
    mechanism = Mechanism("gaussian", 1.0, 0.1, 100)
    assert estimators.edgeworth_gamma(mechanism, 0.1) == edgeworth.gamma_edgeworth(mechanism, 0.1)


def test_figure_epsilon_is_pure_for_laplace_and_the_pld_for_gaussian():
    assert estimators.figure_epsilon(Mechanism("laplace", 0.5, 0.3, 7), 1e-6) == pytest.approx(7 * math.log1p(0.3 * math.expm1(2.0)))
    mechanism = Mechanism("gaussian", 0.8, 0.5, 10)
    assert estimators.figure_epsilon(mechanism, 1e-6) == accountants.epsilon(mechanism, 1e-6, discretization=1e-3)
    with pytest.raises(ValueError, match="delta"):
        estimators.figure_epsilon(mechanism, 0.0)


def test_gamma_sweep_counts_what_the_monte_carlo_misses_and_flags():
    s = estimators.gamma_sweep("gaussian", 1.0, 2, [0.5, 1.0], 0.1, mc_samples=20_000, mc_seed=3)
    assert np.array_equal(s.lower, s.upper) and np.all(s.mc_lower <= s.upper) and np.all(s.upper <= s.mc_upper)
    assert s.errors()["mc_miss"] == 0 and set(s.seconds) == {"bracket", "edgeworth", "mc"}
    hand = estimators.GammaSweep(effect_sizes=np.ones(3), lower=np.full(3, 0.5), upper=np.full(3, 0.52),
                                 edgeworth=np.array([0.5, np.nan, 0.6]), clt=np.array([0.51, 0.7, 0.51]), mc=np.array([0.51, 0.3, 0.9]),
                                 mc_lower=np.array([0.4, 0.2, 0.1]), mc_upper=np.array([0.6, 0.4, 1.0]),
                                 mc_collapsed=np.array([False, False, True]), seconds={})
    e = hand.errors()
    assert (e["invalid"], e["mc_miss"], e["mc_collapsed"]) == (1, 1, 1)
    # each error is to the farther end of the bracket [0.5, 0.52]: an upper bound on the distance to the exact gamma
    assert e["ew_gap"] == pytest.approx(0.1) and e["clt_gap"] == pytest.approx(0.2) and e["mc_gap"] == pytest.approx(0.4)
    with pytest.raises(ValueError, match="effect_sizes"):
        estimators.gamma_sweep("gaussian", 1.0, 2, [0.0], 0.1)


def test_gamma_curves_measure_relative_distances_to_the_bracket():
    kappas = [1e-5, 1e-3, 0.1]
    c = estimators.gamma_curves(Mechanism("gaussian", 2.0, 0.05, 200), kappas, discretization=1e-3)
    assert np.all(c.lower <= c.upper) and c.relative_width < 1e-2
    worst = np.maximum(np.abs(c.edgeworth - c.lower), np.abs(c.edgeworth - c.upper)) / c.lower
    assert c.edgeworth_error == pytest.approx(np.max(worst)) and c.edgeworth_error >= np.max(np.abs(c.edgeworth - c.truth) / c.truth)
    assert c.clt_vs_edgeworth == pytest.approx(np.max(np.abs(c.clt - c.edgeworth) / c.edgeworth))
    with pytest.raises(ValueError, match="kappa"):
        estimators.gamma_curves(Mechanism("gaussian", 2.0, 0.05, 200), [0.0, 0.1])


def test_gamma_threat_models_at_full_batch_are_the_closed_forms():
    # one full-batch Gaussian step: the DP curve is G_mu, the RTM curve the one-dimensional chi-square test of Thm. 2
    from fdp.accounting import rtm

    g = estimators.gamma_threat_models(Mechanism("gaussian", 1.0, 1.0, 1), 0.1, discretization=1e-4, rtm_discretization=1e-4)
    assert g["dp"] == pytest.approx(rero.gamma(tradeoff.gaussian(1.0), 0.1), abs=2e-3)
    assert g["rtm"] == pytest.approx(rero.gamma(rtm.gaussian(1.0, 1), 0.1), abs=2e-3)
    assert g["edgeworth"] == pytest.approx(g["dp"], abs=0.05) and g["rtm"] < g["dp"]
    with pytest.raises(ValueError, match="mechanism"):
        estimators.gamma_threat_models(Mechanism("laplace", 1.0), 0.1)
