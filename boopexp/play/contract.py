"""The game contract: what one game is given (:class:`GameTask`) and what it returns (its record).

Engine-free on purpose: the runner, the config, the store, the report and the CLI share these
names without loading numba or the compiled MCTS. :mod:`boopexp.play.match` plays a task and builds
its record here; the record's fields are documented in docs/architecture.md. The store keeps a
record in a compact form, schema 2 (:func:`pack_record`, :func:`unpack_record`, docs/runner.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from boopexp import __version__
from boopexp.agents.budget import Budget
from boopexp.agents.specs import AgentSpec
from boopexp.errors import ConfigError
from boopexp.play.identity import GameKey, game_key, game_seed, pairing_name

#: A safety net, not a rule: the engine has no move limit (RULES.md §7) and every logged game of
#: the paper ended with a winner. Two agents that both answer deterministically can repeat a
#: position cycle forever (seen between mcts-co at 100 iterations and heuristics); such a game
#: stops here and is recorded with ``winner: null, termination: "ply_limit"`` (docs/agents.md).
MAX_PLIES = 1000
#: The largest ply cap a config or option may set (a bound on one game's length and record).
MAX_PLIES_LIMIT = 100_000


def check_max_plies(value: object, where: str = "max_plies") -> int | None:
    """A ply cap from a config key or option: None for the default (MAX_PLIES, so that the
    settings hash, the records and the saved config of the default stay as they always were),
    else an integer in 1..MAX_PLIES_LIMIT.

    Raises:
        ConfigError: ``"<where> = <value> must be an integer from 1 to 100000"``.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PLIES_LIMIT:
        raise ConfigError(f"{where} = {value!r} must be an integer from 1 to {MAX_PLIES_LIMIT}"
                          f" (default {MAX_PLIES})")
    return None if value == MAX_PLIES else value


#: The terminations of a forfeited game: a plugin agent's illegal move or exception (docs/agents.md).
FORFEITS: tuple[str, ...] = ("illegal_move", "agent_error")


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

    @property
    def ply_cap(self) -> int:
        """The cap in effect: ``max_plies``, or :data:`MAX_PLIES` when it is the default."""
        return MAX_PLIES if self.max_plies is None else self.max_plies

    @property
    def key(self) -> GameKey:
        """The game's identity ``(config_hash, pairing, game_index)``."""
        return game_key(self.config_hash, self.pairing, self.game_index)

    @classmethod
    def new(cls, experiment: str, config_hash: str, p1: AgentSpec, p2: AgentSpec, game_index: int,
            budget: Budget, preset: str, max_plies: int | None = None, sweep: tuple = ()) -> GameTask:
        """Game ``game_index`` of the pairing ``p1 vs p2`` whose settings hash is ``config_hash``
        (:func:`boopexp.play.identity.pairing_hash`): its pairing name and its seed follow from them."""
        return cls(experiment, config_hash, pairing_name(p1.name, p2.name), game_index, p1, p2, budget, preset,
                   game_seed(config_hash, game_index), max_plies, sweep)


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
        )
    except KeyError as exc:
        raise ConfigError(f"game record {record.get('pairing')!r} #{record.get('game_index')} has no {exc}") from None


def build_record(task: GameTask, winner: str | None, moves: list[str], telemetry: list[dict],
                 host_seconds: float, version: str = __version__, forfeit: dict | None = None,
                 plugin_output: Mapping[str, str] | None = None) -> dict:
    """The game record of docs/architecture.md; measured seconds rounded as the store keeps them
    (:data:`DEVICE_SECONDS_DIGITS`, :data:`HOST_SECONDS_DIGITS`), so a game played again and the
    game read back compare equal. The store writes it as schema 2 (:func:`pack_record`).

    Args:
        winner: ``"p1"``, ``"p2"`` or None (a game stopped at its ply cap).
        forfeit: a plugin agent forfeited (docs/agents.md): ``{"termination": "illegal_move" |
            "agent_error", "player", "agent", "error"[, "move"]}``; ``winner`` is its opponent.
        plugin_output: what plugin agents printed, by side (``{"p1": text}``, capped:
            :data:`boopexp.agents.plugins.OUTPUT_LIMIT`); written only when a side printed something.
    """
    record = {
        "experiment": task.experiment,
        "config_hash": task.config_hash,
        "pairing": task.pairing,
        "game_index": task.game_index,
        "p1": task.p1.name,
        "p2": task.p2.name,
        "p1_spec": task.p1.to_dict(),
        "p2_spec": task.p2.to_dict(),
        "winner": winner,
        "winner_agent": None if winner is None else (task.p1.name if winner == "p1" else task.p2.name),
        "winner_colour": None if winner is None else ("blue" if winner == "p1" else "red"),
        "termination": forfeit["termination"] if forfeit else ("victory" if winner is not None else "ply_limit"),
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
    if forfeit is not None:
        record["forfeit"] = {k: v for k, v in forfeit.items() if k != "termination"}
    if task.sweep:  # only swept games: other records stay exactly as they were
        record["sweep"] = dict(task.sweep)
    output = {side: text for side, text in (plugin_output or {}).items() if text}
    if output:  # only games where a plugin printed: other records stay exactly as they were
        record["plugin_output"] = output
    return record


def without_host_timing(record: dict) -> dict:
    """A copy of a game record without the fields that measure the host (``host_seconds``, and
    ``host_cpu_seconds`` per move): what remains is a pure function of the game's identity in
    device and iterations modes, so two plays of one game compare equal."""
    out = {k: v for k, v in record.items() if k != "host_seconds"}
    if isinstance(out.get("telemetry"), list):
        out["telemetry"] = [{k: v for k, v in t.items() if k != "host_cpu_seconds"} for t in out["telemetry"]]
    return out


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

#: Per-move telemetry fields in their record order (``match``); columns of other names are kept.
TELEMETRY_ORDER = ("ply", "player", "agent", "iterations", "solver_calls", "equivalent_moves",
                   "equivalent_candidates", "tree_nodes", "nodes_created", "playout_plies", "solver_moves",
                   "lookahead_moves", "lookahead_replies", "device_seconds", "host_cpu_seconds")
_ROUNDED = {"device_seconds": DEVICE_SECONDS_DIGITS, "host_cpu_seconds": HOST_SECONDS_DIGITS}


def rounded_telemetry(telemetry: list[dict]) -> list[dict]:
    """Per-move telemetry with its measured seconds rounded (:data:`DEVICE_SECONDS_DIGITS`,
    :data:`HOST_SECONDS_DIGITS`): what a record keeps of them."""
    return [{k: _round(v, _ROUNDED[k]) if k in _ROUNDED else v for k, v in move.items()}
            if isinstance(move, dict) else move for move in telemetry]


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


def unpack_record(stored: Mapping[str, Any]) -> dict[str, Any]:
    """A stored record of schema 1 or 2 as :func:`build_record` returns it (measured floats rounded).

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
        return record
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
    return record


#: Top-level keys in the order build_record writes them.
_RECORD_ORDER = ("experiment", "config_hash", "pairing", "game_index", "p1", "p2", "p1_spec", "p2_spec", "winner",
                 "winner_agent", "winner_colour", "termination", "plies", "moves", "seed", "budget", "preset",
                 "telemetry", "host_seconds", "version")


def _derived_fields(record: Mapping[str, Any]) -> dict[str, Any]:
    """The top-level fields that the rest of ``record`` determines, as build_record sets them."""
    out: dict[str, Any] = {}
    names = {}
    for side in ("p1", "p2"):
        spec = record.get(f"{side}_spec")
        if isinstance(spec, Mapping) and isinstance(spec.get("name"), str):
            names[side] = out[side] = spec["name"]
    if "winner" in record:
        winner = record["winner"]
        if winner is None:
            out.update(winner_agent=None, winner_colour=None, termination="ply_limit")
        elif winner in ("p1", "p2"):
            out.update(winner_colour="blue" if winner == "p1" else "red", termination="victory")
            if winner in names:
                out["winner_agent"] = names[winner]
    if isinstance(record.get("moves"), list):
        out["plies"] = len(record["moves"])
    return out


def _derived_columns(n: int, columns: Mapping[str, list], names: Mapping[str, Any]) -> dict[str, list]:
    """The per-move columns that the others determine: ply, player (p1 moves first, sides
    alternate), agent (the side's name), tree_nodes (a search's tree is the root plus the nodes
    it created; 0 for a move without search)."""
    out: dict[str, list] = {"ply": list(range(1, n + 1))}
    players = columns.get("player") or ["p1" if i % 2 == 0 else "p2" for i in range(n)]
    out["player"] = players
    if "p1" in names and "p2" in names:
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
        derived = _derived_columns(len(telemetry), columns, names)
    except TypeError:  # e.g. a None among the counters: nothing is derived
        return columns
    packed = {k: v for k, v in columns.items() if not (k in derived and _same(derived[k], v))}
    # The number of moves is the length of a column: at least one stays.
    return packed or {keys[0]: columns[keys[0]]}


def _unpack_telemetry(columns: Mapping[str, list], record: Mapping[str, Any]) -> list[dict]:
    n = max((len(v) for v in columns.values()), default=0)
    full = dict(columns)
    try:
        derived = _derived_columns(n, columns, record)
    except TypeError:
        derived = {}
    for k, v in derived.items():
        full.setdefault(k, v)
    keys = [k for k in TELEMETRY_ORDER if k in full] + [k for k in columns if k not in TELEMETRY_ORDER]
    return [dict(zip(keys, values)) for values in zip(*(full[k] for k in keys))]


def _same(derived: Any, stored: Any) -> bool:
    # Same type first: numpy values (compared element-wise) and True == 1 are never "the same".
    return type(derived) is type(stored) and derived == stored


def _round(value: Any, digits: int) -> Any:
    return round(value, digits) if isinstance(value, float) else value
