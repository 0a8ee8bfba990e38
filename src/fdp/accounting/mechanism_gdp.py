"""mu-GDP of a mechanism: GDP paper Alg. 1 on the curve an accountant builds (Gomez et al. 2025).

* DP-SGD (Alg. 1, Figs. 3 and 4), the one entry point for a mechanism: :func:`mu_and_regret_dpsgd` (and
  :func:`mu_and_regret_dpsgd_grid` on a grid), by default on the certified lower curve of
  :func:`fdp.accounting.pld.certified_lower_curve` (``f_mu* <= f`` holds for the exact curve on
  ``alpha, beta >= 1e-10``, up to the FFT's rounding, estimated and carried in the curve; faster than gdpnum at
  equal spacing), or on the PLD of :func:`fdp.accounting.pld.mechanism_pld` (``method="dp_accounting"``).
* The closed forms of a mechanism calibrated to (eps, delta): :func:`mu_and_regret_closed_form`.

The readings of a curve (mu*, regret, the Gaussian profile) are in :mod:`fdp.curves.gdp`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from joblib import delayed
from scipy.optimize import minimize_scalar

from ..curves import conversions, gdp
from ..curves.gdp import (
    DPSGD_TAIL,
    MuRegret,
    alpha_floor,
    check_tail,
    gdp_regret,
    mu_and_regret,
    mu_from_eps_delta,
    mu_laplace,
    mu_pure_dp,
)
from ..curves.tradeoff import check_piecewise
from ..formatting import ULPS_DOWN
from ..intervals import Interval
from ..parallel import check_n_jobs, run
from ..result import Result
from ..validation import check_array_in, check_discretization, check_open_unit, check_positive, check_positive_int, check_sampling_rate, spelled
from . import accountants
from .pld import certified_lower_curve, default_discretization, mechanism_pld, mechanism_tradeoff, tradeoff_curve
from .privacy_loss import Mechanism, takes_mechanism

__all__ = [
    "LATTICE_TAIL_MIN",
    "check_lattice_tail",
    "mu_and_regret_dpsgd",
    "mu_and_regret_dpsgd_grid",
    "regret_peak",
    "dpsgd_readings",
    "mu_and_regret_closed_form",
    "ClosedFormMu",
]


#: The smallest alpha floor of a lattice curve: below 1e-280 its breakpoints' slopes leave the float range
#: (their mass goes to infinite loss, :func:`fdp.accounting.lattice.breakpoints`), and a floor of 0 has no finite mu*
#: (the tails cut from the composition carry infinite loss).
LATTICE_TAIL_MIN = 1e-300


def check_lattice_tail(tail, name: str = "tail") -> float:
    """The alpha floor of a lattice curve (a subsampled mechanism), in [1e-300, 0.5), or a ValueError naming ``name``.

    Parameters
    ----------
    tail : float
        The floor.
    name : str, default "tail"
        The parameter's name, for the message.

    Returns
    -------
    float

    Examples
    --------
    >>> check_lattice_tail(0.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: tail must lie in [1e-300, 0.5) for a subsampled mechanism, got 0.0: its certified curve ...
    """
    tail = check_tail(tail, name)
    if tail < LATTICE_TAIL_MIN:
        raise ValueError(
            f"{spelled(name)} must lie in [{LATTICE_TAIL_MIN:g}, 0.5) for a subsampled mechanism, got {tail!r}: its "
            f"certified curve reaches alpha = {spelled(name)} only (the composition's tails are cut there and count as infinite privacy "
            "loss, so no finite mu* holds at alpha = 0); a smaller tail gives a larger mu*")
    return tail


def _alg1_pld(dist, tail: float) -> tuple[float, float]:
    """Alg. 1 on a ``dp_accounting`` PLD: its add and remove curves symmetrised
    (:func:`fdp.accounting.pld.tradeoff_curve`, ``"symmetrised"``, normalised) and read above :func:`alpha_floor`.

    The normalisation makes this curve slightly optimistic where beta is tiny (at (3.0, 0.01, 5,000 steps) it passes
    above the certified curve near ``(1, 0)``)."""
    curve = check_piecewise("curve (symmetrised)", tradeoff_curve(dist, "symmetrised", normalise=True))
    return mu_and_regret(curve, symmetrise=False, tail=alpha_floor(curve, tail))


@takes_mechanism
def mu_and_regret_dpsgd(
    mechanism: Mechanism, *, discretization: float | None = None, tail: float = DPSGD_TAIL,
    method: Literal["lattice", "dp_accounting"] = "lattice",
) -> MuRegret:
    """GDP paper Alg. 1 for DP-SGD (the paper's Fig. 3 interface): ``(mu*, Delta(f, f_mu*))``.

    ``method="lattice"`` (default): the certified lower curve of :func:`fdp.accounting.pld.certified_lower_curve`
    (both directions, tight at both ends), symmetrised, so that ``f_mu* <= f`` is certified for the
    exact curve of the mechanism on the range ``alpha, beta >= tail`` (up to the rounding of the FFT
    composition, estimated and carried in the curve).  ``method="dp_accounting"``:
    the same on the PLD of :func:`fdp.accounting.pld.mechanism_pld` (connect-the-dots, normalised; not
    certified near ``(1, 0)``).  Both read the curve above :func:`fdp.curves.gdp.alpha_floor` (``tail``, lowered
    for mechanisms far from private).  With ``sampling_rate = 1`` the exact ``(sqrt(steps) / noise_multiplier, 0)`` of the
    Gaussian mechanism.

    Parameters
    ----------
    mechanism : Mechanism
        Gaussian noise (DP-SGD).
    discretization : float, optional
        Loss lattice spacing (default: :func:`fdp.accounting.pld.default_discretization`).
    tail : float, default 1e-10
        The alpha floor (lowered far from privacy, see :func:`fdp.curves.gdp.alpha_floor`).
    method : {"lattice", "dp_accounting"}, default "lattice"

    Returns
    -------
    MuRegret

    References
    ----------
    GDP paper (Gomez et al. 2025) Alg. 1, Fig. 3.

    Examples
    --------
    >>> mu, regret = mu_and_regret_dpsgd(Mechanism("gaussian", 2.0, 0.05, 200), discretization=1e-3)
    >>> round(mu, 4), round(regret, 4)
    (0.4196, 0.0092)
    """
    tail = check_tail(tail)  # before the lattice is built
    if method not in ("lattice", "dp_accounting"):
        raise ValueError(f"method must be 'lattice' or 'dp_accounting', got {method!r}")
    mechanism = _check_gaussian(mechanism)
    if discretization is not None:
        check_discretization("discretization", discretization)
    if mechanism.sampling_rate == 1.0:
        # full batches: the steps-fold Gaussian mechanism, exactly sqrt(steps)/noise_multiplier-GDP (regret 0)
        return MuRegret(mechanism.full_batch_mu, 0.0)
    if method == "lattice":
        check_lattice_tail(tail)
    if method == "dp_accounting":
        return _alg1_pld(mechanism_pld(mechanism, discretization=discretization), tail)
    return _alg1_lattice(mechanism, discretization, tail)


def _check_gaussian(mechanism) -> Mechanism:
    if mechanism.noise != "gaussian":
        raise ValueError(f"mechanism must have Gaussian noise (DP-SGD), got {mechanism.noise!r} noise")
    return mechanism


def _alg1_lattice(mechanism: Mechanism, discretization: float | None, tail: float) -> MuRegret:
    """Alg. 1 on the certified symmetrised curve of DP-SGD (:func:`fdp.accounting.pld.certified_lower_curve`, the
    pessimistic lattice measures of both directions, each read where it is tight), above :func:`alpha_floor`; at
    sampling rate 1 too (its mu* lies just above ``sqrt(steps) / noise_multiplier``)."""
    tail = check_lattice_tail(tail)
    if discretization is None:
        discretization = default_discretization(mechanism)
    curve = certified_lower_curve(mechanism, discretization=discretization, direction="symmetrised", level_min=tail)
    return mu_and_regret(curve, symmetrise=False, tail=alpha_floor(curve, tail))


def mu_and_regret_dpsgd_grid(
    noise_multipliers, sampling_rates, steps, *, n_jobs: int = 1, discretization: float | None = None, tail: float = 1e-10
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`mu_and_regret_dpsgd` on a grid (GDP paper Fig. 4): arrays ``(mu, regret)`` of shape (noise multipliers, steps, rates).

    The grid points are independent and run through joblib (``n_jobs`` workers; a Dask backend set
    with ``joblib.parallel_config`` is used as is).

    Parameters
    ----------
    noise_multipliers, sampling_rates, steps : float, int or array_like
        The grid's axes.
    n_jobs : int, default 1
        joblib workers.
    discretization : float, optional
        PLD lattice spacing of every point (default: each point's :func:`fdp.accounting.pld.default_discretization`).
    tail : float, default 1e-10
        The alpha floor of :func:`mu_and_regret_dpsgd`.

    Returns
    -------
    (mu, regret) : tuple of numpy.ndarray
        Each of shape (noise multipliers, steps, sampling rates).

    References
    ----------
    GDP paper (Gomez et al. 2025) Fig. 4.

    Examples
    --------
    >>> mu, regret = mu_and_regret_dpsgd_grid([2.0, 4.0], 1.0, 100)  # full batches: sqrt(100) / sigma
    >>> mu.ravel().tolist(), regret.ravel().tolist()
    ([5.0, 2.5], [0.0, 0.0])
    """

    s = [check_positive("noise_multipliers", v) for v in np.atleast_1d(noise_multipliers).tolist()]
    q = [check_sampling_rate("sampling_rates", v) for v in np.atleast_1d(sampling_rates).tolist()]
    t = [check_positive_int("steps", v) for v in np.atleast_1d(steps).tolist()]
    n_jobs = check_n_jobs(n_jobs)
    points = [(a, c, b) for a in s for b in t for c in q]
    with warnings.catch_warnings():
        # loky replaces a worker whose memory grew by 300 MB (freed lattices stay with the process) and
        # resubmits its queued tasks: nothing is lost, so its UserWarning would only alarm the reader.
        warnings.filterwarnings("ignore", message="A worker stopped while some jobs", category=UserWarning)
        res = run((delayed(mu_and_regret_dpsgd)(Mechanism("gaussian", a, c, b), discretization=discretization, tail=tail)
                   for a, c, b in points), n_jobs)
    arr = np.array([tuple(r) for r in res], dtype=float).reshape(len(s), len(t), len(q), 2)
    return arr[..., 0], arr[..., 1]


@dataclass(frozen=True)
class ClosedFormMu(Result):
    """The tight ``mu*`` of a mechanism calibrated to (eps, delta) (:func:`mu_and_regret_closed_form`).

    Attributes
    ----------
    mu : float
        At or above the exact mu*.
    regret : float
        The regret of ``mu`` (0 for the Gaussian mechanism, whose curve is ``f_mu``).
    mu_lower : float
        At or below the exact mu*: ``[mu_lower, mu]`` contains it.
    """

    mu: float
    regret: float
    mu_lower: float

    @property
    def mu_interval(self) -> Interval:
        """``Interval(mu_lower, mu)``."""
        return Interval(self.mu_lower, self.mu)


def mu_and_regret_closed_form(noise: Literal["gaussian", "laplace", "randomized-response"], epsilon: float,
                              delta: float | None = None) -> ClosedFormMu:
    """The tight ``mu*`` of a mechanism calibrated to ``epsilon`` (and ``delta``), from its closed form, and its regret.

    Each ``mu`` is the closed form evaluated in floats and moved up past its rounding: never below the exact value,
    within 1e-15 relative of it (a ``delta`` within 1e-15 of 1 or below 1e-308 costs more digits, on the high side);
    ``mu_lower`` is moved down past it (for the Gaussian mechanism the float root checked in exact arithmetic, for the
    pure-DP forms, evaluated within 2 ulps and moved up by 8, the upper end moved down by 16 ulps).

    * ``"gaussian"``: the Gaussian mechanism that is (eps, delta)-DP (GDP paper Table 3,
      :func:`fdp.curves.gdp.mu_from_eps_delta`); its curve is ``f_mu``, so the regret is 0.
    * ``"laplace"``: Laplace noise of scale ``1 / epsilon`` per unit of sensitivity (:func:`fdp.curves.gdp.mu_laplace`),
      the regret on the chords of its curve (:func:`fdp.curves.conversions.laplace_tradeoff`).
    * ``"randomized-response"``: the eps-DP curve, which dominates every eps-DP mechanism
      (Prop. 6.1, :func:`fdp.curves.gdp.mu_pure_dp`), and its regret.

    Parameters
    ----------
    noise : {"gaussian", "laplace", "randomized-response"}
    epsilon : float
        In (0, 700].
    delta : float, optional
        In (0, 1); for ``"gaussian"`` only (default 1e-5).

    Returns
    -------
    MuRegret

    References
    ----------
    GDP paper (Gomez et al. 2025) Table 3, Prop. 6.1, eq. 21.

    Examples
    --------
    >>> round(mu_and_regret_closed_form("randomized-response", 1.0).mu, 6)  # -2 Phi^{-1}(1 / (e + 1))
    1.232035
    """
    if noise not in ("gaussian", "laplace", "randomized-response"):
        raise ValueError(f"noise must be 'gaussian', 'laplace' or 'randomized-response', got {noise!r}")
    for name, value in (("epsilon", epsilon), ("delta", delta)):
        if np.ndim(value) != 0:
            raise ValueError(f"{spelled(name)} must be one number, got {value!r}")
    eps = float(check_array_in("epsilon", epsilon, 0.0, 700.0, open_low=True))
    if noise != "gaussian":
        if delta is not None:
            raise ValueError(f"{spelled('delta')} does not apply to {noise} (pure eps-DP)")
        mu = float(mu_laplace(eps) if noise == "laplace" else mu_pure_dp(eps))
        curve = conversions.laplace_tradeoff(eps) if noise == "laplace" else conversions.randomized_response(eps)
        # below 1e-290 the closed forms' relative rounding vanishes in subnormals: 0 is the lower end there
        lower = mu * ULPS_DOWN * ULPS_DOWN if mu >= 1e-290 else 0.0
        return ClosedFormMu(mu, float(gdp_regret(curve, mu)), lower)
    delta = check_open_unit("delta", 1e-5 if delta is None else delta)
    return ClosedFormMu(float(mu_from_eps_delta(eps, delta)), 0.0, float(mu_from_eps_delta(eps, delta, side="lower")))



def regret_peak(noise_multiplier: float, steps: int, rate_low: float, rate_high: float, *, tail: float = DPSGD_TAIL,
                xatol: float = 1e-3) -> tuple[float, float]:
    """The largest GDP regret of DP-SGD between two sampling rates: where a grid of rates puts its worst point, the
    peak between the neighbours can lie higher (the GDP paper's Figure 4 and its rule of thumb).

    The regret of :func:`mu_and_regret_dpsgd` is maximised over ``log q`` in ``[log rate_low, log rate_high]`` by
    bounded Brent search (to ``xatol`` in ``log q``) and compared with both ends; Brent finds a local peak, so the
    bracket should hold one, and the result is never below the regret at either end.

    Parameters
    ----------
    noise_multiplier : float
    steps : int
    rate_low, rate_high : float
        The sampling rates in (0, 1] between which to search, ``rate_low <= rate_high``.
    tail : float, default 1e-10
    xatol : float, default 1e-3

    Returns
    -------
    (float, float)
        The regret at the peak found and its sampling rate.

    References
    ----------
    Gomez et al. (2025) Sec. 5, Fig. 4.

    Examples
    --------
    >>> regret, rate = regret_peak(2.0, 400, 0.05, 0.2, xatol=0.05)
    >>> bool(0.05 <= rate <= 0.2), regret >= mu_and_regret_dpsgd(Mechanism("gaussian", 2.0, 0.05, 400)).regret
    (True, True)
    """
    low, high = check_sampling_rate("rate_low", rate_low), check_sampling_rate("rate_high", rate_high)
    if low > high:
        raise ValueError(f"rate_low must not exceed rate_high, got {low!r} > {high!r}")
    if low == high:  # nothing between: the regret at that rate
        return float(mu_and_regret_dpsgd(Mechanism("gaussian", noise_multiplier, low, steps), tail=tail).regret), low
    Mechanism("gaussian", noise_multiplier, low, steps)  # checks the noise and the steps, naming them
    found = minimize_scalar(lambda lq: -mu_and_regret_dpsgd(Mechanism("gaussian", noise_multiplier, float(np.exp(lq)), steps),
                                                            tail=tail).regret,
                            bounds=(np.log(low), np.log(high)), method="bounded", options={"xatol": check_positive("xatol", xatol)})
    ends = [(float(mu_and_regret_dpsgd(Mechanism("gaussian", noise_multiplier, q, steps), tail=tail).regret), q) for q in (low, high)]
    return max([(float(-found.fun), float(np.exp(found.x))), *ends])  # Brent finds a local peak; the ends may lie higher


@takes_mechanism
def dpsgd_readings(mechanism: Mechanism, *, delta: float, discretization: float = 1e-4, tail: float = DPSGD_TAIL) -> dict:
    """A DP-SGD run read the ways the GDP paper's Table 2 and App. Tables 4-5 compare: its trade-off curve (the
    pessimistic PLD's, :func:`fdp.accounting.pld.mechanism_tradeoff`), mu* and the exact regret of that curve, and
    epsilon at ``delta`` by the PLD and by the RDP accountant.

    Parameters
    ----------
    mechanism : Mechanism
        Gaussian noise (DP-SGD).
    delta : float
        In (0, 1).
    discretization : float, default 1e-4
        The PLD lattice spacing.
    tail : float, default 1e-10
        The floor of mu*.

    Returns
    -------
    dict
        ``curve``, ``mu``, ``regret``, ``eps_pld``, ``eps_rdp``.

    References
    ----------
    Gomez et al. (2025) Table 2, App. Tables 4-5.

    Examples
    --------
    >>> r = dpsgd_readings(Mechanism("gaussian", 2.0, 0.05, 100), delta=1e-5, discretization=1e-3)
    >>> bool(r["eps_pld"] <= r["eps_rdp"]), round(r["mu"], 2)
    (True, 0.31)
    """
    curve = mechanism_tradeoff(mechanism, discretization=discretization)
    mu, regret = gdp.mu_and_regret(curve, symmetrise=False, tail=tail)
    return dict(curve=curve, mu=mu, regret=regret,
                eps_pld=accountants.epsilon(mechanism, delta, discretization=discretization),
                eps_rdp=accountants.epsilon(mechanism, delta, accountant="rdp"))
