"""The results store of one experiment folder: ``games.jsonl`` plus the ``config.yaml`` it was run with.

``games.jsonl`` holds one JSON object per finished game (docs/architecture.md), appended by the
parent process only and fsync'ed per game, so a killed run loses at most the game in flight.
A game is identified by ``(config_hash, pairing, game_index)``; rerunning skips the keys already
present. Reading is strict: a line that is not a valid record in the middle of the file is an
error (:class:`~boopexp.errors.StoreError` naming file and line), because guessing would silently
drop or double-count games. Only a last line without its newline — a write cut short — is
tolerated: it is reported, ignored, and moved aside (never deleted) before the next append.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from boopexp.config import PlanEntry
from boopexp.errors import StoreError

try:  # POSIX advisory locks; without them two runs into one folder are merely not prevented
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

GAMES_FILE = "games.jsonl"
CONFIG_FILE = "config.yaml"
LOCK_FILE = "games.jsonl.lock"

#: (config_hash, pairing, game_index): the identity of a game.
GameKey = tuple[str, str, int]

_CONFIG_HEADER = (
    "# The resolved configuration of the games in games.jsonl, written by boopexp (docs/runner.md).\n"
    "# A previous, different version of this file is kept as config.<hash>.yaml.\n"
)


def record_key(record: Mapping[str, Any]) -> GameKey:
    """The identity ``(config_hash, pairing, game_index)`` of a game record."""
    return (record["config_hash"], record["pairing"], record["game_index"])


def check_record(record: Any) -> str | None:
    """Why ``record`` is not a storable game record, or None if it is."""
    if not isinstance(record, dict):
        return f"not a JSON object but {type(record).__name__}"
    for key in ("config_hash", "pairing"):
        if not isinstance(record.get(key), str):
            return f"{key} = {record.get(key)!r} is not a string"
    index = record.get("game_index")
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        return f"game_index = {index!r} is not a non-negative integer"
    if "winner" not in record:
        return "no 'winner' key"
    # null: the game hit match.MAX_PLIES without a winner ("termination": "ply_limit"). It is a
    # finished game all the same: storing it keeps a rerun from replaying it forever.
    if record["winner"] not in ("p1", "p2", None):
        return f"winner = {record['winner']!r} is not 'p1', 'p2' or null"
    return None


def encode_record(record: Mapping[str, Any]) -> bytes:
    """One line of games.jsonl (JSON, newline-terminated, no other newline inside)."""
    return (json.dumps(record, ensure_ascii=True, default=_json_default) + "\n").encode("ascii")


@dataclass(frozen=True)
class TruncatedTail:
    """A last line without its newline: the trace of a write cut short."""

    line: int  # 1-based line number
    offset: int  # byte offset where the partial line starts
    data: bytes


@dataclass(frozen=True)
class StoreScan:
    """The valid content of a games.jsonl.

    Attributes:
        path: the file read.
        records: the first record of each game key, in file order.
        duplicates: records whose key was already seen (ignored, counted once).
        tail: the partial last line, if any (ignored).
    """

    path: Path
    records: tuple[dict[str, Any], ...] = ()
    duplicates: int = 0
    tail: TruncatedTail | None = None

    @property
    def keys(self) -> frozenset[GameKey]:
        return frozenset(record_key(r) for r in self.records)

    def warnings(self) -> list[str]:
        """One line per anomaly tolerated while reading."""
        out = []
        if self.tail is not None:
            out.append(
                f"{self.path} line {self.tail.line}: truncated last line ({len(self.tail.data)} bytes"
                " without a newline, probably a run killed mid-write); ignored"
            )
        if self.duplicates:
            out.append(f"{self.path}: {self.duplicates} duplicate game record(s) ignored (each game counted once)")
        return out


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


def scan_games(path: str | Path) -> StoreScan:
    """Read and validate a games.jsonl (a missing file is an empty store).

    Raises:
        StoreError: a line other than the last one is not a valid record (file and line named).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return StoreScan(path)
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc}") from None
    lines, tail = split_lines(data)
    records: list[dict[str, Any]] = []
    seen: set[GameKey] = set()
    duplicates = 0
    for number, raw in lines:
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise StoreError(f"{path} line {number}: not valid JSON ({exc}): {_show(raw)}; repair or remove that line") from None
        problem = check_record(record)
        if problem:
            raise StoreError(f"{path} line {number}: invalid game record ({problem}); repair or remove that line")
        key = record_key(record)
        if key in seen:
            duplicates += 1
            continue
        seen.add(key)
        records.append(record)
    return StoreScan(path, tuple(records), duplicates, tail)


@dataclass(frozen=True)
class PairingScore:
    """Progress of one planned pairing: games done out of planned, wins by side, games without a winner."""

    pairing: str
    p1: str
    p2: str
    config_hash: str
    planned: int
    done: int = 0
    p1_wins: int = 0
    p2_wins: int = 0
    no_winner: int = 0


def score(entries: Iterable[PlanEntry], records: Iterable[Mapping[str, Any]]) -> tuple[PairingScore, ...]:
    """Tally the records that belong to the plan (other settings and extra indices are not counted).

    Args:
        entries: the planned pairings.
        records: deduplicated game records (:attr:`StoreScan.records`).
    """
    entries = tuple(entries)
    counts = {(e.config_hash, e.pairing): [0, 0, 0, 0] for e in entries}
    limit = {(e.config_hash, e.pairing): e.games for e in entries}
    for r in records:
        slot = counts.get((r["config_hash"], r["pairing"]))
        if slot is None or r["game_index"] >= limit[(r["config_hash"], r["pairing"])]:
            continue
        slot[0] += 1
        slot[_WINNER_SLOT[r["winner"]]] += 1
    return tuple(
        PairingScore(e.pairing, e.p1, e.p2, e.config_hash, e.games, *counts[(e.config_hash, e.pairing)]) for e in entries
    )


_WINNER_SLOT = {"p1": 1, "p2": 2, None: 3}


def unplanned(entries: Iterable[PlanEntry], records: Iterable[Mapping[str, Any]]) -> int:
    """How many records are outside the plan (other settings, or indices beyond the planned count)."""
    limit = {(e.config_hash, e.pairing): e.games for e in entries}
    return sum(1 for r in records if r["game_index"] >= limit.get((r["config_hash"], r["pairing"]), 0))


class GameStore:
    """One results folder: ``games.jsonl``, ``config.yaml`` and their backups."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.games_path = self.directory / GAMES_FILE
        self.config_path = self.directory / CONFIG_FILE

    def __repr__(self) -> str:
        return f"GameStore({str(self.directory)!r})"

    def scan(self) -> StoreScan:
        """Validate and read games.jsonl (see :func:`scan_games`)."""
        return scan_games(self.games_path)

    def read_config(self) -> dict[str, Any] | None:
        """The resolved config saved with the games, or None if there is none.

        Raises:
            StoreError: config.yaml exists but is not a YAML mapping.
        """
        try:
            text = self.config_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise StoreError(f"{self.config_path}: malformed YAML: {' '.join(str(exc).split())}") from None
        if not isinstance(doc, dict):
            raise StoreError(f"{self.config_path}: expected a mapping, got {_show(doc)}")
        return doc

    def write_config(self, resolved: Mapping[str, Any]) -> Path | None:
        """Save the resolved config atomically, keeping a different previous one as a backup.

        Returns:
            The backup path if an older, different config.yaml was set aside, else None.
        """
        text = _CONFIG_HEADER + yaml.safe_dump(dict(resolved), sort_keys=False, default_flow_style=None, width=100)
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
                _atomic_write(backup, old)
        _atomic_write(self.config_path, text.encode("utf-8"))
        return backup

    def open(self) -> "StoreWriter":
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
        # Validate before creating anything: a corrupt store must be left exactly as it is.
        store.scan()
        store.directory.mkdir(parents=True, exist_ok=True)
        self._lock_fd = _lock(store.directory / LOCK_FILE)
        try:
            scan = store.scan()  # again, under the lock
            #: Where a truncated last line was moved (None if there was none).
            self.moved_tail: Path | None = None
            self.scan_before = scan
            if scan.tail is not None:
                self.moved_tail = _move_tail(store.games_path, scan.tail)
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
        problem = check_record(record)
        if problem:
            raise StoreError(f"refusing to store an invalid game record ({problem})")
        line = encode_record(record)
        try:
            view = memoryview(line)
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

    def __enter__(self) -> "StoreWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------------------------


def _lock(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    if fcntl is None:  # pragma: no cover
        return fd
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise StoreError(
            f"{path.parent} is being written by another boopexp process (lock {path}); wait for it or use another --out"
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
    _atomic_write(target, tail.data)
    # Only after the bytes are safely elsewhere: the next record must start on its own line.
    with open(games, "r+b") as fh:
        fh.truncate(tail.offset)
        fh.flush()
        os.fsync(fh.fileno())
    return target


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


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
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
