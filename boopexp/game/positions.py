"""The fixed, seeded sample of positions that bench and calibration measure on."""

from __future__ import annotations

import numpy as np

from boopexp.engine.rng import new_rng_state
from boopexp.game.position import Position

#: the seed of the benchmark position set (fixed: the set is identical on every run)
SAMPLE_SEED = 20240611
N_POSITIONS = 200
#: plies (inclusive) from which positions are sampled: past the first moves, before the endgame
PLY_RANGE = (4, 40)
#: probability that a side plays the solver's best move (else a random legal move)
SOLVER_PROB = 0.5


def sample_positions(n: int = N_POSITIONS, seed: int = SAMPLE_SEED) -> np.ndarray:
    """``n`` non-terminal positions (an ``(n, STATE_SIZE)`` int16 array) from seeded games.

    In each game both sides play the solver's best move with probability 1/2, else a random
    legal move (REAL rules, heuristic promotions); a few plies in ``PLY_RANGE`` are drawn per
    game and the positions reached there are kept. Deterministic for a given engine and seed.
    """
    gen = np.random.default_rng(seed)
    rng = new_rng_state(seed)
    lo, hi = PLY_RANGE
    out: list[np.ndarray] = []
    while len(out) < n:
        wanted = set(gen.choice(np.arange(lo, hi + 1), size=5, replace=False).tolist())
        pos = Position.initial()
        for ply in range(hi + 1):
            if ply in wanted:
                out.append(np.array(pos.state))
                if len(out) == n:
                    break
            if gen.random() < SOLVER_PROB:
                best, _ = pos.best_move(rng=rng)
                assert best is not None  # None only when every move is masked; none is
                mv = best
            else:
                moves = pos.legal_moves()
                mv = moves[int(gen.integers(len(moves)))]
            res = pos.play(mv, rng=rng)
            if res.winner is not None:
                break  # finished games contribute only the positions before the end
            pos = res.position
    return np.ascontiguousarray(np.stack(out).astype(np.int16))
