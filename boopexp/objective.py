"""The CO objective f and the solver entry points (HEURISTIC.md §7, AGENTS.md §A), compiled.

A solver call is "enumerate every legal, unmasked move of the mover and score each with f"
(the GHOST complete search prunes nothing on cost, AGENTS.md §A.1); no CP library is needed.

Work buffers are allocated once per caller (:func:`boopexp.buffers.new_work`) and reused: the hot
loop allocates nothing.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boopexp.heuristic import bitboards, clip_score, heuristic_raw_bb
from boopexp.rng import rand_below, shuffle_prefix
from boopexp.rules import PROMO_HEURISTIC, place_and_push, promote_step

NEG_INF = -np.inf


@njit(cache=True)
def objective_ws(st, size, sq, rng, work, groups, scores, ties):
    """f(size, row, col) from the mover's point of view: SIM move, then H (HEURISTIC.md §7).

    QUIRK-H7/H8/H10: no victory test; QUIRK-H9: the promotion tie-break draws from ``rng``, so
    the value may be random when promotion choices tie. This is ``apply_move_inplace(SIM)`` +
    ``heuristic``, with the board's bitboards built once and shared by the promotion test and H.
    """
    for i in range(st.shape[0]):
        work[i] = st[i]
    mover = st[42]
    place_and_push(work, size, sq)  # SIM: no victory test, the side to move is kept
    bs, bl, rs, rl = bitboards(work)
    mine = (bs | bl) if mover < 0 else (rs | rl)
    n, _ = promote_step(work, mover, True, PROMO_HEURISTIC, rng, groups, scores, ties, mine)
    if n > 0:
        bs, bl, rs, rl = bitboards(work)  # pieces were removed
    return clip_score(heuristic_raw_bb(work, mover, bs, bl, rs, rl))


@njit(cache=True)
def score_moves(st, mask, rng, ws_state, groups, scores, ties, codes, values):
    """Score every legal move not in ``mask`` (bool[72]); fill ``codes[:n]``, ``values[:n]``.

    Enumeration order: smalls then larges, squares row-major (AGENTS.md §A.1). Returns n.
    """
    base = 36 if st[42] < 0 else 38
    n = 0
    for size in (1, 2):
        if st[base + size - 1] <= 0:
            continue
        for sq in range(36):
            if st[sq] != 0:
                continue
            code = (size - 1) * 36 + sq
            if mask[code]:
                continue
            codes[n] = code
            values[n] = objective_ws(st, size, sq, rng, ws_state, groups, scores, ties)
            n += 1
    return n


@njit(cache=True)
def best_move_ws(st, mask, rng, ws_state, groups, scores, ties, codes, values, tie_moves):
    """best_move (AGENTS.md §A.2): (move code or -1 when nothing is legal, number of optima).

    The optima are the moves whose f equals the maximum exactly; one is drawn uniformly. More
    than one optimum is the paper's "equivalent moves" event.
    """
    n = score_moves(st, mask, rng, ws_state, groups, scores, ties, codes, values)
    if n == 0:
        return -1, 0  # QUIRK-A1: the original's failure code 42; callers fall back to random
    best = values[0]
    for i in range(1, n):
        if values[i] > best:
            best = values[i]
    nt = 0
    for i in range(n):
        if values[i] == best:
            tie_moves[nt] = codes[i]
            nt += 1
    if nt == 1:
        return tie_moves[0], 1
    return tie_moves[rand_below(rng, nt)], nt


@njit(cache=True)
def best_m_moves_ws(st, m, rng, ws_state, groups, scores, ties, codes, values, tie_moves, out):
    """best_m_moves (AGENTS.md §A.3): fill ``out[:k]`` with the m best move codes; return k.

    Repeatedly take the set T of best not-yet-chosen moves; append all of T if it fits, else a
    uniformly shuffled prefix. Stops when moves run out (QUIRK-A2 would loop forever).
    """
    mask = np.zeros(72, dtype=np.bool_)
    n = score_moves(st, mask, rng, ws_state, groups, scores, ties, codes, values)
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
