"""boopexp on a real single-node Slurm (docs/cluster.md "A Slurm job array", "Dask on Slurm"):
the committed scripts of examples/slurm/ submit a job array of shards and their merge, and the
merged store is the unsharded run's, game for game; a shard requeued mid-run (preemption) resumes
and plays the same games; ``run --backend dask --slurm`` plays a run on dask workers that are
Slurm jobs (dask-jobqueue's SLURMCluster), and a worker job Slurm refuses is one line.

The cluster (tests/slurm_helpers.py) is started once for this module and stopped at its end,
whatever the outcome. Skipped, with the reason, where Slurm is not installed or we are not root
(CI installs no Slurm); ``make test-slurm`` installs it (Debian's slurm-wlm and munge) and runs
these tests (a skip is a failure there). The games are real (cheap agents); the engine is compiled by the unsharded run
first, so the shards load it from numba's cache.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import DEMO_CONFIG, one_line, without_timing
from slurm_helpers import LocalSlurm, missing

from boopexp.experiments.store import StoreReader
from boopexp.interfaces.cli import main

#: Why Slurm cannot run here; ``make test-slurm`` (BOOPEXP_SLURM_REQUIRED=1) fails on it instead of skipping.
MISSING = missing()
REQUIRED = bool(os.environ.get("BOOPEXP_SLURM_REQUIRED"))
needs_slurm = pytest.mark.skipif(MISSING is not None and not REQUIRED, reason=str(MISSING))

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "slurm"
BIN = Path(sys.executable).parent

#: Games that take ~0.5 s each (a few seconds on a loaded machine), so that a shard can be requeued while it plays.
SLOW_CONFIG = """\
name: slow
seed: 5
games_per_side: 4
budget: {mode: iterations, iterations: 4000}
pairings:
  - [vanilla, heuristics]
"""


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    if MISSING is not None:
        pytest.fail(f"BOOPEXP_SLURM_REQUIRED is set: {MISSING}")
    cluster = LocalSlurm(tmp_path_factory.mktemp("slurm"))
    # the jobs run this checkout's boopexp (sbatch passes the environment on, PATH included)
    cluster.env["PATH"] = os.pathsep.join([str(BIN), cluster.env["PATH"]])
    try:
        cluster.start()
        yield cluster
    finally:
        sessions = {p.pid for p in cluster.daemons}
        cluster.stop()
        assert not cluster.leftovers(sessions), "processes of the local Slurm outlived it"


def records(folder: Path) -> dict:
    return {(r["config_hash"], r["pairing"], r["game_index"]): without_timing(r)
            for r in StoreReader(folder).records().records}


_UNSHARDED: dict[str, dict] = {}


def unsharded(config: Path, out: Path) -> dict:
    """The records of an ordinary run of ``config`` (``--jobs 1``), played once per config text."""
    text = config.read_text()
    if text not in _UNSHARDED:
        done = subprocess.run([str(BIN / "boopexp"), "run", str(config), "--jobs", "1", "-q", "--out", str(out)],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        _UNSHARDED[text] = records(out)
    return _UNSHARDED[text]


def submit(slurm: LocalSlurm, work: Path, config: Path, n: int) -> tuple[str, str]:
    """examples/slurm/submit.sh: the job array of ``n`` shards into work/out and its merge."""
    done = slurm.run(str(EXAMPLES / "submit.sh"), str(config), str(n), "out", "--cpus-per-task=1", cwd=work)
    words = done.stdout.split()
    array, merge = words[words.index("array") + 1], words[words.index("merge:") + 2]
    return array, merge



def test_submit_without_slurm_or_with_a_bad_argument_is_one_line_and_submits_nothing(tmp_path):
    """issue 33: without Slurm, submit.sh ended with bash's "sbatch: command not found"; a bad N or
    config was found only by the jobs. Here a fake sbatch records whether anything was submitted."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "sbatch").write_text(f"#!/bin/sh\necho \"$@\" >> {tmp_path / 'calls'}\necho 7\n")
    (fake / "sbatch").chmod(0o755)
    (tmp_path / "demo.yaml").write_text(DEMO_CONFIG)
    venv = str(Path(sys.executable).parent)  # where boopexp is installed
    bare = tmp_path / "bare"  # a PATH without Slurm (the script fails before any other tool)
    bare.mkdir()
    bash = shutil.which("bash")
    assert bash is not None
    cases = [
        (f"{bare}{os.pathsep}{venv}", ["demo.yaml", "2"], "sbatch not found"),
        (f"{fake}{os.pathsep}{venv}{os.pathsep}{os.environ['PATH']}", ["demo.yaml", "two"], "N = 'two' must be"),
        (f"{fake}{os.pathsep}{venv}{os.pathsep}{os.environ['PATH']}", ["nope.yaml", "2"], "nope.yaml not found"),
    ]
    for path, args, message in cases:
        done = subprocess.run([bash, str(EXAMPLES / "submit.sh"), *args, "out"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120, env={**os.environ, "PATH": path})
        assert (done.returncode, done.stdout) == (2, ""), (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr, (args, done.stderr)
    assert not (tmp_path / "calls").exists() and not (tmp_path / "out").exists()
    done = subprocess.run([bash, str(EXAMPLES / "submit.sh"), "demo.yaml", "2", "out"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PATH": cases[1][0]})
    assert done.returncode == 0 and "job array 7 (1-2)" in done.stdout, done.stderr
    assert (tmp_path / "calls").read_text().count("\n") == 2  # the array and its merge

@needs_slurm
def test_a_job_array_of_4_shards_merged_is_the_unsharded_run(slurm, tmp_path):
    config = tmp_path / "demo.yaml"
    config.write_text(DEMO_CONFIG.replace("games_per_side: 2", "games_per_side: 3"))
    expected = unsharded(config, tmp_path / "unsharded")
    assert len(expected) == 12
    array, merge = submit(slurm, tmp_path, config, 4)
    states = slurm.wait_finished([array, merge], timeout=180)
    logs = {p.name: p.read_text() for p in tmp_path.glob("boopexp-*.out")}
    assert states == {**{f"{array}_{i}": "COMPLETED" for i in range(1, 5)}, merge: "COMPLETED"}, (states, logs)
    shards = [records(tmp_path / "out" / f"shard-{i}") for i in range(1, 5)]
    # each task played its own share: disjoint, every one of them busy, together the plan
    assert all(shards) and sum(map(len, shards)) == len(expected)
    merged = records(tmp_path / "out" / "all")
    assert merged == expected
    assert {k: v for shard in shards for k, v in shard.items()} == expected
    # the merge job printed the merged store's status: the whole plan done
    (merge_log,) = [text for name, text in logs.items() if name.startswith("boopexp-merge-")]
    assert "out/all: 12 games merged from 4 store(s)" in merge_log, merge_log
    assert ["total", "12/12"] in [line.split() for line in merge_log.splitlines()], merge_log


@needs_slurm
def test_a_shard_requeued_mid_run_resumes_and_plays_the_same_games(slurm, tmp_path):
    config = tmp_path / "slow.yaml"
    config.write_text(SLOW_CONFIG)
    array, merge = submit(slurm, tmp_path, config, 2)
    games = tmp_path / "out" / "shard-1" / "games.jsonl"
    deadline = time.monotonic() + 120
    while not (games.exists() and games.read_bytes().count(b"\n") >= 1):
        assert time.monotonic() < deadline, (slurm.states(array), slurm.logs())
        time.sleep(0.02)
    # preempted: Slurm stops the task (SIGTERM, then SIGKILL) and queues it again
    slurm.run("scontrol", "requeue", f"{array}_1")
    expected = unsharded(config, tmp_path / "unsharded")  # meanwhile
    states = slurm.wait_finished([array, merge], timeout=180)
    log = (tmp_path / f"boopexp-shard-{array}_1.out").read_text()
    assert states == {f"{array}_1": "COMPLETED", f"{array}_2": "COMPLETED", merge: "COMPLETED"}, (states, log)
    # the first start was stopped mid-shard with its finished games stored; the second resumed
    first, second = log.split(", start 2")
    assert ", start 1" in first and "Interrupted: " in first and "games are stored in" in first, log
    assert "Played " in second and "were already stored" in second and "0 were already stored" not in second, log
    assert StoreReader(tmp_path / "out" / "shard-1").records().duplicates == 0
    assert records(tmp_path / "out" / "all") == expected and len(expected) == 8


# --------------------------------------------------------------------------------------------
# Dask on Slurm: run --backend dask --slurm

#: 4 games of ~0.2 s (~1 s loaded): one worker is still busy with the second when the first is stored.
FEW_SLOW = SLOW_CONFIG.replace("games_per_side: 4", "games_per_side: 2").replace("iterations: 4000", "iterations: 1500")


def dask_on_slurm_env(tmp_path: Path, **settings: str) -> dict[str, str]:
    """dask's jobqueue.slurm config for the local cluster: everything on 127.0.0.1, logs in tmp_path."""
    env = {
        "DASK_JOBQUEUE__SLURM__SCHEDULER_OPTIONS": '{"host": "127.0.0.1", "dashboard_address": "127.0.0.1:0"}',
        "DASK_JOBQUEUE__SLURM__WORKER_EXTRA_ARGS": '["--host", "127.0.0.1"]',
        "DASK_JOBQUEUE__SLURM__WALLTIME": "00:10:00",
        "DASK_JOBQUEUE__SLURM__MEMORY": "1GB",
        "DASK_JOBQUEUE__SLURM__LOG_DIRECTORY": str(tmp_path / "worker-logs"),
        "DASK_JOBQUEUE__SLURM__LOCAL_DIRECTORY": str(tmp_path / "dask-space"),
        # a lost worker job is replaced 1 s after it left rather than 15 s (docs/cluster.md)
        "DASK_DISTRIBUTED__DEPLOY__LOST_WORKER_TIMEOUT": "1s",
    }
    return {**env, **{f"DASK_JOBQUEUE__SLURM__{k.upper()}": v for k, v in settings.items()}}


def boopexp_here(slurm: LocalSlurm, args: list[str], env: dict[str, str], timeout: float = 180):
    return subprocess.run([str(BIN / "boopexp"), *args], capture_output=True, text=True, timeout=timeout,
                          env={**slurm.env, **env})


def few_slow_games_on_one_worker(tmp_path: Path) -> tuple[Path, Path, list[str], dict[str, str]]:
    """FEW_SLOW's config, the run's folder, and the arguments and environment of its run on one Slurm worker."""
    config, out = tmp_path / "slow.yaml", tmp_path / "dask"
    config.write_text(FEW_SLOW)
    args = ["run", str(config), "--backend", "dask", "--slurm", "--jobs", "1", "--out", str(out)]
    return config, out, args, dask_on_slurm_env(tmp_path)


def start_after_first_game(slurm: LocalSlurm, args: list[str], env: dict[str, str], out: Path) -> subprocess.Popen:
    """``boopexp ARGS`` started, returned once it has stored its first game in ``out``."""
    run = subprocess.Popen([str(BIN / "boopexp"), *args], env={**slurm.env, **env}, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    games = out / "games.jsonl"
    deadline = time.monotonic() + 120
    while not (games.exists() and games.read_bytes().count(b"\n") >= 1):
        if run.poll() is not None or time.monotonic() > deadline:
            os.killpg(run.pid, signal.SIGKILL)
            pytest.fail(f"no game stored: {run.communicate()}\n{slurm.logs()}")
        time.sleep(0.05)
    return run


def then_wait(run: subprocess.Popen, action: Callable[[], object], timeout: float) -> str:
    """Do ``action`` to a running ``run`` and wait for its end; its stderr. Killed if it outlives ``timeout``."""
    try:
        action()
        return run.communicate(timeout=timeout)[1]
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.communicate()


def wait_queue_empty(slurm: LocalSlurm, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while slurm.run("squeue", "-h").stdout.strip():
        assert time.monotonic() < deadline, slurm.run("squeue").stdout
        time.sleep(0.2)


@needs_slurm
def test_dask_on_slurm_plays_the_run_on_worker_jobs_then_cancels_them(slurm, tmp_path):
    config = tmp_path / "demo.yaml"
    config.write_text(DEMO_CONFIG)
    expected = unsharded(config, tmp_path / "unsharded")
    done = boopexp_here(slurm, ["run", str(config), "--backend", "dask", "--slurm", "--jobs", "2",
                                "--out", str(tmp_path / "dask")], dask_on_slurm_env(tmp_path))
    assert done.returncode == 0, (done.stderr, slurm.logs())
    banner = [line for line in done.stderr.splitlines() if line.startswith("dask: ")]
    assert len(banner) == 1 and "2 Slurm job(s) of 1 worker(s) submitted" in banner[0], done.stderr
    assert records(tmp_path / "dask") == expected and len(expected) == 8
    # the workers were Slurm jobs (their logs), and the run's end cancelled them
    assert len(list((tmp_path / "worker-logs").glob("*.err"))) >= 1
    wait_queue_empty(slurm)


@needs_slurm
def test_dask_on_slurm_a_worker_job_cancelled_mid_run_is_submitted_again_and_the_run_completes(slurm, tmp_path):
    config, out, args, env = few_slow_games_on_one_worker(tmp_path)
    run = start_after_first_game(slurm, args, env, out)
    # the only worker's job ends mid-run (as at its walltime, or preempted)
    err = then_wait(run, lambda: slurm.run("scancel", "--name=dask-worker"), timeout=120)
    assert run.returncode == 0 and "Error" not in err, err
    # another worker job was submitted and played the rest: every game once, the ordinary run's
    assert len(list((tmp_path / "worker-logs").glob("*.err"))) >= 2, err
    assert StoreReader(out).records().duplicates == 0
    assert records(out) == unsharded(config, tmp_path / "unsharded")
    wait_queue_empty(slurm)


@needs_slurm
def test_dask_on_slurm_sigterm_mid_run_exits_143_cancels_the_worker_jobs_and_the_rerun_resumes(slurm, tmp_path):
    config, out, args, env = few_slow_games_on_one_worker(tmp_path)
    run = start_after_first_game(slurm, args, env, out)
    err = then_wait(run, lambda: run.send_signal(signal.SIGTERM), timeout=60)  # as Slurm stops the run's own job
    stored = len(records(out))
    assert run.returncode == 143 and "Traceback" not in err, err
    assert 1 <= stored < 4 and f"Interrupted: {stored} of 4 games are stored in" in err, err
    wait_queue_empty(slurm)  # its worker jobs were cancelled with it
    again = boopexp_here(slurm, args, env)
    assert again.returncode == 0 and f"{stored} were already stored" in again.stdout, (again.stdout, again.stderr)
    assert records(out) == unsharded(config, tmp_path / "unsharded")
    wait_queue_empty(slurm)


TINY_TUNE = """\
name: tiny-tune
seed: 11
budget: {mode: iterations, iterations: 5}
tune:
  agent: mcts-co
  space: {uct_c: {low: 0.1, high: 1.0}}
  trials: 2
  games_per_trial: 2
  startup_trials: 1
  confirm: {top: 1, games: 2}
"""


@needs_slurm
def test_dask_on_slurm_tune_keeps_its_worker_jobs_from_trial_to_trial(slurm, tmp_path):
    """Each trial (and the confirmation) is a run of its own: its worker jobs are submitted once
    for the whole tuning, not queued again for every trial."""
    config = tmp_path / "tune.yaml"
    config.write_text(TINY_TUNE)
    done = boopexp_here(slurm, ["tune", str(config), "--backend", "dask", "--slurm", "--jobs", "1",
                                "--out", str(tmp_path / "tune")], dask_on_slurm_env(tmp_path))
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "tune tiny-tune: mcts-co, 2/2 trials; best trial" in done.stdout, done.stdout
    assert len([line for line in done.stderr.splitlines() if line.startswith("dask: ")]) == 3, done.stderr
    assert len(list((tmp_path / "worker-logs").glob("*.err"))) == 1, done.stderr
    wait_queue_empty(slurm)


@needs_slurm
def test_dask_on_slurm_a_worker_job_slurm_refuses_is_one_line_and_nothing_written(slurm, tmp_path):
    config = tmp_path / "demo.yaml"
    config.write_text(DEMO_CONFIG)
    out = tmp_path / "dask"
    done = boopexp_here(slurm, ["run", str(config), "--backend", "dask", "--slurm", "--out", str(out)],
                        dask_on_slurm_env(tmp_path, queue="nosuchpartition"), timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.splitlines() == [
        "Error: --slurm: Slurm refuses the dask worker job (sbatch: error: invalid partition specified: "
        "nosuchpartition); set its options in dask's jobqueue.slurm config (docs/cluster.md \"Dask on Slurm\")"]
    assert not out.exists() and not slurm.run("squeue", "-h").stdout.strip()


def test_slurm_option_mistakes_are_one_line_and_exit_2(tmp_path, monkeypatch):
    config = tmp_path / "demo.yaml"
    config.write_text(DEMO_CONFIG)
    out = tmp_path / "out"

    def run(*args):
        return CliRunner().invoke(main, ["run", str(config), "--out", str(out), *args])

    assert one_line(run("--slurm"), 2) == "Error: --slurm needs --backend dask (the dask workers are Slurm jobs)"
    assert one_line(run("--backend", "dask", "--slurm", "--scheduler", "tcp://h:8786"), 2) == (
        "Error: --slurm starts its own scheduler: it cannot be used with --scheduler 'tcp://h:8786'")
    monkeypatch.setenv("PATH", str(tmp_path))  # no sbatch
    assert one_line(run("--backend", "dask", "--slurm"), 2) == (
        "Error: --slurm submits the dask workers with sbatch, which is not on PATH: run boopexp where you submit "
        "Slurm jobs (a login node), or start the workers yourself and pass --scheduler")
    monkeypatch.setitem(sys.modules, "dask_jobqueue", None)  # as if dask-jobqueue were not installed
    assert one_line(run("--backend", "dask", "--slurm"), 2) == (
        "Error: --slurm needs dask-jobqueue, which is not installed; install it with: pip install 'boopexp[slurm]'")
    assert not out.exists()


def test_slurm_workers_are_never_more_than_the_games_to_play(tmp_path, monkeypatch):
    """``--jobs 64`` for 8 games submits 8 worker jobs, not 64 (each would wait in the queue for nothing)."""
    config = tmp_path / "demo.yaml"
    config.write_text(DEMO_CONFIG)
    sbatch = tmp_path / "bin" / "sbatch"  # --dry-run submits nothing: a submit host is all it needs
    sbatch.parent.mkdir()
    sbatch.write_text("#!/bin/sh\nexit 1\n")
    sbatch.chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(sbatch.parent), os.environ["PATH"]]))
    result = CliRunner().invoke(main, ["run", str(config), "--out", str(tmp_path / "out"), "--backend", "dask",
                                       "--slurm", "--jobs", "64", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "8 game(s) to play on 8 dask worker(s) as Slurm jobs."
    assert not (tmp_path / "out").exists()
