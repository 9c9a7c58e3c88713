"""Durable files and the lock: ``write_atomically``, temporary file + fsync + rename, the writers'
lock, a cut-short tail set aside, the crash tests' fault points (``FAULT_ENV``),
``writable_folder``.

A store's files made durable, and its lock: a file written whole or not at all (temporary
file, fsync, rename, fsync the folder: ``write_atomically``, ``_write_durably``), the exclusive
lock of a store's writers (``_lock``), a cut-short last line set aside (``_move_tail``), the fault
points the crash tests kill a seal at (:data:`FAULT_ENV`), and a refused results folder as one
line (``writable_folder``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from boopexp.errors import StoreError
from boopexp.experiments.store.lines import TruncatedTail

try:  # POSIX advisory locks; without them two runs into one folder are merely not prevented
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


GAMES_FILE = "games.jsonl"


CONFIG_FILE = "config.yaml"


LOCK_FILE = "games.jsonl.lock"


#: Environment variable naming a step at which seal/migrate kill their own process (tests only).
FAULT_ENV = "BOOPEXP_STORE_FAULT"


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


def _fault_point(step: str) -> None:
    """Kill this process at ``step`` if :data:`FAULT_ENV` names it: how the tests crash a seal."""
    if os.environ.get(FAULT_ENV) == step:
        os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))


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
