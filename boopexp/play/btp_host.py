"""The host side of btp: ``EngineProcess``, the process of an engine agent (``engine: [command,
...]``; ``match.EnginePlayer`` plays it): one process per game in its own process group under a
memory limit, its stdout and stderr read by threads, anything but a legal ``bestmove`` in time a
forfeit, its processes killed at the game's end (its process group and every process carrying its
token).

The host side of btp (docs/protocol.md): an engine agent (``engine: [command, ...]``) as a player.

:class:`EngineProcess` starts one engine process for the game (its own process group, its address
space limited to ``memory_mb``), says ``btp``, sends its options, ``newgame seed S side p1|p2``
(the seat's seed as :func:`~boopexp.play.match.play_game` gives it), then ``position startpos moves
…`` and ``go`` for each of its moves. Its stdout and stderr are read by two threads, so a hung
engine costs ``move_timeout_s`` and a flood on stderr cannot block it; the last stderr lines are
kept for the forfeit's message. Lines are read to :data:`~boopexp.play.btp_lines.MAX_LINE` bytes
(:func:`~boopexp.play.btp_lines.read_lines`). Anything but a legal ``bestmove`` in time — no ``btpok``,
a timeout (checked at every line: a flood of ``info`` lines does not hold it off), an exit, a line
that is not btp or is too long — raises :class:`EngineFailure`, which
:class:`boopexp.play.match.EnginePlayer` turns into a forfeit (as it does an illegal move);
:meth:`EngineProcess.close` (the game's end, whatever it was) sends ``quit`` and kills the
engine's processes: its process group, and every process that carries its token
(:data:`TOKEN_VARIABLE`) or descends from one that does, so a child that left the group
(``setsid``) or outlived its parent ends too (an engine that failed is killed at once: a hung one
would not read ``quit``).
"""

from __future__ import annotations

import collections
import os
import queue
import resource
import secrets
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import IO

from boopexp.agents.budget import Budget
from boopexp.agents.specs import AgentSpec, option_text
from boopexp.game.sides import Side
from boopexp.games.registry import DEFAULT_GAME
from boopexp.play.btp_lines import MAX_LINE, LineTooLong, read_lines

#: stderr lines kept for a forfeit's message, and the characters kept of each.
STDERR_LINES, STDERR_LINE_CHARS = 5, 200
#: How long a quitting engine may take before its process group is killed (seconds).
QUIT_GRACE_S = 0.5
#: How long the host waits at most for a killed engine's processes to be gone (a zombie, ended
#: but not yet waited for by its parent, is gone: it holds no resource but its process-table entry).
KILL_WAIT_S = 0.2
#: How often a host waiting for an answer checks that the engine still runs (seconds).
POLL_S = 0.25
#: The ``id`` lines of an engine's ``btp`` answer the host keeps (to read ``id game``): a flood keeps no more.
_IDS_KEPT = 256
#: The lines an engine may write besides ``btpok`` and ``bestmove``.
_CHATTER = ("id", "option", "info", "readyok")
_EOF = None
#: The environment variable that marks an engine's processes with the engine's own token: every
#: process it starts inherits it (a new session or a lost parent does not shed it), and
#: :meth:`EngineProcess.close` kills every process that carries it (Linux: read in /proc).
TOKEN_VARIABLE = "BOOPEXP_ENGINE_TOKEN"
#: the host's clock (a test's fake clock stands in for it)
_now = time.monotonic


class EngineFailure(Exception):
    """The engine failed the protocol (one line: what it did, its last stderr lines): it forfeits."""


class EngineProcess:
    """One engine agent's process for one game (docs/protocol.md).

    Args:
        spec: the engine agent (its command, options, move time and memory limit).
        game_seed, side: what ``newgame`` tells it (the game's seed, the seat it plays).
        budget: the game's budget, sent with every ``go``.
        game: the game's name (``boop``, ``connect-four``, a user's module): an engine that names
            the games it plays (``id game G``) must name it and is told it (``setoption name game
            value G``); one that names none plays boop. only (docs/protocol.md, "Games").
    """

    def __init__(self, spec: AgentSpec, game_seed: int, side: Side, budget: Budget, game: str = DEFAULT_GAME):
        self.spec, self.game_seed, self.side, self.game = spec, game_seed, side, game
        self.proc: subprocess.Popen | None = None
        self.lines: queue.Queue[str | LineTooLong | None] = queue.Queue()
        self.token = secrets.token_hex(8)
        self.stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self.go = _go_command(budget)
        self.drain: threading.Thread | None = None
        #: it failed the protocol: it would not read ``quit`` either, so close kills it at once
        self.failed = False

    # -- the process ------------------------------------------------------------------------

    def _start(self) -> None:
        limit = self.spec.memory * 1024 * 1024

        def limits() -> None:  # in the child, before exec
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        try:
            self.proc = subprocess.Popen(list(self.spec.engine or ()), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, start_new_session=True, preexec_fn=limits,
                                         env={**os.environ, TOKEN_VARIABLE: self.token})
        except OSError as exc:
            raise EngineFailure(f"engine {self._command()} could not start: {exc}") from None
        assert self.proc.stdout is not None and self.proc.stderr is not None
        threading.Thread(target=_pump, args=(self.proc.stdout, self.lines), daemon=True).start()
        self.drain = threading.Thread(target=_drain, args=(self.proc.stderr, self.stderr), daemon=True)
        self.drain.start()
        self._send("btp")
        said: list[str] = []
        self._until("btpok", "'btp'", said)
        self._choose_game(said)
        for key, value in (self.spec.options or {}).items():
            self._send(f"setoption name {key} value {option_text(value)}")
        self._send(f"newgame seed {self.game_seed} side {self.side.value}")

    def _choose_game(self, said: list[str]) -> None:
        """Tell the engine the game (``setoption name game value G``) if its ``btp`` answer named
        the games it plays (``id game G`` lines); refuse an engine that does not play it."""
        named = [words[2] for words in (line.split() for line in said)
                 if len(words) == 3 and words[:2] == ["id", "game"]]
        if self.game not in (named or [DEFAULT_GAME]):
            plays = (f"its btp answer names the games {', '.join(named)}" if named else
                     f"its btp answer names no game ('id game G'), so it plays {DEFAULT_GAME} only")
            raise EngineFailure(f"engine {self._command()} does not play {self.game}: {plays} "
                                f"(docs/protocol.md, 'Games'){self.stderr_tail()}")
        if named:
            self._send(f"setoption name game value {self.game}")

    def close(self) -> None:
        """End the engine: ``quit`` and a short grace (not for an engine that failed: a hung one
        would spend the grace too), then its whole process group is killed."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                if not self.failed:
                    proc.stdin.write(b"quit\n")
                proc.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            proc.wait(0 if self.failed else QUIT_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
        try:  # what it started too: the group outlives its leader
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        gone = time.monotonic() + KILL_WAIT_S
        # until the kernel has ended every one of them (a zombie is ended: only a wait is missing);
        # again and again, as one may have started another before it was killed
        while (left := _engine_processes(proc.pid, self.token)) and time.monotonic() < gone:
            for pid in left:  # the group's, and those that left it (setsid) or outlived their parent
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.005)
        proc.wait()  # its pipes are closed by the threads that read them, at their end

    # -- one move -------------------------------------------------------------------------------

    def bestmove(self, start: str | None, moves: list[str]) -> str:
        """The engine's move after the game's ``moves`` from ``start`` (a position string; None:
        the empty board), as it wrote it; the engine is started at the first."""
        try:
            if self.proc is None:
                self._start()
            where = "startpos" if start is None else f"fen {start}"
            self._send(f"position {where}" + (" moves " + " ".join(moves) if moves else ""))
            self._send(self.go)
            answer = self._until("bestmove", f"'{self.go}'")
        except EngineFailure:
            self.failed = True
            raise
        return answer.split(maxsplit=1)[1].strip() if len(answer.split()) > 1 else ""

    # -- the pipes ------------------------------------------------------------------------------

    def _send(self, line: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(line.encode("ascii", "replace") + b"\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):
            raise self._lost(f"closed its input before {line.split()[0]!r}") from None

    def _until(self, word: str, after: str, said: list[str] | None = None) -> str:
        """The engine's first line starting with ``word``, within the move time; the chatter
        before it is skipped (kept in ``said`` when given); anything else forfeits."""
        deadline = _now() + self.spec.move_timeout
        while True:
            left = deadline - _now()
            if left <= 0:  # at every line: an engine that floods its chatter is late all the same
                raise EngineFailure(f"engine {self._command()} did not answer {after} with "
                                    f"'{word}' within {self.spec.move_timeout:g} s{self.stderr_tail()}")
            try:
                # in slices: an engine that died while a child of its holds its stdout gives no EOF
                line = self.lines.get(timeout=min(left, POLL_S))
            except queue.Empty:
                assert self.proc is not None
                if self.proc.poll() is not None and self.lines.empty():
                    raise self._lost(f"ended before answering {after} with '{word}'") from None
                continue
            if line is _EOF:
                raise self._lost(f"ended before answering {after} with '{word}'")
            if isinstance(line, LineTooLong):
                raise EngineFailure(f"engine {self._command()} answered {after} with a line of {line.size} bytes "
                                    f"(at most {MAX_LINE}): {line.head[:40]!r}...{self.stderr_tail()}")
            words = line.split()
            if words and words[0] == word:
                return line
            if words and words[0] in _CHATTER:
                if said is not None and words[0] == "id" and len(said) < _IDS_KEPT:
                    said.append(line)
                continue
            raise EngineFailure(f"engine {self._command()} answered {after} with {line[:80]!r}, "
                          f"not btp (expected '{word}'){self.stderr_tail()}")

    def _lost(self, what: str) -> EngineFailure:
        assert self.proc is not None
        try:
            code = self.proc.wait(QUIT_GRACE_S)
            how = f" (exit code {code})"
        except subprocess.TimeoutExpired:
            how = ""
        return EngineFailure(f"engine {self._command()} {what}{how}{self.stderr_tail()}")

    def _command(self) -> str:
        return " ".join(self.spec.engine or ())

    def stderr_tail(self) -> str:
        """``; its stderr: <its last lines>`` (to end a message with), or nothing if it wrote none."""
        if self.drain is not None and self.proc is not None and self.proc.poll() is not None:
            self.drain.join(0.1)  # an engine that died: its last words (a child may hold the pipe)
        lines = [line for line in self.stderr if line.strip()]
        return "; its stderr: " + " | ".join(lines) if lines else ""


def _go_command(budget: Budget) -> str:
    """``go`` with the game's budget: iterations, the device's or the wall's milliseconds (a cpu
    budget is the engine's own business: its seconds, as movetime)."""
    if budget.mode == "iterations":
        return f"go iterations {budget.iterations}"
    ms = round(budget.seconds * 1000)
    return f"go devicetime {ms}" if budget.mode == "device" else f"go movetime {ms}"


def _pump(stream: IO[bytes], lines: queue.Queue) -> None:
    """The engine's stdout, line by line, into ``lines`` (then None at its end)."""
    try:
        for line in read_lines(stream):
            lines.put(line)
    except (OSError, ValueError):
        pass
    finally:
        stream.close()
    lines.put(_EOF)


def _drain(stream: IO[bytes], last: collections.deque) -> None:
    """Read the engine's stderr to its end (a full pipe would block the engine), keeping its last lines."""
    try:
        for line in read_lines(stream):
            text = line if isinstance(line, str) else f"{line.head}... [a line of {line.size} bytes]"
            last.append(text[:STDERR_LINE_CHARS])
    except (OSError, ValueError):
        pass
    finally:
        stream.close()


def _engine_processes(pid: int, token: str) -> set[int]:
    """The engine's processes still running (zombies aside): ``pid``, every process whose
    environment carries the engine's ``token``, and the descendants of these (by parent: one that
    cleared its environment is found while its parent runs). Read in /proc (Linux); elsewhere
    none, and the process group is all :meth:`EngineProcess.close` kills."""
    mark = f"{TOKEN_VARIABLE}={token}".encode()
    parents: dict[int, int] = {}
    found: set[int] = set()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            state, ppid = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[:2]
            if state == b"Z":  # ended: only its parent's wait is missing
                continue
            parents[int(entry)] = int(ppid)
            if mark in Path(f"/proc/{entry}/environ").read_bytes().split(b"\0"):
                found.add(int(entry))
        except (OSError, ValueError):
            continue  # gone meanwhile, or another user's
    if pid in parents:
        found.add(pid)
    while True:  # and their descendants
        more = {p for p, parent in parents.items() if parent in found} - found
        if not more:
            return found
        found |= more
