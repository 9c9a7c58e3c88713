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


def test_the_live_logs_rows_give_what_decoding_each_line_gives_on_every_committed_store(tmp_path, monkeypatch):
    """The rows a writer keeps beside the live log (store/log_rows.py) hold what decoding each line
    gives (game_summary of parse_line), every summary column, and are then read instead of the
    lines: on each committed store's games as a log, in their stored form (schema 2) and as
    schema 1 (every field written out), and on lines with a sweep point, a forfeit, a null. The
    rows come from a writer opening a log without them (``write_rows``) and from its appends
    (``row_bytes``)."""
    import json

    from boopexp.experiments.store import decode_record, lines
    from boopexp.experiments.store.log_rows import ROWS_FILE, log_summary, read_rows

    odd_records = (
        rec(0, sweep={"budget.seconds": 0.5}), rec(1, None, termination="ply_limit"),
        rec(2, "p2", termination="agent_error", forfeit={"side": "p1", "error": "boom"}),
        rec(3, "p1", p1=None, p1_spec={"name": "a"}), rec(4, "p2", p1_spec={"name": "a"}, p2_spec={"name": "b"}),
        rec(5, schema=2, moves=["a1", "b2"]), rec(6, schema=2, moves=["a1"], plies=None),
        rec(7, schema=2, moves=["a1"], plies=4, experiment="x"), rec(9, schema=2, telemetry={"iterations": [3, 4]}),
        rec(10, schema=2, telemetry={"device_seconds": [0.5, None]}),
        rec(11, schema=2, telemetry={"device_seconds": []}), rec(12, schema=2, telemetry={"device_seconds": [1, 2]}),
        rec(13, schema=2, telemetry=None))
    odd = b"".join(encode_record(r) for r in odd_records)
    odd += b"".join(json.dumps(r).encode() + b"\n" for r in (  # schema 1 as stored: nothing derived
        rec(8, schema=1, moves=["a1"]), rec(14, schema=1, telemetry={"device_seconds": [1.5]})))
    logs = [odd]
    for folder in COMMITTED:
        for segment in store_module.segment_paths(folder):
            sample = store_module.segment_data(segment).splitlines(keepends=True)[:100]  # a sample: fast
            logs.append(b"".join(sample))
            logs.append(b"".join(json.dumps(decode_record(json.loads(raw)), default=str).encode() + b"\n"
                                 for raw in sample[:20]))
    assert len(logs) > 100
    folder = tmp_path / "log"
    folder.mkdir()
    path = folder / "games.jsonl"
    path.write_bytes(b"".join(logs))
    with GameStore(folder).open() as w:  # the rows of the lines an older version wrote
        assert (folder / ROWS_FILE).is_file()
        w.append_all([rec(100 + i, **{k: v for k, v in r.items() if k not in ("config_hash", "pairing", "game_index")})
                      for i, r in enumerate(odd_records)])
        w.append(rec(200, "p2", forfeit={"side": "p2", "error": "x"}, termination="agent_error"))
    data = path.read_bytes()
    decoded, _ = log_summary(path, data, 0, 0, None)
    real_parse = lines.parse_line
    patch_store(monkeypatch, "parse_line", lambda *a, **k: pytest.fail("a line with its row was decoded"))
    rows = read_rows(folder)
    assert rows is not None and len(rows) == data.count(b"\n") == len(decoded)
    from_rows, exact = log_summary(path, data, 0, 0, rows)
    assert exact and from_rows.equals(decoded)
    assert [r["game_index"] for r in from_rows.to_pylist()[-2:]] == [112, 200]
    patch_store(monkeypatch, "parse_line", real_parse)
    assert summaries(folder) == [game_summary(r) for r in StoreReader(folder).records().records]


def test_a_counted_field_is_declared_once():
    """summary.FIELDS is the one table: the summary's columns, the outcome columns, game_summary's
    keys and the live log's rows all follow from it (a new counted field is one row there)."""
    import json

    from boopexp.experiments.store import COLUMNS, OUTCOME_COLUMNS
    from boopexp.experiments.store.log_rows import row_bytes
    from boopexp.experiments.store.summary import COLUMN_TYPES, FIELDS

    names = [f.name for f in FIELDS]
    assert list(COLUMNS) == ["line", *names] and list(COLUMN_TYPES) == list(COLUMNS)
    assert list(OUTCOME_COLUMNS) == ["line", *(f.name for f in FIELDS if f.counted)]
    assert list(game_summary(rec(0))) == names
    assert list(summary_table(()).schema.names) == list(COLUMNS)
    row = json.loads(row_bytes(Path("games.jsonl"), 1, encode_record(rec(0)), 0))
    assert list(row) == ["offset", "length", "crc", *names]


def _rows_folder(tmp_path: Path, n: int = 4) -> Path:
    folder = tmp_path / "r"
    with GameStore(folder).open() as w:
        for i in range(n):
            w.append(rec(i, "p2" if i % 2 else "p1"))
    return folder


def _winners(folder: Path) -> list[tuple[int, str | None]]:
    return [(r["game_index"], r["winner"]) for r in StoreReader(folder).outcomes().records()]


def test_a_line_without_its_row_is_decoded_and_a_row_without_its_line_ignored(tmp_path, monkeypatch):
    """The rows are a cache of the log: a line appended without its row (an older version, a
    process killed between the two writes) is decoded, alone; a row whose line is gone (a log cut
    by hand) or was edited (its CRC) is ignored; the next writer rewrites the rows to match."""
    from boopexp.experiments.store import lines
    from boopexp.experiments.store.log_rows import ROWS_FILE, read_rows

    folder = _rows_folder(tmp_path)
    log, rows_file = folder / "games.jsonl", folder / ROWS_FILE
    with open(log, "ab") as fh:
        fh.write(encode_record(rec(4, "p2")))
    parsed = []
    real_parse = lines.parse_line
    patch_store(monkeypatch, "parse_line",
                lambda path, n, raw, **k: (parsed.append(n), real_parse(path, n, raw, **k))[1])
    assert _winners(folder) == [(0, "p1"), (1, "p2"), (2, "p1"), (3, "p2"), (4, "p2")]
    assert parsed == [5]
    # a line edited in place (same length, another winner): its row no longer matches it
    data = log.read_bytes()
    second = data.index(b"\n") + 1
    log.write_bytes(data[:second] + data[second:].replace(b'"winner":"p2"', b'"winner":"p1"', 1))
    parsed.clear()
    assert _winners(folder)[1] == (1, "p1") and parsed == [2, 5]
    # rows without their lines (the log cut after its first two lines)
    log.write_bytes(log.read_bytes()[:log.read_bytes().index(b"\n", second) + 1])
    parsed.clear()
    assert _winners(folder) == [(0, "p1"), (1, "p1")] and parsed == [2]
    with GameStore(folder).open() as w:  # the rows rewritten: one a line
        w.append(rec(7))
    assert len(read_rows(folder)) == 3 and rows_file.read_bytes().count(b"\n") == 3
    parsed.clear()
    assert _winners(folder) == [(0, "p1"), (1, "p1"), (7, "p1")] and parsed == []
    # rows that cannot be read (damaged): every line decoded, the same outcomes
    rows_file.write_bytes(b"{not rows\n" + rows_file.read_bytes())
    assert _winners(folder) == [(0, "p1"), (1, "p1"), (7, "p1")] and parsed == [1, 2, 3]


def test_a_writer_killed_between_a_line_and_its_row_leaves_a_store_that_reads_correctly(tmp_path):
    """A process killed after fsyncing a game's line and before its row (fault point
    ``append:line``): the game is stored, read by decoding its line; a seal moves it with the rest."""
    from boopexp.experiments.store import FAULT_ENV
    from boopexp.experiments.store.log_rows import ROWS_FILE, read_rows

    folder = _rows_folder(tmp_path, 2)
    child = ("import sys; from boopexp.experiments.store import GameStore\n"
             "with GameStore(sys.argv[1]).open() as w:\n"
             "    w.append({'config_hash': 'aaaa', 'pairing': 'a vs b', 'game_index': 5, 'winner': 'p2'})\n")
    done = subprocess.run([sys.executable, "-c", child, str(folder)], env={**__import__("os").environ,
                          FAULT_ENV: "append:line"}, capture_output=True, timeout=120)
    assert done.returncode != 0
    assert len(read_rows(folder)) == 2 and (folder / "games.jsonl").read_bytes().count(b"\n") == 3
    assert _winners(folder) == [(0, "p1"), (1, "p2"), (5, "p2")]
    assert StoreReader(folder).outcomes().scan.warnings() == []
    seal(folder)
    assert _winners(folder) == [(0, "p1"), (1, "p2"), (5, "p2")]
    assert (folder / ROWS_FILE).read_bytes() == b"" and read_rows(folder) is None


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


def test_seal_copies_the_logs_rows_into_the_summary_without_decoding_a_line(tmp_path, monkeypatch):
    """seal takes each game's row written with its line (the log read a block of lines at a
    time, several blocks here), decodes no line, and empties the rows with the log."""
    import functools

    from boopexp.experiments.store import scan
    from boopexp.experiments.store.log_rows import ROWS_FILE

    folder = _rows_folder(tmp_path, 20)
    expected = summaries(folder)
    patch_store(monkeypatch, "_LogBlocks", functools.partial(scan._LogBlocks, block_bytes=300))
    patch_store(monkeypatch, "parse_line", lambda *a, **k: pytest.fail("a line with its row was decoded"))
    assert seal(folder).games == 20
    assert (folder / ROWS_FILE).read_bytes() == b""
    assert summaries(folder) == expected
