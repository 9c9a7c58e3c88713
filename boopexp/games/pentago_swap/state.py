"""The Pentago-Swap state value (5 int64: two bitboards, the side to move, the ply, the winner),
its field names, the bit geometry of cells, quadrants, swaps and lines, and ``initial_state``.

Plain Python, so the kernels (which compile these functions) and the notation read the same
layout from here (spec: ../shared/spec/games/PENTAGO-SWAP.md).

The board is 6 x 6. A cell is ``(x, y)`` with **x the row** (0 the top) and **y the column** (0 the
left), as the original names them (QUIRK-PS1). Each player's pieces are one bitboard in an int64,
bit ``STRIDE*x + y`` with ``STRIDE`` = 7: the seventh bit of each row is always 0, so that the
shifts that find five in a row (1 along a row, 7 down a column, 8 down-right, 6 down-left) never
carry from one row into the next (the layout of Connect Four's bitboards, turned by a quarter).

The four quadrants (TL 0, TR 1, BL 2, BR 3; rows 0-2 / 3-5, columns 0-2 / 3-5) are 3 x 3 blocks
whose first bits are ``QUADRANT_ORIGIN``; a swap moves two of them by translation, so it is two
masks and one shift each way.

Layout of a state ``s`` (``STATE_SIZE`` = 5 int64; a whole position is 40 bytes):

=============  ==============================================================
``s[0]``       White's pieces (``BOARD_WHITE``; the original's player 0, colour -1, moves first)
``s[1]``       Black's pieces (``BOARD_BLACK``; player 1, colour +1)
``s[2]``       side to move (``TO_MOVE``): -1 White, +1 Black
``s[3]``       plies played so far (``MOVE_NUMBER``) = pieces on the board
``s[4]``       the original's ``winner`` field (``WINNER``): 0 nobody, -1 / +1, 2 a draw; kept in
               the state because a move played after the end reads it (QUIRK-PS3)
=============  ==============================================================

A move code is ``6 * cell + swap`` with ``cell = 6*x + y`` (the spec's flat index) and ``swap``
the id of the unordered quadrant pair in ``SWAPS`` order, so the codes in increasing order are the
original's ``getAllLegalMoves()`` order (cells row-major, then the six swaps).
"""

from __future__ import annotations

import numpy as np

SIDE = 6
N_CELLS = SIDE * SIDE
#: bits per row: SIDE cells and one always-empty bit after them
STRIDE = SIDE + 1
STATE_SIZE = 5
STATE_DTYPE = np.int64
BOARD_WHITE = 0
BOARD_BLACK = 1
TO_MOVE = 2
MOVE_NUMBER = 3
WINNER = 4
#: the colours: White (the original's player 0, first to move) and Black (player 1)
WHITE = -1
BLACK = 1
#: the quadrants' names by id, and the first row and column of each
QUADRANTS = ("TL", "TR", "BL", "BR")
QUADRANT_CORNER = ((0, 0), (0, 3), (3, 0), (3, 3))
#: the six unordered swaps by id, each (a, b) with a < b: TL-TR TL-BL TL-BR TR-BL TR-BR BL-BR
SWAPS = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
N_SWAPS = len(SWAPS)
N_MOVE_CODES = N_CELLS * N_SWAPS
#: the four directions of a line as bit steps: along a row, down a column, down-right, down-left
DIRECTIONS = (1, STRIDE, STRIDE + 1, STRIDE - 1)
LINE = 5


def board_index(colour: int) -> int:
    """The index in the state of ``colour``'s bitboard (-1 -> 0, +1 -> 1)."""
    return (colour + 1) >> 1


def cell_bit(x: int, y: int) -> int:
    """The bit of the cell on row ``x`` (0 the top), column ``y`` (0 the left)."""
    return 1 << (STRIDE * x + y)


def five_in_a_row(bits: int) -> bool:
    """Whether the bitboard ``bits`` holds five (or six) in a row along a row, a column or a
    diagonal: pairs ``d`` apart, pairs of pairs, and a fifth piece ``4d`` on. The empty bit after
    every row stops a line from running into the next row. Plain Python; the kernels compile it."""
    for d in DIRECTIONS:
        m = bits & (bits >> d)
        m &= m >> (2 * d)
        if m & (bits >> (4 * d)):
            return True
    return False


def swap_quadrants(bits: int, a: int, b: int) -> int:
    """``bits`` with quadrants ``a`` < ``b`` exchanged as whole blocks, each moved by translation
    (cell (i, j) of block a lands on cell (i, j) of block b). Plain Python; the kernels compile it."""
    d = QUADRANT_ORIGIN[b] - QUADRANT_ORIGIN[a]
    qa = bits & QUADRANT_MASK[a]
    qb = bits & QUADRANT_MASK[b]
    return (bits & ~(QUADRANT_MASK[a] | QUADRANT_MASK[b])) | (qa << d) | (qb >> d)


#: QUADRANT_MASK[q]: every cell of quadrant q; QUADRANT_ORIGIN[q]: the bit of its top-left cell
QUADRANT_MASK = np.array([sum(cell_bit(x0 + i, y0 + j) for i in range(3) for j in range(3))
                          for x0, y0 in QUADRANT_CORNER], dtype=np.int64)
QUADRANT_ORIGIN = np.array([STRIDE * x0 + y0 for x0, y0 in QUADRANT_CORNER], dtype=np.int64)
#: every cell of the board
FULL = int(QUADRANT_MASK.sum())
#: CELL_BIT[i]: the bit of the cell with flat index i = 6*x + y
CELL_BIT = np.array([cell_bit(i // SIDE, i % SIDE) for i in range(N_CELLS)], dtype=np.int64)
#: SWAP_A[s], SWAP_B[s]: the two quadrants of swap s (SWAP_A < SWAP_B)
SWAP_A = np.array([a for a, _ in SWAPS], dtype=np.int64)
SWAP_B = np.array([b for _, b in SWAPS], dtype=np.int64)


def _windows() -> list[int]:
    """The 32 windows of five cells (12 along rows, 12 down columns, 4 down-right, 4 down-left),
    each as the mask of its cells, in the order the original scans them (rows, columns, then the
    two diagonals)."""
    out = []
    for dx, dy in ((0, 1), (1, 0), (1, 1), (1, -1)):
        for x in range(SIDE):
            for y in range(SIDE):
                cells = [(x + k * dx, y + k * dy) for k in range(LINE)]
                if all(0 <= cx < SIDE and 0 <= cy < SIDE for cx, cy in cells):
                    out.append(sum(cell_bit(cx, cy) for cx, cy in cells))
    return out


#: WINDOWS[w]: the cells of the w-th window of five (32): what H and f count
WINDOWS = np.array(_windows(), dtype=np.int64)


def initial_state(seed: int | None = None) -> np.ndarray:
    """The empty board, White (-1) to move, nobody has won. ``seed`` is unused: Pentago-Swap
    starts the same way every time (the contract's argument is for games with a random start)."""
    del seed
    st = np.zeros(STATE_SIZE, dtype=STATE_DTYPE)
    st[TO_MOVE] = WHITE
    return st
