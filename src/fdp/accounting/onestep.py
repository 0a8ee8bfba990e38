"""Certified one-step privacy-loss measures on a lattice, in double precision.

The certified bracket of :func:`fdp.accounting.pld.tradeoff_bracket` composes two measures of one step's
privacy loss ``L = log(q(X) / p(X))`` (add direction, :mod:`fdp.accounting.privacy_loss`; Q-view: ``nu`` is
the law of L under Q) on a lattice ``l_j = l_0 + j h``:

* the **pessimistic** measure is a Blackwell refinement of the true pair plus mass moved to larger
  losses (its hockey-stick divergence ``H(t) = int (1 - t e^{-l})^+ dnu`` lies above the true one for
  every t, and so does every composition of it);
* the **optimistic** measure is a garbling of the true pair minus mass moved to smaller losses
  (``H`` below the true one).

The pessimistic measure is also built for the remove direction ``T(Q, P)`` (:class:`OneStep` with
``direction="remove"``, through the reflection of the output line): :func:`fdp.accounting.pld.certified_lower_curve`
reads each direction's curve near its own ``(0, 1)`` corner, where its digits are.

:mod:`fdp.accounting.ground_truth` explains why these orders give ``gamma_lower <= gamma <= gamma_upper``
after composition (ReRo paper Thm. 1 with the NP lemma) and builds the same two measures in
mpmath for its exact ground truth.  Here they are built in float64, vectorised, in milliseconds
instead of seconds; the certificate survives rounding because every float error is bounded and
pushed in the safe direction:

Pessimistic (connect-the-dots, Doroshenko et al. 2022).  Each cell ``(a_j, a_{j+1}]`` of the
output line whose loss lies in ``[l_j, l_{j+1}]`` is split onto its two end points, keeping its
P- and Q-mass: Q-view mass ``b = (Q - e^{l_j} P) / (1 - e^{-h})`` at ``l_{j+1}`` and ``Q - b`` at
``l_j``.  Moving mass up keeps the order, so an upper bound of ``b`` suffices; and since only the upper
tail sums of the measure matter (``H(t)`` integrates a non-decreasing function), the cells' Q-masses,
differences of tail values that telescope, need only the error bounds of the tail values at the
boundaries where a tail sum starts: a staircase of extra mass (largest where the tail values are,
near the noise medians, and falling towards the top) raises every upper tail sum above the exact
one.  In all about 2e-15 per step, but almost none of it at high losses or ``+inf``, so the curve
near ``alpha = 0`` keeps its digits (a first version put it all at ``+inf``: 1.4e-11 after 5,000
steps, which lowered ``1 - f(1e-10)`` by 3 %).  The difference is computed as
``p M_1 - (e^{l_j} - 1 + p) M_0`` (``M_0``, ``M_1``: the noise masses of the cell centred at 0 and 1),
which keeps its digits where ``Q ~ e^{l_j} P``.  The cell boundaries are floats whose loss is
certified to lie below (``a_j^-``) resp. above (``a_j^+``) the lattice point; the tiny gap between
them goes, with its mass bound, to the next lattice point up.

Optimistic (bins of exact lattice ratio).  The output line is cut into consecutive bins whose
likelihood ratio ``Q(bin) / P(bin)`` is ``e^{l_k} (1 + m_k)`` for a lattice point ``l_k`` (a
scalar root finder, one bin after another, as in :mod:`fdp.accounting.ground_truth`); merging a bin is a garbling,
and its mass is placed at ``l_k`` (moving Q-mass down).  The margin ``m_k`` (about 1e-12) is larger
than the bound on the float error of the bin's ratio, so that ``Q(bin) / P(bin) >= e^{l_k}`` is
certified afterwards from the masses and their error bounds; a bin that fails (none in the tests)
goes to the largest lattice point below its certified ratio.  The bias of the margin is ``m_k`` in
loss per step, about ``N m_k`` after N steps, far below the discretisation error.

Float errors.  Noise masses are differences of tail values (``scipy.special.ndtr``; ``exp`` for
the Laplace) on the side of the median, with a relative error bound per value of
``(16 + 8 z^2) u`` for the normal tail at ``z`` standard deviations (``u = 2^-53``; measured against
mpmath: at most ``4 + 2 z^2`` ulps including the rounding of ``z``, see the tests) and
``(8 + 8 |t|) u`` for the Laplace tail ``e^{-|t|} / 2``.  The loss of a float x is bounded by a
first-order error analysis of ``log1p(p expm1(z))`` with a factor two of slack.  Lattice points
``l_0 + j h`` are treated as the real numbers they denote; their float values carry an interval of
``2 u (|l_0| + 2 j h)``.  The rounding of the FFT composition is estimated from a model of its
spectral errors, not bounded (:func:`fdp.accounting.lattice.self_convolve`).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtr

from ..validation import check_discretization, check_positive_int, check_subsampled_range
from .privacy_loss import Mechanism, log_ratio, subsampled, takes_mechanism

__all__ = ["OneStep", "pessimistic", "optimistic", "tail_x", "frames", "measures"]

U = 2.0**-53  # unit round-off of float64
_SQRT1_2 = math.sqrt(0.5)
_WINDOW = 3  # an optimistic bin may reach up to loss l_k + _WINDOW h
_NUDGE_ROUNDS = 40
_TINY = 1e-250  # smaller masses are not kept on the lattice
_SUBNORMAL = 1e-322  # absolute error allowed to a tail value that underflows into the subnormal range


@dataclass(frozen=True)
class OneStep:
    """One step of a (subsampled) Gaussian or Laplace mechanism, sensitivity 1, in float64.

    The noise components are ``N_0`` (centred at 0) and ``N_1`` (centred at 1) on the output line.
    Add direction: ``P = N_0``, ``Q = (1 - p) N_0 + p N_1``, loss ``l(x) = log(1 - p + p e^{z(x)})``
    with ``z = log r(x)`` (:func:`fdp.accounting.privacy_loss.log_ratio`).  Remove direction: the pair
    ``T(Q, P)`` seen through the reflection ``y = 1 - x``, which keeps the two components and swaps
    their roles: ``P = p N_0 + (1 - p) N_1``, ``Q = N_1``, loss ``l(y) = -log(1 - p + p e^{-z(y)})``
    (for the Gaussian: at most ``-log(1 - p)``, unbounded below).  In both the loss is
    non-decreasing in the output.

    Attributes
    ----------
    noise : {"gaussian", "laplace"}
    scale : float
        sigma or b.
    p : float
        Sampling rate in (0, 1].
    direction : {"add", "remove"}, default "add"
    """

    noise: str
    scale: float
    p: float
    direction: str = "add"

    def __post_init__(self):
        if self.direction not in ("add", "remove"):
            raise ValueError(f"direction must be 'add' or 'remove', got {self.direction!r}")
        check_subsampled_range(self.scale, self.p)

    @property
    def _sign(self) -> float:
        return 1.0 if self.direction == "add" else -1.0

    @property
    def weights(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """``((Q_0, Q_1), (P_0, P_1))``: the weights of ``N_0`` and ``N_1`` in Q and in P."""
        p = self.p
        return ((1.0 - p, p), (1.0, 0.0)) if self.direction == "add" else ((0.0, 1.0), (p, 1.0 - p))

    # -- the loss map ------------------------------------------------------------------------

    @property
    def _add_range(self) -> tuple[float, float]:
        """Infimum and supremum of the add direction's loss (the remove direction's are their negatives, swapped)."""
        if self.noise == "laplace":
            return float(subsampled(-1.0 / self.scale, self.p)), float(subsampled(1.0 / self.scale, self.p))
        return (math.log1p(-self.p) if self.p < 1.0 else -math.inf), math.inf

    @property
    def loss_infimum(self) -> float:
        """The smallest loss (add: ``-inf`` for the plain Gaussian, ``log(1 - p)`` subsampled, the lower atom of the Laplace)."""
        low, high = self._add_range
        return low if self.direction == "add" else -high

    @property
    def loss_supremum(self) -> float:
        """The largest loss (add: ``+inf`` for the Gaussian, the upper atom of the Laplace; remove: ``-log(1 - p)``)."""
        low, high = self._add_range
        return high if self.direction == "add" else -low

    def loss(self, x) -> tuple[np.ndarray, np.ndarray]:
        """``(l(x), bound)``: the float loss at outputs x and a bound on its error."""
        x = np.asarray(x, dtype=float)
        t = self._sign * log_ratio(self.noise, self.scale, x)  # the loss is sign * log(1 - p + p e^t)
        with np.errstate(over="ignore", invalid="ignore"):
            inner = subsampled(t, self.p)
            if self.p < 1.0:
                # F = p e^t / e^inner in [0, 1]: the sensitivity of the loss to a relative error of t
                share = np.exp(np.minimum(math.log(self.p) + t - inner, 0.0))
                share = np.where(np.isfinite(t), share, 0.0)
            else:
                share = np.ones_like(t)
            tabs = np.where(np.isfinite(t), np.abs(t), 0.0)
            bound = 12.0 * U * tabs * share + 4.0 * U * share + 4.0 * U * np.abs(inner)
            if self.p < 1.0:
                bound = bound + 4.0 * U * abs(math.log1p(-self.p))
        return self._sign * inner, bound

    def x_of_loss(self, loss) -> np.ndarray:
        """The output x with ``l(x) = loss`` (float, uncertified; +-inf beyond the loss range)."""
        lv = self._sign * np.asarray(loss, dtype=float)  # = log(1 - p + p e^t), t = sign * z
        p = self.p
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            if p == 1.0:
                t = lv.copy()
            else:
                l_inf = math.log1p(-p)
                gap = lv - l_inf
                small = gap < 30.0
                near = np.log((1.0 - p) / p * np.expm1(np.where(small, gap, 1.0)))
                far = lv - math.log(p) + np.log1p(-(1.0 - p) * np.exp(-lv))
                t = np.where(small, near, far)
                t = np.where(gap <= 0.0, -np.inf, t)
            z = self._sign * t
            if self.noise == "gaussian":
                return (z * self.scale**2 * 2.0 + 1.0) / 2.0
            x = (z * self.scale + 1.0) / 2.0
            x = np.where(z <= -1.0 / self.scale, -np.inf, x)
            return np.where(z >= 1.0 / self.scale, np.inf, x)

    # -- noise masses ------------------------------------------------------------------------

    def _tail(self, x, centre: float, lower: bool):
        """The noise tail ``P(X <= x)`` (lower) or ``P(X > x)`` for noise centred at ``centre``, and its relative error bound."""
        with np.errstate(invalid="ignore"):
            if self.noise == "gaussian":
                z = (x - centre) / self.scale
                value = ndtr(z if lower else -z)
                rel = (16.0 + 8.0 * np.where(np.isfinite(z), z * z, 0.0)) * U
            else:
                t = (x - centre) / self.scale
                s = t if lower else -t  # the tail is e^{s} / 2 where s <= 0
                value = np.where(s <= 0.0, 0.5 * np.exp(np.minimum(s, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(s, 0.0)))
                rel = (8.0 + 8.0 * np.where(np.isfinite(t), np.abs(t), 0.0)) * U
        return value, rel

    def noise_mass(self, a, b, centre: float) -> tuple[np.ndarray, np.ndarray]:
        """Mass of the noise centred at ``centre`` on ``(a, b]`` and a bound on its absolute error.

        Differences of tail values on the side of the median (``b <= centre``: lower tails,
        ``a >= centre``: upper tails, otherwise one minus both), so that small masses keep their
        relative accuracy.
        """
        a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
        low_a, rl_a = self._tail(a, centre, True)
        low_b, rl_b = self._tail(b, centre, True)
        up_a, ru_a = self._tail(a, centre, False)
        up_b, ru_b = self._tail(b, centre, False)
        below, above = b <= centre, a >= centre
        mass = np.where(below, low_b - low_a, np.where(above, up_a - up_b, 1.0 - low_a - up_b))
        err = np.where(
            below, rl_b * low_b + rl_a * low_a,
            np.where(above, ru_a * up_a + ru_b * up_b, rl_a * low_a + ru_b * up_b + 2.0 * U),
        )
        mass = np.maximum(mass, 0.0)
        # tail values in the subnormal range lose their relative accuracy: an absolute ~20 ulps of the smallest float
        return mass, err + 2.0 * U * mass + _SUBNORMAL

    def masses(self, a, b):
        """``(M_0, E_0, M_1, E_1)``: noise masses centred at 0 and at 1 on ``(a, b]`` with error bounds."""
        m0, e0 = self.noise_mass(a, b, 0.0)
        m1, e1 = self.noise_mass(a, b, 1.0)
        return m0, e0, m1, e1


def _lattice_interval(l_0: float, h: float, j) -> tuple[np.ndarray, np.ndarray]:
    """Float values of the lattice points ``l_0 + j h`` and a bound on their rounding."""
    j = np.asarray(j, dtype=float)
    return l_0 + j * h, 2.0 * U * (abs(l_0) + 2.0 * j * h)


def _boundaries(step: OneStep, l_0: float, h: float, j: np.ndarray):
    """Floats ``a^- <= a^+`` around ``x(l_j)`` with ``l(a^-) <= l_j <= l(a^+)`` certified (+-inf where the loss range ends)."""
    lv, lerr = _lattice_interval(l_0, h, j)
    x = step.x_of_loss(lv)
    lo, hi = x.copy(), x.copy()
    finite = np.isfinite(x)
    base = np.where(finite, 16.0 * U * (np.abs(x) + 1.0 + step.scale**2), 0.0)
    for side, sign in ((lo, -1.0), (hi, 1.0)):
        step_size = base.copy()
        side[finite] = x[finite] + sign * step_size[finite]
        for _ in range(_NUDGE_ROUNDS):
            loss, err = step.loss(side)
            with np.errstate(invalid="ignore"):
                ok = (loss + err <= lv - lerr) if sign < 0 else (loss - err >= lv + lerr)
            ok |= side == sign * np.inf  # the region beyond is empty
            if ok.all():
                break
            step_size = np.where(ok, step_size, 4.0 * step_size)
            side[:] = np.where(ok, side, x + sign * step_size)
        else:
            raise ArithmeticError("could not certify the loss at a lattice boundary in float64")
    return lo, hi


def _q_upper(step: OneStep, m0, e0, m1, e1):
    """An upper bound on the Q-mass ``w_0 M_0 + w_1 M_1`` from the noise masses and their error bounds."""
    (w0, w1), _ = step.weights
    return (w0 * (m0 + e0) + w1 * (m1 + e1)) * (1.0 + 4.0 * U)


def _difference(step: OneStep, m0, e0, m1, e1, lv, lerr):
    """``D = Q - e^{l} P = c_0 M_0 + c_1 M_1`` at the lattice point ``l`` (an interval) and a bound on its error.

    Add: ``c_0 = -(e^l - 1 + p)``, ``c_1 = p``; remove: ``c_0 = -p e^l``, ``c_1 = 1 - (1 - p) e^l``
    (``-expm1(l + log(1 - p))``).  Both coefficients are computed without cancellation, so D keeps its
    digits where ``Q ~ e^l P``.
    """
    p = step.p
    with np.errstate(over="ignore", invalid="ignore"):  # inf or nan where e^l overflows: the callers cap D by the Q-mass
        e_l = np.exp(lv)
        if step.direction == "add":
            c0 = -(np.expm1(lv) + p)
            c0_err = 2.0 * U * np.abs(np.expm1(lv)) + e_l * lerr * (1.0 + 4.0 * U) + U * np.abs(c0)
            c1, c1_err = p, 0.0
        else:
            c0 = -p * e_l
            c0_err = p * e_l * (lerr * (1.0 + 4.0 * U) + 2.0 * U)
            if p < 1.0:
                log_keep = math.log1p(-p)
                shifted = lv + log_keep
                c1 = -np.expm1(shifted)
                # expm1 to 2 u; its argument is off by lerr plus the roundings of the sum and of log1p,
                # and d c_1 / dl = -(1 - p) e^l
                arg_err = lerr + 2.0 * U * (np.abs(shifted) + abs(log_keep))
                c1_err = 2.0 * U * np.abs(c1) + (1.0 - p) * e_l * (1.0 + 4.0 * U) * arg_err
            else:
                c1, c1_err = 1.0, 0.0
        d = c0 * m0 + c1 * m1
        err = (np.abs(c0) * e0 + np.abs(c1) * e1 + c0_err * (m0 + e0) + c1_err * (m1 + e1)
               + 4.0 * U * (np.abs(c1) * m1 + np.abs(c0) * m0))
        return d, err


def pessimistic(step: OneStep, l_0: float, h: float, grid: int) -> tuple[np.ndarray, float]:
    """The certified pessimistic measure: Q-view masses at ``l_0 + j h`` (``j < grid``) and the mass at ``+inf``.

    ``l_0`` must lie at or below the loss infimum for the subsampled Gaussian in the add direction (no
    mass below the lattice), anywhere for the others (mass below moves up to ``l_0``); the mass above
    the top point is split onto it and ``+inf`` (add direction, Gaussian) or moved down onto it only
    if the loss supremum lies at or below it (Laplace, and the remove direction: the caller puts the
    top point above the supremum, :func:`frames`).

    Parameters
    ----------
    step : OneStep
    l_0, h : float
        The lattice.
    grid : int
        Lattice points.

    Returns
    -------
    (masses, infinite) : (numpy.ndarray, float)

    References
    ----------
    Doroshenko et al. (2022) (connect-the-dots); module docstring.
    """
    j = np.arange(grid)
    lv, lerr = _lattice_interval(l_0, h, j)
    if math.isfinite(step.loss_supremum):
        if not step.loss_supremum + float(step.loss(np.array([np.inf]))[1][0]) <= float(lv[-1] - lerr[-1]):
            raise ValueError("the lattice must reach above the largest loss (the caller puts its top point above it)")
    lo, hi = _boundaries(step, l_0, h, j)
    (w0, w1), _ = step.weights

    def q_mass(m0, _e0, m1, _e1):  # point estimate; its error is accounted for in the tail sums below
        return w0 * m0 + w1 * m1

    out = np.zeros(grid)
    # below the lattice: (-inf, a_0^-] has loss <= l_0; its Q-mass moves up to l_0
    out[0] += q_mass(*step.masses(-np.inf, lo[0]))
    # gaps (a_j^-, a_j^+]: loss within rounding of l_j; their Q-mass goes up to l_{j+1} (+inf at the top)
    gaps = q_mass(*step.masses(lo, hi))
    out[1:] += gaps[:-1]
    infinite = float(gaps[-1])
    # cells (a_j^+, a_{j+1}^-]: loss in [l_j, l_{j+1}], split onto both ends, the split pushed up by its error
    m0, e0, m1, e1 = step.masses(hi[:-1], np.maximum(lo[1:], hi[:-1]))
    d, d_err = _difference(step, m0, e0, m1, e1, lv[:-1], lerr[:-1])
    with np.errstate(invalid="ignore"):
        upper = np.maximum(d + d_err, 0.0) / -math.expm1(-h) * (1.0 + 8.0 * U)
    # the split never moves more than the cell's Q-mass up; where e^l overflows (losses above 709) D is
    # not computable and the whole cell goes up (still pessimistic)
    q_cell = _q_upper(step, m0, e0, m1, e1)
    upper = np.where(upper <= q_cell, upper, q_cell)
    out[1:] += upper
    out[:-1] += np.maximum(q_mass(m0, e0, m1, e1) - upper, 0.0)
    # above the lattice: (a_top^+, inf), loss >= l_top
    m0, e0, m1, e1 = step.masses(hi[-1], np.inf)
    q_top = float(q_mass(m0, e0, m1, e1)[()])
    if math.isinf(step.loss_supremum):
        # split onto l_top and +inf: the P-mass stays at l_top (Q-view e^{l_top} P), the rest at +inf
        d, d_err = _difference(step, m0, e0, m1, e1, lv[-1:], lerr[-1:])
        to_inf = float(max(d[0] + d_err[0], 0.0) * (1.0 + 4.0 * U))
        q_above = float(_q_upper(step, m0, e0, m1, e1)[()])
        to_inf = to_inf if to_inf <= q_above else q_above  # also where e^l overflowed (nan)
        out[-1] += max(q_top - to_inf, 0.0)
        infinite += to_inf
    else:
        out[-1] += q_top  # loss at most the supremum, at or below l_top (checked above)
    # The masses are differences of tail values, so the Q-mass at lattice points >= k telescopes to tail
    # values at the boundaries around l_{k-1} and l_k (the split of cell k - 1 is pushed up, so only its
    # upper part counts and it is certified): the error of that upper tail sum is bounded by those values'
    # errors, a "1 - ..." rounding where the chain crosses a noise median, and the rounding of the products
    # and sums (16 u of the sum).  Extra mass E_k - E_{k+1} at each l_k, with E_k the largest of these bounds
    # at or above k, raises every upper tail sum of the measure above the true one, which is all that H(t)
    # needs (phi_t is non-decreasing).  The excess (about 2e-15 per step in all) sits where the tail values
    # are large: small losses, not +inf, so that the curve near alpha = 0 is not lowered by it.
    errs = np.zeros((2, grid))  # errors of the tail values at lo and hi, and of "1 - ..." below a median
    for centre, weight in ((0.0, w0), (1.0, w1)):
        if weight == 0.0:
            continue
        for row, edges in enumerate((lo, hi)):
            low, rel_low = step._tail(edges, centre, True)
            up, rel_up = step._tail(edges, centre, False)
            errs[row] += weight * np.where(edges < centre, rel_low * low + 2.0 * U, rel_up * up)
    errs = np.nan_to_num(errs)  # tails at +-inf are exact
    around = errs.sum(axis=0)  # both boundaries of l_j
    sums = np.cumsum(out[::-1])[::-1] + infinite
    bound = np.empty(grid + 1)
    bound[:-1] = around + np.concatenate([[0.0], around[:-1]]) + 16.0 * U * sums
    bound[-1] = around[-1] + 16.0 * U * infinite
    stair = np.maximum.accumulate(bound[::-1])[::-1]  # E_k, non-increasing in k
    out = out + (stair[:-1] - stair[1:])
    infinite += float(stair[-1])
    # masses below 1e-250 (subnormal far-tail products) move up to +inf: the FFT's window bounds
    # (logsumexp over the masses) overflow on them
    tiny = out < _TINY
    return np.where(tiny, 0.0, out), infinite + float(out[tiny].sum())


def _margins(step: OneStep, l_0: float, h: float, k: np.ndarray) -> np.ndarray:
    """Starting margin ``m_k`` of the optimistic bins: 32 times the float error bound of ``Q - e^{l_k} P``
    on a bin of width h around ``l_k``, relative to ``e^{l_k} P`` (at least 1e-13, at most 1e-8); the
    bins' own bounds are checked in :func:`_bins`, whose bins may be narrower."""
    lv, lerr = _lattice_interval(l_0, h, k)
    m0, e0, m1, e1 = step.masses(step.x_of_loss(lv - h / 2), step.x_of_loss(lv + h / 2))
    _, err = _difference(step, m0, e0, m1, e1, lv, lerr)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rel = err / (np.exp(lv) * m0)
    rel = np.where(np.isfinite(rel), rel, np.inf)
    return np.clip(32.0 * rel + 1e-13, 1e-13, 1e-8)


def _scalar_noise(step: OneStep):
    """Scalar ``tail(x, centre, lower) -> (value, error bound)`` and ``density(x, centre)`` of the noise
    (float twins of :meth:`OneStep.noise_mass` for the optimistic root finder, same error model)."""
    s = step.scale
    if step.noise == "gaussian":
        k = _SQRT1_2 / s
        norm = 1.0 / (s * math.sqrt(2.0 * math.pi))

        def tail(x, centre, lower):
            d = (x - centre) * k
            v = 0.5 * math.erfc(-d if lower else d)
            return v, (16.0 + 16.0 * d * d) * U * v if math.isfinite(d) else 0.0

        def density(x, centre):
            d = (x - centre) / s
            return norm * math.exp(-0.5 * d * d)

    else:

        def tail(x, centre, lower):
            t = (x - centre) / s
            v = 0.5 * math.exp(t if lower else -t) if (t <= 0.0) == lower else 1.0 - 0.5 * math.exp(-abs(t))
            return v, (8.0 + 8.0 * abs(t)) * U * v if math.isfinite(t) else 0.0

        def density(x, centre):
            return math.exp(-abs(x - centre) / s) / (2.0 * s)

    return tail, density


def _bin_gap(tail, p: float, w: float):
    """``g(u, c) = (p M_1 - c M_0, M_0, error bound of M_0, of M_1)`` on the bin ``(w, u]``, ``M_j`` the noise's mass
    there under shift ``j`` (read from ``tail``, the upper or lower tail whichever is smaller)."""
    w0, w0_err = tail(w, 0.0, w < 0.0)
    w1, w1_err = tail(w, 1.0, w < 1.0)

    def mass(u, shift, w_tail):  # the mass on (w, u] under ``shift``, and the error bound of u's tail
        if u <= shift:
            t, e = tail(u, shift, True)
            return t - w_tail, e
        t, e = tail(u, shift, False)
        return (w_tail - t if w >= shift else 1.0 - w_tail - t), e

    def g(u, c):
        (m0, e0), (m1, e1) = mass(u, 0.0, w0), mass(u, 1.0, w1)
        return p * m1 - c * m0, m0, e0 + w0_err, e1 + w1_err

    return g


def _bin_end(g, slope, c: float, tol: float, lo: float, hi: float, guess: float) -> float:
    """The end ``u`` in ``(lo, hi)`` of a bin with ``|g(u, c)| <= tol M_0``: Newton's method (``slope`` is ``g``'s
    derivative) kept inside the bracket, started at ``guess``."""
    a, b = lo, hi
    u = guess if a < guess < b else 0.5 * (a + b)
    for _ in range(100):
        gu, m0, _, _ = g(u, c)
        if abs(gu) <= tol * m0:
            break
        if gu > 0.0:
            b = u
        else:
            a = u
        d = slope(u)
        nxt = u - gu / d if d > 0.0 else a
        if not a < nxt < b:
            nxt = 0.5 * (a + b)
        if nxt == u:
            break
        u = nxt
    return u


def _bins(step: OneStep, l_0: float, h: float, grid: int, margins: np.ndarray, w: float, x_end: float):
    """Consecutive bins ``(w_i, w_{i+1}]`` from ``w`` to ``x_end`` with ``Q / P = e^{l_k} (1 + m_k)``, one
    after another: ``(starts, ends, targets)``.

    The end u of the bin for lattice point k solves ``g(u) = p M_1(w, u) - c_k M_0(w, u) = 0``,
    ``c_k = e^{l_k} (1 + m_k) - 1 + p``, by Newton's method inside the bracket ``(x(l_k),
    x(l_k + 3h))``, started where the previous bin's position in its cell suggests, and stopped
    when the ratio is within ``m_k / 10`` of its aim.  The margin starts at ``margins[k]`` and is
    raised (the bin solved again) until it is four times the bound on the float error of
    ``Q - e^{l_k} P`` of the bin found (narrow bins need more), at most 1e-6.  Where no bin reaches
    the ratio within the window the cell is cut at ``x(l_k)`` (its mass is placed lower by
    :func:`_place`); the rest beyond the last bin is returned as one bin aimed at the top point.
    """
    p = step.p
    tail, density = _scalar_noise(step)
    top = grid - 1
    lv = l_0 + np.arange(grid + 1) * h
    xs = step.x_of_loss(lv).tolist()
    x_hi = step.x_of_loss(lv[:-1] + _WINDOW * h).tolist()
    with np.errstate(over="ignore"):  # inf beyond loss 709: no bin reaches that ratio, the cells are cut (below)
        exps = np.exp(lv[:-1]).tolist()
        expm1s = np.expm1(lv[:-1]).tolist()
    lattice_err = (_lattice_interval(l_0, h, np.arange(grid))[1] + 8.0 * U).tolist()  # relative terms of e^{l_k}
    margins = margins.tolist()
    starts, ends, targets = [], [], []
    k = bisect.bisect_right(xs, w)
    theta = 0.5
    while k <= top and w < x_end:
        m = margins[k]
        lo = xs[k]  # the bin (w, x(l_k)] has ratio below e^{l_k}: g < 0 there
        if lo <= w:  # the pointwise ratio already exceeds e^{l_k} at w
            k += 1
            continue
        hi = min(x_hi[k], x_end)
        g = _bin_gap(tail, p, w)
        c = expm1s[k] + p + m * exps[k]
        if not g(hi, c)[0] > 0.0:
            if hi >= x_end:
                break  # the rest cannot reach the ratio: one bin (below)
            u = lo  # no bin of this ratio within the window: cut at the lattice point
        else:
            x_k, x_next = xs[k], xs[k + 1]
            guess = x_k + (1.0 - theta) * (x_next - x_k) if math.isfinite(x_k) and math.isfinite(x_next) else math.nan
            for _ in range(4):  # raise the margin until it covers the float error of this bin
                c = expm1s[k] + p + m * exps[k]
                u = _bin_end(g, lambda x, c=c: p * density(x, 1.0) - c * density(x, 0.0), c, 0.1 * m * exps[k], lo, hi,
                             guess)
                _, m0, e0, e1 = g(u, c)
                scale = exps[k] * m0
                need = 4.0 * ((p * e1 + abs(c) * e0 + 4.0 * U * abs(c) * m0) / scale + 2.0 * lattice_err[k]) if scale > 0.0 else math.inf
                if m >= need or m >= 1e-6:
                    break
                m = min(2.0 * need, 1e-6)
        starts.append(w)
        ends.append(u)
        targets.append(k)
        x_k, x_next = xs[k], xs[k + 1]
        theta = min(max((u - x_k) / (x_next - x_k), 0.0), 1.0) if math.isfinite(x_k) and math.isfinite(x_next) else 0.5
        w = u
        k = max(k + 1, bisect.bisect_right(xs, u))
    if w < x_end:  # the rest, aimed at the top point (placed lower if its ratio does not reach it)
        starts.append(w)
        ends.append(x_end)
        targets.append(top)
    return starts, ends, targets


def optimistic(step: OneStep, l_0: float, h: float, grid: int, crude: float = 0.0) -> np.ndarray:
    """The certified optimistic measure: Q-view masses at ``l_0 + k h`` (``k < grid``), no mass at ``+inf``.

    ``l_0`` must lie at or below the loss infimum (Laplace: below the lower atom) and, for the Laplace,
    the top lattice point at or below the upper atom; mass whose certified ratio lies below ``l_0``
    is dropped, mass above the top point moves down onto it.  Above the lattice point beyond which
    the Q-tail is at most ``crude``, the bins are the lattice cells themselves, placed at their lower
    end (a first-order loss of at most ``h`` on that mass, which saves most of the root finding when
    the loss has a long, thin upper tail).

    Parameters
    ----------
    step : OneStep
    l_0, h : float
        The lattice.
    grid : int
        Lattice points.
    crude : float, default 0.0
        Q-tail mass whose bins are the lattice cells.

    Returns
    -------
    numpy.ndarray

    References
    ----------
    Module docstring; Blackwell (1953) (garbling).
    """
    if step.direction != "add":
        raise ValueError(f"the optimistic measure is built for the add direction only, got {step.direction!r}")
    margins = _margins(step, l_0, h, np.arange(grid))
    lattice_x = step.x_of_loss(l_0 + np.arange(grid) * h)
    m0, _, m1, _ = step.masses(lattice_x, np.inf)
    thin = np.flatnonzero((1.0 - step.p) * m0 + step.p * m1 <= crude)
    cut = int(thin[0]) if thin.size and crude > 0.0 else grid - 1
    cells = lattice_x[cut:]  # crude cells (x(l_k), x(l_{k+1})], aimed at l_k
    x_end = math.inf if step.noise == "gaussian" else 1.0
    if step.noise == "laplace":
        # the atoms (x <= 0 and x > 1) are bins of their own, at the lattice points just below them
        starts, ends, targets = _bins(step, l_0, h, cut + 1, margins, 0.0, min(cells[0], x_end))
        starts, ends, targets = [-math.inf] + starts, [0.0] + ends, [0] + targets
    else:
        starts, ends, targets = _bins(step, l_0, h, cut + 1, margins, -math.inf, min(cells[0], x_end))
    inner = cells[cells < x_end]
    starts += inner.tolist()
    ends += np.append(inner[1:], x_end).tolist()
    targets += list(range(cut, cut + inner.size))
    if step.noise == "laplace":
        starts, ends, targets = starts + [1.0], ends + [math.inf], targets + [grid - 1]
    return _place(step, l_0, h, grid, np.array(starts), np.array(ends), np.array(targets))


def _place(step: OneStep, l_0: float, h: float, grid: int, starts, ends, targets) -> np.ndarray:
    """Q-mass lower bounds of the bins at their target lattice point where ``Q / P >= e^{l_k}`` is
    certified, else at the largest lattice point below a certified lower bound of their ratio."""
    p = step.p
    m0, e0, m1, e1 = step.masses(starts, ends)
    q_low = np.maximum((1.0 - p) * (m0 - e0) + p * (m1 - e1), 0.0) * (1.0 - 4.0 * U)
    lv, lerr = _lattice_interval(l_0, h, targets)
    d, err = _difference(step, m0, e0, m1, e1, lv, lerr)
    ok = d - err >= 0.0
    k = targets.copy()
    if not ok.all():
        with np.errstate(divide="ignore", invalid="ignore"):  # in logs: the quotient overflows far from private
            log_q, log_m = np.log(q_low), np.log(m0 + e0)
            ratio = log_q - log_m - 8.0 * U * (1.0 + np.abs(log_q) + np.abs(log_m))
        fallback = np.floor((ratio - l_0) / h)
        fallback = np.where(np.isfinite(fallback), fallback, -1.0)
        fv, ferr = _lattice_interval(l_0, h, np.maximum(fallback, 0.0))
        fallback = np.where(fv + ferr <= ratio, fallback, fallback - 1.0)
        k = np.where(ok, targets, np.minimum(fallback, targets)).astype(int)
    keep = (k >= 0) & (q_low > 0.0)
    out = np.zeros(grid)
    np.add.at(out, np.minimum(k[keep], grid - 1), q_low[keep])
    out = out * (1.0 - 4.0 * U)
    return np.where(out < _TINY, 0.0, out)  # dropping mass keeps the order (see pessimistic)


def tail_x(step: OneStep, log_tail: float, lower: bool) -> float:
    """An output x with ``Q(X > x) ~ e^{log_tail}`` (``lower=False``, add direction) or
    ``N_1(X <= x) ~ e^{log_tail}`` (``lower=True``: the lower tail of Q for p = 1 or in the remove
    direction), Gaussian noise.  Any x is valid: it only decides where the lattice ends.

    Parameters
    ----------
    step : OneStep
        A Gaussian step.
    log_tail : float
        Log of the Q-tail beyond x.
    lower : bool
        The lower tail of ``N_1`` instead of Q's upper one.

    Returns
    -------
    float
    """
    scale, p = step.scale, step.p
    if lower:
        f = lambda x: log_ndtr((x - 1.0) / scale) - log_tail  # noqa: E731
        lo, hi = 1.0 - scale * (math.sqrt(2.0 * -log_tail) + 10.0), 1.0
    else:

        def f(x):
            a = log_ndtr(-(x - 1.0) / scale) + math.log(p)
            b = log_ndtr(-x / scale) + (math.log1p(-p) if p < 1.0 else -math.inf)
            return np.logaddexp(a, b) - log_tail

        lo, hi = 1.0, 1.0 + scale * (math.sqrt(2.0 * -log_tail) + 10.0)
        if f(lo) < 0.0:  # Q's mass above x = 1 is already below the tail (p ~ 1e-20): the end lies below 1
            lo, hi = -scale * (math.sqrt(2.0 * -log_tail) + 10.0), 1.0
            if f(lo) <= 0.0:
                return lo
    return float(brentq(f, lo, hi, xtol=1e-12 * scale))


def frames(step: OneStep, discretization: float, log_tail: float, max_grid: int) -> tuple[float, float, float, int]:
    """The two lattices: ``(l_0 pessimistic, l_0 optimistic, h, grid)``, same spacing and size.

    The lattice spans the loss range of one step, cut where the Q-tail beyond is ``e^{log_tail}``
    (Gaussian), in ``grid = ceil(range / discretization) + 1`` points (at least 17, at most
    ``max_grid``).  Subsampled Gaussian: the pessimistic lattice starts just below the loss
    infimum ``log(1 - p)``, the optimistic one so that the infimum lies half a step below a
    lattice point (and that point at or below 0, the mean ratio), so that its bins have about the
    same width.  Laplace: the pessimistic lattice covers both atoms from just above (they move up
    onto its end points), the optimistic one lies just inside them (they move down).  Remove
    direction (pessimistic only), subsampled Gaussian: from the cut of Q's lower tail to just above
    the supremum ``-log(1 - p)``.

    Parameters
    ----------
    step : OneStep
    discretization : float
        The wanted spacing h.
    log_tail : float
        Log of the Q-tail cut off above (and, for p = 1, below) the lattice.
    max_grid : int
        The most lattice points.

    Returns
    -------
    (l_0 pessimistic, l_0 optimistic, h, grid)
    """
    if step.noise == "laplace":
        (lo, hi), (e_lo, e_hi) = step.loss(np.array([-np.inf, np.inf]))
        margin = 64.0 * U * (1.0 + abs(lo) + abs(hi)) + 2.0 * max(e_lo, e_hi)
        bottom, top = lo + margin, hi + margin
    elif step.direction == "remove" and step.p < 1.0:
        # the loss rises to its supremum -log(1 - p) as y -> inf: the top point lies just above it;
        # below, the lattice is cut where the lower tail of Q = N_1 is e^{log_tail}
        (sup,), (err,) = step.loss(np.array([np.inf]))
        sup, err = float(sup), float(err)
        bottom = float(step.loss(np.array([tail_x(step, log_tail, lower=True)]))[0][0])
        # far from private nearly all of Q sits within rounding of the supremum: keep 16 spacings below it
        bottom = min(bottom, sup - 16.0 * discretization)
        # above the supremum by its error and the rounding of the float lattice points (``_lattice_interval``)
        top = sup + 2.0 * err + 16.0 * U * (1.0 + 3.0 * abs(bottom) + 2.0 * abs(sup))
    else:
        top = float(step.loss(np.array([tail_x(step, log_tail, lower=False)]))[0][0])
        if step.p < 1.0:
            bottom = step.loss_infimum - 64.0 * U * (1.0 + abs(step.loss_infimum))
        else:
            bottom = float(step.loss(np.array([tail_x(step, log_tail, lower=True)]))[0][0])
    grid = int(min(max(math.ceil((top - bottom) / discretization), 16), max_grid)) + 1
    h = (top - bottom) / (grid - 1)
    if step.noise == "laplace":
        low = bottom - 4.0 * margin
    elif step.p < 1.0 and step.direction == "add":
        low = bottom + min(h / 2, -bottom / 2) - h
    else:
        low = bottom
    return bottom, low, h, grid


@takes_mechanism
def measures(mechanism: Mechanism, discretization: float, log_tail: float, max_grid: int = 10**6) -> dict:
    """The certified pessimistic and optimistic measures of one step of (subsampled) Gaussian or Laplace noise.

    Parameters
    ----------
    mechanism : Mechanism
        One step of it (its ``steps`` do not enter).
    discretization : float
        The lattice spacing wanted (:func:`frames`).
    log_tail : float
        Log of the Q-tail cut off by the lattice.
    max_grid : int, default 10**6
        The most lattice points.

    Returns
    -------
    dict
        ``"pessimistic"`` and ``"optimistic"``, each ``(l_0, h, masses, mass at +inf)``.

    References
    ----------
    Module docstring; Doroshenko et al. (2022).

    Examples
    --------
    >>> out = measures(Mechanism("gaussian", 1.0), 1e-2, math.log(1e-20))
    >>> l_0, h, masses, infinite = out["pessimistic"]
    >>> bool(masses.sum() + infinite >= 1.0 >= out["optimistic"][2].sum())  # mass added / removed
    True
    """
    discretization = check_discretization("discretization", discretization)
    if not (isinstance(log_tail, (int, float)) and not isinstance(log_tail, bool) and -math.inf < log_tail < 0.0):
        raise ValueError(f"log_tail must be the log of a tail mass below 1 (finite and < 0), got {log_tail!r}")
    max_grid = check_positive_int("max_grid", max_grid)
    noise, noise_multiplier, sampling_rate, _ = mechanism.args
    step = OneStep(noise, noise_multiplier, sampling_rate)
    l_pess, l_opt, h, grid = frames(step, discretization, log_tail, max_grid)
    masses, infinite = pessimistic(step, l_pess, h, grid)
    return {
        "pessimistic": (l_pess, h, masses, infinite),
        "optimistic": (l_opt, h, optimistic(step, l_opt, h, grid), 0.0),
    }
