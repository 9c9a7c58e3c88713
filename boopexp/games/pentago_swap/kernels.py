"""Pentago-Swap's compiled kernels (the game contract's constants, ``new_work`` and kernels: legal
moves in the original's order, ``apply_move`` with the original's judgement, ``has_won``, the
heuristic H and the objective f).

The compiled half of the game contract (docs/games.md) for Pentago-Swap, on the bitboards of
:mod:`boopexp.games.pentago_swap.state`. Every kernel borrows its caller's arrays and neither
allocates nor returns one (``njit(cache=True, _nrt=False)``).

Rules as the COMP 424 framework plays them (../shared/spec/games/PENTAGO-SWAP.md, checked ply by
ply against its golden traces in ``tests/test_pentago_swap.py``): a move places a piece of the
side to move on an empty cell, then exchanges two quadrants (compulsory); the position is judged
after the swap (QUIRK-PS6) by the table of spec §5, in which a swap that completes only the
opponent's five loses at once (QUIRK-PS5), both players' fives draw, and a full board (ply 36)
without a five draws. The move list holds every empty cell with each of the six swaps, duplicates
included (QUIRK-PS4).

The heuristic H(s, me), in [-1, 1], from ``me``'s side (first rule that applies):

1. the judgement of the lines on the board: 1.0 if only ``me`` has five in a row, -1.0 if only
   the opponent has, 0.0 if both have (a draw) or the board is full;
2. the side to move has an open four (a window of five cells holding four of its pieces and an
   empty cell): ``WIN_NEXT`` = 0.9 for the side to move (it places the fifth piece and swaps two
   quadrants the window does not touch: 28 of the 32 windows lie in two quadrants);
3. otherwise the windows of five (32: ``state.WINDOWS``) that hold pieces of one colour only, each
   weighing ``WINDOW_WEIGHT[k]`` (1, 3, 9, 27) for its k pieces: x = mine - the opponent's, and
   H = 0.8 x / (|x| + 24), in (-0.8, 0.8) (a rational squash: no libm, the same float on every
   machine).

The objective f(s, move) of the side to move is H of the position after the place-and-swap from
the mover's side (``F_IS_H_AFTER``): a winning move is 1.0, a move whose swap completes only the
opponent's five -1.0 (QUIRK-PS5), one that leaves the opponent an open four -0.9, the others their
window balance (docs/games.md, "Pentago-Swap", says why).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from boopexp.engine.binding import work_fields, zero_work
from boopexp.engine.bits import popcount, trailing_zeros
from boopexp.engine.outcome import DRAW
from boopexp.engine.rng import rand_below
from boopexp.games.pentago_swap import state
from boopexp.games.pentago_swap.state import (
    CELL_BIT,
    FULL,
    MOVE_NUMBER,
    N_CELLS,
    N_MOVE_CODES,
    N_SWAPS,
    SIDE,
    STATE_DTYPE,
    STATE_SIZE,
    STRIDE,
    SWAP_A,
    SWAP_B,
    TO_MOVE,
    WINDOWS,
    WINNER,
)

__all__ = [
    "STATE_SIZE", "STATE_DTYPE", "TO_MOVE", "MOVE_NUMBER", "N_MOVE_CODES", "F_IS_H_AFTER", "DRAW",
    "new_work", "legal_move_codes", "legal_move_count", "apply_move", "has_won", "heuristic", "objective",
    "random_move",
]

#: f(s, move) is H(s after move, mover) exactly (``objective`` evaluates the same ``_value``)
F_IS_H_AFTER = True

#: H's values (module docstring)
WIN_NEXT = 0.9
WINDOW_WEIGHT = np.array([0, 1, 3, 9, 27], dtype=np.int64)
LINES_SCALE = 0.8
LINES_HALF = 24.0
N_WINDOWS = len(WINDOWS)

#: the work buffers: the template's fields (engine.binding.work_fields);
#: Pentago-Swap needs no field of its own
WORK_FIELDS = work_fields(STATE_SIZE, STATE_DTYPE, N_MOVE_CODES)
Work = namedtuple("Work", [name for name, _, _ in WORK_FIELDS])  # type: ignore[misc]


def new_work() -> Work:
    """A fresh set of work buffers, all zero (``mask`` and ``la_mask`` all False)."""
    return zero_work(Work, WORK_FIELDS)


#: the index of a colour's bitboard (state.board_index compiled, inlined)
board_index = njit(cache=True, _nrt=False, inline="always")(state.board_index)
#: whether a bitboard holds five in a row (state.five_in_a_row compiled, inlined)
five_in_a_row = njit(cache=True, _nrt=False, inline="always")(state.five_in_a_row)
#: a bitboard with two quadrants exchanged (state.swap_quadrants compiled, inlined)
swap_quadrants = njit(cache=True, _nrt=False, inline="always")(state.swap_quadrants)


@njit(cache=True, _nrt=False)
def legal_move_codes(st, out):
    """Every empty cell with each of the six swaps into ``out[:n]``, in the original's
    ``getAllLegalMoves()`` order (cells row-major, then the swaps TL-TR .. BL-BR: increasing codes);
    return n. Duplicates are kept (QUIRK-PS4); a finished position lists its moves too, as the
    original does (the search stops at the outcome ``apply_move`` reports)."""
    occupied = st[0] | st[1]
    n = 0
    for i in range(N_CELLS):
        if occupied & CELL_BIT[i] == 0:
            for s in range(N_SWAPS):
                out[n] = N_SWAPS * i + s
                n += 1
    return n


@njit(cache=True, _nrt=False)
def legal_move_count(st):
    """Six moves per empty cell (what :func:`legal_move_codes` returns)."""
    return N_SWAPS * (N_CELLS - popcount(st[0] | st[1]))


@njit(cache=True, _nrt=False, inline="always")
def judge(mover_bits, other_bits, mover, winner, plies):
    """The original's winner after a move by ``mover`` (spec §5), from the bitboards after the
    swap: a five of the mover's alone wins, the opponent's alone wins for the opponent even on the
    mover's swap (QUIRK-PS5), both draw; with no five, a full board (``plies`` = 36) draws, and so
    does a position already decided (``winner`` != 0: a move played after the end turns the
    result into a draw, QUIRK-PS3); otherwise 0, the game goes on."""
    mine = five_in_a_row(mover_bits)
    theirs = five_in_a_row(other_bits)
    if mine:
        return DRAW if theirs else mover
    if theirs:
        return -mover  # QUIRK-PS5
    if winner != 0 or plies == N_CELLS:
        return DRAW  # QUIRK-PS3 (a finished game played on), or the full board
    return 0


@njit(cache=True, _nrt=False)
def apply_move(st, code, rng, work):
    """Place a piece of the side to move on the cell of ``code``, then exchange the code's two
    quadrants (the placed piece travels with its quadrant), in place; the side to move flips and
    the ply count grows. The position is judged after the swap only (QUIRK-PS6) by :func:`judge`,
    whose verdict is stored at ``WINNER`` and returned: ``(winner, 0)`` (no follow-up choice;
    ``rng`` and ``work`` are unused)."""
    mover = st[TO_MOVE]
    i = board_index(mover)
    cell = code // N_SWAPS
    s = code - N_SWAPS * cell
    a = SWAP_A[s]
    b = SWAP_B[s]
    st[i] |= CELL_BIT[cell]
    st[0] = swap_quadrants(st[0], a, b)
    st[1] = swap_quadrants(st[1], a, b)
    st[TO_MOVE] = -mover
    st[MOVE_NUMBER] += 1
    winner = judge(st[i], st[1 - i], mover, st[WINNER], st[MOVE_NUMBER])
    st[WINNER] = winner
    return winner, 0


@njit(cache=True, _nrt=False)
def has_won(st, colour):
    """Whether ``colour`` has five in a row (the original's private line check; the outcome also
    depends on the other colour's line, :func:`judge`)."""
    return five_in_a_row(st[board_index(colour)])


@njit(cache=True, _nrt=False, inline="always")
def _value(mine, theirs, mine_to_move):
    """H from the side of the colour whose pieces are ``mine`` (module docstring's rules 1-3)."""
    my_line = five_in_a_row(mine)
    their_line = five_in_a_row(theirs)
    if my_line:
        return 0.0 if their_line else 1.0
    if their_line:
        return -1.0
    if popcount(mine | theirs) == N_CELLS:
        return 0.0
    x = 0
    four = False  # the side to move has an open four
    for w in range(N_WINDOWS):
        cells = WINDOWS[w]
        a = mine & cells
        b = theirs & cells
        if b == 0:
            k = popcount(a)
            x += WINDOW_WEIGHT[k]
            if k == 4 and mine_to_move:
                four = True
        elif a == 0:
            k = popcount(b)
            x -= WINDOW_WEIGHT[k]
            if k == 4 and not mine_to_move:
                four = True
    if four:
        return WIN_NEXT if mine_to_move else -WIN_NEXT
    return LINES_SCALE * x / (abs(x) + LINES_HALF)


@njit(cache=True, _nrt=False)
def heuristic(st, me):
    """H of ``st`` from colour ``me``'s side, in [-1, 1] (module docstring)."""
    return _value(st[board_index(me)], st[board_index(-me)], st[TO_MOVE] == me)


@njit(cache=True, _nrt=False)
def objective(st, code, rng, work):
    """f of ``code`` for the side to move: H after the place-and-swap, from the mover's side
    (``F_IS_H_AFTER``). ``st`` is not changed; ``rng`` and ``work`` are unused."""
    i = board_index(st[TO_MOVE])
    cell = code // N_SWAPS
    s = code - N_SWAPS * cell
    a = SWAP_A[s]
    b = SWAP_B[s]
    mine = swap_quadrants(st[i] | CELL_BIT[cell], a, b)
    theirs = swap_quadrants(st[1 - i], a, b)
    return _value(mine, theirs, False)


@njit(cache=True, _nrt=False)
def random_move(st, banned, rng, work):
    """A uniformly random legal move not ``banned`` (bool[216]); -1 if none. The draw is the
    template's default's (``legal_move_codes``, then ``rng.pick`` among the unbanned: one candidate
    is taken without a draw), so overriding it changes no game; it reads the mask instead of
    writing the 6 x (empty cells) codes first (a playout's every ply)."""
    occupied = st[0] | st[1]
    n_banned = 0
    for c in range(N_MOVE_CODES):  # no branch: vectorised
        n_banned += banned[c]
    if n_banned == 0:  # a playout's case: the k-th legal move is found cell by cell, nothing written
        n = N_SWAPS * (N_CELLS - popcount(occupied))
        if n == 0:
            return -1
        k = 0 if n == 1 else rand_below(rng, n)
        empty = FULL & ~occupied
        for _ in range(k // N_SWAPS):  # drop the empty cells before the k-th move's
            empty &= empty - 1
        b = trailing_zeros(empty)
        return N_SWAPS * (SIDE * (b // STRIDE) + b % STRIDE) + k % N_SWAPS
    n = 0
    for i in range(N_CELLS):
        if occupied & CELL_BIT[i] == 0:
            for s in range(N_SWAPS):
                if not banned[N_SWAPS * i + s]:
                    n += 1
    if n == 0:
        return -1
    k = 0 if n == 1 else rand_below(rng, n)
    for i in range(N_CELLS):
        if occupied & CELL_BIT[i] == 0:
            for s in range(N_SWAPS):
                if not banned[N_SWAPS * i + s]:
                    if k == 0:
                        return N_SWAPS * i + s
                    k -= 1
    return -1
