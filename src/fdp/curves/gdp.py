"""Gaussian differential privacy (mu-GDP) of a trade-off curve: Gomez et al. 2025 ("GDP paper").

What is here
------------
* The privacy profile of the Gaussian mechanism and its inverses: :func:`gaussian_delta`,
  :func:`mu_from_eps_delta` (GDP paper Table 3), :func:`eps_from_mu_delta`.
* The tight pessimistic ``mu*`` of a piecewise-linear trade-off curve (App. C.1, eq. 21):
  :func:`mu_star`.
* The regret ``Delta(f, f_mu)`` (Def. 2.6, eq. 6; Alg. 1 step 3; App. C.1 eq. 23) computed
  *exactly* from the breakpoints: :func:`gdp_regret`; both together, GDP paper Alg. 1, the one entry point for a
  curve: :func:`mu_and_regret`, read above the alpha floor of :func:`alpha_floor` (lowered for a curve far from
  private).
* The same Delta-divergence between two piecewise-linear curves, exactly:
  :func:`delta_divergence` (used for the ADP, zCDP and RDP representations of Fig. 1c, whose
  curves come from :mod:`fdp.curves.conversions`).
* Pure DP: :func:`mu_pure_dp` (Prop. 6.1); the Laplace mechanism: :func:`mu_laplace` (closed forms of
  those mechanisms' curves).

The mu* of a mechanism, read from the curve its accountant builds (DP-SGD, Alg. 1, Figs. 3 and 4), is in
:mod:`fdp.accounting.mechanism_gdp`.

Conventions (:mod:`fdp.curves.tradeoff`)
----------------------------------------
A curve ``f = T(P, Q)`` maps the type-I error ``alpha`` to the smallest type-II error.  The
Gaussian curve ``f_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu)`` (eq. 4) is :func:`fdp.curves.tradeoff.gaussian`.
Larger ``mu`` means a *lower* curve, i.e. less privacy; a guarantee ``f_mu`` is *pessimistic* (valid)
for a mechanism with curve ``f`` when ``f_mu <= f`` everywhere.

The exact regret: geometry in rotated coordinates
-------------------------------------------------
Def. 2.6 asks for the smallest ``kappa >= 0`` such that ``f(alpha + kappa) - kappa <= g(alpha)`` for
every ``alpha`` in [0, 1] (values of ``f`` beyond 1 are 0; levels ``alpha < 0`` are not tested).
The shift moves every point of ``f`` by ``(-kappa, -kappa)``, i.e. along the diagonal.  Write a
point ``(x, y)`` in the rotated coordinates ``s = x - y`` (constant along a diagonal move) and
``d = x + y``.  A non-increasing curve is a function ``d(s)`` of ``s`` in [-1, 1]; the point of ``f``
at ``s`` has to move by ``(d_f(s) - d_g(s)) / 2`` to reach ``g``, so

    Delta(f, g) = max(0, max_s (d_f(s) - d_g(s)) / 2).

(For ``g(0) < 1`` the curve ``g`` is extended by the vertical segment from ``(0, 1)`` to
``(0, g(0))``: a point of ``f`` at level ``a`` that would have to move further than ``a`` is not
tested, which is what the segment encodes.)  Consequences used below:

* two piecewise-linear curves: ``d_f - d_g`` is piecewise linear in ``s``, so the maximum is
  attained at one of the breakpoints of either curve: :func:`delta_divergence` is exact;
* a piecewise-linear ``f`` against ``f_mu``: on a segment of ``f`` with slope ``k < 0``,
  ``d_f`` is linear and ``d_g`` convex (``f_mu`` is convex), so ``d_f - d_g`` is concave; its
  maximum is where ``f_mu`` has slope ``k`` (closed form: ``Phi^{-1}(1 - x) = log(-k)/mu + mu/2``),
  if that point lies over the segment, else at an end of the segment (a scalar root, solved by
  vectorised bisection).  For a convex ``f`` the ends never win (at a kink of ``f`` the
  left slope of ``d_f`` is smaller than the right one, so a kink is never a local maximum of
  ``d_f - d_g``), and the diagonal distance from ``f_mu`` to the whole line through a segment
  bounds the segment's maximum; ends are evaluated for the segments whose bound exceeds the best
  tangent value, so the result is exact for the interpolated curve even when the breakpoints are
  convex only up to the validation tolerance (1e-9), at no cost otherwise.  Equivalently the regret is the
  largest Bayes-risk gap of App. D eq. 28, ``max_pi R_f(pi) - R_{mu}(pi)``, evaluated at the
  priors ``pi_j = -k_j / (1 - k_j)`` where ``R_f`` has its kinks.

gdpnum 0.1.2 (the paper's code) instead bisects ``kappa`` with the condition checked on a grid of
10,000 levels and returns the lower end of the bracket, which underestimates the regret.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np
from scipy.special import erfinv, log_ndtr, ndtr, ndtri, ndtri_exp

from ..formatting import ULPS_UP
from ..result import Unpacks
from ..roots import bisect_increasing
from ..validation import (
    check_array_in,
    check_eps,
    check_nonnegative,
    spelled,
)
from .tradeoff import PiecewiseLinear, check_piecewise, fixed_point
from .tradeoff import symmetrise as _symmetrise

__all__ = [
    "gaussian_delta",
    "mu_from_eps_delta",
    "eps_from_mu_delta",
    "check_tail",
    "mu_star",
    "mu_star_below",
    "gdp_regret",
    "vertical_distance",
    "mu_and_regret",
    "delta_divergence",
    "mu_pure_dp",
    "mu_laplace",
    "alpha_floor",
    "MuRegret",
]

#: The largest eps :func:`eps_from_mu_delta` looks for.
_EPS_SEARCH_MAX = 1e300
#: The largest eps :func:`gaussian_delta` and :func:`mu_from_eps_delta` take: the profile is computed in logs, so
#: e^eps is never formed (Hayes et al.'s Fig. 1 runs to eps = 10^4); past 10^6 the float root loses digits
PROFILE_EPS_MAX = 1e6
#: alpha floor of an accountant's curve (gdpnum's ``err``): its truncated tails are ignored by eq. 21
DPSGD_TAIL = 1e-10
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(20)




@dataclass(frozen=True)
class MuRegret(Unpacks):
    """GDP paper Alg. 1's answer: the tight pessimistic ``mu*`` (eq. 21) and its exact regret ``Delta(f, f_mu*)``.

    Attributes
    ----------
    mu : float
    regret : float
    """

    mu: float
    regret: float


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _rotated(curve: PiecewiseLinear) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints in rotated coordinates ``s = alpha - beta`` (increasing), ``d = alpha + beta``.

    If ``f(0) < 1`` the vertical segment from ``(0, 1)`` is prepended (see module docstring).
    """
    a, b = curve.alphas, curve.betas
    if b[0] < 1.0:
        a = np.concatenate([[0.0], a])
        b = np.concatenate([[1.0], b])
    return a - b, a + b


# ---------------------------------------------------------------------------------------------
# Gaussian privacy profile and its inverses (Table 3)
# ---------------------------------------------------------------------------------------------


def _gaussian_delta(eps, mu):
    """Unchecked, vectorised ``delta(eps; mu)`` computed in log space (no overflow, no cancellation)."""
    eps, mu = np.broadcast_arrays(np.asarray(eps, dtype=float), np.asarray(mu, dtype=float))
    shape = eps.shape
    eps, mu = eps.ravel(), mu.ravel()
    a = -eps / mu + mu / 2.0
    log_first = log_ndtr(a)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        # log(Phi(a - mu) / Phi(a)); for a short interval through Phi(a) - Phi(a - mu) = int phi, by
        # Gauss-Legendre quadrature, which avoids the cancellation of two nearly equal logs
        log_ratio = log_ndtr(a - mu) - log_first
        small = mu * (np.abs(a) + mu) <= 1.0  # phi varies by at most e^1 over [a - mu, a]
        if np.any(small):
            aa, mm, lf = a[small], mu[small], log_first[small]
            u = aa[..., None] - 0.5 * mm[..., None] * (1.0 + _GL_NODES)
            dens = np.exp(-0.5 * u**2 - 0.5 * np.log(2.0 * np.pi) - lf[..., None])
            r = 0.5 * mm * np.sum(_GL_WEIGHTS * dens, axis=-1)  # (Phi(a) - Phi(a - mu)) / Phi(a)
            log_ratio[small] = np.log1p(-np.minimum(r, 1.0))
        ratio = -np.expm1(eps + log_ratio)  # 1 - e^eps Phi(a - mu) / Phi(a), in [0, 1]
    out = np.exp(log_first) * np.clip(ratio, 0.0, 1.0)
    return np.where(np.isneginf(log_first) | ~np.isfinite(ratio), 0.0, out).reshape(shape)


def _exact_gaussian_delta(eps: float, mu: float) -> mpmath.mpf:
    """``delta(eps; mu)`` in mpmath, with enough digits for the cancellation of its two terms."""
    e, m = mpmath.mpf(eps), mpmath.mpf(mu)
    if -e / m + m / 2 < -1e8:  # both terms below e^{-5e15}: zero for any comparison with a float (at mu = 1e10 and
        return mpmath.mpf(0)   # eps = 5e19, where eps / mu is 5e9, they are not: the test is on Phi's argument)
    digits = 40 + 2 * max(0, int(mpmath.log10(m)))  # -e/m + m/2 cancels about 2 log10(mu) digits near the root
    for _ in range(4):
        with mpmath.workdps(digits):
            first = mpmath.ncdf(-e / m + m / 2)
            value = first - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)
            lost = int(mpmath.log10(first / value)) if value > 0 else digits  # digits the subtraction cancelled
        if lost < digits - 30:
            return value
        digits = 2 * digits + lost
    return value


def _certify(values: np.ndarray, holds, up: bool = True) -> np.ndarray:
    """Move each float ``values[i]`` up (or down) by growing steps (ulps, doubling) until ``holds(i, x)`` (an exact
    check): the float root finders' answers are within ~1e-10 (relative) of the root (the float ``delta``'s error),
    and a bound must not fall on the wrong side of it."""
    sign = 1.0 if up else -1.0
    out = values.astype(float).ravel()
    for i, x in enumerate(out.tolist()):
        step, failed = max(np.spacing(abs(x)), 5e-324), None
        while not holds(i, x):
            failed, x = x, x + sign * step
            step *= 2.0
        while failed is not None:  # back by bisection towards the last point that failed (at mu = 1e100 the float root
            mid = 0.5 * (failed + x)  # lies 1e-8 below, and the doubling overshoots by as much)
            if not min(failed, x) < mid < max(failed, x):
                break
            if holds(i, mid):
                x = mid
            else:
                failed = mid
        out[i] = x
    return out.reshape(values.shape)


def gaussian_delta(epsilon, mu):
    """Privacy profile of mu-GDP: ``delta(eps; mu) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``.

    The hockey-stick divergence ``H_{e^eps}(N(mu, 1) || N(0, 1))`` (Balle & Wang 2018, Thm. 8;
    Dong, Roth, Su 2022, Cor. 2.13): a mechanism is mu-GDP iff it is (eps, delta(eps; mu))-DP for all
    ``eps >= 0``.  Vectorised over ``epsilon`` (in [0, 10^6]) and ``mu`` (> 0), broadcast together.
    Computed as ``Phi(a) * (1 - exp(eps + log(Phi(a - mu) / Phi(a))))``, ``a = -eps/mu + mu/2``, with
    ``expm1`` and, for short intervals, ``Phi(a) - Phi(a - mu)`` by Gauss-Legendre quadrature: no
    overflow, and relative error below 1e-10 against 60-digit arithmetic down to delta ~ 1e-300.

    Parameters
    ----------
    epsilon : float or array_like
        In [0, 10^6].
    mu : float or array_like
        The GDP parameter, > 0.

    Returns
    -------
    float or numpy.ndarray
        ``delta(eps; mu)``, broadcast over both arguments.

    References
    ----------
    GDP paper (Gomez et al. 2025) Table 3 (its inverse); Dong, Roth, Su (2022) Cor. 2.13; Balle and Wang (2018) Thm. 8.

    Examples
    --------
    >>> round(float(gaussian_delta(1.0, 1.0)), 6)
    0.126937
    >>> round(float(mu_from_eps_delta(1.0, 0.1269367375066439)), 9)  # the inverse (Table 3)
    1.0
    """
    epsilon = check_array_in("epsilon", epsilon, 0.0, PROFILE_EPS_MAX)
    mu = check_array_in("mu", mu, 0.0, np.inf, open_low=True, open_high=True)
    out = _gaussian_delta(epsilon, mu)
    return out if out.ndim else float(out)


def mu_from_eps_delta(epsilon, delta, side: str = "upper"):
    """The mu of the Gaussian mechanism that is exactly (eps, delta)-DP: the root of ``delta(eps; mu) = delta``.

    ``delta(eps; mu)`` (:func:`gaussian_delta`) increases strictly in ``mu`` from 0 to 1, so the
    root is unique; it is bracketed by expansion and found by bisection in ``log mu`` to machine
    precision.  This is GDP paper Table 3 (mu for common (eps, delta)).  Vectorised: ``epsilon`` in
    [0, 10^6] and ``delta`` in (0, 1) are broadcast together.

    Parameters
    ----------
    epsilon : float or array_like
        In [0, 10^6].
    delta : float or array_like
        In (0, 1).
    side : {"upper", "lower"}, default "upper"
        Which float next to the root: the upper end is checked in exact arithmetic to lie at or above it, the lower
        end at or below it, so together they bracket the exact mu.

    Returns
    -------
    float or numpy.ndarray
        ``mu`` with ``delta(epsilon; mu) = delta``.

    References
    ----------
    GDP paper (Gomez et al. 2025) Table 3.

    Examples
    --------
    >>> round(float(mu_from_eps_delta(8.0, 1e-5)), 4)
    1.666
    """
    if side not in ("upper", "lower"):
        raise ValueError(f"side must be 'upper' or 'lower', got {side!r}")
    epsilon = check_array_in("epsilon", epsilon, 0.0, PROFILE_EPS_MAX)
    delta = check_array_in("delta", delta, 0.0, 1.0, open_low=True, open_high=True)
    epsilon, delta = np.broadcast_arrays(epsilon, delta)
    fun = lambda log_mu: _gaussian_delta(epsilon, np.exp(log_mu))  # noqa: E731
    lo = np.zeros(epsilon.shape)
    hi = np.zeros(epsilon.shape)
    for _ in range(350):  # down to mu = e^-700 ~ 1e-304: delta(epsilon; mu) <= mu / sqrt(2 pi)
        low = fun(lo) >= delta
        if not np.any(low):
            break
        lo = np.where(low, lo - 2.0, lo)
    else:
        raise ValueError(f"{spelled('delta')}={float(np.min(delta))!r} is too small to be inverted in double precision")
    for _ in range(400):
        high = fun(hi) <= delta
        if not np.any(high):
            break
        hi = np.where(high, hi + 1.0, hi)
    lo, hi = bisect_increasing(fun, delta, lo, hi)
    # the bracket's end, moved out (if ever) until exact arithmetic puts it on its side of the root
    eps_flat, delta_flat = epsilon.ravel(), delta.ravel()
    if side == "upper":
        out = _certify(np.exp(hi), lambda i, m: _exact_gaussian_delta(eps_flat[i], m) >= delta_flat[i])
    else:
        out = _certify(np.exp(lo), lambda i, m: m <= 0.0 or _exact_gaussian_delta(eps_flat[i], m) <= delta_flat[i],
                       up=False)
        out = np.maximum(out, 0.0)
    return out if out.ndim else float(out)


def eps_from_mu_delta(mu, delta, side: str = "upper"):
    """The smallest eps >= 0 with ``delta(eps; mu) <= delta`` (the mu-GDP mechanism is (eps, delta)-DP).

    ``delta(eps; mu)`` decreases strictly in ``eps``; if ``delta >= delta(0; mu) = 2 Phi(mu/2) - 1``
    (the total variation) the answer is 0.  Root by bracketing and bisection to machine precision.
    Vectorised: ``mu > 0`` and ``delta`` in (0, 1) are broadcast together.

    Parameters
    ----------
    mu : float or array_like
        The GDP parameter, > 0.
    delta : float or array_like
        In (0, 1).
    side : {"upper", "lower"}, default "upper"
        Which float next to the root: the upper end is checked in exact arithmetic to lie at or above it, the lower
        end at or below it (the float bisection can end some 30 ulps above the root at delta 1e-300).

    Returns
    -------
    float or numpy.ndarray
        The smallest epsilon of the mu-GDP mechanism at ``delta``.

    References
    ----------
    Dong, Roth, Su (2022) Cor. 2.13.

    Examples
    --------
    >>> round(float(eps_from_mu_delta(1.0, 0.1269367375066439)), 9)  # the inverse of gaussian_delta(1, 1)
    1.0
    """
    if side not in ("upper", "lower"):
        raise ValueError(f"side must be 'upper' or 'lower', got {side!r}")
    mu = check_array_in("mu", mu, 0.0, np.inf, open_low=True, open_high=True)
    delta = check_array_in("delta", delta, 0.0, 1.0, open_low=True, open_high=True)
    mu, delta = np.broadcast_arrays(mu, delta)
    neg = lambda e: -_gaussian_delta(e, mu)  # noqa: E731  (non-decreasing in eps)
    lo = np.zeros(mu.shape)
    hi = np.ones(mu.shape)
    # 1, 2, 4, ...: the profile is computed in logs (e^eps itself never formed), so eps past 700 is found too
    # (mu = 100 at delta 1e-5: eps 5,425; a guarantee that weak is still a number a user can compare)
    for _ in range(1000):
        high = _gaussian_delta(hi, mu) > delta
        if not np.any(high):
            break
        hi = np.where(high, np.minimum(2.0 * hi, _EPS_SEARCH_MAX), hi)
    unreachable = _gaussian_delta(hi, mu) > delta
    if np.any(unreachable):
        i = int(np.argmax(unreachable))
        raise ValueError(f"{spelled('mu')}={float(mu.flat[i])!r} with delta={float(delta.flat[i])!r} needs eps > {_EPS_SEARCH_MAX:g}")
    lo, hi = bisect_increasing(neg, -delta, lo, hi)
    mu_flat, delta_flat = mu.ravel(), delta.ravel()
    if side == "upper":  # moved up (if ever) until exact arithmetic puts it at or above the smallest eps
        out = np.where(_gaussian_delta(0.0, mu) <= delta, 0.0, hi)
        out = _certify(out, lambda i, e: _exact_gaussian_delta(e, mu_flat[i]) <= delta_flat[i])
    else:  # moved down until exact arithmetic puts it at or below (delta(eps) >= delta there; 0 is always below)
        out = np.where(_gaussian_delta(0.0, mu) <= delta, 0.0, lo)
        out = _certify(out, lambda i, e: e <= 0.0 or _exact_gaussian_delta(e, mu_flat[i]) >= delta_flat[i], up=False)
        out = np.maximum(out, 0.0)
    return out if out.ndim else float(out)


# ---------------------------------------------------------------------------------------------
# tight mu* (App. C.1) and the exact regret (Def. 2.6)
# ---------------------------------------------------------------------------------------------


def _floor_points(a: np.ndarray, b: np.ndarray, p: np.ndarray, floor: float, name: str):
    """The breakpoints of the kept range ``{alpha >= floor, f(alpha) >= floor}`` and the curve's two
    points at its ends, ``(floor, f(floor))`` and ``(f^{-1}(floor), floor)``, with their powers ``1 - beta``.

    The curve is linear between breakpoints, so ``f_mu <= f`` holds on the whole kept range iff it
    holds at these points (``f_mu`` is convex): eq. 21 over them is the tail-free ``mu*`` of the
    curve restricted to the kept range, never less.
    """
    b_at = float(np.interp(floor, a, b))
    if b_at < floor:
        raise ValueError(
            f"{name} passes below the point (alpha, beta) = ({floor:g}, {floor:g}) (f({floor:g}) = {b_at:.3g}): "
            f"no level with alpha >= {floor:g} and beta >= {floor:g} is left for the alpha floor {spelled('tail')}={floor:g}; "
            "pass a smaller tail (or tail=0 for the exact curve)"
        )
    p_at = float(np.interp(floor, a, p))
    j = int(np.argmax(b <= floor)) if np.any(b <= floor) else a.size - 1
    if b[j] <= floor and j > 0 and b[j - 1] > floor:  # f crosses the floor inside segment (j-1, j)
        a_at = a[j - 1] + (b[j - 1] - floor) * (a[j] - a[j - 1]) / (b[j - 1] - b[j])
    else:
        a_at = a[j]
    a_at = min(max(float(a_at), floor), 1.0)
    inside = (a >= floor) & (b >= floor)
    b_end = max(floor, b[j])
    return (np.concatenate([a[inside], [floor, a_at]]), np.concatenate([b[inside], [b_at, b_end]]),
            np.concatenate([p[inside], [p_at, 1.0 - b_end]]))


def check_tail(tail, name: str = "tail") -> float:
    """The alpha floor of :func:`mu_star`, a number in [0, 0.5), or a ValueError naming ``name``.

    Parameters
    ----------
    tail : float
        The floor, in [0, 0.5).
    name : str, default "tail"
        The parameter's name, for the message.

    Returns
    -------
    float

    Examples
    --------
    >>> check_tail(0.7)
    Traceback (most recent call last):
    ...
    ValueError: tail must lie in [0, 0.5), got 0.7
    """
    tail = check_nonnegative(name, tail)
    if tail >= 0.5:
        raise ValueError(f"{spelled(name)} must lie in [0, 0.5), got {tail!r}")
    return tail


def _mu_star(curve: PiecewiseLinear, tail: float, name: str) -> float:
    a, b, p = curve.alphas, curve.betas, curve.powers
    if tail > 0.0:
        a, b, p = _floor_points(a, b, p, tail, name)
    # beta < 1 - alpha, read on the power near (0, 1) and on beta elsewhere (1 - beta rounds: beta = 1/2 - 2^-54 at
    # alpha = 1/2 has the power 1/2); points on the diagonal give mu_i = 0
    keep = (p > a) | (b < 1.0 - a)
    infinite = keep & ((a == 0.0) | (b == 0.0))
    if np.any(infinite):
        i = int(np.argmax(infinite))
        raise ValueError(
            f"{name} has the breakpoint (alpha, beta) = ({a[i]!r}, 1 - {p[i]!r}) with alpha = 0 or beta = 0 "
            "strictly below 1 - alpha: no finite mu satisfies f_mu <= f (GDP paper Prop. 6.2); "
            "pass tail > 0 to certify mu for alpha >= tail and beta >= tail only"
        )
    a, b, p = a[keep], b[keep], p[keep]
    # near (0, 1) beta rounds to 1: read Phi^{-1}(beta) = -Phi^{-1}(1 - beta) from the power instead
    small = p < 0.5
    za = -ndtri(a)  # Phi^{-1}(1 - alpha), as norm.isf computes it
    zb = np.where(small, -ndtri(np.where(small, p, 0.5)), ndtri(b))  # Phi^{-1}(beta)
    mu = float(max(0.0, np.max(za - zb, initial=0.0))) + 0.0  # + 0.0: never -0.0
    # Eq. 21 holds exactly; make it hold in floating point too, with the same evaluation of f_mu
    # as fdp.curves.tradeoff.gaussian (its power where beta is near 1), by raising mu in doubling steps if
    # rounding put f_mu above a counted point (the increase is at most twice the rounding error it
    # compensates).
    step = max(float(np.spacing(mu)), 2.0**-60)
    for _ in range(80):
        above = np.where(small, ndtr(mu - za) < p, ndtr(za - mu) > b)
        if not np.any(above):
            return mu
        za, b, p, small = za[above], b[above], p[above], small[above]  # raising mu only lowers f_mu
        mu += step
        step *= 2.0
    raise ValueError(f"{name}: could not certify f_mu <= f at the breakpoints in floating point")


def mu_star_below(upper: PiecewiseLinear, certified: PiecewiseLinear, floor: float, *, slack: float = 0.0) -> float:
    """A lower bound on the exact mu* above ``floor`` (eq. 21) from a curve ``upper`` on or above the exact one.

    The exact symmetrised curve ``C`` lies below ``f <= upper + slack``: at a level ``t`` in [floor, 1/2] where
    ``certified`` (a curve on or below ``C``) is at least ``floor`` (``t`` is in eq. 21's range), ``mu* >=
    Phi^{-1}(1 - t) - Phi^{-1}(upper(t) + slack)``.  Read at ``upper``'s breakpoints and at the floor, ``upper(t)``
    moved up by 2^-50 (betas near 1 are ``1 - mass`` in float64), the largest term moved down past the quantiles'
    rounding.  Levels above 1/2 are left out: there ``1 - t`` is not resolved in float64 (at ``t = 1 - 1.1e-16``,
    ``upper`` can lie below ``f``).  Unlike :func:`mu_star`, which raises its answer until ``f_mu`` lies below
    every breakpoint in floating point (by up to 1e-8 near alpha = 1e-10), nothing here moves up.

    Parameters
    ----------
    upper : PiecewiseLinear
        On or above the exact curve, within ``slack`` (the optimistic curve of
        :func:`fdp.accounting.pld.optimistic_curve`).
    certified : PiecewiseLinear
        On or below the exact symmetrised curve.
    floor : float
        The alpha floor of mu*, in (0, 1/2].
    slack : float, default 0

    Returns
    -------
    float
        At least 0.

    References
    ----------
    GDP paper (Gomez et al. 2025) eq. 21.
    """
    t = np.r_[upper.alphas, floor]
    keep = (t >= floor) & (t <= 0.5)
    t = t[keep]
    keep = certified(t) >= floor
    if not np.any(keep):
        return 0.0
    t = t[keep]
    u = np.minimum(np.asarray(upper(t), dtype=float) + slack + 2.0**-50, 1.0)
    q_t, q_u = -ndtri(t), -ndtri(u)  # Phi^{-1}(1 - t) and -Phi^{-1}(u)
    terms = q_t + q_u - 1e-13 * (np.abs(q_t) + np.abs(q_u) + 1.0)  # the quantiles are good to ~1e-15
    return float(max(np.max(terms), 0.0))


def mu_star(curve: PiecewiseLinear, *, tail: float = 0.0) -> float:
    """Tight pessimistic GDP parameter of a piecewise-linear curve (GDP paper eq. 5, App. C.1 eq. 21).

    ``mu* = inf{mu >= 0 : f_mu(alpha) <= f(alpha) for all alpha}``, the smallest mu whose Gaussian
    curve lies below ``f`` (``f_mu`` decreases in ``mu``, so every ``mu >= mu*`` is also valid and
    every ``mu < mu*`` is not).  At a breakpoint, ``f_mu(alpha_i) <= beta_i`` iff
    ``mu >= Phi^{-1}(1 - alpha_i) - Phi^{-1}(beta_i)``, so (eq. 21)

        mu* = max(0, max_i [Phi^{-1}(1 - alpha_i) - Phi^{-1}(beta_i)])

    over breakpoints with ``beta_i < 1 - alpha_i``.  Breakpoints suffice (Prop. C.1): ``f_mu`` is
    convex, so between two breakpoints where it lies below ``f`` it lies below the chord, which is
    ``f`` there.  The formula is symmetric in ``(alpha_i, beta_i)``: ``f`` and its inverse (the other
    direction, add vs remove) and the symmetrisation :math:`C(f, f^{-1})` have the same ``mu*``.  If rounding
    puts ``f_mu*`` above a breakpoint, the returned value is raised by at most twice that rounding
    error, so that ``fdp.curves.tradeoff.gaussian(mu)(alphas) <= betas`` holds exactly in floating point.
    Near (0, 1), where ``beta`` rounds to 1, eq. 21 reads ``Phi^{-1}(beta) = -Phi^{-1}(1 - beta)`` from the
    curve's powers (``PiecewiseLinear.powers``, exact cumulative masses for the
    lattice curves), so a breakpoint at ``alpha = 1e-300`` counts with all its digits.

    Parameters
    ----------
    curve : PiecewiseLinear
        A valid trade-off curve (convex, non-increasing, ``f <= 1 - alpha``).
    tail : float, default 0
        The alpha floor: ``f_mu* <= f`` is certified on the kept range ``alpha >= tail`` and
        ``f(alpha) >= tail`` (for accountant curves whose truncated tails reach ``beta = 0`` before
        ``alpha = 1``, like gdpnum's ``err``).  The kept breakpoints *and* the curve's points at the
        two ends of the range enter eq. 21, so the result is the exact ``mu*`` of the curve restricted
        to the range: it never decreases as ``tail`` decreases, and it is never below what the
        breakpoints inside the range demand.  ValueError if the curve passes below ``(tail, tail)``
        (the range is empty).  With ``tail = 0`` (default) a curve reaching ``alpha = 0`` or
        ``beta = 0`` strictly below the diagonal raises ValueError: no finite mu is valid (Prop. 6.2).

    Returns
    -------
    float

    References
    ----------
    GDP paper (Gomez et al. 2025) eq. 5, App. C.1 eq. 21, Prop. C.1.

    Examples
    --------
    Randomized response with eps = 1 is exactly as private as Prop. 6.1 says every 1-DP mechanism is (the closed
    form is rounded up by a few ulps):

    >>> from fdp.curves import conversions
    >>> abs(mu_star(conversions.randomized_response(1.0)) / mu_pure_dp(1.0) - 1) < 1e-14
    True
    """
    curve = check_piecewise("curve", curve)
    return _mu_star(curve, check_tail(tail), "curve")


def _gaussian_point_at(a: np.ndarray, b: np.ndarray, mu: float) -> np.ndarray:
    """Signed diagonal shift ``t`` such that ``(a - t, b - t)`` lies on ``f_mu`` (vectorised).

    ``f_mu`` is parametrised by ``z``: ``x = 1 - Phi(z)``, ``y = Phi(z - mu)``.  The shift keeps
    ``s = a - b``; we solve for ``z`` through the tail sums ``1 + s = Phi(-z) + Phi(mu - z)`` (for
    ``s <= 0``) or ``1 - s = Phi(z) + Phi(z - mu)`` (for ``s > 0``), which are accurate in the tails.
    """
    left = a - b <= 0.0
    u = np.where(left, a + (1.0 - b), (1.0 - a) + b)  # in [0, 1]
    # h(z) = Phi(z) + Phi(z - mu) for the right branch (increasing in z);
    # for the left branch use z -> -z' reflected: Phi(-z) + Phi(mu - z) = h_left(z) decreasing in z.
    span = 40.0 + mu

    def h(w):
        # w is the unknown in a form where h is increasing: right branch w = z, left branch w = -z
        return ndtr(w) + ndtr(np.where(left, w + mu, w - mu))

    lo, hi = bisect_increasing(h, u, np.full(a.shape, -span), np.full(a.shape, span), iters=80)
    w = 0.5 * (lo + hi)
    z = np.where(left, -w, w)
    t = np.where(left, a - ndtr(-z), b - ndtr(z - mu))
    return np.where(u <= 0.0, 0.0, t)  # the points (0, 1) and (1, 0) lie on every curve


def _tangent_points(a: np.ndarray, b: np.ndarray, mu: float) -> tuple[np.ndarray, ...]:
    """Per segment of the curve through the breakpoints (a, b), mu > 0: its slope ``k``, whether ``f_mu`` has that
    slope somewhere (``tangent``: not for flat (beta = 0) or overflowing slopes), and that point ``(x, f_mu(x))``."""
    with np.errstate(divide="ignore", over="ignore"):
        k = (b[1:] - b[:-1]) / (a[1:] - a[:-1])
    tangent = (k < 0.0) & np.isfinite(k)
    z = np.log(-np.where(tangent, k, -1.0)) / mu + mu / 2.0  # f_mu'(x) = k <=> Phi^{-1}(1 - x) = log(-k)/mu + mu/2
    return k, tangent, ndtr(-z), ndtr(z - mu)


def _gdp_divergence(a: np.ndarray, b: np.ndarray, mu: float) -> float:
    """Delta(f, f_mu) for valid breakpoints (a, b) (see module docstring)."""
    if mu == 0.0:
        return 0.0  # f <= 1 - alpha = f_0: no shift needed
    a0, b0 = a[:-1], b[:-1]
    s = a - b
    k, tangent, x, y = _tangent_points(a, b, mu)
    kk = np.where(tangent, k, -1.0)
    s_tan = x - y
    inside = tangent & (s_tan >= s[:-1]) & (s_tan <= s[1:])
    # diagonal distance from the tangent point up to the line through the segment; over the
    # segment's own range it bounds the gap from above, and equals its maximum if ``inside``
    t_line = np.where(tangent, (b0 + kk * (x - a0) - y) / (1.0 - kk), np.inf)
    best = float(np.max(t_line[inside], initial=0.0))
    # segments whose tangent point is not over them peak at an end; only those whose bound
    # exceeds ``best`` can matter (none for an exactly convex curve, see the module docstring)
    cand = ~inside & (t_line > best)
    if np.any(cand):
        right = cand & tangent & (s_tan > s[1:])
        left = cand & tangent & (s_tan < s[:-1])
        other = cand & ~tangent
        need = np.zeros(a.shape, dtype=bool)
        need[:-1] |= left | other
        need[1:] |= right | other
        best = max(best, float(np.max(_gaussian_point_at(a[need], b[need], mu))))
    return best


def gdp_regret(curve: PiecewiseLinear, mu: float, *, metric: bool = False) -> float:
    """Exact regret ``Delta(f, f_mu)`` of reporting mu-GDP for a piecewise-linear curve ``f`` (Def. 2.6, eq. 6).

    ``Delta(f, f_mu) = inf{kappa >= 0 : f(alpha + kappa) - kappa <= f_mu(alpha) for all alpha}``
    (Alg. 1 step 3, App. C.1 eq. 23), computed from the breakpoints without a grid: the largest
    diagonal distance from ``f`` down to ``f_mu``, attained either where ``f_mu`` is parallel to a
    segment of ``f`` (closed form) or at a breakpoint (scalar root, bisection to machine precision);
    see the module docstring.  ``f`` is used as given (one direction); see :func:`mu_and_regret` for
    the symmetrised add/remove curve.

    Parameters
    ----------
    curve : PiecewiseLinear
        The exact (numerical) trade-off curve.
    mu : float
        GDP parameter (>= 0) of the reported bound; usually :func:`mu_star` of ``curve``.
    metric : bool, default False
        If True return the symmetrised divergence ``max(Delta(f, f_mu), Delta(f_mu, f))`` (eq. 7),
        a metric.  For ``mu >= mu*`` the second term is 0 (Prop. C.2).

    Returns
    -------
    float
        The regret, in [0, 1].

    References
    ----------
    GDP paper (Gomez et al. 2025) Def. 2.6 (eq. 6), Alg. 1 step 3, App. C.1 (eq. 23), Prop. C.2.

    Examples
    --------
    >>> from fdp.curves import conversions
    >>> rr = conversions.randomized_response(1.0)
    >>> round(gdp_regret(rr, mu_star(rr)), 6)
    0.057546
    """
    curve = check_piecewise("curve", curve)
    mu = check_nonnegative("mu", mu)
    a, b = curve.alphas, curve.betas
    out = _gdp_divergence(a, b, mu)
    if metric and mu > 0.0:
        # Delta(f_mu, f): d_{f_mu} - d_f is convex between breakpoints of f, so the maximum is at a
        # breakpoint, where it is minus the signed shift onto f_mu.
        out = max(out, float(np.max(-_gaussian_point_at(a, b, mu), initial=0.0)))
    return out


def vertical_distance(curve: PiecewiseLinear, mu: float) -> float:
    """The largest vertical distance ``max_alpha f(alpha) - f_mu(alpha)`` from a piecewise-linear curve to ``f_mu``.

    The GDP paper's App. F compares it with twice the regret.  On each segment of ``f`` the difference is linear minus
    convex, hence concave: its maximum is at a breakpoint or where ``f_mu`` has the segment's slope, in closed form
    (``f_mu'(x) = k`` at ``Phi^{-1}(1 - x) = log(-k)/mu + mu/2``, as in :func:`gdp_regret`).  The breakpoints alone
    give only a lower bound.

    Parameters
    ----------
    curve : PiecewiseLinear
        The trade-off curve ``f``, used as given (one direction).
    mu : float
        GDP parameter (>= 0) of ``f_mu``; usually :func:`mu_star` of ``curve``.

    Returns
    -------
    float
        The largest ``f(alpha) - f_mu(alpha)`` over ``alpha`` in [0, 1]; negative when ``f`` lies below ``f_mu``.

    Examples
    --------
    >>> from fdp.curves import conversions
    >>> rr = conversions.randomized_response(1.0)
    >>> round(vertical_distance(rr, mu_star(rr)), 6)
    0.213974
    """
    curve = check_piecewise("curve", curve)
    mu = check_nonnegative("mu", mu)
    a, b = curve.alphas, curve.betas
    best = float(np.max(b - ndtr(ndtri(1.0 - a) - mu)))
    if mu == 0.0:
        return best
    k, tangent, x, y = _tangent_points(a, b, mu)  # where f_mu has each segment's slope, and f_mu there
    inside = tangent & (x > a[:-1]) & (x < a[1:])
    inner = b[:-1] + k * (x - a[:-1]) - y
    return max(best, float(np.max(inner[inside], initial=-np.inf)))


def mu_and_regret(curve: PiecewiseLinear, *, symmetrise: bool = True, tail: float = 0.0) -> MuRegret:
    """GDP paper Alg. 1: the tight pessimistic ``mu*`` (eq. 21) of a curve and its exact regret ``Delta(f, f_mu*)``.

    For a mechanism (DP-SGD) see :func:`fdp.accounting.mechanism_gdp.mu_and_regret_dpsgd`, which builds its
    certified curve first.

    Parameters
    ----------
    curve : PiecewiseLinear
        Breakpoints of a trade-off curve, e.g. ``T(P, Q)`` in the "add" direction from a PLD.
    symmetrise : bool, default True
        Use the symmetrised curve :math:`C(f, f^{-1})` of both directions (add and remove;
        :func:`fdp.curves.tradeoff.symmetrise`, exact for piecewise-linear curves), as a DP guarantee for
        the add/remove relation requires.  ``mu*`` does not depend on this choice (eq. 21 is
        symmetric in alpha and beta); the regret of :math:`C(f, f^{-1})` is at most that of ``f`` (a lower
        curve needs a smaller shift).  Pass False if ``curve`` is already symmetric or a single
        direction is meant.
    tail : float, default 0
        The alpha floor of :func:`mu_star`; for an accountant's curve, :func:`alpha_floor` of it (GDP paper Alg. 1
        as :func:`fdp.risk.gdp` runs it: ``mu_and_regret(curve, symmetrise=False, tail=alpha_floor(curve))``).

    Returns
    -------
    MuRegret
        ``regret`` is ``Delta(f, f_mu) = Delta<->(f, f_mu)`` (Prop. C.2) on the (symmetrised) curve.

    References
    ----------
    GDP paper (Gomez et al. 2025) Alg. 1, Def. 2.6 (eq. 6), App. C.1 (eqs. 21, 23).

    Examples
    --------
    >>> from fdp.curves import tradeoff
    >>> mu, regret = mu_and_regret(tradeoff.piecewise_linear([0.0, 0.2, 1.0], [1.0, 0.2, 0.0]))
    >>> round(mu, 6), round(regret, 6)
    (1.683242, 0.06309)
    """
    if isinstance(curve, str) or hasattr(curve, "noise_multiplier"):  # a mechanism, or its noise's name
        raise ValueError(f"curve must be a PiecewiseLinear trade-off curve, got {curve!r}: for a mechanism use "
                         "fdp.accounting.mechanism_gdp.mu_and_regret_dpsgd(Mechanism('gaussian', noise_multiplier, "
                         "sampling_rate, steps)) (DP-SGD), or fdp.risk.gdp(mechanism) (any noise)")
    curve = check_piecewise("curve", curve)
    if symmetrise:
        curve = check_piecewise("curve (symmetrised)", _symmetrise(curve))
    mu = _mu_star(curve, check_tail(tail), "curve")
    return MuRegret(mu, _gdp_divergence(curve.alphas, curve.betas, mu))


def delta_divergence(f: PiecewiseLinear, g: PiecewiseLinear, *, metric: bool = False) -> float:
    """Exact Delta-divergence ``Delta(f, g)`` between two piecewise-linear curves (Def. 2.6, eq. 6).

    ``inf{kappa >= 0 : f(alpha + kappa) - kappa <= g(alpha) for all alpha}``: the regret of reporting
    the (pessimistic) curve ``g`` for a mechanism with curve ``f``.  In the rotated coordinates
    ``s = alpha - beta``, ``d = alpha + beta`` both curves are piecewise linear, so
    ``Delta = max(0, max_s (d_f(s) - d_g(s)) / 2)`` is attained at a breakpoint of either curve
    (module docstring).  A curve with ``g(0) < 1`` (e.g. (eps, delta)-DP) is extended by the vertical
    segment from (0, 1).  With ``metric=True`` returns ``max(Delta(f, g), Delta(g, f))`` (eq. 7).

    Parameters
    ----------
    f : PiecewiseLinear
        The mechanism's curve.
    g : PiecewiseLinear
        The reported (pessimistic) curve.
    metric : bool, default False
        Return the symmetrised divergence (eq. 7).

    Returns
    -------
    float
        In [0, 1].

    References
    ----------
    GDP paper (Gomez et al. 2025) Def. 2.6 (eqs. 6, 7), App. C.

    Examples
    --------
    >>> from fdp.curves import conversions
    >>> from fdp.curves import tradeoff
    >>> rr = conversions.randomized_response(1.0)
    >>> delta_divergence(rr, tradeoff.eps_delta(1.0, 0.0))  # the same curve
    0.0
    """
    f = check_piecewise("f", f)
    g = check_piecewise("g", g)
    s_f, d_f = _rotated(f)
    s_g, d_g = _rotated(g)
    s = np.union1d(s_f, s_g)
    gap = 0.5 * (np.interp(s, s_f, d_f) - np.interp(s, s_g, d_g))
    out = max(0.0, float(np.max(gap)))
    if metric:
        out = max(out, float(np.max(-gap)))
    return out


# ---------------------------------------------------------------------------------------------
# pure DP and randomized response (Prop. 6.1)
# ---------------------------------------------------------------------------------------------


def _rounded_up(mu: np.ndarray, epsilon: np.ndarray) -> float | np.ndarray:
    """A closed-form mu of pure DP (``mu ~ sqrt(pi / 2) eps`` as eps -> 0) moved up past its float evaluation (within 2
    ulps, moved by 8); below 1e-290 the relative move vanishes in subnormal rounding, so there the next float above the
    limit ``sqrt(pi / 2) eps`` (eps = 5e-324 gave mu = 0)."""
    out = mu * ULPS_UP
    tiny = (out < 1e-290) & (epsilon > 0.0)
    out = np.where(tiny, np.nextafter(np.maximum(out, math.sqrt(math.pi / 2.0) * epsilon), np.inf), out)
    return out if out.ndim else float(out)


def mu_pure_dp(epsilon) -> float | np.ndarray:
    """GDP paper Prop. 6.1: every eps-DP mechanism is mu-GDP with ``mu = -2 Phi^{-1}(1 / (e^eps + 1))``.

    The value is tight: it is :func:`mu_star` of the randomized-response curve
    (:func:`fdp.curves.conversions.randomized_response`), which dominates every eps-DP mechanism.  Computed as
    ``-2 Phi^{-1}(exp(-log(1 + e^eps)))`` through ``ndtri_exp`` (the inverse of ``log Phi``), so
    it keeps its digits where ``1 / (e^eps + 1)`` is far below 1e-10.  Vectorised over
    ``epsilon`` in [0, 700].

    Parameters
    ----------
    epsilon : float or array_like
        In [0, 700].

    Returns
    -------
    float or numpy.ndarray

    References
    ----------
    GDP paper (Gomez et al. 2025) Prop. 6.1.

    Examples
    --------
    >>> round(mu_pure_dp(1.0), 6)
    1.232035
    """
    epsilon = check_eps("epsilon", epsilon)
    # -Phi^{-1}(1 / (e^eps + 1)) = sqrt(2) erfinv(tanh(eps / 2)): keeps its digits as eps -> 0 (mu ~ 1.2533 eps),
    # where 1 / (e^eps + 1) rounds to 1/2
    small = 2.0 * np.sqrt(2.0) * erfinv(np.tanh(0.5 * np.minimum(epsilon, 1.0)))
    out = np.where(epsilon < 1.0, small, -2.0 * ndtri_exp(-np.logaddexp(0.0, epsilon))) + 0.0  # never -0.0
    return _rounded_up(out, epsilon)


def mu_laplace(epsilon) -> float | np.ndarray:
    """Tight ``mu*`` of the Laplace mechanism with ``eps = Delta_1 / b``: ``2 Phi^{-1}(1 - e^{-eps/2} / 2)``.

    Eq. 21 for the Laplace curve (ReRo paper eq. 1): with ``s(u) = Phi^{-1}(1 - e^u)``, which is
    concave (``log Phi`` is concave, so its inverse is convex), the quantity
    ``Phi^{-1}(1 - alpha) - Phi^{-1}(f(alpha))`` is ``s(u) - s(u + eps)`` on the linear piece
    ``alpha < e^{-eps} / 2`` (non-decreasing in ``u = log alpha``) and ``s(u) + s(-eps - log 4 - u)``
    on the hyperbolic piece, concave and symmetric about the curve's fixed point
    ``alpha = e^{-eps/2} / 2``, where the maximum is.  Computed through ``ndtri_exp``, so it holds
    for any ``epsilon`` in [0, 700] (no alpha floor).

    Parameters
    ----------
    epsilon : float or array_like
        ``Delta_1 / b``, in [0, 700].

    Returns
    -------
    float or numpy.ndarray
        The tight ``mu*``.

    References
    ----------
    GDP paper (Gomez et al. 2025) eq. 21; ReRo paper (Kaissis et al. 2023a) eq. 1.

    Examples
    --------
    >>> round(float(mu_laplace(1.0)), 6)
    1.030064
    """
    epsilon = check_eps("epsilon", epsilon)
    # -Phi^{-1}(e^{-eps/2} / 2) = sqrt(2) erfinv(1 - e^{-eps/2}): keeps its digits as eps -> 0 (mu ~ 1.2533 eps)
    small = 2.0 * np.sqrt(2.0) * erfinv(-np.expm1(-0.5 * np.minimum(epsilon, 1.0)))
    out = np.where(epsilon < 1.0, small, -2.0 * ndtri_exp(-0.5 * epsilon - np.log(2.0))) + 0.0  # never -0.0
    return _rounded_up(out, epsilon)


def alpha_floor(curve: PiecewiseLinear, tail: float = DPSGD_TAIL) -> float:
    """The alpha floor at which Alg. 1 reads an accountant's curve: ``tail``, or just below the curve's fixed point
    ``f(alpha) = alpha`` for a mechanism so far from private that its curve passes below ``(tail, tail)``.

    An accountant's curve carries truncated tails (beta reaches 0 a hair before alpha = 1), which eq. 21 must ignore:
    ``mu*`` is read on ``alpha, beta >= tail`` (1e-10 by default, the ``err`` of gdpnum, the paper's code).  A curve
    that passes below ``(tail, tail)`` (noise 1, rate 0.56, 1,000 steps) leaves no level in that range, and the floor
    is lowered to its fixed point, so that ``mu*`` is the (large) value eq. 21 demands there instead of the vacuous 0.
    Such a ``mu*`` exceeds ``2 Phi^-1(1 - tail)`` (12.7 at the default), but its value is set by the lattice's
    resolution (the curve's betas carry round-off of about 1e-13, so it stays near 14-15): read it as "beyond 12.7".

    Parameters
    ----------
    curve : PiecewiseLinear
        A symmetric trade-off curve, e.g. ``fdp.accounting.pld.certified_lower_curve(..., direction="symmetrised")``.
    tail : float, default 1e-10
        The floor asked for, in [0, 0.5).

    Returns
    -------
    float

    References
    ----------
    GDP paper (Gomez et al. 2025) Alg. 1, eq. 21.

    Examples
    --------
    >>> from fdp.curves import tradeoff
    >>> alpha_floor(tradeoff.piecewise_linear([0.0, 0.2, 1.0], [1.0, 0.2, 0.0]))
    1e-10
    """
    if not isinstance(curve, PiecewiseLinear):
        raise ValueError(f"curve must be a PiecewiseLinear trade-off curve, got {type(curve).__name__}: for a mechanism use "
                         "fdp.risk.gdp(mechanism) (or fdp.accounting.mechanism_gdp.mu_and_regret_dpsgd for DP-SGD)")
    star = fixed_point(curve)
    if star == 0.0:
        raise ValueError("the certified curve is 0 in double precision at every level above alpha = 0 (TPR 1 at every "
                         "FPR to 16 digits): the mechanism is too far from private for a mu* to be certified from it "
                         "(mu* is finite, but larger than this curve can resolve)")
    return min(check_tail(tail), star * (1.0 - 1e-9))
