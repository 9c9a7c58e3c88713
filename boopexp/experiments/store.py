"""The results store of one experiment folder: its games plus the ``config.yaml`` they were run with.

The games are in the live log ``games.jsonl`` and in any number of sealed segments
``games-NNNN.jsonl.zst`` (docs/runner.md; ``.gz``: sealed before zstd). The log holds one JSON object per finished game
(docs/architecture.md), appended by the parent process only and fsync'ed per game, so a killed run
loses at most the game in flight. :func:`seal` moves the log's finished lines into a new zstd
segment (temporary file, fsync, rename, then truncate the log): a crash at any step leaves every
game in the store exactly once, because readers read the segments (in number order) and the log
together and count a game seen twice once, as they always did within one file.

A game is identified by ``(config_hash, pairing, game_index)``; rerunning skips the keys already
present. Reading is strict: a line that is not a valid record in the middle of the file is an
error (:class:`~boopexp.errors.StoreError` naming file and line), because guessing would silently
drop or double-count games. Only a last line of the log without its newline — a write cut short —
is tolerated: it is reported, ignored, and moved aside (never deleted) before the next append.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import hashlib
import itertools
import json
import os
import re
import shutil
import signal
import stat
import struct
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import yaml

from boopexp.errors import ConfigError, StoreError, show_value
from boopexp.experiments.config import load_yaml
from boopexp.experiments.summary import (
    COLUMNS,
    SUMMARY_PATTERN,
    TEXT_FIELDS,
    game_summary,
    invalid_rows,
    read_summary,
    read_summary_table,
    summary_bytes,
    summary_path,
    summary_table,
    table_summary_bytes,
)
from boopexp.play.contract import FORFEITS, WINNERS, WINNERS_TEXT, pack_record, same_game, unpack_record
from boopexp.play.identity import MAX_GAME_INDEX, PAIRING_SEPARATOR, GameKey, record_key

try:  # POSIX advisory locks; without them two runs into one folder are merely not prevented
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

GAMES_FILE = "games.jsonl"
CONFIG_FILE = "config.yaml"
LOCK_FILE = "games.jsonl.lock"
#: A sealed segment: ``games-0001.jsonl.zst``, ``games-0002.jsonl.zst``, … (read in number order);
#: ``.jsonl.gz``: one sealed before zstd (gzip level 9), read as it is (``migrate`` rewrites it).
SEGMENT_PATTERN = re.compile(r"games-(\d{4,})\.jsonl\.(gz|zst)")
#: How new segments are named: ``SEGMENT_NAME.format(number)``.
SEGMENT_NAME = "games-{:04d}.jsonl.zst"
#: zstd level of new segments. Measured on 100k real records (docs/cluster.md "Scale"): level 1
#: compresses to ~737 bytes a game in ~0.5 s per 100k games, where gzip level 9 took ~17 s for
#: 725 bytes (gzip 3: 2.9 s, 839 bytes; zstd 6: 2.6 s, 716 bytes); it also decompresses ~4x
#: faster than gzip, which every reader of segments pays.
SEGMENT_ZSTD_LEVEL = 1
#: Uncompressed bytes compressed into one zstd frame of a segment (frames are concatenated).
_FRAME_BYTES = 1 << 24
#: Environment variable naming a step at which seal/migrate kill their own process (tests only).
FAULT_ENV = "BOOPEXP_STORE_FAULT"

_CONFIG_HEADER = (
    "# The resolved configuration of the games in games.jsonl, written by boopexp (docs/runner.md).\n"
    "# A previous, different version of this file is kept as config.<hash>.yaml.\n"
)


def check_record(record: Any) -> str | None:
    """Why ``record`` is not a storable game record, or None if it is: **the** rule of what a
    store holds, for every reader (``status``, ``run``, ``seal``, ``merge``, the tables, the
    ratings) and for the records written (a played game, an imported one). Its twin on columns
    is :func:`boopexp.experiments.summary.invalid_rows` (a summary's or the live log's rows read
    by pyarrow): the two refuse the same games (tests/test_store_readers.py).

    A game's identity is a non-empty settings hash, a pairing ``"A vs B"`` and a non-negative
    index below 2^63 (the columns are 64-bit); its winner ``"p1"``, ``"p2"`` or null; the text
    fields a reader counts by (the sides' names, the experiment, the termination), when present,
    are strings or null.
    """
    if not isinstance(record, dict):
        return f"not a JSON object but {type(record).__name__}"
    if not isinstance(record.get("config_hash"), str) or not record["config_hash"]:
        return f"config_hash = {record.get('config_hash')!r} is not a non-empty string"
    pairing = record.get("pairing")
    if not isinstance(pairing, str):
        return f"pairing = {pairing!r} is not a string"
    if PAIRING_SEPARATOR not in pairing:
        return f"pairing = {pairing!r} is not of the form 'A{PAIRING_SEPARATOR}B'"
    index = record.get("game_index")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= MAX_GAME_INDEX:
        return f"game_index = {_show(index)} is not an integer from 0 to 2^63-1"
    if "winner" not in record:
        return "no 'winner' key"
    # null: the game hit contract.MAX_PLIES without a winner ("termination": "ply_limit"). It is a
    # finished game all the same: storing it keeps a rerun from replaying it forever.
    if record["winner"] not in WINNERS:
        return f"winner = {record['winner']!r} is not {WINNERS_TEXT}"
    for key in TEXT_FIELDS:
        if record.get(key) is not None and not isinstance(record[key], str):
            return f"{key} = {_show(record[key])} is not a string or null"
    return None


def encode_record(record: Mapping[str, Any]) -> bytes:
    """One stored line: the record in the current schema (:func:`boopexp.play.contract.pack_record`),
    as compact JSON, newline-terminated, no other newline inside."""
    packed = pack_record(record)
    return (json.dumps(packed, ensure_ascii=True, separators=(",", ":"), default=_json_default) + "\n").encode("ascii")


@dataclass(frozen=True)
class TruncatedTail:
    """A last line without its newline: the trace of a write cut short."""

    line: int  # 1-based line number
    offset: int  # byte offset where the partial line starts
    data: bytes


#: Where a stored line is: (file, 1-based line number).
Location = tuple[Path, int]


@dataclass(frozen=True)
class Conflict:
    """A game stored twice as two different games (another winner, or other moves or settings:
    :func:`~boopexp.play.contract.same_game`): which copy counts would then be a guess.

    Attributes:
        key: the game.
        first, first_winner: the copy read first (the one readers count) and its winner.
        second, second_winner: a later copy and its winner.
    """

    key: GameKey
    first: Location
    first_winner: str | None
    second: Location
    second_winner: str | None

    def describe(self) -> str:
        """One line naming both copies and their winners."""
        config_hash, pairing, index = self.key
        head = (f"{self.second[0]} line {self.second[1]}: game {pairing!r} #{index} (settings {config_hash}) is "
                "stored again")
        if self.second_winner == self.first_winner:
            return (f"{head} as another game (same winner {self.second_winner!r}, other moves or fields than "
                    f"{self.first[0]} line {self.first[1]})")
        return (f"{head} with winner {self.second_winner!r}, but {self.first[0]} line {self.first[1]} has "
                f"{self.first_winner!r}")


@dataclass(frozen=True)
class StoreScan:
    """The valid content of a store (its sealed segments and its live log).

    Attributes:
        path: the live log (where a truncated tail is, and where new games go).
        records: the first record of each game key, in reading order (segments, then the log).
        duplicates: records whose key was already seen (ignored, counted once).
        tail: the partial last line of the log, if any (ignored).
        origins: the file and line of each record of ``records`` (same order).
        duplicate_files: the files holding either copy of a duplicated game, in reading order.
        conflicts: the duplicates whose winner differs from the first copy's; when the scan reads
            whole records (:func:`scan_store`, :func:`merge`), also those that are another game
            with the same winner (other moves or fields: :func:`~boopexp.play.contract.same_game`).
        notes: summaries not used although present (stale or unreadable: their segment was read).
    """

    path: Path
    records: tuple[dict[str, Any], ...] = ()
    duplicates: int = 0
    tail: TruncatedTail | None = None
    origins: tuple[Location, ...] = ()
    duplicate_files: tuple[Path, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def keys(self) -> frozenset[GameKey]:
        return frozenset(record_key(r) for r in self.records)

    def origin(self, key: GameKey) -> Location | None:
        """The file and line of the counted copy of game ``key``, or None if it is not stored."""
        return next((o for r, o in zip(self.records, self.origins) if record_key(r) == key), None)

    def warnings(self) -> list[str]:
        """One line per anomaly tolerated while reading."""
        out = list(self.notes)
        if self.tail is not None:
            out.append(
                f"{self.path} line {self.tail.line}: truncated last line ({len(self.tail.data)} bytes"
                " without a newline, probably a run killed mid-write); ignored"
            )
        if self.duplicates:
            where = ", ".join(str(p) for p in self.duplicate_files) or str(self.path)
            out.append(f"{where}: {self.duplicates} duplicate game record(s) ignored (each game counted once)")
        if self.conflicts:
            more = len(self.conflicts) - 1
            out.append(f"{self.conflicts[0].describe()}; the first copy is counted"
                       + (f" ({more} more game(s) stored twice with different winners)" if more else ""))
        return out

    def refuse_conflicts(self, done: str, verb: str) -> None:
        """Refuse to rewrite a store that holds a game twice with different winners: keeping one
        copy would silently decide which result counts.

        Args:
            done, verb: what is not done ("sealed") and the command to run again ("seal").

        Raises:
            StoreError: one line naming both copies of the first conflict.
        """
        if not self.conflicts:
            return
        more = len(self.conflicts) - 1
        also = f" ({more} more game(s) stored twice with different winners)" if more else ""
        raise StoreError(f"{self.conflicts[0].describe()}{also}; nothing {done}: remove the wrong copy, "
                         f"then {verb} again")


def split_lines(data: bytes) -> tuple[list[tuple[int, bytes]], TruncatedTail | None]:
    """The complete, non-blank lines of a games.jsonl's bytes as (1-based number, line), and the
    cut-short last line, if any: the bytes after the last newline (a write cut short; the writer
    appends a record and its newline in one write, so a reader never sees a complete line that is
    still being written)."""
    end = data.rfind(b"\n") + 1
    tail = None
    if end < len(data):
        tail = TruncatedTail(line=data.count(b"\n", 0, end) + 1, offset=end, data=data[end:])
    lines = [(n, raw) for n, raw in enumerate(data[:end].split(b"\n")[:-1], start=1) if raw.strip()]
    return lines, tail


@dataclass(frozen=True)
class StoreFile:
    """The complete lines of one file of a store: a sealed segment or the live log."""

    path: Path
    lines: list[tuple[int, bytes]]
    tail: TruncatedTail | None = None  # only the live log can have a write cut short


def segment_paths(directory: str | Path) -> list[Path]:
    """The sealed segments ``games-NNNN.jsonl.zst`` (and ``.gz``) of a store, in number order
    (a gzip segment before the zstd one of its number: ``migrate`` killed before it removed it)."""
    directory = Path(directory)
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise StoreError(f"cannot list {directory}: {exc}") from None
    numbered = sorted((int(m.group(1)), name) for name in names if (m := SEGMENT_PATTERN.fullmatch(name)))
    return [directory / name for _, name in numbered]


def has_games_files(directory: str | Path) -> bool:
    """Whether a folder holds a store: a live log or at least one sealed segment."""
    return (Path(directory) / GAMES_FILE).is_file() or bool(segment_paths(directory))


def read_store_files(directory: str | Path) -> list[StoreFile]:
    """The files of a store in reading order: the sealed segments by number, then the live log.

    The log is read *before* the segments are listed: :func:`seal` renames its new segment before
    it truncates the log, so a game it moves meanwhile is read at least once (twice is counted once).

    Raises:
        StoreError: a file cannot be read, or a sealed segment is damaged (a segment is written
            whole, through a temporary file, so a cut-short segment is damage, never a crash).
    """
    directory = Path(directory)
    log = _read_log(directory)
    files = [StoreFile(path, _segment_lines(path, _read_segment(path))) for path in segment_paths(directory)]
    return files if log is None else [*files, log]


def read_store_file(path: Path) -> StoreFile | None:
    """One file of a store as :func:`read_store_files` reads it: the live log (None when there is
    none) or a sealed segment.

    Raises:
        StoreError: as :func:`read_store_files`.
    """
    if path.name == GAMES_FILE:
        return _read_log(path.parent)
    return StoreFile(path, _segment_lines(path, _read_segment(path)))


def segment_blocks(path: Path, block_bytes: int = 1 << 24) -> Iterator[list[tuple[int, bytes]]]:
    """The lines of a sealed segment as :func:`read_store_files` numbers them (complete, non-blank,
    1-based), in blocks of about ``block_bytes`` uncompressed bytes: a reader that needs some of
    every game (the telemetry table) never holds the whole decompressed segment.

    Raises:
        StoreError: the segment cannot be read or is damaged.
    """
    for first, data in segment_text_blocks(path, block_bytes):
        yield [(n, raw) for n, raw in enumerate(data.split(b"\n")[:-1], start=first + 1) if raw.strip()]


def file_blocks(path: Path, block_bytes: int = 1 << 24) -> Iterator[list[tuple[int, bytes]]]:
    """The lines of a file of a store as :func:`read_store_files` numbers them: a sealed segment's
    in blocks (:func:`segment_blocks`), the live log's complete lines in one (none: no log).

    Raises:
        StoreError: the file cannot be read, or a segment is damaged.
    """
    if path.name != GAMES_FILE:
        yield from segment_blocks(path, block_bytes)
        return
    log = _read_log(path.parent)
    if log is not None and log.lines:
        yield log.lines


def segment_text_blocks(path: Path, block_bytes: int = 1 << 24) -> Iterator[tuple[int, bytes]]:
    """A sealed segment's uncompressed bytes in blocks of complete lines (about ``block_bytes``
    each) as (lines before the block, its bytes): the one reader of both segment formats, gzip
    (``.gz``) and zstd (``.zst``, its checksum trailer checked: :class:`_SegmentEncoder`).

    Raises:
        StoreError: the segment cannot be read or is damaged.
    """
    blocks = _LineBlocks(_segment_chunks(path, block_bytes))
    yield from blocks
    if blocks.rest:
        raise _segment_error(path, _NO_NEWLINE)


class _LineBlocks:
    """Chunks of bytes regrouped into blocks of complete lines, as (lines before the block, its
    bytes); after the iteration, :attr:`rest` holds the bytes after the last newline, :attr:`lines`
    and :attr:`offset` the lines and bytes before them."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self.chunks = chunks
        self.rest, self.lines, self.offset = b"", 0, 0

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        for chunk in self.chunks:
            data = self.rest + chunk
            end = data.rfind(b"\n") + 1
            self.rest = data[end:]
            if end:
                yield self.lines, data[:end]
                self.lines += data.count(b"\n", 0, end)
                self.offset += end


def _segment_chunks(path: Path, block_bytes: int) -> Iterator[bytes]:
    """A sealed segment's uncompressed bytes, in chunks of at most ``block_bytes``, checked."""
    try:
        if path.name.endswith(".gz"):
            with open(path, "rb") as raw_file:
                if not os.fstat(raw_file.fileno()).st_size:
                    raise _segment_error(path, _EMPTY)
                with gzip.GzipFile(fileobj=raw_file, mode="rb") as fh:
                    while chunk := fh.read(block_bytes):
                        yield chunk
            return
        data = path.read_bytes()
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise _segment_error(path, exc) from None
    yield from _zstd_chunks(path, data, block_bytes)


def _read_log(directory: Path) -> StoreFile | None:
    """The live log's complete lines and cut-short tail, or None if there is no log."""
    log = _read_log_bytes(directory)
    if log is None:
        return None
    lines, tail = split_lines(log)
    return StoreFile(directory / GAMES_FILE, lines, tail)


def _read_log_bytes(directory: Path) -> bytes | None:
    """The live log's bytes, or None if there is no log."""
    log_path = directory / GAMES_FILE
    try:
        return log_path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):  # no folder yet, or a file in its place
        return None
    except OSError as exc:
        raise StoreError(f"cannot read {log_path}: {exc}") from None


def _segment_lines(path: Path, data: bytes) -> list[tuple[int, bytes]]:
    """The lines of a sealed segment's bytes (``data``, compressed)."""
    lines, tail = split_lines(_decompress(path, data))
    if tail is not None:
        raise _segment_error(path, _NO_NEWLINE)
    return lines


def parse_line(path: Path, number: int, raw: bytes, moves: bool = True,
               telemetry: bool | None = None) -> dict[str, Any]:
    """The game record of one stored line, validated (schema 1 or 2, returned as schema 1: see
    :func:`decode_record`); without its moves and telemetry if not ``moves`` (what counting games
    reads: unpacking the telemetry is most of decoding a record), without its telemetry only if
    ``telemetry`` is False (None: as ``moves``).

    Raises:
        StoreError: the line is not JSON or not a game record (file and line named).
    """
    try:
        record = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StoreError(
            f"{path} line {number}: not valid JSON ({exc}): {_show(raw)}; repair or remove that line"
        ) from None
    problem = check_record(record)
    if problem:
        raise StoreError(f"{path} line {number}: invalid game record ({problem}); repair or remove that line")
    dropped = (() if moves else ("moves",)) + (() if (moves if telemetry is None else telemetry) else ("telemetry",))
    if dropped:
        record = {k: v for k, v in record.items() if k not in dropped}
    try:
        return decode_record(record)
    except ValueError as exc:
        raise StoreError(f"{path} line {number}: {exc}") from None


def scan_store(directory: str | Path) -> StoreScan:
    """Read and validate every game of a store: its sealed segments, then its live log (a folder
    without either is an empty store). A game found twice is counted once, the first copy read.

    Raises:
        StoreError: a line other than the log's last one is not a valid record (file and line
            named), or a segment is damaged.
    """
    files = read_store_files(directory)
    return _scan_games(Path(directory), _parsed(files), whole=True)


def record_at(location: Location) -> dict[str, Any]:
    """The game record stored at ``location`` (a line of a sealed segment or of the live log, as
    :meth:`OutcomeColumns.origin_of_row` names it), decoded like every record: one game read
    without decoding the store's others (``boopexp serve``'s viewer). Reads only.

    Raises:
        StoreError: the file cannot be read, the line is gone (sealed or rewritten meanwhile) or
            is not a valid record.
    """
    return next(records_at([location]))


def records_at(locations: Sequence[Location]) -> Iterator[dict[str, Any]]:
    """:func:`record_at` of each of ``locations``, in their order, lazily, each file read (and a
    segment decompressed) once however many of them it holds (``import`` comparing a file's games
    with their stored copies). A file's wanted lines are kept until its last location is reached:
    locations sorted by file hold one file's lines at a time.

    Raises:
        StoreError: as :func:`record_at`, when the location concerned is reached.
    """
    wanted: dict[Path, set[int]] = {}
    last: dict[Path, int] = {}
    for i, (path, number) in enumerate(locations):
        wanted.setdefault(path, set()).add(number)
        last[path] = i
    found: dict[Path, dict[int, bytes]] = {}
    for i, (path, number) in enumerate(locations):
        if path not in found:
            stored = read_store_file(path)
            found[path] = {n: raw for n, raw in stored.lines if n in wanted[path]} if stored is not None else {}
        raw = found[path].get(number)
        if last[path] == i:
            del found[path]
        if raw is None:
            raise StoreError(f"{path} line {number} vanished while reading (sealed or migrated meanwhile?); read again")
        yield parse_line(path, number, raw)


def _parsed(files: Iterable[StoreFile]) -> list[_Games]:
    """The files' lines as parsed records."""
    return [_Games(f.path, ((n, parse_line(f.path, n, raw)) for n, raw in f.lines), f.tail) for f in files]


def scan_outcomes(directory: str | Path) -> StoreScan:
    """:func:`scan_store` reading only what counting games needs: its records are the games'
    summaries (:func:`boopexp.experiments.summary.game_summary`: identity, sides, outcome, length,
    forfeit, sweep point), taken from each sealed segment's summary file when it matches the
    segment, else decoded from the segment; the live log is decoded. One Python object a game:
    ``status``, ``run`` and ``run --dry-run`` read :func:`scan_outcome_columns` instead.

    Raises:
        StoreError: as :func:`scan_store`.
    """
    directory = Path(directory)
    log = _read_log(directory)  # before the segments are listed, as read_store_files
    sources: list[_Games] = []
    notes: list[str] = []
    for path in segment_paths(directory):
        rows, problem = read_summary(path)
        if problem is not None:
            notes.append(problem)
        if rows is None:
            rows = [(n, game_summary(parse_line(path, n, raw))) for n, raw in _segment_lines(path, _read_segment(path))]
        sources.append(_Games(path, rows))
    if log is not None:
        sources.append(_Games(log.path, ((n, game_summary(parse_line(log.path, n, raw))) for n, raw in log.lines),
                              log.tail))
    return _scan_games(directory, sources, tuple(notes))


#: What counting a store's games reads of each summary (:func:`scan_outcome_columns`).
OUTCOME_COLUMNS = ("line", "config_hash", "pairing", "game_index", "p1", "p2", "winner", "termination", "forfeit",
                   "sweep")
#: Game indices :meth:`StoredKeys.missing` checks at once (a plan of 10^9 games stays lazy).
_MISSING_CHUNK = 1 << 16


@dataclass(frozen=True)
class _FileTable:
    """One file of a store as :func:`scan_outcome_columns` read it, with what tells whether a later
    read may reuse it (``stamp``): a segment's identity and size on disk (a segment is never
    written in place: sealing and migrating rename a new file), or the live log's bytes read (their
    length, BLAKE2 digest and number of lines: the log only grows between seals, and a seal runs
    under the lock a writer holds)."""

    path: Path
    stamp: tuple[Any, ...]
    table: Any  # OUTCOME_COLUMNS
    note: str | None = None
    tail: TruncatedTail | None = None
    decoded: bool = False  # a segment read without a summary that matches it


class StoredKeys:
    """The identities of a store's games as one sorted numpy array of game indices per (settings
    hash, pairing): what a resumed ``run`` asks "is game i of pairing P under settings H stored?"
    (8 bytes a game, where a set of key tuples took ~150)."""

    def __init__(self, config_hash: Any, pairing: Any, game_index: Any) -> None:
        """From three equal-length columns (pyarrow arrays or chunked arrays)."""
        import numpy as np
        import pyarrow.compute as pc

        self._by: dict[tuple[str, str], Any] = {}  # (settings hash, pairing) -> sorted indices
        self._rows: dict[tuple[str, str], Any] = {}  # the row of each, in the columns given
        if not len(game_index):
            return
        encoded = pc.binary_join_element_wise(config_hash, pairing, "\x00").combine_chunks().dictionary_encode()
        codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        index = np.asarray(game_index.to_numpy() if hasattr(game_index, "to_numpy") else game_index, dtype=np.int64)
        order = np.lexsort((np.arange(len(index)), index, codes))  # stable: a repeated game's first row
        codes, index = codes[order], index[order]
        first = np.ones(len(index), dtype=bool)
        first[1:] = (codes[1:] != codes[:-1]) | (index[1:] != index[:-1])
        codes, index, order = codes[first], index[first], order[first]
        starts = np.flatnonzero(np.diff(codes, prepend=-1))
        for start, end in zip(starts, [*starts[1:], len(codes)]):
            config, _, name = encoded.dictionary[int(codes[start])].as_py().partition("\x00")
            self._by[(config, name)] = index[start:end]
            self._rows[(config, name)] = order[start:end]

    def __len__(self) -> int:
        return sum(len(a) for a in self._by.values())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and len(key) == 3 and self.find(*key) >= 0

    def find(self, config_hash: str, pairing: str, game_index: int) -> int:
        """The row of game ``game_index`` of the pairing in the columns given (its first), or -1."""
        found = self._by.get((config_hash, pairing))
        if found is None:
            return -1
        at = int(found.searchsorted(game_index))
        return int(self._rows[(config_hash, pairing)][at]) if at < len(found) and found[at] == game_index else -1

    def missing(self, config_hash: str, pairing: str, indices: range) -> Iterator[int]:
        """The indices of ``indices`` (in their order) whose game is not stored, lazily."""
        import numpy as np

        found = self._by.get((config_hash, pairing))
        if found is None or not len(found):
            yield from indices
            return
        for start in range(0, len(indices), _MISSING_CHUNK):
            part = indices[start:start + _MISSING_CHUNK]
            chunk = np.arange(part.start, part.stop, part.step, dtype=np.int64)
            at = np.minimum(found.searchsorted(chunk), len(found) - 1)
            yield from chunk[found[at] != chunk].tolist()


@dataclass(frozen=True)
class OutcomeColumns:
    """The games of a store as columns: what ``status``, ``run --dry-run`` and a resumed ``run``
    count from.

    Attributes:
        table: a pyarrow Table of :data:`OUTCOME_COLUMNS` (``forfeit``, ``sweep`` as JSON text), one row per
            game, the counted copy of each (the first read), in reading order.
        scan: the same store's :class:`StoreScan` without its records: its warnings (truncated
            tail, duplicates, conflicts, unused summaries) are those of :func:`scan_outcomes`.
        files: each file as read (what ``scan_outcome_columns(..., since=this)`` reuses).
        file_of_row: the index in ``files`` of each row's file (numpy).
    """

    table: Any
    scan: StoreScan
    files: tuple[_FileTable, ...] = ()
    file_of_row: Any = None  # numpy: the index in ``files`` of each row's file

    def origin_of_row(self, row: int) -> Location:
        """The file and line of row ``row`` of :attr:`table`."""
        return self.files[int(self.file_of_row[row])].path, int(self.table["line"][row].as_py())

    def records(self, mask: Any = None) -> list[dict[str, Any]]:
        """The rows selected by ``mask`` (a boolean array; all rows without one) as summaries
        (``forfeit``, ``sweep`` decoded): for the few games a reader needs one by one (forfeits, SPRT)."""
        rows = (self.table if mask is None else self.table.filter(mask)).to_pylist()
        for r in rows:
            for c in ("forfeit", "sweep"):
                r[c] = None if r[c] is None else json.loads(r[c])
        return cast(list[dict[str, Any]], rows)

    def forfeited(self) -> list[dict[str, Any]]:
        """The forfeited games as :meth:`records` (few: read one by one, for
        :func:`boopexp.experiments.tally.forfeits`)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        return self.records(pc.is_in(self.table["termination"], pa.array(list(FORFEITS), pa.string())))

    def keys(self) -> StoredKeys:
        """The stored games' identities, as arrays (:class:`StoredKeys`)."""
        return StoredKeys(self.table["config_hash"], self.table["pairing"], self.table["game_index"])


def scan_outcome_columns(directory: str | Path, since: OutcomeColumns | None = None,
                         columns: Sequence[str] = OUTCOME_COLUMNS) -> OutcomeColumns:
    """:func:`scan_outcomes` as columns, never one Python object per sealed game: each sealed
    segment's summary is read as a pyarrow Table (a segment without a usable summary, and the live
    log, are decoded and turned into one), and a game stored twice is found on one int64 identity
    per game (numpy): only the copies of such games are compared one by one, as
    :func:`scan_outcomes` does (same counted copy, duplicates, conflicts and warnings).

    Args:
        since: an earlier scan of the same folder: the files it read that have not changed since
            are not read again (a segment still the same file, the live log's lines already read
            if the log still begins with them): how a run reads its store again under the lock
            (read with the same ``columns``).
        columns: the summary's columns to read (:data:`~boopexp.experiments.summary.COLUMNS`,
            ``line``, a game's identity and ``winner`` among them): the tables read the
            experiment and the length too.

    Raises:
        StoreError: as :func:`scan_store`.
    """
    directory = Path(directory)
    earlier = {f.path: f for f in since.files} if since is not None else {}
    log = _log_table(directory, earlier.get(directory / GAMES_FILE), columns)  # before the segments are listed
    files = [_segment_table(path, earlier.get(path), columns) for path in segment_paths(directory)]
    if log is not None:
        files.append(log)
    return _combine_columns(directory, files, log.tail if log is not None else None, columns)


def _combine_columns(directory: Path, files: list[_FileTable], tail: TruncatedTail | None,
                     columns: Sequence[str] = OUTCOME_COLUMNS) -> OutcomeColumns:
    """The files' tables in reading order as one, each game once (:func:`_dedupe_columns`)."""
    import numpy as np
    import pyarrow as pa

    tables = [f.table.append_column("file", pa.array(np.full(len(f.table), i, dtype=np.int32)))
              for i, f in enumerate(files)]
    if not tables:
        tables.append(summary_table(()).select(list(columns)).append_column("file", pa.array([], pa.int32())))
    table = pa.concat_tables(tables)
    paths = [f.path for f in files]
    notes = tuple(f.note for f in files if f.note is not None)
    table, scan = _dedupe_columns(directory, table, paths, notes, tail)
    file_of_row = table["file"].to_numpy()
    return OutcomeColumns(table.select(list(columns)), scan, tuple(files), file_of_row)


def _segment_table(path: Path, earlier: _FileTable | None, columns: Sequence[str] = OUTCOME_COLUMNS) -> _FileTable:
    """A sealed segment's games as a table of ``columns`` (of the summary's): ``earlier`` if the
    segment is still that file, else its summary, else decoded (a block of lines at a time)."""
    try:
        st = path.stat()
    except OSError as exc:
        raise _segment_error(path, exc) from None
    stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    if earlier is not None and earlier.stamp == stamp:
        return earlier
    table, note = read_summary_table(path, columns)
    if table is None:
        import pyarrow as pa

        parts = [_summarised_lines(path, data, first, columns) for first, data in segment_text_blocks(path)]
        table = pa.concat_tables(parts) if parts else summary_table(()).select(list(columns))
        return _FileTable(path, stamp, table, note, decoded=True)
    return _FileTable(path, stamp, table, note)


def _log_table(directory: Path, earlier: _FileTable | None,
               columns: Sequence[str] = OUTCOME_COLUMNS) -> _FileTable | None:
    """The live log's games as a table of ``columns`` (of the summary's; None: no log); only its
    lines after those of ``earlier`` are decoded if the log still begins with them."""
    data = _read_log_bytes(directory)
    if data is None:
        return None
    path, end = directory / GAMES_FILE, data.rfind(b"\n") + 1
    start, first_line, head = 0, 0, None
    view = memoryview(data)
    digest = hashlib.blake2b()  # of the complete lines: the earlier ones hashed once, not again for the stamp
    if earlier is not None:
        length, earlier_digest, lines = earlier.stamp
        if length <= end:
            digest.update(view[:length])
            if digest.digest() == earlier_digest:
                start, first_line, head = length, lines, earlier.table
            else:
                digest = hashlib.blake2b()
    table = _summarised_lines(path, data[start:end], first_line, columns)
    tail = None
    if end < len(data):
        tail = TruncatedTail(line=first_line + data.count(b"\n", start, end) + 1, offset=end, data=data[end:])
    if head is not None:
        import pyarrow as pa

        table = pa.concat_tables([head, table])
    digest.update(view[start:end])
    stamp = (end, digest.digest(), first_line + data.count(b"\n", start, end))
    return _FileTable(path, stamp, table, None, tail)


#: Bytes that send a line to the exact decoding (:func:`_lines_summary`): an object of any keys
#: (forfeit, sweep point), or a null that the columnar reading cannot tell from a field left out
#: (which the record's schema derives, or which is missing).
_DECODED_LINES = re.compile(rb'"(?:forfeit|sweep)"|"(?:p1|p2|winner|termination|plies)"\s*:\s*null')
#: A line's objects that the summary holds as they are (as JSON text), and a telemetry object.
_OBJECT_FIELDS = re.compile(rb'"(?:forfeit|sweep)"')
_TELEMETRY = re.compile(rb'"telemetry":\{[^{}]*\}')
#: The summary's columns read from the moves and telemetry (the others from a record's top level).
_GAME_COLUMNS = ("experiment", "plies", "device_seconds")


def _lines_summary(path: Path, data: bytes, first_line: int, columns: Sequence[str] = OUTCOME_COLUMNS) -> Any:
    """The games of complete lines ``data`` of ``path`` (after ``first_line`` lines) as a table of
    ``columns`` (of the summary's, :data:`~boopexp.experiments.summary.COLUMNS`, ``line`` first),
    validated and equal to decoding each line and taking its :func:`game_summary`, but read by
    pyarrow's JSON reader with an explicit schema of the few fields needed (~25x faster than json
    and unpacking the moves' telemetry; docs/cluster.md "Scale"): the live log's lines for
    ``status`` and a resumed run, a log's lines for ``seal``, a segment's lines without a summary.

    A line that holds an object of any keys or a null (:data:`_DECODED_LINES`), or whose telemetry
    lacks device seconds or holds a null among them, is decoded in Python (:func:`parse_line`).
    ``device_seconds`` is the sum (Python's, in move order, as :func:`game_summary` takes it) of a
    schema-2 record's telemetry column ``device_seconds``: every column of a record's telemetry is
    as long as the others, as :func:`~boopexp.play.contract.pack_record` writes them.

    None: a line the reader refuses or that is not a valid record (not JSON, not UTF-8, a blank
    line, a field of another type, a schema-1 record's telemetry): the caller decodes the lines
    one by one, which names the bad line as :func:`parse_line` does.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    count = data.count(b"\n")
    # A blank line is no row of the reader's: the rows would not be the lines.
    if not count or data.startswith(b"\n") or b"\n\n" in data:
        return None
    if not data.isascii():  # stored lines are ASCII (encode_record); UTF-8 is valid too, if it is
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    full = any(c in columns for c in _GAME_COLUMNS)
    name = pa.struct([("name", pa.string())])
    # Every field check_record checks is read, typed (a text field of another type is refused by
    # the reader: the lines are then checked one by one), whether or not ``columns`` holds it.
    fields = [("schema", pa.int64()), ("config_hash", pa.string()), ("pairing", pa.string()),
              ("game_index", pa.int64()), ("p1", pa.string()), ("p2", pa.string()), ("winner", pa.string()),
              ("termination", pa.string()), ("experiment", pa.string()), ("p1_spec", name), ("p2_spec", name)]
    if full:
        fields += [("plies", pa.int64()), ("moves", pa.list_(pa.string())),
                   ("telemetry", pa.struct([("device_seconds", pa.list_(pa.float64()))]))]
    try:
        read = pj.read_json(pa.py_buffer(data), read_options=pj.ReadOptions(block_size=1 << 24),
                            parse_options=pj.ParseOptions(explicit_schema=pa.schema(fields),
                                                          unexpected_field_behavior="ignore"))
    except (pa.ArrowException, ValueError, OSError):  # ArrowInvalid: not JSON, a value of another type
        return None
    if read.num_rows != count:  # several objects on a line
        return None
    read = read.combine_chunks()
    decoded = np.zeros(count, dtype=bool)
    line, at = 0, 0
    for match in _DECODED_LINES.finditer(data):
        if match.start() < at:  # in the line already taken
            continue
        line += data.count(b"\n", at, match.start())
        at = data.find(b"\n", match.start())
        decoded[line] = True
    schema2 = pc.fill_null(pc.equal(read["schema"], 2), False)
    seconds: list[float | None] = []
    whole: set[int] = set()  # rows decoded with their telemetry: device seconds the columns cannot give
    if full:  # a schema-2 record's telemetry columns: the sum of its device seconds, else None
        telemetry = pc.and_(schema2, pc.is_valid(read["telemetry"])).to_numpy(zero_copy_only=False)
        listed = pc.struct_field(read["telemetry"], [0]).to_pylist()
        for row, (has, values) in enumerate(zip(telemetry, listed)):
            if not has:
                seconds.append(None)
            elif not values or None in values:  # the exact decoding says what the moves give
                decoded[row] = True
                whole.add(row)
                seconds.append(None)
            else:
                seconds.append(sum(values))
    keep = pa.array(~decoded)
    fast = read.filter(keep)
    schema2 = schema2.filter(keep)
    # check_record's rule, on the columns (a null winner here is a key left out: a null's line is decoded)
    if not pc.all(pc.and_(pc.is_in(pc.fill_null(fast["schema"], 1), pa.array([1, 2])), pc.is_valid(fast["winner"])),
                  min_count=0).as_py() or invalid_rows(fast).any():
        return None
    out = {"line": pa.array(first_line + 1 + np.flatnonzero(~decoded), pa.int64())}
    for c in columns[1:]:
        if c in ("p1", "p2"):  # schema 2 leaves out a side's name when it is its spec's
            out[c] = pc.if_else(schema2, pc.coalesce(fast[c], pc.struct_field(fast[f"{c}_spec"], [0])), fast[c])
        elif c == "termination":  # schema 2 leaves out a victory's (every winner here is p1 or p2)
            out[c] = pc.if_else(schema2, pc.coalesce(fast[c], pa.scalar("victory")), fast[c])
        elif c == "plies":  # schema 2 leaves it out when it is the number of moves
            out[c] = pc.if_else(schema2, pc.coalesce(fast[c], pc.list_value_length(fast["moves"]).cast(pa.int64())),
                                fast[c])
        elif c == "device_seconds":
            out[c] = pa.array(seconds, pa.float64()).filter(keep)
        elif c in ("forfeit", "sweep"):
            out[c] = pa.nulls(len(fast), pa.string())
        else:
            out[c] = fast[c]
    table = pa.table(out).cast(summary_table(()).select(list(columns)).schema)
    if decoded.any():
        starts = np.concatenate(([0], np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10) + 1))

        def summary(row: int) -> tuple[int, dict[str, Any]]:
            # Decoded in Python, but for its telemetry (most of decoding a long game), whose device
            # seconds are the columns' where they can give them.
            number = first_line + 1 + row
            raw = data[starts[row]:starts[row + 1] - 1]
            record = None
            if row not in whole and not _OBJECT_FIELDS.search(raw):
                # A long game's telemetry object left out before json reads the line (it is valid
                # JSON: the reader read it); if that is not the top-level one, the line as it is.
                lean = _TELEMETRY.sub(b'"telemetry":null', raw, count=1)
                with contextlib.suppress(StoreError):
                    record = parse_line(path, number, lean, moves=full, telemetry=False)
            if record is None:
                record = parse_line(path, number, raw, moves=full, telemetry=row in whole)
            out = game_summary(record)
            if full and row not in whole:
                out["device_seconds"] = seconds[row]
            return number, out

        slow = summary_table(summary(int(r)) for r in np.flatnonzero(decoded)).select(list(columns))
        table = pa.concat_tables([table, slow])
        table = table.take(pc.sort_indices(table["line"]))
    return table


def _summarised_lines(path: Path, data: bytes, first_line: int, columns: Sequence[str] = OUTCOME_COLUMNS) -> Any:
    """:func:`_lines_summary`, or where it cannot read the lines, each line decoded (the exact
    reading, which names a bad line)."""
    table = _lines_summary(path, data, first_line, columns)
    if table is None:
        lines, _ = split_lines(data)
        table = summary_table((first_line + n, game_summary(parse_line(path, first_line + n, raw)))
                              for n, raw in lines).select(list(columns))
    return table


def _game_ids(table: Any) -> Any:
    """One int64 a game of ``table`` for its identity (the codes of its settings hash and pairing,
    then its index), as a numpy array: numpy finds the games stored twice in a few bytes a game,
    where a group-by on the text keys took about 1 KB a game at its peak."""
    import numpy as np
    import pyarrow.compute as pc

    ids = np.zeros(len(table), dtype=np.int64)
    for c in ("config_hash", "pairing"):
        encoded = pc.dictionary_encode(table[c])  # one dictionary shared by every chunk
        codes = [chunk.indices.to_numpy(zero_copy_only=False) for chunk in encoded.chunks]
        ids = ids * max(len(encoded.chunks[0].dictionary) if encoded.num_chunks else 0, 1) + np.concatenate(
            codes or [np.zeros(0, dtype=np.int64)]).astype(np.int64)
    game_index = table["game_index"].to_numpy()
    if len(game_index):
        ids = ids * (int(game_index.max()) - int(game_index.min()) + 1) + (game_index - game_index.min())
    return ids


def _dedupe_columns(directory: Path, table: Any, paths: list[Path], notes: tuple[str, ...],
                    tail: TruncatedTail | None) -> tuple[Any, StoreScan]:
    """The first copy of each game of ``table`` (reading order; its ``file`` column indexes
    ``paths``) and the scan's duplicates and conflicts (winners compared, as
    :func:`scan_outcomes`)."""
    import numpy as np

    ids = _game_ids(table)
    unique, first_rows, counts = np.unique(ids, return_index=True, return_counts=True)
    duplicates = 0
    duplicate_files: set[Path] = set()
    conflicts: list[Conflict] = []
    if len(counts) and counts.max() > 1:
        # Only the copies of games stored twice are compared one by one, in reading order.
        copies = table.take(np.flatnonzero(np.isin(ids, unique[counts > 1])))
        first: dict[GameKey, tuple[Location, str | None]] = {}
        for r in copies.select(["config_hash", "pairing", "game_index", "file", "line", "winner"]).to_pylist():
            key = record_key(r)
            where = (paths[r["file"]], r["line"])
            seen = first.get(key)
            if seen is None:
                first[key] = (where, r["winner"])
                continue
            duplicates += 1
            duplicate_files.update((seen[0][0], where[0]))
            if r["winner"] != seen[1]:
                conflicts.append(Conflict(key, seen[0], seen[1], where, r["winner"]))
        table = table.take(np.sort(first_rows))  # the first copy of each game, in reading order
    scan = StoreScan(directory / GAMES_FILE, (), duplicates, tail, (),
                     tuple(p for p in paths if p in duplicate_files), tuple(conflicts), notes)
    return table, scan


@dataclass(frozen=True)
class _Games:
    """The games of one file of a store as (1-based line, record or summary), in line order."""

    path: Path
    games: Iterable[tuple[int, dict[str, Any]]]
    tail: TruncatedTail | None = None


def _scan_games(directory: Path, files: list[_Games], notes: tuple[str, ...] = (), whole: bool = False) -> StoreScan:
    """Deduplicate the games of a store's files read in order (the first copy counts).

    Args:
        whole: the games are whole records (not summaries): a copy that is another game with
            the same winner is a conflict too (:func:`~boopexp.play.contract.same_game`).
    """
    records: list[dict[str, Any]] = []
    origins: list[Location] = []
    first: dict[GameKey, tuple[Location, int]] = {}  # where the counted copy is, its index in records
    duplicate_files: set[Path] = set()
    conflicts: list[Conflict] = []
    duplicates = 0
    tail = None
    for f in files:
        for number, record in f.games:
            key = record_key(record)
            seen = first.get(key)
            if seen is not None:
                duplicates += 1
                duplicate_files.update((seen[0][0], f.path))
                kept = records[seen[1]]
                if record["winner"] != kept["winner"] or (whole and not same_game(record, kept)):
                    conflicts.append(Conflict(key, seen[0], kept["winner"], (f.path, number), record["winner"]))
                continue
            first[key] = ((f.path, number), len(records))
            records.append(record)
            origins.append((f.path, number))
        tail = f.tail or tail
    order = [f.path for f in files]
    return StoreScan(directory / GAMES_FILE, tuple(records), duplicates, tail, tuple(origins),
                     tuple(p for p in order if p in duplicate_files), tuple(conflicts), notes)


def decode_record(record: dict[str, Any]) -> dict[str, Any]:
    """A stored record of schema 1 or 2 as the rest of the code reads it: the record of
    docs/architecture.md (:func:`boopexp.play.contract.unpack_record`), typed as a plain dict:
    a line read from a file is checked by its reader (:func:`check_record`, the tables), not here.

    Raises:
        ValueError: a schema this version does not know.
    """
    return cast(dict[str, Any], unpack_record(record))


class GameStore:
    """One results folder: ``games.jsonl``, ``config.yaml`` and their backups."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.games_path = self.directory / GAMES_FILE
        self.config_path = self.directory / CONFIG_FILE

    def __repr__(self) -> str:
        return f"GameStore({str(self.directory)!r})"

    def scan(self) -> StoreScan:
        """Validate and read every game: sealed segments and live log (see :func:`scan_store`)."""
        return scan_store(self.directory)

    def outcomes(self) -> StoreScan:
        """The games' summaries only (see :func:`scan_outcomes`): what counting them needs."""
        return scan_outcomes(self.directory)

    def read_config(self) -> dict[str, Any] | None:
        """The resolved config saved with the games, or None if there is none.

        Raises:
            StoreError: config.yaml exists but cannot be read, is not UTF-8 text, or is not a YAML
                mapping (one line naming the file and the problem).
        """
        restore = "; restore it (a copy, or the config the games were run with)"
        try:
            text = self.config_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError as exc:
            raise StoreError(f"{self.config_path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset "
                             f"{exc.start}: {exc.reason}){restore}") from None
        except OSError as exc:
            raise StoreError(f"cannot read {self.config_path}: {exc.strerror or exc}") from None
        try:
            doc = load_yaml(text, str(self.config_path), stored=True)
        except ConfigError as exc:
            raise StoreError(f"{exc}{restore}") from None
        if not isinstance(doc, dict):
            raise StoreError(f"{self.config_path}: expected a mapping, got {_show(doc)}{restore}")
        return doc

    def write_config(self, resolved: Mapping[str, Any]) -> Path | None:
        """Save the resolved config atomically, keeping a different previous one as a backup.

        Returns:
            The backup path if an older, different config.yaml was set aside, else None.
        """
        text = _CONFIG_HEADER + yaml.safe_dump(dict(resolved), sort_keys=False, default_flow_style=None, width=100)
        with writable_folder(self.directory):
            self.directory.mkdir(parents=True, exist_ok=True)
            backup = None
            try:
                old = self.config_path.read_bytes()
            except FileNotFoundError:
                old = None
            if old is not None:
                if old == text.encode("utf-8"):
                    return None
                # The old file describes games already in the store: never destroy it.
                backup = self.directory / f"config.{hashlib.sha256(old).hexdigest()[:12]}.yaml"
                if not backup.exists():
                    write_atomically(backup, old)
            write_atomically(self.config_path, text.encode("utf-8"))
        return backup

    def open(self) -> StoreWriter:
        """Lock the store for appending and set a truncated last line aside.

        Raises:
            StoreError: an invalid line in the file (nothing is written), or another process holds
                the lock.
        """
        return StoreWriter(self)


class StoreWriter:
    """Exclusive appender to a store's games.jsonl (use as a context manager)."""

    def __init__(self, store: GameStore) -> None:
        self.store = store
        # Validate before creating anything (the folder, the lock file): a corrupt store must be
        # left exactly as it is.
        stored = scan_outcome_columns(store.directory)
        with writable_folder(store.directory):
            store.directory.mkdir(parents=True, exist_ok=True)
            self._lock_fd = _lock(store.directory / LOCK_FILE, "wait for it or use another --out")
            try:
                # Again, under the lock: another process may have appended or sealed meanwhile.
                # Only what changed is read again (the log's new lines, a new segment).
                stored = scan_outcome_columns(store.directory, since=stored)
                #: Where a truncated last line was moved (None if there was none).
                self.moved_tail: Path | None = None
                #: The games stored before this writer's first append, as columns.
                self.stored = stored
                if stored.scan.tail is not None:
                    self.moved_tail = _move_tail(store.games_path, stored.scan.tail)
                self._fd = os.open(store.games_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            except BaseException:
                os.close(self._lock_fd)
                raise
        _fsync_dir(store.directory)

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one game record and fsync it.

        Raises:
            StoreError: the record lacks its identity or winner, or the write failed.
        """
        self._write(self._line(record))

    def append_all(self, records: Iterable[Mapping[str, Any]], block_bytes: int = 1 << 22) -> int:
        """Append many game records, fsynced a block of lines at a time (``import``: one fsync per
        game made a large import wait on the disk). A crash leaves whole lines, then at most one
        truncated line that the next writer sets aside, as :meth:`append` does; returns the count.

        Raises:
            StoreError: as :meth:`append` (the records before the invalid one are stored).
        """
        block: list[bytes] = []
        size = count = 0
        for record in records:
            line = self._line(record)
            block.append(line)
            size += len(line)
            count += 1
            if size >= block_bytes:
                self._write(b"".join(block))
                block, size = [], 0
        if block:
            self._write(b"".join(block))
        return count

    @staticmethod
    def _line(record: Mapping[str, Any]) -> bytes:
        problem = check_record(record)
        if problem:
            raise StoreError(f"refusing to store an invalid game record ({problem})")
        return encode_record(record)

    def _write(self, data: bytes) -> None:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]
            os.fsync(self._fd)
        except OSError as exc:
            raise StoreError(f"cannot write {self.store.games_path}: {exc}") from None

    def close(self) -> None:
        """Release the file and the lock."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None  # type: ignore[assignment]
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None  # type: ignore[assignment]

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------------------------
# sealing and migrating


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
    summary (``summary-NNNN.parquet``, :mod:`boopexp.experiments.summary`) are written to
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
        try:
            for first, data in log:
                # The block's games validated and summarised as columns (pyarrow's JSON reader;
                # a line it cannot take decoded in Python, a bad line named): _summarised_lines.
                table = _summarised_lines(log_path, data, first, COLUMNS)
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
        segments = writer.segments
        return SealReport(segments[0] if segments else None, moved, lines - moved, moved_tail, segments)


class _LogBlocks:
    """The live log's complete lines in blocks of about ``block_bytes``, as (lines before the
    block, its bytes), read a buffer at a time (what :func:`seal` streams); after the iteration,
    :attr:`tail` is the last line if it lacks its newline (a write cut short), else None."""

    def __init__(self, path: Path, block_bytes: int = 1 << 24) -> None:
        self.path, self.block_bytes = path, block_bytes
        self.tail: TruncatedTail | None = None

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        try:
            fh = open(self.path, "rb")
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc}") from None
        with fh:
            blocks = _LineBlocks(iter(lambda: fh.read(self.block_bytes), b""))
            yield from blocks
            if blocks.rest:
                self.tail = TruncatedTail(line=blocks.lines + 1, offset=blocks.offset, data=blocks.rest)


#: A winner as a small code (3: anything else), for comparing copies on numpy columns.
_WINNER_CODE: dict[Any, int] = {"p1": 0, "p2": 1, None: 2}
_WINNERS_BY_CODE: dict[int, Any] = {v: k for k, v in _WINNER_CODE.items()}


def _winner_codes(column: Any) -> Any:
    """:data:`_WINNER_CODE` of each value of a winner column, as a numpy array."""
    import numpy as np
    import pyarrow.compute as pc

    codes = np.full(len(column), 3, dtype=np.int8)
    for value, code in _WINNER_CODE.items():
        hit = pc.is_null(column) if value is None else pc.fill_null(pc.equal(column, value), False)
        codes[hit.to_numpy(zero_copy_only=False)] = code
    return codes


def _log_lines(path: Path) -> Iterator[tuple[int, int, bytes]]:
    """The live log's lines as (1-based number, byte offset, bytes with their newline), read a
    buffer at a time; the last one lacks its newline if a write was cut short."""
    try:
        fh = open(path, "rb")
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc}") from None
    with fh:
        offset = 0
        for number, raw in enumerate(fh, start=1):
            yield number, offset, raw
            offset += len(raw)


#: Games a segment written by :func:`seal` or :func:`merge` holds at most: one segment's lines'
#: summaries and compressed bytes are what either holds in memory (~0.3 GB at this size).
SEGMENT_GAMES = 1 << 17


class _SegmentWriter:
    """New sealed segments of at most :data:`SEGMENT_GAMES` games, numbered from ``number``,
    each written with its summary to temporary files (fsynced, fault points ``VERB:written``,
    ``VERB:synced``, ``VERB-summary:…``) as it fills: nothing is visible until :meth:`publish`
    renames them into place, each summary before its segment."""

    def __init__(self, directory: Path, verb: str, number: int, summaries: Any = None) -> None:
        """``summaries``: the summary rows (a pyarrow Table of :data:`~boopexp.experiments.summary.COLUMNS`)
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
        Table of :data:`~boopexp.experiments.summary.COLUMNS`, one row a line, in order)."""
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
        scan = scan_store(directory)
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
            if read_summary(target)[0] is None:
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
        _fsync_dir(directory)
        _fault_point("migrate:truncated")
        return MigrateReport(target, len(scan.records), True, older, moved_tail)


@dataclass(frozen=True)
class MergeReport:
    """What :func:`merge` did.

    Attributes:
        out: the merged store.
        added: games written into it by this merge (0: every game was already there).
        games: games in it after the merge.
        segment: the (first) segment that holds the added games, or None if none was added.
        segments: every new segment (several when more than :data:`SEGMENT_GAMES` games were added).
    """

    out: Path
    added: int
    games: int
    segment: Path | None = None
    segments: tuple[Path, ...] = ()


#: Keys of a store's config.yaml that merging shards may see differ: which shard it is.
MERGE_IGNORED_KEYS = ("shard",)


def merge(sources: Sequence[str | Path], out: str | Path) -> MergeReport:
    """Combine the stores of one config (the shards of ``run --shard I/N``, or any stores of the
    same settings) into the store ``out``: every game once, in identity order, byte for byte.

    Idempotent: a game already in ``out`` is not added again. Refuses, with nothing written,
    stores whose config.yaml differ (but for ``shard:``) and two copies of one game that are
    different games (:class:`Conflict`).

    Streaming, in bounded memory (:class:`_MergePlan`): the games' identities and winners come
    from the summaries' columns (a segment without a usable summary is decoded a block of lines
    at a time; a source's live log is read whole and decoded, as a run's is); only games stored
    more than once have their copies' lines read, for a digest, and decoded only if the digests
    differ (in one more pass over the stores whatever their number, the copies' lines set aside in
    scratch files when there are more than :data:`_COMPARE_PAIRS` pairs: removed, with any folder
    made for them, before anything is written); every conflict is found before anything is
    written. The new lines are then copied in
    identity order into segments of at most :data:`SEGMENT_GAMES` games, each with its summary
    (taken from the sources' summaries), at most :data:`MERGE_BUCKET_GAMES` lines in memory at
    once (more are set aside in scratch files).

    Crash-safe: a new ``out`` is built beside it (``.OUT.merging``) and renamed into place (fault
    point ``merge:built`` before the rename): a kill leaves it absent or complete. An existing one
    (an earlier merge's, or an unsharded run's of the same settings) gets its new segments through
    temporary files, as :func:`seal` writes them, each summary before its segment (fault points
    ``merge-summary:…``, ``merge:written``, ``merge:synced``, ``merge:renamed``): a kill leaves it
    as it was, or with some of its new segments whole (when more than :data:`SEGMENT_GAMES` games
    were added), or complete; the next merge removes the temporaries and adds what is missing.

    Raises:
        ConfigError: a source without config.yaml, stores of other settings, or an ``out`` that
            holds games without a config.yaml.
        StoreError: a damaged store, two copies of one game that differ, or a process writing ``out``.
    """
    out = Path(out)
    folders = list(dict.fromkeys(Path(d) for d in sources))
    docs = []
    for folder in folders:
        doc = GameStore(folder).read_config()
        if doc is None:
            raise ConfigError(f"{folder / CONFIG_FILE}: missing; merge needs each store's settings to check "
                              "they are the same (was the folder written by boopexp run?)")
        docs.append((folder, doc))
    settings = {k: v for k, v in docs[0][1].items() if k not in MERGE_IGNORED_KEYS}
    out_doc = GameStore(out).read_config()
    if out_doc is None and has_games_files(out):
        raise ConfigError(f"--out {out} holds games but no {CONFIG_FILE}; merge into a new folder")
    for folder, doc in docs[1:]:
        mine = {k: v for k, v in doc.items() if k not in MERGE_IGNORED_KEYS}
        if mine != settings:
            key = _first_difference(settings, mine)
            raise ConfigError(
                f"{docs[0][0] / CONFIG_FILE} and {folder / CONFIG_FILE} differ in {key} ({_show(settings.get(key), 40)}"
                f" vs {_show(mine.get(key), 40)}): merge only stores of the same settings (the shards of one run)")
    if out_doc is not None and out_doc != settings:  # a shard's folder, or another config's store
        key = _first_difference(out_doc, settings)
        raise ConfigError(
            f"--out {out} holds a store of other settings: its {CONFIG_FILE} has {key} = {_show(out_doc.get(key), 40)},"
            f" the merged stores' {_show(settings.get(key), 40)}; merge into a new folder (or an earlier merge's)")
    exists = out.is_dir() and any(out.iterdir())
    scratch = out.with_name(f".{out.name}.merging")  # a new out is built here; set-aside lines too
    if exists:
        lock = _lock(out / LOCK_FILE, "wait for it to finish, then merge again")
    try:
        if exists:
            _remove_temporaries(out)
            _remove_orphan_summaries(out)
        with writable_folder(out):
            if scratch.exists():
                shutil.rmtree(scratch)  # a merge killed before it finished
        files: list[_FileTable] = []
        for folder in ([out] if exists else []) + [d for d in folders if d != out]:
            log = _log_table(folder, None, COLUMNS)  # before the segments are listed
            files += [_segment_table(path, None, COLUMNS) for path in segment_paths(folder)]
            if log is not None:
                files.append(log)
        plan = _MergePlan(files, out if exists else None, scratch, out)
        plan.refuse_conflicts()
        if exists and not plan.adding:
            return MergeReport(out, 0, plan.games)
        with writable_folder(out):
            scratch.mkdir(parents=True)  # --out a/b/new: its parents too, as run --out
            if not exists:
                GameStore(scratch).write_config(settings)
            writer = _SegmentWriter(out if exists else scratch, "merge",
                                    _next_segment_number(out) if exists else 1, plan.summaries())
            try:
                plan.write(writer, scratch)
                writer.close()
                if not exists:
                    writer.publish()  # inside the folder built
                    _fault_point("merge:built")
                    os.replace(scratch, out)  # onto nothing or an empty folder: the whole store at once
                    _fsync_dir(out.parent)
                    segments = tuple(out / p.name for p in writer.segments)
                else:
                    writer.publish()
                    segments = writer.segments
                    shutil.rmtree(scratch)
            except BaseException:
                writer.discard()
                raise
        return MergeReport(out, plan.adding, plan.games, segments[0] if segments else None, segments)
    finally:
        if exists:
            os.close(lock)


#: Games of the merged store's new lines held in memory at once while they are written in
#: identity order (~3 KB a line: ~50 MB); a merge adding more first sets its lines aside in
#: scratch files of this many games (at most :data:`_MERGE_BUCKETS` of them), one pass over the
#: stores, then writes them one scratch file at a time.
MERGE_BUCKET_GAMES = 1 << 14
_MERGE_BUCKETS = 256
#: Pairs of copies of one game with different bytes decoded at once to compare them as games:
#: more are set aside in scratch files in one pass over the stores (2 lines a pair; the bucket of
#: :meth:`_MergePlan._in_order`), as the written lines are.
_COMPARE_PAIRS = 1 << 13


def _bucket_lines(n: int, least: int) -> int:
    """Lines held in memory at once when ``n`` lines are taken in order (:meth:`_MergePlan._in_order`):
    ``least``, or more when that would take more than :data:`_MERGE_BUCKETS` scratch files."""
    return max(least, -(-n // _MERGE_BUCKETS))


@contextlib.contextmanager
def _set_aside(folder: Path, out: Path) -> Iterator[Path]:
    """The scratch folder ``folder`` (beside ``out``) for lines set aside before :func:`merge`
    writes anything, made (with its missing parents) and then removed with them, whatever happens:
    nothing is left of it. A kill leaves it, for the next merge to remove."""
    made = list(itertools.takewhile(lambda p: not p.exists(), [folder, *folder.parents]))
    with writable_folder(out):
        folder.mkdir(parents=True)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        for parent in made[1:]:  # the deepest first
            with contextlib.suppress(OSError):
                parent.rmdir()


class _MergePlan:
    """What :func:`merge` reads before it writes anything: every game of the stores from the
    summaries' columns, the games stored more than once (their copies compared by a digest of
    their lines, and decoded only if those differ: :func:`~boopexp.play.contract.same_game`), and
    the first copy of each game not yet in ``out``, in identity order."""

    def __init__(self, files: list[_FileTable], out: Path | None, scratch: Path, folder: Path) -> None:
        """Read what the merge needs, finding every conflict.

        Args:
            files: the stores' files, in reading order (``out``'s first when it exists).
            out: the existing store merged into (its games are not written again), or None.
            scratch: the folder :func:`merge` sets lines aside in (made here, and removed, only
                when there are more pairs of copies to compare than :data:`_COMPARE_PAIRS`).
            folder: the ``--out`` folder (named when the scratch folder cannot be written).
        """
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        self.files = files
        self.scratch, self.folder = scratch, folder
        tables = [f.table.append_column("file", pa.array(np.full(len(f.table), i, dtype=np.int32)))
                  for i, f in enumerate(files)]
        if not tables:
            tables.append(summary_table(()).append_column("file", pa.array([], pa.int32())))
        self.table = pa.concat_tables(tables)
        self.file_of = self.table["file"].to_numpy()
        self.line_of = self.table["line"].to_numpy()
        unique, first_rows, inverse, counts = np.unique(_game_ids(self.table), return_index=True,
                                                        return_inverse=True, return_counts=True)
        self.games = len(unique)
        self.conflicts = self._conflicts(first_rows[inverse], np.flatnonzero(counts[inverse] > 1))
        held = np.array([out is not None and f.path.parent == out for f in files] or [False])
        rows = first_rows[~held[self.file_of[first_rows]]] if len(first_rows) else first_rows
        keys = self.table.take(rows).select(["config_hash", "pairing", "game_index"])
        order = pc.sort_indices(keys, sort_keys=[(c, "ascending") for c in keys.column_names]).to_numpy()
        #: The rows written, in identity order (code point order of the texts, as Python's).
        self.rows = rows[order]
        self.adding = len(self.rows)

    def _conflicts(self, first_of: Any, repeated: Any) -> list[Conflict]:
        """The copies (rows ``repeated``, in reading order; ``first_of``: each row's game's first
        row) that are another game than their first copy, in reading order."""
        import numpy as np

        if not len(repeated):
            return []
        digests = np.zeros((len(repeated), 2), dtype=np.uint64)

        def digest(i: int, raw: bytes) -> None:
            digests[i] = np.frombuffer(hashlib.blake2b(raw, digest_size=16).digest(), dtype=np.uint64)

        self._visit(repeated, digest)
        first = np.searchsorted(repeated, first_of[repeated])  # the first copy's place in ``repeated``
        later = repeated != first_of[repeated]
        other = later & ~(digests == digests[first]).all(axis=1)
        winners = _winner_codes(self.table["winner"])[repeated]
        found = [(int(repeated[i]), self._conflict(int(repeated[first[i]]), int(repeated[i])))
                 for i in np.flatnonzero(other & (winners != winners[first]))]
        # Same winner, other bytes: one game played twice (other host timings) or another game.
        # Both copies' lines of each pair, pair after pair, from one more pass over the stores
        # (a batch of pairs at a time would read every store once per batch: quadratic).
        same = np.flatnonzero(other & (winners == winners[first]))
        rows = np.column_stack([repeated[first[same]], repeated[same]]).ravel()  # a, b, a, b, ...
        size = _bucket_lines(len(rows), 2 * _COMPARE_PAIRS)

        def compare(scratch: Path | None) -> None:
            lines = self._in_order(rows, size, scratch)
            for a, b, (raw_a, raw_b) in zip(rows[0::2], rows[1::2], zip(lines, lines)):
                if not same_game(self._record(a, raw_a), self._record(b, raw_b)):
                    found.append((int(b), self._conflict(int(a), int(b))))

        if len(rows) > size:
            with _set_aside(self.scratch, self.folder) as scratch, writable_folder(self.folder):
                compare(scratch)
        elif len(rows):
            compare(None)
        return [c for _, c in sorted(found, key=lambda rc: rc[0])]

    def _where(self, row: int) -> Location:
        return self.files[int(self.file_of[row])].path, int(self.line_of[row])

    def _record(self, row: int, raw: bytes) -> dict[str, Any]:
        return parse_line(*self._where(row), raw[:-1])

    def _conflict(self, first: int, second: int) -> Conflict:
        a, b = self.table.select(["config_hash", "pairing", "game_index", "winner"]).take([first, second]).to_pylist()
        return Conflict(record_key(a), self._where(first), a["winner"], self._where(second), b["winner"])

    def refuse_conflicts(self) -> None:
        """Raise the one line of the first conflict (:meth:`StoreScan.refuse_conflicts`)."""
        StoreScan(Path(GAMES_FILE), conflicts=tuple(self.conflicts)).refuse_conflicts("merged", "merge")

    def summaries(self) -> Any:
        """The summary rows (:data:`~boopexp.experiments.summary.COLUMNS`) of the lines written, in order."""
        return self.table.take(self.rows).select(list(COLUMNS))

    def write(self, writer: _SegmentWriter, scratch: Path) -> None:
        """Give ``writer`` the lines of :attr:`rows` in that order, holding at most a bucket of
        them in memory (:data:`MERGE_BUCKET_GAMES`; the others set aside in ``scratch``)."""
        for raw in self._in_order(self.rows, _bucket_lines(len(self.rows), MERGE_BUCKET_GAMES), scratch):
            writer.add(raw)

    def _in_order(self, rows: Any, size: int, scratch: Path | None) -> Iterator[bytes]:
        """The stored lines of ``rows`` (a row may come more than once), in that order, from one
        pass over the files that hold them, holding at most ``size`` lines in memory: when there
        are more, that pass first sets them aside in scratch files of ``size`` lines each in the
        folder ``scratch`` (None only if there are not), then each file is read back and removed."""
        import numpy as np

        n = len(rows)
        unique, inverse = np.unique(rows, return_inverse=True)
        if n <= size:
            lines = self._gather(unique)
            for u in inverse.tolist():
                yield lines[u]
            return
        assert scratch is not None
        places = np.argsort(inverse, kind="stable")  # the places of each row of ``unique``, row after row
        starts = np.searchsorted(inverse[places], np.arange(len(unique) + 1))
        head = struct.Struct("<QI")
        paths = [scratch / f"lines-{b:04d}" for b in range(-(-n // size))]
        handles = [open(path, "wb") for path in paths]

        def set_aside(u: int, raw: bytes) -> None:
            for i in places[starts[u]:starts[u + 1]].tolist():
                handles[i // size].write(head.pack(i, len(raw)) + raw)

        try:
            self._visit(unique, set_aside)
        finally:
            for fh in handles:
                fh.close()
        for b, path in enumerate(paths):
            data = path.read_bytes()
            slots = [b""] * min(size, n - b * size)
            at = 0
            while at < len(data):
                i, length = head.unpack_from(data, at)
                slots[i - b * size] = data[at + head.size:at + head.size + length]
                at += head.size + length
            del data
            path.unlink()
            yield from slots

    def _gather(self, rows: Any) -> list[bytes]:
        """The stored lines of ``rows``, in their order (:meth:`_visit`)."""
        lines = [b""] * len(rows)
        self._visit(rows, lines.__setitem__)
        return lines

    def _visit(self, rows: Any, visit: Callable[[int, bytes], object]) -> None:
        """Call ``visit(i, line)`` with the stored line (with its newline) of each row ``rows[i]``,
        reading each file that holds one once, a line at a time.

        Raises:
            StoreError: a file changed since it was read (a seal or migrate meanwhile).
        """
        import numpy as np

        files = self.file_of[rows]
        for k in np.unique(files):
            f = self.files[int(k)]
            mine = np.flatnonzero(files == k)
            lines = self.line_of[rows[mine]]
            at = np.full(int(lines.max()) + 1, -1, dtype=np.int64)
            at[lines] = mine
            found = 0
            for number, raw in self._lines(f):
                if number < len(at) and at[number] >= 0:
                    visit(int(at[number]), raw)
                    found += 1
            if found != len(mine):
                raise StoreError(f"{f.path} changed while merging (sealed or migrated meanwhile?); merge again")

    @staticmethod
    def _lines(f: _FileTable) -> Iterator[tuple[int, bytes]]:
        """The complete lines of one file as read (a segment unchanged; the log's lines then)."""
        if f.path.name != GAMES_FILE:
            try:
                st = f.path.stat()
            except OSError as exc:
                raise _segment_error(f.path, exc) from None
            if (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) != f.stamp:
                raise StoreError(f"{f.path} changed while merging (sealed or migrated meanwhile?); merge again")
            for block in segment_blocks(f.path):
                for number, raw in block:
                    yield number, raw + b"\n"
            return
        for number, _, raw in _log_lines(f.path):
            if number > f.stamp[2] or not raw.endswith(b"\n"):
                return
            yield number, raw


def _first_difference(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    """The first key (in ``a``'s order, then ``b``'s) whose value differs between two configs."""
    return next(k for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k))


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


#: Why a sealed segment is damaged: its last line cut short, or no byte at all (a segment is
#: written whole through a temporary file and is a zstd stream even when it holds no game, 25
#: bytes: zero bytes is a lost segment, and reading it as empty would have its games played again).
_NO_NEWLINE = "its last line has no newline"
_EMPTY = "0 bytes; a sealed segment is never empty"


def _segment_error(path: Path, problem: BaseException | str) -> StoreError:
    """The one line for a sealed segment that cannot be read: gone since it was listed (a seal or
    migrate renamed it meanwhile: read again), or damaged (an OS, gzip or zstd error, or ``problem``
    said: restore it). Every reader of segments says it so."""
    if isinstance(problem, FileNotFoundError):
        return StoreError(f"{path} vanished while reading (sealed or migrated meanwhile?); read again")
    return StoreError(f"{path}: damaged sealed segment ({problem}); restore it from a copy")


def _read_segment(path: Path) -> bytes:
    """A sealed segment's bytes, as stored (compressed)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _segment_error(path, exc) from None
    if not data:
        raise _segment_error(path, _EMPTY)
    return data


def _decompress(path: Path, data: bytes) -> bytes:
    """A sealed segment's lines from its bytes as stored (``data``), checked (either format)."""
    if path.name.endswith(".gz"):
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
            raise _segment_error(path, exc) from None
    return b"".join(_zstd_chunks(path, data, None))


def segment_data(path: Path) -> bytes:
    """The uncompressed lines of a sealed segment (either format), checked: for the few readers
    that want its bytes (tests, ``export``) rather than its lines (:func:`read_store_file`).

    Raises:
        StoreError: the segment cannot be read or is damaged.
    """
    return _decompress(path, _read_segment(path))


#: The zstd skippable frame that ends a segment written by this version: its magic number and
#: length (8), then the CRC-32 and length (mod 2^32) of the uncompressed lines, little-endian, as
#: a gzip member's trailer holds them. pyarrow's zstd frames carry no checksum: the readers check
#: this one (a damaged segment is an error, as with gzip), and the segment's summary names these
#: last 8 bytes as it names a gzip trailer (:mod:`boopexp.experiments.summary`). zstd's own tools
#: skip the frame (``zstd -dc games-0001.jsonl.zst`` prints the lines).
_TRAILER_HEAD = (0x184D2A50).to_bytes(4, "little") + (8).to_bytes(4, "little")
_TRAILER = struct.Struct("<II")


class _SegmentEncoder:
    """The bytes of a new sealed segment, given its lines in order: zstd frames (level
    :data:`SEGMENT_ZSTD_LEVEL`) of about :data:`_FRAME_BYTES` uncompressed bytes each,
    concatenated, then the checksum trailer (:data:`_TRAILER_HEAD`)."""

    def __init__(self) -> None:
        import pyarrow as pa

        self._codec = pa.Codec("zstd", compression_level=SEGMENT_ZSTD_LEVEL)
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._frames: list[bytes] = []
        self._crc = self._size = 0

    def add(self, data: bytes) -> None:
        """Lines (with their newlines) to add."""
        self._pending.append(data)
        self._pending_bytes += len(data)
        if self._pending_bytes >= _FRAME_BYTES:
            self._frame()

    def _frame(self) -> None:
        data = b"".join(self._pending)
        self._pending, self._pending_bytes = [], 0
        self._crc = zlib.crc32(data, self._crc)
        self._size += len(data)
        self._frames.append(self._codec.compress(data, asbytes=True))

    def finish(self) -> bytes:
        """The segment's bytes (a segment of no line is one empty frame and the trailer)."""
        if self._pending or not self._frames:
            self._frame()
        return b"".join(self._frames) + _TRAILER_HEAD + _TRAILER.pack(self._crc, self._size & 0xFFFFFFFF)


def encode_segment(data: bytes) -> bytes:
    """A new sealed segment holding the lines ``data`` (:class:`_SegmentEncoder`)."""
    encoder = _SegmentEncoder()
    for start in range(0, len(data), _FRAME_BYTES):
        encoder.add(data[start:start + _FRAME_BYTES])
    return encoder.finish()


def _zstd_chunks(path: Path, data: bytes, block_bytes: int | None) -> Iterator[bytes]:
    """The uncompressed bytes of a zstd segment's bytes ``data``, in chunks of at most
    ``block_bytes`` (None: one), checked against its trailer."""
    import pyarrow as pa

    if not data:
        raise _segment_error(path, _EMPTY)
    size = len(data) - len(_TRAILER_HEAD) - _TRAILER.size
    if size < 0 or data[size:size + len(_TRAILER_HEAD)] != _TRAILER_HEAD:
        raise _segment_error(path, "no checksum trailer at its end: cut short?")
    crc, length = _TRAILER.unpack_from(data, size + len(_TRAILER_HEAD))
    got_crc = got_length = 0
    try:
        stream = pa.CompressedInputStream(pa.py_buffer(data).slice(0, size), "zstd")
        while chunk := (stream.read() if block_bytes is None else stream.read(block_bytes)):
            got_crc, got_length = zlib.crc32(chunk, got_crc), got_length + len(chunk)
            yield chunk
            if block_bytes is None:
                break
    except (pa.ArrowException, OSError, ValueError) as exc:  # ArrowIOError is an OSError
        raise _segment_error(path, exc) from None
    if (got_crc, got_length & 0xFFFFFFFF) != (crc, length):
        raise _segment_error(path, "its lines do not match its checksum")


def _next_segment_number(directory: Path) -> int:
    paths = segment_paths(directory)
    return 1 + (int(SEGMENT_PATTERN.fullmatch(paths[-1].name).group(1)) if paths else 0)  # type: ignore[union-attr]


def _write_durably(path: Path, data: bytes, step: str) -> None:
    """Temporary file, fsync, rename, fsync the folder: ``path`` is either absent/old or complete."""
    _rename_durably(_write_temporary(path, data, step), path, step)


def _write_temporary(path: Path, data: bytes, step: str) -> Path:
    """``data`` in the temporary file of ``path`` (``.NAME.tmp``), fsynced; returns it."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        _fault_point(f"{step}:written")
        os.fsync(fh.fileno())
    _fault_point(f"{step}:synced")
    return tmp


def _rename_durably(tmp: Path, path: Path, step: str) -> None:
    """Rename a written temporary file into place and fsync the folder."""
    os.replace(tmp, path)
    _fsync_dir(path.parent)
    _fault_point(f"{step}:renamed")


def _truncate(path: Path) -> None:
    with open(path, "r+b") as fh:
        fh.truncate(0)
        fh.flush()
        os.fsync(fh.fileno())


def _remove_temporaries(directory: Path) -> None:
    """Temporary segments and summaries of a seal or migrate killed before its rename (never read)."""
    for name in os.listdir(directory):
        if ((name.startswith(".games-") and name.endswith((".jsonl.gz.tmp", ".jsonl.zst.tmp")))
                or (name.startswith(".summary-") and name.endswith(".parquet.tmp"))):
            (directory / name).unlink()


def _remove_orphan_summaries(directory: Path) -> None:
    """Summaries whose segment does not exist (a seal killed between the two renames): never read,
    but they would look like data."""
    segments = {summary_path(p).name for p in segment_paths(directory)}
    for name in os.listdir(directory):
        if SUMMARY_PATTERN.fullmatch(name) and name not in segments:
            (directory / name).unlink()


def _fault_point(step: str) -> None:
    """Kill this process at ``step`` if :data:`FAULT_ENV` names it: how the tests crash a seal."""
    if os.environ.get(FAULT_ENV) == step:
        os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))


# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def writable_folder(directory: Path) -> Iterator[None]:
    """Turn an OS refusal to create or write a results folder (read-only, a file in the way,
    no space left) into one StoreError line naming the folder: the check of every command with
    ``--out`` (run, mirror, play, tune)."""
    try:
        yield
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(directory) else ""
        raise StoreError(
            f"cannot write the results folder {str(directory)!r}: {reason}{where}; choose another --out"
        ) from None


def _lock(path: Path, hint: str) -> int:
    """Take the store's exclusive lock, or refuse in one line ending with ``hint`` (what the
    command that wanted the lock can do: the caller knows its own options)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    if fcntl is None:  # pragma: no cover
        return fd
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise StoreError(
            f"{path.parent} is being written by another boopexp process (lock {path}); {hint}"
        ) from None
    return fd


def _move_tail(games: Path, tail: TruncatedTail) -> Path:
    """Copy a partial last line to games.jsonl.corrupt-<time>, then cut it from games.jsonl."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    target = games.with_name(f"{games.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        target = games.with_name(f"{games.name}.corrupt-{stamp}-{n}")
        n += 1
    write_atomically(target, tail.data)
    # Only after the bytes are safely elsewhere: the next record must start on its own line.
    with open(games, "r+b") as fh:
        fh.truncate(tail.offset)
        fh.flush()
        os.fsync(fh.fileno())
    return target


#: The output path that names standard output (``--out -``).
STDOUT_PATH = "-"


def is_stream(path: str | Path) -> bool:
    """Whether writing ``path`` streams into it rather than replacing a file: standard output
    (``-``), or (through any symbolic link) an existing character device, FIFO or socket. A
    command does not ask ``--force`` to write one, nor says "exists"."""
    if str(path) == STDOUT_PATH:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def writes_standard_output(path: str | Path) -> bool:
    """Whether ``path`` is this process's standard output (``-``, ``/dev/stdout``, the file or
    pipe it goes to): a command writing its data there prints its own message on stderr."""
    if str(path) == STDOUT_PATH:
        return True
    try:
        return os.path.samestat(os.stat(path), os.fstat(sys.stdout.fileno()))
    except (OSError, ValueError, AttributeError):  # no such path, or stdout is no file (a test's capture)
        return False


def write_atomically(path: str | Path, data: bytes) -> None:
    """``data`` as the whole of ``path`` or nothing: a temporary file beside it, fsync, rename,
    fsync the folder (the temporary removed if that fails). The one way boopexp writes a file a
    user names (``export --out``, ``openings --out``) as well as its own.

    A symbolic link is written through, never replaced: the temporary file goes beside the file
    it points to, which is renamed over (a dangling link's target is created, as the shell's
    ``>`` does). Standard output (``-``) and what is not a file — a character device such as
    ``/dev/null`` or a terminal, a FIFO, a socket — are streamed into, not renamed over
    (:func:`is_stream`). Raises OSError for the caller to word."""
    if str(path) == STDOUT_PATH:
        _stream(sys.stdout.buffer, data)
        return
    target = Path(os.path.realpath(path))
    if is_stream(target):
        with open(target, "wb") as fh:
            _stream(fh, data)
        return
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    path = target
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _stream(fh: Any, data: bytes) -> None:
    fh.write(data)
    fh.flush()


def _fsync_dir(directory: Path) -> None:
    # Makes a new or renamed file's directory entry durable; not every platform allows it.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _json_default(obj: Any) -> Any:
    # Engine code may hand back numpy scalars or arrays; store them as plain JSON values.
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if hasattr(obj, "item"):
        return obj.item()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def _show(value: Any, limit: int = 80) -> str:
    return show_value(value, limit)  # a stored line's values: longer by default than a config value's
