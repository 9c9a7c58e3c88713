"""The seed reports' rows (their numbers, what they count, the finding) and each row tested on its store.

The rows and the rules are docs/seed-games.md's, fixed before the full runs: per row the agent
whose rate the report gives and its opponent (both seatings counted together; a mirror's agent is
p1 in even-numbered games and p2 in odd ones, so its seats alternate as in the reports' autoplay),
what counts as a success (:data:`COUNTS`), the report's rate and, where the report gives it, its
number of games; the finding the row tests (:data:`CLAIMS`). A game without a winner is a tie:
neither game can reach the ply cap (Pentago-Swap ends by ply 36; Colosseum Survival walls a side
a move, at most 264 of them on its largest board).

The test of agreement, like Table I's with the paper (``boopexp.analysis.stats``): where the
report gives its count (Colosseum's 1,000 games, Pentago-Swap E2's 100) its rate is a sample too,
so the verdict's p is the two-sided Fisher exact test of our successes/failures against the
report's; where it does not, the report's rate is taken as exact and the p is the two-sided exact
binomial test of ours against it. Both p-values are given where both exist.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from boopexp.analysis.stats import ALPHA, fisher_exact, wilson_interval
from boopexp.experiments.store import has_games_files
from boopexp.studies.stores import check_study_folder, read_outcomes

STUDY = "seed-games"
#: The study's stores, each ``results/seed-games/<store>`` from configs/seed-games/<store>.yaml: one
#: per game, and Colosseum's E1 on the cpu clock with our end test and with the union-find one
#: (docs/seed-games.md §7, added after the plan).
STORES = ("pentago-swap", "colosseum", "colosseum-cpu", "colosseum-cpu-uf")
CONFIG_PATTERN = "configs/{study}/{store}.yaml"

#: What a row counts as the agent's success: its wins; its wins and ties (Colosseum's autoplay,
#: QUIRK-CS3: a tie is a win for both); the games it did not lose (Pentago-Swap E5, "cannot be
#: beaten"); its wins among the decided games (a prediction of 50 % between equal agents).
COUNTS = ("wins", "wins+ties", "not lost", "decided wins")
#: The finding a row tests: the agent does better / worse than an equal agent would ("above",
#: "below"); no better nor worse, within the row's margin ("near"); never loses ("never loses");
#: wins at least the row's rate ("at least"); no finding, a measurement ("none").
CLAIMS = ("above", "below", "near", "never loses", "at least", "none")
VERDICTS = ("holds", "does not hold", "inconclusive", "not run", "not tested")


@dataclass(frozen=True)
class ReportRow:
    """One row of a seed report, as docs/seed-games.md reads it.

    Attributes:
        row: its id (``PS-E2``: Pentago-Swap's E2; ``X`` rows are ours, not the report's).
        store: the study's store holding its games (:data:`STORES`); ``""``: not playable yet.
        agent, opponent: the agents of the pairing (config names), ``agent`` the one whose rate is given.
        experiment: what the row compares, in words.
        counts: what a success is (:data:`COUNTS`).
        report_rate: the report's rate (or the predicted one for our rows); None: none given.
        report_games: the report's number of games; None: not given.
        claim: the finding tested (:data:`CLAIMS`); ``margin``: a "near" claim's half-width. An
            "above" or "below" row without a number is judged on its interval alone.
        reported: the report's words.
        missing: why the row is not played yet (``store`` empty).
    """

    row: str
    store: str
    agent: str
    opponent: str
    experiment: str
    counts: str
    report_rate: float | None
    report_games: int | None
    claim: str
    reported: str
    margin: float = 0.05
    missing: str = ""


#: Every row, in the reports' order (PENTAGO-SWAP.md §12.2, COLOSSEUM.md §12.3).
ROWS: tuple[ReportRow, ...] = (
    ReportRow("PS-E1", "pentago-swap", "ps-persistent", "ps-submitted",
              "persistent tree vs new tree a move, one budget every move", "wins", 0.33, None, "below",
              "33% (first-move limit 1,900 ms; no time-out)"),
    # E1b: the report's other columns, the persistent agent's first move 5 / 7 / 10 / 25 s against
    # its later 1.9 s: the same ratios of our budget (its own first_move_scale, docs/seed-games.md §2).
    ReportRow("PS-E1b-5", "pentago-swap", "ps-persistent-f5", "ps-submitted",
              "persistent tree, first move 5 / 1.9 of a later one", "wins", 0.33, None, "below",
              "33% (first-move limit 5,000 ms; no time-out)"),
    ReportRow("PS-E1b-7", "pentago-swap", "ps-persistent-f7", "ps-submitted",
              "persistent tree, first move 7 / 1.9 of a later one", "wins", None, None, "none",
              "0% (first-move limit 7,000 ms): losses on time, not reproducible (§4)"),
    ReportRow("PS-E1b-10", "pentago-swap", "ps-persistent-f10", "ps-submitted",
              "persistent tree, first move 10 / 1.9 of a later one", "wins", None, None, "none",
              "0% (first-move limit 10,000 ms): losses on time, not reproducible (§4)"),
    ReportRow("PS-E1b-25", "pentago-swap", "ps-persistent-f25", "ps-submitted",
              "persistent tree, first move 25 / 1.9 of a later one", "wins", None, None, "none",
              "0% (first-move limit 25,000 ms): losses on time, not reproducible (§4)"),
    ReportRow("PS-E2", "pentago-swap", "ps-c0", "ps-submitted", "c = 0 vs c = 1.4 ({100, -100})", "wins",
              0.70, 100, "above", "c = 0 won ~70 of 100"),
    ReportRow("PS-E3", "pentago-swap", "ps-1-100", "ps-1-1", "{1, -100} vs {1, -1} (c = 1.4)", "wins",
              0.33, None, "below", "{1, -100} won 33%"),
    ReportRow("PS-E4", "pentago-swap", "ps-1-1", "ps-submitted", "{1, -1} vs {100, -100} (c = 1.4)", "wins",
              0.60, None, "above", "{1, -1} won 60%"),
    ReportRow("PS-E5", "pentago-swap", "ps-submitted", "random", "the submitted agent vs random", "not lost",
              1.0, None, "never loses", "cannot be beaten"),
    ReportRow("PS-X1", "pentago-swap", "ps-1-1-c0.014", "ps-1-1",
              "{1, -1}, c = 0.014 (the submitted UCT / 100) vs {1, -1}, c = 1.4", "wins", 0.40, None, "below",
              "predicted from E4: 100% - 60%"),
    ReportRow("PS-X2", "pentago-swap", "ps-1-1-c0", "ps-c0", "c = 0 at {1, -1} vs at {100, -100}",
              "decided wins", 0.50, None, "near", "predicted: the same agent", margin=0.10),
    ReportRow("PS-X3", "pentago-swap", "ps-1-1-c0", "ps-1-1", "{1, -1}: c = 0 vs c = 1.4", "wins", None, None,
              "above", "implied: the report's best agent"),
    # E1 and E3 change speed, not play: B is given the iterations its code buys, as its own budget
    # scale (ours measured by benchmarks/colosseum_speed.py; the "r" rows at the report's speed-up).
    ReportRow("CS-E1", "colosseum", "cs-b-e1", "cs-a",
              "B (terminal test after both moves, 1.335 x A's budget: our +33.5 %) vs A", "wins+ties", 0.544, 1000,
              "above", "54.4% of 1,000; +38.6% simulations a turn"),
    ReportRow("CS-E1r", "colosseum", "cs-b-e1r", "cs-a",
              "B (terminal test after both moves, 1.386 x A's budget: the report's +38.6 %) vs A", "wins+ties",
              0.544, 1000, "above", "54.4% of 1,000; +38.6% simulations a turn"),
    ReportRow("CS-E2-N4", "colosseum", "cs-b-n4", "cs-a", "B (playout cut after 4 moves, H) vs A", "wins+ties",
              0.481, 1000, "near", "48.1% of 1,000"),
    ReportRow("CS-E2-N5", "colosseum", "cs-b-n5", "cs-a", "B (playout cut after 5 moves, H) vs A", "wins+ties",
              0.497, 1000, "near", "49.7% of 1,000"),
    ReportRow("CS-E2-N6", "colosseum", "cs-b-n6", "cs-a", "B (playout cut after 6 moves, H) vs A", "wins+ties",
              0.490, 1000, "near", "49.0% of 1,000"),
    ReportRow("CS-E2-N7", "colosseum", "cs-b-n7", "cs-a", "B (playout cut after 7 moves, H) vs A", "wins+ties",
              0.507, 1000, "near", "50.7% of 1,000"),
    ReportRow("CS-E3", "colosseum", "cs-b-e3", "cs-a",
              "B (bidirectional separation test: 1.528 x A's budget, our +52.8 %) vs A", "wins+ties", 0.534, 1000,
              "above", "53.4% of 1,000; +190.6% simulations a turn"),
    ReportRow("CS-E3r", "colosseum", "cs-b-e3r", "cs-a",
              "B (bidirectional separation test: 2.906 x A's budget, the report's +190.6 %) vs A", "wins+ties",
              0.534, 1000, "above", "53.4% of 1,000; +190.6% simulations a turn"),
    ReportRow("CS-C0", "colosseum", "cs-a", "cs-a", "control: A vs A (B of E1, E3 at A's budget)",
              "wins+ties", None, None, "none", "(ours: what equal agents score)"),
    # E1 on the cpu clock (docs/seed-games.md §7, fixed after the plan, before its games): B gets the
    # same CPU time a move as A and plays the simulations its own code buys.
    ReportRow("CS-E1c", "colosseum-cpu", "cs-b-e1c", "cs-a",
              "B (terminal test after both moves; the same 0.01 CPU-s a move as A; our bitboard end test) vs A",
              "wins+ties", 0.544, 1000, "above", "54.4% of 1,000; +38.6% simulations a turn"),
    ReportRow("CS-C0c", "colosseum-cpu", "cs-a", "cs-a", "control on the cpu clock (bitboard end test): A vs A",
              "wins+ties", None, None, "none", "(ours: what equal agents score)"),
    ReportRow("CS-E1cu", "colosseum-cpu-uf", "cs-b-e1c", "cs-a",
              "B (terminal test after both moves; the same 0.01 CPU-s a move as A; the union-find end test) vs A",
              "wins+ties", 0.544, 1000, "above", "54.4% of 1,000; +38.6% simulations a turn"),
    ReportRow("CS-C0cu", "colosseum-cpu-uf", "cs-a", "cs-a", "control on the cpu clock (union-find end test): A vs A",
              "wins+ties", None, None, "none", "(ours: what equal agents score)"),
    ReportRow("CS-E4", "colosseum", "cs-a", "random", "A (the final agent on the device clock) vs random",
              "wins+ties", 0.95, None, "at least", "wins almost every time (read: at least 95%)"),
)


@dataclass(frozen=True)
class RowResult:
    """A row's counts from its store, its interval, tests and verdict (NaN where there is nothing)."""

    row: ReportRow
    games: int
    wins: int
    ties: int
    losses: int
    k: int
    n: int
    rate: float
    ci_low: float
    ci_high: float
    equal_rate: float
    p_binomial: float
    p_fisher: float
    p_value: float
    verdict: str


def read_games(root: Path) -> dict[str, pd.DataFrame]:
    """Each store's planned games under ``root`` (store → games; a store without games left out).

    Raises:
        ConfigError: ``root`` holds none of the stores, or a store of another experiment.
    """
    check_study_folder(root, STORES, STUDY, CONFIG_PATTERN)
    return {s: read_outcomes(root / s).games for s in STORES if has_games_files(root / s)}


def row_counts(games: pd.DataFrame, agent: str, opponent: str) -> tuple[int, int, int]:
    """(wins, ties, losses) of ``agent`` in its games with ``opponent``, both seatings.

    In a mirror (``agent == opponent``) the agent is p1 in even-numbered games and p2 in odd ones.
    """
    if games.empty:
        return (0, 0, 0)
    p1, p2, winner = games["p1"], games["p2"], games["winner"]
    if agent == opponent:
        mine = (p1 == agent) & (p2 == agent)
        seat = pd.Series("p2", index=games.index).where(games["game_index"] % 2 == 1, "p1")
    else:
        mine = ((p1 == agent) & (p2 == opponent)) | ((p1 == opponent) & (p2 == agent))
        seat = pd.Series("p1", index=games.index).where(p1 == agent, "p2")
    won = mine & (winner == seat)
    tie = mine & winner.isna()
    return (int(won.sum()), int(tie.sum()), int(mine.sum() - won.sum() - tie.sum()))


def successes(counts: str, wins: int, ties: int, losses: int) -> tuple[int, int]:
    """(k, n): the row's successes and trials under ``counts`` (:data:`COUNTS`)."""
    if counts == "wins":
        return wins, wins + ties + losses
    if counts in ("wins+ties", "not lost"):
        return wins + ties, wins + ties + losses
    if counts == "decided wins":
        return wins, wins + losses
    raise ValueError(f"unknown count {counts!r}; allowed: {', '.join(COUNTS)}")


def equal_rate(counts: str, wins: int, ties: int, losses: int) -> float:
    """The rate two equal agents would have with these ties: half the decided games, plus the ties
    where they count as successes (NaN without games)."""
    k, n = successes(counts, wins, ties, losses)
    if n == 0:
        return math.nan
    decided = wins + losses
    return (decided / 2 + (ties if counts in ("wins+ties", "not lost") else 0)) / n


def binomial_p(k: int, n: int, p: float, alternative: str = "two-sided") -> float:
    """The exact binomial test's p of k successes in n at rate p (scipy's ``binomtest``; NaN without games)."""
    from scipy.stats import binomtest

    if n == 0:
        return math.nan
    return float(binomtest(int(k), int(n), float(p), alternative=alternative).pvalue)


def judge(row: ReportRow, k: int, n: int, low: float, high: float, null: float, p: float) -> str:
    """The row's verdict from its agreement p, its interval and the equal agents' rate (docs/seed-games.md §3)."""
    if n == 0:
        return "not run"
    if row.claim == "none":
        return "not tested"
    if row.report_rate is None:  # a direction without a number: the interval alone
        mine, other = (low > null, high < null) if row.claim == "above" else (high < null, low > null)
        return "holds" if mine else "does not hold" if other else "inconclusive"
    if row.claim == "never loses":
        return "holds" if k == n else "does not hold"
    if p < ALPHA:
        return "does not hold"
    if row.claim == "at least":
        return "holds" if low >= row.report_rate else "inconclusive"
    if row.claim == "above":
        return "holds" if low > null else "inconclusive"
    if row.claim == "below":
        return "holds" if high < null else "inconclusive"
    # near: the interval within the margin of what equal agents score
    return "holds" if null - row.margin <= low and high <= null + row.margin else "inconclusive"


def evaluate(row: ReportRow, games: pd.DataFrame | None) -> RowResult:
    """Count ``row``'s games in its store's ``games`` (None: not played) and test them."""
    wins, ties, losses = (0, 0, 0) if games is None else row_counts(games, row.agent, row.opponent)
    k, n = successes(row.counts, wins, ties, losses)
    low, high = wilson_interval(k, n)
    null = equal_rate(row.counts, wins, ties, losses)
    p_binom = p_fisher = math.nan
    if n and row.report_rate is not None:
        if row.claim == "never loses":
            p_binom = 1.0 if k == n else 0.0  # at rate 1 any failure is impossible
        elif row.claim == "at least":
            p_binom = binomial_p(k, n, row.report_rate, "less")
        else:
            p_binom = binomial_p(k, n, row.report_rate)
        if row.report_games is not None:
            theirs = round(row.report_rate * row.report_games)
            p_fisher = fisher_exact(((k, n - k), (theirs, row.report_games - theirs)))
    p = p_fisher if not math.isnan(p_fisher) else p_binom
    verdict = "not run" if n == 0 else judge(row, k, n, low, high, null, p)
    return RowResult(row, wins + ties + losses, wins, ties, losses, k, n, k / n if n else math.nan, low, high,
                     null, p_binom, p_fisher, p, verdict)


def evaluate_all(games: dict[str, pd.DataFrame]) -> list[RowResult]:
    """Every row of :data:`ROWS` on the stores' games (a row whose store is absent: not run)."""
    return [evaluate(row, games.get(row.store)) for row in ROWS]
