"""boop.'s kernels under the game contract's names (docs/games.md): what the search templates
(:mod:`boopexp.engine.mcts`) call when they play boop., the reference implementation of the contract.

Each kernel here is a thin ``inline="always"`` adapter of a kernel of ``rules``, ``objective``,
``heuristic`` or ``lookahead`` (numba inlines it where it is called, so the search runs the code it
ran before the game became a layer): a move code in, boop.'s sizes and squares, the TREE rules
and the promotion heuristic (AGENTS.md §B.3) inside. boop. supplies every optional kernel of the
contract: its own faster solver, its random move (QUIRK-A12), its "fully expanded" rule
(QUIRK-A4), its early border mask (QUIRK-A5) and its two-stage check.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from boopexp.engine import lookahead as _lookahead
from boopexp.engine import objective as _objective
from boopexp.engine import rules as _rules
from boopexp.engine.buffers import new_work
from boopexp.engine.heuristic import heuristic
from boopexp.engine.jit import inner
from boopexp.engine.luts import RING
from boopexp.engine.params import P_EARLY_MASK_PLIES, P_PRESELECT_M
from boopexp.engine.rng import seeded_words
from boopexp.engine.rules import MAX_GROUPS, has_won, legal_move_codes, legal_move_count
from boopexp.engine.state import (
    L_BLUE,
    L_RED,
    MOVE_NUMBER,
    N_MOVE_CODES,
    N_SQUARES,
    POOL_BASE_BLUE,
    STATE_DTYPE,
    STATE_SIZE,
    TO_MOVE,
)

__all__ = ["STATE_SIZE", "STATE_DTYPE", "TO_MOVE", "MOVE_NUMBER", "N_MOVE_CODES", "F_IS_H_AFTER", "new_work",
           "legal_move_codes", "legal_move_count", "apply_move", "has_won", "heuristic", "objective",
           "random_move", "expansion_limit", "root_masked", "solve", "score_moves", "best_m_moves",
           "context_value", "lookahead_mask", "MAX_FOLLOWUPS", "hash_key", "is_legal", "place", "follow_up",
           "apply_move_unchecked"]

#: f of a move without a promotion is H of the position after it, from the mover's side
#: (HEURISTIC.md §7): a playout reads the solver's f instead of computing H again
F_IS_H_AFTER = True


@njit(cache=True, _nrt=False, inline="always")
def apply_move(st, code, rng, work):
    """Play ``code`` under the TREE rules, the promotion heuristic choosing (AGENTS.md §B.3):
    (the winner: 0 none, else the colour; the candidate groups of the promotion step)."""
    size, sq = _rules.decode_move(code)
    winner, n_groups, _ = _rules.apply_move_inplace(st, size, sq, _rules.TREE, _rules.PROMO_HEURISTIC, rng,
                                                    work.groups, work.scores, work.ties)
    return winner, n_groups


#: boop.'s end test is part of its push step: a move without it is the move itself
apply_move_unchecked = apply_move


@njit(cache=True, _nrt=False, inline="always")
def objective(st, code, rng, work):
    """f of ``code`` from the mover's side (HEURISTIC.md §7)."""
    size, sq = _rules.decode_move(code)
    return _objective.objective_ws(st, size, sq, rng, work.ctx, work.groups, work.scores, work.ties)


@njit(cache=True, _nrt=False, inline="always")
def solve(st, mask, rng, work):
    """The solver (AGENTS.md §A.2): (move or -1, optima, legal moves scored, the optimal f)."""
    return _objective.solve(st, mask, rng, work.ctx, work.groups, work.scores, work.ties, work.tie_moves)


@njit(cache=True, _nrt=False, inline="always")
def score_moves(st, mask, rng, work, codes, values):
    """f of every legal move not in ``mask``: ``codes[:n]``, ``values[:n]``; returns n."""
    return _objective.score_moves(st, mask, rng, work.ctx, work.groups, work.scores, work.ties, codes, values)


@njit(cache=True, inline="always")
def best_m_moves(st, mask, m, rng, work, out):
    """The m best moves not in ``mask`` into ``out[:k]`` (AGENTS.md §A.3); returns k."""
    return _objective.best_m_moves_masked_ws(st, mask, m, rng, work.ctx, work.groups, work.scores, work.ties,
                                             work.codes, work.values, work.tie_moves, out)


@njit(cache=True, _nrt=False, inline="always")
def context_value(st, work):
    """H of ``st`` from its mover's side, read off the context the last solver call on ``st`` left."""
    return _objective.context_value(st, work.ctx)


@njit(cache=True, _nrt=False, inline="always")
def random_move(st, banned, rng, work):
    """AGENTS.md §B.9's random move (QUIRK-A12: the size drawn from the pool list first)."""
    return _rules.random_move(st, banned, rng, work.squares)


@njit(cache=True, _nrt=False, inline="always")
def expansion_limit(st, params):
    """QUIRK-A4: a node is fully expanded at as many children as EMPTY SQUARES (less the horizon k
    of the m = 0 border mask while it holds)."""
    early = params[P_EARLY_MASK_PLIES]
    n_empty = 0
    for i in range(N_SQUARES):
        if st[i] == 0:
            n_empty += 1
    k = early if (params[P_PRESELECT_M] == 0 and st[MOVE_NUMBER] < early) else 0
    return n_empty - k


@njit(cache=True, _nrt=False, inline="always")
def root_masked(st, code, params):
    """QUIRK-A5: with m = 0, the root's moves on the border ring are masked early on."""
    return RING[_rules.decode_move(code)[1]] == 1


@njit(cache=True, inline="always")
def lookahead_mask(st, mask, rng, work):
    """The two-stage check (:mod:`boopexp.engine.lookahead`): ``work.la_mask``, ``work.la_counts``."""
    return _lookahead.lookahead_mask(st, mask, work.la_mask, rng, work.la_after, work.la_reply, work.la_rng,
                                     work.groups, work.scores, work.ties, work.la_unsafe, work.la_counts)


# ------------------------------------------------------------------------------------------
# Alpha-beta's (:mod:`boopexp.engine.alphabeta`): the promotion choice is searched, each candidate
# group a child of its own (RULES.md §5); the transposition table's Zobrist keys

#: the most candidate groups of one move (a child per group)
MAX_FOLLOWUPS = MAX_GROUPS

#: the seed of the Zobrist keys (a constant: the keys are part of the agent, not of a game)
ZOBRIST_SEED = 20261124
#: Zobrist keys: a board square's piece (value + 2; 0 for an empty square), a pool count (4 pools
#: of 0..15), a large counter (Blue, Red: 0..15), Red to move, moveNumber modulo 64
_WORDS = seeded_words(ZOBRIST_SEED, N_SQUARES * 5 + 4 * 16 + 2 * 16 + 1 + 64)
Z_PIECE = _WORDS[: N_SQUARES * 5].reshape(N_SQUARES, 5).copy()
Z_PIECE[:, 2] = 0
_o = N_SQUARES * 5
Z_POOL = _WORDS[_o: _o + 64].reshape(4, 16).copy()
_o += 64
Z_LARGE = _WORDS[_o: _o + 32].reshape(2, 16).copy()
_o += 32
Z_RED = _WORDS[_o: _o + 1].copy()
Z_MOVE_NUMBER = _WORDS[_o + 1: _o + 65].copy()


@inner(_nrt=False)
def hash_key(st):
    """The position's key: every field of the state (moveNumber modulo 64); never 0 (0 marks an
    empty table entry)."""
    key = uint64(0)
    for sq in range(N_SQUARES):
        v = st[sq]
        if v != 0:
            key ^= Z_PIECE[sq, v + 2]
    for i in range(4):
        key ^= Z_POOL[i, st[POOL_BASE_BLUE + i] & 15]
    key ^= Z_LARGE[0, st[L_BLUE] & 15]
    key ^= Z_LARGE[1, st[L_RED] & 15]
    if st[TO_MOVE] > 0:
        key ^= Z_RED[0]
    key ^= Z_MOVE_NUMBER[st[MOVE_NUMBER] & 63]
    return key | uint64(1)


#: the name alpha-beta's docs and tests know it by
zobrist_key = hash_key


@njit(cache=True, _nrt=False, inline="always")
def is_legal(st, code, work):
    """Whether ``code`` is a legal move of ``st``'s side to move (a table move is checked: two
    positions may share a slot)."""
    size, sq = _rules.decode_move(code)
    return st[_rules.pool_index(st[TO_MOVE]) + size - 1] > 0 and st[sq] == 0


@njit(cache=True, _nrt=False, inline="always")
def place(st, code, rng, work, groups):
    """Place and push ``code`` for the side to move (REAL: its victory ends the game before any
    promotion): (the mover if it has won, else 0; the candidate groups it lines up, in
    ``groups``). The side to move is not flipped: alpha-beta sets each child's."""
    me = st[TO_MOVE]
    size, sq = _rules.decode_move(code)
    _rules.place_and_push(st, size, sq)
    if has_won(st, me):
        return np.int64(me), 0
    n_groups = 0
    if _rules.may_have_groups(st, me, _rules.own_mask(st, me)):
        n_groups = _rules.candidate_groups(st, me, False, groups)
    return np.int64(0), n_groups


@njit(cache=True, _nrt=False, inline="always")
def follow_up(st, me, groups, g):
    """Promote candidate group ``g`` of ``groups`` for ``me`` (the child of a move that lined up two or more)."""
    _rules.apply_group(st, me, groups[g, 0], groups[g, 1], groups[g, 2])
