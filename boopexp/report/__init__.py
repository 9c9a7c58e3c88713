"""The paper's tables from raw game records: pandas aggregation, exact statistics, figures.

Data flow: ``records`` (games.jsonl → frames, dedup, selection) → ``tables`` (Table I, Table II,
telemetry, game length, pairwise) → ``render`` (Markdown, CSV, LaTeX) and ``figures`` (PNG, SVG),
driven by ``builder.build_report``. Reference numbers: ``paper``; statistics: ``stats``.
See docs/tables.md.
"""

from boopexp.report.builder import DEFAULT_OUT_DIR, DEFAULT_RESULTS_DIRS, Report, build_report, build_tables
from boopexp.report.records import GameData, ReportWarning, load_results, read_games
from boopexp.report.stats import boschloo_exact, fisher_exact, verdict, wilson_interval

__all__ = [
    "DEFAULT_OUT_DIR",
    "DEFAULT_RESULTS_DIRS",
    "GameData",
    "Report",
    "ReportWarning",
    "build_report",
    "boschloo_exact",
    "build_tables",
    "fisher_exact",
    "load_results",
    "read_games",
    "verdict",
    "wilson_interval",
]
