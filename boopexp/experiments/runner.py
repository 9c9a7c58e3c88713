"""``run_plan``: a plan's missing games played through the pool into the store, counted
(``tally.RunTally``), reported (``RunReport``, ``RunEvents``).

The games the store lacks are played by the pool (:mod:`boopexp.experiments.pool`; with
``sprt:``, in the rounds of :mod:`boopexp.experiments.sprt_rounds`); the parent process alone
writes the store, one fsync'ed line per finished game, in completion order, and counts it. A
game's seed depends only on its identity, so ``--jobs 1`` (in-process, no pool) and any pool
produce the same records. Ctrl-C and SIGTERM stop the run with the finished games stored
(:mod:`boopexp.experiments.interrupts`). See docs/runner.md and docs/cluster.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from boopexp.errors import LostResourceError
from boopexp.experiments.config import ExperimentConfig, PlannedPairing
from boopexp.experiments.interrupts import Interrupts
from boopexp.experiments.pool import FailedGame, GameOutcome, PlayedGame, PoolOptions, iter_outcomes
from boopexp.experiments.scheduler import probe_scheduler, probe_slurm
from boopexp.experiments.sprt import plan_tests
from boopexp.experiments.sprt_rounds import sprt_outcomes
from boopexp.experiments.store import GameStore
from boopexp.experiments.tally import PairingScore, RunTally
from boopexp.play import warmup

if TYPE_CHECKING:
    from boopexp.experiments.store import OutcomeColumns, StoreWriter


@dataclass(frozen=True)
class RunReport:
    """The result of :func:`run_plan`.

    Attributes:
        out_dir: the store folder.
        scores: per planned pairing, games done and wins (previous runs included).
        planned: number of games in the plan.
        skipped: games already in the store before this run.
        played: games played and stored by this run.
        failed: games that could not be played (not stored; a rerun tries them again).
        interrupted: the run was stopped by Ctrl-C or SIGTERM (finished games are stored).
        stopped_by: the signal that stopped it (``signal.SIGINT`` or ``signal.SIGTERM``), or None.
        sprt: with ``sprt:`` in the config, each tested pairing's test after this run
            (:class:`boopexp.experiments.sprt.PairingTest`); empty otherwise.
        forfeits: forfeited games of the plan (previous runs included) per forfeiting agent,
            ``{agent: {termination: games}}`` (plugin agents: docs/agents.md).
    """

    out_dir: Path
    scores: tuple[PairingScore, ...]
    planned: int
    skipped: int
    played: int
    failed: tuple[FailedGame, ...] = ()
    interrupted: bool = False
    stopped_by: int | None = None
    sprt: tuple[Any, ...] = ()
    forfeits: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)

    @classmethod
    def of_run(cls, out_dir: Path, tally: RunTally, failed: tuple[FailedGame, ...], interrupts: Interrupts,
               sprt: tuple[Any, ...]) -> RunReport:
        """The report of a run that counted its games in ``tally`` and was stopped, or not, by ``interrupts``."""
        stopped = interrupts.stopped or interrupts.late
        return cls(out_dir=out_dir, scores=tally.scores, planned=tally.planned, skipped=tally.skipped,
                   played=tally.played, failed=failed, interrupted=stopped,
                   stopped_by=(interrupts.signum or signal.SIGINT) if stopped else None, sprt=sprt,
                   forfeits=tally.forfeits)

    @property
    def games_path(self) -> Path:
        return GameStore(self.out_dir).games_path

    @property
    def complete(self) -> bool:
        """Every planned game is in the store, or its pairing's SPRT has decided."""
        stopped = {p for t in self.sprt if t.state.decided for p in t.pairings}
        return all(s.done == s.planned or s.pairing in stopped for s in self.scores)


class RunEvents(Protocol):
    """What :func:`run_plan` reports to: :class:`Progress` or any class with its four methods
    (the CLI's progress classes have them without importing this module)."""

    def message(self, text: str, warning: bool = True) -> None: ...

    def start(self, planned: int, skipped: int, scores: Sequence[PairingScore]) -> None: ...

    def game(self, outcome: GameOutcome, finished: int, planned: int, scores: Sequence[PairingScore]) -> None: ...

    def close(self) -> None: ...


class Progress:
    """Receives the events of a run; this base class ignores them (subclass to display)."""

    def message(self, text: str, warning: bool = True) -> None:
        """A warning, or a notice if ``warning`` is False (one line)."""

    def start(self, planned: int, skipped: int, scores: Sequence[PairingScore]) -> None:
        """The run begins; ``skipped`` games of ``planned`` are already stored."""

    def game(self, outcome: GameOutcome, finished: int, planned: int, scores: Sequence[PairingScore]) -> None:
        """A game finished (stored) or failed; ``finished`` counts stored and failed games."""

    def close(self) -> None:
        """The run is over (normally, by failure or interrupted)."""


def run_plan(config: ExperimentConfig, plan: Sequence[PlannedPairing], out_dir: str | Path,
             pool: PoolOptions | None = None, *, progress: RunEvents | None = None,
             pairings: Sequence[str] | None = None, interrupts: Interrupts | None = None) -> RunReport:
    """Play the games of ``plan`` that the store in ``out_dir`` lacks, storing each as it finishes.

    Args:
        config: the experiment (its settings make the games).
        plan: the pairings and game counts to complete (:meth:`ExperimentConfig.plan`).
        out_dir: the store folder (created if needed).
        pool: how the games are played (default: in this process); at most one worker per game
            to play is started.
        progress: receives warnings, notices (the engine compiled first, the dask dashboard) and
            one event per game.
        pairings: play only these pairing strings of the plan (default: all); the whole plan is
            still saved in config.yaml.
        interrupts: the caller's :class:`Interrupts`, already entered (the command line's, which
            spans the pool's shutdown and the summary too); it is left settled once the games are
            over or stopped (:meth:`Interrupts.settle`): a later signal is the caller's to report.
            Default: run_plan's own, for the games only.

    Returns:
        The report; Ctrl-C ends the run early with ``interrupted=True`` (stored games kept).

    Raises:
        StoreError: the store is corrupt (nothing is written) or locked by another run.
        LostResourceError: the dask scheduler went away mid-run; the message says how many games
            are stored (every game finished before the loss).
    """
    progress, pool, plan = progress or Progress(), pool or PoolOptions(), tuple(plan)
    own = interrupts is None
    interrupts = Interrupts() if interrupts is None else interrupts
    _probe_cluster(pool)  # an unreachable cluster is reported before anything is written
    store = GameStore(out_dir)
    with store.open() as writer:
        _opened(store, writer, config.resolved(plan), progress)
        selected = tuple(p for p in plan if pairings is None or p.pairing in pairings)
        tally = RunTally([p.entry() for p in selected], writer.stored, sprt=config.sprt is not None)
        pool = pool.for_games(tally.to_play, progress.message)
        outcomes = _outcomes(config, selected, writer.stored, tally, pool, progress.message)
        failed: list[FailedGame] = []
        try:
            with interrupts if own else contextlib.nullcontext():  # a Ctrl-C from here on is counted
                _compile_engine(selected, tally, pool, progress)
                progress.start(tally.planned, tally.skipped, tally.scores)
                for outcome in outcomes:
                    if isinstance(outcome, PlayedGame):
                        # Storing a game and counting it is one step: a Ctrl-C/SIGTERM arriving
                        # here is held until both are done, so the summary counts exactly the
                        # games on disk and no line is cut short by the interrupt.
                        with interrupts.held():
                            writer.append(outcome.record)
                            tally.add(outcome.record)
                    elif interrupts.signum is not None:
                        raise KeyboardInterrupt  # a game cut by the signal (the engine's compile, say)
                    else:
                        failed.append(outcome)
                    progress.game(outcome, tally.done + len(failed), tally.planned, tally.scores)
                # The games are over: a signal from here on (the pool shutting down, the summary,
                # the exit) is recorded, and the run reported interrupted (interrupts.late).
                interrupts.settle()
        except KeyboardInterrupt:
            interrupts.stopped = True
            interrupts.settle()  # a second Ctrl-C while the pool stops is the same stop
        except LostResourceError as exc:
            interrupts.settle()
            raise LostResourceError(f"{exc}; {tally.done} of {tally.planned} games are stored in "
                                    f"{store.games_path}") from None
        except Exception:
            interrupts.settle()
            if interrupts.signum is None:
                raise
            interrupts.stopped = True  # numba, cut by the signal while compiling the engine, fails after it
        finally:
            with contextlib.suppress(KeyboardInterrupt):
                outcomes.close()  # stops the pool: games in flight are dropped, not stored
            progress.close()
    return RunReport.of_run(Path(out_dir), tally, tuple(failed), interrupts,
                            _sprt_tests(config, selected, tally.records))


def _probe_cluster(pool: PoolOptions) -> None:
    """Reach the dask scheduler of ``--scheduler``, or ask Slurm whether it takes the worker job of
    ``--slurm`` (a bad partition, account, limit): one line before anything is written."""
    if pool.scheduler:
        probe_scheduler(pool.scheduler)
    elif pool.slurm:
        probe_slurm()


def _opened(store: GameStore, writer: StoreWriter, resolved: dict[str, Any], progress: RunEvents) -> None:
    """Say what opening the store found (its warnings, a truncated tail set aside) and save the
    run's settings (config.yaml; the other settings' file kept, said in a notice)."""
    for text in writer.stored.scan.warnings():
        progress.message(text)
    if writer.moved_tail is not None:
        progress.message(f"the truncated bytes were moved to {writer.moved_tail}", True)
    backup = store.write_config(resolved)
    if backup is not None:
        progress.message(f"{store.config_path} was written by other settings; the old one is kept as {backup}", False)


def _outcomes(config: ExperimentConfig, selected: tuple[PlannedPairing, ...], stored: OutcomeColumns, tally: RunTally,
              pool: PoolOptions, say: Callable[[str, bool], None]) -> Generator[GameOutcome, None, None]:
    """The outcomes of the games of ``selected`` that ``stored`` lacks: the pool's (in SPRT rounds
    with ``sprt:``), or none for a finished plan (not even the engine is imported: a second at any size)."""
    done = stored.keys()
    # Lazily: a plan of 10^9 games costs nothing until its games are played; a stored game's
    # index is skipped on the arrays of stored indices, before a task (and its seed) is made.
    todo = config.iter_tasks(selected, lambda p: done.missing(p.config_hash, p.pairing, p.indices()))
    if not tally.to_play:
        return _no_games()
    if config.sprt is None:
        return iter_outcomes(todo, pool, say)
    return sprt_outcomes(config.sprt, selected, todo, tuple(tally.records), pool, say)


def _compile_engine(selected: Sequence[PlannedPairing], tally: RunTally, pool: PoolOptions,
                    progress: RunEvents) -> None:
    """Before the clock starts (the progress's rate and ETA, the first game's seconds), compile the
    engine the games need if they are played here: the pool's workers load the kernels from numba's cache."""
    if tally.to_play and pool.play is None and not pool.remote:
        specs = [spec for p in selected for spec in (p.p1_spec, p.p2_spec)]
        warmup.compile_engine(lambda text: progress.message(text, False), {spec.kind for spec in specs},
                              [spec.mcts for spec in specs])


def _no_games() -> Generator[GameOutcome, None, None]:
    """The outcomes of a run with nothing to play."""
    yield from ()


def _sprt_tests(config: ExperimentConfig, plan: Sequence[PlannedPairing],
                records: Sequence[Mapping[str, Any]]) -> tuple:
    """Each tested pairing's SPRT from the stored records (empty without ``sprt:``)."""
    return () if config.sprt is None else plan_tests(config.sprt, plan, records)
