"""boopexp: reproduce Richoux's MCTS + combinatorial-optimisation agents for boop."""

__version__ = "0.1.0"

from boopexp.errors import (
    BoopError,
    ConfigError,
    IllegalMoveError,
    InvalidMoveError,
    InvalidPositionError,
    StoreError,
)

__all__ = [
    "BoopError", "ConfigError", "IllegalMoveError", "InvalidMoveError", "InvalidPositionError", "StoreError", "__version__",
]
