"""MCTS-Solver (``solver``, the agent ``mcts-solver``): proofs checked against a brute-force negamax.

The brute force plays every legal move with the tree's own model (TREE victory test of both
colours, the promotion heuristic's group: :func:`boopexp.engine.mcts.create_node`), so a node the
search proves must have the value the brute force finds within the proof's depth. The endgames
were found by random self-play (each a real game's position); a side has a single size in its pool
in most of them, so they have 22-28 moves a ply.
"""

from __future__ import annotations

import numpy as np
import pytest
from mcts_helpers import Kit, cfg_of, code, pos

from boopexp.agents.budget import Budget, device_costs
from boopexp.agents.specs import AGENT_NAMES, resolve_agent
from boopexp.engine import mcts, rules
from boopexp.engine.rng import new_rng_state
from boopexp.engine.state import TO_MOVE

#: Blue larges on a4 b4 and a large in the pool: ``C4`` wins at once (as tests/test_mcts.py)
WIN_BLUE = "....../....../BB..../....../....../...... 5,1 8,0 b 3,0 10"
#: the side to move has no win in one, but a move after which every reply allows a win in one
WIN_IN_TWO = ["R.R.../....B./b.rr../.brrBb/B.B.../...r.. 0,1 0,1 b 5,3 40",
              "....../.B..R./...B../.bR.../R...B./..R... 0,4 0,4 r 7,8 87"]
#: every move of the side to move allows the opponent a win in one
LOSS_IN_TWO = ["..B..R/R...../..R.Rb/.b.b.R/.b..b./...R.R 0,2 0,1 b 3,8 42",
               "....B./.BB.R./R....B/.B.B.R/R...../..R.B. 0,1 0,3 r 8,8 75"]

_G = np.empty((rules.MAX_GROUPS, 3), dtype=np.int64)
_S = np.empty(rules.MAX_GROUPS, dtype=np.int64)
_T = np.empty(rules.MAX_GROUPS, dtype=np.int64)


def negamax(st: np.ndarray, depth: int) -> int:
    """The game's value for the side to move within ``depth`` plies: +1 a forced win, -1 a forced
    loss, 0 neither (brute force over every legal move, the tree's model of a move)."""
    if depth == 0:
        return 0
    mover = int(st[TO_MOVE])
    codes = np.empty(72, dtype=np.int64)
    best = -1
    for move in codes[:rules.legal_move_codes(st, codes)]:
        child = np.array(st, dtype=np.int16, copy=True)
        winner, _, _ = rules.apply_move_inplace(child, int(move) // 36 + 1, int(move) % 36, rules.TREE,
                                                rules.PROMO_HEURISTIC, new_rng_state(0), _G, _S, _T)
        if winner == mover:
            return 1
        value = -1 if winner != 0 else -negamax(child, depth - 1)
        best = max(best, value)
        if best == 1:
            return 1
    return best


def solved(text: str, name: str = "mcts-solver", seed: int = 1, most: int = 20_000) -> Kit:
    """A search of ``name`` with the solver on from ``text``, run until its root is proven."""
    kit = Kit(cfg_of(name, solver=True), seed=seed, capacity=most + 200).init_root(pos(text).state)
    done = 0
    while kit.tree.proven[0] == 0 and done < most:
        kit.iterate(100)
        done += 100
    return kit


def height(kit: Kit, node: int) -> int:
    """The depth of ``node``'s subtree (0: a leaf)."""
    kids = kit.children(node)
    return 1 + max(height(kit, c) for c in kids) if kids else 0


def test_brute_force_sees_the_positions_as_labelled():
    """The oracle itself, on the test positions: a win in one, wins in two and losses in two."""
    assert negamax(pos(WIN_BLUE).state, 1) == 1
    for text in WIN_IN_TWO:
        assert negamax(pos(text).state, 1) == 0 and negamax(pos(text).state, 3) == 1
    for text in LOSS_IN_TWO:
        assert negamax(pos(text).state, 2) == -1


def test_a_win_in_one_proves_the_root_at_initialisation():
    kit = Kit(cfg_of("mcts-solver")).init_root(pos(WIN_BLUE).state)
    wins = [c for c in kit.children() if kit.tree.proven[c] == 1]
    assert [int(kit.tree.move[c]) for c in wins] == [code("C4")]
    assert kit.tree.proven[0] == -1  # the root's player (the side NOT to move) has lost
    assert kit.acc[mcts.ACC_PROVEN] == 1


@pytest.mark.parametrize("text", WIN_IN_TWO)
def test_a_win_in_two_is_found_proven_and_chosen(text):
    kit = solved(text)
    assert kit.tree.proven[0] == -1
    wins = [c for c in kit.children() if kit.tree.proven[c] == 1]
    assert wins and all(not kit.tree.terminal[c] for c in wins)  # no win in one: proven through the replies
    for c in wins:  # every reply of the opponent allows a win in one
        assert negamax(kit.state(c), 2) == -1
    chosen = int(mcts.final_choice(kit.tree, int(pos(text).state[TO_MOVE]), kit.rng, kit.work, True))
    assert chosen in {int(kit.tree.move[c]) for c in wins}


@pytest.mark.parametrize("text", LOSS_IN_TWO)
def test_a_loss_in_two_is_proven_at_a_root_with_every_move(text):
    """The root is a loss only once every legal move is a child proven lost."""
    kit = solved(text)
    assert kit.tree.proven[0] == 1
    kids = kit.children()
    assert len(kids) == rules.legal_move_count(pos(text).state)
    assert all(kit.tree.proven[c] == -1 for c in kids)


@pytest.mark.parametrize("text", WIN_IN_TWO + LOSS_IN_TWO)
def test_every_proven_node_has_the_brute_force_value(text):
    """A node proven +1 for its player is a forced loss for the side to move in it (and -1 a
    forced win), within its subtree's depth, by brute force: the backups prove nothing false."""
    kit = solved(text)
    checked = 0
    for node in range(1, kit.count):
        proof = int(kit.tree.proven[node])
        if proof == 0 or kit.tree.terminal[node]:
            continue
        h = height(kit, node)
        if h > 2:
            continue
        assert negamax(kit.state(node), h) == -proof, node
        checked += 1
    assert checked >= 3


def test_the_solver_off_proves_nothing_and_keeps_quirk_a4():
    """With the paper's settings no backup runs (terminal nodes alone carry their value) and a
    node is fully expanded at its empty squares' count (QUIRK-A4), as before the solver existed."""
    kit = Kit(cfg_of("vanilla"), seed=1).init_root(pos(LOSS_IN_TWO[0]).state).iterate(400)
    assert kit.acc[mcts.ACC_PROVEN] == 0 and kit.tree.proven[0] == 0
    on = solved(LOSS_IN_TWO[0], most=400)
    assert on.acc[mcts.ACC_PROVEN] > 0


def test_mcts_solver_is_vanilla_with_the_solver():
    spec, vanilla = resolve_agent("mcts-solver"), resolve_agent("vanilla")
    assert spec.mcts == vanilla.mcts.__class__(**{**vanilla.to_dict()["params"], "solver": True})
    assert spec.to_dict()["params"]["solver"] is True
    for name in AGENT_NAMES:  # only the new agents carry the late keys: every other identity is unchanged
        params = resolve_agent(name).to_dict().get("params", {})
        assert ("solver" in params) == (name == "mcts-solver")
        assert ("prior" in params) == (name == "mcts-prior")
        assert "prior_c" not in params and "prior_temp" not in params


def test_a_search_reports_its_proofs_and_plays_the_proven_win():
    budget = Budget(mode="iterations", iterations=5000)
    spec = resolve_agent("mcts-solver")
    text = WIN_IN_TWO[0]
    first = mcts.search(pos(text).state, spec.mcts, budget, device_costs(budget.profile), new_rng_state(3))
    again = mcts.search(pos(text).state, spec.mcts, budget, device_costs(budget.profile), new_rng_state(3))
    assert first[0] == again[0]
    assert first[1]["proven_nodes"] == again[1]["proven_nodes"] > 0
    st = np.array(pos(text).state, copy=True)
    rules.apply_move_inplace(st, first[0] // 36 + 1, first[0] % 36, rules.TREE, rules.PROMO_HEURISTIC,
                             new_rng_state(0), _G, _S, _T)
    assert negamax(st, 2) == -1  # the move played leaves the opponent a forced loss
    plain = mcts.search(pos(text).state, resolve_agent("vanilla").mcts, budget, device_costs(budget.profile),
                        new_rng_state(3))
    assert "proven_nodes" not in plain[1]
