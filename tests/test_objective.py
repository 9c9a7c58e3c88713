"""The incremental CO objective against the from-scratch one (HEURISTIC.md §7).

The solver scores every candidate move from one context per position (line indices, MAT,
masks) and updates only what a placement and its pushes change; ``objective_scratch`` (the
oracle, tests/oracles.py) plays the SIM move on a copy and evaluates H from the whole board. On
every legal move of many positions (reachable ones, and random boards that stress ejections, pool
flags, empty pools and promotions) both must give the same float AND leave the rng in the same
state (QUIRK-H9: the promotion tie-break draws from it). A term that is not updated (a line index, MAT, a pool
count, a carry between diagonals, a delta left over from the previous move) fails here.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracles import line_term_reference, material_reference, objective_scratch

from boopexp.engine import heuristic, objective
from boopexp.engine.buffers import new_work, solver_buffers
from boopexp.engine.rng import new_rng_state
from boopexp.engine.state import make_state
from boopexp.game.position import Position


def game_positions(n_games: int, seed: int) -> list[np.ndarray]:
    """Every position of ``n_games`` random REAL games (random moves, random promotions)."""
    gen = np.random.default_rng(seed)
    rng = new_rng_state(seed)
    out = []
    for _ in range(n_games):
        pos = Position.initial()
        for _ply in range(120):
            out.append(np.array(pos.state))
            moves = pos.legal_moves()
            res = pos.play(moves[int(gen.integers(len(moves)))], promotion="random", rng=rng)
            if res.winner is not None:
                break
            pos = res.position
    return out


def random_boards(n: int, seed: int) -> list[np.ndarray]:
    """Random boards of every density with random pools: empty pools (every piece a singleton,
    QUIRK-H8), larges in or out of either pool (the X/Y values), crowded edges (ejections)."""
    gen = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        density = gen.random()
        grid = np.where(gen.random(36) < density, gen.choice([-2, -1, 1, 2], 36), 0)
        pools = [int(x) for x in gen.integers(0, 3, size=4)]
        if gen.random() < 0.3:
            pools[0] = pools[1] = 0
        if gen.random() < 0.3:
            pools[2] = pools[3] = 0
        mover = int(gen.choice([-1, 1]))
        # the mover needs a piece to play; the solver skips sizes it does not have
        if mover < 0 and pools[0] + pools[1] == 0:
            pools[int(gen.integers(2))] = 1
        if mover > 0 and pools[2] + pools[3] == 0:
            pools[2 + int(gen.integers(2))] = 1
        out.append(make_state(grid, (pools[0], pools[1]), (pools[2], pools[3]), mover))
    return out


POSITIONS = {
    "games": game_positions(12, seed=11),
    "random_boards": random_boards(600, seed=12),
}


def legal(st: np.ndarray) -> list[tuple[int, int]]:
    base = 36 if st[42] < 0 else 38
    return [(size, sq) for size in (1, 2) if st[base + size - 1] > 0 for sq in range(36) if st[sq] == 0]


@pytest.mark.parametrize("kind", sorted(POSITIONS))
def test_solver_scores_every_move_as_from_scratch(kind):
    """score_moves (one context, every move in solver order) == objective_scratch, move by move,
    with the rng advanced identically."""
    ws = solver_buffers(new_work())
    mask = np.zeros(72, dtype=np.bool_)
    n_moves = n_promotions = 0
    for i, st in enumerate(POSITIONS[kind]):
        rng_inc, rng_ref = new_rng_state(i), new_rng_state(i)
        n = objective.score_moves(st.copy(), mask, rng_inc, *ws[:6])
        codes, values = ws[4][:n].copy(), ws[5][:n].copy()
        moves = legal(st)
        assert [(c // 36 + 1, c % 36) for c in codes] == moves
        for (size, sq), value in zip(moves, values):
            ref = objective_scratch(st, size, sq, rng_ref, *ws[:4])
            assert value == ref, (kind, i, size, sq, Position(st).to_string())
        assert (rng_inc == rng_ref).all(), (kind, i, "the promotion tie-breaks drew differently")
        n_moves += n
        work = st.copy()
        ctx = objective.new_context()
        objective.objective_context(work, ctx)
        for size, sq in moves:  # how many of these moves run the promotion step
            if np.isnan(objective.objective_inc(work, ctx, size, sq)):
                n_promotions += 1
                objective.objective_promotion(ctx, new_rng_state(0), *ws[1:4])  # resets the deltas
    assert n_moves > 5000 and n_promotions > 200  # the test covers both paths


def test_single_move_objective_matches_from_scratch():
    """objective_ws (a context built for one move) on every legal move of some positions."""
    ws = solver_buffers(new_work())
    for i, st in enumerate(POSITIONS["random_boards"][:150]):
        for size, sq in legal(st):
            a, b = new_rng_state(i), new_rng_state(i)
            assert objective.objective_ws(st, size, sq, a, *ws[:4]) == objective_scratch(
                st, size, sq, b, *ws[:4]
            )
            assert (a == b).all()


def test_solver_leaves_its_input_and_context_clean():
    """The context's per-move deltas are back to 0 after each move (the next move starts clean)."""
    ws = solver_buffers(new_work())
    for i, st in enumerate(POSITIONS["random_boards"][:100]):
        ctx = objective.new_context()
        objective.objective_context(st, ctx)
        before = ctx.copy()
        for size, sq in legal(st):
            value = objective.objective_inc(st, ctx, size, sq)
            if np.isnan(value):
                objective.objective_promotion(ctx, new_rng_state(i), *ws[1:4])
            assert (ctx[: objective.CTX_CHANGED] == before[: objective.CTX_CHANGED]).all()
            assert (st == POSITIONS["random_boards"][i]).all()  # the position is never written


def test_line_tables_match_the_scan():
    """LINE + MAT from the line tables == the literal scan (HEURISTIC.md §3.4, QUIRK-H5) + MAT,
    from both sides, on every kind of board."""
    lines = np.empty(32, dtype=np.int64)
    entries = np.empty(32, dtype=np.int64)
    carries = np.empty(32, dtype=np.int64)
    boards = POSITIONS["random_boards"] + POSITIONS["games"][::3]
    for st in boards:
        for me in (-1, 1):
            ref = line_term_reference(st, me) + material_reference(st, me)
            assert heuristic.heuristic_raw_lines(st, me, lines, entries, carries) == ref
