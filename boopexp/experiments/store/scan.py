"""Reading a store as records: its files in reading order (the segments by number, then the live
log), each game once (the first copy read counts; ``StoreScan`` says what was tolerated: a
truncated tail, duplicates, conflicts), and one record read by where it is (``record_at``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boopexp.errors import StoreError
from boopexp.experiments.store.files import GAMES_FILE
from boopexp.experiments.store.lines import Location, TruncatedTail, _LineBlocks, parse_line, split_lines
from boopexp.experiments.store.segments import _read_segment, _segment_lines, segment_blocks, segment_paths
from boopexp.experiments.store.summary import game_summary, read_summary
from boopexp.play.contract import same_game
from boopexp.play.identity import GameKey, record_key


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


@dataclass(frozen=True)
class StoreFile:
    """The complete lines of one file of a store: a sealed segment or the live log."""

    path: Path
    lines: list[tuple[int, bytes]]
    tail: TruncatedTail | None = None  # only the live log can have a write cut short


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
    summaries (:func:`boopexp.experiments.store.summary.game_summary`: identity, sides, outcome, length,
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
