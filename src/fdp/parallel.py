"""Independent repetitions split into chunks, each with its own random stream.

A Monte-Carlo sample, a batch of reconstruction games or of training runs is cut into chunks of
at most ``chunk`` repetitions; chunk ``i`` draws from the ``i``-th child of
``numpy.random.SeedSequence(seed)`` (:meth:`~numpy.random.SeedSequence.spawn`).  The streams depend
on the seed and the chunk size only, never on how many joblib workers (or which backend) run the
chunks, so a result is the same on one core and on many.

Examples
--------
>>> [(size, s.spawn_key) for size, s in chunks(5, 2, seed=7)]
[(2, (0,)), (2, (1,)), (1, (2,))]
"""

from __future__ import annotations

import numpy as np

__all__ = ["seed_sequence", "chunks"]


def seed_sequence(seed) -> np.random.SeedSequence:
    """``seed`` (an int >= 0, None or a SeedSequence) as a SeedSequence to spawn independent streams from.

    Parameters
    ----------
    seed : int, None or numpy.random.SeedSequence

    Returns
    -------
    numpy.random.SeedSequence

    Examples
    --------
    >>> seed_sequence(7).entropy
    7
    """
    return seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)


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
    return list(zip(sizes, seed_sequence(seed).spawn(len(sizes))))
