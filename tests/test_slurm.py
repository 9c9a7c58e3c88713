"""boopexp on a real single-node Slurm (docs/cluster.md "A Slurm job array"): the committed
scripts of examples/slurm/ submit a job array of shards and their merge, and the merged store is
the unsharded run's, game for game; a shard requeued mid-run (preemption) resumes and plays the
same games.

The cluster (tests/slurm_helpers.py) is started once for this module and stopped at its end,
whatever the outcome. Skipped, with the reason, where Slurm is not installed or we are not root
(CI installs no Slurm); ``make test-slurm`` installs it (Debian's slurm-wlm and munge) and runs
these tests (a skip is a failure there). The games are real (cheap agents); the engine is compiled by the unsharded run
first, so the shards load it from numba's cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import DEMO_CONFIG, without_timing
from slurm_helpers import LocalSlurm, missing

from boopexp.experiments.store import GameStore

#: Why Slurm cannot run here; ``make test-slurm`` (BOOPEXP_SLURM_REQUIRED=1) fails on it instead of skipping.
MISSING = missing()
REQUIRED = bool(os.environ.get("BOOPEXP_SLURM_REQUIRED"))
pytestmark = pytest.mark.skipif(MISSING is not None and not REQUIRED, reason=str(MISSING))

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "slurm"
BIN = Path(sys.executable).parent

#: Games that take ~0.5 s each, so that a shard can be requeued while it plays.
SLOW_CONFIG = """\
name: slow
seed: 5
games_per_side: 8
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
            for r in GameStore(folder).scan().records}


def unsharded(config: Path, out: Path) -> dict:
    done = subprocess.run([str(BIN / "boopexp"), "run", str(config), "--jobs", "1", "-q", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return records(out)


def submit(slurm: LocalSlurm, work: Path, config: Path, n: int) -> tuple[str, str]:
    """examples/slurm/submit.sh: the job array of ``n`` shards into work/out and its merge."""
    done = slurm.run(str(EXAMPLES / "submit.sh"), str(config), str(n), "out", "--cpus-per-task=1", cwd=work)
    words = done.stdout.split()
    array, merge = words[words.index("array") + 1], words[words.index("merge:") + 2]
    return array, merge


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
    assert GameStore(tmp_path / "out" / "shard-1").scan().duplicates == 0
    assert records(tmp_path / "out" / "all") == expected and len(expected) == 16
