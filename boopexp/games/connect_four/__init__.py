"""Connect Four (6 x 7, four in a row), the first game of the games layer, checked move for move
against OpenSpiel's ``connect_four`` (``tests/test_connect_four.py``; docs/games.md, "Connect
Four").

``state`` (the state layout, the bit geometry, ``initial_state``), ``kernels`` (the compiled
kernels of the game contract; imported by name, it loads numba), ``notation`` (moves ``a``..``g``,
the position string, the terminal and SVG boards) and ``settings`` (``DEFAULT_PARAMS``,
``DEVICE_COSTS``). The contract's Python values are served from here; importing this package
compiles nothing.
"""

from __future__ import annotations

from boopexp.games.connect_four.notation import (
    PIECE,
    board_text,
    move_text,
    parse_move,
    parse_position,
    position_string,
    svg,
)
from boopexp.games.connect_four.settings import DEFAULT_PARAMS, DEVICE_COSTS
from boopexp.games.connect_four.state import FIRST, SECOND, TO_MOVE, initial_state

#: the game's name in configs, records and commands
NAME = "connect-four"
#: the contract's kernels module
KERNELS = "boopexp.games.connect_four.kernels"
#: the sides' names, the first mover's first: its pieces' letters, as OpenSpiel and the board write them
SIDE_NAMES = (PIECE[FIRST], PIECE[SECOND])

__all__ = ["NAME", "KERNELS", "TO_MOVE", "SIDE_NAMES", "initial_state", "move_text", "parse_move", "position_string",
           "parse_position", "board_text", "svg", "DEFAULT_PARAMS", "DEVICE_COSTS"]
