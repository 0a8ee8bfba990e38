"""Float64 privacy-loss lattices: their size before they are built, their FFT composition, and the trade-off
breakpoints of a composed lattice.

Used by :mod:`fdp.accounting.pld` for the certified bracket and dp_accounting's PMFs, and by
:mod:`fdp.accounting.rtm` for the RTM curves of DP-SGD.  A lattice holds the masses of a privacy loss on the points
``l_0 + k h``; the pessimistic one rounds every operation towards more privacy loss, the optimistic one towards less
(:mod:`fdp.accounting.onestep` builds one step of each).  The size checks (:func:`lattice_points`,
:func:`check_lattice_points`, :func:`check_composed`) run before anything large is allocated, so a workload beyond
the memory budget is refused by name.  :func:`self_convolve` composes ``steps`` copies by an FFT whose rounding is
bounded (its low frequencies, where the error would matter, are computed directly), and :func:`breakpoints` turns a
composed lattice into the vertices of its trade-off curve.

The certified ground truth in exact arithmetic (mpmath and big integers) is :mod:`fdp.accounting.ground_truth`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.fft
from scipy.special import logsumexp

from ..curves.tradeoff import lower_convex_envelope
from ..result import Unpacks
from ..validation import (
    ResourceLimitError,
    check_discretization,
    check_open_unit,
    check_subsampled_range,
    spelled,
)
from .onestep import U
from .privacy_loss import Mechanism, log_ratio, subsampled, takes_mechanism

__all__ = [
    "lattice_points",
    "check_lattice_points",
    "check_composed",
    "composed_points",
    "compose",
    "self_convolve",
    "Breakpoints",
    "breakpoints",
    "overflow_error",
    "MAX_LATTICE_POINTS",
    "MAX_ONE_STEP_POINTS",
]

#: The largest loss lattice we allocate: its FFT composition holds a few complex arrays of this
#: length (16 bytes a point each), about 1.6 GB at 2^25 points, inside a 4 GB budget.
MAX_LATTICE_POINTS = 2**25
#: The largest one-step lattice: dp_accounting builds one at about 5 us a point, so 4e6 points stay near 20 s.
MAX_ONE_STEP_POINTS = 4 * 10**6
_TRUNCATION_Z = 10.0  # dp_accounting cuts Gaussian noise at about 9.7 sd (mass e^-50)
# B-mass the lower-tail repair may add beyond what the PMF leaves free (round-off of its total)
REPAIR_ROUNDOFF = 1e-12



def _one_step_loss(noise: str, scale: float, p: float) -> tuple[np.ndarray, np.ndarray]:
    """One step's privacy loss on a grid over the noise, with its log-probabilities under H1 (an estimate)."""
    x = np.linspace(-_TRUNCATION_Z * scale, 1.0 + _TRUNCATION_Z * scale, 4001)
    log_p = -0.5 * (x / scale) ** 2 if noise == "gaussian" else -np.abs(x) / scale
    loss = subsampled(log_ratio(noise, scale, x), p)
    log_q = log_p + loss  # H1 density: P's density times the likelihood ratio
    return loss, log_q - logsumexp(log_q)


@takes_mechanism
def lattice_points(mechanism: Mechanism, discretization: float = 1e-4, truncated_mass: float = 1e-15) -> int:
    """Estimated length of the (composed) privacy-loss lattice of ``steps`` subsampled steps.

    One step spans the loss range of the noise cut at about 10 standard deviations (Laplace:
    ``2 / b``) in steps of ``discretization``.  A composition keeps the window of ``dp_accounting``'s
    ``self_convolve``: its Chernoff bound (``compute_self_convolve_bounds``, orders ``+-k / width``,
    k = 1..20, in loss units) evaluated on the grid distribution of one step's loss.  Used to refuse a
    computation before it allocates; the exact check on the built lattice follows before the FFT.

    Parameters
    ----------
    mechanism : Mechanism
    discretization : float, default 1e-4
        Loss lattice spacing.
    truncated_mass : float, default 1e-15
        Mass cut off by the composition's window.

    Returns
    -------
    int

    Examples
    --------
    >>> lattice_points(Mechanism("gaussian", 1.0), 1e-2) < lattice_points(Mechanism("gaussian", 1.0, 1.0, 100), 1e-2)
    True
    """
    noise, noise_multiplier, p, steps = mechanism.args
    h = check_discretization("discretization", discretization)
    check_subsampled_range(noise_multiplier, p)
    loss, log_w = _one_step_loss(noise, noise_multiplier, p)
    width = float(np.ptp(loss))
    one = width / h + 1.0
    if steps == 1 or width == 0.0:
        return int(min(one, 1e300))
    shifted = loss - loss.min()
    low, high, log_tail = 0.0, steps * width, np.log(2.0 / check_open_unit("truncated_mass", truncated_mass))
    for k in range(1, 21):
        t = k / width
        high = min(high, (steps * logsumexp(t * shifted + log_w) + log_tail) / t)
        low = max(low, -(steps * logsumexp(-t * shifted + log_w) + log_tail) / t)
    return int(min((high - low) / h + 1.0, steps * one, 1e300))


def check_lattice_points(points: float, what: str, hint: str, limit: int = MAX_LATTICE_POINTS) -> None:
    """ResourceLimitError if a lattice of ``points`` points exceeds ``limit`` (:data:`MAX_LATTICE_POINTS`:
    memory of the FFT composition; :data:`MAX_ONE_STEP_POINTS`: time of a one-step construction).

    Parameters
    ----------
    points : float
        The lattice's (estimated) length.
    what : str
        What is being built, for the message.
    hint : str
        What the user can change, for the message.
    limit : int, default MAX_LATTICE_POINTS

    Returns
    -------
    None
    """
    if points > limit:
        raise ResourceLimitError(
            f"{what} would need a privacy-loss lattice of about {points:.3g} points, more than the {limit:.3g} this "
            f"package builds (the limit keeps one computation near a minute and within a 4 GB memory budget): {hint}"
        )


def chernoff_window(masses: np.ndarray, steps: int, tail: float) -> tuple[int, int]:
    """Indices ``(low, high)`` of the ``steps``-fold sum of a lattice measure with at most ``tail`` mass outside.

    The Chernoff bound ``P(S >= a) <= E[e^{t S}] e^{-t a}`` at the orders ``t = +-k / J`` (k = 1..20,
    J the one-step length, in index units), each side given ``tail / 2``: the window of
    ``dp_accounting``'s ``self_convolve`` (Doroshenko et al. 2022, supplement eq. 5), with the 40 log
    moment generating functions evaluated at once.

    Parameters
    ----------
    masses : numpy.ndarray
        One step's masses at indices 0, 1, ...
    steps : int
    tail : float
        Mass allowed outside (0: the whole range).

    Returns
    -------
    (low, high) : (int, int)
    """
    size = masses.size
    low, high = 0, (size - 1) * steps
    if tail <= 0.0:  # nothing may be cut: the whole range
        return low, high
    orders = np.concatenate([np.arange(-20, 0), np.arange(1, 21)]) / size
    j = np.flatnonzero(masses > 0)
    # |order * j| <= 20: the moment generating functions need no log-domain sums
    with np.errstate(divide="ignore"):  # an underflowed moment is -inf: its bound is then vacuous, and skipped
        log_mgf = np.log(np.exp(np.outer(orders, j)) @ masses[j])
    with np.errstate(over="ignore", invalid="ignore"):
        bounds = (steps * log_mgf + math.log(2.0 / tail)) / orders
    for order, bound in zip(orders.tolist(), bounds.tolist()):
        if math.isfinite(bound):
            if order > 0:
                high = min(high, math.ceil(bound))
            else:
                low = max(low, math.floor(bound))
    return low, high


def composed_points(probs, steps: int, tail: float) -> int:
    """Length of the ``steps``-fold composition of a lattice measure after :func:`compose` cuts tails of
    mass ``tail``: the window of ``dp_accounting``'s ``self_convolve`` (its Chernoff bound).

    Parameters
    ----------
    probs : array_like
        One step's lattice masses.
    steps : int
    tail : float

    Returns
    -------
    int
    """
    low, high = chernoff_window(np.asarray(probs, dtype=float), steps, tail)
    return int(high - low + 1)


def check_composed(probs, steps: int, tail: float, what: str, hint: str) -> None:
    """:func:`check_lattice_points` on the exact output length of :func:`compose`, before the FFT.

    Parameters
    ----------
    probs : array_like
        One step's lattice masses.
    steps : int
    tail : float
    what, hint : str
        For the message of :func:`check_lattice_points`.

    Returns
    -------
    None
    """
    if steps > 1:
        check_lattice_points(float(composed_points(probs, steps, tail)), what, hint)


def overflow_error(l_0: float) -> ValueError:
    """The error raised when a lattice's likelihood ratios ``e^l`` overflow double precision.

    Parameters
    ----------
    l_0 : float
        The lattice's lowest loss.

    Returns
    -------
    ValueError
    """
    return ValueError(
        "the privacy-loss lattice reaches losses whose likelihood ratio overflows double precision "
        f"(lowest loss {l_0:.4g}): the mechanism is too far from private for this read-off"
    )


@dataclass(frozen=True)
class Breakpoints(Unpacks):
    """The breakpoints of a lattice measure's trade-off curve T(A, B) (:func:`breakpoints`).

    Attributes
    ----------
    alphas : numpy.ndarray
        Type-I errors, increasing from 0 to 1.
    betas : numpy.ndarray
        Type-II errors ``beta = B(L < l)``, non-increasing.
    powers : numpy.ndarray
        The powers ``B(L >= l) = 1 - beta`` as cumulative masses (no cancellation of ``1 - beta`` near alpha = 0).
    """

    alphas: np.ndarray
    betas: np.ndarray
    powers: np.ndarray


def breakpoints(
    l_0: float, h: float, masses, infinite: float, pessimistic: bool = True, normalise: bool = False,
) -> Breakpoints:
    """Breakpoints of T(A, B) for Q-view ``masses`` of B at losses ``l_0 + k h`` and ``infinite`` at +inf.

    ``pessimistic`` says which side the measure bounds; it decides how a truncated lower tail is repaired.
    ``normalise`` rescales a total B-mass above 1 (round-off) to 1; see :func:`fdp.accounting.pld.breakpoints`.
    The breakpoints' powers ``B(L >= l) = 1 - beta`` come as cumulative masses too, without the cancellation of
    ``1 - beta`` near alpha = 0 (for gamma at tiny kappa).

    Parameters
    ----------
    l_0, h : float
        The lattice: losses ``l_0 + k h``.
    masses : array_like
        Q-view masses at the losses.
    infinite : float
        Mass at +inf.
    pessimistic : bool, default True
    normalise : bool, default False

    Returns
    -------
    Breakpoints
    """
    q, losses, m_inf = _repaired(l_0, h, masses, infinite, pessimistic, normalise)
    alphas, betas, power, m_inf = _cumulated(q, losses, m_inf, pessimistic)
    return _closed(alphas, betas, power, m_inf, pessimistic, l_0)


def _repaired(l_0: float, h: float, masses, infinite: float, pessimistic: bool, normalise: bool):
    """The positive masses and their losses, a truncated lower tail repaired (pessimistic) and a total above 1
    normalised (``normalise``): ``(q, losses, m_inf)``, largest loss first."""
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
                # where e^{l_0} overflows (an effect size far beyond any useful privacy) the A-mass stays at
                # loss -inf: that pair is a refinement too, so the curve stays on the pessimistic side
                if np.isfinite(needed):
                    q[0] += min(needed, free + REPAIR_ROUNDOFF)
    # Round-off (connect-the-dots ends, long FFT compositions) can leave a total B-mass slightly above
    # 1 (1 + 1.5e-6 after 2,000 SGM steps). Kept, the curve is pessimistic but reaches beta = 0 before
    # alpha = 1; normalised, it is a proper trade-off function within that surplus of the exact one.
    total = float(np.sum(q))
    if not np.isfinite(total):
        raise overflow_error(l_0)
    if normalise and q.size and m_inf + total > 1.0:
        q = q * ((1.0 - m_inf) / total)
    q, losses = q[::-1], losses[::-1]  # largest loss first
    return q, losses, m_inf


def _cumulated(q, losses, m_inf: float, pessimistic: bool):
    """The breakpoints' alphas, betas and powers as running sums from the largest loss down (no point at alpha 0),
    and the mass at +inf, which takes the B-mass of the breakpoints whose slopes overflow (pessimistic)."""
    # A(L >= l) = sum b e^{-l}, each term in logs: e^{-l} alone overflows at l < -709 where b e^{-l} need not; an
    # optimistic measure's A-mass (its losses rounded down) can pass 1 there: inf, clipped to alpha = 1 below
    with np.errstate(over="ignore"):
        alphas = np.cumsum(np.exp(np.log(q) - losses))
    if pessimistic:
        # breakpoints at alpha below 1e-280 (far from private) have slopes beyond the float range: their B-mass
        # moves up to +inf (the curve of that measure lies below; it starts at (0, 1 - m_inf), lower)
        cut = int(np.searchsorted(alphas, _TINY_ALPHA))
        if cut:
            m_inf = min(m_inf + float(np.sum(q[:cut])), 1.0)
            q, losses = q[cut:], losses[cut:]
            with np.errstate(over="ignore"):
                alphas = np.cumsum(np.exp(np.log(q) - losses))
    alphas = np.minimum(alphas, 1.0)
    power = np.minimum(m_inf + np.cumsum(q), 1.0)  # B(L >= l)
    betas = 1.0 - power
    if pessimistic and q.size:
        # Where beta is small, 1 - power cancels: its rounding (1e-16 absolute) is noise in the slopes of a
        # curve whose steps are 1e-14 (non-convex; beta = 1e-10 needs them).  The same beta is the total's
        # deficit plus the mass below: (1 - m_inf - S) + B(L < l), with S pushed up by a bound on numpy's
        # pairwise rounding (blocks of 128 in 8 accumulators, then halving: (16 + log2 n) u; pessimistic);
        # the deficit is negative when round-off left excess mass.
        deficit = (1.0 - m_inf) - float(np.sum(q)) * (1.0 + 2.0 * U * (32.0 + math.log2(q.size + 1)))
        below = np.concatenate([np.cumsum(q[:0:-1])[::-1], [0.0]])  # B-mass strictly below each loss
        small = power > 0.5
        betas[small] = np.maximum(deficit + below[small], 0.0)
        betas = np.minimum.accumulate(betas)  # the two forms meet within rounding at beta = 1/2
        # and the powers there from these betas, rounded up: the running sum from the top carries the rounding
        # of every term (2e-14 below 1 after 300,000 cells, a TPR bound below the truth)
        power = np.where(small, np.minimum(np.nextafter(1.0 - betas, 2.0), 1.0), power)
    return alphas, betas, power, m_inf


def _closed(alphas, betas, power, m_inf: float, pessimistic: bool, l_0: float) -> Breakpoints:
    """The curve from (0, 1 - m_inf) through the breakpoints to alpha = 1, equal alphas merged, an optimistic curve
    replaced by its convex minorant."""
    alphas = np.concatenate([[0.0], alphas])
    betas = np.concatenate([[1.0 - m_inf], betas])
    powers = np.concatenate([[m_inf], power])
    if pessimistic:  # the two forms of beta meet within rounding at the first point too (far from private, m_inf > 1/2)
        lowered = np.minimum.accumulate(betas)
        moved = lowered < betas  # a lower beta has a higher power (1e-12 apart at noise 0.02, rate 0.5, 2 steps)
        powers[moved] = np.maximum(powers[moved], 1.0 - lowered[moved])
        betas = lowered
    # the last test rejects everywhere B has mass; beyond it only A-mass at loss -inf remains
    if alphas[-1] < 1.0:
        # An optimistic measure may have dropped A-mass (truncated tails): the exact curve is convex
        # with f(1) = 0, so it lies below the chord to (1, 0), which is therefore still an upper bound.
        alphas, betas = np.append(alphas, 1.0), np.append(betas, betas[-1] if pessimistic else 0.0)
        powers = np.append(powers, powers[-1] if pessimistic else 1.0)
    elif not pessimistic:
        # A-mass implied by Q-mass moved to smaller losses can reach 1 before all B-mass (which an
        # optimistic measure may have lost a little of) is rejected; for the same reason, the chord
        # from the last breakpoint to (1, 0) is still an upper bound.
        betas[-1], powers[-1] = 0.0, 1.0
    # equal alphas (tests that add only B-mass, or rounding at 1): keep the last, smallest beta
    last = np.r_[alphas[1:] > alphas[:-1], True]
    alphas, betas, powers = alphas[last], betas[last], powers[last]
    if not pessimistic:
        # breakpoints at alpha below 1e-280 have slopes beyond the float range; dropping vertices of a convex
        # curve that lies above the exact one leaves a curve (the chords) that lies higher still
        tiny = (alphas > 0.0) & (alphas < _TINY_ALPHA)
        alphas, betas, powers = alphas[~tiny], betas[~tiny], powers[~tiny]
        # the greatest convex minorant of an upper bound on a convex curve is still an upper bound,
        # and with f(0) <= 1, f(1) = 0 it is a valid trade-off function (f <= 1 - alpha)
        env_a, betas = lower_convex_envelope(alphas, betas)
        powers = powers[np.searchsorted(alphas, env_a)]  # the envelope's vertices are breakpoints
        alphas = env_a
    if not (np.all(np.isfinite(alphas)) and np.all(np.isfinite(betas))):
        raise overflow_error(l_0)
    return Breakpoints(alphas, betas, powers)




_TINY_ALPHA = 1e-280  # a pessimistic curve's breakpoints below this alpha go to +inf (their slopes overflow)
_LOW_FREQUENCY_WORK = 2**21  # most products (frequencies x masses) of the direct low-frequency transform
_REST_SHARE = 1e-7  # share of the total mass whose low frequencies come from an FFT (the smallest masses)
_LOW_FREQUENCY_STEPS = 512  # fewer steps: the FFT's own power is used (its error N u is small)
_PI_LOW = 1.2246467991473532e-16  # pi - float(pi)


def _half_angle(residues: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``(sin(theta / 2), sin(theta))`` for ``theta = 2 pi r / n`` with the integer residues r reduced to [-n/2, n/2]."""
    turns = np.where(2 * residues > size, residues - size, residues) / size  # in [-1/2, 1/2], one rounding
    # sin(pi t) with pi = float(pi) + 1.22e-16: the rounding of pi would shift every angle alike, an
    # error that adds up coherently over the masses (and is then multiplied by N)
    sin_t, cos_t, low = np.sin(np.pi * turns), np.cos(np.pi * turns), _PI_LOW * turns
    half = sin_t + cos_t * low
    return half, 2.0 * half * (cos_t - sin_t * low)  # sin 2x = 2 sin x cos x


def _low_frequencies(masses: np.ndarray, steps: int, size: int, power_modulus: np.ndarray):
    """``F_k^N`` at the low frequencies ``k < K`` to a relative error of about ``u`` instead of ``N u``.

    An FFT gives ``F_k = sum_j m_j e^{-2 pi i j k / n}`` to about ``u`` absolute, which the N-th power
    turns into a relative error ``N u`` where ``|F_k| ~ 1`` (the low frequencies, which carry the
    composed measure's mass).  Here ``F_k = e^{-2 pi i j_0 k / n} (S - c_k - i s_k)`` with the
    centre ``j_0``, ``S = sum m_j``, ``c_k = sum m_j 2 sin^2(theta / 2)`` and ``s_k = sum m_j sin theta``
    (``theta = 2 pi (j - j_0) k / n``, reduced exactly as an integer), all sums of well-conditioned
    terms, and ``F_k^N = exp(N [log S + log1p(-(c_k + i s_k) / S)])`` with an accurate complex
    ``log1p`` and ``log S`` from S in double-double (S rounded to a double would alone be off by
    ``N u / 2``); the phase ``N j_0 k`` is reduced modulo n in integers.  The relative error of
    ``F_k^N`` is then at most about ``2 N u (c_k + sum m_j |sin theta|) / S + 16 u`` (measured against mpmath:
    below a fifth of that), which is small where ``|F_k|`` is near 1.  Only the bulk of the masses is
    summed directly: the smallest ones, together at most :data:`_REST_SHARE` (1e-7) of S, go through
    an FFT of their own, whose absolute error (about ``u log2(n)`` times their sum) enters the model
    as ``8 N u log2(n) share``; on a 50,000-point lattice the bulk is a few thousand points, and the
    sines come from a table of the n residues when that is cheaper.  ``K`` is the first frequency with
    ``|F_k|^N < 1e-12 S^N`` (from the FFT), at most what :data:`_LOW_FREQUENCY_WORK` allows; none
    below :data:`_LOW_FREQUENCY_STEPS` steps (there ``N u`` is small).

    Returns
    -------
    (k, F_k^N, relative error of F_k^N in units of u) : numpy.ndarray
    """
    if steps < _LOW_FREQUENCY_STEPS:  # the FFT power's N u is small: not worth the direct transform
        return np.arange(0), np.zeros(0, dtype=complex), np.zeros(0)
    j = np.flatnonzero(masses > 0)
    m = masses[j]
    # the smallest masses, together at most _REST_SHARE of the total, go through an FFT of their own
    # (its absolute error, about u log2(n) times their sum, is negligible); the bulk is summed directly
    order = np.argsort(m)
    cut = int(np.searchsorted(np.cumsum(m[order]), _REST_SHARE * float(np.sum(m)), side="right"))
    rest = np.zeros(size)
    rest[j[order[:cut]]] = m[order[:cut]]
    rest_total = float(np.sum(m[order[:cut]]))  # its rounding, ~u log2(J) of 1e-7 S, is in the model below
    j, m = j[order[cut:]], m[order[cut:]]
    # S = total + residual to double-double (fsum is fast on the bulk's narrow range of magnitudes)
    total = math.fsum([*m.tolist(), rest_total])
    residual = math.fsum([*m.tolist(), rest_total, -total])
    log_total = (math.log1p(total - 1.0) if 0.5 < total < 2.0 else math.log(total)) + residual / total
    small = np.flatnonzero(power_modulus < 1e-12 * total**steps)
    limit = max(1, _LOW_FREQUENCY_WORK // max(j.size, 1))
    count = int(min(small[0] if small.size else power_modulus.size, limit, power_modulus.size))
    k = np.arange(count)
    centre = int(round(float(np.dot(j, m)) / float(np.sum(m))))
    # theta_jk = 2 pi ((j - j_0) k mod n) / n, the integer product reduced before the float conversion
    residues = np.mod(np.outer(k, j - centre), size)
    if residues.size > size:  # fewer sines through a table of all n residues (the same values)
        half_table, sine_table = _half_angle(np.arange(size), size)
        half, sine = half_table[residues], sine_table[residues]
    else:
        half, sine = _half_angle(residues, size)
    # pairwise sums (numpy's reduction): error about u log2(J) of the sum of |terms|, not u sqrt(J) as a dot product
    c = np.sum(2.0 * half * half * m, axis=1)
    s_k = np.sum(sine * m, axis=1)
    spread = (np.sum(np.abs(sine) * m, axis=1) + c + 4.0 * math.log2(size) * rest_total) / total
    if cut:
        # F_k = e^{-i phi_k} (S - c_k - i s_k) with the rest's transform G_k moved into the centre's frame
        half, sine = _half_angle(np.mod(centre * k, size), size)
        g = scipy.fft.rfft(rest)[:count] * ((1.0 - 2.0 * half * half) + 1j * sine)
        c = c + (rest_total - g.real)
        s_k = s_k - g.imag
    # log1p(z) for z = x + i y: real part log1p(x (2 + x) + y^2) / 2, imaginary part atan2(y, 1 + x)
    x, y = -c / total, -s_k / total
    log_real = log_total + 0.5 * np.log1p(x * (2.0 + x) + y * y)
    phase = steps * np.arctan2(y, 1.0 + x) - 2.0 * np.pi * (np.mod(centre * k * steps, size) / size)
    value = np.exp(steps * log_real) * np.exp(1j * phase)
    return k, value, 2.0 * steps * spread + 16.0


def _spectral_power(z: np.ndarray, n: int) -> np.ndarray:
    """``z**n`` by repeated squaring (numpy's complex power goes through exp and log for n >= 100, 2x slower).

    Each product adds a relative error of at most ``sqrt(5) u``, which later squarings double: at worst
    about ``sqrt(5) n u`` in all, measured 0.43 n u against mpmath at n = 2,000, which the ``n u`` that
    the rounding model of :func:`self_convolve` assigns to ``F_k^N`` (an estimate, with a factor 8 of
    safety) covers.
    """
    result, base = None, z
    while n:
        if n & 1:
            result = base if result is None else result * base
        n >>= 1
        if n:
            base = base * base
    return result


def self_convolve(masses, steps: int, tail: float, window: tuple[int, int] | None = None) -> tuple[int, np.ndarray, float]:
    """The ``steps``-fold convolution of a lattice measure by one real FFT: ``(low, out, per_coefficient)``.

    ``out[i]`` is the mass at lattice index ``low + i`` of the N-fold sum.  The window ``[low, high]``
    is ``dp_accounting``'s Chernoff bound (mass outside at most ``tail``); that mass wraps around into
    the window (the FFT is cyclic).  ``per_coefficient`` estimates the largest absolute rounding error
    of one coefficient.  The dominant error is not visible in the output: each spectral value
    ``F_k`` carries a relative error of about ``u``, which the power amplifies to ``N u |F_k|^N``;
    near zero frequency ``|F_k|`` is about 1, so the inverse transform spreads a smooth offset of
    about ``(2 / n) sum_k N u |F_k|^N`` over all n coefficients (every coefficient is shifted alike,
    so negative outputs, the usual symptom, need not appear).  The estimate is four times
    ``(2 / n) sum_k (N + log2 n) u |F_k|^N`` (the inverse transform's own rounding is the
    ``log2 n`` term); against exact direct convolutions it exceeds the largest error by 8 to 74x
    (tests).  The powers are taken by repeated squaring (``_spectral_power``, within the ``N u``
    of the model) and the low frequencies directly (``_low_frequencies``).  Negative
    coefficients are set to 0.

    Parameters
    ----------
    masses : numpy.ndarray
        One step's masses.
    steps : int
        N >= 2.
    tail : float
        Largest mass outside the window.
    window : (int, int), optional
        The window ``(low, high)`` if already computed (default: the Chernoff bound).

    Returns
    -------
    (low, out, per_coefficient) : (int, numpy.ndarray, float)

    References
    ----------
    Koskela, Jalko, Honkela (2020) (FFT composition); Doroshenko et al. (2022) (the Chernoff window).
    """
    low, high = window if window is not None else chernoff_window(masses, steps, tail)
    length = int(high - low + 1)
    size = scipy.fft.next_fast_len(max(length, masses.size), real=True)
    spectrum = scipy.fft.rfft(masses, size)
    with np.errstate(under="ignore"):
        powered = _spectral_power(spectrum, steps)
        relative = np.full(powered.size, float(steps))  # relative error of F_k^N in units of u
        low_k, low_power, low_relative = _low_frequencies(masses, steps, size, np.abs(powered))
        powered[: low_k.size], relative[: low_k.size] = low_power, low_relative
        # the inverse transform spreads each spectral error over all n coefficients (2 / n: the half
        # spectrum stands for both halves); its own rounding is about log2(n) u |G_k|
        per_coefficient = 8.0 * U * float(np.sum((relative + math.log2(size)) * np.abs(powered))) / size
    out = scipy.fft.irfft(powered, size)
    out = np.roll(out, -int(low))[:length]
    return int(low), np.maximum(out, 0.0), per_coefficient


def compose(l_0, h, masses, infinite, steps, pessimistic, tail):
    """N-fold composition of a lattice measure by FFT (:func:`self_convolve`).

    Pessimistic: every coefficient is raised by the estimated rounding of one coefficient (so every
    tail sum dominates the exact one, and the excess lies where the coefficients are rather than at
    +inf) and the mass beyond the window (at most ``tail``) goes to +inf.  Optimistic: both are
    returned as ``rounding`` (the window length times the per-coefficient estimate, plus ``tail``), to
    be subtracted from what the measure bounds from below.

    Parameters
    ----------
    l_0, h : float
        The lattice: losses ``l_0 + k h``.
    masses : array_like
        One step's Q-view masses.
    infinite : float
        One step's mass at +inf.
    steps : int
    pessimistic : bool
        Where truncated mass goes.
    tail : float
        Largest mass cut off.

    Returns
    -------
    (l_0, masses, infinite, rounding)
        The composed lattice measure (same spacing h) and, optimistic only, the absolute slack of its
        hockey-stick divergence (0 when pessimistic or for one step).

    References
    ----------
    Koskela, Jalko, Honkela (2020) (FFT composition); ``dp_accounting``'s ``self_convolve``.
    """
    masses = np.asarray(masses, dtype=float)
    if steps == 1:
        return l_0, masses, infinite, 0.0
    window = chernoff_window(masses, steps, tail)  # once: the check and the FFT share it
    check_lattice_points(float(window[1] - window[0] + 1), f"composing {steps} steps on a lattice of spacing {h:g}",
                         f"use fewer {spelled('steps')} or a larger {spelled('discretization')}")
    shift, out, per_coefficient = self_convolve(masses, steps, tail, window)
    with np.errstate(divide="ignore"):  # all mass at +inf: log1p(-1) = -inf, and the composition's is 1
        inf_mass = -np.expm1(steps * np.log1p(-min(infinite, 1.0))) if infinite > 0 else 0.0
    if pessimistic:
        # every coefficient raised by its rounding bound: every tail sum then dominates the exact one
        # (the excess lies where the coefficients are, not at +inf, so the curve's ends keep their digits)
        return steps * l_0 + shift * h, out + per_coefficient, inf_mass + tail, 0.0
    return steps * l_0 + shift * h, out, inf_mass, out.size * per_coefficient + tail
