"""The engine side of btp, the boop. text protocol (docs/protocol.md): any agent answers it.

:class:`EngineSession` turns the host's lines into the engine's answers for one agent; it keeps
the board (``position … moves``, extended move by move when the new list starts with the old
one) and one player (:func:`boopexp.play.match.make_player`) whose generator persists across the
``go`` commands of a game, so that a game played through the protocol draws exactly what the
same game played in-process draws (``newgame seed S side p1|p2`` seeds it as
:func:`~boopexp.play.match.play_game` seeds that seat). ``boopexp engine`` runs
:func:`serve` on stdin/stdout. A malformed line never ends the engine: it answers
``info error …`` and waits for the next one; unknown commands are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import IO

import numpy as np

from boopexp.agents.budget import Budget, device_costs
from boopexp.agents.specs import AgentSpec
from boopexp.engine import rules
from boopexp.engine.buffers import new_work
from boopexp.engine.state import BLUE, RED, initial_state
from boopexp.errors import BoopError
from boopexp.game import notation
from boopexp.game.position import Position
from boopexp.game.sides import Side
from boopexp.play.identity import check_seed
from boopexp.play.match import Forfeit, Player, apply_selected, make_player

#: The protocol version this module speaks (docs/protocol.md): ``btp 1``.
PROTOCOL_VERSION = 1
#: What ``bestmove`` says when there is no move to give (no position, the game is over).
NO_MOVE = "(none)"


class EngineSession:
    """One engine: the host's lines in (:meth:`handle`), the answers out.

    Args:
        build: the agent's spec with the parameters set by ``setoption name P value V``, as typed
            (``{"uct_c": "0.5"}``: the caller reads the values as it reads ``--param``); ``{}``
            gives the agent as named.
        budget: the budget of a ``go`` without limits.
        seed: the game seed of a ``newgame`` without ``seed``.
        name: what ``id name`` says.
    """

    def __init__(self, build: Callable[[Mapping[str, str]], AgentSpec], budget: Budget, seed: int = 0,
                 name: str | None = None):
        self.build = build
        self.overrides: dict[str, str] = {}
        self.spec = build({})
        self.budget = budget
        self.seed = seed
        self.side: Side | None = None
        self.name = name or self.spec.name
        self.player: Player | None = None
        self.work = new_work()
        self.state: np.ndarray | None = initial_state()
        self._position_key: tuple[str, tuple[str, ...]] = ("startpos", ())
        self._budgets: dict[tuple[str, ...], Budget] = {}

    # -- the commands -------------------------------------------------------------------------

    def handle(self, line: str) -> list[str]:
        """The answer lines to one line from the host (empty for most commands)."""
        words = line.split()
        if not words:
            return []
        command, args = words[0], words[1:]
        method = _COMMANDS.get(command)
        if method is None:
            return []  # unknown commands are ignored (docs/protocol.md)
        try:
            return method(self, args)
        except BoopError as exc:
            return [f"info error {exc}"]

    def _btp(self, args: list[str]) -> list[str]:
        options = sorted({"seed", "side", *self._parameters()})
        return [f"id name boopexp {self.name}", "id author boopexp", f"id protocol {PROTOCOL_VERSION}",
                *(f"option name {o}" for o in options), "btpok"]

    def _isready(self, args: list[str]) -> list[str]:
        return ["readyok"]

    def _setoption(self, args: list[str]) -> list[str]:
        if len(args) < 4 or args[0] != "name" or "value" not in args[2:]:
            raise BoopError(f"setoption {' '.join(args)!r}: expected 'setoption name NAME value VALUE'")
        at = args.index("value", 2)
        name, value = " ".join(args[1:at]), " ".join(args[at + 1:])
        if name == "seed":
            self.seed = _seed(value)
        elif name == "side":
            self.side = _side(value)
        else:
            overrides = {**self.overrides, name: value}
            self.spec = self.build(overrides)  # refused with the parameter's own message
            self.overrides = overrides
        self.player = None  # a new generator at the next game's first move
        return []

    def _newgame(self, args: list[str]) -> list[str]:
        pairs = _pairs(args, "newgame", ("seed", "side"))
        if "seed" in pairs:
            self.seed = _seed(pairs["seed"])
        self.side = _side(pairs["side"]) if "side" in pairs else None
        self.player = None
        self._set_position(("startpos", ()), initial_state())
        return []

    def _position(self, args: list[str]) -> list[str]:
        if "moves" in args:
            at = args.index("moves")
            head, moves = args[:at], tuple(args[at + 1:])
        else:
            head, moves = args, ()
        if head == ["startpos"]:
            start = "startpos"
        elif head[:1] == ["fen"] and len(head) > 1:
            start = " ".join(head[1:])
        else:
            self.state = None
            raise BoopError(f"position {' '.join(args)!r}: expected 'startpos' or 'fen <position string>', "
                            "then optionally 'moves m1 m2 ...'")
        old_start, old_moves = self._position_key
        if self.state is not None and start == old_start and moves[:len(old_moves)] == old_moves:
            base, todo = self.state, moves[len(old_moves):]  # the same game, a few plies on
        else:
            try:
                base = initial_state() if start == "startpos" else notation.parse_position(start)
            except BoopError:
                self.state = None
                raise
            todo = moves
        self.state = None  # until every move is played
        position = Position(base)
        for ply, text in enumerate(todo, start=len(moves) - len(todo) + 1):
            position = _play(position, text, ply)
        self._set_position((start, moves), position.state)
        return []

    def _go(self, args: list[str]) -> list[str]:
        if self.state is None:
            return ["info error no position: send 'position startpos [moves ...]' first", f"bestmove {NO_MOVE}"]
        st = self.state
        mover = Position(st).to_move
        if rules.has_won(st, BLUE) or rules.has_won(st, RED) or rules.legal_move_count(st) == 0:
            return ["info error the game is over in this position", f"bestmove {NO_MOVE}"]
        player = self._player(mover.side)
        budget = self._go_budget(tuple(args))
        if budget != player.budget:
            player.budget, player.costs = budget, device_costs(budget.device_profile())
        try:
            code, telemetry = player.select(st)
        except Forfeit as exc:  # a plugin agent that failed: the host sees why
            return [f"info error {exc.error}", f"bestmove {NO_MOVE}"]
        # The promotion is the mover's choice, drawn from its generator as in play_game: the
        # same call on a copy, whose chosen group the move names.
        _, text = apply_selected(st.copy(), code, player, self.work)
        return [f"info telemetry {json.dumps(telemetry, separators=(',', ':'))}", f"bestmove {text}"]

    def _quit(self, args: list[str]) -> list[str]:
        raise _Quit

    # -- helpers --------------------------------------------------------------------------------

    def _set_position(self, key: tuple[str, tuple[str, ...]], st: np.ndarray) -> None:
        self._position_key, self.state = key, st

    def _player(self, to_move: Side) -> Player:
        """The game's player, made at its first move: seeded as seat ``side`` (or the side to
        move then) of game seed ``seed`` in :func:`~boopexp.play.match.play_game`."""
        if self.player is None:
            side = self.side or to_move
            seat_ss = np.random.SeedSequence(self.seed).spawn(2)[side.seat]
            self.player = make_player(self.spec, self.budget, seat_ss)
        return self.player

    def _go_budget(self, args: tuple[str, ...]) -> Budget:
        if not args:
            return self.budget
        if args not in self._budgets:
            pairs = _pairs(list(args), "go", ("iterations", "devicetime", "movetime"))
            if len(pairs) != 1:
                raise BoopError(f"go {' '.join(args)!r}: give one limit: iterations N, devicetime MS or movetime MS")
            (key, value), = pairs.items()
            number = _number(value, f"go {key}", integer=key == "iterations")
            if key == "iterations":
                budget = Budget(mode="iterations", iterations=int(number))
            elif key == "devicetime":
                profile = self.budget.profile
                budget = Budget(mode="device", seconds=number / 1000, profile=profile, costs=self.budget.costs)
            else:
                budget = Budget(mode="wall", seconds=number / 1000)
            self._budgets[args] = budget
        return self._budgets[args]

    def _parameters(self) -> Iterable[str]:
        if self.spec.mcts is None:
            return ()
        from boopexp.agents.specs import MCTS_PARAMETERS

        return MCTS_PARAMETERS


class _Quit(Exception):
    """``quit``: the session ends."""


_COMMANDS: dict[str, Callable[[EngineSession, list[str]], list[str]]] = {
    "btp": EngineSession._btp,
    "isready": EngineSession._isready,
    "setoption": EngineSession._setoption,
    "newgame": EngineSession._newgame,
    "position": EngineSession._position,
    "go": EngineSession._go,
    "quit": EngineSession._quit,
}


def serve(session: EngineSession, stdin: IO[str], stdout: IO[str]) -> None:
    """Answer the host's lines from ``stdin`` on ``stdout`` until ``quit`` or the end of input."""
    for line in stdin:
        try:
            answer = session.handle(line)
        except _Quit:
            return
        if answer:
            stdout.write("\n".join(answer) + "\n")
            stdout.flush()


def _play(position: Position, text: str, ply: int) -> Position:
    """``position`` after the move ``text`` (REAL rules); a move that leaves a choice of promoted
    group (two or more lines, or a piece to take back) must name it (``c4:a4b4c4``, ``d6:d6``): the
    mover chose it, the engine cannot."""
    try:
        _, _, group = notation.parse_move(text)
        choices = position.promotion_choices(text) if group is None else []
        if len(choices) >= 2:
            raise BoopError(f"{text!r} leaves the mover a choice of promoted group: name it, e.g. "
                            f"{text}:{''.join(notation.square_name(q) for q in choices[0])}")
        result = position.play(text)
    except BoopError as exc:
        raise BoopError(f"move {ply} {text!r}: {exc}") from None
    return result.position


def _pairs(args: list[str], command: str, keys: tuple[str, ...]) -> dict[str, str]:
    if len(args) % 2 or any(k not in keys for k in args[::2]):
        raise BoopError(f"{command} {' '.join(args)!r}: expected pairs of KEY VALUE with KEY one of {', '.join(keys)}")
    return dict(zip(args[::2], args[1::2]))


def _seed(text: str) -> int:
    try:
        return check_seed(int(text))
    except ValueError:
        raise BoopError(f"seed {text!r} must be an integer 0..2^64-1") from None


def _side(text: str) -> Side:
    if text not in ("p1", "p2"):
        raise BoopError(f"side {text!r} must be p1 (Blue, moves first) or p2 (Red)")
    return Side(text)


def _number(text: str, what: str, integer: bool) -> float:
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        value = -1
    if not value > 0 or value != value or value == float("inf"):
        raise BoopError(f"{what} {text!r} must be a positive {'integer' if integer else 'number'}")
    return value
