"""Risk targets: one small type per question asked of a DP-SGD run, each reading itself off certified curves.

A target is a question with a threshold: "is epsilon at delta 1e-5 at most 8?", "is the TPR at FPR 1e-3 at most
0.05?".  :meth:`Target.bounds` reads the risk of a mechanism from both sides, an upper end from the pessimistic
lattice (capped by the full batch's closed form: subsampling only lowers a risk) and a lower end from the optimistic
one; :meth:`Target.met_by` compares the upper end with the threshold.  :func:`fdp.calibrate.solve` finds the noise
multiplier or the number of steps that meets a target, with these same readings.

=======================  ==============================================================================
:class:`Epsilon`         eps at ``delta`` (PLD accountant, certified; or the RDP accountant)
:class:`Mu`              mu*, the certified GDP of the run (GDP paper Alg. 1)
:class:`Advantage`       membership-inference advantage ``max(TPR - FPR)`` (Yeom et al. 2018)
:class:`TPR`             membership-inference TPR at ``fpr``
:class:`ReRo`            reconstruction success gamma at prior ``kappa`` (ReRo paper Thm. 1)
:class:`RTMTPR`          TPR at ``fpr`` of the relaxed-threat-model adversary (RTM paper), in ``dimension``
=======================  ==============================================================================

Examples
--------
>>> from fdp import dpsgd
>>> t = TPR(0.05, fpr=1e-3)
>>> t.met_by(dpsgd(9.4, 0.32768, 2000))
False
>>> named("rero", 0.05, 1e-3)
ReRo(value=0.05, kappa=0.001)
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, fields
from typing import ClassVar, Literal

from .accounting import accountants, lattice, mechanism_gdp, pld, rtm
from .accounting.privacy_loss import Mechanism, check_mechanism
from .curves import gdp, mia, tradeoff
from .formatting import ULPS_DOWN
from .intervals import Interval
from .result import Result
from .validation import check_discretization, check_open_unit, check_positive, check_positive_int, spelled

__all__ = ["Target", "Epsilon", "Mu", "Advantage", "TPR", "ReRo", "RTMTPR", "TARGETS", "named", "EPSILON_MAX_POINTS"]

#: The most points of one step that an epsilon reading's default spacing allows.
EPSILON_MAX_POINTS = 200_000


@dataclass(frozen=True)
class Target(Result):
    """A risk of a DP-SGD run and a threshold it must not exceed.

    Attributes
    ----------
    value : float
        The threshold.
    name : str
        The target's name on the command line and in JSON (class attribute).
    """

    value: float
    name: ClassVar[str] = ""
    #: The risk in plain words and, with its threshold, in the book's symbols ("{fpr:g}": a setting of the target)
    words: ClassVar[str] = ""
    symbols: ClassVar[str] = ""
    #: The full batch's closed form is the exact risk (not only an upper bound), so no lattice is read there.
    exact_at_full_batch: ClassVar[bool] = True

    def __post_init__(self):
        object.__setattr__(self, "value", check_positive(self.name, self.value))

    @property
    def level(self) -> float | None:
        """The target's FPR or prior (None for a target without one)."""
        return None

    def parameters(self) -> dict:
        """The target's settings besides its value (``{"fpr": 0.001}``), as JSON-ready numbers."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "value"}

    def describe(self, symbols: bool = False) -> str:
        """The risk in words (``"the membership TPR at FPR 0.001"``), or the target in symbols with its threshold
        (``"TPR ≤ 0.05 at FPR 0.001"``): one description for the CLI, the report and the book.

        Examples
        --------
        >>> TPR(0.05, fpr=1e-3).describe(), Epsilon(8.0).describe(symbols=True)
        ('the membership TPR at FPR 0.001', 'ε ≤ 8 at δ = 1e-05')
        """
        return (self.symbols if symbols else self.words).format(**{f.name: getattr(self, f.name) for f in fields(self)})

    # --- readings, for a Gaussian mechanism (DP-SGD) -----------------------------------------------------------

    def default_discretization(self, mechanism: Mechanism) -> float:
        """The lattice spacing a reading uses when none is given (:func:`fdp.accounting.pld.default_discretization`)."""
        return pld.default_discretization(mechanism)

    def closed_form(self, mechanism: Mechanism, upper: bool = True) -> float:
        """The risk of the run without subsampling, exactly ``sqrt(steps) / noise_multiplier``-GDP (Dong, Roth, Su
        2022 Cor. 3.3), moved past its float error up (an upper bound on the subsampled run's risk too: subsampling
        only lowers it) or, with ``upper=False``, down."""
        mu = mechanism.full_batch_mu  # at most a few ulps above sqrt(steps) / noise
        return self._of_mu(mu if upper else mu * ULPS_DOWN, upper)

    def _of_mu(self, mu: float, upper: bool) -> float:
        """The risk of a mu-GDP mechanism, rounded up (or down)."""
        raise NotImplementedError

    def lattice(self, mechanism: Mechanism, discretization: float) -> float:
        """The certified upper bound read off the pessimistic loss lattice at ``discretization``."""
        raise NotImplementedError

    def optimistic(self, mechanism: Mechanism, discretization: float) -> float | None:
        """A lower bound on the risk read off the optimistic lattice (None where it cannot be built)."""
        raise NotImplementedError

    def sampling_bound(self, sampling_rate: float, steps: int) -> float | None:
        """What Poisson sampling alone guarantees at every noise, or None.

        The record takes part in no step with probability ``(1 - rate)^steps``, and then the two outputs have one
        law, so ``f >= (1 - rate)^steps (1 - alpha)`` in both directions: the advantage is at most
        ``s = 1 - (1 - rate)^steps``, the TPR at a level (gamma at a prior) at most ``level + s (1 - level)``, and
        the mechanism is ``(0, s)``-DP."""
        if sampling_rate == 1.0:
            return None
        s = -math.expm1(steps * math.log1p(-sampling_rate))
        return s if self.level is None else self.level + s * (1.0 - self.level)

    def upper(self, mechanism: Mechanism, discretization: float | None = None) -> float:
        """The certified upper bound on the risk of ``mechanism``: the lattice's, capped by the closed form (the closed
        form alone where the lattice cannot be built or read).

        Parameters
        ----------
        mechanism : Mechanism
            Gaussian noise (DP-SGD).
        discretization : float, optional
            Lattice spacing (default :meth:`default_discretization`).

        Returns
        -------
        float
        """
        mechanism = self._check(mechanism)
        return self.certified_upper(mechanism, self._spacing(mechanism, discretization))

    def certified_upper(self, mechanism: Mechanism, discretization: float, failed=None) -> float:
        """:meth:`upper` at a spacing a search has chosen (not checked again); ``failed(message)``, if given, hears of a
        lattice that could not be built or read (the closed form alone answers then).

        Parameters
        ----------
        mechanism : Mechanism
            Gaussian noise (DP-SGD), checked by the caller.
        discretization : float
            Lattice spacing.
        failed : callable, optional

        Returns
        -------
        float
        """
        closed = self.closed_form(mechanism)
        if mechanism.sampling_rate == 1.0 and self.exact_at_full_batch:
            return closed
        try:
            return min(self.lattice(mechanism, discretization), closed)
        except ValueError as exc:  # the lattice cannot be built or read (FPR 5e-324): the closed form is still a bound
            if failed is not None:
                failed(str(exc))
            return closed

    def lower(self, mechanism: Mechanism, discretization: float | None = None) -> float | None:
        """A lower bound on the risk of ``mechanism`` (the closed form moved down for a full batch; else the optimistic
        lattice's, None where it cannot be built)."""
        mechanism = self._check(mechanism)
        if discretization is not None:
            check_discretization("discretization", discretization)
        try:
            if mechanism.sampling_rate == 1.0 and self.exact_at_full_batch:
                return self.closed_form(mechanism, upper=False)
            return self.optimistic(mechanism, self._spacing(mechanism, discretization))
        except ValueError:  # the finer optimistic lattice does not fit, or the risk leaves double precision
            return None

    def bounds(self, mechanism: Mechanism, discretization: float | None = None) -> Interval:
        """``Interval(lower, upper)``: where the exact risk of ``mechanism`` lies (lower end 0 where no lower bound
        can be built: every risk here is non-negative).

        Parameters
        ----------
        mechanism : Mechanism
            Gaussian noise (DP-SGD).
        discretization : float, optional
            Lattice spacing (default :meth:`default_discretization`).

        Returns
        -------
        Interval

        Examples
        --------
        >>> from fdp import dpsgd
        >>> b = Mu(1.0).bounds(dpsgd(2.0, 1.0, 4))  # exactly 1-GDP
        >>> bool(b.lower <= 1.0 <= b.upper), float(b.upper - b.lower) < 1e-15
        (True, True)
        """
        low, up = self.lower(mechanism, discretization), self.upper(mechanism, discretization)
        return Interval(0.0 if low is None else min(low, up), up)

    def met_by(self, mechanism: Mechanism, discretization: float | None = None) -> bool:
        """Whether the certified risk of ``mechanism`` is at most the target's value."""
        return self.upper(mechanism, discretization) <= self.value

    def _check(self, mechanism) -> Mechanism:
        mechanism = check_mechanism(mechanism)
        if mechanism.noise != "gaussian":
            raise ValueError(f"a {type(self).__name__} target reads DP-SGD (Gaussian noise), got {mechanism.noise} noise")
        return mechanism

    def _spacing(self, mechanism: Mechanism, discretization: float | None) -> float:
        if discretization is None:
            return self.default_discretization(mechanism)
        return check_discretization("discretization", discretization)


def _level_min(level) -> float:
    """The smallest level a lattice curve is built down to: 1e-10, or a smaller FPR or prior asked for."""
    return gdp.DPSGD_TAIL if level is None else min(gdp.DPSGD_TAIL, level)


def _check_level(target: Target, level_name: str):
    """Validate a target's level and that its value exceeds it (every mechanism reaches TPR = FPR, gamma = kappa)."""
    level = check_open_unit(level_name, getattr(target, level_name))
    object.__setattr__(target, level_name, level)
    value = check_open_unit(target.name, target.value)
    if value <= level:
        raise ValueError(f"{spelled(target.name)} must exceed {spelled(level_name)} (every mechanism reaches {level:g} "
                         "there), "
                         f"got {value!r}")
    object.__setattr__(target, "value", value)


@functools.lru_cache(maxsize=256)
def _pld_epsilon(mechanism: Mechanism, delta: float, h: float) -> float:
    """eps at ``delta`` from dp_accounting's PLD accountant (cached: the calibration asks again at its answer)."""
    return accountants.epsilon(mechanism, delta, "pld", h)


def _affordable(mechanism: Mechanism, h: float) -> float:
    """``h``, or the coarser spacing at which one step of ``mechanism`` has :data:`EPSILON_MAX_POINTS` lattice points."""
    return h * max(lattice.lattice_points(mechanism.one_step, h) / EPSILON_MAX_POINTS, 1.0)


@dataclass(frozen=True)
class Epsilon(Target):
    """eps at ``delta``: certified by the PLD accountant (``"pld"``, the RDP accountant's where the PLD's truncated
    tails make it infinite, below delta ~1e-15), or the RDP accountant's (``"rdp"``, what a TF Privacy log prints;
    no closed-form cap and no lower bound).

    Parameters
    ----------
    value : float
        The largest epsilon allowed, > 0.
    delta : float, default 1e-5
        In (0, 1).
    accountant : {"pld", "rdp"}, default "pld"

    Examples
    --------
    >>> from fdp import dpsgd
    >>> round(Epsilon(1.0, 1e-5).upper(dpsgd(3.7306, 1.0, 1)), 4)  # one Gaussian step at (1, 1e-5)
    1.0
    """

    delta: float = 1e-5
    accountant: Literal["pld", "rdp"] = "pld"
    name: ClassVar[str] = "epsilon"
    words: ClassVar[str] = "epsilon at delta {delta:g}"
    symbols: ClassVar[str] = "ε ≤ {value:g} at δ = {delta:g}"

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "delta", check_open_unit("delta", self.delta))
        accountants.check_accountant(self.accountant)

    @property
    def exact_at_full_batch(self) -> bool:
        """True for the PLD accountant (a full batch reads the exact closed form); the RDP accountant's epsilon is
        what that accountant reports, also for full batches."""
        return self.accountant == "pld"

    def parameters(self) -> dict:
        return {"delta": self.delta} | ({"accountant": self.accountant} if self.accountant != "pld" else {})

    def describe(self, symbols: bool = False) -> str:
        return super().describe(symbols) + (" (RDP accountant)" if self.accountant == "rdp" else "")

    def default_discretization(self, mechanism: Mechanism) -> float:
        # dp_accounting's PLD visits each point of one step in Python: coarsened to keep one step below
        # EPSILON_MAX_POINTS (a coarser lattice is still pessimistic: at noise 0.35, rate 1e-6 and spacing 1e-5 one
        # step had 1.9 million points and took 16 s); full batches read the closed form, at no spacing
        h = pld.default_discretization(mechanism)
        return h if mechanism.sampling_rate == 1.0 and self.accountant == "pld" else _affordable(mechanism, h)

    def closed_form(self, mechanism: Mechanism, upper: bool = True) -> float:
        return super().closed_form(mechanism, upper) if self.accountant == "pld" else math.inf

    def _of_mu(self, mu: float, upper: bool) -> float:
        # each end checked in exact arithmetic against the root (the float root can lie 30 ulps above it)
        return float(gdp.eps_from_mu_delta(mu, self.delta, side="upper" if upper else "lower"))

    def lattice(self, mechanism: Mechanism, discretization: float) -> float:
        if self.accountant == "rdp":
            return accountants.epsilon(mechanism, self.delta, "rdp", discretization)
        eps = _pld_epsilon(mechanism, self.delta, discretization)
        return eps if math.isfinite(eps) else accountants.epsilon(mechanism, self.delta, "rdp", discretization)

    def pld_infinite(self, mechanism: Mechanism, discretization: float) -> bool:
        """Whether the PLD accountant's epsilon is infinite here (its truncated tails), so the RDP one was read."""
        return self.accountant == "pld" and not math.isfinite(_pld_epsilon(mechanism, self.delta, discretization))

    def optimistic(self, mechanism: Mechanism, discretization: float) -> float | None:
        if self.accountant == "rdp":
            return None
        # losses rounded down (first order in steps * h: ten times finer), a dominated pair
        dist = pld.mechanism_pld(mechanism, discretization=_affordable(mechanism, discretization / 10), pessimistic=False)
        eps = pld.epsilon_for_delta(dist, self.delta)
        return eps if math.isfinite(eps) else None  # delta below the PLD's truncated tails: no lower bound

    def sampling_bound(self, sampling_rate: float, steps: int) -> float | None:
        s = super().sampling_bound(sampling_rate, steps)  # (0, s)-DP: epsilon 0 at any delta >= s
        return 0.0 if s is not None and self.delta >= s else None


@dataclass(frozen=True)
class Mu(Target):
    """mu*, the certified GDP of the run (GDP paper Alg. 1 on the certified curve; its lower end from the optimistic
    curve).

    Parameters
    ----------
    value : float
        The largest mu* allowed, > 0.
    """

    name: ClassVar[str] = "mu"
    words: ClassVar[str] = "mu (GDP)"
    symbols: ClassVar[str] = "μ* ≤ {value:g}"

    def _of_mu(self, mu: float, upper: bool) -> float:
        return mu

    def lattice(self, mechanism: Mechanism, discretization: float) -> float:
        return mechanism_gdp.mu_and_regret_dpsgd(mechanism, discretization=discretization).mu

    def optimistic(self, mechanism: Mechanism, discretization: float) -> float | None:
        above = pld.optimistic_curve(mechanism, discretization=discretization, level_min=gdp.DPSGD_TAIL)
        below = pld.certified_lower_curve(mechanism, discretization=discretization, direction="symmetrised",
                                          level_min=gdp.DPSGD_TAIL)
        return gdp.mu_star_below(above.upper, below, gdp.DPSGD_TAIL, slack=above.slack)

    def sampling_bound(self, sampling_rate: float, steps: int) -> float | None:
        return None  # mu* of any mechanism with a point below the diagonal is positive


class _Membership(Target):
    """A reading of the certified symmetrised curve at an FPR (the advantage: the largest TPR - FPR)."""

    def lattice(self, mechanism: Mechanism, discretization: float) -> float:
        curve = pld.certified_lower_curve(mechanism, discretization=discretization, direction="symmetrised",
                                          level_min=_level_min(self.level))
        tpr, advantage, _ = mia.membership_bounds(curve, [0.0 if self.level is None else self.level], [0.5])
        return advantage if self.level is None else float(tpr[0])

    def optimistic(self, mechanism: Mechanism, discretization: float) -> float | None:
        above = pld.optimistic_curve(mechanism, discretization=discretization, level_min=1e-10)  # the upper side
        tpr, advantage = above.membership_lower([0.0 if self.level is None else self.level])
        return advantage if self.level is None else float(tpr[0])


@dataclass(frozen=True)
class Advantage(_Membership):
    """The membership-inference advantage ``max_alpha (1 - alpha - f(alpha))`` of the symmetrised curve.

    Parameters
    ----------
    value : float
        The largest advantage allowed, in (0, 1).
    """

    name: ClassVar[str] = "advantage"
    words: ClassVar[str] = "the membership advantage TPR - FPR"
    symbols: ClassVar[str] = "advantage ≤ {value:g}"

    def __post_init__(self):
        object.__setattr__(self, "value", check_open_unit("advantage", self.value))

    def _of_mu(self, mu: float, upper: bool) -> float:  # 2 Phi(mu / 2) - 1, without cancellation
        if upper:
            return mia.gaussian_membership_bounds(mu, [0.0], [0.5])[1]
        return math.erf(mu / (2.0 * math.sqrt(2.0))) * ULPS_DOWN


class _AtLevel:
    """A target read at a level (an FPR or a prior): its value must exceed the level, and its closed form is the
    power of the Gaussian curve there."""

    level_name: ClassVar[str] = ""

    def __post_init__(self):
        _check_level(self, self.level_name)

    @property
    def level(self) -> float:
        return getattr(self, self.level_name)

    def _of_mu(self, mu: float, upper: bool) -> float:
        return _power_of_mu(mu, self.level, upper)


def _power_of_mu(mu: float, level: float, upper: bool) -> float:
    """The power ``1 - G_mu(level)`` of the symmetric Gaussian curve, rounded up (or down), at least ``level``."""
    low, up = tradeoff.gaussian_power_bounds(mu, level)
    return float(max((up if upper else low)[0], level))


@dataclass(frozen=True)
class TPR(_AtLevel, _Membership):
    """The membership-inference TPR at ``fpr``: ``1 - f(fpr)`` of the symmetrised curve.

    Parameters
    ----------
    value : float
        The largest TPR allowed, in ``(fpr, 1)`` (every mechanism reaches TPR = FPR).
    fpr : float
        In (0, 1).
    """

    fpr: float
    name: ClassVar[str] = "tpr"
    level_name: ClassVar[str] = "fpr"
    words: ClassVar[str] = "the membership TPR at FPR {fpr:g}"
    symbols: ClassVar[str] = "TPR ≤ {value:g} at FPR {fpr:g}"


@dataclass(frozen=True)
class ReRo(_AtLevel, Target):
    """The reconstruction success gamma at prior ``kappa``: the power ``1 - f(kappa)`` of the curve (ReRo paper
    Thm. 1); its lower end is the optimistic lattice's, at the same spacing (:func:`fdp.risk.rero` refines the
    spacing for a relative width of :data:`fdp.risk.RERO_RTOL`, so its bracket can be narrower, inside this one).

    Parameters
    ----------
    value : float
        The largest gamma allowed, in ``(kappa, 1)`` (every mechanism reaches gamma = kappa).
    kappa : float
        The prior success probability, in (0, 1).
    """

    kappa: float
    name: ClassVar[str] = "rero"
    level_name: ClassVar[str] = "kappa"
    words: ClassVar[str] = "the reconstruction success at prior {kappa:g} (ReRo)"
    symbols: ClassVar[str] = "ReRo γ ≤ {value:g} at κ = {kappa:g}"

    def lattice(self, mechanism: Mechanism, discretization: float) -> float:
        # the power, without the cancellation of 1 - f(kappa) at tiny kappa
        curve = pld.certified_lower_curve(mechanism, discretization=discretization, level_min=_level_min(self.kappa))
        return float(max(curve.power(self.kappa), self.kappa))

    def optimistic(self, mechanism: Mechanism, discretization: float) -> float | None:
        bracket = pld.tradeoff_bracket(mechanism, discretization=discretization, level_min=self.kappa)
        return float(bracket.gamma(self.kappa)[0])


@dataclass(frozen=True)
class RTMTPR(_AtLevel, Target):
    """The TPR at ``fpr`` of the relaxed-threat-model adversary (RTM paper), who sees the magnitude of the noisy sum
    in ``dimension`` dimensions: read off the symmetrised tensor composition
    (:func:`fdp.accounting.rtm.composition.tensor_composition`), pessimistic for the upper end, optimistic (on a
    lattice :data:`fdp.accounting.rtm.composition.OPTIMISTIC_REFINEMENT` times finer) for the lower end.  The DP adversary's TPR
    caps it (RTM paper Lemma 6).

    Parameters
    ----------
    value : float
        The largest TPR allowed, in ``(fpr, 1)``.
    fpr : float
        In (0, 1).
    dimension : int, default 1
        The dimension of the release (1 is the RTM paper's worst case).
    """

    fpr: float
    dimension: int = 1
    name: ClassVar[str] = "rtm_tpr"
    level_name: ClassVar[str] = "fpr"
    words: ClassVar[str] = "the relaxed-threat-model TPR at FPR {fpr:g} (d = {dimension})"
    symbols: ClassVar[str] = "RTM TPR ≤ {value:g} at FPR {fpr:g}, d = {dimension}"
    exact_at_full_batch: ClassVar[bool] = False

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "dimension", check_positive_int("dimension", self.dimension))

    def default_discretization(self, mechanism: Mechanism) -> float:
        return 1e-4

    def lattice(self, mechanism: Mechanism, discretization: float) -> float:
        j = rtm.tensor_composition(mechanism, self.dimension, discretization=discretization)
        return float(mia.membership_bounds(tradeoff.symmetrise(j), [self.fpr], [0.5])[0][0])

    def optimistic(self, mechanism: Mechanism, discretization: float) -> float | None:
        # ten times finer than the pessimistic side (its error is first order in steps * h), less its FFT slack
        side = rtm.tensor_optimistic_curve(mechanism, self.dimension, discretization=discretization)
        return float(side.membership_lower([self.fpr])[0][0])


#: The targets by their names on the command line and in JSON.
TARGETS = {t.name: t for t in (Epsilon, Mu, Advantage, TPR, ReRo, RTMTPR)}


def named(name: str, value: float, level: float | None = None, *, delta: float = 1e-5, dimension: int = 1,
          where: str | None = None) -> Target:
    """The target called ``name`` (a key of :data:`TARGETS`), from the loose form a notebook parameter or a flag
    carries: ``level`` is the FPR of ``"tpr"`` and ``"rtm_tpr"`` or the prior of ``"rero"``; ``delta`` goes to
    ``"epsilon"`` and ``dimension`` to ``"rtm_tpr"``.

    Parameters
    ----------
    name : str
    value : float
    level : float, optional
    delta : float, default 1e-5
    dimension : int, default 1
    where : str, optional
        Where the target comes from, put before an error's message (``"calibration_targets[1]"``).

    Returns
    -------
    Target

    Examples
    --------
    >>> named("tpr", 0.05, 1e-3)
    TPR(value=0.05, fpr=0.001)
    >>> named("advantage", 2.0, where="targets[0]")
    Traceback (most recent call last):
    ...
    ValueError: targets[0]: advantage must lie in (0, 1), got 2.0
    """
    try:
        if name not in TARGETS:
            raise ValueError(f"target must be one of {tuple(TARGETS)}, got {name!r}")
        cls = TARGETS[name]
        level_names = [f.name for f in fields(cls) if f.name in ("fpr", "kappa")]
        if level is not None and not level_names:
            raise ValueError(f"{name} takes no level (an FPR or a prior), got {level!r}")
        if level is None and level_names:
            raise ValueError(f"{spelled(level_names[0])} is required with {spelled(name)}")
        kwargs = {level_names[0]: level} if level_names else {}
        if cls is Epsilon:
            kwargs["delta"] = delta
        if cls is RTMTPR:
            kwargs["dimension"] = dimension
        return cls(value, **kwargs)
    except ValueError as exc:
        if where:
            raise ValueError(f"{where}: {exc}") from None
        raise
