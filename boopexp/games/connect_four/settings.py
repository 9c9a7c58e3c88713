"""Connect Four's MCTS defaults (``DEFAULT_PARAMS``: k, m, d, uct_c) and device costs
(``DEVICE_COSTS``: device-µs of each primitive), first values reasoned from boop.'s.

Both are the game contract's Python values (docs/games.md). The costs have the keys of
``boopexp.agents.budget.COST_FIELDS`` and are in the device-µs of boop.'s ``android-2023``
profile: the game's own work (a random ply, a solver move) is boop.'s cost scaled by the host
cost of the Connect Four kernels over boop.'s (``benchmarks/game_costs.py``), the
game-independent overheads are boop.'s (docs/games.md, "Connect Four").
"""

from __future__ import annotations

#: k: the plies of a P agent's playout the solver plays (and the playout depth): a Connect Four
#: game is at most 42 plies and a random one about 21, so 10 reaches most of a middle game's end;
#: m: the S agents' pre-selected moves, 3 of at most 7 (boop.'s 5 of up to 72 keeps fewer);
#: d: boop.'s playout discount; uct_c: boop.'s exploration constant (rewards share the [-1, 1]
#: scale of H). First values, to be tuned (``boopexp tune``).
DEFAULT_PARAMS: dict[str, int | float] = {"k": 10, "m": 3, "d": 0.9, "uct_c": 0.3}

#: device-µs per primitive, from boop.'s android-2023 profile (node 60, random_ply 381.2,
#: solver_call 100, solver_move 7.4, iteration 40). The game-independent overheads are kept: a
#: tree node's allocation, an iteration's descent and backpropagation, a solver call's crossing
#: into the solver. The two that are the game's own work are boop.'s scaled by the host cost of
#: Connect Four's kernels over boop.'s, measured by ``benchmarks/game_costs.py`` (the bench's
#: loops on each game's 200 sample positions, 5 interleaved rounds, medians of the ratios;
#: 2026-11-29, one core of the shared 2-core machine): a random ply with its H, 74.2 ns against
#: 836.7 ns (x 0.089: 381.2 -> 33.8), and a candidate move of a solver call, 117.9 ns against
#: 114.6 ns (x 1.032: 7.4 -> 7.6). docs/games.md, "Defaults and device costs".
DEVICE_COSTS: dict[str, float] = {"node": 60.0, "random_ply": 33.8, "solver_call": 100.0, "solver_move": 7.6,
                                  "iteration": 40.0}
