"""The compiled engine (numba ``njit(cache=True)`` kernels): the lowest layer.

``state`` (the state value and its field names), ``luts`` (tables built at import), ``rng``
(xoshiro256**), ``bits``, ``costs`` and ``params`` (the layouts of the device-cost vector and of
the MCTS parameter vector), ``rules``, ``buffers``, ``heuristic`` (H), ``objective`` (the CO
solver), ``lookahead`` (the two-stage constraint) and ``mcts`` (MCTS_GHOST with the S/E/P
injections). Kernels import nothing above this folder (``boopexp.errors`` aside); importing this
package compiles nothing: modules are imported by name.
"""
