"""The immutable ``Position`` / ``Move`` API over the kernels (``boopexp.Position``,
``boopexp.Move``).

Applying a move returns a new Position; nobody mutates a state they were handed. Every random
choice (promotion tie-breaks, solver tie-breaks) draws from a generator the caller passes in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from boopexp.engine import heuristic as _h
from boopexp.engine import objective, rules
from boopexp.engine.buffers import new_work, solver_buffers
from boopexp.engine.rng import rng_state as _rng
from boopexp.engine.state import (
    BLUE,
    L_BLUE,
    L_RED,
    MOVE_NUMBER,
    N_MOVE_CODES,
    N_SQUARES,
    POOL_BASE_BLUE,
    POOL_BASE_RED,
    POOL_LARGE_BLUE,
    POOL_LARGE_RED,
    RED,
    STATE_DTYPE,
    STATE_SIZE,
    TO_MOVE,
    decode_move,
    encode_move,
    initial_state,
)
from boopexp.errors import ConfigError, IllegalMoveError, InvalidMoveError, InvalidPositionError, show_value
from boopexp.game import notation
from boopexp.game.sides import Colour, Side


def _colour(value) -> int:
    if value in (BLUE, RED):
        return int(value)
    if isinstance(value, str) and value.lower() in (Colour.BLUE, "b", Side.P1):
        return BLUE
    if isinstance(value, str) and value.lower() in (Colour.RED, "r", Side.P2):
        return RED
    raise ConfigError(f"{value!r} is not a colour; use 'blue' or 'red' (or -1 / +1)")


def _candidate_groups(st: np.ndarray, colour: int, exclude_all_large: bool) -> list[tuple[int, ...]]:
    """rules.candidate_groups as a list of square tuples (one square for a singleton)."""
    buf = np.empty((rules.MAX_GROUPS, 3), dtype=np.int64)
    n = rules.candidate_groups(st, colour, exclude_all_large, buf)
    return [tuple(int(q) for q in buf[i] if q >= 0) for i in range(n)]


@dataclass(frozen=True)
class Move:
    """A placement: ``size`` 1 (small) or 2 (large) on ``square`` (index 6*row + col)."""

    size: int
    square: int

    @property
    def code(self) -> int:
        """The solver's move code (:func:`boopexp.engine.state.encode_move`)."""
        return encode_move(self.size, self.square)

    @classmethod
    def from_code(cls, code: int) -> Move:
        size, square = decode_move(int(code))
        return cls(size=size, square=square)

    @classmethod
    def parse(cls, text: str) -> Move:
        size, square, _ = notation.parse_move(text)
        return cls(size, square)

    def __str__(self) -> str:
        return notation.format_move(self.size, self.square)


@dataclass(frozen=True)
class MoveResult:
    """What :meth:`Position.play` did: the new position, a winner (or None), the groups."""

    position: Position
    winner: Colour | None
    groups: tuple[tuple[int, ...], ...]
    chosen: int | None

    @property
    def promoted(self) -> tuple[int, ...] | None:
        return None if self.chosen is None else self.groups[self.chosen]


class Position:
    """An immutable boop. position (board, pools, large counters, side to move, ply)."""

    __slots__ = ("_st",)

    def __init__(self, state: np.ndarray | None = None):
        """A position from a state array (default: the initial position); the array is copied.

        Raises:
            InvalidPositionError: not a state of ``STATE_SIZE`` integers with cells in -2..2.
        """
        if state is None:
            st = initial_state()
        else:
            st = np.asarray(state)
            if st.shape != (STATE_SIZE,) or not np.issubdtype(st.dtype, np.integer) or np.abs(st[:N_SQUARES]).max() > 2:
                raise InvalidPositionError(
                    f"a state is {STATE_SIZE} integers with board cells in -2..2 (docs: boopexp.engine.state); got "
                    f"{show_value(state)}"
                )
            st = np.array(st, dtype=STATE_DTYPE, copy=True)
        st.setflags(write=False)
        self._st = st

    # construction / text ------------------------------------------------------------------
    @classmethod
    def initial(cls) -> Position:
        return cls()

    @classmethod
    def from_string(cls, text: str) -> Position:
        """Parse a one-line position string (:mod:`boopexp.game.notation`)."""
        return cls(notation.parse_position(text))

    def to_string(self) -> str:
        return notation.format_position(self._st)

    def render(self) -> str:
        """The board for terminals; its last line says whose turn it is, or who has won."""
        mover = -int(self._st[TO_MOVE])  # the side that moved last wins a board both sides have won
        won = [c for c in (mover, -mover) if self.has_won(c)]
        return notation.render(self._st, won[0] if won else 0)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"Position({self.to_string()!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Position) and bool(np.array_equal(self._st, other._st))

    def __hash__(self) -> int:
        return hash(self._st.tobytes())

    # accessors ----------------------------------------------------------------------------
    @property
    def state(self) -> np.ndarray:
        """The read-only state array (layout in :mod:`boopexp.engine.state`)."""
        return self._st

    @property
    def grid(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self._st[:N_SQUARES])

    @property
    def to_move(self) -> Colour:
        return Colour.of(int(self._st[TO_MOVE]))

    @property
    def move_number(self) -> int:
        return int(self._st[MOVE_NUMBER])

    def pool(self, colour) -> tuple[int, int]:
        """(smalls, larges) in ``colour``'s pool."""
        small, large = (POOL_BASE_BLUE, POOL_LARGE_BLUE) if _colour(colour) == BLUE else (POOL_BASE_RED, POOL_LARGE_RED)
        return int(self._st[small]), int(self._st[large])

    def large_counter(self, colour) -> int:
        return int(self._st[L_BLUE if _colour(colour) == BLUE else L_RED])

    def _kernel_state(self) -> np.ndarray:
        """A writable copy of the state, for the kernels: numba compiles a kernel once per array
        flavour, and the players pass writable states, so the read-only one would compile much of
        the engine a second time for a plugin agent (~10 s of CPU on a cold cache)."""
        return self._st.copy()

    # rules --------------------------------------------------------------------------------
    def legal_moves(self) -> list[Move]:
        """Every legal move of the side to move, smalls first, squares row-major."""
        buf = np.empty(N_MOVE_CODES, dtype=np.int64)
        n = rules.legal_move_codes(self._kernel_state(), buf)
        return [Move.from_code(c) for c in buf[:n]]

    def check_legal(self, move: Move | str) -> Move:
        """The move, parsed if given as text; IllegalMoveError if the rules forbid it here."""
        if not isinstance(move, (str, Move)):
            raise InvalidMoveError(f"{move!r} is not a move: expected a Move or a string like 'c3' or 'C3'")
        text = move if isinstance(move, str) else None
        if isinstance(move, str):
            move = Move.parse(move)
        shown = text if text is not None else str(move)
        if move.size not in (1, 2) or not 0 <= move.square < N_SQUARES:
            raise IllegalMoveError(f"{shown!r}: size must be 1 or 2 and the square 0..35")
        if self._st[move.square] != 0:
            raise IllegalMoveError(f"{shown!r} is illegal in {self.to_string()!r}: the square is occupied")
        small, large = self.pool(self.to_move)
        if (small if move.size == 1 else large) == 0:
            kind = "small" if move.size == 1 else "large"
            raise IllegalMoveError(
                f"{shown!r} is illegal in {self.to_string()!r}: {self.to_move} has no {kind} piece in the pool"
            )
        return move

    def play(self, move: Move | str, variant: str = "REAL", promotion: str | int = "heuristic",
             rng: Any = None) -> MoveResult:
        """Play a move and return the result; this position is unchanged.

        Args:
            move: a :class:`Move` or a move string (``c3``, ``C3``; a ``:group`` suffix picks the
                promoted group explicitly).
            variant: ``REAL`` (default), ``TREE`` or ``SIM`` (RULES.md §10).
            promotion: ``"heuristic"`` (every AI), ``"random"`` (the random agent) or the index
                of the group to remove among the candidates.
            rng: the generator for promotion tie-breaks (int seed, numpy Generator, kernel state).

        Raises:
            InvalidMoveError: unparsable move text.
            IllegalMoveError: occupied square, size not in the pool, or a promoted group that is not
                a candidate.
        """
        group = None
        if isinstance(move, str):
            _, _, group = notation.parse_move(move)
        move = self.check_legal(move)
        if variant not in rules.VARIANTS:
            raise ConfigError(f"variant {variant!r} is not one of {', '.join(rules.VARIANTS)}")
        var = rules.VARIANTS[variant]
        if promotion == "heuristic":
            promo = rules.PROMO_HEURISTIC
        elif promotion == "random":
            promo = rules.PROMO_RANDOM
        else:
            if isinstance(promotion, bool) or not isinstance(promotion, (int, np.integer)) or promotion < 0:
                raise IllegalMoveError(
                    f"promotion={promotion!r}: use 'heuristic', 'random' or the index of a candidate group"
                )
            promo = int(promotion)
            cands = self._groups_after(move, var)
            if promo >= len(cands):
                names = [''.join(notation.square_name(q) for q in g) for g in cands]
                raise IllegalMoveError(
                    f"promotion index {promo} after {str(move)!r}: there are {len(cands)} candidate groups {names}"
                )
        if group is not None:
            cands = self._groups_after(move, var)
            if group not in cands:
                raise IllegalMoveError(
                    f"group {''.join(notation.square_name(q) for q in group)!r} is not a candidate after "
                    f"{str(move)!r}; candidates: {[''.join(notation.square_name(q) for q in g) for g in cands]}"
                )
            promo = cands.index(group)
        new, winner, n, chosen = rules.apply_move(self._kernel_state(), move.size, move.square, var, promo, _rng(rng))
        groups = tuple(self._groups_after(move, var)) if n else ()
        return MoveResult(
            position=Position(new),
            winner=None if winner == 0 else Colour.of(int(winner)),
            groups=groups,
            chosen=None if chosen < 0 else int(chosen),
        )

    def _groups_after(self, move: Move, var: int) -> list[tuple[int, ...]]:
        """The mover's candidate groups once ``move`` is placed and has pushed (before promotion)."""
        st = self._st.copy()
        rules.place_and_push(st, move.size, move.square)
        return _candidate_groups(st, int(self._st[TO_MOVE]), var == rules.SIM)

    def promotion_choices(self, move: Move | str) -> list[tuple[int, ...]]:
        """The groups the side to move must choose among after the legal ``move`` (REAL rules):
        empty when fewer than two groups line up or when the move wins at once (RULES.md §5–7).

        Raises:
            InvalidMoveError, IllegalMoveError: as :meth:`check_legal`.
        """
        move = self.check_legal(move)
        st = self._st.copy()
        rules.place_and_push(st, move.size, move.square)
        mover = int(self._st[TO_MOVE])
        if rules.has_won(st, mover):
            return []
        groups = _candidate_groups(st, mover, False)
        return groups if len(groups) >= 2 else []

    def has_won(self, colour) -> bool:
        """Victory V1 or V2 holds for ``colour`` on this board (RULES.md §7)."""
        return bool(rules.has_won(self._kernel_state(), _colour(colour)))

    def candidate_groups(self, colour=None, exclude_all_large: bool = False) -> list[tuple[int, ...]]:
        """``colour``'s candidate groups (default: the side to move) in the app's order."""
        col = _colour(colour) if colour is not None else int(self._st[TO_MOVE])
        return _candidate_groups(self._kernel_state(), col, exclude_all_large)

    def promotion_scores(self, groups: Iterable[tuple[int, ...]], colour=None) -> list[int]:
        """Promotion-heuristic score of each group (HEURISTIC.md §6.2)."""
        col = _colour(colour) if colour is not None else int(self._st[TO_MOVE])
        out = []
        st = self._kernel_state()
        for g in groups:
            cells = tuple(g) + (-1,) * (3 - len(g))
            out.append(int(rules.promotion_score(st, col, *cells)))
        return out

    # heuristic / objective / solver ---------------------------------------------------------
    def heuristic(self, me) -> float:
        """H from ``me``'s point of view (HEURISTIC.md §1–4)."""
        return float(_h.heuristic(self._kernel_state(), _colour(me)))

    def objective(self, move: Move | str, rng=None) -> float:
        """f of a legal move of the side to move (HEURISTIC.md §7); random under QUIRK-H9."""
        move = self.check_legal(move)
        w = new_work()
        return float(objective.objective_ws(self._kernel_state(), move.size, move.square, _rng(rng), w.ctx, w.groups,
                                            w.scores, w.ties))

    def best_move(self, rng=None, masks: Iterable[Move] = ()) -> tuple[Move | None, int]:
        """(best move or None when every legal move is masked, number of tied optima)."""
        mask = np.zeros(N_MOVE_CODES, dtype=np.bool_)
        for mv in masks:
            mask[(Move.parse(mv) if isinstance(mv, str) else mv).code] = True
        code, ties = objective.best_move_ws(self._kernel_state(), mask, _rng(rng), *solver_buffers(new_work()))
        return (None if code < 0 else Move.from_code(code)), int(ties)

    def best_m_moves(self, m: int, rng=None) -> list[Move]:
        """The m pre-selected moves of the Selection injection (AGENTS.md §A.3)."""
        out = np.empty(N_MOVE_CODES, dtype=np.int64)
        k = objective.best_m_moves_ws(self._kernel_state(), int(m), _rng(rng), *solver_buffers(new_work()), out)
        return [Move.from_code(c) for c in out[:k]]


_compiled = False


def compile_position_api() -> None:
    """Call once in this process each kernel behind :class:`Position`'s methods, so that numba's
    first compilation of them (about 10 s on a fresh machine; a fraction of a second from its
    cache) is paid here and not inside a plugin agent's first move, against its time limit."""
    global _compiled
    if _compiled:
        return
    position = Position.initial()
    move = position.legal_moves()[0]
    position.play(move, rng=0)
    position.promotion_choices(move)
    position.candidate_groups()
    position.promotion_scores([(0, 1, 2)])
    position.has_won("blue")
    position.heuristic("blue")
    position.objective(move, rng=0)
    position.best_move(rng=0)
    position.best_m_moves(2, rng=0)
    _compiled = True
