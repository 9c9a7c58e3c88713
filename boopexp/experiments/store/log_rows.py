"""The live log's summary rows (``games.jsonl.rows``): each game's :func:`game_summary` written
with its line (``row_bytes``), read back for the lines they match (``log_summary``).

Beside the live log ``games.jsonl``, the writer appends, for each game line it writes, one row
(a compact JSON object: the line's byte ``offset``, ``length`` and CRC-32 ``crc``, then the
summary's columns :data:`~boopexp.experiments.store.summary.COLUMNS` after ``line``, computed
by decoding the line written: one decoder). The rows are a *cache* of the log, never the truth:
a row is used only for the line at its offset whose bytes have its length and CRC; a line without
such a row (a log written by an older version, a process killed between the line and its row) is
decoded (:func:`~boopexp.experiments.store.lines.parse_line`), and a row without its line (a seal
or a hand edit since) is ignored. A writer that opens the store rewrites the rows when they do
not match the log line for line (:func:`write_rows`); ``seal`` copies them into the segment's
summary and truncates them with the log.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from boopexp.experiments.store.files import write_atomically
from boopexp.experiments.store.lines import parse_line
from boopexp.experiments.store.summary import (
    COLUMNS,
    column_schema,
    game_summary,
    invalid_rows,
    summary_table,
    summary_values,
)

#: The live log's rows, beside ``games.jsonl``.
ROWS_FILE = "games.jsonl.rows"
#: Where a row's line is: its byte offset and length (newline included) and its CRC-32.
_PLACE = ("offset", "length", "crc")


def row_bytes(path: Path, number: int, line: bytes, offset: int) -> bytes:
    """The row of stored ``line`` (with its newline), line ``number`` of log ``path`` at byte
    ``offset``: its place and :func:`game_summary` of the line decoded as every reader decodes it."""
    return _row(line, offset, summary_values(game_summary(parse_line(path, number, line[:-1]))))


def _row(line: bytes, offset: int, values: dict[str, Any]) -> bytes:
    """One row: the place of ``line`` (with its newline) at byte ``offset``, then ``values`` (the
    summary's columns after ``line``, as :func:`summary_values` gives them)."""
    row = {"offset": offset, "length": len(line), "crc": zlib.crc32(line), **values}
    return (json.dumps(row, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")


def read_rows(directory: Path) -> Any:
    """The rows beside ``directory``'s log as a pyarrow Table (:data:`_PLACE`, then the summary's
    columns after ``line``), or None: no rows, or rows that cannot all be read or are not a valid
    game's (a cache: the log's lines are then decoded). A row cut short (no newline) is left out."""
    try:
        data = (directory / ROWS_FILE).read_bytes()
    except OSError:
        return None
    data = data[:data.rfind(b"\n") + 1]
    if not data:
        return None
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    schema = pa.schema([*((p, pa.int64()) for p in _PLACE), *column_schema(COLUMNS[1:])])
    try:
        table = pj.read_json(pa.py_buffer(data), read_options=pj.ReadOptions(block_size=1 << 24),
                             parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error"))
        table = table.combine_chunks()
        if table.num_rows != data.count(b"\n") or invalid_rows(table).any():
            return None
        if any(table[p].null_count for p in _PLACE) or not pc.all(pc.greater(table["length"], 0)).as_py():
            return None
    except (pa.ArrowException, ValueError, OSError):  # not rows of this format: ArrowInvalid...
        return None
    return table


def log_summary(path: Path, data: bytes, base: int, first_line: int, rows: Any) -> tuple[Any, bool]:
    """The games of ``data`` (complete lines of log ``path`` from byte ``base``, after
    ``first_line`` lines) as a table of :data:`COLUMNS`, in line order: each line's row from
    ``rows`` (:func:`read_rows`, or None) where one matches it (offset, length, CRC), else the line
    decoded; and whether ``rows`` held exactly one matching row for each of these lines and no
    other row at an offset among them.

    Raises:
        StoreError: a line without a matching row is not a valid record (file and line named).
    """
    import numpy as np
    import pyarrow as pa

    if rows is not None:
        offsets = rows["offset"].to_numpy()
        mine = np.flatnonzero((offsets >= base) & (offsets < base + len(data)))
        rows = rows.take(mine) if len(mine) != len(rows) else rows
    if rows is None or not len(rows):
        return _decoded(path, _lines(data, first_line)), b"\n" not in data
    offsets = rows["offset"].to_numpy() - base
    lengths = rows["length"].to_numpy()
    ends = offsets + lengths
    inside = ends <= len(data)
    bytes_ = np.frombuffer(data, dtype=np.uint8)
    ok = inside.copy()
    ok[inside] = bytes_[ends[inside] - 1] == 10
    crcs = rows["crc"].to_numpy()
    view = memoryview(data)
    for i in np.flatnonzero(ok):
        o = int(offsets[i])
        ok[i] = zlib.crc32(view[o:o + int(lengths[i])]) == crcs[i] and (o == 0 or data[o - 1] == 10)
    numbers = first_line + 1 + np.arange(len(rows), dtype=np.int64)
    if ok.all() and offsets[0] == 0 and ends[-1] == len(data) and (offsets[1:] == ends[:-1]).all():
        return _rows_table(rows, numbers), True  # a row for each line, in order: how a writer leaves them
    # Rows and lines matched one by one, in offset order: a line between two rows is decoded.
    taken: list[int] = []
    taken_numbers: list[int] = []
    decoded: list[tuple[int, bytes]] = []
    at, number = 0, first_line

    def gap(end: int) -> None:
        nonlocal number
        decoded.extend(_lines(data[at:end], number))
        number += data.count(b"\n", at, end)

    for i in sorted(np.flatnonzero(ok), key=lambda i: int(offsets[i])):
        if offsets[i] < at:  # a second row for a line already taken
            continue
        gap(int(offsets[i]))
        number += 1
        taken.append(int(i))
        taken_numbers.append(number)
        at = int(ends[i])
    gap(len(data))
    table = pa.concat_tables([_rows_table(rows.take(taken), np.array(taken_numbers, dtype=np.int64)),
                              _decoded(path, decoded)])
    import pyarrow.compute as pc

    return table.take(pc.sort_indices(table["line"])), False


def _rows_table(rows: Any, numbers: Any) -> Any:
    """``rows`` as a table of :data:`COLUMNS` with line ``numbers``."""
    import pyarrow as pa

    return rows.select(list(COLUMNS[1:])).add_column(0, "line", pa.array(numbers, pa.int64()))


def _decoded(path: Path, lines: Iterable[tuple[int, bytes]]) -> Any:
    """Numbered stored lines of ``path`` decoded, as a table of :data:`COLUMNS`."""
    return summary_table((n, game_summary(parse_line(path, n, raw))) for n, raw in lines)


def decoded_summary(path: Path, data: bytes, first_line: int) -> Any:
    """The complete lines ``data`` of ``path`` (after ``first_line`` lines) decoded, as a table of
    :data:`COLUMNS` (a segment without a usable summary).

    Raises:
        StoreError: a line is not a valid record (file and line named).
    """
    return _decoded(path, _lines(data, first_line))


def _lines(data: bytes, first_line: int) -> Iterator[tuple[int, bytes]]:
    """The complete, non-blank lines of ``data`` (after ``first_line`` lines) as (1-based number,
    bytes without the newline), one at a time (a log of a million games is not copied line by
    line at once): what :func:`~boopexp.experiments.store.lines.split_lines` numbers."""
    at, number = 0, first_line
    while (end := data.find(b"\n", at)) >= 0:
        number += 1
        raw = data[at:end]
        if raw.strip():
            yield number, raw
        at = end + 1


def write_rows(directory: Path, log: bytes, table: Any) -> None:
    """Replace the rows beside ``directory``'s log by one row for each complete line of ``log``
    (its bytes) that ``table`` (the log's games as :data:`COLUMNS`, one row a line) holds: what a
    writer does when the rows do not match the log line for line."""
    values = {n: i for i, n in enumerate(table["line"].to_pylist())}
    columns = [table[c].to_pylist() for c in COLUMNS[1:]]
    out = []
    offset = number = 0
    while (end := log.find(b"\n", offset)) >= 0:  # a line at a time: a large log is not copied at once
        number += 1
        row = values.get(number)
        if row is not None:
            out.append(_row(log[offset:end + 1], offset, dict(zip(COLUMNS[1:], (c[row] for c in columns)))))
        offset = end + 1
    write_atomically(directory / ROWS_FILE, b"".join(out))
