"""Membership inference read off a trade-off curve: the true-positive rate at a false-positive rate, the
advantage and the Bayes success of guessing membership.

A membership-inference attack on one record is a test between the mechanism's output distributions with and
without the record, so every attack's (FPR, 1 - TPR) lies on or above the trade-off curve ``f`` of that pair
(Dong, Roth, Su 2022, Sec. 2): ``TPR <= 1 - f(FPR)``.  Read from a certified lower bound on ``f`` (as
:func:`fdp.accounting.pld.certified_lower_curve` gives), every number here is a certified upper bound on the attack's
success; :func:`fdp.risk.report` and :mod:`fdp.targets` (so :func:`fdp.calibrate.solve`) use them.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from scipy.special import ndtr
from scipy.stats import norm

from ..formatting import past_subnormal_rounding
from ..validation import check_array_in, check_nonnegative
from . import tradeoff

__all__ = ["membership_bounds", "gaussian_membership_bounds"]


def membership_bounds(curve: tradeoff.PiecewiseLinear, fpr, prior, *,
                      side: Literal["upper", "lower"] = "upper") -> tuple[np.ndarray, float, np.ndarray]:
    """Membership-inference readings of a trade-off curve: ``(TPR at each FPR, advantage, Bayes success at each prior)``.

    ``TPR = 1 - f(FPR)``; the advantage is ``max_alpha 1 - alpha - f(alpha)``; the Bayes success of a guess
    of membership, for a target present with probability ``prior``, is ``max_alpha prior (1 - f(alpha)) +
    (1 - prior)(1 - alpha)``.  Both maxima of a linear function over a piecewise-linear curve are attained
    at a breakpoint.  Read from a lower bound on the exact curve, all three are upper bounds (``side="upper"``: each
    moved up past its rounding); read from an upper bound on it with ``side="lower"``, lower bounds (moved down).

    Parameters
    ----------
    curve : PiecewiseLinear
    fpr : array_like
        False-positive rates in [0, 1].
    prior : array_like
        Priors in (0, 1).
    side : {"upper", "lower"}, default "upper"
        Which side of its float error each reading is moved to: ``"upper"`` for a curve below the exact one,
        ``"lower"`` for a curve above it.

    Returns
    -------
    (tpr, advantage, bayes_success)

    References
    ----------
    Dong, Roth, Su (2022) Sec. 2 (tests and trade-off functions); Humphries et al. (2023) (Bayes success of MIA).

    Examples
    --------
    >>> f = tradeoff.piecewise_linear([0.0, 0.2, 1.0], [1.0, 0.2, 0.0])
    >>> tpr, adv, bayes = membership_bounds(f, [0.2], [0.5])
    >>> round(float(tpr[0]), 3), round(adv, 3), round(float(bayes[0]), 3)
    (0.8, 0.6, 0.8)
    """
    curve = tradeoff.check_piecewise("curve", curve)
    if side not in ("upper", "lower"):
        raise ValueError(f"side must be 'upper' or 'lower', got {side!r}")
    fpr = check_array_in("fpr", np.atleast_1d(np.asarray(fpr, dtype=float)), 0.0, 1.0)
    prior = check_array_in("prior", np.atleast_1d(np.asarray(prior, dtype=float)), 0.0, 1.0, open_low=True,
                           open_high=True)
    a = curve.alphas
    # a certified curve's powers are running sums whose rounding leaves 1 - beta up to (2 n + 8) u of itself too small
    # (fdp.accounting.pld.certified_lower_curve: 8e-15 at one step of noise 0.0625, rate 0.5, alpha 0.5), and the read-off
    # adds a few ulps: every reading is raised past both, so that it stays an upper bound
    margin = (2.0 * a.size + 8.0) * _U + _ROUNDING
    if side == "lower":
        tpr = np.maximum(curve.power(fpr) * (1.0 - margin), 0.0)
        advantage = max(float(np.max(curve.powers - a)) - margin, 0.0)
        bayes = np.maximum(np.max(prior[:, None] * curve.powers + (1.0 - prior[:, None]) * (1.0 - a), axis=1) - margin,
                           0.0)
        return tpr, advantage, bayes
    # the power 1 - f interpolated from the breakpoints' powers (1 - f(1e-20) would round to 0)
    tpr = curve.power(fpr) * (1.0 + margin)
    # a subnormal power's relative margin is below its ulp (5e-324, absolute): two floats up (the interpolation's
    # product and sum)
    tpr = np.minimum(past_subnormal_rounding(tpr, 1.0), 1.0)
    # both maxima: differences and sums of numbers up to 1, each rounded (the breakpoints, too) by an ulp of 1
    advantage = min(float(np.max(curve.powers - a)) + margin, 1.0)
    bayes = np.minimum(np.max(prior[:, None] * curve.powers + (1.0 - prior[:, None]) * (1.0 - a), axis=1)
                       + margin, 1.0)
    return tpr, advantage, bayes


_U = 2.0**-53  # unit round-off of float64
_ROUNDING = 8 * _U


def gaussian_membership_bounds(mu: float, fpr, prior) -> tuple[np.ndarray, float, np.ndarray]:
    """:func:`membership_bounds` of the exact mu-GDP curve ``G_mu`` in closed form (full-batch DP-SGD, the Gaussian mechanism).

    ``TPR = Phi(Phi^{-1}(FPR) + mu)``; the advantage ``2 Phi(mu / 2) - 1`` (at ``alpha = Phi(-mu / 2)``); the Bayes
    success at a prior ``p`` is attained where the slope of ``G_mu`` is ``-(1 - p) / p``, i.e. at the threshold
    ``z = (log((1 - p) / p) + mu^2 / 2) / mu`` of the likelihood ratio: ``p Phi(mu - z) + (1 - p) Phi(z)``.

    Parameters
    ----------
    mu : float
        >= 0.
    fpr : array_like
        False-positive rates in [0, 1].
    prior : array_like
        Priors in (0, 1).

    Returns
    -------
    (tpr, advantage, bayes_success)

    References
    ----------
    Dong, Roth, Su (2022) Sec. 2 (G_mu); Humphries et al. (2023) (Bayes success of MIA).

    Examples
    --------
    >>> tpr, adv, bayes = gaussian_membership_bounds(1.0, [0.1], [0.5])
    >>> round(float(tpr[0]), 4), round(adv, 4), round(float(bayes[0]), 4)
    (0.3891, 0.3829, 0.6915)
    """
    mu = check_nonnegative("mu", mu)
    fpr = check_array_in("fpr", np.atleast_1d(np.asarray(fpr, dtype=float)), 0.0, 1.0)
    prior = check_array_in("prior", np.atleast_1d(np.asarray(prior, dtype=float)), 0.0, 1.0, open_low=True,
                           open_high=True)
    _, tpr = tradeoff.gaussian_power_bounds(mu, fpr)  # upper bounds: raised by their float error
    advantage = min(float(math.erf(mu / (2.0 * math.sqrt(2.0)))) * (1.0 + 8.0 * _U), 1.0)
    if mu == 0.0:
        return tpr, advantage, np.maximum(prior, 1.0 - prior)
    # (log((1 - p) / p) in two logs: the ratio overflows at a subnormal prior; mu / 2 apart: mu^2 overflows at 1e155)
    z = (np.log1p(-prior) - np.log(prior)) / mu + 0.5 * mu
    # each term's error: ndtr's own, (16 + 8 w^2) u relative at w < 0 and 16 u above, and its slope phi(w) times the
    # error of its argument (z carries about 8 u (|z| + mu)); bounded per term, so that a term that is 0 (at a huge
    # z) adds nothing
    dz = 8.0 * _U * (np.abs(z) + mu)
    bayes = 0.0
    for weight, w in ((prior, mu - z), (1.0 - prior, z)):
        value = ndtr(w)
        own = np.where(w < 0.0, 16.0 + 8.0 * np.minimum(np.abs(w), 1e150) ** 2, 16.0) * _U
        density = norm.pdf(np.clip(w, -40.0, 40.0))  # below e^-800 beyond: the slope term is then 0
        slope = np.where(np.abs(w) < 40.0, density * np.minimum(dz, 1e300), 0.0)
        bayes = bayes + weight * (value * (1.0 + own + 4.0 * _U) + slope)
    # and at most max(p, 1 - p) + min(p, 1 - p) times the advantage (p TPR + (1 - p)(1 - FPR) <= 1 - p + p (TPR - FPR)
    # for p <= 1/2, and symmetrically), the sharper of the two where mu is tiny
    trivial = np.maximum(prior, 1.0 - prior) + np.minimum(prior, 1.0 - prior) * advantage
    return tpr, advantage, np.minimum(np.minimum(bayes, trivial * (1.0 + 4.0 * _U)), 1.0)
