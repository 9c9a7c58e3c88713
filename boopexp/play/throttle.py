"""The host's MCTS rate and the cpu-mode throttle (``auto``).

The host's MCTS rate and the cpu-mode throttle derived from it (docs/budget.md).

Below :mod:`boopexp.play.match` (which resolves a ``cpu`` budget's throttle before a game), and
below :mod:`boopexp.interfaces.bench` and :mod:`boopexp.play.calibrate` (which report the rates).
"""

from __future__ import annotations

import time

import numpy as np

from boopexp.agents.budget import Budget, device_costs
from boopexp.agents.specs import resolve_agent
from boopexp.engine import mcts
from boopexp.engine.buffers import new_work
from boopexp.engine.rng import new_rng_state
from boopexp.game.positions import sample_positions
from boopexp.games.registry import DEFAULT_GAME, Game

#: The paper's vanilla rate on its device (EXPERIMENTS.md §2): the cpu mode's ``auto`` throttle
#: and the device profile are both set so that vanilla gets this many iterations per second.
PAPER_VANILLA_ITERATIONS_PER_S = 80.0

_THROTTLE_CACHE: dict[str, float] = {}


def host_iteration_rate(agent: str = "vanilla", seconds: float = 2.0, seed: int = 7,
                        positions: np.ndarray | None = None, game: Game | None = None) -> float:
    """MCTS iterations per host CPU second of ``agent``: whole searches (root set-up
    included) of 40 iterations each, cycling over ``positions`` (default: 24 seeded sample
    positions of boop.; another ``game``'s must be given) for about ``seconds`` of CPU time.
    Another game is searched by its bound search (:meth:`Game.engine`), its agent with the
    game's ``k``, ``m``, ``d``."""
    if game is None or game.name == DEFAULT_GAME:
        kernels, spec, work = mcts, resolve_agent(agent), new_work()
    else:
        kernels = game.engine()
        spec, work = resolve_agent(agent, params=game.paper_params()), kernels.new_work()
    if positions is None:
        positions = sample_positions(24, seed=seed)
    budget = Budget(mode="iterations", iterations=40)
    costs = device_costs(budget.profile)
    rng = new_rng_state(seed)
    kernels.search(positions[0], spec.mcts, budget, costs, rng, work)  # compile / warm up
    iterations = 0
    start = time.process_time()
    i = 0
    while time.process_time() - start < seconds or i < 3:
        _, tel = kernels.search(positions[i % len(positions)], spec.mcts, budget, costs, rng, work)
        iterations += tel["iterations"]
        i += 1
    # total over total: each search weighs by its time (a median of per-search rates would not)
    return iterations / (time.process_time() - start)


def auto_throttle(seconds: float = 2.0) -> float:
    """Host CPU seconds per emulated second so that vanilla gets ~80 iterations per second."""
    return PAPER_VANILLA_ITERATIONS_PER_S / host_iteration_rate("vanilla", seconds)


def resolve_throttle(throttle) -> float:
    """A numeric throttle; ``"auto"`` is measured once per process."""
    if throttle != "auto":
        return float(throttle)
    if "auto" not in _THROTTLE_CACHE:
        _THROTTLE_CACHE["auto"] = auto_throttle()
    return _THROTTLE_CACHE["auto"]
