"""**The** games boopexp plays: :class:`Game` (a game's name, its Python values and its compiled
kernels) and :func:`get` (a built-in game by name, or a user's ``module:attr``, docs/games.md).

A game is two modules: its *values* (plain Python: the start, notation, position strings and
boards; importing it loads no numba) and its *kernels* (the contract's compiled names, docs/games.md
"The contract"), bound to the engine's search templates by :func:`boopexp.engine.binding.bind` the
first time the game is searched. boop. is the reference game: its kernels are the engine's own,
its search :mod:`boopexp.engine.mcts` itself.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from boopexp import schema

__all__ = ["DEFAULT_GAME", "GAMES", "Game", "get"]

#: the game of a config, a record or a command that names none
DEFAULT_GAME = "boop"
#: the built-in games: name -> the module of its Python values
GAMES = {"boop": "boopexp.games.boop", "connect-four": "boopexp.games.connect_four"}


@dataclass(frozen=True)
class Game:
    """A game boopexp plays (docs/games.md).

    Attributes:
        name: the name configs, records and commands give (``boop``, ``connect-four``).
        values: the module of its Python values (``initial_state``, ``position_string``,
            ``parse_position``, ``move_text``, ``board_text``, ``KERNELS`` the dotted name of its
            kernels module, ``TO_MOVE``).
    """

    name: str
    values: ModuleType

    def kernels(self) -> ModuleType:
        """The game's compiled kernels (imports numba)."""
        return importlib.import_module(self.values.KERNELS)

    def engine(self) -> ModuleType:
        """The search kernels bound to this game (:mod:`boopexp.engine.mcts` for boop.)."""
        if self.name == DEFAULT_GAME:
            return importlib.import_module("boopexp.engine.mcts")
        from boopexp.engine import binding

        return binding.bind(self.name.replace("-", "_"), self.kernels())

    def paper_params(self) -> dict[str, Any]:
        """The game's defaults of the paper-level parameters ``k``, ``m``, ``d`` (its values'
        ``DEFAULT_PARAMS``; boop.: none, the preset's)."""
        defaults = getattr(self.values, "DEFAULT_PARAMS", {})
        return {key: defaults[key] for key in ("k", "m", "d") if key in defaults}

    def device_costs(self) -> dict[str, float]:
        """The game's device-µs of its primitives (its values' ``DEVICE_COSTS``, the keys of
        :data:`boopexp.agents.budget.COST_FIELDS`; boop.: none, the profile's are boop.'s)."""
        return dict(getattr(self.values, "DEVICE_COSTS", {}))

    def initial_state(self, seed: int | None = None) -> np.ndarray:
        return self.values.initial_state(seed)

    def to_move(self, st: np.ndarray) -> int:
        """The side to move of ``st``: -1 the first player, +1 the second."""
        return int(st[self.values.TO_MOVE])

    def position_string(self, st: np.ndarray) -> str:
        return self.values.position_string(st)

    def parse_position(self, text: str) -> np.ndarray:
        return self.values.parse_position(text)

    def move_text(self, code: int) -> str:
        return self.values.move_text(code)

    def board_text(self, st: np.ndarray, winner: int = 0) -> str:
        return self.values.board_text(st, winner)


_LOADED: dict[str, Game] = {}


def get(name: Any) -> Game:
    """The game named ``name``: a built-in one (:data:`GAMES`).

    Raises:
        ConfigError: ``game = <name> is not allowed; allowed: <the games>``.
    """
    game = _LOADED.get(name) if isinstance(name, str) else None
    if game is not None:
        return game
    schema.choice(name, "game", GAMES)
    game = _LOADED[name] = Game(name, importlib.import_module(GAMES[name]))
    return game
