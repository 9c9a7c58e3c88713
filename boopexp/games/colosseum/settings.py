"""Colosseum Survival's MCTS defaults (``DEFAULT_PARAMS``: k, m, d, uct_c) and device costs
(``DEVICE_COSTS``: device-µs of each primitive), first estimates reasoned from boop.'s.

Both are the game contract's Python values (docs/games.md). The costs have the keys of
``boopexp.agents.budget.COST_FIELDS`` and are in the device-µs of boop.'s ``android-2023``
profile: the game's own work (a random ply, a solver move) is boop.'s cost scaled by how much
the Colosseum kernel costs on the host against boop.'s; the game-independent overheads are
boop.'s (docs/games.md, "Colosseum Survival"). First estimates: a calibration replaces them.
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
#: game's own work is scaled by the host cost of the Colosseum kernels over boop.'s, each timed in
#: a numba loop of seeded random games (400 starts, M = 6..11) on one shared host (2026-11-29,
#: best of 3): a random ply with its H and end check, 2.0 µs against boop.'s 1.18 µs (x 1.70:
#: 381.2 -> 647), and one f, 0.69 µs against 0.30 µs (x 2.3: 7.4 -> 17). First estimates; a
#: calibration replaces them.
DEVICE_COSTS: dict[str, float] = {"node": 60.0, "random_ply": 647.0, "solver_call": 100.0, "solver_move": 17.0,
                                  "iteration": 40.0}
