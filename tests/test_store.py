"""The store: append + fsync, strict reading, truncated last lines, duplicates, other settings, config.yaml."""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from store_helpers import patch_store, summaries

from boopexp.errors import StoreError
from boopexp.experiments.config import PlanEntry
from boopexp.experiments.store import (
    FAULT_ENV,
    GameStore,
    StoreReader,
    encode_record,
    encode_segment,
    seal,
    segment_data,
    segment_paths,
    write_atomically,
)
from boopexp.experiments.store.summary import game_summary
from boopexp.experiments.tally import score, unplanned
from boopexp.play.identity import GameKey, record_key


def rec(index: int, winner: str = "p1", config_hash: str = "aaaa", pairing: str = "a vs b", **extra) -> dict:
    return {"config_hash": config_hash, "pairing": pairing, "game_index": index, "winner": winner, **extra}


def write_lines(path, records, tail: bytes = b"") -> bytes:
    data = b"".join(encode_record(r) for r in records) + tail
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


def snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_append_then_scan_round_trips_and_fsyncs_every_game(tmp_path, monkeypatch):
    store = GameStore(tmp_path / "res")
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr("boopexp.experiments.store.writer.os.fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    with store.open() as w:
        before = len(synced)
        w.append(rec(0, moves=["c3", "D4"]))
        w.append(rec(1, "p2"))
        # each game's line, then its row (store/log_rows.py), fsynced
        assert synced[before:] == [w._fd, w._rows_fd] * 2
    scan = StoreReader(store.directory).records()
    assert [record_key(r) for r in scan.records] == [("aaaa", "a vs b", 0), ("aaaa", "a vs b", 1)]
    assert scan.records[0]["moves"] == ["c3", "D4"]
    assert scan.tail is None and scan.duplicates == 0 and scan.warnings() == []
    lines = store.games_path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 3


def test_missing_file_is_an_empty_store(tmp_path):
    scan = StoreReader(tmp_path / "nothing").records()
    assert scan.records == () and scan.keys == frozenset()


def test_numpy_values_are_stored_as_plain_json(tmp_path):
    store = GameStore(tmp_path)
    with store.open() as w:
        w.append(rec(int(np.int64(0)), plies=np.int32(12), score=np.float64(0.5), moves=np.array([1, 2])))
    line = json.loads(store.games_path.read_text())
    assert line["plies"] == 12 and line["score"] == 0.5 and line["moves"] == [1, 2]


def test_invalid_record_is_refused_on_append(tmp_path):
    with GameStore(tmp_path).open() as w:
        with pytest.raises(StoreError, match="winner"):
            w.append(rec(0, winner="draw"))
    assert GameStore(tmp_path).games_path.read_bytes() == b""


def test_truncated_last_line_is_reported_ignored_and_moved_aside(tmp_path):
    store = GameStore(tmp_path)
    partial = b'{"config_hash": "aaaa", "pairing": "a vs b", "game_in'
    original = write_lines(store.games_path, [rec(0), rec(1)], tail=partial)
    scan = StoreReader(store.directory).records()
    assert [r["game_index"] for r in scan.records] == [0, 1]
    assert scan.tail is not None and scan.tail.line == 3 and scan.tail.data == partial
    (warning,) = scan.warnings()
    assert str(store.games_path) in warning and "line 3" in warning and "truncated" in warning
    with store.open() as w:
        moved = w.moved_tail
        w.append(rec(2))
    # the partial bytes are kept elsewhere, never lost; the next record starts on its own line
    assert moved is not None and moved.name.startswith("games.jsonl.corrupt-")
    assert moved.read_bytes() == partial
    data = store.games_path.read_bytes()
    assert data == original[: -len(partial)] + encode_record(rec(2))
    assert [r["game_index"] for r in StoreReader(store.directory).records().records] == [0, 1, 2]
    assert StoreReader(store.directory).records().tail is None


def test_a_lone_partial_line_is_a_truncated_tail_too(tmp_path):
    store = GameStore(tmp_path)
    store.games_path.write_bytes(b'{"config')
    assert StoreReader(store.directory).records().tail.line == 1
    with store.open() as w:
        w.append(rec(0))
    assert store.games_path.read_bytes() == encode_record(rec(0))


@pytest.mark.parametrize(
    "bad,reason",
    [(b"{not json", "not valid JSON"), (b'{"config_hash": "aaaa"}', "invalid game record"),
     (b"[1, 2]", "not a JSON object"),
     (b'{"config_hash":"a","pairing":"x vs y","game_index":-1,"winner":"p1"}', "game_index")],
)
def test_corrupt_middle_line_is_an_error_and_nothing_is_written(tmp_path, bad, reason):
    store = GameStore(tmp_path / "res")
    data = encode_record(rec(0)) + bad + b"\n" + encode_record(rec(1))
    store.directory.mkdir()
    store.games_path.write_bytes(data)
    before = snapshot(store.directory)
    with pytest.raises(StoreError) as info:
        StoreReader(store.directory).records()
    assert f"{store.games_path} line 2" in str(info.value) and reason in str(info.value)
    with pytest.raises(StoreError, match="line 2"):
        store.open()
    assert snapshot(store.directory) == before  # not even a lock file


def test_complete_but_invalid_last_line_is_an_error_not_a_truncation(tmp_path):
    store = GameStore(tmp_path)
    store.games_path.write_bytes(encode_record(rec(0)) + b"garbage\n")
    with pytest.raises(StoreError, match="line 2"):
        StoreReader(store.directory).records()


def test_blank_lines_are_skipped(tmp_path):
    store = GameStore(tmp_path)
    store.games_path.write_bytes(encode_record(rec(0)) + b"\n  \n" + encode_record(rec(1)))
    assert len(StoreReader(store.directory).records().records) == 2


def test_duplicate_records_count_once(tmp_path):
    store = GameStore(tmp_path)
    write_lines(store.games_path, [rec(0, "p1"), rec(1, "p2"), rec(0, "p2")])
    scan = StoreReader(store.directory).records()
    assert len(scan.records) == 2 and scan.duplicates == 1
    assert scan.records[0]["winner"] == "p1"  # the first copy is the one kept
    assert any("1 duplicate" in w for w in scan.warnings())
    (s,) = score([PlanEntry("a vs b", "a", "b", "aaaa", 5)], scan.records)
    assert (s.done, s.p1_wins, s.p2_wins) == (2, 1, 1)


def test_a_game_without_a_winner_is_stored_and_counted_apart(tmp_path):
    store = GameStore(tmp_path)
    with store.open() as w:
        w.append(rec(0, None, termination="ply_limit"))
        w.append(rec(1, "p2"))
        with pytest.raises(StoreError, match="no 'winner' key"):
            w.append({k: v for k, v in rec(2).items() if k != "winner"})
    (s,) = score([PlanEntry("a vs b", "a", "b", "aaaa", 5)], StoreReader(store.directory).records().records)
    assert (s.done, s.p1_wins, s.p2_wins, s.no_winner) == (2, 0, 1, 1)


def test_records_of_other_settings_or_beyond_the_plan_are_not_counted(tmp_path):
    store = GameStore(tmp_path)
    write_lines(store.games_path, [rec(0), rec(1, config_hash="bbbb"), rec(2, "p2"), rec(7), rec(0, pairing="b vs a")])
    entries = [PlanEntry("a vs b", "a", "b", "aaaa", 5)]
    (s,) = score(entries, StoreReader(store.directory).records().records)
    assert (s.planned, s.done, s.p1_wins, s.p2_wins) == (5, 2, 1, 1)
    assert unplanned(entries, StoreReader(store.directory).records().records) == 3  # other hash, index 7, other pairing


def test_write_config_is_atomic_and_keeps_a_different_old_one(tmp_path):
    store = GameStore(tmp_path / "res")
    assert store.write_config({"name": "x", "seed": 1}) is None
    first = store.config_path.read_bytes()
    assert store.read_config() == {"name": "x", "seed": 1}
    assert store.write_config({"name": "x", "seed": 1}) is None  # same content: nothing to keep
    backup = store.write_config({"name": "x", "seed": 2})
    assert backup is not None and backup.read_bytes() == first
    assert store.read_config()["seed"] == 2
    # going back and forth never overwrites a kept file and leaves no temporary file behind
    assert store.write_config({"name": "x", "seed": 1}) is not None
    assert backup.read_bytes() == first
    names = sorted(p.name for p in store.directory.iterdir())
    assert len(names) == 3 and not any(".tmp" in n for n in names)


def test_write_atomically_writes_through_links_and_streams_into_devices(tmp_path, capfd):
    """The one writer of a whole file (export --out, openings --out, tune's outputs, config.yaml):
    a link is written through (issue 33: --out /dev/stdout replaced the system's link with a
    file), a dangling link's target created, - is standard output, a FIFO is streamed into."""
    target = tmp_path / "real.txt"
    target.write_bytes(b"old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_atomically(link, b"new")
    assert link.is_symlink() and target.read_bytes() == b"new"
    (tmp_path / "sub").mkdir()
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "sub" / "made.txt")
    write_atomically(dangling, b"made")
    assert dangling.is_symlink() and (tmp_path / "sub" / "made.txt").read_bytes() == b"made"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["dangling", "link.txt", "made.txt", "real.txt", "sub"]
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_bytes()))
    reader.start()
    write_atomically(fifo, b"through the fifo")
    reader.join(60)
    assert read == [b"through the fifo"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    from boopexp.experiments.store import is_stream

    assert is_stream(fifo) and is_stream("-") and is_stream(os.devnull) and not is_stream(target)
    capfd.readouterr()
    write_atomically(Path("-"), b"to stdout")
    assert capfd.readouterr().out == "to stdout" and not Path("-").exists()


def test_unreadable_config_yaml_is_a_store_error(tmp_path):
    store = GameStore(tmp_path)
    store.config_path.write_text("a: [1\n")
    with pytest.raises(StoreError, match="config.yaml"):
        store.read_config()


def test_one_writer_at_a_time(tmp_path):
    store = GameStore(tmp_path)
    with store.open():
        with pytest.raises(StoreError, match="another boopexp process"):
            GameStore(tmp_path).open()
    with GameStore(tmp_path).open() as w:  # released on close
        w.append(rec(0))


# --------------------------------------------------------------------------------------------
# sealed segments: seal, reading segments + log, crash safety


def test_seal_moves_the_log_into_a_segment_byte_for_byte(tmp_path):
    store = GameStore(tmp_path)
    data = write_lines(store.games_path, [rec(0), rec(1, "p2")])
    report = seal(tmp_path)
    assert report.segment == tmp_path / "games-0001.jsonl.zst" and (report.games, report.dropped) == (2, 0)
    assert segment_data(report.segment) == data
    assert store.games_path.read_bytes() == b""
    assert [record_key(r)[2] for r in StoreReader(store.directory).records().records] == [0, 1]
    # nothing left to seal; new games go to the log and into the next segment
    assert seal(tmp_path).segment is None
    with store.open() as w:
        w.append(rec(2))
    assert seal(tmp_path).segment == tmp_path / "games-0002.jsonl.zst"
    scan = StoreReader(store.directory).records()
    assert [record_key(r)[2] for r in scan.records] == [0, 1, 2] and scan.duplicates == 0


def test_segments_are_read_in_number_order_before_the_log_and_duplicates_count_once(tmp_path):
    (tmp_path / "games-0010.jsonl.gz").write_bytes(gzip.compress(encode_record(rec(2, "p2"))))
    (tmp_path / "games-0002.jsonl.gz").write_bytes(gzip.compress(encode_record(rec(1)) + encode_record(rec(0))))
    write_lines(tmp_path / "games.jsonl", [rec(2, "p1"), rec(3)])
    (tmp_path / ".games-0011.jsonl.gz.tmp").write_bytes(b"half a segment")  # a seal killed mid-way
    scan = StoreReader(tmp_path).records()
    assert [(r["game_index"], r["winner"]) for r in scan.records] == [(1, "p1"), (0, "p1"), (2, "p2"), (3, "p1")]
    assert scan.duplicates == 1


def test_a_damaged_segment_is_an_error(tmp_path):
    (tmp_path / "games-0001.jsonl.gz").write_bytes(gzip.compress(encode_record(rec(0)))[:-6])
    with pytest.raises(StoreError, match="games-0001.jsonl.gz: damaged sealed segment"):
        StoreReader(tmp_path).records()


@pytest.mark.parametrize("damage", ["cut", "flipped", "trailer"])
def test_a_damaged_zstd_segment_is_an_error(tmp_path, damage):
    """A segment sealed as zstd (issue 22) is checked as a gzip one was: cut short, a byte changed
    (zstd's own check, or the CRC-32 of its trailer) or a wrong trailer is one line naming it."""
    store = GameStore(tmp_path)
    write_lines(store.games_path, [rec(i) for i in range(50)])
    segment = seal(tmp_path).segment
    data = bytearray(segment.read_bytes())
    if damage == "cut":
        data = data[:-20]
    elif damage == "flipped":
        data[len(data) // 2] ^= 0x01
    else:
        data[-3] ^= 0x01  # the recorded length
    segment.write_bytes(bytes(data))
    (tmp_path / "summary-0001.parquet").unlink()
    reader = StoreReader(store.directory)
    for read in (reader.records, lambda: segment_data(segment), lambda: list(reader.blocks(segment))):
        with pytest.raises(StoreError, match=rf"^{re.escape(str(segment))}: damaged sealed segment \("):
            read()


def test_seal_keeps_a_truncated_tail_aside_and_refuses_a_corrupt_log(tmp_path):
    store = GameStore(tmp_path)
    write_lines(store.games_path, [rec(0)], tail=b'{"config_hash": "aa')
    report = seal(tmp_path)
    assert report.games == 1 and report.moved_tail is not None
    assert report.moved_tail.read_bytes() == b'{"config_hash": "aa'
    write_lines(store.games_path, [rec(1)], tail=b"garbage\n")
    before = snapshot(tmp_path)
    with pytest.raises(StoreError, match="line 2: not valid JSON"):
        seal(tmp_path)
    assert snapshot(tmp_path) == before


def test_seal_waits_for_no_run_and_needs_a_store(tmp_path):
    with pytest.raises(StoreError, match="no store"):
        seal(tmp_path)
    store = GameStore(tmp_path)
    with store.open() as w:
        w.append(rec(0))
        with pytest.raises(StoreError, match="another boopexp process"):
            seal(tmp_path)


SEAL_STEPS = ["seal-summary:written", "seal-summary:synced", "seal-summary:renamed", "seal:written", "seal:synced",
              "seal:renamed", "seal:truncated"]


def _stored_lines(folder) -> list[GameKey]:
    """Every game line physically present in the folder (segments and log), duplicates included."""
    keys = []
    for path in segment_paths(folder):
        keys += [record_key(json.loads(x)) for x in segment_data(path).splitlines()]
    keys += [record_key(json.loads(x)) for x in (folder / "games.jsonl").read_bytes().splitlines()]
    return keys


def _killed_at(step: str, command: str, folder) -> None:
    env = {**os.environ, FAULT_ENV: step}
    done = subprocess.run([sys.executable, "-m", "boopexp", command, str(folder)], env=env, capture_output=True)
    assert done.returncode == -signal.SIGKILL, (step, done.stderr.decode())


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX only")
@pytest.mark.parametrize("step", SEAL_STEPS)
def test_a_seal_killed_at_any_step_leaves_every_game_exactly_once(tmp_path, step):
    store = GameStore(tmp_path)
    (tmp_path / "games-0001.jsonl.gz").write_bytes(gzip.compress(encode_record(rec(0)) + encode_record(rec(1))))
    write_lines(store.games_path, [rec(2), rec(3, "p2"), rec(4)])
    games = [("aaaa", "a vs b", i) for i in range(5)]
    _killed_at(step, "seal", tmp_path)
    scan = StoreReader(store.directory).records()
    assert [record_key(r) for r in scan.records] == games and scan.records[3]["winner"] == "p2"
    # the interrupted seal is finished by the next one: then every game is stored exactly once
    seal(tmp_path)
    assert sorted(_stored_lines(tmp_path)) == games
    scan = StoreReader(store.directory).records()
    assert [record_key(r) for r in scan.records] == games and scan.duplicates == 0
    assert not list(tmp_path.glob(".games-*")) and not list(tmp_path.glob(".summary-*"))
    # every segment has the summary of its games, and no summary is left without its segment
    assert sorted(p.name for p in tmp_path.glob("summary-*")) == ["summary-0001.parquet", "summary-0002.parquet"]
    assert summaries(store.directory) == [game_summary(r) for r in scan.records]
    assert StoreReader(store.directory).outcomes().scan.warnings() == []
    with store.open() as w:  # and the store takes new games
        w.append(rec(5))
    assert len(StoreReader(store.directory).records().records) == 6


def test_a_live_log_plus_segments_resume_only_the_missing_games(tmp_path, monkeypatch):
    from conftest import DEMO_CONFIG, fake_play_game

    from boopexp.experiments.config import load_yaml, parse_config
    from boopexp.experiments.runner import run_plan
    from boopexp.play import match

    c = parse_config(load_yaml(DEMO_CONFIG, "t.yaml"), "t.yaml")
    tasks = c.tasks(c.plan())
    with GameStore(tmp_path).open() as w:
        for t in tasks[:3]:
            w.append(fake_play_game(t))
    seal(tmp_path)
    with GameStore(tmp_path).open() as w:
        for t in tasks[2:5]:  # one game both sealed and in the log
            w.append(fake_play_game(t))
    played = []
    monkeypatch.setattr(match, "play_game", lambda task: (played.append(task.key), fake_play_game(task))[1])
    report = run_plan(c, c.plan(), tmp_path)
    assert report.skipped == 5 and sorted(played) == sorted(t.key for t in tasks[5:])
    scan = StoreReader(tmp_path).records()
    assert {record_key(r) for r in scan.records} == {t.key for t in tasks} and scan.duplicates == 1


def test_a_conflicting_duplicate_is_warned_about_with_both_copies_and_the_first_counted(tmp_path):
    segment = tmp_path / "games-0001.jsonl.gz"
    segment.write_bytes(gzip.compress(encode_record(rec(0)) + encode_record(rec(1))))
    write_lines(tmp_path / "games.jsonl", [rec(1, "p2"), rec(2)])
    scan = StoreReader(tmp_path).records()
    assert [r["winner"] for r in scan.records] == ["p1", "p1", "p1"]
    assert scan.origin(("aaaa", "a vs b", 1)) == (segment, 2) and scan.origin(("aaaa", "a vs b", 9)) is None
    assert scan.duplicate_files == (segment, tmp_path / "games.jsonl")
    assert scan.warnings() == [
        f"{segment}, {tmp_path / 'games.jsonl'}: 1 duplicate game record(s) ignored (each game counted once)",
        f"{tmp_path / 'games.jsonl'} line 1: game 'a vs b' #1 (settings aaaa) is stored again with winner 'p2', "
        f"but {segment} line 2 has 'p1'; the first copy is counted",
    ]


def test_a_run_refuses_a_zero_byte_segment_instead_of_playing_its_games_again(tmp_path, monkeypatch):
    from conftest import DEMO_CONFIG, fake_play_game

    from boopexp.experiments.config import load_yaml, parse_config
    from boopexp.experiments.runner import run_plan
    from boopexp.play import match

    c = parse_config(load_yaml(DEMO_CONFIG, "t.yaml"), "t.yaml")
    with GameStore(tmp_path).open() as w:
        for t in c.tasks(c.plan())[:3]:
            w.append(fake_play_game(t))
    seal(tmp_path)
    (tmp_path / "games-0001.jsonl.gz").write_bytes(b"")  # the segment's bytes lost
    before = snapshot(tmp_path)
    played = []
    monkeypatch.setattr(match, "play_game", lambda task: (played.append(task), fake_play_game(task))[1])
    with pytest.raises(StoreError, match=r"games-0001.jsonl.gz: damaged sealed segment \(0 bytes"):
        run_plan(c, c.plan(), tmp_path)
    assert played == [] and snapshot(tmp_path) == before


def test_stored_keys_answer_per_pairing_on_sorted_index_arrays(tmp_path):
    segment = tmp_path / "games-0001.jsonl.gz"
    segment.write_bytes(gzip.compress(b"".join(encode_record(rec(i)) for i in (5, 0, 3))))
    write_lines(tmp_path / "games.jsonl", [rec(1, pairing="b vs a"), rec(3), rec(2, config_hash="bbbb")])
    keys = StoreReader(tmp_path).outcomes().keys()
    assert len(keys) == 5  # index 3 of "a vs b" is stored twice, counted once
    assert ("aaaa", "a vs b", 3) in keys and ("aaaa", "a vs b", 4) not in keys and ("cccc", "a vs b", 0) not in keys
    assert list(keys.missing("aaaa", "a vs b", range(8))) == [1, 2, 4, 6, 7]
    assert list(keys.missing("aaaa", "a vs b", range(1, 8, 2))) == [1, 7]  # a shard's indices
    assert list(keys.missing("bbbb", "a vs b", range(4))) == [0, 1, 3]
    assert list(keys.missing("aaaa", "x vs y", range(3))) == [0, 1, 2]


def test_a_run_reads_its_store_again_under_the_lock_but_only_what_changed(tmp_path, monkeypatch):
    """The read before the lock validates; the read under it sees what another process appended
    meanwhile, decoding only the new lines (issue 22: every line was decoded twice)."""
    from boopexp.experiments.store import files, lines

    seal_folder = tmp_path / "s"
    write_lines(seal_folder / "games.jsonl", [rec(0), rec(1)])
    seal(seal_folder)
    write_lines(seal_folder / "games.jsonl", [rec(2), rec(3)])
    parsed = []
    real_parse, real_lock = lines.parse_line, files._lock
    patch_store(monkeypatch, "parse_line",
                lambda path, n, raw, **kw: (parsed.append(n), real_parse(path, n, raw, **kw))[1])

    def lock_after_another_run(path, hint):  # another process appends between the reads
        with open(seal_folder / "games.jsonl", "ab") as fh:
            fh.write(encode_record(rec(4)) + encode_record(rec(2)))
        return real_lock(path, hint)

    patch_store(monkeypatch, "_lock", lock_after_another_run)
    with GameStore(seal_folder).open() as w:
        assert [r["game_index"] for r in w.stored.records()] == [0, 1, 2, 3, 4]
        assert w.stored.scan.duplicates == 1 and w.stored.scan.duplicate_files == (seal_folder / "games.jsonl",)
    assert parsed == [1, 2, 3, 4]  # the sealed games from their summary, each line of the log once


def test_a_seal_between_the_two_reads_is_read_again_in_full(tmp_path, monkeypatch):
    from boopexp.experiments.store import files

    write_lines(tmp_path / "games.jsonl", [rec(0), rec(1)])
    real_lock = files._lock

    def lock_after_a_seal(path, hint):  # a seal and another run, between the reads
        patch_store(monkeypatch, "_lock", real_lock)
        seal(tmp_path)
        write_lines(tmp_path / "games.jsonl", [rec(2, "p2"), rec(3)])
        return real_lock(path, hint)

    patch_store(monkeypatch, "_lock", lock_after_a_seal)
    with GameStore(tmp_path).open() as w:
        assert [(r["game_index"], r["winner"]) for r in w.stored.records()] == [(0, "p1"), (1, "p1"), (2, "p2"),
                                                                               (3, "p1")]
        assert w.stored.scan.warnings() == []


def test_a_resumed_run_makes_no_task_for_a_stored_game(tmp_path, monkeypatch):
    """The plan asks the stored index arrays before it makes a task (and computes its seed)."""
    from conftest import DEMO_CONFIG, fake_play_game

    from boopexp.experiments.config import load_yaml, parse_config
    from boopexp.experiments.runner import run_plan
    from boopexp.play import contract, match

    c = parse_config(load_yaml(DEMO_CONFIG, "t.yaml"), "t.yaml")
    tasks = c.tasks(c.plan())
    with GameStore(tmp_path).open() as w:
        for t in tasks[:-2]:
            w.append(fake_play_game(t))
    made = []
    real_new = contract.GameTask.new.__func__
    monkeypatch.setattr(contract.GameTask, "new", classmethod(lambda cls, *a, **k: (made.append(a[4]),
                                                                                   real_new(cls, *a, **k))[1]))
    monkeypatch.setattr(match, "play_game", fake_play_game)
    report = run_plan(c, c.plan(), tmp_path)
    assert report.skipped == len(tasks) - 2 and report.played == 2 and report.complete
    assert len(made) == 2


def test_a_long_log_is_sealed_into_segments_of_bounded_size_each_with_its_summary(tmp_path, monkeypatch):
    """Seal streams the log: at most SEGMENT_GAMES games a segment (what it holds in memory),
    sealed games' keys from their summaries, the lines byte for byte (issue 22: seal of 1M held
    every record)."""
    from boopexp.experiments.store import lines

    patch_store(monkeypatch, "SEGMENT_GAMES", 2)
    store = GameStore(tmp_path)
    write_lines(store.games_path, [rec(0), rec(1)])
    seal(tmp_path)
    games = [rec(2), rec(1), rec(3, "p2"), rec(2), rec(4), rec(5), rec(6, None)]
    with store.open() as w:  # each line with its row (store/log_rows.py)
        w.append_all(games)
    log = store.games_path.read_bytes()
    parsed = []
    real_parse = lines.parse_line
    patch_store(monkeypatch, "parse_line",
                lambda path, n, raw, **kw: (parsed.append(path.name), real_parse(path, n, raw, **kw))[1])
    report = seal(tmp_path)
    assert parsed == []  # no sealed game decoded, nor a line of the log: its rows are copied
    assert [p.name for p in report.segments] == ["games-0002.jsonl.zst", "games-0003.jsonl.zst", "games-0004.jsonl.zst"]
    assert report.segment == report.segments[0] and report.games == 5 and report.dropped == 2
    moved = b"".join(segment_data(p) for p in report.segments)
    assert moved == b"".join(line + b"\n" for i, line in enumerate(log.splitlines()) if i not in (1, 3))
    assert segment_data(report.segments[0]) == encode_record(rec(2)) + encode_record(rec(3, "p2"))
    assert report.segments[0].read_bytes() == encode_segment(encode_record(rec(2)) + encode_record(rec(3, "p2")))
    assert store.games_path.read_bytes() == b""
    scan = StoreReader(store.directory).records()
    assert [record_key(r)[2] for r in scan.records] == list(range(7)) and scan.duplicates == 0
    assert summaries(store.directory) == [game_summary(r) for r in scan.records]
    assert StoreReader(store.directory).outcomes().scan.warnings() == []


@pytest.mark.parametrize("copy", ["sealed", "log"])
def test_seal_refuses_a_conflict_found_while_streaming_with_nothing_written(tmp_path, monkeypatch, copy):

    patch_store(monkeypatch, "SEGMENT_GAMES", 1)  # temporaries written before the conflict
    store = GameStore(tmp_path)
    if copy == "sealed":
        write_lines(store.games_path, [rec(0)])
        seal(tmp_path)
        write_lines(store.games_path, [rec(1), rec(2), rec(0, "p2"), rec(3)])
        first = f"{tmp_path / 'games-0001.jsonl.zst'} line 1"
    else:
        write_lines(store.games_path, [rec(1), rec(0), rec(2), rec(0, "p2"), rec(3)])
        first = f"{store.games_path} line 2"
    (tmp_path / "games.jsonl.lock").touch()  # seal's advisory lock (empty): no data
    before = snapshot(tmp_path)
    with pytest.raises(StoreError) as error:
        seal(tmp_path)
    line = 3 if copy == "sealed" else 4
    assert str(error.value) == (f"{store.games_path} line {line}: game 'a vs b' #0 (settings aaaa) is stored again "
                                f"with winner 'p2', but {first} has 'p1'; nothing sealed: remove the wrong copy, "
                                "then seal again")
    assert snapshot(tmp_path) == before
