"""Privacy-loss distributions (PLDs) through Google's ``dp_accounting``, and trade-off curves from them.

A PLD of a pair (A, B) is the law of the privacy loss ``L = log(b(x) / a(x))`` for ``x ~ B``
(plus a mass at ``L = +inf`` where ``a = 0``).  Its trade-off curve is ``T(A, B)``: the
Neyman-Pearson test rejects A for the largest losses, so with the losses sorted downwards the
breakpoints are the cumulative masses ``(A(L >= l), 1 - B(L >= l))``; between them the curve is
linear (randomisation at the threshold atom).  For a discrete pair this is exact, including
``f(0) = 1 - B(L = +inf)``: a pair without an infinite-loss atom has ``f(0) = 1``.

Directions (DESIGN.md).  ``"add"`` is ``T(P, Q)`` with ``P = M(D)`` and ``Q = M(D with the
target)``; for the Poisson-subsampled mechanism with sampling rate p and noise ``nu``,
``P = nu`` and ``Q = (1 - p) nu + p nu(. - 1)``.  ``"remove"`` is the swapped pair ``T(Q, P)``,
the inverse curve.  ``dp_accounting`` names its two PMFs after the neighbouring relation of its
``mu_upper = M(D)``: its **REMOVE** PMF (``mu_upper = (1-p) nu(. + 1) + p nu``, ``mu_lower =
nu``) is the law of ``log(Q / P)`` under Q, i.e. our ``"add"`` curve ``T(P, Q)``, and its
**ADD** PMF is our ``"remove"`` curve ``T(Q, P)``.  The tests check this against Lemma 9 of the
RTM paper (``T(P, Q) = p f + (1 - p)(1 - alpha)`` for one step).

Certified bracket.  ``dp_accounting``'s pessimistic PMF (connect-the-dots, Doroshenko et al.
2022) is a dominating pair: its curve lies on or below the exact one, so its gamma is an upper
bound.  An optimistic PMF (every loss rounded down to the lattice, truncated tails dropped) has
a hockey-stick divergence ``H(t) = E_B[(1 - t e^{-L})^+]`` below the true one for every t, and
so does its composition (the integrand is non-decreasing in L and convolution keeps the
stochastic order); since ``gamma(kappa) = inf_t kappa t + H(t)`` (Neyman-Pearson with LP
duality), its gamma is a lower bound.  The curves read off both by :func:`breakpoints` are
piecewise linear in alpha exactly as that infimum is, so ``gamma_lower <= gamma <=
gamma_upper`` holds up to floating-point rounding in the FFT convolutions (about 1e-15 per
lattice point, far below any width we report).  Rounding down shifts every step's loss by up to
one lattice spacing h, so the optimistic side is first order in N h: pick ``discretization``
well below ``1 / N`` times the width you need, or use :mod:`fdp.groundtruth` for a tight bracket.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from dp_accounting.pld import common as _common
from dp_accounting.pld import privacy_loss_distribution as _pld
from scipy.special import logsumexp

from .tradeoff import PiecewiseLinear, TradeOffCurve, lower_convex_envelope, symmetrise
from .validation import (
    ResourceLimitError,
    check_open_unit,
    check_positive,
    check_positive_int,
    check_sampling_rate,
)

__all__ = [
    "MECHANISMS",
    "DIRECTIONS",
    "mechanism_pld",
    "compose",
    "breakpoints",
    "tradeoff_curve",
    "Bracket",
    "tradeoff_bracket",
    "MAX_LATTICE_POINTS",
    "MAX_ONE_STEP_POINTS",
    "lattice_points",
    "check_lattice_points",
]

# The largest loss lattice we allocate: its FFT composition holds a few complex arrays of this
# length (16 bytes a point each), about 1.6 GB at 2^25 points, inside a 4 GB budget.
MAX_LATTICE_POINTS = 2**25
# dp_accounting builds a one-step lattice at about 5 us a point: 4e6 points stay near 20 s
MAX_ONE_STEP_POINTS = 4 * 10**6
_TRUNCATION_Z = 10.0  # dp_accounting cuts Gaussian noise at about 9.7 sd (mass e^-50)
# B-mass the lower-tail repair may add beyond what the PMF leaves free (round-off of its total)
REPAIR_ROUNDOFF = 1e-12

MECHANISMS = ("gaussian", "laplace")
DIRECTIONS = ("add", "remove", "symmetrised")


def _check_mechanism(mechanism) -> str:
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}")
    return mechanism


def _check_direction(direction) -> str:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    return direction


def _one_step_loss(mechanism: str, scale: float, p: float) -> tuple[np.ndarray, np.ndarray]:
    """One step's privacy loss on a grid over the noise, with its log-probabilities under H1 (an estimate)."""
    x = np.linspace(-_TRUNCATION_Z * scale, 1.0 + _TRUNCATION_Z * scale, 4001)
    if mechanism == "gaussian":
        z = (2.0 * x - 1.0) / (2.0 * scale * scale)
        log_p = -0.5 * (x / scale) ** 2
    else:
        z = (np.abs(x) - np.abs(x - 1.0)) / scale
        log_p = -np.abs(x) / scale
    if p == 1.0:
        loss = z
    else:  # log(1 - p + p e^z), with e^z overflow-free
        loss = np.where(z > 30.0, np.log(p) + z, np.log1p(p * np.expm1(np.minimum(z, 30.0))))
    log_q = log_p + loss  # H1 density: P's density times the likelihood ratio
    return loss, log_q - logsumexp(log_q)


def lattice_points(mechanism: str, scale: float, sampling_rate: float = 1.0, steps: int = 1,
                   discretization: float = 1e-4, tail: float = 1e-15) -> int:
    """Estimated length of the (composed) privacy-loss lattice of ``steps`` subsampled steps.

    One step spans the loss range of the noise cut at about 10 standard deviations (Laplace:
    ``2 / b``) in steps of ``discretization``.  A composition keeps the window of ``dp_accounting``'s
    ``self_convolve``: its Chernoff bound (``compute_self_convolve_bounds``, orders ``+-k / width``,
    k = 1..20, in loss units) evaluated on the grid distribution of one step's loss.  Used to refuse a
    computation before it allocates; the exact check on the built lattice follows before the FFT.
    """
    mechanism = _check_mechanism(mechanism)
    scale = check_positive("scale", scale)
    p = check_sampling_rate("sampling_rate", sampling_rate)
    steps = check_positive_int("steps", steps)
    h = check_positive("discretization", discretization)
    loss, log_w = _one_step_loss(mechanism, scale, p)
    width = float(np.ptp(loss))
    one = width / h + 1.0
    if steps == 1 or width == 0.0:
        return int(min(one, 1e300))
    shifted = loss - loss.min()
    low, high, log_tail = 0.0, steps * width, np.log(2.0 / tail)
    for k in range(1, 21):
        t = k / width
        high = min(high, (steps * logsumexp(t * shifted + log_w) + log_tail) / t)
        low = max(low, -(steps * logsumexp(-t * shifted + log_w) + log_tail) / t)
    return int(min((high - low) / h + 1.0, steps * one, 1e300))


def check_lattice_points(points: float, what: str, hint: str, limit: int = MAX_LATTICE_POINTS) -> None:
    """ResourceLimitError if a lattice of ``points`` points exceeds ``limit`` (:data:`MAX_LATTICE_POINTS`:
    memory of the FFT composition; :data:`MAX_ONE_STEP_POINTS`: time of a one-step construction)."""
    if points > limit:
        gb = points * 48.0 / 2**30  # three complex128 FFT arrays
        raise ResourceLimitError(
            f"{what} would need a privacy-loss lattice of about {points:.3g} points (about {gb:.3g} GB), "
            f"above the limit of {limit:.3g} points (memory 4 GB, time about a minute): {hint}"
        )


def _check_composed(probs, steps: int, tail: float, what: str, hint: str) -> None:
    """The exact output length of ``self_convolve`` (its Chernoff window), checked before the FFT."""
    if steps > 1:
        low, high = _common.compute_self_convolve_bounds(np.asarray(probs, dtype=float), steps, tail)
        check_lattice_points(float(high - low + 1), what, hint)


def mechanism_pld(
    mechanism: str,
    scale: float,
    sampling_rate: float = 1.0,
    steps: int = 1,
    *,
    discretization: float = 1e-4,
    pessimistic: bool = True,
):
    """The ``dp_accounting`` PLD of ``steps``-fold Poisson-subsampled Gaussian or Laplace noise.

    Sensitivity 1, noise standard deviation (``"gaussian"``) or Laplace scale b (``"laplace"``)
    ``scale``, sampling rate ``sampling_rate`` (1 = no subsampling).  ``pessimistic=True`` uses
    connect-the-dots (a dominating pair: gamma from it is an upper bound); ``False`` rounds losses
    down (privacy buckets: a lower bound, see the module docstring).  Returns a
    ``dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution``.
    """
    mechanism = _check_mechanism(mechanism)
    scale = check_positive("scale", scale)
    p = check_sampling_rate("sampling_rate", sampling_rate)
    steps = check_positive_int("steps", steps)
    h = check_positive("discretization", discretization)
    what = f"{mechanism} noise {scale:g} with sampling rate {p:g}, {steps} steps, discretization {h:g}"
    hint = "use a larger discretization, fewer steps or more noise"
    check_lattice_points(lattice_points(mechanism, scale, p, 1, h), what + " (one step)", hint, MAX_ONE_STEP_POINTS)
    check_lattice_points(lattice_points(mechanism, scale, p, steps, h), what, hint)
    kwargs = dict(
        sensitivity=1.0,
        pessimistic_estimate=bool(pessimistic),
        value_discretization_interval=h,
        sampling_prob=p,
        use_connect_dots=bool(pessimistic),  # connect-the-dots exists for pessimistic PMFs only
    )
    if mechanism == "gaussian":
        one = _pld.from_gaussian_mechanism(scale, **kwargs)
    else:
        one = _pld.from_laplace_mechanism(scale, **kwargs)
    if steps == 1:
        return one
    # pylint: disable=protected-access
    for pmf in (one._pmf_remove, one._pmf_add):
        _check_composed(pmf.to_dense_pmf()._probs, steps, 1e-15, what, hint)
    return one.self_compose(steps)


def compose(plds):
    """Heterogeneous composition of PLDs built with the same discretisation and estimate type."""
    plds = list(plds)
    if not plds:
        raise ValueError("plds must hold at least one privacy-loss distribution")
    out = plds[0]
    for other in plds[1:]:
        out = out.compose(other)
    return out


def _pmf(pld, direction: str):
    """The dp_accounting PMF of the law of log(Q/P) under Q for our ``direction`` (see module doc)."""
    # pylint: disable=protected-access
    return (pld._pmf_remove if direction == "add" else pld._pmf_add).to_dense_pmf()


def breakpoints(pld, direction: str = "add", normalise: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints ``(alphas, betas)`` of the trade-off curve of a PLD, in ``direction`` "add" or "remove".

    The curve is exact for the discrete pair the PMF describes (module docstring): it starts at
    ``(0, 1 - m_inf)`` (``m_inf`` = mass at infinite loss), follows the Neyman-Pearson tests
    from the largest loss down, and ends at ``alpha = 1``.  Points with zero mass are skipped.

    A pessimistic PMF whose truncated lower tail dropped A-mass gets it back at its lowest loss
    (pessimistic).  Its total B-mass can exceed 1 by round-off s (1.5e-6 after 2,000 SGM steps); the
    curve then reaches 0 before alpha = 1, which forbids any finite mu-GDP.  ``normalise=True``
    rescales the B-mass to 1: a proper trade-off function, at most s above the pessimistic one.
    """
    direction = _check_direction(direction)
    if direction == "symmetrised":
        raise ValueError("breakpoints: direction must be 'add' or 'remove'; use tradeoff_curve for 'symmetrised'")
    pmf = _pmf(pld, direction)
    # pylint: disable=protected-access
    h = pmf._discretization
    return _lattice_breakpoints(
        pmf._lower_loss * h, h, pmf._probs, pmf._infinity_mass, pmf._pessimistic_estimate, normalise
    )


def _overflow_error(l_0: float) -> ValueError:
    return ValueError(
        "the privacy-loss lattice reaches losses whose likelihood ratio overflows double precision "
        f"(lowest loss {l_0:.4g}): the mechanism is too far from private for this read-off"
    )


def _lattice_breakpoints(
    l_0: float, h: float, masses, infinite: float, pessimistic: bool = True, normalise: bool = False,
    with_powers: bool = False,
):
    """Breakpoints of T(A, B) for Q-view ``masses`` of B at losses ``l_0 + k h`` and ``infinite`` at +inf.

    ``pessimistic`` says which side the measure bounds; it decides how a truncated lower tail is repaired.
    ``normalise`` rescales a total B-mass above 1 (round-off) to 1; see :func:`breakpoints`.
    ``with_powers`` also returns the breakpoints' powers ``B(L >= l) = 1 - beta`` as cumulative
    masses, without the cancellation of ``1 - beta`` near alpha = 0 (for gamma at tiny kappa).
    """
    probs = np.asarray(masses, dtype=float)
    losses = l_0 + np.arange(probs.size) * h
    keep = probs > 0  # FFT round-off can leave tiny negative entries: they carry no mass
    q, losses = probs[keep], losses[keep]
    m_inf = min(float(infinite), 1.0)
    # Truncating the lower tail (B-mass ~1e-15 at very negative losses) drops A-mass q e^{-l} that can
    # be large (5e-4 in that example), which would end the curve at beta = 0 before alpha = 1 (a
    # spurious A-atom at loss -inf).  Put the missing A-mass D at the lowest loss l_0, i.e. B-mass
    # D e^{l_0}: the dropped part had all its losses below l_0, so sum_i A_i (e^{l_i} - t)^+ <=
    # D (e^{l_0} - t)^+ and the hockey-stick divergence can only grow (pessimistic).
    # (An optimistic measure keeps the deficit: there it only lowers the curve's power.)
    # The B-mass D e^{l_0} must fit into what the PMF leaves free, 1 - m_inf - sum(q) (up to
    # round-off): for a mechanism far from private the lowest kept loss is positive and D is nearly
    # 1 (noise 1, rate 0.56, 1,000 steps: l_0 = 6.8, D e^{l_0} = 900).  Then only the free B-mass
    # goes to l_0 and the rest of D stays at loss -inf: the curve falls to 0 with slope -e^{l_0}
    # and stays there, below the true curve (whose slopes there are at most e^{l_0}): pessimistic.
    if q.size and pessimistic:
        with np.errstate(over="ignore"):  # exp(+-l) beyond double range: raised below
            deficit = 1.0 - float(np.sum(q * np.exp(-losses)))
            if deficit > 0:
                q = q.copy()
                free = max(0.0, 1.0 - min(float(infinite), 1.0) - float(np.sum(q)))
                needed = deficit * np.exp(losses[0])
                if not np.isfinite(needed):
                    raise _overflow_error(l_0)
                q[0] += min(needed, free + REPAIR_ROUNDOFF)
    # Round-off (connect-the-dots ends, long FFT compositions) can leave a total B-mass slightly above
    # 1 (1 + 1.5e-6 after 2,000 SGM steps). Kept, the curve is pessimistic but reaches beta = 0 before
    # alpha = 1; normalised, it is a proper trade-off function within that surplus of the exact one.
    total = float(np.sum(q))
    if not np.isfinite(total):
        raise _overflow_error(l_0)
    if normalise and q.size and m_inf + total > 1.0:
        q = q * ((1.0 - m_inf) / total)
    q, losses = q[::-1], losses[::-1]  # largest loss first
    power = np.minimum(m_inf + np.cumsum(q), 1.0)  # B(L >= l)
    alphas = np.minimum(np.cumsum(q * np.exp(-losses)), 1.0)  # A(L >= l) = sum b e^{-l}
    alphas = np.concatenate([[0.0], alphas])
    betas = np.concatenate([[1.0 - m_inf], 1.0 - power])
    powers = np.concatenate([[m_inf], power])
    # the last test rejects everywhere B has mass; beyond it only A-mass at loss -inf remains
    if alphas[-1] < 1.0:
        # An optimistic measure may have dropped A-mass (truncated tails): the exact curve is convex
        # with f(1) = 0, so it lies below the chord to (1, 0), which is therefore still an upper bound.
        alphas, betas = np.append(alphas, 1.0), np.append(betas, betas[-1] if pessimistic else 0.0)
        powers = np.append(powers, powers[-1] if pessimistic else 1.0)
    # equal alphas (tests that add only B-mass, or rounding at 1): keep the last, smallest beta
    last = np.r_[alphas[1:] > alphas[:-1], True]
    alphas, betas, powers = alphas[last], betas[last], powers[last]
    if not pessimistic:
        # the greatest convex minorant of an upper bound on a convex curve is still an upper bound,
        # and with f(0) <= 1, f(1) = 0 it is a valid trade-off function (f <= 1 - alpha)
        env_a, betas = lower_convex_envelope(alphas, betas)
        powers = powers[np.searchsorted(alphas, env_a)]  # the envelope's vertices are breakpoints
        alphas = env_a
    if not (np.all(np.isfinite(alphas)) and np.all(np.isfinite(betas))):
        raise _overflow_error(l_0)
    return (alphas, betas, powers) if with_powers else (alphas, betas)


def tradeoff_curve(pld, direction: str = "add", name: str | None = None, normalise: bool = False) -> PiecewiseLinear:
    """The trade-off curve of a PLD: ``"add"`` T(P, Q), ``"remove"`` T(Q, P), or ``"symmetrised"`` C(f, g).

    The symmetrised curve is the lower convex envelope of both directions and their inverses
    (Dong, Roth, Su 2022, Def. F.1): the DP guarantee of the mechanism under add/remove adjacency.
    """
    direction = _check_direction(direction)
    label = name or f"PLD ({direction})"
    if direction == "symmetrised":
        # min over both curves and their inverses (for a discretised PLD "remove" is only close to the
        # inverse of "add", and the guarantee must hold in both directions of the test).  Each is
        # convex and piecewise linear, so the envelope of their minimum is the envelope of all their
        # vertices: the breakpoints, the same swapped (the inverses), and (0, 1), (1, 0), where an
        # inverse's flat extensions end.
        add, remove = breakpoints(pld, "add", normalise), breakpoints(pld, "remove", normalise)
        alphas = np.concatenate([add[0], add[1], remove[0], remove[1], [0.0, 1.0]])
        betas = np.concatenate([add[1], add[0], remove[1], remove[0], [1.0, 0.0]])
        return PiecewiseLinear(*lower_convex_envelope(alphas, betas), name=label)
    return PiecewiseLinear(*breakpoints(pld, direction, normalise), name=label)


@dataclass(frozen=True)
class Bracket:
    """A lower and an upper trade-off curve that contain the exact curve: ``lower <= f <= upper``.

    ``lower`` comes from a pessimistic measure (a dominating pair), ``upper`` from an optimistic
    one.  :meth:`gamma` returns ``(gamma_lower, gamma_upper)`` = ``(1 - upper(kappa), 1 - lower(kappa))``.
    """

    lower: PiecewiseLinear
    upper: PiecewiseLinear
    discretization: float

    def gamma(self, kappa) -> tuple[np.ndarray, np.ndarray]:
        """Certified ``(gamma_lower, gamma_upper)`` of the ReRo bound at prior(s) ``kappa`` (in (0, 1))."""
        from .rero import gamma

        # rero.gamma is at least kappa: the trivial bound f(kappa) <= 1 - kappa holds for the exact curve
        g_low, g_up = gamma(self.upper, kappa), gamma(self.lower, kappa)
        return np.minimum(g_low, g_up), g_up

    def width(self, kappa) -> np.ndarray:
        """``gamma_upper - gamma_lower`` at ``kappa``."""
        low, up = self.gamma(kappa)
        return up - low


def _compose_lattice(l_0, h, masses, infinite, steps, pessimistic, tail):
    """N-fold composition of a lattice measure by FFT (``dp_accounting``'s ``self_convolve``).

    Mass cut off by the truncation (at most ``tail``) goes to +inf (pessimistic) or is dropped.
    """
    masses = np.asarray(masses, dtype=float)
    if steps == 1:
        return l_0, masses, infinite
    _check_composed(masses, steps, tail, f"composing {steps} steps on a lattice of spacing {h:g}",
                    "use fewer steps or a larger discretization")
    shift, out = _common.self_convolve(masses, steps, tail)
    out = np.clip(np.asarray(out, dtype=float), 0.0, None)
    finite = float(np.sum(masses)) ** steps  # finite part of the composed measure
    inf_mass = -np.expm1(steps * np.log1p(-min(infinite, 1.0))) if infinite > 0 else 0.0
    if pessimistic:
        inf_mass += max(finite - float(np.sum(out)), 0.0)
    return steps * l_0 + shift * h, out, inf_mass


def tradeoff_bracket(
    mechanism: str,
    scale: float,
    sampling_rate: float = 1.0,
    steps: int = 1,
    *,
    discretization: float = 1e-4,
    method: str = "lattice",
    direction: str = "add",
    kappa_min: float = 1e-7,
    max_grid: int = 20_000,
) -> Bracket:
    """Certified bracket of the curve of ``steps``-fold subsampled Gaussian/Laplace noise.

    ``method="lattice"`` (default, add direction only): the one-step measures of
    :func:`fdp.groundtruth.one_step_lattices` (a refinement and a garbling of the true pair on a
    loss lattice of spacing about ``discretization``, both with error second order in the
    spacing), composed by FFT.  Tails below ``1e-12 kappa_min / steps`` are cut.  The one-step
    lattice has at most ``max_grid`` points (its mpmath construction costs about 0.4 ms a point):
    for very large effect sizes the spacing grows beyond ``discretization`` and the bracket widens.

    ``method="dp_accounting"``: ``dp_accounting``'s pessimistic (connect-the-dots) and optimistic
    (rounded down) PLDs in any ``direction`` ("add", "remove" or "symmetrised"; symmetrising
    keeps the order).  Its optimistic side is first order in ``steps * discretization``, so the
    bracket is much wider for long compositions.
    """
    direction = _check_direction(direction)
    if method not in ("lattice", "dp_accounting"):
        raise ValueError(f"method must be 'lattice' or 'dp_accounting', got {method!r}")
    if method == "dp_accounting":
        curves = []
        for pessimistic in (True, False):
            pld = mechanism_pld(
                mechanism, scale, sampling_rate, steps, discretization=discretization, pessimistic=pessimistic
            )
            kind = "pessimistic" if pessimistic else "optimistic"
            curves.append(tradeoff_curve(pld, direction, name=f"{mechanism} PLD {kind} ({direction})"))
        return Bracket(lower=curves[0], upper=curves[1], discretization=float(discretization))

    from . import groundtruth

    if direction != "add":
        raise ValueError(f"method 'lattice' computes the add direction only, got direction={direction!r}")
    mechanism = _check_mechanism(mechanism)
    scale = check_positive("scale", scale)
    p = check_sampling_rate("sampling_rate", sampling_rate)
    steps = check_positive_int("steps", steps)
    h = check_positive("discretization", discretization)
    kappa_min = check_open_unit("kappa_min", kappa_min)
    max_grid = check_positive_int("max_grid", max_grid)
    tail = 1e-12 * kappa_min / steps
    width = groundtruth.loss_range(mechanism, scale, p, np.log(tail))
    grid = int(np.clip(np.ceil(width / h), 16, max_grid)) + 1
    check_lattice_points(
        lattice_points(mechanism, scale, p, steps, width / (grid - 1), tail),
        f"the certified bracket of {steps} steps ({mechanism} noise {scale:g}, sampling rate {p:g})",
        "use fewer steps or a larger discretization",
    )
    measures = groundtruth.one_step_lattices(mechanism, scale, p, grid, np.log(tail))
    curves = {}
    for side, (l_0, step_h, masses, infinite) in measures.items():
        pessimistic = side == "pessimistic"
        base, out, inf_mass = _compose_lattice(l_0, step_h, masses, infinite, steps, pessimistic, tail)
        name = f"{mechanism} lattice {side} (add)"
        a, b, pw = _lattice_breakpoints(base, step_h, out, inf_mass, pessimistic, with_powers=True)
        curves[side] = PiecewiseLinear(a, b, name=name, powers=pw)
    return Bracket(lower=curves["pessimistic"], upper=curves["optimistic"], discretization=width / (grid - 1))
