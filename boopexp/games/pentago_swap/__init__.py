"""Pentago-Swap (6 x 6, place a piece then swap two quadrants, five in a row), as the COMP 424
framework of the seed report plays it, checked ply by ply against that framework's golden traces
(``tests/test_pentago_swap.py``; docs/games.md, "Pentago-Swap"; spec
../shared/spec/games/PENTAGO-SWAP.md).

``state`` (the state layout, the bit geometry, ``initial_state``), ``kernels`` (the compiled
kernels of the game contract; imported by name, it loads numba), ``notation`` (moves ``23:TL-BR``,
the position string, the terminal and SVG boards), ``original`` (the framework's ``isLegal``,
``gameOver`` and random player, which the search does not use) and ``settings``
(``DEFAULT_PARAMS``, ``DEVICE_COSTS``). The contract's Python values are served from here;
importing this package compiles nothing.
"""

from __future__ import annotations

from boopexp.games.pentago_swap.notation import (
    COLOUR_NAME,
    board_text,
    move_text,
    parse_move,
    parse_position,
    position_string,
    svg,
)
from boopexp.games.pentago_swap.settings import DEFAULT_PARAMS, DEVICE_COSTS
from boopexp.games.pentago_swap.state import BLACK, TO_MOVE, WHITE, initial_state

#: the game's name in configs, records and commands
NAME = "pentago-swap"
#: the contract's kernels module
KERNELS = "boopexp.games.pentago_swap.kernels"
#: the sides' names, the first mover's first, as the board writes them
SIDE_NAMES = (COLOUR_NAME[WHITE], COLOUR_NAME[BLACK])

__all__ = ["NAME", "KERNELS", "TO_MOVE", "SIDE_NAMES", "initial_state", "move_text", "parse_move", "position_string",
           "parse_position", "board_text", "svg", "DEFAULT_PARAMS", "DEVICE_COSTS"]
