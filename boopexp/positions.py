"""Fixed, seeded sets of realistic positions for benchmarks and calibration.

Positions come from games in which each side plays the solver's best move with probability 1/2
and a random move otherwise (so they look like games between search agents, not random noise),
sampled between plies 4 and 40; finished games are not sampled.
"""

from __future__ import annotations

import numpy as np

from boopexp import mcts, objective, rules
from boopexp.rng import new_rng_state
from boopexp.state import initial_state


def sample_positions(n: int, seed: int = 2024) -> np.ndarray:
    """``n`` positions as an (n, 44) int16 array; identical for the same (n, seed)."""
    rng = new_rng_state(seed)
    coin = np.random.default_rng(seed)
    ws = objective.new_workspace()
    mask = np.zeros(72, dtype=np.bool_)
    squares = np.empty(36, dtype=np.int64)
    out = []
    while len(out) < n:
        st = initial_state()
        for ply in range(40):
            if coin.random() < 0.5:
                code, _ = objective.best_move_ws(st, mask, rng, *ws)
            else:
                code = mcts.random_move(st, mask, rng, squares)
            new, winner, _, _ = rules.apply_move(st, code // 36 + 1, code % 36, rules.REAL, rules.PROMO_HEURISTIC, rng)
            if winner != 0:
                break
            st = new
            if ply >= 4 and coin.random() < 0.25:
                out.append(st.copy())
                if len(out) == n:
                    break
    return np.array(out, dtype=np.int16)
