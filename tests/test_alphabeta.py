"""The alpha-beta agent (boopexp/engine/alphabeta.py) against a brute-force negamax.

The reference is a plain Python negamax over :class:`boopexp.game.position.Position` (legal
moves, REAL rules, every promotion choice of a move that lines up several groups, H at the
leaves, a win scored WIN - plies): it shares nothing with the kernel but the rules and H.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from boopexp.agents.budget import DEVICE_PROFILES, MAX_ITERATIONS, Budget, device_costs
from boopexp.agents.specs import AlphaBetaConfig, resolve_agent
from boopexp.engine import alphabeta as ab
from boopexp.engine import boop_game
from boopexp.engine.rng import new_rng_state
from boopexp.engine.state import decode_move
from boopexp.game.notation import parse_position
from boopexp.game.position import Move, Position

# Found by a seeded scan of random games (depth-2 searches), checked here by the reference.
#: Blue wins in one (and not every move wins)
WIN_IN_ONE = ".Rb.../....../Br.bR./...b../.R.B.R/....Bb 0,1 1,2 b 4,6 50"
#: Red to move loses in two: every move allows Blue a winning reply (22 legal moves)
LOSS_IN_TWO = "B..rB./.R.R../R....r/.r.B../BB..../B.B..R 0,1 1,0 r 8,4 57"
#: no forced result within two plies, and moves that line up two groups (promotion choices)
QUIET = "brb..r/BB..../rR.B.R/....../.B.r../..B.R. 0,1 0,1 r 6,4 31"

COSTS = device_costs("android-2023")
NO_BUDGET = Budget(mode="iterations", iterations=MAX_ITERATIONS)  # the most a move may have


def children(pos: Position):
    """(move, group index, child position or None when the move wins at once) of every child."""
    for move in pos.legal_moves():
        choices = pos.promotion_choices(move)
        for g in range(max(len(choices), 1)):
            res = pos.play(move, promotion=g) if choices else pos.play(move)
            yield move, g, (None if res.winner is not None else res.position)


def reference(pos: Position, depth: int, ply: int = 0) -> float:
    """Plain negamax: the value of ``pos`` for its side to move, ``depth`` plies deep."""
    if depth == 0:
        return pos.heuristic(pos.to_move)
    best = -np.inf
    for _, _, child in children(pos):
        v = ab.WIN - (ply + 1) if child is None else -reference(child, depth - 1, ply + 1)
        best = max(best, v)
    return best


def run(text_or_state, depth=0, budget=NO_BUDGET, seed=0, use_tt=True, scale=1.0):
    st = parse_position(text_or_state) if isinstance(text_or_state, str) else text_or_state
    s = ab.new_search()
    code, group, tel = ab.search(st, AlphaBetaConfig(node_cost_scale=scale, max_depth=depth), budget, COSTS,
                                 new_rng_state(seed), s, use_tt=use_tt)
    return code, group, tel, float(s.value[0])


def test_a_win_in_one_is_found_at_depth_one():
    pos = Position.from_string(WIN_IN_ONE)
    code, group, tel, value = run(WIN_IN_ONE, depth=1)
    assert value == ab.WIN - 1
    assert pos.play(Move.from_code(code), promotion=group if pos.promotion_choices(Move.from_code(code)) else
                    "heuristic").winner == pos.to_move
    assert any(child is not None for _, _, child in children(pos))  # not every move wins
    assert tel["search_depth"] == 1  # a proven win ends the deepening


def test_a_forced_loss_in_two_is_seen_at_depth_two_and_not_at_depth_one():
    pos = Position.from_string(LOSS_IN_TWO)
    assert reference(pos, 2) == -(ab.WIN - 2)  # brute force: every move allows a winning reply
    _, _, _, v1 = run(LOSS_IN_TWO, depth=1)
    assert v1 == reference(pos, 1) and abs(v1) <= 1.0  # H alone does not see it
    _, _, tel, v2 = run(LOSS_IN_TWO, depth=2)
    assert v2 == -(ab.WIN - 2)


def test_a_losing_side_prefers_the_farther_loss_and_a_winning_side_the_nearer_win():
    # Blue to move in LOSS_IN_TWO's position after Red's move: the reply that wins at once is
    # worth WIN - 1, more than any later win.
    pos = Position.from_string(LOSS_IN_TWO)
    move = pos.legal_moves()[0]
    after = pos.play(move).position
    _, _, _, value = run(after.state, depth=3)
    assert value == ab.WIN - 1


@pytest.mark.parametrize("text", [QUIET, LOSS_IN_TWO])
@pytest.mark.parametrize("depth", [1, 2])
def test_values_equal_brute_force(text, depth):
    pos = Position.from_string(text)
    _, _, _, value = run(text, depth=depth)
    assert value == reference(pos, depth)


def test_quiet_position_has_promotion_choices_and_the_search_returns_a_valid_group():
    pos = Position.from_string(QUIET)
    assert any(len(pos.promotion_choices(m)) >= 2 for m in pos.legal_moves())
    for depth in (1, 2, 3):
        code, group, _, _ = run(QUIET, depth=depth)
        move = Move.from_code(code)
        assert pos.check_legal(move) == move
        choices = pos.promotion_choices(move)
        assert group < max(len(choices), 1)


def test_the_best_child_is_worth_the_root_value():
    """The returned (move, group) is a child whose brute-force value is the root's."""
    pos = Position.from_string(QUIET)
    code, group, _, value = run(QUIET, depth=2)
    move = Move.from_code(code)
    res = pos.play(move, promotion=group) if pos.promotion_choices(move) else pos.play(move)
    assert res.winner is None
    assert -reference(res.position, 1, 1) == value


@pytest.mark.parametrize("text", [QUIET, LOSS_IN_TWO])
def test_the_table_changes_nothing_but_the_work_at_a_fixed_depth(text):
    on = run(text, depth=3, use_tt=True)
    off = run(text, depth=3, use_tt=False)
    assert on[3] == off[3]
    assert on[2]["tt_hits"] > 0 and off[2]["tt_hits"] == 0
    assert on[2]["search_nodes"] < off[2]["search_nodes"]


def test_deterministic_from_the_seed():
    budget = Budget(mode="device", seconds=0.5)
    a = run(QUIET, budget=budget, seed=5)
    b = run(QUIET, budget=budget, seed=5)
    strip = lambda tel: {k: v for k, v in tel.items() if k != "host_cpu_seconds"}  # noqa: E731
    assert a[:2] == b[:2] and strip(a[2]) == strip(b[2]) and a[3] == b[3]


def test_a_reused_search_gives_what_a_fresh_one_gives():
    s = ab.new_search()
    cfg = AlphaBetaConfig(max_depth=3)
    ab.search(parse_position(LOSS_IN_TWO), cfg, NO_BUDGET, COSTS, new_rng_state(1), s)
    again = ab.search(parse_position(QUIET), cfg, NO_BUDGET, COSTS, new_rng_state(1), s)
    fresh = ab.search(parse_position(QUIET), cfg, NO_BUDGET, COSTS, new_rng_state(1))
    assert again[:2] == fresh[:2] and again[2]["search_nodes"] == fresh[2]["search_nodes"]


@pytest.mark.parametrize("seconds", [0.05, 0.3, 1.0])
def test_the_device_budget_is_respected(seconds):
    """Past depth 1 (always completed), the search stops at the first node past the budget: it
    overruns by at most one node and one ordering (73 charges of solver_move)."""
    code, _, tel, _ = run(QUIET, budget=Budget(mode="device", seconds=seconds))
    unit = DEVICE_PROFILES["android-2023"].solver_move
    depth1 = run(QUIET, depth=1)[2]["device_seconds"]
    assert code >= 0 and tel["search_depth"] >= 1
    assert tel["device_seconds"] <= max(seconds, depth1) + 73 * unit / 1e6
    if seconds > depth1:
        assert tel["device_seconds"] > seconds  # it searched until the budget ran out


def test_the_device_charge_is_rebuilt_from_the_telemetry():
    """One solver_call per move, then solver_move x node_cost_scale per node and per scored move."""
    p = DEVICE_PROFILES["android-2023"]
    for scale in (0.5, 1.0, 2.0):
        _, _, tel, _ = run(QUIET, depth=3, scale=scale)
        expected = p.solver_call + scale * p.solver_move * (tel["search_nodes"] + tel["solver_moves"])
        assert tel["device_seconds"] == pytest.approx(expected / 1e6, rel=1e-12)


def test_a_larger_node_charge_searches_fewer_nodes_in_the_same_device_time():
    budget = Budget(mode="device", seconds=0.5)
    nodes = {scale: run(QUIET, budget=budget, scale=scale)[2]["search_nodes"] for scale in (0.5, 1.0, 2.0)}
    assert nodes[0.5] > nodes[1.0] > nodes[2.0]


def test_the_node_budget_is_respected():
    depth1 = run(QUIET, depth=1)[2]["search_nodes"]
    for limit in (10, 500, 5000):
        _, _, tel, _ = run(QUIET, budget=Budget(mode="iterations", iterations=limit))
        assert tel["search_nodes"] <= max(limit, depth1) + 1  # the node that found the budget spent


def test_the_agent_plays_a_game_and_chooses_its_promotions():
    from boopexp.play.contract import GameTask
    from boopexp.play.match import play_game

    task = GameTask.new("t", "abcd", resolve_agent("alphabeta"), resolve_agent("heuristics"), 0,
                        Budget(mode="iterations", iterations=3000), "code-0.6.2")
    record = play_game(task)
    again = play_game(task)
    assert record["moves"] == again["moves"]
    mine = [t for t in record["telemetry"] if t["agent"] == "alphabeta"]
    assert all(t["search_depth"] >= 1 and t["search_nodes"] > 0 for t in mine)
    theirs = [t for t in record["telemetry"] if t["agent"] == "heuristics"]
    assert all(t["search_nodes"] == 0 for t in theirs)
    assert list(mine[0])[-5:] == ["search_depth", "search_nodes", "tt_hits", "device_seconds", "host_cpu_seconds"]


def test_zobrist_keys_are_seeded_and_distinct():
    assert len({int(k) for k in boop_game.Z_PIECE[:, [0, 1, 3, 4]].ravel()}) == 36 * 4
    assert boop_game.zobrist_key(parse_position(QUIET)) != boop_game.zobrist_key(parse_position(LOSS_IN_TWO))
    st = parse_position(QUIET)
    moved = st.copy()
    moved[-1] += 1  # moveNumber is part of the key
    assert boop_game.zobrist_key(st) != boop_game.zobrist_key(moved)


def test_decode_of_a_packed_child():
    code, group = divmod(5 * ab.GROUP_SLOTS + 2, ab.GROUP_SLOTS)
    assert (code, group) == (5, 2) and decode_move(code) == (1, 5)


# ------------------------------------------------------------------------------------------
# the agent's name and parameters where configs and the CLI use them


def _invoke(*args):
    from click.testing import CliRunner

    from boopexp.interfaces.cli import main

    return CliRunner().invoke(main, list(args))


def test_game_command_plays_alphabeta_with_its_parameters():
    import json

    result = _invoke("game", "--p1", "alphabeta", "--p2", "random", "--budget", "iterations", "--iterations", "300",
                     "--p1-param", "node_cost_scale=2", "--p1-param", "max_depth=2", "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["p1_spec"] == {"name": "alphabeta", "kind": "alphabeta",
                                 "params": {"node_cost_scale": 2.0, "max_depth": 2}}
    mine = [t for t in record["telemetry"] if t["agent"] == "alphabeta"]
    assert mine and all(1 <= t["search_depth"] <= 2 for t in mine)


def test_game_command_summarises_the_search_depths():
    result = _invoke("game", "--p1", "alphabeta", "--p2", "random", "--budget", "iterations", "--iterations",
                     "1000000", "--p1-param", "max_depth=2")
    assert result.exit_code == 0, result.output
    line = next(li for li in result.output.splitlines() if li.startswith("alpha-beta depth per move"))
    # min 1: a win in one ends the deepening (random lets alphabeta win)
    assert re.fullmatch(r"alpha-beta depth per move: median 2, min [12], max 2; nodes per move: median \d+", line)
    assert "MCTS iterations" not in result.output


def test_a_parameter_alphabeta_does_not_take_is_one_line_and_exit_2():
    for param, message in (("uct_c=1", "unknown key uct_c"), ("node_cost_scale=0", "node_cost_scale = 0"),
                           ("max_depth=41", "max_depth = 41")):
        result = _invoke("game", "--p1", "alphabeta", "--p2", "random", "--p1-param", param)
        assert result.exit_code == 2, (param, result.output)
        assert message in result.output and "Traceback" not in result.output
        assert len(result.output.strip().splitlines()) == 1


def test_a_variant_of_alphabeta_and_its_description():
    from boopexp.agents.roster import parse_agents, resolve
    from boopexp.agents.specs import AgentSpec
    from boopexp.errors import ConfigError

    declared = parse_agents({"ab-slow": {"base": "alphabeta", "node_cost_scale": 2}}, "code-0.6.2", {})
    spec = resolve("ab-slow", declared, "code-0.6.2", {})
    assert spec.kind == "alphabeta" and spec.base == "alphabeta" and spec.alphabeta.node_cost_scale == 2.0
    assert AgentSpec.from_dict(spec.to_dict()) == spec
    with pytest.raises(ConfigError, match="agents.ab.preselect_m"):
        parse_agents({"ab": {"base": "alphabeta", "preselect_m": 3}}, "code-0.6.2", {})


def test_a_sweep_over_the_node_charge(tmp_path):
    from boopexp.experiments.config import load_config

    path = tmp_path / "sweep.yaml"
    path.write_text(
        "name: ab-sweep\nseed: 1\ngames_per_side: 1\nbudget: {mode: device, seconds: 0.1}\n"
        "pairings:\n  - [alphabeta, random]\nsweep:\n  agents.alphabeta.node_cost_scale: [0.5, 2]\n",
        encoding="utf-8")
    config = load_config(path)
    specs = [point.agent("alphabeta") for point in config.points]
    assert [s.alphabeta.node_cost_scale for s in specs] == [0.5, 2.0]
    assert len({p.config_hash for point in config.points for p in point.plan()}) == 4  # 2 sides x 2 points
