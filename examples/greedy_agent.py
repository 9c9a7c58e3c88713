"""A complete plugin agent for boopexp: one-ply greedy on the paper's state heuristic H.

Declare it in a config (this folder holds one: ``examples/greedy.yaml``)::

    agents:
      greedy: {plugin: "greedy_agent:make_greedy", noise: 0.1}

The module is found on ``PYTHONPATH`` or beside the config file. ``make_greedy(**kwargs)`` is
called once per game; the object it returns answers ``choose`` (required) and ``promote``
(optional). Every random choice draws from the generator it is handed, so a game is a pure
function of its identity, like the built-in agents' games (docs/agents.md, "Plugin agents").

It calls only what every game's position answers (``legal_moves``, ``to_move``, ``play(...).winner``,
``heuristic``), so it plays Connect Four and your own games too (``game: connect-four``: it is then
handed a ``boopexp.GamePosition``, and ``promote``, boop.'s, is never called).
"""

from __future__ import annotations

import numpy as np

import boopexp


class GreedyAgent:
    """Wins at once when it can, else plays the move whose position H rates best for it.

    Args:
        noise: probability of a uniformly random legal move instead (a weaker, sweepable agent).
    """

    def __init__(self, noise: float = 0.0) -> None:
        if not 0.0 <= noise <= 1.0:
            raise ValueError(f"noise = {noise!r} must be in [0, 1]")
        self.noise = noise

    def choose(self, position: boopexp.Position, rng: np.random.Generator) -> boopexp.Move:
        moves = position.legal_moves()
        if rng.random() < self.noise:
            return moves[int(rng.integers(len(moves)))]
        me = position.to_move
        best: list[boopexp.Move] = []
        best_value = -np.inf
        for move in moves:
            # a promotion tie-break inside play() draws from our generator too
            result = position.play(move, rng=rng)
            if result.winner == me:
                return move
            value = result.position.heuristic(me)
            if value > best_value:
                best, best_value = [move], value
            elif value == best_value:
                best.append(move)
        return best[int(rng.integers(len(best)))]

    def promote(self, position: boopexp.Position, groups: list[tuple[int, ...]], rng: np.random.Generator) -> int:
        """Promote a line of three if there is one (it frees three pieces), else the first group."""
        sizes = [len(g) for g in groups]
        return sizes.index(max(sizes))


def make_greedy(noise: float = 0.0) -> GreedyAgent:
    """The factory a config names: ``plugin: "greedy_agent:make_greedy"``; keys = keyword arguments."""
    return GreedyAgent(noise=noise)
