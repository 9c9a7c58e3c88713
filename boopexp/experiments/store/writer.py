"""``GameStore`` (the folder, its config.yaml and backups) and ``StoreWriter`` (locked append +
fsync per game, each game's summary row written with its line)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from boopexp.errors import ConfigError, StoreError
from boopexp.experiments.config import load_yaml
from boopexp.experiments.store.files import (
    CONFIG_FILE,
    GAMES_FILE,
    LOCK_FILE,
    _fault_point,
    _fsync_dir,
    _lock,
    _move_tail,
    writable_folder,
    write_atomically,
)
from boopexp.experiments.store.lines import _show, check_record, encode_record
from boopexp.experiments.store.log_rows import ROWS_FILE, row_bytes, write_rows
from boopexp.experiments.store.reader import StoreReader
from boopexp.experiments.store.summary import summary_table

_CONFIG_HEADER = (
    "# The resolved configuration of the games in games.jsonl, written by boopexp (docs/runner.md).\n"
    "# A previous, different version of this file is kept as config.<hash>.yaml.\n"
)


class GameStore:
    """One results folder: ``games.jsonl``, ``config.yaml`` and their backups."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.games_path = self.directory / GAMES_FILE
        self.config_path = self.directory / CONFIG_FILE

    def __repr__(self) -> str:
        return f"GameStore({str(self.directory)!r})"

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
    """Exclusive appender to a store's games.jsonl (use as a context manager), and to its rows
    (:mod:`~boopexp.experiments.store.log_rows`): each line is written and fsynced, then its row
    (fault point ``append:line`` between the two); the rows are rewritten first if they do not
    match the log line for line (a log of an older version, a process killed between the two)."""

    def __init__(self, store: GameStore) -> None:
        self.store = store
        # Validate before creating anything (the folder, the lock file): a corrupt store must be
        # left exactly as it is.
        stored = StoreReader(store.directory).outcomes()
        with writable_folder(store.directory):
            store.directory.mkdir(parents=True, exist_ok=True)
            self._lock_fd = _lock(store.directory / LOCK_FILE, "wait for it or use another --out")
            try:
                # Again, under the lock: another process may have appended or sealed meanwhile.
                # Only what changed is read again (the log's new lines, a new segment).
                stored = StoreReader(store.directory).outcomes(since=stored)
                #: Where a truncated last line was moved (None if there was none).
                self.moved_tail: Path | None = None
                #: The games stored before this writer's first append, as columns.
                self.stored = stored
                if stored.scan.tail is not None:
                    self.moved_tail = _move_tail(store.games_path, stored.scan.tail)
                log = next((f for f in stored.files if f.path == store.games_path), None)
                if log is None or not log.rows_exact:  # rows of a log an older version wrote, or stale
                    write_rows(store.directory, store.games_path.read_bytes() if log is not None else b"",
                               log.log if log is not None else summary_table(()))
                self._fd = os.open(store.games_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                self._rows_fd = os.open(store.directory / ROWS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                #: The log's size and lines: where the next line goes.
                self._offset = os.fstat(self._fd).st_size
                self._lines = log.stamp[2] if log is not None else 0
            except BaseException:
                os.close(self._lock_fd)
                raise
        _fsync_dir(store.directory)

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one game record and fsync it.

        Raises:
            StoreError: the record lacks its identity or winner, or the write failed.
        """
        self._write([self._line(record)])

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
                self._write(block)
                block, size = [], 0
        if block:
            self._write(block)
        return count

    @staticmethod
    def _line(record: Mapping[str, Any]) -> bytes:
        problem = check_record(record)
        if problem:
            raise StoreError(f"refusing to store an invalid game record ({problem})")
        return encode_record(record)

    def _write(self, lines: list[bytes]) -> None:
        """Append ``lines`` to the log and fsync, then their rows to the rows file and fsync."""
        rows = []
        for line in lines:
            self._lines += 1
            rows.append(row_bytes(self.store.games_path, self._lines, line, self._offset))
            self._offset += len(line)
        _write_all(self._fd, b"".join(lines), self.store.games_path)
        _fault_point("append:line")
        _write_all(self._rows_fd, b"".join(rows), self.store.directory / ROWS_FILE)

    def close(self) -> None:
        """Release the file and the lock."""
        if self._fd is not None:
            os.close(self._fd)
            os.close(self._rows_fd)
            self._fd = None  # type: ignore[assignment]
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None  # type: ignore[assignment]

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _write_all(fd: int, data: bytes, path: Path) -> None:
    """``data`` appended to ``fd`` (the file ``path``) and fsynced.

    Raises:
        StoreError: the write failed.
    """
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc}") from None
