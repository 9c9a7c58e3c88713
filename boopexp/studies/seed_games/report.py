"""Its rows.csv and seed-games-tables.md (``boopexp seed-games``).

:mod:`boopexp.studies.seed_games.analysis` counts each report row's games and tests them; this
module lays the rows out as one :class:`~boopexp.analysis.tables.Table` (raw values to the CSV,
formatted cells to the Markdown) and writes them through the studies' one writer. No figure, no
date, no host detail: the same stores give the same bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from boopexp.analysis.stats import ALPHA
from boopexp.analysis.tables import DASH, Table, fmt_p, fmt_percent, fmt_rate_ci
from boopexp.studies import report as studies_report
from boopexp.studies.seed_games import analysis as sg

ROWS_COLUMNS = ("row", "store", "agent", "opponent", "experiment", "counts", "games", "wins", "ties", "losses",
                "k", "n", "rate", "ci_low", "ci_high", "equal_rate", "report_rate", "report_games", "reported",
                "claim", "p_binomial", "p_fisher", "p_value", "verdict", "missing")

NOTES = (
    "Ours: the agent's successes over its games with the opponent, both seatings (a mirror's agent is p1 in "
    "even-numbered games and p2 in odd ones), as the row counts them: wins; wins+ties (Colosseum's autoplay, "
    "QUIRK-CS3: a tie is a win for both); not lost (E5, 'cannot be beaten'); decided wins (ties left out). "
    "A game without a winner is a tie. Interval: Wilson 95%.",
    "p: where the report gives its number of games (Colosseum's 1,000, Pentago-Swap E2's 100), the two-sided "
    "Fisher exact test of our successes/failures against the report's (its rate times its games, rounded), as "
    "Table I is compared with the paper: the report's rate is a sample too. Otherwise the two-sided exact "
    "binomial test of ours against the report's rate taken as exact (one-sided 'less' for an 'at least' row; "
    "for 'cannot be beaten', 1 without a loss, else 0). p (binomial) is given for every row with a number.",
    f"Verdict (docs/seed-games.md, fixed before the games): 'does not hold' if p < {ALPHA}; else 'holds' if "
    "the interval lies on the report's side of what equal agents score (half the decided games, plus the ties "
    "where they count), or within the row's margin of it for a 'no gain' row, or at or above the rate of an "
    "'at least' row; else 'inconclusive'. 'not run': no games stored (the missing column says what a row needs). "
    "'not tested': a measurement without a report number.",
)


@dataclass(frozen=True)
class SeedGamesReport:
    """The study's table, its notes and each row's result."""

    results: tuple[sg.RowResult, ...]
    rows: Table
    notes: tuple[str, ...]


def _optional(x: float | int | None) -> float:
    return math.nan if x is None else float(x)


def rows_frame(results: list[sg.RowResult]) -> pd.DataFrame:
    """One line per report row, the raw values of :data:`ROWS_COLUMNS`."""
    lines = []
    for r in results:
        row = r.row
        lines.append({
            "row": row.row, "store": row.store, "agent": row.agent, "opponent": row.opponent,
            "experiment": row.experiment, "counts": row.counts, "games": r.games, "wins": r.wins, "ties": r.ties,
            "losses": r.losses, "k": r.k, "n": r.n, "rate": r.rate, "ci_low": r.ci_low, "ci_high": r.ci_high,
            "equal_rate": r.equal_rate, "report_rate": _optional(row.report_rate),
            "report_games": _optional(row.report_games), "reported": row.reported, "claim": row.claim,
            "p_binomial": r.p_binomial, "p_fisher": r.p_fisher, "p_value": r.p_value, "verdict": r.verdict,
            "missing": row.missing,
        })
    return pd.DataFrame(lines, columns=list(ROWS_COLUMNS))


def rows_table(results: list[sg.RowResult]) -> Table:
    """The rows beside the reports' numbers: ours with its interval, theirs, p and the verdict."""
    frame = rows_frame(results)
    display = []
    for r in results:
        row = r.row
        theirs = DASH if row.report_rate is None else fmt_percent(row.report_rate) + (
            "" if row.report_games is None else f" of {row.report_games:,}")
        display.append((
            row.row, row.experiment, row.counts, f"{r.wins}-{r.ties}-{r.losses}" if r.games else DASH,
            fmt_rate_ci(r.rate, r.ci_low, r.ci_high), theirs, row.reported, fmt_p(r.p_binomial),
            fmt_p(r.p_fisher), r.verdict,
        ))
    return Table(
        name="rows", title="The seed reports' rows, ours beside theirs",
        data=frame,
        headers=("row", "experiment", "counts", "W-T-L", "ours [95% CI]", "report", "report's words",
                 "p (binomial)", "p (Fisher)", "verdict"),
        align="lllrrrlrrl", rows=tuple(display), notes=NOTES,
    )


def build(root: Path) -> SeedGamesReport:
    """Read the stores under ``root`` and test every row (nothing written).

    Raises:
        ConfigError: ``root`` is not the study's folder.
    """
    results = sg.evaluate_all(sg.read_games(root))
    notes = tuple(f"{r.row.row} not run: needs {r.row.missing}" for r in results if r.row.missing)
    return SeedGamesReport(tuple(results), rows_table(results), notes)


def rebuild(root: Path, out: Path | None = None) -> tuple[SeedGamesReport, list[Path]]:
    """``boopexp seed-games``: the report of ``root``'s stores, written into ``out`` (default ``root``):
    rows.csv and seed-games-tables.md.

    Raises:
        ConfigError: ``root`` is not the study's folder.
        StoreError: ``out`` cannot be written.
    """
    report = build(root)
    paths = studies_report.write_report(out or root, [report.rows], ["rows"], sg.STUDY, report.notes, [])
    return report, paths
