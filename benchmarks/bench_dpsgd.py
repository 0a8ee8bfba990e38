"""DP-SGD and the prior-aware attack: our vectorised NumPy code vs a per-example loop.

Both run here, in the same process, on the same workloads (the paper's MLP on real MNIST, 784 -> 10 ->
10 with 7,960 parameters, and on the 8x8 digits, 999 known points, clipping to C = 0.1; goal on MNIST:
ours at least 20x the loop).  We report per-example-gradient throughput (clipped gradients summed per
second) of one DP-SGD step for

* the naive baseline: one forward and backward pass per example, the gradient materialised,
  clipped and added, in a Python loop (what a direct transcription of DP-SGD does);
* ours: :func:`fdp.experiments.dpsgd.clipped_sum`, which never forms per-example gradients, for one run and for
  a batch of runs trained at once;

check that both give the same sum, and time one whole training run (T = 100) and one prior-aware
attack (Alg. 2 scores of 10 candidates over 100 steps) against the same loop-based scoring.
Run with ``make bench``.
"""

from __future__ import annotations

import numpy as np

from fdp import Mechanism
from fdp.experiments import attacks, datasets, dpsgd
from timing import best_of


def naive_clipped_sum(model, theta, x, y, clip_norm):
    """Loop over examples: backpropagate one example, materialise its gradient, clip, add."""
    w1, b1, w2, b2 = model.unpack(theta)
    total = np.zeros(model.size)
    for xi, yi in zip(x, y):
        a = w1 @ xi + b1
        h = np.where(a > 0, a, np.expm1(np.minimum(a, 0.0)))
        o = w2 @ h + b2
        p = np.exp(o - o.max())
        p /= p.sum()
        e = p.copy()
        e[yi] -= 1.0
        delta = (w2.T @ e) * np.where(a > 0, 1.0, np.exp(np.minimum(a, 0.0)))
        g = np.concatenate([np.outer(delta, xi).ravel(), delta, np.outer(e, h).ravel(), e])
        total += g / max(1.0, np.linalg.norm(g) / clip_norm)
    return total


def per_example_throughput(data, runs: int):
    """Clipped per-example gradients per second of one DP-SGD step on 999 known points: loop vs ours."""
    order = np.random.default_rng(0).permutation(len(data.y))
    xk, yk = data.x[order[:999]], data.y[order[:999]]
    model = dpsgd.MLP(xk.shape[1])
    rng = np.random.default_rng(1)
    theta = model.init(1, rng)
    n = len(yk)
    naive, t_naive = best_of(lambda: naive_clipped_sum(model, theta[0], xk, yk, 0.1), 3)
    ours, t_ours = best_of(lambda: dpsgd.clipped_sum(model, theta, xk, yk, 0.1)[0][0])
    assert np.allclose(naive, ours, atol=1e-12), "the two clipped sums disagree"
    thetas = model.init(runs, rng)
    _, t_batch = best_of(lambda: dpsgd.clipped_sum(model, thetas, xk, yk, 0.1), 3)
    print(f"MLP {xk.shape[1]}-10-10 ({model.size} parameters), |D_-| = {n}, C = 0.1: per-example clipped gradients "
          f"per second: naive loop {n / t_naive:,.0f}, ours (1 run) {n / t_ours:,.0f}, ours ({runs} runs at once) "
          f"{runs * n / t_batch:,.0f}; ratio ours/naive {t_naive / t_ours:.0f}x (1 run), "
          f"{runs * t_naive / t_batch:.0f}x ({runs} runs)")
    return t_naive


def main():
    per_example_throughput(datasets.mnist(), runs=20)
    data = datasets.digits()
    t_naive = per_example_throughput(data, runs=100)
    order = np.random.default_rng(0).permutation(len(data.y))
    known, pool = order[:999], order[999:]
    xk, yk = data.x[known], data.y[known]
    model = dpsgd.MLP(64)

    # one training run (T = 100, full batch) and one attack on it
    run = dpsgd.Training(Mechanism("gaussian", 5.0, 1.0, 100), clip_norm=0.1, learning_rate=10.0)
    tgt = pool[:1]
    _, t_train = best_of(lambda: dpsgd.train(xk, yk, data.x[tgt], data.y[tgt], run, record=True, seed=2), 3)
    prior = pool[:10]
    trace = dpsgd.train(xk, yk, data.x[tgt], data.y[tgt], run, record=True, seed=2)

    def ours_attack():
        obs = attacks.PriorObserver(model, data.x[prior][None], data.y[prior][None], 0.1, 100)
        for t in range(100):
            obs(t, trace.params[t], trace.noisy[t], trace.known[t])
        return attacks.prior_aware_guess(obs.inner)[0]

    def naive_attack():
        scores = np.zeros(10)
        for t in range(100):
            resid = trace.noisy[t, 0] - trace.known[t, 0]
            for i, z in enumerate(prior):
                g = dpsgd.per_example_gradients(model, trace.params[t], data.x[z][None], data.y[z][None])[0, 0]
                scores[i] += dpsgd.clip(g, 0.1) @ resid
        return int(scores.argmax())

    guess, t_attack = best_of(ours_attack, 3)
    guess_naive, t_attack_naive = best_of(naive_attack, 3)
    assert guess == guess_naive, "the two attacks disagree"
    print(f"one DP-SGD run (T = 100, full batch, adversary's view recorded): {t_train * 1e3:.1f} ms "
          f"(a naive loop would need about {100 * t_naive * 1e3:.0f} ms for the gradients alone)")
    print(f"one prior-aware attack (10 candidates, 100 steps): ours {t_attack * 1e3:.1f} ms, "
          f"loop over steps and candidates {t_attack_naive * 1e3:.1f} ms, ratio {t_attack_naive / t_attack:.1f}x")


if __name__ == "__main__":
    main()
