"""Colosseum Survival as text and pictures: moves ``r,c,D``, the one-line position string, the
terminal board and the SVG board (plain Python, no numba). The notation is the spec's §1.1.

A move is ``r,c,D``: walk to row ``r`` (0 the top), column ``c`` (0 the left), then wall side
``D`` of that cell, ``U``, ``R``, ``D`` or ``L`` (``parse_move`` takes either case, as the
framework's human agent types ``r,c,u``).

Position string (one line, round-trips exactly)::

    5 d5113/91402/80502/80146/c4457 0,4 4,0 A
    M \\________ rows ________/ A   B   side to move (A|B)

``rows`` is M strings of M hexadecimal digits joined by ``/``, row 0 first, column 0 first; a
digit is the cell's walls, 1 Up, 2 Right, 4 Down, 8 Left, edges included (the framework's
``chess_board`` exactly). A position is refused, naming what is wrong, when a digit is not hex,
an edge is open, a wall is stored on one side only, a player is off the board or both stand on
one cell. The ply count is not written: a parsed position counts the walls added to the start's
2K (``max(0, interior walls - 2K)``), which is the ply of every position of a game from a drawn
start.
"""

from __future__ import annotations

import numpy as np

from boopexp.errors import IllegalMoveError, InvalidMoveError, InvalidPositionError
from boopexp.games.colosseum.state import (
    FIRST,
    GRID,
    MAX_SIZE,
    MAX_STEP,
    MIN_SIZE,
    MOVE_NUMBER,
    N_MOVE_CODES,
    POS_A,
    POS_B,
    SECOND,
    SIDES,
    SIZE,
    TO_MOVE,
    WALL,
    cell_bit,
    empty_board,
    has_wall,
    legal_moves,
    max_step,
)

#: the letter of each side to move
PLAYER = {FIRST: "A", SECOND: "B"}
_COLOUR = {v: k for k, v in PLAYER.items()}
EXAMPLE = "'5 91113/80002/80002/80002/c4446 2,2 2,3 A'"


def move_text(code: int) -> str:
    """The move ``code`` (``4*(12*r + c) + d``) as ``r,c,D``."""
    if not 0 <= code < N_MOVE_CODES:
        raise InvalidMoveError(f"move code {code!r} is not a Colosseum Survival move: allowed 0..{N_MOVE_CODES - 1}")
    cell, d = divmod(code, 4)
    r, c = divmod(cell, GRID)
    return f"{r},{c},{SIDES[d]}"


def parse_move(text: str, st: np.ndarray) -> int:
    """The move code of ``r,c,D`` (``D`` one of U R D L, either case) legal in ``st``.

    Raises:
        InvalidMoveError: ``text`` is not ``r,c,D``.
        IllegalMoveError: the move is not legal in ``st`` (out of reach, or a wall is there).
    """
    fields = text.strip().split(",") if isinstance(text, str) else []
    size = int(st[SIZE])
    if (len(fields) != 3 or not all(f.strip().isdigit() for f in fields[:2])
            or fields[2].strip().upper() not in tuple(SIDES)):
        raise InvalidMoveError(f"{text!r} is not a Colosseum Survival move: a move is 'r,c,D', row and column "
                               f"0..{size - 1} and a side U, R, D or L, e.g. '1,2,R'")
    r, c = int(fields[0]), int(fields[1])
    if not (r < size and c < size):
        raise IllegalMoveError(f"{text!r}: ({r}, {c}) is off the {size}x{size} board")
    code = 4 * (GRID * r + c) + SIDES.index(fields[2].strip().upper())
    if code not in legal_moves(st):
        why = "that side is a wall" if has_wall(st, GRID * r + c, code & 3) else f"({r}, {c}) is out of reach"
        raise IllegalMoveError(f"{text!r}: {why} (at most {int(st[MAX_STEP])} steps, never through the "
                               f"adversary); {len(legal_moves(st))} legal moves")
    return code


def _digit(st: np.ndarray, cell: int) -> int:
    return sum(1 << d for d in range(4) if has_wall(st, cell, d))


def _rc(cell: int) -> str:
    return f"{cell // GRID},{cell % GRID}"


def position_string(st: np.ndarray) -> str:
    """The one-line position string of a state (module docstring)."""
    size = int(st[SIZE])
    rows = "/".join("".join(f"{_digit(st, GRID * r + c):x}" for c in range(size)) for r in range(size))
    return f"{size} {rows} {_rc(int(st[POS_A]))} {_rc(int(st[POS_B]))} {PLAYER[int(st[TO_MOVE])]}"


def _size(text: str, field: str) -> int:
    if not field.isdigit() or not MIN_SIZE <= int(field) <= MAX_SIZE:
        raise InvalidPositionError(f"{text!r}: board size {field!r} must be {MIN_SIZE}..{MAX_SIZE}")
    return int(field)


def _cell(text: str, field: str, size: int, who: str) -> int:
    parts = field.split(",")
    if len(parts) != 2 or not all(p.isdigit() and int(p) < size for p in parts):
        raise InvalidPositionError(f"{text!r}: {who}'s cell {field!r} must be 'r,c' with r and c in 0..{size - 1}")
    return GRID * int(parts[0]) + int(parts[1])


def parse_position(text: str) -> np.ndarray:
    """The state of a one-line position string; InvalidPositionError quoting it when malformed."""
    if not isinstance(text, str):
        raise InvalidPositionError(f"{text!r} is not a position string")
    fields = text.split()
    if len(fields) != 5:
        raise InvalidPositionError(f"{text!r} is not a Colosseum Survival position: expected 'M ROWS A B SIDE', "
                                   f"e.g. {EXAMPLE}")
    size = _size(text, fields[0])
    rows = fields[1].split("/")
    if len(rows) != size or any(len(row) != size for row in rows):
        raise InvalidPositionError(f"{text!r}: the walls {fields[1]!r} must be {size} rows of {size} hex digits "
                                   "separated by '/'")
    st = empty_board(size)  # the edges walled: the digits must say so too
    words = st.tolist()  # read and set as Python ints (has_wall of numpy items is ~10 times slower)
    interior = 0
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            try:
                digit = int(ch, 16)
            except ValueError:
                raise InvalidPositionError(f"{text!r}: {ch!r} at ({r}, {c}) is not a hex digit 0-9 a-f") from None
            cell = GRID * r + c
            for d in range(4):
                edge = has_wall(words, cell, d)
                if edge and not digit >> d & 1:
                    raise InvalidPositionError(f"{text!r}: ({r}, {c}) must have its {SIDES[d]} edge walled")
                if digit >> d & 1 and not edge:
                    w, b = cell_bit(cell)
                    words[WALL + 3 * d + w] |= b
                    interior += 1
    for cell in (GRID * r + c for r in range(size) for c in range(size)):
        for d in (1, 2):  # each interior side once: its Right and Down neighbours agree
            other = cell + (1 if d == 1 else GRID)
            if (d == 1 and cell % GRID == size - 1) or (d == 2 and cell // GRID == size - 1):
                continue
            if has_wall(words, cell, d) != has_wall(words, other, d ^ 2):
                raise InvalidPositionError(f"{text!r}: the wall between {_rc(cell)} and {_rc(other)} is stored on one "
                                           "side only (a wall sets both cells' flags)")
    st[:] = words
    st[POS_A] = _cell(text, fields[2], size, "A")
    st[POS_B] = _cell(text, fields[3], size, "B")
    if st[POS_A] == st[POS_B]:
        raise InvalidPositionError(f"{text!r}: A and B stand on one cell")
    if fields[4] not in _COLOUR:
        raise InvalidPositionError(f"{text!r}: side to move {fields[4]!r} must be A or B")
    st[TO_MOVE] = _COLOUR[fields[4]]
    st[MOVE_NUMBER] = max(0, interior // 2 - 2 * max_step(size))
    return st


def board_text(st: np.ndarray, winner: int = 0) -> str:
    """A readable board for terminals: the cells (``A``, ``B``, ``.``) with ``|`` and ``-`` for
    the walls between them, then whose turn it is, or who has won (``winner``: -1 A, +1 B,
    2 a tie, 0 the game goes on)."""
    size = int(st[SIZE])
    lines = ["    " + " ".join(f"{c % 10}" for c in range(size))]
    for r in range(size):
        top = "   +" + "".join(("-" if has_wall(st, GRID * r + c, 0) else " ") + "+" for c in range(size))
        lines.append(top)
        row = f"{r:>2} " + ("|" if has_wall(st, GRID * r, 3) else " ")
        for c in range(size):
            cell = GRID * r + c
            row += "A" if cell == st[POS_A] else "B" if cell == st[POS_B] else "."
            row += "|" if has_wall(st, cell, 1) else " "
        lines.append(row)
    lines.append("   +" + "".join(("-" if has_wall(st, GRID * (size - 1) + c, 2) else " ") + "+" for c in range(size)))
    status = (f"{PLAYER[winner]} has won" if winner in (FIRST, SECOND) else "a tie" if winner
              else f"{PLAYER[int(st[TO_MOVE])]} to move")
    return "\n".join([*lines, f"  ply {int(st[MOVE_NUMBER])}, {status}"])


#: the SVG board's geometry (user units) and colours (the framework draws A blue, B brown)
_CELL = 32
_FILL = {FIRST: "#1f5fbf", SECOND: "#8b5a2b"}


def svg(st: np.ndarray) -> str:
    """The board as an SVG picture for the web viewer: a light square per cell, a thick line per
    wall (edges included), A and B as discs, each ``<rect>`` named by its cell
    (``data-cell="1,2"``)."""
    size = int(st[SIZE])
    side = size * _CELL + 4
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="-2 -2 {side} {side}" class="board colosseum">']
    for r in range(size):
        for c in range(size):
            parts.append(f'<rect x="{c * _CELL}" y="{r * _CELL}" width="{_CELL}" height="{_CELL}" fill="#f3efe6" '
                         f'stroke="#d8d2c4" data-cell="{r},{c}"/>')
    ends = ((0, 0, 1, 0), (1, 0, 1, 1), (0, 1, 1, 1), (0, 0, 0, 1))  # each side's segment in cell units
    for r in range(size):
        for c in range(size):
            for d in range(4):
                if has_wall(st, GRID * r + c, d):
                    x1, y1, x2, y2 = ((c + ends[d][0]) * _CELL, (r + ends[d][1]) * _CELL,
                                      (c + ends[d][2]) * _CELL, (r + ends[d][3]) * _CELL)
                    parts.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#222" stroke-width="4" '
                                 'stroke-linecap="round"/>')
    for colour, at in ((FIRST, POS_A), (SECOND, POS_B)):
        cell = int(st[at])
        cx, cy = (cell % GRID) * _CELL + _CELL // 2, (cell // GRID) * _CELL + _CELL // 2
        parts.append(f'<circle cx="{cx}" cy="{cy}" r="{_CELL * 3 // 8}" fill="{_FILL[colour]}" '
                     f'data-player="{PLAYER[colour]}"/>')
    parts.append("</svg>")
    return "".join(parts)
