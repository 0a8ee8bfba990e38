"""Trade-off curves T(P, Q)(alpha) and operations on them.

Convention: a curve ``f = T(P, Q)`` has null hypothesis H0 = P and alternative
H1 = Q; ``f(alpha)`` is the smallest type-II error of a test of level ``alpha``.  Its inverse
``f^{-1}(beta) = inf{alpha : f(alpha) <= beta}`` is the curve of the swapped pair, T(Q, P).
"add" means P = M(D) and Q = M(D with the target).

Every curve is a :class:`TradeOffCurve`: call it on an array of levels to get type-II errors,
``.inverse`` gives T(Q, P) and ``.power`` gives ``1 - f`` without cancellation (important for
reconstruction bounds at small kappa).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.optimize import isotonic_regression
from scipy.special import log_ndtr
from scipy.stats import norm

from ..roots import bisect_doubles
from ..validation import (
    check_array_in,
    check_nonnegative,
    check_positive_int,
    check_probability,
    check_sampling_rate,
)

__all__ = [
    "TradeOffCurve",
    "PiecewiseLinear",
    "gaussian",
    "gaussian_power_bounds",
    "laplace",
    "eps_delta",
    "identity",
    "piecewise_linear",
    "secant_lower_bound",
    "chord_symmetrisation",
    "SAMPLED_GAP",
    "lower_convex_envelope",
    "symmetrise",
    "fixed_point",
    "subsample",
    "gaussian_composition",
    "check_valid",
    "is_valid",
    "default_grid",
]


def default_grid(points: int = 2001) -> np.ndarray:
    """Levels in [0, 1] for sampling curves, dense near 0 and 1.

    Parameters
    ----------
    points : int, default 2001
        About the number of levels: 0, 1 and ``points // 2`` log-spaced levels from 1e-12 to 1/2 with
        their mirror images ``1 - alpha``.

    Returns
    -------
    numpy.ndarray
        Sorted distinct levels from 0 to 1.

    Examples
    --------
    >>> grid = default_grid(11)
    >>> float(grid[0]), float(grid[1]), float(grid[-1])
    (0.0, 1e-12, 1.0)
    """
    tail = np.logspace(-12, np.log10(0.5), points // 2)
    return np.unique(np.concatenate([[0.0], tail, 1.0 - tail, [1.0]]))


def _bisect_inverse(f: Callable[[np.ndarray], np.ndarray], beta: np.ndarray, power=None) -> np.ndarray:
    """Generalised inverse ``inf{alpha : f(alpha) <= beta}`` of a non-increasing f, rounded down to a double.

    Vectorised bisection over the bit patterns of the doubles in [0, 1] (at most 62 halvings): it ends on two
    neighbouring doubles ``lo < hi`` with ``f(lo) > beta >= f(hi)`` and returns ``lo``, so the inverse is
    accurate to one unit in the last place of the curve's own evaluation and never above the inverse of that
    evaluation (a lower bound on the curve ``T(Q, P)``, the safe side).  Where ``beta > 1/2`` the test is
    ``power(alpha) >= 1 - beta`` (``1 - beta`` is exact there): the values of f near 1 are 1.1e-16 apart, and an
    inverse of 1.8e-14 read through them was 4e-4 too high."""
    beta = np.asarray(beta, dtype=float)
    high = beta > 0.5 if power is not None else np.zeros(beta.shape, dtype=bool)
    rest = 1.0 - beta  # exact where beta > 1/2

    def reached(alpha):  # f(alpha) <= beta
        out = f(alpha) <= beta
        if np.any(high):
            out = np.where(high, power(alpha) >= rest, out)
        return out

    lo, _ = bisect_doubles(reached, np.ones(beta.shape))
    return np.where(reached(np.zeros_like(beta)), 0.0, lo)


class TradeOffCurve:
    """A trade-off curve ``f = T(P, Q)`` on [0, 1], vectorised over the level.

    Parameters
    ----------
    f : callable
        Vectorised type-II error ``f(alpha)``.
    inverse : callable, optional
        Vectorised ``f^{-1}`` (the curve T(Q, P)).  Defaults to ``f`` if ``symmetric`` and to a
        bisection inverse otherwise.
    power : callable, optional
        Vectorised ``1 - f(alpha)`` computed without cancellation; defaults to ``1 - f``.
    symmetric : bool
        Whether ``f == f^{-1}``.
    name : str
        Label used in figures and messages.
    """

    def __init__(self, f, inverse=None, power=None, *, symmetric=False, name="trade-off curve"):
        self._f = f
        self._power = power
        self.symmetric = bool(symmetric)
        self.name = name
        if inverse is None and symmetric:
            inverse = f
        self._inverse = inverse

    def __repr__(self) -> str:
        return f"TradeOffCurve({self.name})"

    def _probabilities(self, what: str, levels: np.ndarray, values):
        """A curve never returns NaN or inf: that is an error naming the level (range checks: :func:`check_valid`)."""
        out = np.asarray(values, dtype=float)
        bad = ~np.isfinite(out)
        if np.any(bad):
            i = np.flatnonzero(bad.ravel())[0]
            lv = np.broadcast_to(levels, out.shape).ravel()[i]
            raise ValueError(
                f"{self.name}: {what} at {float(lv)!r} is {float(out.ravel()[i])!r} "
                "(the curve cannot be evaluated there in double precision)"
            )
        return values

    def __call__(self, alpha):
        """Type-II error ``f(alpha)`` for levels ``alpha`` in [0, 1]."""
        a = check_array_in("alpha", alpha, 0.0, 1.0)
        return self._probabilities("f(alpha)", a, self._f(a))

    def power(self, alpha):
        """Power ``1 - f(alpha)`` of the most powerful level-``alpha`` test (accurate near 0)."""
        a = check_array_in("alpha", alpha, 0.0, 1.0)
        out = self._power(a) if self._power is not None else 1.0 - self._f(a)
        return self._probabilities("1 - f(alpha)", a, out)

    def inverse(self, beta):
        """The inverse curve ``f^{-1}(beta) = T(Q, P)(beta)``."""
        b = check_array_in("beta", beta, 0.0, 1.0)
        if self._inverse is not None:
            return self._probabilities("f^-1(beta)", b, self._inverse(b))
        return _bisect_inverse(self._f, np.atleast_1d(b), self._power).reshape(b.shape)

    def swapped(self) -> "TradeOffCurve":
        """The curve of the swapped hypotheses, T(Q, P), as a curve object."""
        if self.symmetric:
            return self
        return TradeOffCurve(self.inverse, self.__call__, name=f"inverse of {self.name}")


def gaussian(mu: float) -> TradeOffCurve:
    """Gaussian trade-off ``f_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu)`` = T(N(0,1), N(mu,1)).

    ``mu = Delta_2 / sigma`` is the effect size (ReRo paper Cor. 2; Dong, Roth, Su 2022).
    The curve is symmetric.

    Parameters
    ----------
    mu : float
        >= 0; mu = 0 is the identity ``1 - alpha``.

    Returns
    -------
    TradeOffCurve

    References
    ----------
    Dong, Roth, Su (2022) Def. 2.7; GDP paper eq. 4.

    Examples
    --------
    >>> f = gaussian(1.0)
    >>> round(float(f(0.05)), 6)  # a test at level 5 % misses N(1, 1) with probability 0.74
    0.740489
    """
    mu = check_nonnegative("mu", mu)
    return TradeOffCurve(
        lambda a: norm.cdf(norm.isf(a) - mu),
        power=lambda a: norm.sf(norm.isf(a) - mu),
        symmetric=True,
        name=f"Gaussian mu={mu:g}",
    )


_U = 2.0**-53  # unit round-off of float64


def gaussian_power_bounds(mu: float, alpha) -> tuple[np.ndarray, np.ndarray]:
    """Certified lower and upper ends of the power ``1 - f_mu(alpha) = Phi(Phi^{-1}(alpha) + mu)`` in float64.

    The computed power moved down and up by a bound on its rounding: ``ndtr`` to ``(16 + 8 w^2) u`` relative at
    ``w``, ``ndtri`` to ``4 u`` relative, and ``Phi``'s relative slope at most ``|w| + 1`` (u the unit round-off,
    ``z = Phi^{-1}(alpha)``, ``w = z + mu``).  At ``alpha = 1e-300`` the error is 1e-13 relative, enough to
    print an upper bound below the truth.  Used by every closed form of a Gaussian mechanism's TPR and ReRo.

    Parameters
    ----------
    mu : float
        >= 0.
    alpha : array_like
        Levels in [0, 1].

    Returns
    -------
    (lower, upper) : tuple of numpy.ndarray
        ``lower <= 1 - f_mu(alpha) <= upper``, both in [0, 1].

    Examples
    --------
    >>> low, up = gaussian_power_bounds(1.0, [0.1])  # exact 0.38914369164536096903...
    >>> bool(low[0] < 0.389143691645360969 < up[0]) and float(up[0] - low[0]) < 1e-14
    True
    """
    mu = check_nonnegative("mu", mu)
    alpha = check_array_in("alpha", np.atleast_1d(np.asarray(alpha, dtype=float)), 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        z = norm.ppf(alpha)
        zf = np.where(np.isfinite(z), z, 0.0)
        w = zf + mu
        # error of the argument w: ndtri's 4 u relative on z, and the rounding of z + mu
        dw = 4.0 * _U * np.abs(zf) + 2.0 * _U * (np.abs(w) + mu)
        # below w = -37 the power is under 1e-300 and ndtr underflows early (0 at 1e-311): there
        # Phi(w) = exp(log Phi(w)), log_ndtr accurate to 8 u relative (erfcx), its slope |w| + 1 (Mills' ratio)
        tiny = w < -37.0
        log_power = log_ndtr(np.where(tiny, w, -40.0))
        log_err = 8.0 * _U * np.abs(log_power) + (np.abs(w) + 1.0) * dw
        power = np.asarray(gaussian(mu).power(alpha), dtype=float)
        # ndtr's own error (16 + 8 w^2) u relative for w < 0, 16 u above; Phi's relative slope |w| + 1 below 0 and
        # 2 phi(w) <= 0.8 above (it vanishes for large w, where the power rounds to 1 whatever w's error)
        slope = np.where(w < 0.0, np.abs(w) + 1.0, np.where(w < 40.0, 2.0 * norm.pdf(np.minimum(w, 40.0)), 0.0))
        rel = np.where(w < 0.0, 16.0 + 8.0 * w * w, 16.0) * _U + slope * np.where(w < 40.0, dw, 0.0)
        lower = np.where(tiny, np.exp(log_power - log_err) * (1.0 - 4.0 * _U), power * (1.0 - rel))
        upper = np.where(tiny, np.exp(log_power + log_err) * (1.0 + 4.0 * _U), power * (1.0 + rel))
    # exp and the products round to 1 ulp, which in the subnormal range is an absolute 5e-324: one more step each
    # way; the power at alpha = 0 is exactly 0 and at alpha = 1 exactly 1
    lower = np.where(tiny, np.nextafter(lower, 0.0), lower)
    upper = np.where(tiny, np.nextafter(upper, 1.0), upper)
    lower = np.where(alpha == 0.0, 0.0, np.where(alpha == 1.0, 1.0, np.clip(lower, 0.0, 1.0)))
    upper = np.where(alpha == 0.0, 0.0, np.where(alpha == 1.0, 1.0, np.clip(upper, 0.0, 1.0)))
    return lower, upper


def laplace(mu: float) -> TradeOffCurve:
    """Laplace trade-off curve ``T(Lap(0, b), Lap(Delta_1, b))``, symmetric.

    ``1 - alpha e^mu`` for ``alpha < e^-mu / 2``, ``e^-mu / (4 alpha)`` up to ``alpha = 1/2`` and
    ``(1 - alpha) e^-mu`` above.

    Parameters
    ----------
    mu : float
        The effect size ``Delta_1 / b`` (>= 0; the curve is mu-DP with epsilon = mu).

    Returns
    -------
    TradeOffCurve

    References
    ----------
    ReRo paper (Kaissis et al. 2023a) eq. 1; Dong, Roth, Su (2022) Prop. 2.14.

    Examples
    --------
    >>> round(float(laplace(1.0)(0.3)), 6)  # e^-1 / (4 * 0.3), the middle piece
    0.306566
    """
    mu = check_nonnegative("mu", mu)
    corner = 0.5 * np.exp(-mu)  # 0 for mu > 745: then only alpha = 0 lies below it
    scale = np.exp(min(mu, 700.0))  # only used below the corner, where alpha e^mu <= 1/2

    def below_corner(a):  # alpha e^mu; past e^700 in logs (e^mu overflows at 710, while alpha e^mu <= 1/2 here)
        if mu <= 700.0:
            return a * scale
        with np.errstate(divide="ignore", under="ignore", over="ignore"):  # evaluated everywhere, kept below the corner
            return np.exp(np.log(np.where(a > 0.0, a, 0.0)) + mu)

    def f(a):
        a = np.asarray(a, dtype=float)
        with np.errstate(divide="ignore", under="ignore"):
            middle = np.exp(-mu - np.log(4.0) - np.log(np.where(a > 0.0, a, 1.0)))
        out = np.where(a < corner, 1.0 - below_corner(a), np.where(a <= 0.5, middle, (1.0 - a) * np.exp(-mu)))
        return np.where(a == 0.0, 1.0, out)

    def power(a):
        a = np.asarray(a, dtype=float)
        return np.where(a < corner, below_corner(a), 1.0 - f(a))

    return TradeOffCurve(f, power=power, symmetric=True, name=f"Laplace mu={mu:g}")


def identity() -> TradeOffCurve:
    """The curve ``1 - alpha`` of indistinguishable distributions (perfect privacy).

    Returns
    -------
    TradeOffCurve
        Symmetric; no test does better than guessing.

    Examples
    --------
    >>> float(identity()(0.3))
    0.7
    """
    return TradeOffCurve(lambda a: 1.0 - a, power=lambda a: np.asarray(a, dtype=float), symmetric=True, name="1 - alpha")


class PiecewiseLinear(TradeOffCurve):
    """Linear interpolation of a curve's breakpoints ``(alphas[i], betas[i])``.

    The inverse is exact: the breakpoints with their coordinates swapped.

    Parameters
    ----------
    alphas : array_like
        Levels, strictly increasing from 0 to 1.
    betas : array_like
        Type-II errors at ``alphas``, non-increasing, in [0, 1].
    name : str, default "piecewise linear"
        Label used in figures and messages.
    powers : array_like, optional
        The breakpoints' ``1 - beta`` computed without cancellation (for example as a cumulative
        mass of H1), where ``beta`` rounds to 1; by default ``1 - betas``.  ``.power`` interpolates
        them, so the power at a tiny level keeps its digits (``1 - f(alpha)`` would round to 0).

    Attributes
    ----------
    alphas, betas, powers : numpy.ndarray
        The validated breakpoints and their powers.
    """

    def __init__(self, alphas, betas, name="piecewise linear", powers=None):
        alphas = check_array_in("alphas", alphas, 0.0, 1.0)
        betas = check_array_in("betas", betas, 0.0, 1.0)
        if alphas.ndim != 1 or alphas.shape != betas.shape or alphas.size < 2:
            raise ValueError("alphas and betas must be 1-d arrays of the same length >= 2")
        if alphas[0] != 0.0 or alphas[-1] != 1.0:
            raise ValueError(f"alphas must start at 0 and end at 1, got [{alphas[0]!r}, ..., {alphas[-1]!r}]")
        if np.any(np.diff(alphas) <= 0):
            raise ValueError("alphas must be strictly increasing")
        if np.any(np.diff(betas) > 0):
            raise ValueError("betas must be non-increasing")
        self.alphas, self.betas = alphas, betas
        if powers is None:  # 1 - beta is exact for beta >= 1/2 (Sterbenz): interpolating it keeps tiny powers
            powers = 1.0 - betas
        else:
            powers = check_array_in("powers", powers, 0.0, 1.0)
            if powers.shape != betas.shape or np.any(np.abs(powers - (1.0 - betas)) > 1e-12):
                raise ValueError("powers must have the shape of betas and equal 1 - betas up to rounding")
        self.powers = powers
        # inverse: for each distinct beta the smallest alpha reaching it (generalised inverse); the betas
        # are non-increasing, so that alpha is the first of each run of equal betas
        first = np.flatnonzero(np.r_[True, betas[1:] != betas[:-1]])[::-1]
        self._inv_b, self._inv_a = betas[first], alphas[first]
        super().__init__(self._eval, self._eval_inverse, lambda a: np.interp(a, self.alphas, self.powers), name=name)

    def _eval(self, a):
        return np.interp(a, self.alphas, self.betas)

    def slopes(self) -> np.ndarray:
        """The slopes of the segments, ``diff(betas) / diff(alphas)``, the steps near (0, 1) from the powers
        (where the betas round to 1, ``diff(betas)`` would be 0)."""
        return _rises(self.betas, self.powers) / np.diff(self.alphas)

    def swapped(self) -> "PiecewiseLinear":
        """The inverse curve ``T(Q, P)`` as breakpoints: each distinct beta with the smallest alpha reaching it."""
        a, b = self._inv_b, self._inv_a
        if a[0] > 0.0:  # f stays above its last beta: f^{-1} is 1 below it
            a, b = np.concatenate([[0.0], a]), np.concatenate([[1.0], b])
        if a[-1] < 1.0:  # f(0) < 1: f^{-1} is 0 above f(0)
            a, b = np.append(a, 1.0), np.append(b, 0.0)
        return PiecewiseLinear(a, b, name=f"inverse of {self.name}")

    def _eval_inverse(self, b):
        return np.where(b >= self.betas[0], 0.0, np.interp(b, self._inv_b, self._inv_a))


def eps_delta(epsilon: float, delta: float, name: str | None = None) -> PiecewiseLinear:
    """(eps, delta)-DP curve ``max{0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha)}`` (GDP paper eq. 2).

    The curve is piecewise linear: a :class:`PiecewiseLinear` with the breakpoints ``(0, 1 - delta)``,
    ``(c, c)`` with ``c = (1 - delta) / (1 + e^eps)``, ``(1 - delta, 0)`` and ``(1, 0)``, so that the exact
    breakpoint algorithms (:func:`fdp.curves.gdp.delta_divergence`, :func:`fdp.curves.gdp.mu_star`) apply, and with the
    breakpoints' powers ``1 - beta`` computed without cancellation (``.power(alpha) = delta + e^eps alpha``
    below the corner keeps its digits at tiny alpha).  ``delta = 0`` gives the eps-DP curve, which is also
    the curve of randomized response (:func:`fdp.curves.conversions.randomized_response`).  Where ``c`` is below
    the smallest normal double (eps above about 708) the corner is moved up to it and its beta is the
    curve's value there, so every breakpoint stays on the curve.

    Parameters
    ----------
    epsilon : float
        >= 0 (any size).
    delta : float
        In [0, 1].
    name : str, optional
        Label; by default ``"(eps, delta)-DP"``.

    Returns
    -------
    PiecewiseLinear

    References
    ----------
    GDP paper (Gomez et al. 2025) eq. 2; Kairouz, Oh, Viswanath (2015) Thm. 2.1.

    Examples
    --------
    >>> round(float(eps_delta(1.0, 0.0)(0.1)), 6)  # 1 - e * 0.1
    0.728172
    >>> eps_delta(1.0, 0.0).alphas.round(6).tolist()  # the corner 1 / (1 + e)
    [0.0, 0.268941, 1.0]
    """
    epsilon = check_nonnegative("epsilon", epsilon)
    delta = check_probability("delta", delta)
    name = name or f"({epsilon:g}, {delta:g})-DP"
    if delta == 1.0:
        return PiecewiseLinear([0.0, 1.0], [0.0, 0.0], name=name, powers=[1.0, 1.0])
    with np.errstate(over="ignore", under="ignore"):
        corner = (1.0 - delta) / (1.0 + np.exp(epsilon))
        if corner >= np.finfo(float).tiny:
            beta, power = corner, 1.0 - corner
        else:  # the curve at the smallest normal level: e^-eps (1 - delta - alpha) there
            corner = np.finfo(float).tiny
            beta = np.exp(-epsilon) * (1.0 - delta - corner)
            power = 1.0 - beta
    alphas, betas, powers = [0.0, corner, 1.0 - delta, 1.0], [1.0 - delta, beta, 0.0, 0.0], [delta, power, 1.0, 1.0]
    if 1.0 - delta == 1.0:  # delta = 0, or below the resolution of doubles near 1
        alphas, betas, powers = [0.0, corner, 1.0], [1.0, beta, 0.0], [delta, power, 1.0]
    return PiecewiseLinear(alphas, betas, name=name, powers=powers)


def piecewise_linear(alphas, betas, name: str = "piecewise linear", powers=None) -> PiecewiseLinear:
    """A trade-off curve from breakpoints, linearly interpolated (see :class:`PiecewiseLinear`).

    Parameters
    ----------
    alphas, betas : array_like
        The breakpoints: alphas strictly increasing from 0 to 1, betas non-increasing, in [0, 1].
    name : str, default "piecewise linear"
        Label used in figures and messages.
    powers : array_like, optional
        ``1 - betas`` computed without cancellation.

    Returns
    -------
    PiecewiseLinear

    Examples
    --------
    >>> float(piecewise_linear([0.0, 0.5, 1.0], [1.0, 0.2, 0.0])(0.25))
    0.6
    """
    return PiecewiseLinear(alphas, betas, name=name, powers=powers)


def lower_convex_envelope(alphas, betas) -> tuple[np.ndarray, np.ndarray]:
    """Vertices of the lower convex envelope (greatest convex minorant) of points ``(alphas, betas)``.

    Points sharing an alpha keep the smallest beta.  The slopes of the greatest convex minorant of
    a polyline are the isotonic (non-decreasing) regression of the polyline's slopes weighted by
    the alpha steps (the cumulative-sum diagram; Barlow et al. 1972, Thm. 1.1), computed in one
    pass by scipy's pool-adjacent-violators; the vertices are the points where the pooled slope
    changes.

    Parameters
    ----------
    alphas, betas : array_like
        1-d, finite, of the same length.

    Returns
    -------
    (alphas, betas) : tuple of numpy.ndarray
        The vertices in order of alpha.

    References
    ----------
    Barlow, Bartholomew, Bremner, Brunk (1972), *Statistical inference under order restrictions*, Ch. 1.

    Examples
    --------
    >>> a, b = lower_convex_envelope([0.0, 0.5, 1.0], [1.0, 0.6, 0.0])  # (0.5, 0.6) lies above the chord
    >>> a.tolist(), b.tolist()
    ([0.0, 1.0], [1.0, 0.0])
    """
    a, b, _ = _envelope(alphas, betas)
    return a, b


def _rises(betas: np.ndarray, powers: np.ndarray) -> np.ndarray:
    """``np.diff(betas)`` without cancellation: near (0, 1) the betas round to 1 and their differences to 0,
    so the steps between two powers below 1/2 are taken from the powers."""
    return np.where((powers[:-1] < 0.5) & (powers[1:] < 0.5), powers[:-1] - powers[1:], np.diff(betas))


def _envelope(alphas, betas, powers=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`lower_convex_envelope` with the vertices' powers carried along (default ``1 - betas``)."""
    a = np.asarray(alphas, dtype=float)
    b = np.asarray(betas, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError("alphas and betas must be 1-d arrays of the same non-zero length")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("alphas and betas must be finite (no NaN or inf)")
    p = 1.0 - b if powers is None else np.asarray(powers, dtype=float)
    if not np.all(a[1:] > a[:-1]):  # sort (unless already strictly increasing)
        order = np.lexsort((-p, b, a))
        a, b, p = a[order], b[order], p[order]
        first = np.concatenate(([True], a[1:] != a[:-1]))  # same alpha: the first (smallest beta) is kept
        a, b, p = a[first], b[first], p[first]
    if a.size < 3:
        return a, b, p
    steps = np.diff(a)
    fit = isotonic_regression(_rises(b, p) / steps, weights=steps, increasing=True)
    starts = np.asarray(fit.blocks)  # point indices where a pooled slope starts, and the last point
    slopes = fit.x[starts[:-1]]
    # a vertex is where the pooled slope changes (collinear points are not vertices)
    vertex = np.concatenate(([True], slopes[1:] != slopes[:-1], [True]))
    idx = starts[vertex]
    a, b, p = a[idx], b[idx], p[idx]
    if b[-1] <= b.min():
        # the rightmost point is the lowest, so the envelope is non-increasing; the pooled slopes' rounding
        # (sums of products spanning 1e-171 to 1) can leave a vertex a hair above its left neighbour
        b = np.minimum.accumulate(b)
        p = np.maximum.accumulate(p)
    return a, b, p


def fixed_point(curve: PiecewiseLinear) -> float:
    """The level where a piecewise-linear curve crosses the diagonal, ``f(alpha) = alpha``.

    Parameters
    ----------
    curve : PiecewiseLinear

    Returns
    -------
    float

    Examples
    --------
    >>> fixed_point(piecewise_linear([0.0, 0.2, 1.0], [1.0, 0.2, 0.0]))
    0.2
    """
    a, b = curve.alphas, curve.betas
    j = int(np.argmax(b <= a))
    if j == 0:
        return 0.0
    d0, d1 = b[j - 1] - a[j - 1], b[j] - a[j]  # > 0, then <= 0
    return float(a[j - 1] + d0 / (d0 - d1) * (a[j] - a[j - 1]))


def symmetrise(curve: TradeOffCurve, grid=None, other: PiecewiseLinear | None = None) -> PiecewiseLinear:
    """Symmetrisation C(f, f^{-1}): the lower convex envelope of ``min(f, f^{-1})``.

    This is the tightest symmetric trade-off curve implied by both directions of a mechanism
    (Dong, Roth, Su 2022, Def. F.1: ``f`` up to the point where its slope is -1, a segment of
    slope -1, then ``f^{-1}``).  For a :class:`PiecewiseLinear` curve the result is exact: the
    minimum is symmetric (its inverse is itself), so its half up to the fixed point, evaluated at the
    breakpoints of ``f`` and ``f^{-1}`` there, and that half's mirror image span the envelope.
    Otherwise both curves are sampled on ``grid`` (default :func:`default_grid`), each is replaced by the
    piecewise-linear curve below it that :func:`secant_lower_bound` draws from its samples, and those two are
    symmetrised exactly: the result lies on or below the exact C (a chord through the samples would lie above
    it, on the unsafe side), and as close to it as the chords are above it.

    ``other`` replaces ``f^{-1}`` by a separately computed curve of the other direction ``T(Q, P)``:
    the result is then the envelope of ``min(f, other)`` on the half up to its fixed point and of its
    mirror image, a lower bound on the exact ``C`` when ``f`` and ``other`` are lower bounds of the
    two directions (:func:`fdp.accounting.pld.certified_lower_curve`).

    Parameters
    ----------
    curve : TradeOffCurve
        ``f = T(P, Q)`` of one direction.
    grid : array_like, optional
        Levels at which a curve that is not piecewise linear is sampled.
    other : PiecewiseLinear, optional
        A curve of the other direction (default: ``f^{-1}``); piecewise-linear ``curve`` only.

    Returns
    -------
    PiecewiseLinear
        The symmetric curve ``C(f, f^{-1})`` (exact for piecewise-linear input, else on or below it).

    References
    ----------
    Dong, Roth, Su (2022) Def. F.1 and Prop. F.2.

    Examples
    --------
    >>> f = subsample(gaussian(1.0), sampling_rate=0.5)  # not symmetric: f(0.1) = 0.7554, f^{-1}(0.1) = 0.8262
    >>> round(float(symmetrise(f)(0.1)), 4)
    0.7554
    """
    if grid is None and isinstance(curve, PiecewiseLinear):
        g = curve.swapped() if other is None else check_piecewise("other", other)
        star = min(fixed_point(curve), fixed_point(g))
        # the envelope's vertices up to the fixed point are breakpoints of f where f is the smaller, or of
        # g where g is (between them the minimum is concave: crossings and the other curve's breakpoints
        # lie above the envelope); for two curves also the fixed point, which both pass through or above
        fa, ga = curve.alphas[curve.alphas <= star], g.alphas[g.alphas <= star]
        fb, gb = curve.betas[: fa.size], g.betas[: ga.size]
        fp, gp = curve.powers[: fa.size], g.powers[: ga.size]  # 1 - beta without cancellation near (0, 1)
        f_low, g_low = fb <= g._eval(fa), gb <= curve._eval(ga)
        point = [] if other is None else [star]
        half_a = np.concatenate([fa[f_low], ga[g_low], point])
        half_b = np.concatenate([fb[f_low], gb[g_low], np.minimum(curve._eval(point), g._eval(point))])
        half_p = np.concatenate([fp[f_low], gp[g_low], np.maximum(np.interp(point, curve.alphas, curve.powers),
                                                                np.interp(point, g.alphas, g.powers))])
        # and their mirror images (alpha <-> beta), with both ends (duplicates are merged by the envelope)
        start = min(curve.betas[0], g.betas[0])
        start_power = max(curve.powers[0], g.powers[0])
        alphas = np.concatenate([[0.0], half_a, half_b, [start, 1.0]])
        betas = np.concatenate([[start], half_b, half_a, [0.0, 0.0]])
        powers = np.concatenate([[start_power], half_p, 1.0 - half_a, [1.0, 1.0]])
        a, b, p = _envelope(alphas, betas, powers)
        return PiecewiseLinear(a, b, name=f"C({curve.name})", powers=p)
    if other is not None:
        raise ValueError("other applies to a piecewise-linear curve without a grid")
    grid = default_grid() if grid is None else grid
    grid = np.union1d(check_array_in("grid", grid, 0.0, 1.0), [0.0, 1.0])
    below, mirror = _sampled_lower_bounds(curve, grid)
    if curve.symmetric:
        return symmetrise(PiecewiseLinear(*below, name=curve.name))
    return symmetrise(PiecewiseLinear(*below, name=curve.name), other=PiecewiseLinear(*mirror))


def chord_symmetrisation(curve: TradeOffCurve, grid) -> PiecewiseLinear:
    """The lower convex envelope of ``min(f, f^{-1})`` sampled on ``grid``: on or above the exact C(f, f^{-1}).

    Its vertices lie on the exact symmetrised curve and its chords above it, so it is the upper end that a check of
    "C is at most a target" needs (:func:`fdp.calibrate.sandwich_noise`); :func:`symmetrise` gives the lower one.

    Parameters
    ----------
    curve : TradeOffCurve
    grid : array_like
        Levels in [0, 1] (0 and 1 are added).

    Returns
    -------
    PiecewiseLinear

    Examples
    --------
    >>> f = subsample(gaussian(1.0), sampling_rate=0.5)
    >>> bool(chord_symmetrisation(f, default_grid())(0.3) >= symmetrise(f)(0.3))
    True
    """
    levels = np.union1d(check_array_in("grid", grid, 0.0, 1.0), [0.0, 1.0])
    a, b = lower_convex_envelope(levels, np.minimum(curve(levels), curve.inverse(levels)))
    return PiecewiseLinear(a, b, name=f"C({curve.name}), chords")


#: How far (in beta) the sampled lower bound of :func:`symmetrise` may lie below the chords through the samples
#: before an interval is split (at most ``_REFINEMENTS`` times, into four).
SAMPLED_GAP = 1e-7
_REFINEMENTS = 4
# Levels in (0, 1e-300) are not sampled: a chord over [0, 5e-324] has a slope beyond the doubles; the bound there is
# interpolated between its neighbours, on the safe side.
_TINY_LEVEL = 1e-300


def _sampled_lower_bounds(curve: TradeOffCurve, grid: np.ndarray):
    """The breakpoints of :func:`secant_lower_bound` for ``f`` and for ``f^{-1}`` from one set of samples of ``f``.

    The points ``(f(a), a)`` lie on the graph of ``f^{-1}``, so no inverse is evaluated.  Intervals of ``grid``
    where either bound lies more than :data:`SAMPLED_GAP` below its chords are split into four (up to four rounds),
    so the bounds are as close as that to the curve wherever the rounds suffice.  Levels ``10^-13 .. 10^-300`` are added
    below the grid's smallest positive level (a curve whose slope at 0 is infinite drops
    there: 0.3 of its height below 1e-12 for the subsampled f_10), and an interval spanning more than a factor 2 is
    split at its geometric mean.  Each sample is moved down past the curve's rounding (8 ulps, and two floats for
    subnormal values) before it is used: a value near 1 carries an absolute error of 1e-16, which, mirrored, is an
    error in the level of ``f^{-1}`` and put its small values up to 1e-6 (relative) above the exact ones."""
    grid = np.asarray(grid, dtype=float)
    grid = grid[(grid == 0.0) | (grid >= _TINY_LEVEL)]
    deep = 10.0 ** -np.arange(300.0, 12.0, -1.0)
    levels = np.union1d(grid, deep[deep < grid[grid > 0.0].min()])
    values = _moved_down(curve, levels, curve(levels))
    for round_ in range(_REFINEMENTS + 1):
        below = _secant_vertices(levels, values)
        # f^{-1} from the mirrored samples: for each distinct beta the smallest level reaching it
        order = np.lexsort((levels, values))
        keep = np.r_[True, np.diff(values[order]) > 0]
        index = order[keep]
        m_a, m_b = values[index], levels[index]
        if m_a[0] > 0.0 or m_a[-1] < 1.0:  # f(1) > 0 cannot happen for a trade-off curve; f(0) < 1 can
            if m_a[0] > 0.0:
                raise ValueError(f"{curve.name}: f(1) = {m_a[0]!r} is not 0, so it is not a trade-off curve")
            m_a, m_b, index = np.append(m_a, 1.0), np.append(m_b, 0.0), np.append(index, 0)
        usable = (m_a == 0.0) | (m_a >= _TINY_LEVEL)
        m_a, m_b, index = m_a[usable], m_b[usable], index[usable]
        mirror = _secant_vertices(m_a, m_b)
        if round_ == _REFINEMENTS:
            break
        gap = below[2].copy()
        # a mirrored interval between the samples index[k] > index[k + 1] covers the levels' intervals between them
        np.maximum.at(gap, np.minimum(index[:-1], index[1:]), mirror[2])
        split = gap > SAMPLED_GAP
        if not np.any(split):
            break
        start, end = levels[:-1][split], levels[1:][split]
        wide = (start > 0.0) & (end > 2.0 * start)  # near 0: the geometric mean, then quarters in log scale
        quarters = np.array([0.25, 0.5, 0.75])
        with np.errstate(divide="ignore"):
            logs = np.log(np.where(wide, start, 1.0))[:, None] + np.log(np.where(wide, end / start, 1.0))[:, None] * quarters
        new = np.where(wide[:, None], np.exp(logs), start[:, None] + (end - start)[:, None] * quarters).ravel()
        new = np.setdiff1d(new[(new > 0.0) & (new < 1.0)], levels)
        if new.size == 0:
            break
        levels = np.concatenate([levels, new])
        order = np.argsort(levels)
        levels, values = levels[order], np.concatenate([values, _moved_down(curve, new, curve(new))])[order]
    return _envelope_of(below), _envelope_of(mirror)


def _moved_down(curve: TradeOffCurve, levels, values) -> np.ndarray:
    """A curve's values moved down past its rounding, f(0) kept (a curve's 1 there is exact): below 1/2 by 8 ulps and
    two floats; above it from the power, ``1 - power (1 + 8 u) - 4 u`` (a value near 1 is known to its absolute
    rounding, 1.1e-16, which is 0.6 % of f^{-1} at 1 - 1.8e-14; 8 ulps of the value would cost 5 %).  Within a few
    ulps of 1 the samples are that coarse, and the bound can exceed the exact curve by about 2 ulps of the level
    (1.8e-16 at 1 - 7e-13, found with an mpmath oracle)."""
    values = np.asarray(values, dtype=float)
    levels = np.asarray(levels, dtype=float)
    down = np.nextafter(np.nextafter(values * (1.0 - 8.0 * _U), 0.0), 0.0)
    high = values > 0.5
    if np.any(high):
        power = np.asarray(curve.power(levels[high]), dtype=float)
        down[high] = 1.0 - power * (1.0 + 8.0 * _U) - 4.0 * _U  # 4 u: the rounding, and the chords' noise there
    return np.where(levels == 0.0, values, down)


def secant_lower_bound(alphas, betas) -> tuple[np.ndarray, np.ndarray]:
    """Vertices of a convex piecewise-linear curve below a convex non-increasing f, from its values at sorted levels.

    Between two levels a chord lies above a convex f; the neighbouring chords, extended, lie below it.  On
    ``[a_i, a_{i+1}]`` the bound is the larger of the chords of ``[a_{i-1}, a_i]`` and ``[a_{i+1}, a_{i+2}]``,
    which meet at ``a_i + h_i (m_{i+1} - m_i) / (m_{i+1} - m_{i-1})`` (``m`` the chords' slopes, ``h_i`` the
    interval); on the first interval only the right neighbour serves, on the last the left one and ``f >= f(1)``.
    The vertices' lower convex envelope is returned: a trade-off curve on or below f everywhere, and as close to
    it as the chords are above it (second order in the spacing).

    Parameters
    ----------
    alphas : array_like
        Strictly increasing levels from 0 to 1 (at least 3).
    betas : array_like
        ``f(alphas)``.

    Returns
    -------
    alphas, betas : numpy.ndarray
        The bound's breakpoints.

    Examples
    --------
    >>> a = np.linspace(0.0, 1.0, 5)
    >>> _, b = secant_lower_bound(a, (1.0 - a) ** 2)  # below the convex (1 - alpha)^2 everywhere
    >>> bool(np.all(b <= (1.0 - _) ** 2 + 1e-15))
    True
    """
    a = check_array_in("alphas", alphas, 0.0, 1.0)
    v = check_array_in("betas", betas, 0.0, 1.0)
    if a.ndim != 1 or a.shape != v.shape or a.size < 3 or a[0] != 0.0 or a[-1] != 1.0 or np.any(np.diff(a) <= 0):
        raise ValueError("alphas must be at least 3 strictly increasing levels from 0 to 1, with betas of one shape")
    return _envelope_of(_secant_vertices(a, v))


def _secant_vertices(a: np.ndarray, v: np.ndarray):
    """The vertices of :func:`secant_lower_bound` before the envelope, and each interval's gap (its chord's height
    above the bound where the neighbouring chords cross)."""
    if a.size < 3:  # one interval, no neighbour: f >= f(1) is all the samples say
        return np.array([0.0, 1.0]), np.array([v[-1], v[-1]]), np.zeros(1)
    h = np.diff(a)
    m = np.diff(v) / h  # the chords' slopes, non-decreasing for a convex f
    # A chord extended to the right is below f if its slope is at most f's slopes there, to the left if at least; a
    # sample rounded to 1 (f(5e-324) at mu = 10) can break the slopes' order, and a neighbour's chord is then replaced
    # by this interval's own, as the rounded samples allow (f linear there)
    left, mid, right = np.minimum(m[:-2], m[1:-1]), m[1:-1], np.maximum(m[2:], m[1:-1])
    spread = right - left
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(spread > 0, (right - mid) / spread, 0.0) * h[1:-1]  # in [0, h] as right >= mid >= left
    x = a[1:-2] + t
    # both chords at their crossing (equal in exact arithmetic): the smaller keeps rounding on the safe side
    y = np.minimum(v[1:-2] + left * t, v[2:-1] + right * (t - h[1:-1]))
    # the first interval: the right neighbour's chord at 0; the last: the left neighbour's chord down to f(1)
    first = min(v[0], v[1] - max(m[1], m[0]) * h[0])
    down = min(m[-2], m[-1])
    reach = h[-1] if down >= 0 else min(h[-1], (v[-1] - v[-2]) / down)
    xs = np.concatenate([[0.0], a[1:-1], x, [a[-2] + reach, 1.0]])
    ys = np.concatenate([[first], v[1:-1], y, [v[-1], v[-1]]])
    gap = np.concatenate([[v[0] - first], v[1:-2] + mid * t - y, [v[-2] + m[-1] * reach - v[-1]]])
    return np.clip(xs, 0.0, 1.0), np.clip(ys, 0.0, 1.0), gap


def _envelope_of(vertices) -> tuple[np.ndarray, np.ndarray]:
    out_a, out_b = lower_convex_envelope(vertices[0], vertices[1])
    return out_a, np.minimum.accumulate(out_b)


def subsample(curve: TradeOffCurve, sampling_rate: float) -> TradeOffCurve:
    """Poisson subsampling in the add direction: ``p f(alpha) + (1 - p)(1 - alpha)``.

    If ``curve = T(A, B)`` this is ``T(A, (1 - p) A + p B)``; its inverse ``T((1 - p) A + p B, A)``
    is computed numerically.  Use :func:`symmetrise` for the DP curve of the subsampled mechanism.

    Parameters
    ----------
    curve : TradeOffCurve
        The curve ``f`` of one step without subsampling.
    sampling_rate : float
        The probability p in (0, 1] that the target is in the batch.

    Returns
    -------
    TradeOffCurve

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Lemma 9; Dong, Roth, Su (2022) Thm. 4.2.

    Examples
    --------
    >>> f = subsample(gaussian(1.0), sampling_rate=0.5)
    >>> round(float(f(0.1)), 6)  # p f + (1 - p)(1 - alpha)
    0.755428
    """
    sampling_rate = check_sampling_rate("sampling_rate", sampling_rate)
    return TradeOffCurve(
        lambda a: sampling_rate * curve._f(a) + (1.0 - sampling_rate) * (1.0 - a),
        power=lambda a: sampling_rate * curve.power(a) + (1.0 - sampling_rate) * a,
        name=f"{curve.name}, subsampled p={sampling_rate:g}",
    )


def gaussian_composition(mu, steps: int | None = None) -> TradeOffCurve:
    """Composition of Gaussian curves: ``f_mu`` composed with itself or with others is Gaussian.

    Parameters
    ----------
    mu : float or array_like
        One ``mu`` (with ``steps``) for the homogeneous composition ``f_{sqrt(steps) mu}``, or the
        list ``[mu_a, mu_b, ...]`` of a heterogeneous one, ``f_{sqrt(mu_a^2 + mu_b^2 + ...)}``.
    steps : int, optional
        The number of compositions of one ``mu``.

    Returns
    -------
    TradeOffCurve
        The Gaussian curve of the composition (:func:`gaussian`).

    References
    ----------
    ReRo paper (Kaissis et al. 2023a) Cor. 2; Dong, Roth, Su (2022) Cor. 3.3.

    Examples
    --------
    >>> gaussian_composition(0.5, steps=16).name  # sqrt(16) * 0.5
    'Gaussian mu=2'
    """
    if steps is not None:
        steps = check_positive_int("steps", steps)
        return gaussian(np.sqrt(steps) * check_nonnegative("mu", mu))
    mus = check_array_in("mu", np.atleast_1d(mu), 0.0, np.inf)
    return gaussian(float(np.sqrt(np.sum(mus**2))))


def check_valid(curve: TradeOffCurve, alphas=None, atol: float = 1e-9) -> None:
    """Raise ValueError unless ``curve`` is a trade-off function on a grid of levels.

    Checks: values in [0, 1], non-increasing, convex (slopes non-decreasing) and
    ``f(alpha) <= 1 - alpha``, each up to ``atol``; the message names the first failure.

    Parameters
    ----------
    curve : TradeOffCurve
    alphas : array_like, optional
        The levels checked; by default ``default_grid(401)``.
    atol : float, default 1e-9
        Tolerance of every check.

    Returns
    -------
    None

    References
    ----------
    Dong, Roth, Su (2022) Prop. 2.2 (what makes a function a trade-off function).

    Examples
    --------
    >>> check_valid(piecewise_linear([0.0, 0.5, 1.0], [1.0, 0.6, 0.0]))
    Traceback (most recent call last):
    ...
    ValueError: piecewise linear: f(alpha) > 1 - alpha at alpha=0.5
    """
    a = default_grid(401) if alphas is None else np.unique(check_array_in("alphas", alphas, 0.0, 1.0))
    f = np.asarray(curve._f(a), dtype=float)  # raw values: the checks below name what is wrong
    if not np.all(np.isfinite(f)):
        raise ValueError(f"{curve.name}: non-finite values")
    if np.any(f < -atol) or np.any(f > 1 + atol):
        raise ValueError(f"{curve.name}: values outside [0, 1]")
    if np.any(np.diff(f) > atol):
        i = int(np.argmax(np.diff(f)))
        raise ValueError(f"{curve.name}: increasing between alpha={a[i]:g} and {a[i + 1]:g}")
    if np.any(f > 1 - a + atol):
        i = int(np.argmax(f - (1 - a)))
        raise ValueError(f"{curve.name}: f(alpha) > 1 - alpha at alpha={a[i]:g}")
    # convexity: f at each interior point lies on or below the chord of its neighbours
    chord = f[:-2] + (f[2:] - f[:-2]) * (a[1:-1] - a[:-2]) / (a[2:] - a[:-2])
    if np.any(f[1:-1] > chord + atol):
        i = int(np.argmax(f[1:-1] - chord)) + 1
        raise ValueError(f"{curve.name}: not convex at alpha={a[i]:g}")


def is_valid(curve: TradeOffCurve, alphas=None, atol: float = 1e-9) -> bool:
    """Whether ``curve`` passes :func:`check_valid` (same parameters).

    Parameters
    ----------
    curve : TradeOffCurve
    alphas : array_like, optional
    atol : float, default 1e-9

    Returns
    -------
    bool

    Examples
    --------
    >>> is_valid(gaussian(1.0)), is_valid(piecewise_linear([0.0, 1.0], [0.5, 0.5]))
    (True, False)
    """
    try:
        check_valid(curve, alphas, atol)
    except ValueError:
        return False
    return True


def check_piecewise(name: str, curve, atol: float = 1e-9) -> PiecewiseLinear:
    """``curve`` as a valid :class:`PiecewiseLinear` trade-off curve, or a ValueError naming ``name``.

    Parameters
    ----------
    name : str
        The parameter's name, for the message.
    curve : PiecewiseLinear
        Must be convex, non-increasing and at most ``1 - alpha`` at its breakpoints.
    atol : float, default 1e-9
        Tolerance of :func:`check_valid`.

    Returns
    -------
    PiecewiseLinear
        ``curve`` itself.
    """
    if not isinstance(curve, PiecewiseLinear):
        raise ValueError(
            f"{name} must be a fdp.curves.tradeoff.PiecewiseLinear curve (breakpoints), got {type(curve).__name__}"
        )
    try:
        check_valid(curve, curve.alphas, atol=atol)
    except ValueError as exc:
        raise ValueError(f"{name} is not a valid trade-off curve: {exc}") from None
    return curve
