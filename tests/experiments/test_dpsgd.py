"""The NumPy DP-SGD (fdp.experiments.dpsgd): per-example gradients, clipping, noise, sampling and the recorded view."""

import numpy as np
import pytest

from fdp import Mechanism
from fdp.experiments import dpsgd
from fdp.experiments.dpsgd import Training


def _loss(model, theta, x, y):
    w1, b1, w2, b2 = model.unpack(theta)
    a = w1 @ x + b1
    h = np.where(a > 0, a, np.expm1(np.minimum(a, 0)))
    o = w2 @ h + b2
    return np.logaddexp.reduce(o) - o[y]


@pytest.fixture
def small():
    rng = np.random.default_rng(0)
    model = dpsgd.MLP(5, 4, 3)
    theta = model.init(2, rng) + 0.2 * rng.standard_normal((2, model.size))
    x = rng.standard_normal((6, 5))
    y = rng.integers(0, 3, 6)
    return model, theta, x, y


def test_mlp_sizes_match_the_paper():
    assert dpsgd.MLP(784).size == 7960  # Hayes et al. App. A: 784 -> 10 -> 10
    assert dpsgd.MLP(64).size == 760
    theta = np.arange(dpsgd.MLP(3, 2, 2).size, dtype=float)[None]
    m = dpsgd.MLP(3, 2, 2)
    np.testing.assert_array_equal(m.pack(*m.unpack(theta)), theta)


def test_per_example_gradients_match_finite_differences(small):
    model, theta, x, y = small
    g = dpsgd.per_example_gradients(model, theta, x, y)
    assert g.shape == (2, 6, model.size)
    h = 1e-6
    for r in range(2):
        for i in range(6):
            fd = [(_loss(model, theta[r] + h * e, x[i], y[i]) - _loss(model, theta[r] - h * e, x[i], y[i])) / (2 * h)
                  for e in np.eye(model.size)]
            np.testing.assert_allclose(g[r, i], fd, rtol=1e-5, atol=1e-8)


def test_norms_and_clipped_sums_agree_with_materialised_gradients(small):
    model, theta, x, y = small
    g = dpsgd.per_example_gradients(model, theta, x, y)
    _, _, _, sq = dpsgd.per_example_factors(model, theta, x, y)
    np.testing.assert_allclose(sq, (g**2).sum(-1), rtol=1e-12)
    for c in (0.05, 0.5, 50.0):
        total, norms = dpsgd.clipped_sum(model, theta, x, y, c)
        np.testing.assert_allclose(total, dpsgd.clip(g, c).sum(1), atol=1e-13)
        np.testing.assert_allclose(norms, np.linalg.norm(g, axis=-1), rtol=1e-12)
    # per-run inputs (R, n, d) give the same as shared inputs
    total_shared, _ = dpsgd.clipped_sum(model, theta, x, y, 0.5)
    total_runs, _ = dpsgd.clipped_sum(model, theta, np.stack([x, x]), np.stack([y, y]), 0.5)
    np.testing.assert_allclose(total_runs, total_shared, atol=1e-13)
    assert np.all(np.linalg.norm(dpsgd.clip(g, 0.05), axis=-1) <= 0.05 + 1e-15)


@pytest.mark.parametrize("q", [1.0, 0.3])
def test_recorded_view_is_what_the_adversary_can_recompute(q):
    rng = np.random.default_rng(1)
    xk, yk = rng.random((30, 8)), rng.integers(0, 10, 30)
    xt, yt = rng.random((3, 8)), rng.integers(0, 10, 3)
    run = Training(Mechanism("gaussian", 0.7, q, 6), clip_norm=0.5, learning_rate=0.5)
    tr = dpsgd.train(xk, yk, xt, yt, run, record=True, seed=4)
    again = dpsgd.train(xk, yk, xt, yt, run, record=True, seed=4)
    np.testing.assert_array_equal(tr.final, again.final)  # seeded
    model = dpsgd.MLP(8)
    for t in range(6):
        weights = None if q == 1.0 else tr.masks[t].astype(float)
        known, _ = dpsgd.clipped_sum(model, tr.params[t], xk, yk, 0.5, weights)
        np.testing.assert_allclose(tr.known[t], known, atol=1e-12)
        nxt = tr.params[t + 1] if t < 5 else tr.final
        np.testing.assert_allclose(nxt, tr.params[t] - 0.5 * tr.noisy[t] / (q * 31), atol=1e-12)
    np.testing.assert_array_equal(tr.params[0], tr.init)
    assert tr.included.all() if q == 1.0 else 0 < tr.included.mean() < 1


def test_noise_has_the_stated_scale_and_sampling_the_stated_rate():
    rng = np.random.default_rng(2)
    xt, yt = rng.random((400, 4)), rng.integers(0, 10, 400)
    tr = dpsgd.train(np.zeros((0, 4)), np.zeros(0, dtype=int), xt, yt,
                     Training(Mechanism("gaussian", 2.0, 0.25, 3), clip_norm=0.1, learning_rate=1e-9),
                     seed=3, record=True)
    model = dpsgd.MLP(4)
    target, _ = dpsgd.clipped_sum(model, tr.params[0], xt[:, None, :], yt[:, None], 0.1)
    noise = tr.noisy[0] - tr.included[0][:, None] * target
    assert abs(noise.std() - 0.2) < 0.002
    assert abs(tr.included.mean() - 0.25) < 0.03


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(noise_multiplier=-1.0), "noise_multiplier"),
        (dict(noise_multiplier=0.0), "noise_multiplier"),
        (dict(clip_norm=0.0), "clip_norm"),
        (dict(steps=0), "steps"),
        (dict(learning_rate=0.0), "learning_rate"),
        (dict(sampling_rate=1.5), "sampling_rate"),
        (dict(method="fast"), "method"),
    ],
)
def test_bad_training_arguments_name_the_parameter(kwargs, name):
    base = dict(noise_multiplier=1.0, clip_norm=1.0, steps=1, learning_rate=1.0, sampling_rate=1.0)
    base.update(kwargs)
    method = base.pop("method", "auto")
    with pytest.raises(ValueError, match=name):  # the Mechanism and the Training check their fields when built
        run = Mechanism("gaussian", base.pop("noise_multiplier"), base.pop("sampling_rate"), base.pop("steps"))
        dpsgd.train(np.zeros((2, 3)), np.zeros(2, dtype=int), np.zeros((1, 3)), np.zeros(1, dtype=int), Training(run, **base),
                    seed=0, method=method)
    with pytest.raises(ValueError, match="training must be a fdp.experiments.dpsgd.Training"):
        dpsgd.train(np.zeros((2, 3)), np.zeros(2, dtype=int), np.zeros((1, 3)), np.zeros(1, dtype=int), dict(base))


def test_bad_labels_and_shapes_are_rejected():
    with pytest.raises(ValueError, match="labels"):
        dpsgd.train(np.zeros((2, 3)), np.array([0, 10]), np.zeros((1, 3)), np.zeros(1, dtype=int),
                    Training(Mechanism("gaussian", 1.0, 1.0, 1), clip_norm=1.0, learning_rate=1.0),
                    seed=0)
    with pytest.raises(ValueError, match="x_target"):
        dpsgd.train(np.zeros((2, 3)), np.zeros(2, dtype=int), np.zeros(3), np.zeros(1, dtype=int),
                    Training(Mechanism("gaussian", 1.0, 1.0, 1), clip_norm=1.0, learning_rate=1.0),
                    seed=0)
