"""fdp.accounting.chisquare: chi-square laws in high dimension, against 40-digit mpmath series.

The oracle is independent of the code under test: the regularised lower incomplete gamma function as its power series
in mpmath (``P(a, y) = y^a e^-y / Gamma(a + 1) sum_n y^n / ((a + 1) ... (a + n))``, summed to 40 digits), the quantile
by mpmath's root finder on it, the non-central law as the Poisson mixture summed term by term in mpmath.
"""

from __future__ import annotations

import numpy as np
import pytest
from mpmath import mp, mpf
from scipy.stats import chi2

from fdp.accounting import rtm
from fdp.accounting.chisquare import Chi2, NoncentralChi2, gamma_pq, poisson_log_pmf


@pytest.fixture(autouse=True)
def _precision():
    dps = mp.dps
    mp.dps = 40
    yield
    mp.dps = dps


def _lower_p(a, y):
    """P(a, y) for y < a by its power series, in mpmath."""
    a, y = mpf(a), mpf(y)
    total, term, n = mpf(1), mpf(1), 1
    while term > total * mpf(10) ** -42:
        term *= y / (a + n)
        total += term
        n += 1
    return mp.exp(a * mp.log(y) - y - mp.loggamma(a + 1)) * total


def _chi2_cdf(x, d):
    return _lower_p(mpf(d) / 2, mpf(x) / 2) if x < d else 1 - mp.gammainc(mpf(d) / 2, mpf(x) / 2, mp.inf, regularized=True)


def _ncx2_cdf(x, d, nc):
    """sum_k Pois(k; nc/2) P(d/2 + k, x/2), all in mpmath (for the lower tail, x < d)."""
    h, a, y = mpf(nc) / 2, mpf(d) / 2, mpf(x) / 2
    k_hi = int(h + 15 * mp.sqrt(h) + 30)
    p = _lower_p(a + k_hi, y)
    total = mpf(0)
    for k in range(k_hi, -1, -1):  # P(a + k) = P(a + k + 1) + y^(a+k) e^-y / Gamma(a + k + 1)
        if k < k_hi:
            p += mp.exp((a + k) * mp.log(y) - y - mp.loggamma(a + k + 1))
        total += mp.exp(-h + k * mp.log(h) - mp.loggamma(k + 1)) * p
    return total


def _chi2_isf(alpha, d):
    """x with P(chi2_d > x) = alpha exactly (alpha the float), for alpha near 1 (the lower tail)."""
    target = 1 - mpf(alpha)
    x0 = mpf(float(chi2.isf(alpha, d)))
    return mp.findroot(lambda x: _chi2_cdf(x, d) - target, (x0 * (1 - mpf("1e-5")), x0 * (1 + mpf("1e-5"))),
                       solver="anderson")


@pytest.mark.parametrize("a", [1000.0, 5e3, 5e5, 5e6])
def test_incomplete_gamma_to_a_few_ulps_where_scipys_loses_digits(a):
    """scipy's gammainc is off by 2e-8 at a = 5e5 and 0.8 % at a = 5e6 in the lower tail; ours to 1e-13 (both
    tails, P and Q each relative)."""
    for z in (-8.0, -3.0, -0.5, 0.0, 0.7, 4.0, 9.0):
        y = a + z * np.sqrt(a)
        if y <= 0.0:
            continue
        p, q = gamma_pq(a, [y])
        exact = _lower_p(a, y) if y < a else 1 - mp.gammainc(mpf(a), mpf(y), mp.inf, regularized=True)
        assert abs(p[0] / exact - 1) < 1e-13 and abs(q[0] / (1 - exact) - 1) < 1e-13, (a, z)


def test_incomplete_gamma_refuses_small_shapes():
    with pytest.raises(ValueError, match="a must be at least 1000"):
        gamma_pq(2.5, [1.0])


@pytest.mark.parametrize("h", [0.3, 2.5, 31.0, 5e3, 5e6])
def test_poisson_log_pmf_keeps_its_digits_at_large_rates(h):
    """The plain -h + k log h - log k! cancels to 1e-11 relative at h = 5000; Loader's form stays at a few ulps."""
    k = np.unique(np.clip(np.round(np.linspace(h - 8 * np.sqrt(h) - 5, h + 8 * np.sqrt(h) + 5, 25)), 0, None))
    got = poisson_log_pmf(k, h)
    for kk, g in zip(k, got):
        exact = -mpf(h) + mpf(kk) * mp.log(mpf(h)) - mp.loggamma(mpf(kk) + 1)
        assert abs(g - exact) <= 4e-14 * max(1.0, abs(float(exact))), (h, kk)


def test_the_issues_point_d_1e7_alpha_0_999999():
    """`rtm --mechanism gaussian --mu 1 --dimension 10000000 --alpha 0.999999` printed j = 1.00705e-06 (and 1.00816e-06
    at mu 1e-3, above 1 - alpha); the 40-digit series gives 9.98894890e-07 (and 9.99999999e-07)."""
    d, alpha = 10**7, 0.999999
    x = _chi2_isf(alpha, d)
    threshold = Chi2(d).isf(alpha)
    assert abs(threshold / float(x) - 1) < 1e-15
    for mu in (1e-3, 1.0):
        exact = _ncx2_cdf(x, d, mu * mu)
        got = float(rtm.gaussian(mu, d)(alpha))
        assert abs(got / float(exact) - 1) < 1e-11 and got <= 1 - alpha


@pytest.mark.parametrize("d, nc, level", [(10**6, 25.0, 1 - 1e-9), (10**6, 1e-6, 1 - 1e-12), (2 * 10**4, 100.0, 1 - 1e-15),
                                          (10**5, 1e4, 0.9)])
def test_noncentral_law_against_the_series_on_a_grid_of_corners(d, nc, level):
    x = _chi2_isf(level, d)
    got = NoncentralChi2(d, nc).cdf(float(x))
    assert abs(got / float(_ncx2_cdf(float(x), d, nc)) - 1) < 1e-12


def test_quantiles_invert_the_laws():
    for d in (2 * 10**4, 10**7):
        law = Chi2(d)
        for q in (1e-12, 1e-3, 0.5, 0.999, 1 - 1e-12):
            assert abs(law.cdf(law.ppf(q)) / q - 1) < 1e-12 and abs(law.sf(law.isf(q)) / q - 1) < 1e-12
        ncl = NoncentralChi2(d, 30.0)
        for q in (1e-9, 0.5, 1 - 1e-9):
            assert abs(ncl.cdf(ncl.ppf(q)) / q - 1) < 1e-11


@pytest.mark.parametrize("mu, d, steps", [(1e-3, 10**6, 1), (5.0, 10**6, 1), (0.5, 10**6, 100), (2.0, 3 * 10**4, 4),
                                          (100.0, 10**7, 1)])
def test_rtm_gaussian_curve_never_above_the_exact_one_near_alpha_1(mu, d, steps):
    """j(alpha) <= exact (to 1e-11 relative, which the CLI's 2^-40 margin covers) and <= 1 - alpha, up to 1 - 1e-15;
    ``steps`` averages the releases (effect mu sqrt(N))."""
    curve = rtm.gaussian(mu, d, steps)
    for alpha in (0.999999, 1 - 1e-9, 1 - 1e-12, 1 - 1e-15):
        exact = float(_ncx2_cdf(_chi2_isf(alpha, d), d, steps * mu * mu))
        got = float(curve(alpha))
        assert got <= exact * (1 + 1e-11) and got <= 1 - alpha, (alpha, got, exact)
