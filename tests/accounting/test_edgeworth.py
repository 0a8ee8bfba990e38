"""Edgeworth and CLT approximations (fdp.accounting.edgeworth) against closed forms, Monte Carlo and an FFT ground truth.

ReRo paper Sec. 2 options (2) and (3), Remark 2, App. 4.3 and footnote 3; Bu et al. (2020) for the
CLT.  The ground truth for composed curves is our own direct numerical convolution of the one-step
privacy-loss distribution with numpy's FFT (below), checked against closed forms (Gaussian p = 1,
any N) and against Lemma 9 of the RTM paper (tradeoff.subsample, N = 1).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.special import eval_hermitenorm, ndtr
from scipy.stats import norm

from fdp import Mechanism
from fdp.accounting import edgeworth, pld, privacy_loss
from fdp.accounting import edgeworth as ew
from fdp.curves import rero, tradeoff

IMAGENET = Mechanism("gaussian", 2.5, 16384 / 1281167, 71_589)
ALPHAS = np.array([1e-5, 1e-4, 1e-3, 1e-2, 0.1, 0.3, 0.5, 0.9])
PROPS = settings(max_examples=40, deadline=None)


# ---------------------------------------------------------------------------------------------
# ground truth: direct numerical convolution of the one-step loss with numpy's FFT
# ---------------------------------------------------------------------------------------------


def _one_step_loss(mechanism, scale, p, nz=400_000, zmax=14.0):
    """Support points of the one-step loss and their masses under H0 and H1.

    Gaussian: the output (in units of sigma) is cut into nz cells on [-14, 14 + mu] with exact
    normal masses, the loss taken at each cell's midpoint.  Laplace: cells on (0, mu) in units of
    b with exact Laplace masses, plus the two atoms of the loss (x <= 0 and x >= 1) with their
    exact masses.
    """
    mu = 1.0 / scale
    if mechanism == "gaussian":
        edges = np.linspace(-zmax, zmax + mu, nz + 1)
        c0, c1 = ndtr(edges), ndtr(edges - mu)
        w0 = np.diff(c0)
        w0[0] += c0[0]
        w0[-1] += 1 - c0[-1]
        wq = np.diff(c1)
        wq[0] += c1[0]
        wq[-1] += 1 - c1[-1]
        t = mu * 0.5 * (edges[1:] + edges[:-1]) - 0.5 * mu * mu
    else:
        edges = np.linspace(0.0, mu, nz + 1)
        w0 = np.concatenate([[0.5], np.diff(1 - 0.5 * np.exp(-edges)), [0.5 * np.exp(-mu)]])
        wq = np.concatenate([[0.5 * np.exp(-mu)], np.diff(0.5 * np.exp(edges - mu)), [0.5]])
        t = np.concatenate([[-mu], (edges[1:] + edges[:-1]) - mu, [mu]])
    w1 = (1 - p) * w0 + p * wq
    loss = np.log1p(p * np.expm1(t)) if p < 1 else t
    return loss, w0, w1


def _fft_curve(mechanism, scale, p, steps, alphas, bins_per_sd, width_sd=40.0):
    """T(P^N, Q^N)(alphas) from the N-fold convolution of the discretised one-step loss.

    The loss is put on a grid of spacing h ~ sd(S) / bins_per_sd whose ends are the smallest and
    largest loss values (so the Laplace atoms sit on grid points); every other mass is split
    between its two neighbouring grid points so that the mean is exact.  The N-fold convolution
    is one FFT power.  The CDFs are interpolated linearly between the half-grid points.
    The discretisation error is O(h^2): callers extrapolate (Richardson) from h and h/2.
    """
    loss, w0, w1 = _one_step_loss(mechanism, scale, p)
    m0, m1 = w0 @ loss, w1 @ loss
    sd = math.sqrt(steps * max(w0 @ (loss - m0) ** 2, w1 @ (loss - m1) ** 2))
    origin, span = loss.min(), loss.max() - loss.min()
    n = int(np.ceil(span / (sd / bins_per_sd)))
    h = span / n
    pos = (loss - origin) / h
    j = np.minimum(np.floor(pos).astype(np.int64), n)
    frac = pos - j
    width = (abs(steps * (m1 - m0)) + 2 * width_sd * sd) / h
    size = 1 << int(np.ceil(np.log2(max(width, n + 2) + 2)))
    kstart = int(np.floor((min(steps * m0, steps * m1) - width_sd * sd - steps * origin) / h))
    k = np.arange(kstart, kstart + size)
    pmfs = []
    for w in (w0, w1):
        a = np.bincount(j, w * (1 - frac), minlength=size) + np.bincount(j + 1, w * frac, minlength=size)
        pmfs.append(np.fft.irfft(np.fft.rfft(a[:size]) ** steps, size)[k % size])
    s = steps * origin + k * h
    sf0 = np.cumsum(pmfs[0][::-1])[::-1]  # P0(S > s - h/2)
    cdf1 = np.cumsum(pmfs[1])  # P1(S <= s + h/2)
    crit = np.interp(-np.asarray(alphas, float), -sf0, s - h / 2)
    return np.interp(crit, s + h / 2, cdf1)


@lru_cache(maxsize=None)
def _exact(mechanism, scale, p, steps, alphas=tuple(ALPHAS), bins_per_sd=2000):
    """Richardson extrapolation of the FFT curve from h and h/2 (error O(h^4), ~1e-8 here)."""
    coarse = _fft_curve(mechanism, scale, p, steps, alphas, bins_per_sd)
    fine = _fft_curve(mechanism, scale, p, steps, alphas, 2 * bins_per_sd)
    return (4 * fine - coarse) / 3


def _errors(mechanism, scale, p, steps):
    exact = _exact(mechanism, scale, p, steps)
    return [float(np.max(np.abs(ew.edgeworth_curve(Mechanism(mechanism, scale, p, steps), order=o)(ALPHAS) - exact))) for o in range(5)]


def test_fft_ground_truth_matches_closed_forms():
    # Gaussian p = 1: the composed curve is G_{sqrt(N) mu} (ReRo Cor. 2)
    for steps in (1, 1000):
        got = _exact("gaussian", 2.0, 1.0, steps)
        np.testing.assert_allclose(got, tradeoff.gaussian(math.sqrt(steps) / 2.0)(ALPHAS), atol=1e-8)
    # N = 1: Lemma 9 of the RTM paper, p f + (1 - p)(1 - alpha)
    for mech, curve in (("gaussian", tradeoff.gaussian(1.0)), ("laplace", tradeoff.laplace(1.0))):
        for p in (0.1, 0.5):
            got = _exact(mech, 1.0, p, 1)
            np.testing.assert_allclose(got, tradeoff.subsample(curve, p)(ALPHAS), atol=1e-7)


# ---------------------------------------------------------------------------------------------
# the privacy-loss random variable and its cumulants
# ---------------------------------------------------------------------------------------------


def test_loss_sign_and_closed_form():
    # L = log q/p is large where H1 is likely: increasing in x for both mechanisms
    x = np.linspace(-3, 4, 50)
    for mech in privacy_loss.MECHANISMS:
        assert np.all(np.diff(privacy_loss.privacy_loss(Mechanism(mech, 1.0, 0.3), x)) >= 0)
    # Gaussian p = 1: L = (2x - 1) / (2 sigma^2); Laplace p = 1: clip to [-mu, mu]
    np.testing.assert_allclose(privacy_loss.privacy_loss(Mechanism("gaussian", 2.0, 1.0), x), (2 * x - 1) / 8)
    np.testing.assert_allclose(privacy_loss.privacy_loss(Mechanism("laplace", 0.5, 1.0), x), np.clip(2 * (2 * x - 1), -2, 2))
    # no overflow for large log-ratios
    assert privacy_loss.privacy_loss(Mechanism("gaussian", 0.01, 0.5), 100.0) == pytest.approx(np.log(0.5) + 199 / 2e-4, rel=1e-12)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.5])
def test_gaussian_cumulants_closed_form_and_quadrature(sigma):
    mu2 = 1 / sigma**2
    for hyp, sign in (("H0", -1), ("H1", 1)):
        closed = privacy_loss.loss_cumulants(Mechanism("gaussian", sigma, 1.0), hyp)
        np.testing.assert_array_equal(closed, [sign * mu2 / 2, mu2, 0, 0, 0, 0])
        quad = privacy_loss.loss_cumulants(Mechanism("gaussian", sigma, 1.0), hyp, method="quad")
        np.testing.assert_allclose(quad[:2], closed[:2], rtol=1e-10)
        # higher cumulants vanish (relative to the matching power of the standard deviation)
        assert np.all(np.abs(quad[2:] / mu2 ** (np.arange(3, 7) / 2)) < 1e-9)


@pytest.mark.parametrize("b", [0.3, 1.0, 4.0])
def test_laplace_mean_is_kl_divergence(b):
    # E_0[L] = -KL(P||Q) and E_1[L] = KL(Q||P) = e^{-mu} + mu - 1 for Lap(0, b) vs Lap(1, b)
    mu = 1 / b
    kl = math.exp(-mu) + mu - 1
    assert privacy_loss.loss_cumulants(Mechanism("laplace", b, 1.0), "H0")[0] == pytest.approx(-kl, rel=1e-10)
    assert privacy_loss.loss_cumulants(Mechanism("laplace", b, 1.0), "H1")[0] == pytest.approx(kl, rel=1e-10)
    # p = 1: symmetric atoms at -/+ mu; L under H1 is -L under H0 by the reflection x -> 1 - x
    k0, k1 = privacy_loss.loss_cumulants(Mechanism("laplace", b, 1.0), "H0"), privacy_loss.loss_cumulants(Mechanism("laplace", b, 1.0), "H1")
    np.testing.assert_allclose(k1, k0 * np.array([-1, 1, -1, 1, -1, 1]), rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize("mech,scale,p", [("gaussian", 2.0, 0.3), ("gaussian", 2.5, 0.0128), ("laplace", 1.0, 0.2)])
def test_h1_moments_by_change_of_measure(mech, scale, p):
    # dQ = e^L dP: E_1[L] = E_0[L e^L] and E_1[L^2] = E_0[L^2 e^L], integrated here independently
    mu = 1 / scale
    if mech == "gaussian":
        def e0(g):
            f = lambda z: g(np.log1p(p * np.expm1(mu * z - mu * mu / 2))) * norm.pdf(z)  # noqa: E731
            return integrate.quad(f, -30, 30 + mu, epsabs=1e-16, epsrel=1e-12, limit=200)[0]
    else:
        lo, hi = np.log1p(p * np.expm1(-mu)), np.log1p(p * np.expm1(mu))

        def e0(g):
            f = lambda u: g(np.log1p(p * np.expm1(2 * u - mu))) * 0.5 * np.exp(-u)  # noqa: E731
            mid = integrate.quad(f, 0, mu, epsabs=0, epsrel=1e-12)[0]
            return mid + 0.5 * g(lo) + 0.5 * np.exp(-mu) * g(hi)
    k1 = privacy_loss.loss_cumulants(Mechanism(mech, scale, p), "H1")
    assert e0(lambda x: np.exp(x)) == pytest.approx(1.0, rel=1e-10)
    assert e0(lambda x: x * np.exp(x)) == pytest.approx(k1[0], rel=1e-8)
    assert e0(lambda x: x * x * np.exp(x)) == pytest.approx(k1[1] + k1[0] ** 2, rel=1e-8)


@pytest.mark.parametrize(
    "mech,scale,p", [("gaussian", 1.5, 0.3), ("gaussian", 2.5, 0.0128), ("laplace", 1.0, 0.3), ("laplace", 0.5, 1.0)]
)
@pytest.mark.parametrize("hyp", ["H0", "H1"])
def test_cumulants_match_monte_carlo(mech, scale, p, hyp):
    k = privacy_loss.loss_cumulants(Mechanism(mech, scale, p), hyp)
    sample = privacy_loss.sample_privacy_loss(Mechanism(mech, scale, p), hyp, 1_000_000, seed=7)
    k2, k3, k4, k5, k6 = k[1:]
    central = [k2, k3, k4 + 3 * k2**2, k5 + 10 * k3 * k2, k6 + 15 * k4 * k2 + 10 * k3**2 + 15 * k2**3]
    dev = sample - k[0]
    zscores = [dev.mean() / (sample.std() / 1e3)]
    for r, m in zip(range(2, 7), central):
        x = dev**r
        zscores.append((x.mean() - m) / (x.std() / 1e3))
    assert np.all(np.abs(zscores) < 5), zscores


def test_cumulants_add_under_composition():
    one = privacy_loss.loss_cumulants(Mechanism("laplace", 1.0, 0.2), "H1")
    np.testing.assert_allclose(privacy_loss.loss_cumulants(Mechanism("laplace", 1.0, 0.2, 250), "H1"), 250 * one, rtol=1e-15)
    series = ew.EdgeworthSeries(one, 250, order=0)
    assert series.mean == pytest.approx(250 * one[0]) and series.std == pytest.approx(math.sqrt(250 * one[1]))


@pytest.mark.parametrize("b", [0.3, 1.0, 3.0])
def test_chi2_divergence(b):
    # chi^2 = E_P[r^2] - 1, by quadrature of q^2/p over the three pieces (Laplace), closed form (Gaussian)
    mu = 1 / b
    f = lambda x: np.exp(-2 * abs(x - mu) + abs(x)) / 2  # noqa: E731
    val = sum(integrate.quad(f, a, c, epsrel=1e-12)[0] for a, c in ((-60, 0), (0, mu), (mu, mu + 60))) - 1
    assert privacy_loss.chi2_divergence("laplace", b) == pytest.approx(val, rel=1e-9)
    assert privacy_loss.chi2_divergence("gaussian", b) == pytest.approx(math.expm1(mu * mu), rel=1e-14)


# ---------------------------------------------------------------------------------------------
# the Edgeworth curve
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("order", range(5))
@pytest.mark.parametrize("sigma,steps", [(0.5, 1), (2.0, 10), (8.0, 1000)])
def test_gaussian_p1_is_exact_for_every_order(order, sigma, steps):
    curve = ew.edgeworth_curve(Mechanism("gaussian", sigma, 1.0, steps), order=order)
    exact = tradeoff.gaussian(math.sqrt(steps) / sigma)
    a = np.concatenate([[0.0, 1e-12, 1e-7], ALPHAS, [1.0]])
    np.testing.assert_allclose(curve(a), exact(a), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(curve.power(a), exact.power(a), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(curve.inverse(a), exact(a), rtol=1e-10, atol=1e-14)
    assert curve.alpha_range == (0.0, 1.0)


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5])
def test_sgm_error_shrinks_with_order(p):
    # sigma = 2, N = 100; the error is the largest |f_Edgeworth - f_exact| over ALPHAS
    errs = _errors("gaussian", 2.0, p, 100)
    assert all(b < a for a, b in zip(errs, errs[1:])), errs
    assert errs[0] > 5e-3 and errs[4] < 1e-5, errs


def test_sgm_error_shrinks_with_n_in_the_clt_regime():
    # p sqrt(N) = 3 fixed (sigma = 2, mu_tilde = 1.60): each order converges, higher orders faster
    table = {n: _errors("gaussian", 2.0, 3 / math.sqrt(n), n) for n in (100, 1000, 10000)}
    for order in range(5):
        assert table[1000][order] < table[100][order], (order, table)
        assert table[10000][order] < table[1000][order] or table[10000][order] < 1e-8, (order, table)
    for n, errs in table.items():
        assert all(b < a for a, b in zip(errs, errs[1:])) or errs[-1] < 1e-8, (n, errs)
    # measured: order 0: 2.4e-2, 1.1e-2, 4.1e-3; order 4: 2.7e-6, 7.2e-8, <1e-8
    assert table[100][0] > 1e-2 and table[1000][4] < 5e-7


def test_sgm_fixed_p_larger_n():
    errs = _errors("gaussian", 2.0, 0.1, 1000)  # mu_tilde = 1.69
    assert all(b < a for a, b in zip(errs, errs[1:])), errs
    assert errs[4] < 1e-5


def test_slm_error_shrinks_with_order_and_n():
    # the Laplace loss has atoms; the series still converges (Cramer's condition holds)
    small, large = _errors("laplace", 1.0, 0.3, 100), _errors("laplace", 1.0, 3 / math.sqrt(1000), 1000)
    assert all(b < a for a, b in zip(large, large[1:])), large
    assert small[0] > small[2] > small[4] and all(lg < sm for sm, lg in zip(small, large)), (small, large)
    assert large[4] < 2e-6, large


def test_single_step_is_not_asymptotic():
    # N = 1 (exact: Lemma 9): the series is only a rough approximation, far worse than at N = 100
    exact = tradeoff.subsample(tradeoff.gaussian(0.5), 0.5)(ALPHAS)
    err_n1 = np.max(np.abs(ew.edgeworth_curve(Mechanism("gaussian", 2.0, 0.5, 1), order=0)(ALPHAS) - exact))
    assert err_n1 > 1e-2
    assert err_n1 > 100 * _errors("gaussian", 2.0, 0.5, 100)[4]


def test_imagenet_workload_kappa_down_to_1e7():
    kappas = np.array([1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1])
    truth = 1 - _exact(*IMAGENET.args, alphas=tuple(kappas), bins_per_sd=4000)
    gammas = {o: ew.gamma_edgeworth(IMAGENET, kappa=kappas, order=o) for o in range(5)}
    for o, g in gammas.items():
        assert np.all(np.isfinite(g)) and np.all(g >= kappas) and np.all(np.diff(g) > 0), o
    np.testing.assert_allclose(gammas[4], truth, rtol=1e-4)  # measured: 2.1e-5 at kappa = 1e-7
    np.testing.assert_allclose(gammas[3], gammas[4], rtol=1e-5)  # the paper's two readings agree
    assert abs(gammas[0][0] / truth[0] - 1) > 10 * abs(gammas[4][0] / truth[0] - 1)
    assert ew.edgeworth_curve(IMAGENET).alpha_range == (0.0, 1.0)
    # the library's generic path gives the same numbers
    np.testing.assert_allclose(rero.gamma(ew.edgeworth_curve(IMAGENET), kappas), gammas[4], rtol=1e-14)


def test_inverse_is_the_other_direction():
    curve = ew.edgeworth_curve(Mechanism("gaussian", 2.0, 0.3, 100))
    beta = curve(ALPHAS)
    np.testing.assert_allclose(curve.inverse(beta), ALPHAS, rtol=1e-8)
    swapped = curve.swapped()
    np.testing.assert_allclose(swapped(beta), ALPHAS, rtol=1e-8)


def test_vectorised_shapes():
    curve = ew.edgeworth_curve(Mechanism("laplace", 1.0, 0.2, 500))
    k = np.array([[1e-6, 1e-3], [0.1, 0.5]])
    g = ew.gamma_edgeworth(Mechanism("laplace", 1.0, 0.2, 500), k)
    assert g.shape == (2, 2)
    np.testing.assert_allclose(g.ravel(), [float(curve.power(v)) for v in k.ravel()], rtol=1e-14)
    assert np.ndim(ew.gamma_edgeworth(Mechanism("laplace", 1.0, 0.2, 500), 0.1)) == 0
    assert curve(0.0) == 1.0 and curve(1.0) == 0.0


# ---------------------------------------------------------------------------------------------
# detection of truncated series that are not distributions
# ---------------------------------------------------------------------------------------------


def _independent_density(cumulants, steps, order, z):
    """phi(z) [1 + sum_k N^{-k/2} P_k(z)] with the Edgeworth polynomials written out directly."""
    k = np.asarray(cumulants)
    lam = {r: k[r - 1] / k[1] ** (r / 2) for r in range(3, 7)}
    he = lambda n: eval_hermitenorm(n, z)  # noqa: E731
    terms = [
        lam[3] / 6 * he(3),
        lam[4] / 24 * he(4) + lam[3] ** 2 / 72 * he(6),
        lam[5] / 120 * he(5) + lam[3] * lam[4] / 144 * he(7) + lam[3] ** 3 / 1296 * he(9),
        lam[6] / 720 * he(6) + (lam[4] ** 2 / 1152 + lam[3] * lam[5] / 720) * he(8)
        + lam[3] ** 2 * lam[4] / 1728 * he(10) + lam[3] ** 4 / 31104 * he(12),
    ]
    return norm.pdf(z) * (1 + sum(steps ** (-(j + 1) / 2) * terms[j] for j in range(order)))


def test_invalid_series_is_detected():
    # one step, p = 1e-3: the loss is extremely skewed (l_3 = 6, l_6 = 3e5)
    args = ("gaussian", 1.0, 1e-3, 1)
    k0 = privacy_loss.loss_cumulants(Mechanism("gaussian", 1.0, 1e-3), "H0")
    # order 4: the density of the truncated series is negative at the mean itself
    assert _independent_density(k0, 1, 4, np.array([0.0]))[0] < 0
    with pytest.raises(ValueError, match="negative density at its own mean"):
        ew.edgeworth_curve(Mechanism(*args), order=4)
    with pytest.raises(ValueError, match="Edgeworth"):
        ew.gamma_edgeworth(Mechanism(*args), kappa=0.01)
    # order 2: a distribution only on a small interval around the mean; levels needing more raise
    z = np.linspace(-3, 3, 601)
    assert np.min(_independent_density(k0, 1, 2, z)) < 0
    curve = ew.edgeworth_curve(Mechanism(*args), order=2)
    lo, hi = curve.h0.z_range
    assert -3 < lo < 0 < hi < 3
    assert np.all(_independent_density(k0, 1, 2, np.linspace(lo, hi, 200)[1:-1]) > 0)
    for level in (1e-3, 0.99):
        with pytest.raises(ValueError, match=r"alpha=.*not|valid CDFs"):
            curve(level)
        with pytest.raises(ValueError, match="valid CDFs"):
            curve.power(level)
    assert np.isfinite(curve(0.1))  # inside alpha_range the curve is defined
    assert curve.alpha_range[0] < 0.1 < curve.alpha_range[1]


@pytest.mark.parametrize("args", [IMAGENET.args, ("gaussian", 2.0, 0.1, 100), ("laplace", 1.0, 0.1, 1000)])
@pytest.mark.parametrize("order", range(5))
def test_benign_series_are_not_flagged(args, order):
    curve = ew.edgeworth_curve(Mechanism(*args), order=order)
    kappas = np.array([1e-7, 1e-4, 0.1, 0.5])
    assert np.all(np.isfinite(curve.power(kappas)))
    assert curve.alpha_range[0] <= 1e-7 and curve.alpha_range[1] >= 0.5
    # the region of the loss these levels use: the truncated series really is a distribution there
    # (odd orders have an odd-degree density polynomial, negative somewhere far in the left tail)
    c_lo, c_hi = curve._critical_h0(0.5), curve._critical_h0(1e-7)
    for series in (curve.h0, curve.h1):
        z = np.linspace(series.standardise(c_lo), series.standardise(c_hi), 1001)
        assert np.all(_independent_density(series.cumulants, series.steps, order, z) > 0)
        assert series.z_range[0] < z[0] and series.z_range[1] > z[-1]


def test_series_density_and_cdf_are_consistent():
    s = ew.EdgeworthSeries(privacy_loss.loss_cumulants(Mechanism("gaussian", 2.0, 0.3), "H0"), 100, order=4)
    z = np.linspace(-5, 5, 11)
    np.testing.assert_allclose(s.density_factor(z) * norm.pdf(z), _independent_density(s.cumulants, 100, 4, z), rtol=1e-10)
    x = s.mean + s.std * z
    np.testing.assert_allclose(s.cdf(x) + s.sf(x), 1.0, rtol=1e-14)
    for a, b in zip(x[:-1], x[1:]):  # the CDF is the integral of the density
        assert s.cdf(b) - s.cdf(a) == pytest.approx(integrate.quad(s.pdf, a, b, epsrel=1e-12)[0], rel=1e-9, abs=1e-15)


@PROPS
@given(
    mechanism=st.sampled_from(privacy_loss.MECHANISMS),
    scale=st.floats(0.8, 5.0),
    log_steps=st.floats(1.0, 5.0),
    p_sqrt_n=st.floats(0.2, 5.0),
    order=st.integers(0, 4),
    kappas=st.lists(st.floats(1e-9, 0.999), min_size=2, max_size=12),
)
def test_gamma_is_a_valid_bound_or_an_error(mechanism, scale, log_steps, p_sqrt_n, order, kappas):
    steps = int(10**log_steps)
    p = min(1.0, p_sqrt_n / math.sqrt(steps))
    try:
        curve = ew.edgeworth_curve(Mechanism(mechanism, scale, p, steps), order=order)
    except ValueError as exc:
        assert "Edgeworth" in str(exc)
        return
    k = np.sort(np.asarray(kappas))
    lo, hi = curve.alpha_range
    inside = (k >= lo) & (k <= hi)
    if np.any(~inside):
        with pytest.raises(ValueError, match="valid CDFs"):
            curve.power(k)
    k = k[inside]
    if k.size:
        g = curve.power(k)
        assert np.all(np.isfinite(g))
        assert np.all(g >= k) and np.all(g <= 1.0)
        assert np.all(np.diff(g) >= -1e-12 * np.maximum(g[1:], 1e-300))
        f = curve(k)
        np.testing.assert_allclose(f + g, 1.0, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# the CLT approximation
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sigma,p,steps", [(2.5, 16384 / 1281167, 71_589), (1.0, 0.01, 10_000), (0.8, 0.5, 3)])
def test_clt_mu_formula(sigma, p, steps):
    expected = p * math.sqrt(steps * (math.exp(1 / sigma**2) - 1))  # Bu et al. 2020; ReRo footnote 3
    assert Mechanism("gaussian", sigma, p, steps).clt_mu == pytest.approx(expected, rel=1e-14)
    curve = ew.clt_curve(Mechanism("gaussian", sigma, p, steps))
    np.testing.assert_allclose(curve(ALPHAS), tradeoff.gaussian(expected)(ALPHAS), rtol=1e-14)


@pytest.mark.parametrize("mech,scale", [("gaussian", 2.5), ("gaussian", 0.8), ("laplace", 1.0)])
def test_clt_is_the_limit_of_order_zero(mech, scale):
    # N -> infinity with p sqrt(N) = 1.5: the order-0 curve's effect size N (E1 L - E0 L) / sd0(S) -> mu_tilde
    gaps, curve_gaps = [], []
    for steps in (10**2, 10**4, 10**6, 10**8):
        p = 1.5 / math.sqrt(steps)
        k0 = privacy_loss.loss_cumulants(Mechanism(mech, scale, p, steps), "H0")
        k1 = privacy_loss.loss_cumulants(Mechanism(mech, scale, p, steps), "H1")
        mu_eff = (k1[0] - k0[0]) / math.sqrt(k0[1])
        mu_tilde = Mechanism(mech, scale, p, steps).clt_mu
        gaps.append(abs(mu_eff / mu_tilde - 1))
        order0 = ew.edgeworth_curve(Mechanism(mech, scale, p, steps), order=0)
        curve_gaps.append(np.max(np.abs(order0(ALPHAS) - ew.clt_curve(Mechanism(mech, scale, p, steps))(ALPHAS))))
    assert all(b < a / 5 for a, b in zip(gaps, gaps[1:])), gaps  # O(p^2) = O(1/N) once p is small
    assert gaps[-1] < 1e-4
    assert all(b < a / 3 for a, b in zip(curve_gaps, curve_gaps[1:])), curve_gaps  # O(p) = O(N^-1/2) once p is small
    assert curve_gaps[-1] < 2e-3


def test_clt_uses_e_mu_squared_not_e_mu():
    # ReRo main text prints e^{mu_2}, its footnote e^{1/sigma^2}: large N, small p decides it
    _, sigma, p, steps = IMAGENET.args
    kappa = np.array([1e-7, 1e-4, 0.1])
    edgeworth = ew.gamma_edgeworth(IMAGENET, kappa=kappa)
    with_mu2 = rero.gamma(tradeoff.gaussian(p * math.sqrt(steps * math.expm1(1 / sigma**2))), kappa)
    with_mu = rero.gamma(tradeoff.gaussian(p * math.sqrt(steps * math.expm1(1 / sigma))), kappa)
    np.testing.assert_allclose(with_mu2, edgeworth, rtol=0.02)  # measured 1.1 % at 1e-7
    assert np.all(with_mu / edgeworth > 1.5) and with_mu[0] / edgeworth[0] > 30
    # and at sigma = 0.8 (mu > 1) e^{mu} errs the other way; the order-0 limit picks e^{mu^2} again
    steps, p = 10**6, 1.5e-3
    k0, k1 = (privacy_loss.loss_cumulants(Mechanism("gaussian", 0.8, p, steps), h) for h in ("H0", "H1"))
    mu_eff = (k1[0] - k0[0]) / math.sqrt(k0[1])
    assert mu_eff == pytest.approx(p * math.sqrt(steps * math.expm1(1 / 0.64)), rel=1e-3)
    assert abs(mu_eff / (p * math.sqrt(steps * math.expm1(1 / 0.8))) - 1) > 0.1


# ---------------------------------------------------------------------------------------------
# argument checks
# ---------------------------------------------------------------------------------------------

GOOD = dict(mechanism="gaussian", noise_multiplier=1.0, sampling_rate=0.1, steps=10, kappa=0.1, order=2)


@pytest.mark.parametrize(
    "name,value",
    [
        ("mechanism", "exponential"),
        ("mechanism", None),
        ("noise_multiplier", 0.0),
        ("noise_multiplier", -1.0),
        ("noise_multiplier", float("nan")),
        ("noise_multiplier", "1"),
        ("sampling_rate", 0.0),
        ("sampling_rate", 1.5),
        ("steps", 0),
        ("steps", 2.5),
        ("steps", True),
        ("order", 5),
        ("order", -1),
        ("order", 2.0),
        ("kappa", 0.0),
        ("kappa", 1.0),
        ("kappa", float("nan")),
        ("kappa", [0.1, 2.0]),
    ],
)
def test_bad_input_names_the_argument(name, value):
    args = dict(GOOD, **{name: value})
    with pytest.raises(ValueError, match="noise" if name == "mechanism" else name):  # the Mechanism's field
        ew.gamma_edgeworth(Mechanism(*(args[k] for k in ("mechanism", "noise_multiplier", "sampling_rate", "steps"))),
                           args["kappa"], args["order"])


def test_bad_input_other_functions():
    with pytest.raises(ValueError, match="hypothesis"):
        privacy_loss.loss_cumulants(Mechanism("gaussian", 1.0, 0.1), "H2")
    with pytest.raises(ValueError, match="method"):
        privacy_loss.loss_cumulants(Mechanism("gaussian", 1.0, 0.1), "H0", method="mc")
    with pytest.raises(ValueError, match="steps"):
        Mechanism("gaussian", 1.0, 0.1, 0).clt_mu
    with pytest.raises(ValueError, match="noise"):
        ew.clt_curve(Mechanism("gauss", 1.0, 0.1, 10))
    with pytest.raises(ValueError, match=r"mechanism must be a fdp.Mechanism, got 'gaussian': pass Mechanism\('gaussian'"):
        ew.clt_curve("gaussian")
    with pytest.raises(ValueError, match="seed"):
        privacy_loss.sample_privacy_loss(Mechanism("gaussian", 1.0, 0.1), "H0", 10, seed=None)
    with pytest.raises(ValueError, match="size"):
        privacy_loss.sample_privacy_loss(Mechanism("gaussian", 1.0, 0.1), "H0", 0)
    with pytest.raises(ValueError, match="x must be finite"):
        privacy_loss.privacy_loss(Mechanism("gaussian", 1.0, 0.1), [0.0, np.inf])
    with pytest.raises(ValueError, match="cumulants"):
        ew.EdgeworthSeries([0.0, 1.0, 0.1], 10, order=4)
    with pytest.raises(ValueError, match="alpha"):
        ew.edgeworth_curve(Mechanism("gaussian", 1.0, 0.1, 10))(1.5)


# --- from test_extremes, the first round (no silently wrong answers: extreme but legal inputs) ---------------


@pytest.mark.slow
def test_edgeworth_error_estimate_tracks_the_true_error():
    curve = edgeworth.edgeworth_curve(Mechanism("gaussian", 1.0, 0.01, 1000))
    low, up = pld.tradeoff_bracket(Mechanism("gaussian", 1.0, 0.01, 1000), discretization=1e-4).gamma([1e-3])
    true_err = abs(curve.power(1e-3) - up[0])
    assert true_err <= 3 * curve.error_estimate(1e-3) and curve.error_estimate(1e-3) <= 10 * true_err
