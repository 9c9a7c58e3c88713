"""The engine's test oracles: the slow, literal forms that the fast kernels are checked against.

Nothing in the package runs them, so they live with the tests. They are compiled (numba, cached
under tests/) because the tests run them on 100,000 and more positions.

* :func:`line_term_reference`, :func:`material_reference`, :func:`heuristic_reference`: H as
  HEURISTIC.md §2-4 write it (every scan entry in order, a per-square material loop), the
  oracle of the bitboard H (``test_heuristic.py::test_bitboard_heuristic_equals_the_literal_scan``
  ``_on_random_dense_boards``) and of the line tables (``test_objective.py::test_line_tables_match_the_scan``);
* :func:`objective_scratch`: f from scratch (the SIM move on a copy, then H of the whole
  board), the oracle of the incremental objective (``test_objective.py``).
"""

from __future__ import annotations

from numba import njit

from boopexp.engine.heuristic import _pattern, _pools, bitboards, clip_score, heuristic_raw_bb
from boopexp.engine.luts import CENTRE, RING, SCAN_S, SCAN_SEG
from boopexp.engine.rules import PROMO_HEURISTIC, place_and_push, promote_step
from boopexp.engine.state import N_SQUARES, POOL_LARGE_BLUE, POOL_LARGE_RED, TO_MOVE


@njit(cache=True)
def material_reference(st, me):
    """MAT (HEURISTIC.md §2) from ``me``'s point of view, one square at a time."""
    n_small = 0  # (mine - theirs) for each count
    n_large = 0
    ring_small = 0  # (theirs - mine): QUIRK-H1, fewer of my pieces on the ring is rewarded
    ring_large = 0
    ctr_small = 0
    ctr_large = 0
    for i in range(N_SQUARES):
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
        pool_large = st[POOL_LARGE_BLUE] - st[POOL_LARGE_RED]
    else:
        pool_large = st[POOL_LARGE_RED] - st[POOL_LARGE_BLUE]
    tot_large = n_large + pool_large
    return 25 * tot_large + 9 * n_large + 3 * (ctr_large + ring_large) + 3 * n_small + (ctr_small + ring_small)


@njit(cache=True)
def line_term_reference(st, me):
    """LINE (HEURISTIC.md §3) exactly as the spec's scan is written: every entry, in order.

    The oracle of ``heuristic._line_term_bb``, which visits only the entries that can score.
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
def heuristic_reference(st, me):
    """H computed by the literal scan and the per-square material loop."""
    return clip_score(line_term_reference(st, me) + material_reference(st, me))


@njit(cache=True)
def objective_scratch(st, size, sq, rng, work, groups, scores, ties):
    """f(size, row, col) computed from scratch: ``apply_move_inplace(SIM)`` + ``heuristic``,
    with the board's bitboards built once and shared by the promotion test and H.

    The oracle of the incremental ``objective.objective_inc`` (same value, same draws from ``rng``).
    """
    for i in range(st.shape[0]):
        work[i] = st[i]
    mover = st[TO_MOVE]
    place_and_push(work, size, sq)  # SIM: no victory test, the side to move is kept
    bs, bl, rs, rl = bitboards(work)
    mine = (bs | bl) if mover < 0 else (rs | rl)
    n, _ = promote_step(work, mover, True, PROMO_HEURISTIC, rng, groups, scores, ties, mine)
    if n > 0:
        bs, bl, rs, rl = bitboards(work)  # pieces were removed
    return clip_score(heuristic_raw_bb(work, mover, bs, bl, rs, rl))
