"""The players (MCTS, heuristics, random, alpha-beta, plugins; engines through ``btp_host``),
``play_game(task) -> record`` and ``compile_kernels`` (every kernel the games of some kinds of agent
call, called once).

One game between two agents: the pure function the runner maps over its pool.

The task and the record are the engine-free game contract (:mod:`boopexp.play.contract`).
``play_game(task)`` depends only on the task (agents, budget, seed): the same task gives the
same record on any machine in ``device`` and ``iterations`` modes, whatever the number of
workers or the order in which games finish.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import cast

import numpy as np

from boopexp.agents.budget import Budget, device_costs
from boopexp.agents.plugins import PluginFailure, PluginOutput, build_agent, call_plugin, timeout_error
from boopexp.agents.specs import AGENT_KINDS, AgentSpec, MCTSConfig
from boopexp.engine import mcts, rules
from boopexp.engine.buffers import Work, new_work
from boopexp.engine.outcome import DRAW, ONGOING
from boopexp.engine.rng import new_rng_state
from boopexp.engine.state import decode_move, encode_move, initial_state
from boopexp.errors import ConfigError, IllegalMoveError, InvalidMoveError, exception_line
from boopexp.game import notation
from boopexp.game.position import Move, Position, compile_position_api
from boopexp.game.sides import Colour, Side
from boopexp.games import registry as games
from boopexp.games.position import GamePosition, compile_game_position_api
from boopexp.games.registry import DEFAULT_GAME, Game
from boopexp.play.contract import (
    MAX_PLIES,
    OPTIONAL_TELEMETRY,
    ForfeitKind,
    ForfeitNotice,
    GameRecord,
    GameTask,
    Termination,
    build_record,
)
from boopexp.play.starts import resolve_start
from boopexp.play.throttle import resolve_throttle

__all__ = ["MAX_PLIES", "EnginePlayer", "Forfeit", "GameTask", "Player", "PluginPlayer", "apply_selected",
           "compile_kernels", "make_player", "play_game"]


class Player:
    """An agent in a game: chooses moves and promotions with its own generator."""

    promotion = rules.PROMO_HEURISTIC  # AGENTS.md §B.11: every AI but the random one
    #: a one-element int64 array another thread may set non-zero to end a search early (btp's
    #: ``stop``, :mod:`boopexp.play.btp`): the searching agents answer their best move so far;
    #: the others answer at once anyway (a plugin's move is bounded by its ``move_timeout_s``)
    stop: np.ndarray | None = None

    def __init__(self, spec: AgentSpec, budget: Budget, rng: np.ndarray, costs: np.ndarray, throttle: float,
                 game: Game):
        self.spec = spec
        #: the budget of the agent's moves but its first (the config's, scaled by the agent's own
        #: ``budget``: :func:`make_player`), and of its first move (:meth:`move_budget`)
        self.budget = budget
        self.first_budget = budget
        #: the moves this player has chosen in its game
        self.moves_chosen = 0
        self.rng = rng
        self.costs = costs
        self.throttle = throttle
        #: the search kernels bound to the game played (:meth:`boopexp.games.registry.Game.engine`)
        self.kernels: ModuleType = game.engine()
        self.work = self.kernels.new_work()

    def select(self, st: np.ndarray) -> tuple[int, dict]:
        raise NotImplementedError

    def move_budget(self) -> Budget:
        """The budget of the move being chosen, counted as chosen: :attr:`first_budget` on the
        agent's first move of its game, :attr:`budget` on every later one (docs/runner.md, "An
        agent's own budget"). The searching players' one way to their budget."""
        self.moves_chosen += 1
        return self.first_budget if self.moves_chosen == 1 else self.budget

    def begin(self, start: str | None) -> None:
        """The game starts from the position string ``start`` (None: the empty board): an engine
        agent is told it (:mod:`boopexp.play.btp_host`); the others need not be."""

    def observe(self, move: str) -> None:
        """A move of the game was played (either side's, as recorded): an engine agent sends the
        game's moves (:mod:`boopexp.play.btp_host`); the others keep no history."""

    def close(self) -> None:
        """The game is over (or abandoned): release what the player holds (an engine's process)."""


#: boop., the game a player plays unless told another
BOOP = games.get(DEFAULT_GAME)


class MCTSPlayer(Player):
    """MCTS_GHOST (AGENTS.md §B) under the game's budget."""

    #: called with each search's tree once its move is chosen (:func:`play_game`'s ``on_tree``)
    on_tree: Callable[[mcts.Tree], None] | None = None

    def __init__(self, spec: AgentSpec, budget: Budget, rng: np.ndarray, costs: np.ndarray, throttle: float,
                 game: Game):
        super().__init__(spec, budget, rng, costs, throttle, game)
        #: ``reuse_tree``: the last search's tree, kept for the next move (one per game: a player is)
        self.kept = self.kernels.KeptTree() if spec.mcts is not None and spec.mcts.reuse_tree else None

    def select(self, st):
        return self.kernels.search(st, self.spec.mcts, self.move_budget(), self.costs, self.rng, self.work,
                                   self.throttle, self.on_tree, self.stop, self.kept)


class HeuristicsPlayer(Player):
    """Pure Heuristics (AGENTS.md §C.2): one best_move call, random fallback; no search."""

    def select(self, st):
        cpu0 = time.process_time()
        # One solver call, counted and charged as inside a search.
        acc = np.zeros(mcts.N_ACC, dtype=np.int64)
        acc_us = np.zeros(1, dtype=np.float64)
        w = self.work
        code = self.kernels.solver_best_move(st, w.mask, self.rng, w, acc, acc_us, self.costs)
        if code < 0:
            code = self.kernels.random_move(st, w.mask, self.rng, w)
        return int(code), mcts.move_telemetry(acc, float(acc_us[0]), 0, cpu0)


class RandomPlayer(Player):
    """RandomPlay (AGENTS.md §C.3): random moves, uniformly random promotion group."""

    promotion = rules.PROMO_RANDOM

    def select(self, st):
        cpu0 = time.process_time()
        code = self.kernels.random_move(st, self.work.mask, self.rng, self.work)
        return int(code), mcts.move_telemetry(np.zeros(mcts.N_ACC, dtype=np.int64), 0.0, 0, cpu0)


class AlphaBetaPlayer(Player):
    """Alpha-beta (:mod:`boopexp.engine.alphabeta`): iterative deepening under the game's budget;
    it chooses its promotions too (the group its search found best)."""

    def __init__(self, spec: AgentSpec, budget: Budget, rng: np.ndarray, costs: np.ndarray, throttle: float,
                 game: Game):
        super().__init__(spec, budget, rng, costs, throttle, game)
        self.searcher = game.engine("alphabeta")
        self.search = self.searcher.new_search()
        self.promotion = 0

    def select(self, st):
        code, group, tel = self.searcher.search(st, self.spec.alphabeta, self.move_budget(), self.costs, self.rng,
                                                self.search, self.throttle, stop=self.stop)
        self.promotion = group  # an index among the move's candidate groups (0 when there are fewer than two)
        return code, tel


class Forfeit(Exception):
    """A plugin agent lost the game by its own move: an exception, or not a legal move here.

    Attributes:
        termination: the record's ``termination`` (:data:`~boopexp.play.contract.FORFEITS`).
        error: one line: the exception, or why the move is not legal.
        move: what the agent returned, as text (illegal moves only).
    """

    def __init__(self, termination: ForfeitKind, error: str, move: str | None = None):
        super().__init__(error)
        self.termination, self.error, self.move = termination, error, move

    def notice(self, player: Side, agent: str) -> ForfeitNotice:
        """What the game's record says of this forfeit (:func:`~boopexp.play.contract.build_record`):
        ``player`` (the side of the agent named ``agent``) lost by it."""
        return cast(ForfeitNotice, {"termination": self.termination, "player": player, "agent": agent,
                                    **({"move": self.move} if self.move is not None else {}), "error": self.error})


class PluginPlayer(Player):
    """A Python agent (docs/agents.md): ``choose(position, rng)`` and optionally ``promote``.

    The agent gets an immutable position — boop.'s :class:`~boopexp.game.position.Position`, another
    game's :class:`~boopexp.games.position.GamePosition` — and its own numpy Generator; what it
    returns is checked here, and anything but a legal move ends the game as a :class:`Forfeit`.
    ``promote`` is boop.'s (a choice of promoted group); another game's follow-ups are its kernels'.
    Every call into the agent goes through :func:`boopexp.agents.plugins.call_plugin`: an exception of
    any kind (``sys.exit()`` too) or a move slower than the agent's ``move_timeout_s`` forfeits
    (``agent_error``), and what it prints is kept in :attr:`output`, not printed.
    """

    def __init__(self, spec: AgentSpec, budget: Budget, seed_seq: np.random.SeedSequence, costs: np.ndarray,
                 throttle: float, game: Game = BOOP):
        # Two streams: the kernel's (the heuristic promotion's tie-breaks) and the agent's own.
        kernel_ss, agent_ss = seed_seq.spawn(2)
        super().__init__(spec, budget, new_rng_state(kernel_ss), costs, throttle, game)
        self.game = game
        self.generator = np.random.default_rng(agent_ss)
        self.promotion = rules.PROMO_HEURISTIC
        self.agent, self.error = None, None
        #: What the agent printed in this game (its factory's prints included).
        self.output = PluginOutput()
        if game.name == DEFAULT_GAME:  # numba's first compilation is not the agent's thinking time
            compile_position_api()
        else:
            compile_game_position_api(game)
        try:
            self.agent = build_agent(spec, self.output)
        except ConfigError:
            raise  # the module cannot be imported here: a failed game (rerun retries), not a forfeit
        except PluginFailure as exc:  # the plugin's own failure: it forfeits
            self.error = exc.error

    def _call(self, fn, *args, deadline: float):
        """``fn(*args)`` through the plugin boundary, with the time left of this move."""
        try:
            return call_plugin(fn, *args, seconds=max(deadline - time.monotonic(), 1e-3), output=self.output,
                               timeout_error=timeout_error(self.spec))
        except PluginFailure as exc:
            raise Forfeit(Termination.AGENT_ERROR, exc.error) from None

    def select(self, st):
        cpu0 = time.process_time()
        if self.agent is None:
            raise Forfeit(Termination.AGENT_ERROR, self.error or "the agent could not be built")
        deadline = time.monotonic() + self.spec.move_timeout  # choose and promote: one move, one limit
        if self.game.name != DEFAULT_GAME:
            return self._select_game(st, deadline, cpu0)
        position = Position(st)
        answer = self._call(self.agent.choose, position, self.generator, deadline=deadline)
        shown = answer if isinstance(answer, str) else (str(answer) if isinstance(answer, Move) else repr(answer))
        try:
            if isinstance(answer, Move) and not all(
                isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (answer.size, answer.square)
            ):
                raise InvalidMoveError(f"{answer!r}: size and square must be integers")
            move = position.check_legal(answer)
        except (InvalidMoveError, IllegalMoveError) as exc:
            raise Forfeit(Termination.ILLEGAL_MOVE, exception_line(exc), shown) from None
        self.promotion = rules.PROMO_HEURISTIC
        promote = getattr(self.agent, "promote", None)
        if promote is not None:
            # The mover's candidate groups once the move has pushed, in the order the rules index them.
            groups = position._groups_after(move, rules.REAL)
            if len(groups) >= 2:
                index = self._call(promote, position, list(groups), self.generator, deadline=deadline)
                if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < len(groups):
                    raise Forfeit(Termination.ILLEGAL_MOVE, f"promotion index {index!r} after {move}: there are "
                                  f"{len(groups)} candidate groups", shown)
                self.promotion = int(index)
        code = encode_move(int(move.size), int(move.square))
        return code, mcts.move_telemetry(np.zeros(mcts.N_ACC, dtype=np.int64), 0.0, 0, cpu0)

    def _select_game(self, st: np.ndarray, deadline: float, cpu0: float) -> tuple[int, dict]:
        """:meth:`select` in a game other than boop.: the agent gets a :class:`GamePosition` and
        answers a move as the game writes it, or a move code."""
        assert self.agent is not None  # select forfeits first without one
        position = GamePosition(self.game, st, ONGOING)
        answer = self._call(self.agent.choose, position, self.generator, deadline=deadline)
        code = _checked(position, answer, "")
        return code, mcts.move_telemetry(np.zeros(mcts.N_ACC, dtype=np.int64), 0.0, 0, cpu0)


def _checked(position: GamePosition, answer: object, tail: str) -> int:
    """The code of an agent's ``answer`` if it is a legal move in ``position`` (a game other than
    boop.), else the :class:`Forfeit` (``illegal_move``, what it answered; ``tail`` ends the error)."""
    try:
        return position.check_legal(answer)  # type: ignore[arg-type]  # checked: anything else is refused
    except (InvalidMoveError, IllegalMoveError) as exc:
        shown = answer if isinstance(answer, str) else repr(answer)
        raise Forfeit(Termination.ILLEGAL_MOVE, exception_line(exc) + tail, shown) from None


class EnginePlayer(Player):
    """An engine agent: a program speaking btp (docs/protocol.md), one process per game
    (:class:`~boopexp.play.btp_host.EngineProcess`). Its failures and any move that is not legal
    here forfeit; the group it names is the promotion played."""

    def __init__(self, spec: AgentSpec, budget: Budget, seed_seq: np.random.SeedSequence, costs: np.ndarray,
                 throttle: float, game: Game = BOOP):
        from boopexp.play.btp_host import EngineProcess

        super().__init__(spec, budget, new_rng_state(seed_seq), costs, throttle, game)
        self.game = game
        # The seat's SeedSequence is SeedSequence(game seed).spawn(2)[seat] (play_game): the engine is
        # told that seed and seat, and seeds itself as the in-process agent would (docs/protocol.md).
        side = Side.P1 if tuple(seed_seq.spawn_key) == (0,) else Side.P2
        self.engine = EngineProcess(spec, int(cast(int, seed_seq.entropy)), side, budget, game.name)
        self.moves: list[str] = []
        self.start: str | None = None

    def begin(self, start: str | None) -> None:
        self.start = start

    def observe(self, move: str) -> None:
        self.moves.append(move)

    def close(self) -> None:
        self.engine.close()

    def select(self, st):
        from boopexp.play.btp_host import EngineFailure

        cpu0 = time.process_time()
        try:
            text = self.engine.bestmove(self.start, self.moves)
        except EngineFailure as exc:
            raise Forfeit(Termination.AGENT_ERROR, str(exc)) from None
        if self.game.name != DEFAULT_GAME:
            code = _checked(GamePosition(self.game, st, ONGOING), text, self.engine.stderr_tail())
            return code, mcts.move_telemetry(np.zeros(mcts.N_ACC, dtype=np.int64), 0.0, 0, cpu0)
        position = Position(st)
        try:
            move = position.check_legal(text)
            group = notation.parse_move(text)[2]
            groups = position._groups_after(move, rules.REAL)
            if group is None and position.promotion_choices(move):
                raise IllegalMoveError(f"{text!r} leaves a choice of promoted group and names none")
            if group is not None and group not in groups:
                raise IllegalMoveError(f"{text!r}: the group is not a candidate; candidates: "
                                       f"{[''.join(notation.square_name(q) for q in g) for g in groups]}")
        except (InvalidMoveError, IllegalMoveError) as exc:
            raise Forfeit(Termination.ILLEGAL_MOVE, f"{exc}{self.engine.stderr_tail()}", text) from None
        self.promotion = groups.index(group) if group is not None else rules.PROMO_HEURISTIC
        code = encode_move(int(move.size), int(move.square))
        return code, mcts.move_telemetry(np.zeros(mcts.N_ACC, dtype=np.int64), 0.0, 0, cpu0)


_PLAYERS = {"mcts": MCTSPlayer, "heuristics": HeuristicsPlayer, "random": RandomPlayer, "alphabeta": AlphaBetaPlayer}


def make_player(spec: AgentSpec, budget: Budget, seed_seq: np.random.SeedSequence, throttle: float = 1.0,
                game: Game = BOOP) -> Player:
    """A Player for ``spec`` drawing from its own generator seeded by ``seed_seq``, playing ``game``
    (every kind of agent plays every game: docs/games.md). ``budget`` is the game's budget of a
    move; an agent with its own (``spec.budget``, docs/runner.md) thinks under it scaled: the one
    place an agent's budget is made."""
    costs = device_costs(budget.device_profile(game.device_costs()))
    if spec.kind == "plugin":
        return PluginPlayer(spec, budget, seed_seq, costs, throttle, game)
    if spec.kind == "engine":
        return EnginePlayer(spec, budget, seed_seq, costs, throttle, game)
    first, later = spec.budget.move_budgets(budget) if spec.budget is not None else (budget, budget)
    player = _PLAYERS[spec.kind](spec, later, new_rng_state(seed_seq), costs, throttle, game)
    player.first_budget = first
    return player


def compile_kernels(kinds: Iterable[str] = AGENT_KINDS, searches: Iterable[MCTSConfig] = (),
                    game: Game = BOOP) -> None:
    """Call, in this process, every kernel the games of these kinds of agent call from Python
    (:data:`boopexp.play.warmup.KERNELS`): ``mcts`` a search's move on the first position (with
    two iterations: any parameters and budget run the same kernels), ``heuristics`` the solver's,
    ``alphabeta`` its search's, ``heuristics`` and ``random`` the random move, ``plugin`` the kernels behind
    :class:`~boopexp.game.position.Position`, and the rules that play every game's moves. numba
    compiles what its cache lacks (and fills the cache) and loads the rest, and a kind not named
    costs nothing (a game of random agents compiles no search): :mod:`boopexp.play.warmup` calls
    it before the games start.

    A search is compiled for the features its parameters switch on (:func:`boopexp.engine.mcts.feature_flags`):
    ``mcts`` compiles mcts-co's, and ``searches`` (the MCTS configurations of the games' agents) adds
    the others these need, each set of features once.

    ``game``: the game whose kernels (its bound search, :meth:`Game.engine`) are compiled; a game
    other than boop. also has its random agent's move compiled this way, and plays its moves with
    its kernels' ``apply_move`` (compiled with them, docs/games.md).
    """
    from boopexp.agents.specs import resolve_agent

    kinds = set(kinds)
    budget = Budget(mode="iterations", iterations=2)
    other = game.name != DEFAULT_GAME
    for name in ("mcts-co", "heuristics", "alphabeta", *(("random",) if other else ())):
        spec = resolve_agent(name)
        if spec.kind in kinds:
            make_player(spec, budget, np.random.SeedSequence(0), game=game).select(game.initial_state())
    if "mcts" in kinds:
        co = resolve_agent("mcts-co")
        compiled = {mcts.feature_flags(mcts.params_vector(co.mcts))}
        for cfg in searches:
            flags = mcts.feature_flags(mcts.params_vector(cfg))
            if flags not in compiled:
                compiled.add(flags)
                player = make_player(dataclasses.replace(co, mcts=cfg), budget, np.random.SeedSequence(0), game=game)
                player.select(game.initial_state())
    if other:
        return
    w = new_work()
    if kinds & {"heuristics", "random"}:  # the random agent's move, the heuristics' fallback
        rules.random_move(initial_state(), w.mask, new_rng_state(0), w.squares)
    rules.apply_move_inplace(initial_state(), 1, 14, rules.REAL, rules.PROMO_HEURISTIC, new_rng_state(0), w.groups,
                             w.scores, w.ties)
    if "plugin" in kinds:
        compile_position_api()


def play_game(task: GameTask, on_ply=None, on_tree: Callable[[mcts.Tree], None] | None = None) -> GameRecord:
    """Play one game and return its record (docs/architecture.md).

    Args:
        task: the game's identity and settings (and its start position, if not the empty board).
        on_ply: optional callback ``on_ply(ply, state, move_text, winner)`` (e.g. ``--show``).
        on_tree: optional callback given each MCTS search's tree once its move is chosen, before
            the move is played (:func:`boopexp.play.replay.root_search`).
    """
    cpu0 = time.process_time()
    throttle = 1.0
    if task.budget.mode == "cpu":
        throttle = resolve_throttle(task.budget.throttle)
    ss = np.random.SeedSequence(task.seed)
    p1_ss, p2_ss = ss.spawn(2)
    game = games.get(task.game, task.game_directory)
    players = (make_player(task.p1, task.budget, p1_ss, throttle, game),
               make_player(task.p2, task.budget, p2_ss, throttle, game))
    for player in players:
        if isinstance(player, MCTSPlayer):
            player.on_tree = on_tree
    # A config's openings (or --start) give the start: a suite line or a draw until resolved
    # here, a position string in the record. The seeds do not depend on it.
    start = resolve_start(task.start, play_game, task.game, task.game_options)
    if start is None and game.random_start:
        # a game whose start is random (docs/games.md) draws it from the game's seed and records it
        start = game.position_string(game.initial_state(task.seed, task.game_options))
    if start != task.start:
        task = dataclasses.replace(task, start=start)
    st = game.start_state(start, options=task.game_options)
    try:
        for player in players:
            player.begin(start)
        moves, telemetry, winner, forfeit = _play(task, game, players, on_ply, st)
    finally:  # an engine's process ends with its game, however the game ended
        for player in players:
            player.close()
    telemetry = _same_fields(telemetry)
    win_side = None if winner in (ONGOING, DRAW) else Colour.of(winner).side
    if forfeit is not None:  # a decided game: the opponent of the forfeiting agent wins
        win_side = forfeit["player"].opponent
    return build_record(task, win_side, moves, telemetry, time.process_time() - cpu0, forfeit=forfeit,
                        plugin_output=plugin_output(players), draw=winner == DRAW and forfeit is None)


def _play(task: GameTask, game: Game, players: tuple[Player, Player], on_ply,
          st: np.ndarray) -> tuple[list[str], list[dict], int, ForfeitNotice | None]:
    """The moves of ``task``'s game between ``players`` (:func:`play_game`): its moves, their
    telemetry, the outcome (0: none, a colour, :data:`~boopexp.engine.outcome.DRAW`) and the
    forfeit, if any; ``st`` is the start."""
    w = players[0].kernels.new_work()
    moves: list[str] = []
    telemetry: list[dict] = []
    winner = 0
    forfeit: ForfeitNotice | None = None
    cap = task.ply_cap
    while winner == 0 and len(moves) < cap:
        side = Colour.of(game.to_move(st)).side
        player = players[side.seat]
        try:
            code, tel = player.select(st)
        except Forfeit as exc:
            forfeit = exc.notice(side, player.spec.name)
            break
        # An invariant, not a user error: a running game always has a legal move, and every
        # built-in player returns one (the heuristics player falls back to a random move).
        assert code >= 0, f"agent {player.spec.name} found no move in {game.position_string(st)!r}"
        st = st.copy()
        winner, text = apply_selected(st, code, player, w, game)
        moves.append(text)
        for each in players:
            each.observe(text)
        tel = {"ply": len(moves), "player": side, "agent": player.spec.name, **tel}
        telemetry.append(tel)
        if on_ply is not None:
            on_ply(len(moves), st, text, winner)
    return moves, telemetry, winner, forfeit


def apply_selected(st: np.ndarray, code: int, player: Player, w: Work, game: Game = BOOP) -> tuple[int, str]:
    """Play ``player``'s selected move ``code`` on ``st`` in place (boop.: REAL rules, the player's
    promotion drawn from its generator) and return the outcome (0: none, the winning colour,
    :data:`~boopexp.engine.outcome.DRAW`) and the move as the record writes it (boop.: the chosen
    group named when there were two or more): the one way a selected move is played, in
    :func:`play_game` and by a btp engine (:mod:`boopexp.play.btp`). Another game's move: its
    kernels' ``apply_move`` (docs/games.md)."""
    if game.name != DEFAULT_GAME:
        outcome, _ = player.kernels.apply_move(st, code, player.rng, w)
        return int(outcome), game.move_text(code)
    size, sq = decode_move(code)
    winner, n, chosen = rules.apply_move_inplace(st, size, sq, rules.REAL, player.promotion, player.rng,
                                                 w.groups, w.scores, w.ties)
    group = tuple(int(q) for q in w.groups[chosen] if q >= 0) if n >= 2 else None
    return winner, notation.format_move(size, sq, group)


def plugin_output(players: Sequence[Player | None]) -> dict[str, str]:
    """What each plugin player printed, by side (``{"p1": text}``); sides that printed nothing
    are left out. Players in p1, p2 order."""
    out = {}
    for side, player in zip(Side, players):
        text = player.output.text() if isinstance(player, PluginPlayer) else ""
        if text:
            out[side.value] = text
    return out


def _same_fields(telemetry: list[dict]) -> list[dict]:
    """Every move with the same telemetry fields: when one agent reports the two-stage checks
    (``lookahead_*``, an agent with ``co_lookahead``), its proofs or prior evaluations
    (``solver``, ``prior``) or an alpha-beta search (``search_*``, ``tt_hits``), the other's moves
    report zeros, so the record stores its telemetry column-wise
    (:data:`boopexp.play.contract.OPTIONAL_TELEMETRY`). Games without such an agent are unchanged."""
    extra = [k for k in OPTIONAL_TELEMETRY if any(k in t for t in telemetry)]
    if not extra:
        return telemetry
    out = []
    for t in telemetry:
        if all(k in t for k in extra):
            out.append(t)
            continue
        row = {}
        for key, value in t.items():
            if key == "device_seconds":
                row.update({k: t.get(k, 0) for k in extra})
            row[key] = value
        out.append(row)
    return out
