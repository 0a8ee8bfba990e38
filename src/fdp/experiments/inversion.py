"""The prior-oblivious gradient-based reconstruction attack (Hayes et al. 2023, Sec. 2, eq. 1), batched.

The adversary of Balle et al. (2022) sees every parameter vector ``theta_t`` and privatised gradient of a
full-batch DP-SGD run, subtracts the known points' clipped gradients, and looks for the input ``z`` whose
clipped gradient best explains what is left (the residual ``r_t``)::

    L(z) = sum_t  ||c_t g_t(z) - r_t||_1 - <c_t g_t(z), r_t>        (eq. 1, the label of the target known)

with ``c_t = min(1, C / ||g_t(z)||)``.  :class:`Eq1` evaluates ``L`` and its gradient for many targets
(each with its own training run) and many starting points at once.

Why it is fast.  Almost all of the cost is the first layer's block, ``sum_ti sum_j |a_ti z_j - R_tij|`` with
``a = c delta`` (h numbers per step) and ``R`` the residual's block (``T h d`` numbers).  With ``s = sign R``,
``|x| = -s x + 2 max(0, s x)`` for any sign ``s``, so::

    sum_j |a_i z_j - R_ij| = sum_j |R_ij| - a_i (S z)_i + 2 sum_{j in A_i} |a_i z_j - R_ij|,
    A_i = {j : s_ij (a_i z_j - R_ij) > 0}.

The first two terms are matrix products with fixed matrices (BLAS, shared by all starting points); ``A_i`` is
exact but small, because ``j`` can be in it only if ``R_ij`` lies between 0 and ``a_i`` (``z_j`` is in
[0, 1]): once each row of ``R`` is sorted, those ``j`` form one contiguous run, looked up in a table of each row's
crossings of a geometric grid of thresholds.  On the paper's MNIST set-up those candidates are about 0.01 % of the
block at eps = 1, 0.6 % at eps = 100 and 8 % at eps = 10^4 (``benchmarks/bench_inversion.py``).

References
----------
Hayes et al. (2023) Sec. 2, eq. 1, App. A; Balle, Cherubin, Hayes (2022).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from ..parallel import seed_sequence
from ..validation import check_open_unit, check_positive, check_positive_int
from . import dpsgd

__all__ = ["Eq1", "Inversion", "Search", "invert"]

#: The thresholds tau_g = C * ratio^-g (g < size) to which |a_i| is rounded up when the candidates are looked up: a
#: threshold at most 25 % above |a_i|, down to |a_i| = 1e-6 C
_GRID_RATIO = 1.25
_GRID_SIZE = 64
#: Candidates per block of owners in Eq1._active: about 0.5 MB per float array, within a core's 1 MB L2 cache
_BLOCK = 65_536


class Eq1:
    """Eq. (1) of Hayes et al. for ``R`` targets, each with its own run, and its gradient with respect to the input.

    Parameters
    ----------
    model : fdp.experiments.dpsgd.MLP
    params : array_like
        (R, T, P): ``theta_t`` of each target's run.
    residual : array_like
        (R, T, P): the privatised gradients minus the known points' clipped gradients.
    labels : array_like of int
        (R,): each target's label (known to the adversary, App. A).
    clip_norm : float
        C, > 0.
    precision : {"single", "double"}, default "single"
        Of the two products with the ``2 T h x d`` matrix that bound the cost (memory traffic): the first layer's
        pre-activations ``W1 z`` and the block's ``(S + R) z`` (and their transposes for the gradient).  On the paper's
        MNIST set-up single precision changes the loss by about 1e-8 of its size and the gradient by about 1e-6;
        "double" gives both to rounding (the tests' finite differences use it).

    Notes
    -----
    Memory: the stacked matrix (``2 T h d`` numbers in the chosen precision), the sorted residual's block with its
    order (``T h d`` floats and int32) and its table of grid crossings: about 16 MB per target for the paper's MNIST
    model and T = 100 in single precision, 22 MB in double; building it takes a few times that for a moment.
    The inputs ``z`` must lie in [0, 1]^d, the attack's box (the active entries are searched for under that bound).
    """

    def __init__(self, model: dpsgd.MLP, params, residual, labels, clip_norm: float, precision: str = "single"):
        params = np.asarray(params, dtype=np.float64)
        residual = np.asarray(residual, dtype=np.float64)
        if params.ndim != 3 or params.shape != residual.shape or params.shape[2] != model.size or min(params.shape[:2]) < 1:
            raise ValueError(f"params and residual must both be (R, T, {model.size}) with R, T >= 1, got {params.shape} and "
                             f"{residual.shape}")
        if not (np.all(np.isfinite(params)) and np.all(np.isfinite(residual))):
            raise ValueError("params and residual must be finite")
        labels = np.asarray(labels)
        if labels.shape != params.shape[:1] or not np.issubdtype(labels.dtype, np.integer):
            raise ValueError(f"labels must be {params.shape[0]} integers, got {labels!r}")
        if np.any((labels < 0) | (labels >= model.classes)):
            raise ValueError(f"labels must lie in [0, {model.classes - 1}], got {labels.tolist()}")
        self.model, self.clip_norm = model, check_positive("clip_norm", clip_norm)
        if precision not in ("single", "double"):
            raise ValueError(f"precision must be 'single' or 'double', got {precision!r}")
        self._dtype = np.float32 if precision == "single" else np.float64
        n, steps = params.shape[:2]
        h, d = model.hidden, model.d
        w1, self.b1, self.w2, self.b2 = model.unpack(params)
        r1, self.rb1, self.rw2, self.rb2 = model.unpack(residual)
        self.onehot = np.eye(model.classes)[labels][:, None, None, :]  # (R, 1, 1, k)
        sign = np.where(r1 >= 0.0, 1.0, -1.0)
        # one matrix product gives W1 z (the first layer) and (S + R) z (the dense part of the block's loss)
        self.stacked = np.concatenate([w1.reshape(n, steps * h, d), (sign + r1).reshape(n, steps * h, d)], axis=1).astype(self._dtype)
        self.l1_const = np.abs(r1).sum(axis=(1, 2, 3))  # (R,)
        rows = r1.reshape(-1, d)
        order = np.argsort(rows, axis=1, kind="stable")
        sorted_rows = np.take_along_axis(rows, order, axis=1)
        self.sorted_abs = np.abs(sorted_rows).ravel()
        self.sorted_j = order.astype(np.int32).ravel()
        # candidates for A: R_ij between 0 and a_i.  Per row, where the sorted entries cross 0 and +-tau_g on a geometric
        # grid of thresholds up to C (|a_i| <= C); a is rounded up to the grid, so the run found holds every candidate
        # (and one at infinity, for an |a_i| that rounding puts above C)
        grid = np.append(self.clip_norm * _GRID_RATIO ** np.arange(1 - _GRID_SIZE, 1), np.inf)
        offset = (np.arange(len(rows)) * d)[:, None]
        zero = (sorted_rows < 0.0).sum(axis=1, keepdims=True)  # where each sorted row crosses 0
        upper = np.array([np.searchsorted(row, grid, side="left") for row in sorted_rows])
        lower = np.array([np.searchsorted(row, -grid, side="right") for row in sorted_rows])
        self._far = (offset + np.concatenate([lower, upper], axis=1)).ravel()  # (rows, 2 (G + 1)): a_i < 0, then a_i >= 0
        self._zero = (offset + zero).ravel()
        self._row = np.arange(n * steps * h).reshape(n, steps, 1, h)
        # the second layer's weights and residual, also transposed: the products with them are batched matmuls
        self.w2t, self.rw2t = (np.ascontiguousarray(x.swapaxes(-1, -2)) for x in (self.w2, self.rw2))
        self.shape = (n, steps)

    def __call__(self, z):
        """``(loss (R, B), gradient (R, B, d))`` at inputs ``z`` (R, B, d): B starting points per target."""
        if np.asarray(z).dtype.kind not in "biuf":  # (complex or text would be cast with a warning at most)
            raise ValueError(f"z must be real numbers, got an array of {np.asarray(z).dtype}")
        z = np.asarray(z, dtype=np.float64)
        n, steps = self.shape
        h, d = self.model.hidden, self.model.d
        if z.ndim != 3 or z.shape[0] != n or z.shape[2] != d or z.shape[1] < 1:
            raise ValueError(f"z must be ({n}, B, {d}) with B >= 1, got shape {z.shape}")
        if not np.all((z >= 0.0) & (z <= 1.0)):  # also refuses NaN
            raise ValueError("z must lie in [0, 1] (the attack's box), got entries outside it")
        b = z.shape[1]
        prod = np.matmul(self.stacked, z.astype(self._dtype).transpose(0, 2, 1))  # (R, 2 T h, B)
        prod = np.ascontiguousarray(prod.reshape(n, 2, steps, h, b).transpose(1, 0, 2, 4, 3), dtype=np.float64)
        a = prod[0]
        a += self.b1[:, :, None, :]  # (R, T, B, h)
        mz = prod[1]  # (S + R) z
        hid, s = dpsgd.elu_parts(a)
        s2 = np.where(a < 0.0, s, 0.0)  # elu''
        o = np.matmul(hid, self.w2t)
        o += self.b2[:, :, None, :]
        p = dpsgd.softmax(o, inplace=True)
        e = p - self.onehot
        back = np.matmul(e, self.w2)  # W2^T e
        delta = s * back
        zsq = (z * z).sum(-1)[:, None, :]  # (R, 1, B)
        hsq1 = (hid * hid).sum(-1) + 1.0
        norm = np.sqrt(np.maximum((delta * delta).sum(-1) * (zsq + 1.0) + (e * e).sum(-1) * hsq1, 1e-300))
        c = np.minimum(1.0, self.clip_norm / norm)  # (R, T, B)
        cc = c[..., None]
        alpha = cc * delta  # the clipped first-layer gradient is alpha z^T
        corr, saz, sat_alpha = self._active(alpha, z)
        # the small blocks, dense: b1 (clipped gradient alpha), b2 (c e) and W2 (c e hid^T)
        ce = cc * e
        rb1, rb2 = self.rb1[:, :, None], self.rb2[:, :, None]
        d_b1, d_b2 = alpha - rb1, ce - rb2
        d_w2 = np.einsum("rtbk,rtbh->rtbkh", ce, hid)  # (faster than broadcasting over axes of 10)
        d_w2 -= self.rw2[:, :, None]
        l1_w2 = np.abs(d_w2).sum(axis=(-2, -1))
        sd_w2 = np.sign(d_w2)
        rw2_hid = np.matmul(hid, self.rw2t)
        sd_hid = np.matmul(sd_w2, hid[..., None])[..., 0]
        v_b1, v_b2 = np.sign(d_b1) - rb1, np.sign(d_b2) - rb2  # v = dL / d(clipped gradient)
        per_step = (np.abs(d_b1).sum(-1) - (alpha * (rb1 + mz)).sum(-1) + np.abs(d_b2).sum(-1) + l1_w2
                    - (ce * (rb2 + rw2_hid)).sum(-1))
        loss = self.l1_const[:, None] + per_step.sum(axis=1) + 2.0 * corr
        v_w1 = 2.0 * saz - mz + v_b1  # v_W1 z + v_b1, v_W1 = sign(alpha z^T - R) - R
        v_w2 = sd_hid - rw2_hid + v_b2  # v_W2 hid + v_b2
        vg = (alpha * v_w1).sum(-1) + (ce * v_w2).sum(-1)  # <v, clipped gradient>
        # through the clipping: u = c (v - proj g_clipped), proj = <v, g_clipped> / |g_clipped|^2 when clipped
        proj = np.where(norm > self.clip_norm, vg / np.maximum(c * norm, 1e-300) ** 2, 0.0)[..., None]
        m = cc * (v_w1 - proj * (zsq[..., None] + 1.0) * alpha)  # u_W1 z + u_b1
        n_vec = cc * (v_w2 - proj * hsq1[..., None] * ce)  # u_W2 hid + u_b2
        u_w2_e = np.matmul(e[..., None, :], sd_w2)[..., 0, :]  # U_W2^T e = c (v_W2^T e - proj (c e . e) hid)
        u_w2_e -= np.matmul(e, self.rw2)
        u_w2_e -= proj * (ce * e).sum(-1, keepdims=True) * hid
        u_w2_e *= cc
        v_o = n_vec + np.matmul(s * m, self.w2t)
        pv = p * v_o - p * (p * v_o).sum(-1, keepdims=True)  # softmax Jacobian
        d_a = s * (np.matmul(pv, self.w2) + u_w2_e) + s2 * back * m
        # W1^T d_a - (S + R)^T alpha in one product; then the active entries and the projection's z term
        rhs = np.stack([d_a, -alpha], axis=1).transpose(0, 3, 1, 2, 4).reshape(n, b, 2 * steps * h)
        grad = np.matmul(rhs.astype(self._dtype), self.stacked).astype(np.float64)
        grad += 2.0 * sat_alpha
        grad -= (c * proj[..., 0] * (alpha * delta).sum(-1)).sum(axis=1)[..., None] * z
        return loss, grad

    def _active(self, alpha, z):
        """The exact correction of the first-layer block over its active entries ``A``.

        Returns ``sum_A |a_i z_j - R_ij|`` per (target, start), ``(S o A) z`` (R, T, B, h) and
        ``(S o A)^T a`` summed over steps (R, B, d).  An entry is active iff ``|a_i| z_j > |R_ij|`` with ``R_ij``
        of the sign of ``a_i`` (``R_ij = 0`` counts as positive)."""
        n, steps, b, h = alpha.shape
        d = self.model.d
        mag = np.abs(alpha)
        g = np.ceil(np.log(np.maximum(mag, 1e-300) / self.clip_norm) / np.log(_GRID_RATIO) + 1e-9).astype(np.int64)
        g = np.clip(g + _GRID_SIZE - 1, 0, _GRID_SIZE)  # the smallest threshold >= |a_i|
        up = alpha >= 0.0
        far = self._far[self._row * (2 * _GRID_SIZE + 2) + (_GRID_SIZE + 1) * up + g]
        zero = np.broadcast_to(self._zero[self._row], alpha.shape)
        lo, hi = np.where(up, zero, far).ravel(), np.where(up, far, zero).ravel()
        counts = np.maximum(hi - lo, 0)
        ends = np.cumsum(counts)
        zbase = np.broadcast_to(((np.arange(n)[:, None] * b + np.arange(b)) * d)[:, None, :, None], alpha.shape).ravel()
        mag, zflat = mag.ravel(), z.ravel()
        per_owner = np.zeros((2, alpha.size))
        sat = np.zeros(n * b * d)
        # owners in blocks of about _BLOCK candidates: the block's arrays stay in the core's cache (1.6x at eps 10^4)
        cuts = np.searchsorted(ends, np.arange(_BLOCK, ends[-1], _BLOCK), side="right")
        for s, e in zip(np.r_[0, cuts], np.r_[cuts, alpha.size]):
            cnt = counts[s:e]
            stop = np.cumsum(cnt)
            if s == e or stop[-1] == 0:
                continue
            first = stop - cnt  # where each owner's candidates start in the block's flat list
            pos = np.repeat(lo[s:e] - first, cnt)
            pos += np.arange(stop[-1])
            col = np.repeat(zbase[s:e], cnt)
            col += np.take(self.sorted_j, pos)
            mag_rep = np.repeat(mag[s:e], cnt)
            zj = np.take(zflat, col)
            excess = mag_rep * zj
            excess -= np.take(self.sorted_abs, pos)  # > 0 exactly on A, where it is |a_i z_j - R_ij|
            act = excess > 0.0
            # per owner (a_i of one step, target and start): its candidates are one contiguous segment
            some = np.flatnonzero(cnt)
            per_owner[0, s + some] = np.add.reduceat(np.maximum(excess, 0.0, out=excess), first[some])
            per_owner[1, s + some] = np.add.reduceat(np.multiply(zj, act, out=zj), first[some])
            # sum over the active (i, t) of s_ij a_i = |a_i|
            sat += np.bincount(col, weights=np.multiply(mag_rep, act, out=mag_rep), minlength=n * b * d)
        corr = per_owner[0].reshape(alpha.shape).sum(axis=(1, 3))
        saz = np.where(up, 1.0, -1.0) * per_owner[1].reshape(alpha.shape)
        return corr, saz, sat.reshape(n, b, d)


@dataclass(frozen=True)
class Inversion:
    """What :func:`invert` found.

    Attributes
    ----------
    reconstructions : numpy.ndarray
        (R, d): per target, the start whose final loss is lowest.
    loss : numpy.ndarray
        (R,): eq. (1) at the reconstruction.
    iterations : numpy.ndarray
        (R,): Adam steps taken (the same for the targets optimised together).
    converged : numpy.ndarray
        (R,) booleans: whether the convergence test stopped the run (else ``max_iterations`` did).
    target_loss : numpy.ndarray or None
        (R,): eq. (1) at the true target, when known (:func:`fdp.experiments.reconstruction.gradient_reconstructions`
        sets it).  A reconstruction whose loss is lower than its target's shows that eq. (1) prefers other points to
        the target: its error is then mostly the objective's, not the optimisation's (longer runs may still lower
        it a little).
    """

    reconstructions: np.ndarray
    loss: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray
    target_loss: np.ndarray | None = None

    @staticmethod
    def concatenate(parts) -> "Inversion":
        """The targets of several :class:`Inversion` in order, as one."""
        fields = ("reconstructions", "loss", "iterations", "converged", "target_loss")
        return Inversion(*(None if any(getattr(p, f) is None for p in parts) else np.concatenate([getattr(p, f) for p in parts])
                           for f in fields))


@dataclass(frozen=True)
class Search:
    """The settings of :func:`invert`'s search, kept together (as :func:`fdp.experiments.reconstruction.gradient_reconstructions`
    passes them on).

    Parameters
    ----------
    restarts : int, default 5
    learning_rate : float, default 0.01
        Adam's step.
    max_iterations : int, default 10,000
    tolerance : float, default 0.01
        In (0, 1).
    check_every : int, default 50
    """

    restarts: int = 5
    learning_rate: float = 0.01
    max_iterations: int = 10_000
    tolerance: float = 0.01
    check_every: int = 50

    def __post_init__(self):
        object.__setattr__(self, "restarts", check_positive_int("restarts", self.restarts))
        object.__setattr__(self, "learning_rate", check_positive("learning_rate", self.learning_rate))
        object.__setattr__(self, "max_iterations", check_positive_int("max_iterations", self.max_iterations))
        object.__setattr__(self, "tolerance", check_open_unit("tolerance", self.tolerance))
        object.__setattr__(self, "check_every", check_positive_int("check_every", self.check_every))

    def keywords(self) -> dict:
        """The settings as :func:`invert`'s keyword arguments."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def invert(objective: Eq1, *, restarts: int = 5, learning_rate: float = 0.01, max_iterations: int = 10_000,
           tolerance: float = 0.01, check_every: int = 50, seed) -> Inversion:
    """Minimise eq. (1) over inputs in [0, 1]^d from ``restarts`` uniform random starts per target (Sec. 2, App. A).

    Adam (step ``learning_rate``; the paper runs 10^6 steps of plain gradient descent) projected onto the box, all
    targets and starts at once.  Every ``check_every`` steps the lowest loss reached so far by each start is compared
    with the one a check earlier: the run stops when, for every start, the last ``check_every`` steps gained at most
    ``tolerance`` times what all the steps before them gained (the objective stopped improving), or after
    ``max_iterations`` steps.

    Parameters
    ----------
    objective : Eq1
    restarts : int, default 5
    learning_rate : float, default 0.01
    max_iterations : int, default 10,000
    tolerance : float, default 0.01
        In (0, 1).
    check_every : int, default 50
    seed : int or numpy.random.SeedSequence

    Returns
    -------
    Inversion

    References
    ----------
    Hayes et al. (2023) Sec. 2, eq. 1, App. A.
    """
    restarts = check_positive_int("restarts", restarts)
    learning_rate = check_positive("learning_rate", learning_rate)
    max_iterations = check_positive_int("max_iterations", max_iterations)
    check_every = check_positive_int("check_every", check_every)
    tolerance = check_open_unit("tolerance", tolerance)
    n = objective.shape[0]
    z = np.random.default_rng(seed_sequence(seed)).random((n, restarts, objective.model.d))
    m1, m2 = np.zeros_like(z), np.zeros_like(z)
    loss, grad = objective(z)
    first = best = last_check = loss
    converged, i = False, 0
    while i < max_iterations:
        i += 1
        m1 = 0.9 * m1 + 0.1 * grad
        m2 = 0.999 * m2 + 0.001 * grad * grad
        z = np.clip(z - learning_rate * (m1 / (1 - 0.9**i)) / (np.sqrt(m2 / (1 - 0.999**i)) + 1e-8), 0.0, 1.0)
        loss, grad = objective(z)
        best = np.minimum(best, loss)
        if i % check_every == 0:
            # (<=: a start whose loss has not moved at all, on a flat objective, has converged too)
            converged = bool(np.all(last_check - best <= tolerance * (first - last_check)))
            last_check = best
            if converged:
                break
    pick = np.argmin(loss, axis=1)
    rows = np.arange(n)
    return Inversion(reconstructions=z[rows, pick], loss=loss[rows, pick], iterations=np.full(n, i),
                     converged=np.full(n, converged))
