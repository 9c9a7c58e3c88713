"""Property tests over random games: material conservation, board sanity, notation round trip,
no mutation of inputs, a non-empty pool at every turn start, and the solver entry points
(AGENTS.md §A.2–A.3) against the objective values they are built on."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from boopexp.engine import objective
from boopexp.engine.buffers import new_work, solver_buffers
from boopexp.engine.rng import new_rng_state
from boopexp.engine.state import PIECES_PER_PLAYER
from boopexp.game.position import Move, Position

MAX_PLIES = 200
SETTINGS = settings(max_examples=40, deadline=None)


def check_invariants(pos: Position) -> None:
    st_ = pos.state
    grid = np.asarray(st_[:36])
    assert set(np.unique(grid).tolist()) <= {-2, -1, 0, 1, 2}
    for colour, sign in (("blue", -1), ("red", 1)):
        small, large = pos.pool(colour)
        assert small >= 0 and large >= 0
        on_board = int(np.sum(grid * sign > 0))
        assert on_board + small + large == PIECES_PER_PLAYER, (colour, pos.to_string())
        owned_large = int(np.sum(grid == 2 * sign)) + large
        assert owned_large <= pos.large_counter(colour) <= PIECES_PER_PLAYER
    assert Position.from_string(pos.to_string()) == pos


def random_game(seed: int, policy: str, plies: int = MAX_PLIES, variant: str = "REAL"):
    """Yield (position, move, result) along a random game until a win or ``plies``."""
    gen = np.random.default_rng(seed)
    rng = new_rng_state(seed)
    pos = Position.initial()
    for _ in range(plies):
        moves = pos.legal_moves()
        mv = moves[int(gen.integers(len(moves)))]
        res = pos.play(mv, variant=variant, promotion=policy, rng=rng)
        yield pos, mv, res
        if res.winner is not None:
            return
        pos = res.position


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), policy=st.sampled_from(["heuristic", "random"]),
       variant=st.sampled_from(["REAL", "REAL", "TREE"]))
def test_random_game_invariants(seed, policy, variant):
    last_l = {"blue": 0, "red": 0}
    for ply, (pos, _mv, res) in enumerate(random_game(seed, policy, variant=variant)):
        check_invariants(pos)
        assert pos.move_number == ply
        mover = pos.to_move
        assert sum(pos.pool(mover)) > 0, f"empty pool at turn start: {pos.to_string()}"
        before = pos.state.tobytes()
        after = res.position
        assert pos.state.tobytes() == before
        assert after.move_number == ply + 1
        for colour in last_l:
            assert after.large_counter(colour) >= last_l[colour]
            last_l[colour] = after.large_counter(colour)
        if res.winner is not None:
            assert after.has_won(res.winner)
            if variant == "REAL":
                assert res.winner == mover  # REAL: the mover only (RULES.md §7)
            elif after.has_won("blue"):
                assert res.winner == "blue"  # TREE: both tested, Blue first (§10.1)
            check_invariants(after)
            break
        assert not after.has_won(mover)
        if variant == "TREE":
            assert not after.has_won("blue") and not after.has_won("red")
        assert after.to_move != mover
        if res.groups:
            assert res.chosen is not None and 0 <= res.chosen < len(res.groups)
            assert all(after.grid[q] == 0 for q in res.groups[res.chosen])
        else:
            assert res.chosen is None
        # after any non-winning REAL turn the mover's pool is non-empty (RULES.md §6)
        assert sum(after.pool(mover)) > 0


def _scored(pos: Position, seed: int):
    """The objective values best_move / best_m_moves see with ``new_rng_state(seed)``."""
    w = new_work()
    n = objective.score_moves(pos.state.copy(), w.mask, new_rng_state(seed), w.ctx, w.groups, w.scores, w.ties,
                              w.codes, w.values)
    codes, values = w.codes[:n].copy(), w.values[:n].copy()
    return codes, values


def _sample_positions(seed: int, every: int = 7):
    for ply, (pos, _, _) in enumerate(random_game(seed, "heuristic", 60)):
        if ply % every == 3:
            yield pos


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(1, 12))
def test_solver_entry_points(seed, m):
    for pos in _sample_positions(seed):
        legal = {mv.code for mv in pos.legal_moves()}
        codes, values = _scored(pos, seed)
        assert sorted(codes.tolist()) == sorted(legal)
        before = pos.state.tobytes()

        # best_move: one of the optima, and the number of optima
        best, n_ties = pos.best_move(rng=new_rng_state(seed))
        top = values.max()
        assert best is not None and values[codes.tolist().index(best.code)] == top
        assert n_ties == int(np.sum(values == top))

        # best_m_moves: m distinct legal moves containing every move strictly better than the m-th
        chosen = pos.best_m_moves(m, rng=new_rng_state(seed))
        k = min(m, len(codes))
        assert len(chosen) == k and len({mv.code for mv in chosen}) == k
        assert {mv.code for mv in chosen} <= legal
        threshold = np.sort(values)[::-1][k - 1]
        by_code = dict(zip(codes.tolist(), values.tolist()))
        assert {c for c, v in by_code.items() if v > threshold} <= {mv.code for mv in chosen}
        assert all(by_code[mv.code] >= threshold for mv in chosen)

        # objective: one legal move's value is one of the scored values (deterministic unless
        # the promotion ties, QUIRK-H9), and nothing above mutated the position
        mv = Move.from_code(int(codes[0]))
        pos.objective(mv, rng=new_rng_state(seed))
        assert pos.state.tobytes() == before


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_kernels_do_not_mutate_a_writable_state(seed):
    """The kernels get a WRITABLE state here (a Position's is read-only), so a stray write
    inside them would show."""
    for pos in _sample_positions(seed, every=11):
        st_ = pos.state.copy()
        snapshot = st_.tobytes()
        w = new_work()
        ws = solver_buffers(w)
        rng = new_rng_state(seed)
        for mv in pos.legal_moves()[:5]:
            objective.objective_ws(st_, mv.size, mv.square, rng, w.ctx, w.groups, w.scores, w.ties)
        objective.best_move_ws(st_, np.zeros(72, dtype=np.bool_), rng, *ws)
        out = np.empty(72, dtype=np.int64)
        objective.best_m_moves_ws(st_, 5, rng, *ws, out)
        assert st_.tobytes() == snapshot


def test_objective_is_heuristic_after_sim_move():
    """f = H(SIM move, mover) on a fixed game (HEURISTIC.md §7), with one rng for both calls."""
    for pos in _sample_positions(1234, every=5):
        mover = pos.to_move
        for mv in pos.legal_moves()[::9]:
            f = pos.objective(mv, rng=new_rng_state(9))
            after = pos.play(mv, variant="SIM", rng=new_rng_state(9)).position
            assert f == after.heuristic(mover)
