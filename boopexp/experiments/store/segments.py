"""**The** segment codec: ``games-NNNN.jsonl.zst`` (zstd frames + checksum trailer; ``.gz`` read as
it is), listed in number order, read in checked blocks (``segment_text_blocks``, ``segment_data``).

Sealed segments: **the** segment codec. A segment ``games-NNNN.jsonl.zst`` is zstd frames of
complete lines and a checksum trailer (``_SegmentEncoder``, ``encode_segment``); ``.jsonl.gz``,
one sealed before zstd, is read as it is. Its readers check it whole (``segment_text_blocks``,
``segment_data``): a damaged segment is an error, never fewer games.
"""

from __future__ import annotations

import gzip
import os
import re
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

from boopexp.errors import StoreError
from boopexp.experiments.store.files import GAMES_FILE
from boopexp.experiments.store.lines import _LineBlocks, split_lines
from boopexp.experiments.store.summary import SUMMARY_PATTERN, summary_path

#: A sealed segment: ``games-0001.jsonl.zst``, ``games-0002.jsonl.zst``, … (read in number order);
#: ``.jsonl.gz``: one sealed before zstd (gzip level 9), read as it is (``migrate`` rewrites it).
SEGMENT_PATTERN = re.compile(r"games-(\d{4,})\.jsonl\.(gz|zst)")


#: How new segments are named: ``SEGMENT_NAME.format(number)``.
SEGMENT_NAME = "games-{:04d}.jsonl.zst"


#: zstd level of new segments. Measured on 100k real records (docs/cluster.md "Scale"): level 1
#: compresses to ~737 bytes a game in ~0.5 s per 100k games, where gzip level 9 took ~17 s for
#: 725 bytes (gzip 3: 2.9 s, 839 bytes; zstd 6: 2.6 s, 716 bytes); it also decompresses ~4x
#: faster than gzip, which every reader of segments pays.
SEGMENT_ZSTD_LEVEL = 1


#: Uncompressed bytes compressed into one zstd frame of a segment (frames are concatenated).
_FRAME_BYTES = 1 << 24


def segment_paths(directory: str | Path) -> list[Path]:
    """The sealed segments ``games-NNNN.jsonl.zst`` (and ``.gz``) of a store, in number order
    (a gzip segment before the zstd one of its number: ``migrate`` killed before it removed it)."""
    directory = Path(directory)
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise StoreError(f"cannot list {directory}: {exc}") from None
    numbered = sorted((int(m.group(1)), name) for name in names if (m := SEGMENT_PATTERN.fullmatch(name)))
    return [directory / name for _, name in numbered]


def has_games_files(directory: str | Path) -> bool:
    """Whether a folder holds a store: a live log or at least one sealed segment."""
    return (Path(directory) / GAMES_FILE).is_file() or bool(segment_paths(directory))


def segment_blocks(path: Path, block_bytes: int = 1 << 24) -> Iterator[list[tuple[int, bytes]]]:
    """The lines of a sealed segment as ``StoreReader.blocks`` numbers them (complete, non-blank,
    1-based), in blocks of about ``block_bytes`` uncompressed bytes: a reader that needs some of
    every game (the telemetry table) never holds the whole decompressed segment.

    Raises:
        StoreError: the segment cannot be read or is damaged.
    """
    for first, data in segment_text_blocks(path, block_bytes):
        yield [(n, raw) for n, raw in enumerate(data.split(b"\n")[:-1], start=first + 1) if raw.strip()]


def segment_text_blocks(path: Path, block_bytes: int = 1 << 24) -> Iterator[tuple[int, bytes]]:
    """A sealed segment's uncompressed bytes in blocks of complete lines (about ``block_bytes``
    each) as (lines before the block, its bytes): the one reader of both segment formats, gzip
    (``.gz``) and zstd (``.zst``, its checksum trailer checked: :class:`_SegmentEncoder`).

    Raises:
        StoreError: the segment cannot be read or is damaged.
    """
    blocks = _LineBlocks(_segment_chunks(path, block_bytes))
    yield from blocks
    if blocks.rest:
        raise _segment_error(path, _NO_NEWLINE)


def _segment_chunks(path: Path, block_bytes: int) -> Iterator[bytes]:
    """A sealed segment's uncompressed bytes, in chunks of at most ``block_bytes``, checked."""
    try:
        if path.name.endswith(".gz"):
            with open(path, "rb") as raw_file:
                if not os.fstat(raw_file.fileno()).st_size:
                    raise _segment_error(path, _EMPTY)
                with gzip.GzipFile(fileobj=raw_file, mode="rb") as fh:
                    while chunk := fh.read(block_bytes):
                        yield chunk
            return
        data = path.read_bytes()
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise _segment_error(path, exc) from None
    yield from _zstd_chunks(path, data, block_bytes)


def _segment_lines(path: Path, data: bytes) -> list[tuple[int, bytes]]:
    """The lines of a sealed segment's bytes (``data``, compressed)."""
    lines, tail = split_lines(_decompress(path, data))
    if tail is not None:
        raise _segment_error(path, _NO_NEWLINE)
    return lines


#: Why a sealed segment is damaged: its last line cut short, or no byte at all (a segment is
#: written whole through a temporary file and is a zstd stream even when it holds no game, 25
#: bytes: zero bytes is a lost segment, and reading it as empty would have its games played again).
_NO_NEWLINE = "its last line has no newline"


_EMPTY = "0 bytes; a sealed segment is never empty"


def _segment_error(path: Path, problem: BaseException | str) -> StoreError:
    """The one line for a sealed segment that cannot be read: gone since it was listed (a seal or
    migrate renamed it meanwhile: read again), or damaged (an OS, gzip or zstd error, or ``problem``
    said: restore it). Every reader of segments says it so."""
    if isinstance(problem, FileNotFoundError):
        return StoreError(f"{path} vanished while reading (sealed or migrated meanwhile?); read again")
    return StoreError(f"{path}: damaged sealed segment ({problem}); restore it from a copy")


def _read_segment(path: Path) -> bytes:
    """A sealed segment's bytes, as stored (compressed)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _segment_error(path, exc) from None
    if not data:
        raise _segment_error(path, _EMPTY)
    return data


def _decompress(path: Path, data: bytes) -> bytes:
    """A sealed segment's lines from its bytes as stored (``data``), checked (either format)."""
    if path.name.endswith(".gz"):
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
            raise _segment_error(path, exc) from None
    return b"".join(_zstd_chunks(path, data, None))


def segment_data(path: Path) -> bytes:
    """The uncompressed lines of a sealed segment (either format), checked: for the few readers
    that want its bytes (tests, ``export``) rather than its lines (``StoreReader.blocks``).

    Raises:
        StoreError: the segment cannot be read or is damaged.
    """
    return _decompress(path, _read_segment(path))


#: The zstd skippable frame that ends a segment written by this version: its magic number and
#: length (8), then the CRC-32 and length (mod 2^32) of the uncompressed lines, little-endian, as
#: a gzip member's trailer holds them. pyarrow's zstd frames carry no checksum: the readers check
#: this one (a damaged segment is an error, as with gzip), and the segment's summary names these
#: last 8 bytes as it names a gzip trailer (:mod:`boopexp.experiments.store.summary`). zstd's own tools
#: skip the frame (``zstd -dc games-0001.jsonl.zst`` prints the lines).
_TRAILER_HEAD = (0x184D2A50).to_bytes(4, "little") + (8).to_bytes(4, "little")


_TRAILER = struct.Struct("<II")


class _SegmentEncoder:
    """The bytes of a new sealed segment, given its lines in order: zstd frames (level
    :data:`SEGMENT_ZSTD_LEVEL`) of about :data:`_FRAME_BYTES` uncompressed bytes each,
    concatenated, then the checksum trailer (:data:`_TRAILER_HEAD`)."""

    def __init__(self) -> None:
        import pyarrow as pa

        self._codec = pa.Codec("zstd", compression_level=SEGMENT_ZSTD_LEVEL)
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._frames: list[bytes] = []
        self._crc = self._size = 0

    def add(self, data: bytes) -> None:
        """Lines (with their newlines) to add."""
        self._pending.append(data)
        self._pending_bytes += len(data)
        if self._pending_bytes >= _FRAME_BYTES:
            self._frame()

    def _frame(self) -> None:
        data = b"".join(self._pending)
        self._pending, self._pending_bytes = [], 0
        self._crc = zlib.crc32(data, self._crc)
        self._size += len(data)
        self._frames.append(self._codec.compress(data, asbytes=True))

    def finish(self) -> bytes:
        """The segment's bytes (a segment of no line is one empty frame and the trailer)."""
        if self._pending or not self._frames:
            self._frame()
        return b"".join(self._frames) + _TRAILER_HEAD + _TRAILER.pack(self._crc, self._size & 0xFFFFFFFF)


def encode_segment(data: bytes) -> bytes:
    """A new sealed segment holding the lines ``data`` (:class:`_SegmentEncoder`)."""
    encoder = _SegmentEncoder()
    for start in range(0, len(data), _FRAME_BYTES):
        encoder.add(data[start:start + _FRAME_BYTES])
    return encoder.finish()


def _zstd_chunks(path: Path, data: bytes, block_bytes: int | None) -> Iterator[bytes]:
    """The uncompressed bytes of a zstd segment's bytes ``data``, in chunks of at most
    ``block_bytes`` (None: one), checked against its trailer."""
    import pyarrow as pa

    if not data:
        raise _segment_error(path, _EMPTY)
    size = len(data) - len(_TRAILER_HEAD) - _TRAILER.size
    if size < 0 or data[size:size + len(_TRAILER_HEAD)] != _TRAILER_HEAD:
        raise _segment_error(path, "no checksum trailer at its end: cut short?")
    crc, length = _TRAILER.unpack_from(data, size + len(_TRAILER_HEAD))
    got_crc = got_length = 0
    try:
        stream = pa.CompressedInputStream(pa.py_buffer(data).slice(0, size), "zstd")
        while chunk := (stream.read() if block_bytes is None else stream.read(block_bytes)):
            got_crc, got_length = zlib.crc32(chunk, got_crc), got_length + len(chunk)
            yield chunk
            if block_bytes is None:
                break
    except (pa.ArrowException, OSError, ValueError) as exc:  # ArrowIOError is an OSError
        raise _segment_error(path, exc) from None
    if (got_crc, got_length & 0xFFFFFFFF) != (crc, length):
        raise _segment_error(path, "its lines do not match its checksum")


def _next_segment_number(directory: Path) -> int:
    paths = segment_paths(directory)
    return 1 + (int(SEGMENT_PATTERN.fullmatch(paths[-1].name).group(1)) if paths else 0)  # type: ignore[union-attr]


def _remove_orphan_summaries(directory: Path) -> None:
    """Summaries whose segment does not exist (a seal killed between the two renames): never read,
    but they would look like data."""
    segments = {summary_path(p).name for p in segment_paths(directory)}
    for name in os.listdir(directory):
        if SUMMARY_PATTERN.fullmatch(name) and name not in segments:
            (directory / name).unlink()
