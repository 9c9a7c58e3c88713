"""Tables, records, rendering and figures of boopexp.analysis, from synthetic and paper records."""

from __future__ import annotations

import json
import math
import warnings

import matplotlib.image as mpimg
import pandas as pd
import pytest
from report_fixtures import (
    ABSENT,
    games_for,
    make_record,
    paper_games_path,
    paper_records,
    write_plan,
    write_results,
)

from boopexp.analysis import ReportWarning, build_report, build_tables, load_results
from boopexp.analysis.paper import TABLE1_OPPONENTS, TABLE2_AGENTS, paper_data, table1_reference
from boopexp.analysis.render import latex_document, to_markdown
from boopexp.analysis.render import to_csv as render_csv
from boopexp.analysis.stats import boschloo_exact, fisher_exact, wilson_interval
from boopexp.errors import ConfigError, StoreError

EXPECTED_FILES = {
    f"{stem}.{ext}" for stem in ("table1", "table2", "telemetry", "pairwise") for ext in ("md", "csv", "tex")
} | {"game_length.csv"}
FIGURES = {f"{stem}.{ext}" for stem in ("table1", "table2", "iterations") for ext in ("png", "svg")}


def _load(*dirs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReportWarning)
        return load_results(list(dirs))


@pytest.fixture
def synthetic(tmp_path):
    """Two results dirs with known counts and telemetry.

    ablation: mcts-co vs vanilla 30 P1 / 10 P2 (40 games, partial), vanilla vs mcts-co 5 / 45,
              mcts-co vs mcts+S 20 / 30 (P2 side absent), random vs heuristics 3 / 1 (not a paper pairing).
    mirror:   mcts+P vs mcts+P 20 / 80, vanilla vs vanilla 50 / 50.
    """
    ablation = (
        games_for("mcts-co vs vanilla", 30, 10, plies=31, iterations=50, equivalent_moves=7, experiment="ablation")
        + games_for("vanilla vs mcts-co", 5, 45, plies=20, iterations=80, equivalent_moves=3, experiment="ablation")
        + games_for("mcts-co vs mcts+S", 20, 30, plies=40, experiment="ablation")
        + games_for("random vs heuristics", 3, 1, plies=11, experiment="ablation", config_hash="00000000000000bb")
    )
    mirror = games_for("mcts+P vs mcts+P", 20, 80, plies=25, experiment="mirror") + games_for(
        "vanilla vs vanilla", 50, 50, plies=60, experiment="mirror"
    )
    write_results(tmp_path / "ablation", ablation)
    write_results(tmp_path / "mirror", mirror)
    return tmp_path


# --------------------------------------------------------------------------- synthetic counts


def test_table1_cells_from_synthetic_records(synthetic):
    tables = build_tables(_load(synthetic / "ablation", synthetic / "mirror"))
    t1 = tables["table1"].data.set_index("opponent")
    assert list(t1.index) == list(TABLE1_OPPONENTS)

    van = t1.loc["vanilla"]
    assert (van.p1_wins, van.p1_games, van.p2_wins, van.p2_games) == (30, 40, 45, 50)
    assert (van.wins, van.games) == (75, 90)
    assert van.status == "partial (90/100)"
    assert van.win_rate == pytest.approx(75 / 90)
    assert (van.ci_low, van.ci_high) == pytest.approx(wilson_interval(75, 90))
    assert van.paper_win_rate == pytest.approx(0.96)
    assert van.difference == pytest.approx(75 / 90 - 0.96)
    assert van.p_value == pytest.approx(fisher_exact([[75, 15], [96, 4]]))
    assert van.p_value_p1 == pytest.approx(fisher_exact([[30, 10], [47, 3]]))
    assert van.p_value_boschloo == pytest.approx(boschloo_exact([[75, 15], [96, 4]]))
    assert van.verdict == "differs"  # 75/90 vs 96/100: p ~ 0.003

    # Only the P1 side was run: compared with the paper's P1 side only (31/50).
    s = t1.loc["mcts+S"]
    assert (s.p1_wins, s.p1_games, s.p2_games) == (20, 50, 0)
    assert pd.isna(s.p2_wins)
    assert s.paper_win_rate == pytest.approx(31 / 50)
    assert s.p_value == pytest.approx(fisher_exact([[20, 30], [31, 19]]))
    assert s.status == "partial (50/100)"

    assert t1.loc["mcts+EP"].status == "not run"
    assert pd.isna(t1.loc["mcts+EP"].win_rate)
    md = to_markdown(tables["table1"])
    assert "| vanilla | 30/40 | 45/50 | 0 | 83.3% [" in md
    assert "| mcts+S | 20/50 | — |" in md
    assert "| mcts+EP |" not in md
    assert "Not run: heuristics, mcts+E, mcts+P, mcts+SE, mcts+SP, mcts+EP." in md
    assert "Partial results" in md


def test_table2_cells_from_synthetic_records(synthetic):
    t2 = build_tables(_load(synthetic / "ablation", synthetic / "mirror"))["table2"]
    df = t2.data.set_index("agent")
    assert list(df.index) == list(TABLE2_AGENTS)
    p = df.loc["mcts+P"]
    assert (p.games, p.p1_wins, p.p2_wins, p.status) == (100, 20, 80, "complete")
    assert p.p2_share == pytest.approx(0.8)
    assert p.p_value == pytest.approx(fisher_exact([[20, 80], [14, 86]]))
    assert p.p_value_boschloo == pytest.approx(boschloo_exact([[20, 80], [14, 86]]))
    assert p.verdict == "consistent"
    assert "| p (Fisher) | p (Boschloo) | verdict |" in to_markdown(t2)
    v = df.loc["vanilla"]
    assert (v.p1_wins, v.p2_wins) == (50, 50)
    assert df.loc["mcts-co"].status == "not run"
    md = to_markdown(t2)
    assert "| mcts+P | 20 | 80 | 0 | 100 | 80.0% [71.1, 86.7] | 14 | 86 | 86% | -6.0 pp |" in md


def test_pairwise_lists_every_pairing(synthetic):
    pw = build_tables(_load(synthetic / "ablation", synthetic / "mirror"))["pairwise"].data
    assert len(pw) == 6
    row = pw[pw["pairing"] == "random vs heuristics"].iloc[0]
    assert (row.experiment, row.config_hash, row.games, row.p1_wins, row.p2_wins) == (
        "ablation", "00000000000000bb", 4, 3, 1)
    assert row.p1_rate == pytest.approx(0.75)
    assert list(pw["experiment"]) == sorted(pw["experiment"])


def test_telemetry_from_synthetic_records(synthetic):
    tel = build_tables(_load(synthetic / "ablation", synthetic / "mirror"))["telemetry"].data.set_index("agent")
    co = tel.loc["mcts-co"]
    # mcts-co: 40 games x 16 plies at 50 iterations (P1 of 31 plies) + 50 games x 10 plies at 80 (P2 of 20).
    assert co.moves == 40 * 16 + 50 * 10
    assert co.iterations_median == 50
    assert co.iterations_q75 == 80
    assert co.solver_calls_median == 100
    assert co.equivalent_moves_per_game == pytest.approx((40 * 16 * 7 + 50 * 10 * 3) / 90)
    assert co.paper_equivalent_moves_per_game == 21352
    assert co.games == 140  # 40 + 50 with telemetry, 50 against mcts+S without
    assert co.plies_median == 31  # 50 games of 40 plies, 40 of 31, 50 of 20
    van = tel.loc["vanilla"]
    assert van.games == 190  # the mirror games count once each
    assert pd.isna(van.paper_equivalent_moves_per_game)
    assert pd.isna(tel.loc["heuristics"].iterations_median)
    assert list(tel.index)[:3] == ["vanilla", "mcts+S", "mcts+P"]


def test_telemetry_missing_keys_are_nan(tmp_path):
    entries = [{"ply": 1, "player": "p1", "agent": "mcts-co", "iterations": 10},
               {"ply": 2},  # no player/agent: derived from the ply number
               {"ply": 3, "player": "p1", "solver_calls": "oops"},
               "not a dict"]
    write_results(tmp_path / "r", [make_record("mcts-co vs heuristics", 0, "p1", telemetry=entries)])
    tel = build_tables(_load(tmp_path / "r"))["telemetry"].data.set_index("agent")
    assert tel.loc["mcts-co", "moves"] == 2
    assert tel.loc["mcts-co", "iterations_median"] == 10
    assert math.isnan(tel.loc["mcts-co", "solver_calls_median"])
    assert tel.loc["heuristics", "moves"] == 1
    assert math.isnan(tel.loc["heuristics", "equivalent_moves_per_game"])


def test_game_length_beside_paper_durations(synthetic):
    gl = build_tables(_load(synthetic / "ablation", synthetic / "mirror"))["game_length"].data.set_index("file")
    assert len(gl) == 22
    row = gl.loc["full_vs_vanilla.txt"]
    assert (row.pairing, row.paper_median_s, row.games, row.plies_median) == ("mcts-co vs vanilla", 41.6, 40, 31)
    assert gl.loc["full_vs_heuristics.txt", "paper_plies_estimate"] == pytest.approx(54.0)
    assert gl.loc["full_vs_heuristics.txt", "reading"] == "plies ≈ 2×s"
    assert math.isnan(gl.loc["heuristics_mirror.txt", "paper_plies_estimate"])
    assert gl.loc["full_mirror.txt", "games"] == 0


# --------------------------------------------------------------------------- games without a winner


@pytest.fixture
def no_winner_results(tmp_path):
    """Known counts with exactly 2 games stopped at the ply limit (winner null, 1000 plies).

    ablation: mcts-co vs heuristics 40 P1 / 9 P2 / 1 no winner (30 plies, 1000 for the cap game;
              every ply: 50 iterations, 2 equivalent moves, 5 equivalent candidates),
              heuristics vs mcts-co 4 / 46 (40 plies; 3 equivalent moves, no equivalent_candidates
              key: older telemetry).
    mirror:   mcts-co vs mcts-co 30 / 69 / 1 no winner (50 plies, no telemetry).
    """
    ablation = (
        games_for("mcts-co vs heuristics", 40, 9, 1, plies=30, iterations=50, equivalent_moves=2,
                  equivalent_candidates=5, experiment="ablation", termination="victory")
        + games_for("heuristics vs mcts-co", 4, 46, plies=40, iterations=50, equivalent_moves=3,
                    experiment="ablation")
    )
    mirror = games_for("mcts-co vs mcts-co", 30, 69, 1, plies=50, experiment="mirror")
    write_results(tmp_path / "ablation", ablation)
    write_results(tmp_path / "mirror", mirror)
    return tmp_path


def _no_winner_tables(root):
    return build_tables(_load(root / "ablation", root / "mirror"))


def test_no_winner_games_are_read(no_winner_results):
    data = _load(no_winner_results / "ablation", no_winner_results / "mirror")
    undecided = data.games[data.games["winner"].isna()]
    assert len(data.games) == 200 and len(undecided) == 2
    assert set(undecided["termination"]) == {"ply_limit"}
    assert set(undecided["plies"]) == {1000.0}
    assert set(data.games.loc[data.games["pairing"] == "mcts-co vs heuristics", "termination"]) == {
        "victory", "ply_limit"}
    # Older records without "termination": derived from the winner.
    assert set(data.games.loc[data.games["pairing"] == "heuristics vs mcts-co", "termination"]) == {"victory"}


def test_table1_no_winner_column_and_rates_on_decided_games(no_winner_results):
    t1 = _no_winner_tables(no_winner_results)["table1"]
    row = t1.data.set_index("opponent").loc["heuristics"]
    assert (row.p1_wins, row.p1_games, row.p1_no_winner) == (40, 49, 1)
    assert (row.p2_wins, row.p2_games, row.p2_no_winner) == (46, 50, 0)
    assert (row.wins, row.games, row.no_winner) == (86, 99, 1)
    assert row.status == "complete"  # 50 finished games per side, one of them without a winner
    assert row.win_rate == pytest.approx(86 / 99)
    assert (row.ci_low, row.ci_high) == pytest.approx(wilson_interval(86, 99))
    assert row.paper_win_rate == pytest.approx(0.80)
    assert row.difference == pytest.approx(86 / 99 - 0.80)
    assert row.p_value == pytest.approx(fisher_exact([[86, 13], [80, 20]]))
    assert row.p_value_p1 == pytest.approx(fisher_exact([[40, 9], [30, 20]]))
    assert row.p_value_p2 == pytest.approx(fisher_exact([[46, 4], [50, 0]]))
    md = to_markdown(t1)
    assert "| opponent | P1 | P2 | no winner | win rate [95% CI] |" in md
    assert f"| heuristics | 40/49 | 46/50 | 1 | {100 * 86 / 99:.1f}% [" in md
    assert "| heuristics | 40/49 | 46/50 | 1 | 86.9% [78.8, 92.2] | 30/50 | 50/50 | 80% | +6.9 pp |" in md
    assert "No winner: games stopped at the 1,000-ply safety cap" in md
    assert "RULES.md §7" in md and "docs/agents.md" in md and "n = wins + losses" in md
    csv = pd.read_csv(pd.io.common.StringIO(render_csv(t1))).set_index("opponent")
    assert csv.loc["heuristics", "no_winner"] == 1 and csv.loc["heuristics", "p1_no_winner"] == 1
    assert pd.isna(csv.loc["vanilla", "no_winner"])  # not run


def test_table2_no_winner_column_and_share_on_decided_games(no_winner_results):
    t2 = _no_winner_tables(no_winner_results)["table2"]
    row = t2.data.set_index("agent").loc["mcts-co"]
    assert (row.games, row.p1_wins, row.p2_wins, row.no_winner, row.status) == (100, 30, 69, 1, "complete")
    assert row.p2_share == pytest.approx(69 / 99)
    assert (row.ci_low, row.ci_high) == pytest.approx(wilson_interval(69, 99))
    assert row.p_value == pytest.approx(fisher_exact([[30, 69], [7, 93]]))
    assert row.difference == pytest.approx(69 / 99 - 0.93)
    md = to_markdown(t2)
    assert "| agent | P1 wins | P2 wins | no winner | games | P2 share [95% CI] |" in md
    assert "| mcts-co | 30 | 69 | 1 | 100 | 69.7% [60.0, 77.9] | 7 | 93 | 93% | -23.3 pp |" in md
    assert "No winner: games stopped at the 1,000-ply safety cap" in md


def test_pairwise_no_winner_column(no_winner_results):
    pw = _no_winner_tables(no_winner_results)["pairwise"]
    df = pw.data.set_index("pairing")
    row = df.loc["mcts-co vs heuristics"]
    assert (row.games, row.p1_wins, row.p2_wins, row.no_winner) == (50, 40, 9, 1)
    assert row.p1_rate == pytest.approx(40 / 49)
    assert (row.ci_low, row.ci_high) == pytest.approx(wilson_interval(40, 49))
    assert df.loc["heuristics vs mcts-co", "no_winner"] == 0
    assert df["no_winner"].sum() == 2
    md = to_markdown(pw)
    assert "| P1 wins | P2 wins | no winner | P1 rate [95% CI] | used |" in md
    assert "| mirror | 00000000000000aa | mcts-co vs mcts-co | 100 | — | 30 | 69 | 1 | 30.3% [" in md


def test_telemetry_leaves_no_winner_games_out_of_per_game_figures(no_winner_results):
    tel_table = _no_winner_tables(no_winner_results)["telemetry"]
    tel = tel_table.data.set_index("agent")
    co = tel.loc["mcts-co"]
    assert (co.games, co.no_winner) == (200, 2)  # the mirror games count once
    # Moves of the capped game count (500 of its 1000 plies are mcts-co's).
    assert co.moves == 49 * 15 + 500 + 50 * 20
    # Plies per game over the 198 decided games: 49 of 30, 50 of 40, 99 of 50 plies.
    decided = [30] * 49 + [40] * 50 + [50] * 99
    assert co.plies_median == pytest.approx(pd.Series(decided).median())
    assert co.plies_q25 == pytest.approx(pd.Series(decided).quantile(0.25))
    # Equivalent moves: 15 x 2 per side as P1 (49 decided games), 20 x 3 as P2 (50 games);
    # the capped game (500 x 2 = 1000) is left out.
    assert co.equivalent_moves_per_game == pytest.approx((49 * 30 + 50 * 60) / 99)
    # Candidates only where recorded: 15 x 5 per side, in the 49 decided mcts-co vs heuristics games.
    assert co.equivalent_candidates_per_game == pytest.approx(75.0)
    assert co.paper_equivalent_moves_per_game == 21352
    h = tel.loc["heuristics"]
    assert (h.games, h.no_winner) == (100, 1)
    assert h.plies_median == pytest.approx(pd.Series([30] * 49 + [40] * 50).median())
    md = to_markdown(tel_table)
    assert "| equivalent moves/game mean | equivalent candidates/game mean | paper |" in md
    assert md.count("21,352 |") == 1  # the paper's figure, once, beside both readings
    assert "Here 2 games had no winner" in md
    assert "tied candidates" in md and "docs/budget.md" in md


def test_game_length_uses_decided_games(no_winner_results):
    gl = _no_winner_tables(no_winner_results)["game_length"].data.set_index("file")
    row = gl.loc["full_vs_heuristics.txt"]
    assert (row.games, row.no_winner, row.plies_median) == (49, 1, 30)
    assert gl.loc["full_mirror.txt", "no_winner"] == 1
    assert gl.loc["full_mirror.txt", "plies_median"] == 50


def test_pairing_with_only_no_winner_games(tmp_path):
    records = games_for("mcts+E vs mcts+E", 0, 0, 2) + games_for("mcts-co vs mcts+E", 0, 0, 1)
    write_results(tmp_path / "r", records)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReportWarning)
        report = build_report([tmp_path / "r"], tmp_path / "out")
    row = report.tables["table2"].data.set_index("agent").loc["mcts+E"]
    assert (row.games, row.p1_wins, row.p2_wins, row.no_winner, row.status) == (2, 0, 0, 2, "partial (2/100)")
    assert pd.isna(row.p2_share) and pd.isna(row.p_value) and row.verdict == "—"
    t1 = report.tables["table1"].data.set_index("opponent").loc["mcts+E"]
    assert (t1.p1_games, t1.p1_no_winner, t1.status) == (0, 1, "partial (1/100)")
    assert pd.isna(t1.win_rate) and pd.isna(t1.p_value)
    assert "| mcts+E | 0 | 0 | 2 | 2 | — |" in to_markdown(report.tables["table2"])
    # No rate to draw: no Table I/II figure.
    assert not (tmp_path / "out" / "table1.png").exists() and not (tmp_path / "out" / "table2.png").exists()
    tel = report.tables["telemetry"].data.set_index("agent")
    assert pd.isna(tel.loc["mcts+E", "plies_median"]) and tel.loc["mcts+E", "no_winner"] == 3


def test_null_winner_without_termination_key_is_no_winner(tmp_path):
    old = make_record("vanilla vs vanilla", 1, None, termination=ABSENT)
    assert "termination" not in old
    write_results(tmp_path / "r", [make_record("vanilla vs vanilla", 0, "p2"), old])
    data = _load(tmp_path / "r")
    assert list(data.games["termination"]) == ["victory", "ply_limit"]
    row = build_tables(data)["table2"].data.set_index("agent").loc["vanilla"]
    assert (row.games, row.p1_wins, row.p2_wins, row.no_winner) == (2, 0, 1, 1)


def test_no_winner_rebuild_is_byte_identical(no_winner_results, tmp_path):
    dirs = [no_winner_results / "ablation", no_winner_results / "mirror"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReportWarning)
        one = build_report(dirs, tmp_path / "one")
        build_report(dirs, tmp_path / "two")
    names = {p.name for p in one.paths}
    assert names == EXPECTED_FILES | FIGURES
    for name in sorted(names):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name
    tex = (tmp_path / "one" / "table1.tex").read_text(encoding="ascii")  # still ASCII
    assert "RULES.md \\S{}7" in tex


# --------------------------------------------------------------------------- equivalent candidates


def test_telemetry_with_equivalent_candidates(tmp_path):
    records = games_for("mcts-co vs heuristics", 2, 1, plies=10, iterations=20, equivalent_moves=4,
                        equivalent_candidates=9)
    write_results(tmp_path / "r", records)
    tel = build_tables(_load(tmp_path / "r"))["telemetry"]
    co = tel.data.set_index("agent").loc["mcts-co"]
    assert co.equivalent_moves_per_game == pytest.approx(5 * 4)
    assert co.equivalent_candidates_per_game == pytest.approx(5 * 9)
    assert "| mcts-co | 3 | 15 | 20 [20–20] | 40 | 20 | 45 | 21,352 | 10 [10–10] |" in to_markdown(tel)


def test_telemetry_without_equivalent_candidates_is_nan(tmp_path):
    # Older records: no equivalent_candidates anywhere.
    records = games_for("mcts-co vs heuristics", 2, 1, plies=10, iterations=20, equivalent_moves=4)
    assert "equivalent_candidates" not in records[0]["telemetry"][0]
    write_results(tmp_path / "r", records)
    tel = build_tables(_load(tmp_path / "r"))["telemetry"]
    co = tel.data.set_index("agent").loc["mcts-co"]
    assert co.equivalent_moves_per_game == pytest.approx(20)
    assert pd.isna(co.equivalent_candidates_per_game)
    assert math.isnan(tel.data.set_index("agent").loc["mcts-co", "equivalent_candidates_per_game"])
    assert "| mcts-co | 3 | 15 | 20 [20–20] | 40 | 20 | — | 21,352 |" in to_markdown(tel)


def test_side_with_partly_missing_candidates_is_left_out(tmp_path):
    full = make_record("mcts-co vs heuristics", 0, "p1", plies=4, iterations=1, equivalent_moves=1,
                       equivalent_candidates=3)
    partial = make_record("mcts-co vs heuristics", 1, "p1", plies=4, iterations=1, equivalent_moves=1,
                          equivalent_candidates=100)
    del partial["telemetry"][0]["equivalent_candidates"]  # mcts-co's first ply (p1)
    write_results(tmp_path / "r", [full, partial])
    tel = build_tables(_load(tmp_path / "r"))["telemetry"].data.set_index("agent")
    assert tel.loc["mcts-co", "equivalent_candidates_per_game"] == pytest.approx(6)  # game 0 only
    assert tel.loc["heuristics", "equivalent_candidates_per_game"] == pytest.approx((6 + 200) / 2)
    assert tel.loc["mcts-co", "equivalent_moves_per_game"] == pytest.approx(2)


# --------------------------------------------------------------------------- reading rules


def test_duplicates_counted_once(tmp_path):
    records = games_for("mcts+E vs mcts+E", 3, 2)
    write_results(tmp_path / "a", records + records[:2])
    write_results(tmp_path / "b", records)  # same settings in another directory: the same games
    data = _load(tmp_path / "a", tmp_path / "b")
    assert len(data.games) == 5
    row = build_tables(data)["table2"].data.set_index("agent").loc["mcts+E"]
    assert (row.p1_wins, row.p2_wins) == (3, 2)


def test_mixed_settings_use_largest_group_and_warn(tmp_path):
    old = games_for("mcts-co vs mcts-co", 1, 2, config_hash="1111111111111111")
    new = games_for("mcts-co vs mcts-co", 4, 1, config_hash="2222222222222222")
    write_results(tmp_path / "m", old + new)
    with pytest.warns(ReportWarning, match="using config_hash 2222222222222222"):
        data = load_results([tmp_path / "m"])
    tables = build_tables(data)
    row = tables["table2"].data.set_index("agent").loc["mcts-co"]
    assert (row.games, row.p1_wins, row.p2_wins, row.config_hash) == (5, 4, 1, "2222222222222222")
    pw = tables["pairwise"].data.set_index("config_hash")
    assert pw.loc["1111111111111111", "selected"] == False  # noqa: E712 - numpy bool
    assert pw.loc["2222222222222222", "selected"] == True  # noqa: E712


def test_config_plan_defines_the_current_run(tmp_path):
    # An older run (more games) left its records behind; config.yaml now plans other settings.
    old = games_for("mcts+S vs mcts+S", 15, 5, config_hash="1111111111111111")
    new = games_for("mcts+S vs mcts+S", 2, 4, config_hash="2222222222222222")
    write_results(tmp_path / "m", old + new)
    write_plan(tmp_path / "m", [("mcts+S vs mcts+S", "2222222222222222", 10)])
    with pytest.warns(ReportWarning, match=r"20 games have settings not in the plan"):
        data = load_results([tmp_path / "m"])
    tables = build_tables(data)
    row = tables["table2"].data.set_index("agent").loc["mcts+S"]
    assert (row.games, row.p1_wins, row.p2_wins) == (6, 2, 4)
    pw = tables["pairwise"].data.set_index("config_hash")
    assert pw.loc["2222222222222222", "status"] == "partial (6/10)"
    assert pw.loc["2222222222222222", "planned"] == 10
    assert pw.loc["1111111111111111", "status"] == "not in plan"
    assert "Partial results" in to_markdown(tables["pairwise"])


def test_a_damaged_config_is_refused_not_replaced_by_every_game(tmp_path):
    """Counting every game when the plan cannot be read would silently mix settings (issue 20)."""
    write_results(tmp_path / "m", games_for("mcts+S vs mcts+S", 2, 4))
    (tmp_path / "m" / "config.yaml").write_text("plan: [unclosed\n")
    with pytest.raises(StoreError, match=r"config.yaml line 2, column 1: malformed YAML: expected ',' or ']'"):
        load_results([tmp_path / "m"])


def test_truncated_last_line_warns_and_is_skipped(tmp_path):
    write_results(tmp_path / "r", games_for("vanilla vs vanilla", 2, 1), tail='{"experiment": "x", "conf')
    with pytest.warns(ReportWarning, match=r"games.jsonl line 4: truncated last line"):
        data = load_results([tmp_path / "r"])
    assert len(data.games) == 3


def test_invalid_middle_line_is_an_error(tmp_path):
    path = write_results(tmp_path / "r", games_for("vanilla vs vanilla", 2, 1))
    lines = path.read_text().splitlines(keepends=True)
    lines.insert(1, '{"broken": \n')
    path.write_text("".join(lines))
    with pytest.raises(StoreError, match=r"games.jsonl line 2: not valid JSON"):
        load_results([tmp_path / "r"])


@pytest.mark.parametrize(
    ("change", "message"),
    [({"winner": "draw"}, "winner = 'draw' is not 'p1', 'p2' or null"), ({"winner": "P1"}, "winner = 'P1'"),
     ({"winner": 0}, "winner = 0"), ({"game_index": -1}, "game_index = -1"), ({"pairing": "solo"}, "pairing = 'solo'")],
)
def test_bad_record_is_an_error(tmp_path, change, message):
    bad = make_record("vanilla vs vanilla", 9, "p1") | change
    write_results(tmp_path / "r",
                  games_for("vanilla vs vanilla", 1, 1) + [bad, make_record("vanilla vs vanilla", 5, "p2")])
    with pytest.raises(StoreError, match=rf"games.jsonl line 3: invalid game record \({message}"):
        load_results([tmp_path / "r"])


def test_missing_key_is_an_error(tmp_path):
    bad = make_record("vanilla vs vanilla", 9, "p1")
    del bad["config_hash"]
    write_results(tmp_path / "r", [bad])
    with pytest.raises(StoreError, match=r"games.jsonl line 1: invalid game record \(config_hash = None is not a non"):
        load_results([tmp_path / "r"])


def test_missing_directories(tmp_path):
    with pytest.raises(ConfigError, match="nowhere"):
        load_results([tmp_path / "nowhere"])
    write_results(tmp_path / "here", games_for("vanilla vs vanilla", 1, 0))
    with pytest.warns(ReportWarning, match="nowhere"):
        data = load_results([tmp_path / "nowhere", tmp_path / "here"])
    assert len(data.games) == 1


# --------------------------------------------------------------------------- the paper's own games


@pytest.fixture(scope="module")
def paper_dirs(tmp_path_factory):
    path = paper_games_path()
    if not path.is_file():
        pytest.skip(f"paper games not found at {path} (set BOOP_PAPER_GAMES)")
    root = tmp_path_factory.mktemp("paper")
    for name, records in paper_records(path).items():
        write_results(root / name, records)
    return root


def test_paper_games_reproduce_table1(paper_dirs):
    t1 = build_tables(_load(paper_dirs / "ablation", paper_dirs / "mirror"))["table1"].data
    ref = table1_reference()
    for row in t1.itertuples():
        paper = ref[row.opponent]
        assert (row.p1_wins, row.p1_games, row.p2_wins, row.p2_games) == (paper.p1_wins, 50, paper.p2_wins, 50)
        assert row.win_rate == pytest.approx(next(
            r["win_rate"] for r in paper_data()["table1"]["rows"] if r["opponent"] == row.opponent))
        assert (row.status, row.verdict, row.p_value) == ("complete", "consistent", 1.0)
    assert len(t1) == 8


def test_paper_games_reproduce_table2(paper_dirs):
    t2 = build_tables(_load(paper_dirs / "ablation", paper_dirs / "mirror"))["table2"].data
    expected = {r["agent"]: (r["p1_wins"], r["p2_wins"]) for r in paper_data()["table2"]["rows"]}
    assert {r.agent: (r.p1_wins, r.p2_wins) for r in t2.itertuples()} == expected
    assert set(t2["verdict"]) == {"consistent"}
    assert set(t2["games"]) == {100}


def test_package_data_matches_paper_games_per_file():
    path = paper_games_path()
    if not path.is_file():
        pytest.skip(f"paper games not found at {path}")
    games = pd.read_csv(path)
    tally = games.groupby("file")["winner_colour"].value_counts().unstack(fill_value=0)
    for f in paper_data()["files"]:
        assert (tally.loc[f["file"], "Blue"], tally.loc[f["file"], "Red"]) == (f["blue_wins"], f["red_wins"])
        assert games.loc[games["file"] == f["file"], "pairing"].iloc[0] == f["pairing"]
    assert {d["file"] for d in paper_data()["durations"]} == set(tally.index)


# --------------------------------------------------------------------------- files and figures


def test_build_writes_all_files_and_rebuild_is_byte_identical(synthetic, tmp_path):
    dirs = [synthetic / "ablation", synthetic / "mirror"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReportWarning)
        one = build_report(dirs, tmp_path / "one")
        build_report(dirs, tmp_path / "two")
    names = {p.name for p in one.paths}
    assert names == EXPECTED_FILES | FIGURES
    assert {p.name for p in (tmp_path / "one").iterdir()} == names
    for name in sorted(names):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name


def test_figures_open(synthetic, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReportWarning)
        build_report([synthetic / "ablation", synthetic / "mirror"], tmp_path / "out")
    for stem in ("table1", "table2", "iterations"):
        image = mpimg.imread(tmp_path / "out" / f"{stem}.png")
        assert image.shape[:2] == (450, 700)
        assert image[..., :3].std() > 0.01  # something was drawn
        svg = (tmp_path / "out" / f"{stem}.svg").read_text()
        assert svg.lstrip().startswith("<?xml") and "</svg>" in svg and "<dc:date>" not in svg


def test_a_figure_whose_layout_moves_by_an_ulp_is_written_with_the_same_bytes(tmp_path):
    # Where a CPU's BLAS kernel moves a bootstrap's ratings by an ulp, the constrained layout moves
    # the axes by an ulp: matplotlib hashed the clip rectangle's floats into the SVG's ids (a fresh
    # machine's results/knowledge/ladder.svg differed in those ids only, nothing drawn).
    from boopexp.analysis import figures

    for name, nudge in (("one", 0.0), ("two", 1e-15)):
        with figures.styled_axes() as (fig, ax):
            ax.errorbar([0.2, 0.7], [0, 1], xerr=[[0.1, 0.1], [0.1, 0.2]], fmt="o", capsize=3)
            ax.set_position([0.125 + nudge, 0.11, 0.775, 0.77])
        (tmp_path / name).mkdir()
        figures.save(fig, tmp_path / name, "f")
    svg = (tmp_path / "one" / "f.svg").read_text()
    assert 'clip-path="url(#p' in svg and 'xlink:href="#m' in svg  # ids there, used and defined
    assert svg == (tmp_path / "two" / "f.svg").read_text()
    assert (tmp_path / "one" / "f.png").read_bytes() == (tmp_path / "two" / "f.png").read_bytes()


def test_empty_results_build_without_figures(tmp_path):
    write_results(tmp_path / "r", [])
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "table1.png").write_bytes(b"stale")
    report = build_report([tmp_path / "r"], tmp_path / "out")
    assert {p.name for p in report.paths} == EXPECTED_FILES
    assert not (tmp_path / "out" / "table1.png").exists()
    md = (tmp_path / "out" / "table1.md").read_text()
    assert "No Table I pairing" in md and "(no rows)" in md
    assert set(report.tables["table1"].data["status"]) == {"not run"}


def test_latex_is_ascii_booktabs(synthetic, tmp_path):
    tables = build_tables(_load(synthetic / "ablation", synthetic / "mirror"))
    tex = latex_document([tables["telemetry"], tables["game_length"], tables["table1"]])
    tex.encode("ascii")  # raises if a symbol was not mapped
    assert tex.count("\\begin{table}") == tex.count("\\end{table}") == 3
    assert "\\toprule" in tex and "\\bottomrule" in tex
    assert "plies $\\approx$ 2$\\times$s" in tex
    assert "95\\% CI" in tex


def test_csv_round_trips(synthetic, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReportWarning)
        build_report([synthetic / "ablation", synthetic / "mirror"], tmp_path / "out")
    t1 = pd.read_csv(tmp_path / "out" / "table1.csv").set_index("opponent")
    assert t1.loc["vanilla", "p1_wins"] == 30 and t1.loc["mcts+EP", "status"] == "not run"
    assert json.loads(json.dumps(t1.loc["vanilla", "p_value"])) < 0.05
