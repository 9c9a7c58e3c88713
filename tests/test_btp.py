"""btp, the boop. text protocol (docs/protocol.md): ``boopexp engine`` and its session.

The conformance tests play games between two engine sessions relayed by a tiny host written
here (the protocol's text only: ``position startpos moves …`` / ``go iterations N`` / the moves
they answer) and compare them with the same agents' in-process games, move for move, in both seats.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from boopexp.agents.budget import Budget
from boopexp.agents.specs import resolve_agent
from boopexp.experiments.config import load_yaml
from boopexp.game.position import Position
from boopexp.games import registry
from boopexp.games.position import GamePosition
from boopexp.play.btp import EngineSession
from boopexp.play.contract import GameTask
from boopexp.play.match import play_game

ITERATIONS = 6


def _session(agent: str, game: str = "boop") -> EngineSession:
    params = registry.get(game).paper_params()

    def build(options):  # the values read as boopexp engine reads them
        return resolve_agent(agent, params=params, overrides={k: load_yaml(v) for k, v in options.items()})

    return EngineSession(build, Budget(mode="iterations", iterations=3), game=registry.get(game))


def _bestmove(lines: list[str]) -> str:
    assert lines and lines[-1].startswith("bestmove "), lines
    return lines[-1].split()[1]


def _relay(ask, seed: int, cap: int) -> list[str]:
    """A game between ``ask(seat, line) -> answer lines`` engines, as a btp host plays it."""
    for seat, side in ((0, "p1"), (1, "p2")):
        ask(seat, "btp")
        ask(seat, f"newgame seed {seed} side {side}")
    position, moves = Position.initial(), []
    while len(moves) < cap:
        seat = len(moves) % 2
        ask(seat, "position startpos" + (" moves " + " ".join(moves) if moves else ""))
        move = _bestmove(ask(seat, f"go iterations {ITERATIONS}"))
        result = position.play(move)  # an explicit group, or none to choose: the engine's choice is the move
        moves.append(move)
        position = result.position
        if result.winner is not None:
            break
    return moves


def _in_process(p1: str, p2: str, seed: int) -> list[str]:
    task = GameTask("t", "ab" * 8, f"{p1} vs {p2}", 0, resolve_agent(p1), resolve_agent(p2),
                    Budget(mode="iterations", iterations=ITERATIONS), "code-0.6.2", seed, max_plies=60)
    return play_game(task)["moves"]


@pytest.mark.parametrize(("p1", "p2", "seed"), [("mcts-co", "random", 3), ("random", "mcts-co", 4),
                                                ("heuristics", "mcts-co", 5), ("mcts-co", "heuristics", 6),
                                                ("random", "heuristics", 11)])
def test_conformance_sessions_equal_in_process_games(p1, p2, seed):
    sessions = (_session(p1), _session(p2))
    moves = _relay(lambda seat, line: sessions[seat].handle(line), seed, 60)
    assert moves == _in_process(p1, p2, seed)
    assert any(":" in m for m in moves) or len(moves) > 10  # a real game, not two plies


def test_conformance_boopexp_engine_processes_both_seats():
    """Two ``boopexp engine`` processes (mcts-co and random), relayed over their pipes, in both seats."""
    for p1, p2, seed in (("mcts-co", "random", 8), ("random", "mcts-co", 9)):
        procs: list[subprocess.Popen] = [
            subprocess.Popen([sys.executable, "-m", "boopexp", "engine", "--agent", name], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, bufsize=1) for name in (p1, p2)]
        try:
            def ask(seat: int, line: str, procs: list[subprocess.Popen] = procs) -> list[str]:
                proc = procs[seat]
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(line + "\n")
                if line.split()[0] not in ("btp", "go"):
                    return []
                out = []
                while True:
                    answer = proc.stdout.readline().strip()
                    assert answer, f"engine {seat} closed its output after {line!r}"
                    out.append(answer)
                    if answer == "btpok" or answer.startswith("bestmove"):
                        return out

            moves = _relay(ask, seed, 60)
        finally:
            for proc in procs:
                proc.communicate("quit\n", timeout=30)
        assert [p.returncode for p in procs] == [0, 0]
        assert moves == _in_process(p1, p2, seed)


def test_handshake_and_unknown_commands():
    s = _session("mcts-co")
    answer = s.handle("btp")
    assert answer[0] == "id name boopexp mcts-co" and answer[-1] == "btpok"
    assert "option name uct_c" in answer and "option name seed" in answer
    assert "id game boop" in answer and "option name game" in answer
    assert s.handle("setoption name game value boop") == []  # a host tells it the game it named
    assert s.handle("frobnicate a b c") == [] and s.handle("") == [] and s.handle("isready") == ["readyok"]


@pytest.mark.parametrize(("line", "says"), [
    ("position startpos moves c3 z9", "move 2 'z9'"),
    ("position startpos moves c3 c3", "occupied"),
    ("position fen ......", "is not a position"),
    ("position middlegame", "expected 'startpos' or 'fen"),
])
def test_bad_position_is_an_info_error_then_no_move(line, says):
    s = _session("random")
    (error,) = s.handle(line)
    assert error.startswith("info error ") and says in error
    assert s.handle("go") == ["info error no position: send 'position startpos [moves ...]' first", "bestmove (none)"]
    s.handle("position startpos moves c3")  # and it recovers
    assert _bestmove(s.handle("go")) != "(none)"


@pytest.mark.parametrize(("line", "says"), [
    ("go iterations 0", "must be a positive integer"), ("go iterations 5 movetime 3", "give one limit"),
    ("setoption name uct_c value -1", "uct_c"), ("setoption name seed value x", "seed 'x'"),
    ("newgame side p3", "side 'p3'"), ("setoption uct_c 1", "expected 'setoption name NAME value VALUE'"),
    # a key given twice is a mistake, not the last one's value
    ("go iterations 2 iterations 3", "go 'iterations 2 iterations 3': iterations given twice"),
    ("newgame seed 1 seed 2", "newgame 'seed 1 seed 2': seed given twice"),
])
def test_bad_commands_are_info_errors(line, says):
    s = _session("mcts-co")
    s.handle("position startpos")
    error, *rest = s.handle(line)
    assert error.startswith("info error ") and says in error, error
    assert rest == (["bestmove (none)"] if line.startswith("go") else [])  # a go is always answered


@pytest.mark.parametrize(("line", "says"), [
    ("go iterations 1e5", ["go iterations '1e5' must be an integer"]),
    ("go iterations 12.5", ["go iterations '12.5' must be an integer"]),
    ("go devicetime abc", ["go devicetime 'abc' must be a number of milliseconds"]),
    ("go movetime nan", ["budget.seconds = nan must be a positive number"]),
    ("go devicetime 1e999", ["budget.seconds = inf must be a positive number"]),
    # a limit the search cannot count: answered in the protocol (not an OverflowError's traceback)
    ("go iterations 99999999999999999999999", ["go"]),
    # beyond the budget's bounds
    ("go iterations 9223372036854775807", ["go iterations 9223372036854775807: budget.", "at most"]),
    ("go devicetime 1e300", ["go devicetime 1e300: budget.", "at most"]),
    # 5,000 digits (more than Python reads as an int): named briefly with what is allowed, neither
    # "must be an integer" (it is one) nor the whole input
    ("go iterations " + "9" * 5000, ["go iterations '99999", "at most"]),
    ("go movetime " + "9" * 5000, ["go movetime 99999", "at most"]),
    ("newgame seed " + "9" * 5000, ["seed '99999", "0..2^64-1"]),
    # issue 33: OverflowError / int() messages, or a full-width digit read as its ASCII one
    ("position fen ....../....../....../....../....../...... 8,0 8,0 b 0,0 99999999999999999999", ["move number"]),
    ("position fen ....../....../....../....../....../...... 99999999999999999999,0 8,0 b", ["Blue's pool"]),
    ("setoption name uct_c value " + "9" * 5000, ["uct_c: a value of 5000 characters; at most 4096 are read"]),
    ("setoption name seed value ３", ["seed '３'"]),
    ("newgame seed 1_0", ["seed '1_0'"]),
    ("go iterations ３", ["go iterations '３' must be"]),
    ("go movetime １", ["go movetime '１' must be"]),
])
def test_a_refused_number_is_one_short_info_error_and_the_engine_goes_on(line, says):
    """A limit, seed, option value or position count read through its check (ASCII digits,
    bounded): one ``info error`` (a ``go`` still answered ``bestmove (none)``), and the engine goes
    on from a position."""
    s = _session("mcts-co")
    s.handle("position startpos")
    error, *rest = s.handle(line)
    assert error.startswith("info error ") and all(part in error for part in says), error
    assert len(error) < 300 and (len(line) < 1000 or not error.endswith("must be an integer")), error
    assert rest == (["bestmove (none)"] if line.startswith("go") else []), rest
    s.handle("position startpos")  # a refused position leaves none
    assert _bestmove(s.handle("go iterations 2")) != "(none)"


def _engine_run(agent: str, lines: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``boopexp engine --agent AGENT`` given ``lines`` then the end of its input; the generous
    timeout is a hang's bound (the numba cache may be cold on a loaded machine), not a measure."""
    return subprocess.run([sys.executable, "-m", "boopexp", "engine", "--agent", agent], input=lines,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("agent", ["mcts-co", "alphabeta"])
@pytest.mark.parametrize("end", ["stop\nisready\nquit\n", "", "quit\n"])
def test_stop_quit_or_the_end_of_input_ends_a_search_with_its_best_move(agent, end):
    """A ten-minute search (``go movetime 600000``) ends at ``stop`` (then the engine reads on),
    at ``quit`` or at the end of its input, answering its best move so far: the engine reads its
    input while it searches."""
    proc = _engine_run(agent, "position startpos moves c3 d4\ngo movetime 600000\n" + end)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    out = proc.stdout.split("\n")
    move = _bestmove([line for line in out if line.startswith("bestmove")])
    Position.initial().play("c3").position.play("d4").position.play(move)  # a legal move, not (none)
    assert ("readyok" in out) == end.startswith("stop")


class _Engine:
    """A ``boopexp engine`` process whose output lines are read by a thread, so that a test waits
    for an answer with a bound (a hang fails the test instead of holding it)."""

    def __init__(self, agent: str):
        import queue
        import threading

        self.proc = subprocess.Popen([sys.executable, "-m", "boopexp", "engine", "--agent", agent],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, bufsize=1)
        self.out: queue.Queue[str | None] = queue.Queue()

        def pump(stream) -> None:
            for line in stream:
                self.out.put(line.rstrip("\n"))
            self.out.put(None)

        threading.Thread(target=pump, args=(self.proc.stdout,), daemon=True).start()
        self.send("isready")  # the generous bound of its start (a cold numba cache on a loaded machine)
        assert self.next(300) == "readyok"

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def next(self, timeout: float = 60) -> str | None:
        """The engine's next line (None at the end of its output); a hang's bound, not a measure."""
        import queue

        try:
            return self.out.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no answer within {timeout} s") from None

    def close(self) -> int:
        """Its input closed: its exit code (killed, and the test failed, if it does not end)."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("the engine did not end at the end of its input") from None


@pytest.mark.parametrize(("agent", "end"), [("mcts-co", "stop"), ("mcts-co", "quit"), ("mcts-co", ""),
                                            ("alphabeta", "")])
def test_a_go_sent_during_a_search_hides_no_stop_quit_or_end_of_input(agent, end):
    """Two ten-minute ``go``s, then ``stop``, ``quit`` or the end of input: both are answered at
    once (the queued ``go`` is stopped too, it was sent before), and a ``stop`` leaves the engine
    reading on. The reader once waited for each ``go`` to begin: the second hid what followed it."""
    engine = _Engine(agent)
    try:
        engine.send("position startpos moves c3 d4\ngo movetime 600000\ngo movetime 600000")
        if end:
            engine.send(end)
        else:
            engine.proc.stdin.close()  # type: ignore[union-attr]
        moves: list[str] = []
        while len(moves) < 2:
            line = engine.next()
            assert line is not None, f"the engine ended after {moves}"
            moves += [line] if line.startswith("bestmove") else []
        for move in moves:
            Position.initial().play("c3").position.play("d4").position.play(move.split()[1])
        if end == "stop":
            engine.send("isready")
            assert engine.next() == "readyok"
            engine.send("quit")
    finally:
        if not engine.proc.stdin.closed:  # type: ignore[union-attr]
            code = engine.close()
        else:
            code = engine.proc.wait(60)
    assert code == 0


def test_isready_during_a_search_is_answered_at_once():
    """``isready`` read while a search runs is answered ``readyok`` at once, the search going on
    (UCI's way); ``stop`` then ends it."""
    engine = _Engine("mcts-co")
    try:
        engine.send("position startpos\ngo movetime 600000\nisready")
        assert engine.next() == "readyok"
        engine.send("stop")
        assert engine.next().startswith("info telemetry")  # type: ignore[union-attr]
        assert engine.next().startswith("bestmove ")  # type: ignore[union-attr]
    finally:
        assert engine.close() == 0


def test_a_stop_ends_the_searches_asked_before_it_not_those_after():
    """The protocol's order decides: a ``stop`` ends the running search and the ``go``s queued
    before it (each answered with its best move at once); a ``go`` after it searches its whole limit."""
    import io
    import os
    import queue
    import threading

    from boopexp.play.btp import serve

    answers: queue.Queue[str] = queue.Queue()

    class Out(io.StringIO):
        def write(self, text: str) -> int:
            for line in text.splitlines():
                answers.put(line)
            return len(text)

    read, write = os.pipe()
    session = _session("mcts-co")
    server = threading.Thread(target=serve, args=(session, os.fdopen(read, "rb"), Out()), daemon=True)
    server.start()
    with os.fdopen(write, "wb", buffering=0) as host:
        host.write(b"position startpos\ngo movetime 600000\ngo movetime 600000\nstop\ngo iterations 30\n")
        lines = [answers.get(timeout=120) for _ in range(6)]
        assert [line.split()[0] for line in lines] == ["info", "bestmove"] * 3, lines
        assert '"iterations":30,' in lines[4]
        host.write(b"quit\n")
    server.join(60)
    assert not server.is_alive()


def test_a_stop_ends_only_the_search_it_follows():
    """``stop`` between searches does nothing; the search of a ``go`` read before it is not cut."""
    s = _session("mcts-co")
    assert s.handle("stop") == []
    s.handle("position startpos")
    telemetry = s.handle("go iterations 30")[0]
    assert '"iterations":30,' in telemetry


def test_engine_searches_can_be_stopped_in_process():
    """The searches read their ``stop`` flag: MCTS between its kernel calls (one iteration, then the
    move), alpha-beta inside its deepening (depth 1 completes, the next is cut at once)."""
    import numpy as np

    from boopexp.agents.budget import Budget, device_costs
    from boopexp.engine import alphabeta, mcts
    from boopexp.engine.rng import new_rng_state
    from boopexp.engine.state import initial_state

    stop, costs, budget = np.ones(1, dtype=np.int64), device_costs("android-2023"), Budget(mode="wall", seconds=600)
    code, tel = mcts.search(initial_state(), resolve_agent("mcts-co").mcts, budget, costs, new_rng_state(1), stop=stop)
    assert code >= 0 and tel["iterations"] == 1
    code, _, tel = alphabeta.search(initial_state(), resolve_agent("alphabeta").alphabeta, budget, costs,
                                    new_rng_state(1), stop=stop)
    assert code >= 0 and tel["search_depth"] == 1


def test_a_move_after_the_game_is_won_is_an_info_error():
    s = _session("random")
    record = _in_process("random", "random", 1)  # Blue wins at its last move
    assert s.handle(f"position startpos moves {' '.join(record)}") == []
    (error,) = s.handle(f"position startpos moves {' '.join(record)} b1")
    assert error == f"info error move {len(record) + 1} 'b1': the game is over (Blue has won)"
    assert s.handle("go") == ["info error no position: send 'position startpos [moves ...]' first",
                              "bestmove (none)"]


def _peak_rss_kb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak memory in /proc (Linux)")
def test_an_over_long_line_is_skipped_unread_and_answered():
    """A 9 MB ``position`` line (3 million moves; MAX_LINE is 2 MiB) is answered ``info error``,
    read in pieces that are dropped (the engine's peak memory grows by less than 40 MB; the whole
    line split into its moves took 1.8 GB for 50 MB), and the board is no longer the game's."""
    from boopexp.play.btp_lines import MAX_LINE

    proc = subprocess.Popen([sys.executable, "-m", "boopexp", "engine", "--agent", "random"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("isready\n")
        assert proc.stdout.readline() == "readyok\n"
        before = _peak_rss_kb(proc.pid)
        line = "position startpos moves " + "c3 " * 3_000_000
        proc.stdin.write(line + "\nisready\ngo\n")
        error = proc.stdout.readline()
        assert error.startswith(f"info error a line of {len(line) + 1} bytes starting 'position startpos moves c3")
        assert f"at most {MAX_LINE} bytes are read" in error
        assert proc.stdout.readline() == "readyok\n"
        assert proc.stdout.readline().startswith("info error no position")
        assert proc.stdout.readline() == "bestmove (none)\n"
        assert _peak_rss_kb(proc.pid) - before < 40_000
    finally:
        proc.communicate("quit\n", timeout=60)
    assert proc.returncode == 0


def test_the_longest_game_s_position_line_fits_a_line():
    from boopexp.play.btp_lines import MAX_LINE
    from boopexp.play.contract import MAX_PLIES_LIMIT

    start = "....../....../....../....../....../...... 8,0 8,0 b 0,0 0"
    assert len(f"position fen {start} moves " + "C4:a4b4c4 " * MAX_PLIES_LIMIT + "\n") <= MAX_LINE


def test_a_move_with_a_choice_must_name_its_group_and_a_won_game_has_no_move():
    s = _session("random")
    record = _in_process("random", "random", 1)  # its first move with a choice: b3:d1 at ply 19
    grouped = [i for i, m in enumerate(record) if ":" in m]
    assert grouped, record
    i = grouped[0]
    bare = record[i].split(":")[0]
    prefix = " ".join(record[:i])
    (error,) = s.handle(f"position startpos moves {prefix} {bare}")
    assert error.startswith(f"info error move {i + 1} '{bare}': '{bare}' leaves the mover a choice of promoted "
                            "group: name it")
    assert s.handle(f"position startpos moves {' '.join(record)}") == []
    assert s.handle("go") == ["info error the game is over in this position", "bestmove (none)"]


@pytest.mark.parametrize(("name", "allowed"), [("uct_c", "a number in [0.0, 100.0]"),
                                             ("preselect_m", "an integer in [0, 72]"),
                                             ("seed", "an integer 0..2^64-1"),
                                             ("side", "p1 (Blue, moves first) or p2 (Red)")])
def test_an_over_long_option_value_is_refused_naming_the_option_and_what_it_takes(name, allowed):
    """An option's value is at most MAX_OPTION_CHARS characters, as a host's config holds them: a
    5000-digit number is answered in one short line naming the option and its values (not Python's
    "Exceeds the limit (4300 digits)"), and the option keeps its value."""
    from boopexp.agents.specs import MAX_OPTION_CHARS

    s = _session("mcts-co")
    (error,) = s.handle(f"setoption name {name} value {'9' * 5000}")
    assert error == (f"info error setoption name {name}: a value of 5000 characters; at most {MAX_OPTION_CHARS} "
                     f"are read ({name}: {allowed})")
    assert s.overrides == {} and s.seed == 0 and s.side is None


def test_setoption_parameter_changes_the_agent():
    s = _session("mcts-co")
    assert s.handle("setoption name uct_c value 0.5") == []
    assert s.spec.mcts is not None and s.spec.mcts.uct_c == 0.5


def test_engine_command_refuses_an_unknown_agent_in_one_line():
    proc = subprocess.run([sys.executable, "-m", "boopexp", "engine", "--agent", "nobody"], input="quit\n",
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "unknown agent 'nobody'" in proc.stderr and "Traceback" not in proc.stderr


def test_engine_command_reads_its_config_once(tmp_path, monkeypatch):
    """``boopexp engine --config`` builds its agents (the first and every ``setoption``'s) from the
    config it read for the settings: one read of the file, not a second load that could disagree."""
    from click.testing import CliRunner

    from boopexp.experiments import config as config_module
    from boopexp.interfaces.cli import main

    path = tmp_path / "e.yaml"
    path.write_text("name: e\nseed: 5\ngames_per_side: 1\nbudget: {mode: iterations, iterations: 2}\n"
                    "agents: {wide: {base: mcts-co, uct_c: 0.9}}\npairings: [[wide, random]]\n")
    loads = []
    real = config_module.load_config
    monkeypatch.setattr(config_module, "load_config", lambda *a, **k: loads.append(a) or real(*a, **k))
    result = CliRunner().invoke(main, ["engine", "--agent", "wide", "--config", str(path)],
                                input="setoption name preselect_m value 3\nposition startpos\ngo iterations 2\nquit\n")
    assert result.exit_code == 0, result.output
    assert "bestmove " in result.output and "info error" not in result.output
    assert len(loads) == 1


def test_read_lines_bounds_every_line_however_it_arrives():
    """Lines of at most ``limit`` bytes (their end included) come whole; a longer one is a
    LineTooLong with its first bytes and its size, whether it comes in one piece or byte by byte."""
    import io

    from boopexp.play.btp_lines import LineTooLong, read_lines

    class Trickle(io.RawIOBase):
        def __init__(self, data: bytes):
            self.data = data

        def read1(self, size: int = -1) -> bytes:
            piece, self.data = self.data[:3], self.data[3:]
            return piece

    data = b"abc\r\n\n" + b"a" * 25 + b"\nok\n" + b"b" * 9 + b"\n" + b"c" * 10 + b"\nlast"
    for stream in (io.BytesIO(data), Trickle(data)):
        lines = list(read_lines(stream, limit=10))
        assert lines[:3] == ["abc", "", LineTooLong("a" * len(lines[2].head), 26)] and lines[2].head
        assert lines[3:] == ["ok", "b" * 9, LineTooLong(lines[5].head, 11), "last"], lines
        assert lines[5].head.startswith("c")




# -- games other than boop. (docs/protocol.md, "Games") -------------------------------------------


def _relay_game(game: str, ask, seed: int, cap: int) -> list[str]:
    """:func:`_relay` for a game other than boop.: the host tells each engine the game first."""
    for seat, side in ((0, "p1"), (1, "p2")):
        assert f"id game {game}" in ask(seat, "btp")
        assert ask(seat, f"setoption name game value {game}") == []
        ask(seat, f"newgame seed {seed} side {side}")
    position, moves = GamePosition(registry.get(game)), []
    while len(moves) < cap and not position.over:
        seat = len(moves) % 2
        ask(seat, "position startpos" + (" moves " + " ".join(moves) if moves else ""))
        move = _bestmove(ask(seat, f"go iterations {ITERATIONS}"))
        position = position.play(move).position
        moves.append(move)
    return moves


@pytest.mark.parametrize(("p1", "p2", "seed"), [("mcts-co", "random", 3), ("heuristics", "alphabeta", 4)])
def test_conformance_connect_four_sessions_equal_in_process_games(p1, p2, seed):
    """Two engine sessions of ``connect-four`` relayed in the game's notation play the in-process
    game move for move (the agents resolved with the game's parameters, as a config's are)."""
    sessions = (_session(p1, "connect-four"), _session(p2, "connect-four"))
    moves = _relay_game("connect-four", lambda seat, line: sessions[seat].handle(line), seed, 42)
    params = registry.get("connect-four").paper_params()
    task = GameTask("t", "ab" * 8, f"{p1} vs {p2}", 0, resolve_agent(p1, params=params),
                    resolve_agent(p2, params=params), Budget(mode="iterations", iterations=ITERATIONS), "code-0.6.2",
                    seed, game="connect-four")
    record = play_game(task)
    assert moves == record["moves"] and len(moves) >= 7 and all(m in "abcdefg" for m in moves)


@pytest.mark.parametrize(("line", "says"), [
    ("position startpos moves d h", "move 2 'h': 'h' is not a Connect Four move"),
    ("position startpos moves " + "a " * 7, "move 7 'a': 'a': column a is full; legal moves: b, c, d"),
    ("position fen ......./......./......./......./..x..../....... o", "the piece on c2 floats above an empty cell"),
    ("position fen ....../....../....../....../....../...... 8,0 8,0 b 0,0 0", "is not a Connect Four position"),
    ("setoption name game value boop", "game 'boop': this engine plays connect-four only"),
])
def test_a_connect_four_engine_refuses_another_games_moves_and_positions(line, says):
    s = _session("random", "connect-four")
    error, *rest = s.handle(line)
    assert error.startswith("info error ") and says in error, error
    if line.startswith("position"):
        assert s.handle("go")[-1] == "bestmove (none)"
    s.handle("position startpos moves d")
    assert _bestmove(s.handle("go")) in "abcdefg"


def test_a_connect_four_engine_answers_none_once_a_side_has_four():
    s = _session("random", "connect-four")
    assert s.handle("position startpos moves a b a b a b a") == []  # x has four in column a
    assert s.handle("go") == ["info error the game is over in this position", "bestmove (none)"]
    (error,) = s.handle("position startpos moves a b a b a b a b")
    assert error == "info error move 8 'b': the game is over (p1 has won)", error


def test_boopexp_engine_plays_your_own_game(monkeypatch):
    """``boopexp engine --game tictactoe.game``: the user's game (examples/tictactoe) named in the
    handshake, positions and moves in its notation, from its start and from a position string."""
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parent.parent / "examples"))
    proc = subprocess.run([sys.executable, "-m", "boopexp", "engine", "--game", "tictactoe.game", "--agent",
                           "alphabeta", "--budget", "iterations", "--iterations", "100000"],
                          input="btp\nsetoption name game value tictactoe.game\nposition fen xx./oo./... x\ngo\n"
                                "position startpos moves a1 b2 z9\n",
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    out = proc.stdout.splitlines()
    assert "id game tictactoe.game" in out and "bestmove c3" in out  # x completes its top rank
    assert out[-1].startswith("info error move 3 'z9': 'z9' is not a cell"), out[-1]
