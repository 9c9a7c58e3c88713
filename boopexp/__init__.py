"""boopexp: reproduce Richoux's MCTS + combinatorial-optimisation agents for boop.

``boopexp.Position`` and ``boopexp.Move`` (the game API a plugin agent plays with, docs/agents.md)
are loaded on first use: importing the package, or running ``boopexp --help``, compiles nothing.
"""

__version__ = "0.1.0"

from boopexp.errors import (
    BoopError,
    ConfigError,
    IllegalMoveError,
    InvalidMoveError,
    InvalidPositionError,
    StoreError,
)

#: names served lazily from :mod:`boopexp.game` (it loads the compiled engine)
_GAME_NAMES = ("Move", "MoveResult", "Position")

__all__ = [
    "BoopError", "ConfigError", "IllegalMoveError", "InvalidMoveError", "InvalidPositionError", "Move", "MoveResult",
    "Position", "StoreError", "__version__",
]


def __getattr__(name: str):
    if name in _GAME_NAMES:
        from boopexp import game

        return getattr(game, name)
    raise AttributeError(f"module 'boopexp' has no attribute {name!r}")
