"""Run a planned list of games into a store: :func:`run_plan`.

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
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from boopexp.errors import LostResourceError
from boopexp.experiments.config import ExperimentConfig, PlannedPairing
from boopexp.experiments.interrupts import Interrupts
from boopexp.experiments.pool import GameOutcome, PoolOptions, iter_outcomes
from boopexp.experiments.scheduler import probe_scheduler, probe_slurm
from boopexp.experiments.sprt import plan_tests
from boopexp.experiments.sprt_rounds import sprt_outcomes
from boopexp.experiments.store import GameStore
from boopexp.experiments.tally import PairingScore, forfeits, score_columns
from boopexp.play import warmup


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
    failed: tuple[GameOutcome, ...] = ()
    interrupted: bool = False
    stopped_by: int | None = None
    sprt: tuple[Any, ...] = ()
    forfeits: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)

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
    progress = progress or Progress()
    pool = pool or PoolOptions()
    plan = tuple(plan)
    if pool.scheduler:
        probe_scheduler(pool.scheduler)  # an unreachable cluster is reported before anything is written
    elif pool.slurm:
        probe_slurm()  # so is a worker job that Slurm refuses (a bad partition, account, limit)
    store = GameStore(out_dir)
    with store.open() as writer:
        stored = writer.stored  # the store's games as columns, read once under the lock
        for text in stored.scan.warnings():
            progress.message(text)
        if writer.moved_tail is not None:
            progress.message(f"the truncated bytes were moved to {writer.moved_tail}", True)
        backup = store.write_config(config.resolved(plan))
        if backup is not None:
            progress.message(
                f"{store.config_path} was written by other settings; the old one is kept as {backup}", False
            )

        selected = tuple(p for p in plan if pairings is None or p.pairing in pairings)
        done = stored.keys()
        # Lazily: a plan of 10^9 games costs nothing until its games are played; a stored game's
        # index is skipped on the arrays of stored indices, before a task (and its seed) is made.
        todo = config.iter_tasks(selected, lambda p: done.missing(p.config_hash, p.pairing, p.indices()))
        entries = [p.entry() for p in selected]
        # keyed like the games: a sweep plans the same pairing string once per point
        scores = {(s.config_hash, s.pairing): s for s in score_columns(entries, stored.table)[0]}
        forfeited = forfeits(entries, stored.forfeited())
        # The SPRT reads the outcomes of its pairings one by one (only a run with ``sprt:``).
        sprt_records = stored.records() if config.sprt is not None else []
        planned = sum(p.share for p in selected)
        skipped = sum(s.done for s in scores.values())
        to_play = planned - skipped
        pool = pool.for_games(to_play, progress.message)

        played = 0
        finished = skipped
        failed: list[GameOutcome] = []
        own = interrupts is None
        interrupts = Interrupts() if interrupts is None else interrupts
        lost: LostResourceError | None = None
        new_records: list[dict[str, Any]] = []
        outcomes: Generator[GameOutcome, None, None]
        if not to_play:  # a finished plan: not even the engine is imported (a second at any size)
            outcomes = _no_games()
        elif config.sprt is None:
            outcomes = iter_outcomes(todo, pool, progress.message)
        else:
            outcomes = sprt_outcomes(config.sprt, selected, todo, sprt_records, pool, progress.message)
        try:
            with interrupts if own else contextlib.nullcontext():  # a Ctrl-C from here on is counted
                if to_play and pool.play is None and not pool.remote:
                    # Before the clock starts (the progress's rate and ETA, the first game's
                    # seconds): the pool's workers load the kernels from numba's cache.
                    specs = [spec for p in selected for spec in (p.p1_spec, p.p2_spec)]
                    warmup.compile_engine(lambda text: progress.message(text, False), {spec.kind for spec in specs},
                                          [spec.mcts for spec in specs])
                progress.start(planned, skipped, tuple(scores.values()))
                for outcome in outcomes:
                    if outcome.ok:
                        # Storing a game and counting it is one step: a Ctrl-C/SIGTERM arriving
                        # here is held until both are done, so the summary counts exactly the
                        # games on disk and no line is cut short by the interrupt.
                        with interrupts.held():
                            writer.append(outcome.record)  # type: ignore[arg-type]
                            if config.sprt is not None:  # the report's test; nothing kept else
                                new_records.append(outcome.record)  # type: ignore[arg-type]
                            played += 1
                            key = (outcome.task.config_hash, outcome.task.pairing)  # a sweep repeats pairings
                            scores[key] = scores[key].with_game(outcome.record["winner"])  # type: ignore[index]
                            for agent, kinds in forfeits(entries, [outcome.record]).items():  # type: ignore[list-item]
                                for kind, n in kinds.items():
                                    forfeited.setdefault(agent, {})
                                    forfeited[agent][kind] = forfeited[agent].get(kind, 0) + n
                    elif interrupts.signum is not None:
                        raise KeyboardInterrupt  # a game cut by the signal (the engine's compile, say)
                    else:
                        failed.append(outcome)
                    finished += 1
                    progress.game(outcome, finished, planned, tuple(scores.values()))
                # The games are over: a signal from here on (the pool shutting down, the summary,
                # the exit) is recorded, and the run reported interrupted (interrupts.late).
                interrupts.settle()
        except KeyboardInterrupt:
            interrupts.stopped = True
            interrupts.settle()  # a second Ctrl-C while the pool stops is the same stop
        except LostResourceError as exc:
            interrupts.settle()
            lost = exc
        except Exception:
            interrupts.settle()
            if interrupts.signum is None:
                raise
            interrupts.stopped = True  # numba, cut by the signal while compiling the engine, fails after it
        finally:
            with contextlib.suppress(KeyboardInterrupt):
                outcomes.close()  # stops the pool: games in flight are dropped, not stored
            progress.close()
        if lost is not None:
            kept = sum(s.done for s in scores.values())
            raise LostResourceError(f"{lost}; {kept} of {planned} games are stored in {store.games_path}")
    return RunReport(
        out_dir=Path(out_dir),
        scores=tuple(scores.values()),
        planned=planned,
        skipped=skipped,
        played=played,
        failed=tuple(failed),
        interrupted=interrupts.stopped or interrupts.late,
        stopped_by=(interrupts.signum or signal.SIGINT) if interrupts.stopped or interrupts.late else None,
        sprt=_sprt_tests(config, selected, [*sprt_records, *new_records]),
        forfeits=forfeited,
    )


def _no_games() -> Generator[GameOutcome, None, None]:
    """The outcomes of a run with nothing to play."""
    yield from ()


def _sprt_tests(config: ExperimentConfig, plan: Sequence[PlannedPairing], records: Sequence[dict]) -> tuple:
    """Each tested pairing's SPRT from the stored records (empty without ``sprt:``)."""
    return () if config.sprt is None else plan_tests(config.sprt, plan, records)

