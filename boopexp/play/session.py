"""A human against an agent (``PlaySession(settings, agent, human: Colour)``, ``boopexp play``'s
rules): whose move, the human's and the agent's moves, undo, the hint (seeded by the game and the
ply), when it is over, the record; ``next_game_index`` (a played game's number is unique per pairing
in its store).

:class:`PlaySession` holds the game (any built-in, variant or plugin agent that
:func:`boopexp.play.match.make_player` builds): whose move it is, the human's moves checked and
played (with their promotion choice), the agent's, full moves taken back, the hint, when the game
is over, and the finished game's record (the human is agent ``human``; docs/architecture.md).
Where the game is saved is the interfaces' business (``interfaces/play_store.py``: the store is a
layer above this one), as is the dialogue (``interfaces/interactive.py``).

Every random choice of the agent draws from a generator seeded from the game's identity, as in
:func:`boopexp.play.match.play_game`; a take-back does not rewind it (the agent may answer differently
the second time, as a human opponent could). A hint draws from a generator of its own, seeded from
the game's identity and the ply: the same position at the same ply gets the same hint, however many
hints were asked before.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from boopexp.agents.specs import AgentSpec, resolve_agent
from boopexp.engine import mcts, rules
from boopexp.engine.luts import PUSH_T, PUSH_V
from boopexp.engine.outcome import DRAW
from boopexp.engine.rng import new_rng_state
from boopexp.engine.state import MOVE_NUMBER, TO_MOVE, decode_move
from boopexp.errors import BoopError, IllegalMoveError
from boopexp.game import notation
from boopexp.game.position import Move, Position
from boopexp.game.sides import Colour
from boopexp.games import registry as games
from boopexp.games.position import GamePosition
from boopexp.games.registry import DEFAULT_GAME
from boopexp.play.contract import ForfeitNotice, GameRecord, build_record
from boopexp.play.match import Forfeit, make_player, play_game, plugin_output
from boopexp.play.settings import GameSettings
from boopexp.play.starts import checked_start

#: The human's agent description in game records (``p1_spec`` / ``p2_spec``).
HUMAN = AgentSpec(name="human", kind="human")
#: The agent whose move ``hint`` shows.
HINT_AGENT = "mcts-co"
#: The experiment name of played games in their records.
EXPERIMENT = "play"
#: The child of the game's SeedSequence whose children (one per ply) seed the hints: children 0
#: and 1 are the ones play_game gives p1 and p2.
_HINT_CHILD = 2
#: The child that seeds the human's moves' own draws in a game other than boop.
_HUMAN_CHILD = 3


@dataclass(frozen=True)
class PlyView:
    """One ply as the board display needs it.

    Attributes:
        ply: 1-based ply number. colour: the mover's. who: ``"you"`` or the agent's name.
        text: the move in the record's notation (``c3``, ``C3``, ``c4:a4b4c4``).
        square: where the piece was placed.
        pushes: ``(from, to)`` squares of every pushed piece; ``to`` is None when it left the board.
        promoted: the squares of the group removed and promoted (empty when none).
        winner: the colour that has won after this ply, or None.
        telemetry: the ply's telemetry entry (docs/architecture.md).
        draw: the game ended drawn with this ply (a game with draws: Connect Four's full board).

    In a game other than boop. ``square`` is the move's code and ``pushes`` and ``promoted`` are
    empty (the board is the game's ``board_text``).
    """

    ply: int
    colour: Colour
    who: str
    text: str
    square: int
    pushes: tuple[tuple[int, int | None], ...]
    promoted: tuple[int, ...]
    winner: Colour | None
    telemetry: dict
    draw: bool = False


@dataclass
class _Ply:
    view: PlyView
    before: np.ndarray
    after: np.ndarray


def pushes_of(before: np.ndarray, size: int, square: int) -> tuple[np.ndarray, tuple[tuple[int, int | None], ...]]:
    """The board once ``size`` is placed on ``square`` and has pushed (before any promotion), and
    the pushes as ``(from, to-or-None)``: read off the engine's own push, not re-derived."""
    after = before.copy()
    rules.place_and_push(after, size, square)
    moved = []
    for k in range(8):
        v = int(PUSH_V[square, k])
        if v >= 0 and before[v] != 0 and after[v] == 0:
            t = int(PUSH_T[square, k])
            moved.append((v, t if t >= 0 else None))
    return after, tuple(moved)


def session_players(agent: AgentSpec, human: Colour) -> tuple[AgentSpec, AgentSpec]:
    """The pairing's ``(p1, p2)`` of a human's game against ``agent``: the human is Blue's p1 or Red's p2."""
    return (HUMAN, agent) if human is Colour.BLUE else (agent, HUMAN)


def next_game_index(records: Iterable[Mapping], pairing: str) -> int:
    """The first game index of ``pairing`` that none of ``records`` holds, under any settings: a
    played game's number is unique in its store, so that ``replay --pairing P --game N`` finds it
    without a settings hash (its seed still derives from its own settings hash and this index)."""
    taken = {r["game_index"] for r in records if r["pairing"] == pairing}
    return next(i for i in itertools.count() if i not in taken)


class PlaySession:
    """One game between a human and an agent.

    Args:
        settings: what the game is played with: the agent's budget per move (also the hint's), the
            preset the agents were resolved under (recorded, and used for the hint), the seed (the
            game's seed derives from its settings hash and ``game_index``), the ply cap and the
            openings (hashed and recorded as a run's: docs/openings.md). Its experiment's name is
            not the record's: a played game's is :data:`EXPERIMENT`.
        agent: the opponent's resolved AgentSpec.
        human: the human's colour: Blue moves first (is p1), Red second.
        game_index: the game's index within its pairing in the store.
        throttle: cpu mode only: host CPU seconds per emulated second.
        start: where the game starts (``--start``: a position string or a move list, checked
            against the rules here); None: game ``game_index``'s position of the openings, or the
            empty board without them (docs/openings.md).

    Raises:
        ConfigError: a start the rules refuse, or an index the openings have no position for.
    """

    def __init__(self, settings: GameSettings, agent: AgentSpec, human: Colour = Colour.BLUE, game_index: int = 0,
                 throttle: float = 1.0, start: str | None = None):
        self.human = Colour(human)  # ValueError: not a colour
        self.settings = settings.replace(experiment=EXPERIMENT)
        self.agent = agent
        #: the game played (:attr:`GameSettings.game`): boop.'s rules here, another's through its contract
        self.game = games.get(self.settings.game)
        position = checked_start(self.settings.start(game_index) if start is None else start, play_game,
                                 game=self.game.name)
        self.task = self.settings.task(*session_players(agent, self.human), game_index, start=position)
        self._start = _frozen(self.game.start_state(position, options=settings.game_options))
        # Children 0 and 1 are the ones play_game gives p1 and p2.
        ss = np.random.SeedSequence(self.task.seed).spawn(2)
        self._player = make_player(agent, settings.budget, ss[self.human.side.opponent.seat], throttle, self.game)
        # Another game's move may draw (its apply_move's follow-ups): the human's from a generator
        # of their own (child 3; 2 seeds the hints), so they never change the agent's random choices.
        self._human_rng = new_rng_state(np.random.SeedSequence(self.task.seed, spawn_key=(_HUMAN_CHILD,)))
        self._hints: dict[tuple[str, ...], tuple[Move | str, dict]] = {}
        self._throttle = throttle
        self._plies: list[_Ply] = []
        self._work = self._player.kernels.new_work()
        self._cpu0 = time.process_time()
        #: why the plugin agent forfeited (the record's ``forfeit``), or None
        self.forfeit: ForfeitNotice | None = None
        self.undos = 0
        self.hints = 0

    # state ------------------------------------------------------------------------------------
    @property
    def state(self) -> np.ndarray:
        """The current position (read-only copy semantics: never written once played)."""
        return self._plies[-1].after if self._plies else self._start

    @property
    def boop(self) -> bool:
        """The game is boop. (pushes, pools, promotion groups), not another game of the layer."""
        return self.game.name == DEFAULT_GAME

    def position(self) -> Position | GamePosition:
        """The current position as its game's position API: boop.'s :class:`Position`, another game's
        :class:`GamePosition` (its legal moves, its board)."""
        if self.boop:
            return Position(self.state)
        last = self.last  # its outcome is the last move's; a start's is read off its state
        outcome = None if last is None else DRAW if last.draw else 0 if last.winner is None else last.winner.code
        return GamePosition(self.game, self.state, outcome)

    @property
    def ply(self) -> int:
        """The number of the next ply (the position's plies played + 1: a start's count included)."""
        return int(self.state[MOVE_NUMBER]) + 1 if self.boop else self.position().move_number + 1

    @property
    def draw(self) -> bool:
        """The game's rules ended it drawn (never in boop.)."""
        return self.forfeit is None and bool(self._plies) and self._plies[-1].view.draw

    @property
    def winner(self) -> Colour | None:
        """None while the game goes on (or ended at the ply cap), else the winner's colour (the
        human's, when a plugin agent forfeited)."""
        if self.forfeit is not None:
            return self.human
        return self._plies[-1].view.winner if self._plies else None

    @property
    def over(self) -> bool:
        """True once someone has won, the game is drawn or the ply cap (``task.ply_cap``) is reached."""
        return self.winner is not None or self.draw or len(self._plies) >= self.task.ply_cap

    @property
    def human_to_move(self) -> bool:
        return not self.over and Colour.of(self.game.to_move(self.state)) is self.human

    @property
    def last(self) -> PlyView | None:
        return self._plies[-1].view if self._plies else None

    @property
    def moves(self) -> list[str]:
        return [p.view.text for p in self._plies]

    def legal_moves(self) -> list[str]:
        """The legal moves of the side to move, as the human types them (boop.: ``c3``, ``C3``;
        another game: its notation)."""
        return [str(m) for m in self.position().legal_moves()]

    # the human's moves ----------------------------------------------------------------------
    def parse(self, text: str) -> tuple[Move | int, tuple[int, ...] | None]:
        """The human's move (and a ``:group`` suffix, if given), checked against the rules; in
        another game, its code (read in the game's notation) and None.

        Raises:
            InvalidMoveError: not a move string. IllegalMoveError: the rules forbid it here, or
            the suffix names a group that is not a candidate.
        """
        if not self.boop:
            return self.game_position().check_legal(text), None
        size, square, group = notation.parse_move(text)
        move = Position(self.state).check_legal(Move(size, square))
        if group is not None:
            choices = self.promotion_choices(move)
            if group not in choices:
                named = ", ".join(notation.group_name(g) for g in choices) or "none"
                raise IllegalMoveError(f"{notation.group_name(group)} is not a group you can promote after {move}; "
                                       f"candidates: {named}")
        return move, group

    def promotion_choices(self, move: Move | int) -> list[tuple[int, ...]]:
        """The groups the human must choose among after ``move`` (:meth:`Position.promotion_choices`;
        none in another game: its follow-ups are its kernels')."""
        if not self.boop:
            return []
        assert isinstance(move, Move)
        return Position(self.state).promotion_choices(move)

    def play_human(self, move: Move | int | str, choice: int | None = None) -> PlyView:
        """Play the human's move; ``choice`` indexes :meth:`promotion_choices` (needed when it is
        not empty). In another game, a move code or its text.

        Raises:
            IllegalMoveError: not the human's turn, an illegal move, or a missing or bad choice.
        """
        if not self.human_to_move:
            raise IllegalMoveError("it is not your turn" if not self.over else "the game is over")
        if not self.boop:
            assert not isinstance(move, Move)  # boop.'s
            cpu0 = time.process_time()
            view = self._apply_code(self.game_position().check_legal(move), self._human_rng, "you")
            view.telemetry.update(mcts.move_telemetry(np.zeros(mcts.N_ACC, dtype=np.int64), 0.0, 0, cpu0))
            return view
        assert not isinstance(move, int)  # another game's
        move = Position(self.state).check_legal(move)
        choices = self.promotion_choices(move)
        if choices and (choice is None or not 0 <= choice < len(choices)):
            raise IllegalMoveError(f"{move} lines up {len(choices)} groups: choose one of 1..{len(choices)}")
        cpu0 = time.process_time()
        # An explicit index even for a single group: the heuristic's tie-break would draw from the
        # agent's generator, and the human's moves must not change the agent's random choices.
        promo = 0 if not choices or choice is None else int(choice)  # None: no choice was needed
        view = self._apply(move.size, move.square, promo, self._player.rng, "you")
        view.telemetry.update(mcts.move_telemetry(np.zeros(mcts.N_ACC, dtype=np.int64), 0.0, 0, cpu0))
        return view

    # the agent's moves ----------------------------------------------------------------------
    def play_agent(self) -> PlyView | None:
        """Let the agent choose and play its move; None when a plugin agent forfeits instead
        (:attr:`forfeit` says why, and the human has won).

        Raises:
            BoopError: the agent found no move (a broken plugin).
        """
        if self.over or self.human_to_move:
            raise IllegalMoveError("it is not the agent's turn" if not self.over else "the game is over")
        st = self.state
        try:
            code, tel = self._player.select(st)
        except Forfeit as exc:  # a plugin agent raised or returned an illegal move: it loses
            self.forfeit = exc.notice(self.human.side.opponent, self.agent.name)
            return None
        if code < 0:
            raise BoopError(f"agent {self.agent.name} found no move in {self.game.position_string(st)!r}")
        if not self.boop:
            view = self._apply_code(code, self._player.rng, self.agent.name)
        else:
            view = self._apply(*decode_move(code), self._player.promotion, self._player.rng, self.agent.name)
        view.telemetry.update(tel)
        return view

    def hint(self) -> tuple[Move | str, dict]:
        """What mcts-co (this session's preset and budget) would play here, and its telemetry (in
        another game, the move as the game writes it).

        The hint searches with a generator of its own, seeded from the game's seed and the ply
        (the SeedSequence child ``(2, ply)``; 0 and 1 are the players'): asking for one never
        changes the agent's play, and the same position at the same ply gets the same hint,
        searched once (the answer is kept until the game moves on; device and iterations
        budgets: any number of sessions agree).
        """
        if not self.human_to_move:
            raise IllegalMoveError("a hint is for your own turn")
        self.hints += 1
        key = tuple(self.moves)
        if key not in self._hints:
            spec = resolve_agent(HINT_AGENT, self.settings.preset, params=self.game.paper_params())
            seed = np.random.SeedSequence(self.task.seed, spawn_key=(_HINT_CHILD, len(self._plies)))
            player = make_player(spec, self.settings.budget, seed, self._throttle, self.game)
            code, tel = player.select(self.state.copy())
            move = Move.from_code(code) if self.boop else self.game.move_text(code)
            self._hints = {key: (move, tel)}  # only the position on the board
        return self._hints[key]

    def undo(self) -> int:
        """Take back the last full move: plies back to the human's previous turn. Returns how many
        plies were taken back (0 when the human has not moved yet)."""
        plies = self._plies
        mine = [i for i, p in enumerate(plies) if p.view.colour is self.human]
        if not mine:
            return 0
        n = len(plies) - mine[-1]
        del plies[mine[-1]:]
        self.undos += 1
        return n

    def _apply(self, size: int, square: int, promo: int, rng: np.ndarray, who: str) -> PlyView:
        before = self.state
        mover = Colour.of(int(before[TO_MOVE]))
        _, pushes = pushes_of(before, size, square)
        after = before.copy()
        winner, n, chosen = rules.apply_move_inplace(after, size, square, rules.REAL, promo, rng,
                                                     self._work.groups, self._work.scores, self._work.ties)
        group = tuple(int(q) for q in self._work.groups[chosen] if q >= 0) if chosen >= 0 else ()
        text = notation.format_move(size, square, group if n >= 2 else None)
        after.setflags(write=False)
        ply = len(self._plies) + 1
        name = HUMAN.name if who == "you" else self.agent.name
        view = PlyView(ply, mover, who, text, square, pushes, group, None if winner == 0 else Colour.of(int(winner)),
                       {"ply": ply, "player": mover.side, "agent": name})
        self._plies.append(_Ply(view, before, after))
        return view

    def game_position(self) -> GamePosition:
        """:meth:`position` in a game other than boop."""
        position = self.position()
        assert isinstance(position, GamePosition)  # a game other than boop.
        return position

    def _apply_code(self, code: int, rng: np.ndarray, who: str) -> PlyView:
        """Play move ``code`` of a game other than boop. with its kernels (:func:`apply_selected`'s
        way), drawing from ``rng``."""
        before = self.state
        mover = Colour.of(self.game.to_move(before))
        after = before.copy()
        outcome, _ = self._player.kernels.apply_move(after, code, rng, self._work)
        after.setflags(write=False)
        ply = len(self._plies) + 1
        name = HUMAN.name if who == "you" else self.agent.name
        view = PlyView(ply, mover, who, self.game.move_text(code), code, (), (),
                       Colour.of(int(outcome)) if outcome in (-1, 1) else None,
                       {"ply": ply, "player": mover.side, "agent": name}, draw=outcome == DRAW)
        self._plies.append(_Ply(view, before, after))
        return view

    # the record -----------------------------------------------------------------------------
    def record(self) -> GameRecord:
        """The finished game's record (docs/architecture.md), the human as agent ``human``."""
        side = None if self.winner is None else self.winner.side
        telemetry = [dict(p.view.telemetry) for p in self._plies]
        players = (None, self._player) if self.human is Colour.BLUE else (self._player, None)
        return build_record(self.task, side, self.moves, telemetry, time.process_time() - self._cpu0,
                            forfeit=self.forfeit, plugin_output=plugin_output(players), draw=self.draw)


def _frozen(st: np.ndarray) -> np.ndarray:
    st.setflags(write=False)
    return st
