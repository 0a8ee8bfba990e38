"""The empirical trade-off curve of a threshold test against closed forms."""

import numpy as np
import pytest
from scipy.stats import norm

from fdp.experiments.attacks import empirical_tradeoff


def test_gaussian_scores_approach_the_gaussian_tradeoff_curve():
    rng = np.random.default_rng(1)
    mu = 1.0
    s0 = rng.standard_normal(200_000)
    s1 = rng.standard_normal(200_000) + mu
    t, alpha, beta = empirical_tradeoff(s0, s1, thresholds=np.linspace(-2, 3, 11))
    assert np.allclose(alpha, norm.sf(t), atol=4e-3)
    assert np.allclose(beta, norm.cdf(t - mu), atol=4e-3)


def test_count_of_thresholds_spans_the_whole_curve_and_batches():
    rng = np.random.default_rng(2)
    s0 = rng.standard_normal((3, 100))
    s1 = rng.standard_normal((3, 100)) + 2
    t, alpha, beta = empirical_tradeoff(s0, s1, thresholds=50)
    assert t.shape == (50,) and alpha.shape == beta.shape == (3, 50)
    assert np.all(alpha[:, 0] == 1) and np.all(beta[:, 0] == 0)
    assert np.all(alpha[:, -1] == 0) and np.all(beta[:, -1] == 1)
    assert np.all(np.diff(alpha, axis=-1) <= 0) and np.all(np.diff(beta, axis=-1) >= 0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(scores_h0=[], scores_h1=[1.0]), "scores_h0"),
        (dict(scores_h0=[np.nan], scores_h1=[1.0]), "scores_h0"),
        (dict(scores_h0=[[0.0]], scores_h1=[[1.0], [2.0]]), "batch shape"),
        (dict(scores_h0=[0.0], scores_h1=[1.0], thresholds=1), "thresholds"),
        (dict(scores_h0=[0.0], scores_h1=[1.0], thresholds=[1.0, 0.0]), "increasing"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        empirical_tradeoff(**kwargs)


def test_compare_to_curve_finds_no_violation_for_the_true_curve_and_one_for_a_stronger_test():
    from fdp.curves import tradeoff
    from fdp.experiments.attacks import compare_to_curve

    rng = np.random.default_rng(11)
    s0 = rng.standard_normal((400, 300))
    s1 = 1.0 + rng.standard_normal((400, 300))
    _, alpha, beta = empirical_tradeoff(s0, s1, thresholds=np.linspace(-2.5, 3.5, 40))
    exact = compare_to_curve(alpha, beta, tradeoff.gaussian(1.0))
    assert exact.violation == 0.0
    assert exact.max_gap < 0.01
    assert np.all(exact.error > 0) and exact.beta_sd.shape == (40,)
    # the same points against the curve of a weaker mechanism (mu = 0.5) lie far below it
    weaker = compare_to_curve(alpha, beta, tradeoff.gaussian(0.5))
    assert weaker.violation > 0.1
    with pytest.raises(ValueError, match="alpha and beta"):
        compare_to_curve(alpha[:1], beta[:1], tradeoff.gaussian(1.0))
    with pytest.raises(ValueError, match="z"):
        compare_to_curve(alpha, beta, tradeoff.gaussian(1.0), z=0.0)
