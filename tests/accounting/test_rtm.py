"""Relaxed-threat-model curves (fdp.accounting.rtm) checked against independent constructions.

Closed forms (Thm. 1 eqs. 2-3, Cor. 1 eq. 5, Thm. 3 eq. 7) are compared with the generic
test-statistic route of Def. 2 (eq. 30), with scipy's Laplace / Rice distributions and
quadrature, and the composition (Lemma 8) with a seeded Monte-Carlo simulation of the raw
releases.  Lemma 6 (RTM curves lie on or above the DP curves) is checked on random parameters.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp, mpf, ncdf
from scipy import integrate, optimize, special
from scipy.stats import chi2, expon, ncx2, norm
from scipy.stats import laplace as lap

from fdp import FDPWarning, Mechanism, calibrate, risk
from fdp.accounting import pld, rtm
from fdp.accounting.privacy_loss import dpsgd
from fdp.curves import tradeoff
from references import rtm_one_step_power

PROPS = settings(max_examples=40, deadline=None)
GRID = tradeoff.default_grid(801)
MUS = [0.0, 0.3, 1.0, 2.5, 8.0]


def run(noise: str, mu: float, p: float = 1.0, steps: int = 1) -> Mechanism:
    """The mechanism of the RTM paper's effect size ``mu`` (Delta / sigma or Delta / b): noise multiplier 1 / mu."""
    return Mechanism(noise, 1.0 / mu, p, steps)

mus = st.floats(0.0, 6.0)
dims = st.integers(1, 60)
rates = st.floats(0.01, 1.0)


# ---------------------------------------------------------------------------------------------
# Laplace mechanism (Thm. 1)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("b", [1.0, 0.4, 3.0])
@pytest.mark.parametrize("mu", MUS)
def test_laplace_closed_form_equals_statistic_route(mu, b):
    # eq. 2-3 against eq. 30: Phi_FoldL(Psi_Exp^{-1}(alpha)) and Psi_Exp(Phi_FoldL^{-1}(alpha))
    closed = rtm.laplace(mu)
    generic = rtm.from_test_statistic(rtm.Exponential(b), rtm.FoldedLaplace(mu * b, b))
    np.testing.assert_allclose(closed(GRID), generic(GRID), rtol=0, atol=1e-12)
    np.testing.assert_allclose(closed.inverse(GRID), generic.inverse(GRID), rtol=0, atol=1e-12)
    np.testing.assert_allclose(closed.power(GRID), generic.power(GRID), rtol=0, atol=1e-12)
    tiny = np.logspace(-300, -3, 30)
    np.testing.assert_allclose(closed.power(tiny), generic.power(tiny), rtol=1e-12)


@pytest.mark.parametrize("delta,b", [(0.0, 1.0), (0.7, 1.0), (2.0, 0.5), (5.0, 2.0)])
def test_statistic_distributions_match_scipy_laplace(delta, b):
    # |X| with X ~ Lap(delta, b): P(|X| <= x) = F(x) - F(-x); |X| with X ~ Lap(0, b) is Exp(b)
    x = np.concatenate([np.linspace(0.0, 12.0 * b + delta, 301), [delta]])
    fold, exp = rtm.FoldedLaplace(delta, b), rtm.Exponential(b)
    np.testing.assert_allclose(fold.cdf(x), lap.cdf(x, delta, b) - lap.cdf(-x, delta, b), atol=1e-14)
    np.testing.assert_allclose(fold.sf(x), 1.0 - fold.cdf(x), atol=1e-14)
    np.testing.assert_allclose(exp.cdf(x), expon.cdf(x, scale=b), atol=1e-15)
    np.testing.assert_allclose(exp.isf(exp.sf(x)), x, rtol=1e-12, atol=1e-12)
    q = np.linspace(0.0, 0.999, 500)
    np.testing.assert_allclose(fold.cdf(fold.ppf(q)), q, atol=1e-13)
    np.testing.assert_allclose(fold.sf(fold.isf(q)), q, atol=1e-13)


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
def test_laplace_against_quadrature_of_density(mu):
    # beta = P(|X| <= c | X ~ Lap(mu, 1)) at the level alpha = P(|X| > c | X ~ Lap(0, 1))
    j = rtm.laplace(mu)
    for c in (0.1, 0.5 * mu, mu, 2.0 * mu + 0.3):
        alpha = 2.0 * integrate.quad(lambda x: lap.pdf(x), c, np.inf, epsabs=1e-14)[0]
        beta = integrate.quad(lambda x: lap.pdf(x, mu), -c, c, points=[mu] if mu < c else None, epsabs=1e-14)[0]
        assert j(alpha) == pytest.approx(beta, abs=1e-10)
        assert j.inverse(beta) == pytest.approx(alpha, abs=1e-10)


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
def test_eq3_branch_point_as_printed_is_wrong(mu):
    # eq. 3 prints the switch at 1/2 - exp(-mu)/2; the proof's quantile switches at 1/2 - exp(-2 mu)/2
    printed_corner, corner = 0.5 - 0.5 * np.exp(-mu), 0.5 - 0.5 * np.exp(-2 * mu)
    a = np.linspace(printed_corner, corner, 7)[1:-1]
    printed = (1.0 - a) / np.cosh(mu)  # branch eq. 3 would use between the two corners
    generic = rtm.from_test_statistic(rtm.Exponential(), rtm.FoldedLaplace(mu))
    assert np.all(generic.inverse(a) - printed > 0)
    # ... and the printed piecewise formula jumps at its own branch point
    first = 1.0 / (printed_corner * np.exp(mu) + np.sqrt(printed_corner**2 * np.exp(2 * mu) + 1.0))
    assert first - (1.0 - printed_corner) / np.cosh(mu) > 1e-3
    np.testing.assert_allclose(rtm.laplace(mu).inverse(a), generic.inverse(a), atol=1e-13)
    # the corrected j^{-1} is continuous at its branch point
    j = rtm.laplace(mu)
    assert j.inverse(corner - 1e-12) == pytest.approx(j.inverse(corner + 1e-12), abs=1e-10)


# ---------------------------------------------------------------------------------------------
# Gaussian mechanism (Thm. 2, Cor. 1)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mu", MUS)
def test_gaussian_d1_closed_form_equals_chi_square_route(mu):
    closed, j = rtm.gaussian_1d(mu), rtm.gaussian(mu, dimension=1)
    np.testing.assert_allclose(j(GRID), closed(GRID), rtol=0, atol=1e-12)
    tiny = np.logspace(-300, -3, 30)
    np.testing.assert_allclose(j.power(tiny), closed.power(tiny), rtol=1e-10)
    # the inverse (eq. 4, right) against bisection of the closed form
    np.testing.assert_allclose(j.inverse(GRID), closed.inverse(GRID), rtol=0, atol=1e-12)


@pytest.mark.parametrize("mu", [0.4, 1.5])
def test_gaussian_d2_against_rice_quadrature(mu):
    # d = 2: ||theta|| under H1 has the Rice density x exp(-(x^2 + mu^2)/2) I0(mu x)
    j = rtm.gaussian(mu, dimension=2)

    def rice_pdf(x):
        return x * np.exp(-0.5 * (x - mu) ** 2) * special.i0e(mu * x)

    for c in (0.3, 1.0, 2.0, 3.5):
        alpha = np.exp(-0.5 * c * c)  # chi2_2 survival at c^2
        beta = integrate.quad(rice_pdf, 0.0, c, epsabs=1e-14, epsrel=1e-12)[0]
        assert j(alpha) == pytest.approx(beta, abs=1e-11)
        assert j.inverse(beta) == pytest.approx(alpha, abs=1e-11)


@PROPS
@given(mu=mus, d=dims)
def test_gaussian_inverse_is_swapped_test(mu, d):
    j = rtm.gaussian(mu, d)
    inner = GRID[(GRID > 1e-9) & (GRID < 1 - 1e-9)]
    beta = j(inner)
    keep = (beta > 1e-9) & (beta < 1 - 1e-9)  # where j is strictly decreasing
    np.testing.assert_allclose(j.inverse(beta[keep]), inner[keep], rtol=1e-7, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# Non-adaptive composition (Lemma 8)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("weighting", rtm.WEIGHTINGS)
@pytest.mark.parametrize("delta,sigma,steps,d", [(1.0, 2.0, 4, 1), (0.5, 1.0, 10, 3), (2.0, 0.7, 3, 20)])
def test_homogeneous_composition_is_single_mechanism(delta, sigma, steps, d, weighting):
    # eqs. 47-48: chi2_d(0, s^2/N) vs chi2_d(N mu^2, s^2/N) = the GM with mu sqrt(N)
    comp = rtm.gaussian_composition([delta] * steps, [sigma] * steps, dimension=d, weighting=weighting)
    mu = delta / sigma
    single = rtm.gaussian(np.sqrt(steps) * mu, d)
    np.testing.assert_allclose(comp(GRID), single(GRID), atol=1e-12)
    np.testing.assert_allclose(comp.inverse(GRID), single.inverse(GRID), atol=1e-12)
    np.testing.assert_allclose(comp(GRID), rtm.gaussian(mu, d, steps=steps)(GRID), atol=1e-12)
    if d == 1:
        np.testing.assert_allclose(comp(GRID), rtm.gaussian_1d(np.sqrt(steps) * mu)(GRID), atol=1e-12)


def test_two_mechanism_noncentrality_of_the_proof():
    # eq. 46: kappa_c = (Delta_a + Delta_b)^2 / (sigma_a^2 + sigma_b^2) for the plain average
    assert rtm.composition_noncentrality([1.0, 3.0], [1.0, 2.0], "mean") == pytest.approx(16.0 / 5.0)
    # inverse-variance weights 1 and 1/4: mean (1 + 3/4) / (5/4), variance 1 / (5/4)
    assert rtm.composition_noncentrality([1.0, 3.0], [1.0, 2.0], "inverse-variance") == pytest.approx(1.75**2 / 1.25)
    assert rtm.composition_noncentrality([1.0, 3.0], [1.0, 2.0], "optimal") == pytest.approx(1.0 + 2.25)


@PROPS
@given(
    deltas=st.lists(st.floats(0.0, 3.0), min_size=1, max_size=6),
    sigmas=st.lists(st.floats(0.2, 5.0), min_size=6, max_size=6),
)
def test_optimal_weighting_is_most_powerful(deltas, sigmas):
    sigmas = sigmas[: len(deltas)]
    best = rtm.composition_noncentrality(deltas, sigmas, "optimal")
    for w in ("mean", "inverse-variance"):
        assert rtm.composition_noncentrality(deltas, sigmas, w) <= best * (1 + 1e-12) + 1e-15
    # the optimal statistic is the single GM with mu = sqrt(sum mu_i^2)
    mu = float(np.sqrt(np.sum((np.array(deltas) / np.array(sigmas)) ** 2)))
    np.testing.assert_allclose(
        rtm.gaussian_composition(deltas, sigmas, dimension=2)(GRID), rtm.gaussian(mu, 2)(GRID), atol=1e-12
    )


def _simulate_statistic(deltas, sigmas, weights, d, n, rng):
    """||sum w_i theta_i||^2 / sum w_i^2 sigma_i^2 from raw releases under H0 and H1."""
    deltas, sigmas, weights = map(np.asarray, (deltas, sigmas, weights))
    v = rng.normal(size=d)
    v /= np.linalg.norm(v)  # common unknown direction of the shift
    noise0 = rng.normal(size=(n, deltas.size, d)) * sigmas[:, None]
    noise1 = rng.normal(size=(n, deltas.size, d)) * sigmas[:, None]
    theta1 = noise1 + deltas[:, None] * v
    scale = np.sum(weights**2 * sigmas**2)
    t0 = np.sum(np.einsum("i,nid->nd", weights, noise0) ** 2, axis=1) / scale
    t1 = np.sum(np.einsum("i,nid->nd", weights, theta1) ** 2, axis=1) / scale
    return t0, t1


@pytest.mark.parametrize(
    "deltas,sigmas,d",
    [
        ([1.0, 1.0, 0.5, 1.0], [0.6, 1.0, 2.0, 4.0], 1),  # heterogeneous
        ([1.0, 1.0, 0.5, 1.0], [0.6, 1.0, 2.0, 4.0], 3),
        ([0.5] * 5, [1.0] * 5, 2),  # homogeneous: all weightings coincide
    ],
)
def test_composition_against_monte_carlo(deltas, sigmas, d):
    deltas, sigmas = np.array(deltas), np.array(sigmas)
    weights = {
        "mean": np.ones(deltas.size) / deltas.size,
        "inverse-variance": 1.0 / sigmas**2,
        "optimal": deltas / sigmas**2,
    }
    rng = np.random.default_rng(20231)
    n = 200_000
    alphas = np.array([0.01, 0.05, 0.2, 0.5])
    c = chi2.isf(alphas, d)
    for name, w in weights.items():
        t0, t1 = _simulate_statistic(deltas, sigmas, w, d, n, rng)
        alpha_hat = (t0[:, None] > c).mean(axis=0)
        beta_hat = (t1[:, None] <= c).mean(axis=0)
        beta = rtm.gaussian_composition(deltas, sigmas, dimension=d, weighting=name)(alphas)
        se = np.sqrt(np.maximum(beta * (1 - beta), 1e-4) / n)
        assert np.all(np.abs(alpha_hat - alphas) <= 5 * np.sqrt(alphas * (1 - alphas) / n))
        assert np.all(np.abs(beta_hat - beta) <= 5 * se), name
        if name == "optimal" and np.ptp(sigmas) > 0:
            # the simulation separates the weightings: the plain-average curve is far off
            wrong = rtm.gaussian_composition(deltas, sigmas, dimension=d, weighting="mean")(alphas)
            assert np.max(np.abs(beta_hat - wrong) / se) > 20


# ---------------------------------------------------------------------------------------------
# Asymptotics (Thm. 3, eq. 7)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mu,d,steps", [(0.2, 300, 150), (1.0, 5, 1), (0.05, 1000, 20)])
def test_clt_form_equals_normal_statistic_route(mu, d, steps):
    # eqs. 49-50: N(d, 2d) vs N(d + kappa, 2d + 4 kappa)
    kappa = steps * mu**2
    generic = rtm.from_test_statistic(norm(d, np.sqrt(2 * d)), norm(d + kappa, np.sqrt(2 * d + 4 * kappa)))
    a = rtm.asymptotic(mu, d, steps, form="clt")
    np.testing.assert_allclose(a(GRID), generic(GRID), atol=1e-12)
    np.testing.assert_allclose(a.inverse(GRID), generic.inverse(GRID), atol=1e-12)


def test_clt_form_is_a_tradeoff_function_only_for_small_kappa_over_d():
    # unequal variances: the one-sided test is not Neyman-Pearson; f exceeds 1 - alpha once
    # Psi^{-1}(alpha) < -shift / (s - 1), which is far in the tail when kappa / d is small
    tradeoff.check_valid(rtm.asymptotic(0.2, 300, 150, "clt"))
    tradeoff.check_valid(rtm.asymptotic(0.2, 300, 150, "clt").swapped())
    with pytest.raises(ValueError, match="1 - alpha"):
        tradeoff.check_valid(rtm.asymptotic(1.0, 5, 1, "clt"))


@pytest.mark.parametrize("form", ["clt", "gaussian"])
def test_asymptotic_gap_shrinks_as_d_grows(form):
    # fixed mu, N (Fig. 2a values)
    gaps = [rtm.asymptotic_gap(0.2, d, 150, form) for d in (10, 100, 1000, 10000)]
    assert np.all(np.diff(gaps) < 0) and gaps[-1] < 2e-4
    # d and N grow together (d = N^2, so N mu^2 / sqrt(2d) stays fixed)
    gaps = [rtm.asymptotic_gap(0.2, n * n, n, form) for n in (1, 3, 10, 30)]
    assert np.all(np.diff(gaps) < 0) and gaps[-1] < 5e-4


def test_asymptotic_gap_does_not_shrink_in_n_at_fixed_d():
    # the chi2_d null stays skewed: at fixed d the CLT form gets worse as N grows (until both curves hit 0)
    gaps = [rtm.asymptotic_gap(0.2, 300, n) for n in (1, 10, 100, 1000)]
    assert np.all(np.diff(gaps) > 0)


def test_eq7_as_printed_does_not_match():
    # Fig. 2a setting: the corrected CLT form is close to the exact curve, the printed one is not
    mu, d, steps = 0.2, 300, 150
    k = steps * mu**2
    s = np.sqrt(2 * k / d + 1)
    printed_lhs = norm.cdf(norm.isf(GRID) / s - np.sqrt(2) * k / (2 * d * s))
    printed_rhs = norm.cdf(norm.isf(GRID) - steps * np.sqrt(mu / (2 * d)))
    exact = rtm.gaussian(mu, d, steps)(GRID)
    assert rtm.asymptotic_gap(mu, d, steps, "clt") < 0.005
    assert rtm.asymptotic_gap(mu, d, steps, "gaussian") < 0.005
    assert np.max(np.abs(printed_lhs - exact)) > 0.05
    assert np.max(np.abs(printed_rhs - exact)) > 0.5


# ---------------------------------------------------------------------------------------------
# Subsampling (Lemma 9)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mech,mu,p,d",
    [("gaussian", 1.0, 0.3, 1), ("gaussian", 2.0, 0.5, 4), ("gaussian", 0.2, 0.4, 1), ("laplace", 1.0, 0.3, None)],
)
def test_subsampled_inverse_from_mixture_statistic(mech, mu, p, d):
    # j_p^{-1}(beta) = Psi_A(c) with c solving (1-p) Phi_A(c) + p Phi_B(c) = beta (Def. 2 on the mixture)
    if mech == "gaussian":
        null, alt, j, J = chi2(d), ncx2(d, mu**2), rtm.gaussian(mu, d), rtm.subsampled_gaussian(run("gaussian", mu, p), d)
    else:
        null, alt, j, J = rtm.Exponential(), rtm.FoldedLaplace(mu), rtm.laplace(mu), rtm.subsampled_laplace(run("laplace", mu, p))
    jp = tradeoff.subsample(j, p)
    for beta in (0.02, 0.1, 0.3, 0.6, 0.9):
        c = optimize.brentq(lambda x: (1 - p) * null.cdf(x) + p * alt.cdf(x) - beta, 0, 1e3, xtol=1e-14)
        assert jp.inverse(beta) == pytest.approx(null.sf(c), abs=1e-10)
    tradeoff.check_valid(J)
    # J = C(j_p, j_p^{-1}) is symmetric, lies on or below min(j_p, j_p^{-1}) everywhere (so below its convex
    # envelope, the exact J) and its vertices within the sampling gap of it
    np.testing.assert_allclose(J.inverse(GRID), J(GRID), atol=1e-12)
    _assert_below_and_near(J, lambda a: np.minimum(jp(a), jp.inverse(a)))


def _assert_below_and_near(J, lowest):
    x = np.union1d(GRID, np.linspace(0.0, 1.0, 20001))
    assert np.all(J(x) <= lowest(x) + 1e-13)
    np.testing.assert_allclose(J.betas, lowest(J.alphas), atol=2.0 * tradeoff.SAMPLED_GAP)


def test_unsampled_limit():
    # with p = 1, J is C(j, j^{-1}) of the plain GM: vertices on min(j, j^{-1}) (closed-form inverse)
    J1, j = rtm.subsampled_gaussian(run("gaussian", 1.0), 3), rtm.gaussian(1.0, 3)
    _assert_below_and_near(J1, lambda a: np.minimum(j(a), j.inverse(a)))
    assert J1.alphas.size > 100


def test_subsampling_amplifies():
    # smaller p: J moves towards 1 - alpha
    for mech in (lambda p: rtm.subsampled_gaussian(run("gaussian", 1.5, p)), lambda p: rtm.subsampled_laplace(run("laplace", 1.0, p))):
        curves = [mech(p)(GRID) for p in (1.0, 0.5, 0.1)]
        assert np.all(curves[1] >= curves[0] - 1e-12) and np.all(curves[2] >= curves[1] - 1e-12)
        assert np.max(curves[2] - curves[0]) > 0.05


# ---------------------------------------------------------------------------------------------
# Validity and Lemma 6
# ---------------------------------------------------------------------------------------------


@PROPS
@given(mu=mus, d=dims, p=rates)
def test_every_curve_is_a_valid_tradeoff_function(mu, d, p):
    for curve in (rtm.gaussian(mu, d), rtm.laplace(mu), rtm.asymptotic(mu, d, 3, "gaussian")):
        tradeoff.check_valid(curve)
        tradeoff.check_valid(curve.swapped())
    if mu >= 1e-8:  # a subsampled mechanism has a noise multiplier 1 / mu of at most 1e8
        tradeoff.check_valid(rtm.subsampled_laplace(run("laplace", mu, p)))
    tradeoff.check_valid(tradeoff.symmetrise(rtm.laplace(mu)))


@settings(max_examples=15, deadline=None)
@given(mu=st.floats(1e-3, 6.0), d=st.integers(1, 20), p=rates)
def test_subsampled_gaussian_valid(mu, d, p):
    tradeoff.check_valid(rtm.subsampled_gaussian(run("gaussian", mu, p), d))


@PROPS
@given(mu=mus, d=dims)
def test_lemma6_rtm_curves_lie_above_dp_curves(mu, d):
    f_gm, f_lap = tradeoff.gaussian(mu)(GRID), tradeoff.laplace(mu)(GRID)
    j = rtm.gaussian(mu, d)
    assert np.all(j(GRID) >= f_gm - 1e-12)
    assert np.all(j.inverse(GRID) >= f_gm - 1e-12)
    jl = rtm.laplace(mu)
    assert np.all(jl(GRID) >= f_lap - 1e-12)
    assert np.all(jl.inverse(GRID) >= f_lap - 1e-12)


@settings(max_examples=15, deadline=None)
@given(mu=st.floats(1e-3, 6.0), d=st.integers(1, 20), p=rates)
def test_lemma6_subsampled(mu, d, p):
    # both symmetrised from samples, so both below their exact curves; the RTM one within the sampling gap of its own
    dp_gm = tradeoff.symmetrise(tradeoff.subsample(tradeoff.gaussian(mu), p))
    dp_lap = tradeoff.symmetrise(tradeoff.subsample(tradeoff.laplace(mu), p))
    assert np.all(rtm.subsampled_gaussian(run("gaussian", mu, p), d)(GRID) >= dp_gm(GRID) - 2.0 * tradeoff.SAMPLED_GAP)
    assert np.all(rtm.subsampled_laplace(run("laplace", mu, p))(GRID) >= dp_lap(GRID) - 2.0 * tradeoff.SAMPLED_GAP)


@PROPS
@given(
    deltas=st.lists(st.floats(0.0, 2.0), min_size=1, max_size=5),
    sigmas=st.lists(st.floats(0.3, 4.0), min_size=5, max_size=5),
    d=st.integers(1, 10),
)
def test_lemma6_composition(deltas, sigmas, d):
    sigmas = sigmas[: len(deltas)]
    mu_dp = float(np.sqrt(np.sum((np.array(deltas) / np.array(sigmas)) ** 2)))  # GDP composition
    f = tradeoff.gaussian(mu_dp)(GRID)
    for w in rtm.WEIGHTINGS:
        j = rtm.gaussian_composition(deltas, sigmas, d, w)
        assert np.all(j(GRID) >= f - 1e-12) and np.all(j.inverse(GRID) >= f - 1e-12)


# ---------------------------------------------------------------------------------------------
# lambda-detection resilience (Def. 3)
# ---------------------------------------------------------------------------------------------


def test_detection_resilience_holds_for_dp_reference():
    for mu in (0.5, 2.0):
        res = rtm.detection_resilience(rtm.gaussian(mu), tradeoff.gaussian(mu))
        assert res.holds and res.worst_margin >= -1e-12
        assert rtm.detection_resilience(rtm.laplace(mu), tradeoff.laplace(mu)).holds


def test_detection_resilience_margin_and_dimension():
    ref = tradeoff.gaussian(0.3)
    grid = np.linspace(0.0, 1.0, 1001)
    res = rtm.detection_resilience(rtm.gaussian(1.0, 1), ref, grid=grid)
    # margin recomputed from the closed form of Cor. 1 (j <= j^{-1} is not assumed)
    j1 = rtm.gaussian_1d(1.0)
    margin = np.minimum(j1(grid), j1.inverse(grid)) - ref(grid)
    assert not res.holds
    assert res.worst_margin == pytest.approx(margin.min(), abs=1e-10)
    assert res.worst_alpha == grid[np.argmin(margin)]
    # the same verdict from the grid-symmetrised J (margins differ by its interpolation error);
    # "blessing of dimensionality": d = 30 satisfies it
    resJ = rtm.detection_resilience(tradeoff.symmetrise(rtm.gaussian(1.0, 1)), ref, grid=grid)
    assert not resJ.holds and resJ.worst_margin == pytest.approx(res.worst_margin, abs=1e-5)
    assert rtm.detection_resilience(rtm.gaussian(1.0, 30), ref).holds


def test_detection_resilience_tolerance():
    J = rtm.subsampled_gaussian(run("gaussian", 1.0))  # exactly symmetric C(j, j^{-1})
    shifted = tradeoff.TradeOffCurve(lambda a: J(a) + 1e-7, symmetric=True)
    assert not rtm.detection_resilience(J, shifted).holds
    assert rtm.detection_resilience(J, shifted, atol=1e-6).holds


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: rtm.laplace(-0.1), "mu"),
        (lambda: rtm.laplace(float("nan")), "mu"),
        (lambda: rtm.gaussian(float("inf")), "mu"),
        (lambda: rtm.gaussian(1.0, dimension=0), "dimension"),
        (lambda: rtm.gaussian(1.0, dimension=2.0), "dimension"),
        (lambda: rtm.gaussian(1.0, dimension=True), "dimension"),
        (lambda: rtm.gaussian(1.0, steps=0), "steps"),
        (lambda: rtm.gaussian_1d(-1.0), "mu"),
        (lambda: rtm.asymptotic(1.0, dimension=1, steps=1.5), "steps"),
        (lambda: rtm.asymptotic(1.0, form="edgeworth"), "form"),
        (lambda: rtm.asymptotic_gap(1.0, dimension=-3), "dimension"),
        (lambda: rtm.subsampled_gaussian(Mechanism("gaussian", 1.0, 0.0)), "sampling_rate"),
        (lambda: rtm.subsampled_gaussian(Mechanism("gaussian", 1.0, 1.5)), "sampling_rate"),
        (lambda: rtm.subsampled_laplace(Mechanism("laplace", 1.0, float("nan"))), "sampling_rate"),
        (lambda: rtm.subsampled_gaussian(Mechanism("gaussian", 1.0, 0.5, 2)), "one step"),
        (lambda: rtm.subsampled_laplace(Mechanism("gaussian", 1.0, 0.5)), "laplace"),
        (lambda: rtm.subsampled_gaussian(Mechanism("gaussian", 1.0, 0.5), dimension=0), "dimension"),
        (lambda: rtm.gaussian_composition([1.0], [0.0]), "sigmas"),
        (lambda: rtm.gaussian_composition([-1.0], [1.0]), "sensitivities"),
        (lambda: rtm.gaussian_composition([1.0, 2.0], [1.0]), "sensitivities and sigmas"),
        (lambda: rtm.gaussian_composition([1.0], [1.0], dimension=0), "dimension"),
        (lambda: rtm.gaussian_composition([1.0], [1.0], weighting="median"), "weighting"),
        (lambda: rtm.detection_resilience(rtm.laplace(1), tradeoff.laplace(1), grid=[0.5, 1.2]), "grid"),
        (lambda: rtm.laplace(1.0)(1.5), "alpha"),
        (lambda: rtm.gaussian(1.0).inverse(-0.1), "beta"),
    ],
)
def test_bad_input_raises_naming_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_extreme_parameters_stay_finite_or_raise():
    # exp(-mu) underflows: j(0) must still be 1 and j, j^{-1} valid
    j = rtm.laplace(800.0)
    assert j(0.0) == 1.0 and j(1.0) == 0.0 and j.inverse(0.0) == 1.0
    tradeoff.check_valid(j)
    # large non-centrality: the power near alpha = 1 avoids scipy's ncx2.sf overflow
    g = rtm.gaussian(25.0)
    assert np.all(np.isfinite(g.power(GRID))) and g.power(1.0) == 1.0
    # beyond scipy's range the curve raises instead of returning NaN
    with pytest.raises(ValueError, match="NaN"):
        rtm.gaussian(1e6).inverse([1e-6, 0.3])


def test_subnormal_effect_size_is_not_distorted():
    # scipy's ncx2 is off by ~1e-4 for subnormal non-centralities; mu = 1e-160 gives mu^2 ~ 1e-320
    np.testing.assert_allclose(rtm.gaussian(1.3e-160)(GRID), 1.0 - GRID, atol=1e-13)


# ---------------------------------------------------------------------------------------------
# Composition of subsampled mechanisms: reading (a) tensor product, reading (b) one statistic
# ---------------------------------------------------------------------------------------------

INNER = GRID[(GRID > 1e-9) & (GRID < 1 - 1e-9)]


def _step_loss(mech, mu, p, r):
    """Per-step privacy loss of the magnitude statistic, written out independently of fdp.accounting.rtm."""
    if mech == "gaussian":  # d = 1: chi2_1(mu^2) / chi2_1 density ratio at r^2 is exp(-mu^2/2) cosh(mu r)
        g = np.exp(-0.5 * mu**2) * np.cosh(mu * r)
    else:  # folded Laplace / exponential densities
        g = (0.5 * (np.exp(-np.abs(r - mu)) + np.exp(-(r + mu)))) / np.exp(-r)
    return np.log(1 - p + p * g)


@pytest.mark.parametrize(
    "mech,mu,p,d",
    [("gaussian", 1.0, 0.3, 1), ("gaussian", 0.2, 0.4, 1), ("gaussian", 2.0, 0.5, 4), ("gaussian", 1.5, 1.0, 1),
     ("laplace", 1.0, 0.3, 1), ("laplace", 1.5, 1.0, 1)],
)
def test_tensor_one_step_is_lemma9_and_brackets_it(mech, mu, p, d):
    exact = tradeoff.subsample(rtm.gaussian(mu, d) if mech == "gaussian" else rtm.laplace(mu), p)
    low = rtm.tensor_composition(run(mech, mu, p), d, discretization=1e-3)
    up = rtm.tensor_composition(run(mech, mu, p), d, discretization=1e-3, pessimistic=False)
    assert np.all(low(GRID) <= exact(GRID) + 1e-12) and np.all(exact(GRID) <= up(GRID) + 1e-12)
    # connect-the-dots errs far less than rounding down (first order in the spacing)
    assert np.max(exact(GRID) - low(GRID)) < 5e-5
    assert np.max(up(GRID) - exact(GRID)) < 1e-3
    tradeoff.check_valid(low, INNER)
    tradeoff.check_valid(up, INNER)


@pytest.mark.parametrize("mech,mu,p,steps", [("gaussian", 1.0, 0.4, 5), ("gaussian", 2.0, 0.2, 12), ("laplace", 1.2, 0.5, 6)])
def test_tensor_composition_against_monte_carlo(mech, mu, p, steps):
    # the tensor product T(P^N, Q^N) is the Neyman-Pearson test on the summed per-step losses
    rng = np.random.default_rng(7)
    n = 200_000
    if mech == "gaussian":
        x0 = rng.normal(size=(n, steps))
        x1 = rng.normal(size=(n, steps)) + mu * (rng.random((n, steps)) < p)
    else:
        x0 = rng.laplace(size=(n, steps))
        x1 = rng.laplace(size=(n, steps)) + mu * (rng.random((n, steps)) < p)
    s0 = _step_loss(mech, mu, p, np.abs(x0)).sum(axis=1)
    s1 = _step_loss(mech, mu, p, np.abs(x1)).sum(axis=1)
    low = rtm.tensor_composition(run(mech, mu, p, steps), discretization=1e-3)
    up = rtm.tensor_composition(run(mech, mu, p, steps), discretization=1e-3, pessimistic=False)
    for alpha in (0.01, 0.05, 0.2, 0.5):
        c = np.quantile(s0, 1 - alpha)
        a_hat, b_hat = np.mean(s0 > c), np.mean(s1 <= c)
        se = np.sqrt(b_hat * (1 - b_hat) / n) + np.sqrt(a_hat * (1 - a_hat) / n)
        assert low(a_hat) - 5 * se <= b_hat <= up(a_hat) + 5 * se


def test_tensor_composition_converges_with_the_spacing():
    mu, p, steps = 0.8, 0.3, 20
    curves = [rtm.tensor_composition(run("gaussian", mu, p, steps), discretization=h, pessimistic=s)
              for h in (1e-2, 1e-3) for s in (True, False)]
    lo_coarse, up_coarse, lo_fine, up_fine = (c(GRID) for c in curves)
    assert np.all(lo_fine <= up_fine + 1e-12)
    # the bracket shrinks (at least) linearly with the spacing ...
    assert np.max(up_fine - lo_fine) < 0.15 * np.max(up_coarse - lo_coarse)
    # ... and the pessimistic (connect-the-dots) side is much closer to the limit than the width
    assert np.max(np.abs(lo_fine - lo_coarse)) < 0.1 * np.max(up_coarse - lo_coarse)


@pytest.mark.parametrize("mu,d,steps", [(0.2, 300, 150), (1.0, 1, 5), (0.5, 3, 10)])
def test_sum_reading_without_subsampling_is_lemma8(mu, d, steps):
    # p = 1: ||sum theta_i||^2 / N is chi2_d(N mu^2) under H1 (eqs. 47-48)
    c, ref = rtm.sum_composition(run("gaussian", mu, 1.0, steps), d), rtm.gaussian(mu, d, steps)
    np.testing.assert_allclose(c(GRID), ref(GRID), atol=2e-5)
    np.testing.assert_allclose(c.inverse(GRID), ref.inverse(GRID), atol=2e-5)
    assert np.all(c(GRID) >= ref(GRID) - 1e-12)  # vertices on the exact convex curve: chords above it


@pytest.mark.parametrize("statistic", rtm.SUM_STATISTICS)
@pytest.mark.parametrize("mu,p,d", [(1.0, 0.3, 1), (2.0, 0.5, 4)])
def test_readings_reduce_to_lemma9_for_one_step(mu, p, d, statistic):
    ref = tradeoff.subsample(rtm.gaussian(mu, d), p)
    np.testing.assert_allclose(rtm.sum_composition(run("gaussian", mu, p), d, statistic)(GRID), ref(GRID), atol=1e-5)
    np.testing.assert_allclose(rtm.tensor_composition(run("gaussian", mu, p), d)(GRID), ref(GRID), atol=5e-5)


@pytest.mark.parametrize("statistic", rtm.SUM_STATISTICS)
def test_sum_reading_against_monte_carlo(statistic):
    mu, p, steps, d = 0.7, 0.4, 8, 2
    rng = np.random.default_rng(11)
    n = 200_000
    v = np.array([0.6, 0.8])  # common unit direction of the shift
    b = rng.random((n, steps)) < p
    x0 = rng.normal(size=(n, steps, d))
    x1 = rng.normal(size=(n, steps, d)) + mu * b[:, :, None] * v
    if statistic == "norm_of_sum":
        t0, t1 = (np.sum(x.sum(axis=1) ** 2, axis=1) / steps for x in (x0, x1))
    else:
        t0, t1 = (np.sum(x**2, axis=(1, 2)) for x in (x0, x1))
    j = rtm.sum_composition(run("gaussian", mu, p, steps), d, statistic)
    for alpha in (0.01, 0.1, 0.3, 0.6):
        c = np.quantile(t0, 1 - alpha)
        a_hat, b_hat = np.mean(t0 > c), np.mean(t1 <= c)
        se = np.sqrt(b_hat * (1 - b_hat) / n) + np.sqrt(a_hat * (1 - a_hat) / n)
        assert abs(j(a_hat) - b_hat) <= 5 * se + 1e-4


@settings(max_examples=10, deadline=None)
@given(mu=st.floats(0.05, 3.0), p=st.floats(0.05, 1.0), steps=st.integers(1, 40))
def test_energy_statistic_is_weaker_than_the_tensor_product(mu, p, steps):
    # sum ||theta_i||^2 is a function of the per-step magnitudes: post-processing of reading (a)
    energy = rtm.sum_composition(run("gaussian", mu, p, steps), 1, "sum_of_squares")(GRID)
    tensor = rtm.tensor_composition(run("gaussian", mu, p, steps))(GRID)
    assert np.all(energy >= tensor - 1e-9)


@settings(max_examples=8, deadline=None)
@given(mu=st.floats(0.1, 2.5), p=st.floats(0.05, 1.0), steps=st.integers(1, 40))
def test_composed_readings_are_valid_and_above_the_dp_curve(mu, p, steps):
    # Lemma 6 for the composed SGM: both RTM readings lie on or above the tight DP curve

    dp = pld.tradeoff_curve(pld.mechanism_pld(Mechanism("gaussian", 1 / mu, p, steps), discretization=1e-3), "symmetrised")
    for reading in rtm.READINGS:
        J = rtm.composed_subsampled_gaussian(run("gaussian", mu, p, steps), reading=reading)
        tradeoff.check_valid(J, INNER)
        np.testing.assert_allclose(J(INNER), J.inverse(INNER), atol=1e-9)
        assert np.all(J(GRID) >= dp(GRID) - 1e-9), reading


def test_readings_differ_with_a_common_direction():
    # the norm of the sum exploits the common direction of the shifts: with p = 1 it is the GM at
    # sqrt(N) mu, far stronger than combining per-step magnitudes (which lose the sign)
    mu, steps = 0.2, 150
    tensor = rtm.tensor_composition(run("gaussian", mu, 1.0, steps))
    total = rtm.sum_composition(run("gaussian", mu, 1.0, steps))
    assert np.max(tensor(GRID) - total(GRID)) > 0.2
    # ... and at Fig. 1e's parameters both are much closer to 1 - alpha than the DP curve

    dp = pld.tradeoff_curve(pld.mechanism_pld(Mechanism("gaussian", 5.0, 0.4, 30), discretization=1e-3), "symmetrised")
    gaps = [np.max(1 - GRID - c(GRID)) for c in (rtm.tensor_composition(run("gaussian", 0.2, 0.4, 30)),
                                                  rtm.sum_composition(run("gaussian", 0.2, 0.4, 30)), dp)]
    assert gaps[0] < gaps[1] < gaps[2]


def test_composition_arguments():
    with pytest.raises((TypeError, ValueError), match="Mechanism"):  # the loose numbers of the former signature
        rtm.tensor_composition("gaussian", 1.0, 0.5, 2)
    with pytest.raises(ValueError, match="dimension must be 1"):
        rtm.tensor_composition(run("laplace", 1.0, 0.5, 2), dimension=3)
    with pytest.raises(ValueError, match="Gaussian"):
        rtm.sum_composition(run("laplace", 1.0, 0.5, 2))
    with pytest.raises(ValueError, match="statistic"):
        rtm.sum_composition(run("gaussian", 1.0, 0.5, 2), statistic="max")
    with pytest.raises(ValueError, match="reading"):
        rtm.composed_subsampled_gaussian(run("gaussian", 1.0, 0.5, 2), reading="product")
    with pytest.raises(ValueError, match="discretization"):
        rtm.tensor_composition(run("gaussian", 1.0, 0.5, 2), discretization=0.0)


def test_sandwich_noise_brackets_the_target():
    target = tradeoff.gaussian(0.5)
    p, steps = 0.3, 10
    upper, lower = calibrate.sandwich_noise(target, p, steps, rtol=1e-3)
    assert lower < upper
    grid = tradeoff.default_grid(401)
    j_up = rtm.tensor_composition(Mechanism("gaussian", upper, p, steps))
    assert np.all(np.minimum(j_up(grid), j_up.inverse(grid)) >= target(grid) - 1e-12)
    j_tight = rtm.tensor_composition(Mechanism("gaussian", upper / 1.002, p, steps))
    assert np.min(np.minimum(j_tight(grid), j_tight.inverse(grid)) - target(grid)) < 0
    J_low = rtm.composed_subsampled_gaussian(Mechanism("gaussian", lower, p, steps))
    assert np.all(J_low(grid) <= target(grid) + 1e-9)
    with pytest.raises(ValueError, match="reading"):
        calibrate.sandwich_noise(target, p, steps, reading="x")


def test_printed_forms_of_the_errata():
    # eq. 3 as printed: equal to the corrected inverse outside the two branch points, wrong between
    for mu in (0.6, 1.5):
        good, bad = rtm.laplace(mu), rtm.laplace(mu, branch="printed")
        lo, hi = 0.5 - 0.5 * np.exp(-mu), 0.5 - 0.5 * np.exp(-2 * mu)
        outside = GRID[(GRID < lo) | (GRID > hi)]
        np.testing.assert_allclose(bad.inverse(outside), good.inverse(outside), atol=1e-15)
        inside = np.linspace(lo, hi, 9)[1:-1]
        assert np.all(good.inverse(inside) - bad.inverse(inside) > 0) and np.max(good.inverse(inside) - bad.inverse(inside)) > 5e-3
        np.testing.assert_allclose(bad(GRID), good(GRID), atol=0)
    # eq. 7 as printed, against the formulas written out here
    mu, d, steps = 0.2, 300, 150
    k = steps * mu**2
    s = np.sqrt(2 * k / d + 1)
    lhs = rtm.asymptotic(mu, d, steps, "clt_printed")
    np.testing.assert_allclose(lhs(GRID), norm.cdf(norm.isf(GRID) / s - np.sqrt(2) * k / (2 * d * s)), atol=1e-15)
    inner = GRID[(GRID > 1e-6) & (GRID < 1 - 1e-6)]
    np.testing.assert_allclose(lhs.inverse(lhs(inner)), inner, rtol=1e-6, atol=1e-12)
    rhs = rtm.asymptotic(mu, d, steps, "gaussian_printed")
    np.testing.assert_allclose(rhs(GRID), norm.cdf(norm.isf(GRID) - steps * np.sqrt(mu / (2 * d))), atol=1e-15)
    assert rtm.asymptotic_gap(mu, d, steps, "clt_printed") > 0.05
    with pytest.raises(ValueError, match="branch"):
        rtm.laplace(1.0, branch="x")
    with pytest.raises(ValueError, match="form"):
        rtm.asymptotic(1.0, form="x")


@pytest.mark.parametrize("d, sigma", [(2, 2.0), (50, 1.0), (300, 20.0), (1000, 20.0)])
def test_tensor_bracket_holds_in_high_dimension(d, sigma):
    """One full-batch step in dimension d: the exact RTM ReRo bound is the non-central chi-square tail at the
    chi-square quantile (Thm. 2); the bracket contains it, also where the Bessel form of the likelihood ratio
    underflows (large d, moderate radius: there 0F1 is evaluated directly)."""
    kappa = np.array([1e-3, 0.1, 0.5])
    exact = ncx2.sf(chi2.isf(kappa, d), d, 1.0 / sigma**2)
    low, up = rtm.tensor_bracket(Mechanism("gaussian", sigma, 1.0, 1), d).gamma(kappa)
    assert np.all(low <= exact + 1e-12) and np.all(exact <= up + 1e-12)
    assert np.all(up - low <= 1e-4 * exact)


def test_laplace_branch_error_finds_the_printed_discontinuity_and_none_corrected():
    e = rtm.laplace_branch_error(1.5, np.linspace(0, 1, 201))
    assert e["switch_printed"] == pytest.approx(0.5 - 0.5 * np.exp(-1.5)) and e["switch_corrected"] > e["switch_printed"]
    assert e["error_corrected"] < 1e-9 and e["error_printed"] > 1e-3 and e["jump"] > 1e-3
    with pytest.raises(ValueError, match="mu"):
        rtm.laplace_branch_error(0.0, [0.5])


def test_powers_of_one_full_batch_step_are_the_closed_forms():
    # j is T(chi2_1, chi2_1(mu^2)): its power at alpha is P(ncx2_1(mu^2) > chi2_1's upper alpha quantile)
    mu, alpha = 1.5, 0.01
    w = rtm.powers(run("gaussian", mu), alpha, np.linspace(0, 1, 2001))
    assert w["j"] == pytest.approx(ncx2.sf(chi2.isf(alpha, 1), 1, mu**2), rel=1e-9)
    assert w["dp"] == pytest.approx(norm.sf(norm.isf(alpha) - mu), rel=1e-12)
    assert w["clt"] == pytest.approx(norm.sf(norm.isf(alpha) - np.sqrt(np.expm1(mu**2))), rel=1e-12)
    assert max(w["j"], w["jinv"], w["J"]) <= w["dp"] + 1e-12


def test_powers_subsampled_and_composed_stay_below_the_dp_power():
    grid = np.linspace(0, 1, 1001)
    one = rtm.powers(run("gaussian", 2.0, 0.3), 0.05, grid)
    assert one["j"] == pytest.approx(0.3 * rtm.powers(run("gaussian", 2.0), 0.05, grid)["j"] + 0.7 * 0.05, rel=1e-9)  # p j_GM + (1 - p) alpha
    many = rtm.powers(run("gaussian", 1.0, 0.3, 3), 0.05, grid, discretization=1e-3, pld_discretization=1e-3)
    assert max(many["j"], many["jinv"], many["J"]) <= many["dp"] + 1e-3
    with pytest.raises(ValueError, match="alpha"):
        rtm.powers(run("gaussian", 1.0), 1.0, grid)


@pytest.mark.parametrize("mu", [1e-8, 1e-4, 0.3, 1.0, 1.5, 5.0])
def test_the_laplace_rtm_curve_keeps_its_digits_next_to_its_branch_point(mu):
    # 1 - alpha cosh(mu) below alpha = exp(-mu): at mu 1e-8 cosh rounds to 1 and the plain formula read 1 - alpha,
    # 4e-11 relative above the curve next to the branch point
    mp.dps = 50
    branch = float(mp.exp(-mp.mpf(mu)))
    for a in (1e-300, 0.3 * branch, branch * (1.0 - 1e-9), branch * (1.0 - 1e-14), np.nextafter(branch, 0.0)):
        exact = 1 - mp.mpf(a) * mp.cosh(mp.mpf(mu))
        assert float(rtm.laplace(mu)(a)) == pytest.approx(float(exact), rel=4e-16)


@pytest.mark.parametrize("mu,alpha", [(10.0, 5e-324), (38.0, 1e-300), (38.0, 1e-100)])
def test_release_curves_read_tiny_levels_at_large_effect_sizes(mu, alpha):
    # legal inputs that once failed with "returned NaN": scipy's ncx2.ppf is NaN there; the quantile is then found
    # from the cdf, rounded up (the inverse curve moves down), and every RTM curve is capped below by f_dp (Lemma 6)
    values = rtm.release_curves(run("gaussian", mu)).values([alpha])
    j, j_inv, big_j, f_dp = (values[k][0] for k in ("j", "j_inv", "J", "f_dp"))
    assert all(np.isfinite([j, j_inv, big_j, f_dp]))
    assert f_dp <= big_j <= min(j, j_inv)
    exact_dp = float(tradeoff.gaussian(mu)(alpha))
    assert f_dp <= exact_dp and big_j >= exact_dp * (1.0 - 1e-9)


def test_the_inverse_of_a_chi_square_curve_keeps_its_digits_next_to_one():
    # j^{-1}(1 - 2^-53) of the Gaussian RTM curve at mu = 1 (d = 1): P.sf(c) = 2 Phi(-s) where Q.sf(c) = 2^-53,
    # Q the law of (Z + 1)^2, s = sqrt(c).  Reading Q's quantile at the level 1 - 2^-53 gave 2.2 times the value
    mp.dps = 50
    tail = mp.mpf(2) ** -53
    s = mp.findroot(lambda t: mp.ncdf(1 - t) + mp.ncdf(-t - 1) - tail, 9.0)
    exact = 2 * mp.ncdf(-s)
    got = float(rtm.gaussian(1.0).inverse(1.0 - 2.0**-53))
    assert got == pytest.approx(float(exact), rel=1e-10)


def test_sandwich_noise_moves_a_bracket_that_misses_the_answer():
    # issue 53: a DP-SGD workload whose lower end lay below the page's default bounds stopped with "no noise
    # multiplier in [0.2, 50.0] satisfies the condition"; the failing end now moves out, with a warning
    target = tradeoff.gaussian(0.5)
    p, steps = 0.3, 10
    upper, lower = calibrate.sandwich_noise(target, p, steps, rtol=1e-3)
    with pytest.warns(FDPWarning, match="outside bounds"):
        moved = calibrate.sandwich_noise(target, p, steps, rtol=1e-3, bounds=(1.05 * upper, 200.0))
    assert moved[0] == pytest.approx(upper, rel=2e-3) and moved[1] == pytest.approx(lower, rel=2e-3)
    with pytest.warns(FDPWarning, match="outside bounds"):
        moved = calibrate.sandwich_noise(target, p, steps, rtol=1e-3, bounds=(0.01, 0.95 * lower))
    assert moved[0] == pytest.approx(upper, rel=2e-3) and moved[1] == pytest.approx(lower, rel=2e-3)


# --- from test_edges_surfaces, round 2 and later break reviews (the report, calibrate and gdp surfaces) ------


def test_rtm_gamma_at_a_tiny_prior_is_at_least_the_exact_one_step_value():
    """gamma(1e-20) read as 1 - beta was 5.55e-16 (truth 5.95e-16): the powers are now carried through the RTM
    read-off, and one step cuts its tail below the smallest level asked for."""
    r = risk.report(dpsgd(0.47, 0.0021, 1), fpr=[1e-3], kappa=[1e-20], discretization=1e-3, rtm_discretization=1e-3)
    exact = rtm_one_step_power(1e-20, 0.0021, 0.47)
    assert r.rtm.gamma_lower[0] <= exact <= r.rtm.gamma[0] <= exact * (1 + 1e-4)


@pytest.mark.parametrize("kappa", [1e-40, 1e-100, 1e-300])
def test_rtm_one_step_bracket_with_a_small_tail_holds_the_exact_power(kappa):
    """Tight down to 1e-100; at 1e-300 still above the truth, but loose: masses below 1e-250 and breakpoints below
    alpha 1e-280 go to infinite loss (their slopes pass the float range)."""
    from fdp.accounting import rtm

    bracket = rtm.tensor_bracket(Mechanism("gaussian", 0.47, 0.0021, 1), discretization=1e-3, tail=max(1e-3 * kappa, 1e-300))
    low, up = bracket.gamma([kappa])
    exact = rtm_one_step_power(kappa, 0.0021, 0.47)
    assert low[0] <= exact <= up[0]
    if kappa > 1e-250:
        assert up[0] <= exact * (1 + 1e-4)


# --- from test_edges_round3, round 3 (subnormal levels, RTM curves near alpha = 1, calibration caps) ---------


@pytest.mark.usefixtures("mpmath_50")
@pytest.mark.parametrize("mu", [1.0, 20.0, 100.0])
def test_laplace_rtm_curve_near_alpha_1_is_never_above_the_exact_one(mu):
    """-e^-mu sinh(log a) cancelled as a -> 1: 3.72008244e-53 against 3.72007587e-53 at mu 100, a = 1 - 1e-9."""
    curve = rtm.laplace(mu)
    for a in (0.5, 0.99, 1 - 1e-9, 1 - 1e-12, 1 - 1e-15):
        exact = mp.exp(-mu) * (1 - mpf(a)) * (1 + mpf(a)) / (2 * mpf(a))
        got = float(curve(a))
        assert abs(got / float(exact) - 1) < 1e-13


@pytest.mark.usefixtures("mpmath_50")
def test_rtm_readings_never_exceed_the_dp_ones_in_a_report():
    """noise 1e10, 2 steps: the RTM TPR and advantage read 1.0 while the DP advantage is 5.6e-11."""
    rep = risk.report(Mechanism("gaussian", 1e10, 1.0, 2))
    assert rep.rtm.advantage <= rep.advantage and np.all(rep.rtm.tpr <= rep.tpr)
    assert np.all(rep.rtm.gamma <= rep.rero.upper) and np.all(rep.rtm.tpr_lower <= rep.rtm.tpr)


@pytest.mark.usefixtures("mpmath_50")
def test_laplace_far_from_private_is_read_with_the_pure_dp_bound():
    """`report --mechanism laplace --noise-multiplier 0.001 --steps 10` refused ('no finite mu* holds'): the curve is 0
    in double precision, but 1/b = 1000 per step is 1000-DP, so mu* <= sqrt(steps) (-2 Phi^{-1}(1 / (1 + e^1000)))
    (GDP paper Prop. 6.1), the cap the report now reads (the whole report runs in the command list below); and its
    RTM lattice, whose folded Laplace law underflows at mu > 700, printed a TPR of 0.001 (the truth is 1) once the
    report ran: it is refused by name, and the report leaves the RTM reading out with that warning."""
    z = mp.findroot(lambda x: mp.log(ncdf(x)) + 1000, -44.6)  # Phi(z) = e^-1000 = 1 / (1 + e^1000) in doubles
    bound = math.sqrt(10) * float(-2 * z)
    assert bound <= Mechanism("laplace", 0.001, 1.0, 10).full_batch_mu <= bound * (1 + 1e-11)
    with pytest.raises(ValueError, match="e\\^-mu underflows"):
        rtm.tensor_bracket(Mechanism("laplace", 0.001, 1.0, 1), 1)
