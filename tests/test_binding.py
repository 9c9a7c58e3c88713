"""The search templates bound to a game other than boop. (:mod:`boopexp.engine.binding`): the bound
copy plays with that game's kernels, a draw is a terminal node worth 0, and numba's on-disk cache
keeps each game's machine code apart and is hit in a new process (docs/games.md)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from boopexp.agents.budget import Budget, device_costs
from boopexp.agents.specs import resolve_agent
from boopexp.engine import binding
from boopexp.engine.outcome import DRAW
from boopexp.engine.rng import new_rng_state

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def load_tictactoe():
    """examples/tictactoe/kernels.py as ``tictactoe.kernels``, the name examples/tictactoe.yaml imports
    it by (numba's cache index names the module of a kernel's argument types: one name per file)."""
    if str(EXAMPLES) not in sys.path:
        sys.path.append(str(EXAMPLES))
    return importlib.import_module("tictactoe.kernels")


def position(ttt, cells):
    """The tic-tac-toe position after ``cells`` are marked in turn."""
    st = ttt.initial_state()
    for c in cells:
        ttt.apply_move(st, c, new_rng_state(0), ttt.new_work())
    return st


def search(bound, st, agent, seed=1, iterations=200):
    cfg = resolve_agent(agent, preset="code-0.6.2").mcts
    return bound.search(st, cfg, Budget(mode="iterations", iterations=iterations), device_costs("android-2023"),
                        new_rng_state(seed))


@pytest.mark.parametrize("agent", ["vanilla", "mcts-co"])
def test_a_bound_game_is_searched_with_its_own_kernels(agent):
    ttt = load_tictactoe()
    bound = binding.bind("tictactoe", ttt)
    assert bound.STATE_SIZE == ttt.STATE_SIZE and bound.apply_move is ttt.apply_move
    assert binding.bind("tictactoe", ttt) is bound  # once per process
    # X (first) on 0 and 1, O on 3 and 4, X to move: 2 wins at once; O threatens 5
    code, telemetry = search(bound, position(ttt, [0, 3, 1, 4]), agent)
    assert code == 2
    assert telemetry["iterations"] == 200
    assert (telemetry["solver_calls"] > 0) == (agent == "mcts-co")


def test_a_draw_ends_a_branch_with_the_value_zero():
    ttt = load_tictactoe()
    bound = binding.bind("tictactoe", ttt)
    # X O X / X O O / O X _ : X's last move draws
    st = position(ttt, [0, 1, 2, 4, 3, 5, 7, 6])
    tree = bound.new_tree(64)
    work = bound.new_work()
    params = bound.params_vector(resolve_agent("vanilla", preset="code-0.6.2").mcts)
    acc, acc_us = np.zeros(bound.N_ACC, dtype=np.int64), np.zeros(1)
    bound.init_root(tree, st, params, new_rng_state(0), work, acc, acc_us, device_costs("android-2023"),
                    *bound.feature_flags(params))
    child = int(tree.first_child[0])
    assert int(tree.n_children[0]) == 1 and int(tree.move[child]) == 8
    assert bool(tree.terminal[child]) and float(tree.score[child]) == 0.0 and int(tree.proven[child]) == 0
    after = st.copy()
    assert ttt.apply_move(after, 8, new_rng_state(0), work) == (DRAW, 0)


def test_a_kernels_module_without_a_required_name_is_refused():
    ttt = load_tictactoe()
    broken = type(ttt)("broken_kernels")
    for key in binding.REQUIRED:
        if key != "objective":
            setattr(broken, key, getattr(ttt, key))
    with pytest.raises(ValueError, match=r"game 'broken': its kernels module broken_kernels lacks objective"):
        binding.bind("broken", broken)
    with pytest.raises(ValueError, match="identifier"):
        binding.bind("tic-tac-toe", ttt)


PROBE = textwrap.dedent(f"""
    import importlib, json, sys
    sys.path.append({str(EXAMPLES)!r})
    ttt = importlib.import_module("tictactoe.kernels")
    from boopexp.agents.budget import Budget, device_costs
    from boopexp.agents.specs import resolve_agent
    from boopexp.engine import binding, mcts
    from boopexp.engine.rng import new_rng_state
    from boopexp.engine.state import initial_state
    bound = binding.bind("tictactoe", ttt)
    cfg = resolve_agent("vanilla", preset="code-0.6.2").mcts
    budget, costs = Budget(mode="iterations", iterations=50), device_costs("android-2023")
    out = {{}}
    for name, module, st in (("tictactoe", bound, ttt.initial_state()), ("boop", mcts, initial_state())):
        code, _ = module.search(st, cfg, budget, costs, new_rng_state(7))
        stats = module.run_iterations.stats
        out[name] = [code, stats.cache_path, sum(stats.cache_hits.values()), sum(stats.cache_misses.values())]
    print(json.dumps(out))
""")


def test_each_game_is_cached_apart_and_loaded_from_the_cache_in_a_new_process():
    """numba's cache index is keyed by file and qualified name, not globals: without the per-game
    folder, a bound copy would load boop.'s machine code (or boop. the copy's)."""
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=900,
                              cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": "0"})
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(json.loads(done.stdout.splitlines()[-1]))
    first, second = runs
    from boopexp.engine import mcts
    from boopexp.engine.state import initial_state
    ttt = load_tictactoe()
    here = {"tictactoe": search(binding.bind("tictactoe", ttt), ttt.initial_state(), "vanilla", 7, 50)[0],
            "boop": search(mcts, initial_state(), "vanilla", 7, 50)[0]}
    for name in ("tictactoe", "boop"):
        assert first[name][0] == second[name][0] == here[name], name  # each game's own code, cached or not
    assert Path(second["tictactoe"][1]).name == "game-tictactoe--tictactoe.kernels"
    assert Path(second["tictactoe"][1]).parent == Path(second["boop"][1])
    for name in ("tictactoe", "boop"):
        assert second[name][2] >= 1 and second[name][3] == 0, (name, second[name])  # hits, no compile


def test_the_two_stage_check_of_a_bound_game_masks_the_moves_that_let_the_opponent_win():
    """engine/defaults.lookahead_mask on tic-tac-toe: x to move, o threatens c2 (its a2 b2): every
    move but the block lets o win at once, so all but c2 are masked; where every move loses, none is."""
    ttt = load_tictactoe()
    bound = binding.bind("tictactoe", ttt)
    work = ttt.new_work()
    mask = np.zeros(ttt.N_MOVE_CODES, dtype=np.bool_)
    # x: a3 (0), c1 (8); o: a2 (3), b2 (4); x to move. o's threat: c2 (5)
    st = position(ttt, [0, 3, 8, 4])
    added = bound.lookahead_mask(st, mask, new_rng_state(0), work)
    free = [c for c in range(9) if st[c] == 0]
    assert [c for c in free if not work.la_mask[c]] == [5] and added == len(free) - 1
    assert list(work.la_counts) == [len(free), len(free) - 1, int(work.la_counts[2])] and work.la_counts[2] > 0
    # x: a3 c3 a1, o: b3 a2 b2: o threatens c2 and b1, x wins nowhere: every x move lets o win, so
    # the mask is left alone
    st = position(ttt, [0, 1, 2, 3, 6, 4])
    assert bound.lookahead_mask(st, mask, new_rng_state(0), work) == 0 and not work.la_mask.any()
    assert work.la_counts[0] == work.la_counts[1] == 3
