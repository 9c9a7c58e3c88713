"""MCTS_GHOST with the three CO injections (AGENTS.md §B), compiled.

The tree is a handful of parallel arrays allocated up front (node states, parents, moves,
scores, visits, child links), like mctx. Every QUIRK-A of the reference is kept and labelled;
:class:`boopexp.agents.MCTSConfig` documents the parameters.

The compute budget is charged inside the kernels on an emulated device clock (``acc_us``, in
device-microseconds) with the costs of a :class:`boopexp.budget.DeviceProfile`; the Python
driver (:func:`search`) decides when to stop from that clock, from an iteration count, or from
the host's CPU / wall clock.
"""

from __future__ import annotations

import math
import time
from collections import namedtuple

import numpy as np
from numba import njit

from boopexp.budget import C_ITERATION, C_NODE, C_RANDOM_PLY, C_SOLVER_CALL, C_SOLVER_MOVE
from boopexp.heuristic import heuristic
from boopexp.luts import RING
from boopexp.objective import best_m_moves_ws, best_move_ws
from boopexp.rng import rand_below
from boopexp.rules import MAX_GROUPS, PROMO_HEURISTIC, TREE, apply_move_inplace, has_won
from boopexp.state import N_MOVE_CODES, STATE_SIZE

#: value of an unvisited child in UCT (AGENTS.md §B.5)
UNVISITED_UCT = 999999.9
#: nodes a search tree starts with (the root's children, at most 72, and room to grow)
INITIAL_CAPACITY = 1024

Tree = namedtuple(
    "Tree",
    ["states", "parent", "move", "player", "score", "visits", "terminal",
     "first_child", "last_child", "next_sibling", "n_children", "masked", "count"],
)
Work = namedtuple(
    "Work",
    ["state", "groups", "scores", "ties", "codes", "values", "tie_moves", "mask", "squares",
     "playout", "path", "best"],
)
#: int64 counters of one search: iterations, solver calls, equivalent moves, and the primitives
#: the device clock charges (nodes created, playout plies, moves scored by the solver)
#: and the moves in those ties (the other reading of the paper's "equivalent moves", docs/budget.md)
ACC_ITER, ACC_SOLVER, ACC_EQUIV, ACC_NODES, ACC_PLIES, ACC_SOLVER_MOVES, ACC_EQUIV_CANDS = 0, 1, 2, 3, 4, 5, 6
N_ACC = 7


def new_tree(capacity: int) -> Tree:
    return Tree(
        states=np.zeros((capacity, STATE_SIZE), dtype=np.int16),
        parent=np.full(capacity, -1, dtype=np.int64),
        move=np.full(capacity, -1, dtype=np.int64),
        player=np.zeros(capacity, dtype=np.int64),
        score=np.zeros(capacity, dtype=np.float64),
        visits=np.zeros(capacity, dtype=np.int64),
        terminal=np.zeros(capacity, dtype=np.bool_),
        first_child=np.full(capacity, -1, dtype=np.int64),
        last_child=np.full(capacity, -1, dtype=np.int64),
        next_sibling=np.full(capacity, -1, dtype=np.int64),
        n_children=np.zeros(capacity, dtype=np.int64),
        masked=np.zeros(capacity, dtype=np.bool_),
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


def new_work() -> Work:
    return Work(
        state=np.empty(STATE_SIZE, dtype=np.int16),
        groups=np.empty((MAX_GROUPS, 3), dtype=np.int64),
        scores=np.empty(MAX_GROUPS, dtype=np.int64),
        ties=np.empty(MAX_GROUPS, dtype=np.int64),
        codes=np.empty(N_MOVE_CODES, dtype=np.int64),
        values=np.empty(N_MOVE_CODES, dtype=np.float64),
        tie_moves=np.empty(N_MOVE_CODES, dtype=np.int64),
        mask=np.zeros(N_MOVE_CODES, dtype=np.bool_),
        squares=np.empty(36, dtype=np.int64),
        playout=np.empty(STATE_SIZE, dtype=np.int16),
        path=np.empty(4096, dtype=np.int64),
        best=np.empty(N_MOVE_CODES, dtype=np.int64),
    )


# ------------------------------------------------------------------------------------------
# primitives


@njit(cache=True)
def random_move(st, banned, rng, squares):
    """AGENTS.md §B.9: a random move code, avoiding the ``banned`` codes (bool[72]).

    QUIRK-A12: the size is a uniformly random element of the pool list, so P(large) is the share
    of larges in the pool, not the share of large moves.
    """
    base = 36 if st[42] < 0 else 38
    ns = st[base]
    nl = st[base + 1]
    size = 1 if rand_below(rng, ns + nl) < ns else 2
    off = (size - 1) * 36
    n = 0
    for sq in range(36):
        if st[sq] == 0 and not banned[off + sq]:
            squares[n] = sq
            n += 1
    if n == 0:  # unreachable under the fully-expanded rule (B.5); the original would throw
        return -1
    return off + squares[rand_below(rng, n)]


@njit(cache=True)
def count_legal(st):
    base = 36 if st[42] < 0 else 38
    n_empty = 0
    for i in range(36):
        if st[i] == 0:
            n_empty += 1
    sizes = (1 if st[base] > 0 else 0) + (1 if st[base + 1] > 0 else 0)
    return n_empty * sizes


@njit(cache=True)
def solver_best_move(st, mask, rng, work, acc, acc_us, costs):
    """best_move with telemetry and device cost; -1 when every legal move is masked."""
    code, ties = best_move_ws(
        st, mask, rng, work.state, work.groups, work.scores, work.ties, work.codes, work.values, work.tie_moves
    )
    n_scored = count_legal(st)
    acc[ACC_SOLVER] += 1
    acc[ACC_SOLVER_MOVES] += n_scored
    if ties > 1:
        acc[ACC_EQUIV] += 1  # the paper's "equivalent moves" event
        acc[ACC_EQUIV_CANDS] += ties
    acc_us[0] += costs[C_SOLVER_CALL] + costs[C_SOLVER_MOVE] * n_scored
    return code


@njit(cache=True)
def create_node(tree, parent_id, code, rng, work, acc, acc_us, costs):
    """AGENTS.md §B.3 (TREE engine); returns the new node id."""
    nid = tree.count[0]
    tree.count[0] = nid + 1
    st = tree.states[nid]
    pst = tree.states[parent_id]
    for i in range(STATE_SIZE):
        st[i] = pst[i]
    mover = pst[42]
    # place, push, moveNumber += 1; QUIRK-A3: victory of both colours, Blue first; else the
    # promotion heuristic picks a group (the single group too: same result as automatic).
    winner, _, _ = apply_move_inplace(
        st, code // 36 + 1, code % 36, TREE, PROMO_HEURISTIC, rng, work.groups, work.scores, work.ties
    )
    tree.parent[nid] = parent_id
    tree.move[nid] = code
    tree.player[nid] = mover
    tree.terminal[nid] = winner != 0
    if winner == 0:
        tree.score[nid] = 0.0
    elif winner == mover:
        tree.score[nid] = 1.0
    else:
        tree.score[nid] = -1.0
    tree.visits[nid] = 0
    tree.first_child[nid] = -1
    tree.last_child[nid] = -1
    tree.next_sibling[nid] = -1
    tree.n_children[nid] = 0
    tree.masked[nid] = False
    if tree.last_child[parent_id] < 0:
        tree.first_child[parent_id] = nid
    else:
        tree.next_sibling[tree.last_child[parent_id]] = nid
    tree.last_child[parent_id] = nid
    tree.n_children[parent_id] += 1
    acc[ACC_NODES] += 1
    acc_us[0] += costs[C_NODE]
    return nid


@njit(cache=True)
def backpropagate(tree, node_id, value):
    """AGENTS.md §B.7: negate once per level, up to and including the root (id 0)."""
    n = node_id
    v = value
    while True:
        tree.score[n] += -v
        tree.visits[n] += 1
        if n == 0:
            break
        n = tree.parent[n]
        v = -v


@njit(cache=True)
def playout(tree, e_id, params, rng, work, acc, acc_us, costs):
    """AGENTS.md §B.8: the value of E's state from the point of view of S = E's parent."""
    first_n = params[2]
    depth = params[3]
    discount = params[5]
    offset = params[6]
    fix_a9 = params[8] != 0.0
    st = work.playout
    src = tree.states[e_id]
    for i in range(STATE_SIZE):
        st[i] = src[i]
    persp = tree.player[tree.parent[e_id]]  # fixed for the whole playout (= side to move in E)
    n = 0
    total = 0.0
    winner = 0
    no_mask = work.mask  # all False outside create/expand
    while winner == 0 and (depth == 0 or n < depth):
        code = -1
        if n < first_n:
            code = solver_best_move(st, no_mask, rng, work, acc, acc_us, costs)
        if code < 0:
            code = random_move(st, no_mask, rng, work.squares)
        winner, _, _ = apply_move_inplace(
            st, code // 36 + 1, code % 36, TREE, PROMO_HEURISTIC, rng, work.groups, work.scores, work.ties
        )
        n += 1
        acc[ACC_PLIES] += 1
        acc_us[0] += costs[C_RANDOM_PLY]
        if winner == 0:
            # QUIRK-A10: exponent n - 1 (offset 1; the paper's prose: offset 0); H, not f,
            # from the fixed perspective of S's player.
            total += discount ** (n - offset) * heuristic(st, persp)
    if winner != 0:
        bonus = discount ** (n - offset)
        if fix_a9:
            total += bonus if winner == persp else -bonus
        elif winner < 0:
            total -= bonus  # QUIRK-A9: terminal bonus in absolute colours (Blue -, Red +)
        else:
            total += bonus
    return total / n


@njit(cache=True, inline="always")
def _keep_best(value, node, best, nb, buf):
    """Running argmax that keeps exact ties: the new (best, nb), the tied nodes in ``buf[:nb]``."""
    if value > best:
        best = value
        nb = 0
    if value == best:
        buf[nb] = node
        nb += 1
    return best, nb


@njit(cache=True, inline="always")
def _pick(buf, nb, rng):
    """One of ``buf[:nb]`` uniformly at random (no draw when there is a single one)."""
    return buf[0] if nb == 1 else buf[rand_below(rng, nb)]


@njit(cache=True)
def descend(tree, params, rng, work):
    """AGENTS.md §B.5 (``uct_descend``)."""
    m = params[0]
    early = params[4]
    c_uct = params[7]
    node = 0
    while True:
        st = tree.states[node]
        n_empty = 0
        for i in range(36):
            if st[i] == 0:
                n_empty += 1
        k = early if (m == 0 and st[43] < early) else 0
        # QUIRK-A4: "fully expanded" compares the child count with the EMPTY SQUARES.
        if tree.n_children[node] < n_empty - k:
            return node
        log_n = math.log(tree.visits[node])
        nb = 0
        best = -np.inf
        c = tree.first_child[node]
        while c >= 0:
            # Masks only exist on root children; QUIRK-A5: the m = 0 border mask lapses once the
            # child's moveNumber exceeds the horizon.
            if not tree.masked[c] or (m == 0 and tree.states[c][43] > early):
                if tree.visits[c] == 0:
                    u = UNVISITED_UCT
                else:
                    u = tree.score[c] / tree.visits[c] + c_uct * math.sqrt(log_n / tree.visits[c])
                best, nb = _keep_best(u, c, best, nb, work.best)
            c = tree.next_sibling[c]
        if nb == 0:
            return node
        node = _pick(work.best, nb, rng)


@njit(cache=True)
def iterate(tree, params, rng, work, acc, acc_us, costs):
    """One MCTS iteration (AGENTS.md §B.6)."""
    acc[ACC_ITER] += 1
    acc_us[0] += costs[C_ITERATION]
    s_id = descend(tree, params, rng, work)
    if tree.terminal[s_id]:
        # QUIRK-A6: the terminal node keeps its +-1 score while its visits grow.
        tree.visits[s_id] += 1
        backpropagate(tree, tree.parent[s_id], tree.score[s_id])
        return
    banned = work.mask
    c = tree.first_child[s_id]
    while c >= 0:
        banned[tree.move[c]] = True
        c = tree.next_sibling[c]
    code = -1
    if params[1] != 0.0:
        code = solver_best_move(tree.states[s_id], banned, rng, work, acc, acc_us, costs)
    if code < 0:
        code = random_move(tree.states[s_id], banned, rng, work.squares)
    c = tree.first_child[s_id]
    while c >= 0:
        banned[tree.move[c]] = False
        c = tree.next_sibling[c]
    e_id = create_node(tree, s_id, code, rng, work, acc, acc_us, costs)
    if not tree.terminal[e_id]:
        # QUIRK-A7: divided by the number of S's children (E included).
        tree.score[e_id] = -playout(tree, e_id, params, rng, work, acc, acc_us, costs) / tree.n_children[s_id]
    # QUIRK-A8: E's own visit count stays 0.
    backpropagate(tree, s_id, tree.score[e_id])


@njit(cache=True)
def install_root(tree, root_state):
    """Make ``root_state`` the tree's only node: id 0, visits 1, player = the side NOT to move."""
    tree.count[0] = 1
    st = tree.states[0]
    for i in range(STATE_SIZE):
        st[i] = root_state[i]
    tree.parent[0] = -1
    tree.move[0] = -1
    tree.player[0] = -root_state[42]
    tree.score[0] = 0.0
    tree.visits[0] = 1
    tree.terminal[0] = False
    tree.first_child[0] = -1
    tree.last_child[0] = -1
    tree.next_sibling[0] = -1
    tree.n_children[0] = 0
    tree.masked[0] = False


@njit(cache=True)
def init_root(tree, root_state, params, rng, work, acc, acc_us, costs):
    """AGENTS.md §B.4 steps 1–2: the root, ALL its children up front, and the root mask."""
    m = np.int64(params[0])
    install_root(tree, root_state)
    base = 36 if root_state[42] < 0 else 38
    for size in (1, 2):
        if root_state[base + size - 1] <= 0:
            continue
        for sq in range(36):
            if root_state[sq] == 0:
                create_node(tree, 0, (size - 1) * 36 + sq, rng, work, acc, acc_us, costs)
    if m > 0:
        keep = np.zeros(N_MOVE_CODES, dtype=np.bool_)
        k = best_m_moves_ws(
            root_state, m, rng, work.state, work.groups, work.scores, work.ties, work.codes, work.values,
            work.tie_moves, work.path,
        )
        n_root = count_legal(root_state)
        acc[ACC_SOLVER] += 1
        acc[ACC_SOLVER_MOVES] += n_root
        acc_us[0] += costs[C_SOLVER_CALL] + costs[C_SOLVER_MOVE] * n_root
        for j in range(k):
            keep[work.path[j]] = True
        c = tree.first_child[0]
        while c >= 0:
            tree.masked[c] = k > 0 and not keep[tree.move[c]]  # failure masks nothing
            c = tree.next_sibling[c]
    else:
        c = tree.first_child[0]
        while c >= 0:
            tree.masked[c] = RING[tree.move[c] % 36] == 1  # QUIRK-A5 early border mask
            c = tree.next_sibling[c]


@njit(cache=True)
def run_iterations(tree, params, rng, work, acc, acc_us, costs, max_iters, budget_us):
    """Iterate while the device clock is under ``budget_us`` (checked before each iteration:
    an iteration in progress always completes), at most ``max_iters`` times, and while the tree
    has room for one more node. Returns the number of iterations run."""
    capacity = tree.states.shape[0]
    done = 0
    while done < max_iters and acc_us[0] < budget_us and tree.count[0] < capacity:
        iterate(tree, params, rng, work, acc, acc_us, costs)
        done += 1
    return done


@njit(cache=True)
def final_choice(tree, ai_colour, rng, work):
    """AGENTS.md §B.10: an immediate win among ALL root children, else the best mean value."""
    c = tree.first_child[0]
    while c >= 0:
        if has_won(tree.states[c], ai_colour):
            return tree.move[c]
        c = tree.next_sibling[c]
    nb = 0
    best = -np.inf
    c = tree.first_child[0]
    while c >= 0:
        if tree.visits[c] > 0:
            best, nb = _keep_best(tree.score[c] / tree.visits[c], c, best, nb, work.best)
        c = tree.next_sibling[c]
    if nb == 0:
        return -1
    return tree.move[_pick(work.best, nb, rng)]


# ------------------------------------------------------------------------------------------
# Python driver


def params_vector(cfg) -> np.ndarray:
    """The MCTSConfig as the float vector the kernels read."""
    return np.array(
        [
            cfg.preselect_m,
            1.0 if cfg.co_expansion else 0.0,
            cfg.co_playout_plies,
            cfg.playout_depth,
            cfg.early_mask_plies,
            cfg.discount,
            cfg.discount_offset,
            cfg.uct_c,
            1.0 if cfg.fix_a9 else 0.0,
        ],
        dtype=np.float64,
    )


def search(root_state: np.ndarray, cfg, budget, costs: np.ndarray, rng: np.ndarray, work: Work | None = None,
           throttle: float = 1.0) -> tuple[int, dict]:
    """select_move (AGENTS.md §B.4): the chosen move code and this move's telemetry.

    Args:
        root_state: the position (side to move = the AI).
        cfg: MCTSConfig. budget: Budget. costs: device cost vector (DeviceProfile order).
        rng: kernel RNG state (advanced in place).
        throttle: cpu mode: host CPU seconds that count as one emulated second.
    """
    work = work or new_work()
    params = params_vector(cfg)
    acc = np.zeros(N_ACC, dtype=np.int64)
    acc_us = np.zeros(1, dtype=np.float64)
    cpu0 = time.process_time()
    wall0 = time.perf_counter()
    mode = budget.mode
    # The tree starts small and grows on demand (a device budget's worst case, every iteration
    # creating a node at the cheapest cost, would pre-allocate far more than a search uses).
    # Capacity never changes which nodes are created, so it never changes a game.
    tree = new_tree(INITIAL_CAPACITY)
    init_root(tree, root_state, params, rng, work, acc, acc_us, costs)
    if mode in ("device", "iterations"):
        budget_us = float(budget.seconds) * 1e6 if mode == "device" else np.inf
        max_iters = int(budget.iterations) if mode == "iterations" else np.iinfo(np.int64).max
        while acc[ACC_ITER] < max_iters and acc_us[0] < budget_us:
            tree = _with_room(tree)
            run_iterations(tree, params, rng, work, acc, acc_us, costs, max_iters - acc[ACC_ITER], budget_us)
    else:
        limit = float(budget.seconds) * (throttle if mode == "cpu" else 1.0)
        clock = time.process_time if mode == "cpu" else time.perf_counter
        start = cpu0 if mode == "cpu" else wall0
        # "while now() - start < timeout": the root initialisation counts.
        while clock() - start < limit:
            tree = _with_room(tree)
            run_iterations(tree, params, rng, work, acc, acc_us, costs, 1, np.inf)
    if acc[ACC_ITER] == 0:
        # Degenerate tiny budgets: the original would throw with no visited child; one
        # iteration is always run instead (documented in docs/agents.md).
        tree = _with_room(tree)
        run_iterations(tree, params, rng, work, acc, acc_us, costs, 1, np.inf)
    code = final_choice(tree, int(root_state[42]), rng, work)
    return int(code), move_telemetry(acc, float(acc_us[0]), int(tree.count[0]), cpu0)


def move_telemetry(acc: np.ndarray, device_us: float, tree_nodes: int, cpu0: float) -> dict:
    """One move's telemetry (docs/architecture.md) from the counters of a search (or of a
    baseline agent's move); ``cpu0`` is ``time.process_time()`` when the move started."""
    return {
        "iterations": int(acc[ACC_ITER]),
        "solver_calls": int(acc[ACC_SOLVER]),
        "equivalent_moves": int(acc[ACC_EQUIV]),
        "equivalent_candidates": int(acc[ACC_EQUIV_CANDS]),
        "tree_nodes": tree_nodes,
        "nodes_created": int(acc[ACC_NODES]),
        "playout_plies": int(acc[ACC_PLIES]),
        "solver_moves": int(acc[ACC_SOLVER_MOVES]),
        "device_seconds": device_us / 1e6,
        "host_cpu_seconds": time.process_time() - cpu0,
    }
