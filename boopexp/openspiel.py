"""Boop. for OpenSpiel and OpenSpiel's MCTSBot as a plugin agent (optional extra; ``import
boopexp.openspiel``).

``import boopexp.openspiel`` registers ``python_boop`` with :mod:`pyspiel` (the optional extra
``boopexp[openspiel]``), so that OpenSpiel's algorithms and tools can play boop. with the REAL
rules of :mod:`boopexp.engine.rules` (RULES.md), and :func:`mcts_bot` makes OpenSpiel's Python
``MCTSBot`` a boopexp plugin agent::

    agents: {os-mcts: {plugin: "boopexp.openspiel:mcts_bot", max_simulations: 80, uct_c: 0.3}}

The game, as OpenSpiel sees it:

* two players, 0 = Blue (moves first, boopexp's p1) and 1 = Red; sequential, deterministic,
  perfect information, zero-sum, terminal rewards +1 / -1;
* actions 0..71 place a piece: boopexp's move code ``(size - 1) * 36 + square`` (``Move.code``), written in the
  project's notation (``c3`` small, ``C3`` large);
* when a placement lines up two or more candidate groups (RULES.md §5-6), the same player takes a
  further decision, the group to promote: action ``72 + square`` for a single piece (written
  ``promote d6``), ``108 + line`` for a line of three (``promote a4b4c4``; lines numbered in the
  engine's anchor order, :data:`LINES`). A single candidate group is promoted without a decision,
  as in the app;
* boop. has no draw rule; the engine's safety net (:data:`boopexp.play.contract.MAX_PLIES` plies) ends a
  game with returns 0, 0, as ``match.play_game`` records ``ply_limit``;
* the observation tensor (shape :data:`OBSERVATION_SHAPE`, absolute colours): planes empty /
  Blue small / Blue large / Red small / Red large over the 6x6 board (the board after the push
  while a promotion is pending), then the four pool counts and the two large counters divided by
  8, the side to move (two one-hot entries) and the pending-promotion flag; the observation
  string is boopexp's board rendering, ``str(state)`` the one-line position string.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from boopexp.engine import rules
from boopexp.engine.luts import ANCHOR_LINE1, ANCHOR_LINE2
from boopexp.engine.state import (
    BLUE,
    L_BLUE,
    L_RED,
    N_SQUARES,
    POOL_BASE_BLUE,
    POOL_BASE_RED,
    POOL_LARGE_BLUE,
    POOL_LARGE_RED,
    TO_MOVE,
    decode_move,
    initial_state,
)
from boopexp.engine.state import N_MOVE_CODES as N_PLACEMENTS  # placements: boopexp's move codes
from boopexp.game import notation
from boopexp.game.position import Move, Position
from boopexp.play.contract import MAX_PLIES

SHORT_NAME = "python_boop"
#: The lines of three, in the engine's anchor order (row-major anchor, then UR, RT, DR, DN).
LINES: tuple[tuple[int, int, int], ...] = tuple(
    (sq, int(ANCHOR_LINE1[sq, k]), int(ANCHOR_LINE2[sq, k]))
    for sq in range(N_SQUARES) for k in range(4) if ANCHOR_LINE1[sq, k] >= 0
)
SINGLE_BASE = N_PLACEMENTS  # 72 + square: promote one piece
LINE_BASE = SINGLE_BASE + N_SQUARES  # 108 + line index: promote a line of three
N_ACTIONS = LINE_BASE + len(LINES)
_LINE_INDEX: dict[tuple[int, ...], int] = {line: i for i, line in enumerate(LINES)}

_PLANES = 5  # empty, Blue small, Blue large, Red small, Red large
OBSERVATION_SHAPE = (_PLANES * N_SQUARES + 4 + 2 + 2 + 1,)
_CELL_PLANE = {0: 0, -1: 1, -2: 2, 1: 3, 2: 4}

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="boop. (boopexp engine, REAL rules)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={},
)
_GAME_INFO = pyspiel.GameInfo(
    num_distinct_actions=N_ACTIONS,
    max_chance_outcomes=0,
    num_players=2,
    min_utility=-1.0,
    max_utility=1.0,
    utility_sum=0.0,
    # every ply is a placement, and at most one promotion decision follows it
    max_game_length=2 * MAX_PLIES,
)


def group_action(group: tuple[int, ...]) -> int:
    """The promotion action of a candidate group (one square or a line of three)."""
    if len(group) == 1:
        return SINGLE_BASE + group[0]
    return LINE_BASE + _LINE_INDEX[tuple(group)]


def action_group(action: int) -> tuple[int, ...]:
    """The group a promotion action promotes."""
    if SINGLE_BASE <= action < LINE_BASE:
        return (action - SINGLE_BASE,)
    return LINES[action - LINE_BASE]


def action_text(action: int) -> str:
    """``c3`` / ``C3`` for a placement, ``promote a4b4c4`` / ``promote d6`` for a promotion."""
    if 0 <= action < N_PLACEMENTS:
        return str(Move.from_code(action))
    if N_PLACEMENTS <= action < N_ACTIONS:
        return "promote " + "".join(notation.square_name(q) for q in action_group(action))
    raise ValueError(f"action {action!r} is not a boop. action (0..{N_ACTIONS - 1})")


class BoopGame(pyspiel.Game):
    """boop. for OpenSpiel, played by boopexp's compiled engine."""

    def __init__(self, params: dict | None = None):
        super().__init__(_GAME_TYPE, _GAME_INFO, params or dict())

    def new_initial_state(self) -> BoopState:
        return BoopState(self)

    def new_initial_state_at(self, position: Position) -> BoopState:
        """The OpenSpiel state of a boopexp position (its history starts there)."""
        return BoopState(self, position.state)

    def make_py_observer(self, iig_obs_type=None, params=None):
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return BoardObserver(params)
        from open_spiel.python.observation import IIGObserverForPublicInfoGame

        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class BoopState(pyspiel.State):
    """A boop. position, plus the placement whose promotion choice is pending (if any)."""

    def __init__(self, game: BoopGame, st: np.ndarray | None = None):
        super().__init__(game)
        self._st = initial_state() if st is None else np.array(st, dtype=np.int16, copy=True)
        self._pending = -1  # the placement code awaiting its promotion choice
        self._choices: list[tuple[int, ...]] = []
        self._winner = 0
        self._plies = 0

    # OpenSpiel API ----------------------------------------------------------------------------
    def current_player(self) -> int:
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return 0 if int(self._st[TO_MOVE]) == BLUE else 1

    def _legal_actions(self, player: int) -> list[int]:
        if self._pending >= 0:
            return sorted(group_action(g) for g in self._choices)
        buf = np.empty(N_PLACEMENTS, dtype=np.int64)
        n = rules.legal_move_codes(self._st, buf)
        return [int(a) for a in buf[:n]]

    def _apply_action(self, action: int) -> None:
        if self._pending >= 0:
            st, winner, _ = _engine_move(self._st, self._pending, self._choices.index(action_group(action)))
        else:
            # Group 0 stands in for the choice: when two or more groups line up, the move is
            # taken back and their list becomes the next decision (the engine's own list, in
            # its order), so one kernel call serves the common case.
            st, winner, n = _engine_move(self._st, int(action), 0)
            if n >= 2:
                self._pending = int(action)
                self._choices = [tuple(int(q) for q in _GROUPS[i] if q >= 0) for i in range(n)]
                return
        self._st, self._winner = st, int(winner)
        self._pending, self._choices = -1, []
        self._plies += 1

    def _action_to_string(self, player: int, action: int) -> str:
        return action_text(action)

    def is_terminal(self) -> bool:
        return self._winner != 0 or self._plies >= MAX_PLIES

    def returns(self) -> list[float]:
        if self._winner == 0:
            return [0.0, 0.0]
        return [1.0, -1.0] if self._winner == BLUE else [-1.0, 1.0]

    def __str__(self) -> str:
        text = notation.format_position(self._st)
        if self._pending >= 0:
            text += f" (promotion after {action_text(self._pending)})"
        return text

    # boopexp's view -------------------------------------------------------------------------
    def position(self) -> Position:
        """The boopexp position (before the pending placement, if any)."""
        return Position(self._st)

    def board_state(self) -> np.ndarray:
        """The state array as observed: the board after the push while a promotion is pending."""
        if self._pending < 0:
            return self._st
        st = self._st.copy()
        rules.place_and_push(st, *decode_move(self._pending))
        return st

# Work buffers of the engine's promotion step (read right after each call).
_GROUPS = np.empty((rules.MAX_GROUPS, 3), dtype=np.int64)
_SCORES = np.empty(rules.MAX_GROUPS, dtype=np.int64)
_TIES = np.empty(rules.MAX_GROUPS, dtype=np.int64)
_NO_RNG = np.zeros(4, dtype=np.uint64)


def _engine_move(st: np.ndarray, code: int, promo: int) -> tuple[np.ndarray, int, int]:
    """REAL move ``code`` on a copy of ``st`` promoting candidate group ``promo`` (an explicit
    index: the engine's random tie-break is never drawn). Returns (state, winner, n groups)."""
    st = st.copy()
    winner, n, _ = rules.apply_move_inplace(st, *decode_move(code), rules.REAL, promo, _NO_RNG,
                                            _GROUPS, _SCORES, _TIES)
    return st, int(winner), int(n)




class BoardObserver:
    """The observation (OpenSpiel's PyObserver interface): see the module docstring."""

    def __init__(self, params: Any):
        if params:
            raise ValueError(f"python_boop observations take no parameters; got {params}")
        self.tensor = np.zeros(OBSERVATION_SHAPE, np.float32)
        board = self.tensor[: _PLANES * N_SQUARES]
        rest = self.tensor[_PLANES * N_SQUARES:]
        self.dict = {
            "board": board.reshape(_PLANES, 6, 6),
            "pools": rest[0:4],
            "large_counters": rest[4:6],
            "to_move": rest[6:8],
            "promotion_pending": rest[8:9],
        }

    def set_from(self, state: BoopState, player: int) -> None:
        st = state.board_state()
        self.tensor.fill(0)
        board = self.dict["board"]
        for sq in range(N_SQUARES):
            board[_CELL_PLANE[int(st[sq])], sq // 6, sq % 6] = 1
        self.dict["pools"][:] = np.array([st[POOL_BASE_BLUE], st[POOL_LARGE_BLUE], st[POOL_BASE_RED],
                                          st[POOL_LARGE_RED]], dtype=np.float32) / 8
        self.dict["large_counters"][:] = np.array([st[L_BLUE], st[L_RED]], dtype=np.float32) / 8
        if not state.is_terminal():
            self.dict["to_move"][0 if int(st[TO_MOVE]) == BLUE else 1] = 1
        self.dict["promotion_pending"][0] = 1.0 if state._pending >= 0 else 0.0

    def string_from(self, state: BoopState, player: int) -> str:
        text = notation.render(state.board_state())
        if state._pending >= 0:
            text += f"\n  promotion to choose after {action_text(state._pending)}"
        return text


pyspiel.register_game(_GAME_TYPE, BoopGame)


# ----------------------------------------------------------------------------------------------
# OpenSpiel's MCTSBot as a boopexp plugin agent


class OpenSpielMCTS:
    """OpenSpiel's Python ``MCTSBot`` (UCT, random-rollout evaluator) as a boopexp agent.

    Each decision seeds the bot's RandomState from the generator boopexp passes in, so a game is a
    function of its seed like any other. The placement is chosen by :meth:`choose`; when it lines
    up several groups, :meth:`promote` asks the bot for the promotion decision of the same search
    game (the placement is remembered from :meth:`choose`).
    """

    def __init__(self, max_simulations: int = 80, uct_c: float = 0.3, solve: bool = False, n_rollouts: int = 1):
        from open_spiel.python.algorithms import mcts

        for key, value in (("max_simulations", max_simulations), ("n_rollouts", n_rollouts)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{key} = {value!r} must be a positive integer")
        if isinstance(uct_c, bool) or not isinstance(uct_c, (int, float)) or not uct_c >= 0:
            raise ValueError(f"uct_c = {uct_c!r} must be a number >= 0")
        self.game = pyspiel.load_game(SHORT_NAME)
        self.evaluator = mcts.RandomRolloutEvaluator(n_rollouts=n_rollouts)
        self.bot = mcts.MCTSBot(self.game, float(uct_c), max_simulations, self.evaluator, solve=bool(solve))
        self._last: Move | None = None

    def _seed(self, rng: np.random.Generator) -> None:
        random_state = np.random.RandomState(int(rng.integers(2**32)))
        self.bot._random_state = random_state
        self.evaluator._random_state = random_state

    def choose(self, position: Position, rng: np.random.Generator) -> Move:
        self._seed(rng)
        move = Move.from_code(self.bot.step(self.game.new_initial_state_at(position)))
        self._last = move
        return move

    def promote(self, position: Position, groups, rng: np.random.Generator) -> int:
        if self._last is None:  # not our own placement (cannot happen in a game): first group
            return 0
        state = self.game.new_initial_state_at(position)
        state.apply_action(self._last.code)
        if state.is_terminal() or state.current_player() != position_player(position):
            return 0  # the placement wins at once (or promotes its only group): nothing to decide
        self._seed(rng)
        action = self.bot.step(state)
        return [tuple(g) for g in groups].index(action_group(action))


def position_player(position: Position) -> int:
    """The OpenSpiel player to move in a boopexp position: 0 = Blue, 1 = Red."""
    return position.to_move.side.seat


def mcts_bot(max_simulations: int = 80, uct_c: float = 0.3, solve: bool = False, n_rollouts: int = 1) -> OpenSpielMCTS:
    """The plugin factory: ``plugin: "boopexp.openspiel:mcts_bot"`` with these keyword arguments.

    Args:
        max_simulations: MCTS simulations per decision (one random rollout each).
        uct_c: the UCT exploration constant.
        solve: back up proven wins and losses (MCTS-Solver); off = plain UCT.
        n_rollouts: random rollouts per evaluated leaf.
    """
    return OpenSpielMCTS(max_simulations, uct_c, solve, n_rollouts)
