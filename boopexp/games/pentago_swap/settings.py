"""Pentago-Swap's MCTS defaults (``DEFAULT_PARAMS``: k, m, d, uct_c) and device costs
(``DEVICE_COSTS``: device-µs of each primitive), calibrated against boop.'s.

Both are the game contract's Python values (docs/games.md). The costs have the keys of
``boopexp.agents.budget.COST_FIELDS`` and are in the device-µs of boop.'s ``android-2023``
profile: the game's own work (a random ply, a solver move) is boop.'s cost scaled by how much
cheaper the Pentago-Swap kernel is on the host, the game-independent overheads are boop.'s
(docs/pentago-swap.md, "Defaults and device costs"); a calibration on a device replaces them.
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
#: the two that are the game's own work are boop.'s times the host cost of the Pentago-Swap
#: primitive over boop.'s, measured as Connect Four's were: ``benchmarks/game_costs.py --game
#: pentago-swap`` (the bench's own loops on each game's 200 sample positions, 5 interleaved rounds,
#: the median of the rounds' ratios; 2026-11-29, one core of a loaded shared host): a random ply
#: with its H 289 ns against 758 ns (x 0.375: 381.2 -> 143.1), a solver call's scored move 134 ns
#: against 120 ns (x 1.34: 7.4 -> 9.9; one f alone x 1.45) (docs/pentago-swap.md). The first
#: values (118 and 2) had timed other loops: a random game's plies, and one f outside a solver call.
DEVICE_COSTS: dict[str, float] = {"node": 60.0, "random_ply": 143.1, "solver_call": 100.0, "solver_move": 9.9,
                                  "iteration": 40.0}
