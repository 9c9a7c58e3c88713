"""Connect Four as text and pictures: moves ``a``..``g``, the one-line position string, the
terminal board and the SVG board (plain Python, no numba).

A move is its column's letter, ``a`` (left, code 0) to ``g`` (right, code 6).

Position string (one line, round-trips exactly)::

    ......./......./......./...o.../...x.../..xox.. x
    \\_________ rows 6..1, top to bottom _________/ side to move (x|o)

Cells: ``.`` empty, ``x`` the first player's piece (colour -1), ``o`` the second's (+1); a row is
7 cells, columns ``a``..``g`` from the left. The side to move follows from the counts of pieces
(``x`` when they are equal); it is written for the reader and checked. A position is refused
when a piece floats above an empty cell, when the counts cannot arise (``x`` plays first), or
when it holds a win that is not the last mover's.
"""

from __future__ import annotations

import numpy as np

from boopexp.errors import IllegalMoveError, InvalidMoveError, InvalidPositionError
from boopexp.games.connect_four.state import (
    BOARD_FIRST,
    BOARD_SECOND,
    COLUMNS,
    FIRST,
    MOVE_NUMBER,
    ROWS,
    SECOND,
    TO_MOVE,
    board_index,
    cell_bit,
    four_in_a_row,
    initial_state,
)

FILES = "abcdefg"
#: the letter of each colour's pieces
PIECE = {FIRST: "x", SECOND: "o"}
_COLOUR = {v: k for k, v in PIECE.items()}


def move_text(code: int) -> str:
    """The letter of the move ``code`` (its column 0..6)."""
    if not 0 <= code < COLUMNS:
        raise InvalidMoveError(f"move code {code!r} is not a column: allowed 0..{COLUMNS - 1}")
    return FILES[code]


def cell(st: np.ndarray, row: int, col: int) -> int:
    """The colour at ``row`` (0 the bottom), ``col``: -1, +1, or 0 when empty."""
    bit = cell_bit(row, col)
    if int(st[BOARD_FIRST]) & bit:
        return FIRST
    return SECOND if int(st[BOARD_SECOND]) & bit else 0


def legal_columns(st: np.ndarray) -> list[int]:
    """The columns that are not full, left to right (the kernels' ``legal_move_codes``)."""
    occupied = int(st[BOARD_FIRST]) | int(st[BOARD_SECOND])
    return [c for c in range(COLUMNS) if not occupied & cell_bit(ROWS - 1, c)]


def parse_move(text: str, st: np.ndarray) -> int:
    """The move code of a column letter (``a``..``g``, either case) legal in ``st``.

    Raises:
        InvalidMoveError: ``text`` is not a column letter.
        IllegalMoveError: the column is full.
    """
    letter = text.strip().lower() if isinstance(text, str) else None
    if letter is None or len(letter) != 1 or letter not in FILES:
        raise InvalidMoveError(f"{text!r} is not a Connect Four move: a move is a column letter a..g")
    code = FILES.index(letter)
    legal = legal_columns(st)
    if code not in legal:
        allowed = ", ".join(FILES[c] for c in legal) or "none"
        raise IllegalMoveError(f"{text!r}: column {letter} is full; legal moves: {allowed}")
    return code


def position_string(st: np.ndarray) -> str:
    """The one-line position string of a state (module docstring)."""
    rows = "/".join("".join(PIECE.get(cell(st, r, c), ".") for c in range(COLUMNS)) for r in reversed(range(ROWS)))
    return f"{rows} {PIECE[int(st[TO_MOVE])]}"


def parse_position(text: str) -> np.ndarray:
    """The state of a one-line position string; InvalidPositionError quoting it when malformed."""
    example = "'......./......./......./......./......./...x... o'"
    if not isinstance(text, str):
        raise InvalidPositionError(f"{text!r} is not a position string")
    fields = text.split()
    if len(fields) != 2:
        raise InvalidPositionError(f"{text!r} is not a Connect Four position: expected 'ROWS SIDE', e.g. {example}")
    rows = fields[0].split("/")
    if len(rows) != ROWS or any(len(r) != COLUMNS for r in rows):
        raise InvalidPositionError(
            f"{text!r}: the grid {fields[0]!r} must be {ROWS} rows of {COLUMNS} cells separated by '/'")
    st = initial_state()
    for r, row in zip(reversed(range(ROWS)), rows, strict=True):
        for c, ch in enumerate(row):
            if ch == ".":
                continue
            if ch not in _COLOUR:
                raise InvalidPositionError(f"{text!r}: {ch!r} is not a cell; allowed: . x o")
            st[board_index(_COLOUR[ch])] |= cell_bit(r, c)
    for r in range(1, ROWS):
        for c in range(COLUMNS):
            if cell(st, r, c) and not cell(st, r - 1, c):
                raise InvalidPositionError(f"{text!r}: the piece on {FILES[c]}{r + 1} floats above an empty cell")
    n_x, n_o = (bin(int(st[BOARD_FIRST])).count("1"), bin(int(st[BOARD_SECOND])).count("1"))
    if n_x not in (n_o, n_o + 1):
        raise InvalidPositionError(f"{text!r}: {n_x} x and {n_o} o pieces; x moves first, so x = o or x = o + 1")
    side = FIRST if n_x == n_o else SECOND
    if fields[1] != PIECE[side]:
        raise InvalidPositionError(f"{text!r}: side to move {fields[1]!r} must be {PIECE[side]!r} "
                                   f"({n_x} x and {n_o} o pieces are on the board)")
    for colour in (FIRST, SECOND):
        if four_in_a_row(int(st[board_index(colour)])) and colour == side:
            raise InvalidPositionError(f"{text!r}: {PIECE[colour]} has four in a row but is to move "
                                       "(the game ended at the last mover's win)")
    st[TO_MOVE] = side
    st[MOVE_NUMBER] = n_x + n_o
    return st


def board_text(st: np.ndarray, winner: int = 0) -> str:
    """A readable board for terminals: rows top to bottom, the column letters below, then whose
    turn it is, or who has won (``winner``: -1, +1, 2 a draw, 0 the game goes on)."""
    lines = ["  " + " ".join(PIECE.get(cell(st, r, c), ".") for c in range(COLUMNS)) for r in reversed(range(ROWS))]
    lines.append("  " + " ".join(FILES))
    ply = int(st[MOVE_NUMBER])
    if winner in (FIRST, SECOND):
        lines.append(f"  ply {ply}, {PIECE[winner]} has won")
    elif winner:
        lines.append(f"  ply {ply}, a draw")
    else:
        lines.append(f"  ply {ply}, {PIECE[int(st[TO_MOVE])]} to move")
    return "\n".join(lines)


#: the SVG board's geometry (user units) and colours
_CELL = 40
_FILL = {FIRST: "#d62828", SECOND: "#f6c90e", 0: "#ffffff"}


def svg(st: np.ndarray) -> str:
    """The board as an SVG picture for the web viewer: a blue frame with a disc per cell (red ``x``,
    yellow ``o``, white empty), the column letters below. Each disc is named by its cell
    (``data-cell="d1"``) and by the move that drops into its column (``data-move="d"``: a click on
    it plays that column in ``boopexp serve``'s /play, docs/games.md "Values")."""
    width, height = COLUMNS * _CELL, ROWS * _CELL + _CELL // 2
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" class="board connect-four">',
             f'<rect width="{width}" height="{ROWS * _CELL}" rx="6" fill="#1d4ed8"/>']
    for r in range(ROWS):
        y = (ROWS - 1 - r) * _CELL + _CELL // 2
        for c in range(COLUMNS):
            colour = cell(st, r, c)
            name = f"{FILES[c]}{r + 1}"
            parts.append(f'<circle cx="{c * _CELL + _CELL // 2}" cy="{y}" r="{_CELL * 2 // 5}" '
                         f'fill="{_FILL[colour]}" data-cell="{name}" data-move="{FILES[c]}"/>')
    for c in range(COLUMNS):
        parts.append(f'<text x="{c * _CELL + _CELL // 2}" y="{ROWS * _CELL + _CELL // 3 + 2}" '
                     f'text-anchor="middle" font-size="14">{FILES[c]}</text>')
    parts.append("</svg>")
    return "".join(parts)
