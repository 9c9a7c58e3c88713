"""A same-game speed anchor: boopexp's vanilla MCTS against OpenSpiel's C++ ``MCTSBot`` on Connect
Four, simulations per second on one core (issue "Games as a layer": goal boopexp >= 2x).

    python benchmarks/openspiel_anchor.py [--simulations 2000] [--positions 12] [--rounds 5] [--json]

The same settings on both sides: one search of ``--simulations`` iterations from each of a seeded
sample of positions (the start and positions after 2 to 20 random plies), UCT with the same
exploration constant (boopexp's vanilla ``uct_c``), one random rollout to the end of the game per
iteration (OpenSpiel: ``RandomRolloutEvaluator(n_rollouts=1)``; boopexp: vanilla's playout, which
also sums the discounted H of every ply, AGENTS.md §B.8: more work per ply than OpenSpiel's), no
solver. Both run in this process, one thread, interleaved position by position and round by
round, so that the machine's drift falls on both alike; the rate of a round is the simulations
of all positions over their seconds, and the report gives each side's median over the rounds and
the ratio boopexp / OpenSpiel. Needs the ``openspiel`` extra.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np


def positions(n: int, seed: int = 2026):
    """``n`` seeded Connect Four positions as (pyspiel state, boopexp state): the start, then
    positions after 2..20 random plies that are not over."""
    import pyspiel

    from boopexp.games import registry

    game = registry.get("connect-four")
    kernels = game.kernels()
    work = kernels.new_work()
    rng = np.random.default_rng(seed)
    out: list[tuple] = []
    spiel_game = pyspiel.load_game("connect_four")
    while len(out) < n:
        plies = 0 if not out else int(rng.integers(2, 21))
        spiel = spiel_game.new_initial_state()
        st = game.initial_state()
        for _ in range(plies):
            if spiel.is_terminal():
                break
            action = int(rng.choice(spiel.legal_actions()))
            spiel.apply_action(action)
            kernels.apply_move(st, action, np.zeros(4, dtype=np.uint64), work)
        if not spiel.is_terminal():
            out.append((spiel, st))
    return spiel_game, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simulations", type=int, default=2000, help="iterations per search (default 2000)")
    ap.add_argument("--positions", type=int, default=12, help="positions per round (default 12)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    import pyspiel

    from boopexp.agents.budget import Budget, device_costs
    from boopexp.agents.specs import resolve_agent
    from boopexp.engine.rng import new_rng_state
    from boopexp.games import registry

    engine = registry.get("connect-four").engine()
    cfg = resolve_agent("vanilla").mcts
    assert cfg is not None  # an MCTS agent
    budget = Budget(mode="iterations", iterations=args.simulations)
    costs = device_costs("android-2023")
    spiel_game, sample = positions(args.positions)
    evaluator = pyspiel.RandomRolloutEvaluator(1, 7)
    bot = pyspiel.MCTSBot(spiel_game, evaluator, float(cfg.uct_c), args.simulations, 1000, False, 7, False)
    engine.search(sample[0][1], cfg, budget, costs, new_rng_state(0))  # compile (or load) before timing
    bot.step(sample[0][0])
    rates: dict[str, list[float]] = {"boopexp": [], "openspiel": []}
    for r in range(args.rounds):
        seconds = {"boopexp": 0.0, "openspiel": 0.0}
        for i, (spiel, st) in enumerate(sample):
            start = time.process_time()
            bot.step(spiel)
            seconds["openspiel"] += time.process_time() - start
            start = time.process_time()
            engine.search(st, cfg, budget, costs, new_rng_state(1000 * r + i))
            seconds["boopexp"] += time.process_time() - start
        for side in rates:
            rates[side].append(args.simulations * len(sample) / seconds[side])
        print(f"round {r + 1}/{args.rounds}: boopexp {rates['boopexp'][-1]:,.0f}/s, "
              f"OpenSpiel {rates['openspiel'][-1]:,.0f}/s", file=sys.stderr)
    medians = {side: statistics.median(values) for side, values in rates.items()}
    report = {"simulations_per_search": args.simulations, "positions": len(sample), "rounds": args.rounds,
              "uct_c": float(cfg.uct_c), "boopexp_per_s": medians["boopexp"], "openspiel_per_s": medians["openspiel"],
              "ratio": medians["boopexp"] / medians["openspiel"]}
    if args.json:
        print(json.dumps(report))
    else:
        print(f"Connect Four, {args.simulations} simulations per search, {len(sample)} positions, medians of "
              f"{args.rounds} rounds (CPU seconds, one core):")
        print(f"  boopexp vanilla MCTS      {medians['boopexp']:>12,.0f} simulations/s")
        print(f"  OpenSpiel C++ MCTSBot     {medians['openspiel']:>12,.0f} simulations/s")
        print(f"  ratio boopexp / OpenSpiel {report['ratio']:>12.2f} (goal >= 2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
