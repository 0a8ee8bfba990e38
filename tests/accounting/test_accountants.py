"""Tests of fdp.accounting.accountants: epsilon of DP-SGD from the PLD and RDP accountants of dp_accounting, as this package calls them."""

from __future__ import annotations

import pytest

from fdp import Mechanism, risk
from fdp.accounting import accountants
from fdp.accounting.privacy_loss import dpsgd


def test_rdp_epsilon_is_dp_accountings_default():
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant

    acc = rdp_privacy_accountant.RdpAccountant()  # its default orders
    acc.compose(dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)), 100)
    assert accountants.epsilon(Mechanism("gaussian", 1.0, 0.01, 100), 1e-5, accountant="rdp") == acc.get_epsilon(1e-5)
    r = risk.report(dpsgd(1.0, 0.01, 100), discretization=1e-3, rero_discretization=1e-3, rtm_discretization=1e-3)
    assert r.to_dict()["dp"]["rdp_conversion"] == accountants.RDP_CONVERSION



def test_the_rdp_accountant_refuses_subsampled_laplace_by_name():
    """dp_accounting raised its own UnsupportedEventError (not a ValueError) for subsampled Laplace noise."""
    with pytest.raises(ValueError, match="mechanism: the RDP accountant takes Laplace noise without subsampling"):
        accountants.epsilon(Mechanism("laplace", 1.0, 0.5, 10), 1e-5, "rdp")
    assert 9.0 < accountants.epsilon(Mechanism("laplace", 1.0, 1.0, 10), 1e-5, "rdp") <= 10.0  # rate 1: about the pure eps 10

