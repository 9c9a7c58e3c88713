"""Colosseum Survival's MCTS defaults (``DEFAULT_PARAMS``: k, m, d, uct_c) and device costs
(``DEVICE_COSTS``: device-µs of each primitive), calibrated against boop.'s.

Both are the game contract's Python values (docs/games.md). The costs have the keys of
``boopexp.agents.budget.COST_FIELDS`` and are in the device-µs of boop.'s ``android-2023``
profile: the game's own work (a random ply, a solver move) is boop.'s cost scaled by how much
the Colosseum kernel costs on the host against boop.'s; the game-independent overheads are
boop.'s (docs/games.md, "Colosseum Survival"); a calibration on a device replaces them.
"""

from __future__ import annotations

#: k: the plies of a P agent's playout the solver plays (and the playout depth): a uniformly
#: random game lasts 8 (M = 5) to 52 (M = 12) plies, 28 on average (spec §9), so 10 reaches the
#: end of most small-board games; m: the S agents' pre-selected moves, 5 of 25-324 (boop.'s 5 of
#: up to 72); d: boop.'s playout discount; uct_c: boop.'s exploration constant (rewards share H's
#: [-1, 1] scale). First values, to be tuned (``boopexp tune``).
DEFAULT_PARAMS: dict[str, int | float] = {"k": 10, "m": 5, "d": 0.9, "uct_c": 0.3}

#: device-µs per primitive, from boop.'s android-2023 profile (node 60, random_ply 381.2,
#: solver_call 100, solver_move 7.4, iteration 40). The game-independent overheads are kept. The
#: game's own work is boop.'s times the host cost of the Colosseum primitive over boop.'s, measured
#: as Connect Four's were: ``benchmarks/game_costs.py --game colosseum`` (the bench's own loops on
#: each game's 200 sample positions, boards of the game's default 5..9, 5 interleaved rounds, the
#: median of the rounds' ratios; 2026-11-29, one core of a loaded shared host): a random ply with
#: its H and end test 790 ns against 722 ns (x 1.094: 381.2 -> 417.0), a solver call's scored move
#: 271 ns against 94 ns (x 2.86: 7.4 -> 21.1; one f alone x 1.93) (docs/games.md). The first
#: estimates (647 and 17) had timed other loops: whole random games on boards of 6..11, one f alone.
DEVICE_COSTS: dict[str, float] = {"node": 60.0, "random_ply": 417.0, "solver_call": 100.0, "solver_move": 21.1,
                                  "iteration": 40.0}
