"""A human against an agent in the terminal: the library behind ``boopexp play``.

Two layers, so that the game logic is tested without a terminal and the dialogue without a search:

* :class:`PlaySession` holds one game between the human and an agent (any built-in, variant or
  plugin agent that :func:`boopexp.play.match.make_player` builds): it checks and plays the human's
  moves (with their promotion choice), plays the agent's, takes back full moves, asks mcts-co for
  a hint and builds the finished game's record (the human is agent ``human``; docs/architecture.md).
* :func:`run_dialogue` is the terminal loop: it draws the board after every ply with the last move
  and its pushes marked, reads commands (a move, ``undo``, ``hint``, ``quit``, ``help``), lists
  numbered promotion choices, shows a spinner and the telemetry line while the agent thinks, and
  answers a bad input with one line and a new prompt.

Every random choice of the agent draws from a generator seeded from the game's identity, as in
:func:`boopexp.play.match.play_game`; a take-back does not rewind it (the agent may answer differently
the second time, as a human opponent could).
"""

from __future__ import annotations

import itertools
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

from boopexp.agents.budget import Budget
from boopexp.agents.specs import AgentSpec, resolve_agent
from boopexp.engine import mcts, rules
from boopexp.engine.buffers import new_work
from boopexp.engine.luts import PUSH_T, PUSH_V
from boopexp.engine.state import (
    BLUE,
    MOVE_NUMBER,
    POOL_BASE_BLUE,
    POOL_BASE_RED,
    POOL_LARGE_BLUE,
    POOL_LARGE_RED,
    RED,
    TO_MOVE,
    decode_move,
    initial_state,
)
from boopexp.errors import BoopError, IllegalMoveError, InvalidMoveError, StoreError
from boopexp.experiments.store import GameStore
from boopexp.game import notation
from boopexp.game.position import Move, Position
from boopexp.game.sides import Colour
from boopexp.play.contract import ForfeitNotice, GameRecord, GameTask, build_record
from boopexp.play.identity import game_key, pairing_hash
from boopexp.play.match import Forfeit, Player, make_player, plugin_output
from boopexp.play.throttle import resolve_throttle

#: The human's agent description in game records (``p1_spec`` / ``p2_spec``).
HUMAN = AgentSpec(name="human", kind="human")
#: The agent whose move ``hint`` shows.
HINT_AGENT = "mcts-co"
#: The experiment name of played games in their records.
EXPERIMENT = "play"

COLOUR_WORDS = {BLUE: "Blue", RED: "Red"}


@dataclass(frozen=True)
class PlyView:
    """One ply as the board display needs it.

    Attributes:
        ply: 1-based ply number. colour: BLUE or RED (the mover). who: ``"you"`` or the agent's name.
        text: the move in the record's notation (``c3``, ``C3``, ``c4:a4b4c4``).
        square: where the piece was placed.
        pushes: ``(from, to)`` squares of every pushed piece; ``to`` is None when it left the board.
        promoted: the squares of the group removed and promoted (empty when none).
        winner: 0, BLUE or RED after this ply.
        telemetry: the ply's telemetry entry (docs/architecture.md).
    """

    ply: int
    colour: int
    who: str
    text: str
    square: int
    pushes: tuple[tuple[int, int | None], ...]
    promoted: tuple[int, ...]
    winner: int
    telemetry: dict


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


class PlaySession:
    """One game between a human and an agent.

    Args:
        agent: the opponent's resolved AgentSpec.
        human_colour: BLUE (the human moves first, is p1) or RED.
        budget: the agent's budget per move (also the hint's).
        preset: the preset the agents were resolved under (recorded, and used for the hint).
        seed: the experiment seed; the game's seed derives from (settings hash, game_index).
        game_index: the game's index within its pairing in the store.
        throttle: cpu mode only: host CPU seconds per emulated second.
        max_plies: the ply cap (None: the default, contract.MAX_PLIES); like a run's, a cap other
            than the default is part of the settings hash and of the record.
    """

    def __init__(self, agent: AgentSpec, human_colour: int = BLUE, budget: Budget | None = None,
                 preset: str = "code-0.6.2", seed: int = 0, game_index: int = 0, throttle: float = 1.0,
                 max_plies: int | None = None):
        if human_colour not in (BLUE, RED):
            raise ValueError(f"human_colour must be BLUE (-1) or RED (+1), not {human_colour!r}")
        self.agent = agent
        self.human_colour = human_colour
        self.budget = budget or Budget()
        self.preset = preset
        p1, p2 = (HUMAN, agent) if human_colour == BLUE else (agent, HUMAN)
        chash = pairing_hash(seed, self.budget, preset, p1, p2, max_plies)
        self.task = GameTask.new(EXPERIMENT, chash, p1, p2, game_index, self.budget, preset, max_plies)
        # Children 0 and 1 are the ones play_game gives p1 and p2; child 2 is the hint's.
        p1_ss, p2_ss, hint_ss = np.random.SeedSequence(self.task.seed).spawn(3)
        self._player = make_player(agent, self.budget, p2_ss if human_colour == BLUE else p1_ss, throttle)
        self._hint_ss = hint_ss
        self._hinter: Player | None = None
        self._throttle = throttle
        self._plies: list[_Ply] = []
        self._work = new_work()
        self._cpu0 = time.process_time()
        #: why the plugin agent forfeited (the record's ``forfeit``), or None
        self.forfeit: ForfeitNotice | None = None
        self.undos = 0
        self.hints = 0

    # state ------------------------------------------------------------------------------------
    @property
    def state(self) -> np.ndarray:
        """The current position (read-only copy semantics: never written once played)."""
        return self._plies[-1].after if self._plies else _initial()

    @property
    def winner(self) -> int:
        """0 while the game goes on, else BLUE or RED (the human, when a plugin agent forfeited)."""
        if self.forfeit is not None:
            return self.human_colour
        return self._plies[-1].view.winner if self._plies else 0

    @property
    def over(self) -> bool:
        """True once someone has won or the ply cap (``task.ply_cap``) is reached."""
        return self.winner != 0 or len(self._plies) >= self.task.ply_cap

    @property
    def human_to_move(self) -> bool:
        return not self.over and int(self.state[TO_MOVE]) == self.human_colour

    @property
    def last(self) -> PlyView | None:
        return self._plies[-1].view if self._plies else None

    @property
    def moves(self) -> list[str]:
        return [p.view.text for p in self._plies]

    # the human's moves ----------------------------------------------------------------------
    def parse(self, text: str) -> tuple[Move, tuple[int, ...] | None]:
        """The human's move (and a ``:group`` suffix, if given), checked against the rules.

        Raises:
            InvalidMoveError: not a move string. IllegalMoveError: the rules forbid it here, or
            the suffix names a group that is not a candidate.
        """
        size, square, group = notation.parse_move(text)
        move = Position(self.state).check_legal(Move(size, square))
        if group is not None:
            choices = self.promotion_choices(move)
            if group not in choices:
                named = ", ".join(group_name(g) for g in choices) or "none"
                raise IllegalMoveError(f"{group_name(group)} is not a group you can promote after {move}; "
                                       f"candidates: {named}")
        return move, group

    def promotion_choices(self, move: Move) -> list[tuple[int, ...]]:
        """The groups the human must choose among after ``move`` (:meth:`Position.promotion_choices`)."""
        return Position(self.state).promotion_choices(move)

    def play_human(self, move: Move, choice: int | None = None) -> PlyView:
        """Play the human's move; ``choice`` indexes :meth:`promotion_choices` (needed when it is
        not empty).

        Raises:
            IllegalMoveError: not the human's turn, an illegal move, or a missing or bad choice.
        """
        if not self.human_to_move:
            raise IllegalMoveError("it is not your turn" if not self.over else "the game is over")
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
            self.forfeit = exc.notice(Colour.of(self.human_colour).side.opponent, self.agent.name)
            return None
        if code < 0:
            raise BoopError(f"agent {self.agent.name} found no move in {notation.format_position(st)!r}")
        view = self._apply(*decode_move(code), self._player.promotion, self._player.rng,
                           self.agent.name)
        view.telemetry.update(tel)
        return view

    def hint(self) -> tuple[Move, dict]:
        """What mcts-co (this session's preset and budget) would play here, and its telemetry.

        The hint searches with its own generator: asking for one never changes the agent's play.
        """
        if not self.human_to_move:
            raise IllegalMoveError("a hint is for your own turn")
        if self._hinter is None:
            spec = resolve_agent(HINT_AGENT, self.preset)
            self._hinter = make_player(spec, self.budget, self._hint_ss, self._throttle)
        self.hints += 1
        code, tel = self._hinter.select(self.state)
        return Move.from_code(code), tel

    def undo(self) -> int:
        """Take back the last full move: plies back to the human's previous turn. Returns how many
        plies were taken back (0 when the human has not moved yet)."""
        plies = self._plies
        mine = [i for i, p in enumerate(plies) if p.view.colour == self.human_colour]
        if not mine:
            return 0
        n = len(plies) - mine[-1]
        del plies[mine[-1]:]
        self.undos += 1
        return n

    def _apply(self, size: int, square: int, promo: int, rng: np.ndarray, who: str) -> PlyView:
        before = self.state
        mover = int(before[TO_MOVE])
        _, pushes = pushes_of(before, size, square)
        after = before.copy()
        winner, n, chosen = rules.apply_move_inplace(after, size, square, rules.REAL, promo, rng,
                                                     self._work.groups, self._work.scores, self._work.ties)
        group = tuple(int(q) for q in self._work.groups[chosen] if q >= 0) if chosen >= 0 else ()
        text = notation.format_move(size, square, group if n >= 2 else None)
        after.setflags(write=False)
        ply = len(self._plies) + 1
        side = Colour.of(mover).side
        name = HUMAN.name if who == "you" else self.agent.name
        view = PlyView(ply, mover, who, text, square, pushes, group, int(winner),
                       {"ply": ply, "player": side, "agent": name})
        self._plies.append(_Ply(view, before, after))
        return view

    # the record -----------------------------------------------------------------------------
    def record(self) -> GameRecord:
        """The finished game's record (docs/architecture.md), the human as agent ``human``."""
        winner = self.winner
        side = None if winner == 0 else Colour.of(winner).side
        telemetry = [dict(p.view.telemetry) for p in self._plies]
        players = (None, self._player) if self.human_colour == BLUE else (self._player, None)
        return build_record(self.task, side, self.moves, telemetry, time.process_time() - self._cpu0,
                            forfeit=self.forfeit, plugin_output=plugin_output(players))


def next_game_index(directory: str | Path, config_hash: str, pairing: str) -> int:
    """The first game index of ``(config_hash, pairing)`` not yet in the store at ``directory``."""
    taken = {r["game_index"] for r in GameStore(directory).scan().records
             if r["config_hash"] == config_hash and r["pairing"] == pairing}
    return next(i for i in itertools.count() if i not in taken)


def new_session(agent: AgentSpec, human_colour: int, budget: Budget, preset: str, seed: int,
                out: str | Path, max_plies: int | None = None) -> PlaySession:
    """A session whose game is the next free game of its pairing in the store at ``out``.

    Raises:
        StoreError: the store cannot be read.
    """
    throttle = resolve_throttle(budget.throttle) if budget.mode == "cpu" else 1.0
    probe = PlaySession(agent, human_colour, budget, preset, seed, 0, throttle, max_plies)
    index = next_game_index(out, probe.task.config_hash, probe.task.pairing)
    return probe if index == 0 else PlaySession(agent, human_colour, budget, preset, seed, index, throttle, max_plies)


def save(session: PlaySession, out: str | Path) -> GameRecord:
    """Append the finished game's record to the store at ``out`` and return it.

    If another session stored the same game index meanwhile, the record takes the next free one
    (its seed stays the one the agent played with).

    Raises:
        StoreError: the store cannot be written, or the game is not finished.
    """
    if not session.over:
        raise StoreError("only a finished game is saved")
    record = session.record()
    with GameStore(out).open() as writer:
        taken = {key for key in writer.scan_before.keys}
        index = record["game_index"]
        while game_key(record["config_hash"], record["pairing"], index) in taken:
            index += 1
        record["game_index"] = index
        writer.append(record)
    return record


def _initial() -> np.ndarray:
    st = initial_state()
    st.setflags(write=False)
    return st


def group_name(group: tuple[int, ...]) -> str:
    """``a4 b4 c4`` (or ``d6`` for a single piece)."""
    return " ".join(notation.square_name(q) for q in group)


# ----------------------------------------------------------------------------------------------
# Drawing


def render_board(st: np.ndarray, last: PlyView | None = None) -> str:
    """The board with the last move marked: ``[b]`` the piece just placed, ``b*`` a pushed piece
    where it landed; then both pools and whose turn it is."""
    marks: dict[int, str] = {}
    if last is not None:
        marks[last.square] = "[]"
        for _, to in last.pushes:
            if to is not None:
                marks[to] = " *"
    lines = ["      a  b  c  d  e  f"]
    for r in range(6):
        cells = []
        for c in range(6):
            sq = 6 * r + c
            ch = notation.cell_char(st[sq])
            mark = marks.get(sq)
            if mark == "[]" and st[sq] != 0:
                cells.append(f"[{ch}]")
            elif mark == " *" and st[sq] != 0:
                cells.append(f" {ch}*")
            else:
                cells.append(f" {ch} ")
        lines.append(f"  {6 - r}  " + "".join(cells))
    lines.append(
        f"  Blue pool: {st[POOL_BASE_BLUE]} small, {st[POOL_LARGE_BLUE]} large   "
        f"Red pool: {st[POOL_BASE_RED]} small, {st[POOL_LARGE_RED]} large"
    )
    return "\n".join(lines)


def describe(view: PlyView) -> str:
    """``ply 3: Red (mcts-co) plays d4; pushed c3->b2, e5 off the board; promoted a4 b4 c4``."""
    who = "you" if view.who == "you" else view.who
    parts = [f"ply {view.ply}: {COLOUR_WORDS[view.colour]} ({who}) plays {view.text.split(':')[0]}"]
    if view.pushes:
        parts.append("pushed " + ", ".join(
            f"{notation.square_name(a)}->{notation.square_name(b)}" if b is not None
            else f"{notation.square_name(a)} off the board" for a, b in view.pushes))
    if view.promoted and view.winner == 0:
        parts.append("promoted " + group_name(view.promoted))
    return "; ".join(parts)


def telemetry_line(name: str, tel: dict) -> str:
    """``  mcts-co: 87 iterations, 1502 solver calls, 1.00 device-s, 0.31 s host CPU``."""
    return f"  {name}: {cost_text(tel)}"


def cost_text(tel: dict) -> str:
    """What a move cost: iterations and device seconds (MCTS), solver calls, host CPU."""
    bits = []
    if tel.get("iterations"):
        bits.append(f"{tel['iterations']} iterations")
    if tel.get("solver_calls"):
        bits.append(f"{tel['solver_calls']} solver calls")
    if tel.get("device_seconds"):
        bits.append(f"{tel['device_seconds']:.2f} device-s")
    bits.append(f"{tel.get('host_cpu_seconds', 0.0):.2f} s host CPU")
    return ", ".join(bits)


class Spinner:
    """A one-line spinner on a terminal while the agent thinks (nothing when not a terminal).

    It runs in a thread: a compiled (numba) search holds the interpreter lock, so the spinner
    may pause during a long kernel call; it never changes what the agent plays."""

    FRAMES = "|/-\\"

    def __init__(self, stream: TextIO, text: str):
        self.stream = stream
        self.text = text
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Spinner:
        if _isatty(self.stream):
            self._thread = threading.Thread(target=self._spin, daemon=True)
            self._thread.start()
        return self

    def _spin(self) -> None:
        for frame in itertools.cycle(self.FRAMES):
            self.stream.write(f"\r{frame} {self.text}")
            self.stream.flush()
            if self._stop.wait(0.1):
                break

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self.stream.write("\r" + " " * (len(self.text) + 2) + "\r")
            self.stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


# ----------------------------------------------------------------------------------------------
# The dialogue

HELP = (
    "Type a move: c3 = a small piece on c3, C3 = a large one (c4:a4b4c4 also names the group to "
    "promote). Commands: undo (take back your last move and the reply), hint (what mcts-co would "
    "play), moves (your legal moves), quit."
)


@dataclass(frozen=True)
class Outcome:
    """How a dialogue ended: ``finished`` (a winner or the ply cap) or quit."""

    finished: bool
    winner: int = 0
    plies: int = 0


def run_dialogue(session: PlaySession, read: Callable[[str], str], write: Callable[[str], None],
                 spinner_stream: TextIO | None = None, hint_every_move: bool = False) -> Outcome:
    """Play ``session`` to its end through ``read(prompt) -> line`` and ``write(text)``.

    End of input (EOFError) while reading is a quit; Ctrl-C (KeyboardInterrupt, also raised for
    SIGTERM by ``boopexp play``) is left to the caller, which says what is kept and exits 130/143.
    """
    agent = session.agent.name
    you = COLOUR_WORDS[session.human_colour]
    write(f"You are {you} ({'first' if session.human_colour == BLUE else 'second'}), against {agent}. "
          "Type help for the commands.")
    write("On the board, [b] is the piece just placed and b* a piece it pushed.")
    write(render_board(session.state))
    while not session.over:
        if not session.human_to_move:
            with Spinner(spinner_stream or sys.stderr, f"{agent} is thinking..."):
                view = session.play_agent()
            if view is None:
                assert session.forfeit is not None  # play_agent returns None only after setting it
                write(f"{agent} forfeits ({session.forfeit['termination']}): {session.forfeit['error']}")
                break
            _show_ply(session, view, write)
            write(telemetry_line(agent, view.telemetry))
            continue
        if hint_every_move:
            _hint(session, write, spinner_stream)
        try:
            line = read(f"{you} to move (ply {int(session.state[MOVE_NUMBER]) + 1}) > ").strip()
        except EOFError:
            write("")
            return Outcome(False, plies=len(session.moves))
        command = line.lower()
        if not line:
            continue
        if command in ("quit", "exit", "q"):
            return Outcome(False, plies=len(session.moves))
        if command in ("help", "?"):
            write(HELP)
            continue
        if command == "undo":
            n = session.undo()
            if n == 0:
                write("Nothing to undo: you have not moved yet.")
            else:
                write(f"Took back {n} pl{'y' if n == 1 else 'ies'}.")
                write(render_board(session.state, session.last))
            continue
        if command == "hint":
            _hint(session, write, spinner_stream)
            continue
        if command == "moves":
            write("Legal moves: " + " ".join(str(m) for m in Position(session.state).legal_moves()))
            continue
        try:
            move, group = session.parse(line)
        except InvalidMoveError:
            write(f"{line!r} is neither a move nor a command: type c3 (a small piece), C3 (a large one) or help.")
            continue
        except IllegalMoveError as exc:
            write(f"Not a legal move: {_short(exc)}.")
            continue
        choices = session.promotion_choices(move)
        choice = None
        if choices:
            choice = choices.index(group) if group is not None else _ask_group(move, choices, read, write)
            if choice is None:
                return Outcome(False, plies=len(session.moves))
            if choice < 0:  # the human went back to the move prompt
                continue
        view = session.play_human(move, choice)
        _show_ply(session, view, write)
    winner = session.winner
    if winner == 0:
        write(f"No winner after {len(session.moves)} plies (the ply cap).")
    elif winner == session.human_colour:
        write(f"You win in {len(session.moves)} plies.")
    else:
        write(f"{agent} wins in {len(session.moves)} plies.")
    return Outcome(True, winner=winner, plies=len(session.moves))


def _show_ply(session: PlaySession, view: PlyView, write: Callable[[str], None]) -> None:
    write(describe(view))
    write(render_board(session.state, view))


def _hint(session: PlaySession, write: Callable[[str], None], spinner_stream: TextIO | None) -> None:
    with Spinner(spinner_stream or sys.stderr, f"{HINT_AGENT} is thinking about a hint..."):
        move, tel = session.hint()
    write(f"Hint: {HINT_AGENT} would play {move} ({cost_text(tel)})")


def _ask_group(move: Move, choices: list[tuple[int, ...]], read: Callable[[str], str],
               write: Callable[[str], None]) -> int | None:
    """The index of the group the human promotes; -1 to go back to the move; None to quit."""
    write(f"{move} lines up {len(choices)} groups; choose the one to promote:")
    for i, g in enumerate(choices, start=1):
        write(f"  {i}) {group_name(g)}")
    while True:
        try:
            answer = read(f"group [1-{len(choices)}, or back] > ").strip().lower()
        except EOFError:
            write("")
            return None
        if answer in ("quit", "exit", "q"):
            return None
        if answer in ("back", "undo"):
            return -1
        if answer.isdigit() and 1 <= int(answer) <= len(choices):
            return int(answer) - 1
        write(f"Choose a number from 1 to {len(choices)} (or back).")


def _short(exc: BaseException) -> str:
    """The library's message without the position string it quotes (the board is on screen)."""
    return re.sub(r" in '[^']*'", "", str(exc))
