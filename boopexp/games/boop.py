"""boop.'s Python values under the game contract's names (docs/games.md): the reference game, its
notation and positions as :mod:`boopexp.game.notation` writes them.

Plain Python: importing it loads no numba (the kernels are :mod:`boopexp.engine.boop_game`).
"""

from __future__ import annotations

import numpy as np

from boopexp.engine import state
from boopexp.game import notation

#: the game's name in configs, records and commands
NAME = "boop"
#: the contract's kernels module (:mod:`boopexp.engine.boop_game`)
KERNELS = "boopexp.engine.boop_game"
TO_MOVE = state.TO_MOVE
#: the sides' names, the first mover's first (RULES.md §1): also what a record's ``winner_colour`` holds
SIDE_NAMES = ("blue", "red")


def initial_state(seed: int | None = None) -> np.ndarray:
    """The empty board, 8 smalls each, Blue to move (boop.'s start is not random: ``seed`` unused)."""
    return state.initial_state()


def position_string(st: np.ndarray) -> str:
    """The one-line position string (docs/notation.md)."""
    return notation.format_position(st)


def parse_position(text: str) -> np.ndarray:
    """The state of a position string; InvalidPositionError quoting it when malformed."""
    return notation.parse_position(text)


def move_text(code: int) -> str:
    """A move code as the records write it (``c3`` a small, ``C3`` a large)."""
    return notation.format_move(*state.decode_move(code))


def board_text(st: np.ndarray, winner: int = 0) -> str:
    """The terminal board."""
    return notation.render(st, winner)
