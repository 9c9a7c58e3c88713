"""The game viewer's data: a stored game's record walked on the board, ply by ply.

Each position is the one :func:`boopexp.play.replay.walk` reaches (the REAL rules, every move
checked, the outcome compared with the record's); each ply says where its piece went, which pieces
it pushed (read off the engine's own push, :func:`boopexp.play.session.pushes_of`) and which group
it promoted. This is the one part of ``boopexp serve`` that loads the engine, when a game is opened.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from boopexp.errors import BoopError
from boopexp.interfaces.web.stores import RequestError

#: A board cell as the page draws it: 0 empty, -1/-2 Blue small/large, 1/2 Red small/large
#: (the engine's values, engine/state.py).
CELL_NAMES = {0: "", -1: "b", -2: "B", 1: "r", 2: "R"}


def game_plies(record: Mapping[str, Any]) -> dict[str, Any]:
    """The positions of ``record``'s game and what each ply did (``/api/game/plies``).

    Returns:
        ``{"positions": [...], "plies": [...]}``: ``positions[i]`` after ply ``i`` (0: the initial
        position) as ``{"board": {square: piece}, "pools": {"blue": [small, large], "red": [...]},
        "to_move": "blue"|"red"}``; ``plies[i - 1]`` for ply ``i`` as ``{"ply", "move", "colour",
        "square", "pushes": [[from, to or None]], "promoted": [squares]}`` (squares named
        ``a1``…``f6``).

    Raises:
        RequestError: 422 the record's moves do not replay (the walk's one line).
    """
    from boopexp.engine.state import (
        BLUE,
        N_SQUARES,
        POOL_BASE_BLUE,
        POOL_BASE_RED,
        POOL_LARGE_BLUE,
        POOL_LARGE_RED,
        TO_MOVE,
    )
    from boopexp.game import notation
    from boopexp.game.position import Position
    from boopexp.play.replay import walk
    from boopexp.play.session import pushes_of

    names = [notation.square_name(q) for q in range(N_SQUARES)]
    states = [Position.initial().state]
    try:
        walk(record, lambda ply, text, position: states.append(position.state))
    except BoopError as exc:
        raise RequestError(422, f"the game does not replay: {exc}") from None

    def position(st: Any) -> dict[str, Any]:
        return {"board": {names[q]: CELL_NAMES[int(st[q])] for q in range(N_SQUARES) if st[q]},
                "pools": {"blue": [int(st[POOL_BASE_BLUE]), int(st[POOL_LARGE_BLUE])],
                          "red": [int(st[POOL_BASE_RED]), int(st[POOL_LARGE_RED])]},
                "to_move": "blue" if int(st[TO_MOVE]) == BLUE else "red"}

    plies = []
    for ply, text in enumerate(record["moves"], start=1):
        before, after = states[ply - 1], states[ply]
        size, square, _ = notation.parse_move(text)
        mover = int(before[TO_MOVE])
        pushed, pushes = pushes_of(before, size, square)
        # the mover's pieces on the board once pushed that the promotion then took off
        promoted = [names[q] for q in range(N_SQUARES) if pushed[q] * mover > 0 and after[q] == 0]
        moved = [[names[a], None if b is None else names[b]] for a, b in pushes]
        plies.append({"ply": ply, "move": text, "colour": "blue" if mover == BLUE else "red",
                      "square": names[square], "pushes": moved, "promoted": promoted})
    return {"positions": [position(st) for st in states], "plies": plies}
