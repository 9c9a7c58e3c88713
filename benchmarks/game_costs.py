"""A game's device costs from boop.'s: the host cost of its primitives over boop.'s, each scaled
to boop.'s device cost (docs/games.md, "Connect Four": "Defaults and device costs").

    python benchmarks/game_costs.py [--game connect-four] [--rounds 5] [--seconds 1] [--json]

The device profile charges a game's own work in two primitives: ``random_ply`` (a playout's
random move, the move played and the ply's H) and ``solver_move`` (one candidate move a solver
call scores). boop.'s costs were fitted on the paper's device (docs/budget.md, "Calibration");
another game ran on no device, so its costs are boop.'s times how much more (or less) its kernels
do on one host: a random ply, 1 / ``random_plies_per_s``; a solver move, 1 / (``solver_calls_per_s``
x the legal moves a call scores), each from ``boopexp bench``'s loops over each game's 200 sample
positions. The game-independent overheads (``node``, ``iteration``, ``solver_call``: the JVM
tree, the JNI crossing) stay boop.'s. Both games are measured in turn, ``--rounds`` times, and
each cost is the median of the rounds' ratios, so that the machine's drift falls on both alike.
One f alone (1 / ``objective_per_s``) is reported beside the solver's move, as a check.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

#: the bench metrics the costs are read from
METRICS = ["random_plies_per_s", "solver_calls_per_s", "objective_per_s"]


def host_costs(report: dict, moves_per_call: float) -> dict[str, float]:
    """Host µs of a random ply, of a solver's candidate move and of one f, from a bench report."""
    return {"random_ply": 1e6 / report["random_plies_per_s"],
            "solver_move": 1e6 / (report["solver_calls_per_s"] * moves_per_call),
            "objective": 1e6 / report["objective_per_s"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="connect-four", help="the game (a built-in name or your game's module)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds, each game measured once a round (default 5)")
    ap.add_argument("--seconds", type=float, default=1.0, help="duration of each timed run (default 1.0)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    from boopexp.agents.budget import DEVICE_PROFILES
    from boopexp.games import registry
    from boopexp.interfaces.bench import BenchContext, GameBenchContext, run_bench

    game = registry.get(args.game)
    contexts: dict[str, BenchContext | GameBenchContext] = {"boop": BenchContext(), game.name: GameBenchContext(game)}
    per_call = {name: ctx.pidx.shape[0] / ctx.states.shape[0] for name, ctx in contexts.items()}
    host: dict[str, list[dict[str, float]]] = {name: [] for name in contexts}
    for r in range(args.rounds):
        for name, ctx in contexts.items():
            report = run_bench(args.seconds, 1, METRICS, ctx, game=registry.get(name))
            host[name].append(host_costs(report, per_call[name]))
        print(f"round {r + 1}/{args.rounds}: " + "; ".join(
            f"{name} " + ", ".join(f"{k} {v * 1000:.1f} ns" for k, v in host[name][-1].items()) for name in host),
            file=sys.stderr)
    device = DEVICE_PROFILES["android-2023"]
    ratios = {key: statistics.median(g[key] / b[key] for g, b in zip(host[game.name], host["boop"]))
              for key in ("random_ply", "solver_move", "objective")}
    medians = {name: {key: statistics.median(c[key] for c in costs) for key in ("random_ply", "solver_move",
                                                                               "objective")}
               for name, costs in host.items()}
    costs = {"node": device.node, "random_ply": round(device.random_ply * ratios["random_ply"], 1),
             "solver_call": device.solver_call, "solver_move": round(device.solver_move * ratios["solver_move"], 2),
             "iteration": device.iteration}
    report = {"game": game.name, "rounds": args.rounds, "moves_per_call": per_call, "host_us": medians,
              "ratios": ratios, "device_costs": costs}
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{game.name} over boop., host cost of each primitive (medians of {args.rounds} interleaved rounds, "
          "one core):")
    for key in ("random_ply", "solver_move", "objective"):
        print(f"  {key:<12} {medians[game.name][key] * 1000:>8.1f} ns against {medians['boop'][key] * 1000:>8.1f} ns:"
              f" x {ratios[key]:.3f}")
    print(f"  legal moves a solver call scores: {per_call[game.name]:.2f} against {per_call['boop']:.2f}")
    print(f"DEVICE_COSTS (device-us; android-2023's node, solver_call and iteration): {costs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
