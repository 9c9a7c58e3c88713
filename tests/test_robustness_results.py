"""The committed robustness study: every planned game stored once, and its outputs rebuild exactly.

The plan is read from the configs (configs/robustness-*.yaml), not from the stores. Each test
skips, saying which store, only while that store is not committed yet (the study lands part by
part); once every store and claims.csv are on main, nothing skips.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from study_helpers import (
    assert_figures_rebuilt,
    assert_store_complete,
    assert_texts_rebuilt,
    doc_rows,
    rebuilt_study,
)

from boopexp.experiments.store import has_games_files
from boopexp.studies.robustness import analysis as rb
from boopexp.studies.robustness import report as rr

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "results" / "robustness"
CONFIGS = ROOT / "configs"


@pytest.mark.parametrize("store", rb.STORES)
def test_committed_store_is_complete_without_duplicates(store):
    folder = STUDY / store
    if not has_games_files(folder):
        pytest.skip(f"results/robustness/{store} is not committed yet")
    assert_store_complete(folder, CONFIGS / f"robustness-{store}.yaml", store)


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory) -> Path:
    """The study rebuilt into a temporary folder (once for the tests below)."""
    return rebuilt_study(tmp_path_factory, STUDY, rb.STORES, "claims.csv", rr.rebuild)


def test_claims_and_tables_rebuild_byte_for_byte(rebuilt):
    assert_texts_rebuilt(STUDY, rebuilt)
    text = (STUDY / "robustness-tables.md").read_text(encoding="utf-8")
    assert "Note: Store" not in text, "the committed tables were built from an incomplete store"


def test_figures_rebuild_byte_for_byte(rebuilt):
    assert_figures_rebuilt(STUDY, rebuilt, "robustness-tables.md", {"ladder", "sensitivity", "ratings"})


def _doc_rows(first_header: str) -> list[list[str]]:
    """The body rows of the Markdown table of docs/robustness.md whose header starts ``first_header``."""
    rows = doc_rows((ROOT / "docs" / "robustness.md").read_text(encoding="utf-8"), f"| {first_header} |")
    assert rows is not None, f"docs/robustness.md has no table whose header starts '| {first_header} |'"
    return rows


def _signed(value: float) -> str:
    """An Elo figure as the write-up prints it: rounded, signed, with a true minus sign."""
    return f"{round(value):+d}".replace("-", "\u2212")


def test_the_write_up_quotes_the_committed_outputs():
    """docs/robustness.md's verdict, ratings and ladder tables say what claims.csv, ratings.csv and
    ladder.csv say (the write-up rests on the stores, not on numbers typed in by hand)."""
    import csv

    if not (STUDY / "claims.csv").exists():
        pytest.skip("results/robustness/claims.csv is not committed yet")
    with open(STUDY / "claims.csv", encoding="utf-8") as f:
        claims = {r["claim"]: r for r in csv.DictReader(f) if r["condition"] == "default"}
    rows = _doc_rows("claim")
    assert {row[0] for row in rows} == set(claims)
    for claim, _, _, _, verdict, n, no_winner in rows:
        assert (verdict, n.replace(",", ""), no_winner.replace(",", "")) == \
            (claims[claim]["verdict"], claims[claim]["n"], claims[claim]["no_winner"]), claim
    with open(STUDY / "ratings.csv", encoding="utf-8") as f:
        ratings = {r["agent"]: r for r in csv.DictReader(f)}
    quoted = {row[0]: row for row in _doc_rows("agent") if row[0] in ratings}
    assert set(quoted) == set(ratings) - {"vanilla"}
    for agent, (_, elo, ci) in quoted.items():
        r = ratings[agent]
        assert elo == _signed(float(r["elo"])), agent
        assert ci == f"[{_signed(float(r['ci_low']))}, {_signed(float(r['ci_high']))}]", agent
    with open(STUDY / "ladder.csv", encoding="utf-8") as f:
        ladder = {(float(r["budget"]), r["series"]): r for r in csv.DictReader(f)}
    series = ("mcts-co vs vanilla", "mcts-co vs heuristics", "mcts-co mirror (P2 share)")
    ladder_rows = _doc_rows("device-s per move")
    assert len(ladder_rows) == len(rb.BUDGETS)
    for budget, *cells in ladder_rows:
        for name, cell in zip(series, cells):
            r = ladder[(float(budget), name)]
            assert cell.startswith(f"{r['wins']}/{r['n']}, "), (budget, name)
