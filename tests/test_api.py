"""The public Python API (boopexp/api.py, docs/python.md): its docstrings' examples run, importing
it loads no numba, wrong input is one clear error, and its frames are the readers' and tables'."""

from __future__ import annotations

import doctest
import json
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest

import boopexp
from boopexp import api
from boopexp.analysis.records import GAME_COLUMNS, load_results

ROOT = Path(__file__).resolve().parents[1]
ABLATION, MIRROR = ROOT / "results" / "ablation", ROOT / "results" / "mirror"

_EXAMPLES = [t for t in doctest.DocTestFinder().find(api, globs={"boopexp": boopexp}) if t.examples]


@pytest.mark.parametrize("test", _EXAMPLES, ids=[t.name for t in _EXAMPLES])
def test_the_docstring_examples_run(test, monkeypatch):
    monkeypatch.chdir(ROOT)  # the examples read results/ relative to the checkout
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0, test.name


def test_every_api_function_has_an_example_or_says_why_not():
    documented = {t.name.rpartition(".")[2] for t in _EXAMPLES}
    assert set(api.__all__) - documented <= {"run", "table_two"}  # run plays games, table_two: as table_one


def test_the_api_is_served_by_the_package_without_loading_numba():
    code = ("import boopexp, sys; df = boopexp.load_games('results/ablation'); print(len(df)); "
            "boopexp.table_one(df); boopexp.ratings(df); assert 'numba' not in sys.modules, 'numba loaded'")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "800"


def test_every_public_name_is_exported_by_the_package():
    for name in api.__all__:
        assert getattr(boopexp, name) is getattr(api, name)
        assert name in boopexp.__all__


def test_load_games_holds_the_readers_rows_and_the_settings():
    games = boopexp.load_games(ABLATION, str(MIRROR))
    data = load_results([ABLATION, MIRROR])
    pd.testing.assert_frame_equal(games[[*GAME_COLUMNS, "selected"]], data.games)
    assert set(api.SETTINGS_COLUMNS) <= set(games.columns)
    assert games["game"].eq("boop").all() and games["budget_mode"].eq("device").all()
    assert games["budget_seconds"].eq(1.0).all() and games["budget_iterations"].isna().all()
    assert games["preset"].eq("code-0.6.2").all() and games["max_plies"].eq(1000).all()
    assert games["opening"].eq("").all() and games["game_options"].eq("").all()


def test_load_moves_is_one_row_a_ply_of_every_game():
    games = boopexp.load_games(MIRROR)
    moves = boopexp.load_moves(MIRROR)
    assert len(moves) == games["plies"].sum()
    per_game = moves.groupby(["pairing", "game_index"]).size()
    assert per_game.loc[("vanilla vs vanilla", 0)] == games.set_index(["pairing", "game_index"]).loc[
        ("vanilla vs vanilla", 0), "plies"]
    first = moves[(moves["pairing"] == "vanilla vs vanilla") & (moves["game_index"] == 0)]
    assert first["ply"].tolist() == list(range(1, len(first) + 1))
    assert first["player"].iloc[:2].tolist() == ["p1", "p2"]
    assert first["move"].notna().all() and (first["iterations"] > 0).all()
    # the counters beyond the tables' (ply_rows') are read too, from the same records
    assert (first["playout_plies"] > 0).all() and first["nodes_created"].notna().all()


@pytest.mark.parametrize("call, words", [
    (lambda: boopexp.load_games(), "no results folder"),
    (lambda: boopexp.load_games(3), "must be a str or a path"),
    (lambda: boopexp.table_one("results/ablation"), "takes the frame boopexp.load_games returns"),
    (lambda: boopexp.ratings(pd.DataFrame({"p1": ["a"]})), "lacks the columns"),
    (lambda: boopexp.run(42), "config must be"),
    (lambda: boopexp.run({"name": "x"}, jobs=0), "jobs must be"),
])
def test_wrong_input_is_a_value_error_naming_it(call, words):
    with pytest.raises(ValueError, match=words):
        call()


@pytest.mark.parametrize("kwargs, words", [
    ({"p1": "nobody"}, "nobody"),
    ({"budget": True}, "budget"),
    ({"budget": {"mode": "fast"}}, "budget.mode"),
    ({"game": "chess"}, "chess"),
])
def test_a_bad_game_is_refused_before_anything_is_compiled(kwargs, words):
    args = {"p1": "random", "p2": "random", **kwargs}
    with pytest.raises(boopexp.ConfigError, match=words):
        boopexp.play_game(args.pop("p1"), args.pop("p2"), **args)


def test_a_missing_folder_is_boopexps_error():
    with pytest.raises(boopexp.ConfigError, match="not found"):
        boopexp.load_games(ROOT / "results" / "no-such-store")


def test_run_stores_what_load_games_reads_with_its_settings_and_openings(tmp_path, capsys):
    config = {"name": "tiny", "seed": 5, "games_per_side": 2, "pairings": [["random", "heuristics"]],
              "budget": {"mode": "iterations", "iterations": 2}, "openings": {"random_plies": 2}, "max_plies": 300}
    report = boopexp.run(config, out=tmp_path / "tiny")
    assert (report.planned, report.played, report.failed) == (4, 4, ())
    assert "4/4" in capsys.readouterr().err  # tqdm's bar (text, outside Jupyter), with its score
    again = boopexp.run(config, out=tmp_path / "tiny", progress=False)  # resumable: nothing left to play
    assert (again.skipped, again.played) == (4, 0)
    games = boopexp.load_games(tmp_path / "tiny")  # a live log, no sealed segment
    assert len(games) == 4 and games["budget_mode"].eq("iterations").all()
    assert games["budget_iterations"].eq(2).all() and games["max_plies"].eq(300).all()
    records = [json.loads(line) for line in (tmp_path / "tiny" / "games.jsonl").read_text().splitlines()]
    starts = {(r["pairing"], r["game_index"]): r["start"] for r in records}
    assert all(starts.values())
    assert [starts[k] for k in zip(games["pairing"], games["game_index"])] == games["opening"].tolist()
    # game pair i starts from position i of the suite: the same start in both pairings
    assert starts[("random vs heuristics", 1)] == starts[("heuristics vs random", 1)]
    assert starts[("random vs heuristics", 0)] != starts[("random vs heuristics", 1)]
    table = boopexp.ratings(games)
    assert set(table["agent"]) == {"random", "heuristics"} and table.attrs["anchor"] == "random"


def test_play_is_game_zero_of_the_one_pairing_experiment():
    budget = {"mode": "iterations", "iterations": 1}
    record = boopexp.play_game("random", "heuristics", budget=budget, seed=7)
    assert (record["pairing"], record["game_index"], record["p1"], record["p2"]) == (
        "random vs heuristics", 0, "random", "heuristics")
    assert record == boopexp.play_game("random", "heuristics", budget=budget, seed=7) | {
        "host_seconds": record["host_seconds"], "telemetry": record["telemetry"]}
    assert record["moves"] == boopexp.play_game("random", "heuristics", budget=budget, seed=7)["moves"]
    other = boopexp.play_game("random", "random", game="connect-four", budget=budget, seed=7)
    assert other["game"] == "connect-four"


def test_a_folder_without_games_is_an_empty_frame_with_every_column(tmp_path):
    from boopexp.analysis import ReportWarning

    with pytest.warns(ReportWarning, match="no games"):
        games = boopexp.load_games(tmp_path)
    assert len(games) == 0 and set(api.SETTINGS_COLUMNS) <= set(games.columns)
    with pytest.warns(ReportWarning):
        assert len(boopexp.load_moves(tmp_path)) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        boopexp.load_games(tmp_path, warn=False)  # warn=False: silent
