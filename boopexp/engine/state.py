"""The state value (44 int16), the names of its fields (``TO_MOVE``, ``MOVE_NUMBER``,
``POOL_BASE_BLUE``, …) and **the** move-code layout (``encode_move`` / ``decode_move``: plain
Python, for the game layer).

The game state: one small int16 array (RULES.md §1–2, §8).

Layout of a state ``s`` (``STATE_SIZE`` = 44 entries):

====================  ==========================================================
``s[0:36]``           the board (``s[:N_SQUARES]``), index ``6*row + col``; 0 empty,
                      -1/-2 Blue small/large, +1/+2 Red small/large (RULES.md §1)
``s[36]``, ``s[37]``  Blue's pool: smalls, larges (``POOL_BASE_BLUE``, ``POOL_LARGE_BLUE``)
``s[38]``, ``s[39]``  Red's pool: smalls, larges (``POOL_BASE_RED``, ``POOL_LARGE_RED``)
``s[40]``, ``s[41]``  large-piece counters L of Blue and Red (``L_BLUE``, ``L_RED``;
                      RULES.md §2; victory V2)
``s[42]``             side to move (``TO_MOVE``): -1 Blue, +1 Red (the sign of its pieces)
``s[43]``             ``moveNumber`` (``MOVE_NUMBER``): plies played so far (RULES.md §8)
====================  ==========================================================

Code names the fields, never their numbers; a colour's pool is ``pool_index(colour)`` (rules.py)
and its larges one entry after its smalls.

Only counts of the pools matter for play and for the heuristic (HEURISTIC.md §7); the order in
which the C++ code keeps its pool vectors is not modelled (see docs/engine.md).
A colour is written as its sign: ``BLUE = -1``, ``RED = +1``.
"""

from __future__ import annotations

import numpy as np

from boopexp.errors import InvalidPositionError

STATE_SIZE = 44
STATE_DTYPE = np.int16
BLUE = -1
RED = 1
N_SQUARES = 36
POOL_BASE_BLUE = 36  # Blue's smalls; a pool's larges follow its smalls
POOL_LARGE_BLUE = POOL_BASE_BLUE + 1
POOL_BASE_RED = 38
POOL_LARGE_RED = POOL_BASE_RED + 1
L_BLUE = 40
L_RED = 41
TO_MOVE = 42
MOVE_NUMBER = 43
PIECES_PER_PLAYER = 8
#: moves are coded ``(size - 1) * 36 + square`` (:func:`encode_move`): the solver's enumeration
#: order (AGENTS.md §A.1), smalls then larges, squares row-major
N_MOVE_CODES = 2 * N_SQUARES


def encode_move(size: int, square: int) -> int:
    """The move code of placing ``size`` (1 small, 2 large) on ``square``: **the** move-code layout.

    Plain Python, so that the game layer reads it without numba; the kernels call its compiled
    twin :func:`boopexp.engine.rules.encode_move` (the same function, ``njit(inline="always")``).
    """
    return (size - 1) * N_SQUARES + square


def decode_move(code: int) -> tuple[int, int]:
    """``(size, square)`` of a move code (the inverse of :func:`encode_move`; compiled twin in rules)."""
    return code // N_SQUARES + 1, code % N_SQUARES


def initial_state() -> np.ndarray:
    """The start of a game: empty board, 8 smalls in each pool, Blue to move."""
    s = np.zeros(STATE_SIZE, dtype=STATE_DTYPE)
    s[POOL_BASE_BLUE] = PIECES_PER_PLAYER
    s[POOL_BASE_RED] = PIECES_PER_PLAYER
    s[TO_MOVE] = BLUE
    return s


def make_state(
    grid,
    blue_pool: tuple[int, int],
    red_pool: tuple[int, int],
    to_move: int,
    blue_l: int | None = None,
    red_l: int | None = None,
    move_number: int = 0,
) -> np.ndarray:
    """Build a state from a 36-cell grid and pools given as (smalls, larges).

    The large counters L default to the number of larges the colour owns (board + pool), which
    is what L is in any game that started from the initial position (larges never disappear).
    """
    s = np.zeros(STATE_SIZE, dtype=STATE_DTYPE)
    g = np.asarray(grid, dtype=STATE_DTYPE).reshape(-1)
    if g.size != N_SQUARES:
        raise InvalidPositionError(f"a grid has 36 cells, got {g.size}: {grid!r}")
    s[:N_SQUARES] = g
    s[POOL_BASE_BLUE], s[POOL_LARGE_BLUE] = blue_pool
    s[POOL_BASE_RED], s[POOL_LARGE_RED] = red_pool
    if blue_l is None:
        blue_l = int(np.sum(g == -2)) + blue_pool[1]
    if red_l is None:
        red_l = int(np.sum(g == 2)) + red_pool[1]
    s[L_BLUE], s[L_RED] = blue_l, red_l
    s[TO_MOVE] = to_move
    s[MOVE_NUMBER] = move_number
    return s


def pool_counts_from_list(pool) -> tuple[int, int]:
    """(smalls, larges) of a pool written as a list of sizes (the golden/C++ encoding)."""
    pool = list(pool)
    return pool.count(1), pool.count(2)
