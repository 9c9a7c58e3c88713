"""``boopexp tables``: rebuild the paper's tables and figures from raw game records."""

from __future__ import annotations

import warnings
from pathlib import Path

import click

from boopexp.analysis.defaults import DEFAULT_OUT_DIR, DEFAULT_RESULTS_DIRS
from boopexp.interfaces.commands import FOLDER, check_out_apart


@click.command("tables")
@click.argument("results_dirs", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--out",
    "out_dir",
    type=FOLDER,
    default=DEFAULT_OUT_DIR,
    show_default=True,
    help="Folder for the tables (.md/.csv/.tex) and figures (.png/.svg).",
)
@click.option("--brief", is_flag=True,
              help="Print the tables without the notes under them (what the columns and tests are: in the .md files).")
def tables(results_dirs: tuple[Path, ...], out_dir: Path, brief: bool) -> None:
    """Build Tables I and II, telemetry and pairwise tables from RESULTS_DIR/games.jsonl.

    RESULTS_DIR defaults to results/ablation and results/mirror. Prints Tables I and II as
    Markdown (those with rows; for swept games the sweep table), then the files written, on one line.
    """
    from boopexp.analysis import ReportWarning, build_report  # pandas and matplotlib: only when building

    dirs = list(results_dirs) or [Path(d) for d in DEFAULT_RESULTS_DIRS]
    check_out_apart(out_dir, dirs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReportWarning)
        try:
            report = build_report(dirs, out_dir)
        finally:
            # Shown even when the build fails: a skipped directory may explain the error.
            for w in caught:
                if issubclass(w.category, ReportWarning):
                    click.echo(f"Warning: {w.message}", err=True)
                else:
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    # The tables these games fill: Tables I/II when they have rows, the sweep table of a sweep
    # (whose pairings are no paper's); the paper's two, empty, only when nothing else would show.
    shown = [name for name in ("table1", "table2") if report.tables[name].rows]
    shown += ["sweep"] if "sweep" in report.tables else []
    shown = shown or ["table1", "table2"]
    for name in shown:
        click.echo(report.markdown(name, notes=not brief))
    if brief:
        click.echo("Notes (what the columns and tests are): "
                   + ", ".join(str(report.out_dir / f"{name}.md") for name in shown))
    click.echo(f"Wrote {len(report.paths)} files to {report.out_dir}/: " + ", ".join(p.name for p in report.paths))
