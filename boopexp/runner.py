"""Run a planned list of games: map :func:`boopexp.match.play_game` over a pool, store each record.

The pool (joblib with loky locally, or a dask.distributed cluster through joblib's Dask backend)
only ever runs the pure function that plays one game; the parent process alone writes the store,
one fsync'ed line per finished game, in completion order. A game's seed depends only on its
identity, so ``--jobs 1`` (in-process, no pool) and any pool produce the same records.

A worker that dies (killed by the OS, a crash in compiled code) breaks the pool and fails every
game in flight, whichever killed it. Those games are retried once, each alone in a fresh worker
so that a death can be blamed on its game; a game whose lone retry also kills its worker is
reported as failed and the run carries on with the rest. See docs/runner.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from boopexp import match
from boopexp.config import ExperimentConfig, PlannedPairing
from boopexp.errors import ConfigError
from boopexp.match import GameTask
from boopexp.store import GameKey, GameStore, PairingScore, check_record, record_key, score

BACKENDS: tuple[str, ...] = ("loky", "dask")

PlayFunction = Callable[[GameTask], dict]

# Every worker runs one game at a time on one core: nested thread pools would only oversubscribe.
_ONE_THREAD = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "BLIS_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
}


@dataclass(frozen=True)
class GameOutcome:
    """What came back for one game: its record, or why there is none.

    Attributes:
        task: the game.
        record: the game record (None if the game failed).
        error: one line saying why the game failed (None if it did not).
        detail: the traceback or exception text behind ``error``.
        seconds: wall seconds the game took in its worker.
    """

    task: GameTask
    record: dict[str, Any] | None = None
    error: str | None = None
    detail: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.record is not None


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
        interrupted: the run was stopped by Ctrl-C (finished games are stored).
    """

    out_dir: Path
    scores: tuple[PairingScore, ...]
    planned: int
    skipped: int
    played: int
    failed: tuple[GameOutcome, ...] = ()
    interrupted: bool = False

    @property
    def games_path(self) -> Path:
        return GameStore(self.out_dir).games_path

    @property
    def complete(self) -> bool:
        """Every planned game is in the store."""
        return all(s.done == s.planned for s in self.scores)


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


def game_key(task: GameTask) -> GameKey:
    """The store key ``(config_hash, pairing, game_index)`` of a task."""
    return (task.config_hash, task.pairing, task.game_index)


def play_one(play: PlayFunction, task: GameTask) -> GameOutcome:
    """Play one game in the current process and wrap its result (this is what the pool maps).

    Exceptions of the game become a failed outcome, so that one bad game does not stop the pool.
    """
    start = time.perf_counter()
    try:
        record = play(task)
    except Exception as exc:  # noqa: BLE001 - reported per game, the run goes on
        return GameOutcome(
            task,
            error=f"{type(exc).__name__}: {exc}",
            detail=traceback.format_exc(),
            seconds=time.perf_counter() - start,
        )
    return GameOutcome(task, record=record, seconds=time.perf_counter() - start)


def check_backend(backend: str, scheduler: str | None = None) -> None:
    """Refuse an unknown backend, a scheduler without dask, or dask when it is not installed.

    Raises:
        ConfigError: with the fix (``pip install 'boopexp[dask]'`` for a missing dask).
    """
    if backend not in BACKENDS:
        raise ConfigError(f"--backend {backend!r} is not allowed; allowed: {', '.join(BACKENDS)}")
    if scheduler and backend != "dask":
        raise ConfigError(f"--scheduler {scheduler!r} needs --backend dask")
    if backend == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ConfigError(
                "--backend dask needs dask.distributed, which is not installed; "
                "install it with: pip install 'boopexp[dask]'"
            ) from None


def iter_outcomes(
    tasks: Iterable[GameTask],
    *,
    jobs: int = 1,
    backend: str = "loky",
    scheduler: str | None = None,
    play: PlayFunction | None = None,
    on_message: Callable[[str, bool], None] | None = None,
) -> Iterator[GameOutcome]:
    """Play ``tasks`` and yield each outcome as soon as it is known (completion order).

    Args:
        tasks: the games.
        jobs: worker processes; 1 with the loky backend plays in this process (no pool).
        backend: ``loky`` (local processes) or ``dask`` (a dask.distributed cluster).
        scheduler: address of a running dask scheduler; without it a LocalCluster of ``jobs``
            worker processes is started.
        play: the function that plays one game; default :func:`boopexp.match.play_game`, looked
            up when the run starts (so a monkeypatched one is used). A pool pickles it (with
            cloudpickle): its module must be importable in the workers.
        on_message: receives ``(text, warning)``: worker deaths (warnings), the dask dashboard.
    """
    check_backend(backend, scheduler)
    fn = play if play is not None else match.play_game
    say = on_message or (lambda text, warning=True: None)
    tasks = list(tasks)
    if not tasks:
        return  # nothing to play: do not start a pool (a dask cluster takes seconds)
    if backend == "loky" and jobs == 1:
        for task in tasks:
            yield play_one(fn, task)
        return
    with _pool(backend, jobs, scheduler, say) as parallel:
        pending = tasks
        while pending:
            dispatched: dict[GameKey, GameTask] = {}
            finished: set[GameKey] = set()

            def calls(batch: list[GameTask] = pending) -> Iterator[Any]:
                # joblib pulls this lazily; what it pulled and did not return was in flight.
                for task in batch:
                    dispatched[game_key(task)] = task
                    yield _delayed(fn, task)

            try:
                with contextlib.closing(parallel(calls())) as results:
                    for outcome in results:
                        finished.add(game_key(outcome.task))
                        yield outcome
                pending = []
            except _worker_death_errors() as exc:
                suspects = [t for k, t in dispatched.items() if k not in finished]
                say(
                    f"a worker died ({type(exc).__name__}); retrying the {len(suspects)} game(s) in flight, "
                    "each alone in a fresh worker",
                    True,
                )
                for task in suspects:
                    try:
                        with contextlib.closing(parallel([_delayed(fn, task)])) as results:
                            yield from results
                    except _worker_death_errors() as exc2:
                        yield GameOutcome(
                            task,
                            error=f"its worker died twice ({type(exc2).__name__}); not retried again",
                            detail=f"first: {exc!r}\nretry: {exc2!r}",
                        )
                pending = [t for t in pending if game_key(t) not in dispatched]


def run_plan(
    config: ExperimentConfig,
    plan: Sequence[PlannedPairing],
    out_dir: str | Path,
    *,
    jobs: int = 1,
    backend: str = "loky",
    scheduler: str | None = None,
    progress: Progress | None = None,
    play: PlayFunction | None = None,
    pairings: Sequence[str] | None = None,
) -> RunReport:
    """Play the games of ``plan`` that the store in ``out_dir`` lacks, storing each as it finishes.

    Args:
        config: the experiment (its settings make the games).
        plan: the pairings and game counts to complete (:meth:`ExperimentConfig.plan`).
        out_dir: the store folder (created if needed).
        jobs, backend, scheduler, play: see :func:`iter_outcomes`.
        progress: receives warnings and one event per game.
        pairings: play only these pairing strings of the plan (default: all); the whole plan is
            still saved in config.yaml.

    Returns:
        The report; Ctrl-C ends the run early with ``interrupted=True`` (stored games kept).

    Raises:
        ConfigError: bad backend options (checked before anything is written).
        StoreError: the store is corrupt (nothing is written) or locked by another run.
    """
    progress = progress or Progress()
    plan = tuple(plan)
    check_backend(backend, scheduler)
    store = GameStore(out_dir)
    with store.open() as writer:
        for text in writer.scan_before.warnings():
            progress.message(text)
        if writer.moved_tail is not None:
            progress.message(f"the truncated bytes were moved to {writer.moved_tail}", True)
        backup = store.write_config(config.resolved(plan))
        if backup is not None:
            progress.message(f"{store.config_path} was written by other settings; the old one is kept as {backup}", False)

        selected = tuple(p for p in plan if pairings is None or p.pairing in pairings)
        tasks = config.tasks(selected)
        done = writer.scan_before.keys
        todo = [t for t in tasks if game_key(t) not in done]
        entries = [p.entry() for p in selected]
        scores = {s.pairing: s for s in score(entries, writer.scan_before.records)}
        skipped = len(tasks) - len(todo)
        progress.start(len(tasks), skipped, tuple(scores.values()))

        played = 0
        finished = skipped
        failed: list[GameOutcome] = []
        interrupted = False
        outcomes = iter_outcomes(
            todo, jobs=jobs, backend=backend, scheduler=scheduler, play=play, on_message=progress.message
        )
        try:
            with _sigterm_as_interrupt():
                for outcome in outcomes:
                    outcome = _checked(outcome)
                    if outcome.ok:
                        # Storing a game and counting it is one step: a Ctrl-C/SIGTERM arriving
                        # here is held until both are done, so the summary counts exactly the
                        # games on disk and no line is cut short by the interrupt.
                        with _signals_deferred():
                            writer.append(outcome.record)  # type: ignore[arg-type]
                            played += 1
                            s = scores[outcome.task.pairing]
                            winner = outcome.record["winner"]  # type: ignore[index]
                            scores[s.pairing] = dataclasses.replace(
                                s,
                                done=s.done + 1,
                                p1_wins=s.p1_wins + (winner == "p1"),
                                p2_wins=s.p2_wins + (winner == "p2"),
                                no_winner=s.no_winner + (winner is None),
                            )
                    else:
                        failed.append(outcome)
                    finished += 1
                    progress.game(outcome, finished, len(tasks), tuple(scores.values()))
        except KeyboardInterrupt:
            interrupted = True
        finally:
            with contextlib.suppress(KeyboardInterrupt):
                outcomes.close()  # stops the pool: games in flight are dropped, not stored
            progress.close()
    return RunReport(
        out_dir=Path(out_dir),
        scores=tuple(scores.values()),
        planned=len(tasks),
        skipped=skipped,
        played=played,
        failed=tuple(failed),
        interrupted=interrupted,
    )


# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _sigterm_as_interrupt():
    """Treat SIGTERM (a batch scheduler pre-empting the job, ``kill``) like Ctrl-C: finished
    games are already on disk and the run stops with the message that says how to resume."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _signals_deferred():
    """Hold SIGINT and SIGTERM during a short critical section; a pending one is delivered (and
    its KeyboardInterrupt raised) right after it. A no-op where pthread_sigmask is missing."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _checked(outcome: GameOutcome) -> GameOutcome:
    """Turn a record that is not storable, or belongs to another game, into a failure."""
    if outcome.record is None:
        return outcome
    problem = check_record(outcome.record)
    if problem is None and record_key(outcome.record) != game_key(outcome.task):
        problem = f"it is the record of {record_key(outcome.record)}, not of {game_key(outcome.task)}"
    if problem is None:
        return outcome
    return dataclasses.replace(outcome, record=None, error=f"play_game returned a bad record: {problem}")


def _delayed(fn: PlayFunction, task: GameTask) -> Any:
    from joblib import delayed

    return delayed(play_one)(fn, task)


def _worker_death_errors() -> tuple[type[BaseException], ...]:
    """Exceptions meaning "a worker process died", for the backends that are installed."""
    from joblib.externals.loky.process_executor import BrokenProcessPool

    errors: list[type[BaseException]] = [BrokenProcessPool]
    try:
        from distributed import KilledWorker

        errors.append(KilledWorker)
    except ImportError:
        pass
    return tuple(errors)


@contextlib.contextmanager
def _pool(backend: str, jobs: int, scheduler: str | None, say: Callable[[str], None]) -> Iterator[Callable]:
    """A function mapping joblib calls over the chosen pool, unordered, one game per batch."""
    from joblib import Parallel, parallel_config

    def parallel(calls: Iterable[Any]) -> Iterator[GameOutcome]:
        # batch_size=1 and pre_dispatch=n_jobs: only the games being played are in flight, so a
        # worker death blames as few games as possible; games last seconds, batching gains nothing.
        return Parallel(return_as="generator_unordered", batch_size=1, pre_dispatch="n_jobs")(calls)

    if backend == "loky":
        with parallel_config(backend="loky", n_jobs=jobs, inner_max_num_threads=1):
            yield parallel
        return

    import dask
    import distributed

    environ = {f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in _ONE_THREAD.items()}
    with contextlib.ExitStack() as stack:
        stack.enter_context(dask.config.set(environ))
        if scheduler:
            client = stack.enter_context(distributed.Client(scheduler, set_as_default=False))
        else:
            cluster = stack.enter_context(
                distributed.LocalCluster(
                    n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=":0"
                )
            )
            client = stack.enter_context(distributed.Client(cluster, set_as_default=False))
        n_workers = sum(w.get("nthreads", 1) for w in client.scheduler_info().get("workers", {}).values())
        say(f"dask: {n_workers} worker thread(s) at {client.scheduler.address}, dashboard {client.dashboard_link}", False)
        stack.enter_context(parallel_config(backend="dask", n_jobs=-1, client=client))
        yield parallel
