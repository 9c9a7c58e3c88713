"""Shared helpers of the engine tests: data-file loading, golden <-> state conversion, and two
small pure-Python models written straight from the spec text (not from the engine):

* :func:`cpp_pool_move` — the C++ simulator's pool-vector bookkeeping (docs/engine.md, "Pool
  order"), used to show that the golden pool ORDER is a bookkeeping artefact we understand;
* :func:`ref_line` / :func:`ref_material` — HEURISTIC.md §2–3 with switches that "fix" each
  QUIRK-H, so the quirk tests can show that the faithful engine differs from a fixed one.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import numpy as np

from boopexp.engine.state import make_state, pool_counts_from_list

REPO_ROOT = Path(__file__).resolve().parent.parent


def data_path(env_var: str, default_relative: str) -> Path:
    """``$env_var`` if set, else ``default_relative`` resolved against the repository root."""
    value = os.environ.get(env_var)
    p = Path(value) if value else REPO_ROOT / default_relative
    return p.resolve()


GOLDEN_PATH = data_path("BOOP_GOLDEN", "../shared/golden/boop_golden_visible.json.gz")
#: Positions in the golden file: without the file, as many tests are still collected (each one
#: skipped with the path in its reason), so a missing file shows in the skip count.
GOLDEN_POSITIONS = 300
VECTORS_PATH = data_path("BOOP_HEURISTIC_VECTORS", "../shared/reference/heuristic_vectors.jsonl")


def load_json(path: Path):
    """A golden data file's JSON (gzipped when it ends in ``.gz``), or None when the file is absent."""
    if not path.is_file():
        return None
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def load_golden(path: Path = GOLDEN_PATH):
    """The golden positions, or None when the file is absent."""
    data = load_json(path)
    return None if data is None else data["positions"]


def load_vectors(path: Path = VECTORS_PATH):
    """The heuristic ground-truth vectors (a list of dicts), or None when the file is absent."""
    if not path.is_file():
        return None
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def golden_state(p: dict) -> np.ndarray:
    """The engine state of a golden position (pools as counts; L = larges owned)."""
    mover = -1 if p["blue_turn"] else 1
    return make_state(p["grid"], pool_counts_from_list(p["blue_pool"]), pool_counts_from_list(p["red_pool"]), mover)


def cells_to_squares(cells) -> tuple[int, ...]:
    """``[[row, col], ...]`` -> ``(6*row+col, ...)``."""
    return tuple(6 * r + c for r, c in cells)


# ------------------------------------------------------------------------------------------
# The C++ pool-vector bookkeeping (simulate_move of simulator.cpp, Pobo 0.6.2), as read from
# the golden data: see docs/engine.md "Pool order".

#: the C++ simulator's push order: up-left, down-left, left, up-right, down-right, right, up, down
CPP_PUSH_DIRS = ((-1, -1), (1, -1), (0, -1), (-1, 1), (1, 1), (0, 1), (-1, 0), (1, 0))


def cpp_eject(pool: list[int], size: int) -> None:
    """An ejected piece returns to ``pool``: a 1 is appended; for a large, the FIRST entry that
    is not a 2 is then overwritten with a 2 (so larges gather at the front)."""
    pool.append(1)
    if size == 2:
        i = 0
        while pool[i] == 2:
            i += 1
        pool[i] = 2


def cpp_pool_move(grid, blue_pool, red_pool, blue_turn: bool, piece: int, row: int, col: int,
                  group=None, eject=cpp_eject, erase: str = "last"):
    """(grid, blue_pool, red_pool) after the C++ simulator's move, pool ORDER included.

    Placement erases the LAST occurrence of ``piece`` in the mover's vector (``erase="first"``
    for the alternative reading); pushes in :data:`CPP_PUSH_DIRS` order, ejections via
    ``eject``; ``group`` (list of [row, col] or None) is removed and one 2 is appended to the
    mover's vector per removed square.
    """
    g = list(grid)
    pools = {-1: list(blue_pool), 1: list(red_pool)}
    mover = -1 if blue_turn else 1
    own = pools[mover]
    where = [i for i, x in enumerate(own) if x == piece]
    del own[where[-1] if erase == "last" else where[0]]
    g[6 * row + col] = piece * mover
    for dr, dc in CPP_PUSH_DIRS:
        vr, vc, tr, tc = row + dr, col + dc, row + 2 * dr, col + 2 * dc
        if not (0 <= vr < 6 and 0 <= vc < 6):
            continue
        v = g[6 * vr + vc]
        if v == 0 or abs(v) > piece:
            continue
        if 0 <= tr < 6 and 0 <= tc < 6:
            if g[6 * tr + tc] == 0:
                g[6 * tr + tc] = v
                g[6 * vr + vc] = 0
        else:
            eject(pools[1 if v > 0 else -1], abs(v))
            g[6 * vr + vc] = 0
    for r, c in group or ():
        g[6 * r + c] = 0
        own.append(2)
    return g, pools[-1], pools[1]


# ------------------------------------------------------------------------------------------
# A reference of HEURISTIC.md §2–3 written from the text, with switches that undo each quirk.

UR, RT, DR, DN = (-1, 1), (0, 1), (1, 1), (1, 0)
UR_DIAGONALS = [[6], [12, 7], [18, 13, 8], [24, 19, 14, 9], [30, 25, 20, 15, 10], [31, 26, 21, 16],
                [32, 27, 22], [33, 28], [34]]
DR_DIAGONALS = [[24], [18, 25], [12, 19, 26], [6, 13, 20, 27], [0, 7, 14, 21, 28], [1, 8, 15, 22],
                [2, 9, 16], [3, 10], [4]]
_CORNER_PAIRS = {(UR, (1, 0)), (UR, (5, 4)), (DR, (4, 0)), (DR, (0, 4))}


def _on(r, c):
    return 0 <= r < 6 and 0 <= c < 6


def _ring(r, c):
    return r in (0, 5) or c in (0, 5)


def ref_material(grid, me: int, blue_larges_in_pool: int, red_larges_in_pool: int, ring_sign: int = 1) -> int:
    """MAT of HEURISTIC.md §2; ``ring_sign=-1`` "fixes" QUIRK-H1 (more ring pieces rewarded)."""
    cnt = {}
    for i, v in enumerate(grid):
        if v == 0:
            continue
        r, c = divmod(i, 6)
        side = "me" if (v > 0) == (me > 0) else "op"
        kind = "large" if abs(v) == 2 else "small"
        for key, cond in (("n", True), ("ring", _ring(r, c)), ("ctr", r in (2, 3) and c in (2, 3))):
            if cond:
                cnt[(key, kind, side)] = cnt.get((key, kind, side), 0) + 1

    def d(key, kind):
        return cnt.get((key, kind, "me"), 0) - cnt.get((key, kind, "op"), 0)

    pool_me, pool_op = blue_larges_in_pool, red_larges_in_pool
    if me > 0:
        pool_me, pool_op = pool_op, pool_me
    tot = d("n", "large") + pool_me - pool_op
    return (25 * tot + 9 * d("n", "large") + 3 * (d("ctr", "large") - ring_sign * d("ring", "large"))
            + 3 * d("n", "small") + (d("ctr", "small") - ring_sign * d("ring", "small")))


def ref_line(grid, me: int, my_large_in_pool: bool, op_large_in_pool: bool, *, split_diagonals: bool = False,
             corner_skip: int = 0, ring_pair_rule: str = "first_two", x_pool: str = "op") -> int:
    """LINE of HEURISTIC.md §3.

    Faithful by default; the switches "fix" a quirk each: ``split_diagonals`` (QUIRK-H5: restart
    the skip at every diagonal), ``corner_skip=1`` (QUIRK-H4), ``ring_pair_rule="any"``
    (QUIRK-H2: any of the pattern's squares on the ring), ``x_pool="me"`` (QUIRK-H3: the mine
    branch looks at my own pool).
    """
    def at(r, c):
        return grid[6 * r + c] if _on(r, c) else None

    def pattern(r, c, d):
        v = at(r, c)
        dr, dc = d
        v1, v2, v3, vp = at(r + dr, c + dc), at(r + 2 * dr, c + 2 * dc), at(r + 3 * dr, c + 3 * dc), at(r - dr, c - dc)
        mine = (v > 0) == (me > 0)
        if v1 is None or v * v1 <= 0:
            return 0, 0
        triple = v2 is not None and v1 * v2 > 0
        cells = [(r, c), (r + dr, c + dc)] + ([(r + 2 * dr, c + 2 * dc)] if triple else [])
        if ring_pair_rule == "first_two":
            ring_pair = _ring(r, c) and _ring(r + dr, c + dc)
        else:
            ring_pair = any(_ring(*q) for q in cells)
        x_guard = op_large_in_pool if x_pool == "op" else my_large_in_pool
        x = 0 if (ring_pair and x_guard) else (60 if my_large_in_pool else 20)
        y = -300 if op_large_in_pool else -40
        if triple and v == v1 == v2 and abs(v) == 2:
            return (800 if mine else -800), 2
        if triple and v == v1 == v2:
            return (40 if mine else -44), 2
        if triple:
            open2 = abs(v1) == 2 and ((vp == 0 and abs(v) == 2) or (v3 == 0 and abs(v2) == 2))
            if open2:
                return (x if mine else y), 1
            k = sum(1 for q in (v, v1, v2) if abs(q) == 1)
            return (7 * k if mine else -11 * k), 1
        corner = (d, (r, c)) in _CORNER_PAIRS
        blocked = (vp is None or vp * v < 0) and (v2 is None or v2 * v < 0)
        if v1 == v and abs(v) == 2:
            if corner:
                return (-5 if mine else 10), corner_skip
            if blocked:
                return (-5 if mine else 0), 1
            return (x if mine else y), 1
        if v1 == v:
            if corner:
                return (-1 if mine else 5), corner_skip
            if blocked:
                return (-1 if mine else 0), 1
            return ((0 if ring_pair else 15) if mine else -22), 1
        if corner:
            return (-1 if mine else 5), corner_skip
        if blocked:
            return (-1 if mine else 0), 1
        return ((0 if ring_pair else 7) if mine else -11), 1

    segments = [[(6 * r + c, RT) for c in range(5)] for r in range(6)]
    segments += [[(6 * r + c, DN) for r in range(5)] for c in range(6)]
    for diagonals, d in ((UR_DIAGONALS, UR), (DR_DIAGONALS, DR)):
        if split_diagonals:
            segments += [[(s, d) for s in diag] for diag in diagonals]
        else:
            segments.append([(s, d) for diag in diagonals for s in diag])
    total = 0
    for seg in segments:
        i = 0
        while i < len(seg):
            s, d = seg[i]
            skip = 0
            if grid[s] != 0:
                value, skip = pattern(s // 6, s % 6, d)
                total += value
            i += 1 + skip
    return total


def ref_heuristic(grid, me: int, blue_larges_in_pool: int, red_larges_in_pool: int, **fixes) -> float:
    """H of HEURISTIC.md §1–4 from the reference pieces (``fixes`` go to :func:`ref_line`)."""
    my_lp, op_lp = ((blue_larges_in_pool, red_larges_in_pool) if me < 0 else (red_larges_in_pool, blue_larges_in_pool))
    ring_sign = fixes.pop("ring_sign", 1)
    raw = ref_line(grid, me, my_lp > 0, op_lp > 0, **fixes) + ref_material(
        grid, me, blue_larges_in_pool, red_larges_in_pool, ring_sign)
    return float(min(400, max(-400, raw))) / 400.0
