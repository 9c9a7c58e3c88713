"""Protocol overhead per move (docs/protocol.md): the random agent through btp (boopexp engine) vs in-process.

Run: .venv/bin/python benchmarks/btp_overhead.py [GAMES]  (medians in ms/move; the goal is <= 2 ms)
"""
import statistics
import sys
import time

import numpy as np

from boopexp.agents.budget import Budget
from boopexp.agents.specs import AgentSpec, resolve_agent
from boopexp.engine import rules
from boopexp.engine.buffers import new_work
from boopexp.engine.state import decode_move, initial_state
from boopexp.game import notation
from boopexp.play.match import make_player


def game_times(player, seed: int, plies: int = 60) -> list[float]:
    """Times of player.select (the seat-0 player plays both sides: only the per-move cost matters)."""
    st = initial_state()
    w = new_work()
    out = []
    for _ in range(plies):
        t = time.perf_counter()
        code, _ = player.select(st)
        out.append(time.perf_counter() - t)
        size, sq = decode_move(code)
        winner, n, chosen = rules.apply_move_inplace(
            st, size, sq, rules.REAL, player.promotion, player.rng, w.groups, w.scores, w.ties)
        group = tuple(int(q) for q in w.groups[chosen] if q >= 0) if n >= 2 else None
        player.observe(notation.format_move(size, sq, group))
        if winner:
            break
    return out


def main() -> None:
    budget = Budget(mode="iterations", iterations=1)
    command = (sys.executable, "-m", "boopexp", "engine", "--agent", "random")
    engine = AgentSpec(name="random", kind="engine", engine=command, options={})
    local: list[float] = []
    hosted: list[float] = []
    for seed in range(int(sys.argv[1]) if len(sys.argv) > 1 else 20):
        ss = np.random.SeedSequence(seed).spawn(2)[0]
        local += game_times(make_player(resolve_agent("random"), budget, ss), seed)
        player = make_player(engine, budget, ss)
        times = game_times(player, seed)
        player.close()
        hosted += times[1:]  # the first move includes the engine's start (python + numba cache load)
    ml, mh = statistics.median(local) * 1e3, statistics.median(hosted) * 1e3
    p90 = statistics.quantiles(hosted, n=10)[-1] * 1e3
    print(f"in-process random: median {ml:.3f} ms/move over {len(local)} moves")
    print(f"through btp:       median {mh:.3f} ms/move over {len(hosted)} moves (first move of each game excluded)")
    print(f"protocol overhead: {mh - ml:.3f} ms/move (median difference); p90 btp {p90:.3f} ms")


if __name__ == "__main__":
    main()
