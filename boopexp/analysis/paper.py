"""The paper's numbers (package data).

The paper's reference numbers (Tables I–II, equivalent moves, per-file durations) as package data.

The numbers live in ``boopexp/data/paper_tables.json``, transcribed from
shared/spec/EXPERIMENTS.md §2, §3 and §5 (themselves recomputed from the 0.6.2 raw logs).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

#: The agent that Table I is about, and the order of its opponents in the paper.
FOCUS_AGENT = "mcts-co"
TABLE1_OPPONENTS: tuple[str, ...] = (
    "vanilla", "heuristics", "mcts+S", "mcts+E", "mcts+P", "mcts+SE", "mcts+SP", "mcts+EP",
)
#: Table II agents (mirror games), in the paper's order.
TABLE2_AGENTS: tuple[str, ...] = ("vanilla", "mcts-co", "heuristics", "mcts+S", "mcts+E", "mcts+P")


@dataclass(frozen=True)
class PaperCounts:
    """Win counts of one paper row: P1 wins of n1 games and P2 wins of n2 games (Table I: of mcts-co)."""

    p1_wins: int
    n1: int
    p2_wins: int
    n2: int


@functools.lru_cache(maxsize=1)
def paper_data() -> dict[str, Any]:
    """The parsed ``paper_tables.json`` (cached; do not mutate)."""
    text = resources.files("boopexp").joinpath("data/paper_tables.json").read_text(encoding="utf-8")
    return json.loads(text)


def table1_reference() -> dict[str, PaperCounts]:
    """Table I: opponent -> mcts-co's wins as P1 (of 50) and as P2 (of 50)."""
    data = paper_data()["table1"]
    n = int(data["games_per_side"])
    return {r["opponent"]: PaperCounts(r["p1_wins"], n, r["p2_wins"], n) for r in data["rows"]}


def table2_reference() -> dict[str, PaperCounts]:
    """Table II: agent -> P1 wins and P2 wins of its 100 mirror games (n1 = n2 = 100, the same games)."""
    data = paper_data()["table2"]
    n = int(data["games"])
    return {r["agent"]: PaperCounts(r["p1_wins"], n, r["p2_wins"], n) for r in data["rows"]}


def equivalent_moves_reference() -> dict[str, int]:
    """Agent -> the paper's mean number of equivalent moves per agent and per game (21,352 for mcts-co)."""
    ref = paper_data()["equivalent_moves_per_game"]
    return {ref["agent"]: int(ref["value"])}


def durations_reference() -> list[dict[str, Any]]:
    """§5: one dict per log file (file, pairing, games_timed, mean_s, median_s, min_s, max_s)."""
    return [dict(r) for r in paper_data()["durations"]]
