"""The rules (REAL / TREE / SIM), the promotion heuristic's score, **the** legal-move enumeration
(``legal_move_codes``, ``legal_move_count``), **the** random move (``random_move``) and the
move-code layout compiled for the kernels (``encode_move`` / ``decode_move``, inlined twins of
state.py's).

The rules of boop. as the Pobo 0.6.2 engines play them (RULES.md), compiled.

One engine, three variants selected by an explicit argument (RULES.md §10):

* ``REAL`` — the app's game model in real games: victory of the mover only, checked after
  placement + push; one candidate group is promoted (the single one automatically, otherwise
  the agent's choice).
* ``TREE`` — the same model as driven by the MCTS agent: victory of BOTH colours after every move,
  Blue first when both (QUIRK-A3); otherwise the promotion heuristic picks a group.
* ``SIM`` — the C++ simulator inside the CO objective: no victory test at all (QUIRK-H7/H8),
  all-large lines are not candidates, the promotion heuristic picks a group, the side to move is
  not switched.

Kernels work on explicit copies: the input state is never written.

Most kernels count no references (``_nrt=False``: :mod:`boopexp.engine`, docs/engine.md §9).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boopexp.engine import state
from boopexp.engine.jit import inner
from boopexp.engine.luts import (
    ANCHOR_LINE1,
    ANCHOR_LINE2,
    BOARD_MASK,
    CENTRE,
    DIR_DELTA,
    PUSH_T,
    PUSH_V,
    RING,
    TRIPLE_START,
)
from boopexp.engine.rng import pick_max, rand_below
from boopexp.engine.state import (
    L_BLUE,
    L_RED,
    MOVE_NUMBER,
    N_SQUARES,
    POOL_BASE_BLUE,
    POOL_BASE_RED,
    TO_MOVE,
)

# The variants and the promotion policies are numpy int64 scalars, not Python ints: numba types a
# Python int constant that a kernel passes as its own value (a Literal) and compiles the callee
# once per value (apply_move_inplace three times: TREE from the search, REAL from the two-stage
# check, int64 from Python), each a full compilation on a cold cache (issue 22); an int64 scalar
# is typed int64, so every caller shares one compiled apply_move_inplace.
REAL = np.int64(0)
TREE = np.int64(1)
SIM = np.int64(2)
VARIANTS = {"REAL": REAL, "TREE": TREE, "SIM": SIM}

#: promotion policies for ``apply_move``'s ``promo`` argument (a value >= 0 is an explicit index)
PROMO_HEURISTIC = np.int64(-1)  # maximal promotion-heuristic score, uniform among ties (every AI)
PROMO_RANDOM = np.int64(-2)  # a uniformly random candidate (the random agent, AGENTS.md §C.3)

MAX_GROUPS = 48

# The move-code layout, compiled from its one definition in state.py (inlined: the kernels'
# generated code is what the hand-written ``(size - 1) * 36 + sq`` gave).
encode_move = njit(cache=True, _nrt=False, inline="always")(state.encode_move)
decode_move = njit(cache=True, _nrt=False, inline="always")(state.decode_move)


@njit(cache=True, _nrt=False, inline="always")
def pool_index(colour):
    """Index of ``colour``'s small-piece pool count in the state (larges at +1)."""
    return POOL_BASE_BLUE if colour < 0 else POOL_BASE_RED


@njit(cache=True, _nrt=False)
def place_and_push(st, size, sq):
    """Place ``size`` on ``sq`` for the side to move and push the neighbours (RULES.md §4).

    Works in place on ``st`` (callers pass a copy). ``moveNumber`` += 1.
    """
    mover = st[TO_MOVE]
    base = pool_index(mover)
    st[base + size - 1] -= 1
    st[sq] = size * mover
    for k in range(8):
        v = PUSH_V[sq, k]
        if v < 0:
            continue
        victim = st[v]
        if victim == 0:
            continue
        vsize = victim if victim > 0 else -victim
        if vsize > size:  # a small cannot push a large
            continue
        t = PUSH_T[sq, k]
        if t >= 0:
            if st[t] == 0:  # slide; an occupied target blocks (no chain pushing)
                st[t] = victim
                st[v] = 0
        else:  # ejected: back to its owner's pool with its current size
            st[pool_index(victim) + vsize - 1] += 1
            st[v] = 0
    st[MOVE_NUMBER] += 1


@inner(_nrt=False)
def has_three_large(st, colour):
    """Victory V1: three of ``colour``'s larges in a row (RULES.md §7)."""
    mask = np.int64(0)
    big = 2 * colour
    for i in range(N_SQUARES):
        if st[i] == big:
            mask |= np.int64(1) << np.int64(i)
    return has_three_in_row(mask)


@njit(cache=True, _nrt=False)
def has_won(st, colour):
    """V1 or V2 (pool empty and all 8 pieces large) for ``colour`` (RULES.md §7)."""
    return _has_won(st, colour, 0, True)


@njit(cache=True, _nrt=False, inline="always")
def _has_won(st, colour, large_mask, scan):
    """has_won, with ``colour``'s larges given as a bit mask (``scan``: read them off ``st``)."""
    base = pool_index(colour)
    lcount = st[L_BLUE] if colour < 0 else st[L_RED]
    if st[base] == 0 and st[base + 1] == 0 and lcount == 8:
        return True
    if scan:
        return has_three_large(st, colour)
    return has_three_in_row(large_mask)


@njit(cache=True, _nrt=False, inline="always")
def colour_masks(st):
    """(Blue's pieces, Red's pieces, Blue's larges, Red's larges) as bit masks (bit = square)."""
    blue = np.int64(0)
    red = np.int64(0)
    blue_l = np.int64(0)
    red_l = np.int64(0)
    for i in range(N_SQUARES):
        v = st[i]
        if v != 0:
            bit = np.int64(1) << np.int64(i)
            if v < 0:
                blue |= bit
                if v == -2:
                    blue_l |= bit
            else:
                red |= bit
                if v == 2:
                    red_l |= bit
    return blue, red, blue_l, red_l


@njit(cache=True, _nrt=False, inline="always")
def piece_masks(st):
    """(Blue's smalls, Blue's larges, Red's smalls, Red's larges) as bit masks (bit = square).

    The same scan as :func:`colour_masks`, split four ways for the heuristic, which wants the
    smalls: one OR per piece there is ~10 % faster heuristic evaluations than deriving them from
    colour_masks, while apply_move and the solver are ~5-8 % faster with colour_masks' two-way
    split (interleaved ``boopexp bench`` A/B, medians of 4 rounds, 2026-11-24)."""
    bs = np.int64(0)
    bl = np.int64(0)
    rs = np.int64(0)
    rl = np.int64(0)
    for i in range(N_SQUARES):
        v = st[i]
        if v != 0:
            bit = np.int64(1) << np.int64(i)
            if v == -1:
                bs |= bit
            elif v == -2:
                bl |= bit
            elif v == 1:
                rs |= bit
            else:
                rl |= bit
    return bs, bl, rs, rl


@njit(cache=True, _nrt=False, inline="always")
def own_mask(st, colour):
    """Bit mask (bit = square) of ``colour``'s pieces."""
    m = np.int64(0)
    for i in range(N_SQUARES):
        if st[i] * colour > 0:
            m |= np.int64(1) << np.int64(i)
    return m


@inner(_nrt=False)
def may_have_groups(st, colour, mask):
    """False only when ``colour`` surely has no candidate group: its pool is not empty and no
    three of its pieces (``mask``) are in a row (a bitboard test; the full scan is the slow part)."""
    base = pool_index(colour)
    if st[base] == 0 and st[base + 1] == 0:
        return True
    return has_three_in_row(mask)


@inner(_nrt=False)
def has_three_in_row(mask):
    """Whether three squares of ``mask`` (bit = square) are in a row, in any line direction."""
    for k in range(4):
        d = DIR_DELTA[k]
        if d > 0:
            m1 = mask >> np.int64(d)
            m2 = mask >> np.int64(2 * d)
        else:
            m1 = (mask << np.int64(-d)) & BOARD_MASK
            m2 = (mask << np.int64(-2 * d)) & BOARD_MASK
        if mask & m1 & m2 & TRIPLE_START[k] != 0:
            return True
    return False


@njit(cache=True, _nrt=False, inline="always")
def put_group(groups, n, c0, c1, c2):
    """Write the candidate group (c0, c1, c2) as row ``n`` of ``groups``; return n + 1. A
    singleton is (square, -1, -1)."""
    groups[n, 0] = c0
    groups[n, 1] = c1
    groups[n, 2] = c2
    return n + 1


@njit(cache=True, _nrt=False)
def candidate_groups(st, colour, exclude_all_large, groups):
    """Fill ``groups[:n, :3]`` with ``colour``'s candidate groups in the app's order; return n.

    RULES.md §5–6: row-major anchors; a singleton (cells 1 and 2 = -1) for every own piece when
    the pool is empty, listed before the lines anchored on the same square; lines in direction
    order UR, RT, DR, DN. ``exclude_all_large`` drops all-large lines (the C++ list, HEURISTIC.md
    §6.1); it never changes a list that is used (an all-large line is a win in REAL/TREE).
    """
    base = pool_index(colour)
    pool_empty = st[base] == 0 and st[base + 1] == 0
    n = 0
    cap = groups.shape[0] - 5  # room for a singleton and 4 lines; legal states list at most ~30
    for sq in range(N_SQUARES):
        v = st[sq]
        if v * colour <= 0 or n > cap:
            continue
        if pool_empty:
            n = put_group(groups, n, sq, -1, -1)
        for k in range(4):
            a = ANCHOR_LINE1[sq, k]
            if a < 0:
                continue
            b = ANCHOR_LINE2[sq, k]
            if st[a] * colour > 0 and st[b] * colour > 0:
                if exclude_all_large and v == st[a] and v == st[b] and (v == 2 or v == -2):
                    continue
                n = put_group(groups, n, sq, a, b)
    return n


@njit(cache=True, _nrt=False, inline="always")
def singleton_score(sq, own_neighbour, blocking):
    """HEURISTIC.md §6.2's score of a small singleton on ``sq``: 5, +2 on the ring or -2 in the
    centre, -3 beside a piece of its own colour, -10 between two opponent pieces.

    The rule's one statement: :func:`promotion_score` and the solver's bit-mask form
    (``objective._promotion_score``) only find ``own_neighbour`` and ``blocking`` their own way.
    """
    score = 5
    if RING[sq] == 1:
        score += 2
    elif CENTRE[sq] == 1:
        score -= 2
    if own_neighbour:
        score -= 3
    if blocking:
        score -= 10
    return score


@njit(cache=True, _nrt=False, inline="always")
def line_score(smalls, c0, c1, c2):
    """HEURISTIC.md §6.2's score of the line of three ``c0, c1, c2`` holding ``smalls`` small
    pieces: that count, +10 when all three are smalls on the ring, +1 when some (not all) are."""
    score = smalls
    if smalls == 3:
        n_ring = RING[c0] + RING[c1] + RING[c2]
        if n_ring == 3:
            score += 10
        elif n_ring >= 1:
            score += 1
    return score


@njit(cache=True, _nrt=False)
def promotion_score(st, colour, c0, c1, c2):
    """Score of one candidate group (HEURISTIC.md §6.2); ``c1 == -1`` marks a singleton.

    The promotion heuristic is part of the rules the engines play (every AI promotes by it), so it
    lives here, below the state heuristic H (:mod:`boopexp.engine.heuristic`), not in it.
    """
    if c1 < 0:
        v = st[c0]
        if v == 2 or v == -2:
            return 0
        own_neighbour = False
        blocking = False
        for k in range(8):
            a = PUSH_V[c0, k]
            if a < 0:
                continue
            if st[a] * colour > 0:
                own_neighbour = True
            b = PUSH_T[c0, k]
            if b >= 0 and st[a] * colour < 0 and st[b] * colour < 0:
                blocking = True
        return singleton_score(c0, own_neighbour, blocking)
    k = 0
    for q in (c0, c1, c2):
        if st[q] == 1 or st[q] == -1:
            k += 1
    return line_score(k, c0, c1, c2)


@inner(_nrt=False)
def choose_group(st, colour, groups, n, rng, scores, ties):
    """Index of the group the promotion heuristic picks (HEURISTIC.md §6.3); -1 when n == 0.

    One group is taken without scoring; otherwise the maximal score, exact ties broken
    uniformly at random with ``rng``. ``scores``/``ties`` are work buffers of length >= n.
    """
    if n == 0:
        return -1
    if n == 1:
        return 0
    for i in range(n):
        scores[i] = promotion_score(st, colour, groups[i, 0], groups[i, 1], groups[i, 2])
    return pick_max(rng, scores, n, ties)


@inner(_nrt=False)
def apply_group(st, colour, c0, c1, c2):
    """Remove a group: each small promoted (a large to the pool, L += 1), each large returned."""
    base = pool_index(colour)
    lidx = L_BLUE if colour < 0 else L_RED
    for q in (c0, c1, c2):
        if q < 0:
            continue
        v = st[q]
        if v == 1 or v == -1:
            st[lidx] += 1
        st[base + 1] += 1
        st[q] = 0


@njit(cache=True, _nrt=False, inline="always")
def promote_step(st, mover, exclude_all_large, promo, rng, groups, scores, ties, mover_mask):
    """The mover's promotion step (RULES.md §5–6) on ``st`` in place; return (n_groups, chosen).

    ``mover_mask`` is the bit mask of the mover's pieces after the push (:func:`own_mask`);
    callers that already hold the board's bitboards pass it instead of scanning again.
    """
    if not may_have_groups(st, mover, mover_mask):
        return 0, -1
    n = candidate_groups(st, mover, exclude_all_large, groups)
    if n == 0:
        return 0, -1
    if promo >= 0:
        chosen = promo
    elif promo == PROMO_RANDOM:
        chosen = rand_below(rng, n)
    else:
        chosen = choose_group(st, mover, groups, n, rng, scores, ties)
    apply_group(st, mover, groups[chosen, 0], groups[chosen, 1], groups[chosen, 2])
    return n, chosen


@njit(cache=True, _nrt=False)
def apply_move_inplace(st, size, sq, variant, promo, rng, groups, scores, ties):
    """Play one move on ``st`` in place under ``variant``; return (winner, n_groups, chosen).

    ``winner``: 0 none, -1 Blue, +1 Red (REAL: the mover or nobody; TREE: Blue first when both;
    SIM: always 0). ``promo``: PROMO_HEURISTIC, PROMO_RANDOM or an explicit group index.
    """
    mover = st[TO_MOVE]
    place_and_push(st, size, sq)
    blue, red, blue_l, red_l = colour_masks(st)  # one pass for the victory and promotion tests
    winner = 0
    if variant == REAL:
        if _has_won(st, mover, blue_l if mover < 0 else red_l, False):
            winner = mover
    elif variant == TREE:
        # QUIRK-A3: both colours are tested, and Blue's victory takes precedence.
        if _has_won(st, -1, blue_l, False):
            winner = -1
        elif _has_won(st, 1, red_l, False):
            winner = 1
    n = 0
    chosen = -1
    if winner == 0:
        n, chosen = promote_step(st, mover, variant == SIM, promo, rng, groups, scores, ties,
                                 blue if mover < 0 else red)
    if variant != SIM:
        st[TO_MOVE] = -mover
    return winner, n, chosen


@njit(cache=True)
def apply_move(st_in, size, sq, variant, promo, rng):
    """Copying wrapper of :func:`apply_move_inplace`: returns (new_state, winner, n, chosen)."""
    st = st_in.copy()
    groups = np.empty((MAX_GROUPS, 3), dtype=np.int64)
    scores = np.empty(MAX_GROUPS, dtype=np.int64)
    ties = np.empty(MAX_GROUPS, dtype=np.int64)
    winner, n, chosen = apply_move_inplace(st, size, sq, variant, promo, rng, groups, scores, ties)
    return st, winner, n, chosen


# ------------------------------------------------------------------------------------------
# Legal moves: the one enumeration (the solver, the MCTS root, the bench and Position use it)


@njit(cache=True, _nrt=False)
def legal_move_codes(st, out):
    """Fill ``out`` with the legal move codes (:func:`encode_move`) of the side to move; return n.

    The solver's order (AGENTS.md §A.1): smalls then larges, squares row-major. A size is legal
    when the mover has one in the pool, a square when it is empty.
    """
    base = pool_index(st[TO_MOVE])
    n = 0
    for size in (1, 2):
        if st[base + size - 1] <= 0:
            continue
        for sq in range(N_SQUARES):
            if st[sq] == 0:
                out[n] = encode_move(size, sq)
                n += 1
    return n


@njit(cache=True, _nrt=False)
def legal_move_count(st):
    """The number of legal moves of the side to move (what :func:`legal_move_codes` returns)."""
    base = pool_index(st[TO_MOVE])
    n_empty = 0
    for i in range(N_SQUARES):
        if st[i] == 0:
            n_empty += 1
    sizes = (1 if st[base] > 0 else 0) + (1 if st[base + 1] > 0 else 0)
    return n_empty * sizes


# inline: the bench's random-ply loop was ~6% slower calling it than with the old inline copy
@njit(cache=True, _nrt=False, inline="always")
def random_move(st, banned, rng, squares):
    """A random move code of the side to move, avoiding the ``banned`` codes (bool[72]); -1 if none.

    AGENTS.md §B.9, the random move of MCTS playouts and expansion, of the random agent and of the
    heuristics agent's fallback. QUIRK-A12: the size is a uniformly random element of the pool
    list, so P(large) is the share of larges in the pool, not the share of large moves; then a
    uniformly random empty, unbanned square of that size. ``squares`` is a work buffer (int[36]).
    """
    base = pool_index(st[TO_MOVE])
    ns = st[base]
    nl = st[base + 1]
    size = 1 if rand_below(rng, ns + nl) < ns else 2
    n = 0
    for sq in range(N_SQUARES):
        if st[sq] == 0 and not banned[encode_move(size, sq)]:
            squares[n] = sq
            n += 1
    if n == 0:  # unreachable under the fully-expanded rule (B.5); the original would throw
        return -1
    return encode_move(size, squares[rand_below(rng, n)])
