"""Attacks on trained models and the empirical quantities measured from them.

* :func:`empirical_tradeoff` -- the empirical trade-off curve (type-I error alpha, type-II error
  beta) of a threshold test on attack scores, at a set of thresholds (the ROC read as a trade-off
  curve, as in the audits of Kaissis et al. 2023, Sec. 5).
"""

from __future__ import annotations

import numpy as np

from .validation import check_positive_int

__all__ = ["empirical_tradeoff"]


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
