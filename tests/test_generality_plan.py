"""docs/generality-plan.md: its power numbers and game counts are what studies/generality_power.py
computes, the configs it names plan those games, and the plan was committed before the first game
of results/generality/ (as tests/test_knowledge_plan.py holds the knowledge plan)."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import pytest
from study_helpers import assert_plan_precedes_games

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "studies"))

import generality_power as gp  # noqa: E402

from boopexp.studies.generality import analysis as ga  # noqa: E402

PLAN = (ROOT / "docs" / "generality-plan.md").read_text(encoding="utf-8")


def test_the_plan_was_committed_before_the_first_game_of_the_study() -> None:
    """The plan's first commit is an ancestor of every commit that added a file under
    results/generality/ (games or outputs), and none was added in the plan's own commit."""
    assert_plan_precedes_games(ROOT, "docs/generality-plan.md", "results/generality")


def test_the_power_numbers_quoted_in_the_plan() -> None:
    # docs/generality-plan.md §8 quotes these; a change here must change the plan (as a deviation)
    g = gp.ALPHA_GAME
    quotes = {
        "power **0.97** at s = 0.65": gp.power_sign_test(100, 0.65, alpha=g),
        "**0.67** at s = 0.60 at": gp.power_sign_test(100, 0.60, alpha=g),
        "0.99 and 0.86 at α = 0.05": gp.power_sign_test(100, 0.65),
        "G3a (6 components) **0.85**": gp.power_sign_test(100, 0.65, alpha=g) ** 6,
        "G3b (4)\n  **0.89**": gp.power_sign_test(100, 0.65, alpha=g) ** 4,
        "G1, G4\n  **0.87**": gp.power_sign_test(100, 0.65, alpha=gp.ALPHA_ALL) ** 4,
        "**0.97** at s = 0.70": gp.power_sign_test(50, 0.70, alpha=0.025),
    }
    for text, value in quotes.items():
        assert text in PLAN, text
        assert f"{value:.2f}" in re.findall(r"[01]\.\d\d", text), (text, value)
    assert f"{gp.power_sign_test(100, 0.60):.2f}" == "0.86"
    assert f"{gp.power_sign_test(50, 0.80, alpha=0.025):.2f}" == "1.00"
    assert gp.detectable_score(100, alpha=g) == pytest.approx(0.615) and "**0.615**" in PLAN
    assert gp.detectable_score(100) == pytest.approx(0.595)
    assert gp.detectable_score(50, alpha=g) == pytest.approx(0.665) and "0.665" in PLAN
    assert f"needs **{gp.pairs_needed_normal(0.65)}** pairs" in PLAN
    for name, score in gp.BOOP_EFFECTS.items():
        assert f"**{score:.3f}**" in PLAN, name


def test_the_plan_quotes_the_measured_move_spaces_and_g2s_power() -> None:
    assert gp.MOVE_SPACE is ga.MOVE_SPACE and gp.GAMES == ga.GAMES  # one home: the analysis's
    assert all(not math.isnan(v) and v > 1 for v in gp.MOVE_SPACE.values()), "measure them: --move-space"
    for game, value in gp.MOVE_SPACE.items():
        row = next(line for line in PLAN.splitlines() if line.startswith(f"| `{game}` |"))
        assert row.rstrip().endswith(f"| {value:.1f} |"), row
    assert f"is {gp.slope_se(gp.MOVE_SPACE):.1f}\n  Elo per doubling" in PLAN
    assert f"a slope of **{gp.detectable_slope(gp.MOVE_SPACE):.0f}** Elo per doubling" in PLAN


def test_the_plan_states_the_game_counts_the_script_computes() -> None:
    assert gp.total_games() == 13_600 and gp.total_games() >= 12_000
    assert f"**{gp.total_games():,}**" in PLAN
    for design in gp.DESIGNS:
        row = next(line for line in PLAN.splitlines() if f"`{Path(design.config).name}`" in line and "|" in line)
        assert row.rstrip().endswith(f"| {design.games:,} |"), row
    assert {Path(d.config).stem for d in gp.DESIGNS} == {f"{g}-{r}" for g in gp.GAMES
                                                         for r in ("claims", "budgets", "costs", "mirror")}


@pytest.mark.parametrize("design", gp.DESIGNS, ids=lambda d: Path(d.config).stem)
def test_each_config_plans_the_games_the_plan_counts(design: gp.Design) -> None:
    from boopexp.experiments.config import load_config

    config = load_config(ROOT / design.config)
    assert sum(p.games for p in config.plan()) == design.games
    assert config.settings.seed == 2028
    assert config.name == f"generality-{Path(design.config).stem}"
    assert config.settings.game == Path(design.config).stem.rsplit("-", 1)[0]


def _pairings(stem: str) -> list[tuple[str, str]]:
    import yaml

    doc = yaml.safe_load((ROOT / "configs" / "generality" / f"{stem}.yaml").read_text(encoding="utf-8"))
    return [tuple(p) for p in doc["pairings"]]


CLAIMS = {("mcts-co", "vanilla"), *(("mcts-co", x) for x in ("mcts+S", "mcts+E", "mcts+P", "mcts+SE", "mcts+SP",
                                                                "mcts+EP")),
          ("mcts+SE", "mcts+S"), ("mcts+EP", "mcts+P"), ("mcts+SE", "mcts+E"), ("mcts+EP", "mcts+E"),
          ("alphabeta", "mcts-co")}


@pytest.mark.parametrize("game", gp.GAMES)
def test_each_game_plays_the_planned_pairings(game: str) -> None:
    import yaml

    from boopexp.agents.budget import Budget
    from boopexp.games.registry import get

    assert set(_pairings(f"{game}-claims")) == CLAIMS and len(CLAIMS) == gp.CLAIM_PAIRINGS
    sensitivity = {("mcts-co", "vanilla"), ("alphabeta", "mcts-co")}
    assert set(_pairings(f"{game}-budgets")) == set(_pairings(f"{game}-costs")) == sensitivity
    assert set(_pairings(f"{game}-mirror")) == {("mcts-co", "mcts-co"), ("vanilla", "vanilla")}
    docs = {r: yaml.safe_load((ROOT / "configs" / "generality" / f"{game}-{r}.yaml").read_text(encoding="utf-8"))
            for r in ("budgets", "costs")}
    assert docs["budgets"]["sweep"] == {"budget.seconds": [0.25, 4]}
    # the game's own solver_move x0.5 and x2, not budget.costs.solver_scale (which scales boop.'s)
    base = Budget().device_profile(get(game).device_costs()).solver_move
    assert docs["costs"]["sweep"] == {"budget.costs.solver_move": [pytest.approx(base / 2), pytest.approx(base * 2)]}


@pytest.mark.parametrize("game", gp.GAMES)
def test_every_component_the_analysis_tests_is_a_pairing_its_store_plays(game: str) -> None:
    stores = {store: {frozenset(p) for p in _pairings(store)} for store in ga.STORES if ga.game_of(store) == game}
    for condition, claims in ga.families():
        for _, components in claims:
            for c in components:
                if ga.game_of(c.store) == game:
                    assert frozenset((c.a, c.b)) in stores[c.store], (condition, c)
    assert {Path(d.config).stem for d in gp.DESIGNS} == set(ga.STORES)
    costs = _sweep(f"{game}-costs")
    assert list(costs) == [ga.SWEPT_COST]
    assert [round(v / ga.calibrated_solver_move(game), 6) for v in costs[ga.SWEPT_COST]] == [0.5, 2.0]


def _sweep(stem: str) -> dict:
    import yaml

    return yaml.safe_load((ROOT / "configs" / "generality" / f"{stem}.yaml").read_text(encoding="utf-8"))["sweep"]
