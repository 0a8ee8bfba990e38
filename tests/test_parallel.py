"""fdp.parallel.run: local joblib workers or a Dask cluster named by FDP_DASK_SCHEDULER, with the same bits."""

from __future__ import annotations

import numpy as np
import pytest
from joblib import delayed

from fdp import Mechanism, parallel
from fdp.accounting import mechanism_gdp, montecarlo
from fdp.experiments import audit, datasets, reconstruction
from fdp.experiments.dpsgd import Training
from fdp.parallel import Execution


def test_run_keeps_task_order_and_checks_n_jobs():
    assert parallel.run((delayed(divmod)(k, 3) for k in range(7)), n_jobs=2) == [divmod(k, 3) for k in range(7)]
    for bad in (0, -2, 1.5, True, "2"):
        with pytest.raises(ValueError, match="n_jobs"):
            parallel.run([], n_jobs=bad)


def test_an_unreachable_scheduler_is_a_clear_error(monkeypatch):
    pytest.importorskip("distributed")
    parallel._client.cache_clear()
    monkeypatch.setenv(parallel.SCHEDULER_ENV, "tcp://127.0.0.1:9")  # the discard port: nobody listens
    with pytest.raises(ValueError, match=parallel.SCHEDULER_ENV):
        parallel.run((delayed(abs)(k) for k in range(2)))
    parallel._client.cache_clear()


@pytest.mark.slow
def test_a_dask_cluster_gives_the_bits_of_the_local_run(monkeypatch):
    """A real LocalCluster (2 worker processes): a Monte-Carlo sample, a small reconstruction prior game, a canary
    audit, the training of the audited models, their LiRA scores and a mu* grid come back byte-identical to the local
    run (each chunk's stream depends on the seed and the chunk size only; each audit run's on the seed alone)."""
    distributed = pytest.importorskip("distributed")
    data = datasets.digits()
    perm = np.random.default_rng(0).permutation(len(data.y))
    known, pool = perm[:64], perm[999:1199]

    def work():
        lr = montecarlo.log_likelihood_ratios(Mechanism("gaussian", 1.0, 0.5, 4), 4_000, seed=2, chunk=1_000, n_jobs=2)
        game = reconstruction.prior_game(data.x[known], data.y[known], data.x[pool], data.y[pool],
                                         Training(Mechanism("gaussian", 1.0, 1.0, 5), clip_norm=0.1, learning_rate=3.0), prior_sizes=[2, 8], trials=40,
                                         execution=Execution(seed=3, chunk=10, n_jobs=2))
        mu, regret = mechanism_gdp.mu_and_regret_dpsgd_grid([2.0, 4.0], [0.05], [50], discretization=1e-3, n_jobs=2)
        refs = np.random.default_rng(4).normal(size=(6, 5, 3))
        canary = audit.canary_audit(refs, 1.0, Mechanism("laplace", 1.0), 50, execution=Execution(seed=5, chunk=2, n_jobs=2))
        x = np.random.default_rng(6).normal(size=(6, 20, 1))
        y = (x[..., 0] > 0).astype(float)
        models = audit.train_linear_dpgd(x, y,
                                         Training(Mechanism("gaussian", 1.0, 1.0, 5), clip_norm=1.0, learning_rate=1.0),
                                         execution=Execution(seed=7, chunk=2, n_jobs=2))
        lira = audit.lira_offline_scores(x, y, models.weights, x[:, 0], 1 - y[:, 0],
                                         Training(Mechanism("gaussian", 1.0, 1.0, 1), clip_norm=1.0, learning_rate=1.0), shadow_models=4, target_models=8,
                                         execution=Execution(seed=8, chunk=4, n_jobs=2))
        return lr, game, mu, regret, canary + (models.weights, models.final_gradients) + lira

    monkeypatch.delenv(parallel.SCHEDULER_ENV, raising=False)
    local = work()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        monkeypatch.setenv(parallel.SCHEDULER_ENV, cluster.scheduler_address)
        try:
            remote = work()
            seen = parallel._client(cluster.scheduler_address).run(lambda: 1)  # the cluster has its two workers
        finally:
            parallel._client(cluster.scheduler_address).close()
            parallel._client.cache_clear()
    assert len(seen) == 2
    np.testing.assert_array_equal(local[0], remote[0])
    for attack in reconstruction.ATTACKS:
        np.testing.assert_array_equal(local[1].success[attack], remote[1].success[attack])
    assert local[1].accuracy == remote[1].accuracy
    np.testing.assert_array_equal(local[2], remote[2])
    np.testing.assert_array_equal(local[3], remote[3])
    for a, b in zip(local[4], remote[4]):
        np.testing.assert_array_equal(a, b)


def _noisy_sum(x, seeds, scale):
    return np.array([v + scale * np.random.default_rng(s).random() for v, s in zip(x, seeds)]), x * 2


def test_map_runs_gives_each_run_its_own_stream_whatever_the_chunks():
    x = np.arange(7.0)
    expected = x + 0.5 * np.array([np.random.default_rng(s).random() for s in np.random.SeedSequence(4).spawn(7)])
    for chunk, n_jobs in ((1, 1), (3, 2), (7, 1), (100, 1)):
        noisy, doubled = parallel.map_runs(_noisy_sum, [x], seed=4, chunk=chunk, n_jobs=n_jobs, scale=0.5)
        np.testing.assert_array_equal(noisy, expected)
        np.testing.assert_array_equal(doubled, 2 * x)
    for bad, name in (([x, x[:3]], "per_run"), ([np.zeros(0)], "per_run"), ([], "per_run"), ([x, np.float64(1)], "per_run")):
        with pytest.raises(ValueError, match=name):
            parallel.map_runs(_noisy_sum, bad, seed=0, chunk=1, scale=1.0)
    with pytest.raises(ValueError, match="chunk"):
        parallel.map_runs(_noisy_sum, [x], seed=0, chunk=0, scale=1.0)


def _one_row_per_chunk(x, seeds):
    return x[:1]


def test_map_runs_refuses_a_function_that_loses_runs_and_bad_seeds():
    with pytest.raises(ValueError, match="one entry per run"):
        parallel.map_runs(_one_row_per_chunk, [np.arange(5.0)], seed=0, chunk=2)
    with pytest.raises(ValueError, match="runs"):
        parallel.map_runs(_noisy_sum, [np.arange(5.0)], seed=0, chunk=2, runs=4, scale=1.0)
    for bad in (-1, 1.5, True, "a", np.random.default_rng(0)):
        with pytest.raises(ValueError, match="seed"):
            parallel.map_runs(_noisy_sum, [np.arange(5.0)], seed=bad, chunk=2, scale=1.0)


def test_children_are_spawns_children_without_advancing_the_seed():
    ss = np.random.SeedSequence(5)
    ours = parallel.children(ss, 3)
    assert ss.n_children_spawned == 0 and parallel.children(ss, 3)[2].spawn_key == ours[2].spawn_key
    for a, b in zip(ours, np.random.SeedSequence(5).spawn(3)):
        assert a.generate_state(4).tolist() == b.generate_state(4).tolist()


def test_a_single_task_runs_in_this_process(monkeypatch):
    """Issue 53: one task (total=1) started two worker processes for nothing (about a second); it now runs here,
    whatever n_jobs or the Dask scheduler in the environment (one that does not answer is never asked)."""
    import os

    from joblib import delayed

    from fdp import parallel

    monkeypatch.setenv(parallel.SCHEDULER_ENV, "tcp://127.0.0.1:9")  # nothing listens there
    assert parallel.run([delayed(os.getpid)()], n_jobs=2, total=1) == [os.getpid()]
