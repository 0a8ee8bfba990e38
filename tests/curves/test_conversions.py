"""Tests of fdp.curves.conversions: privacy profiles, (eps, delta), RDP and zCDP summaries of a trade-off curve and
back (GDP paper Sec. 2, App. C), against closed forms and dp_accounting."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from fdp import Mechanism
from fdp.accounting import pld, rdp
from fdp.curves import conversions, gdp, tradeoff
from references import gaussian_breakpoints


def test_randomized_response_prop_6_1():
    for eps in (0.1, 0.5, 1.0, 2.0, 5.0, 10.0):
        rr = conversions.randomized_response(eps)
        p = 1 / (1 + math.exp(eps))
        np.testing.assert_allclose(rr.alphas, [0, p, 1])
        np.testing.assert_allclose(rr.betas, [1, p, 0])
        mu = gdp.mu_pure_dp(eps)
        assert gdp.mu_star(rr) == pytest.approx(mu, rel=1e-13)
        # App. E: f_mu passes through the corner (p, p)
        assert tradeoff.gaussian(mu)(p) == pytest.approx(p, rel=1e-12)
    # Sec. 6: "reporting the GDP guarantee has a regret of 0.058" for randomized response, eps = 1
    mu, reg = gdp.mu_and_regret(conversions.randomized_response(1.0))
    assert round(reg, 3) == 0.058



def test_randomized_response_is_the_eps_dp_curve():
    rr, dp = conversions.randomized_response(1.0), tradeoff.eps_delta(1.0, 0.0)
    assert rr.alphas.tolist() == dp.alphas.tolist() and rr.betas.tolist() == dp.betas.tolist()
    assert rr.name == "randomized response eps=1"



def test_profile_to_tradeoff_is_eq3_on_the_grid():
    eps = np.array([0.0, 0.3, 1.0, 2.0, 4.0])
    deltas = np.array([0.4, 0.2, 0.05, 0.01, 1e-4])
    curve = conversions.profile_to_tradeoff(eps, deltas)
    a = np.union1d(np.linspace(0, 1, 2001), curve.alphas)
    expected = np.max([tradeoff.eps_delta(e, d)(a) for e, d in zip(eps, deltas)], axis=0)
    np.testing.assert_allclose(curve(a), expected, atol=1e-15)
    tradeoff.check_valid(curve, curve.alphas)



def test_profile_of_gaussian_gives_a_lower_bound_converging_to_f_mu():
    mu = 1.0
    f_mu = tradeoff.gaussian(mu)
    a = tradeoff.default_grid(2001)
    gaps = []
    for n in (51, 201, 801):
        e = np.linspace(0, 12, n)
        curve = conversions.profile_to_tradeoff(e, gdp.gaussian_delta(e, mu))
        assert np.all(curve(a) <= f_mu(a) + 1e-15)
        gaps.append(np.max(f_mu(a) - curve(a)))
    assert gaps[0] > gaps[1] > gaps[2]



def test_rdp_delta_matches_dp_accounting():
    from dp_accounting.rdp.rdp_privacy_accountant import compute_delta

    orders = np.array([1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 16.0, 32.0, 64.0, 256.0])
    rdp = orders / (2 * 1.3**2)  # Gaussian mechanism, sigma = 1.3
    for e in (0.0, 0.1, 1.0, 3.0, 8.0):
        assert conversions.rdp_delta(e, orders, rdp) == pytest.approx(compute_delta(orders, rdp, e)[0], rel=1e-12)
    assert conversions.rho_from_rdp(orders, rdp) == pytest.approx(1 / (2 * 1.3**2), rel=1e-15)



def test_zcdp_profile_and_curve():
    rho = 0.5  # the Gaussian mechanism with mu = 1 is 1/2-zCDP
    eps = np.linspace(0, 10, 41)
    exact = conversions.zcdp_delta(eps, rho)
    orders = 1 + np.geomspace(1e-4, 1e4, 2001)
    on_grid = conversions.rdp_delta(eps, orders, rho * orders)
    assert np.all(exact <= on_grid * (1 + 1e-12))  # the continuum minimum is below any grid's
    # the continuum minimum over t > 1 of CKS Prop. 12, found here by a generic scalar minimiser
    for e, got in zip(eps, exact):
        log_cks = lambda u: np.exp(u) * (rho * (1 + np.exp(u)) - e + np.log1p(-1 / (1 + np.exp(u)))) - np.log1p(
            np.exp(u)
        )
        res = optimize.minimize_scalar(log_cks, bounds=(-30.0, 15.0), method="bounded", options={"xatol": 1e-10})
        ref = min(math.exp(min(res.fun, 0.5 * math.log(-math.expm1(-rho)))), 1.0)
        assert got == pytest.approx(ref, rel=1e-9)
    assert np.all(gdp.gaussian_delta(eps, 1.0) <= exact)  # conversions cannot beat the exact profile
    curve = conversions.zcdp_tradeoff(rho)
    tradeoff.check_valid(curve, curve.alphas)
    a = tradeoff.default_grid(2001)
    assert np.all(curve(a) <= tradeoff.gaussian(1.0)(a) + 1e-15)  # pessimistic for the Gaussian
    # App. C.3 / Fig. 1c: the zCDP representation of a Gaussian mechanism has a visible regret
    exact_curve = gaussian_breakpoints(1.0, 2**13)
    assert gdp.delta_divergence(exact_curve, curve) > 0.01
    assert gdp.gdp_regret(exact_curve, 1.0) < 1e-7



def test_rho_from_rdp_is_eq25():
    orders = np.array([1.5, 2.0, 4.0, 8.0, 16.0])
    rdp = np.array([0.3, 0.5, 0.9, 1.2, 1.4])
    rho = conversions.rho_from_rdp(orders, rdp)
    assert np.all(rdp <= rho * orders)
    assert np.any(np.isclose(rdp, rho * orders, rtol=1e-15, atol=0.0))



def test_tradeoff_profile_is_the_hockey_stick_divergence():
    # on breakpoints of f_mu the profile is the Gaussian one, up to the interpolation (from below)
    mu = 1.3
    curve = gaussian_breakpoints(mu, 2**14)
    e = np.array([0.0, 0.3, 1.0, 2.5, 5.0])
    got = conversions.tradeoff_profile(curve, e)
    exact = gdp.gaussian_delta(e, mu)
    assert np.all(got <= exact + 1e-15)
    np.testing.assert_allclose(got, exact, rtol=1e-3, atol=1e-9)
    # randomized response: delta(eps') = (e^eps - e^eps') / (1 + e^eps) for eps' <= eps, else 0
    rr = conversions.randomized_response(1.0)
    e = np.array([0.0, 0.5, 1.0, 2.0])
    ref = np.clip((math.e - np.exp(e)) / (1 + math.e), 0, None)
    np.testing.assert_allclose(conversions.tradeoff_profile(rr, e), ref, atol=1e-15)
    # against dp_accounting's profile of a DP-SGD PLD
    dist = pld.mechanism_pld(Mechanism("gaussian", 2.0, 0.05, 50), discretization=1e-3)
    c = pld.tradeoff_curve(dist, "symmetrised", normalise=True)
    for x in (0.0, 0.2, 1.0, 2.0):
        assert conversions.tradeoff_profile(c, x) == pytest.approx(dist.get_delta_for_epsilon(x), rel=1e-5, abs=1e-12)



def test_profile_divergence_eq24():
    # genuine profiles: eq. 24 on a fine grid equals the Delta-divergence of the curves
    f = gaussian_breakpoints(1.0, 2**12)
    g = tradeoff.eps_delta(2.0, 1e-3)
    e = np.linspace(0, 12, 12001)
    d24 = conversions.profile_divergence(e, conversions.tradeoff_profile(f, e), conversions.tradeoff_profile(g, e))
    assert d24 == pytest.approx(gdp.delta_divergence(f, g), abs=1e-6)
    assert d24 <= gdp.delta_divergence(f, g) + 1e-15
    # a raw converted profile is larger than the profile of its own curve: eq. 24 overstates
    orders = 1 + np.geomspace(1e-3, 1e3, 100)
    renyi = rdp.renyi_dp(Mechanism("laplace", 1.0, 1.0, 1), orders)
    lap = conversions.profile_to_tradeoff(e, np.clip(1 - np.exp((e - 1) / 2), 0, 1))  # Laplace b = 1 profile
    raw = conversions.rdp_delta(e, orders, renyi)
    curve = conversions.profile_to_tradeoff(e, raw)
    assert conversions.profile_divergence(e, conversions.tradeoff_profile(lap, e), raw) > gdp.delta_divergence(lap, curve) + 0.01
    with pytest.raises(ValueError, match="delta_rep"):
        conversions.profile_divergence([0.0, 1.0], [0.1, 0.2], [0.1])



def test_zcdp_delta_large_rho_is_finite():
    # the optimal order is 1 + e^-rho: below the resolution of doubles near 1 for rho of about 40
    e = np.array([0.0, 1.0, 10.0, 100.0])
    for rho in (37.0, 51.0, 200.0):
        d = conversions.zcdp_delta(e, rho)
        assert np.all(np.isfinite(d)) and np.all((d >= 0) & (d <= 1))
    assert conversions.zcdp_delta(0.0, 51.0) == pytest.approx(1.0)
    assert np.all(np.diff(conversions.zcdp_delta(np.linspace(0, 200, 201), 51.0)) <= 0)



def test_representations_are_the_summaries_and_their_exact_regrets():
    # the Laplace mechanism with b = 1: pure 1-DP; each regret is the Delta-divergence of that summary's curve
    m, orders = Mechanism("laplace", 1.0), np.geomspace(1.01, 200.0, 60)
    curve = pld.tradeoff_curve(pld.mechanism_pld(m, discretization=1e-4), "symmetrised", normalise=True)
    r = conversions.representations(curve, delta=1e-5, epsilon=1.0, orders=orders, rdp=rdp.renyi_dp(m, orders),
                                    eps_grid=np.linspace(0, 4, 401), tail=1e-10, eps_pure=1.0)
    assert set(r["reps"]) == {"eps_dp", "eps_delta", "zcdp", "rdp"} and set(r["regret"]) == set(r["reps"]) | {"gdp"}
    assert r["regret"]["zcdp"] == gdp.delta_divergence(curve, conversions.zcdp_tradeoff(r["rho"]))
    assert 0 < r["regret"]["eps_dp"] == gdp.delta_divergence(curve, tradeoff.eps_delta(1.0, 0.0)) < 0.05
    assert r["eq24"]["rdp"] >= r["regret"]["rdp"] - 1e-9  # eq. 24 on converted profiles overstates
    # rho_limit only ever raises rho (eq. 25 is a supremum over every order)
    assert conversions.representations(curve, delta=1e-5, epsilon=1.0, orders=orders, rdp=rdp.renyi_dp(m, orders),
                                       eps_grid=np.linspace(0, 4, 401), tail=1e-10, rho_limit=10.0)["rho"] == 10.0
    with pytest.raises(ValueError, match="curve"):
        conversions.representations("laplace", delta=1e-5, epsilon=1.0, orders=orders, rdp=orders, eps_grid=[0.0])



def test_representations_refuse_a_summary_the_curve_does_not_satisfy():
    m, orders = Mechanism("gaussian", 1.0), np.linspace(1.5, 64, 200)
    curve, r0, grid = pld.mechanism_tradeoff(m, discretization=1e-4), rdp.renyi_dp(m, orders), np.linspace(0, 8, 801)
    with pytest.raises(ValueError, match="rdp"):
        conversions.representations(curve, delta=1e-5, epsilon=4.38, orders=orders, rdp=r0 / 4, eps_grid=grid, tail=1e-10)
    with pytest.raises(ValueError, match="epsilon and delta"):
        conversions.representations(curve, delta=1e-5, epsilon=1.0, orders=orders, rdp=r0, eps_grid=grid, tail=1e-10)
    with pytest.raises(ValueError, match="rho_limit"):
        conversions.representations(curve, delta=1e-5, epsilon=4.38, orders=orders, rdp=r0, eps_grid=grid, rho_limit=float("nan"))



def test_mu_floor_above_the_curve_is_an_error():
    with pytest.raises(ValueError, match="passes below"):
        gdp.mu_star(conversions.randomized_response(24.0), tail=1e-10)

