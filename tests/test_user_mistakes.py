"""Issue 15: every user mistake is one line, a non-zero exit and nothing saved touched; every
input has a bound; the surprises a newcomer met. One test (at least) per item, through the CLI."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import DEMO_CONFIG, fake_play_game

from boopexp.errors import ConfigError
from boopexp.experiments import interrupts, pool, scheduler
from boopexp.experiments.config import load_yaml, parse_config
from boopexp.experiments.runner import Progress, run_plan
from boopexp.experiments.store import GameStore, StoreReader
from boopexp.interfaces.cli import main
from boopexp.play import calibrate, match, throttle, warmup

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "demo.yaml").write_text(DEMO_CONFIG)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(match, "play_game", fake_play_game)
    return tmp_path


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_no_option_help_shows_a_bound_of_none():
    # issue 33: `openings --help` said "[default: 0.125; x<=None]" (an unbounded FiniteFloat)
    for name in main.commands:
        text = CliRunner().invoke(main, [name, "--help"], terminal_width=200).output
        assert "None]" not in text and "x<=None" not in text and "x>=None" not in text, (name, text)


def one_error_line(result, code: int) -> str:
    """The single 'Error: ...' line of a failed command (and no traceback)."""
    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def snapshot(folder: Path) -> dict:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


# --------------------------------------------------------------------------------------------
# tracebacks and unclear messages


def test_out_below_a_regular_file_is_one_line_naming_the_folder(workdir):
    (workdir / "afile").write_text("not a folder\n")
    line = one_error_line(invoke("run", "configs/demo.yaml", "--out", "afile/out", "--jobs", "1"), 1)
    assert "cannot write the results folder 'afile/out'" in line
    assert (workdir / "afile").read_text() == "not a folder\n"


@pytest.mark.skipif(not Path("/sys/kernel").is_dir(), reason="no sysfs (not Linux)")
def test_out_where_even_root_may_not_write_is_one_line(workdir):
    """sysfs refuses new folders to root too (EPERM): the read-only case that runs as root."""
    line = one_error_line(invoke("run", "configs/demo.yaml", "--out", "/sys/boopexp-test-out", "--jobs", "1"), 1)
    assert line.startswith("Error: cannot write the results folder '/sys/boopexp-test-out': ")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_store_is_one_line_naming_the_folder(workdir):
    assert invoke("run", "configs/demo.yaml", "--jobs", "1", "--games-per-side", "1").exit_code == 0
    folder = workdir / "results" / "demo"
    before = snapshot(folder)
    folder.chmod(0o555)
    try:
        line = one_error_line(invoke("run", "configs/demo.yaml", "--jobs", "1"), 1)
    finally:
        folder.chmod(0o755)
    assert "cannot write the results folder" in line and "results/demo" in line
    assert snapshot(folder) == before


def test_malformed_scheduler_address_is_one_line(workdir):
    line = one_error_line(invoke("run", "configs/demo.yaml", "--backend", "dask", "--scheduler", "notanaddress"), 2)
    assert "--scheduler 'notanaddress' is not a dask scheduler address" in line
    assert not (workdir / "results").exists()


def test_unreachable_scheduler_is_one_line_after_the_stated_timeout(workdir, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(scheduler, "SCHEDULER_TIMEOUT_S", 1)
    result = invoke("run", "configs/demo.yaml", "--backend", "dask", "--scheduler", "tcp://127.0.0.1:1")
    line = one_error_line(result, 1)
    assert "cannot reach the dask scheduler at tcp://127.0.0.1:1 within 1 s" in line
    assert not (workdir / "results").exists()  # checked before anything is written


def test_calibrate_with_no_usable_game_says_so(monkeypatch):
    monkeypatch.setattr(throttle, "host_iteration_rate", lambda agent, seconds=2.0, **kw: 1000.0)

    def cycle(task):  # every game ends at the ply cap
        return {"winner": None, "telemetry": []}

    monkeypatch.setattr(calibrate, "play_game", cycle)
    line = one_error_line(invoke("calibrate", "--device", "--games", "1", "--seconds", "0.1"), 2)
    assert "no usable calibration game" in line and "--games 8" in line
    assert "nan" not in line.lower()


# --------------------------------------------------------------------------------------------
# unbounded inputs


def _config(games_per_side: int):
    text = DEMO_CONFIG.replace("games_per_side: 2", f"games_per_side: {games_per_side}")
    return parse_config(load_yaml(text, "t.yaml"), "t.yaml")


def test_a_huge_plan_is_planned_lazily(tmp_path, monkeypatch):
    """10^10 games per side: the run starts at once (no plan in memory) and stops cleanly."""
    played = []

    def play(task):
        if len(played) == 3:
            raise KeyboardInterrupt
        played.append(task.game_index)
        return fake_play_game(task)

    monkeypatch.setattr(match, "play_game", play)
    c = _config(10_000_000_000)
    report = run_plan(c, c.plan(), tmp_path)
    assert report.interrupted and report.played == 3 and played == [0, 1, 2]
    assert report.planned == 4 * 10_000_000_000


def test_huge_games_per_side_on_the_command_line_starts_at_once(workdir, monkeypatch):
    calls = []

    def play(task):
        if calls:
            raise KeyboardInterrupt
        calls.append(task)
        return fake_play_game(task)

    monkeypatch.setattr(match, "play_game", play)
    result = invoke("run", "configs/demo.yaml", "--games-per-side", "100000000", "--jobs", "1")
    assert result.exit_code == 130
    assert "Interrupted: 1 of 400000000 games are stored" in result.stderr


@pytest.mark.parametrize("args, message", [
    (["run", "configs/demo.yaml", "--shard", "99999999999999999999/99999999999999999999"],
     "Error: --shard 99999999999999999999/99999999999999999999: N must be at most 10000000 shards"),
    (["run", "configs/demo.yaml", "--games-per-side", "99999999999999999999"],
     "Error: --games-per-side 99999999999999999999: games_per_side = 99999999999999999999 must be a positive "
     "integer of at most 4611686018427387903 (2^62-1)"),
    (["run", "configs/huge.yaml"],
     "Error: configs/huge.yaml: games_per_side = 99999999999999999999 must be a positive integer of at most "
     "4611686018427387903 (2^62-1)"),
    (["mirror", "--agent", "vanilla", "--config", "configs/demo.yaml", "--games", "99999999999999999999"],
     "Error: --games 99999999999999999999: games = 99999999999999999999 must be a positive integer of at most "
     "9223372036854775807 (2^63-1)"),
    (["run", "configs/demo.yaml", "--pairing", "random vs random"],
     "Error: --pairing 'random vs random' is not planned"),
])
def test_a_refused_run_writes_nothing(workdir, args, message):
    """A number no game index can hold (issue 33: a traceback, and a store folder left with a
    config.yaml) and any refused run: one line, exit 2, no folder made."""
    (workdir / "configs" / "huge.yaml").write_text(DEMO_CONFIG.replace("games_per_side: 2",
                                                                       "games_per_side: 99999999999999999999"))
    line = one_error_line(invoke(*args, "--out", "out"), 2)
    assert line.startswith(message), line
    assert sorted(p.name for p in workdir.iterdir()) == ["configs"]


def test_jobs_are_capped_at_the_games_to_play_with_a_warning_above_the_cpus(workdir, monkeypatch):
    assert pool.PoolOptions(1000).for_games(10).jobs == 10
    assert pool.PoolOptions(3).for_games(10).jobs == 3
    assert pool.PoolOptions(8).for_games(0).jobs == 1
    said = []
    monkeypatch.setattr(pool, "cpu_count", lambda: 2)
    assert pool.PoolOptions(1000).for_games(10, lambda text, warning: said.append((text, warning))).jobs == 10
    assert said == [("--jobs 1000: 10 workers on 2 CPU(s) share the cores: games run no faster in total, "
                     "and cpu/wall budgets get less thinking per move", True)]
    remote = pool.PoolOptions(100, "dask", "tcp://h:8786")
    assert remote.for_games(10) == remote  # a remote cluster's own workers

    monkeypatch.setattr(pool, "cpu_count", lambda: 1)
    result = invoke("run", "configs/demo.yaml", "--games-per-side", "1", "--jobs", "1000")
    assert result.exit_code == 0, result.output
    assert "Warning: --jobs 1000: 4 workers on 1 CPU(s)" in result.stderr


def test_a_dead_worker_retries_only_the_games_it_was_playing(tmp_path):
    """Many fast games, one worker killed: at most one game per worker is retried alone."""
    import functools

    c = _config(6)
    tasks = c.tasks(c.plan())
    victim = tasks[7]
    (tmp_path / "marks").mkdir()
    play = functools.partial(fake_play_game, die=(f"{victim.pairing}#{victim.game_index}",),
                             die_once_dir=str(tmp_path / "marks"))

    class Recorder(Progress):
        messages: list = []

        def message(self, text, warning=True):
            self.messages.append(text)

    progress = Recorder()
    report = run_plan(c, c.plan(), tmp_path / "res", pool.PoolOptions(jobs=2, play=play), progress=progress)
    assert report.complete and not report.failed and report.played == len(tasks)
    deaths = [m for m in progress.messages if "a worker died" in m]
    assert len(deaths) == 1
    retried = int(deaths[0].split("retrying the ")[1].split(" ")[0])
    assert 1 <= retried <= 2, deaths


def test_a_signal_during_the_storing_of_a_game_is_held_until_it_is_counted():
    """The signal may reach any thread (a pool's); its handler runs in the main thread at once:
    the flag, not a signal mask, keeps it out of the store-and-count step."""
    stop = interrupts.Interrupts()
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with stop:
            with stop.held():
                sender = threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGTERM))
                sender.start()
                sender.join()
                for i in range(1000):  # bytecode boundaries: the Python handler has run by now
                    steps.append(i)
                steps.append("counted")
    assert steps[-1] == "counted" and stop.signum == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is not stop._handler  # restored


# --------------------------------------------------------------------------------------------
# what a newcomer stumbles on


def test_first_run_says_the_engine_is_compiling_once(workdir, monkeypatch):
    monkeypatch.setattr(warmup, "engine_is_compiled", lambda kinds: False)
    result = invoke("run", "configs/demo.yaml", "--jobs", "1", "--games-per-side", "1")
    assert result.exit_code == 0
    assert re.fullmatch(re.escape(warmup.COMPILING) + r"\ncompiled the engine in \d+ s\n",
                        result.stderr), result.stderr
    assert result.stdout.startswith("4 games planned")  # after the compile: the run's clock starts there
    monkeypatch.setattr(warmup, "engine_is_compiled", lambda kinds: True)
    result = invoke("run", "configs/demo.yaml", "--jobs", "1", "--games-per-side", "2")
    assert "compiling the engine" not in result.stderr


def test_engine_is_compiled_looks_for_the_kernels_of_the_kinds_in_numba_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert not warmup.engine_is_compiled()  # numba uses that folder alone: the kernels' own cache is not read
    (tmp_path / "deep").mkdir()
    for module, name in warmup.KERNELS["game"] + warmup.KERNELS["random"]:
        (tmp_path / "deep" / f"{module}.{name}-12.py311.nbi").write_bytes(b"")
    assert warmup.engine_is_compiled(["random"])
    assert not warmup.engine_is_compiled(["random", "mcts"])  # the search is not there
    for module, name in warmup.KERNELS["mcts"]:
        (tmp_path / "deep" / f"{module}.{name}-99.py311.nbi").write_bytes(b"")
    assert warmup.engine_is_compiled(["random", "mcts"]) and not warmup.engine_is_compiled()


def _ctrl_c_inside_the_compiler(kinds=(), searches=()):
    """What Ctrl-C does to numba compiling the engine: the KeyboardInterrupt raised in an LLVM
    callback is dropped, and the half-built kernel then fails."""
    try:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # bytecode boundaries: the handler has run by now
            pass
    except KeyboardInterrupt:  # what the C callback does with it
        pass
    raise RuntimeError("no compiled object yet for <Library 'create_node'>")


def test_ctrl_c_while_the_engine_compiles_is_one_line_and_130(workdir, monkeypatch):
    monkeypatch.setattr(warmup, "engine_is_compiled", lambda kinds: False)
    monkeypatch.setattr(match, "compile_kernels", _ctrl_c_inside_the_compiler)
    result = invoke("run", "configs/demo.yaml", "--jobs", "1")
    assert result.exit_code == 130, result.output
    assert result.stderr == (
        f"{warmup.COMPILING}\n"
        f"Interrupted: 0 of 8 games are stored in {Path('results/demo/games.jsonl')} (games in flight were dropped). "
        "To resume, run:\n  boopexp run configs/demo.yaml --jobs 1\n")
    result = invoke("game", "--p1", "random", "--p2", "random")
    assert result.exit_code == 130, result.output
    assert result.stderr == (
        f"{warmup.COMPILING}\n"
        "Interrupted by Ctrl-C while compiling the engine: nothing is stored (game keeps no record); the same "
        "command plays the game again from its first move.\n")


@pytest.mark.slow
def test_a_first_run_compiles_the_engine_before_its_first_game(tmp_path):
    """A cold numba cache (10-60 s of CPU; test_warmup.py has the other): the run compiles the engine before
    the games, says how long it took, and the games (in loky workers, which load the kernels from
    the cache) count none of it: the first game used to take the whole minute."""
    (tmp_path / "tiny.yaml").write_text("name: tiny\nseed: 3\ngames_per_side: 1\n"
                                        "budget: {mode: iterations, iterations: 2}\npairings:\n"
                                        "  - [vanilla, heuristics]\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache"), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.run([sys.executable, "-m", "boopexp", "run", "tiny.yaml", "--jobs", "2"], cwd=tmp_path, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0, proc.stdout
    assert lines[0] == warmup.COMPILING, lines
    compiled = re.fullmatch(r"compiled the engine in (\d+) s", lines[1])
    assert compiled is not None and lines[2].startswith("2 games planned"), lines
    games = StoreReader(tmp_path / "results" / "tiny").records().records
    assert len(games) == 2
    # a game of two-iteration searches is a fraction of a second: no game holds the compilation
    assert all(g["host_seconds"] < max(int(compiled[1]), 8) / 4 for g in games), (compiled[1], games)


def test_every_golden_test_is_collected_and_skipped_without_data_and_fails_under_ci(tmp_path):
    env = {**os.environ, "BOOP_GOLDEN": str(tmp_path / "none.json.gz"),
           "BOOP_HEURISTIC_VECTORS": str(tmp_path / "none.jsonl"), "CI": "false"}
    args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(TESTS / "test_golden.py")]
    out = subprocess.run(args + ["-q", "-rs"], env=env, cwd=REPO, capture_output=True, text=True).stdout
    from engine_helpers import GOLDEN_POSITIONS

    assert f"SKIPPED [{GOLDEN_POSITIONS + 3}] " in out and "golden file not found" in out, out[-2000:]
    assert "failed" not in out.splitlines()[-1]
    ci = subprocess.run(args + ["-q", "-k", "expected_one or state_heuristic"], env={**env, "CI": "true"}, cwd=REPO,
                        capture_output=True, text=True)
    assert ci.returncode == 1
    assert "golden test skipped under CI (CI=true)" in ci.stdout and "2 failed" in ci.stdout


def test_a_missing_results_folder_is_exit_2_everywhere(tmp_path):
    missing = str(tmp_path / "nowhere")
    for args in (["status", missing], ["tables", missing, "--out", str(tmp_path / "t")],
                 ["replay", missing, "--pairing", "a vs b", "--game", "0"]):
        line = one_error_line(invoke(*args), 2)
        assert "nowhere" in line


@pytest.mark.parametrize("damage, problem", [
    (b"name: \xff\xfe broken\n", "not UTF-8 text (byte 0xff at offset {offset}: invalid start byte)"),
    (b"plan: [unclosed\n", "malformed YAML: expected ',' or ']', but got '<stream end>'"),
], ids=["not-utf8", "malformed"])
def test_a_damaged_config_yaml_is_one_line_naming_it_in_status_and_tables(workdir, damage, problem):
    """Issue 20: a config.yaml that is not UTF-8 was a UnicodeDecodeError traceback in status and
    tables; tables, after warning "using every game", had written its files from every game."""
    assert invoke("run", "configs/demo.yaml", "--jobs", "1", "--games-per-side", "1").exit_code == 0
    folder = workdir / "results" / "demo"
    config = folder / "config.yaml"
    offset = len(config.read_bytes()) + damage.index(b"\xff") if b"\xff" in damage else 0
    config.write_bytes(config.read_bytes() + damage)
    before = snapshot(folder)
    for args in (["status", str(folder)], ["tables", str(folder), "--out", str(workdir / "t")]):
        line = one_error_line(invoke(*args), 1)
        assert line.startswith(f"Error: {config}") and problem.format(offset=offset) in line, line
        assert line.endswith("; restore it (a copy, or the config the games were run with)"), line
    assert snapshot(folder) == before and not (workdir / "t").exists()


# --------------------------------------------------------------------------------------------
# conveniences


def test_status_json(workdir):
    assert invoke("run", "configs/demo.yaml", "--jobs", "1", "--games-per-side", "1").exit_code == 0
    import json

    result = invoke("status", "--json")
    assert result.exit_code == 0
    (folder,) = json.loads(result.stdout)
    assert folder["folder"] == str(Path("results/demo")) and folder["settings"]["name"] == "demo"
    assert folder["total"] == {"done": 4, "planned": 4}
    pairings = {p["pairing"]: p for p in folder["pairings"]}
    assert set(pairings) == {"heuristics vs random", "random vs heuristics", "vanilla vs vanilla"}
    assert pairings["vanilla vs vanilla"]["planned"] == 2
    assert sum(p["p1_wins"] + p["p2_wins"] + p["no_winner"] for p in folder["pairings"]) == 4
    assert json.loads(invoke("status", "results/demo", "--json").output) == [folder]


def test_run_one_pairing_of_a_config_with_an_alias(workdir):
    text = DEMO_CONFIG.replace("  - [vanilla, vanilla]", "  - [mcts-co, random]")
    (workdir / "configs" / "co.yaml").write_text(text.replace("name: demo", "name: co"))
    result = invoke("run", "configs/co.yaml", "--jobs", "1", "--pairing", "mcts+SEP vs random")
    assert result.exit_code == 0, result.output
    records = StoreReader(workdir / "results" / "co").records().records
    assert {r["pairing"] for r in records} == {"mcts-co vs random"} and len(records) == 2
    line = one_error_line(invoke("run", "configs/co.yaml", "--pairing", "vanilla vs random"), 2)
    assert "--pairing 'vanilla vs random' is not planned by configs/co.yaml; its pairings: heuristics vs random" in line
    line = one_error_line(invoke("run", "configs/co.yaml", "--pairing", "mcts-co random"), 2)
    assert 'must look like "A vs B"' in line


def test_dry_run_prints_the_plan_and_writes_nothing(workdir):
    assert invoke("run", "configs/demo.yaml", "--jobs", "1", "--games-per-side", "1").exit_code == 0
    before = snapshot(workdir)
    result = invoke("run", "configs/demo.yaml", "--dry-run", "--jobs", "1")
    assert result.exit_code == 0
    assert result.output.splitlines()[0].startswith("Dry run (nothing is played or written): demo, seed 11")
    assert "vanilla vs vanilla" in result.output and "4 game(s) to play on 1 loky worker(s)." in result.output
    total = next(line for line in result.output.splitlines() if line.split()[:1] == ["total"])
    assert total.split() == ["total", "8", "4", "4"]
    result = invoke("mirror", "--agent", "vanilla", "--games", "6", "--config", "configs/demo.yaml", "--dry-run")
    assert result.exit_code == 0 and "4 game(s) to play" in result.output
    assert snapshot(workdir) == before


# --------------------------------------------------------------------------------------------
# one validation for CLI options and config keys


@pytest.mark.parametrize(
    "options, config_line, message",
    [
        (["--seed", "-1"], "seed: -1", "seed = -1 must be an integer from 0 to 2^64-1 (18446744073709551615)"),
        (["--seed", str(2**64)], f"seed: {2**64}",
         f"seed = {2**64} must be an integer from 0 to 2^64-1 (18446744073709551615)"),
        (["--iterations", "5"], "budget: {mode: device, iterations: 5}",
         "unknown key budget.iterations (value 5) for mode 'device'; allowed: mode, seconds, profile, costs"),
        (["--budget", "iterations", "--seconds", "2"], "budget: {mode: iterations, seconds: 2.0}",
         "unknown key budget.seconds (value 2.0) for mode 'iterations'; allowed: mode, iterations"),
        (["--budget", "iterations", "--iterations", "0"], "budget: {mode: iterations, iterations: 0}",
         "budget.iterations = 0 must be a positive integer, at most 1,000,000"),
        (["--seconds", "-1"], "budget: {mode: device, seconds: -1.0}",
         "budget.seconds = -1.0 must be a positive number of seconds, at most 600"),
        # finite bounds (issue 33): a budget that would hold a core for ever is refused
        (["--seconds", "1e308"], "budget: {mode: device, seconds: 1.0e+308}",
         "budget.seconds = 1e+308 must be a positive number of seconds, at most 600"),
        (["--budget", "wall", "--seconds", "601"], "budget: {mode: wall, seconds: 601.0}",
         "budget.seconds = 601.0 must be a positive number of seconds, at most 600"),
        (["--budget", "iterations", "--iterations", str(10**30)], f"budget: {{mode: iterations, iterations: {10**30}}}",
         f"budget.iterations = {10**30} must be a positive integer, at most 1,000,000"),
        (["--budget", "cpu", "--throttle", "1e6"], "budget: {mode: cpu, throttle: 1.0e+6}",
         "budget.throttle = 1000000.0 must be a positive number of at most 10, or 'auto'"),
    ],
)
def test_game_options_and_config_keys_share_validation_and_messages(workdir, options, config_line, message):
    line = one_error_line(invoke("game", "--p1", "random", "--p2", "random", *options), 2)
    assert line.endswith(message) and line.startswith(f"Error: {options[-2]} ")
    key = config_line.split(":")[0]
    text = "\n".join(line for line in DEMO_CONFIG.splitlines() if not line.startswith(f"{key}:")) + f"\n{config_line}\n"
    (workdir / "bad.yaml").write_text(text)
    assert one_error_line(invoke("run", "bad.yaml"), 2) == f"Error: bad.yaml: {message}"


def test_the_largest_seed_is_accepted():
    result = invoke("game", "--p1", "random", "--p2", "random", "--seed", str(2**64 - 1),
                    "--budget", "iterations", "--iterations", "1")
    assert result.exit_code == 0, result.output


def test_game_help_explains_budget_profile_and_preset():
    text = invoke("game", "--help").output
    for needle in ("emulated device, deterministic", "cost of each primitive", "reference code"):
        assert needle in " ".join(text.split())


# --------------------------------------------------------------------------------------------
# the ply cap as a config key


def test_max_plies_default_keeps_every_identity_and_a_cap_is_a_setting(tmp_path):
    from boopexp.play.contract import task_from_record

    base = _config(1)
    same = parse_config(load_yaml(DEMO_CONFIG + "max_plies: 1000\n", "t.yaml"), "t.yaml")
    capped = parse_config(load_yaml(DEMO_CONFIG + "max_plies: 6\n", "t.yaml"), "t.yaml")
    assert same.settings.max_plies is None and capped.settings.max_plies == 6
    assert [p.config_hash for p in same.plan()] == [p.config_hash for p in base.plan()]
    assert "max_plies" not in same.resolved() and capped.resolved()["max_plies"] == 6
    assert not {p.config_hash for p in capped.plan()} & {p.config_hash for p in base.plan()}
    task = capped.tasks(capped.plan())[0]
    record = match.play_game(task)
    assert record["plies"] == 6 and record["winner"] is None and record["termination"] == "ply_limit"
    assert record["max_plies"] == 6 and task_from_record(record) == task
    assert "max_plies" not in match.play_game(base.tasks(base.plan())[0])


@pytest.mark.parametrize("value", ["0", "-3", "2.5", "16001", "lots"])
def test_bad_max_plies_is_one_line(workdir, value):
    (workdir / "bad.yaml").write_text(DEMO_CONFIG + f"max_plies: {value}\n")
    line = one_error_line(invoke("run", "bad.yaml"), 2)
    assert line.startswith("Error: bad.yaml: max_plies = ") and "must be an integer from 1 to 16000" in line
    line = one_error_line(invoke("game", "--p1", "random", "--p2", "random", "--max-plies", "0"), 2)
    assert "--max-plies 0: max_plies = 0 must be an integer from 1 to 16000" in line


def test_game_says_the_engine_is_compiling_on_a_first_run(monkeypatch):
    monkeypatch.setattr(warmup, "engine_is_compiled", lambda kinds: False)
    result = invoke("game", "--p1", "random", "--p2", "random", "--budget", "iterations", "--iterations", "1")
    assert result.exit_code == 0
    assert re.fullmatch(re.escape(warmup.COMPILING) + r"\ncompiled the engine in \d+ s\n",
                        result.stderr), result.stderr


# --------------------------------------------------------------------------------------------
# replay: the hash and the alias in its messages, every counted field checked


@pytest.fixture(scope="module")
def one_stored_game(tmp_path_factory):
    """A real game of "mcts-co vs random" stored by the runner (canonical names, derived seed)."""
    folder = tmp_path_factory.mktemp("replay")
    text = DEMO_CONFIG.replace("  - [heuristics, random]\n  - [vanilla, vanilla]", "  - [mcts-co, random]")
    c = parse_config(load_yaml(text.replace("games_per_side: 2", "games_per_side: 1"), "t.yaml"), "t.yaml")
    plan = tuple(p for p in c.plan() if p.pairing == "mcts-co vs random")
    run_plan(c, plan, folder)
    (record,) = StoreReader(folder).records().records
    return folder, record


def _replay(folder, *args):
    return invoke("replay", str(folder), *args)


def test_replay_maps_aliases_as_configs_do(one_stored_game):
    folder, record = one_stored_game
    result = _replay(folder, "--pairing", "mcts+SEP vs random", "--game", "0")
    assert result.exit_code == 0 and "as recorded" in result.output


def test_replay_no_game_message_names_the_settings_hash(one_stored_game):
    folder, record = one_stored_game
    line = one_error_line(_replay(folder, "--pairing", "mcts-co vs random", "--game", "0", "--config-hash", "zzzz"), 2)
    assert "with a settings hash starting 'zzzz'" in line and record["config_hash"] in line
    negative = _replay(folder, "--pairing", "mcts-co vs random", "--game", "-1")  # click's usage error
    assert negative.exit_code == 2
    assert "Error: Invalid value for '--game': -1 is not in the range x>=0" in negative.stderr


@pytest.mark.parametrize(
    "change",
    [
        lambda r: {"winner": "p2" if r["winner"] == "p1" else "p1"},  # the field status and the tables count
        lambda r: {"winner": None},
        lambda r: {"winner_agent": "vanilla"},
        lambda r: {"termination": "ply_limit"},
        lambda r: {"p1": "vanilla"},
        lambda r: {"pairing": "random vs mcts-co"},
        lambda r: {"telemetry": r["telemetry"][:-1]},
        lambda r: {"telemetry": [dict(t, agent="vanilla") for t in r["telemetry"]]},
    ],
    ids=["winner", "winner-null", "winner_agent", "termination", "p1", "pairing", "telemetry-short",
         "telemetry-agent"],
)
def test_replay_checks_every_counted_field(one_stored_game, tmp_path, change):
    import json

    folder, record = one_stored_game
    from boopexp.play.contract import unpack_record

    full = unpack_record(record)  # every field written out, as schema 1 stores it
    altered = {**full, **change(full)}
    (tmp_path / "games.jsonl").write_text(json.dumps(altered) + "\n")
    pairing = altered["pairing"]
    line = one_error_line(invoke("replay", str(tmp_path), "--pairing", pairing, "--game", "0"), 1)
    assert "the record says" in line or "telemetry" in line, line


@pytest.mark.parametrize("moves, problem", [
    (None, "has no 'moves' key (the list of its moves)"),
    ("c3 D4", "has 'moves' = 'c3 D4', not a list of move strings"),
], ids=["missing", "a-string"])
def test_replay_of_a_record_without_its_moves_names_the_file_and_line(one_stored_game, tmp_path, moves, problem):
    """Issue 20: a record without "moves" was a KeyError traceback in replay."""
    import json

    from boopexp.play.contract import unpack_record

    folder, record = one_stored_game
    full = unpack_record(record)
    damaged = {k: v for k, v in full.items() if k != "moves"}
    if moves is not None:
        damaged["moves"] = moves
    log = tmp_path / "games.jsonl"
    log.write_text(json.dumps({**full, "game_index": 1}) + "\n" + json.dumps(damaged) + "\n")
    before = log.read_bytes()
    for extra in ([], ["--search"]):
        line = one_error_line(invoke("replay", str(tmp_path), "--pairing", "mcts-co vs random", "--game", "0",
                                     *extra), 1)
        assert line == f"Error: {log} line 2: game 'mcts-co vs random' #0 {problem}; repair or remove that line"
    assert log.read_bytes() == before


# --------------------------------------------------------------------------------------------
# numbers: exponent notation, nan and infinity (issue 20)


def test_exponent_notation_is_a_number_in_a_config_and_a_param_value():
    """PyYAML (YAML 1.1) reads 5e-1 as the string '5e-1' (its floats need a dot and a signed
    exponent); a boopexp config reads it as YAML 1.2 does: the number 0.5, the same games as 0.5."""
    def config(seconds: str):
        budget = f"budget: {{mode: device, seconds: {seconds}}}"
        text = DEMO_CONFIG.replace("budget: {mode: iterations, iterations: 2}", budget)
        assert text != DEMO_CONFIG
        return parse_config(load_yaml(text, "t.yaml"), "t.yaml")

    plain = [p.config_hash for p in config("0.5").plan()]
    for written in ("5e-1", "5E-1", "0.5e0", "+5e-1", ".5e0", "50e-2"):
        assert [p.config_hash for p in config(written).plan()] == plain, written
    assert load_yaml("[1e3, 1.5e3, 2E+2, '5e-1', 1e3x, e3]") == [1000.0, 1500.0, 200.0, "5e-1", "1e3x", "e3"]
    result = invoke("game", "--p1", "mcts-co", "--p2", "random", "--p1-param", "uct_c=5e-1", "--budget", "iterations",
                    "--iterations", "2", "--json")
    assert result.exit_code == 0, result.output


def test_a_stored_config_keeps_the_yaml_rules_it_was_written_with(tmp_path):
    """A store's config.yaml is PyYAML's output, which writes a string like a settings hash
    '1e65966264717835' unquoted: it is read back as that string, never as a number."""
    store = GameStore(tmp_path)
    store.write_config({"name": "x", "plan": [{"config_hash": "1e65966264717835"}], "note": "5e-1"})
    assert store.read_config() == {"name": "x", "plan": [{"config_hash": "1e65966264717835"}], "note": "5e-1"}


def _float_options():
    """(command, option) of every float option of the CLI."""
    import click

    for name, command in sorted(main.commands.items()):
        for param in command.params:
            if isinstance(param, click.Option) and isinstance(param.type, (click.types.FloatParamType,)):
                yield name, param.opts[0]


#: the least each command needs besides the option tested, so that it reaches its validation
_REQUIRED = {"game": ["--p1", "random", "--p2", "random"], "play": ["--agent", "random"],
             "engine": ["--agent", "random"],
             "openings": ["--plies", "1", "--count", "1", "--out", "s.txt"]}


@pytest.mark.parametrize("command, option", list(_float_options()))
@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_every_float_option_refuses_nan_and_infinity(workdir, command, option, value):
    """calibrate --seconds nan once measured for ever; click's FLOAT takes nan and inf."""
    result = invoke(command, *_REQUIRED.get(command, []), option, value)
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output and value in result.stderr.splitlines()[-1]


def test_the_float_options_are_found():
    assert {("bench", "--seconds"), ("calibrate", "--seconds"), ("game", "--seconds")} <= set(_float_options())


@pytest.mark.parametrize("key, value", [
    ("budget", "{mode: device, seconds: SEC}"), ("budget", "{mode: cpu, throttle: SEC}"),
    ("budget", "{mode: device, costs: {node: SEC}}"), ("budget", "{mode: device, costs: {solver_scale: SEC}}"),
    ("params", "{d: SEC}"), ("agents", "{mcts-co: {uct_c: SEC}}"), ("agents", "{mcts-co: {discount: SEC}}"),
    ("sprt", "{elo0: 0, elo1: SEC}"), ("sprt", "{elo0: 0, elo1: 30, alpha: SEC}"),
])
@pytest.mark.parametrize("number", [".nan", ".inf", "-.inf"])
def test_every_float_config_key_refuses_nan_and_infinity(key, value, number):
    text = "\n".join(line for line in DEMO_CONFIG.splitlines() if not line.startswith(f"{key}:"))
    text += f"\n{key}: {value.replace('SEC', number)}\n"
    with pytest.raises(ConfigError) as info:
        parse_config(load_yaml(text, "t.yaml"), "t.yaml")
    assert "\n" not in str(info.value) and number.lstrip("-.") in str(info.value)


# --------------------------------------------------------------------------------------------
# numbers too long, too large or not ASCII (issue 33, hostile trial items 7, 8, 12, 14)

LONG = "9" * 5000  # more digits than Python turns into an int (its 4,300-digit guard)


def test_a_param_value_of_5000_digits_is_one_line_naming_the_key(workdir):
    error = one_error_line(invoke("game", "--p1", "vanilla", "--p2", "random", "--p1-param", f"uct_c={LONG}"), 2)
    assert "uct_c" in error and "5000 digits" in error and "must be a number in" in error


@pytest.mark.parametrize("key, line", [
    ("seed", "seed: N"), ("games_per_side", "games_per_side: N"), ("max_plies", "max_plies: N"),
    ("budget.iterations", "budget: {mode: iterations, iterations: N}"),
    ("agents.x.memory_mb", "agents: {x: {engine: [python3, e.py], memory_mb: N}}"),
])
def test_a_config_number_of_5000_digits_is_one_line_naming_the_key(workdir, key, line):
    top = line.split(":")[0]
    text = "\n".join(x for x in DEMO_CONFIG.splitlines() if not x.startswith(f"{top}:"))
    Path("long.yaml").write_text(text + "\n" + line.replace("N", LONG) + "\n")
    error = one_error_line(invoke("run", "long.yaml", "--out", "st"), 2)
    assert f"{key} = <an integer of 5000 digits> must be" in error, error
    assert not Path("st").exists()


@pytest.mark.parametrize("field, text", [
    ("move number", "....../....../....../....../....../...... 8,0 8,0 b 0,0 99999999999999999999"),
    ("Blue's pool", "....../....../....../....../....../...... 99999999999999999999,0 8,0 b"),
    ("Red's pool", "....../....../....../....../....../...... 8,0 8,99999999999999999999 r"),
    ("large counters", "....../....../....../....../....../...... 8,0 8,0 b 99999999999999999999,0 0"),
    ("move number", "....../....../....../....../....../...... 8,0 8,0 b 0,0 " + LONG),
    ("Blue's pool", "....../....../....../....../....../...... ８,0 8,0 b"),
    ("Blue's pool", "....../....../....../....../....../...... ²,0 8,0 b"),
])
def test_a_start_position_with_a_huge_or_foreign_number_is_one_line(workdir, field, text):
    error = one_error_line(invoke("game", "--p1", "random", "--p2", "random", "--start", text), 2)
    assert field in error, error


def test_an_openings_file_with_a_huge_number_is_one_line_and_nothing_written(workdir):
    Path("o.txt").write_text("....../....../....../....../....../...... 8,0 8,0 b 0,0 99999999999999999999\n")
    Path("o.yaml").write_text(DEMO_CONFIG + "openings: {file: o.txt}\n")
    error = one_error_line(invoke("run", "o.yaml", "--out", "st"), 2)
    assert "move number" in error, error
    assert not Path("st").exists()


@pytest.mark.parametrize("option, args", [
    ("--seconds", ["bench", "--seconds", "1e308"]), ("--repeats", ["bench", "--repeats", "99999999999999999999"]),
    ("--seconds", ["calibrate", "--seconds", "1e308"]),
    ("--games", ["calibrate", "--device", "--games", "99999999999999999999"]),
    ("--games", ["calibrate", "--device", "--games", "0"]),
    ("--count", ["openings", "--plies", "1", "--count", "100000000000", "--out", "s.txt"]),
    ("--jobs", ["run", "configs/demo.yaml", "--jobs", "1000000", "--out", "st"]),
])
def test_a_number_option_too_large_to_finish_is_one_line(workdir, option, args):
    """bench --seconds 1e308, openings --count 10^11 and the like ran for ever."""
    error = one_error_line(invoke(*args), 2)
    assert error.startswith(f"Error: Invalid value for '{option}'") and "range" in error, error
    assert not Path("s.txt").exists() and not Path("st").exists()


def _number_options():
    """(command, option, a value past any sensible bound) of every integer and float option."""
    import click

    for name, command in sorted(main.commands.items()):
        for param in command.params:
            if not isinstance(param, click.Option) or param.is_flag:
                continue
            if isinstance(param.type, click.types.FloatParamType):
                yield name, param.opts[0], "1e308"
            elif isinstance(param.type, click.types.IntParamType):
                yield name, param.opts[0], "99999999999999999999"


#: besides _REQUIRED: what run and mirror need to reach their options' checks (a dry run)
_NUMBER_REQUIRED = {"run": ["configs/demo.yaml", "--dry-run", "--out", "st"],
                    "mirror": ["--agent", "random", "--dry-run", "--out", "st"]}


@pytest.mark.parametrize("command, option, value", list(_number_options()))
def test_every_number_option_has_an_upper_bound(workdir, command, option, value):
    """A typo of a few digits must not start a command that runs for ever (or crashes on an
    integer no C type holds): every number option has a finite bound, said in one line."""
    before = set(Path(".").iterdir())
    result = invoke(command, *_NUMBER_REQUIRED.get(command, _REQUIRED.get(command, [])), option, value)
    assert result.exit_code == 2, (command, option, result.exit_code, result.output)
    assert "Traceback" not in result.output and result.stderr.strip().splitlines()[-1].startswith("Error: ")
    assert set(Path(".").iterdir()) == before


@pytest.mark.parametrize("shard", ["３/４", "3/４", "٣/4", "+3/4", "3_0/40", " 3/4", "3/4 "])
def test_a_shard_is_ascii_digits_only(workdir, shard):
    error = one_error_line(invoke("run", "configs/demo.yaml", "--out", "st", "--shard", shard), 2)
    assert "--shard" in error
    assert not Path("st").exists()


@pytest.mark.parametrize("args, named", [
    (["bench", "--seconds", "-1"], "'--seconds'"),               # a value out of its range
    (["bench", "--sekonds", "1"], "--sekonds"),                  # a misspelt option
    (["run"], "'CONFIG'"),                                       # a missing argument
    (["rnu", "configs/demo.yaml"], "'rnu'"),                     # an unknown command
    (["--verbose", "run"], "--verbose"),                         # the group's own options
])
def test_a_usage_mistake_is_one_line_naming_the_command_help(workdir, args, named):
    """click printed four lines (usage, a hint, a blank, the error): now the error and where help is."""
    error = one_error_line(invoke(*args), 2)
    assert named in error and "--help" in error, error


def _folder_params():
    import click

    for name, command in sorted(main.commands.items()):
        for param in command.params:
            if isinstance(param.type, click.Path) and not param.type.file_okay:
                yield pytest.param(command, param, id=f"{name} {param.opts[0]}")


@pytest.mark.parametrize("command, param", list(_folder_params()))
def test_a_dash_is_no_folder(command, param):
    """``--out -`` made a store or report folder called ``-`` (click's Path reads a dash as a
    name where it does not allow it as standard output): every folder option refuses it."""
    import click

    with pytest.raises(click.BadParameter, match="'-' is not a folder"):
        param.type.convert("-", param, click.Context(command))


def test_tables_out_dash_is_one_line_and_makes_no_folder(workdir):
    error = one_error_line(invoke("tables", "--out", "-"), 2)
    assert "'-' is not a folder" in error and not Path("-").exists(), error


@pytest.mark.parametrize("args", [
    ["tables", "st", "--out", "st"], ["ratings", "st", "--out", "st"],
    ["merge", "st", "--out", "st/sub"], ["merge", "st", "--out", "."],
])
def test_an_out_folder_that_is_a_store_it_reads_is_refused(workdir, args):
    """`tables st --out st` wrote its tables among the store's games, `merge a --out a/sub` a store
    inside a store: refused, one line, the store untouched."""
    assert invoke("run", "configs/demo.yaml", "--out", "st", "--jobs", "1", "--games-per-side", "1").exit_code == 0
    before = snapshot(workdir / "st")
    error = one_error_line(invoke(*args), 2)
    assert "--out" in error and ("the store st" in error or "holds" in error or "inside" in error), error
    assert snapshot(workdir / "st") == before


def test_tables_into_a_subfolder_of_the_store_as_make_run_writes_them(workdir):
    """make run writes `tables results/smoke --out results/smoke/tables`: a folder of its own."""
    assert invoke("run", "configs/demo.yaml", "--out", "st", "--jobs", "1", "--games-per-side", "1").exit_code == 0
    result = invoke("tables", "st", "--out", "st/tables", "--brief")
    assert result.exit_code == 0, result.output
    assert (workdir / "st" / "tables").is_dir()


def test_a_start_late_in_a_game_leaves_room_for_the_longest_ply_cap(workdir):
    """The state counts plies in 16 bits: a start at move number 32,700 with a cap of 1,000 plies
    wrapped to negative numbers mid-game (and MCTS's early-ply rule, which reads the number,
    applied again). A game start's move number and the ply cap are bounded so that they add up
    to at most the largest number the state holds."""
    from boopexp.game.notation import MAX_MOVE_NUMBER
    from boopexp.play.contract import MAX_PLIES_LIMIT
    from boopexp.play.openings import MAX_START_MOVE_NUMBER

    assert MAX_START_MOVE_NUMBER + MAX_PLIES_LIMIT <= MAX_MOVE_NUMBER
    late = f"....../....../....../....../....../...... 8,0 8,0 b 0,0 {MAX_START_MOVE_NUMBER + 1}"
    error = one_error_line(invoke("game", "--p1", "random", "--p2", "random", "--start", late), 2)
    assert "move number" in error and str(MAX_START_MOVE_NUMBER) in error, error
    Path("late.txt").write_text(late + "\n")
    Path("late.yaml").write_text(DEMO_CONFIG + "openings: {file: late.txt}\n")
    error = one_error_line(invoke("run", "late.yaml", "--out", "st"), 2)
    assert "move number" in error and not Path("st").exists(), error
    fits = late.replace(str(MAX_START_MOVE_NUMBER + 1), str(MAX_START_MOVE_NUMBER))
    Path("late.txt").write_text(f"{fits}\n{fits.replace(' b ', ' r ')}\n")
    assert invoke("run", "late.yaml", "--out", "st", "--jobs", "1", "--games-per-side", "1").exit_code == 0
