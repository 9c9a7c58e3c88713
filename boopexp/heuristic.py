"""The state heuristic H (HEURISTIC.md §1–5), compiled; the promotion-choice score (§6) is rules.promotion_score.

Every QUIRK-H of the reference C++ is kept; each is labelled where it acts.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from numba.cpython.unsafe.numbers import trailing_zeros

from boopexp.bits import popcount
from boopexp.luts import (
    BOARD_MASK,
    CENTRE,
    CENTRE_MASK,
    DIR_BASE,
    DIR_DELTA,
    ENTRY_OF,
    ENTRY_SEG_END,
    PAIR_START,
    RING_MASK,
    RING,
    SCAN_CORNER,
    SCAN_RING2,
    SCAN_S,
    SCAN_S1,
    SCAN_S2,
    SCAN_S3,
    SCAN_SEG,
    SCAN_SP,
)


@njit(cache=True)
def _material(st, me):
    """MAT (HEURISTIC.md §2) from ``me``'s point of view."""
    n_small = 0  # (mine - theirs) for each count
    n_large = 0
    ring_small = 0  # (theirs - mine): QUIRK-H1, fewer of my pieces on the ring is rewarded
    ring_large = 0
    ctr_small = 0
    ctr_large = 0
    for i in range(36):
        v = st[i]
        if v == 0:
            continue
        sgn = 1 if (v > 0) == (me > 0) else -1
        if v == 1 or v == -1:
            n_small += sgn
            ring_small -= sgn * RING[i]
            ctr_small += sgn * CENTRE[i]
        else:
            n_large += sgn
            ring_large -= sgn * RING[i]
            ctr_large += sgn * CENTRE[i]
    if me < 0:
        pool_large = st[37] - st[39]
    else:
        pool_large = st[39] - st[37]
    tot_large = n_large + pool_large
    return 25 * tot_large + 9 * n_large + 3 * (ctr_large + ring_large) + 3 * n_small + (ctr_small + ring_small)


@njit(cache=True)
def _line_x(ring2, my_large_pool, op_large_pool):
    # QUIRK-H3: the "mine" branch zeroes on a ring pair when the OPPONENT has a large in pool.
    if ring2 == 1 and op_large_pool:
        return 0
    if my_large_pool:
        return 60
    return 20


@njit(cache=True)
def _pattern(st, e, me, my_large_pool, op_large_pool):
    """(value, skip) of scan entry ``e`` (HEURISTIC.md §3.3); the start square is occupied."""
    v = st[SCAN_S[e]]
    s1 = SCAN_S1[e]
    if s1 < 0 or st[s1] * v <= 0:  # not even pair_any: row G
        return 0, 0
    y_value = -300 if op_large_pool else -40
    v1 = st[s1]
    mine = (v > 0) == (me > 0)
    s2 = SCAN_S2[e]
    v2 = st[s2] if s2 >= 0 else 0
    triple = s2 >= 0 and v2 * v > 0
    large = v == 2 or v == -2
    if triple and v1 == v and v2 == v:
        if large:  # A: three larges
            return (800 if mine else -800), 2
        return (40 if mine else -44), 2  # B: three smalls
    if triple:
        # C1/C2. open_two_large: middle large and one large end with an empty, on-board square
        # beyond it (not what its name promises; kept as is).
        sp = SCAN_SP[e]
        s3 = SCAN_S3[e]
        open2 = (v1 == 2 or v1 == -2) and (
            (sp >= 0 and st[sp] == 0 and large) or (s3 >= 0 and st[s3] == 0 and (v2 == 2 or v2 == -2))
        )
        if open2:
            return (_line_x(SCAN_RING2[e], my_large_pool, op_large_pool) if mine else y_value), 1
        k = 0
        if not large:
            k += 1
        if v1 == 1 or v1 == -1:
            k += 1
        if v2 == 1 or v2 == -1:
            k += 1
        return (7 * k if mine else -11 * k), 1
    # D / E / F: a pair of large / small / mixed pieces.
    if SCAN_CORNER[e] == 1:
        # QUIRK-H4: corner pairs return skip 0.
        if v1 == v and large:
            return (-5 if mine else 10), 0
        return (-1 if mine else 5), 0
    sp = SCAN_SP[e]
    blocked = (sp < 0 or st[sp] * v < 0) and (s2 < 0 or v2 * v < 0)
    if v1 == v and large:
        if blocked:
            return (-5 if mine else 0), 1
        return (_line_x(SCAN_RING2[e], my_large_pool, op_large_pool) if mine else y_value), 1
    if blocked:
        return (-1 if mine else 0), 1
    if v1 == v:
        return ((0 if SCAN_RING2[e] == 1 else 15) if mine else -22), 1
    return ((0 if SCAN_RING2[e] == 1 else 7) if mine else -11), 1


@njit(cache=True)
def _pools(st, me):
    if me < 0:
        return st[37] > 0, st[39] > 0
    return st[39] > 0, st[37] > 0


@njit(cache=True)
def line_term_reference(st, me):
    """LINE (HEURISTIC.md §3) exactly as the spec's scan is written: every entry, in order.

    The oracle for :func:`_line_term_bb`, which visits only the entries that can score.
    """
    my_large_pool, op_large_pool = _pools(st, me)
    total = 0
    for seg in range(SCAN_SEG.shape[0] - 1):
        e = SCAN_SEG[seg]
        end = SCAN_SEG[seg + 1]
        while e < end:
            skip = 0
            if st[SCAN_S[e]] != 0:
                value, skip = _pattern(st, e, me, my_large_pool, op_large_pool)
                total += value
            # QUIRK-H5: the skip counts scan ENTRIES; on the diagonals (one segment per family)
            # it can jump over the first start square(s) of the next diagonal.
            e += 1 + skip
    return total


@njit(cache=True)
def bitboards(st):
    """(blue smalls, blue larges, red smalls, red larges) as 36-bit masks, bit = square."""
    bs = np.int64(0)
    bl = np.int64(0)
    rs = np.int64(0)
    rl = np.int64(0)
    for i in range(36):
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


@njit(cache=True, inline="always")
def _shift(x, k):
    d = DIR_DELTA[k]
    if d > 0:
        return x >> np.int64(d)
    return (x << np.int64(-d)) & BOARD_MASK


@njit(cache=True)
def _line_term_bb(st, me, blue, red):
    """LINE from bitboards: only entries whose first two squares hold same-colour pieces can
    score (every other entry is row G: 0, skip 0), so only those are visited, in scan order,
    with the skip rule applied inside each segment exactly as in :func:`line_term_reference`.
    """
    my_large_pool, op_large_pool = _pools(st, me)
    total = 0
    for k in range(4):
        pairs = ((blue & _shift(blue, k)) | (red & _shift(red, k))) & PAIR_START[k]
        if pairs == 0:
            continue
        base = DIR_BASE[k]
        em = np.int64(0)  # the same pairs as a mask over this direction's scan entries
        while pairs != 0:
            sq = trailing_zeros(pairs)
            pairs &= pairs - 1
            em |= np.int64(1) << np.int64(ENTRY_OF[k, sq] - base)
        next_allowed = -1
        while em != 0:
            e = base + trailing_zeros(em)
            em &= em - 1
            if e < next_allowed:
                continue  # skipped by the previous match (QUIRK-H5 on the diagonals)
            value, skip = _pattern(st, e, me, my_large_pool, op_large_pool)
            total += value
            nxt = e + 1 + skip
            seg_end = ENTRY_SEG_END[e]
            next_allowed = nxt if nxt < seg_end else seg_end
    return total


@njit(cache=True)
def _material_bb(st, me, bs, bl, rs, rl):
    """MAT (HEURISTIC.md §2) from bitboards."""
    if me < 0:
        ms, ml, os_, ol = bs, bl, rs, rl
        pool_large = st[37] - st[39]
    else:
        ms, ml, os_, ol = rs, rl, bs, bl
        pool_large = st[39] - st[37]
    n_large = popcount(ml) - popcount(ol)
    n_small = popcount(ms) - popcount(os_)
    # QUIRK-H1: fewer of my pieces on the ring than the opponent is rewarded.
    ring_large = popcount(ol & RING_MASK) - popcount(ml & RING_MASK)
    ring_small = popcount(os_ & RING_MASK) - popcount(ms & RING_MASK)
    ctr_large = popcount(ml & CENTRE_MASK) - popcount(ol & CENTRE_MASK)
    ctr_small = popcount(ms & CENTRE_MASK) - popcount(os_ & CENTRE_MASK)
    return (
        25 * (n_large + pool_large)
        + 9 * n_large
        + 3 * (ctr_large + ring_large)
        + 3 * n_small
        + (ctr_small + ring_small)
    )


@njit(cache=True)
def heuristic_raw_bb(st, me, bs, bl, rs, rl):
    """LINE + MAT given the state's bitboards."""
    return _line_term_bb(st, me, bs | bl, rs | rl) + _material_bb(st, me, bs, bl, rs, rl)


@njit(cache=True)
def heuristic_raw(st, me):
    """LINE + MAT, an integer (before clipping)."""
    bs, bl, rs, rl = bitboards(st)
    return heuristic_raw_bb(st, me, bs, bl, rs, rl)


@njit(cache=True, inline="always")
def clip_score(raw):
    """H = clip(raw, -400, 400) / 400 (HEURISTIC.md §4)."""
    # QUIRK-H6: saturation; every raw score >= 400 is exactly 1.0.
    if raw > 400:
        raw = 400
    elif raw < -400:
        raw = -400
    return float(raw) / 400.0


@njit(cache=True)
def heuristic(st, me):
    """H(grid, me, pools) in [-1, 1] (HEURISTIC.md §1, §4); ``me`` is -1 Blue or +1 Red."""
    return clip_score(heuristic_raw(st, me))


@njit(cache=True)
def heuristic_reference(st, me):
    """H computed by the literal scan and a per-square material loop (the test oracle)."""
    return clip_score(line_term_reference(st, me) + _material(st, me))
