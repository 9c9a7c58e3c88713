"""Connect Four's compiled kernels (the game contract's constants, ``new_work`` and kernels:
legal moves, ``apply_move``, ``has_won``, the heuristic H and the objective f).

The compiled half of the game contract (docs/games.md) for Connect Four, on the bitboards of
:mod:`boopexp.games.connect_four.state`. Every kernel borrows its caller's arrays and neither
allocates nor returns one (``njit(cache=True, _nrt=False)``).

Rules as played (those of OpenSpiel's ``connect_four``, which ``tests/test_connect_four.py``
plays 10,000 random games against): 6 rows x 7 columns; a move drops a piece of the side to move
into a column that is not full (move code = column 0..6, legal moves listed in column order);
the first player is colour -1 (OpenSpiel's player 0, ``x``); four of a colour in a row
horizontally, vertically or diagonally win at once; a full board without four in a row is a draw
(``apply_move`` returns ``DRAW``).

The heuristic H(s, me), in [-1, 1], from ``me``'s side (first rule that applies):

1. 1.0 if ``me`` has four in a row, -1.0 if the opponent has; 0.0 on a full board (draw);
2. the side to move can complete four at once (a playable cell finishes a line):
   ``WIN_NEXT`` = 0.9 for the side to move (+0.9 if that is ``me``, else -0.9);
3. the side not to move has two or more such cells (the mover can block only one):
   ``DOUBLE_THREAT`` = 0.85 for that side;
4. otherwise the lines of four cells (69: ``LINE_STARTS``) that hold no opponent piece: with
   x = ``THREE_WEIGHT`` (4) x (my three-piece lines - the opponent's) + (my two-piece lines - the
   opponent's), H = 0.8 x / (|x| + 16), in (-0.8, 0.8) (a rational squash: no libm, the same
   float on every machine).

The objective f(s, move) of the side to move is H of the position after the move from the
mover's side (``F_IS_H_AFTER``): a winning move is 1.0, a move after which the opponent wins at
once (it gives them a cell or fails to block one) is -0.9, one that leaves them a double threat
-0.85, the rest the line counts. f is computed on the two bitboards alone, without copying the
state.

``DRAW`` is the contract's one (:data:`boopexp.engine.outcome.DRAW`).
"""

from __future__ import annotations

from collections import namedtuple

from numba import njit

from boopexp.engine.binding import work_fields, zero_work
from boopexp.engine.bits import popcount
from boopexp.engine.outcome import DRAW
from boopexp.engine.rng import rand_below
from boopexp.games.connect_four import state
from boopexp.games.connect_four.state import (
    BOTTOM,
    BOTTOM_ROW,
    COLUMN_MASK,
    COLUMNS,
    DIRECTIONS,
    FULL,
    LINE_STARTS,
    MOVE_NUMBER,
    N_CELLS,
    STATE_DTYPE,
    STATE_SIZE,
    STRIDE,
    TO_MOVE,
    TOP,
    TOP_ROW,
)

__all__ = [
    "STATE_SIZE", "STATE_DTYPE", "TO_MOVE", "MOVE_NUMBER", "N_MOVE_CODES", "MAX_LEGAL", "F_IS_H_AFTER", "DRAW",
    "new_work", "legal_move_codes", "legal_move_count", "apply_move", "has_won", "heuristic", "objective",
    "random_move",
]

#: a move code is the column, 0..6
N_MOVE_CODES = COLUMNS
MAX_LEGAL = COLUMNS
#: f(s, move) is H(s after move, mover) exactly (``objective`` evaluates the same ``_value``)
F_IS_H_AFTER = True

#: H's values (module docstring)
WIN_NEXT = 0.9
DOUBLE_THREAT = 0.85
THREE_WEIGHT = 4
LINES_SCALE = 0.8
LINES_HALF = 16.0

#: the work buffers: the template's fields (engine.binding.work_fields);
#: Connect Four needs no field of its own
WORK_FIELDS = work_fields(STATE_SIZE, STATE_DTYPE, N_MOVE_CODES)
Work = namedtuple("Work", [name for name, _, _ in WORK_FIELDS])  # type: ignore[misc]


def new_work() -> Work:
    """A fresh set of work buffers, all zero (``mask`` and ``la_mask`` all False)."""
    return zero_work(Work, WORK_FIELDS)


#: the index of a colour's bitboard (state.board_index compiled, inlined)
board_index = njit(cache=True, _nrt=False, inline="always")(state.board_index)
#: whether a bitboard holds four in a row (state.four_in_a_row compiled, inlined)
four_in_a_row = njit(cache=True, _nrt=False, inline="always")(state.four_in_a_row)


@njit(cache=True, _nrt=False, inline="always")
def winning_cells(p, occupied):
    """The empty cells where one more piece of ``p`` makes four in a row (playable or not)."""
    r = (p << 1) & (p << 2) & (p << 3)  # vertical: three below
    for d in (STRIDE, STRIDE - 1, STRIDE + 1):  # the other three directions, either side
        q = (p << d) & (p << (2 * d))
        r |= q & (p << (3 * d))
        r |= q & (p >> d)
        q = (p >> d) & (p >> (2 * d))
        r |= q & (p >> (3 * d))
        r |= q & (p << d)
    return r & (FULL ^ occupied)


@njit(cache=True, _nrt=False, inline="always")
def playable_cells(occupied):
    """The cell each column that is not full would take next."""
    return (occupied + BOTTOM_ROW) & FULL


@njit(cache=True, _nrt=False)
def legal_move_codes(st, out):
    """The columns that are not full into ``out[:n]``, left to right; return n. The position is
    taken as not won (a game stops at the win ``apply_move`` reports)."""
    occupied = st[0] | st[1]
    n = 0
    for c in range(COLUMNS):
        if occupied & TOP[c] == 0:
            out[n] = c
            n += 1
    return n


@njit(cache=True, _nrt=False)
def legal_move_count(st):
    """The number of columns that are not full (what :func:`legal_move_codes` returns)."""
    return COLUMNS - popcount((st[0] | st[1]) & TOP_ROW)


@njit(cache=True, _nrt=False)
def apply_move(st, code, rng, work):
    """Drop a piece of the side to move into column ``code`` (legal: not full) in place; the side
    to move flips and the ply count grows. Returns ``(winner, 0)``: the mover's colour if the move
    made four in a row, ``DRAW`` if it filled the board, else 0 (no follow-up choice exists;
    ``rng`` and ``work`` are unused)."""
    mover = st[TO_MOVE]
    i = board_index(mover)
    cell = ((st[0] | st[1]) + BOTTOM[code]) & COLUMN_MASK[code]
    st[i] |= cell
    st[TO_MOVE] = -mover
    st[MOVE_NUMBER] += 1
    if four_in_a_row(st[i]):
        return mover, 0
    if st[MOVE_NUMBER] == N_CELLS:
        return DRAW, 0
    return 0, 0


@njit(cache=True, _nrt=False)
def has_won(st, colour):
    """Whether ``colour`` has four in a row."""
    return four_in_a_row(st[board_index(colour)])


@njit(cache=True, _nrt=False, inline="always")
def _counts(p, q, d, starts):
    """The lines of four cells along step ``d`` (first cells ``starts``) that hold no piece of
    ``q`` and three, and two, pieces of ``p``: every line at once, a bit per line, the four
    cells' bits added by a bit-sliced adder."""
    free = starts & ~(q | (q >> d) | (q >> (2 * d)) | (q >> (3 * d)))
    a0 = p
    a1 = p >> d
    a2 = p >> (2 * d)
    a3 = p >> (3 * d)
    low1 = a0 ^ a1  # a0 + a1 = 2 * high1 + low1
    high1 = a0 & a1
    low2 = a2 ^ a3
    high2 = a2 & a3
    ones = low1 ^ low2  # the sum's bits: ones, twos, fours
    carry = low1 & low2
    twos = high1 ^ high2 ^ carry
    fours = (high1 & high2) | (carry & (high1 ^ high2))
    three = free & ones & twos & ~fours
    two = free & twos & ~ones & ~fours
    return popcount(three), popcount(two)


@njit(cache=True, _nrt=False, inline="always")
def line_balance(mine, theirs):
    """x of H's rule 4: THREE_WEIGHT x (three-piece lines) + (two-piece lines), mine minus
    theirs, over the lines of four that hold pieces of one colour only."""
    x = 0
    for i in range(4):
        d = DIRECTIONS[i]
        starts = LINE_STARTS[i]
        three, two = _counts(mine, theirs, d, starts)
        x += THREE_WEIGHT * three + two
        three, two = _counts(theirs, mine, d, starts)
        x -= THREE_WEIGHT * three + two
    return x


@njit(cache=True, _nrt=False, inline="always")
def _value(mine, theirs, mine_to_move):
    """H from the side of the colour whose pieces are ``mine`` (module docstring's rules 1-4)."""
    if four_in_a_row(mine):
        return 1.0
    if four_in_a_row(theirs):
        return -1.0
    occupied = mine | theirs
    if occupied == FULL:
        return 0.0
    playable = playable_cells(occupied)
    mover = mine if mine_to_move else theirs
    waiter = theirs if mine_to_move else mine
    if winning_cells(mover, occupied) & playable:
        return WIN_NEXT if mine_to_move else -WIN_NEXT
    if popcount(winning_cells(waiter, occupied) & playable) >= 2:
        return -DOUBLE_THREAT if mine_to_move else DOUBLE_THREAT
    x = line_balance(mine, theirs)
    return LINES_SCALE * x / (abs(x) + LINES_HALF)


@njit(cache=True, _nrt=False)
def heuristic(st, me):
    """H of ``st`` from colour ``me``'s side, in [-1, 1] (module docstring)."""
    return _value(st[board_index(me)], st[board_index(-me)], st[TO_MOVE] == me)


@njit(cache=True, _nrt=False)
def objective(st, code, rng, work):
    """f of dropping in column ``code`` for the side to move: H after the move, from the mover's
    side (``F_IS_H_AFTER``). ``st`` is not changed; ``rng`` and ``work`` are unused."""
    mover = st[TO_MOVE]
    mine = st[board_index(mover)]
    theirs = st[board_index(-mover)]
    cell = ((mine | theirs) + BOTTOM[code]) & COLUMN_MASK[code]
    return _value(mine | cell, theirs, False)


@njit(cache=True, _nrt=False)
def random_move(st, banned, rng, work):
    """A uniformly random column that is neither full nor ``banned`` (bool[7]); -1 if none. The
    draw is the template's default's (``legal_move_codes`` then ``rng.pick`` among the unbanned:
    one candidate is taken without a draw), so overriding it changes no game."""
    free = ~(st[0] | st[1]) & TOP_ROW
    n = 0
    for c in range(COLUMNS):
        if free & TOP[c] and not banned[c]:
            n += 1
    if n == 0:
        return -1
    k = 0 if n == 1 else rand_below(rng, n)
    for c in range(COLUMNS):
        if free & TOP[c] and not banned[c]:
            if k == 0:
                return c
            k -= 1
    return -1
