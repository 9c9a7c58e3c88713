"""Pentago-Swap's MCTS defaults (``DEFAULT_PARAMS``: k, m, d, uct_c) and device costs
(``DEVICE_COSTS``: device-µs of each primitive), first values reasoned from boop.'s.

Both are the game contract's Python values (docs/games.md). The costs have the keys of
``boopexp.agents.budget.COST_FIELDS`` and are in the device-µs of boop.'s ``android-2023``
profile: the game's own work (a random ply, a solver move) is boop.'s cost scaled by how much
cheaper the Pentago-Swap kernel is on the host, the game-independent overheads are boop.'s
(docs/games.md, "Pentago-Swap"); a calibration on a device replaces them.
"""

from __future__ import annotations

#: k: the plies of a P agent's playout the solver plays (and the playout depth): a game is at most
#: 36 plies and a random one 27 (spec §8), so 10 reaches the end of most middle games;
#: m: the S agents' pre-selected moves, 10 of up to 216 (many of them duplicates early on: a swap
#: of two empty quadrants is a placement alone, QUIRK-PS4); d: boop.'s playout discount; uct_c:
#: boop.'s exploration constant (rewards share the [-1, 1] scale of H). Guesses, to be tuned
#: (``boopexp tune``).
DEFAULT_PARAMS: dict[str, int | float] = {"k": 10, "m": 10, "d": 0.9, "uct_c": 0.3}

#: device-µs per primitive, from boop.'s android-2023 profile (node 60, random_ply 381.2,
#: solver_call 100, solver_move 7.4, iteration 40). The game-independent overheads are kept (a
#: tree node's allocation, an iteration's descent and backpropagation, a solver call's crossing);
#: the two that are the game's own work are scaled by the host cost of the Pentago-Swap kernels
#: over boop.'s, both timed in the same process by one numba loop of seeded random games through
#: each game's contract kernels (2026-11-29, two runs): a random ply with its H (random_move,
#: apply_move, heuristic) 0.65 / 0.79 µs against 2.28 / 2.37 µs (x 0.31: 381.2 -> 118), and one
#: f 0.23 / 0.37 µs against 1.28 / 1.11 µs (x 0.25: 7.4 -> 2) (docs/pentago-swap.md). First
#: values; a calibration replaces them.
DEVICE_COSTS: dict[str, float] = {"node": 60.0, "random_ply": 118.0, "solver_call": 100.0, "solver_move": 2.0,
                                  "iteration": 40.0}
