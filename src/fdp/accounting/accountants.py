"""The (eps, delta) accountants of Poisson-subsampled Gaussian (or Laplace) noise: the tight PLD and the RDP one.

:func:`epsilon` is the (eps, delta) guarantee of ``steps``-fold Poisson-subsampled noise (sensitivity 1, a
:class:`fdp.accounting.privacy_loss.Mechanism`) under add/remove adjacency, from either the tight PLD accountant
(``dp_accounting``'s pessimistic connect-the-dots PLD, the maximum over both directions: an upper bound on the
true eps, tight up to the discretisation) or the RDP accountant (Mironov et al.; looser).  An accountant, not a
calibration: :mod:`fdp.risk` reads it, :mod:`fdp.calibrate` inverts it.
"""

from __future__ import annotations

import logging
import warnings
from typing import Literal

import dp_accounting
import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant

from ..validation import check_discretization, check_open_unit
from . import pld
from .privacy_loss import Mechanism, takes_mechanism

__all__ = ["ACCOUNTANTS", "RDP_CONVERSION", "RDP_ORDERS", "check_accountant", "epsilon"]

#: The (eps, delta) accountants of :func:`epsilon`: the tight PLD one, and the RDP one on dp_accounting's orders
#: (what TF Privacy's ``compute_dp_sgd_privacy_statement`` prints without microbatching) or on Opacus's.
ACCOUNTANTS = ("pld", "rdp", "rdp_opacus")
#: The largest noise multiplier the RDP accountant is run at; a larger one is read at this one (an upper bound).
RDP_NOISE_MAX = 1e100
#: The RDP accountant's conversion, as the report's JSON states it: the standard order grid of dp_accounting
#: (its ``DEFAULT_RDP_ORDERS``: 1.1, 1.2, ..., 10.9, 11, ..., 63, 128, 256, 512, 1024), which TF Privacy and
#: most training logs use, and its RDP-to-DP conversion (Canonne, Kamath, Steinke 2020, Prop. 12; Asoodeh et
#: al. 2020).  A fractional order whose series does not converge is left out by dp_accounting (only a larger
#: epsilon can result); its log message is kept off stderr.
RDP_CONVERSION = ("dp_accounting RdpAccountant, default orders 1.1-10.9 (step 0.1), 11-63, 128, 256, 512, 1024; "
                  "conversion of Canonne, Kamath, Steinke (2020) Prop. 12")
#: The RDP orders of each RDP accountant: dp_accounting's ``DEFAULT_RDP_ORDERS``, and the orders Opacus's
#: ``RDPAccountant`` uses by default (1.1, 1.2, ..., 10.9 and 12, ..., 63; its conversion is the same Prop. 12).
RDP_ORDERS = {"rdp": tuple(rdp_privacy_accountant.DEFAULT_RDP_ORDERS),
              "rdp_opacus": tuple([1 + k / 10 for k in range(1, 100)] + list(range(12, 64)))}


def check_accountant(accountant) -> str:
    """``accountant`` if it is one of :data:`ACCOUNTANTS`, else a ValueError naming it.

    Parameters
    ----------
    accountant : str

    Returns
    -------
    str
    """
    if accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")
    return accountant


@takes_mechanism
def epsilon(mechanism: Mechanism, delta: float, accountant: Literal["pld", "rdp", "rdp_opacus"] = "pld",
            discretization: float = 1e-4) -> float:
    """eps at ``delta`` of ``steps``-fold subsampled Gaussian (or Laplace) noise (add/remove adjacency, sensitivity 1).

    Parameters
    ----------
    mechanism : Mechanism
        The noise (``noise_multiplier`` is sigma or b over the sensitivity), its sampling rate and steps.
    delta : float
        In (0, 1).
    accountant : {"pld", "rdp", "rdp_opacus"}, default "pld"
        ``dp_accounting``'s PLD accountant (pessimistic, at ``discretization``) or its RDP accountant, on the
        standard order grid (:data:`RDP_CONVERSION`: the epsilon a dp_accounting or TF Privacy log prints) or on
        the orders of Opacus's ``RDPAccountant`` (:data:`RDP_ORDERS`).
    discretization : float, default 1e-4
        PLD lattice spacing.

    Returns
    -------
    float

    References
    ----------
    Hayes et al. (2023) Fig. 5a and Sec. 4.3; ReRo paper (Kaissis et al. 2023a) App. Fig. 4 (the noise of both is calibrated this way).

    Examples
    --------
    >>> round(epsilon(Mechanism("gaussian", 1.0), 1e-5), 3)  # one Gaussian step with sigma = 1
    4.377
    """
    delta = check_open_unit("delta", delta)
    if check_accountant(accountant) == "pld":
        dist = pld.mechanism_pld(mechanism, discretization=check_discretization("discretization", discretization))
        return pld.epsilon_for_delta(dist, delta)
    noise, noise_multiplier, sampling_rate, steps = mechanism.args
    if noise == "laplace" and sampling_rate < 1.0:
        raise ValueError(f"mechanism: the RDP accountant takes Laplace noise without subsampling only (sampling_rate 1), "
                         f"got sampling_rate {sampling_rate!r}; use accountant 'pld'")
    # RDP falls as the noise grows, so the epsilon at RDP_NOISE_MAX bounds every larger noise's from above (dp_accounting
    # squares the noise multiplier, which overflows above about 1.3e154)
    noise_multiplier = min(noise_multiplier, RDP_NOISE_MAX)
    event = (dp_accounting.GaussianDpEvent(noise_multiplier) if noise == "gaussian"
             else dp_accounting.LaplaceDpEvent(noise_multiplier))
    if sampling_rate < 1.0:
        event = dp_accounting.PoissonSampledDpEvent(sampling_rate, event)
    acc = rdp_privacy_accountant.RdpAccountant(orders=RDP_ORDERS[accountant])
    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)  # "failed to converge ... Excluding this order" (the order is left out)
    try:
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # 1 / noise^2 = inf at a noise of 1e-300: eps is inf
            acc.compose(event, steps)
            return float(acc.get_epsilon(delta))
    finally:
        absl.setLevel(level)
