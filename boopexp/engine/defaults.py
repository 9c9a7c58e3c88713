"""The contract's optional kernels for a game that does not supply them (docs/games.md): a
template, bound per game by :func:`boopexp.engine.binding.bind` (boop. supplies all of them).

Each is the plain reading of its name on the required kernels: the solver scores every legal,
unmasked move with ``objective`` and draws uniformly among the exact optima (boop.'s
:func:`boopexp.engine.objective.solve`, without its incremental context); the random move is
uniform among the legal, unbanned moves; a node is fully expanded with every legal move as a
child; no root move is masked early; a move without its end test (``apply_move_unchecked``) is
the move; the two-stage check marks the moves after which the
opponent has a reply that wins at once (:mod:`boopexp.engine.lookahead`'s definition).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from boopexp.engine.binding import game_of
from boopexp.engine.jit import inner
from boopexp.engine.lookahead import N_LEGAL, N_REPLIES, N_UNSAFE, mask_unsafe
from boopexp.engine.objective import keep_best, take_m_best
from boopexp.engine.rng import pick

_game = game_of(__name__)
STATE_SIZE = _game.STATE_SIZE
TO_MOVE = _game.TO_MOVE
N_MOVE_CODES = _game.N_MOVE_CODES
legal_move_codes = _game.legal_move_codes
legal_move_count = _game.legal_move_count
apply_move = _game.apply_move
heuristic = _game.heuristic
objective = _game.objective


@inner(_nrt=False)
def solve(st, mask, rng, work):
    """(a move of maximal f among the legal moves not in ``mask`` or -1, the number of optima, the
    legal moves (masked ones included), the optimal f); the draw among the optima: ``pick``."""
    n_legal = legal_move_codes(st, work.codes)
    nt = 0
    best = -np.inf
    for i in range(n_legal):
        code = work.codes[i]
        if mask[code]:
            continue
        best, nt = keep_best(objective(st, code, rng, work), code, best, nt, work.tie_moves)
    if nt == 0:
        return -1, 0, n_legal, best
    return pick(rng, work.tie_moves, nt), nt, n_legal, best


@inner(_nrt=False)
def score_moves(st, mask, rng, work, codes, values):
    """f of every legal move not in ``mask``, in ``codes[:n]``, ``values[:n]``; returns n."""
    n_legal = legal_move_codes(st, codes)
    n = 0
    for i in range(n_legal):
        code = codes[i]
        if mask[code]:
            continue
        codes[n] = code
        values[n] = objective(st, code, rng, work)
        n += 1
    return n


@inner()
def best_m_moves(st, mask, m, rng, work, out):
    """The m best moves not in ``mask`` into ``out[:k]`` (AGENTS.md §A.3: whole sets of equal f
    while they fit, then a shuffled part of the next); returns k."""
    n = score_moves(st, mask, rng, work, work.codes, work.values)
    return take_m_best(n, m, rng, work.codes, work.values, work.tie_moves, out)


@njit(cache=True, _nrt=False, inline="always")
def context_value(st, work):
    """H of ``st`` from its mover's side."""
    return heuristic(st, st[TO_MOVE])


@inner(_nrt=False)
def random_move(st, banned, rng, work):
    """A uniformly random legal move not in ``banned``; -1 if none."""
    n_legal = legal_move_codes(st, work.codes)
    n = 0
    for i in range(n_legal):
        if not banned[work.codes[i]]:
            work.codes[n] = work.codes[i]
            n += 1
    if n == 0:
        return -1
    return pick(rng, work.codes, n)


@njit(cache=True, _nrt=False, inline="always")
def apply_move_unchecked(st, code, rng, work):
    """``apply_move`` (a game whose end test costs nothing apart from its move)."""
    return apply_move(st, code, rng, work)


@njit(cache=True, _nrt=False, inline="always")
def expansion_limit(st, params):
    """Every legal move."""
    return legal_move_count(st)


@njit(cache=True, _nrt=False, inline="always")
def root_masked(st, code, params):
    """No early root mask."""
    return False


@inner()
def lookahead_mask(st, mask, rng, work):
    """``work.la_mask`` = ``mask`` plus the moves after which the opponent wins at once, unless every
    examined move is such; counts in ``work.la_counts``. ``rng`` is copied, never advanced."""
    mover = st[TO_MOVE]
    after, reply, rng_copy = work.la_after, work.la_reply, work.la_rng
    n_legal = 0
    n_unsafe = 0
    n_replies = 0
    for c in range(N_MOVE_CODES):
        work.la_unsafe[c] = False
    n_moves = legal_move_codes(st, work.la_codes)
    for i in range(n_moves):
        code = work.la_codes[i]
        if mask[code]:
            continue
        n_legal += 1
        for j in range(STATE_SIZE):
            after[j] = st[j]
        for j in range(4):
            rng_copy[j] = rng[j]
        winner, _ = apply_move(after, code, rng_copy, work)
        if winner != 0:
            continue  # a move that ends the game is not a move the opponent can answer
        n_answers = legal_move_codes(after, work.la_replies)
        for r in range(n_answers):
            for j in range(STATE_SIZE):
                reply[j] = after[j]
            n_replies += 1
            won, _ = apply_move(reply, work.la_replies[r], rng_copy, work)
            if won == -mover:
                work.la_unsafe[code] = True
                n_unsafe += 1
                break
    work.la_counts[N_LEGAL] = n_legal
    work.la_counts[N_UNSAFE] = n_unsafe
    work.la_counts[N_REPLIES] = n_replies
    return mask_unsafe(mask, work.la_unsafe, work.la_counts, work.la_mask)


# ------------------------------------------------------------------------------------------
# Alpha-beta's (:mod:`boopexp.engine.alphabeta`)

#: a move has no follow-up choice: one child
MAX_FOLLOWUPS = 1


@inner(_nrt=False)
def hash_key(st):
    """The transposition table's key of ``st``: every entry of the state mixed (splitmix64's
    finaliser); never 0 (0 marks an empty entry)."""
    key = uint64(0x9E3779B97F4A7C15)
    for i in range(STATE_SIZE):
        x = key ^ (uint64(st[i]) + uint64(i) * uint64(0xBF58476D1CE4E5B9))
        x = (x ^ (x >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> uint64(27))) * uint64(0x94D049BB133111EB)
        key = x ^ (x >> uint64(31))
    return key | uint64(1)


@inner(_nrt=False)
def is_legal(st, code, work):
    """Whether ``code`` is a legal move of ``st``."""
    n = legal_move_codes(st, work.la_codes)
    for i in range(n):
        if work.la_codes[i] == code:
            return True
    return False


@njit(cache=True, _nrt=False, inline="always")
def place(st, code, rng, work, groups):
    """Play ``code`` (``apply_move``): (its outcome, no follow-up)."""
    outcome, _ = apply_move(st, code, rng, work)
    return outcome, 0


@njit(cache=True, _nrt=False, inline="always")
def follow_up(st, me, groups, g):
    """Never called: a move has no follow-up choice."""
