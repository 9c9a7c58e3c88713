"""``seal`` (the live log into sealed segments, each with its summary) and ``migrate`` (every game
in the current schema, one segment), crash-safe under the lock.

Rewriting a store's files: ``seal`` moves the live log's games into new sealed segments, each
with its summary (``_SegmentWriter``), ``migrate`` rewrites every game in the current schema into
one segment; both crash-safe (temporary files, fsync, rename, then truncate) under the lock.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boopexp.errors import StoreError
from boopexp.experiments.store.columns import (
    _WINNER_CODE,
    _WINNERS_BY_CODE,
    _combine_columns,
    _segment_table,
    _winner_codes,
)
from boopexp.experiments.store.files import (
    GAMES_FILE,
    LOCK_FILE,
    _fault_point,
    _fsync_dir,
    _lock,
    _move_tail,
    _remove_temporaries,
    _rename_durably,
    _truncate,
    _write_durably,
    _write_temporary,
)
from boopexp.experiments.store.lines import encode_record
from boopexp.experiments.store.log_rows import ROWS_FILE, log_summary, read_rows
from boopexp.experiments.store.reader import StoreReader
from boopexp.experiments.store.scan import Conflict, _LogBlocks
from boopexp.experiments.store.segments import (
    SEGMENT_NAME,
    _next_segment_number,
    _read_segment,
    _remove_orphan_summaries,
    _SegmentEncoder,
    encode_segment,
    has_games_files,
    segment_paths,
)
from boopexp.experiments.store.summary import (
    COLUMNS,
    game_summary,
    read_summary_table,
    summary_bytes,
    summary_path,
    table_summary_bytes,
)


@dataclass(frozen=True)
class SealReport:
    """What :func:`seal` did.

    Attributes:
        segment: the (first) new sealed segment, or None if the log had no game to move.
        games: games moved into the new segments.
        dropped: lines of the log not moved: games already sealed (a seal cut short between its
            rename and its truncation) or repeated within the log.
        moved_tail: where a truncated last line of the log was set aside, if there was one.
        segments: every new segment (several when the log held more than :data:`SEGMENT_GAMES`).
    """

    segment: Path | None
    games: int
    dropped: int
    moved_tail: Path | None = None
    segments: tuple[Path, ...] = ()


def seal(directory: str | Path) -> SealReport:
    """Move the finished games of a store's live log into new sealed segments, crash-safely.

    The log is read line by line and its games written into segments of at most
    :data:`SEGMENT_GAMES` games each, so memory stays bounded at any size: the sealed games' keys
    come from their summaries' columns (:class:`StoredKeys`), never from decoding them.

    Steps (each a fault point of :data:`FAULT_ENV` for the tests): each new segment and its
    summary (``summary-NNNN.parquet``, :mod:`boopexp.experiments.store.summary`) are written to
    temporary files and fsynced (``seal-summary:written``, ``seal-summary:synced``,
    ``seal:written``, ``seal:synced``) while the log is read; once every line is known valid and
    no game is stored twice with another winner, each summary then its segment is renamed into
    place (``seal-summary:renamed``, ``seal:renamed``), then the log is truncated
    (``seal:truncated``). A crash before a rename leaves only ignored temporary files; after
    one, the moved games are in a segment and still in the log, read once; the next seal drops
    those copies. A summary whose segment was never renamed into place is never read, and is
    removed by the next seal or migrate. Lines are moved byte for byte (:func:`migrate` rewrites
    them). A segment without a summary that matches it (sealed by an older version, restored
    from a copy) is decoded and given one.

    Raises:
        StoreError: the folder holds no store, a line is invalid (nothing is changed), two copies
            of a game have different winners (nothing is changed), or a run is writing the store.
    """
    directory = Path(directory)
    with _maintenance(directory, "seal"):
        # Every summary column: a segment without a summary is decoded once, and given this one.
        files = [_segment_table(path, None, COLUMNS) for path in segment_paths(directory)]
        sealed = _combine_columns(directory, files, None)
        keys = sealed.keys()
        winner_codes = _winner_codes(sealed.table["winner"])
        log_path = directory / GAMES_FILE
        writer = _SegmentWriter(directory, "seal", _next_segment_number(directory))
        conflicts = list(sealed.scan.conflicts)
        seen: dict[Any, int] = {}  # a game of the log -> its line * 4 + its winner's code
        pairs: dict[tuple[str, str], int] = {}
        lines = moved = 0
        log = _LogBlocks(log_path)
        written_rows = read_rows(directory)  # the log's rows, written with its lines
        offset = 0
        try:
            for first, data in log:
                # The block's games as columns: the rows written with its lines, a line without
                # one decoded (a bad line named).
                table, _ = log_summary(log_path, data, offset, first, written_rows)
                offset += len(data)
                raw = data.split(b"\n")
                numbers = table["line"].to_pylist()
                take: list[int] = []
                for row, (number, config_hash, pairing, index, winner) in enumerate(zip(numbers, *(
                        table[c].to_pylist() for c in ("config_hash", "pairing", "game_index", "winner")))):
                    lines += 1
                    code = _WINNER_CODE.get(winner, 3)
                    found = keys.find(config_hash, pairing, index)
                    if found >= 0:  # sealed already: a seal cut short between its rename and truncation
                        if int(winner_codes[found]) != code:
                            where, was = sealed.origin_of_row(found), sealed.table["winner"][found].as_py()
                            conflicts.append(Conflict((config_hash, pairing, index), where, was, (log_path, number),
                                                      winner))
                        continue
                    pair = pairs.setdefault((config_hash, pairing), len(pairs))
                    key = (pair << 40) | index if index < 1 << 40 else (pair, index)
                    seen_first = seen.get(key)
                    if seen_first is not None:  # repeated within the log
                        if seen_first & 3 != code:
                            conflicts.append(Conflict((config_hash, pairing, index), (log_path, seen_first >> 2),
                                                      _WINNERS_BY_CODE[seen_first & 3], (log_path, number), winner))
                        continue
                    seen[key] = number << 2 | code
                    moved += 1
                    take.append(row)
                if not conflicts and take:
                    rows = table if len(take) == len(table) else table.take(take)
                    writer.add_lines([raw[numbers[r] - first - 1] for r in take], rows)
            if not conflicts:
                writer.close()
        except BaseException:
            writer.discard()
            raise
        if conflicts:
            writer.discard()
            dataclasses.replace(sealed.scan, conflicts=tuple(conflicts)).refuse_conflicts("sealed", "seal")
        summaries = [summary_path(f.path) for f in files]
        for f in files:
            # A segment without a summary that matches it gets the one decoded above; not one that
            # two segments of one number would share (a migrate cut short between writing
            # games-0001.jsonl.zst and removing games-0001.jsonl.gz): it is the new one's.
            if f.decoded and summaries.count(summary_path(f.path)) == 1:
                _write_durably(summary_path(f.path), table_summary_bytes(f.table, _read_segment(f.path)),
                               "seal-summary")
        moved_tail = _move_tail(log_path, log.tail) if log.tail is not None else None
        writer.publish()
        if lines:
            _truncate(log_path)
        _fault_point("seal:truncated")
        if (directory / ROWS_FILE).is_file():  # rows without their lines are ignored: emptied after the log
            _truncate(directory / ROWS_FILE)
        segments = writer.segments
        return SealReport(segments[0] if segments else None, moved, lines - moved, moved_tail, segments)


#: Games a segment written by :func:`seal` or :func:`merge` holds at most: one segment's lines'
#: summaries and compressed bytes are what either holds in memory (~0.3 GB at this size).
SEGMENT_GAMES = 1 << 17


class _SegmentWriter:
    """New sealed segments of at most :data:`SEGMENT_GAMES` games, numbered from ``number``,
    each written with its summary to temporary files (fsynced, fault points ``VERB:written``,
    ``VERB:synced``, ``VERB-summary:…``) as it fills: nothing is visible until :meth:`publish`
    renames them into place, each summary before its segment."""

    def __init__(self, directory: Path, verb: str, number: int, summaries: Any = None) -> None:
        """``summaries``: the summary rows (a pyarrow Table of :data:`~boopexp.experiments.store.summary.COLUMNS`)
        of every line :meth:`add` will be given, in that order (merge takes them from the stores'
        summaries); without it, each :meth:`add` gives its game's."""
        self.directory, self.verb, self.number = directory, verb, number
        self.pending: list[tuple[Path, Path, str]] = []  # (temporary, final, step) in rename order
        self.segments: tuple[Path, ...] = ()
        self._summaries, self._done = summaries, 0  # lines in the segments finished so far
        self._start()

    def _start(self) -> None:
        self._encoder = _SegmentEncoder()
        self._tables: list[Any] = []  # the summary rows of add_lines
        self._count = 0

    def add(self, line: bytes) -> None:
        """One game: its stored line (with its newline); its summary row was given to the constructor."""
        self._encoder.add(line)
        self._count += 1
        if self._count >= SEGMENT_GAMES:
            self._finish()

    def add_lines(self, lines: list[bytes], rows: Any) -> None:
        """Games: their stored lines (without their newlines) and their summary rows (a pyarrow
        Table of :data:`~boopexp.experiments.store.summary.COLUMNS`, one row a line, in order)."""
        at = 0
        while at < len(lines):
            n = min(len(lines) - at, SEGMENT_GAMES - self._count)
            self._encoder.add(b"\n".join(lines[at:at + n]) + b"\n")
            self._tables.append(rows.slice(at, n))
            self._count += n
            at += n
            if self._count >= SEGMENT_GAMES:
                self._finish()

    def _finish(self) -> None:
        if not self._count:
            return
        data = self._encoder.finish()
        segment = self.directory / SEGMENT_NAME.format(self.number)
        summary = summary_path(segment)
        step = f"{self.verb}-summary"
        import numpy as np
        import pyarrow as pa

        if self._summaries is None:
            rows = pa.concat_tables(self._tables)
        else:
            rows = self._summaries.slice(self._done, self._count)
        # renumbered: lines of this segment
        rows = rows.set_column(0, "line", pa.array(np.arange(1, self._count + 1, dtype=np.int64)))
        content = table_summary_bytes(rows, data)
        self._done += self._count
        self.pending.append((_write_temporary(summary, content, step), summary, step))
        self.pending.append((_write_temporary(segment, data, self.verb), segment, self.verb))
        self.segments += (segment,)
        self.number += 1
        self._start()

    def close(self) -> None:
        """Write the last, partly filled segment."""
        self._finish()

    def publish(self) -> None:
        """Rename every written summary and segment into place."""
        for tmp, final, step in self.pending:
            _rename_durably(tmp, final, step)

    def discard(self) -> None:
        """Remove the temporary files written so far (nothing was published)."""
        for tmp, _, _ in self.pending:
            tmp.unlink(missing_ok=True)
        self.pending = []
        self.segments = ()


@dataclass(frozen=True)
class MigrateReport:
    """What :func:`migrate` did.

    Attributes:
        segment: the one segment that now holds every game.
        games: games in it.
        changed: False if the store already was exactly that (nothing was written).
        removed: the older segments removed (their games are in ``segment``).
        moved_tail: where a truncated last line of the log was set aside, if there was one.
    """

    segment: Path
    games: int
    changed: bool
    removed: tuple[Path, ...] = ()
    moved_tail: Path | None = None


def migrate(directory: str | Path) -> MigrateReport:
    """Rewrite every game of a store in the current record schema into one sealed segment,
    ``games-0001.jsonl.zst``, and empty the live log. Idempotent: a migrated store is left as it is.
    Converts the gzip segments of older versions (``games-0001.jsonl.gz`` too) into that one.

    Crash-safe like :func:`seal`: the new segment is written to a temporary file, fsynced and
    renamed over ``games-0001.jsonl.zst`` (fault points ``migrate:written``, ``migrate:synced``,
    ``migrate:renamed``); it holds every game, so until the older segments are removed and the log
    truncated (``migrate:truncated``) their games are merely read twice and counted once. The
    segment's summary is written before it (a crash between the two leaves a summary that does not
    match the segment: ignored, rewritten by the next migrate); a migrated store whose summary is
    missing or stale gets one without being rewritten.

    Raises:
        StoreError: the folder holds no store, a line is invalid (nothing is changed), or a run is
            writing the store.
    """
    directory = Path(directory)
    with _maintenance(directory, "migrate"):
        scan = StoreReader(directory).records()
        scan.refuse_conflicts("migrated", "migrate")
        data = encode_segment(b"".join(encode_record(r) for r in scan.records))
        target = directory / SEGMENT_NAME.format(1)
        older = tuple(p for p in segment_paths(directory) if p != target)  # a gzip games-0001 too
        log = directory / GAMES_FILE
        log_size = log.stat().st_size if log.is_file() else 0
        moved_tail = None
        if scan.tail is not None:
            moved_tail = _move_tail(log, scan.tail)
            log_size = scan.tail.offset
        summary = summary_bytes(((n, game_summary(r)) for n, r in enumerate(scan.records, start=1)), data)
        if not older and not log_size and target.is_file() and target.read_bytes() == data:
            if read_summary_table(target, ("line",))[0] is None:
                _write_durably(summary_path(target), summary, "migrate-summary")
            return MigrateReport(target, len(scan.records), False, (), moved_tail)
        _write_durably(summary_path(target), summary, "migrate-summary")
        _write_durably(target, data, "migrate")
        for path in older:
            path.unlink()
            if summary_path(path) != summary_path(target):  # not the new segment's (games-0001.jsonl.gz's)
                summary_path(path).unlink(missing_ok=True)
        if log_size:
            _truncate(log)
        if (directory / ROWS_FILE).is_file():
            _truncate(directory / ROWS_FILE)
        _fsync_dir(directory)
        _fault_point("migrate:truncated")
        return MigrateReport(target, len(scan.records), True, older, moved_tail)


@contextlib.contextmanager
def _maintenance(directory: Path, verb: str) -> Iterator[None]:
    """Hold the store's lock for a seal or a migration (``verb``), after removing a crashed one's
    temporaries.

    Raises:
        StoreError: the folder holds no store, or a run is writing it.
    """
    if not has_games_files(directory):
        raise StoreError(f"no store in {str(directory)!r} (neither {GAMES_FILE} nor games-NNNN.jsonl.zst/.gz)")
    lock = _lock(directory / LOCK_FILE, f"wait for it to finish, then {verb} again")
    try:
        _remove_temporaries(directory)
        _remove_orphan_summaries(directory)
        yield
    finally:
        os.close(lock)
