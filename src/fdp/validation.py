"""Argument checks shared by the whole package.

Every public function validates its inputs with these helpers, so that bad input raises a
``ValueError`` naming the argument, the offending value and the accepted range, instead of
returning NaN or silently clamping.
"""

from __future__ import annotations

import contextvars
import importlib
import numbers
from contextlib import contextmanager

import numpy as np

__all__ = [
    "EPS_MAX",
    "optional_import",
    "check_eps",
    "check_positive",
    "check_nonnegative",
    "check_open_unit",
    "check_probability",
    "check_sampling_rate",
    "check_subsampled_range",
    "check_discretization",
    "check_positive_int",
    "check_array_in",
    "as_real_array",
    "check_seed",
    "ResourceLimitError",
    "spelled",
    "spelled_as",
]

#: How the caller spells each parameter's name (set by :func:`spelled_as`; empty: the library's own names).
_SPELLING = contextvars.ContextVar("fdp_spelling", default={})


@contextmanager
def spelled_as(names: dict[str, str]):
    """Within the block, error messages name the parameters of ``names`` as the caller spells them.

    A caller that takes the library's parameters under other names (the command line's flags, a notebook's
    parameters) says so once, and every message of the package that names one of those parameters uses the caller's
    name: the message is written that way, never rewritten afterwards.

    Parameters
    ----------
    names : dict of str to str
        The library's parameter name to the caller's (``{"noise_multiplier": "--noise-multiplier"}``).

    Returns
    -------
    contextlib.AbstractContextManager

    Examples
    --------
    >>> with spelled_as({"steps": "--steps"}):
    ...     check_positive_int("steps", 0)
    Traceback (most recent call last):
    ...
    ValueError: --steps must be an integer >= 1, got 0
    """
    token = _SPELLING.set({**_SPELLING.get(), **names})
    try:
        yield
    finally:
        _SPELLING.reset(token)


def spelled(name: str) -> str:
    """``name`` as the caller spells it (:func:`spelled_as`), for an error message.

    Parameters
    ----------
    name : str
        The library's name of a parameter.

    Returns
    -------
    str

    Examples
    --------
    >>> spelled("noise_multiplier")
    'noise_multiplier'
    """
    return _SPELLING.get().get(name, name)


def _as_float(name: str, value) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{spelled(name)} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{spelled(name)} must be finite, got {value!r}")
    return value


def check_positive(name: str, value) -> float:
    """Return ``value`` as float if it is finite and > 0, else raise ValueError.

    Parameters
    ----------
    name : str
        The parameter's name, for the message.
    value : float

    Returns
    -------
    float

    Examples
    --------
    >>> check_positive("noise_multiplier", 0.0)
    Traceback (most recent call last):
    ...
    ValueError: noise_multiplier must be > 0, got 0.0
    """
    value = _as_float(name, value)
    if value <= 0:
        raise ValueError(f"{spelled(name)} must be > 0, got {value!r}")
    return value


def check_nonnegative(name: str, value) -> float:
    """Return ``value`` as float if it is finite and >= 0, else raise ValueError.

    Parameters
    ----------
    name : str
    value : float

    Returns
    -------
    float

    Examples
    --------
    >>> check_nonnegative("epsilon", 0)
    0.0
    """
    value = _as_float(name, value)
    if value < 0:
        raise ValueError(f"{spelled(name)} must be >= 0, got {value!r}")
    return value


def check_probability(name: str, value) -> float:
    """Return ``value`` as float if it lies in [0, 1], else raise ValueError.

    Parameters
    ----------
    name : str
    value : float

    Returns
    -------
    float

    Examples
    --------
    >>> check_probability("delta", 1)
    1.0
    """
    value = _as_float(name, value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{spelled(name)} must lie in [0, 1], got {value!r}")
    return value


def check_sampling_rate(name: str, value) -> float:
    """Return a Poisson sampling rate in (0, 1] as float, else raise ValueError.

    Parameters
    ----------
    name : str
    value : float

    Returns
    -------
    float

    Examples
    --------
    >>> check_sampling_rate("sampling_rate", 0.0)
    Traceback (most recent call last):
    ...
    ValueError: sampling_rate must lie in (0, 1], got 0.0
    """
    value = _as_float(name, value)
    if not 0.0 < value <= 1.0:
        raise ValueError(f"{spelled(name)} must lie in (0, 1], got {value!r}")
    return value


#: The coarsest privacy-loss lattice spacing accepted (the lattices coarsen themselves up to about 10 nats far from
#: privacy to fit their limits; dp_accounting's connect-the-dots weights overflow at a spacing of 710).
MAX_DISCRETIZATION = 100.0
#: The smallest spacing accepted: below it the number of lattice points over a loss range is not a float.
MIN_DISCRETIZATION = 1e-300


def check_discretization(name: str, value) -> float:
    """Return a privacy-loss lattice spacing in (0, 100] as float, else raise ValueError.

    Parameters
    ----------
    name : str
    value : float

    Returns
    -------
    float

    Examples
    --------
    >>> check_discretization("discretization", 710.0)
    Traceback (most recent call last):
    ...
    ValueError: discretization must lie in (0, 100] (a loss lattice spacing, in nats), got 710.0
    """
    value = _as_float(name, value)
    if not 0.0 < value <= MAX_DISCRETIZATION:
        raise ValueError(f"{spelled(name)} must lie in (0, {MAX_DISCRETIZATION:g}] (a loss lattice spacing, in nats), got {value!r}")
    if value < MIN_DISCRETIZATION:  # a loss range over it overflows the count of lattice points
        raise ValueError(f"{spelled(name)} must be at least {MIN_DISCRETIZATION:g} (a loss lattice spacing, in nats: below it "
                         f"the count of lattice points over a loss range overflows), got {value!r}")
    return value


#: The noise multipliers and sampling rates whose subsampled privacy loss the float64 lattices resolve.
SUBSAMPLED_NOISE_RANGE = (1e-3, 1e8)
SUBSAMPLED_RATE_MIN = 1e-20


def check_subsampled_range(noise_multiplier: float, sampling_rate: float) -> None:
    """Refuse a subsampled mechanism (``sampling_rate < 1``) whose one-step loss the float64 lattices cannot resolve.

    Below noise 1e-3 the loss reaches e^{10^6} (far from private: the lattice would need 10^9 points), above
    noise 1e8 or below sampling rate 1e-20 one step's loss is below 1e-28, under the float resolution of the
    lattice's boundaries (such a mechanism is within that of perfectly private).  Full batches have closed forms
    and are not limited here.

    Parameters
    ----------
    noise_multiplier : float
    sampling_rate : float

    Examples
    --------
    >>> check_subsampled_range(1e9, 0.5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: noise_multiplier must lie in [0.001, 1e+08] for a subsampled mechanism (sampling_rate < 1), ...
    """
    if sampling_rate >= 1.0:
        return
    low, high = SUBSAMPLED_NOISE_RANGE
    if not low <= noise_multiplier <= high:
        why = ("below it the privacy loss of one step passes e^(10^6) (far from private)" if noise_multiplier < low
               else "above it one step's privacy loss is below the float resolution of the lattice (within 1e-8 "
                    "of perfectly private)")
        raise ValueError(f"{spelled('noise_multiplier')} must lie in [{low:g}, {high:g}] for a subsampled mechanism "
                         f"({spelled('sampling_rate')} < 1), got {noise_multiplier!r}: {why}")
    if sampling_rate < SUBSAMPLED_RATE_MIN:
        raise ValueError(f"{spelled('sampling_rate')} must be 1 or lie in [{SUBSAMPLED_RATE_MIN:g}, 1), got {sampling_rate!r}: "
                         f"below it one step's privacy loss is below the float resolution of the lattice (within "
                         f"{sampling_rate:.1g} x (e^(1/sigma^2) - 1)^(1/2) of perfectly private)")


def check_open_unit(name: str, value) -> float:
    """Return ``value`` as float if it lies in the open interval (0, 1), else raise ValueError.

    Parameters
    ----------
    name : str
    value : float

    Returns
    -------
    float

    Examples
    --------
    >>> check_open_unit("delta", 1.0)
    Traceback (most recent call last):
    ...
    ValueError: delta must lie in (0, 1), got 1.0
    """
    value = _as_float(name, value)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{spelled(name)} must lie in (0, 1), got {value!r}")
    return value


#: The largest count accepted (steps, dimensions, samples): every integer up to it is exact in float64.
MAX_INT = 2**53


def check_positive_int(name: str, value) -> int:
    """Return ``value`` as int if it is an integer in [1, 2^53] (floats like 3.0 are refused).

    Parameters
    ----------
    name : str
    value : int

    Returns
    -------
    int

    Examples
    --------
    >>> check_positive_int("steps", 3.0)
    Traceback (most recent call last):
    ...
    ValueError: steps must be an integer >= 1, got 3.0
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{spelled(name)} must be an integer >= 1, got {value!r}")
    if value < 1:
        raise ValueError(f"{spelled(name)} must be an integer >= 1, got {value!r}")
    if value > MAX_INT:
        raise ValueError(f"{spelled(name)} must be an integer <= 2^53 = {MAX_INT}, got {value!r}")
    return int(value)


def _reject_bools(name: str, values) -> None:
    """Refuse ``True``/``False`` anywhere in a (nested) list or tuple: they are not numbers here."""
    if isinstance(values, (bool, np.bool_)):
        raise ValueError(f"{spelled(name)} must hold real numbers, got the boolean {values!r}")
    if isinstance(values, (list, tuple)):
        for v in values:
            _reject_bools(name, v)


def as_real_array(name: str, values, *, allow_empty: bool = False) -> np.ndarray:
    """``values`` as a float array of finite reals, else ValueError naming ``name``.

    The one rule for array arguments: numbers (ints or floats, scalars or nested lists/arrays of
    them) only; strings, ``None``, booleans and complex numbers are refused, as are NaN, +-inf and
    (unless ``allow_empty``) empty arrays.

    Parameters
    ----------
    name : str
    values : float or array_like
    allow_empty : bool, default False

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> as_real_array("kappa", "0.1")
    Traceback (most recent call last):
    ...
    ValueError: kappa must be a real number or an array of real numbers, got the string '0.1'
    """
    if values is None:
        raise ValueError(f"{spelled(name)} must be a real number or an array of real numbers, got None")
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{spelled(name)} must be a real number or an array of real numbers, got the string {values!r}")
    _reject_bools(name, values)
    try:
        raw = np.asarray(values)
    except (ValueError, TypeError) as exc:  # ragged nested lists
        raise ValueError(f"{spelled(name)} must be a real number or a regular array of real numbers ({exc})") from None
    if raw.dtype.kind not in "iuf":
        kind = {"b": "booleans", "c": "complex numbers", "U": "strings", "S": "strings", "O": "objects"}.get(
            raw.dtype.kind, f"dtype {raw.dtype}"
        )
        raise ValueError(f"{spelled(name)} must hold real numbers, got {kind}: {values!r}"[:300])
    arr = raw.astype(float)
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{spelled(name)} must not be empty")
    bad = ~np.isfinite(arr)
    if np.any(bad):
        raise ValueError(f"{spelled(name)} must be finite, got {float(arr[bad].flat[0])!r}")
    return arr


def check_array_in(name: str, values, low: float, high: float, *, open_low=False, open_high=False,
                   allow_empty: bool = False) -> np.ndarray:
    """Return ``values`` as a float array after checking every entry is finite and lies in the interval.

    The interval is [low, high] with the ends made open by ``open_low``/``open_high`` (``high`` may be
    ``inf``: finite values only).  Input rules: :func:`as_real_array`.

    Parameters
    ----------
    name : str
    values : float or array_like
    low, high : float
        The interval's ends.
    open_low, open_high : bool, default False
        Exclude the ends.
    allow_empty : bool, default False

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> check_array_in("kappa", [0.1, 0.5], 0.0, 1.0, open_low=True).tolist()
    [0.1, 0.5]
    """
    arr = as_real_array(name, values, allow_empty=allow_empty)
    lo_ok = arr > low if open_low else arr >= low
    hi_ok = arr < high if open_high else arr <= high
    bad = ~(lo_ok & hi_ok)
    if np.any(bad):
        first = arr[bad].flat[0]
        interval = ("(" if open_low else "[") + f"{low:g}, {high:g}" + (")" if open_high or np.isinf(high) else "]")
        raise ValueError(f"{spelled(name)} must lie in {interval}, got {float(first)!r}")
    return arr


def check_seed(name: str, value) -> int:
    """A seed for ``numpy.random.SeedSequence``: an integer >= 0.

    Parameters
    ----------
    name : str
    value : int

    Returns
    -------
    int

    Examples
    --------
    >>> check_seed("seed", 7)
    7
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{spelled(name)} must be an integer >= 0, got {value!r}")
    return int(value)


class ResourceLimitError(ValueError):
    """A computation would need more memory or time than the configured budget.

    Raised before anything large is allocated; the message names the argument to change.
    """


#: The largest epsilon accepted: e^eps must stay finite in double precision.
EPS_MAX = 700.0


def check_eps(name: str, eps) -> np.ndarray:
    """``eps`` as a float array with every entry in [0, :data:`EPS_MAX`] (``e^eps`` stays finite).

    Parameters
    ----------
    name : str
        The parameter's name, for the message.
    eps : float or array_like

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> check_eps("epsilon", 800.0)
    Traceback (most recent call last):
    ...
    ValueError: epsilon must lie in [0, 700], got 800.0
    """
    return check_array_in(name, eps, 0.0, EPS_MAX)


def optional_import(module: str, extra: str):
    """Import ``module`` from one of the package's optional extras, or an ImportError that names the extra.

    The numerics (``fdp.curves``, ``fdp.accounting``, ``fdp.risk``, ``fdp.calibrate``, the CLI) need numpy, scipy,
    mpmath and dp_accounting only; figures need the ``plot`` extra (matplotlib), the experiments the
    ``experiments`` extra (scikit-learn, mlxtend).

    Parameters
    ----------
    module : str
        Dotted module name, e.g. ``"matplotlib.figure"``.
    extra : str
        The extra of ``pyproject.toml`` that installs it.

    Returns
    -------
    module

    Examples
    --------
    >>> optional_import("math", "plot").sqrt(4.0)
    2.0
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{module} is needed here but not installed: pip install 'fdp[{extra}]' ({exc})") from exc

