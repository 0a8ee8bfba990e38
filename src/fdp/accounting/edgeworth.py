"""Edgeworth and CLT approximations of composed subsampled trade-off curves (ReRo paper Sec. 2).

The ReRo paper approximates the trade-off curve of the N-fold composed, Poisson-subsampled
Gaussian (SGM) and Laplace (SLM) mechanisms in two ways: option (2), an Edgeworth series of the
privacy-loss distribution ("fourth order, error O(N^-2)", App. 4.3, after Zheng et al. 2020,
Sec. 3.1), and option (3), the CLT approximation ``f_Gauss(alpha, mu_tilde)`` of Bu et al. (2020).
This module implements both in the **add** direction that ReRo uses (:mod:`fdp.accounting.privacy_loss`):

* H0 = P = M(D) = ``N(0, sigma^2)`` (or ``Lap(0, b)``) per step,
* H1 = Q = M(D with the target) = ``(1 - p) N(0, sigma^2) + p N(1, sigma^2)`` (or the Laplace
  mixture ``(1 - p) Lap(0, b) + p Lap(1, b)``) per step,

with sensitivity 1, so the effect size is ``mu = 1 / scale`` (``mu_2 = Delta_2 / sigma`` or
``mu_1 = Delta_1 / b`` in the paper).  The curve is ``f = T(P^N, Q^N)`` and the ReRo bound is
``gamma = 1 - f(kappa)`` (Theorem 1).  The other direction, T(Q^N, P^N), is ``curve.inverse``;
:func:`fdp.curves.tradeoff.symmetrise` gives the DP curve.

The privacy loss ``L = log(q(X) / p(X))`` of one step and its cumulants ``kappa_1 .. kappa_6``
under either hypothesis come from :mod:`fdp.accounting.privacy_loss`; under N-fold composition cumulants
add, and the Neyman-Pearson test rejects H0 for large values of ``S = L_1 + ... + L_N``.

Edgeworth series (:class:`EdgeworthSeries`)
    For ``Z = (S - N kappa_1) / sqrt(N kappa_2)`` with standardised one-step cumulants
    ``l_r = kappa_r / kappa_2^{r/2}`` the classical Edgeworth expansion of the CDF is

    ``F(z) = Phi(z) - phi(z) [N^{-1/2} q_1(z) + N^{-1} q_2(z) + N^{-3/2} q_3(z) + N^{-2} q_4(z)]``

    with (He_k the probabilists' Hermite polynomials)

    * ``q_1 = l_3/6 He_2``                                               (skewness)
    * ``q_2 = l_4/24 He_3 + l_3^2/72 He_5``                              (kurtosis, squared skewness)
    * ``q_3 = l_5/120 He_4 + l_3 l_4/144 He_6 + l_3^3/1296 He_8``
    * ``q_4 = l_6/720 He_5 + (l_4^2/1152 + l_3 l_5/720) He_7 + l_3^2 l_4/1728 He_9
      + l_3^4/31104 He_11``.

    **Order k keeps the terms up to N^{-k/2}**: order 0 is the normal law with the exact mean and
    variance of S (the CLT-like approximation, error O(N^{-1/2})), order 1 adds ``q_1``, order 2
    adds ``q_2``, order 3 adds ``q_3``, order 4 adds ``q_4``; the error of order k is
    O(N^{-(k+1)/2}) for a non-lattice loss.  Order k uses cumulants up to ``kappa_{k+2}``.

    *Ambiguity in the paper.*  "A fourth order Edgeworth approximation, which has error
    O(N^-2)" does not fit one numbering: the error O(N^-2) is that of order 3 here (the terms up
    to N^{-3/2}: four terms counting the normal one), while the literal "fourth" power of
    ``N^{-1/2}`` is order 4 here (error O(N^{-5/2})); a third common usage, "up to the fourth
    cumulant" (skewness and kurtosis), is order 2 here.  We number by the power of ``N^{-1/2}``
    (so that the CLT is order 0, as the paper calls it) and default to ``order=4``, which contains
    every term of the paper's approximation under either reading; ``order=3`` is the reading
    "terms up to N^{-3/2}, error O(N^{-2})".  At the paper's workloads (N >= 10^3) the two
    differ by far less than the approximation error (see tests/accounting/test_edgeworth.py).

Trade-off curve (:func:`edgeworth_curve`)
    ``f(alpha) = F_1(F_0^{-1}(1 - alpha))`` where ``F_0``, ``F_1`` are the Edgeworth CDFs of S
    under H0 and H1 (ReRo paper Remark 2: quantile of the test statistic under H0, CDF under
    H1).  Both hypotheses are approximated separately, as the paper does; the exact relation
    ``dQ^N = e^S dP^N`` is not used to build ``F_1`` from ``F_0`` because it multiplies the series'
    relative tail error by ``e^S``.  The quantile is found by :func:`scipy.optimize.brentq` on an
    explicit bracket in the upper tail (``SF_0(c) = alpha`` is solved directly, so levels down
    to 1e-12 keep their digits) and the power ``1 - f`` is evaluated as ``SF_1(c)``.

    A truncated series is not always a distribution: its density ``phi(z) D(z)`` (``D`` a
    polynomial) can be negative and its CDF can leave [0, 1], most of all for small N and small
    sampling rates.  Each series therefore computes the interval of z around its mean on which
    ``D > 0`` and ``0 <= F <= 1`` (sign changes of D on a fine grid over ``|z| <= 40``, refined by
    brentq; beyond ``|z| = 40`` the series equals 0 or 1 in double precision).  The curve is
    defined only for levels whose critical value lies in the valid interval of both series
    (``curve.alpha_range``); any other level raises ``ValueError``.  ``f(0) = 1`` and
    ``f(1) = 0`` hold exactly (P and Q are mutually absolutely continuous).  Finally
    ``min(f, 1 - alpha)`` is returned: every trade-off function satisfies ``f <= 1 - alpha``, so
    the projection can only reduce the error; it keeps ``gamma >= kappa`` when the effect is
    tiny.  The approximate curve is convex only up to ~1e-9 near ``alpha = 1`` (order 0 with
    unequal variances under H0 and H1 is the "binormal" ROC, which has a hook there); use
    :func:`fdp.curves.tradeoff.symmetrise` or the lower convex envelope where an exact trade-off
    function is required.  The series is an *approximation*, not a bound (ReRo paper, after Cor. 3): for the SLM
    the loss has atoms and the composed CDF has jumps that no smooth series reproduces (the
    expansion is still asymptotically valid because the loss also has an absolutely continuous
    part, so Cramer's condition holds), and for small ``p`` the loss is very skewed.

CLT (:attr:`fdp.accounting.privacy_loss.Mechanism.clt_mu`, :func:`clt_curve`)
    ``mu_tilde = p sqrt(N (e^{mu^2} - 1))`` (Bu et al. 2020; Dong, Roth, Su 2022, Thm. 5), the
    limit when ``p sqrt(N)`` tends to a positive constant as ``N -> infinity``.  The ReRo paper's
    main text prints ``e^{mu_2}``; its footnote 3 has ``e^{1/sigma^2} = e^{mu^2}``.  Numerically
    ``e^{mu^2}`` is right.  For the ImageNet-style workload sigma = 2.5 (mu = 0.4),
    p = 16384/1281167, N = 71,589 and kappa = 1e-7, a direct FFT convolution of the one-step
    loss gives ``gamma = 8.1178e-5``, the order-4 Edgeworth curve ``8.1179e-5``, the CLT with
    ``e^{mu^2}`` (``mu_tilde = 1.4253``) ``8.031e-5`` (1.1 % low), the CLT with ``e^{mu}``
    (``mu_tilde = 2.3996``) ``2.56e-3``, 31 times too large.  And the effective effect size of
    the order-0 curve, ``N (E_1[L] - E_0[L]) / sqrt(N Var_0[L])``, tends to
    ``p sqrt(N (e^{mu^2} - 1))`` as ``N -> infinity`` with ``p sqrt(N)`` fixed (relative gap
    7.6e-10 at N = 1e8, sigma = 2.5, p sqrt(N) = 1; tests/accounting/test_edgeworth.py).  (At sigma = 1 the
    two formulas coincide.)  For the Laplace the same limit holds with the
    chi-square divergence of the pair in place of ``e^{mu^2} - 1``:
    ``chi^2(Lap(1, b) || Lap(0, b)) = (2/3) e^{mu} + (1/3) e^{-2 mu} - 1`` (our derivation; the
    papers state the Gaussian case only).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.polynomial import hermite_e, polynomial
from scipy import integrate
from scipy.optimize import brentq
from scipy.special import ndtr
from scipy.stats import norm

from ..curves import tradeoff
from ..curves.tradeoff import TradeOffCurve
from ..validation import (
    check_array_in,
    check_positive_int,
    spelled,
)
from .privacy_loss import Mechanism, loss_cumulants, takes_mechanism

__all__ = [
    "MAX_ORDER",
    "DEFAULT_ORDER",
    "EdgeworthSeries",
    "EdgeworthCurve",
    "edgeworth_curve",
    "gamma_edgeworth",
    "clt_curve",
]

#: The highest order of the Edgeworth series implemented.
MAX_ORDER = 4
#: The order used unless one is given.
DEFAULT_ORDER = 4
_ZMAX = 40.0  # beyond |z| = 40 every series is 0 or 1 in double precision
_ZGRID = np.linspace(-_ZMAX, _ZMAX, 16001)  # step 0.005 for the sign scan of the density


def _check_order(order) -> int:
    if isinstance(order, bool) or not isinstance(order, numbers.Integral) or not 0 <= order <= MAX_ORDER:
        raise ValueError(f"{spelled('order')} must be an integer in 0..{MAX_ORDER}, got {order!r}")
    return int(order)


# ---------------------------------------------------------------------------------------------
# the Edgeworth series of one hypothesis
# ---------------------------------------------------------------------------------------------


def _correction_terms(lam: np.ndarray) -> list[np.ndarray]:
    """HermiteE coefficients of q_1..q_4 (module docstring) from l_3..l_6 = lam[3..6]."""
    l3, l4, l5, l6 = lam[3], lam[4], lam[5], lam[6]

    def he(pairs):
        c = np.zeros(12)
        for k, coef in pairs:
            c[k] += coef
        return c

    return [
        he([(2, l3 / 6.0)]),
        he([(3, l4 / 24.0), (5, l3**2 / 72.0)]),
        he([(4, l5 / 120.0), (6, l3 * l4 / 144.0), (8, l3**3 / 1296.0)]),
        he([(5, l6 / 720.0), (7, l4**2 / 1152.0 + l3 * l5 / 720.0), (9, l3**2 * l4 / 1728.0), (11, l3**4 / 31104.0)]),
    ]


def _phi(z):
    return np.exp(-0.5 * np.square(z)) / math.sqrt(2.0 * math.pi)


class EdgeworthSeries:
    """Edgeworth approximation of the law of the composed loss S under one hypothesis.

    ``F(s) = Phi(z) - phi(z) Q(z)``, ``z = (s - N kappa_1) / sqrt(N kappa_2)``, where the
    polynomial ``Q = sum_{k <= order} N^{-k/2} q_k`` holds the terms listed in the module
    docstring; the density is ``phi(z) D(z) / sqrt(N kappa_2)`` with ``D = 1 + z Q - Q'``.

    Parameters
    ----------
    cumulants : array of at least ``order + 2`` one-step cumulants ``kappa_1, kappa_2, ...``
    steps : number of compositions N
    order : 0..4, the highest power ``N^{-order/2}`` kept

    Attributes
    ----------
    mean, std : exact mean and standard deviation of S
    z_range : ``(z_lo, z_hi)``, the interval around the mean (in standard units) on which the
        density is positive and ``0 <= F <= 1``; ``-inf``/``inf`` where the series is valid all
        the way out (to ``|z| = 40``, beyond which it is 0 or 1 in double precision)
    valid_range : the same interval in loss units

    References
    ----------
    ReRo paper (Kaissis et al. 2023a) Sec. 2 option (2), Remark 2; Petrov (1975) Ch. VI.

    Examples
    --------
    >>> series = EdgeworthSeries([0.0, 1.0, 0.0, 0.0, 0.0, 0.0], steps=4)  # unit Gaussian steps: exact
    >>> float(series.mean), float(series.std)
    (0.0, 2.0)
    """

    def __init__(self, cumulants, steps: int, order: int = DEFAULT_ORDER):
        order = _check_order(order)
        steps = check_positive_int("steps", steps)
        k = np.asarray(cumulants, dtype=float)
        if k.ndim != 1 or k.size < order + 2:
            raise ValueError(f"cumulants must be a 1-d array of length >= order + 2 = {order + 2}, got shape {k.shape}")
        if not np.all(np.isfinite(k[: order + 2])) or k[1] <= 0:
            raise ValueError(f"cumulants must be finite with kappa_2 > 0, got {k.tolist()}")
        self.order, self.steps = order, steps
        self.cumulants = k.copy()
        self.mean = steps * k[0]
        self.std = math.sqrt(steps * k[1])
        lam = np.zeros(7)
        for r in range(3, order + 3):
            lam[r] = k[r - 1] / k[1] ** (r / 2.0)
        self.standardised = lam[3 : order + 3].copy()  # l_3 .. l_{order+2}
        herme = np.zeros(12)
        for j, term in enumerate(_correction_terms(lam)[:order], start=1):
            herme += steps ** (-j / 2.0) * term
        q = hermite_e.herme2poly(herme)
        self._q = q  # power-basis coefficients of Q, lowest degree first
        self._d = polynomial.polysub(polynomial.polyadd([1.0], polynomial.polymulx(q)), polynomial.polyder(q))
        self._q_hi = np.trim_zeros(q, "b")[::-1] if np.any(q) else np.zeros(1)  # for np.polyval
        self.z_range = self._valid_z_range()
        lo, hi = self.z_range
        self.valid_range = (self.mean + self.std * lo, self.mean + self.std * hi)

    def __repr__(self) -> str:
        return f"EdgeworthSeries(order={self.order}, steps={self.steps}, mean={self.mean:.6g}, std={self.std:.6g})"

    # -- in standard units ---------------------------------------------------------------------
    def _Q(self, z):
        return np.polyval(self._q_hi, z)

    def cdf_z(self, z):
        """``F`` at standardised points ``z`` (no validity check)."""
        z = np.asarray(z, dtype=float)
        return ndtr(z) - _phi(z) * self._Q(z)

    def sf_z(self, z):
        """``1 - F`` at standardised points ``z``, without cancellation in the upper tail."""
        z = np.asarray(z, dtype=float)
        return ndtr(-z) + _phi(z) * self._Q(z)

    def density_factor(self, z):
        """``D(z)``: the density of the series is ``phi(z) D(z)`` in standard units."""
        return polynomial.polyval(np.asarray(z, dtype=float), self._d)

    def _valid_z_range(self) -> tuple[float, float]:
        d = self.density_factor(_ZGRID)
        mid = _ZGRID.size // 2  # z = 0, the mean
        if d[mid] <= 0:
            raise ValueError(
                f"the order-{self.order} Edgeworth series (N={self.steps}, standardised cumulants "
                f"{np.round(self.standardised, 4).tolist()}) has a negative density at its own mean: it is "
                f"not a distribution; use a lower {spelled('order')} or an exact accountant (fdp.accounting.pld)"
            )
        neg = d <= 0
        below = np.flatnonzero(neg[:mid])
        above = np.flatnonzero(neg[mid:])
        dfun = lambda z: float(polynomial.polyval(z, self._d))  # noqa: E731
        lo, hi = -math.inf, math.inf
        if below.size:
            i = below[-1]
            lo = brentq(dfun, _ZGRID[i], _ZGRID[i + 1], xtol=1e-14) if d[i] < 0 else _ZGRID[i]
        if above.size:
            i = mid + above[0]
            hi = brentq(dfun, _ZGRID[i - 1], _ZGRID[i], xtol=1e-14) if d[i] < 0 else _ZGRID[i]
        # F is increasing on (lo, hi); trim where it leaves [0, 1]
        if math.isfinite(lo) and self.cdf_z(lo) < 0:
            if self.cdf_z(0.0) <= 0:
                raise ValueError(f"the order-{self.order} Edgeworth series has F <= 0 at its mean: not a distribution")
            lo = brentq(lambda z: float(self.cdf_z(z)), lo, 0.0, xtol=1e-14)
        if math.isfinite(hi) and self.sf_z(hi) < 0:
            if self.sf_z(0.0) <= 0:
                raise ValueError(f"the order-{self.order} Edgeworth series has F >= 1 at its mean: not a distribution")
            hi = brentq(lambda z: float(self.sf_z(z)), 0.0, hi, xtol=1e-14)
        return float(lo), float(hi)

    # -- in loss units ---------------------------------------------------------------------------
    def standardise(self, s):
        """``z = (s - mean) / std``."""
        return (np.asarray(s, dtype=float) - self.mean) / self.std

    def _check_range(self, s, what: str):
        lo, hi = self.valid_range
        s = np.asarray(s, dtype=float)
        bad = (s < lo) | (s > hi)
        if np.any(bad):
            v = float(s[bad].flat[0])
            raise ValueError(
                f"the order-{self.order} Edgeworth series of the {what} is not a valid CDF at s={v:.6g} "
                f"(it is monotone with values in [0, 1] only for s in [{lo:.6g}, {hi:.6g}]); use a lower "
                "order, more steps or an exact accountant (fdp.accounting.pld)"
            )

    def cdf(self, s):
        """Approximate ``P(S <= s)``; ValueError outside ``valid_range``."""
        self._check_range(s, "loss")
        return self.cdf_z(self.standardise(s))

    def sf(self, s):
        """Approximate ``P(S > s)`` (accurate in the upper tail); ValueError outside ``valid_range``."""
        self._check_range(s, "loss")
        return self.sf_z(self.standardise(s))

    def pdf(self, s):
        """Approximate density of S (may be negative outside ``valid_range``; no check)."""
        z = self.standardise(s)
        return _phi(z) * self.density_factor(z) / self.std


# ---------------------------------------------------------------------------------------------
# the trade-off curve
# ---------------------------------------------------------------------------------------------


def _scalar_tail(series: EdgeworthSeries):
    """Fast scalar (z -> F(z), z -> SF(z)) closures for root finding."""
    coeffs = [float(c) for c in series._q_hi]
    sqrt2 = math.sqrt(2.0)
    c0 = 1.0 / math.sqrt(2.0 * math.pi)

    def qz(z: float) -> float:
        acc = 0.0
        for c in coeffs:
            acc = acc * z + c
        return acc

    def cdf(z: float) -> float:
        return 0.5 * math.erfc(-z / sqrt2) - c0 * math.exp(-0.5 * z * z) * qz(z)

    def sf(z: float) -> float:
        return 0.5 * math.erfc(z / sqrt2) + c0 * math.exp(-0.5 * z * z) * qz(z)

    return cdf, sf


def _solve_monotone(g, target_guess: float, lo: float, hi: float) -> float:
    """Root of the decreasing function ``g`` in [lo, hi] (g(lo) >= 0 >= g(hi)) by brentq.

    A bracket is grown from ``target_guess`` (step 0.5, doubling) and clipped to [lo, hi].
    """
    a = min(max(target_guess - 0.5, lo), hi)
    b = min(max(target_guess + 0.5, lo), hi)
    step = 0.5
    while g(a) < 0.0 and a > lo:
        b = a
        step *= 2.0
        a = max(a - step, lo)
    step = 0.5
    while g(b) > 0.0 and b < hi:
        a = b
        step *= 2.0
        b = min(b + step, hi)
    ga, gb = g(a), g(b)
    if ga == 0.0:
        return a
    if gb == 0.0:
        return b
    if ga < 0.0 or gb > 0.0:  # cannot happen for levels inside the checked range
        raise ValueError("no bracket for the Edgeworth quantile (level outside the series' valid range)")
    return brentq(g, a, b, xtol=1e-13, rtol=4 * np.finfo(float).eps, maxiter=200)


class EdgeworthCurve(TradeOffCurve):
    """Edgeworth approximation of ``T(P^N, Q^N)`` (add direction; ReRo paper Sec. 2 option (2)).

    ``f(alpha) = min(F_1(F_0^{-1}(1 - alpha)), 1 - alpha)`` for ``alpha`` in ``alpha_range``,
    ``f(0) = 1``, ``f(1) = 0``; any other level raises ValueError (the truncated series is not a
    distribution there).  ``.power(alpha) = max(SF_1(c), alpha)`` is ``gamma`` of Theorem 1,
    ``.inverse(beta)`` is the curve T(Q^N, P^N) from the same two series.

    Parameters
    ----------
    h0, h1 : EdgeworthSeries
        The composed loss under P and under Q.
    name : str, default "Edgeworth curve"

    Attributes
    ----------
    h0, h1 : EdgeworthSeries
    alpha_range, beta_range : tuple of float
        Where the curve and its inverse are defined.
    direction : str
        ``"add"``.
    """

    direction = "add"

    def __init__(self, h0: EdgeworthSeries, h1: EdgeworthSeries, name: str = "Edgeworth curve"):
        self.h0, self.h1 = h0, h1
        lo = max(h0.valid_range[0], h1.valid_range[0])
        hi = min(h0.valid_range[1], h1.valid_range[1])
        if not lo < hi:
            raise ValueError(f"{name}: the H0 and H1 Edgeworth series have no common valid range of the loss")
        self._c_bounds = (lo, hi)
        self._cdf0, self._sf0 = _scalar_tail(h0)
        self._cdf1, self._sf1 = _scalar_tail(h1)
        z0 = lambda c: (c - h0.mean) / h0.std  # noqa: E731
        z1 = lambda c: (c - h1.mean) / h1.std  # noqa: E731
        self._z0, self._z1 = z0, z1
        # the levels whose critical value lies in [lo, hi] (rounding can put 1 + 1e-16 here: clip)
        clip = lambda v: float(min(max(v, 0.0), 1.0))  # noqa: E731
        self.alpha_range = (
            0.0 if not math.isfinite(hi) else clip(h0.sf_z(z0(hi))),
            1.0 if not math.isfinite(lo) else clip(h0.sf_z(z0(lo))),
        )
        self.beta_range = (
            0.0 if not math.isfinite(lo) else clip(h1.cdf_z(z1(lo))),
            1.0 if not math.isfinite(hi) else clip(h1.cdf_z(z1(hi))),
        )
        super().__init__(self._eval_f, self._eval_inverse, self._eval_power, name=name)

    # -- critical values ---------------------------------------------------------------------
    def _check_levels(self, a: np.ndarray, rng: tuple[float, float], what: str):
        inner = (a > 0.0) & (a < 1.0)
        bad = inner & ((a < rng[0]) | (a > rng[1]))
        if np.any(bad):
            v = float(a[bad].flat[0])
            lo, hi = self._c_bounds
            raise ValueError(
                f"{self.name}: {what}={v:.6g} needs the Edgeworth series outside the range of the loss where both "
                f"truncated series are valid CDFs (s in [{lo:.6g}, {hi:.6g}], i.e. {what} in "
                f"[{rng[0]:.6g}, {rng[1]:.6g}]); use a lower {spelled('order')}, more {spelled('steps')} or an exact accountant (fdp.accounting.pld)"
            )

    def _critical_h0(self, alpha: float) -> float:
        """c with P_H0(S > c) = alpha (brentq on the upper or lower tail, whichever is smaller)."""
        h0 = self.h0
        # beyond |z| = 40 the series is 0 or 1 exactly: the root lies inside
        zlo = max(self._z0(self._c_bounds[0]), -_ZMAX)
        zhi = min(self._z0(self._c_bounds[1]), _ZMAX)
        if alpha <= 0.5:
            z = _solve_monotone(lambda t: self._sf0(t) - alpha, float(norm.isf(alpha)), zlo, zhi)
        else:
            beta = 1.0 - alpha
            z = _solve_monotone(lambda t: beta - self._cdf0(t), float(norm.ppf(beta)), zlo, zhi)
        return h0.mean + h0.std * z

    def _critical_h1(self, beta: float) -> float:
        """c with P_H1(S <= c) = beta."""
        h1 = self.h1
        zlo = max(self._z1(self._c_bounds[0]), -_ZMAX)
        zhi = min(self._z1(self._c_bounds[1]), _ZMAX)
        if beta <= 0.5:
            z = _solve_monotone(lambda t: beta - self._cdf1(t), float(norm.ppf(beta)), zlo, zhi)
        else:
            a = 1.0 - beta
            z = _solve_monotone(lambda t: self._sf1(t) - a, float(norm.isf(a)), zlo, zhi)
        return h1.mean + h1.std * z

    # -- evaluations ---------------------------------------------------------------------------
    def _map(self, x, rng, what, inner_fun, at0: float, at1: float):
        x = np.asarray(x, dtype=float)
        self._check_levels(x, rng, what)
        out = np.empty(x.shape)
        cache: dict[float, float] = {}
        for idx, v in np.ndenumerate(x):
            v = float(v)
            if v == 0.0:
                out[idx] = at0
            elif v == 1.0:
                out[idx] = at1
            else:
                if v not in cache:
                    cache[v] = inner_fun(v)
                out[idx] = cache[v]
        return out if out.ndim else float(out)

    def _f_one(self, alpha: float) -> float:
        c = self._critical_h0(alpha)
        return min(max(self._cdf1(self._z1(c)), 0.0), 1.0 - alpha)

    def _power_one(self, alpha: float) -> float:
        c = self._critical_h0(alpha)
        return max(min(self._sf1(self._z1(c)), 1.0), alpha)

    def _inverse_one(self, beta: float) -> float:
        c = self._critical_h1(beta)
        return min(max(self._sf0(self._z0(c)), 0.0), 1.0 - beta)

    def _tilting_gap_one(self, alpha: float) -> float:
        c = self._critical_h0(alpha)
        direct = self._sf1(self._z1(c))
        h0 = self.h0
        z_hi = min(h0.z_range[1], _ZMAX)
        z_c = (c - h0.mean) / h0.std
        if not z_c < z_hi:
            return abs(direct)

        def tilted(z):  # e^s times the H0 series' density, in standard units
            return math.exp(h0.mean + h0.std * z - 0.5 * z * z) / math.sqrt(2.0 * math.pi) * float(h0.density_factor(z))

        value, _ = integrate.quad(tilted, z_c, z_hi, limit=200, epsabs=0.0, epsrel=1e-10)
        return abs(direct - value)

    def error_estimate(self, alpha):
        """An estimate of the error of ``.power(alpha)``: the inconsistency of the two series.

        The exact laws satisfy ``dQ^N = e^S dP^N``, so the power ``P_H1(S > c)`` equals
        ``int_c^inf e^s dF_0(s)``.  The curve takes the power from the H1 series; the same integral
        over the H0 series (quadrature) differs from it by about the series' own error, and by more
        where the tail is poorly captured.  Measured on the ReRo workloads: 0.2 % at kappa = 1e-3 for
        (sigma 1, q 0.01, N 1000), where the certified bracket shows an error of 0.2 %; 74 % at
        kappa = 1e-12, where the series is off by a factor 2; 3e-8 relative on the ImageNet workload.
        A diagnostic, not a bound.  Vectorised over ``alpha``.
        """
        return self._map(alpha, self.alpha_range, "alpha", self._tilting_gap_one, 0.0, 0.0)

    def _eval_f(self, a):
        return self._map(a, self.alpha_range, "alpha", self._f_one, 1.0, 0.0)

    def _eval_power(self, a):
        return self._map(a, self.alpha_range, "alpha", self._power_one, 0.0, 1.0)

    def _eval_inverse(self, b):
        return self._map(b, self.beta_range, "beta", self._inverse_one, 1.0, 0.0)


def _series_pair(mechanism: Mechanism, order):
    """The Edgeworth series of the composed loss under H0 and H1, from one step's cumulants."""
    k0, k1 = (loss_cumulants(mechanism.one_step, hypothesis) for hypothesis in ("H0", "H1"))
    return EdgeworthSeries(k0, mechanism.steps, order), EdgeworthSeries(k1, mechanism.steps, order)


@takes_mechanism
def edgeworth_curve(mechanism: Mechanism, order: int = DEFAULT_ORDER) -> EdgeworthCurve:
    """Edgeworth approximation of the composed, subsampled trade-off curve ``T(P^N, Q^N)`` (add direction).

    ``mechanism``: Gaussian (SGM, ``noise_multiplier`` = noise multiplier sigma) or Laplace (SLM,
    ``noise_multiplier`` = b) noise, sensitivity 1; ``sampling_rate`` p in (0, 1]; ``steps`` N >= 1; ``order``
    0..4 (module docstring: order k keeps the terms up to N^{-k/2}; 4 is the default).  ReRo paper
    Sec. 2 option (2), Remark 2, Cor. 3.  Raises ValueError for levels where the truncated series
    is not a valid CDF (see :class:`EdgeworthCurve`).

    Parameters
    ----------
    mechanism : Mechanism
    order : int, default 4
        0..4.

    Returns
    -------
    EdgeworthCurve
        ``f`` with ``.power`` (the ReRo bound at kappa) and ``.error_estimate``.

    References
    ----------
    ReRo paper (Kaissis et al. 2023a) Sec. 2 option (2), Remark 2, Cor. 3.

    Examples
    --------
    >>> curve = edgeworth_curve(Mechanism("gaussian", 1.0, 0.1, 100))
    >>> round(float(curve.power(0.01)), 6)  # gamma at kappa = 0.01
    0.146121
    """
    noise, noise_multiplier, p, steps = mechanism.args
    order = _check_order(order)
    h0, h1 = _series_pair(mechanism, order)
    name = f"Edgeworth order {order}, {noise} scale={noise_multiplier:g}, p={p:g}, N={steps}, add"
    return EdgeworthCurve(h0, h1, name=name)


@takes_mechanism
def gamma_edgeworth(mechanism: Mechanism, kappa, order: int = DEFAULT_ORDER):
    """ReRo bound ``gamma = 1 - f(kappa)`` from the Edgeworth curve (ReRo paper Thm. 1, Cor. 3).

    Vectorised over ``kappa`` in (0, 1); see :func:`edgeworth_curve` for the other arguments.
    An approximation, not a certified bound.

    Parameters
    ----------
    mechanism : Mechanism
    kappa : float or array_like
        In (0, 1).
    order : int, default 4
        0..4.

    Returns
    -------
    float or numpy.ndarray

    References
    ----------
    ReRo paper (Kaissis et al. 2023a) Thm. 1, Cor. 3.

    Examples
    --------
    >>> round(float(gamma_edgeworth(Mechanism("gaussian", 1.0, 0.1, 100), 0.01)), 6)  # = edgeworth_curve(...).power(0.01)
    0.146121
    """
    order = _check_order(order)
    k = check_array_in("kappa", kappa, 0.0, 1.0, open_low=True, open_high=True)
    return edgeworth_curve(mechanism, order).power(k)


# ---------------------------------------------------------------------------------------------
# the CLT approximation
# ---------------------------------------------------------------------------------------------


@takes_mechanism
def clt_curve(mechanism: Mechanism) -> TradeOffCurve:
    """The CLT approximation ``f_Gauss(alpha, mu_tilde)`` = ``tradeoff.gaussian(mechanism.clt_mu)``.

    Asymptotic (error O(N^{-1/2})), symmetric, and an approximation, not a bound.

    Parameters
    ----------
    mechanism : Mechanism

    Returns
    -------
    TradeOffCurve

    References
    ----------
    ReRo paper (Kaissis et al. 2023a) Sec. 2 option (3).

    Examples
    --------
    >>> sgm = Mechanism("gaussian", 2.0, 0.01, 10_000)
    >>> clt_curve(sgm).name == f"Gaussian mu={sgm.clt_mu:g}"
    True
    """
    return tradeoff.gaussian(mechanism.clt_mu)
