"""Connect Four's MCTS defaults (``DEFAULT_PARAMS``: k, m, d, uct_c) and device costs
(``DEVICE_COSTS``: device-µs of each primitive), first values reasoned from boop.'s.

Both are the game contract's Python values (docs/games.md). The costs have the keys of
``boopexp.agents.budget.COST_FIELDS`` and are in the device-µs of boop.'s ``android-2023``
profile: the game's own work (a random ply, a solver move) is boop.'s cost scaled by how much
cheaper the Connect Four kernel is on the host, the game-independent overheads are boop.'s
(docs/games.md, "Connect Four"); a calibration on a device replaces them.
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
#: into the solver. The two that are the game's own work are scaled by the host cost of the
#: Connect Four kernel over boop.'s, each timed in a numba loop of seeded random games on one
#: host (2026-11-28): a random ply with its H, 0.115 µs against 1.18 µs (x 0.097: 381.2 -> 37),
#: and one f, 0.12 µs against 0.30 µs (x 0.4: 7.4 -> 3). First values; a calibration replaces them.
DEVICE_COSTS: dict[str, float] = {"node": 60.0, "random_ply": 37.0, "solver_call": 100.0, "solver_move": 3.0,
                                  "iteration": 40.0}
