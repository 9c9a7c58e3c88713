"""The device-profile fit and the two-stage check's cost ratio r (``boopexp calibrate``).

Calibration of the budgets: the device profile's costs (the host's rates: :mod:`boopexp.play.throttle`).

The procedure and its numbers are written up in docs/budget.md. Everything here is measured on
fixed, seeded games, so the primitive counts (and therefore the fitted device profile) are the
same on every machine; only the host rates and the throttle depend on the host.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from boopexp.agents.budget import Budget, DeviceProfile
from boopexp.agents.specs import resolve_agent
from boopexp.engine.buffers import new_work
from boopexp.engine.lookahead import N_LEGAL, N_REPLIES, lookahead_mask
from boopexp.engine.objective import solve
from boopexp.engine.state import N_MOVE_CODES
from boopexp.errors import ConfigError
from boopexp.game.positions import sample_positions
from boopexp.play.match import play_game
from boopexp.play.settings import GameSettings
from boopexp.play.throttle import PAPER_VANILLA_ITERATIONS_PER_S

#: The paper's figures the device profile is calibrated against (EXPERIMENTS.md §2, §5–6);
#: its vanilla rate is :data:`boopexp.play.throttle.PAPER_VANILLA_ITERATIONS_PER_S`.
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
    settings = GameSettings("calibration", seed, Budget(mode="iterations", iterations=iterations))
    a, b = resolve_agent(agent, settings.preset), resolve_agent(opponent, settings.preset)
    tel: list[Mapping[str, Any]] = []
    for g in range(games):
        p1, p2 = (a, b) if g % 2 == 0 else (b, a)
        # seeded by hand (seed + g), as the published calibration's games were (docs/budget.md)
        rec = play_game(settings.task(p1, p2, g, seed=seed + g))
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


# ---------------------------------------------------------------------------------------------
# The two-stage check's cost ratio r (docs/budget.md, "The two-stage check")


@njit(cache=True)
def _solver_pass(states, reps, mask, rng, work):
    """One solver call (``best_move``) on every position, ``reps`` times; the moves scored."""
    n = 0
    for _ in range(reps):
        for i in range(states.shape[0]):
            _, _, n_legal, _ = solve(states[i], mask, rng, work.ctx, work.groups, work.scores, work.ties,
                                     work.tie_moves)
            n += n_legal
    return n


@njit(cache=True)
def _check_pass(states, reps, mask, rng, work):
    """Run the two-stage check on every position ``reps`` times; moves examined + replies tested."""
    n = 0
    for _ in range(reps):
        for i in range(states.shape[0]):
            lookahead_mask(states[i], mask, work.la_mask, rng, work.la_after, work.la_reply, work.la_rng,
                           work.groups, work.scores, work.ties, work.la_unsafe, work.la_counts)
            n += work.la_counts[N_LEGAL] + work.la_counts[N_REPLIES]
    return n


@dataclass(frozen=True)
class LookaheadRatio:
    """Host costs of the solver's and the check's unit of work over the bench positions.

    Attributes:
        evaluation_ns: one objective evaluation inside a solver call (``objective.solve``).
        step_ns: one step of the two-stage check (a move examined or a reply tested).
        steps_per_check: mean moves examined + replies tested per check.
        evaluations_per_call: mean legal moves scored per solver call.
    """

    evaluation_ns: float
    step_ns: float
    steps_per_check: float
    evaluations_per_call: float

    @property
    def ratio(self) -> float:
        """r: one step of the check in objective evaluations."""
        return self.step_ns / self.evaluation_ns


def measure_lookahead_ratio(rounds: int = 5, reps: int = 5) -> LookaheadRatio:
    """r on this host: both compiled loops over the 200 bench positions, interleaved ``rounds``
    times, the fastest round of each kept (the least disturbed by other processes)."""
    states = sample_positions()
    work = new_work()
    mask = np.zeros(N_MOVE_CODES, dtype=np.bool_)
    rng = np.array([1, 2, 3, 4], dtype=np.uint64)
    _solver_pass(states[:2], 1, mask, rng, work)  # compile (or load) outside the timing
    _check_pass(states[:2], 1, mask, rng, work)
    best_eval = best_step = np.inf
    evals = steps = 0
    for _ in range(rounds):
        t0 = time.perf_counter()
        evals = _solver_pass(states, reps, mask, rng, work)
        t1 = time.perf_counter()
        steps = _check_pass(states, reps, mask, rng, work)
        t2 = time.perf_counter()
        best_eval = min(best_eval, (t1 - t0) / evals)
        best_step = min(best_step, (t2 - t1) / steps)
    calls = reps * states.shape[0]
    return LookaheadRatio(best_eval * 1e9, best_step * 1e9, steps / calls, evals / calls)
