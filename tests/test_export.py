"""boopexp export / import (experiments/export.py; docs/protocol.md, "Export"): the committed stores
go out as text and come back the same games, byte for byte; the CSV is one row per game; a
malformed file or a conflicting game is one line and nothing written."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

from boopexp.experiments.export import CSV_COLUMNS, export_games, game_text, import_games
from boopexp.experiments.store import has_games_files, scan_store, segment_data, segment_paths
from boopexp.interfaces.cli import main
from tests.conftest import one_line

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
ABLATION = RESULTS / "ablation"
#: every committed store (a folder holding games files)
STORES = sorted(p for p in RESULTS.rglob("*") if p.is_dir() and has_games_files(p))


def invoke(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def _stored_lines(folder: Path) -> bytes:
    """A store's lines as stored: its segments in order, then its live log."""
    data = b"".join(segment_data(p) for p in segment_paths(folder))
    log = folder / "games.jsonl"
    return data + (log.read_bytes() if log.exists() else b"")


def test_the_committed_stores_are_found():
    assert ABLATION in STORES and len(STORES) >= 10


@pytest.mark.parametrize("folder", STORES, ids=lambda p: str(p.relative_to(RESULTS)))
def test_round_trip_of_every_committed_store(tmp_path, folder):
    """export then import gives back every game exactly: the decoded records are equal (moves,
    winner, identity, settings, telemetry) and, the store having no duplicate, the lines too."""
    text = tmp_path / "games.txt"
    exported = export_games([folder], text, "text")
    report = import_games(text, tmp_path / "store")
    original = scan_store(folder)
    assert exported.games == report.added == len(original.records)
    if original.duplicates:
        assert scan_store(tmp_path / "store").records == original.records
    else:
        assert (tmp_path / "store" / "games.jsonl").read_bytes() == _stored_lines(folder)


def test_export_import_cli_and_replay(tmp_path):
    """Through the CLI; the imported game replays; a second import adds nothing."""
    text = tmp_path / "ablation.txt"
    result = invoke("export", ABLATION, "--out", text)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"{text}: 800 games from 1 store(s) (text)"
    block = text.read_text().split("\n\n")[0].splitlines()
    assert block[:8] == ['[Event "ablation"]', '[Date "????.??.??"]', '[Blue "mcts-co"]', '[Red "vanilla"]',
                         '[Result "1-0"]', '[Termination "victory"]',
                         '[StartPosition "....../....../....../....../....../...... 8,0 8,0 b 0,0 0"]',
                         '[Seed "4480965923850433173"]']
    assert text.read_text().split("\n\n")[1].startswith("1. c4 c2 2. c3 c4 3. c3 e4")
    out = tmp_path / "imported"
    result = invoke("import", text, "--out", out)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"{out}: 800 games imported from {text} (0 already there)"
    result = invoke("replay", out, "--pairing", "mcts-co vs vanilla", "--game", "3")
    assert result.exit_code == 0 and "as recorded" in result.output, result.output
    before = (out / "games.jsonl").read_bytes()
    result = invoke("import", text, "--out", out)
    assert result.output.strip() == f"{out}: 0 games imported from {text} (800 already there)"
    assert (out / "games.jsonl").read_bytes() == before


def test_csv_is_one_row_per_game(tmp_path):
    out = tmp_path / "games.csv"
    result = invoke("export", ABLATION, RESULTS / "mirror", "--out", out, "--format", "csv")
    assert result.exit_code == 0, result.output
    with out.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == CSV_COLUMNS
    records = scan_store(ABLATION).records + scan_store(RESULTS / "mirror").records
    assert [(r["pairing"], int(r["game_index"]), r["winner"]) for r in rows] == \
        [(r["pairing"], r["game_index"], r["winner"] or "") for r in records]
    assert {r["store"] for r in rows} == {str(ABLATION), str(RESULTS / "mirror")}


def test_a_game_red_opens_is_numbered_from_one_ellipsis():
    record = dict(scan_store(ABLATION).records[0])
    record["start"] = "....../....../....../....../....../...... 8,0 8,0 r 0,0 0"
    moves = game_text(record).split("\n\n")[1]
    assert moves.startswith("1... c4 2. c2 c3 3. c4 c3")


def _one_game(tmp_path: Path) -> tuple[Path, list[str]]:
    text = tmp_path / "one.txt"
    export_games([ABLATION], text, "text")
    block = text.read_text().split("\n\n")
    return text, [block[0], block[1]]


@pytest.mark.parametrize("edit, line, message", [
    (lambda h, m: (h.replace('[Blue "mcts-co"]', '[Blue mcts-co]'), m), 3, "is not a header"),
    (lambda h, m: (h.replace('[Blue "mcts-co"]', '[Blue "random"]'), m), 3, "disagrees with the game's record"),
    (lambda h, m: (h, m.replace(" c2 ", " g9 ", 1)), 16, "'g9' is not a move"),
    (lambda h, m: (h, m.replace("1-0", "0-1")), 17, "the result '0-1' disagrees"),
    (lambda h, m: (h, m.replace(" 1-0", "")), 17, "must end with the result"),
    (lambda h, m: ("\n".join(x for x in h.splitlines() if not x.startswith("[Record")), m), 1, "has no [Record"),
    (lambda h, m: (h.replace('[Record "{', '[Record "{,'), m), 14, "is not JSON"),
])
def test_a_malformed_file_is_one_line_naming_file_and_line(tmp_path, edit, line, message):
    text, (heads, moves) = _one_game(tmp_path)
    heads, moves = edit(heads, moves)
    bad = tmp_path / "bad.txt"
    bad.write_text(heads + "\n\n" + moves + "\n")
    out = tmp_path / "out"
    error = one_line(invoke("import", bad, "--out", out), 2)
    assert error.startswith(f"Error: {bad}:{line}: ") and message in error, error
    assert not out.exists()


def test_a_conflicting_game_is_refused_and_nothing_is_written(tmp_path):
    """A game under a stored game's identity but other moves: refused as merge refuses it."""
    text, (heads, moves) = _one_game(tmp_path)
    out = tmp_path / "out"
    import_games(text, out)
    before = (out / "games.jsonl").read_bytes()
    other = tmp_path / "other.txt"
    other.write_text(heads + "\n\n" + moves.replace("1. c4 c2", "1. c4 d2") + "\n")
    error = one_line(invoke("import", other, "--out", out), 1)
    assert "'mcts-co vs vanilla' #0 (1d3c3dac7ecca76f) differs from the copy in" in error, error
    assert error.endswith("nothing imported")
    assert (out / "games.jsonl").read_bytes() == before
    twice = tmp_path / "twice.txt"
    twice.write_text(heads + "\n\n" + moves + "\n\n" + other.read_text())
    error = one_line(invoke("import", twice, "--out", tmp_path / "new"), 1)
    assert "is in the file twice as different games; nothing imported" in error
    assert not (tmp_path / "new").exists()


def test_user_mistakes_are_one_line(tmp_path):
    error = one_line(invoke("export", tmp_path / "nowhere", "--out", tmp_path / "x.txt"), 2)
    assert error == f"Error: no results folder {str(tmp_path / 'nowhere')!r}"
    error = one_line(invoke("import", tmp_path / "none.txt", "--out", tmp_path / "out"), 2)
    assert error == f"Error: no game file {str(tmp_path / 'none.txt')!r}"
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    assert "no game" in one_line(invoke("import", empty, "--out", tmp_path / "out"), 2)
    assert not (tmp_path / "out").exists()
