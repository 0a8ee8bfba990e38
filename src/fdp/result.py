"""One result shape: every result of the library is a frozen dataclass that writes itself as JSON-ready Python.

:class:`Result` gives a dataclass ``to_dict()``: its fields (those shown in its ``repr``; a curve or a bracket kept for
plotting is not) as numbers, lists and dicts, which is what the command line prints with ``--json``.  The results that
were named tuples (``MuRegret``, ``Breakpoints``, ``DRResult``, ``Proportion``) also unpack into their
fields and index them in order (:class:`Unpacks`), as an :class:`~fdp.intervals.Interval` unpacks into its ends; unlike
a tuple, such a result equals only a result of its own type.

Examples
--------
>>> from dataclasses import dataclass
>>> import numpy as np
>>> @dataclass(frozen=True)
... class Pair(Unpacks):
...     mu: float
...     levels: np.ndarray
>>> p = Pair(1.5, np.array([0.1, 0.2]))
>>> p.to_dict(), tuple(p)[0], p[0]
({'mu': 1.5, 'levels': [0.1, 0.2]}, 1.5, 1.5)
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass

import numpy as np

__all__ = ["Result", "Unpacks", "plain"]


def plain(value):
    """``value`` as JSON-ready Python: arrays and numpy numbers as lists and numbers, dataclasses as dicts.

    Parameters
    ----------
    value : object
        A number, an array, a dataclass (a :class:`Result`, an :class:`~fdp.intervals.Interval`, a
        ``Mechanism``), or a list, tuple or dict of them.

    Returns
    -------
    object
        Built of dicts, lists, strings, numbers, booleans and None only (for the values above).

    Examples
    --------
    >>> plain({"x": np.float64(0.5), "y": (np.arange(2), None)})
    {'x': 0.5, 'y': [[0, 1], None]}
    """
    if isinstance(value, Result):
        return value.to_dict()
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value) if f.repr}
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


class Result:
    """Base of the library's results (frozen dataclasses): ``to_dict()``, their fields as JSON-ready Python."""

    def to_dict(self) -> dict:
        """The fields shown in the result's ``repr``, JSON-ready (:func:`plain`).

        Returns
        -------
        dict
        """
        return {f.name: plain(getattr(self, f.name)) for f in fields(self) if f.repr}


class Unpacks(Result):
    """A :class:`Result` that also unpacks into its fields and indexes them, in order (``mu, regret =
    mu_and_regret(curve)``, ``rate("prior-aware")[0]``), as the named tuples it replaces did."""

    def _values(self) -> tuple:
        return tuple(getattr(self, f.name) for f in fields(self))

    def __iter__(self):
        return iter(self._values())

    def __getitem__(self, index):
        return self._values()[index]

    def __len__(self) -> int:
        return len(fields(self))
