"""Relaxed-threat-model (RTM) trade-off curves (Kaissis, Kolek, Ziller, Riess, Rueckert 2023).

In the RTM the adversary knows D but not the target record x*, so it cannot evaluate q(D') and
tests the magnitude of the (centred) release instead of the likelihood ratio (Lemmas 2-5).
For each mechanism this module returns

* ``j = T(H0, H1)``: H0 = the magnitude statistic under M(D) (target absent), H1 = under
  M(D u {x*}) at the dominating shift ||q(D') - q(D)|| = Delta ("add" direction, DESIGN.md);
* ``j.inverse`` = ``j^{-1}`` = T(H1, H0), the swapped test;
* ``J = C(j, j^{-1})`` = :func:`fdp.tradeoff.symmetrise` (j), the curve used for lambda-DR (Def. 3).

Every curve is a :class:`fdp.tradeoff.TradeOffCurve`, vectorised over the level alpha.
Effect sizes: ``mu = Delta_1 / b`` (Laplace), ``mu = Delta_2 / sigma`` (Gaussian).

Errata found while implementing (see the docstrings for details):
eq. 3 prints the branch point ``1/2 - exp(-mu)/2``; the correct one is ``1/2 - exp(-2 mu)/2``
(as in the folded-Laplace quantile of the proof). Lemma 8's statement lacks parentheses; from
eqs. 42-46 ``kappa_c = (Delta_a + Delta_b)^2 / (sigma_a^2 + sigma_b^2)``. In eq. 7 (and eq. 56)
the shift ``sqrt(2) N mu^2 / (2 d)`` should be ``N mu^2 / sqrt(2 d)``, and the right-hand side
``N sqrt(mu / (2 d))`` should be ``N mu^2 / sqrt(2 d)`` (eq. 59).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.stats import chi2, ncx2, norm

from . import tradeoff
from .tradeoff import TradeOffCurve
from .validation import (
    check_array_in,
    check_nonnegative,
    check_positive,
    check_positive_int,
    check_sampling_rate,
)

__all__ = [
    "Exponential",
    "FoldedLaplace",
    "from_test_statistic",
    "laplace",
    "gaussian",
    "gaussian_1d",
    "composition_noncentrality",
    "gaussian_composition",
    "asymptotic",
    "asymptotic_gap",
    "subsampled_gaussian",
    "subsampled_laplace",
    "DRResult",
    "detection_resilience",
    "WEIGHTINGS",
]

WEIGHTINGS = ("optimal", "inverse-variance", "mean")


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
    """Exp(b): the magnitude |theta| of Lap(0, b), the statistic under H0 (proof of Thm. 1)."""

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
    """FoldL(Delta, b): the magnitude |theta| of Lap(Delta, b), the statistic under H1.

    CDF and quantile exactly as printed in the proof of Thm. 1 (Liu and Kozubowski 2015):
    ``Phi(x) = exp(-Delta/b) sinh(x/b)`` for ``x < Delta`` and ``1 - exp(-x/b) cosh(Delta/b)``
    above; the quantile switches branch at ``Phi(Delta) = 1/2 - exp(-2 Delta/b)/2``.
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


def laplace(mu: float) -> TradeOffCurve:
    """RTM curve ``j_Lap`` of the Laplace mechanism, ``mu = Delta_1 / b`` (Thm. 1, eqs. 2-3).

    ``j = T(Exp(b), FoldL(Delta_1, b))``: H0 = |theta| under Lap(0, b), H1 = |theta| under
    Lap(Delta_1, b) (eq. 30).  Closed forms:

    * eq. 2: ``j(alpha) = -exp(-mu) sinh(log alpha)`` for ``alpha >= exp(-mu)``, else
      ``1 - alpha cosh(mu)``;
    * eq. 3 (inverse): ``1 / (alpha e^mu + sqrt(alpha^2 e^{2 mu} + 1))`` for
      ``alpha < 1/2 - exp(-2 mu)/2``, else ``(1 - alpha) / cosh(mu)``.  The paper prints the
      branch point as ``1/2 - exp(-mu)/2``, which makes ``j^{-1}`` discontinuous; the correct
      point ``Phi_FoldL(Delta_1) = 1/2 - exp(-2 mu)/2`` is used here.

    Written with ``exp(log alpha + mu)`` so that large ``mu`` does not overflow.
    """
    mu = check_nonnegative("mu", mu)
    emu = np.exp(-mu)

    def alpha_cosh(a):  # alpha * cosh(mu) without overflow (used only where alpha < exp(-mu))
        with np.errstate(divide="ignore", over="ignore"):
            return 0.5 * (np.exp(np.log(a) + mu) + a * emu)

    def upper_branch(a):  # alpha >= exp(-mu); a > 0 matters once exp(-mu) underflows to 0
        return (a >= emu) & (a > 0)

    def f(a):
        a = np.asarray(a, dtype=float)
        with np.errstate(divide="ignore", over="ignore"):
            # -exp(-mu) sinh(log a) = (exp(-mu) / a - a exp(-mu)) / 2
            upper = 0.5 * (np.exp(-mu - np.log(a)) - a * emu)
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
        return np.where(b < -0.5 * np.expm1(-2.0 * mu), low, high)

    return TradeOffCurve(f, inverse, power, name=f"RTM Laplace mu={mu:g}")


# ---------------------------------------------------------------------------------------------
# Gaussian mechanism (Thm. 2, Cor. 1) and non-adaptive composition (Lemma 8)
# ---------------------------------------------------------------------------------------------


def _chi2_curve(kappa: float, d: int, name: str) -> TradeOffCurve:
    """``T(chi2_d, chi2_d(kappa))``: central vs non-central chi-square with d degrees of freedom.

    The common scale sigma^2 of eq. 4 (or sigma_c^2 of eq. 6) cancels in a trade-off curve.
    """
    if kappa < np.finfo(float).tiny:
        kappa = 0.0  # scipy's ncx2 is inaccurate (errors ~1e-4) for subnormal non-centralities
    return from_test_statistic(chi2(d), ncx2(d, kappa), name=name)


def gaussian(mu: float, d: int = 1, steps: int = 1) -> TradeOffCurve:
    """RTM curve ``j_GM`` of the Gaussian mechanism, ``mu = Delta_2 / sigma``, dimension ``d``.

    ``j = T(chi2_d(0, sigma^2), chi2_d(mu^2, sigma^2))``: H0 = ||theta||^2 under N(0, sigma^2 I_d),
    H1 = ||theta||^2 under N(nu, sigma^2 I_d) with ||nu|| = Delta_2 (Thm. 2, eq. 4), computed
    with ``scipy.stats.chi2`` / ``ncx2`` (isf/sf at small levels).  ``j.inverse`` is j^{-1}.

    ``steps = N`` gives the N-fold homogeneous non-adaptive composition (Lemma 8, eqs. 47-48):
    the statistic is the squared norm of the average release, ``chi2_d(0, sigma^2/N)`` vs
    ``chi2_d(N mu^2, sigma^2/N)``, i.e. the single mechanism with ``mu sqrt(N)`` and the same d.
    """
    mu = check_nonnegative("mu", mu)
    d = check_positive_int("d", d)
    steps = check_positive_int("steps", steps)
    return _chi2_curve(steps * mu**2, d, f"RTM Gaussian mu={mu:g} d={d} N={steps}")


def gaussian_1d(mu: float) -> TradeOffCurve:
    """Closed form of ``j_GM`` for d = 1 (Cor. 1, eq. 5); the inverse is computed numerically.

    ``j(alpha) = Phi(Psi^{-1}(alpha/2) - mu) - Psi(Psi^{-1}(alpha/2) + mu)``: H0 = |theta| under
    N(0, 1), H1 = |theta| under N(mu, 1), threshold ``Psi^{-1}(alpha/2)`` (two-sided test).
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
    """
    deltas, sig = _check_composition(sensitivities, sigmas)
    if weighting == "optimal":
        return float(np.sum((deltas / sig) ** 2))
    if weighting == "inverse-variance":
        return float(np.sum(deltas / sig**2) ** 2 / np.sum(1.0 / sig**2))
    if weighting == "mean":
        return float(np.sum(deltas) ** 2 / np.sum(sig**2))
    raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}")


def gaussian_composition(sensitivities, sigmas, d: int = 1, weighting: str = "optimal") -> TradeOffCurve:
    """RTM curve ``j_GMC`` of N non-adaptively composed GMs with (Delta_i, sigma_i) (Lemma 8, eq. 6).

    ``j = T(chi2_d(0), chi2_d(kappa))`` with kappa from :func:`composition_noncentrality`
    (H0: all releases centred at q(D); H1: shifted by Delta_i along a common direction).
    ``j.inverse`` is j^{-1}.  With ``weighting="optimal"`` this is :func:`gaussian` with
    ``mu = sqrt(sum (Delta_i / sigma_i)^2)``.
    """
    d = check_positive_int("d", d)
    kappa = composition_noncentrality(sensitivities, sigmas, weighting)
    n = np.atleast_1d(sensitivities).size
    return _chi2_curve(kappa, d, f"RTM Gaussian composition N={n} d={d} ({weighting})")


# ---------------------------------------------------------------------------------------------
# Asymptotics (Thm. 3)
# ---------------------------------------------------------------------------------------------


def asymptotic(mu: float, d: int = 1, steps: int = 1, form: str = "clt") -> TradeOffCurve:
    """Large-d form of ``j_GM`` for N homogeneous compositions (Thm. 3, eq. 7), kappa = N mu^2.

    ``form="clt"`` (left side of eq. 7): the statistic is replaced by its normal limit,
    N(d, 2d) under H0 and N(d + kappa, 2d + 4 kappa) under H1 (eqs. 49-50), giving
    ``j(alpha) = Phi((Psi^{-1}(alpha) - kappa / sqrt(2d)) / sqrt(1 + 2 kappa / d))`` (eq. 55) and
    the exact inverse ``Phi(sqrt(1 + 2 kappa / d) Psi^{-1}(beta) - kappa / sqrt(2d))``.  Eqs. 7
    and 56 print the shift as ``sqrt(2) kappa / (2d)``; eq. 55 gives ``kappa / sqrt(2d)``.

    ``form="gaussian"`` (right side of eq. 7, eq. 59): the symmetric Gaussian curve
    ``Phi(Psi^{-1}(alpha) - N mu^2 / sqrt(2d))`` (printed as ``N sqrt(mu / (2d))``).

    The "clt" curve is not a trade-off function in general (the two normals have different
    variances, so the one-sided test is not the Neyman-Pearson test): it exceeds ``1 - alpha``
    where ``Psi^{-1}(alpha) < -(kappa / sqrt(2d)) / (sqrt(1 + 2 kappa/d) - 1)``, which is far in
    the tail only when kappa / d is small (the regime of Thm. 3).

    Both approach the exact curves only as d grows (faster than N^2 mu^4); for fixed d the
    null distribution chi2_d stays skewed however large N is.  See :func:`asymptotic_gap`.
    """
    mu = check_nonnegative("mu", mu)
    d = check_positive_int("d", d)
    steps = check_positive_int("steps", steps)
    kappa = steps * mu**2
    shift = kappa / np.sqrt(2.0 * d)
    if form == "gaussian":
        curve = tradeoff.gaussian(shift)
        curve.name = f"RTM asymptotic (Gaussian) mu={mu:g} d={d} N={steps}"
        return curve
    if form != "clt":
        raise ValueError(f"form must be 'clt' or 'gaussian', got {form!r}")
    s = np.sqrt(1.0 + 2.0 * kappa / d)

    def f(a):
        return norm.cdf((norm.isf(a) - shift) / s)

    def power(a):
        return norm.sf((norm.isf(a) - shift) / s)

    def inverse(b):
        return norm.cdf(s * norm.isf(b) - shift)

    return TradeOffCurve(f, inverse, power, name=f"RTM asymptotic (CLT) mu={mu:g} d={d} N={steps}")


def asymptotic_gap(mu: float, d: int = 1, steps: int = 1, form: str = "clt", grid=None) -> float:
    """Largest absolute difference between the exact and the asymptotic curves (Thm. 3).

    ``max over alpha in grid of max(|j - a|, |j^{-1} - a^{-1}|)`` with ``j = gaussian(mu, d,
    steps)`` and ``a = asymptotic(mu, d, steps, form)``; grid defaults to
    :func:`fdp.tradeoff.default_grid` (401 points).
    """
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


def subsampled_gaussian(mu: float, p: float, d: int = 1, grid=None) -> tradeoff.PiecewiseLinear:
    """``J_SGM = C(j_p, j_p^{-1})`` of the Poisson-subsampled GM, one step (Sec. 4, Lemma 9).

    ``j_p = T(chi2_d(0), (1-p) chi2_d(0) + p chi2_d(mu^2))`` = ``p j_GM + (1-p)(1-alpha)``
    (H0: M(D), H1: subsampled M(D u {x*}); the statistic is ||theta||^2), ``j_p^{-1}`` its
    inverse (bisection).  Symmetrised with :func:`fdp.tradeoff.symmetrise` on ``grid`` (default
    :func:`fdp.tradeoff.default_grid`) and mirrored so that it is exactly symmetric; the result
    is piecewise linear with vertices on the exact J, so it lies on or above it.  The asymmetric
    j_p is ``tradeoff.subsample(gaussian(mu, d), p)``.
    """
    p = check_sampling_rate("p", p)
    return _subsampled(gaussian(mu, d), p, grid, f"RTM J, subsampled Gaussian mu={mu:g} d={d} p={p:g}")


def subsampled_laplace(mu: float, p: float, grid=None) -> tradeoff.PiecewiseLinear:
    """``J = C(j_p, j_p^{-1})`` of the Poisson-subsampled LM, ``j_p = p j_Lap + (1-p)(1-alpha)``.

    Same construction as :func:`subsampled_gaussian` with :func:`laplace` (Lemma 9; App. 7.1,
    Fig. 5a).  The asymmetric j_p is ``tradeoff.subsample(laplace(mu), p)``.
    """
    p = check_sampling_rate("p", p)
    return _subsampled(laplace(mu), p, grid, f"RTM J, subsampled Laplace mu={mu:g} p={p:g}")


# ---------------------------------------------------------------------------------------------
# lambda-detection resilience (Def. 3)
# ---------------------------------------------------------------------------------------------


class DRResult(NamedTuple):
    """Outcome of :func:`detection_resilience`."""

    holds: bool
    worst_margin: float  # min over the grid of min(f, f^{-1}) - lambda; negative = violated
    worst_alpha: float  # the level where it is attained


def detection_resilience(curve: TradeOffCurve, reference: TradeOffCurve, grid=None, atol: float = 1e-9) -> DRResult:
    """Decide lambda-DR (Def. 3): ``J = C(f, f^{-1}) >= lambda`` on ``grid``, up to ``atol``.

    ``curve`` is a mechanism's RTM curve (j or the symmetrised J), ``reference`` is lambda.
    Since lambda is convex, ``C(f, f^{-1}) >= lambda`` iff ``min(f, f^{-1}) >= lambda``, so the
    margin ``min(f(alpha), f^{-1}(alpha)) - lambda(alpha)`` is checked; both j and J give the
    same answer.  ``grid`` defaults to :func:`fdp.tradeoff.default_grid`.
    """
    atol = check_nonnegative("atol", atol)
    grid = tradeoff.default_grid() if grid is None else np.atleast_1d(check_array_in("grid", grid, 0.0, 1.0))
    margin = np.minimum(curve(grid), curve.inverse(grid)) - reference(grid)
    if not np.all(np.isfinite(margin)):
        raise ValueError(f"{curve.name} or {reference.name}: non-finite values on the grid")
    i = int(np.argmin(margin))
    return DRResult(bool(margin[i] >= -atol), float(margin[i]), float(grid[i]))
