"""One entry point per question about a mechanism, with the method as an argument.

The accountants below this module each answer in their own terms (a certified bracket of curves,
an Edgeworth series with an error estimate, a Monte-Carlo estimate with a confidence interval, an
exact big-integer composition).  :func:`rero` asks all of them the same question -- the ReRo bound
``gamma(kappa)`` of a :class:`~fdp.accounting.privacy_loss.Mechanism` -- and returns one :class:`Estimate`
that says what the number is: certified bounds, or an estimate with its error, and the warnings a
reader must see (a wide bracket, an approximation outside its range, a collapsed Monte Carlo).
The command line (:mod:`fdp.cli`) is a thin layer over it.

Examples
--------
>>> from fdp.accounting.privacy_loss import dpsgd
>>> est = rero(dpsgd(noise_multiplier=1.0, sampling_rate=0.5, steps=10), [0.01], discretization=1e-2)
>>> est.method, est.certified, round(float(est.value[0]), 4)
('bracket', True, 0.2745)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from fractions import Fraction
from importlib import metadata
from typing import Literal

import numpy as np
from scipy.stats import norm

from .accounting import accountants, edgeworth, ground_truth, lattice, mechanism_gdp, montecarlo, pld, rtm
from .accounting.privacy_loss import Mechanism, RandomizedResponse, takes_mechanism
from .curves import conversions, mia, tradeoff
from .curves import gdp as _gdp
from .curves import rero as _rero
from .diagnostics import warns
from .formatting import ULPS_DOWN, ULPS_UP, lower, upper
from .intervals import Interval
from .result import Result
from .targets import Epsilon
from .validation import (
    MAX_DISCRETIZATION,
    ResourceLimitError,
    check_array_in,
    check_discretization,
    check_nonnegative,
    check_open_unit,
    check_positive_int,
    spelled,
)

__all__ = ["METHODS", "Estimate", "rero", "rero_closed_form", "GDPReport", "gdp", "RTMReading", "Report", "report",
           "REPORT_FPR", "REPORT_PRIOR", "REPORT_KAPPA", "REPORT_FLOORS", "RERO_RTOL"]

#: Ways to compute gamma: the certified PLD lattice bracket, the Edgeworth series and the CLT
#: (approximations with an error estimate), Monte Carlo (Hayes et al. Alg. 1, with a confidence
#: interval) and the exact big-integer composition (``mpmath``, certified, slow).
METHODS = ("bracket", "edgeworth", "clt", "mc", "mpmath")
#: Relative width of a bracket, or relative error estimate, above which an answer carries a warning.
WARN_RELATIVE = 0.01
#: The certified lattice is built for kappa >= this; below it the bracket is [kappa, gamma(KAPPA_FLOOR)].
KAPPA_FLOOR = 1e-30
#: Relative width the automatic spacing of the ReRo bracket aims at (``discretization=None``).
RERO_RTOL = 1e-4
#: Relative gap between the certified mu* and its lower end (read from the optimistic curve) that the automatic
#: spacing of the GDP report aims at, refining while the lattices fit and the gap shrinks; a gap above
#: :data:`WARN_RELATIVE` carries a warning with the interval.
MU_RTOL = 5e-3
#: The spacing of the first, coarse bracket that measures how the width scales (about ``c N h^2``).
_PROBE_SPACING = 8e-4
#: One-step grid of the bracket (:func:`fdp.accounting.pld.tradeoff_bracket`'s default) and the most the automatic spacing
#: widens it to (about 10 us a point: 10 s) when the spacing it aims at does not fit.
_DEFAULT_GRID, _AUTO_MAX_GRID = 50_000, 1_000_000


@dataclass(frozen=True, kw_only=True)
class Estimate(Result):
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

    @property
    def interval(self) -> Interval | None:
        """``Interval(lower, upper)``: the certified bracket or the confidence interval (None for an estimate without one)."""
        return None if self.lower is None else Interval(self.lower, self.upper)

    def advantage(self, kappa) -> np.ndarray:
        """The ReRo advantage ``(gamma - kappa) / (1 - kappa)`` of ``value`` over the priors ``kappa`` it was read at
        (Hayes et al. eq. 4), moved up past its three roundings (the difference is exact where gamma is near kappa)
        and capped at 1: an upper bound wherever ``value`` is one.

        Parameters
        ----------
        kappa : float or array_like
            The priors of ``value``, in (0, 1).

        Returns
        -------
        numpy.ndarray

        Examples
        --------
        >>> rero_closed_form("gaussian", 2.0, [0.1]).advantage([0.1]).round(4).tolist()
        [0.7375]
        """
        kappa = np.atleast_1d(check_array_in("kappa", kappa, 0.0, 1.0, open_low=True, open_high=True))
        value = np.atleast_1d(self.value)
        if kappa.shape != value.shape:
            raise ValueError(f"{spelled('kappa')} must be the {value.size} priors this estimate was read at (shape {value.shape}), "
                             f"got shape {kappa.shape}")
        return np.minimum(np.atleast_1d(_rero.advantage(value, kappa)) * ULPS_UP, 1.0)



def _check_method(method) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return method


@warns
@takes_mechanism
def rero(mechanism: Mechanism, kappa, method: Literal["bracket", "edgeworth", "clt", "mc", "mpmath"] = "bracket", *, discretization: float | None = None,
         order: int = edgeworth.DEFAULT_ORDER, samples: int = 1_000_000, seed: int = 0, n_jobs: int = 1) -> Estimate:
    """The ReRo bound ``gamma = 1 - f(kappa)`` of a mechanism (add direction), by ``method``.

    Parameters
    ----------
    mechanism : fdp.accounting.privacy_loss.Mechanism
    kappa : float or array_like
        Priors in (0, 1).
    method : {"bracket", "edgeworth", "clt", "mc", "mpmath"}
        ``"bracket"``: :func:`fdp.accounting.pld.tradeoff_bracket` (certified; the value is its upper end);
        ``"edgeworth"`` / ``"clt"``: :mod:`fdp.accounting.edgeworth` with an error estimate (the CLT's is its
        distance to the Edgeworth series plus the series' own); ``"mc"``: :func:`fdp.accounting.montecarlo.gamma_mc`
        with a 95 % confidence interval; ``"mpmath"``: :func:`fdp.accounting.ground_truth.gamma_ground_truth`.
        ``"bracket"`` answers Gaussian noise without subsampling by the exact closed form.
    discretization : float, optional
        Loss lattice spacing of the bracket.  By default its spacing
        is chosen for the workload: a coarse bracket (spacing 8e-4) measures how its relative width scales
        (about ``c N h^2``), then the spacing that brings it to :data:`RERO_RTOL` is used (halved again if it
        falls short; with a warning if the lattice limits stop it first).
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

    Examples
    --------
    >>> from fdp import dpsgd
    >>> est = rero(dpsgd(2.0, 0.05, 200), [1e-3, 0.1], discretization=1e-3)
    >>> est.method, est.certified, [round(float(g), 4) for g in est.upper]  # upper ends of the certified bracket
    ('bracket', True, [0.0035, 0.1837])
    """
    method = _check_method(method)
    kappa = _levels("kappa", check_array_in("kappa", kappa, 0.0, 1.0, open_low=True, open_high=True))
    if mechanism.noise == "gaussian" and mechanism.sampling_rate == 1.0 and method == "bracket":
        return _gaussian_rero(mechanism.full_batch_mu, kappa)  # the steps-fold Gaussian: sqrt(steps)/sigma-GDP
    epsilon = mechanism.steps / mechanism.noise_multiplier
    if mechanism.noise == "laplace" and not math.isfinite(epsilon):
        raise ValueError(f"{spelled('noise_multiplier')} = {mechanism.noise_multiplier!r} over {mechanism.steps} steps of "
                         "Laplace noise is beyond double precision: the total epsilon steps / noise_multiplier overflows")
    if mechanism.noise == "laplace" and method == "bracket" and epsilon <= _PURE_DP_EPSILON:
        # steps-fold Laplace noise of scale b is (steps / b)-DP, so kappa <= gamma <= e^eps kappa (ReRo paper Sec. 2,
        # the eps-DP bound): at eps <= 1e-6 a bracket of relative width 1e-6, where the lattice's loss range
        # (2 eps) falls below its float resolution
        upper = np.minimum(np.nextafter(kappa * np.exp(epsilon) * (1.0 + 4.0 * np.finfo(float).eps), 1.0), 1.0)
        return Estimate(value=upper, method=PURE_DP_METHOD, certified=True, lower=kappa, upper=upper)
    if method in ("bracket", "mpmath"):
        if discretization is not None:
            discretization = check_discretization("discretization", discretization)
        return _certified(mechanism, kappa, method, discretization)
    if method in ("edgeworth", "clt"):
        return _approximation(mechanism, kappa, method, order)
    res = montecarlo.gamma_mc(mechanism, kappa, samples=check_positive_int("samples", samples), seed=seed, n_jobs=n_jobs)
    return Estimate(value=res.estimate, method="mc", certified=False, lower=res.lower, upper=res.upper,
                    warnings=res.warnings)


def rero_closed_form(noise: Literal["gaussian", "laplace"], mu: float, kappa) -> Estimate:
    """gamma of one release of the Gaussian or Laplace mechanism of effect size ``mu``, in closed form, certified.

    ``"gaussian"``: the mu-GDP mechanism, ``gamma = Phi(Phi^{-1}(kappa) + mu)`` (ReRo paper Cor. 2), its float value
    rounded up past its bounded rounding error; ``"laplace"``: ``mu = Delta_1 / b``, the power of the Laplace curve
    (ReRo paper eq. 1: ``e^mu kappa``, ``1 - e^{-mu} / (4 kappa)`` or ``1 - e^{-mu} (1 - kappa)``), moved up a few ulps.

    Parameters
    ----------
    noise : {"gaussian", "laplace"}
    mu : float
        Effect size, >= 0.
    kappa : float or array_like
        Baseline success probabilities, in (0, 1).

    Returns
    -------
    Estimate
        ``value`` and ``upper`` the rounded-up gamma, ``lower`` rounded down; ``method`` "closed form".

    References
    ----------
    ReRo paper (Kaissis et al. 2023a) eq. 1, Cor. 2.

    Examples
    --------
    >>> round(float(rero_closed_form("gaussian", 1.0, 0.5).value[0]), 6)  # Phi(0 + 1)
    0.841345
    """
    if noise not in ("gaussian", "laplace"):
        raise ValueError(f"noise must be 'gaussian' or 'laplace', got {noise!r}")
    mu = check_nonnegative("mu", mu)
    kappa = _levels("kappa", check_array_in("kappa", kappa, 0.0, 1.0, open_low=True, open_high=True))
    if noise == "gaussian":
        # (a subnormal kappa is the number it represents: Phi^{-1} of it keeps its digits, gaussian_power_bounds holds)
        return _gaussian_rero(mu, kappa)
    # eq. 1 in logs: e^mu kappa below the corner e^-mu / 2, then 1 - e^-mu / (4 kappa), then 1 - e^-mu (1 - kappa); each
    # exponent carries a rounding of about u (mu + |log kappa|), which moves gamma relatively by as much (gamma >= 1/2
    # on the last two pieces): a margin of 4 times that, outward
    log_kappa = np.log(kappa)
    with np.errstate(under="ignore", over="ignore"):  # each branch is evaluated everywhere; np.where keeps its own
        gamma = np.where(log_kappa < -mu - np.log(2.0), np.exp(np.minimum(mu + log_kappa, 0.0)),
                         np.where(kappa <= 0.5, -np.expm1(-mu - np.log(4.0) - log_kappa), -np.expm1(-mu + np.log1p(-kappa))))
    margin = 4.0 * np.finfo(float).eps * (4.0 + mu + np.abs(log_kappa))
    # two floats further: exp's ulp and the product's rounding, which for a subnormal gamma are absolute 5e-324 each
    upper = np.minimum(np.nextafter(np.nextafter(gamma * (1.0 + margin), np.inf), np.inf), 1.0)
    lower = np.where(gamma < _TINY_NORMAL, kappa, np.maximum(gamma * (1.0 - margin), kappa))  # subnormal: few digits
    return Estimate(value=upper, method="closed form", certified=True, lower=lower, upper=upper)


#: Below this total epsilon (steps / b) the ReRo bound of Laplace noise is read off its eps-DP closed form.
_PURE_DP_EPSILON = 1e-6

#: The smallest normal float: below it a probability keeps fewer than 53 bits.
_TINY_NORMAL = float(np.finfo(float).tiny)


def _auto_bracket(mechanism: Mechanism, kappa: np.ndarray, kappa_min: float):
    """The bracket at the coarsest spacing whose relative width meets :data:`RERO_RTOL` (see :func:`rero`), and a
    warning if the lattice limits stopped the refinement first."""
    h, grid, best = _PROBE_SPACING, _DEFAULT_GRID, None
    for _ in range(8):
        try:
            bracket = pld.tradeoff_bracket(mechanism, discretization=h, level_min=kappa_min, max_grid=grid)
        except ResourceLimitError:
            if best is None:
                raise
            break
        step = bracket.discretization  # above h when the one-step grid was full
        if best is not None and step >= best[2]:  # no finer lattice within the limits
            break
        lower, upper = bracket.gamma(kappa)
        best = (lower, upper, step)
        width = float(np.max((upper - lower) / upper))
        if width <= RERO_RTOL:
            return best, ()
        target = step * 0.95 * np.sqrt(RERO_RTOL / width)  # the width scales like h^2: aim a little below the goal
        if step > 1.01 * h:  # the grid was full: the same loss range at the finer spacing needs more points
            grid = int(min(_AUTO_MAX_GRID, np.ceil(grid * step / target)))
        h = target
    lower, upper, h = best
    width = float(np.max((upper - lower) / upper))
    return best, (f"the ReRo bracket is {width:.2g} wide (relative; goal {RERO_RTOL:g}) at spacing {h:.3g}, the finest "
                  "within the lattice limits; its upper end is still a certified bound, and nothing here narrows it further",)


def _certified(mechanism: Mechanism, kappa: np.ndarray, method: str, discretization: float | None) -> Estimate:
    spacing_warning = ()
    if method == "bracket":
        kappa_min = max(float(kappa.min()), KAPPA_FLOOR)
        if discretization is None:
            (lower, upper, _), spacing_warning = _auto_bracket(mechanism, kappa, kappa_min)
        else:
            lower, upper = pld.tradeoff_bracket(mechanism, discretization=discretization, level_min=kappa_min).gamma(kappa)
    else:
        if mechanism.steps > 10**7:
            raise ResourceLimitError(f"{spelled('steps')} must be <= 1e7 for method 'mpmath', got {mechanism.steps}")
        truth = ground_truth.gamma_ground_truth(mechanism, kappa)
        lower, upper = truth.lower, truth.upper
    lower = np.maximum(lower, kappa)
    warnings = spacing_warning + tuple(
        f"the certified bracket at kappa={k:g} is wide: gamma in [{lo:.6g}, {up:.6g}] ({100 * (up - lo) / up:.3g} %); "
        "the reported gamma is its upper end"
        # advice only where it can be followed: not after the automatic spacing already went to the finest it can
        + ("; use a smaller discretization" if method == "bracket" and not spacing_warning else "")
        for k, lo, up in zip(kappa, lower, upper) if (up - lo) / up > WARN_RELATIVE
    )
    return Estimate(value=upper, method=method, certified=True, lower=lower, upper=upper, warnings=warnings)


def _approximation(mechanism: Mechanism, kappa: np.ndarray, method: str, order: int) -> Estimate:
    warnings = []
    try:
        series = edgeworth.edgeworth_curve(mechanism, order=edgeworth.DEFAULT_ORDER if method == "clt" else order)
        reference, err = series.power(kappa), series.error_estimate(kappa)
    except ValueError as exc:
        if method == "edgeworth":
            raise
        series, err = None, None
        warnings.append(f"no error estimate for the CLT: the Edgeworth series is not valid here ({exc})")
    if method == "edgeworth":
        gamma, label = _rero.gamma(series, kappa), f"the order-{order} Edgeworth approximation"
    else:
        gamma, label = _rero.gamma(edgeworth.clt_curve(mechanism), kappa), "the CLT approximation"
        if series is not None:  # the CLT's error: its distance to the Edgeworth series, plus the series' own
            err = np.abs(gamma - reference) + err
    if err is not None:
        warnings += [f"{label} at kappa={k:g} is unreliable: estimated error {e:.3g} on gamma {g:.6g} "
                     f"({100 * e / g:.3g} %); use method 'bracket' for a certified bound"
                     for k, g, e in zip(kappa, gamma, err) if e > WARN_RELATIVE * g]
    return Estimate(value=gamma, method=method, certified=False, error_estimate=err, warnings=tuple(warnings))


@dataclass(frozen=True, kw_only=True)
class GDPReport(Result):
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
        :func:`fdp.accounting.mechanism_gdp.mu_and_regret_dpsgd`; epsilon from ``dp_accounting``'s PLD).
    warnings : tuple of str
    mu_lower : float or None
        A lower bound on the exact ``mu*`` above the same floor (``mu`` for a closed form; for the lattice, read
        from the optimistic curve): ``[mu_lower, mu]`` contains the truth.
    """

    mu: float
    regret: float
    alpha_floor: float
    epsilon: float | None
    delta: float
    discretization: float | None
    method: str
    warnings: tuple[str, ...] = field(default=())
    mu_lower: float | None = None

    @property
    def mu_interval(self) -> Interval:
        """``Interval(mu_lower, mu)``: where the mechanism's tight mu* lies (``[mu, mu]`` for a closed form)."""
        return Interval(self.mu if self.mu_lower is None else self.mu_lower, self.mu)


@warns
@takes_mechanism
def gdp(mechanism: Mechanism, *, delta: float = 1e-5, discretization: float | None = None, tail: float = 1e-10) -> GDPReport:
    """The GDP report of a Gaussian mechanism (DP-SGD): tight ``mu*``, its regret and epsilon at ``delta``.

    Parameters
    ----------
    mechanism : fdp.accounting.privacy_loss.Mechanism
        Gaussian noise (DP-SGD).  Without subsampling the answer is the closed form ``sqrt(steps) /
        noise_multiplier`` (regret 0).
    delta : float
        For the reported epsilon.
    discretization : float, optional
        PLD lattice spacing; by default :func:`fdp.accounting.pld.converged_discretization` (the coarsest spacing from
        :func:`fdp.accounting.pld.default_discretization` down whose epsilon lies within 0.5 % of the converged value),
        coarsened (with a warning) so that one step stays below :data:`fdp.accounting.lattice.MAX_ONE_STEP_POINTS` points.
    tail : float
        The alpha floor (1e-10, gdpnum's ``err``, by default), in [0, 0.5): an accountant curve's truncated tails
        must be ignored by eq. 21.  A subsampled mechanism's lattice curve reaches alpha = 1e-300 at the least
        (:data:`fdp.accounting.mechanism_gdp.LATTICE_TAIL_MIN`); below it, ``mu*`` is the full batch's ``sqrt(steps) / noise_multiplier``
        (an upper bound at every floor, and the limit of the subsampled curve's ``mu(alpha)`` as alpha -> 0), with a
        warning.  Every ``mu*`` is capped by that value.  A curve that passes below ``(tail, tail)`` (far from
        private) gets its floor lowered to its fixed point (:func:`fdp.accounting.mechanism_gdp.mu_and_regret_dpsgd`, with a
        warning); ``GDPReport.alpha_floor`` is the floor used.

    Returns
    -------
    GDPReport

    References
    ----------
    GDP paper (Gomez et al. 2025) Alg. 1, eq. 21, Def. 2.6.

    Examples
    --------
    >>> from fdp import dpsgd
    >>> g = gdp(dpsgd(2.0, 0.05, 200), discretization=1e-3)
    >>> round(g.mu, 4), round(g.mu_lower, 4), g.alpha_floor  # the exact mu* lies in [mu_lower, mu]
    (0.4196, 0.4193, 1e-10)
    """
    if mechanism.noise != "gaussian":
        raise ValueError(f"mechanism must have Gaussian noise (DP-SGD), got {mechanism!r}")
    delta = check_open_unit("delta", delta)
    tail = _gdp.check_tail(tail)
    mu_cap = mechanism.full_batch_mu
    if mechanism.sampling_rate == 1.0:  # the steps-fold Gaussian mechanism: exactly sqrt(steps)/sigma-GDP
        mu = mu_cap
        try:
            eps, warnings = float(_gdp.eps_from_mu_delta(mu, delta)), ()
        except ValueError as exc:
            eps, warnings = None, (f"no epsilon at delta {delta:g}: {exc}",)
        # mu is the smallest float with (mu sigma)^2 >= steps, exactly: it is sqrt(steps)/sigma where equality holds,
        # and the float below it lies below sqrt(steps)/sigma otherwise
        exact = (Fraction(mu) * Fraction(mechanism.noise_multiplier)) ** 2 == mechanism.steps
        return GDPReport(mu=mu, regret=0.0, alpha_floor=0.0, epsilon=eps, delta=delta, discretization=None,
                         method="closed form", warnings=warnings, mu_lower=mu if exact else float(np.nextafter(mu, 0.0)))
    if tail >= mechanism_gdp.LATTICE_TAIL_MIN:
        report, _ = _gdp_and_curve(mechanism, delta, discretization, tail)
        return report
    # below the lattice's smallest floor only the full-batch bound is known: subsampling never lowers the curve
    # below G_{sqrt(T)/sigma} (Dong, Roth, Su 2022 Thm. 4.2 with Cor. 3.3), and as alpha -> 0 the subsampled curve's
    # mu(alpha) tends to that value, so it is the answer at floor 0; the lower end is read at the lattice's floor
    report, curve = _gdp_and_curve(mechanism, delta, discretization, mechanism_gdp.LATTICE_TAIL_MIN)
    mu = mu_cap
    mu_lower = min(report.mu_lower, mu)
    note = (f"below alpha = {mechanism_gdp.LATTICE_TAIL_MIN:g} the certified curve is not resolved: mu* at the floor {tail:g} is "
            f"bounded by the full-batch sqrt(steps)/sigma = {upper(mu)} and lies in [{lower(mu_lower)}, {upper(mu)}] "
            f"(the lower end read at alpha >= {mechanism_gdp.LATTICE_TAIL_MIN:g})")
    kept = tuple(w for w in report.warnings if not w.startswith("mu* lies in"))  # the floor-1e-300 interval: replaced
    return GDPReport(mu=mu, regret=_gdp.gdp_regret(curve, mu), alpha_floor=tail, epsilon=report.epsilon, delta=delta,
                     discretization=report.discretization, method="lattice", warnings=kept + (note,), mu_lower=mu_lower)



def _capped_alg1(curve: tradeoff.PiecewiseLinear, tail: float, cap: float) -> tuple[float, float, float]:
    """GDP paper Alg. 1 on a certified curve, ``mu*`` capped by ``cap``, a closed-form GDP bound of the mechanism (the
    full batch's for DP-SGD): the lattice's far tail can be more pessimistic than that bound, and a curve that is 0 at
    every level above 0 in float64 (too far from private for the lattice) leaves only the bound."""
    try:
        floor = _gdp.alpha_floor(curve, tail)
        mu, regret = _gdp.mu_and_regret(curve, symmetrise=False, tail=floor)
    except ValueError:
        if not np.isfinite(cap):
            raise
        mu, floor = np.inf, tail
    if mu > cap:
        mu, regret = cap, _gdp.gdp_regret(curve, cap)
    return mu, regret, floor


def _gdp_and_curve(mechanism: Mechanism, delta, discretization, tail,
                   level: float = 1.0) -> tuple[GDPReport, tradeoff.PiecewiseLinear]:
    """The GDP report of subsampled DP-SGD and the certified symmetrised curve it was read from (built down
    to the smaller of ``tail`` and ``level``, the smallest level the caller reads it at).

    ``mu*`` is read from the certified lower curve; the optimistic curve of :func:`fdp.accounting.pld.tradeoff_bracket` at the
    same spacing (:func:`fdp.accounting.pld.optimistic_curve`, without the bracket's pessimistic side) gives ``mu_lower``
    below the exact mu* (:func:`fdp.curves.gdp.mu_star_below`).
    With the automatic spacing, a gap above :data:`MU_RTOL` refines the spacing while the lattices fit."""
    warnings = []
    auto = discretization is None
    if auto:  # the coarsest spacing whose epsilon has converged, or one that one step affords
        h = pld.default_discretization(mechanism)
        one = lattice.lattice_points(mechanism.one_step, h)
        if one > lattice.MAX_ONE_STEP_POINTS:
            h *= one / lattice.MAX_ONE_STEP_POINTS
            warnings.append(f"the lattice spacing was coarsened to {h:.3g} to keep one step below "
                            f"{lattice.MAX_ONE_STEP_POINTS:.3g} points (the curve stays pessimistic)")
        else:
            spacing = pld.converged_discretization(mechanism, delta=delta)
            h = spacing.discretization
            if not spacing.converged:
                warnings.append(f"the lattice spacing {h:.3g} is the finest within the limits, and the PLD epsilon "
                                f"there has not converged to {100 * pld.EPSILON_RTOL:g} %: every reading is an upper "
                                "bound, but a pessimistic one")
    else:
        h = check_discretization("discretization", discretization)
    h_eps = h  # epsilon keeps the spacing chosen for it (dp_accounting's PLD fails at spacings far below it)
    # a certified cap on mu* at every floor, reached as alpha -> 0 (where only the all-sampled branch counts)
    full_batch = mechanism.full_batch_mu

    def read(spacing, grid):  # the certified curve, its (mu*, regret, floor), mu* of the optimistic curve below the
        # truth, and the one-step spacing of the optimistic lattice (above ``spacing`` when its grid was full)
        curve = pld.certified_lower_curve(mechanism, discretization=spacing, direction="symmetrised",
                                          level_min=min(tail, level))
        mu, regret, floor = _capped_alg1(curve, tail, full_batch)
        above = pld.optimistic_curve(mechanism, discretization=spacing, level_min=min(tail, level),
                                     max_grid=grid)  # the bracket's upper side only
        return curve, mu, regret, floor, min(_gdp.mu_star_below(above.upper, curve, floor, slack=above.slack), mu), above.discretization

    grid = _DEFAULT_GRID
    curve, mu, regret, floor, mu_lower, step = read(h, grid)
    stalled = 0
    while auto and mu - mu_lower > MU_RTOL * mu and stalled < 2:
        gap = (mu - mu_lower) / mu
        # the gap falls at least like the spacing: aim at half the tolerance, by at most a factor 64 at a time
        finer = h * float(np.clip(0.5 * MU_RTOL / gap, 1.0 / 64.0, 0.5))
        if not pld.affordable(mechanism, finer):
            break
        if step > 1.01 * h:  # the optimistic one-step grid was full: the same loss range needs more points
            grid = int(min(_AUTO_MAX_GRID, np.ceil(grid * step / finer)))
        try:
            reading = read(finer, grid)
        except ResourceLimitError:  # a finer lattice out of reach: keep what we have
            break
        step = reading[5]
        # both ends are certified at every spacing: keep the smaller mu* (and its curve) and the larger lower end
        mu_lower = max(mu_lower, reading[4])
        if reading[1] <= mu:
            curve, mu, regret, floor = reading[:4]
            h = finer
        # two refinements in a row that do not shrink the gap by 10 %: not the spacing but the float64 floor of the
        # curves or the optimistic FFT's rounding slack (at beta near 1: 1 - beta = 5e-10 against a slack of 7e-12
        # at the floor 1e-10 of the RTM paper's SNLI run) limits it
        stalled = stalled + 1 if mu - mu_lower > 0.9 * gap * mu else 0
    if fixed_point_zero := tradeoff.fixed_point(curve) == 0.0:
        warnings.append(f"the certified curve is 0 at every level above alpha = 0 in double precision (too far from "
                        f"private for the lattice): mu* is the full batch's sqrt(steps)/sigma = {upper(mu)}, which "
                        "subsampling never exceeds")
    gap = (mu - mu_lower) / mu
    if gap > WARN_RELATIVE and not fixed_point_zero:
        warnings.append(f"mu* lies in [{lower(mu_lower)}, {upper(mu)}] ({100 * gap:.3g} % apart) at lattice spacing "
                        f"{h:.3g}; the reported mu* is the upper end"
                        + ("" if auto else "; a smaller discretization can tighten it (left unset, the spacing is refined "
                                             "for as long as that helps)"))
    dist = pld.mechanism_pld(mechanism, discretization=h_eps)  # for epsilon at delta (its size is checked first)
    if floor < tail:
        warnings.append(f"the curve passes below ({tail:g}, {tail:g}): the alpha floor was lowered to its fixed "
                        f"point {floor:.3g}, and mu* = {upper(mu, 3)} reads as 'beyond {lower(2 * norm.isf(tail), 3)}'")
    eps = pld.epsilon_for_delta(dist, delta)
    if not np.isfinite(eps):
        warnings.append(f"epsilon at delta {delta:g} is infinite for this lattice")
    return GDPReport(mu=mu, regret=regret, alpha_floor=floor, epsilon=eps if np.isfinite(eps) else None, delta=delta,
                     discretization=h, method="lattice", warnings=tuple(warnings), mu_lower=mu_lower), curve


#: Default false-positive rates of the membership reading of :func:`report`.
REPORT_FPR = (1e-3, 1e-2, 1e-1)
#: Default priors of the membership Bayes success of :func:`report`.
REPORT_PRIOR = (0.01, 0.5)
#: Default priors kappa of the ReRo bound of :func:`report`.
REPORT_KAPPA = (1e-3, 1e-2, 1e-1)
#: The two alpha floors at which :func:`report` shows mu* besides 1e-10.
REPORT_FLOORS = (1e-6, 1e-4)


@dataclass(frozen=True, kw_only=True)
class RTMReading(Result):
    """The relaxed-threat-model reading of a run: an adversary who knows the data set but not the target record
    and tests the magnitude of each release (RTM paper, reading (a): :func:`fdp.accounting.rtm.composition.tensor_bracket`).

    Attributes
    ----------
    dimension : int
        Dimension ``d`` of the release; 1 is the RTM paper's worst case (a real model's ``d`` is its parameter
        count, and the bounds fall as it grows).
    discretization : float
        Spacing of the pessimistic lattice.
    tpr, tpr_lower : numpy.ndarray
        Bracket ``[tpr_lower, tpr]`` of the RTM membership bound ``1 - J(FPR)`` at each of the report's FPRs, ``J``
        the symmetrised RTM curve (a value and its ``_lower`` end, as everywhere): ``tpr`` bounds the TPR of every
        membership test of the RTM adversary that tests each release by its magnitude (of either direction; the
        tensor reading, :func:`fdp.accounting.rtm.composition.tensor_composition`);
        ``tpr_lower`` bounds the bound from below, not the power of a particular test.
    advantage : float
        Upper bound on the RTM membership advantage.
    gamma, gamma_lower : numpy.ndarray
        Bracket ``[gamma_lower, gamma]`` of the ReRo bound under the RTM at each of the report's priors.
    bracket : fdp.accounting.pld.Bracket
        The add-direction RTM curves the readings come from.
    curve : fdp.curves.tradeoff.PiecewiseLinear
        The symmetrised pessimistic RTM curve (``1 - curve`` bounds the membership ROC).
    """

    dimension: int
    discretization: float
    tpr_lower: np.ndarray
    tpr: np.ndarray
    advantage: float
    gamma_lower: np.ndarray
    gamma: np.ndarray
    bracket: pld.Bracket = field(repr=False, compare=False)
    curve: tradeoff.PiecewiseLinear = field(repr=False, compare=False)

    @property
    def tpr_interval(self) -> Interval:
        """``Interval(tpr_lower, tpr)`` at each FPR."""
        return Interval(self.tpr_lower, self.tpr)

    @property
    def gamma_interval(self) -> Interval:
        """``Interval(gamma_lower, gamma)`` at each prior."""
        return Interval(self.gamma_lower, self.gamma)



def _rtm_reading(mechanism: Mechanism, d, h, fpr, kappa) -> RTMReading:
    # One step is read off without an FFT, so its curve keeps its digits at any level if the tail it cuts lies
    # below the smallest level asked for; composed curves cannot resolve powers below the FFT's rounding
    # (~1e-16 per coefficient), so their tail stays at the default.
    tail = rtm.DEFAULT_TAIL
    if mechanism.steps == 1:
        tail = max(min(tail, 1e-3 * float(np.min(np.concatenate([fpr, kappa])))), 1e-300)
    bracket = rtm.tensor_bracket(mechanism, d, discretization=h, tail=tail)
    curve = tradeoff.symmetrise(bracket.lower)  # symmetrising keeps the side (it is monotone in the curve)
    tpr_up, adv_up, _ = mia.membership_bounds(curve, fpr, [0.5])
    tpr_low = pld.OptimisticCurve(bracket.upper, bracket.slack, bracket.discretization).membership_lower(fpr)[0]
    gamma_low, gamma_up = bracket.gamma(kappa)
    return RTMReading(dimension=d, discretization=h, tpr_lower=np.minimum(tpr_low, tpr_up), tpr=tpr_up,
                      advantage=adv_up, gamma_lower=gamma_low, gamma=gamma_up, bracket=bracket, curve=curve)


@dataclass(frozen=True, kw_only=True)
class Report(Result):
    """One mechanism read four ways, (eps, delta), mu-GDP, membership inference and reconstruction, the last two also
    under the relaxed threat model.

    Every number is certified unless a warning says otherwise: an upper end is an upper bound on the exact value
    (the MIA numbers read from the certified lower curve of both directions, symmetrised), a ``_lower`` attribute (or
    the ``lower`` of the ReRo bracket, of the add curve) a lower bound on it.

    Attributes
    ----------
    mechanism : fdp.accounting.privacy_loss.Mechanism or fdp.accounting.privacy_loss.RandomizedResponse
    delta : float
    epsilon_pld, epsilon_rdp : float or None
        eps at ``delta``: from the tight PLD accountant, an upper bound (pessimistic lattice; the exact value for
        randomized response), the one to quote (Opacus's default PRV accountant estimates the same tight value); and
        from the RDP accountant on dp_accounting's orders, looser, what TF Privacy's
        ``compute_dp_sgd_privacy_statement`` prints without microbatching (None where infinite, and for randomized
        response).
    gdp : GDPReport
        mu*, its regret and its alpha floor (:func:`gdp`).
    mu_at_floor : dict
        mu* on ``alpha, beta >= floor`` for the floors of :data:`REPORT_FLOORS`.
    fpr, tpr : numpy.ndarray
        Upper bounds on the true-positive rate of any membership test at each false-positive rate.
    advantage : float
        Upper bound on ``TPR - FPR`` over all tests.
    prior, bayes_success : numpy.ndarray
        Upper bounds on the probability of guessing membership right, for a record in the training data with prior
        probability ``prior``.
    kappa : numpy.ndarray
    rero : Estimate
        ReRo bound gamma at each kappa (:func:`rero`, certified bracket).
    rtm : RTMReading or None
        Membership TPR and ReRo under the relaxed threat model (None for randomized response, whose release
        has no magnitude to test).
    discretization : float or None
        Loss lattice spacing of the curve (None for an exact curve).
    seconds : float
        Wall time of the report.
    version : str
        Version of this package.
    warnings : tuple of str
    curve : fdp.curves.tradeoff.TradeOffCurve or None
        The curve the MIA readings come from: the certified symmetrised lattice curve, the exact curve of
        randomized response, or the exact mu-GDP curve of full-batch Gaussian noise.
    epsilon_pld_lower : float or None
        A lower end of the exact eps at ``delta`` (:meth:`fdp.targets.Target.lower` of :class:`fdp.targets.Epsilon`:
        the optimistic lattice, or the closed form of a full batch); ``epsilon_pld`` itself for randomized response
        (exact); None for Laplace noise (its lattice gives an upper bound only).
    tpr_lower : numpy.ndarray or None
        Lower ends of the exact TPR at each FPR (the optimistic lattice's curve, or the closed form of a full batch, or
        randomized response's exact curve); None for Laplace noise.
    epsilon_rdp_opacus : float or None
        eps at ``delta`` from the same RDP accountant on the orders of Opacus's ``RDPAccountant``
        (:data:`fdp.accounting.accountants.RDP_ORDERS`): what Opacus prints with ``accountant="rdp"``; equal to
        ``epsilon_rdp`` unless the best order lies outside Opacus's 1.1-63.
    """

    mechanism: Mechanism | RandomizedResponse
    delta: float
    epsilon_pld: float | None
    epsilon_rdp: float | None
    gdp: GDPReport
    mu_at_floor: dict
    fpr: np.ndarray
    tpr: np.ndarray
    advantage: float
    prior: np.ndarray
    bayes_success: np.ndarray
    kappa: np.ndarray
    rero: Estimate
    rtm: RTMReading | None
    discretization: float | None
    seconds: float
    version: str
    warnings: tuple[str, ...] = field(default=())
    curve: tradeoff.TradeOffCurve | None = field(default=None, repr=False, compare=False)
    epsilon_pld_lower: float | None = None
    tpr_lower: np.ndarray | None = None
    epsilon_rdp_opacus: float | None = None

    @property
    def tpr_interval(self) -> Interval | None:
        """``Interval(tpr_lower, tpr)``: where the exact TPR at each FPR lies (None without a lower end)."""
        return None if self.tpr_lower is None else Interval(self.tpr_lower, self.tpr)

    def to_dict(self) -> dict:
        """The report as plain JSON-ready values."""
        if isinstance(self.mechanism, RandomizedResponse):
            mechanism = {"randomized_response": True, "epsilon": self.mechanism.epsilon}
        else:
            noise, sigma, rate, steps = self.mechanism.args
            mechanism = {"noise": noise, "noise_multiplier": sigma, "sampling_rate": rate, "steps": steps}
        r = self.rtm
        return {
            "mechanism": mechanism,
            "dp": {"delta": self.delta, "epsilon_pld": self.epsilon_pld, "epsilon_pld_lower": self.epsilon_pld_lower,
                   "epsilon_rdp": self.epsilon_rdp, "epsilon_rdp_opacus": self.epsilon_rdp_opacus,
                   "rdp_conversion": None if self.epsilon_rdp is None else accountants.RDP_CONVERSION},
            "gdp": {"mu": self.gdp.mu, "mu_lower": self.gdp.mu_lower, "regret": self.gdp.regret,
                    "alpha_floor": self.gdp.alpha_floor,
                    "method": self.gdp.method,
                    "mu_at_floor": {f"{k:g}": v for k, v in self.mu_at_floor.items()}},
            "mia": {"fpr": self.fpr.tolist(), "tpr_upper": self.tpr.tolist(),
                    "tpr_lower": None if self.tpr_lower is None else self.tpr_lower.tolist(), "advantage_upper": self.advantage,
                    "prior": self.prior.tolist(), "bayes_success_upper": self.bayes_success.tolist()},
            "rero": {"kappa": self.kappa.tolist(), "gamma_lower": self.rero.lower.tolist(),
                     "gamma_upper": self.rero.upper.tolist(), "method": self.rero.method},
            "rtm": None if r is None else {
                "dimension": r.dimension, "reading": "tensor", "discretization": r.discretization,
                "tpr_lower": r.tpr_lower.tolist(), "tpr_upper": r.tpr.tolist(),
                "advantage_upper": r.advantage, "gamma_lower": r.gamma_lower.tolist(),
                "gamma_upper": r.gamma.tolist()},
            "provenance": {"fdp_version": self.version, "discretization": self.discretization,
                           "seconds": self.seconds},
            "warnings": list(self.warnings),
        }

@warns
@takes_mechanism(randomized_response=True)
def report(mechanism: Mechanism | RandomizedResponse, *, delta: float = 1e-5, kappa=REPORT_KAPPA, fpr=REPORT_FPR,
           prior=REPORT_PRIOR, discretization: float | None = None, rero_discretization: float | None = None,
           rtm_dimension: int = 1, rtm_discretization: float = 1e-4) -> Report:
    """A privacy risk report of DP-SGD (or Laplace noise, or randomized response): (eps, delta), mu*, MIA, ReRo.

    The four readings of the GDP, Hayes et al., ReRo and RTM papers' shared object, the trade-off curve:
    eps at ``delta`` from the tight PLD and the RDP accountant; mu* with its regret and alpha floor
    (:func:`gdp`) and at the floors of :data:`REPORT_FLOORS`; membership-inference bounds from the same
    certified symmetrised curve (:func:`fdp.curves.mia.membership_bounds`); the ReRo bound as a certified bracket
    (:func:`rero`); the membership TPR and the ReRo bound under the relaxed threat model (:class:`RTMReading`).

    Parameters
    ----------
    mechanism : fdp.accounting.privacy_loss.Mechanism or fdp.accounting.privacy_loss.RandomizedResponse
        Gaussian noise (DP-SGD, or the plain Gaussian mechanism with sampling rate 1), Laplace noise
        without subsampling (its subsampled remove direction is not built), or randomized response (an
        exact curve: every reading is a closed form, and there is no RDP or RTM reading).
    delta : float, default 1e-5
    kappa : array_like
        ReRo priors in (0, 1).
    fpr : array_like
        False-positive rates of the MIA reading, in [0, 1].
    prior : array_like
        Membership priors of the Bayes success, in (0, 1).
    discretization : float, optional
        Loss lattice spacing of the curve (default :func:`fdp.accounting.pld.converged_discretization`; 1e-4 for Laplace).
    rero_discretization : float, optional
        Spacing of the ReRo bracket (default: chosen for a relative width of :data:`RERO_RTOL`, see :func:`rero`).
    rtm_dimension : int, default 1
        Dimension of the release in the RTM reading (1: the worst case; Laplace: 1 only).
    rtm_discretization : float, default 1e-4
        Spacing of the RTM reading's pessimistic lattice.

    Returns
    -------
    Report

    References
    ----------
    GDP paper (Gomez et al. 2025) Alg. 1; ReRo paper (Kaissis et al. 2023a) Thm. 1; Hayes et al. (2023).

    Examples
    --------
    >>> from fdp.accounting.privacy_loss import dpsgd
    >>> r = report(dpsgd(noise_multiplier=2.0, sampling_rate=0.05, steps=200), discretization=1e-3,
    ...            rero_discretization=1e-3)
    >>> round(r.gdp.mu, 3), round(float(r.tpr[1]), 3), bool(r.rero.lower[0] <= r.rero.upper[0])
    (0.42, 0.026, True)
    """
    start = time.perf_counter()
    if isinstance(mechanism, Mechanism) and mechanism.noise == "laplace" and mechanism.sampling_rate < 1.0:
        raise ValueError(f"{spelled('sampling_rate')} must be 1 for Laplace noise in a report (the remove direction of subsampled "
                         f"Laplace noise is not built), got {mechanism.sampling_rate!r}")
    delta = check_open_unit("delta", delta)
    kappa = _levels("kappa", check_array_in("kappa", kappa, 0.0, 1.0, open_low=True, open_high=True))
    fpr = _levels("fpr", check_array_in("fpr", fpr, 0.0, 1.0))
    prior = _levels("prior", check_array_in("prior", prior, 0.0, 1.0, open_low=True, open_high=True))
    if rero_discretization is not None:
        rero_discretization = check_discretization("rero_discretization", rero_discretization)
    rtm_dimension = check_positive_int("rtm_dimension", rtm_dimension)
    rtm_discretization = check_discretization("rtm_discretization", rtm_discretization)
    if isinstance(mechanism, Mechanism) and mechanism.noise == "laplace" and rtm_dimension != 1:
        raise ValueError(f"{spelled('rtm_dimension')} must be 1 for Laplace noise (its RTM statistic is one-dimensional), "
                         f"got {rtm_dimension}")
    if discretization is not None:
        check_discretization("discretization", discretization)
    tail = _gdp.DPSGD_TAIL
    # the curve is built down to the smallest FPR asked (below LATTICE_TAIL_MIN it is read off its first chord)
    level = max(mechanism_gdp.LATTICE_TAIL_MIN, min([tail, *fpr[fpr > 0.0]]))
    eps_rdp, eps_opacus, rtm_reading, rtm_failure, cap = None, None, None, (), np.inf
    if isinstance(mechanism, RandomizedResponse):  # an exact curve: every reading is a closed form
        gdp_report, curve, mu_at_floor, gamma = _randomized_response(mechanism.epsilon, delta, kappa)
        h = None
    else:
        cap = mechanism.full_batch_mu  # the GDP bound that caps mu* at every floor and the MIA readings
        if mechanism.sampling_rate == 1.0 and mechanism.noise == "gaussian":  # exactly sqrt(steps)/sigma-GDP: every reading but the RTM's is closed
            gdp_report = gdp(mechanism, delta=delta)
            curve = tradeoff.gaussian(gdp_report.mu)
            mu_at_floor = {floor: gdp_report.mu for floor in REPORT_FLOORS}  # one mu at every floor
        else:
            gdp_report, curve = (_laplace_gdp_and_curve(mechanism, delta, discretization, tail, level)
                                 if mechanism.noise == "laplace" else
                                 _gdp_and_curve(mechanism, delta, discretization, tail, level))
            mu_at_floor = {floor: gdp_report.mu if gdp_report.method == PURE_DP_METHOD else  # float RR: identity
                           _capped_alg1(curve, floor, cap)[0] for floor in REPORT_FLOORS}             # below eps 1e-16
        h = gdp_report.discretization or discretization
        eps_rdp, eps_opacus = (accountants.epsilon(mechanism, delta, accountant=a) for a in ("rdp", "rdp_opacus"))
        gamma = rero(mechanism, kappa, discretization=rero_discretization)
        try:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # a failure is raised, not returned
                rtm_reading = _rtm_reading(mechanism, rtm_dimension, rtm_discretization, fpr, kappa)
        except ValueError as exc:  # e.g. far from private: the RTM lattice leaves the float range
            rtm_failure = (f"no relaxed-threat-model reading: {exc}",)
    if isinstance(curve, tradeoff.PiecewiseLinear):
        tpr, advantage, bayes = mia.membership_bounds(curve, fpr, prior)
        if np.isfinite(cap):  # the closed forms of the GDP bound that caps mu* cap these too
            bounds = mia.gaussian_membership_bounds(cap, fpr, prior)
            tpr, advantage, bayes = np.minimum(tpr, bounds[0]), min(advantage, bounds[1]), np.minimum(bayes, bounds[2])
    else:
        tpr, advantage, bayes = mia.gaussian_membership_bounds(gdp_report.mu, fpr, prior)
    warnings = gdp_report.warnings + gamma.warnings + rtm_failure
    if rtm_reading is not None:
        # the RTM adversary is weaker than the DP one (RTM paper Lemma 6; the RTM curve lies on or above the DP curve):
        # its upper bounds are capped by the DP ones, which keeps a vacuous lattice bound (TPR 1 at a noise of 1e10)
        # from being printed beside a DP advantage of 1e-10
        tpr_cap, gamma_cap = np.minimum(rtm_reading.tpr, tpr), np.minimum(rtm_reading.gamma, gamma.upper)
        rtm_reading = replace(rtm_reading, tpr=tpr_cap, tpr_lower=np.minimum(rtm_reading.tpr_lower, tpr_cap),
                              advantage=min(rtm_reading.advantage, advantage), gamma=gamma_cap,
                              gamma_lower=np.minimum(rtm_reading.gamma_lower, gamma_cap))
    tpr_lower, eps_lower = _lower_ends(mechanism, gdp_report, curve, h, fpr, level, tpr)
    return Report(mechanism=mechanism, delta=delta, epsilon_pld=gdp_report.epsilon, epsilon_pld_lower=eps_lower,
                  tpr_lower=tpr_lower,
                  epsilon_rdp=_finite(eps_rdp), epsilon_rdp_opacus=_finite(eps_opacus), gdp=gdp_report,
                  mu_at_floor=mu_at_floor, fpr=fpr, tpr=tpr, advantage=advantage, prior=prior, bayes_success=bayes,
                  kappa=kappa, rero=gamma, rtm=rtm_reading, discretization=h, seconds=time.perf_counter() - start,
                  version=metadata.version("fdp"), warnings=warnings, curve=curve)


def _finite(epsilon: float | None) -> float | None:
    """``epsilon``, or None where it is infinite (or not computed)."""
    return epsilon if epsilon is not None and np.isfinite(epsilon) else None


def _levels(name: str, values: np.ndarray) -> np.ndarray:
    """The report's levels as a 1-d array: a number or a list, not a table."""
    if values.ndim > 1:
        raise ValueError(f"{name} must be a number or a 1-d list of numbers, got an array of shape {values.shape}")
    return np.atleast_1d(values) + 0.0  # -0.0 is 0


def _lower_ends(mechanism, gdp_report: GDPReport, curve, h, fpr, level, tpr) -> tuple[np.ndarray | None, float | None]:
    """The report's lower ends of the TPR at each FPR and of eps (None for Laplace noise and randomized response)."""
    if isinstance(mechanism, RandomizedResponse):  # an exact curve, read from below
        return np.minimum(mia.membership_bounds(curve, fpr, [0.5], side="lower")[0], tpr), gdp_report.epsilon
    if mechanism.noise != "gaussian":
        return None, None
    eps = gdp_report.epsilon  # a lower end of eps 0 is 0
    eps_lower = None if eps is None else Epsilon(eps, gdp_report.delta).lower(mechanism, discretization=h) if eps else 0.0
    return np.minimum(_tpr_lower(mechanism, gdp_report, h, fpr, level), tpr), eps_lower


def _tpr_lower(mechanism: Mechanism, gdp_report: GDPReport, h, fpr, level) -> np.ndarray:
    """Lower ends of the membership TPR of Gaussian noise at each FPR: the closed form at the lower end of mu for a
    full batch, else the optimistic lattice's symmetrised curve at the report's spacing, its FFT slack taken off (as
    :meth:`fdp.targets.TPR.lower` reads one FPR)."""
    if mechanism.sampling_rate == 1.0:
        return tradeoff.gaussian_power_bounds(gdp_report.mu_lower, fpr)[0]
    return pld.optimistic_curve(mechanism, discretization=h, level_min=min(_gdp.DPSGD_TAIL, level)).membership_lower(fpr)[0]


def _laplace_gdp_and_curve(mechanism: Mechanism, delta, discretization, tail, level):
    """The GDP report of ``steps``-fold Laplace noise (no subsampling) and its certified symmetrised curve."""
    epsilon = mechanism.steps / mechanism.noise_multiplier
    if discretization is None and epsilon <= _PURE_DP_EPSILON:
        # (steps / b)-DP: its curve, randomized response's, lies below the exact one and within eps of it, where the
        # lattice's loss range (2 eps) falls below its float resolution (a scale of 1e300 overflowed)
        curve = conversions.randomized_response(epsilon)
        mu = float(_gdp.mu_pure_dp(epsilon)) * ULPS_UP
        return GDPReport(mu=mu, regret=_gdp.gdp_regret(curve, mu), alpha_floor=0.0, delta=delta, discretization=None,
                         epsilon=_pure_dp_epsilon_at_delta(epsilon, delta), method=PURE_DP_METHOD, mu_lower=0.0), curve
    h, warnings = (1e-4, ()) if discretization is None else (discretization, ())
    one = lattice.lattice_points(mechanism.one_step, h)
    if discretization is None and one > lattice.MAX_ONE_STEP_POINTS:  # eps = 1/b in the hundreds: as for DP-SGD
        h *= one / lattice.MAX_ONE_STEP_POINTS
        if h > MAX_DISCRETIZATION:  # the loss 1/b per step spans more than the coarsest lattice's reach
            b = mechanism.noise_multiplier
            raise ValueError(f"{spelled('noise_multiplier')} {b!r} is too small for Laplace noise: its privacy loss of 1/b = "
                             f"{1 / b:.3g} per step needs a lattice spacing of {h:.3g}, above the largest, "
                             f"{MAX_DISCRETIZATION:g} (every reading is then vacuous: TPR 1 at every FPR)")
        warnings = (f"the lattice spacing was coarsened to {h:.3g} to keep one step below "
                    f"{lattice.MAX_ONE_STEP_POINTS:.3g} points (the curve stays pessimistic)",)
    curve = pld.certified_lower_curve(mechanism, discretization=h, direction="symmetrised", level_min=min(tail, level))
    mu, regret, floor = _capped_alg1(curve, tail, mechanism.full_batch_mu)
    if tradeoff.fixed_point(curve) == 0.0:
        warnings += (f"the certified curve is 0 at every level above alpha = 0 in double precision (too far from "
                     f"private for the lattice): mu* is at most sqrt(steps) times one Laplace step's GDP bound, "
                     f"{upper(mu)}",)
    eps = accountants.epsilon(mechanism, delta, discretization=h)
    if not np.isfinite(eps):
        warnings += (f"epsilon at delta {delta:g} is infinite for this lattice",)
    return GDPReport(mu=mu, regret=regret, alpha_floor=floor, epsilon=eps if np.isfinite(eps) else None, delta=delta,
                     discretization=h, method="lattice", warnings=warnings), curve






def _pure_dp_epsilon_at_delta(epsilon: float, delta: float) -> float:
    """eps at ``delta`` of randomized response with ``epsilon`` (exact), an upper bound for every eps-DP mechanism."""
    # the profile delta(e) = (e^eps - e^e) / (1 + e^eps) for e < eps, inverted (in logs: no overflow);
    # delta >= delta(0) = (e^eps - 1) / (e^eps + 1) = tanh(eps / 2) is met at eps 0
    shrink = delta * (1.0 + np.exp(-epsilon))
    # (moved up past its few roundings: an upper bound, as every epsilon the report gives)
    return 0.0 if delta >= np.tanh(0.5 * epsilon) else max(0.0, float(epsilon + np.log1p(-shrink)) * ULPS_UP)


#: The method of a reading taken off the eps-DP curve of Laplace noise with a tiny eps = steps / b.
PURE_DP_METHOD = "closed form (eps-DP)"


def _gaussian_rero(mu, kappa) -> Estimate:
    """The ReRo bound of the mu-GDP mechanism in closed form, ``Phi(Phi^{-1}(kappa) + mu)``, as a certified interval
    (``mu`` an upper bound on the mechanism's mu, within a few ulps of it; inf for one beyond double precision, whose
    bound is 1 to every digit: ``Phi^{-1}(kappa) + mu`` exceeds 9 at every kappa)."""
    if math.isinf(mu):
        return Estimate(value=np.ones_like(kappa), method="closed form", certified=True,
                        lower=np.full_like(kappa, np.nextafter(1.0, 0.0)), upper=np.ones_like(kappa))
    _, upper = tradeoff.gaussian_power_bounds(mu, kappa)
    lower = np.maximum(tradeoff.gaussian_power_bounds(mu * ULPS_DOWN, kappa)[0], kappa)
    return Estimate(value=upper, method="closed form", certified=True, lower=lower, upper=upper)


def _randomized_response(epsilon, delta, kappa):
    """The readings of randomized response from its exact curve, the (eps, 0)-DP curve."""
    curve = conversions.randomized_response(epsilon)
    eps_at_delta = _pure_dp_epsilon_at_delta(epsilon, delta)
    closed = mechanism_gdp.mu_and_regret_closed_form("randomized-response", epsilon)
    mu = closed.mu
    gdp_report = GDPReport(mu=mu, regret=closed.regret, alpha_floor=0.0, epsilon=eps_at_delta, delta=delta,
                           discretization=None, method="closed form", mu_lower=closed.mu_lower)
    gamma = _rero.gamma(curve, kappa)  # e^eps kappa (or 1 - e^-eps (1 - kappa)): a few roundings, moved outward
    # mu at a floor: the closed form wherever the curve's corner alpha = 1 / (1 + e^eps) lies above the floor (the
    # maximum of eq. 21 is there); Alg. 1 on the curve above the floor otherwise, moved up past its rounding
    corner = float(np.exp(-np.logaddexp(0.0, epsilon)))
    mu_at_floor = {floor: mu if corner >= floor else _gdp.mu_star(curve, tail=_gdp.alpha_floor(curve, floor)) * ULPS_UP for floor in REPORT_FLOORS}
    return gdp_report, curve, mu_at_floor, \
        Estimate(value=gamma, method="closed form", certified=True, lower=np.maximum(gamma * ULPS_DOWN, kappa),
                 upper=np.minimum(gamma * ULPS_UP, 1.0))
