"""``boopexp tune``: tune an agent's parameters with Optuna, confirm the best candidates, write the outputs.

The library does the work (:mod:`boopexp.tuning`); this module parses options, shows progress
and prints the summary. Exit codes as ``boopexp run``: 0 done, 1 some games failed, 2 usage or
config error, 130/143 stopped by SIGINT/SIGTERM (rerun the same command to resume).
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from boopexp.interfaces.commands.runs import (
    EXIT_FAILED,
    EXIT_SIGNAL_BASE,
    RESULTS_DIR,
    BarProgress,
    LineProgress,
    QuietProgress,
    new_progress,
    pool_options,
    resumable,
    resume_command,
    run_options,
)


@click.command("tune")
@click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False, path_type=Path))
@run_options
def tune(config_path: Path, out: Path | None, jobs: int | None, backend: str, scheduler: str | None,
         slurm: bool, quiet: bool, dry_run: bool) -> None:
    """Tune the agent of CONFIG's tune: section (Optuna TPE), then confirm the best on fresh games.

    Results (study, per-trial stores, trials.csv, tuning.png, confirmed.yaml) go to
    results/<name>/; rerun the same command to resume a stopped tuning.
    """
    from boopexp.tuning.config import load_tune_config
    from boopexp.tuning.pipeline import run_tuning

    config = load_tune_config(config_path)
    pool = pool_options(jobs, backend, scheduler, slurm)  # checked before anything is written
    out_dir = out if out is not None else RESULTS_DIR / config.name
    if dry_run:
        from boopexp.tuning.search import describe

        for line in describe(config, out_dir):
            click.echo(line)
        return
    from boopexp.experiments.pool import release_pool
    from boopexp.play.starts import check_suite

    settings = config.experiment.settings
    check_suite(settings.openings, settings.game)  # a suite's moves checked against the rules before any game
    progress = new_progress(quiet, _QuietTune, _BarTune, _LineTune)
    try:
        with resumable(scheduler):
            report = run_tuning(config, out_dir, pool, progress=progress)
    finally:
        release_pool()  # the trials' pool, kept from one trial to the next (a --slurm cluster: its jobs)
    if report.failed:
        click.echo(f"{len(report.failed)} game(s) failed (not stored; rerun the same command to retry them):", err=True)
        for outcome in report.failed:
            click.echo(f"  {outcome.task.pairing} #{outcome.task.game_index}: {outcome.error}", err=True)
    if report.interrupted:
        click.echo(f"Interrupted: finished games and trials are stored in {out_dir}. To resume, run:\n"
                   f"  {resume_command()}", err=True)
    click.echo(report.summary)
    click.echo(f"Outputs in {out_dir}: {', '.join(p.name for p in report.paths)}")
    if report.interrupted:
        sys.exit(EXIT_SIGNAL_BASE + (report.stopped_by or signal.SIGINT))
    if report.failed:
        sys.exit(EXIT_FAILED)


def _params_text(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items())


class _TuneEvents:
    """The trial events, written like the run's notices (mixed into each progress style)."""

    def stage(self, text: str) -> None:
        if not self.quiet:  # type: ignore[attr-defined]
            self._write(text)  # type: ignore[attr-defined]

    def trial_start(self, slot: int, wanted: int, params: Mapping[str, Any]) -> None:
        if not self.quiet:  # type: ignore[attr-defined]
            self._write(f"Trial {slot} ({slot + 1} of {wanted}): {_params_text(params)}")  # type: ignore[attr-defined]

    def trial_end(self, result: Any, best: Any) -> None:
        if not self.quiet:  # type: ignore[attr-defined]
            g = result.games
            self._write(  # type: ignore[attr-defined]
                f"Trial {result.slot}: score {result.objective:.3f} ({g.wins}-{g.losses}"
                f"{f', {g.no_winner} without winner' if g.no_winner else ''}); "
                f"best so far {best.objective:.3f} (trial {best.slot})"
            )


class _QuietTune(_TuneEvents, QuietProgress):
    pass


class _LineTune(_TuneEvents, LineProgress):
    pass


class _BarTune(_TuneEvents, BarProgress):
    pass
