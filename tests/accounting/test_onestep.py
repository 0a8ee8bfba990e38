"""fdp.accounting.onestep: the float64 one-step measures, their error model against mpmath, and the certified orders."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdp import Mechanism
from fdp.accounting import ground_truth, onestep

U = 2.0**-53
SETTINGS = [("gaussian", 2.5, 16384 / 1281167), ("gaussian", 1.1, 0.07), ("gaussian", 1.0, 1.0),
            ("gaussian", 10.7, 0.99), ("laplace", 1.0, 0.5), ("laplace", 0.5, 1.0)]


def _mp_tail(mechanism, scale, x, centre, lower, dps=40):
    """P(X <= x) (lower) or P(X > x) for the noise centred at ``centre``, at the float x exactly, in mpmath."""
    with mpmath.workdps(dps):
        d = (mpmath.mpf(x) - centre) / mpmath.mpf(scale)
        d = d if lower else -d
        if mechanism == "gaussian":
            return mpmath.ncdf(d)
        return mpmath.exp(d) / 2 if d <= 0 else 1 - mpmath.exp(-d) / 2


def _mp_loss(mechanism, scale, p, x, direction="add"):
    with mpmath.workdps(40):
        x, s, p = mpmath.mpf(x), mpmath.mpf(scale), mpmath.mpf(p)
        z = (2 * x - 1) / (2 * s**2) if mechanism == "gaussian" else (min(max(x, 0), 1) * 2 - 1) / s
        if direction == "remove":  # Q = N_1, P = p N_0 + (1 - p) N_1
            return -mpmath.log(1 - p + p * mpmath.exp(-z))
        return mpmath.log(1 - p + p * mpmath.exp(z))


@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
def test_tail_error_model(mechanism):
    """The relative error bound of every tail value holds at floats over the whole range used (|z| <= 37)."""
    rng = np.random.default_rng(1)
    scale = 1.3
    x = np.concatenate([rng.uniform(-37, 37, 3000) * scale, rng.normal(0, 0.1, 300)])
    step = onestep.OneStep(mechanism, scale, 1.0)
    for centre in (0.0, 1.0):
        for lower in (True, False):
            value, rel = step._tail(x, centre, lower)
            for xi, v, r in zip(x, value, rel):
                exact = _mp_tail(mechanism, scale, xi, centre, lower)
                if exact > 1e-300:
                    assert abs(mpmath.mpf(float(v)) - exact) <= r * exact, (xi, centre, lower)


@pytest.mark.parametrize("direction", ["add", "remove"])
@pytest.mark.parametrize("mechanism, scale, p", SETTINGS)
def test_loss_error_bound(mechanism, scale, p, direction):
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.normal(0.5, 8 * scale, 2000), rng.uniform(-0.1, 1.1, 500)])
    step = onestep.OneStep(mechanism, scale, p, direction)
    loss, bound = step.loss(x)
    for xi, v, b in zip(x, loss, bound):
        assert abs(mpmath.mpf(float(v)) - _mp_loss(mechanism, scale, p, xi, direction)) <= b, xi
    # x_of_loss inverts the loss (the lattice boundaries start from it)
    inner = np.isfinite(loss) & (np.abs(x) < 4 * scale + 1) & (loss > step.loss_infimum + 1e-6) & (loss < step.loss_supremum - 1e-6)
    if mechanism == "gaussian":
        assert np.allclose(step.x_of_loss(loss[inner]), x[inner], rtol=1e-6, atol=1e-6 * scale**2)


@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
def test_noise_mass_error_bound(mechanism):
    """Masses of narrow and wide intervals on both sides of the centre, within their error bounds."""
    rng = np.random.default_rng(3)
    scale = 0.8
    a = rng.uniform(-12, 12, 1500) * scale
    b = a + np.concatenate([10 ** rng.uniform(-12, 1, 1000), rng.uniform(0, 20, 500)])
    step = onestep.OneStep(mechanism, scale, 1.0)
    for centre in (0.0, 1.0):
        mass, err = step.noise_mass(a, b, centre)
        for ai, bi, m, e in zip(a, b, mass, err):
            with mpmath.workdps(120):  # a difference of lower tails near 1: enough digits for 1e-80 masses
                exact = _mp_tail(mechanism, scale, bi, centre, True, 120) - _mp_tail(mechanism, scale, ai, centre, True, 120)
                assert abs(mpmath.mpf(float(m)) - exact) <= e, (ai, bi, centre)


def _hockey_exact(mechanism, scale, p, t, dps=40):
    """H(t) = E_Q[(1 - t e^{-L})^+] of one step, in mpmath (threshold at the output x with L(x) = log t)."""
    with mpmath.workdps(dps):
        s, p, t = mpmath.mpf(scale), mpmath.mpf(p), mpmath.mpf(t)
        # e^L = 1 - p + p e^z  =>  z = log((t - 1 + p) / p)
        if t <= 1 - p:
            z = -mpmath.inf
        else:
            z = mpmath.log((t - 1 + p) / p)
        if mechanism == "gaussian":
            if z == -mpmath.inf:
                return 1 - t
            x = (z * 2 * s**2 + 1) / 2
            surv_p, surv_1 = mpmath.ncdf(-x / s), mpmath.ncdf(-(x - 1) / s)
        else:
            if z <= -1 / s:
                return 1 - t  # the threshold lies below the lower atom: every output rejects
            if z >= 1 / s:
                return mpmath.mpf(0)
            x = (z * s + 1) / 2
            surv_p, surv_1 = mpmath.exp(-x / s) / 2, 1 - mpmath.exp((x - 1) / s) / 2
        q = (1 - p) * surv_p + p * surv_1
        return q - t * surv_p


def _hockey_remove_exact(mechanism, scale, p, t):
    """H of the swapped pair T(Q, P): ``t H(1 / t) + 1 - t`` (both integrate ``(b - t a)^+``; the sum cancels
    down to H, as small as 1e-45 here, so it is taken with 100 digits)."""
    with mpmath.workdps(100):
        t = mpmath.mpf(t)
        return t * _hockey_exact(mechanism, scale, p, 1 / t, dps=100) + 1 - t


def _hockey_lattice(l_0, h, masses, infinite, t):
    with mpmath.workdps(40):
        t = mpmath.mpf(t)
        total = mpmath.mpf(float(infinite))
        for j in np.flatnonzero(masses):
            loss = mpmath.mpf(l_0) + j * mpmath.mpf(h)
            term = 1 - t * mpmath.exp(-loss)
            if term > 0:
                total += mpmath.mpf(float(masses[j])) * term
        return total


@pytest.mark.parametrize("mechanism, scale, p", SETTINGS)
def test_hockey_stick_order(mechanism, scale, p):
    """H_optimistic(t) <= H(t) <= H_pessimistic(t) at the lattice points (where connect-the-dots is exact
    and only the rounding margins separate the two), between them and at random t."""
    out = onestep.measures(Mechanism(mechanism, scale, p), 2e-2, math.log(1e-25))
    l_p, h, m_p, inf_p = out["pessimistic"]
    l_o, _, m_o, _ = out["optimistic"]
    rng = np.random.default_rng(4)
    heavy = np.flatnonzero(m_p > 1e-6)
    js = rng.choice(heavy, size=min(12, heavy.size), replace=False)
    losses = np.concatenate([l_p + js * h, l_p + (js + 0.5) * h, l_o + js * h, rng.uniform(l_p, l_p + m_p.size * h, 6)])
    for loss in losses:
        t = math.exp(loss)
        exact = _hockey_exact(mechanism, scale, p, t)
        assert _hockey_lattice(l_o, h, m_o, 0.0, t) <= exact <= _hockey_lattice(l_p, h, m_p, inf_p, t), loss


@pytest.mark.parametrize("mechanism, scale, p", [v for v in SETTINGS if v[0] == "gaussian"] + [("laplace", 0.5, 1.0)])
def test_hockey_stick_order_remove(mechanism, scale, p):
    """The remove direction's pessimistic measure: H(t) <= H_pessimistic(t) for the swapped pair T(Q, P),
    at its lattice points, between them and at random t; it holds at least all Q-mass, at most 1e-9 more."""
    step = onestep.OneStep(mechanism, scale, p, "remove")
    l_p, _, h, grid = onestep.frames(step, 2e-2, math.log(1e-25), 10**5)
    m_p, inf_p = onestep.pessimistic(step, l_p, h, grid)
    assert 1.0 <= m_p.sum() + inf_p <= 1.0 + 1e-9 and np.all(m_p >= 0)
    rng = np.random.default_rng(5)
    heavy = np.flatnonzero(m_p > 1e-6)
    js = rng.choice(heavy, size=min(12, heavy.size), replace=False)
    losses = np.concatenate([l_p + js * h, l_p + (js + 0.5) * h, rng.uniform(l_p, l_p + m_p.size * h, 6)])
    for loss in losses:
        t = math.exp(loss)
        assert _hockey_remove_exact(mechanism, scale, p, t) <= _hockey_lattice(l_p, h, m_p, inf_p, t), loss


def test_optimistic_is_add_only():
    step = onestep.OneStep("gaussian", 1.0, 0.5, "remove")
    with pytest.raises(ValueError, match="add direction"):
        onestep.optimistic(step, -1.0, 0.1, 20)
    with pytest.raises(ValueError, match="direction"):
        onestep.OneStep("gaussian", 1.0, 0.5, "both")


@pytest.mark.parametrize("mechanism, scale, p", SETTINGS)
def test_agrees_with_the_mpmath_measures(mechanism, scale, p):
    """The float measures agree with fdp.accounting.ground_truth's mpmath ones where the mass is not negligible."""
    grid = 400
    ctx = mpmath.MPContext()
    ctx.dps = 30
    step_mp = (ground_truth._Gaussian if mechanism == "gaussian" else ground_truth._Laplace)(ctx, scale, p)
    step = onestep.OneStep(mechanism, scale, p)
    l_p, l_o, h, grid = onestep.frames(step, 1.0, math.log(1e-20), grid - 1)
    ours, _ = onestep.pessimistic(step, l_p, h, grid)
    unit = ctx.mpf(10) ** 20
    theirs = ground_truth._pessimistic_step(step_mp, ctx.mpf(l_p), ctx.mpf(h), grid, unit)
    theirs = np.array([int(c) for c in theirs.coeffs], dtype=float) / 1e20
    big = theirs > 1e-10
    assert np.allclose(ours[big], theirs[big], rtol=1e-9, atol=0)


@pytest.mark.parametrize("mechanism, scale, p", SETTINGS)
def test_every_optimistic_bin_is_certified(mechanism, scale, p):
    """The margins beat the float error: every bin aimed at a lattice point certifies there."""
    step = onestep.OneStep(mechanism, scale, p)
    _, l_o, h, grid = onestep.frames(step, 1e-3, math.log(1e-25), 10**5)
    margins = onestep._margins(step, l_o, h, np.arange(grid))
    start = (0.0, 1.0) if mechanism == "laplace" else (-math.inf, math.inf)
    starts, ends, targets = (np.array(v) for v in onestep._bins(step, l_o, h, grid, margins, *start))
    m0, e0, m1, e1 = step.masses(starts[:-1], ends[:-1])  # the last is the rest, placed by its ratio
    lv, lerr = onestep._lattice_interval(l_o, h, targets[:-1])
    d, err = onestep._difference(step, m0, e0, m1, e1, lv, lerr)
    heavy = m0 > 1e-18  # below, a bin may fall back one lattice point: harmless
    assert heavy.sum() > 100 and np.all((d - err)[heavy] >= 0.0)


@settings(max_examples=15, deadline=None)
@given(scale=st.floats(0.4, 8.0), p=st.sampled_from([1.0, 0.5, 0.05, 1e-3]), h=st.floats(2e-3, 5e-2),
       mechanism=st.sampled_from(["gaussian", "laplace"]))
def test_mass_added_and_removed(scale, p, h, mechanism):
    """The pessimistic measure holds at least all Q-mass, the optimistic at most, both within 1e-9."""
    out = onestep.measures(Mechanism(mechanism, scale, p), h, math.log(1e-20))
    _, _, m_p, inf_p = out["pessimistic"]
    m_o = out["optimistic"][2]
    assert 1.0 <= m_p.sum() + inf_p <= 1.0 + 1e-9
    assert 1.0 - 1e-9 <= m_o.sum() <= 1.0
    assert np.all(m_p >= 0) and np.all(m_o >= 0)


def test_laplace_lattice_must_cover_the_upper_atom():
    step = onestep.OneStep("laplace", 1.0, 1.0)
    with pytest.raises(ValueError, match="largest loss"):
        onestep.pessimistic(step, -0.99, 0.189, 11)  # top point 0.9, below the atom at 1


@pytest.mark.parametrize("args,name", [((0.0, -10.0), "discretization"), ((float("inf"), -10.0), "discretization"),
                                       ((1e-2, 0.0), "log_tail"), ((1e-2, float("nan")), "log_tail"),
                                       ((1e-2, -math.inf), "log_tail"), ((1e-2, -10.0, 0), "max_grid")])
def test_measures_refuse_a_bad_lattice_by_name(args, name):
    # a spacing of 0 divided by zero and a log tail >= 0 ran on before the break review
    with pytest.raises(ValueError, match=name):
        onestep.measures(Mechanism("gaussian", 1.0), *args)
