"""The game as Python values: ``Position``/``Move`` (``position``), ``notation`` (a1…f6, move
strings, board rendering), ``positions`` (the seeded sample bench and calibration measure on) and
``sides`` (the players' names as enums: ``Colour`` blue/red, ``Side`` p1/p2).

``boopexp.game.Position``, ``Move``, ``MoveResult``, ``Colour`` and ``Side`` are served lazily
(PEP 562): importing this package, ``boopexp.game.notation`` or ``boopexp.game.sides`` loads no numba.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {"Colour": "sides", "Move": "position", "MoveResult": "position", "Position": "position", "Side": "sides"}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"boopexp.game.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'boopexp.game' has no attribute {name!r}")
