"""What reading found: each game once, the first copy read counting (``StoreScan``: truncated tail,
duplicates, ``Conflict``s), and the live log read as it is.

What reading a store found (``StoreScan``: its games each once, the first copy read counting,
and what was tolerated: a truncated tail, duplicates, conflicts between copies), and the live log
read as it is (``_read_log``, ``_LogBlocks``: the one file of a store that grows).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boopexp.errors import StoreError
from boopexp.experiments.store.files import GAMES_FILE
from boopexp.experiments.store.lines import Location, TruncatedTail, _LineBlocks, split_lines
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
            whole records (``StoreReader.records``, ``merge``), also those that are another game
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
