"""The game contract: ``MAX_PLIES``, ``GameTask``, the record's type (``GameRecord``,
``MoveTelemetry``, ``ForfeitInfo``) and its ``Termination``s, ``build_record``,
``task_from_record``, ``without_host_timing``, the stored record's schema.

Engine-free on purpose: the runner, the config, the store, the report and the CLI share these
names without loading numba or the compiled MCTS. :mod:`boopexp.play.match` plays a task and builds
its record here. The record is :class:`GameRecord` (its keys, their types and meanings; docs/architecture.md
shows it, and a test holds the two equal), its closed vocabularies are enums: :class:`Side` and
:class:`Colour` (:mod:`boopexp.game.sides`) and :class:`Termination`. The store keeps a record in a
compact form, schema 2 (:func:`pack_record`, :func:`unpack_record`, docs/runner.md).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, cast, get_args

from boopexp import __version__, schema
from boopexp.agents.budget import Budget
from boopexp.agents.specs import AgentSpec
from boopexp.errors import ConfigError
from boopexp.game.sides import Colour, Side, TextEnum
from boopexp.games import registry as games
from boopexp.games.registry import DEFAULT_GAME, GameOptions, options_json, options_of_json
from boopexp.play.identity import GameKey, game_key, game_seed, pairing_name
from boopexp.play.openings import Draw

#: A safety net, not a rule: the engine has no move limit (RULES.md §7) and every logged game of
#: the paper ended with a winner. Two agents that both answer deterministically can repeat a
#: position cycle forever (seen between mcts-co at 100 iterations and heuristics); such a game
#: stops here and is recorded with ``winner: null, termination: "ply_limit"`` (docs/agents.md).
MAX_PLIES = 1000
#: The largest ply cap a config or option may set (a bound on one game's length and record; with
#: a start's move number, :data:`boopexp.play.openings.MAX_START_MOVE_NUMBER`, within the 16 bits
#: the state counts plies in).
MAX_PLIES_LIMIT = 16_000
#: The characters a record keeps of one foreign text: what an agent (a plugin, an engine) said
#: and the record stores, a forfeit's ``error`` and ``move`` and a side's ``plugin_output``
#: (:func:`cut_text`). Above what a plugin's capture keeps
#: (:data:`boopexp.agents.plugins.OUTPUT_LIMIT` and its note), so that text arrives whole.
RECORD_TEXT_LIMIT = 10_000


def check_max_plies(value: object, where: str = "max_plies") -> int | None:
    """A ply cap from a config key or option: None for the default (MAX_PLIES, so that the
    settings hash, the records and the saved config of the default stay as they always were),
    else an integer in 1..MAX_PLIES_LIMIT.

    Raises:
        ConfigError: ``"<where> = <value> must be an integer from 1 to 16000"``.
    """
    if value is None:
        return None
    value = schema.integer(value, where, 1, MAX_PLIES_LIMIT,
                           want=f"an integer from 1 to {MAX_PLIES_LIMIT} (default {MAX_PLIES})")
    return None if value == MAX_PLIES else value


class Termination(TextEnum):
    """How a game ended: the record's ``termination``."""

    #: a player won on the board (RULES.md §7)
    VICTORY = "victory"
    #: no winner: the game stopped at its ply cap (:data:`MAX_PLIES`; a position cycle, docs/agents.md)
    PLY_LIMIT = "ply_limit"
    #: no winner: the game's rules ended it drawn (Connect Four's full board; boop. has no draw,
    #: RULES.md §7). Half a point to each side in every table, rating and test (docs/tables.md)
    DRAW = "draw"
    #: a plugin agent forfeited: it returned a move (or promotion) that is not legal there
    ILLEGAL_MOVE = "illegal_move"
    #: a plugin agent forfeited: it raised, or could not be built (docs/agents.md)
    AGENT_ERROR = "agent_error"


#: The termination of a forfeited game (a plugin agent's illegal move or exception, docs/agents.md).
ForfeitKind = Literal[Termination.ILLEGAL_MOVE, Termination.AGENT_ERROR]
#: The forfeit terminations, for ``record["termination"] in FORFEITS``.
FORFEITS: tuple[ForfeitKind, ...] = get_args(ForfeitKind)
#: A record's ``winner``: a side, or None (no winner: the game stopped at its ply cap, or was drawn).
WINNERS: tuple[Side | None, ...] = (Side.P1, Side.P2, None)
#: :data:`WINNERS` as messages name them.
WINNERS_TEXT = "'p1', 'p2' or null"


@dataclass(frozen=True)
class GameTask:
    """Everything that determines one game (p1 = Blue moves first)."""

    experiment: str
    config_hash: str
    pairing: str
    game_index: int
    p1: AgentSpec
    p2: AgentSpec
    budget: Budget
    preset: str
    seed: int
    #: The ply cap; None means :data:`MAX_PLIES`. Only a cap other than the default is hashed
    #: and recorded, so every game played before the cap was a setting keeps its identity.
    max_plies: int | None = None
    #: The sweep point ``((axis, value), ...)`` of a swept config: written in the record, not part
    #: of the identity (the budget and agents it sets are).
    sweep: tuple = ()
    #: Where the game starts: None, the empty board; a position string (:mod:`boopexp.game.notation`);
    #: or, until the game's worker resolves it (:func:`boopexp.play.starts.resolve_start`), a suite's
    #: move list or a :class:`~boopexp.play.openings.Draw`. Set by a config's ``openings:`` (game
    #: pair i starts from position i, docs/openings.md) or ``--start``; its identity is in
    #: ``config_hash``. Only a game with a start records one (its position string), so every other
    #: record stays as it was.
    start: str | Draw | None = None
    #: The game played (:mod:`boopexp.games`); only a game other than boop. is hashed and recorded.
    game: str = DEFAULT_GAME
    #: The game's options (``initial_state(seed, **options)``, docs/games.md "Values"); hashed and
    #: recorded only when set.
    game_options: GameOptions = ()
    #: A user's game: the config's folder its module is imported from when it is not on
    #: ``PYTHONPATH`` (:attr:`boopexp.games.registry.Game.directory`), for the worker that plays the
    #: game (a plugin agent's ``AgentSpec.directory`` does the same); neither hashed nor recorded.
    game_directory: str | None = None

    @property
    def ply_cap(self) -> int:
        """The cap in effect: ``max_plies``, or :data:`MAX_PLIES` when it is the default."""
        return MAX_PLIES if self.max_plies is None else self.max_plies

    def player(self, side: Side) -> AgentSpec:
        """The agent that plays ``side``."""
        return self.p1 if side == Side.P1 else self.p2

    @property
    def key(self) -> GameKey:
        """The game's identity ``(config_hash, pairing, game_index)``."""
        return game_key(self.config_hash, self.pairing, self.game_index)

    @classmethod
    def new(cls, experiment: str, config_hash: str, p1: AgentSpec, p2: AgentSpec, game_index: int,
            budget: Budget, preset: str, max_plies: int | None = None, sweep: tuple = (),
            start: str | Draw | None = None, game: str = DEFAULT_GAME, game_options: GameOptions = (),
            game_directory: str | None = None) -> GameTask:
        """Game ``game_index`` of the pairing ``p1 vs p2`` whose settings hash is ``config_hash``
        (:meth:`boopexp.play.settings.GameSettings.pairing_hash`): its pairing name and its seed follow
        from them. Games are made by :meth:`~boopexp.play.settings.GameSettings.task`, which calls it."""
        return cls(experiment, config_hash, pairing_name(p1.name, p2.name), game_index, p1, p2, budget, preset,
                   game_seed(config_hash, game_index), max_plies, sweep, start, game, game_options, game_directory)


# ---------------------------------------------------------------------------------------------
# The record (docs/architecture.md, "The game record", shows it; a test holds that section's keys,
# and which of them are optional, to these TypedDicts). Optional keys are in ``total=False`` parts:
# a record carries them only when they apply, so that every other record stays as it always was.


class _MoveCounts(TypedDict):
    ply: int  # 1-based, in the order of the moves
    player: Side  # the side that moved (p1 on odd plies)
    agent: str  # its agent's name
    iterations: int  # MCTS iterations of the move's search (0 for a move without search)
    solver_calls: int  # CO solver calls (best_move / best_m_moves)
    equivalent_moves: int  # solver calls with >= 2 optimal moves (tie events)
    equivalent_candidates: int  # the moves in those ties (docs/budget.md)
    tree_nodes: int  # the search tree's size: the root and the nodes created (0 without search)
    nodes_created: int  # nodes the search created
    playout_plies: int  # plies played in playouts
    solver_moves: int  # moves the solver scored


class _MoveExtras(TypedDict, total=False):
    # Only in a game with an agent that has co_lookahead (its opponent's moves: 0; docs/beyond.md).
    lookahead_moves: int  # moves the two-stage check tested
    lookahead_replies: int  # the opponent's replies it tried
    # Only in a game with an agent that has solver / prior (its opponent's moves: 0; docs/budget.md).
    proven_nodes: int  # nodes MCTS-Solver proved a win or a loss
    prior_evals: int  # the selection prior's evaluations (H or f of one move)
    # Only in a game with an alphabeta agent (its opponent's moves: 0; docs/budget.md, "Alpha-beta").
    search_depth: int  # the deepest iteration the search completed (plies)
    search_nodes: int  # the positions it entered (its node count, each charged on the device clock)
    tt_hits: int  # transposition-table probes that found their position
    # Only in a game with an MCTS agent that has reuse_tree (its opponent's moves: 0; docs/agents.md).
    reused_nodes: int  # the nodes of the last search's tree the move's search started from


#: The telemetry fields only some agents report (:func:`boopexp.play.match.play_game` gives the
#: other agent's moves zeros for them, so a record's moves all have the same fields).
OPTIONAL_TELEMETRY: tuple[str, ...] = tuple(_MoveExtras.__annotations__)


class MoveTelemetry(_MoveCounts, _MoveExtras):
    """One move's telemetry: an entry of ``record["telemetry"]``, keys in this order (docs/budget.md)."""

    device_seconds: float  # charged on the device clock (every mode), rounded to DEVICE_SECONDS_DIGITS
    host_cpu_seconds: float  # the host's CPU time of the move, rounded to HOST_SECONDS_DIGITS


class _ForfeitWho(TypedDict):
    player: Side  # the side that forfeited: the other side wins
    agent: str  # its agent's name


class _ForfeitMove(TypedDict, total=False):
    move: str  # what the agent returned, as text (an illegal move only)


class ForfeitInfo(_ForfeitWho, _ForfeitMove):
    """A forfeited game's ``record["forfeit"]``: a plugin agent lost by its own move (docs/agents.md)."""

    error: str  # one line: the exception, or why the move is not legal


#: The forfeit's keys that hold the agent's own words, bounded in a record (:func:`cut_text`).
FOREIGN_FORFEIT_KEYS = ("move", "error")


class ForfeitNotice(ForfeitInfo):
    """What a game's player hands :func:`build_record` when its agent forfeits: the record's
    ``forfeit`` and the game's ``termination``."""

    termination: ForfeitKind


class _RecordFields(TypedDict):
    experiment: str  # the config's name
    config_hash: str  # the pairing's settings hash (GameSettings.pairing_hash)
    pairing: str  # "<p1> vs <p2>": p1 is Blue and moves first
    game_index: int  # 0-based within the pairing
    p1: str  # the agents' registry names
    p2: str
    p1_spec: dict[str, Any]  # AgentSpec.to_dict()
    p2_spec: dict[str, Any]
    winner: Side | None  # None: no winner, the game stopped at its ply cap or was drawn (termination)
    winner_agent: str | None  # the winner's agent name
    winner_colour: Colour | None  # the winner's colour
    termination: Termination
    plies: int  # the number of moves
    moves: list[str]  # notation.py move strings, in order
    seed: int  # identity.game_seed(config_hash, game_index)
    budget: dict[str, Any]  # Budget.to_dict(): the keys of its mode (docs/budget.md)
    preset: str  # the agents' preset
    telemetry: list[MoveTelemetry]  # one entry per move, in order
    host_seconds: float  # the host's CPU seconds of the whole game, rounded to HOST_SECONDS_DIGITS
    version: str  # the boopexp version that played it


class GameRecord(_RecordFields, total=False):
    """One game's record: what :func:`boopexp.play.match.play_game` returns, the store keeps
    (compacted: :func:`pack_record`) and every reader gets back (:func:`unpack_record`).

    The vocabularies (``winner``, ``winner_colour``, ``termination``, a move's and a forfeit's
    ``player``) are :class:`~boopexp.game.sides.TextEnum` members: JSON holds their strings and
    :func:`unpack_record` turns those back into members. Keys added by other features pass
    through the store unchanged.
    """

    max_plies: int  # only when the config set a ply cap other than MAX_PLIES
    forfeit: ForfeitInfo  # only when a plugin agent forfeited (termination in FORFEITS; winner: its opponent)
    sweep: dict[str, Any]  # only for a swept config: the game's grid point {axis: value}
    # only when a plugin agent printed: what it printed, by side ("p1"/"p2"), at most
    # agents.plugins.OUTPUT_LIMIT characters each (docs/agents.md; and RECORD_TEXT_LIMIT: cut_text)
    plugin_output: dict[str, str]
    # only when the game did not start from the empty board (openings:, --start; docs/openings.md):
    # the start's one-line position string; the moves, plies and telemetry count from it
    start: str
    # only games other than boop. (docs/games.md): the game's name
    game: str
    # only when the config set the game's options (docs/games.md "Values"): {option: value}
    game_options: dict[str, Any]


def task_from_record(record: dict) -> GameTask:
    """The GameTask that played a stored game: the record alone is enough to replay it.

    Raises:
        ConfigError: the record lacks a field or holds settings that are not valid any more.
    """
    try:
        return GameTask(
            experiment=record["experiment"],
            config_hash=record["config_hash"],
            pairing=record["pairing"],
            game_index=int(record["game_index"]),
            p1=AgentSpec.from_dict(record["p1_spec"]),
            p2=AgentSpec.from_dict(record["p2_spec"]),
            budget=Budget.from_mapping(record["budget"]),
            preset=record["preset"],
            seed=int(record["seed"]),
            max_plies=record.get("max_plies"),
            sweep=tuple((record.get("sweep") or {}).items()),
            start=record.get("start"),
            game=record.get("game", DEFAULT_GAME),
            game_options=options_of_json(record.get("game_options")),
        )
    except KeyError as exc:
        raise ConfigError(f"game record {record.get('pairing')!r} #{record.get('game_index')} has no {exc}") from None


def build_record(task: GameTask, winner: Side | None, moves: list[str], telemetry: Sequence[Mapping[str, Any]],
                 host_seconds: float, version: str = __version__, forfeit: ForfeitNotice | None = None,
                 plugin_output: Mapping[str, str] | None = None, draw: bool = False) -> GameRecord:
    """The game record (:class:`GameRecord`); measured seconds rounded as the store keeps them
    (:data:`DEVICE_SECONDS_DIGITS`, :data:`HOST_SECONDS_DIGITS`), so a game played again and the
    game read back compare equal. The store writes it as schema 2 (:func:`pack_record`).

    Args:
        winner: the winning side (or its string, ``"p1"``), or None (a game stopped at its ply cap,
            or drawn).
        forfeit: a plugin agent forfeited (docs/agents.md); ``winner`` is its opponent.
        draw: the game's rules ended it drawn (``termination: "draw"``; ``winner`` None, no forfeit).
        plugin_output: what plugin agents printed, by side (``{"p1": text}``, capped:
            :data:`boopexp.agents.plugins.OUTPUT_LIMIT`); written only when a side printed something.

    The foreign text (the forfeit's ``move`` and ``error``, ``plugin_output``) is kept to
    :data:`RECORD_TEXT_LIMIT` characters each (:func:`cut_text`).

    Raises:
        ValueError: ``winner`` is not a side, or a drawn game with a winner or a forfeit.
    """
    winner = None if winner is None else Side(winner)
    if draw and (winner is not None or forfeit is not None):
        raise ValueError(f"a drawn game has no winner and no forfeit, got winner={winner!r}, "
                         f"forfeit={None if forfeit is None else forfeit['termination']!r}")
    record: GameRecord = {
        "experiment": task.experiment,
        "config_hash": task.config_hash,
        "pairing": task.pairing,
        "game_index": task.game_index,
        "p1": task.p1.name,
        "p2": task.p2.name,
        "p1_spec": task.p1.to_dict(),
        "p2_spec": task.p2.to_dict(),
        "winner": winner,
        "winner_agent": None if winner is None else task.player(winner).name,
        "winner_colour": None if winner is None else winner.colour,
        "termination": forfeit["termination"] if forfeit is not None else termination_of(winner, draw),
        "plies": len(moves),
        "moves": moves,
        "seed": task.seed,
        "budget": task.budget.to_dict(),
        "preset": task.preset,
        "telemetry": rounded_telemetry(telemetry),
        "host_seconds": _round(host_seconds, HOST_SECONDS_DIGITS),
        "version": version,
    }
    if task.max_plies is not None:  # the default cap is not written (records stay as they were)
        record["max_plies"] = task.max_plies
    if forfeit is not None:  # the agent's own words (its move, its error) bounded: cut_text
        record["forfeit"] = cast(ForfeitInfo, {k: cut_text(str(v)) if k in FOREIGN_FORFEIT_KEYS else v
                                               for k, v in forfeit.items() if k != "termination"})
    if task.sweep:  # only swept games: other records stay exactly as they were
        record["sweep"] = dict(task.sweep)
    output = {side: cut_text(text) for side, text in (plugin_output or {}).items() if text}
    if output:  # only games where a plugin printed: other records stay exactly as they were
        record["plugin_output"] = output
    if task.start is not None:  # only games with a start: other records stay exactly as they were
        # a position string: play_game resolves a suite line or a draw before it builds the record
        assert isinstance(task.start, str), f"unresolved start {task.start!r}"
        record["start"] = task.start
    if task.game != DEFAULT_GAME:  # only other games: boop.'s records stay exactly as they were
        record["game"] = task.game
    if task.game_options:  # only games whose options were set
        record["game_options"] = options_json(task.game_options)
    return record


def cut_text(text: str, limit: int = RECORD_TEXT_LIMIT) -> str:
    """``text``, or its first ``limit`` characters and ``... [cut: N more characters]``: the one
    bound on the foreign text a record keeps (:func:`build_record`), however much an agent wrote."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [cut: {len(text) - limit} more characters]"


def first_mover(record: Mapping[str, Any]) -> Side:
    """The side that made a record's first move: p1 (Blue), unless the game started from a
    position with Red to move (``start``, docs/openings.md). Read off the position string's
    side field, so no engine is loaded (another game's: its values' ``parse_position``)."""
    start = record.get("start")
    game = record.get("game")
    if game is not None and isinstance(start, str):
        return _start_mover(game, start)
    fields = start.split() if isinstance(start, str) else []
    return Side.P2 if len(fields) >= 4 and fields[3] == "r" else Side.P1


@functools.lru_cache(maxsize=1 << 14)
def _start_mover(game: str, start: str) -> Side:
    """The side to move in ``game``'s position ``start`` (:func:`first_mover`), parsed once per
    start: a store's export and import ask it of each record several times, and a Colosseum
    position takes milliseconds to parse (a malformed one raises each time: nothing cached)."""
    played = games.get(game)
    return Side.P2 if played.to_move(played.parse_position(start)) > 0 else Side.P1


def mover(first: Side, ply: int) -> Side:
    """The side that made move ``ply`` (1-based) of a game whose first move was ``first``'s."""
    return first if ply % 2 == 1 else first.opponent


def termination_of(winner: Side | None, draw: bool = False) -> Termination:
    """The termination of a game that no agent forfeited: a victory; without a winner, a draw
    (``draw``: the rules ended it drawn) or the ply cap."""
    if winner is not None:
        return Termination.VICTORY
    return Termination.DRAW if draw else Termination.PLY_LIMIT


def is_draw(record: Mapping[str, Any]) -> bool:
    """Whether a record's game was drawn (no winner, ``termination: "draw"``): **the** test of a
    draw, which every count of results reads (half a point to each side; a ply-capped game is no
    draw, and a winner beside "draw" counts as its winner's)."""
    return record.get("winner") is None and record.get("termination") == Termination.DRAW


def without_host_timing(record: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a game record without the fields that measure the host (``host_seconds``, and
    ``host_cpu_seconds`` per move): what remains is a pure function of the game's identity in
    device and iterations modes, so two plays of one game compare equal."""
    out = {k: v for k, v in record.items() if k != "host_seconds"}
    if isinstance(out.get("telemetry"), list):
        out["telemetry"] = [{k: v for k, v in t.items() if k != "host_cpu_seconds"} for t in out["telemetry"]]
    return out


def same_game(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two records are one game played twice: equal but for the host's timings and the
    code version that played them. The test of ``replay`` and of the store's copies of one game
    (a copy that is another game is a conflict).

    Each is compared in its full form (:func:`unpack_record` of :func:`pack_record`), so a copy
    stored in schema 1 without the fields schema 2 derives compares equal to its schema-2 copy.
    """
    def content(record: Mapping[str, Any]) -> dict[str, Any]:
        return {**without_host_timing(unpack_record(pack_record(record))), "version": None}

    return content(a) == content(b)


# ---------------------------------------------------------------------------------------------
# The stored form of a record (docs/runner.md, "Record schema")

#: The schema of the records this version stores. 1: the record as built, one dict per move.
#: 2: per-move telemetry column-wise, measured floats rounded, no field that the rest determines.
RECORD_SCHEMA = 2

#: Decimals kept of measured seconds: device time to 0.1 µs (the resolution of the device
#: profiles' costs, e.g. 381.2 µs a playout ply, so nothing the clock charged is lost), host CPU
#: time to 0.1 ms (finer digits are noise of the host's clock and load).
DEVICE_SECONDS_DIGITS = 7
HOST_SECONDS_DIGITS = 4

#: Per-move telemetry fields in their record order (:class:`MoveTelemetry`); columns of other names are kept.
TELEMETRY_ORDER: tuple[str, ...] = tuple(MoveTelemetry.__annotations__)
_ROUNDED = {"device_seconds": DEVICE_SECONDS_DIGITS, "host_cpu_seconds": HOST_SECONDS_DIGITS}


def rounded_telemetry(telemetry: Sequence[Mapping[str, Any]]) -> list[MoveTelemetry]:
    """Per-move telemetry with its measured seconds rounded (:data:`DEVICE_SECONDS_DIGITS`,
    :data:`HOST_SECONDS_DIGITS`): what a record keeps of them."""
    return cast(list[MoveTelemetry], [{k: _round(v, _ROUNDED[k]) if k in _ROUNDED else v for k, v in move.items()}
                                      if isinstance(move, dict) else move for move in telemetry])


def pack_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """The stored form (schema 2) of a record: telemetry column-wise, floats rounded, and the
    fields that the rest determines left out — but only when they equal what :func:`unpack_record`
    derives, so packing never loses anything. Keys this module does not know (added by other
    features) are kept as they are.
    """
    if record.get("schema", 1) == RECORD_SCHEMA:
        return dict(record)  # already packed
    derived = _derived_fields(record)
    out: dict[str, Any] = {"schema": RECORD_SCHEMA}
    for key, value in record.items():
        if key == "schema" or (key in derived and _same(derived[key], value)):
            continue
        if key == "telemetry" and isinstance(value, list):
            value = _pack_telemetry(value, record)
        elif key == "host_seconds":
            value = _round(value, HOST_SECONDS_DIGITS)
        out[key] = value
    return out


def unpack_record(stored: Mapping[str, Any]) -> GameRecord:
    """A stored record of schema 1 or 2 as :func:`build_record` returns it (measured floats rounded,
    the vocabularies' strings turned back into their members: :func:`with_members`).

    Raises:
        ValueError: the record's schema is newer than this version knows.
    """
    schema = stored.get("schema", 1)
    if schema == 1:
        record = dict(stored)
        if isinstance(record.get("telemetry"), list):
            record["telemetry"] = rounded_telemetry(record["telemetry"])
        if "host_seconds" in record:
            record["host_seconds"] = _round(record["host_seconds"], HOST_SECONDS_DIGITS)
        return _with_members(record)
    if schema != RECORD_SCHEMA:
        raise ValueError(f"record schema {schema!r} is not 1 or {RECORD_SCHEMA} (written by a newer boopexp?)")
    derived = _derived_fields(stored)
    record = {}
    for key in _RECORD_ORDER:
        if key in stored:
            record[key] = stored[key]
        elif key in derived:
            record[key] = derived[key]
    for key, value in stored.items():
        if key not in record and key != "schema":
            record[key] = value
    if isinstance(record.get("telemetry"), dict):
        record["telemetry"] = _unpack_telemetry(record["telemetry"], record)
    return _with_members(record)


#: Top-level keys in the order build_record writes them (the optional ones follow).
_RECORD_ORDER: tuple[str, ...] = tuple(_RecordFields.__annotations__)
_SIDES: dict[str, Side] = {s.value: s for s in Side}
_COLOURS: dict[str, Colour] = {c.value: c for c in Colour}
_TERMINATIONS: dict[str, Termination] = {t.value: t for t in Termination}


def _member(value: Any, members: Mapping[str, TextEnum]) -> Any:
    """The member whose string ``value`` is, else ``value`` as it is (a damaged record's value is
    left for the reader that checks it to name)."""
    return members.get(value, value) if isinstance(value, str) else value


def _with_members(record: dict[str, Any]) -> GameRecord:
    """``record`` (a fresh top-level copy, changed in place) with the vocabularies' strings read
    from JSON turned into their members, as :func:`build_record` writes them; a nested dict
    whose value changes is copied, never changed."""
    for key, members in (("winner", _SIDES), ("winner_colour", _COLOURS), ("termination", _TERMINATIONS)):
        if key in record:
            record[key] = _member(record[key], members)
    forfeit = record.get("forfeit")
    if isinstance(forfeit, dict) and isinstance(forfeit.get("player"), str):
        record["forfeit"] = {**forfeit, "player": _member(forfeit["player"], _SIDES)}
    telemetry = record.get("telemetry")
    if isinstance(telemetry, list):
        record["telemetry"] = [
            {**move, "player": _member(move["player"], _SIDES)}
            if isinstance(move, dict) and isinstance(move.get("player"), str) and not isinstance(move["player"], Side)
            else move
            for move in telemetry
        ]
    return cast(GameRecord, record)


def _derived_fields(record: Mapping[str, Any]) -> dict[str, Any]:
    """The top-level fields that the rest of ``record`` determines, as build_record sets them."""
    out: dict[str, Any] = {}
    names = {}
    for side in Side:
        spec = record.get(f"{side.value}_spec")
        if isinstance(spec, Mapping) and isinstance(spec.get("name"), str):
            names[side] = out[side.value] = spec["name"]
    if "winner" in record:
        winner = _member(record["winner"], _SIDES)
        if winner is None:
            out.update(winner_agent=None, winner_colour=None, termination=termination_of(None))
        elif isinstance(winner, Side):
            out.update(winner_colour=winner.colour, termination=termination_of(winner))
            if winner in names:
                out["winner_agent"] = names[winner]
    if isinstance(record.get("moves"), list):
        out["plies"] = len(record["moves"])
    return out


def _derived_columns(n: int, columns: Mapping[str, list], names: Mapping[str, Any],
                     first: Side = Side.P1) -> dict[str, list]:
    """The per-move columns that the others determine: ply, player (``first`` moves first: p1
    but from a start with Red to move, sides alternate), agent (the side's name), tree_nodes (a
    search's tree is the root plus the nodes it created; 0 for a move without search)."""
    out: dict[str, list] = {"ply": list(range(1, n + 1))}
    players = columns.get("player") or [mover(first, i + 1) for i in range(n)]
    out["player"] = players
    if Side.P1.value in names and Side.P2.value in names:
        out["agent"] = [names.get(p) for p in players]
    if "nodes_created" in columns and "iterations" in columns:
        out["tree_nodes"] = [c + 1 if it > 0 else 0 for it, c in zip(columns["iterations"], columns["nodes_created"])]
    return out


def _pack_telemetry(telemetry: list, record: Mapping[str, Any]) -> dict[str, list] | list:
    keys = list(telemetry[0]) if telemetry and isinstance(telemetry[0], dict) else None
    if keys is None or any(not isinstance(m, dict) or list(m) != keys for m in telemetry):
        return rounded_telemetry(telemetry)  # moves with different fields: kept move by move
    columns = {k: [m[k] for m in telemetry] for k in keys}
    for k, digits in _ROUNDED.items():
        if k in columns:
            columns[k] = [_round(v, digits) for v in columns[k]]
    names = {**_derived_fields(record), **{k: record[k] for k in ("p1", "p2") if k in record}}
    try:
        derived = _derived_columns(len(telemetry), columns, names, first_mover(record))
    except TypeError:  # e.g. a None among the counters: nothing is derived
        return columns
    packed = {k: v for k, v in columns.items() if not (k in derived and _same(derived[k], v))}
    # The number of moves is the length of a column: at least one stays.
    return packed or {keys[0]: columns[keys[0]]}


def _unpack_telemetry(columns: Mapping[str, list], record: Mapping[str, Any]) -> list[dict]:
    n = max((len(v) for v in columns.values()), default=0)
    full = dict(columns)
    try:
        derived = _derived_columns(n, columns, record, first_mover(record))
    except TypeError:
        derived = {}
    for k, v in derived.items():
        full.setdefault(k, v)
    keys = [k for k in TELEMETRY_ORDER if k in full] + [k for k in columns if k not in TELEMETRY_ORDER]
    return [dict(zip(keys, values)) for values in zip(*(full[k] for k in keys))]


def _same(derived: Any, stored: Any) -> bool:
    # Same type first: numpy values (compared element-wise) and True == 1 are never "the same";
    # a vocabulary's member and its string (a record read back from JSON) are.
    if isinstance(derived, TextEnum):
        derived = derived.value
    if isinstance(stored, TextEnum):
        stored = stored.value
    return type(derived) is type(stored) and derived == stored


def _round(value: Any, digits: int) -> Any:
    return round(value, digits) if isinstance(value, float) else value
