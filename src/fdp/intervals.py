"""One interval type for every result that brackets a number: :class:`~fdp.intervals.Interval`.

A certified bracket (:attr:`fdp.risk.Estimate.interval`, :attr:`fdp.risk.GDPReport.mu_interval`, the RTM readings), a
Monte-Carlo confidence interval (:attr:`fdp.accounting.montecarlo.MonteCarloGamma.confidence_interval`), an exact binomial interval
(:attr:`fdp.experiments.attacks.Proportion.interval`) and a calibration's achieved risk
(:attr:`fdp.calibrate.Calibration.achieved_interval`) are all an ``Interval(lower, upper)``, elementwise over arrays.

The ends are spelled one way throughout the library.  A reading whose reported value is its certified (upper) end
carries the plain name (``GDPReport.mu``, ``RTMReading.tpr``, ``Calibration.achieved``), its lower end the suffix
``_lower`` (``mu_lower``, ``tpr_lower``, ``achieved_lower``) and both ends together the suffix ``_interval``
(``mu_interval``, ``tpr_interval``, ``achieved_interval``).  A bracket with no preferred end, or a confidence
interval, has ``lower`` and ``upper`` (``Estimate``, ``MonteCarloGamma``, ``GammaSweep`` with ``mc_lower`` and
``mc_upper`` for its Monte-Carlo interval, ``Proportion``); ``pld.Bracket.gamma`` returns an ``Interval``.

Examples
--------
>>> i = Interval(0.1, 0.3)
>>> i.contains(0.2), round(i.width, 12), tuple(i), i[1]
(True, 0.2, (0.1, 0.3), 0.3)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Interval"]


@dataclass(frozen=True)
class Interval:
    """A closed interval ``[lower, upper]`` (numbers or arrays of the same shape, compared elementwise).

    Attributes
    ----------
    lower, upper : float or numpy.ndarray
        The ends; ``lower <= upper``.
    """

    lower: float | np.ndarray
    upper: float | np.ndarray

    def __post_init__(self):
        lower, upper = np.asarray(self.lower, dtype=float), np.asarray(self.upper, dtype=float)
        if lower.shape != upper.shape and lower.ndim and upper.ndim:
            raise ValueError(f"Interval: lower and upper must have the same shape, got {lower.shape} and {upper.shape}")
        if np.any(np.isnan(lower)) or np.any(np.isnan(upper)):
            raise ValueError(f"Interval: an end is NaN (lower={self.lower!r}, upper={self.upper!r})")
        if np.any(lower > upper):
            raise ValueError(f"Interval: lower must be <= upper, got lower={self.lower!r} > upper={self.upper!r}")

    def __iter__(self):  # unpacks as (lower, upper)
        return iter((self.lower, self.upper))

    def __getitem__(self, index):  # and indexes as that pair
        return (self.lower, self.upper)[index]

    def __len__(self) -> int:
        return 2

    @property
    def width(self) -> float | np.ndarray:
        """``upper - lower``."""
        return self.upper - self.lower

    def contains(self, value) -> bool | np.ndarray:
        """Whether ``lower <= value <= upper`` (elementwise for arrays).

        Parameters
        ----------
        value : float or array_like

        Returns
        -------
        bool or numpy.ndarray
        """
        out = (np.asarray(self.lower) <= value) & (np.asarray(value) <= np.asarray(self.upper))
        return bool(out) if np.ndim(out) == 0 else out
