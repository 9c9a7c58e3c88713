"""``boopexp robustness``, ``boopexp knowledge``, ``boopexp generality``, ``boopexp seed-games``: a
pre-registered study's claims and files from its stores.

One command per study (the study itself is a folder of ``boopexp/studies/``); each reads the
study's folder (default results/<study>), writes its files and prints what :func:`_report` prints:
the store's warnings and the report's notes on stderr, then the summary lines.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import click

from boopexp.interfaces.commands import FOLDER


def _report(rebuild: Callable[[], tuple[Any, list[Path]]]) -> tuple[Any, int]:
    """Run a study's ``rebuild`` with the stores' warnings and the report's ``notes`` echoed on
    stderr; the report and the number of files written."""
    from boopexp.analysis import ReportWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReportWarning)
        try:
            report, paths = rebuild()
        finally:
            for w in caught:
                click.echo(f"Warning: {w.message}", err=True)
    for note in report.notes:
        click.echo(f"Note: {note}", err=True)
    return report, len(paths)


def _counts(verdicts: Iterable[str]) -> str:
    """``2 inconclusive, 12 supported``: each verdict's number, in the verdicts' order."""
    counts: dict[str, int] = {}
    for verdict in verdicts:
        counts[verdict] = counts.get(verdict, 0) + 1
    return ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))


@click.command("robustness")
@click.argument("root", required=False, default="results/robustness", type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=FOLDER, default=None,
              help="Folder for claims.csv, the tables and figures (default: ROOT).")
@click.option("--reference", "reference_root", type=FOLDER, default=None,
              help="Folder holding the committed ablation, mirror, ablation-cpu and mirror-cpu runs "
                   "(default: ROOT's parent).")
def robustness(root: Path, out_dir: Path | None, reference_root: Path | None) -> None:
    """Test the paper's claims on the robustness study's stores (docs/robustness-plan.md).

    Reads ROOT/{d1,d2,d3,d4-vanilla,d4-se,d4-bias} (default results/robustness) and writes
    claims.csv, the other tables (CSV and robustness-tables.md) and the ladder, sensitivity and
    ratings figures. Missing or incomplete stores are reported; their claims are left out. A
    folder holding none of the six stores is refused (exit 2, nothing written).
    """
    from boopexp.studies.robustness.report import rebuild

    report, written = _report(lambda: rebuild(root, out_dir, reference_root))
    click.echo(f"{len(report.claims.data)} claim rows: " + _counts(report.claims.data["verdict"]))
    click.echo(f"Wrote {written} files to {out_dir or root}/")


@click.command("knowledge")
@click.argument("root", required=False, default="results/knowledge", type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=FOLDER, default=None,
              help="Folder for the CSVs, knowledge-tables.md and the figures (default: ROOT).")
def knowledge(root: Path, out_dir: Path | None) -> None:
    """Test the knowledge study's claims on its stores (docs/knowledge-plan.md).

    Reads ROOT/{claims,charge-co,charge-vanilla,ladder-1,ladder-0.25,ladder-4} (default
    results/knowledge), forms the pairs (game i of both orders, one opening) and writes
    pairings.csv, claims.csv, verdicts.csv, ladder.csv, knowledge-tables.md and the ladder and
    forest figures. Missing or incomplete stores make a partial analysis, labelled as such; a
    folder holding none of the six stores is refused (exit 2, nothing written).
    """
    from boopexp.studies.knowledge.report import ACROSS_CHARGES, rebuild

    report, written = _report(lambda: rebuild(root, out_dir))
    verdicts = report.table("verdicts").data
    tested = verdicts[verdicts["condition"] != ACROSS_CHARGES]
    partial = any(n.startswith("PARTIAL ANALYSIS") for n in report.notes)
    click.echo(("PARTIAL: " if partial else "") + f"{len(tested)} claim tests: "
               + (_counts(tested["verdict"]) or "none yet"))
    click.echo(f"Wrote {written} files to {out_dir or root}/")


@click.command("generality")
@click.argument("root", required=False, default="results/generality", type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=FOLDER, default=None,
              help="Folder for the CSVs, generality-tables.md and the figures (default: ROOT).")
def generality(root: Path, out_dir: Path | None) -> None:
    """Test the generality study's claims on its stores (docs/generality-plan.md).

    Reads ROOT/<game>-{claims,budgets,costs,mirror} for boop, connect-four, pentago-swap and
    colosseum (default results/generality), forms the pairs (game i of both orders, one opening)
    and writes games.csv (the claims per game), claims.csv, verdicts.csv, pairings.csv,
    ladder.csv, gain.csv, first-move.csv, generality-tables.md and the ladder, gain and forest
    figures. Missing or incomplete stores make a partial analysis, labelled as such; a folder
    holding none of the stores is refused (exit 2, nothing written).
    """
    from boopexp.studies.generality.report import ACROSS_COSTS, rebuild

    report, written = _report(lambda: rebuild(root, out_dir))
    verdicts = report.table("verdicts").data
    tested = verdicts[~verdicts["condition"].str.endswith(ACROSS_COSTS)]
    partial = any(n.startswith("PARTIAL ANALYSIS") for n in report.notes)
    click.echo(("PARTIAL: " if partial else "") + f"{len(tested)} claim tests: "
               + (_counts(tested["verdict"]) or "none yet"))
    click.echo(f"Wrote {written} files to {out_dir or root}/")


@click.command("seed-games")
@click.argument("root", required=False, default="results/seed-games", type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=FOLDER, default=None,
              help="Folder for rows.csv and seed-games-tables.md (default: ROOT).")
def seed_games(root: Path, out_dir: Path | None) -> None:
    """Test the seed reports' rows on their stores (docs/seed-games.md).

    Reads ROOT/{pentago-swap,colosseum} (default results/seed-games, each from
    configs/seed-games/<store>.yaml) and writes rows.csv and seed-games-tables.md: per row of the
    Pentago-Swap and Colosseum Survival reports our rate, its 95% interval, the report's number,
    the exact test's p and the verdict. A row whose store is missing is 'not run'; a folder
    holding neither store is refused (exit 2, nothing written).
    """
    from boopexp.studies.seed_games.report import rebuild

    report, written = _report(lambda: rebuild(root, out_dir))
    click.echo(f"{len(report.results)} rows: " + _counts(r.verdict for r in report.results))
    click.echo(f"Wrote {written} files to {out_dir or root}/")
