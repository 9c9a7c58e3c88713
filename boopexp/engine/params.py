"""The layout of the MCTS parameter vector (``P_PRESELECT_M`` … ``P_CO_LOOKAHEAD``,
``PARAM_NAMES``): what the kernels read; the parameters themselves are declared in
``agents/specs.py``.

A parameter is declared once, in the table :class:`boopexp.agents.specs.MCTSConfig` (its name,
type, default, allowed range, help and tuning range; :data:`boopexp.agents.specs.MCTS_PARAMS`).
That table is configuration, above the engine, and the engine may not import it; the kernels
only need to know where each parameter sits in the float vector they read, as plain ints numba
folds in at compile time. So the layout lives here, below every kernel, as the ``P_*`` constants
and :data:`PARAM_NAMES` (the table's names in vector order): the same split as the device cost
vector (:mod:`boopexp.engine.costs` here, the profiles' values in :mod:`boopexp.agents.budget`).

Why indices here rather than indices generated from the table: the kernels must compile without
importing anything above the engine, and an explicit ``P_UCT_C = 7`` is what a reader of a kernel
looks up. The agents' table is checked against this layout (same names, same order:
``tests/test_agents.py::test_the_table_and_the_kernel_vector_agree``), and
:func:`boopexp.engine.mcts.params_vector` fills the vector by name, so the two cannot disagree
silently.
"""

#: Indices of the parameter vector the kernels read (booleans as 0.0 / 1.0).
P_PRESELECT_M = 0  # S: root pre-selection of the m best moves (0: the early border mask)
P_CO_EXPANSION = 1  # E: the solver proposes the expanded move
P_CO_PLAYOUT_PLIES = 2  # P: the first plies of a playout are solver moves
P_PLAYOUT_DEPTH = 3  # playout plies at most (0: until a win)
P_EARLY_MASK_PLIES = 4  # horizon of the m = 0 border mask
P_DISCOUNT = 5  # playout discount factor
P_DISCOUNT_OFFSET = 6  # exponent offset of the discount (QUIRK-A10)
P_UCT_C = 7  # UCT exploration constant
P_FIX_A9 = 8  # 1.0: the terminal bonus from the playout's perspective (QUIRK-A9 fixed)
P_CO_LOOKAHEAD = 9  # 1.0: every solver call first masks the moves that allow a winning reply
P_SOLVER = 10  # 1.0: MCTS-Solver: proven wins and losses are backed up (Winands et al. 2008)
P_PRIOR = 11  # the selection prior's source: 0 off (UCT), 1 H, 2 f (PUCT)
P_PRIOR_C = 12  # the PUCT weight of the prior
P_PRIOR_TEMP = 13  # the softmax temperature of the prior
P_UCT_RULE = 14  # the exploration term: 0 UCB1 c*sqrt(ln N / n) (the paper), 1 c*sqrt(N / (n + 1))
P_PLAYOUT_VALUE = 15  # a playout's value: 0 the discounted mean of H (the paper), 1 the game's result
P_REWARD_WIN = 16  # playout_value 1: the searching agent's value of a win
P_REWARD_LOSS = 17  # ... of a loss
P_REWARD_DRAW = 18  # ... of a draw
P_FINAL_RULE = 19  # the move played: 0 the best mean (the paper), 1 the best selection value
P_REUSE_TREE = 20  # 1.0: the subtree of the position reached is kept from the last move's search
P_TEXTBOOK_BACKUP = 21  # 1.0: QUIRK-A6, A7 and A8 corrected (a new node's value whole, one visit)
P_TERMINAL_CHECK = 22  # a playout's end test every ply (1, the paper) or after its even plies only (2)

#: The parameters' names (the fields of ``MCTSConfig``) in vector order: ``P_<NAME>`` is the
#: index of ``name``.
PARAM_NAMES: tuple[str, ...] = (
    "preselect_m",
    "co_expansion",
    "co_playout_plies",
    "playout_depth",
    "early_mask_plies",
    "discount",
    "discount_offset",
    "uct_c",
    "fix_a9",
    "co_lookahead",
    "solver",
    "prior",
    "prior_c",
    "prior_temp",
    "uct_rule",
    "playout_value",
    "reward_win",
    "reward_loss",
    "reward_draw",
    "final_rule",
    "reuse_tree",
    "textbook_backup",
    "terminal_check",
)
N_PARAMS = len(PARAM_NAMES)

#: The values of ``prior`` (``P_PRIOR``): no prior (UCT, the paper), the heuristic H of the child's
#: position from its mover's side, or the CO objective f of the child's move.
PRIOR_OFF, PRIOR_H, PRIOR_F = 0, 1, 2

#: The values of ``uct_rule`` (``P_UCT_RULE``): UCB1's exploration term c * sqrt(ln N / n) (the
#: paper's, AGENTS.md §B.5), or c * sqrt(N / (n + 1)) without the logarithm (the Pentago-Swap
#: report's, spec/games/PENTAGO-SWAP.md §12.1).
UCT_UCB1, UCT_SQRT = 0, 1
#: The values of ``playout_value`` (``P_PLAYOUT_VALUE``): the paper's discounted mean of H over the
#: playout (AGENTS.md §B.8), or the game's result in the rewards ``reward_win``/``_loss``/``_draw``.
VALUE_H, VALUE_RESULT = 0, 1
#: The values of ``final_rule`` (``P_FINAL_RULE``): the root child of best mean value (AGENTS.md
#: §B.10), or of best selection value (the reports': "the highest UCT value").
FINAL_MEAN, FINAL_SELECTION = 0, 1
