"""The study scripts under ``studies/``: the numbers the docs quote are what the scripts compute."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "studies"))

import paper_logs  # noqa: E402
import robustness_power  # noqa: E402

PAPER_GAMES = ROOT.parent / "shared" / "reference" / "paper_games.csv"


def test_power_numbers_quoted_in_the_plan() -> None:
    # docs/robustness-plan.md §5 quotes these; a change here must change the plan (as a deviation)
    assert robustness_power.power_one_sided(200, 0.5, 0.60) == pytest.approx(0.86, abs=0.005)
    assert robustness_power.power_one_sided(100, 0.5, 0.60) == pytest.approx(0.62, abs=0.005)
    assert robustness_power.power_tost(1000, 0.05) == pytest.approx(0.86, abs=0.005)
    assert robustness_power.power_tost(400, 0.10) == pytest.approx(0.98, abs=0.005)
    assert robustness_power.power_tost(400, 0.05) == pytest.approx(0.27, abs=0.005)
    assert robustness_power.bt_difference_se(1600) == pytest.approx(12.3, abs=0.05)


def test_power_is_alpha_at_the_null() -> None:
    # an exact test's rejection probability at the null never exceeds alpha
    assert robustness_power.power_one_sided(200, 0.5, 0.5) <= 0.05
    assert robustness_power.power_tost(400, 0.10, p_true=0.6) <= 0.05


def test_mcts_plies_leave_heuristic_plies_out() -> None:
    assert paper_logs.mcts_plies(27, "mcts-co", "heuristics") == 14
    assert paper_logs.mcts_plies(27, "heuristics", "mcts-co") == 13
    assert paper_logs.mcts_plies(27, "vanilla", "mcts-co") == 27


@pytest.mark.skipif(not PAPER_GAMES.exists(), reason=f"paper logs absent: {PAPER_GAMES}")
def test_paper_logs_against_the_committed_games(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    paper, ours = paper_logs.load(PAPER_GAMES)
    lengths = paper_logs.lengths(paper, ours)
    assert len(lengths) == 21                      # every timed file but the heuristics mirror
    assert lengths.attrs["spearman"][0] > 0.9      # docs/reproduction.md: rho = 0.94
    assert int((lengths["mw_p_holm"] < 0.05).sum()) == 1
    table, (p, both) = paper_logs.caps(paper, ours)
    assert both.tolist() == [[5, 1], [1, 15]]
    assert p == pytest.approx(97 / 74613)          # hypergeometric tail, by hand
