"""Protocol overhead per move (docs/protocol.md): the random agent through btp (boopexp engine) vs in-process.

Run: .venv/bin/python benchmarks/btp_overhead.py [GAMES]  (medians in ms/move; the goal is <= 2 ms)
"""
import statistics, sys, time
import numpy as np
from boopexp.agents.budget import Budget
from boopexp.agents.specs import AgentSpec, resolve_agent
from boopexp.engine import rules
from boopexp.engine.buffers import new_work
from boopexp.engine.state import decode_move, initial_state
from boopexp.game import notation
from boopexp.play.match import make_player

def game_times(player, seed, plies=60):
    """Times of player.select (the seat-0 player plays both sides: only the per-move cost matters)."""
    st = initial_state(); w = new_work(); out = []
    for _ in range(plies):
        t = time.perf_counter(); code, _ = player.select(st); out.append(time.perf_counter() - t)
        size, sq = decode_move(code)
        winner, n, chosen = rules.apply_move_inplace(st, size, sq, rules.REAL, player.promotion, player.rng, w.groups, w.scores, w.ties)
        text = notation.format_move(size, sq, tuple(int(q) for q in w.groups[chosen] if q >= 0) if n >= 2 else None)
        player.observe(text)
        if winner: break
    return out

budget = Budget(mode="iterations", iterations=1)
engine = AgentSpec(name="random", kind="engine", engine=(sys.executable, "-m", "boopexp", "engine", "--agent", "random"), options={})
local, hosted = [], []
for seed in range(int(sys.argv[1]) if len(sys.argv) > 1 else 20):
    ss = np.random.SeedSequence(seed).spawn(2)[0]
    local += game_times(make_player(resolve_agent("random"), budget, ss), seed)
    p = make_player(engine, budget, ss)
    t = game_times(p, seed); p.close()
    hosted += t[1:]  # the first move includes the engine's start (python + numba cache load)
ml, mh = statistics.median(local) * 1e3, statistics.median(hosted) * 1e3
print(f"in-process random: median {ml:.3f} ms/move over {len(local)} moves")
print(f"through btp:       median {mh:.3f} ms/move over {len(hosted)} moves (first move of each game excluded)")
print(f"protocol overhead: {mh - ml:.3f} ms/move (median difference); p90 btp {statistics.quantiles(hosted, n=10)[-1]*1e3:.3f} ms")
