"""Central and non-central chi-square laws that keep their digits in high dimension.

The relaxed-threat-model curve of the Gaussian mechanism in dimension d compares ``chi2_d`` with ``chi2_d(nc)``
(RTM paper Thm. 2).  scipy's incomplete gamma function, behind ``chi2`` and ``ncx2``, loses digits for large shapes
(measured against a 30-digit series: 2e-14 relative at d = 10^5, 2e-8 at d = 10^6, 0.8 % at d = 10^7, in the lower
tail), and ``ncx2`` loses them earlier (1e-11 at d = 10^5).  Here, from d = 10^4 on:

* ``P(a, y)`` and ``Q(a, y)`` (regularised incomplete gamma, ``a = d/2``, ``y = x/2``) are the power series of the
  smaller one (``P`` below ``y = a``, ``Q`` above), each a sum of positive terms with a geometric bound on its
  tail, times ``e^{-y} y^a / Gamma(a + 1)`` in Loader's saddle-point form (which does not cancel);
* the non-central law is the Poisson mixture ``sum_k Pois(k; nc/2) P(a + k, y)``, with ``P(a + k, y)`` for all k
  from one series and the recurrences ``P(a + k) = P(a + k + 1) + t_k`` (downwards) and
  ``Q(a + k + 1) = Q(a + k) + t_k`` (upwards), ``t_k = e^{-y} y^{a+k} / Gamma(a + k + 1)``, again sums of positive
  terms; the Poisson mass left out of the window (12 standard deviations and 20 terms each side) is bounded, and the
  window reaches further until that bound is below 1e-17 of the value;
* quantiles are Newton's method on the logarithm of the cdf (or sf) from scipy's quantile.

Below d = 10^4 the laws are scipy's (within 2e-14 relative of the series there, levels down to 1e-15).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special
from scipy.stats import chi2, ncx2

from ..roots import bisect_doubles

__all__ = ["Chi2", "NoncentralChi2", "SERIES_FROM"]

#: The dimension from which the series replace scipy's laws.
SERIES_FROM = 10**4
_LOG_2PI = math.log(2.0 * math.pi)
_STOP = 1e-18  # relative size of a series' bounded tail when it stops


def poisson_log_pmf(k, h) -> np.ndarray:
    """``log(e^{-h} h^k / Gamma(k + 1))`` for real ``k >= 0`` and ``h > 0`` (broadcast), to a few ulps of its size.

    Loader's saddle-point form ``-stirlerr(k) - h phi((k - h) / h) - log(2 pi k) / 2`` with
    ``phi(t) = (1 + t) log(1 + t) - t`` (a series for ``|t| < 0.1``): the plain ``-h + k log h - log Gamma(k + 1)``
    cancels to 1e-11 relative at h = 5000 and to 1e-8 at 5e6.  Below h = 1 the plain form (no cancellation).

    Parameters
    ----------
    k : array_like
        Real, >= 0.
    h : array_like
        > 0.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> round(float(np.exp(poisson_log_pmf(3, 2.0))), 12)  # e^-2 2^3 / 3!
    0.180447044315
    """
    k, h = np.broadcast_arrays(np.asarray(k, dtype=float), np.asarray(h, dtype=float))
    kk = np.maximum(k, 1.0)
    with np.errstate(over="ignore"):
        t = (kk - h) / h
    near = np.abs(t) < 0.1
    # phi(t) = t^2 sum_{n >= 0} (-t)^n / ((n + 2)(n + 1)) for |t| < 0.1, by Horner (26 terms leave less than 1e-26)
    s = -np.where(near, t, 0.0)
    series = np.zeros_like(t)
    for n in range(25, -1, -1):
        series = series * s + 1.0 / ((n + 2) * (n + 1))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        phi = np.where(near, series * t * t, (1.0 + t) * np.log1p(t) - t)
        # stirlerr(k) = log Gamma(k + 1) - (k + 1/2) log k + k - log(2 pi) / 2: its asymptotic series from k = 15
        inv2 = 1.0 / (kk * kk)
        stirlerr = np.where(kk < 15.0, special.gammaln(kk + 1.0) - (kk + 0.5) * np.log(kk) + kk - 0.5 * _LOG_2PI,
                            (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0 - inv2 / 1680.0))) / kk)
        loader = -stirlerr - h * phi - 0.5 * (_LOG_2PI + np.log(kk))
        if np.any(h < 1.0):
            loader = np.where(h < 1.0, -h + special.xlogy(k, h) - special.gammaln(k + 1.0), loader)
    return np.where(k == 0.0, -h, loader)


def _series(ratio_of, y: np.ndarray) -> np.ndarray:
    """``sum_{n >= 0} prod_{j <= n} ratio_of(j)`` (positive ratios, decreasing in j, below 1 where the sum stops),
    stopped when the last term over ``1 - ratio`` (a bound on the rest) is below 1e-18 of the sum."""
    total = np.ones_like(y)
    term = np.ones_like(y)
    active = np.ones(y.shape, dtype=bool)
    start = 1
    while np.any(active):
        j = np.arange(start, start + 512, dtype=float)
        ratios = ratio_of(j[None, :], y[active, None])
        terms = term[active, None] * np.cumprod(ratios, axis=1)
        total[active] += np.sum(terms, axis=1)
        term[active] = terms[:, -1]
        last = ratios[:, -1]
        rest = np.where(last < 1.0, terms[:, -1] / np.maximum(1.0 - last, 1e-300), np.inf)
        done = rest <= _STOP * total[active]
        idx = np.flatnonzero(active)
        active[idx[done]] = False
        start += 512
        if start > 10**7:  # not reached for a >= 1000: the ratios fall below 1 - 1/sqrt(a) within 10 sqrt(a) terms
            raise ValueError("the incomplete gamma series did not converge")
    return total


def gamma_pq(a: float, y) -> tuple[np.ndarray, np.ndarray]:
    """Regularised incomplete gamma functions ``(P(a, y), Q(a, y))``, ``a >= 1000``, each to a few ulps relative.

    Below ``y = a``: ``P = t_a sum_n prod_{j <= n} y / (a + j)`` and ``Q = 1 - P`` (``P`` is then below about 1/2);
    above: ``Q = t_a (a / y) sum_n prod_{j <= n} (a - j) / y`` (integration by parts; its remainder after n terms is
    positive and bounded by the stopping rule while n < a - 1, which holds for a >= 1000: the terms fall below 1e-18
    of the sum within about 10 sqrt(a) of them) and ``P = 1 - Q``; ``t_a = e^{-y} y^a / Gamma(a + 1)``.

    Parameters
    ----------
    a : float
        Shape, >= 1000 (scipy's ``gammainc`` is accurate below; the laws here use this from d = 10^4 on).
    y : array_like
        >= 0.

    Returns
    -------
    (P, Q) : tuple of numpy.ndarray

    Examples
    --------
    >>> from scipy import special
    >>> p, q = gamma_pq(5000.0, [4900.0])
    >>> bool(abs(p[0] / special.gammainc(5000.0, 4900.0) - 1) < 1e-13)
    True
    """
    if not a >= 1000.0:
        raise ValueError(f"a must be at least 1000 (the series' remainder bound needs it), got {a!r}")
    y = np.atleast_1d(np.asarray(y, dtype=float))
    p = np.zeros_like(y)
    q = np.ones_like(y)
    p[y == np.inf], q[y == np.inf] = 1.0, 0.0
    pos = (y > 0.0) & np.isfinite(y)
    below = pos & (y < a)
    above = pos & (y >= a)
    if np.any(below):
        yb = y[below]
        lead = np.exp(poisson_log_pmf(a, yb))
        p[below] = lead * _series(lambda j, yy: yy / (a + j), yb)
        q[below] = 1.0 - p[below]
    if np.any(above):
        ya = y[above]
        lead = np.exp(poisson_log_pmf(a, ya)) * (a / ya)
        q[above] = lead * _series(lambda j, yy: (a - j) / yy, ya)
        p[above] = 1.0 - q[above]
    return p, q


def _newton_quantile(law, q, upper: bool, start):
    """The x with ``law.cdf(x) = q`` (``law.sf(x) = q`` for ``upper``): Newton's method on the logarithm of the
    smaller of the two probabilities (``1 - q`` is exact for q >= 1/2) from ``start`` (scipy's quantile), each step
    at most halving or doubling x."""
    q = np.asarray(q, dtype=float)
    qq = np.atleast_1d(q)
    x = np.atleast_1d(np.asarray(start, dtype=float)).copy()
    flip = qq > 0.5
    target = np.where(flip, 1.0 - qq, qq)
    use_sf = flip != upper  # solve sf(x) = target where True, cdf(x) = target elsewhere
    live = np.isfinite(x) & (x > 0.0) & (qq > 0.0) & (qq < 1.0)
    for _ in range(30):
        if not np.any(live):
            break
        xi, sf_i = x[live], use_sf[live]
        cdf, sf = law.cdf_sf(xi)
        prob = np.where(sf_i, sf, cdf)
        slope = law.pdf(xi) / np.maximum(prob, 1e-300) * np.where(sf_i, -1.0, 1.0)  # d log prob / dx
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            step = (np.log(np.maximum(prob, 1e-300)) - np.log(target[live])) / slope
        new = np.clip(xi - np.where(np.isfinite(step), step, 0.0), 0.5 * xi, 2.0 * xi)
        x[live] = new
        live[live] = np.abs(new - xi) > 2e-16 * xi
    return x.reshape(q.shape)


class Chi2:
    """The central chi-square law ``chi2_d``: cdf, sf, pdf, ppf, isf (vectorised), accurate in every dimension.

    Parameters
    ----------
    d : int
        Degrees of freedom, >= 1.

    Examples
    --------
    >>> law = Chi2(10**7)
    >>> x = law.isf(0.999999)  # scipy's chi2.isf gives 9978763.78, whose level is 1.0082e-06, not 1e-06
    >>> round(float(x), 2), round(float(law.cdf(x)) * 1e6, 9)
    (9978756.44, 1.0)
    """

    def __init__(self, d: int):
        self.d = int(d)
        self._scipy = chi2(self.d)
        self._series = self.d >= SERIES_FROM

    def _pq(self, x):
        p, q = gamma_pq(0.5 * self.d, 0.5 * np.asarray(x, dtype=float))
        return p.reshape(np.shape(x)), q.reshape(np.shape(x))

    def cdf_sf(self, x):
        """``(cdf(x), sf(x))`` in one pass."""
        return self._pq(x) if self._series else (self._scipy.cdf(x), self._scipy.sf(x))

    def cdf(self, x):
        return self._pq(x)[0] if self._series else self._scipy.cdf(x)

    def sf(self, x):
        return self._pq(x)[1] if self._series else self._scipy.sf(x)

    def pdf(self, x):
        if not self._series:
            return self._scipy.pdf(x)
        return _chi2_pdf(np.asarray(x, dtype=float), self.d)

    def ppf(self, q):
        start = self._scipy.ppf(q)
        return _newton_quantile(self, q, False, start) if self._series else start

    def isf(self, q):
        """The threshold of a level-``q`` test, rounded down (``sf(x) >= q``): in high dimension one ulp of x moves
        the level by 3e-12 relative (d = 10^7, level 1 - 1e-15), and a lower threshold only lowers the curve's value
        (``Q.cdf(x)``) and raises its power: the safe side."""
        start = self._scipy.isf(q)
        if not self._series:
            return start
        return _nudge(_newton_quantile(self, q, True, start), lambda x: _beyond(self, x, q, upper=True), 0.0)


class NoncentralChi2:
    """The non-central chi-square law ``chi2_d(nc)``: cdf, sf, pdf, ppf (vectorised), accurate in every dimension.

    Parameters
    ----------
    d : int
        Degrees of freedom, >= 1.
    nc : float
        Non-centrality, >= 0 (a subnormal one is taken as 0: scipy's ncx2 is inaccurate there).

    Examples
    --------
    >>> law = NoncentralChi2(10**7, 1.0)
    >>> x = Chi2(10**7).isf(0.999999)
    >>> round(float(law.cdf(x)) * 1e6, 8)  # 30-digit series: 9.98894890e-07; scipy's ncx2.cdf gives 1.00705e-06
    0.99889489
    """

    def __init__(self, d: int, nc: float):
        self.d = int(d)
        self.nc = 0.0 if nc < np.finfo(float).tiny else float(nc)
        self._central = Chi2(self.d)
        self._scipy = ncx2(self.d, self.nc) if self.nc > 0.0 else chi2(self.d)
        self._series = self.d >= SERIES_FROM and self.nc > 0.0

    def _window(self, width: float) -> np.ndarray:
        h = 0.5 * self.nc
        return np.arange(max(math.floor(h - width), 0), math.ceil(h + width) + 1, dtype=float)

    def _mixture(self, x):
        """``(sum_k w_k P(a + k, y), sum_k w_k Q(a + k, y))`` with the omitted Poisson mass below 1e-17 of each."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        h, a = 0.5 * self.nc, 0.5 * self.d
        cdf, sf = np.where(x > 0.0, 1.0, 0.0), np.where(x > 0.0, 0.0, 1.0)  # at x <= 0 and x = inf
        inner = np.flatnonzero((x > 0.0) & np.isfinite(x))
        width = 12.0 * math.sqrt(h) + 20.0
        for start in range(0, inner.size, 64):  # bounded memory: 64 levels at a time
            at = inner[start:start + 64]
            y = 0.5 * x[at]
            while True:
                k = self._window(width)
                w = np.exp(poisson_log_pmf(k, h))
                p_top, _ = gamma_pq(a + k[-1], y)
                _, q_low = gamma_pq(a + k[0], y)
                with np.errstate(under="ignore"):
                    t = np.exp(poisson_log_pmf(a + k[None, :], np.maximum(y, 1e-300)[:, None]))  # t_k, k in the window
                t[y <= 0.0] = 0.0
                # P(a + k) = P(a + k_hi) + sum_{k <= j < k_hi} t_j; Q(a + k) = Q(a + k_lo) + sum_{k_lo <= j < k} t_j
                p_k = p_top[:, None] + np.concatenate([np.cumsum(t[:, -2::-1], axis=1)[:, ::-1],
                                                       np.zeros((y.size, 1))], axis=1)
                q_k = q_low[:, None] + np.concatenate([np.zeros((y.size, 1)), np.cumsum(t[:, :-1], axis=1)], axis=1)
                p_sum, q_sum = p_k @ w, q_k @ w
                head = float(special.pdtr(k[0] - 1, h)) if k[0] > 0 else 0.0
                tail = float(special.pdtrc(k[-1], h))
                p0 = gamma_pq(a, y)[0] if head > 0.0 else 0.0
                # left out: below the window each P term is at most P(a) and each Q term at most Q(a + k_lo); above it
                # each P term at most P(a + k_hi) and each Q term at most 1
                p_out = head * p0 + tail * p_k[:, -1]
                q_out = head * q_k[:, 0] + tail
                if np.all(p_out <= 1e-17 * p_sum) and np.all(q_out <= 1e-17 * q_sum):
                    break
                if width > 1e8 or (head == 0.0 and tail == 0.0):
                    raise ValueError(f"the non-central chi-square law with d={self.d} and nc={self.nc:g} cannot be "
                                     "evaluated accurately at these levels")
                width *= 2.0
            cdf[at], sf[at] = p_sum, q_sum
        return cdf, sf

    def cdf_sf(self, x):
        """``(cdf(x), sf(x))`` in one pass (one Poisson mixture)."""
        if not self._series:
            return self._scipy.cdf(x), self._scipy.sf(x)
        cdf, sf = self._mixture(x)
        return cdf.reshape(np.shape(x)), sf.reshape(np.shape(x))

    def cdf(self, x):
        return self._mixture(x)[0].reshape(np.shape(x)) if self._series else self._scipy.cdf(x)

    def sf(self, x):
        return self._mixture(x)[1].reshape(np.shape(x)) if self._series else self._scipy.sf(x)

    def pdf(self, x):
        if not self._series:
            return self._scipy.pdf(x)
        k = self._window(12.0 * math.sqrt(0.5 * self.nc) + 20.0)
        w = np.exp(poisson_log_pmf(k, 0.5 * self.nc))
        x = np.asarray(x, dtype=float)
        return np.sum(w * _chi2_pdf(x[..., None], self.d + 2.0 * k), axis=-1)

    def ppf(self, q):
        """The quantile rounded up (``cdf(x) >= q``): the inverse curve ``P.sf(x)`` is then on its safe side, below.

        Where scipy's quantile fails (NaN at a level as small as 1e-300 once ``nc`` is in the hundreds), the smallest
        double ``x`` with ``cdf(x) >= q`` is found by bisection; a cdf that underflows there only moves ``x`` up."""
        start = np.asarray(self._scipy.ppf(q), dtype=float)
        q = np.asarray(q, dtype=float)
        failed = np.isnan(start) & (q > 0.0) & (q < 1.0)
        if np.any(failed):
            start = np.array(start)
            start[failed] = _quantile_from_above(self, np.broadcast_to(q, start.shape)[failed])
        if not self._series:
            return start
        return _nudge(_newton_quantile(self, q, False, start), lambda x: _beyond(self, x, q, upper=False), np.inf)

    def isf(self, q):
        """The upper quantile, ``sf(x) = q``: scipy's, which keeps its digits at a tiny ``q`` where ``ppf(1 - q)``
        cannot (the level 1 - 2^-53); in the series' dimensions ``ppf(1 - q)``, rounded up."""
        q = np.asarray(q, dtype=float)
        if self._series:
            return self.ppf(1.0 - q)
        out = np.asarray(self._scipy.isf(q), dtype=float)
        failed = np.isnan(out) & (q > 0.0) & (q < 1.0)
        return np.where(failed, self.ppf(1.0 - q), out) if np.any(failed) else out


def _quantile_from_above(law, q: np.ndarray) -> np.ndarray:
    """The smallest double ``x >= 0`` with ``law.cdf(x) >= q``, by bisection over the doubles' bit patterns (which
    sort like the non-negative doubles) between 0 and the law's median; NaN where the cdf is NaN on the way (beyond
    scipy's range: the caller's curve then raises)."""
    broken = np.zeros(q.shape, dtype=bool)

    def reached(x):
        cdf = law.cdf(x)
        broken[np.isnan(cdf)] = True
        return cdf >= q

    _, hi = bisect_doubles(reached, np.full(q.shape, float(law._scipy.ppf(0.5))))
    return np.where(broken, np.nan, hi)


def _beyond(law, x, q, upper: bool) -> np.ndarray:
    """Whether ``law.sf(x) >= q`` (``upper``) or ``law.cdf(x) >= q``, decided on the smaller probability (for q > 1/2
    the complement ``1 - q``, exact, against the other tail: the larger one cannot resolve 1e-15) with a margin of
    1e-13 for the series' rounding."""
    q = np.broadcast_to(np.asarray(q, dtype=float), np.shape(x))
    flip = q > 0.5
    small = np.where(flip, 1.0 - q, q)
    cdf, sf = law.cdf_sf(x)
    near, far = (cdf, sf) if upper else (sf, cdf)  # near: the tail that is small where flip
    return np.where(flip, near <= small * (1.0 - 1e-13), far >= small * (1.0 + 1e-13))


def _nudge(x, holds, towards: float, rounds: int = 64):
    """``x`` moved one float at a time towards ``towards`` until ``holds(x)`` (elementwise; at most ``rounds`` floats)."""
    x = np.array(x, dtype=float)
    for _ in range(rounds):
        ok = holds(x) | ~np.isfinite(x) | (x <= 0.0)
        if np.all(ok):
            break
        x = np.where(ok, x, np.nextafter(x, towards))
    return x


def _chi2_pdf(x, d):
    """The chi2_d density ``t_{d/2 - 1}(x/2) / 2`` in Loader's form (accurate for large d)."""
    with np.errstate(divide="ignore", under="ignore"):
        return np.where(x > 0.0, 0.5 * np.exp(poisson_log_pmf(0.5 * d - 1.0, np.maximum(0.5 * x, 1e-300))), 0.0)
