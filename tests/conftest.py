"""Shared test set-up: the ``e2e_real`` marker and a fake ``play_game`` for the runner tests.

The fake lives here (not in a test module) so that pool workers, which import functions by
module name, can import it: pytest puts this folder on ``sys.path`` and loky passes ``sys.path``
on to its workers.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from boopexp.play.contract import build_record, without_host_timing


def _under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Under CI (``CI=true``, set by .ci/run), a golden test skipped for missing data fails: CI
    must check the engine against the reference, not report it as skipped."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and _under_ci() and item.get_closest_marker("golden") is not None:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"golden test skipped under CI (CI=true): {reason}"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "e2e_real: end-to-end runner tests that play real games (random/heuristics, tiny MCTS budgets)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``make test``): the test files that hold tests marked ``slow`` first (the
    more, the earlier), then the others, most tests first (xdist's own order).

    With ``--dist loadfile`` a worker takes the next file of this order when it is nearly idle. In
    xdist's order (most tests first) the few long tests of tests/test_runner_chaos.py (~3.5 min on
    a loaded machine, 10 tests) came last, for one worker alone while the other had finished: the
    suite's long pole. The Makefile passes ``--no-loadscope-reorder``, so that xdist keeps this
    order; one process (``TEST_JOBS=0``) keeps the files in their order.
    """
    if not hasattr(config, "workerinput"):  # not an xdist worker
        return
    by_file: dict[str, list[pytest.Item]] = {}
    for item in items:
        by_file.setdefault(item.nodeid.split("::")[0], []).append(item)
    slow = {name: sum(t.get_closest_marker("slow") is not None for t in tests) for name, tests in by_file.items()}
    order = sorted(by_file, key=lambda name: (-slow[name], -len(by_file[name])))
    items[:] = [item for name in order for item in by_file[name]]


def one_line(result: Any, code: int) -> str:
    """The one ``Error: ...`` line of a CliRunner result that must exit ``code`` without a traceback."""
    assert result.exit_code == code, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


#: a record without its host-timing fields (the tests compare records of one game played twice)
without_timing = without_host_timing


#: A small config for runner tests: two cheap pairings (a baseline pair and a vanilla mirror).
DEMO_CONFIG = """\
name: demo
seed: 11
games_per_side: 2
budget: {mode: iterations, iterations: 2}
pairings:
  - [heuristics, random]
  - [vanilla, vanilla]
"""


def fake_play_game(task: Any, sleep: float = 0.0, die: tuple[str, ...] = (), die_once_dir: str | None = None) -> dict:
    """A stand-in for ``boopexp.play.match.play_game``: a schema-shaped record, deterministic in task.seed.

    Args:
        task: the GameTask.
        sleep: seconds to wait (to make a run slow enough to interrupt); also
            ``$BOOPEXP_TEST_FAKE_SLEEP``.
        die: keys ``"<pairing>#<index>"`` whose worker kills itself (SIGKILL), every time.
        die_once_dir: with ``die``, kill the worker only on the first attempt (a marker file
            in this folder remembers it).
    """
    key = f"{task.pairing}#{task.game_index}"
    if key in die:
        marker = Path(die_once_dir, key.replace(" ", "_")) if die_once_dir else None
        if marker is None or not marker.exists():
            if marker is not None:
                marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(sleep or float(os.environ.get("BOOPEXP_TEST_FAKE_SLEEP", "0")))
    rng = np.random.default_rng(task.seed)
    plies = int(rng.integers(9, 60))
    winner = "p1" if plies % 2 else "p2"  # p1 moves on odd plies and the last mover wins
    moves = [f"m{int(x)}" for x in rng.integers(0, 72, plies)]
    telemetry = [
        {"ply": 1, "player": "p1", "agent": task.p1.name, "iterations": int(rng.integers(1, 99)),
         "host_cpu_seconds": time.process_time()}
    ]
    return build_record(task, winner, moves, telemetry, time.process_time(), version="fake")


#: A config with a variant of a built-in, a plugin (examples/greedy_agent.py, copied beside it by
#: the ``lab_config`` fixture) and a variant of the plugin; a ply cap of 10: a game is five moves each.
LAB_CONFIG = """\
name: lab
seed: 5
games_per_side: 1
budget: {mode: iterations, iterations: 3}
max_plies: 10
agents:
  co-c: {base: mcts-co, uct_c: 0.5}
  greedy: {plugin: "greedy_agent:make_greedy"}
  greedy-noisy: {base: greedy, noise: 0.3}
pairings: [[co-c, greedy-noisy]]
"""


@pytest.fixture
def lab_config(tmp_path: Path) -> Path:
    """:data:`LAB_CONFIG` in ``tmp_path/lab/lab.yaml``, its plugin's module beside it."""
    import shutil

    folder = tmp_path / "lab"
    folder.mkdir()
    shutil.copy(Path(__file__).resolve().parent.parent / "examples" / "greedy_agent.py", folder)
    (folder / "lab.yaml").write_text(LAB_CONFIG)
    return folder / "lab.yaml"


@pytest.fixture(scope="session")
def real_play_game():
    """The real ``match.play_game`` (imported on use: it loads the compiled engine)."""
    from boopexp.play import match

    return match.play_game
