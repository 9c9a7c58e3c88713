"""MCTS_GHOST (AGENTS.md §B), driven through its compiled kernels.

Each QUIRK-A test is built so that the plausible "fix" of the quirk changes the value it checks
(the docstring says which fix). Positions are one-line strings (boopexp/game/notation.py); move codes
are ``(size-1)*36 + square``. The tiny positions used throughout:

* ``MID``: a quiet middle game, both sizes in both pools, moveNumber 16, Blue to move;
* ``WIN_BLUE``: Blue larges on a4 b4 and a large in the pool: ``C4`` wins (V1), nothing else does.
"""

from __future__ import annotations

import ast
import dataclasses
import math

import numpy as np
import pytest
from mcts_helpers import (
    BLUE,
    RED,
    RING_SQUARES,
    Kit,
    cfg_of,
    code,
    hand_root,
    n_empty,
    pos,
    ref_playout,
)

from boopexp.agents.budget import Budget, device_costs
from boopexp.engine import heuristic, mcts, objective, rules
from boopexp.engine import rng as rng_module
from boopexp.engine.buffers import new_work, solver_buffers
from boopexp.engine.params import P_FIX_A9
from boopexp.engine.rng import new_rng_state
from boopexp.game.position import Move, Position

MID = "b...R./.r..../..B.r./.r..b./....../R..b.. 2,2 2,1 b 3,3 16"
WIN_BLUE = "....../....../BB..../....../....../...... 5,1 8,0 b 3,0 10"
COSTS = device_costs("android-2023")
MCTS_AGENTS = ("vanilla", "mcts+S", "mcts+E", "mcts+P", "mcts+SE", "mcts+SP", "mcts+EP", "mcts-co")


def expansion_twin(kit: Kit, rng_before: np.ndarray) -> tuple[int, np.ndarray, float]:
    """What the next iteration from a hand-built root should do, recomputed outside the kernel.

    With a root that is not fully expanded, ``descend`` returns the root without drawing; then
    (AGENTS.md §B.6) the expansion move, the TREE move of create_node and the playout draw from
    the generator in that order. Returns (move code, E's state, playout value)."""
    rng = rng_before.copy()
    st = np.array(kit.state(0))
    banned = np.zeros(72, dtype=np.bool_)
    for c in kit.children(0):
        banned[kit.tree.move[c]] = True
    mv = -1
    if kit.cfg.co_expansion:
        mv, _ = objective.best_move_ws(st, banned, rng, *solver_buffers(new_work()))
    if mv < 0:
        mv = int(rules.random_move(st, banned, rng, np.empty(36, dtype=np.int64)))
    e_state, winner, _, _ = rules.apply_move(st, mv // 36 + 1, mv % 36, rules.TREE, rules.PROMO_HEURISTIC, rng)
    assert winner == 0, "the twin only models non-terminal expansions"
    value, _, _ = ref_playout(e_state, int(kit.tree.player[0]), kit.cfg, rng)
    return int(mv), e_state, value


# ------------------------------------------------------------------------------------------
# QUIRK-A3: TREE victory of both colours, Blue precedence


def test_a3_push_opponent_into_three_large_is_terminal_loss_for_mover():
    """Blue's large on e6 pushes Red's e5 large to e4: Red has c4 d4 e4. REAL: nobody has won
    (the mover only is tested). TREE (create_node): terminal, scored -1 for Blue, the mover.
    Fix "test the mover only" -> a non-terminal node with score 0."""
    p = pos("....../....R./..RR../....../....../...... 7,1 5,0 b")
    assert p.play("E6", "REAL").winner is None
    k = Kit(cfg_of("mcts+S")).init_root(p.state)
    (node,) = [c for c in k.children() if k.tree.move[c] == code("E6")]
    assert k.tree.player[node] == BLUE
    assert k.tree.terminal[node]
    assert k.tree.score[node] == -1.0
    # no other move of Blue's makes a line (a small on e6 cannot push the large): not terminal
    assert [c for c in k.children() if k.tree.terminal[c]] == [node]


def test_a3_both_colours_win_blue_takes_precedence_in_node_score():
    """Red's large on c4 completes c4 d4 e4 for Red AND pushes Blue's c3 large to c2 (a2 b2 c2).
    REAL: the mover (Red) wins. TREE: Blue's victory is tested first, so the node is scored as
    a Blue win: -1 for Red, the mover. Fix "mover wins ties" -> +1."""
    p = pos("....../....../...RR./..B.../BB..../...... 5,0 5,1 r")
    assert p.play("C4", "REAL").winner == "red"
    assert p.play("C4", "TREE").winner == "blue"
    k = hand_root(Kit(cfg_of("vanilla")), p.state)
    e = k.create(0, code("C4"))
    assert k.tree.player[e] == RED
    assert k.tree.terminal[e]
    assert k.tree.score[e] == -1.0


def test_a3_playout_stops_on_the_opponents_victory_after_any_ply():
    """An artificial E (Blue to move, smalls only) showing a Red three-large line that no small
    can push: whatever Blue plays first, TREE sees Red's victory after that ply, so the playout
    stops at n = 1 with Red's bonus +1. Fix "test the mover only" -> the playout goes on."""
    s_state = pos("....../....../....../....../....../...... 8,0 8,0 r").state
    e_state = pos("....../.r..../RRR.../....../....../...... 8,0 3,1 b 0,4 10").state
    for seed in range(4):
        k = hand_root(Kit(cfg_of("vanilla"), seed=seed), s_state)
        assert k.tree.player[0] == BLUE  # persp: the side to move in E
        e = k.create(0, code("f1"))
        k.tree.states[e][:] = e_state
        value = k.playout(e)
        assert k.acc[mcts.ACC_PLIES] == 1
        assert value == 1.0


# ------------------------------------------------------------------------------------------
# QUIRK-A4: the fully-expanded test compares with the EMPTY SQUARES (−6 early when m = 0)


def test_a4_non_root_node_with_both_sizes_stops_at_n_empty_children():
    """m = 1 funnels every iteration through one root child S whose mover (Red) owns both sizes:
    2 * n_empty legal moves, yet S stops being expanded after n_empty children and the search
    goes one level deeper. Fix "compare with the legal moves" -> S keeps growing to 52."""
    p = pos(MID)
    k = Kit(cfg_of("mcts+S", preselect_m=1, playout_depth=1, co_playout_plies=0)).init_root(p.state)
    n_root = len(k.children())
    (s,) = [c for c in k.children() if not k.tree.masked[c]]
    ne = n_empty(k.state(s))
    assert rules.legal_move_count(k.state(s)) == 2 * ne
    k.iterate(3 * ne)
    assert k.tree.n_children[s] == ne
    assert k.tree.visits[s] == 3 * ne
    assert len(k.children()) == n_root  # the root was complete from the start
    # masks act on root children only: every child of S is eligible and gets visited
    assert all(k.tree.visits[c] > 0 for c in k.children(s))
    assert not k.tree.masked[k.children(s)].any()


@pytest.mark.parametrize(
    "text, m, empty, legal, expected",
    [
        # m = 0, moveNumber 5 < 6: threshold n_empty - 6
        ("....../.b..../..r.b./...b../....r./...... 5,0 6,0 r 0,0 5", 0, 31, 31, 31 - 6),
        # m = 0, moveNumber 6: no reduction any more
        ("....../.b..../..r.b./...b../...rr./...... 5,0 5,0 b 0,0 6", 0, 30, 30, 30),
        # m > 0: never reduced, even early
        ("....../.b..../..r.b./...b../....r./...... 5,0 6,0 r 0,0 5", 5, 31, 31, 31),
        # both sizes in the pool: n_empty, half of the 2 * n_empty legal moves
        ("b...R./.r..../..B.r./.r..b./....../R..b.. 2,2 2,1 b 3,3 16", 0, 27, 54, 27),
    ],
    ids=["m0-move5", "m0-move6", "m5-move5", "m0-both-sizes"],
)
def test_a4_expansion_threshold_of_a_node(text, m, empty, legal, expected):
    """A root built without its children is expanded, one child per iteration, until it holds
    ``n_empty - k`` children; after that the iterations go to the children."""
    p = pos(text)
    assert n_empty(p.state) == empty and rules.legal_move_count(p.state) == legal
    k = hand_root(Kit(cfg_of("mcts+S" if m else "vanilla", playout_depth=1, co_playout_plies=0,
                             preselect_m=m)), p.state)
    k.iterate(2 * n_empty(p.state) + 10)
    assert k.tree.n_children[0] == expected


def test_a4_early_threshold_on_depth_one_nodes_with_m0():
    """Vanilla from the initial position: depth-1 nodes (moveNumber 1 < 6) are full at
    n_empty - 6 = 29 children: 6 of their 35 legal (small) moves are never added.
    Fix "drop the -6" -> some depth-1 node gets more than 29 children."""
    k = Kit(cfg_of("vanilla", playout_depth=1), capacity=4000).init_root(Position.initial().state)
    k.iterate(900)
    sizes = [int(k.tree.n_children[c]) for c in k.children()]
    assert max(sizes) == 35 - 6
    assert all(n_empty(k.state(c)) == 35 for c in k.children())
    # masks only on root children: ring moves deeper in the tree are visited early in the game
    ring_deep = [c for c in range(1, k.count) if k.depth(c) == 2 and k.tree.move[c] % 36 in RING_SQUARES
                 and k.tree.visits[c] > 0]
    assert ring_deep
    assert not k.tree.masked[[c for c in range(1, k.count) if k.depth(c) >= 2]].any()


# ------------------------------------------------------------------------------------------
# QUIRK-A5: early border mask of the m = 0 agents (root only, root moveNumber <= 5)

EARLY5 = "....../.b..../..r.b./...b../....r./...... 5,0 6,0 r 0,0 5"
EARLY6 = "....../.b..../..r.b./...b../...rr./...... 5,0 5,0 b 0,0 6"


@pytest.mark.parametrize("name", ["vanilla", "mcts+E", "mcts+P", "mcts+EP"])
def test_a5_ring_children_masked_at_the_root_for_m0_agents(name):
    k = Kit(cfg_of(name)).init_root(Position.initial().state)
    for c in k.children():
        assert bool(k.tree.masked[c]) == (int(k.tree.move[c]) % 36 in RING_SQUARES)


@pytest.mark.parametrize("name", ["mcts+S", "mcts+SE", "mcts+SP", "mcts-co"])
def test_a5_no_ring_mask_for_selection_agents(name):
    """m > 0: the mask is the pre-selection, whatever the squares (the top 5 of f)."""
    k = Kit(cfg_of(name)).init_root(Position.initial().state)
    assert int(np.sum(~k.tree.masked[k.children()])) == 5


def test_a5_ring_never_visited_while_root_move_number_is_5():
    """Root moveNumber 5 (children: 6): ring children are ineligible for the whole search.
    Fix "lapse at child moveNumber >= 6" -> they get visited."""
    k = Kit(cfg_of("vanilla", playout_depth=1)).init_root(pos(EARLY5).state)
    kids = k.children()
    k.iterate(len(kids) + 40)
    ring = [c for c in kids if k.tree.move[c] % 36 in RING_SQUARES]
    inner = [c for c in kids if c not in ring]
    assert ring and inner
    assert all(k.tree.visits[c] == 0 for c in ring)
    assert all(k.tree.visits[c] > 0 for c in inner)


def test_a5_ring_eligible_again_from_root_move_number_6():
    """Root moveNumber 6: the masked flags are still set, but the mask has lapsed, so after one
    iteration per child every child (ring included) has been visited once.
    Fix "mask while root moveNumber <= 6" -> ring children stay at 0 visits."""
    k = Kit(cfg_of("vanilla", playout_depth=1)).init_root(pos(EARLY6).state)
    kids = k.children()
    assert any(k.tree.masked[c] for c in kids)
    k.iterate(len(kids))
    assert all(k.tree.visits[c] == 1 for c in kids)


# ------------------------------------------------------------------------------------------
# Selection mask (m > 0): the whole search, root children only


def test_selection_mask_only_the_m_best_children_ever_get_visits():
    """mcts+S at moveNumber 16 (long past the m = 0 horizon): only the 5 pre-selected root
    children are visited, and they are the 5 best moves by f."""
    p = pos(MID)
    k = Kit(cfg_of("mcts+S"), seed=3).init_root(p.state)
    kids = k.children()
    kept = [c for c in kids if not k.tree.masked[c]]
    assert len(kept) == 5 and len(kids) == rules.legal_move_count(p.state)
    k.iterate(120)
    visited = {c for c in kids if k.tree.visits[c] > 0}
    assert visited == set(kept)
    assert sum(int(k.tree.visits[c]) for c in kids) == 120
    # the pre-selection keeps the m best moves by the objective
    f = {int(k.tree.move[c]): p.objective(Move.from_code(int(k.tree.move[c])), rng=0) for c in kids}
    kept_codes = {int(k.tree.move[c]) for c in kept}
    assert min(f[c] for c in kept_codes) >= max(f[c] for c in f if c not in kept_codes)


@pytest.mark.parametrize("seed", range(3))
def test_preselection_matches_objective_ranking_on_other_positions(seed):
    """The m-best pre-selection (AGENTS.md §A.3) against every move's objective value."""
    gen = np.random.default_rng(seed)
    p = Position.initial()
    for _ in range(10 + 2 * seed):
        p = p.play(gen.choice(p.legal_moves()), rng=seed).position
    k = Kit(cfg_of("mcts-co"), seed=seed).init_root(p.state)
    kept = {int(k.tree.move[c]) for c in k.children() if not k.tree.masked[c]}
    f = {mv.code: p.objective(mv, rng=0) for mv in p.legal_moves()}
    assert len(kept) == 5
    assert min(f[c] for c in kept) >= max(f[c] for c in f if c not in kept)


# ------------------------------------------------------------------------------------------
# QUIRK-A6: a terminal node keeps its ±1 score while its visits grow


def test_a6_terminal_node_score_fixed_while_visits_grow():
    """Vanilla on WIN_BLUE: the winning child C4 is terminal (+1). Each time it is re-selected
    its visits grow and its score stays exactly 1.0, so its mean decays as 1/visits.
    Fix "back up into the terminal node too" -> score == visits."""
    k = Kit(cfg_of("vanilla", playout_depth=4)).init_root(pos(WIN_BLUE).state)
    (win,) = [c for c in k.children() if k.tree.terminal[c]]
    assert k.tree.move[win] == code("C4") and k.tree.score[win] == 1.0
    means = []
    for _ in range(300):
        before = int(k.tree.visits[win])
        root_score = float(k.tree.score[0])
        k.iterate()
        if k.tree.visits[win] != before:
            means.append(k.mean(win))
            # the root receives -score (its player is Red), the terminal node itself nothing
            assert k.tree.score[0] == pytest.approx(root_score - 1.0)
    assert k.tree.score[win] == 1.0
    assert k.tree.visits[win] >= 3
    assert means == [1.0 / v for v in range(1, len(means) + 1)]


# ------------------------------------------------------------------------------------------
# QUIRK-A7 / A8: the j-th child's initial value is -playout / j; its visits stay 0


def test_a7_jth_child_initial_score_is_playout_divided_by_j():
    """Under a root built without children, iteration j expands the j-th child E_j with the
    playout value v_j (recomputed by a twin of the iteration): E_j.score == -v_j / j.
    Fix "no division" -> E_j.score == -v_j."""
    k = hand_root(Kit(cfg_of("vanilla"), seed=11), pos(MID).state)
    divided = 0
    for j in range(1, 7):
        rng_before = k.rng.copy()
        mv, e_state, v = expansion_twin(k, rng_before)
        k.iterate()
        e = k.count - 1
        assert k.tree.parent[e] == 0 and k.tree.n_children[0] == j
        assert k.tree.move[e] == mv
        assert np.array_equal(k.state(e), e_state)
        assert k.tree.score[e] == -v / j
        if j >= 2 and v != 0:
            assert k.tree.score[e] != -v
            divided += 1
    assert divided >= 3


def test_a7_terminal_expansion_is_not_divided():
    """Three children exist; the 4th expansion (mcts+E: the solver picks C4) wins: its score is
    the full +1 and the root gets -1. Fix "divide every expansion" -> +0.25."""
    k = hand_root(Kit(cfg_of("mcts+E")), pos(WIN_BLUE).state)
    for mv in ("a1", "b1", "c1"):
        k.create(0, code(mv))
    k.iterate()
    e = k.count - 1
    assert k.tree.move[e] == code("C4") and k.tree.terminal[e]
    assert k.tree.n_children[0] == 4
    assert k.tree.score[e] == 1.0
    assert k.tree.score[0] == -1.0 and k.tree.visits[0] == 2


def test_a8_expanded_node_visits_stay_zero_after_its_own_playout():
    """E's playout is stored in E.score, its visits stay 0, the parent (root) counts one visit.
    Once the root is full, the next descent returns an unvisited child C; C's visits become 1 and
    its mean is (initial value + backed-up value) / 1. Fix "count E's playout" -> visits 1."""
    p = pos(MID)
    k = hand_root(Kit(cfg_of("vanilla", playout_depth=3), seed=5), p.state)
    ne = n_empty(p.state)
    for j in range(1, ne + 1):
        k.iterate()
        e = k.count - 1
        assert k.tree.visits[e] == 0
        assert k.tree.visits[0] == 1 + j
    kids = k.children()
    assert len(kids) == ne
    initial = {c: float(k.tree.score[c]) for c in kids}
    k.iterate()
    g = k.count - 1
    c = int(k.tree.parent[g])
    assert c in initial and k.depth(g) == 2
    assert k.tree.visits[c] == 1 and k.tree.visits[g] == 0
    assert k.tree.score[c] == pytest.approx(initial[c] - k.tree.score[g])
    assert k.mean(c) == pytest.approx(initial[c] - k.tree.score[g])


# ------------------------------------------------------------------------------------------
# QUIRK-A9: terminal playout bonus in absolute colours

A9_BLUE_PERSP = "....../....../BB..../....../....../...... 5,1 8,0 r 3,0 10"
A9_RED_PERSP = "....../....../RR..../....../....../...... 8,0 5,1 b 0,3 10"


@pytest.mark.parametrize("seed", range(3))
def test_a9_blue_win_with_blue_perspective_counts_as_bad(seed):
    """S (the root) has Red to move, so S.player = persp = Blue. Red plays f1 (E), then Blue's
    solver ply C4 wins at n = 1: the bonus is -0.9**0 whatever persp is -> -1.0. With
    ``fix_a9=True`` the bonus is from persp's point of view -> +1.0."""
    for fix, expected in ((False, -1.0), (True, 1.0)):
        k = hand_root(Kit(cfg_of("mcts+P", fix_a9=fix), seed=seed), pos(A9_BLUE_PERSP).state)
        assert k.tree.player[0] == BLUE
        e = k.create(0, code("f1"))
        assert not k.tree.terminal[e]
        assert k.playout(e) == expected
        assert k.acc[mcts.ACC_PLIES] == 1


def test_a9_red_win_with_red_perspective_is_the_same_with_or_without_fix():
    """The control: persp = Red and Red wins -> +1 in both modes (only Blue's sign is wrong)."""
    for fix in (False, True):
        k = hand_root(Kit(cfg_of("mcts+P", fix_a9=fix)), pos(A9_RED_PERSP).state)
        assert k.tree.player[0] == RED
        e = k.create(0, code("f1"))
        assert k.playout(e) == 1.0


def test_a9_fix_is_off_by_default_and_reaches_the_kernel():
    assert cfg_of("mcts-co").fix_a9 is False
    assert mcts.params_vector(cfg_of("mcts-co"))[P_FIX_A9] == 0.0
    assert mcts.params_vector(cfg_of("mcts-co", fix_a9=True))[P_FIX_A9] == 1.0


def test_search_plan_is_kept_per_frozen_config_and_never_shared_between_configs():
    """search() reads its config through search_plan, computed once per frozen config: the same
    config gives the same plan object; every other config its own values (a plan cached by the
    agent or the config's type would hand it the first config's vector); a mutable stand-in is
    read afresh each call (a cached plan would keep its first values)."""
    import types

    cfg = cfg_of("mcts-co", fix_a9=True, co_lookahead=1, solver=True)
    plan = mcts.search_plan(cfg)
    assert mcts.search_plan(cfg) is plan
    assert list(plan.params) == list(mcts.params_vector(cfg))
    assert plan.flags == mcts.feature_flags(mcts.params_vector(cfg))
    assert (plan.solver, plan.lookahead, plan.prior, plan.reuse) == (True, True, False, False)
    assert mcts.search_plan(cfg_of("vanilla")).flags == (mcts.OFF,) * 4
    for _ in range(3):
        other = cfg_of("mcts-co", fix_a9=False)
        assert mcts.search_plan(other).params[P_FIX_A9] == 0.0
    stand_in = types.SimpleNamespace(**{f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)})
    assert mcts.search_plan(stand_in).params[P_FIX_A9] == 1.0
    stand_in.fix_a9 = False
    assert mcts.search_plan(stand_in).params[P_FIX_A9] == 0.0


# ------------------------------------------------------------------------------------------
# QUIRK-A10 / A11: discount exponent, division by the plies played, heuristic rewards


def _mid_child(cfg, seed):
    k = hand_root(Kit(cfg, seed=seed), pos(MID).state)
    e = k.create(0, code("c2"))
    return k, e


@pytest.mark.parametrize("name", ["vanilla", "mcts+P", "mcts-co"])
@pytest.mark.parametrize("seed", range(3))
def test_playout_equals_the_faithful_reference(name, seed):
    """The compiled playout equals AGENTS.md §B.8 transcribed in Python (same draws, same value,
    same generator state afterwards)."""
    k, e = _mid_child(cfg_of(name), seed)
    r1 = new_rng_state(100 + seed)
    r2 = r1.copy()
    value = k.playout(e, r1)
    ref, n, _ = ref_playout(k.state(e), int(k.tree.player[0]), k.cfg, r2)
    assert value == pytest.approx(ref, rel=1e-12, abs=1e-15)
    assert n == k.acc[mcts.ACC_PLIES]
    assert np.array_equal(r1, r2)


def test_a10_division_by_plies_played_and_exponent_n_minus_1():
    """mcts+P playouts from MID end with a win before the 21-ply limit: the value is the sum
    divided by the plies actually played (not by k), with exponents n - 1 (not n)."""
    checked = 0
    for seed in range(4):
        k, e = _mid_child(cfg_of("mcts+P"), seed)
        r = new_rng_state(100 + seed)
        value = k.playout(e, r.copy())
        n = int(k.acc[mcts.ACC_PLIES])
        persp = int(k.tree.player[0])
        if not 1 < n < 21:
            continue
        checked += 1
        faithful, _, winner = ref_playout(k.state(e), persp, k.cfg, r.copy())
        by_k, _, _ = ref_playout(k.state(e), persp, k.cfg, r.copy(), divide_by_depth=True)
        exp_n, _, _ = ref_playout(k.state(e), persp, k.cfg, r.copy(), offset=0)
        assert winner != 0
        assert value == pytest.approx(faithful, rel=1e-12)
        assert value != pytest.approx(by_k, rel=1e-6)
        assert value != pytest.approx(exp_n, rel=1e-6)
        # same playout under a longer limit: identical value (the divisor is n, not k)
        k2, e2 = _mid_child(cfg_of("mcts+P", playout_depth=30), seed)
        assert k2.playout(e2, r.copy()) == pytest.approx(value, rel=1e-12)
    assert checked >= 2


@pytest.mark.parametrize("name", ["vanilla", "mcts+P"])
def test_a10_offset_0_multiplies_every_term_by_d(name):
    """Same draws, discount_offset 0 (the paper's d**i) instead of 1: every term, the bonus
    included, gains one factor 0.9. Fix "exponent n" in the code preset -> ratio 1."""
    for seed in range(3):
        k1, e1 = _mid_child(cfg_of(name), seed)
        k0, e0 = _mid_child(cfg_of(name, discount_offset=0), seed)
        r = new_rng_state(7 + seed)
        v1 = k1.playout(e1, r.copy())
        v0 = k0.playout(e0, r.copy())
        assert v1 != 0.0
        assert v0 == pytest.approx(0.9 * v1, rel=1e-12)


def test_a10_first_ply_is_undiscounted():
    """A one-ply playout (no win) is exactly H(state after the ply, persp) / 1."""
    k, e = _mid_child(cfg_of("vanilla", playout_depth=1), 0)
    value = k.playout(e)
    persp = int(k.tree.player[0])
    assert int(k.acc[mcts.ACC_PLIES]) == 1
    after = k.work.playout  # the playout's final state
    assert not rules.has_won(after, BLUE) and not rules.has_won(after, RED)
    assert value == float(heuristic.heuristic(after, persp))
    assert value != 0.0


def test_a11_vanilla_playouts_are_unlimited_and_scored_with_h():
    """playout_depth 0: random playouts run until a colour wins (often far beyond 21 plies);
    the value is the discounted mean of H plus the bonus, not a bare win/loss value."""
    lengths = []
    for seed in range(6):
        k, e = _mid_child(cfg_of("vanilla"), seed)
        value = k.playout(e)
        n = int(k.acc[mcts.ACC_PLIES])
        lengths.append(n)
        after = k.work.playout
        assert rules.has_won(after, BLUE) or rules.has_won(after, RED)
        assert k.acc[mcts.ACC_SOLVER] == 0
        bare = 0.9 ** (n - 1) / n
        assert abs(value) != pytest.approx(bare)
    assert max(lengths) > 21


# ------------------------------------------------------------------------------------------
# QUIRK-A12: random size proportional to the pool composition


def test_a12_random_size_proportional_to_pool():
    """Pool 3 smalls + 1 large, 28 empty squares: P(large) = 1/4, where a uniform choice of
    size or of move would give 1/2."""
    p = pos("b...../.b..../..b.../...B../....../...... 3,1 8,0 b")
    rng = new_rng_state(2024)
    banned = np.zeros(72, dtype=np.bool_)
    sq = np.empty(36, dtype=np.int64)
    draws = [int(rules.random_move(p.state, banned, rng, sq)) for _ in range(4000)]
    assert all(p.state[c % 36] == 0 for c in draws)
    share = sum(c >= 36 for c in draws) / len(draws)
    assert abs(share - 0.25) < 0.035
    # both sizes' squares are uniform: every empty square appears for smalls
    assert {c for c in draws if c < 36} == {i for i in range(36) if p.state[i] == 0}


def test_random_move_bans_squares_of_the_drawn_size_only():
    """B.9 step 2: the banned moves of the drawn size are skipped; banning every large move
    but F1 leaves P(large) unchanged and puts every large on f1."""
    p = pos("b...../.b..../..b.../...B../....../...... 3,1 8,0 b")
    banned = np.zeros(72, dtype=np.bool_)
    banned[36:72] = True
    banned[code("F1")] = False
    banned[code("a1")] = True
    rng = new_rng_state(5)
    sq = np.empty(36, dtype=np.int64)
    draws = [int(rules.random_move(p.state, banned, rng, sq)) for _ in range(2000)]
    larges = [c for c in draws if c >= 36]
    assert set(larges) == {code("F1")}
    assert code("a1") not in draws
    assert abs(len(larges) / len(draws) - 0.25) < 0.04


# ------------------------------------------------------------------------------------------
# Final choice: immediate-win scan over ALL root children, then the best mean


def test_immediate_win_scan_includes_masked_children():
    """Root moveNumber 4 (m = 0): both of Blue's wins, A6 and A3, are on the ring, hence masked
    and never visited, yet the final choice returns the first of them in creation order.
    Fix "scan eligible/visited children only" -> another move."""
    p = pos("....../B...../B...../....../....../...... 5,1 8,0 b 3,0 4")
    k = Kit(cfg_of("vanilla", playout_depth=2)).init_root(p.state)
    k.iterate(60)
    wins = [c for c in k.children() if rules.has_won(k.state(c), BLUE)]
    assert [int(k.tree.move[c]) for c in wins] == [code("A6"), code("A3")]
    assert all(k.tree.masked[c] and k.tree.visits[c] == 0 for c in wins)
    assert mcts.final_choice(k.tree, BLUE, k.rng, k.work) == code("A6")


def test_final_choice_is_best_mean_not_most_visits():
    k = Kit(cfg_of("vanilla")).init_root(pos(MID).state)
    a, b, c = k.children()[:3]
    k.tree.visits[a], k.tree.score[a] = 100, 10.0  # mean 0.1, most visited
    k.tree.visits[b], k.tree.score[b] = 2, 1.0  # mean 0.5
    k.tree.visits[c], k.tree.score[c] = 4, -3.0
    assert mcts.final_choice(k.tree, BLUE, k.rng, k.work) == k.tree.move[b]
    # exact ties are kept and broken at random
    k.tree.visits[c], k.tree.score[c] = 4, 2.0
    picks = {int(mcts.final_choice(k.tree, BLUE, new_rng_state(s), k.work)) for s in range(40)}
    assert picks == {int(k.tree.move[b]), int(k.tree.move[c])}


def test_final_choice_win_beats_a_better_mean():
    k = Kit(cfg_of("vanilla")).init_root(pos(WIN_BLUE).state)
    (win,) = [c for c in k.children() if k.tree.terminal[c]]
    other = next(c for c in k.children() if c != win)
    k.tree.visits[other], k.tree.score[other] = 1, 50.0
    assert mcts.final_choice(k.tree, BLUE, k.rng, k.work) == code("C4")


# ------------------------------------------------------------------------------------------
# QUIRK-A1 / A2: the port's failure behaviour of the two solver entry points


def test_a1_best_move_returns_none_when_every_legal_move_is_masked():
    p = pos(MID)
    mv, ties = p.best_move(rng=0, masks=p.legal_moves())
    assert mv is None and ties == 0
    mask = np.ones(72, dtype=np.bool_)
    assert objective.best_move_ws(p.state, mask, new_rng_state(0), *solver_buffers(new_work()))[0] == -1
    k = Kit(cfg_of("mcts-co"))
    assert mcts.solver_best_move(p.state, mask, k.rng, k.work, k.acc, k.acc_us, k.costs) == -1
    # one unmasked move left: it is the answer
    mask[code("c2")] = False
    assert mcts.solver_best_move(p.state, mask, k.rng, k.work, k.acc, k.acc_us, k.costs) == code("c2")


def test_a2_best_m_moves_stops_when_moves_run_out():
    """m = 40 on the initial position (36 legal moves): all 36, once each, and the search masks
    nothing; the original would loop forever."""
    p = Position.initial()
    moves = p.best_m_moves(40, rng=0)
    assert sorted(m.code for m in moves) == list(range(36))
    k = Kit(cfg_of("mcts+S", preselect_m=40)).init_root(p.state)
    assert len(k.children()) == 36 and not k.tree.masked[k.children()].any()


# ------------------------------------------------------------------------------------------
# Backpropagation, root, search sanity


def test_backpropagation_alternates_signs_and_updates_the_root():
    k = hand_root(Kit(cfg_of("vanilla")), pos(MID).state)
    c1 = k.create(0, code("c2"))
    c2 = k.create(c1, code("d2"))
    c3 = k.create(c2, code("e2"))
    side = k.create(0, code("a1"))
    mcts.backpropagate(k.tree, c3, 0.25)
    assert [float(k.tree.score[n]) for n in (c3, c2, c1, 0)] == [-0.25, 0.25, -0.25, 0.25]
    assert [int(k.tree.visits[n]) for n in (c3, c2, c1, 0)] == [1, 1, 1, 2]
    assert k.tree.score[side] == 0.0 and k.tree.visits[side] == 0


def test_root_counts_as_fully_expanded_from_the_start():
    """init_root creates every legal move; iterations never add root children."""
    for name, text in (("vanilla", EARLY5), ("mcts-co", MID), ("vanilla", MID)):
        p = pos(text)
        k = Kit(cfg_of(name, playout_depth=2)).init_root(p.state)
        n = len(k.children())
        assert n == rules.legal_move_count(p.state)
        k.iterate(40)
        assert len(k.children()) == n
        assert all(k.depth(c) >= 2 for c in range(n + 1, k.count))
        assert k.tree.visits[0] == 41


@pytest.mark.parametrize("name", MCTS_AGENTS)
def test_search_takes_a_win_in_one(name):
    p = pos(WIN_BLUE)
    move, tel = mcts.search(p.state, cfg_of(name), Budget(mode="device", seconds=0.05), COSTS, new_rng_state(1))
    assert move == code("C4")
    assert tel["iterations"] >= 1


def test_search_degenerate_budget_runs_one_iteration():
    """Creating the root's children alone costs more than 1 µs: the original would throw (no
    visited child); search() runs exactly one iteration instead."""
    p = pos(MID)
    move, tel = mcts.search(p.state, cfg_of("vanilla"), Budget(mode="device", seconds=1e-6), COSTS, new_rng_state(0))
    assert tel["iterations"] == 1
    assert move in {m.code for m in p.legal_moves()}


@pytest.mark.parametrize("name, text", [("vanilla", MID), ("mcts-co", MID), ("vanilla", None)])
def test_device_budget_overrun_is_at_most_the_last_iteration(name, text):
    """search() in device mode stops at the first iteration that ends at or beyond the budget:
    replaying the same kernels with the same generator, the device clock before that iteration
    is under the budget and search() reports the clock after it."""
    st = pos(text).state if text else Position.initial().state
    cfg = cfg_of(name)
    budget_s = 0.3
    move, tel = mcts.search(st, cfg, Budget(mode="device", seconds=budget_s), COSTS, new_rng_state(42))
    k = Kit(cfg, seed=42, capacity=8000).init_root(st)
    clocks = [float(k.acc_us[0])]
    while k.acc_us[0] < budget_s * 1e6:
        k.iterate()
        clocks.append(float(k.acc_us[0]))
    assert tel["iterations"] == len(clocks) - 1
    assert tel["device_seconds"] == pytest.approx(clocks[-1] / 1e6, rel=1e-12)
    assert tel["device_seconds"] >= budget_s
    last_cost = clocks[-1] - clocks[-2]
    assert clocks[-2] < budget_s * 1e6
    assert tel["device_seconds"] * 1e6 - budget_s * 1e6 <= last_cost
    assert tel["tree_nodes"] == k.count and tel["nodes_created"] == k.acc[mcts.ACC_NODES]
    assert tel["playout_plies"] == k.acc[mcts.ACC_PLIES]
    assert tel["solver_calls"] == k.acc[mcts.ACC_SOLVER]
    assert move == mcts.final_choice(k.tree, int(st[42]), k.rng, k.work)


def test_iterations_budget_runs_exactly_that_many():
    p = pos(MID)
    for n in (1, 3, 17):
        _, tel = mcts.search(p.state, cfg_of("mcts-co"), Budget(mode="iterations", iterations=n), COSTS,
                             new_rng_state(n))
        assert tel["iterations"] == n


def test_search_does_not_touch_the_root_state():
    p = pos(MID)
    st = np.array(p.state)
    mcts.search(st, cfg_of("mcts-co"), Budget(mode="iterations", iterations=20), COSTS, new_rng_state(0))
    assert np.array_equal(st, p.state)


def test_uct_value_of_a_node():
    """descend prefers the child maximising mean + 0.3 sqrt(ln N / n); unvisited first."""
    k = Kit(cfg_of("vanilla")).init_root(pos(MID).state)
    kids = k.children()
    for c in kids:  # unexpanded children: descend stops at the one UCT prefers
        k.tree.visits[c], k.tree.score[c] = 10, 0.0
    k.tree.visits[0] = 1 + 10 * len(kids)
    a, b = kids[3], kids[7]
    k.tree.visits[a], k.tree.score[a] = 4, 1.0  # 0.25 + 0.3 sqrt(ln N / 4)
    k.tree.visits[b], k.tree.score[b] = 1, 0.0  # 0.0 + 0.3 sqrt(ln N)
    n_root = k.tree.visits[0]
    ua = 0.25 + 0.3 * math.sqrt(math.log(n_root) / 4)
    ub = 0.3 * math.sqrt(math.log(n_root))
    expected = a if ua > ub else b
    assert mcts.descend(k.tree, k.params, k.rng, k.work, *k.flags[1:]) == expected
    k.tree.visits[kids[9]] = 0
    assert mcts.descend(k.tree, k.params, k.rng, k.work, *k.flags[1:]) == kids[9]



def _array_like_returns(fn: ast.FunctionDef) -> list[str]:
    """The return values of ``fn`` that may be an array: a parameter, a field (``work.mask``),
    a slice, or a name bound to a field or a slice."""
    aliases = {a.arg for a in fn.args.args}
    for node in ast.walk(fn):  # x = work.mask, x = st[a:b]
        v = getattr(node, "value", None)
        if isinstance(node, ast.Assign) and (isinstance(v, ast.Attribute) or (
                isinstance(v, ast.Subscript) and isinstance(v.slice, ast.Slice))):
            aliases |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    bad = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and node.value is not None:
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            for v in values:
                if isinstance(v, ast.Subscript) and isinstance(v.slice, ast.Slice):
                    bad.append(ast.unparse(v))
                elif isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) and v.value.id in aliases:
                    bad.append(ast.unparse(v))
                elif isinstance(v, ast.Name) and v.id in aliases:
                    bad.append(ast.unparse(v))
    return bad


def test_kernels_without_reference_counts_return_no_array():
    """The kernels compiled with ``_nrt=False`` (docs/engine.md §9) only borrow their caller's
    arrays: one that returned an array would hand a reference-counted caller a reference it
    never got, released twice. So none returns a parameter, a field or a view of one (a
    scalar element ``x[i]`` is fine; where a parameter is scalar, the check is conservative)."""
    import inspect

    scalar_ok = {("heuristic", "changed_lines_packed"), ("objective", "keep_best")}  # they return scalar parameters
    found = 0
    for module in (rules, heuristic, objective, mcts, rng_module):
        tree = ast.parse(inspect.getsource(module))
        for fn in tree.body:
            if not isinstance(fn, ast.FunctionDef):
                continue
            if not any("_nrt=False" in ast.unparse(d) for d in fn.decorator_list):
                continue
            found += 1
            if (module.__name__.rsplit(".", 1)[1], fn.name) in scalar_ok:
                continue
            assert _array_like_returns(fn) == [], (module.__name__, fn.name)
    assert found >= 60


@pytest.mark.parametrize("budget", [
    # a device profile overridden to almost no cost: its clock would buy ~10^9 iterations
    Budget(mode="device", seconds=600, costs={"node": 1e-3, "random_ply": 1e-3, "iteration": 1e-3}),
    Budget(mode="wall", seconds=600),
])
def test_every_mode_stops_at_the_budgets_iteration_cap(monkeypatch, budget):
    """No budget buys an endless search (issue 33): a device, cpu or wall move stops at
    MAX_ITERATIONS whatever its clock says (lowered here, so that the test is quick)."""
    from boopexp.agents import budget as budget_module
    from boopexp.agents.specs import resolve_agent

    monkeypatch.setattr(budget_module, "MAX_ITERATIONS", 40)
    assert budget.iteration_cap == 40
    spec = resolve_agent("vanilla")
    from boopexp.engine.state import initial_state

    _, tel = mcts.search(initial_state(), spec.mcts, budget, device_costs(budget.device_profile()),
                         new_rng_state(1))
    assert tel["iterations"] == 40
