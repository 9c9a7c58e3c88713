"""A store's games as outcome columns (``OutcomeColumns``) and their identities as sorted arrays
(``StoredKeys``: what a resumed run asks).

A store's games as outcome columns (``OutcomeColumns``, what ``StoreReader.outcomes`` reads): each sealed
segment's summary read as a pyarrow Table, the live log's rows written with its lines
(:mod:`.log_rows`; a line without one decoded), a game
stored twice found on one int64 identity per game (numpy), and the stored games' identities as
sorted arrays (``StoredKeys``: what a resumed run asks).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from boopexp.experiments.store.files import GAMES_FILE
from boopexp.experiments.store.lines import Location, TruncatedTail
from boopexp.experiments.store.log_rows import decoded_summary, log_summary, read_rows
from boopexp.experiments.store.scan import Conflict, StoreScan, _read_log_bytes
from boopexp.experiments.store.segments import _segment_error, segment_text_blocks
from boopexp.experiments.store.summary import OUTCOME_COLUMNS, read_summary_table, summary_table
from boopexp.play.contract import FORFEITS
from boopexp.play.identity import GameKey, record_key

#: Game indices :meth:`StoredKeys.missing` checks at once (a plan of 10^9 games stays lazy).
_MISSING_CHUNK = 1 << 16


@dataclass(frozen=True)
class _FileTable:
    """One file of a store as ``StoreReader.outcomes`` read it, with what tells whether a later
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
    #: The live log's games as every summary column (what its rows are rewritten from), and
    #: whether its rows matched its lines one for one (:func:`~.log_rows.log_summary`).
    log: Any = None
    rows_exact: bool = True


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
            tail, duplicates, conflicts, unused summaries) are those of ``StoreReader.records``.
        files: each file as read (what ``StoreReader.outcomes(since=this)`` reuses).
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

        parts = [decoded_summary(path, data, first).select(list(columns)) for first, data in segment_text_blocks(path)]
        table = pa.concat_tables(parts) if parts else summary_table(()).select(list(columns))
        return _FileTable(path, stamp, table, note, decoded=True)
    return _FileTable(path, stamp, table, note)


def _log_table(directory: Path, earlier: _FileTable | None,
               columns: Sequence[str] = OUTCOME_COLUMNS) -> _FileTable | None:
    """The live log's games as a table of ``columns`` (of the summary's; None: no log): each
    line's row written with it where one matches it, else the line decoded
    (:func:`~.log_rows.log_summary`); only its lines after those of ``earlier`` are read if the
    log still begins with them."""
    data = _read_log_bytes(directory)
    if data is None:
        return None
    path, end = directory / GAMES_FILE, data.rfind(b"\n") + 1
    start, first_line, head, exact = 0, 0, None, True
    view = memoryview(data)
    digest = hashlib.blake2b()  # of the complete lines: the earlier ones hashed once, not again for the stamp
    if earlier is not None:
        length, earlier_digest, lines = earlier.stamp
        if length <= end:
            digest.update(view[:length])
            if digest.digest() == earlier_digest:
                start, first_line, head, exact = length, lines, earlier.log, earlier.rows_exact
            else:
                digest = hashlib.blake2b()
    rows = read_rows(directory)
    full, matched = log_summary(path, data[start:end], start, first_line, rows)
    tail = None
    if end < len(data):
        tail = TruncatedTail(line=first_line + data.count(b"\n", start, end) + 1, offset=end, data=data[end:])
    if head is not None:
        import pyarrow as pa

        full = pa.concat_tables([head, full])
    digest.update(view[start:end])
    lines = first_line + data.count(b"\n", start, end)
    # Exact: one matching row a line, and no other row (the earlier lines' rows were matched then).
    exact = exact and matched and (len(rows) if rows is not None else 0) == lines
    stamp = (end, digest.digest(), lines)
    return _FileTable(path, stamp, full.select(list(columns)), None, tail, log=full, rows_exact=exact)


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
    ``StoreReader.records``)."""
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
