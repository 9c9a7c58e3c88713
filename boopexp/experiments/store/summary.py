"""**The** one-row-per-game summary of a sealed segment (``summary-NNNN.parquet``, pyarrow):
its fields declared once (``FIELDS``: ``game_summary``, ``COLUMN_TYPES``, ``COLUMNS``,
``OUTCOME_COLUMNS``), written by ``seal``/``migrate``, read when it matches its segment.

One row per sealed game: the summary written beside each sealed segment (docs/runner.md).

``summary-NNNN.parquet`` holds, for each line of ``games-NNNN.jsonl.zst`` (or of an older
``games-NNNN.jsonl.gz``), the game's identity and outcome (:data:`COLUMNS`, :func:`game_summary`),
so that ``status``, a resumed ``run`` and ``run --dry-run`` never decompress and parse the moves
and telemetry they do not use. It is Parquet, through pyarrow (a maintained columnar engine:
reading 100k rows takes tenths of a second where decoding the segment takes a minute), and is a
*cache* of the segment, never the truth: its metadata records the segment's size and trailer (its
last 8 bytes: the CRC-32 and length of the uncompressed lines, in either format), and a summary
that does not match its segment, cannot be read, or is missing is ignored and the segment decoded
instead (:func:`read_summary_table` says why).

pyarrow is imported inside the functions: ``boopexp --help`` does not pay for it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boopexp.play.identity import PAIRING_SEPARATOR

#: ``summary-NNNN.parquet`` beside ``games-NNNN.jsonl.zst`` (or ``.gz``).
SUMMARY_PATTERN = re.compile(r"summary-(\d{4,})\.parquet")
#: The summary format, in the file's metadata: a summary of another format is not read.
SUMMARY_FORMAT = "1"


@dataclass(frozen=True)
class Field:
    """One field of a game's summary: its name, its pyarrow type, whether counting a store's games
    reads it (:data:`OUTCOME_COLUMNS`), whether it holds a JSON value as text, and its value in a
    decoded record (:func:`game_summary`)."""

    name: str
    kind: str
    counted: bool
    value: Callable[[Mapping[str, Any]], Any]
    json_text: bool = False


def _device_seconds(record: Mapping[str, Any]) -> float | None:
    """The sum of a record's moves' device seconds (None: no telemetry)."""
    telemetry = record.get("telemetry")
    if not isinstance(telemetry, list) or not telemetry:
        return None
    return sum(float(m["device_seconds"]) for m in telemetry
               if isinstance(m, dict) and isinstance(m.get("device_seconds"), (int, float)))


#: **The** fields of a game's summary, declared once: the columns of a summary file and of the live
#: log's rows (:data:`COLUMN_TYPES`, after ``line``), what counting reads (:data:`OUTCOME_COLUMNS`)
#: and :func:`game_summary` all come from this table; a new counted field is one row here.
FIELDS: tuple[Field, ...] = (
    Field("config_hash", "string", True, lambda r: r["config_hash"]),
    Field("pairing", "string", True, lambda r: r["pairing"]),
    Field("game_index", "int64", True, lambda r: r["game_index"]),
    Field("experiment", "string", False, lambda r: _text(r.get("experiment"))),
    Field("p1", "string", True, lambda r: _text(r.get("p1"))),
    Field("p2", "string", True, lambda r: _text(r.get("p2"))),
    Field("winner", "string", True, lambda r: _text(r["winner"])),
    Field("termination", "string", True, lambda r: _text(r.get("termination"))),
    Field("plies", "int64", False, lambda r: _int64(r.get("plies"))),
    Field("device_seconds", "float64", False, _device_seconds),
    Field("forfeit", "string", True, lambda r: _plain(r.get("forfeit")), json_text=True),
    Field("sweep", "string", True, lambda r: _plain(r.get("sweep")), json_text=True),
)
#: The columns of a summary, each with its pyarrow type: one row per game, in line order: ``line``
#: (1-based line of the file), then :data:`FIELDS` (``forfeit`` and ``sweep``, JSON values, as their text).
COLUMN_TYPES: dict[str, str] = {"line": "int64", **{f.name: f.kind for f in FIELDS}}
COLUMNS: tuple[str, ...] = tuple(COLUMN_TYPES)
#: What counting a store's games reads of each summary (``StoreReader.outcomes``).
OUTCOME_COLUMNS: tuple[str, ...] = ("line", *(f.name for f in FIELDS if f.counted))
#: A record's optional fields held as text (the sides' names, the experiment, the termination):
#: a reader counts by them, so a stored record's are strings or null (``store.check_record``).
TEXT_FIELDS: tuple[str, ...] = ("experiment", "p1", "p2", "termination")
#: The columns :func:`invalid_rows` checks (a game's identity and winner).
CHECKED_COLUMNS: tuple[str, ...] = ("config_hash", "pairing", "game_index", "winner")
#: Columns holding a JSON value (an object or null) as text.
_JSON_COLUMNS = tuple(f.name for f in FIELDS if f.json_text)
#: Bytes of a segment's trailer: CRC-32 and size (mod 2^32) of the uncompressed data (a gzip
#: member's trailer, or the checksum frame of :mod:`boopexp.experiments.store`'s zstd segments).
_TRAILER = 8


def summary_path(segment: Path) -> Path:
    """The summary of sealed segment ``games-NNNN.jsonl.zst`` (or ``.gz``): ``summary-NNNN.parquet`` beside it."""
    number = segment.name.removeprefix("games-").removesuffix(".gz").removesuffix(".zst").removesuffix(".jsonl")
    return segment.with_name(f"summary-{number}.parquet")


def game_summary(record: Mapping[str, Any]) -> dict[str, Any]:
    """What the store's readers other than the analyses use of a decoded game record: identity,
    sides, outcome, length, device seconds, forfeit and sweep point, as plain JSON values (a
    record's vocabulary members as their strings). The one projection: a summary file holds these
    values, and a segment or log without one gives the same dicts."""
    return {f.name: f.value(record) for f in FIELDS}


def summary_bytes(rows: Iterable[tuple[int, Mapping[str, Any]]], segment: bytes) -> bytes:
    """The Parquet file of ``rows`` ((segment line, :func:`game_summary`) in line order) for the
    sealed segment whose bytes are ``segment``."""
    return table_summary_bytes(summary_table(rows), segment)


def table_summary_bytes(table: Any, segment: bytes) -> bytes:
    """The Parquet file of a summary table (a pyarrow Table of :data:`COLUMNS`, as
    :func:`summary_table` builds, one row per line of the segment, in line order) for the sealed
    segment whose bytes are ``segment``: what :func:`summary_bytes` writes, from columns (merge
    takes a store's rows from its sources' summaries without one Python object a game)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = table.combine_chunks().replace_schema_metadata(_fingerprint(segment))
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return bytes(sink.getvalue().to_pybytes())


def _int64(value: Any) -> int | None:
    """``value`` if it is an integer a 64-bit column holds, else None (a damaged record's count)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and -2**63 <= value < 2**63 else None


def summary_table(rows: Iterable[tuple[int, Mapping[str, Any]]]) -> Any:
    """``rows`` ((line, :func:`game_summary`) in line order) as the pyarrow Table of a summary
    file (:data:`COLUMNS`, without metadata): what a segment without a summary, or the live log,
    gives the columnar readers (``StoreReader.outcomes``)."""
    import pyarrow as pa

    columns: dict[str, list[Any]] = {c: [] for c in COLUMNS}
    for line, summary in rows:
        columns["line"].append(line)
        for c, value in summary_values(summary).items():
            columns[c].append(value)
    return pa.table(columns, schema=column_schema())


def column_schema(columns: Iterable[str] = COLUMNS) -> Any:
    """The pyarrow schema of ``columns`` (of :data:`COLUMN_TYPES`)."""
    import pyarrow as pa

    return pa.schema([(c, getattr(pa, COLUMN_TYPES[c])()) for c in columns])


def summary_values(summary: Mapping[str, Any]) -> dict[str, Any]:
    """A :func:`game_summary` as a summary's columns hold it (a JSON value as its text)."""
    return {c: None if summary[c] is None else json.dumps(summary[c]) if c in _JSON_COLUMNS else summary[c]
            for c in COLUMNS[1:]}


def invalid_rows(table: Any) -> Any:
    """The rows of ``table`` (pyarrow, with at least :data:`CHECKED_COLUMNS`, its text columns
    typed as strings) that are not a valid game, as a numpy boolean mask: **the** rule of
    :func:`boopexp.experiments.store.check_record` on columns (an empty or missing settings
    hash, a pairing not ``"A vs B"``, a missing or negative index, a winner other than
    ``"p1"``, ``"p2"`` or null), for what the readers take from summaries and from pyarrow's
    reading of the live log without one Python object a game."""
    import pyarrow as pa
    import pyarrow.compute as pc

    config_hash, pairing, index, winner = (table[c] for c in CHECKED_COLUMNS)
    bad = pc.or_(pc.fill_null(pc.equal(config_hash, ""), True),
                 pc.invert(pc.fill_null(pc.match_substring(pairing, PAIRING_SEPARATOR), False)))
    bad = pc.or_(bad, pc.fill_null(pc.less(index, 0), True))
    bad = pc.or_(bad, pc.invert(pc.or_(pc.is_null(winner), pc.is_in(winner, pa.array(["p1", "p2"])))))
    return bad.to_numpy(zero_copy_only=False)


def read_summary_table(segment: Path, columns: Iterable[str] = COLUMNS) -> tuple[Any, str | None]:
    """``segment``'s summary as a pyarrow Table of ``columns`` (without metadata), or None and why
    not (None: there is no summary). A summary is used only if its metadata matches the segment
    as it is now (size and trailer): a segment restored or rewritten since is decoded instead.
    The columnar readers count from it without one Python object a game."""
    path = summary_path(segment)
    try:
        size = segment.stat().st_size
        with open(segment, "rb") as fh:
            fh.seek(max(size - _TRAILER, 0))
            trailer = fh.read()
    except OSError:
        return None, None  # the segment's own reader reports it
    if not path.is_file():
        return None, None
    import pyarrow.parquet as pq

    try:
        f = pq.ParquetFile(path)
        meta = f.schema_arrow.metadata or {}
        if meta.get(b"boopexp.summary") != SUMMARY_FORMAT.encode():
            return None, f"{path}: not a summary of format {SUMMARY_FORMAT}; the segment is read instead"
        if (meta.get(b"segment_bytes") != str(size).encode()
                or meta.get(b"segment_trailer") != trailer.hex().encode()):
            return None, (f"{path} does not match {segment.name} (written for another version of it); the "
                          f"segment is read instead (boopexp seal {segment.parent} rewrites the summary)")
        wanted = list(columns)
        table = f.read(columns=[*wanted, *(c for c in CHECKED_COLUMNS if c not in wanted)])
        bad = invalid_rows(table)
    except Exception as exc:  # pyarrow's errors (ArrowInvalid, OSError, KeyError...) have no common base
        return None, (f"{path}: unreadable summary ({type(exc).__name__}); the segment is read instead "
                      f"(boopexp seal {segment.parent} rewrites it)")
    if bad.any():
        # A cache, never the truth: a row seal would not have written (a summary edited by hand)
        # sends the reader to the segment, whose lines are checked one by one.
        row = int(bad.argmax())
        return None, (f"{path}: row {row + 1} is not a valid game; the segment is read instead "
                      f"(boopexp seal {segment.parent} rewrites the summary)")
    return table.select(wanted).replace_schema_metadata(None), None


def _fingerprint(segment: bytes) -> dict[bytes, bytes]:
    return {b"boopexp.summary": SUMMARY_FORMAT.encode(), b"segment_bytes": str(len(segment)).encode(),
            b"segment_trailer": segment[-_TRAILER:].hex().encode()}


def _text(value: Any) -> Any:
    """A vocabulary member (a str subclass) as its plain string; anything else unchanged."""
    return str(value) if isinstance(value, str) else value


def _plain(value: Any) -> Any:
    """A JSON value as json.loads gives it back (members as strings, tuples as lists)."""
    return None if value is None else json.loads(json.dumps(value))
