"""The Colosseum report's two speed changes, measured as the report measured them: MCTS iterations
per move in cpu mode for agent A and for A with each change (spec/games/COLOSSEUM.md §12.2).

    python benchmarks/colosseum_speed.py [--seconds 0.1] [--rounds 2] [--positions 50] [--json]

Agent A is vanilla MCTS with the report's options (docs/agents.md, "The reports' agents"):
``playout_value: 1, reward_loss: 0`` (a playout worth 1 if A wins, 0 otherwise), ``final_rule: 1``,
``textbook_backup: true``, unlimited random playouts, ``uct_c: 1.4`` (the report does not give c),
and the original framework's union-find end test (the game option ``separation: union-find``).
The changes: Experiment 1, the end test only once both players have moved (``terminal_check: 2``);
Experiment 3, the bidirectional search between the players (``separation: bidirectional``); both
(agent B); and, for reference, our default bitboard flood.

The positions are the first ``--positions`` moves of seeded games of A against itself (100
iterations a move) on boards drawn from the report's autoplay range, 6..11 (QUIRK-CS1), each game's
board from its own seed. Every variant searches every position from the same generator state
with a cpu budget of ``--seconds`` host CPU seconds (``budget: {mode: cpu, throttle: 1}``), the
variants interleaved position by position and round by round, so that the machine's other load
falls on all of them alike. Prints the mean iterations per move of each variant and its change
against A, as the report's "+38.6 %" and "+190.6 %" (mean simulations per turn over 50 turns).
Each search starts a new tree (A's tree reuse changes the tree kept, not the iteration rate).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np

from boopexp.agents.budget import Budget, device_costs
from boopexp.agents.specs import resolve_agent
from boopexp.engine.rng import new_rng_state
from boopexp.games import registry

#: agent A's options (the report's baseline; docs/agents.md "The reports' agents")
AGENT_A = {"playout_value": 1, "reward_win": 1.0, "reward_loss": 0.0, "reward_draw": 0.0, "final_rule": 1,
           "textbook_backup": True, "uct_c": 1.4, "playout_depth": 0, "co_playout_plies": 0}
#: the variants: name -> (separation test, terminal_check)
VARIANTS = {
    "A (union-find, every ply)": ("union-find", 1),
    "A + E1 (test after both moved)": ("union-find", 2),
    "A + E3 (bidirectional)": ("bidirectional", 1),
    "B = A + E1 + E3": ("bidirectional", 2),
    "bitboard (ours), every ply": ("bitboard", 1),
    "bitboard (ours) + E1": ("bitboard", 2),
}
BASE = next(iter(VARIANTS))


def positions(count: int) -> list[np.ndarray]:
    """The first ``count`` positions to move of seeded games of A against A (100 iterations a
    move), boards of 6..11 drawn from each game's seed."""
    game = registry.get("colosseum")
    engine = game.engine()
    cfg = resolve_agent("vanilla", overrides=AGENT_A).mcts
    budget = Budget("iterations", iterations=100)
    costs = device_costs("android-2023")
    out: list[np.ndarray] = []
    seed = 0
    while len(out) < count:
        st = game.initial_state(seed, (("size_range", (6, 11)),))
        rng = new_rng_state(seed)
        work = engine.new_work()
        outcome = 0
        while outcome == 0 and len(out) < count:
            out.append(st.copy())
            code, _ = engine.search(st, cfg, budget, costs, rng, work)
            outcome, _ = engine.apply_move(st, code, rng, work)
        seed += 1
    return out


def measure(seconds: float, rounds: int, count: int) -> dict[str, float]:
    """Mean MCTS iterations per move of each variant over ``count`` positions and ``rounds`` rounds."""
    game = registry.get("colosseum")
    engine = game.engine()
    costs = device_costs("android-2023")
    budget = Budget("cpu", seconds=seconds, throttle=1.0)
    cfgs = {name: resolve_agent("vanilla", overrides={**AGENT_A, "terminal_check": check}).mcts
            for name, (_, check) in VARIANTS.items()}
    starts = positions(count)
    for name, (separation, _) in VARIANTS.items():  # compile (and load) every variant's kernels first
        st = game.values.with_options(starts[0].copy(), separation=separation)
        engine.search(st, cfgs[name], Budget("iterations", iterations=5), costs,
                      new_rng_state(0))
    iterations: dict[str, list[int]] = {name: [] for name in VARIANTS}
    names = list(VARIANTS)
    for r in range(rounds):
        for i, start in enumerate(starts):
            shift = (i + r) % len(names)  # each variant in every place of the order alike
            for name in names[shift:] + names[:shift]:
                st = game.values.with_options(start.copy(), separation=VARIANTS[name][0])
                _, tel = engine.search(st, cfgs[name], budget, costs, new_rng_state(1000 + i))
                iterations[name].append(int(tel["iterations"]))
        print(f"round {r + 1}/{rounds} done", file=sys.stderr)
    return {name: statistics.fmean(values) for name, values in iterations.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=0.1, help="host CPU seconds a move (default 0.1)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds over the positions (default 2)")
    ap.add_argument("--positions", type=int, default=50, help="positions: the first moves of games (default 50)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    cpu0 = time.process_time()
    means = measure(args.seconds, args.rounds, args.positions)
    base = means[BASE]
    table = {name: {"iterations_per_move": mean, "change_vs_A": mean / base - 1.0} for name, mean in means.items()}
    if args.json:
        print(json.dumps(table, indent=1))
        return 0
    print(f"mean MCTS iterations per move, {args.positions} positions x {args.rounds} rounds, cpu mode "
          f"{args.seconds} s a move (throttle 1); {time.process_time() - cpu0:.0f} s of CPU in all")
    print("| variant | iterations / move | vs A |")
    print("|---|---|---|")
    for name, row in table.items():
        print(f"| {name} | {row['iterations_per_move']:.0f} | {100 * row['change_vs_A']:+.1f} % |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
