"""The protocol's lines as either side reads them: ``read_lines`` gives lines of at most
``MAX_LINE`` bytes (2 MiB) and a ``LineTooLong`` for a longer one, whose bytes are dropped as they
come.

The lines of btp, the boop. text protocol (docs/protocol.md), as either side reads them: at
most :data:`MAX_LINE` bytes each (:func:`read_lines`), so that a peer that writes a line without
end costs no more memory than that. Read by ``boopexp engine`` (:mod:`boopexp.play.btp`) and by
the host of an engine agent (:mod:`boopexp.play.btp_host`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

#: The longest line btp reads, in bytes with its end (either side: ``boopexp engine`` the host's
#: lines, the host an engine's; :func:`read_lines`). A ``position`` line of a game at the longest
#: ply cap (:data:`~boopexp.play.contract.MAX_PLIES_LIMIT` moves of at most 9 characters and a
#: blank, after a position string: about 160 KB) fits; a longer line is skipped, never held.
MAX_LINE = 1 << 21


@dataclass(frozen=True)
class LineTooLong:
    """A line longer than :data:`MAX_LINE` bytes, skipped: its first bytes (to tell what it was)
    and how many bytes it had."""

    head: str
    size: int


def read_lines(stream: IO[bytes], limit: int = MAX_LINE) -> Iterator[str | LineTooLong]:
    """The lines of ``stream`` as ASCII text (other bytes replaced), without their end. A line of
    more than ``limit`` bytes (its end included) is read to its end and given as a
    :class:`LineTooLong`, its bytes dropped as they come: memory stays bounded however long a line
    is. A stream with a file descriptor is read with ``os.read``, so that a thread waiting here
    holds no lock of Python's buffered reader (the interpreter cannot end while one is held)."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):  # a stream in memory (a test's): no descriptor
        read = getattr(stream, "read1", stream.read)
    else:
        def read(size: int) -> bytes:
            return os.read(fd, size)
    pending = bytearray()  # the line so far
    skipped: LineTooLong | None = None  # the over-long line being skipped, so far
    while chunk := read(_CHUNK):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            piece, start = chunk[start:end + 1], end + 1
            if skipped is None and len(pending) + len(piece) <= limit:
                yield _text(bytes(pending) + piece)
            else:
                skipped = skipped or LineTooLong(_text((bytes(pending[:80]) + piece[:80])[:80]), len(pending))
                yield LineTooLong(skipped.head, skipped.size + len(piece))
            pending.clear()
            skipped = None
        rest = chunk[start:]
        if skipped is not None:
            skipped = LineTooLong(skipped.head, skipped.size + len(rest))
        else:
            pending += rest
            if len(pending) >= limit:  # its end still to come: more than limit bytes
                skipped = LineTooLong(_text(bytes(pending[:80])), len(pending))
                pending.clear()
    if skipped is not None:  # the input ended inside a line
        yield skipped
    elif pending:
        yield _text(bytes(pending))


#: the bytes :func:`read_lines` asks for at a time
_CHUNK = 1 << 16


def _text(line: bytes) -> str:
    return line.decode("ascii", "replace").rstrip("\r\n")
