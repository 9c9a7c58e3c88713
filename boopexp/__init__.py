"""``__version__``, the errors, and ``boopexp.Position`` / ``boopexp.Move`` and the Python API
(``boopexp.load_games``, ``play_game``, ``run``, ...) served lazily (importing the package compiles nothing).

boopexp: reproduce Richoux's MCTS + combinatorial-optimisation agents for boop.

``boopexp.Position`` and ``boopexp.Move`` (the game API a plugin agent plays boop. with, docs/agents.md)
and ``boopexp.GamePosition`` (any other game's) are loaded on first use: importing the package, or
running ``boopexp --help``, compiles nothing.
"""

__version__ = "0.1.0"

from typing import TYPE_CHECKING

from boopexp.errors import (
    BoopError,
    ConfigError,
    IllegalMoveError,
    InvalidMoveError,
    InvalidPositionError,
    StoreError,
)

#: names served lazily from :mod:`boopexp.game.position` (it loads the compiled engine) and
#: :mod:`boopexp.games.position` (another game's position API)
_GAME_NAMES = {"Move": "boopexp.game.position", "MoveResult": "boopexp.game.position",
               "Position": "boopexp.game.position", "GamePosition": "boopexp.games.position",
               "GameMoveResult": "boopexp.games.position"}
#: the Python API (:mod:`boopexp.api`, docs/python.md), served lazily too: reading a store loads
#: pandas and pyarrow, and only playing a game loads numba
_API_NAMES = ("load_games", "load_moves", "play_game", "ratings", "run", "table_one", "table_two")
_LAZY = {**_GAME_NAMES, **dict.fromkeys(_API_NAMES, "boopexp.api")}

# What mypy sees of the API's lazy names, re-exported by __all__ (which ruff does not read through
# *_API_NAMES: F401): a user's calls are type-checked. Types only, never run
# (tests/test_architecture.py lets the package root, and only it, name them here).
if TYPE_CHECKING:
    from boopexp.api import load_games, load_moves, play_game, ratings, run, table_one, table_two  # noqa: F401

__all__ = [
    "BoopError", "ConfigError", "GameMoveResult", "GamePosition", "IllegalMoveError", "InvalidMoveError",
    "InvalidPositionError", "Move", "MoveResult", "Position", "StoreError", "__version__", *_API_NAMES,
]


def __getattr__(name: str):
    """PEP 562 lazy attributes: ``boopexp.Position`` imports :mod:`boopexp.game.position` on first
    use, ``boopexp.load_games`` :mod:`boopexp.api`.

    By module name (importlib), not an import statement: the package root sits above every
    module, and this is not an import-time dependency of the modules that read ``__version__``
    (tests/test_architecture.py follows import statements).
    """
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'boopexp' has no attribute {name!r}")
