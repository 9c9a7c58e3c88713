"""Engine agents (docs/protocol.md, ``play/btp_host.py``): games through btp, and every way an engine fails.

Each misbehaving engine is a few lines of Python started as its own process; what it does wrong
forfeits its game (the record's ``forfeit``), and no process of it is left behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from boopexp.agents.budget import Budget
from boopexp.agents.specs import AgentSpec, resolve_agent
from boopexp.errors import ConfigError
from boopexp.experiments.config import load_config
from boopexp.game.sides import Side
from boopexp.play.contract import GameTask
from boopexp.play.match import play_game
from boopexp.play.settings import GameSettings

ROOT = Path(__file__).resolve().parent.parent
RANDOM_ENGINE = ROOT / "examples" / "engines" / "random_engine.py"
ITERATIONS = 5


def _engine(command: list[str], name: str = "bot", **extra) -> AgentSpec:
    return AgentSpec(name=name, kind="engine", engine=tuple(command), options=extra.pop("options", {}), **extra)


def _game(p1: AgentSpec, p2: AgentSpec, seed: int = 0, max_plies: int | None = 60) -> dict:
    task = GameTask("t", "ab" * 8, f"{p1.name} vs {p2.name}", 0, p1, p2,
                    Budget(mode="iterations", iterations=ITERATIONS), "code-0.6.2", seed, max_plies)
    return dict(play_game(task))


def _script(tmp_path: Path, body: str, name: str = "bot.py") -> list[str]:
    """A Python engine whose ``go`` runs ``body`` (the handshake and the rest answered)."""
    path = tmp_path / name
    path.write_text("import sys, time, os, subprocess\n"
                    "for line in sys.stdin:\n"
                    "    w = line.split()\n"
                    "    if w[:1] == ['btp']: print('btpok', flush=True)\n"
                    "    elif w[:1] == ['quit']: break\n"
                    "    elif w[:1] == ['go']:\n" + textwrap.indent(textwrap.dedent(body), " " * 8) + "\n")
    return [sys.executable, str(path)]


def test_conformance_boopexp_engine_through_the_host_both_seats():
    """``boopexp engine`` agents hosted as engine agents play the in-process games move for move."""
    for agent, other, seed in (("mcts-co", "random", 21), ("heuristics", "mcts-co", 22)):
        hosted = _engine([sys.executable, "-m", "boopexp", "engine", "--agent", agent], name=agent)
        for seat in (0, 1):
            pair = [hosted, resolve_agent(other)]
            local = [resolve_agent(agent), resolve_agent(other)]
            if seat:
                pair.reverse(), local.reverse()
            through = _game(*pair, seed=seed)
            direct = _game(*local, seed=seed)
            assert through["moves"] == direct["moves"] and through["winner"] == direct["winner"]
            assert through["termination"] == direct["termination"]


def test_the_stdlib_engine_plays_legal_games_to_the_end():
    record = _game(_engine([sys.executable, str(RANDOM_ENGINE)], "randpy"), resolve_agent("random"), seed=3,
                   max_plies=None)
    assert record["termination"] == "victory" and record["plies"] > 20  # every move checked by the host
    again = _game(_engine([sys.executable, str(RANDOM_ENGINE)], "randpy"), resolve_agent("random"), seed=3,
                  max_plies=None)
    assert again["moves"] == record["moves"]  # seeded by newgame seed S


@pytest.mark.parametrize(("body", "termination", "says"), [
    ("print('hello world', flush=True)", "agent_error", "answered 'go iterations 5' with 'hello world', not btp"),
    ("sys.stderr.write('boom: out of ideas\\n'); sys.stderr.flush(); os._exit(3)", "agent_error",
     "ended before answering 'go iterations 5' with 'bestmove' (exit code 3); its stderr: boom: out of ideas"),
    ("print('bestmove z9', flush=True)", "illegal_move", "'z9' is not a move"),
    ("print('info thinking', flush=True); print('bestmove C3', flush=True)", "illegal_move", "no large piece"),
])
def test_a_misbehaving_engine_forfeits(tmp_path, body, termination, says):
    record = _game(resolve_agent("random"), _engine(_script(tmp_path, body), move_timeout_s=20.0))
    assert record["termination"] == termination and record["winner"] == "p1"
    forfeit = record["forfeit"]
    assert forfeit["player"] == "p2" and forfeit["agent"] == "bot" and says in forfeit["error"], forfeit


def test_a_hung_engine_forfeits_after_its_move_time(tmp_path):
    spec = _engine(_script(tmp_path, "time.sleep(60)"), move_timeout_s=1.0)
    start = time.monotonic()
    record = _game(spec, resolve_agent("random"))
    assert time.monotonic() - start < 10  # the move time, not the engine's minute
    assert record["termination"] == "agent_error" and record["winner"] == "p2"
    assert "did not answer 'go iterations 5' with 'bestmove' within 1 s" in record["forfeit"]["error"]


def test_an_engine_without_btpok_forfeits(tmp_path):
    path = tmp_path / "mute.py"
    path.write_text("import sys, time\nsys.stdin.readline()\ntime.sleep(60)\n")
    record = _game(_engine([sys.executable, str(path)], move_timeout_s=1.0), resolve_agent("random"))
    assert "did not answer 'btp' with 'btpok' within 1 s" in record["forfeit"]["error"]
    missing = _game(_engine(["/nonexistent/engine"]), resolve_agent("random"))
    assert "could not start" in missing["forfeit"]["error"]


def test_a_stderr_flood_does_not_block_the_engine(tmp_path):
    """An engine that writes 2.4 MB on stderr (far more than a pipe holds) before its handshake plays on."""
    flood = tmp_path / "flood.py"
    flood.write_text(f"import runpy, sys\nsys.stderr.write('x' * 300 + '\\n')\n"
                     f"for _ in range(20000): sys.stderr.write('noise ' * 20 + '\\n')\n"
                     f"sys.argv = ['{RANDOM_ENGINE}']\nrunpy.run_path('{RANDOM_ENGINE}', run_name='__main__')\n")
    record = _game(_engine([sys.executable, str(flood)]), resolve_agent("random"), max_plies=10)
    assert record["termination"] == "ply_limit" and "forfeit" not in record


def test_the_memory_limit_holds(tmp_path):
    body = "block = bytearray(1 << 30)\nprint('bestmove c3', flush=True)"
    record = _game(_engine(_script(tmp_path, body), memory_mb=200), resolve_agent("random"))
    assert record["termination"] == "agent_error" and "MemoryError" in record["forfeit"]["error"]


def _marked(marker: str) -> list[int]:
    pids = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and marker in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                pids.append(int(pid))
        except OSError:
            pass
    return pids


def test_games_against_a_crashing_engine_leave_no_process(tmp_path):
    """20 games against an engine that starts a child (which would sleep for ever) and then crashes:
    its whole process group ends with each game."""
    marker = f"boopexp-stray-{os.getpid()}"
    body = (f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '{marker}'])\n"
            "os._exit(1)")
    spec = _engine(_script(tmp_path, body))
    for seed in range(20):
        record = _game(spec, resolve_agent("random"), seed=seed)
        assert record["termination"] == "agent_error"
    assert _marked(marker) == []
    assert _marked(str(tmp_path / "bot.py")) == []


def test_a_child_in_a_new_session_ends_with_its_engine(tmp_path):
    """A child the engine starts in a session of its own (``setsid``: not in the engine's process
    group) is killed with the engine: it carries the engine's token; so is one left by a crash."""
    marker = f"boopexp-setsid-{os.getpid()}"
    child = f"[sys.executable, '-c', 'import time; time.sleep(600)', '{marker}']"
    for then in ("print('bestmove c3', flush=True)", "os._exit(1)"):
        body = f"subprocess.Popen({child}, start_new_session=True)\n{then}"
        record = _game(resolve_agent("random"), _engine(_script(tmp_path, body), move_timeout_s=20.0), max_plies=4)
        assert "forfeit" in record or record["termination"] == "ply_limit"
        assert _marked(marker) == []


def test_a_flood_of_info_lines_does_not_hold_off_the_move_time(monkeypatch):
    """The move time is checked at every line, not only when the engine is silent: 500 ``info``
    lines waiting, each read a second later on a fake clock, and a 3 s move time ends at the fourth."""
    from boopexp.play import btp_host

    ticks = iter(range(10_000))
    monkeypatch.setattr(btp_host, "_now", lambda: float(next(ticks)))
    engine = btp_host.EngineProcess(_engine(["bot"], move_timeout_s=3.0), 0, Side.P1,
                                    Budget(mode="iterations", iterations=5))
    for _ in range(500):
        engine.lines.put("info depth 1")
    engine.lines.put("bestmove c3")
    with pytest.raises(btp_host.EngineFailure, match="did not answer 'go' with 'bestmove' within 3 s"):
        engine._until("bestmove", "'go'")
    assert engine.lines.qsize() > 490


@pytest.mark.parametrize(("size", "termination", "says"), [
    (5_000_000, "agent_error", "answered 'go iterations 5' with a line of 5000010 bytes (at most 2097152)"),
    (100_000, "illegal_move", "more characters]"),
])
def test_an_engine_s_long_answer_is_bounded_in_memory_and_in_the_record(tmp_path, size, termination, says):
    """A ``bestmove`` longer than MAX_LINE is not read whole (the engine forfeits for it); a
    shorter garbage move forfeits as illegal, and its record keeps RECORD_TEXT_LIMIT characters."""
    import json

    from boopexp.play.contract import RECORD_TEXT_LIMIT

    body = f"sys.stdout.write('bestmove ' + 'x' * {size} + '\\n'); sys.stdout.flush()"
    record = _game(resolve_agent("random"), _engine(_script(tmp_path, body), move_timeout_s=20.0))
    assert record["termination"] == termination and says in record["forfeit"]["error"], record["forfeit"]["error"][:300]
    assert len(json.dumps(record)) < 3 * RECORD_TEXT_LIMIT


def test_engine_agents_in_configs(tmp_path):
    def config(agents: str) -> Path:
        path = tmp_path / "c.yaml"
        path.write_text("name: e\nseed: 1\ngames_per_side: 1\nbudget: {mode: iterations, iterations: 5}\n"
                        f"agents:\n{agents}\npairings: [[bot, random]]\n")
        return path

    cfg = load_config(config("  bot: {engine: [python3, x.py], options: {depth: 3}, move_timeout_s: 5, "
                             "memory_mb: 256}\n  bot2: {base: bot, options: {depth: 4}}"))
    bot, bot2 = cfg.agent("bot", {}), cfg.agent("bot2", {})
    assert bot.to_dict() == {"name": "bot", "kind": "engine", "engine": ["python3", "x.py"],
                             "options": {"depth": 3}, "memory_mb": 256, "move_timeout_s": 5.0}
    assert bot2.options == {"depth": 4} and bot2.engine == bot.engine and bot2.memory_mb == 256
    assert AgentSpec.from_dict(bot.to_dict()) == bot
    budget, random = Budget(mode="iterations", iterations=5), resolve_agent("random")
    settings = GameSettings("e", 1, budget)
    assert settings.pairing_hash(bot, random) != settings.pairing_hash(bot2, random)
    for bad, says in (("{engine: 5}", "agents.bot.engine = 5 must be a non-empty list of strings"),
                      ("{engine: [x], options: {seed: 1}}", "agents.bot.options = 'seed' must be option names"),
                      ("{engine: [x], memory_mb: 1}", "agents.bot.memory_mb = 1 must be an integer"),
                      ("{engine: [x], depth: 3}", "unknown key agents.bot.depth"),
                      ("{engine: [x], plugin: 'a:b'}", "give one of base, plugin or engine")):
        with pytest.raises(ConfigError, match=None) as info:
            load_config(config(f"  bot: {bad}"))
        assert says in str(info.value), str(info.value)


def test_a_bad_engine_config_is_one_line_on_the_command_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("name: e\nseed: 1\ngames_per_side: 1\nagents:\n  bot: {engine: []}\npairings: [[bot, random]]\n")
    proc = subprocess.run([sys.executable, "-m", "boopexp", "game", "--config", str(path), "--p1", "bot",
                           "--p2", "random"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "agents.bot.engine = [] must be a non-empty list" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def _run_config(tmp_path: Path, agent: str, extra: str = "") -> tuple[str, Path]:
    """``boopexp run`` of a config whose agent x is ``agent``: its one error line, and its --out."""
    from click.testing import CliRunner
    from conftest import one_line

    from boopexp.interfaces.cli import main

    path, out = tmp_path / "c.yaml", tmp_path / "st"
    path.write_text("name: e\nseed: 1\ngames_per_side: 1\nbudget: {mode: iterations, iterations: 2}\n"
                    f"agents:\n  x: {agent}\npairings: [[x, random]]\n{extra}")
    return one_line(CliRunner().invoke(main, ["run", str(path), "--out", str(out), "-q"]), 2), out


@pytest.mark.parametrize(("engine", "says"), [
    ('["python3\\0"]', "agents.x.engine[0] = 'python3\\x00' must be a non-empty string without NUL"),
    ('[python3, ""]', "agents.x.engine[1] = '' must be a non-empty string"),
    ("[python3, 5]", "agents.x.engine[1] = 5 must be a non-empty string"),
    ('[python3, "a\\nb"]', "agents.x.engine[1] = 'a\\nb' must be a non-empty string without NUL or line ends"),
    (f"[python3, {'a' * 5000}]", "agents.x.engine[1] = 'aaa"),
    ("python3", "agents.x.engine = 'python3' must be a non-empty list of strings"),
    ("[]", "agents.x.engine = [] must be a non-empty list of strings"),
])
def test_an_unusable_engine_command_is_refused_when_the_config_is_read(tmp_path, engine, says):
    """A command no system can start (a NUL byte, an empty word, not a list of strings) is a
    config error, one line and exit 2, before any store folder is made (once: every game failed)."""
    line, out = _run_config(tmp_path, f"{{engine: {engine}}}")
    assert says in line and "at most 4096 characters" in line, line
    assert not out.exists()


@pytest.mark.parametrize(("options", "says"), [
    ("{v: .inf}", "agents.x.options.v = inf must be"), ("{v: -.inf}", "agents.x.options.v = -inf must be"),
    ("{v: .nan}", "agents.x.options.v = nan must be"),
    (f"{{v: {'a' * 5000}}}", "agents.x.options.v = 'aaa"),
    (f"{{v: {'9' * 4200}}}", "agents.x.options.v = an integer of more than 4096 digits must be"),
    ('{v: "a\\0b"}', "agents.x.options.v = 'a\\x00b' must be"),
    ('{v: "caf\\u00e9"}', "agents.x.options.v = 'caf\u00e9' must be"),
    (f"{{? {'k' * 5000} : 1}}", "agents.x.options = 'kkk"),
])
def test_engine_options_are_finite_and_bounded_when_the_config_is_read(tmp_path, options, says):
    """An option is sent as a ``setoption`` line and kept in every record and the store's
    config.yaml: a non-finite number, a value or name of more than 4096 characters, or text
    that is not printable ASCII (the protocol's) is refused when the config is read."""
    line, out = _run_config(tmp_path, f"{{engine: [python3, x.py], options: {options}}}")
    assert says in line and "at most 4096 characters" in line, line
    assert not out.exists()


def test_a_sweep_of_an_engine_option_is_checked_as_the_config_is(tmp_path):
    line, out = _run_config(tmp_path, "{engine: [python3, x.py], options: {v: 1}}",
                            "sweep: {agents.x.options.v: [2, .inf]}\n")
    assert "agents.x.options.v = inf must be" in line and not out.exists(), line


def test_a_record_s_over_long_engine_option_is_refused():
    spec = _engine(["python3", "x.py"]).to_dict()
    with pytest.raises(ConfigError, match="agent.options.v = 'aaa.*at most 4096 characters"):
        AgentSpec.from_dict({**spec, "options": {"v": "a" * 5000}})


def test_the_stdlib_engine_plays_from_a_start_position():
    """``position fen <start> moves ...``: the example engine sets up its board from the start and
    plays legal moves from it (every one checked by the host) to a victory."""
    start = "....../..b.../...r../....../....../...... 7,0 7,0 b 0,0 2"
    task = GameTask("t", "ab" * 8, "randpy vs random", 0, _engine([sys.executable, str(RANDOM_ENGINE)], "randpy"),
                    resolve_agent("random"), Budget(mode="iterations", iterations=ITERATIONS), "code-0.6.2", 5,
                    None, start=start)
    record = dict(play_game(task))
    assert record["start"] == start and "forfeit" not in record, record.get("forfeit")
    assert record["termination"] == "victory" and record["plies"] > 10


def test_a_game_from_a_start_position_is_sent_as_fen():
    """A game with a start (openings:, --start) tells the engine ``position fen <start> moves ...``:
    through the host it is the in-process game from that position."""
    start = "....../..b.../...r../....../....../...... 7,0 7,0 b 0,0 2"
    hosted = _engine([sys.executable, "-m", "boopexp", "engine", "--agent", "mcts-co"], name="mcts-co")
    games = []
    for p1 in (hosted, resolve_agent("mcts-co")):
        task = GameTask("t", "ab" * 8, "mcts-co vs random", 0, p1, resolve_agent("random"),
                        Budget(mode="iterations", iterations=ITERATIONS), "code-0.6.2", 5, 40, start=start)
        games.append(dict(play_game(task)))
    assert games[0]["start"] == start and games[0]["moves"] == games[1]["moves"]


def test_a_hung_engine_is_killed_without_the_quit_grace(tmp_path, monkeypatch):
    """An engine that failed (here: no answer within its move time) is not asked to quit and given
    QUIT_GRACE_S to do it: it would not read the line. Its process group is killed at once, so a
    hung engine costs its game the move time and the kill (QUIT_GRACE_S made huge to show it)."""
    from boopexp.play import btp_host

    monkeypatch.setattr(btp_host, "QUIT_GRACE_S", 30.0)
    spec = _engine(_script(tmp_path, "time.sleep(600)"), move_timeout_s=1.0)
    start = time.monotonic()
    record = _game(spec, resolve_agent("random"))
    assert time.monotonic() - start < 20  # not 1 + 30
    assert record["termination"] == "agent_error" and "within 1 s" in record["forfeit"]["error"]


# -- games other than boop. (docs/protocol.md, "Games") -------------------------------------------


def _c4_game(p1: AgentSpec, p2: AgentSpec, seed: int = 0) -> dict:
    task = GameTask("t", "ab" * 8, f"{p1.name} vs {p2.name}", 0, p1, p2,
                    Budget(mode="iterations", iterations=ITERATIONS), "code-0.6.2", seed, game="connect-four")
    return dict(play_game(task))


def test_boopexp_engine_of_connect_four_through_the_host_is_the_in_process_game():
    """``boopexp engine --game connect-four`` hosted in a Connect Four game: the host tells it the
    game it names, and it plays the in-process game move for move, in the game's notation."""
    from boopexp.games import registry

    params = registry.get("connect-four").paper_params()
    hosted = _engine([sys.executable, "-m", "boopexp", "engine", "--game", "connect-four", "--agent", "mcts-co"],
                     name="mcts-co")
    local = resolve_agent("mcts-co", params=params)
    through = _c4_game(hosted, resolve_agent("random"), seed=7)
    direct = _c4_game(local, resolve_agent("random"), seed=7)
    assert through.get("forfeit") is None and through["game"] == "connect-four"
    assert through["moves"] == direct["moves"] and through["winner"] == direct["winner"]


def test_an_engine_that_does_not_play_the_game_forfeits_saying_so(tmp_path):
    """An engine that names no game (the example engine: boop. only) in a Connect Four game, and a
    Connect Four engine in a boop. game: each forfeits its game at its first move, the reason one line."""
    record = _c4_game(_engine([sys.executable, str(RANDOM_ENGINE)], "randpy"), resolve_agent("random"))
    assert record["termination"] == "agent_error" and record["plies"] == 0 and record["winner"] == "p2"
    assert record["forfeit"]["error"] == (
        f"engine {sys.executable} {RANDOM_ENGINE} does not play connect-four: its btp answer names no game "
        "('id game G'), so it plays boop only (docs/protocol.md, 'Games')")
    c4 = _engine(_script(tmp_path, "print('bestmove d', flush=True)"), "c4bot")
    path = tmp_path / "bot.py"
    path.write_text(path.read_text().replace("print('btpok', flush=True)",
                                             "print('id game connect-four'); print('btpok', flush=True)"))
    record = _game(resolve_agent("random"), c4, max_plies=10)
    assert record["termination"] == "agent_error" and record["winner"] == "p1"
    assert "does not play boop: its btp answer names the games connect-four" in record["forfeit"]["error"]
