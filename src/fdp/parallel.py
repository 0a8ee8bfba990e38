"""Independent repetitions split into chunks, each with its own random stream, run locally or on a cluster.

A Monte-Carlo sample or a batch of reconstruction games is cut into chunks of at most ``chunk``
repetitions; chunk ``i`` draws from the ``i``-th child of ``numpy.random.SeedSequence(seed)``
(:func:`children`, the children :meth:`~numpy.random.SeedSequence.spawn` would give, without
changing the seed passed in).  The streams depend on the seed and the chunk size only, never on how
many joblib workers (or which backend) run the chunks, so a result is the same on one core and on many.

:func:`run` executes the chunks: on ``n_jobs`` local joblib workers, or, when the environment variable
``FDP_DASK_SCHEDULER`` holds a scheduler address (``tcp://host:8786``), on that Dask cluster through
joblib's Dask backend (the optional ``cluster`` extra: dask and distributed).  Results come back in
task order either way.

Where every repetition is a run with its own data (a trained model, an audit), :func:`map_runs` gives
each run its own stream (the run's child of the seed), so the result does not depend on the chunk
size either.

Examples
--------
>>> [(size, s.spawn_key) for size, s in chunks(5, 2, seed=7)]
[(2, (0,)), (2, (1,)), (1, (2,))]
"""

from __future__ import annotations

import contextlib
import functools
import numbers
import os
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, cpu_count, delayed, parallel_config
from tqdm import tqdm

from .validation import check_positive_int, spelled

__all__ = ["Execution", "check_execution", "seed_sequence", "children", "chunks", "SCHEDULER_ENV", "check_n_jobs", "worker_count",
           "run", "map_runs"]

#: The environment variable naming a Dask scheduler (``tcp://host:port``); unset or empty: local cores.
SCHEDULER_ENV = "FDP_DASK_SCHEDULER"


def seed_sequence(seed) -> np.random.SeedSequence:
    """``seed`` (an int >= 0, None or a SeedSequence) as a SeedSequence to derive independent streams from.

    Parameters
    ----------
    seed : int, None or numpy.random.SeedSequence
        None: fresh entropy from the operating system (a different result every time).

    Returns
    -------
    numpy.random.SeedSequence

    Examples
    --------
    >>> seed_sequence(7).entropy
    7
    """
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if seed is not None and (isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) or seed < 0):
        raise ValueError(f"{spelled('seed')} must be an integer >= 0, None or a numpy.random.SeedSequence, got {seed!r}")
    return np.random.SeedSequence(seed)


def children(seed, n: int) -> list[np.random.SeedSequence]:
    """The first ``n`` children of ``seed``: what ``SeedSequence.spawn(n)`` gives a fresh sequence.

    Unlike ``spawn``, the sequence passed in is not advanced, so the same seed always gives the same
    children (a SeedSequence passed twice gives the same streams twice).

    Parameters
    ----------
    seed : int, None or numpy.random.SeedSequence
    n : int
        >= 0.

    Returns
    -------
    list of numpy.random.SeedSequence

    Examples
    --------
    >>> [c.spawn_key for c in children(7, 3)] == [c.spawn_key for c in np.random.SeedSequence(7).spawn(3)]
    True
    """
    parent = seed_sequence(seed)
    return [np.random.SeedSequence(parent.entropy, spawn_key=parent.spawn_key + (i,), pool_size=parent.pool_size)
            for i in range(n)]


def chunks(total: int, chunk: int, seed) -> list[tuple[int, np.random.SeedSequence]]:
    """``total`` repetitions as ``(size, seed)`` pairs: sizes ``chunk, ..., chunk, rest``, one spawned seed each.

    Parameters
    ----------
    total : int
        Repetitions, >= 1.
    chunk : int
        Largest chunk, >= 1.
    seed : int, None or numpy.random.SeedSequence
        Spawns one independent stream per chunk.

    Returns
    -------
    list of (int, numpy.random.SeedSequence)

    Examples
    --------
    >>> [size for size, _ in chunks(5, 2, seed=0)]
    [2, 2, 1]
    """
    sizes = [min(chunk, total - start) for start in range(0, total, chunk)]
    return list(zip(sizes, children(seed, len(sizes))))


def check_n_jobs(n_jobs) -> int:
    """``n_jobs`` checked: an integer >= 1, or -1 for all local cores.

    Parameters
    ----------
    n_jobs : int

    Returns
    -------
    int

    Examples
    --------
    >>> check_n_jobs(2)
    2
    """
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"n_jobs must be an integer >= 1 or -1 (all cores), got {n_jobs!r}")
    return int(n_jobs)


def worker_count(n_jobs) -> int:
    """The number of local workers ``n_jobs`` stands for (-1: every core of this machine).

    Parameters
    ----------
    n_jobs : int
        An integer >= 1, or -1.

    Returns
    -------
    int

    Examples
    --------
    >>> worker_count(2)
    2
    """
    n_jobs = check_n_jobs(n_jobs)
    return cpu_count() if n_jobs == -1 else n_jobs


@dataclass(frozen=True, kw_only=True)
class Execution:
    """How an experiment's independent repetitions run: their seed, how many go to one task, on how many workers.

    The results depend on ``seed`` only: the same bits whatever ``chunk``, ``n_jobs`` or the backend (each repetition
    draws from its own child of ``seed``, :func:`children`).  Checked when built, each error naming its field.

    Attributes
    ----------
    seed : int, None or numpy.random.SeedSequence
        The root of every random stream (an int >= 0; None: fresh entropy).
    chunk : int, optional
        Repetitions per task (default: the experiment's own).
    n_jobs : int, default 1
        Local workers, or -1 for all cores (ignored on a Dask cluster, :data:`SCHEDULER_ENV`).
    progress : bool, default False
        Show a progress bar over the tasks.

    Examples
    --------
    >>> Execution(seed=0, n_jobs=2).chunk is None
    True
    """

    seed: int | np.random.SeedSequence | None
    chunk: int | None = None
    n_jobs: int = 1
    progress: bool = False

    def __post_init__(self):
        seed_sequence(self.seed)  # checked (None: fresh entropy, a different result every run)
        if self.chunk is not None:
            object.__setattr__(self, "chunk", check_positive_int("chunk", self.chunk))
        object.__setattr__(self, "n_jobs", check_n_jobs(self.n_jobs))
        if not isinstance(self.progress, (bool, np.bool_)):
            raise ValueError(f"progress must be True or False, got {self.progress!r}")

    def chunk_or(self, default: int) -> int:
        """``chunk``, or ``default`` when it is not set.

        Parameters
        ----------
        default : int
            The experiment's own chunk size.

        Returns
        -------
        int
        """
        return default if self.chunk is None else self.chunk


def check_execution(execution) -> Execution:
    """``execution`` if it is an :class:`Execution`, else a ValueError naming it.

    Parameters
    ----------
    execution : Execution

    Returns
    -------
    Execution
    """
    if not isinstance(execution, Execution):
        raise ValueError(f"execution must be a fdp.parallel.Execution, e.g. Execution(seed=0), got {execution!r}")
    return execution


@functools.lru_cache(maxsize=4)
def _client(address: str):
    """One Dask client per scheduler address, kept for the process (connecting costs a round trip)."""
    try:
        from distributed import Client
    except ImportError:
        raise ValueError(f"{SCHEDULER_ENV}={address!r} needs dask and distributed: pip install -e '.[cluster]'") from None
    try:
        return Client(address, timeout="10s", set_as_default=False)
    except OSError as exc:
        raise ValueError(f"{SCHEDULER_ENV}: no Dask scheduler answers at {address!r} ({exc})") from None


def run(tasks: Iterable, n_jobs: int = 1, *, total: int | None = None, progress: bool = False, desc: str = "") -> list:
    """The results of joblib ``delayed`` tasks, in order: on ``n_jobs`` local workers or on a Dask cluster.

    With :data:`SCHEDULER_ENV` set to a scheduler address the tasks go to that cluster (all of its
    workers; ``n_jobs`` is ignored); otherwise to ``n_jobs`` local processes (1: in this process).  A single task
    (``total`` of 1) always runs in this process.

    Parameters
    ----------
    tasks : iterable of joblib delayed calls
    n_jobs : int, default 1
        Local workers, >= 1 or -1 (all cores).
    total : int, optional
        Number of tasks, for the progress bar.
    progress : bool, default False
        Show a tqdm bar.
    desc : str
        The bar's label.

    Returns
    -------
    list

    Examples
    --------
    >>> from joblib import delayed
    >>> run((delayed(pow)(k, 2) for k in range(4)), n_jobs=1)
    [0, 1, 4, 9]
    """
    n_jobs = check_n_jobs(n_jobs)
    single = total is not None and total <= 1  # runs here: starting workers for one task costs more than it gains
    n_jobs, address = (1, "") if single else (n_jobs, os.environ.get(SCHEDULER_ENV, "").strip())
    backend = parallel_config(backend="dask", client=_client(address)) if address else contextlib.nullcontext()
    with backend:
        results = Parallel(n_jobs=-1 if address else n_jobs, return_as="generator")(tasks)
        return list(tqdm(results, total=total, disable=not progress, desc=desc))


def map_runs(function, per_run=(), *, seed, chunk: int, runs: int | None = None, n_jobs: int = 1,
             progress: bool = False, desc: str = "", **shared):
    """``function`` on chunks of independent runs, each run with its own random stream; outputs joined along axis 0.

    The arrays of ``per_run`` hold one entry per run (axis 0); ``function(*slices, seeds=..., **shared)``
    gets ``chunk`` consecutive runs and their seeds (run r's is the r-th child of ``seed``,
    :func:`children`) and returns an array or a tuple of arrays with one entry per run.  What all runs
    share goes in ``shared`` (sent once per task, not copied per run).  The result is the same bits
    whatever ``chunk``, ``n_jobs`` or the backend (:func:`run`).

    Parameters
    ----------
    function : callable
        Importable (a module-level function), so that workers can unpickle it.
    per_run : sequence of array_like
        Each with one entry per run (the same length, >= 1).
    seed : int, None or numpy.random.SeedSequence
    chunk : int
        Runs per task, >= 1.
    runs : int, optional
        The number of runs; required when ``per_run`` is empty, else it must agree with it.
    n_jobs : int, default 1
    progress : bool, default False
    desc : str
    **shared
        Passed unchanged to every call.

    Returns
    -------
    numpy.ndarray or tuple of numpy.ndarray

    Examples
    --------
    >>> import numpy as np
    >>> def draw(x, seeds):
    ...     return np.array([np.random.default_rng(s).random() + v for v, s in zip(x, seeds)])
    >>> bool(np.all(map_runs(draw, [np.zeros(5)], seed=1, chunk=2) == map_runs(draw, [np.zeros(5)], seed=1, chunk=5)))
    True
    """
    per_run = [np.asarray(a) for a in per_run]
    lengths = {len(a) if a.ndim else -1 for a in per_run}
    if runs is not None:
        lengths.add(check_positive_int("runs", runs))
    if len(lengths) != 1 or min(lengths) < 1:
        raise ValueError(f"per_run must be arrays with one entry per run, of one length >= 1 (and runs, if given, "
                         f"that length), got shapes {[a.shape for a in per_run]} and runs={runs!r}")
    total = lengths.pop()
    chunk = check_positive_int("chunk", chunk)
    seeds = children(seed, total)
    starts = range(0, total, chunk)
    tasks = (delayed(function)(*(a[i:i + chunk] for a in per_run), seeds=seeds[i:i + chunk], **shared) for i in starts)
    out = run(tasks, n_jobs, total=len(starts), progress=progress, desc=desc)
    parts = [o if isinstance(o, tuple) else (o,) for o in out]
    for i, part in zip(starts, parts):
        if any(np.ndim(p) == 0 or len(p) != min(chunk, total - i) for p in part):
            raise ValueError(f"function must return one entry per run: {min(chunk, total - i)} for the runs from {i}, "
                             f"got shapes {[np.shape(p) for p in part]}")
    joined = tuple(np.concatenate(p) for p in zip(*parts))
    return joined if isinstance(out[0], tuple) else joined[0]
