"""The reconstruction prior game on local joblib workers vs a 2-worker Dask LocalCluster, one process.

``fdp.parallel.run`` sends the game's chunks either to ``n_jobs`` local processes (loky) or, with
``FDP_DASK_SCHEDULER`` set, to a Dask cluster.  Here both run on this machine with two workers, on the
same games (MNIST, the paper's MLP, |D_-| = 999, T = 100, C = 0.1, prior size 10): games per second on
each backend and their ratio, and the overhead per chunk (the cluster's time on many tiny chunks minus the
local time, per chunk).  The results must be identical bit for bit.  Run with ``make bench``.
"""

from __future__ import annotations

import os
import time

import numpy as np
from distributed import LocalCluster

from fdp import Mechanism, parallel
from fdp.experiments import datasets, reconstruction
from fdp.experiments.dpsgd import Training
from fdp.parallel import Execution

GAME = Training(Mechanism("gaussian", 1.0, 1.0, 100), clip_norm=0.1, learning_rate=3.0)


def play(data, known, pool, trials, chunk):
    t0 = time.perf_counter()
    res = reconstruction.prior_game(data.x[known], data.y[known], data.x[pool], data.y[pool], GAME, prior_sizes=10,
                                    trials=trials, execution=Execution(seed=0, chunk=chunk, n_jobs=2))
    return res, time.perf_counter() - t0


def main():
    data = datasets.mnist()
    order = np.random.default_rng(0).permutation(len(data.y))
    known, pool = order[:999], order[999:]
    trials, chunk = 80, 20
    os.environ.pop(parallel.SCHEDULER_ENV, None)
    local, t_local = play(data, known, pool, trials, chunk)
    _, t_local_tiny = play(data, known, pool, 16, 1)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        os.environ[parallel.SCHEDULER_ENV] = cluster.scheduler_address
        try:
            play(data, known, pool, 2, 1)  # connect and warm the workers up
            remote, t_remote = play(data, known, pool, trials, chunk)
            _, t_remote_tiny = play(data, known, pool, 16, 1)
        finally:
            os.environ.pop(parallel.SCHEDULER_ENV)
            parallel._client(cluster.scheduler_address).close()
    same = all(np.array_equal(local.success[a], remote.success[a]) for a in reconstruction.ATTACKS)
    print(f"prior game, MNIST, {trials} games in chunks of {chunk}: local 2 workers {trials / t_local:.1f} games/s, "
          f"Dask LocalCluster 2 workers {trials / t_remote:.1f} games/s, ratio {t_local / t_remote:.2f}; "
          f"identical results: {same}")
    print(f"overhead per chunk (16 chunks of one game): Dask {t_remote_tiny / 16 * 1e3:.0f} ms, "
          f"local {t_local_tiny / 16 * 1e3:.0f} ms, difference {(t_remote_tiny - t_local_tiny) / 16 * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
