"""Colosseum Survival's compiled kernels (the game contract's constants, ``new_work`` and kernels:
legal moves, ``apply_move``, ``has_won``, the heuristic H and the objective f).

The compiled half of the game contract (docs/games.md) on the bitboards of
:mod:`boopexp.games.colosseum.state`, whose plain-Python walk (``reach``) is
compiled here. Every kernel borrows its caller's arrays and neither allocates nor returns one.

Rules as played (the COMP 424 framework's, spec/games/COLOSSEUM.md): the mover walks 0..K steps
across open sides, never into the adversary's cell, then walls one open side of the cell it
stands on (§4); a move is code ``4*(12*r + c) + d`` and the legal moves are listed in code
order, which is the spec's r, c, d order (§5). After every move the cells are grouped into
regions by open sides; once A and B are in different regions the game is over, the larger
region wins and equal regions are a draw (§6; a third region counts for nobody).

The heuristic H(s, me), in [-1, 1], from ``me``'s side: 1.0 / -1.0 / 0.0 when the game is over
(won / lost / a tie); otherwise the seed report's own evaluation (spec §12.2, experiment 2: our
reachable cells over the adversary's, scaled to 0..1) on [-1, 1]:

    H = REACH_SCALE * (a - b) / (a + b)

with a, b the cells ``me`` and the opponent can reach in one move (at most K steps, the other
player an obstacle, staying put included; both at least 1), so H stays strictly inside a win's
and a loss's values. The objective f(s, move) of the side to move is H after the move from the
mover's side (``F_IS_H_AFTER``): 1.0 for a move that separates the players with the mover's
region larger, -1.0 for one that walls the mover into the smaller region, 0.0 for a tie.
"""

from __future__ import annotations

from collections import namedtuple

from numba import njit

from boopexp.engine.binding import work_fields, zero_work
from boopexp.engine.bits import popcount, trailing_zeros
from boopexp.engine.outcome import DRAW
from boopexp.games.colosseum import state
from boopexp.games.colosseum.state import (
    CELL_STEP,
    FIRST,
    FLOOD,
    MAX_STEP,
    MOVE_NUMBER,
    N_MOVE_CODES,
    POS_A,
    POS_B,
    STATE_DTYPE,
    STATE_SIZE,
    TO_MOVE,
    WALL,
    WORD_BITS,
)

__all__ = [
    "STATE_SIZE", "STATE_DTYPE", "TO_MOVE", "MOVE_NUMBER", "N_MOVE_CODES", "F_IS_H_AFTER", "DRAW", "new_work",
    "legal_move_codes", "legal_move_count", "apply_move", "has_won", "heuristic", "objective", "end_check",
]

#: f(s, move) is H(s after move, mover) exactly (``objective`` plays the move on ``work.after``)
F_IS_H_AFTER = True
#: H of a position that goes on: the reach balance scaled into (-REACH_SCALE, REACH_SCALE)
REACH_SCALE = 0.9

#: the work buffers: the template's fields (engine.binding.work_fields), then the game's own
WORK_FIELDS = work_fields(STATE_SIZE, STATE_DTYPE, N_MOVE_CODES) + (
    ("after", STATE_SIZE, STATE_DTYPE),  # the game's own: the position after a move f scores
)
Work = namedtuple("Work", [name for name, _, _ in WORK_FIELDS])  # type: ignore[misc]


def new_work() -> Work:
    """A fresh set of work buffers, all zero (``mask`` and ``la_mask`` all False)."""
    return zero_work(Work, WORK_FIELDS)


_inline = njit(cache=True, _nrt=False, inline="always")
#: the bounded / flooding walk of :mod:`state` and its membership test, compiled and inlined
reach = _inline(state.reach)
holds = _inline(state.holds)


@_inline
def _count(w0, w1, w2):
    return popcount(w0) + popcount(w1) + popcount(w2)


@_inline
def _sides(st, mover):
    """(the mover's cell, the adversary's cell) of colour ``mover``."""
    if mover == FIRST:
        return st[POS_A], st[POS_B]
    return st[POS_B], st[POS_A]


@njit(cache=True, _nrt=False)
def end_check(st):
    """``World.check_endgame`` (the spec's §6): (over, A's region size, B's region size); while
    the players share a region both sizes are its size."""
    a0, a1, a2 = reach(st, st[POS_A], -1, FLOOD)
    size_a = _count(a0, a1, a2)
    if holds(a0, a1, a2, st[POS_B]):
        return False, size_a, size_a
    b0, b1, b2 = reach(st, st[POS_B], -1, FLOOD)
    return True, size_a, _count(b0, b1, b2)


@_inline
def _reached(st, mover):
    """The cells the colour ``mover`` can walk to in one move (at most K steps, not through the
    adversary; its own cell included), as three words."""
    me, them = _sides(st, mover)
    return reach(st, me, them, st[MAX_STEP])


@njit(cache=True, _nrt=False)
def legal_move_codes(st, out):
    """The legal moves of the side to move into ``out[:n]`` in the spec's §5 order (r, c, then the
    side U R D L); return n. The position is taken as not over (a game stops at the move that
    separates the players, as ``apply_move`` reports)."""
    r = _reached(st, st[TO_MOVE])
    n = 0
    for w in range(3):
        x = r[w]
        while x:
            bit = trailing_zeros(x)
            x &= x - 1
            for d in range(4):
                if not (st[WALL + 3 * d + w] >> bit) & 1:
                    out[n] = 4 * (w * WORD_BITS + bit) + d
                    n += 1
    return n


@njit(cache=True, _nrt=False)
def legal_move_count(st):
    """The number of legal moves (what :func:`legal_move_codes` returns): every open side of
    every reachable cell."""
    r = _reached(st, st[TO_MOVE])
    n = 0
    for w in range(3):
        for d in range(4):
            n += popcount(r[w] & ~st[WALL + 3 * d + w])
    return n


@_inline
def _wall(st, cell, d):
    """Wall side ``d`` of ``cell`` and the facing side of its neighbour (both flags, §1)."""
    st[WALL + 3 * d + cell // WORD_BITS] |= 1 << (cell % WORD_BITS)
    other = cell + CELL_STEP[d]
    st[WALL + 3 * (d ^ 2) + other // WORD_BITS] |= 1 << (other % WORD_BITS)


@_inline
def _outcome(st):
    """0 while the players share a region, else the colour with the larger region or DRAW."""
    over, size_a, size_b = end_check(st)
    if not over:
        return 0
    if size_a > size_b:
        return FIRST
    if size_b > size_a:
        return -FIRST
    return DRAW


@njit(cache=True, _nrt=False)
def apply_move(st, code, rng, work):
    """Play move ``code`` (legal) for the side to move in place: walk to its cell, wall its side,
    flip the side to move, count the ply. Returns ``(outcome, 0)``: 0 while the players share a
    region, else the colour whose region is larger or ``DRAW`` for equal regions, whoever's wall
    separated them (§6). ``rng`` and ``work`` are unused."""
    mover = st[TO_MOVE]
    cell = code >> 2
    if mover == FIRST:
        st[POS_A] = cell
    else:
        st[POS_B] = cell
    _wall(st, cell, code & 3)
    st[TO_MOVE] = -mover
    st[MOVE_NUMBER] += 1
    return _outcome(st), 0


@njit(cache=True, _nrt=False)
def has_won(st, colour):
    """Whether the players are separated with ``colour``'s region the larger."""
    over, size_a, size_b = end_check(st)
    if not over:
        return False
    return size_a > size_b if colour == FIRST else size_b > size_a


@_inline
def _value(st, outcome, me):
    """H of ``st`` (whose end check gave ``outcome``) from colour ``me``'s side."""
    if outcome == DRAW:
        return 0.0
    if outcome != 0:
        return 1.0 if outcome == me else -1.0
    m0, m1, m2 = _reached(st, me)
    t0, t1, t2 = _reached(st, -me)
    a = _count(m0, m1, m2)
    b = _count(t0, t1, t2)
    return REACH_SCALE * (a - b) / (a + b)


@njit(cache=True, _nrt=False)
def heuristic(st, me):
    """H of ``st`` from colour ``me``'s side, in [-1, 1] (module docstring)."""
    return _value(st, _outcome(st), me)


@njit(cache=True, _nrt=False)
def objective(st, code, rng, work):
    """f of move ``code`` for the side to move: H after the move from the mover's side
    (``F_IS_H_AFTER``), the move played on ``work.after``; ``st`` is not changed."""
    after = work.after
    for i in range(STATE_SIZE):  # a loop: a slice copy may alias, so numba would allocate
        after[i] = st[i]
    mover = st[TO_MOVE]
    outcome, _ = apply_move(after, code, rng, work)
    return _value(after, outcome, mover)
