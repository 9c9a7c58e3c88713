"""The viewer's positions: a record walked ply by ply (``replay.walk``, ``session.pushes_of``) with
its pushes and promotions, as ``session.PlyView`` holds them, or a game other than boop.'s drawn
by its own ``svg`` (``game_view``); ``SearchCache``, the searches a re-play passed
(``replay.root_searches``), kept per game.

Each position is the one :func:`boopexp.play.replay.walk` reaches (the REAL rules, every move
checked, the outcome compared with the record's); each ply says where its piece went, which pieces
it pushed and which group it promoted, as :class:`boopexp.play.session.PlyView` holds them (the
same view the browser's games draw: ``play.py``). With ``play.py``, the one part of
``boopexp serve`` that loads the engine, when a game is opened or played.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from boopexp.errors import BoopError
from boopexp.interfaces.web.stores import RequestError

if TYPE_CHECKING:
    from boopexp.game.sides import Colour
    from boopexp.games.registry import Game
    from boopexp.play.replay import RootSearch
    from boopexp.play.session import PlyView

#: The games whose re-played searches :class:`SearchCache` keeps (those asked about last).
MAX_SEARCHED_GAMES = 16

def position_view(st: Any) -> dict[str, Any]:
    """A state as the page draws it: ``{"board": {square: piece}, "pools": {"blue": [small,
    large], "red": [...]}, "to_move": "blue"|"red"}``, a piece by its letter in the notation
    (:func:`boopexp.game.notation.piece_letter`: ``b``/``B`` Blue small/large, ``r``/``R`` Red)."""
    from boopexp.engine.state import N_SQUARES, POOL_BASE_BLUE, POOL_BASE_RED, POOL_LARGE_BLUE, POOL_LARGE_RED, TO_MOVE
    from boopexp.game.notation import piece_letter, square_name
    from boopexp.game.sides import Colour

    return {"board": {square_name(q): piece_letter(st[q]) for q in range(N_SQUARES) if st[q]},
            "pools": {"blue": [int(st[POOL_BASE_BLUE]), int(st[POOL_LARGE_BLUE])],
                      "red": [int(st[POOL_BASE_RED]), int(st[POOL_LARGE_RED])]},
            "to_move": str(Colour.of(int(st[TO_MOVE])))}


def ply_view(view: PlyView) -> dict[str, Any]:
    """A ply as the page marks it: ``{"ply", "move", "colour", "square", "pushes": [[from, to or
    None]], "promoted": [squares]}`` (squares named ``a1``…``f6``)."""
    from boopexp.game.notation import square_name

    return {"ply": view.ply, "move": view.text, "colour": view.colour.value,
            "square": square_name(view.square),
            "pushes": [[square_name(a), None if b is None else square_name(b)] for a, b in view.pushes],
            "promoted": [square_name(q) for q in view.promoted]}


def game_view(game: Game, st: Any, winner: int = 0) -> dict[str, Any]:
    """A position of a game other than boop. as the page draws it: ``{"svg": the game's picture
    or None, "text": its board_text (the page's fallback), "position": the position string,
    "to_move": "p1"|"p2"}``."""
    from boopexp.game.sides import Colour

    return {"svg": game.svg(st), "text": game.board_text(st, winner), "position": game.position_string(st),
            "to_move": Colour.of(game.to_move(st)).side.value}


def move_view(ply: int, text: str, colour: Colour) -> dict[str, Any]:
    """A ply of a game other than boop. as the page lists it: ``{"ply", "move", "colour", "side"}``
    (the move in the game's notation; the colour and side of its mover, p1 moving first)."""
    return {"ply": ply, "move": text, "colour": colour.value, "side": colour.side.value}


def game_plies(record: Mapping[str, Any]) -> dict[str, Any]:
    """The positions of ``record``'s game and what each ply did (``/api/game/plies``).

    Returns:
        ``{"game": its name, "positions": [...], "plies": [...]}`` (another game's also ``"sides"``,
        the names of its sides, p1's first: :attr:`~boopexp.games.registry.Game.side_names`): ``positions[i]`` after ply
        ``i`` (0: the initial position) as :func:`position_view` (boop.) or :func:`game_view`
        (another game), each with its ``position`` string; ``plies[i - 1]`` for ply ``i`` as
        :func:`ply_view` (boop.) or ``{"ply", "move", "colour", "side"}``.

    Raises:
        RequestError: 422 the record's moves do not replay (the walk's one line).
    """
    from boopexp.engine.state import N_SQUARES, TO_MOVE
    from boopexp.game import notation
    from boopexp.game.sides import Colour
    from boopexp.games.registry import DEFAULT_GAME
    from boopexp.play.replay import game_of, start_position, walk
    from boopexp.play.session import PlyView, pushes_of

    try:
        game = game_of(record)
        if game.name != DEFAULT_GAME:
            return _other_game_plies(record, game)
        states = [start_position(record).state]  # the empty board, or the record's start (docs/openings.md)
        walk(record, lambda ply, text, position: states.append(position.state))
    except BoopError as exc:
        raise RequestError(422, f"the game does not replay: {exc}") from None
    plies = []
    for ply, text in enumerate(record["moves"], start=1):
        before, after = states[ply - 1], states[ply]
        size, square, _ = notation.parse_move(text)
        mover = int(before[TO_MOVE])
        pushed, pushes = pushes_of(before, size, square)
        # the mover's pieces on the board once pushed that the promotion then took off
        promoted = tuple(q for q in range(N_SQUARES) if pushed[q] * mover > 0 and after[q] == 0)
        plies.append(ply_view(PlyView(ply, Colour.of(mover), "", text, square, pushes, promoted, None, {})))
    positions = [{**position_view(st), "position": notation.format_position(st)} for st in states]
    return {"game": DEFAULT_GAME, "positions": positions, "plies": plies}


def _other_game_plies(record: Mapping[str, Any], game: Game) -> dict[str, Any]:
    """:func:`game_plies` of a game other than boop.: each position drawn by the game itself
    (:func:`game_view`), the last one with the record's outcome (a win, a draw)."""
    from boopexp.engine.outcome import DRAW
    from boopexp.game.sides import Colour
    from boopexp.play.replay import walk

    start = record.get("start")
    states = [game.initial_state() if start is None else game.parse_position(start)]
    walk(record, lambda ply, text, position: states.append(position.state))
    plies = [move_view(ply, text, Colour.of(game.to_move(states[ply - 1])))
             for ply, text in enumerate(record["moves"], start=1)]
    last = len(states) - 1
    termination, colour = record.get("termination"), record.get("winner_colour")
    outcome = DRAW if termination == "draw" else Colour(colour).code if termination == "victory" and colour else 0
    positions = [game_view(game, st, outcome if i == last else 0) for i, st in enumerate(states)]
    return {"game": game.name, "sides": list(game.side_names), "positions": positions, "plies": plies}


class SearchCache:
    """The root searches the viewer shows (``/api/game/search``), kept per game: one re-play
    reaches the ply asked and keeps every MCTS search on its way
    (:func:`boopexp.play.replay.root_searches`), so each is played once, and a ply already passed
    costs no re-play (at ply 999 a re-play took 15 s). A game is known by its identity and moves;
    the :data:`MAX_SEARCHED_GAMES` games asked about last are kept."""

    def __init__(self, max_games: int = MAX_SEARCHED_GAMES) -> None:
        self._lock = threading.Lock()
        self._games: OrderedDict[tuple, dict[int, RootSearch]] = OrderedDict()
        self._max_games = max_games

    def search(self, record: Mapping[str, Any], ply: int) -> RootSearch:
        """:func:`boopexp.play.replay.root_search` of ``record`` at ``ply``, re-played only when
        not kept.

        Raises:
            ConfigError, StoreError: as ``root_search``.
        """
        from boopexp.play.identity import record_key
        from boopexp.play.replay import check_root_search, root_searches

        key = (record_key(record), tuple(record["moves"]))
        with self._lock:
            kept = self._games.get(key)
            if kept is not None and ply in kept:
                self._games.move_to_end(key)
                return kept[ply]
        check_root_search(record, ply)
        found = root_searches(record, ply)
        with self._lock:
            self._games[key] = {**self._games.get(key, {}), **found}
            self._games.move_to_end(key)
            while len(self._games) > self._max_games:
                self._games.popitem(last=False)
        return found[ply]
