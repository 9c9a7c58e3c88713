"""**The** game-neutral position, ``GamePosition`` (``boopexp.GamePosition``): a game's state, legal
moves, moves played on a copy, outcome, H and f through its contract; what a plugin agent of a game
other than boop. is handed (docs/agents.md), and how btp, ``play`` and ``replay`` walk such games.

boop.'s own position API is :class:`boopexp.game.position.Position` (pushes, pools, promotion
choices: more than the contract says); this one speaks the contract only: the legal move codes,
a move as the game writes it (``move_text``, ``parse_move``), ``apply_move`` on a copy, H, f and
the outcome. Importing it loads no numba; the game's kernels are imported at the first call that
needs them. Every random choice draws from a generator the caller passes in.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from boopexp.engine.outcome import DRAW, ONGOING
from boopexp.errors import BoopError, ConfigError, IllegalMoveError, InvalidMoveError, exception_line, show_value
from boopexp.game.sides import Colour, Side
from boopexp.games.registry import Game

__all__ = ["GameMoveResult", "GamePosition", "compile_game_position_api"]

#: how many legal moves a message lists before ``…``
LISTED_MOVES = 12


def _rng(rng: Any) -> np.ndarray:
    """A kernel generator state (:func:`boopexp.engine.rng.rng_state`; imported here: numba)."""
    from boopexp.engine.rng import rng_state

    return rng_state(rng)


def colour_code(value: Any) -> int:
    """The kernels' colour (-1 the first player, +1 the second) of ``value``: -1 / +1, a
    :class:`Colour` or its name (``blue``, ``red``), a :class:`Side` (``p1``, ``p2``).

    Raises:
        ConfigError: none of these.
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value in (-1, 1):
        return int(value)
    if isinstance(value, str):
        word = value.lower()
        if word in (Colour.BLUE, Side.P1):
            return -1
        if word in (Colour.RED, Side.P2):
            return 1
    raise ConfigError(f"{value!r} is not a side; use -1 / +1, 'p1' / 'p2' (or 'blue' / 'red')")


@dataclass(frozen=True)
class GameMoveResult:
    """What :meth:`GamePosition.play` did: the position after the move, the move (its code and
    its text) and the outcome (0 the game goes on, -1 / +1 the colour that won, ``DRAW`` 2)."""

    position: GamePosition
    code: int
    move: str
    outcome: int

    @property
    def winner(self) -> Colour | None:
        """The colour that won with this move, or None."""
        return Colour.of(self.outcome) if self.outcome in (-1, 1) else None

    @property
    def draw(self) -> bool:
        return self.outcome == DRAW


class GamePosition:
    """An immutable position of ``game``: its state (copied, read-only) and its outcome.

    Args:
        game: the game (:func:`boopexp.games.registry.get`).
        state: a state of the game (default: its start); copied.
        outcome: the outcome the move that reached ``state`` gave (``play`` passes it); None:
            read off the state (:attr:`outcome`).
    """

    __slots__ = ("game", "_st", "_outcome")

    def __init__(self, game: Game, state: np.ndarray | None = None, outcome: int | None = None):
        self.game = game
        st = np.array(game.initial_state() if state is None else state, copy=True)
        st.setflags(write=False)
        self._st = st
        self._outcome = outcome

    @classmethod
    def from_string(cls, game: Game, text: str) -> GamePosition:
        """The position of the game's one-line position string (its ``parse_position``)."""
        return cls(game, game.parse_position(text))

    # text -------------------------------------------------------------------------------------
    def to_string(self) -> str:
        return self.game.position_string(self._st)

    def render(self) -> str:
        """The game's terminal board (``board_text``), saying who has won once a side has."""
        outcome = self.outcome
        return self.game.board_text(self._st, outcome if outcome in (-1, 1) else 0)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"GamePosition({self.game.name!r}, {self.to_string()!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, GamePosition) and other.game.name == self.game.name
                and self._st.tobytes() == other._st.tobytes())

    def __hash__(self) -> int:
        return hash((self.game.name, self._st.tobytes()))

    # accessors --------------------------------------------------------------------------------
    @property
    def kernels(self) -> ModuleType:
        """The game's compiled kernels (imports numba)."""
        return self.game.kernels()

    @property
    def state(self) -> np.ndarray:
        """The read-only state array (the game's layout)."""
        return self._st

    @property
    def to_move(self) -> Colour:
        """The side to move as a colour (``blue`` the first player, as records write it)."""
        return Colour.of(self.game.to_move(self._st))

    @property
    def side(self) -> Side:
        """The side to move: ``p1`` (moves first) or ``p2``."""
        return self.to_move.side

    @property
    def move_number(self) -> int:
        """The plies played (the state's ``MOVE_NUMBER``)."""
        return int(self._st[self.kernels.MOVE_NUMBER])

    def _kernel_state(self) -> np.ndarray:
        """A writable copy for the kernels (numba compiles a kernel once per array flavour)."""
        return np.array(self._st, dtype=self.kernels.STATE_DTYPE, copy=True)

    # rules ------------------------------------------------------------------------------------
    @property
    def outcome(self) -> int:
        """0 the game goes on, -1 / +1 the colour that has won, ``DRAW`` (2): the outcome of the
        move that reached it, else read off the state (a side ``has_won``, the last mover first;
        no legal move and no winner: a draw)."""
        if self._outcome is None:
            k, st = self.kernels, self._kernel_state()
            last = -int(st[k.TO_MOVE])
            won = [c for c in (last, -last) if k.has_won(st, c)]
            self._outcome = won[0] if won else (DRAW if k.legal_move_count(st) == 0 else ONGOING)
        return self._outcome

    @property
    def over(self) -> bool:
        return self.outcome != ONGOING

    @property
    def winner(self) -> Colour | None:
        return Colour.of(self.outcome) if self.outcome in (-1, 1) else None

    def over_text(self) -> str | None:
        """Why the game is over (``p1 has won``, ``a draw``), or None while it goes on."""
        outcome = self.outcome
        if outcome == ONGOING:
            return None
        return "a draw" if outcome == DRAW else f"{Colour.of(outcome).side} has won"

    def legal_codes(self) -> list[int]:
        """The legal moves' codes, in the game's order (none once the game is over)."""
        if self.over:
            return []
        k = self.kernels
        out = np.zeros(k.N_MOVE_CODES, dtype=np.int64)
        n = int(k.legal_move_codes(self._kernel_state(), out))
        return [int(c) for c in out[:n]]

    def legal_moves(self) -> list[str]:
        """The legal moves as the game writes them (``move_text``), in its order."""
        return [self.game.move_text(c) for c in self.legal_codes()]

    def move_text(self, code: int) -> str:
        return self.game.move_text(code)

    def legal_text(self, limit: int = LISTED_MOVES) -> str:
        """``a b c …``: the first ``limit`` legal moves, for a message."""
        moves = self.legal_moves()
        return " ".join(moves[:limit]) + (" …" if len(moves) > limit else "") if moves else "none"

    def check_legal(self, move: str | int) -> int:
        """The code of ``move`` (its text in the game's notation, read by its ``parse_move``, or a
        code) if it is legal here.

        Raises:
            InvalidMoveError: not a move of the game.
            IllegalMoveError: not legal here (the message lists legal moves), or the game is over.
        """
        if isinstance(move, (int, np.integer)) and not isinstance(move, bool):
            code, shown = int(move), f"move code {int(move)}"
        elif isinstance(move, str):
            code, shown = self._parse(move), repr(move)
        else:
            raise InvalidMoveError(f"{show_value(move)} is not a move: expected a move as {self.game.name} writes it "
                                   "(a string) or a move code (an int)")
        over = self.over_text()
        if over is not None:
            raise IllegalMoveError(f"{shown}: the game is over ({over})")
        if code not in self.legal_codes():
            raise IllegalMoveError(f"{shown} is illegal in {self.to_string()!r}; legal moves: {self.legal_text()}")
        return code

    def _parse(self, text: str) -> int:
        """The code the game's ``parse_move`` reads ``text`` as; whatever else it raises (a user's
        game) is an InvalidMoveError quoting it."""
        try:
            return int(self.game.values.parse_move(text, self._kernel_state()))
        except BoopError:
            raise
        except Exception as exc:  # noqa: BLE001 - a user's parse_move failed on the text: it is not a move
            raise InvalidMoveError(f"{show_value(text)} is not a move of {self.game.name}: its parse_move raised "
                                   f"{exception_line(exc)}") from None

    def play(self, move: str | int, rng: Any = None) -> GameMoveResult:
        """Play a legal move (text or code) on a copy: the result holds the new position.

        Args:
            rng: the generator of the move's own random choices (a game whose ``apply_move``
                draws): an int seed, a numpy Generator, a kernel state, None (fresh entropy).

        Raises:
            InvalidMoveError, IllegalMoveError: as :meth:`check_legal`.
        """
        code = self.check_legal(move)
        k, st = self.kernels, self._kernel_state()
        outcome, _ = k.apply_move(st, code, _rng(rng), k.new_work())
        return GameMoveResult(GamePosition(self.game, st, int(outcome)), code, self.game.move_text(code), int(outcome))

    def has_won(self, colour: Any) -> bool:
        return bool(self.kernels.has_won(self._kernel_state(), colour_code(colour)))

    def heuristic(self, me: Any) -> float:
        """The game's H of this position from ``me``'s side, in [-1, 1]."""
        return float(self.kernels.heuristic(self._kernel_state(), colour_code(me)))

    def objective(self, move: str | int, rng: Any = None) -> float:
        """The game's f of a legal move of the side to move, in [-1, 1] (a winning move 1.0)."""
        code = self.check_legal(move)
        k = self.kernels
        return float(k.objective(self._kernel_state(), code, _rng(rng), k.new_work()))


_compiled: set[str] = set()


def compile_game_position_api(game: Game) -> None:
    """Call once in this process each kernel behind :class:`GamePosition`'s methods for ``game``,
    so that numba compiles (or loads) them here and not inside a plugin agent's first move."""
    if game.name in _compiled:
        return
    position = GamePosition(game)
    code = position.legal_codes()[0]
    position.play(code, rng=0).position.heuristic(-1)
    position.objective(code, rng=0)
    position.has_won(-1)
    _compiled.add(game.name)
