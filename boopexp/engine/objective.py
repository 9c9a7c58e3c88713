"""The CO objective f and the solver calls ``best_move`` / ``best_m_moves`` (AGENTS.md §A).

The CO objective f and the solver entry points (HEURISTIC.md §7, AGENTS.md §A), compiled.

A solver call is "enumerate every legal, unmasked move of the mover and score each with f"
(the GHOST complete search prunes nothing on cost, AGENTS.md §A.1); no CP library is needed.

Work buffers are allocated once per caller (:func:`boopexp.engine.buffers.new_work`, the context
``ctx`` included) and reused: the hot loop allocates nothing.

Most kernels count no references (``_nrt=False``: :mod:`boopexp.engine`, docs/engine.md §9).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boopexp.engine.bits import trailing_zeros
from boopexp.engine.heuristic import (
    MAT_SQ,
    SQUARE_LINES,
    changed_lines_packed,
    clip_score,
    line_context,
    line_entries,
    set_square_lines,
    unpack_line,
)
from boopexp.engine.jit import inner
from boopexp.engine.luts import ANCHOR_LINE1, ANCHOR_LINE2, BOARD_MASK, PUSH_T, PUSH_V
from boopexp.engine.rng import pick, pick_max, shuffle_prefix
from boopexp.engine.rules import (
    colour_masks,
    decode_move,
    encode_move,
    has_three_in_row,
    legal_move_codes,
    line_score,
    pool_index,
    put_group,
    singleton_score,
)
from boopexp.engine.state import N_MOVE_CODES, TO_MOVE

NEG_INF = -np.inf


# The context of a position, shared by all its candidate moves: one int64 buffer.
CTX_LINES = 0  # [0, 32): the line indices seen from the mover (heuristic.line_context)
CTX_ENTRIES = 32  # [32, 64): the table entry of each line
CTX_CARRIES = 64  # [64, 96): the carry-in of each line
CTX_DELTAS = 96  # [96, 128): a move's change of each line index (all 0 between moves)
CTX_PACKED = 128  # the packed LINE of the position
CTX_MAT = 129  # the board part of MAT seen from the mover
CTX_MINE = 130  # bit masks of the mover's pieces, of all pieces, of the small pieces
CTX_OCC = 131
CTX_SMALL = 132
# a move that may promote hands these to :func:`objective_promotion`
CTX_CHANGED = 133  # the lines the move changed (bit mask)
CTX_MOVE_MAT = 134  # the board part of MAT after the push
CTX_MY_LARGE = 135  # larges in the mover's pool after the push
CTX_OP_LARGE = 136  # larges in the opponent's pool after the push
CTX_MINE_AFTER = 137  # bit masks after the push: the mover's pieces, all pieces, the smalls
CTX_OCC_AFTER = 138
CTX_SMALL_AFTER = 139
CTX_POOL_EMPTY = 140  # 1 when the mover's pool is empty after the push
CTX_SIZE = 141
_LINES_WIDTH = 32
#: PUSH_TARGET[sq, v]: where a victim on v goes when a piece lands on its neighbour sq (-1:
#: off the board, -2: v is not a neighbour of sq)
PUSH_TARGET = np.full((36, 36), -2, dtype=np.int64)
#: NEIGHBOURS[sq]: bit mask of the 8 neighbours of sq
NEIGHBOURS = np.zeros(36, dtype=np.int64)
#: BLOCKING_PAIRS[sq, k]: the squares q+e, q+2e of direction k (both on the board), or a bit
#: no board has (promotion score: a singleton between two opponent pieces, HEURISTIC.md §6.2)
BLOCKING_PAIRS = np.full((36, 8), np.int64(1) << np.int64(62), dtype=np.int64)
for _sq in range(36):
    for _k in range(8):
        if PUSH_V[_sq, _k] >= 0:
            PUSH_TARGET[_sq, PUSH_V[_sq, _k]] = PUSH_T[_sq, _k]
            NEIGHBOURS[_sq] |= np.int64(1 << int(PUSH_V[_sq, _k]))
            if PUSH_T[_sq, _k] >= 0:
                BLOCKING_PAIRS[_sq, _k] = np.int64((1 << int(PUSH_V[_sq, _k])) | (1 << int(PUSH_T[_sq, _k])))


def new_context() -> np.ndarray:
    """A context buffer (:func:`objective_context` fills it)."""
    return np.zeros(CTX_SIZE, dtype=np.int64)


@inner(_nrt=False)
def objective_context(st, ctx):
    """Fill ``ctx`` with what every candidate move of ``st`` shares (the CTX_* fields)."""
    mover = st[TO_MOVE]
    lines = ctx[CTX_LINES:CTX_LINES + _LINES_WIDTH]
    ctx[CTX_MAT] = line_context(st, mover, lines)
    ctx[CTX_PACKED] = line_entries(lines, ctx[CTX_ENTRIES:CTX_ENTRIES + _LINES_WIDTH],
                                   ctx[CTX_CARRIES:CTX_CARRIES + _LINES_WIDTH])
    for li in range(_LINES_WIDTH):
        ctx[CTX_DELTAS + li] = 0
    blue, red, blue_l, red_l = colour_masks(st)
    ctx[CTX_MINE] = blue if mover < 0 else red
    ctx[CTX_OCC] = blue | red
    ctx[CTX_SMALL] = (blue ^ blue_l) | (red ^ red_l)


@njit(cache=True, _nrt=False, inline="always")
def context_value(st, ctx):
    """H of the context's own position (``st``, :func:`objective_context`) from its mover's
    point of view (HEURISTIC.md §1-4), from the context's packed LINE and MAT: no scan."""
    mover = st[TO_MOVE]
    my_large = st[pool_index(mover) + 1]
    op_large = st[pool_index(-mover) + 1]
    mat = ctx[CTX_MAT] + 25 * (my_large - op_large)
    return clip_score(unpack_line(ctx[CTX_PACKED], my_large > 0, op_large > 0) + mat)


@inner(_nrt=False, forceinline=True)
def objective_inc(st, ctx, size, sq):
    """f(size, row, col) from the mover's point of view: SIM move, then H (HEURISTIC.md §7),
    from the position's context ``ctx`` (:func:`objective_context`); NaN when the mover may
    have a candidate group after the push (the caller then runs :func:`objective_promotion`).

    Only what the move changes is computed: the pushes are read off ``st`` (pushes in
    different directions never meet: victims are at distance 1, targets at distance 2), each
    square that changes moves the indices of its 4 lines and MAT, and only the changed lines
    are looked up again. No promotion step means no draw from the rng (QUIRK-H9) and no
    victory test (QUIRK-H7/H8/H10): nothing else of SIM is left out.
    """
    mover = st[TO_MOVE]
    base = pool_index(mover)
    my_small = st[base] - (1 if size == 1 else 0)
    my_large = st[base + 1] - (1 if size == 2 else 0)
    op_large = st[pool_index(-mover) + 1]
    mat = ctx[CTX_MAT] + MAT_SQ[size + 2, sq]
    set_square_lines(ctx, CTX_DELTAS, sq, size)
    changed = SQUARE_LINES[sq]
    placed = np.int64(1) << np.int64(sq)
    mine = ctx[CTX_MINE] | placed
    occ = ctx[CTX_OCC]
    small = ctx[CTX_SMALL]
    occ_after = occ | placed
    small_after = small | placed if size == 1 else small
    # the push rule (RULES.md §4, rules.place_and_push): a small pushes only smalls
    victims = NEIGHBOURS[sq] & (occ if size == 2 else small)
    while victims != 0:
        v = trailing_zeros(victims)
        victims &= victims - 1
        t = PUSH_TARGET[sq, v]
        if t >= 0 and (occ >> t) & 1:
            continue  # an occupied target blocks (no chain pushing)
        old = st[v] * mover
        set_square_lines(ctx, CTX_DELTAS, v, -old)
        changed |= SQUARE_LINES[v]
        mat -= MAT_SQ[old + 2, v]
        vbit = np.int64(1) << np.int64(v)
        if old > 0:
            mine ^= vbit
        occ_after ^= vbit
        small_after &= ~vbit
        if t >= 0:  # slides to t
            set_square_lines(ctx, CTX_DELTAS, t, old)
            changed |= SQUARE_LINES[t]
            mat += MAT_SQ[old + 2, t]
            tbit = np.int64(1) << np.int64(t)
            occ_after |= tbit
            if old == 1 or old == -1:
                small_after |= tbit
            if old > 0:
                mine |= tbit
        elif old == 1:  # ejected: back to its owner's pool
            my_small += 1
        elif old == 2:
            my_large += 1
        elif old == -2:
            op_large += 1
    if (my_small == 0 and my_large == 0) or has_three_in_row(mine):  # rules.may_have_groups
        ctx[CTX_CHANGED] = changed
        ctx[CTX_MOVE_MAT] = mat
        ctx[CTX_MY_LARGE] = my_large
        ctx[CTX_OP_LARGE] = op_large
        ctx[CTX_MINE_AFTER] = mine
        ctx[CTX_OCC_AFTER] = occ_after
        ctx[CTX_SMALL_AFTER] = small_after
        ctx[CTX_POOL_EMPTY] = 1 if (my_small == 0 and my_large == 0) else 0
        return np.nan
    return _finish(ctx, changed, mat, my_large, op_large)


@njit(cache=True, _nrt=False, inline="always")
def _finish(ctx, changed, mat, my_large, op_large):
    """H after a move from the lines it changed, MAT's board part and the pools' larges."""
    packed = changed_lines_packed(ctx[CTX_PACKED], changed, ctx, CTX_LINES, CTX_DELTAS, CTX_ENTRIES, CTX_CARRIES)
    # leave the deltas at 0 for the next move (all of them: a straight run of stores is faster
    # than visiting the changed ones)
    for li in range(_LINES_WIDTH):
        ctx[CTX_DELTAS + li] = 0
    mat += 25 * (my_large - op_large)
    return clip_score(unpack_line(packed, my_large > 0, op_large > 0) + mat)


@inner(_nrt=False)
def objective_promotion(ctx, rng, groups, scores, ties):
    """f of a move for which :func:`objective_inc` returned NaN: the promotion step of SIM on
    the board after the push, from the bit masks the move left in ``ctx``; the removed squares
    are added to the move's changes.

    The same list, scores and choice as rules.promote_step with the C++ list and the heuristic
    choice (candidate_groups / promotion_score / choose_group: HEURISTIC.md §6; QUIRK-H9: exact
    ties draw from ``rng`` as there), on masks instead of cells; tests/test_objective.py holds
    the two to the same values and the same draws. Kept apart from the common path (~4-7 % of
    the moves).
    """
    mine = ctx[CTX_MINE_AFTER]
    small = ctx[CTX_SMALL_AFTER]
    opp = ctx[CTX_OCC_AFTER] & ~mine
    pool_empty = ctx[CTX_POOL_EMPTY] == 1
    # candidate groups in the app's order (rules.candidate_groups, exclude_all_large=True)
    n = 0
    cap = groups.shape[0] - 5
    m = mine
    while m != 0 and n <= cap:
        sq = trailing_zeros(m)
        m &= m - 1
        if pool_empty:
            n = put_group(groups, n, sq, -1, -1)
        for k in range(4):
            a = ANCHOR_LINE1[sq, k]
            if a < 0:
                continue
            b = ANCHOR_LINE2[sq, k]
            line = (np.int64(1) << np.int64(sq)) | (np.int64(1) << np.int64(a)) | (np.int64(1) << np.int64(b))
            if mine & line == line:
                if small & line == 0:
                    continue  # an all-large line: not in the C++ list
                n = put_group(groups, n, sq, a, b)
    changed = ctx[CTX_CHANGED]
    mat = ctx[CTX_MOVE_MAT]
    my_large = ctx[CTX_MY_LARGE]
    if n > 0:
        chosen = 0
        if n > 1:  # rules.choose_group: one group is taken without scoring
            for i in range(n):
                scores[i] = _promotion_score(groups[i, 0], groups[i, 1], groups[i, 2], mine, small, opp)
            chosen = pick_max(rng, scores, n, ties)
        for j in range(3):
            q = groups[chosen, j]
            if q >= 0:
                old = 1 if (small >> q) & 1 else 2  # the piece's value (mine) before it goes
                set_square_lines(ctx, CTX_DELTAS, q, -old)
                changed |= SQUARE_LINES[q]
                mat -= MAT_SQ[old + 2, q]
                my_large += 1  # small or large, it goes to the pool as a large
    return _finish(ctx, changed, mat, my_large, ctx[CTX_OP_LARGE])


@njit(cache=True, _nrt=False, inline="always")
def _promotion_score(c0, c1, c2, mine, small, opp):
    """rules.promotion_score (HEURISTIC.md §6.2) from bit masks; ``c1 == -1``: a singleton."""
    if c1 < 0:
        if (small >> c0) & 1 == 0:
            return 0  # a large singleton
        blocking = False
        for k in range(8):
            if opp & BLOCKING_PAIRS[c0, k] == BLOCKING_PAIRS[c0, k]:
                blocking = True
                break
        return singleton_score(c0, NEIGHBOURS[c0] & mine != 0, blocking)
    return line_score(((small >> c0) & 1) + ((small >> c1) & 1) + ((small >> c2) & 1), c0, c1, c2)


@njit(cache=True, _nrt=False)
def objective_ws(st, size, sq, rng, ctx, groups, scores, ties):
    """f(size, row, col) from the mover's point of view (HEURISTIC.md §7) for one move.

    The context (in the work buffer ``ctx``) is built for this one move; the solver
    (:func:`solve`, :func:`score_moves`) builds it once per position and scores every move from it.
    """
    objective_context(st, ctx)
    value = objective_inc(st, ctx, size, sq)
    if value != value:
        value = objective_promotion(ctx, rng, groups, scores, ties)
    return value


@inner(_nrt=False)
def score_moves(st, mask, rng, ctx, groups, scores, ties, codes, values):
    """Score every legal move not in ``mask`` (bool[72]); fill ``codes[:n]``, ``values[:n]``.

    Enumeration order: rules.legal_move_codes' (smalls then larges, squares row-major,
    AGENTS.md §A.1). Returns n. The position's context (line indices, MAT, masks) is built once,
    in ``ctx`` (int64[CTX_SIZE], a work buffer), for all its moves.
    """
    objective_context(st, ctx)
    n_legal = legal_move_codes(st, codes)
    n = 0
    for i in range(n_legal):
        code = codes[i]
        if mask[code]:
            continue
        codes[n] = code  # n <= i: compacting in place
        size, sq = decode_move(code)
        value = objective_inc(st, ctx, size, sq)
        if value != value:  # the promotion step may run
            value = objective_promotion(ctx, rng, groups, scores, ties)
        values[n] = value
        n += 1
    return n


@njit(cache=True, _nrt=False, inline="always")
def keep_best(value, item, best, nb, buf):
    """Running argmax that keeps exact ties: the new (best, nb), the tied items in ``buf[:nb]``
    in the order they came (the solver's optimal moves, the search's UCT and final choices)."""
    if value > best:
        best = value
        nb = 0
    if value == best:
        buf[nb] = item
        nb += 1
    return best, nb


@inner(_nrt=False)
def solve(st, mask, rng, ctx, groups, scores, ties, tie_moves):
    """best_move with what a search charges for it: (move code or -1, number of optima, legal
    moves of the position, masked ones included, the optimal f).

    One pass: the legal moves are read off the context's occupancy mask in
    rules.legal_move_codes' order and the optima are kept as they come (``tie_moves[:nt]``, in
    that order), so the draw among them is the one :func:`best_move_ws` made from the full list.
    """
    objective_context(st, ctx)
    base = pool_index(st[TO_MOVE])
    empty = ~ctx[CTX_OCC] & BOARD_MASK
    n_legal = 0
    nt = 0
    best = NEG_INF
    for size in (1, 2):
        if st[base + size - 1] <= 0:
            continue
        m = empty
        while m != 0:
            sq = trailing_zeros(m)
            m &= m - 1
            n_legal += 1
            code = encode_move(size, sq)
            if mask[code]:
                continue
            value = objective_inc(st, ctx, size, sq)
            if value != value:  # the promotion step may run
                value = objective_promotion(ctx, rng, groups, scores, ties)
            best, nt = keep_best(value, code, best, nt, tie_moves)
    if nt == 0:
        return -1, 0, n_legal, best  # QUIRK-A1: the original's failure code 42; callers fall back to random
    return pick(rng, tie_moves, nt), nt, n_legal, best


@njit(cache=True, _nrt=False)
def best_move_ws(st, mask, rng, ctx, groups, scores, ties, codes, values, tie_moves):
    """best_move (AGENTS.md §A.2): (move code or -1 when nothing is legal, number of optima).

    The optima are the moves whose f equals the maximum exactly; one is drawn uniformly. More
    than one optimum is the paper's "equivalent moves" event. ``codes``, ``values``: unused
    (kept for the callers' signature, :func:`boopexp.engine.buffers.solver_buffers`).
    """
    code, nt, _, _ = solve(st, mask, rng, ctx, groups, scores, ties, tie_moves)
    return code, nt


@njit(cache=True)
def best_m_moves_ws(st, m, rng, ctx, groups, scores, ties, codes, values, tie_moves, out):
    """best_m_moves (AGENTS.md §A.3): fill ``out[:k]`` with the m best move codes; return k.

    Repeatedly take the set T of best not-yet-chosen moves; append all of T if it fits, else a
    uniformly shuffled prefix. Stops when moves run out (QUIRK-A2 would loop forever).
    """
    mask = np.zeros(N_MOVE_CODES, dtype=np.bool_)
    return best_m_moves_masked_ws(st, mask, m, rng, ctx, groups, scores, ties, codes, values, tie_moves, out)


@inner()
def best_m_moves_masked_ws(st, mask, m, rng, ctx, groups, scores, ties, codes, values, tie_moves, out):
    """:func:`best_m_moves_ws` among the legal moves not in ``mask`` (bool[72]); the paper's call
    has no mask (all False: the same moves scored, the same draws). The two-stage constraint
    (:mod:`boopexp.engine.lookahead`) masks the unsafe moves; k < m when fewer moves remain."""
    n = score_moves(st, mask, rng, ctx, groups, scores, ties, codes, values)
    return take_m_best(n, m, rng, codes, values, tie_moves, out)


@inner()
def take_m_best(n, m, rng, codes, values, tie_moves, out):
    """AGENTS.md §A.3's choice among ``n`` scored moves (``codes[:n]``, their f ``values[:n]``):
    the sets of equal f from the best down, whole while they fit in ``m``, then a uniformly
    shuffled prefix of the next; the moves into ``out[:k]``, returns k (< m when moves run out):
    **the** m-best rule, boop.'s and every game's (:mod:`boopexp.engine.defaults`)."""
    taken = np.zeros(n, dtype=np.bool_)
    k = 0
    while k < m:
        best = NEG_INF
        found = False
        for i in range(n):
            if not taken[i] and (not found or values[i] > best):
                best = values[i]
                found = True
        if not found:
            break
        nt = 0
        for i in range(n):
            if not taken[i] and values[i] == best:
                tie_moves[nt] = i
                nt += 1
                taken[i] = True
        if k + nt <= m:
            for j in range(nt):
                out[k] = codes[tie_moves[j]]
                k += 1
        else:
            shuffle_prefix(rng, tie_moves, nt)
            for j in range(m - k):
                out[k] = codes[tie_moves[j]]
                k += 1
    return k
