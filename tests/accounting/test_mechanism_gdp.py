"""Tests of fdp.accounting.mechanism_gdp: mu* and regret of a mechanism (DP-SGD's certified curve, the closed forms of
calibrated mechanisms, grids and the regret's peak), GDP paper Alg. 1 and Sec. 5."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from fdp import Mechanism, risk
from fdp.accounting import accountants, mechanism_gdp, pld
from fdp.accounting.privacy_loss import dpsgd
from fdp.curves import gdp, tradeoff


def test_mu_and_regret_dpsgd_sec5_and_grid():
    # GDP paper Sec. 5 / Fig. 1c: noise 9.4, 2000 steps, rate 2^14/50000 is 1.57-GDP with regret 0.10 %
    mu, reg = mechanism_gdp.mu_and_regret_dpsgd(Mechanism("gaussian", 9.4, 2**14 / 50000, 2000), discretization=1e-3)
    assert round(mu, 2) == 1.57
    assert round(100 * reg, 2) == 0.10
    mu, reg = mechanism_gdp.mu_and_regret_dpsgd(Mechanism("gaussian", 9.4, 2**14 / 50000, 2000), discretization=1e-3, method="dp_accounting")
    assert round(mu, 2) == 1.57
    curve = pld.mechanism_tradeoff(Mechanism("gaussian", 9.4, 2**14 / 50000, 2000), discretization=1e-3)
    assert tuple(gdp.mu_and_regret(curve, tail=1e-10)) == pytest.approx((mu, reg), rel=1e-9)
    mus, regs = mechanism_gdp.mu_and_regret_dpsgd_grid([2.0, 4.0], [0.01, 0.1], [100, 400])
    assert mus.shape == regs.shape == (2, 2, 2)
    assert regs[1, 0, 1] == mechanism_gdp.mu_and_regret_dpsgd(Mechanism("gaussian", 4.0, 0.1, 100)).regret
    assert np.all(mus[0] > mus[1])  # more noise, smaller mu
    with pytest.raises(ValueError, match="noise_multiplier"):
        mechanism_gdp.mu_and_regret_dpsgd(Mechanism("gaussian", -1.0, 0.1, 10))
    with pytest.raises(ValueError, match="sampling_rate"):
        pld.mechanism_tradeoff(Mechanism("gaussian", 1.0, 1.5, 10))



@pytest.mark.parametrize("sigma, rate, steps", [(3.0, 0.01, 5000), (1.5, 0.05, 400)])
def test_mu_and_regret_dpsgd_certified(sigma, rate, steps):
    """The default (lattice) route: f_mu* lies below the certified symmetrised curve on the kept range, mu*
    is at least the mu* of the certified upper curve (so within the certified interval) and agrees with the
    dp_accounting route to 1e-4; at (1.5, 0.05, 400) gdpnum's mu* lies below that interval (optimistic)."""
    from gdpnum.dpsgd import get_mu_and_regret_for_dpsgd

    mu, reg = mechanism_gdp.mu_and_regret_dpsgd(Mechanism("gaussian", sigma, rate, steps), discretization=1e-4)
    sym = pld.certified_lower_curve(Mechanism("gaussian", sigma, rate, steps), discretization=1e-4, direction="symmetrised")
    kept = (sym.alphas >= 1e-10) & (sym.betas >= 1e-10)
    assert np.all(tradeoff.gaussian(mu)(sym.alphas[kept]) <= sym.betas[kept])
    assert tuple(gdp.mu_and_regret(sym, symmetrise=False, tail=1e-10)) == (mu, reg)
    bracket = pld.tradeoff_bracket(Mechanism("gaussian", sigma, rate, steps), discretization=1e-4, level_min=1e-10)
    assert gdp.mu_star(bracket.upper, tail=1e-10) <= mu
    mu_d, reg_d = mechanism_gdp.mu_and_regret_dpsgd(Mechanism("gaussian", sigma, rate, steps), discretization=1e-4, method="dp_accounting")
    assert mu == pytest.approx(mu_d, rel=1e-4) and reg == pytest.approx(reg_d, rel=1e-2)
    if sigma == 1.5:
        assert get_mu_and_regret_for_dpsgd(sigma, rate, steps)[0] < 0.99 * gdp.mu_star(bracket.upper, tail=1e-10)
    with pytest.raises(ValueError, match="method"):
        mechanism_gdp.mu_and_regret_dpsgd(Mechanism("gaussian", sigma, rate, steps), method="exact")



def test_regret_peak_lies_above_the_grid_points_around_it():
    rates = [0.02, 0.05, 0.2]
    regrets = [mechanism_gdp.mu_and_regret_dpsgd(Mechanism("gaussian", 2.0, q, 400)).regret for q in rates]
    peak, rate = mechanism_gdp.regret_peak(2.0, 400, rates[0], rates[-1], xatol=0.02)
    assert rates[0] <= rate <= rates[-1] and peak >= max(regrets) - 1e-6
    assert peak == pytest.approx(mechanism_gdp.mu_and_regret_dpsgd(Mechanism("gaussian", 2.0, rate, 400)).regret, abs=1e-12)
    assert mechanism_gdp.regret_peak(2.0, 400, 0.05, 0.05) == (regrets[1], 0.05)
    with pytest.raises(ValueError, match="rate_low"):
        mechanism_gdp.regret_peak(2.0, 400, 0.2, 0.05)
    with pytest.raises(ValueError, match="steps"):
        mechanism_gdp.regret_peak(2.0, 0, 0.05, 0.2)



def test_dpsgd_readings_are_the_accountants_and_the_curves():
    m = Mechanism("gaussian", 1.5, 0.02, 300)
    r = mechanism_gdp.dpsgd_readings(m, delta=1e-5, discretization=1e-3)
    assert r["eps_pld"] == accountants.epsilon(m, 1e-5, discretization=1e-3) <= r["eps_rdp"] == accountants.epsilon(m, 1e-5, accountant="rdp")
    assert (r["mu"], r["regret"]) == tuple(gdp.mu_and_regret(pld.mechanism_tradeoff(m, discretization=1e-3), symmetrise=False,
                                                             tail=1e-10))
    with pytest.raises(ValueError, match="delta"):
        mechanism_gdp.dpsgd_readings(m, delta=0.0)



@pytest.mark.parametrize("eps,delta", [(1.0, 1e-5), (8.0, 1e-5), (0.5, 1.0 - 1e-15), (1.0, 1e-310), (100.0, 0.3),
                                       (0.0, 0.5)])
def test_the_gaussian_mu_from_eps_delta_is_bracketed_in_exact_arithmetic(eps, delta):
    # the gdp --epsilon lower end was mu (1 - 2^-50), while mu is certified only to 1e-14 at some (eps, delta)
    from fdp.curves.gdp import _exact_gaussian_delta
    low, up = gdp.mu_from_eps_delta(eps, delta, side="lower"), gdp.mu_from_eps_delta(eps, delta)
    assert low <= up
    assert _exact_gaussian_delta(eps, low) <= delta <= _exact_gaussian_delta(eps, up)
    closed = mechanism_gdp.mu_and_regret_closed_form("gaussian", eps, delta) if eps > 0 else None
    if closed is not None:
        assert (closed.mu_lower, closed.mu) == (low, up)



@pytest.mark.parametrize("noise", ["laplace", "randomized-response"])
@pytest.mark.parametrize("eps", [1e-300, 1e-8, 0.5, 1.0, 30.0, 700.0])
def test_the_pure_dp_closed_forms_lower_end_is_below_the_exact_mu(noise, eps):
    mpmath.mp.dps = 400  # erfinv near 1 - 1e-304 (eps = 700)
    e = mpmath.mpf(eps)
    if noise == "randomized-response":  # -2 Phi^{-1}(1 / (e^eps + 1))
        exact = -2 * mpmath.sqrt(2) * mpmath.erfinv(2 / (mpmath.exp(e) + 1) - 1)
    else:  # 2 Phi^{-1}(1 - e^{-eps/2} / 2)
        exact = 2 * mpmath.sqrt(2) * mpmath.erfinv(1 - mpmath.exp(-e / 2))
    closed = mechanism_gdp.mu_and_regret_closed_form(noise, eps)
    assert closed.mu_lower <= exact <= closed.mu
    mpmath.mp.dps = 15



def test_a_noise_name_where_a_mechanism_belongs_is_told_how_to_build_one():
    for call in (lambda: mechanism_gdp.mu_and_regret_dpsgd("gaussian"), lambda: risk.report("gaussian"),
                 lambda: pld.tradeoff_bracket("gaussian"), lambda: accountants.epsilon("laplace", 1e-5)):
        with pytest.raises(ValueError, match=r"must be a fdp.Mechanism, got '(gaussian|laplace)': pass Mechanism\("):
            call()
    for subject in ("gaussian", dpsgd(1.0, 0.01, 10)):  # a curve reading given a mechanism says where mechanisms go
        with pytest.raises(ValueError, match=r"curve must be a PiecewiseLinear .*fdp\.accounting\.mechanism_gdp\.mu_and_regret_dpsgd\(Mechanism"):
            gdp.mu_and_regret(subject)

