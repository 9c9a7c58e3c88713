"""Boschloo's exact test where n is large (issue 22): above stats.BOSCHLOO_MAX_TABLES tables the
tables and claims show Fisher's bound of it instead, and say so; below, Boschloo's p as before."""

from __future__ import annotations

import math
import warnings

import pandas as pd
import pytest
from report_fixtures import games_for, write_results
from scipy.stats import boschloo_exact as scipy_boschloo
from scipy.stats import fisher_exact as scipy_fisher

from boopexp.analysis import ReportWarning, build_tables, load_results
from boopexp.analysis.render import to_markdown
from boopexp.analysis.stats import (
    BOSCHLOO_MAX_TABLES,
    boschloo_bound,
    boschloo_exact,
    boschloo_or_bound,
    boschloo_within_reach,
    fisher_exact,
)
from boopexp.studies import claims as cl
from boopexp.studies.robustness import analysis as rb
from boopexp.studies.robustness import report as rr

#: Our games in a row just above the threshold against the paper's 100: 2,476 x 101 tables.
ABOVE = 2475
BOUND_NOTE = "not Boschloo's test"


def test_the_threshold_in_tables():
    assert BOSCHLOO_MAX_TABLES == 250_000
    assert boschloo_within_reach(2474, 100) and not boschloo_within_reach(ABOVE, 100)
    assert boschloo_within_reach(499, 499) and not boschloo_within_reach(500, 499)
    # every committed table stays exact: the study's C7b mirrors, Tables I and II (100 against 100)
    assert boschloo_within_reach(389, 395) and boschloo_within_reach(392, 390) and boschloo_within_reach(100, 100)


@pytest.mark.parametrize("table", [[[93, 7], [82, 17]], [[19, 79], [7, 93]], [[32, 68], [46, 54]], [[5, 0], [1, 4]]])
def test_the_bound_is_fishers_one_sided_p_and_bounds_boschloo(table):
    (a, b), (c, d) = table
    less, greater = (scipy_fisher(table, alternative=alt).pvalue for alt in ("less", "greater"))
    assert boschloo_bound(table) == pytest.approx(min(1.0, 2 * min(less, greater)), rel=1e-12)
    assert boschloo_bound(table, "greater") == pytest.approx(greater, rel=1e-12)
    assert boschloo_exact(table) <= boschloo_bound(table) + 1e-12
    columns = [[a, c], [b, d]]  # scipy's samples are columns
    for alt in ("less", "greater"):
        assert scipy_boschloo(columns, alternative=alt).pvalue <= boschloo_bound(table, alt) + 1e-12


def test_boschloo_or_bound_switches_at_the_threshold(monkeypatch):
    table = [[80, 20], [90, 10]]
    assert boschloo_or_bound(table) == boschloo_exact(table)
    monkeypatch.setattr("boopexp.analysis.stats.BOSCHLOO_MAX_TABLES", 101 * 101 - 1)
    assert boschloo_or_bound(table) == boschloo_bound(table) != boschloo_exact(table)


def _tables(tmp_path, ablation, mirror):
    write_results(tmp_path / "ablation", ablation)
    write_results(tmp_path / "mirror", mirror)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReportWarning)
        return build_tables(load_results([tmp_path / "ablation", tmp_path / "mirror"]))


def test_tables_show_the_bound_above_the_threshold_and_say_so(tmp_path):
    """vanilla: 2,475 decided games against the paper's 100 (above); heuristics: 100 (below)."""
    tables = _tables(
        tmp_path,
        games_for("mcts-co vs vanilla", 1100, 138, experiment="ablation")
        + games_for("vanilla vs mcts-co", 37, 1200, experiment="ablation")
        + games_for("mcts-co vs heuristics", 45, 5, experiment="ablation")
        + games_for("heuristics vs mcts-co", 2, 48, experiment="ablation"),
        games_for("mcts-co vs mcts-co", 300, ABOVE - 300, experiment="mirror")
        + games_for("mcts+P vs mcts+P", 20, 80, experiment="mirror"),
    )
    t1 = tables["table1"].data.set_index("opponent")
    van, heu = t1.loc["vanilla"], t1.loc["heuristics"]
    assert van.games == ABOVE
    assert van.p_value_boschloo == boschloo_bound([[2300, 175], [96, 4]])
    assert heu.p_value_boschloo == boschloo_exact([[93, 7], [80, 20]])  # the paper: 30/50 and 50/50
    t2 = tables["table2"].data.set_index("agent")
    assert t2.loc["mcts-co"].p_value_boschloo == boschloo_bound([[300, ABOVE - 300], [7, 93]])
    assert t2.loc["mcts+P"].p_value_boschloo == boschloo_exact([[20, 80], [14, 86]])
    for name, row in (("table1", "vanilla"), ("table2", "mcts-co")):
        notes = [n for n in tables[name].notes if BOUND_NOTE in n]
        assert notes == [f"p (Boschloo) for {row}: not Boschloo's test, which sums over every 2x2 table of the two "
                         "samples' sizes, (n1 + 1)(n2 + 1) of them, more than 250,000 here (minutes to hours of "
                         "computing); shown instead is twice the smaller one-sided Fisher p, an upper bound of "
                         "Boschloo's two-sided p (below 0.05, Boschloo's p is too; above, it may not be). They are "
                         "left out of the comparison of Fisher and Boschloo."], name
        assert notes[0] in to_markdown(tables[name])


def test_tables_below_the_threshold_have_no_bound_note(tmp_path):
    tables = _tables(tmp_path, games_for("mcts-co vs vanilla", 45, 5, experiment="ablation"),
                     games_for("mcts-co vs mcts-co", 19, 79, experiment="mirror"))
    assert tables["table2"].data.set_index("agent").loc["mcts-co"].p_value_boschloo == boschloo_exact(
        [[19, 79], [7, 93]])
    for name in ("table1", "table2"):
        assert not any(BOUND_NOTE in n for n in tables[name].notes)


def test_a_bounded_row_is_not_called_a_disagreement(tmp_path):
    """2,446 of 2,476 against the paper's 96 of 100: Fisher's p is below 0.05, the bound above it;
    that does not say Boschloo's p is above it (it is at most the bound), so no disagreement is named."""
    tables = _tables(tmp_path, games_for("mcts-co vs vanilla", 1223, 15, experiment="ablation")
                     + games_for("vanilla vs mcts-co", 15, 1223, experiment="ablation"),
                     games_for("mcts+P vs mcts+P", 20, 80, experiment="mirror"))
    van = tables["table1"].data.set_index("opponent").loc["vanilla"]
    assert (van.wins, van.games) == (2446, 2476)
    assert van.p_value < 0.05 < van.p_value_boschloo
    assert not any("disagree" in n for n in tables["table1"].notes)


def test_claims_switch_to_fishers_one_sided_test_above_the_threshold():
    below = cl.share_greater("C7b", "x", (60, 100), (45, 100), 0)
    assert below.p_value == pytest.approx(scipy_boschloo([[60, 45], [40, 55]], alternative="greater").pvalue)
    assert "Boschloo exact one-sided (Fisher one-sided p = " in below.test
    above = cl.share_greater("C7b", "x", (300, 500), (280, 500), 0)
    assert above.p_value == scipy_fisher([[300, 280], [200, 220]], alternative="greater").pvalue
    assert above.p_contra == scipy_fisher([[300, 280], [200, 220]], alternative="less").pvalue
    assert above.test == ("x: 300/500 vs 280/500, Fisher exact one-sided, an upper bound of Boschloo's p (Boschloo's "
                          "test not computed: 251,001 tables, more than 250,000)")


def _mirror(agent: str, p2_wins: int, games: int) -> list[tuple]:
    return [(f"{agent} vs {agent}", agent, agent, "p2" if i < p2_wins else "p1", 1.0) for i in range(games)]


@pytest.mark.parametrize("games", [400, ABOVE])
def test_the_mirror_cell_shows_the_bound_above_the_threshold(games):
    bias = pd.DataFrame(_mirror("mcts-co", games * 4 // 5, games), columns=["pairing", "p1", "p2", "winner", "point"])
    table = rr.mirror_cell(rb.StudyGames(stores={"d4-bias": bias}))
    assert table is not None
    cells = [[games * 4 // 5, games - games * 4 // 5], [93, 7]]
    expected = boschloo_exact(cells) if games == 400 else boschloo_bound(cells)
    assert table.data["p_boschloo"].iloc[0] == expected
    assert table.data["p_fisher"].iloc[0] == fisher_exact(cells)
    assert any(BOUND_NOTE in n for n in table.notes) == (games == ABOVE)
    assert not math.isnan(expected)
