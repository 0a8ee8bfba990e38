"""Tests of fdp.accounting.accountants: epsilon of DP-SGD from the PLD and RDP accountants of dp_accounting, as this package calls them."""

from __future__ import annotations

import numpy as np
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



@pytest.mark.parametrize("run", [(1.1, 256 / 60000, 7032), (5.0, 0.01, 50)])
def test_rdp_on_opacus_orders_is_the_conversion_of_our_own_renyi_dp(run):
    """Opacus's RDPAccountant reads the Renyi DP of the run (Mironov et al. 2019) at its orders 1.1-10.9 and 12-63 and
    converts each with eps = rdp(a) + log(1 - 1/a) - log(delta a) / (a - 1) (Balle et al. 2020, Thm. 21), keeping the
    smallest: recomputed from fdp.accounting.rdp's own numerical integration, not dp_accounting's series. The second
    run's best order lies above 63, so Opacus's epsilon is larger than dp_accounting's default grid gives."""
    from fdp.accounting import rdp

    mechanism, delta = Mechanism("gaussian", *run), 1e-5
    orders = np.array(accountants.RDP_ORDERS["rdp_opacus"])
    assert orders.min() == 1.1 and orders.max() == 63 and 11 not in orders and len(orders) == 99 + 52
    eps = np.min(rdp.renyi_dp(mechanism, orders) + np.log1p(-1.0 / orders) - np.log(delta * orders) / (orders - 1.0))
    assert accountants.epsilon(mechanism, delta, accountant="rdp_opacus") == pytest.approx(eps, rel=1e-6)
    default = accountants.epsilon(mechanism, delta, accountant="rdp")
    if run[0] == 5.0:
        assert default < 0.99 * eps
    else:
        assert default == pytest.approx(eps, rel=1e-6)
