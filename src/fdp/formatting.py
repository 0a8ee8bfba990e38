"""Numbers for people: bounds rounded outward, powers of ten written as people write them.

A certified upper bound printed as "TPR at most 0.002718" for an exact 0.00271828... is a smaller number
than the truth.  Every human-readable bound goes through :func:`bound`, which rounds to ``digits``
significant digits *towards* the side the bound is on (an upper end up, a lower end down), from the exact
binary value of the float (``decimal.Decimal`` of a float is exact).  JSON output keeps full precision.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

import numpy as np

__all__ = ["ULPS_UP", "ULPS_DOWN", "past_subnormal_rounding", "bound", "upper", "lower", "times_ten", "times_ten_log10"]

#: Factors that move a float result past its few roundings (a closed form's evaluation is within 2-4 ulps; these
#: move it by 8) to the safe side: an upper bound up, a lower bound down.
ULPS_UP, ULPS_DOWN = 1.0 + 2.0**-50, 1.0 - 2.0**-50


def past_subnormal_rounding(values, towards: float):
    """``values`` whose subnormal entries (below 2.2e-308) are moved two floats towards ``towards``.

    A relative margin such as :data:`ULPS_UP` does not move a subnormal number (its ulp, 5e-324, is absolute), while
    a product or an ``exp`` there still rounds by up to one ulp each: two floats cover both.

    Parameters
    ----------
    values : array_like
        Bounds, already moved past their relative rounding.
    towards : float
        The safe side: ``1.0`` (or ``inf``) for an upper bound, ``0.0`` for a lower one.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> past_subnormal_rounding(np.array([5e-324, 0.5]), 1.0).tolist()
    [1.5e-323, 0.5]
    """
    values = np.asarray(values, dtype=float)
    return np.where(np.abs(values) < np.finfo(float).tiny,
                    np.nextafter(np.nextafter(values, towards), towards), values)

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def bound(value: float, digits: int, side: str, keep_zeros: bool = False) -> str:
    """``value`` to ``digits`` significant digits, rounded up (``side="upper"``) or down (``"lower"``).

    Parameters
    ----------
    value : float
        A finite number (``-0.0`` prints as ``0``).
    digits : int
        Significant digits, >= 1.
    side : {"upper", "lower"}
        Which end of an interval ``value`` is: an upper end is never printed below it, a lower end never
        above it.
    keep_zeros : bool, default False
        Keep trailing zeros, so that every number of a table column shows ``digits`` digits (1.5670, not 1.567).

    Returns
    -------
    str
        In the style of ``format(x, ".{digits}g")``.

    Examples
    --------
    >>> bound(0.0027182818, 4, "upper"), bound(0.0027182818, 4, "lower")
    ('0.002719', '0.002718')
    >>> bound(1.23204, 5, "upper"), bound(0.99999, 3, "upper"), bound(-0.0, 4, "upper")
    ('1.2321', '1', '0')
    >>> bound(1.566999, 5, "upper", keep_zeros=True), bound(0.99999, 3, "upper", keep_zeros=True)
    ('1.5670', '1.00')
    """
    if side not in ("upper", "lower"):
        raise ValueError(f"side must be 'upper' or 'lower', got {side!r}")
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"digits must be an integer >= 1, got {digits!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"value must be finite, got {value!r}")
    if value == 0.0:
        return "0"
    exact = Decimal(value)
    quantum = Decimal(1).scaleb(exact.adjusted() - digits + 1)
    rounded = exact.quantize(quantum, rounding=ROUND_CEILING if side == "upper" else ROUND_FLOOR)
    # rounded has at most digits + 1 significant digits (9.99 -> 10.0); as a float, ".{digits}g" prints its
    # digits exactly (a number of <= 15 digits survives the round trip through a double) unless it is subnormal
    text = format(float(rounded), f"{'#' if keep_zeros else ''}.{digits}g").replace(".e", "e").rstrip(".")
    if (Decimal(text) < exact) if side == "upper" else (Decimal(text) > exact):  # subnormal: print the decimal
        text = str(rounded.normalize()).replace("E", "e")
    return text


def upper(value: float, digits: int = 4, keep_zeros: bool = False) -> str:
    """:func:`bound` of an upper bound: rounded up to ``digits`` significant digits.

    Parameters
    ----------
    value : float
    digits : int, default 4
    keep_zeros : bool, default False

    Returns
    -------
    str

    Examples
    --------
    >>> upper(0.382925)
    '0.383'
    """
    return bound(value, digits, "upper", keep_zeros)


def lower(value: float, digits: int = 4, keep_zeros: bool = False) -> str:
    """:func:`bound` of a lower bound: rounded down to ``digits`` significant digits.

    Parameters
    ----------
    value : float
    digits : int, default 4
    keep_zeros : bool, default False

    Returns
    -------
    str

    Examples
    --------
    >>> lower(0.382925)
    '0.3829'
    """
    return bound(value, digits, "lower", keep_zeros)


def times_ten(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` significant digits as "m × 10ᵏ" (plain "m" when k = 0), rounded to nearest.

    For prose and tables, where "1.02e-03" is a programmer's notation; a bound is rounded with
    :func:`bound` first when its side matters.

    Parameters
    ----------
    value : float
        A finite number.
    digits : int, default 3
        Significant digits, >= 1.

    Returns
    -------
    str

    Examples
    --------
    >>> times_ten(0.00102341), times_ten(-1.3e-4, 2), times_ten(9.996, 3), times_ten(0.0, 2)
    ('1.02 × 10⁻³', '-1.3 × 10⁻⁴', '1.00 × 10¹', '0')
    """
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"digits must be an integer >= 1, got {digits!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"value must be finite, got {value!r}")
    if value == 0.0:
        return "0"
    mantissa, _, exponent = format(value, f".{digits - 1}e").partition("e")  # 9.996 -> '1.00e+01': rounding done once
    k = int(exponent)
    return mantissa if k == 0 else f"{mantissa} × 10{str(k).translate(_SUPERSCRIPT)}"


def times_ten_log10(log10_value: float, digits: int = 3) -> str:
    """The number ``10 ** log10_value`` as "m × 10ᵏ" with ``digits`` significant digits, rounded to nearest, for numbers
    below (or above) the float range that are known only by their logarithm (a bound of 10⁻²²⁴ underflows to 0).

    Parameters
    ----------
    log10_value : float
        A finite base-10 logarithm.
    digits : int, default 3
        Significant digits, >= 1.

    Returns
    -------
    str

    Examples
    --------
    >>> times_ten_log10(-224.3), times_ten_log10(2.0), times_ten_log10(-0.00001, 2)
    ('5.01 × 10⁻²²⁵', '1.00 × 10²', '1.0')
    """
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"digits must be an integer >= 1, got {digits!r}")
    log10_value = float(log10_value)
    if not math.isfinite(log10_value):
        raise ValueError(f"log10_value must be finite, got {log10_value!r}")
    k = math.floor(log10_value)
    mantissa = times_ten(10.0 ** (log10_value - k), digits)  # in [1, 10): may round up to 10.0 -> '1.00 × 10¹'
    if "×" in mantissa:  # 9.995... rounded to 10: one more power of ten
        k, mantissa = k + 1, format(1.0, f".{digits - 1}f") if digits > 1 else "1"
    return mantissa if k == 0 else f"{mantissa} × 10{str(k).translate(_SUPERSCRIPT)}"
