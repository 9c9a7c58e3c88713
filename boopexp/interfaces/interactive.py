"""The terminal dialogue of ``boopexp play``: prompts, typed commands, the board after every ply
(``notation.render_marked``), the spinner.

:func:`run_dialogue` plays a :class:`boopexp.play.session.PlaySession` (the game's rules, tested
without a terminal) through ``read(prompt)`` and ``write(text)``: it draws the board after every
ply with the last move and its pushes marked (``notation.render_marked``), reads commands (a move,
``undo``, ``hint``, ``quit``, ``help``), lists numbered promotion choices, shows a spinner and the
telemetry line while the agent thinks, and answers a bad input with one line and a new prompt.
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

from boopexp.engine.state import MOVE_NUMBER
from boopexp.errors import IllegalMoveError, InvalidMoveError, show_value
from boopexp.game import notation
from boopexp.game.position import Move, Position
from boopexp.game.sides import Colour
from boopexp.play.session import HINT_AGENT, PlaySession, PlyView

COLOUR_WORDS = {Colour.BLUE: "Blue", Colour.RED: "Red"}
#: How many characters of a line that is neither a move nor a command are quoted back (a pasted
#: megabyte is not: errors.show_value shortens it).
ECHO_LIMIT = 40


def render_board(st: np.ndarray, last: PlyView | None = None) -> str:
    """The board with the last move marked: ``[b]`` the piece just placed, ``b*`` a pushed piece
    where it landed; then both pools (``notation.render_marked``)."""
    if last is None:
        return notation.render_marked(st)
    return notation.render_marked(st, last.square, (to for _, to in last.pushes if to is not None))


def describe(view: PlyView) -> str:
    """``ply 3: Red (mcts-co) plays d4; pushed c3->b2, e5 off the board; promoted a4 b4 c4``."""
    who = "you" if view.who == "you" else view.who
    parts = [f"ply {view.ply}: {COLOUR_WORDS[view.colour]} ({who}) plays {view.text.split(':')[0]}"]
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
    you = COLOUR_WORDS[session.human]
    write(f"You are {you} ({'first' if session.human is Colour.BLUE else 'second'}), against {agent}. "
          "Type help for the commands.")
    write("On the board, [b] is the piece just placed and b* a piece it pushed.")
    write(render_board(session.state))
    hinted: list[str] | None = None  # the moves of the position whose hint --hint has shown
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
        if hint_every_move and hinted != session.moves:  # once per position, not at every prompt
            hinted = session.moves
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
            write(f"{show_value(line, ECHO_LIMIT)} is neither a move nor a command: type c3 (a small piece), "
                  "C3 (a large one) or help.")
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
    if winner is None:
        write(f"No winner after {len(session.moves)} plies (the ply cap).")
    elif winner is session.human:
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
