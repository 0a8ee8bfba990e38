"""Attacks on trained models and the empirical quantities measured from them.

* :func:`empirical_tradeoff` -- the empirical trade-off curve (type-I error alpha, type-II error
  beta) of a threshold test on attack scores, at a set of thresholds (the ROC read as a trade-off
  curve, as in the audits of Kaissis et al. 2023, Sec. 5).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import beta as beta_dist

from ..accounting.privacy_loss import subsampled
from ..intervals import Interval
from ..result import Unpacks
from ..validation import check_positive, check_positive_int, check_sampling_rate, spelled
from . import dpsgd

__all__ = [
    "pooled_tradeoff",
    "empirical_tradeoff",
    "CurveComparison",
    "compare_to_curve",
    "PriorObserver",
    "prior_aware_guess",
    "top_steps_guess",
    "log_likelihood_guess",
    "Proportion",
    "success_rate",
    "clopper_pearson",
    "resolvable_difference",
]


def empirical_tradeoff(scores_h0, scores_h1, thresholds=50) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Empirical (alpha, beta) of the tests "reject H0 when score > t" over thresholds t.

    ``scores_h0`` are the attack's scores when H0 is true (e.g. the target is absent) and
    ``scores_h1`` when H1 is true; higher scores mean "H1".  Both may carry leading batch axes
    (independent repetitions), with samples on the last axis; the batch shapes must agree.
    ``alpha[..., k] = P0(score > t_k)`` and ``beta[..., k] = P1(score <= t_k)``.

    ``thresholds`` is an int (that many thresholds spaced evenly from just below the smallest to
    the largest pooled score, so the curve runs from (1, 0) to (0, 1)) or an increasing array.
    Returns ``(thresholds, alpha, beta)``; alpha and beta have shape ``batch + (len(thresholds),)``.

    Parameters
    ----------
    scores_h0, scores_h1 : array_like
        Scores under H0 and H1, samples on the last axis.
    thresholds : int or array_like, default 50
        A number of thresholds (evenly spaced over the pooled scores) or the increasing thresholds.

    Returns
    -------
    (thresholds, alpha, beta) : tuple of numpy.ndarray

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Sec. 5 (empirical curves of the audits).

    Examples
    --------
    >>> t, alpha, beta = empirical_tradeoff([0.0, 1.0, 2.0], [1.5, 2.5, 3.5], thresholds=[1.0])
    >>> float(alpha[0]), float(beta[0])  # one H0 score above 1, no H1 score at or below it
    (0.3333333333333333, 0.0)
    """
    s0 = np.asarray(scores_h0, dtype=np.float64)
    s1 = np.asarray(scores_h1, dtype=np.float64)
    for name, s in (("scores_h0", s0), ("scores_h1", s1)):
        if s.ndim == 0 or s.shape[-1] == 0:
            raise ValueError(f"{name} must hold at least one score on its last axis, got shape {s.shape}")
        if not np.all(np.isfinite(s)):
            raise ValueError(f"{name} must be finite (found NaN or inf)")
    if s0.shape[:-1] != s1.shape[:-1]:
        raise ValueError(f"scores_h0 and scores_h1 must share their batch shape, got {s0.shape} and {s1.shape}")
    if isinstance(thresholds, (int, np.integer)) and not isinstance(thresholds, bool):
        k = check_positive_int("thresholds", thresholds)
        if k < 2:
            raise ValueError(f"thresholds must be >= 2 when given as a count, got {k}")
        lo = min(s0.min(), s1.min())
        hi = max(s0.max(), s1.max())
        below = lo - max(1e-12, 1e-9 * abs(lo))  # every score exceeds it: alpha = 1, beta = 0
        t = np.linspace(below, hi, k)
    else:
        t = np.asarray(thresholds, dtype=np.float64)
        if t.ndim != 1 or t.size == 0 or not np.all(np.isfinite(t)):
            raise ValueError("thresholds must be a count or a non-empty 1-d array of finite numbers")
        if np.any(np.diff(t) < 0):
            raise ValueError("thresholds must be increasing")
    alpha = (s0[..., None, :] > t[:, None]).mean(axis=-1)
    beta = (s1[..., None, :] <= t[:, None]).mean(axis=-1)
    return t, alpha, beta


def pooled_tradeoff(scores_h0, scores_h1, thresholds: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Per-repetition empirical (alpha, beta) at critical values shared by every repetition (an audit's curves).

    The critical values are ``thresholds`` quantiles of all scores pooled over the repetitions and both hypotheses,
    the lowest moved just below the smallest score so that every curve starts at (1, 0); repeated values are kept
    once.  The repetitions' curves are then averaged point by point (RTM App. 7.3: "the critical values were chosen
    identically for each repetition").

    Parameters
    ----------
    scores_h0, scores_h1 : array_like
        (repetitions, samples) scores under H0 and H1 (higher means "H1").
    thresholds : int, default 50
        Number of critical values (>= 2).

    Returns
    -------
    (alpha, beta) : tuple of numpy.ndarray
        Each (repetitions, k) with k <= ``thresholds``.

    References
    ----------
    RTM paper (Kaissis et al. 2023b) App. 7.3.

    Examples
    --------
    >>> a, b = pooled_tradeoff([[0.0, 1.0]], [[2.0, 3.0]], thresholds=3)
    >>> a[0].tolist(), b[0].tolist()
    ([1.0, 0.0, 0.0], [0.0, 0.0, 1.0])
    """
    thresholds = check_positive_int("thresholds", thresholds)
    if thresholds < 2:
        raise ValueError(f"thresholds must be >= 2, got {thresholds}")
    s0, s1 = np.asarray(scores_h0, dtype=np.float64), np.asarray(scores_h1, dtype=np.float64)
    if s0.ndim != 2 or s1.ndim != 2:
        raise ValueError(f"scores_h0 and scores_h1 must be (repetitions, samples), got shapes {s0.shape} and {s1.shape}")
    pooled = np.concatenate([s0.ravel(), s1.ravel()])
    if not np.all(np.isfinite(pooled)):
        raise ValueError("scores_h0 and scores_h1 must be finite (found NaN or inf)")
    t = np.quantile(pooled, np.linspace(0.0, 1.0, thresholds))
    t[0] = np.nextafter(t[0], -np.inf)  # the lowest critical value rejects every score: the point (1, 0)
    _, alpha, beta = empirical_tradeoff(s0, s1, np.unique(t))
    return alpha, beta


@dataclass(frozen=True)
class CurveComparison:
    """The mean empirical curve over repetitions against a theoretical curve ``f``, per threshold.

    ``alpha``, ``beta``: mean empirical errors; ``beta_sd``: standard deviation of beta across
    repetitions (the paper's error band); ``gap = beta - f(alpha)`` (negative: below the curve);
    ``error``: standard error of ``gap`` from both coordinates, ``sqrt(se_beta^2 + (f' se_alpha)^2)``;
    ``max_gap = max |gap|``; ``violation = max(0, max(-gap - z error))``, how far the mean curve
    falls below ``f`` beyond ``z`` standard errors (0 for a sound bound, up to chance).

    Attributes
    ----------
    alpha, beta, beta_sd, gap, error : numpy.ndarray
        Per threshold.
    max_gap : float
        The largest ``|gap|``.
    violation : float
        How far the mean curve falls below ``f`` beyond ``z`` standard errors (0 if nowhere).
    """

    alpha: np.ndarray
    beta: np.ndarray
    beta_sd: np.ndarray
    gap: np.ndarray
    error: np.ndarray
    max_gap: float
    violation: float


def compare_to_curve(alpha, beta, curve, z: float = 3.0) -> CurveComparison:
    """Compare empirical trade-off points ``alpha, beta`` (repetitions, thresholds) with ``curve``.

    The points of every repetition must come from the same thresholds (as returned by
    :func:`empirical_tradeoff` with an array of thresholds).  The mean point at each threshold is
    an unbiased estimate of the true (alpha, beta) of that threshold, so it is the mean point, not
    the mean of ``curve(alpha)``, that is compared with the curve.

    Parameters
    ----------
    alpha, beta : array_like
        (repetitions, thresholds).
    curve : TradeOffCurve
    z : float, default 3.0
        Standard errors tolerated below the curve.

    Returns
    -------
    CurveComparison

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Sec. 5, Fig. 3.
    """
    a = np.asarray(alpha, dtype=np.float64)
    b = np.asarray(beta, dtype=np.float64)
    if a.ndim != 2 or a.shape != b.shape or a.shape[0] < 2:
        raise ValueError(f"{spelled('alpha')} and beta must share a shape (repetitions >= 2, thresholds), got {a.shape} and {b.shape}")
    if np.any((a < 0) | (a > 1) | (b < 0) | (b > 1)):
        raise ValueError(f"{spelled('alpha')} and beta must lie in [0, 1]")
    z = check_positive("z", z)
    reps = a.shape[0]
    a_mean, b_mean = a.mean(axis=0), b.mean(axis=0)
    h = 1e-4
    lo, hi = np.clip(a_mean - h, 0.0, 1.0), np.clip(a_mean + h, 0.0, 1.0)
    slope = (curve(hi) - curve(lo)) / np.maximum(hi - lo, h)
    se = np.sqrt(b.var(axis=0, ddof=1) / reps + (slope**2) * a.var(axis=0, ddof=1) / reps)
    gap = b_mean - curve(a_mean)
    return CurveComparison(
        alpha=a_mean,
        beta=b_mean,
        beta_sd=b.std(axis=0, ddof=1),
        gap=gap,
        error=se,
        max_gap=float(np.max(np.abs(gap))),
        violation=float(max(0.0, np.max(-gap - z * se))),
    )


# ---------------------------------------------------------------------------------------------
# Reconstruction attacks on DP-SGD (Hayes et al. 2023, Secs. 2, 3.4, 4.3, Apps. E-G)
# ---------------------------------------------------------------------------------------------


class PriorObserver:
    """Observer for :func:`fdp.experiments.dpsgd.train` that scores every candidate of a discrete prior.

    ``x_prior`` (R, n, d), ``y_prior`` (R, n): the n candidates of each run's prior (the target is
    one of them).  At every step t it stores, for each run and candidate z_i,
    ``inner[r, i, t] = <clip_C(grad l(theta_t, z_i)), gbar_t>`` with ``gbar_t = g_t - known_t``
    the privatised gradient minus the clipped gradients of the known points in the batch
    (Alg. 2's observation), ``inner_known[r, i, t] = <clip_C(grad l(theta_t, z_i)), known_t>``
    (so that ``inner + inner_known`` is the score without subtraction, App. E), and the squared
    norm of the clipped candidate gradient ``sq[r, i, t]`` (for the likelihood attack, App. G).
    Gradients are never formed: the inner products use the per-layer outer-product structure.

    Parameters
    ----------
    model : fdp.experiments.dpsgd.MLP
    x_prior : array_like
        (R, n, d).
    y_prior : array_like
        (R, n).
    clip_norm : float
    steps : int

    References
    ----------
    Hayes et al. (2023) Alg. 2, App. F.
    """

    def __init__(self, model, x_prior, y_prior, clip_norm: float, steps: int):
        if not isinstance(model, dpsgd.MLP):
            raise ValueError("model must be an fdp.experiments.dpsgd.MLP")
        self.model = model
        self.x = np.asarray(x_prior, dtype=np.float64)
        self.y = np.asarray(y_prior)
        if self.x.ndim != 3 or self.x.shape[-1] != model.d or self.y.shape != self.x.shape[:2]:
            raise ValueError(f"x_prior must be (runs, n, {model.d}) and y_prior (runs, n), got {self.x.shape}, {self.y.shape}")
        self.clip_norm = check_positive("clip_norm", clip_norm)
        steps = check_positive_int("steps", steps)
        runs, n = self.y.shape
        self.inner = np.zeros((runs, n, steps))
        self.inner_known = np.zeros((runs, n, steps))
        self.sq = np.zeros((runs, n, steps))

    def _inner(self, delta, e, h, vec):
        w1, b1, w2, b2 = self.model.unpack(vec)
        # <delta x^T, W1> + <delta, b1> + <e h^T, W2> + <e, b2> for every candidate (batched GEMMs)
        a = np.matmul(self.x, np.swapaxes(w1, 1, 2))
        a += b1[:, None, :]
        o = np.matmul(h, np.swapaxes(w2, 1, 2))
        o += b2[:, None, :]
        return (delta * a).sum(-1) + (e * o).sum(-1)

    def __call__(self, t, theta, g, known):
        delta, e, h, sq = dpsgd.raw_factors(self.model, theta, self.x, self.y)
        c = dpsgd.clip_factors(sq, self.clip_norm)
        self.inner[:, :, t] = c * self._inner(delta, e, h, g - known)
        self.inner_known[:, :, t] = c * self._inner(delta, e, h, known)
        self.sq[:, :, t] = c * c * sq


def _pick(scores: np.ndarray, rng) -> np.ndarray:
    """Index of the largest score on the last axis; ties broken uniformly at random with ``rng``
    (a Generator), or by the first index when ``rng`` is None."""
    if rng is None:
        return scores.argmax(axis=-1)
    best = scores == scores.max(axis=-1, keepdims=True)
    return (best * (1.0 + rng.random(scores.shape))).argmax(axis=-1)


def prior_aware_guess(inner, rng=None) -> np.ndarray:
    """Alg. 2: the candidate with the largest sum over steps of ``inner`` (R, n, T); returns (R,).

    Parameters
    ----------
    inner : array_like
        (R, n, T) inner products.
    rng : numpy.random.Generator, optional
        Breaks ties at random (else the first index wins).

    Returns
    -------
    numpy.ndarray
        (R,) candidate indices.

    References
    ----------
    Hayes et al. (2023) Alg. 2.

    Examples
    --------
    >>> import numpy as np
    >>> prior_aware_guess(np.array([[[1.0, 0.0], [0.5, 0.6]]])).tolist()
    [1]
    """
    return _pick(np.asarray(inner).sum(axis=-1), rng)


def top_steps_guess(inner, sampling_rate: float, rng=None) -> np.ndarray:
    """Alg. 3 (App. F): sum only the ``round(q T)`` (at least 1) largest inner products per candidate.

    Parameters
    ----------
    inner : array_like
        (R, n, T).
    sampling_rate : float
        q in (0, 1].
    rng : numpy.random.Generator, optional

    Returns
    -------
    numpy.ndarray
        (R,).

    References
    ----------
    Hayes et al. (2023) Alg. 3, App. F.

    Examples
    --------
    >>> import numpy as np
    >>> top_steps_guess(np.array([[[1.0, 0.0], [0.5, 0.6]]]), 0.5).tolist()  # the single largest step wins
    [0]
    """
    inner = np.asarray(inner)
    q = check_sampling_rate("sampling_rate", sampling_rate)
    steps = inner.shape[-1]
    k = min(steps, max(1, int(round(q * steps))))
    top = np.partition(inner, steps - k, axis=-1)[..., steps - k :]
    return _pick(top.sum(axis=-1), rng)


def log_likelihood_guess(inner, sq, training: dpsgd.Training, rng=None) -> np.ndarray:
    """App. G: the candidate maximising the log-likelihood of the observed gradients.

    With ``gbar_t`` the observed gradient minus the known points and ``g^z_t`` the candidate's
    clipped gradient, step t has density ``(1 - q) N(0, s^2) + q N(g^z_t, s^2)`` at ``gbar_t``
    (``q`` the training's sampling rate, ``s = noise_multiplier * clip_norm``); relative to the candidate-free density the log-likelihood is
    ``sum_t log(1 - q + q exp((|gbar_t|^2 - |gbar_t - g^z_t|^2) / (2 s^2)))`` and
    ``|gbar_t|^2 - |gbar_t - g^z_t|^2 = 2 <g^z_t, gbar_t> - |g^z_t|^2``.  (App. G prints a plus
    between the two squared norms; the ranking it gives differs from the likelihood when q < 1.)

    Parameters
    ----------
    inner : array_like
        (R, n, T) inner products ``<g^z_t, gbar_t>``.
    sq : array_like
        (R, n, T) squared norms ``|g^z_t|^2``.
    training : fdp.experiments.dpsgd.Training
        The run observed: its sampling rate, noise multiplier (> 0) and clipping norm.
    rng : numpy.random.Generator, optional

    Returns
    -------
    numpy.ndarray
        (R,).

    References
    ----------
    Hayes et al. (2023) App. G.
    """
    training = dpsgd.check_training(training)
    q = training.sampling_rate
    s = training.noise_multiplier * training.clip_norm
    x = (2.0 * np.asarray(inner) - np.asarray(sq)) / (2.0 * s * s)
    return _pick(subsampled(x, q).sum(axis=-1), rng)


@dataclass(frozen=True)
class Proportion(Unpacks):
    """An observed success rate with its Clopper-Pearson interval.

    Attributes
    ----------
    estimate : float
        Successes over trials.
    lower, upper : float
        The exact two-sided confidence interval.
    """

    estimate: float
    lower: float
    upper: float

    @property
    def interval(self) -> Interval:
        """``Interval(lower, upper)``, the Clopper-Pearson interval."""
        return Interval(self.lower, self.upper)


def success_rate(successes, confidence: float = 0.95) -> Proportion:
    """Fraction of successful trials with its Clopper-Pearson interval: ``(rate, low, high)``.

    Parameters
    ----------
    successes : array_like
        Booleans, one per trial.
    confidence : float, default 0.95

    Returns
    -------
    Proportion
        ``(estimate, lower, upper)``.

    References
    ----------
    Clopper and Pearson (1934); Hayes et al. (2023) Figs. 2-5.

    Examples
    --------
    >>> rate, low, high = success_rate([True] * 5 + [False] * 5)
    >>> rate, round(low, 4), round(high, 4)
    (0.5, 0.1871, 0.8129)
    """
    s = np.asarray(successes, dtype=bool).ravel()
    if s.size == 0:
        raise ValueError("successes must hold at least one trial")
    return clopper_pearson(int(s.sum()), s.size, confidence)


def clopper_pearson(successes: float, trials: int, confidence: float = 0.95) -> Proportion:
    """The Clopper-Pearson interval of ``successes`` out of ``trials``; a real count is read through the beta quantiles.

    Parameters
    ----------
    successes : float
        In [0, trials].
    trials : int
        >= 1.
    confidence : float, default 0.95

    Returns
    -------
    Proportion

    Examples
    --------
    >>> clopper_pearson(5, 10) == success_rate([True] * 5 + [False] * 5)
    True
    """
    n = check_positive_int("trials", trials)
    k = float(successes)
    if not 0.0 <= k <= n:
        raise ValueError(f"successes must lie in [0, {n}], got {successes!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    a = 1.0 - confidence
    low = 0.0 if k == 0 else float(beta_dist.ppf(a / 2, k, n - k + 1))
    high = 1.0 if k == n else float(beta_dist.ppf(1 - a / 2, k + 1, n - k))
    return Proportion(k / n, low, high)


def resolvable_difference(trials_1: int, trials_2: int, z: float = 3.0) -> float:
    """The smallest difference of two success rates, measured in ``trials_1`` and ``trials_2`` games, that ``z``
    standard errors resolve at the worst case p = 1/2: a claim of "no difference" tested with fewer games is only as
    strong as this.

    Parameters
    ----------
    trials_1, trials_2 : int
        >= 1.
    z : float, default 3.0
        > 0.

    Returns
    -------
    float
        ``z * sqrt(1/(4 n1) + 1/(4 n2))``, capped at 1 (two rates never differ by more).

    Examples
    --------
    >>> resolvable_difference(100, 100)
    0.21213203435596426
    """
    n1, n2 = check_positive_int("trials_1", trials_1), check_positive_int("trials_2", trials_2)
    z = check_positive("z", z)
    return float(min(1.0, z * np.sqrt(0.25 / n1 + 0.25 / n2)))
