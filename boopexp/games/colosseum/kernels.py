"""Colosseum Survival's compiled kernels (the game contract's constants, ``new_work`` and kernels:
legal moves, ``apply_move``, ``has_won``, the heuristic H and the objective f).

The compiled half of the game contract (docs/games.md), with its optional
``apply_move_unchecked`` (a move without the end test), on the bitboards of
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

import numpy as np
from numba import njit

from boopexp.engine.binding import work_fields, zero_work
from boopexp.engine.bits import popcount, trailing_zeros
from boopexp.engine.outcome import DRAW
from boopexp.games.colosseum import state
from boopexp.games.colosseum.state import (
    CELL_STEP,
    FIRST,
    FLOOD,
    GRID,
    MAX_STEP,
    MOVE_NUMBER,
    N_MOVE_CODES,
    POS_A,
    POS_B,
    SEPARATION,
    SIZE,
    STATE_DTYPE,
    STATE_SIZE,
    TO_MOVE,
    WALL,
    WORD_BITS,
)

__all__ = [
    "STATE_SIZE", "STATE_DTYPE", "TO_MOVE", "MOVE_NUMBER", "N_MOVE_CODES", "F_IS_H_AFTER", "DRAW", "new_work",
    "legal_move_codes", "legal_move_count", "apply_move", "has_won", "heuristic", "objective", "end_check",
    "apply_move_unchecked", "separated",
]

#: f(s, move) is H(s after move, mover) exactly (``objective`` plays the move on ``work.after``)
F_IS_H_AFTER = True
#: H of a position that goes on: the reach balance scaled into (-REACH_SCALE, REACH_SCALE)
REACH_SCALE = 0.9

#: the work buffers: the template's fields (engine.binding.work_fields), then the game's own
WORK_FIELDS = work_fields(STATE_SIZE, STATE_DTYPE, N_MOVE_CODES) + (
    ("after", STATE_SIZE, STATE_DTYPE),  # the game's own: the position after a move f scores
    ("sep_cells", GRID * GRID, np.int64),  # the union-find separation test's parents
    ("sep_marks", GRID * GRID, np.int64),  # the bidirectional search's marks (all 0 between uses)
    ("sep_queue_a", GRID * GRID, np.int64),  # the bidirectional search's queues: from A
    ("sep_queue_b", GRID * GRID, np.int64),  # from B
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
def _open(st, cell, d):
    """Whether side ``d`` of ``cell`` is open (no wall, no edge)."""
    return not (st[WALL + 3 * d + cell // WORD_BITS] >> (cell % WORD_BITS)) & 1


@_inline
def _find(parent, cell):
    """The root of ``cell``'s set, the path compressed on the way (the framework's ``find``)."""
    root = cell
    while parent[root] != root:
        root = parent[root]
    while parent[cell] != root:
        nxt = parent[cell]
        parent[cell] = root
        cell = nxt
    return root


@njit(cache=True, _nrt=False)
def union_find_check(st, work):
    """:func:`end_check` as the original framework's ``check_endgame`` computes it (spec §6): a
    union-find over every cell's open Right and Down sides, every cell's root found, each player's
    region counted over all M x M cells (``work.sep_cells`` the parents): agent A's cost."""
    size = st[SIZE]
    parent = work.sep_cells
    for r in range(size):
        for c in range(size):
            parent[GRID * r + c] = GRID * r + c
    for r in range(size):
        for c in range(size):
            cell = GRID * r + c
            for d in (1, 2):  # Right, Down
                if _open(st, cell, d):
                    a = _find(parent, cell)
                    b = _find(parent, cell + CELL_STEP[d])
                    if a != b:
                        parent[a] = b
    for r in range(size):
        for c in range(size):
            _find(parent, GRID * r + c)
    root_a = _find(parent, st[POS_A])
    root_b = _find(parent, st[POS_B])
    size_a = 0
    size_b = 0
    for r in range(size):
        for c in range(size):
            root = parent[GRID * r + c]
            size_a += root == root_a
            size_b += root == root_b
    return root_a != root_b, size_a, size_b


@_inline
def _grow(st, queue, head, tail, marks, mine, other):
    """Expand the cell ``queue[head]`` of a breadth-first search (its cells marked ``mine``):
    (the new tail, whether a neighbour is marked ``other``: the two searches met)."""
    cell = queue[head]
    for d in range(4):
        if _open(st, cell, d):
            nb = cell + CELL_STEP[d]
            if marks[nb] == other:
                return tail, True
            if marks[nb] == 0:
                marks[nb] = mine
                queue[tail] = nb
                tail += 1
    return tail, False


@njit(cache=True, _nrt=False)
def bidirectional_check(st, work):
    """:func:`end_check` by a bidirectional breadth-first search between the players (the report's
    Experiment 3, agent B): one cell from each side in turn, until the searches meet (not over:
    both sizes returned 0, they are not needed) or one side's region is exhausted (over: the other
    search is finished to count its region). ``work.sep_marks`` holds the marks (left all 0)."""
    marks, qa, qb = work.sep_marks, work.sep_queue_a, work.sep_queue_b
    qa[0] = st[POS_A]
    qb[0] = st[POS_B]
    marks[qa[0]] = 1
    marks[qb[0]] = 2
    ha, ta, hb, tb = 0, 1, 0, 1
    met = False
    while ha < ta and hb < tb and not met:
        ta, met = _grow(st, qa, ha, ta, marks, 1, 2)
        ha += 1
        if not met:
            tb, met = _grow(st, qb, hb, tb, marks, 2, 1)
            hb += 1
    while not met and ha < ta:  # B's region is exhausted: finish A's (it cannot meet B's)
        ta, _ = _grow(st, qa, ha, ta, marks, 1, 2)
        ha += 1
    while not met and hb < tb:
        tb, _ = _grow(st, qb, hb, tb, marks, 2, 1)
        hb += 1
    for i in range(ta):
        marks[qa[i]] = 0
    for i in range(tb):
        marks[qb[i]] = 0
    if met:
        return False, 0, 0
    return True, ta, tb


@_inline
def separated(st, work):
    """The end test of ``apply_move``: (over, A's region size, B's region size) by the state's
    separation test (``s[SEPARATION]``: the bitboard flood, union-find or the bidirectional search);
    every test gives the same over and, when over, the same sizes."""
    how = st[SEPARATION]
    if how == 1:
        return union_find_check(st, work)
    if how == 2:
        return bidirectional_check(st, work)
    return end_check(st)


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
    return _winner(end_check(st))


@_inline
def _winner(check):
    """The outcome of an end test's (over, A's size, B's size)."""
    over, size_a, size_b = check
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
    separated them (§6), by the state's separation test (:func:`separated`, its buffers in ``work``).
    ``rng`` is unused."""
    apply_move_unchecked(st, code, rng, work)
    return _winner(separated(st, work)), 0


@njit(cache=True, _nrt=False)
def apply_move_unchecked(st, code, rng, work):
    """:func:`apply_move` without the end test (the contract's optional kernel: a playout's odd plies
    under ``terminal_check`` 2): returns ``(0, 0)`` whether or not the move separated the players."""
    mover = st[TO_MOVE]
    cell = code >> 2
    if mover == FIRST:
        st[POS_A] = cell
    else:
        st[POS_B] = cell
    _wall(st, cell, code & 3)
    st[TO_MOVE] = -mover
    st[MOVE_NUMBER] += 1
    return 0, 0


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
