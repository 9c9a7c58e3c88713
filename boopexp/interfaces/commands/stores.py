"""``boopexp seal``, ``boopexp migrate`` and ``boopexp merge``: compact a results folder's store,
combine the stores of one config's shards (docs/runner.md, docs/cluster.md).

The library does the work (:func:`boopexp.experiments.store.seal`, :func:`boopexp.experiments.store.migrate`,
:func:`boopexp.experiments.store.merge`); these commands check the folders, call it and say what changed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

import click

from boopexp.errors import ConfigError
from boopexp.interfaces.commands import FOLDER


class _Report(Protocol):
    @property
    def moved_tail(self) -> Path | None: ...


R = TypeVar("R", bound=_Report)
_DIR = click.argument("directory", metavar="DIR", type=FOLDER)


def _maintain(directory: Path, operation: Callable[[Path], R]) -> R:
    """Run ``operation`` (``store.seal`` or ``store.migrate``) on a results folder that exists, and
    warn if it set a truncated last line of the log aside."""
    if not directory.is_dir():
        raise ConfigError(f"no results folder {str(directory)!r}")
    report = operation(directory)
    if report.moved_tail is not None:
        click.echo(f"Warning: a truncated last line of the log was moved to {report.moved_tail}", err=True)
    return report


@click.command("seal")
@_DIR
def seal(directory: Path) -> None:
    """Move the finished games of DIR/games.jsonl into a new compressed segment (crash-safe)."""
    from boopexp.experiments.store import seal as seal_store

    report = _maintain(directory, seal_store)
    if report.segment is None:
        click.echo(f"{directory}: no game to seal" + (f" ({report.dropped} already sealed)" if report.dropped else ""))
    else:
        extra = f"; {report.dropped} copies of sealed games dropped" if report.dropped else ""
        into = report.segment.name + (f" .. {report.segments[-1].name}" if len(report.segments) > 1 else "")
        click.echo(f"{directory}: {report.games} games sealed into {into}{extra}")


@click.command("migrate")
@_DIR
def migrate(directory: Path) -> None:
    """Rewrite every game of DIR in the current record schema into one sealed segment."""
    from boopexp.experiments.store import migrate as migrate_store

    report = _maintain(directory, migrate_store)
    if not report.changed:
        click.echo(f"{directory}: already migrated ({report.games} games in {report.segment.name})")
        return
    size = report.segment.stat().st_size
    click.echo(f"{directory}: {report.games} games in {report.segment.name} "
               f"({size:,} bytes, {size / max(report.games, 1):,.0f} bytes/game)")


@click.command("merge")
@click.argument("directories", metavar="DIR...", nargs=-1, required=True,
                type=FOLDER)
@click.option("--out", "out", required=True, type=FOLDER,
              help="The merged store (new, or an earlier merge's: only the games it lacks are added).")
def merge(directories: tuple[Path, ...], out: Path) -> None:
    """Combine the stores of one config (the shards of run --shard I/N) into --out: every game once;
    idempotent; two different copies of one game, or stores of other settings, are refused."""
    from boopexp.experiments.store import merge as merge_stores

    for directory in directories:
        if not directory.is_dir():
            raise ConfigError(f"no results folder {str(directory)!r}")
    report = merge_stores(directories, out)
    if not report.added:
        click.echo(f"{out}: nothing to merge, every game of the {len(directories)} store(s) is there "
                   f"({report.games} games)")
    else:
        assert report.segment is not None
        into = report.segment.name + (f" .. {report.segments[-1].name}" if len(report.segments) > 1 else "")
        click.echo(f"{out}: {report.added} games merged from {len(directories)} store(s) into "
                   f"{into} ({report.games} games in all)")
