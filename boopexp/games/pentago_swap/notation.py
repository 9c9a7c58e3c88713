"""Pentago-Swap as text and pictures: moves ``23:TL-BR``, the one-line position string, the
terminal board and the SVG board (plain Python, no numba; spec §1.1).

A move is ``<x><y>:<A>-<B>``: place on row ``x`` (0 the top), column ``y`` (0 the left; QUIRK-PS1:
the original calls the row x), then swap quadrants ``A`` and ``B`` (``TL``, ``TR``, ``BL``,
``BR``). It is written with the pair in canonical order (``A`` before ``B`` in that order); a
reversed pair is read as the same move, as the original accepts it (QUIRK-PS2).

Position string (one line, round-trips exactly)::

    ....../....../....../....w./....../...... b
    \\___ rows x = 0..5, top to bottom ___/ side to move (w|b)

Cells: ``.`` empty, ``w`` White (the original's player 0, colour -1, first to move), ``b`` Black
(player 1, colour +1); a row is 6 cells, ``y`` = 0..5 from the left. The ply is the number of
pieces; the side to move follows from the counts (``w`` when they are equal) and is checked.
"""

from __future__ import annotations

import numpy as np

from boopexp.engine.outcome import DRAW
from boopexp.errors import IllegalMoveError, InvalidMoveError, InvalidPositionError
from boopexp.games.pentago_swap.state import (
    BLACK,
    BOARD_BLACK,
    BOARD_WHITE,
    MOVE_NUMBER,
    N_CELLS,
    N_MOVE_CODES,
    N_SWAPS,
    QUADRANTS,
    SIDE,
    SWAPS,
    TO_MOVE,
    WHITE,
    WINNER,
    board_index,
    cell_bit,
    five_in_a_row,
    initial_state,
)

#: the letter of each colour's pieces
PIECE = {WHITE: "w", BLACK: "b"}
_COLOUR = {v: k for k, v in PIECE.items()}
#: the colours' names, as results name them
COLOUR_NAME = {WHITE: "white", BLACK: "black"}
_SWAP_ID = {pair: s for s, pair in enumerate(SWAPS)}
_FORM = "a move is <row><column>:<A>-<B>, e.g. 23:TL-BR (row, column 0..5; A, B two of TL TR BL BR)"


def move_text(code: int) -> str:
    """The text of the move ``code`` (``6 * (6x + y) + swap``), its pair in canonical order."""
    if not isinstance(code, (int, np.integer)) or not 0 <= code < N_MOVE_CODES:
        raise InvalidMoveError(f"move code {code!r} is not a Pentago-Swap move: allowed 0..{N_MOVE_CODES - 1}")
    cell, s = divmod(int(code), N_SWAPS)
    a, b = SWAPS[s]
    return f"{cell // SIDE}{cell % SIDE}:{QUADRANTS[a]}-{QUADRANTS[b]}"


def move_parts(text: str) -> tuple[int, int, int, int]:
    """``(x, y, a, b)`` of a move's text, the quadrants in the order written (``a`` may equal
    ``b``: the original's ``isLegal`` refuses it, :func:`boopexp.games.pentago_swap.original.is_legal`).

    Raises:
        InvalidMoveError: ``text`` is not of the form ``<x><y>:<A>-<B>``.
    """
    body = text.strip().upper() if isinstance(text, str) else ""
    cell, colon, pair = body.partition(":")
    a, dash, b = pair.partition("-")
    if (not colon or not dash or len(cell) != 2 or not all(c in "012345" for c in cell)
            or a not in QUADRANTS or b not in QUADRANTS):
        raise InvalidMoveError(f"{text!r} is not a Pentago-Swap move: {_FORM}")
    return int(cell[0]), int(cell[1]), QUADRANTS.index(a), QUADRANTS.index(b)


def move_code(x: int, y: int, a: int, b: int) -> int:
    """The code of placing on ``(x, y)`` and swapping ``a`` and ``b`` (either order: QUIRK-PS2)."""
    if a == b:
        raise InvalidMoveError(f"{x}{y}:{QUADRANTS[a]}-{QUADRANTS[b]}: a swap exchanges two different quadrants")
    return N_SWAPS * (SIDE * x + y) + _SWAP_ID[(min(a, b), max(a, b))]


def cell(st: np.ndarray, x: int, y: int) -> int:
    """The colour on row ``x``, column ``y``: -1 White, +1 Black, or 0 when empty."""
    bit = cell_bit(x, y)
    if int(st[BOARD_WHITE]) & bit:
        return WHITE
    return BLACK if int(st[BOARD_BLACK]) & bit else 0


def parse_move(text: str, st: np.ndarray) -> int:
    """The move code of a move's text legal in ``st``; the pair may be reversed (QUIRK-PS2).

    Raises:
        InvalidMoveError: ``text`` is not a move, or names one quadrant twice.
        IllegalMoveError: the cell is not empty.
    """
    x, y, a, b = move_parts(text)
    code = move_code(x, y, a, b)
    if cell(st, x, y):
        raise IllegalMoveError(f"{text!r}: the cell {x}{y} (row {x}, column {y}) is not empty; "
                               "a move places on an empty cell")
    return code


def position_string(st: np.ndarray) -> str:
    """The one-line position string of a state (module docstring)."""
    rows = "/".join("".join(PIECE.get(cell(st, x, y), ".") for y in range(SIDE)) for x in range(SIDE))
    return f"{rows} {PIECE[int(st[TO_MOVE])]}"


def judged_winner(st: np.ndarray) -> int:
    """The original's ``winner`` of a position reached by play, from its lines and the last mover
    (spec §5): 0 while the game goes on, -1 / +1, or ``DRAW``."""
    mover = -int(st[TO_MOVE])
    mine = five_in_a_row(int(st[board_index(mover)]))
    theirs = five_in_a_row(int(st[board_index(-mover)]))
    if mine:
        return DRAW if theirs else mover
    if theirs:
        return -mover
    return DRAW if int(st[MOVE_NUMBER]) == N_CELLS else 0


def parse_position(text: str) -> np.ndarray:
    """The state of a one-line position string; InvalidPositionError quoting it when malformed.
    Its winner is judged from the lines on the board and the last mover (:func:`judged_winner`;
    a draw made by playing on after the end, QUIRK-PS3, leaves no trace in the string)."""
    example = "'....../....../....../....w./....../...... b'"
    if not isinstance(text, str):
        raise InvalidPositionError(f"{text!r} is not a position string")
    fields = text.split()
    if len(fields) != 2:
        raise InvalidPositionError(f"{text!r} is not a Pentago-Swap position: expected 'ROWS SIDE', e.g. {example}")
    rows = fields[0].split("/")
    if len(rows) != SIDE or any(len(r) != SIDE for r in rows):
        raise InvalidPositionError(
            f"{text!r}: the grid {fields[0]!r} must be {SIDE} rows of {SIDE} cells separated by '/'")
    st = initial_state()
    for x, row in enumerate(rows):
        for y, ch in enumerate(row):
            if ch == ".":
                continue
            if ch not in _COLOUR:
                raise InvalidPositionError(f"{text!r}: {ch!r} is not a cell; allowed: . w b")
            st[board_index(_COLOUR[ch])] |= cell_bit(x, y)
    n_w, n_b = (bin(int(st[BOARD_WHITE])).count("1"), bin(int(st[BOARD_BLACK])).count("1"))
    if n_w not in (n_b, n_b + 1):
        raise InvalidPositionError(f"{text!r}: {n_w} w and {n_b} b pieces; w moves first, so w = b or w = b + 1")
    side = WHITE if n_w == n_b else BLACK
    if fields[1] != PIECE[side]:
        raise InvalidPositionError(f"{text!r}: side to move {fields[1]!r} must be {PIECE[side]!r} "
                                   f"({n_w} w and {n_b} b pieces are on the board)")
    st[TO_MOVE] = side
    st[MOVE_NUMBER] = n_w + n_b
    st[WINNER] = judged_winner(st)
    return st


def result_text(winner: int) -> str:
    """A result as the spec's game records write it: ``white``, ``black``, ``draw`` (0: ``*``)."""
    if winner in COLOUR_NAME:
        return COLOUR_NAME[winner]
    return "draw" if winner == DRAW else "*"


def board_text(st: np.ndarray, winner: int = 0) -> str:
    """A readable board for terminals: rows x = 0..5 with the column numbers above, a gap between
    the quadrants, then whose turn it is, or who has won (``winner``: -1, +1, 2 a draw, 0 the
    game goes on)."""
    def row(x: int) -> str:
        marks = [PIECE.get(cell(st, x, y), ".") for y in range(SIDE)]
        return f"{x}  {' '.join(marks[:3])}   {' '.join(marks[3:])}"

    lines = ["   0 1 2   3 4 5"] + [row(x) for x in range(3)] + [""] + [row(x) for x in range(3, SIDE)]
    ply = int(st[MOVE_NUMBER])
    if winner in (WHITE, BLACK):
        lines.append(f"   ply {ply}, {COLOUR_NAME[winner]} has won")
    elif winner:
        lines.append(f"   ply {ply}, a draw")
    else:
        lines.append(f"   ply {ply}, {COLOUR_NAME[int(st[TO_MOVE])]} to move")
    return "\n".join(lines)


#: the SVG board's geometry (user units) and colours
_CELL = 40
_GAP = 6
_FILL = {WHITE: "#f8f8f8", BLACK: "#1f1f1f", 0: "#c8a165"}


def svg(st: np.ndarray) -> str:
    """The board as an SVG picture for the web viewer: four wooden quadrants with a hole per cell
    (white and black marbles), each ``<circle>`` named by its cell (``data-cell="23"``: row 2,
    column 3), the quadrants by their names (``data-quadrant="TL"``)."""
    size = SIDE * _CELL + _GAP
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {size} {size}" class="board pentago-swap">']
    for q, name in enumerate(QUADRANTS):
        left = (q % 2) * (3 * _CELL + _GAP)
        top = (q // 2) * (3 * _CELL + _GAP)
        parts.append(f'<rect x="{left}" y="{top}" width="{3 * _CELL}" height="{3 * _CELL}" rx="8" '
                     f'fill="#8b5a2b" data-quadrant="{name}"/>')
    for x in range(SIDE):
        for y in range(SIDE):
            cx = y * _CELL + _CELL // 2 + (_GAP if y >= 3 else 0)
            cy = x * _CELL + _CELL // 2 + (_GAP if x >= 3 else 0)
            parts.append(f'<circle cx="{cx}" cy="{cy}" r="{_CELL * 2 // 5}" fill="{_FILL[cell(st, x, y)]}" '
                         f'data-cell="{x}{y}"/>')
    parts.append("</svg>")
    return "".join(parts)
