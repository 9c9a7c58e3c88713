"""The state heuristic H (HEURISTIC.md §1–5), compiled; the promotion-choice score (§6) is rules.promotion_score.

Every QUIRK-H of the reference C++ is kept; each is labelled where it acts.

Most kernels count no references (``_nrt=False``: :mod:`boopexp.engine`, docs/engine.md §9).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boopexp.engine.bits import popcount, trailing_zeros
from boopexp.engine.jit import inner
from boopexp.engine.luts import (
    BOARD_MASK,
    CENTRE,
    CENTRE_MASK,
    DIR_BASE,
    DIR_DELTA,
    DUMMY_LINE,
    ENTRY_OF,
    ENTRY_SEG_END,
    LINE_ENTRIES,
    LINE_LEN,
    LINE_OF,
    LINE_POW,
    LINE_SQUARES,
    N_LINES,
    PAIR_START,
    RING,
    RING_MASK,
    SCAN_CORNER,
    SCAN_RING2,
    SCAN_S,
    SCAN_S1,
    SCAN_S2,
    SCAN_S3,
    SCAN_SP,
)
from boopexp.engine.rules import piece_masks
from boopexp.engine.state import POOL_LARGE_BLUE, POOL_LARGE_RED, STATE_SIZE


@inner(_nrt=False)
def _line_x(ring2, my_large_pool, op_large_pool):
    # QUIRK-H3: the "mine" branch zeroes on a ring pair when the OPPONENT has a large in pool.
    if ring2 == 1 and op_large_pool:
        return 0
    if my_large_pool:
        return 60
    return 20


@inner(_nrt=False)
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


@inner(_nrt=False)
def _pools(st, me):
    if me < 0:
        return st[POOL_LARGE_BLUE] > 0, st[POOL_LARGE_RED] > 0
    return st[POOL_LARGE_RED] > 0, st[POOL_LARGE_BLUE] > 0


@inner(_nrt=False)
def bitboards(st):
    """(blue smalls, blue larges, red smalls, red larges) as 36-bit masks, bit = square."""
    return piece_masks(st)  # the one board scan (rules)


@njit(cache=True, _nrt=False, inline="always")
def _shift(x, k):
    d = DIR_DELTA[k]
    if d > 0:
        return x >> np.int64(d)
    return (x << np.int64(-d)) & BOARD_MASK


@inner(_nrt=False)
def _line_term_bb(st, me, blue, red):
    """LINE from bitboards: only entries whose first two squares hold same-colour pieces can
    score (every other entry is row G: 0, skip 0), so only those are visited, in scan order,
    with the skip rule applied inside each segment exactly as in the spec's literal scan
    (``line_term_reference`` in tests/oracles.py, its oracle).
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


@inner(_nrt=False)
def _material_bb(st, me, bs, bl, rs, rl):
    """MAT (HEURISTIC.md §2) from bitboards."""
    if me < 0:
        ms, ml, os_, ol = bs, bl, rs, rl
        pool_large = st[POOL_LARGE_BLUE] - st[POOL_LARGE_RED]
    else:
        ms, ml, os_, ol = rs, rl, bs, bl
        pool_large = st[POOL_LARGE_RED] - st[POOL_LARGE_BLUE]
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


@inner(_nrt=False)
def heuristic_raw_bb(st, me, bs, bl, rs, rl):
    """LINE + MAT given the state's bitboards."""
    return _line_term_bb(st, me, bs | bl, rs | rl) + _material_bb(st, me, bs, bl, rs, rl)


@inner(_nrt=False)
def heuristic_raw(st, me):
    """LINE + MAT, an integer (before clipping)."""
    bs, bl, rs, rl = bitboards(st)
    return heuristic_raw_bb(st, me, bs, bl, rs, rl)


@njit(cache=True, _nrt=False, inline="always")
def clip_score(raw):
    """H = clip(raw, -400, 400) / 400 (HEURISTIC.md §4)."""
    # QUIRK-H6: saturation; every raw score >= 400 is exactly 1.0.
    if raw > 400:
        raw = 400
    elif raw < -400:
        raw = -400
    return float(raw) / 400.0


@njit(cache=True, _nrt=False)
def heuristic(st, me):
    """H(grid, me, pools) in [-1, 1] (HEURISTIC.md §1, §4); ``me`` is -1 Blue or +1 Red."""
    return clip_score(heuristic_raw(st, me))


# ------------------------------------------------------------------------------------------
# LINE and MAT from per-line tables: the incremental form used by the CO objective.
#
# A line's cells, seen from ``me`` (v * me, so +1/+2 are mine), are the base-5 digits v*me + 2
# of its index. LINE_TABLE holds, for every index of every KIND of line (rows and columns on
# the ring, inner rows and columns, diagonals of 2..6 squares) and every carry-in (0/1 skipped
# first entries, QUIRK-H5), the line's score split into the part that does not depend on the
# pools and the number of X / Y values (HEURISTIC.md §3.3; only X and Y read the pools, and a
# pattern's skip never does), packed so that packed values ADD: const * 2**24 + n_x_ring * 2**16
# + n_x * 2**8 + n_y; entry = 2 * packed + carry-out. The tables are computed by the scan's own
# ``_pattern`` on a representative line of each kind, so they cannot drift from the scan.
# A square whose value changes from a to b moves the index of each line through it by
# (b - a) * me * 5**position: a placement and its pushes update a handful of integers.

_PACK_N = 8  # bits of each count field
_PACK_C = 3 * _PACK_N  # shift of the constant part


def _line_kinds():
    """Group the 30 lines by what their scan looks at: (length, ring pairs, corner entries)."""
    kinds: dict[tuple, int] = {}
    kind_of: list[int] = []
    reps: list[int] = []
    for sqs, ents in zip(LINE_SQUARES, LINE_ENTRIES):
        sig = (len(sqs), tuple(int(SCAN_RING2[e]) for e in ents), tuple(int(SCAN_CORNER[e]) for e in ents))
        if sig not in kinds:
            kinds[sig] = len(reps)
            reps.append(len(kind_of))
        kind_of.append(kinds[sig])
    return kind_of, reps


# Red and the pool facts as numpy scalars, not Python constants: numba would compile _scan_line
# and _pattern once per literal value passed (five _pattern in all, ~1 s on a cold cache); typed
# int64 and bool, they share the one _pattern of the scan above (see rules.REAL).
_RED = np.int64(1)
_NO, _YES = np.bool_(False), np.bool_(True)


@inner(_nrt=False)
def _scan_line(st, squares, entries, cin, my_lp, op_lp):
    """(LINE value, carry-out) of one line of ``st`` from Red's (+1) view, the scan starting
    ``cin`` entries in; the carry-out is how many entries of the next line a skip jumps over."""
    n_ent = entries.shape[0]
    pos = cin
    total = 0
    while pos < n_ent:
        skip = 0
        e = entries[pos]
        if st[SCAN_S[e]] != 0:
            value, skip = _pattern(st, e, _RED, my_lp, op_lp)
            total += value
        pos += 1 + skip
    return total, pos - n_ent


@njit(cache=True)
def _fill_kind_table(squares, entries, n_cin, out):
    """Packed entries of one kind of line for every carry-in < n_cin and every index."""
    length = squares.shape[0]
    n_idx = 5**length
    st = np.zeros(STATE_SIZE, dtype=np.int16)
    for cin in range(n_cin):
        for idx in range(n_idx):
            x = idx
            for p in range(length):
                st[squares[p]] = x % 5 - 2
                x //= 5
            # the four pool cases (my large in pool?, opponent's?) give X = 20/60/0/60 on a
            # ring pair, 20/60/20/60 elsewhere and Y = -40/-40/-300/-300: solve for the counts
            v_ff, c_ff = _scan_line(st, squares, entries, cin, _NO, _NO)
            v_tf, c_tf = _scan_line(st, squares, entries, cin, _YES, _NO)
            v_ft, c_ft = _scan_line(st, squares, entries, cin, _NO, _YES)
            v_tt, c_tt = _scan_line(st, squares, entries, cin, _YES, _YES)
            n_x = (v_tt - v_ft) // 40
            n_xr = (v_tf - v_ff) // 40 - n_x
            n_y = (v_ff - v_ft - 20 * n_xr) // 260
            const = v_ff - 20 * (n_xr + n_x) + 40 * n_y
            ok = c_ff == c_tf and c_ff == c_ft and c_ff == c_tt and 0 <= c_ff <= 1
            ok = ok and min(n_x, n_xr, n_y) >= 0 and max(n_x, n_xr, n_y) < 8
            ok = ok and v_tf == const + 60 * (n_xr + n_x) - 40 * n_y
            ok = ok and v_ft == const + 20 * n_x - 300 * n_y and v_tt == const + 60 * n_x - 300 * n_y
            if not ok:
                raise ValueError("a line's score is not const + counts of X and Y")
            packed = (const << 24) + (n_xr << 16) + (n_x << 8) + n_y
            out[cin * n_idx + idx] = 2 * packed + c_ff


def _line_tables():
    kind_of, reps = _line_kinds()
    parts = []
    kind_off = []
    off = 0
    for kind, rep in enumerate(reps):
        diag = any(li >= 12 for li, k in enumerate(kind_of) if k == kind)  # carries only there
        n_cin = 2 if diag else 1
        t = np.empty(n_cin * 5 ** len(LINE_SQUARES[rep]), dtype=np.int64)
        _fill_kind_table(np.array(LINE_SQUARES[rep], dtype=np.int64),
                         np.array(LINE_ENTRIES[rep], dtype=np.int64), n_cin, t)
        parts.append(t)
        kind_off.append(off)
        off += t.shape[0]
    table = np.concatenate(parts)
    # LINE_START[li]: the offset of line li's carry-in-0 table plus the index of an empty line
    # (all digits 2); LINE_CIN[li]: the distance to its carry-in-1 table (5 ** length)
    start = np.zeros(N_LINES + 1, dtype=np.int64)
    cin = np.zeros(N_LINES + 1, dtype=np.int64)
    for li in range(N_LINES):
        n_idx = 5 ** int(LINE_LEN[li])
        start[li] = kind_off[kind_of[li]] + (n_idx - 1) // 2
        cin[li] = n_idx
    return table, start, cin


LINE_TABLE, LINE_START, LINE_CIN = _line_tables()
#: MAT_SQ[v + 2, sq]: a piece v (seen from me: +1/+2 mine) on sq in MAT, the 25 of a large's
#: ``tot_large`` included (HEURISTIC.md §2; QUIRK-H1: the ring counts against its owner)
MAT_SQ = np.zeros((5, 36), dtype=np.int64)
for _sq in range(36):
    MAT_SQ[3, _sq] = 3 + CENTRE[_sq] - RING[_sq]
    MAT_SQ[4, _sq] = 25 + 9 + 3 * (CENTRE[_sq] - RING[_sq])
    MAT_SQ[1, _sq] = -MAT_SQ[3, _sq]
    MAT_SQ[0, _sq] = -MAT_SQ[4, _sq]
#: the lines of each diagonal family, as bit masks over line numbers, and where each ends
#: (a carry never leaves a row, a column or a family)
ROWCOL_LINES = np.int64((1 << 12) - 1)
UR_LINES = np.int64(((1 << 21) - 1) ^ ((1 << 12) - 1))
DR_LINES = np.int64(((1 << 30) - 1) ^ ((1 << 21) - 1))
#: SQUARE_LINES[sq]: the scanned lines through sq, as a bit mask over line numbers
SQUARE_LINES = np.array(
    [sum(1 << int(li) for li in LINE_OF[sq] if li != DUMMY_LINE) for sq in range(36)], dtype=np.int64
)


@njit(cache=True, _nrt=False, inline="always")
def set_square_lines(lines, off, sq, delta):
    """The line indices ``lines[off:off + 31]`` after the value of ``sq`` (seen from me)
    changed by ``delta``. (Offsets, not slices: a slice costs two atomic reference counts.)"""
    for k in range(4):
        lines[off + LINE_OF[sq, k]] += delta * LINE_POW[sq, k]


@inner(_nrt=False)
def line_context(st, me, lines):
    """Fill ``lines[:31]`` with the line indices of ``st`` seen from ``me``; return the board
    part of MAT (HEURISTIC.md §2, pools excluded: :func:`pool_material` adds them)."""
    for li in range(N_LINES + 1):
        lines[li] = LINE_START[li]
    mat = 0
    for sq in range(36):
        v = st[sq]
        if v != 0:
            rel = v * me
            set_square_lines(lines, 0, sq, rel)
            mat += MAT_SQ[rel + 2, sq]
    return mat


@njit(cache=True, _nrt=False, inline="always")
def pool_material(st, me):
    """The pool part of MAT: 25 per large in my pool, -25 per large in the opponent's."""
    d = st[POOL_LARGE_RED] - st[POOL_LARGE_BLUE]
    return 25 * d if me > 0 else -25 * d


@inner(_nrt=False)
def line_entries(lines, entries, carries):
    """The packed LINE of the line indices ``lines``: fill ``entries[li]`` with the table entry
    each line contributes and ``carries[li]`` with its carry-in; return the packed sum.

    The diagonals are chained by their carries (QUIRK-H5: a skip crosses into the next
    diagonal of the list); rows and columns start with no carry.
    """
    packed = 0
    for li in range(N_LINES):
        carry = 0
        if li == 12 or li == 21:  # the first diagonal of a family
            carry = 0
        elif li > 12:
            carry = entries[li - 1] & 1
        t = LINE_TABLE[lines[li] + carry * LINE_CIN[li]]
        entries[li] = t
        carries[li] = carry
        packed += t >> 1
    return packed


@njit(cache=True, _nrt=False, inline="always")
def changed_lines_packed(packed, changed, ctx, lines, deltas, entries, carries):
    """The packed LINE after the lines in the bit mask ``changed`` moved by ``ctx[deltas + li]``
    (the indices ``ctx[lines + li]`` of a position whose entries / carries are at offsets
    ``entries`` / ``carries`` and whose packed sum is ``packed``).

    A changed row or column swaps one entry. In a diagonal family the carry chain is followed
    from the first changed diagonal until it agrees with the position's again.
    """
    m = changed & ROWCOL_LINES
    while m != 0:
        li = trailing_zeros(m)
        m &= m - 1
        packed += (LINE_TABLE[ctx[lines + li] + ctx[deltas + li]] >> 1) - (ctx[entries + li] >> 1)
    for fam in (UR_LINES, DR_LINES):
        m = changed & fam
        if m == 0:
            continue
        li = trailing_zeros(m)
        end = 21 if fam == UR_LINES else 30
        carry = ctx[carries + li]
        while li < end:
            if (m >> li) & 1 == 0 and carry == ctx[carries + li]:
                # unchanged line, unchanged carry-in: the chain agrees again up to the next
                # changed line
                rest = m & -(np.int64(1) << np.int64(li))
                if rest == 0:
                    break
                li = trailing_zeros(rest)
                carry = ctx[carries + li]
                continue
            t = LINE_TABLE[ctx[lines + li] + ctx[deltas + li] + carry * LINE_CIN[li]]
            packed += (t >> 1) - (ctx[entries + li] >> 1)
            carry = t & 1
            li += 1
    return packed


@njit(cache=True, _nrt=False, inline="always")
def unpack_line(packed, my_large_pool, op_large_pool):
    """LINE from a packed sum and the two pool facts it reads (HEURISTIC.md §3.3 X and Y)."""
    n_y = packed & 0xFF
    n_x = (packed >> 8) & 0xFF
    n_xr = (packed >> 16) & 0xFF
    const = packed >> 24
    x = 60 if my_large_pool else 20
    # QUIRK-H3: the mine branch zeroes on a ring pair when the OPPONENT has a large in pool.
    x_ring = 0 if op_large_pool else x
    y = -300 if op_large_pool else -40
    return const + n_xr * x_ring + n_x * x + n_y * y


@inner(_nrt=False)
def heuristic_raw_lines(st, me, lines, entries, carries):
    """LINE + MAT through the line tables (work buffers of N_LINES + 1 entries)."""
    mat = line_context(st, me, lines) + pool_material(st, me)
    my_lp, op_lp = _pools(st, me)
    return unpack_line(line_entries(lines, entries, carries), my_lp, op_lp) + mat
