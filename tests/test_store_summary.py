"""The summaries beside sealed segments (summary-NNNN.parquet): what status, resume and --dry-run
read instead of decoding the games, always equal to decoding, and never trusted when they do not
match their segment (docs/runner.md, "Summaries")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from store_helpers import patch_store, summaries

from boopexp.experiments import store as store_module
from boopexp.experiments.status import results_folders
from boopexp.experiments.store import GameStore, StoreReader, encode_record, migrate, seal
from boopexp.experiments.store.summary import game_summary, read_summary_table, summary_path, summary_table

ROOT = Path(__file__).resolve().parents[1]


def rec(index: int, winner: str | None = "p1", pairing: str = "a vs b", **extra) -> dict:
    return {"config_hash": "aaaa", "pairing": pairing, "game_index": index, "winner": winner, **extra}


def sealed_store(folder: Path, n: int = 4) -> GameStore:
    store = GameStore(folder)
    with store.open() as w:
        for i in range(n):
            w.append(rec(i, "p2" if i % 2 else "p1", sweep={"budget.seconds": 0.5}) if i != 3
                     else rec(i, None, termination="ply_limit"))
    seal(folder)
    return store


def status(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "boopexp", "status", str(folder)], capture_output=True, text=True)


COMMITTED = results_folders(ROOT / "results")


def test_the_committed_stores_are_found():
    assert len([f for f in COMMITTED if store_module.segment_paths(f)]) >= 50


@pytest.mark.parametrize("folder", COMMITTED, ids=lambda f: str(f.relative_to(ROOT / "results")))
def test_the_summaries_and_columns_equal_decoding_on_every_committed_store(folder):
    """Each committed store decoded once: every sealed segment's summary is there, matches its
    segment and equals its lines decoded; the store's outcome columns are each record's summary;
    the columns count as the records do (status and a resume count on columns)."""
    from boopexp.experiments.config import plan_entries
    from boopexp.experiments.tally import score, score_columns, unplanned

    scan = StoreReader(folder).records()
    records = scan.records
    read = dict(zip(scan.origins, records))  # (segment, line) -> the record decoded there
    for segment in store_module.segment_paths(folder):
        table, problem = read_summary_table(segment)
        assert problem is None and table is not None, (segment, problem)  # committed, and matching
        lines = store_module.segment_data(segment).splitlines()
        # each line's record: as the scan decoded it, or (a copy of a game read before) decoded here
        rows = [(n, game_summary(read[(segment, n)] if (segment, n) in read else StoreReader.decode(segment, n, raw)))
                for n, raw in enumerate(lines, start=1)]
        assert table.equals(summary_table(rows)), segment
    assert summaries(folder) == [game_summary(r) for r in records], folder
    doc = GameStore(folder).read_config()
    if doc is not None:
        entries = plan_entries(doc, str(folder))
        columns = StoreReader(folder).outcomes()
        assert score_columns(entries, columns.table) == (score(entries, records), unplanned(entries, records)), folder


def test_status_reads_the_summaries_never_the_sealed_games(tmp_path, monkeypatch):
    store = sealed_store(tmp_path / "r")
    assert summary_path(tmp_path / "r" / "games-0001.jsonl.zst").is_file()
    expected = tuple(game_summary(r) for r in StoreReader(store.directory).records().records)

    def no_decoding(*args, **kwargs):
        raise AssertionError("a sealed game was decoded")

    patch_store(monkeypatch, "parse_line", no_decoding)
    assert summaries(store.directory) == list(expected)
    scan = StoreReader(store.directory).outcomes()
    assert scan.scan.warnings() == []
    assert [(r["game_index"], r["winner"], r["termination"], r["sweep"]) for r in scan.records()] == [
        (0, "p1", "victory", {"budget.seconds": 0.5}), (1, "p2", "victory", {"budget.seconds": 0.5}),
        (2, "p1", "victory", {"budget.seconds": 0.5}), (3, None, "ply_limit", None)]


@pytest.mark.parametrize("damage", ["stale", "corrupt"])
def test_a_stale_or_corrupt_summary_is_one_warning_and_the_segment_is_read(tmp_path, damage):
    folder = tmp_path / "r"
    store = sealed_store(folder)
    segment, summary = folder / "games-0001.jsonl.zst", folder / "summary-0001.parquet"
    if damage == "stale":  # the segment restored from an older copy: three games, not four
        records = StoreReader(store.directory).records().records
        segment.write_bytes(store_module.encode_segment(b"".join(encode_record(r) for r in records[:3])))
        why = f"{summary} does not match games-0001.jsonl.zst (written for another version of it)"
    else:
        summary.write_bytes(b"PAR1 not really")
        why = f"{summary}: unreadable summary"
    done = status(folder)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "summary" in line]
    assert len(warnings) == 1 and warnings[0].startswith(f"Warning: {why}"), done.stderr
    assert f"boopexp seal {folder} rewrites" in warnings[0]
    games = 3 if damage == "stale" else 4
    assert len(StoreReader(folder).outcomes().table) == games  # counted from the segment, as decoded
    # seal rewrites the summary (the log is empty: no game moves), and the warning is gone
    before = segment.read_bytes()
    assert seal(folder).segment is None and segment.read_bytes() == before
    assert read_summary_table(segment)[1] is None and StoreReader(folder).outcomes().scan.warnings() == []
    assert "summary" not in status(folder).stderr


def test_a_missing_summary_is_read_from_the_segment_silently_and_seal_or_migrate_writes_it(tmp_path):
    folder = tmp_path / "r"
    store = sealed_store(folder)
    summary = folder / "summary-0001.parquet"
    summary.unlink()
    assert StoreReader(folder).outcomes().scan.warnings() == []
    assert summaries(folder) == [game_summary(r) for r in StoreReader(store.directory).records().records]
    seal(folder)
    assert summary.is_file() and read_summary_table(folder / "games-0001.jsonl.zst")[1] is None
    summary.unlink()
    migrated = migrate(folder)  # a migrated store: the segment is left as it is, its summary added
    assert not migrated.changed and read_summary_table(folder / "games-0001.jsonl.zst")[0] is not None


def test_migrate_writes_the_summary_of_its_segment_and_drops_the_older_ones(tmp_path):
    folder = tmp_path / "r"
    store = sealed_store(folder, 2)
    with store.open() as w:
        w.append(rec(7))
    seal(folder)
    assert sorted(p.name for p in folder.glob("summary-*")) == ["summary-0001.parquet", "summary-0002.parquet"]
    report = migrate(folder)
    assert report.changed and sorted(p.name for p in folder.glob("summary-*")) == ["summary-0001.parquet"]
    table, problem = read_summary_table(folder / "games-0001.jsonl.zst")
    assert problem is None and table["game_index"].to_pylist() == [0, 1, 7]


def test_a_summary_whose_segment_was_never_renamed_is_ignored_then_removed(tmp_path):
    folder = tmp_path / "r"
    sealed_store(folder, 2)
    orphan = folder / "summary-0002.parquet"
    orphan.write_bytes((folder / "summary-0001.parquet").read_bytes())  # a seal killed between its renames
    assert len(StoreReader(folder).outcomes().table) == 2
    seal(folder)
    assert not orphan.exists()


def test_status_without_a_config_counts_the_summaries_as_it_counted_the_records(tmp_path):
    import json

    folder = tmp_path / "r"
    sealed_store(folder)  # records without p1/p2 specs: their sides are unknown, shown as ""
    done = subprocess.run([sys.executable, "-m", "boopexp", "status", "--json", str(folder)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)[0]["pairings"]
    assert (row["p1"], row["p2"], row["done"], row["p1_wins"], row["p2_wins"], row["no_winner"]) == ("", "", 4, 2, 1, 1)


def test_duplicates_and_conflicts_found_on_columns_are_those_of_the_records(tmp_path):
    folder = tmp_path / "r"
    sealed_store(folder)  # games 0-3 sealed, with their summary
    store = GameStore(folder)
    with store.open() as w:
        w.append(rec(1, "p2", sweep={"budget.seconds": 0.5}))  # the same game again: a duplicate
        w.append(rec(2, "p2"))  # game 2 again with another winner: a conflict
        w.append(rec(7, "p1", pairing="b vs a"))
    with open(folder / "games.jsonl", "ab") as fh:
        fh.write(b'{"config_hash": "aa')  # a truncated last line
    scan = StoreReader(folder).records()
    columns = StoreReader(folder).outcomes()
    assert len(scan.warnings()) == 3 and columns.scan.warnings() == scan.warnings()
    assert (columns.scan.duplicates, columns.scan.conflicts) == (2, scan.conflicts)
    fields = ["config_hash", "pairing", "game_index", "winner"]
    assert [{k: r[k] for k in fields} for r in columns.records()] == [{k: r[k] for k in fields} for r in scan.records]


def test_status_counts_the_summaries_columns_never_one_row_a_game(tmp_path, monkeypatch):
    from boopexp.experiments.status import folder_status

    folder = tmp_path / "r"
    sealed_store(folder)

    def no_rows(*args, **kwargs):
        raise AssertionError("a summary was read row by row")

    patch_store(monkeypatch, "parse_line", no_rows)
    [row] = folder_status(folder).to_dict()["pairings"]
    assert (row["done"], row["p1_wins"], row["p2_wins"], row["no_winner"]) == (4, 2, 1, 1)


def _log_rows_decoded(path: Path, data: bytes, columns) -> list[dict]:
    return [{"line": n, **{k: game_summary(StoreReader.decode(path, n, raw))[k] for k in columns[1:]}}
            for n, raw in enumerate(data.splitlines(), start=1)]


def test_the_live_log_read_as_columns_equals_decoding_each_line_on_every_committed_store(tmp_path):
    """store._lines_summary (pyarrow's JSON reader, a few fields) gives what decoding every line
    gives: on each committed store's games as a log, in their stored form (schema 2) and as
    schema 1 (every field written out), and on lines with a sweep point, a forfeit, a null; the
    outcome columns (status, a resume) and every column of the summary (seal, issue 22)."""
    import json

    from boopexp.experiments.store import OUTCOME_COLUMNS, decode_record
    from boopexp.experiments.store.line_columns import _lines_summary
    from boopexp.experiments.store.summary import COLUMNS

    def as_text(rows):  # forfeit and sweep are JSON text in the columns
        return [{**r, **{c: None if r[c] is None else json.dumps(r[c]) for c in ("forfeit", "sweep")}} for r in rows]

    path = tmp_path / "games.jsonl"
    odd = b"".join(encode_record(r) for r in (
        rec(0, sweep={"budget.seconds": 0.5}), rec(1, None, termination="ply_limit"),
        rec(2, "p2", termination="agent_error", forfeit={"side": "p1", "error": "boom"}),
        rec(3, "p1", p1=None, p1_spec={"name": "a"}), rec(4, "p2", p1_spec={"name": "a"}, p2_spec={"name": "b"}),
        # what the summary's other columns read: plies left out, null, or other than the moves';
        # telemetry without device seconds, with a null among them, empty, or of ints
        rec(5, schema=2, moves=["a1", "b2"]), rec(6, schema=2, moves=["a1"], plies=None),
        rec(7, schema=2, moves=["a1"], plies=4, experiment="x"), rec(9, schema=2, telemetry={"iterations": [3, 4]}),
        rec(10, schema=2, telemetry={"device_seconds": [0.5, None]}),
        rec(11, schema=2, telemetry={"device_seconds": []}), rec(12, schema=2, telemetry={"device_seconds": [1, 2]}),
        rec(13, schema=2, telemetry=None)))
    odd += b"".join(json.dumps(r).encode() + b"\n" for r in (  # schema 1 as stored: nothing derived
        rec(8, schema=1, moves=["a1"]), rec(14, schema=1, telemetry={"device_seconds": [1.5]})))
    logs = [odd]
    for folder in results_folders(ROOT / "results"):
        for segment in store_module.segment_paths(folder):
            lines = store_module.segment_data(segment).splitlines(keepends=True)[:100]  # a sample: fast
            logs.append(b"".join(lines))
            logs.append(b"".join(json.dumps(decode_record(json.loads(raw)), default=str).encode() + b"\n"
                                 for raw in lines[:20]) + odd)
    assert len(logs) > 100
    for data in logs:
        for columns in (OUTCOME_COLUMNS, COLUMNS):
            table = _lines_summary(path, data, 0, columns)
            if table is None:  # a schema-1 record's telemetry (a list of moves): decoded line by line
                assert columns == COLUMNS and b'"telemetry": [' in data
                continue
            assert as_text(_log_rows_decoded(path, data, columns)) == table.to_pylist()
    assert _lines_summary(path, logs[1], 0, COLUMNS) is not None
    # a line the reader cannot take is left to the exact decoding, which names it
    good = encode_record(rec(0))
    for bad in (b"{not json\n", b"\n", good.replace(b'"winner":"p1"', b'"winner":"p3"'),
                good.replace(b',"winner":"p1"', b""), good.replace(b":2,", b":3,", 1)):
        assert _lines_summary(path, encode_record(rec(9)) + bad, 0) is None


def test_tables_say_once_that_a_summary_does_not_match_its_segment(tmp_path):
    """Issue 22 review: tables read a segment whose summary is stale from the segment, as status
    does, but said nothing; now one warning line, as status gives (the counts are the segment's)."""
    folder = tmp_path / "r"
    store = sealed_store(folder)
    segment, summary = folder / "games-0001.jsonl.zst", folder / "summary-0001.parquet"
    records = StoreReader(store.directory).records().records
    segment.write_bytes(store_module.encode_segment(b"".join(encode_record(r) for r in records[:3])))
    done = subprocess.run([sys.executable, "-m", "boopexp", "tables", str(folder), "--out", str(tmp_path / "t")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "summary" in line]
    assert warnings == [f"Warning: {summary} does not match games-0001.jsonl.zst (written for another version of "
                        f"it); the segment is read instead (boopexp seal {folder} rewrites the summary)"], done.stderr
