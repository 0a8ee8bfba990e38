"""Reconstruction attacks on real DP-SGD runs (fdp.experiments.attacks, fdp.experiments.reconstruction) against the ReRo bounds."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdp import Mechanism
from fdp.accounting import pld
from fdp.curves import gdp, rero, tradeoff
from fdp.experiments import attacks, datasets, dpsgd, reconstruction
from fdp.experiments.dpsgd import Training
from fdp.parallel import Execution


@pytest.fixture(scope="module")
def digits_split():
    data = datasets.digits()
    perm = np.random.default_rng(0).permutation(len(data.y))
    return data, perm[:199], perm[999:]


def test_observer_inner_products_match_materialised_gradients():
    rng = np.random.default_rng(0)
    model = dpsgd.MLP(6)  # the trainer's default: 10 hidden units, 10 classes
    xk, yk = rng.random((7, 6)), rng.integers(0, 10, 7)
    xp, yp = rng.random((2, 4, 6)), rng.integers(0, 10, (2, 4))
    obs = attacks.PriorObserver(model, xp, yp, 0.3, 5)
    tr = dpsgd.train(xk, yk, xp[:, 1], yp[:, 1],
                     Training(Mechanism("gaussian", 1.0, 1.0, 5), clip_norm=0.3, learning_rate=0.5),
                     seed=1, record=True, observer=obs)
    for t in range(5):
        g = dpsgd.clip(dpsgd.per_example_gradients(model, tr.params[t], xp, yp), 0.3)  # (R, n, P)
        resid = tr.noisy[t] - tr.known[t]
        np.testing.assert_allclose(obs.inner[:, :, t], np.einsum("rnp,rp->rn", g, resid), atol=1e-12)
        np.testing.assert_allclose(obs.inner_known[:, :, t], np.einsum("rnp,rp->rn", g, tr.known[t]), atol=1e-12)
        np.testing.assert_allclose(obs.sq[:, :, t], (g**2).sum(-1), atol=1e-14)


def test_guesses_follow_their_definitions():
    rng = np.random.default_rng(1)
    inner = rng.standard_normal((50, 6, 20))
    sq = rng.random((50, 6, 20))
    np.testing.assert_array_equal(attacks.prior_aware_guess(inner), inner.sum(-1).argmax(-1))
    np.testing.assert_array_equal(attacks.top_steps_guess(inner, 1.0), attacks.prior_aware_guess(inner))
    np.testing.assert_array_equal(attacks.top_steps_guess(inner, 0.05), inner.max(-1).argmax(-1))  # top 1 of 20
    # q = 1: the likelihood is the Gaussian one, maximal for the smallest ||gbar - g_z||^2 = const - (2 inner - sq)
    run = Training(Mechanism("gaussian", 0.7, 1.0, 1), clip_norm=1.0, learning_rate=1.0)
    np.testing.assert_array_equal(attacks.log_likelihood_guess(inner, sq, run), (2 * inner - sq).sum(-1).argmax(-1))
    # ties are broken at random when a generator is given, by the first index otherwise
    tied = np.zeros((4000, 4, 1))
    assert np.all(attacks.prior_aware_guess(tied) == 0)
    picks = attacks.prior_aware_guess(tied, np.random.default_rng(0))
    assert abs(np.mean(picks == 0) - 0.25) < 0.03


def test_clopper_pearson_interval():
    rate, lo, hi = attacks.success_rate(np.zeros(20, dtype=bool))
    assert rate == 0 and lo == 0 and hi == pytest.approx(1 - 0.025 ** (1 / 20))
    rate, lo, hi = attacks.success_rate([True] * 7 + [False] * 3)
    assert (lo, hi) == pytest.approx((0.3475, 0.9333), abs=1e-4)
    with pytest.raises(ValueError, match="confidence"):
        attacks.success_rate([True], confidence=1.0)


@pytest.mark.slow
def test_prior_game_is_sound_against_the_tight_bound(digits_split):
    # soundness at small scale: full batch and Poisson sampling, each success CI must reach the bound
    data, known, pool = digits_split
    mu = gdp.mu_from_eps_delta(6.0, 1e-5)
    steps = 20
    full = reconstruction.prior_game(data.x[known], data.y[known], data.x[pool], data.y[pool],
                                     Training(Mechanism("gaussian", np.sqrt(steps) / mu, 1.0, steps), clip_norm=0.1, learning_rate=3.0),
                                     prior_sizes=[2, 10], trials=300, execution=Execution(seed=4))
    for n in (2, 10):
        bound = float(rero.gamma(tradeoff.gaussian(mu), 1.0 / n))
        for attack in reconstruction.ATTACKS:
            _, lo, _ = full.rate(attack, n)
            assert lo <= bound, (attack, n)
    assert full.rate("prior-aware", 10)[0] > 0.3  # far above the prior 0.1: the attack works
    assert full.rate("prior-aware", 2)[0] > full.rate("prior-aware", 10)[0]
    assert full.frac_clipped > 0.95
    q, sigma = 0.2, 0.8
    sub = reconstruction.prior_game(data.x[known], data.y[known], data.x[pool], data.y[pool],
                                    Training(Mechanism("gaussian", sigma, q, steps), clip_norm=0.1, learning_rate=3.0),
                                    prior_sizes=10, trials=300, execution=Execution(seed=5))
    _, up = pld.tradeoff_bracket(Mechanism("gaussian", sigma, q, steps), discretization=1e-3).gamma([0.1])
    for attack in ("prior-aware", "improved", "likelihood"):
        assert sub.rate(attack)[1] <= up[0], attack


def test_without_subtraction_the_attack_falls_to_chance_on_a_large_known_set(digits_split):
    data, known, pool = digits_split
    res = reconstruction.prior_game(data.x[known[:128]], data.y[known[:128]], data.x[pool], data.y[pool],
                                    Training(Mechanism("gaussian", 0.3, 1.0, 20), clip_norm=0.1, learning_rate=3.0), prior_sizes=10, trials=300,
                                    execution=Execution(seed=6))
    assert res.rate("prior-aware")[0] > 0.8
    _, lo, hi = res.rate("no subtraction")
    assert lo < 0.2 and hi < 0.6


@settings(max_examples=25, deadline=None)
@given(mu=st.floats(0.0, 8.0), n=st.integers(2, 2048))
def test_orthogonal_prior_success_lies_between_the_prior_and_the_bound(mu, n):
    p = rero.orthogonal_prior_success(mu, n)
    assert 1.0 / n - 1e-9 <= p <= float(rero.gamma(tradeoff.gaussian(mu), 1.0 / n)) + 1e-9


def test_orthogonal_prior_success_matches_simulation():
    x = np.random.default_rng(7).standard_normal((200_000, 10))
    x[:, 0] += 2.0
    assert rero.orthogonal_prior_success(2.0, 10) == pytest.approx((x.argmax(1) == 0).mean(), abs=0.005)


@pytest.mark.parametrize(
    "kwargs, name",
    [(dict(prior_sizes=1), "prior_sizes"), (dict(prior_sizes=10_000), "prior_sizes"), (dict(trials=0), "trials"),
     (dict(sampling_rate=0.0), "sampling_rate"), (dict(noise_multiplier=0.0), "noise_multiplier"), (dict(n_jobs=0), "n_jobs")],
)
def test_prior_game_rejects_bad_arguments(digits_split, kwargs, name):
    data, known, pool = digits_split
    base = dict(prior_sizes=10, trials=4, noise_multiplier=1.0, clip_norm=0.1, steps=2, learning_rate=1.0, seed=0)
    base.update(kwargs)
    with pytest.raises(ValueError, match=name):  # the settings objects check their fields when built
        run = Mechanism("gaussian", base.pop("noise_multiplier"), base.pop("sampling_rate", 1.0), base.pop("steps"))
        training = Training(run, **{k: base.pop(k) for k in ("clip_norm", "learning_rate")})
        execution = Execution(seed=base.pop("seed"), **({"n_jobs": base.pop("n_jobs")} if "n_jobs" in base else {}))
        reconstruction.prior_game(data.x[known], data.y[known], data.x[pool], data.y[pool], training, execution=execution,
                                  **base)


def test_fraction_within_counts_coordinates_strictly_inside_the_radius():
    rng = np.random.default_rng(0)
    rec, tgt = rng.random((5, 40)), rng.random((5, 40))
    expected = [np.mean([abs(a - b) < 0.1 for a, b in zip(r, t)]) for r, t in zip(rec, tgt)]
    np.testing.assert_allclose(reconstruction.fraction_within(rec, tgt, 0.1), expected)
    assert reconstruction.fraction_within([[0.0, 0.25]], [[0.25, 0.25]], 0.25).tolist() == [0.5]  # the boundary is outside
    with pytest.raises(ValueError, match="both be"):
        reconstruction.fraction_within(rec, tgt[:, :3], 0.1)
    with pytest.raises(ValueError, match="radius"):
        reconstruction.fraction_within(rec, tgt, 0.0)


def test_nearest_prior_success_in_blocks_is_the_one_shot_computation():
    rng = np.random.default_rng(0)
    rec, tgt, pool = rng.random((9, 12)), rng.random((9, 12)), rng.random((40, 12))
    got = reconstruction.nearest_prior_success(rec, tgt, pool, 6, 11, seed=5)
    # the whole computation at once, as App. D describes it
    g = np.random.default_rng(5)
    d_target = ((rec - tgt) ** 2).sum(-1)
    d_pool = ((rec[:, None, :] - pool[None, :, :]) ** 2).sum(-1)
    picks = np.argsort(g.random((9, 11, 40)), axis=-1)[..., :5]
    expected = d_target[:, None] < np.take_along_axis(d_pool[:, None, :], picks, axis=-1).min(axis=-1)
    assert np.array_equal(got, expected)


def test_a_design_the_data_cannot_hold_is_refused_naming_the_parameter():
    reconstruction.check_split(5000, {"known_size": 999}, {"fig1_targets": (6, 999, 128)})
    with pytest.raises(ValueError, match="known_size leaves fewer than 2 of the 1797 images"):
        reconstruction.check_split(1797, {"known_size": 1796}, {})
    with pytest.raises(ValueError, match=r"fig1_targets must be at most 3873 \(the pool: 5000 images less 999 known less "
                                         r"128 kept for the other candidates of their priors\), got 3874"):
        reconstruction.check_split(5000, {"known_size": 999}, {"fig1_targets": (3874, 999, 128)})
    with pytest.raises(ValueError, match="fig3_prior_sizes must be at most 798 .*got 1024$"):
        reconstruction.check_split(1797, {}, {"fig3_prior_sizes": ([2, 1024], 999)})


def test_full_batch_noise_gives_exactly_the_requested_epsilon():
    # sqrt(T)/sigma-GDP is (eps, delta)-DP with delta from the GDP profile (Dong et al. Cor. 2.13)
    for eps, delta, steps in ((1.0, 1e-5, 1), (10.0, 1e-5, 100), (3000.0, 1e-5, 100)):
        sigma = reconstruction.full_batch_noise(eps, delta, steps)
        assert gdp.gaussian_delta(eps, np.sqrt(steps) / sigma) == pytest.approx(delta, rel=1e-6)
    with pytest.raises(ValueError, match="steps"):
        reconstruction.full_batch_noise(1.0, 1e-5, 0)


def _settings(sigma, q, steps, sizes=(10,)):
    return reconstruction.GameResult(success={}, prior_sizes=list(sizes), mean_norm=0.0, frac_clipped=0.0, accuracy=0.0,
                                     settings=dict(noise_multiplier=sigma, sampling_rate=q, steps=steps))


def test_success_bound_is_the_gaussian_curve_for_full_batch_and_above_it_under_sampling():
    mu = np.sqrt(100) / 5.0
    exact = float(rero.gamma(tradeoff.gaussian(mu), 0.1))
    assert reconstruction.success_bound(_settings(5.0, 1.0, 100)) == pytest.approx(exact, rel=1e-12)
    assert reconstruction.success_bound(_settings(5.0, 1.0, 100), prior_size=2) == pytest.approx(
        float(rero.gamma(tradeoff.gaussian(mu), 0.5)), rel=1e-12)
    # one step at rate 1 through the PLD route is the Gaussian curve, from above (the pessimistic curve lies below f)
    one = reconstruction.success_bound(_settings(1.0, 0.999999, 1))
    assert one >= float(rero.gamma(tradeoff.gaussian(1.0 * 0.999999), 0.1)) - 1e-9
    assert one == pytest.approx(float(rero.gamma(tradeoff.gaussian(1.0), 0.1)), abs=5e-3)
    with pytest.raises(ValueError, match="prior_size"):
        reconstruction.success_bound(_settings(5.0, 1.0, 100), prior_size=-1)


def test_the_baselines_of_figure_1_against_direct_computations():
    rng = np.random.default_rng(3)
    x = rng.random((40, 12))
    brute = np.mean([min(np.mean((x[i] - x[j]) ** 2) for j in range(40) if j != i) for i in range(40)])
    assert reconstruction.nearest_neighbour_mse(x) == pytest.approx(brute, rel=1e-10)
    u = rng.random((200_000, 12))
    mc = np.mean((u[:, None, :] - x[None, :3, :]) ** 2)  # noise against three of the images
    assert reconstruction.uniform_noise_mse(x[:3]) == pytest.approx(mc, rel=5e-3)
    with pytest.raises(ValueError, match="images"):
        reconstruction.nearest_neighbour_mse(x[:1])


def test_class_correlation_signs():
    x = np.array([[1.0, 0.0, 0.0, 0.0], [0.9, 0.1, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.1, 0.9, 0.0]])
    y = np.array([0, 0, 1, 1])
    shape0, shape1 = x[:2].mean(0) - x.mean(0), x[2:].mean(0) - x.mean(0)
    by_hand = (np.corrcoef(x[0], shape0)[0, 1] + np.corrcoef(x[2], shape1)[0, 1]) / 2
    assert reconstruction.class_correlation(x[[0, 2]], y[[0, 2]], x, y) == pytest.approx(by_hand, rel=1e-12)
    assert by_hand > 0.5
    assert reconstruction.class_correlation(x[[2, 0]], y[[0, 2]], x, y) < -0.5  # each looks like the other class
    with pytest.raises(ValueError, match="labels"):
        reconstruction.class_correlation(x[:1], [7], x, y)


def test_resolvable_difference_is_three_standard_errors_at_one_half():
    n1, n2 = 200, 50
    assert attacks.resolvable_difference(n1, n2) == pytest.approx(3 * np.sqrt(0.25 / n1 + 0.25 / n2))
    with pytest.raises(ValueError, match="trials_2"):
        attacks.resolvable_difference(10, 0)


def test_success_bound_refuses_bad_settings_and_never_rounds_below_the_closed_form():
    import mpmath

    with pytest.raises(ValueError, match="prior_size"):
        reconstruction.success_bound(_settings(1.0, 1.0, 1), prior_size=0)
    with pytest.raises(ValueError, match="steps"):
        reconstruction.success_bound(_settings(1.0, 1.0, 0))
    with pytest.raises(ValueError, match="noise_multiplier"):
        reconstruction.success_bound(_settings(float("inf"), 1.0, 1))
    assert reconstruction.success_bound(_settings(1.0, 1.0, 1), prior_size=1) == 1.0
    mpmath.mp.dps = 50
    for n, sigma in ((10**15, 1.0), (10, 3.0), (2, 0.5), (10**6, 0.2)):
        kappa = mpmath.mpf(1) / n
        exact = mpmath.ncdf(mpmath.sqrt(2) * mpmath.erfinv(2 * kappa - 1) + 1 / mpmath.mpf(sigma))  # Phi(Phi^-1(kappa) + mu)
        got = reconstruction.success_bound(_settings(sigma, 1.0, 1), prior_size=n)
        assert got >= exact and got <= exact * (1 + 1e-12)


def test_the_baselines_refuse_what_they_cannot_score():
    with pytest.raises(ValueError, match="finite"):
        reconstruction.nearest_neighbour_mse([[0.1, np.nan], [0.2, 0.3]])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        reconstruction.uniform_noise_mse([[255.0, 0.0]])
    rng = np.random.default_rng(1)
    x = rng.random((20, 30)) * 1e-4 + 1e4  # a large shared offset: centring keeps the distances
    brute = np.mean([min(np.mean((x[i] - x[j]) ** 2) for j in range(20) if j != i) for i in range(20)])
    assert reconstruction.nearest_neighbour_mse(x) == pytest.approx(brute, rel=1e-4)
    r, imgs, labels = rng.random((3, 30)), rng.random((10, 30)), [0, 1] * 5
    assert reconstruction.class_correlation(r * 1e-200, [0, 1, 0], imgs, labels) == pytest.approx(
        reconstruction.class_correlation(r, [0, 1, 0], imgs, labels), rel=1e-12)
    with pytest.raises(ValueError, match="constant"):
        reconstruction.class_correlation(np.full((2, 30), 0.5), [0, 1], imgs, labels)
