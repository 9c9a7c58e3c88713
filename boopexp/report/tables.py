"""The report's tables as pandas frames plus their display form: Table I, Table II, pairwise, telemetry.

Each builder returns a :class:`Table`: ``data`` is the machine-readable frame written to CSV
(every row, numbers unformatted), ``rows`` the formatted cells shown in Markdown and LaTeX
(rows that were not run are left out there and listed in a note instead).

Statistical choices (see :mod:`boopexp.report.stats` for the reasoning): win rates carry a
Wilson 95% score interval; our counts are compared with the paper's by a two-sided Fisher exact
test on the 2×2 table (ours, paper) × (wins, losses) — the paper's counts are a sample too —
and the verdict is "differs" if p < 0.05, else "consistent". Boschloo's exact test of the same
table is shown beside it (more powerful: Fisher is conservative at n = 100); the verdict stays
Fisher's, and a note names any row where the two disagree at the 5% level.

Games without a winner (stopped at ``contract.MAX_PLIES``, ``winner`` None) are neither wins nor
losses: they get their own "no winner" column, count towards the status (they are finished
games), and are left out of rates, intervals, tests and every per-game figure (plies per game,
equivalent moves per game), which their length — the cap, not a game — would distort.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from boopexp.agents import AGENT_NAMES
from boopexp.contract import MAX_PLIES
from boopexp.report.paper import (
    FOCUS_AGENT,
    TABLE1_OPPONENTS,
    TABLE2_AGENTS,
    PaperCounts,
    durations_reference,
    equivalent_moves_reference,
    table1_reference,
    table2_reference,
)
from boopexp.report.records import GameData
from boopexp.report.stats import ALPHA, boschloo_exact, fisher_exact, verdict, wilson_interval

DASH = "—"
HEURISTIC_AGENTS = frozenset({"heuristics", "random"})

FISHER_NOTE = (
    "p: two-sided Fisher exact test of our wins/losses against the paper's wins/losses. "
    "Fisher rather than a binomial test against the paper's rate because the paper's counts are "
    "themselves a sample of 50 or 100 games; two-sided p = sum of the probabilities of all tables "
    f"no more likely than the observed one. Verdict: 'differs' if p < {ALPHA}, else 'consistent' "
    "(no evidence of a difference at that level, not proof of equality). "
    "Intervals: Wilson 95% score intervals."
)

BOSCHLOO_NOTE = (
    "p (Boschloo): Boschloo's exact test of the same 2x2 table (rows = the two samples, our games "
    "and the paper's; Fisher's one-sided p as statistic, maximised over the common win rate; "
    "two-sided = twice the smaller one-sided p). It is uniformly more powerful than Fisher's test, "
    "which is conservative at these sizes; the verdict stays Fisher's, chosen before the games were played."
)


def _disagreement_note(frame: pd.DataFrame, key: str) -> list[str]:
    """A note naming the rows where Fisher and Boschloo fall on different sides of ALPHA."""
    both = frame.dropna(subset=["p_value", "p_value_boschloo"])
    split = both[(both["p_value"] < ALPHA) != (both["p_value_boschloo"] < ALPHA)][key].tolist()
    if not split:
        return []
    return [f"Fisher and Boschloo disagree at the {ALPHA} level for " + ", ".join(split) + "."]


# "(match.MAX_PLIES)" is kept as written: the committed tables quote it (match re-exports the cap).
NO_WINNER_NOTE = (
    f"No winner: games stopped at the {MAX_PLIES:,}-ply safety cap (match.MAX_PLIES) without a victory. "
    "boop. has no draw: the engine has no draw, repetition or move limit rule (RULES.md §7), and every "
    "game of the paper ended with a winner; the cap only stops two near-deterministic agents that "
    "repeat a position cycle forever (docs/agents.md). Such games are neither wins nor losses: win "
    "rates, intervals and Fisher tests use decided games only (n = wins + losses)."
)


@dataclass(frozen=True)
class Table:
    """One table: CSV data, formatted display rows and the notes printed under it.

    Attributes:
        name: file stem (``table1``, ``pairwise``, …).
        title: one-line caption.
        data: every row, raw values (written to CSV).
        headers: display column headers.
        align: one of ``l``/``r`` per display column.
        rows: formatted display cells (Markdown/LaTeX).
        notes: sentences printed under the table.
    """

    name: str
    title: str
    data: pd.DataFrame
    headers: tuple[str, ...]
    align: str
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = field(default=())


# --------------------------------------------------------------------------- shared helpers


COUNT_COLUMNS = ("games", "p1_wins", "p2_wins", "no_winner")


def with_outcomes(games: pd.DataFrame) -> pd.DataFrame:
    """``games`` plus boolean columns ``p1_win``, ``p2_win`` and ``no_win`` (winner None)."""
    return games.assign(p1_win=games["winner"] == "p1", p2_win=games["winner"] == "p2",
                        no_win=games["winner"].isna())


def decided(games: pd.DataFrame) -> pd.DataFrame:
    """The games that ended with a winner (not stopped at the ply limit)."""
    return games[games["winner"].notna()]


def pairing_counts(games: pd.DataFrame) -> pd.DataFrame:
    """Per pairing (and config_hash): games, P1 wins, P2 wins, games without a winner; indexed by pairing.

    Args:
        games: game rows (one config_hash per pairing expected, e.g. GameData.selected).

    Returns:
        Columns ``config_hash``, ``games`` (every finished game), ``p1_wins``, ``p2_wins`` and
        ``no_winner`` (so games = p1_wins + p2_wins + no_winner); index ``pairing``.
    """
    if games.empty:
        return pd.DataFrame(
            {"config_hash": pd.Series([], dtype=object)}
            | {c: pd.Series([], dtype="int64") for c in COUNT_COLUMNS},
            index=pd.Index([], name="pairing"),
        )
    out = with_outcomes(games).groupby("pairing", sort=True).agg(
        config_hash=("config_hash", _join_sorted),
        games=("game_index", "size"),
        p1_wins=("p1_win", "sum"),
        p2_wins=("p2_win", "sum"),
        no_winner=("no_win", "sum"),
    )
    return out.astype({c: "int64" for c in COUNT_COLUMNS})


def _join_sorted(values: pd.Series) -> str:
    return " ".join(sorted(set(values)))


def _status(ours: list[int], planned: list[int]) -> str:
    """'complete', 'partial (n/N)' or 'not run' from our games and the paper's, side by side."""
    n, total = sum(ours), sum(planned)
    if n == 0:
        return "not run"
    if all(o >= p for o, p in zip(ours, planned)):
        return "complete"
    return f"partial ({n}/{total})"


def fmt_count(wins: Any, games: Any) -> str:
    """'47/50', or '—' when there were no games."""
    if _missing(wins) or _missing(games) or int(games) == 0:
        return DASH
    return f"{int(wins)}/{int(games)}"


def fmt_rate_ci(rate: Any, low: Any, high: Any) -> str:
    """'96.0% [90.2, 98.4]' or '—'."""
    if _missing(rate):
        return DASH
    return f"{100 * rate:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def fmt_percent(rate: Any) -> str:
    """'96%' for whole percentages, '95.5%' otherwise, '—' if missing."""
    if _missing(rate):
        return DASH
    pct = round(100 * float(rate), 6)
    return f"{pct:.0f}%" if float(pct).is_integer() else f"{pct:.1f}%"


def fmt_diff(diff: Any) -> str:
    """Difference of rates in percentage points, signed: '+2.0 pp'."""
    if _missing(diff):
        return DASH
    value = 100 * float(diff)
    if abs(value) < 0.05:
        value = 0.0  # no '-0.0'
    return f"{value:+.1f} pp"


def fmt_p(p: Any) -> str:
    """A p-value with three decimals, '<0.001' below that, '—' if missing."""
    if _missing(p):
        return DASH
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def fmt_num(x: Any) -> str:
    """A count-like number: '1,502', '70.5', or '—'."""
    if _missing(x):
        return DASH
    x = float(x)
    return f"{x:,.0f}" if x.is_integer() else f"{x:,.1f}"


def fmt_median_iqr(median: Any, q25: Any, q75: Any) -> str:
    """'71 [65–80]' (median [quartile 1–quartile 3]) or '—'."""
    if _missing(median):
        return DASH
    return f"{fmt_num(median)} [{fmt_num(q25)}–{fmt_num(q75)}]"


def _missing(x: Any) -> bool:
    if x is None or x is pd.NA:
        return True
    try:
        return math.isnan(float(x))
    except (TypeError, ValueError):
        return False


def _fisher_or_nan(wins: int, games: int, paper_wins: int, paper_games: int) -> float:
    if games == 0 or paper_games == 0:
        return math.nan
    return fisher_exact([[wins, games - wins], [paper_wins, paper_games - paper_wins]])


def _boschloo_or_nan(table: list[list[int]], n: int) -> float:
    return boschloo_exact(table) if n else math.nan


def _ratio(a: int, b: int) -> float:
    return a / b if b else math.nan


def _partial_notes(data: pd.DataFrame, key: str) -> list[str]:
    notes = []
    partial = data.loc[data["status"].str.startswith("partial"), key].tolist()
    if partial:
        notes.append(
            "Partial results: fewer games than the paper for "
            + ", ".join(partial)
            + " (see status); those rows use the games available."
        )
    not_run = data.loc[data["status"] == "not run", key].tolist()
    if not_run:
        notes.append("Not run: " + ", ".join(not_run) + ".")
    return notes


# --------------------------------------------------------------------------- Table I

TABLE1_INT = (
    "p1_wins", "p1_games", "p1_no_winner", "p2_wins", "p2_games", "p2_no_winner", "wins", "games", "no_winner",
    "paper_p1_wins", "paper_p1_games", "paper_p2_wins", "paper_p2_games",
)
TABLE1_FLOAT = ("win_rate", "ci_low", "ci_high", "paper_win_rate", "difference", "p_value", "p_value_p1", "p_value_p2",
                "p_value_boschloo")


def table1(data: GameData) -> Table:
    """Table I: mcts-co's wins against each opponent, as P1 and as P2, against the paper's.

    Args:
        data: loaded games; only the selected settings of each pairing are used.

    Returns:
        The table; ``data`` has one row per opponent of the paper, in its order. ``p1_games``,
        ``p2_games`` and ``games`` count decided games (wins + losses of mcts-co), the rates'
        denominators; ``p1_no_winner``, ``p2_no_winner`` and ``no_winner`` the games stopped at
        the ply limit; the status counts both.
    """
    counts = pairing_counts(data.selected)
    reference = table1_reference()
    records = []
    for opponent in TABLE1_OPPONENTS:
        paper = reference[opponent]
        sides = []  # (our wins, decided games, paper wins, paper games, config_hash, no winner): P1 then P2
        for pairing, winner_col, paper_wins, paper_games in (
            (f"{FOCUS_AGENT} vs {opponent}", "p1_wins", paper.p1_wins, paper.n1),
            (f"{opponent} vs {FOCUS_AGENT}", "p2_wins", paper.p2_wins, paper.n2),
        ):
            if pairing in counts.index:
                row = counts.loc[pairing]
                n_decided = int(row["p1_wins"]) + int(row["p2_wins"])
                sides.append((int(row[winner_col]), n_decided, paper_wins, paper_games, row["config_hash"],
                              int(row["no_winner"])))
            else:
                sides.append((None, 0, paper_wins, paper_games, "", None))
        records.append(_comparison_row(opponent, sides, paper))
    frame = pd.DataFrame(records)
    frame = frame.astype({c: "Int64" for c in TABLE1_INT} | {c: "float64" for c in TABLE1_FLOAT})

    shown = frame[frame["status"] != "not run"]
    rows = tuple(
        (
            r.opponent,
            fmt_count(r.p1_wins, r.p1_games),
            fmt_count(r.p2_wins, r.p2_games),
            fmt_num(r.no_winner),
            fmt_rate_ci(r.win_rate, r.ci_low, r.ci_high),
            fmt_count(r.paper_p1_wins, r.paper_p1_games),
            fmt_count(r.paper_p2_wins, r.paper_p2_games),
            fmt_percent(r.paper_win_rate),
            fmt_diff(r.difference),
            fmt_p(r.p_value),
            fmt_p(r.p_value_boschloo),
            r.verdict,
            r.status,
        )
        for r in shown.itertuples()
    )
    notes = _partial_notes(frame, "opponent")
    if not len(shown):
        notes.insert(0, "No Table I pairing in the given results.")
    one_sided = shown[(shown["p1_games"] == 0) | (shown["p2_games"] == 0)]["opponent"].tolist()
    if one_sided:
        notes.append(
            "Only one side has decided games for " + ", ".join(one_sided)
            + ": its paper rate and test use the paper's games of that side only."
        )
    notes += [
        "P1: mcts-co's wins of the decided games as first player (pairing 'mcts-co vs X'); P2: as "
        "second player ('X vs mcts-co'); no winner: games of both pairings stopped at the ply cap; "
        "win rate pooled over both sides; diff = ours - paper.",
        NO_WINNER_NOTE + " The status counts every finished game.",
        FISHER_NOTE + " The test pools both sides; per-side p-values are in table1.csv.",
        BOSCHLOO_NOTE + " Both sides pooled.",
        *_disagreement_note(shown, "opponent"),
    ]
    return Table(
        name="table1",
        title="Table I: wins of mcts-co against each opponent (ours vs the paper)",
        data=frame,
        headers=("opponent", "P1", "P2", "no winner", "win rate [95% CI]", "paper P1", "paper P2",
                 "paper rate", "diff", "p (Fisher)", "p (Boschloo)", "verdict", "status"),
        align="lrrrrrrrrrrll",
        rows=rows,
        notes=tuple(notes),
    )


def _comparison_row(opponent: str, sides: list[tuple], paper: PaperCounts) -> dict[str, Any]:
    """One Table I row from the (ours, paper) counts of both sides (n = decided games)."""
    (w1, n1, pw1, pn1, h1, u1), (w2, n2, pw2, pn2, h2, u2) = sides
    present = [(w, n, pw, pn) for w, n, pw, pn, _, _ in sides if n > 0]
    run = [u for _, _, _, _, _, u in sides if u is not None]
    wins = sum(s[0] for s in present)
    games = sum(s[1] for s in present)
    # With one side missing, compare against the paper's games of the same side only: the side
    # effect (P2 is favoured) is too strong to compare one side with a two-side pool.
    paper_wins = sum(s[2] for s in present) if present else pw1 + pw2
    paper_games = sum(s[3] for s in present) if present else pn1 + pn2
    low, high = wilson_interval(wins, games)
    rate = _ratio(wins, games)
    paper_rate = _ratio(paper_wins, paper_games)
    p = _fisher_or_nan(wins, games, paper_wins, paper_games)
    return {
        "opponent": opponent,
        # A game stopped at the ply limit is finished (it will not be replayed): it counts here.
        "status": _status([n1 + (u1 or 0), n2 + (u2 or 0)], [pn1, pn2]),
        "p1_wins": w1, "p1_games": n1, "p1_no_winner": u1,
        "p2_wins": w2, "p2_games": n2, "p2_no_winner": u2,
        "wins": wins if games else None, "games": games, "no_winner": sum(run) if run else None,
        "win_rate": rate, "ci_low": low, "ci_high": high,
        "paper_p1_wins": pw1, "paper_p1_games": pn1, "paper_p2_wins": pw2, "paper_p2_games": pn2,
        "paper_win_rate": paper_rate,
        "difference": rate - paper_rate,
        "p_value": p,
        "p_value_p1": _fisher_or_nan(w1, n1, pw1, pn1) if n1 else math.nan,
        "p_value_p2": _fisher_or_nan(w2, n2, pw2, pn2) if n2 else math.nan,
        "p_value_boschloo": _boschloo_or_nan([[wins, games - wins], [paper_wins, paper_games - paper_wins]],
                                             games),
        "verdict": verdict(p),
        "p1_config_hash": h1,
        "p2_config_hash": h2,
    }


# --------------------------------------------------------------------------- Table II

TABLE2_INT = ("games", "p1_wins", "p2_wins", "no_winner", "paper_games", "paper_p1_wins", "paper_p2_wins")
TABLE2_FLOAT = ("p2_share", "ci_low", "ci_high", "paper_p2_share", "difference", "p_value", "p_value_boschloo")


def table2(data: GameData) -> Table:
    """Table II: P1 and P2 wins of each agent's mirror games ("A vs A"), against the paper's.

    Args:
        data: loaded games; only the selected settings of each pairing are used.

    Returns:
        The table; ``data`` has one row per agent of the paper, in its order. ``games`` counts
        every finished game (= P1 wins + P2 wins + no winner); the P2 share, its interval and the
        test use the decided games (P1 wins + P2 wins) only.
    """
    counts = pairing_counts(data.selected)
    reference = table2_reference()
    records = []
    for agent in TABLE2_AGENTS:
        paper = reference[agent]
        paper_games = paper.p1_wins + paper.p2_wins
        pairing = f"{agent} vs {agent}"
        if pairing in counts.index:
            row = counts.loc[pairing]
            games, p1, p2, none = (int(row[c]) for c in ("games", "p1_wins", "p2_wins", "no_winner"))
            config_hash = row["config_hash"]
        else:
            games, p1, p2, none, config_hash = 0, None, None, None, ""
        n_decided = (p1 or 0) + (p2 or 0)
        low, high = wilson_interval(p2 or 0, n_decided)
        share = _ratio(p2 or 0, n_decided)
        paper_share = paper.p2_wins / paper_games
        p = fisher_exact([[p1, p2], [paper.p1_wins, paper.p2_wins]]) if n_decided else math.nan
        records.append({
            "agent": agent,
            "status": _status([games], [paper_games]),
            "games": games, "p1_wins": p1, "p2_wins": p2, "no_winner": none,
            "p2_share": share, "ci_low": low, "ci_high": high,
            "paper_games": paper_games, "paper_p1_wins": paper.p1_wins, "paper_p2_wins": paper.p2_wins,
            "paper_p2_share": paper_share,
            "difference": share - paper_share,
            "p_value": p,
            "p_value_boschloo": _boschloo_or_nan([[p1, p2], [paper.p1_wins, paper.p2_wins]], n_decided),
            "verdict": verdict(p),
            "config_hash": config_hash,
        })
    frame = pd.DataFrame(records)
    frame = frame.astype({c: "Int64" for c in TABLE2_INT} | {c: "float64" for c in TABLE2_FLOAT})
    shown = frame[frame["status"] != "not run"]
    rows = tuple(
        (
            r.agent,
            fmt_num(r.p1_wins),
            fmt_num(r.p2_wins),
            fmt_num(r.no_winner),
            fmt_num(r.games),
            fmt_rate_ci(r.p2_share, r.ci_low, r.ci_high),
            fmt_num(r.paper_p1_wins),
            fmt_num(r.paper_p2_wins),
            fmt_percent(r.paper_p2_share),
            fmt_diff(r.difference),
            fmt_p(r.p_value),
            fmt_p(r.p_value_boschloo),
            r.verdict,
            r.status,
        )
        for r in shown.itertuples()
    )
    notes = _partial_notes(frame, "agent")
    if not len(shown):
        notes.insert(0, "No Table II (mirror) pairing in the given results.")
    notes += [
        "Mirror games 'A vs A': P1 (Blue) moves first; games = P1 wins + P2 wins + no winner; "
        "P2 share = P2 wins / (P1 wins + P2 wins); diff = ours - paper.",
        NO_WINNER_NOTE + " The status counts every finished game.",
        FISHER_NOTE + " Here the 2x2 table is (ours, paper) x (P1 wins, P2 wins).",
        BOSCHLOO_NOTE,
        *_disagreement_note(shown, "agent"),
    ]
    return Table(
        name="table2",
        title="Table II: mirror games, wins by side (ours vs the paper)",
        data=frame,
        headers=("agent", "P1 wins", "P2 wins", "no winner", "games", "P2 share [95% CI]", "paper P1",
                 "paper P2", "paper P2 share", "diff", "p (Fisher)", "p (Boschloo)", "verdict", "status"),
        align="lrrrrrrrrrrrll",
        rows=rows,
        notes=tuple(notes),
    )


# --------------------------------------------------------------------------- pairwise


def pairwise(data: GameData) -> Table:
    """Every (experiment, config_hash, pairing) present, paper or not: games, P1/P2 wins, P1 rate.

    Args:
        data: loaded games (all settings, not only the selected ones).

    Returns:
        The table, sorted by experiment, pairing and config_hash; ``planned`` comes from the
        directory's config.yaml plan (empty if unknown), ``status`` compares the games (every
        finished game, with or without a winner) with it; the P1 rate and its interval use the
        decided games (P1 wins + P2 wins).
    """
    games = data.games
    columns = ["experiment", "config_hash", "pairing", "games", "planned", "status", "p1_wins", "p2_wins",
               "no_winner", "p1_rate", "ci_low", "ci_high", "in_plan", "selected"]
    if games.empty:
        frame = pd.DataFrame({c: pd.Series([], dtype=object) for c in columns})
    else:
        frame = (
            with_outcomes(games)
            .groupby(["experiment", "pairing", "config_hash"], sort=True)
            .agg(games=("game_index", "size"), planned=("planned", "max"), p1_wins=("p1_win", "sum"),
                 p2_wins=("p2_win", "sum"), no_winner=("no_win", "sum"), in_plan=("in_plan", "any"),
                 selected=("selected", "any"))
            .reset_index()
        )
        n_decided = frame["p1_wins"] + frame["p2_wins"]
        frame["p1_rate"] = [_ratio(int(w), int(n)) for w, n in zip(frame["p1_wins"], n_decided)]
        cis = [wilson_interval(int(w), int(n)) for w, n in zip(frame["p1_wins"], n_decided)]
        frame["ci_low"] = [c[0] for c in cis]
        frame["ci_high"] = [c[1] for c in cis]
        frame["status"] = [_plan_status(n, planned, in_plan)
                           for n, planned, in_plan in zip(frame["games"], frame["planned"], frame["in_plan"])]
        frame = frame[columns].astype(
            {"games": "int64", "planned": "Int64", "p1_wins": "int64", "p2_wins": "int64", "no_winner": "int64",
             "p1_rate": "float64"}
        )
    rows = tuple(
        (
            r.experiment, r.config_hash, r.pairing, fmt_count(r.games, r.planned) if not _missing(r.planned)
            else fmt_num(r.games), r.status, fmt_num(r.p1_wins), fmt_num(r.p2_wins), fmt_num(r.no_winner),
            fmt_rate_ci(r.p1_rate, r.ci_low, r.ci_high), "yes" if r.selected else "no",
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
    return Table(
        name="pairwise",
        title="All pairings: wins by side",
        data=frame.reset_index(drop=True),
        headers=("experiment", "config_hash", "pairing", "games", "status", "P1 wins", "P2 wins",
                 "no winner", "P1 rate [95% CI]", "used"),
        align="lllrlrrrrl",
        rows=rows,
        notes=tuple(notes),
    )


def _plan_status(games: int, planned: float, in_plan: bool) -> str:
    """'complete', 'partial (n/N)', 'not in plan' (older settings) or '—' (no plan known)."""
    if not in_plan:
        return "not in plan"
    if _missing(planned):
        return DASH
    return "complete" if games >= planned else f"partial ({games}/{int(planned)})"


# --------------------------------------------------------------------------- telemetry


def agent_order(names: set[str]) -> list[str]:
    """The registry's agent order first (vanilla … mcts-co, heuristics, random), then others sorted."""
    known = [a for a in AGENT_NAMES if a in names]
    return known + sorted(names - set(known))


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


_SIDE_KEYS = ["agent", "config_hash", "pairing", "game_index", "player"]


def _per_game_mean(plies: pd.DataFrame, field_name: str) -> pd.Series:
    """Per agent: the mean over (game, side) of ``field_name`` summed over that side's plies.

    A side with any ply lacking the field is NaN (a partial sum would undercount) and left out
    of the mean; an agent without any complete side is NaN.
    """
    if plies.empty:
        return pd.Series([], dtype="float64", index=pd.Index([], name="agent"), name=field_name)
    keys = [plies[k] for k in _SIDE_KEYS]
    total = plies.groupby(keys, sort=True)[field_name].sum(min_count=1)
    incomplete = plies[field_name].isna().groupby(keys, sort=True).any()
    return total.where(~incomplete).groupby(level="agent").mean()


def telemetry(data: GameData) -> Table:
    """Per agent, over all games given: iterations and solver calls per move, equivalent moves and plies per game.

    Per-move figures use every telemetry entry; per-game figures (plies, equivalent moves and
    candidates per game) only games with a winner: a game stopped at the ply limit is a cycle
    of up to MAX_PLIES plies, not a game length, and would inflate the per-game sums.

    Args:
        data: loaded games and telemetry (all settings).

    Returns:
        The table, one row per agent that played a game.
    """
    games, plies = data.games, data.plies
    game_keys = ["config_hash", "pairing", "game_index"]
    # One row per (game, agent): a mirror game counts once for its agent.
    sides = pd.concat(
        [games[[*game_keys, "p1", "plies", "winner"]].rename(columns={"p1": "agent"}),
         games[[*game_keys, "p2", "plies", "winner"]].rename(columns={"p2": "agent"})],
        ignore_index=True,
    ).drop_duplicates([*game_keys, "agent"])
    no_win = sides["winner"].isna()
    sides = sides.assign(no_win=no_win, decided_plies=sides["plies"].where(~no_win))
    names = set(sides["agent"]) | set(plies["agent"])
    per_game = sides.groupby("agent").agg(
        games=("plies", "size"),
        no_winner=("no_win", "sum"),
        plies_median=("decided_plies", "median"),
        plies_q25=("decided_plies", lambda s: s.quantile(0.25)),
        plies_q75=("decided_plies", lambda s: s.quantile(0.75)),
    )
    per_move = plies.groupby("agent").agg(
        moves=("ply", "size"),
        iterations_median=("iterations", "median"),
        iterations_q25=("iterations", lambda s: s.quantile(0.25)),
        iterations_q75=("iterations", lambda s: s.quantile(0.75)),
        solver_calls_median=("solver_calls", "median"),
        tree_nodes_median=("tree_nodes", "median"),
        device_seconds_median=("device_seconds", "median"),
    )
    # The paper counts equivalent moves "per agent and per game": sum over one side's plies of one game.
    undecided = pd.MultiIndex.from_frame(games.loc[games["winner"].isna(), game_keys])
    decided_plies = plies[~pd.MultiIndex.from_frame(plies[game_keys]).isin(undecided)]
    eq_moves = _per_game_mean(decided_plies, "equivalent_moves").rename("equivalent_moves_per_game")
    eq_cands = _per_game_mean(decided_plies, "equivalent_candidates").rename("equivalent_candidates_per_game")
    paper_eq = equivalent_moves_reference()
    frame = pd.DataFrame(index=pd.Index(agent_order(names), name="agent"))
    frame = frame.join(per_game).join(per_move).join(eq_moves).join(eq_cands)
    frame["paper_equivalent_moves_per_game"] = [paper_eq.get(a, math.nan) for a in frame.index]
    frame = frame.reset_index()
    columns = ["agent", "games", "no_winner", "moves", "iterations_median", "iterations_q25", "iterations_q75",
               "solver_calls_median", "equivalent_moves_per_game", "equivalent_candidates_per_game",
               "paper_equivalent_moves_per_game", "plies_median", "plies_q25", "plies_q75", "tree_nodes_median",
               "device_seconds_median"]
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
        _telemetry_no_winner_note(int(games["winner"].isna().sum())),
    ]
    return Table(
        name="telemetry",
        title="Telemetry per agent",
        data=frame,
        headers=("agent", "games", "moves", "iterations/move median [IQR]", "solver calls/move median",
                 "equivalent moves/game mean", "equivalent candidates/game mean", "paper",
                 "plies/game median [IQR]"),
        align="lrrrrrrrr",
        rows=rows,
        notes=tuple(notes),
    )


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


def game_length(data: GameData) -> Table:
    """§5: the paper's median seconds per game per log file beside our median plies for that pairing.

    Args:
        data: loaded games; only the selected settings of each pairing are used.

    Returns:
        The table, one row per log file of the paper (22 rows).
    """
    selected = data.selected
    no_winner = selected["winner"].isna().groupby(selected["pairing"]).sum()
    stats = decided(selected).groupby("pairing").agg(
        games=("plies", "size"),
        plies_median=("plies", "median"),
        plies_q25=("plies", lambda s: s.quantile(0.25)),
        plies_q75=("plies", lambda s: s.quantile(0.75)),
    )
    records = []
    for ref in durations_reference():
        pairing = ref["pairing"]
        p1, p2 = pairing.split(" vs ")
        n_heuristic = (p1 in HEURISTIC_AGENTS) + (p2 in HEURISTIC_AGENTS)
        # §5: an MCTS ply costs ~1 s on the device, a heuristic ply tens of ms.
        if n_heuristic == 0:
            reading, factor = "plies ≈ s", 1.0
        elif n_heuristic == 1:
            reading, factor = "plies ≈ 2×s", 2.0
        else:
            reading, factor = "not comparable", math.nan
        ours = stats.loc[pairing] if pairing in stats.index else None
        records.append({
            "file": ref["file"],
            "pairing": pairing,
            "paper_games_timed": ref["games_timed"],
            "paper_median_s": ref["median_s"],
            "reading": reading,
            "paper_plies_estimate": ref["median_s"] * factor,
            "games": int(ours["games"]) if ours is not None else 0,
            "no_winner": int(no_winner.get(pairing, 0)),
            "plies_median": ours["plies_median"] if ours is not None else math.nan,
            "plies_q25": ours["plies_q25"] if ours is not None else math.nan,
            "plies_q75": ours["plies_q75"] if ours is not None else math.nan,
        })
    frame = pd.DataFrame(records).astype(
        {"paper_games_timed": "int64", "games": "int64", "no_winner": "int64", "paper_median_s": "float64",
         "paper_plies_estimate": "float64", "plies_median": "float64", "plies_q25": "float64",
         "plies_q75": "float64"}
    )
    rows = tuple(
        (
            r.file, r.pairing, f"{r.paper_median_s:.1f} ({r.paper_games_timed})", r.reading,
            fmt_num(r.paper_plies_estimate), fmt_num(r.games) if r.games else DASH,
            fmt_median_iqr(r.plies_median, r.plies_q25, r.plies_q75),
        )
        for r in frame.itertuples()
    )
    notes = (
        "Paper: median seconds per game in each 0.6.2 log file (games timed; intervals spanning an "
        "app restart excluded), EXPERIMENTS.md §5. The logs hold no move lists, so paper plies are "
        "estimates: an MCTS ply costs about 1 s on the device and a heuristic ply tens of ms, hence "
        "plies ≈ seconds for MCTS vs MCTS and plies ≈ 2 × seconds when one side is heuristics; "
        "the heuristics mirror (1.5 s per game) gives no estimate.",
        "Ours: median plies [quartiles] of the games used for Tables I/II for the same pairing, "
        f"decided games only: games stopped at the {MAX_PLIES:,}-ply cap without a winner are left "
        "out of the games and the median (game_length.csv: no_winner).",
    )
    return Table(
        name="game_length",
        title="Game length: the paper's seconds per game vs our plies per game",
        data=frame,
        headers=("paper file", "pairing", "paper median s (games)", "reading", "paper plies (est.)",
                 "our games", "our plies median [IQR]"),
        align="llrlrrr",
        rows=rows,
        notes=notes,
    )
