"""``boopexp robustness``: the robustness study's claims, tables and figures from its stores."""

from __future__ import annotations

import warnings
from pathlib import Path

import click

DEFAULT_ROOT = "results/robustness"


@click.command("robustness")
@click.argument("root", required=False, default=DEFAULT_ROOT, type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for claims.csv, the tables and figures (default: ROOT).")
@click.option("--reference", "reference_root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder holding the committed ablation, mirror, ablation-cpu and mirror-cpu runs "
                   "(default: ROOT's parent).")
def robustness(root: Path, out_dir: Path | None, reference_root: Path | None) -> None:
    """Test the paper's claims on the robustness study's stores (docs/robustness-plan.md).

    Reads ROOT/{d1,d2,d3,d4-vanilla,d4-se,d4-bias} (default results/robustness) and writes
    claims.csv, the other tables (CSV and robustness-tables.md) and the ladder, sensitivity and
    ratings figures. Missing or incomplete stores are reported; their claims are left out. A
    folder holding none of the six stores is refused (exit 2, nothing written).
    """
    from boopexp.analysis import ReportWarning
    from boopexp.analysis.robustness_report import rebuild

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReportWarning)
        try:
            report, paths = rebuild(root, out_dir, reference_root)
        finally:
            for w in caught:
                click.echo(f"Warning: {w.message}", err=True)
    for note in report.notes:
        click.echo(f"Note: {note}", err=True)
    counts: dict[str, int] = {}
    for verdict in report.claims.data["verdict"]:
        counts[verdict] = counts.get(verdict, 0) + 1
    click.echo(f"{len(report.claims.data)} claim rows: "
               + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    click.echo(f"Wrote {len(paths)} files to {out_dir or root}/")
