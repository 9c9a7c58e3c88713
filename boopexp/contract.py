"""The game contract: what one game is given (:class:`GameTask`) and what it returns (its record).

Engine-free on purpose: the runner, the config, the store, the report and the CLI share these
names without loading numba or the compiled MCTS. :mod:`boopexp.match` plays a task and builds
its record here; the record's fields are documented in docs/architecture.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from boopexp import __version__
from boopexp.agents import AgentSpec
from boopexp.budget import Budget
from boopexp.errors import ConfigError

#: A safety net, not a rule: the engine has no move limit (RULES.md §7) and every logged game of
#: the paper ended with a winner. Two agents that both answer deterministically can repeat a
#: position cycle forever (seen between mcts-co at 100 iterations and heuristics); such a game
#: stops here and is recorded with ``winner: null, termination: "ply_limit"`` (docs/agents.md).
MAX_PLIES = 1000


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
        )
    except KeyError as exc:
        raise ConfigError(f"game record {record.get('pairing')!r} #{record.get('game_index')} has no {exc}") from None


def build_record(task: GameTask, winner: str | None, moves: list[str], telemetry: list[dict],
                 host_seconds: float, version: str = __version__) -> dict:
    """The game record of docs/architecture.md (one line of games.jsonl).

    Args:
        winner: ``"p1"``, ``"p2"`` or None (a game stopped at MAX_PLIES).
    """
    return {
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
        "termination": "victory" if winner is not None else "ply_limit",
        "plies": len(moves),
        "moves": moves,
        "seed": task.seed,
        "budget": task.budget.to_dict(),
        "preset": task.preset,
        "telemetry": telemetry,
        "host_seconds": host_seconds,
        "version": version,
    }


def without_host_timing(record: dict) -> dict:
    """A copy of a game record without the fields that measure the host (``host_seconds``, and
    ``host_cpu_seconds`` per move): what remains is a pure function of the game's identity in
    device and iterations modes, so two plays of one game compare equal."""
    out = {k: v for k, v in record.items() if k != "host_seconds"}
    if isinstance(out.get("telemetry"), list):
        out["telemetry"] = [{k: v for k, v in t.items() if k != "host_cpu_seconds"} for t in out["telemetry"]]
    return out
