"""Colosseum Survival (M x M, 5..12: walk up to K steps, wall a side; the larger region wins), as
the COMP 424 (McGill, Winter 2022) framework plays it, checked ply by ply against the original's
golden traces (``tests/test_colosseum.py``; spec/games/COLOSSEUM.md; docs/games.md, "Colosseum
Survival").

``state`` (the state layout, the wall bitboards, the seeded random start ``initial_state``, the
game's options ``OPTIONS``: ``board_size``, ``size_range``, ``separation``),
``kernels`` (the compiled kernels of the game contract; imported by name, it loads numba),
``notation`` (moves ``r,c,D``, the position string, the terminal and SVG boards) and ``settings``
(``DEFAULT_PARAMS``, ``DEVICE_COSTS``). The contract's Python values are served from here;
importing this package compiles nothing.
"""

from __future__ import annotations

from boopexp.games.colosseum.notation import (
    PLAYER,
    board_text,
    move_text,
    parse_move,
    parse_position,
    position_string,
    svg,
)
from boopexp.games.colosseum.settings import DEFAULT_PARAMS, DEVICE_COSTS
from boopexp.games.colosseum.state import FIRST, OPTIONS, SECOND, TO_MOVE, initial_state, with_options

#: the game's name in configs, records and commands
NAME = "colosseum"
#: the contract's kernels module
KERNELS = "boopexp.games.colosseum.kernels"
#: the start is drawn from the game's seed (``initial_state(seed)``): a game records it
RANDOM_START = True
#: the sides' names, the first mover's first: the players' letters, as the board writes them
SIDE_NAMES = (PLAYER[FIRST], PLAYER[SECOND])

__all__ = ["NAME", "KERNELS", "TO_MOVE", "SIDE_NAMES", "RANDOM_START", "OPTIONS", "initial_state", "with_options",
           "move_text", "parse_move", "position_string", "parse_position", "board_text", "svg", "DEFAULT_PARAMS",
           "DEVICE_COSTS"]
