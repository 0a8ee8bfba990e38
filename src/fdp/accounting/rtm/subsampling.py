"""One Poisson-subsampled release under the relaxed threat model (RTM paper Lemma 9): ``j_p = p j + (1 - p)
(1 - alpha)`` and its symmetrisation, for the Gaussian and the Laplace mechanism."""

from __future__ import annotations

from ...curves import tradeoff
from ...curves.tradeoff import TradeOffCurve
from ..privacy_loss import Mechanism, takes_mechanism
from .closed_forms import gaussian, laplace

__all__ = ["subsampled_gaussian", "subsampled_laplace"]

# ---------------------------------------------------------------------------------------------
# Subsampled mechanisms (Lemma 9)
# ---------------------------------------------------------------------------------------------


def _subsampled(curve: TradeOffCurve, p: float, grid, name: str) -> tradeoff.PiecewiseLinear:
    # j_p = p j + (1 - p)(1 - alpha) = T(A, (1-p) A + p B) (Lemma 9, eq. 61); its inverse,
    # T((1-p) A + p B, A), is the other dominating pair of Sec. 4; J = C(j_p, j_p^{-1}), on or below the exact one.
    J = tradeoff.symmetrise(tradeoff.subsample(curve, p), grid)
    return tradeoff.piecewise_linear(J.alphas, J.betas, name=name, powers=J.powers)


def _one_step(mechanism: Mechanism, noise: str) -> tuple[float, float]:
    """The effect size ``1 / noise_multiplier`` and the sampling rate of one step of ``noise``."""
    if mechanism.noise != noise or mechanism.steps != 1:
        raise ValueError(f"mechanism must be one step of {noise} noise here, got {mechanism}")
    return 1.0 / mechanism.noise_multiplier, mechanism.sampling_rate


@takes_mechanism
def subsampled_gaussian(mechanism: Mechanism, dimension: int = 1, grid=None) -> tradeoff.PiecewiseLinear:
    """``J_SGM = C(j_p, j_p^{-1})`` of the Poisson-subsampled GM, one step (Sec. 4, Lemma 9).

    ``j_p = T(chi2_d(0), (1-p) chi2_d(0) + p chi2_d(mu^2))`` = ``p j_GM + (1-p)(1-alpha)``
    (H0: M(D), H1: subsampled M(D u {x*}); the statistic is ``||theta||^2``), ``j_p^{-1}`` its
    inverse (bisection).  Symmetrised with :func:`fdp.curves.tradeoff.symmetrise` from samples on ``grid``
    (default :func:`fdp.curves.tradeoff.default_grid`): the result is piecewise linear, exactly symmetric, and
    lies on or below the exact J.  The asymmetric
    j_p is ``tradeoff.subsample(gaussian(mu, d), p)``.

    Parameters
    ----------
    mechanism : Mechanism
        One step of Gaussian noise: the effect size ``mu = Delta_2 / sigma`` is ``1 / noise_multiplier``, ``p`` the
        sampling rate.
    dimension : int, default 1
    grid : array_like, optional

    Returns
    -------
    PiecewiseLinear

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Sec. 4, Lemma 9.

    Examples
    --------
    >>> curve = subsampled_gaussian(Mechanism("gaussian", 1.0, 0.5))
    >>> bool(abs(curve(0.1) - curve.inverse(0.1)) < 1e-12)  # symmetric
    True
    """
    d = dimension  # d in the RTM paper
    mu, p = _one_step(mechanism, "gaussian")
    return _subsampled(gaussian(mu, d), p, grid, f"RTM J, subsampled Gaussian mu={mu:g} d={d} p={p:g}")


@takes_mechanism
def subsampled_laplace(mechanism: Mechanism, grid=None) -> tradeoff.PiecewiseLinear:
    """``J = C(j_p, j_p^{-1})`` of the Poisson-subsampled LM, ``j_p = p j_Lap + (1-p)(1-alpha)``.

    Same construction as :func:`subsampled_gaussian` with :func:`~fdp.accounting.rtm.closed_forms.laplace` (Lemma 9; App. 7.1,
    Fig. 5a).  The asymmetric j_p is ``tradeoff.subsample(laplace(mu), p)``.

    Parameters
    ----------
    mechanism : Mechanism
        One step of Laplace noise: the effect size ``mu = Delta_1 / b`` is ``1 / noise_multiplier``, ``p`` the
        sampling rate.
    grid : array_like, optional

    Returns
    -------
    PiecewiseLinear

    References
    ----------
    RTM paper (Kaissis et al. 2023b) Lemma 9, App. 7.1, Fig. 5a.

    Examples
    --------
    >>> bool(subsampled_laplace(Mechanism("laplace", 1.0, 0.3))(0.1) >= laplace(1.0)(0.1))  # subsampling amplifies
    True
    """
    mu, p = _one_step(mechanism, "laplace")
    return _subsampled(laplace(mu), p, grid, f"RTM J, subsampled Laplace mu={mu:g} p={p:g}")
