"""Tables I, II and game length: our games compared with the paper's.

The tables that compare our games with the paper: Table I, Table II and game length (§5).

Statistical choices (see :mod:`boopexp.analysis.stats` for the reasoning): win rates carry a
Wilson 95% score interval; our counts are compared with the paper's by a two-sided Fisher exact
test on the 2×2 table (ours, paper) × (wins, losses) — the paper's counts are a sample too —
and the verdict is "differs" if p < 0.05, else "consistent". Boschloo's exact test of the same
table is shown beside it (more powerful: Fisher is conservative at n = 100); the verdict stays
Fisher's, and a note names any row where the two disagree at the 5% level.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from boopexp.analysis.paper import (
    FOCUS_AGENT,
    TABLE1_OPPONENTS,
    TABLE2_AGENTS,
    PaperCounts,
    durations_reference,
    table1_reference,
    table2_reference,
)
from boopexp.analysis.records import GameData
from boopexp.analysis.stats import (
    ALPHA,
    boschloo_bound_note,
    boschloo_p,
    fisher_exact,
    score_interval,
    verdict,
    wilson_interval,
)
from boopexp.analysis.tables import (
    DASH,
    DRAWS,
    NO_WINNER_NOTE,
    Table,
    decided,
    fmt_count,
    fmt_diff,
    fmt_median_iqr,
    fmt_num,
    fmt_p,
    fmt_percent,
    fmt_rate_ci,
    pairing_counts,
    ratio,
)
from boopexp.play.contract import MAX_PLIES
from boopexp.play.identity import pairing_agents, pairing_name

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


def _disagreement_note(frame: pd.DataFrame, key: str, bounded: list[str]) -> list[str]:
    """A note naming the rows where Fisher and Boschloo fall on different sides of ALPHA (not
    the ``bounded`` rows, whose p (Boschloo) is only a bound of it: :func:`_bound_note`)."""
    both = frame[~frame[key].isin(bounded)].dropna(subset=["p_value", "p_value_boschloo"])
    split = both[(both["p_value"] < ALPHA) != (both["p_value_boschloo"] < ALPHA)][key].tolist()
    if not split:
        return []
    return [f"Fisher and Boschloo disagree at the {ALPHA} level for " + ", ".join(split) + "."]


def _status(ours: list[int], planned: list[int]) -> str:
    """'complete', 'partial (n/N)' or 'not run' from our games and the paper's, side by side."""
    n, total = sum(ours), sum(planned)
    if n == 0:
        return "not run"
    if all(o >= p for o, p in zip(ours, planned)):
        return "complete"
    return f"partial ({n}/{total})"


def _fisher_or_nan(wins: int, games: int, paper_wins: int, paper_games: int) -> float:
    if games == 0 or paper_games == 0:
        return math.nan
    return fisher_exact([[wins, games - wins], [paper_wins, paper_games - paper_wins]])


def _boschloo_or_nan(table: list[list[int]], n: int) -> tuple[float, bool]:
    """Boschloo's p of ``table`` (rows: ours, the paper's), or its Fisher bound when too large,
    and whether it is Boschloo's (:func:`boschloo_p`); NaN (no bound) without games."""
    return boschloo_p(table) if n else (math.nan, True)


def _bound_note(bounded: list[str]) -> list[str]:
    """The note naming the rows whose p (Boschloo) is the Fisher bound, if any."""
    if not bounded:
        return []
    return [boschloo_bound_note(bounded) + " They are left out of the comparison of Fisher and Boschloo."]


def _against_paper(row: Any, paper_rate: float) -> tuple[str, ...]:
    """The columns Tables I and II both end with: the paper's rate, ours minus it, Fisher's and
    Boschloo's p, the verdict and the row's status."""
    return (fmt_percent(paper_rate), fmt_diff(row.difference), fmt_p(row.p_value), fmt_p(row.p_value_boschloo),
            row.verdict, row.status)


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
    draws = DRAWS in counts
    reference = table1_reference()
    records = []
    for opponent in TABLE1_OPPONENTS:
        paper = reference[opponent]
        sides: list[_Side] = []  # P1 then P2
        for pairing, winner_col, paper_wins, paper_games in (
            (pairing_name(FOCUS_AGENT, opponent), "p1_wins", paper.p1_wins, paper.n1),
            (pairing_name(opponent, FOCUS_AGENT), "p2_wins", paper.p2_wins, paper.n2),
        ):
            if pairing in counts.index:
                row = counts.loc[pairing]
                n_decided = int(row["p1_wins"]) + int(row["p2_wins"])
                sides.append((int(row[winner_col]), n_decided, paper_wins, paper_games, row["config_hash"],
                              int(row["no_winner"]), int(row[DRAWS]) if draws else 0))
            else:
                sides.append((None, 0, paper_wins, paper_games, "", None, 0))
        records.append(_comparison_row(opponent, sides, paper))
    bounded = [r["opponent"] for r in records if r.pop(_BOUNDED)]
    frame = pd.DataFrame(records)
    if not draws:  # every table of games without a draw stays as it was
        frame = frame.drop(columns=list(TABLE1_DRAWS))
    frame = frame.astype({c: "Int64" for c in TABLE1_INT} | {c: "float64" for c in TABLE1_FLOAT}
                         | ({c: "Int64" for c in TABLE1_DRAWS[:3]} | {c: "float64" for c in TABLE1_DRAWS[3:]}
                            if draws else {}))

    shown = frame[frame["status"] != "not run"]
    rows = tuple(
        (
            r.opponent,
            fmt_count(r.p1_wins, r.p1_games),
            fmt_count(r.p2_wins, r.p2_games),
            *((fmt_num(r.draws),) if draws else ()),
            fmt_num(r.no_winner),
            fmt_rate_ci(r.win_rate, r.ci_low, r.ci_high),
            *((fmt_rate_ci(r.score, r.score_low, r.score_high),) if draws else ()),
            fmt_count(r.paper_p1_wins, r.paper_p1_games),
            fmt_count(r.paper_p2_wins, r.paper_p2_games),
            *_against_paper(r, r.paper_win_rate),
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
        *_bound_note(bounded),
        *_disagreement_note(shown, "opponent", bounded),
        *((DRAWS_PAPER_NOTE,) if draws else ()),
    ]
    return Table(
        name="table1",
        title="Table I: wins of mcts-co against each opponent (ours vs the paper)",
        data=frame,
        headers=("opponent", "P1", "P2", *(("draws",) if draws else ()), "no winner", "win rate [95% CI]",
                 *(("score [95% CI]",) if draws else ()), "paper P1", "paper P2",
                 "paper rate", "diff", "p (Fisher)", "p (Boschloo)", "verdict", "status"),
        align="lrr" + ("r" if draws else "") + "rr" + ("r" if draws else "") + "rrrrrrll",
        rows=rows,
        notes=tuple(notes),
    )


#: The key of a Table I row (not a column) saying its p (Boschloo) is the Fisher bound.
_BOUNDED = "boschloo_bound"

#: one side of a Table I row: (our wins, decided games, paper wins, paper games, config_hash, no winner,
#: draws); our wins and no winner are None when the side was not played
_Side = tuple[int | None, int, int, int, str, int | None, int]

#: Table I's columns of drawn games, shown only when a game was drawn: per side and pooled, and
#: mcts-co's score (wins + draws/2 over the decided and drawn games) with its interval.
TABLE1_DRAWS = ("p1_draws", "p2_draws", "draws", "score", "score_low", "score_high")

#: Tables I and II's note when a game was drawn (the paper's games had no draw).
DRAWS_PAPER_NOTE = (
    "Draws: games the rules ended drawn, half a point to each side (score = (wins + draws/2) / (wins + "
    "losses + draws); interval: Student's t on the games' mean score). The paper's games had no draw, so the "
    "rates, the comparison with the paper and its tests use the decided games (wins and losses) only."
)


def _comparison_row(opponent: str, sides: list[_Side], paper: PaperCounts) -> dict[str, Any]:
    """One Table I row from the (ours, paper) counts of both sides (n = decided games)."""
    (w1, n1, pw1, pn1, h1, u1, d1), (w2, n2, pw2, pn2, h2, u2, d2) = sides
    present = [(w, n, pw, pn) for w, n, pw, pn, _, _, _ in sides if w is not None and n > 0]
    run = [u for _, _, _, _, _, u, _ in sides if u is not None]
    wins = sum(s[0] for s in present)
    games = sum(s[1] for s in present)
    # With one side missing, compare against the paper's games of the same side only: the side
    # effect (P2 is favoured) is too strong to compare one side with a two-side pool.
    paper_wins = sum(s[2] for s in present) if present else pw1 + pw2
    paper_games = sum(s[3] for s in present) if present else pn1 + pn2
    low, high = wilson_interval(wins, games)
    rate = ratio(wins, games)
    paper_rate = ratio(paper_wins, paper_games)
    p = _fisher_or_nan(wins, games, paper_wins, paper_games)
    boschloo, exact = _boschloo_or_nan([[wins, games - wins], [paper_wins, paper_games - paper_wins]], games)
    played = [(w, n, d) for w, n, _, _, _, _, d in sides if w is not None]
    score = score_interval(sum(w for w, _, _ in played), sum(d for _, _, d in played),
                           sum(n - w for w, n, _ in played))
    return {
        "opponent": opponent,
        # A game stopped at the ply limit or drawn is finished (it will not be replayed): it counts here.
        "status": _status([n1 + (u1 or 0) + d1, n2 + (u2 or 0) + d2], [pn1, pn2]),
        "p1_wins": w1, "p1_games": n1, "p1_no_winner": u1,
        "p2_wins": w2, "p2_games": n2, "p2_no_winner": u2,
        "wins": wins if games else None, "games": games, "no_winner": sum(run) if run else None,
        "win_rate": rate, "ci_low": low, "ci_high": high,
        "paper_p1_wins": pw1, "paper_p1_games": pn1, "paper_p2_wins": pw2, "paper_p2_games": pn2,
        "paper_win_rate": paper_rate,
        "difference": rate - paper_rate,
        "p_value": p,
        "p_value_p1": _fisher_or_nan(w1 or 0, n1, pw1, pn1),  # NaN when n1 = 0 (w1 None)
        "p_value_p2": _fisher_or_nan(w2 or 0, n2, pw2, pn2),
        "p_value_boschloo": boschloo,
        _BOUNDED: not exact,
        "verdict": verdict(p),
        "p1_config_hash": h1,
        "p2_config_hash": h2,
        **dict(zip(TABLE1_DRAWS, (d1 if w1 is not None else None, d2 if w2 is not None else None,
                                  d1 + d2 if played else None, *score))),
    }


TABLE2_INT = ("games", "p1_wins", "p2_wins", "no_winner", "paper_games", "paper_p1_wins", "paper_p2_wins")


TABLE2_FLOAT = ("p2_share", "ci_low", "ci_high", "paper_p2_share", "difference", "p_value", "p_value_boschloo")

#: Table II's columns of drawn games, shown only when a game was drawn: the draws and P2's score
#: (P2 wins + draws/2 over the decided and drawn games) with its interval.
TABLE2_DRAWS = ("draws", "p2_score", "score_low", "score_high")


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
    draws = DRAWS in counts
    reference = table2_reference()
    records = []
    bounded = []
    for agent in TABLE2_AGENTS:
        paper = reference[agent]
        paper_games = paper.p1_wins + paper.p2_wins
        pairing = pairing_name(agent, agent)
        if pairing in counts.index:
            row = counts.loc[pairing]
            games, p1, p2, none = (int(row[c]) for c in ("games", "p1_wins", "p2_wins", "no_winner"))
            drew: int | None = int(row[DRAWS]) if draws else 0
            config_hash = row["config_hash"]
        else:
            games, p1, p2, none, drew, config_hash = 0, None, None, None, None, ""
        n_decided = (p1 or 0) + (p2 or 0)
        low, high = wilson_interval(p2 or 0, n_decided)
        share = ratio(p2 or 0, n_decided)
        paper_share = paper.p2_wins / paper_games
        decided = [p1 or 0, p2 or 0]  # None only when nothing was played (n_decided = 0)
        p = fisher_exact([decided, [paper.p1_wins, paper.p2_wins]]) if n_decided else math.nan
        boschloo, exact = _boschloo_or_nan([decided, [paper.p1_wins, paper.p2_wins]], n_decided)
        if not exact:
            bounded.append(agent)
        records.append({
            "agent": agent,
            "status": _status([games], [paper_games]),
            "games": games, "p1_wins": p1, "p2_wins": p2, "no_winner": none,
            "p2_share": share, "ci_low": low, "ci_high": high,
            "paper_games": paper_games, "paper_p1_wins": paper.p1_wins, "paper_p2_wins": paper.p2_wins,
            "paper_p2_share": paper_share,
            "difference": share - paper_share,
            "p_value": p,
            "p_value_boschloo": boschloo,
            "verdict": verdict(p),
            "config_hash": config_hash,
            **dict(zip(TABLE2_DRAWS, (drew, *score_interval(p2 or 0, drew or 0, p1 or 0)))),
        })
    frame = pd.DataFrame(records)
    if not draws:  # every table of games without a draw stays as it was
        frame = frame.drop(columns=list(TABLE2_DRAWS))
    frame = frame.astype({c: "Int64" for c in TABLE2_INT} | {c: "float64" for c in TABLE2_FLOAT}
                         | ({"draws": "Int64"} | {c: "float64" for c in TABLE2_DRAWS[1:]} if draws else {}))
    shown = frame[frame["status"] != "not run"]
    rows = tuple(
        (
            r.agent,
            fmt_num(r.p1_wins),
            fmt_num(r.p2_wins),
            *((fmt_num(r.draws),) if draws else ()),
            fmt_num(r.no_winner),
            fmt_num(r.games),
            fmt_rate_ci(r.p2_share, r.ci_low, r.ci_high),
            *((fmt_rate_ci(r.p2_score, r.score_low, r.score_high),) if draws else ()),
            fmt_num(r.paper_p1_wins),
            fmt_num(r.paper_p2_wins),
            *_against_paper(r, r.paper_p2_share),
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
        *_bound_note(bounded),
        *_disagreement_note(shown, "agent", bounded),
        *((DRAWS_PAPER_NOTE,) if draws else ()),
    ]
    return Table(
        name="table2",
        title="Table II: mirror games, wins by side (ours vs the paper)",
        data=frame,
        headers=("agent", "P1 wins", "P2 wins", *(("draws",) if draws else ()), "no winner", "games",
                 "P2 share [95% CI]", *(("P2 score [95% CI]",) if draws else ()), "paper P1",
                 "paper P2", "paper P2 share", "diff", "p (Fisher)", "p (Boschloo)", "verdict", "status"),
        align="lrr" + ("r" if draws else "") + "rrr" + ("r" if draws else "") + "rrrrrrll",
        rows=rows,
        notes=tuple(notes),
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
        p1, p2 = pairing_agents(pairing)
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
