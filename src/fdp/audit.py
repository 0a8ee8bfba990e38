"""Gradient-space audits of the relaxed threat model (RTM paper, Sec. 5 and App. 7.3).

The informed adversary of the RTM knows the training data D but not the target x*.  In a
gradient-space audit the released quantity is one DP gradient step: the sum of the per-sample
clipped gradients of D, plus (under H1) the target's gradient, plus noise.  The adversary subtracts
the known sum and tests the magnitude of what is left (Lemma 4).  With a "Dirac canary" (a
gradient of norm Delta along one coordinate, after Nasr et al. 2023) the statistic has exactly the
laws of Thm. 2 (Gaussian noise; chi with d degrees of freedom) or Thm. 1 (Laplace noise, d = 1),
so the empirical trade-off curve should match the RTM curve ``j``.

* :func:`train_linear_dpgd` -- full-batch (or Poisson-sampled) DP gradient descent of one linear
  unit with logistic loss, vectorised over independent runs; returns the weights and the final
  iteration's clipped per-sample gradients (the reference "database" of the audit).
* :func:`canary_scores` -- magnitudes of the centred releases without and with the canary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .validation import check_positive, check_positive_int, check_sampling_rate

__all__ = ["LinearRuns", "train_linear_dpgd", "clip_rows", "canary_scores"]


@dataclass(frozen=True)
class LinearRuns:
    """``weights`` (runs, d + 1; the last entry is the bias) and the clipped per-sample
    gradients of the last iteration, ``final_gradients`` (runs, n, d + 1)."""

    weights: np.ndarray
    final_gradients: np.ndarray


def clip_rows(g: np.ndarray, clip: float) -> np.ndarray:
    """Scale every vector on the last axis to L2 norm at most ``clip`` (DP-SGD clipping)."""
    norms = np.linalg.norm(g, axis=-1, keepdims=True)
    return g * np.minimum(1.0, clip / np.maximum(norms, np.finfo(float).tiny))


def train_linear_dpgd(
    x,
    y,
    *,
    steps: int,
    learning_rate: float,
    clip: float = 1.0,
    noise: float = 1.0,
    runs: int = 1,
    sampling_rate: float = 1.0,
    seed: int,
) -> LinearRuns:
    """DP gradient descent of a single logistic unit ``sigmoid(w . x + b)``, ``runs`` models at once.

    Each step: per-sample gradients of the cross-entropy, clipped to L2 norm ``clip``, summed over
    the batch (all of D, or a Poisson sample with rate ``sampling_rate``), plus Gaussian noise of
    standard deviation ``noise * clip`` per coordinate, divided by the expected batch size; then a
    plain gradient step.  ``seed`` seeds one ``numpy.random.Generator`` for the noise and the
    sampling of every run.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or y.shape != (x.shape[0],) or x.shape[0] == 0:
        raise ValueError(f"x must be (n, d) and y (n,), got shapes {x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all((y == 0) | (y == 1))):
        raise ValueError("x must be finite and y must hold labels 0 or 1")
    steps = check_positive_int("steps", steps)
    learning_rate = check_positive("learning_rate", learning_rate)
    clip = check_positive("clip", clip)
    noise = check_positive("noise", noise)
    runs = check_positive_int("runs", runs)
    q = check_sampling_rate("sampling_rate", sampling_rate)
    rng = np.random.default_rng(seed)
    n, d = x.shape
    xb = np.hstack([x, np.ones((n, 1))])  # the bias as a constant feature
    w = np.zeros((runs, d + 1))
    grads = None
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(w @ xb.T)))  # (runs, n)
        grads = clip_rows((p - y)[:, :, None] * xb[None, :, :], clip)  # d loss / d w per sample
        if q < 1.0:
            grads = grads * (rng.random((runs, n, 1)) < q)
        total = grads.sum(axis=1) + noise * clip * rng.standard_normal((runs, d + 1))
        w = w - learning_rate * total / (q * n)
    return LinearRuns(weights=w, final_gradients=grads)


def canary_scores(
    reference_gradients,
    canary_norm: float,
    noise_scale: float,
    repetitions: int,
    *,
    mechanism: str = "gaussian",
    sampling_rate: float = 1.0,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Scores of the gradient-space canary audit: ``(||theta_0||, ||theta_1||)``, ``repetitions`` each.

    The release is ``sum(reference_gradients) + B c + Z`` with the Dirac canary ``c`` (norm
    ``canary_norm`` on the first coordinate), ``B = 0`` under H0 and, under H1, ``B = 1`` (or
    Bernoulli(``sampling_rate``) for the Poisson-subsampled mechanism, Lemma 9).  ``Z`` is
    N(0, noise_scale^2 I) for ``"gaussian"`` or i.i.d. Laplace(0, noise_scale) for ``"laplace"``.
    The adversary knows the reference gradients, subtracts their sum and scores the L2 norm of
    the rest (Lemma 4).  ``reference_gradients`` is (n, d) or a single summed (d,) vector.
    """
    g = np.asarray(reference_gradients, dtype=np.float64)
    if g.ndim not in (1, 2) or g.size == 0 or not np.all(np.isfinite(g)):
        raise ValueError(f"reference_gradients must be a finite (n, d) or (d,) array, got shape {g.shape}")
    canary_norm = check_positive("canary_norm", canary_norm)
    noise_scale = check_positive("noise_scale", noise_scale)
    repetitions = check_positive_int("repetitions", repetitions)
    q = check_sampling_rate("sampling_rate", sampling_rate)
    if mechanism not in ("gaussian", "laplace"):
        raise ValueError(f"mechanism must be 'gaussian' or 'laplace', got {mechanism!r}")
    rng = np.random.default_rng(seed)
    known = g.sum(axis=0) if g.ndim == 2 else g
    d = known.shape[0]
    canary = np.zeros(d)
    canary[0] = canary_norm

    def noise(size):
        if mechanism == "gaussian":
            return noise_scale * rng.standard_normal((size, d))
        return rng.laplace(0.0, noise_scale, (size, d))

    release0 = known + noise(repetitions)
    included = (rng.random((repetitions, 1)) < q) if q < 1.0 else np.ones((repetitions, 1))
    release1 = known + included * canary + noise(repetitions)
    # the adversary subtracts what it knows and keeps the magnitude
    return np.linalg.norm(release0 - known, axis=1), np.linalg.norm(release1 - known, axis=1)
