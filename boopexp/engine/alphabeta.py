"""The alpha-beta agent: negamax with iterative deepening, a Zobrist transposition table, moves
ordered by f (``objective.score_moves``), H at the leaves, the promotion choice searched, on the
device clock (``search``; docs/budget.md, "Alpha-beta").

Alpha-beta: negamax with iterative deepening, a Zobrist transposition table, move ordering by the
CO objective f and the state heuristic H as evaluation, compiled (docs/agents.md, docs/budget.md).

The knowledge is the paper's, used another way: the moves of a node are tried in the order of
their f (:func:`boopexp.engine.objective.score_moves`, the solver's scoring), after the
transposition table's move; a leaf is worth H from its mover's point of view
(:func:`boopexp.engine.heuristic.heuristic`). The rules are REAL's (what the game plays): a move
that wins for its mover ends the line, scored ``WIN - plies`` so that a nearer win is preferred
and a farther loss; after a move that lines up several candidate groups, each group the mover
may promote is a child of its own (the promotion choice is searched, RULES.md §5): a child is a
``(move code, group index)`` pair, packed ``code * GROUP_SLOTS + group``.

The search state is one :class:`Search` of preallocated arrays, a row per ply. The key of the
table covers the whole state, ``moveNumber`` included, so a position reached at two plies is two
entries: within one iteration an entry is only ever reused at its own depth, and a search at a
fixed depth returns the same value with the table as without it (the table orders moves and
cuts transpositions; it never substitutes a deeper value). The table is cleared for every move:
a position gives the same move whatever was searched before it.

The device clock (docs/budget.md, "Alpha-beta"): every node (a position the search enters, a
winning child included) and every move f scores for the ordering is charged ``unit`` device-µs
(the profile's ``solver_move`` times the agent's ``node_cost_scale``); the driver adds one
``solver_call`` per move. The kernel stops a search at the first node past the budget
(device-µs or nodes) and the driver keeps the deepest result it can trust.

Most kernels count no references (``_nrt=False``: :mod:`boopexp.engine`, docs/engine.md §9).
"""

from __future__ import annotations

import time
from collections import namedtuple

import numpy as np
from numba import njit, uint64

from boopexp.engine.binding import game_of
from boopexp.engine.costs import C_SOLVER_CALL, C_SOLVER_MOVE
from boopexp.engine.jit import inner
from boopexp.engine.outcome import DRAW

# The game this module's kernels play (a template, :mod:`boopexp.engine.binding`): boop.'s kernels
# (:mod:`boopexp.engine.boop_game`) here, another game's in the copy ``bind`` makes for it.
_game = game_of(__name__)
STATE_SIZE = _game.STATE_SIZE
STATE_DTYPE = _game.STATE_DTYPE
TO_MOVE = _game.TO_MOVE
N_MOVE_CODES = _game.N_MOVE_CODES
MAX_FOLLOWUPS = _game.MAX_FOLLOWUPS
new_work = _game.new_work
heuristic = _game.heuristic
score_moves = _game.score_moves
hash_key = _game.hash_key
is_legal = _game.is_legal
place = _game.place
follow_up = _game.follow_up

#: the deepest iteration a search runs (plies); the per-ply buffers have one row more
MAX_DEPTH = 40
#: a win for the side to move now is worth WIN - (plies until it); any H is in [-1, 1]
WIN = 1000.0
#: |value| above this is a proven win or loss
PROVEN = WIN - 2 * MAX_DEPTH
#: a child is packed ``code * GROUP_SLOTS + group``
GROUP_SLOTS = 64
#: the transposition table holds 2**TT_BITS entries (always replace)
TT_BITS = 18
TT_MASK = (1 << TT_BITS) - 1
#: flags of a table entry: the stored value is exact, a lower bound (a cutoff) or an upper bound
EXACT, LOWER, UPPER = 0, 1, 2
#: an ordering value below every f (f is in [-1, 1]): a move already tried
_TRIED = -9.0
_NO_MOVE = -1


#: The counters of a search (``Search.acc``, int64): nodes entered, leaves evaluated by H, moves
#: scored by f for the ordering, table probes, probes that found their position, probes that
#: ended the node, the deepest iteration completed, the abort flag of the running iteration
A_NODES, A_LEAVES, A_SCORED, A_PROBES, A_HITS, A_CUTS, A_DEPTH, A_ABORT = 0, 1, 2, 3, 4, 5, 6, 7
N_A = 8
#: The limits of a search (``Search.limits``, float64): the device budget (µs), the node budget,
#: the charge of a node or scored move (device-µs), 1.0 to enforce the budgets (0.0: the first
#: iteration always completes), 1.0 to use the transposition table
L_BUDGET_US, L_NODES, L_UNIT, L_ENFORCE, L_TT = 0, 1, 2, 3, 4
N_L = 5
#: The root's result (``Search.result``, int64): the best child found by the running iteration
#: (packed; -1 before one root child is searched), the child to try first (the last iteration's)
R_BEST, R_FIRST = 0, 1

#: A node's frame (``Search.frame``, int64 per ply): its remaining depth, its number of legal
#: moves, the next ordering step (0: the first move; k >= 1: the k-th pick by f), the move code
#: being expanded (-1: none), its number of candidate groups, the next group to try, the child
#: being searched (packed), the first child's move code and group (-1: none), the best child
#: (packed), the table slot
F_DEPTH, F_N, F_STEP, F_CODE, F_NGROUPS, F_G, F_CHILD, F_FIRST_CODE, F_FIRST_GROUP, F_BEST, F_SLOT = range(11)
N_F = 11
#: A node's window (``Search.window``, float64 per ply): alpha, beta, alpha on entry, best value
W_ALPHA, W_BETA, W_ALPHA0, W_BEST = 0, 1, 2, 3
N_W = 4
#: The search state: every array a search uses, allocated once per player (:func:`new_search`).
#:   states    STATE_DTYPE[MAX_DEPTH + 1, STATE_SIZE]  the position at each ply (row 0: the root)
#:   pushed    STATE_DTYPE[MAX_DEPTH, STATE_SIZE]  a move placed and pushed, before its promotion
#:   codes     int64[MAX_DEPTH, N_MOVE_CODES]    a node's legal move codes (score_moves)
#:   values    float64[MAX_DEPTH, N_MOVE_CODES]  their f (_TRIED once searched)
#:   groups    int64[MAX_DEPTH, MAX_FOLLOWUPS, 3]  boop.: the candidate groups after the move being searched
#:   work      Work                              f's buffers (:mod:`boopexp.engine.buffers`: ctx, groups,
#:                                               scores, ties; ``mask`` all False: no move is masked)
#:   tt_key    uint64[2**TT_BITS]                an entry's full key (0: empty)
#:   tt_value  float64   tt_depth int64   tt_flag int64   tt_move int64 (packed child)
#:   frame     int64[MAX_DEPTH, N_F]  a node's frame (F_*)   window float64[MAX_DEPTH, N_W] (W_*)
#:   keys      uint64[MAX_DEPTH]      a node's table key
#:   acc       int64[N_A]  the counters (A_*)     limits  float64[N_L] (L_*)
#:   acc_us    float64[1]  the device clock       result  int64[2] (R_*)   value float64[1]
Search = namedtuple(
    "Search",
    ["states", "pushed", "codes", "values", "groups", "work",
     "tt_key", "tt_value", "tt_depth", "tt_flag", "tt_move", "frame", "window", "keys", "acc", "limits", "acc_us",
     "result", "value"],
)


def new_search() -> Search:
    """A fresh search state (the table empty)."""
    size = 1 << TT_BITS
    return Search(
        states=np.zeros((MAX_DEPTH + 1, STATE_SIZE), dtype=STATE_DTYPE),
        pushed=np.zeros((MAX_DEPTH, STATE_SIZE), dtype=STATE_DTYPE),
        codes=np.zeros((MAX_DEPTH, N_MOVE_CODES), dtype=np.int64),
        values=np.zeros((MAX_DEPTH, N_MOVE_CODES), dtype=np.float64),
        groups=np.zeros((MAX_DEPTH, MAX_FOLLOWUPS, 3), dtype=np.int64),
        work=new_work(),
        tt_key=np.zeros(size, dtype=np.uint64),
        tt_value=np.zeros(size, dtype=np.float64),
        tt_depth=np.zeros(size, dtype=np.int64),
        tt_flag=np.zeros(size, dtype=np.int64),
        tt_move=np.zeros(size, dtype=np.int64),
        frame=np.zeros((MAX_DEPTH, N_F), dtype=np.int64),
        window=np.zeros((MAX_DEPTH, N_W), dtype=np.float64),
        keys=np.zeros(MAX_DEPTH, dtype=np.uint64),
        acc=np.zeros(N_A, dtype=np.int64),
        limits=np.zeros(N_L, dtype=np.float64),
        acc_us=np.zeros(1, dtype=np.float64),
        result=np.full(2, _NO_MOVE, dtype=np.int64),
        value=np.zeros(1, dtype=np.float64),
    )


@njit(cache=True, _nrt=False, inline="always")
def _charge_node(s):
    """Count and charge one node; True when the search must stop (a budget is spent)."""
    s.acc[A_NODES] += 1
    s.acc_us[0] += s.limits[L_UNIT]
    if s.limits[L_ENFORCE] != 0.0 and (s.acc_us[0] > s.limits[L_BUDGET_US] or s.acc[A_NODES] > s.limits[L_NODES]):
        s.acc[A_ABORT] = 1
        return True
    return False


#: what :func:`_next_child` found: no child left, a child to search, a child that ends the game:
#: won by its mover, drawn, lost by its mover
_NONE, _CHILD, _WIN_CHILD, _DRAW_CHILD, _LOSS_CHILD = 0, 1, 2, 3, 4


@inner(_nrt=False)
def _enter(s, ply, depth, alpha, beta, rng):
    """Enter the node ``s.states[ply]``: (True, its value) when it needs no children (a leaf, a
    table cutoff, a spent budget: then ``A_ABORT`` is set), else (False, 0.0) with its frame
    ready for :func:`_next_child`."""
    if _charge_node(s):
        return True, 0.0
    st = s.states[ply]
    me = st[TO_MOVE]
    if depth == 0:
        s.acc[A_LEAVES] += 1
        return True, heuristic(st, me)
    fr = s.frame[ply]
    first = _NO_MOVE
    key = hash_key(st)
    slot = np.int64(key & uint64(TT_MASK))
    if s.limits[L_TT] != 0.0:
        s.acc[A_PROBES] += 1
        if s.tt_key[slot] == key:
            s.acc[A_HITS] += 1
            first = s.tt_move[slot]
            if ply > 0 and s.tt_depth[slot] >= depth:
                v = s.tt_value[slot]
                flag = s.tt_flag[slot]
                if flag == EXACT or (flag == LOWER and v >= beta) or (flag == UPPER and v <= alpha):
                    s.acc[A_CUTS] += 1
                    return True, v
    if ply == 0:
        first = s.result[R_FIRST]
    w = s.work
    n = score_moves(st, w.mask, rng, w, s.codes[ply], s.values[ply])
    s.acc[A_SCORED] += n
    s.acc_us[0] += s.limits[L_UNIT] * n
    if n == 0:  # unreachable in boop. (a pool is never empty at its turn); H then
        return True, heuristic(st, me)
    first_code = first // GROUP_SLOTS if first >= 0 else _NO_MOVE
    if first_code >= 0 and not is_legal(st, first_code, w):
        first_code = _NO_MOVE
    fr[F_DEPTH] = depth
    fr[F_N] = n
    fr[F_STEP] = 0
    fr[F_CODE] = _NO_MOVE
    fr[F_NGROUPS] = 0
    fr[F_G] = 0
    fr[F_CHILD] = _NO_MOVE
    fr[F_FIRST_CODE] = first_code
    fr[F_FIRST_GROUP] = first % GROUP_SLOTS if first_code >= 0 else _NO_MOVE
    fr[F_BEST] = _NO_MOVE
    fr[F_SLOT] = slot
    s.keys[ply] = key
    w = s.window[ply]
    w[W_ALPHA] = alpha
    w[W_BETA] = beta
    w[W_ALPHA0] = alpha
    w[W_BEST] = -np.inf
    return False, 0.0


@inner(_nrt=False)
def _next_child(s, ply, rng):
    """The next child of the node at ``ply`` in the search order: the first child (the table's
    or the last iteration's), then the moves by decreasing f, each move's groups in the rules'
    order. ``_CHILD``: its position is in ``s.states[ply + 1]``; ``_WIN_CHILD``: the move wins
    at once; ``_NONE``: every child was tried. The child is ``s.frame[ply, F_CHILD]``."""
    fr = s.frame[ply]
    st = s.states[ply]
    me = st[TO_MOVE]
    pushed = s.pushed[ply]
    groups = s.groups[ply]
    first_code = fr[F_FIRST_CODE]
    while True:
        code = fr[F_CODE]
        if code >= 0:
            n_children = max(fr[F_NGROUPS], 1)
            g = fr[F_G]
            from_first = fr[F_STEP] == 1  # the move being expanded is the first child's
            while g < n_children and ((from_first and g != fr[F_FIRST_GROUP])
                                      or (not from_first and code == first_code and g == fr[F_FIRST_GROUP])):
                g += 1
            if g < n_children:
                fr[F_G] = g + 1
                child = s.states[ply + 1]
                for i in range(STATE_SIZE):
                    child[i] = pushed[i]
                if fr[F_NGROUPS] > 0:
                    follow_up(child, me, groups, g)
                child[TO_MOVE] = -me
                fr[F_CHILD] = code * GROUP_SLOTS + g
                return _CHILD
            fr[F_CODE] = _NO_MOVE
        step = fr[F_STEP]
        fr[F_STEP] = step + 1
        if step == 0:
            if first_code < 0:
                continue
            code = first_code
        else:
            codes = s.codes[ply]
            values = s.values[ply]
            j = 0
            top = _TRIED
            for i in range(fr[F_N]):  # the untried move of the largest f (ties: enumeration order)
                if values[i] > top:
                    top = values[i]
                    j = i
            if top == _TRIED:
                return _NONE
            values[j] = _TRIED
            code = codes[j]
        for i in range(STATE_SIZE):
            pushed[i] = st[i]
        # boop.: placed and pushed; REAL: the mover's victory ends the game before any promotion
        outcome, n_groups = place(pushed, code, rng, s.work, groups)
        if outcome != 0:
            if step == 0:
                fr[F_FIRST_GROUP] = 0  # a move that ends the game has one child, group 0
            elif code == first_code and fr[F_FIRST_GROUP] == 0:
                continue
            fr[F_CHILD] = code * GROUP_SLOTS
            if outcome == me:
                return _WIN_CHILD
            return _DRAW_CHILD if outcome == DRAW else _LOSS_CHILD
        fr[F_CODE] = code
        fr[F_NGROUPS] = n_groups
        fr[F_G] = 0


@njit(cache=True, _nrt=False, inline="always")
def _update(s, ply, v):
    """The node at ``ply`` learns its current child's value ``v``; True on a cutoff."""
    w = s.window[ply]
    if v > w[W_BEST]:
        w[W_BEST] = v
        s.frame[ply, F_BEST] = s.frame[ply, F_CHILD]
        if ply == 0:
            s.result[R_BEST] = s.frame[ply, F_CHILD]
            s.value[0] = v
    if v > w[W_ALPHA]:
        w[W_ALPHA] = v
    return w[W_ALPHA] >= w[W_BETA]


@njit(cache=True, _nrt=False, inline="always")
def _finish(s, ply):
    """The node at ``ply`` is done: store it in the table; its value."""
    w = s.window[ply]
    best = w[W_BEST]
    if s.limits[L_TT] != 0.0:
        slot = s.frame[ply, F_SLOT]
        s.tt_key[slot] = s.keys[ply]
        s.tt_value[slot] = best
        s.tt_depth[slot] = s.frame[ply, F_DEPTH]
        s.tt_flag[slot] = UPPER if best <= w[W_ALPHA0] else (LOWER if best >= w[W_BETA] else EXACT)
        s.tt_move[slot] = s.frame[ply, F_BEST]
    return best


# nogil: as mcts.run_iterations, other threads run while a search does (boopexp serve, a stop)
@njit(cache=True, _nrt=False, nogil=True)
def search_depth(s, root, depth, rng, stop):
    """One iteration: negamax (fail-soft alpha-beta) on ``root``, ``depth`` plies deep, full
    window; an explicit stack of frames, one per ply (numba's cache cannot reload a recursive
    function). Returns True when it completed; ``s.result[R_BEST]`` / ``s.value`` hold the best
    root child found (``R_BEST`` -1: not one root child was searched to the end before the
    budget ran out). ``stop[0]`` non-zero stops it as a spent budget does (not depth 1, which
    always completes): it runs without the GIL, so another thread can set it (:func:`search`)."""
    st = s.states[0]
    for i in range(STATE_SIZE):
        st[i] = root[i]
    s.acc[A_ABORT] = 0
    s.result[R_BEST] = _NO_MOVE
    ply = 0
    done, value = _enter(s, 0, depth, -np.inf, np.inf, rng)
    while True:
        if s.acc[A_ABORT] != 0:
            return False
        if stop[0] != 0 and s.limits[L_ENFORCE] != 0.0:
            s.acc[A_ABORT] = 1
            return False
        if done:  # the node at ply is worth value: back to its parent
            if ply == 0:
                break
            ply -= 1
            if _update(s, ply, -value):
                value = _finish(s, ply)
                continue
            done = False
        kind = _next_child(s, ply, rng)
        if kind == _NONE:
            value = _finish(s, ply)
            done = True
        elif kind != _CHILD:  # the move ends the game: a win for its mover (boop.'s only end), a draw, a loss
            if _charge_node(s):
                return False
            v = WIN - (ply + 1)
            if kind != _WIN_CHILD:
                v = 0.0 if kind == _DRAW_CHILD else -v
            if _update(s, ply, v):
                value = _finish(s, ply)
                done = True
        else:
            w = s.window[ply]
            done, value = _enter(s, ply + 1, s.frame[ply, F_DEPTH] - 1, -w[W_BETA], -w[W_ALPHA], rng)
            ply += 1
    s.acc[A_DEPTH] = depth
    return True


#: the ``stop`` flag of a search nobody stops (:func:`search`)
_NEVER = np.zeros(1, dtype=np.int64)


def search(root_state: np.ndarray, cfg, budget, costs: np.ndarray, rng: np.ndarray, s: Search | None = None,
           throttle: float = 1.0, use_tt: bool = True, stop: np.ndarray | None = None) -> tuple[int, int, dict]:
    """Choose a move: iterative deepening on ``root_state`` under ``budget``; returns the move
    code, the group to promote (an index among the candidate groups the move lines up, RULES.md
    §5; 0 when it lines up fewer than two) and the move's telemetry.

    Depth 1 always completes (a move is always found, however small the budget: its nodes are
    charged and may overrun it, as MCTS's one iteration does); deeper iterations run until the
    budget is spent, ``cfg.max_depth`` (0: :data:`MAX_DEPTH`) is reached or the root's value is
    proven. An iteration stopped by the budget still counts when at least one root child was
    searched to the end: the last iteration's best child is searched first, so a child that
    beats it is better at the deeper depth too.

    Args:
        cfg: the agent's parameters (``node_cost_scale``, ``max_depth``;
            :class:`boopexp.agents.specs.AlphaBetaConfig`).
        budget: device (device-seconds: one ``solver_call`` per move, then ``solver_move ×
            node_cost_scale`` per node and per move scored), iterations (``budget.iterations``
            nodes), cpu or wall (seconds: checked between iterations, the current one stopped
            at the node count the measured rate allows).
        costs: the device cost vector; rng: the kernel generator (f's promotion tie-breaks).
        s: the search buffers (reused between moves; the table is cleared).
        use_tt: the transposition table (off: the same values at a fixed depth, more nodes).
        stop: a one-element int64 array another thread may set non-zero (btp's ``stop``,
            :mod:`boopexp.play.btp`): the running iteration ends at its next node, as when its
            budget is spent, and the move is the best found so far (depth 1 always completes).
            A stopped search is not the one its budget gives: it is not reproducible.
    """
    s = s if s is not None else new_search()
    cpu0 = time.process_time()
    wall0 = time.perf_counter()
    mode = budget.mode
    unit = float(costs[C_SOLVER_MOVE]) * float(cfg.node_cost_scale)
    budget_us = float(budget.seconds) * 1e6 if mode == "device" else np.inf
    node_limit = float(budget.iterations) if mode == "iterations" else np.inf
    reset(s, unit, budget_us, node_limit, use_tt)
    s.acc_us[0] = float(costs[C_SOLVER_CALL])  # one crossing into the search per move
    timed = mode in ("cpu", "wall")
    limit = float(budget.seconds) * (throttle if mode == "cpu" else 1.0)
    clock = time.process_time if mode == "cpu" else time.perf_counter
    start = cpu0 if mode == "cpu" else wall0
    deepest = MAX_DEPTH if cfg.max_depth <= 0 else min(int(cfg.max_depth), MAX_DEPTH)
    best, value = _NO_MOVE, 0.0
    flag = _NEVER if stop is None else stop
    for depth in range(1, deepest + 1):
        s.result[R_FIRST] = best
        done = search_depth(s, root_state, depth, rng, flag)
        s.limits[L_ENFORCE] = 1.0
        if s.result[R_BEST] >= 0:
            best, value = int(s.result[R_BEST]), float(s.value[0])
        if not done or abs(value) > PROVEN:
            break
        if timed:
            elapsed = clock() - start
            if elapsed >= limit:
                break
            nodes = float(s.acc[A_NODES])
            s.limits[L_NODES] = nodes + nodes / max(elapsed, 1e-9) * (limit - elapsed)
    code, group = divmod(best, GROUP_SLOTS)
    return int(code), int(group), move_telemetry(s, cpu0)


def reset(s: Search, unit_us: float, budget_us: float, node_limit: float, use_tt: bool) -> None:
    """Make ``s`` ready for a new move: counters and clock at zero, the table empty, depth 1 not
    stopped by the budgets."""
    s.acc[:] = 0
    s.acc_us[0] = 0.0
    s.result[:] = _NO_MOVE
    s.value[0] = 0.0
    s.tt_key[:] = 0
    s.limits[L_BUDGET_US] = budget_us
    s.limits[L_NODES] = node_limit
    s.limits[L_UNIT] = unit_us
    s.limits[L_ENFORCE] = 0.0
    s.limits[L_TT] = 1.0 if use_tt else 0.0


def move_telemetry(s: Search, cpu0: float) -> dict:
    """A move's telemetry (docs/budget.md): the MCTS counters at 0 but ``solver_moves`` (the moves
    f scored for the ordering), then the deepest iteration completed, the nodes entered and the
    table probes that found their position."""
    return {
        "iterations": 0,
        "solver_calls": 0,
        "equivalent_moves": 0,
        "equivalent_candidates": 0,
        "tree_nodes": 0,
        "nodes_created": 0,
        "playout_plies": 0,
        "solver_moves": int(s.acc[A_SCORED]),
        "search_depth": int(s.acc[A_DEPTH]),
        "search_nodes": int(s.acc[A_NODES]),
        "tt_hits": int(s.acc[A_HITS]),
        "device_seconds": float(s.acc_us[0]) / 1e6,
        "host_cpu_seconds": time.process_time() - cpu0,
    }
