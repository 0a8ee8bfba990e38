"""Relaxed-threat-model (RTM) trade-off curves (Kaissis, Kolek, Ziller, Riess, Rueckert 2023).

In the RTM the adversary knows D but not the target record x*, so it cannot evaluate q(D') and
tests the magnitude of the (centred) release instead of the likelihood ratio (Lemmas 2-5).
For each mechanism this module returns

* ``j = T(H0, H1)``: H0 = the magnitude statistic under M(D) (target absent), H1 = under
  M(D u {x*}) at the dominating shift ||q(D') - q(D)|| = Delta ("add" direction, :mod:`fdp.accounting.privacy_loss`);
* ``j.inverse`` = ``j^{-1}`` = T(H1, H0), the swapped test;
* ``J = C(j, j^{-1})`` = :func:`fdp.curves.tradeoff.symmetrise` (j), the curve used for lambda-DR (Def. 3).

Every curve is a :class:`fdp.curves.tradeoff.TradeOffCurve`, vectorised over the level alpha.
Effect sizes: ``mu = Delta_1 / b`` (Laplace), ``mu = Delta_2 / sigma`` (Gaussian).

Composition of subsampled mechanisms (Sec. 4: "direct composition of the test statistics as
described in [Dong et al.], Definition 3.1"; App. 7.3: "the product distributions of the test
statistics") has two readings, both implemented: (a) :func:`tensor_composition`, the f-DP tensor
product of the N one-step curves (each release tested by its magnitude, the N magnitudes combined
optimally); (b) :func:`sum_composition`, one statistic of all releases as in the proof of Lemma 8
(the norm of their sum, a binomial mixture under H1).  :func:`composed_subsampled_gaussian` gives
J for either, :func:`sandwich_noise` the noise calibration of App. 7.3.

Errata found while implementing (see the docstrings for details):
eq. 3 prints the branch point ``1/2 - exp(-mu)/2``; the correct one is ``1/2 - exp(-2 mu)/2``
(as in the folded-Laplace quantile of the proof). Lemma 8's statement lacks parentheses; from
eqs. 42-46 ``kappa_c = (Delta_a + Delta_b)^2 / (sigma_a^2 + sigma_b^2)``. In eq. 7 (and eq. 56)
the shift ``sqrt(2) N mu^2 / (2 d)`` should be ``N mu^2 / sqrt(2 d)``, and the right-hand side
``N sqrt(mu / (2 d))`` should be ``N mu^2 / sqrt(2 d)`` (eq. 59).
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

import numpy as np
from scipy import special
from scipy.stats import binom, chi2, ncx2, norm

from ..curves import tradeoff
from ..curves.tradeoff import TradeOffCurve
from ..validation import (
    check_array_in,
    check_discretization,
    check_nonnegative,
    check_positive,
    check_positive_int,
    check_sampling_rate,
)
from . import lattice
from .chisquare import SERIES_FROM, Chi2, NoncentralChi2
from .pld import Bracket, mechanism_pld, tradeoff_curve
from .privacy_loss import Mechanism, subsampled, takes_mechanism

__all__ = [
    "ReleaseCurves",
    "release_curves",
    "Exponential",
    "FoldedLaplace",
    "from_test_statistic",
    "laplace",
    "laplace_branch_error",
    "gaussian",
    "gaussian_1d",
    "composition_noncentrality",
    "gaussian_composition",
    "ASYMPTOTIC_FORMS",
    "DEFAULT_TAIL",
    "asymptotic",
    "asymptotic_gap",
    "subsampled_gaussian",
    "powers",
    "subsampled_laplace",
    "tensor_composition",
    "tensor_bracket",
    "sum_composition",
    "SUM_STATISTICS",
    "READINGS",
    "composed_subsampled_gaussian",
    "sandwich_noise",
    "DRResult",
    "detection_resilience",
    "WEIGHTINGS",
    "OPTIMISTIC_REFINEMENT",
]

#: How the releases of a sum statistic are weighted.
WEIGHTINGS = ("optimal", "inverse-variance", "mean")
#: How much finer the optimistic lattice of :func:`tensor_bracket` is than the pessimistic one: its error is
#: first order in steps x spacing, the pessimistic one's second order.
OPTIMISTIC_REFINEMENT = 10


# ---------------------------------------------------------------------------------------------
# Generic construction from a test statistic (Def. 2, eq. 1)
# ---------------------------------------------------------------------------------------------


def from_test_statistic(null, alternative, name: str = "RTM curve") -> TradeOffCurve:
    """Trade-off curve of the test "reject H0 when the statistic is large" (Def. 2, eq. 1).

    ``null`` (P) and ``alternative`` (Q) are the statistic's distributions under H0 and H1, any
    objects with vectorised ``cdf``, ``sf``, ``ppf``, ``isf`` (e.g. frozen ``scipy.stats``
    distributions).  Returns ``T(alpha) = Phi_Q(Psi_P^{-1}(alpha))`` with inverse
    ``T^{-1}(beta) = Psi_P(Phi_Q^{-1}(beta))`` (the swapped test) and power
    ``Psi_Q(Psi_P^{-1}(alpha))`` (taken as ``1 - T`` where T < 1/2).  The survival function
    and its inverse are used directly, so small levels keep their accuracy.

    Parameters
    ----------
    null, alternative : distribution
        The statistic's laws under H0 and H1 (vectorised ``cdf``, ``sf``, ``ppf``, ``isf``).
    name : str, default "RTM curve"

    Returns
    -------
    TradeOffCurve

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Def. 2, eq. 1.

    Examples
    --------
    >>> from scipy import stats
    >>> curve = from_test_statistic(stats.norm(0, 1), stats.norm(1, 1))  # a one-sided Gaussian test: f_1
    >>> from fdp.curves import tradeoff
    >>> bool(abs(curve(0.05) - tradeoff.gaussian(1.0)(0.05)) < 1e-12)
    True
    """

    def checked(values):
        values = np.asarray(values, dtype=float)
        if np.any(np.isnan(values)):
            raise ValueError(f"{name}: the statistic's distributions returned NaN (parameters out of numerical range)")
        return values

    def f(a):
        with np.errstate(divide="ignore", over="ignore"):
            return checked(alternative.cdf(null.isf(a)))

    def power(a):
        with np.errstate(divide="ignore", over="ignore"):
            x = np.atleast_1d(np.asarray(null.isf(a), dtype=float))
            beta = np.asarray(alternative.cdf(x), dtype=float)
            out = 1.0 - beta
            # where the power is small, use the survival function (only there: scipy's ncx2.sf
            # raises OverflowError at tiny x with a large non-centrality)
            upper = beta > 0.5
            out[upper] = alternative.sf(x[upper])
        return checked(out.reshape(np.shape(a)))

    def inverse(b):
        with np.errstate(divide="ignore", over="ignore"):
            return checked(null.sf(alternative.ppf(b)))

    return TradeOffCurve(f, inverse, power, name=name)


class Exponential:
    """Exp(b): the magnitude ``|theta|`` of Lap(0, b), the statistic under H0 (proof of Thm. 1).

    Parameters
    ----------
    b : float, default 1.0
        The Laplace scale, > 0.

    Examples
    --------
    >>> round(float(Exponential(2.0).sf(2.0)), 6)  # P(|theta| > 2) = e^{-2/b}
    0.367879
    """

    def __init__(self, b: float = 1.0):
        self.b = check_positive("b", b)

    def cdf(self, x):
        return -np.expm1(-np.asarray(x, dtype=float) / self.b)

    def sf(self, x):
        return np.exp(-np.asarray(x, dtype=float) / self.b)

    def ppf(self, q):
        return -self.b * np.log1p(-np.asarray(q, dtype=float))

    def isf(self, q):
        return -self.b * np.log(np.asarray(q, dtype=float))


class FoldedLaplace:
    """FoldL(Delta, b): the magnitude ``|theta|`` of Lap(Delta, b), the statistic under H1.

    CDF and quantile exactly as printed in the proof of Thm. 1 (Liu and Kozubowski 2015):
    ``Phi(x) = exp(-Delta/b) sinh(x/b)`` for ``x < Delta`` and ``1 - exp(-x/b) cosh(Delta/b)``
    above; the quantile switches branch at ``Phi(Delta) = 1/2 - exp(-2 Delta/b)/2``.

    Parameters
    ----------
    delta : float
        The shift Delta, >= 0.
    b : float, default 1.0
        The Laplace scale, > 0.

    References
    ----------
    RTM paper (Kaissis et al. 2023b) proof of Thm. 1; Liu and Kozubowski (2015).

    Examples
    --------
    >>> f = FoldedLaplace(1.0)
    >>> round(float(f.ppf(f.cdf(0.5))), 12)  # quantile and CDF are inverse
    0.5
    """

    def __init__(self, delta: float, b: float = 1.0):
        self.delta = check_nonnegative("delta", delta)
        self.b = check_positive("b", b)
        self.mu = self.delta / self.b
        self.corner = -0.5 * np.expm1(-2.0 * self.mu)  # Phi(Delta)

    def cdf(self, x):
        x = np.asarray(x, dtype=float) / self.b
        m = self.mu
        with np.errstate(over="ignore", invalid="ignore"):
            low = np.exp(-m) * np.sinh(np.minimum(x, m))
            high = 1.0 - np.exp(-x) * np.cosh(m)
        return np.where(x < m, low, high)

    def sf(self, x):
        x = np.asarray(x, dtype=float) / self.b
        m = self.mu
        with np.errstate(over="ignore", invalid="ignore"):
            low = 1.0 - np.exp(-m) * np.sinh(np.minimum(x, m))
            high = np.exp(-x) * np.cosh(m)
        return np.where(x < m, low, high)

    def ppf(self, q):
        q = np.asarray(q, dtype=float)
        m = self.mu
        with np.errstate(divide="ignore"):
            low = np.log(q * np.exp(m) + np.sqrt(q**2 * np.exp(2.0 * m) + 1.0))
            high = np.log(np.cosh(m) / (1.0 - q))
        return self.b * np.where(q <= self.corner, low, high)

    def isf(self, q):
        return self.ppf(1.0 - np.asarray(q, dtype=float))


# ---------------------------------------------------------------------------------------------
# Laplace mechanism (Thm. 1)
# ---------------------------------------------------------------------------------------------


def laplace(mu: float, branch: str = "corrected") -> TradeOffCurve:
    """RTM curve ``j_Lap`` of the Laplace mechanism, ``mu = Delta_1 / b`` (Thm. 1, eqs. 2-3).

    ``j = T(Exp(b), FoldL(Delta_1, b))``: H0 = ``|theta|`` under Lap(0, b), H1 = ``|theta|`` under
    Lap(Delta_1, b) (eq. 30).  Closed forms:

    * eq. 2: ``j(alpha) = -exp(-mu) sinh(log alpha)`` for ``alpha >= exp(-mu)``, else
      ``1 - alpha cosh(mu)``;
    * eq. 3 (inverse): ``1 / (alpha e^mu + sqrt(alpha^2 e^{2 mu} + 1))`` for
      ``alpha < 1/2 - exp(-2 mu)/2``, else ``(1 - alpha) / cosh(mu)``.  The paper prints the
      branch point as ``1/2 - exp(-mu)/2``, which makes ``j^{-1}`` discontinuous; the correct
      point ``Phi_FoldL(Delta_1) = 1/2 - exp(-2 mu)/2`` is used here.  ``branch="printed"``
      switches at the printed point instead (only to show the erratum; j is unchanged).

    Written with ``exp(log alpha + mu)`` so that large ``mu`` does not overflow.

    Parameters
    ----------
    mu : float
        ``Delta_1 / b``, >= 0.
    branch : {"corrected", "printed"}, default "corrected"
        The branch point of eq. 3.

    Returns
    -------
    TradeOffCurve

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Thm. 1, eqs. 2-3, 30.

    Examples
    --------
    >>> round(float(laplace(1.0)(0.5)), 6)  # -e^{-1} sinh(log 0.5) = 0.75 / e
    0.27591
    """
    mu = check_nonnegative("mu", mu)
    if branch not in ("corrected", "printed"):
        raise ValueError(f"branch must be 'corrected' or 'printed', got {branch!r}")
    emu = np.exp(-mu)
    switch = -0.5 * np.expm1(-2.0 * mu) if branch == "corrected" else -0.5 * np.expm1(-mu)

    def alpha_cosh(a):  # alpha * cosh(mu) without overflow (used only where alpha < exp(-mu))
        with np.errstate(divide="ignore", over="ignore"):
            return 0.5 * (np.exp(np.log(a) + mu) + a * emu)

    def upper_branch(a):  # alpha >= exp(-mu); a > 0 matters once exp(-mu) underflows to 0
        return (a >= emu) & (a > 0)

    def f(a):
        a = np.asarray(a, dtype=float)
        with np.errstate(divide="ignore", over="ignore", under="ignore"):
            # -exp(-mu) sinh(log a) = exp(-mu) (1 - a)(1 + a) / (2 a): no cancellation as a -> 1 (1 - a is exact there)
            upper = np.exp(-mu + np.log((1.0 - a) * (1.0 + a)) - np.log(2.0 * a))
        return np.where(upper_branch(a), upper, 1.0 - alpha_cosh(a))

    def power(a):
        a = np.asarray(a, dtype=float)
        return np.where(upper_branch(a), 1.0 - f(a), alpha_cosh(a))

    def inverse(b):
        b = np.asarray(b, dtype=float)
        with np.errstate(divide="ignore", over="ignore"):
            t = np.exp(np.log(b) + mu)  # b e^mu
            low = 1.0 / (t + np.hypot(t, 1.0))
            high = (1.0 - b) / np.cosh(mu)
        return np.where(b < switch, low, high)

    label = "" if branch == "corrected" else " (eq. 3 as printed)"
    return TradeOffCurve(f, inverse, power, name=f"RTM Laplace mu={mu:g}{label}")


def laplace_branch_error(mu: float, grid) -> dict:
    """How far eq. 3 (the inverse of the Laplace RTM curve) lies from the inverse computed from Definition 2, with the
    branch point as printed (``1/2 - e^{-mu}/2``) and as corrected (``1/2 - e^{-2 mu}/2``).

    The distances are the largest over ``grid`` and 201 points between the two branch points; ``jump`` is the step of
    the printed form at its branch point (0 for a continuous inverse).

    Parameters
    ----------
    mu : float
        ``Delta_1 / b``, > 0.
    grid : array_like
        Levels in [0, 1].

    Returns
    -------
    dict
        ``switch_printed``, ``switch_corrected``, ``error_printed``, ``error_corrected``, ``jump``.

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Thm. 1, eq. 3, Def. 2.

    Examples
    --------
    >>> e = laplace_branch_error(1.0, np.linspace(0, 1, 101))
    >>> e["error_corrected"] < 1e-9 < e["error_printed"], round(e["jump"], 3) > 0
    (True, True)
    """
    mu = check_positive("mu", mu)
    if not 1e-6 <= mu <= 300.0:
        raise ValueError(f"mu must lie in [1e-6, 300] (the two branch points are then apart and the curves finite), got {mu!r}")
    direct = from_test_statistic(Exponential(), FoldedLaplace(mu))
    printed, corrected = laplace(mu, branch="printed"), laplace(mu)
    switch_printed, switch_corrected = 0.5 - 0.5 * np.exp(-mu), 0.5 - 0.5 * np.exp(-2 * mu)
    dense = np.union1d(check_array_in("grid", grid, 0.0, 1.0), np.linspace(switch_printed, switch_corrected, 201))
    return dict(switch_printed=switch_printed, switch_corrected=switch_corrected,
                error_printed=float(np.max(np.abs(printed.inverse(dense) - direct.inverse(dense)))),
                error_corrected=float(np.max(np.abs(corrected.inverse(dense) - direct.inverse(dense)))),
                jump=float(printed.inverse(np.array([switch_printed - 1e-12]))[0] - printed.inverse(np.array([switch_printed]))[0]))


# ---------------------------------------------------------------------------------------------
# Gaussian mechanism (Thm. 2, Cor. 1) and non-adaptive composition (Lemma 8)
# ---------------------------------------------------------------------------------------------


def _chi2_curve(kappa: float, d: int, name: str) -> TradeOffCurve:
    """``T(chi2_d, chi2_d(kappa))``: central vs non-central chi-square with d degrees of freedom.

    The common scale sigma^2 of eq. 4 (or sigma_c^2 of eq. 6) cancels in a trade-off curve.
    """
    curve = from_test_statistic(Chi2(d), NoncentralChi2(d, kappa), name=name)
    # the likelihood ratio of chi2_d(kappa) to chi2_d grows with the statistic: this is the Neyman-Pearson test, its
    # curve a trade-off function, at or below 1 - alpha (a value above is rounding: 1 + 3e-15 at d = 1e4); the
    # series' laws (from d = 10^4) carry a relative error of about 1e-14, their thresholds already rounded to the safe
    # side: the curve moved down and its power up by 1e-13 there
    margin = 1e-13 if d >= SERIES_FROM else 0.0

    def f(a):
        return np.minimum(curve(a) * (1.0 - margin), 1.0 - np.asarray(a, dtype=float))

    def inverse(b):
        return np.minimum(curve.inverse(b) * (1.0 - margin), 1.0 - np.asarray(b, dtype=float))

    def power(a):
        return np.clip(curve.power(a) * (1.0 + margin), np.asarray(a, dtype=float), 1.0)

    return TradeOffCurve(f, inverse, power, name=name)


def gaussian(mu: float, dimension: int = 1, steps: int = 1) -> TradeOffCurve:
    """RTM curve ``j_GM`` of the Gaussian mechanism, ``mu = Delta_2 / sigma``, dimension ``d``.

    ``j = T(chi2_d(0, sigma^2), chi2_d(mu^2, sigma^2))``: H0 = ``||theta||^2`` under N(0, sigma^2 I_d),
    H1 = ``||theta||^2`` under N(nu, sigma^2 I_d) with ``||nu|| = Delta_2`` (Thm. 2, eq. 4), computed
    with ``scipy.stats.chi2`` / ``ncx2`` (isf/sf at small levels).  ``j.inverse`` is j^{-1}.

    ``steps = N`` gives the N-fold homogeneous non-adaptive composition (Lemma 8, eqs. 47-48):
    the statistic is the squared norm of the average release, ``chi2_d(0, sigma^2/N)`` vs
    ``chi2_d(N mu^2, sigma^2/N)``, i.e. the single mechanism with ``mu sqrt(N)`` and the same d.

    Parameters
    ----------
    mu : float
        ``Delta_2 / sigma``, >= 0.
    dimension : int, default 1
        Dimension of the release.
    steps : int, default 1
        Homogeneous non-adaptive compositions.

    Returns
    -------
    TradeOffCurve

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Thm. 2, eq. 4; Lemma 8, eqs. 47-48.

    Examples
    --------
    >>> from fdp.curves import tradeoff
    >>> bool(gaussian(1.0)(0.05) > tradeoff.gaussian(1.0)(0.05))  # the RTM adversary is weaker (Lemma 6)
    True
    """
    mu = check_nonnegative("mu", mu)
    d = check_positive_int("dimension", dimension)  # d in the RTM paper
    steps = check_positive_int("steps", steps)
    return _chi2_curve(steps * mu**2, d, f"RTM Gaussian mu={mu:g} d={d} N={steps}")


def gaussian_1d(mu: float) -> TradeOffCurve:
    """Closed form of ``j_GM`` for d = 1 (Cor. 1, eq. 5); the inverse is computed numerically.

    ``j(alpha) = Phi(Psi^{-1}(alpha/2) - mu) - Psi(Psi^{-1}(alpha/2) + mu)``: H0 = ``|theta|`` under
    N(0, 1), H1 = ``|theta|`` under N(mu, 1), threshold ``Psi^{-1}(alpha/2)`` (two-sided test).

    Parameters
    ----------
    mu : float
        ``Delta_2 / sigma``, >= 0.

    Returns
    -------
    TradeOffCurve

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Cor. 1, eq. 5.

    Examples
    --------
    >>> bool(abs(gaussian_1d(1.0)(0.05) - gaussian(1.0)(0.05)) < 1e-12)  # the closed form of j_GM at d = 1
    True
    """
    mu = check_nonnegative("mu", mu)

    def f(a):
        z = norm.isf(0.5 * np.asarray(a, dtype=float))
        return norm.cdf(z - mu) - norm.sf(z + mu)

    def power(a):
        z = norm.isf(0.5 * np.asarray(a, dtype=float))
        return norm.sf(z - mu) + norm.sf(z + mu)

    return TradeOffCurve(f, power=power, name=f"RTM Gaussian d=1 closed form mu={mu:g}")


def _check_composition(sensitivities, sigmas):
    deltas = check_array_in("sensitivities", np.atleast_1d(sensitivities), 0.0, np.inf, open_high=True)
    sig = check_array_in("sigmas", np.atleast_1d(sigmas), 0.0, np.inf, open_low=True, open_high=True)
    if deltas.ndim != 1 or sig.ndim != 1 or deltas.size != sig.size:
        raise ValueError(
            f"sensitivities and sigmas must be 1-d of the same length, got shapes {deltas.shape} and {sig.shape}"
        )
    return deltas, sig


def composition_noncentrality(sensitivities, sigmas, weighting: str = "optimal") -> float:
    """Non-centrality kappa of the composed statistic for N non-adaptive GMs (Lemma 8).

    Release i is ``theta_i ~ N(Delta_i v, sigma_i^2 I_d)`` under H1 (v an unknown unit vector
    common to all releases, as in eqs. 43-44) and ``N(0, sigma_i^2 I_d)`` under H0.  A weighted
    sum ``S = sum w_i theta_i`` is ``N((sum w_i Delta_i) v, (sum w_i^2 sigma_i^2) I_d)``, so
    ``||S||^2 / sum w_i^2 sigma_i^2`` is ``chi2_d(0)`` under H0 and ``chi2_d(kappa)`` under H1 with
    ``kappa = (sum w_i Delta_i)^2 / sum w_i^2 sigma_i^2``.  ``weighting`` selects w:

    * ``"mean"``: w_i = 1/N, the plain average of the proof (eq. 42):
      ``kappa = (sum Delta_i)^2 / sum sigma_i^2``; for two mechanisms eq. 46,
      ``(Delta_a + Delta_b)^2 / (sigma_a^2 + sigma_b^2)`` (the printed statement of Lemma 8 lacks
      the parentheses), with scale ``sigma_c^2 = (sigma_a^2 + sigma_b^2) / 4`` (eq. 45).
    * ``"inverse-variance"``: w_i = 1/sigma_i^2, the MLE of a common mean (the argument the
      proof invokes via Lemma 5, which the plain average is not when the sigma_i differ):
      ``kappa = (sum Delta_i / sigma_i^2)^2 / sum 1/sigma_i^2``.
    * ``"optimal"`` (default): w_i = Delta_i / sigma_i^2, the sufficient statistic for v
      (matched filter; the RTM adversary knows Delta_i and sigma_i):
      ``kappa = sum (Delta_i / sigma_i)^2``.  By Cauchy-Schwarz it is the largest kappa (most
      powerful test); it equals the other two only when Delta_i / sigma_i^2 is constant (e.g. the
      homogeneous case, where all give ``N mu^2``, eqs. 47-48).

    For a privacy statement use ``"optimal"``: the other weightings describe weaker adversaries.

    Parameters
    ----------
    sensitivities : array_like
        Delta_i, > 0.
    sigmas : array_like
        The noise standard deviations sigma_i, > 0.
    weighting : {"optimal", "mean", "inverse-variance"}, default "optimal"

    Returns
    -------
    float

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Lemma 8, eqs. 42-46.

    Examples
    --------
    >>> composition_noncentrality([1.0, 1.0], [1.0, 1.0])  # two unit GMs: kappa = 2
    2.0
    """
    deltas, sig = _check_composition(sensitivities, sigmas)
    if weighting == "optimal":
        return float(np.sum((deltas / sig) ** 2))
    if weighting == "inverse-variance":
        return float(np.sum(deltas / sig**2) ** 2 / np.sum(1.0 / sig**2))
    if weighting == "mean":
        return float(np.sum(deltas) ** 2 / np.sum(sig**2))
    raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}")


def gaussian_composition(sensitivities, sigmas, dimension: int = 1, weighting: str = "optimal") -> TradeOffCurve:
    """RTM curve ``j_GMC`` of N non-adaptively composed GMs with (Delta_i, sigma_i) (Lemma 8, eq. 6).

    ``j = T(chi2_d(0), chi2_d(kappa))`` with kappa from :func:`composition_noncentrality`
    (H0: all releases centred at q(D); H1: shifted by Delta_i along a common direction).
    ``j.inverse`` is j^{-1}.  With ``weighting="optimal"`` this is :func:`gaussian` with
    ``mu = sqrt(sum (Delta_i / sigma_i)^2)``.

    Parameters
    ----------
    sensitivities : array_like
        Delta_i, > 0.
    sigmas : array_like
        The noise standard deviations sigma_i, > 0.
    dimension : int, default 1
    weighting : {"optimal", "mean", "inverse-variance"}, default "optimal"

    Returns
    -------
    TradeOffCurve

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Lemma 8, eq. 6.

    Examples
    --------
    >>> bool(abs(gaussian_composition([1.0, 1.0], [1.0, 1.0])(0.1) - gaussian(2 ** 0.5)(0.1)) < 1e-12)
    True
    """
    d = check_positive_int("dimension", dimension)  # d in the RTM paper
    kappa = composition_noncentrality(sensitivities, sigmas, weighting)
    n = np.atleast_1d(sensitivities).size
    return _chi2_curve(kappa, d, f"RTM Gaussian composition N={n} d={d} ({weighting})")


# ---------------------------------------------------------------------------------------------
# Asymptotics (Thm. 3)
# ---------------------------------------------------------------------------------------------


#: The asymptotic Gaussian forms of the composed RTM curve: ours and the forms the RTM paper prints.
ASYMPTOTIC_FORMS = ("clt", "gaussian", "clt_printed", "gaussian_printed")


def asymptotic(mu: float, dimension: int = 1, steps: int = 1, form: str = "clt") -> TradeOffCurve:
    """Large-d form of ``j_GM`` for N homogeneous compositions (Thm. 3, eq. 7), kappa = N mu^2.

    ``form="clt"`` (left side of eq. 7): the statistic is replaced by its normal limit,
    N(d, 2d) under H0 and N(d + kappa, 2d + 4 kappa) under H1 (eqs. 49-50), giving
    ``j(alpha) = Phi((Psi^{-1}(alpha) - kappa / sqrt(2d)) / sqrt(1 + 2 kappa / d))`` (eq. 55) and
    the exact inverse ``Phi(sqrt(1 + 2 kappa / d) Psi^{-1}(beta) - kappa / sqrt(2d))``.  Eqs. 7
    and 56 print the shift as ``sqrt(2) kappa / (2d)``; eq. 55 gives ``kappa / sqrt(2d)``.

    ``form="gaussian"`` (right side of eq. 7, eq. 59): the symmetric Gaussian curve
    ``Phi(Psi^{-1}(alpha) - N mu^2 / sqrt(2d))`` (printed as ``N sqrt(mu / (2d))``).

    ``form="clt_printed"`` and ``"gaussian_printed"`` are the two sides of eq. 7 exactly as
    printed, ``Phi(Psi^{-1}(alpha) / s - sqrt(2) kappa / (2 d s))`` with ``s = sqrt(1 + 2 kappa/d)``
    and ``Phi(Psi^{-1}(alpha) - N sqrt(mu / (2d)))``, kept only to show the errata.

    The "clt" curve is not a trade-off function in general (the two normals have different
    variances, so the one-sided test is not the Neyman-Pearson test): it exceeds ``1 - alpha``
    where ``Psi^{-1}(alpha) < -(kappa / sqrt(2d)) / (sqrt(1 + 2 kappa/d) - 1)``, which is far in
    the tail only when kappa / d is small (the regime of Thm. 3).

    Both approach the exact curves only as d grows (faster than N^2 mu^4); for fixed d the
    null distribution chi2_d stays skewed however large N is.  See :func:`asymptotic_gap`.

    Parameters
    ----------
    mu : float
        ``Delta_2 / sigma``, >= 0.
    dimension : int, default 1
    steps : int, default 1
    form : {"clt", "gaussian", "clt_printed", "gaussian_printed"}, default "clt"

    Returns
    -------
    TradeOffCurve

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Thm. 3, eqs. 7, 49-59.

    Examples
    --------
    >>> bool(abs(asymptotic(1.0, dimension=1000)(0.1) - gaussian(1.0, dimension=1000)(0.1)) < 0.01)  # large d
    True
    """
    mu = check_nonnegative("mu", mu)
    d = check_positive_int("dimension", dimension)  # d in the RTM paper
    steps = check_positive_int("steps", steps)
    kappa = steps * mu**2
    shift = kappa / np.sqrt(2.0 * d)
    if form == "gaussian":
        curve = tradeoff.gaussian(shift)
        curve.name = f"RTM asymptotic (Gaussian) mu={mu:g} d={d} N={steps}"
        return curve
    if form == "gaussian_printed":
        curve = tradeoff.gaussian(steps * np.sqrt(mu / (2.0 * d)))
        curve.name = f"eq. 7 right side as printed mu={mu:g} d={d} N={steps}"
        return curve
    if form not in ASYMPTOTIC_FORMS:
        raise ValueError(f"form must be one of {ASYMPTOTIC_FORMS}, got {form!r}")
    s = np.sqrt(1.0 + 2.0 * kappa / d)
    if form == "clt_printed":
        c = np.sqrt(2.0) * kappa / (2.0 * d * s)
        return TradeOffCurve(
            lambda a: norm.cdf(norm.isf(a) / s - c),
            lambda b: norm.sf(s * (norm.ppf(b) + c)),
            lambda a: norm.sf(norm.isf(a) / s - c),
            name=f"eq. 7 left side as printed mu={mu:g} d={d} N={steps}",
        )

    def f(a):
        return norm.cdf((norm.isf(a) - shift) / s)

    def power(a):
        return norm.sf((norm.isf(a) - shift) / s)

    def inverse(b):
        return norm.cdf(s * norm.isf(b) - shift)

    return TradeOffCurve(f, inverse, power, name=f"RTM asymptotic (CLT) mu={mu:g} d={d} N={steps}")


def asymptotic_gap(mu: float, dimension: int = 1, steps: int = 1, form: str = "clt", grid=None) -> float:
    """Largest absolute difference between the exact and the asymptotic curves (Thm. 3).

    ``max over alpha in grid of max(|j - a|, |j^{-1} - a^{-1}|)`` with ``j = gaussian(mu, d,
    steps)`` and ``a = asymptotic(mu, d, steps, form)``; grid defaults to
    :func:`fdp.curves.tradeoff.default_grid` (401 points).

    Parameters
    ----------
    mu : float
    dimension : int, default 1
    steps : int, default 1
    form : str, default "clt"
        See :func:`asymptotic`.
    grid : array_like, optional

    Returns
    -------
    float

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Thm. 3.

    Examples
    --------
    >>> bool(asymptotic_gap(1.0, dimension=10_000) < asymptotic_gap(1.0, dimension=10))  # the limit is approached as d grows
    True
    """
    d = dimension  # d in the RTM paper
    grid = tradeoff.default_grid(401) if grid is None else check_array_in("grid", grid, 0.0, 1.0)
    exact = gaussian(mu, d, steps)
    approx = asymptotic(mu, d, steps, form)
    return float(
        max(np.max(np.abs(exact(grid) - approx(grid))), np.max(np.abs(exact.inverse(grid) - approx.inverse(grid))))
    )


# ---------------------------------------------------------------------------------------------
# Subsampled mechanisms (Lemma 9)
# ---------------------------------------------------------------------------------------------


def _subsampled(curve: TradeOffCurve, p: float, grid, name: str) -> tradeoff.PiecewiseLinear:
    # j_p = p j + (1 - p)(1 - alpha) = T(A, (1-p) A + p B) (Lemma 9, eq. 61); its inverse,
    # T((1-p) A + p B, A), is the other dominating pair of Sec. 4; J = C(j_p, j_p^{-1}).
    J = tradeoff.symmetrise(tradeoff.subsample(curve, p), grid)
    # The sampled vertices lie on min(j_p, j_p^{-1}), which is its own inverse, so adding their
    # mirror images keeps them on that graph and makes the envelope exactly symmetric.
    a, b = tradeoff.lower_convex_envelope(np.r_[J.alphas, J.betas], np.r_[J.betas, J.alphas])
    return tradeoff.piecewise_linear(a, b, name=name)


def subsampled_gaussian(mu: float, sampling_rate: float, dimension: int = 1, grid=None) -> tradeoff.PiecewiseLinear:
    """``J_SGM = C(j_p, j_p^{-1})`` of the Poisson-subsampled GM, one step (Sec. 4, Lemma 9).

    ``j_p = T(chi2_d(0), (1-p) chi2_d(0) + p chi2_d(mu^2))`` = ``p j_GM + (1-p)(1-alpha)``
    (H0: M(D), H1: subsampled M(D u {x*}); the statistic is ``||theta||^2``), ``j_p^{-1}`` its
    inverse (bisection).  Symmetrised with :func:`fdp.curves.tradeoff.symmetrise` on ``grid`` (default
    :func:`fdp.curves.tradeoff.default_grid`) and mirrored so that it is exactly symmetric; the result
    is piecewise linear with vertices on the exact J, so it lies on or above it.  The asymmetric
    j_p is ``tradeoff.subsample(gaussian(mu, d), p)``.

    Parameters
    ----------
    mu : float
        ``Delta_2 / sigma``, >= 0.
    sampling_rate : float
        In (0, 1].
    dimension : int, default 1
    grid : array_like, optional

    Returns
    -------
    PiecewiseLinear

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Sec. 4, Lemma 9.

    Examples
    --------
    >>> curve = subsampled_gaussian(1.0, 0.5)
    >>> bool(abs(curve(0.1) - curve.inverse(0.1)) < 1e-12)  # symmetric
    True
    """
    d = dimension  # d in the RTM paper
    sampling_rate = check_sampling_rate("sampling_rate", sampling_rate)
    return _subsampled(gaussian(mu, d), sampling_rate, grid, f"RTM J, subsampled Gaussian mu={mu:g} d={d} p={sampling_rate:g}")


def powers(mu: float, alpha: float, grid, *, sampling_rate: float = 1.0, steps: int = 1, discretization: float = 1e-4,
           pld_discretization: float = 1e-4) -> dict:
    """The power at ``alpha`` of the relaxed-threat-model adversaries and of the DP one against the Gaussian mechanism
    (d = 1, effect size ``mu``), Poisson-subsampled at ``sampling_rate`` and composed over ``steps``: the RTM paper's
    Figure 2b (one full-batch step) and 2c.

    The RTM curve j (its power and that of its inverse, ``1 - j^{-1}(alpha)``), its symmetrisation J on ``grid``, the
    DP curve (exact for one step: ``G_mu``, or its subsampled symmetrisation; the pessimistic PLD's for several steps)
    and the CLT curve ``G_{p sqrt(N (e^{mu^2} - 1))}`` the paper draws (power 1 where its effect size overflows).
    Several steps use the tensor composition of reading (a) on a lattice of spacing ``discretization``.  A
    symmetrisation read on a grid lies on or above the exact curve, so its power is raised to at least the powers of
    the curves it symmetrises (the symmetrised curve lies below both): a grid that misses alpha's neighbourhood cannot
    put J below j or the DP power below the RTM one.

    Parameters
    ----------
    mu : float
        Delta / sigma, > 0.
    alpha : float
        The type-I error, in (0, 1).
    grid : array_like
        The alpha grid of the symmetrisations.
    sampling_rate : float, default 1
    steps : int, default 1
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
    >>> w = powers(2.0, 0.01, np.linspace(0, 1, 501))
    >>> bool(w["j"] <= w["dp"] and w["J"] <= w["dp"])  # the relaxed adversary is never stronger
    True
    """
    mu, p = check_positive("mu", mu), check_sampling_rate("sampling_rate", sampling_rate)
    steps = check_positive_int("steps", steps)
    if np.ndim(alpha) != 0:
        raise ValueError(f"alpha must be one number in (0, 1), got {alpha!r}")
    a = np.array([check_array_in("alpha", alpha, 0.0, 1.0, open_low=True, open_high=True).item()])
    grid = check_array_in("grid", grid, 0.0, 1.0)
    dp_parts = ()  # the curves a symmetrised DP curve lies below
    if p == 1.0 and steps == 1:
        j = gaussian(mu, 1)
        big_j, dp = tradeoff.symmetrise(j, grid), tradeoff.gaussian(mu)
    elif steps == 1:
        j = tradeoff.subsample(gaussian(mu, 1), p)
        f = tradeoff.subsample(tradeoff.gaussian(mu), p)
        big_j, dp, dp_parts = subsampled_gaussian(mu, p, 1, grid), tradeoff.symmetrise(f, grid), (f.power(a)[0], 1.0 - f.inverse(a)[0])
    else:
        j = tensor_composition("gaussian", mu, p, steps, discretization=discretization)
        big_j = tradeoff.symmetrise(j)
        dp = tradeoff_curve(mechanism_pld(Mechanism("gaussian", 1 / mu, p, steps), discretization=pld_discretization), "symmetrised")
    power_j, power_jinv = float(j.power(a)[0]), 1.0 - float(j.inverse(a)[0])
    with np.errstate(over="ignore"):
        clt_mu = p * np.sqrt(steps * np.expm1(mu**2))
    return dict(j=power_j, jinv=power_jinv, J=max(float(big_j.power(a)[0]), power_j, power_jinv),
                dp=max([float(dp.power(a)[0]), *map(float, dp_parts)]),
                clt=1.0 if not np.isfinite(clt_mu) else float(tradeoff.gaussian(clt_mu).power(a)[0]))


def subsampled_laplace(mu: float, sampling_rate: float, grid=None) -> tradeoff.PiecewiseLinear:
    """``J = C(j_p, j_p^{-1})`` of the Poisson-subsampled LM, ``j_p = p j_Lap + (1-p)(1-alpha)``.

    Same construction as :func:`subsampled_gaussian` with :func:`laplace` (Lemma 9; App. 7.1,
    Fig. 5a).  The asymmetric j_p is ``tradeoff.subsample(laplace(mu), p)``.

    Parameters
    ----------
    mu : float
        ``Delta_1 / b``, >= 0.
    sampling_rate : float
        In (0, 1].
    grid : array_like, optional

    Returns
    -------
    PiecewiseLinear

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Lemma 9, App. 7.1, Fig. 5a.

    Examples
    --------
    >>> bool(subsampled_laplace(1.0, 0.3)(0.1) >= laplace(1.0)(0.1))  # subsampling amplifies
    True
    """
    sampling_rate = check_sampling_rate("sampling_rate", sampling_rate)
    return _subsampled(laplace(mu), sampling_rate, grid, f"RTM J, subsampled Laplace mu={mu:g} p={sampling_rate:g}")


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
                             f"dimension d={d} at effect size mu={mu:g}; use a smaller d (d = 1 is the worst case)")

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


def tensor_composition(
    noise: str,
    mu: float,
    sampling_rate: float = 1.0,
    steps: int = 1,
    dimension: int = 1,
    *,
    discretization: float = 1e-3,
    pessimistic: bool = True,
    max_points: int = 300_000,
    tail: float = DEFAULT_TAIL,
) -> tradeoff.PiecewiseLinear:
    """Reading (a): the tensor product ``j_p^{(x)N}`` of N one-step RTM curves (Dong et al. Def. 3.1).

    ``T(P^N, Q^N)`` where P and Q are the laws of one step's magnitude statistic ``||theta||`` under
    H0 (no target) and H1 (target sampled with rate ``sampling_rate``): for ``"gaussian"`` (dimension d)
    ``chi2_d`` vs ``(1-p) chi2_d + p chi2_d(mu^2)`` (Thm. 2 with Lemma 9), for ``"laplace"``
    (d = 1) Exp vs ``(1-p) Exp + p FoldL(mu)`` (Thm. 1 with Lemma 9).  This is the
    adversary that tests each release by its magnitude and combines the N magnitudes by the
    Neyman-Pearson test (the sum of the per-step log likelihood ratios of the statistic).  Add
    direction; ``.inverse`` is ``(j_p^{-1})^{(x)N}``.  With ``steps=1`` it is ``j_p`` of Lemma 9.

    Method: the per-step loss law under H1 on a lattice of spacing ``discretization`` (widened
    so that the one-step and the composed lattices have at most ``max_points`` points), composed by FFT (``dp_accounting``), read off with
    the Neyman-Pearson breakpoints of :mod:`fdp.accounting.pld`.  ``pessimistic=True`` gives a curve on or
    below the exact one (connect-the-dots, error of order h^1.3 to h^2 in the spacing), ``False``
    one on or above it (first order); together they bracket the exact curve.  Tails of mass below
    ``tail`` are cut (pessimistically: sent to infinite loss).

    Parameters
    ----------
    noise : {"gaussian", "laplace"}
    mu : float
        The one-step effect size, >= 0.
    sampling_rate : float, default 1.0
        In (0, 1].
    steps : int, default 1
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
    >>> one = tensor_composition("gaussian", 1.0, discretization=1e-2)
    >>> bool(abs(one(0.1) - gaussian(1.0)(0.1)) < 0.01)  # one step: the RTM curve itself, up to the lattice
    True
    """
    if noise not in ("gaussian", "laplace"):
        raise ValueError(f"noise must be 'gaussian' or 'laplace', got {noise!r}")
    mu = check_nonnegative("mu", mu)
    sampling_rate = check_sampling_rate("sampling_rate", sampling_rate)
    steps = check_positive_int("steps", steps)
    d = check_positive_int("dimension", dimension)  # d in the RTM paper
    if noise == "laplace" and d != 1:
        raise ValueError(f"dimension must be 1 for Laplace noise, got {d}")
    h = check_discretization("discretization", discretization)
    max_points = check_positive_int("max_points", max_points)
    tail = check_array_in("tail", tail, 0.0, 1e-3, open_low=True).item()
    name = f"RTM {noise} tensor composition mu={mu:g} p={sampling_rate:g} N={steps} d={d}"
    if mu == 0.0:
        return tradeoff.piecewise_linear([0.0, 1.0], [1.0, 0.0], name=name)
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
    base, out, inf_mass, _ = lattice.compose(l_0, h, masses, infinite, steps, pessimistic, tail / steps)
    # the powers 1 - beta are carried as cumulative masses: near alpha = 0, 1 - beta rounds away powers below 1e-16
    alphas, betas, powers = lattice.breakpoints(base, h, out, inf_mass, pessimistic=pessimistic)
    return tradeoff.piecewise_linear(alphas, betas, name=name, powers=powers)


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
    noise, noise_multiplier, sampling_rate, steps = mechanism.args
    mu = 1.0 / noise_multiplier
    h = check_discretization("discretization", discretization)
    lower, upper = (tensor_composition(noise, mu, sampling_rate, steps, d, discretization=spacing,
                                       pessimistic=side, tail=tail)
                    for side, spacing in ((True, h), (False, h / OPTIMISTIC_REFINEMENT)))
    return Bracket(lower, upper, h)


#: The statistics of the sum reading: the norm of the summed releases, or the sum of their squared norms.
SUM_STATISTICS = ("norm_of_sum", "sum_of_squares")


def sum_composition(
    mu: float, sampling_rate: float = 1.0, steps: int = 1, dimension: int = 1, statistic: str = "norm_of_sum", points: int = 3000
) -> tradeoff.PiecewiseLinear:
    """Reading (b): the curve of one statistic of all N releases of the subsampled GM (Lemma 8).

    Release i is ``theta_i = B_i Delta v + N(0, sigma^2 I_d)`` with ``B_i ~ Ber(p)`` (target
    sampled) under H1 and ``B_i = 0`` under H0; ``K = sum B_i ~ Bin(N, p)``.  ``statistic``:

    * ``"norm_of_sum"`` (eq. 42, the average of Lemma 8; v common to all releases):
      ``||sum theta_i||^2 / (N sigma^2)`` is ``chi2_d`` under H0 and the binomial mixture of
      ``chi2_d(K^2 mu^2 / N)`` under H1.  For p = 1 this is :func:`gaussian` with ``steps=N``
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
    mu : float
        ``Delta_2 / sigma``, >= 0.
    sampling_rate : float, default 1.0
    steps : int, default 1
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
    >>> curve = sum_composition(1.0, 1.0, steps=4)
    >>> bool(abs(curve(0.1) - gaussian(1.0, steps=4)(0.1)) < 1e-3)  # p = 1: eqs. 47-48
    True
    """
    mu = check_nonnegative("mu", mu)
    sampling_rate = check_sampling_rate("sampling_rate", sampling_rate)
    steps = check_positive_int("steps", steps)
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
    if mu == 0.0:
        return tradeoff.piecewise_linear([0.0, 1.0], [1.0, 0.0], name=name)

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


def _composed_curve(mu, p, steps, d, reading, options) -> tradeoff.PiecewiseLinear:
    if reading == "tensor":
        return tensor_composition("gaussian", mu, p, steps, d, **options)
    if reading == "sum":
        return sum_composition(mu, p, steps, d, **options)
    raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")


def composed_subsampled_gaussian(
    mu: float, sampling_rate: float, steps: int, dimension: int = 1, reading: str = "tensor", **options
) -> tradeoff.PiecewiseLinear:
    """``J = C(j_N, j_N^{-1})`` of the N-fold non-adaptively composed SGM under the RTM.

    ``reading="tensor"``: ``j_N`` from :func:`tensor_composition` (reading (a), the f-DP tensor
    product of the one-step curves, Dong et al. Def. 3.1); ``reading="sum"``: from
    :func:`sum_composition` with the norm of the sum of all releases (reading (b), Lemma 8).
    ``options`` go to the underlying function.  J is the exact symmetrisation of the
    piecewise-linear j_N (:func:`fdp.curves.tradeoff.symmetrise` on the union of its coordinates).

    Parameters
    ----------
    mu : float
    sampling_rate : float
    steps : int
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
    >>> curve = composed_subsampled_gaussian(1.0, 0.5, 4, discretization=1e-2)
    >>> bool(abs(curve(0.2) - curve.inverse(0.2)) < 1e-9)  # symmetrised
    True
    """
    d = dimension  # d in the RTM paper
    J = tradeoff.symmetrise(_composed_curve(mu, sampling_rate, steps, d, reading, options))  # exact for breakpoints
    J.name = f"RTM J, composed SGM ({reading}) mu={mu:g} p={sampling_rate:g} N={steps} d={d}"
    return J


def sandwich_noise(
    target: TradeOffCurve,
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
    :func:`composed_subsampled_gaussian` at ``mu = 1 / sigma``; it moves towards ``1 - alpha`` as
    sigma grows.  Returns ``(sigma_upper, sigma_lower)``: the smallest sigma with
    ``J(sigma) >= target`` on ``grid`` (lambda-DR with lambda = target, Def. 3; the "more
    pessimistic" choice of the paper) and the largest sigma with ``J(sigma) <= target``, each by
    bisection on log sigma in ``bounds`` to relative accuracy ``rtol`` (the returned values satisfy
    their condition; the second one is checked for alpha > 0).  ``grid`` defaults to :func:`fdp.curves.tradeoff.default_grid` (401 points).

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
        Passed to :func:`composed_subsampled_gaussian`.

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
    if reading not in READINGS:
        raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")
    lo_b, hi_b = (check_positive("bounds", float(b)) for b in bounds)
    if lo_b >= hi_b:
        raise ValueError(f"bounds must be increasing, got {bounds!r}")
    grid = tradeoff.default_grid(401) if grid is None else check_array_in("grid", grid, 0.0, 1.0)
    ref = np.asarray(target(grid), dtype=float)

    def below(sigma):  # the largest excess of J over the target
        j = _composed_curve(1.0 / sigma, sampling_rate, steps, d, reading, options)
        # sampled on the grid, J lies on or above the exact J: J_grid <= target implies J <= target
        # alpha = 0 is left out: a target with an atom (f(0) < 1, e.g. a pessimistic PLD) is below
        # every RTM curve there
        return float(np.max((tradeoff.symmetrise(j, grid)(grid) - ref)[grid > 0]))

    def above(sigma):  # J >= target iff min(j, j^{-1}) >= target (the target is convex)
        j = _composed_curve(1.0 / sigma, sampling_rate, steps, d, reading, options)
        return float(np.min(np.minimum(j(grid), j.inverse(grid)) - ref))

    def bisect(ok, feasible_high):
        lo, hi = lo_b, hi_b
        if not ok(hi if feasible_high else lo):
            end = hi if feasible_high else lo
            raise ValueError(f"bounds: no noise multiplier in {bounds!r} satisfies the condition (tried {end:g})")
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


# ---------------------------------------------------------------------------------------------
# lambda-detection resilience (Def. 3)
# ---------------------------------------------------------------------------------------------


#: The largest effect size :func:`release_curves` takes for Gaussian noise: far beyond any privacy (mu = 40 already
#: is), and where its magnitude statistics' distributions stay finite (at 1e10 they returned NaN, beyond 1.3e154 mu^2
#: overflowed).
MU_MAX = 100.0


class ReleaseCurves(NamedTuple):
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


def _release_model(mechanism: str, steps: int) -> str:
    """What the RTM adversary tests when ``steps`` releases are composed (the two models differ: at mu 0.1, 100
    steps, alpha 1e-3 the averaged release gives j = 0.0110 below 1, the tensor reading 0.00131)."""
    if steps == 1:
        return "one release, tested by its magnitude"
    if mechanism == "gaussian":
        return ("averaged: one test of the norm of the average of the releases (RTM paper Lemma 8: the Gaussian "
                "mechanism with mu sqrt(steps)); a DP-SGD run's RTM numbers (report, calibrate) use the tensor reading")
    return ("tensor: the releases tested jointly, each by its magnitude (tensor product of the per-step RTM curves); "
            "the reading of a DP-SGD run's RTM numbers in report and calibrate")


def release_curves(mechanism: Literal["laplace", "gaussian", "subsampled-gaussian"], mu: float, *, steps: int = 1,
                   dimension: int = 1, sampling_rate: float = 1.0, grid=None) -> ReleaseCurves:
    """The RTM curves ``j`` and ``J`` of ``steps`` releases of a mechanism, and its DP curve ``f_dp`` for comparison.

    * ``"laplace"``: Laplace noise with ``mu = Delta_1 / b`` (Lemma 2); several steps composed by the tensor
      product of the one-step curves, ``f_dp`` from the composed PLD.
    * ``"gaussian"``: Gaussian noise in ``dimension`` dimensions with ``mu = Delta_2 / sigma`` (Lemma 4); several
      steps are averaged into one release (Lemma 8: the Gaussian mechanism with ``mu sqrt(steps)``).
    * ``"subsampled-gaussian"``: DP-SGD's steps, each Poisson-subsampled at ``sampling_rate``, composed by the
      tensor reading (:func:`tensor_composition`); ``f_dp`` from the composed PLD (the closed form at rate 1).

    Composed PLDs use the loss spacing 1e-4; a lattice too large for memory is refused first.

    Parameters
    ----------
    mechanism : {"laplace", "gaussian", "subsampled-gaussian"}
    mu : float
        Effect size of one step, > 0; at most 100 for Gaussian noise (far beyond any privacy at 40).
    steps : int, default 1
    dimension : int, default 1
        Dimension of the release (1 is the worst case); Laplace: 1 only.
    sampling_rate : float, default 1.0
        For ``"subsampled-gaussian"`` only.
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
    >>> curves = release_curves("gaussian", 1.0)
    >>> round(float(curves.j(0.1)), 4) > round(float(curves.f_dp(0.1)), 4)  # not knowing the target costs power
    True
    """
    if mechanism not in ("laplace", "gaussian", "subsampled-gaussian"):
        raise ValueError(f"mechanism must be 'laplace', 'gaussian' or 'subsampled-gaussian', got {mechanism!r}")
    # Gaussian statistics up to MU_MAX; the Laplace curves hold at any finite mu (beyond 745 they are 0 past alpha = 0)
    mu = float(check_array_in("mu", mu, 0.0, MU_MAX if "gaussian" in mechanism else np.inf, open_low=True))
    steps = check_positive_int("steps", steps)
    d = check_positive_int("dimension", dimension)
    p = check_sampling_rate("sampling_rate", sampling_rate)
    if mechanism == "gaussian" and mu * math.sqrt(steps) > MU_MAX:  # the averaged release is one of effect mu sqrt(N)
        most = f"{math.floor((MU_MAX / mu) ** 2):,}" if mu > 1e-100 else f"{(MU_MAX / mu) ** 2:.4g}"
        raise ValueError(f"steps must be at most {most} at mu={mu:g}: the averaged release "
                         f"of N steps has the effect size mu sqrt(N) (here {mu * math.sqrt(steps):.4g}), and its "
                         f"statistic's laws are evaluated up to {MU_MAX:g}")
    if mechanism == "laplace" and d != 1:
        raise ValueError(f"dimension must be 1 for Laplace noise (Lemma 2 is one-dimensional), got {d!r}")
    if mechanism != "subsampled-gaussian" and p != 1.0:
        raise ValueError(f"sampling_rate applies to 'subsampled-gaussian' only, got {p!r} for {mechanism!r}")
    grid = tradeoff.default_grid() if grid is None else grid
    full_batch_gaussian = mechanism == "subsampled-gaussian" and p == 1.0  # f_dp: the closed form G_{mu sqrt(N)}
    if mechanism != "gaussian" and steps > 1 and not full_batch_gaussian:  # f_dp from a composed PLD: size first
        base = "laplace" if mechanism == "laplace" else "gaussian"
        lattice.check_lattice_points(lattice.lattice_points(Mechanism(base, 1.0 / mu, p, steps), 1e-4), "the DP curve f_dp",
                                     "use fewer steps or a smaller mu")
    if mechanism == "laplace":
        if steps == 1:
            j, f_dp = laplace(mu), tradeoff.laplace(mu)
        else:
            j = tensor_composition("laplace", mu, 1.0, steps)
            f_dp = tradeoff_curve(mechanism_pld(Mechanism("laplace", 1.0 / mu, 1.0, steps), discretization=1e-4), "symmetrised")
        big_j = tradeoff.symmetrise(j, grid)
    elif mechanism == "gaussian":
        j, f_dp = gaussian(mu, d, steps), tradeoff.gaussian_composition(mu, steps=steps)
        big_j = tradeoff.symmetrise(j, grid)
    else:
        if steps == 1:
            j, big_j = tradeoff.subsample(gaussian(mu, d), p), subsampled_gaussian(mu, p, d, grid)
        else:
            j = tensor_composition("gaussian", mu, p, steps, d)
            big_j = composed_subsampled_gaussian(mu, p, steps, d)
        if full_batch_gaussian:
            f_dp = tradeoff.gaussian_composition(mu, steps=steps)
        else:
            f_dp = tradeoff_curve(mechanism_pld(Mechanism("gaussian", 1.0 / mu, p, steps), discretization=1e-4), "symmetrised")
    if mechanism != "gaussian":
        # the RTM adversary is weaker than the DP one (Lemma 6): j and J lie on or above f_dp, so where a lattice j falls
        # below f_dp (a vacuous j = 0 at mu = 1e-10, whose f_dp is 0.9 at alpha 0.1), f_dp is the better lower bound
        j, big_j = _at_least(j, f_dp), _at_least(big_j, f_dp)
    return ReleaseCurves(j=j, J=big_j, f_dp=f_dp, release=_release_model(mechanism, steps))


def _at_least(curve: TradeOffCurve, floor: TradeOffCurve) -> TradeOffCurve:
    """``max(curve, floor)`` pointwise, for two lower bounds on one trade-off curve (``floor`` symmetric): again a
    lower bound on it, convex and non-increasing; its inverse is the maximum of the inverses."""
    return TradeOffCurve(lambda a: np.maximum(curve(a), floor(a)), lambda b: np.maximum(curve.inverse(b), floor(b)),
                         lambda a: np.minimum(curve.power(a), floor.power(a)), symmetric=curve.symmetric,
                         name=curve.name)


class DRResult(NamedTuple):
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
