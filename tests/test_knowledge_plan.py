"""docs/knowledge-plan.md: its power numbers and game counts are what studies/knowledge_power.py
computes, and the configs it names plan those games (like tests/test_studies.py for the robustness plan)."""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

import pytest
from study_helpers import assert_plan_precedes_games

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "studies"))

import knowledge_power as kp  # noqa: E402

PLAN = (ROOT / "docs" / "knowledge-plan.md").read_text(encoding="utf-8")


def quoted(number: float, places: int = 2) -> str:
    return f"{number:.{places}f}"


def test_the_power_numbers_quoted_in_the_plan() -> None:
    # docs/knowledge-plan.md §8 quotes these; a change here must change the plan (as a deviation)
    quotes = {
        "**0.99** at s = 0.60": kp.power_sign_test(200, 0.60),
        "**0.60** at s = 0.55": kp.power_sign_test(200, 0.55),
        "**0.95** and 0.37 at": kp.power_sign_test(200, 0.60, alpha=0.0125),
        "At 100 pairs: 0.86": kp.power_sign_test(100, 0.60),
        "and\n  0.36 (α = 0.05)": kp.power_sign_test(100, 0.55),
        "0.67 at s = 0.60 and α = 0.0125": kp.power_sign_test(100, 0.60, alpha=0.0125),
        "power **0.87** at α = 0.0125": kp.power_sign_test(200, 0.60, alpha=0.0125) ** 3,
        "power **0.78** at 200 pairs": kp.power_pair_tost(200),
        "0.46 at 0.0125), 0.29 at 100 pairs": kp.power_pair_tost(200, alpha=0.0125),
    }
    for text, value in quotes.items():
        assert text in PLAN, text
        numbers = re.findall(r"0\.\d\d", text)
        assert quoted(value) in numbers, (text, value)
    assert quoted(kp.power_sign_test(200, 0.55, alpha=0.0125)) == "0.37"
    assert quoted(kp.power_pair_tost(100)) == "0.29"
    assert kp.detectable_score(200) == pytest.approx(0.565)
    assert kp.detectable_score(200, alpha=0.0125) == pytest.approx(0.580)
    assert kp.detectable_score(100) == pytest.approx(0.595)
    assert kp.detectable_score(100, alpha=0.0125) == pytest.approx(0.615)
    for score in ("0.565", "0.580", "0.595", "0.615"):
        assert score in PLAN
    se = kp.bt_difference_se(6 * 2 * kp.LADDER_PAIRS)
    assert f"≈ **{se:.1f} Elo**" in PLAN


def test_a_seat_effect_does_not_lower_the_power_and_raises_it_by_at_most_two_points() -> None:
    for pairs, score in ((100, 0.55), (100, 0.60), (200, 0.55), (200, 0.60)):
        gain = kp.power_sign_test(pairs, score, seat_effect=0.10) - kp.power_sign_test(pairs, score)
        assert 0 <= gain <= 0.02


def test_biased_openings_never_lower_the_power_of_the_sign_test() -> None:
    # the plan quotes the power at unbiased openings as the least favourable case
    powers = [kp.power_sign_test(100, 0.57, position_var=v) for v in (0.0, 0.01, 0.03, 0.06)]
    assert powers == sorted(powers) and powers[-1] > powers[0]


def test_the_sign_test_is_exact_at_the_null() -> None:
    # whatever the split rate, an exact conditional test never rejects more often than alpha
    for var in (0.0, 0.05, 0.15):
        assert kp.power_sign_test(150, 0.5, position_var=var) <= 0.05
        assert kp.power_sign_test(150, 0.5, position_var=var, alpha=0.0125) <= 0.0125
    assert kp.sign_test_critical(10) == 9  # P(X >= 9 | n = 10) = 11/1024 <= 0.05 < P(X >= 8) = 56/1024


def test_the_plan_states_the_game_counts_the_script_computes() -> None:
    assert kp.total_games() == 15_200 and kp.total_games() >= 6_000
    assert f"**{kp.total_games():,}**" in PLAN
    for design in kp.DESIGNS:
        row = next(line for line in PLAN.splitlines() if f"`{Path(design.config).name}`" in line and "|" in line)
        assert row.rstrip().endswith(f"| {design.games:,} |"), row


AGENTS_1S = ("mcts-co", "mcts-prior", "mcts-solver", "vanilla", "heuristics", "alphabeta", "os-mcts")
CLAIM_PAIRINGS = {frozenset(p) for p in (("alphabeta", "vanilla"), ("mcts-prior", "mcts-co"), ("mcts-co", "alphabeta"))}


def pairings(path: Path) -> set[frozenset[str]]:
    import yaml

    return {frozenset(p) for p in yaml.safe_load(path.read_text(encoding="utf-8"))["pairings"]}


CONFIG_FILES = [ROOT / d.config for d in kp.DESIGNS]


@pytest.mark.skipif(not all(p.exists() for p in CONFIG_FILES),
                    reason="configs/knowledge-*.yaml land with the openings: key and the alphabeta agent")
def test_the_ladder_configs_hold_the_planned_pairings_and_no_claim_pairing_twice() -> None:
    # plain YAML, so this holds whether or not the features the configs need are on this branch
    claims = pairings(ROOT / "configs" / "knowledge-claims.yaml")
    assert claims == CLAIM_PAIRINGS
    ladder = pairings(ROOT / "configs" / "knowledge-ladder-1.yaml")
    assert ladder | claims == {frozenset(p) for p in itertools.combinations(AGENTS_1S, 2)}
    assert not ladder & claims
    paper, others = ("mcts-co", "vanilla", "heuristics"), ("alphabeta", "mcts-solver", "mcts-prior", "os-mcts")
    side = ({frozenset(p) for p in itertools.combinations(paper, 2)}
            | {frozenset((a, b)) for a in others for b in paper}) - CLAIM_PAIRINGS
    for budget in ("0.25", "4"):
        assert pairings(ROOT / "configs" / f"knowledge-ladder-{budget}.yaml") == side


def feature_missing() -> str | None:
    """Why the configs cannot be planned on this branch (openings or alphabeta not landed), or None."""
    from boopexp.agents.specs import AGENT_NAMES

    if "alphabeta" not in AGENT_NAMES:
        return "the alphabeta agent is not on this branch"
    try:
        import boopexp.play.openings  # noqa: F401
    except ImportError:
        return "the openings: key is not on this branch"
    return None


@pytest.mark.parametrize("design", kp.DESIGNS, ids=lambda d: Path(d.config).stem)
def test_each_config_plans_the_games_the_plan_counts(design: kp.Design) -> None:
    from boopexp.experiments.config import load_config

    if not (ROOT / design.config).exists():
        pytest.skip(f"{design.config} lands with the openings: key and the alphabeta agent")
    missing = feature_missing()
    if missing:
        pytest.skip(f"{design.config} needs features not landed yet: {missing}")
    config = load_config(ROOT / design.config)
    plan = config.plan()
    assert sum(p.games for p in plan) == design.games
    assert config.games_per_side == design.pairs
    assert config.settings.seed == 2027


def test_the_plan_was_committed_before_the_first_game_of_the_study() -> None:
    """The plan's first commit is an ancestor of every commit that added a store file of
    results/knowledge/ (the issue's "the plan's commit preceding the first result's"), and no
    store file was added in the plan's own commit."""
    assert_plan_precedes_games(ROOT, "docs/knowledge-plan.md", "results/knowledge/*/games*")
