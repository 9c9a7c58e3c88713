"""Synthetic play functions for the tuner's tests: a game's winner drawn from its own seed.

They return well-formed records without playing boop, so a tuning of dozens of trials takes a
second; the winner depends only on the game's identity (its seed), as a real game's does.
"""

from __future__ import annotations

import numpy as np

from boopexp.play.contract import GameTask, build_record


def _candidate_seat(task: GameTask) -> tuple[str | None, dict | None]:
    """Which seat a tuner's candidate (an agent named ``<agent>.t<k>``/``.c<k>``) sits in, and its params."""
    for seat, spec in (("p1", task.p1), ("p2", task.p2)):
        if spec.base is not None and "." in spec.name:
            return seat, spec.to_dict()["params"]
    return None, None


def _record(task: GameTask, p_candidate: float) -> dict:
    seat, _ = _candidate_seat(task)
    u = np.random.default_rng(task.seed).random()
    cand_wins = u < p_candidate
    other = "p2" if seat == "p1" else "p1"
    winner = seat if cand_wins else other
    return build_record(task, winner, ["a1"], [], 0.0)


def play_coin(task: GameTask) -> dict:
    """Every candidate has true strength 1/2 whatever its parameters."""
    return _record(task, 0.5)


def play_uct_matters(task: GameTask) -> dict:
    """A candidate with uct_c above 1 truly wins 75% of its games; below, 50%."""
    _, params = _candidate_seat(task)
    return _record(task, 0.75 if params["uct_c"] > 1.0 else 0.5)
