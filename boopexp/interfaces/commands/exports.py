"""``boopexp export`` and ``boopexp import``: games out of results folders as a PGN-like text file
or a one-row-per-game CSV, and a text file's games back into a store (docs/protocol.md, "Export").

The library does the work (:mod:`boopexp.experiments.export`); these commands say what it did.
"""

from __future__ import annotations

from pathlib import Path

import click

from boopexp.interfaces.commands import FOLDER


@click.command("export")
@click.argument("directories", metavar="DIR...", nargs=-1, required=True,
                type=FOLDER)
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              help="The file written (replaced whole if it exists; a link is written through); - is standard "
                   "output.")
@click.option("--format", "fmt", type=click.Choice(["text", "csv"]), default="text", show_default=True,
              help="text: headers and moves per game, readable back by boopexp import; csv: one row per game.")
def export_games(directories: tuple[Path, ...], out: Path, fmt: str) -> None:
    """Write every game of the stores DIR... to --out, as text (PGN-like) or CSV."""
    from boopexp.experiments.export import export_games as export
    from boopexp.experiments.store import writes_standard_output

    report = export(directories, out, fmt)
    # the games went to standard output: the line that says so goes to stderr
    click.echo(f"{out}: {report.games} games from {report.stores} store(s) ({fmt})", err=writes_standard_output(out))


@click.command("import")
@click.argument("file", metavar="FILE", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out", required=True, type=FOLDER,
              help="The store the games are added to (new, or one that lacks some of them).")
@click.option("--search/--no-search", default=True, show_default=True,
              help="Also play each device- or iterations-budget game of the project's agents again by search "
                   "from its settings and seed, as replay --search (every game is played through the rules).")
def import_games(file: Path, out: Path, search: bool) -> None:
    """Add the games of FILE (written by boopexp export --format text) to the store --out: each game
    once, played through the rules (and again by search) first; a game that does not replay, a
    different game under a stored game's identity, or a malformed FILE, is refused with nothing
    written."""
    from boopexp.experiments.export import import_games as import_file

    report = import_file(file, out, search)
    click.echo(f"{out}: {report.added} games imported from {file} "
               f"({report.games - report.added} already there; {report.searched} played again by search)")
