"""One entry point per question about a mechanism, with the method as an argument.

The accountants below this module each answer in their own terms (a certified bracket of curves,
an Edgeworth series with an error estimate, a Monte-Carlo estimate with a confidence interval, an
exact big-integer composition).  :func:`rero` asks all of them the same question -- the ReRo bound
``gamma(kappa)`` of a :class:`~fdp.privacy_loss.Mechanism` -- and returns one :class:`Estimate`
that says what the number is: certified bounds, or an estimate with its error, and the warnings a
reader must see (a wide bracket, an approximation outside its range, a collapsed Monte Carlo).
The command line (:mod:`fdp.cli`) is a thin layer over it.

Examples
--------
>>> from fdp.privacy_loss import dpsgd
>>> est = rero(dpsgd(noise_multiplier=1.0, sampling_rate=0.5, steps=10), [0.01], discretization=1e-2)
>>> est.method, est.certified, round(float(est.value[0]), 4)
('bracket', True, 0.2745)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import norm

from . import edgeworth, lattice, montecarlo, pld, tradeoff
from . import gdp as _gdp
from . import rero as _rero
from .privacy_loss import Mechanism
from .validation import (
    ResourceLimitError,
    check_array_in,
    check_open_unit,
    check_positive,
    check_positive_int,
)

__all__ = ["METHODS", "Estimate", "rero", "GDPReport", "gdp"]

#: Ways to compute gamma: the certified PLD lattice bracket, the Edgeworth series and the CLT
#: (approximations with an error estimate), Monte Carlo (Hayes et al. Alg. 1, with a confidence
#: interval) and the exact big-integer composition (``mpmath``, certified, slow).
METHODS = ("bracket", "edgeworth", "clt", "mc", "mpmath")
#: Relative width of a bracket, or relative error estimate, above which an answer carries a warning.
WARN_RELATIVE = 0.01
#: The certified lattice is built for kappa >= this; below it the bracket is [kappa, gamma(KAPPA_FLOOR)].
KAPPA_FLOOR = 1e-30


@dataclass(frozen=True)
class Estimate:
    """An answer with what it is worth.

    Attributes
    ----------
    value : numpy.ndarray
        The number to report: the certified upper bound for a bracket, else the estimate.
    method : str
        One of :data:`METHODS`, or ``"closed form"``.
    certified : bool
        True when ``lower <= exact <= upper`` holds rigorously.
    lower, upper : numpy.ndarray or None
        The certified bracket, or the confidence interval of a Monte-Carlo estimate.
    error_estimate : numpy.ndarray or None
        An approximation's estimated error (Edgeworth, CLT).
    warnings : tuple of str
        What a reader must know about this answer.
    """

    value: np.ndarray
    method: str
    certified: bool
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None
    error_estimate: np.ndarray | None = None
    warnings: tuple[str, ...] = field(default=())


def _check_method(method) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return method


def rero(mechanism: Mechanism, kappa, method: str = "bracket", *, discretization: float = 1e-4,
         order: int = edgeworth.DEFAULT_ORDER, samples: int = 1_000_000, seed: int = 0, n_jobs: int = 1) -> Estimate:
    """The ReRo bound ``gamma = 1 - f(kappa)`` of a mechanism (add direction), by ``method``.

    Parameters
    ----------
    mechanism : fdp.privacy_loss.Mechanism
    kappa : float or array_like
        Priors in (0, 1).
    method : {"bracket", "edgeworth", "clt", "mc", "mpmath"}
        ``"bracket"``: :func:`fdp.pld.tradeoff_bracket` (certified; the value is its upper end);
        ``"edgeworth"`` / ``"clt"``: :mod:`fdp.edgeworth` with an error estimate (the CLT's is its
        distance to the Edgeworth series plus the series' own); ``"mc"``: :func:`fdp.montecarlo.gamma_mc`
        with a 95 % confidence interval; ``"mpmath"``: :func:`fdp.lattice.gamma_ground_truth`.
        ``"bracket"`` answers Gaussian noise without subsampling by the exact closed form.
    discretization : float
        Loss lattice spacing of the bracket.
    order : int
        Edgeworth order (0..4).
    samples, seed, n_jobs : int
        Monte Carlo.

    Returns
    -------
    Estimate

    References
    ----------
    ReRo paper (Kaissis et al. 2023a) Thm. 1 and Sec. 2 (options 1-3); Hayes et al. (2023) Alg. 1.
    """
    if not isinstance(mechanism, Mechanism):
        raise ValueError(f"mechanism must be a fdp.privacy_loss.Mechanism, got {type(mechanism).__name__}")
    method = _check_method(method)
    kappa = check_array_in("kappa", np.atleast_1d(np.asarray(kappa, dtype=float)), 0.0, 1.0, open_low=True, open_high=True)
    noise, sigma, rate, steps = mechanism.args
    if noise == "gaussian" and rate == 1.0 and method == "bracket":  # the steps-fold Gaussian: sqrt(steps)/sigma-GDP
        gamma = _rero.gamma(tradeoff.gaussian(np.sqrt(steps) / sigma), kappa)
        return Estimate(gamma, "closed form", True, lower=gamma, upper=gamma)
    if method in ("bracket", "mpmath"):
        return _certified(mechanism, kappa, method, check_positive("discretization", discretization))
    if method in ("edgeworth", "clt"):
        return _approximation(mechanism, kappa, method, order)
    res = montecarlo.gamma_mc(sigma, rate, steps, kappa, samples=check_positive_int("samples", samples), seed=seed,
                              n_jobs=n_jobs, mechanism=noise)
    return Estimate(res.estimate, "mc", False, lower=res.lower, upper=res.upper,
                    warnings=(res.warning,) if res.warning else ())


def _certified(mechanism: Mechanism, kappa: np.ndarray, method: str, discretization: float) -> Estimate:
    noise, sigma, rate, steps = mechanism.args
    if method == "bracket":
        kappa_min = max(float(kappa.min()), KAPPA_FLOOR)
        lower, upper = pld.tradeoff_bracket(noise, sigma, rate, steps, discretization=discretization,
                                            kappa_min=kappa_min).gamma(kappa)
    else:
        if steps > 10**7:
            raise ResourceLimitError(f"steps must be <= 1e7 for method 'mpmath', got {steps}")
        truth = lattice.gamma_ground_truth(noise, sigma, rate, steps, kappa)
        lower, upper = truth.lower, truth.upper
    lower = np.maximum(lower, kappa)
    warnings = tuple(
        f"the certified bracket at kappa={k:g} is wide: gamma in [{lo:.6g}, {up:.6g}] ({100 * (up - lo) / up:.3g} %); "
        "the reported gamma is its upper end" + ("; use a smaller discretization" if method == "bracket" else "")
        for k, lo, up in zip(kappa, lower, upper) if (up - lo) / up > WARN_RELATIVE
    )
    return Estimate(upper, method, True, lower=lower, upper=upper, warnings=warnings)


def _approximation(mechanism: Mechanism, kappa: np.ndarray, method: str, order: int) -> Estimate:
    warnings = []
    try:
        series = edgeworth.edgeworth_curve(*mechanism.args, order=edgeworth.DEFAULT_ORDER if method == "clt" else order)
        reference, err = series.power(kappa), series.error_estimate(kappa)
    except ValueError as exc:
        if method == "edgeworth":
            raise
        series, err = None, None
        warnings.append(f"no error estimate for the CLT: the Edgeworth series is not valid here ({exc})")
    if method == "edgeworth":
        gamma, label = _rero.gamma(series, kappa), f"the order-{order} Edgeworth approximation"
    else:
        gamma, label = _rero.gamma(edgeworth.clt_curve(*mechanism.args), kappa), "the CLT approximation"
        if series is not None:  # the CLT's error: its distance to the Edgeworth series, plus the series' own
            err = np.abs(gamma - reference) + err
    if err is not None:
        warnings += [f"{label} at kappa={k:g} is unreliable: estimated error {e:.3g} on gamma {g:.6g} "
                     f"({100 * e / g:.3g} %); use method 'bracket' for a certified bound"
                     for k, g, e in zip(kappa, gamma, err) if e > WARN_RELATIVE * g]
    return Estimate(gamma, method, False, error_estimate=err, warnings=tuple(warnings))


@dataclass(frozen=True)
class GDPReport:
    """mu-GDP of a mechanism: the tight ``mu*`` above an alpha floor, its exact regret, and (eps, delta).

    Attributes
    ----------
    mu, regret : float
        GDP paper Alg. 1: ``mu*`` (eq. 21, certified for ``alpha >= alpha_floor`` and ``beta >= alpha_floor``)
        and ``Delta(f, f_mu*)`` (Def. 2.6) on the symmetrised curve.
    alpha_floor : float
        The floor ``mu`` holds above (0 for a closed form).
    epsilon : float or None
        The mechanism's epsilon at ``delta`` (None where the lattice gives no finite value).
    delta : float
    discretization : float or None
        The loss lattice spacing (None for a closed form).
    method : str
        ``"closed form"`` or ``"lattice"`` (mu* and the regret on the certified lattice curve,
        :func:`fdp.gdp.mu_and_regret_lattice`; epsilon from ``dp_accounting``'s PLD).
    warnings : tuple of str
    """

    mu: float
    regret: float
    alpha_floor: float
    epsilon: float | None
    delta: float
    discretization: float | None
    method: str
    warnings: tuple[str, ...] = field(default=())


def gdp(mechanism: Mechanism, *, delta: float = 1e-5, discretization: float | None = None, tail: float = 1e-10) -> GDPReport:
    """The GDP report of a Gaussian mechanism (DP-SGD): tight ``mu*``, its regret and epsilon at ``delta``.

    Parameters
    ----------
    mechanism : fdp.privacy_loss.Mechanism
        Gaussian noise (DP-SGD).  Without subsampling the answer is the closed form ``sqrt(steps) /
        noise_multiplier`` (regret 0).
    delta : float
        For the reported epsilon.
    discretization : float, optional
        PLD lattice spacing; by default :func:`fdp.pld.default_discretization`, coarsened (with a
        warning) so that one step stays below :data:`fdp.lattice.MAX_ONE_STEP_POINTS` points.
    tail : float
        The alpha floor in [0, 0.5) (1e-10, gdpnum's ``err``, by default): an accountant curve's
        truncated tails must be ignored by eq. 21.  A curve that passes below ``(tail, tail)`` (far from
        private) gets its floor lowered to its fixed point (:func:`fdp.gdp.mu_and_regret_lattice`, with a
        warning); ``GDPReport.alpha_floor`` is the floor used.

    Returns
    -------
    GDPReport

    References
    ----------
    GDP paper (Gomez et al. 2025) Alg. 1, eq. 21, Def. 2.6.
    """
    if not isinstance(mechanism, Mechanism) or mechanism.noise != "gaussian":
        raise ValueError(f"mechanism must be a Gaussian fdp.privacy_loss.Mechanism, got {mechanism!r}")
    delta = check_open_unit("delta", delta)
    _, sigma, rate, steps = mechanism.args
    if rate == 1.0:  # the steps-fold Gaussian mechanism: exactly sqrt(steps)/sigma-GDP
        mu = float(np.sqrt(steps) / sigma)
        try:
            eps, warnings = float(_gdp.eps_from_mu_delta(mu, delta)), ()
        except ValueError as exc:
            eps, warnings = None, (f"no epsilon at delta {delta:g}: {exc}",)
        return GDPReport(mu, 0.0, 0.0, eps, delta, None, "closed form", warnings)
    tail = _gdp.check_tail(tail)
    warnings = []
    if discretization is None:  # the default, coarsened so that one step stays affordable
        h = pld.default_discretization(sigma, rate, steps)
        one = lattice.lattice_points("gaussian", sigma, rate, 1, h)
        if one > lattice.MAX_ONE_STEP_POINTS:
            h *= one / lattice.MAX_ONE_STEP_POINTS
            warnings.append(f"the lattice spacing was coarsened to {h:.3g} to keep one step below "
                            f"{lattice.MAX_ONE_STEP_POINTS:.3g} points (the curve stays pessimistic)")
    else:
        h = check_positive("discretization", discretization)
    dist = pld.dpsgd_pld(sigma, rate, steps, discretization=h)  # for epsilon at delta (its size is checked first)
    mu, regret, floor = _gdp.mu_and_regret_lattice(sigma, rate, steps, discretization=h, tail=tail)
    if floor < tail:
        warnings.append(f"the curve passes below ({tail:g}, {tail:g}): the alpha floor was lowered to its fixed "
                        f"point {floor:.3g}, and mu* = {mu:.3g} reads as 'beyond {2 * norm.isf(tail):.3g}'")
    eps = float(dist.get_epsilon_for_delta(delta))
    if not np.isfinite(eps):
        warnings.append(f"epsilon at delta {delta:g} is infinite for this lattice")
    return GDPReport(mu, regret, floor, eps if np.isfinite(eps) else None, delta, h, "lattice", tuple(warnings))
