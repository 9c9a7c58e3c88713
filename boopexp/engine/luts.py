"""Lookup tables built once at import (neighbours, push targets, line triples, scan orders, bit
masks).

Lookup tables, built once at import and frozen into the compiled kernels as constants.

Directions are (row delta, column delta). Off-board squares are written -1.
"""

from __future__ import annotations

import numpy as np


def _on(r: int, c: int) -> bool:
    return 0 <= r < 6 and 0 <= c < 6


def _idx(r: int, c: int) -> int:
    return 6 * r + c if _on(r, c) else -1


#: The 8 push directions in the app's order: up-left, up, up-right, right, down-right, down,
#: down-left, left (RULES.md §4; any order gives the same result).
PUSH_DIRS = ((-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1))
#: The 4 line directions UR, RT, DR, DN (RULES.md §5, HEURISTIC.md §3.1).
LINE_DIRS = ((-1, 1), (0, 1), (1, 1), (1, 0))

RING = np.array([1 if (r in (0, 5) or c in (0, 5)) else 0 for r in range(6) for c in range(6)], dtype=np.int64)
CENTRE = np.array([1 if (r in (2, 3) and c in (2, 3)) else 0 for r in range(6) for c in range(6)], dtype=np.int64)

# PUSH_V[sq, k]: victim square in direction k (or -1); PUSH_T[sq, k]: target square (or -1).
PUSH_V = np.full((36, 8), -1, dtype=np.int64)
PUSH_T = np.full((36, 8), -1, dtype=np.int64)
for _sq in range(36):
    _r, _c = divmod(_sq, 6)
    for _k, (_dr, _dc) in enumerate(PUSH_DIRS):
        PUSH_V[_sq, _k] = _idx(_r + _dr, _c + _dc)
        PUSH_T[_sq, _k] = _idx(_r + 2 * _dr, _c + 2 * _dc)

# ANCHOR_LINES[sq, k] = (sq, sq+d, sq+2d) for line direction k, or -1 when it leaves the board:
# the candidate-group scan of RULES.md §5 (anchor row-major, then UR, RT, DR, DN).
ANCHOR_LINE1 = np.full((36, 4), -1, dtype=np.int64)
ANCHOR_LINE2 = np.full((36, 4), -1, dtype=np.int64)
for _sq in range(36):
    _r, _c = divmod(_sq, 6)
    for _k, (_dr, _dc) in enumerate(LINE_DIRS):
        a, b = _idx(_r + _dr, _c + _dc), _idx(_r + 2 * _dr, _c + 2 * _dc)
        if a >= 0 and b >= 0:
            ANCHOR_LINE1[_sq, _k] = a
            ANCHOR_LINE2[_sq, _k] = b

#: Bit masks of the 80 lines of three (victory V1 scan), in anchor order.
LINE_MASKS = np.array(
    [
        (1 << sq) | (1 << int(ANCHOR_LINE1[sq, k])) | (1 << int(ANCHOR_LINE2[sq, k]))
        for sq in range(36)
        for k in range(4)
        if ANCHOR_LINE1[sq, k] >= 0
    ],
    dtype=np.int64,
)

# ------------------------------------------------------------------------------------------
# The heuristic's scan program (HEURISTIC.md §3.4): a list of entries (start square, direction)
# cut into segments; inside a segment a match's skip advances over ENTRIES (QUIRK-H5 on the
# diagonals, whose 25 entries form a single segment).
UR_STARTS = (6, 12, 7, 18, 13, 8, 24, 19, 14, 9, 30, 25, 20, 15, 10, 31, 26, 21, 16, 32, 27, 22, 33, 28, 34)
DR_STARTS = (24, 18, 25, 12, 19, 26, 6, 13, 20, 27, 0, 7, 14, 21, 28, 1, 8, 15, 22, 2, 9, 16, 3, 10, 4)
_UR, _RT, _DR, _DN = LINE_DIRS


def _scan_program():
    entries: list[tuple[int, tuple[int, int]]] = []
    seg_start: list[int] = []
    for r in range(6):  # rows, direction RT: one segment per row
        seg_start.append(len(entries))
        entries += [(6 * r + c, _RT) for c in range(5)]
    for c in range(6):  # columns, direction DN: one segment per column
        seg_start.append(len(entries))
        entries += [(6 * r + c, _DN) for r in range(5)]
    seg_start.append(len(entries))  # all up-right diagonals: ONE segment (QUIRK-H5)
    entries += [(s, _UR) for s in UR_STARTS]
    seg_start.append(len(entries))  # all down-right diagonals: ONE segment (QUIRK-H5)
    entries += [(s, _DR) for s in DR_STARTS]
    seg_start.append(len(entries))
    n = len(entries)
    cols = {name: np.full(n, -1, dtype=np.int64) for name in ("s", "s1", "s2", "s3", "sp", "ring2", "corner")}
    corner_pairs = {(_UR, (1, 0)), (_UR, (5, 4)), (_DR, (4, 0)), (_DR, (0, 4))}
    for e, (s, (dr, dc)) in enumerate(entries):
        r, c = divmod(s, 6)
        cols["s"][e] = s
        cols["s1"][e] = _idx(r + dr, c + dc)
        cols["s2"][e] = _idx(r + 2 * dr, c + 2 * dc)
        cols["s3"][e] = _idx(r + 3 * dr, c + 3 * dc)
        cols["sp"][e] = _idx(r - dr, c - dc)
        s1 = cols["s1"][e]
        # QUIRK-H2: only the first two squares are looked at for "on the ring".
        # (QUIRK-H11, a row/column swap in that helper, has no effect: the ring is symmetric.)
        cols["ring2"][e] = 1 if (s1 >= 0 and RING[s] and RING[s1]) else 0
        cols["corner"][e] = 1 if ((dr, dc), (r, c)) in corner_pairs else 0
    return cols, np.array(seg_start, dtype=np.int64)


_cols, SCAN_SEG = _scan_program()
SCAN_S = _cols["s"]
SCAN_S1 = _cols["s1"]
SCAN_S2 = _cols["s2"]
SCAN_S3 = _cols["s3"]
SCAN_SP = _cols["sp"]
SCAN_RING2 = _cols["ring2"]
SCAN_CORNER = _cols["corner"]
del _cols

# ------------------------------------------------------------------------------------------
# Bitboard helpers (bit i = square i) for the heuristic's fast path.
BOARD_MASK = np.int64((1 << 36) - 1)
RING_MASK = np.int64(sum(1 << i for i in range(36) if RING[i]))
CENTRE_MASK = np.int64(sum(1 << i for i in range(36) if CENTRE[i]))
#: square offset of the neighbour s1 = s + d in each line direction UR, RT, DR, DN
DIR_DELTA = np.array([-5, 1, 7, 6], dtype=np.int64)
#: per direction, the squares whose neighbour s1 is on the board (the scan's start squares)
PAIR_START = np.zeros(4, dtype=np.int64)
#: ENTRY_OF[k, sq]: the scan entry of start square sq in direction k (-1 if none)
ENTRY_OF = np.full((4, 36), -1, dtype=np.int64)
#: first scan entry of each direction's block, and the end of each entry's segment
DIR_BASE = np.zeros(4, dtype=np.int64)
ENTRY_SEG_END = np.zeros(SCAN_S.shape[0], dtype=np.int64)


def _bitboard_tables() -> None:
    dir_of_block = {0: 1, 1: 3, 2: 0, 3: 2}  # scan blocks: rows RT, columns DN, UR, DR
    blocks = [(0, 30), (30, 60), (60, 85), (85, 110)]
    for b, (lo, hi) in enumerate(blocks):
        k = dir_of_block[b]
        DIR_BASE[k] = lo
        for e in range(lo, hi):
            ENTRY_OF[k, SCAN_S[e]] = e
            PAIR_START[k] |= np.int64(1 << int(SCAN_S[e]))
    for seg in range(SCAN_SEG.shape[0] - 1):
        ENTRY_SEG_END[SCAN_SEG[seg] : SCAN_SEG[seg + 1]] = SCAN_SEG[seg + 1]
    for k, (dr, dc) in enumerate(LINE_DIRS):
        for sq in range(36):
            r, c = divmod(sq, 6)
            assert (ENTRY_OF[k, sq] >= 0) == _on(r + dr, c + dc)
            if _on(r + dr, c + dc):
                assert 6 * (r + dr) + (c + dc) == sq + DIR_DELTA[k]


_bitboard_tables()

#: per direction, the squares s whose s + 2d is on the board (anchors of a line of three)
TRIPLE_START = np.array(
    [sum(1 << s for s in range(36) if ANCHOR_LINE2[s, k] >= 0) for k in range(4)], dtype=np.int64
)

# ------------------------------------------------------------------------------------------
# The heuristic's LINE term as 30 independent lines (the incremental objective).
# Scan segments never look outside their own line (s, s1, s2, s3 and sp lie on it), so LINE is
# a sum over the 6 rows, the 6 columns and the two diagonal families; inside a family a skip
# can carry over from one diagonal into the first entry of the next (QUIRK-H5), and only that
# carry links them. Lines are numbered: rows 0-5, columns 6-11, the up-right diagonals 12-20
# and the down-right diagonals 21-29 in scan-list order; 30 is a dummy for the squares no
# scanned line holds (corners on the 1-square diagonals). A line's cells are read in scan order.
N_LINES = 30
DUMMY_LINE = 30


def _line_program():
    lines: list[list[int]] = []  # squares of each line, in scan order
    entries: list[list[int]] = []  # the scan entries of each line, in scan order
    for r in range(6):
        lines.append([6 * r + c for c in range(6)])
    for c in range(6):
        lines.append([6 * r + c for r in range(6)])
    for k in range(1, 10):  # up-right diagonals r + c = k, from the bottom-left end upwards
        lines.append([6 * r + (k - r) for r in range(min(k, 5), max(0, k - 5) - 1, -1)])
    for k in range(-4, 5):  # down-right diagonals c - r = k, from the top-left end downwards
        lines.append([6 * r + (r + k) for r in range(max(0, -k), min(5, 5 - k) + 1)])
    e = 0
    for sq_list in lines:
        entries.append(list(range(e, e + len(sq_list) - 1)))
        e += len(sq_list) - 1
    assert e == SCAN_S.shape[0]
    for sq_list, ents in zip(lines, entries):
        for p, ent in enumerate(ents):  # the scan program visits this line's squares in order
            assert SCAN_S[ent] == sq_list[p] and SCAN_S1[ent] == sq_list[p + 1]
    return lines, entries


LINE_SQUARES, LINE_ENTRIES = _line_program()
LINE_LEN = np.array([len(s) for s in LINE_SQUARES] + [0], dtype=np.int64)
#: LINE_OF[sq, k]: the line through sq in direction k (row, column, up-right, down-right);
#: LINE_POW[sq, k] = 5 ** (position of sq on that line): a line's cells are base-5 digits
LINE_OF = np.full((36, 4), DUMMY_LINE, dtype=np.int64)
LINE_POW = np.zeros((36, 4), dtype=np.int64)
for _l, _sqs in enumerate(LINE_SQUARES):
    _k = 0 if _l < 6 else 1 if _l < 12 else 2 if _l < 21 else 3
    for _p, _sq in enumerate(_sqs):
        LINE_OF[_sq, _k] = _l
        LINE_POW[_sq, _k] = 5**_p
