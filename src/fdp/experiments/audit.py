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
* :func:`lira_offline_scores` -- the offline likelihood-ratio attack on one more DP step, run by run.
* :func:`canary_scores` -- magnitudes of the centred releases without and with the canary.
* :func:`canary_audit` -- one canary audit per run, each with its own reference gradients.

Every run (a trained model, its attack, its audit) draws from its own random stream, the run's child
of the seed, and chunks of runs go to local workers or a Dask cluster (:func:`fdp.parallel.map_runs`):
the results are the same bits whatever the chunk size, the number of workers or the backend.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from ..accounting.privacy_loss import Mechanism, check_mechanism
from ..parallel import Execution, check_execution, map_runs
from ..validation import check_positive, check_positive_int
from .datasets import one_feature_classification
from .dpsgd import Training, check_training
from .dpsgd import clip as clip_rows  # DP-SGD's per-sample clipping, one implementation

__all__ = [
    "RUNS_PER_TASK",
    "LinearRuns",
    "flipped_target_sets",
    "logistic_logits",
    "logistic_gradients",
    "train_linear_dpgd",
    "linear_network_gradients",
    "train_linear_network_dpgd",
    "lira_offline_scores",
    "canary_scores",
    "canary_audit",
]


#: Runs of a training, an attack or an audit sent to a worker at a time (the default ``chunk``).
RUNS_PER_TASK = 128


def _full_batch(training: Training) -> Training:
    if training.sampling_rate != 1.0:
        raise ValueError(f"training.sampling_rate must be 1 (full-batch steps), got {training.sampling_rate}")
    return training


@dataclass(frozen=True)
class LinearRuns:
    """``weights`` (runs, d + 1; the last entry is the bias) and the clipped per-sample
    gradients of the last iteration, ``final_gradients`` (runs, n, d + 1).

    Attributes
    ----------
    weights : numpy.ndarray
    final_gradients : numpy.ndarray
    """

    weights: np.ndarray
    final_gradients: np.ndarray

    def fit(self, x, y) -> tuple[np.ndarray, np.ndarray]:
        """Each run's mean cross-entropy and accuracy on its own data: ``x`` (runs, n, d) or one (n, d), ``y`` its
        labels (a bias is the last weight when there is one more weight than features).

        Parameters
        ----------
        x : array_like
        y : array_like

        Returns
        -------
        (loss, accuracy) : tuple of numpy.ndarray
            Each (runs,).
        """
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        intercept = self.weights.shape[1] == x.shape[-1] + 1
        logits = logistic_logits(self.weights, _with_intercept(x, intercept))
        loss = (np.logaddexp(0.0, logits) - y * logits).mean(axis=-1)
        return loss, ((logits > 0) == (y == 1)).mean(axis=-1)


def flipped_target_sets(runs: int, samples: int, seed) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The audits' data (RTM App. 7.3): per run a fresh :func:`~fdp.experiments.datasets.one_feature_classification`
    set of ``samples`` points, one of which is held out as the target with its label flipped.

    Parameters
    ----------
    runs : int
    samples : int
        Points per set, the target included (>= 2).
    seed : int or numpy.random.SeedSequence

    Returns
    -------
    (x, y, x_target, y_target) : tuple of numpy.ndarray
        (runs, samples - 1, 1), (runs, samples - 1), (runs, 1) and (runs,).

    References
    ----------
    RTM paper (Kaissis et al. 2023b) App. 7.3.
    """
    runs = check_positive_int("runs", runs)
    rng = np.random.default_rng(seed)
    xs, ys, x_target, y_target = [], [], [], []
    for _ in range(runs):
        data = one_feature_classification(samples, seed=int(rng.integers(2**31 - 1)))
        held = int(rng.integers(samples))
        keep = np.arange(samples) != held
        xs.append(data.x[keep])
        ys.append(data.y[keep])
        x_target.append(data.x[held])
        y_target.append(1 - data.y[held])  # the flipped label
    return np.array(xs), np.array(ys), np.array(x_target), np.array(y_target)


def _with_intercept(x: np.ndarray, fit_intercept: bool) -> np.ndarray:
    """Append the constant feature 1 that carries the bias (on the last axis)."""
    if not fit_intercept:
        return x
    return np.concatenate([x, np.ones(x.shape[:-1] + (1,))], axis=-1)


def logistic_gradients(weights, features, labels) -> np.ndarray:
    """Per-sample gradients ``(sigmoid(w @ x) - y) x`` of the cross-entropy of a logistic unit.

    ``weights`` (runs, p), ``features`` (n, p) or (runs, n, p) (bias column included),
    ``labels`` (n,) or (runs, n); returns (runs, n, p).

    Parameters
    ----------
    weights : array_like
        (runs, p).
    features : array_like
        (n, p) or (runs, n, p).
    labels : array_like
        (n,) or (runs, n).

    Returns
    -------
    numpy.ndarray
        (runs, n, p).

    Examples
    --------
    >>> import numpy as np
    >>> logistic_gradients(np.zeros((1, 2)), np.array([[1.0, 2.0]]), np.array([1.0])).tolist()  # (1/2 - 1) x
    [[[-0.5, -1.0]]]
    """
    xb = np.asarray(features, dtype=np.float64)
    return (special.expit(logistic_logits(weights, xb)) - labels)[..., None] * xb


def logistic_logits(weights, features) -> np.ndarray:
    """``w @ x`` of a logistic unit per run and sample: ``weights`` (runs, p), ``features`` (n, p) or (runs, n, p)
    (bias column included); returns (runs, n).

    Parameters
    ----------
    weights : array_like
    features : array_like

    Returns
    -------
    numpy.ndarray
    """
    w = np.asarray(weights, dtype=np.float64)
    xb = np.asarray(features, dtype=np.float64)
    return np.einsum("np,rp->rn", xb, w) if xb.ndim == 2 else np.einsum("rnp,rp->rn", xb, w)


def _train_runs(x, y, *, seeds, steps, learning_rate, clip_norm, noise_multiplier, sampling_rate, fit_intercept):
    """:func:`train_linear_dpgd` on a chunk of runs, run r drawing from ``seeds[r]`` (each step: its noise, then
    its batch); ``x`` is the chunk's data sets (runs, n, d) or one shared (n, d)."""
    n = x.shape[-2]
    xb = _with_intercept(x, fit_intercept)
    gens = [np.random.default_rng(s) for s in seeds]
    w = np.zeros((len(gens), xb.shape[-1]))
    grads = None
    for _ in range(steps):
        grads = clip_rows(logistic_gradients(w, xb, y), clip_norm)
        noise = np.stack([g.standard_normal(w.shape[1]) for g in gens])
        if sampling_rate < 1.0:
            grads = grads * np.stack([g.random((n, 1)) < sampling_rate for g in gens])
        total = grads.sum(axis=1) + noise_multiplier * clip_norm * noise
        w = w - learning_rate * total / (sampling_rate * n)
    return w, grads


def train_linear_dpgd(
    x,
    y,
    training: Training,
    *,
    runs: int | None = None,
    fit_intercept: bool = True,
    execution: Execution,
) -> LinearRuns:
    """DP gradient descent of a single logistic unit ``sigmoid(w @ x + b)``, many models at once.

    ``x`` is one data set (n, d) shared by ``runs`` models (default 1), or one data set per run,
    (runs, n, d) with labels (runs, n).  Each step: per-sample gradients of the cross-entropy,
    clipped to L2 norm ``clip_norm``, summed over the batch (all of D, or a Poisson sample with rate
    ``sampling_rate``), plus Gaussian noise of standard deviation ``noise_multiplier * clip_norm`` per coordinate,
    divided by the expected batch size; then a plain gradient step from ``w = 0`` (all from ``training``).  Without
    ``fit_intercept`` the unit has no bias (p = d parameters).  Run r draws its noise and its
    batches from the r-th child of ``execution.seed``; ``execution.chunk`` runs (default :data:`RUNS_PER_TASK`) train
    together on one worker (:func:`fdp.parallel.map_runs`: the same bits on any number of workers or a Dask cluster).

    Parameters
    ----------
    x, y : array_like
        (n, d) and (n,), or (runs, n, d) and (runs, n); labels 0 or 1.
    training : fdp.experiments.dpsgd.Training
        With noise (``noise_multiplier`` > 0).
    runs : int, optional
    fit_intercept : bool, default True
    execution : fdp.parallel.Execution

    Returns
    -------
    LinearRuns

    References
    ----------
    RTM paper (Kaissis et al. 2023b) App. 7.3.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim not in (2, 3) or y.shape != x.shape[:-1] or x.shape[-2] == 0:
        raise ValueError(f"x must be (n, d) or (runs, n, d) and y its labels, got shapes {x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all((y == 0) | (y == 1))):
        raise ValueError("x must be finite and y must hold labels 0 or 1")
    training, execution = check_training(training), check_execution(execution)
    if x.ndim == 3:
        if runs is not None and check_positive_int("runs", runs) != x.shape[0]:
            raise ValueError(f"runs={runs} disagrees with the {x.shape[0]} data sets in x")
        runs = x.shape[0]
    runs = check_positive_int("runs", 1 if runs is None else runs)
    data = dict(per_run=[x, y]) if x.ndim == 3 else dict(x=x, y=y)  # a shared data set goes once to each task
    w, grads = map_runs(_train_runs, seed=execution.seed, chunk=execution.chunk_or(RUNS_PER_TASK), runs=runs,
                        n_jobs=execution.n_jobs, progress=execution.progress, desc="training runs", steps=training.steps,
                        learning_rate=training.learning_rate, clip_norm=training.clip_norm,
                        noise_multiplier=training.noise_multiplier, sampling_rate=training.sampling_rate,
                        fit_intercept=fit_intercept, **data)
    return LinearRuns(weights=w, final_gradients=grads)


def linear_network_gradients(params, x, y, latent: int) -> np.ndarray:
    """Per-sample gradients of ``(f(x) - y)^2 / 2`` for the linear network
    ``f(x) = w2 @ (W1 x + b1) + b2`` with a ``latent``-dimensional hidden layer.

    ``params`` is the flat vector ``(W1 (latent x d), b1, w2, b2)`` of length
    ``latent (d + 2) + 1``; returns (n, len(params)).

    Parameters
    ----------
    params : array_like
    x : array_like
        (n, d).
    y : array_like
        (n,).
    latent : int

    Returns
    -------
    numpy.ndarray
        (n, len(params)).
    """
    x = np.asarray(x, dtype=np.float64)
    n, d = x.shape
    w1 = params[: latent * d].reshape(latent, d)
    b1 = params[latent * d : latent * (d + 1)]
    w2 = params[latent * (d + 1) : latent * (d + 2)]
    h = x @ w1.T + b1
    r = h @ w2 + params[-1] - y  # residual = d loss / d f
    g_w1 = (r[:, None] * w2)[:, :, None] * x[:, None, :]
    return np.concatenate([g_w1.reshape(n, -1), r[:, None] * w2, r[:, None] * h, r[:, None]], axis=1)


def train_linear_network_dpgd(
    x,
    y,
    training: Training,
    *,
    latent: int,
    seed,
) -> LinearRuns:
    """Full-batch DP gradient descent of the linear network of :func:`linear_network_gradients`
    (squared loss; the RTM paper's Fig. 3c model with ``latent = 50``).

    Same step as :func:`train_linear_dpgd`; the weights start from N(0, 1/fan_in), the biases
    from 0.  Returns one run: ``weights`` (1, P) and ``final_gradients`` (1, n, P), clipped.

    Parameters
    ----------
    x, y : array_like
        (n, d) and (n,).
    training : fdp.experiments.dpsgd.Training
        Full batches (``sampling_rate`` 1), with noise.
    latent : int
    seed : int or numpy.random.SeedSequence

    Returns
    -------
    LinearRuns

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Fig. 3c.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or y.shape != (x.shape[0],) or x.shape[0] == 0:
        raise ValueError(f"x must be (n, d) and y (n,), got shapes {x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x and y must be finite")
    latent = check_positive_int("latent", latent)
    training = _full_batch(check_training(training))
    steps, learning_rate, clip_norm = training.steps, training.learning_rate, training.clip_norm
    noise_multiplier = training.noise_multiplier
    rng = np.random.default_rng(seed)
    n, d = x.shape
    params = np.concatenate([
        rng.standard_normal(latent * d) / np.sqrt(d), np.zeros(latent),
        rng.standard_normal(latent) / np.sqrt(latent), np.zeros(1),
    ])
    grads = None
    for _ in range(steps):
        grads = clip_rows(linear_network_gradients(params, x, y, latent), clip_norm)
        total = grads.sum(axis=0) + noise_multiplier * clip_norm * rng.standard_normal(params.shape)
        params = params - learning_rate * total / n
        if not np.all(np.isfinite(params)):
            raise ValueError("training diverged: lower learning_rate")
    return LinearRuns(weights=params[None, :], final_gradients=grads[None])


def _lira_runs(w, xt, yt, x, y, *, seeds, learning_rate, clip_norm, noise_multiplier, shadow_models, target_models,
               fit_intercept):
    """:func:`lira_offline_scores` on a chunk of runs (``xt`` with its bias column), run r drawing from ``seeds[r]``;
    ``x`` is the chunk's data sets (runs, n, d) or one shared (n, d)."""
    n = x.shape[-2]
    known = clip_rows(logistic_gradients(w, _with_intercept(x, fit_intercept), y), clip_norm).sum(axis=1)
    target = clip_rows(logistic_gradients(w, xt[:, None, :], yt[:, None]), clip_norm)[:, 0]
    sign = np.where(yt == 1, 1.0, -1.0)[:, None]  # logit of the confidence in the target's label
    gens = [np.random.default_rng(s) for s in seeds]
    scale = noise_multiplier * clip_norm

    def phi(models: int, include: bool) -> np.ndarray:
        step = known[:, None, :] + scale * np.stack([g.standard_normal((models, w.shape[1])) for g in gens])
        if include:
            step = step + target[:, None, :]
        w_new = w[:, None, :] - learning_rate * step / n
        return sign * np.einsum("rmp,rp->rm", w_new, xt)

    shadow = phi(shadow_models, False)
    mean, sd = shadow.mean(axis=1, keepdims=True), shadow.std(axis=1, ddof=1, keepdims=True)
    scores_h0 = (phi(target_models, False) - mean) / sd
    scores_h1 = (phi(target_models, True) - mean) / sd
    effect = np.abs(np.einsum("rp,rp->r", target, xt)) / (scale * np.linalg.norm(xt, axis=1))
    return scores_h0, scores_h1, effect


def lira_offline_scores(
    x,
    y,
    weights,
    x_target,
    y_target,
    training: Training,
    *,
    shadow_models: int,
    target_models: int,
    fit_intercept: bool = True,
    execution: Execution,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Offline LiRA (Carlini et al. 2022, Sec. IV.C) on one DP gradient step, run by run.

    Each run r starts from the trained weights ``weights[r]`` (the adversary knows them: earlier
    steps are disregarded, RTM App. 7.3) and takes one full-batch DP step on its data set
    ``x[r], y[r]`` (H0) or on that set plus the target ``(x_target[r], y_target[r])`` (H1),
    normalised by ``n = |D|`` in both cases.  The attack:

    1. trains ``shadow_models`` OUT models (the step on D with fresh noise) and fits a Gaussian
       to their logit-scaled confidence ``phi = log(c / (1 - c))`` on the target's label;
    2. scores each of ``target_models`` models per hypothesis by the one-sided statistic
       ``(phi - mean) / sd``: large means "member".

    Returns ``(scores_h0, scores_h1, effect)``, the scores of shape (runs, target_models) and, for
    each run, the effect size of the target in logit space, ``|clip(g*) @ x*| / (noise_multiplier clip_norm |x*|)``
    (at most ``Delta / sigma = 1 / noise_multiplier``, with equality when the target's gradient is clipped).
    Run r draws its noise from the r-th child of ``execution.seed``; ``execution.chunk`` runs (default
    :data:`RUNS_PER_TASK`) go to a worker at a time (:func:`fdp.parallel.map_runs`: the same bits on any number of
    workers or a Dask cluster).

    Parameters
    ----------
    x, y : array_like
        (runs, n, d) and (runs, n), or one data set shared by all runs.
    weights : array_like
        (runs, p).
    x_target, y_target : array_like
        (runs, d) and (runs,).
    training : fdp.experiments.dpsgd.Training
        The one step: ``steps`` 1, full batch, with noise.
    shadow_models : int
        >= 2.
    target_models : int
    fit_intercept : bool, default True
    execution : fdp.parallel.Execution

    Returns
    -------
    (scores_h0, scores_h1, effect) : tuple of numpy.ndarray

    References
    ----------
    Carlini et al. (2022) Sec. IV.C; RTM paper (Kaissis et al. 2023b) App. 7.3, Fig. 3a.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 2:
        raise ValueError(f"weights must be (runs, p), got shape {w.shape}")
    runs = w.shape[0]
    if x.ndim not in (2, 3) or (x.ndim == 3 and x.shape[0] != runs) or y.shape != x.shape[:-1]:
        raise ValueError(f"x must be (n, d) or (runs, n, d) with runs={runs} and y its labels, got {x.shape} and {y.shape}")
    xt = _with_intercept(np.asarray(x_target, dtype=np.float64), fit_intercept)
    yt = np.asarray(y_target, dtype=np.float64)
    if xt.shape != (runs, w.shape[1]) or yt.shape != (runs,):
        raise ValueError(f"x_target must be (runs, d) and y_target (runs,) for weights of shape {w.shape}")
    training, execution = _full_batch(check_training(training)), check_execution(execution)
    if training.steps != 1:
        raise ValueError(f"training.steps must be 1 (LiRA reads one DP gradient step), got {training.steps}")
    shadow_models = check_positive_int("shadow_models", shadow_models)
    if shadow_models < 2:
        raise ValueError(f"shadow_models must be >= 2 to fit a Gaussian, got {shadow_models}")
    target_models = check_positive_int("target_models", target_models)
    per_run, data = ([w, xt, yt, x, y], {}) if x.ndim == 3 else ([w, xt, yt], dict(x=x, y=y))
    return map_runs(_lira_runs, per_run, seed=execution.seed, chunk=execution.chunk_or(RUNS_PER_TASK),
                    n_jobs=execution.n_jobs, progress=execution.progress, desc="LiRA runs",
                    learning_rate=training.learning_rate, clip_norm=training.clip_norm,
                    noise_multiplier=training.noise_multiplier,
                    shadow_models=shadow_models, target_models=target_models, fit_intercept=fit_intercept, **data)


def canary_scores(
    reference_gradients,
    canary_norm: float,
    mechanism: Mechanism,
    repetitions: int,
    *,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Scores of the gradient-space canary audit: ``(||theta_0||, ||theta_1||)``, ``repetitions`` each.

    The release is ``sum(reference_gradients) + B c + Z`` with the Dirac canary ``c`` (norm
    ``canary_norm`` on the first coordinate), ``B = 0`` under H0 and, under H1, ``B = 1`` (or
    Bernoulli(``q``) for a Poisson-subsampled mechanism, Lemma 9).  ``Z`` is N(0, s^2 I) for Gaussian noise or
    i.i.d. Laplace(0, s) for Laplace noise, with the noise scale ``s = noise_multiplier * canary_norm`` (the
    canary's norm is the sensitivity); the noise, the noise multiplier and ``q`` are the mechanism's (one step).
    The adversary knows the reference gradients, subtracts their sum and scores the L2 norm of
    the rest (Lemma 4).  ``reference_gradients`` is (n, d) or a single summed (d,) vector.

    Parameters
    ----------
    reference_gradients : array_like
        (n, d) or (d,).
    canary_norm : float
        The sensitivity Delta, > 0.
    mechanism : fdp.Mechanism
        One step (``steps`` 1) of Gaussian or Laplace noise, Poisson-subsampled at its sampling rate.
    repetitions : int
    seed : int

    Returns
    -------
    (scores_h0, scores_h1) : tuple of numpy.ndarray

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Thms. 1-2, Lemmas 4 and 9, Sec. 5; Nasr et al. (2023).

    Examples
    --------
    >>> import numpy as np
    >>> from fdp import Mechanism
    >>> s0, s1 = canary_scores(np.zeros((3, 2)), 1.0, Mechanism("gaussian", 1.0), 5000, seed=0)
    >>> bool(s1.mean() > s0.mean())  # the canary shifts the norm
    True
    """
    g = np.asarray(reference_gradients, dtype=np.float64)
    if g.ndim not in (1, 2) or g.size == 0 or not np.all(np.isfinite(g)):
        raise ValueError(f"reference_gradients must be a finite (n, d) or (d,) array, got shape {g.shape}")
    canary_norm = check_positive("canary_norm", canary_norm)
    mechanism = _one_release(mechanism)
    repetitions = check_positive_int("repetitions", repetitions)
    q = mechanism.sampling_rate
    scale = mechanism.noise_multiplier * canary_norm  # the canary is the sensitivity
    rng = np.random.default_rng(seed)
    known = g.sum(axis=0) if g.ndim == 2 else g
    d = known.shape[0]
    canary = np.zeros(d)
    canary[0] = canary_norm

    def noise(size):
        if mechanism.noise == "gaussian":
            return scale * rng.standard_normal((size, d))
        return rng.laplace(0.0, scale, (size, d))

    release0 = known + noise(repetitions)
    included = (rng.random((repetitions, 1)) < q) if q < 1.0 else np.ones((repetitions, 1))
    release1 = known + included * canary + noise(repetitions)
    # the adversary subtracts what it knows and keeps the magnitude
    return np.linalg.norm(release0 - known, axis=1), np.linalg.norm(release1 - known, axis=1)


def _one_release(mechanism) -> Mechanism:
    """The mechanism of one audited release: a :class:`~fdp.Mechanism` of one step."""
    mechanism = check_mechanism(mechanism)
    if mechanism.steps != 1:
        raise ValueError(f"mechanism must be one release (steps 1): the audit adds one canary to one noisy sum, got "
                         f"{mechanism.steps} steps")
    return mechanism


def _canary_runs(references, *, seeds, canary_norm, mechanism, repetitions):
    """:func:`canary_scores` for a chunk of runs, run r with reference ``references[r]`` and seed ``seeds[r]``."""
    pairs = [canary_scores(g, canary_norm, mechanism, repetitions, seed=s) for g, s in zip(references, seeds)]
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


def canary_audit(
    references,
    canary_norm: float,
    mechanism: Mechanism,
    repetitions: int,
    *,
    execution: Execution,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`canary_scores` for every run: ``references[r]`` are run r's reference gradients.

    Only the sum of a run's reference gradients enters its releases.  Run r draws from the r-th stream
    spawned from ``execution.seed``, whatever the chunking and the backend, so the
    result is the same bits on one core, on ``execution.n_jobs`` local workers, or on the Dask cluster named by
    ``FDP_DASK_SCHEDULER`` (:func:`fdp.parallel.map_runs`); ``execution.chunk`` runs (default :data:`RUNS_PER_TASK`) go
    to a worker at a time.

    Parameters
    ----------
    references : array_like
        (runs, n, d) or (runs, d).
    canary_norm : float
    mechanism : fdp.Mechanism
        One release, as in :func:`canary_scores`.
    repetitions : int
        Releases per hypothesis and run.
    execution : fdp.parallel.Execution

    Returns
    -------
    (scores_h0, scores_h1) : tuple of numpy.ndarray
        Each (runs, repetitions).

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Sec. 5, App. 7.3.

    Examples
    --------
    >>> import numpy as np
    >>> from fdp.parallel import Execution
    >>> from fdp import Mechanism
    >>> s0, s1 = canary_audit(np.zeros((3, 4, 2)), 1.0, Mechanism("gaussian", 1.0), 100, execution=Execution(seed=0))
    >>> s0.shape, s1.shape
    ((3, 100), (3, 100))
    """
    execution = check_execution(execution)
    refs = np.asarray(references, dtype=np.float64)
    if refs.ndim not in (2, 3) or len(refs) == 0:
        raise ValueError(f"references must be (runs, n, d) or (runs, d), got shape {refs.shape}")
    if refs.ndim == 3:  # only the sum of a run's reference gradients enters its releases: ship that
        refs = refs.sum(axis=1)
    canary_scores(refs[0], canary_norm, mechanism, repetitions, seed=0)  # every argument checked here, before any work
    return map_runs(_canary_runs, [refs], seed=execution.seed, chunk=execution.chunk_or(RUNS_PER_TASK),
                    n_jobs=execution.n_jobs, progress=execution.progress, desc="canary audits",
                    canary_norm=canary_norm, mechanism=mechanism, repetitions=repetitions)
