"""What the relaxed-threat-model adversary can do against a release, beside the DP adversary: the powers of the RTM
paper's Figure 2, the curves ``j``, ``J`` and ``f_dp`` of a release (the ``rtm`` command), and lambda-detection
resilience (Def. 3)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ...curves import tradeoff
from ...curves.tradeoff import TradeOffCurve
from ...formatting import ULPS_DOWN, past_subnormal_rounding
from ...result import Unpacks
from ...validation import check_array_in, check_nonnegative, check_positive_int, spelled
from .. import lattice
from ..pld import mechanism_pld, tradeoff_curve
from ..privacy_loss import Mechanism, takes_mechanism
from .closed_forms import gaussian, laplace
from .composition import composed_subsampled_gaussian, tensor_composition
from .subsampling import subsampled_gaussian

__all__ = ["ReleaseCurves", "release_curves", "RELEASES", "powers", "DRResult", "detection_resilience"]


@takes_mechanism
def powers(mechanism: Mechanism, alpha: float, grid, *, discretization: float = 1e-4,
           pld_discretization: float = 1e-4) -> dict:
    """The power at ``alpha`` of the relaxed-threat-model adversaries and of the DP one against the Gaussian mechanism
    (d = 1, effect size ``mu = 1 / noise_multiplier``), Poisson-subsampled at the mechanism's sampling rate p and
    composed over its N steps: the RTM paper's Figure 2b (one full-batch step) and 2c.

    The RTM curve j (its power and that of its inverse, ``1 - j^{-1}(alpha)``), its symmetrisation J on ``grid``, the
    DP curve (exact for one step: ``G_mu``, or its subsampled symmetrisation; the pessimistic PLD's for several steps)
    and the CLT curve ``G_{p sqrt(N (e^{mu^2} - 1))}`` the paper draws (power 1 where its effect size overflows).
    Several steps use the tensor composition of reading (a) on a lattice of spacing ``discretization``.  A
    symmetrisation from samples on a grid lies on or below the exact curve (:func:`fdp.curves.tradeoff.symmetrise`),
    and its power is taken at least the powers of the curves it symmetrises (the symmetrised curve lies below both),
    so J's power is never below j's, nor the DP power below the RTM one.

    Parameters
    ----------
    mechanism : Mechanism
        Gaussian noise: ``mu = Delta / sigma`` is ``1 / noise_multiplier``.
    alpha : float
        The type-I error, in (0, 1).
    grid : array_like
        The alpha grid of the symmetrisations.
    discretization, pld_discretization : float, default 1e-4

    Returns
    -------
    dict
        ``j``, ``jinv``, ``J``, ``dp``, ``clt``: powers at ``alpha``.

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Fig. 2b-c, Lemma 9.

    Examples
    --------
    >>> w = powers(Mechanism("gaussian", 0.5), 0.01, np.linspace(0, 1, 501))
    >>> bool(w["j"] <= w["dp"] and w["J"] <= w["dp"])  # the relaxed adversary is never stronger
    True
    """
    noise, noise_multiplier, p, steps = mechanism.args
    if noise != "gaussian":
        raise ValueError(f"mechanism must have Gaussian noise here, got {noise!r}")
    mu = 1.0 / noise_multiplier
    if np.ndim(alpha) != 0:
        raise ValueError(f"{spelled('alpha')} must be one number in (0, 1), got {alpha!r}")
    a = np.array([check_array_in("alpha", alpha, 0.0, 1.0, open_low=True, open_high=True).item()])
    grid = check_array_in("grid", grid, 0.0, 1.0)
    dp_parts = ()  # the curves a symmetrised DP curve lies below
    if p == 1.0 and steps == 1:
        j = gaussian(mu, 1)
        big_j, dp = tradeoff.symmetrise(j, grid), tradeoff.gaussian(mu)
    elif steps == 1:
        j = tradeoff.subsample(gaussian(mu, 1), p)
        f = tradeoff.subsample(tradeoff.gaussian(mu), p)
        big_j, dp, dp_parts = subsampled_gaussian(mechanism, 1, grid), tradeoff.symmetrise(f, grid), (f.power(a)[0], 1.0 - f.inverse(a)[0])
    else:
        j = tensor_composition(mechanism, discretization=discretization)
        big_j = tradeoff.symmetrise(j)
        dp = tradeoff_curve(mechanism_pld(mechanism, discretization=pld_discretization), "symmetrised")
    power_j, power_jinv = float(j.power(a)[0]), 1.0 - float(j.inverse(a)[0])
    with np.errstate(over="ignore"):
        clt_mu = p * np.sqrt(steps * np.expm1(mu**2))
    return dict(j=power_j, jinv=power_jinv, J=max(float(big_j.power(a)[0]), power_j, power_jinv),
                dp=max([float(dp.power(a)[0]), *map(float, dp_parts)]),
                clt=1.0 if not np.isfinite(clt_mu) else float(tradeoff.gaussian(clt_mu).power(a)[0]))


# ---------------------------------------------------------------------------------------------
# lambda-detection resilience (Def. 3)
# ---------------------------------------------------------------------------------------------


#: The largest effect size :func:`release_curves` takes for Gaussian noise: far beyond any privacy (mu = 40 already
#: is), and where its magnitude statistics' distributions stay finite (at 1e10 they returned NaN, beyond 1.3e154 mu^2
#: overflowed).
MU_MAX = 100.0


@dataclass(frozen=True)
class ReleaseCurves:
    """The curves of one mechanism under the RTM, beside its usual DP curve (:func:`release_curves`).

    Attributes
    ----------
    j : TradeOffCurve
        ``T(H0, H1)`` of the magnitude test; its inverse, the swapped test, is ``j.inverse``.
    J : TradeOffCurve
        ``C(j, j^{-1})``, the curve of lambda-DR (Def. 3).
    f_dp : TradeOffCurve
        The mechanism's trade-off curve under the usual threat model (the adversary knows the target).
    release : str
        What the adversary tests when the mechanism has several steps, in words.
    """

    j: TradeOffCurve
    J: TradeOffCurve
    f_dp: TradeOffCurve
    release: str

    def values(self, alpha) -> dict:
        """``j``, ``j^{-1}``, ``J`` and ``f_dp`` at the levels ``alpha``, each moved down past its roundings.

        A curve value is a type-II error, whose safe side is below.  Each value is moved down by a few ulps (near 1
        the folded-normal ``j = Phi(c - mu) - Phi(-c - mu)`` cancels to a few ulps of 1), by the relative margin
        2^-40 (1e-12) where it is below 1/2 (there its relative error is what matters: 3e-15 at alpha = 1 - 1e-14),
        and by two floats in the subnormal range (an exp's ulp and a product's); at alpha = 0 every curve here is
        exactly 1 (no test of level 0 has power), and that value is kept.  ``J`` lies below both ``j`` and ``j^{-1}``
        and is capped by them; a ``J`` symmetrised from samples lies on or below the exact one everywhere
        (:func:`fdp.curves.tradeoff.symmetrise`), within :data:`fdp.curves.tradeoff.SAMPLED_GAP` of it where the
        samples' refinement reached that.

        Parameters
        ----------
        alpha : array_like
            Levels in [0, 1].

        Returns
        -------
        dict
            ``"j"``, ``"j_inv"``, ``"J"``, ``"f_dp"``: lists of floats, one per level.

        Examples
        --------
        >>> v = release_curves(Mechanism("gaussian", 1.0), grid=np.linspace(0, 1, 1001)).values([0.0, 0.1])
        >>> v["j"][0], bool(v["f_dp"][1] <= v["J"][1] <= v["j"][1])
        (1.0, True)
        """
        alpha = np.atleast_1d(check_array_in("alpha", alpha, 0.0, 1.0))
        j, j_inv = (np.atleast_1d(np.asarray(curve(alpha), dtype=float)) for curve in (self.j, self.j.inverse))
        exact = {"j": j, "j_inv": j_inv, "J": np.minimum(np.atleast_1d(np.asarray(self.J(alpha), dtype=float)),
                                                         np.minimum(j, j_inv)),
                 "f_dp": np.atleast_1d(np.asarray(self.f_dp(alpha), dtype=float))}
        out = {}
        for key, values in exact.items():
            moved = np.maximum(values * np.where(values < 0.5, 1.0 - 2.0**-40, ULPS_DOWN), 0.0)
            moved = past_subnormal_rounding(moved, 0.0)
            out[key] = np.where(alpha == 0.0, values, moved).tolist()
        return out


#: The release models of several steps (:func:`release_curves`).
RELEASES = ("tensor", "averaged")


def _release_model(averaged: bool, steps: int) -> str:
    """What the RTM adversary tests when ``steps`` releases are composed (the two models differ: at mu 0.1, 100
    steps, alpha 1e-3 the averaged release gives j = 0.0110 below 1, the tensor reading 0.00131)."""
    if steps == 1:
        return "one release, tested by its magnitude"
    if averaged:
        return ("averaged: one test of the norm of the average of the releases (RTM paper Lemma 8: the Gaussian "
                "mechanism with mu sqrt(steps)); a DP-SGD run's RTM numbers (report, calibrate) use the tensor reading")
    return ("tensor: the releases tested jointly, each by its magnitude (tensor product of the per-step RTM curves); "
            "the reading of a DP-SGD run's RTM numbers in report and calibrate")


@takes_mechanism
def release_curves(mechanism: Mechanism, *, dimension: int = 1, release: Literal["tensor", "averaged"] = "tensor",
                   grid=None) -> ReleaseCurves:
    """The RTM curves ``j`` and ``J`` of ``steps`` releases of a mechanism, and its DP curve ``f_dp`` for comparison.

    The effect size of one step is ``mu = 1 / noise_multiplier``.

    * Laplace noise: ``mu = Delta_1 / b`` (Lemma 2); several steps composed by the tensor product of the one-step
      curves, ``f_dp`` from the composed PLD.
    * Gaussian noise in ``dimension`` dimensions with ``mu = Delta_2 / sigma`` (Lemma 4), each step
      Poisson-subsampled at the sampling rate.  ``release="tensor"``: DP-SGD's steps composed by the tensor reading
      (:func:`~fdp.accounting.rtm.composition.tensor_composition`), ``f_dp`` from the composed PLD (the closed form
      at rate 1).  ``release="averaged"`` (rate 1 only): the steps averaged into one release (Lemma 8: the Gaussian
      mechanism with ``mu sqrt(steps)``).  One release without subsampling is read by the closed forms either way.

    Composed PLDs use the loss spacing 1e-4; a lattice too large for memory is refused first.

    Parameters
    ----------
    mechanism : Mechanism
        Laplace noise without subsampling, or Gaussian noise (subsampled with the tensor reading only); the noise
        multiplier at least 0.01 for Gaussian noise (an effect size of at most 100: far beyond any privacy at 40).
    dimension : int, default 1
        Dimension of the release (1 is the worst case); Laplace: 1 only.
    release : {"tensor", "averaged"}, default "tensor"
        How several steps are read; ``"averaged"`` for Gaussian noise without subsampling only.
    grid : array_like, optional
        Levels at which ``J`` is sampled where it symmetrises a curve ``j`` without breakpoints (one step, or the
        averaged Gaussian release; default :func:`fdp.curves.tradeoff.default_grid`); a composed subsampled ``j`` is
        piecewise linear and symmetrised exactly.

    Returns
    -------
    ReleaseCurves

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Lemmas 2-5 and 8, Def. 3, App. 7.3.

    Examples
    --------
    >>> curves = release_curves(Mechanism("gaussian", 1.0))
    >>> round(float(curves.j(0.1)), 4) > round(float(curves.f_dp(0.1)), 4)  # not knowing the target costs power
    True
    """
    noise, noise_multiplier, p, steps = mechanism.args
    if release not in RELEASES:
        raise ValueError(f"release must be one of {RELEASES}, got {release!r}")
    # Gaussian statistics up to MU_MAX; the Laplace curves hold at any finite mu (beyond 745 they are 0 past alpha = 0)
    if noise == "gaussian" and noise_multiplier < 1.0 / MU_MAX:
        raise ValueError(f"{spelled('noise_multiplier')} must be at least {1.0 / MU_MAX:g} for Gaussian noise (an effect "
                         f"size of at most {MU_MAX:g}, where its magnitude statistics stay finite), got {noise_multiplier!r}")
    if noise not in ("laplace", "gaussian"):
        raise ValueError(f"mechanism must have Laplace or Gaussian noise, got {noise!r}")
    mu = 1.0 / noise_multiplier
    d = check_positive_int("dimension", dimension)
    if noise == "laplace" and release == "averaged":
        raise ValueError(f"{spelled('release')} 'averaged' is Lemma 8's model of Gaussian releases; Laplace noise is read by 'tensor'")
    if noise == "laplace" and d != 1:
        raise ValueError(f"{spelled('dimension')} must be 1 for Laplace noise (Lemma 2 is one-dimensional), got {d!r}")
    if noise == "laplace" and p != 1.0:
        raise ValueError(f"{spelled('sampling_rate')} must be 1 for Laplace noise (its subsampled RTM curve is not built), got {p!r}")
    if release == "averaged" and p != 1.0:
        raise ValueError(f"{spelled('sampling_rate')} must be 1 for the averaged release (Lemma 8 averages full releases), got {p!r}")
    averaged = noise == "gaussian" and p == 1.0 and (release == "averaged" or steps == 1)  # the closed forms
    if averaged and mu * math.sqrt(steps) > MU_MAX:  # the averaged release is one of effect mu sqrt(N)
        most = f"{math.floor((MU_MAX / mu) ** 2):,}" if mu > 1e-100 else f"{(MU_MAX / mu) ** 2:.4g}"
        raise ValueError(f"{spelled('steps')} must be at most {most} at mu={mu:g}: the averaged release "
                         f"of N steps has the effect size mu sqrt(N) (here {mu * math.sqrt(steps):.4g}), and its "
                         f"statistic's laws are evaluated up to {MU_MAX:g}")
    grid = tradeoff.default_grid() if grid is None else grid
    full_batch_gaussian = noise == "gaussian" and p == 1.0  # f_dp: the closed form G_{mu sqrt(N)}
    if not averaged and steps > 1 and not full_batch_gaussian:  # f_dp from a composed PLD: size first
        lattice.check_lattice_points(lattice.lattice_points(mechanism, 1e-4), "the DP curve f_dp",
                                     f"use fewer {spelled('steps')} or more noise (a larger {spelled('noise_multiplier')})")
    if noise == "laplace":
        if steps == 1:
            j, f_dp = laplace(mu), tradeoff.laplace(mu)
        else:
            j = tensor_composition(mechanism)
            f_dp = tradeoff_curve(mechanism_pld(mechanism, discretization=1e-4), "symmetrised")
        big_j = tradeoff.symmetrise(j, grid)
    elif averaged:
        j, f_dp = gaussian(mu, d, steps), tradeoff.gaussian_composition(mu, steps=steps)
        big_j = tradeoff.symmetrise(j, grid)
    else:
        if steps == 1:
            j, big_j = tradeoff.subsample(gaussian(mu, d), p), subsampled_gaussian(mechanism, d, grid)
        else:
            j = tensor_composition(mechanism, d)
            big_j = composed_subsampled_gaussian(mechanism, d)
        if full_batch_gaussian:
            f_dp = tradeoff.gaussian_composition(mu, steps=steps)
        else:
            f_dp = tradeoff_curve(mechanism_pld(mechanism, discretization=1e-4), "symmetrised")
    # the RTM adversary is weaker than the DP one (Lemma 6): j and J lie on or above f_dp, so where a lattice j falls
    # below f_dp (a vacuous j = 0 at mu = 1e-10, whose f_dp is 0.9 at alpha 0.1), or a closed form's inverse does (its
    # quantile rounded up where scipy's non-central chi-square underflows: 1e-50 at mu = 38, alpha = 1e-300, where
    # f_dp is 0.17), f_dp is the better lower bound
    j, big_j = _at_least(j, f_dp), _at_least(big_j, f_dp)
    return ReleaseCurves(j=j, J=big_j, f_dp=f_dp, release=_release_model(release == "averaged", steps))


def _at_least(curve: TradeOffCurve, floor: TradeOffCurve) -> TradeOffCurve:
    """``max(curve, floor)`` pointwise, for two lower bounds on one trade-off curve (``floor`` symmetric): again a
    lower bound on it, convex and non-increasing; its inverse is the maximum of the inverses."""
    return TradeOffCurve(lambda a: np.maximum(curve(a), floor(a)), lambda b: np.maximum(curve.inverse(b), floor(b)),
                         lambda a: np.minimum(curve.power(a), floor.power(a)), symmetric=curve.symmetric,
                         name=curve.name)


@dataclass(frozen=True)
class DRResult(Unpacks):
    """Outcome of :func:`detection_resilience`.

    Attributes
    ----------
    holds : bool
        Whether lambda-DR holds on the grid.
    worst_margin : float
        The smallest ``min(f, f^{-1}) - lambda``.
    worst_alpha : float
        Where it is attained.
    """

    holds: bool
    worst_margin: float  # min over the grid of min(f, f^{-1}) - lambda; negative = violated
    worst_alpha: float  # the level where it is attained


def detection_resilience(curve: TradeOffCurve, reference: TradeOffCurve, grid=None, atol: float = 1e-9) -> DRResult:
    """Decide lambda-DR (Def. 3): ``J = C(f, f^{-1}) >= lambda`` on ``grid``, up to ``atol``.

    ``curve`` is a mechanism's RTM curve (j or the symmetrised J), ``reference`` is lambda.
    Since lambda is convex, ``C(f, f^{-1}) >= lambda`` iff ``min(f, f^{-1}) >= lambda``, so the
    margin ``min(f(alpha), f^{-1}(alpha)) - lambda(alpha)`` is checked; both j and J give the
    same answer.  ``grid`` defaults to :func:`fdp.curves.tradeoff.default_grid`.

    Parameters
    ----------
    curve : TradeOffCurve
        The mechanism's RTM curve.
    reference : TradeOffCurve
        lambda.
    grid : array_like, optional
    atol : float, default 1e-9

    Returns
    -------
    DRResult

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Def. 3.

    Examples
    --------
    >>> from fdp.curves import tradeoff
    >>> detection_resilience(gaussian(1.0), tradeoff.gaussian(1.0)).holds  # j_GM lies above the DP curve (Lemma 6)
    True
    """
    atol = check_nonnegative("atol", atol)
    grid = tradeoff.default_grid() if grid is None else np.atleast_1d(check_array_in("grid", grid, 0.0, 1.0))
    margin = np.minimum(curve(grid), curve.inverse(grid)) - reference(grid)
    if not np.all(np.isfinite(margin)):
        raise ValueError(f"{curve.name} or {reference.name}: non-finite values on the grid")
    i = int(np.argmin(margin))
    return DRResult(bool(margin[i] >= -atol), float(margin[i]), float(grid[i]))
