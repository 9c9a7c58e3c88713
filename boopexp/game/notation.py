"""``a1``…``f6``, move strings, one-line position strings, **the** board rendering (``render``;
``render_marked``, the last move marked).

Squares (RULES.md §1): file letter ``a``..``f`` = column 0..5, rank digit = ``6 - row``; so
``a6`` is index 0 (top-left) and ``f1`` index 35. A move is its square, with the file letter in
lower case for a small piece and upper case for a large one (the app's log convention):
``c3`` = small on c3, ``C3`` = large on c3. When a REAL move had to choose among two or more
candidate groups, the record appends the removed group: ``c4:a4b4c4`` (``d6:a6`` for a single
piece), so that a game can be replayed from its moves alone.

Position string (one line, round-trips exactly)::

    ...b../..r.../.b..../b...../br..../...... 3,0 6,0 b 0,0 12
    \\____________ grid rows 6..1 __________/ \\_/ \\_/ | \\_/ \\
                                     Blue pool  Red   |  L    moveNumber
                                   (small,large) pool side to move (b|r)

Grid characters: ``.`` empty, ``b``/``B`` Blue small/large, ``r``/``R`` Red small/large. The
last two fields are optional when parsing (L defaults to the larges each colour owns, the
move number to 0).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from boopexp import schema
from boopexp.engine.state import (
    L_BLUE,
    L_RED,
    MOVE_NUMBER,
    N_SQUARES,
    PIECES_PER_PLAYER,
    POOL_BASE_BLUE,
    POOL_BASE_RED,
    POOL_LARGE_BLUE,
    POOL_LARGE_RED,
    STATE_DTYPE,
    STATE_SIZE,
    TO_MOVE,
)
from boopexp.errors import InvalidMoveError, InvalidPositionError

FILES = "abcdef"
_CELL_CHARS = {0: ".", -1: "b", -2: "B", 1: "r", 2: "R"}
_CHAR_CELLS = {v: k for k, v in _CELL_CHARS.items()}
_MOVE_RE = re.compile(r"^([a-fA-F])([1-6])(?::((?:[a-f][1-6]){1,3}))?$")


def square_name(index: int) -> str:
    """``a6`` for index 0 … ``f1`` for index 35."""
    if not 0 <= index < N_SQUARES:
        raise InvalidMoveError(f"square index {index!r} is off the board (0..35)")
    r, c = divmod(index, 6)
    return f"{FILES[c]}{6 - r}"


def parse_square(text: str) -> int:
    """The index of a square name such as ``c3`` (case-insensitive)."""
    t = text.strip()
    if len(t) != 2 or t[0].lower() not in FILES or t[1] not in "123456":
        raise InvalidMoveError(f"{text!r} is not a square: expected a file a-f and a rank 1-6, like 'c3'")
    return 6 * (6 - int(t[1])) + FILES.index(t[0].lower())


def format_move(size: int, square: int, group: tuple[int, ...] | None = None) -> str:
    """``c3`` (small) or ``C3`` (large), plus ``:cells`` of a chosen promotion group."""
    name = square_name(square)
    text = name.upper()[0] + name[1] if size == 2 else name
    if group:
        text += ":" + "".join(square_name(q) for q in group)
    return text


def parse_move(text: str) -> tuple[int, int, tuple[int, ...] | None]:
    """(size, square, promotion group or None) of a move string; InvalidMoveError otherwise."""
    if not isinstance(text, str):
        raise InvalidMoveError(f"{text!r} is not a move: expected a string like 'c3' or 'C3'")
    m = _MOVE_RE.match(text.strip())
    if not m:
        raise InvalidMoveError(
            f"{text!r} is not a move: expected a file a-f (lower case = small, upper case = large) "
            "and a rank 1-6, like 'c3' or 'C3', optionally ':' and a promoted group like 'c4:a4b4c4'"
        )
    letter, rank, group = m.groups()
    size = 2 if letter.isupper() else 1
    square = parse_square(letter.lower() + rank)
    cells = None
    if group:
        cells = tuple(parse_square(group[i : i + 2]) for i in range(0, len(group), 2))
        if len(cells) == 2:
            raise InvalidMoveError(f"{text!r}: a promoted group is one square or a line of three, not two")
    return size, square, cells


def piece_letter(value: int) -> str:
    """The letter of a board cell's value (``b``/``B`` Blue small/large, ``r``/``R`` Red, ``.``
    empty): the one spelling of the pieces, in position strings, boards and the web board."""
    return _CELL_CHARS[int(value)]


def format_position(st: np.ndarray) -> str:
    """The one-line position string of a state (see the module docstring)."""
    rows = "/".join("".join(_CELL_CHARS[int(v)] for v in st[6 * r : 6 * r + 6]) for r in range(6))
    side = "b" if st[TO_MOVE] < 0 else "r"
    return (
        f"{rows} {st[POOL_BASE_BLUE]},{st[POOL_LARGE_BLUE]} {st[POOL_BASE_RED]},{st[POOL_LARGE_RED]} "
        f"{side} {st[L_BLUE]},{st[L_RED]} {st[MOVE_NUMBER]}"
    )


#: The largest move number a position string gives (the state holds it as a 16-bit integer).
MAX_MOVE_NUMBER = int(np.iinfo(STATE_DTYPE).max)


def _count(text: str, what: str, high: int, full: str) -> int:
    """The number ``text`` spells in ASCII digits, in 0..``high``; else an InvalidPositionError
    naming the field and its range (a huge number would overflow the state's integers)."""
    value = schema.decimal(text)
    if value is None or value > high:
        raise InvalidPositionError(f"{full!r}: {what} {text!r} must be an integer in 0..{high}")
    return value


def _pair(text: str, what: str, full: str) -> tuple[int, int]:
    parts = text.split(",")
    if len(parts) != 2:
        raise InvalidPositionError(f"{full!r}: {what} {text!r} must be two counts like '6,1'")
    return (_count(parts[0], f"{what} {text!r}: the first count", PIECES_PER_PLAYER, full),
            _count(parts[1], f"{what} {text!r}: the second count", PIECES_PER_PLAYER, full))


def parse_position(text: str) -> np.ndarray:
    """The state of a one-line position string; InvalidPositionError quoting it when malformed."""
    if not isinstance(text, str):
        raise InvalidPositionError(f"{text!r} is not a position string")
    fields = text.split()
    if len(fields) not in (4, 6):
        raise InvalidPositionError(
            f"{text!r} is not a position: expected 'ROWS BLUE_POOL RED_POOL SIDE [L_BLUE,L_RED MOVE_NUMBER]', "
            "e.g. '....../....../....../....../....../...... 8,0 8,0 b 0,0 0'"
        )
    rows = fields[0].split("/")
    if len(rows) != 6 or any(len(r) != 6 for r in rows):
        raise InvalidPositionError(f"{text!r}: the grid {fields[0]!r} must be 6 rows of 6 characters separated by '/'")
    st = np.zeros(STATE_SIZE, dtype=STATE_DTYPE)
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch not in _CHAR_CELLS:
                raise InvalidPositionError(f"{text!r}: {ch!r} is not a cell; allowed: . b B r R")
            st[6 * r + c] = _CHAR_CELLS[ch]
    st[[POOL_BASE_BLUE, POOL_LARGE_BLUE]] = _pair(fields[1], "Blue's pool", text)
    st[[POOL_BASE_RED, POOL_LARGE_RED]] = _pair(fields[2], "Red's pool", text)
    if fields[3] not in ("b", "r"):
        raise InvalidPositionError(f"{text!r}: side to move {fields[3]!r} must be 'b' (Blue) or 'r' (Red)")
    st[TO_MOVE] = -1 if fields[3] == "b" else 1
    grid = st[:N_SQUARES]
    for colour, name, small, large in ((-1, "Blue", POOL_BASE_BLUE, POOL_LARGE_BLUE),
                                       (1, "Red", POOL_BASE_RED, POOL_LARGE_RED)):
        on_board = int(np.sum(grid * colour > 0))
        total = on_board + int(st[small]) + int(st[large])
        if total != PIECES_PER_PLAYER:
            raise InvalidPositionError(
                f"{text!r}: {name} has {total} pieces (board {on_board} + pool), a player owns exactly 8"
            )
    owned = (int(np.sum(grid == -2)) + int(st[POOL_LARGE_BLUE]), int(np.sum(grid == 2)) + int(st[POOL_LARGE_RED]))
    if len(fields) == 6:
        lb, lr = _pair(fields[4], "the large counters", text)
        if not (owned[0] <= lb <= 8 and owned[1] <= lr <= 8):
            raise InvalidPositionError(
                f"{text!r}: large counters {fields[4]!r} must be >= the larges owned {owned} and <= 8"
            )
        st[L_BLUE], st[L_RED] = lb, lr
        st[MOVE_NUMBER] = _count(fields[5], "move number", MAX_MOVE_NUMBER, text)
    else:
        st[L_BLUE], st[L_RED] = owned
    return st


def group_name(group: Iterable[int]) -> str:
    """A group of squares as people read it: ``a4 b4 c4`` (``d6`` for a single piece)."""
    return " ".join(square_name(q) for q in group)


def render(st: np.ndarray, winner: int = 0) -> str:
    """A readable board for terminals, in the spec's layout (files on top, ranks on the left), then
    whose turn it is, or who has won where ``winner`` is a colour (-1 Blue, 1 Red; 0: nobody)."""
    lines = ["     a b c d e f"]
    for r in range(6):
        cells = " ".join(_CELL_CHARS[int(v)] for v in st[6 * r : 6 * r + 6])
        lines.append(f"  {6 - r}  {cells}")
    lines.append(_pools(st))
    if winner:
        lines.append(f"  ply {st[MOVE_NUMBER]}, {'Blue' if winner < 0 else 'Red'} has won")
    else:
        lines.append(f"  ply {st[MOVE_NUMBER]}, {'Blue' if st[TO_MOVE] < 0 else 'Red'} to move")
    return "\n".join(lines)


def render_marked(st: np.ndarray, placed: int | None = None, pushed: Iterable[int] = ()) -> str:
    """The board of :func:`render`, one column wider per square so that the last move shows:
    ``[b]`` the piece just ``placed``, ``b*`` a piece it ``pushed`` (where it landed); then both
    pools (``boopexp play`` draws it after every ply and says whose turn it is itself)."""
    landed = set(pushed)
    lines = ["      a  b  c  d  e  f"]
    for r in range(6):
        cells = []
        for sq in range(6 * r, 6 * r + 6):
            ch = _CELL_CHARS[int(st[sq])]
            if st[sq] != 0 and sq == placed:
                cells.append(f"[{ch}]")
            elif st[sq] != 0 and sq in landed:
                cells.append(f" {ch}*")
            else:
                cells.append(f" {ch} ")
        lines.append(f"  {6 - r}  " + "".join(cells))
    lines.append(_pools(st))
    return "\n".join(lines)


def _pools(st: np.ndarray) -> str:
    return (f"  Blue pool: {st[POOL_BASE_BLUE]} small, {st[POOL_LARGE_BLUE]} large   "
            f"Red pool: {st[POOL_BASE_RED]} small, {st[POOL_LARGE_RED]} large")
