"""A results folder's files, one room per job; the front door: the names the rest of boopexp imports
(``from boopexp.experiments.store import …``).

The results store of one experiment folder: its games plus the ``config.yaml`` they were run with.

The games are in the live log ``games.jsonl`` and in any number of sealed segments
``games-NNNN.jsonl.zst`` (docs/runner.md; ``.gz``: sealed before zstd). The log holds one JSON object per finished game
(docs/architecture.md), appended by the parent process only and fsync'ed per game, so a killed run
loses at most the game in flight. :func:`seal` moves the log's finished lines into a new zstd
segment (temporary file, fsync, rename, then truncate the log): a crash at any step leaves every
game in the store exactly once, because readers read the segments (in number order) and the log
together and count a game seen twice once, as they always did within one file.

A game is identified by ``(config_hash, pairing, game_index)``; rerunning skips the keys already
present. Reading is strict: a line that is not a valid record in the middle of the file is an
error (:class:`~boopexp.errors.StoreError` naming file and line), because guessing would silently
drop or double-count games. Only a last line of the log without its newline — a write cut short —
is tolerated: it is reported, ignored, and moved aside (never deleted) before the next append.

This front door holds the names the rest of boopexp uses; the rooms, one job each, lowest first:
``summary`` (one row per sealed game, in Parquet beside its segment), ``lines`` (the line codec),
``files`` (durable files and the lock), ``segments`` (the segment codec), ``scan`` (what reading
found: each game once, duplicates, conflicts), ``log_rows`` (the live log's summary rows, written
with its lines), ``columns`` (a store's outcome columns), ``reader`` (**the** reader,
``StoreReader``: records, outcomes, one record, blocks of lines, one line decoder), ``writer``
(the folder and its appender), ``sealing`` (``seal`` and ``migrate``) and ``merging`` (``merge``).
"""

from __future__ import annotations

from boopexp.experiments.store.columns import OutcomeColumns, StoredKeys
from boopexp.experiments.store.files import (
    CONFIG_FILE,
    FAULT_ENV,
    GAMES_FILE,
    LOCK_FILE,
    STDOUT_PATH,
    is_stream,
    writable_folder,
    write_atomically,
    writes_standard_output,
)
from boopexp.experiments.store.lines import (
    Location,
    TruncatedTail,
    check_record,
    decode_record,
    encode_record,
)
from boopexp.experiments.store.merging import MERGE_IGNORED_KEYS, MergeReport, merge
from boopexp.experiments.store.reader import StoreReader
from boopexp.experiments.store.scan import Conflict, StoreScan
from boopexp.experiments.store.sealing import SEGMENT_GAMES, MigrateReport, SealReport, migrate, seal
from boopexp.experiments.store.segments import (
    SEGMENT_NAME,
    SEGMENT_PATTERN,
    encode_segment,
    has_games_files,
    segment_data,
    segment_paths,
)
from boopexp.experiments.store.summary import (
    COLUMNS,
    OUTCOME_COLUMNS,
    SUMMARY_PATTERN,
    game_summary,
    summary_path,
    table_summary_bytes,
)
from boopexp.experiments.store.writer import GameStore, StoreWriter

__all__ = [
    "COLUMNS", "CONFIG_FILE", "FAULT_ENV", "GAMES_FILE", "LOCK_FILE", "MERGE_IGNORED_KEYS", "OUTCOME_COLUMNS",
    "SEGMENT_GAMES", "SEGMENT_NAME", "SEGMENT_PATTERN", "STDOUT_PATH", "SUMMARY_PATTERN",
    "Conflict", "GameStore", "Location", "MergeReport", "MigrateReport", "OutcomeColumns", "SealReport",
    "StoreReader", "StoreScan", "StoreWriter", "StoredKeys", "TruncatedTail",
    "check_record", "decode_record", "encode_record", "encode_segment", "game_summary",
    "has_games_files", "is_stream", "merge", "migrate", "seal",
    "segment_data", "segment_paths", "summary_path",
    "table_summary_bytes", "writable_folder", "write_atomically", "writes_standard_output",
]
