"""A small NumPy DP-SGD that records what the informed adversary observes (Hayes et al. 2023, Sec. 2).

The model is the paper's MLP (App. A): input -> ``hidden`` ELU units -> ``classes`` logits, softmax
cross-entropy; ``hidden = 10`` gives their MNIST model, wider layers the models of App. C.  The
parameters of one model are a flat vector ``theta`` of length :attr:`MLP.size`
(``W1 (hidden x d), b1, W2 (classes x hidden), b2``), and every function here works on a batch of
``R`` independent runs at once: ``theta`` has shape ``(R, P)``.

Per-example gradients are never formed for training: each layer's per-example gradient is an outer
product (``delta x^T`` and ``e h^T``), so its norm is the product of two vector norms and the sum
of clipped gradients is one matrix product with the clipping factors folded in (Goodfellow 2015).
:func:`per_example_gradients` materialises them for tests and small cases.

:func:`train` runs DP-SGD (Abadi et al. 2016; Hayes et al. Sec. 2)::

    g_t = sum_{z in B_t} clip_C(grad l(theta_t, z)) + N(0, sigma^2 C^2 I),
    theta_{t+1} = theta_t - learning_rate * g_t / (q |D|),

with ``clip_C(v) = v / max(1, ||v|| / C)``, the batch ``B_t`` Poisson-sampled with rate ``q``
(``q = 1``: full batch), ``D = D_- + {z*}`` and plain SGD (no momentum).  Each run ``r`` trains on
the same fixed ``D_-`` plus its own target ``z*_r``.  The adversary of Hayes et al. sees the initial
parameters, every privatised gradient ``g_t`` (so every ``theta_t``), ``D_-`` and which of its points
were in each batch; it can therefore compute the known part ``sum_{z in B_t cap D_-} clip_C(...)``
itself.  :func:`train` hands that deterministic function of public quantities to the observer so
that it need not be recomputed (``tests/experiments/test_dpsgd.py`` checks it against a recomputation from the
recorded ``theta_t``).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Callable, Literal

import numpy as np

from ..accounting.privacy_loss import Mechanism, check_mechanism
from ..validation import check_positive, check_positive_int

__all__ = [
    "Training",
    "check_training",
    "MLP",
    "Trace",
    "per_example_factors",
    "raw_factors",
    "elu_parts",
    "softmax",
    "per_example_gradients",
    "clipped_sum",
    "train",
    "accuracy",
    "clip",
]


@dataclass(frozen=True)
class Training:
    """The settings of a DP-SGD (or DP gradient descent) training: what the privacy accounting and the step depend on.

    The privacy side is the :class:`~fdp.Mechanism` the training runs, ``dpsgd(noise_multiplier, sampling_rate,
    steps)``, so that the run and its accounting are one object: each of its ``steps`` steps clips every per-example
    gradient to ``clip_norm``, sums those of a Poisson sample of rate ``sampling_rate`` (1: the full data set), adds
    Gaussian noise of standard deviation ``noise_multiplier * clip_norm`` per coordinate, divides by the expected batch
    size and steps by ``learning_rate`` (Abadi et al. 2016; Hayes et al. Sec. 2).  Checked when built, each error
    naming its field.

    Parameters
    ----------
    mechanism : fdp.Mechanism
        Gaussian noise: the noise multiplier sigma (> 0), the sampling rate q and the steps T.
    clip_norm : float
        C, > 0.
    learning_rate : float
        > 0.

    Examples
    --------
    >>> from fdp import dpsgd
    >>> run = Training(dpsgd(1.0, 0.01, 100), clip_norm=0.1, learning_rate=10.0)
    >>> run.noise_multiplier, run.sampling_rate, run.steps
    (1.0, 0.01, 100)
    """

    mechanism: Mechanism
    _: KW_ONLY
    clip_norm: float
    learning_rate: float

    def __post_init__(self):
        mechanism = check_mechanism(self.mechanism)
        if mechanism.noise != "gaussian":
            raise ValueError(f"mechanism must add Gaussian noise (DP-SGD), got {mechanism.noise} noise")
        object.__setattr__(self, "clip_norm", check_positive("clip_norm", self.clip_norm))
        object.__setattr__(self, "learning_rate", check_positive("learning_rate", self.learning_rate))

    @property
    def noise_multiplier(self) -> float:
        """sigma, the mechanism's."""
        return self.mechanism.noise_multiplier

    @property
    def sampling_rate(self) -> float:
        """q, the mechanism's."""
        return self.mechanism.sampling_rate

    @property
    def steps(self) -> int:
        """T, the mechanism's."""
        return self.mechanism.steps


def check_training(training) -> Training:
    """``training`` if it is a :class:`Training`, else a ValueError naming it.

    Parameters
    ----------
    training : Training

    Returns
    -------
    Training
    """
    if not isinstance(training, Training):
        raise ValueError(f"training must be a fdp.experiments.dpsgd.Training, got {training!r}")
    return training


@dataclass(frozen=True)
class MLP:
    """The MLP of Hayes et al. App. A: ``d -> hidden`` (ELU) ``-> classes`` with softmax cross-entropy.

    Parameters
    ----------
    d : int
        Input dimension.
    hidden : int, default 10
    classes : int, default 10

    References
    ----------
    Hayes et al. (2023) App. A.

    Examples
    --------
    >>> MLP(784).size  # the paper's MNIST model: 784 * 10 + 10 + 10 * 10 + 10 parameters
    7960
    """

    d: int
    hidden: int = 10
    classes: int = 10

    def __post_init__(self):
        for name in ("d", "hidden", "classes"):
            check_positive_int(name, getattr(self, name))
        if self.classes < 2:
            raise ValueError(f"classes must be >= 2, got {self.classes}")

    @property
    def size(self) -> int:
        """Number of parameters P (7,960 for the paper's 784 -> 10 -> 10; 760 for 64 -> 10 -> 10)."""
        return self.hidden * self.d + self.hidden + self.classes * self.hidden + self.classes

    def unpack(self, theta):
        """Views ``W1 (..., h, d), b1 (..., h), W2 (..., K, h), b2 (..., K)`` of ``theta (..., P)``."""
        theta = np.asarray(theta)
        if theta.shape[-1] != self.size:
            raise ValueError(f"theta must have {self.size} entries on its last axis, got shape {theta.shape}")
        h, d, k = self.hidden, self.d, self.classes
        lead = theta.shape[:-1]
        i1 = h * d
        i2 = i1 + h
        i3 = i2 + k * h
        return (
            theta[..., :i1].reshape(lead + (h, d)),
            theta[..., i1:i2],
            theta[..., i2:i3].reshape(lead + (k, h)),
            theta[..., i3:],
        )

    def pack(self, w1, b1, w2, b2) -> np.ndarray:
        """Inverse of :meth:`unpack`."""
        lead = np.shape(b1)[:-1]
        return np.concatenate(
            [np.reshape(w1, lead + (-1,)), b1, np.reshape(w2, lead + (-1,)), b2], axis=-1
        )

    def init(self, runs: int, rng: np.random.Generator) -> np.ndarray:
        """``runs`` independent initialisations (Glorot-uniform weights, zero biases), shape (runs, P)."""
        runs = check_positive_int("runs", runs)
        h, d, k = self.hidden, self.d, self.classes
        a1, a2 = np.sqrt(6.0 / (d + h)), np.sqrt(6.0 / (h + k))
        w1 = rng.uniform(-a1, a1, size=(runs, h, d))
        w2 = rng.uniform(-a2, a2, size=(runs, k, h))
        return self.pack(w1, np.zeros((runs, h)), w2, np.zeros((runs, k)))


def elu_parts(a):
    """The MLP's activation and its derivative, ``(elu(a), elu'(a))``, with one exponential:
    ``elu' = exp(min(a, 0))`` and ``elu = max(a, 0) + elu' - 1``.

    Parameters
    ----------
    a : numpy.ndarray

    Returns
    -------
    (elu, derivative) : tuple of numpy.ndarray

    Examples
    --------
    >>> import numpy as np
    >>> [v.tolist() for v in elu_parts(np.array([-1.0, 2.0]))]
    [[-0.6321205588285577, 2.0], [0.36787944117144233, 1.0]]
    """
    ea = np.exp(np.minimum(a, 0.0))
    h = np.maximum(a, 0.0)
    h += ea
    h -= 1.0
    return h, ea


def _elu(a):
    return elu_parts(a)[0]


def softmax(o, inplace: bool = False):
    """``softmax(o)`` along the last axis (shifted by the maximum), in place on ``o`` if ``inplace``.

    Parameters
    ----------
    o : numpy.ndarray
        Logits.
    inplace : bool, default False
        Overwrite ``o``.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> import numpy as np
    >>> softmax(np.array([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    out = o if inplace else np.array(o, dtype=np.float64)
    out -= out.max(axis=-1, keepdims=True)
    np.exp(out, out=out)
    out /= out.sum(axis=-1, keepdims=True)
    return out


def _softmax_minus_onehot(o, onehot):
    """``softmax(o) - onehot`` along the last axis, in place on ``o``."""
    o = softmax(o, inplace=True)
    o -= onehot
    return o


def _check_theta(model: MLP, theta) -> np.ndarray:
    theta = np.asarray(theta, dtype=np.float64)
    if theta.ndim != 2 or theta.shape[1] != model.size:
        raise ValueError(f"theta must have shape (runs, {model.size}), got {theta.shape}")
    if not np.all(np.isfinite(theta)):
        raise ValueError("theta must be finite (training diverged: lower learning_rate)")
    return theta


def _check_xy(model: MLP, x, y, runs: int, name: str = "x"):
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y)
    if x.ndim not in (2, 3) or x.shape[-1] != model.d:
        raise ValueError(f"{name} must have shape (n, {model.d}) or (runs, n, {model.d}), got {x.shape}")
    if x.ndim == 3 and x.shape[0] != runs:
        raise ValueError(f"{name} has {x.shape[0]} runs on its first axis, theta has {runs}")
    if y.shape != x.shape[:-1]:
        raise ValueError(f"labels must have shape {x.shape[:-1]}, got {y.shape}")
    if not np.issubdtype(y.dtype, np.integer) or y.size and (y.min() < 0 or y.max() >= model.classes):
        raise ValueError(f"labels must be integers in [0, {model.classes - 1}]")
    return x, y


def raw_factors(model: MLP, theta, x, y):
    """Unchecked core of :func:`per_example_factors`, for hot loops whose inputs are checked once.

    Shared ``x (n, d)``: arrays come in the layout (n, R, .) that makes both layer-1 products
    single GEMMs; per-run ``x (R, n, d)``: layout (R, n, .).  Returns ``(delta, e, h, sq)``.

    Parameters
    ----------
    model : MLP
    theta : numpy.ndarray
        (R, P), checked.
    x : numpy.ndarray
        (n, d) or (R, n, d), checked.
    y : numpy.ndarray
        Integer labels, checked.

    Returns
    -------
    (delta, e, h, sq) : tuple of numpy.ndarray
    """
    runs = theta.shape[0]
    hd, d, k = model.hidden, model.d, model.classes
    w1, b1, w2, b2 = model.unpack(theta)
    onehot = np.eye(k)[y]
    if x.ndim == 2:
        a = (x @ w1.reshape(runs * hd, d).T).reshape(x.shape[0], runs, hd)
        a += b1
        h, dh = elu_parts(a)
        o = np.einsum("nrh,rkh->nrk", h, w2, optimize=True)
        o += b2
        e = _softmax_minus_onehot(o, onehot[:, None, :])
        delta = np.einsum("nrk,rkh->nrh", e, w2, optimize=True)
        xsq = np.einsum("nd,nd->n", x, x)[:, None]  # no (n, d) temporary: a third of the time of one run
    else:
        a = np.matmul(x, np.swapaxes(w1, 1, 2))
        a += b1[:, None, :]
        h, dh = elu_parts(a)
        o = np.matmul(h, np.swapaxes(w2, 1, 2))
        o += b2[:, None, :]
        e = _softmax_minus_onehot(o, onehot)
        delta = np.matmul(e, w2)
        xsq = np.einsum("...d,...d->...", x, x)
    delta *= dh
    sq = np.einsum("...h,...h->...", delta, delta) * (xsq + 1.0)
    sq += np.einsum("...k,...k->...", e, e) * (np.einsum("...h,...h->...", h, h) + 1.0)
    return delta, e, h, sq


def per_example_factors(model: MLP, theta, x, y):
    """Forward and backward pass of every example under every run, without forming gradients.

    ``theta (R, P)``; ``x (n, d)`` shared by all runs or ``(R, n, d)``; ``y`` integer labels of the
    same leading shape.  Returns ``(delta, e, h, sq_norm)`` with ``delta (R, n, hidden)`` the
    gradient of the loss at the hidden pre-activations, ``e = softmax - onehot (R, n, classes)``,
    ``h (R, n, hidden)`` the hidden activations and ``sq_norm (R, n)`` the squared L2 norm of each
    per-example gradient: the gradient of example i under run r is
    ``(delta x^T, delta, e h^T, e)`` and ``||g||^2 = |delta|^2 (|x|^2 + 1) + |e|^2 (|h|^2 + 1)``.

    Parameters
    ----------
    model : MLP
    theta : array_like
        (R, P).
    x : array_like
        (n, d) or (R, n, d).
    y : array_like
        Integer labels, (n,) or (R, n).

    Returns
    -------
    (delta, e, h, sq_norm) : tuple of numpy.ndarray

    Examples
    --------
    >>> import numpy as np
    >>> model = MLP(4, hidden=3, classes=2)
    >>> theta = model.init(2, np.random.default_rng(0))
    >>> x, y = np.ones((5, 4)), np.zeros(5, dtype=int)
    >>> sq = per_example_factors(model, theta, x, y)[3]
    >>> bool(np.allclose(sq, (per_example_gradients(model, theta, x, y) ** 2).sum(-1)))
    True
    """
    theta = _check_theta(model, theta)
    x, y = _check_xy(model, x, y, theta.shape[0])
    delta, e, h, sq = raw_factors(model, theta, x, y)
    if x.ndim == 2:
        return delta.transpose(1, 0, 2), e.transpose(1, 0, 2), h.transpose(1, 0, 2), sq.T
    return delta, e, h, sq


def per_example_gradients(model: MLP, theta, x, y) -> np.ndarray:
    """Materialised per-example gradients, shape ``(R, n, P)`` (for tests and small cases).

    Parameters
    ----------
    model : MLP
    theta : array_like
        (R, P).
    x : array_like
        (n, d) or (R, n, d).
    y : array_like
        Integer labels.

    Returns
    -------
    numpy.ndarray
        (R, n, P).
    """
    delta, e, h, _ = per_example_factors(model, theta, x, y)
    x = np.asarray(x, dtype=np.float64)
    xb = np.broadcast_to(x, delta.shape[:2] + (model.d,))
    gw1 = delta[..., :, None] * xb[..., None, :]
    gw2 = e[..., :, None] * h[..., None, :]
    return model.pack(gw1, delta, gw2, e)


def clip(g, clip_norm: float) -> np.ndarray:
    """``clip_C(v) = v / max(1, ||v|| / C)`` along the last axis (Hayes et al. footnote 3).

    Parameters
    ----------
    g : array_like
        Vectors along the last axis.
    clip_norm : float
        C > 0.

    Returns
    -------
    numpy.ndarray

    References
    ----------
    Hayes et al. (2023) footnote 3; Abadi et al. (2016).

    Examples
    --------
    >>> import numpy as np
    >>> clip(np.array([[3.0, 4.0]]), 1.0).round(12).tolist()  # norm 5 scaled down to 1
    [[0.6, 0.8]]
    """
    c = check_positive("clip_norm", clip_norm)
    g = np.asarray(g, dtype=np.float64)
    return g * clip_factors((g * g).sum(axis=-1), c)[..., None]


def clip_factors(sq_norm, clip_norm: float) -> np.ndarray:
    """``min(1, C / ||g||)`` from squared norms."""
    return np.minimum(1.0, clip_norm / np.sqrt(np.maximum(sq_norm, 1e-300)))


def clipped_sum(model: MLP, theta, x, y, clip_norm: float, weights=None):
    """``sum_i w_i clip_C(g_i)`` per run, shape (R, P), and the per-example norms ``(R, n)``.

    ``weights (R, n)`` (e.g. a 0/1 batch mask) multiply the clipped gradients; default all ones.

    Parameters
    ----------
    model : MLP
    theta : array_like
        (R, P).
    x : array_like
        (n, d) or (R, n, d).
    y : array_like
        Integer labels.
    clip_norm : float
        C > 0.
    weights : array_like, optional
        (R, n).

    Returns
    -------
    (total, norms) : tuple of numpy.ndarray
        (R, P) and (R, n).

    References
    ----------
    Hayes et al. (2023) Sec. 2 (the clipped sum of DP-SGD).
    """
    clip_norm = check_positive("clip_norm", clip_norm)
    theta = _check_theta(model, theta)
    x, y = _check_xy(model, x, y, theta.shape[0])
    return _clipped_sum(model, theta, x, y, clip_norm, weights)


def _clipped_sum(model, theta, x, y, clip_norm, weights=None):
    runs = theta.shape[0]
    delta, e, h, sq = raw_factors(model, theta, x, y)
    if x.ndim == 2:  # layout (n, R, .)
        c = clip_factors(sq, clip_norm)
        if weights is not None:
            c *= np.asarray(weights).T
        delta *= c[..., None]
        e *= c[..., None]
        gw1 = (delta.reshape(x.shape[0], -1).T @ x).reshape(runs, model.hidden, model.d)
        gw2 = np.einsum("nrk,nrh->rkh", e, h, optimize=True)
        return model.pack(gw1, delta.sum(0), gw2, e.sum(0)), np.sqrt(sq).T
    c = clip_factors(sq, clip_norm)
    if weights is not None:
        c *= weights
    delta *= c[..., None]
    e *= c[..., None]
    gw1 = np.matmul(np.swapaxes(delta, 1, 2), x)
    gw2 = np.matmul(np.swapaxes(e, 1, 2), h)
    return model.pack(gw1, delta.sum(1), gw2, e.sum(1)), np.sqrt(sq)


@dataclass
class Trace:
    """What a batch of DP-SGD runs produced.

    ``init``/``final`` (R, P); with ``record=True`` also the adversary's view per step:
    ``params`` (T, R, P) = theta_t, ``noisy`` (T, R, P) = privatised gradients g_t, ``known``
    (T, R, P) = the clipped-gradient sum of the ``D_-`` points in the batch, ``masks`` (T, R, m) the
    ``D_-`` batch membership (None for full batch).  ``included`` (T, R) says whether the target was
    in the batch (ground truth, hidden from the adversary).  ``mean_norm`` and ``frac_clipped``
    (T, R) are the mean clipped per-example gradient norm and the fraction of clipped examples in
    each batch (Hayes et al. Fig. 13a).  ``x_known``, ``y_known`` is ``D_-``.

    Attributes
    ----------
    init, final : numpy.ndarray
        (R, P) parameters before and after training.
    x_known, y_known : numpy.ndarray
        ``D_-``.
    included, mean_norm, frac_clipped : numpy.ndarray
        (T, R).
    settings : dict
        The training arguments (``noise_multiplier``, ``clip_norm``, ``steps``, ``learning_rate``,
        ``sampling_rate``, ``hidden``).
    params, noisy, known, masks : numpy.ndarray or None
        The adversary's view (``record=True``).
    """

    init: np.ndarray
    final: np.ndarray
    x_known: np.ndarray
    y_known: np.ndarray
    included: np.ndarray
    mean_norm: np.ndarray
    frac_clipped: np.ndarray
    settings: dict
    params: np.ndarray | None = None
    noisy: np.ndarray | None = None
    known: np.ndarray | None = None
    masks: np.ndarray | None = None


def _gather_known(model, theta, xk, yk, mask, clip_norm):
    """Clipped sums over each run's own sampled ``D_-`` points (padded gather, for small q)."""
    counts = mask.sum(1)
    width = max(int(counts.max()), 1)
    order = np.argsort(~mask, axis=1, kind="stable")[:, :width]
    valid = np.arange(width)[None, :] < counts[:, None]
    xb, yb = xk[order], yk[order]
    total, norms = _clipped_sum(model, theta, xb, yb, clip_norm, valid.astype(np.float64))
    return total, norms, valid


def _training_data(x_known, y_known, x_target, y_target, hidden):
    """The model and the checked arrays ``(model, xk, yk, xt, yt)`` of :func:`train`."""
    xt = np.asarray(x_target, dtype=np.float64)
    if xt.ndim != 2 or xt.shape[0] < 1:
        raise ValueError(f"x_target must have shape (runs, d), got {xt.shape}")
    model = MLP(xt.shape[1], check_positive_int("hidden", hidden))
    runs = xt.shape[0]
    yt = np.asarray(y_target)
    if yt.shape != (runs,):
        raise ValueError(f"y_target must have shape ({runs},), got {yt.shape}")
    xk = np.asarray(x_known, dtype=np.float64).reshape(-1, model.d) if np.size(x_known) else np.zeros((0, model.d))
    yk = np.asarray(y_known, dtype=np.int64).reshape(-1)
    if xk.shape[0] != yk.shape[0]:
        raise ValueError(f"x_known and y_known disagree in length: {xk.shape[0]} and {yk.shape[0]}")
    for name, arr in (("x_known", xk), ("x_target", xt)):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite")
    if xk.shape[0]:
        _check_xy(model, xk, yk, runs, "x_known")
    _check_xy(model, xt, yt, runs, "x_target")
    return model, xk, yk, xt, yt


def _known_gradients(model, theta, xk, yk, mask, clip_norm, method):
    """``(known, norms, valid)``: the clipped gradient sum of the sampled ``D_-`` points of each run (``mask`` None:
    all of them), their norms and which of them count."""
    runs = theta.shape[0]
    if xk.shape[0] == 0:
        return np.zeros_like(theta), np.zeros((runs, 0)), np.zeros((runs, 0), dtype=bool)
    if mask is None:
        known, norms = _clipped_sum(model, theta, xk, yk, clip_norm)
        return known, norms, np.ones(norms.shape, dtype=bool)
    if method == "dense":
        known, norms = _clipped_sum(model, theta, xk, yk, clip_norm, mask.astype(np.float64))
        return known, norms, mask
    return _gather_known(model, theta, xk, yk, mask, clip_norm)


def train(
    x_known,
    y_known,
    x_target,
    y_target,
    training: Training,
    *,
    hidden: int = 10,
    seed=None,
    record: bool = False,
    observer: Callable | None = None,
    method: Literal["auto", "dense", "gather"] = "auto",
) -> Trace:
    """Run ``R = len(x_target)`` DP-SGD trainings at once on ``D_- + {z*_r}`` (Hayes et al. Sec. 2).

    ``x_known (m, d)``, ``y_known (m,)`` is the fixed ``D_-`` shared by all runs (``m = 0`` allowed);
    ``x_target (R, d)``, ``y_target (R,)`` the targets.  ``training`` (:class:`Training`): the noise has standard
    deviation ``noise_multiplier * clip_norm``; ``sampling_rate`` is the Poisson rate q (1 = full batch);
    ``learning_rate`` the SGD step on the gradient averaged over the expected batch ``q (m + 1)``.  ``seed`` (int, SeedSequence or
    Generator) fixes the initialisation, batches and noise.  ``observer(t, theta_t, g_t, known_t)``
    is called at every step with arrays of shape (R, P); ``record=True`` keeps them in the
    :class:`Trace` (memory ``3 T R P`` floats).  ``method``: "dense" evaluates every ``D_-`` point and
    masks (fast for large q), "gather" evaluates only the sampled ones, "auto" picks by q.

    Parameters
    ----------
    x_known, y_known : array_like
        ``D_-``, (m, d) and (m,).
    x_target, y_target : array_like
        One target per run, (R, d) and (R,).
    training : Training
    hidden : int, default 10
        Width of the MLP's hidden layer.
    seed : int, SeedSequence or Generator, optional
    record : bool, default False
    observer : callable, optional
    method : {"auto", "dense", "gather"}, default "auto"

    Returns
    -------
    Trace

    References
    ----------
    Hayes et al. (2023) Sec. 2, App. A; Abadi et al. (2016).

    Examples
    --------
    >>> import numpy as np
    >>> x, y = np.random.default_rng(0).random((3, 8)), np.array([1, 2, 3])
    >>> from fdp import dpsgd
    >>> run = Training(dpsgd(1.0, 1.0, 5), clip_norm=0.1, learning_rate=1.0)
    >>> trace = train(x[:2], y[:2], x[2:], y[2:], run, seed=0)
    >>> trace.final.shape, trace.settings["noise_multiplier"]
    ((1, 200), 1.0)
    """
    training = check_training(training)
    sigma, clip_norm, steps = training.noise_multiplier, training.clip_norm, training.steps
    learning_rate, q = training.learning_rate, training.sampling_rate
    if method not in ("auto", "dense", "gather"):
        raise ValueError(f"method must be 'auto', 'dense' or 'gather', got {method!r}")
    model, xk, yk, xt, yt = _training_data(x_known, y_known, x_target, y_target, hidden)
    runs, m = xt.shape[0], xk.shape[0]
    if method == "auto":
        method = "dense" if q >= 0.25 else "gather"
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    theta = model.init(runs, rng)
    init = theta.copy()
    scale = 1.0 / (q * (m + 1))
    rec = {k: [] for k in ("params", "noisy", "known", "masks")} if record else None
    included = np.zeros((steps, runs), dtype=bool)
    mean_norm = np.zeros((steps, runs))
    frac = np.zeros((steps, runs))
    for t in range(steps):
        if q < 1.0:
            mask = rng.random((runs, m)) < q
            inc = rng.random(runs) < q
        else:
            mask, inc = None, np.ones(runs, dtype=bool)
        known, norms, valid = _known_gradients(model, theta, xk, yk, mask, clip_norm, method)
        tgt, tnorm = _clipped_sum(model, theta, xt[:, None, :], yt[:, None], clip_norm)
        noise = rng.standard_normal(theta.shape) * (sigma * clip_norm)
        g = known + inc[:, None] * tgt + noise
        cn = np.minimum(norms, clip_norm)
        cnt = valid.sum(1) + inc
        mean_norm[t] = ((cn * valid).sum(1) + inc * np.minimum(tnorm[:, 0], clip_norm)) / np.maximum(cnt, 1)
        frac[t] = (((norms > clip_norm) & valid).sum(1) + inc * (tnorm[:, 0] > clip_norm)) / np.maximum(cnt, 1)
        included[t] = inc
        if observer is not None:
            observer(t, theta, g, known)
        if record:
            rec["params"].append(theta.copy())
            rec["noisy"].append(g)
            rec["known"].append(known)
            rec["masks"].append(mask)
        theta = theta - learning_rate * scale * g
        if not np.all(np.isfinite(theta)):
            raise ValueError(f"training diverged at step {t} (learning_rate={learning_rate} too large)")
    settings = dict(noise_multiplier=sigma, clip_norm=clip_norm, steps=steps, learning_rate=learning_rate, sampling_rate=q,
                    hidden=model.hidden)
    trace = Trace(init, theta, xk, yk, included, mean_norm, frac, settings)
    if record:
        trace.params = np.array(rec["params"])
        trace.noisy = np.array(rec["noisy"])
        trace.known = np.array(rec["known"])
        trace.masks = None if q == 1.0 else np.array(rec["masks"])
    return trace


def accuracy(theta, x, y) -> np.ndarray:
    """Accuracy of each run's model ``theta (R, P)`` on ``(x, y)``, shape (R,).

    Parameters
    ----------
    theta : array_like
        (R, P) of an :class:`MLP` with 10 classes (the hidden width follows from P and d).
    x : array_like
        (n, d).
    y : array_like
        Integer labels, (n,).

    Returns
    -------
    numpy.ndarray
        (R,).
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"x must have shape (n, d), got {x.shape}")
    theta = np.atleast_2d(np.asarray(theta, dtype=np.float64))
    model = MLP(x.shape[1], _hidden_from_size(theta.shape[1], x.shape[1]))
    w1, b1, w2, b2 = model.unpack(_check_theta(model, theta))
    h = _elu(np.einsum("nd,rhd->rnh", x, w1, optimize=True) + b1[:, None, :])
    o = np.matmul(h, np.swapaxes(w2, 1, 2)) + b2[:, None, :]
    return (o.argmax(-1) == np.asarray(y)[None, :]).mean(1)


def _hidden_from_size(size: int, d: int, classes: int = 10) -> int:
    hidden, rem = divmod(size - classes, d + 1 + classes)
    if rem or hidden < 1:
        raise ValueError(f"theta of size {size} is no MLP with d={d} and {classes} classes")
    return hidden
