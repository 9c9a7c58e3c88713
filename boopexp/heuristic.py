"""The state heuristic H and the promotion-choice heuristic (HEURISTIC.md §1–6), compiled.

Every QUIRK-H of the reference C++ is kept; each is labelled where it acts.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boopexp.luts import (
    CENTRE,
    PUSH_T,
    PUSH_V,
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
def _line_term(st, me):
    """LINE (HEURISTIC.md §3): the pattern table under the scan order and skip rule."""
    if me < 0:
        my_large_pool = st[37] > 0
        op_large_pool = st[39] > 0
    else:
        my_large_pool = st[39] > 0
        op_large_pool = st[37] > 0
    y_value = -300 if op_large_pool else -40
    total = 0
    n_seg = SCAN_SEG.shape[0] - 1
    for seg in range(n_seg):
        e = SCAN_SEG[seg]
        end = SCAN_SEG[seg + 1]
        while e < end:
            s = SCAN_S[e]
            v = st[s]
            skip = 0
            if v != 0:
                s1 = SCAN_S1[e]
                if s1 >= 0 and st[s1] * v > 0:  # pair_any (else row G: 0, skip 0)
                    v1 = st[s1]
                    mine = (v > 0) == (me > 0)
                    s2 = SCAN_S2[e]
                    v2 = st[s2] if s2 >= 0 else 0
                    triple = s2 >= 0 and v2 * v > 0
                    large = v == 2 or v == -2
                    if triple and v1 == v and v2 == v:
                        if large:  # A: three larges
                            total += 800 if mine else -800
                        else:  # B: three smalls
                            total += 40 if mine else -44
                        skip = 2
                    elif triple:
                        # C1/C2. open_two_large: middle large and one large end with an empty,
                        # on-board square beyond it (not what its name promises; kept as is).
                        sp = SCAN_SP[e]
                        s3 = SCAN_S3[e]
                        open2 = (v1 == 2 or v1 == -2) and (
                            (sp >= 0 and st[sp] == 0 and large)
                            or (s3 >= 0 and st[s3] == 0 and (v2 == 2 or v2 == -2))
                        )
                        if open2:
                            total += _line_x(SCAN_RING2[e], my_large_pool, op_large_pool) if mine else y_value
                        else:
                            k = 0
                            if not large:
                                k += 1
                            if v1 == 1 or v1 == -1:
                                k += 1
                            if v2 == 1 or v2 == -1:
                                k += 1
                            total += 7 * k if mine else -11 * k
                        skip = 1
                    else:
                        # D / E / F: a pair of large / small / mixed pieces.
                        if SCAN_CORNER[e] == 1:
                            # QUIRK-H4: corner pairs return skip 0.
                            if v1 == v and large:
                                total += -5 if mine else 10
                            else:
                                total += -1 if mine else 5
                            skip = 0
                        else:
                            sp = SCAN_SP[e]
                            blocked = (sp < 0 or st[sp] * v < 0) and (s2 < 0 or v2 * v < 0)
                            if v1 == v and large:
                                if blocked:
                                    total += -5 if mine else 0
                                else:
                                    total += _line_x(SCAN_RING2[e], my_large_pool, op_large_pool) if mine else y_value
                            elif v1 == v:
                                if blocked:
                                    total += -1 if mine else 0
                                else:
                                    total += (0 if SCAN_RING2[e] == 1 else 15) if mine else -22
                            else:
                                if blocked:
                                    total += -1 if mine else 0
                                else:
                                    total += (0 if SCAN_RING2[e] == 1 else 7) if mine else -11
                            skip = 1
            # QUIRK-H5: the skip counts scan ENTRIES; on the diagonals it can jump over the first
            # start square(s) of the next diagonal, because each diagonal family is one segment.
            e += 1 + skip
    return total


@njit(cache=True)
def heuristic_raw(st, me):
    """LINE + MAT, an integer (before clipping)."""
    return _line_term(st, me) + _material(st, me)


@njit(cache=True)
def heuristic(st, me):
    """H(grid, me, pools) in [-1, 1] (HEURISTIC.md §1, §4); ``me`` is -1 Blue or +1 Red."""
    raw = heuristic_raw(st, me)
    # QUIRK-H6: saturation; every raw score >= 400 is exactly 1.0.
    if raw > 400:
        raw = 400
    elif raw < -400:
        raw = -400
    return float(raw) / 400.0


@njit(cache=True)
def promotion_score(st, colour, c0, c1, c2):
    """Score of one candidate group (HEURISTIC.md §6.2); ``c1 == -1`` marks a singleton."""
    if c1 < 0:
        v = st[c0]
        if v == 2 or v == -2:
            return 0
        score = 5
        if RING[c0] == 1:
            score += 2
        elif CENTRE[c0] == 1:
            score -= 2
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
        if own_neighbour:
            score -= 3
        if blocking:
            score -= 10
        return score
    k = 0
    for q in (c0, c1, c2):
        if st[q] == 1 or st[q] == -1:
            k += 1
    score = k
    if k == 3:
        n_ring = RING[c0] + RING[c1] + RING[c2]
        if n_ring == 3:
            score += 10
        elif n_ring >= 1:
            score += 1
    return score
