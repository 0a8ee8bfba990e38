"""Attacks on trained models and the empirical quantities measured from them.

* :func:`empirical_tradeoff` -- the empirical trade-off curve (type-I error alpha, type-II error
  beta) of a threshold test on attack scores, at a set of thresholds (the ROC read as a trade-off
  curve, as in the audits of Kaissis et al. 2023, Sec. 5).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .validation import check_positive, check_positive_int

__all__ = ["empirical_tradeoff", "CurveComparison", "compare_to_curve"]


def empirical_tradeoff(scores_h0, scores_h1, thresholds=50) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Empirical (alpha, beta) of the tests "reject H0 when score > t" over thresholds t.

    ``scores_h0`` are the attack's scores when H0 is true (e.g. the target is absent) and
    ``scores_h1`` when H1 is true; higher scores mean "H1".  Both may carry leading batch axes
    (independent repetitions), with samples on the last axis; the batch shapes must agree.
    ``alpha[..., k] = P0(score > t_k)`` and ``beta[..., k] = P1(score <= t_k)``.

    ``thresholds`` is an int (that many thresholds spaced evenly from just below the smallest to
    the largest pooled score, so the curve runs from (1, 0) to (0, 1)) or an increasing array.
    Returns ``(thresholds, alpha, beta)``; alpha and beta have shape ``batch + (len(thresholds),)``.
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


@dataclass(frozen=True)
class CurveComparison:
    """The mean empirical curve over repetitions against a theoretical curve ``f``, per threshold.

    ``alpha``, ``beta``: mean empirical errors; ``beta_sd``: standard deviation of beta across
    repetitions (the paper's error band); ``gap = beta - f(alpha)`` (negative: below the curve);
    ``error``: standard error of ``gap`` from both coordinates, ``sqrt(se_beta^2 + (f' se_alpha)^2)``;
    ``max_gap = max |gap|``; ``violation = max(0, max(-gap - z error))``, how far the mean curve
    falls below ``f`` beyond ``z`` standard errors (0 for a sound bound, up to chance).
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
    """
    a = np.asarray(alpha, dtype=np.float64)
    b = np.asarray(beta, dtype=np.float64)
    if a.ndim != 2 or a.shape != b.shape or a.shape[0] < 2:
        raise ValueError(f"alpha and beta must share a shape (repetitions >= 2, thresholds), got {a.shape} and {b.shape}")
    if np.any((a < 0) | (a > 1) | (b < 0) | (b > 1)):
        raise ValueError("alpha and beta must lie in [0, 1]")
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
