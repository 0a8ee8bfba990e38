"""Noise calibration: the noise multiplier (or the number of steps) of DP-SGD that meets a risk target.

:func:`solve` takes a target of :mod:`fdp.targets` (``Epsilon(8.0, delta=1e-5)``, ``TPR(0.05, fpr=1e-3)``, ...) and
finds the smallest noise multiplier at a given number of steps, or the largest number of steps at a given noise, whose
certified risk meets it; the target reads the risk itself (:meth:`fdp.targets.Target.upper`), by the code a report
reads it with (a report may choose a finer spacing for a reading, and its number then lies within the target's
bracket).  :func:`sandwich_noise` brackets the noise whose relaxed-threat-model curve meets a
trade-off curve (RTM paper App. 7.3).

Examples
--------
>>> from fdp.targets import Advantage
>>> c = solve(Advantage(0.1), 0.05, steps=100, discretization=1e-3, rtol=1e-2)
>>> round(c.noise_multiplier, 1), bool(c.achieved <= 0.1)
(2.1, True)
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from dataclasses import dataclass, replace

import numpy as np
from tqdm import tqdm

from .accounting import pld, rtm
from .accounting.privacy_loss import dpsgd
from .curves import gdp, tradeoff
from .diagnostics import FDPWarning, warns
from .formatting import upper as rounded_up
from .intervals import Interval
from .result import Result
from .targets import EPSILON_MAX_POINTS, Epsilon, Target
from .validation import (
    SUBSAMPLED_NOISE_RANGE,
    ResourceLimitError,
    check_array_in,
    check_discretization,
    check_positive,
    check_positive_int,
    check_sampling_rate,
    spelled,
)

__all__ = ["Calibration", "solve", "MIN_RTOL", "MAX_NOISE", "WARN_RELATIVE", "REFINE_RELATIVE", "sandwich_noise"]


def _check_rtol(rtol) -> float:
    """The relative accuracy of a noise search: at least :data:`MIN_RTOL` and below 1."""
    rtol = check_positive("rtol", rtol)
    if rtol >= 1.0:
        raise ValueError(f"{spelled('rtol')} must be below 1 (a relative accuracy of the noise: 1e-3 finds it to 0.1 %), got {rtol!r}")
    if rtol < MIN_RTOL:
        raise ValueError(f"{spelled('rtol')} must be at least {MIN_RTOL:g} (the search works in log noise, in double precision), "
                         f"got {rtol!r}")
    return rtol


def _shrink_bracket(g, a: float, b: float, width: float, noise_of=math.exp) -> float:
    """``noise_of(b)`` (``exp(b)``) for a bracket ``a < b`` with ``g(a) > 0 >= g(b)`` shrunk below ``width``.

    ``g`` is the log of risk(noise) / target as a function of log noise: nearly linear, so false
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
            return noise_of(b)
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
    raise ValueError(f"the noise search did not close its bracket in {_MAX_SEARCH_STEPS} steps: use a larger {spelled('rtol')}")


#: Most evaluations of the false-position search (it needs about ten; bisection would need 50 at rtol 1e-12).
_MAX_SEARCH_STEPS = 200
#: The smallest relative accuracy of a noise search.
MIN_RTOL = 1e-12
#: The largest noise multiplier a noise search tries on a subsampled lattice (full batches: any float, closed forms).
MAX_NOISE = 1e8
#: Relative width of the interval for the risk reached above which a calibration carries a warning.
WARN_RELATIVE = 0.01
#: ... and above which the automatic spacing is refined (16 times, while the lattices fit) and the search run again.
REFINE_RELATIVE = 0.5


def _largest_noise(rate: float) -> float:
    """The largest noise a search tries: :data:`MAX_NOISE` for a subsampled lattice, any float for full batches."""
    return MAX_NOISE if rate < 1.0 else 1e300


@dataclass(frozen=True, kw_only=True)
class Calibration(Result):
    """A noise multiplier (or a number of steps) calibrated to a risk target, and what the target reads there.

    Attributes
    ----------
    noise_multiplier : float
        The noise.  Solved for: its certified (pessimistic) risk meets the target, ``noise_multiplier / (1 + rtol)``'s
        does not.
    target : Target
        The target met (:mod:`fdp.targets`); ``to_dict()`` writes its name, its value and its settings.
    achieved : float
        The certified upper bound on the risk at the answer (at most the target's value).
    achieved_lower : float or None
        A lower bound on it (from the optimistic curve; for epsilon, from ``dp_accounting``'s optimistic PLD): the
        exact risk lies in ``[achieved_lower, achieved]`` (:attr:`achieved_interval`).
    sampling_rate : float
    steps : int
        The steps.  Solved for: the certified risk of ``steps`` meets the target, that of ``steps + 1`` does not.
    discretization : float
        Loss lattice spacing at the answer.
    rtol : float
        Relative accuracy of the noise (0 when the steps were solved for: that answer is exact).
    evaluations : int
        Risk evaluations of the search.
    seconds : float
    noise_lower : float or None
        When the noise was solved for: a noise whose *lower* bound on the risk still exceeds the target, so the exact
        smallest noise that meets it lies in ``(noise_lower, noise_multiplier]`` (None when the steps were solved
        for, when no lower bound was asked for, or when even the noise 1e-3 is not excluded).
    warnings : tuple of str
        What a reader must know: a wide interval ``[achieved_lower, achieved]``, a fallback accountant, a target
        met at every noise.
    """

    noise_multiplier: float
    target: Target
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
    def value(self) -> float:
        """The target's value."""
        return self.target.value

    @property
    def achieved_interval(self) -> Interval:
        """``Interval(achieved_lower, achieved)``: where the exact risk at the answer lies; its lower end is 0 (every
        risk here is non-negative) where no lower bound is certified (``achieved_lower`` None), never ``achieved``."""
        return Interval(0.0 if self.achieved_lower is None else self.achieved_lower, self.achieved)

    def to_dict(self) -> dict:
        """The fields, JSON-ready, with the target as its name, its ``value`` and its settings (``fpr``, ``delta``,
        ...) at the end."""
        out = {}
        for key, v in super().to_dict().items():
            out |= {"target": self.target.name, "value": self.value} if key == "target" else {key: v}
        return out | self.target.parameters()


@warns
def solve(target: Target, sampling_rate: float, *, steps: int | None = None, noise_multiplier: float | None = None,
          discretization: float | None = None, rtol: float = 1e-3, max_steps: int | None = None,
          bound_below: bool = True, progress: bool = False) -> Calibration:
    """The noise multiplier (given ``steps``) or the number of steps (given ``noise_multiplier``) of DP-SGD whose
    certified risk meets a target.

    The risk of ``steps``-fold Poisson-subsampled Gaussian noise is read by the target
    (:meth:`fdp.targets.Target.upper`: the pessimistic lattice, capped by the full batch's closed form).  Every risk
    falls as the noise grows and rises with the steps.  For the noise, false position in log noise keeps a noise that
    meets the target and one that does not, to relative accuracy ``rtol``; for the steps, doubling from one step
    brackets the answer and bisection on the integers finds it exactly.  The answer also carries a lower bound on
    the risk it reaches (:meth:`fdp.targets.Target.lower`) and, for the noise, ``noise_lower``.

    Parameters
    ----------
    target : Target
        :class:`~fdp.targets.Epsilon`, :class:`~fdp.targets.Mu`, :class:`~fdp.targets.Advantage`,
        :class:`~fdp.targets.TPR`, :class:`~fdp.targets.ReRo` or :class:`~fdp.targets.RTMTPR`.
    sampling_rate : float
        Poisson rate in (0, 1].
    steps : int, optional
        Given: the noise multiplier is solved for.
    noise_multiplier : float, optional
        Given (instead of ``steps``): the number of steps is solved for.
    discretization : float, optional
        Loss lattice spacing.  Default: the target's (:meth:`fdp.targets.Target.default_discretization`) at each
        noise tried; for the noise then, where the PLD epsilon has not converged at the noise found, the search again
        on the spacing of :func:`fdp.accounting.pld.converged_discretization`, and on spacings 16 times finer while
        the risk reached is uncertain by more than :data:`REFINE_RELATIVE`.
    rtol : float, default 1e-3
        Relative accuracy of the noise, in [:data:`MIN_RTOL`, 1) (unused for the steps, found exactly).
    max_steps : int, optional
        For the steps: the search stops here, and a target still met is an error.  Default 2^53 for full batches
        (closed forms) and 10^6 otherwise (the lattice grows with the number of steps).
    bound_below : bool, default True
        Also read the lower bound on the risk reached and, for the noise, ``noise_lower`` (an optimistic lattice per
        probe, ten times finer for epsilon: False skips it, and both are None).
    progress : bool, default False
        Show the evaluations of a noise search on stderr (tqdm, from two seconds on).

    Returns
    -------
    Calibration
        A target that Poisson sampling alone meets (the advantage at most ``s = 1 - (1 - rate)^steps``, the chance
        that the record takes part at all, a TPR at ``fpr`` at most ``fpr + s (1 - fpr)``, gamma likewise, epsilon 0
        at a delta >= s) is met at every noise: the answer is the noise 0, with a warning.  A target met down to the
        smallest noise a subsampled lattice resolves (1e-3) is answered with that noise and a warning.

    References
    ----------
    GDP paper (Gomez et al. 2025) Alg. 1; ReRo paper (Kaissis et al. 2023a) Thm. 1; Kulynych et al. (2024)
    (calibration to attack risk, riskcal); RTM paper (Kaissis et al. 2023b) App. 7.3; Hayes et al. (2023) Fig. 5a.

    Examples
    --------
    >>> from fdp.targets import Advantage, Epsilon
    >>> round(solve(Epsilon(1.0, delta=1e-5), 1.0, steps=1, rtol=1e-6).noise_multiplier, 4)  # one Gaussian step
    3.7306
    >>> c = solve(Advantage(0.1), 0.05, noise_multiplier=2.0, discretization=1e-3)
    >>> c.steps, bool(c.achieved <= 0.1)
    (91, True)
    """
    start = time.perf_counter()
    if not isinstance(target, Target):
        raise ValueError("target must be a target of fdp.targets (Epsilon(8.0, delta=1e-5), TPR(0.05, fpr=1e-3), ...), "
                         f"got {target!r}")
    if (steps is None) == (noise_multiplier is None):
        raise ValueError("give steps (to solve for the noise multiplier) or noise_multiplier (to solve for the steps), "
                         "not both and not neither")
    sampling_rate = check_sampling_rate("sampling_rate", sampling_rate)
    if discretization is not None:
        check_discretization("discretization", discretization)
    if steps is not None:
        if max_steps is not None:
            raise ValueError("max_steps bounds a search for the steps: give it with noise_multiplier, not steps")
        steps = check_positive_int("steps", steps)
        out = _noise_for(target, sampling_rate, steps, discretization, _check_rtol(rtol), bound_below, progress)
    else:
        noise = check_positive("noise_multiplier", noise_multiplier)
        out = _steps_for(target, noise, sampling_rate, discretization, max_steps, bound_below)
    return replace(out, seconds=time.perf_counter() - start)


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


def _certified(target: Target, mechanism, h: float, value: float | None = None, use_lattice: bool = True,
               failed=None) -> float:
    """The target's certified upper bound (:meth:`fdp.targets.Target.upper`), with two shortcuts of a search: the
    lattice is not built where the closed form already meets ``value`` (the decision is the same, and a lattice at
    FPR 1e-300 costs 11 s to read 6.6e-11), nor with ``use_lattice=False``; where it cannot be built or read (3000
    steps at FPR 1e-300, a prior of 5e-324) the closed form alone, still an upper bound, and ``failed(message)``
    hears of it.  The closed form is the tighter one where the lattice cannot resolve a tiny FPR or prior (a TPR
    target at FPR 1e-20 otherwise needed 11 times the noise)."""
    full_batch = target.closed_form(mechanism)  # inf where there is none (the RDP accountant's epsilon)
    if (not use_lattice and full_batch < math.inf) or (value is not None and full_batch <= value):
        return full_batch
    return target.certified_upper(mechanism, h, failed)


class _Probes:
    """The risk of DP-SGD at each noise a search tries, both ends cached, with the evaluations counted, the lattice
    skipped below the largest noise at which it missed the target (its risk grows as the noise falls, and the closed
    form decides alone, as pessimistically) and the noises whose risk could not be computed remembered."""

    def __init__(self, target: Target, rate: float, steps: int, discretization: float | None, progress: bool):
        self.target, self.rate, self.steps, self.discretization = target, rate, steps, discretization
        self.evaluations, self.lattice_misses_below, self.unevaluable = 0, 0.0, []
        self._upper, self._lower = {}, {}
        self.bar = tqdm(desc=f"calibrate {target.name}", unit=" evaluations", disable=not progress, file=sys.stderr,
                        delay=2.0)

    def spacing(self, noise: float) -> float:
        if self.discretization is not None:
            return self.discretization
        return self.target.default_discretization(dpsgd(noise, self.rate, self.steps))

    def upper(self, noise: float) -> float:
        if noise not in self._upper:
            self.evaluations += 1
            value = self.target.value
            try:
                use_lattice = noise > self.lattice_misses_below
                out = _certified(self.target, dpsgd(noise, self.rate, self.steps), self.spacing(noise), value,
                                 use_lattice, failed=lambda message: self.unevaluable.append((noise, message)))
                if use_lattice and out > value:
                    self.lattice_misses_below = max(self.lattice_misses_below, noise)
            except ResourceLimitError:
                self.bar.close()  # the error's line must not be glued to the bar's
                raise
            except ValueError as exc:  # a probe whose risk leaves double precision (eps 1e300 at noise 1e-150, an RTM
                out = math.inf         # statistic at mu = 64 in d = 1e6) counts as missing the target: the search
                self.unevaluable.append((noise, str(exc)))  # moves to larger noise
            self.bar.set_postfix_str(f"noise {noise:.6g}: {self.target.name} {out:.6g}", refresh=False)
            self.bar.update()
            self._upper[noise] = out
        return self._upper[noise]

    def close(self, found: float) -> None:
        """End the bar on the noise found (not on the last noise tried)."""
        self.bar.set_postfix_str(f"found noise {rounded_up(found, 6)}: {self.target.name} {rounded_up(self.upper(found), 6)}",
                                 refresh=False)  # rounded outward, as the command's output
        self.bar.close()

    def lower(self, noise: float) -> float | None:
        if noise not in self._lower:
            self.evaluations += 1
            try:
                self._lower[noise] = self.target.lower(dpsgd(noise, self.rate, self.steps), self.spacing(noise))
            except ValueError:  # a spacing out of range at an extreme noise: no lower bound there
                self._lower[noise] = None
            self.bar.update()  # the bar counts what ``evaluations`` counts
        return self._lower[noise]


def _bracket(probes: _Probes, smallest: float) -> tuple[float, float, tuple[str, ...]]:
    """``(lo, hi, note)``: a noise ``lo`` that misses the target and ``hi`` that meets it.  ``hi`` doubles up to noise
    1e4, then by a factor that squares (1e300 is reached in 10 more steps); ``lo`` halves likewise down to
    ``smallest``, where a target still met is answered with a note."""
    target, rate = probes.target, probes.rate
    lo, hi, factor = 0.5, 2.0, 2.0
    while probes.upper(hi) > target.value:
        if hi >= _largest_noise(rate):
            # a subsampled lattice resolves a risk only down to what its spacing allows (mu* 3e-7 at rate 3e-7 needs
            # spacing 1e-9): say where the search stopped and what a finer lattice can do
            hint = "" if rate == 1.0 else (
                f"; at noise {lo:g} the certified {spelled(target.name)} is still {probes.upper(lo):.3g} at lattice spacing "
                f"{probes.spacing(lo):.3g}, which resolves it no finer: a smaller {spelled('discretization')} may reach the target")
            raise ValueError(f"no noise multiplier below {_largest_noise(rate):g} brings {spelled(target.name)} to "
                             f"{target.value!r} at sampling rate {rate:g} and {probes.steps} steps{hint}")
        lo, hi, factor = hi, min(factor * hi, _largest_noise(rate)), factor * factor if hi >= 1e4 else 2.0
    factor = 2.0
    while probes.upper(lo) <= target.value:
        lo, hi, factor = max(lo / factor, smallest), lo, min(factor * factor, 1e100) if lo <= 1e-4 else 2.0
        if lo == hi:  # met down to the smallest noise resolved: that is the answer
            return lo, hi, (f"{spelled(target.name)} = {target.value!r} is met at every noise multiplier from {smallest:g} up "
                            "(the smallest a subsampled lattice resolves)",)
    return lo, hi, ()


def _notes(probes: _Probes, noise: float, h: float, coarsened: bool, closed: bool) -> tuple[str, ...]:
    """What a reader must know of how the noise found was read: a coarsened spacing, probes below it that could not
    be computed, a closed form that decided alone."""
    target, default_h = probes.target.name, pld.default_discretization(dpsgd(noise, probes.rate, probes.steps))
    notes = (f"epsilon was read at lattice spacing {h:.3g}, coarser than the default {default_h:.3g}, to keep one "
             f"step below {EPSILON_MAX_POINTS:,} lattice points: it is an upper bound that may lie above the converged "
             f"epsilon, and the noise pessimistic; --discretization {default_h:.3g} (slower) may give a smaller noise",
             ) if coarsened else ()
    below = [(x, m) for x, m in probes.unevaluable if x < noise]
    if below:
        x, message = max(below)
        notes += (f"at noise {x:.4g} the lattice's {target} could not be computed ({message}): below the noise found "
                  "only the full batch's closed form was read, and a smaller noise may meet the target too",)
    if closed and probes.discretization is None:
        notes += (f"the full batch's closed form meets the target at this noise (subsampling only lowers the risk): "
                  f"the lattice at spacing {h:.3g} did not resolve {target} at this level; a smaller discretization "
                  "may find a smaller noise",)
    return notes


def _noise_lower(probes: _Probes, noise: float, rtol: float, smallest: float) -> float | None:
    """A noise below ``noise`` whose lower bound on the risk still misses the target (None if none is found): the
    exact risk is at least the lower bound and falls as the noise grows, so every noise at or below it misses the
    target too, and the exact smallest noise lies above it."""
    factor = 1.0 + rtol
    while probes.lower(noise) is not None:
        low = probes.lower(noise / factor)
        if low is None:
            return None
        if low > probes.target.value:
            return noise / factor
        factor *= factor  # the lower bound meets the target: step further down
        if noise / factor < smallest:
            return None
    return None


def _noise_for(target: Target, rate: float, steps: int, discretization: float | None, rtol: float, bound_below: bool,
               progress: bool) -> Calibration:
    """:func:`solve` for the noise multiplier."""
    trivial = target.sampling_bound(rate, steps)
    if trivial is not None and target.value >= trivial:
        return Calibration(noise_multiplier=0.0, target=target, achieved=trivial, achieved_lower=None, sampling_rate=rate,
                           steps=steps, discretization=discretization or 0.0, rtol=rtol, evaluations=0, seconds=0.0,
                           noise_lower=0.0, warnings=(f"the target is met at every noise multiplier: Poisson sampling at "
                                                      f"rate {rate:g} over {steps} step{'s' if steps != 1 else ''} alone bounds {spelled(target.name)} by "
                                                      f"{trivial:.6g}",))
    probes = _Probes(target, rate, steps, discretization, progress)
    smallest = SUBSAMPLED_NOISE_RANGE[0] if rate < 1.0 else 1e-300  # full batches: closed forms at any noise
    lo, hi, met_everywhere = _bracket(probes, smallest)
    # the bracket's ends are read where they were evaluated (exp(log(16)) is 16 - 2e-15), the points between at exp(x)
    ends = {math.log(lo): lo, math.log(hi): hi}

    def noise_of(x):
        return ends.get(x, math.exp(x))

    noise = lo if met_everywhere else _shrink_bracket(lambda x: _log_ratio(probes.upper(noise_of(x)), target.value),
                                                      math.log(lo), math.log(hi), math.log1p(rtol), noise_of)
    h = probes.spacing(noise)
    coarsened = (discretization is None and isinstance(target, Epsilon) and rate < 1.0  # by EPSILON_MAX_POINTS
                 and h > pld.default_discretization(dpsgd(noise, rate, steps)))
    # the closed form meets the target and the FPR or prior lies below the lattice's usual floor (1e-10): no lattice
    # decided it, and refining the lattice rarely beats the closed form at such a level (45 s at FPR 1e-300)
    closed = (rate < 1.0 and target.exact_at_full_batch and target.level is not None and target.level < gdp.DPSGD_TAIL
              and target.closed_form(dpsgd(noise, rate, steps)) <= target.value)
    automatic = discretization is None and target.exact_at_full_batch and rate < 1.0 and not coarsened and not closed
    if automatic:  # the default spacing can be far from converged (36 % on epsilon at 10^7 steps): search again on
        # the coarsest spacing whose epsilon has converged at the noise found
        delta = target.delta if isinstance(target, Epsilon) else 1e-5
        fine = pld.converged_discretization(dpsgd(noise, rate, steps), delta=delta)
        if fine.discretization < h:
            probes.bar.close()
            again = _noise_for(target, rate, steps, fine.discretization, rtol, bound_below, progress)
            return replace(again, evaluations=again.evaluations + probes.evaluations)
    noise_lower = None if met_everywhere or not bound_below else _noise_lower(probes, noise, rtol, smallest)
    probes.close(noise)
    achieved, achieved_lower = probes.upper(noise), probes.lower(noise) if bound_below else None
    if automatic:
        refined = _refined(probes, noise, h, achieved, achieved_lower, rtol, bound_below, progress)
        if refined is not None:
            return refined
    return Calibration(noise_multiplier=noise, target=target, achieved=achieved, achieved_lower=achieved_lower,
                       sampling_rate=rate, steps=steps, discretization=h, rtol=rtol, evaluations=probes.evaluations,
                       seconds=0.0, noise_lower=noise_lower,
                       warnings=met_everywhere + _notes(probes, noise, h, coarsened, closed)
                       + _warnings(target, dpsgd(noise, rate, steps), h, achieved, achieved_lower))


def _refined(probes: _Probes, noise: float, h: float, reached: float, reached_lower: float | None, rtol: float,
             bound_below: bool, progress: bool) -> Calibration | None:
    """The search again on spacings 16 times finer while the risk reached is uncertain by more than
    :data:`REFINE_RELATIVE` and the lattices fit (a tiny advantage at spacing 1e-5 read [0, 6e-6], and the noise came
    out 200 times larger than a finer lattice needs); a finer lattice only lowers a certified answer, and the smallest
    noise found is kept, with its spacing and risk interval (None if none is smaller than ``noise``)."""
    best, evaluations = None, probes.evaluations
    for _ in range(3):
        width = (reached - reached_lower) / reached if reached_lower is not None and reached > 0.0 else 0.0
        h /= 16.0
        if width <= REFINE_RELATIVE or not pld.affordable(dpsgd(noise, probes.rate, probes.steps), h):
            break
        try:
            again = _noise_for(probes.target, probes.rate, probes.steps, h, rtol, bound_below, progress)
        except (ValueError, ResourceLimitError):
            break
        evaluations += again.evaluations
        if again.noise_multiplier < noise:  # adopted whole: its noise, spacing and risk interval belong together
            best, noise = again, again.noise_multiplier
        reached, reached_lower = again.achieved, again.achieved_lower
    return None if best is None else replace(best, evaluations=evaluations)


def _steps_for(target: Target, noise: float, rate: float, discretization: float | None, max_steps: int | None,
               bound_below: bool) -> Calibration:
    """:func:`solve` for the number of steps (exact: bisection on the integers)."""
    if max_steps is None:
        max_steps = 2**53 if rate == 1.0 and target.exact_at_full_batch else 1_000_000
    max_steps = check_positive_int("max_steps", max_steps)
    cache = {}

    def risk_at(steps):
        if steps not in cache:
            mechanism = dpsgd(noise, rate, steps)
            h = target.default_discretization(mechanism) if discretization is None else discretization
            cache[steps] = _certified(target, mechanism, h)
        return cache[steps]

    if risk_at(1) > target.value:
        raise ValueError(f"{spelled(target.name)} = {target.value!r} is not met even by one step at noise multiplier {noise:g} "
                         f"and sampling rate {rate:g}")
    good, bad = 1, 2  # risk_at(good) meets the target; bad is the next candidate
    while risk_at(bad) <= target.value:
        if bad >= max_steps:
            raise ValueError(f"{spelled(target.name)} = {target.value!r} is still met by {max_steps} steps, the most the search "
                             f"tries, at noise multiplier {noise:g} and sampling rate {rate:g}")
        good, bad = bad, min(2 * bad, max_steps)
    while bad - good > 1:  # risk_at(good) <= value < risk_at(bad)
        mid = (good + bad) // 2
        good, bad = (mid, bad) if risk_at(mid) <= target.value else (good, mid)
    mechanism = dpsgd(noise, rate, good)
    h = target.default_discretization(mechanism) if discretization is None else discretization
    lower = target.lower(mechanism, h) if bound_below else None
    return Calibration(noise_multiplier=noise, target=target, achieved=risk_at(good), achieved_lower=lower,
                       sampling_rate=rate, steps=good, discretization=h, rtol=0.0, evaluations=len(cache) + 1,
                       seconds=0.0, noise_lower=None, warnings=_warnings(target, mechanism, h, risk_at(good), lower))


def _warnings(target: Target, mechanism, h: float, achieved: float, achieved_lower: float | None) -> tuple[str, ...]:
    """What a reader of a calibration must know: a fallback accountant, a wide interval for the risk reached."""
    out = []
    if isinstance(target, Epsilon) and mechanism.sampling_rate < 1.0 and target.pld_infinite(mechanism, h):
        out.append(f"the PLD accountant's epsilon is infinite at delta {target.delta:g} (its truncated tails): the RDP "
                   "accountant's epsilon was used")
    if achieved_lower is not None and achieved > 0.0 and (achieved - achieved_lower) / achieved > WARN_RELATIVE:
        out.append(f"the risk reached lies in [{achieved_lower:.6g}, {achieved:.6g}] "
                   f"({100 * (achieved - achieved_lower) / achieved:.3g} % wide): the exact risk at this noise can be "
                   "that much below the target, so a smaller noise may meet it too (the noise interval says how much); "
                   + ("a smaller discretization narrows it" if mechanism.sampling_rate < 1.0 else
                      "the closed form's bounds are this far apart at this level (floats below 1e-308 carry few digits)"))
    return tuple(out)


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
        j = rtm.composed_curve(dpsgd(sigma, sampling_rate, steps), d, reading, **options)
        # the chords lie on or above the exact J: J_chords <= target implies J <= target.  alpha = 0 is left out: a
        # target with an atom (f(0) < 1, e.g. a pessimistic PLD) is below every RTM curve there
        return float(np.max((tradeoff.chord_symmetrisation(j, grid)(grid) - ref)[grid > 0]))

    def above(sigma):  # J >= target iff min(j, j^{-1}) >= target (the target is convex)
        j = rtm.composed_curve(dpsgd(sigma, sampling_rate, steps), d, reading, **options)
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
