"""Root finding for monotone functions, vectorised: one bisection shared by the GDP and zCDP conversions."""

from __future__ import annotations

import numpy as np

__all__ = ["bisect_increasing"]


def bisect_increasing(fun, target, lo, hi, iters: int = 200):
    """Vectorised bisection for ``fun(x) = target`` with ``fun`` non-decreasing on [lo, hi].

    ``fun(lo) <= target <= fun(hi)`` is the caller's responsibility.  Stops when no bracket can
    shrink any more in floating point.
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
