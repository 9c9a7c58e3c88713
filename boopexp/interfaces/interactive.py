"""The terminal dialogue of ``boopexp play``: prompts, typed commands, the board after every ply
(boop.: ``notation.render_marked``; another game: its ``board_text``), the spinner.

:func:`run_dialogue` plays a :class:`boopexp.play.session.PlaySession` (the game's rules, tested
without a terminal) through ``read(prompt)`` and ``write(text)``: it draws the board after every
ply with the last move and its pushes marked (``notation.render_marked``; another game's board is
its ``board_text``, its moves typed in its notation), reads commands (a move, ``undo``, ``hint``,
``quit``, ``help``), lists numbered promotion choices, shows a spinner and the telemetry line while
the agent thinks, and answers a bad input with one line and a new prompt (in another game, naming
a few of the legal moves).
Saving the finished game is ``play_store``'s.
"""

from __future__ import annotations

import itertools
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

import numpy as np

from boopexp.errors import IllegalMoveError, InvalidMoveError, show_value
from boopexp.game import notation
from boopexp.game.position import Move
from boopexp.game.sides import Colour
from boopexp.play.session import HINT_AGENT, PlaySession, PlyView

COLOUR_WORDS = {Colour.BLUE: "Blue", Colour.RED: "Red"}
#: the sides' words in a game other than boop. (its board names its pieces its own way)
SIDE_WORDS = {Colour.BLUE: "p1", Colour.RED: "p2"}
#: How many characters of a game's own message about a bad move are shown.
REASON_LIMIT = 200
#: How many characters of a line that is neither a move nor a command are quoted back (a pasted
#: megabyte is not: errors.show_value shortens it).
ECHO_LIMIT = 40


def render_board(st: np.ndarray, last: PlyView | None = None) -> str:
    """The board with the last move marked: ``[b]`` the piece just placed, ``b*`` a pushed piece
    where it landed; then both pools (``notation.render_marked``)."""
    if last is None:
        return notation.render_marked(st)
    return notation.render_marked(st, last.square, (to for _, to in last.pushes if to is not None))


def show_board(session: PlaySession, last: PlyView | None = None) -> str:
    """The session's board: boop.'s with the last move marked (:func:`render_board`), another
    game's ``board_text`` (who is to move, or who has won)."""
    return render_board(session.state, last) if session.boop else session.position().render()


def describe(view: PlyView, words: dict[Colour, str] = COLOUR_WORDS) -> str:
    """``ply 3: Red (mcts-co) plays d4; pushed c3->b2, e5 off the board; promoted a4 b4 c4``."""
    who = "you" if view.who == "you" else view.who
    parts = [f"ply {view.ply}: {words[view.colour]} ({who}) plays {view.text.split(':')[0]}"]
    if view.pushes:
        parts.append("pushed " + ", ".join(
            f"{notation.square_name(a)}->{notation.square_name(b)}" if b is not None
            else f"{notation.square_name(a)} off the board" for a, b in view.pushes))
    if view.promoted and view.winner is None:
        parts.append("promoted " + notation.group_name(view.promoted))
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
#: :data:`HELP` in a game other than boop.
GAME_HELP = (
    "Type a move as {game} writes it (moves lists your legal moves). Commands: undo (take back your last move "
    "and the reply), hint (what mcts-co would play), moves, quit."
)


@dataclass(frozen=True)
class Outcome:
    """How a dialogue ended: ``finished`` (a winner or the ply cap) or quit."""

    finished: bool
    winner: Colour | None = None
    plies: int = 0


def run_dialogue(session: PlaySession, read: Callable[[str], str], write: Callable[[str], None],
                 spinner_stream: TextIO | None = None, hint_every_move: bool = False) -> Outcome:
    """Play ``session`` to its end through ``read(prompt) -> line`` and ``write(text)``.

    End of input (EOFError) while reading is a quit; Ctrl-C (KeyboardInterrupt, also raised for
    SIGTERM by ``boopexp play``) is left to the caller, which says what is kept and exits 130/143.
    """
    agent = session.agent.name
    words = COLOUR_WORDS if session.boop else SIDE_WORDS
    you = words[session.human]
    game = "" if session.boop else f" at {session.game.name}"
    write(f"You are {you} ({'first' if session.human is Colour.BLUE else 'second'}), against {agent}{game}. "
          "Type help for the commands.")
    if session.boop:
        write("On the board, [b] is the piece just placed and b* a piece it pushed.")
    write(show_board(session))
    hinted: list[str] | None = None  # the moves of the position whose hint --hint has shown
    while not session.over:
        if not session.human_to_move:
            with Spinner(spinner_stream or sys.stderr, f"{agent} is thinking..."):
                view = session.play_agent()
            if view is None:
                assert session.forfeit is not None  # play_agent returns None only after setting it
                write(f"{agent} forfeits ({session.forfeit['termination']}): {session.forfeit['error']}")
                break
            _show_ply(session, view, write, words)
            write(telemetry_line(agent, view.telemetry))
            continue
        if hint_every_move and hinted != session.moves:  # once per position, not at every prompt
            hinted = session.moves
            _hint(session, write, spinner_stream)
        try:
            line = read(f"{you} to move (ply {session.ply}) > ").strip()
        except EOFError:
            write("")
            return Outcome(False, plies=len(session.moves))
        command = line.lower()
        if not line:
            continue
        if command in ("quit", "exit", "q"):
            return Outcome(False, plies=len(session.moves))
        if command in ("help", "?"):
            write(HELP if session.boop else GAME_HELP.format(game=session.game.name))
            continue
        if command == "undo":
            n = session.undo()
            if n == 0:
                write("Nothing to undo: you have not moved yet.")
            else:
                write(f"Took back {n} pl{'y' if n == 1 else 'ies'}.")
                write(show_board(session, session.last))
            continue
        if command == "hint":
            _hint(session, write, spinner_stream)
            continue
        if command == "moves":
            write("Legal moves: " + " ".join(str(m) for m in session.position().legal_moves()))
            continue
        try:
            move, group = session.parse(line)
        except InvalidMoveError as exc:
            write(f"{show_value(line, ECHO_LIMIT)} is neither a move nor a command: type c3 (a small piece), "
                  "C3 (a large one) or help." if session.boop else _not_a_move(session, exc))
            continue
        except IllegalMoveError as exc:
            write(f"Not a legal move: {_short(exc)}." if session.boop else _not_a_move(session, exc))
            continue
        choices = session.promotion_choices(move)
        choice = None
        if choices:
            assert isinstance(move, Move)  # boop.'s: only its moves have promotion choices
            choice = choices.index(group) if group is not None else _ask_group(move, choices, read, write)
            if choice is None:
                return Outcome(False, plies=len(session.moves))
            if choice < 0:  # the human went back to the move prompt
                continue
        view = session.play_human(move, choice)
        _show_ply(session, view, write, words)
    winner = session.winner
    if session.draw:
        write(f"A draw after {len(session.moves)} plies.")
    elif winner is None:
        write(f"No winner after {len(session.moves)} plies (the ply cap).")
    elif winner is session.human:
        write(f"You win in {len(session.moves)} plies.")
    else:
        write(f"{agent} wins in {len(session.moves)} plies.")
    return Outcome(True, winner=winner, plies=len(session.moves))


def _show_ply(session: PlaySession, view: PlyView, write: Callable[[str], None],
              words: dict[Colour, str] = COLOUR_WORDS) -> None:
    write(describe(view, words))
    write(show_board(session, view))


def _not_a_move(session: PlaySession, exc: BaseException) -> str:
    """One line for a typed line that is no legal move of a game other than boop.: the game's
    reason (the position string it may quote left out), and a few legal moves."""
    reason = _short(exc)
    if len(reason) > REASON_LIMIT:
        reason = reason[:REASON_LIMIT] + "…"
    if "legal moves" not in reason:
        reason += f"; legal moves: {session.game_position().legal_text()}"
    return f"Not a move here: {reason}. Type help for the commands."


def _hint(session: PlaySession, write: Callable[[str], None], spinner_stream: TextIO | None) -> None:
    with Spinner(spinner_stream or sys.stderr, f"{HINT_AGENT} is thinking about a hint..."):
        move, tel = session.hint()
    write(f"Hint: {HINT_AGENT} would play {move} ({cost_text(tel)})")


def _ask_group(move: Move, choices: list[tuple[int, ...]], read: Callable[[str], str],
               write: Callable[[str], None]) -> int | None:
    """The index of the group the human promotes; -1 to go back to the move; None to quit."""
    write(f"{move} lines up {len(choices)} groups; choose the one to promote:")
    for i, g in enumerate(choices, start=1):
        write(f"  {i}) {notation.group_name(g)}")
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
