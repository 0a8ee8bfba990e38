"""The reconstruction game of Hayes et al. (2023) played with real DP-SGD runs.

An informed adversary knows ``D_-`` and a discrete prior of n candidates; the target z* is drawn
uniformly from the prior, DP-SGD trains on ``D_- + {z*}`` and the adversary sees every
intermediate model and privatised gradient.  Reconstruction succeeds when its guess is z*.  The
ReRo bound (``fdp.curves.rero``) says no adversary succeeds with probability above ``gamma(1/n)``.

* :func:`prior_game` -- many games at once (vectorised DP-SGD runs, chunks in parallel with
  joblib), scored by the prior-aware attacks of :mod:`fdp.experiments.attacks`: Alg. 2, Alg. 3, the
  likelihood attack of App. G, and Alg. 2 without subtracting the known gradients (App. E).
* :func:`gradient_reconstructions` -- the prior-oblivious gradient-based attack (eq. 1,
  :mod:`fdp.experiments.inversion`) on full-batch runs, a chunk of targets per joblib task.
* :func:`nearest_prior_success` -- App. D / footnote 5: a free-form reconstruction counts as a
  success when the target is its nearest point in a random prior; :func:`nearest_prior_rate` its rate
  with an interval over targets.
* :func:`fraction_within` -- App. I: the fraction of a reconstruction's coordinates within a radius of
  the target's (success when it reaches rho).
* :func:`full_batch_noise` and :func:`success_bound` -- the noise of a full-batch run at (epsilon, delta) and the
  ReRo bound of a game's training run, the reference every measured success is compared with.
* :func:`nearest_neighbour_mse`, :func:`uniform_noise_mse` and :func:`class_correlation` -- the baselines and the
  diagnostic that Figure 1's reconstruction errors are read against.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from joblib import delayed

from ..accounting import pld
from ..accounting.privacy_loss import Mechanism
from ..curves import gdp, rero, tradeoff
from ..parallel import Execution, check_execution, children, chunks, run
from ..validation import check_discretization, check_open_unit, check_positive, check_positive_int, spelled
from . import attacks, dpsgd, inversion

__all__ = ["ATTACKS", "GameResult", "check_split", "prior_game", "gradient_reconstructions", "nearest_prior_success",
           "nearest_prior_rate", "fraction_within", "full_batch_noise", "success_bound", "nearest_neighbour_mse",
           "uniform_noise_mse", "class_correlation"]

#: attack name -> what it is (keys of ``GameResult.success``)
ATTACKS = {
    "prior-aware": "Alg. 2: largest sum of inner products over all steps",
    "improved": "Alg. 3: largest sum of the top qT inner products",
    "likelihood": "App. G: largest log-likelihood of the observed gradients",
    "no subtraction": "Alg. 2 without subtracting the known gradients (App. E)",
}


@dataclass
class GameResult:
    """Outcome of :func:`prior_game`: per-attack success indicators (trials, prior sizes) and diagnostics.

    ``mean_norm`` is the mean clipped per-example gradient norm over all batches and steps,
    ``frac_clipped`` the fraction of per-example gradients that were clipped (Hayes et al.
    Fig. 13a), ``accuracy`` the mean training accuracy of the final models on ``D_-``.

    Attributes
    ----------
    success : dict
        Attack name -> (trials, prior sizes) booleans.
    prior_sizes : list of int
    mean_norm, frac_clipped, accuracy : float
    settings : dict
        The game's arguments.
    """

    success: dict
    prior_sizes: list
    mean_norm: float
    frac_clipped: float
    accuracy: float
    settings: dict = field(default_factory=dict)

    @property
    def trials(self) -> int:
        return len(next(iter(self.success.values())))

    def rate(self, attack: str, prior_size: int | None = None, confidence: float = 0.95) -> attacks.Proportion:
        """Success probability of ``attack`` at ``prior_size`` (default: the only or first size)
        with its Clopper-Pearson interval ``(rate, low, high)``."""
        if attack not in self.success:
            raise ValueError(f"attack must be one of {sorted(self.success)}, got {attack!r}")
        size = self.prior_sizes[0] if prior_size is None else prior_size
        if size not in self.prior_sizes:
            raise ValueError(f"prior_size must be one of {self.prior_sizes}, got {prior_size}")
        return attacks.success_rate(self.success[attack][:, self.prior_sizes.index(size)], confidence)


def check_split(images: int, known: dict, draws: dict) -> None:
    """Refuse an experiment design that the data cannot hold, before any game runs.

    The images are split into a known training set D- and a pool that priors and targets are drawn from.

    Parameters
    ----------
    images : int
        Number of images in the data set.
    known : dict
        ``{name: size or list of sizes}`` of known sets D-; each must leave at least 2 images for the pool.
    draws : dict
        ``{name: (count or list of counts, known size[, reserved])}``: what is drawn from the pool left by a known set
        of that size (a prior's candidates, or targets), with ``reserved`` images of the pool kept for something else
        (the priors of those targets); each must fit.

    Raises
    ------
    ValueError
        Naming the caller's parameter (the keys of ``known`` and ``draws``).

    Examples
    --------
    >>> check_split(100, {"known_size": 90}, {"prior_size": (10, 90)})
    >>> check_split(100, {"known_size": 90}, {"prior_size": (11, 90)})
    Traceback (most recent call last):
    ...
    ValueError: prior_size must be at most 10 (the pool: 100 images less 90 known), got 11
    """
    for name, sizes in known.items():
        for m in np.atleast_1d(sizes):
            if images - m < 2:
                raise ValueError(f"{name} leaves fewer than 2 of the {images} images for the pool, got {m}")
    for name, (counts, known_size, *reserved) in draws.items():
        room = images - known_size - sum(reserved)
        too_big = [c for c in np.atleast_1d(counts) if c > room]
        if too_big:
            kept = f" less {sum(reserved)} kept for the other candidates of their priors" if reserved else ""
            raise ValueError(f"{name} must be at most {room} (the pool: {images} images less {known_size} known{kept}), "
                             f"got {int(too_big[0])}")


def _check_data(x_known, y_known, x_pool, y_pool):
    xk = np.asarray(x_known, dtype=np.float64).reshape(len(y_known), -1) if len(y_known) else None
    xp = np.asarray(x_pool, dtype=np.float64)
    if xp.ndim != 2 or len(xp) != len(y_pool) or len(xp) == 0:
        raise ValueError(f"x_pool must be (m, d) with one label each, got {xp.shape} and {len(y_pool)} labels")
    if xk is not None and xk.shape[1] != xp.shape[1]:
        raise ValueError("x_known and x_pool must have the same number of features")
    return (xk if xk is not None else np.zeros((0, xp.shape[1]))), np.asarray(y_known, dtype=np.int64), xp, np.asarray(y_pool, dtype=np.int64)


def _game_chunk(xk, yk, xp, yp, runs, sizes, training, hidden, seed_seq):
    rng = np.random.default_rng(seed_seq)
    # Candidate 0 is the target, drawn uniformly from the pool; candidates 1..n-1 are distinct other pool
    # images.  By exchangeability the target is uniform within every prefix of size n, so one training
    # run serves all (nested) prior sizes.
    order = np.argsort(rng.random((runs, len(xp))), axis=1)[:, : max(sizes)]
    x_prior, y_prior = xp[order], yp[order]
    model = dpsgd.MLP(xp.shape[1], hidden)
    obs = attacks.PriorObserver(model, x_prior, y_prior, training.clip_norm, training.steps)
    trace = dpsgd.train(xk, yk, x_prior[:, 0], y_prior[:, 0], training, hidden=hidden, observer=obs, seed=rng)
    q = training.sampling_rate
    success = {k: np.zeros((runs, len(sizes)), dtype=bool) for k in ATTACKS}
    for j, n in enumerate(sizes):
        inner, sq, known = obs.inner[:, :n], obs.sq[:, :n], obs.inner_known[:, :n]
        # the target is candidate 0: ties (e.g. duplicate images) are broken at random, never in its favour
        success["prior-aware"][:, j] = attacks.prior_aware_guess(inner, rng) == 0
        success["improved"][:, j] = attacks.top_steps_guess(inner, q, rng) == 0
        success["likelihood"][:, j] = attacks.log_likelihood_guess(inner, sq, training, rng) == 0
        success["no subtraction"][:, j] = attacks.prior_aware_guess(inner + known, rng) == 0
    acc = dpsgd.accuracy(trace.final, xk, yk).mean() if len(yk) else np.nan
    return success, trace.mean_norm.mean(), trace.frac_clipped.mean(), acc


def prior_game(
    x_known,
    y_known,
    x_pool,
    y_pool,
    training: dpsgd.Training,
    *,
    prior_sizes,
    trials: int,
    hidden: int = 10,
    execution: Execution,
) -> GameResult:
    """Play ``trials`` reconstruction games for each prior size in ``prior_sizes`` (int or list).

    ``(x_known, y_known)`` is ``D_-``, fixed for all games; each game draws its target uniformly
    from ``(x_pool, y_pool)`` (which must not overlap ``D_-``) and its prior from the target and
    distinct other pool images (nested across sizes), and trains DP-SGD (``training``) on ``D_- + {z*}``.  Games run
    in vectorised chunks of ``execution.chunk`` runs (default 200), chunks in parallel over ``execution.n_jobs``
    joblib workers, each with its own random stream spawned from ``execution.seed``; ``execution.progress`` shows a
    tqdm bar over chunks.

    Parameters
    ----------
    x_known, y_known : array_like
        ``D_-``.
    x_pool, y_pool : array_like
        Where targets and priors are drawn.
    prior_sizes : int or list of int
        Each in [2, pool size].
    trials : int
    training : fdp.experiments.dpsgd.Training
    hidden : int, default 10
        Width of the MLP's hidden layer.
    execution : fdp.parallel.Execution

    Returns
    -------
    GameResult

    References
    ----------
    Hayes et al. (2023) Sec. 3.4, Algs. 2-3, Apps. E-G.
    """
    xk, yk, xp, yp = _check_data(x_known, y_known, x_pool, y_pool)
    sizes = [check_positive_int("prior_sizes", n) for n in np.atleast_1d(prior_sizes).tolist()]
    if not sizes or min(sizes) < 2 or max(sizes) > len(xp):
        raise ValueError(f"prior_sizes must lie between 2 and the pool size {len(xp)}, got {prior_sizes}")
    trials = check_positive_int("trials", trials)
    training, execution = dpsgd.check_training(training), check_execution(execution)
    hidden = check_positive_int("hidden", hidden)
    parts = chunks(trials, execution.chunk_or(200), execution.seed)
    counts = [r for r, _ in parts]
    tasks = (delayed(_game_chunk)(xk, yk, xp, yp, r, sizes, training, hidden, s) for r, s in parts)
    out = run(tasks, execution.n_jobs, total=len(counts), progress=execution.progress,
              desc=f"games (noise multiplier {training.noise_multiplier:.3g})")
    train_kw = dict(noise_multiplier=training.noise_multiplier, clip_norm=training.clip_norm, steps=training.steps,
                    learning_rate=training.learning_rate, sampling_rate=training.sampling_rate, hidden=hidden)
    w = np.array(counts, dtype=float) / trials
    return GameResult(
        success={k: np.concatenate([o[0][k] for o in out]) for k in ATTACKS},
        prior_sizes=sizes,
        mean_norm=float(np.dot(w, [o[1] for o in out])),
        frac_clipped=float(np.dot(w, [o[2] for o in out])),
        accuracy=float(np.dot(w, [o[3] for o in out])),
        settings=dict(trials=trials, known=len(yk), **train_kw),
    )


def _invert_chunk(xk, yk, xt, yt, training, hidden, attack_kw, seed_seq):
    train_seed, attack_seed = children(seed_seq, 2)
    trace = dpsgd.train(xk, yk, xt, yt, training, hidden=hidden, seed=np.random.default_rng(train_seed), record=True)
    # the adversary's view, per target: theta_t and g_t minus the known points' clipped gradients (Sec. 2)
    objective = inversion.Eq1(dpsgd.MLP(xt.shape[1], hidden), trace.params.transpose(1, 0, 2),
                              (trace.noisy - trace.known).transpose(1, 0, 2), yt, training.clip_norm)
    found = inversion.invert(objective, seed=attack_seed, **attack_kw)
    return replace(found, target_loss=objective(xt[:, None, :])[0][:, 0])


def gradient_reconstructions(
    x_known,
    y_known,
    x_targets,
    y_targets,
    training: dpsgd.Training,
    *,
    hidden: int = 10,
    search: inversion.Search | None = None,
    execution: Execution,
) -> inversion.Inversion:
    """Full-batch DP-SGD on ``D_- + {z*_r}`` for every target r, then the eq. (1) attack on each run.

    The targets go out in chunks (``execution.chunk``, default 5): each chunk trains its runs and attacks them
    together (:func:`fdp.experiments.inversion.invert`), with its own random stream, so the chunking, not the number
    of workers, fixes the bits.

    Parameters
    ----------
    x_known, y_known : array_like
        ``D_-``.
    x_targets, y_targets : array_like
        (R, d) and (R,).
    training : fdp.experiments.dpsgd.Training
        Full batches (``sampling_rate`` 1), as the attack of eq. (1) assumes.
    hidden : int, default 10
    search : fdp.experiments.inversion.Search, optional
        The attack's settings (:func:`fdp.experiments.inversion.invert`; default ``Search()``).
    execution : fdp.parallel.Execution
        Its ``seed``, ``chunk``, ``n_jobs`` and ``progress`` (one task per chunk).

    Returns
    -------
    fdp.experiments.inversion.Inversion
        Reconstructions (R, d), their losses, and each chunk's iterations and convergence.

    References
    ----------
    Hayes et al. (2023) Sec. 2, eq. 1, Fig. 1.
    """
    xt = np.asarray(x_targets, dtype=np.float64)
    yt = np.asarray(y_targets)
    if xt.ndim != 2 or yt.shape != xt.shape[:1] or len(xt) == 0:
        raise ValueError(f"x_targets must be (R, d) with R >= 1 and y_targets (R,), got shapes {xt.shape} and {yt.shape}")
    if not np.all((xt >= 0.0) & (xt <= 1.0)):
        raise ValueError("x_targets must lie in [0, 1], the box the attack searches")
    training, execution = dpsgd.check_training(training), check_execution(execution)
    if training.sampling_rate != 1.0:
        raise ValueError(f"training.sampling_rate must be 1 (full batches) for the gradient attack, got {training.sampling_rate}")
    xk, yk = np.asarray(x_known, dtype=np.float64), np.asarray(y_known)
    if search is None:
        search = inversion.Search()
    if not isinstance(search, inversion.Search):
        raise ValueError(f"search must be a fdp.experiments.inversion.Search, got {search!r}")
    kw = search.keywords()
    parts = chunks(len(xt), execution.chunk_or(5), execution.seed)
    starts = np.cumsum([0] + [size for size, _ in parts])
    tasks = (delayed(_invert_chunk)(xk, yk, xt[lo:lo + size], yt[lo:lo + size], training, hidden, kw, s)
             for lo, (size, s) in zip(starts, parts))
    out = run(tasks, execution.n_jobs, total=len(parts), progress=execution.progress, desc="gradient attacks")
    return inversion.Inversion.concatenate(out)


def nearest_prior_success(reconstructions, targets, pool, prior_size: int, priors: int, *, seed) -> np.ndarray:
    """App. D: success rate of free-form reconstructions turned into guesses from random priors.

    For each reconstruction r, ``priors`` random priors are formed from its target and
    ``prior_size - 1`` distinct images of ``pool`` (which must not contain the targets); the
    guess is the prior point nearest to the reconstruction in L2.  Returns the success
    indicators, shape (R, priors).

    Parameters
    ----------
    reconstructions, targets : array_like
        (R, d).
    pool : array_like
        (m, d), without the targets.
    prior_size : int
    priors : int
        Random priors per reconstruction.
    seed : int or numpy.random.SeedSequence

    Returns
    -------
    numpy.ndarray
        (R, priors) booleans.

    References
    ----------
    Hayes et al. (2023) App. D, footnote 5.

    Examples
    --------
    >>> import numpy as np
    >>> pool = np.eye(4)[1:]
    >>> nearest_prior_success(np.eye(4)[:1], np.eye(4)[:1], pool, 3, 2, seed=0).tolist()  # exact: always nearest
    [[True, True]]
    """
    rec = np.asarray(reconstructions, dtype=np.float64)
    tgt = np.asarray(targets, dtype=np.float64)
    pool = np.asarray(pool, dtype=np.float64)
    prior_size = check_positive_int("prior_size", prior_size)
    if prior_size < 2 or prior_size - 1 > len(pool):
        raise ValueError(f"prior_size must be between 2 and {len(pool) + 1}, got {prior_size}")
    priors = check_positive_int("priors", priors)
    rng = np.random.default_rng(seed)
    d_target = ((rec - tgt) ** 2).sum(-1)  # (R,)
    out = np.empty((len(rec), priors), dtype=bool)
    # a few reconstructions at a time: the random orders are (R, priors, m) numbers; the generator's stream is the
    # same whatever the block size, so the result is too
    block = max(1, int(2e7 // (len(pool) * max(priors, rec.shape[1]))))
    for i in range(0, len(rec), block):
        r = rec[i:i + block]
        d_pool = ((r[:, None, :] - pool[None, :, :]) ** 2).sum(-1)  # (b, m)
        picks = np.argsort(rng.random((len(r), priors, len(pool))), axis=-1)[..., : prior_size - 1]
        nearest_other = np.take_along_axis(d_pool[:, None, :], picks, axis=-1).min(axis=-1)
        out[i:i + block] = d_target[i:i + block, None] < nearest_other
    return out


def nearest_prior_rate(successes, confidence: float = 0.95) -> attacks.Proportion:
    """The App. D success rate over targets, with a conservative interval over the targets.

    The targets are the independent units (the random priors of one target share its reconstruction), so the
    interval is one for the mean of the per-target rates ``successes.mean(axis=1)``, values in [0, 1].  For a given
    mean, such values vary most when each is 0 or 1; the interval is the Clopper-Pearson interval of that case, ``R``
    targets with ``R x rate`` successes (a real count, through the beta quantiles).  Student's t, which trusts the
    sample's own spread, covers far too rarely when most targets sit at 0 and a few at 1, as near chance they do.

    Parameters
    ----------
    successes : array_like of bool
        (R, priors) of :func:`nearest_prior_success`, R >= 1 targets, priors >= 1.
    confidence : float, default 0.95

    Returns
    -------
    fdp.experiments.attacks.Proportion

    Examples
    --------
    >>> nearest_prior_rate([[True, True], [False, False], [True, False]]).estimate
    0.5
    """
    ok = np.asarray(successes)
    if ok.dtype != bool or ok.ndim != 2 or ok.size == 0:
        raise ValueError(f"successes must be a non-empty (targets, priors) array of booleans, got {ok.dtype} of shape {ok.shape}")
    # the targets' rates, summed: a real number of successes out of R
    return attacks.clopper_pearson(min(float(ok.mean(axis=1).sum()), len(ok)), len(ok), confidence)


def fraction_within(reconstructions, targets, radius: float) -> np.ndarray:
    """App. I: the fraction of each reconstruction's coordinates that lie strictly within ``radius`` of its target's.

    Hayes et al. count a reconstruction as a success when this fraction is at least ``rho`` (radius 32/255);
    :func:`fdp.curves.rero.log_kappa_box` gives the prior probability of that event.

    Parameters
    ----------
    reconstructions, targets : array_like
        (R, d).
    radius : float
        > 0.

    Returns
    -------
    numpy.ndarray
        (R,) fractions in [0, 1].

    References
    ----------
    Hayes et al. (2023) App. I, Fig. 12.

    Examples
    --------
    >>> fraction_within([[0.0, 0.5, 1.0, 0.2]], [[0.1, 0.5, 0.0, 0.2]], 32 / 255).tolist()
    [0.75]
    """
    rec = np.asarray(reconstructions, dtype=np.float64)
    tgt = np.asarray(targets, dtype=np.float64)
    if rec.ndim != 2 or rec.shape != tgt.shape:
        raise ValueError(f"reconstructions and targets must both be (R, d), got {rec.shape} and {tgt.shape}")
    radius = check_positive("radius", radius)
    return (np.abs(rec - tgt) < radius).mean(axis=1)


def full_batch_noise(epsilon: float, delta: float, steps: int) -> float:
    """The noise multiplier of full-batch DP-SGD with ``steps`` steps that is (epsilon, delta)-DP, to 1e-10 relative.

    Full-batch DP-SGD with T steps and noise multiplier sigma is exactly sqrt(T)/sigma-GDP (Dong et al. 2022), so
    sigma = sqrt(T) / mu(epsilon, delta).  ``mu`` is the root of the GDP profile as
    :func:`fdp.curves.gdp.mu_from_eps_delta` finds it, at or just above the true root: the noise can lie up to
    about 1e-10 relative below the exact one.  Made for experiments at a given privacy level (the book's
    reconstruction games), not for certifying a release (:mod:`fdp.calibrate` does that, on the safe side).

    Parameters
    ----------
    epsilon : float
        > 0.
    delta : float
        In [1e-300, 1) (below, the profile cannot be inverted to this accuracy).
    steps : int
        >= 1.

    Returns
    -------
    float

    Examples
    --------
    >>> round(full_batch_noise(1.0, 1e-5, 1), 4)
    3.7306
    """
    steps = check_positive_int("steps", steps)
    epsilon = check_positive("epsilon", epsilon)
    if not 1e-300 <= check_open_unit("delta", delta):
        raise ValueError(f"{spelled('delta')} must be at least 1e-300 (a smaller one cannot be inverted accurately), got {delta!r}")
    return float(np.sqrt(steps) / gdp.mu_from_eps_delta(epsilon, delta))


def success_bound(result: GameResult, prior_size: int | None = None, discretization: float = 1e-3) -> float:
    """An upper bound on the success of any attack in the games of ``result``: ``gamma = 1 - f(1/n)``.

    For full batch ``f`` is the Gaussian curve of mu = sqrt(T)/sigma, and gamma is its closed form moved up past its
    float error (:func:`fdp.curves.tradeoff.gaussian_power_bounds`); under Poisson sampling ``f`` is the pessimistic
    (connect-the-dots) PLD curve of the "add" direction, which lies below the true curve, so the gamma it gives is an
    upper bound.  A prior of one candidate gives 1.

    Parameters
    ----------
    result : GameResult
        Its ``settings`` hold the training run's noise_multiplier, sampling_rate and steps.
    prior_size : int, optional
        n >= 1 (default: the game's first prior size).
    discretization : float, default 1e-3
        The PLD grid under sampling.

    Returns
    -------
    float

    References
    ----------
    Hayes et al. (2023) Cor. 4.
    """
    s = result.settings
    mechanism = Mechanism("gaussian", s["noise_multiplier"], s["sampling_rate"], s["steps"])  # checks the settings
    if prior_size is None:
        if not result.prior_sizes:
            raise ValueError("result has no prior size: pass prior_size")
        prior_size = result.prior_sizes[0]
    n = check_positive_int("prior_size", prior_size)
    if n == 1:
        return 1.0
    kappa = 1.0 / n
    if mechanism.sampling_rate == 1.0:
        return float(max(tradeoff.gaussian_power_bounds(mechanism.full_batch_mu, kappa)[1][0], kappa))
    dist = pld.mechanism_pld(mechanism, discretization=check_discretization("discretization", discretization))
    return float(rero.gamma(pld.tradeoff_curve(dist, "add"), kappa))


def _images(name: str, images, least: int = 2, unit: bool = False) -> np.ndarray:
    x = np.asarray(images, dtype=np.float64)
    if x.ndim != 2 or len(x) < least or x.shape[1] == 0:
        raise ValueError(f"{name} must be an (N, d) array with N >= {least} and d >= 1, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite")
    if unit and (x.min() < 0.0 or x.max() > 1.0):
        raise ValueError(f"{name} must lie in [0, 1], got values from {x.min()!r} to {x.max()!r}")
    return x


def nearest_neighbour_mse(images) -> float:
    """Hayes et al.'s nearest-neighbour baseline: the mean over images of the MSE to the nearest other image.

    Pairwise distances through ``|a|^2 + |b|^2 - 2 a.b`` of the centred images (no (N, N, d) array; centring keeps
    the cancellation small when the images share a large offset).  Memory: one (N, N) array.

    Parameters
    ----------
    images : array_like
        (N, d), N >= 2.

    Returns
    -------
    float

    Examples
    --------
    >>> nearest_neighbour_mse([[0.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    0.5
    """
    x = _images("images", images)
    x = x - x.mean(axis=0)
    sq = (x**2).sum(axis=1)
    d2 = (sq[:, None] + sq[None, :] - 2.0 * x @ x.T) / x.shape[1]
    np.fill_diagonal(d2, np.inf)
    return float(np.maximum(d2.min(axis=1), 0.0).mean())


def uniform_noise_mse(images) -> float:
    """The expected MSE of uniform noise on [0, 1]^d scored against ``images``: E(U - x)^2 = x^2 - x + 1/3.

    Parameters
    ----------
    images : array_like
        (N, d) in [0, 1], N >= 1.

    Returns
    -------
    float

    Examples
    --------
    >>> round(uniform_noise_mse([[0.0, 1.0], [0.5, 0.5]]), 4)
    0.2083
    """
    x = _images("images", images, least=1, unit=True)
    return float(np.mean(x**2 - x + 1.0 / 3.0))


def class_correlation(reconstructions, labels, images, image_labels) -> float:
    """The mean correlation of each reconstruction with its class's mean image minus the mean of all ``images``.

    Negative: the reconstructions look unlike their own class (Figure 1's diagnostic of the small-epsilon regime).

    Parameters
    ----------
    reconstructions : array_like
        (R, d).
    labels : array_like
        (R,) the targets' classes, each present in ``image_labels``.
    images, image_labels : array_like
        (N, d) and (N,): the images the class means come from.

    Returns
    -------
    float

    Examples
    --------
    >>> round(class_correlation([[1.0, 0.0, 1.0]], [0], [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]], [0, 1]), 12)
    1.0
    """
    rec, x = _images("reconstructions", reconstructions, least=1), _images("images", images)
    y, yx = np.asarray(labels), np.asarray(image_labels)
    if rec.shape[1] != x.shape[1] or y.shape != (len(rec),) or yx.shape != (len(x),):
        raise ValueError(f"reconstructions (R, d) with R labels and images (N, d) with N labels expected, got "
                         f"{rec.shape}, {y.shape}, {x.shape}, {yx.shape}")
    missing = sorted(set(y.tolist()) - set(yx.tolist()))
    if missing:
        raise ValueError(f"labels {missing} have no image in image_labels")
    shape = {c: x[yx == c].mean(axis=0) - x.mean(axis=0) for c in set(y.tolist())}
    if any(np.ptp(v) == 0 for v in [*shape.values(), *rec]):
        raise ValueError("the correlation is undefined for a constant reconstruction or class mean image")
    return float(np.mean([np.dot(_unit(r), _unit(shape[c])) for r, c in zip(rec, y.tolist())]))


def _unit(v: np.ndarray) -> np.ndarray:
    """``v`` centred and scaled to norm 1, through its largest entry first (no underflow or overflow)."""
    v = v - v.mean()
    v = v / np.abs(v).max()
    return v / np.linalg.norm(v)
