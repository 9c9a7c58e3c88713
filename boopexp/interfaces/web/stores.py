"""What it serves, read only: the stores under the root with their status
(``experiments/status.py``, cached per store until a file changes; the outcome columns of the few
stores read last only), one game's record (found in the outcome columns, its one line read:
``StoreReader.record``), the report files; every name checked to stay under the root (``..``,
absolute paths, symlinks out).

Every name a request gives (a store, a file) is checked here before anything is opened: it must be
a relative path without ``..`` that stays under the root once symlinks are followed, and every file
of a store must too (a ``games.jsonl`` linked to a file elsewhere is refused, not read). Mistakes
raise :class:`RequestError` with the HTTP status and one line; the app turns it into JSON.

Reads only: nothing here creates, locks or changes a file (a run in progress is not disturbed),
and nothing imports the engine (the game viewer's boards are ``game.py``'s).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from boopexp.errors import BoopError
from boopexp.experiments.status import FolderStatus, folder_status, results_folders
from boopexp.experiments.store import (
    CONFIG_FILE,
    GAMES_FILE,
    SEGMENT_PATTERN,
    SUMMARY_PATTERN,
    StoreReader,
    has_games_files,
)

#: The report files a store's page links to and ``/files`` serves (what ``boopexp tables`` and
#: ``ratings`` write), by suffix, with their media type.
REPORT_TYPES = {".png": "image/png", ".svg": "image/svg+xml", ".md": "text/markdown; charset=utf-8",
                ".csv": "text/csv; charset=utf-8", ".tex": "text/plain; charset=utf-8",
                ".json": "application/json"}
#: At most this many report files are listed per folder (a tuning's trials hold hundreds).
MAX_REPORT_FILES = 200


class RequestError(BoopError):
    """A request the server refuses: ``status`` (400 a malformed request, 404 nothing there, 409
    ambiguous, 422 a store that cannot be read) and one line saying what is wrong and what is allowed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Root:
    """The folder ``boopexp serve`` shows (``--root``), resolved once."""

    path: Path

    @classmethod
    def of(cls, folder: str | Path) -> Root:
        return cls(Path(folder).resolve())

    def relative(self, folder: Path) -> str:
        """``folder`` (a path under the root as walked, not resolved) as the root-relative POSIX
        path requests name it."""
        rel = Path(os.path.relpath(folder, self.path)).as_posix()
        return "" if rel == "." else rel

    def shown(self, text: str) -> str:
        """``text`` (a message) with every path under the root shown relative to it: what the
        server says never gives away where it runs (``/home/me/results/a/games.jsonl`` → ``a/games.jsonl``)."""
        return text.replace(str(self.path) + os.sep, "").replace(str(self.path), ".")

    def holds(self, path: Path) -> bool:
        """Whether ``path`` is under the root once its symlinks are followed."""
        return path.resolve().is_relative_to(self.path)

    def inside(self, name: str, what: str) -> Path:
        """The path ``name`` names under the root, symlinks followed.

        Raises:
            RequestError: 400 for an empty, absolute or ``..`` name, or one that leads out of the root.
        """
        if not name or "\\" in name or "\x00" in name:
            raise RequestError(400, f"{what} {name!r} is not a folder under the root: give its path relative to "
                                    "the root, with '/' (as /api/stores lists them)")
        pure = PurePosixPath(name)
        if pure.is_absolute() or ".." in pure.parts:
            raise RequestError(400, f"{what} {name!r} is not under the root: give a relative path without '..' "
                                    "(as /api/stores lists them)")
        path = (self.path / pure).resolve()
        if not path.is_relative_to(self.path):
            raise RequestError(400, f"{what} {name!r} leads out of the root (a symbolic link); only what is "
                                    "under the root is served")
        return path

    def store(self, name: str) -> Path:
        """The store folder ``name`` names, each of its files checked to be under the root.

        Raises:
            RequestError: as :meth:`inside`; 404 when it is not a store (no live log, no segment).
        """
        path = self.inside(name, "store")
        if not path.is_dir() or not has_games_files(path):
            raise RequestError(404, f"no store {name!r} under the root (a folder with games.jsonl or sealed "
                                    "games-NNNN.jsonl.zst); /api/stores lists them")
        for file in _store_files(path):
            if not self.holds(file):
                raise RequestError(400, f"store {name!r}: {file.name} leads out of the root (a symbolic link); "
                                        "it is not read")
        return path


def _store_files(folder: Path) -> list[Path]:
    """The files of a store that reading it opens: log, config, segments and their summaries."""
    names = os.listdir(folder)
    return [folder / n for n in names
            if n in (GAMES_FILE, CONFIG_FILE) or SEGMENT_PATTERN.fullmatch(n) or SUMMARY_PATTERN.fullmatch(n)]


def _signature(folder: Path) -> tuple:
    """What changes when a store's content does: each of its files' name, size and mtime."""
    out = []
    for file in sorted(_store_files(folder)):
        try:
            st = file.stat()
        except OSError:
            continue
        out.append((file.name, st.st_size, st.st_mtime_ns, st.st_ino))
    return tuple(out)


#: The stores whose outcome columns :class:`StatusCache` keeps (the most recently read): a root of
#: many large stores would otherwise hold every store's columns while the server runs.
MAX_COLUMNS = 8


class StatusCache:
    """Each store's status (``experiments.status.folder_status``), read again only when one of its
    files changed: the dashboard asks for every store every few seconds, and most stores never change. Also the outcome
    columns of the :data:`MAX_COLUMNS` stores read last, which the next read of such a store (its
    status, its games, one game) starts from (``StoreReader.outcomes(since=)``: unchanged files,
    and the live log's lines already read, are not read again); a store read longer ago is read
    afresh. The statuses are small (a few numbers per pairing) and all kept."""

    def __init__(self, max_columns: int = MAX_COLUMNS, root: Root | None = None) -> None:
        """Args:
            root: the served root, whose paths a store's ``error`` shows relative (:meth:`Root.shown`).
        """
        self._root = root
        self._lock = threading.Lock()
        self._entries: dict[Path, tuple[tuple, dict[str, Any]]] = {}
        self._columns: OrderedDict[Path, Any] = OrderedDict()
        self._max_columns = max_columns

    @property
    def columns_held(self) -> tuple[Path, ...]:
        """The stores whose columns are kept, least recently read first."""
        with self._lock:
            return tuple(self._columns)

    def _scan(self, folder: Path) -> Any:
        """The store's outcome columns, read from the last ones (StoreError as the store says it)."""
        with self._lock:
            since = self._columns.get(folder)
        columns = StoreReader(folder).outcomes(since=since)
        with self._lock:
            self._columns[folder] = columns
            self._columns.move_to_end(folder)
            while len(self._columns) > self._max_columns:
                self._columns.popitem(last=False)
        return columns

    def columns(self, folder: Path) -> Any:
        """The store's :class:`~boopexp.experiments.store.OutcomeColumns`, read from the last ones.

        Raises:
            RequestError: 422 the store cannot be read (the store's one line).
        """
        try:
            return self._scan(folder)
        except BoopError as exc:
            raise RequestError(422, f"cannot read the store: {exc}") from None

    def status(self, folder: Path, name: str) -> dict[str, Any]:
        """The store's status as ``status --json`` gives it, its folder as ``name`` (root-relative);
        a store that cannot be read has ``error`` (one line) instead of crashing the listing."""
        signature = _signature(folder)
        with self._lock:
            hit = self._entries.get(folder)
        if hit is not None and hit[0] == signature:
            return hit[1]
        try:
            doc = folder_status(folder, self._scan(folder)).to_dict()
            doc["error"] = None
        except BoopError as exc:
            doc = FolderStatus(folder, None, ()).to_dict()  # every field there, empty
            doc["error"] = str(exc) if self._root is None else self._root.shown(str(exc))
        doc["folder"] = name
        with self._lock:
            self._entries[folder] = (signature, doc)
        return doc


def list_stores(root: Root, cache: StatusCache) -> list[dict[str, Any]]:
    """Every store under the root with its progress: path (root-relative), name, games done and
    planned, per pairing, SPRT state and forfeits (``/api/stores``). Counting reads the stores'
    outcome columns only (``StoreReader.outcomes``), never a game's moves."""
    out = []
    for folder in results_folders(root.path):
        name = root.relative(folder)
        try:
            root.store(name)
        except RequestError:
            continue  # a store reached through a link out of the root is not listed
        out.append(cache.status(folder, name))
    return out


#: The games ``/api/store`` returns at most in one page (a page of 500 is about 60 kB of JSON; all
#: of a 100,000-game store were 13 MB, polled every 2 s by its page).
MAX_PAGE = 10_000
DEFAULT_PAGE = 500


def store_games(cache: StatusCache, folder: Path, offset: int = 0, limit: int = DEFAULT_PAGE
                ) -> tuple[list[dict[str, Any]], int]:
    """A page of the games of the store ``folder`` (as :meth:`Root.store` checked it), one row
    each: pairing, index, settings hash, winner, termination (the outcome columns: no game is
    decoded), ordered by pairing, settings hash and index; and how many games the store holds.

    Args:
        offset, limit: the page: the rows from ``offset`` on, at most ``limit`` of them.
    """
    table = cache.columns(folder).table
    keep = [c for c in ("config_hash", "pairing", "game_index", "winner", "termination") if c in
            table.column_names]
    order = [(c, "ascending") for c in ("pairing", "config_hash", "game_index") if c in keep]
    page = table.select(keep).sort_by(order).slice(offset, limit) if order else table.select(keep).slice(offset, limit)
    return list(page.to_pylist()), table.num_rows


def report_files(root: Root, folder: Path) -> list[str]:
    """The report files (figures and tables, :data:`REPORT_TYPES`) in ``folder`` and its
    subfolders that are not stores themselves, root-relative, sorted."""
    found: list[str] = []
    for here, dirs, files in os.walk(folder):
        if Path(here) != folder and has_games_files(here):
            dirs[:] = []
            continue
        dirs.sort()
        for f in _reports_in(root, here, files):
            found.append(f)
            if len(found) >= MAX_REPORT_FILES:
                return found
    return found


def _reports_in(root: Root, here: str, files: list[str]) -> Iterator[str]:
    """Of ``files`` in folder ``here``, the report files under the root (symlinks followed),
    root-relative, sorted; lazily (a listing stops at :data:`MAX_REPORT_FILES`)."""
    return (root.relative(Path(here) / f) for f in sorted(files)
            if Path(f).suffix in REPORT_TYPES and root.holds(Path(here) / f))


def report_folders(root: Root) -> list[dict[str, Any]]:
    """The folders under the root that hold report files but no games (``results/tables``, …)
    with their files: what ``boopexp tables`` and ``ratings`` drew."""
    out = []
    for here, dirs, files in os.walk(root.path):
        dirs.sort()
        if has_games_files(here):
            continue
        shown = list(_reports_in(root, here, files))
        if shown:
            out.append({"folder": root.relative(Path(here)), "files": shown})
    return out


def report_file(root: Root, name: str) -> tuple[Path, str]:
    """A report file under the root and its media type (``/files``).

    Raises:
        RequestError: as :meth:`Root.inside`; 404 not a file there or not a report file.
    """
    path = root.inside(name, "file")
    kind = REPORT_TYPES.get(path.suffix)
    if kind is None:
        raise RequestError(404, f"file {name!r}: only report files are served ({', '.join(REPORT_TYPES)})")
    if not path.is_file():
        raise RequestError(404, f"no file {name!r} under the root")
    return path, kind


def find_record(root: Root, cache: StatusCache, name: str, pairing: str, index: int,
                config_hash: str | None = None) -> dict[str, Any]:
    """The record of game ``pairing`` #``index`` of store ``name`` as ``build_record`` returns it
    (decoded; ``/api/game``): found in the store's outcome columns, then only its own line read.

    Args:
        config_hash: the settings hash (or a prefix), needed only when the store holds the game
            under several settings.

    Raises:
        RequestError: as :meth:`Root.store`; 404 unknown pairing (the message lists the store's)
            or index out of range (the message gives the range); 409 the game exists under several
            settings and ``config_hash`` does not pick one (the message lists them).
    """
    import pyarrow.compute as pc

    folder = root.store(name)
    if index < 0:
        raise RequestError(400, f"index {index}: a game index is 0 or more")
    columns = cache.columns(folder)
    table = columns.table
    in_pairing = pc.equal(table["pairing"], pairing)
    if not pc.any(in_pairing).as_py():
        there = sorted(set(table["pairing"].to_pylist()))
        raise RequestError(404, f"no pairing {pairing!r} in store {name!r}; its pairings: {', '.join(there) or 'none'}")
    rows = pc.and_(in_pairing, pc.equal(table["game_index"], index))
    if config_hash:
        rows = pc.and_(rows, pc.starts_with(table["config_hash"], config_hash))
    found = pc.indices_nonzero(rows).to_pylist()
    if not found:
        indices = pc.filter(table["game_index"], in_pairing)
        low, high = pc.min(indices).as_py(), pc.max(indices).as_py()
        with_hash = f" with a settings hash starting {config_hash!r}" if config_hash else ""
        raise RequestError(404, f"no game {pairing!r} #{index}{with_hash} in store {name!r}; its indices: "
                                f"{low}..{high}")
    if len(found) > 1:
        hashes = ", ".join(str(table["config_hash"][r].as_py()) for r in found)
        raise RequestError(409, f"{pairing!r} #{index} is stored under several settings in {name!r}; choose "
                                f"config_hash from: {hashes}")
    try:
        return StoreReader(folder).record(columns.origin_of_row(found[0]))
    except BoopError as exc:
        raise RequestError(422, str(exc)) from None


def warm(root: Root, cache: StatusCache, done: Callable[[], None] | None = None) -> threading.Thread:
    """Read every store's status in a background thread (the dashboard's first page is then
    served from the cache); nothing played, so no engine is loaded."""
    def run() -> None:
        try:
            list_stores(root, cache)
        except Exception:  # noqa: BLE001 - a warm-up that fails only leaves the cache cold
            pass
        if done is not None:
            done()

    thread = threading.Thread(target=run, name="boopexp-serve-warm", daemon=True)
    thread.start()
    return thread
