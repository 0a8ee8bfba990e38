"""Closed forms of the relaxed threat model's curves: the Laplace mechanism (Thm. 1), the Gaussian mechanism in d
dimensions (Thm. 2, Cor. 1), the non-adaptive composition of Gaussian releases (Lemma 8) and the large-d asymptotics
(Thm. 3)."""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from ...curves import tradeoff
from ...curves.tradeoff import TradeOffCurve
from ...validation import check_array_in, check_nonnegative, check_positive, check_positive_int, spelled
from ..chisquare import SERIES_FROM, Chi2, NoncentralChi2
from .statistics import Exponential, FoldedLaplace, from_test_statistic

__all__ = [
    "laplace", "laplace_branch_error", "gaussian", "gaussian_1d", "composition_noncentrality",
    "gaussian_composition", "ASYMPTOTIC_FORMS", "asymptotic", "asymptotic_gap", "WEIGHTINGS",
]

#: How the releases of a sum statistic are weighted.
WEIGHTINGS = ("optimal", "inverse-variance", "mean")


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
            # 1 - alpha cosh(mu) = (1 - alpha) - alpha (cosh(mu) - 1): for small mu, cosh(mu) rounds to 1 and the
            # subtraction would drop the mu^2 term (above the curve near alpha = 1); for mu > 1 the value is >= 0.43
            lower = (1.0 - a) - a * (2.0 * np.sinh(0.5 * mu) ** 2) if mu <= 1.0 else 1.0 - alpha_cosh(a)
        return np.where(upper_branch(a), upper, lower)

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
        raise ValueError(f"{spelled('mu')} must lie in [1e-6, 300] (the two branch points are then apart and the curves finite), got {mu!r}")
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
