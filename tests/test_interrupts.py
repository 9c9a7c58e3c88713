"""Ctrl-C and SIGTERM during a long search in the main process (``game``, ``play``, ``run --jobs 1``).

A compiled kernel does not look at Python's signals: the search must come back to Python often
enough that the signal stops the command within about a second, with 130 (SIGINT) or 143
(SIGTERM) and one line saying what is stored. Real processes, signalled once the search runs.

The processes start with a search tree that has room for half a million nodes: a long search
reaches such a tree after a few seconds (it doubles as it fills), and before the search was cut
into chunks its one kernel call then ran until the tree was full, minutes here.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from boopexp.experiments import runner
from boopexp.experiments.interrupts import Interrupts, sigint_blocked
from boopexp.experiments.pool import PoolOptions
from boopexp.experiments.store import StoreReader

#: ``boopexp`` with a roomy first tree (see the module docstring)
CLI = ("import sys; from boopexp.engine import mcts; mcts.INITIAL_CAPACITY = 1 << 19; "
       "from boopexp.interfaces.cli import main; main(prog_name='boopexp')")
#: a budget no search reaches in a test's lifetime: the most iterations a move may have
#: (agents.budget.MAX_ITERATIONS), about a minute of vanilla
FOREVER = ("--budget", "iterations", "--iterations", "1000000")
#: how long a stopped process may take (the signal is handled within ~0.05 s of search; the rest
#: is the interpreter's exit on a loaded machine)
STOP_WITHIN = 10.0


@pytest.fixture(scope="module", autouse=True)
def compiled_engine(real_play_game):
    """The kernels in numba's disk cache, so that the processes signalled below are searching,
    not compiling (a signal during the compile is the last test's)."""
    from boopexp.agents.budget import Budget
    from boopexp.agents.specs import resolve_agent
    from boopexp.play.contract import GameTask

    vanilla, heuristics = resolve_agent("vanilla"), resolve_agent("heuristics")
    real_play_game(GameTask.new("warm-up", "0" * 16, vanilla, heuristics, 0, Budget(mode="iterations", iterations=2),
                                "code-0.6.2"))


def _start(args, cwd, stdin=None):
    return subprocess.Popen([sys.executable, "-c", CLI, *args], cwd=cwd, stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


def _wait_for(proc, needle: bytes, timeout: float = 240) -> bytes:
    """stdout up to ``needle`` (generous: the first game of a process may compile the engine)."""
    buf = bytearray()
    deadline = time.monotonic() + timeout
    fd = proc.stdout.fileno()
    while needle not in buf:
        left = deadline - time.monotonic()
        if left <= 0 or proc.poll() is not None:
            proc.kill()
            pytest.fail(f"{needle!r} never came; stdout: {bytes(buf)!r}; stderr: {proc.stderr.read()!r}")
        if select.select([fd], [], [], min(left, 1.0))[0]:
            buf.extend(os.read(fd, 65536))
    return bytes(buf)


def _signal_during_the_search(proc, signum) -> tuple[float, str, str]:
    """Let the search run into its kernel, signal, and time the exit."""
    time.sleep(1.0)  # the search is in its kernel by now
    assert proc.poll() is None
    sent = time.monotonic()
    proc.send_signal(signum)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"still running 30 s after signal {signum}: {err.decode()!r}")
    return time.monotonic() - sent, out.decode(), err.decode()


def _one_line(err: str) -> str:
    """The one line a stopped command says, beside the two a cold numba cache adds before it
    ("compiling the engine ...", "compiled the engine in N s": warmup.compile_engine)."""
    lines = [line for line in err.splitlines()
             if line.strip() and not line.startswith(("compiling the engine", "compiled the engine in "))]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_game_stops_during_a_long_search(tmp_path, signum):
    proc = _start(["game", "--p1", "random", "--p2", "vanilla", *FOREVER, "--show"], tmp_path)
    _wait_for(proc, b"ply 1: Blue plays")  # random has moved: vanilla searches
    seconds, out, err = _signal_during_the_search(proc, signum)
    assert proc.returncode == 128 + signum and seconds < STOP_WITHIN, (seconds, err)
    line = _one_line(err)
    name = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"
    assert line == (f"Interrupted by {name} during ply 2 of 'random vs vanilla': nothing is stored (game keeps "
                    "no record); the same command plays the game again from its first move.")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_play_stops_while_the_agent_thinks(tmp_path, signum):
    out_dir = tmp_path / "store"
    proc = _start(["play", "--agent", "vanilla", *FOREVER, "--out", str(out_dir)], tmp_path, stdin=subprocess.PIPE)
    proc.stdin.write(b"c3\n")
    proc.stdin.flush()
    _wait_for(proc, b"ply 1: Blue (you) plays c3")
    seconds, out, err = _signal_during_the_search(proc, signum)
    assert proc.returncode == 128 + signum and seconds < STOP_WITHIN, (seconds, err)
    name = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"
    assert _one_line(err) == (f"Interrupted by {name} during ply 2 (vanilla was thinking): the unfinished game "
                              f"is not saved ({out_dir} is untouched); run the same command to start a new game.")
    assert not out_dir.exists()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_run_in_process_stops_during_a_long_search(tmp_path, signum):
    """``--jobs 1`` plays in the main process: the game in its search is dropped, the stored kept."""
    (tmp_path / "long.yaml").write_text(
        "name: long\nseed: 1\ngames_per_side: 1\nbudget: {mode: iterations, iterations: 1000000}\n"
        "pairings:\n  - [random, heuristics]\n  - [random, vanilla]\n"
    )
    proc = _start(["run", "long.yaml", "--jobs", "1"], tmp_path)
    _wait_for(proc, b"[2/4]")  # both baseline games stored: the next game is random vs vanilla
    seconds, out, err = _signal_during_the_search(proc, signum)
    assert proc.returncode == 128 + signum and seconds < STOP_WITHIN, (seconds, err)
    assert f"Interrupted: 2 of 4 games are stored in {Path('results/long/games.jsonl')}" in err
    assert "To resume, run:\n  boopexp run long.yaml --jobs 1\n" in err and "Traceback" not in err
    assert len(StoreReader(tmp_path / "results" / "long").records().records) == 2


def test_a_signal_dropped_by_a_c_callback_is_raised_again(capfd):
    """numba compiling the engine calls back into Python from LLVM; a KeyboardInterrupt raised
    there is dropped by the caller (ctypes prints it and goes on). The run went on as if the
    signal had never come; now the signal is raised again, without the dropped traceback."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    compare_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
    sent = []

    def compare(a, b):
        if not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGTERM)  # its handler runs here, inside the C call
            for _ in range(1000):  # bytecode boundaries: the handler has run by now
                pass
        return a[0] - b[0]

    values = (ctypes.c_int * 8)(5, 3, 8, 1, 9, 2, 7, 4)
    interrupts = Interrupts()
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts:
            libc.qsort(values, len(values), ctypes.sizeof(ctypes.c_int), compare_type(compare))
            reached.append("after the C call")  # the first KeyboardInterrupt was dropped
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:  # the reminder raises it within REMIND_S
                time.sleep(0.01)
    assert sent and reached and list(values) == [1, 2, 3, 4, 5, 7, 8, 9]
    assert interrupts.signum == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is not interrupts._handler  # restored
    assert "Exception ignored" not in capfd.readouterr().err


def test_a_game_that_fails_after_the_signal_stops_the_run_instead(tmp_path):
    """The same drop inside a game played in-process: numba then fails on the kernel it was
    building. That failure is the signal's, not the game's: the run stops (143) with nothing
    counted as failed, instead of going on with the next game and exiting 1."""
    from conftest import DEMO_CONFIG, fake_play_game

    from boopexp.experiments.config import load_yaml, parse_config

    played = []

    def play(task):
        if not played:
            played.append(task)
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                for _ in range(1000):
                    pass
            except KeyboardInterrupt:  # what the C callback does with it
                pass
            raise RuntimeError("no compiled object yet for <Library 'create_node'>")
        return fake_play_game(task)

    config = parse_config(load_yaml(DEMO_CONFIG, "demo"))
    report = runner.run_plan(config, config.plan(), tmp_path / "res", PoolOptions(jobs=1, play=play))
    assert report.interrupted and report.stopped_by == signal.SIGTERM
    assert report.failed == () and report.played == 0 and len(played) == 1


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_game_stops_while_a_plugin_that_catches_everything_thinks(tmp_path, signum):
    """The plugin ran in the main thread, where the signal's KeyboardInterrupt was raised: it
    caught it, and the command ran on, deaf to Ctrl-C and SIGTERM (only SIGKILL ended it)."""
    from test_plugins import DEAF  # deaf.py: a plugin that catches everything

    (tmp_path / "deaf.py").write_text(DEAF)
    (tmp_path / "p.yaml").write_text("name: p\nseed: 1\ngames_per_side: 1\nbudget: {mode: iterations, iterations: 2}\n"
                                     "agents:\n  deaf: {plugin: 'deaf:deaf', move_timeout_s: 600}\n"
                                     "pairings: [[random, deaf]]\n")
    proc = _start(["game", "--config", "p.yaml", "--p1", "random", "--p2", "deaf", "--show"], tmp_path)
    _wait_for(proc, b"ply 1: Blue plays")  # random has moved: the plugin thinks
    seconds, out, err = _signal_during_the_search(proc, signum)
    assert proc.returncode == 128 + signum and seconds < STOP_WITHIN, (seconds, err)
    name = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"
    assert _one_line(err) == (f"Interrupted by {name} during ply 2 of 'random vs deaf': nothing is stored (game "
                              "keeps no record); the same command plays the game again from its first move.")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_while_the_command_line_is_imported_is_one_line(tmp_path, signum):
    """Ctrl-C in the first ~0.1 s printed a 16-29-line KeyboardInterrupt traceback from whichever
    module was being imported (SIGTERM: killed, no word). A slow ``click`` on PYTHONPATH holds
    the import open until the signal comes."""
    shim = tmp_path / "shim" / "click"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("import sys, time\nprint('importing click', flush=True)\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-m", "boopexp", "game", "--p1", "random", "--p2", "random"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(tmp_path / "shim")})
    _wait_for(proc, b"importing click", timeout=60)
    seconds, out, err = _signal_during_the_search(proc, signum)
    name = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"
    assert (proc.returncode, err) == (128 + signum, f"Interrupted by {name} while starting: nothing was done.\n")


def test_a_signal_the_import_system_swallowed_still_stops_the_command(tmp_path):
    """Hostile trial of issue 33: a Ctrl-C ~0.5 s into ``merge`` printed "Exception ignored in:
    <function _get_module_lock.<locals>.cb ...> ... raise KeyboardInterrupt" and the merge ran to
    its end, exit 0: the import system's lock callback swallows the KeyboardInterrupt of the
    startup handler. Here ``click``'s import swallows it the same way, then imports on."""
    shim = tmp_path / "shim" / "click"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text(
        "import os, signal, sys, time\n"
        "try:\n    os.kill(os.getpid(), signal.SIGINT)\n    time.sleep(5)\nexcept KeyboardInterrupt:\n    pass\n"
        "sys.path.remove(os.path.dirname(os.path.dirname(__file__)))\n"
        "del sys.modules['click']\nimport click\n")
    proc = subprocess.run([sys.executable, "-m", "boopexp", "game", "--p1", "random", "--p2", "random"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(tmp_path / "shim")})
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        130, "", "Interrupted by Ctrl-C while starting: nothing was done.\n")


SLOW_STATUS = """
import sys, time
from boopexp.experiments import status
def slow(folder):
    print("reading", flush=True)
    time.sleep(60)
status.folder_status = slow
from boopexp.interfaces.cli import main
main(sys.argv[1:], prog_name="boopexp")
"""


def test_sigterm_stops_a_command_without_a_handler_of_its_own_in_one_line(tmp_path):
    """Hostile trial of issue 33: import, merge and export (and every command but run, game,
    play, tune and serve) were killed by SIGTERM without a word, their context managers (temporary
    files) not run. Now SIGTERM stops them as Ctrl-C does: one line and 143."""
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "games.jsonl").write_text("")
    proc = subprocess.Popen([sys.executable, "-c", SLOW_STATUS, "status", "s"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    _wait_for(proc, b"reading", timeout=120)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, err.decode()) == (
        143, "Interrupted by SIGTERM: boopexp status stopped before it finished; run it again.\n")


def test_the_console_script_runs_the_guarded_entry_point():
    """``boopexp`` (pyproject's [project.scripts]) starts where ``python -m boopexp`` does."""
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert '[project.scripts]\nboopexp = "boopexp.__main__:main"\n' in text


LEAK = """
import os, sys
from boopexp.experiments.interrupts import start_resource_trackers
from joblib.externals.loky.backend import resource_tracker
if sys.argv[1] == "started":
    start_resource_trackers()
resource_tracker.register(f"/boopexp-test-{os.getpid()}", "semlock")  # a worker killed holding it
"""


def test_the_resource_trackers_clean_up_after_killed_workers_without_a_word():
    """issue 33: a Ctrl-C kills the pool's workers; loky's tracker then printed "There appear to be
    N leaked semlock objects" and "resource_tracker: /loky-…: FileNotFoundError" on the terminal,
    after the run's one line (test_runner_chaos's Ctrl-C test failed on them under load). The
    runner's pools start the trackers through start_resource_trackers (sigint_blocked)."""
    def stderr(how: str) -> str:
        done = subprocess.run([sys.executable, "-c", LEAK, how], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stderr  # read to EOF: the tracker, which holds it, has ended

    assert "leaked semlock" in stderr("default")  # what the tracker says when started as loky starts it
    assert stderr("started") == ""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_while_a_pool_starts_is_raised_once_it_has_started(signum):
    """A Ctrl-C (the process's, as a terminal sends it) while a dask LocalCluster started reached
    its constructor as a KeyboardInterrupt: the mask of sigint_blocked holds it off the main thread
    only, and another thread that does not block it (here ``bystander``; in a run, the BLAS
    library's) took it, its C handler having Python raise it in the main thread all the same. The
    half-started cluster was closed by dask's exit hook, with a traceback after the run's line
    (test_runner_chaos, under load). The signal is now raised as the block ends, once."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    bystander_done = threading.Event()
    bystander = threading.Thread(target=bystander_done.wait, daemon=True)
    bystander.start()
    previous_wakeup = signal.set_wakeup_fd(write_end)  # the C handler writes the signal's number here
    interrupts = Interrupts()
    reached = []
    try:
        with interrupts, pytest.raises(KeyboardInterrupt):
            with sigint_blocked():
                os.kill(os.getpid(), signum)
                assert select.select([read_end], [], [], 60)[0], "the signal never reached a handler"
                assert os.read(read_end, 16) == bytes([signum])
                for _ in range(1000):  # bytecode boundaries: a Python handler has run by now
                    pass
                reached.append("the end of the block")
    finally:
        signal.set_wakeup_fd(previous_wakeup)
        bystander_done.set()
        os.close(read_end)
        os.close(write_end)
    assert reached == ["the end of the block"] and interrupts.signum == signum
    assert signal.getsignal(signum) is not interrupts._handler  # restored by Interrupts, as before the block
