"""The committed games of docs/beyond.md: complete, sealed, replayable, and the quoted tables rebuild.

Fast by design: the stores are read once (a few thousand small records), two short games are
replayed, and the Bradley–Terry fit of the ladder runs once.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from boopexp.experiments.config import load_config, plan_entries
from boopexp.experiments.store import GameStore, StoreReader, has_games_files, segment_paths

ROOT = Path(__file__).resolve().parent.parent
BEYOND = ROOT / "results" / "beyond"
DOC = ROOT / "docs" / "beyond.md"
#: committed store -> the config it was run from
STORES = {
    "co2": "beyond-co2",
    "co2-4s": "beyond-co2-4s",
    "co2-iterations": "beyond-co2-iterations",
    "co2-iterations-a9": "beyond-co2-iterations-a9",
    "ladder": "beyond-ladder",
    "tune-mcts-co/confirm": None,
}


def _store(name: str) -> Path:
    """The folder of a committed store. Stores are committed migrated (one sealed segment), so a
    folder without a segment is a run still playing in this checkout: skipped, not failed."""
    folder = BEYOND / name
    if not has_games_files(folder) or not segment_paths(folder):
        pytest.skip(f"{folder} is not committed yet")
    return folder


@pytest.mark.parametrize("name", sorted(STORES))
def test_store_is_complete_and_sealed(name):
    _complete_and_sealed(_store(name))


def _complete_and_sealed(folder: Path) -> None:
    store = GameStore(folder)
    entries = plan_entries(store.read_config(), source=str(folder / "config.yaml"))
    planned = {(e.config_hash, e.pairing, i) for e in entries for i in range(e.games)}
    scan = StoreReader(store.directory).records()
    stored = {(r["config_hash"], r["pairing"], r["game_index"]) for r in scan.records}
    assert scan.duplicates == 0 and scan.tail is None and len(scan.records) == len(stored)
    assert stored == planned
    assert [p.name for p in segment_paths(folder)] == ["games-0001.jsonl.gz"]
    assert not (folder / "games.jsonl").exists() or (folder / "games.jsonl").stat().st_size == 0


@pytest.mark.parametrize(("pairing", "seconds", "index"), [("mcts-co2 vs mcts-co", 1.0, 7),
                                                            ("mcts-co vs mcts-co2", 0.25, 3)])
def test_an_mcts_co2_game_replays_from_its_identity(pairing, seconds, index):
    from conftest import without_timing

    from boopexp.play.match import play_game

    folder = _store("co2")
    config = load_config(ROOT / "configs" / f"{STORES['co2']}.yaml")
    task = next(t for t in config.tasks(config.plan())
                if t.pairing == pairing and t.game_index == index and t.budget.seconds == seconds)
    stored = next(r for r in StoreReader(folder).records().records
                  if (r["config_hash"], r["pairing"], r["game_index"]) == (task.config_hash, pairing, index))
    assert without_timing(play_game(task)) == without_timing(stored)


def _studies_beyond():
    spec = importlib.util.spec_from_file_location("studies_beyond", ROOT / "studies" / "beyond.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_summary_rebuilds_byte_for_byte_and_the_doc_quotes_it():
    committed = BEYOND / "summary.md"
    if not committed.exists():
        pytest.skip("results/beyond/summary.md is not committed yet")
    text = _studies_beyond().summary(BEYOND)
    assert text == committed.read_text(encoding="utf-8")
    doc = DOC.read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith(("| budget", "| opponent", "| agent")):
            assert line in doc, f"docs/beyond.md does not quote: {line}"


def test_ladder_ratings_rebuild():
    committed = BEYOND / "ratings" / "ratings.csv"
    d1 = ROOT / "results" / "robustness" / "d1"
    if not committed.exists() or not has_games_files(d1):
        pytest.skip("the ladder's ratings or the robustness study's D1 games are not committed")
    import warnings

    from boopexp.analysis import load_results, render
    from boopexp.analysis.ratings_report import ratings_from_data, ratings_table

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. the games without a winner, counted in the table
        fit = ratings_from_data(load_results([d1, _store("ladder")]))
    table = ratings_table(fit)
    assert render.to_csv(table) == committed.read_text(encoding="utf-8")
    assert render.markdown_document([table]) == (BEYOND / "ratings" / "ratings.md").read_text(encoding="utf-8")


def test_tuning_trials_are_complete_sealed_and_tabulated():
    import csv

    table = BEYOND / "tune-mcts-co" / "trials.csv"
    if not table.exists():
        pytest.skip("the tuning is not committed yet")
    from boopexp.studies.beyond.rows import rows

    trials = list(csv.DictReader(table.open(encoding="utf-8")))
    assert len(trials) == 30
    for t in trials:
        name = f"tune-mcts-co/trials/{int(t['trial']):04d}"
        _complete_and_sealed(_store(name))
        (r,) = rows([BEYOND / name], f"mcts-co.t{t['trial']}")
        assert (r.wins, r.losses, r.no_winner) == (int(t["wins"]), int(t["losses"]), int(t["no_winner"]))


def test_the_confirmatory_sprt_stopped_at_its_decision_and_the_doc_quotes_it():
    """results/beyond/co2-sprt-4s: every game up to the decision's block, none after; H1 as quoted."""
    from boopexp.experiments.sprt import H1, parse_sprt, plan_tests

    folder = _store("co2-sprt-4s")
    store = GameStore(folder)
    doc = store.read_config()
    entries = plan_entries(doc, source=str(folder / "config.yaml"))
    scan = StoreReader(store.directory).records()
    assert scan.duplicates == 0 and scan.tail is None
    assert [p.name for p in segment_paths(folder)] == ["games-0001.jsonl.gz"]
    spec = parse_sprt(str(store.config_path), doc["sprt"])
    (test,) = plan_tests(spec, entries, scan.records)
    state = test.state
    assert state.decision == H1 and state.llr >= state.upper
    blocks = list(range(spec.batch * (state.last_index // spec.batch + 1)))
    for entry in entries:
        assert sorted(r["game_index"] for r in scan.records if r["pairing"] == entry.pairing) == blocks
    wins = sum(1 for r in scan.records if r["winner"] and (r["winner"] == "p1") == r["pairing"].startswith("mcts-co2"))
    decided = sum(1 for r in scan.records if r["winner"])
    quoted = (f"H1 after {state.pairs} pairs", f"LLR {state.llr:.2f}", f"{wins} / {decided}",
              f"pentanomial {state.counts[0]} / {state.counts[1]} / {state.counts[2]}")
    text = DOC.read_text(encoding="utf-8")
    for part in quoted:
        assert part in text, part
