"""Run a planned list of games: map :func:`boopexp.play.match.play_game` over a pool, store each record.

The pool (loky processes locally, or a dask.distributed cluster) only ever runs the pure function
that plays one game, one game per worker at a time, taking the games lazily from the plan; the
parent process alone writes the store, one fsync'ed line per finished game, in completion order.
A game's seed depends only on its identity, so ``--jobs 1`` (in-process, no pool) and any pool
produce the same records.

A loky worker that dies (killed by the OS, a crash in compiled code) breaks the pool and fails
the games being played, whichever killed it. Those games (at most one per worker) are retried
once, each alone in a fresh worker so that a death can be blamed on its game; a game whose lone
retry also kills its worker is reported as failed and the run carries on with the rest. Dask
reschedules a dead worker's game itself; a lost dask scheduler stops the run
(:class:`boopexp.errors.LostResourceError`). The pools' workers never see Ctrl-C (the parent
handles it) and loky's die with their parent. See docs/runner.md and docs/cluster.md.
"""

from __future__ import annotations

import _thread
import contextlib
import dataclasses
import itertools
import logging
import os
import re
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypedDict

from boopexp.errors import BoopError, ConfigError, LostResourceError
from boopexp.experiments.config import ExperimentConfig, PlannedPairing
from boopexp.experiments.sprt import SprtSpec, plan_tests
from boopexp.experiments.store import GameStore, check_record
from boopexp.experiments.tally import PairingScore, forfeits, score
from boopexp.play.contract import GameRecord, GameTask
from boopexp.play.identity import record_key

BACKENDS: tuple[str, ...] = ("loky", "dask")

#: What the pool maps: :func:`boopexp.play.match.play_game` (or a test's stand-in).
PlayFunction = Callable[[GameTask], GameRecord]

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
    record: GameRecord | None = None
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
    if scheduler:
        check_scheduler_address(scheduler)
    if backend == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ConfigError(
                "--backend dask needs dask.distributed, which is not installed; "
                "install it with: pip install 'boopexp[dask]'"
            ) from None


def _drop_message(text: str, warning: bool = True) -> None:
    """The default ``on_message`` of :func:`iter_outcomes`: nothing is shown."""


class _Pool(TypedDict):
    """The keyword arguments of :func:`iter_outcomes` that :func:`run_plan` passes through."""

    jobs: int
    backend: str
    scheduler: str | None
    play: PlayFunction | None
    on_message: Callable[[str, bool], None] | None


def iter_outcomes(
    tasks: Iterable[GameTask],
    *,
    jobs: int = 1,
    backend: str = "loky",
    scheduler: str | None = None,
    play: PlayFunction | None = None,
    on_message: Callable[[str, bool], None] | None = None,
) -> Generator[GameOutcome, None, None]:
    """Play ``tasks`` and yield each outcome as soon as it is known (completion order).

    ``tasks`` is consumed lazily: at most one game per worker is taken from it at a time, so a
    plan of any length costs no memory up front.

    Args:
        tasks: the games.
        jobs: worker processes; 1 with the loky backend plays in this process (no pool).
        backend: ``loky`` (local processes) or ``dask`` (a dask.distributed cluster).
        scheduler: address of a running dask scheduler; without it a LocalCluster of ``jobs``
            worker processes is started.
        play: the function that plays one game; default :func:`boopexp.play.match.play_game`, looked
            up when the run starts (so a monkeypatched one is used). A pool pickles it (with
            cloudpickle): its module must be importable in the workers.
        on_message: receives ``(text, warning)``: worker deaths (warnings), the dask dashboard.
    """
    check_backend(backend, scheduler)
    if play is None:
        from boopexp.play import match  # the compiled engine: loaded only when games are played

        play = match.play_game
    fn = play
    say = on_message or _drop_message
    pending = iter(tasks)
    first = next(pending, None)
    if first is None:
        return  # nothing to play: do not start a pool (a dask cluster takes seconds)
    pending = itertools.chain([first], pending)
    if backend == "loky" and jobs == 1:
        for task in pending:
            yield play_one(fn, task)
        return
    if backend == "loky":
        yield from _loky_outcomes(fn, pending, jobs, say)
    else:
        yield from _dask_outcomes(fn, pending, jobs, scheduler, say)


def run_plan(
    config: ExperimentConfig,
    plan: Sequence[PlannedPairing],
    out_dir: str | Path,
    *,
    jobs: int = 1,
    backend: str = "loky",
    scheduler: str | None = None,
    progress: RunEvents | None = None,
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
        LostResourceError: the dask scheduler went away mid-run; the message says how many games
            are stored (every game finished before the loss).
    """
    progress = progress or Progress()
    plan = tuple(plan)
    check_backend(backend, scheduler)
    if backend == "dask" and scheduler:
        probe_scheduler(scheduler)  # an unreachable cluster is reported before anything is written
    store = GameStore(out_dir)
    with store.open() as writer:
        for text in writer.scan_before.warnings():
            progress.message(text)
        if writer.moved_tail is not None:
            progress.message(f"the truncated bytes were moved to {writer.moved_tail}", True)
        backup = store.write_config(config.resolved(plan))
        if backup is not None:
            progress.message(
                f"{store.config_path} was written by other settings; the old one is kept as {backup}", False
            )

        selected = tuple(p for p in plan if pairings is None or p.pairing in pairings)
        done = writer.scan_before.keys
        # Lazily: a plan of 10^9 games costs nothing until its games are played.
        todo = (t for t in config.iter_tasks(selected) if t.key not in done)
        entries = [p.entry() for p in selected]
        # keyed like the games: a sweep plans the same pairing string once per point
        scores = {(s.config_hash, s.pairing): s for s in score(entries, writer.scan_before.records)}
        forfeited = forfeits(entries, writer.scan_before.records)
        planned = sum(p.games for p in selected)
        skipped = sum(s.done for s in scores.values())
        to_play = planned - skipped
        workers = pool_size(jobs, to_play, backend, scheduler, progress.message)
        if to_play and play is None and not engine_is_compiled():
            progress.message("compiling the engine (first run only, ~1 min)", False)

        played = 0
        finished = skipped
        failed: list[GameOutcome] = []
        interrupts = Interrupts()
        lost: LostResourceError | None = None
        pool: _Pool = {"jobs": workers, "backend": backend, "scheduler": scheduler, "play": play,
                       "on_message": progress.message}
        new_records: list[dict[str, Any]] = []
        if config.sprt is None:
            outcomes = iter_outcomes(todo, **pool)
        else:
            outcomes = _sprt_outcomes(config.sprt, selected, todo, writer.scan_before.records, **pool)
        try:
            with interrupts:
                progress.start(planned, skipped, tuple(scores.values()))  # a Ctrl-C from here on is counted
                for outcome in outcomes:
                    outcome = _checked(outcome)
                    if outcome.ok:
                        # Storing a game and counting it is one step: a Ctrl-C/SIGTERM arriving
                        # here is held until both are done, so the summary counts exactly the
                        # games on disk and no line is cut short by the interrupt.
                        with interrupts.held():
                            writer.append(outcome.record)  # type: ignore[arg-type]
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
        except KeyboardInterrupt:
            interrupts.stopped = True
        except LostResourceError as exc:
            lost = exc
        except Exception:
            if interrupts.signum is None:
                raise
            interrupts.stopped = True  # numba, cut by the signal while compiling the engine, fails after it
        finally:
            with contextlib.suppress(KeyboardInterrupt):
                outcomes.close()  # stops the pool: games in flight are dropped, not stored
            progress.close()
        if lost is not None:
            stored = sum(s.done for s in scores.values())
            raise LostResourceError(f"{lost}; {stored} of {planned} games are stored in {store.games_path}")
    return RunReport(
        out_dir=Path(out_dir),
        scores=tuple(scores.values()),
        planned=planned,
        skipped=skipped,
        played=played,
        failed=tuple(failed),
        interrupted=interrupts.stopped,
        stopped_by=(interrupts.signum or signal.SIGINT) if interrupts.stopped else None,
        sprt=_sprt_tests(config, selected, [*writer.scan_before.records, *new_records]),
        forfeits=forfeited,
    )


def _sprt_tests(config: ExperimentConfig, plan: Sequence[PlannedPairing], records: Sequence[dict]) -> tuple:
    """Each tested pairing's SPRT from the stored records (empty without ``sprt:``)."""
    return () if config.sprt is None else plan_tests(config.sprt, plan, records)


def cpu_count() -> int:
    """The CPUs this process may run on (honours taskset/cgroup CPU limits)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def pool_size(jobs: int, games: int, backend: str = "loky", scheduler: str | None = None,
              say: Callable[[str, bool], None] | None = None) -> int:
    """The workers to start: ``jobs``, but never more than the games to play (each worker costs
    a process, ~20 MB and its start-up); a warning when they outnumber this machine's CPUs.

    With a remote dask scheduler the cluster's own workers play and ``jobs`` is not used.
    """
    if backend == "dask" and scheduler:
        return jobs
    workers = max(1, min(jobs, games))
    cpus = cpu_count()
    if workers > cpus and say is not None:
        say(f"--jobs {jobs}: {workers} workers on {cpus} CPU(s) share the cores: games run no faster"
            " in total, and cpu/wall budgets get less thinking per move", True)
    return workers


def engine_is_compiled() -> bool:
    """Whether numba's on-disk cache holds the search kernels (otherwise the first game of each
    process compiles them, about a minute)."""
    kernels = Path(__file__).resolve().parent.parent / "engine"
    folders = [kernels / "__pycache__"]
    if os.environ.get("NUMBA_CACHE_DIR"):
        folders.append(Path(os.environ["NUMBA_CACHE_DIR"]))
    return any(any(folder.rglob("mcts.*.nbi")) for folder in folders if folder.is_dir())


def _checked(outcome: GameOutcome) -> GameOutcome:
    """Turn a record that is not storable, or belongs to another game, into a failure."""
    if outcome.record is None:
        return outcome
    problem = check_record(outcome.record)
    if problem is None and record_key(outcome.record) != outcome.task.key:
        problem = f"it is the record of {record_key(outcome.record)}, not of {outcome.task.key}"
    if problem is None:
        return outcome
    return dataclasses.replace(outcome, record=None, error=f"play_game returned a bad record: {problem}")


class Interrupts:
    """While a run plays: SIGINT (Ctrl-C) and SIGTERM (``kill``, a batch scheduler pre-empting
    the job) stop it by raising KeyboardInterrupt in the main thread, except inside
    :meth:`held`, where the signal is remembered and raised as soon as the section ends.
    ``boopexp game`` and ``boopexp play`` stop the same way (:attr:`signum` says which signal).

    A flag rather than ``pthread_sigmask``: a mask only holds the signal off the main thread,
    and the kernel then hands it to one of the pool's threads, whose Python handler still runs
    in the main thread at once, in the middle of the section.

    A KeyboardInterrupt raised while the main thread is in a C library's callback into Python
    (numba compiling the engine calls back from LLVM) is dropped by the library: until the block
    is left, the signal is raised again every :data:`REMIND_S` seconds, and the dropped one is not
    printed as a traceback.
    """

    #: seconds between two raises of a signal that has not stopped the block yet
    REMIND_S = 1.0

    def __init__(self) -> None:
        self.signum: int | None = None
        self.stopped = False
        self._holding = False
        self._pending = False
        self._leaving = False
        self._left = threading.Event()
        self._reminder: threading.Thread | None = None
        self._previous: dict[int, Any] = {}
        self._unraisable: Any = None

    def _handler(self, signum: int, frame: Any) -> None:
        self.signum = signum
        if self._leaving:  # a reminder after the block raised: it is already stopping
            return
        if self._holding:
            self._pending = True
            return
        self._remind(signum)
        raise KeyboardInterrupt

    def _remind(self, signum: int) -> None:
        if self._reminder is not None or not self._previous:
            return
        left = self._left

        def again() -> None:
            while not left.wait(self.REMIND_S):
                _thread.interrupt_main(signal.Signals(signum))  # runs _handler in the main thread, as the signal did

        self._reminder = threading.Thread(target=again, name="boopexp-interrupt-reminder", daemon=True)
        self._reminder.start()

    def _quiet_unraisable(self, unraisable: Any) -> None:
        if self.signum is not None and unraisable.exc_type is KeyboardInterrupt:
            return  # the signal's KeyboardInterrupt, dropped by a C callback: the reminder raises it again
        self._unraisable(unraisable)

    def __enter__(self) -> Interrupts:
        self._leaving = False
        self._left = threading.Event()
        self._reminder = None
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handler)
            self._unraisable, sys.unraisablehook = sys.unraisablehook, self._quiet_unraisable
        return self

    def __exit__(self, *exc: object) -> None:
        self._leaving = True
        self._left.set()
        if self._reminder is not None:
            self._reminder.join()
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()
        if self._unraisable is not None:
            sys.unraisablehook, self._unraisable = self._unraisable, None

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
            if self._pending:
                self._pending = False
                raise KeyboardInterrupt


@contextlib.contextmanager
def sigint_blocked() -> Iterator[None]:
    """Block SIGINT in this thread while a pool starts its processes and threads.

    A terminal sends Ctrl-C to every process of its foreground group, the pool's workers too: a
    worker would die or print a KeyboardInterrupt traceback (while importing, while playing) and
    send the interrupt back as a game's result, racing the parent's own handling of it. Processes
    and threads inherit the signal mask of the thread that starts them (through fork and exec),
    so the ones started in this block are born with SIGINT blocked: the parent alone handles
    Ctrl-C and stops them. A Ctrl-C that arrives inside the block is delivered when it ends.
    """
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        yield
        return
    from multiprocessing import resource_tracker

    # The pools start the standard library's resource tracker on first use, which then unblocks
    # SIGINT in the calling thread (SIG_UNBLOCK, not the previous mask) and would let the
    # workers started after it see Ctrl-C: start it before blocking (it ignores SIGINT itself).
    resource_tracker.ensure_running()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


#: Linux prctl(2) option: the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def pool_worker_init(parent: int) -> None:
    """Run first in every loky worker: leave Ctrl-C to the parent and die with it.

    A worker whose parent was killed (SIGKILL, the OOM killer) would otherwise play its game to
    the end for nobody, and linger. On Linux the kernel kills it (``PR_SET_PDEATHSIG``, which
    works even inside a compiled search holding the GIL); elsewhere a thread checks the parent
    every second.

    Args:
        parent: the pid of the process that started the pool.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # also for a worker started outside sigint_blocked
    if not _kill_me_with_parent():
        threading.Thread(target=_watch_parent, args=(parent,), name="boopexp-parent-watch", daemon=True).start()
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _kill_me_with_parent() -> bool:
    """Ask the kernel for SIGKILL when the parent dies; False if this platform cannot."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):  # pragma: no cover - no prctl in this libc
        return False


def _watch_parent(parent: int) -> None:  # pragma: no cover - not Linux
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def _loky_outcomes(fn: PlayFunction, pending: Iterator[GameTask], jobs: int,
                   say: Callable[[str, bool], None]) -> Iterator[GameOutcome]:
    """Play ``pending`` in a loky process pool of ``jobs`` workers, ``jobs`` games at a time.

    Only as many games as workers are submitted, so the games in flight when a worker dies are
    the games being played; a game that had finished keeps its result in its future whatever
    happens to the pool later. The games in flight are retried once, each alone in a fresh pool
    so that a second death names its game; a game whose lone retry also dies is a failure.
    """
    from concurrent.futures import FIRST_COMPLETED, wait

    from joblib.externals.loky import get_reusable_executor
    from joblib.externals.loky.process_executor import BrokenProcessPool

    current: list[Any] = []  # the last pool used: the one to stop if the run stops early

    def executor() -> Any:  # a broken pool is replaced by a new one here
        with sigint_blocked():  # the workers (and loky's threads) it starts never see Ctrl-C
            pool = get_reusable_executor(max_workers=jobs, env=dict(_ONE_THREAD), initializer=pool_worker_init,
                                         initargs=(os.getpid(),))
        current[:] = [pool]
        return pool

    def submit(pool: Any, task: GameTask) -> Any:
        with sigint_blocked():  # loky starts its workers and threads on submit
            return pool.submit(play_one, fn, task)

    in_flight: dict[Any, GameTask] = {}
    unsent: list[GameTask] = []  # taken from the plan, refused by a pool that had just broken
    exhausted = False  # every game played: the pool is kept for reuse
    try:
        while True:
            pool = executor()
            while len(in_flight) < jobs:
                task = unsent.pop() if unsent else next(pending, None)
                if task is None:
                    break
                try:
                    in_flight[submit(pool, task)] = task
                except BrokenProcessPool:  # a worker died since the last wait: its games fail below
                    unsent.append(task)
                    break
            if not in_flight:
                if unsent:
                    continue  # the broken pool is replaced by executor()
                exhausted = True
                return
            finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            died: list[tuple[GameTask, BaseException]] = []
            for future in finished:
                task = in_flight.pop(future)
                try:
                    outcome = future.result()
                except BrokenProcessPool as exc:
                    died.append((task, exc))
                else:
                    yield outcome
            if not died:
                continue
            # The pool is broken: every other game in flight fails with it (or has just finished).
            for future in wait(in_flight).done:
                task = in_flight.pop(future)
                try:
                    yield future.result()
                except BrokenProcessPool as exc:
                    died.append((task, exc))
            say(f"a worker died ({type(died[0][1]).__name__}); retrying the {len(died)} game(s) it "
                "was playing with, each alone in a fresh worker", True)
            for task, first in died:
                future = submit(executor(), task)
                in_flight[future] = task
                try:
                    outcome = future.result()
                except BrokenProcessPool as again:
                    outcome = GameOutcome(
                        task,
                        error=f"its worker died twice ({type(again).__name__}); not retried again",
                        detail=f"first: {first!r}\nretry: {again!r}",
                    )
                del in_flight[future]
                yield outcome
    finally:
        # Stopped early (Ctrl-C, an error): drop the games in flight with their workers. Even with
        # none known in flight: Ctrl-C may land between a submit and its bookkeeping, and a pool
        # left running keeps its workers, and this process's exit, waiting for that game.
        if not exhausted and current:
            for future in in_flight:
                future.cancel()
            current[0].shutdown(wait=False, kill_workers=True)


def _dask_outcomes(fn: PlayFunction, pending: Iterator[GameTask], jobs: int, scheduler: str | None,
                   say: Callable[[str, bool], None]) -> Iterator[GameOutcome]:
    """Play ``pending`` on a dask.distributed cluster, one game per worker thread at a time.

    Dask reschedules a game whose worker died by itself and gives up on it (KilledWorker) after
    ``distributed.scheduler.allowed-failures`` deaths: that game is a failure, the rest go on.

    Raises:
        LostResourceError: the scheduler went away mid-run (the games in flight are dropped).
    """
    import dask
    import distributed

    environ = {f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in _ONE_THREAD.items()}
    in_flight: dict[Any, GameTask] = {}
    with contextlib.ExitStack() as stack:
        quiet = stack.enter_context(_quiet_teardown())  # entered first: it ends after the client closes
        stack.enter_context(dask.config.set(environ))
        with sigint_blocked():  # the cluster's threads and worker processes leave Ctrl-C to this one
            if scheduler:
                client = stack.enter_context(connect_scheduler(scheduler))
            else:
                # silence_logs: its workers' warnings (a task cancelled as the cluster closes) are
                # dask's bookkeeping, not the run's; errors still show
                cluster = stack.enter_context(
                    distributed.LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                             dashboard_address=":0", silence_logs=logging.ERROR)
                )
                client = stack.enter_context(distributed.Client(cluster, set_as_default=False))
        address = scheduler or client.scheduler.address
        say(dask_banner(client), False)
        completed = distributed.as_completed(loop=client.loop)
        exhausted = False
        try:
            while True:
                width = max(1, sum(client.nthreads().values()))  # workers may join or leave
                while len(in_flight) < width:
                    task = next(pending, None)
                    if task is None:
                        break
                    future = client.submit(play_one, fn, task, pure=False)
                    in_flight[future] = task
                    completed.add(future)
                if not in_flight:
                    exhausted = True
                    return
                future = _next_completed(completed, client)
                task = in_flight.pop(future)
                try:
                    outcome = future.result()
                except distributed.KilledWorker as exc:
                    outcome = GameOutcome(task, error=f"its workers kept dying ({exc}); not retried again",
                                          detail=repr(exc))
                except Exception as exc:  # noqa: BLE001 - the cluster's, not the game's (play_one catches those)
                    if not _connected(client):
                        raise _SchedulerLost from None
                    outcome = GameOutcome(task, error=f"the dask cluster could not play it: {_one_line(exc)}",
                                          detail=traceback.format_exc())
                yield outcome
        except (_SchedulerLost, OSError, TimeoutError) as exc:
            if isinstance(exc, _SchedulerLost) or not _connected(client):
                raise LostResourceError(f"lost the dask scheduler at {address} mid-run") from None
            raise
        finally:
            if not exhausted:  # stopped early (Ctrl-C, the scheduler lost): what dask says while closing is noise
                quiet()
                if scheduler and in_flight and _connected(client):  # a local cluster closes with its games
                    client.cancel(list(in_flight))


class _SchedulerLost(Exception):
    """The client lost its scheduler (inside :func:`_dask_outcomes` only)."""


def dask_banner(client: Any) -> str:
    """The line that says where the games are played: worker threads, scheduler, and its
    dashboard only when the scheduler really serves one."""
    threads = sum(client.nthreads().values())
    dashboard = f", dashboard {client.dashboard_link}" if has_dashboard(client) else ""
    return f"dask: {threads} worker thread(s) at {client.scheduler.address}{dashboard}"


def has_dashboard(client: Any) -> bool:
    """Whether the client's scheduler serves the (bokeh) dashboard.

    Its info alone cannot tell: a scheduler started with ``--no-dashboard``, or without bokeh
    installed, still runs an HTTP server (metrics, health) that its info lists as the
    "dashboard" service, with no dashboard page. So the scheduler is asked whether a bokeh
    application is attached to that server (the test distributed's own ``/sitemap.json`` uses).
    """

    def bokeh_attached(dask_scheduler: Any = None) -> bool:  # runs on the scheduler; pickled by value
        applications = getattr(getattr(dask_scheduler, "http_application", None), "applications", ())
        return any("bokeh" in str(app).lower() for app in applications)

    try:
        return bool(client.run_on_scheduler(bokeh_attached))
    except Exception:  # noqa: BLE001 - a scheduler that will not say has no dashboard worth naming
        return False


def _connected(client: Any) -> bool:
    """Whether the client still talks to its scheduler (dask cancels every future on a loss and
    tries to reconnect: its status is then "connecting", later "closed")."""
    return client.status == "running"


def _next_completed(completed: Any, client: Any) -> Any:
    """The next finished future of ``completed``; :class:`_SchedulerLost` if the scheduler is
    lost meanwhile (a game submitted during the loss would otherwise be waited for forever)."""
    while not completed.has_ready():
        if not _connected(client):
            raise _SchedulerLost
        with completed.thread_condition:  # notified by every completion (as_completed.__next__ does the same)
            completed.thread_condition.wait(timeout=0.1)
    return next(completed)


@contextlib.contextmanager
def _quiet_teardown() -> Iterator[Callable[[], None]]:
    """Yield a function that silences all logging until the block ends.

    Called when a dask run stops early (Ctrl-C, the scheduler lost): closing a client or cluster
    then makes dask log tracebacks of its own cancelled tasks and failed reconnections, which say
    nothing the run's one line does not.
    """
    previous = logging.root.manager.disable
    try:
        yield lambda: logging.disable(logging.CRITICAL)
    finally:
        logging.disable(previous)


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


#: How long to wait for a dask scheduler to answer before saying it cannot be reached.
SCHEDULER_TIMEOUT_S = 10

_SCHEDULER_RE = re.compile(r"^(?:(?P<protocol>[a-z]+)://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]]+):(?P<port>[0-9]+)$")
_SCHEDULER_PROTOCOLS = ("tcp", "tls", "ws", "wss", "ucx")


def check_scheduler_address(address: str) -> None:
    """Refuse a dask scheduler address that is not ``[protocol://]host:port``.

    Raises:
        ConfigError: naming the address and the expected form.
    """
    m = _SCHEDULER_RE.match(address)
    if (
        m is None
        or (m["protocol"] or "tcp") not in _SCHEDULER_PROTOCOLS
        or not 0 < int(m["port"]) < 65536
    ):
        raise ConfigError(
            f"--scheduler {address!r} is not a dask scheduler address; expected [protocol://]host:port"
            f" like tcp://192.168.1.10:8786 (protocols: {', '.join(_SCHEDULER_PROTOCOLS)})"
        )


@contextlib.contextmanager
def connect_scheduler(address: str) -> Iterator[Any]:
    """A dask Client of the scheduler at ``address``, or a BoopError after SCHEDULER_TIMEOUT_S."""
    import distributed

    try:
        client = distributed.Client(address, timeout=SCHEDULER_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise BoopError(
            f"cannot reach the dask scheduler at {address} within {SCHEDULER_TIMEOUT_S} s"
            f" ({' '.join(str(exc).split()) or type(exc).__name__}); is `dask scheduler` running there?"
        ) from None
    with client:
        yield client


def probe_scheduler(address: str) -> None:
    """Connect to the dask scheduler at ``address`` once (see :func:`connect_scheduler`)."""
    with connect_scheduler(address):
        pass


# --------------------------------------------------------------------------------------------
# SPRT scheduling


def _sprt_outcomes(
    spec: SprtSpec,
    plan: Sequence[PlannedPairing],
    todo: Iterable[GameTask],
    stored: Sequence[dict[str, Any]],
    **pool: Any,
) -> Generator[GameOutcome, None, None]:
    """Play ``todo`` in rounds so that each tested pairing stops at its SPRT decision.

    A pairing played both ways is played block by block: a block is ``spec.batch`` consecutive
    game indices of both seatings. After every round, each pairing's test is read off the stored
    games in identity order (:func:`boopexp.experiments.sprt.plan_tests`); a decided pairing gets no further
    block, an undecided one its first block with games missing. Which games are played is thus a
    function of the games' outcomes alone, never of the number of workers or of finishing order:
    every block is played to the end before the next decision. Other games (mirrors, pairings
    played one way) are played in the first round. A pairing with a failed game gets no more
    blocks in this run (its test cannot pass the gap; a rerun retries the game).
    """
    records = list(stored)
    todo = list(todo)
    tested: dict[str, tuple[str, str]] = {}
    for test in plan_tests(spec, plan, []):
        for pairing in test.pairings:
            tested[pairing] = test.pairings
    first_round = [t for t in todo if t.pairing not in tested]
    waiting = [t for t in todo if t.pairing in tested]
    stalled: set[tuple[str, str]] = set()
    while True:
        batch = list(first_round)
        first_round = []
        states = {t.pairings: t.state for t in plan_tests(spec, plan, records)}
        for group, state in states.items():
            if state.decided or group in stalled:
                continue
            missing = sorted({t.game_index for t in waiting if t.pairing in group})
            if not missing:
                continue
            block = missing[0] // spec.batch
            batch += [t for t in waiting if t.pairing in group and t.game_index // spec.batch == block]
        if not batch:
            return
        scheduled = {t.key for t in batch}
        waiting = [t for t in waiting if t.key not in scheduled]
        outcomes = iter_outcomes(batch, **pool)
        try:
            for outcome in outcomes:
                outcome = _checked(outcome)
                if outcome.ok:
                    records.append(outcome.record)  # type: ignore[arg-type]
                elif outcome.task.pairing in tested:
                    stalled.add(tested[outcome.task.pairing])
                yield outcome
        finally:
            outcomes.close()
