"""The committed generality study: every planned game stored once, one game of each store replays
exactly, and its outputs are what ``boopexp generality`` rebuilds from the stores, byte for byte.

The plan is read from the configs (configs/generality/*.yaml), not from the stores.

**Games and outputs go together** (a decision, so that nothing committed can disagree with the
stores beside it): while results/generality/ holds no game, it must hold no output either (a
table or figure without games would be a result without data), and the rebuild test says so and
passes; once a store is committed, the outputs must be committed with it and equal a rebuild from
the committed stores (a partial analysis is labelled PARTIAL in generality-tables.md and is still
held to its stores). The lead commits each finished store with ``make generality``'s outputs.
Only the completeness of a store that is not committed yet, and the figures when this matplotlib
is not the one that drew them, are skipped (saying why).
"""

from __future__ import annotations

import warnings
import zlib
from pathlib import Path

import pytest
from study_helpers import (
    FIGURE_SUFFIXES,
    TEXT_SUFFIXES,
    assert_figures_rebuilt,
    assert_game_replays,
    assert_store_complete,
    assert_texts_rebuilt,
    committed_outputs,
    doc_rows,
)

from boopexp.experiments.config import load_config
from boopexp.experiments.store import has_games_files
from boopexp.studies.generality import analysis as ga
from boopexp.studies.generality import report as gr

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "results" / "generality"
CONFIGS = ROOT / "configs" / "generality"
WRITE_UP = ROOT / "docs" / "generality.md"
#: the header of the verdict grid (a claim per row, a game per column) that generality-tables.md
#: opens with and docs/generality.md quotes
GRID = "| claim | connect-four | boop | colosseum | pentago-swap | all games |"


def stored() -> list[str]:
    return [s for s in ga.STORES if has_games_files(STUDY / s)]


def outputs() -> list[Path]:
    return committed_outputs(STUDY, TEXT_SUFFIXES + FIGURE_SUFFIXES) if STUDY.is_dir() else []


@pytest.mark.parametrize("store", ga.STORES)
def test_committed_store_is_complete_without_duplicates(store):
    folder = STUDY / store
    if not has_games_files(folder):
        pytest.skip(f"results/generality/{store} is not committed yet")
    assert_store_complete(folder, CONFIGS / f"{store}.yaml", store)


@pytest.mark.parametrize("store", ga.STORES)
def test_a_committed_game_of_each_store_replays_identically(store):
    """One game of each committed store (its plan's task at a place fixed by the store's name),
    played again from its identity, is the stored game move for move."""
    folder = STUDY / store
    if not has_games_files(folder):
        pytest.skip(f"results/generality/{store} is not committed yet")
    config = CONFIGS / f"{store}.yaml"
    plan = load_config(config)
    tasks = list(plan.tasks(plan.plan()))
    task = tasks[zlib.crc32(store.encode()) % len(tasks)]
    assert_game_replays(folder, config, task.pairing, task.game_index)


def test_no_outputs_without_games_and_none_missing_with_them():
    if not stored():
        assert not outputs(), f"results/generality holds outputs but no game: {[p.name for p in outputs()]}"
        return
    assert (STUDY / "verdicts.csv").exists(), ("results/generality holds games but not their outputs: run "
                                               "make generality and commit them with the stores")


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory) -> Path | None:
    """The study rebuilt into a temporary folder (once), or None while no game is committed."""
    if not stored():
        return None
    out = tmp_path_factory.mktemp("generality")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gr.rebuild(STUDY, out)
    return out


def test_outputs_rebuild_byte_for_byte(rebuilt):
    if rebuilt is None:
        assert not outputs()  # nothing to rebuild, and nothing committed that would need it
        return
    assert_texts_rebuilt(STUDY, rebuilt)


def test_figures_rebuild_byte_for_byte(rebuilt):
    if rebuilt is None:
        assert not outputs()
        return
    assert_figures_rebuilt(STUDY, rebuilt, "generality-tables.md", set(gr.FIGURES) - _figures_without_data(rebuilt))


def _figures_without_data(rebuilt: Path) -> set[str]:
    """The figures a partial study does not draw yet (no ladder, gain or claim to show)."""
    return {stem for stem in gr.FIGURES if not (rebuilt / f"{stem}.svg").exists()}


def test_the_write_up_quotes_the_committed_verdicts():
    """docs/generality.md's verdict grid is the one ``boopexp generality`` built from the committed
    stores (generality-tables.md, itself rebuilt byte for byte above), and the write-up says
    "Status: **partial**" exactly while a store of the plan is not committed."""
    if not (STUDY / "generality-tables.md").exists():
        pytest.skip("results/generality/generality-tables.md is not committed yet (make generality)")
    if not WRITE_UP.exists():
        pytest.skip("docs/generality.md is not written yet")
    text = WRITE_UP.read_text(encoding="utf-8")
    built = doc_rows((STUDY / "generality-tables.md").read_text(encoding="utf-8"), GRID)
    assert built, f"generality-tables.md has no table {GRID!r}"
    assert doc_rows(text, GRID) == built
    assert ("Status: **partial**" in text) == (len(stored()) < len(ga.STORES))
