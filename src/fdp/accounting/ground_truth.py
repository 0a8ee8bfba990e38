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

import mpmath
import numpy as np
from scipy.optimize import brentq

from ..result import Result
from ..validation import check_array_in, spelled
from .onestep import OneStep, tail_x
from .privacy_loss import Mechanism, subsampled, takes_mechanism

__all__ = ["GroundTruth", "gamma_ground_truth"]

_SQRT2 = math.sqrt(2.0)

_GUARD = 10  # extra mpmath digits beyond the fixed-point resolution 10**-dps
_NEGLIGIBLE = 1e-12  # tails and trims: at most this fraction of min(kappa) in total
_WINDOW = 3  # optimistic bins may reach up to l_k + _WINDOW h
_MAX_COEFFS = 2 * 10**7  # composed lattice points (about 1 GB of digits at dps = 25)


@dataclass(frozen=True)
class GroundTruth(Result):
    """Certified bracket ``lower <= gamma <= upper`` of ``gamma = 1 - T(P, Q)(kappa)`` (add direction).

    Arrays have the shape of ``kappa``.  ``loss_step`` is the lattice spacing h of the privacy
    loss and ``loss_range`` the one-step lattice ``[l_0, l_{G-1}]``; ``seconds`` is the run time.

    Attributes
    ----------
    mechanism : Mechanism
        The mechanism whose bound this is.
    grid, dps : int
    kappa, lower, upper : numpy.ndarray
    loss_step : float
    loss_range : tuple of float
    seconds : float
    """

    mechanism: Mechanism
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


def _lattice_frames(step, noise, scale, p, grid, log_tail):
    """Lattice origins l_0 of the upper and the lower side and the common spacing h (mpf).

    The SGM loss is bounded below by ``log(1 - p)``, where a large part of the P-mass piles up.
    The upper side starts its lattice there; the lower side shifts it so that the infimum lies
    half a step below a lattice point (and below ``0``, the mean ratio, so that the first bin
    can reach its ratio): the optimistic bins then all have about the same width h.
    """
    ctx = step.ctx
    if noise == "laplace":
        l_0, l_top = step.loss(ctx.mpf(0)), step.loss(ctx.mpf(1))
    else:
        l_top = step.loss(_tail_x(step, scale, p, log_tail, lower=False))
        l_0 = step.l_inf if p < 1.0 else step.loss(_tail_x(step, scale, p, log_tail, lower=True))
    h = (l_top - l_0) / (grid - 1)
    l_0_lower = l_0
    if noise == "gaussian" and p < 1.0:
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


def _window_end(step, w, end, lv, h, gap, target, widen: bool):
    """``(hi, gap(hi))``: the end of the window ``(w, x(l_k + _WINDOW h)]`` a bin of ratio ``e^{l_k}`` is searched in
    (the noise's upper end if nearer), widened (``widen``: the first bin without a window) until the ratio is
    reached, and made finite for an unbounded noise whose ratio is reached only at infinity."""
    ctx = step.ctx
    reach = _WINDOW * h
    while True:
        hi = step.x_of_loss(lv + reach)
        if hi >= step.x_hi:
            hi = step.x_hi
            pm_end, qm_end = step.masses(w, end)
            f_hi = qm_end - target * pm_end
        else:
            f_hi = gap(hi)
        if f_hi > 0 or hi == step.x_hi or not widen:
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
    return hi, f_hi


def _bin_root(step, w, lo, hi, target, gap, f_hi):
    """The end ``u`` in ``(lo, hi]`` of the bin from ``w`` with ``Q/P >= e^{l_k}`` certified in mpmath: the float
    root nudged upwards until the gap is non-negative, else (slow path) the Illinois method in mpmath."""
    ctx = step.ctx
    uf = _float_root(step, w, lo, hi, target)
    if uf is not None:
        nudge = 1e-12 * (1.0 + abs(uf))
        for _ in range(40):
            cand = ctx.mpf(uf) + nudge
            if cand >= hi:
                return hi
            if cand > w.x and gap(cand) >= 0:
                return cand
            nudge *= 4
    f_lo = gap(lo)
    return hi if f_lo >= 0 else _illinois(gap, lo, hi, f_lo, f_hi, ctx.mpf(10) ** -14 * (1 + abs(hi)))


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
        hi, f_hi = _window_end(step, w, end, lv, h, gap, target, widen=first and not first_window)
        if f_hi <= 0:  # no bin of ratio e^{l_k} within the window: round the cell down
            if first:
                cut_first = True
            upt = _Point(lo)
            put(*step.masses(w, upt))
            w, k = upt, k + 1
            continue
        u = _bin_root(step, w, lo, hi, target, gap, f_hi)
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
        raise ValueError(f"{spelled('kappa')} must not be empty")
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
        mechanism=mechanism,
        grid=grid,
        dps=dps,
        kappa=kap,
        lower=lower.reshape(kap.shape),
        upper=upper.reshape(kap.shape),
        loss_step=float(h),
        loss_range=(float(l_0), float(l_0 + (grid - 1) * h)),
        seconds=time.perf_counter() - t0,
    )
