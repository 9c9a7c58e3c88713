"""The engine against data produced by the original C++ (Pobo 0.6.2): the golden positions
(shared/golden, see its README) and the heuristic ground-truth vectors (HEURISTIC.md §9).

Select with ``pytest -m golden`` or ``pytest -k golden``. Paths: ``$BOOP_GOLDEN`` and
``$BOOP_HEURISTIC_VECTORS``, by default ``../shared/...`` next to the repository. A missing file
skips the tests with its path in the reason (every test is still collected: without the file, the
golden positions are the ``GOLDEN_POSITIONS`` skipped tests); it never passes silently, and under
CI (``CI=true``, as ``.ci/run`` sets) a skipped golden test fails the run (tests/conftest.py).

Pools: the engine keeps counts; the C++ keeps vectors whose ORDER is bookkeeping (HEURISTIC.md
§7: only counts matter). Counts are compared everywhere; the order is reproduced by the small
model ``engine_helpers.cpp_pool_move`` (docs/engine.md, "Pool order").
"""

from __future__ import annotations

import numpy as np
import pytest
from engine_helpers import (
    GOLDEN_PATH,
    GOLDEN_POSITIONS,
    VECTORS_PATH,
    cells_to_squares,
    cpp_pool_move,
    golden_state,
    load_golden,
    load_vectors,
)

from boopexp.engine.rng import new_rng_state
from boopexp.engine.state import make_state, pool_counts_from_list
from boopexp.game.position import Move, Position

pytestmark = pytest.mark.golden

TOL = 1e-12
GOLDEN = load_golden()
VECTORS = load_vectors()


def _need_golden():
    if GOLDEN is None:
        pytest.skip(f"golden file not found: {GOLDEN_PATH} (set BOOP_GOLDEN)")


def _need_vectors():
    if VECTORS is None:
        pytest.skip(f"heuristic vectors not found: {VECTORS_PATH} (set BOOP_HEURISTIC_VECTORS)")


def _counts(pool) -> tuple[int, int]:
    return pool_counts_from_list(pool)


def _after(pos: Position) -> tuple[list[int], tuple[int, int], tuple[int, int]]:
    return list(pos.grid), pos.pool("blue"), pos.pool("red")


def _golden_after(d: dict) -> tuple[list[int], tuple[int, int], tuple[int, int]]:
    return d["grid_after"], _counts(d["blue_pool_after"]), _counts(d["red_pool_after"])


POSITION_IDS = list(range(len(GOLDEN) if GOLDEN else GOLDEN_POSITIONS))


@pytest.mark.parametrize("idx", POSITION_IDS)
def test_golden_position(idx):
    """Heuristic both sides, promotion groups/scores, move list, and every move's objective and
    SIM outcome of golden position ``idx``; all mismatches are reported together."""
    _need_golden()
    g = GOLDEN[idx]
    pos = Position(golden_state(g))
    mover = "blue" if g["blue_turn"] else "red"
    bad: list[str] = []

    for side in ("blue", "red"):
        h = pos.heuristic(side)
        if abs(h - g[f"heuristic_{side}"]) > TOL:
            bad.append(f"heuristic_{side}: got {h!r}, golden {g[f'heuristic_{side}']!r}")

    groups = pos.candidate_groups(exclude_all_large=True)
    want_groups = [cells_to_squares(c) for c in g["promotion_groups"]]
    if groups != want_groups:
        bad.append(f"promotion_groups: got {groups}, golden {want_groups}")
    else:
        scores = pos.promotion_scores(groups)
        if scores != g["promotion_scores"]:
            bad.append(f"promotion_scores: got {scores}, golden {g['promotion_scores']}")

    moves = pos.legal_moves()
    want_moves = [Move(m["piece"], 6 * m["row"] + m["col"]) for m in g["moves"]]
    if moves != want_moves:
        bad.append(f"legal moves: got {[str(m) for m in moves]}, golden {[str(m) for m in want_moves]}")

    rng = new_rng_state(idx)
    for gm in g["moves"]:
        mv = Move(gm["piece"], 6 * gm["row"] + gm["col"])
        tag = f"move {mv} ({gm['piece']},{gm['row']},{gm['col']})"
        value = pos.objective(mv, rng=rng)
        res = pos.play(mv, variant="SIM", promotion="heuristic", rng=rng)
        after = _after(res.position)
        got_groups = [tuple(x) for x in res.groups]
        want_in_move = [cells_to_squares(c) for c in gm["promotion_groups_in_move"]]
        if got_groups != want_in_move:
            bad.append(f"{tag}: groups in move {got_groups}, golden {want_in_move}")
        if gm["deterministic"]:
            if abs(value - gm["objective"]) > TOL:
                bad.append(f"{tag}: objective {value!r}, golden {gm['objective']!r}")
            if after != _golden_after(gm):
                bad.append(f"{tag}: after {after}, golden {_golden_after(gm)}")
            continue
        # non-deterministic: promotion ties (QUIRK-H9)
        if not any(abs(value - v) <= TOL for v in gm["objective_values_possible"]):
            bad.append(f"{tag}: objective {value!r} not in {gm['objective_values_possible']}")
        outcomes = {o["group_index"]: o for o in gm["outcomes"]}
        if not any(after == _golden_after(o) for o in outcomes.values()):
            bad.append(f"{tag}: heuristic-promotion outcome {after} is none of the tied outcomes")
        if res.chosen not in outcomes:
            bad.append(f"{tag}: chose group {res.chosen}, tied best are {sorted(outcomes)}")
        before = Position(make_state(gm["grid_before_promotion"], _counts(gm["blue_pool_before_promotion"]),
                                     _counts(gm["red_pool_before_promotion"]), -1 if g["blue_turn"] else 1))
        sc = before.promotion_scores(got_groups, colour=mover)
        if sc != gm["promotion_scores_in_move"]:
            bad.append(f"{tag}: scores in move {sc}, golden {gm['promotion_scores_in_move']}")
        for gi, o in outcomes.items():
            forced = pos.play(mv, variant="SIM", promotion=gi, rng=rng).position
            if _after(forced) != _golden_after(o):
                bad.append(f"{tag}: group {gi} gives {_after(forced)}, golden {_golden_after(o)}")
            if abs(forced.heuristic(mover) - o["objective"]) > TOL:
                bad.append(f"{tag}: group {gi} value {forced.heuristic(mover)!r}, golden {o['objective']!r}")
    assert not bad, f"golden position {idx} ({g['source']}, ply {g.get('ply')}):\n" + "\n".join(bad)


def test_golden_file_is_the_expected_one():
    _need_golden()
    assert len(GOLDEN) >= GOLDEN_POSITIONS
    assert sum(len(g["moves"]) for g in GOLDEN) > 8000
    assert any(not m["deterministic"] for g in GOLDEN for m in g["moves"])


# --------------------------------------------------------------------------------------------
# Pool ORDER: the C++ vector bookkeeping, reproduced by a 30-line model (docs/engine.md)

def _model_cases():
    """(position, move, group to remove or None, expected (grid, blue, red) with pool order)."""
    for g in GOLDEN:
        for m in g["moves"]:
            groups = m["promotion_groups_in_move"]
            if m["deterministic"]:
                want = (m["grid_after"], m["blue_pool_after"], m["red_pool_after"])
                yield g, m, (groups[0] if groups else None), want
            else:
                for o in m["outcomes"]:
                    yield g, m, groups[o["group_index"]], (o["grid_after"], o["blue_pool_after"], o["red_pool_after"])


def _model_mismatches(**kw) -> list[str]:
    bad = []
    for g, m, group, want in _model_cases():
        got = cpp_pool_move(g["grid"], g["blue_pool"], g["red_pool"], g["blue_turn"], m["piece"], m["row"],
                            m["col"], group, **kw)
        if tuple(got) != tuple(want):
            bad.append(f"{g['blue_pool']}/{g['red_pool']} move {(m['piece'], m['row'], m['col'])}: "
                       f"model {got[1]}/{got[2]}, golden {want[1]}/{want[2]}")
    return bad


def test_golden_pool_order_model_reproduces_cpp_vectors():
    _need_golden()
    bad = _model_mismatches()
    assert not bad, f"{len(bad)} pool-order mismatches, first: " + "\n".join(bad[:5])


def test_golden_pool_order_alternative_readings_fail():
    """Documents the reading: erasing the FIRST occurrence, or ejecting by a plain push_back of
    the size, both contradict the data."""
    _need_golden()

    def push_back(pool, size):
        pool.append(size)

    assert len(_model_mismatches(erase="first")) > 0
    assert len(_model_mismatches(eject=push_back)) > 0


# --------------------------------------------------------------------------------------------
# HEURISTIC.md §9 ground-truth vectors (exact float equality)

def _vectors(kind):
    _need_vectors()
    rows = [r for r in VECTORS if r["kind"] == kind]
    assert rows, f"no {kind!r} vectors in {VECTORS_PATH}"
    return rows


def test_golden_vectors_state_heuristic():
    bad = []
    for i, r in enumerate(_vectors("state_heuristic")):
        st = make_state(r["grid"], _counts(r["blue_pool"]), _counts(r["red_pool"]), -1)
        v = Position(st).heuristic(r["perspective"])
        if v != r["expected"]:
            bad.append(f"#{i} {r['perspective']}: got {v!r}, expected {r['expected']!r}")
    assert not bad, "\n".join(bad[:20])


def test_golden_vectors_objective():
    bad = []
    rng = new_rng_state(5)
    for i, r in enumerate(_vectors("objective")):
        mover = -1 if r["mover"] == "blue" else 1
        pos = Position(make_state(r["grid"], _counts(r["blue_pool"]), _counts(r["red_pool"]), mover))
        mv = Move(1 if r["piece"] == "small" else 2, 6 * r["row"] + r["col"])
        v = pos.objective(mv, rng=rng)
        after = pos.play(mv, variant="SIM", rng=rng).position
        want = (r["grid_after"], _counts(r["blue_pool_after_sorted"]), _counts(r["red_pool_after_sorted"]))
        if v != r["expected"] or _after(after) != want:
            bad.append(f"#{i} {mv}: got {v!r} {_after(after)}, expected {r['expected']!r} {want}")
    assert not bad, "\n".join(bad[:20])


def test_golden_vectors_promotion_candidates():
    """Only the emptiness of the player's pool matters to the list and only the grid to the
    scores, so pools are built as that many smalls."""
    bad = []
    for i, r in enumerate(_vectors("promotion_candidates")):
        colour = -1 if r["player"] == "blue" else 1
        st = make_state(r["grid"], (r["blue_pool_size"], 0), (r["red_pool_size"], 0), colour)
        pos = Position(st)
        groups = pos.candidate_groups(colour, exclude_all_large=True)
        want = [cells_to_squares(x["cells"]) for x in r["groups_in_order"]]
        scores = pos.promotion_scores(groups, colour)
        want_scores = [x["score"] for x in r["groups_in_order"]]
        if groups != want or scores != want_scores:
            bad.append(f"#{i} {r['player']}: got {groups} {scores}, expected {want} {want_scores}")
    assert not bad, "\n".join(bad[:20])


def test_golden_vectors_cover_all_kinds():
    _need_vectors()
    kinds = {r["kind"] for r in VECTORS}
    assert kinds == {"state_heuristic", "objective", "promotion_candidates"}
    assert np.sum([r["kind"] == "promotion_candidates" for r in VECTORS]) >= 200
