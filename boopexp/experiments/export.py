"""Games out of stores for other tools and back: **the** text game format (PGN-like ``[Key
"value"]`` headers, moves in the notation, the stored record in a ``Record`` header: a lossless
round trip), the one-row-per-game CSV of the stores' outcome columns, ``import_games`` through the
store's writer (docs/protocol.md, "Export").

The text format is one game per block: ``[Key "value"]`` header lines, a blank line, the moves in
the project notation (:mod:`boopexp.game.notation`) numbered PGN-style and ended by the result,
and a blank line. The readable headers (Event, Date, Blue, Red, Result, Termination,
StartPosition, Seed, Settings, Pairing, GameIndex, ConfigHash, Budget; another game names its
players by its own sides, ``White``/``Black`` for Pentago-Swap) are for other tools; the
``Record`` header holds the stored record (schema 2, :func:`boopexp.play.contract.pack_record`)
but its moves, as compact JSON, so that :func:`import_games` gives back exactly the record that
was exported (telemetry included) and ``replay`` accepts it. Import checks that the readable
headers agree with the record: an edited header is an error, not a silent second truth.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from boopexp import schema
from boopexp.engine.state import initial_state
from boopexp.errors import ConfigError, StoreError
from boopexp.experiments.store import (
    OUTCOME_COLUMNS,
    GameStore,
    Location,
    OutcomeColumns,
    StoreReader,
    check_record,
    has_games_files,
    is_stream,
    write_atomically,
)
from boopexp.game.notation import format_position, parse_move
from boopexp.game.sides import Colour
from boopexp.games import registry as games
from boopexp.games.registry import DEFAULT_GAME
from boopexp.play.contract import first_mover, is_draw, pack_record, same_game, unpack_record
from boopexp.play.identity import GameKey, check_seed, record_key

#: The header naming a game other than boop. (after ``Event``; boop.'s games have none).
GAME_HEADER = "Game"
#: The header holding the record itself (compact JSON, without its moves).
RECORD_HEADER = "Record"
#: PGN's unknown date: records hold no date (their games are a function of their settings).
UNKNOWN_DATE = "????.??.??"
#: Result tokens: Blue (p1) won, Red (p2) won, no winner (the ply cap).
RESULTS: dict[str | None, str] = {"p1": "1-0", "p2": "0-1", None: "*"}
#: The result token of a drawn game (``termination: "draw"``), as PGN writes a draw.
DRAW_RESULT = "1/2-1/2"
#: Every result token a game's moves may end with.
RESULT_TOKENS: tuple[str, ...] = (*RESULTS.values(), DRAW_RESULT)
#: The CSV's columns: the store's folder, then the store's outcome columns but ``line``
#: (``StoreReader.outcomes``; p1 is Blue, p2 Red).
CSV_COLUMNS: tuple[str, ...] = ("store", *OUTCOME_COLUMNS[1:])
# The value unrolled (runs of plain characters, then an escape): re's alternation per character
# held ~170 bytes of backtracking state a character (a 5 MB header: 1 GB; 50 MB: 8.5 GB).
_HEADER_RE = re.compile(r'^\[([A-Za-z][A-Za-z0-9_]*) "([^"\\]*(?:\\.[^"\\]*)*)"\]$')
_ESCAPED_RE = re.compile(r"\\(.)")
_NUMBER_RE = re.compile(r"^\d+\.(\.\.)?$")
_LINE_WIDTH = 80


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _unescape(value: str) -> str:
    return _ESCAPED_RE.sub(_escaped, value) if "\\" in value else value


def _escaped(match: re.Match[str]) -> str:
    return match.group(1)


def _compact(value: Any, sort_keys: bool = True) -> str:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), sort_keys=sort_keys)


def headers(record: Mapping[str, Any]) -> dict[str, str]:
    """The readable headers of a (decoded) record: what a reader of the text file sees; a game
    other than boop. has a ``Game`` header after ``Event`` and names its players by its sides
    (Pentago-Swap: ``[White "mcts-co"]``; boop.'s games are written as they were)."""
    settings = {k: record[k] for k in ("p1_spec", "p2_spec", "preset", "max_plies", "sweep") if k in record}
    game = record.get("game")
    first, second = _side_headers(game)
    return {
        "Event": str(record.get("experiment", "?")),
        **({GAME_HEADER: str(game)} if game is not None else {}),
        "Date": UNKNOWN_DATE,
        first: str(record.get("p1", "?")),
        second: str(record.get("p2", "?")),
        "Result": DRAW_RESULT if is_draw(record) else RESULTS[_winner(record)],
        "Termination": str(record.get("termination", "?")),
        "StartPosition": record.get("start") or _initial_position(game),
        "Seed": str(record.get("seed", "?")),
        "Settings": _compact(settings),
        "Pairing": str(record["pairing"]),
        "GameIndex": str(record["game_index"]),
        "ConfigHash": str(record["config_hash"]),
        "Budget": _compact(record.get("budget")),
    }


def _initial_position(game: Any) -> str:
    """The position string of a game's start (boop.'s empty board when ``game`` is None)."""
    if game is None:
        return format_position(initial_state())
    try:
        played = games.get(game)
    except ConfigError:  # not a game boopexp plays: the record's check says so, with its line
        return "?"
    return played.position_string(played.initial_state())


def _side_headers(game: Any) -> tuple[str, str]:
    """The headers naming p1 and p2: the game's sides, capitalised (boop.'s ``Blue``, ``Red``; a
    game boopexp does not play, the record's check says so: boop.'s)."""
    try:
        played = games.get(DEFAULT_GAME if game is None else game)
    except ConfigError:
        played = games.get(DEFAULT_GAME)
    return played.side_name(Colour.BLUE, capital=True), played.side_name(Colour.RED, capital=True)


def _winner(record: Mapping[str, Any]) -> str | None:
    winner = record.get("winner")
    return None if winner is None else str(winner)


def game_text(record: Mapping[str, Any]) -> str:
    """One game's block of the text format (headers, blank line, moves and result, blank line)."""
    head = headers(record)
    lines = [f'[{key} "{_escape(value)}"]' for key, value in head.items()]
    # in the stored key order, so that an imported game is stored byte for byte as it was
    stored = {k: v for k, v in pack_record(record).items() if k != "moves"}
    lines.append(f'[{RECORD_HEADER} "{_escape(_compact(stored, sort_keys=False))}"]')
    tokens = []
    red_first = first_mover(record).value == "p2"
    for i, move in enumerate(record.get("moves") or []):
        ply = i + 1 + red_first  # a game Red opens starts "1... m1"
        if ply % 2 == 1:
            tokens.append(f"{(ply + 1) // 2}.")
        elif i == 0:
            tokens.append("1...")
        tokens.append(str(move))
    tokens.append(head["Result"])  # the movetext ends with the Result header's token
    movetext, line = [], ""
    for token in tokens:
        if line and len(line) + 1 + len(token) > _LINE_WIDTH:
            movetext.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    movetext.append(line)
    return "\n".join([*lines, "", *movetext, ""]) + "\n"


@dataclass(frozen=True)
class ExportReport:
    """What :func:`export_games` wrote: the file, its number of games and of stores read."""

    out: Path
    games: int
    stores: int = 0


def export_games(directories: Sequence[str | Path], out: str | Path, fmt: str) -> ExportReport:
    """Write the games of the stores ``directories`` to ``out`` as text (every game, in reading
    order) or CSV (one row per game, from the stores' summary columns: no record decoded where a
    sealed segment has its summary). A store named twice (or by two paths) is written once. The
    file is written whole or not at all (:func:`~boopexp.experiments.store.write_atomically`: a
    symbolic link written through, ``-`` standard output, a device or a FIFO streamed into).

    Raises:
        ConfigError: ``fmt`` is not ``text`` or ``csv``, a folder is not a store, ``out`` is in one.
        StoreError: a damaged store, ``out`` cannot be written.
    """
    out = Path(out)
    folders = _distinct_folders(directories)
    target = Path(os.path.realpath(out))
    for folder in folders:
        if not folder.is_dir():
            raise ConfigError(f"no results folder {str(folder)!r}")
        if target.is_relative_to(os.path.realpath(folder)) and not is_stream(out):
            raise ConfigError(f"--out {out} is inside the store {str(folder)!r} it exports; write it elsewhere")
    if fmt == "text":
        parts = [game_text(r) for folder in folders for r in StoreReader(folder).records().records]
        _write_whole(out, "".join(parts).encode("ascii"))
        return ExportReport(out, len(parts), len(folders))
    if fmt == "csv":
        return ExportReport(out, _write_csv(folders, out), len(folders))
    raise ConfigError(f"--format {fmt!r} is not a format; allowed: text, csv")


def _distinct_folders(directories: Sequence[str | Path]) -> list[Path]:
    """The folders in their order, each once: a later name of a folder already named (the same
    path, or another path to it: ``a/``, ``./a``, a link) is dropped."""
    seen: set[str] = set()
    folders = []
    for d in directories:
        real = os.path.realpath(d)
        if real not in seen:
            seen.add(real)
            folders.append(Path(d))
    return folders


def _write_csv(folders: Sequence[Path], out: Path) -> int:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    tables = []
    for folder in folders:
        table = StoreReader(folder).outcomes().table.drop(["line"])
        tables.append(table.add_column(0, "store", pa.array([str(folder)] * table.num_rows, pa.string())))
    table = pa.concat_tables(tables, promote_options="default") if tables else pa.table({})
    table = table.select(list(CSV_COLUMNS)).cast(
        pa.schema([(c, pa.string() if pa.types.is_dictionary(table.schema.field(c).type) else
                    table.schema.field(c).type) for c in CSV_COLUMNS]))
    buffer = pa.BufferOutputStream()
    pacsv.write_csv(table, buffer)
    _write_whole(out, buffer.getvalue().to_pybytes())
    return int(table.num_rows)


def _write_whole(out: Path, data: bytes) -> None:
    try:
        write_atomically(out, data)
    except OSError as exc:
        raise StoreError(f"cannot write {out}: {exc.strerror or exc}") from None


# ---------------------------------------------------------------------------------------------
# reading the text format back


def _lines(path: Path, fh: IO[bytes]) -> Iterator[tuple[int, str]]:
    """The numbered lines of a game file, read one at a time (a large export is never whole in memory)."""
    for number, raw in enumerate(fh, 1):
        try:
            yield number, raw.decode("ascii")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}:{number}: not ASCII text (byte 0x{raw[exc.start]:02x}); "
                              "expected a file written by boopexp export --format text") from None


def _blocks(path: Path, lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, list[tuple[int, str, str]],
                                                                        list[tuple[int, str]]]]:
    """(first line, headers as (line, key, value), movetext lines as (line, text)) of each game."""
    heads: list[tuple[int, str, str]] = []
    moves: list[tuple[int, str]] = []
    start = 0
    for number, raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line.startswith("["):
            if moves:  # a header after moves: the next game
                yield start, heads, moves
                heads, moves = [], []
            m = _HEADER_RE.match(line)
            if m is None:
                raise ConfigError(f"{path}:{number}: {_show(line)} is not a header; expected [Key \"value\"]")
            if not heads:
                start = number
            heads.append((number, m.group(1), _unescape(m.group(2))))
        else:
            if not heads:
                raise ConfigError(f"{path}:{number}: moves before any [Key \"value\"] header")
            moves.append((number, line))
    if heads:
        yield start, heads, moves


def read_games(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The games of a text file written by :func:`export_games`, one at a time, as (the line its
    block starts on, its record decoded as the store reads it): the file is streamed.

    Raises:
        ConfigError: the file cannot be read, holds no game, or is malformed: one line naming
            ``file:line`` and what is wrong (a header, a move, a missing ``Record``, a header that
            disagrees with it), when the reading reaches it.
    """
    path = Path(path)
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise ConfigError(f"no game file {str(path)!r}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    games = 0
    with fh:
        try:
            for start, heads, moves in _blocks(path, _lines(path, fh)):
                games += 1
                yield start, _record(path, start, heads, moves)
        except OSError as exc:  # a read error midway (EIO, a directory)
            raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not games:
        raise ConfigError(f"{path}: no game; expected blocks of [Key \"value\"] headers and moves "
                          "(boopexp export --format text)")


def _record(path: Path, start: int, heads: list[tuple[int, str, str]], moves: list[tuple[int, str]]) -> dict[str, Any]:
    where = {key: number for number, key, _ in heads}
    values = {key: value for _, key, value in heads}
    if RECORD_HEADER not in values:
        raise ConfigError(f"{path}:{start}: the game has no [{RECORD_HEADER} \"...\"] header; import reads only "
                          "files written by boopexp export --format text (it holds the game's record)")
    try:
        stored = json.loads(values[RECORD_HEADER], parse_int=schema.text_int)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{where[RECORD_HEADER]}: the {RECORD_HEADER} header is not JSON "
                          f"({exc.msg})") from None
    if not isinstance(stored, dict) or "moves" in stored:
        raise ConfigError(f"{path}:{where[RECORD_HEADER]}: the {RECORD_HEADER} header must be a JSON object "
                          "without 'moves' (the moves follow the headers)")
    tokens = [(number, token) for number, line in moves for token in line.split()]
    if not tokens or tokens[-1][1] not in RESULT_TOKENS:
        last = tokens[-1][0] if tokens else start
        raise ConfigError(f"{path}:{last}: the moves must end with the result ({', '.join(RESULT_TOKENS)})")
    played = []
    boop = "game" not in stored  # another game's moves are read by its notation when the game is walked
    for number, token in tokens[:-1]:
        if _NUMBER_RE.match(token):
            continue
        if boop:
            try:
                parse_move(token)
            except Exception as exc:  # InvalidMoveError: its message quotes the token
                raise ConfigError(f"{path}:{number}: {exc}") from None
        played.append(token)
    try:
        record = dict(unpack_record({**stored, "moves": played}))
        problem = check_record(record)
    except (ValueError, KeyError, TypeError) as exc:
        problem = str(exc)
    if not problem and "seed" in record:  # the game is played again from it (an int64 at most)
        try:
            check_seed(record["seed"])
        except ConfigError as exc:
            problem = str(exc)
    if problem:
        raise ConfigError(f"{path}:{where[RECORD_HEADER]}: not a game record ({problem})")
    expected = headers(record)
    for key, value in values.items():
        if key in expected and value != expected[key] and not (key == "Date"):
            raise ConfigError(f"{path}:{where[key]}: [{key} {_show(value)}] disagrees with the game's record "
                              f"({_show(expected[key])}); the headers are read from the record, do not edit them")
    if tokens[-1][1] != expected["Result"]:
        raise ConfigError(f"{path}:{tokens[-1][0]}: the result {tokens[-1][1]!r} disagrees with the game's "
                          f"record ({expected['Result']!r})")
    return record


@dataclass(frozen=True)
class ImportReport:
    """What :func:`import_games` did: games read, games added (the others were already there),
    and how many of them were played again by search (the others only through the rules)."""

    out: Path
    games: int
    added: int
    searched: int = 0


def import_games(path: str | Path, out: str | Path, search: bool = True) -> ImportReport:
    """Add the games of a text file to the store ``out`` through its writer (append + fsync by
    blocks, the lock). Every game is played through the rules and, with ``search``, where its budget makes it
    reproducible, played again by search (:func:`boopexp.play.replay.check_replays`) before
    anything is stored. Idempotent as ``merge``: a game already stored (the same game:
    :func:`same_game`) is not added again, nor searched again; a different game under the same
    identity, in the file or in ``out``, is refused with nothing written, as is any malformed input
    or a game that does not replay (the whole file is read and checked first).

    The file is streamed, game by game; the games checked wait in an unnamed temporary file (the
    system's temporary folder) until all are, so memory holds one game and each game's identity.

    Raises:
        ConfigError: the file is malformed, or a game does not replay (``file:line``, the game,
            the ply).
        StoreError: a conflicting game, a damaged store or a process writing ``out``.
    """
    from boopexp.play.replay import reproducible

    out = Path(out)
    # What out holds already (read again under the lock): such games are walked, not searched again.
    before = StoreReader(out).outcomes().keys() if has_games_files(out) else None
    unsearched: set[GameKey] = set()  # games out held when they were read: walked only
    searched = 0
    with _Spool() as spool:
        for line, record in read_games(path):
            key = record_key(record)
            if key in spool:
                if not same_game(spool.record(key), record):
                    raise StoreError(f"{path}: game {key[1]!r} #{key[2]} ({key[0]}) is in the file twice as "
                                     "different games; nothing imported")
                continue
            stored = before is not None and before.find(*key) >= 0
            _check(path, line, record, search and not stored)
            if stored:
                unsearched.add(key)
            else:
                searched += int(search and reproducible(record))
            spool.add(key, line, record)
        with GameStore(out).open() as writer:
            new = _new_games(path, writer.stored, spool)
            for key in sorted(new & unsearched) if search else ():  # stored when read, not any more
                line, record = spool.game(key)
                _check(path, line, record, True)
                searched += int(reproducible(record))
            writer.append_all(record for key, (_, record) in spool if key in new)
    return ImportReport(out, len(spool), len(new), searched)


def _check(path: str | Path, line: int, record: Mapping[str, Any], search: bool) -> None:
    """:func:`~boopexp.play.replay.check_replays`, its refusal naming the file and the game's line."""
    from boopexp.play.replay import check_replays

    try:
        check_replays(record, search)
    except StoreError as exc:  # "'PAIRING' #I: ply N ...": the game and the ply
        # the file's game is the bad input, as a malformed one (exit 2)
        raise ConfigError(f"{path}:{line}: game {exc}; it does not replay, nothing imported") from None


def _new_games(path: str | Path, stored: OutcomeColumns, spool: _Spool) -> set[GameKey]:
    """The games of the file that ``stored`` lacks; a stored copy that is another game is refused."""
    keys = stored.keys()
    new: set[GameKey] = set()
    copies: list[tuple[GameKey, Location]] = []
    for key in spool.keys():
        row = keys.find(*key)
        if row < 0:
            new.add(key)
        else:
            copies.append((key, stored.origin_of_row(row)))
    copies.sort(key=lambda c: c[1])  # file by file: records_at holds one file's lines at a time
    reader = StoreReader(stored.scan.path.parent)
    for (key, where), copy in zip(copies, reader.records_at([c[1] for c in copies])):
        if not same_game(copy, spool.record(key)):
            raise StoreError(f"{path}: game {key[1]!r} #{key[2]} ({key[0]}) differs from the copy in "
                             f"{where[0]} line {where[1]}; nothing imported")
    return new


class _Spool:
    """The games :func:`import_games` checked, set aside in an unnamed temporary file until every
    game of the file is: in memory, only each game's identity and where it is in the file."""

    def __init__(self) -> None:
        self._file: IO[bytes] = tempfile.TemporaryFile(prefix="boopexp-import-")
        self._offsets: dict[GameKey, int] = {}

    def __enter__(self) -> _Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()

    def __contains__(self, key: GameKey) -> bool:
        return key in self._offsets

    def __len__(self) -> int:
        return len(self._offsets)

    def keys(self) -> Iterable[GameKey]:
        return self._offsets.keys()

    def add(self, key: GameKey, line: int, record: Mapping[str, Any]) -> None:
        self._file.seek(0, os.SEEK_END)
        self._offsets[key] = self._file.tell()
        pickle.dump((line, record), self._file, protocol=pickle.HIGHEST_PROTOCOL)

    def game(self, key: GameKey) -> tuple[int, dict[str, Any]]:
        """(the line its block starts on, the record) of game ``key``."""
        self._file.seek(self._offsets[key])
        return pickle.load(self._file)  # this process's own temporary file

    def record(self, key: GameKey) -> dict[str, Any]:
        return self.game(key)[1]

    def __iter__(self) -> Iterator[tuple[GameKey, tuple[int, dict[str, Any]]]]:
        """Every game, in the order added."""
        self._file.seek(0)
        for key in list(self._offsets):
            yield key, pickle.load(self._file)


def _show(value: str, limit: int = 60) -> str:
    return repr(value if len(value) <= limit else value[: limit - 3] + "...")
