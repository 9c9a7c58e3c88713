"""Connect Four's MCTS defaults (``DEFAULT_PARAMS``: k, m, d, uct_c) and device costs
(``DEVICE_COSTS``: device-µs of each primitive), first values reasoned from boop.'s.

Both are the game contract's Python values (docs/games.md). The costs have the keys of
``boopexp.agents.budget.COST_FIELDS`` and are in the device-µs of boop.'s ``android-2023``
profile: each is boop.'s cost scaled by how much cheaper the Connect Four primitive is on the
host (docs/games.md, "Connect Four"); a calibration on a device replaces them.
"""

from __future__ import annotations

#: k: the plies of a P agent's playout the solver plays (and the playout depth): a Connect Four
#: game is at most 42 plies and a random one about 21, so 10 reaches most of a middle game's end;
#: m: the S agents' pre-selected moves, 3 of at most 7 (boop.'s 5 of up to 72 keeps fewer);
#: d: boop.'s playout discount; uct_c: boop.'s exploration constant (rewards share the [-1, 1]
#: scale of H). First values, to be tuned (``boopexp tune``).
DEFAULT_PARAMS: dict[str, int | float] = {"k": 10, "m": 3, "d": 0.9, "uct_c": 0.3}

#: device-µs per primitive (boop.'s android-2023 profile: node 60, random_ply 381.2, solver_call
#: 100, solver_move 7.4, iteration 40). A node is a 4-word copy and one drop (boop.: a 44-cell copy,
#: the push, the victory tests, the promotion): 10. A random ply is one drop, the win test and H
#: (boop.'s includes its H, the bulk of its 381 µs; Connect Four's H is a 69-line scan): 40. A solver
#: call enumerates at most 7 columns: 20; a solver move is one f on two bitboards: 2 (boop.'s 7.4
#: includes a push). The iteration's fixed cost (descent, backpropagation) does not depend on
#: the game: 40.
DEVICE_COSTS: dict[str, float] = {"node": 10.0, "random_ply": 40.0, "solver_call": 20.0, "solver_move": 2.0,
                                  "iteration": 40.0}
