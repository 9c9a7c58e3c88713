"""btp, the boop. text protocol (docs/protocol.md): ``boopexp engine`` and its session.

The conformance tests play games between two engine sessions relayed by a tiny host written
here (the protocol's text only: ``position startpos moves …`` / ``go iterations N`` / the moves
they answer) and compare them with the same agents' in-process games, move for move, in both seats.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from boopexp.agents.budget import Budget
from boopexp.agents.specs import resolve_agent
from boopexp.experiments.config import load_yaml
from boopexp.game.position import Position
from boopexp.play.btp import EngineSession
from boopexp.play.contract import GameTask
from boopexp.play.match import play_game

ITERATIONS = 6


def _session(agent: str) -> EngineSession:
    def build(options):  # the values read as boopexp engine reads them
        return resolve_agent(agent, overrides={k: load_yaml(v) for k, v in options.items()})

    return EngineSession(build, Budget(mode="iterations", iterations=3))


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
])
def test_bad_commands_are_info_errors(line, says):
    s = _session("mcts-co")
    s.handle("position startpos")
    (error,) = s.handle(line)
    assert error.startswith("info error ") and says in error, error


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
