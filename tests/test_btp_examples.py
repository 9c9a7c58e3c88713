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


def test_conformance_the_c_engine_plays_from_start_positions_in_both_seats(c_engine):
    """From an openings suite's starts (Blue to move after 4 random plies, Red after 5) the C
    engine keeps the game's board from ``position fen <start> moves ...``: whole games in both
    seats in which the host accepted every move it named (a wrong board gives an illegal move or
    a wrong promoted group at once), the same game again from the same seed."""
    from boopexp.game.position import Position
    from boopexp.play.starts import draw_opening

    starts = [draw_opening(31, plies, i) for plies in (4, 5) for i in range(2)]
    assert {Position.from_string(s).to_move.value for s in starts} == {"blue", "red"}
    records = []
    for n, start in enumerate(starts):
        for seat in (0, 1):
            p1, p2 = (c_engine, resolve_agent("random"))[::1 if seat == 0 else -1]
            task = GameTask("t", "cd" * 8, f"{p1.name} vs {p2.name}", n, p1, p2,
                            Budget(mode="iterations", iterations=1), "code-0.6.2", 100 + n, start=start)
            records.append(dict(play_game(task)))
    assert all(r["termination"] == "victory" and r.get("forfeit") is None for r in records), \
        [r.get("forfeit") for r in records]
    assert sum(r["plies"] for r in records) > 150 and any(":" in m for r in records for m in r["moves"])
    again = dict(play_game(GameTask("t", "cd" * 8, "crand vs random", 0, c_engine, resolve_agent("random"),
                                    Budget(mode="iterations", iterations=1), "code-0.6.2", 100, start=starts[0])))
    assert again["moves"] == records[0]["moves"]


def test_the_c_engine_does_not_play_from_a_position_it_cannot_set_up(c_engine):
    """A position string it cannot read, or a move list it refuses: one ``info error`` line, and
    ``bestmove (none)`` at the next ``go`` (a forfeit for a host), never a move on a board that is
    not the game's; the next good position plays again."""
    start = "....../..b.../...r../....../....../...... 7,0 7,0 b 0,0 2"
    lines = ["btp", "newgame seed 1",
             f"position fen {start.replace(' b ', ' x ')}", "go",          # no side to move
             f"position fen {start.replace('7,0 7,0', '7,0 8,0')}", "go",  # Red has 9 pieces
             f"position fen {start[1:]}", "go",                            # a row of 5
             f"position fen {start} moves c5", "go",                       # c5 is taken
             "position frobnicate", "go",
             f"position fen {start} moves c3", "go", "quit"]
    out = subprocess.run(c_engine.engine, input="\n".join(lines) + "\n", capture_output=True, text=True,
                         timeout=30, check=True).stdout.splitlines()
    answers = out[out.index("btpok") + 1:]
    assert answers[:10] == ["info error not a position string", "bestmove (none)"] * 3 + [
        "info error illegal move c5", "bestmove (none)",
        "info error position: startpos or fen <position string>", "bestmove (none)"]
    assert len(answers) == 11 and answers[10].startswith("bestmove ") and answers[10] != "bestmove (none)"
