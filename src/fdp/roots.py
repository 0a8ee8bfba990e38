"""Root finding for monotone functions, vectorised: one bisection shared by the GDP and zCDP conversions."""

from __future__ import annotations

import numpy as np

__all__ = ["bisect_increasing", "bisect_doubles"]


def bisect_increasing(fun, target, lo, hi, iters: int = 200):
    """Vectorised bisection for ``fun(x) = target`` with ``fun`` non-decreasing on [lo, hi].

    ``fun(lo) <= target <= fun(hi)`` is the caller's responsibility.  Stops when no bracket can
    shrink any more in floating point.

    Parameters
    ----------
    fun : callable
        Vectorised, non-decreasing.
    target : float or array_like
    lo, hi : float or array_like
        Brackets, broadcast together with ``target``.
    iters : int
        At most this many halvings.

    Returns
    -------
    tuple of numpy.ndarray
        ``(lo, hi)`` with ``fun(lo) <= target < fun(hi)``, adjacent doubles when converged.

    Examples
    --------
    >>> lo, hi = bisect_increasing(lambda x: x * x, 2.0, 0.0, 2.0)
    >>> float(lo), float(hi)
    (1.414213562373095, 1.4142135623730951)
    """
    lo = np.array(lo, dtype=float)
    hi = np.array(hi, dtype=float)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        active = (mid > lo) & (mid < hi)
        if not np.any(active):
            break
        up = fun(mid) <= target
        lo = np.where(active & up, mid, lo)
        hi = np.where(active & ~up, mid, hi)
    return lo, hi


def bisect_doubles(reached, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised bisection over the non-negative doubles, which sort like their bit patterns: the neighbouring
    doubles ``lo < hi`` in ``[0, hi]`` where a monotone condition turns true (at most 63 halvings).

    Parameters
    ----------
    reached : callable
        Vectorised ``x -> bool``, false below some point and true from it on; taken true at ``hi``.
    hi : numpy.ndarray
        Non-negative doubles where the condition holds, one per search.

    Returns
    -------
    lo, hi : numpy.ndarray
        The last double where ``reached`` is false (or 0) and the first where it is true.

    Examples
    --------
    >>> lo, hi = bisect_doubles(lambda x: x * x >= 2.0, np.array([2.0]))
    >>> bool(hi[0] == np.nextafter(lo[0], 3.0) and lo[0] ** 2 < 2.0 <= hi[0] ** 2)
    True
    """
    lo_bits = np.zeros(np.shape(hi), dtype=np.int64)
    hi_bits = np.asarray(hi, dtype=np.float64).view(np.int64).copy()
    while np.any(hi_bits - lo_bits > 1):
        mid = lo_bits + (hi_bits - lo_bits) // 2
        ok = reached(mid.view(np.float64))
        hi_bits, lo_bits = np.where(ok, mid, hi_bits), np.where(ok, lo_bits, mid)
    return lo_bits.view(np.float64), hi_bits.view(np.float64)
