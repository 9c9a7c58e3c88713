"""The Connect Four state value (4 int64: two bitboards, the side to move, the ply), its field
names, the board's bit geometry and ``initial_state``.

Plain Python and numpy: the kernels (:mod:`boopexp.games.connect_four.kernels`) and the notation
read the same layout from here.

The board has ``ROWS`` = 6 rows and ``COLUMNS`` = 7 columns; a piece falls to the lowest empty
cell of its column. Each player's pieces are one bitboard in an int64, bit ``7*col + row`` (row 0
at the bottom): 7 bits per column, the seventh always 0, so that the shifts that find four in a
row (by 1 vertically, 7 horizontally, 6 and 8 diagonally) never carry from one column into the
next (J. Tromp's layout, as in Pascal Pons' solver).

Layout of a state ``s`` (``STATE_SIZE`` = 4 int64; ``STATE_DTYPE`` int64 because a bitboard of
49 bits needs it; a whole position is 32 bytes, copied in four loads):

=============  ==============================================================
``s[0]``       the first player's pieces (``BOARD_FIRST``; colour -1, ``x``)
``s[1]``       the second player's pieces (``BOARD_SECOND``; colour +1, ``o``)
``s[2]``       side to move (``TO_MOVE``): -1 first, +1 second
``s[3]``       plies played so far (``MOVE_NUMBER``) = pieces on the board
=============  ==============================================================

A colour's bitboard is ``s[board_index(colour)]``. Nothing else is stored: the occupied cells are
``s[0] | s[1]``, and a column's next cell is found by adding its bottom bit to them.
"""

from __future__ import annotations

import numpy as np

ROWS = 6
COLUMNS = 7
#: bits per column: ROWS cells and one always-empty bit above them
STRIDE = ROWS + 1
STATE_SIZE = 4
STATE_DTYPE = np.int64
BOARD_FIRST = 0
BOARD_SECOND = 1
TO_MOVE = 2
MOVE_NUMBER = 3
#: the colours: the first player (OpenSpiel's player 0, ``x``) and the second (``o``)
FIRST = -1
SECOND = 1
N_CELLS = ROWS * COLUMNS


def board_index(colour: int) -> int:
    """The index in the state of ``colour``'s bitboard (-1 -> 0, +1 -> 1)."""
    return (colour + 1) >> 1


def four_in_a_row(bits: int) -> bool:
    """Whether the bitboard ``bits`` holds four in a row: a pair of neighbours along a direction
    (bits & bits >> d) next to another pair two steps on. The empty bit above every column stops a
    line from running from one column into the next. Plain Python; the kernels compile it."""
    for d in DIRECTIONS:
        m = bits & (bits >> d)
        if m & (m >> (2 * d)):
            return True
    return False


def cell_bit(row: int, col: int) -> int:
    """The bit of the cell at ``row`` (0 the bottom) and ``col`` (0 the left)."""
    return 1 << (STRIDE * col + row)


#: BOTTOM[c], TOP[c], COLUMN_MASK[c]: the lowest cell, the highest cell, every cell of column c
BOTTOM = np.array([cell_bit(0, c) for c in range(COLUMNS)], dtype=np.int64)
TOP = np.array([cell_bit(ROWS - 1, c) for c in range(COLUMNS)], dtype=np.int64)
COLUMN_MASK = np.array([sum(cell_bit(r, c) for r in range(ROWS)) for c in range(COLUMNS)], dtype=np.int64)
#: every bottom cell, every top cell, every cell of the board
BOTTOM_ROW = int(BOTTOM.sum())
TOP_ROW = int(TOP.sum())
FULL = int(COLUMN_MASK.sum())


#: the four directions of a line as bit steps: up, right, up-right, down-right
DIRECTIONS = (1, STRIDE, STRIDE + 1, STRIDE - 1)


def _line_starts(step: int) -> int:
    """The cells from which a line of four cells, ``step`` bits apart, stays on the board."""
    dr, dc = {1: (1, 0), STRIDE: (0, 1), STRIDE + 1: (1, 1), STRIDE - 1: (-1, 1)}[step]
    return sum(cell_bit(r, c) for r in range(ROWS) for c in range(COLUMNS)
               if 0 <= r + 3 * dr < ROWS and c + 3 * dc < COLUMNS)


#: LINE_STARTS[i]: the first cells of the lines of four along DIRECTIONS[i] (21 vertical, 24
#: horizontal, 12 + 12 diagonal: the 69 lines the heuristic counts)
LINE_STARTS = np.array([_line_starts(d) for d in DIRECTIONS], dtype=np.int64)


def initial_state(seed: int | None = None) -> np.ndarray:
    """The empty board, the first player (-1, ``x``) to move. ``seed`` is unused: Connect Four
    starts the same way every time (the contract's argument is for games with a random start)."""
    del seed
    st = np.zeros(STATE_SIZE, dtype=STATE_DTYPE)
    st[TO_MOVE] = FIRST
    return st
