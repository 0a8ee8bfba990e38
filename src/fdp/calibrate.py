"""Noise calibration: the noise multiplier (or the number of steps) that meets a target risk.

:func:`noise_multiplier_for` inverts :func:`fdp.accounting.accountants.epsilon` by bisection on ``log(noise)``: the
returned noise satisfies ``epsilon(noise) <= eps``, and ``noise / (1 + rtol)`` does not.
:func:`noise_for_risk` and :func:`steps_for_risk` do the same for (eps, delta), mu*, a membership or a ReRo
target, certified.
"""

from __future__ import annotations

import functools
import math
import sys
import time
import warnings
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from tqdm import tqdm

from .accounting import accountants, lattice, mechanism_gdp, pld, rtm
from .accounting.privacy_loss import dpsgd as _dpsgd  # DP-SGD at each noise the search tries
from .curves import gdp, mia, tradeoff
from .diagnostics import FDPWarning, warns
from .formatting import ULPS_DOWN
from .intervals import Interval
from .result import Result
from .validation import (
    SUBSAMPLED_NOISE_RANGE,
    ResourceLimitError,
    check_array_in,
    check_discretization,
    check_open_unit,
    check_positive,
    check_positive_int,
    check_sampling_rate,
)

__all__ = ["noise_multiplier_for", "TARGETS", "level_keyword", "check_risk_target", "Calibration", "noise_for_risk",
           "steps_for_risk", "MIN_RTOL", "sandwich_noise"]

def noise_multiplier_for(
    epsilon: float,
    delta: float,
    sampling_rate: float,
    steps: int,
    accountant: Literal["pld", "rdp"] = "pld",
    discretization: float = 1e-4,
    rtol: float = 1e-4,
) -> float:
    """The smallest noise multiplier (to relative accuracy ``rtol``) whose :func:`fdp.accounting.accountants.epsilon` at ``delta``
    is at most ``epsilon``.

    Parameters
    ----------
    epsilon : float
        Target, > 0.
    delta : float
        In (0, 1).
    sampling_rate : float
        Poisson rate in (0, 1].
    steps : int
        >= 1.
    accountant : {"pld", "rdp"}, default "pld"
    discretization : float, default 1e-4
        PLD lattice spacing.
    rtol : float, default 1e-4
        Relative accuracy of the answer (bisection in log sigma).

    Returns
    -------
    float

    References
    ----------
    Hayes et al. (2023) Fig. 5a and Sec. 4.3.

    Examples
    --------
    >>> round(noise_multiplier_for(1.0, 1e-5, 1.0, 1, rtol=1e-6), 4)  # one Gaussian step at (1, 1e-5)
    3.7306
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_open_unit("delta", delta)
    sampling_rate = check_sampling_rate("sampling_rate", sampling_rate)
    steps = check_positive_int("steps", steps)
    accountants.check_accountant(accountant)
    rtol = _check_rtol(rtol)

    @functools.lru_cache(maxsize=None)  # the bracket search asks for its end points again
    def eps_of(noise):
        if accountant == "pld" and sampling_rate == 1.0:  # exactly sqrt(steps)/noise-GDP: the exact eps
            return _full_batch_risk("epsilon", noise, steps, delta, None)
        if accountant == "pld":  # falls back on the RDP accountant where the PLD's is infinite (delta < ~1e-15)
            return _epsilon_certified(noise, sampling_rate, steps, delta, discretization)
        return accountants.epsilon(_dpsgd(noise, sampling_rate, steps), delta, accountant, discretization)

    lo, hi = 0.5, 2.0
    while eps_of(hi) > epsilon:  # hi must satisfy the target
        lo, hi = hi, 2.0 * hi
        if hi > _largest_noise(sampling_rate):
            raise ValueError(f"no noise multiplier below {_largest_noise(sampling_rate):g} reaches epsilon={epsilon} at "
                             f"delta={delta}")
    while eps_of(lo) <= epsilon:  # lo must violate it
        lo, hi = lo / 2.0, lo
        if lo < 1e-3:
            raise ValueError(f"epsilon={epsilon} is reached by any noise multiplier above 1e-3 (delta={delta})")
    return _shrink_bracket(lambda x: math.log(eps_of(math.exp(x)) / epsilon), math.log(lo), math.log(hi), math.log1p(rtol))


def _check_rtol(rtol) -> float:
    """The relative accuracy of a noise search: at least :data:`MIN_RTOL` and below 1."""
    rtol = check_positive("rtol", rtol)
    if rtol >= 1.0:
        raise ValueError(f"rtol must be below 1 (a relative accuracy of the noise: 1e-3 finds it to 0.1 %), got {rtol!r}")
    if rtol < MIN_RTOL:
        raise ValueError(f"rtol must be at least {MIN_RTOL:g} (the search works in log noise, in double precision), "
                         f"got {rtol!r}")
    return rtol


def _shrink_bracket(g, a: float, b: float, width: float) -> float:
    """``exp(b)`` for a bracket ``a < b`` with ``g(a) > 0 >= g(b)`` shrunk below ``width``.

    ``g`` is the log of eps(noise) / target as a function of log noise: nearly linear, so false
    position with the Illinois modification (halve the weight of an end point kept twice) needs a
    handful of evaluations where bisection needs about ten.  A trial point is kept at least
    ``width / 2`` inside the bracket, so that once the root is located the bracket closes around it.
    The invariant of bisection holds throughout: the returned noise meets the target, and a noise
    smaller by the factor ``exp(width)`` does not.
    """
    ga, gb = g(a), g(b)
    kept = 0  # +1: a kept in a row, -1: b kept in a row
    for step in range(_MAX_SEARCH_STEPS):
        if b - a <= width:
            return math.exp(b)
        # every third step a bisection: a risk that moves in steps (a TPR at FPR 5e-324 takes a few subnormal values)
        # stalls false position at one end, and the bracket must still halve
        x = b - gb * (b - a) / (gb - ga) if ga != gb and step % 3 != 2 else 0.5 * (a + b)
        x = min(max(x, a + 0.5 * width), b - 0.5 * width)
        gx = g(x)
        if gx <= 0.0:
            b, gb = x, gx
            kept = kept + 1 if kept > 0 else 1
            if kept >= 2:
                ga *= 0.5
        else:
            a, ga = x, gx
            kept = kept - 1 if kept < 0 else -1
            if kept <= -2:
                gb *= 0.5
    raise ValueError(f"the noise search did not close its bracket in {_MAX_SEARCH_STEPS} steps: use a larger rtol")


#: Most evaluations of the false-position search (it needs about ten; bisection would need 50 at rtol 1e-12).
_MAX_SEARCH_STEPS = 200
#: The smallest rtol: the search's bracket in log noise must stay well above one ulp of it.
MIN_RTOL = 1e-12
#: The largest noise multiplier a noise search tries on a subsampled lattice (full batches: any float, closed forms).
MAX_NOISE = 1e8


def _largest_noise(rate: float) -> float:
    """The largest noise a search tries: :data:`MAX_NOISE` for a subsampled lattice, any float for full batches."""
    return MAX_NOISE if rate < 1.0 else 1e300


#: Risk targets of :func:`noise_for_risk` and :func:`steps_for_risk`: eps at delta (PLD accountant), mu* (certified,
#: GDP paper Alg. 1), the membership-inference advantage and TPR at an FPR, the ReRo bound gamma at a prior kappa,
#: the TPR at an FPR of the relaxed-threat-model adversary.
TARGETS = ("epsilon", "mu", "advantage", "tpr", "rero", "rtm_tpr")


@dataclass(frozen=True, kw_only=True)
class Calibration(Result):
    """A noise multiplier (or a number of steps) calibrated to a risk target, and what the target reads there.

    Attributes
    ----------
    noise_multiplier : float
        The noise.  From :func:`noise_for_risk`: its certified (pessimistic) risk meets the target,
        ``noise_multiplier / (1 + rtol)``'s does not.
    target : str
        One of :data:`TARGETS`.
    value : float
        The target's value.
    achieved : float
        The certified upper bound on the risk at ``noise_multiplier`` (at most ``value``).
    achieved_lower : float or None
        A lower bound on it (from the optimistic curve; for ``"epsilon"``, from ``dp_accounting``'s optimistic
        PLD): the exact risk lies in ``[achieved_lower, achieved]``.
    sampling_rate : float
    steps : int
        The steps.  From :func:`steps_for_risk`: the certified risk of ``steps`` meets the target, that of
        ``steps + 1`` does not.
    discretization : float
        Loss lattice spacing at the answer.
    rtol : float
        Relative accuracy of the noise (0 for :func:`steps_for_risk`, whose answer is exact).
    evaluations : int
        Risk evaluations of the search.
    seconds : float
    noise_lower : float or None
        From :func:`noise_for_risk`: a noise whose *lower* bound on the risk still exceeds the target,
        so the exact smallest noise that meets it lies in ``(noise_lower, noise_multiplier]`` -- how much the
        noise could be lowered at most (None from :func:`steps_for_risk`, or when even the noise 1e-2 is not
        excluded).
    warnings : tuple of str
        What a reader must know: a wide interval ``[achieved_lower, achieved]``, a fallback accountant, a target
        met at every noise.
    """

    noise_multiplier: float
    target: str
    value: float
    achieved: float
    achieved_lower: float | None
    sampling_rate: float
    steps: int
    discretization: float
    rtol: float
    evaluations: int
    seconds: float
    noise_lower: float | None = None
    warnings: tuple[str, ...] = ()

    @property
    def achieved_interval(self) -> Interval:
        """``Interval(achieved_lower, achieved)``: where the exact risk at the noise found lies; its lower end is 0 (every
        risk here is non-negative) where no lower bound is certified (``achieved_lower`` None), never ``achieved``."""
        return Interval(0.0 if self.achieved_lower is None else self.achieved_lower, self.achieved)



def _rtm_curve(noise, rate, steps, h, dimension, pessimistic):
    """The symmetrised RTM curve of DP-SGD (reading (a)) on the pessimistic or the optimistic lattice."""
    j = rtm.tensor_composition("gaussian", 1.0 / noise, rate, steps, dimension, discretization=h,
                               pessimistic=pessimistic)
    return tradeoff.symmetrise(j)


def _full_batch_risk(target, noise, steps, delta, level, upper=True):
    """The exact risk of ``steps`` full-batch Gaussian steps, exactly ``sqrt(steps) / noise``-GDP, by its closed form
    moved past its float error: up (an upper bound) or, with ``upper=False``, down (a lower bound)."""
    mu = _dpsgd(noise, 1.0, steps).full_batch_mu  # at most a few ulps above sqrt(steps) / noise
    if not upper:
        mu *= ULPS_DOWN
    if target == "mu":
        return mu
    if target == "epsilon":
        eps = float(gdp.eps_from_mu_delta(mu, delta))  # at or just above its root (a couple of ulps)
        return eps if upper else eps * ULPS_DOWN
    if target == "advantage":  # 2 Phi(mu / 2) - 1, without cancellation
        advantage = mia.gaussian_membership_bounds(mu, [0.0], [0.5])[1]
        return advantage if upper else math.erf(mu / (2.0 * math.sqrt(2.0))) * ULPS_DOWN
    # the TPR at an FPR, gamma at a prior: the same power of the symmetric curve G_mu
    low, up = tradeoff.gaussian_power_bounds(mu, level)
    return float(max((up if upper else low)[0], level))




def _log_ratio(risk: float, value: float) -> float:
    """``log(risk / value)`` clipped to [-69, 69] (a risk of 0 lies far below any target); positive exactly when
    ``risk > value`` (the comparison decides, not the rounding of the logarithm: mu 1.000000000000001e-6 against a
    target of 1e-6 gave a difference of logs of 0)."""
    if risk <= 0.0:
        return -69.0
    ratio = risk / value
    g = math.log(ratio) if 0.0 < ratio < math.inf else math.log(risk) - math.log(value)  # in logs where it under/overflows
    g = max(g, 1e-300) if risk > value else min(g, 0.0)
    return min(max(g, -69.0), 69.0)


def _level_min(level) -> float:
    """The smallest level a lattice curve is built down to: 1e-10, or a smaller FPR or prior asked for."""
    return gdp.DPSGD_TAIL if level is None else min(gdp.DPSGD_TAIL, level)


def _risk(target, noise, rate, steps, h, delta, level, dimension, value=None, use_lattice=True, failed=None):
    """The certified upper bound on the risk ``target`` of DP-SGD at ``noise`` (``level``: FPR or kappa): the lattice's,
    capped by the full batch's closed form (subsampling only lowers a risk, and the RTM adversary's TPR is at most the
    DP adversary's, RTM paper Lemma 6), which is the tighter one where the lattice cannot resolve a tiny FPR or
    prior (a TPR target at FPR 1e-20 otherwise needed 11 times the noise).  With the target ``value``, the lattice is
    not built where the closed form already meets it (the decision is the same, and a lattice at FPR 1e-300 costs
    11 s to read 6.6e-11), nor with ``use_lattice=False``; ``failed(message)`` hears of a lattice that could not be
    built or read."""
    full_batch = _full_batch_risk("tpr" if target == "rtm_tpr" else target, noise, steps, delta, level)
    if (rate == 1.0 and target != "rtm_tpr") or not use_lattice or (value is not None and full_batch <= value):
        return full_batch
    try:
        return min(_lattice_risk(target, noise, rate, steps, h, delta, level, dimension), full_batch)
    except ValueError as exc:  # the lattice cannot be built or read here (3000 steps at FPR 1e-300, a prior of
        if failed is not None:  # 5e-324): the closed form alone, still an upper bound
            failed(str(exc))
        return full_batch


def _lattice_risk(target, noise, rate, steps, h, delta, level, dimension):
    """The certified upper bound on the risk ``target`` read off the pessimistic lattice."""
    if target == "rtm_tpr":
        return float(mia.membership_bounds(_rtm_curve(noise, rate, steps, h, dimension, True), [level], [0.5])[0][0])
    if target == "epsilon":
        return _epsilon_certified(noise, rate, steps, delta, h)
    if target == "mu":
        return mechanism_gdp.mu_and_regret_lattice(_dpsgd(noise, rate, steps), discretization=h).mu
    if target == "rero":  # the power, without the cancellation of 1 - f(kappa) at tiny kappa
        curve = pld.certified_lower_curve(_dpsgd(noise, rate, steps), discretization=h,
                                          level_min=_level_min(level))
        return float(max(curve.power(level), level))
    curve = pld.certified_lower_curve(_dpsgd(noise, rate, steps), discretization=h,
                                      direction="symmetrised", level_min=_level_min(level))
    tpr, advantage, _ = mia.membership_bounds(curve, [0.0 if level is None else level], [0.5])
    return advantage if target == "advantage" else float(tpr[0])


def _epsilon_certified(noise, rate, steps, delta, h) -> float:
    """eps at ``delta`` from the PLD accountant, or from the RDP accountant where the PLD's truncated tails make it
    infinite (delta below about 1e-15); both are upper bounds."""
    sgm = _dpsgd(noise, rate, steps)
    eps = accountants.epsilon(sgm, delta, "pld", h)
    return eps if math.isfinite(eps) else accountants.epsilon(sgm, delta, "rdp", h)


def _risk_lower(target, noise, rate, steps, h, level, dimension, delta=None):
    """A lower bound on the risk at ``noise``: from the bracket's optimistic curve, for epsilon from the optimistic PLD."""
    if rate == 1.0 and target != "rtm_tpr":  # exact, moved down past its rounding
        return _full_batch_risk(target, noise, steps, delta, level, upper=False)
    if target == "epsilon":  # losses rounded down (first order in steps * h: ten times finer), a dominated pair
        sgm = _dpsgd(noise, rate, steps)
        dist = pld.mechanism_pld(sgm, discretization=_affordable(sgm, h / 10), pessimistic=False)
        eps = pld.epsilon_for_delta(dist, delta)
        return eps if math.isfinite(eps) else None  # delta below the PLD's truncated tails: no lower bound
    if target == "rtm_tpr":  # the optimistic RTM lattice is first order in steps * h: finer, as in tensor_bracket
        above = _rtm_curve(noise, rate, steps, h / rtm.OPTIMISTIC_REFINEMENT, dimension, False)
        return float(mia.membership_bounds(above, [level], [0.5], side="lower")[0][0])
    if target == "rero":
        bracket = pld.tradeoff_bracket(_dpsgd(noise, rate, steps), discretization=h, level_min=level)
        return float(bracket.gamma(level)[0])
    bracket = pld.optimistic_curve(_dpsgd(noise, rate, steps), discretization=h,
                                   level_min=1e-10)  # the upper side
    if target == "mu":
        return gdp.mu_star(bracket.upper, tail=1e-10)  # eq. 21 is symmetric: the add curve gives C's mu*
    above = tradeoff.symmetrise(bracket.upper)  # on or above the exact symmetrised curve
    tpr, advantage, _ = mia.membership_bounds(above, [0.0 if level is None else level], [0.5], side="lower")
    return max(0.0, (advantage if target == "advantage" else float(tpr[0])) - bracket.slack)


def level_keyword(target: str) -> str | None:
    """The keyword of :func:`noise_for_risk` and :func:`steps_for_risk` that holds a target's level: ``"fpr"`` for
    ``"tpr"`` and ``"rtm_tpr"``, ``"kappa"`` for ``"rero"``, None for the targets without one.

    Parameters
    ----------
    target : str
        One of :data:`TARGETS`.

    Returns
    -------
    str or None

    Examples
    --------
    >>> level_keyword("rero"), level_keyword("mu")
    ('kappa', None)
    """
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    return "kappa" if target == "rero" else "fpr" if target in ("tpr", "rtm_tpr") else None


def check_risk_target(target: str, value: float, level: float | None = None, *, delta: float = 1e-5, dimension: int = 1,
                      name: str | None = None) -> None:
    """Refuse a risk target that :func:`noise_for_risk` and :func:`steps_for_risk` would refuse, before any work.

    Parameters
    ----------
    target : str
        One of :data:`TARGETS`.
    value : float
        The target's value.
    level : float, optional
        Its FPR (``"tpr"``, ``"rtm_tpr"``) or prior (``"rero"``); see :func:`level_keyword`.
    delta : float, default 1e-5
        The delta of ``"epsilon"``.
    dimension : int, default 1
        The dimension of ``"rtm_tpr"``.
    name : str, optional
        Where the target comes from, put before the message (``"calibration_targets[1]"``).

    Raises
    ------
    ValueError

    Examples
    --------
    >>> check_risk_target("advantage", 2.0, name="targets[0]")
    Traceback (most recent call last):
    ...
    ValueError: targets[0]: advantage must lie in (0, 1), got 2.0
    """
    try:
        keyword = level_keyword(target)
        levels = {"fpr": None, "kappa": None} | ({keyword: level} if keyword else {})
        if keyword is None and level is not None:
            levels["fpr"] = level  # refused below: this target has no level
        _check_target(target, value, delta, levels["fpr"], levels["kappa"], dimension)
    except ValueError as exc:
        if name:
            raise ValueError(f"{name}: {exc}") from None
        raise


def _check_target(target, value, delta, fpr, kappa, dimension):
    """The validated ``(value, delta, level, dimension)`` of a risk target (``level``: its FPR or prior)."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    if fpr is not None and target not in ("tpr", "rtm_tpr"):
        raise ValueError(f"fpr applies to the targets 'tpr' and 'rtm_tpr', not to {target!r}")
    if kappa is not None and target != "rero":
        raise ValueError(f"kappa applies to the target 'rero', not to {target!r}")
    level = None
    if target in ("epsilon", "mu"):
        value = check_positive(target, value)
        delta = check_open_unit("delta", delta)
    elif target == "advantage":
        value = check_open_unit("advantage", value)
    else:
        name = level_keyword(target)
        level = check_open_unit(name, kappa if target == "rero" else fpr)
        value = check_open_unit(target, value)
        if value <= level:
            raise ValueError(f"{target} must exceed {name} (every mechanism reaches {name} = {level:g}), got {value!r}")
    return value, delta, level, check_positive_int("dimension", dimension)


def _spacing(target, discretization, noise, rate, steps):
    """The lattice spacing of a risk evaluation: the caller's, else 1e-4 (RTM) or the PLD's default; for epsilon
    (dp_accounting's PLD, which visits each point of one step in Python) coarsened to keep one step below
    :data:`EPSILON_MAX_POINTS` (a coarser lattice is still pessimistic: at noise 0.35, rate 1e-6 and spacing 1e-5
    one step had 1.9 million points and took 16 s)."""
    if discretization is not None:
        return discretization
    if target == "rtm_tpr":
        return 1e-4
    sgm = _dpsgd(noise, rate, steps)
    h = pld.default_discretization(sgm)
    return _affordable(sgm, h) if target == "epsilon" else h


def _affordable(sgm, h: float) -> float:
    """``h``, or the coarser spacing at which one step of ``sgm`` has :data:`EPSILON_MAX_POINTS` lattice points."""
    return h * max(lattice.lattice_points(sgm.one_step, h) / EPSILON_MAX_POINTS, 1.0)


#: The most points of one step that an epsilon evaluation's default spacing allows.
EPSILON_MAX_POINTS = 200_000


@warns
def noise_for_risk(target: str, value: float, sampling_rate: float, steps: int, *, delta: float = 1e-5,
                   fpr: float | None = None, kappa: float | None = None, discretization: float | None = None,
                   rtol: float = 1e-3, dimension: int = 1, progress: bool = False) -> Calibration:
    """The smallest noise multiplier (to relative accuracy ``rtol``) whose certified risk meets a target.

    The risk of ``steps``-fold Poisson-subsampled Gaussian noise (DP-SGD) is read pessimistically: eps at
    ``delta`` from the PLD accountant (``"epsilon"``), the certified mu* (``"mu"``), the upper bounds on the
    membership-inference advantage and on the TPR at ``fpr`` from the certified symmetrised curve
    (``"advantage"``, ``"tpr"``), the upper end of the certified ReRo bracket at ``kappa`` (``"rero"``), the
    TPR at ``fpr`` of the relaxed-threat-model adversary from the pessimistic RTM lattice
    (``"rtm_tpr"``, :func:`fdp.accounting.rtm.composition.tensor_composition` in dimension ``dimension``, symmetrised); each
    falls as the noise grows, and the search (false position in log noise) keeps a noise that meets the target
    and one that does not.  The answer also carries a lower bound on the risk it reaches (from the optimistic
    curve) and ``noise_lower``; where the optimistic side cannot be built (it is ten times finer for epsilon and
    the RTM, and may exceed the lattice limits) both are None.

    Parameters
    ----------
    target : {"epsilon", "mu", "advantage", "tpr", "rero", "rtm_tpr"}
    value : float
        The target: eps > 0, mu > 0, advantage in (0, 1), TPR in (fpr, 1), gamma in (kappa, 1).
    sampling_rate : float
        Poisson rate in (0, 1].
    steps : int
        >= 1.
    delta : float, default 1e-5
        For ``"epsilon"``.
    fpr : float, optional
        For ``"tpr"`` and ``"rtm_tpr"``, in (0, 1).
    kappa : float, optional
        For ``"rero"``, in (0, 1).
    discretization : float, optional
        Loss lattice spacing (default :func:`fdp.accounting.pld.default_discretization` at each noise tried, then, if the
        PLD epsilon has not converged there at the noise found, the search again on the spacing of
        :func:`fdp.accounting.pld.converged_discretization`; 1e-4 for ``"rtm_tpr"``).
    rtol : float, default 1e-3
        Relative accuracy of the noise, at least :data:`MIN_RTOL`.
    dimension : int, default 1
        For ``"rtm_tpr"``: the dimension of the release (1 is the RTM paper's worst case).
    progress : bool, default False
        Show the evaluations on stderr (tqdm, from two seconds on), with the noise tried and its risk.

    Returns
    -------
    Calibration
        A target that Poisson sampling alone meets (the advantage at most ``s = 1 - (1 - rate)^steps``, the
        chance that the record takes part at all, the TPR at ``fpr`` at most ``fpr + s (1 - fpr)``, gamma
        likewise, epsilon 0 at a delta >= s) is met at every noise: the answer is the noise 0, with a warning.
        A target met down to the smallest noise a subsampled lattice resolves (1e-3) is answered with that noise
        and a warning.

    References
    ----------
    GDP paper (Gomez et al. 2025) Alg. 1; ReRo paper (Kaissis et al. 2023a) Thm. 1; Kulynych et al. (2024)
    (calibration to attack risk, riskcal); RTM paper (Kaissis et al. 2023b) App. 7.3.

    Examples
    --------
    >>> c = noise_for_risk("advantage", 0.1, 0.05, 100, discretization=1e-3, rtol=1e-2)
    >>> round(c.noise_multiplier, 1), bool(c.achieved <= 0.1)
    (2.1, True)
    """
    start = time.perf_counter()
    value, delta, level, dimension = _check_target(target, value, delta, fpr, kappa, dimension)
    sampling_rate = check_sampling_rate("sampling_rate", sampling_rate)
    steps = check_positive_int("steps", steps)
    rtol = _check_rtol(rtol)
    if discretization is not None:
        check_discretization("discretization", discretization)
    trivial = _sampling_bound(target, sampling_rate, steps, level, delta)
    if trivial is not None and value >= trivial:
        return Calibration(noise_multiplier=0.0, target=target, value=value, achieved=trivial, achieved_lower=None,
                           sampling_rate=sampling_rate, steps=steps, discretization=discretization or 0.0, rtol=rtol,
                           evaluations=0, seconds=time.perf_counter() - start, noise_lower=0.0,
                           warnings=(_met_by_sampling(target, trivial, sampling_rate, steps),))
    evaluations = 0
    bar = tqdm(desc=f"calibrate {target}", unit=" evaluations", disable=not progress, file=sys.stderr, delay=2.0)

    def spacing(noise):
        return _spacing(target, discretization, noise, sampling_rate, steps)

    # the largest noise at which the lattice missed the target (or could not be built): below it the lattice is not
    # tried again (its risk grows as the noise falls), and the closed form decides alone, as pessimistically
    lattice_misses_below = 0.0
    unevaluable = []  # (noise, message) of the probes whose risk could not be computed

    @functools.lru_cache(maxsize=None)  # the bracket search asks for its end points again
    def risk_at(noise):
        nonlocal evaluations, lattice_misses_below
        evaluations += 1
        try:
            use_lattice = noise > lattice_misses_below
            out = _risk(target, noise, sampling_rate, steps, spacing(noise), delta, level, dimension, value=value,
                        use_lattice=use_lattice, failed=lambda message: unevaluable.append((noise, message)))
            if use_lattice and out > value:
                lattice_misses_below = max(lattice_misses_below, noise)
        except ResourceLimitError:
            raise
        except ValueError as exc:  # a probe whose risk leaves double precision (eps 1e300 at noise 1e-150, an RTM
            out = math.inf         # statistic at mu = 64 in d = 1e6) counts as missing the target: the search moves
            unevaluable.append((noise, str(exc)))  # to larger noise
        bar.set_postfix_str(f"noise {noise:.6g}: {target} {out:.6g}", refresh=False)
        bar.update()
        return out

    lo, hi, factor = 0.5, 2.0, 2.0
    # hi must meet the target; doubling up to noise 1e4, then a factor that squares (1e300 is reached in 10 more steps)
    while risk_at(hi) > value:
        if hi >= _largest_noise(sampling_rate):
            # a subsampled lattice resolves a risk only down to what its spacing allows (mu* 3e-7 at rate 3e-7 needs
            # spacing 1e-9): say where the search stopped and what a finer lattice can do
            hint = "" if sampling_rate == 1.0 else (
                f"; at noise {lo:g} the certified {target} is still {risk_at(lo):.3g} at lattice spacing "
                f"{spacing(lo):.3g}, which resolves it no finer: a smaller discretization may reach the target")
            raise ValueError(f"no noise multiplier below {_largest_noise(sampling_rate):g} brings {target} to {value!r} "
                             f"at sampling rate {sampling_rate:g} and {steps} steps{hint}")
        lo, hi, factor = hi, min(factor * hi, _largest_noise(sampling_rate)), factor * factor if hi >= 1e4 else 2.0
    # full batches have closed forms at any noise; a subsampled lattice resolves noise down to 1e-3
    smallest = SUBSAMPLED_NOISE_RANGE[0] if sampling_rate < 1.0 else 1e-300
    met_everywhere = ()
    factor = 2.0
    while risk_at(lo) <= value:  # lo must miss it (halving down to 1e-4, then a factor that squares, as above)
        lo, hi, factor = max(lo / factor, smallest), lo, min(factor * factor, 1e100) if lo <= 1e-4 else 2.0
        if lo == hi:  # met down to the smallest noise resolved: that is the answer
            met_everywhere = (f"{target} = {value!r} is met at every noise multiplier from {smallest:g} up (the "
                              "smallest a subsampled lattice resolves)",)
            break
    if met_everywhere:
        noise = lo
    else:  # log(risk / target), clipped to +-69: a risk of 0 (epsilon at a large delta) is far below any target
        noise = _shrink_bracket(lambda x: _log_ratio(risk_at(math.exp(x)), value), math.log(lo), math.log(hi),
                                math.log1p(rtol))
    h = spacing(noise)
    default_h = pld.default_discretization(_dpsgd(noise, sampling_rate, steps))
    coarsened = discretization is None and target == "epsilon" and h > default_h  # by EPSILON_MAX_POINTS
    budget = (f"epsilon was read at lattice spacing {h:.3g}, coarser than the default {default_h:.3g}, to keep one "
              f"step below {EPSILON_MAX_POINTS:,} lattice points: it is an upper bound that may lie above the converged "
              f"epsilon, and the noise pessimistic; --discretization {default_h:.3g} (slower) may give a smaller noise",
              ) if coarsened else ()
    # the full batch's closed form meets the target at the noise found and the FPR or prior lies below the lattice's
    # usual floor (1e-10): no lattice decided it, and refining the lattice (two more searches, 45 s at FPR 1e-300)
    # rarely beats the closed form at such a level (where the spacing is what limits it, mu* 3e-7 at rate 3e-7, it does)
    below = [(x, m) for x, m in unevaluable if x < noise]
    if below:
        x, message = max(below)
        budget += (f"at noise {x:.4g} the lattice's {target} could not be computed ({message}): below the noise found "
                   "only the full batch's closed form was read, and a smaller noise may meet the target too",)
    closed = (sampling_rate < 1.0 and target != "rtm_tpr" and level is not None and level < gdp.DPSGD_TAIL
              and _full_batch_risk(target, noise, steps, delta, level) <= value)
    if closed and discretization is None:
        budget += (f"the full batch's closed form meets the target at this noise (subsampling only lowers the risk): "
                   f"the lattice at spacing {h:.3g} did not resolve {target} at this level; a smaller discretization "
                   "may find a smaller noise",)
    if discretization is None and target != "rtm_tpr" and sampling_rate < 1.0 and not coarsened and not closed:
        # the default spacing can be far from converged (36 % on epsilon at 10^7 steps): search again on the
        # coarsest spacing whose epsilon has converged at the noise found
        fine = pld.converged_discretization(_dpsgd(noise, sampling_rate, steps),
                                            delta=1e-5 if delta is None else delta)
        if fine.discretization < h:
            bar.close()
            again = noise_for_risk(target, value, sampling_rate, steps, delta=delta, fpr=fpr, kappa=kappa,
                                   discretization=fine.discretization, rtol=rtol, dimension=dimension,
                                   progress=progress)
            return replace(again, evaluations=again.evaluations + evaluations,
                           seconds=time.perf_counter() - start)

    @functools.lru_cache(maxsize=None)
    def lower_at(x):
        nonlocal evaluations
        evaluations += 1
        try:
            return _risk_lower(target, x, sampling_rate, steps, spacing(x), level, dimension, delta)
        except ValueError:  # the finer optimistic lattice does not fit, or the risk leaves double precision (eps
            return None     # beyond 1e300): no lower bound there

    # the exact risk is at least the lower bound and falls as the noise grows: every noise at or below one whose
    # lower bound misses the target misses it too, so the exact smallest noise lies above that one
    noise_lower, factor = None, 1.0 + rtol
    while not met_everywhere and lower_at(noise) is not None:
        low = lower_at(noise / factor)
        if low is None:
            break
        if low > value:
            noise_lower = noise / factor
            break
        factor *= factor  # the lower bound meets the target: step further down
        if noise / factor < smallest:
            break
    bar.close()
    achieved, achieved_lower = risk_at(noise), lower_at(noise)
    if discretization is None and target != "rtm_tpr" and sampling_rate < 1.0 and not coarsened and not closed:
        # the risk reached may not be resolved at the automatic spacing (a tiny advantage at spacing 1e-5 read
        # [0, 6e-6], and the noise came out 200 times larger than a finer lattice needs): search again on spacings
        # 16 times finer while the interval stays wider than REFINE_RELATIVE and the lattices fit; a finer lattice
        # only lowers a certified answer, and the smallest noise found is kept
        best, finer, reached, reached_lower = None, h, achieved, achieved_lower  # the last search's risk interval
        for _ in range(3):
            width = (reached - reached_lower) / reached if reached_lower is not None and reached > 0.0 else 0.0
            finer /= 16.0
            if width <= REFINE_RELATIVE or not pld.affordable(_dpsgd(noise, sampling_rate, steps), finer):
                break
            try:
                again = noise_for_risk(target, value, sampling_rate, steps, delta=delta, fpr=fpr, kappa=kappa,
                                       discretization=finer, rtol=rtol, dimension=dimension, progress=progress)
            except (ValueError, ResourceLimitError):
                break
            evaluations += again.evaluations
            if again.noise_multiplier < noise:  # adopted whole: its noise, spacing and risk interval belong together
                best, noise = again, again.noise_multiplier
            reached, reached_lower = again.achieved, again.achieved_lower
        if best is not None:
            return replace(best, evaluations=evaluations, seconds=time.perf_counter() - start)
    return Calibration(noise_multiplier=noise, target=target, value=value, achieved=achieved,
                       achieved_lower=achieved_lower, sampling_rate=sampling_rate, steps=steps, discretization=h, rtol=rtol,
                       evaluations=evaluations, seconds=time.perf_counter() - start, noise_lower=noise_lower,
                       warnings=met_everywhere + budget + _warnings(target, sampling_rate, steps, noise, delta, h,
                                                                    achieved, achieved_lower))


@warns
def steps_for_risk(target: str, value: float, noise_multiplier: float, sampling_rate: float, *, delta: float = 1e-5,
                   fpr: float | None = None, kappa: float | None = None, discretization: float | None = None,
                   dimension: int = 1, max_steps: int | None = None) -> Calibration:
    """The largest number of DP-SGD steps whose certified risk meets a target, at a fixed noise multiplier.

    The dual of :func:`noise_for_risk` (same targets, same pessimistic readings): every risk grows with the
    number of steps, so doubling from one step brackets the answer and bisection on the integers finds it
    exactly.  The answer also carries a lower bound on the risk it reaches (None where the optimistic side
    cannot be built).

    Parameters
    ----------
    target : {"epsilon", "mu", "advantage", "tpr", "rero", "rtm_tpr"}
    value : float
        The target, as in :func:`noise_for_risk`.
    noise_multiplier : float
        > 0.
    sampling_rate : float
        Poisson rate in (0, 1].
    delta, fpr, kappa, discretization, dimension
        As in :func:`noise_for_risk`.
    max_steps : int, optional
        The search stops here: a target still met at ``max_steps`` steps is an error.  Default 2^53 for full
        batches (closed forms) and 10^6 otherwise (the lattice grows with the number of steps).

    Returns
    -------
    Calibration
        With ``steps`` the answer and ``rtol`` 0.

    Examples
    --------
    >>> c = steps_for_risk("advantage", 0.1, 2.0, 0.05, discretization=1e-3)
    >>> c.steps, bool(c.achieved <= 0.1)
    (91, True)
    """
    start = time.perf_counter()
    value, delta, level, dimension = _check_target(target, value, delta, fpr, kappa, dimension)
    noise = check_positive("noise_multiplier", noise_multiplier)
    sampling_rate = check_sampling_rate("sampling_rate", sampling_rate)
    if max_steps is None:
        max_steps = 2**53 if sampling_rate == 1.0 and target != "rtm_tpr" else 1_000_000
    max_steps = check_positive_int("max_steps", max_steps)
    if discretization is not None:
        check_discretization("discretization", discretization)

    @functools.lru_cache(maxsize=None)
    def risk_at(steps):
        h = _spacing(target, discretization, noise, sampling_rate, steps)
        return _risk(target, noise, sampling_rate, steps, h, delta, level, dimension)

    if risk_at(1) > value:
        raise ValueError(f"{target} = {value!r} is not met even by one step at noise multiplier {noise:g} and sampling "
                         f"rate {sampling_rate:g}")
    good, bad = 1, 2  # risk_at(good) meets the target; bad is the next candidate
    while risk_at(bad) <= value:
        if bad >= max_steps:
            raise ValueError(f"{target} = {value!r} is still met by {max_steps} steps, the most the search tries, at "
                             f"noise multiplier {noise:g} and sampling rate {sampling_rate:g}")
        good, bad = bad, min(2 * bad, max_steps)
    while bad - good > 1:  # risk_at(good) <= value < risk_at(bad)
        mid = (good + bad) // 2
        good, bad = (mid, bad) if risk_at(mid) <= value else (good, mid)
    h = _spacing(target, discretization, noise, sampling_rate, good)
    try:
        lower = _risk_lower(target, noise, sampling_rate, good, h, level, dimension, delta)
    except ResourceLimitError:  # the finer optimistic lattice does not fit
        lower = None
    return Calibration(noise_multiplier=noise, target=target, value=value, achieved=risk_at(good), achieved_lower=lower,
                       sampling_rate=sampling_rate, steps=good, discretization=h, rtol=0.0,
                       evaluations=risk_at.cache_info().misses + 1, seconds=time.perf_counter() - start, noise_lower=None,
                       warnings=_warnings(target, sampling_rate, good, noise, delta, h, risk_at(good), lower))


def _sampling_bound(target, rate, steps, level, delta) -> float | None:
    """What Poisson sampling alone guarantees at every noise: the target record takes part in no step with
    probability ``(1 - rate)^steps``, and then the two outputs have one law, so ``f >= (1 - rate)^steps (1 - alpha)``
    in both directions: the advantage is at most ``s = 1 - (1 - rate)^steps``, the TPR at ``level`` (gamma at a
    prior) at most ``level + s (1 - level)``, and the mechanism is (0, s)-DP (epsilon 0 at any delta >= s)."""
    if rate == 1.0 or target == "mu":
        return None
    s = -math.expm1(steps * math.log1p(-rate))
    if target == "epsilon":
        return 0.0 if delta >= s else None
    return s if target == "advantage" else level + s * (1.0 - level)


def _met_by_sampling(target, bound, rate, steps) -> str:
    return (f"the target is met at every noise multiplier: Poisson sampling at rate {rate:g} over {steps} steps alone "
            f"bounds {target} by {bound:.6g}")


def _warnings(target, rate, steps, noise, delta, h, achieved, achieved_lower) -> tuple[str, ...]:
    """What a reader of a calibration must know: a fallback accountant, a wide interval for the risk reached."""
    out = []
    if (target == "epsilon" and rate < 1.0
            and not math.isfinite(accountants.epsilon(_dpsgd(noise, rate, steps), delta, "pld", h))):
        out.append(f"the PLD accountant's epsilon is infinite at delta {delta:g} (its truncated tails): the RDP "
                   "accountant's epsilon was used")
    if achieved_lower is not None and achieved > 0.0 and (achieved - achieved_lower) / achieved > WARN_RELATIVE:
        out.append(f"the risk reached lies in [{achieved_lower:.6g}, {achieved:.6g}] "
                   f"({100 * (achieved - achieved_lower) / achieved:.3g} % wide): the noise is pessimistic by up to "
                   "that much; " + ("a smaller discretization narrows it" if rate < 1.0 else
                                    "the closed form's bounds are this far apart at this level (floats below 1e-308 "
                                    "carry few digits)"))
    return tuple(out)


#: Relative width of the interval for the risk reached above which a calibration carries a warning.
WARN_RELATIVE = 0.01
#: ... and above which the automatic spacing is refined (16 times, while the lattices fit) and the search run again.
REFINE_RELATIVE = 0.5


_SANDWICH_WIDENINGS = 6  # a bracket's failing end moves out by 4 at most this often


def sandwich_noise(
    target: tradeoff.TradeOffCurve,
    sampling_rate: float,
    steps: int,
    dimension: int = 1,
    reading: str = "tensor",
    *,
    grid=None,
    bounds=(0.05, 100.0),
    rtol: float = 1e-3,
    **options,
) -> tuple[float, float]:
    """Noise multipliers whose RTM curves sandwich a target curve (App. 7.3, after Zheng et al. 2020).

    For the N-fold SGM with sensitivity 1 and noise multiplier sigma, ``J(sigma)`` is
    :func:`fdp.accounting.rtm.composition.composed_subsampled_gaussian` at ``mu = 1 / sigma``; it moves towards ``1 - alpha`` as
    sigma grows.  Returns ``(sigma_upper, sigma_lower)``: the smallest sigma with
    ``J(sigma) >= target`` on ``grid`` (lambda-DR with lambda = target, Def. 3; the "more
    pessimistic" choice of the paper) and the largest sigma with ``J(sigma) <= target``, each by
    bisection on log sigma in ``bounds`` to relative accuracy ``rtol`` (the returned values satisfy
    their condition; the second one is checked for alpha > 0).  Where an end of ``bounds`` does not satisfy its
    condition, it moves out by a factor 4 (at most six times) with an :class:`~fdp.diagnostics.FDPWarning`.
    ``grid`` defaults to :func:`fdp.curves.tradeoff.default_grid` (401 points).

    Parameters
    ----------
    target : TradeOffCurve
        lambda.
    sampling_rate : float
    steps : int
    dimension : int, default 1
    reading : {"tensor", "sum"}, default "tensor"
    grid : array_like, optional
    bounds : (float, float), default (0.05, 100)
        The bracket of sigma.
    rtol : float, default 1e-3
    **options
        Passed to :func:`fdp.accounting.rtm.composition.composed_curve`.

    Returns
    -------
    (sigma_upper, sigma_lower) : tuple of float

    References
    ----------
    RTM paper (Kaissis et al. 2023b) App. 7.3, Def. 3; Zheng et al. (2020).
    """
    sampling_rate = check_sampling_rate("sampling_rate", sampling_rate)
    steps = check_positive_int("steps", steps)
    d = check_positive_int("dimension", dimension)  # d in the RTM paper
    rtol = check_positive("rtol", rtol)
    if reading not in rtm.READINGS:
        raise ValueError(f"reading must be one of {rtm.READINGS}, got {reading!r}")
    lo_b, hi_b = (check_positive("bounds", float(b)) for b in bounds)
    if lo_b >= hi_b:
        raise ValueError(f"bounds must be increasing, got {bounds!r}")
    grid = tradeoff.default_grid(401) if grid is None else check_array_in("grid", grid, 0.0, 1.0)
    ref = np.asarray(target(grid), dtype=float)

    def below(sigma):  # the largest excess of J over the target
        j = rtm.composed_curve(1.0 / sigma, sampling_rate, steps, d, reading, **options)
        # the chords lie on or above the exact J: J_chords <= target implies J <= target.  alpha = 0 is left out: a
        # target with an atom (f(0) < 1, e.g. a pessimistic PLD) is below every RTM curve there
        return float(np.max((tradeoff.chord_symmetrisation(j, grid)(grid) - ref)[grid > 0]))

    def above(sigma):  # J >= target iff min(j, j^{-1}) >= target (the target is convex)
        j = rtm.composed_curve(1.0 / sigma, sampling_rate, steps, d, reading, **options)
        return float(np.min(np.minimum(j(grid), j.inverse(grid)) - ref))

    def bisect(ok, feasible_high):
        lo, hi = lo_b, hi_b
        # a workload's answer can lie outside the bracket given (a DP-SGD run of 7,032 steps at rate 0.0043 needs
        # 0.165 for the lower end): the failing end moves out by 4 at a time, up to 4^6, with a warning
        for attempt in range(_SANDWICH_WIDENINGS + 1):  # the condition must hold at one end and fail at the other
            if not ok(hi if feasible_high else lo):  # the answer lies beyond the feasible end
                if attempt == _SANDWICH_WIDENINGS:
                    raise ValueError(f"bounds: no noise multiplier in {bounds!r}, nor out to "
                                     f"{hi if feasible_high else lo:g}, satisfies the condition")
                lo, hi = (hi, 4.0 * hi) if feasible_high else (lo / 4.0, lo)
            elif ok(lo if feasible_high else hi):  # ... or beyond the other one
                if attempt == _SANDWICH_WIDENINGS:
                    raise ValueError(f"bounds: every noise multiplier in {bounds!r}, and out to "
                                     f"{lo if feasible_high else hi:g}, satisfies the condition")
                lo, hi = (lo / 4.0, lo) if feasible_high else (hi, 4.0 * hi)
            else:
                break
        if (lo, hi) != (lo_b, hi_b):
            warnings.warn(f"the noise searched for lies outside bounds {bounds!r}: the search moved to "
                          f"[{lo:g}, {hi:g}]", FDPWarning, stacklevel=3)
        while hi / lo > 1.0 + rtol:
            mid = float(np.sqrt(lo * hi))
            if ok(mid) == feasible_high:
                hi = mid
            else:
                lo = mid
        return hi if feasible_high else lo

    upper = bisect(lambda s: above(s) >= -1e-12, True)
    lower = bisect(lambda s: below(s) <= 1e-12, False)
    return upper, lower
