"""The tables of any run: pairwise and telemetry."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from boopexp.analysis.moves import OPTIONAL_FIELDS, MoveStats
from boopexp.analysis.paper import equivalent_moves_reference
from boopexp.analysis.records import GameData
from boopexp.analysis.stats import score_interval, wilson_interval
from boopexp.analysis.tables import (
    DASH,
    DRAWS,
    NO_WINNER_NOTE,
    Table,
    agent_order,
    finished,
    fmt_count,
    fmt_median_iqr,
    fmt_num,
    fmt_rate_ci,
    is_missing,
    outcome_counts,
    ratio,
)
from boopexp.play.contract import MAX_PLIES


def pairwise(data: GameData) -> Table:
    """Every (experiment, config_hash, pairing) present, paper or not: games, P1/P2 wins, P1 rate.

    Args:
        data: loaded games (all settings, not only the selected ones).

    Returns:
        The table, sorted by experiment, pairing and config_hash; ``planned`` comes from the
        directory's config.yaml plan (empty if unknown), ``status`` compares the games (every
        finished game, with or without a winner) with it; the P1 rate and its interval use the
        decided games (P1 wins + P2 wins). When a game was drawn, ``draws`` and P1's score
        (``p1_score``: P1 wins + draws/2 over the decided and drawn games, ``score_low``,
        ``score_high``: :func:`~boopexp.analysis.stats.score_interval`) are added.
    """
    games = data.games
    columns = ["experiment", "config_hash", "pairing", "games", "planned", "status", "p1_wins", "p2_wins",
               "no_winner", "p1_rate", "ci_low", "ci_high", "in_plan", "selected"]
    draws = False
    if games.empty:
        frame = pd.DataFrame({c: pd.Series([], dtype=object) for c in columns})
    else:
        keys = ["experiment", "pairing", "config_hash"]
        plan = games.groupby(keys, sort=True).agg(planned=("planned", "max"), in_plan=("in_plan", "any"),
                                                  selected=("selected", "any"))
        frame = outcome_counts(games, keys).join(plan).reset_index()
        draws = DRAWS in frame
        if draws:
            columns[columns.index("no_winner") + 1:columns.index("no_winner") + 1] = [DRAWS]
            columns[columns.index("ci_high") + 1:columns.index("ci_high") + 1] = ["p1_score", "score_low", "score_high"]
            scores = [score_interval(int(w), int(d), int(lost))
                      for w, d, lost in zip(frame["p1_wins"], frame[DRAWS], frame["p2_wins"])]
            frame["p1_score"], frame["score_low"], frame["score_high"] = ([c[k] for c in scores] for k in range(3))
        n_decided = frame["p1_wins"] + frame["p2_wins"]
        frame["p1_rate"] = [ratio(int(w), int(n)) for w, n in zip(frame["p1_wins"], n_decided)]
        cis = [wilson_interval(int(w), int(n)) for w, n in zip(frame["p1_wins"], n_decided)]
        frame["ci_low"] = [c[0] for c in cis]
        frame["ci_high"] = [c[1] for c in cis]
        frame["status"] = [_plan_status(n, planned, in_plan)
                           for n, planned, in_plan in zip(frame["games"], frame["planned"], frame["in_plan"])]
        frame = frame[columns].astype(
            {"games": "int64", "planned": "Int64", "p1_wins": "int64", "p2_wins": "int64", "no_winner": "int64",
             "p1_rate": "float64"} | ({DRAWS: "int64", "p1_score": "float64"} if draws else {})
        )
    rows = tuple(
        (
            r.experiment, r.config_hash, r.pairing, fmt_count(r.games, r.planned) if not is_missing(r.planned)
            else fmt_num(r.games), r.status, fmt_num(r.p1_wins), fmt_num(r.p2_wins),
            *((fmt_num(r.draws),) if draws else ()), fmt_num(r.no_winner),
            fmt_rate_ci(r.p1_rate, r.ci_low, r.ci_high),
            *((fmt_rate_ci(r.p1_score, r.score_low, r.score_high),) if draws else ()), "yes" if r.selected else "no",
        )
        for r in frame.itertuples()
    )
    notes = []
    if frame.empty:
        notes.append("No games in the given results.")
    if len(frame) and frame["status"].str.startswith("partial").any():
        notes.append("Partial results: some pairings have fewer games than planned (see status).")
    notes.append(
        "One row per experiment, settings hash and pairing; games/planned from the directory's "
        "config.yaml plan (games = P1 wins + P2 wins + no winner). P1 rate = P1 wins / (P1 wins + "
        "P2 wins). 'used' = these games feed Tables I/II (per pairing, the planned settings "
        "with the most games). Intervals: Wilson 95%."
    )
    notes.append(NO_WINNER_NOTE + " Games and status count every finished game.")
    if draws:
        notes.append(DRAWS_NOTE)
    return Table(
        name="pairwise",
        title="All pairings: wins by side",
        data=frame.reset_index(drop=True),
        headers=("experiment", "config_hash", "pairing", "games", "status", "P1 wins", "P2 wins",
                 *(("draws",) if draws else ()), "no winner", "P1 rate [95% CI]",
                 *(("P1 score [95% CI]",) if draws else ()), "used"),
        align="lllrlrr" + ("r" if draws else "") + "rr" + ("r" if draws else "") + "l",
        rows=rows,
        notes=tuple(notes),
    )


#: The note of a table whose games include a draw (docs/tables.md, "Draws").
DRAWS_NOTE = (
    "Draws: games the rules ended drawn (termination 'draw'; games = P1 wins + P2 wins + draws + no winner). "
    "A draw is half a point to each side: P1 score = (P1 wins + draws/2) / (P1 wins + P2 wins + draws), its "
    "interval Student's t on the games' mean score (a win 1, a draw 1/2, a loss 0; statsmodels DescrStatsW). "
    "The P1 rate stays the share of the decided games (draws and games without a winner left out)."
)


def _plan_status(games: int, planned: float, in_plan: bool) -> str:
    """'complete', 'partial (n/N)', 'not in plan' (older settings) or '—' (no plan known)."""
    if not in_plan:
        return "not in plan"
    if is_missing(planned):
        return DASH
    return "complete" if games >= planned else f"partial ({games}/{int(planned)})"


EQUIVALENT_NOTE = (
    "Equivalent moves (tie events): solver calls whose best value was shared by several moves, "
    "so that one was drawn at random; equivalent candidates: the tied moves summed over those "
    "events. Both are summed over one side of one game and averaged over (game, side), the "
    "paper's 'per agent and per game'; a side whose telemetry lacks the field is left out, "
    "'—' when no side has it (older records have no equivalent candidates)."
)


def _paper_equivalent_note() -> str:
    """Where the paper's figure comes from and its two readings (docs/budget.md)."""
    figures = ", ".join(f"{v:,} for {a}" for a, v in equivalent_moves_reference().items())
    return (
        f"Paper: {figures} equivalent moves per agent and per game (10 games against heuristics); "
        "the counter is not in the released logs. The spec reads that figure as tie events (our "
        "equivalent moves); it could also count the tied candidates (our equivalent candidates). "
        "Compare like with like: the paper's games were against heuristics only, while this row "
        "pools every opponent given (docs/budget.md, 'Two readings of equivalent moves'). The "
        "paper's figure is shown once, beside both readings."
    )


def telemetry(data: GameData) -> Table:
    """Per agent, over all games given: iterations and solver calls per move, equivalent moves and plies per game.

    Per-move figures use every telemetry entry; per-game figures (plies, equivalent moves and
    candidates per game) only games with a winner or drawn: a game stopped at the ply limit is a
    cycle of up to MAX_PLIES plies, not a game length, and would inflate the per-game sums.

    Args:
        data: loaded games and telemetry (all settings).

    Returns:
        The table, one row per agent that played a game.
    """
    games, moves = data.games, data.moves
    game_keys = ["config_hash", "pairing", "game_index"]
    # One row per (game, agent): a mirror game counts once for its agent.
    games = games.assign(finished=finished(games))
    sides = pd.concat(
        [games[[*game_keys, "p1", "plies", "finished"]].rename(columns={"p1": "agent"}),
         games[[*game_keys, "p2", "plies", "finished"]].rename(columns={"p2": "agent"})],
        ignore_index=True,
    ).drop_duplicates([*game_keys, "agent"])
    no_win = ~sides["finished"].astype(bool)
    sides = sides.assign(no_win=no_win, decided_plies=sides["plies"].where(~no_win))
    names = set(sides["agent"]) | moves.agents
    per_game = sides.groupby("agent").agg(
        games=("plies", "size"),
        no_winner=("no_win", "sum"),
        plies_median=("decided_plies", "median"),
        plies_q25=("decided_plies", lambda s: s.quantile(0.25)),
        plies_q75=("decided_plies", lambda s: s.quantile(0.75)),
    )
    # Per move, from the moves' distributions per agent (exactly pandas' median and quartiles);
    # the paper counts equivalent moves "per agent and per game": summed over one side of one
    # decided game, then averaged (moves.MoveStats.side_mean).
    movers = agent_order(moves.agents)
    per_move = pd.DataFrame({
        "moves": [moves.moves[a] for a in movers],
        "iterations_median": [moves.median(a, "iterations") for a in movers],
        "iterations_q25": [moves.quantile(a, "iterations", 0.25) for a in movers],
        "iterations_q75": [moves.quantile(a, "iterations", 0.75) for a in movers],
        "solver_calls_median": [moves.median(a, "solver_calls") for a in movers],
        "tree_nodes_median": [moves.median(a, "tree_nodes") for a in movers],
        "device_seconds_median": [moves.median(a, "device_seconds") for a in movers],
    }, index=pd.Index(movers, name="agent"))
    eq_moves = pd.Series({a: moves.side_mean(a, "equivalent_moves") for a in movers}, dtype="float64",
                         name="equivalent_moves_per_game")
    eq_cands = pd.Series({a: moves.side_mean(a, "equivalent_candidates") for a in movers}, dtype="float64",
                         name="equivalent_candidates_per_game")
    paper_eq = equivalent_moves_reference()
    frame = pd.DataFrame(index=pd.Index(agent_order(names), name="agent"))
    frame = frame.join(per_game).join(per_move).join(eq_moves).join(eq_cands)
    frame["paper_equivalent_moves_per_game"] = [paper_eq.get(a, math.nan) for a in frame.index]
    frame = frame.reset_index()
    columns = ["agent", "games", "no_winner", "moves", "iterations_median", "iterations_q25", "iterations_q75",
               "solver_calls_median", "equivalent_moves_per_game", "equivalent_candidates_per_game",
               "paper_equivalent_moves_per_game", "plies_median", "plies_q25", "plies_q75", "tree_nodes_median",
               "device_seconds_median"]
    # alpha-beta's and MCTS-Solver's own counters, only when some agent reported them (every
    # other store's table stays as it was): the median over the moves of each agent that did
    optional = [f for f in OPTIONAL_FIELDS if any(_reports(moves, a, f) for a in movers)]
    for f in optional:
        medians = {a: moves.median(a, f) for a in movers if _reports(moves, a, f)}
        frame[f"{f}_median"] = [medians.get(a, math.nan) for a in frame["agent"]]
    columns += [f"{f}_median" for f in optional]
    frame = frame.reindex(columns=columns)
    frame = frame.astype({"games": "Int64", "no_winner": "Int64", "moves": "Int64"}
                         | {c: "float64" for c in columns[4:]})
    rows = tuple(
        (
            r.agent, fmt_num(r.games), fmt_num(r.moves),
            fmt_median_iqr(r.iterations_median, r.iterations_q25, r.iterations_q75),
            fmt_num(r.solver_calls_median), fmt_num(r.equivalent_moves_per_game),
            fmt_num(r.equivalent_candidates_per_game), fmt_num(r.paper_equivalent_moves_per_game),
            fmt_median_iqr(r.plies_median, r.plies_q25, r.plies_q75),
            *(fmt_num(getattr(r, f"{f}_median")) for f in optional),
        )
        for r in frame.itertuples()
    )
    notes = []
    if frame.empty:
        notes.append("No games in the given results.")
    notes += [
        "Per agent over every game given (all settings). Per move: the agent's own plies "
        "(telemetry entries). Plies per game: a mirror game counts once. "
        "Medians with [first-third quartile]; '—' = no data.",
        EQUIVALENT_NOTE,
        _paper_equivalent_note(),
        _telemetry_no_winner_note(int((~games["finished"]).sum())),
    ]
    return Table(
        name="telemetry",
        title="Telemetry per agent",
        data=frame,
        headers=("agent", "games", "moves", "iterations/move median [IQR]", "solver calls/move median",
                 "equivalent moves/game mean", "equivalent candidates/game mean", "paper",
                 "plies/game median [IQR]", *(OPTIONAL_HEADERS[f] for f in optional)),
        align="lrrrrrrrr" + "r" * len(optional),
        rows=rows,
        notes=tuple(notes),
    )


#: The telemetry table's headers of :data:`boopexp.analysis.moves.OPTIONAL_FIELDS`.
OPTIONAL_HEADERS = {"search_depth": "alpha-beta depth/move median", "tt_hits": "TT hits/move median",
                    "proven_nodes": "proven nodes/move median"}


def _reports(moves: MoveStats, agent: str, field_name: str) -> bool:
    """Whether ``agent`` reported an optional counter: a non-zero value on some move (its
    opponent's moves carry 0 for it, docs/budget.md)."""
    values, _ = moves.distribution(agent, field_name)
    return bool(len(values)) and bool(np.any(values != 0))


def _telemetry_no_winner_note(games_without_winner: int) -> str:
    n = games_without_winner
    here = (f" Here {n} game{'s' if n != 1 else ''} had no winner (per agent: telemetry.csv, no_winner)."
            if n else "")
    return (
        f"Games without a winner (stopped at the {MAX_PLIES:,}-ply cap, a repeated position cycle; "
        "boop. has no draw, RULES.md §7) count in games and their moves in the per-move figures, "
        "but are left out of every per-game figure (plies, equivalent moves and candidates per "
        "game): their length is the cap, not a game length." + here
    )
