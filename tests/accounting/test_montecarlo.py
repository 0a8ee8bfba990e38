"""Hayes et al. Algorithm 1 (fdp.accounting.montecarlo) against closed forms, and its bookkeeping.

For q = 1 the DP-SGD pair is N(0, sigma^2 I_T) vs N(1, sigma^2 I_T), whose trade-off curve is
gaussian(sqrt(T) / sigma); for T = 1 and q < 1 it is the subsampled Gaussian of RTM Lemma 9.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from fdp import Mechanism
from fdp.accounting import montecarlo, pld
from fdp.accounting import montecarlo as mc
from fdp.curves import rero, tradeoff
from fdp.validation import ResourceLimitError


def _truth(sigma, q, steps, kappa):
    if q == 1.0:
        curve = tradeoff.gaussian_composition(1.0 / sigma, steps=steps)
    else:
        assert steps == 1
        curve = tradeoff.subsample(tradeoff.gaussian(1.0 / sigma), q)
    return rero.gamma(curve, kappa)


@pytest.mark.parametrize(
    "sigma,q,steps,kappa",
    [
        (1.0, 1.0, 1, 0.1),
        (2.0, 1.0, 1, 0.01),
        (0.7, 1.0, 1, 0.05),
        (1.0, 0.5, 1, 0.1),
        (0.8, 0.2, 1, 0.05),
        (2.0, 1.0, 4, 0.1),
        (3.0, 1.0, 9, 0.02),
    ],
)
def test_gamma_mc_matches_closed_form(sigma, q, steps, kappa):
    res = mc.gamma_mc(Mechanism("gaussian", sigma, q, steps), kappa, samples=200_000, seed=2024, confidence=0.999)
    truth = float(_truth(sigma, q, steps, kappa))
    assert res.lower[0] <= truth <= res.upper[0], (res.lower[0], res.estimate[0], res.upper[0], truth)
    # the interval is informative, not trivially [0, 1]
    assert res.upper[0] - res.lower[0] < 0.05
    assert res.estimate[0] == pytest.approx(truth, abs=0.02)


def test_gamma_mc_several_kappas():
    kappas = np.array([0.01, 0.1, 0.5])
    res = mc.gamma_mc(Mechanism("gaussian", 1.5, 1.0, 2), kappas, samples=100_000, seed=1, confidence=0.999)
    truth = _truth(1.5, 1.0, 2, kappas)
    assert res.estimate.shape == (3,)
    np.testing.assert_array_equal(res.kappa, kappas)
    assert np.all((res.lower <= truth) & (truth <= res.upper))
    assert np.all(np.diff(res.estimate) > 0)
    assert res.samples == 100_000 and res.seed == 1 and res.confidence == 0.999 and res.interval_method == "asymptotic"


def test_confidence_interval_coverage():
    # 20 independent seeded runs at the 95% level: the interval covers the truth in most of them
    sigma, kappa = 1.0, 0.1
    truth = float(_truth(sigma, 1.0, 1, kappa))
    covered = 0
    for seed in range(20):
        res = mc.gamma_mc(Mechanism("gaussian", sigma, 1.0, 1), kappa, samples=20_000, seed=100 + seed, confidence=0.95)
        covered += bool(res.lower[0] <= truth <= res.upper[0])
    assert covered >= 16


def test_estimates_vary_with_seed_and_repeat_with_same_seed():
    a = mc.gamma_mc(Mechanism("gaussian", 1.0, 0.5, 3), 0.1, samples=10_000, seed=3)
    b = mc.gamma_mc(Mechanism("gaussian", 1.0, 0.5, 3), 0.1, samples=10_000, seed=3)
    c = mc.gamma_mc(Mechanism("gaussian", 1.0, 0.5, 3), 0.1, samples=10_000, seed=4)
    np.testing.assert_array_equal(a.estimate, b.estimate)
    assert a.estimate[0] != c.estimate[0]


# ---------------------------------------------------------------------------------------------
# log likelihood ratios
# ---------------------------------------------------------------------------------------------


def test_log_ratios_distribution_single_step():
    # q = 1, T = 1: log ratio = (w - 1/2) / sigma^2 with w ~ N(0, sigma^2), i.e. N(-1/(2 sigma^2), 1/sigma^2)
    sigma = 1.7
    lr = mc.log_likelihood_ratios(Mechanism("gaussian", sigma, 1.0, 1), 100_000, seed=9)
    assert lr.shape == (100_000,)
    assert lr.mean() == pytest.approx(-1 / (2 * sigma**2), abs=4 / sigma / math.sqrt(1e5))
    assert lr.std() == pytest.approx(1 / sigma, rel=0.01)
    # E_nu[mu/nu] = 1 for any q, T
    lr2 = mc.log_likelihood_ratios(Mechanism("gaussian", 3.0, 0.3, 5), 100_000, seed=9)
    assert np.exp(lr2).mean() == pytest.approx(1.0, abs=0.01)


def test_log_ratios_subsampled_formula():
    # log((1 - q) + q exp((w - 1/2) / sigma^2)) for one step, with the same noise as the q = 1 run
    sigma, q = 1.3, 0.25
    full = mc.log_likelihood_ratios(Mechanism("gaussian", sigma, 1.0, 1), 50_000, seed=5)
    sub = mc.log_likelihood_ratios(Mechanism("gaussian", sigma, q, 1), 50_000, seed=5)
    np.testing.assert_allclose(sub, np.log((1 - q) + q * np.exp(full)), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("sigma,q,steps", [(1.0, 0.5, 7), (2.0, 1.0, 10)])
def test_log_ratios_do_not_depend_on_block_size(sigma, q, steps):
    # `block` only bounds memory while streaming over steps: the numbers must not change with it
    ref = mc.log_likelihood_ratios(Mechanism("gaussian", sigma, q, steps), 2_000, seed=11, block=steps)
    for block in (1, 3, 256):
        got = mc.log_likelihood_ratios(Mechanism("gaussian", sigma, q, steps), 2_000, seed=11, block=block)
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12, err_msg=f"block={block}")


def test_log_ratios_do_not_depend_on_n_jobs():
    a = mc.log_likelihood_ratios(Mechanism("gaussian", 1.0, 0.5, 4), 5_000, seed=2, chunk=1_200, n_jobs=1)
    b = mc.log_likelihood_ratios(Mechanism("gaussian", 1.0, 0.5, 4), 5_000, seed=2, chunk=1_200, n_jobs=2)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (5_000,)


def test_gamma_mc_does_not_depend_on_n_jobs():
    # more samples than one chunk (100,000), so several chunks run in parallel
    a = mc.gamma_mc(Mechanism("gaussian", 1.0, 0.5, 1), [0.01, 0.1], samples=210_000, seed=8, n_jobs=1)
    b = mc.gamma_mc(Mechanism("gaussian", 1.0, 0.5, 1), [0.01, 0.1], samples=210_000, seed=8, n_jobs=2)
    np.testing.assert_array_equal(a.estimate, b.estimate)
    np.testing.assert_array_equal(a.lower, b.lower)


# ---------------------------------------------------------------------------------------------
# gamma_from_log_ratios
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n,kappa", [(10, 0.1), (7, 1e-9), (1000, 0.009)])
def test_too_few_kept_samples_is_an_error(n, kappa):
    # Algorithm 1 keeps ceil(kappa N) samples; below 10 the estimate is noise (kappa N < 10 refused)
    with pytest.raises(ValueError, match="too few"):
        mc.gamma_from_log_ratios(np.zeros(n), kappa)
    with pytest.raises(ValueError, match="samples"):
        mc.gamma_mc(Mechanism("gaussian", 1.0, 0.1, 2), kappa, samples=n)


@pytest.mark.parametrize("n,kappa", [(100, 0.1), (100, 0.15), (10_000, 0.001), (100_000, 1e-4), (70, 0.999)])
def test_equal_ratios_give_kept_fraction(n, kappa):
    # all ratios 1: gamma_hat = (1/N) * ceil(kappa N) (division by N, not by ceil(kappa N))
    res = mc.gamma_from_log_ratios(np.zeros(n), kappa)
    assert res.estimate[0] == pytest.approx(math.ceil(kappa * n) / n, rel=1e-12)
    assert res.std_error[0] == pytest.approx(0.0, abs=1e-12)


def test_hand_made_ratios():
    # mean ratio 1 (E_P[Q/P] = 1, no collapse), 40 samples so that every kappa keeps >= 10
    ratios = np.tile([0.5, 4.0, 1.0, 3.0, 2.0, 0.25, 0.25, 1.0], 5) / 1.5
    rng = np.random.default_rng(0)
    res = mc.gamma_from_log_ratios(np.log(rng.permutation(ratios)), [0.25, 0.3, 0.5])
    n = ratios.size
    top = np.sort(ratios)[::-1]
    expected = [top[: math.ceil(k * n)].sum() / n for k in (0.25, 0.3, 0.5)]
    np.testing.assert_allclose(res.estimate, expected, rtol=1e-12)
    # standard error: sd of (r - t)^+ over all N samples, divided by sqrt(N), t the smallest kept ratio
    m = math.ceil(0.25 * n)
    excess = np.concatenate([top[:m] - top[m - 1], np.zeros(n - m)])
    assert res.std_error[0] == pytest.approx(excess.std() / math.sqrt(n), rel=1e-10)
    z = norm.isf(0.025)
    assert res.lower[0] == pytest.approx(max(expected[0] - z * res.std_error[0], 0.0), rel=1e-10)


@pytest.mark.parametrize("seed", [0, 1])
def test_dkw_interval_contains_asymptotic(seed):
    lr = mc.log_likelihood_ratios(Mechanism("gaussian", 1.0, 0.3, 2), 20_000, seed=seed)
    kappas = [0.001, 0.01, 0.1, 0.5, 0.9]
    asym = mc.gamma_from_log_ratios(lr, kappas)
    dkw = mc.gamma_from_log_ratios(lr, kappas, interval_method="dkw")
    np.testing.assert_array_equal(asym.estimate, dkw.estimate)
    assert np.all(dkw.lower <= asym.lower) and np.all(dkw.upper >= asym.upper)
    assert np.all(dkw.upper - dkw.lower > asym.upper - asym.lower)
    for r in (asym, dkw):
        assert np.all((r.lower <= r.estimate) & (r.estimate <= r.upper))
        assert np.all(r.lower >= 0) and np.all(r.upper <= 1)


def test_higher_confidence_is_wider():
    lr = mc.log_likelihood_ratios(Mechanism("gaussian", 1.0, 1.0, 1), 10_000, seed=0)
    a = mc.gamma_from_log_ratios(lr, 0.1, confidence=0.9)
    b = mc.gamma_from_log_ratios(lr, 0.1, confidence=0.99)
    assert b.lower[0] < a.lower[0] < a.upper[0] < b.upper[0]


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(noise_multiplier=0.0), "noise_multiplier"),
        (dict(noise_multiplier=-1.0), "noise_multiplier"),
        (dict(noise_multiplier=float("nan")), "noise_multiplier"),
        (dict(sampling_rate=0.0), "sampling_rate"),
        (dict(sampling_rate=1.5), "sampling_rate"),
        (dict(steps=2.5), "steps"),
        (dict(steps="3"), "steps"),
        (dict(steps=True), "steps"),
        (dict(steps=0), "steps"),
        (dict(kappa=0.0), "kappa"),
        (dict(kappa=1.0), "kappa"),
        (dict(kappa=-0.1), "kappa"),
        (dict(kappa=1.5), "kappa"),
        (dict(kappa=float("nan")), "kappa"),
        (dict(samples=0), "samples"),
        (dict(samples=100.0), "samples"),
        (dict(confidence=1.0), "confidence"),
        (dict(confidence=0.0), "confidence"),
        (dict(interval_method="bennett"), "interval_method"),
    ],
)
def test_gamma_mc_bad_arguments(kwargs, name):
    args = dict(noise_multiplier=1.0, sampling_rate=0.5, steps=2, kappa=0.1, samples=100, seed=0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        mc.gamma_mc(Mechanism("gaussian", *(args.pop(k) for k in ("noise_multiplier", "sampling_rate", "steps"))), **args)


@pytest.mark.parametrize("kwargs,name", [(dict(chunk=0), "chunk"), (dict(block=0), "block"), (dict(block=1.5), "block")])
def test_log_ratio_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        mc.log_likelihood_ratios(Mechanism("gaussian", 1.0, 0.5, 2), 100, **kwargs)


@pytest.mark.parametrize("lr", [[], [0.0, np.nan], [0.0, np.inf], [-np.inf, 0.0], np.zeros((3, 3))])
def test_gamma_from_log_ratios_refuses_bad_ratios(lr):
    with pytest.raises(ValueError, match="log_ratios"):
        mc.gamma_from_log_ratios(lr, 0.1)


def test_laplace_mc_within_ci_of_bracket():
    """Algorithm 1 with Laplace noise (the SLM) covers the certified PLD bracket."""

    kappa = np.array([0.01, 0.1])
    res = mc.gamma_mc(Mechanism("laplace", 1.0, 0.5, 5), kappa, samples=200_000, seed=3)
    low, up = pld.tradeoff_bracket(Mechanism("laplace", 1.0, 0.5, 5), discretization=1e-3).gamma(kappa)
    assert np.all(res.lower <= up) and np.all(low <= res.upper)
    assert np.all(res.upper - res.lower < 0.05 * res.estimate)


def test_mc_bad_mechanism():
    with pytest.raises(ValueError, match="noise"):
        mc.gamma_mc(Mechanism("cauchy", 1.0, 0.5, 5), [0.1], samples=100)
    with pytest.raises(ValueError, match="mechanism must be a fdp.Mechanism"):
        mc.gamma_mc("laplace", [0.1], samples=100)


def test_gamma_spread_is_the_asymptotic_standard_error():
    # 40 independent runs scatter by about the estimator's asymptotic standard error
    mechanism, kappa, n = Mechanism("gaussian", 1.0), 0.1, 20_000
    spread = mc.gamma_spread(mechanism, kappa, n, seeds=range(40))
    se = mc.gamma_from_log_ratios(mc.log_likelihood_ratios(mechanism, n, seed=99), kappa).std_error[0]
    assert 0.6 < spread / se < 1.6
    assert mc.gamma_spread(mechanism, kappa, n, seeds=[1, 2]) == mc.gamma_spread(mechanism, kappa, n, seeds=[1, 2])


@pytest.mark.parametrize("kwargs, name", [(dict(seeds=[1]), "seeds"), (dict(seeds=[1, -2]), "seeds"),
                                          (dict(kappa=1.0), "kappa"), (dict(mechanism=1.0), "mechanism"),
                                          (dict(samples=50), "samples")])
def test_gamma_spread_bad_arguments(kwargs, name):
    args = dict(mechanism=Mechanism("gaussian", 1.0), kappa=0.1, samples=1_000, seeds=[1, 2]) | kwargs
    with pytest.raises(ValueError, match=name):
        mc.gamma_spread(**args)


# --- from test_extremes, the first round (no silently wrong answers: extreme but legal inputs) ---------------


def test_mc_interval_in_kappa_one_for_a_healthy_run():
    res = montecarlo.gamma_mc(Mechanism("gaussian", 1.0, 0.05, 20), [1e-3, 0.1, 0.9], samples=50_000, seed=3)
    assert res.warnings == () and abs(res.mass - 1) < 0.1
    assert np.all(res.kappa <= res.lower) and np.all(res.lower <= res.estimate)
    assert np.all(res.estimate <= res.upper) and np.all(res.upper <= 1.0)


@pytest.mark.parametrize("seed", [-1, 1.5, "a", None, True])
def test_mc_bad_seed_is_a_value_error(seed):
    with pytest.raises(ValueError, match="seed"):
        montecarlo.log_likelihood_ratios(Mechanism("gaussian", 1.0, 0.1, 2), 100, seed=seed)


def test_mc_work_guard():
    with pytest.raises(ResourceLimitError, match="samples"):
        montecarlo.gamma_mc(Mechanism("gaussian", 1.0, 0.1, 10**7), [0.1], samples=10**6)
