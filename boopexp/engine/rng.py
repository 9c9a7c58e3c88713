"""Xoshiro256** with an explicit state array: every random choice of a kernel.

An explicit, seedable random generator for the compiled kernels (xoshiro256**).

Every random choice of the engine and the agents draws from a ``uint64[4]`` state array that
the caller owns and passes in, seeded from a ``numpy.random.Generator`` / ``SeedSequence``.
numba's own ``np.random`` is a hidden per-thread global; an explicit state keeps one game's
randomness a pure function of its seed, independent of threads, workers and call order, and
bit-identical across numba versions.

Most kernels count no references (``_nrt=False``: :mod:`boopexp.engine`, docs/engine.md §9).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from boopexp.engine.jit import inner


def new_rng_state(seed_or_gen) -> np.ndarray:
    """A fresh generator state from an int seed, a SeedSequence or a numpy Generator."""
    words: np.ndarray
    if isinstance(seed_or_gen, np.random.Generator):
        words = seed_or_gen.integers(0, 2**64, size=4, dtype=np.uint64, endpoint=False)
    else:
        ss = seed_or_gen if isinstance(seed_or_gen, np.random.SeedSequence) else np.random.SeedSequence(seed_or_gen)
        words = ss.generate_state(4, dtype=np.uint64)
    words = np.asarray(words, dtype=np.uint64).copy()
    if not words.any():  # the all-zero state is the one fixed point of xoshiro
        words[0] = 1
    return words


def rng_state(rng) -> np.ndarray:
    """A kernel generator state from what a caller of the Python position APIs may hand in: a
    state array (used as it is), None (fresh entropy), an int seed, a SeedSequence or a numpy
    Generator (:func:`new_rng_state`)."""
    if isinstance(rng, np.ndarray) and rng.dtype == np.uint64 and rng.shape == (4,):
        return rng
    return new_rng_state(rng if rng is not None else np.random.SeedSequence())


def seeded_words(seed: int, n: int) -> np.ndarray:
    """``n`` random 64-bit words drawn from ``seed`` (numpy's SeedSequence, as :func:`new_rng_state`
    seeds a generator): constant tables a kernel needs, e.g. alpha-beta's Zobrist keys."""
    return np.random.SeedSequence(seed).generate_state(n, dtype=np.uint64)


@njit(cache=True, _nrt=False, inline="always")
def _rotl(x, k):
    return (x << uint64(k)) | (x >> uint64(64 - k))


@inner(_nrt=False)
def next_u64(st):
    """The next 64-bit output; advances ``st`` in place."""
    result = _rotl(st[1] * uint64(5), 7) * uint64(9)
    t = st[1] << uint64(17)
    st[2] ^= st[0]
    st[3] ^= st[1]
    st[1] ^= st[2]
    st[0] ^= st[3]
    st[2] ^= t
    st[3] = _rotl(st[3], 45)
    return result


@inner(_nrt=False)
def rand_below(st, n):
    """A uniform integer in [0, n) for 1 <= n < 2**32 (multiply-shift on the top 32 bits)."""
    x = next_u64(st) >> uint64(32)
    return np.int64((x * uint64(n)) >> uint64(32))


@njit(cache=True, _nrt=False, inline="always")
def pick(st, arr, n):
    """One of ``arr[:n]`` (n >= 1) uniformly at random; a single entry is taken without a draw
    (the reference draws only among two or more ties: the stream of draws depends on it)."""
    return arr[0] if n == 1 else arr[rand_below(st, n)]


@njit(cache=True, _nrt=False, inline="always")
def pick_max(st, scores, n, ties):
    """An index of the largest of ``scores[:n]`` (n >= 1), exact ties drawn by :func:`pick`
    among the tied indices in increasing order (``ties``: a work buffer of length >= n)."""
    best = scores[0]
    for i in range(1, n):
        if scores[i] > best:
            best = scores[i]
    nt = 0
    for i in range(n):
        if scores[i] == best:
            ties[nt] = i
            nt += 1
    return pick(st, ties, nt)


@inner(_nrt=False)
def shuffle_prefix(st, arr, n):
    """Fisher-Yates shuffle of ``arr[:n]`` in place."""
    for i in range(n - 1, 0, -1):
        j = rand_below(st, i + 1)
        tmp = arr[i]
        arr[i] = arr[j]
        arr[j] = tmp
