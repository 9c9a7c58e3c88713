"""The example engines of examples/engines/ play whole legal games through the host (every move checked)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from boopexp.agents.budget import Budget
from boopexp.agents.specs import AgentSpec, resolve_agent
from boopexp.play.contract import GameTask
from boopexp.play.match import play_game

C_SOURCE = Path(__file__).resolve().parent.parent / "examples" / "engines" / "random_engine.c"


def _games(engine: AgentSpec, seeds: range) -> list[dict]:
    out = []
    other = resolve_agent("random")
    for seed in seeds:
        p1, p2 = (engine, other) if seed % 2 == 0 else (other, engine)
        task = GameTask("t", "cd" * 8, f"{p1.name} vs {p2.name}", 0, p1, p2, Budget(mode="iterations", iterations=1),
                        "code-0.6.2", seed)
        out.append(dict(play_game(task)))
    return out


@pytest.fixture(scope="module")
def c_engine(tmp_path_factory) -> AgentSpec:
    """The C example engine compiled with the system's ``cc`` (skipped, said, without one), as a
    config's engine agent."""
    compiler = shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler (cc) on this machine: the C example engine cannot be built")
    binary = tmp_path_factory.mktemp("c_engine") / "random_engine"
    subprocess.run([compiler, "-O2", "-o", str(binary), str(C_SOURCE)], check=True, timeout=120)
    return AgentSpec(name="crand", kind="engine", engine=(str(binary),), options={})


def test_the_c_engine_compiles_and_plays_legal_games(c_engine):
    records = _games(c_engine, range(6))
    assert all(r["termination"] == "victory" for r in records), [r.get("forfeit") for r in records]
    assert sum(r["plies"] for r in records) > 100  # whole games, promotions and all, accepted by the host
    assert [r["moves"] for r in _games(c_engine, range(2))] == [r["moves"] for r in records[:2]]  # seeded


def test_the_c_engine_does_not_play_from_a_position_it_cannot_set_up(c_engine):
    """The C engine reads only ``position startpos``: from a start position it says so and answers
    ``bestmove (none)`` (a forfeit), instead of moving on its empty board."""
    task = GameTask("t", "cd" * 8, "crand vs random", 0, c_engine, resolve_agent("random"),
                    Budget(mode="iterations", iterations=1), "code-0.6.2", 0,
                    start="....../..b.../...r../....../....../...... 7,0 7,0 b 0,0 2")
    record = dict(play_game(task))
    assert record["plies"] == 0 and record["winner"] == "p2", record
    assert record["forfeit"]["player"] == "p1"
