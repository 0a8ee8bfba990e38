"""How the approximate ReRo bounds compare with a certified one (the ReRo paper, Kaissis et al. 2023a, Fig. 1, App. Fig. 2).

For a mechanism and a prior success probability kappa, ``gamma = 1 - f(kappa)`` is computed four ways:

* certified: the PLD bracket (:func:`fdp.accounting.pld.tradeoff_bracket`), or the closed form of Corollary 2 for
  full-batch Gaussian noise (:func:`certified_gamma`);
* the 4th-order Edgeworth approximation (:func:`edgeworth_gamma`, NaN where the truncated series is not a distribution);
* the CLT approximation (:func:`fdp.accounting.edgeworth.clt_curve`);
* Algorithm 1 of Hayes et al., Monte Carlo with a confidence interval (:func:`fdp.accounting.montecarlo.gamma_mc`).

:func:`gamma_sweep` evaluates them along effect sizes at one kappa (Figure 1a-d) and :func:`gamma_curves` along
kappa for one mechanism (Figure 1e and App. Figure 2), each timed.  :func:`gamma_threat_models` sets the bound under
the DP threat model beside the one under the relaxed threat model of the RTM paper (its App. Figure 7).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..accounting import edgeworth, montecarlo, pld, rtm
from ..accounting.privacy_loss import Mechanism, subsampled, takes_mechanism
from ..curves import rero, tradeoff
from ..validation import check_array_in, check_open_unit, spelled

__all__ = ["certified_gamma", "edgeworth_gamma", "figure_epsilon", "GammaSweep", "gamma_sweep", "GammaCurves", "gamma_curves",
           "gamma_threat_models"]


@takes_mechanism
def certified_gamma(mechanism: Mechanism, kappa, *, discretization: float = 1e-3, max_grid: int = 4000):
    """The certified bracket ``(lower, upper)`` of gamma at ``kappa``: the closed form of the ReRo paper's Corollary 2
    for full-batch Gaussian noise (both ends equal), else the PLD bracket at ``discretization`` (lattice of at most
    ``max_grid`` points).

    Parameters
    ----------
    mechanism : Mechanism
    kappa : float or array_like
        In (0, 1).
    discretization : float, default 1e-3
        The PLD lattice spacing.
    max_grid : int, default 4000
        The most lattice points of one step.

    Returns
    -------
    (lower, upper)
        Floats or arrays of the shape of ``kappa``.

    References
    ----------
    Kaissis et al. (2023a) Thm. 1, Cor. 2.

    Examples
    --------
    >>> low, up = certified_gamma(Mechanism("gaussian", 1.0, 1.0, 4), 0.1)  # G_2 at kappa 0.1
    >>> bool(low == up == rero.gamma(tradeoff.gaussian(2.0), 0.1))
    True
    """
    noise, sigma, p, steps = mechanism.args
    if noise == "gaussian" and p == 1.0:
        exact = rero.gamma(tradeoff.gaussian_composition(1.0 / sigma, steps=steps), kappa)
        return exact, exact
    return pld.tradeoff_bracket(mechanism, discretization=discretization, max_grid=max_grid).gamma(kappa)


@takes_mechanism
def edgeworth_gamma(mechanism: Mechanism, kappa):
    """The 4th-order Edgeworth gamma (:func:`fdp.accounting.edgeworth.gamma_edgeworth`), NaN where the truncated
    series is not a distribution (the library refuses it; a plot leaves a gap there).

    Parameters
    ----------
    mechanism : Mechanism
    kappa : float or array_like
        In (0, 1).

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> bool(0.1 < edgeworth_gamma(Mechanism("gaussian", 1.0, 0.1, 100), 0.1) < 1)
    True
    """
    kappa = check_array_in("kappa", kappa, 0.0, 1.0, open_low=True, open_high=True)
    try:  # the inputs are checked: a failure here is the series (not a distribution, or its cumulants out of range)
        return edgeworth.gamma_edgeworth(mechanism, kappa)
    except (ValueError, ZeroDivisionError, OverflowError):
        return np.full(np.shape(kappa), np.nan)


@takes_mechanism
def figure_epsilon(mechanism: Mechanism, delta: float, discretization: float = 1e-3) -> float:
    """The epsilon the ReRo paper's Figure 1 quotes for a mechanism: pure DP ``N log(1 + p (e^{1/b} - 1))`` for
    Laplace noise, else epsilon at ``delta`` of the pessimistic PLD at ``discretization``.

    Parameters
    ----------
    mechanism : Mechanism
    delta : float
        In (0, 1); not used for Laplace noise.
    discretization : float, default 1e-3
        The PLD lattice spacing.

    Returns
    -------
    float

    Examples
    --------
    >>> round(figure_epsilon(Mechanism("laplace", 0.5, 1.0, 10), 1e-6), 6)  # 10 steps of pure 2-DP
    20.0
    """
    noise, b, p, steps = mechanism.args
    delta = check_open_unit("delta", delta)
    if noise == "laplace":
        return float(steps * subsampled(1.0 / b, p))
    eps = pld.epsilon_for_delta(pld.mechanism_pld(mechanism, discretization=discretization), delta)
    if not np.isfinite(eps):
        raise ValueError(f"{spelled('delta')}={delta!r} lies below what the PLD at discretization={discretization!r} resolves (its epsilon "
                         "is infinite there); take a larger delta")
    return eps


@dataclass(frozen=True, kw_only=True)
class _Compared:
    """The certified bracket of gamma and the two approximations, on one axis (the subclasses name it)."""

    lower: np.ndarray
    upper: np.ndarray
    edgeworth: np.ndarray
    clt: np.ndarray
    seconds: dict = field(repr=False)

    @property
    def truth(self) -> np.ndarray:
        """The bracket's midpoint (for plotting; errors are measured to the farther end, :meth:`error`)."""
        return 0.5 * (self.lower + self.upper)

    def error(self, values) -> np.ndarray:
        """A certified upper bound on ``|values - gamma|`` at each point: the distance to the farther end of the
        bracket (the exact gamma lies in it); NaN where ``values`` is NaN."""
        values = np.asarray(values, dtype=float)
        return np.maximum(np.abs(values - self.lower), np.abs(values - self.upper))


@dataclass(frozen=True, kw_only=True)
class GammaSweep(_Compared):
    """gamma at one kappa along effect sizes, by each method (arrays over ``effect_sizes``).

    Attributes
    ----------
    effect_sizes : numpy.ndarray
        ``1 / noise_multiplier`` of each point.
    lower, upper : numpy.ndarray
        The certified bracket (:func:`certified_gamma`).
    edgeworth, clt : numpy.ndarray
        The approximations (NaN where Edgeworth is not a distribution).
    mc, mc_lower, mc_upper : numpy.ndarray
        Algorithm 1's estimate and confidence interval.
    mc_collapsed : numpy.ndarray
        Where Algorithm 1 flags its own collapse (and reports ``[kappa, 1]``).
    seconds : dict
        Time spent by ``"bracket"``, ``"edgeworth"`` and ``"mc"`` over the sweep.
    """

    effect_sizes: np.ndarray
    mc: np.ndarray
    mc_lower: np.ndarray
    mc_upper: np.ndarray
    mc_collapsed: np.ndarray

    def errors(self) -> dict:
        """Largest error of each approximation, certified (``error``: at most this far from the exact gamma), with
        the points where Edgeworth is not a distribution (``invalid``; NaN error if everywhere), Algorithm 1's
        intervals that miss the bracket (``mc_miss``) and its flagged collapses (``mc_collapsed``)."""
        valid = np.isfinite(self.edgeworth)
        return dict(ew_gap=float(np.max(self.error(self.edgeworth)[valid])) if valid.any() else np.nan,
                    invalid=int(np.sum(~valid)), clt_gap=float(np.max(self.error(self.clt))),
                    mc_gap=float(np.max(self.error(self.mc))),
                    mc_miss=int(np.sum((self.mc_lower > self.upper) | (self.mc_upper < self.lower))),
                    mc_collapsed=int(np.sum(self.mc_collapsed)))


def gamma_sweep(noise: str, sampling_rate: float, steps: int, effect_sizes, kappa: float, *, mc_samples: int = 1_000_000,
                mc_seed: int = 0, discretization: float = 1e-3, max_grid: int = 4000, n_jobs: int = 1) -> GammaSweep:
    """gamma at ``kappa`` along ``effect_sizes`` (``1 / noise_multiplier``) of ``steps``-fold subsampled ``noise``:
    certified, Edgeworth, CLT and Algorithm 1 (``mc_samples`` draws; the i-th point seeded ``mc_seed + i``).

    Parameters
    ----------
    noise : {"gaussian", "laplace"}
    sampling_rate : float
        In (0, 1].
    steps : int
    effect_sizes : array_like
        Each > 0.
    kappa : float
        In (0, 1).
    mc_samples, mc_seed : int
        Algorithm 1's draws per point and first seed.
    discretization : float, default 1e-3
    max_grid : int, default 4000
        The bracket's lattice (:func:`certified_gamma`).
    n_jobs : int, default 1
        Algorithm 1's workers.

    Returns
    -------
    GammaSweep

    References
    ----------
    Kaissis et al. (2023a) Fig. 1a-d; Hayes et al. (2023) Alg. 1.

    Examples
    --------
    >>> s = gamma_sweep("gaussian", 1.0, 4, [1.0], 0.1, mc_samples=20_000)
    >>> bool(s.lower[0] == s.upper[0] and s.mc_lower[0] <= s.upper[0] <= s.mc_upper[0])
    True
    """
    if np.ndim(effect_sizes) > 1:
        raise ValueError(f"effect_sizes must be a number or a 1-d list of numbers, got shape {np.shape(effect_sizes)}")
    mus = check_array_in("effect_sizes", np.atleast_1d(effect_sizes), 0.0, np.inf, open_low=True)
    kappa = check_open_unit("kappa", kappa)
    montecarlo.check_samples_for_kappa(mc_samples, kappa, "mc_samples")
    rows = {k: [] for k in ("lower", "upper", "edgeworth", "clt", "mc", "mc_lower", "mc_upper", "mc_collapsed")}
    seconds = dict(bracket=0.0, edgeworth=0.0, mc=0.0)
    for i, mu in enumerate(mus):
        mechanism = Mechanism(noise, 1.0 / mu, sampling_rate, steps)
        t0 = time.perf_counter()
        low, up = certified_gamma(mechanism, kappa, discretization=discretization, max_grid=max_grid)
        t1 = time.perf_counter()
        ew = edgeworth_gamma(mechanism, kappa)
        t2 = time.perf_counter()
        mc = montecarlo.gamma_mc(mechanism, [kappa], samples=mc_samples, seed=mc_seed + i, n_jobs=n_jobs)
        t3 = time.perf_counter()
        seconds["bracket"] += t1 - t0
        seconds["edgeworth"] += t2 - t1
        seconds["mc"] += t3 - t2
        for key, value in (("lower", low), ("upper", up), ("edgeworth", ew), ("mc", mc.estimate[0]),
                           ("mc_lower", mc.lower[0]), ("mc_upper", mc.upper[0]), ("mc_collapsed", mc.collapsed[0]),
                           ("clt", rero.gamma(edgeworth.clt_curve(mechanism), kappa))):
            rows[key].append(float(np.squeeze(value)))
    return GammaSweep(effect_sizes=mus, **{k: np.array(v) for k, v in rows.items()}, seconds=seconds)


@dataclass(frozen=True, kw_only=True)
class GammaCurves(_Compared):
    """gamma of one mechanism along kappa: the certified bracket, Edgeworth and the CLT (arrays over ``kappa``).

    Attributes
    ----------
    kappa, lower, upper, edgeworth, clt : numpy.ndarray
    seconds : dict
        Time of ``"bracket"`` and ``"edgeworth"``.
    """

    kappa: np.ndarray

    def relative_error(self, values) -> float:
        """A certified upper bound on the largest ``|values - gamma| / gamma`` over kappa (NaN points left out)."""
        return float(np.nanmax(self.error(values) / self.lower))

    @property
    def edgeworth_error(self) -> float:
        """Largest relative error of Edgeworth, certified (:meth:`relative_error`)."""
        return self.relative_error(self.edgeworth)

    @property
    def clt_vs_edgeworth(self) -> float:
        """Largest relative distance of the CLT to Edgeworth (the comparison of the paper's App. Figure 2)."""
        return float(np.nanmax(np.abs(self.clt - self.edgeworth) / self.edgeworth))

    @property
    def relative_width(self) -> float:
        """Largest width of the bracket relative to the truth."""
        return float(np.max((self.upper - self.lower) / self.truth))


@takes_mechanism
def gamma_curves(mechanism: Mechanism, kappa, *, discretization: float = 1e-4, level_min: float | None = None) -> GammaCurves:
    """gamma of ``mechanism`` at each ``kappa``: the PLD bracket (its lattice reaching down to ``level_min``, by default
    the smallest kappa), Edgeworth and the CLT, the first two timed.

    Parameters
    ----------
    mechanism : Mechanism
    kappa : array_like
        Each in (0, 1).
    discretization : float, default 1e-4
        The PLD lattice spacing.
    level_min : float, optional
        The smallest level the bracket's lattice resolves.

    Returns
    -------
    GammaCurves

    References
    ----------
    Kaissis et al. (2023a) Fig. 1e, App. Fig. 2.

    Examples
    --------
    >>> c = gamma_curves(Mechanism("gaussian", 2.0, 0.1, 100), [1e-3, 0.1])
    >>> bool(np.all(c.lower <= c.upper)), c.relative_width < 1e-3
    (True, True)
    """
    kappas = check_array_in("kappa", np.atleast_1d(kappa), 0.0, 1.0, open_low=True, open_high=True)
    level_min = float(kappas.min()) if level_min is None else level_min
    t0 = time.perf_counter()
    low, up = pld.tradeoff_bracket(mechanism, discretization=discretization, level_min=level_min).gamma(kappas)
    t1 = time.perf_counter()
    ew = edgeworth_gamma(mechanism, kappas)
    t2 = time.perf_counter()
    clt = rero.gamma(edgeworth.clt_curve(mechanism), kappas)
    return GammaCurves(kappa=kappas, lower=np.asarray(low), upper=np.asarray(up), edgeworth=np.asarray(ew), clt=np.asarray(clt),
                       seconds=dict(bracket=t1 - t0, edgeworth=t2 - t1))



@takes_mechanism
def gamma_threat_models(mechanism: Mechanism, kappa: float, dimension: int = 1, *, discretization: float = 1e-4,
                        rtm_discretization: float = 1e-4) -> dict:
    """gamma at ``kappa`` of Gaussian DP-SGD under the DP threat model (the tight PLD curve, add direction), under the
    relaxed threat model (reading (a): the tensor product of the one-step RTM curves in ``dimension`` d) and by the
    Edgeworth approximation the RTM paper used (NaN where it is not a distribution).

    Parameters
    ----------
    mechanism : Mechanism
        Gaussian noise.
    kappa : float
        In (0, 1).
    dimension : int, default 1
        d of the RTM curves.
    discretization, rtm_discretization : float, default 1e-4
        The lattice spacings of the PLD and of the RTM composition.

    Returns
    -------
    dict
        ``dp``, ``rtm`` and ``edgeworth``, floats.

    References
    ----------
    Kaissis et al. (2023b) App. 7.3, App. Fig. 7; Kaissis et al. (2023a) Thm. 1.

    Examples
    --------
    >>> g = gamma_threat_models(Mechanism("gaussian", 2.0, 0.1, 10), 0.1, discretization=1e-3, rtm_discretization=1e-3)
    >>> bool(0.1 <= g["rtm"] <= g["dp"] < 1)
    True
    """
    noise = mechanism.noise
    if noise != "gaussian":
        raise ValueError(f"mechanism: the RTM curves here are for Gaussian noise, got {noise!r}")
    kappa = check_open_unit("kappa", kappa)
    dp = pld.tradeoff_curve(pld.mechanism_pld(mechanism, discretization=discretization), "add")
    relaxed = rtm.tensor_composition(mechanism, dimension, discretization=rtm_discretization)
    return dict(dp=float(rero.gamma(dp, kappa)), rtm=float(rero.gamma(relaxed, kappa)), edgeworth=float(edgeworth_gamma(mechanism, kappa)))
