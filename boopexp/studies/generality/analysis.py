"""The generality study (docs/generality-plan.md): its stores → pairs of games from one opening →
every claim's sign test per game and across games, the slope of CO's gain on the move space, the
families, the ladder per game and budget, each game's first-mover advantage.

Reads the sixteen stores of ``results/generality/``: for each game of :data:`GAMES` the stores
``<game>-claims`` (1 device-s: the claims' twelve pairings), ``<game>-budgets`` (mcts-co–vanilla
and alphabeta–mcts-co at 0.25 and 4 device-s), ``<game>-costs`` (the same two at 1 device-s with the
game's ``solver_move`` cost ×0.5 and ×2) and ``<game>-mirror`` (mcts-co and
vanilla against themselves from the game's start), each from configs/generality/<store>.yaml,
through the paired design of :mod:`boopexp.studies.pairs` (each game's condition: its budget and
the scale of its ``solver_move`` cost, 1 unless swept: :func:`cost_scale`).

**Claims** (plan §3): G1 mcts-co beats vanilla at 1 s; G3a mcts-co beats each of the six one- and
two-injection ablations; G3b Expansion is the keystone (mcts+SE beats mcts+S and mcts+E, mcts+EP
beats mcts+P and mcts+E); G4 alpha-beta beats mcts-co; each per game (a conjunction of its
components) and on every game (the conjunction of all four games' components). G2: the slope of
CO's gain (mcts-co's Elo over vanilla on the game's 1 s ladder) on log2 of the game's move space
(:data:`MOVE_SPACE`) is positive: the least-squares slope over the four games, with a bootstrap
from the four ladders' pair bootstraps (:func:`gain_slope`).

**Families** (plan §6): ``all games`` (G1, G2, G3a, G3b, G4 on every game), ``game=G`` (G1, G3a,
G3b, G4 on game G), ``game=G, budget=T`` (G1, G4 at 0.25 and 4 s), ``game=G, costs=×S`` (G1, G4
with the game's solver_move cost ×0.5 and ×2). A claim whose components have no pair yet is left out of its
family and named in the notes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from boopexp.studies import claims as cl
from boopexp.studies import pairs as pr

STUDY = "generality"
#: Where a store's config lives (configs/generality/<game>-<role>.yaml).
CONFIG_PATTERN = "configs/{study}/{store}.yaml"
#: The four games, in the order of their move space (plan §1).
GAMES: tuple[str, ...] = ("connect-four", "boop", "colosseum", "pentago-swap")
ROLES: tuple[str, ...] = ("claims", "budgets", "costs", "mirror")
STORES: tuple[str, ...] = tuple(f"{g}-{r}" for g in GAMES for r in ROLES)
#: Each game's move space: the mean number of legal moves over the 200 positions of the game's
#: bench sample (``boopexp.interfaces.bench.game_positions``), measured before any game of the
#: study by ``python studies/generality_power.py --move-space`` (plan §3, G2).
MOVE_SPACE: Mapping[str, float] = {"connect-four": 6.9, "boop": 40.1, "colosseum": 57.2, "pentago-swap": 169.3}
BUDGETS: tuple[float, ...] = (0.25, 1.0, 4.0)
COST_SCALES: tuple[float, ...] = (0.5, 1.0, 2.0)
#: The sensitivity's sweep axis (the costs stores): the game's cost of scoring one move with f.
SWEPT_COST = "budget.costs.solver_move"
FOCUS = "mcts-co"
ANCHOR = "vanilla"
ALPHABETA = "alphabeta"
#: G3a's ablations (one and two injections) and G3b's keystone pairings (A beats B).
ABLATIONS: tuple[str, ...] = ("mcts+S", "mcts+E", "mcts+P", "mcts+SE", "mcts+SP", "mcts+EP")
KEYSTONE: tuple[tuple[str, str], ...] = (("mcts+SE", "mcts+S"), ("mcts+EP", "mcts+P"), ("mcts+SE", "mcts+E"),
                                         ("mcts+EP", "mcts+E"))
#: The ladder's agents in display order.
AGENTS: tuple[str, ...] = ("mcts-co", "mcts+SE", "mcts+EP", "mcts+SP", "mcts+S", "mcts+E", "mcts+P", "alphabeta",
                           "vanilla")
#: The mirror stores' agents (the first-mover advantage, reported).
MIRRORED: tuple[str, ...] = ("mcts-co", "vanilla")
ALL_GAMES = "all games"
PAIR_CLAIMS: tuple[str, ...] = ("G1", "G3a", "G3b", "G4")
#: The claims with a sensitivity to the solver_move cost and the budget (plan §3).
SENSITIVE: tuple[str, ...] = ("G1", "G4")
#: The ladders' bootstrap and G2's (plan §5).
RESAMPLES = 2000
SEED = 2028
#: G2's negligible slope: ±50 Elo per doubling of the move space (plan §5).
SLOPE_MARGIN = cl.ELO_MARGIN


def store(game: str, role: str) -> str:
    return f"{game}-{role}"


def calibrated_solver_move(game: str) -> float:
    """The game's ``solver_move`` device cost as calibrated (its ``DEVICE_COSTS``; boop.'s is the profile's)."""
    from boopexp.agents.budget import Budget
    from boopexp.games.registry import get

    return float(Budget().device_profile(get(game).device_costs()).solver_move)


def game_of(store_name: str) -> str:
    """The game of a store (``connect-four-claims`` → ``connect-four``)."""
    return store_name.rsplit("-", 1)[0]


def cost_scale(store_name: str, item: Mapping[str, Any], top: Mapping[str, Any]) -> float:
    """A plan item's charge: its sweep point's ``budget.costs.solver_move`` over the game's
    calibrated cost (×0.5, ×2), 1 where the cost is not swept."""
    sweep = item.get("sweep")
    if isinstance(sweep, Mapping) and SWEPT_COST in sweep:
        return round(float(sweep[SWEPT_COST]) / calibrated_solver_move(game_of(store_name)), 6)
    return 1.0


def load_study(root: Path | str) -> pr.StudyGames:
    """Read the sixteen stores under ``root`` (those present; the others are listed as missing).

    Raises:
        ConfigError: ``root`` is not a folder, holds none of the stores, or one of them holds
            another experiment's games (nothing is read or written).
    """
    return pr.load_study(root, STORES, STUDY, cost_scale, config_pattern=CONFIG_PATTERN)


# ---------------------------------------------------------------------------------------------
# The claims on pairs


def _where(game: str, budget: float, scale: float) -> str:
    return store(game, "claims" if budget == 1.0 and scale == 1.0 else "budgets" if scale == 1.0 else "costs")


def co_beats_vanilla(game: str, budget: float = 1.0, scale: float = 1.0) -> list[pr.Component]:
    return [pr.Component("G1", _where(game, budget, scale), FOCUS, ANCHOR, budget, scale, game)]


def co_beats_ablations(game: str) -> list[pr.Component]:
    return [pr.Component("G3a", store(game, "claims"), FOCUS, x, 1.0, 1.0, game) for x in ABLATIONS]


def expansion_keystone(game: str) -> list[pr.Component]:
    return [pr.Component("G3b", store(game, "claims"), a, b, 1.0, 1.0, game) for a, b in KEYSTONE]


def alphabeta_beats_co(game: str, budget: float = 1.0, scale: float = 1.0) -> list[pr.Component]:
    return [pr.Component("G4", _where(game, budget, scale), ALPHABETA, FOCUS, budget, scale, game)]


CLAIM_PARTS = {"G1": co_beats_vanilla, "G3a": co_beats_ablations, "G3b": expansion_keystone,
               "G4": alphabeta_beats_co}


def game_condition(game: str) -> str:
    return f"game={game}"


def families() -> list[tuple[str, list[tuple[str, list[pr.Component]]]]]:
    """Every family of plan §6 tested on pairs: (condition, [(claim, its components)]). G2 joins
    the ``all games`` family as an extra outcome (:func:`judge_all`)."""
    out: list[tuple[str, list[tuple[str, list[pr.Component]]]]] = [
        (ALL_GAMES, [(c, [p for g in GAMES for p in CLAIM_PARTS[c](g)]) for c in PAIR_CLAIMS])]
    for g in GAMES:
        out.append((game_condition(g), [(c, CLAIM_PARTS[c](g)) for c in PAIR_CLAIMS]))
    for g in GAMES:
        for t in BUDGETS:
            if t != 1.0:
                out.append((f"game={g}, budget={t:g}", [("G1", co_beats_vanilla(g, t)),
                                                         ("G4", alphabeta_beats_co(g, t))]))
        for s in COST_SCALES:
            if s != 1.0:
                out.append((f"game={g}, costs={pr.charge_label(s)}", [("G1", co_beats_vanilla(g, 1.0, s)),
                                                                       ("G4", alphabeta_beats_co(g, 1.0, s))]))
    return out


def judge_all(pairs: pd.DataFrame, slope: cl.Outcome | None) -> pr.Judgement:
    """Every family, each under its own Holm correction; G2's slope (None: not tested yet) in ``all games``."""
    return pr.judge_families(pairs, families(), {ALL_GAMES: [slope] if slope is not None else []})


def cost_robustness(judged: Sequence[cl.Judged]) -> dict[tuple[str, str], tuple[list[str], str]]:
    """(game, claim) → the verdicts of G1 and G4 at solver_move cost ×0.5, ×1 (the game's family), ×2
    and the label: ``robust`` (supported at all three), ``cost-dependent`` (at some), ``supported
    at no cost scale``, or ``incomplete``."""
    by = {(j.outcome.claim, j.condition): j.verdict for j in judged}
    out = {}
    for g in GAMES:
        for claim in SENSITIVE:
            verdicts = [by.get((claim, game_condition(g) if s == 1.0 else f"game={g}, costs={pr.charge_label(s)}"), "")
                        for s in COST_SCALES]
            out[(g, claim)] = (verdicts, cl.sensitivity_label(verdicts, missing="", varies="cost-dependent",
                                                              nowhere="supported at no cost scale"))
    return out


# ---------------------------------------------------------------------------------------------
# The ladders and G2


def game_games(study: pr.StudyGames, game: str) -> pd.DataFrame:
    """The games of ``game``'s ladder: its claims and budgets stores (device costs as calibrated)."""
    games = study.games
    return games[games["store"].isin([store(game, "claims"), store(game, "budgets")])]


def ladder(study: pr.StudyGames, game: str, budget: float, *, resamples: int = RESAMPLES,
           seed: int = SEED) -> pr.Ladder | str:
    """``game``'s ladder at ``budget`` from every decided game of its complete pairs, or why there is none."""
    return pr.fit_ladder(game_games(study, game), budget, agents=AGENTS, anchor=ANCHOR, resamples=resamples,
                         seed=seed, label=game)


@dataclass(frozen=True)
class Gain:
    """CO's gain over vanilla on one game: mcts-co's Elo on the game's 1 s ladder (vanilla = 0)."""

    game: str
    move_space: float
    elo: float
    ci_low: float
    ci_high: float
    draws: np.ndarray
    games: int
    no_winner: int


def gain(lad: pr.Ladder, game: str, move_space: float) -> Gain:
    """mcts-co's rating over vanilla on a game's ladder, with its bootstrap draws and 95 % interval."""
    from boopexp.analysis.ratings_bootstrap import percentile_interval

    point, draws = lad.boot.contrast({FOCUS: 1.0, ANCHOR: -1.0})
    low, high = percentile_interval(draws)
    fit = lad.boot.fit
    return Gain(game, move_space, point, low, high, draws, int(fit.games), int(fit.no_winner))


def ols_slope(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The least-squares slope of ``y`` on ``x`` along the last axis of ``y`` (x: one value a column)."""
    xc = x - x.mean()
    return (np.asarray(y) - np.asarray(y).mean(axis=-1, keepdims=True)) @ xc / float(xc @ xc)


def gain_slope(gains: Sequence[Gain]) -> cl.Outcome:
    """G2: the slope of CO's gain (Elo) on log2 of the move space over the games, H1 slope > 0, from
    the games' bootstrap draws (resample r of every game together: the games' bootstraps are
    independent), the negligible margin ±50 Elo per doubling (``claims.elo_above``)."""
    x = np.log2(np.array([g.move_space for g in gains], dtype=float))
    point = float(ols_slope(x, np.array([g.elo for g in gains])))
    draws = ols_slope(x, np.stack([g.draws for g in gains], axis=1))
    out = cl.elo_above("G2", f"slope of mcts-co's Elo over vanilla on log2(move space), {len(gains)} games",
                       point, draws, sum(g.games for g in gains), sum(g.no_winner for g in gains), margin=SLOPE_MARGIN)
    return cl.renamed(out, "G2", "Elo per doubling of the move space, least squares over the games")


# ---------------------------------------------------------------------------------------------
# The first-mover advantage (reported)


@dataclass(frozen=True)
class FirstMove:
    """One mirror pairing of one game: the first mover's wins over the decided games."""

    game: str
    agent: str
    games: int
    first_wins: int
    second_wins: int
    no_winner: int

    @property
    def decided(self) -> int:
        return self.first_wins + self.second_wins


def first_moves(study: pr.StudyGames) -> list[FirstMove]:
    """Every game's mirror pairings (A against itself from the game's start), in plan order."""
    games = study.games
    out = []
    for g in GAMES:
        mine = games[games["store"] == store(g, "mirror")]
        for agent in MIRRORED:
            rows = mine[(mine["p1"] == agent) & (mine["p2"] == agent)]
            if len(rows):
                first = int((rows["winner"] == "p1").sum())
                second = int((rows["winner"] == "p2").sum())
                out.append(FirstMove(g, agent, len(rows), first, second, len(rows) - first - second))
    return out
