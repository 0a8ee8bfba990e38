"""Other privacy representations as trade-off curves, and back: (eps, delta), privacy profiles, RDP, zCDP.

GDP paper (Gomez et al. 2025) App. A.6, C.2 and C.3, which compares mu-GDP with the usual summaries of a
mechanism: the (eps, delta)-DP curve (eq. 2) and randomized response, the curve of a privacy profile (eq. 3)
and its inverse, the profile of a curve, the (eps, delta) profiles implied by Renyi DP and zCDP and their
curves, the tight zCDP parameter of an RDP curve (eq. 25), the Delta-divergence between two profiles
(eq. 24), and :func:`representations`, which sets them side by side with their regrets (Fig. 1c).  The curves
are :class:`fdp.curves.tradeoff.PiecewiseLinear`, so that :func:`fdp.curves.gdp.delta_divergence` is exact on them.
The Renyi divergences of the mechanisms themselves (Laplace, subsampled Gaussian) are in :mod:`fdp.accounting.rdp`.
"""

from __future__ import annotations

import numpy as np

from ..roots import bisect_increasing
from ..validation import (
    EPS_MAX,
    check_array_in,
    check_eps,
    check_nonnegative,
    check_positive,
    check_positive_int,
    spelled,
)
from . import gdp
from .tradeoff import PiecewiseLinear, check_piecewise, eps_delta

__all__ = [
    "laplace_tradeoff",
    "randomized_response",
    "profile_to_tradeoff",
    "rdp_delta",
    "rdp_tradeoff",
    "zcdp_delta",
    "zcdp_tradeoff",
    "rho_from_rdp",
    "tradeoff_profile",
    "profile_divergence",
    "representations",
]


def laplace_tradeoff(mu: float, points: int = 2000) -> PiecewiseLinear:
    """The Laplace curve (ReRo paper eq. 1) at effect size ``mu = Delta_1 / b`` (it is eps-DP with eps =
    mu; the parameter is named as in :func:`fdp.curves.tradeoff.laplace`) as breakpoints, on or above the exact one.

    The two linear pieces are exact; the hyperbola ``e^{-mu} / (4 alpha)`` between them is sampled at
    ``points`` log-spaced levels, and its chords lie above it (it is convex), so a regret computed on
    this curve is an upper bound of the exact one.  ``mu`` in (0, 700].

    Parameters
    ----------
    mu : float
        ``Delta_1 / b``, in (0, 700].
    points : int, default 2000
        Levels sampled on the hyperbolic piece.

    Returns
    -------
    PiecewiseLinear

    References
    ----------
    ReRo paper (Kaissis et al. 2023a) eq. 1.

    Examples
    --------
    >>> curve = laplace_tradeoff(1.0, points=50)
    >>> from fdp.curves import tradeoff
    >>> bool(abs(curve(0.3) - tradeoff.laplace(1.0)(0.3)) < 1e-3)  # chords of the hyperbola, just above it
    True
    """
    mu = float(check_eps("mu", mu))
    if mu == 0.0:
        raise ValueError(f"{spelled('mu')} must be > 0 for laplace_tradeoff (mu = 0 is the identity curve)")
    points = check_positive_int("points", points)
    corner = 0.5 * np.exp(-mu)
    mid = np.geomspace(corner, 0.5, points + 2)[1:-1]
    alphas = np.concatenate([[0.0, corner], mid, [0.5, 1.0]])
    betas = np.concatenate([[1.0, 0.5], np.exp(-mu - np.log(4.0) - np.log(mid)), [corner, 0.0]])
    keep = np.r_[True, np.diff(alphas) > 0]  # mu near 0: the corner meets 1/2
    return PiecewiseLinear(alphas[keep], np.minimum.accumulate(betas[keep]), name=f"Laplace mu={mu:g}")


def randomized_response(epsilon: float) -> PiecewiseLinear:
    """Exact trade-off curve of binary randomized response with parameter eps (Kairouz et al. 2015).

    Breakpoints (0, 1), (p, p), (1, 0) with ``p = 1 / (1 + e^eps)`` (GDP paper App. E, proof of
    Prop. 6.1, where the first point is misprinted as (1, 0)).  It is the eps-DP curve
    :func:`fdp.curves.tradeoff.eps_delta` with ``delta = 0``; its tight GDP parameter is :func:`fdp.curves.gdp.mu_pure_dp`.

    Parameters
    ----------
    epsilon : float
        >= 0.

    Returns
    -------
    PiecewiseLinear

    References
    ----------
    GDP paper (Gomez et al. 2025) Prop. 6.1 and App. E; Kairouz, Oh, Viswanath (2015).

    Examples
    --------
    >>> randomized_response(0.0).betas.tolist()  # eps = 0: a coin flip, the identity curve
    [1.0, 0.5, 0.0]
    """
    epsilon = check_nonnegative("epsilon", epsilon)
    return eps_delta(epsilon, 0.0, name=f"randomized response eps={epsilon:g}")


# ---------------------------------------------------------------------------------------------
# privacy profiles, RDP and zCDP (App. A.6, C.2, C.3)
# ---------------------------------------------------------------------------------------------


def _upper_envelope(slopes: np.ndarray, intercepts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints on [0, 1] of ``max_k (intercepts[k] + slopes[k] x)`` (convex hull trick)."""
    order = np.lexsort((intercepts, slopes))
    m, c = slopes[order], intercepts[order]
    keep = np.append(m[1:] != m[:-1], True)  # equal slopes: keep the largest intercept (last)
    m, c = m[keep], c[keep]
    hull: list[int] = []
    for i in range(m.size):
        while len(hull) >= 2:
            j, k = hull[-2], hull[-1]
            # line k is useless if line i overtakes j no later than k does
            if (c[j] - c[i]) * (m[k] - m[j]) <= (c[j] - c[k]) * (m[i] - m[j]):
                hull.pop()
            else:
                break
        hull.append(i)
    m, c = m[hull], c[hull]
    cross = (c[:-1] - c[1:]) / (m[1:] - m[:-1])  # increasing: line p is on top over [cross[p-1], cross[p]]
    xs = np.unique(np.concatenate([[0.0, 1.0], cross[(cross > 0.0) & (cross < 1.0)]]))
    active = np.searchsorted(cross, xs, side="left")
    ys = c[active] + m[active] * xs
    return xs, ys


def profile_to_tradeoff(epsilon, deltas, name: str = "privacy profile") -> PiecewiseLinear:
    """Trade-off curve implied by (eps_k, delta_k)-DP for all k (GDP paper Thm. 2.4, eq. 3, on a grid).

    ``f(alpha) = max_k max{0, 1 - delta_k - e^eps_k alpha, e^-eps_k (1 - delta_k - alpha)}``, returned
    exactly as breakpoints (upper envelope of the lines).  For a symmetric profile ``eps >= 0`` is
    enough (Thm. A.9, footnote).  On a finite grid this is a valid, pessimistic curve (a lower bound
    of eq. 3's supremum over all eps), which tightens as the grid is refined.

    Parameters
    ----------
    epsilon : array_like
        The grid of eps_k, each >= 0.
    deltas : array_like
        ``delta_k`` in [0, 1], one per eps_k.
    name : str, default "privacy profile"
        Label of the curve.

    Returns
    -------
    PiecewiseLinear

    References
    ----------
    GDP paper (Gomez et al. 2025) Thm. 2.4, eq. 3.

    Examples
    --------
    >>> from fdp.curves import tradeoff
    >>> one = profile_to_tradeoff([1.0], [0.01])  # a single (eps, delta): the (eps, delta)-DP curve
    >>> bool(abs(one(0.2) - tradeoff.eps_delta(1.0, 0.01)(0.2)) < 1e-15)
    True
    """
    e = check_eps("epsilon", np.atleast_1d(epsilon))
    d = check_array_in("deltas", np.atleast_1d(deltas), 0.0, 1.0)
    if e.ndim != 1 or e.shape != d.shape:
        raise ValueError(f"{spelled('epsilon')} and deltas must be 1-d arrays of the same length, got {e.shape} and {d.shape}")
    slopes = np.concatenate([-np.exp(e), -np.exp(-e), [0.0]])
    intercepts = np.concatenate([1.0 - d, np.exp(-e) * (1.0 - d), [0.0]])
    xs, ys = _upper_envelope(slopes, intercepts)
    ys = np.minimum.accumulate(np.clip(ys, 0.0, 1.0))  # rounding only
    return PiecewiseLinear(xs, ys, name=name)


def _check_rdp(orders, rdp) -> tuple[np.ndarray, np.ndarray]:
    t = check_array_in("orders", np.atleast_1d(orders), 1.0, np.inf, open_high=True)
    r = check_array_in("rdp", np.atleast_1d(rdp), 0.0, np.inf, open_high=True)
    if t.ndim != 1 or t.shape != r.shape or t.size == 0:
        raise ValueError(f"orders and rdp must be non-empty 1-d arrays of the same length, got {t.shape} and {r.shape}")
    return t, r


def rdp_delta(epsilon, orders, rdp):
    """Privacy profile implied by (t, eps(t))-RDP guarantees (GDP paper App. C.2).

    ``delta(eps) = min_t min{ sqrt(1 - e^{-eps(t)}),
    exp((t - 1)(eps(t) - eps + log(1 - 1/t))) / t }`` (Canonne, Kamath, Steinke 2020, Prop. 12 in v4,
    for orders t > 1; the first term bounds the total variation through the KL divergence, which is
    at most eps(t) for every t >= 1, as in ``dp_accounting``), capped at 1.  ``dp_accounting`` only
    uses Prop. 12 for t > 1.01; here ``log1p`` keeps it stable for every t > 1.  Vectorised over eps.

    Parameters
    ----------
    epsilon : float or array_like
        In [0, 700].
    orders : array_like
        Renyi orders t >= 1.
    rdp : array_like
        ``eps(t)`` at each order, >= 0.

    Returns
    -------
    float or numpy.ndarray
        ``delta(eps)``, in [0, 1].

    References
    ----------
    GDP paper (Gomez et al. 2025) App. C.2; Canonne, Kamath, Steinke (2020) Prop. 12.

    Examples
    --------
    >>> round(float(rdp_delta(1.0, [2.0, 4.0, 8.0], [0.02, 0.04, 0.08])), 6)  # rho-zCDP with rho = 0.01 on three orders
    7.8e-05
    """
    e = check_eps("epsilon", epsilon)
    t, r = _check_rdp(orders, rdp)
    with np.errstate(divide="ignore"):
        log_kl = 0.5 * np.log(-np.expm1(-r))  # -inf where rdp = 0
    big = t > 1.0
    tb, rb = t[big], r[big]
    ee = e.reshape(e.shape + (1,))
    log_cks = (tb - 1.0) * (rb - ee + np.log1p(-1.0 / tb)) - np.log(tb)
    logd = np.min(np.concatenate([np.broadcast_to(log_kl, e.shape + r.shape), log_cks], axis=-1), axis=-1)
    out = np.minimum(np.exp(logd), 1.0)
    return out if out.ndim else float(out)


def rdp_tradeoff(orders, rdp, eps_grid=None) -> PiecewiseLinear:
    """Trade-off curve implied by an RDP curve ``(orders, eps(orders))`` via its privacy profile (App. C.2).

    :func:`rdp_delta` on ``eps_grid`` followed by :func:`profile_to_tradeoff` (eq. 3).  The default
    grid has 4001 points from 0 to the eps where the profile falls below 1e-15.

    Parameters
    ----------
    orders : array_like
        Renyi orders t >= 1.
    rdp : array_like
        ``eps(t)`` at each order.
    eps_grid : array_like, optional
        The eps of the profile (default: see above).

    Returns
    -------
    PiecewiseLinear

    References
    ----------
    GDP paper (Gomez et al. 2025) App. C.2, eq. 3.

    Examples
    --------
    >>> curve = rdp_tradeoff([2.0, 4.0, 8.0], [0.02, 0.04, 0.08])
    >>> float(curve.alphas[0]), float(curve.alphas[-1])
    (0.0, 1.0)
    """
    t, r = _check_rdp(orders, rdp)
    if eps_grid is None:
        eps_grid = _default_eps_grid(lambda e: rdp_delta(e, t, r))
    return profile_to_tradeoff(eps_grid, rdp_delta(eps_grid, t, r), name="RDP")


def _default_eps_grid(delta_of_eps, points: int = 4001) -> np.ndarray:
    top = 1.0
    while delta_of_eps(top) > 1e-15 and top < EPS_MAX / 2:
        top *= 2.0
    return np.linspace(0.0, top, points)


def zcdp_delta(epsilon, rho):
    """Privacy profile implied by rho-zCDP, i.e. (t, rho t)-RDP for all t > 1 (App. A.2, C.3).

    The bound of :func:`rdp_delta` minimised over the continuum of orders: the exponent
    ``(t - 1)(rho t - eps + log(1 - 1/t)) - log t`` is strictly convex in t (second derivative
    ``2 rho + 1/(t - 1) - 1/t > 0``), so the minimiser solves
    ``rho (2t - 1) - eps + log((t - 1)/t) = 0``, found by bisection.  Also bounded by the KL term
    ``sqrt(1 - e^{-rho})``.  Vectorised over eps; ``rho > 0``.

    Parameters
    ----------
    epsilon : float or array_like
        In [0, 700].
    rho : float
        > 0.

    Returns
    -------
    float or numpy.ndarray
        ``delta(eps)``, in [0, 1].

    References
    ----------
    GDP paper (Gomez et al. 2025) App. A.2 and C.3; Bun and Steinke (2016).

    Examples
    --------
    >>> bool(zcdp_delta(1.0, 0.01) <= rdp_delta(1.0, [2.0, 4.0, 8.0], [0.02, 0.04, 0.08]))  # all orders at once
    True
    """
    e = check_eps("epsilon", epsilon)
    rho = check_positive("rho", rho)
    e1 = np.atleast_1d(e)
    # derivative in u = log(t - 1): rho (2t - 1) - epsilon - log1p(1/(t-1)), increasing in t
    deriv = lambda u: rho * (2.0 * (1.0 + np.exp(u)) - 1.0) - e1 - np.log1p(np.exp(-u))  # noqa: E731
    lo, hi = bisect_increasing(deriv, 0.0, np.full(e1.shape, -60.0), np.full(e1.shape, 60.0))
    # in u = log(t - 1): t - 1 = e^u and log(1 - 1/t) = u - log(t), accurate also when t - 1 is below
    # the resolution of doubles near 1 (large rho, where 1 + e^u == 1 and log1p(-1/t) would be -inf)
    u = 0.5 * (lo + hi)
    log_t = np.log1p(np.exp(u))
    log_cks = np.exp(u) * (rho * (1.0 + np.exp(u)) - e1 + u - log_t) - log_t
    log_kl = 0.5 * np.log(-np.expm1(-rho))
    out = np.minimum(np.exp(np.minimum(log_cks, log_kl)), 1.0).reshape(e.shape)
    return out if out.ndim else float(out)


def zcdp_tradeoff(rho: float, eps_grid=None) -> PiecewiseLinear:
    """Trade-off curve implied by rho-zCDP (App. A.6 "zCDP", computed through the profile as in App. C.2).

    :func:`zcdp_delta` on ``eps_grid`` then :func:`profile_to_tradeoff` (eq. 3).  Pessimistic for every
    rho-zCDP mechanism (e.g. it lies below the Gaussian curve ``f_mu`` for ``rho = mu^2 / 2``).

    Parameters
    ----------
    rho : float
        > 0.
    eps_grid : array_like, optional
        The eps of the profile (default as :func:`rdp_tradeoff`).

    Returns
    -------
    PiecewiseLinear

    References
    ----------
    GDP paper (Gomez et al. 2025) App. A.6 and C.2.

    Examples
    --------
    >>> from fdp.curves import tradeoff
    >>> bool(zcdp_tradeoff(0.5)(0.1) <= tradeoff.gaussian(1.0)(0.1))  # below f_mu for rho = mu^2 / 2
    True
    """
    rho = check_positive("rho", rho)
    if eps_grid is None:
        eps_grid = _default_eps_grid(lambda e: zcdp_delta(e, rho))
    return profile_to_tradeoff(eps_grid, zcdp_delta(eps_grid, rho), name=f"{rho:g}-zCDP")


def rho_from_rdp(orders, rdp) -> float:
    """Tight zCDP parameter of an RDP curve (GDP paper App. C.3, eq. 25): ``rho* = max_{t > 1} eps(t) / t``.

    On a grid of orders the infimum of eq. 25 is exactly the largest ratio (no bisection needed).  That is rho* of
    the RDP curve restricted to the grid: where ``eps(t) / t`` still rises at the largest order, the mechanism's
    rho* is larger (the subsampled Gaussian's ratio tends to the unsubsampled ``T / (2 sigma^2)`` as t -> infinity,
    which is therefore its rho*).

    Parameters
    ----------
    orders : array_like
        Renyi orders t > 1.
    rdp : array_like
        ``eps(t)`` at each order.

    Returns
    -------
    float

    References
    ----------
    GDP paper (Gomez et al. 2025) App. C.3, eq. 25.

    Examples
    --------
    >>> rho_from_rdp([2.0, 4.0], [0.5, 1.0])  # eps(t) = t / 4: rho = 1/4
    0.25
    """
    t, r = _check_rdp(orders, rdp)
    big = t > 1.0
    if not np.any(big):
        raise ValueError("orders must contain at least one order > 1 (zCDP constrains t > 1)")
    return float(np.max(r[big] / t[big]))


# ---------------------------------------------------------------------------------------------
# profiles of curves (eq. 24)
# ---------------------------------------------------------------------------------------------


def tradeoff_profile(curve: PiecewiseLinear, epsilon) -> np.ndarray | float:
    """The privacy profile of a piecewise-linear trade-off curve: ``delta(eps) = max_alpha 1 - f(alpha) - e^eps alpha``.

    The inverse of eq. 3 (Thm. 2.4): the hockey-stick divergence ``H_{e^eps}(Q || P)`` of the pair
    whose curve is ``f = T(P, Q)``; for a symmetric curve (e.g. the symmetrised DP-SGD curve) it is the
    add/remove profile for ``eps >= 0``.  Exact: for a convex ``f`` the maximum over alpha is at the
    breakpoint where the slope of ``f`` crosses ``-e^eps`` (found by binary search; its neighbours are
    also evaluated, which covers curves convex only up to the validation tolerance).  Vectorised over
    ``epsilon`` in [0, 700].

    Parameters
    ----------
    curve : PiecewiseLinear
        A trade-off curve ``f = T(P, Q)``.
    epsilon : float or array_like
        In [0, 700].

    Returns
    -------
    float or numpy.ndarray
        ``delta(eps)``.

    References
    ----------
    GDP paper (Gomez et al. 2025) Thm. 2.4, eq. 3 (its inverse).

    Examples
    --------
    >>> from fdp.curves import tradeoff
    >>> round(float(tradeoff_profile(tradeoff.eps_delta(1.0, 0.01), 1.0)), 12)  # the curve's own delta
    0.01
    """
    curve = check_piecewise("curve", curve)
    e = check_eps("epsilon", epsilon)
    a, p = curve.alphas, curve.powers  # the powers 1 - beta keep their digits near (0, 1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        k = curve.slopes()
    k = np.maximum.accumulate(np.where(np.isfinite(k), k, -np.inf))
    slope = -np.exp(e)
    i = np.searchsorted(k, slope, side="left")
    best = np.zeros(e.shape)
    for j in (i - 1, i, i + 1):
        j = np.clip(j, 0, a.size - 1)
        best = np.maximum(best, p[j] + slope * a[j])
    out = np.clip(best, 0.0, 1.0)
    return out if out.ndim else float(out)


def profile_divergence(epsilon, delta, delta_rep) -> float:
    """Delta-divergence between two privacy profiles on a grid of eps (GDP paper Def. C.3, eq. 24).

    ``Delta(delta, delta_rep) = inf{kappa >= 0 : delta(eps) + kappa (1 + e^eps) >= delta_rep(eps) for all eps}``
    ``= max(0, max_eps (delta_rep(eps) - delta(eps)) / (1 + e^eps))``: the regret of reporting the
    representation with profile ``delta_rep`` for a mechanism with profile ``delta``.  This is how the
    paper evaluates the regrets of Fig. 1c (App. C.2).  It equals :func:`fdp.curves.gdp.delta_divergence` of the
    curves (eq. 3) when both arguments are the profiles of those curves, and on a grid it can only be
    lower.  A profile obtained by a lossy conversion (RDP or zCDP to (eps, delta), :func:`rdp_delta`)
    is in general *larger* than the profile of the curve it defines (the curve of eq. 3 is the tightest
    summary of all those guarantees together), and then eq. 24 overstates the regret of that curve.

    Parameters
    ----------
    epsilon : array_like
        The grid of eps.
    delta : array_like
        The mechanism's profile on the grid.
    delta_rep : array_like
        The reported representation's profile on the grid.

    Returns
    -------
    float

    References
    ----------
    GDP paper (Gomez et al. 2025) Def. C.3, eq. 24, App. C.2.

    Examples
    --------
    >>> round(profile_divergence([0.0, 1.0], [0.1, 0.01], [0.2, 0.01]), 6)  # (0.2 - 0.1) / (1 + e^0)
    0.05
    """
    e = check_eps("epsilon", np.atleast_1d(epsilon))
    d = check_array_in("delta", np.atleast_1d(delta), 0.0, 1.0)
    r = check_array_in("delta_rep", np.atleast_1d(delta_rep), 0.0, 1.0)
    if not (e.ndim == 1 and e.shape == d.shape == r.shape):
        raise ValueError(f"{spelled('epsilon')}, delta and delta_rep must be 1-d arrays of one length, got {e.shape}, {d.shape}, {r.shape}")
    return float(max(0.0, np.max((r - d) / (1.0 + np.exp(e)))))


def representations(curve: PiecewiseLinear, *, delta: float, epsilon: float, orders, rdp, eps_grid, tail: float = 0.0,
                    eps_pure: float | None = None, rho_limit: float = 0.0, atol: float = 1e-3) -> dict:
    """The summaries of a mechanism's curve and what each costs: the GDP paper's Figure 1c (App. C.2).

    The mechanism's (eps, delta)-DP curve at its ``epsilon`` (and the pure-DP curve at ``eps_pure``, if given), its
    zCDP curve at the tight rho of its Renyi DP ``rdp`` at ``orders`` (eq. 25; at least ``rho_limit``, the limit of
    eps(t) / t where the ratio still rises at the grid's largest order: eq. 25 takes the supremum over every t > 1),
    its RDP curve and its mu*-GDP.  The regret of each is the exact Delta-divergence to ``curve``
    (:func:`fdp.curves.gdp.delta_divergence`; mu*'s is the GDP regret); ``eq24`` holds the paper's route for zCDP and
    RDP, eq. 24 between the exact profile on ``eps_grid`` and the converted one, which overstates the regret.  A summary
    the curve does not satisfy (one that lies above it by more than ``atol``, ``delta_divergence(summary, curve)``) is
    refused, naming the input it came from: its regret would be too small.

    Parameters
    ----------
    curve : PiecewiseLinear
        The mechanism's trade-off curve.
    delta, epsilon : float
        The (eps, delta) pair it satisfies.
    orders, rdp : array_like
        Its Renyi DP at those orders (> 1).
    eps_grid : array_like
        The eps grid of eq. 24.
    tail : float, default 0
        The floor of mu* (:func:`fdp.curves.gdp.mu_and_regret`).
    eps_pure : float, optional
        Its pure-DP epsilon, if it has one.
    rho_limit : float, default 0
        A floor of rho (>= 0).
    atol : float, default 1e-3
        How far a summary may lie above ``curve`` (a lattice curve lies below the exact one by its discretisation error).

    Returns
    -------
    dict
        ``curve``, ``reps`` (name -> curve: ``eps_dp``, ``eps_delta``, ``zcdp``, ``rdp``), ``mu``, ``rho``, ``regret``
        (name -> regret, with ``gdp``), ``eq24`` (``zcdp``, ``rdp``), ``eps_adp`` (= ``epsilon``) and ``profile`` (the
        exact profile on ``eps_grid``).

    References
    ----------
    Gomez et al. (2025) Fig. 1c, App. C.2, eqs. 24-25.

    Examples
    --------
    >>> from fdp import Mechanism
    >>> from fdp.accounting import pld, rdp
    >>> m, orders = Mechanism("gaussian", 1.0), np.linspace(1.5, 64, 200)  # one Gaussian step: 1-GDP, 0.5-zCDP
    >>> r = representations(pld.mechanism_tradeoff(m, discretization=1e-4), delta=1e-5, epsilon=4.38, orders=orders,
    ...                     rdp=rdp.renyi_dp(m, orders), eps_grid=np.linspace(0, 8, 801), tail=1e-10)
    >>> r["regret"]["gdp"] < 1e-6 < r["regret"]["zcdp"] < r["regret"]["eps_delta"], round(r["rho"], 6)
    (True, 0.5)
    """
    check_piecewise("curve", curve)
    rho_limit, atol = check_nonnegative("rho_limit", rho_limit), check_nonnegative("atol", atol)
    reps = {} if eps_pure is None else {"eps_dp": eps_delta(eps_pure, 0.0)}
    reps["eps_delta"] = eps_delta(epsilon, delta)
    rho = max(rho_from_rdp(orders, rdp), rho_limit)
    reps["zcdp"] = zcdp_tradeoff(rho)
    mu, regret_gdp = gdp.mu_and_regret(curve, symmetrise=False, tail=tail)
    reps["rdp"] = rdp_tradeoff(orders, rdp)
    source = {"eps_dp": "eps_pure", "eps_delta": "epsilon and delta", "zcdp": "rdp (through rho)", "rdp": "rdp"}
    for k, g in reps.items():
        if gdp.delta_divergence(g, curve) > atol:
            raise ValueError(f"{source[k]}: the {k} summary lies above the curve by {gdp.delta_divergence(g, curve):.3g} (more than "
                             f"atol={atol:g}); the curve does not satisfy it")
    regret = {k: gdp.delta_divergence(curve, g) for k, g in reps.items()} | {"gdp": regret_gdp}
    profile = tradeoff_profile(curve, eps_grid)
    eq24 = {"zcdp": profile_divergence(eps_grid, profile, zcdp_delta(eps_grid, rho)),
            "rdp": profile_divergence(eps_grid, profile, rdp_delta(eps_grid, orders, rdp))}
    return dict(curve=curve, reps=reps, mu=mu, rho=rho, regret=regret, eq24=eq24, eps_adp=epsilon, profile=profile)
