"""Helpers for the report tests: synthetic game records and the paper's 1,400 games as records."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]

#: Sentinel: leave the key out of the record (an older record).
ABSENT: Any = object()


def paper_games_path() -> Path:
    """shared/reference/paper_games.csv: $BOOP_PAPER_GAMES, else ../shared/reference relative to the repo."""
    env = os.environ.get("BOOP_PAPER_GAMES")
    if env:
        return Path(env)
    return (REPO_ROOT / ".." / "shared" / "reference" / "paper_games.csv").resolve()


def make_record(
    pairing: str,
    game_index: int,
    winner: str | None,
    *,
    config_hash: str = "00000000000000aa",
    experiment: str = "test",
    plies: int | None = 30,
    telemetry: list[dict[str, Any]] | None = None,
    iterations: int | None = None,
    equivalent_moves: int | None = None,
    equivalent_candidates: Any = ABSENT,
    termination: Any = None,
) -> dict[str, Any]:
    """One game record in the schema of docs/architecture.md.

    Without an explicit ``telemetry`` and with ``iterations`` given, every ply gets
    ``iterations`` iterations, ``2 * iterations`` solver calls, ``equivalent_moves`` and, unless
    ABSENT (an older record), ``equivalent_candidates``.

    ``winner`` None is a game stopped at the ply limit (``winner_agent``/``winner_colour`` null,
    ``termination`` "ply_limit" unless given). A decided game has no ``termination`` key unless
    one is given (older records lack it); ABSENT leaves it out in any case.
    """
    p1, p2 = pairing.split(" vs ")
    record: dict[str, Any] = {
        "experiment": experiment,
        "config_hash": config_hash,
        "pairing": pairing,
        "game_index": game_index,
        "p1": p1,
        "p2": p2,
        "winner": winner,
        "winner_agent": None if winner is None else p1 if winner == "p1" else p2,
        "winner_colour": None if winner is None else "blue" if winner == "p1" else "red",
        "seed": 1000 + game_index,
        "budget": {"mode": "iterations", "iterations": 80},
        "preset": "code-0.6.2",
        "host_seconds": 1.0,
        "version": "0.1.0",
    }
    if termination is None and winner is None:
        termination = "ply_limit"
    if termination is not None and termination is not ABSENT:
        record["termination"] = termination
    if plies is not None:
        record["plies"] = plies
        record["moves"] = ["a1"] * plies
    if telemetry is None and iterations is not None and plies:
        telemetry = []
        for ply in range(1, plies + 1):
            player = "p1" if ply % 2 else "p2"
            entry = {
                "ply": ply, "player": player, "agent": p1 if player == "p1" else p2,
                "iterations": iterations, "solver_calls": 2 * iterations,
                "equivalent_moves": equivalent_moves, "tree_nodes": iterations + 1,
                "device_seconds": 1.0, "host_cpu_seconds": 0.01,
            }
            if equivalent_candidates is not ABSENT:
                entry["equivalent_candidates"] = equivalent_candidates
            telemetry.append(entry)
    if telemetry is not None:
        record["telemetry"] = telemetry
    return record


def games_for(
    pairing: str, p1_wins: int, p2_wins: int, no_winner: int = 0, *, no_winner_plies: int = 1000, **kwargs: Any
) -> list[dict[str, Any]]:
    """``p1_wins + p2_wins + no_winner`` records of one pairing: the P1 wins, the P2 wins, then
    the games stopped at the ply limit (``no_winner_plies`` plies, winner null)."""
    decided = [
        make_record(pairing, i, "p1" if i < p1_wins else "p2", **kwargs)
        for i in range(p1_wins + p2_wins)
    ]
    undecided_kwargs = kwargs | {"plies": no_winner_plies, "termination": None}
    undecided = [
        make_record(pairing, p1_wins + p2_wins + j, None, **undecided_kwargs)
        for j in range(no_winner)
    ]
    return decided + undecided


def write_results(directory: Path, records: Iterable[dict[str, Any]], tail: str = "") -> Path:
    """Write ``games.jsonl`` (one record per line, then ``tail`` verbatim) and a config.yaml."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)
    (directory / "games.jsonl").write_text(lines + tail, encoding="utf-8")
    (directory / "config.yaml").write_text(f"name: {directory.name}\n", encoding="utf-8")
    return directory / "games.jsonl"


def paper_records(path: Path) -> dict[str, list[dict[str, Any]]]:
    """The paper's games as records, split into {"ablation": [...], "mirror": [...]}."""
    out: dict[str, list[dict[str, Any]]] = {"ablation": [], "mirror": []}
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            experiment = "mirror" if row["blue_agent"] == row["red_agent"] else "ablation"
            winner = {"Blue": "p1", "Red": "p2"}[row["winner_colour"]]
            record = make_record(
                row["pairing"], int(row["game_index"]) - 1, winner,
                config_hash=f"paper-{row['file']}", experiment=experiment, plies=None,
            )
            out[experiment].append(record)
    return out


def write_plan(directory: Path, plan: Iterable[tuple[str, str, int]]) -> None:
    """Replace config.yaml by a resolved config whose ``plan:`` lists (pairing, config_hash, games)."""
    lines = ["# written by the report tests", f"name: {directory.name}", "plan:"]
    for pairing, config_hash, games in plan:
        p1, p2 = pairing.split(" vs ")
        lines += [f"- pairing: {pairing}", f"  p1: {p1}", f"  p2: {p2}",
                  f"  config_hash: '{config_hash}'", f"  games: {games}"]
    (directory / "config.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
