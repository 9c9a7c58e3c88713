"""Tic-tac-toe's kernels under boopexp's game contract (docs/games.md, "Your own game").

The state: int16[11], cells 0-8 row-major (0 empty, -1 the first player's mark, +1 the second's),
then the side to move (-1 first) and the plies played. A move code is the cell 0-8.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from boopexp.engine.binding import work_fields, zero_work
from boopexp.engine.outcome import DRAW

STATE_SIZE = 11
STATE_DTYPE = np.int16
TO_MOVE = 9
MOVE_NUMBER = 10
N_MOVE_CODES = 9
F_IS_H_AFTER = False


LINES = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]],
                 dtype=np.int64)

#: the work buffers the search templates use (boopexp.engine.binding.work_fields; a game may add its own)
WORK_FIELDS = work_fields(STATE_SIZE, STATE_DTYPE, N_MOVE_CODES)
Work = namedtuple("Work", [name for name, _, _ in WORK_FIELDS])  # type: ignore[misc]


def new_work() -> Work:
    """The scratch buffers the search and these kernels use (``mask`` all False)."""
    return zero_work(Work, WORK_FIELDS)


def initial_state(seed: int | None = None) -> np.ndarray:
    """The empty board, the first player (-1) to move."""
    st = np.zeros(STATE_SIZE, dtype=STATE_DTYPE)
    st[TO_MOVE] = -1
    return st


@njit(cache=True)
def has_won(st, colour):
    """Three of ``colour``'s marks in a row."""
    for li in range(8):
        if st[LINES[li, 0]] == colour and st[LINES[li, 1]] == colour and st[LINES[li, 2]] == colour:
            return True
    return False


@njit(cache=True)
def legal_move_codes(st, out):
    """The empty cells, in order."""
    n = 0
    if has_won(st, -1) or has_won(st, 1):
        return 0
    for c in range(9):
        if st[c] == 0:
            out[n] = c
            n += 1
    return n


@njit(cache=True)
def legal_move_count(st):
    """The number of empty cells (0 once someone has won)."""
    if has_won(st, -1) or has_won(st, 1):
        return 0
    n = 0
    for c in range(9):
        if st[c] == 0:
            n += 1
    return n


@njit(cache=True)
def apply_move(st, code, rng, work):
    """Mark ``code`` for the side to move: (winner or DRAW or 0, 0)."""
    mover = st[TO_MOVE]
    st[code] = mover
    st[TO_MOVE] = -mover
    st[MOVE_NUMBER] += 1
    if has_won(st, mover):
        return mover, 0
    if st[MOVE_NUMBER] == 9:
        return DRAW, 0
    return 0, 0


@njit(cache=True)
def heuristic(st, me):
    """(lines open for ``me`` with marks - lines open for the opponent with marks) / 8."""
    score = 0
    for li in range(8):
        mine = 0
        theirs = 0
        for j in range(3):
            v = st[LINES[li, j]]
            if v == me:
                mine += 1
            elif v == -me:
                theirs += 1
        if theirs == 0 and mine > 0:
            score += 1
        elif mine == 0 and theirs > 0:
            score -= 1
    return score / 8.0


@njit(cache=True)
def objective(st, code, rng, work):
    """1 for a winning move, else H after the move from the mover's side."""
    after = work.la_after
    for i in range(STATE_SIZE):
        after[i] = st[i]
    mover = st[TO_MOVE]
    winner, _ = apply_move(after, code, rng, work)
    if winner == mover:
        return 1.0
    return heuristic(after, mover)
