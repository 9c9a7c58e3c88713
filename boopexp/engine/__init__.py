"""The compiled engine (numba ``njit(cache=True)`` kernels): the lowest layer.

``state`` (the state value and its field names), ``luts`` (tables built at import), ``rng``
(xoshiro256**), ``jit`` (the decorator of the kernels only other kernels call), ``bits``,
``costs`` and ``params`` (the layouts of the device-cost vector and of the MCTS parameter
vector), ``rules``, ``buffers``, ``heuristic`` (H), ``objective`` (the CO solver), ``lookahead``
(the two-stage constraint), ``mcts`` (MCTS_GHOST with the S/E/P injections) and ``alphabeta``
(negamax with iterative deepening, ordered by f, H at the leaves).

The game as a layer (docs/games.md): ``outcome`` (a kernel's outcome codes, the draw), ``boop_game``
(boop.'s kernels under the game contract's names), ``defaults`` (the contract's optional kernels,
generic) and ``binding`` (``bind``: ``mcts``, ``alphabeta`` and ``defaults`` are templates,
compiled once per game and cached apart; imported as modules, they play boop.). Kernels import nothing above
this folder (``boopexp.errors`` aside); importing this package compiles nothing: modules are
imported by name.

The kernels of ``rules``, ``heuristic``, ``objective``, ``mcts`` and ``rng`` are compiled without
reference counting (``njit(cache=True, _nrt=False)``, ``inner(_nrt=False)``; docs/engine.md §9):
they borrow their callers' arrays and neither allocate nor return one (the few that allocate
keep the counting; ``test_mcts.py::test_kernels_without_reference_counts_return_no_array`` holds
the rule).
"""
