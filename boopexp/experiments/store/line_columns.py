"""Stored lines read as outcome columns by pyarrow's JSON reader (the live log, an unsummarised
segment), equal to decoding each line.

Stored lines read as outcome columns by pyarrow's JSON reader (``_lines_summary``): the live
log's and an unsummarised segment's games for ``status``, a resumed run and ``seal``, ~25x faster
than decoding each line, and equal to it (tests/test_store_readers.py); a line of any other
shape is decoded in Python (``parse_line``).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from boopexp.errors import StoreError
from boopexp.experiments.store.lines import parse_line, split_lines
from boopexp.experiments.store.summary import OUTCOME_COLUMNS, game_summary, invalid_rows, summary_table

#: Bytes that send a line to the exact decoding (:func:`_lines_summary`): an object of any keys
#: (forfeit, sweep point), or a null that the columnar reading cannot tell from a field left out
#: (which the record's schema derives, or which is missing).
_DECODED_LINES = re.compile(rb'"(?:forfeit|sweep)"|"(?:p1|p2|winner|termination|plies)"\s*:\s*null')


#: A line's objects that the summary holds as they are (as JSON text), and a telemetry object.
_OBJECT_FIELDS = re.compile(rb'"(?:forfeit|sweep)"')


_TELEMETRY = re.compile(rb'"telemetry":\{[^{}]*\}')


#: The summary's columns read from the moves and telemetry (the others from a record's top level).
_GAME_COLUMNS = ("experiment", "plies", "device_seconds")


def _lines_summary(path: Path, data: bytes, first_line: int, columns: Sequence[str] = OUTCOME_COLUMNS) -> Any:
    """The games of complete lines ``data`` of ``path`` (after ``first_line`` lines) as a table of
    ``columns`` (of the summary's, :data:`~boopexp.experiments.store.summary.COLUMNS`, ``line`` first),
    validated and equal to decoding each line and taking its :func:`game_summary`, but read by
    pyarrow's JSON reader with an explicit schema of the few fields needed (~25x faster than json
    and unpacking the moves' telemetry; docs/cluster.md "Scale"): the live log's lines for
    ``status`` and a resumed run, a log's lines for ``seal``, a segment's lines without a summary.

    A line that holds an object of any keys or a null (:data:`_DECODED_LINES`), or whose telemetry
    lacks device seconds or holds a null among them, is decoded in Python (:func:`parse_line`).
    ``device_seconds`` is the sum (Python's, in move order, as :func:`game_summary` takes it) of a
    schema-2 record's telemetry column ``device_seconds``: every column of a record's telemetry is
    as long as the others, as :func:`~boopexp.play.contract.pack_record` writes them.

    None: a line the reader refuses or that is not a valid record (not JSON, not UTF-8, a blank
    line, a field of another type, a schema-1 record's telemetry): the caller decodes the lines
    one by one, which names the bad line as :func:`parse_line` does.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    count = data.count(b"\n")
    # A blank line is no row of the reader's: the rows would not be the lines.
    if not count or data.startswith(b"\n") or b"\n\n" in data:
        return None
    if not data.isascii():  # stored lines are ASCII (encode_record); UTF-8 is valid too, if it is
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    full = any(c in columns for c in _GAME_COLUMNS)
    name = pa.struct([("name", pa.string())])
    # Every field check_record checks is read, typed (a text field of another type is refused by
    # the reader: the lines are then checked one by one), whether or not ``columns`` holds it.
    fields = [("schema", pa.int64()), ("config_hash", pa.string()), ("pairing", pa.string()),
              ("game_index", pa.int64()), ("p1", pa.string()), ("p2", pa.string()), ("winner", pa.string()),
              ("termination", pa.string()), ("experiment", pa.string()), ("p1_spec", name), ("p2_spec", name)]
    if full:
        fields += [("plies", pa.int64()), ("moves", pa.list_(pa.string())),
                   ("telemetry", pa.struct([("device_seconds", pa.list_(pa.float64()))]))]
    try:
        read = pj.read_json(pa.py_buffer(data), read_options=pj.ReadOptions(block_size=1 << 24),
                            parse_options=pj.ParseOptions(explicit_schema=pa.schema(fields),
                                                          unexpected_field_behavior="ignore"))
    except (pa.ArrowException, ValueError, OSError):  # ArrowInvalid: not JSON, a value of another type
        return None
    if read.num_rows != count:  # several objects on a line
        return None
    read = read.combine_chunks()
    decoded = np.zeros(count, dtype=bool)
    line, at = 0, 0
    for match in _DECODED_LINES.finditer(data):
        if match.start() < at:  # in the line already taken
            continue
        line += data.count(b"\n", at, match.start())
        at = data.find(b"\n", match.start())
        decoded[line] = True
    schema2 = pc.fill_null(pc.equal(read["schema"], 2), False)
    seconds: list[float | None] = []
    whole: set[int] = set()  # rows decoded with their telemetry: device seconds the columns cannot give
    if full:  # a schema-2 record's telemetry columns: the sum of its device seconds, else None
        telemetry = pc.and_(schema2, pc.is_valid(read["telemetry"])).to_numpy(zero_copy_only=False)
        listed = pc.struct_field(read["telemetry"], [0]).to_pylist()
        for row, (has, values) in enumerate(zip(telemetry, listed)):
            if not has:
                seconds.append(None)
            elif not values or None in values:  # the exact decoding says what the moves give
                decoded[row] = True
                whole.add(row)
                seconds.append(None)
            else:
                seconds.append(sum(values))
    keep = pa.array(~decoded)
    fast = read.filter(keep)
    schema2 = schema2.filter(keep)
    # check_record's rule, on the columns (a null winner here is a key left out: a null's line is decoded)
    if not pc.all(pc.and_(pc.is_in(pc.fill_null(fast["schema"], 1), pa.array([1, 2])), pc.is_valid(fast["winner"])),
                  min_count=0).as_py() or invalid_rows(fast).any():
        return None
    out = {"line": pa.array(first_line + 1 + np.flatnonzero(~decoded), pa.int64())}
    for c in columns[1:]:
        if c in ("p1", "p2"):  # schema 2 leaves out a side's name when it is its spec's
            out[c] = pc.if_else(schema2, pc.coalesce(fast[c], pc.struct_field(fast[f"{c}_spec"], [0])), fast[c])
        elif c == "termination":  # schema 2 leaves out a victory's (every winner here is p1 or p2)
            out[c] = pc.if_else(schema2, pc.coalesce(fast[c], pa.scalar("victory")), fast[c])
        elif c == "plies":  # schema 2 leaves it out when it is the number of moves
            out[c] = pc.if_else(schema2, pc.coalesce(fast[c], pc.list_value_length(fast["moves"]).cast(pa.int64())),
                                fast[c])
        elif c == "device_seconds":
            out[c] = pa.array(seconds, pa.float64()).filter(keep)
        elif c in ("forfeit", "sweep"):
            out[c] = pa.nulls(len(fast), pa.string())
        else:
            out[c] = fast[c]
    table = pa.table(out).cast(summary_table(()).select(list(columns)).schema)
    if decoded.any():
        starts = np.concatenate(([0], np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10) + 1))

        def summary(row: int) -> tuple[int, dict[str, Any]]:
            # Decoded in Python, but for its telemetry (most of decoding a long game), whose device
            # seconds are the columns' where they can give them.
            number = first_line + 1 + row
            raw = data[starts[row]:starts[row + 1] - 1]
            record = None
            if row not in whole and not _OBJECT_FIELDS.search(raw):
                # A long game's telemetry object left out before json reads the line (it is valid
                # JSON: the reader read it); if that is not the top-level one, the line as it is.
                lean = _TELEMETRY.sub(b'"telemetry":null', raw, count=1)
                with contextlib.suppress(StoreError):
                    record = parse_line(path, number, lean, moves=full, telemetry=False)
            if record is None:
                record = parse_line(path, number, raw, moves=full, telemetry=row in whole)
            out = game_summary(record)
            if full and row not in whole:
                out["device_seconds"] = seconds[row]
            return number, out

        slow = summary_table(summary(int(r)) for r in np.flatnonzero(decoded)).select(list(columns))
        table = pa.concat_tables([table, slow])
        table = table.take(pc.sort_indices(table["line"]))
    return table


def _summarised_lines(path: Path, data: bytes, first_line: int, columns: Sequence[str] = OUTCOME_COLUMNS) -> Any:
    """:func:`_lines_summary`, or where it cannot read the lines, each line decoded (the exact
    reading, which names a bad line)."""
    table = _lines_summary(path, data, first_line, columns)
    if table is None:
        lines, _ = split_lines(data)
        table = summary_table((first_line + n, game_summary(parse_line(path, first_line + n, raw)))
                              for n, raw in lines).select(list(columns))
    return table
