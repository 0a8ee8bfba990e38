"""The gradient-based reconstruction attack (eq. 1 of Hayes et al.): the batched attack vs the book's former one.

Both run here, in the same process, on the same runs: the paper's MNIST set-up (784 -> 10 -> 10, |D_-| = 999,
T = 100 full-batch steps, C = 0.1, step size 10), 5 targets, 5 restarts (App. A), at eps 1, 100 and 10^4 (delta
1e-5).  We report restart-iterations per second (one Adam step of one starting point of one target) of

* the former attack (before issue 35): per target, eq. (1) and its gradient computed densely, forming every
  clipped first-layer gradient ``c_t delta_t z^T`` (T h d numbers per start), in a loop over targets;
* ours: :class:`fdp.experiments.inversion.Eq1` and :func:`~fdp.experiments.inversion.invert`, all targets and
  starts at once, the first-layer block as two matrix products plus its exact active entries.

The goal of issue 35 is 20x.  Measured on the 2-core machine (2026-11-28, two runs; the former's time varies by
about 15 % between runs): 16.7-17.3x at eps 1, 12.6-13.6x at 100, 6.3-6.7x at 10^4.  Two costs bound ours.  The two
products with the ``2 T h x d`` matrix (0.2 ms per restart-iteration with 5 restarts: OpenBLAS's gemm with 5 columns
runs at about 30 GFLOP/s on both cores, and with one restart each product is a memory-bound gemv).  And the active
entries, whose count grows with eps: candidates are about 0.01 % of the block at eps 1, 0.6 % at 100, 9 % at 10^4
(1.7 million per call here, about 9 ns each in numpy even in cache-sized blocks), and along a run at 10^4 about 2 % of
the block stays active at the optimum (the kink of the L1 term, where the residual's entries lie between 0 and the
reconstruction's), so an exact evaluation cannot skip them.  With the active entries left out (measured with them
stubbed) a call still costs about 0.39 ms per restart-iteration, the products and the small dense blocks: about 20x
the former, the ceiling of this design in numpy at any eps.
Run with ``make bench``.
"""

from __future__ import annotations

import numpy as np

from fdp import Mechanism
from fdp.curves import gdp
from fdp.experiments import datasets, dpsgd, inversion
from timing import best_of


def former_loss(model, params, residual, z, label, clip_norm):
    """Eq. (1) and its input gradient for one target, dense (the book's code before issue 35)."""
    w1, b1, w2, b2 = model.unpack(params)
    r_w1, r_b1, r_w2, r_b2 = model.unpack(residual)
    onehot = np.eye(model.classes)[label]
    a = np.einsum("thd,bd->tbh", w1, z) + b1[:, None, :]
    hid, s = dpsgd.elu_parts(a)
    s2 = np.where(a < 0.0, s, 0.0)
    p = dpsgd.softmax(np.einsum("tkh,tbh->tbk", w2, hid) + b2[:, None, :])
    e = p - onehot
    back = np.einsum("tkh,tbk->tbh", w2, e)
    delta = s * back
    norm = np.sqrt(np.maximum((delta * delta).sum(-1) * ((z * z).sum(-1) + 1.0) + (e * e).sum(-1) * ((hid * hid).sum(-1) + 1.0), 1e-300))
    c = np.minimum(1.0, clip_norm / norm)
    blocks = ((c[..., None, None] * delta[..., :, None] * z[None, :, None, :], r_w1[:, None]), (c[..., None] * delta, r_b1[:, None]),
              (c[..., None, None] * e[..., :, None] * hid[..., None, :], r_w2[:, None]), (c[..., None] * e, r_b2[:, None]))
    flat = lambda x: x.reshape(x.shape[:2] + (-1,)).sum(-1)  # noqa: E731
    loss = sum(flat(np.abs(g - r)) - flat(g * r) for g, r in blocks).sum(axis=0)
    v = [np.sign(g - r) - r for g, r in blocks]
    vg = sum(flat(vi * g) for vi, (g, _) in zip(v, blocks))
    proj = np.where(norm > clip_norm, vg / np.maximum(c * norm, 1e-300) ** 2, 0.0)
    u_w1, u_b1, u_w2, u_b2 = [c.reshape(c.shape + (1,) * (vi.ndim - 2)) * (vi - proj.reshape(proj.shape + (1,) * (vi.ndim - 2)) * g)
                              for vi, (g, _) in zip(v, blocks)]
    m = np.einsum("tbhd,bd->tbh", u_w1, z) + u_b1
    v_o = np.einsum("tbkh,tbh->tbk", u_w2, hid) + u_b2 + np.einsum("tkh,tbh->tbk", w2, s * m)
    pv = p * v_o - p * (p * v_o).sum(-1, keepdims=True)
    d_a = s * np.einsum("tkh,tbk->tbh", w2, pv) + s2 * back * m + s * np.einsum("tbkh,tbk->tbh", u_w2, e)
    return loss, np.einsum("thd,tbh->bd", w1, d_a) + np.einsum("tbhd,tbh->bd", u_w1, delta)


def former_attack(model, params, residual, labels, clip_norm, restarts, iterations, seed):
    """Adam on each target in turn (the book's former loop), the same update as :func:`inversion.invert`."""
    out = []
    for r in range(len(labels)):
        z = np.random.default_rng(seed).random((restarts, model.d))
        m1, m2 = np.zeros_like(z), np.zeros_like(z)
        for i in range(1, iterations + 1):
            _, g = former_loss(model, params[r], residual[r], z, labels[r], clip_norm)
            m1, m2 = 0.9 * m1 + 0.1 * g, 0.999 * m2 + 0.001 * g * g
            z = np.clip(z - 0.01 * (m1 / (1 - 0.9**i)) / (np.sqrt(m2 / (1 - 0.999**i)) + 1e-8), 0.0, 1.0)
        out.append(z)
    return np.array(out)


def main():
    data = datasets.mnist()
    order = np.random.default_rng(0).permutation(len(data.y))
    known, targets = order[:999], order[999:1004]
    model = dpsgd.MLP(784)
    labels = data.y[targets].astype(int)
    restarts, iterations = 5, 10
    print(f"MNIST 784-10-10, |D_-| = 999, T = 100, C = 0.1, {len(targets)} targets x {restarts} restarts, {iterations} Adam steps:")
    for eps in (1.0, 100.0, 1e4):
        sigma = np.sqrt(100) / gdp.mu_from_eps_delta(eps, 1e-5)
        run = dpsgd.Training(Mechanism("gaussian", sigma, 1.0, 100), clip_norm=0.1, learning_rate=10.0)
        trace = dpsgd.train(data.x[known], data.y[known], data.x[targets], data.y[targets], run, record=True, seed=1)
        params, residual = trace.params.transpose(1, 0, 2), (trace.noisy - trace.known).transpose(1, 0, 2)
        objective = inversion.Eq1(model, params, residual, labels, 0.1)
        z = np.random.default_rng(2).random((len(targets), restarts, 784))
        ours_loss = inversion.Eq1(model, params, residual, labels, 0.1, precision="double")(z)[0]
        former = np.array([former_loss(model, params[r], residual[r], z[r], labels[r], 0.1)[0] for r in range(len(targets))])
        assert np.allclose(ours_loss, former, rtol=1e-12), "the two losses disagree"
        _, t_former = best_of(lambda: former_attack(model, params, residual, labels, 0.1, restarts, iterations, 3), 2)
        _, t_ours = best_of(lambda: inversion.invert(objective, restarts=restarts, max_iterations=iterations, check_every=10**6, seed=3), 3)
        per = len(targets) * restarts * iterations
        print(f"  eps {eps:g} (sigma {sigma:.3f}): ms per restart-iteration: former {t_former / per * 1e3:.2f}, "
              f"ours {t_ours / per * 1e3:.3f}; ratio {t_former / t_ours:.1f}x")


if __name__ == "__main__":
    main()
