"""The two-stage CO constraint: which moves allow the opponent a win in one (the mask ``mcts.py``
applies at every solver call site when ``co_lookahead`` is on).

The paper's future work: "tackling k-stage decision-makings … for instance by certifying that
the opponent does not have any direct winning moves next after our move (unless all our moves
are losing moves)". Here: a legal move of the side to move is *unsafe* when, after it, the
opponent has a reply that wins at once; a move that wins at once is always safe. The solver may
then only choose among the safe moves, unless none is safe, when the plain objective decides.

Definitions, with the engine's own rules (:mod:`boopexp.engine.rules`):

* our move is played as in a real game: :func:`~boopexp.engine.rules.apply_move_inplace` under ``REAL``
  (placement, push, victory of the mover, then the promotion heuristic picks a group; its
  tie-break draws from a copy of the caller's generator, the same copy for every move, so the
  caller's stream is not advanced and the result does not depend on the order of the moves);
* a reply "wins at once" when, after its placement and push, :func:`~boopexp.engine.rules.has_won`
  holds for the replying side (V1 three larges in a row, V2 eight larges): the REAL victory test,
  which comes before any promotion, so the reply's promotion choice does not matter.

Cost: :func:`unsafe_moves` counts the moves it examined and the replies it placed; each is a
placement + push + victory test (our moves add the promotion step), cheaper than one objective
evaluation. :func:`boopexp.engine.mcts.lookahead` (the agents' ``co_lookahead``) charges a check on the
device clock as one solver call plus ``(moves + replies) × solver_move × r``, r measured by
``boopexp calibrate --lookahead`` (docs/budget.md, "The two-stage check").
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boopexp.engine.buffers import Work, new_work
from boopexp.engine.jit import inner
from boopexp.engine.rules import (
    PROMO_HEURISTIC,
    REAL,
    apply_move_inplace,
    encode_move,
    has_won,
    place_and_push,
    pool_index,
)
from boopexp.engine.state import N_MOVE_CODES, N_SQUARES, STATE_DTYPE, STATE_SIZE, TO_MOVE

#: Indices of the counts :func:`unsafe_moves` returns in its ``counts`` array.
N_LEGAL = 0  # legal, unmasked moves of the side to move that were examined
N_UNSAFE = 1  # of them, those after which the opponent has a winning reply
N_REPLIES = 2  # opponent replies placed and tested (the cost of the check)
N_COUNTS = 3


@inner()
def winning_reply(st, reply):
    """(code of a move that wins at once for the side to move in ``st`` or -1, replies tested).

    Moves are tried in the solver's order (smalls then larges, squares row-major); the search
    stops at the first winning one. ``reply`` is a work buffer (a state).
    """
    mover = st[TO_MOVE]
    base = pool_index(mover)
    tested = 0
    for size in (1, 2):
        if st[base + size - 1] <= 0:
            continue
        for sq in range(N_SQUARES):
            if st[sq] != 0:
                continue
            for i in range(STATE_SIZE):
                reply[i] = st[i]
            place_and_push(reply, size, sq)
            tested += 1
            if has_won(reply, np.int64(mover)):  # as every other caller: one compiled has_won
                return encode_move(size, sq), tested
    return -1, tested


@inner()
def unsafe_moves(st, mask, rng, after, reply, rng_copy, groups, scores, ties, unsafe, counts):
    """Mark in ``unsafe`` (bool[72]) the legal moves not in ``mask`` that allow a winning reply.

    Args:
        st: the position; its side to move is "us".
        mask: bool[72], moves not to examine (already excluded by the caller).
        rng: the caller's generator state (read, never advanced).
        after, reply, rng_copy, groups, scores, ties: work buffers (``la_after``, ``la_reply``,
            ``la_rng``, and the promotion scratch of :class:`boopexp.engine.buffers.Work`).
        unsafe: output, bool[72]; every entry is written.
        counts: output, int64[N_COUNTS]: moves examined, unsafe moves, replies tested.
    """
    mover = st[TO_MOVE]
    base = pool_index(mover)
    for c in range(N_MOVE_CODES):
        unsafe[c] = False
    n_legal = 0
    n_unsafe = 0
    n_replies = 0
    for size in (1, 2):
        if st[base + size - 1] <= 0:
            continue
        for sq in range(N_SQUARES):
            code = encode_move(size, sq)
            if st[sq] != 0 or mask[code]:
                continue
            n_legal += 1
            for i in range(STATE_SIZE):
                after[i] = st[i]
            for i in range(4):
                rng_copy[i] = rng[i]
            winner, _, _ = apply_move_inplace(after, size, sq, REAL, PROMO_HEURISTIC, rng_copy, groups, scores, ties)
            if winner == mover:
                continue  # a move that wins now is safe
            found, tested = winning_reply(after, reply)
            n_replies += tested
            if found >= 0:
                unsafe[code] = True
                n_unsafe += 1
    counts[N_LEGAL] = n_legal
    counts[N_UNSAFE] = n_unsafe
    counts[N_REPLIES] = n_replies
    return n_unsafe


@njit(cache=True, inline="always")
def lookahead_mask(st, mask, out, rng, after, reply, rng_copy, groups, scores, ties, unsafe, counts):
    """``out`` = ``mask`` plus every unsafe move, unless every examined move is unsafe (then
    ``out`` = ``mask``: the plain objective decides among them). Returns the number of moves
    it added to the mask (0 when it changed nothing)."""
    unsafe_moves(st, mask, rng, after, reply, rng_copy, groups, scores, ties, unsafe, counts)
    return mask_unsafe(mask, unsafe, counts, out)


@njit(cache=True, _nrt=False, inline="always")
def mask_unsafe(mask, unsafe, counts, out):
    """``out`` = ``mask`` plus every move of ``unsafe``, unless every examined move is unsafe
    (``counts``: :func:`unsafe_moves`'); returns the number of moves added: **the** rule of the
    two-stage check, boop.'s and every game's (:mod:`boopexp.engine.defaults`)."""
    all_unsafe = counts[N_UNSAFE] == counts[N_LEGAL]
    added = 0
    for c in range(out.shape[0]):
        out[c] = mask[c]
        if unsafe[c] and not all_unsafe:
            out[c] = True
            added += 1
    return added


def safe_mask(st: np.ndarray, mask: np.ndarray | None = None, rng: np.ndarray | None = None,
              work: Work | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Python entry point: ``(out mask, counts)`` of :func:`lookahead_mask` for one position.

    Args:
        st: a state; mask: moves already excluded (default none); rng: the generator the
            promotion tie-break copies (default a fixed state); work: reusable buffers
            (:func:`boopexp.engine.buffers.new_work`; its ``la_*`` fields and promotion scratch).
    """
    w = work or new_work()
    mask = np.zeros(N_MOVE_CODES, dtype=np.bool_) if mask is None else mask
    rng = np.array([1, 2, 3, 4], dtype=np.uint64) if rng is None else rng
    lookahead_mask(np.asarray(st, dtype=STATE_DTYPE), mask, w.la_mask, rng, w.la_after, w.la_reply, w.la_rng,
                   w.groups, w.scores, w.ties, w.la_unsafe, w.la_counts)
    return w.la_mask.copy(), w.la_counts.copy()
