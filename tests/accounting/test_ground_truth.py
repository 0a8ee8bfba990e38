"""fdp.accounting.ground_truth: the certified mpmath bracket against closed forms and the PLD bracket, and the invariants
of its exact integer lattice (rounding turned the safe way, every unit of Q-mass kept)."""

import math

import mpmath
import numpy as np
import pytest

from fdp import Mechanism
from fdp.accounting import ground_truth, pld
from fdp.curves import rero, tradeoff

KAPPAS = np.array([1e-7, 1e-4, 0.01, 0.3])


@pytest.mark.parametrize("sigma, steps", [(2.0, 10), (1.0, 1)])
def test_contains_gaussian_closed_form(sigma, steps):
    gt = ground_truth.gamma_ground_truth(Mechanism("gaussian", sigma, 1.0, steps), KAPPAS, grid=300)
    exact = rero.gamma(tradeoff.gaussian(np.sqrt(steps) / sigma), KAPPAS)
    assert np.all(gt.lower <= exact) and np.all(exact <= gt.upper)
    assert np.all(gt.width < 5e-3 * exact)  # G = 300; the default G = 1000 is ~10x narrower


def test_contains_laplace_closed_form():
    gt = ground_truth.gamma_ground_truth(Mechanism("laplace", 0.7, 1.0, 1), KAPPAS, grid=200)
    exact = rero.gamma(tradeoff.laplace(1 / 0.7), KAPPAS)
    assert np.all(gt.lower <= exact) and np.all(exact <= gt.upper)


def test_subsampled_one_step_lemma9():
    """One subsampled step: gamma = p (1 - f(kappa)) + (1 - p) kappa (RTM Lemma 9)."""
    p = 0.3
    gt = ground_truth.gamma_ground_truth(Mechanism("gaussian", 1.0, p, 1), KAPPAS, grid=300)
    exact = rero.gamma(tradeoff.subsample(tradeoff.gaussian(1.0), p), KAPPAS)
    assert np.all(gt.lower <= exact) and np.all(exact <= gt.upper)


def test_width_shrinks_with_grid():
    coarse = ground_truth.gamma_ground_truth(Mechanism("gaussian", 1.0, 0.5, 20), [0.01], grid=100)
    fine = ground_truth.gamma_ground_truth(Mechanism("gaussian", 1.0, 0.5, 20), [0.01], grid=400)
    assert fine.width[0] < coarse.width[0] / 8  # second order: 16x for 4x the grid
    assert fine.lower[0] <= coarse.upper[0] and coarse.lower[0] <= fine.upper[0]


def test_agrees_with_pld_bracket():
    """The mpmath bracket and the FFT-composed PLD bracket overlap (both are certified)."""
    args = ("laplace", 1.0, 0.4, 30)
    gt = ground_truth.gamma_ground_truth(Mechanism(*args), KAPPAS, grid=400)
    low, up = pld.tradeoff_bracket(Mechanism(*args), discretization=1e-3).gamma(KAPPAS)
    assert np.all(gt.lower <= up) and np.all(low <= gt.upper)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(mechanism="cauchy"), "noise"),
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
        ground_truth.gamma_ground_truth(Mechanism(args["mechanism"], args["noise_multiplier"], args["sampling_rate"], args["steps"]),
                                   args["kappa"], grid=args.get("grid", 1000), dps=args.get("dps", 25))


# --- the exact integer lattice: directed rounding and mass ------------------------------------------------------


def test_to_units_rounds_up_and_down_past_a_one_unit_margin():
    """Upper side: at least one unit above the value; lower side: at least one unit below it (never negative).  The
    margin absorbs the error of mpmath's special functions at dps + 10 digits; rounding the wrong way loses it."""
    ctx = mpmath.MPContext()
    ctx.dps = 40
    unit = ctx.mpf(10) ** 25
    values = [ctx.mpf(0), ctx.mpf(1) / 3, ctx.mpf("1e-24"), ctx.mpf("0.5"), 1 - ctx.mpf("1e-30"), ctx.mpf(2) / 7]
    up = ground_truth._to_units(ctx, values, unit, up=True)
    down = ground_truth._to_units(ctx, values, unit, up=False)
    for v, u, d in zip(values, up, down):
        assert all(isinstance(c, int) for c in (u, d))
        assert v * unit + 1 <= u <= v * unit + 2
        assert d == 0 if v * unit < 1 else v * unit - 2 <= d <= v * unit - 1


@pytest.mark.parametrize("noise, scale, p", [("gaussian", 1.0, 1.0), ("gaussian", 0.8, 0.3), ("laplace", 0.7, 1.0),
                                             ("laplace", 1.0, 0.4)])
def test_one_step_lattices_hold_all_q_mass_on_the_pessimistic_side_and_at_most_all_on_the_optimistic(noise, scale, p):
    """The Q-view masses of one step sum to 1 (units 10^-dps): the pessimistic lattice (a Blackwell refinement, rounded
    up) holds at least all of it and at most its margins more; the optimistic one (a garbling, rounded down) at most all."""
    ctx = mpmath.MPContext()
    dps, grid = 20, 200
    ctx.dps = dps + 10
    unit = ctx.mpf(10) ** dps
    step = (ground_truth._Gaussian if noise == "gaussian" else ground_truth._Laplace)(ctx, scale, p)
    l_0, l_0_lower, h = ground_truth._lattice_frames(step, noise, scale, p, grid, math.log(1e-20))
    pessimistic = ground_truth._pessimistic_step(step, l_0, h, grid, unit)
    held = sum(pessimistic.coeffs) + pessimistic.infinite
    assert 10**dps <= held <= 10**dps + 2 * (grid + 1) + 10**dps // 10**12  # the cut tails: at most 1e-12 relative
    optimistic = ground_truth._optimistic_step(step, l_0_lower, h, grid, unit)[0]
    assert sum(optimistic.coeffs) + optimistic.infinite <= 10**dps
