"""Tic-tac-toe's Python values under boopexp's game contract (docs/games.md, "Values").

Cells are named ``a1``..``c3`` (files a-c left to right, ranks 1-3 bottom to top); a position
string is the three ranks top to bottom (``x`` the first player, ``o`` the second, ``.`` empty)
and the side to move, e.g. ``x../.o./... x``. Plain Python: importing this loads no numba.
"""

from __future__ import annotations

import numpy as np

from boopexp.errors import InvalidMoveError, InvalidPositionError

NAME = "tictactoe"
KERNELS = "tictactoe.kernels"
STATE_SIZE, TO_MOVE, MOVE_NUMBER = 11, 9, 10
#: the paper-level parameters for this game: m of at most 9 moves, a playout is short anyway
DEFAULT_PARAMS = {"k": 4, "m": 3, "d": 0.9}
#: device-µs per primitive: a tiny game's ply and f are far cheaper than boop.'s
DEVICE_COSTS = {"random_ply": 20.0, "solver_move": 2.0}

_MARK = {-1: "x", 1: "o", 0: "."}
#: the sides' names, the first mover's first (optional; default boop.'s "blue", "red")
SIDE_NAMES = (_MARK[-1], _MARK[1])


def initial_state(seed: int | None = None) -> np.ndarray:
    """The empty board, ``x`` (the first player, -1) to move."""
    st = np.zeros(STATE_SIZE, dtype=np.int16)
    st[TO_MOVE] = -1
    return st


def move_text(code: int) -> str:
    """Cell ``code`` (0-8, row-major from the top) as ``a3``..``c1``."""
    return "abc"[code % 3] + str(3 - code // 3)


def parse_move(text: str, st: np.ndarray) -> int:
    """The code of a move written ``b2``; InvalidMoveError when it is not an empty cell."""
    if not isinstance(text, str) or len(text) != 2 or text[0] not in "abc" or text[1] not in "123":
        raise InvalidMoveError(f"{text!r} is not a cell; cells are a1..c3")
    code = 3 * (3 - int(text[1])) + "abc".index(text[0])
    if st[code] != 0:
        raise InvalidMoveError(f"{text!r} is taken")
    return code


def position_string(st: np.ndarray) -> str:
    """``x../.o./... x``: the ranks top to bottom, then the side to move."""
    rows = "/".join("".join(_MARK[int(v)] for v in st[3 * r:3 * r + 3]) for r in range(3))
    return f"{rows} {_MARK[int(st[TO_MOVE])]}"


def parse_position(text: str) -> np.ndarray:
    """The state of a position string; InvalidPositionError naming what is wrong."""
    parts = text.split() if isinstance(text, str) else []
    rows = parts[0].split("/") if parts else []
    if len(parts) != 2 or len(rows) != 3 or any(len(r) != 3 or set(r) - set("xo.") for r in rows) \
            or parts[1] not in ("x", "o"):
        raise InvalidPositionError(f"{text!r} is not a position: expected three ranks of x, o, . and the side to "
                                   "move, e.g. 'x../.o./... x'")
    st = initial_state()
    marks = {"x": -1, "o": 1, ".": 0}
    for i, ch in enumerate("".join(rows)):
        st[i] = marks[ch]
    st[TO_MOVE] = marks[parts[1]]
    st[MOVE_NUMBER] = int(np.count_nonzero(st[:9]))
    return st


def board_text(st: np.ndarray, winner: int = 0) -> str:
    """The board, then who is to move or has won."""
    lines = [f"{3 - r} " + " ".join(_MARK[int(v)] for v in st[3 * r:3 * r + 3]) for r in range(3)]
    lines.append("  a b c")
    lines.append(f"{_MARK[winner]} has won" if winner in (-1, 1) else f"{_MARK[int(st[TO_MOVE])]} to move")
    return "\n".join(lines)


#: the SVG board's cell size (user units)
_CELL = 60


def svg(st: np.ndarray) -> str:
    """The board as an SVG picture (optional, docs/games.md "Values"): the web viewer draws it, and
    in ``boopexp serve``'s /play a click on a cell plays the move its ``data-move`` names."""
    size = 3 * _CELL
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {size} {size + 20}" class="board tictactoe">']
    for i in range(9):
        x, y = (i % 3) * _CELL, (i // 3) * _CELL
        parts.append(f'<rect x="{x}" y="{y}" width="{_CELL}" height="{_CELL}" fill="#fafaf5" stroke="#333" '
                     f'data-move="{move_text(i)}"/>')
        mark, centre = int(st[i]), (x + _CELL // 2, y + _CELL // 2)
        if mark == -1:
            d = _CELL // 3
            parts.append(f'<path d="M{centre[0] - d} {centre[1] - d}L{centre[0] + d} {centre[1] + d}M{centre[0] + d} '
                         f'{centre[1] - d}L{centre[0] - d} {centre[1] + d}" stroke="#c1121f" stroke-width="6" '
                         f'pointer-events="none" data-mark="x"/>')
        elif mark == 1:
            parts.append(f'<circle cx="{centre[0]}" cy="{centre[1]}" r="{_CELL // 3}" fill="none" stroke="#1d4ed8" '
                         f'stroke-width="6" pointer-events="none" data-mark="o"/>')
    for c in range(3):
        parts.append(f'<text x="{c * _CELL + _CELL // 2}" y="{size + 15}" text-anchor="middle" font-size="14">'
                     f'{"abc"[c]}</text>')
    parts.append("</svg>")
    return "".join(parts)
