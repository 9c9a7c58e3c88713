"""Calibration of the budgets: the device profile's costs and the host's CPU throttle.

The procedure and its numbers are written up in docs/budget.md. Everything here is measured on
fixed, seeded games, so the primitive counts (and therefore the fitted device profile) are the
same on every machine; only the host rates and the throttle depend on the host.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from boopexp.agents import resolve_agent
from boopexp.budget import Budget, DeviceProfile
from boopexp.errors import ConfigError

#: The paper's figures the device profile is calibrated against (EXPERIMENTS.md §2, §5–6).
PAPER_VANILLA_ITERATIONS_PER_S = 80.0
PAPER_EQUIVALENT_MOVES_PER_GAME = 21_352
#: mcts-co moves per game in the paper's "full vs heuristics" games (EXPERIMENTS.md §5: about
#: 57 plies with mcts-co Blue, 37 with mcts-co Red, so about 28.5 and 18.5 mcts-co moves).
PAPER_MCTS_CO_MOVES_PER_GAME = 23.5

#: Assumed costs (device-µs); see docs/budget.md for why.
ASSUMED_NODE_US = 60.0
ASSUMED_ITERATION_US = 40.0
ASSUMED_SOLVER_CALL_US = 100.0
#: 1e6 / 135,000: the original C++ objective compiled natively on this kind of machine.
ASSUMED_SOLVER_MOVE_US = 7.4


@dataclass(frozen=True)
class PrimitiveCounts:
    """Mean counts per move of the primitives the device clock charges."""

    agent: str
    moves: int
    iterations: float
    nodes: float
    plies: float
    solver_calls: float
    solver_moves: float
    equivalent_moves: float
    equivalent_candidates: float

    def device_us(self, p: DeviceProfile) -> float:
        return (
            self.iterations * p.iteration
            + self.nodes * p.node
            + self.plies * p.random_ply
            + self.solver_calls * p.solver_call
            + self.solver_moves * p.solver_move
        )


def measure_primitives(agent: str, opponent: str, iterations: int, games: int, seed: int = 2024) -> PrimitiveCounts:
    """Play ``games`` seeded games (both sides) at a fixed iteration count; count per move.

    Games that end at the ply cap are left out (their repeated moves would skew the means).

    Raises:
        ConfigError: every game ended at the ply cap, so there is no move to count.
    """
    from boopexp.match import GameTask, play_game

    budget = Budget(mode="iterations", iterations=iterations)
    a, b = resolve_agent(agent), resolve_agent(opponent)
    tel = []
    for g in range(games):
        p1, p2 = (a, b) if g % 2 == 0 else (b, a)
        task = GameTask("calibration", "c" * 16, f"{p1.name} vs {p2.name}", g, p1, p2, budget, "code-0.6.2", seed + g)
        rec = play_game(task)
        if rec["winner"] is None:
            continue  # a position cycle (docs/agents.md); its repeated moves would skew the means
        tel += [t for t in rec["telemetry"] if t["agent"] == a.name]
    if not tel:
        raise ConfigError(
            f"no usable calibration game: all {games} game(s) of {agent} vs {opponent} ended at the ply cap"
            " without a winner (a position cycle), so there is nothing to average; use more games, e.g. --games 8"
        )
    mean = lambda k: float(np.mean([t[k] for t in tel]))  # noqa: E731
    return PrimitiveCounts(
        agent=agent,
        moves=len(tel),
        iterations=mean("iterations"),
        nodes=mean("nodes_created"),
        plies=mean("playout_plies"),
        solver_calls=mean("solver_calls"),
        solver_moves=mean("solver_moves"),
        equivalent_moves=mean("equivalent_moves"),
        equivalent_candidates=mean("equivalent_candidates"),
    )


def fit_device_profile(vanilla: PrimitiveCounts, name: str = "android-2023") -> DeviceProfile:
    """The profile whose random-ply cost gives vanilla 80 iterations per device-second.

    ``vanilla`` must be measured at 80 iterations per move. Node, iteration and solver costs are
    the documented assumptions; the playout ply (random move + TREE move + heuristic reward) is
    the one unknown the paper's 80 playouts/s pins down.
    """
    fixed = vanilla.iterations * ASSUMED_ITERATION_US + vanilla.nodes * ASSUMED_NODE_US
    ply = (1e6 * vanilla.iterations / PAPER_VANILLA_ITERATIONS_PER_S - fixed) / vanilla.plies
    return DeviceProfile(
        name=name,
        node=ASSUMED_NODE_US,
        random_ply=round(ply, 1),
        solver_call=ASSUMED_SOLVER_CALL_US,
        solver_move=ASSUMED_SOLVER_MOVE_US,
        iteration=ASSUMED_ITERATION_US,
        description="Android virtual device of the paper (2023-24): ~80 vanilla iterations/s",
    )


def predicted_rate(counts: PrimitiveCounts, profile: DeviceProfile) -> dict:
    """Iterations and equivalent moves per device-second predicted from per-move counts."""
    per_move_s = counts.device_us(profile) / 1e6
    return {
        "iterations_per_device_s": counts.iterations / per_move_s,
        "equivalent_moves_per_device_s": counts.equivalent_moves / per_move_s,
        "equivalent_candidates_per_device_s": counts.equivalent_candidates / per_move_s,
        "solver_calls_per_device_s": counts.solver_calls / per_move_s,
    }


# ------------------------------------------------------------------------------------------
# host rates and the cpu-mode throttle

_THROTTLE_CACHE: dict[str, float] = {}


def host_iteration_rate(agent: str = "vanilla", seconds: float = 2.0, seed: int = 7,
                        positions: np.ndarray | None = None) -> float:
    """MCTS iterations per host CPU second of ``agent``: whole searches (root set-up
    included) of 40 iterations each, cycling over ``positions`` (default: 24 seeded sample
    positions) for about ``seconds`` of CPU time."""
    from boopexp import mcts
    from boopexp.bench import sample_positions
    from boopexp.match import device_costs
    from boopexp.rng import new_rng_state

    spec = resolve_agent(agent)
    if positions is None:
        positions = sample_positions(24, seed=seed)
    budget = Budget(mode="iterations", iterations=40)
    costs = device_costs(budget.profile)
    work = mcts.new_work()
    rng = new_rng_state(seed)
    mcts.search(positions[0], spec.mcts, budget, costs, rng, work)  # compile / warm up
    iterations = 0
    start = time.process_time()
    i = 0
    while time.process_time() - start < seconds or i < 3:
        _, tel = mcts.search(positions[i % len(positions)], spec.mcts, budget, costs, rng, work)
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
