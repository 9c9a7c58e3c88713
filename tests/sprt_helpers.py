"""A stand-in for play_game whose winner follows known Elo strengths (for the SPRT runner tests)."""

from __future__ import annotations

from typing import Any

import numpy as np

from boopexp.play.contract import build_record

#: Elo of each agent in the fake games; the second player is favoured by 100 Elo, as in boop.
STRENGTH = {"heuristics": 400.0, "random": 0.0, "vanilla": 0.0}
FIRST_MOVE = -100.0


def elo_play_game(task: Any) -> dict:
    """A record whose winner is drawn from the task's own seed with the logistic-Elo probability."""
    rng = np.random.default_rng(task.seed)
    diff = STRENGTH[task.p1.name] - STRENGTH[task.p2.name] + FIRST_MOVE
    p1_wins = rng.random() < 1.0 / (1.0 + 10.0 ** (-diff / 400.0))
    plies = 2 * int(rng.integers(5, 30)) + (1 if p1_wins else 0)  # the last mover wins
    moves = [f"m{int(x)}" for x in rng.integers(0, 72, plies)]
    telemetry = [{"ply": 1, "player": "p1", "agent": task.p1.name, "iterations": 1}]
    return build_record(task, "p1" if p1_wins else "p2", moves, telemetry, 0.0, version="fake")
