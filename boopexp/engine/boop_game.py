"""boop.'s kernels under the game contract's names (docs/games.md): what the search templates
(:mod:`boopexp.engine.mcts`) call when they play boop., the reference implementation of the contract.

Each kernel here is a thin ``inline="always"`` adapter of a kernel of ``rules``, ``objective``,
``heuristic`` or ``lookahead`` (numba inlines it where it is called, so the search runs the code it
ran before the game became a layer): a move code in, boop.'s sizes and squares, the TREE rules
and the promotion heuristic (AGENTS.md §B.3) inside. boop. supplies every optional kernel of the
contract: its own faster solver, its random move (QUIRK-A12), its "fully expanded" rule
(QUIRK-A4), its early border mask (QUIRK-A5) and its two-stage check.
"""

from __future__ import annotations

from numba import njit

from boopexp.engine import lookahead as _lookahead
from boopexp.engine import objective as _objective
from boopexp.engine import rules as _rules
from boopexp.engine.buffers import new_work
from boopexp.engine.heuristic import heuristic
from boopexp.engine.luts import RING
from boopexp.engine.params import P_EARLY_MASK_PLIES, P_PRESELECT_M
from boopexp.engine.rules import has_won, legal_move_codes, legal_move_count
from boopexp.engine.state import MOVE_NUMBER, N_MOVE_CODES, N_SQUARES, STATE_DTYPE, STATE_SIZE, TO_MOVE

__all__ = ["STATE_SIZE", "STATE_DTYPE", "TO_MOVE", "MOVE_NUMBER", "N_MOVE_CODES", "F_IS_H_AFTER", "new_work",
           "legal_move_codes", "legal_move_count", "apply_move", "has_won", "heuristic", "objective",
           "random_move", "expansion_limit", "root_masked", "solve", "score_moves", "best_m_moves",
           "context_value", "lookahead_mask"]

#: f of a move without a promotion is H of the position after it, from the mover's side
#: (HEURISTIC.md §7): a playout reads the solver's f instead of computing H again
F_IS_H_AFTER = True


@njit(cache=True, _nrt=False, inline="always")
def apply_move(st, code, rng, work):
    """Play ``code`` under the TREE rules, the promotion heuristic choosing (AGENTS.md §B.3):
    (the winner: 0 none, else the colour; the candidate groups of the promotion step)."""
    size, sq = _rules.decode_move(code)
    winner, n_groups, _ = _rules.apply_move_inplace(st, size, sq, _rules.TREE, _rules.PROMO_HEURISTIC, rng,
                                                    work.groups, work.scores, work.ties)
    return winner, n_groups


@njit(cache=True, _nrt=False, inline="always")
def objective(st, code, rng, work):
    """f of ``code`` from the mover's side (HEURISTIC.md §7)."""
    size, sq = _rules.decode_move(code)
    return _objective.objective_ws(st, size, sq, rng, work.ctx, work.groups, work.scores, work.ties)


@njit(cache=True, _nrt=False, inline="always")
def solve(st, mask, rng, work):
    """The solver (AGENTS.md §A.2): (move or -1, optima, legal moves scored, the optimal f)."""
    return _objective.solve(st, mask, rng, work.ctx, work.groups, work.scores, work.ties, work.tie_moves)


@njit(cache=True, _nrt=False, inline="always")
def score_moves(st, mask, rng, work):
    """f of every legal move not in ``mask``: ``work.codes[:n]``, ``work.values[:n]``; returns n."""
    return _objective.score_moves(st, mask, rng, work.ctx, work.groups, work.scores, work.ties, work.codes,
                                  work.values)


@njit(cache=True, inline="always")
def best_m_moves(st, mask, m, rng, work, out):
    """The m best moves not in ``mask`` into ``out[:k]`` (AGENTS.md §A.3); returns k."""
    return _objective.best_m_moves_masked_ws(st, mask, m, rng, work.ctx, work.groups, work.scores, work.ties,
                                             work.codes, work.values, work.tie_moves, out)


@njit(cache=True, _nrt=False, inline="always")
def context_value(st, work):
    """H of ``st`` from its mover's side, read off the context the last solver call on ``st`` left."""
    return _objective.context_value(st, work.ctx)


@njit(cache=True, _nrt=False, inline="always")
def random_move(st, banned, rng, work):
    """AGENTS.md §B.9's random move (QUIRK-A12: the size drawn from the pool list first)."""
    return _rules.random_move(st, banned, rng, work.squares)


@njit(cache=True, _nrt=False, inline="always")
def expansion_limit(st, params):
    """QUIRK-A4: a node is fully expanded at as many children as EMPTY SQUARES (less the horizon k
    of the m = 0 border mask while it holds)."""
    early = params[P_EARLY_MASK_PLIES]
    n_empty = 0
    for i in range(N_SQUARES):
        if st[i] == 0:
            n_empty += 1
    k = early if (params[P_PRESELECT_M] == 0 and st[MOVE_NUMBER] < early) else 0
    return n_empty - k


@njit(cache=True, _nrt=False, inline="always")
def root_masked(st, code, params):
    """QUIRK-A5: with m = 0, the root's moves on the border ring are masked early on."""
    return RING[_rules.decode_move(code)[1]] == 1


@njit(cache=True, inline="always")
def lookahead_mask(st, mask, rng, work):
    """The two-stage check (:mod:`boopexp.engine.lookahead`): ``work.la_mask``, ``work.la_counts``."""
    return _lookahead.lookahead_mask(st, mask, work.la_mask, rng, work.la_after, work.la_reply, work.la_rng,
                                     work.groups, work.scores, work.ties, work.la_unsafe, work.la_counts)
