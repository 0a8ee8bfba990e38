"""The batched gradient-based attack (fdp.experiments.inversion) against brute force, finite differences and known answers."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdp import Mechanism
from fdp.experiments import datasets, dpsgd, inversion, reconstruction
from fdp.experiments.dpsgd import Training
from fdp.parallel import Execution


def brute_force_loss(model, params, residual, labels, clip_norm, z):
    """Eq. (1) with every per-example gradient materialised and clipped: (R, B)."""
    out = np.zeros(z.shape[:2])
    for r in range(z.shape[0]):
        for t in range(params.shape[1]):
            g = dpsgd.clip(dpsgd.per_example_gradients(model, params[r, t][None], z[r][None], np.full((1, z.shape[1]), labels[r]))[0], clip_norm)
            out[r] += np.abs(g - residual[r, t]).sum(-1) - g @ residual[r, t]
    return out


def problem(seed, noise, clip_norm=0.3, d=6, hidden=5, classes=4, runs=2, steps=3):
    """A small model; the residual is a clipped gradient at a point plus noise, so the active sets are not empty."""
    rng = np.random.default_rng(seed)
    model = dpsgd.MLP(d, hidden, classes)
    params = (model.init(runs * steps, rng) + 0.3 * rng.standard_normal((runs * steps, model.size))).reshape(runs, steps, -1)
    labels = rng.integers(0, classes, runs)
    point = rng.random((runs, d))
    g = np.stack([dpsgd.clip(dpsgd.per_example_gradients(model, params[r], np.repeat(point[r][None], steps, 0)[:, None],
                                                           np.full((steps, 1), labels[r]))[:, 0], clip_norm) for r in range(runs)])
    return model, params, g + noise * rng.standard_normal(g.shape), labels, clip_norm


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), noise=st.sampled_from([1e-4, 1e-2, 1.0]), clip_norm=st.sampled_from([0.01, 0.3, 100.0]))
def test_loss_equals_brute_force(seed, noise, clip_norm):
    # exact: the dense part, the active entries and the small blocks together give eq. (1) to rounding
    model, params, resid, labels, c = problem(seed, noise, clip_norm)
    z = np.random.default_rng(seed + 1).random((2, 3, model.d))
    z[:, 0, :2] = 0.0, 1.0  # the box's corners, where the active set's bound is tight
    loss, _ = inversion.Eq1(model, params, resid, labels, c, precision="double")(z)
    np.testing.assert_allclose(loss, brute_force_loss(model, params, resid, labels, c, z), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("block", [1, 5, 17])
def test_blocks_of_candidates_give_the_same_loss_and_gradient(monkeypatch, block):
    # _active walks the candidates in blocks of about _BLOCK (for the cache); small blocks split owners' runs apart
    model, params, resid, labels, c = problem(7, 0.05, 0.3, runs=3, steps=4)
    z = np.random.default_rng(8).random((3, 2, model.d))
    whole = inversion.Eq1(model, params, resid, labels, c, precision="double")(z)
    objective = inversion.Eq1(model, params, resid, labels, c, precision="double")
    monkeypatch.setattr(inversion, "_BLOCK", block)
    calls, bincount = [], np.bincount  # one bincount per block
    monkeypatch.setattr(np, "bincount", lambda *a, **k: calls.append(1) or bincount(*a, **k))
    loss, grad = objective(z)
    assert len(calls) >= 3, "the candidates should have been split into several blocks"
    np.testing.assert_allclose(loss, whole[0], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(grad, whole[1], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(loss, brute_force_loss(model, params, resid, labels, c, z), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("noise", [1e-3, 0.05])
@pytest.mark.parametrize("clip_norm", [0.05, 10.0])
def test_gradient_matches_finite_differences(noise, clip_norm):
    model, params, resid, labels, c = problem(2, noise, clip_norm)
    objective = inversion.Eq1(model, params, resid, labels, c, precision="double")
    z = np.random.default_rng(3).random((2, 2, model.d))
    _, grad = objective(z)
    h = 1e-7
    fd = np.stack([(objective(z + h * e)[0] - objective(z - h * e)[0]) / (2 * h)
                   for e in np.eye(model.d)[:, None, None, :] * np.ones((1, 2, 2, 1))], axis=-1)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6)


def test_single_precision_products_change_little():
    model, params, resid, labels, c = problem(4, 0.01)
    z = np.random.default_rng(5).random((2, 4, model.d))
    l64, g64 = inversion.Eq1(model, params, resid, labels, c, precision="double")(z)
    l32, g32 = inversion.Eq1(model, params, resid, labels, c)(z)
    np.testing.assert_allclose(l32, l64, rtol=1e-6)
    np.testing.assert_allclose(g32, g64, rtol=1e-4, atol=1e-6 * np.abs(g64).max())


@pytest.fixture(scope="module")
def digits_split():
    data = datasets.digits()
    perm = np.random.default_rng(0).permutation(len(data.y))
    return data, perm[:199], perm[999:]


def test_reconstructs_without_noise_and_fails_with_much_noise(digits_split):
    # a case whose answer is known: with (almost) no noise the minimiser of eq. (1) is the target
    data, known, pool = digits_split
    targets = pool[:4]
    kw = dict(search=inversion.Search(restarts=2, max_iterations=3000, learning_rate=0.02), execution=Execution(seed=3, chunk=3))
    clean = reconstruction.gradient_reconstructions(data.x[known], data.y[known], data.x[targets], data.y[targets],
                                                    Training(Mechanism("gaussian", 1e-6, 1.0, 10), clip_norm=1.0, learning_rate=1.0), **kw)
    noisy = reconstruction.gradient_reconstructions(data.x[known], data.y[known], data.x[targets], data.y[targets],
                                                    Training(Mechanism("gaussian", 100.0, 1.0, 10), clip_norm=1.0, learning_rate=1.0), **kw)
    mse_clean = ((clean.reconstructions - data.x[targets]) ** 2).mean(1)
    mse_noisy = ((noisy.reconstructions - data.x[targets]) ** 2).mean(1)
    assert mse_clean.max() < 1e-3 < 0.05 < mse_noisy.min()
    assert clean.converged.all() and noisy.converged.all() and clean.iterations.max() < 3000
    assert clean.reconstructions.shape == (4, 64) and np.all((clean.reconstructions >= 0) & (clean.reconstructions <= 1))


def test_invert_stops_at_max_iterations_and_checks_its_arguments():
    model, params, resid, labels, c = problem(6, 0.01)
    objective = inversion.Eq1(model, params, resid, labels, c)
    out = inversion.invert(objective, restarts=3, max_iterations=7, check_every=50, seed=0)
    assert out.iterations.tolist() == [7, 7] and not out.converged.any()
    for kw, name in ((dict(tolerance=1.0), "tolerance"), (dict(restarts=0), "restarts"), (dict(learning_rate=-1.0), "learning_rate"),
                     (dict(max_iterations=0), "max_iterations")):
        with pytest.raises(ValueError, match=name):
            inversion.invert(objective, seed=0, **kw)


def test_invert_stops_on_a_flat_objective_and_keeps_the_best_start():
    model, params, resid, labels, c = problem(6, 0.01)
    model.unpack(params)[3][1, :, labels[1]] = 1e4  # target 1: a saturated softmax, eq. (1) constant in z
    objective = inversion.Eq1(model, params, resid, labels, c)
    out = inversion.invert(objective, restarts=3, max_iterations=5000, seed=0)
    assert out.converged.all() and out.iterations.max() < 5000
    # the reconstruction is the start with the lowest final loss
    final = objective(np.stack([out.reconstructions] * 3, axis=1))[0][:, 0]
    np.testing.assert_allclose(final, out.loss)


def test_eq1_checks_its_arguments():
    model, params, resid, labels, c = problem(7, 0.01)
    with pytest.raises(ValueError, match="labels"):
        inversion.Eq1(model, params, resid, np.array([0, 9]), c)
    with pytest.raises(ValueError, match="params and residual"):
        inversion.Eq1(model, params, resid[:, :2], labels, c)
    for empty in (np.s_[:, :0], np.s_[:0]):  # no steps, no targets (was numpy's AxisError)
        with pytest.raises(ValueError, match="R, T >= 1"):
            inversion.Eq1(model, params[empty], resid[empty], labels[:0] if empty == np.s_[:0] else labels, c)
    with pytest.raises(ValueError, match="precision"):
        inversion.Eq1(model, params, resid, labels, c, precision="half")
    for z in (np.full((2, 1, model.d), 0.5 + 0j), np.full((2, 1, model.d), "0.5")):  # (were cast, a warning at most)
        with pytest.raises(ValueError, match="z must be real numbers"):
            inversion.Eq1(model, params, resid, labels, c)(z)
    with pytest.raises(ValueError, match="z must be"):
        inversion.Eq1(model, params, resid, labels, c)(np.zeros((3, 1, model.d)))
    for z in (np.full((2, 1, model.d), 1.5), np.full((2, 1, model.d), -0.1), np.full((2, 1, model.d), np.nan)):
        with pytest.raises(ValueError, match=r"z must lie in \[0, 1\]"):
            inversion.Eq1(model, params, resid, labels, c)(z)
    for kw, name in ((dict(tolerance="x"), "tolerance"), (dict(seed=-1), "seed")):
        with pytest.raises(ValueError, match=name):
            inversion.invert(inversion.Eq1(model, params, resid, labels, c), **{"seed": 0, **kw})


def test_target_loss_and_concatenation(digits_split):
    data, known, pool = digits_split
    targets = pool[:3]
    out = reconstruction.gradient_reconstructions(data.x[known], data.y[known], data.x[targets], data.y[targets],
                                                  Training(Mechanism("gaussian", 1.0, 1.0, 5), clip_norm=1.0, learning_rate=1.0),
                                                  search=inversion.Search(restarts=1, max_iterations=20),
                                                  execution=Execution(seed=1, chunk=2))
    assert out.reconstructions.shape == (3, 64) and out.loss.shape == out.target_loss.shape == (3,)
    assert out.iterations.tolist() == [20, 20, 20]  # two chunks (2 + 1 targets), each stopped by max_iterations
    # the chunking fixes the bits: the same seed and chunk give the same reconstructions
    again = reconstruction.gradient_reconstructions(data.x[known], data.y[known], data.x[targets], data.y[targets],
                                                    Training(Mechanism("gaussian", 1.0, 1.0, 5), clip_norm=1.0, learning_rate=1.0),
                                                    search=inversion.Search(restarts=1, max_iterations=20),
                                                    execution=Execution(seed=1, chunk=2, n_jobs=2))
    np.testing.assert_array_equal(out.reconstructions, again.reconstructions)


def test_gradient_reconstructions_checks_its_targets(digits_split):
    data, known, pool = digits_split
    run = Training(Mechanism("gaussian", 1.0, 1.0, 5), clip_norm=1.0, learning_rate=1.0)
    for xt, match in ((16 * data.x[pool[:2]], r"x_targets must lie in \[0, 1\]"), (data.x[pool[:0]], "R >= 1")):
        with pytest.raises(ValueError, match=match):
            reconstruction.gradient_reconstructions(data.x[known], data.y[known], xt, data.y[pool[:len(xt)]], run,
                                                    execution=Execution(seed=0))
    with pytest.raises(ValueError, match="tolerance"):
        inversion.Search(tolerance=2.0)
    with pytest.raises(ValueError, match="search must be"):
        reconstruction.gradient_reconstructions(data.x[known], data.y[known], data.x[pool[:2]], data.y[pool[:2]], run,
                                                search={"tolerance": 0.1}, execution=Execution(seed=0))


def test_nearest_prior_rate_covers_near_chance():
    # per-target rates in [0, 1] with mean p, most at 0 and a few at 1 (as near chance): the interval must still cover p
    rng = np.random.default_rng(0)
    for p, spread in ((1 / 8, 2.0), (1 / 128, 2.0), (1 / 2, 0.5), (1 / 8, 1e6)):
        below = above = 0
        for _ in range(300):
            ok = rng.random((50, 200)) < rng.beta(spread * p, spread * (1 - p), size=(50, 1))
            rate = reconstruction.nearest_prior_rate(ok)
            below += rate.upper < p
            above += rate.lower > p
        assert below <= 15 and above <= 15, (p, spread, below, above)  # nominal 2.5 % per side: 7.5 of 300


def test_nearest_prior_rate_is_clopper_pearson_of_the_summed_rates():
    from scipy import stats
    ok = np.array([[True, True], [False, False], [True, False], [True, True]])
    rate = reconstruction.nearest_prior_rate(ok)
    k = 2.5  # the targets' rates 1, 0, 1/2 and 1, summed
    assert rate.estimate == pytest.approx(k / 4)
    assert (rate.lower, rate.upper) == pytest.approx((stats.beta.ppf(0.025, k, 4 - k + 1), stats.beta.ppf(0.975, k + 1, 4 - k)))
    for bad in (ok.astype(float), ok[:0], ok[:, :0], ok[0]):
        with pytest.raises(ValueError, match="successes"):
            reconstruction.nearest_prior_rate(bad)
