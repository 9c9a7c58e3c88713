"""MCTS_GHOST: the tree (documented ``Tree`` fields, ``ROOT``, ``NO_PARENT``, ``NO_NODE``), the
search driver and ``params_vector`` (an ``MCTSConfig`` as the vector the kernels read;
``search_plan``: that vector and the switches, once per config).

MCTS_GHOST with the three CO injections (AGENTS.md §B), compiled.

The tree is a handful of parallel arrays allocated up front (node states, parents, moves,
scores, visits, child links), like mctx. Every QUIRK-A of the reference is kept and labelled;
:class:`boopexp.agents.specs.MCTSConfig` documents the parameters.

The compute budget is charged inside the kernels on an emulated device clock (``acc_us``, in
device-microseconds) with the costs of a :class:`boopexp.agents.budget.DeviceProfile`; the Python
driver (:func:`search`) decides when to stop from that clock, from an iteration count, or from
the host's CPU / wall clock.

Most kernels count no references (``_nrt=False``: :mod:`boopexp.engine`, docs/engine.md §9).
"""

from __future__ import annotations

import functools
import math
import time
from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit

from boopexp.engine.binding import game_of
from boopexp.engine.costs import C_ITERATION, C_LOOKAHEAD_RATIO, C_NODE, C_RANDOM_PLY, C_SOLVER_CALL, C_SOLVER_MOVE
from boopexp.engine.jit import inner
from boopexp.engine.lookahead import N_LEGAL, N_REPLIES
from boopexp.engine.objective import keep_best
from boopexp.engine.outcome import DRAW
from boopexp.engine.params import (  # the vector's layout (the parameters' table: agents.specs.MCTSConfig)
    N_PARAMS,
    P_CO_EXPANSION,
    P_CO_LOOKAHEAD,
    P_CO_PLAYOUT_PLIES,
    P_DISCOUNT,
    P_DISCOUNT_OFFSET,
    P_EARLY_MASK_PLIES,
    P_FINAL_RULE,
    P_FIX_A9,
    P_PLAYOUT_DEPTH,
    P_PLAYOUT_VALUE,
    P_PRESELECT_M,
    P_PRIOR,
    P_PRIOR_C,
    P_PRIOR_TEMP,
    P_REWARD_DRAW,
    P_REWARD_LOSS,
    P_REWARD_WIN,
    P_SOLVER,
    P_TERMINAL_CHECK,
    P_TEXTBOOK_BACKUP,
    P_UCT_C,
    P_UCT_RULE,
    PARAM_NAMES,
    PRIOR_F,
    PRIOR_OFF,
    UCT_SQRT,
)
from boopexp.engine.rng import pick

# The game this module's kernels play (a template, :mod:`boopexp.engine.binding`): boop.'s kernels
# (:mod:`boopexp.engine.boop_game`) here, another game's in the copy ``bind`` makes for it.
_game = game_of(__name__)
STATE_SIZE = _game.STATE_SIZE
STATE_DTYPE = _game.STATE_DTYPE
TO_MOVE = _game.TO_MOVE
MOVE_NUMBER = _game.MOVE_NUMBER
N_MOVE_CODES = _game.N_MOVE_CODES
F_IS_H_AFTER = _game.F_IS_H_AFTER
new_work = _game.new_work
legal_move_codes = _game.legal_move_codes
legal_move_count = _game.legal_move_count
apply_move = _game.apply_move
apply_move_unchecked = _game.apply_move_unchecked
has_won = _game.has_won
heuristic = _game.heuristic
objective = _game.objective
random_move = _game.random_move
expansion_limit = _game.expansion_limit
root_masked = _game.root_masked
solve = _game.solve
score_moves = _game.score_moves
best_m_moves = _game.best_m_moves
context_value = _game.context_value
lookahead_mask = _game.lookahead_mask

__all__ = ["Tree", "new_work", "new_tree", "search", "move_telemetry", "params_vector", "feature_flags"]

#: value of an unvisited child in UCT (AGENTS.md §B.5)
UNVISITED_UCT = 999999.9
#: nodes a search tree starts with (the root's children, at most 72, and room to grow)
INITIAL_CAPACITY = 1024

#: the root's node id; ids are allocated in creation order, so the root is always the first (an
#: int64 scalar, not a Python int: create_node(tree, ROOT, ...) then shares the one compiled
#: create_node instead of compiling it again for the literal 0, see rules.REAL)
ROOT = np.int64(0)
#: the parent of the root, and an absent child / sibling link
NO_PARENT = -1
NO_NODE = -1
#: the move that led to the root (none)
NO_MOVE = -1

#: The search tree: parallel arrays indexed by node id (``[capacity]``-shaped), like mctx's Tree.
#:   states        STATE_DTYPE[capacity, STATE_SIZE]  the position
#:   parent        int64   the parent's id (NO_PARENT for the ROOT)
#:   move          int64   the move code that led here from the parent (NO_MOVE for the ROOT)
#:   player        int64   the colour that made that move (the root: the side NOT to move)
#:   score         float64 the summed values, from ``player``'s point of view (AGENTS.md §B.7)
#:   visits        int64   visit count
#:   terminal      bool    someone has won in this position (TREE victory test)
#:   first_child   int64   first child id (NO_NODE: none); children are a singly linked list
#:   last_child    int64   last child id (NO_NODE: none), for appending in creation order
#:   next_sibling  int64   next child of the same parent (NO_NODE: the last one)
#:   n_children    int64   the number of children
#:   masked        bool    a root child excluded from selection (root mask, AGENTS.md §B.4)
#:   proven        int8    the game's value for ``player`` when known: +1 a win, -1 a loss, 0 not
#:                         known (a terminal node from the rules; others by MCTS-Solver's backups)
#:   prior         float64 the selection prior's value of the node's move (H or f; ``prior`` on)
#:   count         int64[1] the number of nodes in use (ids 0..count-1)
Tree = namedtuple(
    "Tree",
    ["states", "parent", "move", "player", "score", "visits", "terminal",
     "first_child", "last_child", "next_sibling", "n_children", "masked", "proven", "prior", "count"],
)

#: int64 counters of one search: iterations, solver calls, equivalent moves, and the primitives
#: the device clock charges (nodes created, playout plies, moves scored by the solver)
#: and the moves in those ties (the other reading of the paper's "equivalent moves", docs/budget.md);
#: the two-stage checks' moves examined and replies tested (co_lookahead, docs/beyond.md)
ACC_ITER, ACC_SOLVER, ACC_EQUIV, ACC_NODES, ACC_PLIES, ACC_SOLVER_MOVES, ACC_EQUIV_CANDS = 0, 1, 2, 3, 4, 5, 6
ACC_LA_MOVES, ACC_LA_REPLIES = 7, 8
#: the nodes MCTS-Solver proved (terminal nodes not counted: the rules prove them) and the prior's
#: evaluations (H or f of one move; docs/budget.md)
ACC_PROVEN, ACC_PRIOR_EVALS = 9, 10
N_ACC = 11

#: A search feature's compile-time switch, one each for ``co_lookahead``, ``prior``, ``solver`` and
#: the reports' options (``playout_value``, ``textbook_backup``, ``terminal_check`` 2, ``uct_rule`` 1)
#: (:func:`feature_flags`): the kernels that call a feature's code take its switch and test
#: ``len(switch)``, a constant numba folds before typing, so a search compiled with OFF neither
#: compiles nor carries that feature's kernels (a cold first game of the paper's agents compiles
#: no two-stage check, prior, MCTS-Solver or the reports' playouts and backups: docs/cluster.md
#: "Compile once"; nor does its hot loop carry their branches: benchmarks/ab.py). The parameters still
#: decide at run time, as before: a switch only says whether the code is there.
OFF: tuple = ()
ON: tuple = (1,)

#: the selection value of a proven child (MCTS-Solver): a proven win above any UCT value, a proven
#: loss below any
PROVEN_U = 1e300


def _filled(capacity: int, value: int) -> np.ndarray:
    """``np.full(capacity, value, dtype=np.int64)`` at a third of its cost (numpy's ``full`` is
    Python code: a search makes five of these per move, :func:`new_tree`)."""
    out = np.empty(capacity, dtype=np.int64)
    out.fill(value)
    return out


def new_tree(capacity: int) -> Tree:
    return Tree(
        states=np.zeros((capacity, STATE_SIZE), dtype=STATE_DTYPE),
        parent=_filled(capacity, NO_PARENT),
        move=_filled(capacity, NO_MOVE),
        player=np.zeros(capacity, dtype=np.int64),
        score=np.zeros(capacity, dtype=np.float64),
        visits=np.zeros(capacity, dtype=np.int64),
        terminal=np.zeros(capacity, dtype=np.bool_),
        first_child=_filled(capacity, NO_NODE),
        last_child=_filled(capacity, NO_NODE),
        next_sibling=_filled(capacity, NO_NODE),
        n_children=np.zeros(capacity, dtype=np.int64),
        masked=np.zeros(capacity, dtype=np.bool_),
        proven=np.zeros(capacity, dtype=np.int8),
        prior=np.zeros(capacity, dtype=np.float64),
        count=np.zeros(1, dtype=np.int64),
    )


def _with_room(tree: Tree) -> Tree:
    """``tree``, or a copy twice as large when it has no room for one more node."""
    if tree.count[0] >= tree.states.shape[0] - 1:
        return grow_tree(tree, 2 * tree.states.shape[0])
    return tree


def grow_tree(tree: Tree, capacity: int) -> Tree:
    """A copy of ``tree`` with room for ``capacity`` nodes."""
    bigger = new_tree(capacity)
    n = int(tree.count[0])
    for name in Tree._fields:
        if name != "count":
            getattr(bigger, name)[:n] = getattr(tree, name)[:n]
    bigger.count[0] = n
    return bigger


# ------------------------------------------------------------------------------------------
# primitives


@njit(cache=True, _nrt=False)
def solver_best_move(st, mask, rng, work, acc, acc_us, costs):
    """best_move with telemetry and device cost; -1 when every legal move is masked."""
    return solver_call(st, mask, rng, work, acc, acc_us, costs)[0]


@njit(cache=True, _nrt=False, inline="always")
def solver_call(st, mask, rng, work, acc, acc_us, costs):
    """:func:`solver_best_move`'s (move code, the optimal f); leaves ``st``'s context in
    ``work`` (boop.: :func:`boopexp.engine.objective.context_value` reads H of ``st`` off it)."""
    # n_scored: every legal move, masked ones included (what the device is charged for)
    code, ties, n_scored, best = solve(st, mask, rng, work)
    acc[ACC_SOLVER] += 1
    acc[ACC_SOLVER_MOVES] += n_scored
    if ties > 1:
        acc[ACC_EQUIV] += 1  # the paper's "equivalent moves" event
        acc[ACC_EQUIV_CANDS] += ties
    acc_us[0] += costs[C_SOLVER_CALL] + costs[C_SOLVER_MOVE] * n_scored
    return code, best


@inner(_nrt=False)
def lookahead(st, mask, rng, work, acc, acc_us, costs):
    """The two-stage constraint before a solver call: ``work.la_mask`` = ``mask`` plus the moves
    after which the opponent wins at once, unless every move is such (:mod:`boopexp.engine.lookahead`).

    Charged as one solver call plus ``(moves examined + replies tested) × solver_move × r``
    (r = ``costs[C_LOOKAHEAD_RATIO]``, docs/budget.md). ``rng`` is read, never advanced. (The
    mask is left in ``work``, not returned: a kernel without reference counts returns no array.)
    """
    lookahead_mask(st, mask, rng, work)
    steps = work.la_counts[N_LEGAL] + work.la_counts[N_REPLIES]
    acc[ACC_LA_MOVES] += work.la_counts[N_LEGAL]
    acc[ACC_LA_REPLIES] += work.la_counts[N_REPLIES]
    acc_us[0] += costs[C_SOLVER_CALL] + costs[C_SOLVER_MOVE] * costs[C_LOOKAHEAD_RATIO] * steps


@inner(_nrt=False)
def co_solver_call(st, mask, params, rng, work, acc, acc_us, costs, la_on):
    """The solver at an injection point (Expansion, Playout): :func:`solver_call` among the moves
    not in ``mask``, after the two-stage constraint when ``co_lookahead`` is on (the optimal f is
    then the best among the safe moves: the chosen move's, as without the constraint); ``la_on``:
    its switch (:data:`ON`/:data:`OFF`)."""
    if len(la_on) and params[P_CO_LOOKAHEAD] != 0.0:
        lookahead(st, mask, rng, work, acc, acc_us, costs)
        return solver_call(st, work.la_mask, rng, work, acc, acc_us, costs)
    return solver_call(st, mask, rng, work, acc, acc_us, costs)


@inner(_nrt=False)
def create_node(tree, parent_id, code, rng, work, acc, acc_us, costs):
    """AGENTS.md §B.3 (TREE engine); returns the new node id."""
    nid = tree.count[0]
    tree.count[0] = nid + 1
    st = tree.states[nid]
    pst = tree.states[parent_id]
    for i in range(STATE_SIZE):
        st[i] = pst[i]
    mover = pst[TO_MOVE]
    # boop.: place, push, moveNumber += 1; QUIRK-A3: victory of both colours, Blue first; else the
    # promotion heuristic picks a group (the single group too: same result as automatic).
    winner, _ = apply_move(st, code, rng, work)
    tree.parent[nid] = parent_id
    tree.move[nid] = code
    tree.player[nid] = mover
    tree.terminal[nid] = winner != 0
    if winner == 0 or winner == DRAW:
        tree.score[nid] = 0.0
        tree.proven[nid] = 0
    elif winner == mover:
        tree.score[nid] = 1.0
        tree.proven[nid] = 1
    else:
        tree.score[nid] = -1.0
        tree.proven[nid] = -1
    tree.prior[nid] = 0.0
    tree.visits[nid] = 0
    tree.first_child[nid] = NO_NODE
    tree.last_child[nid] = NO_NODE
    tree.next_sibling[nid] = NO_NODE
    tree.n_children[nid] = 0
    tree.masked[nid] = False
    if tree.last_child[parent_id] == NO_NODE:
        tree.first_child[parent_id] = nid
    else:
        tree.next_sibling[tree.last_child[parent_id]] = nid
    tree.last_child[parent_id] = nid
    tree.n_children[parent_id] += 1
    acc[ACC_NODES] += 1
    acc_us[0] += costs[C_NODE]
    return nid


@inner(_nrt=False)
def backpropagate(tree, node_id, value):
    """AGENTS.md §B.7: negate once per level, up to and including the ROOT."""
    n = node_id
    v = value
    while True:
        tree.score[n] += -v
        tree.visits[n] += 1
        if n == ROOT:
            break
        n = tree.parent[n]
        v = -v


@njit(cache=True, _nrt=False, inline="always")
def playout_ply(st, code, n, check, rng, work):
    """Play ply ``n`` (1-based) of a playout with ``terminal_check`` 2 (``check`` > 1): on an odd
    ply ``apply_move_unchecked``, which skips the end test (outcome 0; the Colosseum report's
    Experiment 1: the test once both players have moved), else ``apply_move``. Returns apply_move's
    pair. Called under the reports' switch only: the paper's playouts call ``apply_move``."""
    if check > 1.0 and n % 2 == 1:
        return apply_move_unchecked(st, code, rng, work)
    return apply_move(st, code, rng, work)


@njit(cache=True, _nrt=False, inline="always")
def settled_outcome(st):
    """The outcome of a position whose mover has no legal move (an unchecked ply ended the game;
    ``terminal_check`` 2): the colour that has won, else a draw."""
    if has_won(st, -1):
        return -1
    if has_won(st, 1):
        return 1
    return DRAW


@inner(_nrt=False)
def playout(tree, e_id, params, rng, work, acc, acc_us, costs, la_on, report_on):
    """AGENTS.md §B.8: the value of E's state from the point of view of S = E's parent
    (``la_on``, ``report_on``: the two-stage check's and the reports' switches, :data:`ON`)."""
    first_n = params[P_CO_PLAYOUT_PLIES]
    depth = params[P_PLAYOUT_DEPTH]
    discount = params[P_DISCOUNT]
    offset = params[P_DISCOUNT_OFFSET]
    fix_a9 = params[P_FIX_A9] != 0.0
    check = params[P_TERMINAL_CHECK]
    st = work.playout
    src = tree.states[e_id]
    for i in range(STATE_SIZE):
        st[i] = src[i]
    persp = tree.player[tree.parent[e_id]]  # fixed for the whole playout (= side to move in E)
    n = 0
    total = 0.0
    winner = 0
    no_mask = work.mask  # all False outside create/expand
    # H of each ply's position is not computed when a solver call already knows it: after the
    # perspective's own solver move with no promotion (TREE and SIM then leave the same board
    # and pools) it is the move's f; after the other side's move, the next solver call's
    # context (the perspective is then to move) holds it. The terms are added in the same
    # order, so the sum is the same float.
    pending = False  # the last ply's H is to be read off the next solver call's context
    best = 0.0
    while winner == 0 and (depth == 0 or n < depth):
        code = -1
        solver = n < first_n
        if solver:
            code, best = co_solver_call(st, no_mask, params, rng, work, acc, acc_us, costs, la_on)
            if pending:
                total += discount ** (n - offset) * context_value(st, work)
                pending = False
        if code < 0:
            code = random_move(st, no_mask, rng, work)
            solver = False
        if len(report_on) and code < 0:  # terminal_check 2: the last, unchecked ply ended the game
            winner = settled_outcome(st)
            break
        mover = st[TO_MOVE]
        if len(report_on):
            winner, n_groups = playout_ply(st, code, n + 1, check, rng, work)
        else:
            winner, n_groups = apply_move(st, code, rng, work)
        n += 1
        acc[ACC_PLIES] += 1
        acc_us[0] += costs[C_RANDOM_PLY]
        if winner == 0:
            # QUIRK-A10: exponent n - 1 (offset 1; the paper's prose: offset 0); H, not f,
            # from the fixed perspective of S's player.
            if F_IS_H_AFTER and solver and mover == persp and n_groups == 0:
                total += discount ** (n - offset) * best
            elif mover != persp and n < first_n and (depth == 0 or n < depth):
                pending = True
            else:
                total += discount ** (n - offset) * heuristic(st, persp)
    if winner != 0 and winner != DRAW:
        bonus = discount ** (n - offset)
        if fix_a9:
            total += bonus if winner == persp else -bonus
        elif winner < 0:
            total -= bonus  # QUIRK-A9: terminal bonus in absolute colours (Blue -, Red +)
        else:
            total += bonus
    return total / n


@njit(cache=True, _nrt=False, inline="always")
def reward(tree, params, won, lost, who):
    """``playout_value`` 1: the searching agent's reward (``reward_win``, ``reward_loss``,
    ``reward_draw``) of a game the agent ``won``, ``lost`` or drew (neither), from the point of view
    of the player ``who``: the agent's own, negated for the opponent. The rewards are the agent's
    utility and the search is zero-sum in it (asymmetric rewards such as {1, -100} are the agent's,
    not mirrored for the opponent; docs/agents.md "The reports' agents")."""
    if won:
        value = params[P_REWARD_WIN]
    elif lost:
        value = params[P_REWARD_LOSS]
    else:
        value = params[P_REWARD_DRAW]
    return value if who == -tree.player[ROOT] else -value


@njit(cache=True, _nrt=False, inline="always")
def outcome_reward(tree, node, sign, params):
    """``playout_value`` 1: the value of ``node`` for its player when the game's value is known
    there, ``sign`` for that player (+1 a win, -1 a loss, 0 a draw; a terminal node's rules, or a
    proof), in the rewards: the unit value of the paper's tree (+-1, 0) in the agent's rewards."""
    agent = -tree.player[ROOT]
    mine = tree.player[node] == agent
    return reward(tree, params, (sign > 0) == mine and sign != 0, (sign < 0) == mine and sign != 0, tree.player[node])


@inner(_nrt=False)
def playout_result(tree, e_id, params, rng, work, acc, acc_us, costs, la_on):
    """``playout_value`` 1: the value of E's state from the point of view of S = E's parent (as
    :func:`playout`), as the game's result in the agent's rewards (:func:`reward`). The plies are
    :func:`playout`'s (the solver's for the first ``co_playout_plies``, then random); no H is summed. A
    playout that ``playout_depth`` cuts off is worth H of its last position for the agent, scaled
    linearly from [-1, 1] to [reward_loss, reward_win] (the Colosseum report's early termination)."""
    first_n = params[P_CO_PLAYOUT_PLIES]
    depth = params[P_PLAYOUT_DEPTH]
    check = params[P_TERMINAL_CHECK]
    st = work.playout
    src = tree.states[e_id]
    for i in range(STATE_SIZE):
        st[i] = src[i]
    persp = tree.player[tree.parent[e_id]]
    agent = -tree.player[ROOT]
    no_mask = work.mask
    n = 0
    winner = 0
    while winner == 0 and (depth == 0 or n < depth):
        code = -1
        if n < first_n:
            code, _ = co_solver_call(st, no_mask, params, rng, work, acc, acc_us, costs, la_on)
        if code < 0:
            code = random_move(st, no_mask, rng, work)
        if code < 0:  # terminal_check 2: the last, unchecked ply ended the game
            winner = settled_outcome(st)
            break
        winner, _ = playout_ply(st, code, n + 1, check, rng, work)
        n += 1
        acc[ACC_PLIES] += 1
        acc_us[0] += costs[C_RANDOM_PLY]
    if winner == 0:
        h = heuristic(st, agent)
        win, loss = params[P_REWARD_WIN], params[P_REWARD_LOSS]
        value = loss + (win - loss) * (h + 1.0) / 2.0
        return value if persp == agent else -value
    return reward(tree, params, winner == agent, winner != agent and winner != DRAW, persp)


@njit(cache=True, _nrt=False, inline="always")
def eligible(tree, c, m, early):
    """Whether ``c`` may be selected: masks only exist on root children; QUIRK-A5: the m = 0
    border mask lapses once the child's moveNumber exceeds the horizon."""
    return not tree.masked[c] or (m == 0 and tree.states[c][MOVE_NUMBER] > early)


@inner(_nrt=False)
def prior_weights(tree, node, m, early, temp, weights):
    """The softmax of the eligible children's priors at temperature ``temp``: fills
    ``weights[j]`` (j = the child's rank among ``node``'s children) with exp((prior - max) / temp)
    and returns their sum (0.0 when no child is eligible)."""
    top = -np.inf
    c = tree.first_child[node]
    while c != NO_NODE:
        if eligible(tree, c, m, early) and tree.prior[c] > top:
            top = tree.prior[c]
        c = tree.next_sibling[c]
    total = 0.0
    j = 0
    c = tree.first_child[node]
    while c != NO_NODE:
        if eligible(tree, c, m, early):
            weights[j] = math.exp((tree.prior[c] - top) / temp)
            total += weights[j]
        j += 1
        c = tree.next_sibling[c]
    return total


@njit(cache=True, _nrt=False, inline="always")
def uct_value(tree, node, c, c_uct, log_n, sqrt_rule):
    """The selection value of the visited child ``c`` of ``node``: its mean plus the exploration
    term, UCB1's c * sqrt(ln N / n) (the paper; ``log_n`` = ln N) or, ``sqrt_rule``,
    c * sqrt(N / (n + 1)) (``uct_rule`` 1)."""
    if sqrt_rule:
        return tree.score[c] / tree.visits[c] + c_uct * math.sqrt(tree.visits[node] / (tree.visits[c] + 1.0))
    return tree.score[c] / tree.visits[c] + c_uct * math.sqrt(log_n / tree.visits[c])


@inner(_nrt=False)
def descend(tree, params, rng, work, prior_on, solver_on, report_on):
    """AGENTS.md §B.5 (``uct_descend``); with ``prior`` on, PUCT (the prior's softmax P:
    Q + prior_c · P · sqrt(N) / (1 + n)); with ``solver`` on, MCTS-Solver's selection (a proven
    child is taken at once if a win, last if a loss, and ends the descent). ``prior_on``,
    ``solver_on``: their switches (:data:`ON`); ``report_on``: the reports' (``uct_rule`` 1)."""
    m = params[P_PRESELECT_M]
    early = params[P_EARLY_MASK_PLIES]
    c_uct = params[P_UCT_C]
    sqrt_rule = len(report_on) > 0 and params[P_UCT_RULE] == UCT_SQRT
    solver = len(solver_on) > 0 and params[P_SOLVER] != 0.0
    puct = len(prior_on) > 0 and params[P_PRIOR] != PRIOR_OFF
    node = ROOT
    while True:
        st = tree.states[node]
        if solver:
            # A loss is proven only at a node with ALL its legal moves as children: QUIRK-A4's
            # threshold (the empty squares) would leave half of them out when both sizes are in the pool.
            if tree.n_children[node] < legal_move_count(st):
                return node
        # boop.: QUIRK-A4, "fully expanded" compares the child count with the EMPTY SQUARES
        elif tree.n_children[node] < expansion_limit(st, params):
            return node
        log_n = 0.0
        explore = 0.0
        if len(prior_on) and puct:
            total = prior_weights(tree, node, m, early, params[P_PRIOR_TEMP], work.values)
            if total > 0.0:
                explore = params[P_PRIOR_C] * math.sqrt(tree.visits[node]) / total
        else:
            log_n = math.log(tree.visits[node])
        nb = 0
        best = -np.inf
        j = 0
        c = tree.first_child[node]
        while c != NO_NODE:
            if eligible(tree, c, m, early):
                if solver and tree.proven[c] != 0:
                    u = PROVEN_U * tree.proven[c]
                elif puct:
                    # an unvisited child's value is its first playout's (QUIRK-A8: not yet counted)
                    q = tree.score[c] / tree.visits[c] if tree.visits[c] > 0 else tree.score[c]
                    u = q + explore * work.values[j] / (1.0 + tree.visits[c])
                elif tree.visits[c] == 0:
                    u = UNVISITED_UCT
                elif len(report_on):
                    u = uct_value(tree, node, c, c_uct, log_n, sqrt_rule)
                else:
                    u = tree.score[c] / tree.visits[c] + c_uct * math.sqrt(log_n / tree.visits[c])
                best, nb = keep_best(u, c, best, nb, work.best)
            j += 1
            c = tree.next_sibling[c]
        if nb == 0:
            return node
        node = pick(rng, work.best, nb)
        if solver and tree.proven[node] != 0:
            return node


@inner(_nrt=False)
def prove(tree, node, acc):
    """MCTS-Solver's backup (Winands, Björnsson & Saito 2008) from ``node``, just proven.

    A child proven a win for its player (the player to move at the parent) proves the parent a
    loss for the parent's player; a child proven a loss proves the parent a win when the parent
    has ALL its legal moves as children and every one of them is proven a loss. Goes up while
    something new is proven; counts the nodes proven in ``acc[ACC_PROVEN]``. Proofs are in the
    tree's model of the game: a promotion is the promotion heuristic's choice (AGENTS.md §B.3).
    """
    c = node
    while c != ROOT:
        p = tree.parent[c]
        if tree.proven[p] != 0:
            return
        if tree.proven[c] > 0:
            tree.proven[p] = -1
        else:
            if tree.n_children[p] < legal_move_count(tree.states[p]):
                return
            k = tree.first_child[p]
            while k != NO_NODE:
                if tree.proven[k] >= 0:
                    return
                k = tree.next_sibling[k]
            tree.proven[p] = 1
        acc[ACC_PROVEN] += 1
        c = p


@inner(_nrt=False)
def move_prior(tree, e_id, f, params, rng, work, acc, acc_us, costs):
    """The prior's value of node ``e_id``'s move, from its mover's side: H of its position
    (``prior`` 1) or f of its move (``prior`` 2; ``f`` when the expansion's solver call already
    scored it, else NaN: evaluated here); a terminal node's is its score (+-1). An evaluation is
    charged as one move the solver scores (docs/budget.md)."""
    if tree.terminal[e_id]:
        return tree.score[e_id]
    value = f
    if params[P_PRIOR] == PRIOR_F:
        if value == value:
            return value  # free: the expansion's solver call scored this move
        value = objective(tree.states[tree.parent[e_id]], tree.move[e_id], rng, work)
    else:
        value = heuristic(tree.states[e_id], tree.player[e_id])
    acc[ACC_PRIOR_EVALS] += 1
    acc_us[0] += costs[C_SOLVER_MOVE]
    return value


@inner(_nrt=False)
def any_unbanned_move(st, banned, rng, codes):
    """A uniformly random legal move not in ``banned``, -1 if none: the random expansion of a
    ``solver`` search, whose nodes take every legal move (:func:`random_move` may draw a size
    whose squares are all taken)."""
    n_legal = legal_move_codes(st, codes)
    n = 0
    for i in range(n_legal):
        if not banned[codes[i]]:
            codes[n] = codes[i]
            n += 1
    if n == 0:
        return -1
    return pick(rng, codes, n)


@inner(_nrt=False)
def iterate(tree, params, rng, work, acc, acc_us, costs, la_on, prior_on, solver_on, report_on):
    """One MCTS iteration (AGENTS.md §B.6); with ``solver`` on, a proven node ends the descent
    like a terminal one and a new proof is backed up (:func:`prove`). ``la_on``, ``prior_on``,
    ``solver_on``, ``report_on``: the features' switches (:func:`feature_flags`)."""
    acc[ACC_ITER] += 1
    acc_us[0] += costs[C_ITERATION]
    solver = params[P_SOLVER] != 0.0
    s_id = descend(tree, params, rng, work, prior_on, solver_on, report_on)
    textbook = len(report_on) > 0 and params[P_TEXTBOOK_BACKUP] != 0.0
    result = len(report_on) > 0 and params[P_PLAYOUT_VALUE] != 0.0
    if tree.terminal[s_id]:
        if len(report_on) and textbook:  # its value (its mean: one value added per visit) added again
            value = tree.score[s_id] / tree.visits[s_id]
            tree.score[s_id] += value
            tree.visits[s_id] += 1
            backpropagate(tree, tree.parent[s_id], value)
            return
        # QUIRK-A6: the terminal node keeps its +-1 score while its visits grow.
        tree.visits[s_id] += 1
        backpropagate(tree, tree.parent[s_id], tree.score[s_id])
        return
    if solver and tree.proven[s_id] != 0 and s_id != ROOT:
        # as a terminal node: its proven value backed up, its own score left alone
        tree.visits[s_id] += 1
        proven = float(tree.proven[s_id])
        if len(report_on) and result:
            proven = outcome_reward(tree, s_id, tree.proven[s_id], params)
        backpropagate(tree, tree.parent[s_id], proven)
        return
    banned = work.mask
    c = tree.first_child[s_id]
    while c != NO_NODE:
        banned[tree.move[c]] = True
        c = tree.next_sibling[c]
    code = -1
    f = np.nan
    if params[P_CO_EXPANSION] != 0.0:
        code, f = co_solver_call(tree.states[s_id], banned, params, rng, work, acc, acc_us, costs, la_on)
    if code < 0:
        f = np.nan
        code = random_move(tree.states[s_id], banned, rng, work)
        if len(solver_on) and code < 0 and solver:
            code = any_unbanned_move(tree.states[s_id], banned, rng, work.codes)
    c = tree.first_child[s_id]
    while c != NO_NODE:
        banned[tree.move[c]] = False
        c = tree.next_sibling[c]
    e_id = create_node(tree, s_id, code, rng, work, acc, acc_us, costs)
    if len(report_on) and result and tree.terminal[e_id]:
        tree.score[e_id] = outcome_reward(tree, e_id, np.sign(tree.score[e_id]), params)
    if len(prior_on) and params[P_PRIOR] != PRIOR_OFF:
        tree.prior[e_id] = move_prior(tree, e_id, f, params, rng, work, acc, acc_us, costs)
    if len(solver_on) and solver and tree.proven[e_id] != 0:
        prove(tree, e_id, acc)
    if not tree.terminal[e_id]:
        if len(report_on) and result:
            value = playout_result(tree, e_id, params, rng, work, acc, acc_us, costs, la_on)
        else:
            value = playout(tree, e_id, params, rng, work, acc, acc_us, costs, la_on, report_on)
        # QUIRK-A7: divided by the number of S's children (E included); textbook: whole
        if len(report_on) and textbook:
            tree.score[e_id] = -value
        else:
            tree.score[e_id] = -value / tree.n_children[s_id]
    if len(report_on) and textbook:
        tree.visits[e_id] = 1
    # QUIRK-A8: E's own visit count stays 0 (textbook: its first playout is its first visit).
    backpropagate(tree, s_id, tree.score[e_id])


@inner(_nrt=False)
def install_root(tree, root_state):
    """Make ``root_state`` the tree's only node: the ROOT, visits 1, player = the side NOT to move."""
    tree.count[0] = 1
    st = tree.states[ROOT]
    for i in range(STATE_SIZE):
        st[i] = root_state[i]
    tree.parent[ROOT] = NO_PARENT
    tree.move[ROOT] = NO_MOVE
    tree.player[ROOT] = -root_state[TO_MOVE]
    tree.score[ROOT] = 0.0
    tree.visits[ROOT] = 1
    tree.terminal[ROOT] = False
    tree.first_child[ROOT] = NO_NODE
    tree.last_child[ROOT] = NO_NODE
    tree.next_sibling[ROOT] = NO_NODE
    tree.n_children[ROOT] = 0
    tree.masked[ROOT] = False
    tree.proven[ROOT] = 0
    tree.prior[ROOT] = 0.0


@inner(_nrt=False)
def create_root_child(tree, code, params, rng, work, acc, acc_us, costs, report_on):
    """A child of the ROOT for ``code`` (:func:`create_node`), a terminal one valued in the agent's
    rewards under ``playout_value`` 1 (:func:`outcome_reward`; ``report_on``: the reports' switch)."""
    c = create_node(tree, ROOT, code, rng, work, acc, acc_us, costs)
    if len(report_on) and params[P_PLAYOUT_VALUE] != 0.0 and tree.terminal[c]:
        tree.score[c] = outcome_reward(tree, c, np.sign(tree.score[c]), params)
    if len(report_on) and params[P_TEXTBOOK_BACKUP] != 0.0 and tree.terminal[c]:
        tree.visits[c] = 1  # its value is its first visit's (textbook_backup)


@njit(cache=True)
def init_root(tree, root_state, params, rng, work, acc, acc_us, costs, la_on, prior_on, solver_on, report_on):
    """AGENTS.md §B.4 steps 1–2: the root, ALL its children up front, and the root mask
    (``la_on``, ``prior_on``, ``solver_on``, ``report_on``: the features' switches, :func:`feature_flags`)."""
    install_root(tree, root_state)
    # work.codes is free until the solver call below
    n_root = legal_move_codes(root_state, work.codes)
    for j in range(n_root):
        create_root_child(tree, work.codes[j], params, rng, work, acc, acc_us, costs, report_on)
    setup_root(tree, root_state, n_root, params, rng, work, acc, acc_us, costs, la_on, prior_on, solver_on)


@njit(cache=True)
def adopt_root(tree, root_state, params, rng, work, acc, acc_us, costs, la_on, prior_on, solver_on, report_on):
    """``reuse_tree``: the ROOT of a kept subtree (:func:`extract_subtree`) made a search's root as
    :func:`init_root` makes a new one: its children relinked in the legal moves' order, the kept ones
    with their statistics and subtrees, the missing ones created; then the root mask, the priors and
    the proofs (:func:`setup_root`)."""
    n_root = legal_move_codes(root_state, work.codes)
    child_of = np.full(N_MOVE_CODES, NO_NODE, dtype=np.int64)
    c = tree.first_child[ROOT]
    while c != NO_NODE:
        child_of[tree.move[c]] = c
        c = tree.next_sibling[c]
    tree.first_child[ROOT] = NO_NODE
    tree.last_child[ROOT] = NO_NODE
    tree.n_children[ROOT] = 0
    for j in range(n_root):
        c = child_of[work.codes[j]]
        if c == NO_NODE:
            create_root_child(tree, work.codes[j], params, rng, work, acc, acc_us, costs, report_on)
            continue
        tree.next_sibling[c] = NO_NODE
        if tree.last_child[ROOT] == NO_NODE:
            tree.first_child[ROOT] = c
        else:
            tree.next_sibling[tree.last_child[ROOT]] = c
        tree.last_child[ROOT] = c
        tree.n_children[ROOT] += 1
    setup_root(tree, root_state, n_root, params, rng, work, acc, acc_us, costs, la_on, prior_on, solver_on)


@inner()
def setup_root(tree, root_state, n_root, params, rng, work, acc, acc_us, costs, la_on, prior_on, solver_on):
    """AGENTS.md §B.4 step 2 on a root with all its ``n_root`` children: the root mask (the
    Selection injection's m best, or QUIRK-A5's border mask), the priors, MCTS-Solver's proofs."""
    m = np.int64(params[P_PRESELECT_M])
    if m > 0:
        keep = np.zeros(N_MOVE_CODES, dtype=np.bool_)
        allowed = work.mask  # all False here: best_m_moves_ws' empty mask, without allocating one
        if len(la_on) and params[P_CO_LOOKAHEAD] != 0.0:
            # the m best SAFE moves (fewer when fewer are safe; all of them when none is)
            lookahead(root_state, work.mask, rng, work, acc, acc_us, costs)
            allowed = work.la_mask
        k = best_m_moves(root_state, allowed, m, rng, work, work.path)
        acc[ACC_SOLVER] += 1
        acc[ACC_SOLVER_MOVES] += n_root
        acc_us[0] += costs[C_SOLVER_CALL] + costs[C_SOLVER_MOVE] * n_root
        for j in range(k):
            keep[work.path[j]] = True
        c = tree.first_child[ROOT]
        while c != NO_NODE:
            tree.masked[c] = k > 0 and not keep[tree.move[c]]  # failure masks nothing
            c = tree.next_sibling[c]
    else:
        c = tree.first_child[ROOT]
        while c != NO_NODE:
            tree.masked[c] = root_masked(root_state, tree.move[c], params)  # boop.: QUIRK-A5 border mask
            c = tree.next_sibling[c]
    if len(prior_on) and params[P_PRIOR] != PRIOR_OFF:
        root_priors(tree, root_state, params, rng, work, acc, acc_us, costs)
    if len(solver_on) and params[P_SOLVER] != 0.0:
        c = tree.first_child[ROOT]
        while c != NO_NODE:
            if tree.proven[c] != 0:
                prove(tree, c, acc)
            c = tree.next_sibling[c]


@inner(_nrt=False)
def root_priors(tree, root_state, params, rng, work, acc, acc_us, costs):
    """The prior of every root child, scored in one batch: charged as one solver call of that many
    moves (docs/budget.md). f: the solver's scores of every legal move (the children's order)."""
    n = 0
    if params[P_PRIOR] == PRIOR_F:
        n = score_moves(root_state, work.mask, rng, work, work.codes, work.values)
    j = 0
    c = tree.first_child[ROOT]
    while c != NO_NODE:
        if tree.terminal[c]:
            tree.prior[c] = tree.score[c]
        elif n > 0:
            tree.prior[c] = work.values[j]
        else:
            tree.prior[c] = heuristic(tree.states[c], tree.player[c])
        j += 1
        c = tree.next_sibling[c]
    acc[ACC_PRIOR_EVALS] += j
    acc_us[0] += costs[C_SOLVER_CALL] + costs[C_SOLVER_MOVE] * j


# nogil: the search's kernel lets other threads run (boopexp serve answers while agents think)
@njit(cache=True, _nrt=False, nogil=True)
def run_iterations(tree, params, rng, work, acc, acc_us, costs, max_iters, budget_us, la_on, prior_on, solver_on,
                   report_on):
    """Iterate while the device clock is under ``budget_us`` (checked before each iteration:
    an iteration in progress always completes), at most ``max_iters`` times, and while the tree
    has room for one more node. Returns the number of iterations run. ``la_on``, ``prior_on``,
    ``solver_on``, ``report_on``: the features' switches (:func:`feature_flags`)."""
    capacity = tree.states.shape[0]
    done = 0
    while done < max_iters and acc_us[0] < budget_us and tree.count[0] < capacity:
        iterate(tree, params, rng, work, acc, acc_us, costs, la_on, prior_on, solver_on, report_on)
        done += 1
    return done


@njit(cache=True, _nrt=False)
def final_choice(tree, ai_colour, rng, work, solver=False, selection=False, c_uct=0.0, sqrt_rule=False):
    """AGENTS.md §B.10: an immediate win among ALL root children, else the best mean value.

    With ``solver``: after the immediate win, a child proven a win (the best mean among them),
    else the best mean among the children not proven a loss (among all when every one is).
    With ``selection`` (``final_rule`` 1): the best selection value (:func:`uct_value` with
    ``c_uct``, ``sqrt_rule``) instead of the best mean.
    """
    log_n = math.log(tree.visits[ROOT])
    c = tree.first_child[ROOT]
    while c != NO_NODE:
        if has_won(tree.states[c], ai_colour):
            return tree.move[c]
        c = tree.next_sibling[c]
    if solver:
        for want in (1, 0):  # proven wins, then the children not proven lost
            nb = 0
            best = -np.inf
            c = tree.first_child[ROOT]
            while c != NO_NODE:
                if tree.proven[c] >= want and (want == 1 or tree.visits[c] > 0):
                    value = tree.score[c] / tree.visits[c] if tree.visits[c] > 0 else tree.score[c]
                    best, nb = keep_best(value, c, best, nb, work.best)
                c = tree.next_sibling[c]
            if nb > 0:
                return tree.move[pick(rng, work.best, nb)]
    nb = 0
    best = -np.inf
    c = tree.first_child[ROOT]
    while c != NO_NODE:
        if tree.visits[c] > 0:
            value = tree.score[c] / tree.visits[c]
            if selection:
                value = uct_value(tree, ROOT, c, c_uct, log_n, sqrt_rule)
            best, nb = keep_best(value, c, best, nb, work.best)
        c = tree.next_sibling[c]
    if nb == 0:
        return NO_MOVE
    return tree.move[pick(rng, work.best, nb)]


@njit(cache=True, _nrt=False)
def find_reusable(tree, root_state):
    """``reuse_tree``: the node of ``tree`` (a search's tree of the agent's last move) one or two
    plies below its ROOT whose position is ``root_state`` (the agent's move, then the reply), the
    first in creation order; NO_NODE when none is (the game went another way: a move the tree did
    not expand, or a position the tree's model of the game did not reach)."""
    c = tree.first_child[ROOT]
    while c != NO_NODE:
        if same_state(tree.states[c], root_state):
            return c
        g = tree.first_child[c]
        while g != NO_NODE:
            if same_state(tree.states[g], root_state):
                return g
            g = tree.next_sibling[g]
        c = tree.next_sibling[c]
    return NO_NODE


@njit(cache=True, _nrt=False, inline="always")
def same_state(a, b):
    for i in range(STATE_SIZE):
        if a[i] != b[i]:
            return False
    return True


@njit(cache=True)
def extract_subtree(tree, node, out):
    """Copy the subtree of ``tree`` under ``node`` into the empty tree ``out`` (room for
    ``tree.count`` nodes), ``node`` as its ROOT and the rest breadth first, each node's children in
    their order; returns the number of nodes copied."""
    n = tree.count[0]
    new_id = np.full(n, NO_NODE, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    order[0] = node
    new_id[node] = ROOT
    head, tail = 0, 1
    while head < tail:
        c = tree.first_child[order[head]]
        head += 1
        while c != NO_NODE:
            new_id[c] = tail
            order[tail] = c
            tail += 1
            c = tree.next_sibling[c]
    for i in range(tail):
        old = order[i]
        out.states[i, :] = tree.states[old]
        out.move[i] = tree.move[old]
        out.player[i] = tree.player[old]
        out.score[i] = tree.score[old]
        out.visits[i] = tree.visits[old]
        out.terminal[i] = tree.terminal[old]
        out.n_children[i] = tree.n_children[old]
        out.masked[i] = False
        out.proven[i] = tree.proven[old]
        out.prior[i] = tree.prior[old]
        out.parent[i] = new_id[tree.parent[old]] if i > 0 else NO_PARENT
        out.first_child[i] = new_id[tree.first_child[old]] if tree.first_child[old] != NO_NODE else NO_NODE
        out.last_child[i] = new_id[tree.last_child[old]] if tree.last_child[old] != NO_NODE else NO_NODE
        nxt = tree.next_sibling[old]
        out.next_sibling[i] = new_id[nxt] if i > 0 and nxt != NO_NODE else NO_NODE
    out.move[ROOT] = NO_MOVE
    out.count[0] = tail
    return tail


# ------------------------------------------------------------------------------------------
# Python driver


@dataclass
class KeptTree:
    """``reuse_tree``: the tree of an agent's last search, kept for its next move (:func:`search`'s
    ``kept``; one per agent and game)."""

    tree: Tree | None = None


def reused_tree(kept: KeptTree | None, root_state: np.ndarray) -> tuple[Tree | None, int]:
    """The subtree of ``kept``'s tree whose root is ``root_state`` (:func:`find_reusable`) as a
    tree of its own, and its number of nodes; (None, 0) when there is none."""
    if kept is None or kept.tree is None:
        return None, 0
    node = find_reusable(kept.tree, root_state)
    if node == NO_NODE:
        return None, 0
    tree = new_tree(max(INITIAL_CAPACITY, int(kept.tree.count[0]) + 1))
    return tree, int(extract_subtree(kept.tree, node, tree))


def feature_flags(params: np.ndarray) -> tuple[tuple, tuple, tuple, tuple]:
    """The switches (:data:`ON`/:data:`OFF`) of ``co_lookahead``, ``prior``, ``solver`` and the
    reports' options for a parameter vector (:func:`params_vector`): ON where the parameter is on
    (the reports': any of ``uct_rule`` 1, ``playout_value`` 1, ``textbook_backup``,
    ``terminal_check`` 2), so a search compiles the code of the features it uses, and only those."""
    report = (params[P_UCT_RULE] != 0.0 or params[P_PLAYOUT_VALUE] != 0.0 or params[P_TEXTBOOK_BACKUP] != 0.0
              or params[P_TERMINAL_CHECK] > 1.0)
    return (ON if params[P_CO_LOOKAHEAD] != 0.0 else OFF, ON if params[P_PRIOR] != PRIOR_OFF else OFF,
            ON if params[P_SOLVER] != 0.0 else OFF, ON if report else OFF)


class SearchPlan(namedtuple("SearchPlan", "params flags solver final_rule lookahead prior reuse")):
    """What :func:`search` reads of its MCTSConfig, once per config (:func:`search_plan`): the
    kernels' vector (:func:`params_vector`), the switches (:func:`feature_flags`), ``solver``,
    :func:`final_choice`'s ``(selection, c_uct, sqrt_rule)``, and the telemetry's and
    ``reuse_tree``'s booleans, as plain Python values."""

    __slots__ = ()


#: configs whose plans are kept at most, least recently used first out (a tuner's many configs)
MAX_PLANS = 256


def search_plan(cfg) -> SearchPlan:
    """``cfg``'s :class:`SearchPlan`, computed on the first search of a frozen config (a
    ``dataclass(frozen=True)`` such as MCTSConfig, whose fields never change) and kept
    (``functools.lru_cache`` on the config: equal configs share one plan): the per-move work of
    building the vector (~20 getattr) is then a look-up (~1 us: hashing the config's fields). Any
    other config (a mutable stand-in) gets a new plan per call. The plan's vector is shared by the
    searches of equal configs: the kernels only read it."""
    dc_params = getattr(type(cfg), "__dataclass_params__", None)
    if dc_params is not None and dc_params.frozen:
        return _kept_plan(cfg)
    return _new_plan(cfg)


def _new_plan(cfg) -> SearchPlan:
    params = params_vector(cfg)
    return SearchPlan(params, feature_flags(params), bool(cfg.solver),
                      (bool(params[P_FINAL_RULE] != 0.0), float(params[P_UCT_C]), bool(params[P_UCT_RULE] == UCT_SQRT)),
                      bool(cfg.co_lookahead != 0), bool(cfg.prior != PRIOR_OFF), bool(cfg.reuse_tree))


_kept_plan = functools.lru_cache(maxsize=MAX_PLANS)(_new_plan)


def params_vector(cfg) -> np.ndarray:
    """The MCTSConfig as the float vector the kernels read: ``cfg.<name>`` at index ``P_<NAME>``
    (:mod:`boopexp.engine.params`), a boolean as 0.0 / 1.0.

    Filled by name from the layout, so a parameter the layout has and the config lacks fails
    here (AttributeError) instead of leaving a zero the kernels would read.
    """
    params = np.zeros(N_PARAMS, dtype=np.float64)
    for index, name in enumerate(PARAM_NAMES):
        params[index] = float(getattr(cfg, name))
    return params


#: host seconds a kernel call of a device/iterations search may run before the driver returns to
#: Python (where Ctrl-C and SIGTERM are handled); ~4,000 dispatches of ~12 us per host second
RESPONSIVE_S = 0.05
#: iterations of a search's first kernel call: the whole search at the paper's budget (~80-90
#: iterations per device-s), ~0.15 s for the slowest agent (mcts-co2, ~1 ms an iteration); the
#: next calls are sized from the measured rate
FIRST_CHUNK = 128


def next_chunk(chunk: int, ran: int, seconds: float) -> int:
    """The iterations of the next kernel call: about :data:`RESPONSIVE_S` host seconds at the
    rate the last call ran (``ran`` iterations in ``seconds``), at most 4 times the last chunk
    (an iteration's cost drifts as the tree deepens), at least one."""
    if ran <= 0 or seconds <= 0.0:
        return chunk
    return max(1, min(4 * chunk, int(ran * RESPONSIVE_S / seconds)))


def _stopped(stop: np.ndarray | None) -> bool:
    """A search's ``stop`` flag is set (:func:`search`)."""
    return stop is not None and stop[0] != 0


def search(root_state: np.ndarray, cfg, budget, costs: np.ndarray, rng: np.ndarray, work=None,
           throttle: float = 1.0, on_tree: Callable[[Tree], None] | None = None,
           stop: np.ndarray | None = None, kept: KeptTree | None = None) -> tuple[int, dict]:
    """select_move (AGENTS.md §B.4): the chosen move code and this move's telemetry.

    Args:
        root_state: the position (side to move = the AI).
        cfg: MCTSConfig. budget: Budget. costs: device cost vector (DeviceProfile order).
        rng: kernel RNG state (advanced in place).
        throttle: cpu mode: host CPU seconds that count as one emulated second.
        on_tree: called with the search's tree once the move is chosen (:func:`root_children`
            reads it, with ``cfg``; ``boopexp replay --root-at``); it must not keep the tree, whose
            arrays are the search's own.
        stop: a one-element array another thread may set non-zero (btp's ``stop``,
            :mod:`boopexp.play.btp`): the search then ends before its next kernel call (at most
            about :data:`RESPONSIVE_S` on), with the move it prefers so far. A stopped search is
            not the one its budget gives: it is not reproducible.
        kept: ``reuse_tree``: the agent's tree of its last move, where this search starts when it
            holds this position one or two plies down (:func:`find_reusable`), and where this
            search's tree is kept for the next; a new tree otherwise.
    """
    work = work or new_work()
    plan = search_plan(cfg)
    params, flags = plan.params, plan.flags
    acc = np.zeros(N_ACC, dtype=np.int64)
    acc_us = np.zeros(1, dtype=np.float64)
    cpu0 = time.process_time()
    wall0 = time.perf_counter()
    mode = budget.mode
    # The tree starts small and grows on demand (a device budget's worst case, every iteration
    # creating a node at the cheapest cost, would pre-allocate far more than a search uses).
    # Capacity never changes which nodes are created, so it never changes a game.
    reusing = plan.reuse and kept is not None
    kept_tree, reused = reused_tree(kept, root_state) if reusing else (None, 0)
    if kept_tree is not None:
        tree = kept_tree
        adopt_root(tree, root_state, params, rng, work, acc, acc_us, costs, *flags)
    else:
        tree = new_tree(INITIAL_CAPACITY)
        init_root(tree, root_state, params, rng, work, acc, acc_us, costs, *flags)
    # every mode stops at the budget's iteration cap (iterations mode: its count; the others:
    # boopexp.agents.budget.MAX_ITERATIONS, so that no clock, however its costs are set, runs for ever)
    max_iters = int(budget.iteration_cap)
    if mode in ("device", "iterations"):
        budget_us = float(budget.seconds) * 1e6 if mode == "device" else np.inf
        # In chunks of about RESPONSIVE_S host seconds: a compiled call does not look at Python's
        # signals, and one call running until the tree is full (minutes, in a long search) left
        # Ctrl-C and SIGTERM waiting. The kernel checks the same budget before each iteration
        # whatever the chunk, so the chunks never change a game.
        chunk = FIRST_CHUNK
        while acc[ACC_ITER] < max_iters and acc_us[0] < budget_us and not _stopped(stop):
            tree = _with_room(tree)
            start = time.perf_counter()
            ran = run_iterations(tree, params, rng, work, acc, acc_us, costs, min(chunk, max_iters - acc[ACC_ITER]),
                                 budget_us, *flags)
            chunk = next_chunk(chunk, ran, time.perf_counter() - start)
    else:
        limit = float(budget.seconds) * (throttle if mode == "cpu" else 1.0)
        clock = time.process_time if mode == "cpu" else time.perf_counter
        start = cpu0 if mode == "cpu" else wall0
        # "while now() - start < timeout": the root initialisation counts.
        while clock() - start < limit and acc[ACC_ITER] < max_iters and not _stopped(stop):
            tree = _with_room(tree)
            run_iterations(tree, params, rng, work, acc, acc_us, costs, 1, np.inf, *flags)
    if acc[ACC_ITER] == 0:
        # Degenerate tiny budgets: the original would throw with no visited child; one
        # iteration is always run instead (documented in docs/agents.md).
        tree = _with_room(tree)
        run_iterations(tree, params, rng, work, acc, acc_us, costs, 1, np.inf, *flags)
    code = final_choice(tree, int(root_state[TO_MOVE]), rng, work, plan.solver, *plan.final_rule)
    if on_tree is not None:
        on_tree(tree)
    if reusing:
        kept.tree = tree  # type: ignore[union-attr]
    telemetry = move_telemetry(acc, float(acc_us[0]), int(tree.count[0]), cpu0, plan.lookahead, plan.solver,
                               plan.prior, reused if plan.reuse else None)
    return int(code), telemetry


def root_children(tree: Tree, cfg) -> list[tuple[int, int, float, bool, int, bool]]:
    """The root's children of a search's tree (``cfg``: its MCTSConfig), in the order they were
    created (the legal moves' order): ``(move code, visits, score, selectable, proven, wins)`` each.
    ``score`` is the sum of the values backed up into the child, from the point of view of the
    side that searched (the child's mover): :func:`final_choice` compares ``score / visits``;
    ``selectable``: the selection may take it (:func:`eligible`: not left out by the Selection
    injection's m best, nor by the early border mask while it holds); ``proven``: +1 a win, -1 a
    loss, 0 not known (a terminal child, or MCTS-Solver's proofs); ``wins``: the move wins at once
    for the side that searched (:func:`final_choice`'s first test, ``has_won``)."""
    params = params_vector(cfg)
    m, early = params[P_PRESELECT_M], params[P_EARLY_MASK_PLIES]
    children = []
    c = int(tree.first_child[ROOT])
    while c != NO_NODE:
        selectable = bool(eligible(tree, c, m, early))
        wins = bool(has_won(tree.states[c], int(tree.player[c])))
        children.append((int(tree.move[c]), int(tree.visits[c]), float(tree.score[c]), selectable, int(tree.proven[c]),
                         wins))
        c = int(tree.next_sibling[c])
    return children


def move_telemetry(acc: np.ndarray, device_us: float, tree_nodes: int, cpu0: float, lookahead: bool = False,
                   solver: bool = False, prior: bool = False, reused: int | None = None) -> dict:
    """One move's telemetry (docs/architecture.md) from the counters of a search (or of a
    baseline agent's move); ``cpu0`` is ``time.process_time()`` when the move started.

    ``lookahead``: add the two-stage checks' counts (``lookahead_moves``, ``lookahead_replies``)
    after ``solver_moves``; ``solver``: the nodes MCTS-Solver proved (``proven_nodes``); ``prior``:
    the prior's evaluations (``prior_evals``); ``reused``: the nodes a ``reuse_tree`` search
    started from (``reused_nodes``); only then, so that the records of the paper's agents keep
    their form. The keys come in the record's order (:data:`boopexp.play.contract.TELEMETRY_ORDER`),
    the measured seconds last, so that a store's export and import give back its bytes.
    """
    la = {"lookahead_moves": int(acc[ACC_LA_MOVES]), "lookahead_replies": int(acc[ACC_LA_REPLIES])} if lookahead else {}
    if solver:
        la["proven_nodes"] = int(acc[ACC_PROVEN])
    if prior:
        la["prior_evals"] = int(acc[ACC_PRIOR_EVALS])
    if reused is not None:
        la["reused_nodes"] = int(reused)
    return {
        "iterations": int(acc[ACC_ITER]),
        "solver_calls": int(acc[ACC_SOLVER]),
        "equivalent_moves": int(acc[ACC_EQUIV]),
        "equivalent_candidates": int(acc[ACC_EQUIV_CANDS]),
        "tree_nodes": tree_nodes,
        "nodes_created": int(acc[ACC_NODES]),
        "playout_plies": int(acc[ACC_PLIES]),
        "solver_moves": int(acc[ACC_SOLVER_MOVES]),
        **la,
        "device_seconds": device_us / 1e6,
        "host_cpu_seconds": time.process_time() - cpu0,
    }
