"""The runner's pools under chaos, with real processes: a dask scheduler and worker killed mid-run
then resumed, Ctrl-C at varied instants under the loky pool, loky workers after their parent's
SIGKILL (issue 20, items 9, 10 and 12).

Every process a test starts is in its own process group and is killed by a fixture finalizer,
whatever the test's outcome. The games are ``conftest.fake_play_game`` (a fixed sleep each, so
that a run is slow enough to be hit mid-way); dask workers import it from this folder.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import DEMO_CONFIG, fake_play_game, without_timing
from test_cli_runs import FAKE_CLI, keys_in, planned

from boopexp.experiments import pool as pool_module
from boopexp.experiments import runner
from boopexp.experiments.config import load_config
from boopexp.experiments.pool import PoolOptions
from boopexp.experiments.store import StoreReader
from boopexp.interfaces.cli import main
from boopexp.interfaces.commands import runs
from boopexp.play import match

TESTS = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent

class Processes:
    """Starts processes in new sessions and kills each one's group at the end of the test."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen] = []

    def start(self, args: list[str], cwd: Path, env: dict[str, str] | None = None, **kw) -> subprocess.Popen:
        proc = subprocess.Popen(args, cwd=cwd, env={**os.environ, **(env or {})}, start_new_session=True,
                                text=True, **kw)
        self.started.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                proc.communicate(timeout=10)


@pytest.fixture
def processes():
    procs = Processes()
    yield procs
    procs.stop()


def children(pid: int) -> list[int]:
    """The live child processes of ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                # the command may hold spaces and parentheses: the fields after the last ')'
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid and fields[0] != "Z":
                    found.append(int(entry.name))
    return found


def worker_processes(pid: int) -> list[int]:
    """The dask worker processes a ``dask worker`` started (multiprocessing spawns them)."""
    found = []
    for child in children(pid):
        with contextlib.suppress(OSError):
            if b"spawn_main" in (Path("/proc") / str(child) / "cmdline").read_bytes():
                found.append(child)
    return found


def alive(pid: int) -> bool:
    with contextlib.suppress(OSError, IndexError):
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return False


def wait_for(condition, what: str, timeout: float = 60, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the run ended before {what}: {proc.communicate()}")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def stored(games: Path) -> int:
    return games.read_bytes().count(b"\n") if games.exists() else 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def stderr_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.strip()]


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "demo.yaml").write_text(DEMO_CONFIG)
    return tmp_path


# --------------------------------------------------------------------------------------------
# dask: a worker killed, then the scheduler killed, then resumed on a new one


def _cluster(processes: Processes, cwd: Path, port: int, workers: int = 2, sleep: str = "0.3") -> subprocess.Popen:
    """A ``dask scheduler`` on 127.0.0.1:port and a ``dask worker`` of ``workers`` processes, whose
    fake games take ``sleep`` seconds each; returns the worker's process (its children are the
    worker processes, each restarted by its nanny)."""
    # the workers unpickle conftest.fake_play_game (so does the scheduler, with the task graph)
    env = {"PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
           "BOOPEXP_TEST_FAKE_SLEEP": sleep}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    processes.start([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                     "--no-dashboard"], cwd, env, **quiet)
    wait_for(lambda: listening(port), "the dask scheduler", 60)
    worker = processes.start([str(BIN / "dask"), "worker", f"tcp://127.0.0.1:{port}", "--nworkers", str(workers),
                              "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"], cwd, env, **quiet)
    wait_for(lambda: len(worker_processes(worker.pid)) >= workers, "the dask worker processes", 60)
    return worker


@pytest.mark.slow
def test_dask_worker_and_scheduler_killed_mid_run_then_resumed_gives_every_game_once(workdir, processes):
    pytest.importorskip("distributed")
    games = workdir / "results" / "demo" / "games.jsonl"
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    worker = _cluster(processes, workdir, port)
    args = ["run", "configs/demo.yaml", "--games-per-side", "15", "--backend", "dask", "--scheduler", address]
    run = processes.start([sys.executable, "-c", FAKE_CLI, *args], workdir,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    wait_for(lambda: stored(games) >= 4, "4 games", 60, run)
    victim = worker_processes(worker.pid)[0]
    os.kill(victim, signal.SIGKILL)  # a worker process dies mid-game: its game is played elsewhere
    wait_for(lambda: stored(games) >= 14, "14 games after the worker's death", 60, run)
    scheduler = processes.started[0]
    os.killpg(scheduler.pid, signal.SIGKILL)
    out, err = run.communicate(timeout=60)

    done = len(keys_in(games.parent))
    assert 14 <= done < 60, "the run must be stopped mid-way by the scheduler's loss"
    assert run.returncode == 1, (out, err)
    assert "Traceback" not in err and "ERROR" not in err, err
    lost = [line for line in stderr_lines(err) if not line.startswith(("dask: ", "Warning: "))]
    resume = f"boopexp run configs/demo.yaml --games-per-side 15 --backend dask --scheduler {address}"
    assert lost == [f"Error: lost the dask scheduler at {address} mid-run; {done} of 60 games are stored in "
                    f"{Path('results/demo/games.jsonl')}; to resume (with a scheduler running there again), "
                    f"run: {resume}"], err
    assert "dashboard" not in err  # a scheduler started with --no-dashboard has none

    os.killpg(worker.pid, signal.SIGKILL)
    # a new scheduler at the same address, and new workers; nothing is hit mid-way now: quick games
    _cluster(processes, workdir, port, sleep="0.02")
    again = processes.start([sys.executable, "-c", FAKE_CLI, *resume.split()[1:]], workdir,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, (out, err)
    assert f"{done} were already stored" in out
    assert sorted(keys_in(games.parent)) == sorted(planned(workdir / "configs" / "demo.yaml", 15))  # no duplicate
    c = load_config(workdir / "configs" / "demo.yaml").with_games_per_side(15)
    reference = {t.key: without_timing(fake_play_game(t)) for t in c.tasks(c.plan())}
    kept = StoreReader(games.parent).records().records
    records = {(r["config_hash"], r["pairing"], r["game_index"]): r for r in kept}
    assert {k: without_timing(r) for k, r in records.items()} == reference


@pytest.mark.slow
def test_dask_run_whose_only_worker_is_killed_says_it_waits_then_ctrl_c_is_130(workdir, processes):
    """Issue 20: a run whose only dask worker was killed waited with no word until Ctrl-C. After
    pool.NO_WORKER_S seconds without a worker it says so in one line and keeps waiting."""
    pytest.importorskip("distributed")
    import threading

    games = workdir / "results" / "demo" / "games.jsonl"
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    worker = _cluster(processes, workdir, port, workers=1)
    args = ["run", "configs/demo.yaml", "--games-per-side", "15", "--backend", "dask", "--scheduler", address]
    run = processes.start([sys.executable, "-c", FAKE_CLI, *args], workdir,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(run.stderr), daemon=True)
    reader.start()
    wait_for(lambda: stored(games) >= 2, "2 games", 60, run)
    os.killpg(worker.pid, signal.SIGKILL)  # the nanny too: no worker comes back
    waiting = (f"Warning: no dask worker is connected to {address}: waiting; start one or press Ctrl-C "
               "(finished games are stored)")
    wait_for(lambda: any(line.rstrip("\n") == waiting for line in err), "the waiting line", 30, run)
    os.killpg(run.pid, signal.SIGINT)
    run.wait(timeout=60)
    reader.join(10)  # stderr is the reader's alone (communicate would race it for the last lines)
    done = len(keys_in(games.parent))
    lines = [line for line in stderr_lines("".join(err)) if not line.startswith("dask: ")]
    assert (run.returncode, lines) == (130, [waiting, INTERRUPT.format(done=done, planned=60, path=Path(
        "results/demo/games.jsonl")), f"  boopexp {' '.join(args)}"]), "".join(err)


# --------------------------------------------------------------------------------------------
# Ctrl-C under a pool: one message, exit 130, whatever the instant


#: the two lines a cold numba cache adds before "games planned" (warmup.compile_engine)
COMPILE_NOTICE = ("compiling the engine", "compiled the engine in ")
INTERRUPT = ("Interrupted: {done} of {planned} games are stored in {path} (games in flight were dropped). "
             "To resume, run:")


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["loky", "dask"])
def test_ctrl_c_to_the_whole_process_group_is_one_message_and_exit_130(workdir, processes, backend):
    """A terminal sends Ctrl-C to every process of the foreground group: the pool's workers too.

    Several runs, the signal at a different instant each: from the pool's start-up (the workers
    still importing) to the middle of the games (an instant is seconds after the run started,
    or a number of games stored). A dask LocalCluster takes seconds to start: 0.5 s is within its
    start-up (a Ctrl-C there was raised inside its constructor, and the half-started cluster
    closed by dask's exit hook with a traceback, under load: test_interrupts has it alone)."""
    if backend == "dask":
        pytest.importorskip("distributed")
    games = workdir / "results" / "demo" / "games.jsonl"
    args = ["run", "configs/demo.yaml", "--jobs", "2", "--backend", backend]
    instants = [0.0, 0.2, 0.5, 1, 3] if backend == "loky" else [0.5, 2]  # float: seconds; int: games
    for instant in instants:
        if games.parent.exists():
            for path in games.parent.iterdir():
                path.unlink()
        run = processes.start([sys.executable, "-c", FAKE_CLI, *args], workdir, {"BOOPEXP_TEST_FAKE_SLEEP": "0.3"},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert "games planned" in run.stdout.readline()  # the run has started: the pool starts now
        if isinstance(instant, float):
            time.sleep(instant)
        else:
            wait_for(lambda n=instant: stored(games) >= n, f"{instant} games", 60, run)
        os.killpg(run.pid, signal.SIGINT)
        out, err = run.communicate(timeout=60)
        done = len(keys_in(games.parent))
        lines = [line for line in stderr_lines(err) if not line.startswith(("dask: ", *COMPILE_NOTICE))]
        expected = INTERRUPT.format(done=done, planned=8, path=Path("results/demo/games.jsonl"))
        assert (run.returncode, lines) == (130, [expected, f"  boopexp {' '.join(args)}"]), (instant, err)
        assert f"Played {done} game(s)" in out
        assert isinstance(instant, float) or done >= instant


@pytest.mark.slow
def test_ctrl_c_just_after_the_last_game_is_the_same_message_and_130_never_0(workdir, processes):
    """Issue 20 item 10e, re-tried: Ctrl-C in the ~0.3 s after the last game (loky's pool shutting
    down, the interpreter's exit joining its threads) gave exit 0 and "Exception ignored in:
    <module 'threading'>" tracebacks. Several instants from the last game's line on: each gives
    the one message and 130 (every game stored) or, once the summary is printed and the exit
    status decided (the interpreter tearing down, the signal ignored: docs/runner.md), the plain
    exit 0; never a traceback, never -2. The instants before that decision are hit one by one in
    test_ctrl_c_after_the_last_game_before_the_exit_status_is_130_and_the_message."""
    games = workdir / "results" / "demo" / "games.jsonl"
    args = ["run", "configs/demo.yaml", "--games-per-side", "4", "--jobs", "2"]  # the resume command's order
    expected = [INTERRUPT.format(done=16, planned=16, path=Path("results/demo/games.jsonl")),
                f"  boopexp {' '.join(args)}"]
    for instant in (0.0, 0.01, 0.03, 0.06, 0.1, 0.2):
        if games.parent.exists():
            for path in games.parent.iterdir():
                path.unlink()
        run = processes.start([sys.executable, "-c", FAKE_CLI, *args], workdir, {"BOOPEXP_TEST_FAKE_SLEEP": "0.01"},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_for(lambda: stored(games) >= 16, "the last game", 60, run)
        time.sleep(instant)
        os.killpg(run.pid, signal.SIGINT)
        out, err = run.communicate(timeout=60)
        lines = stderr_lines(err)
        assert "Played 16 game(s)" in out, (instant, out, err)
        if run.returncode == 0:  # exited before the signal (or as it was sent): nothing printed
            assert lines == [], (instant, err)
        else:
            assert (run.returncode, lines) == (130, expected), (instant, err)


@pytest.mark.parametrize("where", ["release_pool", "_summary"])
def test_ctrl_c_after_the_last_game_before_the_exit_status_is_130_and_the_message(workdir, monkeypatch, where):
    """Issue 20 item 10e: a signal while the pool shuts down after the last game, or while the
    summary prints, is the one message and 130 with every game stored (it was "Aborted!", exit 1,
    or a KeyboardInterrupt ignored in the interpreter's exit, exit 0)."""
    monkeypatch.chdir(workdir)
    monkeypatch.setattr(match, "play_game", fake_play_game)
    target = pool_module if where == "release_pool" else runs
    original = getattr(target, where)

    def signalled(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # delivered to this (the main) thread's handler at once
        return original(*args, **kwargs)

    monkeypatch.setattr(target, where, signalled)
    result = CliRunner().invoke(main, ["run", "configs/demo.yaml", "--jobs", "1"])
    assert result.exit_code == 130, result.output
    assert result.stderr == (INTERRUPT.format(done=8, planned=8, path=Path("results/demo/games.jsonl"))
                             + "\n  boopexp run configs/demo.yaml --jobs 1\n")
    assert "Played 8 game(s)" in result.stdout


@pytest.mark.parametrize("where", [(runner, "_sprt_tests"), (PoolOptions, "for_games")],
                         ids=["after-the-last-game", "before-the-first"])
def test_ctrl_c_outside_the_games_is_the_same_message_not_aborted(workdir, monkeypatch, where):
    """Ctrl-C while the run starts (the store scanned, the pool sized) or ends (the summary
    built): run_plan's handler is not installed there; click would say "Aborted!", exit 1."""
    monkeypatch.chdir(workdir)
    monkeypatch.setattr(match, "play_game", fake_play_game)

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(*where, ctrl_c)
    result = CliRunner().invoke(main, ["run", "configs/demo.yaml", "--jobs", "1"])
    assert result.exit_code == 130, result.output
    assert result.stderr == (f"Interrupted: the games finished so far are stored in {Path('results/demo')}. "
                             "To resume, run:\n  boopexp run configs/demo.yaml --jobs 1\n")


# --------------------------------------------------------------------------------------------
# loky workers die with their parent


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PR_SET_PDEATHSIG: Linux")
def test_loky_workers_exit_when_their_parent_is_killed(workdir, processes):
    games = workdir / "results" / "demo" / "games.jsonl"
    run = processes.start([sys.executable, "-c", FAKE_CLI, "run", "configs/demo.yaml", "--jobs", "2"], workdir,
                          {"BOOPEXP_TEST_FAKE_SLEEP": "0.5"}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: stored(games) >= 2, "2 games", 60, run)  # the workers are playing
    kids = children(run.pid)
    assert len(kids) >= 2
    os.kill(run.pid, signal.SIGKILL)  # the parent alone, as the OOM killer would
    run.wait(timeout=10)
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in kids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in kids if alive(pid)], "orphaned workers"
