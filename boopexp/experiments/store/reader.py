"""**The** reader, ``StoreReader``: a store's games as whole records (``records``), outcome columns
(``outcomes``), one or a few by where they are (``record``, ``records_at``), numbered lines a block
at a time (``files``, ``blocks``), every line through one decoder (``decode``).

**The** reader of a store: ``StoreReader``, whose methods read its games as whole records
(``records``), as outcome columns (``outcomes``), one or a few by where they are stored
(``record``, ``records_at``) or as numbered lines a block at a time (``files``, ``blocks``); every
line it decodes goes through one decoder (``decode``: :func:`~boopexp.experiments.store.lines.parse_line`).

Every method reads the store as it is on disk: the sealed segments in number order, then the live
log, each game once (the first copy read counts). Reading never writes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from boopexp.errors import StoreError
from boopexp.experiments.store.columns import OutcomeColumns, _combine_columns, _log_table, _segment_table
from boopexp.experiments.store.files import GAMES_FILE
from boopexp.experiments.store.lines import Location, parse_line
from boopexp.experiments.store.scan import StoreFile, StoreScan, _Games, _read_log, _scan_games
from boopexp.experiments.store.segments import _read_segment, _segment_lines, segment_blocks, segment_paths
from boopexp.experiments.store.summary import OUTCOME_COLUMNS


class StoreReader:
    """The games of the store in ``directory`` (a folder without games is an empty store).

    Raises (every method):
        StoreError: a line other than the log's last one is not a valid record (file and line
            named), a file cannot be read, or a sealed segment is damaged.
    """

    #: **The** decoder of one stored line (:func:`~boopexp.experiments.store.lines.parse_line`):
    #: ``decode(path, number, raw, moves=True, telemetry=None)``, the record validated.
    decode = staticmethod(parse_line)

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def __repr__(self) -> str:
        return f"StoreReader({str(self.directory)!r})"

    def records(self) -> StoreScan:
        """Every game as its whole record (moves and telemetry), validated, each once, in reading
        order, with what reading tolerated (a truncated tail, duplicates, conflicts: a copy that is
        another game with the same winner is a conflict too, :func:`~boopexp.play.contract.same_game`)."""
        files = [_Games(f.path, ((n, parse_line(f.path, n, raw)) for n, raw in f.lines), f.tail)
                 for f in self._lines()]
        return _scan_games(self.directory, files, whole=True)

    def outcomes(self, columns: Sequence[str] = OUTCOME_COLUMNS, since: OutcomeColumns | None = None) -> OutcomeColumns:
        """The games' outcomes as columns, never one Python object per sealed game: each sealed
        segment's summary read as a pyarrow Table (a segment without a usable summary decoded), the
        live log's rows written with its games (:mod:`~boopexp.experiments.store.log_rows`: a line
        without one decoded), and a game stored twice found
        on one int64 identity per game (numpy): the same counted copy, duplicates, conflicts and
        warnings as :meth:`records` (winners compared). ``.records()`` of the result gives the few
        rows a caller wants one by one as dicts.

        Args:
            columns: the summary's columns to read (:data:`~boopexp.experiments.store.summary.COLUMNS`,
                ``line``, a game's identity and ``winner`` among them): the tables read the
                experiment and the length too.
            since: an earlier reading of the same folder: the files it read that have not changed
                since are not read again (a segment still the same file, the live log's lines
                already read if the log still begins with them): how a run reads its store again
                under the lock (read with the same ``columns``).
        """
        directory = self.directory
        earlier = {f.path: f for f in since.files} if since is not None else {}
        log = _log_table(directory, earlier.get(directory / GAMES_FILE), columns)  # before the segments are listed
        files = [_segment_table(path, earlier.get(path), columns) for path in segment_paths(directory)]
        if log is not None:
            files.append(log)
        return _combine_columns(directory, files, log.tail if log is not None else None, columns)

    def record(self, location: Location) -> dict[str, Any]:
        """The game record stored at ``location`` (a line of a sealed segment or of the live log, as
        :meth:`OutcomeColumns.origin_of_row` names it), decoded like every record: one game read
        without decoding the store's others (``boopexp serve``'s viewer).

        Raises:
            StoreError: also when the line is gone (sealed or rewritten meanwhile).
        """
        return next(self.records_at([location]))

    def records_at(self, locations: Sequence[Location]) -> Iterator[dict[str, Any]]:
        """:meth:`record` of each of ``locations``, in their order, lazily, each file read (and a
        segment decompressed) once however many of them it holds (``import`` comparing a file's
        games with their stored copies). A file's wanted lines are kept until its last location is
        reached: locations sorted by file hold one file's lines at a time.

        Raises:
            StoreError: as :meth:`record`, when the location concerned is reached.
        """
        wanted: dict[Path, set[int]] = {}
        last: dict[Path, int] = {}
        for i, (path, number) in enumerate(locations):
            wanted.setdefault(path, set()).add(number)
            last[path] = i
        found: dict[Path, dict[int, bytes]] = {}
        for i, (path, number) in enumerate(locations):
            if path not in found:
                stored = _read_log(path.parent) if path.name == GAMES_FILE else _segment_file(path)
                found[path] = {n: raw for n, raw in stored.lines if n in wanted[path]} if stored is not None else {}
            raw = found[path].get(number)
            if last[path] == i:
                del found[path]
            if raw is None:
                raise StoreError(f"{path} line {number} vanished while reading (sealed or migrated meanwhile?); "
                                 "read again")
            yield parse_line(path, number, raw)

    def files(self) -> list[Path]:
        """The store's files in reading order: its sealed segments by number, then its live log
        (if there is one)."""
        log = self.directory / GAMES_FILE
        return [*segment_paths(self.directory), *([log] if log.is_file() else [])]

    def blocks(self, path: Path, block_bytes: int = 1 << 24) -> Iterator[list[tuple[int, bytes]]]:
        """The complete, non-blank lines of one of :meth:`files` as (1-based number, bytes without
        the newline): a sealed segment's in blocks of about ``block_bytes`` uncompressed bytes (a
        reader that needs some of every game never holds the whole segment), the live log's in one
        (none: no log; a cut-short last line is not one). Decode them with :attr:`decode`."""
        if path.name != GAMES_FILE:
            yield from segment_blocks(path, block_bytes)
            return
        log = _read_log(path.parent)
        if log is not None and log.lines:
            yield log.lines

    def _lines(self) -> list[StoreFile]:
        """Every file's complete lines in reading order. The log is read *before* the segments
        are listed: ``seal`` renames its new segment before it truncates the log, so a game it
        moves meanwhile is read at least once (twice is counted once)."""
        log = _read_log(self.directory)
        files = [_segment_file(path) for path in segment_paths(self.directory)]
        return files if log is None else [*files, log]


def _segment_file(path: Path) -> StoreFile:
    """A sealed segment's lines, checked whole (a segment is written whole, through a temporary
    file, so a cut-short segment is damage, never a crash)."""
    return StoreFile(path, _segment_lines(path, _read_segment(path)))
