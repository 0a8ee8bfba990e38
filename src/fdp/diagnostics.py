"""The library's warning: a result that is less accurate or less certain than a reader would assume.

Results of :mod:`fdp.risk`, :mod:`fdp.calibrate` and :mod:`fdp.accounting.montecarlo` carry their caveats in a field
``warnings``, a tuple of str (a wide certified bracket, an unreliable estimate, a lattice at the end of its
resolution).  A caller who does not read the field would miss them, so the public
functions that return such a result also issue each caveat as an :class:`FDPWarning`, once: from the outermost
call only (a report that computes a mu* reading does not warn twice).  Silence them as any Python warning::

    import warnings, fdp
    warnings.simplefilter("ignore", fdp.FDPWarning)
"""

from __future__ import annotations

import contextvars
import functools
import warnings

__all__ = ["FDPWarning", "warns"]


class FDPWarning(UserWarning):
    """A caveat of an fdp result (the same text as in the result's ``warnings`` field)."""


_DEPTH = contextvars.ContextVar("fdp_result_depth", default=0)


def warns(func):
    """Decorate a public function whose result carries ``warnings`` (a tuple of str): each one is issued as an
    :class:`FDPWarning` when the outermost such call returns.

    Parameters
    ----------
    func : callable
        Returns a result with a ``warnings`` attribute.

    Returns
    -------
    callable
        ``func`` with the same signature and result.
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        token = _DEPTH.set(_DEPTH.get() + 1)
        try:
            result = func(*args, **kwargs)
        finally:
            _DEPTH.reset(token)
        if _DEPTH.get() == 0:
            for message in result.warnings:
                warnings.warn(message, FDPWarning, stacklevel=2)
        return result

    return wrapper
