"""The layout of a device cost vector (``C_NODE`` … ``C_LOOKAHEAD_RATIO``): what the kernels charge.

The vector itself is built from a device profile by :func:`boopexp.agents.budget.device_costs`
(the profiles and their values are configuration, above the engine); the kernels only need to
know where each cost sits, so the indices live here, below every kernel that charges the clock.
"""

#: indices of a device cost vector, the order the kernels read it in (the last is a ratio, not
#: device-µs): a tree node, a playout ply, a solver call, a move the solver scores, an iteration,
#: and r, the two-stage check's cost per examined move relative to solver_move (docs/budget.md)
C_NODE, C_RANDOM_PLY, C_SOLVER_CALL, C_SOLVER_MOVE, C_ITERATION, C_LOOKAHEAD_RATIO = 0, 1, 2, 3, 4, 5
