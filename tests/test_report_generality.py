"""The generality study's analysis (docs/generality-plan.md §3–§6) on synthetic stores.

Every outcome below is known by construction: pair counts chosen so that each claim must come out
supported, contradicted or not supported on each game, and the stores written as ``boopexp run``
writes them (a config.yaml with the plan's settings, one record a game; the costs stores' sweep
of ``budget.costs.solver_move``) so the command reads them as it will read the study's. No game is
played.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from study_helpers import Cell, write_paired_store

from boopexp.interfaces.cli import main
from boopexp.studies import pairs as pr
from boopexp.studies.generality import analysis as ga
from boopexp.studies.generality import report as gr

STRONG, WEAK, EVEN = (50, 40, 10, 0), (10, 40, 50, 0), (10, 80, 10, 0)
#: mcts-co against vanilla, stronger the larger the game's move space (G2 supported)
CO_VANILLA = {"connect-four": (30, 60, 10, 0), "boop": (50, 45, 5, 0), "colosseum": (70, 29, 1, 0),
              "pentago-swap": (90, 10, 0, 0)}
MOVE_SPACE = {"connect-four": 7.0, "boop": 40.0, "colosseum": 110.0, "pentago-swap": 200.0}


def _item(game: str):
    base = ga.calibrated_solver_move(game)

    def item(agent: str, budget: float, charge: float) -> dict:
        return {} if charge == 1.0 else {"extra": {"sweep": {ga.SWEPT_COST: charge * base}}}

    return item


def write_store(root: Path, store: str, cells: list[Cell], **kwargs) -> Path:
    return write_paired_store(root, f"generality-{store}", store, cells, item=_item(ga.game_of(store)), **kwargs)


def claims_cells(game: str) -> list[Cell]:
    cells: list[Cell] = [("mcts-co", "vanilla", 1.0, 1.0, CO_VANILLA[game])]
    for x in ga.ABLATIONS:
        # pentago-swap: mcts+SE beats mcts-co (G3a contradicted there)
        cells.append(("mcts-co", x, 1.0, 1.0, WEAK if (game, x) == ("pentago-swap", "mcts+SE") else STRONG))
    for a, b in ga.KEYSTONE:
        # connect-four: E neither helps nor needs a partner (G3b not supported there)
        cells.append((a, b, 1.0, 1.0, EVEN if game == "connect-four" else STRONG))
    cells.append(("alphabeta", "mcts-co", 1.0, 1.0, STRONG))
    return cells


def synthetic_study(root: Path) -> Path:
    """Sixteen stores with known verdicts: G1 supported everywhere; G2 supported (the gain grows
    with the move space); G3a contradicted on pentago-swap; G3b not supported on connect-four;
    G4 supported, cost-dependent on boop (alpha-beta beaten at solver costs ×2)."""
    for g in ga.GAMES:
        write_store(root, ga.store(g, "claims"), claims_cells(g), swept=False)
        write_store(root, ga.store(g, "budgets"), [(a, b, t, 1.0, STRONG) for t in (0.25, 4.0)
                                                   for a, b in (("mcts-co", "vanilla"), ("alphabeta", "mcts-co"))])
        write_store(root, ga.store(g, "costs"), [
            (a, b, 1.0, s, WEAK if (g, a, s) == ("boop", "alphabeta", 2.0) else STRONG)
            for s in (0.5, 2.0) for a, b in (("mcts-co", "vanilla"), ("alphabeta", "mcts-co"))])
        write_store(root, ga.store(g, "mirror"), [], swept=False, mirrors=[("mcts-co", 60, 38, 2),
                                                                           ("vanilla", 50, 50, 0)])
    return root


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> tuple[Path, gr.GeneralityReport]:
    root = synthetic_study(tmp_path_factory.mktemp("generality") / "results" / "generality")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ga, "MOVE_SPACE", MOVE_SPACE)
        report = gr.analyse(ga.load_study(root), resamples=200)
    return root, report


def _verdicts(report: gr.GeneralityReport) -> dict[tuple[str, str], str]:
    data = report.table("verdicts").data
    return {(c, k): v for c, k, v in zip(data["claim"], data["condition"], data["verdict"])}


def test_the_cost_scale_is_read_from_the_sweep_of_the_games_solver_move(synthetic):
    root, _ = synthetic
    study = ga.load_study(root)
    scales = study.games.groupby("store")["charge"].unique()
    for g in ga.GAMES:
        assert sorted(scales[ga.store(g, "costs")]) == [0.5, 2.0]
        assert list(scales[ga.store(g, "claims")]) == [1.0]
    assert ga.game_of("connect-four-claims") == "connect-four" and ga.game_of("boop-costs") == "boop"


def test_synthetic_study_verdicts_per_game(synthetic):
    _, report = synthetic
    verdicts = _verdicts(report)
    for g in ga.GAMES:
        family = ga.game_condition(g)
        assert verdicts[("G1", family)] == "supported", g
        assert verdicts[("G4", family)] == "supported", g
        assert verdicts[("G3a", family)] == ("contradicted" if g == "pentago-swap" else "supported"), g
        assert verdicts[("G3b", family)] == ("not supported" if g == "connect-four" else "supported"), g
        for t in ("0.25", "4"):
            assert verdicts[("G1", f"game={g}, budget={t}")] == "supported"
        assert verdicts[("G4", f"game={g}, costs=×2")] == ("contradicted" if g == "boop" else "supported")
        assert verdicts[("G1", f"game={g}, across costs")] == "robust"
        assert verdicts[("G4", f"game={g}, across costs")] == ("cost-dependent" if g == "boop" else "robust")
    assert not [n for n in report.notes if "PARTIAL" in n or "not tested" in n]


def test_synthetic_study_verdicts_on_every_game(synthetic):
    _, report = synthetic
    verdicts = _verdicts(report)
    # G3b: connect-four's four even components make it "not supported" there, but on every game
    # the negligible p is the smallest component's × 16 (Bonferroni inside the conjunction), then
    # Holm over five claims: 0.0007 × 16 × 5 > 0.05, so "inconclusive" on every game
    assert {c: v for (c, k), v in verdicts.items() if k == ga.ALL_GAMES} == {
        "G1": "supported", "G2": "supported", "G3a": "contradicted", "G3b": "inconclusive", "G4": "supported"}
    games = report.table("games").data.set_index("claim")
    assert games.loc["G3a", "pentago-swap"] == "contradicted" and games.loc["G3a", "boop"] == "supported"
    assert games.loc["G3b", "connect-four"] == "not supported"
    assert games.loc["G2", ga.ALL_GAMES] == "supported" and games.loc["G2", "boop"] == ""
    # the families: 5 claims on every game, 4 per game, 2 per budget and per cost scale
    data = report.table("verdicts").data
    sizes = dict(zip(data["condition"], data["family_size"]))
    assert sizes[ga.ALL_GAMES] == 5 and sizes["game=boop"] == 4 and sizes["game=boop, budget=4"] == 2
    assert sizes["game=colosseum, costs=×0.5"] == 2


def test_the_conjunction_on_every_game_takes_every_games_components(synthetic):
    _, report = synthetic
    tests = {(t.claim, t.condition): t for t in report.judgement.tests}
    every = tests[("G3a", ga.ALL_GAMES)]
    assert len(every.parts) == 6 * len(ga.GAMES)
    assert {c.store for c, _, _ in every.parts} == {ga.store(g, "claims") for g in ga.GAMES}
    # the deciding component is the largest primary p: pentago-swap's mcts+SE, which beats mcts-co
    decider = every.parts[every.deciding][0]
    assert (decider.store, decider.b) == ("pentago-swap-claims", "mcts+SE")
    assert every.outcome.p_value == max(o.p_value for _, _, o in every.parts)


def test_g2_is_the_least_squares_slope_of_the_gains_on_log2_move_space(synthetic):
    _, report = synthetic
    gains = {g.game: g for g in report.gains}
    assert list(gains) == list(ga.GAMES)
    x = np.log2([MOVE_SPACE[g] for g in ga.GAMES])
    y = np.array([gains[g].elo for g in ga.GAMES])
    assert report.slope is not None
    assert report.slope.estimate == pytest.approx(np.polyfit(x, y, 1)[0])
    # each game's gain is mcts-co's rating on its 1 s ladder, vanilla the anchor
    ladder = report.table("ladder").data
    for g in ga.GAMES:
        row = ladder[(ladder["game"] == g) & (ladder["budget"] == 1.0) & (ladder["agent"] == "mcts-co")]
        assert float(row["elo"].iloc[0]) == pytest.approx(gains[g].elo)
    assert [gains[g].elo for g in ga.GAMES] == sorted(gains[g].elo for g in ga.GAMES)
    # the slope's draws are resample r of every game together
    draws = ga.ols_slope(x, np.stack([gains[g].draws for g in ga.GAMES], axis=1))
    assert report.slope.p_value == pytest.approx(float(np.mean(draws <= 0)), abs=1 / 200)


def test_a_slope_against_the_move_space_is_contradicted():
    flat = np.zeros(200)
    gains = [ga.Gain(g, MOVE_SPACE[g], 400.0 - 60 * i, 0, 0, 400.0 - 60 * i + flat + np.linspace(-5, 5, 200), 100, 0)
             for i, g in enumerate(ga.GAMES)]
    out = ga.gain_slope(gains)
    assert out.estimate < 0 and out.p_contra < 0.01
    assert out.claim == "G2" and "per doubling" in out.test


def test_the_ladders_per_game_and_budget(synthetic):
    _, report = synthetic
    assert [(lad.label, lad.budget) for lad in report.ladders] == [(g, t) for g in ga.GAMES for t in ga.BUDGETS]
    one = next(lad for lad in report.ladders if (lad.label, lad.budget) == ("boop", 1.0))
    assert set(one.boot.agents) == set(ga.AGENTS)
    four = next(lad for lad in report.ladders if (lad.label, lad.budget) == ("boop", 4.0))
    assert set(four.boot.agents) == {"mcts-co", "vanilla", "alphabeta"}


def test_the_first_mover_table(synthetic):
    _, report = synthetic
    rows = report.table("first-move").data
    assert len(rows) == 2 * len(ga.GAMES)
    co = rows[(rows["game"] == "boop") & (rows["agent"] == "mcts-co")].iloc[0]
    assert (co["first_wins"], co["second_wins"], co["no_winner"]) == (60, 38, 2)
    assert co["share"] == pytest.approx(60 / 98)
    from scipy.stats import binomtest

    assert co["p_two_sided"] == pytest.approx(binomtest(60, 98, 0.5).pvalue)


def test_the_command_writes_every_file_and_rebuilds_byte_for_byte(synthetic, tmp_path, monkeypatch):
    root, _ = synthetic
    monkeypatch.setattr(ga, "MOVE_SPACE", MOVE_SPACE)
    monkeypatch.setattr(ga, "RESAMPLES", 100)
    runner = CliRunner()
    first, second = tmp_path / "a", tmp_path / "b"
    for out in (first, second):
        result = runner.invoke(main, ["generality", str(root), "--out", str(out)])
        assert result.exit_code == 0, result.output
    assert "claim tests:" in result.output and "PARTIAL" not in result.output
    names = sorted(p.name for p in first.iterdir())
    assert names == sorted([f"{n}.csv" for n in gr.OUTPUT_CSV] + ["generality-tables.md"]
                           + [f"{s}.{ext}" for s in gr.FIGURES for ext in ("png", "svg")])
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    # the pair counts print as whole numbers beside G2's row, which has none
    tables = (first / "generality-tables.md").read_text(encoding="utf-8")
    assert "| G2 |" in tables and not re.search(r"\| \d+\.0/\d+\.0/\d+\.0 \|", tables)
    assert re.search(r"\| \d+/\d+/\d+ \|", tables)


def test_a_partial_study_is_labelled(tmp_path):
    root = tmp_path / "generality"
    write_store(root, "boop-claims", claims_cells("boop"), swept=False, planned_extra=1)
    report = gr.analyse(ga.load_study(root), resamples=50)
    assert any(n.startswith("PARTIAL ANALYSIS: stores without games") for n in report.notes)
    assert any("boop-claims is incomplete" in n for n in report.notes)
    assert any(n.startswith("G2 at all games not tested") for n in report.notes)
    verdicts = _verdicts(report)
    assert ("G1", "game=boop") in verdicts and ("G1", ga.ALL_GAMES) not in verdicts
    assert report.table("games").data.set_index("claim").loc["G1", "colosseum"] == "not tested"


def test_a_folder_without_the_stores_is_refused_and_nothing_is_written(tmp_path):
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(main, ["generality", str(tmp_path / "empty")])
    assert result.exit_code != 0
    assert "is not the generality study's folder" in result.output
    assert list((tmp_path / "empty").iterdir()) == []


def test_another_experiment_under_a_store_name_is_refused(tmp_path):
    folder = write_paired_store(tmp_path, "generality-boop-costs", "boop-claims",
                                [("mcts-co", "vanilla", 1.0, 1.0, (1, 1, 1, 0))])
    result = CliRunner().invoke(main, ["generality", str(tmp_path)])
    assert result.exit_code != 0 and "not the generality study's store boop-claims" in result.output
    assert "configs/generality/boop-claims.yaml" in result.output
    assert folder.exists()


def test_every_family_names_its_components_store_of_its_own_game():
    for condition, claims in ga.families():
        for claim, components in claims:
            if condition.startswith("game="):
                game = condition.split(",")[0].removeprefix("game=")
                assert {ga.game_of(c.store) for c in components} == {game}, (condition, claim)
            assert all(isinstance(c, pr.Component) for c in components)
            # the deciding component is found by its name: names are unique within a claim
            assert len({c.name for c in components}) == len(components), (condition, claim)
    assert math.isclose(ga.calibrated_solver_move("boop"), 7.4)
