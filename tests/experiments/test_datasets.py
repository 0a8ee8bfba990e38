"""The bundled scikit-learn data sets: shapes, scaling, seeded subsets, bad input."""

import numpy as np
import pytest

from fdp.experiments import datasets


def test_digits_unit_scale_and_seeded_subset():
    full = datasets.digits()
    assert full.x.shape == (1797, 64) and full.x.min() == 0 and full.x.max() == 1
    a = datasets.digits(1000, seed=3)
    b = datasets.digits(1000, seed=3)
    assert a.x.shape == (1000, 64) and np.array_equal(a.x, b.x)
    assert not np.array_equal(a.x, datasets.digits(1000, seed=4).x)


def test_mnist_is_the_bundled_sample_scaled_to_unit():
    full = datasets.mnist()
    assert full.x.shape == (5000, 784) and full.x.min() == 0.0 and full.x.max() == 1.0
    assert np.array_equal(np.bincount(full.y), np.full(10, 500))  # 500 images of each class
    a = datasets.mnist(999, seed=1)
    assert a.x.shape == (999, 784) and np.array_equal(a.x, datasets.mnist(999, seed=1).x)
    assert len(np.unique(a.y)) == 10  # a random subset, not the first (sorted) rows
    with pytest.raises(ValueError, match="n must be <= 5000"):
        datasets.mnist(5001, seed=0)


def test_uniform_noise_matches_the_mean_pairwise_distance_of_mnist():
    ref = datasets.mnist(200, seed=2).x
    noise = datasets.uniform_noise_like(ref, 200, seed=5)

    def mean_pairwise(x):  # mean over pairs i != j of |x_i - x_j|^2, directly
        d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
        return d2.sum() / (len(x) * (len(x) - 1))

    assert noise.x.shape == (200, 784) and set(np.unique(noise.y)) <= set(range(10))
    assert mean_pairwise(noise.x) == pytest.approx(mean_pairwise(ref), rel=0.01)
    lo, hi = noise.x.min(), noise.x.max()
    assert 0.0 <= lo < hi <= 1.0 and lo + hi == pytest.approx(1.0, abs=0.01)  # centred on 1/2
    assert np.array_equal(noise.x, datasets.uniform_noise_like(ref, 200, seed=5).x)


def test_diabetes_standardised():
    d = datasets.diabetes()
    assert d.x.shape == (442, 10)
    assert np.allclose(d.x.mean(0), 0, atol=1e-12) and np.allclose(d.x.std(0), 1)


def test_one_feature_classification_balanced():
    d = datasets.one_feature_classification(1025, seed=0)
    assert d.x.shape == (1025, 1) and set(np.unique(d.y)) == {0, 1}
    assert abs(d.y.mean() - 0.5) < 0.01


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: datasets.digits(2000, seed=0), "n must be <= 1797"),
        (lambda: datasets.digits(10), "seed"),
        (lambda: datasets.digits(scale="bytes"), "scale"),
        (lambda: datasets.one_feature_classification(1), "n must be >= 2"),
        (lambda: datasets.uniform_noise_like(np.eye(3)[:1], 5, seed=0), "x must be"),
        (lambda: datasets.uniform_noise_like(np.array([[0.0] * 4, [1.0] * 4]), 5, seed=0), "wider than uniform noise"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
