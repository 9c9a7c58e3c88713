"""Plugin agents: the example agent in runs and games, forfeits, and every broken plugin."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import boopexp
from boopexp.agents.budget import Budget
from boopexp.agents.specs import AgentSpec, resolve_agent
from boopexp.errors import ConfigError
from boopexp.experiments.config import load_config
from boopexp.experiments.store import StoreReader, decode_record
from boopexp.interfaces.cli import main
from boopexp.play import match
from boopexp.play.contract import GameTask, task_from_record, without_host_timing

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

AGENTS = textwrap.dedent('''
    import boopexp

    class Scripted:
        """Plays the first legal move; on move number `bad_at` it does `kind` instead."""

        def __init__(self, kind="none", bad_at=1, value=None, promote_to=None):
            self.kind, self.bad_at, self.value, self.promote_to, self.n = kind, bad_at, value, promote_to, 0

        def choose(self, position, rng):
            self.n += 1
            if self.n == self.bad_at:
                if self.kind == "raise":
                    raise RuntimeError("boom\\nsecond line")
                if self.kind == "return":
                    return self.value
                if self.kind == "flood":  # 50,000 characters as its move, or as its exception
                    raise RuntimeError("y" * 50_000)
                if self.kind == "long":
                    return "z" * 50_000
            return position.legal_moves()[int(rng.integers(len(position.legal_moves())))]

        def promote(self, position, groups, rng):
            return self.promote_to if self.promote_to is not None else 0

    def make(**kwargs):
        return Scripted(**kwargs)

    def broken(**kwargs):
        raise ValueError("cannot build")

    def no_choose():
        return object()

    NOT_CALLABLE = 3
''')


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A folder with my_agents.py beside the configs, as the current directory."""
    (tmp_path / "my_agents.py").write_text(AGENTS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write_config(folder: Path, agents: str, pairings: str = "[[bot, random]]", games: int = 1) -> Path:
    path = folder / "p.yaml"
    path.write_text(f"name: p\nseed: 2\ngames_per_side: {games}\nbudget: {{mode: iterations, iterations: 2}}\n"
                    f"agents:\n{textwrap.indent(agents, '  ')}\npairings: {pairings}\n")
    return path


def records_of(folder: Path) -> list[dict]:
    return [decode_record(r) for r in StoreReader(folder).records().records]


def test_position_and_move_are_importable_from_the_package():
    from boopexp import Move, Position

    assert Position is boopexp.Position and Move is boopexp.Move
    assert len(Position.initial().legal_moves()) == 36 and Move.parse("c3") in Position.initial().legal_moves()


def test_the_example_agent_plays_a_round_robin_and_its_games_replay(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    result = CliRunner().invoke(main, ["run", "examples/greedy.yaml", "--games-per-side", "1", "--jobs", "1",
                                       "--out", "out"])
    assert result.exit_code == 0, result.output
    records = records_of(tmp_path / "out")
    assert len(records) == 12 and all(r["termination"] in ("victory", "ply_limit") for r in records)
    greedy = next(r for r in records if r["p1"] == "greedy-noisy")
    assert greedy["p1_spec"] == {"name": "greedy-noisy", "kind": "plugin", "base": "greedy",
                                 "plugin": "greedy_agent:make_greedy", "kwargs": {"noise": 0.3}}
    assert "forfeits" not in result.output
    # the record is enough to play the game again (the module must be importable: PYTHONPATH)
    monkeypatch.syspath_prepend(str(tmp_path / "examples"))
    again = match.play_game(task_from_record(greedy))
    assert without_host_timing(again) == without_host_timing(greedy)
    # and `boopexp game --config` plays game 0 of the pairing
    game = CliRunner().invoke(main, ["game", "--config", "examples/greedy.yaml", "--p1", "greedy-noisy",
                                     "--p2", greedy["p2"], "--json"])
    assert game.exit_code == 0, game.output
    assert greedy["game_index"] == 0 and json.loads(game.stdout)["moves"] == greedy["moves"]


def test_kwargs_are_part_of_the_settings_hash(workdir):
    one = load_config(write_config(workdir, "bot: {plugin: 'my_agents:make', bad_at: 5}"))
    two = load_config(write_config(workdir, "bot: {plugin: 'my_agents:make', bad_at: 6}"))
    assert one.plan()[0].config_hash != two.plan()[0].config_hash
    assert one.plan()[0].p1_spec.to_dict()["kwargs"] == {"bad_at": 5}


FORFEITS = [
    ("raises", "{kind: raise, bad_at: 2}", "agent_error", None, "RuntimeError: boom second line"),
    ("malformed string", "{kind: return, value: zz9}", "illegal_move", "zz9", "zz9"),
    ("not a move", "{kind: return, value: 42}", "illegal_move", "42", "is not a move"),
    ("no large in the pool", "{kind: return, value: A1}", "illegal_move", "A1", "no large piece"),
]


@pytest.mark.parametrize("kwargs,termination,move,message", [f[1:] for f in FORFEITS], ids=[f[0] for f in FORFEITS])
def test_a_bad_move_or_an_exception_forfeits_the_game_and_the_run_goes_on(workdir, kwargs, termination, move, message,
                                                                         monkeypatch):
    monkeypatch.syspath_prepend(str(workdir))  # for the re-play from the record alone
    write_config(workdir, f"bot: {{plugin: 'my_agents:make', {kwargs[1:-1]}}}")
    result = CliRunner().invoke(main, ["run", "p.yaml", "--jobs", "1"])
    assert result.exit_code == 0, result.output
    records = {r["pairing"]: r for r in records_of(workdir / "results/p")}
    assert set(records) == {"bot vs random", "random vs bot"}
    for r in records.values():
        bot_side = "p1" if r["p1"] == "bot" else "p2"
        other = "p2" if bot_side == "p1" else "p1"
        assert r["termination"] == termination and r["winner"] == other and r["winner_agent"] == "random"
        assert r["forfeit"]["agent"] == "bot" and r["forfeit"]["player"] == bot_side
        assert message in r["forfeit"]["error"] and "\n" not in r["forfeit"]["error"]
        assert r["forfeit"].get("move") == move
        # the bot's bad move number k ends the game after 2(k-1) plies, plus Blue's first if the bot is Red
        bad_at = 2 if "bad_at: 2" in kwargs else 1
        assert r["plies"] == len(r["moves"]) == 2 * (bad_at - 1) + (bot_side == "p2")
    assert "forfeits: bot 2 (2 " + termination + ")" in result.output
    status = CliRunner().invoke(main, ["status", "results/p"])
    assert "forfeits: bot 2 (2 " + termination + ")" in status.output
    # a forfeited game replays: its moves are legal and end without a victory on the board
    replay = CliRunner().invoke(main, ["replay", "results/p", "--pairing", "random vs bot", "--game", "0", "--search"])
    assert replay.exit_code == 0, replay.output
    assert "p1 (random) wins by forfeit: bot (p2) " + termination in replay.output
    assert "the same game, move for move" in replay.output


@pytest.mark.parametrize("kind", ["long", "flood"])
def test_a_forfeit_keeps_a_bounded_part_of_the_agent_s_words(workdir, monkeypatch, kind):
    """A plugin's 50,000-character move or exception forfeits as any other, but its record keeps
    RECORD_TEXT_LIMIT characters of it and says how many were cut; replay prints that much."""
    from boopexp.play.contract import RECORD_TEXT_LIMIT

    monkeypatch.syspath_prepend(str(workdir))
    write_config(workdir, f"bot: {{plugin: 'my_agents:make', kind: {kind}}}")
    result = CliRunner().invoke(main, ["run", "p.yaml", "--jobs", "1"])
    assert result.exit_code == 0, result.output
    for r in records_of(workdir / "results/p"):
        for key in ("move", "error") if kind == "long" else ("error",):
            text = r["forfeit"][key]
            assert len(text) <= RECORD_TEXT_LIMIT + 40 and text.endswith(" more characters]"), (key, len(text))
            assert "... [cut: " in text
        assert len(json.dumps(r)) < 4 * RECORD_TEXT_LIMIT
    replay = CliRunner().invoke(main, ["replay", "results/p", "--pairing", "bot vs random", "--game", "0"])
    assert replay.exit_code == 0 and "more characters]" in replay.output and len(replay.output) < 3 * RECORD_TEXT_LIMIT


def test_cut_text_leaves_short_texts_alone():
    from boopexp.agents.plugins import OUTPUT_LIMIT, PluginOutput
    from boopexp.play.contract import RECORD_TEXT_LIMIT, cut_text

    assert cut_text("IllegalMoveError: 'a1' is occupied") == "IllegalMoveError: 'a1' is occupied"
    assert cut_text("x" * RECORD_TEXT_LIMIT) == "x" * RECORD_TEXT_LIMIT
    assert cut_text("abcdef", 4) == "abcd... [cut: 2 more characters]"
    output = PluginOutput()  # a plugin's capture is cut before: its text reaches the record whole
    output.write("w" * (10 * OUTPUT_LIMIT))
    assert cut_text(output.text()) == output.text()


def test_a_promotion_index_that_is_not_a_candidate_forfeits(workdir, monkeypatch):
    monkeypatch.syspath_prepend(str(workdir))
    spec = AgentSpec(name="bot", kind="plugin", plugin="my_agents:make",
                     kwargs={"kind": "return", "value": "c4", "promote_to": 5})
    player = match.make_player(spec, Budget(mode="iterations", iterations=2), np.random.SeedSequence(1))
    # RULES.md Example 5: c4 lines up two candidate groups (indices 0 and 1)
    st = boopexp.Position.from_string("....../....../bb.br./....../....../...... 5,0 7,0 b").state.copy()
    with pytest.raises(match.Forfeit) as info:
        player.select(st)
    assert info.value.termination == "illegal_move" and "promotion index 5" in info.value.error
    ok = match.make_player(AgentSpec(name="bot", kind="plugin", plugin="my_agents:make",
                                     kwargs={"kind": "return", "value": "c4", "promote_to": 1}),
                           Budget(mode="iterations", iterations=2), np.random.SeedSequence(1))
    code, _ = ok.select(st)
    assert code == boopexp.Move.parse("c4").code and ok.promotion == 1


def test_a_factory_that_raises_in_the_worker_forfeits_at_its_first_move(workdir, monkeypatch):
    monkeypatch.syspath_prepend(str(workdir))
    bot = AgentSpec(name="bot", kind="plugin", plugin="my_agents:broken", kwargs={})
    task = GameTask("p", "0123456789abcdef", "random vs bot", 0, resolve_agent("random"), bot,
                    Budget(mode="iterations", iterations=2), "code-0.6.2", 5)
    record = match.play_game(task)
    assert (record["winner"], record["termination"], record["plies"]) == ("p1", "agent_error", 1)
    assert record["forfeit"] == {"player": "p2", "agent": "bot", "error": "ValueError: cannot build"}


BAD = [
    ("module not found", "bot: {plugin: 'nowhere:make'}", ["agents.bot", "'nowhere' not found", "PYTHONPATH"]),
    ("no such callable", "bot: {plugin: 'my_agents:nothing'}", ["agents.bot", "has no 'nothing'"]),
    ("not callable", "bot: {plugin: 'my_agents:NOT_CALLABLE'}", ["not callable"]),
    ("malformed target", "bot: {plugin: my_agents}", ["\"module:callable\""]),
    ("target not a string", "bot: {plugin: 3}", ["agents.bot.plugin = 3", "module:callable"]),
    ("factory raises", "bot: {plugin: 'my_agents:broken'}", ["agents.bot", "raised ValueError: cannot build"]),
    ("bad kwargs", "bot: {plugin: 'my_agents:no_choose', depth: 2}", ["agents.bot", "raised TypeError"]),
    ("no choose method", "bot: {plugin: 'my_agents:no_choose'}", ["agents.bot", "no choose(position, rng)"]),
]


@pytest.mark.parametrize("agents,needles", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_broken_plugin_is_a_config_error_before_any_game(workdir, agents, needles):
    path = write_config(workdir, agents)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(path))
    for needle in needles:
        assert needle in message, (needle, message)
    result = CliRunner().invoke(main, ["run", "p.yaml", "--quiet"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (workdir / "results").exists()


# ---------------------------------------------------------------------------------------------
# A plugin that exits, prints or hangs (issue 20, items 3, 6 and 7): its game, not the run.

UNRULY = textwrap.dedent('''
    import sys
    import time

    class Unruly:
        """Plays a random legal move; on its move number `at` it does `kind` instead."""

        def __init__(self, kind="none", at=1):
            self.kind, self.at, self.n = kind, at, 0

        def choose(self, position, rng):
            self.n += 1
            if self.kind == "print":
                print(f"move {self.n}: thinking")
                print("a warning", file=sys.stderr)
            if self.n == self.at:
                if self.kind == "exit":
                    sys.exit()
                if self.kind == "exit-text":
                    raise SystemExit("x")
                if self.kind == "sleep":
                    time.sleep(3600)
                if self.kind == "spin":
                    while True:
                        pass
                if self.kind in ("swallow", "late"):  # a plugin that catches everything, the time limit too
                    try:
                        time.sleep(3600)
                    except BaseException:
                        if self.kind == "swallow":
                            time.sleep(3600)  # and hangs again
            moves = position.legal_moves()
            return moves[int(rng.integers(len(moves)))]

    def make(**kwargs):
        return Unruly(**kwargs)

    def exits(**kwargs):
        sys.exit("no agent today")

    def chatty(**kwargs):
        print("building")
        return Unruly(**kwargs)

    def slow(**kwargs):
        time.sleep(3600)
''')

UNRULY_AGENTS = """\
quitter: {plugin: 'unruly:make', kind: exit, at: 2}
exiter: {plugin: 'unruly:make', kind: exit-text}
talker: {plugin: 'unruly:chatty', kind: print}
sleeper: {plugin: 'unruly:make', kind: sleep, move_timeout_s: 0.3}
spinner: {plugin: 'unruly:make', kind: spin, move_timeout_s: 0.3}
"""
UNRULY_PAIRINGS = "[[quitter, random], [exiter, random], [talker, random], [sleeper, random], [spinner, random], " \
                  "[heuristics, random]]"


@pytest.fixture
def unruly(tmp_path, monkeypatch):
    """A folder with unruly.py and p.yaml (every unruly agent against random), as the current directory."""
    (tmp_path / "unruly.py").write_text(UNRULY)
    write_config(tmp_path, UNRULY_AGENTS, UNRULY_PAIRINGS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def boopexp_process(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    """``python -m boopexp ARGS`` in a fresh interpreter (a plugin's sys.exit() reaches no CliRunner there)."""
    return subprocess.run([sys.executable, "-m", "boopexp", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(cwd)})


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_plugin_that_exits_prints_or_hangs_forfeits_its_game_and_the_run_goes_on(unruly, jobs):
    result = boopexp_process("run", "p.yaml", "--jobs", jobs, cwd=unruly)
    assert result.returncode == 0, result.stderr
    records = {r["pairing"]: r for r in records_of(unruly / "results/p")}
    assert len(records) == 12  # every game stored: the forfeits and the others
    errors = {
        "quitter": "SystemExit",
        "exiter": "SystemExit: x",
        "sleeper": "move_timeout: plugin 'sleeper' took longer than 0.3 s (move_timeout_s)",
        "spinner": "move_timeout: plugin 'spinner' took longer than 0.3 s (move_timeout_s)",
    }
    for agent, error in errors.items():
        for pairing in (f"{agent} vs random", f"random vs {agent}"):
            r = records[pairing]
            assert r["termination"] == "agent_error" and r["winner_agent"] == "random", (pairing, r)
            assert r["forfeit"]["agent"] == agent and r["forfeit"]["error"] == error
            assert "plugin_output" not in r
        assert f"forfeits: {agent} 2 (2 agent_error)" in result.stdout
    assert records["quitter vs random"]["plies"] == 2  # its second move: p1, p2, then p1's exit
    # what the plugin printed (its factory, then choose: stdout and stderr) is kept with its game
    for pairing, side in (("talker vs random", "p1"), ("random vs talker", "p2")):
        r = records[pairing]
        assert r["termination"] in ("victory", "ply_limit") and "forfeit" not in r
        output = r["plugin_output"]
        assert set(output) == {side}
        assert output[side].startswith("building\nmove 1: thinking\na warning\nmove 2: thinking\n")
    # and none of it on the run's stdout or stderr
    for text in ("building", "thinking", "a warning"):
        assert text not in result.stdout and text not in result.stderr
    for pairing in ("heuristics vs random", "random vs heuristics"):
        assert "forfeit" not in records[pairing] and "plugin_output" not in records[pairing]


def test_game_json_stays_json_and_a_forfeit_by_exit_or_timeout_is_a_result(unruly):
    talk = boopexp_process("game", "--config", "p.yaml", "--p1", "talker", "--p2", "random", "--json", cwd=unruly)
    assert talk.returncode == 0, talk.stderr
    record = json.loads(talk.stdout)
    assert record["plugin_output"]["p1"].startswith("building\nmove 1: thinking\n")
    # relayed on stderr, each line marked with the agent that printed it
    assert "talker (p1): move 1: thinking" in talk.stderr and "talker (p1): a warning" in talk.stderr
    quit_ = boopexp_process("game", "--config", "p.yaml", "--p1", "random", "--p2", "quitter", cwd=unruly)
    assert quit_.returncode == 0, quit_.stderr
    assert "random vs quitter: p1 (random, blue) wins in 3 plies by forfeit: quitter (p2) agent_error: SystemExit" \
        in quit_.stdout
    sleep = boopexp_process("game", "--config", "p.yaml", "--p1", "sleeper", "--p2", "random", "--json", cwd=unruly)
    assert sleep.returncode == 0, sleep.stderr
    record = json.loads(sleep.stdout)
    assert record["winner"] == "p2" and record["termination"] == "agent_error"
    assert record["forfeit"]["error"] == "move_timeout: plugin 'sleeper' took longer than 0.3 s (move_timeout_s)"


@pytest.mark.parametrize("factory,error", [
    ("exits", "SystemExit: no agent today"),
    ("slow", "move_timeout: plugin 'bot' took longer than 0.3 s to build (move_timeout_s)"),
])
def test_a_factory_that_exits_or_hangs_in_the_worker_forfeits_at_its_first_move(unruly, factory, error):
    bot = AgentSpec(name="bot", kind="plugin", plugin=f"unruly:{factory}", kwargs={}, move_timeout_s=0.3)
    task = GameTask("p", "0123456789abcdef", "random vs bot", 0, resolve_agent("random"), bot,
                    Budget(mode="iterations", iterations=2), "code-0.6.2", 5)
    record = match.play_game(task)
    assert (record["winner"], record["termination"], record["plies"]) == ("p1", "agent_error", 1)
    assert record["forfeit"] == {"player": "p2", "agent": "bot", "error": error}


@pytest.mark.parametrize("kind", ["swallow", "late"])
def test_a_plugin_that_catches_the_time_limit_still_forfeits(unruly, kind):
    """Caught, the interruption comes again (swallow); a move given after it is too late (late)."""
    bot = AgentSpec(name="bot", kind="plugin", plugin="unruly:make", kwargs={"kind": kind}, move_timeout_s=0.2)
    task = GameTask("p", "0123456789abcdef", "bot vs random", 0, bot, resolve_agent("random"),
                    Budget(mode="iterations", iterations=2), "code-0.6.2", 5)
    record = match.play_game(task)
    assert record["forfeit"]["error"] == "move_timeout: plugin 'bot' took longer than 0.2 s (move_timeout_s)"


@pytest.mark.parametrize("kind", ["spin", "print"])
def test_the_time_limit_and_the_capture_work_off_the_main_thread_too(unruly, kind):
    """A dask worker plays its games in a thread, where no signal handler can be set."""
    bot = AgentSpec(name="bot", kind="plugin", plugin="unruly:make", kwargs={"kind": kind}, move_timeout_s=0.2)
    task = GameTask("p", "0123456789abcdef", "bot vs random", 0, bot, resolve_agent("random"),
                    Budget(mode="iterations", iterations=2), "code-0.6.2", 5)
    out: list = []
    thread = threading.Thread(target=lambda: out.append(match.play_game(task)))
    thread.start()
    thread.join(60)
    assert not thread.is_alive()
    (record,) = out
    if kind == "spin":
        assert record["forfeit"]["error"] == "move_timeout: plugin 'bot' took longer than 0.2 s (move_timeout_s)"
    else:
        assert "forfeit" not in record and record["plugin_output"]["p1"].startswith("move 1: thinking\na warning\n")


def test_what_a_plugin_prints_is_capped():
    from boopexp.agents.plugins import OUTPUT_LIMIT, PluginOutput

    output = PluginOutput()
    for i in range(100_000):
        output.write(f"line {i}\n")
    text = output.text()
    assert len(text) <= OUTPUT_LIMIT + 100
    assert text.startswith("line 0\nline 1\n") and text.endswith("line 99999\n")
    assert "characters left out" in text
    assert PluginOutput().text() == ""


def test_the_move_time_limit_is_hashed_only_when_set_to_another_value(workdir):
    default = load_config(write_config(workdir, "bot: {plugin: 'my_agents:make'}")).plan()[0]
    sixty = load_config(write_config(workdir, "bot: {plugin: 'my_agents:make', move_timeout_s: 60}")).plan()[0]
    five = load_config(write_config(workdir, "bot: {plugin: 'my_agents:make', move_timeout_s: 5}")).plan()[0]
    assert default.config_hash == sixty.config_hash != five.config_hash
    assert "move_timeout_s" not in default.p1_spec.to_dict() and default.p1_spec.kwargs == {}
    assert five.p1_spec.to_dict()["move_timeout_s"] == 5 and five.p1_spec.kwargs == {}
    assert AgentSpec.from_dict(five.p1_spec.to_dict()) == five.p1_spec
    # a variant of the plugin inherits it, and may set its own
    variant = load_config(write_config(workdir, "bot: {plugin: 'my_agents:make', move_timeout_s: 5}\n"
                                                "fast: {base: bot, move_timeout_s: 1}\n"
                                                "same: {base: bot}", "[[fast, same]]")).plan()[0]
    assert (variant.p1_spec.move_timeout_s, variant.p2_spec.move_timeout_s) == (1, 5)


BAD_TIMEOUTS = [
    ("zero", "bot: {plugin: 'my_agents:make', move_timeout_s: 0}", "agents.bot.move_timeout_s = 0 must be"),
    ("negative", "bot: {plugin: 'my_agents:make', move_timeout_s: -1}", "agents.bot.move_timeout_s = -1 must be"),
    ("text", "bot: {plugin: 'my_agents:make', move_timeout_s: soon}", "agents.bot.move_timeout_s = 'soon' must be"),
    ("bool", "bot: {plugin: 'my_agents:make', move_timeout_s: true}", "agents.bot.move_timeout_s = True must be"),
    ("nan", "bot: {plugin: 'my_agents:make', move_timeout_s: .nan}", "agents.bot.move_timeout_s = nan must be"),
    ("too long", "bot: {plugin: 'my_agents:make', move_timeout_s: 1.0e+9}", "at most 86400"),
    ("built-in", "mcts-co: {move_timeout_s: 5}", "agents.mcts-co.move_timeout_s: only plugin agents"),
    ("variant", "co: {base: vanilla, move_timeout_s: 5}", "agents.co.move_timeout_s: only plugin agents"),
]


@pytest.mark.parametrize("agents,needle", [b[1:] for b in BAD_TIMEOUTS], ids=[b[0] for b in BAD_TIMEOUTS])
def test_a_bad_move_time_limit_is_a_config_error(workdir, agents, needle):
    path = write_config(workdir, agents, "[[bot, random]]" if "bot" in agents else "[[random, heuristics]]")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert needle in str(info.value) and "\n" not in str(info.value), str(info.value)


def test_a_factory_that_exits_or_hangs_when_the_config_is_read_is_a_config_error(unruly):
    """One line each. The factory that exits has the default time limit (60 s; it exits at once):
    with 0.3 s, a loaded machine could start its thread late and report a timeout instead. The
    one that hangs sleeps, out of reach of the interruption: it is left running, which the
    config error does not add a line for (that notice came only in a process where no plugin
    named 'bot' had been left running yet: when this test ran alone, not after the others)."""
    for factory, needle, limit in (
            ("exits", "raised SystemExit: no agent today", ""),
            ("slow", "took longer than 0.3 s to build (move_timeout_s)", ", move_timeout_s: 0.3")):
        write_config(unruly, f"bot: {{plugin: 'unruly:{factory}'{limit}}}")
        result = CliRunner().invoke(main, ["run", "p.yaml", "--quiet"])
        assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "agents.bot" in result.stderr and needle in result.stderr, result.stderr
        assert not (unruly / "results").exists()


DEAF = textwrap.dedent('''
    import time

    class Deaf:
        """Catches everything, the time limit and Ctrl-C included, and never answers."""

        def choose(self, position, rng):
            while True:
                try:
                    time.sleep(100)
                except BaseException:
                    pass

    class CtrlC:
        def choose(self, position, rng):
            raise KeyboardInterrupt

    def deaf():
        return Deaf()

    def ctrl_c():
        return CtrlC()
''')


@pytest.fixture
def deaf(tmp_path):
    """deaf.py (a plugin that catches everything; one that raises KeyboardInterrupt) and p.yaml."""
    (tmp_path / "deaf.py").write_text(DEAF)
    write_config(tmp_path, "deaf: {plugin: 'deaf:deaf', move_timeout_s: 0.3}\nctrlc: {plugin: 'deaf:ctrl_c'}",
                 "[[deaf, random], [ctrlc, random]]")
    return tmp_path


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_plugin_that_catches_everything_or_raises_keyboard_interrupt_forfeits_and_the_run_goes_on(deaf, jobs):
    """The deaf plugin hung the run for ever (its interruption caught, again and again); a plugin's own
    KeyboardInterrupt stopped the whole run as if Ctrl-C had been pressed (130, nothing stored)."""
    result = boopexp_process("run", "p.yaml", "--jobs", jobs, cwd=deaf, timeout=120)
    assert result.returncode == 0, result.stderr
    records = {r["pairing"]: r for r in records_of(deaf / "results/p")}
    assert len(records) == 4
    errors = {"deaf": "move_timeout: plugin 'deaf' took longer than 0.3 s (move_timeout_s)",
              "ctrlc": "KeyboardInterrupt"}
    for agent, error in errors.items():
        for pairing in (f"{agent} vs random", f"random vs {agent}"):
            r = records[pairing]
            assert r["termination"] == "agent_error" and r["forfeit"]["error"] == error, (pairing, r)
    # the deaf plugin could not be stopped: said once a process, on stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("Warning: plugin 'deaf'")]
    assert 1 <= len(warnings) <= 2 and "did not stop when interrupted" in warnings[0], result.stderr
    assert "Traceback" not in result.stderr


def test_game_against_a_plugin_that_catches_everything_forfeits(deaf):
    result = boopexp_process("game", "--config", "p.yaml", "--p1", "random", "--p2", "deaf", cwd=deaf, timeout=120)
    assert result.returncode == 0, result.stderr
    assert ("random vs deaf: p1 (random, blue) wins in 1 plies by forfeit: deaf (p2) agent_error: move_timeout: "
            "plugin 'deaf' took longer than 0.3 s (move_timeout_s)") in result.stdout


def test_a_plugin_raising_keyboard_interrupt_is_not_ctrl_c(deaf):
    """It stopped the command as Ctrl-C would: "Interrupted by Ctrl-C during ply 2 of 'random vs ctrlc': nothing
    is stored ...", exit 130."""
    result = boopexp_process("game", "--config", "p.yaml", "--p1", "random", "--p2", "ctrlc", cwd=deaf, timeout=120)
    assert result.returncode == 0, result.stderr
    assert ("random vs ctrlc: p1 (random, blue) wins in 1 plies by forfeit: ctrlc (p2) agent_error: "
            "KeyboardInterrupt") in result.stdout
    assert "Interrupted" not in result.stderr


# -- games other than boop.: the game-neutral position (docs/agents.md, "Plugins in other games") ---


def test_the_game_neutral_position_plays_connect_four_and_your_own_game(monkeypatch):
    """``boopexp.GamePosition``: the legal moves in the game's notation, a move played on a copy,
    the outcome (a win, a draw), H, f, and a bad move refused with a few legal moves named."""
    from boopexp.errors import IllegalMoveError, InvalidMoveError
    from boopexp.games import registry

    game = registry.get("connect-four")
    c4 = boopexp.GamePosition(game)
    assert c4.legal_moves() == list("abcdefg") and c4.legal_codes() == list(range(7)) and c4.to_move == "blue"
    after = c4.play("d").position
    assert c4.legal_moves() == list("abcdefg") and after.to_move == "red" and after.move_number == 1  # c4 unchanged
    assert after.heuristic("red") == -after.heuristic("blue") and -1 <= after.objective("d") <= 1
    won = boopexp.GamePosition.from_string(game, "......./......./......./x....../x.o..../xoo.... x")
    result = won.play("a")
    assert result.winner == "blue" and result.position.over and result.position.legal_moves() == []
    assert result.position.over_text() == "p1 has won" and "x has won" in result.position.render()
    assert won.objective("a") == 1.0
    with pytest.raises(IllegalMoveError, match=r"^'a': the game is over \(p1 has won\)$"):
        result.position.check_legal("a")
    full = boopexp.GamePosition.from_string(game, "x....../o....../x....../o....../x....../o...... x")
    with pytest.raises(IllegalMoveError, match="column a is full; legal moves: b, c, d, e, f, g"):
        full.check_legal("a")
    with pytest.raises(IllegalMoveError, match=r"^move code 9 is illegal in '.*'; legal moves: a b c d e f g$"):
        c4.check_legal(9)
    with pytest.raises(InvalidMoveError, match="is not a move"):
        c4.check_legal(None)  # type: ignore[arg-type]
    monkeypatch.syspath_prepend(str(EXAMPLES))
    ttt = boopexp.GamePosition.from_string(registry.get("tictactoe.game"), "xox/xoo/ox. x")
    draw = ttt.play("c1")
    assert draw.draw and draw.winner is None and draw.position.over_text() == "a draw" and draw.move == "c1"
    assert boopexp.GamePosition.from_string(registry.get("tictactoe.game"), "xox/xoo/oxx o").outcome == 2


C4_PLUGIN_CONFIG = """name: c4p
seed: 3
games_per_side: {games}
game: connect-four
budget: {{mode: iterations, iterations: 2}}
agents:
  {agents}
pairings: [[{first}, random]]
"""


def test_the_example_plugin_plays_connect_four_unchanged_and_its_games_replay(tmp_path, monkeypatch):
    """examples/greedy_agent.py, written for boop., plays Connect Four as it is: the game-neutral
    position answers the same calls (``legal_moves``, ``to_move``, ``play(move, rng=…)`` and its
    ``winner``, ``heuristic``). Every game ends on the board, walks and is played again exactly."""
    from boopexp.play.replay import first_difference, walk

    monkeypatch.chdir(tmp_path)
    shutil.copy(EXAMPLES / "greedy_agent.py", tmp_path / "greedy_agent.py")
    (tmp_path / "c4.yaml").write_text(C4_PLUGIN_CONFIG.format(
        games=2, agents="greedy: {plugin: 'greedy_agent:make_greedy'}", first="greedy"))
    result = CliRunner().invoke(main, ["run", "c4.yaml", "--jobs", "1", "--out", "out", "-q"])
    assert result.exit_code == 0, result.output
    records = records_of(tmp_path / "out")
    assert len(records) == 4 and all(r.get("forfeit") is None and r["game"] == "connect-four" for r in records)
    assert sum(r["winner_agent"] == "greedy" for r in records) >= 3  # one ply of H beats random moves
    monkeypatch.syspath_prepend(str(tmp_path))
    for record in records:
        walk(record)
        assert first_difference(record) is None


@pytest.mark.parametrize(("value", "message"), [
    ("h", "'h' is not a Connect Four move: a move is a column letter a..g"),
    (42, "'; legal moves: a b c d e f g"),  # "move code 42 is illegal in '<the position>'; …"
    ("[1]", "is not a move: expected a move as connect-four writes it"),
])
def test_a_connect_four_plugins_bad_move_forfeits_naming_why(workdir, value, message):
    answer = "[1]" if value == "[1]" else repr(value)
    (workdir / "c4.yaml").write_text(C4_PLUGIN_CONFIG.format(
        games=1, agents=f"bot: {{plugin: 'my_agents:make', kind: return, value: {answer}}}", first="bot"))
    result = CliRunner().invoke(main, ["run", "c4.yaml", "--jobs", "1", "--out", "out", "-q"])
    assert result.exit_code == 0, result.output
    for record in records_of(workdir / "out"):
        assert record["termination"] == "illegal_move" and record["winner_agent"] == "random"
        assert message in record["forfeit"]["error"], record["forfeit"]


def test_a_connect_four_plugin_may_answer_a_move_code(workdir):
    """A move code (an int from ``legal_codes``) is a move as good as its text."""
    (workdir / "codes.py").write_text("def make():\n    class A:\n        def choose(self, position, rng):\n"
                                      "            return position.legal_codes()[-1]\n    return A()\n")
    (workdir / "c4.yaml").write_text(C4_PLUGIN_CONFIG.format(games=1, agents="bot: {plugin: 'codes:make'}",
                                                             first="bot"))
    result = CliRunner().invoke(main, ["run", "c4.yaml", "--jobs", "1", "--out", "out", "-q"])
    assert result.exit_code == 0, result.output
    record = next(r for r in records_of(workdir / "out") if r["p1"] == "bot")
    assert record.get("forfeit") is None and record["moves"][0] == "g"
