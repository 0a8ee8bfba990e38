"""Monte-Carlo estimate of the ReRo bound: Hayes et al. (2023) Algorithm 1.

For DP-SGD with noise multiplier sigma (``noise_multiplier``), sampling rate q (``sampling_rate``) and ``T`` steps (sensitivity 1),
Hayes et al. Cor. 4 bounds reconstruction success by the blow-up
``gamma = sup{mu(E) : nu(E) <= kappa}`` with ``nu = N(0, sigma^2 I_T)`` and
``mu = sum_w P[B(q, T) = w] N(w, sigma^2 I_T)`` (the add direction: ``1 - T(nu, mu)(kappa)``).

Algorithm 1 draws ``N`` samples from ``nu``, keeps the ``ceil(kappa N)`` largest likelihood
ratios ``r = mu / nu`` and averages them.  The change of measure ``mu(E) = E_nu[r 1{E}]`` it
rests on requires dividing their sum by ``N``; the paper prints division by ``ceil(kappa N)``,
which would return the mean ratio of the kept samples (a number above 1).  We divide by ``N``
(see the errata page).

The implementation streams over steps in blocks, so memory is O(samples) rather than
O(samples x steps), and draws independent chunks of samples through joblib, each seeded from
``numpy.random.SeedSequence(seed).spawn``: the result does not depend on ``n_jobs``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from joblib import delayed
from scipy.stats import norm

from ..diagnostics import warns
from ..intervals import Interval
from ..parallel import check_n_jobs, chunks, run
from ..result import Result
from ..validation import (
    ResourceLimitError,
    check_array_in,
    check_open_unit,
    check_positive_int,
    check_seed,
    spelled,
)
from .privacy_loss import Mechanism, log_ratio, subsampled, takes_mechanism

__all__ = [
    "MonteCarloGamma",
    "MIN_KEPT",
    "MAX_DRAWS",
    "check_samples_for_kappa",
    "log_likelihood_ratios",
    "gamma_from_log_ratios",
    "gamma_mc",
    "gamma_spread",
]


@dataclass(frozen=True, kw_only=True)
class MonteCarloGamma(Result):
    """Result of :func:`gamma_mc`; arrays have one entry per kappa.

    ``lower``/``upper`` form a two-sided confidence interval of level ``confidence``:
    with ``interval_method="asymptotic"`` the normal interval ``estimate +- z * std_error``; with
    ``interval_method="dkw"`` a conservative one that also moves the quantile by the DKW radius.
    Everything lies in [kappa, 1] (``gamma >= kappa`` holds for every mechanism).

    ``mass`` is the sample mean of all likelihood ratios, an estimate of ``E_P[Q/P] = 1``; far below
    1 the samples missed where Q has its mass (the importance sampling collapsed).  ``collapsed``
    flags, per kappa, a mass outside [0.9, 1.1] or kept ratios dominated by fewer than 5 samples
    (their effective sample size ``(sum r)^2 / sum r^2``); there the estimate is not trustworthy, the
    interval is widened to the trivially valid ``[kappa, 1]`` and ``warnings`` says why.

    Attributes
    ----------
    kappa, estimate, std_error, lower, upper : numpy.ndarray
    samples, seed : int
    confidence : float
    interval_method : str
        How ``[lower, upper]`` was built: ``"asymptotic"`` or ``"dkw"``.
    mass : float
    collapsed : numpy.ndarray or None
    warnings : tuple of str
        Caveats, also issued as :class:`fdp.FDPWarning`; empty when there are none.
    """

    kappa: np.ndarray
    estimate: np.ndarray
    std_error: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    samples: int
    seed: int
    confidence: float
    interval_method: str
    mass: float = 1.0
    collapsed: np.ndarray | None = None
    warnings: tuple[str, ...] = ()

    @property
    def confidence_interval(self) -> Interval:
        """``Interval(lower, upper)``, the confidence interval at each kappa (``interval_method`` names its kind)."""
        return Interval(self.lower, self.upper)



#: Algorithm 1 needs at least this many samples above its threshold (``kappa * samples``).
MIN_KEPT = 10
_MIN_ESS = 5.0
_MASS_RANGE = (0.9, 1.1)


def _log_ratio_chunk(sigma, q, steps, samples, block, seed_seq, mechanism="gaussian"):
    rng = np.random.default_rng(seed_seq)
    total = np.zeros(samples)
    for start in range(0, steps, block):
        width = min(block, steps - start)
        # step-major draws: the noise of a (sample, step) pair does not depend on the block size
        draw = rng.standard_normal if mechanism == "gaussian" else rng.laplace
        w = sigma * draw(size=(width, samples)).T
        total += subsampled(log_ratio(mechanism, sigma, w), q).sum(axis=1)  # one step's loss, summed
    return total


#: The most draws (samples times steps) one run may ask for: about 50 s of draws on one core.
MAX_DRAWS = 2 * 10**9


def _check_setup(mechanism, samples):
    steps = mechanism.steps
    samples = check_positive_int("samples", samples)
    if samples * steps > MAX_DRAWS:
        raise ResourceLimitError(
            f"{spelled('samples')} * {spelled('steps')} = {samples * steps:.3g} noise draws exceed the limit of {MAX_DRAWS:.3g} "
            f"(about a minute a core): use fewer {spelled('samples')} or an accountant (fdp.accounting.pld)"
        )
    return mechanism, samples


def check_samples_for_kappa(samples: int, kappa, name: str = "samples") -> None:
    """ValueError unless ``kappa * samples >= MIN_KEPT`` for every kappa (Algorithm 1 keeps ``ceil(kappa N)``).

    Parameters
    ----------
    samples : int
    kappa : float or array_like
    name : str, default "samples"
        The parameter's name, for the message.

    Returns
    -------
    None

    Examples
    --------
    >>> check_samples_for_kappa(1000, 1e-6)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: samples=1000 is too few for kappa=1e-06: ... i.e. samples >= 10000000
    """
    k = float(np.min(kappa))
    if k * samples < MIN_KEPT:
        raise ValueError(
            f"{spelled(name)}={samples} is too few for {spelled('kappa')}={k:g}: Algorithm 1 keeps the ceil(kappa * samples) largest "
            f"ratios and needs at least {MIN_KEPT} of them, i.e. {spelled(name)} >= {int(np.ceil(MIN_KEPT / k)):d}"
        )


@takes_mechanism
def log_likelihood_ratios(
    mechanism: Mechanism,
    samples: int,
    seed: int = 0,
    chunk: int = 20_000,
    block: int = 128,
    n_jobs: int = 1,
) -> np.ndarray:
    """Log likelihood ratios ``log mu(W) / nu(W)`` for ``W ~ nu = N(0, sigma^2 I_steps)`` (sensitivity 1).

    Laplace noise replaces ``nu`` by Laplace noise of scale ``noise_multiplier`` (the SLM; the same change of
    measure, Hayes et al. Alg. 1 applied to another noise distribution).

    Samples are produced in chunks of ``chunk`` (each with its own spawned seed) and steps in
    blocks of ``block``, so peak memory is about ``samples + chunk * block`` floats.

    Parameters
    ----------
    mechanism : Mechanism
    samples : int
        N >= 1.
    seed : int, default 0
    chunk : int, default 20,000
        Samples per joblib task.
    block : int, default 128
        Steps summed at once.
    n_jobs : int, default 1

    Returns
    -------
    numpy.ndarray
        Shape (samples,); independent of ``n_jobs``.

    References
    ----------
    Hayes et al. (2023) Alg. 1.

    Examples
    --------
    >>> r = log_likelihood_ratios(Mechanism("gaussian", 1.0), 200_000, seed=3)
    >>> bool(abs(r.mean() + 0.5) < 0.01)  # E_nu[log mu/nu] = -KL = -1/(2 sigma^2)
    True
    """
    mechanism, samples = _check_setup(mechanism, samples)
    noise, noise_multiplier, sampling_rate, steps = mechanism.args
    seed = check_seed("seed", seed)
    chunk = check_positive_int("chunk", chunk)
    block = check_positive_int("block", block)
    n_jobs = check_n_jobs(n_jobs)
    parts = run((delayed(_log_ratio_chunk)(noise_multiplier, sampling_rate, steps, s, block, ss, noise)
                 for s, ss in chunks(samples, chunk, seed)), n_jobs)
    return np.concatenate(parts)


@warns
def gamma_from_log_ratios(log_ratios, kappa, confidence: float = 0.95, interval_method: Literal["asymptotic", "dkw"] = "asymptotic") -> MonteCarloGamma:
    """Algorithm 1 of Hayes et al. on given log ratios, with a confidence interval.

    ``gamma_hat = (1/N) * sum of the ceil(kappa N) largest ratios``.  Writing ``t`` for the
    smallest kept ratio, ``gamma_hat = (1/N) sum_i (r_i - t)^+ + t k / N``, an expected-shortfall
    estimator whose asymptotic standard error is ``sd((r - t)^+) / sqrt(N)``.  ``interval_method="dkw"``
    additionally widens the kept fraction to ``kappa -+ eps`` with the DKW radius
    ``eps = sqrt(log(2 / a) / (2N))`` (Dvoretzky et al. 1956), ``a = (1 - confidence) / 2``,
    which covers the error of the empirical quantile as in the paper's argument.

    Parameters
    ----------
    log_ratios : array_like
        ``log mu(W) / nu(W)`` for W ~ nu.
    kappa : float or array_like
        In (0, 1); needs ``kappa N >= MIN_KEPT``.
    confidence : float, default 0.95
    interval_method : {"asymptotic", "dkw"}, default "asymptotic"

    Returns
    -------
    MonteCarloGamma

    References
    ----------
    Hayes et al. (2023) Alg. 1; Dvoretzky, Kiefer, Wolfowitz (1956).

    Examples
    --------
    >>> res = gamma_from_log_ratios(log_likelihood_ratios(Mechanism("gaussian", 1.0), 100_000, seed=1), 0.01)
    >>> from fdp.curves import rero, tradeoff
    >>> bool(res.lower[0] <= rero.gamma(tradeoff.gaussian(1.0), 0.01) <= res.upper[0])
    True
    """
    lr = np.asarray(log_ratios, dtype=float)
    if lr.ndim != 1 or lr.size == 0 or not np.all(np.isfinite(lr)):
        raise ValueError("log_ratios must be a non-empty 1-d array of finite numbers")
    lr = np.sort(lr)[::-1]
    n = lr.size
    k = check_array_in("kappa", np.atleast_1d(kappa), 0.0, 1.0, open_low=True, open_high=True)
    check_samples_for_kappa(n, k, "log_ratios' length (samples)")
    confidence = check_open_unit("confidence", confidence)
    if interval_method not in ("asymptotic", "dkw"):
        raise ValueError(f"interval_method must be 'asymptotic' or 'dkw', got {interval_method!r}")
    z = norm.isf((1.0 - confidence) / 2.0)
    # running log of the sum of the top-m ratios, m = 1..n
    log_top = np.logaddexp.accumulate(lr)

    def top_mean(m):
        m = np.clip(m, 1, n)
        return np.exp(log_top[m - 1] - np.log(n))

    kept = np.ceil(k * n).astype(int)
    est = top_mean(kept)
    se = np.empty_like(est)
    ess = np.empty_like(est)
    for i, m in enumerate(np.clip(kept, 1, n)):
        excess = np.exp(lr[:m]) - np.exp(lr[m - 1])
        # second moment of (r - t)^+ over all n samples (zeros beyond the kept ones)
        mean = excess.sum() / n
        se[i] = np.sqrt(max((excess**2).sum() / n - mean**2, 0.0) / n)
        w = np.exp(lr[:m] - lr[0])  # kept ratios scaled by the largest
        ess[i] = w.sum() ** 2 / np.sum(w**2)
    mass = float(np.exp(log_top[-1] - np.log(n)))  # estimates E_P[Q/P] = 1
    collapsed = (ess < _MIN_ESS) | (not _MASS_RANGE[0] <= mass <= _MASS_RANGE[1])
    if interval_method == "dkw":
        eps = np.sqrt(np.log(2.0 / ((1.0 - confidence) / 2.0)) / (2.0 * n))
        lower = top_mean(np.floor((k - eps) * n).astype(int)) - z * se
        upper = top_mean(np.ceil((k + eps) * n).astype(int)) + z * se
    else:
        lower, upper = est - z * se, est + z * se
    warnings = ()
    if np.any(collapsed):
        lower = np.where(collapsed, k, lower)
        upper = np.where(collapsed, 1.0, upper)
        warnings = (
            f"Monte Carlo collapsed at kappa={float(k[collapsed][0]):g}: the {n} samples carry a likelihood-ratio mass "
            f"of {mass:.3g} (should be 1) and the kept ratios an effective sample size of {float(ess[collapsed][0]):.3g}; "
            "the estimate is unreliable and only the trivial interval [kappa, 1] is reported (use an accountant)",
        )
    clip = lambda v: np.clip(v, k, 1.0)  # noqa: E731  (gamma >= kappa for every trade-off curve)
    return MonteCarloGamma(kappa=k, estimate=clip(est), std_error=se, lower=clip(lower), upper=clip(upper), samples=n,
                           seed=-1, confidence=confidence, interval_method=interval_method, mass=mass, collapsed=collapsed,
                           warnings=warnings)


@warns
@takes_mechanism
def gamma_mc(
    mechanism: Mechanism,
    kappa,
    samples: int = 1_000_000,
    seed: int = 0,
    confidence: float = 0.95,
    interval_method: Literal["asymptotic", "dkw"] = "asymptotic",
    n_jobs: int = 1,
) -> MonteCarloGamma:
    """ReRo bound of a mechanism (DP-SGD: the subsampled Gaussian, sensitivity 1) by Algorithm 1.

    Returns a :class:`MonteCarloGamma` with the estimate and a confidence interval for each kappa.

    Parameters
    ----------
    mechanism : Mechanism
    kappa : float or array_like
        In (0, 1).
    samples : int, default 1,000,000
    seed : int, default 0
    confidence : float, default 0.95
    interval_method : {"asymptotic", "dkw"}, default "asymptotic"
    n_jobs : int, default 1

    Returns
    -------
    MonteCarloGamma

    References
    ----------
    Hayes et al. (2023) Alg. 1.

    Examples
    --------
    >>> res = gamma_mc(Mechanism("gaussian", 1.0, 0.1, 100), 0.01, samples=100_000, seed=0)
    >>> bool(res.lower[0] <= 0.146 <= res.upper[0])  # covers the Edgeworth value 0.1461
    True
    """
    _check_setup(mechanism, samples)
    check_samples_for_kappa(samples, check_array_in("kappa", np.atleast_1d(kappa), 0.0, 1.0, open_low=True, open_high=True))
    lr = log_likelihood_ratios(mechanism, samples, seed=seed, n_jobs=n_jobs)
    res = gamma_from_log_ratios(lr, kappa, confidence=confidence, interval_method=interval_method)
    return MonteCarloGamma(**{**res.__dict__, "seed": seed})


@takes_mechanism
def gamma_spread(mechanism: Mechanism, kappa: float, samples: int, seeds) -> float:
    """The standard deviation of Algorithm 1's estimate of gamma over independent runs, one per seed.

    What a single run of ``samples`` draws scatters by: a printed Monte-Carlo value more than a few of these from
    the exact gamma is not what such a run produces (Hayes et al. App. H, Table 2's "Ours" row).  Each run draws
    :func:`log_likelihood_ratios` with its own seed and applies :func:`gamma_from_log_ratios`.

    Parameters
    ----------
    mechanism : Mechanism
    kappa : float
        In (0, 1); needs ``kappa * samples >= MIN_KEPT``.
    samples : int
        Draws per run.
    seeds : sequence of int
        One per run, at least two.

    Returns
    -------
    float
        The sample standard deviation (``ddof=1``) of the runs' estimates.

    References
    ----------
    Hayes et al. (2023) Alg. 1, App. H.

    Examples
    --------
    >>> sd = gamma_spread(Mechanism("gaussian", 1.0), 0.1, 10_000, seeds=range(20))
    >>> bool(0.001 < sd < 0.02)
    True
    """
    if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__iter__"):
        raise ValueError(f"seeds must be a sequence of seeds, one per run, got {seeds!r}")
    seeds = [check_seed("seeds", s) for s in seeds]
    if len(seeds) < 2 or len(set(seeds)) < len(seeds):
        raise ValueError(f"seeds must hold at least two distinct seeds (one per independent run), got {seeds!r}")
    kappa = check_open_unit("kappa", kappa)
    check_samples_for_kappa(check_positive_int("samples", samples), kappa, "samples")
    runs = [gamma_from_log_ratios(log_likelihood_ratios(mechanism, samples, seed=s), kappa).estimate[0] for s in seeds]
    return float(np.std(runs, ddof=1))
