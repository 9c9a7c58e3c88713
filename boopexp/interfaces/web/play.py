"""Games in the browser: a ``PlaySession`` per game (of any built-in game) made and saved by
``play_store.py`` (the play folder: the one place ``serve`` writes) against a built-in agent or an
agent of a ``serve --config`` config, with that config's settings (``PlaySettings.of_config``), the
body checked by the CLI's checks (``Budget``, ``check_seed``), the agent thinking in an
interruptible thread of its own (``plugins.interruptible``: an abandoned game's search is stopped)
while the page polls, at most ``--max-searches`` searches at once, games forgotten by idleness,
saves one at a time; with ``web/game.py``, the only part of ``serve`` that loads the engine.

Each game is a :class:`boopexp.play.session.PlaySession` (its rules, the agent's moves, undo,
hint: the same session ``boopexp play`` runs in the terminal) made and saved by
``interfaces/play_store.py`` (the next free game of its pairing in the play folder; a finished game
saved as a normal record, one save at a time, or kept here, its state saying why, when the folder
cannot take it: never written elsewhere). The opponent is a built-in agent or
an agent of one of the configs the server was started with (``serve --config``): a variant, a
plugin, a built-in under the config's preset and params, played with the config's settings as
``boopexp play --config`` plays it (``play_store.PlaySettings.of_config``). The agent thinks in a thread of its
own, so the server answers meanwhile; the page polls the game's state. A game can be abandoned
(its search stopped), at most ``max_searches`` searches run at once, and a game is forgotten only
when over or idle (:data:`IDLE_S`). The play folder is the only place ``boopexp serve`` writes.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from boopexp import schema
from boopexp.errors import BoopError, ConfigError
from boopexp.interfaces.web.stores import RequestError, Root

if TYPE_CHECKING:
    from boopexp.agents.budget import Budget
    from boopexp.experiments.config import ExperimentConfig
    from boopexp.interfaces.play_store import PlaySettings, Saved
    from boopexp.play.session import PlaySession

#: Games kept at once. A new game beyond them forgets the game left longest among those finished
#: or idle (no request about it) for :data:`IDLE_S`, never one being played; none such: it is
#: refused (503) until one is (an unfinished game is never saved anyway).
MAX_GAMES = 64
IDLE_S = 30 * 60.0
#: Searches (agents' moves and hints) the server runs at once by default: one per core. A request
#: that would start one more is refused (503) at once, never queued.
MAX_SEARCHES = os.cpu_count() or 1
#: Seconds an abandoned game's search is given to stop (it stops within a few hundredths).
STOP_GRACE_S = 10.0
#: The budgets a browser game offers (``boopexp play``'s --budget; cpu and wall depend on the host).
MODES = ("device", "iterations")
#: Seconds a finished game's save waits for the play folder while another process holds its lock.
SAVE_WAIT_S = 5.0
#: The keys of ``POST /api/play``'s body.
NEW_GAME_KEYS = ("agent", "colour", "config", "budget", "seconds", "iterations", "seed", "game")
#: The body's keys of a built-in agent's budget, by the key of a config's ``budget:`` each is.
BUDGET_BODY_KEYS = {"mode": "budget", "seconds": "seconds", "iterations": "iterations"}


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
    #: the config whose agent the human plays (its name), or None: a built-in agent
    config: str | None = None
    #: when a request last named the game (the server's clock)
    seen: float = 0.0
    #: the search running for the game (the agent's move or a hint), to interrupt when abandoned
    search: Any = None
    #: the thread that runs and waits for it
    thread: threading.Thread | None = None
    abandoned: bool = False
    #: the engine's kernels this game's agent and its hint use are loaded (compiled if need be)
    compiled: bool = False


class Games:
    """The games being played on this server, by id."""

    def __init__(self, root: Root, out: Path, configs: Sequence[ExperimentConfig] = (),
                 max_searches: int = MAX_SEARCHES, clock: Callable[[], float] = time.monotonic) -> None:
        """Args:
            configs: the configs whose agents are offered as opponents, by their names (unique).
            max_searches: the searches run at once (``serve --max-searches``).
            clock: the clock idleness is measured on (a test's fake).
        """
        self.root = root
        self.out = out
        self.configs = {config.name: config for config in configs}
        self.max_games = MAX_GAMES
        self.max_searches = max_searches
        self.clock = clock
        self._games: OrderedDict[str, WebGame] = OrderedDict()
        self._lock = threading.Lock()
        self._searches = threading.BoundedSemaphore(max_searches)
        #: held while a game is saved or the play folder probed: the server's writes to it, one at a time
        self._writing = threading.Lock()
        self.save_wait = SAVE_WAIT_S

    def opponents(self) -> dict[str, Any]:
        """The agents a game can be played against (``/api/opponents``): ``builtin``, each
        built-in agent with its settings under the default preset; ``games``, each built-in game
        (:data:`boopexp.games.registry.GAMES`) with the built-in agents' settings under its own
        parameters (docs/games.md); ``configs``, each config with its settings (budget, preset,
        seed, ply cap, openings, game) and its agents with theirs."""
        from boopexp.agents.specs import AGENT_NAMES, DEFAULT_PRESET, resolve_agent
        from boopexp.games import registry

        configs = []
        for config in self.configs.values():
            configs.append({
                "name": config.name, "source": config.source, **config.settings.to_dict(),
                "agents": [{"name": name, "settings": config.agent(name).to_dict()} for name in config.agent_names()],
            })
        games = []
        for game in registry.GAMES:
            params = registry.get(game).paper_params()
            games.append({"name": game, "agents": [
                {"name": name, "settings": resolve_agent(name, DEFAULT_PRESET, params=params).to_dict()}
                for name in AGENT_NAMES]})
        return {"builtin": [{"name": name, "settings": resolve_agent(name, DEFAULT_PRESET).to_dict()}
                            for name in AGENT_NAMES],
                "games": games, "configs": configs}

    def new(self, options: Mapping[str, Any]) -> WebGame:
        """A new game from the page's form: ``agent``, ``colour`` (blue: the human moves first),
        and either ``game`` (a built-in game, default boop.), ``budget`` (device or iterations),
        ``seconds``, ``iterations``, ``seed`` for a built-in agent, or ``config`` (its name) for
        an agent of that config, which plays with the config's settings (its game among them).

        Raises:
            RequestError: 400 an unknown game, agent or config, a bad budget (the config check's
                line), budget options or a game beside a config, a plugin that cannot be built or
                does not play the game; 422 the play folder cannot be written.
        """
        from boopexp.game.sides import Colour
        from boopexp.interfaces import play_store

        try:
            schema.check_keys(options, NEW_GAME_KEYS)
            colour = Colour(schema.choice(options.get("colour", "blue"), "colour", ("blue", "red")))
        except ConfigError as exc:
            raise RequestError(400, str(exc)) from None
        played = self._settings(options)
        try:
            with self._writing:  # its probe makes and removes the folder: one at a time, as the saves
                play_store.check_out(self.out)
            session = play_store.new_session(played.settings, played.agents[0], colour, self.out)
        except ConfigError as exc:  # an agent that does not play the game, a start its rules refuse
            raise RequestError(400, str(exc)) from None
        except BoopError as exc:
            raise RequestError(422, str(exc)) from None
        game = WebGame(secrets.token_hex(8), session, self.out, config=options.get("config"), seen=self.clock())
        agent_first = not session.over and not session.human_to_move
        if agent_first:
            self._take_search()
        try:
            self._keep(game)
        except RequestError:
            if agent_first:
                self._searches.release()
            raise
        if agent_first:
            with game.lock:
                self._think_in_background(game, hint=False)
        return game

    def _keep(self, game: WebGame) -> None:
        """Hold ``game``, forgetting another if the server holds :attr:`max_games`: the one left
        longest of those over or idle for :data:`IDLE_S` (never one whose agent thinks).

        Raises:
            RequestError: 503 every game held is being played.
        """
        now = self.clock()
        with self._lock:
            if len(self._games) >= self.max_games:
                idle = [g for g in self._games.values()
                        if not g.thinking and (g.session.over or now - g.seen >= IDLE_S)]
                if not idle:
                    raise RequestError(503, f"this server holds {self.max_games} games, each played in the last "
                                            f"{IDLE_S / 60:g} minutes (a game is forgotten once it is over or "
                                            "idle that long, never while played); try again later")
                del self._games[min(idle, key=lambda g: g.seen).id]
            self._games[game.id] = game

    def _settings(self, options: Mapping[str, Any]) -> PlaySettings:
        """The game's settings: the config's (``config`` given), else the form's budget and seed
        under the default preset.

        Raises:
            RequestError: 400 as :meth:`new` says.
        """
        from boopexp.agents.specs import resolve_agent
        from boopexp.games import registry
        from boopexp.games.registry import DEFAULT_GAME
        from boopexp.interfaces.play_store import PlaySettings
        from boopexp.play.identity import check_seed
        from boopexp.play.settings import GameSettings

        agent = options.get("agent", "mcts-co")
        if not isinstance(agent, str):
            raise RequestError(400, f"agent {agent!r}: give the agent's name")
        if options.get("config") is not None:
            name = options["config"]
            config = self.configs.get(name) if isinstance(name, str) else None
            if config is None:
                known = ", ".join(self.configs) or "none (start serve with --config FILE)"
                raise RequestError(400, f"config {name!r} is not one of this server's configs; its configs: {known}")
            typed = [key for key in ("budget", "seconds", "iterations", "seed", "game") if key in options]
            if typed:
                raise RequestError(400, f"{', '.join(typed)}: an agent of config {name!r} plays with the config's "
                                        "budget, seed and game; leave them out")
            try:
                return PlaySettings.of_config(config, [("agent", agent, "agent", {})])
            except ConfigError as exc:
                raise RequestError(400, str(exc)) from None
        try:
            game = check_game(options.get("game", DEFAULT_GAME))
            settings = GameSettings("play", check_seed(options.get("seed", 0)), _budget(options), game=game)
            spec = resolve_agent(agent, settings.preset, params=registry.get(game).paper_params())
        except ConfigError as exc:
            raise RequestError(400, str(exc)) from None
        return PlaySettings(settings, (spec,))

    def get(self, game_id: str) -> WebGame:
        """Raises: RequestError 404 no such game (the server forgets games when it stops)."""
        with self._lock:
            game = self._games.get(game_id)
            if game is not None:
                game.seen = self.clock()
        if game is None:
            raise RequestError(404, f"no game {game_id!r} on this server (games last while the server runs, "
                                    f"and one over or idle {IDLE_S / 60:g} minutes may be forgotten); start one "
                                    "at /play")
        return game

    def abandon(self, game: WebGame) -> dict[str, Any]:
        """Forget ``game`` (unfinished: nothing is saved) and stop its search if its agent thinks,
        freeing the core: ``{"id", "abandoned": true, "search_stopped": whether a search was stopped}``.

        Raises:
            RequestError: 409 the search did not stop within :data:`STOP_GRACE_S` (it is left to end).
        """
        with self._lock:
            self._games.pop(game.id, None)
        with game.lock:
            game.abandoned = True
            search, thread = game.search, game.thread
        stopped = search is None or search.stop(STOP_GRACE_S)
        if thread is not None:
            thread.join(STOP_GRACE_S)  # its search given back (a game abandoned while compiling: once compiled)
        if not stopped or thread is not None and thread.is_alive():
            raise RequestError(409, f"game {game.id} is forgotten, but its search did not stop within "
                                    f"{STOP_GRACE_S:g} s; it ends with its move")
        return {"id": game.id, "abandoned": True, "search_stopped": search is not None}

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
            self._take_search()  # for the agent's reply: refused before the move is played if none is free
            try:
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
            except BaseException:
                self._searches.release()
                raise
            game.hint = None
            if session.over:
                self._searches.release()
                self._save(game)
            else:
                self._think_in_background(game, hint=False)

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
            self._take_search()
            self._think_in_background(game, hint=True)

    def _idle(self, game: WebGame) -> None:
        if game.thinking:
            raise RequestError(409, "the agent is thinking; wait for its move (or abandon the game)")
        if game.session.over:
            raise RequestError(409, "the game is over (it is saved)")

    def _take_search(self) -> None:
        """Take one of the server's :attr:`max_searches` searches, or refuse at once.

        Raises:
            RequestError: 503 as many searches run as the server allows.
        """
        if not self._searches.acquire(blocking=False):
            raise RequestError(503, f"this server runs {self.max_searches} searches at once (serve --max-searches), "
                                    "all busy; try again in a moment")

    def _think_in_background(self, game: WebGame, hint: bool) -> None:
        """Start the agent's move (or the hint's search) in a thread of its own, ``game.lock`` held
        and a search taken (:meth:`_take_search`; the thread gives it back)."""
        game.thinking = True
        game.thread = threading.Thread(target=self._think, args=(game, hint), daemon=True)
        game.thread.start()

    def _think(self, game: WebGame, hint: bool) -> None:
        """The agent's move (or the hint's search), off the server's threads; the search itself
        in an interruptible thread (:func:`boopexp.agents.plugins.interruptible`), which
        :meth:`abandon` stops."""
        from boopexp.agents.plugins import interruptible

        try:
            self._compile(game)  # never interrupted: numba cut while compiling is left broken
            with game.lock:
                if game.abandoned:
                    return
                game.search = interruptible(game.session.hint if hint else game.session.play_agent)
            game.search.done.wait()
            error = game.search.error
            if game.abandoned or error is not None and not isinstance(error, Exception):
                return  # stopped (abandon): nothing to show, nothing to save
            if error is not None:
                raise error
            if hint:
                move, telemetry = game.search.value
                game.hint = {"move": str(move), "telemetry": telemetry}
        except BoopError as exc:
            game.error = str(exc)
        except Exception as exc:  # noqa: BLE001 - a crash of the agent is shown, not lost in a thread
            game.error = f"the agent failed: {type(exc).__name__}: {exc}"
        finally:
            self._searches.release()
            with game.lock:
                game.thinking, game.search, game.thread = False, None, None
                if game.session.over and not game.abandoned:
                    self._save(game)

    def _compile(self, game: WebGame) -> None:
        """Load (compile, the first time on a machine) the kernels the game's agent and its hint run."""
        from boopexp.agents.specs import resolve_agent
        from boopexp.play.match import compile_kernels
        from boopexp.play.session import HINT_AGENT

        if not game.compiled:
            session = game.session
            hint = resolve_agent(HINT_AGENT, session.settings.preset, params=session.game.paper_params())
            searches = [c for c in (session.agent.mcts, hint.mcts) if c is not None]
            compile_kernels({session.agent.kind, hint.kind}, searches, session.game)
            game.compiled = True

    def _save(self, game: WebGame) -> None:
        """Save a finished game once, in the play folder only (``play_store.save_or_rescue``
        without its rescue folder: the server writes nowhere else). The server's saves are made one
        at a time (two games ending together do not find the folder locked by each other), each
        waiting up to :data:`SAVE_WAIT_S` for a lock another process holds; a game that still
        cannot be saved stays here, its state saying why."""
        from boopexp.interfaces import play_store

        with self._writing:
            if game.saved is None:
                game.saved = play_store.save_or_rescue(game.session, game.out, rescue=False, wait=self.save_wait)

    # --- what the page shows ----------------------------------------------------------------

    def state(self, game: WebGame) -> dict[str, Any]:
        """The game as the page draws it: the position and the last ply (as the viewer's), whose
        turn, the legal moves, the plies so far, the hint, the result and where it was saved."""
        from boopexp.engine.outcome import DRAW
        from boopexp.games.registry import DEFAULT_GAME
        from boopexp.interfaces.web.game import game_view, move_view, ply_view, position_view

        with game.lock:
            session = game.session
            last = session.last
            state = session.state
            over, human = session.over, session.human_to_move and not game.thinking
            if session.game.name == DEFAULT_GAME:
                position, shown = position_view(state), None if last is None else ply_view(last)
            else:
                outcome = DRAW if session.draw else 0 if session.winner is None else session.winner.code
                position = game_view(session.game, state, outcome)
                shown = None if last is None else move_view(last.ply, last.text, last.colour)
            out: dict[str, Any] = {
                "id": game.id, "game": session.game.name, "agent": session.agent.name, "config": game.config,
                "human": session.human.value,
                "moves": list(session.moves), "position": position, "thinking": game.thinking,
                "human_to_move": human, "over": over, "error": game.error, "hint": game.hint,
                "last": shown,
                "telemetry": dict(last.telemetry) if last is not None else None,
                "legal": session.legal_moves() if human else [],
            }
            if over:
                winner = session.winner
                out["result"] = ("a draw" if session.draw else "no winner (ply limit)" if winner is None
                                 else "you win" if winner is session.human else f"{session.agent.name} wins")
            saved = game.saved
        if saved is not None:
            out["saved"] = self._where(saved)
        return out

    def _where(self, saved: Saved) -> dict[str, Any]:
        record = saved.record
        where: dict[str, Any] = {"pairing": record["pairing"], "index": record["game_index"],
                                 "config_hash": record["config_hash"],
                                 "problem": None if saved.problem is None else self.root.shown(saved.problem),
                                 "folder": None if saved.folder is None else str(saved.folder)}
        if saved.folder is None:  # not saved (the play folder could not take it): the record, to keep
            where["record"] = record
        elif self.root.holds(saved.folder) and saved.folder.resolve() != self.root.path:
            where["store"] = self.root.relative(saved.folder.resolve())
        return where


def _budget(options: Mapping[str, Any]) -> Budget:
    """The budget of a new game's body (``budget``: one of :data:`MODES`, with ``seconds`` or
    ``iterations``), checked as a config's ``budget:`` mapping is (:meth:`Budget.from_mapping`:
    the keys each mode takes, the same bounds), the error naming the body's key.

    Raises:
        ConfigError: ``seconds = 1e+308 must be a positive number of seconds, at most 600``, ….
    """
    from boopexp.agents.budget import Budget

    schema.choice(options.get("budget", "device"), "budget", MODES)
    data = {field: options[key] for field, key in BUDGET_BODY_KEYS.items() if key in options}
    try:
        return Budget.from_mapping(data)
    except ConfigError as exc:
        field = (exc.key or "").removeprefix("budget.")
        allowed = exc.allowed
        if isinstance(allowed, tuple):  # the keys of the mode, as the body names them
            allowed = tuple(BUDGET_BODY_KEYS[a] for a in allowed if a in BUDGET_BODY_KEYS)
        raise exc.replace(key=BUDGET_BODY_KEYS.get(field, "budget"), allowed=allowed) from None


class ChoiceNeeded(RequestError):
    """The human's move lines up several groups: which one to promote (``choices``, as squares)."""

    def __init__(self, choices: list[tuple[int, ...]]) -> None:
        from boopexp.game import notation

        self.choices = [[notation.square_name(q) for q in group] for group in choices]
        named = "; ".join(" ".join(g) for g in self.choices)
        super().__init__(409, f"this move lines up {len(choices)} groups: choose the one to promote ({named})")


def check_game(name: Any) -> str:
    """The built-in game a request names (a form's, a URL's): only those
    (:data:`boopexp.games.registry.GAMES`; a request never imports a module of its own).

    Raises:
        ConfigError: ``game = 'chess' is not allowed; allowed: boop, connect-four``.
    """
    from boopexp.games.registry import GAMES

    return schema.choice(name, "game", tuple(GAMES))
