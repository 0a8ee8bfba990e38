"""fdp.lattice: the certified mpmath bracket against closed forms and the PLD bracket."""

import numpy as np
import pytest

from fdp import lattice, pld, rero, tradeoff

KAPPAS = np.array([1e-7, 1e-4, 0.01, 0.3])


@pytest.mark.parametrize("sigma, steps", [(2.0, 10), (1.0, 1)])
def test_contains_gaussian_closed_form(sigma, steps):
    gt = lattice.gamma_ground_truth("gaussian", sigma, 1.0, steps, KAPPAS, grid=300)
    exact = rero.gamma(tradeoff.gaussian(np.sqrt(steps) / sigma), KAPPAS)
    assert np.all(gt.lower <= exact) and np.all(exact <= gt.upper)
    assert np.all(gt.width < 5e-3 * exact)  # G = 300; the default G = 1000 is ~10x narrower


def test_contains_laplace_closed_form():
    gt = lattice.gamma_ground_truth("laplace", 0.7, 1.0, 1, KAPPAS, grid=200)
    exact = rero.gamma(tradeoff.laplace(1 / 0.7), KAPPAS)
    assert np.all(gt.lower <= exact) and np.all(exact <= gt.upper)


def test_subsampled_one_step_lemma9():
    """One subsampled step: gamma = p (1 - f(kappa)) + (1 - p) kappa (RTM Lemma 9)."""
    p = 0.3
    gt = lattice.gamma_ground_truth("gaussian", 1.0, p, 1, KAPPAS, grid=300)
    exact = rero.gamma(tradeoff.subsample(tradeoff.gaussian(1.0), p), KAPPAS)
    assert np.all(gt.lower <= exact) and np.all(exact <= gt.upper)


def test_width_shrinks_with_grid():
    coarse = lattice.gamma_ground_truth("gaussian", 1.0, 0.5, 20, [0.01], grid=100)
    fine = lattice.gamma_ground_truth("gaussian", 1.0, 0.5, 20, [0.01], grid=400)
    assert fine.width[0] < coarse.width[0] / 8  # second order: 16x for 4x the grid
    assert fine.lower[0] <= coarse.upper[0] and coarse.lower[0] <= fine.upper[0]


def test_agrees_with_pld_bracket():
    """The mpmath bracket and the FFT-composed PLD bracket overlap (both are certified)."""
    args = ("laplace", 1.0, 0.4, 30)
    gt = lattice.gamma_ground_truth(*args, KAPPAS, grid=400)
    low, up = pld.tradeoff_bracket(*args, discretization=1e-3).gamma(KAPPAS)
    assert np.all(gt.lower <= up) and np.all(low <= gt.upper)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(mechanism="cauchy"), "mechanism"),
        (dict(noise_multiplier=-1.0), "noise_multiplier"),
        (dict(sampling_rate=0.0), "sampling_rate"),
        (dict(steps=0), "steps"),
        (dict(kappa=[1.0]), "kappa"),
        (dict(grid=2), "grid"),
        (dict(dps=5), "dps"),
    ],
)
def test_bad_input(kwargs, name):
    args = dict(mechanism="gaussian", noise_multiplier=1.0, sampling_rate=0.5, steps=2, kappa=[0.1])
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        lattice.gamma_ground_truth(**args)
