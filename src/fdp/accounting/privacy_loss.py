"""The privacy loss of the noise mechanisms: one description that every accountant uses.

A *mechanism* here is additive noise of sensitivity 1, ``"gaussian"`` (``N(0, sigma^2)``) or
``"laplace"`` (``Lap(0, b)``), with ``noise_multiplier`` = sigma or b, Poisson-subsampled with rate
``p`` (``sampling_rate``; p = 1 is the plain mechanism) and composed over ``steps``; DP-SGD is the
subsampled Gaussian (:func:`dpsgd`).  In the **add** direction

* H0 = P = ``N(0, sigma^2)`` (or ``Lap(0, b)``) per step,
* H1 = Q = ``(1 - p) N(0, sigma^2) + p N(1, sigma^2)`` (or ``(1 - p) Lap(0, b) + p Lap(1, b)``),

the effect size is ``mu = 1 / noise_multiplier``; the remove direction is the inverse pair (Q, P).  The
PLD accountant (:mod:`fdp.accounting.pld`), the certified lattice bracket (:mod:`fdp.accounting.lattice`), the
Edgeworth and CLT approximations (:mod:`fdp.accounting.edgeworth`), the Monte-Carlo estimator
(:mod:`fdp.accounting.montecarlo`), the exact Renyi divergences (:mod:`fdp.curves.conversions`), the relaxed threat
model (:mod:`fdp.accounting.rtm`) and the likelihood attack (:mod:`fdp.experiments.attacks`) all take the loss from here.

Privacy-loss random variable
    ``L = log(q(X) / p(X))`` for one output ``X`` (one step), so that the Neyman-Pearson test of
    H0 against H1 rejects H0 for *large* values of the composed loss ``S = L_1 + ... + L_N``
    (ReRo paper Remark 2).  With ``r(x) = q_1(x) / p(x)`` the likelihood ratio of the
    unsubsampled pair, ``L = log(1 - p + p r(X))``: for the Gaussian
    ``log r(x) = (2 x - 1) / (2 sigma^2)``, for the Laplace ``log r(x) = (|x| - |x - 1|) / b``,
    which is clipped to ``[-mu, mu]``.  Under H0 ``E[L] = -KL(P || Q) < 0``, under H1
    ``E[L] = KL(Q || P) > 0``.  The two laws are tied by ``dQ = e^L dP`` (for the sum as well:
    ``dQ^N = e^S dP^N``), so the cumulant generating functions satisfy ``K_1(t) = K_0(t + 1)``.

Cumulants
    :func:`loss_cumulants` gives ``kappa_1, ..., kappa_6`` of L under either hypothesis.  Closed
    form for the unsubsampled Gaussian (``p = 1``: L is normal with mean ``-/+ mu^2 / 2`` and
    variance ``mu^2``); otherwise :func:`scipy.integrate.quad` of the central moments of L over
    the output ``x``.  Under N-fold composition cumulants add: ``kappa_r(N) = N kappa_r(1)``.
    For the Laplace the integrand has kinks at ``x = 0`` and ``x = 1``; the range is split there.
    Outside ``(0, 1)`` the loss is constant, so the Laplace loss has **atoms** (at ``+/- mu`` for
    ``p = 1``, at ``log(1 - p + p e^{+/- mu})`` in general), whose masses are exact
    (``1/2`` and ``e^{-mu}/2``) and only the middle piece is integrated numerically.

References: ReRo paper (Kaissis et al. 2023a) Remark 2 and App. 4.3; Zheng et al. (2020) Sec. 3.1.
"""

from __future__ import annotations

import contextvars
import functools
import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Literal

import numpy as np
from scipy import integrate
from scipy.special import ndtri_exp

from ..curves.gdp import mu_laplace
from ..formatting import ULPS_UP
from ..validation import check_positive, check_positive_int, check_sampling_rate, spelled

__all__ = [
    "Mechanism",
    "dpsgd",
    "RandomizedResponse",
    "MECHANISMS",
    "HYPOTHESES",
    "check_noise",
    "check_mechanism",
    "takes_mechanism",
    "log_ratio",
    "subsampled",
    "privacy_loss",
    "sample_privacy_loss",
    "chi2_divergence",
    "loss_cumulants",
]

#: The noises a :class:`Mechanism` may add.
MECHANISMS = ("gaussian", "laplace")
#: The two hypotheses of the add direction: H0, the output without the target; H1, with it.
HYPOTHESES = ("H0", "H1")
_ZMAX = 40.0  # the quadrature of the Gaussian cumulants covers |z| <= 40 standard deviations


def check_noise(noise, name: str = "noise") -> str:
    """Check the name of a noise distribution.

    Parameters
    ----------
    noise : str
        One of :data:`MECHANISMS`.
    name : str
        The parameter's name in the error.

    Returns
    -------
    str
        ``noise``.

    Raises
    ------
    ValueError
        Naming the argument and the accepted names.

    Examples
    --------
    >>> check_noise("laplace")
    'laplace'
    """
    if not isinstance(noise, str) or noise not in MECHANISMS:
        raise ValueError(f"{name} must be one of {MECHANISMS}, got {noise!r}")
    return noise


@dataclass(frozen=True)
class Mechanism:
    """One description of a mechanism: additive noise of sensitivity 1, Poisson-subsampled, composed.

    DP-SGD with noise multiplier sigma, sampling rate q and T steps is
    ``Mechanism("gaussian", sigma, q, T)`` (:func:`dpsgd`); every accountant of :mod:`fdp.accounting` takes it as
    its first argument.

    Parameters
    ----------
    noise : {"gaussian", "laplace"}
        The noise distribution, ``N(0, sigma^2)`` or ``Lap(0, b)``.
    noise_multiplier : float
        sigma or b over the sensitivity, > 0 (the effect size of one step is ``1 / noise_multiplier``).
    sampling_rate : float, default 1
        Poisson rate in (0, 1]; 1 is the plain mechanism.
    steps : int, default 1
        Compositions, >= 1.

    Examples
    --------
    >>> m = dpsgd(noise_multiplier=1.1, sampling_rate=0.01, steps=1000)
    >>> m.args
    ('gaussian', 1.1, 0.01, 1000)
    """

    noise: Literal["gaussian", "laplace"]
    noise_multiplier: float
    sampling_rate: float = 1.0
    steps: int = 1

    def __post_init__(self):
        check_noise(self.noise, "noise")
        object.__setattr__(self, "noise_multiplier", check_positive("noise_multiplier", self.noise_multiplier))
        if not math.isfinite(1.0 / self.noise_multiplier):  # mu = 1 / sigma overflows: no reading is a number
            raise ValueError(f"{spelled('noise_multiplier')} must be at least {1.0 / np.finfo(float).max:.3g} (its inverse, the "
                             f"effect size, overflows double precision below), got {self.noise_multiplier!r}")
        object.__setattr__(self, "sampling_rate", check_sampling_rate("sampling_rate", self.sampling_rate))
        object.__setattr__(self, "steps", check_positive_int("steps", self.steps))

    @property
    def args(self) -> tuple[str, float, float, int]:
        """``(noise, noise_multiplier, sampling_rate, steps)``, the four numbers apart."""
        return self.noise, self.noise_multiplier, self.sampling_rate, self.steps

    @cached_property
    def one_step(self) -> Mechanism:
        """The same noise and sampling rate, one step."""
        return Mechanism(self.noise, self.noise_multiplier, self.sampling_rate)

    @cached_property
    def full_batch_mu(self) -> float:
        """mu-GDP of the steps without subsampling, as an upper bound: the bound that caps the mechanism's ``mu*``.

        Subsampling never lowers the curve below the full batch's (Dong, Roth, Su 2022 Thm. 4.2), so the sampling
        rate does not enter.  Gaussian noise: ``sqrt(steps) / noise_multiplier``, exactly (Cor. 3.3): the float
        quotient is raised one ulp at a time until ``(mu sigma)^2 >= steps`` holds in exact rational arithmetic (the
        float ``sqrt(3)`` is 1e-16 below the real one, so noise ``sqrt(3)`` would miss mu = 1 by that much); inf if it
        overflows.  Laplace noise: ``sqrt(steps) mu_L``, ``mu_L`` the tight GDP of one step
        (:func:`fdp.curves.gdp.mu_laplace`; composition, Cor. 3.3); beyond eps = 1/b = 700, where that closed form
        overflows, the pure-DP bound ``mu_L <= -2 Phi^{-1}(1 / (1 + e^eps))`` (GDP paper Prop. 6.1: the Laplace curve
        lies above randomized response's), in logs (``Phi^{-1}(e^y)`` by scipy's ``ndtri_exp``, moved up by 1e-12,
        above its measured 5e-13 at eps 1e6).

        Examples
        --------
        >>> Mechanism("gaussian", 2.0, 0.01, 4).full_batch_mu, Mechanism("gaussian", 1.0, 1.0, 3).full_batch_mu > 3 ** 0.5
        (1.0, True)
        """
        sigma, steps = self.noise_multiplier, self.steps
        if self.noise == "laplace":
            eps = 1.0 / sigma
            if eps > 700.0:  # 1 / (1 + e^eps) = e^-eps to double precision there
                one_step = -2.0 * float(ndtri_exp(-eps)) * (1.0 + 1e-12) if math.isfinite(eps) else math.inf
                return float(np.sqrt(steps) * one_step)
            return float(np.sqrt(steps) * mu_laplace(eps) * ULPS_UP)
        mu = math.sqrt(steps) / sigma
        while math.isfinite(mu) and (Fraction(mu) * Fraction(sigma)) ** 2 < steps:
            mu = math.nextafter(mu, math.inf)
        return mu

    @property
    def clt_mu(self) -> float:
        """``mu_tilde = p sqrt(N chi^2)`` of the CLT approximation (ReRo paper Sec. 2 option (3)).

        For Gaussian noise ``chi^2 = e^{mu^2} - 1`` with ``mu = 1/sigma``, i.e. ``mu_tilde = p sqrt(N (e^{mu^2} - 1))``
        (Bu et al. 2020; the ReRo paper's footnote 3; its main text's ``e^{mu_2}`` is a misprint, see
        :mod:`fdp.accounting.edgeworth`).  For Laplace noise the same limit with
        ``chi^2 = (2/3) e^{mu} + (1/3) e^{-2mu} - 1`` (:func:`chi2_divergence`).  It is the limit of the order-0
        Edgeworth curve as ``N -> infinity`` with ``p sqrt(N)`` fixed.  A ValueError where it overflows.

        Examples
        --------
        >>> round(Mechanism("gaussian", 2.0, 0.01, 10_000).clt_mu, 6)  # p sqrt(N (e^{1/sigma^2} - 1))
        0.53294
        """
        chi2 = chi2_divergence(self.noise, self.noise_multiplier)
        value = self.sampling_rate * math.sqrt(self.steps * chi2) if math.isfinite(chi2) else math.inf
        if not math.isfinite(value):
            raise ValueError(f"the CLT effect size overflows for {spelled('noise_multiplier')}={self.noise_multiplier!r} "
                             f"(chi^2 divergence {chi2!r})")
        return value

    def __str__(self) -> str:
        return (f"{self.noise} noise {self.noise_multiplier:g}, sampling rate {self.sampling_rate:g}, "
                f"{self.steps} step{'s' if self.steps != 1 else ''}")


def dpsgd(noise_multiplier: float, sampling_rate: float | None = None, steps: int | None = None, *,
          batch_size: int | None = None, dataset_size: int | None = None, epochs: float | None = None) -> Mechanism:
    """DP-SGD as a :class:`Mechanism`: the ``steps``-fold Poisson-subsampled Gaussian (Abadi et al. 2016).

    The run is given as the accountants take it (``sampling_rate``, ``steps``) or as a training script states it:
    ``batch_size`` of ``dataset_size`` records per step (``sampling_rate = batch_size / dataset_size``, the expected
    batch of Poisson sampling, as Opacus samples) and ``epochs`` passes over the data (``steps = ceil(epochs *
    dataset_size / batch_size)``, exactly, the count of TF Privacy's ``compute_dp_sgd_privacy``).  A script that shuffles and cuts
    fixed-size batches samples differently; its guarantee is not exactly this one.

    Parameters
    ----------
    noise_multiplier : float
        > 0.
    sampling_rate : float, optional
        Poisson rate in (0, 1]; or give ``batch_size`` and ``dataset_size``.
    steps : int, optional
        >= 1; or give ``epochs``.
    batch_size, dataset_size : int, optional
        The expected batch and the number of records, ``1 <= batch_size <= dataset_size``.
    epochs : float, optional
        Passes over the data, > 0 (with ``batch_size`` and ``dataset_size``).

    Returns
    -------
    Mechanism

    Examples
    --------
    >>> dpsgd(1.1, 0.01, 1000).args
    ('gaussian', 1.1, 0.01, 1000)
    >>> run = dpsgd(1.0, batch_size=256, dataset_size=60_000, epochs=30)  # 30 epochs of MNIST at batch 256
    >>> round(run.sampling_rate, 7), run.steps
    (0.0042667, 7032)
    """
    if (sampling_rate is None) == (batch_size is None and dataset_size is None):
        raise ValueError(f"give {spelled('sampling_rate')} or {spelled('batch_size')} with {spelled('dataset_size')}, "
                         "not both and not neither")
    if sampling_rate is None:
        batch_size = check_positive_int("batch_size", batch_size)
        dataset_size = check_positive_int("dataset_size", dataset_size)
        if batch_size > dataset_size:
            raise ValueError(f"{spelled('batch_size')} must be at most {spelled('dataset_size')} ({dataset_size}), "
                             f"got {batch_size}")
        sampling_rate = batch_size / dataset_size
    if (steps is None) == (epochs is None):
        raise ValueError(f"give {spelled('steps')} or {spelled('epochs')}, not both and not neither")
    if steps is None:
        if batch_size is None:  # epochs / sampling_rate in floats: 3 / 0.3 is 10.000000000000002
            raise ValueError(f"{spelled('epochs')} counts passes of {spelled('dataset_size')} records in batches of "
                             f"{spelled('batch_size')}: give those two, or {spelled('steps')} with {spelled('sampling_rate')}")
        # exact, from the decimal the caller wrote (repr: the shortest decimal that reads back as the float), so that
        # 0.1 epochs of 100 records in batches of 10 is 1 step, not the 2 of the binary 0.1000000000000000055...
        passes = check_positive("epochs", epochs)
        passes = Fraction(repr(float(passes))) if isinstance(passes, float) else Fraction(passes)
        steps = math.ceil(passes * Fraction(dataset_size, batch_size))
    return Mechanism("gaussian", noise_multiplier, sampling_rate, steps)


def check_mechanism(mechanism, name: str = "mechanism") -> Mechanism:
    """Check that an accountant's first argument is a :class:`Mechanism`.

    Parameters
    ----------
    mechanism : Mechanism
        The mechanism.
    name : str
        The parameter's name in the error.

    Returns
    -------
    Mechanism
        ``mechanism``.

    Raises
    ------
    ValueError
        Naming the argument; a noise name in its place (the form of version 0.1, with the numbers apart) is told
        how to build the mechanism.

    Examples
    --------
    >>> check_mechanism("gaussian")
    Traceback (most recent call last):
    ...
    ValueError: mechanism must be a fdp.Mechanism, got 'gaussian': pass Mechanism('gaussian', noise_multiplier, sampling_rate, steps)
    """
    if isinstance(mechanism, Mechanism):
        return mechanism
    if isinstance(mechanism, str):
        raise ValueError(f"{name} must be a fdp.Mechanism, got {mechanism!r}: pass "
                         f"Mechanism({mechanism!r}, noise_multiplier, sampling_rate, steps)")
    raise ValueError(f"{name} must be a fdp.Mechanism, e.g. Mechanism('gaussian', 1.0, 0.01, 1000), got {mechanism!r}")


# True inside a call of a function decorated by :func:`takes_mechanism`: its mechanism was checked at the entry.
_CHECKED = contextvars.ContextVar("fdp_mechanism_checked", default=False)


def takes_mechanism(func=None, *, randomized_response: bool = False):
    """Decorate a public function whose first parameter is a :class:`Mechanism`: the argument is checked
    (:func:`check_mechanism`) at the outermost such call only; the calls it makes inside trust theirs.

    A :class:`Mechanism` checks its numbers when it is built and is frozen, so once the argument is known to be one,
    nothing below needs to look at it again (one :func:`fdp.risk.report` reaches some twenty decorated functions).

    Parameters
    ----------
    func : callable
        Its first parameter is named ``mechanism``.
    randomized_response : bool, default False
        Accept a :class:`RandomizedResponse` as well.

    Returns
    -------
    callable
        ``func`` with the same signature and result (or, without ``func``, the decorator).
    """
    if func is None:
        return functools.partial(takes_mechanism, randomized_response=randomized_response)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if _CHECKED.get() or not (args or "mechanism" in kwargs):  # nested, or missing (Python's TypeError)
            return func(*args, **kwargs)
        mechanism = args[0] if args else kwargs["mechanism"]
        if not (randomized_response and isinstance(mechanism, RandomizedResponse)):
            check_mechanism(mechanism)
        token = _CHECKED.set(True)
        try:
            return func(*args, **kwargs)
        finally:
            _CHECKED.reset(token)

    return wrapper


@dataclass(frozen=True)
class RandomizedResponse:
    """Binary randomized response with parameter eps: the true bit with probability ``e^eps / (1 + e^eps)``.

    Not additive noise, so not a :class:`Mechanism`; its trade-off curve is exactly the (eps, 0)-DP curve
    (:func:`fdp.curves.conversions.randomized_response`, Kairouz et al. 2015), which :func:`fdp.risk.report` reads.

    Parameters
    ----------
    epsilon : float
        In (0, 700] (beyond, e^eps overflows).

    Examples
    --------
    >>> str(RandomizedResponse(1.0))
    'randomized response, epsilon 1'
    """

    epsilon: float

    def __post_init__(self):
        epsilon = check_positive("epsilon", self.epsilon)
        if epsilon > 700.0:
            raise ValueError(f"{spelled('epsilon')} must be at most 700 (e^epsilon overflows beyond), got {epsilon!r}")
        object.__setattr__(self, "epsilon", epsilon)

    def __str__(self) -> str:
        return f"randomized response, epsilon {self.epsilon:g}"


def _check_hypothesis(hypothesis) -> str:
    if not isinstance(hypothesis, str) or hypothesis not in HYPOTHESES:
        raise ValueError(f"hypothesis must be one of {HYPOTHESES} (H0 = P, H1 = Q), got {hypothesis!r}")
    return hypothesis


def log_ratio(noise: str, noise_multiplier: float, x):
    """Log-likelihood ratio ``log r(x) = log(q_1(x) / p(x))`` of the unsubsampled pair (sensitivity 1).

    Gaussian: ``(2x - 1) / (2 sigma^2)``; Laplace: ``(|x| - |x - 1|) / b``, i.e. ``2x - 1`` clipped to
    ``[-1, 1]`` over b (constant outside ``(0, 1)``, which gives the loss its two atoms).

    Parameters
    ----------
    noise : {"gaussian", "laplace"}
        The noise (not checked here: a :class:`Mechanism` checks its noise when it is built).
    noise_multiplier : float
        sigma or b, > 0.
    x : array_like
        Outputs of one step.

    Returns
    -------
    numpy.ndarray
        ``log r(x)``, the shape of ``x``.

    References
    ----------
    ReRo paper (Kaissis et al. 2023a), Remark 2.

    Examples
    --------
    >>> log_ratio("gaussian", 2.0, [0.0, 0.5, 1.0]).tolist()
    [-0.125, 0.0, 0.125]
    """
    x = np.asarray(x, dtype=float)
    if noise == "gaussian":
        return (2.0 * x - 1.0) / (2.0 * noise_multiplier**2)
    return np.clip(2.0 * x - 1.0, -1.0, 1.0) / noise_multiplier


def subsampled(t, sampling_rate):
    """The privacy loss of the subsampled pair, ``log(1 - p + p e^t)``, from the unsubsampled ``t = log r``.

    Accurate for small ``p t`` (``log1p(p expm1(t))``) and free of overflow for large ``t``
    (``logaddexp`` beyond t = 30); ``t = -inf`` gives ``log(1 - p)``.

    Parameters
    ----------
    t : array_like, float or mpmath.mpf
        The unsubsampled log-likelihood ratio ``log r`` (:func:`log_ratio`).
        A float takes a scalar path (for integrands); an mpmath number is evaluated in its
        own context, with ``sampling_rate`` an mpf of that context.
    sampling_rate : float
        ``p`` in (0, 1] (not checked here); p = 1 returns ``t``.

    Returns
    -------
    numpy.ndarray, float or mpmath.mpf
        The loss, of the type of ``t``.

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Lemma 9 (the subsampled pair); ReRo paper App. 4.3.

    Examples
    --------
    >>> float(subsampled(1e-8, 0.01))  # p t, without the cancellation of log(1 + p (e^t - 1))
    1.0000000049500002e-10
    >>> [round(float(v), 6) for v in subsampled(np.array([-np.inf, 0.0, 100.0]), 0.01)]
    [-0.01005, 0.0, 95.39483]
    """
    p = sampling_rate
    if hasattr(t, "context"):  # mpmath: no overflow, one formula
        ctx = t.context
        if p == 1:
            return t
        return ctx.log1p(-p) if t == -ctx.inf else ctx.log1p(p * ctx.expm1(t))
    if isinstance(t, float):
        if p == 1.0:
            return t
        if t < 30.0:
            return math.log1p(p * math.expm1(t))
        a, b = math.log1p(-p), math.log(p) + t
        return max(a, b) + math.log1p(math.exp(-abs(a - b)))
    t = np.asarray(t, dtype=float)
    if p == 1.0:
        return t.copy()
    small = t < 30.0
    direct = np.log1p(p * np.expm1(np.where(small, t, 0.0)))
    if small.all():
        return direct
    with np.errstate(invalid="ignore"):  # a NaN t stays NaN, and its caller's finiteness check refuses it
        return np.where(small, direct, np.logaddexp(math.log1p(-p), math.log(p) + t))


@takes_mechanism
def privacy_loss(mechanism: Mechanism, x):
    """One-step privacy loss ``L(x) = log(q(x) / p(x))`` at the output ``x`` (add direction).

    ``p`` is the density of H0 = ``N(0, s^2)`` or ``Lap(0, s)`` (``s = noise_multiplier``), ``q`` that of
    H1 = the Poisson-subsampled mixture ``(1 - p) N(0, s^2) + p N(1, s^2)`` (Laplace alike), for one step of the
    mechanism (its ``steps`` do not enter).  Large values favour H1.

    Parameters
    ----------
    mechanism : Mechanism
        The noise, its multiplier and the sampling rate.
    x : array_like
        Finite outputs of one step.

    Returns
    -------
    numpy.ndarray
        ``L(x)``, non-decreasing in ``x``.

    References
    ----------
    ReRo paper (Kaissis et al. 2023a) Remark 2.

    Examples
    --------
    >>> [round(v, 6) for v in privacy_loss(Mechanism("laplace", 1.0, 0.5), [-3.0, 0.5, 3.0]).tolist()]
    [-0.379885, 0.0, 0.620115]
    """
    noise, noise_multiplier, p, _ = mechanism.args
    x = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(x)):
        raise ValueError("x must be finite")
    return subsampled(log_ratio(noise, noise_multiplier, x), p)


@takes_mechanism
def sample_privacy_loss(mechanism: Mechanism, hypothesis: str, size: int, seed=0):
    """``size`` draws of the one-step loss L under ``hypothesis`` ("H0": X ~ P, "H1": X ~ Q).

    ``seed`` is an int or a :class:`numpy.random.Generator`.  Used to check the quadrature.

    Parameters
    ----------
    mechanism : Mechanism
        One step of it (its ``steps`` do not enter).
    hypothesis : {"H0", "H1"}
    size : int
        Number of draws.
    seed : int or numpy.random.Generator, default 0

    Returns
    -------
    numpy.ndarray
        Shape (size,).

    Examples
    --------
    >>> x = sample_privacy_loss(Mechanism("gaussian", 1.0), "H1", 100_000, seed=1)
    >>> bool(abs(x.mean() - 0.5) < 0.01)  # E_Q[L] = mu^2 / 2 for the Gaussian pair
    True
    """
    noise, noise_multiplier, p, _ = mechanism.args
    hypothesis = _check_hypothesis(hypothesis)
    size = check_positive_int("size", size)
    if isinstance(seed, np.random.Generator):
        rng = seed
    elif isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0:
        rng = np.random.default_rng(int(seed))
    else:
        raise ValueError(f"{spelled('seed')} must be an integer >= 0 or a numpy.random.Generator, got {seed!r}")
    x = noise_multiplier * (rng.standard_normal(size) if noise == "gaussian" else rng.laplace(size=size))
    if hypothesis == "H1":
        x = x + (rng.random(size) < p)
    return subsampled(log_ratio(noise, noise_multiplier, x), p)


def chi2_divergence(noise: str, noise_multiplier: float) -> float:
    """Chi-square divergence ``E_P[r^2] - 1`` of the unsubsampled pair (sensitivity 1, mu = 1/scale).

    Gaussian: ``e^{mu^2} - 1``.  Laplace: ``(2/3) e^{mu} + (1/3) e^{-2 mu} - 1`` (integrate
    ``q^2 / p`` over the three pieces x < 0, 0 < x < 1, x > 1).

    Parameters
    ----------
    noise : {"gaussian", "laplace"}
    noise_multiplier : float
        sigma or b, > 0.

    Returns
    -------
    float
        The divergence, ``inf`` where it overflows double precision.

    References
    ----------
    Bu et al. (2020), the CLT parameter ``p sqrt(N chi^2)`` (ReRo paper option (3)).

    Examples
    --------
    >>> round(chi2_divergence("gaussian", 1.0), 14)  # e - 1 (the last digit depends on the CPU's expm1)
    1.71828182845905
    """
    noise = check_noise(noise)
    mu = 1.0 / check_positive("noise_multiplier", noise_multiplier)
    with np.errstate(over="ignore"):
        if noise == "gaussian":
            return float(np.expm1(mu * mu)) if mu * mu < 709 else math.inf
        if mu > 709:
            return math.inf
        return float(2.0 / 3.0 * math.expm1(mu) + (math.expm1(-2.0 * mu)) / 3.0)



# ---------------------------------------------------------------------------------------------
# cumulants
# ---------------------------------------------------------------------------------------------


def _cumulants_from_central(mean: float, central) -> np.ndarray:
    """kappa_1..kappa_6 from the mean and the central moments m_2..m_6."""
    m2, m3, m4, m5, m6 = central
    return np.array(
        [
            mean,
            m2,
            m3,
            m4 - 3.0 * m2**2,
            m5 - 10.0 * m3 * m2,
            m6 - 15.0 * m4 * m2 - 10.0 * m3**2 + 30.0 * m2**3,
        ]
    )


def _quad(fun, a, b, epsabs: float) -> float:
    value, _ = integrate.quad(fun, a, b, epsabs=epsabs, epsrel=1e-11, limit=200)
    return value


@lru_cache(maxsize=256)
def _cumulants_quad(noise: str, scale: float, p: float, hypothesis: str) -> tuple:
    """kappa_1..kappa_6 of the one-step loss by scipy.integrate.quad (see loss_cumulants)."""
    mu = 1.0 / scale
    chi2 = chi2_divergence(noise, scale)
    # E[p (r - 1)] is known exactly (0 under H0, p^2 chi^2 under H1): subtracting it from the
    # integrand removes the O(p) cancellation in E[L] = O(p^2) when p is small.
    use_cv = math.isfinite(chi2) and p * p * chi2 <= 1.0
    cv_mean = 0.0 if hypothesis == "H0" else p * p * chi2

    def loss_t(t: float) -> float:
        return subsampled(float(t), p)

    def cv_term(t: float) -> float:
        return p * math.expm1(t) if t < 700.0 else math.inf

    if noise == "gaussian":
        # x = sigma z; log r = mu z - mu^2/2; H0: z ~ N(0,1); H1: z ~ (1-p) N(0,1) + p N(mu,1)
        c0 = 1.0 / math.sqrt(2.0 * math.pi)

        def weight(z: float) -> float:
            w = c0 * math.exp(-0.5 * z * z)
            if hypothesis == "H1":
                w = (1.0 - p) * w + p * c0 * math.exp(-0.5 * (z - mu) ** 2)
            return w

        def log_r(z: float) -> float:
            return mu * z - 0.5 * mu * mu

        pieces = [(-_ZMAX, -8.0), (-8.0, 0.0), (0.0, mu), (mu, mu + 8.0), (mu + 8.0, mu + _ZMAX)]
        atoms: list[tuple[float, float]] = []
    else:
        # x = b u; log r = clip(2u - mu, -mu, mu); only 0 < u < mu is not an atom
        def weight(u: float) -> float:
            w = 0.5 * math.exp(-abs(u))
            if hypothesis == "H1":
                w = (1.0 - p) * w + p * 0.5 * math.exp(-abs(u - mu))
            return w

        def log_r(u: float) -> float:
            return 2.0 * u - mu

        pieces = [(0.0, mu)]
        em = math.exp(-mu)
        mass_left = 0.5 if hypothesis == "H0" else (1.0 - p) * 0.5 + p * 0.5 * em  # x <= 0
        mass_right = 0.5 * em if hypothesis == "H0" else (1.0 - p) * 0.5 * em + p * 0.5  # x >= 1
        atoms = [(mass_left, -mu), (mass_right, mu)]

    def expect(g, epsabs: float = 0.0) -> float:
        """E[g(log r)] over the continuous pieces and the atoms."""
        total = sum(_quad(lambda s: g(log_r(s)) * weight(s), a, b, epsabs) for a, b in pieces)
        return total + sum(mass * g(t) for mass, t in atoms)

    # three passes: the scale of L (positive integrand, relative accuracy), the mean to an
    # absolute accuracy of 1e-14 of that scale, then the standardised central moments to 1e-13
    # (odd moments can be ~0 by near-symmetry: a purely relative tolerance is unattainable).
    scale_l = math.sqrt(expect(lambda t: loss_t(t) ** 2))
    if use_cv:
        mean = expect(lambda t: loss_t(t) - cv_term(t), 1e-14 * scale_l) + cv_mean
    else:
        mean = expect(loss_t, 1e-14 * scale_l)
    sd = math.sqrt(expect(lambda t: (loss_t(t) - mean) ** 2))
    central = [sd**2] + [
        sd**k * expect(lambda t, k=k: ((loss_t(t) - mean) / sd) ** k, 1e-13) for k in range(3, 7)
    ]
    return tuple(_cumulants_from_central(mean, central))


@takes_mechanism
def loss_cumulants(mechanism: Mechanism, hypothesis: str = "H0", method: str = "auto") -> np.ndarray:
    """Cumulants ``kappa_1, ..., kappa_6`` of the composed privacy loss ``S``, the sum of ``N`` steps' losses.

    ``L = log(q(X)/p(X))`` in the add direction (module docstring), ``X ~ P`` under "H0" and
    ``X ~ Q`` under "H1"; ``kappa_r(N) = N kappa_r(1)`` (cumulants of independent sums add).
    ``method="auto"`` uses the closed form for the unsubsampled Gaussian (``p = 1``: normal with
    mean ``-/+ mu^2/2``, variance ``mu^2``, higher cumulants 0) and quadrature otherwise;
    ``method="quad"`` always integrates (scipy.integrate.quad, relative tolerance 1e-11; the
    Laplace range is split at the kinks x = 0 and x = 1 and the two atoms of the loss are added
    exactly).

    Parameters
    ----------
    mechanism : Mechanism
        The noise, its multiplier, the sampling rate and N, its ``steps``.
    hypothesis : {"H0", "H1"}
        The law of the output: P or Q.
    method : {"auto", "quad"}

    Returns
    -------
    numpy.ndarray
        ``[kappa_1, ..., kappa_6]`` of S.

    References
    ----------
    ReRo paper App. 4.3 (the Edgeworth option); Zheng et al. (2020) Sec. 3.1.

    Examples
    --------
    >>> loss_cumulants(Mechanism("gaussian", 1.0), "H0")[:3].tolist()  # normal: -mu^2/2, mu^2, 0
    [-0.5, 1.0, 0.0]
    """
    noise, noise_multiplier, p, steps = mechanism.args
    hypothesis = _check_hypothesis(hypothesis)
    if method not in ("auto", "quad"):
        raise ValueError(f"method must be 'auto' or 'quad', got {method!r}")
    if method == "auto" and noise == "gaussian" and p == 1.0:
        mu2 = 1.0 / noise_multiplier**2
        one = np.array([-0.5 * mu2 if hypothesis == "H0" else 0.5 * mu2, mu2, 0.0, 0.0, 0.0, 0.0])
    else:
        try:
            one = np.array(_cumulants_quad(noise, noise_multiplier, p, hypothesis))
        except (OverflowError, ZeroDivisionError):  # far from private: the loss's moments leave double precision
            one = np.full(6, np.nan)
    if not np.all(np.isfinite(one)) or one[1] <= 0.0:
        raise ValueError(
            f"the privacy loss of noise={noise!r}, {spelled('noise_multiplier')}={noise_multiplier!r}, "
            f"{spelled('sampling_rate')}={p!r} has "
            f"cumulants that cannot be computed in double precision (got {one.tolist()})"
        )
    return steps * one

