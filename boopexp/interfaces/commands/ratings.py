"""``boopexp ratings``: Bradley–Terry (logistic Elo) ratings of every agent in some results stores."""

from __future__ import annotations

import warnings
from pathlib import Path

import click

from boopexp.interfaces.commands import FOLDER, check_out_apart

DEFAULT_OUT = "results/ratings"


@click.command("ratings")
@click.argument("results_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--anchor", default=None, metavar="AGENT",
              help="Agent rated 0 (default: random if it played, else the first agent).")
@click.option("--out", "out_dir", type=FOLDER, default=DEFAULT_OUT,
              show_default=True, help="Folder for ratings.csv, ratings.md and ratings.png/.svg.")
def ratings(results_dirs: tuple[Path, ...], anchor: str | None, out_dir: Path) -> None:
    """Fit Bradley–Terry ratings with a first-move term to every decided game in RESULTS_DIR....

    A draw counts as half a win for each side; games stopped at the ply cap (no winner) are left
    out and counted; 95% intervals from the likelihood's
    curvature. Prints the ratings as Markdown, then one line naming the files written to --out
    (default results/ratings/, under the current folder).
    """
    from boopexp.analysis import ReportWarning, load_results, render
    from boopexp.analysis.ratings_report import ratings_from_data, ratings_table, write_ratings

    check_out_apart(out_dir, results_dirs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReportWarning)
        try:
            data = load_results(list(results_dirs))
        finally:
            for w in caught:
                click.echo(f"Warning: {w.message}", err=True)
    fit = ratings_from_data(data, anchor=anchor)
    paths = write_ratings(fit, out_dir)
    click.echo(render.markdown_document([ratings_table(fit)]), nl=False)
    # One line, last: where the files went, and whether that was the default folder (relative to
    # the current one), so a user who gave no --out knows what appeared under results/.
    default = click.get_current_context().get_parameter_source("out_dir") == click.core.ParameterSource.DEFAULT
    click.echo(f"Wrote {len(paths)} files to {out_dir}/{' (the default --out)' if default else ''}: "
               + ", ".join(p.name for p in paths))
