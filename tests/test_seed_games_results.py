"""The committed seed-games reproduction (docs/seed-games.md): every planned game stored once, the
rows rebuild byte for byte, a sample of games replays move for move, and the write-up's results
table quotes rows.csv.

Each test skips, saying what is missing, only while a store or the outputs are not committed yet.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from study_helpers import assert_game_replays, assert_store_complete, assert_texts_rebuilt, rebuilt_study

from boopexp.experiments.store import has_games_files
from boopexp.studies.seed_games import analysis as sg
from boopexp.studies.seed_games import report as sr

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "results" / sg.STUDY
WRITE_UP = ROOT / "docs" / "seed-games.md"


def _config(store: str) -> Path:
    return ROOT / sg.CONFIG_PATTERN.format(study=sg.STUDY, store=store)


@pytest.mark.parametrize("store", sg.STORES)
def test_committed_store_is_complete_without_duplicates(store):
    folder = STUDY / store
    if not has_games_files(folder):
        pytest.skip(f"results/seed-games/{store} is not committed yet")
    assert_store_complete(folder, _config(store), store)


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory) -> Path:
    return rebuilt_study(tmp_path_factory, STUDY, sg.STORES, "rows.csv", lambda root, out: sr.rebuild(root, out))


def test_outputs_rebuild_byte_for_byte(rebuilt):
    assert_texts_rebuilt(STUDY, rebuilt)


#: one game of each experiment's pairing (a seating each), replayed from its identity
REPLAYED = [
    ("pentago-swap", "ps-persistent vs ps-submitted", 0),
    ("pentago-swap", "ps-submitted vs ps-persistent-f25", 1),
    ("pentago-swap", "ps-1-1-c0 vs ps-c0", 2),
    ("colosseum", "cs-a vs cs-a", 3),
    ("colosseum", "cs-b-e1 vs cs-a", 4),
    ("colosseum", "cs-a vs cs-b-n7", 5),
]


@pytest.mark.parametrize(("store", "pairing", "index"), REPLAYED, ids=[f"{p} #{i}" for _, p, i in REPLAYED])
def test_committed_game_replays_identically(store, pairing, index):
    """A committed game, replayed from (config, pairing, index), is the same game move for move
    (device clock, seeds from each game's identity: any machine, any load)."""
    folder = STUDY / store
    if not has_games_files(folder):
        pytest.skip(f"results/seed-games/{store} is not committed yet")
    assert_game_replays(folder, _config(store), pairing, index)


def test_the_write_up_quotes_every_row_of_rows_csv():
    """docs/seed-games.md's results table has one line per row of rows.csv, starting
    ``| ROW | ours W-T-L | rate [low, high] | report | p | verdict |`` with rows.csv's numbers
    (rate and interval as percentages with one decimal, p with three decimals or <0.001)."""
    rows_csv = STUDY / "rows.csv"
    if not rows_csv.exists():
        pytest.skip("results/seed-games/rows.csv is not committed yet (make seed-games)")
    text = WRITE_UP.read_text(encoding="utf-8")
    with open(rows_csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    problems = []
    for r in rows:
        if r["verdict"] == "not run":
            continue
        rate = f"{100 * float(r['rate']):.1f}% [{100 * float(r['ci_low']):.1f}, {100 * float(r['ci_high']):.1f}]"
        p = float(r["p_value"]) if r["p_value"] else None
        p_text = "—" if p is None else ("<0.001" if p < 0.001 else f"{p:.3f}")
        line = f"| {r['row']} | {r['wins']}-{r['ties']}-{r['losses']} | {rate} |"
        found = [ln for ln in text.splitlines() if ln.startswith(line)]
        if not found:
            problems.append(f"{r['row']}: no line starting {line!r}")
        elif not found[0].rstrip().endswith(f"| {p_text} | {r['verdict']} |"):
            problems.append(f"{r['row']}: expected p {p_text} and verdict {r['verdict']!r} in {found[0]!r}")
    assert not problems, "\n".join(problems)
