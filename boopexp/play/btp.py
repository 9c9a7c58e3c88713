"""The engine side of btp, the boop. text protocol (docs/protocol.md): ``EngineSession`` answers a
host's lines for any agent in any game (its board, its seeded player kept across ``go``s, boop.'s
promotion choice named in ``bestmove``), ``serve`` runs it on stdin/stdout (``boopexp engine``: a thread reads the
host's lines, so ``stop``, ``quit`` and the end of input end a running search).

:class:`EngineSession` turns the host's lines into the engine's answers for one agent; it keeps
the board (``position … moves``, extended move by move when the new list starts with the old
one) and one player (:func:`boopexp.play.match.make_player`) whose generator persists across the
``go`` commands of a game, so that a game played through the protocol draws exactly what the
same game played in-process draws (``newgame seed S side p1|p2`` seeds it as
:func:`~boopexp.play.match.play_game` seeds that seat). ``boopexp engine`` runs
:func:`serve` on stdin/stdout: a thread reads the host's lines while a search runs, so that
``stop`` (or ``quit``, or the end of input) ends the search at once with its best move so far,
whatever is queued before it, and ``isready`` is answered at once. The session plays one game
(``id game G``; boop. by default): another game's positions and moves are its own notation's,
played through :class:`~boopexp.games.position.GamePosition`.
A malformed line never ends the engine: it answers ``info error …`` and waits for the next one;
unknown commands are ignored. Lines are read to :data:`~boopexp.play.btp_lines.MAX_LINE` bytes
(:func:`~boopexp.play.btp_lines.read_lines`, the host's reader too): a longer one is skipped
unread and answered ``info error``.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import IO, Any

import numpy as np

from boopexp import schema
from boopexp.agents.budget import MAX_ITERATIONS, Budget, device_costs
from boopexp.agents.specs import MAX_OPTION_CHARS, AgentSpec
from boopexp.engine import rules
from boopexp.engine.state import BLUE, RED, initial_state
from boopexp.errors import BoopError, ConfigError, exception_line
from boopexp.game import notation
from boopexp.game.position import Position
from boopexp.game.sides import Colour, Side
from boopexp.games.position import GamePosition
from boopexp.games.registry import DEFAULT_GAME, Game
from boopexp.play.btp_lines import MAX_LINE, LineTooLong, read_lines
from boopexp.play.contract import cut_text
from boopexp.play.identity import check_seed
from boopexp.play.match import BOOP, Forfeit, Player, apply_selected, make_player

#: The protocol version this module speaks (docs/protocol.md): ``btp 1``.
PROTOCOL_VERSION = 1
#: What ``bestmove`` says when there is no move to give (no position, the game is over).
NO_MOVE = "(none)"
#: The commands that end a running search (:func:`serve`): it answers its best move so far.
_INTERRUPTS = ("stop", "quit")


class EngineSession:
    """One engine: the host's lines in (:meth:`handle`), the answers out.

    Args:
        build: the agent's spec with the parameters set by ``setoption name P value V``, as typed
            (``{"uct_c": "0.5"}``: the caller reads the values as it reads ``--param``); ``{}``
            gives the agent as named.
        budget: the budget of a ``go`` without limits.
        seed: the game seed of a ``newgame`` without ``seed``.
        name: what ``id name`` says.
        game: the game it plays (``id game``; docs/protocol.md, "Games"): positions and moves in
            its notation.
    """

    def __init__(self, build: Callable[[Mapping[str, str]], AgentSpec], budget: Budget, seed: int = 0,
                 name: str | None = None, game: Game = BOOP):
        self.game = game
        self.build = build
        self.overrides: dict[str, str] = {}
        self.spec = build({})
        self.budget = budget
        self.seed = seed
        self.side: Side | None = None
        self.name = name or self.spec.name
        self.player: Player | None = None
        self.work: Any = None  # the buffers a bestmove is played with (its player's kernels'), made at the first
        #: the current position (boop.'s :class:`Position`, another game's :class:`GamePosition`), None: none to move in
        self.board: Board | None = _start(game, "startpos")
        self._position_key: tuple[str, tuple[str, ...]] = ("startpos", ())
        self._budgets: dict[tuple[str, ...], Budget] = {}
        #: set non-zero by :func:`serve`'s reader on ``stop``: the running search ends (:class:`Player`'s ``stop``)
        self.stop = np.zeros(1, dtype=np.int64)

    # -- the commands -------------------------------------------------------------------------

    def handle(self, line: str | LineTooLong) -> list[str]:
        """The answer lines to one line from the host (empty for most commands). Every ``go``
        ends with one ``bestmove`` (``(none)`` after an ``info error``); any failure is an
        ``info error`` line, never the engine's end."""
        words = (line.head if isinstance(line, LineTooLong) else line).split()
        if not words:
            return []
        command, args = words[0], words[1:]
        method = _COMMANDS.get(command)
        if method is None and not isinstance(line, LineTooLong):
            return []  # unknown commands are ignored (docs/protocol.md)
        try:
            if isinstance(line, LineTooLong):
                if command == "position":
                    self.board = None  # not the game's board any more
                raise BoopError(f"a line of {line.size} bytes starting {line.head[:40]!r}: at most {MAX_LINE} "
                                "bytes are read; the line was skipped")
            assert method is not None
            return method(self, args)
        except BoopError as exc:
            error = str(exc)
        except _Quit:
            raise
        except Exception as exc:  # its own failure (not the host's): still an answer, not an exit
            error = f"{command}: {exception_line(exc)}"
        return [f"info error {cut_text(error)}"] + ([f"bestmove {NO_MOVE}"] if command == "go" else [])

    def _btp(self, args: list[str]) -> list[str]:
        options = sorted({"game", "seed", "side", *self._parameters()})
        return [f"id name boopexp {self.name}", "id author boopexp", f"id protocol {PROTOCOL_VERSION}",
                f"id game {self.game.name}", *(f"option name {o}" for o in options), "btpok"]

    def _isready(self, args: list[str]) -> list[str]:
        return ["readyok"]

    def _setoption(self, args: list[str]) -> list[str]:
        if len(args) < 4 or args[0] != "name" or "value" not in args[2:]:
            raise BoopError(f"setoption {' '.join(args)!r}: expected 'setoption name NAME value VALUE'")
        at = args.index("value", 2)
        name, value = " ".join(args[1:at]), " ".join(args[at + 1:])
        if len(value) > MAX_OPTION_CHARS:  # as a host's config bounds them; nor is a longer number read
            raise BoopError(f"setoption name {cut_text(name, 40)}: a value of {len(value)} characters; at most "
                            f"{MAX_OPTION_CHARS} are read ({cut_text(name, 40)}: {self._takes(name)})")
        if name == "game":
            if value != self.game.name:
                raise BoopError(f"game {cut_text(value, 40)!r}: this engine plays {self.game.name} only "
                                f"('boopexp engine --game {cut_text(value, 40)}' plays that one)")
            return []
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
        self._set_position(("startpos", ()), _start(self.game, "startpos"))
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
            self.board = None
            raise BoopError(f"position {' '.join(args)!r}: expected 'startpos' or 'fen <position string>', "
                            "then optionally 'moves m1 m2 ...'")
        old_start, old_moves = self._position_key
        board, self.board = self.board, None  # none until every move is played: a failure leaves no position
        if board is not None and start == old_start and moves[:len(old_moves)] == old_moves:
            todo = moves[len(old_moves):]  # the same game, a few plies on
        else:
            board, todo = _start(self.game, start), moves
        for ply, text in enumerate(todo, start=len(moves) - len(todo) + 1):
            board = _play(board, text, ply)
        self._set_position((start, moves), board)
        return []

    def _go(self, args: list[str]) -> list[str]:
        if self.board is None:
            raise BoopError("no position: send 'position startpos [moves ...]' first")
        st = np.array(self.board.state, copy=True)  # writable, as in play_game (numba compiles per array flavour)
        if _game_over(self.board):
            raise BoopError("the game is over in this position")
        budget = self._go_budget(tuple(args))
        player = self._player(self.board.to_move.side)
        player.stop = self.stop
        if budget != player.budget:
            player.budget = player.first_budget = budget  # the host's go decides every move's
            player.costs = device_costs(budget.device_profile(self.game.device_costs()))
        try:
            code, telemetry = player.select(st)
        except Forfeit as exc:  # a plugin agent that failed: the host sees why
            raise BoopError(exc.error) from None
        # boop.'s promotion is the mover's choice, drawn from its generator as in play_game: the
        # same call on a copy, whose chosen group the move names (another game: its kernels' move).
        if self.work is None:
            self.work = player.kernels.new_work()
        _, text = apply_selected(st.copy(), code, player, self.work, self.game)
        return [f"info telemetry {json.dumps(telemetry, separators=(',', ':'))}", f"bestmove {text}"]

    def _stop(self, args: list[str]) -> list[str]:
        return []  # read while a search runs, it ends it (serve); between searches, nothing to do

    def _quit(self, args: list[str]) -> list[str]:
        raise _Quit

    # -- helpers --------------------------------------------------------------------------------

    def _set_position(self, key: tuple[str, tuple[str, ...]], board: Board) -> None:
        self._position_key, self.board = key, board

    def _player(self, to_move: Side) -> Player:
        """The game's player, made at its first move: seeded as seat ``side`` (or the side to
        move then) of game seed ``seed`` in :func:`~boopexp.play.match.play_game`."""
        if self.player is None:
            side = self.side or to_move
            seat_ss = np.random.SeedSequence(self.seed).spawn(2)[side.seat]
            self.player = make_player(self.spec, self.budget, seat_ss, game=self.game)
        return self.player

    def _go_budget(self, args: tuple[str, ...]) -> Budget:
        """The budget of ``go <args>``: its limit read as a number, then checked where every
        budget is, by :class:`~boopexp.agents.budget.Budget` (its error, an ``info error``)."""
        if not args:
            return self.budget
        if args not in self._budgets:
            pairs = _pairs(list(args), "go", ("iterations", "devicetime", "movetime"))
            if len(pairs) != 1:
                raise BoopError(f"go {cut_text(' '.join(args), 80)!r}: give one limit: iterations N, devicetime MS or "
                                "movetime MS")
            (key, text), = pairs.items()
            try:
                if key == "iterations":
                    iterations = _read(text, int, "go iterations", "an integer", f"at most {MAX_ITERATIONS:,}")
                    budget = Budget(mode="iterations", iterations=iterations)
                else:
                    seconds = _read(text, float, f"go {key}", "a number of milliseconds") / 1000
                    budget = (Budget(mode="device", seconds=seconds, profile=self.budget.profile,
                                     costs=self.budget.costs) if key == "devicetime" else
                              Budget(mode="wall", seconds=seconds))
            except ConfigError as exc:
                raise BoopError(f"go {key} {cut_text(text, 40)}: {exc}") from None
            if len(self._budgets) >= _BUDGETS_KEPT:  # a host that never repeats a limit keeps no more
                self._budgets.clear()
            self._budgets[args] = budget
        return self._budgets[args]

    def _takes(self, option: str) -> str:
        """What ``option`` takes, in words (``a number in [0.0, 100.0]``)."""
        from boopexp.agents.specs import ALPHABETA_PARAMS, MCTS_PARAMS

        row = {"mcts": MCTS_PARAMS, "alphabeta": ALPHABETA_PARAMS}.get(self.spec.kind, {}).get(option)
        words = ({"seed": _SEED_WORDS, "side": _SIDE_WORDS, "game": f"the game it plays, {self.game.name}"}.get(option)
                 or (row.allowed if row else None))
        return words or f"not an option of {self.name}"

    def _parameters(self) -> Iterable[str]:
        if self.spec.mcts is None:
            return ()
        from boopexp.agents.specs import MCTS_PARAMETERS

        return MCTS_PARAMETERS


#: the budgets of distinct ``go`` limits a session keeps (:meth:`EngineSession._go_budget`)
_BUDGETS_KEPT = 64


class _Quit(Exception):
    """``quit``: the session ends."""


_COMMANDS: dict[str, Callable[[EngineSession, list[str]], list[str]]] = {
    "btp": EngineSession._btp,
    "isready": EngineSession._isready,
    "setoption": EngineSession._setoption,
    "newgame": EngineSession._newgame,
    "position": EngineSession._position,
    "go": EngineSession._go,
    "stop": EngineSession._stop,
    "quit": EngineSession._quit,
}


class _HostLines:
    """The host's lines, read by a thread of their own (:func:`read_lines`) into :attr:`lines`, so
    that the engine goes on reading them while it searches; the reader never waits for the engine,
    so nothing queued hides what comes after it.

    A ``stop`` or ``quit`` line, and the end of input, set :attr:`stop` at once; it stays set until
    such a line is answered (:meth:`answered`): every ``go`` before it in the input — the running
    search and any queued behind it — ends at once with its best move so far, a ``go`` after it
    searches its whole limit. An ``isready`` read while a ``go`` is unanswered is answered
    ``readyok`` at once by the reader (UCI's way), not after the searches before it."""

    END = None

    def __init__(self, stream: IO[bytes], answer: Callable[[list[str]], bool]):
        self.lines: queue.Queue[str | LineTooLong | None] = queue.Queue()
        self.stop = np.zeros(1, dtype=np.int64)
        self._answer = answer
        self._pending = 0  # the stop, quit (and end of input) read but not answered
        self._searches = 0  # the go read but not answered
        self._lock = threading.Lock()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[bytes]) -> None:
        try:
            for line in read_lines(stream):
                word = _command(line)
                with self._lock:
                    if word == "isready" and self._searches:
                        self._answer(["readyok"])
                        continue
                    if word == "go":
                        self._searches += 1
                if word in _INTERRUPTS:
                    self._count(+1)
                self.lines.put(line)
        except (OSError, ValueError):
            pass  # the host closed it: the end of input
        self._count(+1)  # for good: the engine ends once it has answered what it read
        self.lines.put(self.END)

    def answered(self, line: str | LineTooLong) -> None:
        """``line`` has been answered: a ``stop`` or ``quit`` stops no search any more."""
        word = _command(line)
        if word == "go":
            with self._lock:
                self._searches -= 1
        elif word in _INTERRUPTS:
            self._count(-1)

    def _count(self, change: int) -> None:
        with self._lock:
            self._pending += change
            self.stop[0] = 1 if self._pending > 0 else 0


def _command(line: str | LineTooLong) -> str | None:
    """The command a line of the host gives (its first word), None for an empty or over-long one."""
    words = line.split(maxsplit=1) if isinstance(line, str) else []
    return words[0] if words else None


def serve(session: EngineSession, stdin: IO[bytes], stdout: IO[str]) -> None:
    """Answer the host's lines from ``stdin`` on ``stdout``, in their order, until ``quit`` or the
    end of input (which also end a running search, as ``stop`` does; ``isready`` during a search
    is answered at once: :class:`_HostLines`)."""
    writing = threading.Lock()  # the reader answers isready while this thread searches

    def answer(lines: list[str]) -> bool:
        """Write ``lines``; False once the host has gone (nobody to answer)."""
        with writing:
            try:
                stdout.write("\n".join(lines) + "\n")
                stdout.flush()
            except (OSError, ValueError):
                return False
            return True

    host = _HostLines(stdin, answer)
    session.stop = host.stop
    while True:
        line = host.lines.get()
        if line is host.END:
            return
        try:
            lines = session.handle(line)
        except _Quit:
            return
        # written before the go counts as answered: an isready read meanwhile follows its bestmove
        if lines and not answer(lines):
            return
        host.answered(line)


#: a position btp plays in: boop.'s (pushes, promotion groups) or another game's (its contract)
Board = Position | GamePosition


def _start(game: Game, start: str) -> Board:
    """The position ``position <start>`` names: ``startpos`` (the game's start) or a position
    string of the game."""
    if game.name != DEFAULT_GAME:
        return GamePosition(game) if start == "startpos" else GamePosition.from_string(game, start)
    return Position(initial_state() if start == "startpos" else notation.parse_position(start))


def _game_over(board: Board) -> str | None:
    """Why the game is over on ``board`` (a side has won, a draw, or the side to move has no move), or None."""
    if isinstance(board, GamePosition):
        return board.over_text()
    st = board.state
    for code in (BLUE, RED):
        if rules.has_won(st, code):
            return f"{Colour.of(code).value.capitalize()} has won"
    return "no legal move" if rules.legal_move_count(st) == 0 else None


def _play(board: Board, text: str, ply: int) -> Board:
    """``board`` after the move ``text`` (boop.: REAL rules; a move that leaves a choice of
    promoted group, two or more lines or a piece to take back, must name it, ``c4:a4b4c4``,
    ``d6:d6``: the mover chose it, the engine cannot; another game: its notation and kernels). No
    move is played once the game is over."""
    over = _game_over(board)
    if over:
        raise BoopError(f"move {ply} {cut_text(text, 40)!r}: the game is over ({over})")
    if isinstance(board, GamePosition):
        try:
            return board.play(text, rng=0).position  # the contract's moves draw nothing a move text leaves open
        except BoopError as exc:
            raise BoopError(f"move {ply} {cut_text(text, 40)!r}: {exc}") from None
    position = board
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
    """``KEY VALUE ...`` of ``command``, each key one of ``keys`` and given once (a second is a
    mistake, not the value that counts)."""
    said = f"{command} {cut_text(' '.join(args), 80)!r}"
    if len(args) % 2 or any(k not in keys for k in args[::2]):
        raise BoopError(f"{said}: expected pairs of KEY VALUE with KEY one of {', '.join(keys)}")
    twice = sorted({k for k in args[::2] if args[::2].count(k) > 1})
    if twice:
        raise BoopError(f"{said}: {twice[0]} given twice; give each key once")
    return dict(zip(args[::2], args[1::2]))


#: what the options ``seed`` and ``side`` take, in words
_SEED_WORDS, _SIDE_WORDS = "an integer 0..2^64-1", "p1 (Blue, moves first) or p2 (Red)"


def _seed(text: str) -> int:
    seed = schema.decimal(text)
    if seed is None:
        raise BoopError(f"seed {cut_text(text, 40)!r} must be {_SEED_WORDS}")
    return check_seed(seed)


def _side(text: str) -> Side:
    if text not in ("p1", "p2"):
        raise BoopError(f"side {text!r} must be {_SIDE_WORDS}")
    return Side(text)


def _read(text: str, kind: type, what: str, want: str, bound: str = ""):
    """``text`` read as ``kind`` (int or float) from ASCII only (int() and float() read other
    scripts' digits: ``３`` as 3); its range is the budget's to check, but for an integer of more
    digits than Python reads (4300): beyond ``bound``, said in words."""
    try:
        value = schema.decimal(text) if kind is int else kind(text) if text.isascii() else None
    except ValueError:
        value = None
    if value is None:
        if kind is int and text.isascii() and text.isdigit():  # digits that decimal() did not convert: too many
            raise BoopError(f"{what} {cut_text(text, 40)!r}: an integer of {len(text)} digits; {bound}")
        raise BoopError(f"{what} {cut_text(text, 40)!r} must be {want}")
    return value
