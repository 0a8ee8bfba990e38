"""Tests of fdp.accounting.rdp: Renyi DP of the Gaussian and Laplace mechanisms, subsampled and composed, against closed forms and dp_accounting."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fdp import Mechanism
from fdp.accounting import rdp
from fdp.validation import ResourceLimitError


def test_renyi_dp_laplace_matches_dp_accounting_and_kl_limit():
    from dp_accounting.rdp.rdp_privacy_accountant import _laplace_rdp

    orders = np.array([1.0, 1.0 + 1e-12, 1.0 + 1e-6, 1.01, 1.05, 1.1, 1.5, 2.0, 7.0, 64.0, 1024.0])
    for b in (0.3, 1.0, 4.0):
        ours = rdp.renyi_dp(Mechanism("laplace", b, 1.0, 1), orders)
        ref = np.array([_laplace_rdp(1.0 / b, t) for t in orders])
        np.testing.assert_allclose(ours, ref, rtol=1e-12)
        assert np.all(np.diff(ours) >= -1e-15)  # Renyi divergence is non-decreasing in the order
        assert ours[0] == pytest.approx(1.0 / b + math.exp(-1.0 / b) - 1.0, rel=1e-14)  # KL at t = 1



def test_renyi_dp_keeps_its_digits_next_to_order_one():
    """log E_P[(Q/P)^t] / (t - 1) cancels as t -> 1: it gave 0 at t = 1 + 1e-12 (an RDP of 0, optimistic) and was 1e-6
    off at t = 1.0001.  Reference values by mpmath quadrature at 40 digits (noise 1, rate 0.01: D_t(Q || P) dominates)."""
    run = Mechanism("gaussian", 1.0, 0.01, 1)
    kl, at_10001, at_1001 = 8.38122076508318e-5, 8.38207891970306e-5, 8.38980249926792e-5
    got = rdp.renyi_dp(run, [1.0, 1.0 + 1e-12, 1.0001, 1.001])
    np.testing.assert_allclose(got, [kl, kl, at_10001, at_1001], rtol=1e-9)
    assert np.all(np.diff(rdp.renyi_dp(run, [1.0, 1.5, 1.999999, 2.0, 2.000001, 3.0])) > 0)  # smooth across t = 2



def test_renyi_dp_refuses_a_grid_it_cannot_build():

    with pytest.raises(ResourceLimitError, match="orders: the integral at order 1e\\+06"):
        rdp.renyi_dp(Mechanism("gaussian", 0.1, 0.5, 1), [2.0, 1e6])
    assert rdp.renyi_dp(Mechanism("gaussian", 0.1, 1.0, 2), [1e6])[0] == 2 * 1e6 / (2 * 0.1**2)  # closed form: no grid



def test_renyi_dp_subsampled_gaussian_integer_orders_closed_form_and_monotone():
    from dp_accounting.rdp.rdp_privacy_accountant import (
        _compute_rdp_poisson_subsampled_gaussian,
    )

    ints = np.array([2.0, 3.0, 5.0, 10.0, 32.0, 100.0, 256.0])
    for sigma, q in ((9.4, 2**14 / 50000), (1.0, 0.01), (0.7, 0.3), (2.0, 0.05)):
        ours = rdp.renyi_dp(Mechanism("gaussian", sigma, q, 3), ints)
        ref = 3 * _compute_rdp_poisson_subsampled_gaussian(q, sigma, ints)
        np.testing.assert_allclose(ours, ref, rtol=1e-9)
    # no subsampling: the Gaussian mechanism, eps(t) = t / (2 sigma^2), also at t = 1 and fractional t
    t = np.array([1.0, 1.001, 1.5, 2.5, 40.0])
    np.testing.assert_allclose(rdp.renyi_dp(Mechanism("gaussian", 1.7, 1.0, 1), t), t / (2 * 1.7**2), rtol=1e-9)
    # real orders: non-decreasing in t and between the integer neighbours (dp_accounting's fractional
    # series is not: for this mechanism it gives eps(1.1) > eps(2))
    t = np.concatenate([[1.0, 1.001, 1.01, 1.1, 1.5], np.linspace(2, 12, 41)])
    eps = rdp.renyi_dp(Mechanism("gaussian", 9.4, 2**14 / 50000, 2000), t)
    assert np.all(np.diff(eps) > 0)
    broken = 2000 * _compute_rdp_poisson_subsampled_gaussian(2**14 / 50000, 9.4, [1.1, 2.0])
    assert broken[0] > broken[1]  # the reason for computing our own
    assert eps[3] < eps[5]

