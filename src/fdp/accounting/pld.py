"""Privacy-loss distributions (PLDs) through Google's ``dp_accounting``, and trade-off curves from them.

A PLD of a pair (A, B) is the law of the privacy loss ``L = log(b(x) / a(x))`` for ``x ~ B``
(plus a mass at ``L = +inf`` where ``a = 0``).  Its trade-off curve is ``T(A, B)``: the
Neyman-Pearson test rejects A for the largest losses, so with the losses sorted downwards the
breakpoints are the cumulative masses ``(A(L >= l), 1 - B(L >= l))``; between them the curve is
linear (randomisation at the threshold atom).  For a discrete pair this is exact, including
``f(0) = 1 - B(L = +inf)``: a pair without an infinite-loss atom has ``f(0) = 1``.

Directions (:mod:`fdp.accounting.privacy_loss`).  ``"add"`` is ``T(P, Q)`` with ``P = M(D)`` and ``Q = M(D with the
target)``; for the Poisson-subsampled mechanism with sampling rate p and noise ``nu``,
``P = nu`` and ``Q = (1 - p) nu + p nu(. - 1)``.  ``"remove"`` is the swapped pair ``T(Q, P)``,
the inverse curve.  ``dp_accounting`` names its two PMFs after the neighbouring relation of its
``mu_upper = M(D)``: its **REMOVE** PMF (``mu_upper = (1-p) nu(. + 1) + p nu``, ``mu_lower =
nu``) is the law of ``log(Q / P)`` under Q, i.e. our ``"add"`` curve ``T(P, Q)``, and its
**ADD** PMF is our ``"remove"`` curve ``T(Q, P)``.  The tests check this against Lemma 9 of the
RTM paper (``T(P, Q) = p f + (1 - p)(1 - alpha)`` for one step).

Certified bracket.  ``dp_accounting``'s pessimistic PMF (connect-the-dots, Doroshenko et al.
2022) is a dominating pair: its curve lies on or below the exact one, so its gamma is an upper
bound.  An optimistic PMF (every loss rounded down to the lattice, truncated tails dropped) has
a hockey-stick divergence ``H(t) = E_B[(1 - t e^{-L})^+]`` below the true one for every t, and
so does its composition (the integrand is non-decreasing in L and convolution keeps the
stochastic order); since ``gamma(kappa) = inf_t kappa t + H(t)`` (Neyman-Pearson with LP
duality), its gamma is a lower bound.  The curves read off both by :func:`breakpoints` are
piecewise linear in alpha exactly as that infimum is, so ``gamma_lower <= gamma <=
gamma_upper`` holds up to floating-point rounding in the FFT convolutions (about 1e-15 per
lattice point, far below any width we report).  Rounding down shifts every step's loss by up to
one lattice spacing h, so the optimistic side is first order in N h: pick ``discretization``
well below ``1 / N`` times the width you need, or use :mod:`fdp.accounting.ground_truth` for a tight bracket.

Our own certified curves.  :func:`tradeoff_bracket` (default ``method="lattice"``) composes the
float64 one-step measures of :mod:`fdp.accounting.onestep`, second order in the spacing, every rounding of one
step bounded and the FFT's estimated from its spectrum;
:func:`certified_lower_curve` adds the remove direction's pessimistic measure, so that the lower curve
is tight at both ends (and symmetrised, the curve of GDP reporting).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as _pld

from ..curves.mia import membership_bounds
from ..curves.rero import gamma
from ..curves.tradeoff import PiecewiseLinear, fixed_point, lower_convex_envelope, symmetrise
from ..intervals import Interval
from ..result import Result
from ..validation import (
    check_array_in,
    check_discretization,
    check_open_unit,
    check_positive,
    check_positive_int,
    spelled,
)
from . import lattice, onestep
from .privacy_loss import Mechanism, takes_mechanism

__all__ = [
    "epsilon_for_delta",
    "default_discretization",
    "converged_discretization",
    "affordable",
    "Spacing",
    "EPSILON_RTOL",
    "mechanism_tradeoff",
    "discrete_gaussian_pld",
    "DIRECTIONS",
    "mechanism_pld",
    "compose",
    "breakpoints",
    "tradeoff_curve",
    "Bracket",
    "tradeoff_bracket",
    "OptimisticCurve",
    "optimistic_curve",
    "certified_lower_curve",
]

#: The directions of a curve: add ``T(P, Q)``, remove ``T(Q, P)``, or the symmetrised curve of both.
DIRECTIONS = ("add", "remove", "symmetrised")


def _check_direction(direction) -> str:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    return direction


def _mechanism_args(mechanism, discretization):
    """The checked ``(noise, noise_multiplier, sampling_rate, steps, discretization)`` of a mechanism and a spacing."""
    return (*mechanism.args, check_discretization("discretization", discretization))


@takes_mechanism
def mechanism_pld(mechanism: Mechanism, *, discretization: float | None = None, pessimistic: bool = True):
    """The ``dp_accounting`` PLD of a mechanism: ``steps``-fold Poisson-subsampled Gaussian or Laplace noise.

    Sensitivity 1, noise standard deviation (``"gaussian"``) or Laplace scale b (``"laplace"``)
    ``noise_multiplier``, sampling rate ``sampling_rate`` (1 = no subsampling).  ``pessimistic=True`` uses
    connect-the-dots (a dominating pair: gamma from it is an upper bound); ``False`` rounds losses
    down (privacy buckets: a lower bound, see the module docstring).  Returns a
    ``dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution``.

    Parameters
    ----------
    mechanism : Mechanism
    discretization : float, optional
        Lattice spacing (default :func:`default_discretization`, tuned for DP-SGD; dp_accounting's own is 1e-4).
    pessimistic : bool, default True

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution

    References
    ----------
    Doroshenko et al. (2022) (connect-the-dots); Meiser and Mohammadi (2018) (privacy buckets).

    Examples
    --------
    >>> up = mechanism_pld(Mechanism("gaussian", 1.0), discretization=1e-3).get_epsilon_for_delta(1e-5)
    >>> low = mechanism_pld(Mechanism("gaussian", 1.0), discretization=1e-3, pessimistic=False).get_epsilon_for_delta(1e-5)
    >>> bool(low <= 4.377178 <= up)  # the exact epsilon of one Gaussian step lies between them
    True
    """
    if discretization is None:
        discretization = default_discretization(mechanism)
    noise, noise_multiplier, p, steps, h = _mechanism_args(mechanism, discretization)
    if not isinstance(pessimistic, (bool, np.bool_)):
        raise ValueError(f"pessimistic must be True or False, got {pessimistic!r}")
    return _mechanism_pld(noise, noise_multiplier, p, steps, h, bool(pessimistic))


@functools.lru_cache(maxsize=2)  # the report asks for the same PLD twice (spacing check, then epsilon); PLDs are immutable
def _mechanism_pld(mechanism: str, noise_multiplier: float, p: float, steps: int, h: float, pessimistic: bool):
    """:func:`mechanism_pld` on checked arguments."""
    what = f"{mechanism} noise {noise_multiplier:g} with sampling rate {p:g}, {steps} steps, discretization {h:g}"
    hint = f"use a larger {spelled('discretization')}, fewer {spelled('steps')} or a larger {spelled('noise_multiplier')}"
    lattice.check_lattice_points(lattice.lattice_points(Mechanism(mechanism, noise_multiplier, p), h), what + " (one step)",
                                 hint, lattice.MAX_ONE_STEP_POINTS)
    lattice.check_lattice_points(lattice.lattice_points(Mechanism(mechanism, noise_multiplier, p, steps), h), what, hint)
    kwargs = dict(
        sensitivity=1.0,
        pessimistic_estimate=bool(pessimistic),
        value_discretization_interval=h,
        sampling_prob=p,
        use_connect_dots=bool(pessimistic),  # connect-the-dots exists for pessimistic PMFs only
    )
    with np.errstate(divide="ignore"):  # dp_accounting's log(1 - p + p e^x) meets log 0 at rates near 1e-16: -inf, kept
        if mechanism == "gaussian":
            one = _pld.from_gaussian_mechanism(noise_multiplier, **kwargs)
        else:
            one = _pld.from_laplace_mechanism(noise_multiplier, **kwargs)
    if steps == 1:
        return one
    # pylint: disable=protected-access
    dense = [pmf.to_dense_pmf() for pmf in (one._pmf_remove, one._pmf_add)]
    for pmf in dense:
        lattice.check_composed(pmf._probs, steps, 1e-15, what, hint)
    # a one-step PMF of few losses is sparse, and dp_accounting composes a sparse PMF by repeated squaring of
    # dictionaries: 30-50 s for 10^7 steps at (1.5-2, 1e-4) where the dense FFT takes 0.04 s, with the same epsilon
    return _pld.PrivacyLossDistribution(*dense).self_compose(steps)


def epsilon_for_delta(dist, delta: float) -> float:
    """``dist.get_epsilon_for_delta(delta)`` of a ``dp_accounting`` PLD, as a float, without its overflow warnings.

    Far from private (losses above 709) ``dp_accounting`` divides by a P-mass that underflows; the quotient
    overflows to inf and the answer is inf or a loss above 700, an upper bound either way.

    Parameters
    ----------
    dist : dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
    delta : float

    Returns
    -------
    float
    """
    with np.errstate(over="ignore"):
        return float(dist.get_epsilon_for_delta(delta))


def compose(plds):
    """Heterogeneous composition of PLDs built with the same discretisation and estimate type.

    Parameters
    ----------
    plds : sequence of PrivacyLossDistribution
        At least one.

    Returns
    -------
    PrivacyLossDistribution

    Examples
    --------
    >>> one = mechanism_pld(Mechanism("gaussian", 1.0), discretization=1e-3)
    >>> two = compose([one, one])
    >>> bool(two.get_epsilon_for_delta(1e-5) > one.get_epsilon_for_delta(1e-5))
    True
    """
    plds = list(plds)
    if not plds:
        raise ValueError("plds must hold at least one privacy-loss distribution")
    out = plds[0]
    for other in plds[1:]:
        out = out.compose(other)
    return out


def _pmf(pld, direction: str):
    """The dp_accounting PMF of the law of log(Q/P) under Q for our ``direction`` (see module doc)."""
    # pylint: disable=protected-access
    return (pld._pmf_remove if direction == "add" else pld._pmf_add).to_dense_pmf()


def breakpoints(pld, direction: Literal["add", "remove", "symmetrised"] = "add", normalise: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints ``(alphas, betas)`` of the trade-off curve of a PLD, in ``direction`` "add" or "remove".

    The curve is exact for the discrete pair the PMF describes (module docstring): it starts at
    ``(0, 1 - m_inf)`` (``m_inf`` = mass at infinite loss), follows the Neyman-Pearson tests
    from the largest loss down, and ends at ``alpha = 1``.  Points with zero mass are skipped.

    A pessimistic PMF whose truncated lower tail dropped A-mass gets it back at its lowest loss
    (pessimistic).  Its total B-mass can exceed 1 by round-off s (1.5e-6 after 2,000 SGM steps); the
    curve then reaches 0 before alpha = 1, which forbids any finite mu-GDP.  ``normalise=True``
    rescales the B-mass to 1: a proper trade-off function, at most s above the pessimistic one.

    Parameters
    ----------
    pld : PrivacyLossDistribution
    direction : {"add", "remove"}, default "add"
    normalise : bool, default False

    Returns
    -------
    (alphas, betas) : tuple of numpy.ndarray

    References
    ----------
    Doroshenko et al. (2022); Zhu, Dong, Wang (2022) (curves from PLDs).
    """
    direction = _check_direction(direction)
    if direction == "symmetrised":
        raise ValueError("breakpoints: direction must be 'add' or 'remove'; use tradeoff_curve for 'symmetrised'")
    pmf = _pmf(pld, direction)
    # pylint: disable=protected-access
    h = pmf._discretization
    points = lattice.breakpoints(
        pmf._lower_loss * h, h, pmf._probs, pmf._infinity_mass, pmf._pessimistic_estimate, normalise
    )
    return points.alphas, points.betas


def tradeoff_curve(pld, direction: Literal["add", "remove", "symmetrised"] = "add", name: str | None = None, normalise: bool = False) -> PiecewiseLinear:
    """The trade-off curve of a PLD: ``"add"`` T(P, Q), ``"remove"`` T(Q, P), or ``"symmetrised"`` C(f, g).

    The symmetrised curve is the lower convex envelope of both directions and their inverses
    (Dong, Roth, Su 2022, Def. F.1): the DP guarantee of the mechanism under add/remove adjacency.

    Parameters
    ----------
    pld : PrivacyLossDistribution
    direction : {"add", "remove", "symmetrised"}, default "add"
    name : str, optional
        Label of the curve.
    normalise : bool, default False
        See :func:`breakpoints`.

    Returns
    -------
    PiecewiseLinear

    References
    ----------
    Dong, Roth, Su (2022) Def. F.1.

    Examples
    --------
    >>> curve = tradeoff_curve(mechanism_pld(Mechanism("gaussian", 1.0), discretization=1e-3))
    >>> from fdp.curves import tradeoff
    >>> bool(curve(0.1) <= tradeoff.gaussian(1.0)(0.1))  # pessimistic: below the exact curve
    True
    """
    direction = _check_direction(direction)
    label = name or f"PLD ({direction})"
    if direction == "symmetrised":
        # min over both curves and their inverses (for a discretised PLD "remove" is only close to the
        # inverse of "add", and the guarantee must hold in both directions of the test).  Each is
        # convex and piecewise linear, so the envelope of their minimum is the envelope of all their
        # vertices: the breakpoints, the same swapped (the inverses), and (0, 1), (1, 0), where an
        # inverse's flat extensions end.
        add, remove = breakpoints(pld, "add", normalise), breakpoints(pld, "remove", normalise)
        alphas = np.concatenate([add[0], add[1], remove[0], remove[1], [0.0, 1.0]])
        betas = np.concatenate([add[1], add[0], remove[1], remove[0], [1.0, 0.0]])
        return PiecewiseLinear(*lower_convex_envelope(alphas, betas), name=label)
    return PiecewiseLinear(*breakpoints(pld, direction, normalise), name=label)


@dataclass(frozen=True)
class Bracket:
    """A lower and an upper trade-off curve that contain the exact curve: ``lower <= f <= upper``.

    ``lower`` comes from a pessimistic measure (a dominating pair), ``upper`` from an optimistic
    one.  :meth:`gamma` returns ``(gamma_lower, gamma_upper)`` = ``(1 - upper(kappa), 1 - lower(kappa))``.

    Attributes
    ----------
    lower, upper : PiecewiseLinear
        The certified lower and upper curves.
    discretization : float
        The loss lattice spacing they were built on.
    slack : float, default 0.0
        Absolute slack of the upper curve: the exact curve lies below ``upper + slack`` (the estimated
        rounding of the FFT composition of the optimistic measure, about 1e-12; 0 for
        ``method="dp_accounting"``, whose rounding is not tracked).
    """

    lower: PiecewiseLinear
    upper: PiecewiseLinear
    discretization: float
    slack: float = 0.0

    def gamma(self, kappa) -> Interval:
        """Certified ``Interval(gamma_lower, gamma_upper)`` of the ReRo bound at prior(s) ``kappa`` (in (0, 1)); it
        unpacks and indexes as the pair."""
        # rero.gamma is at least kappa: the trivial bound f(kappa) <= 1 - kappa holds for the exact curve
        kappa = np.asarray(kappa, dtype=float)
        # each end moved outward by a bound on its float error: a curve's powers and alphas are running sums over its
        # n breakpoints (numpy's cumsum adds in sequence: n u relative each), and the power read at a shifted alpha
        # moves by at most the same relative amount (it is concave through 0); with a tiny kappa_min the lattice is
        # long and one ulp was not enough (1.6e-13 relative below the exact one-step curve at q 0.158, sigma 0.0505)
        up = gamma(self.lower, kappa) * (1.0 + (2.0 * self.lower.alphas.size + 8.0) * 2.0**-53)
        g_up = np.minimum(np.nextafter(up, 2.0), 1.0)
        low = gamma(self.upper, kappa) * (1.0 - (2.0 * self.upper.alphas.size + 8.0) * 2.0**-53) - self.slack
        g_low = np.maximum(np.nextafter(low, -1.0), kappa)
        return Interval(np.minimum(g_low, g_up), g_up)

    def width(self, kappa) -> np.ndarray:
        """``gamma_upper - gamma_lower`` at ``kappa``."""
        low, up = self.gamma(kappa)
        return up - low


@takes_mechanism
def tradeoff_bracket(
    mechanism: Mechanism,
    *,
    discretization: float = 1e-4,
    method: Literal["lattice", "dp_accounting"] = "lattice",
    direction: Literal["add", "remove", "symmetrised"] = "add",
    level_min: float = 1e-7,
    max_grid: int = 50_000,
) -> Bracket:
    """Certified bracket of the curve of ``steps``-fold subsampled Gaussian/Laplace noise.

    ``method="lattice"`` (default, add direction only): the certified one-step measures of
    :mod:`fdp.accounting.onestep` (a refinement and a garbling of the true pair on a loss lattice of spacing
    about ``discretization``, both with error second order in the spacing, built in float64 with
    every rounding bounded), composed by FFT.  Tails below ``1e-12 level_min / steps`` are cut.
    The width is about ``c N h^2`` relative (ImageNet ReRo workload: 2.5e-4 at h = 1e-4, 9e-5 at
    6e-5).  The one-step lattice has at most ``max_grid`` points (about 10 us a point): for very
    large effect sizes the spacing grows beyond ``discretization`` and the bracket widens.  The
    FFT's rounding is estimated from its spectrum (:func:`fdp.accounting.lattice.self_convolve`) and carried in
    ``Bracket.slack`` (upper curve) and in the lower curve's masses.

    ``method="dp_accounting"``: ``dp_accounting``'s pessimistic (connect-the-dots) and optimistic
    (rounded down) PLDs in any ``direction`` ("add", "remove" or "symmetrised"; symmetrising
    keeps the order).  Its optimistic side is first order in ``steps * discretization``, so the
    bracket is much wider for long compositions.

    Parameters
    ----------
    mechanism : Mechanism
        The noise, its multiplier (sigma or b), sampling rate and steps.
    discretization : float
        Loss lattice spacing.
    method : {"lattice", "dp_accounting"}
    direction : {"add", "remove", "symmetrised"}
    level_min : float
        The smallest level (a prior kappa or an FPR alpha) the bracket is read at; it sets the tail cut.  The
        same name as :func:`certified_lower_curve`'s.
    max_grid : int
        Most one-step lattice points.

    Returns
    -------
    Bracket
        ``lower <= f <= upper``; :meth:`Bracket.gamma` gives the certified ReRo interval.

    References
    ----------
    Doroshenko et al. (2022) (connect-the-dots); ReRo paper Thm. 1; :mod:`fdp.accounting.ground_truth`.

    Examples
    --------
    >>> bracket = tradeoff_bracket(Mechanism("gaussian", 1.0, 0.5, 10), discretization=1e-2)
    >>> low, high = bracket.gamma(0.01)
    >>> round(float(low), 5), round(float(high), 5)  # at 1e-3: [0.2744940, 0.2744942]
    (0.27449, 0.27451)
    """
    direction = _check_direction(direction)
    if method not in ("lattice", "dp_accounting"):
        raise ValueError(f"method must be 'lattice' or 'dp_accounting', got {method!r}")
    if method == "dp_accounting":
        curves = []
        for pessimistic in (True, False):
            pld = mechanism_pld(mechanism, discretization=check_discretization("discretization", discretization),
                                pessimistic=pessimistic)
            kind = "pessimistic" if pessimistic else "optimistic"
            curves.append(tradeoff_curve(pld, direction, name=f"{mechanism.noise} PLD {kind} ({direction})"))
        return Bracket(lower=curves[0], upper=curves[1], discretization=float(discretization))

    if direction != "add":
        raise ValueError(f"method 'lattice' computes the add direction only, got direction={direction!r}")
    frame = _lattice_frame(mechanism, discretization, level_min, max_grid)
    masses, infinite = onestep.pessimistic(frame.step, frame.l_pess, frame.h, frame.grid)
    lower, _ = _composed_curve(frame.l_pess, frame.h, masses, infinite, frame.steps, True, frame.tail,
                               f"{frame.noise} lattice pessimistic (add)")
    upper = _optimistic_side(frame)
    return Bracket(lower=lower, upper=upper.upper, discretization=frame.h, slack=upper.slack)


class _Frame(NamedTuple):
    """The one-step lattice of a bracket: its checked arguments, frames, spacing, grid and tail cut."""
    noise: str
    noise_multiplier: float
    steps: int
    step: onestep.OneStep
    l_pess: float
    l_opt: float
    h: float
    grid: int
    tail: float
    level_min: float


def _lattice_frame(mechanism, discretization, level_min, max_grid) -> _Frame:
    noise, noise_multiplier, p, steps, h = _mechanism_args(mechanism, discretization)
    level_min = check_open_unit("level_min", level_min)
    max_grid = check_positive_int("max_grid", max_grid)
    tail = 1e-12 * level_min / steps
    step = onestep.OneStep(noise, noise_multiplier, p)
    l_pess, l_opt, step_h, grid = onestep.frames(step, h, np.log(tail), max_grid)
    lattice.check_lattice_points(
        lattice.lattice_points(Mechanism(noise, noise_multiplier, p, steps), step_h, tail),
        f"the certified bracket of {steps} steps ({noise} noise {noise_multiplier:g}, sampling rate {p:g})",
        (f"use fewer {spelled('steps')} or a larger " if steps > 1 else "use a larger ") + spelled("discretization"),
    )
    return _Frame(noise, noise_multiplier, steps, step, l_pess, l_opt, step_h, grid, tail, level_min)


def _optimistic_side(frame: _Frame) -> OptimisticCurve:
    # optimistic bins above the Q-tail 1e-7 level_min / (N h) are the lattice cells: their first-order
    # loss (at most h per unit of mass and step) costs at most 1e-7 level_min of gamma
    crude = 1e-7 * frame.level_min / (frame.steps * frame.h)
    masses = onestep.optimistic(frame.step, frame.l_opt, frame.h, frame.grid, crude=crude)
    upper, slack = _composed_curve(frame.l_opt, frame.h, masses, 0.0, frame.steps, False, frame.tail,
                                   f"{frame.noise} lattice optimistic (add)")
    return OptimisticCurve(upper=upper, slack=slack, discretization=frame.h)


@dataclass(frozen=True)
class OptimisticCurve:
    """The upper side of a lattice :class:`Bracket` alone: the exact add-direction curve lies below
    ``upper + slack``.  What a certified *lower* end of a risk reads (mu*, the membership TPR, the advantage),
    at half the work of :func:`tradeoff_bracket`, and equal to that bracket's ``upper`` and ``slack`` bit for bit.

    Attributes
    ----------
    upper : PiecewiseLinear
        On or above the exact curve, up to ``slack``.
    slack : float
        The estimated rounding of its FFT composition (about 1e-12).
    discretization : float
        The one-step lattice spacing it was built on.
    """

    upper: PiecewiseLinear
    slack: float
    discretization: float

    def membership_lower(self, fpr) -> tuple[np.ndarray, float]:
        """Lower ends of the exact symmetrised curve's membership readings: the TPR at each FPR and the advantage,
        read from below off the symmetrisation of ``upper`` (on or above the exact one), less ``slack``.

        Parameters
        ----------
        fpr : array_like
            False-positive rates in [0, 1].

        Returns
        -------
        tuple of numpy.ndarray and float
        """
        tpr, advantage, _ = membership_bounds(symmetrise(self.upper), fpr, [0.5], side="lower")
        return np.maximum(tpr - self.slack, 0.0), max(0.0, advantage - self.slack)


@takes_mechanism
def optimistic_curve(mechanism: Mechanism, *, discretization: float = 1e-4, level_min: float = 1e-7,
                     max_grid: int = 50_000) -> OptimisticCurve:
    """The optimistic (upper) curve of the lattice :func:`tradeoff_bracket` without its pessimistic side.

    Parameters
    ----------
    mechanism : Mechanism
    discretization : float
    level_min : float
        The smallest level the curve is read at (sets the tail cut).
    max_grid : int
        Most one-step lattice points.

    Returns
    -------
    OptimisticCurve

    Examples
    --------
    >>> side = optimistic_curve(Mechanism("gaussian", 1.0, 0.5, 10), discretization=1e-2)
    >>> full = tradeoff_bracket(Mechanism("gaussian", 1.0, 0.5, 10), discretization=1e-2)
    >>> bool(np.array_equal(side.upper.betas, full.upper.betas)) and side.slack == full.slack
    True
    """
    return _optimistic_side(_lattice_frame(mechanism, discretization, level_min, max_grid))


def _composed_curve(l_0, h, masses, infinite, steps, pessimistic, tail, name) -> tuple[PiecewiseLinear, float]:
    """The curve of the ``steps``-fold composition of a one-step lattice measure and the slack of an optimistic one."""
    base, out, inf_mass, rounding = lattice.compose(l_0, h, masses, infinite, steps, pessimistic, tail)
    a, b, powers = lattice.breakpoints(base, h, out, inf_mass, pessimistic)
    return PiecewiseLinear(a, b, name=name, powers=powers), rounding


@takes_mechanism
def certified_lower_curve(
    mechanism: Mechanism,
    *,
    discretization: float = 1e-4,
    direction: Literal["add", "symmetrised"] = "add",
    level_min: float = 1e-10,
    max_grid: int = 50_000,
) -> PiecewiseLinear:
    """A certified lower bound on the curve, tight at both of its ends: ``"add"`` T(P, Q) or ``"symmetrised"`` C.

    The pessimistic measure of :func:`tradeoff_bracket` bounds its curve from below everywhere, but its
    digits sit near ``alpha = 0``: there the curve is read from the measure's upper tail, while near
    ``(1, 0)`` ``beta = 1 - (mass above)`` inherits every rounding allowance the measure carries (about
    1e-15 per step; at (noise 3, rate 0.01, 5,000 steps, h = 1e-4) the point where ``beta = 1e-10``
    lies at ``1 - alpha = 5.6e-10`` instead of 4.6e-10).  The remove direction ``T(Q, P) = f^{-1}``
    (:class:`fdp.accounting.onestep.OneStep` with ``direction="remove"``) has those roles exchanged, so its
    certified lower curve ``g``, inverted, is a lower bound on ``f`` tight near ``(1, 0)``.

    ``"add"``: ``f`` up to a crossing with ``g^{-1}`` (``_join``), then ``g^{-1}`` (at most
    ``max(f, g^{-1})``, convex).  ``"symmetrised"``: the symmetric envelope of ``min(f, g)`` on the half
    up to its fixed point (:func:`fdp.curves.tradeoff.symmetrise` with ``other=g``), which uses both curves
    only near ``(0, 1)``, where each is tight; a lower bound on the exact ``C(f, f^{-1})``, the curve
    of GDP reporting (:func:`fdp.accounting.mechanism_gdp.mu_and_regret_dpsgd`).  For a symmetric pair (sampling rate 1)
    one measure serves both ends.

    Parameters
    ----------
    mechanism : Mechanism
        Laplace noise at sampling rate 1 only (the remove direction of the subsampled Laplace is not built).
    discretization : float
        Loss lattice spacing.
    direction : {"add", "symmetrised"}, default "add"
    level_min : float, default 1e-10
        The smallest alpha or beta the curve is read at: the tail cut of the composition is
        ``1e-6 level_min`` (its mass moves to infinite loss).
    max_grid : int
        Most one-step lattice points.

    Returns
    -------
    PiecewiseLinear
        A valid trade-off curve below the exact one up to the rounding of its running sums: ``1 - beta`` may be up to
        ``(2 n + 8) u`` of itself too small (``n`` breakpoints, ``u = 2^-53``; 1.7e-15 above the exact one-step curve
        at noise 0.0817, rate 0.3125, alpha 1e-10), the margin :meth:`Bracket.gamma` moves outward.

    References
    ----------
    Doroshenko et al. (2022) (connect-the-dots); Dong, Roth, Su (2022) Def. F.1 (C, and ``T(Q, P) = T(P, Q)^{-1}``).

    Examples
    --------
    >>> lower = certified_lower_curve(Mechanism("gaussian", 1.0, 0.5, 10), discretization=1e-2)
    >>> above = tradeoff_bracket(Mechanism("gaussian", 1.0, 0.5, 10), discretization=1e-2).upper
    >>> bool(np.all(lower(above.alphas) <= above.betas + 1e-12))  # below the certified upper curve
    True
    """
    noise, noise_multiplier, p, steps, h = _mechanism_args(mechanism, discretization)
    if direction not in ("add", "symmetrised"):
        raise ValueError(f"direction must be 'add' or 'symmetrised', got {direction!r}")
    level_min = check_open_unit("level_min", level_min)
    max_grid = check_positive_int("max_grid", max_grid)
    if noise == "laplace" and p < 1.0:
        raise ValueError("mechanism: the certified lower curve of subsampled Laplace noise is not built (its remove "
                         f"direction is missing): sampling_rate must be 1, got {p!r}")
    tail = 1e-6 * level_min / steps
    curves = []
    for side in ("add", "remove") if p < 1.0 else ("add",):
        step = onestep.OneStep(noise, noise_multiplier, p, side)
        l_0, _, step_h, grid = onestep.frames(step, h, np.log(tail), max_grid)
        masses, infinite = onestep.pessimistic(step, l_0, step_h, grid)
        name = f"{noise} lattice pessimistic ({side})"
        curves.append(_composed_curve(l_0, step_h, masses, infinite, steps, True, tail, name)[0])
    # for a symmetric pair the add curve is also a lower bound on the remove curve
    f, g = curves[0], curves[-1]
    name = f"{noise} lattice pessimistic ({direction}, both ends)"
    if direction == "symmetrised":
        curve = symmetrise(f, other=g)
        curve.name = name
        return curve
    return _join(f, g.swapped(), name)


def _join(f: PiecewiseLinear, g: PiecewiseLinear, name: str) -> PiecewiseLinear:
    """``f`` up to a point where it crosses below ``g``, then ``g``: a lower bound if both are, convex if both are.

    Of the sign changes of ``f - g`` from positive to non-positive at ``f``'s breakpoints, the one
    nearest ``f``'s fixed point (in alpha) is used, the crossing located between ``g``'s breakpoints; at
    a crossing ``f' <= g'``, so the joined curve stays convex.  It is at most ``max(f, g)`` (where
    ``f - g`` changes sign many times between breakpoints, as where both are tight, it may take ``g``
    over most of the range, a loss far below the curves' own error) and equals it near both ends, where
    one curve is the better one, with no more breakpoints than the two together.
    """
    a, b = f.alphas, f.betas
    d = b - g(a)
    sign_change = np.flatnonzero((d[:-1] > 0.0) & (d[1:] <= 0.0))
    if sign_change.size == 0:  # one curve lies above the other at every breakpoint of f
        better = f if np.sum(d) >= 0.0 else g
        return PiecewiseLinear(better.alphas, better.betas, name=name, powers=better.powers)
    i = int(sign_change[np.argmin(np.abs(a[sign_change] - fixed_point(f)))])
    # inside (a_i, a_{i+1}] f is linear; split it at g's breakpoints and find the sub-interval of the sign change
    inner = g.alphas[(g.alphas > a[i]) & (g.alphas < a[i + 1])]
    x = np.concatenate([[a[i]], inner, [a[i + 1]]])
    dx = f(x) - g(x)
    k = int(np.flatnonzero((dx[:-1] > 0.0) & (dx[1:] <= 0.0))[0])
    cross = float(x[k] + dx[k] / (dx[k] - dx[k + 1]) * (x[k + 1] - x[k]))
    value = float(min(f(cross), g(cross)))  # both are lower bounds; the smaller keeps both sides below them
    left, right = a < cross, g.alphas > cross
    alphas = np.concatenate([a[left], [cross], g.alphas[right]])
    betas = np.minimum.accumulate(np.concatenate([b[left], [value], g.betas[right]]))
    powers = np.maximum(np.concatenate([f.powers[left], [1.0 - value], g.powers[right]]), 1.0 - betas)
    return PiecewiseLinear(alphas, betas, name=name, powers=powers)


@takes_mechanism
def default_discretization(mechanism: Mechanism) -> float:
    """A PLD lattice spacing for DP-SGD: 1/200 of the Gaussian CLT mu (Bu et al. 2020), clipped to [1e-5, 3e-4].

    For the eps = 8 run of the GDP paper (9.4, 2000, 2^14/50,000) this is 3e-4, and mu* lies 1e-5
    above the certified interval [1.566947, 1.566949] of :func:`fdp.accounting.pld.tradeoff_bracket` (at 1e-3 it
    lies 1.1e-4 above; across the Fig. 4 grid the 1e-3 cap moved mu* by up to 0.36 %).

    Parameters
    ----------
    mechanism : Mechanism
        Its noise multiplier, sampling rate and steps (the rule is the Gaussian one for either noise).

    Returns
    -------
    float

    References
    ----------
    Bu, Dong, Long, Su (2020) (the CLT mu); GDP paper (Gomez et al. 2025) Alg. 1.

    Examples
    --------
    >>> default_discretization(Mechanism("gaussian", 9.4, 2**14 / 50_000, 2000))  # the eps = 8 De et al. run: the cap
    0.0003
    """
    _, noise_multiplier, sampling_rate, steps = mechanism.args
    with np.errstate(over="ignore", under="ignore", divide="ignore"):  # noise 1e-300 or 1e300: the clip decides
        mu_clt = sampling_rate * np.sqrt(steps * np.expm1(1.0 / np.float64(noise_multiplier) ** 2))
    return float(np.clip(mu_clt / 200.0, 1e-5, 3e-4))


#: Relative accuracy of the PLD epsilon that :func:`converged_discretization` aims at.
EPSILON_RTOL = 5e-3


@dataclass(frozen=True)
class Spacing(Result):
    """A lattice spacing chosen for a workload and how far its epsilon may lie above the converged one.

    Attributes
    ----------
    discretization : float
        The spacing.
    excess : float
        A bound on the relative excess of the pessimistic PLD epsilon at this spacing over the converged value,
        assuming the error at least halves with the spacing (it falls like the square here): the relative change
        to half the spacing, twice over.
    converged : bool
        True when ``excess`` is at most the tolerance asked; False when a finer lattice would exceed the limits.
    """

    discretization: float
    excess: float
    converged: bool


@takes_mechanism
def affordable(mechanism: Mechanism, discretization: float) -> bool:
    """Whether the mechanism's lattices at this spacing stay within :mod:`fdp.accounting.lattice`'s limits (one step and composed).

    Parameters
    ----------
    mechanism : Mechanism
    discretization : float
        The loss lattice spacing.

    Returns
    -------
    bool
        True when neither the one-step lattice (:data:`fdp.accounting.lattice.MAX_ONE_STEP_POINTS`) nor the composed one
        (:data:`fdp.accounting.lattice.MAX_LATTICE_POINTS`) exceeds its limit.
    """
    one = lattice.lattice_points(mechanism.one_step, discretization)
    return (one <= lattice.MAX_ONE_STEP_POINTS
            and lattice.lattice_points(mechanism, discretization) <= lattice.MAX_LATTICE_POINTS)


@takes_mechanism
def converged_discretization(mechanism: Mechanism, *, delta: float = 1e-5, rtol: float = EPSILON_RTOL) -> Spacing:
    """The coarsest spacing, from :func:`default_discretization` down by halves, whose PLD epsilon is within ``rtol``.

    The pessimistic (connect-the-dots) PLD overstates epsilon by an error that falls at least like the spacing
    (like its square at DP-SGD workloads: at (1, 1e-4, 10^7 steps) eps 2.209, 1.710, 1.642, 1.627 at 3e-4, 1e-4,
    5e-5, 3e-5).  With ``e(h)`` falling to the converged ``e*``, ``e(h) - e* <= 2 (e(h) - e(h/2))`` when the error at
    least halves, so ``h`` is kept once ``2 (e(h) - e(h/2)) <= rtol e(h/2)``; otherwise the spacing is halved, until
    a lattice (one step or composed) would exceed the limits of :mod:`fdp.accounting.lattice`.

    Parameters
    ----------
    mechanism : Mechanism
    delta : float, default 1e-5
        The delta of the epsilon compared.
    rtol : float, default :data:`EPSILON_RTOL`
        Tolerated relative excess of epsilon.

    Returns
    -------
    Spacing

    Examples
    --------
    >>> converged_discretization(Mechanism("gaussian", 2.0, 0.05, 200)).discretization  # converged at the default
    0.0003
    >>> s = converged_discretization(Mechanism("gaussian", 1.0, 1e-4, 10_000_000))  # the default is 36 % pessimistic
    >>> s.discretization, s.converged
    (1.875e-05, True)
    """
    steps = mechanism.steps
    delta = check_open_unit("delta", delta)
    rtol = check_positive("rtol", rtol)
    h = default_discretization(mechanism)

    def eps(spacing):
        return epsilon_for_delta(mechanism_pld(mechanism, discretization=spacing), delta)

    coarse = eps(h)
    # rounding every loss up by at most h moves the composed losses up by at most steps * h, so epsilon's excess
    # is at most that: far from private (epsilon in the hundreds) the first spacing is converged without halving
    if np.isfinite(coarse) and coarse > 0.0 and steps * h <= rtol * coarse:
        return Spacing(h, steps * h / coarse, True)
    while True:
        if not affordable(mechanism, h / 2) or not np.isfinite(coarse):
            return Spacing(h, float("inf"), False)
        fine = eps(h / 2)
        excess = 2.0 * (coarse - fine) / fine if fine > 0.0 else 0.0
        if excess <= rtol:
            return Spacing(h, max(excess, 0.0), True)
        h, coarse = h / 2, fine


@takes_mechanism
def mechanism_tradeoff(mechanism: Mechanism, *, discretization: float | None = None) -> PiecewiseLinear:
    """Symmetrised trade-off curve of a mechanism's pessimistic PLD (for DP-SGD: GDP paper Alg. 1 step 1).

    The PLD of :func:`mechanism_pld`, its add and remove curves symmetrised (:func:`tradeoff_curve`,
    ``"symmetrised"``, with the round-off surplus of the PMF normalised away so that the curve ends at
    (1, 0)).  ``discretization``: see :func:`mechanism_pld` (and :func:`default_discretization` for the error
    this leaves).

    Parameters
    ----------
    mechanism : Mechanism
    discretization : float, optional
        Lattice spacing (default :func:`default_discretization`).

    Returns
    -------
    PiecewiseLinear
        Symmetric, ending at (1, 0).

    References
    ----------
    GDP paper (Gomez et al. 2025) Alg. 1 step 1; Dong, Roth, Su (2022) Def. F.1.

    Examples
    --------
    >>> curve = mechanism_tradeoff(Mechanism("gaussian", 2.0, 0.05, 200), discretization=1e-3)
    >>> bool(abs(curve(0.1) - curve.inverse(0.1)) < 1e-9)  # symmetric
    True
    """
    dist = mechanism_pld(mechanism, discretization=discretization)
    noise, noise_multiplier, sampling_rate, steps = mechanism.args
    kind = "DP-SGD sigma" if noise == "gaussian" else "Laplace b"
    name = f"{kind}={noise_multiplier:g} q={sampling_rate:.4g} T={steps}"
    return tradeoff_curve(dist, "symmetrised", name=name, normalise=True)


def discrete_gaussian_pld(rhos, repeats=1, *, sensitivity: int = 1, discretization: float = 1e-4):
    """``dp_accounting`` PLD of a composition of discrete Gaussian mechanisms, each calibrated to rho_i-zCDP.

    Mechanism i adds discrete Gaussian noise with parameter ``sigma_i = sensitivity / sqrt(2 rho_i)``
    (Canonne, Kamath, Steinke 2020: then it is rho_i-zCDP, like the continuous Gaussian) to an
    integer query of the given sensitivity, and is repeated ``repeats[i]`` times (a number broadcasts).
    The pessimistic connect-the-dots PLDs (``dp_accounting``'s ``from_discrete_gaussian_mechanism``)
    are composed exactly up to the lattice.  Used for the TopDown algorithm of the 2020 US Census
    (GDP paper Fig. 5a): each geographic level spends a share of the total rho on its queries.

    Parameters
    ----------
    rhos : array_like
        zCDP parameter of each mechanism, > 0.
    repeats : int or array_like, default 1
        Repetitions of each mechanism.
    sensitivity : int, default 1
    discretization : float, default 1e-4
        Lattice spacing.

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution

    References
    ----------
    Canonne, Kamath, Steinke (2020); GDP paper (Gomez et al. 2025) Fig. 5a.
    """
    r = check_array_in("rhos", np.atleast_1d(rhos), 0.0, np.inf, open_low=True, open_high=True)
    if r.ndim != 1:
        raise ValueError(f"rhos must be a 1-d array, got shape {r.shape}")
    n = np.broadcast_to(np.atleast_1d(repeats), r.shape)
    n = [check_positive_int("repeats", v) for v in n]
    sens = check_positive_int("sensitivity", sensitivity)
    h = check_discretization("discretization", discretization)
    out = None
    for rho_i, n_i in zip(r, n):
        one = _pld.from_discrete_gaussian_mechanism(
            float(sens / np.sqrt(2.0 * rho_i)), sensitivity=sens, value_discretization_interval=h, use_connect_dots=True
        )
        one = one.self_compose(n_i) if n_i > 1 else one
        out = one if out is None else out.compose(one)
    return out
