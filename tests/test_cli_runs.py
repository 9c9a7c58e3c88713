"""``boopexp run``, ``mirror`` and ``status`` through click, and real processes killed mid-run."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import DEMO_CONFIG, fake_play_game, without_timing
from test_config import BAD

from boopexp.experiments.config import load_config
from boopexp.experiments.pool import PlayedGame
from boopexp.experiments.store import GameStore, StoreReader
from boopexp.interfaces.cli import main
from boopexp.interfaces.commands.runs import BarProgress
from boopexp.play import match

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent

CONFIG = DEMO_CONFIG

# Runs the CLI in a fresh interpreter with the fake play_game (a subprocess cannot be monkeypatched).
FAKE_CLI = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
import conftest
from boopexp.play import match
match.play_game = conftest.fake_play_game
from boopexp.interfaces.cli import main
main(sys.argv[1:], prog_name="boopexp")
"""


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A working folder with configs/demo.yaml, as the current directory."""
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "demo.yaml").write_text(CONFIG)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(match, "play_game", fake_play_game)


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def keys_in(folder) -> list:
    scan = StoreReader(folder).records()
    return [(r["config_hash"], r["pairing"], r["game_index"]) for r in scan.records] + [None] * scan.duplicates


def snapshot(folder: Path) -> dict:
    return {p.relative_to(folder): (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


def planned(config_path, games_per_side=None) -> set:
    c = load_config(config_path)
    if games_per_side:
        c = c.with_games_per_side(games_per_side)
    return {t.key for t in c.tasks(c.plan())}


# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", sorted(main.commands))
def test_every_command_has_help(command):
    result = invoke(command, "--help")
    assert result.exit_code == 0 and "Usage: " in result.output
    assert len(main.commands[command].help or "") > 20


def test_run_plays_into_results_name_with_line_progress_and_a_summary(workdir, fake):
    result = invoke("run", "configs/demo.yaml", "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert sorted(keys_in(workdir / "results" / "demo")) == sorted(planned("configs/demo.yaml"))
    lines = result.stdout.splitlines()
    assert lines[0] == "8 games planned, 0 already stored, 8 to play."
    progress = [line for line in lines if line.startswith("[")]
    assert len(progress) == 8
    first = StoreReader(workdir / "results" / "demo").records().records[0]
    who = first["p1"] if first["winner"] == "p1" else first["p2"]
    assert progress[0].startswith(
        f"[1/8] heuristics vs random #{first['game_index']}: {first['winner']} ({who}) wins in {first['plies']} plies, "
    ) and progress[0].endswith(" s")
    assert "Results: results/demo/games.jsonl" in result.stdout
    assert "heuristics vs random" in result.stdout and "8/8" in result.stdout

    again = invoke("run", "configs/demo.yaml", "--jobs", "1")
    assert again.exit_code == 0
    assert "Played 0 game(s) in this run; 8 were already stored." in again.stdout


def test_games_per_side_and_quiet(workdir, fake):
    result = invoke("run", "configs/demo.yaml", "--games-per-side", "1", "--quiet", "-j", "1", "--out", "small")
    assert result.exit_code == 0, result.output
    assert not [line for line in result.stdout.splitlines() if line.startswith("[")]
    assert "games planned" not in result.stdout and "Results: small/games.jsonl" in result.stdout
    assert sorted(keys_in(workdir / "small")) == sorted(planned("configs/demo.yaml", 1))
    # the longer run completes the same store, reusing the first games
    result = invoke("run", "configs/demo.yaml", "-q", "-j", "1", "--out", "small")
    assert "Played 4 game(s) in this run; 4 were already stored." in result.stdout
    assert sorted(keys_in(workdir / "small")) == sorted(planned("configs/demo.yaml"))
    assert len(list((workdir / "small").glob("config.*.yaml"))) == 1  # the shorter plan kept aside


@pytest.mark.parametrize("text,needles", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_configs_exit_2_with_one_line_and_touch_nothing(workdir, fake, text, needles):
    invoke("run", "configs/demo.yaml", "-q", "-j", "1", "--out", "res")
    before = snapshot(workdir / "res")
    (workdir / "t.yaml").write_text(text)
    result = invoke("run", "t.yaml", "-q", "-j", "1", "--out", "res")
    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("Error: t.yaml")
    for needle in needles:
        assert needle in line
    assert "Traceback" not in result.output
    assert snapshot(workdir / "res") == before


def test_usage_errors_exit_2(workdir, fake, monkeypatch):
    result = invoke("run", "nope.yaml")
    assert result.exit_code == 2 and "config file nope.yaml not found" in result.stderr
    result = invoke("run", "configs/demo.yaml", "--jobs", "0")
    assert result.exit_code == 2
    result = invoke("run", "configs/demo.yaml", "--scheduler", "tcp://h:8786")
    assert result.exit_code == 2 and "needs --backend dask" in result.stderr
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if dask were not installed
    result = invoke("run", "configs/demo.yaml", "--backend", "dask")
    assert result.exit_code == 2 and "pip install 'boopexp[dask]'" in result.stderr
    assert not (workdir / "results").exists()


def test_corrupt_store_is_an_error_and_stays_untouched(workdir, fake):
    invoke("run", "configs/demo.yaml", "-q", "-j", "1")
    games = workdir / "results" / "demo" / "games.jsonl"
    lines = games.read_bytes().splitlines(keepends=True)
    games.write_bytes(lines[0] + b"oops\n" + b"".join(lines[1:]))
    before = snapshot(games.parent)
    result = invoke("run", "configs/demo.yaml", "-q", "-j", "1")
    assert result.exit_code == 1
    assert result.stderr.strip() == f"Error: {Path('results/demo/games.jsonl')} line 2: not valid JSON " + \
        result.stderr.strip().split(" not valid JSON ", 1)[1]
    assert snapshot(games.parent) == before
    status = invoke("status", "results/demo")
    assert status.exit_code == 1 and "line 2" in status.stderr


def test_truncated_last_line_is_reported_and_the_run_completes(workdir, fake):
    invoke("run", "configs/demo.yaml", "-q", "-j", "1", "--games-per-side", "1")
    games = workdir / "results" / "demo" / "games.jsonl"
    data = games.read_bytes()
    games.write_bytes(data[:-40])  # as if killed while writing the last record
    result = invoke("run", "configs/demo.yaml", "-j", "1")
    assert result.exit_code == 0, result.output
    assert f"Warning: {Path('results/demo/games.jsonl')} line 4: truncated last line" in result.stderr
    assert "corrupt-" in result.stderr
    assert sorted(keys_in(games.parent)) == sorted(planned("configs/demo.yaml"))
    (corrupt,) = games.parent.glob("games.jsonl.corrupt-*")
    assert data.endswith(corrupt.read_bytes() + data[-40:])


def test_failed_games_exit_1_and_are_listed(workdir, monkeypatch):
    def play(task):
        if task.game_index == 1 and task.pairing == "vanilla vs vanilla":
            raise RuntimeError("engine exploded")
        return fake_play_game(task)

    monkeypatch.setattr(match, "play_game", play)
    result = invoke("run", "configs/demo.yaml", "-j", "1")
    assert result.exit_code == 1
    assert "[6/8] vanilla vs vanilla #1: FAILED: RuntimeError: engine exploded" in result.stdout
    assert "1 game(s) failed" in result.stderr
    assert "vanilla vs vanilla #1: RuntimeError: engine exploded" in result.stderr
    assert len(keys_in(workdir / "results" / "demo")) == 7
    monkeypatch.setattr(match, "play_game", fake_play_game)
    assert invoke("run", "configs/demo.yaml", "-j", "1").exit_code == 0


def test_games_without_a_winner_get_their_own_column(workdir, monkeypatch):
    def play(task):
        record = fake_play_game(task)
        if task.game_index == 0 and task.pairing == "vanilla vs vanilla":
            record.update(winner=None, winner_agent=None, winner_colour=None, termination="ply_limit")
        return record

    monkeypatch.setattr(match, "play_game", play)
    result = invoke("run", "configs/demo.yaml", "-j", "1")
    assert result.exit_code == 0, result.output
    assert "vanilla vs vanilla #0: no winner (ply_limit) after " in result.stdout
    header = next(line for line in result.stdout.splitlines() if line.strip().startswith("pairing"))
    assert header.split()[-2:] == ["no", "winner"]
    status = invoke("status", "results/demo").stdout
    row = next(line for line in status.splitlines() if line.strip().startswith("vanilla vs vanilla"))
    assert row.split()[-4:-3] == ["4/4"] and row.split()[-1] == "1"


def test_mirror_shares_games_with_run(workdir, fake):
    (workdir / "configs" / "mirror.yaml").write_text(CONFIG.replace("name: demo", "name: mirror"))
    result = invoke("mirror", "--agent", "vanilla", "--games", "3", "-j", "1")
    assert result.exit_code == 0, result.output
    store = workdir / "results" / "mirror"
    assert {k[1:] for k in keys_in(store)} == {("vanilla vs vanilla", i) for i in range(3)}
    assert "vanilla vs vanilla" in result.stdout and "heuristics vs random" not in result.stdout
    result = invoke("run", "configs/mirror.yaml", "-j", "1")
    assert "Played 5 game(s) in this run; 3 were already stored." in result.stdout
    assert sorted(keys_in(store)) == sorted(planned("configs/mirror.yaml"))
    # the default --games 100 goes on from there; an agent outside the pairings is allowed
    result = invoke("mirror", "--agent", "mcts+SEP", "--games", "2", "-j", "1", "-q")
    assert result.exit_code == 0 and "mcts-co vs mcts-co" in result.stdout
    status = invoke("status", "results/mirror")
    assert "mcts-co vs mcts-co" in status.stdout and "2/2" in status.stdout


def test_mirror_without_config_uses_the_checkouts_from_any_folder(workdir):
    """From a folder without configs/mirror.yaml, the default is the one beside the package."""
    result = invoke("mirror", "--agent", "vanilla", "--games", "2", "--dry-run")
    assert result.exit_code == 0, result.output
    mirror_yaml = REPO / "configs" / "mirror.yaml"
    assert result.stderr.startswith(f"Using the mirror config {mirror_yaml} (no configs/mirror.yaml in")
    assert "vanilla vs vanilla" in result.stdout and not (workdir / "results").exists()


def test_mirror_errors(workdir, fake, monkeypatch):
    from boopexp.interfaces.commands import runs

    monkeypatch.setattr(runs, "SOURCE_ROOT", workdir / "elsewhere")  # an installed package: no configs/ beside it
    result = invoke("mirror", "--agent", "vanilla")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"Error: no mirror config: looked for configs/mirror.yaml in {workdir} and in {workdir / 'elsewhere'};"
        " pass --config FILE (the paper's is configs/mirror.yaml of the boopexp repository)"]
    result = invoke("mirror", "--agent", "alphago", "--config", "configs/demo.yaml")
    assert result.exit_code == 2 and "--agent: unknown agent 'alphago'; valid agents:" in result.stderr
    assert invoke("mirror").exit_code == 2


def test_status_of_one_folder_and_of_all(workdir, fake):
    result = invoke("status")
    assert result.exit_code == 0 and "No results under results/" in result.stdout
    invoke("run", "configs/demo.yaml", "-q", "-j", "1", "--games-per-side", "1")
    with GameStore(workdir / "results" / "demo").open() as w:  # a game of other settings
        w.append({"config_hash": "ffff", "pairing": "x vs y", "game_index": 0, "winner": "p1"})
    result = invoke("status")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith(f"{Path('results/demo')}: demo, seed 11, budget 2 iterations/move, preset code-0.6.2")
    scan = StoreReader(workdir / "results" / "demo").records()
    p1 = sum(1 for r in scan.records if r["pairing"] == "heuristics vs random" and r["winner"] == "p1")
    row = next(line for line in out.splitlines() if line.strip().startswith("heuristics vs random"))
    assert row.split()[-3:] == ["1/1", str(p1), str(1 - p1)]
    assert "4/4" in out and "1 other record(s)" in out
    assert invoke("status", "results/demo").stdout == out
    # a folder without config.yaml still shows its games
    (workdir / "results" / "demo" / "config.yaml").unlink()
    assert "no config.yaml" in invoke("status", "results/demo").stdout
    assert invoke("status", "results/none").exit_code == 2


def test_status_lists_nested_stores_and_goes_on_past_a_damaged_one(workdir, fake):
    """Every folder holding a store, at any depth (results/robustness/d1, ...); a damaged store is
    one line on stderr, the others are listed, and the exit is non-zero."""
    import shutil

    invoke("run", "configs/demo.yaml", "-q", "-j", "1", "--games-per-side", "1")
    results = workdir / "results"
    shutil.copytree(results / "demo", results / "study" / "d1")
    shutil.copytree(results / "demo", results / "study" / "deeper" / "d2")
    shutil.copytree(results / "demo", results / "broken")
    (results / "broken" / "config.yaml").write_bytes(b"\xff\xfe not utf-8")
    result = invoke("status")
    assert result.exit_code == 1, result.output
    heads = [line.split(":")[0] for line in result.stdout.splitlines() if line and not line.startswith(" ")]
    assert heads == [str(Path("results") / p) for p in ("demo", "study/d1", "study/deeper/d2")]
    [line] = result.stderr.splitlines()
    assert line.startswith(f"Error: {Path('results/broken/config.yaml')}: not UTF-8 text (byte 0xff at offset 0")
    as_json = invoke("status", "--json")
    assert as_json.exit_code == 1 and [d["folder"] for d in json.loads(as_json.stdout)] == heads
    shutil.rmtree(results / "broken")
    assert invoke("status").exit_code == 0
    # issue 20: a folder that is not a store but holds stores lists them as results/ does
    study = invoke("status", "results/study")
    assert study.exit_code == 0, study.output
    assert [line.split(":")[0] for line in study.stdout.splitlines() if line and not line.startswith(" ")] == [
        str(Path("results") / p) for p in ("study/d1", "study/deeper/d2")]
    assert study.stdout == invoke("status").stdout.split("\n\n", 1)[1]
    assert [d["folder"] for d in json.loads(invoke("status", "results", "--json").stdout)] == heads


def test_bar_progress_shows_the_running_score(capsys):
    c = load_config(REPO / "configs" / "smoke.yaml")
    task = c.tasks(c.plan())[0]
    from boopexp.experiments.config import PlanEntry
    from boopexp.experiments.tally import PairingScore

    bar = BarProgress()
    bar.start(10, 2, ())
    score = PairingScore(PlanEntry(task.pairing, task.p1.name, task.p2.name, task.config_hash, 4), 3, 2, 1)
    bar.game(PlayedGame(task, fake_play_game(task), seconds=0.1), 3, 10, (score,))
    bar.close()
    out = capsys.readouterr().out
    assert "3/10" in out and "mcts-co vs vanilla 2-1" in out


# --------------------------------------------------------------------------------------------
# real processes: SIGKILL and Ctrl-C in the middle of a run


def _start(args, cwd, env=None, script=FAKE_CLI, console=False):
    cmd = [str(Path(sys.executable).parent / "boopexp"), *args] if console else [sys.executable, "-c", script, *args]
    return subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})}, start_new_session=True)


def _wait_for_lines(path: Path, n: int, proc, timeout: float = 240) -> None:
    # generous: the first real game of a worker may compile the engine (numba cache miss)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        if proc.poll() is not None:
            pytest.fail(f"run ended before {n} games: {proc.communicate()}")
        time.sleep(0.05)
    pytest.fail("timed out waiting for games")


def test_sigkill_mid_run_then_resume_gives_exactly_the_planned_games(workdir):
    games = workdir / "results" / "demo" / "games.jsonl"
    proc = _start(["run", "configs/demo.yaml", "--jobs", "2"], workdir, {"BOOPEXP_TEST_FAKE_SLEEP": "0.3"})
    _wait_for_lines(games, 3, proc)
    os.killpg(proc.pid, signal.SIGKILL)  # the parent and its workers, as the OS OOM killer might
    proc.communicate(timeout=30)
    assert 3 <= len(keys_in(games.parent)) < 8

    resume = _start(["run", "configs/demo.yaml", "--jobs", "2"], workdir)
    out, err = resume.communicate(timeout=120)
    assert resume.returncode == 0, err
    keys = keys_in(games.parent)
    assert sorted(keys) == sorted(planned("configs/demo.yaml"))  # all there, no duplicate
    c = load_config("configs/demo.yaml")
    reference = {t.key: without_timing(fake_play_game(t)) for t in c.tasks(c.plan())}
    assert {k: without_timing(r) for k, r in _records(games.parent).items()} == reference


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_stops_cleanly_and_says_how_to_resume(workdir, signum):
    games = workdir / "results" / "demo" / "games.jsonl"
    args = ["run", "configs/demo.yaml", "--jobs", "1", "--games-per-side", "2"]
    proc = _start(args, workdir, {"BOOPEXP_TEST_FAKE_SLEEP": "0.3"})
    _wait_for_lines(games, 2, proc)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signum, (out, err)  # 130 for Ctrl-C, 143 for SIGTERM
    done = len(keys_in(games.parent))
    assert 2 <= done < 8
    assert f"Interrupted: {done} of 8 games are stored in {Path('results/demo/games.jsonl')}" in err
    assert "To resume, run:\n  boopexp run configs/demo.yaml --games-per-side 2 --jobs 1\n" in err
    assert "Traceback" not in err
    assert f"Played {done} game(s)" in out
    resume = _start(args, workdir)
    out, err = resume.communicate(timeout=60)
    assert resume.returncode == 0 and f"{done} were already stored" in out
    assert sorted(keys_in(games.parent)) == sorted(planned("configs/demo.yaml"))


def _records(folder) -> dict:
    return {(r["config_hash"], r["pairing"], r["game_index"]): r for r in StoreReader(folder).records().records}


# --------------------------------------------------------------------------------------------
# real games


@pytest.mark.e2e_real
def test_smoke_config_end_to_end(tmp_path, real_play_game, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("run", str(REPO / "configs" / "smoke.yaml"), "--jobs", "2")
    assert result.exit_code == 0, result.output
    expected = planned(REPO / "configs" / "smoke.yaml")
    assert sorted(keys_in(tmp_path / "results" / "smoke")) == sorted(expected)
    for r in _records(tmp_path / "results" / "smoke").values():
        assert r["experiment"] == "smoke" and r["winner"] in ("p1", "p2") and r["plies"] == len(r["moves"])
    status = invoke("status")
    assert status.exit_code == 0
    total = next(line for line in status.stdout.splitlines() if line.split()[:1] == ["total"])
    assert total.split() == ["total", f"{len(expected)}/{len(expected)}"]


@pytest.mark.e2e_real
def test_real_run_killed_and_resumed_with_the_console_script(tmp_path, real_play_game):
    (tmp_path / "real.yaml").write_text(
        "name: real\nseed: 5\ngames_per_side: 60\nbudget: {mode: iterations, iterations: 2}\n"
        "pairings:\n  - [heuristics, random]\n  - [vanilla, heuristics]\n"
    )
    games = tmp_path / "results" / "real" / "games.jsonl"
    proc = _start(["run", "real.yaml", "--jobs", "2"], tmp_path, console=True)
    _wait_for_lines(games, 20, proc)
    with contextlib.suppress(ProcessLookupError):  # a fast machine may have finished already
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    partial = len(keys_in(games.parent))
    resume = _start(["run", "real.yaml", "--jobs", "2", "-q"], tmp_path, console=True)
    out, err = resume.communicate(timeout=300)
    assert resume.returncode == 0, err
    keys = keys_in(games.parent)
    assert sorted(keys) == sorted(planned(tmp_path / "real.yaml"))
    assert f"{partial} were already stored" in out or partial == 240
