"""**The** pool that maps ``play_game`` (``iter_outcomes``: each game a ``PlayedGame``, its record,
or a ``FailedGame``, why there is none): in-process, joblib's loky processes (worker init, retries
of a dead worker's games) or a Dask cluster; ``PoolOptions``, how games are played (jobs, backend,
scheduler or Slurm, the play function), built once by the CLI and passed through the runner and the
tuner (``for_games``: never more workers than games).

The pool that plays games: :func:`iter_outcomes` maps :func:`boopexp.play.match.play_game` over
the games of a plan, in this process (``--jobs 1``), in a loky process pool or on a
dask.distributed cluster, and yields each game's outcome as soon as it is known: a
:class:`PlayedGame` (its record) or a :class:`FailedGame` (no record: why).

How games are played is one value, :class:`PoolOptions` (jobs, backend, scheduler, the play
function), built once by the command line and passed through the runner and the tuner.

A pool only ever runs the pure function that plays one game, one game per worker at a time,
taking the games lazily from the plan; nothing in a worker writes a file. A loky worker that dies
(killed by the OS, a crash in compiled code) breaks the pool and fails the games being played,
whichever killed it. Those games (at most one per worker) are retried once, each alone in a fresh
worker so that a death can be blamed on its game; a game whose lone retry also kills its worker
is reported as failed and the run carries on with the rest. Dask reschedules a dead worker's game
itself; a lost dask scheduler stops the run (:class:`boopexp.errors.LostResourceError`). The
pools' workers never see Ctrl-C (the parent handles it: :mod:`boopexp.experiments.interrupts`)
and loky's die with their parent. See docs/runner.md and docs/cluster.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import logging
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from boopexp.errors import ConfigError, LostResourceError, exception_line
from boopexp.experiments.interrupts import sigint_blocked
from boopexp.experiments.scheduler import (
    check_scheduler_address,
    check_slurm,
    connect_scheduler,
    slurm_banner,
    slurm_cluster,
    slurm_scale,
)
from boopexp.experiments.store import check_record
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
class PlayedGame:
    """A game played: its record (storable and this game's: :func:`iter_outcomes` checks both).

    Attributes:
        task: the game.
        record: the game record.
        seconds: wall seconds the game took in its worker.
    """

    task: GameTask
    record: GameRecord
    seconds: float = 0.0
    ok: ClassVar[Literal[True]] = True


@dataclass(frozen=True)
class FailedGame:
    """A game that could not be played: no record, and why (a rerun plays it again).

    Attributes:
        task: the game.
        error: one line saying why the game failed.
        detail: the traceback or exception text behind ``error``.
        seconds: wall seconds the game took in its worker.
    """

    task: GameTask
    error: str
    detail: str = ""
    seconds: float = 0.0
    ok: ClassVar[Literal[False]] = False


#: What came back for one game (``isinstance`` tells which; ``ok`` too, for a display).
GameOutcome = PlayedGame | FailedGame


def play_one(play: PlayFunction, task: GameTask) -> GameOutcome:
    """Play one game in the current process and wrap its result (this is what the pool maps).

    Exceptions of the game become a :class:`FailedGame`, so that one bad game does not stop the pool.
    """
    start = time.perf_counter()
    try:
        record = play(task)
    except Exception as exc:  # noqa: BLE001 - reported per game, the run goes on
        return FailedGame(
            task,
            error=f"{type(exc).__name__}: {exc}",
            detail=traceback.format_exc(),
            seconds=time.perf_counter() - start,
        )
    return PlayedGame(task, record, seconds=time.perf_counter() - start)


def check_backend(backend: str, scheduler: str | None = None, slurm: bool = False) -> None:
    """Refuse an unknown backend, a scheduler or ``--slurm`` without dask, both together, or dask
    (dask-jobqueue, sbatch) when it is not installed.

    Raises:
        ConfigError: with the fix (``pip install 'boopexp[dask]'`` for a missing dask).
    """
    if backend not in BACKENDS:
        raise ConfigError(f"--backend {backend!r} is not allowed; allowed: {', '.join(BACKENDS)}")
    if scheduler and backend != "dask":
        raise ConfigError(f"--scheduler {scheduler!r} needs --backend dask")
    if slurm and backend != "dask":
        raise ConfigError("--slurm needs --backend dask (the dask workers are Slurm jobs)")
    if slurm and scheduler:
        raise ConfigError(f"--slurm starts its own scheduler: it cannot be used with --scheduler {scheduler!r}")
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
    if slurm:
        check_slurm()


def _drop_message(text: str, warning: bool = True) -> None:
    """The default ``on_message`` of :func:`iter_outcomes`: nothing is shown."""


@dataclass(frozen=True)
class PoolOptions:
    """How games are played: one value, built once (by the command line) and passed through
    :func:`boopexp.experiments.runner.run_plan` and the tuner to :func:`iter_outcomes`.

    Checked when built (:func:`check_backend`), so a bad option is refused before anything is
    written.

    Attributes:
        jobs: worker processes; 1 with the loky backend plays in this process (no pool).
        backend: ``loky`` (local processes) or ``dask`` (a dask.distributed cluster).
        scheduler: address of a running dask scheduler; without it a LocalCluster of ``jobs``
            worker processes is started.
        slurm: with the dask backend, start a scheduler here whose ``jobs`` worker processes are
            Slurm jobs (dask-jobqueue's SLURMCluster, :func:`boopexp.experiments.scheduler.slurm_cluster`).
        play: the function that plays one game; None for :func:`boopexp.play.match.play_game`,
            looked up when the games start (so a monkeypatched one is used). A pool pickles it
            (with cloudpickle): its module must be importable in the workers.
    """

    jobs: int = 1
    backend: str = "loky"
    scheduler: str | None = None
    play: PlayFunction | None = None
    slurm: bool = False

    def __post_init__(self) -> None:
        check_backend(self.backend, self.scheduler, self.slurm)

    @property
    def in_process(self) -> bool:
        """The games are played in this process, one after the other (``--jobs 1``, loky)."""
        return self.backend == "loky" and self.jobs == 1

    @property
    def remote(self) -> bool:
        """The games are played on other machines: a running dask cluster's own workers
        (``--scheduler``), or Slurm jobs (``--slurm``)."""
        return bool(self.scheduler) or self.slurm  # both need the dask backend (check_backend)

    def for_games(self, games: int, say: Callable[[str, bool], None] | None = None) -> PoolOptions:
        """These options with the workers to start: ``jobs``, but never more than the games to
        play (each worker costs a process, ~20 MB and its start-up); ``say`` gets a warning when
        they outnumber this machine's CPUs. A running dask cluster's own workers play: unchanged;
        ``--slurm`` workers are jobs submitted for these games (capped, but not by this machine's CPUs).
        """
        if self.scheduler:
            return self
        workers = max(1, min(self.jobs, games))
        cpus = cpu_count()
        if workers > cpus and say is not None and not self.slurm:
            say(f"--jobs {self.jobs}: {workers} workers on {cpus} CPU(s) share the cores: games run no faster"
                " in total, and cpu/wall budgets get less thinking per move", True)
        return dataclasses.replace(self, jobs=workers)


def iter_outcomes(
    tasks: Iterable[GameTask],
    pool: PoolOptions | None = None,
    on_message: Callable[[str, bool], None] | None = None,
) -> Generator[GameOutcome, None, None]:
    """Play ``tasks`` as ``pool`` says and yield each outcome as soon as it is known (completion
    order); a record that cannot be stored, or is another game's, comes as a :class:`FailedGame`.

    ``tasks`` is consumed lazily: at most one game per worker is taken from it at a time, so a
    plan of any length costs no memory up front.

    Args:
        tasks: the games.
        pool: how they are played (default: in this process, :func:`boopexp.play.match.play_game`).
        on_message: receives ``(text, warning)``: worker deaths (warnings), the dask dashboard.
    """
    pool = pool or PoolOptions()
    fn = pool.play
    if fn is None:
        from boopexp.play import match  # the compiled engine: loaded only when games are played

        fn = match.play_game
    say = on_message or _drop_message
    pending = iter(tasks)
    first = next(pending, None)
    if first is None:
        return  # nothing to play: do not start a pool (a dask cluster takes seconds)
    pending = itertools.chain([first], pending)
    if pool.in_process:
        outcomes: Iterator[GameOutcome] = (play_one(fn, task) for task in pending)
    elif pool.backend == "loky":
        outcomes = _loky_outcomes(fn, pending, pool.jobs, say)
    else:
        outcomes = _dask_outcomes(fn, pending, pool.jobs, pool.scheduler, say, pool.slurm)
    try:
        for outcome in outcomes:
            yield _checked(outcome)
    finally:
        close = getattr(outcomes, "close", None)
        if close is not None:
            close()  # stops the pool: games in flight are dropped


def cpu_count() -> int:
    """The CPUs this process may run on (honours taskset/cgroup CPU limits)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _checked(outcome: GameOutcome) -> GameOutcome:
    """Turn a record that is not storable, or belongs to another game, into a failure."""
    if isinstance(outcome, FailedGame):
        return outcome
    problem = check_record(outcome.record)
    if problem is None and record_key(outcome.record) != outcome.task.key:
        problem = f"it is the record of {record_key(outcome.record)}, not of {outcome.task.key}"
    if problem is None:
        return outcome
    return FailedGame(outcome.task, f"play_game returned a bad record: {problem}", seconds=outcome.seconds)


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

    current = _LOKY_POOL  # the last pool used: the one to stop if the run stops early, or to release

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
                    outcome = FailedGame(
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


#: The loky pool last used by :func:`_loky_outcomes` (kept for reuse: a tuning's trials share it).
_LOKY_POOL: list[Any] = []


#: The ``--slurm`` cluster of this command and what closes it, kept from one run to the next (a
#: tuning's trials and confirmation) so that its worker jobs are submitted, and wait in the queue,
#: once; :func:`release_pool` closes it (its jobs cancelled). At most one.
_SLURM_CLUSTER: list[tuple[contextlib.ExitStack, Any]] = []


def _kept_slurm_cluster(workers: int) -> Any:
    """The command's ``--slurm`` cluster, started by its first run, with ``workers`` workers (this run's)."""
    if _SLURM_CLUSTER:
        cluster = _SLURM_CLUSTER[0][1]
        slurm_scale(cluster, workers)
        return cluster
    stack = contextlib.ExitStack()
    cluster = stack.enter_context(slurm_cluster(workers, _ONE_THREAD))
    _SLURM_CLUSTER.append((stack, cluster))
    return cluster


def release_pool() -> None:
    """Shut down the loky pool a run used and wait for its workers and loky's threads to end; close
    the ``--slurm`` cluster, cancelling its worker jobs.

    Called by the command line once the games are over or stopped, while its
    :class:`~boopexp.experiments.interrupts.Interrupts` only records signals: left to the
    interpreter's exit, these threads are joined with Python's default Ctrl-C handling back, and a
    Ctrl-C there printed "Exception ignored in: <module 'threading'>" tracebacks and exited 0.
    """
    while _LOKY_POOL:
        _LOKY_POOL.pop().shutdown(wait=True, kill_workers=True)  # idle after the last game; else dropped
    while _SLURM_CLUSTER:
        stack, _ = _SLURM_CLUSTER.pop()
        with _dask_logs_silenced():  # its workers leaving as their jobs are cancelled is no news
            stack.close()


def _dask_outcomes(fn: PlayFunction, pending: Iterator[GameTask], jobs: int, scheduler: str | None,
                   say: Callable[[str, bool], None], slurm: bool = False) -> Iterator[GameOutcome]:
    """Play ``pending`` on a dask.distributed cluster, one game per worker thread at a time: the
    one at ``scheduler``, a SLURMCluster of ``jobs`` workers (``slurm``), or a LocalCluster of them.

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
        stack.enter_context(_dask_logs_silenced())
        stack.enter_context(dask.config.set(environ))
        # The cluster's threads and worker processes leave Ctrl-C to this one, which holds a signal
        # until the cluster and its client have started (a cluster cut mid-start was left to dask's
        # exit hook): then both are closed, quietly, as for a signal during the games.
        try:
            with sigint_blocked():
                if scheduler:
                    client = stack.enter_context(connect_scheduler(scheduler))
                elif slurm:
                    kept = bool(_SLURM_CLUSTER)
                    client = stack.enter_context(distributed.Client(_kept_slurm_cluster(jobs), set_as_default=False))
                else:
                    # silence_logs: its workers' warnings (a task cancelled as the cluster closes) are
                    # dask's bookkeeping, not the run's; errors still show
                    cluster = stack.enter_context(
                        distributed.LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                                 dashboard_address=":0", silence_logs=logging.ERROR)
                    )
                    client = stack.enter_context(distributed.Client(cluster, set_as_default=False))
        except KeyboardInterrupt:
            quiet()
            raise
        address = scheduler or client.scheduler.address
        say(slurm_banner(address, jobs, kept) if slurm else dask_banner(client), False)
        # a Slurm cluster's workers join when their jobs start: waiting for them is no trouble
        waiting = (f"no dask worker is connected to {address}: waiting for the worker jobs in the Slurm queue "
                   "(squeue --me); press Ctrl-C to stop (finished games are stored)" if slurm else
                   f"no dask worker is connected to {address}: waiting; start one or press Ctrl-C "
                   "(finished games are stored)")
        completed = distributed.as_completed(loop=client.loop)
        exhausted = False
        try:
            while True:
                width = max(1, worker_threads(client))  # workers may join or leave
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
                future = _next_completed(completed, client, say, waiting)
                task = in_flight.pop(future)
                try:
                    outcome = future.result()
                except distributed.KilledWorker as exc:
                    outcome = FailedGame(task, error=f"its workers kept dying ({exc}); not retried again",
                                          detail=repr(exc))
                except Exception as exc:  # noqa: BLE001 - the cluster's, not the game's (play_one catches those)
                    if not _connected(client):
                        raise _SchedulerLost from None
                    outcome = FailedGame(task, error=f"the dask cluster could not play it: {exception_line(exc)}",
                                          detail=traceback.format_exc())
                yield outcome
        except (_SchedulerLost, OSError, TimeoutError) as exc:
            # a call to the scheduler can fail (CommClosedError) before the client's status says so
            if isinstance(exc, (_SchedulerLost, distributed.comm.CommClosedError)) or not _connected(client):
                raise LostResourceError(f"lost the dask scheduler at {address} mid-run") from None
            raise
        finally:
            if not exhausted:  # stopped early (Ctrl-C, the scheduler lost): what dask says while closing is noise
                quiet()
                if (scheduler or slurm) and in_flight and _connected(client):  # a LocalCluster closes with its games
                    client.cancel(list(in_flight))


class _SchedulerLost(Exception):
    """The client lost its scheduler (inside :func:`_dask_outcomes` only)."""


def dask_banner(client: Any) -> str:
    """The line that says where the games are played: worker threads, scheduler, and its
    dashboard only when the scheduler really serves one."""
    threads = worker_threads(client)
    dashboard = f", dashboard {client.dashboard_link}" if has_dashboard(client) else ""
    return f"dask: {threads} worker thread(s) at {client.scheduler.address}{dashboard}"


def worker_threads(client: Any) -> int:
    """The worker threads the client's scheduler has now (0 without workers).

    From ``scheduler_info``, whose refresh from the scheduler swallows a lost connection (its
    last copy is kept), not ``nthreads``, whose call raises CommClosedError when the scheduler has
    just died: the run learns of the loss from the client's status, in one place
    (:func:`_next_completed`), instead of a traceback now and then.
    """
    return sum(int(w.get("nthreads", 0)) for w in client.scheduler_info().get("workers", {}).values())


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


#: Seconds without any worker on the scheduler before the run says it is waiting for one.
NO_WORKER_S = 5.0


def _next_completed(completed: Any, client: Any, say: Callable[[str, bool], None] = _drop_message,
                    waiting: str = "no dask worker is connected: waiting") -> Any:
    """The next finished future of ``completed``; :class:`_SchedulerLost` if the scheduler is
    lost meanwhile (a game submitted during the loss would otherwise be waited for forever).

    A scheduler left without workers (the only one killed) keeps the games until one joins: after
    :data:`NO_WORKER_S` seconds without any, ``say`` gets the line ``waiting`` (again after each
    return and loss of workers), and the wait goes on (Ctrl-C stops it, the stored games kept).
    """
    alone_since: float | None = None
    warned = False
    while not completed.has_ready():
        if not _connected(client):
            raise _SchedulerLost
        if client.scheduler_info().get("workers"):  # asks the scheduler; a lost connection keeps the last copy
            alone_since, warned = None, False
        elif alone_since is None:
            alone_since = time.monotonic()
        elif not warned and time.monotonic() - alone_since >= NO_WORKER_S:
            say(waiting, True)
            warned = True
        with completed.thread_condition:  # notified by every completion (as_completed.__next__ does the same)
            completed.thread_condition.wait(timeout=0.1)
    return next(completed)


#: The loggers through which dask's client side (and the tornado/asyncio loops it runs on) report
#: connection trouble in this process.
_DASK_LOGGERS = ("distributed", "tornado", "asyncio")


@contextlib.contextmanager
def _dask_logs_silenced() -> Iterator[None]:
    """Silence, in this process, the log lines of dask's client side for the run.

    When the scheduler goes away, dask logs what it sees (a CommClosedError traceback from the
    client's connection, failed reconnections) before the run notices the loss and says it in its
    one line with the stored count and the resume command; under load the traceback came first,
    now and then. Everything those lines could report reaches the run otherwise: a game's failure
    as its future's exception, the scheduler's loss as the client's status. The workers' own logs
    (their processes) are not affected.
    """
    known = [name for name in logging.root.manager.loggerDict
             if any(name.startswith(f"{prefix}.") for prefix in _DASK_LOGGERS)]  # dask sets some children's levels
    loggers = [logging.getLogger(name) for name in (*_DASK_LOGGERS, *known)]
    levels = [logger.level for logger in loggers]
    try:
        for logger in loggers:
            logger.setLevel(logging.CRITICAL + 1)
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


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


