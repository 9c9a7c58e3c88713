"""The selection prior (``prior``, ``prior_c``, ``prior_temp``; the agent ``mcts-prior``): PUCT with
H or f as the prior, driven through the compiled kernels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from mcts_helpers import Kit, cfg_of, pos, replay_record

from boopexp.agents.budget import Budget, device_costs
from boopexp.agents.specs import resolve_agent
from boopexp.engine import heuristic, mcts, objective
from boopexp.engine.buffers import new_work, solver_buffers
from boopexp.engine.params import PRIOR_F, PRIOR_H
from boopexp.engine.rng import new_rng_state
from boopexp.game.position import Position
from boopexp.play.contract import GameTask, pack_record
from boopexp.play.match import play_game

MID = "b...R./.r..../..B.r./.r..b./....../R..b.. 2,2 2,1 b 3,3 16"


def test_mcts_prior_is_mcts_ep_with_f_as_the_prior_and_no_mask():
    spec, ep = resolve_agent("mcts-prior").mcts, resolve_agent("mcts+EP").mcts
    assert (spec.prior, spec.preselect_m, spec.early_mask_plies) == (PRIOR_F, 0, 0)
    assert spec == ep.__class__(**{**resolve_agent("mcts+EP").to_dict()["params"], "prior": PRIOR_F,
                                   "early_mask_plies": 0})
    kit = Kit(spec).init_root(Position.initial().state)
    assert all(mcts.eligible(kit.tree, c, 0, 0) for c in kit.children())  # the prior replaces the border mask


@pytest.mark.parametrize("source", [PRIOR_H, PRIOR_F])
def test_the_root_childrens_priors_are_h_or_f_of_their_moves(source):
    st = pos(MID).state
    kit = Kit(cfg_of("mcts-prior", prior=source)).init_root(st)
    kids = kit.children()
    codes = np.empty(72, dtype=np.int64)
    values = np.empty(72, dtype=np.float64)
    ws = solver_buffers(new_work())
    n = objective.score_moves(st, np.zeros(72, dtype=np.bool_), new_rng_state(0), ws[0], ws[1], ws[2], ws[3],
                              codes, values)
    assert n == len(kids) and list(codes[:n]) == [int(kit.tree.move[c]) for c in kids]
    for j, c in enumerate(kids):
        want = values[j] if source == PRIOR_F else heuristic.heuristic(kit.state(c), int(kit.tree.player[c]))
        assert kit.tree.prior[c] == pytest.approx(float(want))
    # one batch: one solver call of that many moves on the device clock
    assert kit.acc[mcts.ACC_PRIOR_EVALS] == n
    assert kit.acc_us[0] == pytest.approx(n * kit.costs[0] + kit.costs[2] + n * kit.costs[3])


def test_selection_is_puct_over_the_softmax_of_the_priors():
    """From a root whose children all have one visit, the child selected maximises
    Q + prior_c * softmax(prior / T) * sqrt(N) / (1 + n), computed here outside the kernel."""
    st = pos(MID).state
    kit = Kit(cfg_of("mcts-prior", prior_c=2.0, prior_temp=0.05)).init_root(st)
    kids = kit.children()
    rng = np.random.default_rng(5)
    for c in kids:
        kit.tree.visits[c] = 1
        kit.tree.score[c] = float(rng.uniform(-0.05, 0.05))
    kit.tree.visits[0] = 1 + len(kids)
    prior = np.array([kit.tree.prior[c] for c in kids])
    p = np.exp((prior - prior.max()) / 0.05)
    p /= p.sum()
    u = [kit.tree.score[c] + 2.0 * p[j] * math.sqrt(kit.tree.visits[0]) / 2.0 for j, c in enumerate(kids)]
    chosen = int(mcts.descend(kit.tree, kit.params, kit.rng, kit.work, *kit.flags[1:]))
    assert chosen == kids[int(np.argmax(u))]
    # with the prior off the same tree is UCT's: no prior term, so (here) the best mean
    plain = Kit(cfg_of("mcts+EP", early_mask_plies=0)).init_root(st)
    for name in ("visits", "score"):
        getattr(plain.tree, name)[:kit.count] = getattr(kit.tree, name)[:kit.count]
    means = [kit.tree.score[c] for c in kids]
    chosen = mcts.descend(plain.tree, plain.params, plain.rng, plain.work, *plain.flags[1:])
    assert int(chosen) == kids[int(np.argmax(means))]


def test_expanded_nodes_get_their_prior_and_f_from_the_expansion_call_is_free():
    kit = Kit(cfg_of("mcts-prior", co_playout_plies=0, playout_depth=1), seed=2).init_root(pos(MID).state)
    evals = int(kit.acc[mcts.ACC_PRIOR_EVALS])
    kit.iterate(len(kit.children()) + 5)
    deep = [c for c in range(1, kit.count) if kit.depth(c) == 2]
    assert deep
    ws = solver_buffers(new_work())
    for c in deep:
        parent = int(kit.tree.parent[c])
        move = int(kit.tree.move[c])
        f = objective.objective_ws(kit.state(parent), move // 36 + 1, move % 36, new_rng_state(0), *ws[:4])
        assert kit.tree.prior[c] == pytest.approx(f)
    assert int(kit.acc[mcts.ACC_PRIOR_EVALS]) == evals  # the expansion's solver call scored them
    h = Kit(cfg_of("mcts-prior", prior=PRIOR_H, co_playout_plies=0, playout_depth=1), seed=2).init_root(
        pos(MID).state)
    evals = int(h.acc[mcts.ACC_PRIOR_EVALS])
    h.iterate(len(h.children()) + 5)
    assert int(h.acc[mcts.ACC_PRIOR_EVALS]) == evals + sum(1 for c in range(1, h.count) if h.depth(c) >= 2
                                                         and not h.tree.terminal[c])


def test_the_prior_off_changes_nothing():
    """Default parameters leave the tree's priors at zero and the search's draws as before: the
    paper's agents' moves are the same with the late keys written out at their defaults."""
    budget = Budget(mode="iterations", iterations=30)
    costs = device_costs(budget.profile)
    st = pos(MID).state
    for name in ("vanilla", "mcts-co"):
        base = mcts.search(st, resolve_agent(name).mcts, budget, costs, new_rng_state(4))
        same = mcts.search(st, cfg_of(name, prior=0, prior_c=0.3, prior_temp=0.1, solver=False), budget, costs,
                           new_rng_state(4))
        assert base[0] == same[0] and "prior_evals" not in base[1]
        assert {k: v for k, v in base[1].items() if k != "host_cpu_seconds"} == \
            {k: v for k, v in same[1].items() if k != "host_cpu_seconds"}


def _strip(rec: dict) -> dict:
    out = dict(rec)
    out.pop("host_seconds", None)
    out["telemetry"] = [{k: v for k, v in t.items() if k != "host_cpu_seconds"} for t in rec["telemetry"]]
    return out


@pytest.mark.parametrize("agent", ["mcts-prior", "mcts-solver"])
def test_a_game_is_legal_deterministic_and_reports_its_counts(agent):
    task = GameTask("t", "0" * 16, f"{agent} vs heuristics", 0, resolve_agent(agent), resolve_agent("heuristics"),
                    Budget(mode="iterations", iterations=6), "code-0.6.2", 13)
    rec = play_game(task)
    replay_record(rec)
    assert _strip(play_game(task)) == _strip(rec)
    key = "prior_evals" if agent == "mcts-prior" else "proven_nodes"
    mine = [t for t in rec["telemetry"] if t["agent"] == agent]
    theirs = [t for t in rec["telemetry"] if t["agent"] == "heuristics"]
    assert all(key in t for t in rec["telemetry"]) and all(t[key] == 0 for t in theirs)
    if agent == "mcts-prior":
        assert all(t[key] > 0 for t in mine)
    assert isinstance(pack_record(rec)["telemetry"], dict)


def test_prior_parameters_are_checked_in_one_line():
    from boopexp.errors import ConfigError

    with pytest.raises(ConfigError, match="prior"):
        resolve_agent("mcts-co", overrides={"prior": 3})
    with pytest.raises(ConfigError, match="prior_temp"):
        resolve_agent("mcts-prior", overrides={"prior_temp": 0})


@pytest.mark.parametrize(("agent", "source"), [("mcts-prior", PRIOR_F), ("mcts-prior", PRIOR_H), ("mcts-solver", 0)])
def test_device_charge_rebuilt_from_the_telemetry(agent, source):
    """docs/budget.md: the paper's primitives, plus with a prior one solver call (the root's batch)
    and one solver_move per prior evaluation; the solver adds nothing beyond the iteration."""
    from boopexp.agents.budget import DEVICE_PROFILES

    p = DEVICE_PROFILES["android-2023"]
    cfg = cfg_of(agent, prior=source) if source else cfg_of(agent)
    for text in (MID, Position.initial().to_string()):
        _, tel = mcts.search(pos(text).state, cfg, Budget(mode="iterations", iterations=25), device_costs(p),
                             new_rng_state(6))
        paper = (tel["iterations"] * p.iteration + tel["nodes_created"] * p.node + tel["playout_plies"] * p.random_ply
                 + tel["solver_calls"] * p.solver_call + tel["solver_moves"] * p.solver_move)
        extra = p.solver_call + tel["prior_evals"] * p.solver_move if source else 0.0
        assert tel["device_seconds"] == pytest.approx((paper + extra) / 1e6, rel=1e-12)
        assert ("prior_evals" in tel) == bool(source) and ("proven_nodes" in tel) == (agent == "mcts-solver")
