"""Playing in the browser: a human's games against an agent, held by the server while they last.

Each game is a :class:`boopexp.play.session.PlaySession` (its rules, the agent's moves, undo,
hint: the same session ``boopexp play`` runs in the terminal) made and saved by
``interfaces/play_store.py`` (the next free game of its pairing in the play folder; a finished game
saved as a normal record, or rescued when the folder broke). The agent thinks in a thread of its
own, so the server answers meanwhile; the page polls the game's state. The play folder is the only
place ``boopexp serve`` writes.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from boopexp.errors import BoopError, ConfigError
from boopexp.interfaces.web.stores import RequestError, Root

if TYPE_CHECKING:
    from boopexp.interfaces.play_store import Saved
    from boopexp.play.session import PlaySession

#: Games kept at once; the oldest is forgotten beyond (an unfinished game is never saved anyway).
MAX_GAMES = 64
#: The budgets a browser game offers (``boopexp play``'s --budget; cpu and wall depend on the host).
MODES = ("device", "iterations")


@dataclass
class WebGame:
    """One game in the browser: its session, whether the agent is thinking, where it was saved."""

    id: str
    session: PlaySession
    out: Path
    lock: threading.Lock = field(default_factory=threading.Lock)
    thinking: bool = False
    error: str | None = None
    saved: Saved | None = None
    hint: dict[str, Any] | None = None


class Games:
    """The games being played on this server, by id."""

    def __init__(self, root: Root, out: Path) -> None:
        self.root = root
        self.out = out
        self._games: OrderedDict[str, WebGame] = OrderedDict()
        self._lock = threading.Lock()

    def new(self, options: Mapping[str, Any]) -> WebGame:
        """A new game from the page's form: ``agent``, ``colour`` (blue: the human moves first),
        ``budget`` (device or iterations), ``seconds``, ``iterations``, ``seed``.

        Raises:
            RequestError: 400 an unknown agent or a bad budget (the config check's line); 422 the
                play folder cannot be written.
        """
        from boopexp.agents.budget import Budget
        from boopexp.agents.specs import DEFAULT_PRESET, resolve_agent
        from boopexp.engine.state import BLUE, RED
        from boopexp.interfaces import play_store

        colour = options.get("colour", "blue")
        mode = options.get("budget", "device")
        if colour not in ("blue", "red"):
            raise RequestError(400, f"colour {colour!r}: choose blue (you move first) or red")
        if mode not in MODES:
            raise RequestError(400, f"budget {mode!r}: choose one of {', '.join(MODES)}")
        try:
            seed = int(options.get("seed", 0))
            spec = resolve_agent(str(options.get("agent", "mcts-co")), DEFAULT_PRESET)
            budget = Budget.from_mapping({"mode": mode, "seconds": float(options.get("seconds", 1.0))}
                                         if mode == "device" else
                                         {"mode": mode, "iterations": int(options.get("iterations", 80))})
        except (ConfigError, ValueError, TypeError) as exc:
            raise RequestError(400, str(exc)) from None
        try:
            play_store.check_out(self.out)
            session = play_store.new_session(spec, BLUE if colour == "blue" else RED, budget, DEFAULT_PRESET, seed,
                                             self.out)
        except BoopError as exc:
            raise RequestError(422, str(exc)) from None
        game = WebGame(secrets.token_hex(8), session, self.out)
        with self._lock:
            self._games[game.id] = game
            while len(self._games) > MAX_GAMES:
                self._games.popitem(last=False)
        self._agent_if_its_turn(game)
        return game

    def get(self, game_id: str) -> WebGame:
        """Raises: RequestError 404 no such game (the server forgets games when it stops)."""
        with self._lock:
            game = self._games.get(game_id)
        if game is None:
            raise RequestError(404, f"no game {game_id!r} on this server (games last while the server runs); "
                                    "start one at /play")
        return game

    # --- moves ------------------------------------------------------------------------------

    def move(self, game: WebGame, text: str, choice: int | None) -> None:
        """Play the human's move (``c3``, ``C3``); ``choice`` indexes the promotion groups when the
        move lines up several.

        Raises:
            RequestError: 409 the agent is thinking or the game is over, or a choice is needed
                (``choices`` then lists the groups); 400 not a move, or not legal here.
        """
        with game.lock:
            self._idle(game)
            session = game.session
            try:
                move, group = session.parse(text)
                choices = session.promotion_choices(move)
                if group is not None:
                    choice = choices.index(group)
                if choices and choice is None:
                    raise ChoiceNeeded(choices)
                session.play_human(move, choice)
            except ChoiceNeeded:
                raise
            except BoopError as exc:
                raise RequestError(400 if not session.over else 409, str(exc)) from None
            game.hint = None
        self._agent_if_its_turn(game)

    def undo(self, game: WebGame) -> None:
        """Take back the human's last move and the agent's reply.

        Raises:
            RequestError: 409 while the agent thinks, or once the game is over (it is saved).
        """
        with game.lock:
            self._idle(game)
            game.session.undo()
            game.hint = None

    def ask_hint(self, game: WebGame) -> None:
        """Have mcts-co search the position (in the agent's thread): the state shows it when done.

        Raises:
            RequestError: 409 not the human's turn.
        """
        with game.lock:
            self._idle(game)
            if not game.session.human_to_move:
                raise RequestError(409, "a hint is for your own turn")
            game.thinking = True
        threading.Thread(target=self._think, args=(game, True), daemon=True).start()

    def _idle(self, game: WebGame) -> None:
        if game.thinking:
            raise RequestError(409, "the agent is thinking; wait for its move")
        if game.session.over:
            raise RequestError(409, "the game is over (it is saved)")

    def _agent_if_its_turn(self, game: WebGame) -> None:
        with game.lock:
            if game.session.over:
                self._save(game)
                return
            if game.session.human_to_move or game.thinking:
                return
            game.thinking = True
        threading.Thread(target=self._think, args=(game, False), daemon=True).start()

    def _think(self, game: WebGame, hint: bool) -> None:
        """The agent's move (or the hint's search), off the server's threads."""
        try:
            if hint:
                move, telemetry = game.session.hint()
                game.hint = {"move": str(move), "telemetry": telemetry}
            else:
                game.session.play_agent()
        except BoopError as exc:
            game.error = str(exc)
        except Exception as exc:  # noqa: BLE001 - a crash of the agent is shown, not lost in a thread
            game.error = f"the agent failed: {type(exc).__name__}: {exc}"
        finally:
            with game.lock:
                game.thinking = False
                if game.session.over:
                    self._save(game)

    def _save(self, game: WebGame) -> None:
        """Save a finished game once (``play_store.save_or_rescue``: never lost)."""
        from boopexp.interfaces import play_store

        if game.saved is None:
            game.saved = play_store.save_or_rescue(game.session, game.out)

    # --- what the page shows ----------------------------------------------------------------

    def state(self, game: WebGame) -> dict[str, Any]:
        """The game as the page draws it: the position and the last ply (as the viewer's), whose
        turn, the legal moves, the plies so far, the hint, the result and where it was saved."""
        from boopexp.game.position import Position
        from boopexp.interfaces.web.game import ply_view, position_view

        with game.lock:
            session = game.session
            last = session.last
            state = session.state
            over, human = session.over, session.human_to_move and not game.thinking
            out: dict[str, Any] = {
                "id": game.id, "agent": session.agent.name, "human": "blue" if session.human_colour < 0 else "red",
                "moves": list(session.moves), "position": position_view(state), "thinking": game.thinking,
                "human_to_move": human, "over": over, "error": game.error, "hint": game.hint,
                "last": ply_view(last) if last is not None else None,
                "telemetry": dict(last.telemetry) if last is not None else None,
                "legal": [str(m) for m in Position(state).legal_moves()] if human else [],
            }
            if over:
                winner = session.winner
                out["result"] = ("no winner (ply limit)" if winner == 0
                                 else "you win" if winner == session.human_colour else f"{session.agent.name} wins")
            saved = game.saved
        if saved is not None:
            out["saved"] = self._where(saved)
        return out

    def _where(self, saved: Saved) -> dict[str, Any]:
        record = saved.record
        where: dict[str, Any] = {"pairing": record["pairing"], "index": record["game_index"],
                                 "config_hash": record["config_hash"], "problem": saved.problem,
                                 "folder": None if saved.folder is None else str(saved.folder)}
        if saved.folder is not None and self.root.holds(saved.folder) and saved.folder.resolve() != self.root.path:
            where["store"] = self.root.relative(saved.folder.resolve())
        return where


class ChoiceNeeded(RequestError):
    """The human's move lines up several groups: which one to promote (``choices``, as squares)."""

    def __init__(self, choices: list[tuple[int, ...]]) -> None:
        from boopexp.game import notation

        self.choices = [[notation.square_name(q) for q in group] for group in choices]
        named = "; ".join(" ".join(g) for g in self.choices)
        super().__init__(409, f"this move lines up {len(choices)} groups: choose the one to promote ({named})")
