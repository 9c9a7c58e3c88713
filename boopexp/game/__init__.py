"""The game as Python values: ``Position``/``Move`` (``position``), ``notation`` (a1…f6, move
strings, board rendering) and ``positions`` (the seeded sample bench and calibration measure on).

``boopexp.game.Position``, ``Move`` and ``MoveResult`` are served lazily (PEP 562): importing this
package, or ``boopexp.game.notation``, loads no numba.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {"Move": "position", "MoveResult": "position", "Position": "position"}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"boopexp.game.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'boopexp.game' has no attribute {name!r}")
