"""How ``boopexp robustness`` reads a store (studies.stores.read_outcomes, through the store's reader):
from the summaries beside the sealed segments, never decoding a sealed game, with the same games
and counts as reading every line (issue 22), and the store's warnings and errors."""

from __future__ import annotations

import json
import math
import re
import warnings
from pathlib import Path

import pandas as pd
import pytest
from report_fixtures import make_record, write_plan, write_results
from store_helpers import patch_store

from boopexp.analysis.records import ReportWarning
from boopexp.errors import StoreError
from boopexp.experiments import store as store_module
from boopexp.experiments.store import encode_segment, seal, segment_data
from boopexp.studies import stores
from boopexp.studies.robustness import analysis as rb

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ["pairing", "p1", "p2", "winner", "point", "config_hash", "game_index"]


def _record(pairing: str, index: int, winner: str | None, config_hash: str = "h1", sweep: dict | None = None) -> dict:
    record = make_record(pairing, index, winner, config_hash=config_hash, plies=3)
    if sweep is not None:
        record["sweep"] = sweep
    return record


def _line(record: dict) -> str:
    return json.dumps(record, sort_keys=True) + "\n"


def _store(folder: Path, sealed: list[dict], log: list[dict], tail: str = "") -> Path:
    """``sealed`` in a sealed segment (with its summary), ``log`` in the live log after it, and
    the plan: 'a vs b' and 'a vs a' under settings h1."""
    write_results(folder, sealed)
    seal(folder)
    (folder / "games.jsonl").write_text("".join(_line(r) for r in log) + tail, encoding="utf-8")
    write_plan(folder, [("a vs b", "h1", 10), ("a vs a", "h1", 4)])
    return folder


def _expected(rows: list[tuple]) -> pd.DataFrame:
    """The frame as read_outcomes always built it (from a list of row tuples)."""
    return pd.DataFrame(rows, columns=COLUMNS)


def _read(folder: Path) -> tuple[stores.StoreOutcomes, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read = stores.read_outcomes(folder)
    return read, [str(w.message) for w in caught if issubclass(w.category, ReportWarning)]


SEALED = [
    _record("a vs b", 0, "p1", sweep={"budget.seconds": 0.5}),
    _record("a vs b", 1, "p2", sweep={"budget.seconds": 2}),
    _record("a vs b", 2, None),
    _record("a vs a", 0, "p2"),
]


@pytest.mark.parametrize("case", ["duplicates", "off-plan", "both"])
def test_games_counts_and_warnings(tmp_path, case):
    """Planned games once each in reading order, with their sweep point (NaN unless exactly one
    axis); the copies the store ignored counted; games of other settings left out and counted (each
    once); the store's warnings, as status gives them."""
    sealed, log = list(SEALED), [_record("a vs b", 3, "p1", sweep={"budget.seconds": 1, "x": 2})]
    duplicates = off_plan = 0
    if case in ("duplicates", "both"):
        log.append(_record("a vs b", 1, "p1"))  # another copy, another winner: the first counts
        duplicates = 1
    if case in ("off-plan", "both"):
        sealed.append(_record("a vs b", 0, "p1", config_hash="h2"))
        log += [_record("c vs d", 0, "p2"), _record("a vs b", 0, "p2", config_hash="h2")]
        duplicates += 1  # the copy of an off-plan game
        off_plan = 2
    folder = _store(tmp_path / "st", sealed, log, tail='{"config_hash": "h1", "pair')
    read, caught = _read(folder)
    pd.testing.assert_frame_equal(read.games, _expected([
        ("a vs b", "a", "b", "p1", 0.5, "h1", 0),
        ("a vs b", "a", "b", "p2", 2.0, "h1", 1),
        ("a vs b", "a", "b", None, math.nan, "h1", 2),
        ("a vs a", "a", "a", "p2", math.nan, "h1", 0),
        ("a vs b", "a", "b", "p1", math.nan, "h1", 3),
    ]))
    assert (read.planned, read.duplicates, read.off_plan) == (14, duplicates, off_plan)
    assert caught == store_module.StoreReader(folder).outcomes().scan.warnings()
    assert caught[0] == (f"{folder / 'games.jsonl'} line {len(log) + 1}: truncated last line (27 bytes without a "
                         "newline, probably a run killed mid-write); ignored")


def test_a_store_without_a_plan_counts_every_game(tmp_path):
    folder = _store(tmp_path / "st", SEALED, [_record("c vs d", 0, "p1", config_hash="h9")])
    (folder / "config.yaml").write_text("name: st\n", encoding="utf-8")
    read, caught = _read(folder)
    assert read.games["pairing"].tolist() == ["a vs b"] * 3 + ["a vs a", "c vs d"]
    assert (read.planned, read.duplicates, read.off_plan, caught) == (None, 0, 0, [])


def test_games_without_a_winner_only(tmp_path):
    folder = _store(tmp_path / "st", [_record("a vs a", i, None) for i in range(2)], [])
    read, _ = _read(folder)
    pd.testing.assert_frame_equal(read.games, _expected([("a vs a", "a", "a", None, math.nan, "h1", i)
                                                        for i in range(2)]))


def test_an_empty_store_gives_the_empty_frame(tmp_path):
    folder = _store(tmp_path / "st", [_record("c vs d", 0, "p1")], [])
    read, _ = _read(folder)
    pd.testing.assert_frame_equal(read.games, stores.empty_outcomes())
    assert (read.planned, read.off_plan) == (14, 1)


def test_the_sealed_games_are_never_decoded(tmp_path, monkeypatch):
    """Issue 22: robustness read every line of every store; the summaries hold what it needs."""
    folder = _store(tmp_path / "st", SEALED, [_record("a vs b", 3, "p1")])
    expected, _ = _read(folder)

    def no_decompressing(path, data):
        raise AssertionError(f"{path} was decompressed")

    patch_store(monkeypatch, "_decompress", no_decompressing)
    read, _ = _read(folder)
    pd.testing.assert_frame_equal(read.games, expected.games)
    assert len(read.games) == 5


def test_a_stale_summary_is_not_used(tmp_path):
    folder = _store(tmp_path / "st", SEALED, [])
    summary = folder / "summary-0001.parquet"
    summary.write_bytes(b"not parquet")
    read, caught = _read(folder)
    assert read.games["game_index"].tolist() == [0, 1, 2, 0]
    assert len(caught) == 1 and caught[0].startswith(f"{summary}: unreadable summary")


@pytest.mark.parametrize(("line", "message"), [
    ('{"config_hash": "h1", "pairing"\n', r"not valid JSON \(Expecting"),
    ('[1, 2]\n', r"invalid game record \(not a JSON object but list\)"),
    (_line({"config_hash": "h1", "pairing": "a vs b", "game_index": 9}), r"invalid game record \(no 'winner' key\)"),
    (_line(_record("a vs b", 9, "p1") | {"winner": "draw"}), r"invalid game record \(winner = 'draw' is not"),
    # the store refused it, the study's own line reader read it: one rule now
    (_line(_record("a vs b", -1, "p1")),
     r"invalid game record \(game_index = -1 is not an integer from 0 to 2\^63-1\)"),
])
@pytest.mark.parametrize("where", ["log", "segment"])
def test_a_bad_line_is_the_store_line(tmp_path, line, message, where):
    folder = _store(tmp_path / "st", SEALED, [_record("a vs b", 3, "p1")])
    path = folder / ("games.jsonl" if where == "log" else "games-0001.jsonl.zst")
    if where == "log":
        path.write_text(path.read_text() + line + _line(_record("a vs b", 4, "p1")), encoding="utf-8")
    else:  # a segment without a summary (a hand-made one): decoded line by line
        path.write_bytes(encode_segment(segment_data(path) + line.encode()))
        (folder / "summary-0001.parquet").unlink()
    number = 2 if where == "log" else len(SEALED) + 1
    with pytest.raises(StoreError, match=rf"^{re.escape(str(path))} line {number}: {message}"):
        _read(folder)


STUDY = ROOT / "results" / "robustness"


@pytest.mark.parametrize("name", [*rb.STORES, *rb.REFERENCE, *rb.CPU])
def test_the_committed_stores_read_as_every_line_gives(name, monkeypatch):
    folder = (STUDY / name) if name in rb.STORES else (ROOT / "results" / name)
    if not store_module.has_games_files(folder):
        pytest.skip(f"{folder} is not committed")
    read, caught = _read(folder)
    patch_store(monkeypatch, "read_summary_table", lambda *_a, **_k: (None, None))
    lines, _ = _read(folder)  # every sealed line decoded, no summary read
    pd.testing.assert_frame_equal(read.games, lines.games)
    assert (read.planned, read.duplicates, read.off_plan, caught) == (lines.planned, 0, 0, [])
    assert read.planned == len(read.games)
