"""The seed reports' MCTS agents as options of the paper's (docs/agents.md, "The reports' agents"):
``uct_rule`` (the exploration term without the logarithm), ``playout_value`` with the rewards
``reward_win``/``reward_loss``/``reward_draw`` (a playout worth the game's result), ``final_rule``
(the move of best selection value) and ``reuse_tree`` (the subtree of the position reached kept
from the last move's search). Each is off by default: the paper's agents do not change."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from mcts_helpers import Kit, cfg_of, pos

from boopexp.agents.budget import Budget
from boopexp.agents.specs import LATE_PARAMETERS, MCTSConfig
from boopexp.engine import heuristic, mcts
from boopexp.games import registry
from boopexp.interfaces.cli import main
from boopexp.play.contract import TELEMETRY_ORDER
from boopexp.play.replay import first_difference

MID = "b...R./.r..../..B.r./.r..b./....../R..b.. 2,2 2,1 b 3,3 16"
WIN_BLUE = "....../....../BB..../....../....../...... 5,1 8,0 b 3,0 10"
OPTIONS = ("uct_rule", "playout_value", "reward_win", "reward_loss", "reward_draw", "final_rule", "reuse_tree",
           "textbook_backup")


def test_the_options_are_late_parameters_whose_defaults_are_the_paper():
    """Late parameters: in an agent's description only when they differ from the default, so every
    committed agent keeps its settings hash; the defaults are the paper's agent."""
    assert all(name in LATE_PARAMETERS for name in OPTIONS)
    cfg = MCTSConfig()
    assert (cfg.uct_rule, cfg.playout_value, cfg.final_rule, cfg.reuse_tree, cfg.textbook_backup) == (0, 0, 0, False,
                                                                                                         False)
    assert (cfg.reward_win, cfg.reward_loss, cfg.reward_draw) == (1.0, -1.0, 0.0)


def _kit(**overrides) -> Kit:
    return Kit(cfg_of("vanilla", **overrides), seed=5)


def test_the_sqrt_rule_selects_by_c_sqrt_n_over_n_plus_one():
    """uct_rule 1: Q + c * sqrt(N / (n + 1)) picks another child than UCB1's Q + c * sqrt(ln N / n)
    on a root whose statistics are set by hand (A: 10 visits, mean 2; B: 1 visit, mean 0.3; the
    rest far behind): UCB1 prefers A (2.68 > 2.45), the rule without the logarithm B (7.37 > 5.02)."""
    picked = {}
    for rule in (0, 1):
        kit = _kit(uct_rule=rule, uct_c=1.0).init_root(pos(MID).state)
        tree = kit.tree
        kids = kit.children(0)
        for c in kids:
            tree.visits[c], tree.score[c] = 1000, -1e6
        a, b = kids[4], kids[9]
        tree.visits[a], tree.score[a] = 10, 20.0
        tree.visits[b], tree.score[b] = 1, 0.3
        tree.visits[0] = 100
        for c in (a, b):
            expected = (tree.score[c] / tree.visits[c] + math.sqrt(100 / (tree.visits[c] + 1.0)) if rule
                        else tree.score[c] / tree.visits[c] + math.sqrt(math.log(100) / tree.visits[c]))
            assert mcts.uct_value(tree, 0, c, 1.0, math.log(100), rule == 1) == pytest.approx(expected, abs=1e-12)
        picked[rule] = int(mcts.descend(tree, kit.params, kit.rng, kit.work, *kit.flags[1:]))
        picked[rule] = {a: "A", b: "B"}.get(picked[rule], picked[rule])
    assert picked == {0: "A", 1: "B"}


def test_a_result_playout_is_worth_the_agents_reward():
    """playout_value 1: a playout to the end is worth reward_win / reward_loss / reward_draw for the
    searching agent, from the point of view of the node's parent's player; every backed-up value
    is then one of the rewards divided by QUIRK-A7's child count, never an H mean."""
    kit = _kit(playout_value=1, reward_win=100.0, reward_loss=-100.0, playout_depth=0).init_root(pos(MID).state)
    kit.iterate(200)
    # E's first value is -(playout value) / (its rank among S's children): an integer multiple of 100 / k
    for c in range(1, kit.count):
        if kit.tree.visits[c] == 0 and not kit.tree.terminal[c]:
            siblings = int(kit.tree.n_children[kit.tree.parent[c]])
            scaled = abs(kit.tree.score[c]) * np.arange(1, siblings + 1)
            assert np.any(np.isclose(scaled, 100.0, atol=1e-9)), (c, kit.tree.score[c])


def test_a_cut_off_result_playout_is_worth_h_scaled_to_the_rewards():
    """playout_value 1 with playout_depth: the last position's H for the agent, from [-1, 1] to
    [reward_loss, reward_win] (the Colosseum report's early termination): recomputed here for one
    expansion of depth one."""
    kit = _kit(playout_value=1, reward_win=1.0, reward_loss=0.0, playout_depth=1, co_playout_plies=0)
    st = pos(MID).state
    kit.init_root(st)
    agent = int(st[mcts.TO_MOVE])
    e_id = kit.children(0)[0]
    rng = kit.rng.copy()
    value = float(mcts.playout_result(kit.tree, e_id, kit.params, kit.rng, kit.work, kit.acc, kit.acc_us, kit.costs,
                                      kit.flags[0]))
    # replay the one random ply with the same generator
    from boopexp.engine import rules

    after = np.array(kit.state(e_id))
    code = int(rules.random_move(after, np.zeros(72, dtype=np.bool_), rng, np.empty(36, dtype=np.int64)))
    after, winner, _, _ = rules.apply_move(after, code // 36 + 1, code % 36, rules.TREE, rules.PROMO_HEURISTIC, rng)
    assert winner == 0
    agent_value = (float(heuristic.heuristic(after, agent)) + 1.0) / 2.0
    persp = int(kit.tree.player[0])  # S = the root: its player is the side NOT to move, the opponent
    assert persp == -agent
    assert value == pytest.approx(-agent_value, abs=1e-12)


def test_asymmetric_rewards_are_the_agents_utility_for_both_players():
    """{1, -100}: a terminal child the agent wins is worth reward_win to the agent, and the
    opponent's winning reply is worth -reward_loss = +100 to the opponent (zero-sum in the agent's
    utility), not the opponent's own {1, -100}."""
    kit = _kit(playout_value=1, reward_win=1.0, reward_loss=-100.0).init_root(pos(WIN_BLUE).state)
    wins = [c for c in kit.children(0) if kit.tree.terminal[c]]
    assert wins and all(kit.tree.score[c] == 1.0 for c in wins)
    paper = _kit().init_root(pos(WIN_BLUE).state)
    assert all(paper.tree.score[c] == 1.0 for c in paper.children(0) if paper.tree.terminal[c])
    tree = kit.tree
    tree.score[wins[0]] = -1.0  # as if the mover had lost there: worth the agent's loss
    assert mcts.outcome_reward(tree, wins[0], -1, kit.params) == -100.0
    # a node of the opponent's move (player = the opponent) that the opponent wins: +100 for them
    opp = kit.create(wins[0] + 1 if not kit.tree.terminal[wins[0] + 1] else kit.children(0)[-1], 0)
    assert kit.tree.player[opp] == -int(pos(WIN_BLUE).state[mcts.TO_MOVE])
    assert mcts.outcome_reward(tree, opp, 1, kit.params) == 100.0
    assert mcts.outcome_reward(tree, opp, -1, kit.params) == -1.0


def test_the_selection_final_rule_plays_the_best_selection_value():
    """final_rule 1: the visited root child of best uct_value (no immediate win in MID)."""
    seen = {}

    def keep(tree):
        seen["tree"] = mcts.grow_tree(tree, tree.states.shape[0])

    cfg = cfg_of("vanilla", final_rule=1, uct_rule=1, uct_c=1.4)
    budget = Budget("iterations", iterations=300)
    st = pos(MID).state
    from boopexp.agents.budget import device_costs
    from boopexp.engine.rng import new_rng_state

    code, _ = mcts.search(st, cfg, budget, device_costs("android-2023"), new_rng_state(3), on_tree=keep)
    tree = seen["tree"]
    log_n = math.log(tree.visits[0])
    values = {}
    c = int(tree.first_child[0])
    while c != mcts.NO_NODE:
        if tree.visits[c] > 0:
            values[int(tree.move[c])] = mcts.uct_value(tree, 0, c, 1.4, log_n, True)
        c = int(tree.next_sibling[c])
    assert values[code] == max(values.values())
    means = {m: 0 for m in values}
    assert len(set(values.values())) > 1 and means  # the values differ: the choice is a real argmax


def _game(game: str = "boop", *params: str) -> dict:
    """A game of vanilla (p1, with ``params`` as KEY=VALUE) against vanilla, 120 iterations a move."""
    args = ["game", "--game", game, "--p1", "vanilla", "--p2", "vanilla", "--seed", "11", "--budget", "iterations",
            "--iterations", "120", "--json"]
    for param in params:
        args += ["--p1-param", param]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_reused_tree_starts_from_the_last_search_and_the_game_replays():
    """reuse_tree: from its second move on, the agent's search starts from the subtree its last
    search grew under the position reached (``reused_nodes`` > 0 where the reply was expanded: most
    moves of Connect Four's 7-move tree at 120 iterations), and the game replays move for move (the
    kept tree is the player's, one per game)."""
    record = _game("connect-four", "reuse_tree=true")
    reused = [m["reused_nodes"] for m in record["telemetry"] if m["player"] == "p1"]
    assert len(reused) >= 3 and reused[0] == 0 and sum(r > 0 for r in reused) >= len(reused) // 2, reused
    assert all(m["reused_nodes"] == 0 for m in record["telemetry"] if m["player"] == "p2")
    # every move's fields in the record's order, the seconds last (an export and import keep the bytes)
    for move in record["telemetry"]:
        fields = [k for k in move if k in TELEMETRY_ORDER]
        assert fields == sorted(fields, key=TELEMETRY_ORDER.index), fields
    assert first_difference(record) is None
    plain = _game("connect-four")
    assert all("reused_nodes" not in m for m in plain["telemetry"])
    assert plain["moves"] != record["moves"]  # the kept statistics change the play


def test_a_boop_game_with_a_reused_tree_replays():
    """boop.: 72 root moves, so at a small budget the reply is seldom in the tree (a new tree then);
    where it is, the search starts from it; either way the game replays exactly."""
    record = _game("boop", "reuse_tree=true")
    reused = [m["reused_nodes"] for m in record["telemetry"] if m["player"] == "p1"]
    assert reused[0] == 0 and any(r > 0 for r in reused)
    assert first_difference(record) is None


def test_an_adopted_root_is_a_root_as_init_root_makes_it():
    """The kept subtree's root has every legal move as a child, in the legal moves' order, the kept
    children with their statistics, and consistent links; a search from it chooses a legal move."""
    st = pos(MID).state
    kit = _kit().init_root(st).iterate(3000)
    child = max(kit.children(0), key=lambda c: len(kit.children(c)))
    grand = max(kit.children(child), key=lambda g: kit.tree.visits[g])
    target = np.array(kit.state(grand))
    kept = mcts.KeptTree(kit.tree)
    tree, n = mcts.reused_tree(kept, target)
    assert tree is not None and n > 1
    assert int(mcts.find_reusable(kit.tree, target)) == grand
    visits = {int(tree.move[c]): int(tree.visits[c]) for c in _children(tree, 0)}
    mcts.adopt_root(tree, target, kit.params, kit.rng, kit.work, kit.acc, kit.acc_us, kit.costs, *kit.flags)
    codes = np.empty(mcts.N_MOVE_CODES, dtype=np.int64)
    n_legal = int(mcts.legal_move_codes(target, codes))
    kids = _children(tree, 0)
    assert [int(tree.move[c]) for c in kids] == list(codes[:n_legal])
    assert all(int(tree.visits[c]) == visits.get(int(tree.move[c]), 0) for c in kids)
    for c in range(1, int(tree.count[0])):  # every node is its parent's child
        assert c in _children(tree, int(tree.parent[c]))
    assert tree.parent[0] == mcts.NO_PARENT and tree.move[0] == mcts.NO_MOVE
    assert np.array_equal(tree.states[0], target)


def _children(tree, node: int) -> list[int]:
    out = []
    c = int(tree.first_child[node])
    while c != mcts.NO_NODE:
        out.append(c)
        c = int(tree.next_sibling[c])
    return out


def test_a_bad_option_value_is_one_line():
    from boopexp.errors import ConfigError

    with pytest.raises((ConfigError, ValueError), match="uct_rule"):
        MCTSConfig(uct_rule=2)


def test_the_options_reach_every_game():
    """The template bound to another game reads the same vector (Connect Four, result playouts)."""
    record = _game("connect-four", "playout_value=1", "uct_rule=1", "uct_c=1.4", "final_rule=1", "reward_win=100",
                   "reward_loss=-100")
    assert record["termination"] in ("victory", "draw")
    assert registry.get("connect-four").engine().KeptTree is not mcts.KeptTree


def test_textbook_backup_counts_a_new_nodes_playout_whole_and_as_one_visit():
    """textbook_backup: every node's visits are the playouts through it: a node created by an
    expansion has its own first playout and its children's (1 + the sum), a root child (created
    without a playout, AGENTS.md §B.4) its children's, the root its initial 1 and one per
    iteration. The paper's engine leaves new leaves at 0 visits (QUIRK-A8)."""
    kit = _kit(textbook_backup=True).init_root(pos(MID).state).iterate(300)
    tree = kit.tree
    for node in range(1, kit.count):
        if tree.terminal[node]:
            continue
        own = 0 if tree.parent[node] == 0 else 1
        assert tree.visits[node] == own + sum(int(tree.visits[c]) for c in kit.children(node)), node
    assert tree.visits[0] == 1 + 300
    paper = _kit().init_root(pos(MID).state).iterate(300)
    assert any(paper.tree.visits[c] == 0 for c in range(1, paper.count) if paper.tree.parent[c] != 0)


def test_terminal_check_2_skips_the_end_test_after_a_playouts_odd_plies():
    """terminal_check 2 (the Colosseum report's Experiment 1): ply n of a playout is played by the
    game's apply_move_unchecked when n is odd (outcome 0 even when the move ended the game), by
    apply_move when even; 1 (the default) tests after every ply. A mover an unchecked ply left
    without a move ends the playout with the outcome has_won reads."""
    from boopexp.engine.rng import new_rng_state
    from boopexp.games.colosseum import parse_move, parse_position

    assert MCTSConfig().terminal_check == 1 and LATE_PARAMETERS["terminal_check"] == 1
    engine = registry.get("colosseum").engine()
    start = parse_position("5 b9113/80002/80002/80002/c4446 1,1 3,3 A")  # Example 7: A walls itself in
    code = parse_move("0,0,D", start)
    rng, work = new_rng_state(0), engine.new_work()
    for n, check, outcome in ((1, 2.0, 0), (2, 2.0, 1), (1, 1.0, 1), (3, 2.0, 0)):
        st = start.copy()
        assert engine.playout_ply(st, code, n, check, rng, work) == (outcome, 0), (n, check)
    st = start.copy()
    engine.apply_move_unchecked(st, code, rng, work)
    assert engine.settled_outcome(st) == 1  # B's region is the larger
    assert mcts.playout_ply is not engine.playout_ply  # boop.'s own template: its unchecked move is the move


def test_a_colosseum_game_with_terminal_check_2_plays_and_replays():
    """The option reaches the bound template: the agent's playouts differ (they run on past an
    unchecked end), and the game replays move for move."""
    checked = _game("colosseum", "playout_value=1", "reward_loss=0")
    record = _game("colosseum", "playout_value=1", "reward_loss=0", "terminal_check=2")
    assert record["p1_spec"]["params"]["terminal_check"] == 2 and "terminal_check" not in checked["p1_spec"]["params"]
    plies = [[m["playout_plies"] for m in r["telemetry"] if m["player"] == "p1"] for r in (checked, record)]
    assert plies[0] != plies[1]
    assert first_difference(record) is None
