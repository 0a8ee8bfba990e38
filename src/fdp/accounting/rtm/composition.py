"""N releases of the subsampled Gaussian (or Laplace) mechanism under the relaxed threat model (RTM paper Sec. 4,
App. 7.3): the tensor product of the one-step curves on a certified lattice (reading (a), :func:`tensor_composition`,
and its bracket :func:`tensor_bracket`), or one statistic of all releases (reading (b), :func:`sum_composition`)."""

from __future__ import annotations

import math

import numpy as np
from scipy import special
from scipy.stats import binom, chi2, ncx2

from ...curves import tradeoff
from ...validation import check_array_in, check_discretization, check_positive_int, spelled
from .. import lattice
from ..pld import Bracket, OptimisticCurve
from ..privacy_loss import Mechanism, subsampled, takes_mechanism
from .statistics import Exponential, FoldedLaplace

__all__ = [
    "DEFAULT_TAIL", "tensor_composition", "tensor_bracket", "tensor_optimistic_curve", "sum_composition", "SUM_STATISTICS", "READINGS",
    "composed_subsampled_gaussian", "composed_curve", "OPTIMISTIC_REFINEMENT",
]

#: How much finer the optimistic lattice of :func:`tensor_bracket` is than the pessimistic one: its error is
#: first order in steps x spacing, the pessimistic one's second order.
OPTIMISTIC_REFINEMENT = 10


# ---------------------------------------------------------------------------------------------
# Non-adaptive composition of subsampled mechanisms (Sec. 4, App. 7.3)
# ---------------------------------------------------------------------------------------------
#
# The paper composes the SGM "through direct composition of the test statistics as described in
# [Dong et al.], Definition 3.1" (Sec. 4) and, for the experiments, "computed the product
# distributions of the test statistics" by numerical integration (App. 7.3).  Two readings:
#
# (a) "tensor": the f-DP tensor product of the N one-step RTM curves, j_p^{(x)N} = T(P^N, Q^N) with
#     P, Q the laws of one step's magnitude statistic (Dong et al. Def. 3.1): the adversary
#     tests each release by its magnitude and combines the N magnitudes optimally;
# (b) "sum": one statistic of all N releases, as in the proof of Lemma 8 (eq. 42): the squared
#     norm of the sum, whose law under H1 is a mixture over the binomial number of steps in
#     which the target was sampled (the shift has a common direction in every release).


def _log_hyp0f1(b: float, x: np.ndarray) -> np.ndarray:
    """``log 0F1(; b; x^2 / 4)`` for ``x >= 0``: the series where ``x^2 / (4 b)`` is small, else through the scaled
    Bessel function ``I_{b-1}(x) e^{-x}`` (DLMF 10.39.9), else (where that underflows: large order, moderate x)
    through ``scipy.special.hyp0f1``; NaN where none of them is finite."""
    z = 0.25 * x * x
    out = np.full_like(x, np.nan)
    small = z < 1e-4 * b  # log 0F1 = z/b - z^2/(2 b^2 (b+1)) + O((z/b)^3)
    out[small] = z[small] / b - z[small] ** 2 / (2.0 * b * b * (b + 1.0))
    rest = ~small
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        xr = x[rest]
        out[rest] = special.gammaln(b) + (1.0 - b) * np.log(0.5 * xr) + np.log(special.ive(b - 1.0, xr)) + xr
        bad = rest & ~np.isfinite(out)
        if np.any(bad):
            out[bad] = np.log(special.hyp0f1(b, z[bad]))
    out[~np.isfinite(out)] = np.nan
    return out


class _MagnitudeStatistic:
    """One step's RTM statistic ``R = ||theta||`` (H0: no target; H1: target sampled with rate p).

    Gaussian (sigma = 1, shift mu): R^2 ~ chi2_d under H0 and (1 - p) chi2_d + p chi2_d(mu^2)
    under H1; likelihood ratio ``1 - p + p exp(-mu^2/2) 0F1(; d/2; mu^2 R^2 / 4)`` (``cosh(mu R)``
    for d = 1), increasing in R, unbounded.  Laplace (b = 1, d = 1): R ~ Exp(1) under H0 and
    (1 - p) Exp(1) + p FoldL(mu) under H1; ratio ``1 - p + p exp(R - mu) cosh(R)`` for R < mu,
    constant ``1 - p + p cosh(mu)`` above (an atom of the loss).
    """

    def __init__(self, mechanism: str, mu: float, p: float, d: int, tail: float):
        self.mechanism, self.mu, self.p, self.d = mechanism, mu, p, d
        if mechanism == "gaussian":
            self.r_top = mu + float(np.sqrt(chi2.isf(tail, d)))  # Q(R > r_top) <= tail
            self.bounded = False
        else:
            if mu > 700.0:  # e^-mu underflows in the folded Laplace law: its masses would all be 0
                raise ValueError(f"the RTM magnitude statistic of Laplace noise cannot be evaluated at effect size "
                                 f"mu={mu:g} (1/b above 700: e^-mu underflows double precision)")
            self.r_top = mu  # the loss is constant beyond mu
            self.bounded = True
        self.l_min = float(self.loss(np.array([0.0]))[0])
        self.l_top = float(self.loss(np.array([self.r_top]))[0])
        grid = np.linspace(0.0, self.r_top, 2001)
        losses = self.loss(grid)
        if not (np.all(np.isfinite(losses)) and np.all(np.diff(losses) >= -1e-12 * (1.0 + np.abs(losses[1:])))):
            raise ValueError(f"the RTM magnitude statistic's likelihood ratio cannot be evaluated accurately in "
                             f"dimension d={d} at effect size mu={mu:g}; use a smaller {spelled('dimension')} (d = 1 is the worst case)")

    def _log_ratio(self, r):
        """log of the unsampled likelihood ratio g(r) = q_1(r) / q_0(r) (target always sampled)."""
        mu = self.mu
        if self.mechanism == "laplace":
            x = np.minimum(r, mu)
            return x - mu + x + np.log1p(np.exp(-2.0 * x)) - np.log(2.0)  # x - mu + log cosh x
        x = mu * r
        if self.d == 1:
            log0f1 = x + np.log1p(np.exp(-2.0 * x)) - np.log(2.0)  # log cosh(mu r)
        else:
            log0f1 = _log_hyp0f1(0.5 * self.d, np.asarray(x, dtype=float))
        return -0.5 * mu * mu + log0f1

    def loss(self, r):
        """Per-step privacy loss of the statistic, ``log(q(r) / p(r))``, non-decreasing in r."""
        return subsampled(self._log_ratio(np.asarray(r, dtype=float)), self.p)

    def _cdf_sf(self, r):
        """(P(R <= r), P(R > r)) under H0 and H1, each as (cdf, sf) pairs."""
        r = np.asarray(r, dtype=float)
        p = self.p
        if self.mechanism == "gaussian":
            t = r * r
            c0, s0 = chi2.cdf(t, self.d), chi2.sf(t, self.d)
            c1 = ncx2.cdf(t, self.d, self.mu**2)
            s1 = np.ones_like(c1)
            upper = c1 > 0.5  # ncx2.sf only where it is small (it can overflow at tiny t)
            s1[upper] = ncx2.sf(t[upper], self.d, self.mu**2)
            s1[~upper] = 1.0 - c1[~upper]
        else:
            e, f = Exponential(1.0), FoldedLaplace(self.mu, 1.0)
            c0, s0, c1, s1 = e.cdf(r), e.sf(r), f.cdf(r), f.sf(r)
        return (c0, s0), ((1.0 - p) * c0 + p * c1, (1.0 - p) * s0 + p * s1)

    def cell_masses(self, bounds):
        """P- and Q-masses of the cells (bounds[k], bounds[k+1]] (the last bound may be inf)."""
        out = []
        for cdf, sf in self._cdf_sf(bounds):
            lower_half = cdf[1:] <= 0.5
            out.append(np.clip(np.where(lower_half, cdf[1:] - cdf[:-1], sf[:-1] - sf[1:]), 0.0, None))
        return out[0], out[1]

    def radius_of_loss(self, levels, iters: int = 60):
        """``inf{r >= 0 : loss(r) >= level}`` by vectorised bisection on [0, r_hi]."""
        levels = np.asarray(levels, dtype=float)
        hi_r = self.r_top
        while self.loss(np.array([hi_r]))[0] < levels.max() and not self.bounded:
            hi_r *= 2.0
        lo, hi = np.zeros_like(levels), np.full_like(levels, hi_r)
        for _ in range(iters):
            mid = 0.5 * (lo + hi)
            above = self.loss(mid) >= levels
            hi = np.where(above, mid, hi)
            lo = np.where(above, lo, mid)
        return np.where(levels <= self.l_min, 0.0, hi)


def _one_step_lattice(stat: _MagnitudeStatistic, h: float, pessimistic: bool, tail: float):
    """The law of one step's loss under H1 on the lattice ``l_0 + k h`` (pld's Q-view).

    The statistic's range is cut into cells whose loss lies in ``(l_{k-1}, l_k]`` (lattice levels
    mapped back to radii, so both cell masses are exact CDF differences).  ``pessimistic``:
    connect-the-dots (each cell's Q-mass is split onto its two end points so that its P-mass is
    kept as well; a refinement of the true pair, error of order h^2 where the loss density is
    smooth (h^1.3 measured for the Gaussian, whose loss density is singular at r = 0); Q-mass beyond the
    truncation radius, at most ``tail``, goes to +inf).  Otherwise each cell is one atom at the
    lattice point below its loss (merging and lowering losses are garblings; the tail is dropped).
    Returns ``(l_0, q_masses, infinite_mass)``.
    """
    # lattice aligned on the largest loss, so that the atom of a bounded loss (Laplace) is a point
    cells = max(int(np.ceil((stat.l_top - stat.l_min) / h)), 1)
    levels = stat.l_top - h * np.arange(cells, -1, -1)  # l_0 <= l_min, ..., l_K = l_top
    bounds = stat.radius_of_loss(levels)
    bounds[0] = 0.0
    if stat.bounded:
        bounds[-1] = np.inf  # the loss is constant beyond r_top: the last cell takes the rest
    pm, qm = stat.cell_masses(bounds)  # cell k+1 of (l_k, l_{k+1}]
    infinite = 0.0 if stat.bounded else float(stat._cdf_sf(bounds[-1:])[1][1][0])
    masses = np.zeros(levels.size)
    if pessimistic:
        # q_up e^{-l_k} e^{-h} + q_down e^{-l_k} = P_c and q_up + q_down = Q_c
        with np.errstate(over="ignore", invalid="ignore"):
            q_up = (qm - pm * np.exp(levels[:-1])) / -np.expm1(-h)
        # at most the cell's Q-mass; all of it where e^l overflows (nan): moving mass up is pessimistic
        q_up = np.where(q_up <= qm, np.maximum(q_up, 0.0), qm)
        masses[1:] += q_up
        masses[:-1] += qm - q_up
        return levels[0], masses, infinite
    masses[:-1] += qm
    return levels[0], masses, 0.0


#: Q-mass cut from the statistic's tail (pessimistically: sent to infinite loss).
DEFAULT_TAIL = 1e-15


@takes_mechanism
def tensor_composition(
    mechanism: Mechanism,
    dimension: int = 1,
    *,
    discretization: float = 1e-3,
    pessimistic: bool = True,
    max_points: int = 300_000,
    tail: float = DEFAULT_TAIL,
) -> tradeoff.PiecewiseLinear:
    """Reading (a): the tensor product ``j_p^{(x)N}`` of N one-step RTM curves (Dong et al. Def. 3.1).

    ``T(P^N, Q^N)`` where P and Q are the laws of one step's magnitude statistic ``||theta||`` under
    H0 (no target) and H1 (target sampled with the mechanism's sampling rate p): for Gaussian noise (dimension d)
    ``chi2_d`` vs ``(1-p) chi2_d + p chi2_d(mu^2)`` (Thm. 2 with Lemma 9), for ``"laplace"``
    (d = 1) Exp vs ``(1-p) Exp + p FoldL(mu)`` (Thm. 1 with Lemma 9).  This is the
    adversary that tests each release by its magnitude and combines the N magnitudes by the
    Neyman-Pearson test (the sum of the per-step log likelihood ratios of the statistic).  Add
    direction; ``.inverse`` is ``(j_p^{-1})^{(x)N}``.  With one step it is ``j_p`` of Lemma 9.  The effect size ``mu``
    of the paper is ``1 / noise_multiplier``.

    Method: the per-step loss law under H1 on a lattice of spacing ``discretization`` (widened
    so that the one-step and the composed lattices have at most ``max_points`` points), composed by FFT (``dp_accounting``), read off with
    the Neyman-Pearson breakpoints of :mod:`fdp.accounting.pld`.  ``pessimistic=True`` gives a curve on or
    below the exact one (connect-the-dots, error of order h^1.3 to h^2 in the spacing), ``False``
    one on or above it (first order); together they bracket the exact curve.  Tails of mass below
    ``tail`` are cut (pessimistically: sent to infinite loss).

    Parameters
    ----------
    mechanism : Mechanism
        Gaussian or Laplace noise: the one-step effect size ``mu`` is ``1 / noise_multiplier``, ``p`` the sampling
        rate, ``N`` the steps.
    dimension : int, default 1
        Dimension (Gaussian only).
    discretization : float, default 1e-3
        Loss lattice spacing.
    pessimistic : bool, default True
        Which side of the lattice bracket.
    max_points : int, default 300,000
        Largest one-step lattice.
    tail : float, default 1e-15

    Returns
    -------
    PiecewiseLinear

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Thms. 1-2, Lemma 9; Dong, Roth, Su (2022) Def. 3.1.

    Examples
    --------
    >>> from fdp.accounting.rtm.closed_forms import gaussian
    >>> one = tensor_composition(Mechanism("gaussian", 1.0), discretization=1e-2)
    >>> bool(abs(one(0.1) - gaussian(1.0)(0.1)) < 0.01)  # one step: the RTM curve itself, up to the lattice
    True
    """
    return _tensor_curve(mechanism, dimension, discretization, pessimistic, max_points, tail)[0]


def _tensor_curve(mechanism: Mechanism, dimension, discretization, pessimistic, max_points,
                  tail) -> tuple[tradeoff.PiecewiseLinear, float]:
    """:func:`tensor_composition`'s curve and, for the optimistic side, the absolute slack of its FFT composition's
    estimated rounding (the exact curve lies below ``curve + slack``; 0 on the pessimistic side, whose
    coefficients are raised by it instead)."""
    noise, noise_multiplier, sampling_rate, steps = mechanism.args
    mu = 1.0 / noise_multiplier
    d = check_positive_int("dimension", dimension)  # d in the RTM paper
    if noise == "laplace" and d != 1:
        raise ValueError(f"{spelled('dimension')} must be 1 for Laplace noise, got {d}")
    h = check_discretization("discretization", discretization)
    max_points = check_positive_int("max_points", max_points)
    tail = check_array_in("tail", tail, 0.0, 1e-3, open_low=True).item()
    name = f"RTM {noise} tensor composition mu={mu:g} p={sampling_rate:g} N={steps} d={d}"
    stat = _MagnitudeStatistic(noise, mu, sampling_rate, d, tail)
    h = max(h, (stat.l_top - stat.l_min) / max_points)
    l_0, masses, infinite = _one_step_lattice(stat, h, pessimistic, tail)
    if steps > 1:  # keep the composed lattice (after tail truncation) below max_points as well
        points = lattice.composed_points(masses, steps, tail / steps)
        if points > max_points:
            h *= points / max_points
            l_0, masses, infinite = _one_step_lattice(stat, h, pessimistic, tail)
    if steps > 1 and pessimistic:
        # the cells' rounding can leave the total Q-mass short of 1 (5.5e-17 at spacing 10), and N steps lose N
        # times that from every power (1e-4 at 10^12 steps): the shortfall goes to +inf, the pessimistic place
        # (one step keeps its tiny powers: there the read-off's betas carry the cells' sums from below)
        infinite += max(0.0, math.fsum([1.0, -infinite, *(-masses).tolist()]))
    base, out, inf_mass, slack = lattice.compose(l_0, h, masses, infinite, steps, pessimistic, tail / steps)
    # the powers 1 - beta are carried as cumulative masses: near alpha = 0, 1 - beta rounds away powers below 1e-16
    alphas, betas, powers = lattice.breakpoints(base, h, out, inf_mass, pessimistic=pessimistic)
    return tradeoff.piecewise_linear(alphas, betas, name=name, powers=powers), slack


@takes_mechanism
def tensor_bracket(
    mechanism: Mechanism,
    dimension: int = 1,
    *,
    discretization: float = 1e-4,
    tail: float = DEFAULT_TAIL,
) -> Bracket:
    """The RTM curve of a DP-SGD run (reading (a)) between its pessimistic and optimistic lattices.

    ``steps``-fold Poisson-subsampled noise of sensitivity 1 (effect size ``1 / noise_multiplier``) read by
    the RTM adversary of :func:`tensor_composition`: ``lower`` is the pessimistic lattice of spacing
    ``discretization`` (on or below the exact curve, so ``1 - lower`` bounds the RTM adversary's power
    from above), ``upper`` the optimistic one, built ten times finer because its error is first order
    in ``steps * discretization`` (the pessimistic one's is second order); both lattices are widened
    to at most 300,000 points, so for very long runs the optimistic side stays loose.  Add direction;
    :func:`fdp.curves.tradeoff.symmetrise` of either keeps its side.

    Parameters
    ----------
    mechanism : Mechanism
        DP-SGD's noise, sampling rate and steps; the one-step effect size is ``1 / noise_multiplier``.
    dimension : int, default 1
        Dimension of the release (Gaussian only); 1 is the RTM paper's worst case.
    discretization : float, default 1e-4
    tail : float, default 1e-15

    Returns
    -------
    fdp.accounting.pld.Bracket

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Thms. 1-2, Lemma 9, App. 7.3.

    Examples
    --------
    >>> b = tensor_bracket(Mechanism("gaussian", 2.0, 0.1, 100), discretization=1e-3)
    >>> bool(b.lower(0.01) <= b.upper(0.01) < b.lower(0.01) + 1e-3)
    True
    """
    d = dimension  # d in the RTM paper
    h = check_discretization("discretization", discretization)
    lower = tensor_composition(mechanism, d, discretization=h, pessimistic=True, tail=tail)
    side = tensor_optimistic_curve(mechanism, d, discretization=h, tail=tail)
    return Bracket(lower, side.upper, h, side.slack)


@takes_mechanism
def tensor_optimistic_curve(mechanism: Mechanism, dimension: int = 1, *, discretization: float = 1e-4,
                            tail: float = DEFAULT_TAIL) -> OptimisticCurve:
    """The upper side of :func:`tensor_bracket` alone, with the estimated rounding of its FFT composition: the exact
    RTM curve lies below ``upper + slack``.  What a lower end of an RTM risk reads, at half the bracket's work.

    Parameters
    ----------
    mechanism : Mechanism
        DP-SGD's noise, sampling rate and steps.
    dimension : int, default 1
        Dimension of the release (Gaussian only).
    discretization : float, default 1e-4
        The bracket's spacing; this side is built :data:`OPTIMISTIC_REFINEMENT` times finer.
    tail : float, default 1e-15

    Returns
    -------
    fdp.accounting.pld.OptimisticCurve

    Examples
    --------
    >>> run = Mechanism("gaussian", 2.0, 0.1, 100)
    >>> side = tensor_optimistic_curve(run, discretization=1e-3)
    >>> bool(side.upper(0.01) == tensor_bracket(run, discretization=1e-3).upper(0.01)) and side.slack > 0.0
    True
    """
    h = check_discretization("discretization", discretization)
    upper, slack = _tensor_curve(mechanism, dimension, h / OPTIMISTIC_REFINEMENT, False, 300_000, tail)
    return OptimisticCurve(upper, slack, h / OPTIMISTIC_REFINEMENT)


#: The statistics of the sum reading: the norm of the summed releases, or the sum of their squared norms.
SUM_STATISTICS = ("norm_of_sum", "sum_of_squares")


@takes_mechanism
def sum_composition(
    mechanism: Mechanism, dimension: int = 1, statistic: str = "norm_of_sum", points: int = 3000
) -> tradeoff.PiecewiseLinear:
    """Reading (b): the curve of one statistic of all N releases of the subsampled GM (Lemma 8).

    Release i is ``theta_i = B_i Delta v + N(0, sigma^2 I_d)`` with ``B_i ~ Ber(p)`` (target
    sampled) under H1 and ``B_i = 0`` under H0; ``K = sum B_i ~ Bin(N, p)``.  ``statistic``:

    * ``"norm_of_sum"`` (eq. 42, the average of Lemma 8; v common to all releases):
      ``||sum theta_i||^2 / (N sigma^2)`` is ``chi2_d`` under H0 and the binomial mixture of
      ``chi2_d(K^2 mu^2 / N)`` under H1.  For p = 1 this is :func:`~fdp.accounting.rtm.closed_forms.gaussian` with ``steps=N``
      (eqs. 47-48).
    * ``"sum_of_squares"`` (energy, no common direction needed): ``sum ||theta_i||^2 / sigma^2``
      is ``chi2_{N d}`` vs the mixture of ``chi2_{N d}(K mu^2)``; a function of the per-step
      magnitudes, so it lies on or above :func:`tensor_composition`.

    The likelihood ratio of either statistic is increasing (a mixture of non-central chi-square
    ratios), so "reject H0 for large values" is its Neyman-Pearson test.  Returns the add-direction
    curve, piecewise linear through ``points`` thresholds from each law's quantiles (and a range
    grid), with vertices on the exact curve, so it lies on or above it.  With N = 1 both are
    ``j_p`` of Lemma 9.

    Parameters
    ----------
    mechanism : Mechanism
        Gaussian noise: ``mu = Delta_2 / sigma`` is ``1 / noise_multiplier``, ``p`` the sampling rate, ``N`` the steps.
    dimension : int, default 1
    statistic : {"norm_of_sum", "sum_of_squares"}, default "norm_of_sum"
    points : int, default 3000
        Levels of the returned curve.

    Returns
    -------
    PiecewiseLinear

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Lemma 8, eqs. 42, 47-48.

    Examples
    --------
    >>> from fdp.accounting.rtm.closed_forms import gaussian
    >>> curve = sum_composition(Mechanism("gaussian", 1.0, 1.0, 4))
    >>> bool(abs(curve(0.1) - gaussian(1.0, steps=4)(0.1)) < 1e-3)  # p = 1: eqs. 47-48
    True
    """
    mu, sampling_rate, steps = _gaussian(mechanism)
    d = check_positive_int("dimension", dimension)  # d in the RTM paper
    points = check_positive_int("points", points)
    if statistic not in SUM_STATISTICS:
        raise ValueError(f"statistic must be one of {SUM_STATISTICS}, got {statistic!r}")
    name = f"RTM Gaussian {statistic} composition mu={mu:g} p={sampling_rate:g} N={steps} d={d}"
    k = np.arange(steps + 1)
    w = binom.pmf(k, steps, sampling_rate)
    keep = w > 1e-18 * w.max()
    k, w = k[keep], w[keep] / np.sum(w[keep])
    if statistic == "norm_of_sum":
        dof, nc = d, k.astype(float) ** 2 * mu**2 / steps
    else:
        dof, nc = d * steps, k.astype(float) * mu**2
    def mixture_cdf(x):
        out = np.zeros_like(x)
        for wk, lam in zip(w, nc):
            out += wk * (chi2.cdf(x, dof) if lam < np.finfo(float).tiny else ncx2.cdf(x, dof, lam))
        return out

    levels = np.logspace(-16, 0, points)
    top = float(np.max(nc[w > 1e-16])) if np.any(w > 1e-16) else float(nc.max())
    x_hi = (np.sqrt(top) + np.sqrt(chi2.isf(1e-16, dof))) ** 2
    x = np.unique(
        np.concatenate([chi2.isf(levels, dof), chi2.ppf(levels, dof), np.linspace(0.0, x_hi, points), [0.0]])
    )
    x = x[np.isfinite(x)]
    alphas = chi2.sf(x, dof)
    betas = np.clip(mixture_cdf(x), 0.0, 1.0)
    order = np.argsort(-x)  # largest threshold (smallest level) first
    alphas, betas = alphas[order], np.minimum.accumulate(betas[order])
    keep = alphas > 0.0
    alphas, betas = np.r_[0.0, alphas[keep], 1.0], np.r_[1.0, betas[keep], 0.0]
    last = np.r_[alphas[1:] > alphas[:-1], True]  # equal levels: keep the smallest type-II error
    alphas, betas = alphas[last], betas[last]
    if alphas[0] > 0.0:
        alphas, betas = np.r_[0.0, alphas], np.r_[1.0, betas]
    return tradeoff.piecewise_linear(alphas, betas, name=name)


#: The readings of a composed RTM run: the tensor product of the per-step curves, or one sum statistic.
READINGS = ("tensor", "sum")


def _gaussian(mechanism: Mechanism) -> tuple[float, float, int]:
    """The effect size ``1 / noise_multiplier``, the sampling rate and the steps of Gaussian noise."""
    if mechanism.noise != "gaussian":
        raise ValueError(f"mechanism must have Gaussian noise here, got {mechanism.noise!r}")
    return 1.0 / mechanism.noise_multiplier, mechanism.sampling_rate, mechanism.steps


@takes_mechanism
def composed_curve(mechanism: Mechanism, dimension: int = 1, reading: str = "tensor", **options) -> tradeoff.PiecewiseLinear:
    """The RTM curve ``j_N`` (add direction, not symmetrised) of ``steps`` releases in one of the two readings.

    Parameters
    ----------
    mechanism : Mechanism
        Gaussian noise; the effect size ``Delta / sigma`` of one release is ``1 / noise_multiplier``.
    dimension : int, default 1
    reading : {"tensor", "sum"}, default "tensor"
        :func:`tensor_composition` (reading (a)) or :func:`sum_composition` (reading (b)).
    **options
        Passed to that function.

    Returns
    -------
    PiecewiseLinear

    Examples
    --------
    >>> j = composed_curve(Mechanism("gaussian", 1.0, 0.5, 4), discretization=1e-2)
    >>> bool(j(0.2) <= 0.8)
    True
    """
    _gaussian(mechanism)
    if reading == "tensor":
        return tensor_composition(mechanism, dimension, **options)
    if reading == "sum":
        return sum_composition(mechanism, dimension, **options)
    raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")


@takes_mechanism
def composed_subsampled_gaussian(mechanism: Mechanism, dimension: int = 1, reading: str = "tensor",
                                 **options) -> tradeoff.PiecewiseLinear:
    """``J = C(j_N, j_N^{-1})`` of the N-fold non-adaptively composed SGM under the RTM.

    ``reading="tensor"``: ``j_N`` from :func:`tensor_composition` (reading (a), the f-DP tensor
    product of the one-step curves, Dong et al. Def. 3.1); ``reading="sum"``: from
    :func:`sum_composition` with the norm of the sum of all releases (reading (b), Lemma 8).
    ``options`` go to the underlying function.  J is the exact symmetrisation of the
    piecewise-linear j_N (:func:`fdp.curves.tradeoff.symmetrise` on the union of its coordinates).

    Parameters
    ----------
    mechanism : Mechanism
        Gaussian noise; the effect size of one release is ``1 / noise_multiplier``.
    dimension : int, default 1
    reading : {"tensor", "sum"}, default "tensor"
    **options
        Passed to :func:`tensor_composition` or :func:`sum_composition`.

    Returns
    -------
    PiecewiseLinear

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Lemmas 8-9, App. 7.3.

    Examples
    --------
    >>> curve = composed_subsampled_gaussian(Mechanism("gaussian", 1.0, 0.5, 4), discretization=1e-2)
    >>> bool(abs(curve(0.2) - curve.inverse(0.2)) < 1e-9)  # symmetrised
    True
    """
    d = dimension  # d in the RTM paper
    mu, p, steps = _gaussian(mechanism)
    J = tradeoff.symmetrise(composed_curve(mechanism, d, reading, **options))  # exact for breakpoints
    J.name = f"RTM J, composed SGM ({reading}) mu={mu:g} p={p:g} N={steps} d={d}"
    return J
