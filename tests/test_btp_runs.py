"""Engine agents in runs with the runner's other features (issue 25): SPRT, sweeps of an engine's
options, ratings over a store that mixes built-in, plugin and engine agents.

The engines are the standard-library example (examples/engines/random_engine.py): a process per
game that starts in tens of milliseconds, so each test stays a few seconds.
"""

from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from boopexp.errors import ConfigError
from boopexp.experiments.config import load_yaml, parse_config
from boopexp.experiments.pool import PoolOptions
from boopexp.experiments.runner import run_plan
from boopexp.experiments.sprt import H1, PAIR_SCORES, llr_logistic
from boopexp.experiments.store import StoreReader
from boopexp.interfaces.cli import main
from boopexp.play.contract import Side

ROOT = Path(__file__).resolve().parent.parent
RANDOM_ENGINE = ROOT / "examples" / "engines" / "random_engine.py"
#: the example engine as a config's agent (flow style: one line of YAML)
RANDPY = f"{{engine: [{sys.executable}, {RANDOM_ENGINE}], move_timeout_s: 20, memory_mb: 512}}"


def _config(text: str, where: Path | None = None):
    return parse_config(load_yaml(text, "e.yaml"), "e.yaml", None if where is None else str(where))


def _records(folder: Path) -> list[dict]:
    return list(StoreReader(folder).records().records)


def _run(tmp_path: Path, text: str) -> tuple[Path, list[dict]]:
    """``boopexp run`` of the config ``text`` (one worker): its store and its records."""
    config, store = tmp_path / "run.yaml", tmp_path / "store"
    config.write_text(text)
    run = CliRunner().invoke(main, ["run", str(config), "--out", str(store), "--jobs", "1", "-q"])
    assert run.exit_code == 0, run.output
    return store, _records(store)


def test_sweep_of_an_engine_option_gives_each_point_its_settings_and_records(tmp_path):
    """``agents.NAME.options.OPTION`` sweeps an engine's option: each point's games have their own
    settings hashes, and their records carry the option (the agent's spec) and the point."""
    c = _config(f"name: e\nseed: 4\ngames_per_side: 1\nmax_plies: 12\nbudget: {{mode: iterations, iterations: 1}}\n"
                f"agents: {{randpy: {RANDPY}}}\npairings: [[randpy, random]]\n"
                "sweep: {agents.randpy.options.style: [calm, wild], agents.randpy.options.depth: [1, 2]}\n")
    points = [dict(p.point) for p in c.points]
    assert points == [{"agents.randpy.options.style": s, "agents.randpy.options.depth": d}
                      for s in ("calm", "wild") for d in (1, 2)]
    assert [p.agent("randpy").options for p in c.points] == [{"style": s, "depth": d}
                                                             for s in ("calm", "wild") for d in (1, 2)]
    plan = c.plan()
    assert len({e.config_hash for e in plan if e.pairing == "randpy vs random"}) == 4
    report = run_plan(c, plan, tmp_path, PoolOptions(jobs=1))
    assert report.complete and not report.failed
    records = _records(tmp_path)
    assert len(records) == 8 and all(r["termination"] != "agent_error" for r in records)
    for r in records:
        seat = "p1" if r["p1"] == "randpy" else "p2"
        sweep = r["sweep"]
        assert r[f"{seat}_spec"]["options"] == {"style": sweep["agents.randpy.options.style"],
                                                "depth": sweep["agents.randpy.options.depth"]}
    assert len({(r["pairing"], r["config_hash"]) for r in records}) == 8


def test_an_option_sweep_of_an_agent_that_is_no_engine_is_one_line():
    with pytest.raises(ConfigError) as err:
        _config("name: e\nseed: 4\ngames_per_side: 1\nbudget: {mode: iterations, iterations: 1}\n"
                "pairings: [[heuristics, random]]\nsweep: {agents.heuristics.options.depth: [1, 2]}\n")
    assert "\n" not in str(err.value) and "agents.heuristics.options" in str(err.value), str(err.value)


def test_sprt_with_an_engine_agent_stops_on_its_bound_with_the_llr_of_its_games(tmp_path):
    """heuristics against the random example engine, under ``sprt:``: the pairing stops at the
    first pair of games whose LLR (recomputed here from the stored games' pentanomial counts)
    reaches the upper bound, with whole batches played up to it and none after."""
    c = _config(f"name: e\nseed: 9\ngames_per_side: 40\nbudget: {{mode: iterations, iterations: 1}}\n"
                f"agents: {{randpy: {RANDPY}}}\npairings: [[heuristics, randpy]]\n"
                "sprt: {elo0: 0, elo1: 200, alpha: 0.05, beta: 0.05, batch: 4}\n")
    report = run_plan(c, c.plan(), tmp_path, PoolOptions(jobs=1))
    (test,) = report.sprt
    state = test.state
    assert (test.first, test.second) == ("heuristics", "randpy") and state.decision == H1
    records = _records(tmp_path)
    assert all(r.get("forfeit") is None for r in records)  # the engine played every game to its end
    ahead = {r["game_index"]: r["winner"] == Side.P1 for r in records if r["pairing"] == "heuristics vs randpy"}
    behind = {r["game_index"]: r["winner"] == Side.P2 for r in records if r["pairing"] == "randpy vs heuristics"}
    # whole blocks of 4 game indices up to the decision's, in both seatings, nothing after it
    played = list(range(4 * (state.last_index // 4 + 1)))
    assert sorted(ahead) == played and sorted(behind) == played
    counts, llrs = [0, 0, 0], []
    for i in range(state.last_index + 1):
        counts[int(ahead[i]) + int(behind[i])] += 1
        llrs.append(llr_logistic(counts, PAIR_SCORES, 0, 200))
    assert state.counts == tuple(counts) and state.llr == pytest.approx(llrs[-1], abs=1e-12)
    assert llrs[-1] >= state.upper and all(state.lower < x < state.upper for x in llrs[:-1])
    again = run_plan(c, c.plan(), tmp_path, PoolOptions(jobs=1))  # decided: a rerun plays nothing
    assert again.played == 0


def test_ratings_of_a_store_mixing_built_in_plugin_and_engine_agents(tmp_path):
    """A round robin of a built-in (heuristics, random), a plugin (examples/greedy_agent.py) and an
    engine agent (the example engine): one store, and ``boopexp ratings`` rates all four."""
    shutil.copy(ROOT / "examples" / "greedy_agent.py", tmp_path / "greedy_agent.py")
    store, records = _run(tmp_path, f"name: mixed\nseed: 2\ngames_per_side: 2\nbudget: {{mode: iterations, "
                                    f"iterations: 1}}\nagents:\n  randpy: {RANDPY}\n  greedy: {{plugin: "
                                    "'greedy_agent:make_greedy', noise: 0.5}\n"
                                    "tournament: {format: round-robin, agents: [heuristics, greedy, randpy, random]}\n")
    assert len(records) == 24 and all(r.get("forfeit") is None for r in records)
    kinds = {r[f"{seat}_spec"]["name"]: r[f"{seat}_spec"]["kind"] for r in records for seat in ("p1", "p2")}
    assert kinds == {"heuristics": "heuristics", "random": "random", "greedy": "plugin", "randpy": "engine"}
    out = tmp_path / "ratings"
    rated = CliRunner().invoke(main, ["ratings", str(store), "--out", str(out)])
    assert rated.exit_code == 0, rated.output
    assert "| random (anchor) | 0 | — |" in rated.output
    with open(out / "ratings.csv", encoding="utf-8") as f:
        rows = {row["agent"]: row for row in csv.DictReader(f)}
    assert set(rows) == set(kinds)
    assert {a: int(rows[a]["games"]) for a in rows} == {a: 12 for a in kinds}  # 3 opponents x 2 seats x 2


def test_a_run_of_connect_four_with_an_engine_agent(tmp_path):
    """``game: connect-four`` with an engine agent (``boopexp engine --game connect-four``) in a
    tiny run: every game played to its end through btp, in the game's notation, and it walks."""
    from boopexp.play.replay import walk

    _, records = _run(tmp_path, "name: c4-engine\nseed: 5\ngames_per_side: 1\ngame: connect-four\n"
                                "budget: {mode: iterations, iterations: 4}\n"
                                f"agents: {{c4-ext: {{engine: [{sys.executable}, -m, boopexp, engine, --game, "
                                "connect-four, --agent, heuristics], move_timeout_s: 120}}\n"
                                "pairings: [[c4-ext, random]]\n")
    assert len(records) == 2 and all(r.get("forfeit") is None and r["game"] == "connect-four" for r in records)
    assert all(r["termination"] in ("victory", "draw") and set(r["moves"]) <= set("abcdefg") for r in records)
    for record in records:
        walk(record)
