"""Reconstruction robustness (ReRo) bounds.

A mechanism is (eta, gamma)-ReRo if no reconstruction attack succeeds with probability above
gamma; ``kappa = kappa(eta)`` is the prior probability of success without observing the
output (``1/n`` for a uniform prior over n candidates and exact matching).

* :func:`gamma` -- ``1 - f(kappa)`` for the add-direction trade-off curve f (ReRo paper Thm. 1,
  equivalently Hayes et al. Cor. 4 with the blow-up function ``B_kappa = 1 - T_kappa``).
* :func:`gamma_eps_delta` -- ``min(e^eps kappa + delta, 1)`` (ReRo paper Thm. 1).
* :func:`gamma_gaussian_log_kappa` -- ``1 - G_mu(kappa)`` for a prior given by its logarithm, down to
  kappa far below the smallest float (Hayes et al. App. I: kappa = 1e-473 on MNIST).
* :func:`log_kappa_box` -- log kappa of the App. I criterion (at least a fraction rho of the d
  coordinates within a radius of the target) under the uniform prior on [0, 1]^d.
* :func:`gamma_rdp` -- the RDP-based bound of Balle et al. for full-batch DP-SGD (Hayes et al. eq. 2).
* :func:`advantage` -- ``(gamma - kappa) / (1 - kappa)`` (Hayes et al. eq. 4).
* :func:`orthogonal_prior_success` -- the success of the best attack on full-batch DP-SGD when the
  n candidates' clipped gradients are mutually orthogonal with norm C (the Gaussian picture of
  Hayes et al. Sec. 3.4): a reference between the bound and attacks on real data.
* The Fano bound of Guo, Sablayrolles, Sanjabi (2022) as used in Hayes et al. App. H:
  :func:`fano_advantage` with :func:`guo_mutual_information_bound` (analytic) or
  :func:`guo_mutual_information_mc` (Monte Carlo), and :func:`fano_advantage_mc` with the standard error the
  Monte-Carlo information carries into the bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from joblib import delayed
from scipy.optimize import brentq
from scipy.special import logsumexp, ndtr, ndtri_exp, xlogy

from ..parallel import chunks, run
from ..validation import (
    check_array_in,
    check_nonnegative,
    check_positive,
    check_positive_int,
    check_probability,
)
from .tradeoff import TradeOffCurve

__all__ = [
    "gamma",
    "gamma_eps_delta",
    "gamma_gaussian_log_kappa",
    "log_kappa_box",
    "gamma_rdp",
    "advantage",
    "orthogonal_prior_success",
    "fano_advantage",
    "fano_advantage_mc",
    "guo_mutual_information_bound",
    "guo_mutual_information_mc",
    "MutualInformationEstimate",
]


def _kappa(kappa) -> np.ndarray:
    return check_array_in("kappa", kappa, 0.0, 1.0, open_low=True, open_high=True)


def gamma(curve: TradeOffCurve, kappa):
    """ReRo bound ``gamma = 1 - f(kappa)`` for the add-direction curve ``f`` (ReRo paper Thm. 1).

    ``kappa`` must lie in (0, 1); the result lies in [kappa, 1] and is non-decreasing in kappa.
    Every trade-off function has ``f(kappa) <= 1 - kappa``, so ``gamma >= kappa`` always holds; the
    result is the larger of the two, which only removes rounding (or an approximation's error)
    below that trivial bound.

    Parameters
    ----------
    curve : fdp.curves.tradeoff.TradeOffCurve
        ``f = T(P, Q)`` in the add direction.
    kappa : float or array_like
        Prior success probabilities of the adversary, in (0, 1).

    Returns
    -------
    numpy.ndarray
        ``gamma``, the shape of ``kappa``.

    References
    ----------
    ReRo paper (Kaissis et al. 2023a) Thm. 1 and Cor. 2.

    Examples
    --------
    >>> from fdp.curves import tradeoff
    >>> [round(g, 6) for g in gamma(tradeoff.gaussian(mu=2.0), [0.1, 0.01]).tolist()]
    [0.76376, 0.372081]
    """
    k = _kappa(kappa)
    return np.maximum(curve.power(k), k)


def gamma_eps_delta(epsilon: float, delta: float, kappa):
    """ReRo bound ``min(e^eps kappa + delta, 1)`` of an (eps, delta)-DP mechanism (ReRo paper Thm. 1).

    Parameters
    ----------
    epsilon : float
        >= 0.
    delta : float
        In [0, 1].
    kappa : float or array_like
        The baseline (prior) success probability, in (0, 1).

    Returns
    -------
    float or numpy.ndarray

    References
    ----------
    ReRo paper (Kaissis et al. 2023a) Thm. 1 (after Balle et al. 2022).

    Examples
    --------
    >>> round(float(gamma_eps_delta(1.0, 1e-5, 0.01)), 6)  # e * 0.01 + 1e-5
    0.027193
    """
    epsilon = check_nonnegative("epsilon", epsilon)
    delta = check_probability("delta", delta)
    return np.minimum(np.exp(epsilon) * _kappa(kappa) + delta, 1.0)


def gamma_gaussian_log_kappa(mu: float, log_kappa):
    """ReRo bound ``1 - G_mu(kappa) = Phi(mu + Phi^{-1}(kappa))`` of mu-GDP, with the prior given as ``log kappa``.

    The same value as ``gamma(tradeoff.gaussian(mu), kappa)``, for priors too small to be floats: the
    App. I experiments of Hayes et al. have kappa = 0.25^784 = 1e-473 on MNIST.

    Parameters
    ----------
    mu : float
        >= 0 (full-batch DP-SGD: ``sqrt(T) / sigma``).
    log_kappa : float or array_like
        Natural logarithms of the prior success probabilities, <= 0 (0: every guess succeeds, gamma = 1).

    Returns
    -------
    numpy.ndarray
        ``gamma`` in (0, 1], the shape of ``log_kappa``.

    References
    ----------
    ReRo paper (Kaissis et al. 2023a) Thm. 1 with the Gaussian curve (Dong et al. 2022); Hayes et al. (2023) App. I.

    Examples
    --------
    >>> round(float(gamma_gaussian_log_kappa(2.0, np.log(0.1))), 5)  # = gamma(tradeoff.gaussian(2), 0.1)
    0.76376
    >>> round(float(gamma_gaussian_log_kappa(46.0, 784 * np.log(0.25))), 4)  # Phi(46 - 46.52)
    0.3012
    """
    mu = check_nonnegative("mu", mu)
    lk = np.asarray(log_kappa, dtype=np.float64)
    if lk.size == 0 or not np.all(np.isfinite(lk) & (lk <= 0.0)):
        raise ValueError(f"log_kappa must be finite and <= 0 (kappa in (0, 1]), got {log_kappa!r}")
    return ndtr(mu + ndtri_exp(lk))


def log_kappa_box(dimension: int, rho, radius: float, *, paper: bool = False):
    """log kappa of Hayes et al.'s App. I success criterion under the uniform prior on [0, 1]^d.

    A reconstruction succeeds when at least a fraction ``rho`` of its ``d`` coordinates lie within
    ``radius`` of the target's.  For a guess drawn uniformly from [0, 1]^d each coordinate does so with
    probability at most ``p = min(2 radius, 1)`` (exactly p for a coordinate of the target at least
    ``radius`` from 0 and 1), independently, so the best any prior-oblivious guess achieves is the
    binomial tail ``kappa = P(Bin(d, p) >= ceil(rho d))``.  ``paper=True`` gives the value the paper
    uses instead, ``p^(rho d)``: the same at ``rho = 1`` but smaller for ``rho < 1`` (it counts one set
    of ``rho d`` coordinates, not all of them), so its bound is too small there.

    Parameters
    ----------
    dimension : int
        ``d``.
    rho : float or array_like
        In (0, 1].
    radius : float
        In (0, 1/2].
    paper : bool, default False

    Returns
    -------
    numpy.ndarray
        Natural logarithms, the shape of ``rho``.

    References
    ----------
    Hayes et al. (2023) App. I (radius 32/255 and kappa = (64/256)^(rho d)).

    Examples
    --------
    >>> round(float(log_kappa_box(784, 1.0, 0.125) / np.log(10)), 2)  # the paper's 9.66e-473 on MNIST
    -472.02
    >>> bool(log_kappa_box(784, 0.6, 0.125) > log_kappa_box(784, 0.6, 0.125, paper=True))
    True
    """
    from scipy.stats import binom

    d = check_positive_int("dimension", dimension)
    r = check_array_in("rho", rho, 0.0, 1.0, open_low=True)
    radius = check_positive("radius", radius)
    if radius > 0.5:
        raise ValueError(f"radius must be at most 1/2 (every coordinate then qualifies), got {radius!r}")
    p = 2.0 * radius
    if paper:
        return r * d * np.log(p)
    if p == 1.0:
        return np.zeros_like(r)
    logpmf = binom.logpmf(np.arange(d + 1), d, p)
    out = []
    for need in np.ceil(np.ravel(r) * d - 1e-9).astype(int):  # at least rho d coordinates (rho d when an integer)
        if need == 0:
            out.append(0.0)
        elif need > d * p:  # the upper tail is the small side: sum it directly
            out.append(logsumexp(logpmf[need:]))
        else:  # 1 - the lower tail
            out.append(np.log1p(-min(1.0, float(np.exp(logsumexp(logpmf[:need]))))))
    return np.minimum(np.array(out), 0.0).reshape(np.shape(r))  # never above log 1 = 0


def gamma_rdp(noise_multiplier: float, steps: int, kappa):
    """RDP-based ReRo bound for full-batch DP-SGD (Balle et al. 2022; Hayes et al. eq. 2).

    ``exp(-max{0, sqrt(log(1/kappa)) - sqrt(T / (2 sigma^2))}^2)`` for ``T = steps`` iterations
    with noise multiplier ``noise_multiplier``.

    Parameters
    ----------
    noise_multiplier : float
        > 0.
    steps : int
        >= 1.
    kappa : float or array_like
        The baseline success probability, in (0, 1).

    Returns
    -------
    float or numpy.ndarray

    References
    ----------
    Balle, Cherubin, Hayes (2022); Hayes et al. (2023) eq. 2.

    Examples
    --------
    >>> round(float(gamma_rdp(1.0, 1, 0.01)), 6)  # exp(-(sqrt(log 100) - sqrt(1/2))^2)
    0.126146
    """
    noise_multiplier = check_positive("noise_multiplier", noise_multiplier)
    steps = check_positive_int("steps", steps)
    k = _kappa(kappa)
    gap = np.maximum(0.0, np.sqrt(np.log(1.0 / k)) - np.sqrt(steps / (2.0 * noise_multiplier**2)))
    return np.exp(-(gap**2))


def advantage(gamma_value, kappa):
    """Advantage ``(gamma - kappa) / (1 - kappa)`` of a success probability over the prior (Hayes et al. eq. 4).

    Parameters
    ----------
    gamma_value : float or array_like
        A success probability (a bound or a measured rate).
    kappa : float or array_like
        The prior's success probability, in (0, 1).

    Returns
    -------
    float or numpy.ndarray

    References
    ----------
    Hayes et al. (2023) eq. 4.

    Examples
    --------
    >>> round(float(advantage(0.5, 0.1)), 6)  # (0.5 - 0.1) / 0.9
    0.444444
    """
    k = _kappa(kappa)
    g = check_array_in("gamma", gamma_value, 0.0, 1.0)
    return (g - k) / (1.0 - k)


def orthogonal_prior_success(mu: float, prior_size: int) -> float:
    """``P(X_0 + mu > max_{i<n} X_i)`` for i.i.d. standard normals: the success probability of the
    maximum-likelihood guess among ``n = prior_size`` candidates whose clipped gradients are
    orthogonal with norm C, after full-batch DP-SGD with ``mu = sqrt(T) / sigma``.

    Each candidate's summed inner product (Alg. 2), scaled by ``C^2 sigma sqrt(T)``, is then
    N(mu, 1) for the target and N(0, 1) for the others, independently; for this geometry Alg. 2 is
    the Bayes-optimal attack.  The value lies below the ReRo bound ``gamma(1/n)``.

    Parameters
    ----------
    mu : float
        ``sqrt(T) / sigma``, >= 0.
    prior_size : int
        ``n`` >= 2 candidates.

    Returns
    -------
    float

    References
    ----------
    Hayes et al. (2023) Sec. 3.4 and Alg. 2 (the geometry behind their rationale).

    Examples
    --------
    >>> round(orthogonal_prior_success(0.0, 10), 12)  # no signal: the prior 1/n
    0.1
    """
    from scipy import integrate
    from scipy.stats import norm

    mu = check_nonnegative("mu", mu)
    n = _prior_size(prior_size)
    # integrate phi(x - mu) Phi(x)^(n-1) over x; log-space power keeps Phi^(n-1) accurate for large n
    f = lambda x: np.exp(norm.logpdf(x - mu) + (n - 1) * norm.logcdf(x))
    lo, hi = min(-12.0, mu - 12.0), mu + 12.0
    value, _ = integrate.quad(f, lo, hi, points=[mu], limit=200, epsabs=1e-12)
    return float(min(1.0, value))


def _prior_size(prior_size) -> int:
    n = check_positive_int("prior_size", prior_size)
    if n < 2:
        raise ValueError(f"prior_size must be an integer >= 2, got {n!r}")
    return n


def _fano_gap(t: float, entropy: float, information: float, prior_size: int) -> float:
    # Hayes et al. eq. (5): f(t) = H(pi) - I(pi; w) + t log t + (1 - t) log(1 - t) - t log(|pi| - 1)
    return entropy - information + xlogy(t, t) + xlogy(1 - t, 1 - t) - t * np.log(prior_size - 1)


def fano_advantage(mutual_information, prior_size: int):
    """Advantage bound from Fano's inequality for a uniform prior (Guo et al. 2022; Hayes et al. eq. 5).

    The smallest error ``t`` with ``f(t) <= 0`` in eq. (5), where ``H(pi) = log |pi|``, bounds the
    adversary's error from below; the advantage bound is ``(1 - t - 1/|pi|) / (1 - 1/|pi|)``.
    ``f`` decreases on ``[0, 1 - 1/|pi|]`` from ``H - I`` to ``-I``, so the root is unique; if
    ``I >= H`` the bound is the trivial advantage 1.  Mutual information is in nats.

    Parameters
    ----------
    mutual_information : float
        ``I(pi; w)`` in nats, >= 0.
    prior_size : int
        ``|pi|`` >= 2.

    Returns
    -------
    float
        The advantage bound, in [0, 1].

    References
    ----------
    Guo et al. (2022a); Hayes et al. (2023) eq. 5, App. H.

    Examples
    --------
    >>> fano_advantage(0.0, 10)  # no information, no advantage
    0.0
    """
    n = _prior_size(prior_size)
    info = check_array_in("mutual_information", mutual_information, 0.0, np.inf)
    entropy = np.log(n)
    out = np.empty(info.shape)
    for idx, value in np.ndenumerate(info):
        if value >= entropy:
            t = 0.0
        elif value == 0.0:
            t = 1.0 - 1.0 / n
        else:
            t = brentq(_fano_gap, 0.0, 1.0 - 1.0 / n, args=(entropy, value, n), xtol=1e-15, rtol=1e-15)
        # the clip only removes rounding at t = 1 - 1/n (advantage exactly 0)
        out[idx] = min(max((1.0 - t - 1.0 / n) / (1.0 - 1.0 / n), 0.0), 1.0)
    return out if out.ndim else float(out)


def guo_mutual_information_bound(sigma: float, prior_size: int, sensitivity: float = 1.0) -> float:
    """Analytic upper bound on I(pi; w) for the Gaussian mechanism and a uniform prior (nats).

    ``-sum_i p_i log(p_i + (1 - p_i) exp(-Delta^2 / (2 sigma^2)))`` with ``p_i = 1/|pi|``
    (Guo et al. 2022, as quoted in Hayes et al. App. H).  ``sensitivity`` (Delta) is the largest
    distance between the mechanism's means for two different prior elements; for a prior of
    orthonormal unit gradients that distance is ``sqrt(2)``.

    Parameters
    ----------
    sigma : float
        The noise's standard deviation sigma, > 0.
    prior_size : int
        ``|pi|`` >= 2.
    sensitivity : float, default 1.0
        Delta, the largest distance between two candidates' means.

    Returns
    -------
    float
        Nats.

    References
    ----------
    Guo et al. (2022a); Hayes et al. (2023) App. H.

    Examples
    --------
    >>> round(guo_mutual_information_bound(1.0, 2), 6)  # two candidates, Delta = sigma = 1
    0.21907
    """
    sigma = check_positive("sigma", sigma)
    n = _prior_size(prior_size)
    delta = check_positive("sensitivity", sensitivity)
    p = 1.0 / n
    return float(-np.log(p + (1.0 - p) * np.exp(-(delta**2) / (2.0 * sigma**2))))


@dataclass(frozen=True)
class MutualInformationEstimate:
    """Monte-Carlo estimate of a mutual information (nats) with its standard error.

    Attributes
    ----------
    estimate, std_error : float
        Nats.
    samples, seed : int
    """

    estimate: float
    std_error: float
    samples: int
    seed: int


def _mi_chunk(sigma: float, n: int, samples: int, seed_seq: np.random.SeedSequence) -> tuple[float, float]:
    rng = np.random.default_rng(seed_seq)
    # Output for target 0: w = e_0 + N(0, sigma^2 I_n); coordinates beyond n carry no information.
    w = sigma * rng.standard_normal((samples, n))
    w[:, 0] += 1.0
    # log mu_0(w) - log((1/n) sum_j mu_j(w)) = log n - log sum_j exp((w_j - w_0) / sigma^2)
    terms = np.log(n) - logsumexp((w - w[:, :1]) / sigma**2, axis=1)
    return float(terms.sum()), float((terms**2).sum())


def guo_mutual_information_mc(
    noise_multiplier: float, prior_size: int, samples: int = 1_000_000, seed: int = 0, chunk: int = 200_000, n_jobs: int = 1
) -> MutualInformationEstimate:
    """Monte-Carlo estimate of I(pi; w) for one Gaussian step and a uniform prior of orthonormal unit vectors.

    The mechanism releases ``w = e_Z + N(0, sigma^2 I)`` with ``Z`` uniform on ``{1..|pi|}``
    (Hayes et al. App. H, "Guo et al. (MC)").  By symmetry ``I = E[log mu_Z(w) - log mean_j mu_j(w)]``
    can be evaluated with ``Z = 1``.  Samples are drawn in independent chunks (joblib) seeded from
    ``seed``.

    Parameters
    ----------
    noise_multiplier : float
        The noise's standard deviation for candidates of unit norm (a noise multiplier), > 0.
    prior_size : int
        ``|pi|`` >= 2 (the dimension of the unit vectors).
    samples : int, default 1,000,000
    seed : int, default 0
    chunk : int, default 200,000
        Samples per joblib task.
    n_jobs : int, default 1

    Returns
    -------
    MutualInformationEstimate

    References
    ----------
    Hayes et al. (2023) App. H.

    Examples
    --------
    >>> est = guo_mutual_information_mc(1.0, 2, samples=20_000)
    >>> bool(0.0 < est.estimate < guo_mutual_information_bound(1.0, 2, 2 ** 0.5))  # below the analytic bound
    True
    """
    noise_multiplier = check_positive("noise_multiplier", noise_multiplier)
    n = _prior_size(prior_size)
    samples = check_positive_int("samples", samples)
    chunk = check_positive_int("chunk", chunk)
    parts = run((delayed(_mi_chunk)(noise_multiplier, n, s, ss) for s, ss in chunks(samples, chunk, seed)), n_jobs)
    total = sum(p[0] for p in parts)
    total_sq = sum(p[1] for p in parts)
    mean = total / samples
    var = max(total_sq / samples - mean**2, 0.0)
    return MutualInformationEstimate(mean, float(np.sqrt(var / samples)), samples, seed)


def fano_advantage_mc(estimate: MutualInformationEstimate, prior_size: int) -> tuple[float, float]:
    """The Fano advantage bound of a Monte-Carlo mutual information, with its standard error.

    The error is the larger change of :func:`fano_advantage` one standard error either side of the estimate (a secant,
    the delta method without the derivative, which is infinite at 0 and 0 beyond ``log |pi|``): near the middle it is
    the slope times the standard error, at the edges it stays what a standard error of the information can move.  An
    estimate below 0 (Monte-Carlo noise: the information is >= 0) counts as 0.  The error scales as
    ``1 / sqrt(samples)``: a run with ``m`` samples has about ``std_error * sqrt(estimate.samples / m)``.

    Parameters
    ----------
    estimate : MutualInformationEstimate
        From :func:`guo_mutual_information_mc`.
    prior_size : int
        ``|pi|`` >= 2.

    Returns
    -------
    (float, float)
        The advantage bound and its standard error.

    References
    ----------
    Hayes et al. (2023) eq. 5, App. H ("Guo et al. (MC)").

    Examples
    --------
    >>> adv, se = fano_advantage_mc(MutualInformationEstimate(0.5, 0.001, 10**6, 0), 10)
    >>> adv == fano_advantage(0.5, 10), bool(0 < se < 0.01)
    (True, True)
    """
    if not isinstance(estimate, MutualInformationEstimate):
        raise ValueError(f"estimate must be a MutualInformationEstimate, got {type(estimate).__name__}")
    info = max(float(check_array_in("estimate.estimate", estimate.estimate, -np.inf, np.inf)), 0.0)
    se = check_nonnegative("estimate.std_error", estimate.std_error)
    adv = float(fano_advantage(info, prior_size))
    return adv, float(max(abs(fano_advantage(info + se, prior_size) - adv), abs(adv - fano_advantage(max(info - se, 0.0), prior_size))))
