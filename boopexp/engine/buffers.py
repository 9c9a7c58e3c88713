"""**The** work buffers: the ``Work`` named tuple (fields documented) and ``new_work()``; one per
caller, reused.

A caller (a player, a search, the bench, :class:`boopexp.game.position.Position`) allocates one
:class:`Work` with :func:`new_work` and passes its fields by name to the kernels; a hot loop
allocates nothing. Numba passes a named tuple of arrays to a kernel as is (mcts reads
``work.groups``), so a kernel can take the whole of it too.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from boopexp.engine.objective import CTX_SIZE
from boopexp.engine.rules import MAX_GROUPS
from boopexp.engine.state import N_MOVE_CODES, N_SQUARES, STATE_SIZE

#: Attributes (every array is overwritten by the kernel that uses it; none carries state between
#: calls, except ``mask``, which every user leaves all False):
#:   ctx        int64[CTX_SIZE]         a solver call's context (objective.objective_context)
#:   groups     int64[MAX_GROUPS, 3]    candidate groups of a promotion step (rules)
#:   scores     int64[MAX_GROUPS]       their promotion scores
#:   ties       int64[MAX_GROUPS]       the indices of the best-scoring groups
#:   codes      int64[N_MOVE_CODES]     legal move codes of a solver call / the MCTS root
#:   values     float64[N_MOVE_CODES]   f of each of those moves
#:   tie_moves  int64[N_MOVE_CODES]     the optimal moves of a solver call
#:   mask       bool[N_MOVE_CODES]      banned move codes (all False between uses)
#:   squares    int64[N_SQUARES]        empty squares of a random move
#:   playout    int16[STATE_SIZE]       the state a playout is played on (mcts)
#:   path       int64[4096]             best_m_moves' output at the MCTS root
#:   best       int64[N_MOVE_CODES]     tied nodes of a UCT / final-choice argmax (mcts)
#: The two-stage constraint's (:mod:`boopexp.engine.lookahead`; ``co_lookahead`` in mcts):
#:   la_after   int16[STATE_SIZE]       the position after one of our moves
#:   la_reply   int16[STATE_SIZE]       after our move and one reply
#:   la_rng     uint64[4]               the generator copy of one move's promotion
#:   la_unsafe  bool[N_MOVE_CODES]      the moves that allow a winning reply
#:   la_counts  int64[3]                moves examined, unsafe moves, replies tested (lookahead.N_COUNTS)
#:   la_mask    bool[N_MOVE_CODES]      the caller's mask plus the unsafe moves
Work = namedtuple(
    "Work",
    ["ctx", "groups", "scores", "ties", "codes", "values", "tie_moves", "mask", "squares",
     "playout", "path", "best", "la_after", "la_reply", "la_rng", "la_unsafe", "la_counts", "la_mask"],
)


def new_work() -> Work:
    """A fresh set of work buffers (``mask`` all False)."""
    return Work(
        ctx=np.zeros(CTX_SIZE, dtype=np.int64),
        groups=np.empty((MAX_GROUPS, 3), dtype=np.int64),
        scores=np.empty(MAX_GROUPS, dtype=np.int64),
        ties=np.empty(MAX_GROUPS, dtype=np.int64),
        codes=np.empty(N_MOVE_CODES, dtype=np.int64),
        values=np.empty(N_MOVE_CODES, dtype=np.float64),
        tie_moves=np.empty(N_MOVE_CODES, dtype=np.int64),
        mask=np.zeros(N_MOVE_CODES, dtype=np.bool_),
        squares=np.empty(N_SQUARES, dtype=np.int64),
        playout=np.empty(STATE_SIZE, dtype=np.int16),
        path=np.empty(4096, dtype=np.int64),
        best=np.empty(N_MOVE_CODES, dtype=np.int64),
        la_after=np.empty(STATE_SIZE, dtype=np.int16),
        la_reply=np.empty(STATE_SIZE, dtype=np.int16),
        la_rng=np.empty(4, dtype=np.uint64),
        la_unsafe=np.zeros(N_MOVE_CODES, dtype=np.bool_),
        la_counts=np.zeros(3, dtype=np.int64),
        la_mask=np.zeros(N_MOVE_CODES, dtype=np.bool_),
    )


#: ctx, groups, scores, ties, codes, values, tie_moves
SolverBuffers = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def solver_buffers(work: Work) -> SolverBuffers:
    """The buffers the objective's solver kernels take after ``(st, mask, rng)``, in their order:
    ``best_move_ws(st, mask, rng, *solver_buffers(work))``."""
    return (work.ctx, work.groups, work.scores, work.ties, work.codes, work.values, work.tie_moves)
