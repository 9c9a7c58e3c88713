"""**The** line codec: ``check_record`` (what a store holds), ``encode_record``, ``parse_line`` /
``decode_record``, complete lines and a write cut short (``split_lines``, ``TruncatedTail``).

A stored line is one JSON object, compact, ASCII, newline-terminated (docs/architecture.md, "The
game record"). Reading is strict: a line that is not a valid record is an error naming file and
line, because guessing would silently drop or double-count games.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from boopexp.errors import StoreError, show_value
from boopexp.experiments.store.summary import TEXT_FIELDS
from boopexp.play.contract import WINNERS, WINNERS_TEXT, pack_record, unpack_record
from boopexp.play.identity import MAX_GAME_INDEX, PAIRING_SEPARATOR


def check_record(record: Any) -> str | None:
    """Why ``record`` is not a storable game record, or None if it is: **the** rule of what a
    store holds, for every reader (``status``, ``run``, ``seal``, ``merge``, the tables, the
    ratings) and for the records written (a played game, an imported one). Its twin on columns
    is :func:`boopexp.experiments.store.summary.invalid_rows` (a summary's or the live log's rows read
    by pyarrow): the two refuse the same games (tests/test_store_readers.py).

    A game's identity is a non-empty settings hash, a pairing ``"A vs B"`` and a non-negative
    index below 2^63 (the columns are 64-bit); its winner ``"p1"``, ``"p2"`` or null; the text
    fields a reader counts by (the sides' names, the experiment, the termination), when present,
    are strings or null.
    """
    if not isinstance(record, dict):
        return f"not a JSON object but {type(record).__name__}"
    if not isinstance(record.get("config_hash"), str) or not record["config_hash"]:
        return f"config_hash = {record.get('config_hash')!r} is not a non-empty string"
    pairing = record.get("pairing")
    if not isinstance(pairing, str):
        return f"pairing = {pairing!r} is not a string"
    if PAIRING_SEPARATOR not in pairing:
        return f"pairing = {pairing!r} is not of the form 'A{PAIRING_SEPARATOR}B'"
    index = record.get("game_index")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= MAX_GAME_INDEX:
        return f"game_index = {_show(index)} is not an integer from 0 to 2^63-1"
    if "winner" not in record:
        return "no 'winner' key"
    # null: the game hit contract.MAX_PLIES without a winner ("termination": "ply_limit"), or its
    # rules drew it ("termination": "draw"). It is a finished game all the same: storing it keeps
    # a rerun from replaying it forever.
    if record["winner"] not in WINNERS:
        return f"winner = {record['winner']!r} is not {WINNERS_TEXT}"
    for key in TEXT_FIELDS:
        if record.get(key) is not None and not isinstance(record[key], str):
            return f"{key} = {_show(record[key])} is not a string or null"
    return None


def encode_record(record: Mapping[str, Any]) -> bytes:
    """One stored line: the record in the current schema (:func:`boopexp.play.contract.pack_record`),
    as compact JSON, newline-terminated, no other newline inside."""
    packed = pack_record(record)
    return (json.dumps(packed, ensure_ascii=True, separators=(",", ":"), default=_json_default) + "\n").encode("ascii")


@dataclass(frozen=True)
class TruncatedTail:
    """A last line without its newline: the trace of a write cut short."""

    line: int  # 1-based line number
    offset: int  # byte offset where the partial line starts
    data: bytes


#: Where a stored line is: (file, 1-based line number).
Location = tuple[Path, int]


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


class _LineBlocks:
    """Chunks of bytes regrouped into blocks of complete lines, as (lines before the block, its
    bytes); after the iteration, :attr:`rest` holds the bytes after the last newline, :attr:`lines`
    and :attr:`offset` the lines and bytes before them."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self.chunks = chunks
        self.rest, self.lines, self.offset = b"", 0, 0

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        for chunk in self.chunks:
            data = self.rest + chunk
            end = data.rfind(b"\n") + 1
            self.rest = data[end:]
            if end:
                yield self.lines, data[:end]
                self.lines += data.count(b"\n", 0, end)
                self.offset += end


def parse_line(path: Path, number: int, raw: bytes, moves: bool = True,
               telemetry: bool | None = None) -> dict[str, Any]:
    """The game record of one stored line, validated (schema 1 or 2, returned as schema 1: see
    :func:`decode_record`); without its moves and telemetry if not ``moves`` (what counting games
    reads: unpacking the telemetry is most of decoding a record), without its telemetry only if
    ``telemetry`` is False (None: as ``moves``).

    Raises:
        StoreError: the line is not JSON or not a game record (file and line named).
    """
    try:
        record = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StoreError(
            f"{path} line {number}: not valid JSON ({exc}): {_show(raw)}; repair or remove that line"
        ) from None
    problem = check_record(record)
    if problem:
        raise StoreError(f"{path} line {number}: invalid game record ({problem}); repair or remove that line")
    dropped = (() if moves else ("moves",)) + (() if (moves if telemetry is None else telemetry) else ("telemetry",))
    if dropped:
        record = {k: v for k, v in record.items() if k not in dropped}
    try:
        return decode_record(record)
    except ValueError as exc:
        raise StoreError(f"{path} line {number}: {exc}") from None


def decode_record(record: dict[str, Any]) -> dict[str, Any]:
    """A stored record of schema 1 or 2 as the rest of the code reads it: the record of
    docs/architecture.md (:func:`boopexp.play.contract.unpack_record`), typed as a plain dict:
    a line read from a file is checked by its reader (:func:`check_record`, the tables), not here.

    Raises:
        ValueError: a schema this version does not know.
    """
    return cast(dict[str, Any], unpack_record(record))


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
    return show_value(value, limit)  # a stored line's values: longer by default than a config value's
