"""Gaussian differential privacy (mu-GDP) reporting: Gomez et al. 2025 ("GDP paper").

What is here
------------
* The privacy profile of the Gaussian mechanism and its inverses: :func:`gaussian_delta`,
  :func:`mu_from_eps_delta` (GDP paper Table 3), :func:`eps_from_mu_delta`.
* The tight pessimistic ``mu*`` of a piecewise-linear trade-off curve (App. C.1, eq. 21):
  :func:`mu_star`.
* The regret ``Delta(f, f_mu)`` (Def. 2.6, eq. 6; Alg. 1 step 3; App. C.1 eq. 23) computed
  *exactly* from the breakpoints: :func:`gdp_regret`, and both together: :func:`mu_and_regret`.
* The same Delta-divergence between two piecewise-linear curves, exactly:
  :func:`delta_divergence` (used for the ADP, zCDP and RDP representations of Fig. 1c).
* Curves of other representations as piecewise-linear trade-off curves: :func:`approx_dp`,
  :func:`randomized_response`, :func:`profile_to_tradeoff` (eq. 3), :func:`rdp_delta`,
  :func:`rdp_tradeoff`, :func:`zcdp_delta`, :func:`zcdp_tradeoff` (App. A.6 / C.2), and the tight
  zCDP parameter :func:`rho_from_rdp` (App. C.3, eq. 25).
* Pure DP: :func:`mu_pure_dp` (Prop. 6.1).

Conventions (DESIGN.md)
-----------------------
A curve ``f = T(P, Q)`` maps the type-I error ``alpha`` to the smallest type-II error.  The
Gaussian curve ``f_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu)`` (eq. 4) is :func:`fdp.tradeoff.gaussian`.
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

import warnings

import numpy as np
from scipy.special import log_ndtr, ndtr, ndtri_exp
from scipy.stats import norm

from .privacy_loss import log_ratio, subsampled
from .tradeoff import PiecewiseLinear, check_valid
from .tradeoff import symmetrise as _symmetrise
from .validation import (
    check_array_in,
    check_nonnegative,
    check_positive,
    check_positive_int,
    check_sampling_rate,
)

__all__ = [
    "gaussian_delta",
    "mu_from_eps_delta",
    "eps_from_mu_delta",
    "mu_star",
    "gdp_regret",
    "mu_and_regret",
    "delta_divergence",
    "mu_pure_dp",
    "mu_laplace",
    "laplace_tradeoff",
    "approx_dp",
    "randomized_response",
    "profile_to_tradeoff",
    "rdp_delta",
    "rdp_tradeoff",
    "zcdp_delta",
    "zcdp_tradeoff",
    "rho_from_rdp",
    "rdp_laplace",
    "rdp_subsampled_gaussian",
    "tradeoff_profile",
    "profile_divergence",
    "default_discretization",
    "dpsgd_tradeoff",
    "mu_and_regret_dpsgd",
    "mu_and_regret_dpsgd_grid",
    "discrete_gaussian_pld",
]

_EPS_MAX = 700.0  # e^eps must stay finite in double precision
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(20)


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _bisect_increasing(fun, target, lo, hi, iters: int = 200):
    """Vectorised bisection for ``fun(x) = target`` with ``fun`` non-decreasing on [lo, hi].

    ``fun(lo) <= target <= fun(hi)`` is the caller's responsibility.  Stops when no bracket can
    shrink any more in floating point.
    """
    lo = np.array(lo, dtype=float)
    hi = np.array(hi, dtype=float)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        active = (mid > lo) & (mid < hi)
        if not np.any(active):
            break
        up = fun(mid) <= target
        lo = np.where(active & up, mid, lo)
        hi = np.where(active & ~up, mid, hi)
    return lo, hi


def _check_eps_array(name: str, eps) -> np.ndarray:
    return check_array_in(name, eps, 0.0, _EPS_MAX)


def _check_curve(name: str, curve, atol: float = 1e-9) -> PiecewiseLinear:
    """The curve must be a :class:`PiecewiseLinear` trade-off curve (convex, non-increasing, <= 1 - alpha)."""
    if not isinstance(curve, PiecewiseLinear):
        raise ValueError(
            f"{name} must be a fdp.tradeoff.PiecewiseLinear curve (breakpoints), got {type(curve).__name__}"
        )
    try:
        check_valid(curve, curve.alphas, atol=atol)
    except ValueError as exc:
        raise ValueError(f"{name} is not a valid trade-off curve: {exc}") from None
    return curve


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


def gaussian_delta(eps, mu):
    """Privacy profile of mu-GDP: ``delta(eps; mu) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``.

    The hockey-stick divergence ``H_{e^eps}(N(mu, 1) || N(0, 1))`` (Balle & Wang 2018, Thm. 8;
    Dong, Roth, Su 2022, Cor. 2.13): a mechanism is mu-GDP iff it is (eps, delta(eps; mu))-DP for all
    ``eps >= 0``.  Vectorised over ``eps`` (in [0, 700]) and ``mu`` (> 0), broadcast together.
    Computed as ``Phi(a) * (1 - exp(eps + log(Phi(a - mu) / Phi(a))))``, ``a = -eps/mu + mu/2``, with
    ``expm1`` and, for short intervals, ``Phi(a) - Phi(a - mu)`` by Gauss-Legendre quadrature: no
    overflow, and relative error below 1e-10 against 60-digit arithmetic down to delta ~ 1e-300.
    """
    eps = _check_eps_array("eps", eps)
    mu = check_array_in("mu", mu, 0.0, np.inf, open_low=True, open_high=True)
    out = _gaussian_delta(eps, mu)
    return out if out.ndim else float(out)


def mu_from_eps_delta(eps, delta):
    """The mu of the Gaussian mechanism that is exactly (eps, delta)-DP: the root of ``delta(eps; mu) = delta``.

    ``delta(eps; mu)`` (:func:`gaussian_delta`) increases strictly in ``mu`` from 0 to 1, so the
    root is unique; it is bracketed by expansion and found by bisection in ``log mu`` to machine
    precision.  This is GDP paper Table 3 (mu for common (eps, delta)).  Vectorised: ``eps`` in
    [0, 700] and ``delta`` in (0, 1) are broadcast together.
    """
    eps = _check_eps_array("eps", eps)
    delta = check_array_in("delta", delta, 0.0, 1.0, open_low=True, open_high=True)
    eps, delta = np.broadcast_arrays(eps, delta)
    fun = lambda log_mu: _gaussian_delta(eps, np.exp(log_mu))  # noqa: E731
    lo = np.zeros(eps.shape)
    hi = np.zeros(eps.shape)
    for _ in range(350):  # down to mu = e^-700 ~ 1e-304: delta(eps; mu) <= mu / sqrt(2 pi)
        low = fun(lo) >= delta
        if not np.any(low):
            break
        lo = np.where(low, lo - 2.0, lo)
    else:
        raise ValueError(f"delta={float(np.min(delta))!r} is too small to be inverted in double precision")
    for _ in range(400):
        high = fun(hi) <= delta
        if not np.any(high):
            break
        hi = np.where(high, hi + 1.0, hi)
    lo, hi = _bisect_increasing(fun, delta, lo, hi)
    out = np.exp(0.5 * (lo + hi))
    return out if out.ndim else float(out)


def eps_from_mu_delta(mu, delta):
    """The smallest eps >= 0 with ``delta(eps; mu) <= delta`` (the mu-GDP mechanism is (eps, delta)-DP).

    ``delta(eps; mu)`` decreases strictly in ``eps``; if ``delta >= delta(0; mu) = 2 Phi(mu/2) - 1``
    (the total variation) the answer is 0.  Root by bracketing and bisection to machine precision.
    Vectorised: ``mu > 0`` and ``delta`` in (0, 1) are broadcast together.
    """
    mu = check_array_in("mu", mu, 0.0, np.inf, open_low=True, open_high=True)
    delta = check_array_in("delta", delta, 0.0, 1.0, open_low=True, open_high=True)
    mu, delta = np.broadcast_arrays(mu, delta)
    neg = lambda e: -_gaussian_delta(e, mu)  # noqa: E731  (non-decreasing in eps)
    lo = np.zeros(mu.shape)
    hi = np.ones(mu.shape)
    for _ in range(12):  # 1, 2, 4, ..., 512, 700
        high = _gaussian_delta(hi, mu) > delta
        if not np.any(high):
            break
        hi = np.where(high, np.minimum(2.0 * hi, _EPS_MAX), hi)
    unreachable = _gaussian_delta(hi, mu) > delta
    if np.any(unreachable):
        i = int(np.argmax(unreachable))
        raise ValueError(
            f"mu={float(mu.flat[i])!r} with delta={float(delta.flat[i])!r} needs eps > {_EPS_MAX:g}, "
            "beyond double precision (e^eps overflows)"
        )
    lo, hi = _bisect_increasing(neg, -delta, lo, hi)
    out = np.where(_gaussian_delta(0.0, mu) <= delta, 0.0, hi)
    return out if out.ndim else float(out)


# ---------------------------------------------------------------------------------------------
# tight mu* (App. C.1) and the exact regret (Def. 2.6)
# ---------------------------------------------------------------------------------------------


def _floor_points(a: np.ndarray, b: np.ndarray, floor: float, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The breakpoints of the kept range ``{alpha >= floor, f(alpha) >= floor}`` and the curve's two
    points at its ends, ``(floor, f(floor))`` and ``(f^{-1}(floor), floor)``.

    The curve is linear between breakpoints, so ``f_mu <= f`` holds on the whole kept range iff it
    holds at these points (``f_mu`` is convex): eq. 21 over them is the tail-free ``mu*`` of the
    curve restricted to the kept range, never less.
    """
    b_at = float(np.interp(floor, a, b))
    if b_at < floor:
        raise ValueError(
            f"{name} passes below the point (alpha, beta) = ({floor:g}, {floor:g}) (f({floor:g}) = {b_at:.3g}): "
            f"no level with alpha >= {floor:g} and beta >= {floor:g} is left for the alpha floor tail={floor:g}; "
            "pass a smaller tail (or tail=0 for the exact curve)"
        )
    j = int(np.argmax(b <= floor)) if np.any(b <= floor) else a.size - 1
    if b[j] <= floor and j > 0 and b[j - 1] > floor:  # f crosses the floor inside segment (j-1, j)
        a_at = a[j - 1] + (b[j - 1] - floor) * (a[j] - a[j - 1]) / (b[j - 1] - b[j])
    else:
        a_at = a[j]
    a_at = min(max(float(a_at), floor), 1.0)
    inside = (a >= floor) & (b >= floor)
    return np.concatenate([a[inside], [floor, a_at]]), np.concatenate([b[inside], [b_at, max(floor, b[j])]])


def _fixed_point(a: np.ndarray, b: np.ndarray) -> float:
    """The level where a piecewise-linear curve crosses the diagonal ``f(alpha) = alpha``."""
    j = int(np.argmax(b <= a))
    if j == 0:
        return 0.0
    d0, d1 = b[j - 1] - a[j - 1], b[j] - a[j]  # > 0, then <= 0
    return float(a[j - 1] + d0 / (d0 - d1) * (a[j] - a[j - 1]))


def _mu_star(a: np.ndarray, b: np.ndarray, tail: float, name: str) -> float:
    if tail > 0.0:
        a, b = _floor_points(a, b, tail, name)
    keep = b < 1.0 - a  # points on the diagonal give mu_i = 0
    infinite = keep & ((a == 0.0) | (b == 0.0))
    if np.any(infinite):
        i = int(np.argmax(infinite))
        raise ValueError(
            f"{name} has the breakpoint (alpha, beta) = ({a[i]!r}, {b[i]!r}) with alpha = 0 or beta = 0 "
            "strictly below 1 - alpha: no finite mu satisfies f_mu <= f (GDP paper Prop. 6.2); "
            "pass tail > 0 to certify mu for alpha >= tail and beta >= tail only"
        )
    mu = float(max(0.0, np.max(norm.isf(a[keep]) + norm.isf(b[keep]), initial=0.0)))
    # Eq. 21 holds exactly; make it hold in floating point too, with the same evaluation of f_mu
    # as fdp.tradeoff.gaussian, by raising mu in doubling steps if rounding put f_mu above a
    # counted point (the increase is at most twice the rounding error it compensates).
    za, bb = norm.isf(a), b
    step = max(float(np.spacing(mu)), 2.0**-60)
    for _ in range(80):
        above = norm.cdf(za - mu) > bb
        if not np.any(above):
            return mu
        za, bb = za[above], bb[above]  # raising mu only lowers f_mu: passed points stay passed
        mu += step
        step *= 2.0
    raise ValueError(f"{name}: could not certify f_mu <= f at the breakpoints in floating point")


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
    direction, add vs remove) and the symmetrisation C(f, f^{-1}) have the same ``mu*``.  If rounding
    puts ``f_mu*`` above a breakpoint, the returned value is raised by at most twice that rounding
    error, so that ``fdp.tradeoff.gaussian(mu)(alphas) <= betas`` holds exactly in floating point.
    Note that the stored breakpoints are themselves rounded: near (0, 1) a ``beta`` close to 1 moves
    eq. 21 by up to ``ulp(beta) / phi(Phi^{-1}(beta))`` (about 1e-8 for curves sampled to 1 - 1e-10).

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
    """
    curve = _check_curve("curve", curve)
    tail = check_nonnegative("tail", tail)
    if tail >= 0.5:
        raise ValueError(f"tail must be < 0.5, got {tail!r}")
    return _mu_star(curve.alphas, curve.betas, tail, "curve")


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

    lo, hi = _bisect_increasing(h, u, np.full(a.shape, -span), np.full(a.shape, span), iters=80)
    w = 0.5 * (lo + hi)
    z = np.where(left, -w, w)
    t = np.where(left, a - ndtr(-z), b - ndtr(z - mu))
    return np.where(u <= 0.0, 0.0, t)  # the points (0, 1) and (1, 0) lie on every curve


def _gdp_divergence(a: np.ndarray, b: np.ndarray, mu: float) -> float:
    """Delta(f, f_mu) for valid breakpoints (a, b) (see module docstring)."""
    if mu == 0.0:
        return 0.0  # f <= 1 - alpha = f_0: no shift needed
    a0, a1, b0, b1 = a[:-1], a[1:], b[:-1], b[1:]
    with np.errstate(divide="ignore", over="ignore"):
        k = (b1 - b0) / (a1 - a0)
    s = a - b
    tangent = (k < 0.0) & np.isfinite(k)  # flat (beta = 0) or overflowing slopes: ends only
    kk = np.where(tangent, k, -1.0)
    z = np.log(-kk) / mu + mu / 2.0  # f_mu'(x) = k  <=>  Phi^{-1}(1 - x) = log(-k)/mu + mu/2
    x, y = ndtr(-z), ndtr(z - mu)
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
    """
    curve = _check_curve("curve", curve)
    mu = check_nonnegative("mu", mu)
    a, b = curve.alphas, curve.betas
    out = _gdp_divergence(a, b, mu)
    if metric and mu > 0.0:
        # Delta(f_mu, f): d_{f_mu} - d_f is convex between breakpoints of f, so the maximum is at a
        # breakpoint, where it is minus the signed shift onto f_mu.
        out = max(out, float(np.max(-_gaussian_point_at(a, b, mu), initial=0.0)))
    return out


def mu_and_regret(curve: PiecewiseLinear, *, symmetrise: bool = True, tail: float = 0.0) -> tuple[float, float]:
    """GDP paper Alg. 1: the tight pessimistic ``mu*`` (eq. 21) and its exact regret ``Delta(f, f_mu*)``.

    Parameters
    ----------
    curve : PiecewiseLinear
        Breakpoints of a trade-off curve, e.g. ``T(P, Q)`` in the "add" direction from a PLD.
    symmetrise : bool, default True
        Use the symmetrised curve C(f, f^{-1}) of both directions (add and remove;
        :func:`fdp.tradeoff.symmetrise`, exact for piecewise-linear curves), as a DP guarantee for
        the add/remove relation requires.  ``mu*`` does not depend on this choice (eq. 21 is
        symmetric in alpha and beta); the regret of C(f, f^{-1}) is at most that of ``f`` (a lower
        curve needs a smaller shift).  Pass False if ``curve`` is already symmetric or a single
        direction is meant.
    tail : float, default 0
        See :func:`mu_star`.

    Returns
    -------
    (mu, regret) : tuple of float
        ``regret`` is ``Delta(f, f_mu) = Delta<->(f, f_mu)`` (Prop. C.2) on the (symmetrised) curve.
    """
    curve = _check_curve("curve", curve)
    if symmetrise:
        curve = _check_curve("curve (symmetrised)", _symmetrise(curve))
    mu = mu_star(curve, tail=tail)
    return mu, _gdp_divergence(curve.alphas, curve.betas, mu)


def delta_divergence(f: PiecewiseLinear, g: PiecewiseLinear, *, metric: bool = False) -> float:
    """Exact Delta-divergence ``Delta(f, g)`` between two piecewise-linear curves (Def. 2.6, eq. 6).

    ``inf{kappa >= 0 : f(alpha + kappa) - kappa <= g(alpha) for all alpha}``: the regret of reporting
    the (pessimistic) curve ``g`` for a mechanism with curve ``f``.  In the rotated coordinates
    ``s = alpha - beta``, ``d = alpha + beta`` both curves are piecewise linear, so
    ``Delta = max(0, max_s (d_f(s) - d_g(s)) / 2)`` is attained at a breakpoint of either curve
    (module docstring).  A curve with ``g(0) < 1`` (e.g. (eps, delta)-DP) is extended by the vertical
    segment from (0, 1).  With ``metric=True`` returns ``max(Delta(f, g), Delta(g, f))`` (eq. 7).
    """
    f = _check_curve("f", f)
    g = _check_curve("g", g)
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


def mu_pure_dp(eps) -> float | np.ndarray:
    """GDP paper Prop. 6.1: every eps-DP mechanism is mu-GDP with ``mu = -2 Phi^{-1}(1 / (e^eps + 1))``.

    The value is tight: it is :func:`mu_star` of the randomized-response curve
    (:func:`randomized_response`), which dominates every eps-DP mechanism.  Computed as
    ``-2 Phi^{-1}(exp(-log(1 + e^eps)))`` through ``ndtri_exp`` (the inverse of ``log Phi``), so
    it keeps its digits where ``1 / (e^eps + 1)`` is far below 1e-10.  Vectorised over
    ``eps`` in [0, 700].
    """
    eps = _check_eps_array("eps", eps)
    out = -2.0 * ndtri_exp(-np.logaddexp(0.0, eps))
    return out if out.ndim else float(out)


def mu_laplace(eps) -> float | np.ndarray:
    """Tight ``mu*`` of the Laplace mechanism with ``eps = Delta_1 / b``: ``2 Phi^{-1}(1 - e^{-eps/2} / 2)``.

    Eq. 21 for the Laplace curve (ReRo paper eq. 1): with ``s(u) = Phi^{-1}(1 - e^u)``, which is
    concave (``log Phi`` is concave, so its inverse is convex), the quantity
    ``Phi^{-1}(1 - alpha) - Phi^{-1}(f(alpha))`` is ``s(u) - s(u + eps)`` on the linear piece
    ``alpha < e^{-eps} / 2`` (non-decreasing in ``u = log alpha``) and ``s(u) + s(-eps - log 4 - u)``
    on the hyperbolic piece, concave and symmetric about the curve's fixed point
    ``alpha = e^{-eps/2} / 2``, where the maximum is.  Computed through ``ndtri_exp``, so it holds
    for any ``eps`` in [0, 700] (no alpha floor).
    """
    eps = _check_eps_array("eps", eps)
    out = -2.0 * ndtri_exp(-0.5 * eps - np.log(2.0))
    return out if out.ndim else float(out)


def laplace_tradeoff(eps: float, points: int = 2000) -> PiecewiseLinear:
    """The Laplace curve (ReRo paper eq. 1, ``eps = Delta_1 / b``) as breakpoints, on or above the exact one.

    The two linear pieces are exact; the hyperbola ``e^{-eps} / (4 alpha)`` between them is sampled at
    ``points`` log-spaced levels, and its chords lie above it (it is convex), so a regret computed on
    this curve is an upper bound of the exact one.  ``eps`` in (0, 700].
    """
    eps = float(_check_eps_array("eps", eps))
    if eps == 0.0:
        raise ValueError("eps must be > 0 for laplace_tradeoff (eps = 0 is the identity curve)")
    points = check_positive_int("points", points)
    corner = 0.5 * np.exp(-eps)
    mid = np.geomspace(corner, 0.5, points + 2)[1:-1]
    alphas = np.concatenate([[0.0, corner], mid, [0.5, 1.0]])
    betas = np.concatenate([[1.0, 0.5], np.exp(-eps - np.log(4.0) - np.log(mid)), [corner, 0.0]])
    keep = np.r_[True, np.diff(alphas) > 0]  # eps near 0: the corner meets 1/2
    return PiecewiseLinear(alphas[keep], np.minimum.accumulate(betas[keep]), name=f"Laplace eps={eps:g}")


def approx_dp(eps: float, delta: float = 0.0) -> PiecewiseLinear:
    """The (eps, delta)-DP curve (GDP paper eq. 2) as breakpoints.

    ``max{0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha)}`` with corners at ``alpha = 0``,
    ``(1 - delta) / (1 + e^eps)`` and ``1 - delta``: the same function as
    :func:`fdp.tradeoff.eps_delta`, as a :class:`PiecewiseLinear` so that :func:`delta_divergence`
    is exact for it.  ``delta = 0`` gives the eps-DP curve.
    """
    eps = check_nonnegative("eps", eps)
    if eps > _EPS_MAX:
        raise ValueError(f"eps must be <= {_EPS_MAX:g}, got {eps!r}")
    delta = check_array_in("delta", delta, 0.0, 1.0, open_high=True).item()
    corner = (1.0 - delta) / (1.0 + np.exp(eps))
    alphas = [0.0, corner, 1.0 - delta, 1.0]
    betas = [1.0 - delta, corner, 0.0, 0.0]
    if 1.0 - delta == 1.0:  # delta = 0, or below the resolution of doubles near 1
        alphas, betas = alphas[:3], betas[:3]
        alphas[2] = 1.0
    return PiecewiseLinear(alphas, betas, name=f"({eps:g}, {delta:g})-DP")


def randomized_response(eps: float) -> PiecewiseLinear:
    """Exact trade-off curve of binary randomized response with parameter eps (Kairouz et al. 2015).

    Breakpoints (0, 1), (p, p), (1, 0) with ``p = 1 / (1 + e^eps)`` (GDP paper App. E, proof of
    Prop. 6.1, where the first point is misprinted as (1, 0)).  It is the eps-DP curve
    :func:`approx_dp` with ``delta = 0``; its tight GDP parameter is :func:`mu_pure_dp`.
    """
    eps = check_nonnegative("eps", eps)
    curve = approx_dp(eps, 0.0)
    curve.name = f"randomized response eps={eps:g}"
    return curve


# ---------------------------------------------------------------------------------------------
# privacy profiles, RDP and zCDP (App. A.6, C.2, C.3)
# ---------------------------------------------------------------------------------------------


def _upper_envelope(slopes: np.ndarray, intercepts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints on [0, 1] of ``max_k (intercepts[k] + slopes[k] x)`` (convex hull trick)."""
    order = np.lexsort((intercepts, slopes))
    m, c = slopes[order], intercepts[order]
    keep = np.append(m[1:] != m[:-1], True)  # equal slopes: keep the largest intercept (last)
    m, c = m[keep], c[keep]
    hull: list[int] = []
    for i in range(m.size):
        while len(hull) >= 2:
            j, k = hull[-2], hull[-1]
            # line k is useless if line i overtakes j no later than k does
            if (c[j] - c[i]) * (m[k] - m[j]) <= (c[j] - c[k]) * (m[i] - m[j]):
                hull.pop()
            else:
                break
        hull.append(i)
    m, c = m[hull], c[hull]
    cross = (c[:-1] - c[1:]) / (m[1:] - m[:-1])  # increasing: line p is on top over [cross[p-1], cross[p]]
    xs = np.unique(np.concatenate([[0.0, 1.0], cross[(cross > 0.0) & (cross < 1.0)]]))
    active = np.searchsorted(cross, xs, side="left")
    ys = c[active] + m[active] * xs
    return xs, ys


def profile_to_tradeoff(eps, deltas, name: str = "privacy profile") -> PiecewiseLinear:
    """Trade-off curve implied by (eps_k, delta_k)-DP for all k (GDP paper Thm. 2.4, eq. 3, on a grid).

    ``f(alpha) = max_k max{0, 1 - delta_k - e^eps_k alpha, e^-eps_k (1 - delta_k - alpha)}``, returned
    exactly as breakpoints (upper envelope of the lines).  For a symmetric profile ``eps >= 0`` is
    enough (Thm. A.9, footnote).  On a finite grid this is a valid, pessimistic curve (a lower bound
    of eq. 3's supremum over all eps), which tightens as the grid is refined.
    """
    e = _check_eps_array("eps", np.atleast_1d(eps))
    d = check_array_in("deltas", np.atleast_1d(deltas), 0.0, 1.0)
    if e.ndim != 1 or e.shape != d.shape:
        raise ValueError(f"eps and deltas must be 1-d arrays of the same length, got {e.shape} and {d.shape}")
    slopes = np.concatenate([-np.exp(e), -np.exp(-e), [0.0]])
    intercepts = np.concatenate([1.0 - d, np.exp(-e) * (1.0 - d), [0.0]])
    xs, ys = _upper_envelope(slopes, intercepts)
    ys = np.minimum.accumulate(np.clip(ys, 0.0, 1.0))  # rounding only
    return PiecewiseLinear(xs, ys, name=name)


def _check_rdp(orders, rdp) -> tuple[np.ndarray, np.ndarray]:
    t = check_array_in("orders", np.atleast_1d(orders), 1.0, np.inf, open_high=True)
    r = check_array_in("rdp", np.atleast_1d(rdp), 0.0, np.inf, open_high=True)
    if t.ndim != 1 or t.shape != r.shape or t.size == 0:
        raise ValueError(f"orders and rdp must be non-empty 1-d arrays of the same length, got {t.shape} and {r.shape}")
    return t, r


def rdp_delta(eps, orders, rdp):
    """Privacy profile implied by (t, eps(t))-RDP guarantees (GDP paper App. C.2).

    ``delta(eps) = min_t min{ sqrt(1 - e^{-eps(t)}),
    exp((t - 1)(eps(t) - eps + log(1 - 1/t))) / t }`` (Canonne, Kamath, Steinke 2020, Prop. 12 in v4,
    for orders t > 1; the first term bounds the total variation through the KL divergence, which is
    at most eps(t) for every t >= 1, as in ``dp_accounting``), capped at 1.  ``dp_accounting`` only
    uses Prop. 12 for t > 1.01; here ``log1p`` keeps it stable for every t > 1.  Vectorised over eps.
    """
    e = _check_eps_array("eps", eps)
    t, r = _check_rdp(orders, rdp)
    with np.errstate(divide="ignore"):
        log_kl = 0.5 * np.log(-np.expm1(-r))  # -inf where rdp = 0
    big = t > 1.0
    tb, rb = t[big], r[big]
    ee = e.reshape(e.shape + (1,))
    log_cks = (tb - 1.0) * (rb - ee + np.log1p(-1.0 / tb)) - np.log(tb)
    logd = np.min(np.concatenate([np.broadcast_to(log_kl, e.shape + r.shape), log_cks], axis=-1), axis=-1)
    out = np.minimum(np.exp(logd), 1.0)
    return out if out.ndim else float(out)


def rdp_tradeoff(orders, rdp, eps_grid=None) -> PiecewiseLinear:
    """Trade-off curve implied by an RDP curve ``(orders, eps(orders))`` via its privacy profile (App. C.2).

    :func:`rdp_delta` on ``eps_grid`` followed by :func:`profile_to_tradeoff` (eq. 3).  The default
    grid has 4001 points from 0 to the eps where the profile falls below 1e-15.
    """
    t, r = _check_rdp(orders, rdp)
    if eps_grid is None:
        eps_grid = _default_eps_grid(lambda e: rdp_delta(e, t, r))
    return profile_to_tradeoff(eps_grid, rdp_delta(eps_grid, t, r), name="RDP")


def _default_eps_grid(delta_of_eps, points: int = 4001) -> np.ndarray:
    top = 1.0
    while delta_of_eps(top) > 1e-15 and top < _EPS_MAX / 2:
        top *= 2.0
    return np.linspace(0.0, top, points)


def zcdp_delta(eps, rho):
    """Privacy profile implied by rho-zCDP, i.e. (t, rho t)-RDP for all t > 1 (App. A.2, C.3).

    The bound of :func:`rdp_delta` minimised over the continuum of orders: the exponent
    ``(t - 1)(rho t - eps + log(1 - 1/t)) - log t`` is strictly convex in t (second derivative
    ``2 rho + 1/(t - 1) - 1/t > 0``), so the minimiser solves
    ``rho (2t - 1) - eps + log((t - 1)/t) = 0``, found by bisection.  Also bounded by the KL term
    ``sqrt(1 - e^{-rho})``.  Vectorised over eps; ``rho > 0``.
    """
    e = _check_eps_array("eps", eps)
    rho = check_positive("rho", rho)
    e1 = np.atleast_1d(e)
    # derivative in u = log(t - 1): rho (2t - 1) - eps - log1p(1/(t-1)), increasing in t
    deriv = lambda u: rho * (2.0 * (1.0 + np.exp(u)) - 1.0) - e1 - np.log1p(np.exp(-u))  # noqa: E731
    lo, hi = _bisect_increasing(deriv, 0.0, np.full(e1.shape, -60.0), np.full(e1.shape, 60.0))
    # in u = log(t - 1): t - 1 = e^u and log(1 - 1/t) = u - log(t), accurate also when t - 1 is below
    # the resolution of doubles near 1 (large rho, where 1 + e^u == 1 and log1p(-1/t) would be -inf)
    u = 0.5 * (lo + hi)
    log_t = np.log1p(np.exp(u))
    log_cks = np.exp(u) * (rho * (1.0 + np.exp(u)) - e1 + u - log_t) - log_t
    log_kl = 0.5 * np.log(-np.expm1(-rho))
    out = np.minimum(np.exp(np.minimum(log_cks, log_kl)), 1.0).reshape(e.shape)
    return out if out.ndim else float(out)


def zcdp_tradeoff(rho: float, eps_grid=None) -> PiecewiseLinear:
    """Trade-off curve implied by rho-zCDP (App. A.6 "zCDP", computed through the profile as in App. C.2).

    :func:`zcdp_delta` on ``eps_grid`` then :func:`profile_to_tradeoff` (eq. 3).  Pessimistic for every
    rho-zCDP mechanism (e.g. it lies below the Gaussian curve ``f_mu`` for ``rho = mu^2 / 2``).
    """
    rho = check_positive("rho", rho)
    if eps_grid is None:
        eps_grid = _default_eps_grid(lambda e: zcdp_delta(e, rho))
    return profile_to_tradeoff(eps_grid, zcdp_delta(eps_grid, rho), name=f"{rho:g}-zCDP")


def rho_from_rdp(orders, rdp) -> float:
    """Tight zCDP parameter of an RDP curve (GDP paper App. C.3, eq. 25): ``rho* = max_{t > 1} eps(t) / t``.

    On a grid of orders the infimum of eq. 25 is exactly the largest ratio (no bisection needed).
    """
    t, r = _check_rdp(orders, rdp)
    big = t > 1.0
    if not np.any(big):
        raise ValueError("orders must contain at least one order > 1 (zCDP constrains t > 1)")
    return float(np.max(r[big] / t[big]))


# ---------------------------------------------------------------------------------------------
# the paper's examples: RDP of Laplace and of the subsampled Gaussian, profiles of curves (eq. 24),
# DP-SGD curves (Alg. 1, Fig. 3), composed discrete Gaussians (TopDown, Fig. 5a)
# ---------------------------------------------------------------------------------------------


def rdp_laplace(orders, scale: float = 1.0) -> np.ndarray:
    """Renyi DP ``eps(t)`` of the Laplace mechanism with scale ``b`` and sensitivity 1 (Mironov 2017, Prop. 6).

    ``eps(t) = log(t/(2t-1) e^{(t-1)/b} + (t-1)/(2t-1) e^{-t/b}) / (t - 1)`` for ``t > 1``, and the
    KL divergence ``1/b + e^{-1/b} - 1`` at ``t = 1`` (the limit).  Exact for the Laplace pair, the
    same in both directions.  Computed as ``1/b + log1p((t-1) c) / (t-1)`` with
    ``c = expm1((1-2t)/b) / (2t-1)``, stable as ``t -> 1`` (cf. ``dp_accounting``'s ``_laplace_rdp``).
    Vectorised over ``orders`` (each >= 1).
    """
    t = check_array_in("orders", np.atleast_1d(orders), 1.0, np.inf, open_high=True)
    b = check_positive("scale", scale)
    e = 1.0 / b
    c = np.expm1(e * (1.0 - 2.0 * t)) / (2.0 * t - 1.0)
    y = (t - 1.0) * c
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(y == 0.0, 1.0, np.log1p(y) / np.where(y == 0.0, 1.0, y))
    return e + c * ratio


def _log_gauss_integral(log_integrand, lo: float, hi: float, dx: float) -> float:
    """``log int_lo^hi exp(log_integrand(x)) dx`` by the rectangle rule in log space.

    For the smooth, Gaussian-tailed integrands used here (width >= 20 dx, negligible mass at the
    ends) the rule converges geometrically: its error is far below double precision.
    """
    n = int(np.ceil((hi - lo) / dx)) + 1
    x = np.linspace(lo, hi, n)
    v = log_integrand(x)
    m = float(np.max(v))
    return m + float(np.log(np.sum(np.exp(v - m)) * (x[1] - x[0])))


def rdp_subsampled_gaussian(orders, noise: float, sampling_rate: float = 1.0, steps: int = 1) -> np.ndarray:
    """Renyi DP ``eps(t)`` of ``steps``-fold Poisson-subsampled Gaussian noise, for real orders ``t >= 1``.

    Sensitivity 1, noise multiplier ``noise`` (sigma), sampling rate ``q``: with ``P = N(0, sigma^2)``
    and ``Q = (1 - q) P + q N(1, sigma^2)``, ``eps(t) = steps * max(D_t(Q || P), D_t(P || Q))`` (add/remove
    adjacency), each direction ``log E_P[(Q/P)^t] / (t - 1)`` resp. ``log E_P[(Q/P)^{1-t}] / (t - 1)``
    by numerical integration on a grid of step sigma/20 covering the tilted measures (Mironov, Talwar,
    Zhang 2019, Sec. 3.3, whose integral this is); ``t = 1`` gives the KL divergences.  This is the
    "exact Renyi divergence" of GDP paper App. C.3.  Unlike ``dp_accounting``'s fractional-order series
    it is accurate for every real order: for q = 0.328, sigma = 9.4 that series gives
    ``eps(1.1) = 0.028`` per step where the integral (and the integer-order neighbours) give 6.7e-4.
    Vectorised over ``orders``.
    """
    t = check_array_in("orders", np.atleast_1d(orders), 1.0, np.inf, open_high=True)
    s = check_positive("noise", noise)
    q = check_sampling_rate("sampling_rate", sampling_rate)
    steps = check_positive_int("steps", steps)
    log_norm = -np.log(s * np.sqrt(2.0 * np.pi))

    def log_p(x):
        return -0.5 * (x / s) ** 2 + log_norm

    def r(x):  # log Q/P, the one-step privacy loss
        return subsampled(log_ratio("gaussian", s, x), q)

    dx, k = s / 20.0, 14.0 * s
    out = np.empty(t.shape)
    for i, ti in enumerate(t.flat):
        if ti == 1.0:
            lo, hi = -k - 1.0, k + 2.0
            n = int(np.ceil((hi - lo) / dx)) + 1
            x = np.linspace(lo, hi, n)
            w = np.exp(log_p(x)) * (x[1] - x[0])
            rx = r(x)
            val = max(float(np.sum(w * np.exp(rx) * rx)), float(np.sum(-w * rx)), 0.0)
        else:
            # (Q/P)^t tilts P towards x = t, (Q/P)^{1-t} towards x = 1 - t: cover both
            lo, hi = -(ti - 1.0) - k - 1.0, ti + k + 1.0
            fwd = _log_gauss_integral(lambda x: log_p(x) + ti * r(x), lo, hi, dx)
            bwd = _log_gauss_integral(lambda x: log_p(x) + (1.0 - ti) * r(x), lo, hi, dx)
            val = max(fwd, bwd, 0.0) / (ti - 1.0)
        out.flat[i] = val
    return steps * out


def tradeoff_profile(curve: PiecewiseLinear, eps) -> np.ndarray | float:
    """The privacy profile of a piecewise-linear trade-off curve: ``delta(eps) = max_alpha 1 - f(alpha) - e^eps alpha``.

    The inverse of eq. 3 (Thm. 2.4): the hockey-stick divergence ``H_{e^eps}(Q || P)`` of the pair
    whose curve is ``f = T(P, Q)``; for a symmetric curve (e.g. the symmetrised DP-SGD curve) it is the
    add/remove profile for ``eps >= 0``.  Exact: for a convex ``f`` the maximum over alpha is at the
    breakpoint where the slope of ``f`` crosses ``-e^eps`` (found by binary search; its neighbours are
    also evaluated, which covers curves convex only up to the validation tolerance).  Vectorised over
    ``eps`` in [0, 700].
    """
    curve = _check_curve("curve", curve)
    e = _check_eps_array("eps", eps)
    a, b = curve.alphas, curve.betas
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.diff(b) / np.diff(a)
    k = np.maximum.accumulate(np.where(np.isfinite(k), k, -np.inf))
    slope = -np.exp(e)
    i = np.searchsorted(k, slope, side="left")
    best = np.zeros(e.shape)
    for j in (i - 1, i, i + 1):
        j = np.clip(j, 0, a.size - 1)
        best = np.maximum(best, 1.0 - b[j] + slope * a[j])
    out = np.clip(best, 0.0, 1.0)
    return out if out.ndim else float(out)


def profile_divergence(eps, delta, delta_rep) -> float:
    """Delta-divergence between two privacy profiles on a grid of eps (GDP paper Def. C.3, eq. 24).

    ``Delta(delta, delta_rep) = inf{kappa >= 0 : delta(eps) + kappa (1 + e^eps) >= delta_rep(eps) for all eps}``
    ``= max(0, max_eps (delta_rep(eps) - delta(eps)) / (1 + e^eps))``: the regret of reporting the
    representation with profile ``delta_rep`` for a mechanism with profile ``delta``.  This is how the
    paper evaluates the regrets of Fig. 1c (App. C.2).  It equals :func:`delta_divergence` of the
    curves (eq. 3) when both arguments are the profiles of those curves, and on a grid it can only be
    lower.  A profile obtained by a lossy conversion (RDP or zCDP to (eps, delta), :func:`rdp_delta`)
    is in general *larger* than the profile of the curve it defines (the curve of eq. 3 is the tightest
    summary of all those guarantees together), and then eq. 24 overstates the regret of that curve.
    """
    e = _check_eps_array("eps", np.atleast_1d(eps))
    d = check_array_in("delta", np.atleast_1d(delta), 0.0, 1.0)
    r = check_array_in("delta_rep", np.atleast_1d(delta_rep), 0.0, 1.0)
    if not (e.ndim == 1 and e.shape == d.shape == r.shape):
        raise ValueError(f"eps, delta and delta_rep must be 1-d arrays of one length, got {e.shape}, {d.shape}, {r.shape}")
    return float(max(0.0, np.max((r - d) / (1.0 + np.exp(e)))))


def default_discretization(noise: float, sampling_rate: float, steps: int) -> float:
    """A PLD lattice spacing for DP-SGD: 1/200 of the CLT mu (Bu et al. 2020), clipped to [1e-5, 3e-4].

    For the eps = 8 run of the GDP paper (9.4, 2000, 2^14/50,000) this is 3e-4, and mu* lies 1e-5
    above the certified interval [1.566947, 1.566949] of :func:`fdp.pld.tradeoff_bracket` (at 1e-3 it
    lies 1.1e-4 above; across the Fig. 4 grid the 1e-3 cap moved mu* by up to 0.36 %).
    """
    noise = check_positive("noise", noise)
    sampling_rate = check_sampling_rate("sampling_rate", sampling_rate)
    steps = check_positive_int("steps", steps)
    with np.errstate(over="ignore"):
        mu_clt = sampling_rate * np.sqrt(steps * np.expm1(1.0 / noise**2))
    return float(np.clip(mu_clt / 200.0, 1e-5, 3e-4))


def dpsgd_tradeoff(noise: float, sampling_rate: float, steps: int, *, discretization: float | None = None) -> PiecewiseLinear:
    """Symmetrised trade-off curve of DP-SGD (``steps``-fold Poisson-subsampled Gaussian), GDP paper Alg. 1 step 1.

    The pessimistic (connect-the-dots) PLD of :func:`fdp.pld.mechanism_pld`, its add and remove
    curves symmetrised (:func:`fdp.pld.tradeoff_curve`, ``"symmetrised"``, with the round-off surplus
    of the PMF normalised away so that the curve ends at (1, 0)).  ``discretization`` defaults to
    1/200 of the CLT parameter ``q sqrt(T (e^{1/sigma^2} - 1))``, clipped to [1e-5, 3e-4] (see
    ``default_discretization`` for the error this leaves).
    """
    from . import (
        pld,  # local import: pld does not depend on gdp, but keep gdp importable alone
    )

    s = check_positive("noise", noise)
    q = check_sampling_rate("sampling_rate", sampling_rate)
    steps = check_positive_int("steps", steps)
    h = default_discretization(s, q, steps) if discretization is None else check_positive("discretization", discretization)
    dist = pld.mechanism_pld("gaussian", s, q, steps, discretization=h)
    return pld.tradeoff_curve(dist, "symmetrised", name=f"DP-SGD sigma={s:g} q={q:.4g} T={steps}", normalise=True)


def mu_and_regret_dpsgd(
    noise: float, sampling_rate: float, steps: int, *, discretization: float | None = None, tail: float = 1e-10
) -> tuple[float, float]:
    """GDP paper Alg. 1 for DP-SGD (the paper's Fig. 3 interface): ``(mu*, Delta(f, f_mu*))``.

    :func:`dpsgd_tradeoff` then :func:`mu_and_regret` on the (already symmetric) curve; with
    ``sampling_rate = 1`` the exact ``(sqrt(steps) / noise, 0)`` of the Gaussian mechanism.  A
    mechanism so far from private that its curve passes below ``(tail, tail)`` (for example noise 1,
    rate 0.56, 1,000 steps) has no level left above the floor; the floor is then lowered to the
    curve's fixed point ``f(alpha) = alpha``, so that ``mu*`` is the (large) value eq. 21 demands
    there instead of the vacuous 0.  Such a ``mu*`` exceeds ``2 Phi^-1(1 - tail)`` (12.7 at the
    default), but its value is set by the lattice's resolution (the curve's betas carry round-off of
    about 1e-13, so it stays near 14-15 and need not grow with the steps): read it as "beyond 12.7".
    The regret there is below 1e-11.  ``tail``
    defaults to 1e-10, the ``err`` of gdpnum (the paper's code): an accountant curve carries truncated
    tails (beta reaches 0 a hair before alpha = 1), which eq. 21 must ignore (see :func:`mu_star`).
    """
    if check_sampling_rate("sampling_rate", sampling_rate) == 1.0:
        # full batches: the steps-fold Gaussian mechanism, exactly sqrt(steps)/noise-GDP (regret 0)
        return float(np.sqrt(check_positive_int("steps", steps)) / check_positive("noise", noise)), 0.0
    curve = dpsgd_tradeoff(noise, sampling_rate, steps, discretization=discretization)
    tail = check_nonnegative("tail", tail)
    floor = min(tail, _fixed_point(curve.alphas, curve.betas) * (1.0 - 1e-9))
    return mu_and_regret(curve, symmetrise=False, tail=floor)


def discrete_gaussian_pld(rhos, repeats=1, *, sensitivity: int = 1, discretization: float = 1e-4):
    """``dp_accounting`` PLD of a composition of discrete Gaussian mechanisms, each calibrated to rho_i-zCDP.

    Mechanism i adds discrete Gaussian noise with parameter ``sigma_i = sensitivity / sqrt(2 rho_i)``
    (Canonne, Kamath, Steinke 2020: then it is rho_i-zCDP, like the continuous Gaussian) to an
    integer query of the given sensitivity, and is repeated ``repeats[i]`` times (a number broadcasts).
    The pessimistic connect-the-dots PLDs (``dp_accounting``'s ``from_discrete_gaussian_mechanism``)
    are composed exactly up to the lattice.  Used for the TopDown algorithm of the 2020 US Census
    (GDP paper Fig. 5a): each geographic level spends a share of the total rho on its queries.
    """
    from dp_accounting.pld import privacy_loss_distribution as _pld

    r = check_array_in("rhos", np.atleast_1d(rhos), 0.0, np.inf, open_low=True, open_high=True)
    if r.ndim != 1:
        raise ValueError(f"rhos must be a 1-d array, got shape {r.shape}")
    n = np.broadcast_to(np.atleast_1d(repeats), r.shape)
    n = [check_positive_int("repeats", v) for v in n]
    sens = check_positive_int("sensitivity", sensitivity)
    h = check_positive("discretization", discretization)
    out = None
    for rho_i, n_i in zip(r, n):
        one = _pld.from_discrete_gaussian_mechanism(
            float(sens / np.sqrt(2.0 * rho_i)), sensitivity=sens, value_discretization_interval=h, use_connect_dots=True
        )
        one = one.self_compose(n_i) if n_i > 1 else one
        out = one if out is None else out.compose(one)
    return out


def mu_and_regret_dpsgd_grid(
    noises, sampling_rates, steps, *, n_jobs: int = 1, discretization: float | None = None, tail: float = 1e-10
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`mu_and_regret_dpsgd` on a grid (GDP paper Fig. 4): arrays ``(mu, regret)`` of shape (noises, steps, rates).

    The grid points are independent and run through joblib (``n_jobs`` workers; a Dask backend set
    with ``joblib.parallel_config`` is used as is).
    """
    from joblib import Parallel, delayed

    s = [check_positive("noises", v) for v in np.atleast_1d(noises).tolist()]
    q = [check_sampling_rate("sampling_rates", v) for v in np.atleast_1d(sampling_rates).tolist()]
    t = [check_positive_int("steps", v) for v in np.atleast_1d(steps).tolist()]
    n_jobs = check_positive_int("n_jobs", n_jobs)
    points = [(a, c, b) for a in s for b in t for c in q]
    with warnings.catch_warnings():
        # loky replaces a worker whose memory grew by 300 MB (freed lattices stay with the process) and
        # resubmits its queued tasks: nothing is lost, so its UserWarning would only alarm the reader.
        warnings.filterwarnings("ignore", message="A worker stopped while some jobs", category=UserWarning)
        res = Parallel(n_jobs=n_jobs)(
            delayed(mu_and_regret_dpsgd)(a, c, b, discretization=discretization, tail=tail) for a, c, b in points
        )
    arr = np.array(res, dtype=float).reshape(len(s), len(t), len(q), 2)
    return arr[..., 0], arr[..., 1]
