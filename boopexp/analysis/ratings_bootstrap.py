"""Its stratified, seeded bootstrap (the same fitter on every resample at once).

Bradley–Terry ratings with bootstrap intervals: the fit redone on resampled games, all at once.

The point estimate is :func:`boopexp.analysis.ratings.fit_ratings` (maximum likelihood, first-move
term). The intervals of docs/robustness-plan.md §3 come from a **seeded bootstrap over games,
stratified by pairing and seat**: every ordered pairing ("A vs B", A moving first) is a stratum
whose games are resampled with replacement, so each resample keeps every stratum's number of
games. A stratum's games have three outcomes (P1 wins, P2 wins, no winner; a fourth, a draw, when
the games hold one), so resampling its n games with replacement draws the counts from
Multinomial(n, observed shares) — exactly, not as an approximation — and the whole bootstrap is a
few arrays of counts. A resampled draw is half a win each way, as in the point fit.

The resampled fits are computed together by the point fit's own fitter,
:func:`boopexp.analysis.ratings.fit_bradley_terry` (Newton's method on a stack of (resamples ×
cells) count arrays, ``numpy.linalg.solve`` on a batch of small Hessians): 2,000 resamples of a
9-agent round robin take well under a second. A resample in which the maximum-likelihood
estimate does not exist (its games are separated: the fit runs past
:data:`boopexp.analysis.ratings.DIVERGED_ELO`) gets half a virtual win each way on every played
cell, as the point fit does (:data:`boopexp.analysis.ratings.HALDANE`; the point fit decides by
the same rule, plus an exact test of separation); how many resamples needed it is reported.

**Pairs** (docs/knowledge-plan.md §5): given each game's pair (``pairs=``, e.g. game i of
"A vs B" and game i of "B vs A", which start from one opening), the bootstrap resamples the
pairs, not the games: every unordered pairing {A, B} is a stratum whose pairs are drawn with
replacement, the two games of a pair together (their outcomes are correlated through the
opening). A pair is one of a few kinds (its games' outcomes in each seat), so its stratum's
resample is again a multinomial draw over the kinds, summed back into the cells the fit reads.

Contrasts (differences of ratings) are read off the resampled ratings: 95% percentile intervals
and bootstrap p-values ``(1 + #{resamples on the wrong side}) / (B + 1)``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from boopexp.analysis.ratings import DRAW, HALDANE, Ratings, design_matrix, fit_bradley_terry, fit_ratings, snap_elo

#: Resamples of docs/robustness-plan.md §3.
RESAMPLES = 2000

#: Seed of the bootstrap's generator (the study's seed): the intervals rebuild exactly.
SEED = 2026


@dataclass(frozen=True)
class BootstrapRatings:
    """The point fit and the resampled ratings.

    Attributes:
        fit: the maximum-likelihood fit with its intervals replaced by bootstrap percentiles.
        agents: the agents, in the column order of ``draws``.
        point: the point ratings (Elo, anchor = 0) per agent in ``agents`` order, then the
            first-move term.
        draws: (resamples, agents + 1) resampled ratings, the first-move term last.
        resamples: number of resamples; seed: the generator's seed.
        corrected_resamples: resamples whose MLE did not exist (half a virtual win added).
    """

    fit: Ratings
    agents: tuple[str, ...]
    point: np.ndarray
    draws: np.ndarray
    resamples: int
    seed: int
    corrected_resamples: int

    def column(self, agent: str) -> int:
        return self.agents.index(agent)

    def contrast(self, weights: Mapping[str, float]) -> tuple[float, np.ndarray]:
        """The point value and the resampled values of Σ weight × Elo(agent)."""
        w = np.zeros(len(self.agents) + 1)
        for agent, weight in weights.items():
            w[self.column(agent)] += weight
        return float(self.point @ w), self.draws @ w


def bootstrap_ratings(
    p1: Sequence[str],
    p2: Sequence[str],
    winner: Sequence[str | None],
    *,
    agents: Sequence[str],
    anchor: str,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    pairs: Sequence[Hashable] | None = None,
) -> BootstrapRatings:
    """Fit Bradley–Terry ratings and their stratified bootstrap (docs/robustness-plan.md §3).

    Args:
        p1, p2, winner: the games, as for :func:`boopexp.analysis.ratings.fit_ratings`.
        agents: the agents in display order; anchor: the agent fixed at 0.
        resamples: bootstrap resamples; seed: the seed of their generator.
        pairs: each game's pair (any hashable; the games of one pair share it and one unordered
            pairing of agents): resample the pairs within each pairing instead of the games
            within each ordered pairing (module docstring). None: the games (the default, and
            the robustness study's bootstrap, unchanged).

    Returns:
        The fit (its intervals: 95% bootstrap percentiles) and the resampled ratings.
    """
    fit = fit_ratings(p1, p2, winner, agents=agents, anchor=anchor)
    names = tuple(dict.fromkeys([*agents, *p1, *p2]))
    index = {a: i for i, a in enumerate(names)}
    # the outcomes P1 wins, P2 wins, no winner, and a draw only when the games hold one: without
    # it the counts, the generator's stream and so every interval are as they always were
    outcomes = 4 if fit.draws else 3
    cells: dict[tuple[int, int], list[int]] = {}
    for a, b, w in zip(p1, p2, winner):
        slot = cells.setdefault((index[a], index[b]), [0] * outcomes)
        slot[_outcome(w)] += 1
    keys = sorted(cells)
    counts = np.array([cells[k] for k in keys], dtype=np.int64)  # (cells, outcomes)
    design = design_matrix(keys, len(names), index[anchor])

    rng = np.random.default_rng(seed)
    if pairs is None:
        n = counts.sum(axis=1)
        shares = counts / n[:, None]
        drawn = rng.multinomial(n, shares, size=(resamples, len(keys)))  # (B, cells, 3)
    else:
        drawn = _resample_pairs(rng, resamples, keys, [(index[a], index[b]) for a, b in zip(p1, p2)], winner, pairs,
                                outcomes)
    wins, losses = drawn[..., 0].astype(float), drawn[..., 1].astype(float)
    if outcomes == 4:  # a draw: half a win each way
        wins, losses = wins + 0.5 * drawn[..., 3], losses + 0.5 * drawn[..., 3]
    theta, corrected = _fit_batch(design, wins, losses)

    by_agent = fit.by_agent()
    point = np.array([by_agent[a].elo for a in names] + [fit.first_move])
    draws = _full(theta, names, index[anchor])
    # snapped as the point fit is: the resampled fits move by an ulp with the CPU's BLAS kernel
    low, high = (np.array([snap_elo(v) for v in q]) for q in np.percentile(draws, [2.5, 97.5], axis=0))
    ratings = tuple(
        replace(r, ci_low=float(low[index[r.agent]]), ci_high=float(high[index[r.agent]]))
        if r.agent != anchor else replace(r, ci_low=0.0, ci_high=0.0)
        for r in fit.ratings
    )
    method = (
        "Bradley–Terry (logistic Elo) with a first-move term, maximum likelihood by Newton's method; "
        + (f"95% intervals: percentiles of {resamples:,} bootstrap resamples of the games, stratified by "
           f"pairing and seat (seed {seed}), relative to the anchor" if pairs is None else
           f"95% intervals: percentiles of {resamples:,} bootstrap resamples of the pairs of games (the two "
           f"games of a pair together), stratified by pairing (seed {seed}), relative to the anchor")
        + ("; a draw counts as half a win for each side" if fit.draws else "")
        + ("; the MLE did not exist, so half a virtual win was added each way to every pairing that "
           "played" if fit.corrected else "")
        + (f"; {corrected} resample(s) needed that correction" if corrected else "")
    )
    fit = replace(fit, ratings=ratings, first_move_ci=(float(low[-1]), float(high[-1])), method=method)
    return BootstrapRatings(fit=fit, agents=names, point=point, draws=draws, resamples=resamples, seed=seed,
                            corrected_resamples=corrected)


def _outcome(winner: str | None) -> int:
    """A game's column in the bootstrap's counts: P1 wins, P2 wins, no winner, drawn."""
    return {"p1": 0, "p2": 1, DRAW: 3}.get(winner, 2) if isinstance(winner, str) else 2


def _resample_pairs(rng: np.random.Generator, resamples: int, keys: Sequence[tuple[int, int]],
                    cells_of_games: Sequence[tuple[int, int]], winner: Sequence[str | None],
                    pairs: Sequence[Hashable], outcomes: int = 3) -> np.ndarray:
    """(B, cells, outcomes) resampled counts (P1 wins, P2 wins, no winner, and drawn when
    ``outcomes`` is 4) per cell of ``keys``, drawing the pairs of each unordered pairing with
    replacement (module docstring).

    Raises:
        ValueError: ``pairs`` is not one key a game, or a pair's games are of two pairings.
    """
    if len(pairs) != len(winner):
        raise ValueError("pairs must give one pair key per game")
    column = {key: k for k, key in enumerate(keys)}
    units: dict[Hashable, dict[int, list[int]]] = {}
    stratum_of: dict[Hashable, frozenset[int]] = {}
    strata: dict[frozenset[int], list[Hashable]] = {}
    for cell, w, unit in zip(cells_of_games, winner, pairs):
        stratum = frozenset(cell)
        if stratum_of.setdefault(unit, stratum) != stratum:
            raise ValueError(f"pair {unit!r} holds games of two pairings")
        if unit not in units:
            units[unit] = {}
            strata.setdefault(stratum, []).append(unit)
        slot = units[unit].setdefault(column[cell], [0] * outcomes)
        slot[_outcome(w)] += 1
    out = np.zeros((resamples, len(keys), outcomes), dtype=np.int64)
    # strata in a fixed order (the cells' own), so the generator's stream does not depend on the games' order
    for stratum in sorted(strata, key=lambda s: sorted(s)):
        members = strata[stratum]
        cells = sorted({c for unit in members for c in units[unit]})
        at = {c: k for k, c in enumerate(cells)}
        kinds = np.zeros((len(members), len(cells), outcomes), dtype=np.int64)
        for row, unit in enumerate(members):
            for c, outcome in units[unit].items():
                kinds[row, at[c]] = outcome
        kinds_flat, how_many = np.unique(kinds.reshape(len(members), -1), axis=0, return_counts=True)
        drawn = rng.multinomial(len(members), how_many / len(members), size=resamples)  # (B, kinds)
        out[:, cells, :] += (drawn @ kinds_flat).reshape(resamples, len(cells), outcomes)
    return out


def percentile_interval(draws: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The central ``level`` percentile interval of some resampled values."""
    tail = 50.0 * (1.0 - level)
    low, high = np.percentile(draws, [tail, 100.0 - tail])
    return float(low), float(high)


def p_above(draws: np.ndarray, value: float = 0.0) -> float:
    """Bootstrap p-value of H0 'at most ``value``' against 'above': (1 + #{draws <= value}) / (B + 1)."""
    return (1.0 + float(np.count_nonzero(draws <= value))) / (len(draws) + 1.0)


def p_below(draws: np.ndarray, value: float = 0.0) -> float:
    """Bootstrap p-value of H0 'at least ``value``' against 'below': (1 + #{draws >= value}) / (B + 1)."""
    return (1.0 + float(np.count_nonzero(draws >= value))) / (len(draws) + 1.0)


def _fit_batch(design: np.ndarray, wins: np.ndarray, losses: np.ndarray) -> tuple[np.ndarray, int]:
    """Newton's method on every resample at once; returns (B, params) in Elo and the corrected count."""
    theta, ok = fit_bradley_terry(design, wins, losses)
    bad = ~ok
    if bad.any():
        played = (wins[bad] + losses[bad]) > 0
        fixed, _ = fit_bradley_terry(design, wins[bad] + HALDANE * played, losses[bad] + HALDANE * played)
        theta[bad] = fixed
    return theta, int(bad.sum())


def _full(theta: np.ndarray, names: Sequence[str], anchor: int) -> np.ndarray:
    """(B, agents + 1): the anchor's zero column put back, the first-move term last."""
    out = np.zeros((theta.shape[0], len(names) + 1))
    free = [i for i in range(len(names)) if i != anchor]
    out[:, free] = theta[:, :-1]
    out[:, -1] = theta[:, -1]
    return out
