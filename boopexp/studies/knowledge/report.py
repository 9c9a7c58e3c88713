"""Its pairings.csv, claims.csv, verdicts.csv, ladder.csv and figures (``boopexp knowledge``).

:mod:`boopexp.studies.knowledge.analysis` reads the stores, forms the pairs and runs the plan's tests;
this module lays the results out as :class:`~boopexp.analysis.tables.Table` objects, draws the
ladder per budget and the forest plot of the claims' pairings (the project's figure helpers:
fixed rc, SVG hash salt, no date, so the bytes rebuild) and writes them (``boopexp knowledge``).
The columns of every file are in docs/knowledge.md's "How to rebuild" (and
tests/test_report_knowledge.py holds them).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from boopexp.analysis.tables import Table, is_missing
from boopexp.studies import pairs_report as prr
from boopexp.studies import report as studies_report
from boopexp.studies.knowledge import analysis as kn
from boopexp.studies.pairs_report import (  # noqa: F401  (the columns of this study's files)
    BLUE_SEAT,
    CLAIMS_COLUMNS,
    LADDER_COLUMNS,
    PAIRINGS_COLUMNS,
    VERDICTS_COLUMNS,
    claims_table,
    forest_figure,
)

PLAN = "docs/knowledge-plan.md"
#: verdicts.csv's condition of the charge-robustness rows (C1, C2 across ×0.5, ×1, ×2).
ACROSS_CHARGES = "across charges"


# ---------------------------------------------------------------------------------------------
# Tables


def pairings_table(pairs: pd.DataFrame) -> Table:
    """One row per store × pairing × budget × node charge: the pairs, the sign test, the estimates."""
    return prr.pairings_table(pairs, kn.STORES, PLAN)


def verdicts_table(judgement: kn.Judgement) -> Table:
    """Per claim and family: the Holm-adjusted p-values and the verdict; then C1's and C2's
    robustness across the node charges."""
    parts = {(t.claim, t.condition): len(t.parts) for t in judgement.tests}
    rows = prr.judged_rows(judgement, lambda claim, condition: parts[(claim, condition)])
    for claim, (verdicts, label) in kn.charge_robustness(judgement.judged).items():
        rows.append(prr.across_row(claim, ACROSS_CHARGES, kn.CHARGES, verdicts, label))
    return prr.verdicts_table(rows, PLAN, (
        "Families: default (C1, C3 at 1 s; C2, C4 over the three budgets; node charge ×1), charge=0.5 and "
        "charge=2 (C1, C2), budget=0.25/1/4 (C1–C4 at that budget). supported: Holm p < 0.05; "
        "contradicted: Holm p opposite < 0.05; not supported: Holm p negligible < 0.05; else "
        "inconclusive. Across charges: robust (supported at ×0.5, ×1, ×2), charge-dependent (at some), "
        "supported at no charge, incomplete (not tested at every charge)."))


def ladder_table(ladders: Sequence[kn.Ladder]) -> Table:
    return prr.ladder_table(
        ladders, kn.ANCHOR, title="The ladder: Bradley–Terry ratings per budget (reported, not a claim)",
        notes=(f"Anchor {kn.ANCHOR} = 0; '{BLUE_SEAT}' is the first-move term (p1 is Blue; its games: every "
               "decided game of the budget). alphabeta×0.5 and ×2: alpha-beta at node charge ×0.5, ×2 (K3)."))


# ---------------------------------------------------------------------------------------------
# Figures


def ladder_figure(ladders: Sequence[kn.Ladder]) -> Figure | None:
    """One panel per budget: each agent's Elo with its 95 % bootstrap interval, the Blue seat last."""
    return prr.ladder_panels(ladders, kn.ANCHOR, columns=max(1, len(ladders)),
                             title="The ladder: Bradley–Terry ratings, 95% intervals from a bootstrap of the pairs")


# ---------------------------------------------------------------------------------------------
# The whole report


@dataclass(frozen=True)
class KnowledgeReport:
    """Everything ``boopexp knowledge`` writes."""

    tables: tuple[Table, ...]
    judgement: kn.Judgement
    ladders: tuple[kn.Ladder, ...]
    notes: tuple[str, ...]

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)


def analyse(study: kn.KnowledgeGames, *, resamples: int | None = None) -> KnowledgeReport:
    """Every table and figure datum of the study from its games (pure; nothing written)."""
    pairs = kn.pair_frame(study)
    judgement = kn.judge_all(pairs)
    ladders: list[kn.Ladder] = []
    notes: list[str] = []
    notes += prr.partial_notes(study)
    notes += judgement.untested
    for t in kn.BUDGETS:
        lad = kn.ladder(study, t, resamples=kn.RESAMPLES if resamples is None else resamples)
        if isinstance(lad, str):
            notes.append(lad)
        else:
            ladders.append(lad)
            if (note := prr.corrected_note(lad)) is not None:
                notes.append(note)
    pairings = pairings_table(pairs)
    for r in pairings.data.to_dict("records"):
        where = f"{r['store']}: {r['agent']} vs {r['opponent']} at {r['budget']:g} s" + (
            "" if is_missing(r["charge"]) else f", {kn.charge_label(r['charge'])}")
        if r["flagged"]:
            notes.append(f"{where}: {r['left_out']} of {r['pairs']} pairs ({100 * r['left_out_share']:.1f}%) left "
                         "out for a game without a winner (more than 5 %).")
        if r["unpaired"]:
            notes.append(f"{where}: {r['unpaired']} game(s) whose partner is not stored yet (not in any test).")
    tables = [claims_table(judgement.tests), verdicts_table(judgement), pairings]
    if ladders:
        tables.append(ladder_table(ladders))
    return KnowledgeReport(tables=tuple(tables), judgement=judgement, ladders=tuple(ladders), notes=tuple(notes))


OUTPUT_CSV = ("claims", "verdicts", "pairings", "ladder")
FIGURES = ("ladder", "forest")


def write_report(report: KnowledgeReport, out_dir: Path | str) -> list[Path]:
    """Write the CSVs, knowledge-tables.md (every table, the notes) and the figures into ``out_dir``.

    A figure without data is not drawn and an older file of it is removed (it would contradict the
    tables beside it).

    Raises:
        StoreError: out_dir cannot be written.
    """
    return studies_report.write_report(Path(out_dir), report.tables, OUTPUT_CSV, "knowledge", report.notes,
                                       _figures(report), drop_stale=True)


def _figures(report: KnowledgeReport) -> Iterator[tuple[str, Figure | None]]:
    """The ladder and the forest plot, each drawn when reached."""
    yield "ladder", ladder_figure(report.ladders)
    yield "forest", forest_figure(report.table("claims").data)


def rebuild(root: Path | str, out_dir: Path | str | None = None, *,
            resamples: int | None = None) -> tuple[KnowledgeReport, list[Path]]:
    """Read the study under ``root``, analyse it and write everything into ``out_dir`` (default: root)."""
    study = kn.load_study(root)
    report = analyse(study, resamples=resamples)
    return report, write_report(report, Path(root) if out_dir is None else out_dir)
