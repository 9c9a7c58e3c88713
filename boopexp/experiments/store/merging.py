"""``merge``: the stores of one config combined, every game once, in identity order, bounded memory,
crash-safe."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import shutil
import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boopexp.errors import ConfigError, StoreError
from boopexp.experiments.store.columns import _FileTable, _game_ids, _log_table, _segment_table, _winner_codes
from boopexp.experiments.store.files import (
    CONFIG_FILE,
    GAMES_FILE,
    LOCK_FILE,
    _fault_point,
    _fsync_dir,
    _lock,
    _remove_temporaries,
    writable_folder,
)
from boopexp.experiments.store.lines import Location, _show, parse_line
from boopexp.experiments.store.scan import Conflict, StoreScan, _log_lines
from boopexp.experiments.store.sealing import _SegmentWriter
from boopexp.experiments.store.segments import (
    _next_segment_number,
    _remove_orphan_summaries,
    _segment_error,
    has_games_files,
    segment_blocks,
    segment_paths,
)
from boopexp.experiments.store.summary import COLUMNS, summary_table
from boopexp.experiments.store.writer import GameStore
from boopexp.play.contract import same_game
from boopexp.play.identity import record_key


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
        ConfigError: a source without config.yaml, stores of other settings, an ``out`` that
            holds games without a config.yaml, or one inside a source or holding one.
        StoreError: a damaged store, two copies of one game that differ, or a process writing ``out``.
    """
    out = Path(out)
    folders = list(dict.fromkeys(Path(d) for d in sources))
    where = out.resolve()
    for folder in folders:  # out may be a source (an earlier merge's), not inside one nor around one
        if folder.resolve() in where.parents:
            raise ConfigError(f"--out {out} is inside the store {folder} it reads (a store inside a store): "
                              "give a folder outside it")
        if where in folder.resolve().parents:
            raise ConfigError(f"--out {out} holds the store {folder} it reads (a store inside a store): "
                              "give a folder outside it")
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
        """The summary rows (:data:`~boopexp.experiments.store.summary.COLUMNS`) of the lines written, in order."""
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
