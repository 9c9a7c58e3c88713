"""SPRT in the runner: a pairing stops at its decision, the same games whatever the pool, status shows it."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import without_timing
from sprt_helpers import elo_play_game

from boopexp.errors import ConfigError
from boopexp.experiments.config import load_yaml, parse_config
from boopexp.experiments.pool import PoolOptions
from boopexp.experiments.runner import run_plan
from boopexp.experiments.sprt import H0, H1
from boopexp.experiments.store import StoreReader
from boopexp.interfaces.cli import main
from boopexp.play import match

CONFIG = """\
name: s
seed: 3
games_per_side: 60
budget: {mode: iterations, iterations: 2}
pairings:
  - [heuristics, random]
  - [vanilla, random]
  - [vanilla, vanilla]
sprt: {elo0: 0, elo1: 150, alpha: 0.05, beta: 0.05, batch: 4}
"""


def config(text: str = CONFIG):
    return parse_config(load_yaml(text, "s.yaml"), "s.yaml")


def stored(folder) -> dict:
    return {(r["pairing"], r["game_index"]): r for r in StoreReader(folder).records().records}


@pytest.fixture
def elo_games(monkeypatch):
    monkeypatch.setattr(match, "play_game", elo_play_game)  # pickled by reference to the workers


def _by_pair(report):
    return {(t.first, t.second): t for t in report.sprt}


def test_lopsided_pairing_stops_early_with_h1_and_equal_one_with_h0(tmp_path, elo_games):
    c = config()
    report = run_plan(c, c.plan(), tmp_path)
    tests = _by_pair(report)
    assert set(tests) == {("heuristics", "random"), ("vanilla", "random")}  # the mirror is not tested
    strong, equal = tests["heuristics", "random"].state, tests["vanilla", "random"].state
    assert strong.decision == H1 and strong.llr >= strong.upper
    assert equal.decision == H0 and equal.llr <= equal.lower
    games = stored(tmp_path)
    for pairing, state in (("heuristics vs random", strong), ("random vs heuristics", strong),
                           ("vanilla vs random", equal), ("random vs vanilla", equal)):
        indices = sorted(i for p, i in games if p == pairing)
        # Whole blocks of 4 indices up to the decision's block, nothing after it.
        assert indices == list(range(4 * (state.last_index // 4 + 1))), pairing
    assert strong.last_index < 20  # an early stop: at most 40 of the 120 games
    assert sum(1 for p, _ in games if p == "vanilla vs vanilla") == 120  # untested: played in full
    assert report.complete and not report.failed
    # A rerun finds every test decided and plays nothing.
    again = run_plan(c, c.plan(), tmp_path)
    assert again.played == 0 and _by_pair(again) == tests


def test_jobs_1_and_jobs_2_take_the_same_decisions_on_the_same_games(tmp_path, elo_games):
    c = config()
    one = run_plan(c, c.plan(), tmp_path / "one", PoolOptions(jobs=1))
    two = run_plan(c, c.plan(), tmp_path / "two", PoolOptions(jobs=2))
    assert _by_pair(one) == _by_pair(two)
    a, b = stored(tmp_path / "one"), stored(tmp_path / "two")
    assert {k: without_timing(r) for k, r in a.items()} == {k: without_timing(r) for k, r in b.items()}


def test_status_and_json_show_llr_bounds_and_decision(tmp_path, elo_games):
    c = config()
    run_plan(c, c.plan(), tmp_path)
    result = CliRunner().invoke(main, ["status", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "SPRT" in result.output
    assert "heuristics vs random (both ways): LLR " in result.output and "(-2.94, 2.94)" in result.output
    assert "for [0, 150] Elo: H1 after" in result.output and ": H0 after" in result.output
    # The score table marks a pairing its test stopped: its "done/planned" is not games owed.
    rows = {line.split("  ")[1].strip(): line for line in result.output.splitlines() if line.startswith("  ")}
    for pairing in ("heuristics vs random", "random vs heuristics"):
        assert rows[pairing].endswith("stopped (H1)"), rows[pairing]
    assert rows["vanilla vs random"].endswith("stopped (H0)")
    assert "stopped" not in rows["vanilla vs vanilla"]
    assert "(0 still to play: the stopped pairings' rest is not played)" in rows["total"]
    data = json.loads(CliRunner().invoke(main, ["status", str(tmp_path), "--json"]).output)
    decisions = {(t["first"], t["second"]): t["decision"] for t in data[0]["sprt"]}
    assert decisions == {("heuristics", "random"): H1, ("vanilla", "random"): H0}


def test_sprt_is_saved_with_the_settings_and_not_in_the_hashes():
    c = config()
    assert c.resolved()["sprt"] == {"elo0": 0.0, "elo1": 150.0, "alpha": 0.05, "beta": 0.05, "batch": 4}
    plain = config(CONFIG.replace(CONFIG.splitlines()[-1], ""))
    assert "sprt" not in plain.resolved()
    assert [p.config_hash for p in plain.plan()] == [p.config_hash for p in c.plan()]


def test_bad_sprt_in_a_config_is_one_line():
    with pytest.raises(ConfigError, match="s.yaml: sprt.elo0 must be less than sprt.elo1"):
        config(CONFIG.replace("elo0: 0, elo1: 150", "elo0: 150, elo1: 0"))


def test_tables_write_the_sprt_table(tmp_path, elo_games):
    import warnings

    from boopexp.analysis import ReportWarning, build_report

    c = config()
    run_plan(c, c.plan(), tmp_path / "store")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReportWarning)
        report = build_report([tmp_path / "store"], tmp_path / "tables")
    md = (tmp_path / "tables" / "sprt.md").read_text(encoding="utf-8")
    assert "| s | heuristics vs random | [0, 150] |" in md and "| H1 |" in md and "| H0 |" in md
    header = (tmp_path / "tables" / "sprt.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("experiment,first,second,elo0,elo1,alpha,beta,llr,lower,upper,decision")
    assert report.tables["sprt"].data.set_index("first").loc["heuristics", "decision"] == "H1"
