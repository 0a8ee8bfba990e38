"""Renyi DP of the mechanisms: the exact Renyi divergences of Laplace and of subsampled Gaussian noise.

GDP paper (Gomez et al. 2025) Fig. 1c and App. C.3 compare mu-GDP with the (eps, delta) profile and trade-off
curve that RDP implies (:func:`fdp.curves.conversions.rdp_delta`, :func:`fdp.curves.conversions.rdp_tradeoff`);
:func:`renyi_dp` gives the RDP curve ``eps(t)`` of a :class:`fdp.accounting.privacy_loss.Mechanism` they start from.
"""

from __future__ import annotations

import math

import numpy as np

from ..validation import ResourceLimitError, check_array_in
from .privacy_loss import Mechanism, log_ratio, subsampled, takes_mechanism

__all__ = ["renyi_dp", "MAX_GRID_POINTS"]

#: Orders t < 1 + this are integrated in the form that keeps its digits as t -> 1; the log-space integral, divided
#: by t - 1, is off by 1e-10 relative at t = 2, 1e-7 at t = 1.001 and gives 0 at t = 1 + 1e-12 (noise 1, rate 0.01).
_NEAR_ONE = 1.0
#: The most points the integration grid of one order may have (its size grows as 40 t / noise_multiplier):
#: 1e7 points, about 80 MB and a second per order.
MAX_GRID_POINTS = 10_000_000


@takes_mechanism
def renyi_dp(mechanism: Mechanism, orders) -> np.ndarray:
    """Renyi DP ``eps(t)`` of the mechanism at real orders ``t >= 1`` (RDP adds up over its steps).

    Gaussian noise: without subsampling ``t / (2 sigma^2)`` per step; subsampled (DP-SGD), the exact divergence by
    numerical integration (Mironov, Talwar, Zhang 2019 Sec. 3.3), accurate at every real order, orders next to 1
    included (a ResourceLimitError where the grid of a large order would exceed :data:`MAX_GRID_POINTS`).  Laplace noise without subsampling: the closed
    form of Mironov (2017) Prop. 6.  Subsampled Laplace noise has no RDP here (a ValueError).

    Parameters
    ----------
    mechanism : Mechanism
        Sensitivity 1; Laplace noise with ``sampling_rate`` 1.
    orders : array_like
        Renyi orders t >= 1 (real).

    Returns
    -------
    numpy.ndarray
        ``eps(t)`` at each order, of all the mechanism's steps.

    References
    ----------
    Mironov (2017) Prop. 6; Mironov, Talwar, Zhang (2019) Sec. 3.3; GDP paper (Gomez et al. 2025) Fig. 1c, App. C.3.

    Examples
    --------
    >>> round(float(renyi_dp(Mechanism("gaussian", 1.0, 1.0, 1), [2.0])[0]), 6)  # no subsampling: t / (2 sigma^2)
    1.0
    >>> round(float(renyi_dp(Mechanism("laplace", 1.0, 1.0, 1), [1.0])[0]), 6)  # KL divergence 1/b + e^{-1/b} - 1
    0.367879
    """
    noise, sigma, rate, steps = mechanism.args
    t = check_array_in("orders", np.atleast_1d(orders), 1.0, np.inf, open_high=True)
    if noise == "gaussian":
        if rate == 1.0:  # the Gaussian mechanism: t / (2 sigma^2) per step (Mironov 2017 Prop. 7)
            return steps * t / (2.0 * sigma**2)
        points = (2.0 * float(np.max(t)) + 28.0 * sigma + 2.0) / (sigma / 20.0)
        if points > MAX_GRID_POINTS:
            raise ResourceLimitError(
                f"orders: the integral at order {float(np.max(t)):g} needs a grid of {points:.3g} points, more than the "
                f"{MAX_GRID_POINTS:.0e} this package builds (it grows as 40 t / noise_multiplier): use smaller orders")
        return _subsampled_gaussian(t, sigma, rate, steps)
    if rate != 1.0:
        raise ValueError(f"mechanism: no Renyi DP of subsampled Laplace noise here (sampling_rate={rate!r}); "
                         "use sampling_rate 1 or Gaussian noise")
    return steps * _laplace(t, sigma)


def _laplace(orders, noise_multiplier: float) -> np.ndarray:
    """Renyi DP ``eps(t)`` of the Laplace mechanism with scale ``b`` and sensitivity 1 (Mironov 2017, Prop. 6).

    ``eps(t) = log(t/(2t-1) e^{(t-1)/b} + (t-1)/(2t-1) e^{-t/b}) / (t - 1)`` for ``t > 1``, and the
    KL divergence ``1/b + e^{-1/b} - 1`` at ``t = 1`` (the limit).  Exact for the Laplace pair, the
    same in both directions.  Computed as ``1/b + log1p((t-1) c) / (t-1)`` with
    ``c = expm1((1-2t)/b) / (2t-1)``, stable as ``t -> 1`` (cf. ``dp_accounting``'s ``_laplace_rdp``).
    Vectorised over ``orders`` (each >= 1).

    Parameters
    ----------
    orders : array_like
        Renyi orders t >= 1.
    noise_multiplier : float
        The scale ``b`` (> 0) of the Laplace noise per unit of sensitivity.

    Returns
    -------
    numpy.ndarray
        ``eps(t)`` at each order.

    References
    ----------
    Mironov (2017) Prop. 6; GDP paper (Gomez et al. 2025) Fig. 1c.

    """
    t, e = orders, 1.0 / noise_multiplier
    c = np.expm1(e * (1.0 - 2.0 * t)) / (2.0 * t - 1.0)
    y = (t - 1.0) * c
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(y == 0.0, 1.0, np.log1p(y) / np.where(y == 0.0, 1.0, y))
    return e + c * ratio


def _log_gauss_integral(log_integrand, lo: float, hi: float, dx: float) -> float:
    """``log int_lo^hi exp(log_integrand(x)) dx`` by the rectangle rule in log space.

    For the smooth, Gaussian-tailed integrands used here (width >= 20 dx, negligible mass at the
    ends) the rule converges geometrically: its error is far below double precision.
    """
    n = int(np.ceil((hi - lo) / dx)) + 1
    x = np.linspace(lo, hi, n)
    v = log_integrand(x)
    m = float(np.max(v))
    return m + float(np.log(np.sum(np.exp(v - m)) * (x[1] - x[0])))


def _subsampled_gaussian(orders, noise_multiplier: float, sampling_rate: float, steps: int) -> np.ndarray:
    """Renyi DP ``eps(t)`` of ``steps``-fold Poisson-subsampled Gaussian noise, for real orders ``t >= 1``.

    Sensitivity 1, noise multiplier ``noise_multiplier`` (sigma), sampling rate ``sampling_rate`` (q): with ``P = N(0, sigma^2)``
    and ``Q = (1 - q) P + q N(1, sigma^2)``, ``eps(t) = steps * max(D_t(Q || P), D_t(P || Q))`` (add/remove
    adjacency), each direction ``log E_P[(Q/P)^t] / (t - 1)`` resp. ``log E_P[(Q/P)^{1-t}] / (t - 1)``
    by numerical integration on a grid of step sigma/20 covering the tilted measures (Mironov, Talwar,
    Zhang 2019, Sec. 3.3, whose integral this is); ``t = 1`` gives the KL divergences.  This is the
    "exact Renyi divergence" of GDP paper App. C.3.  Unlike ``dp_accounting``'s fractional-order series
    it is accurate for every real order: for q = 0.328, sigma = 9.4 that series gives
    ``eps(1.1) = 0.028`` per step where the integral (and the integer-order neighbours) give 6.7e-4.
    Vectorised over ``orders``.

    Parameters
    ----------
    orders : array_like
        Renyi orders t >= 1 (real).
    noise_multiplier : float
        > 0.
    sampling_rate : float
        Poisson rate in (0, 1].
    steps : int
        Compositions (RDP adds up).

    Returns
    -------
    numpy.ndarray
        ``eps(t)`` at each order.

    References
    ----------
    Mironov, Talwar, Zhang (2019) Sec. 3.3; GDP paper (Gomez et al. 2025) App. C.3.

    """
    t, s, q = orders, noise_multiplier, sampling_rate
    log_norm = -np.log(s * np.sqrt(2.0 * np.pi))

    def log_p(x):
        return -0.5 * (x / s) ** 2 + log_norm

    def r(x):  # log Q/P, the one-step privacy loss
        return subsampled(log_ratio("gaussian", s, x), q)

    dx, k = s / 20.0, 14.0 * s
    out = np.empty(t.shape)
    for i, ti in enumerate(t.flat):
        if ti - 1.0 < _NEAR_ONE:
            # log E_P[(Q/P)^t] = log(1 + E_Q[expm1((t-1) r)]) and log E_P[(Q/P)^{1-t}] = log(1 + E_P[expm1((1-t) r)]):
            # each term keeps its digits as t -> 1, where the integral of (Q/P)^t cancels to 1; at t = 1 the two KL
            # divergences (the tilt towards x = t < 2 lies inside this grid)
            lo, hi = -k - 1.0, k + 2.0
            n = int(np.ceil((hi - lo) / dx)) + 1
            x = np.linspace(lo, hi, n)
            w = np.exp(log_p(x)) * (x[1] - x[0])
            rx = r(x)
            if ti == 1.0:
                val = max(float(np.sum(w * np.exp(rx) * rx)), float(np.sum(-w * rx)), 0.0)
            else:
                fwd = math.log1p(float(np.sum(w * np.exp(rx) * np.expm1((ti - 1.0) * rx))))
                bwd = math.log1p(float(np.sum(w * np.expm1((1.0 - ti) * rx))))
                val = max(fwd, bwd, 0.0) / (ti - 1.0)
        else:
            # (Q/P)^t tilts P towards x = t, (Q/P)^{1-t} towards x = 1 - t: cover both
            lo, hi = -(ti - 1.0) - k - 1.0, ti + k + 1.0
            fwd = _log_gauss_integral(lambda x: log_p(x) + ti * r(x), lo, hi, dx)
            bwd = _log_gauss_integral(lambda x: log_p(x) + (1.0 - ti) * r(x), lo, hi, dx)
            val = max(fwd, bwd, 0.0) / (ti - 1.0)
        out.flat[i] = val
    return steps * out
