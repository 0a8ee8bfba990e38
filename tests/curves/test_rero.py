"""ReRo bounds (fdp.curves.rero) against the papers' formulas and independent computations.

ReRo paper Thm. 1 / Cor. 2 (gamma = 1 - f(kappa)), Hayes et al. eq. 2 (RDP bound), eq. 4 (advantage),
eq. 5 and App. H (Fano bound of Guo et al.), Dong et al. Cor. 2.13 (mu-GDP -> (eps, delta)).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from fdp.curves import rero, tradeoff

KAPPAS = np.array([1e-6, 1e-3, 0.01, 0.1, 0.3, 0.5, 0.9])


def gdp_delta(eps, mu):
    """Exact delta(eps) of mu-GDP (Dong, Roth, Su 2022, Cor. 2.13)."""
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


# ---------------------------------------------------------------------------------------------
# gamma from trade-off curves
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mu", [0.0, 0.5, 1.0, 3.0])
def test_gamma_gaussian_is_one_minus_f(mu):
    g = rero.gamma(tradeoff.gaussian(mu), KAPPAS)
    # 1 - f(kappa): the NP test at level kappa thresholds at c = Phi^-1(1 - kappa); its power is P(N(mu,1) > c)
    expected = [1.0 - norm.cdf(norm.ppf(1.0 - k) - mu) for k in KAPPAS]
    np.testing.assert_allclose(g, expected, rtol=1e-9, atol=1e-12)
    assert g.shape == KAPPAS.shape


def test_gamma_small_kappa_is_accurate():
    # at kappa = 1e-15 the power is tiny: 1 - f would lose all digits, gamma must not
    k = 1e-15
    assert rero.gamma(tradeoff.gaussian(1.0), k) == pytest.approx(norm.sf(norm.isf(k) - 1.0), rel=1e-9)
    assert rero.gamma(tradeoff.laplace(1.0), k) == pytest.approx(k * math.e, rel=1e-9)


@pytest.mark.parametrize(
    "curve",
    [tradeoff.laplace(1.5), tradeoff.eps_delta(1.0, 0.01), tradeoff.subsample(tradeoff.gaussian(2.0), 0.1), tradeoff.identity()],
    ids=["laplace", "eps_delta", "sgm", "identity"],
)
def test_gamma_is_one_minus_curve(curve):
    np.testing.assert_allclose(rero.gamma(curve, KAPPAS), 1.0 - curve(KAPPAS), atol=1e-12)


def test_gamma_is_scalar_for_scalar_kappa():
    assert np.ndim(rero.gamma(tradeoff.gaussian(1.0), 0.1)) == 0


# ---------------------------------------------------------------------------------------------
# (eps, delta) bound
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps,delta", [(0.0, 0.0), (1.0, 1e-5), (3.0, 0.1), (10.0, 0.0)])
def test_gamma_eps_delta_formula(eps, delta):
    got = rero.gamma_eps_delta(eps, delta, KAPPAS)
    expected = [min(math.exp(eps) * k + delta, 1.0) for k in KAPPAS]
    np.testing.assert_allclose(got, expected, rtol=1e-14)


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.0, 4.0])
def test_gamma_eps_delta_bounds_gdp_gamma(mu):
    g_gdp = rero.gamma(tradeoff.gaussian(mu), KAPPAS)
    for eps in (0.0, 0.25, 1.0, 2.0, 5.0, 10.0):
        delta = gdp_delta(eps, mu)
        assert 0.0 <= delta <= 1.0
        assert np.all(rero.gamma_eps_delta(eps, max(delta, 0.0), KAPPAS) >= g_gdp - 1e-12)


@pytest.mark.parametrize("mu,kappa", [(1.0, 1e-3), (2.0, 0.01), (0.5, 1e-4)])
def test_gamma_eps_delta_is_tight_at_the_supporting_line(mu, kappa):
    # f_mu = sup_eps f_{eps, delta(eps)}; at alpha = kappa the supporting line has slope
    # -e^eps with eps = mu z - mu^2/2, z = Phi^-1(1 - kappa), so the bound is attained there
    eps = mu * norm.isf(kappa) - mu**2 / 2
    assert eps >= 0
    assert rero.gamma_eps_delta(eps, gdp_delta(eps, mu), kappa) == pytest.approx(
        rero.gamma(tradeoff.gaussian(mu), kappa), rel=1e-8
    )


# ---------------------------------------------------------------------------------------------
# RDP bound, Hayes et al. eq. (2)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sigma,steps", [(0.5, 1), (1.0, 10), (4.0, 100), (20.0, 3)])
def test_gamma_rdp_formula(sigma, steps):
    got = rero.gamma_rdp(sigma, steps, KAPPAS)
    expected = [
        math.exp(-max(0.0, math.sqrt(math.log(1 / k)) - math.sqrt(steps / (2 * sigma**2))) ** 2) for k in KAPPAS
    ]
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_gamma_rdp_is_one_when_noise_is_small():
    # sqrt(T / (2 sigma^2)) >= sqrt(log 1/kappa)  =>  gamma = 1
    for k in (1e-6, 0.01, 0.5):
        steps = 10
        sigma = math.sqrt(steps / (2 * math.log(1 / k))) * 0.999
        assert rero.gamma_rdp(sigma, steps, k) == 1.0
    assert np.all(rero.gamma_rdp(0.01, 1000, KAPPAS) == 1.0)


def test_gamma_rdp_is_looser_than_trade_off_gamma():
    for steps in (1, 4, 100):
        for sigma in (0.5, 1.0, 2.0, 8.0, 30.0):
            exact = rero.gamma(tradeoff.gaussian(math.sqrt(steps) / sigma), KAPPAS)
            rdp = rero.gamma_rdp(sigma, steps, KAPPAS)
            assert np.all(rdp >= exact - 1e-12), (steps, sigma)


# ---------------------------------------------------------------------------------------------
# advantage, eq. (4)
# ---------------------------------------------------------------------------------------------


def test_advantage_formula():
    assert rero.advantage(0.5, 0.1) == pytest.approx((0.5 - 0.1) / 0.9)
    assert rero.advantage(0.1, 0.1) == 0.0
    assert rero.advantage(1.0, 0.1) == pytest.approx(1.0)
    np.testing.assert_allclose(rero.advantage([0.2, 0.6], [0.1, 0.5]), [0.1 / 0.9, 0.2])


# ---------------------------------------------------------------------------------------------
# Fano bound, Hayes et al. eq. (5)
# ---------------------------------------------------------------------------------------------


def fano_f(t, info, n):
    """Eq. (5) with H(pi) = log n: H - I + t log t + (1 - t) log(1 - t) - t log(n - 1)."""
    xlx = lambda x: 0.0 if x == 0 else x * math.log(x)  # noqa: E731
    return math.log(n) - info + xlx(t) + xlx(1 - t) - t * math.log(n - 1)


@pytest.mark.parametrize("n", [2, 10, 100])
def test_fano_advantage_solves_eq5(n):
    for frac in (0.01, 0.2, 0.5, 0.9, 0.999):
        info = frac * math.log(n)
        adv = rero.fano_advantage(info, n)
        t = (1.0 - adv) * (1.0 - 1.0 / n)  # adv = (1 - t - 1/n) / (1 - 1/n)
        assert 0.0 < t < 1.0 - 1.0 / n
        assert fano_f(t, info, n) == pytest.approx(0.0, abs=1e-9)
        # the smallest root: f > 0 just before it
        assert fano_f(t - 1e-6, info, n) > 0


@pytest.mark.parametrize("n", [2, 10, 1000])
def test_fano_advantage_limits_and_monotonicity(n):
    assert rero.fano_advantage(0.0, n) == pytest.approx(0.0, abs=1e-15)
    assert rero.fano_advantage(math.log(n), n) == 1.0
    assert rero.fano_advantage(math.log(n) + 3.0, n) == 1.0
    infos = np.linspace(0.0, math.log(n), 60)
    adv = rero.fano_advantage(infos, n)
    assert adv.shape == infos.shape
    assert np.all(np.diff(adv) > 0)
    assert np.all(adv[1:] > 0) and np.all(adv <= 1)


@pytest.mark.parametrize("n", [2, 3, 10, 100, 1000])
def test_fano_advantage_without_information_is_zero_not_negative(n):
    # eq. (4): Adv lies in [0, 1]; with I = 0 the adversary can do no better than the prior
    adv = rero.fano_advantage(0.0, n)
    assert adv >= 0.0, f"negative advantage {adv!r} for prior_size={n}"
    assert adv == pytest.approx(0.0, abs=1e-15)
    assert np.all(rero.fano_advantage(np.zeros(3), n) >= 0.0)


def test_guo_bound_formula():
    for n in (2, 10, 100):
        for sigma in (0.3, 1.0, 3.0):
            for delta in (1.0, math.sqrt(2), 2.5):
                p = [1.0 / n] * n
                expected = -sum(pi * math.log(pi + (1 - pi) * math.exp(-(delta**2) / (2 * sigma**2))) for pi in p)
                got = rero.guo_mutual_information_bound(sigma, n, delta)
                assert got == pytest.approx(expected, rel=1e-12)
                assert 0 < got < math.log(n)


# Hayes et al. App. H, Table 2, row "Guo et al. (2022b)" (analytic bound), printed to 3 decimals.
# The prior is orthonormal unit vectors, so the largest distance between means is sqrt(2).
TABLE2_GUO = {
    10: [0.976, 0.593, 0.380, 0.274, 0.213, 0.174],
    100: [0.861, 0.346, 0.195, 0.131, 0.097, 0.076],
}
TABLE2_SIGMAS = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]


@pytest.mark.parametrize("n", [10, 100])
def test_fano_with_guo_bound_reproduces_table2(n):
    got = [rero.fano_advantage(rero.guo_mutual_information_bound(s, n, math.sqrt(2)), n) for s in TABLE2_SIGMAS]
    np.testing.assert_allclose(got, TABLE2_GUO[n], atol=5e-4 + 1e-12)


def mi_two_point_quad(sigma):
    """I(pi; w) for n = 2, w = e_Z + N(0, sigma^2 I): with Z = 1, D = w_1 - w_2 ~ N(1, 2 sigma^2) and
    log mu_1(w) - log((mu_1 + mu_2)(w) / 2) = log 2 - log(1 + exp(-D / sigma^2))."""
    s = math.sqrt(2) * sigma
    integrand = lambda d: norm.pdf(d, 1.0, s) * np.logaddexp(0.0, -d / sigma**2)  # noqa: E731
    val, _ = integrate.quad(integrand, 1.0 - 40 * s, 1.0 + 40 * s, limit=400, epsabs=1e-13, epsrel=1e-12)
    return math.log(2) - val


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
def test_guo_mi_mc_converges_to_quadrature_for_two_points(sigma):
    est = rero.guo_mutual_information_mc(sigma, 2, samples=400_000, seed=7)
    truth = mi_two_point_quad(sigma)
    assert est.std_error > 0
    assert abs(est.estimate - truth) <= 4 * est.std_error
    assert est.std_error < 2e-3


def test_guo_mi_mc_against_explicit_densities():
    # an independent estimator: random Z, full Gaussian log-densities of every prior element
    sigma, n, m = 1.0, 10, 20_000
    rng = np.random.default_rng(123)
    z = rng.integers(0, n, size=m)
    w = sigma * rng.standard_normal((m, n))
    w[np.arange(m), z] += 1.0
    means = np.eye(n)
    logp = np.stack([norm.logpdf(w, loc=means[j], scale=sigma).sum(axis=1) for j in range(n)], axis=1)
    terms = logp[np.arange(m), z] - (np.logaddexp.reduce(logp, axis=1) - math.log(n))
    ref, ref_se = terms.mean(), terms.std() / math.sqrt(m)
    est = rero.guo_mutual_information_mc(sigma, n, samples=100_000, seed=3)
    assert abs(est.estimate - ref) <= 4 * math.hypot(ref_se, est.std_error)


@pytest.mark.parametrize("n", [2, 10, 100])
def test_guo_mi_mc_below_analytic_bound(n):
    for sigma in (0.5, 1.0, 3.0):
        est = rero.guo_mutual_information_mc(sigma, n, samples=20_000, seed=1)
        assert est.estimate < rero.guo_mutual_information_bound(sigma, n, math.sqrt(2))
        assert 0 <= est.estimate <= math.log(n)


def test_guo_mi_mc_reproducible():
    a = rero.guo_mutual_information_mc(1.0, 10, samples=50_000, seed=5, chunk=7_000)
    b = rero.guo_mutual_information_mc(1.0, 10, samples=50_000, seed=5, chunk=7_000)
    c = rero.guo_mutual_information_mc(1.0, 10, samples=50_000, seed=5, chunk=7_000, n_jobs=2)
    d = rero.guo_mutual_information_mc(1.0, 10, samples=50_000, seed=6, chunk=7_000)
    assert a == b
    assert (a.estimate, a.std_error) == (c.estimate, c.std_error)
    assert d.estimate != a.estimate
    assert (a.samples, a.seed) == (50_000, 5)


# ---------------------------------------------------------------------------------------------
# bad input: ValueError naming the argument
# ---------------------------------------------------------------------------------------------

G = tradeoff.gaussian(1.0)
BAD_KAPPAS = [0.0, 1.0, -0.1, 1.5, float("nan")]


@pytest.mark.parametrize("kappa", BAD_KAPPAS + [[0.1, 1.0]])
@pytest.mark.parametrize(
    "call",
    [
        lambda k: rero.gamma(G, k),
        lambda k: rero.gamma_eps_delta(1.0, 0.0, k),
        lambda k: rero.gamma_rdp(1.0, 1, k),
        lambda k: rero.advantage(0.5, k),
    ],
    ids=["gamma", "gamma_eps_delta", "gamma_rdp", "advantage"],
)
def test_bad_kappa(call, kappa):
    with pytest.raises(ValueError, match="kappa"):
        call(kappa)


@pytest.mark.parametrize("sigma", [0.0, -1.0, float("nan"), float("inf"), True, "1"])
@pytest.mark.parametrize(
    "call",
    [
        (lambda s: rero.gamma_rdp(s, 1, 0.1), "noise_multiplier"),
        (lambda s: rero.guo_mutual_information_bound(s, 10), "sigma"),  # an absolute sd next to a sensitivity
        (lambda s: rero.guo_mutual_information_mc(s, 10, samples=10), "noise_multiplier"),
    ],
    ids=["gamma_rdp", "guo_bound", "guo_mc"],
)
def test_bad_sigma(call, sigma):
    call, name = call
    with pytest.raises(ValueError, match=name):
        call(sigma)


@pytest.mark.parametrize("steps", [0, -3, 2.5, "3", True, None])
def test_bad_steps(steps):
    with pytest.raises(ValueError, match="steps"):
        rero.gamma_rdp(1.0, steps, 0.1)


def test_integer_like_steps_accepted():
    assert rero.gamma_rdp(1.0, np.int64(4), 0.1) == rero.gamma_rdp(1.0, 4, 0.1)


@pytest.mark.parametrize("n", [1, 0, -2, 2.5, "10", True])
def test_bad_prior_size(n):
    with pytest.raises(ValueError, match="prior_size"):
        rero.fano_advantage(0.1, n)


@pytest.mark.parametrize("n", [0, 2.5])
def test_bad_prior_size_mutual_information(n):
    with pytest.raises(ValueError, match="prior_size"):
        rero.guo_mutual_information_bound(1.0, n)
    with pytest.raises(ValueError, match="prior_size"):
        rero.guo_mutual_information_mc(1.0, n, samples=10)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: rero.fano_advantage(-0.1, 10), "mutual_information"),
        (lambda: rero.fano_advantage(float("nan"), 10), "mutual_information"),
        (lambda: rero.gamma_eps_delta(-1.0, 0.0, 0.1), "epsilon"),
        (lambda: rero.gamma_eps_delta(1.0, 1.5, 0.1), "delta"),
        (lambda: rero.gamma_eps_delta(1.0, -0.1, 0.1), "delta"),
        (lambda: rero.advantage(1.5, 0.1), "gamma"),
        (lambda: rero.guo_mutual_information_bound(1.0, 10, sensitivity=0.0), "sensitivity"),
        (lambda: rero.guo_mutual_information_mc(1.0, 10, samples=0), "samples"),
        (lambda: rero.guo_mutual_information_mc(1.0, 10, samples=10, chunk=0), "chunk"),
        (lambda: tradeoff.subsample(G, 0.0), "sampling_rate"),
        (lambda: tradeoff.subsample(G, 1.5), "sampling_rate"),
    ],
)
def test_other_bad_arguments(call, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()


@pytest.mark.parametrize("mu", [0.0, 0.5, 2.0, 7.0])
def test_gamma_from_log_kappa_is_the_gaussian_bound(mu):
    kappa = np.array([1e-300, 1e-12, 1e-3, 0.1, 0.5, 0.9])
    got = rero.gamma_gaussian_log_kappa(mu, np.log(kappa))
    np.testing.assert_allclose(got, rero.gamma(tradeoff.gaussian(mu), kappa), rtol=1e-9, atol=1e-300)
    far = rero.gamma_gaussian_log_kappa(mu, [-5000.0, -2000.0, -1000.0])  # kappa below the float range
    assert np.all(np.diff(far) >= 0) and np.all((far >= 0) & (far < 1e-100))


def test_log_kappa_box_against_the_binomial_tail_and_the_paper():
    d, radius = 30, 0.2
    for rho in (0.1, 0.5, 0.77, 1.0):
        need = math.ceil(rho * d - 1e-9)
        exact = sum(math.comb(d, k) * 0.4**k * 0.6 ** (d - k) for k in range(need, d + 1))
        assert float(rero.log_kappa_box(d, rho, radius)) == pytest.approx(math.log(exact), rel=1e-10)
        assert float(rero.log_kappa_box(d, rho, radius, paper=True)) == pytest.approx(rho * d * math.log(0.4))
    # the paper's MNIST value: (64/256)^784 = 9.66e-473
    assert float(rero.log_kappa_box(784, 1.0, 32 / 256)) / math.log(10) == pytest.approx(math.log10(9.66) - 473, abs=2e-3)
    assert rero.log_kappa_box(784, [0.6, 0.8], 32 / 255).shape == (2,)
    assert float(rero.log_kappa_box(10, 0.5, 0.5)) == 0.0  # every guess qualifies
    # near-certain events stay at or below log 1 (rounding of a sum over the whole pmf gave +1e-16)
    assert float(rero.log_kappa_box(10, 0.1, 0.49)) <= 0.0 and float(rero.log_kappa_box(64, 1 / 64, 0.21)) <= 0.0
    assert float(rero.gamma_gaussian_log_kappa(1.0, rero.log_kappa_box(10, 0.5, 0.5))) == 1.0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: rero.gamma_gaussian_log_kappa(1.0, 0.1), "log_kappa"),
        (lambda: rero.gamma_gaussian_log_kappa(1.0, -np.inf), "log_kappa"),
        (lambda: rero.gamma_gaussian_log_kappa(1.0, np.nan), "log_kappa"),
        (lambda: rero.gamma_gaussian_log_kappa(-1.0, -1.0), "mu"),
        (lambda: rero.log_kappa_box(10, 1.5, 0.1), "rho"),
        (lambda: rero.log_kappa_box(10, 0.5, 0.6), "radius"),
        (lambda: rero.log_kappa_box(0, 0.5, 0.1), "dimension"),
    ],
)
def test_small_prior_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_fano_advantage_mc_error_is_the_spread_over_independent_runs():
    # the delta-method standard error of one run against the spread of the advantage over 40 independent runs
    runs = [rero.fano_advantage_mc(rero.guo_mutual_information_mc(1.0, 10, samples=5_000, seed=s), 10) for s in range(40)]
    spread = np.std([adv for adv, _ in runs], ddof=1)
    assert 0.6 < np.mean([se for _, se in runs]) / spread < 1.6
    est = rero.guo_mutual_information_mc(1.0, 10, samples=5_000, seed=0)
    assert rero.fano_advantage_mc(est, 10)[0] == rero.fano_advantage(est.estimate, 10)


def test_fano_advantage_mc_at_zero_information_and_bad_input():
    adv, se = rero.fano_advantage_mc(rero.MutualInformationEstimate(0.0, 0.01, 100, 0), 10)
    assert adv == pytest.approx(0.0, abs=1e-15) and se > 0  # a one-sided slope at 0
    with pytest.raises(ValueError, match="estimate"):
        rero.fano_advantage_mc(0.3, 10)
    with pytest.raises(ValueError, match="prior_size"):
        rero.fano_advantage_mc(rero.MutualInformationEstimate(0.3, 0.01, 100, 0), 1)


# --- from test_extremes, the first round (no silently wrong answers: extreme but legal inputs) ---------------


@pytest.mark.parametrize("value", ["0.1", True, [0.1, True], 1 + 2j, None, [], [0.1, np.nan], [np.inf], "abc"])
def test_array_arguments_are_finite_reals(value):
    with pytest.raises(ValueError, match="kappa"):
        rero.gamma(tradeoff.gaussian(1.0), value)
