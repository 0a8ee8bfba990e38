"""The relaxed threat model's curves from a test statistic (RTM paper Def. 2, eq. 1), and the two laws of the
Laplace mechanism's magnitude statistic (proof of Thm. 1): :class:`Exponential` under H0 and :class:`FoldedLaplace`
under H1."""

from __future__ import annotations

import numpy as np

from ...curves.tradeoff import TradeOffCurve
from ...validation import check_nonnegative, check_positive

__all__ = ["Exponential", "FoldedLaplace", "from_test_statistic"]

# ---------------------------------------------------------------------------------------------
# Generic construction from a test statistic (Def. 2, eq. 1)
# ---------------------------------------------------------------------------------------------


def from_test_statistic(null, alternative, name: str = "RTM curve") -> TradeOffCurve:
    """Trade-off curve of the test "reject H0 when the statistic is large" (Def. 2, eq. 1).

    ``null`` (P) and ``alternative`` (Q) are the statistic's distributions under H0 and H1, any
    objects with vectorised ``cdf``, ``sf``, ``ppf``, ``isf`` (e.g. frozen ``scipy.stats``
    distributions).  Returns ``T(alpha) = Phi_Q(Psi_P^{-1}(alpha))`` with inverse
    ``T^{-1}(beta) = Psi_P(Phi_Q^{-1}(beta))`` (the swapped test, its quantile ``Psi_Q^{-1}(1 - beta)`` above 1/2) and power
    ``Psi_Q(Psi_P^{-1}(alpha))`` (taken as ``1 - T`` where T < 1/2).  The survival function
    and its inverse are used directly, so small levels keep their accuracy.

    Parameters
    ----------
    null, alternative : distribution
        The statistic's laws under H0 and H1 (vectorised ``cdf``, ``sf``, ``ppf``, ``isf``).
    name : str, default "RTM curve"

    Returns
    -------
    TradeOffCurve

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Def. 2, eq. 1.

    Examples
    --------
    >>> from scipy import stats
    >>> curve = from_test_statistic(stats.norm(0, 1), stats.norm(1, 1))  # a one-sided Gaussian test: f_1
    >>> from fdp.curves import tradeoff
    >>> bool(abs(curve(0.05) - tradeoff.gaussian(1.0)(0.05)) < 1e-12)
    True
    """

    def checked(values):
        values = np.asarray(values, dtype=float)
        if np.any(np.isnan(values)):
            raise ValueError(f"{name}: the statistic's distributions returned NaN (parameters out of numerical range)")
        return values

    def f(a):
        with np.errstate(divide="ignore", over="ignore"):
            return checked(alternative.cdf(null.isf(a)))

    def power(a):
        with np.errstate(divide="ignore", over="ignore"):
            x = np.atleast_1d(np.asarray(null.isf(a), dtype=float))
            beta = np.asarray(alternative.cdf(x), dtype=float)
            out = 1.0 - beta
            # where the power is small, use the survival function (only there: scipy's ncx2.sf
            # raises OverflowError at tiny x with a large non-centrality)
            upper = beta > 0.5
            out[upper] = alternative.sf(x[upper])
        return checked(out.reshape(np.shape(a)))

    def inverse(b):
        b = np.asarray(b, dtype=float)
        with np.errstate(divide="ignore", over="ignore"):
            x = np.asarray(alternative.ppf(b), dtype=float)
            # above 1/2 the quantile from the upper tail, 1 - b exact: the lower one near b = 1 - 2^-53 put j^{-1}
            # 2.2 times above the exact value (Q.ppf cannot resolve its level there)
            high = b > 0.5
            if np.any(high):
                x = np.where(high, alternative.isf(np.where(high, 1.0 - b, 0.5)), x)
            return checked(null.sf(x))

    return TradeOffCurve(f, inverse, power, name=name)


class Exponential:
    """Exp(b): the magnitude ``|theta|`` of Lap(0, b), the statistic under H0 (proof of Thm. 1).

    Parameters
    ----------
    b : float, default 1.0
        The Laplace scale, > 0.

    Examples
    --------
    >>> round(float(Exponential(2.0).sf(2.0)), 6)  # P(|theta| > 2) = e^{-2/b}
    0.367879
    """

    def __init__(self, b: float = 1.0):
        self.b = check_positive("b", b)

    def cdf(self, x):
        return -np.expm1(-np.asarray(x, dtype=float) / self.b)

    def sf(self, x):
        return np.exp(-np.asarray(x, dtype=float) / self.b)

    def ppf(self, q):
        return -self.b * np.log1p(-np.asarray(q, dtype=float))

    def isf(self, q):
        return -self.b * np.log(np.asarray(q, dtype=float))


class FoldedLaplace:
    """FoldL(Delta, b): the magnitude ``|theta|`` of Lap(Delta, b), the statistic under H1.

    CDF and quantile exactly as printed in the proof of Thm. 1 (Liu and Kozubowski 2015):
    ``Phi(x) = exp(-Delta/b) sinh(x/b)`` for ``x < Delta`` and ``1 - exp(-x/b) cosh(Delta/b)``
    above; the quantile switches branch at ``Phi(Delta) = 1/2 - exp(-2 Delta/b)/2``.

    Parameters
    ----------
    delta : float
        The shift Delta, >= 0.
    b : float, default 1.0
        The Laplace scale, > 0.

    References
    ----------
    RTM paper (Kaissis et al. 2023b) proof of Thm. 1; Liu and Kozubowski (2015).

    Examples
    --------
    >>> f = FoldedLaplace(1.0)
    >>> round(float(f.ppf(f.cdf(0.5))), 12)  # quantile and CDF are inverse
    0.5
    """

    def __init__(self, delta: float, b: float = 1.0):
        self.delta = check_nonnegative("delta", delta)
        self.b = check_positive("b", b)
        self.mu = self.delta / self.b
        self.corner = -0.5 * np.expm1(-2.0 * self.mu)  # Phi(Delta)

    def cdf(self, x):
        x = np.asarray(x, dtype=float) / self.b
        m = self.mu
        with np.errstate(over="ignore", invalid="ignore"):
            low = np.exp(-m) * np.sinh(np.minimum(x, m))
            high = 1.0 - np.exp(-x) * np.cosh(m)
        return np.where(x < m, low, high)

    def sf(self, x):
        x = np.asarray(x, dtype=float) / self.b
        m = self.mu
        with np.errstate(over="ignore", invalid="ignore"):
            low = 1.0 - np.exp(-m) * np.sinh(np.minimum(x, m))
            high = np.exp(-x) * np.cosh(m)
        return np.where(x < m, low, high)

    def ppf(self, q):
        q = np.asarray(q, dtype=float)
        m = self.mu
        with np.errstate(divide="ignore"):
            low = np.log(q * np.exp(m) + np.sqrt(q**2 * np.exp(2.0 * m) + 1.0))
            high = np.log(np.cosh(m) / (1.0 - q))
        return self.b * np.where(q <= self.corner, low, high)

    def isf(self, q):
        return self.ppf(1.0 - np.asarray(q, dtype=float))
