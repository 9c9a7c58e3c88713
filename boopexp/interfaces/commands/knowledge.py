"""``boopexp knowledge``: the knowledge study's pairs, claims, verdicts, ladder and figures from its stores."""

from __future__ import annotations

import warnings
from pathlib import Path

import click

DEFAULT_ROOT = "results/knowledge"


@click.command("knowledge")
@click.argument("root", required=False, default=DEFAULT_ROOT, type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the CSVs, knowledge-tables.md and the figures (default: ROOT).")
def knowledge(root: Path, out_dir: Path | None) -> None:
    """Test the knowledge study's claims on its stores (docs/knowledge-plan.md).

    Reads ROOT/{claims,charge-co,charge-vanilla,ladder-1,ladder-0.25,ladder-4} (default
    results/knowledge), forms the pairs (game i of both orders, one opening) and writes
    pairings.csv, claims.csv, verdicts.csv, ladder.csv, knowledge-tables.md and the ladder and
    forest figures. Missing or incomplete stores make a partial analysis, labelled as such; a
    folder holding none of the six stores is refused (exit 2, nothing written).
    """
    from boopexp.analysis import ReportWarning
    from boopexp.analysis.knowledge_report import rebuild

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReportWarning)
        try:
            report, paths = rebuild(root, out_dir)
        finally:
            for w in caught:
                click.echo(f"Warning: {w.message}", err=True)
    for note in report.notes:
        click.echo(f"Note: {note}", err=True)
    verdicts = report.table("verdicts").data
    tested = verdicts[verdicts["condition"] != "across charges"]
    counts: dict[str, int] = {}
    for verdict in tested["verdict"]:
        counts[verdict] = counts.get(verdict, 0) + 1
    partial = any(n.startswith("PARTIAL ANALYSIS") for n in report.notes)
    click.echo(("PARTIAL: " if partial else "") + f"{len(tested)} claim tests: "
               + (", ".join(f"{n} {v}" for v, n in sorted(counts.items())) or "none yet"))
    click.echo(f"Wrote {len(paths)} files to {out_dir or root}/")
