"""Root finding for monotone functions, vectorised: one bisection shared by the GDP and zCDP conversions."""

from __future__ import annotations

import numpy as np

__all__ = ["bisect_increasing"]


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
