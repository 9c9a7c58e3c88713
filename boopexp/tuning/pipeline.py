"""Search, confirmation and outputs as one library call (what ``boopexp tune`` runs)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from boopexp.experiments.pool import FailedGame, PoolOptions
from boopexp.tuning.config import TuneConfig
from boopexp.tuning.confirm import ConfirmReport, run_confirmation
from boopexp.tuning.outputs import summary_line, write_outputs, write_settings
from boopexp.tuning.search import SearchReport, TuneProgress, run_search


@dataclass(frozen=True)
class TuneReport:
    """The result of :func:`run_tuning`.

    Attributes:
        search: the trials.
        confirm: the confirmation (None if the search did not complete).
        paths: the output files written.
        summary: the summary line.
    """

    out_dir: Path
    search: SearchReport
    confirm: ConfirmReport | None
    paths: tuple[Path, ...]
    summary: str

    @property
    def interrupted(self) -> bool:
        return self.search.interrupted or (self.confirm is not None and self.confirm.interrupted)

    @property
    def stopped_by(self) -> int | None:
        """The signal that stopped the tuning (SIGINT or SIGTERM), or None."""
        return self.search.stopped_by or (self.confirm.stopped_by if self.confirm is not None else None)

    @property
    def failed(self) -> tuple[FailedGame, ...]:
        return self.search.failed + (self.confirm.failed if self.confirm is not None else ())

    @property
    def complete(self) -> bool:
        return self.search.complete and self.confirm is not None and self.confirm.complete


def run_tuning(config: TuneConfig, out_dir: str | Path, pool: PoolOptions | None = None, *,
               progress: TuneProgress | None = None) -> TuneReport:
    """Tune ``config.agent`` in ``out_dir`` (resuming), confirm the best candidates, write the outputs.

    Args:
        pool: how games are played (:func:`boopexp.experiments.runner.run_plan`).
        progress: receives run and trial events.

    Raises:
        ConfigError: the folder's study was made with other search settings.
        StoreError: a store cannot be read, or another process tunes into ``out_dir``.
    """
    progress = progress or TuneProgress()
    out = Path(out_dir)
    search = run_search(config, out, pool, progress=progress)
    write_settings(config, out)
    confirm = None
    if search.complete:
        confirm = run_confirmation(config, search.trials, out, pool, progress=progress)
    paths = write_outputs(config, search, confirm if confirm is not None and confirm.complete else None, out)
    return TuneReport(out, search, confirm, tuple(paths), summary_line(config, search, confirm))
