"""Certified ground truth for the ReRo bound of the composed subsampled Gaussian and Laplace mechanisms.

:func:`gamma_ground_truth` returns, for every prior success probability ``kappa``, an interval
``[lower, upper]`` that provably contains ``gamma = 1 - T(P, Q)(kappa)`` (ReRo paper Thm. 1) for
the N-fold composition in the add direction (:mod:`fdp.accounting.privacy_loss`),

* SGM: ``P = N(0, sigma^2)^N``, ``Q = ((1 - p) N(0, sigma^2) + p N(1, sigma^2))^N``;
* SLM: ``P = Lap(0, b)^N``,      ``Q = ((1 - p) Lap(0, b) + p Lap(1, b))^N``

(sensitivity 1, ``noise_multiplier`` = sigma or b, ``sampling_rate`` = p; p = 1 is the plain mechanism).
It plays the role of the "Ground Truth" of the ReRo paper (Sec. 2, option (1); App. 4.3), which
was computed by direct numerical integration on G = 1000 grid points with 25 digits of mpmath.

Method
------
The most powerful test of ``P^N`` against ``Q^N`` thresholds the summed privacy loss
``L = sum_t log(q(x_t) / p(x_t))`` (Neyman-Pearson), so only the law of one step's loss matters.
For both mechanisms the loss ``l(x) = log(1 - p + p exp(c (2x - 1)))`` (``c = 1/(2 sigma^2)``,
resp. ``1/b`` on ``0 < x < 1`` and constant outside, giving two atoms) is a non-decreasing map of
the output x, so the loss mass of any loss interval is a normal / Laplace probability of an x
interval, evaluated with mpmath at ``dps + 10`` digits.  Write ``H(t) = sup_A Q(A) - t P(A)``
(hockey-stick divergence, ``t = e^eps >= 0``).  By Neyman-Pearson and LP duality

    gamma(kappa) = inf_{t >= 0} [ kappa t + H_N(t) ],     H_N(t) = int (1 - t e^{-l})^+ dnu_N(l),

where ``nu_N`` is the law of L under ``Q^N`` (mass at ``l = +inf`` counts fully).  Any measure
whose ``H_N`` is pointwise >= (<=) the true one therefore gives an upper (lower) bound, and the
inf of ``kappa t + H(t)`` over a discrete measure is attained at ``t = 0`` or at a support point:
this is the NP lemma with randomisation at the threshold atom.

1. **One step on a loss lattice** ``l_k = l_0 + k h``, ``k = 0..G-1`` (``G = grid``).
   ``l_0``/``l_{G-1}`` are the ends of the loss range (SLM; ``l_0 = log(1 - p)`` for the SGM,
   where the loss is bounded below) or cut where the Q-tail beyond is at most
   ``1e-12 min(kappa) / N``.

   * *pessimistic* (dominating pair, "connect the dots", Doroshenko et al. 2022): the loss mass of
     each cell ``(l_k, l_{k+1}]`` is split onto its two end points so that both its P-mass and its
     Q-mass are kept (the likelihood ratio in the cell lies between ``e^{l_k}`` and
     ``e^{l_{k+1}}``, so the split is a Blackwell refinement of the true pair: the true pair is
     the split pair followed by a randomized map).  Beyond ``l_{G-1}`` the excess Q-mass
     ``Q - e^{l_{G-1}} P`` goes to ``l = +inf`` (P-only / Q-only split); below ``l_0`` (p = 1)
     all Q-mass is put at ``l_0``.  Its error per step is second order in h, unlike plain
     rounding of the loss up (first order, which compounds to ``N h`` after N steps).
   * *optimistic* (a garbling of the true pair): the x line is cut into consecutive bins, found
     one after another by root finding, whose likelihood ratio ``Q(bin) / P(bin)`` is exactly
     ``e^{l_k}`` for a lattice point (the bins straddle ``l_k``, width about ``2h``).  Merging a
     bin is post-processing, so this pair is less distinguishable than the true one; the
     leftover piece at the top end is assigned to the lattice point below its own ratio (moving
     Q-mass to a smaller loss can only lower ``H``).

2. **Composition in exact arithmetic.**  Masses are kept in the Q-view (``nu``, the law under Q)
   as integers in units of ``10^-dps``: pessimistic masses rounded up (plus one unit), optimistic
   ones rounded down (minus one unit), which covers the error of the mpmath special functions.
   The N-fold convolution is done by repeated squaring; each product is an exact product of big
   integers (Kronecker substitution into one decimal integer, multiplied by libmpdec's
   number-theoretic transform in the standard-library ``decimal`` module), and its coefficients
   are rounded up / down to ``10^-dps`` again.  No re-binning is needed: sums of lattice points
   stay on the lattice ``N l_0 + j h``.  Tails whose total mass is below ``1e-12 min(kappa) / N``
   are trimmed after each product: for the upper bound the top tail goes to ``l = +inf`` and the
   bottom tail moves up to the first kept point, for the lower bound both are dropped.

3. **Evaluation.**  For every kappa the bound ``kappa e^{l_j} + H(e^{l_j})`` is evaluated at the
   NP threshold of each composed measure (and ``t = 0``); the lower bound is the exact minimum
   over all thresholds (candidates are screened in float64 with a rigorous error margin, then
   evaluated in integers / mpmath).  Finally ``lower >= kappa`` and ``upper <= 1`` (true for every
   trade-off curve) and both are rounded outwards to float64.

Error control
-------------
Every operation on the upper side can only raise ``H_N(t)`` for every t (a Blackwell refinement,
adding mass, moving Q-mass to a larger loss or to ``+inf``), every operation on the lower side can
only lower it (a garbling, removing mass, moving Q-mass to a smaller loss); the function
``phi_t(l) = (1 - t e^{-l})^+`` is non-negative and non-decreasing, so these orders survive
convolution with any non-negative measure.  Hence ``lower <= gamma <= upper`` holds exactly, up to
the accuracy of mpmath's ``ncdf``/``exp``/``log`` at ``dps + 10`` digits, which the one-unit
margins at ``10^-dps`` absorb.  The width has three parts: the discretisation (second order in
``h``, about ``N h^2`` relative; it shrinks as ``grid`` grows), the tail cut and trimming (at most
``1e-12 min(kappa)`` in total), and the fixed-point arithmetic (about ``n 10^-dps`` absolute for
``n`` composed coefficients; keep ``kappa >> 10^(6 - dps)``).

Run time
--------
One-step work is ``O(G)`` mpmath evaluations (the optimistic bins need about 10 Illinois
iterations each, ~1-2 s for G = 1000); composition is ``O(log N)`` big-integer products of at
most ``~N G`` coefficients of ``2 dps + 2`` digits (quasi-linear NTT), fewer after trimming; the
evaluation is ``O(n)`` per kappa.  Measured on one core (dps = 25): see the docstring of
:func:`gamma_ground_truth`.  Memory is ``O(N G dps)`` digits.

The method differs from the paper's (Zheng et al. 2020, Sec. 5.1: one numerical integral per grid
point and step, ``G N`` quadratures, with an uncontrolled interpolation error): it needs only
``O(G)`` special-function evaluations plus exact integer convolutions and returns a bracket.
"""

from __future__ import annotations

import decimal
import math
import numbers
import time
from dataclasses import dataclass, field
from typing import NamedTuple

import mpmath
import numpy as np
import scipy.fft
from scipy.optimize import brentq
from scipy.special import logsumexp

from ..curves.tradeoff import lower_convex_envelope
from ..validation import (
    ResourceLimitError,
    check_array_in,
    check_discretization,
    check_open_unit,
    check_subsampled_range,
)
from .onestep import OneStep, U, tail_x
from .privacy_loss import Mechanism, log_ratio, subsampled, takes_mechanism

__all__ = [
    "GroundTruth",
    "gamma_ground_truth",
    "lattice_points",
    "check_lattice_points",
    "check_composed",
    "composed_points",
    "compose",
    "self_convolve",
    "Breakpoints",
    "breakpoints",
    "overflow_error",
    "MAX_LATTICE_POINTS",
    "MAX_ONE_STEP_POINTS",
]

_SQRT2 = math.sqrt(2.0)
_GUARD = 10  # extra mpmath digits beyond the fixed-point resolution 10**-dps
_NEGLIGIBLE = 1e-12  # tails and trims: at most this fraction of min(kappa) in total
_WINDOW = 3  # optimistic bins may reach up to l_k + _WINDOW h
_MAX_COEFFS = 2 * 10**7  # composed lattice points (about 1 GB of digits at dps = 25)


@dataclass(frozen=True)
class GroundTruth:
    """Certified bracket ``lower <= gamma <= upper`` of ``gamma = 1 - T(P, Q)(kappa)`` (add direction).

    Arrays have the shape of ``kappa``.  ``loss_step`` is the lattice spacing h of the privacy
    loss and ``loss_range`` the one-step lattice ``[l_0, l_{G-1}]``; ``seconds`` is the run time.

    Attributes
    ----------
    noise : str
    noise_multiplier, sampling_rate : float
    steps, grid, dps : int
    kappa, lower, upper : numpy.ndarray
    loss_step : float
    loss_range : tuple of float
    seconds : float
    """

    noise: str
    noise_multiplier: float
    sampling_rate: float
    steps: int
    grid: int
    dps: int
    kappa: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    loss_step: float = field(repr=False)
    loss_range: tuple = field(repr=False)
    seconds: float = field(repr=False)

    @property
    def width(self) -> np.ndarray:
        """``upper - lower``: the certified uncertainty of the ground truth."""
        return self.upper - self.lower

    @property
    def midpoint(self) -> np.ndarray:
        """``(lower + upper) / 2``, for plotting."""
        return 0.5 * (self.lower + self.upper)


# ---------------------------------------------------------------------------------------------
# one step of the mechanism, in the output space x, evaluated with mpmath
# ---------------------------------------------------------------------------------------------


class _Point:
    """A point x of the output line with lazily cached distribution functions (per component)."""

    __slots__ = ("x", "cache")

    def __init__(self, x):
        self.x = x
        self.cache = {}


class _Step:
    """Common part: the loss map ``l(x) = log(1 - p + p exp(c (2x - 1)))`` and its inverse."""

    def __init__(self, ctx, scale, p):
        self.ctx = ctx
        self.p = ctx.mpf(p)
        self.full = p == 1.0
        self.l_inf = -ctx.inf if self.full else ctx.log1p(-self.p)  # infimum of the loss

    def _z(self, x):  # exponent c (2x - 1)
        raise NotImplementedError

    def loss(self, x):
        return subsampled(self._z(x), self.p)

    def _z_of_loss(self, lv):
        ctx = self.ctx
        if self.full:
            return lv
        if lv <= self.l_inf:
            return -ctx.inf
        # e^l - (1 - p) = (1 - p) expm1(l - log(1 - p)), accurate near the infimum
        return ctx.log((1 - self.p) * ctx.expm1(lv - self.l_inf) / self.p)

    def x_of_loss_float(self, lv: float) -> float:
        """Float version of ``x_of_loss`` (only used to locate bin boundaries)."""
        if self.full:
            z = lv
        elif lv <= self.l_inf_f:
            return self.x_lo_f
        else:
            z = math.log((1.0 - self.p_f) * math.expm1(lv - self.l_inf_f) / self.p_f)
        return min(max((z / self.c_f + 1.0) / 2.0, self.x_lo_f), self.x_hi_f)

    def _floats(self):
        self.p_f, self.c_f, self.l_inf_f = float(self.p), float(self.c), float(self.l_inf)
        self.x_lo_f, self.x_hi_f = float(self.x_lo), float(self.x_hi)


class _Gaussian(_Step):
    """SGM step: P = N(0, s^2), Q = (1 - p) N(0, s^2) + p N(1, s^2)."""

    def __init__(self, ctx, scale, p):
        super().__init__(ctx, scale, p)
        self.s = ctx.mpf(scale)
        self.c = 1 / (2 * self.s**2)
        self.x_lo, self.x_hi = -ctx.inf, ctx.inf
        self.l_min = self.l_inf  # infimum of the loss
        self._floats()
        self.s_f = float(scale)

    def _z(self, x):
        return self.c * (2 * x - 1)

    def x_of_loss(self, lv):
        z = self._z_of_loss(lv)
        return (z / self.c + 1) / 2

    def _cdf(self, pt, m, upper):
        """``P(N(m, s^2) > x)`` if upper else ``P(N(m, s^2) <= x)``, cached on the point."""
        key = (m, upper)
        v = pt.cache.get(key)
        if v is None:
            ctx = self.ctx
            if pt.x == ctx.inf or pt.x == -ctx.inf:
                v = ctx.mpf(int((pt.x > 0) != upper))
            else:
                z = (pt.x - m) / self.s
                v = ctx.ncdf(-z) if upper else ctx.ncdf(z)
            pt.cache[key] = v
        return v

    def _normal_mass(self, a, b, m):
        # the side of the median decides: differences of values below 1/2 keep their digits
        if b.x <= m:
            return self._cdf(b, m, False) - self._cdf(a, m, False)
        return self._cdf(a, m, True) - self._cdf(b, m, True)

    def masses(self, a, b):
        """``(P(a < X <= b), Q(a < X <= b))`` for points a < b."""
        p0 = self._normal_mass(a, b, 0)
        if self.full:
            return p0, self._normal_mass(a, b, 1)
        return p0, (1 - self.p) * p0 + self.p * self._normal_mass(a, b, 1)

    def atoms(self):
        return None, None

    def masses_float(self, a: float, b: float):
        """Float ``(P(a < X <= b), Q(a < X <= b))``, tails accurate (locates bins only)."""

        def mass(m):
            za, zb = (a - m) / self.s_f, (b - m) / self.s_f
            if zb <= 0:
                return 0.5 * (math.erfc(-zb / _SQRT2) - math.erfc(-za / _SQRT2))
            return 0.5 * (math.erfc(za / _SQRT2) - math.erfc(zb / _SQRT2))

        p0 = mass(0.0)
        return p0, (1.0 - self.p_f) * p0 + self.p_f * mass(1.0)


class _Laplace(_Step):
    """SLM step: P = Lap(0, b), Q = (1 - p) Lap(0, b) + p Lap(1, b); continuous part on 0 < x < 1."""

    def __init__(self, ctx, scale, p):
        super().__init__(ctx, scale, p)
        self.b = ctx.mpf(scale)
        self.c = 1 / self.b
        self.x_lo, self.x_hi = ctx.mpf(0), ctx.mpf(1)
        self.l_min = self.loss(self.x_lo)  # the lower atom
        self._floats()
        self.b_f = float(scale)

    def _z(self, x):
        return self.c * (2 * x - 1)

    def x_of_loss(self, lv):
        ctx = self.ctx
        z = self._z_of_loss(lv)
        return min(max((z / self.c + 1) / 2, ctx.mpf(0)), ctx.mpf(1))

    def masses(self, a, b):
        ctx = self.ctx
        width = -ctx.expm1(-(b.x - a.x) / self.b)
        p0 = ctx.exp(-a.x / self.b) * width / 2
        p1 = ctx.exp(-(1 - b.x) / self.b) * width / 2
        if self.full:
            return p0, p1
        return p0, (1 - self.p) * p0 + self.p * p1

    def masses_float(self, a: float, b: float):
        width = -math.expm1(-(b - a) / self.b_f)
        p0 = math.exp(-a / self.b_f) * width / 2.0
        p1 = math.exp(-(1.0 - b) / self.b_f) * width / 2.0
        return p0, (1.0 - self.p_f) * p0 + self.p_f * p1

    def atoms(self):
        """``((P, Q) at x <= 0, (P, Q) at x >= 1)``: loss atoms at both ends of the range."""
        e = self.ctx.exp(-1 / self.b)
        low = (self.ctx.mpf(1) / 2, ((1 - self.p) + self.p * e) / 2)
        high = (e / 2, ((1 - self.p) * e + self.p) / 2)
        return low, high


# ---------------------------------------------------------------------------------------------
# one-step lattice measures (Q-view masses as integers in units of 10**-dps)
# ---------------------------------------------------------------------------------------------


@dataclass
class _Lattice:
    """Q-mass ``coeffs[i]`` (units 10**-dps) at loss ``steps * l_0 + (start + i) h``, plus mass at +inf."""

    coeffs: list
    start: int
    steps: int
    infinite: int = 0


def _tail_x(step, scale, p, log_tail, lower):
    """An x with ``Q(X > x) ~ tail`` (upper) or ``Q(X <= x) ~ tail`` (lower), as an mpf; any x is valid."""
    return step.ctx.mpf(tail_x(OneStep("gaussian", scale, p), log_tail, lower))


def _lattice_frames(step, mechanism, scale, p, grid, log_tail):
    """Lattice origins l_0 of the upper and the lower side and the common spacing h (mpf).

    The SGM loss is bounded below by ``log(1 - p)``, where a large part of the P-mass piles up.
    The upper side starts its lattice there; the lower side shifts it so that the infimum lies
    half a step below a lattice point (and below ``0``, the mean ratio, so that the first bin
    can reach its ratio): the optimistic bins then all have about the same width h.
    """
    ctx = step.ctx
    if mechanism == "laplace":
        l_0, l_top = step.loss(ctx.mpf(0)), step.loss(ctx.mpf(1))
    else:
        l_top = step.loss(_tail_x(step, scale, p, log_tail, lower=False))
        l_0 = step.l_inf if p < 1.0 else step.loss(_tail_x(step, scale, p, log_tail, lower=True))
    h = (l_top - l_0) / (grid - 1)
    l_0_lower = l_0
    if mechanism == "gaussian" and p < 1.0:
        l_0_lower = l_0 + min(h / 2, -l_0 / 2) - h
    return l_0, l_0_lower, h


def _to_units(ctx, values, unit, up):
    """Directed rounding to integers in units of 10**-dps, with a one-unit margin."""
    out = []
    for v in values:
        if up:
            out.append(int(ctx.ceil(v * unit)) + 1)
        else:
            out.append(max(int(ctx.floor(v * unit)) - 1, 0))
    return out


def _pessimistic_step(step, l_0, h, grid, unit):
    ctx = step.ctx
    levels = [l_0 + k * h for k in range(grid)]
    pts = [_Point(step.x_of_loss(lv)) for lv in levels]
    if step.x_lo != -ctx.inf:  # Laplace: the lattice ends are the ends of the continuous part
        pts[0], pts[-1] = _Point(step.x_lo), _Point(step.x_hi)
    mass = [ctx.mpf(0)] * grid
    one_minus_r = -ctx.expm1(-h)
    for k in range(grid - 1):
        pm, qm = step.masses(pts[k], pts[k + 1])
        # split onto l_k, l_{k+1} keeping P- and Q-mass; Q-view mass at l_{k+1}:
        upper_part = max((qm - ctx.exp(levels[k]) * pm) / one_minus_r, ctx.mpf(0))
        mass[k + 1] += upper_part
        mass[k] += max(qm - upper_part, ctx.mpf(0))
    infinite = ctx.mpf(0)
    low, high = step.atoms()
    if low is not None:
        mass[0] += low[1]
        mass[-1] += high[1]
    else:
        pm, qm = step.masses(pts[-1], _Point(step.x_hi))
        mass[-1] += ctx.exp(levels[-1]) * pm
        infinite = max(qm - ctx.exp(levels[-1]) * pm, ctx.mpf(0))
        if step.full:  # below l_0: all Q-mass moves up to l_0
            mass[0] += step.masses(_Point(step.x_lo), pts[0])[1]
    coeffs = _to_units(ctx, mass, unit, up=True)
    return _Lattice(coeffs, 0, 1, _to_units(ctx, [infinite], unit, up=True)[0])


def _illinois(f, lo, hi, f_lo, f_hi, width):
    """Bracketing root of an increasing-through-zero f with f(lo) < 0 < f(hi); returns the upper end."""
    side = 0
    for _ in range(200):
        if hi - lo <= width:
            break
        mid = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        if not lo < mid < hi:
            mid = (lo + hi) / 2
        f_mid = f(mid)
        if f_mid > 0:
            hi, f_hi = mid, f_mid
            if side == 1:
                f_lo /= 2
            side = 1
        else:
            lo, f_lo = mid, f_mid
            if side == -1:
                f_hi /= 2
            side = -1
    return hi


def _float_root(step, w, lo, hi, target):
    """Float64 root in ``(lo, hi)`` of ``Q(w, x] - target P(w, x]``, or None if float64 cannot bracket it."""
    wf, tf = float(w.x), float(target)

    def gap(x):
        pm, qm = step.masses_float(wf, x)
        return qm - tf * pm

    lo_f, hi_f = float(lo), float(hi)
    if not (math.isfinite(lo_f) and math.isfinite(hi_f) and lo_f < hi_f):
        return None
    try:
        return brentq(gap, lo_f, hi_f, xtol=1e-14 * (1.0 + abs(hi_f)), rtol=1e-15, maxiter=200)
    except (ValueError, RuntimeError):
        return None


def _optimistic_step(step, l_0, h, grid, unit, first_window=True):
    """Garbling of one step into bins of exact lattice ratio (Q-view masses, rounded down).

    From the bottom of the loss range upwards: the next bin ``(w, u]`` gets the ratio ``e^{l_k}``
    of the smallest lattice point above ``l(w)``.  Its end u is searched only up to the loss
    ``l_k + _WINDOW h``; if the ratio is not reached there (the loss mass above is too sparse,
    e.g. at a gap of the loss distribution) the bin stops at ``l_k`` and is rounded down to
    ``l_{k-1}`` instead (a first-order error confined to that cell).
    """
    ctx = step.ctx
    mass = [ctx.mpf(0)] * grid
    top = grid - 1

    def put(pm, qm):
        """Q-mass of a merged bin at the largest lattice point not above its loss."""
        if pm <= 0 or qm <= 0:
            return
        k = int(ctx.floor((ctx.log(qm / pm) - l_0) / h))
        if k >= 0:
            mass[min(k, top)] += qm

    low, high = step.atoms()
    if low is not None:
        mass[0] += low[1]
        mass[top] += high[1]
    w = _Point(step.x_lo)
    end = _Point(step.x_hi)
    cut_first = False
    # first target: the smallest lattice point above the infimum of the loss
    k = int(ctx.floor((step.l_min - l_0) / h)) + 1 if step.l_min != -ctx.inf else 0
    while k <= top and w.x < step.x_hi:
        lv = l_0 + k * h
        target = ctx.exp(lv)

        def gap(x, w=w, target=target):
            pm, qm = step.masses(w, _Point(x))
            return qm - target * pm

        lo = step.x_of_loss(lv)
        if lo <= w.x:  # only through rounding at a lattice point
            k += 1
            continue
        first = w.x == step.x_lo
        reach = _WINDOW * h
        while True:
            hi = step.x_of_loss(lv + reach)
            if hi >= step.x_hi:
                hi = step.x_hi
                pm_end, qm_end = step.masses(w, end)
                f_hi = qm_end - target * pm_end
            else:
                f_hi = gap(hi)
            if f_hi > 0 or hi == step.x_hi or (first_window or not first):
                break
            reach *= 2  # the first bin without a window: widen until the ratio is reached
        if hi == step.x_hi and not f_hi <= 0 and step.x_hi == ctx.inf:
            # unbounded: find a finite upper end for the root search
            reach = _WINDOW * h
            while True:
                reach *= 2
                hi = step.x_of_loss(lv + reach)
                f_hi = gap(hi)
                if f_hi > 0:
                    break
        if f_hi <= 0:  # no bin of ratio e^{l_k} within the window: round the cell down
            if first:
                cut_first = True
            upt = _Point(lo)
            put(*step.masses(w, upt))
            w, k = upt, k + 1
            continue
        u = None
        uf = _float_root(step, w, lo, hi, target)
        if uf is not None:
            # certify Q/P >= e^{l_k} in mpmath, nudging the float root upwards if needed
            nudge = 1e-12 * (1.0 + abs(uf))
            for _ in range(40):
                cand = ctx.mpf(uf) + nudge
                if cand >= hi:
                    u = hi
                    break
                if cand > w.x and gap(cand) >= 0:
                    u = cand
                    break
                nudge *= 4
        if u is None:  # slow path: solve in mpmath
            f_lo = gap(lo)
            u = hi if f_lo >= 0 else _illinois(gap, lo, hi, f_lo, f_hi, ctx.mpf(10) ** -14 * (1 + abs(hi)))
        upt = _Point(u)
        put(*step.masses(w, upt))
        w = upt
        if u < step.x_hi:
            k = max(k + 1, int(ctx.floor((step.loss(u) - l_0) / h)) + 1)
    if w.x < step.x_hi:
        put(*step.masses(w, end))
    return _Lattice(_to_units(ctx, mass, unit, up=False), 0, 1, 0), None, cut_first


# ---------------------------------------------------------------------------------------------
# exact composition
# ---------------------------------------------------------------------------------------------

_DEC = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
_DEC.traps[decimal.Inexact] = True
_DEC.traps[decimal.Rounded] = True


def _convolve(a: list, b: list, digits: int, up: bool) -> list:
    """Exact convolution of non-negative integer sequences, rounded from units 10**-2d back to 10**-d.

    Kronecker substitution: each sequence becomes one decimal integer with a slot of ``width``
    digits per coefficient; the product (libmpdec, exact) holds the convolution in its slots.
    """
    sa, sb = sum(a), sum(b)
    # no slot can overflow: every coefficient of the product is <= sa * sb
    width = max(len(str(max(sa * sb, 1))) + 1, digits + 1)
    fmt = f"0{width}d"
    da = decimal.Decimal("".join(format(c, fmt) for c in reversed(a)))
    db = da if b is a else decimal.Decimal("".join(format(c, fmt) for c in reversed(b)))
    n = len(a) + len(b) - 1
    text = str(_DEC.multiply(da, db)).zfill(n * width)
    keep = width - digits
    zeros = "0" * digits
    out = [0] * n
    for i in range(n):
        pos = (n - 1 - i) * width
        v = int(text[pos : pos + keep])
        if up and text[pos + keep : pos + width] != zeros:
            v += 1
        out[i] = v
    return out


def _trim(lat: _Lattice, budget: int, up: bool) -> _Lattice:
    c = lat.coeffs
    hi, cum = len(c), 0
    while hi > 1 and cum + c[hi - 1] <= budget:
        hi -= 1
        cum += c[hi]
    infinite = lat.infinite + (cum if up else 0)  # top tail -> l = +inf (upper) / dropped (lower)
    lo, cum = 0, 0
    while lo < hi - 1 and cum + c[lo] <= budget:
        cum += c[lo]
        lo += 1
    kept = c[lo:hi]
    if up and cum:
        kept[0] += cum  # bottom tail moves up to the first kept point
    return _Lattice(kept, lat.start + lo, lat.steps, infinite)


def _multiply(a: _Lattice, b: _Lattice, digits: int, up: bool, budget: int) -> _Lattice:
    if len(a.coeffs) + len(b.coeffs) - 1 > _MAX_COEFFS:
        raise ValueError(
            f"the composed loss lattice would need {len(a.coeffs) + len(b.coeffs) - 1} points "
            f"(limit {_MAX_COEFFS}): lower grid or steps, or raise min(kappa) or dps so that more tail can be trimmed"
        )
    coeffs = _convolve(a.coeffs, b.coeffs, digits, up)
    infinite = 0
    if up and (a.infinite or b.infinite):
        # Q-mass where either factor is at +inf: s_a (|b| + s_b) + |a| s_b, rounded up
        num = a.infinite * (sum(b.coeffs) + b.infinite) + sum(a.coeffs) * b.infinite
        infinite = -((-num) // 10**digits)
    return _trim(_Lattice(coeffs, a.start + b.start, a.steps + b.steps, infinite), budget, up)


def _power(base: _Lattice, n: int, digits: int, up: bool, budget: int) -> _Lattice:
    result = None
    while True:
        if n & 1:
            result = base if result is None else _multiply(result, base, digits, up, budget)
        n >>= 1
        if not n:
            return result
        base = _multiply(base, base, digits, up, budget)


# ---------------------------------------------------------------------------------------------
# evaluation: inf_t kappa t + H(t) over the composed measure
# ---------------------------------------------------------------------------------------------


def _evaluate(lat: _Lattice, ctx, l_0, h, kappas, digits: int, up: bool) -> list:
    """``inf_t [kappa t + H(t)]`` for each kappa: an upper bound (up) or a certified lower bound."""
    c = lat.coeffs
    n = len(c)
    scale = 10**digits
    r = ctx.exp(-h) * scale
    big_r = int(ctx.floor(r)) - 1 if up else int(ctx.ceil(r)) + 1
    # qtail[j] = sum_{k>j} c_k (exact);  u[j] = sum_{k>j} c_k e^{l_j - l_k} (rounded down / up)
    qtail, u = [0] * n, [0] * n
    acc_q = acc_u = 0
    for j in range(n - 2, -1, -1):
        acc_q += c[j + 1]
        t = big_r * (c[j + 1] + acc_u)
        acc_u = t // scale if up else -((-t) // scale)
        qtail[j], u[j] = acc_q, acc_u
    # H(e^{l_j}) = qtail_j - u_j, rounded up (upper) or down (lower) through u
    v = [max(q - w, 0) for q, w in zip(qtail, u)]
    base = lat.steps * l_0 + lat.start * h
    levels = float(base) + float(h) * np.arange(n)
    v_f = np.array([float(x) for x in v]) / scale
    total = sum(c) + lat.infinite
    at_zero = ctx.mpf(total) / scale
    out = []
    with np.errstate(over="ignore"):
        growth = np.exp(levels)
    for kappa in kappas:
        kap = ctx.mpf(kappa)
        f_float = kappa * growth + v_f
        fmin = float(np.min(f_float))

        def exact(j):
            val = kap * ctx.exp(base + j * h) + ctx.mpf(v[j]) / scale
            return val + lat.infinite * ctx.mpf(1) / scale

        if up:
            # any threshold gives a valid upper bound: the float argmin and its neighbours
            j0 = int(np.argmin(f_float))
            cands = range(max(j0 - 1, 0), min(j0 + 2, n))
        else:
            # every j whose exact value could be the minimum (float error <= 1e-13 (1 + |f|))
            tol = 4e-13 * (1.0 + fmin)
            cands = np.flatnonzero(f_float <= fmin + tol)
            slack = 0
            if cands.size > 64:  # a flat stretch: check 64 of them, give away the tolerance
                cands = cands[np.argsort(f_float[cands])[:64]]
                slack = 2 * tol
        best = min(exact(int(j)) for j in cands)
        if not up:
            best -= slack
        best = min(best, at_zero)
        out.append(best)
    return out


# ---------------------------------------------------------------------------------------------
# public function
# ---------------------------------------------------------------------------------------------


def _check_int(name, value, low, high):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")
    return int(value)


@takes_mechanism
def gamma_ground_truth(mechanism: Mechanism, kappa, grid: int = 1000, dps: int = 25) -> GroundTruth:
    """Certified ``[lower, upper]`` for ``gamma = 1 - T(P, Q)(kappa)`` of the N-fold SGM / SLM (add direction).

    Parameters
    ----------
    mechanism : Mechanism
        Poisson-subsampled Gaussian (``noise_multiplier`` = sigma) or Laplace (``noise_multiplier`` = b) noise,
        sensitivity 1, composed over N = ``steps`` (homogeneous) steps; ``sampling_rate = 1`` is the plain
        Gaussian / Laplace mechanism.
    kappa : float or array in (0, 1)
        Prior success probabilities; one composition serves all of them.
    grid : int
        Number G of lattice points of the one-step privacy loss (the paper's G = 1000).
        The bracket width shrinks about like ``1/G^2``.
    dps : int
        Decimal digits of the fixed-point composition (resolution ``10^-dps``); the one-step
        special functions are evaluated with mpmath at ``dps + 10`` digits (the paper: 25).

    Returns
    -------
    GroundTruth
        ``lower <= gamma(kappa) <= upper`` elementwise, rigorously (see the module docstring for
        the method and the error argument), with the settings and the run time.

    Notes
    -----
    Run time on one core (dps = 25, G = 1000, 2026 laptop-class CPU), dominated by the
    one-step optimistic bins (about G root findings) and for large N by the big-integer
    products of about ``N G`` coefficients:
    see the table in the module's report; roughly 2 s for N = 10 and 3 s for N = 100 (SGM
    sigma = 1, p = 0.5).  Cost grows like ``G`` (one step) plus ``N G log(N G)`` (composition);
    memory like ``N G dps`` digits.

    References
    ----------
    ReRo paper (Kaissis et al. 2023a) Thm. 1, Sec. 2 option (1) (this is its certified version).

    Examples
    --------
    >>> gt = gamma_ground_truth(Mechanism("gaussian", 1.0, 0.5, 4), [0.01], grid=200, dps=20)
    >>> bool(gt.lower[0] <= gt.upper[0] < gt.lower[0] + 1e-3)
    True
    """
    t0 = time.perf_counter()
    noise, noise_multiplier, p, steps = mechanism.args
    kap = check_array_in("kappa", kappa, 0.0, 1.0, open_low=True, open_high=True)
    if kap.size == 0:
        raise ValueError("kappa must not be empty")
    grid = _check_int("grid", grid, 3, 10**6)
    dps = _check_int("dps", dps, 15, 200)

    ctx = mpmath.MPContext()
    ctx.dps = dps + _GUARD
    unit = ctx.mpf(10) ** dps
    step = (_Gaussian if noise == "gaussian" else _Laplace)(ctx, noise_multiplier, p)
    k_min = float(np.min(kap))
    log_tail = math.log(_NEGLIGIBLE * k_min / steps)
    budget = int(_NEGLIGIBLE * k_min / (4 * max(steps.bit_length(), 1)) * 10.0**dps)
    l_0, l_0_lower, h = _lattice_frames(step, noise, noise_multiplier, p, grid, log_tail)

    flat = [float(k) for k in kap.ravel()]
    bounds = {}
    one = _pessimistic_step(step, l_0, h, grid, unit)
    upper_mp = _evaluate(_power(one, steps, dps, True, budget), ctx, l_0, h, flat, dps, True)
    one, _, cut_first = _optimistic_step(step, l_0_lower, h, grid, unit)
    variants = [one]
    if cut_first:  # coarse lattice at the bottom of the loss range: also try one merged first bin
        variants.append(_optimistic_step(step, l_0_lower, h, grid, unit, first_window=False)[0])
    lower_mp = None
    for one in variants:  # every variant is a valid lower bound: keep the best
        values = _evaluate(_power(one, steps, dps, False, budget), ctx, l_0_lower, h, flat, dps, False)
        lower_mp = values if lower_mp is None else [max(a, b) for a, b in zip(lower_mp, values)]
    bounds = {True: upper_mp, False: lower_mp}

    margin = ctx.mpf(10) ** -dps
    lower = np.empty(len(flat))
    upper = np.empty(len(flat))
    for i, k in enumerate(flat):
        lo = float(bounds[False][i] * (1 - margin))
        hi = float(bounds[True][i] * (1 + margin))
        lower[i] = max(np.nextafter(lo, -np.inf), k)
        upper[i] = min(np.nextafter(hi, np.inf), 1.0)
    return GroundTruth(
        noise=noise,
        noise_multiplier=noise_multiplier,
        sampling_rate=p,
        steps=steps,
        grid=grid,
        dps=dps,
        kappa=kap,
        lower=lower.reshape(kap.shape),
        upper=upper.reshape(kap.shape),
        loss_step=float(h),
        loss_range=(float(l_0), float(l_0 + (grid - 1) * h)),
        seconds=time.perf_counter() - t0,
    )


# ---------------------------------------------------------------------------------------------
# float64 lattices: size checks, FFT composition and trade-off breakpoints
# (used by fdp.accounting.pld for the certified bracket and dp_accounting's PMFs, and by fdp.accounting.rtm)
# ---------------------------------------------------------------------------------------------

#: The largest loss lattice we allocate: its FFT composition holds a few complex arrays of this
#: length (16 bytes a point each), about 1.6 GB at 2^25 points, inside a 4 GB budget.
MAX_LATTICE_POINTS = 2**25
#: The largest one-step lattice: dp_accounting builds one at about 5 us a point, so 4e6 points stay near 20 s.
MAX_ONE_STEP_POINTS = 4 * 10**6
_TRUNCATION_Z = 10.0  # dp_accounting cuts Gaussian noise at about 9.7 sd (mass e^-50)
# B-mass the lower-tail repair may add beyond what the PMF leaves free (round-off of its total)
REPAIR_ROUNDOFF = 1e-12

def _one_step_loss(mechanism: str, scale: float, p: float) -> tuple[np.ndarray, np.ndarray]:
    """One step's privacy loss on a grid over the noise, with its log-probabilities under H1 (an estimate)."""
    x = np.linspace(-_TRUNCATION_Z * scale, 1.0 + _TRUNCATION_Z * scale, 4001)
    log_p = -0.5 * (x / scale) ** 2 if mechanism == "gaussian" else -np.abs(x) / scale
    loss = subsampled(log_ratio(mechanism, scale, x), p)
    log_q = log_p + loss  # H1 density: P's density times the likelihood ratio
    return loss, log_q - logsumexp(log_q)


@takes_mechanism
def lattice_points(mechanism: Mechanism, discretization: float = 1e-4, truncated_mass: float = 1e-15) -> int:
    """Estimated length of the (composed) privacy-loss lattice of ``steps`` subsampled steps.

    One step spans the loss range of the noise cut at about 10 standard deviations (Laplace:
    ``2 / b``) in steps of ``discretization``.  A composition keeps the window of ``dp_accounting``'s
    ``self_convolve``: its Chernoff bound (``compute_self_convolve_bounds``, orders ``+-k / width``,
    k = 1..20, in loss units) evaluated on the grid distribution of one step's loss.  Used to refuse a
    computation before it allocates; the exact check on the built lattice follows before the FFT.

    Parameters
    ----------
    mechanism : Mechanism
    discretization : float, default 1e-4
        Loss lattice spacing.
    truncated_mass : float, default 1e-15
        Mass cut off by the composition's window.

    Returns
    -------
    int

    Examples
    --------
    >>> lattice_points(Mechanism("gaussian", 1.0), 1e-2) < lattice_points(Mechanism("gaussian", 1.0, 1.0, 100), 1e-2)
    True
    """
    noise, noise_multiplier, p, steps = mechanism.args
    h = check_discretization("discretization", discretization)
    check_subsampled_range(noise_multiplier, p)
    loss, log_w = _one_step_loss(noise, noise_multiplier, p)
    width = float(np.ptp(loss))
    one = width / h + 1.0
    if steps == 1 or width == 0.0:
        return int(min(one, 1e300))
    shifted = loss - loss.min()
    low, high, log_tail = 0.0, steps * width, np.log(2.0 / check_open_unit("truncated_mass", truncated_mass))
    for k in range(1, 21):
        t = k / width
        high = min(high, (steps * logsumexp(t * shifted + log_w) + log_tail) / t)
        low = max(low, -(steps * logsumexp(-t * shifted + log_w) + log_tail) / t)
    return int(min((high - low) / h + 1.0, steps * one, 1e300))


def check_lattice_points(points: float, what: str, hint: str, limit: int = MAX_LATTICE_POINTS) -> None:
    """ResourceLimitError if a lattice of ``points`` points exceeds ``limit`` (:data:`MAX_LATTICE_POINTS`:
    memory of the FFT composition; :data:`MAX_ONE_STEP_POINTS`: time of a one-step construction).

    Parameters
    ----------
    points : float
        The lattice's (estimated) length.
    what : str
        What is being built, for the message.
    hint : str
        What the user can change, for the message.
    limit : int, default MAX_LATTICE_POINTS

    Returns
    -------
    None
    """
    if points > limit:
        raise ResourceLimitError(
            f"{what} would need a privacy-loss lattice of about {points:.3g} points, more than the {limit:.3g} this "
            f"package builds (the limit keeps one computation near a minute and within a 4 GB memory budget): {hint}"
        )


def chernoff_window(masses: np.ndarray, steps: int, tail: float) -> tuple[int, int]:
    """Indices ``(low, high)`` of the ``steps``-fold sum of a lattice measure with at most ``tail`` mass outside.

    The Chernoff bound ``P(S >= a) <= E[e^{t S}] e^{-t a}`` at the orders ``t = +-k / J`` (k = 1..20,
    J the one-step length, in index units), each side given ``tail / 2``: the window of
    ``dp_accounting``'s ``self_convolve`` (Doroshenko et al. 2022, supplement eq. 5), with the 40 log
    moment generating functions evaluated at once.

    Parameters
    ----------
    masses : numpy.ndarray
        One step's masses at indices 0, 1, ...
    steps : int
    tail : float
        Mass allowed outside (0: the whole range).

    Returns
    -------
    (low, high) : (int, int)
    """
    size = masses.size
    low, high = 0, (size - 1) * steps
    if tail <= 0.0:  # nothing may be cut: the whole range
        return low, high
    orders = np.concatenate([np.arange(-20, 0), np.arange(1, 21)]) / size
    j = np.flatnonzero(masses > 0)
    # |order * j| <= 20: the moment generating functions need no log-domain sums
    with np.errstate(divide="ignore"):  # an underflowed moment is -inf: its bound is then vacuous, and skipped
        log_mgf = np.log(np.exp(np.outer(orders, j)) @ masses[j])
    with np.errstate(over="ignore", invalid="ignore"):
        bounds = (steps * log_mgf + math.log(2.0 / tail)) / orders
    for order, bound in zip(orders.tolist(), bounds.tolist()):
        if math.isfinite(bound):
            if order > 0:
                high = min(high, math.ceil(bound))
            else:
                low = max(low, math.floor(bound))
    return low, high


def composed_points(probs, steps: int, tail: float) -> int:
    """Length of the ``steps``-fold composition of a lattice measure after :func:`compose` cuts tails of
    mass ``tail``: the window of ``dp_accounting``'s ``self_convolve`` (its Chernoff bound).

    Parameters
    ----------
    probs : array_like
        One step's lattice masses.
    steps : int
    tail : float

    Returns
    -------
    int
    """
    low, high = chernoff_window(np.asarray(probs, dtype=float), steps, tail)
    return int(high - low + 1)


def check_composed(probs, steps: int, tail: float, what: str, hint: str) -> None:
    """:func:`check_lattice_points` on the exact output length of :func:`compose`, before the FFT.

    Parameters
    ----------
    probs : array_like
        One step's lattice masses.
    steps : int
    tail : float
    what, hint : str
        For the message of :func:`check_lattice_points`.

    Returns
    -------
    None
    """
    if steps > 1:
        check_lattice_points(float(composed_points(probs, steps, tail)), what, hint)


def overflow_error(l_0: float) -> ValueError:
    """The error raised when a lattice's likelihood ratios ``e^l`` overflow double precision.

    Parameters
    ----------
    l_0 : float
        The lattice's lowest loss.

    Returns
    -------
    ValueError
    """
    return ValueError(
        "the privacy-loss lattice reaches losses whose likelihood ratio overflows double precision "
        f"(lowest loss {l_0:.4g}): the mechanism is too far from private for this read-off"
    )


class Breakpoints(NamedTuple):
    """The breakpoints of a lattice measure's trade-off curve T(A, B) (:func:`breakpoints`).

    Attributes
    ----------
    alphas : numpy.ndarray
        Type-I errors, increasing from 0 to 1.
    betas : numpy.ndarray
        Type-II errors ``beta = B(L < l)``, non-increasing.
    powers : numpy.ndarray
        The powers ``B(L >= l) = 1 - beta`` as cumulative masses (no cancellation of ``1 - beta`` near alpha = 0).
    """

    alphas: np.ndarray
    betas: np.ndarray
    powers: np.ndarray


def breakpoints(
    l_0: float, h: float, masses, infinite: float, pessimistic: bool = True, normalise: bool = False,
) -> Breakpoints:
    """Breakpoints of T(A, B) for Q-view ``masses`` of B at losses ``l_0 + k h`` and ``infinite`` at +inf.

    ``pessimistic`` says which side the measure bounds; it decides how a truncated lower tail is repaired.
    ``normalise`` rescales a total B-mass above 1 (round-off) to 1; see :func:`fdp.accounting.pld.breakpoints`.
    The breakpoints' powers ``B(L >= l) = 1 - beta`` come as cumulative masses too, without the cancellation of
    ``1 - beta`` near alpha = 0 (for gamma at tiny kappa).

    Parameters
    ----------
    l_0, h : float
        The lattice: losses ``l_0 + k h``.
    masses : array_like
        Q-view masses at the losses.
    infinite : float
        Mass at +inf.
    pessimistic : bool, default True
    normalise : bool, default False

    Returns
    -------
    Breakpoints
    """
    probs = np.asarray(masses, dtype=float)
    losses = l_0 + np.arange(probs.size) * h
    keep = probs > 0  # FFT round-off can leave tiny negative entries: they carry no mass
    q, losses = probs[keep], losses[keep]
    m_inf = min(float(infinite), 1.0)
    # Truncating the lower tail (B-mass ~1e-15 at very negative losses) drops A-mass q e^{-l} that can
    # be large (5e-4 in that example), which would end the curve at beta = 0 before alpha = 1 (a
    # spurious A-atom at loss -inf).  Put the missing A-mass D at the lowest loss l_0, i.e. B-mass
    # D e^{l_0}: the dropped part had all its losses below l_0, so sum_i A_i (e^{l_i} - t)^+ <=
    # D (e^{l_0} - t)^+ and the hockey-stick divergence can only grow (pessimistic).
    # (An optimistic measure keeps the deficit: there it only lowers the curve's power.)
    # The B-mass D e^{l_0} must fit into what the PMF leaves free, 1 - m_inf - sum(q) (up to
    # round-off): for a mechanism far from private the lowest kept loss is positive and D is nearly
    # 1 (noise 1, rate 0.56, 1,000 steps: l_0 = 6.8, D e^{l_0} = 900).  Then only the free B-mass
    # goes to l_0 and the rest of D stays at loss -inf: the curve falls to 0 with slope -e^{l_0}
    # and stays there, below the true curve (whose slopes there are at most e^{l_0}): pessimistic.
    if q.size and pessimistic:
        with np.errstate(over="ignore"):  # exp(+-l) beyond double range: raised below
            deficit = 1.0 - float(np.sum(q * np.exp(-losses)))
            if deficit > 0:
                q = q.copy()
                free = max(0.0, 1.0 - min(float(infinite), 1.0) - float(np.sum(q)))
                needed = deficit * np.exp(losses[0])
                # where e^{l_0} overflows (an effect size far beyond any useful privacy) the A-mass stays at
                # loss -inf: that pair is a refinement too, so the curve stays on the pessimistic side
                if np.isfinite(needed):
                    q[0] += min(needed, free + REPAIR_ROUNDOFF)
    # Round-off (connect-the-dots ends, long FFT compositions) can leave a total B-mass slightly above
    # 1 (1 + 1.5e-6 after 2,000 SGM steps). Kept, the curve is pessimistic but reaches beta = 0 before
    # alpha = 1; normalised, it is a proper trade-off function within that surplus of the exact one.
    total = float(np.sum(q))
    if not np.isfinite(total):
        raise overflow_error(l_0)
    if normalise and q.size and m_inf + total > 1.0:
        q = q * ((1.0 - m_inf) / total)
    q, losses = q[::-1], losses[::-1]  # largest loss first
    # A(L >= l) = sum b e^{-l}, each term in logs: e^{-l} alone overflows at l < -709 where b e^{-l} need not; an
    # optimistic measure's A-mass (its losses rounded down) can pass 1 there: inf, clipped to alpha = 1 below
    with np.errstate(over="ignore"):
        alphas = np.cumsum(np.exp(np.log(q) - losses))
    if pessimistic:
        # breakpoints at alpha below 1e-280 (far from private) have slopes beyond the float range: their B-mass
        # moves up to +inf (the curve of that measure lies below; it starts at (0, 1 - m_inf), lower)
        cut = int(np.searchsorted(alphas, _TINY_ALPHA))
        if cut:
            m_inf = min(m_inf + float(np.sum(q[:cut])), 1.0)
            q, losses = q[cut:], losses[cut:]
            with np.errstate(over="ignore"):
                alphas = np.cumsum(np.exp(np.log(q) - losses))
    alphas = np.minimum(alphas, 1.0)
    power = np.minimum(m_inf + np.cumsum(q), 1.0)  # B(L >= l)
    betas = 1.0 - power
    if pessimistic and q.size:
        # Where beta is small, 1 - power cancels: its rounding (1e-16 absolute) is noise in the slopes of a
        # curve whose steps are 1e-14 (non-convex; beta = 1e-10 needs them).  The same beta is the total's
        # deficit plus the mass below: (1 - m_inf - S) + B(L < l), with S pushed up by a bound on numpy's
        # pairwise rounding (blocks of 128 in 8 accumulators, then halving: (16 + log2 n) u; pessimistic);
        # the deficit is negative when round-off left excess mass.
        deficit = (1.0 - m_inf) - float(np.sum(q)) * (1.0 + 2.0 * U * (32.0 + math.log2(q.size + 1)))
        below = np.concatenate([np.cumsum(q[:0:-1])[::-1], [0.0]])  # B-mass strictly below each loss
        small = power > 0.5
        betas[small] = np.maximum(deficit + below[small], 0.0)
        betas = np.minimum.accumulate(betas)  # the two forms meet within rounding at beta = 1/2
        # and the powers there from these betas, rounded up: the running sum from the top carries the rounding
        # of every term (2e-14 below 1 after 300,000 cells, a TPR bound below the truth)
        power = np.where(small, np.minimum(np.nextafter(1.0 - betas, 2.0), 1.0), power)
    alphas = np.concatenate([[0.0], alphas])
    betas = np.concatenate([[1.0 - m_inf], betas])
    powers = np.concatenate([[m_inf], power])
    if pessimistic:  # the two forms of beta meet within rounding at the first point too (far from private, m_inf > 1/2)
        lowered = np.minimum.accumulate(betas)
        moved = lowered < betas  # a lower beta has a higher power (1e-12 apart at noise 0.02, rate 0.5, 2 steps)
        powers[moved] = np.maximum(powers[moved], 1.0 - lowered[moved])
        betas = lowered
    # the last test rejects everywhere B has mass; beyond it only A-mass at loss -inf remains
    if alphas[-1] < 1.0:
        # An optimistic measure may have dropped A-mass (truncated tails): the exact curve is convex
        # with f(1) = 0, so it lies below the chord to (1, 0), which is therefore still an upper bound.
        alphas, betas = np.append(alphas, 1.0), np.append(betas, betas[-1] if pessimistic else 0.0)
        powers = np.append(powers, powers[-1] if pessimistic else 1.0)
    elif not pessimistic:
        # A-mass implied by Q-mass moved to smaller losses can reach 1 before all B-mass (which an
        # optimistic measure may have lost a little of) is rejected; for the same reason, the chord
        # from the last breakpoint to (1, 0) is still an upper bound.
        betas[-1], powers[-1] = 0.0, 1.0
    # equal alphas (tests that add only B-mass, or rounding at 1): keep the last, smallest beta
    last = np.r_[alphas[1:] > alphas[:-1], True]
    alphas, betas, powers = alphas[last], betas[last], powers[last]
    if not pessimistic:
        # breakpoints at alpha below 1e-280 have slopes beyond the float range; dropping vertices of a convex
        # curve that lies above the exact one leaves a curve (the chords) that lies higher still
        tiny = (alphas > 0.0) & (alphas < _TINY_ALPHA)
        alphas, betas, powers = alphas[~tiny], betas[~tiny], powers[~tiny]
        # the greatest convex minorant of an upper bound on a convex curve is still an upper bound,
        # and with f(0) <= 1, f(1) = 0 it is a valid trade-off function (f <= 1 - alpha)
        env_a, betas = lower_convex_envelope(alphas, betas)
        powers = powers[np.searchsorted(alphas, env_a)]  # the envelope's vertices are breakpoints
        alphas = env_a
    if not (np.all(np.isfinite(alphas)) and np.all(np.isfinite(betas))):
        raise overflow_error(l_0)
    return Breakpoints(alphas, betas, powers)


_TINY_ALPHA = 1e-280  # a pessimistic curve's breakpoints below this alpha go to +inf (their slopes overflow)
_LOW_FREQUENCY_WORK = 2**21  # most products (frequencies x masses) of the direct low-frequency transform
_REST_SHARE = 1e-7  # share of the total mass whose low frequencies come from an FFT (the smallest masses)
_LOW_FREQUENCY_STEPS = 512  # fewer steps: the FFT's own power is used (its error N u is small)
_PI_LOW = 1.2246467991473532e-16  # pi - float(pi)


def _half_angle(residues: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``(sin(theta / 2), sin(theta))`` for ``theta = 2 pi r / n`` with the integer residues r reduced to [-n/2, n/2]."""
    turns = np.where(2 * residues > size, residues - size, residues) / size  # in [-1/2, 1/2], one rounding
    # sin(pi t) with pi = float(pi) + 1.22e-16: the rounding of pi would shift every angle alike, an
    # error that adds up coherently over the masses (and is then multiplied by N)
    sin_t, cos_t, low = np.sin(np.pi * turns), np.cos(np.pi * turns), _PI_LOW * turns
    half = sin_t + cos_t * low
    return half, 2.0 * half * (cos_t - sin_t * low)  # sin 2x = 2 sin x cos x


def _low_frequencies(masses: np.ndarray, steps: int, size: int, power_modulus: np.ndarray):
    """``F_k^N`` at the low frequencies ``k < K`` to a relative error of about ``u`` instead of ``N u``.

    An FFT gives ``F_k = sum_j m_j e^{-2 pi i j k / n}`` to about ``u`` absolute, which the N-th power
    turns into a relative error ``N u`` where ``|F_k| ~ 1`` (the low frequencies, which carry the
    composed measure's mass).  Here ``F_k = e^{-2 pi i j_0 k / n} (S - c_k - i s_k)`` with the
    centre ``j_0``, ``S = sum m_j``, ``c_k = sum m_j 2 sin^2(theta / 2)`` and ``s_k = sum m_j sin theta``
    (``theta = 2 pi (j - j_0) k / n``, reduced exactly as an integer), all sums of well-conditioned
    terms, and ``F_k^N = exp(N [log S + log1p(-(c_k + i s_k) / S)])`` with an accurate complex
    ``log1p`` and ``log S`` from S in double-double (S rounded to a double would alone be off by
    ``N u / 2``); the phase ``N j_0 k`` is reduced modulo n in integers.  The relative error of
    ``F_k^N`` is then at most about ``2 N u (c_k + sum m_j |sin theta|) / S + 16 u`` (measured against mpmath:
    below a fifth of that), which is small where ``|F_k|`` is near 1.  Only the bulk of the masses is
    summed directly: the smallest ones, together at most :data:`_REST_SHARE` (1e-7) of S, go through
    an FFT of their own, whose absolute error (about ``u log2(n)`` times their sum) enters the model
    as ``8 N u log2(n) share``; on a 50,000-point lattice the bulk is a few thousand points, and the
    sines come from a table of the n residues when that is cheaper.  ``K`` is the first frequency with
    ``|F_k|^N < 1e-12 S^N`` (from the FFT), at most what :data:`_LOW_FREQUENCY_WORK` allows; none
    below :data:`_LOW_FREQUENCY_STEPS` steps (there ``N u`` is small).

    Returns
    -------
    (k, F_k^N, relative error of F_k^N in units of u) : numpy.ndarray
    """
    if steps < _LOW_FREQUENCY_STEPS:  # the FFT power's N u is small: not worth the direct transform
        return np.arange(0), np.zeros(0, dtype=complex), np.zeros(0)
    j = np.flatnonzero(masses > 0)
    m = masses[j]
    # the smallest masses, together at most _REST_SHARE of the total, go through an FFT of their own
    # (its absolute error, about u log2(n) times their sum, is negligible); the bulk is summed directly
    order = np.argsort(m)
    cut = int(np.searchsorted(np.cumsum(m[order]), _REST_SHARE * float(np.sum(m)), side="right"))
    rest = np.zeros(size)
    rest[j[order[:cut]]] = m[order[:cut]]
    rest_total = float(np.sum(m[order[:cut]]))  # its rounding, ~u log2(J) of 1e-7 S, is in the model below
    j, m = j[order[cut:]], m[order[cut:]]
    # S = total + residual to double-double (fsum is fast on the bulk's narrow range of magnitudes)
    total = math.fsum([*m.tolist(), rest_total])
    residual = math.fsum([*m.tolist(), rest_total, -total])
    log_total = (math.log1p(total - 1.0) if 0.5 < total < 2.0 else math.log(total)) + residual / total
    small = np.flatnonzero(power_modulus < 1e-12 * total**steps)
    limit = max(1, _LOW_FREQUENCY_WORK // max(j.size, 1))
    count = int(min(small[0] if small.size else power_modulus.size, limit, power_modulus.size))
    k = np.arange(count)
    centre = int(round(float(np.dot(j, m)) / float(np.sum(m))))
    # theta_jk = 2 pi ((j - j_0) k mod n) / n, the integer product reduced before the float conversion
    residues = np.mod(np.outer(k, j - centre), size)
    if residues.size > size:  # fewer sines through a table of all n residues (the same values)
        half_table, sine_table = _half_angle(np.arange(size), size)
        half, sine = half_table[residues], sine_table[residues]
    else:
        half, sine = _half_angle(residues, size)
    # pairwise sums (numpy's reduction): error about u log2(J) of the sum of |terms|, not u sqrt(J) as a dot product
    c = np.sum(2.0 * half * half * m, axis=1)
    s_k = np.sum(sine * m, axis=1)
    spread = (np.sum(np.abs(sine) * m, axis=1) + c + 4.0 * math.log2(size) * rest_total) / total
    if cut:
        # F_k = e^{-i phi_k} (S - c_k - i s_k) with the rest's transform G_k moved into the centre's frame
        half, sine = _half_angle(np.mod(centre * k, size), size)
        g = scipy.fft.rfft(rest)[:count] * ((1.0 - 2.0 * half * half) + 1j * sine)
        c = c + (rest_total - g.real)
        s_k = s_k - g.imag
    # log1p(z) for z = x + i y: real part log1p(x (2 + x) + y^2) / 2, imaginary part atan2(y, 1 + x)
    x, y = -c / total, -s_k / total
    log_real = log_total + 0.5 * np.log1p(x * (2.0 + x) + y * y)
    phase = steps * np.arctan2(y, 1.0 + x) - 2.0 * np.pi * (np.mod(centre * k * steps, size) / size)
    value = np.exp(steps * log_real) * np.exp(1j * phase)
    return k, value, 2.0 * steps * spread + 16.0


def _spectral_power(z: np.ndarray, n: int) -> np.ndarray:
    """``z**n`` by repeated squaring (numpy's complex power goes through exp and log for n >= 100, 2x slower).

    Each product adds a relative error of at most ``sqrt(5) u``, which later squarings double: at worst
    about ``sqrt(5) n u`` in all, measured 0.43 n u against mpmath at n = 2,000, which the ``n u`` that
    the rounding model of :func:`self_convolve` assigns to ``F_k^N`` (an estimate, with a factor 8 of
    safety) covers.
    """
    result, base = None, z
    while n:
        if n & 1:
            result = base if result is None else result * base
        n >>= 1
        if n:
            base = base * base
    return result


def self_convolve(masses, steps: int, tail: float, window: tuple[int, int] | None = None) -> tuple[int, np.ndarray, float]:
    """The ``steps``-fold convolution of a lattice measure by one real FFT: ``(low, out, per_coefficient)``.

    ``out[i]`` is the mass at lattice index ``low + i`` of the N-fold sum.  The window ``[low, high]``
    is ``dp_accounting``'s Chernoff bound (mass outside at most ``tail``); that mass wraps around into
    the window (the FFT is cyclic).  ``per_coefficient`` estimates the largest absolute rounding error
    of one coefficient.  The dominant error is not visible in the output: each spectral value
    ``F_k`` carries a relative error of about ``u``, which the power amplifies to ``N u |F_k|^N``;
    near zero frequency ``|F_k|`` is about 1, so the inverse transform spreads a smooth offset of
    about ``(2 / n) sum_k N u |F_k|^N`` over all n coefficients (every coefficient is shifted alike,
    so negative outputs, the usual symptom, need not appear).  The estimate is four times
    ``(2 / n) sum_k (N + log2 n) u |F_k|^N`` (the inverse transform's own rounding is the
    ``log2 n`` term); against exact direct convolutions it exceeds the largest error by 8 to 74x
    (tests).  The powers are taken by repeated squaring (``_spectral_power``, within the ``N u``
    of the model) and the low frequencies directly (``_low_frequencies``).  Negative
    coefficients are set to 0.

    Parameters
    ----------
    masses : numpy.ndarray
        One step's masses.
    steps : int
        N >= 2.
    tail : float
        Largest mass outside the window.
    window : (int, int), optional
        The window ``(low, high)`` if already computed (default: the Chernoff bound).

    Returns
    -------
    (low, out, per_coefficient) : (int, numpy.ndarray, float)

    References
    ----------
    Koskela, Jalko, Honkela (2020) (FFT composition); Doroshenko et al. (2022) (the Chernoff window).
    """
    low, high = window if window is not None else chernoff_window(masses, steps, tail)
    length = int(high - low + 1)
    size = scipy.fft.next_fast_len(max(length, masses.size), real=True)
    spectrum = scipy.fft.rfft(masses, size)
    with np.errstate(under="ignore"):
        powered = _spectral_power(spectrum, steps)
        relative = np.full(powered.size, float(steps))  # relative error of F_k^N in units of u
        low_k, low_power, low_relative = _low_frequencies(masses, steps, size, np.abs(powered))
        powered[: low_k.size], relative[: low_k.size] = low_power, low_relative
        # the inverse transform spreads each spectral error over all n coefficients (2 / n: the half
        # spectrum stands for both halves); its own rounding is about log2(n) u |G_k|
        per_coefficient = 8.0 * U * float(np.sum((relative + math.log2(size)) * np.abs(powered))) / size
    out = scipy.fft.irfft(powered, size)
    out = np.roll(out, -int(low))[:length]
    return int(low), np.maximum(out, 0.0), per_coefficient


def compose(l_0, h, masses, infinite, steps, pessimistic, tail):
    """N-fold composition of a lattice measure by FFT (:func:`self_convolve`).

    Pessimistic: every coefficient is raised by the estimated rounding of one coefficient (so every
    tail sum dominates the exact one, and the excess lies where the coefficients are rather than at
    +inf) and the mass beyond the window (at most ``tail``) goes to +inf.  Optimistic: both are
    returned as ``rounding`` (the window length times the per-coefficient estimate, plus ``tail``), to
    be subtracted from what the measure bounds from below.

    Parameters
    ----------
    l_0, h : float
        The lattice: losses ``l_0 + k h``.
    masses : array_like
        One step's Q-view masses.
    infinite : float
        One step's mass at +inf.
    steps : int
    pessimistic : bool
        Where truncated mass goes.
    tail : float
        Largest mass cut off.

    Returns
    -------
    (l_0, masses, infinite, rounding)
        The composed lattice measure (same spacing h) and, optimistic only, the absolute slack of its
        hockey-stick divergence (0 when pessimistic or for one step).

    References
    ----------
    Koskela, Jalko, Honkela (2020) (FFT composition); ``dp_accounting``'s ``self_convolve``.
    """
    masses = np.asarray(masses, dtype=float)
    if steps == 1:
        return l_0, masses, infinite, 0.0
    window = chernoff_window(masses, steps, tail)  # once: the check and the FFT share it
    check_lattice_points(float(window[1] - window[0] + 1), f"composing {steps} steps on a lattice of spacing {h:g}",
                         "use fewer steps or a larger discretization")
    shift, out, per_coefficient = self_convolve(masses, steps, tail, window)
    with np.errstate(divide="ignore"):  # all mass at +inf: log1p(-1) = -inf, and the composition's is 1
        inf_mass = -np.expm1(steps * np.log1p(-min(infinite, 1.0))) if infinite > 0 else 0.0
    if pessimistic:
        # every coefficient raised by its rounding bound: every tail sum then dominates the exact one
        # (the excess lies where the coefficients are, not at +inf, so the curve's ends keep their digits)
        return steps * l_0 + shift * h, out + per_coefficient, inf_mass + tail, 0.0
    return steps * l_0 + shift * h, out, inf_mass, out.size * per_coefficient + tail
